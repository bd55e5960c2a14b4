//! The simulated world: a disk and a clock that the engine cannot tell from
//! real ones, but that crash, lose unsynced writes and tear pages on demand.
//!
//! The same engine runs here as on real files; reference models ([`judge`], the `models` crate)
//! decide whether what survived a crash was allowed. `cargo doc --no-deps --open -p sim`
//! renders this page and every module's.
//!
//! # Where things are
//!
//! - the world: [`storage`] (the disk that crashes, its fault kinds in [`storage::faults`]),
//!   [`clock`] (simulated time), [`tables`] and [`schema`] (the tables a plan uses);
//! - what a run does: [`plan`] (a run as data, generated from a seed and a [`profile`]),
//!   [`schedule`] (its interleaving as data), [`runner`] (one seeded run, judged), [`judge`]
//!   (the checkers, and which canary each catches);
//! - failures: [`kind`] (what makes two failures one), [`shrink`], [`corpus`] (saved failures
//!   `cargo test` replays), [`campaign`] (`innosim fuzz` and `innosim merge`, its speed and
//!   what its campaigns reached);
//! - a real server and real clients: [`serve`] (`innosim serve`, `innosim check`), [`client`],
//!   [`crashloop`], [`script`] (mysqltest scripts), [`diff`] (the same sessions on innosim and
//!   on MariaDB);
//! - figures: [`bench`](mod@bench), [`engine_bench`], [`index_bench`], [`zip_bench`] and
//!   [`report`], each with the command that measures it.
//!
//! The engine's own floors are `engine`'s docs, and its SQL layer `engine::sql`'s.
//!
//! # The command line, by example
//!
//! ```sh
//! # one simulation and its summary; exit 1 on a violation
//! innosim run --seed 7 --profile default
//! # many seeds; or --time 10m; --json for a summary object
//! innosim fuzz --seeds 0..2000 --profile small
//! # one machine's shard of a campaign
//! innosim fuzz --seeds 0..4000 --shard 1/4 --json --corpus c1 > s1.json
//! # the shards added up, checked to cover the range once each
//! innosim merge s0.json s1.json s2.json s3.json
//! # the same run again, bit for bit
//! innosim replay 7 --profile default
//! # the planted bugs the checkers must catch
//! innosim canaries
//! # a negative control: must report violations
//! innosim fuzz --time 60s --canary ack-before-sync
//! # engine benchmarks on sysbench's table
//! innosim bench --rows 1000000 --dir /tmp/b
//! # the same phases on SQLite (bundled) beside the engine, as ratios
//! innosim bench --engine --dir /tmp/b
//! # seeds/000's fast index creation and seeds/004's TRUNCATE vs DELETE
//! innosim bench --index --rows 1000000
//! # a timeline with commit syncs on the seeds' disk
//! innosim run --seed 3 --profile oltp+timed+seeds-disk --flush 1 --trace t.json
//! # simulated oltp_read_write, 16 sessions, 1 ms fsync, flush 0/1/2
//! innosim bench --oltp --seeds 50
//! # the same on simulated time (presets: seeds-disk, platter, ssd, memory)
//! innosim bench --oltp --timed --latency ssd
//! # seeds/004's and seeds/002's sysbench table: test x flush setting x clients x commit path
//! innosim bench --flush
//! # one HTML page of SVG charts: the benches beside the seeds' figures (--quick: small)
//! innosim report --out report
//! # seeds/s and simulated s per wall s, every profile, both schedulers
//! innosim bench --sim --quick
//! # any profile on the time-driven scheduler
//! innosim fuzz --seeds 0..200 --profile hot-rows+timed
//! # a timeline for Perfetto (chrome://tracing)
//! innosim replay 7 --profile default+timed --trace t.json
//! # an SQL shell on a simulated disk in memory (--dir D: real files)
//! innosim sql
//! innosim sql -e "create table t (id int primary key, c varchar(20));
//!   insert into t values (1,'a'); select * from t"
//! # mysqltest-style scenarios, compared with their .result files
//! innosim script corpus/scenarios/*.test
//! # accept a scenario's new output
//! innosim script --record corpus/scenarios/deadlock.test
//! # a mysql-test suite (t/, r/, include/), one line a test
//! innosim script --suite DIR
//! # the MySQL protocol on 127.0.0.1 (user root, no password)
//! innosim serve --dir D --port 3407
//! # on the simulated disk; SET GLOBAL innosim_crash = 'power-loss'
//! innosim serve --sim --record run.jsonl
//! # a recorded served run again, every answer compared
//! innosim replay-served run.jsonl
//! # kill -9 under a real client, restart, check; or --sim
//! innosim crashloop --dir D --cycles 1000
//! # recover D, CHECK TABLE everything, read back every page; exit 1 on damage
//! innosim check D
//! # the fuzzer's sessions on innosim and on a real server
//! innosim diff --server mysql://root@127.0.0.1:3417 --seeds 0..100
//! ```
//!
//! Bad arguments (an unknown profile or canary, a malformed seed range or duration) exit with
//! status 2.
//! # The fault model
//!
//! [`storage::SimStorage`] keeps, per file, a durable image and the ordered unsynced writes. It
//! can crash at any numbered I/O operation, after which every operation fails; `restart` then
//! decides what survived: a process crash keeps everything written, a power loss keeps only
//! what was synced, or each unsynced write independently survives, is lost, or is torn at 512 B
//! or 4 KiB sector granularity. A [`storage::FaultConfig`] (serde data, unknown fields refused)
//! adds failing fsync (EIO), lying fsync (the negative control), a full disk, bit rot at rest,
//! misdirected page writes, losable namespace operations and per-operation latency, all drawn
//! from a seed. A failed fsync behaves as Linux's does after a writeback error: the error is
//! reported once, the file's pending writes are dropped (still read back until a restart, lost
//! at any crash), and a retried sync succeeds without persisting them.
//!
//! What the fuzzer's runs inject (each seed switches on a random subset of its profile's kinds;
//! `innosim fuzz` prints how often each was reached), by kind, with the profiles that inject
//! it:
//!
//! - **process crash** (all): at an I/O operation of the workload, and at its end
//! - **power loss** (all): unsynced writes survive or are lost, each on its own
//! - **torn writes** (all): a power loss that also tears writes at 512 B or 4 KiB sectors
//! - **recovery crash** (all): recovery itself crashes at one of its I/Os, up to three times in
//!   a row, each a process crash or a power loss
//! - **bit rot** (all): 1 to 3 bits of the data files flip at every restart; a page read with
//!   one must be reported corrupt (the run then ends, as InnoDB refuses to go on), never
//!   returned as data
//! - **misdirected write** (all): one page write of a data file in 400 (a page of any size, 1
//!   to 16 KiB) lands on another page of its size in its file just before a crash: the page
//!   that missed its write must come back from redo, the page it landed on must be repaired
//!   from the doublewrite buffer or reported corrupt (the run then ends), never read as data
//! - **lost namespace operations** (all; the DDL that meets them: default, small, long-columns,
//!   crash-heavy, io-errors): creates, removes and renames are durable only once the directory
//!   is synced, as POSIX promises (a file's own fsync makes its bytes durable, not its name); a
//!   power loss undoes the unsynced ones, the later ones first. Two in five mixed plans create
//!   and drop scratch tables while the workload runs, and half of their DDL statements crash a
//!   few I/O operations in, some between a file's creation and the directory sync after it
//!   (`namespace ops lost`); half of the plans that create one also TRUNCATE it (a new file
//!   renamed over the old one), half of those with a crash inside; after every recovery each
//!   scratch table must exist exactly when its last acknowledged DDL says (a TRUNCATE, finished
//!   or not, keeps it), in the dictionary and on the disk alike, and no `.ibd` file may belong
//!   to no table
//! - **fsync failure** (io-errors): 2% of syncs fail with EIO, Linux-style; the engine must
//!   stop
//! - **disk full** (io-errors): writes that grow a file fail past a limit; the statement fails,
//!   nothing committed is lost. Files grow before their pages are used: once redo is applied,
//!   recovery grows a file that a power loss left shorter than its tablespace header records
//!   (`files grown back at recovery`; pages flushed while redo is applied can still meet the
//!   full disk, and recovery is then retried). A page write that meets the full disk while the
//!   engine runs stops it, as InnoDB's would, and is a violation
//!
//! A misdirected write strikes only as a crash comes, because only then is a correct engine
//! bound to survive it: a lost write of a page that a later sync and checkpoint pass is
//! undetectable by InnoDB's design, so no oracle could tell a correct engine from a wrong one
//! there. Redo log writes are never misdirected (they are runs of 512-byte blocks, not pages).
//!
//! # What a run does
//!
//! Each simulated run draws from its seed a flush setting (and, under flush 1, whether commits
//! are grouped: a commit waits until one sync covers it and every commit written before it), a
//! buffer pool size, row formats, where the tables live (a quarter of the plans without a
//! compressed table keep every table in the system tablespace, `innodb_file_per_table` off,
//! where a dropped or truncated table's pages go to the next one), and a random subset of its
//! profile's fault kinds (swarm testing); sessions interleave by a seeded scheduler; statement
//! results are checked in lockstep against a model; every crash is followed by recovery and the
//! recovery oracle. The mixed workloads run inserts, updates (some of them moving a row to a
//! new primary key), deletes, point reads and scans on every index (bounded, some with
//! exclusive ends), locking reads of both kinds (through secondary indexes too, some repeated
//! later in their transaction), savepoints with ROLLBACK TO and RELEASE, long REPEATABLE READ
//! readers, single statements in autocommit mode, and NULLs and keys of up to 40 bytes in an
//! indexed VARCHAR; the lock profiles roll back to savepoints too. A third of the plans that
//! crash also crash at a statement drawn from the whole workload, and half crash just after one
//! of the first two checkpoints of a (re)start: 1 to 40 I/O operations after the write to its
//! slot in the redo log, some at the sync that would have made it durable (`crashes just after
//! a checkpoint` counts those that struck); a quarter run on the smallest redo log the engine
//! allows, which wraps around many times a run.
//!
//! Every plan has the two fixed tables of [`tables`] (sysbench's, and one with a long column);
//! half the mixed plans also draw a table of their own ([`schema`], saved in the plan): a
//! primary key of one or two columns (integers signed and unsigned, CHAR, VARCHAR, sometimes in
//! reverse column order), one to three secondary indexes, some unique, some composite, NULLs in
//! indexed columns, TEXT and BLOB columns (some off page), with statements of every kind on it
//! in a third of the transactions, over small value domains so that unique keys collide.
//!
//! A third of the mixed plans also have a table without a primary key (`t2`, clustered on
//! InnoDB's hidden DB_ROW_ID), with inserts (some in autocommit mode) and scans, locking ones
//! too, of its clustered index and of its secondary indexes, which end in the row id. Nothing
//! addresses such a row by key (the typed requests name rows by primary key), so it gets no
//! updates, deletes or point reads. The model keys those rows by its own count of the inserts
//! in the order they succeed, and reads and recovered states are matched to it by the order of
//! their rows: row ids rise with each insert, so the clustered index must hold the rows in
//! insertion order. The engine's row ids are never read.
//!
//! Three in five plans with a table of their own give it a child `t3` with a FOREIGN KEY to its
//! primary key (the child's columns of the parent key's types and collations, indexed; ON
//! DELETE and ON UPDATE each RESTRICT, CASCADE or SET NULL), half of those a grandchild `t4` of
//! `t3`, with statements of every kind on both over the parent's key domain. The write model
//! ([`judge::foreign`], restated from the manual's rules) refuses a child row without its
//! parent (1452) and a parent change its children forbid (1451), and carries out the actions
//! through every level; after every recovery no child row may name a parent that is gone
//! (`innosim fuzz --seeds 0..2000` counts `child rows refused for a missing parent`, `parent
//! changes refused for their children` and `rows changed by cascades`).
//!
//! Half the mixed plans with a table of their own also CREATE INDEX on it (one or two columns)
//! while its transactions run, read through the new index, sometimes DROP it and create it
//! again, and hold a REPEATABLE READ reader open from before the build; a crash may strike at
//! any of the build's first 60 I/O operations. Every DDL but CREATE TABLE runs in a session of
//! its own and first takes its table lock, as InnoDB does (S to build an index,
//! `row_merge_lock_table`; X to drop one, to truncate or drop a table, and for a copying ALTER,
//! where MySQL 5.5's metadata locks make the statement wait as InnoDB 1.0's did not): it must
//! wait exactly when another transaction holds or waits for a conflicting lock on the table, by
//! the lock oracle's record of each open transaction's locks (and the runner's own record of
//! the open transactions that changed the table must agree: each holds IX there). A waiting DDL
//! blocks its session until the lock is granted, the wait times out (1205) or a deadlock takes
//! it (1213), judged by the lock oracle like any wait, while the other sessions go on. 1061 and
//! 1091 come before any lock and follow from whether the index is there; a read through it gets
//! 1176 when it is not and 1412 when the reader's snapshot is older than its build, and its
//! rows are judged like any other read; after a crash an acknowledged build must be there in
//! full (CHECK TABLE) and an acknowledged drop gone (`cargo run --release -- fuzz --seeds
//! 0..2000` counts `indexes built beside the workload`, `DDL waits for a table lock`, `DDL
//! table lock waits ended by 1205 or 1213`, `indexes dropped` and `old views refused a new
//! index`; `innosim fuzz --seeds 0..1500`: 346 builds, 215 waits, 7 of them failed).
//!
//! Two in five mixed plans also rebuild one to three of their tables with a primary key by a
//! copying ALTER TABLE ... ENGINE=InnoDB (`Engine::rebuild_table`, as 5.1's
//! `copy_data_between_tables`) under an X table lock, half of them with a crash a few I/O
//! operations in: the rows must be the same before and after and after any crash, no `.ibd` may
//! be left that no table owns, and a REPEATABLE READ view older than the copy must find the
//! table empty (the copies are the ALTER's transaction's, the limit on consistent reads over
//! ALTER TABLE that 5.1's manual names) where the model's snapshot still has the rows.
//!
//! And three in five mixed plans run UPDATEs and DELETEs of an id range of `sb` filtered on
//! `k`, which the runner drives as MySQL's `mysql_update` drives InnoDB
//! (`sim/src/runner/filter.rs`): a locking read of the range, semi-consistent for an UPDATE
//! under READ COMMITTED and READ UNCOMMITTED, a locking read of each row read unlocked whose
//! last committed version matches, the matching rows changed and the others let go. Each step
//! is judged from the lock oracle's record, not the engine's word: a row read unlocked must be
//! one another transaction holds or waits for a conflicting lock on, every other row read must
//! be X-locked, and letting go of a rejected row must release exactly one of the X locks the
//! statement took on it (`row_unlock_for_mysql` resets one bit, in the last of the
//! transaction's locks of the read's mode) and nothing else.
//!
//! # Time-driven runs and their timelines
//!
//! (Issue 30, first part: `PROFILE+timed`, `bench --oltp --timed`.) A profile name with
//! `+timed` (`innosim fuzz --profile default+timed`, the same in `run`, `replay`, `shrink` and
//! the reproduce lines) runs the scheduler on simulated time (`sim/src/runner/timed.rs`): each
//! session keeps its own clock; the storage charges each step's I/O to the step instead of the
//! clock (`SimStorage::set_timeline`), a sync waiting for the device to finish the one before
//! it (one sync at a time); a profile's processor model (`CpuModel`: cores, per engine call,
//! per page fixed, per KiB compressed and decompressed, priced from the engine's own counters)
//! runs a step's processor time on the earliest free core before its I/O; the next event is
//! always the earliest (a session's next statement after its think time, a grant at the end of
//! the step that made it, a wait's deadline by the oracle or, where earlier, by the engine, as
//! the lock timeout thread wakes it, a group commit's sync when the device is free), ties
//! broken by the seeded generator; the engine's background work (the once-a-second flush, the
//! page cleaner, purge) runs at each of its deadlines as the clock moves; clients pause inside
//! a transaction now and then (`p_long_pause`, up to twice the lock wait timeout) so that waits
//! time out; and with group commit a committing transaction keeps its locks until its sync
//! (`Config::locks_until_durable`: 5.1 with the binary log, whose `trx_prepare_off_kernel`
//! syncs under the locks). Each turn is recorded with the clock's advance to it, so replaying a
//! recorded schedule needs none of this.
//!
//! A profile's `latency` is the storage's whole cost model as data (each kind's cost, a uniform
//! spread for reads, writes and syncs drawn from the disk's own generator, transfer per MiB),
//! with presets (`Latency::preset`: `seeds-disk` about 1 ms a sync and 5 to 10 ms a random
//! read, `ssd` about 85 us a sync, `memory`); `innosim bench --oltp --timed --latency P` runs
//! the lock benchmark on one. `innosim bench --sim` prints seeds per wall second and simulated
//! seconds per wall second for every profile on both schedulers (`--quick`: 10 seeds each, as
//! `tests/simulation.rs` runs it).
//!
//! `--trace FILE.json` on `run` and `replay` writes the run as a timeline in Chrome's
//! trace-event format (`sim/src/runner/timeline.rs`: a track per session, each statement an
//! instant and, time-driven, each turn a slice to its end; lock and commit waits as async
//! slices; the run, crashes and recovery steps on the engine's track, and each finished
//! recovery's phases as slices there: redo scan, open tablespaces, doublewrite repair, redo
//! apply, dictionary, rollback, clean-up, flush and checkpoint (`RecoveryReport::phases`, timed
//! by the clock; a time-driven run recovers off the timeline so that recovery's I/O moves the
//! clock phase by phase. On the platter preset the doublewrite repair is the longest phase,
//! because it reads its 128 slots one by one where InnoDB reads the area in two large reads:
//! 1.2 s of a 2.3 s final recovery in the one run looked at, a `bench --flush` plan (platter,
//! 16 clients, flush 0, seed 0) saved by a scratch test and replayed with `--trace`; no command
//! saves a bench plan that passes, so that figure has no command of its own); checked by
//! `check_chrome_trace`), and an arrow (a flow) to each lock wait from every session whose
//! transaction blocks it, by the engine's wait graph (the runner's `blocked` events; the
//! checker pairs every flow's start with its finish).
//!
//! Time-driven runs draw the device and the background too (session 35): each sync the device
//! ran is an async slice on a `disk (syncs)` track, as long as the latency model made it, with
//! an arrow from the session whose turn issued it (a commit's sync, or a group's); each
//! background round (the once-a-second log flush, the page cleaner, purge) is a slice on a
//! `background` track with the pages it flushed, the syncs and checkpoints it made and the rows
//! it purged; each checkpoint is an instant on the engine's track; and the engine's dirty pages
//! and log age (bytes of redo since the last checkpoint) are counters, sampled at every turn's
//! end and every round's (`SimStorage::take_sync_spans`, `World::keep_device_events`; kept
//! lines, not hashed, so trace hashes do not move).
//!
//! A profile takes a latency preset as a suffix, so `innosim run --seed 3 --profile
//! oltp+timed+seeds-disk --flush 1 --trace t.json` draws 111 commit syncs of 707 to 1,299 us
//! (the preset's 700 us and up to 600 more), 15 syncs of the background's, 52 rounds that flush
//! 154 pages in all, and three checkpoints (two when the engine first opens, one later);
//! `tests/simulation.rs
//! a_time_driven_timeline_draws_the_device_syncs_background_rounds_and_counters` holds each
//! sync slice to the preset's bounds. The fuzzing profiles' `+timed` variants have no latency
//! preset, so their syncs are drawn as taking no time.
//!
//! The step-driven scheduler stays the default until the corpus and the trace hashes are moved
//! over. `innosim fuzz --seeds 0..200 --profile P+timed --doublecheck` gives 0 violations on
//! every profile (build 8f80a0b; default, hot-rows, transfer, compressed, oltp, io-errors and
//! crash-heavy again on the final tree, 150 seeds each). `innosim fuzz --seeds 0..200 --profile
//! P+timed --canary C`, each canary under its corpus entry's profile, caught every canary but
//! two at b6fa691: `accept-torn-log-tail` (caught by its own test on either scheduler, never by
//! the fuzzer) and `deadline-from-first-wait`, which no time-driven seed caught until a waiter
//! was also woken at the engine's own deadline (8f80a0b: 104 of 200 hot-rows seeds;
//! `late-lock-timeout` 180). The first time-driven runs found the testbed wrong, not the
//! engine: jumping over idle time skipped the master thread's flush, and the durability judge
//! held the engine to a commit acknowledged 30 s before a crash (`corpus/transfer+timed-12`,
//! now passing).
//!
//! # Snapshots
//!
//! `tests/snapshots_cli.rs` holds `innosim run --seed 3 --profile small`'s summary, the message
//! of a violation (`corpus/default-6-ack-before-sync`, with the `timeline:` line every failing
//! run now prints: `innosim replay ... --trace seed-N.json`) and that seed's whole trace as
//! snapshots; `tests/simulation.rs` holds the JSON shape of `bench --flush --quick --json`. A
//! change to any of them fails the test until accepted with `cargo insta review` (or
//! `INSTA_UPDATE=always`), so it shows in the diff.

#![warn(missing_docs)]

pub mod bench;
pub mod campaign;
pub mod client;
pub mod clock;
pub mod corpus;
pub mod crashloop;
pub mod diff;
pub mod engine_bench;
pub mod index_bench;
pub mod judge;
pub mod kind;
pub mod plan;
pub mod profile;
pub mod report;
pub mod runner;
pub mod schedule;
pub mod schema;
pub mod script;
pub mod serve;
pub mod shrink;
pub mod storage;
pub mod tables;
pub mod zip_bench;
