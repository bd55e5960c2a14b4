//! The judges: what a run's checkers decide, each from what the runner saw
//! itself (the client's statements, results and instants, the simulated
//! disk's records), never from what the engine reports of itself.
//!
//! - [`durability`]: which commits a crash must keep, by flush setting,
//!   from the client's acknowledgement instants and the disk's sync record;
//! - [`reads`]: what each statement must return or change, by the model;
//! - [`foreign`]: what FOREIGN KEY constraints add to a change, or refuse;
//! - [`locks`]: the engine's lock events as the lock oracle states them,
//!   timed by the runner (the oracle itself is [`models::lock`]).
//!
//! # What the checkers promise
//!
//! The checkers (this module's judges) take nothing the engine reports about itself as a
//! promise. Which commits must survive is derived from the client's acknowledgement instants
//! and the simulated disk's own record:
//!
//! | innodb_flush_log_at_trx_commit | process crash | power loss (or a failed log fsync) |
//! | --- | --- | --- |
//! | 1 | every acknowledged commit | every acknowledged commit |
//! | 2 | every acknowledged commit | every commit acknowledged 2 s before the crash |
//! | 0 | every commit acknowledged 2 s before the crash | the same |
//!
//! The 2 s window is the once-a-second log flush plus one second of slack for the master thread
//! ([`durability::DURABILITY_WINDOW_US`]). The engine's flushed and written LSN are claims: a
//! claim can only raise what must survive (a commit it said was synced must be there), and the
//! flushed LSN may only advance across a log sync the disk acknowledged. The recovered state
//! must equal the state after the first k commits, k between what was promised and what reached
//! the log; CHECK TABLE must pass.
//!
//! Reads are judged at every isolation level: consistent reads (the primary key and whole
//! secondary indexes) against the transaction's snapshot or the committed state plus its own
//! writes, READ UNCOMMITTED reads against the committed rows and the writes of the transactions
//! still open, locking reads against the committed state and, under REPEATABLE READ and
//! SERIALIZABLE, against what the same transaction's earlier locking reads locked (no
//! phantoms).
//!
//! The lock oracle times every wait from the runner's clock at the call that began it, and
//! weighs deadlock victims by the runner's own count of each transaction's row changes (the
//! engine's count is cross-checked).
//!
//! Locks are held to the end of their transaction: a lock a transaction gives up while it goes
//! on must be on a record that left the index (purged, or its insert rolled back), never on a
//! row the committed state or an open transaction still has, a table or the supremum. Inserts
//! take no lock: a record's DB_TRX_ID is its inserter's implicit lock, made explicit when
//! another transaction asks for the record, so a rolled-back insert hands nothing on to the
//! record after it. A secondary entry is implicitly locked by the active transaction that made
//! it what it is (InnoDB's `row_vers_impl_x_locked`: inserted it, delete-marked it, or moved
//! its row onto or off its values), not by one that only changed other columns of its row; a
//! change that delete-marks an entry another transaction has locked waits for it
//! (`lock_sec_rec_modify_check_and_lock`). Every conversion is judged against the runner's own
//! record of the holder's changes: the holder must have written the row, and for a secondary
//! entry one of its changes must have changed whether the row implies the entry.
//!
//! Gaps are judged in every index, where the model orders keys as InnoDB does (NULL first,
//! integers by value, strings in their column's collation): an insert that went ahead must have
//! checked the gap its key falls into in each index (its insert intention above the key and no
//! further than the next row the runner knows), unless no other transaction locked a gap of the
//! index or it took over a delete-marked record of its key; a lock inherited when a record left
//! sits on a record above it and no further than the next known row. In a table without a
//! primary key the runner knows no row id, but a new row's is the largest: its gap is the
//! supremum's in the clustered index, and in a secondary index the one before the first entry
//! with greater columns (`innosim run --seed 8 --canary row-id-from-smallest` shows it catching
//! row-id-from-smallest too, after the write model). Other locks on such a table's records
//! (two-phase locking, conversions, inheritance) are not judged: they would need the row ids.
//!
//! Every run is also judged by the lock oracle (`models/src/lock.rs`: no conflicting grants, no
//! lost wake-up, timeouts on time, every deadlock found with InnoDB's victim rule, serializable
//! committed locking transactions) and by the read models (locking reads see the committed
//! state, REPEATABLE READ one snapshot per transaction).
//!
//! # Every canary, and the checker that catches it
//!
//! Every canary is reported, and by the checker meant for it (`cargo test --test simulation
//! canaries_are_reported_by_the_checkers_meant_to_catch_them` asserts the first violation's
//! checker within a fixed seed budget): `innosim fuzz --canary NAME` on the default profile
//! catches skip-doublewrite, ack-before-sync, ignore-page-lsn, skip-recovery-rollback,
//! early-checkpoint, skip-group-sync, stalled-log-sync (the once-a-second sync stops; the time
//! promise catches it) and lying-fsync by the recovery checkers, ignore-fsync-failure by the
//! durability cross-check, unique-check-first-column (a composite unique index checked on its
//! first column) and unique-check-binary (a unique index on a latin1_swedish_ci column checked
//! byte by byte, so 'aac ' goes in beside 'AAC') by the write model, snapshot-per-statement and
//! purge-secondary-ahead-of-views by the read model, locking-scan-skips-gaps by the phantom
//! check (a later locking read of a REPEATABLE READ transaction must see what an earlier one
//! locked), and grant-conflicting-lock, lose-wakeup, skip-deadlock-detection,
//! wrong-deadlock-victim, savepoint-rollback-releases-locks (the two-phase-locking judgment),
//! insert-skips-gap-check and inherit-to-supremum (the gap judgments) by the lock oracle;
//! retry-fsync-after-eio needs `--profile io-errors`, and late-lock-timeout and
//! deadline-from-first-wait (the lock oracle) `--profile hot-rows`, whose waits run to the
//! timeout.
//!
//! implicit-lock-of-row-changer (a secondary entry is taken as locked by whoever last changed
//! its row) is caught by the lock oracle at default seed 2 (a conversion that conflicts with a
//! reader's lock on the entry, which the holder's changes never touched).
//!
//! skip-directory-sync (a tablespace file is created without syncing the directory) is caught
//! by the recovery checkers once a checkpoint has passed the table's FILE_CREATE and a power
//! loss drops the name: `innosim fuzz --canary skip-directory-sync --time 60s` first reports it
//! at seed 193 ("recovery failed: ... the tablespace of table 's2' is missing").
//!
//! row-id-from-smallest (at recovery the hidden row id resumes past the smallest id in the
//! table, not the largest): `innosim fuzz --canary row-id-from-smallest --time 60s` reports it
//! at default seed 2 by the write model (an insert after recovery meets an older row's id: the
//! engine reports a duplicate key) and at seed 16 by the read model (a new row sorts before
//! older ones).
//!
//! row-id-retaken-after-wait (an insert into a table without a primary key that waited takes a
//! new row id when it runs again, where InnoDB keeps the one it took before the wait): `innosim
//! fuzz --canary row-id-retaken-after-wait --seeds 0..200` reports it first at default seed 4
//! by the read model (the row sorts after rows inserted while it waited), and at seed 28 by the
//! recovery oracle and seed 44 by the gap judgment.
//!
//! trust-page-id (validation checks a page against the number its own header claims) needs a
//! misdirected write that lands on a page read later: `innosim fuzz --canary trust-page-id
//! --time 60s --profile crash-heavy` first reports it at seed 83 (the recovery checkers; with
//! `--profile default`, at seed 891, also within the minute). accept-torn-log-tail needs tears
//! inside a 512-byte log block, below the simulated disk's sector size, and is caught by `cargo
//! test --test canaries`, which tears log writes at 256 bytes.
//!
//! The compression canaries need `--profile compressed`: buddy-free-in-use (a compressed block
//! freed while its page still uses it) hands the block to another page, and the first page
//! reads back as another's or as none, with no fault to explain it; zip-skip-mod-log (a page
//! written without its modification log) and zip-count-failed-compression (a stream cut to fit
//! counted as a success) read back as corrupt pages no fault damaged; zip-skip-image-redo (a
//! recompression without its image in the redo) leaves recovery unable to rebuild the page;
//! zip-trx-id-frame-only (a DB_TRX_ID updated in the frame only) is caught by CHECK TABLE's
//! comparison of each compressed page with its frame or by the read model, once the page is
//! read back.
//!
//! truncate-reuses-space-id (TRUNCATE deletes the old file and builds the new one under the old
//! space id before its dictionary commit): `innosim fuzz --seeds 0..400 --canary
//! truncate-reuses-space-id` reports it first at seed 11 (a scratch table truncated with a
//! crash inside: "the tablespace of table 's2' is missing"), and `cargo test --test ddl_crash`
//! catches it at 135 of the 147 crash points of one TRUNCATE of a table with rows (recovery
//! applies the old file's redo to the new file and finds a malformed page, or finds the
//! committed table's tablespace gone).
//!
//! skip-index-build-rollback (startup keeps an index a crash left half built): `innosim fuzz
//! --canary skip-index-build-rollback --seeds 0..400` first reports it at seed 165 (CHECK TABLE
//! finds the half-built index missing entries for live rows), and `cargo test --test ddl_crash`
//! catches it at 353 of the 381 crash points of one CREATE INDEX (the half-built index is still
//! in the dictionary after recovery). old-views-read-new-index (a read view older than an index
//! is let read it): `innosim fuzz --canary old-views-read-new-index` reports it at default seed
//! 2 (the read model expected 1412), and `cargo test --test online_index` shows the rows such a
//! view misses.
//!
//! index-build-skips-table-lock (fast index creation without its S table lock): `innosim fuzz
//! --seeds 0..400 --canary index-build-skips-table-lock --stop-on-failure` reports it at
//! default seed 21 ("DDL: CREATE INDEX ran at once, yet trx \[566] held a lock on the table
//! that conflicts with the S table lock it takes"), shrunk to 4 statements.
//!
//! cascade-skips-second-level (a referential action changes the child rows but not theirs):
//! `innosim fuzz --seeds 0..200 --canary cascade-skips-second-level` first reports it at
//! default seed 186 ("foreign keys: after recovery, t4 row (22) names t3 (13), which is not
//! there"); the corpus keeps a catch of seed 2 from an earlier generator (the lock oracle's
//! count of the row changes the model expects, against the engine's undo records), 11
//! statements (a parent, a child and a grandchild row, each committed, then the parent's
//! delete); `cargo test --test foreign_crash` finds the grandchildren it leaves.
//!
//! child-check-skips-parent-lock (a child's check reads the parent index without locking):
//! `innosim fuzz --seeds 0..60 --canary child-check-skips-parent-lock` reports it at default
//! seed 2 (the write model's answer differs: a child row accepted whose parent another
//! transaction was deleting), and the corpus keeps a catch of seed 20 (a child insert refused
//! while another transaction's delete of the parent is uncommitted, where the write model, and
//! InnoDB, wait), 8 statements.

pub mod durability;
pub mod foreign;
pub mod locks;
pub mod reads;
