//! Simulation runs: seeds of every profile pass the recovery oracle, a run
//! is a pure function of its seed, and canaries are reported.

use sim::profile::Profile;
use sim::runner::{run, RunOptions};

fn seeds_pass(profile: &str, seeds: std::ops::Range<u64>) {
    let p = Profile::named(profile).expect("known profile");
    for seed in seeds {
        let o = run(seed, &p, &RunOptions::default()).expect("valid options");
        assert!(o.violations.is_empty(), "seed {seed} profile {profile}: {:?}\nreproduce: innosim replay {seed} --profile {profile}", o.violations);
        assert!(
            o.stats.crashes >= 1,
            "every run ends with a crash and recovery"
        );
    }
}

/// Regression seeds for the lock oracle's rule that a call dying with the
/// process or stopping the engine (a crash or a failed fsync after it had
/// queued a wait, before its deadlock search) is judged no further: with
/// that rule removed, these seeds of the compressed profile were reported
/// as an undetected wait-for cycle (2875, 4516, 5190) and as a lock
/// released early (7018) by the build of this test's commit. An engine
/// change that moves the I/O counts can make them pass regardless.
#[test]
fn a_call_cut_short_by_a_crash_is_not_judged_by_the_lock_oracle() {
    let p = Profile::named("compressed").expect("known profile");
    for seed in [2875, 4516, 5190, 7018] {
        let o = run(seed, &p, &RunOptions::default()).expect("valid options");
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
    }
}

#[test]
fn small_profile_seeds_pass() {
    seeds_pass("small", 0..200);
}

#[test]
fn default_profile_seeds_pass() {
    seeds_pass("default", 0..12);
}

#[test]
fn other_profiles_seeds_pass() {
    for p in ["long-columns", "crash-heavy", "io-errors"] {
        seeds_pass(p, 0..6);
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    // 100 seeds of every profile, each run twice: the trace hashes (every
    // statement, result, crash and recovery step, in order) must agree.
    // Step-driven and time-driven (`NAME+timed`) alike.
    let names = Profile::NAMES
        .iter()
        .flat_map(|n| [n.to_string(), format!("{n}+timed")]);
    for name in names {
        let p = Profile::named(&name).expect("known profile");
        let mut hashes = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let a = run(seed, &p, &RunOptions::default()).expect("valid");
            let b = run(seed, &p, &RunOptions::default()).expect("valid");
            assert_eq!(
                a.trace_hash, b.trace_hash,
                "seed {seed} profile {name} is not deterministic"
            );
            assert_eq!(a.stats, b.stats);
            assert!(
                a.violations.is_empty(),
                "seed {seed} profile {name}: {:?}",
                a.violations
            );
            hashes.insert(a.trace_hash);
        }
        assert!(
            hashes.len() > 95,
            "different seeds give different runs ({} distinct of 100)",
            hashes.len()
        );
    }
}

/// What a violation says when the recovery checkers catch it: the
/// recovered state is no allowed prefix, recovery or reading it back
/// fails, or CHECK TABLE finds damage.
const RECOVERY: &[&str] = &[
    "recovery oracle:",
    "recovery failed:",
    "reading the recovered database failed:",
    "CHECK TABLE",
];

