//! A rollback that meets a full disk. Undoing an update that shortened a
//! row puts the long row back, and if other transactions have filled its
//! page since, that needs a page split and a new page, which a full disk
//! refuses. The transaction is then half undone with its locks held, and
//! only recovery can finish it: the engine stops (InnoDB's `row_undo_step`
//! exits on DB_OUT_OF_FILE_SPACE in a rollback), and the next start rolls
//! the transaction back. Found by `innosim run --seed 31462 --profile
//! io-errors`, where the engine used to drop the transaction and carry on
//! with its half-undone changes in place.

mod common;

use common::{docs, done};
use engine::io::ManualClock;
use engine::{Config, Engine, Error, Request, Response, RowFormat, Value};
use sim::storage::{CrashMode, SimStorage};
use std::sync::Arc;

const ROWS: i64 = 40;
const LONG: usize = 1500;

fn open(storage: &SimStorage) -> Engine {
    Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(ManualClock::new())),
        Config {
            buffer_pool_pages: 64,
            ..Config::default()
        },
    )
    .expect("recovery")
    .0
}

fn doc(id: i64) -> Value {
    Value::Bytes(vec![b'a' + (id % 26) as u8; LONG])
}

fn insert(e: &mut Engine, s: engine::SessionId, id: i64) -> engine::Result<engine::Step> {
    e.execute(
        s,
        Request::Insert {
            table: "t".into(),
            row: vec![Value::Int(id), Value::Null, doc(id)],
        },
    )
}

#[test]
fn a_rollback_that_meets_a_full_disk_stops_the_engine_and_recovery_finishes_it() {
    let storage = SimStorage::new();
    let mut e = open(&storage);
    e.create_table(docs("t", RowFormat::Dynamic)).unwrap();
    let filler = e.session();
    for i in 0..ROWS {
        done(insert(&mut e, filler, 2 * i).unwrap());
    }
    // A transaction shortens every row, leaving room on their pages.
    let a = e.session();
    done(e.execute(a, Request::Begin).unwrap());
    for i in 0..ROWS {
        let r = done(
            e.execute(
                a,
                Request::Update {
                    table: "t".into(),
                    key: vec![Value::Int(2 * i)],
                    set: vec![("doc".into(), Value::Bytes(b"x".to_vec()))],
                },
            )
            .unwrap(),
        );
        assert_eq!(r, Response::Affected(1));
    }
    // The disk fills up; other rows, committed, take the room on the pages
    // and then every page the file can hold.
    let used: u64 = e.file_sizes().unwrap().iter().map(|(_, n)| n).sum();
    let mut faults = storage.faults();
    faults.capacity_bytes = Some(used);
    storage.set_faults(faults);
    let mut committed = Vec::new();
    for i in 0..4 * ROWS {
        match insert(&mut e, filler, 2 * i + 1) {
            Ok(step) => {
                done(step);
                committed.push(2 * i + 1);
            }
            Err(Error::TableFull { .. }) => {}
            Err(other) => panic!("insert {}: {other}", 2 * i + 1),
        }
    }
    assert!(
        !committed.is_empty(),
        "no row took the room the update left"
    );

    // The rollback needs pages the disk no longer has.
    let err = e.execute(a, Request::Rollback).unwrap_err();
    assert!(
        matches!(&err, Error::Halted(why) if why.contains("rollback failed")),
        "{err}"
    );
    assert_eq!(e.stats.failed_rollbacks, 1);
    let why = e.halted().expect("the engine stopped").to_string();
    assert!(why.contains("full"), "{why}");
    // Nothing runs on the half-undone pages.
    let r = e.execute(filler, Request::scan_all("t"));
    assert!(matches!(r, Err(Error::Halted(_))), "{r:?}");

    // The operator frees space; recovery rolls the transaction back.
    storage.crash_now();
    drop(e);
    let mut faults = storage.faults();
    faults.capacity_bytes = None;
    storage.set_faults(faults);
    storage.restart(CrashMode::ProcessCrash);
    let mut e = open(&storage);
    let reader = e.session();
    let rows = match done(e.execute(reader, Request::scan_all("t")).unwrap()) {
        Response::Rows(rows) => rows,
        other => panic!("{other:?}"),
    };
    let mut want: Vec<i64> = (0..ROWS).map(|i| 2 * i).chain(committed).collect();
    want.sort_unstable();
    let ids: Vec<i64> = rows
        .iter()
        .map(|r| match r[0] {
            Value::Int(id) => id,
            ref v => panic!("{v:?}"),
        })
        .collect();
    assert_eq!(ids, want);
    for r in &rows {
        let Value::Int(id) = r[0] else { unreachable!() };
        assert_eq!(r[2], doc(id), "row {id}");
    }
    let report = e.verify_files().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}
