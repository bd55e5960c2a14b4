//! The crash tests' workloads and their model: transactions as engine
//! requests, and the commit history the recovery oracle judges by, derived
//! from the requests alone (never from what the engine answered).

use crate::common::{docs, row_to_model, sbtest, to_model};
use engine::{Request, RowFormat, Value};
use models::{CommitHistory, Db, ModelValue, TxnEffects, Write};

/// The tables the workload uses: `a` is sysbench's table (secondary index
/// on `k`), `b` has a secondary index on `v` and a long column that goes to
/// overflow pages.
pub const TABLES: [&str; 2] = ["a", "b"];

/// Simulated time between transactions: with the once-a-second background
/// round (log flush and sync, page cleaner, purge), a few rounds run inside
/// the workload.
pub const TXN_GAP_US: u64 = 300_000;
/// Simulated time between statements of one transaction, so that a round
/// also lands between them and writes redo of a transaction still open.
pub const STATEMENT_GAP_US: u64 = 120_000;

// ---------------------------------------------------------------------------
// The workload and its model.

/// One transaction of the workload.
#[derive(Debug, Clone)]
pub enum Txn {
    /// BEGIN, the statements, COMMIT.
    Commit(Vec<Request>),
    /// BEGIN, the statements, ROLLBACK: no effect may survive.
    Rollback(Vec<Request>),
    /// One statement in autocommit mode: the statement is the commit.
    Auto(Request),
}

pub fn a_row(id: u64, k: u64) -> Vec<Value> {
    vec![
        Value::UInt(id),
        Value::UInt(k),
        Value::Bytes(format!("c-{id}").into_bytes()),
        Value::Bytes(b"pad".to_vec()),
    ]
}

/// A document of `len` bytes whose every byte depends on `seed` and its
/// position, so a torn or stale overflow page cannot read back equal.
pub fn doc(len: usize, seed: u8) -> Value {
    Value::Bytes(
        (0..len)
            .map(|i| b'a' + ((i / 7 + seed as usize) % 26) as u8)
            .collect(),
    )
}

pub fn b_row(id: i64, v: &str, doc_len: usize, seed: u8) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Bytes(v.as_bytes().to_vec()),
        doc(doc_len, seed),
    ]
}

pub fn insert(table: &str, row: Vec<Value>) -> Request {
    Request::Insert {
        table: table.into(),
        row,
    }
}

pub fn update(table: &str, key: Value, column: &str, value: Value) -> Request {
    Request::Update {
        table: table.into(),
        key: vec![key],
        set: vec![(column.into(), value)],
    }
}

pub fn delete(table: &str, key: Value) -> Request {
    Request::Delete {
        table: table.into(),
        key: vec![key],
    }
}

/// A few transactions across both tables: inserts, updates of indexed and
/// long columns, deletes, a delete and re-insert of one key, a rollback,
/// and autocommit statements.
pub fn workload() -> Vec<Txn> {
    use Value::{Int, UInt};
    let mut t1: Vec<Request> = (1..=8).map(|id| insert("a", a_row(id, id % 3))).collect();
    t1.extend((1..=3).map(|id| insert("b", b_row(id, &format!("v{id}"), 100, id as u8))));
    vec![
        Txn::Commit(t1),
        Txn::Commit(vec![
            update("a", UInt(2), "k", UInt(7)),
            delete("a", UInt(3)),
            update("b", Int(1), "v", Value::Bytes(b"w1".to_vec())),
        ]),
        Txn::Rollback(vec![
            insert("a", a_row(100, 1)),
            update("a", UInt(1), "k", UInt(9)),
            delete("b", Int(2)),
            update("b", Int(3), "doc", doc(20_000, 9)),
        ]),
        Txn::Auto(insert("b", b_row(4, "v4", 20_000, 4))),
        Txn::Commit({
            let mut t: Vec<Request> = (9..=16).map(|id| insert("a", a_row(id, id % 4))).collect();
            t.push(delete("b", Int(3)));
            t.push(update("a", UInt(4), "c", Value::Bytes(b"changed".to_vec())));
            t
        }),
        Txn::Auto(update("a", UInt(5), "k", UInt(1))),
        Txn::Commit(vec![
            delete("a", UInt(1)),
            insert("a", a_row(3, 5)),
            update("b", Int(4), "doc", doc(18_000, 11)),
        ]),
        Txn::Auto(delete("a", UInt(6))),
    ]
}

