//! Long columns: off-page storage in COMPACT (768-byte prefix plus a
//! 20-byte pointer) and DYNAMIC (pointer only).

mod common;

use common::{docs, done};
use engine::io::{ManualClock, MemStorage};
use engine::{Config, Engine, Request, Response, Result, RowFormat, Value};
use std::sync::Arc;

fn doc(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 26) as u8
        })
        .collect()
}

fn open(storage: &MemStorage) -> Result<Engine> {
    let cfg = Config {
        buffer_pool_pages: 64,
        ..Config::default()
    };
    Ok(Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(ManualClock::new())),
        cfg,
    )?
    .0)
}

#[test]
fn a_100_kb_text_round_trips_in_every_row_format() -> Result<()> {
    for fmt in [
        RowFormat::Redundant,
        RowFormat::Compact,
        RowFormat::Dynamic,
        RowFormat::Compressed { key_block_size: 1 },
        RowFormat::Compressed { key_block_size: 8 },
    ] {
        let storage = MemStorage::new();
        let mut e = open(&storage)?;
        e.create_table(docs("d", fmt))?;
        let s = e.session();
        let big = doc(1, 100 * 1024);
        done(e.execute(
            s,
            Request::Insert {
                table: "d".into(),
                row: vec![
                    Value::Int(1),
                    Value::Bytes(b"x".to_vec()),
                    Value::Bytes(big.clone()),
                ],
            },
        )?);
        // Update another column: the chain is inherited, not copied.
        done(e.execute(
            s,
            Request::Update {
                table: "d".into(),
                key: vec![Value::Int(1)],
                set: vec![("v".into(), Value::Bytes(b"y".to_vec()))],
            },
        )?);
        e.close()?;
        let mut e = open(&storage)?;
        let s = e.session();
        let r = done(e.execute(
            s,
            Request::Get {
                table: "d".into(),
                key: vec![Value::Int(1)],
            },
        )?);
        assert_eq!(
            r,
            Response::Row(Some(vec![
                Value::Int(1),
                Value::Bytes(b"y".to_vec()),
                Value::Bytes(big.clone())
            ])),
            "{fmt:?}"
        );
        // Replace the long value, roll back, and the old one is still whole.
        done(e.execute(s, Request::Begin)?);
        done(e.execute(
            s,
            Request::Update {
                table: "d".into(),
                key: vec![Value::Int(1)],
                set: vec![("doc".into(), Value::Bytes(doc(2, 90_000)))],
            },
        )?);
        done(e.execute(s, Request::Rollback)?);
        let r = done(e.execute(
            s,
            Request::Get {
                table: "d".into(),
                key: vec![Value::Int(1)],
            },
        )?);
        assert_eq!(
            r,
            Response::Row(Some(vec![
                Value::Int(1),
                Value::Bytes(b"y".to_vec()),
                Value::Bytes(big.clone())
            ])),
            "{fmt:?}"
        );
        assert!(e.check_table("d")?.is_ok());
    }
    Ok(())
}

/// With long columns, DYNAMIC keeps only a 20-byte pointer in the record,
/// COMPACT a 768-byte prefix as well, so DYNAMIC fits many more rows on a
/// leaf page.
#[test]
fn dynamic_fits_more_rows_per_leaf_page_than_compact() -> Result<()> {
    let mut per_page = Vec::new();
    for fmt in [RowFormat::Compact, RowFormat::Dynamic] {
        let storage = MemStorage::new();
        let mut e = open(&storage)?;
        e.create_table(docs("d", fmt))?;
        let s = e.session();
        done(e.execute(s, Request::Begin)?);
        for i in 0..300 {
            done(e.execute(
                s,
                Request::Insert {
                    table: "d".into(),
                    row: vec![
                        Value::Int(i),
                        Value::Null,
                        Value::Bytes(doc(i as u64, 10_000)),
                    ],
                },
            )?);
        }
        done(e.execute(s, Request::Commit)?);
        let report = e.check_table("d")?;
        assert!(report.is_ok(), "{:?}", report.problems);
        let t = report.trees[0].1;
        let rows_per_leaf = t.records as f64 / t.leaf_pages as f64;
        eprintln!("{fmt:?}: 300 rows with a 10 KB column take {} leaf pages: {rows_per_leaf:.1} rows per leaf page", t.leaf_pages);
        per_page.push(rows_per_leaf);
    }
    assert!(
        per_page[1] > 5.0 * per_page[0],
        "DYNAMIC {} vs COMPACT {} rows per leaf page",
        per_page[1],
        per_page[0]
    );
    Ok(())
}
