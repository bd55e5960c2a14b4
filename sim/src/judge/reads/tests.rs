//! The read and write judge on small schemas: keys and unique indexes as
//! the schema says, collated keys, rows compared without building them,
//! READ UNCOMMITTED reads, phantoms in a locked range, and tables without
//! a primary key.

use super::*;

/// The fixed tables' schema.
fn fixed() -> Schema {
    use engine::RowFormat::Compact;
    Schema::of(&[
        crate::tables::sbtest("sb", Compact),
        crate::tables::docs("docs", Compact),
    ])
}

/// A composite primary key (b, a) and a unique index on c: the model
/// keys rows by (b, a), refuses a second row with c's value (NULLs
/// never collide), lets a row keep its own, and moves a row whose key
/// changes.
#[test]
fn composite_keys_and_unique_indexes_are_judged_by_the_schema() {
    use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};
    let col = |name: &str, nullable| ColumnDef {
        name: name.into(),
        ty: ColumnType::INT,
        nullable,
        collation: Default::default(),
    };
    let schema = Schema::of(&[TableDef {
        name: "t".into(),
        columns: vec![col("a", false), col("b", false), col("c", true)],
        primary_key: vec![1, 0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "c".into(),
            columns: vec![2],
            unique: true,
            prefixes: Vec::new(),
        }],
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }]);
    let v = |x: Option<i64>| x.map_or(Value::Null, Value::Int);
    let insert = |a, b, c| Request::Insert {
        table: "t".into(),
        row: vec![v(Some(a)), v(Some(b)), v(c)],
    };
    let db = Db::with_tables(["t"]);
    let (got, writes) = expected(&schema, &db, &[], &insert(1, 2, Some(7)), 0).expect("judged");
    assert_eq!(got, Ok(Response::Affected(1)));
    assert_eq!(writes[0].key, vec![ModelValue::Int(2), ModelValue::Int(1)]);
    let own = writes;
    let refused = |req: &Request| expected(&schema, &db, &own, req, 0).expect("judged").0;
    assert_eq!(refused(&insert(1, 2, None)), Err(1062), "the same key");
    assert_eq!(refused(&insert(5, 5, Some(7))), Err(1062), "c = 7 is taken");
    assert_eq!(refused(&insert(5, 5, None)), Ok(Response::Affected(1)));
    let (_, nulls) = expected(&schema, &db, &[], &insert(1, 1, None), 0).expect("judged");
    assert_eq!(
        expected(&schema, &db, &nulls, &insert(2, 2, None), 0)
            .expect("judged")
            .0,
        Ok(Response::Affected(1)),
        "NULLs never collide"
    );
    let update = |set: Vec<(&str, Value)>| Request::Update {
        table: "t".into(),
        key: vec![Value::Int(2), Value::Int(1)],
        set: set.into_iter().map(|(c, x)| (c.to_string(), x)).collect(),
    };
    assert_eq!(
        refused(&update(vec![("c", Value::Int(7))])),
        Ok(Response::Affected(0))
    );
    let (got, moved) =
        expected(&schema, &db, &own, &update(vec![("a", Value::Int(9))]), 0).expect("judged");
    assert_eq!(got, Ok(Response::Affected(1)));
    assert_eq!(moved.len(), 2, "a delete and an insert: {moved:?}");
    assert_eq!(moved[1].key, vec![ModelValue::Int(2), ModelValue::Int(9)]);
}

