//! UPDATE and DELETE on a table without a primary key, which InnoDB
//! clusters on its hidden DB_ROW_ID. Rows may repeat exactly, so nothing
//! in a row names it: a read reports each row's id beside it
//! ([`Engine::row_refs`], MySQL's handler reference) and a change names
//! the row by that id. The engine's ids are used only as addresses; what
//! is judged is which rows the table holds, in which order.
//!
//! The model is a list of the live rows in insertion order: row ids rise
//! with each insert and a change keeps a row's id, so a scan of the
//! clustered index must return the rows in that order. Random sequences
//! of inserts, updates and deletes of the k-th row (some of the indexed
//! column, some making rows equal), commits, rollbacks, purges, clean
//! restarts and crashes (each kind) run against the engine and the model
//! in lockstep: after every step the writer's scan and the secondary
//! index's scan must equal the model's current rows, a fresh session must
//! see the committed ones, an older REPEATABLE READ view its snapshot
//! (through the secondary index, so purge must keep what it needs), and
//! after every restart CHECK TABLE must pass.

use engine::{
    ColumnDef, ColumnType, Config, Engine, FlushAtCommit, IndexDef, RangeBound, Request, Response,
    RowFormat, SessionId, Step, TableDef, Value,
};
use proptest::prelude::*;
use sim::clock::SimClock;
use sim::storage::{CrashMode, PowerLossPolicy, SimStorage};

/// A row: the indexed `a` (nullable) and `b`.
type Row = (Option<i64>, Vec<u8>);

