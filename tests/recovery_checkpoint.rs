//! Recovery ends with the pages it changed written and a checkpoint, so
//! a process killed again and again (never living long enough for a
//! checkpoint of its own) replays one run's work at each start, not its
//! whole history: InnoDB bounds recovery the same way.

mod common;

use common::{done, sb_row as row, sbtest};
use engine::io::ManualClock;
use engine::{Config, Engine, Request, RowFormat};
use sim::storage::{CrashMode, PowerLossPolicy, SimStorage};
use std::sync::Arc;

fn open(storage: &SimStorage) -> (Engine, engine::RecoveryReport) {
    Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(ManualClock::new())),
        Config {
            buffer_pool_pages: 256,
            ..Config::default()
        },
    )
    .expect("recovery")
}

#[test]
fn each_recovery_replays_only_the_run_before_it() {
    for mode in [
        CrashMode::ProcessCrash,
        CrashMode::PowerLoss(PowerLossPolicy::LoseAll),
    ] {
        let storage = SimStorage::new();
        let (mut e, _) = open(&storage);
        e.create_table(sbtest("t", RowFormat::Compact)).unwrap();
        let mut scanned = Vec::new();
        let mut next = 1u64;
        for _cycle in 0..12 {
            let s = e.session();
            for _ in 0..40 {
                done(
                    e.execute(
                        s,
                        Request::Insert {
                            table: "t".into(),
                            row: row(next, 0),
                        },
                    )
                    .unwrap(),
                );
                next += 1;
            }
            storage.crash_now();
            drop(e);
            storage.restart(mode.clone());
            let (e2, report) = open(&storage);
            scanned.push(report.mtrs_scanned);
            e = e2;
            // Every acknowledged commit (flush 1) is there.
            let reader = e.session();
            let rows = match done(e.execute(reader, Request::scan_all("t")).unwrap()) {
                engine::Response::Rows(r) => r.len() as u64,
                other => panic!("{other:?}"),
            };
            assert_eq!(rows, next - 1, "{mode:?}");
        }
        // Each run did the same work, so each recovery scans about as
        // much: the last no more than twice the second's (the first also
        // replays the CREATE). Replaying the whole history, the twelfth
        // would scan eleven runs' worth.
        assert!(scanned[1] > 0, "{scanned:?}");
        let last = *scanned.last().unwrap();
        assert!(last <= 2 * scanned[1], "{mode:?}: {scanned:?}");
        // And a crash right after a recovery replays nothing.
        storage.crash_now();
        drop(e);
        storage.restart(mode.clone());
        let (_, report) = open(&storage);
        assert_eq!(report.records_applied, 0, "{mode:?}: {report:?}");
    }
}

/// The length of a file on the simulated disk, read from the disk, not
/// from the engine.
fn file_len(storage: &SimStorage, name: &str) -> u64 {
    use engine::io::Storage;
    let mut s = storage.clone();
    s.open(name).and_then(|mut f| f.len()).expect(name)
}

#[test]
fn undo_logs_of_runs_shorter_than_purge_threshold_are_purged_after_recovery() {
    // A server that crashes after fewer commits than purge waits for used
    // to start every run believing the history list empty, so the undo
    // logs of earlier runs were never purged and the system space grew by
    // a page for every commit, forever (seen as `innosim crashloop --sim`
    // slowing down). Forty runs of 100 commits each leave 4,000 undo log
    // pages (62.5 MiB) if nothing is purged; the rows themselves take
    // under 1 MiB.
    for mode in [
        CrashMode::ProcessCrash,
        CrashMode::PowerLoss(PowerLossPolicy::LoseAll),
    ] {
        let storage = SimStorage::new();
        let (mut e, _) = open(&storage);
        e.create_table(sbtest("t", RowFormat::Compact)).unwrap();
        let mut next = 1u64;
        let mut history = Vec::new();
        for _cycle in 0..40 {
            let s = e.session();
            for _ in 0..100 {
                let insert = Request::Insert {
                    table: "t".into(),
                    row: row(next, 0),
                };
                done(e.execute(s, insert).unwrap());
                next += 1;
            }
            history.push(e.history_list_length().unwrap());
            storage.crash_now();
            drop(e);
            storage.restart(mode.clone());
            e = open(&storage).0;
        }
        let len = file_len(&storage, "ibdata1");
        assert!(
            len < 16 << 20,
            "{mode:?}: ibdata1 is {len} bytes after 40 runs; history list lengths {history:?}"
        );
        // The history list is purged back down in every run, not only
        // in those long enough to reach the threshold on their own.
        let peak = *history.iter().max().unwrap();
        assert!(
            peak < 400,
            "{mode:?}: the history list reached {peak}: {history:?}"
        );
        let reader = e.session();
        match done(e.execute(reader, Request::scan_all("t")).unwrap()) {
            engine::Response::Rows(r) => assert_eq!(r.len() as u64, next - 1, "{mode:?}"),
            other => panic!("{other:?}"),
        }
    }
}