/// A latin1_swedish_ci primary key and unique index: the model takes
/// 'ab' and 'AB ' as one key, so the second insert is a duplicate, a
/// read by either finds the row with its own bytes, and a change of
/// the key's case moves the row (two writes, as the engine's delete and
/// insert) without colliding with itself.
#[test]
fn collated_keys_are_equal_in_their_collation() {
    use engine::record::Collation;
    use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};
    let col = |name: &str| ColumnDef {
        name: name.into(),
        ty: ColumnType::VarChar(8),
        nullable: false,
        collation: Collation::Latin1SwedishCi,
    };
    let schema = Schema::of(&[TableDef {
        name: "t".into(),
        columns: vec![col("p"), col("u")],
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
    }]);
    let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    let insert = |p: &str, u: &str| Request::Insert {
        table: "t".into(),
        row: vec![b(p), b(u)],
    };
    let db = Db::with_tables(["t"]);
    let (got, own) = expected(&schema, &db, &[], &insert("ab", "x"), 0).expect("judged");
    assert_eq!(got, Ok(Response::Affected(1)));
    let judged = |req: &Request| expected(&schema, &db, &own, req, 0).expect("judged");
    assert_eq!(
        judged(&insert("AB ", "y")).0,
        Err(1062),
        "the same primary key"
    );
    assert_eq!(
        judged(&insert("cd", "X")).0,
        Err(1062),
        "the same unique value"
    );
    assert_eq!(judged(&insert("cd", "xy")).0, Ok(Response::Affected(1)));
    let get = Request::Get {
        table: "t".into(),
        key: vec![b("aB")],
    };
    let rows = read_expected(&schema, &db, &own, &get).expect("judged");
    assert_eq!(
        rows,
        vec![vec![
            ModelValue::Bytes(b"ab"[..].into()),
            ModelValue::Bytes(b"x"[..].into()),
        ]]
    );
    let update = |p: &str| Request::Update {
        table: "t".into(),
        key: vec![b("ab")],
        set: vec![("p".into(), b(p))],
    };
    let (got, moved) = judged(&update("AB"));
    assert_eq!(got, Ok(Response::Affected(1)));
    assert_eq!(moved.len(), 2, "a delete and an insert: {moved:?}");
    assert_eq!(
        judged(&update("ab")).0,
        Ok(Response::Affected(0)),
        "no change"
    );
}

/// The allocation-free comparison agrees with converting the response
/// to model rows and comparing those.
#[test]
fn rows_match_agrees_with_model_rows() {
    let row = |id: u64, v: i64, doc: Option<&[u8]>| {
        vec![
            Value::UInt(id),
            Value::Int(v),
            doc.map_or(Value::Null, |d| Value::Bytes(d.to_vec())),
        ]
    };
    let responses = [
        Response::Ok,
        Response::Affected(1),
        Response::Row(None),
        Response::Row(Some(row(1, -1, Some(b"x")))),
        Response::Rows(vec![]),
        Response::Rows(vec![row(1, -1, Some(b"x")), row(2, 2, None)]),
        Response::Rows(vec![row(1, -1, Some(b"y")), row(2, 2, None)]),
        Response::Rows(vec![row(1, -1, Some(b"x"))]),
        Response::Rows(vec![row(1, 7, Some(b"x")), row(2, 2, None)]),
        Response::Rows(vec![row(1, -1, None), row(2, 2, None)]),
    ];
    for a in &responses {
        for b in &responses {
            let want = model_rows(b);
            assert_eq!(
                rows_match(a, &want, false),
                model_rows(a) == want,
                "{a:?} against {b:?}"
            );
        }
    }
}

/// READ UNCOMMITTED may see the committed row or an open transaction's
/// write, and nothing else: not a value never written, not a write a
/// rollback undid.
#[test]
fn uncommitted_reads_see_committed_or_open_writes_only() {
    let row = |k: i64| vec![Value::UInt(1), Value::Int(k), Value::Null];
    let model = |k: i64| -> Row { row(k).iter().map(to_model).collect() };
    let mut committed = Db::with_tables(["docs"]);
    committed
        .table_mut("docs")
        .insert(vec![ModelValue::Int(1)], model(10));
    let open = [Write {
        table: "docs".into(),
        key: vec![ModelValue::Int(1)],
        row: Some(model(11)),
    }];
    let get = Request::Get {
        table: "docs".into(),
        key: vec![Value::Int(1)],
    };
    let judge = |open: &[&[Write]], k: i64| {
        judge_uncommitted(
            &fixed(),
            &committed,
            open,
            &get,
            &Response::Row(Some(row(k))),
        )
    };
    assert_eq!(judge(&[&open], 10), None, "the committed row");
    assert_eq!(judge(&[&open], 11), None, "an open transaction's write");
    assert!(judge(&[&open], 12).is_some(), "a value never written");
    assert!(judge(&[], 11).is_some(), "a write whose rollback finished");
}

