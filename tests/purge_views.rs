//! Purge and read views: a REPEATABLE READ view that began before a
//! committed update of an indexed column still finds the row through the
//! secondary index, by its old key, after purge has run: the old entry is
//! delete-marked but kept while a view needs it (InnoDB's purge waits for
//! the oldest view, `trx_purge` / `row_purge_remove_sec_if_poss`). The
//! `purge-secondary-ahead-of-views` canary removes it early, and the same
//! scenario must then fail.

mod common;

use common::{done, sb_row, sbtest};
use engine::{Canaries, Canary, Config, Engine, Isolation, RangeBound, Request, Response, Value};

fn k_scan() -> Request {
    Request::Scan {
        table: "sb".into(),
        index: Some("k".into()),
        low: RangeBound::Unbounded,
        high: RangeBound::Unbounded,
        reverse: false,
        limit: None,
    }
}

/// The rows a view that began before `k` of row 1 moved from 5 to 7 sees
/// through the index on `k`, after purge.
fn old_view_after_purge(canaries: Canaries) -> engine::Result<Vec<Vec<Value>>> {
    let config = Config {
        canaries,
        ..Config::default()
    };
    let (mut e, _) = Engine::open(
        Box::new(engine::io::MemStorage::new()),
        Box::new(engine::io::ManualClock::new()),
        config,
    )?;
    e.create_table(sbtest("sb", engine::RowFormat::Compact))?;
    let w = e.session();
    for id in 1..=3 {
        done(e.execute(
            w,
            Request::Insert {
                table: "sb".into(),
                row: sb_row(id, 5),
            },
        )?);
    }
    let reader = e.session();
    done(e.execute(reader, Request::SetIsolation(Isolation::RepeatableRead))?);
    done(e.execute(reader, Request::Begin)?);
    // The view begins here.
    let Response::Rows(before) = done(e.execute(reader, k_scan())?) else {
        panic!("a scan returns rows");
    };
    assert_eq!(before.len(), 3);
    done(e.execute(
        w,
        Request::Update {
            table: "sb".into(),
            key: vec![Value::UInt(1)],
            set: vec![("k".into(), Value::UInt(7))],
        },
    )?);
    e.purge_all()?;
    let Response::Rows(after) = done(e.execute(reader, k_scan())?) else {
        panic!("a scan returns rows");
    };
    done(e.execute(reader, Request::Commit)?);
    Ok(after)
}

#[test]
fn an_old_view_finds_a_row_by_its_old_secondary_key_after_purge() -> engine::Result<()> {
    let rows = old_view_after_purge(Canaries::NONE)?;
    let ids: Vec<&Value> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(ids, [&Value::UInt(1), &Value::UInt(2), &Value::UInt(3)]);
    assert!(rows.iter().all(|r| r[1] == Value::UInt(5)), "{rows:?}");
    Ok(())
}

#[test]
fn purging_secondary_entries_ahead_of_the_views_loses_the_row() -> engine::Result<()> {
    let rows = old_view_after_purge(Canaries::NONE.with(Canary::PurgeSecondaryAheadOfViews))?;
    assert_eq!(rows.len(), 2, "the planted bug must hide row 1: {rows:?}");
    Ok(())
}