/// Each planted bug, the profile and seed budget it must be caught in, and
/// the checkers allowed to catch it: the first violation of the first
/// failing seed must come from one of them (a canary caught by a panic or
/// by an unrelated checker proves nothing about the checker it is for).
fn canary_cases() -> Vec<(&'static str, &'static str, u64, &'static [&'static str])> {
    use engine::Canary::*;
    let mut cases = Vec::new();
    for c in engine::Canary::ALL {
        let case: (&str, u64, &'static [&'static str]) = match c {
            // Needs a log block torn inside itself, below the fault model's
            // 512-byte sectors: tests/canaries.rs tears log writes at 256
            // bytes.
            AcceptTornLogTail => continue,
            // A CREATE INDEX of the mixed workloads crashed part-way, the
            // half-built index left behind: CHECK TABLE after recovery
            // finds it short of the table's rows (first at seed 165;
            // tests/ddl_crash.rs also crashes one CREATE INDEX at every
            // I/O).
            SkipIndexBuildRollback => ("default", 300, &["CHECK TABLE"]),
            // A REPEATABLE READ view older than an index the workload
            // built reads through it: the read judge's 1412 rule (first
            // at seed 2; tests/online_index.rs shows the rows it then
            // gets are wrong).
            OldViewsReadNewIndex => ("default", 40, &["a read through index"]),
            // A CREATE INDEX that ran at once beside a transaction holding
            // IX on the table: the DDL judge's table-lock rule, from the
            // lock oracle's record of that IX lock (first at seed 21).
            IndexBuildSkipsTableLock => ("default", 80, &["DDL: CREATE INDEX ran at once"]),
            // Needs a scratch table truncated with a crash between the old
            // file's removal and the dictionary commit: first at seed 11.
            TruncateReusesSpaceId => ("default", 40, &["recovery failed:"]),
            // Needs a power loss that tears a page, about one seed in a
            // hundred: first at seed 46.
            SkipDoublewrite => ("default", 200, &["corrupt page", "recovery oracle:"]),
            AckBeforeSync | SkipRecoveryRollback | SkipGroupSync => {
                ("default", 120, &["recovery oracle:"])
            }
            // The time promise of flush 0 and 2 (not the engine's claim):
            // first at seed 46, a seed that thinks long enough for a
            // commit to be owed.
            StalledLogSync => ("default", 120, &["recovery oracle:"]),
            IgnorePageLsn | EarlyCheckpoint => ("default", 120, RECOVERY),
            // The durability judge's cross-check: the flushed LSN moved
            // with no log sync behind it (first at seed 6).
            IgnoreFsyncFailure => ("default", 120, &["durability:"]),
            // Needs failing fsyncs: io-errors, first at seed 4.
            RetryFsyncAfterEio => ("io-errors", 60, RECOVERY),
            SnapshotPerStatement => ("default", 120, &["a RepeatableRead read returned"]),
            // A REPEATABLE READ scan of a secondary index misses a row
            // whose old entry purge removed under its view: first at seed
            // 44 (a plan with long readers, and purge behind them).
            PurgeSecondaryAheadOfViews => ("default", 200, &["a RepeatableRead read returned"]),
            // A later locking read of the same REPEATABLE READ transaction
            // sees a row another transaction inserted into the range it
            // had locked: first at seed 11 (plans repeat some locking scans).
            LockingScanSkipsGaps => ("default", 120, &["saw a phantom"]),
            // A lock released at ROLLBACK TO SAVEPOINT while the row it
            // was on is still there: the two-phase-locking judgment, first
            // at seed 0.
            SavepointRollbackReleasesLocks => ("default", 40, &["two-phase locking:"]),
            // The gap judgments: an insert that went ahead without
            // checking a gap others lock, and an heir past the record
            // after the one that left. First at seeds 0 and 2.
            InsertSkipsGapCheck | InheritToSupremum => ("default", 20, &["gap locking:"]),
            GrantConflictingLock | LoseWakeup | SkipDeadlockDetection | WrongDeadlockVictim => {
                ("default", 80, &["lock oracle:"])
            }
            // Both need waits that last until the timeout, which hot-rows
            // has in every seed (default: first at seed 92); the second
            // also a statement that waits again after a grant (hot-rows'
            // locking ranges). Both first at seed 0.
            LateLockTimeout | DeadlineFromFirstWait => ("hot-rows", 10, &["lock oracle:"]),
            // Needs a misdirected write that lands on a page read later
            // (most land on free pages or doublewrite slots): first at
            // crash-heavy seed 36, where it lands on an undo page that no
            // recovery checker reads back, and the engine's own structure
            // checks find the stranger at its next use (a corruption no
            // injected fault explains: as a torn page read back is how
            // SkipDoublewrite is caught). Before the free list stopped
            // rewriting freed pages, first at seed 83, by the recovery
            // oracle.
            TrustPageId => (
                "crash-heavy",
                400,
                &[
                    "recovery oracle:",
                    "recovery failed:",
                    "reading the recovered database failed:",
                    "CHECK TABLE",
                    "unexpected engine error: corruption in",
                ],
            ),
            // Needs a seed table with a composite unique index and two
            // rows that share its first column: first at seed 4.
            UniqueCheckFirstColumn => ("default", 60, &["the model expected"]),
            // Needs a seed table with a unique index on a latin1 column
            // and two values its collation takes as equal ('aac ' after
            // 'AAC'): first at seed 4.
            UniqueCheckBinary => ("default", 60, &["the model expected"]),
            // Needs a scratch table created, a checkpoint past its
            // FILE_CREATE, and a power loss that drops the unsynced name:
            // first at seed 193 (113 before index builds spilled to merge
            // files, 40 before the workloads built indexes, 18 before
            // compressed tables' long columns were deflated: the I/O
            // counts move; about one seed in a hundred catches it).
            SkipDirectorySync => ("default", 260, RECOVERY),
            // A conversion on a secondary entry the row's changer never
            // touched, which a reader had locked: first at seed 2.
            ImplicitLockOfRowChanger => ("default", 40, &["lock oracle:"]),
            // Needs a table without a primary key, a crash after some of
            // its inserts, and an insert after recovery: its row id is an
            // older row's (first at seed 2, the write model), or sorts
            // before older rows (seed 16, the read model).
            RowIdFromSmallest => ("default", 40, &["the model expected", " read returned "]),
            // An insert into t2 (no primary key) that waited, then took a
            // new row id: a scan returns its row after rows inserted while
            // it waited (first at seed 4; also caught by the recovery
            // oracle's row order and by the gap judge at seed 44).
            RowIdRetakenAfterWait => ("default", 40, &[" read returned "]),
            // The compression canaries, in the profile of small compressed
            // pages: a page written without its modification log, or with
            // a stream cut short, reads back as corrupt (no fault damaged
            // it); a recompression without its image in the redo leaves
            // recovery unable to rebuild the page; a DB_TRX_ID left stale
            // in the compressed page shows once the page is read back, to
            // CHECK TABLE's comparison of each compressed page with its
            // frame, or to a read. First at seed 0, the DB_TRX_ID one at
            // seed 1 (corpus/ keeps the seed-7 catch of the cut stream,
            // which shrinks smaller).
            ZipSkipModLog | ZipCountFailedCompression => (
                "compressed",
                10,
                &["unexpected engine error: corrupt page", "recovery failed:"],
            ),
            ZipSkipImageRedo => ("compressed", 10, &["recovery failed:"]),
            ZipTrxIdFrameOnly => ("compressed", 10, &["CHECK TABLE", " read returned "]),
            // A compressed block freed under its page is handed to another
            // page: the first page reads back as another's or as no page
            // at all, with no fault to explain it (first at seed 0).
            BuddyFreeInUse => (
                "compressed",
                10,
                &["unexpected engine error: corrupt page", "CHECK TABLE"],
            ),
            // Needs a plan with a child `t3` and a grandchild `t4`, rows in
            // both below a `t1` row, and a delete of that row that cascades:
            // the grandchild then names a row that is gone, which the
            // orphan check after recovery, the lock oracle's count of row
            // changes against the engine's undo records or a read of `t4`
            // sees first (first at seed 186).
            CascadeSkipsSecondLevel => (
                "default",
                240,
                &[
                    "undo records by the engine's count",
                    "the model expected",
                    " read returned ",
                    "foreign keys: after recovery",
                ],
            ),
            // Needs a child insert while another transaction holds a
            // parent row delete-marked, or a parent found and then deleted:
            // the write model's answer differs (first at seed 2).
            ChildCheckSkipsParentLock => ("default", 60, &["the model expected"]),
        };
        cases.push((c.name(), case.0, case.1, case.2));
    }
    cases.push(("lying-fsync", "default", 120, RECOVERY));
    cases
}

