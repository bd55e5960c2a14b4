//! The duplicate check of a unique secondary index against a row that an
//! active transaction inserted over a delete-marked record of the same
//! primary key. InnoDB finds no implicit lock on the row's new secondary
//! entry (`row_vers_impl_x_locked_low` stops at the deleted version, whose
//! deleter has committed), so a reader that locks the entry alone (a
//! covering LOCK IN SHARE MODE read) is granted it. The engine's duplicate check
//! waits for the inserter rather than report a duplicate of a row that may
//! yet be rolled back; it must wait where the inserter really holds its
//! lock (the row's clustered record), never by granting the inserter an X
//! lock on the entry beside the reader's S lock.

mod common;

use common::{config, TestClock};
use engine::io::MemStorage;
use engine::lock::has_to_wait;
use engine::{
    ColumnDef, ColumnType, Engine, Error, IndexDef, RangeBound, Request, Response, RowFormat,
    SessionId, Step, TableDef, Value,
};

const T: &str = "t";

/// `CREATE TABLE t (id BIGINT UNSIGNED PRIMARY KEY, u BIGINT UNSIGNED,
/// UNIQUE KEY u (u))`.
fn table() -> TableDef {
    let col = |name: &str| ColumnDef {
        name: name.into(),
        ty: ColumnType::BIGINT_UNSIGNED,
        nullable: false,
        collation: Default::default(),
    };
    TableDef {
        name: T.into(),
        columns: vec![col("id"), col("u")],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "u".into(),
            columns: vec![1],
            unique: true,
            prefixes: Vec::new(),
        }],
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

fn insert(id: u64, u: u64) -> Request {
    Request::Insert {
        table: T.into(),
        row: vec![Value::UInt(id), Value::UInt(u)],
    }
}

fn done(step: Step) -> Response {
    match step {
        Step::Done(r) => r,
        Step::Waiting => panic!("the statement waits"),
    }
}

/// No two granted locks of different transactions on one target conflict.
fn assert_no_conflicting_grants(e: &Engine) {
    let granted: Vec<_> = e.locks().locks().filter(|l| !l.waiting).collect();
    for a in &granted {
        for b in &granted {
            assert!(
                a.trx == b.trx || a.target != b.target || !has_to_wait(a.mode, b.mode),
                "conflicting locks granted together: {a:?} and {b:?}"
            );
        }
    }
}

/// Row (1, 20) committed, then deleted (kept delete-marked by an open
/// read view); `b` inserts (1, 10) over it and stays open; `c` locks the
/// new entry (10, 1) of `u` in share mode through the covering index; `d`
/// inserts (2, 10), whose duplicate check meets that entry.
/// Returns the engine, `b`, `c`, `d` and what `d`'s insert did.
fn revived_entry_checked() -> engine::Result<(Engine, [SessionId; 3], Step)> {
    let (mut e, _) = Engine::open(
        Box::new(MemStorage::new()),
        Box::new(TestClock::default()),
        config(),
    )?;
    e.create_table(table())?;
    let (v, b, c, d) = (e.session(), e.session(), e.session(), e.session());
    done(e.execute(v, insert(1, 20))?);
    // A read view older than the delete: purge keeps the marked record.
    done(e.execute(v, Request::BeginSnapshot)?);
    done(e.execute(v, Request::scan_all(T))?);
    done(e.execute(
        b,
        Request::Delete {
            table: T.into(),
            key: vec![Value::UInt(1)],
        },
    )?);
    done(e.execute(b, Request::Begin)?);
    assert_eq!(done(e.execute(b, insert(1, 10))?), Response::Affected(1));
    done(e.execute(c, Request::Begin)?);
    let shared = Request::IndexOnly {
        read: Box::new(Request::Locking {
            read: Box::new(Request::Scan {
                table: T.into(),
                index: Some("u".into()),
                low: RangeBound::Included(vec![Value::UInt(10)]),
                high: RangeBound::Included(vec![Value::UInt(10)]),
                reverse: false,
                limit: None,
            }),
            exclusive: false,
            index_condition: false,
        }),
    };
    // As in InnoDB: no implicit lock is found on the entry, so the
    // reader's S lock on it is granted.
    done(e.execute(c, shared)?);
    done(e.execute(d, Request::Begin)?);
    let step = e.execute(d, insert(2, 10))?;
    assert_no_conflicting_grants(&e);
    Ok((e, [b, c, d], step))
}

#[test]
fn a_duplicate_check_waits_for_the_uncommitted_reviver_of_its_key() -> engine::Result<()> {
    let (mut e, [b, c, d], step) = revived_entry_checked()?;
    assert!(matches!(step, Step::Waiting), "{step:?}");
    let (b_trx, d_trx) = (e.trx_id(b).expect("open"), e.trx_id(d).expect("open"));
    assert!(
        e.locks()
            .wait_edges()
            .iter()
            .any(|w| w.requesting_trx == d_trx && w.blocking_trx == b_trx),
        "the check waits for the inserter: {:?}",
        e.locks().wait_edges()
    );
    // The inserter rolls back: the key is free, but the reader's next-key
    // lock, inherited by the gap where the entry was, holds the insert
    // until the reader ends; then it goes in.
    done(e.execute(b, Request::Rollback)?);
    assert_no_conflicting_grants(&e);
    assert!(matches!(e.resume(d)?, Step::Waiting));
    let c_trx = e.trx_id(c).expect("open");
    assert!(e
        .locks()
        .wait_edges()
        .iter()
        .all(|w| w.requesting_trx != d_trx || w.blocking_trx == c_trx));
    done(e.execute(c, Request::Commit)?);
    assert_eq!(done(e.resume(d)?), Response::Affected(1));
    Ok(())
}

#[test]
fn a_duplicate_check_reports_the_key_once_its_reviver_commits() -> engine::Result<()> {
    let (mut e, [b, _, d], step) = revived_entry_checked()?;
    assert!(matches!(step, Step::Waiting), "{step:?}");
    done(e.execute(b, Request::Commit)?);
    assert_no_conflicting_grants(&e);
    let r = e.resume(d);
    assert!(matches!(r, Err(Error::DuplicateKey { .. })), "{r:?}");
    Ok(())
}
