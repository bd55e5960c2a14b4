//! A row-by-row locking read (`Engine::set_row_by_row`, MySQL's UPDATE and
//! DELETE reading row by row) hands the rows it read over before a lock it
//! must wait for, and the engine keeps its place: the same read, asked
//! again (from its start, or from past the rows it was handed), goes on
//! from there. The place belongs to that read alone. A caller that asks
//! another read first (a new statement's: another end, index, direction or
//! lock mode) without turning row-by-row mode off gets an error and the
//! place is forgotten, where it would otherwise have been answered from the
//! old read's place, with rows outside its own range.

mod common;

use common::{config, TestClock};
use engine::io::MemStorage;
use engine::{
    ColumnDef, ColumnType, Engine, Error, RangeBound, Request, Response, RowFormat, SessionId,
    Step, TableDef, Value,
};

const T: &str = "t";

fn done(step: Step) -> Response {
    match step {
        Step::Done(r) => r,
        Step::Waiting => panic!("the statement waits"),
    }
}

/// `SELECT id FROM t WHERE id BETWEEN low AND high FOR UPDATE`.
fn locking_range(low: u64, high: u64) -> Request {
    Request::Locking {
        read: Box::new(Request::Scan {
            table: T.into(),
            index: None,
            low: RangeBound::Included(vec![Value::UInt(low)]),
            high: RangeBound::Included(vec![Value::UInt(high)]),
            reverse: false,
            limit: None,
        }),
        exclusive: true,
        index_condition: false,
    }
}

fn ids(r: Response) -> Vec<u64> {
    let Response::Rows(rows) = r else {
        panic!("rows expected: {r:?}")
    };
    rows.iter()
        .map(|row| match row[0] {
            Value::UInt(id) => id,
            ref v => panic!("an id: {v:?}"),
        })
        .collect()
}

/// Rows 1..=5 committed; `holder` locks row 3; `reader`, row by row, reads
/// 1..=5 FOR UPDATE and hands rows 1 and 2 over before the wait.
fn handed_over() -> engine::Result<(Engine, SessionId, SessionId)> {
    let (mut e, _) = Engine::open(
        Box::new(MemStorage::new()),
        Box::new(TestClock::default()),
        config(),
    )?;
    let col = |name: &str| ColumnDef {
        name: name.into(),
        ty: ColumnType::BIGINT_UNSIGNED,
        nullable: false,
        collation: Default::default(),
    };
    e.create_table(TableDef {
        name: T.into(),
        columns: vec![col("id")],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: Vec::new(),
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    })?;
    let (holder, reader) = (e.session(), e.session());
    for id in 1..=5 {
        done(e.execute(
            holder,
            Request::Insert {
                table: T.into(),
                row: vec![Value::UInt(id)],
            },
        )?);
    }
    done(e.execute(holder, Request::Begin)?);
    assert_eq!(ids(done(e.execute(holder, locking_range(3, 3))?)), [3]);
    done(e.execute(reader, Request::Begin)?);
    e.set_row_by_row(reader, true)?;
    assert_eq!(ids(done(e.execute(reader, locking_range(1, 5))?)), [1, 2]);
    assert!(e.read_goes_on(reader));
    Ok((e, holder, reader))
}

#[test]
fn the_same_read_asked_again_goes_on_from_its_place() -> engine::Result<()> {
    // Asked again from its start, and from past the rows it handed over
    // (as the fuzzer's runner asks it).
    for again in [locking_range(1, 5), locking_range(2, 5)] {
        let (mut e, holder, reader) = handed_over()?;
        assert!(matches!(e.execute(reader, again)?, Step::Waiting));
        done(e.execute(holder, Request::Commit)?);
        assert_eq!(ids(done(e.resume(reader)?)), [3, 4, 5]);
    }
    Ok(())
}

#[test]
fn another_read_does_not_go_on_from_the_place_of_the_first() -> engine::Result<()> {
    let (mut e, holder, reader) = handed_over()?;
    // Another end, and the same range locked in share mode: neither is the
    // read whose place is kept.
    let shared = match locking_range(1, 5) {
        Request::Locking { read, .. } => Request::Locking {
            read,
            exclusive: false,
            index_condition: false,
        },
        _ => unreachable!(),
    };
    for other in [locking_range(1, 4), shared] {
        let r = e.execute(reader, other);
        assert!(matches!(r, Err(Error::SessionState(..))), "{r:?}");
        // The place is forgotten with the error: the first read, asked
        // again, starts afresh.
        assert!(!e.read_goes_on(reader));
        assert_eq!(ids(done(e.execute(reader, locking_range(1, 5))?)), [1, 2]);
        assert!(e.read_goes_on(reader));
    }
    // Turning row-by-row mode off forgets the place too: another read then
    // reads its own range whole, from its start (row 3 is still locked).
    e.set_row_by_row(reader, false)?;
    assert!(!e.read_goes_on(reader));
    e.set_row_by_row(reader, true)?;
    assert_eq!(ids(done(e.execute(reader, locking_range(4, 5))?)), [4, 5]);
    done(e.execute(holder, Request::Commit)?);
    Ok(())
}
