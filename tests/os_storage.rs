//! The engine on a real directory (`OsStorage` in a temporary directory):
//! a clean close and reopen, and a kill (drop without close) followed by
//! recovery, both give the state the model says.

mod common;

use common::{docs, done, read_db, row_to_model, sbtest, to_model};
use engine::io::{ManualClock, OsStorage};
use engine::{Config, Engine, Request, Result, RowFormat, Value};
use models::{CommitHistory, Db, RecoveryVerdict, TxnEffects, Write};
use std::sync::Arc;

fn open(dir: &std::path::Path) -> Result<Engine> {
    let storage = OsStorage::new(dir).map_err(|e| engine::Error::io("open", "dir", e))?;
    let cfg = Config {
        buffer_pool_pages: 32,
        ..Config::default()
    };
    Ok(Engine::open(
        Box::new(storage),
        Box::new(Arc::new(ManualClock::new())),
        cfg,
    )?
    .0)
}

fn sb_row(id: u64, k: u64) -> Vec<Value> {
    vec![
        Value::UInt(id),
        Value::UInt(k),
        Value::Bytes(format!("c-{id}-{k}").into_bytes()),
        Value::Bytes(b"pad".to_vec()),
    ]
}

/// Runs `n` transactions of a few statements over both tables, recording
/// the committed ones in `history`. Every fifth transaction rolls back.
fn workload(e: &mut Engine, history: &mut CommitHistory, base: u64, n: u64) -> Result<()> {
    let s = e.session();
    for t in 0..n {
        let id = base + t;
        done(e.execute(s, Request::Begin)?);
        let mut fx = TxnEffects::default();
        let r = sb_row(id, id % 7);
        done(e.execute(
            s,
            Request::Insert {
                table: "sb".into(),
                row: r.clone(),
            },
        )?);
        fx.writes.push(Write {
            table: "sb".into(),
            key: vec![to_model(&r[0])],
            row: Some(row_to_model(&r)),
        });
        let d = vec![
            Value::Int(id as i64),
            Value::Bytes(format!("v{}", id % 3).into_bytes()),
            Value::Bytes(vec![b'z'; (id as usize * 997) % 30_000]),
        ];
        done(e.execute(
            s,
            Request::Insert {
                table: "docs".into(),
                row: d.clone(),
            },
        )?);
        fx.writes.push(Write {
            table: "docs".into(),
            key: vec![to_model(&d[0])],
            row: Some(row_to_model(&d)),
        });
        if t > 0 && (t - 1) % 5 != 4 {
            let prev = id - 1;
            let r = sb_row(prev, 1000 + id);
            let resp = done(e.execute(
                s,
                Request::Update {
                    table: "sb".into(),
                    key: vec![Value::UInt(prev)],
                    set: vec![
                        ("k".into(), Value::UInt(1000 + id)),
                        ("c".into(), r[2].clone()),
                    ],
                },
            )?);
            assert_eq!(resp, engine::Response::Affected(1));
            fx.writes.push(Write {
                table: "sb".into(),
                key: vec![to_model(&r[0])],
                row: Some(row_to_model(&r)),
            });
        }
        if t % 5 == 4 {
            done(e.execute(s, Request::Rollback)?);
        } else {
            done(e.execute(s, Request::Commit)?);
            history.commit(fx);
        }
    }
    e.close_session(s)
}

#[test]
fn clean_close_and_kill_on_a_real_directory() -> Result<()> {
    let dir = tempfile::tempdir().map_err(|e| engine::Error::io("tempdir", "tmp", e))?;
    let mut e = open(dir.path())?;
    e.create_table(sbtest("sb", RowFormat::Compact))?;
    e.create_table(docs("docs", RowFormat::Dynamic))?;
    let mut history = CommitHistory::new(Db::with_tables(["sb", "docs"]));
    workload(&mut e, &mut history, 1, 40)?;
    e.close()?;

    let mut e = open(dir.path())?;
    let db = read_db(&mut e, &["sb", "docs"])?;
    let v = history.judge(&db, history.len(), history.len());
    assert_eq!(
        v,
        RecoveryVerdict::Prefix(history.len()),
        "after a clean close"
    );
    workload(&mut e, &mut history, 100, 40)?;
    // An open transaction at the kill must vanish.
    let s = e.session();
    done(e.execute(s, Request::Begin)?);
    done(e.execute(
        s,
        Request::Delete {
            table: "sb".into(),
            key: vec![Value::UInt(1)],
        },
    )?);
    let s2 = e.session();
    done(e.execute(
        s2,
        Request::Insert {
            table: "sb".into(),
            row: sb_row(9999, 1),
        },
    )?);
    history.commit(TxnEffects {
        writes: vec![Write {
            table: "sb".into(),
            key: vec![to_model(&Value::UInt(9999))],
            row: Some(row_to_model(&sb_row(9999, 1))),
        }],
    });
    drop(e); // a kill: no close, no flush of the buffer pool

    let dir_files: Vec<_> = std::fs::read_dir(dir.path())
        .map_err(|e| engine::Error::io("list", "tmp", e))?
        .filter_map(|f| f.ok())
        .map(|f| f.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        dir_files.iter().any(|f| f == "sb.ibd") && dir_files.iter().any(|f| f == "ib_logfile0")
    );
    let (mut e, report) = {
        let storage =
            OsStorage::new(dir.path()).map_err(|e| engine::Error::io("open", "dir", e))?;
        Engine::open(
            Box::new(storage),
            Box::new(Arc::new(ManualClock::new())),
            Config {
                buffer_pool_pages: 32,
                ..Config::default()
            },
        )?
    };
    assert_eq!(
        report.rolled_back.len(),
        1,
        "the open transaction is rolled back: {report:?}"
    );
    let db = read_db(&mut e, &["sb", "docs"])?;
    assert_eq!(
        history.judge(&db, history.len(), history.len()),
        RecoveryVerdict::Prefix(history.len())
    );
    for t in ["sb", "docs"] {
        let c = e.check_table(t)?;
        assert!(c.is_ok(), "{t}: {:?}", c.problems);
    }
    e.close()?;
    Ok(())
}
