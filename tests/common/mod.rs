//! Helpers shared by the integration tests.

#![allow(dead_code)]

use engine::{
    ColumnDef, ColumnType, Engine, IndexDef, RangeBound, Request, Response, RowFormat, Step,
    TableDef, Value,
};
use models::{Db, ModelValue, Row};

/// The result of a step that must not wait.
pub fn done(step: Step) -> Response {
    match step {
        Step::Done(r) => r,
        Step::Waiting => panic!("unexpected lock wait"),
    }
}

/// sysbench's table: id INT UNSIGNED primary key, k INT UNSIGNED with a
/// secondary index, c CHAR(120), pad CHAR(60).
pub fn sbtest(name: &str, fmt: RowFormat) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::INT_UNSIGNED,
                nullable: false,
            },
            ColumnDef {
                name: "k".into(),
                ty: ColumnType::INT_UNSIGNED,
                nullable: false,
            },
            ColumnDef {
                name: "c".into(),
                ty: ColumnType::Char(120),
                nullable: false,
            },
            ColumnDef {
                name: "pad".into(),
                ty: ColumnType::Char(60),
                nullable: false,
            },
        ],
        primary_key: vec![0],
        indexes: vec![IndexDef {
            name: "k".into(),
            columns: vec![1],
            unique: false,
        }],
        row_format: fmt,
    }
}

/// A table with a long column: id BIGINT primary key, v VARCHAR(40) NULL
/// with a secondary index, doc MEDIUMTEXT NULL.
pub fn docs(name: &str, fmt: RowFormat) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::BIGINT,
                nullable: false,
            },
            ColumnDef {
                name: "v".into(),
                ty: ColumnType::VarChar(40),
                nullable: true,
            },
            ColumnDef {
                name: "doc".into(),
                ty: ColumnType::MEDIUMTEXT,
                nullable: true,
            },
        ],
        primary_key: vec![0],
        indexes: vec![IndexDef {
            name: "v".into(),
            columns: vec![1],
            unique: false,
        }],
        row_format: fmt,
    }
}

/// An engine value as a model value.
pub fn to_model(v: &Value) -> ModelValue {
    match v {
        Value::Null => ModelValue::Null,
        Value::Int(i) => ModelValue::Int(*i as i128),
        Value::UInt(u) => ModelValue::Int(*u as i128),
        Value::Bytes(b) => ModelValue::Bytes(b.clone()),
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
        let t = db.tables.entry(name.to_string()).or_default();
        for r in rows {
            let key: Vec<ModelValue> = pk.iter().map(|&c| to_model(&r[c])).collect();
            t.insert(key, row_to_model(&r));
        }
    }
    e.close_session(s)?;
    Ok(db)
}
