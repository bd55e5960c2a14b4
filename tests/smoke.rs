//! First end-to-end checks of the engine API on in-memory storage.

mod common;

use common::{sb_row as row, sbtest};
use engine::io::{ManualClock, MemStorage};
use engine::*;
use std::sync::Arc;

fn done(step: Step) -> Response {
    match step {
        Step::Done(r) => r,
        Step::Waiting => panic!("unexpected wait"),
    }
}

#[test]
fn insert_get_scan_update_delete_and_reopen() -> Result<()> {
    let storage = MemStorage::new();
    let clock = Arc::new(ManualClock::new());
    let cfg = Config {
        buffer_pool_pages: 16,
        ..Config::default()
    };
    let (mut e, rep) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock.clone()),
        cfg.clone(),
    )?;
    assert!(rep.created);
    e.create_table(sbtest("t", RowFormat::Compact))?;
    let s = e.session();
    for i in 0..2000u64 {
        done(e.execute(
            s,
            Request::Insert {
                table: "t".into(),
                row: row(i, i % 10),
            },
        )?);
    }
    let r = done(e.execute(
        s,
        Request::Get {
            table: "t".into(),
            key: vec![Value::UInt(777)],
        },
    )?);
    assert_eq!(r, Response::Row(Some(row(777, 7))));
    let r = done(e.execute(
        s,
        Request::Scan {
            table: "t".into(),
            index: Some("k".into()),
            low: RangeBound::Included(vec![Value::UInt(3)]),
            high: RangeBound::Included(vec![Value::UInt(3)]),
            reverse: false,
            limit: None,
        },
    )?);
    let Response::Rows(rows) = r else { panic!() };
    assert_eq!(rows.len(), 200);
    done(e.execute(
        s,
        Request::Update {
            table: "t".into(),
            key: vec![Value::UInt(5)],
            set: vec![("k".into(), Value::UInt(99))],
        },
    )?);
    done(e.execute(
        s,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(6)],
        },
    )?);
    done(e.execute(s, Request::Begin)?);
    done(e.execute(
        s,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(7)],
        },
    )?);
    done(e.execute(s, Request::Rollback)?);
    let r = done(e.execute(
        s,
        Request::Scan {
            table: "t".into(),
            index: None,
            low: RangeBound::Included(vec![Value::UInt(4)]),
            high: RangeBound::Included(vec![Value::UInt(8)]),
            reverse: true,
            limit: None,
        },
    )?);
    let Response::Rows(rows) = r else { panic!() };
    let ids: Vec<_> = rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(
        ids,
        vec![
            Value::UInt(8),
            Value::UInt(7),
            Value::UInt(5),
            Value::UInt(4)
        ]
    );
    let rep = e.check_table("t")?;
    assert!(rep.is_ok(), "{:?}", rep.problems);
    e.purge_all()?;
    let rep = e.check_table("t")?;
    assert!(rep.is_ok(), "{:?}", rep.problems);
    assert_eq!(
        rep.trees[0].1.deleted, 0,
        "purge removed the delete-marked rows"
    );
    let st = e.table_status("t")?;
    assert_eq!(st.rows, 1999);
    e.close()?;
    let (mut e, rep) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock.clone()),
        cfg.clone(),
    )?;
    assert!(!rep.created);
    let s = e.session();
    let r = done(e.execute(
        s,
        Request::Get {
            table: "t".into(),
            key: vec![Value::UInt(5)],
        },
    )?);
    assert_eq!(r, Response::Row(Some(row(5, 99))));
    let r = done(e.execute(
        s,
        Request::Get {
            table: "t".into(),
            key: vec![Value::UInt(6)],
        },
    )?);
    assert_eq!(r, Response::Row(None));
    // A crash: drop without close, with an uncommitted transaction.
    done(e.execute(s, Request::Begin)?);
    done(e.execute(
        s,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(100)],
        },
    )?);
    // Another session's commit writes the log, the uncommitted delete too.
    let s2 = e.session();
    done(e.execute(
        s2,
        Request::Insert {
            table: "t".into(),
            row: row(5000, 1),
        },
    )?);
    drop(e);
    let (mut e, rep) = Engine::open(Box::new(storage.clone()), Box::new(clock.clone()), cfg)?;
    assert_eq!(rep.rolled_back.len(), 1, "{rep:?}");
    let s = e.session();
    let r = done(e.execute(
        s,
        Request::Get {
            table: "t".into(),
            key: vec![Value::UInt(100)],
        },
    )?);
    assert_eq!(r, Response::Row(Some(row(100, 0))));
    let r = done(e.execute(
        s,
        Request::Get {
            table: "t".into(),
            key: vec![Value::UInt(5000)],
        },
    )?);
    assert_eq!(r, Response::Row(Some(row(5000, 1))));
    Ok(())
}

/// Group commit: two sessions' commits wait, and one sync acknowledges both.
#[test]
fn group_commit_acknowledges_a_group_with_one_sync() -> Result<()> {
    let storage = MemStorage::new();
    let clock = Arc::new(ManualClock::new());
    let cfg = Config {
        group_commit: true,
        ..Config::default()
    };
    let (mut e, _) = Engine::open(Box::new(storage.clone()), Box::new(clock.clone()), cfg)?;
    e.create_table(sbtest("t", RowFormat::Dynamic))?;
    let (s1, s2) = (e.session(), e.session());
    let syncs_before = e.pager().log.stats().syncs;
    assert_eq!(
        e.execute(
            s1,
            Request::Insert {
                table: "t".into(),
                row: row(1, 1)
            }
        )?,
        Step::Waiting
    );
    assert_eq!(
        e.execute(
            s2,
            Request::Insert {
                table: "t".into(),
                row: row(2, 2)
            }
        )?,
        Step::Waiting
    );
    assert!(
        e.execute(
            s1,
            Request::Get {
                table: "t".into(),
                key: vec![Value::UInt(1)]
            }
        )
        .is_err(),
        "a waiting session takes no new statement"
    );
    assert_eq!(e.resume(s2)?, Step::Done(Response::Affected(1)));
    assert_eq!(e.resume(s1)?, Step::Done(Response::Affected(1)));
    assert_eq!(e.stats.group_commit_syncs, 1);
    assert_eq!(e.pager().log.stats().syncs, syncs_before + 1);
    Ok(())
}