/// Enough rows to split leaf pages of both indexes of `a` (and to undo
/// splits in a rollback), many secondary-index changes, deletes that purge
/// later removes, and several overflow chains: the tree-changing paths a
/// crash may cut in half.
pub fn splitting_workload() -> Vec<Txn> {
    use Value::{Int, UInt};
    let a = |range: std::ops::RangeInclusive<u64>| -> Vec<Request> {
        range.map(|id| insert("a", a_row(id, id % 7))).collect()
    };
    vec![
        Txn::Commit(a(1..=120)),
        Txn::Rollback(a(200..=290)),
        Txn::Commit(
            (1..=40)
                .map(|id| update("a", UInt(id * 3), "k", UInt(1000 + id)))
                .collect(),
        ),
        Txn::Auto(insert("b", b_row(1, "v1", 20_000, 1))),
        Txn::Commit(
            (1..=3)
                .map(|id| {
                    insert(
                        "b",
                        b_row(id + 1, &format!("v{}", id + 1), 17_000, id as u8 + 1),
                    )
                })
                .collect(),
        ),
        Txn::Commit((1..=60).map(|id| delete("a", UInt(id * 2))).collect()),
        Txn::Auto(update("b", Int(2), "doc", doc(30_000, 7))),
        Txn::Commit(a(121..=180)),
        Txn::Auto(delete("b", Int(3))),
    ]
}

/// The model's primary key and row for an engine row of `table`.
pub fn model_key(table: &str, row: &[ModelValue]) -> Vec<ModelValue> {
    debug_assert!(TABLES.contains(&table));
    // Both tables are keyed by their first column.
    vec![row[0].clone()]
}

/// The column names of a table, in order, for applying updates.
pub fn column_names(table: &str) -> Vec<String> {
    let def = if table == "a" {
        sbtest("a", RowFormat::Compact)
    } else {
        docs("b", RowFormat::Compact)
    };
    def.columns.iter().map(|c| c.name.clone()).collect()
}

/// What one statement does to the model state `db` (which it updates), as
/// a write.
pub fn statement_effect(db: &mut Db, request: &Request) -> Write {
    let write = match request {
        Request::Insert { table, row } => {
            let row: Vec<ModelValue> = row_to_model(row);
            Write {
                table: table.clone(),
                key: model_key(table, &row),
                row: Some(row),
            }
        }
        Request::Update { table, key, set } => {
            let key: Vec<ModelValue> = key.iter().map(to_model).collect();
            let mut row = db.tables[table].get(&key).cloned().unwrap_or_else(|| {
                panic!("the workload updates {table} {key:?}, which the model does not hold")
            });
            let names = column_names(table);
            for (column, value) in set {
                let c = names
                    .iter()
                    .position(|n| n == column)
                    .expect("the workload names real columns");
                row[c] = to_model(value);
            }
            Write {
                table: table.clone(),
                key,
                row: Some(row),
            }
        }
        Request::Delete { table, key } => {
            let key: Vec<ModelValue> = key.iter().map(to_model).collect();
            assert!(
                db.tables[table].contains_key(&key),
                "the workload deletes {table} {key:?}, which the model does not hold"
            );
            Write {
                table: table.clone(),
                key,
                row: None,
            }
        }
        other => panic!("not a row change: {other:?}"),
    };
    models::recovery::apply(
        db,
        &TxnEffects {
            writes: vec![write.clone()],
        },
    );
    write
}

/// The committed transactions of the workload, in commit order.
pub fn history(workload: &[Txn]) -> CommitHistory {
    let mut history = CommitHistory::new(Db::with_tables(TABLES));
    let mut db = history.current();
    for txn in workload {
        let mut scratch = db.clone();
        let writes: Vec<Write> = match txn {
            Txn::Commit(stmts) => stmts
                .iter()
                .map(|r| statement_effect(&mut scratch, r))
                .collect(),
            Txn::Auto(r) => vec![statement_effect(&mut scratch, r)],
            Txn::Rollback(stmts) => {
                // Checked against the model all the same, then forgotten.
                stmts
                    .iter()
                    .for_each(|r| drop(statement_effect(&mut scratch, r)));
                continue;
            }
        };
        history.commit(TxnEffects { writes });
        db = scratch;
    }
    history
}