#[test]
fn canaries_are_reported_by_the_checkers_meant_to_catch_them() {
    for (canary, profile, budget, checkers) in canary_cases() {
        let p = Profile::named(profile).expect("known profile");
        let opts = RunOptions {
            canary: Some(canary.into()),
            ..RunOptions::default()
        };
        let caught = (0..budget).find_map(|seed| {
            let outcome = run(seed, &p, &opts).expect("valid");
            outcome.violations.first().map(|v| (seed, v.clone()))
        });
        let Some((seed, first)) = caught else {
            panic!("canary {canary} was not caught in {budget} seeds of {profile}");
        };
        assert!(
            checkers.iter().any(|c| first.contains(c)),
            "canary {canary}, seed {seed} of {profile}: caught by the wrong checker (want one of {checkers:?}): {first}"
        );
    }
}

#[test]
fn lock_profiles_seeds_pass() {
    // The lock profiles: hot rows, sysbench's oltp_read_write, transfers.
    // Each seed is checked by the lock oracle, the locking-read model, the
    // recovery oracle and (transfers) the total of the balances.
    for p in ["hot-rows", "oltp", "transfer"] {
        seeds_pass(p, 0..8);
    }
}

#[test]
fn transfers_wait_deadlock_and_crash_and_the_total_check_can_fail() {
    let p = Profile::named("transfer").expect("known profile");
    let (mut waits, mut crashes, mut rollbacks) = (0, 0, 0);
    for seed in 0..10 {
        let o = run(seed, &p, &RunOptions::default()).expect("valid");
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        waits += o.stats.waits;
        crashes += o.stats.crashes;
        rollbacks += o.stats.rollbacks;
    }
    assert!(
        waits > 100,
        "transfers contend for accounts ({waits} waits)"
    );
    assert!(
        crashes > 10,
        "a final crash per seed, and crashes while sessions run ({crashes})"
    );
    assert!(
        rollbacks > 10,
        "deadlock victims and timeouts roll back ({rollbacks})"
    );
    // Without the rollback of unfinished transactions at recovery, a
    // half-done transfer survives a crash and the total changes: seed 1
    // (seed 6 did until the deadlock weight counted lock structs, which
    // changed its victims; the recovery oracle and the locking reads catch
    // it there first).
    let opts = RunOptions {
        canary: Some("skip-recovery-rollback".into()),
        ..RunOptions::default()
    };
    let o = run(1, &p, &opts).expect("valid");
    assert!(
        o.violations
            .iter()
            .any(|v| v.starts_with("transfer: the recovered balances add up to")),
        "{:?}",
        o.violations
    );
}

#[test]
fn the_oltp_bench_charges_commit_syncs_to_simulated_time_and_finds_deadlocks() {
    // The lock benchmark (`innosim bench --oltp`) on a few seeds: every run
    // passes the checkers; under flush 1 each commit pays its 1 ms sync, so
    // the same workload takes longer in simulated time than under flush 2,
    // which only writes, and than under flush 1 with group commit; 16
    // sessions on sysbench's transaction deadlock.
    use engine::FlushAtCommit;
    let lazy = sim::bench::oltp(0..4, FlushAtCommit::Write, false, false);
    let sync = sim::bench::oltp(0..4, FlushAtCommit::Sync, false, false);
    let group = sim::bench::oltp(0..4, FlushAtCommit::Sync, true, false);
    for r in [&lazy, &sync, &group] {
        assert!(r.failing_seeds.is_empty(), "{r:?}");
        assert!(r.commits > 4 * 100, "{r:?}");
    }
    assert!(
        sync.sim_seconds > lazy.sim_seconds + 0.9 * 1e-3 * sync.commits as f64,
        "flush 1 pays about 1 ms per commit: {sync:?} vs {lazy:?}"
    );
    // Grouped, several commits share one sync.
    assert!(
        group.sim_seconds < sync.sim_seconds,
        "{group:?} vs {sync:?}"
    );
    assert!(lazy.deadlocks + sync.deadlocks > 0, "{lazy:?} {sync:?}");
}

