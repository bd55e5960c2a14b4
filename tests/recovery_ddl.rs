//! Recovery replays DDL: a table dropped and created again under the same
//! name (so the same `.ibd` file name, under a new space id) between the
//! last checkpoint and a crash. The redo holds FILE_CREATE, FILE_DELETE and
//! FILE_CREATE for one file name; replaying them must leave the second
//! table's file and rows, whatever the crash kept.

mod common;

use common::{done, read_db, row_to_model, sb_row as row, sbtest, to_model};
use engine::io::ManualClock;
use engine::{Config, Engine, Request, Result, RowFormat};
use models::{Db, ModelValue};
use sim::storage::{CrashMode, PowerLossPolicy, SimStorage};
use std::sync::Arc;

fn open(storage: &SimStorage) -> Result<(Engine, engine::RecoveryReport)> {
    Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(ManualClock::new())),
        Config {
            buffer_pool_pages: 64,
            ..Config::default()
        },
    )
}

fn insert(e: &mut Engine, ids: impl Iterator<Item = u64>, k: u64) -> Result<()> {
    let s = e.session();
    for id in ids {
        done(e.execute(
            s,
            Request::Insert {
                table: "t".into(),
                row: row(id, k),
            },
        )?);
    }
    e.close_session(s)
}

/// Drops and recreates `t`, crashes the way `mode` says, and recovers: the
/// second table, with its rows, is what comes back.
fn drop_recreate_crash(mode: CrashMode) -> Result<()> {
    let storage = SimStorage::new();
    let (mut e, _) = open(&storage)?;
    e.create_table(sbtest("t", RowFormat::Compact))?;
    insert(&mut e, 1..=40, 1)?;
    e.ddl_now("t", |e, s| e.drop_table(s, "t"))?;
    e.create_table(sbtest("t", RowFormat::Dynamic))?;
    insert(&mut e, 100..=130, 2)?;
    storage.crash_now();
    drop(e);
    storage.restart(mode.clone());

    let (mut e, report) = open(&storage)?;
    // The checkpoint is still before the first CREATE, so all three file
    // operations were in the replayed log.
    assert!(
        report.mtrs_scanned > 0,
        "recovery scanned the log: {report:?}"
    );
    assert_eq!(e.table("t")?.def.row_format, RowFormat::Dynamic);
    let check = e.check_table("t")?;
    assert!(check.is_ok(), "{:?}", check.problems);
    let got = read_db(&mut e, &["t"])?;
    let mut want = Db::default();
    let t = want.table_mut("t");
    for id in 100..=130 {
        let r = row(id, 2);
        let key: Vec<ModelValue> = vec![to_model(&r[0])];
        t.insert(key, row_to_model(&r));
    }
    assert_eq!(
        got,
        want,
        "{}",
        got.diff_named("the recovered state", &want, "the expected state")
    );
    // What recovery left is in the files, not only in the log: after a
    // sharp checkpoint past every replayed record, a crash recovers it
    // from the files alone.
    e.checkpoint()?;
    storage.crash_now();
    drop(e);
    storage.restart(mode);
    let (mut e, _) = open(&storage)?;
    let again = read_db(&mut e, &["t"])?;
    assert_eq!(
        again,
        want,
        "{}",
        again.diff_named("the recovered state", &want, "the expected state")
    );
    Ok(())
}

#[test]
fn a_dropped_and_recreated_table_survives_a_process_crash() -> Result<()> {
    drop_recreate_crash(CrashMode::ProcessCrash)
}

#[test]
fn a_dropped_and_recreated_table_survives_a_power_loss() -> Result<()> {
    drop_recreate_crash(CrashMode::PowerLoss(PowerLossPolicy::LoseAll))
}

/// Creates `t` with the directory's changes durable only once synced (as
/// POSIX promises), fills it, takes a sharp checkpoint past its
/// FILE_CREATE record, and loses power: only a directory sync after the
/// create keeps the file's name. Returns what recovery said, and the I/O
/// operations of CREATE TABLE (from its first to the directory sync after
/// the file's creation).
fn create_checkpoint_power_loss(config: Config) -> (Result<Vec<u64>>, Vec<sim::storage::IoOp>) {
    use sim::storage::faults::FaultConfig;
    use sim::storage::IoOp;
    let storage = SimStorage::new();
    let opened = Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(ManualClock::new())),
        config.clone(),
    );
    let (mut e, _) = opened.expect("a new database opens");
    storage.set_faults(FaultConfig {
        lose_unsynced_namespace_ops: true,
        ..FaultConfig::default()
    });
    storage.set_tracing(true);
    storage.clear_trace();
    e.create_table(sbtest("t", RowFormat::Compact))
        .expect("CREATE TABLE");
    let ops: Vec<IoOp> = storage.trace().iter().map(|r| r.op).collect();
    let first_sync_dir = ops.iter().position(|&op| op == IoOp::SyncDir);
    let ops = ops[..first_sync_dir.map_or(ops.len(), |i| i + 1)].to_vec();
    insert(&mut e, 1..=20, 7).expect("inserts");
    e.checkpoint().expect("checkpoint");
    storage.crash_now();
    drop(e);
    storage.restart(CrashMode::PowerLoss(PowerLossPolicy::LoseAll));
    let recovered = Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(ManualClock::new())),
        config,
    )
    .and_then(|(mut e, _)| {
        let db = read_db(&mut e, &["t"])?;
        Ok(db.tables["t"]
            .keys()
            .map(|k| match k.as_slice() {
                [ModelValue::Int(id)] => *id as u64,
                other => panic!("key {other:?}"),
            })
            .collect())
    });
    (recovered, ops)
}

#[test]
fn a_created_table_survives_a_power_loss_that_drops_unsynced_names() {
    let config = Config {
        buffer_pool_pages: 64,
        ..Config::default()
    };
    let (recovered, ops) = create_checkpoint_power_loss(config);
    use sim::storage::IoOp;
    assert_eq!(
        &ops[ops.len() - 2..],
        &[IoOp::Create, IoOp::SyncDir],
        "the directory is synced right after the file's creation: {ops:?}"
    );
    assert_eq!(recovered.expect("recovery"), (1..=20).collect::<Vec<u64>>());
}

#[test]
fn without_the_directory_sync_a_power_loss_takes_the_committed_table() {
    let config = Config {
        buffer_pool_pages: 64,
        canaries: engine::Canaries::NONE.with(engine::Canary::SkipDirectorySync),
        ..Config::default()
    };
    let (recovered, _) = create_checkpoint_power_loss(config);
    let err = recovered.expect_err("the table's file is gone");
    assert!(
        err.to_string()
            .contains("the tablespace of table 't' is missing"),
        "{err}"
    );
}