fn def(row_format: RowFormat) -> TableDef {
    TableDef {
        name: "t".into(),
        columns: vec![
            ColumnDef {
                name: "a".into(),
                ty: ColumnType::Int { unsigned: false },
                nullable: true,
                collation: Default::default(),
            },
            ColumnDef {
                name: "b".into(),
                ty: ColumnType::VarChar(30),
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: Vec::new(),
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "ka".into(),
            columns: vec![0],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Option<i64>, u8),
    /// Sets `a` of the k-th live row (k modulo their number).
    SetA(usize, Option<i64>),
    /// Sets `b` of the k-th live row.
    SetB(usize, u8),
    Delete(usize),
    Commit,
    Rollback,
    Purge,
    /// A REPEATABLE READ reader takes its snapshot (of the committed rows)
    /// and keeps it until the next restart.
    View,
    Restart,
    Crash(bool),
}

fn op() -> impl Strategy<Value = Op> {
    let a = prop_oneof![3 => (0i64..4).prop_map(Some), 1 => Just(None)];
    prop_oneof![
        6 => (a.clone(), 0u8..3).prop_map(|(a, b)| Op::Insert(a, b)),
        3 => (any::<usize>(), a).prop_map(|(k, a)| Op::SetA(k, a)),
        3 => (any::<usize>(), 0u8..3).prop_map(|(k, b)| Op::SetB(k, b)),
        3 => any::<usize>().prop_map(Op::Delete),
        2 => Just(Op::Commit),
        1 => Just(Op::Rollback),
        1 => Just(Op::Purge),
        1 => Just(Op::View),
        1 => Just(Op::Restart),
        1 => any::<bool>().prop_map(Op::Crash),
    ]
}

fn b_value(b: u8) -> Vec<u8> {
    // Repeats often, so rows become exactly equal; one long value.
    match b {
        0 => b"same".to_vec(),
        1 => b"other".to_vec(),
        _ => b"a longer value of thirty bytes".to_vec(),
    }
}

fn open(storage: &SimStorage, clock: &SimClock) -> Engine {
    let config = Config {
        buffer_pool_pages: 48,
        flush_at_commit: FlushAtCommit::Sync,
        ..Config::default()
    };
    Engine::open(Box::new(storage.clone()), Box::new(clock.clone()), config)
        .expect("the engine opens")
        .0
}

fn run(e: &mut Engine, s: SessionId, r: Request) -> Response {
    match e.execute(s, r).expect("the request succeeds") {
        Step::Done(resp) => resp,
        Step::Waiting => panic!("one writer never waits"),
    }
}

fn value_a(a: Option<i64>) -> Value {
    a.map_or(Value::Null, Value::Int)
}

fn to_row(r: &[Value]) -> Row {
    let a = match &r[0] {
        Value::Null => None,
        Value::Int(i) => Some(*i),
        other => panic!("a is {other:?}"),
    };
    let Value::Bytes(b) = &r[1] else {
        panic!("b is {:?}", r[1])
    };
    (a, b.clone())
}

/// The rows `s` reads through `index`, with their row ids.
fn scan(e: &mut Engine, s: SessionId, index: Option<&str>) -> Vec<(Row, u64)> {
    let resp = run(
        e,
        s,
        Request::Scan {
            table: "t".into(),
            index: index.map(str::to_string),
            low: RangeBound::Unbounded,
            high: RangeBound::Unbounded,
            reverse: false,
            limit: None,
        },
    );
    let Response::Rows(rows) = resp else {
        panic!("a scan gives rows: {resp:?}")
    };
    let refs = e.row_refs(s).to_vec();
    assert_eq!(refs.len(), rows.len(), "one row id per row");
    rows.iter().map(|r| to_row(r)).zip(refs).collect()
}

/// The model's rows in the secondary index's order: by `a` (NULL first),
/// then by row id, which is insertion order.
fn by_a(rows: &[Row]) -> Vec<Row> {
    let mut v: Vec<(usize, Row)> = rows.iter().cloned().enumerate().collect();
    v.sort_by_key(|x| (x.1 .0, x.0));
    v.into_iter().map(|(_, r)| r).collect()
}

fn rows_of(v: &[(Row, u64)]) -> Vec<Row> {
    v.iter().map(|(r, _)| r.clone()).collect()
}

fn run_case(ops: &[Op], row_format: RowFormat) {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let mut e = open(&storage, &clock);
    e.create_table(def(row_format)).expect("created");
    let mut w = e.session();
    run(&mut e, w, Request::Begin);
    let mut committed: Vec<Row> = Vec::new();
    let mut current: Vec<Row> = Vec::new();
    // The reader's session and the committed rows its snapshot holds.
    let mut view: Option<(SessionId, Vec<Row>)> = None;
    for op in ops {
        match op {
            Op::Insert(a, b) => {
                let row = vec![value_a(*a), Value::Bytes(b_value(*b))];
                let r = run(
                    &mut e,
                    w,
                    Request::Insert {
                        table: "t".into(),
                        row,
                    },
                );
                assert_eq!(r, Response::Affected(1));
                current.push((*a, b_value(*b)));
            }
            Op::SetA(k, _) | Op::SetB(k, _) | Op::Delete(k) => {
                if current.is_empty() {
                    continue;
                }
                let k = k % current.len();
                let rows = scan(&mut e, w, None);
                let id = rows[k].1;
                let (req, want) = match op {
                    Op::Delete(_) => {
                        current.remove(k);
                        (
                            Request::Delete {
                                table: "t".into(),
                                key: vec![Value::UInt(id)],
                            },
                            1,
                        )
                    }
                    Op::SetA(_, a) => {
                        let changed = current[k].0 != *a;
                        current[k].0 = *a;
                        (
                            Request::Update {
                                table: "t".into(),
                                key: vec![Value::UInt(id)],
                                set: vec![("a".into(), value_a(*a))],
                            },
                            u64::from(changed),
                        )
                    }
                    Op::SetB(_, b) => {
                        let changed = current[k].1 != b_value(*b);
                        current[k].1 = b_value(*b);
                        (
                            Request::Update {
                                table: "t".into(),
                                key: vec![Value::UInt(id)],
                                set: vec![("b".into(), Value::Bytes(b_value(*b)))],
                            },
                            u64::from(changed),
                        )
                    }
                    _ => unreachable!(),
                };
                assert_eq!(run(&mut e, w, req), Response::Affected(want), "{op:?}");
            }
            Op::Commit => {
                run(&mut e, w, Request::Commit);
                committed = current.clone();
                run(&mut e, w, Request::Begin);
            }
            Op::Rollback => {
                run(&mut e, w, Request::Rollback);
                current = committed.clone();
                run(&mut e, w, Request::Begin);
            }
            Op::Purge => {
                e.purge_all().expect("purge");
            }
            Op::View => {
                if let Some((v, _)) = view.take() {
                    e.close_session(v).expect("closes");
                }
                let v = e.session();
                run(&mut e, v, Request::Begin);
                assert_eq!(rows_of(&scan(&mut e, v, None)), committed);
                view = Some((v, committed.clone()));
            }
            Op::Restart | Op::Crash(_) => {
                if let Op::Crash(power) = op {
                    storage.crash_now();
                    drop(e);
                    storage.restart(if *power {
                        CrashMode::PowerLoss(PowerLossPolicy::LoseAll)
                    } else {
                        CrashMode::ProcessCrash
                    });
                } else {
                    run(&mut e, w, Request::Rollback);
                    e.close().expect("closes");
                }
                current = committed.clone();
                view = None;
                e = open(&storage, &clock);
                let check = e.check_table("t").expect("CHECK TABLE runs");
                assert!(check.is_ok(), "after {op:?}: {:?}", check.problems);
                w = e.session();
                run(&mut e, w, Request::Begin);
            }
        }
        let mine = scan(&mut e, w, None);
        assert_eq!(rows_of(&mine), current, "the writer's rows after {op:?}");
        let ids: Vec<u64> = mine.iter().map(|(_, id)| *id).collect();
        assert!(ids.windows(2).all(|p| p[0] < p[1]), "row ids rise: {ids:?}");
        let via_index = scan(&mut e, w, Some("ka"));
        assert_eq!(
            rows_of(&via_index),
            by_a(&current),
            "through ka after {op:?}"
        );
        let r = e.session();
        let theirs = scan(&mut e, r, None);
        assert_eq!(rows_of(&theirs), committed, "a fresh session after {op:?}");
        e.close_session(r).expect("closes");
        if let Some((v, snapshot)) = &view {
            let seen = scan(&mut e, *v, Some("ka"));
            assert_eq!(rows_of(&seen), by_a(snapshot), "the old view after {op:?}");
        }
    }
    run(&mut e, w, Request::Commit);
    let check = e.check_table("t").expect("CHECK TABLE runs");
    assert!(check.is_ok(), "{:?}", check.problems);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn keyless_changes_match_the_model(
        ops in proptest::collection::vec(op(), 1..80),
        dynamic in any::<bool>(),
    ) {
        run_case(&ops, if dynamic { RowFormat::Dynamic } else { RowFormat::Compact });
    }
}

/// A row id that names no row changes nothing; one past 2^48 is refused.
#[test]
fn a_row_id_addresses_one_row_or_none() {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let mut e = open(&storage, &clock);
    e.create_table(def(RowFormat::Compact)).expect("created");
    let s = e.session();
    for _ in 0..3 {
        let row = vec![Value::Int(1), Value::Bytes(b"same".to_vec())];
        run(
            &mut e,
            s,
            Request::Insert {
                table: "t".into(),
                row,
            },
        );
    }
    let rows = scan(&mut e, s, None);
    assert_eq!(rows.len(), 3);
    let missing = rows.iter().map(|r| r.1).max().unwrap() + 100;
    let r = run(
        &mut e,
        s,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(missing)],
        },
    );
    assert_eq!(r, Response::Affected(0));
    let r = run(
        &mut e,
        s,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(rows[1].1)],
        },
    );
    assert_eq!(r, Response::Affected(1));
    let left: Vec<u64> = scan(&mut e, s, None).iter().map(|r| r.1).collect();
    assert_eq!(left, vec![rows[0].1, rows[2].1]);
    let too_big = e.execute(
        s,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(1 << 48)],
        },
    );
    assert!(
        matches!(too_big, Err(engine::Error::InvalidArgument(_))),
        "{too_big:?}"
    );
    let r = run(
        &mut e,
        s,
        Request::Get {
            table: "t".into(),
            key: vec![Value::UInt(rows[2].1)],
        },
    );
    assert_eq!(
        r,
        Response::Row(Some(vec![Value::Int(1), Value::Bytes(b"same".to_vec())]))
    );
    assert_eq!(e.row_refs(s), &[rows[2].1]);
}