/// Where two locking reads of one transaction overlap, the later sees
/// what the earlier saw there, changed only by the transaction's own
/// writes; past the earlier range's locks, anything goes.
#[test]
fn a_phantom_inside_a_locked_range_is_reported_and_nothing_else() {
    let row = |id: u64| vec![Value::UInt(id), Value::Int(0), Value::Null];
    let scan = |from: u64, limit: usize| Request::Scan {
        table: "docs".into(),
        index: None,
        low: RangeBound::Included(vec![Value::UInt(from)]),
        high: RangeBound::Unbounded,
        reverse: false,
        limit: Some(limit),
    };
    let rows = |ids: &[u64]| model_rows(&Response::Rows(ids.iter().map(|&i| row(i)).collect()));
    // Locked [10, 30] (the LIMIT was reached at 30).
    let earlier = locked_range(&fixed(), &scan(10, 2), rows(&[10, 30]), 0).expect("a range");
    // 20 appeared inside: a phantom.
    let now = locked_range(&fixed(), &scan(10, 3), rows(&[10, 20, 30]), 0).expect("a range");
    assert!(phantom(&fixed(), &earlier, &now, &[]).is_some());
    // 40 lies past the earlier range: not a phantom.
    let now = locked_range(&fixed(), &scan(10, 3), rows(&[10, 30, 40]), 0).expect("a range");
    assert_eq!(phantom(&fixed(), &earlier, &now, &[]), None);
    // The transaction's own insert of 20 is no phantom.
    let own = [Write {
        table: "docs".into(),
        key: vec![ModelValue::Int(20)],
        row: Some(row(20).iter().map(to_model).collect()),
    }];
    let now = locked_range(&fixed(), &scan(10, 3), rows(&[10, 20, 30]), 1).expect("a range");
    assert_eq!(phantom(&fixed(), &earlier, &now, &own), None);
}

/// A table without a primary key: the model numbers its inserts, an
/// engine row (without the hidden key) matches the model's row but for
/// that number, and READ UNCOMMITTED scans must run through the
/// committed and open rows in the model's order.
#[test]
fn rows_of_a_table_without_a_primary_key_are_judged_by_their_order() {
    use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};
    let schema = Schema::of(&[TableDef {
        name: "h".into(),
        columns: vec![ColumnDef {
            name: "a".into(),
            ty: ColumnType::INT,
            nullable: false,
            collation: Default::default(),
        }],
        primary_key: vec![],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "a".into(),
            columns: vec![0],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }]);
    let t = schema.table("h").expect("there");
    assert!(t.hidden);
    let insert = |a: i64| Request::Insert {
        table: "h".into(),
        row: vec![Value::Int(a)],
    };
    let db = Db::with_tables(["h"]);
    let (got, w7) = expected(&schema, &db, &[], &insert(5), 7).expect("judged");
    assert_eq!(got, Ok(Response::Affected(1)));
    assert_eq!(w7[0].key, vec![ModelValue::Int(7)]);
    assert_eq!(
        w7[0].row,
        Some(vec![ModelValue::Int(5), ModelValue::Int(7)])
    );
    // The same values again are another row, not a duplicate.
    let (got, w8) = expected(&schema, &db, &w7, &insert(5), 8).expect("judged");
    assert_eq!(got, Ok(Response::Affected(1)));
    let (_, w9) = expected(&schema, &db, &[], &insert(3), 9).expect("judged");
    // Engine rows come without the number.
    let resp = Response::Rows(vec![vec![Value::Int(5)], vec![Value::Int(5)]]);
    let want: Vec<Row> = [&w7, &w8]
        .iter()
        .map(|w| w[0].row.clone().expect("a row"))
        .collect();
    assert!(rows_match(&resp, &want, true));
    assert!(!rows_match(&resp, &want, false));
    assert!(!rows_match(&resp, &want[..1], true));
    // READ UNCOMMITTED on the index a: committed 5 (#7), open 5 (#8)
    // and 3 (#9), in the order (a, number): 3, 5, 5.
    let mut committed = db.clone();
    models::recovery::apply(&mut committed, &models::TxnEffects { writes: w7 });
    let open: Vec<Write> = w8.into_iter().chain(w9).collect();
    let scan = |reverse| Request::Scan {
        table: "h".into(),
        index: Some("a".into()),
        low: RangeBound::Unbounded,
        high: RangeBound::Unbounded,
        reverse,
        limit: None,
    };
    let judge = |open: &[&[Write]], reverse, vals: &[i64]| {
        let rows = Response::Rows(vals.iter().map(|&a| vec![Value::Int(a)]).collect());
        judge_uncommitted(&schema, &committed, open, &scan(reverse), &rows)
    };
    assert_eq!(judge(&[&open], false, &[3, 5, 5]), None);
    assert_eq!(judge(&[&open], false, &[5]), None, "a run through them");
    assert_eq!(judge(&[&open], true, &[5, 5, 3]), None);
    assert!(judge(&[&open], false, &[5, 3]).is_some(), "out of order");
    assert!(
        judge(&[&open], false, &[3, 5, 5, 5]).is_some(),
        "a row too many"
    );
    assert!(judge(&[], false, &[3, 5]).is_some(), "a rolled-back insert");
    assert!(judge(&[&open], false, &[4]).is_some(), "never written");
}