#[test]
fn under_time_driven_scheduling_one_device_bounds_commits_that_sync_alone() {
    // Sixteen sessions overlap in simulated time on one processor, and the
    // disk serves one 1 ms sync at a time. Under flush 1 without group
    // commit every commit makes its own sync, so no more than 1,000 commit
    // per simulated second however many sessions wait, at most one per
    // log sync; grouped, a sync serves every commit written before it
    // starts; flush 2 syncs once a second. Every run is judged.
    use engine::FlushAtCommit;
    let alone = sim::bench::oltp(0..3, FlushAtCommit::Sync, false, true);
    let group = sim::bench::oltp(0..3, FlushAtCommit::Sync, true, true);
    let lazy = sim::bench::oltp(0..3, FlushAtCommit::Write, false, true);
    for r in [&alone, &group, &lazy] {
        assert!(r.failing_seeds.is_empty(), "{r:?}");
        assert!(r.commits > 3 * 100, "{r:?}");
    }
    assert!(alone.tps() <= 1_000.0, "{alone:?}");
    assert!(alone.commits_per_log_sync() <= 1.0, "{alone:?}");
    assert!(group.commits_per_log_sync() > 1.5, "{group:?}");
    assert!(lazy.commits_per_log_sync() > 5.0, "{lazy:?}");
    assert!(lazy.tps() > alone.tps(), "{lazy:?} vs {alone:?}");
}

#[test]
fn on_a_platter_the_binary_logs_mutex_gives_the_seeds_flush_ratio_and_deadlocks() {
    // `innosim bench --flush`'s acceptance, on 3 seeds a row: with 16
    // clients on a disk without a write cache (a sync waits for its
    // sectors, 6 ms a turn), MySQL 5.1's built-in InnoDB with the binary
    // log (commits one at a time through `prepare_commit_mutex`, locks
    // held until a commit's turn) runs flush 0 within 1.5x of seeds/004's
    // 4.29 times faster than flush 1, and deadlocks more per transaction
    // under flush 1. Group commit shares syncs among 4 or more clients; a
    // lone client's commits each have their own. Every run is judged.
    use engine::FlushAtCommit;
    use sim::bench::{flush_row, CommitPath, FlushPoint, Sysbench};
    let row = |sessions, flush, path| {
        let point = FlushPoint {
            preset: "platter".into(),
            test: Sysbench::ReadWrite,
            sessions,
            flush,
            path,
        };
        let r = flush_row(&point, 0..3).expect("a preset");
        assert!(r.row.failing_seeds.is_empty(), "{r:?}");
        assert!(r.row.commits > 3 * 50, "{r:?}");
        r.row
    };
    let f0 = row(16, FlushAtCommit::Lazy, CommitPath::Own);
    let mutex = row(16, FlushAtCommit::Sync, CommitPath::BinlogMutex);
    let ratio = f0.tps() / mutex.tps();
    let seed = sim::bench::seed_flush_ratio();
    assert!(
        (seed - 780.35 / 181.90).abs() < 1e-9,
        "seeds/004's own figures"
    );
    assert!(
        (seed / 1.5..=seed * 1.5).contains(&ratio),
        "flush 0 over flush 1: {ratio:.2} ({f0:?} vs {mutex:?})"
    );
    let per_trx = |r: &sim::bench::OltpRow| r.deadlocks as f64 / r.commits as f64;
    assert!(
        per_trx(&mutex) > 2.0 * per_trx(&f0),
        "deadlocks per transaction: {} vs {}",
        per_trx(&mutex),
        per_trx(&f0)
    );
    for n in [4, 16] {
        let group = row(n, FlushAtCommit::Sync, CommitPath::Group);
        assert!(group.commits_per_log_sync() > 1.5, "{n}: {group:?}");
    }
    let alone = row(1, FlushAtCommit::Sync, CommitPath::Group);
    assert!(alone.commits_per_log_sync() <= 1.0, "{alone:?}");
    assert!(mutex.commits_per_log_sync() <= 1.0, "{mutex:?}");
}

#[test]
fn time_driven_runs_catch_lock_timeouts_fired_early_or_late() {
    // A time-driven scheduler steps a waiting session only when its wait
    // ends: at a grant, at the oracle's deadline (so a timeout the engine
    // fires late is caught there), or at the engine's own earlier one, as
    // InnoDB's lock timeout thread wakes it (so one fired early is caught).
    let p = Profile::named("hot-rows+timed").expect("known profile");
    for canary in ["late-lock-timeout", "deadline-from-first-wait"] {
        let opts = RunOptions {
            canary: Some(canary.into()),
            ..RunOptions::default()
        };
        let caught = (0..10)
            .filter(|&seed| !run(seed, &p, &opts).expect("valid").violations.is_empty())
            .count();
        assert!(caught > 0, "{canary}: not caught in 10 seeds");
    }
}

