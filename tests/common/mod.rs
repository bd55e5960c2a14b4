//! Helpers shared by the integration tests.

#![allow(dead_code)]

pub mod serve;

use engine::{Engine, RangeBound, Request, Response, Step, Value};
use models::{Db, ModelValue, Row};

/// The result of a step that must not wait.
pub fn done(step: Step) -> Response {
    match step {
        Step::Done(r) => r,
        Step::Waiting => panic!("unexpected lock wait"),
    }
}

#[allow(unused_imports)] // not every test binary uses both
pub use sim::tables::{docs, sbtest};

/// A row of an `sbtest` table: `(id, k, 'c<id>', 'pad')`.
pub fn sb_row(id: u64, k: u64) -> Vec<Value> {
    vec![
        Value::UInt(id),
        Value::UInt(k),
        Value::Bytes(format!("c{id}").into_bytes()),
        Value::Bytes(b"pad".to_vec()),
    ]
}

/// An engine value as a model value.
pub fn to_model(v: &Value) -> ModelValue {
    match v {
        Value::Null => ModelValue::Null,
        Value::Int(i) => ModelValue::Int(*i as i128),
        Value::UInt(u) => ModelValue::Int(*u as i128),
        Value::Bytes(b) => ModelValue::Bytes(b.as_slice().into()),
    }
}

/// An engine row as a model row.
pub fn row_to_model(r: &[Value]) -> Row {
    r.iter().map(to_model).collect()
}

/// Reads every table (in a fresh session, a consistent read) into a model
/// state keyed by primary key columns.
pub fn read_db(e: &mut Engine, tables: &[&str]) -> engine::Result<Db> {
    let s = e.session();
    let mut db = Db::default();
    for &name in tables {
        let pk = e.table(name)?.def.primary_key.clone();
        let Response::Rows(rows) = done(e.execute(
            s,
            Request::Scan {
                table: name.into(),
                index: None,
                low: RangeBound::Unbounded,
                high: RangeBound::Unbounded,
                reverse: false,
                limit: None,
            },
        )?) else {
            panic!("scan returns rows")
        };
        let t = db.table_mut(name);
        for r in rows {
            let key: Vec<ModelValue> = pk.iter().map(|&c| to_model(&r[c])).collect();
            t.insert(key, row_to_model(&r));
        }
    }
    e.close_session(s)?;
    Ok(db)
}
