//! Helpers shared by the thread-safe wrapper's tests (`shared_threads.rs`
//! with std threads, `loom.rs` under the loom model checker): a small table
//! of counters on in-memory storage and a clock the tests move by hand.

#![allow(dead_code)] // not every test binary uses every helper

use engine::io::{Clock, ManualClock, MemStorage};
use engine::redo::LogConfig;
use engine::shared::SharedEngine;
use engine::{
    ColumnDef, ColumnType, Config, Engine, Request, Response, RowFormat, TableDef, Value,
};
use std::sync::Arc;

/// The table every scenario uses.
pub const TABLE: &str = "counters";

/// The lock wait timeout of the test engines, on the manual clock.
pub const LOCK_WAIT_TIMEOUT_US: u64 = 1_000_000;

/// A clock shared between the engine and the test thread that moves it.
#[derive(Clone, Default)]
pub struct TestClock(pub Arc<ManualClock>);

impl TestClock {
    /// Moves the clock forward.
    pub fn advance_us(&self, us: u64) {
        self.0.advance_us(us)
    }
}

impl Clock for TestClock {
    fn now_us(&self) -> u64 {
        self.0.now_us()
    }
}

/// A small engine: a 16-page buffer pool and two 256 KiB log files, so that
/// opening one is cheap enough to do in every loom iteration.
pub fn config() -> Config {
    Config {
        buffer_pool_pages: 16,
        log: LogConfig {
            files: 2,
            file_size_bytes: 256 * 1024,
            buffer_size_bytes: 64 * 1024,
        },
        lock_wait_timeout_us: LOCK_WAIT_TIMEOUT_US,
        ..Config::default()
    }
}

/// `CREATE TABLE counters (id BIGINT UNSIGNED PRIMARY KEY, k BIGINT
/// UNSIGNED, owner BIGINT UNSIGNED)`: `owner` is what a transaction writes
/// to take a row's lock without touching `k`.
pub fn counters_def() -> TableDef {
    TableDef {
        name: TABLE.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::BIGINT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "k".into(),
                ty: ColumnType::BIGINT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "owner".into(),
                ty: ColumnType::BIGINT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![],
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

/// An engine on fresh in-memory storage holding rows `1..=rows`, each with
/// `k = 0` and `owner = 0`, wrapped for threads, with the clock that drives
/// it.
pub fn open_shared(rows: u64, config: Config) -> engine::Result<(SharedEngine, TestClock)> {
    let clock = TestClock::default();
    let (mut engine, _) =
        Engine::open(Box::new(MemStorage::new()), Box::new(clock.clone()), config)?;
    engine.create_table(counters_def())?;
    let shared = SharedEngine::new(engine);
    let s = shared.session()?;
    for id in 1..=rows {
        s.execute(insert(id))?;
    }
    s.close()?;
    Ok((shared, clock))
}

/// `INSERT INTO counters VALUES (id, 0, 0)`.
pub fn insert(id: u64) -> Request {
    Request::Insert {
        table: TABLE.into(),
        row: vec![Value::UInt(id), Value::UInt(0), Value::UInt(0)],
    }
}

/// `UPDATE counters SET owner = owner WHERE id = id`: takes the row's lock.
pub fn set_owner(id: u64, owner: u64) -> Request {
    Request::Update {
        table: TABLE.into(),
        key: vec![Value::UInt(id)],
        set: vec![("owner".into(), Value::UInt(owner))],
    }
}

/// `UPDATE counters SET k = k WHERE id = id`.
pub fn set_k(id: u64, k: u64) -> Request {
    Request::Update {
        table: TABLE.into(),
        key: vec![Value::UInt(id)],
        set: vec![("k".into(), Value::UInt(k))],
    }
}

/// `SELECT * FROM counters WHERE id = id`.
pub fn get(id: u64) -> Request {
    Request::Get {
        table: TABLE.into(),
        key: vec![Value::UInt(id)],
    }
}

/// The `k` of a row a [`get`] returned; `None` for any other response.
pub fn k_of(response: &Response) -> Option<u64> {
    match response {
        Response::Row(Some(row)) => match row.get(1) {
            Some(Value::UInt(k)) => Some(*k),
            _ => None,
        },
        _ => None,
    }
}

/// Reads row `id`'s `k` in a session of its own (a consistent read of the
/// committed state).
pub fn read_k(shared: &SharedEngine, id: u64) -> engine::Result<Option<u64>> {
    let s = shared.session()?;
    let r = s.execute(get(id))?;
    s.close()?;
    Ok(k_of(&r))
}