#[test]
fn time_driven_runs_are_pure_functions_of_their_seeds() {
    // The same seed twice gives the same trace, on every profile; a
    // recorded schedule replays the same run (the turns carry the clock's
    // advance to each step).
    let mut timeouts = 0;
    for name in ["default", "hot-rows", "transfer", "compressed"] {
        let p = Profile::named(&format!("{name}+timed")).expect("known profile");
        assert!(p.timed);
        for seed in 0..3 {
            let a = run(seed, &p, &RunOptions::default()).expect("valid");
            timeouts += a.stats.lock_timeouts;
            let b = run(seed, &p, &RunOptions::default()).expect("valid");
            assert!(a.violations.is_empty(), "{name} {seed}: {:?}", a.violations);
            assert_eq!(a.trace_hash, b.trace_hash, "{name} seed {seed}");
            let mut plan = sim::plan::Plan::generate(seed, &p, None, None);
            plan.schedule = Some(a.schedule.clone());
            let again = sim::runner::execute(&plan, false).expect("valid");
            assert_eq!(
                again.trace_hash, a.trace_hash,
                "{name} seed {seed} replayed"
            );
        }
    }
    // Clients that pause inside their transactions hold their locks long
    // enough for others' waits to time out.
    assert!(timeouts > 10, "{timeouts} lock wait timeouts");
}

#[test]
fn group_commits_wait_crash_and_recover_as_promised() {
    // Group commit under flush 1: each commit is written, waits, and is
    // acknowledged by a sync shared with the commits written before it.
    // Crashes cut groups in the middle; the recovery oracle must then
    // accept any prefix up to the last commit written and demand every
    // commit an acknowledgement promised (skip-group-sync, its canary,
    // is caught by the fuzzer test above and by its corpus entry).
    use engine::FlushAtCommit;
    use sim::plan::Plan;
    let p = Profile::named("default").expect("known profile");
    let (mut waits, mut commits, mut crashes) = (0, 0, 0);
    for seed in 0..12 {
        let mut plan = Plan::generate(seed, &p, Some(FlushAtCommit::Sync), None);
        plan.group_commit = true;
        let o = sim::runner::execute(&plan, false).expect("valid");
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        waits += o.stats.commit_waits;
        commits += o.stats.commits;
        crashes += o.stats.crashes;
    }
    assert!(waits > 1000, "{waits} commit waits in {commits} commits");
    assert!(crashes >= 12, "{crashes} crashes");
}

/// Counters (by their `RunStats::reached` names) and the least each must
/// reach.
type Wants<'a> = &'a [(&'a str, u64)];

#[test]
fn every_profile_injects_its_faults_and_reaches_the_rare_paths() {
    // Over a fixed seed budget per profile, each fault kind the profile
    // allows is injected and each rare path is reached, many times: a
    // checker is only as good as the paths its campaigns drive.
    let mixed: Wants = &[
        ("crashes", 25),
        ("crashes during recovery", 5),
        ("bits flipped by bit rot", 20),
        ("bit rot caught", 1),
        ("torn pages repaired", 5),
        ("redo records applied", 5_000),
        ("transactions rolled back at recovery", 5),
        ("lock waits", 100),
        ("deadlocks", 2),
        ("victims chosen by weight", 1),
        ("locks inherited", 100),
        ("implicit locks converted", 20),
        ("implicit locks converted on secondary entries", 10),
        ("group commit waits", 50),
        ("misdirected writes", 5),
        ("crashes just after a checkpoint", 2),
        ("files grown back at recovery", 2),
        ("tables created, dropped or truncated", 5),
        ("inserts without a primary key", 100),
        ("reads of tables without a primary key", 100),
        // Filtered UPDATEs and DELETEs under READ COMMITTED: rows read
        // semi-consistently (2 to 8 in each profile's seeds) and rows let
        // go (54 to 368).
        ("rows UPDATEs read semi-consistently", 2),
        // Two in five mixed plans rebuild tables by a copying ALTER (10
        // to 39 in each profile's seeds).
        ("tables rebuilt by a copying ALTER", 5),
        (
            "rejected rows READ COMMITTED let go (row_unlock_for_mysql)",
            25,
        ),
    ];
    let io_errors: Wants = &[("fsync failures", 8), ("full-disk errors", 40)];
    let lock_heavy: Wants = &[
        ("crashes", 5),
        ("redo records applied", 5_000),
        ("lock waits", 500),
        ("deadlocks", 100),
        ("victims chosen by weight", 50),
        ("transactions rolled back at recovery", 5),
    ];
    // Compressed tables in the mixes: each path of a compressed page taken.
    let zip_some: Wants = &[
        ("pages compressed", 300),
        ("compressions that did not fit", 50),
        ("pages decompressed", 300),
        ("changes in the modification log", 1_000),
        ("pages recompressed by a change", 100),
        ("pages reorganized to compress", 30),
        ("changes refused by the compressed size", 30),
        ("splits forced by the compressed size", 20),
    ];
    // The compressed profile: the same paths, many times over (40 seeds
    // reach about twice these), and the rare success of a reorganization.
    let zip_many: Wants = &[
        ("pages compressed", 2_000),
        ("compressions that did not fit", 900),
        ("pages decompressed", 8_000),
        ("changes in the modification log", 6_000),
        ("pages recompressed by a change", 900),
        ("pages reorganized to compress", 300),
        ("reorganized pages that then fit", 2),
        ("changes refused by the compressed size", 300),
        ("splits forced by the compressed size", 140),
    ];
    let cases: &[(&str, u64, &[Wants])] = &[
        (
            "default",
            40,
            &[
                mixed,
                zip_some,
                &[
                    ("waits again after a grant", 20),
                    // A scan that waited reads on from its place, leaving
                    // out a row inserted behind it (6 in seeds 0..40).
                    ("locking scans that kept their place through a wait", 3),
                    // An insert into the table without a primary key that
                    // waited keeps its row id (37 in seeds 0..40).
                    (
                        "inserts without a primary key that kept their row id through a wait",
                        10,
                    ),
                    // Half the plans that build an index give it a sort
                    // buffer of at most 256 bytes (5 runs in seeds 0..40).
                    ("sorted runs index builds spilled to their merge files", 2),
                    // An insert that waits on a secondary index keeps its
                    // clustered record in place (83 in seeds 0..40).
                    (
                        "inserts that waited with their clustered record in place",
                        30,
                    ),
                ],
            ],
        ),
        ("small", 40, &[&mixed[..5]]),
        ("long-columns", 40, &[mixed]),
        ("crash-heavy", 40, &[mixed, zip_some]),
        (
            "compressed",
            40,
            &[
                mixed,
                io_errors,
                zip_many,
                // 5 and 70 in seeds 0..40.
                &[
                    ("sorted runs index builds spilled to their merge files", 2),
                    (
                        "inserts that waited with their clustered record in place",
                        30,
                    ),
                ],
            ],
        ),
        // 80 seeds: io-errors has 14 crashes just after a checkpoint per
        // 100 seeds (281 in 2000), but its first 40 seeds hold only 1 or 2
        // of them; seeds 0..80 hold 6.
        ("io-errors", 80, &[mixed, io_errors]),
        (
            "hot-rows",
            8,
            &[
                lock_heavy,
                &[
                    ("lock wait timeouts", 30),
                    ("waits again after a grant", 30),
                ],
            ],
        ),
        (
            "oltp",
            8,
            &[&lock_heavy[..3], &[("torn pages repaired", 20)]],
        ),
        ("transfer", 8, &[lock_heavy]),
    ];
    for (name, seeds, wants) in cases {
        let p = Profile::named(name).expect("known profile");
        let mut totals = sim::runner::RunStats::default();
        for seed in 0..*seeds {
            let o = run(seed, &p, &RunOptions::default()).expect("valid");
            assert!(
                o.violations.is_empty(),
                "{name} seed {seed}: {:?}",
                o.violations
            );
            totals.add(&o.stats);
        }
        let reached: std::collections::BTreeMap<&str, u64> = totals.reached().into_iter().collect();
        for (what, least) in wants.iter().flat_map(|w| w.iter()) {
            let got = reached
                .get(what)
                .copied()
                .unwrap_or_else(|| panic!("no counter {what}"));
            assert!(
                got >= *least,
                "{name}: {got} {what} in {seeds} seeds, want at least {least}"
            );
        }
    }
}

#[test]
fn power_losses_undo_creates_and_removes_the_directory_sync_did_not_cover() {
    // Rarer than the budgets above show: a crash must strike between a
    // file's creation or removal and the directory sync after it, be a
    // power loss, and drop the change (io-errors: 6 in 200 seeds).
    let p = Profile::named("io-errors").expect("known profile");
    let mut totals = sim::runner::RunStats::default();
    for seed in 0..200 {
        let o = run(seed, &p, &RunOptions::default()).expect("valid");
        assert!(o.violations.is_empty(), "seed {seed}: {:?}", o.violations);
        totals.add(&o.stats);
    }
    assert!(
        totals.ddl_done >= 50,
        "{} DDL statements done",
        totals.ddl_done
    );
    assert!(
        totals.namespace_ops_lost >= 3,
        "{} namespace ops lost",
        totals.namespace_ops_lost
    );
}

#[test]
fn the_simulator_bench_runs_every_profile_both_ways_and_judges_each_seed() {
    // `innosim bench --sim --quick --json`: a row per profile, step-driven
    // and time-driven, each of ten seeds judged; the rates are the
    // machine's and only reported (no timing is asserted).
    let v = innosim_json(&["bench", "--sim", "--quick", "--json"]);
    let rows = v["sim"].as_array().expect("rows");
    assert_eq!(rows.len(), 2 * Profile::NAMES.len());
    for name in Profile::NAMES {
        for p in [name.to_string(), format!("{name}+timed")] {
            let r = rows
                .iter()
                .find(|r| r["profile"] == p.as_str())
                .unwrap_or_else(|| panic!("no row for {p}"));
            assert_eq!(r["seeds"], 10, "{r}");
            assert_eq!(r["failing"], 0, "{r}");
            assert!(r["sim_seconds"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["seeds_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
}

#[test]
fn a_run_is_drawn_as_a_timeline_in_the_trace_event_format() {
    // A time-driven seed on the SSD preset, where steps take time, with a
    // crash and its recovery: its trace converts to Chrome's format, which
    // the checker accepts (fields, nesting, paired waits), with turn
    // slices of some length, waits, the crash and recovery on the engine's
    // track. A step-driven seed converts too.
    let mut p = Profile::named("default+timed").expect("known profile");
    p.latency = sim::storage::faults::Latency::preset("ssd");
    let opts = RunOptions {
        keep_trace: true,
        ..RunOptions::default()
    };
    let mut waits = 0;
    let mut finished = 0;
    let mut flows = 0;
    for seed in 0..4 {
        let o = run(seed, &p, &opts).expect("valid");
        assert!(o.violations.is_empty(), "{seed}: {:?}", o.violations);
        let v = sim::runner::chrome_trace(&o.trace).expect("converts");
        sim::runner::check_chrome_trace(&v).expect("a well-formed timeline");
        let events = v["traceEvents"].as_array().expect("events");
        assert!(
            events
                .iter()
                .any(|e| e["ph"] == "X" && e["dur"].as_u64().unwrap_or(0) > 0),
            "seed {seed}: no turn took time"
        );
        assert!(events.iter().any(|e| e["cat"] == "crash"), "seed {seed}");
        assert!(events.iter().any(|e| e["cat"] == "recovery"), "seed {seed}");
        // Each finished recovery's phases, in order, one after another on
        // the engine's track, the whole of them taking the disk's time.
        let phases: Vec<(&str, u64, u64)> = events
            .iter()
            .filter(|e| e["cat"] == "recovery" && e["ph"] == "X")
            .map(|e| {
                let ts = e["ts"].as_u64().unwrap();
                (
                    e["name"].as_str().unwrap(),
                    ts,
                    ts + e["dur"].as_u64().unwrap(),
                )
            })
            .collect();
        let order = [
            "redo scan",
            "open tablespaces",
            "doublewrite repair",
            "redo apply",
            "dictionary",
            "rollback",
            "clean-up",
            "flush and checkpoint",
        ];
        // (A recovery that met bit rot, or crashed, has none.)
        let recovered = events
            .iter()
            .filter(|e| e["name"] == "recovery: recovered")
            .count();
        assert_eq!(
            phases.len(),
            recovered * order.len(),
            "seed {seed}: {phases:?}"
        );
        finished += recovered;
        for run in phases.chunks(order.len()) {
            let names: Vec<&str> = run.iter().map(|p| p.0).collect();
            assert_eq!(names, order, "seed {seed}");
            assert!(run.windows(2).all(|w| w[0].2 == w[1].1), "{run:?}");
            assert!(run[order.len() - 1].2 > run[0].1, "seed {seed}: {run:?}");
        }
        waits += events.iter().filter(|e| e["ph"] == "b").count();
        flows += events.iter().filter(|e| e["ph"] == "s").count();
    }
    assert!(waits > 0);
    assert!(flows > 0, "no wait drew an arrow from its blocker");
    assert!(finished > 0, "no recovery finished");
    let step = Profile::named("default").expect("known profile");
    let o = run(0, &step, &opts).expect("valid");
    let v = sim::runner::chrome_trace(&o.trace).expect("converts");
    sim::runner::check_chrome_trace(&v).expect("a well-formed timeline");
}

#[test]
fn a_time_driven_timeline_draws_the_device_syncs_background_rounds_and_counters() {
    // oltp on the seeds' disk under flush 1: each sync the device ran is a
    // slice on the disk's track exactly as long as the preset's sync time
    // (700 us and up to 600 more), the commits' with an arrow from the
    // session whose turn issued them; the background's rounds (about one a
    // simulated second) are slices on their own track and flush pages;
    // checkpoints are instants; dirty pages and log age are counters.
    let p = Profile::named("oltp+timed+seeds-disk").expect("known profile");
    let opts = RunOptions {
        keep_trace: true,
        flush: Some(engine::FlushAtCommit::Sync),
        ..RunOptions::default()
    };
    let (mut session_syncs, mut flushed, mut checkpoints) = (0, 0, 0);
    for seed in 0..2 {
        let o = run(seed, &p, &opts).expect("valid");
        assert!(o.violations.is_empty(), "{seed}: {:?}", o.violations);
        let v = sim::runner::chrome_trace(&o.trace).expect("converts");
        sim::runner::check_chrome_trace(&v).expect("a well-formed timeline");
        let events = v["traceEvents"].as_array().expect("events");
        let of = |cat: &str, ph: &str| -> Vec<&serde_json::Value> {
            events
                .iter()
                .filter(|e| e["cat"] == cat && e["ph"] == ph)
                .collect()
        };
        let ends: std::collections::BTreeMap<u64, u64> = of("sync", "e")
            .iter()
            .map(|e| (e["id"].as_u64().unwrap(), e["ts"].as_u64().unwrap()))
            .collect();
        let syncs = of("sync", "b");
        assert!(!syncs.is_empty(), "seed {seed}: no sync drawn");
        let disk = syncs[0]["tid"].clone();
        for b in &syncs {
            assert_eq!(b["tid"], disk, "one track for the device");
            let took = ends[&b["id"].as_u64().unwrap()] - b["ts"].as_u64().unwrap();
            assert!(
                (700..=1300).contains(&took),
                "seed {seed}: {b} took {took} us"
            );
            if !b["args"]["sessions"].as_array().unwrap().is_empty() {
                session_syncs += 1;
            }
        }
        // An arrow from a session's track to the device's for each sync a
        // turn issued.
        let arrows = of("sync", "f");
        assert!(arrows.iter().all(|f| f["tid"] == disk));
        assert_eq!(arrows.len(), of("sync", "s").len());
        let rounds = of("background", "X");
        let seconds = o.stats.sim_us as f64 / 1e6;
        assert!(
            !rounds.is_empty() && rounds.len() as f64 <= seconds + 2.0,
            "seed {seed}: {} rounds in {seconds} s",
            rounds.len()
        );
        flushed += rounds
            .iter()
            .map(|r| r["args"]["pages_flushed"].as_u64().unwrap())
            .sum::<u64>();
        checkpoints += of("checkpoint", "i").len();
        for counter in ["dirty pages", "log age"] {
            assert!(
                events
                    .iter()
                    .any(|e| e["ph"] == "C" && e["name"] == counter),
                "seed {seed}: no {counter} counter"
            );
        }
    }
    assert!(session_syncs > 0, "no commit's sync");
    assert!(flushed > 0, "no round flushed a page");
    assert!(checkpoints > 0, "no checkpoint drawn");
}

#[test]
fn the_engine_bench_runs_sqlite_beside_the_engine() {
    // `innosim bench --engine --quick --json`: the four phases on both, the
    // same operations counted; it fails (and this with it) if the two
    // engines end holding different rows.
    let v = innosim_json(&["bench", "--engine", "--quick", "--json"]);
    let phases = v["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "sequential insert",
            "point select",
            "update k (autocommit)",
            "random insert"
        ]
    );
    for p in phases {
        for key in ["innosim_per_sec", "sqlite_per_sec", "innosim_over_sqlite"] {
            assert!(p[key].as_f64().unwrap() > 0.0, "{p}");
        }
    }
    assert_eq!(v["rows"], 20_000);
    assert!(v["sqlite"].as_str().unwrap().starts_with('3'), "{v}");
}

/// Runs the command line, which must succeed, and reads the one JSON
/// object it prints.
fn innosim_json(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_innosim"))
        .args(args)
        .output()
        .expect("innosim runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// A JSON value's shape: every number becomes its kind, everything else
/// stays (names, settings), so that a snapshot changes only when a field
/// or a setting does, not when a rate moves.
fn json_shape(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => Value::String("<float>".into()),
        Value::Number(_) => Value::String("<integer>".into()),
        Value::Array(a) => Value::Array(a.iter().map(json_shape).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), json_shape(v))).collect())
        }
        other => other.clone(),
    }
}

#[test]
fn the_flush_bench_reports_every_row_beside_the_seeds_figures() {
    // `innosim bench --flush --quick --json`: oltp_read_write,
    // oltp_write_only and oltp_insert on both presets, 1 and 16 clients,
    // flush 0 and 2 and flush 1 on each commit path, every seed judged;
    // the JSON's shape is a snapshot (`cargo insta review` accepts a change
    // made on purpose). Rates are the simulation's and only reported here
    // (the acceptance test above bounds them).
    let v = innosim_json(&["bench", "--flush", "--quick", "--json"]);
    let rows = v["flush"].as_array().expect("rows");
    assert_eq!(rows.len(), 3 * 2 * 2 * 5);
    for r in rows {
        assert_eq!(r["failing_seeds"], serde_json::json!([]), "{r}");
        assert_eq!(r["seeds"], 2, "{r}");
        assert!(r["commits"].as_u64().unwrap() > 0, "{r}");
        // Only the OLTP runs the seeds measured have their figures.
        if r["test"] != "oltp_read_write" {
            assert_eq!(r["seed_figures"], serde_json::json!([]), "{r}");
        }
        // Under flush 1 a lone client's commits each sync the log (and
        // the background's once-a-second flush may add one a second); 16
        // clients share syncs on the group commit path.
        if r["flush"] == 1 && r["sessions"] == 1 {
            let commits = r["commits"].as_f64().unwrap();
            let syncs = r["log_syncs"].as_f64().unwrap();
            let seconds = r["sim_seconds"].as_f64().unwrap();
            assert!((commits..=commits + seconds + 2.0).contains(&syncs), "{r}");
        }
        if r["flush"] == 1 && r["sessions"] == 16 && r["commit_path"] == "group commit" {
            assert!(r["commits_per_log_sync"].as_f64().unwrap() > 1.5, "{r}");
        }
    }
    for test in ["oltp_read_write", "oltp_write_only", "oltp_insert"] {
        assert_eq!(
            rows.iter().filter(|r| r["test"] == test).count(),
            2 * 2 * 5,
            "{test}"
        );
    }
    // The seeds' figures sit beside the rows they measured.
    let at = rows
        .iter()
        .position(|r| {
            r["test"] == "oltp_read_write"
                && r["preset"] == "platter"
                && r["sessions"] == 16
                && r["flush"] == 1
        })
        .expect("a row");
    let f1 = &rows[at];
    let sources: Vec<&str> = f1["seed_figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["source"].as_str().unwrap())
        .collect();
    assert!(
        sources.iter().any(|s| s.starts_with("seeds/004")),
        "{sources:?}"
    );
    assert!(
        sources.iter().any(|s| s.starts_with("seeds/002")),
        "{sources:?}"
    );
    let mut shape = json_shape(&v);
    // One row stands for all (they share their fields).
    shape["flush"] = serde_json::json!([shape["flush"][at].clone()]);
    insta::assert_json_snapshot!("bench_flush_quick_json_shape", shape);
}
