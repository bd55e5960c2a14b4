//! Plans: everything a simulated run does, as data. A seed and a profile
//! generate a plan; the runner executes it; the shrinker makes it smaller;
//! the corpus saves it as readable JSON. Executing the same plan always does
//! the same thing. This module holds the plan's types, its validation and
//! the edits the shrinker makes; `generate.rs` draws a plan from a seed.

use crate::profile::{FaultKind, Shape};
use engine::{FlushAtCommit, Isolation, RangeBound, Request, RowFormat, Value};
use serde::{Deserialize, Serialize};

mod generate;

/// A column value in a plan. Long strings are stored as a length and a seed
/// (their bytes are generated) so that a saved plan stays readable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PValue {
    /// NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A short string.
    Text(String),
    /// `len` generated letters.
    Long {
        /// Length in bytes.
        len: usize,
        /// Seeds the letters.
        seed: u64,
    },
}

impl PValue {
    /// The engine value.
    pub fn value(&self) -> Value {
        match self {
            PValue::Null => Value::Null,
            PValue::Int(i) => Value::Int(*i),
            PValue::UInt(u) => Value::UInt(*u),
            PValue::Text(s) => Value::Bytes(s.clone().into_bytes()),
            PValue::Long { len, seed } => Value::Bytes(long_letters(*len, *seed)),
        }
    }
}

/// `len` letters drawn from `seed` by xorshift, eight letters per step: a
/// letter a byte `b`, `b'a' + (b * 26 >> 8)` (scaled to 0..26 without a
/// division), computed for the eight bytes of a step at once, even and odd
/// bytes as 16-bit lanes (long values are tens of kilobytes).
fn long_letters(len: usize, seed: u64) -> Vec<u8> {
    const LANES: u64 = 0x00ff_00ff_00ff_00ff;
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len.next_multiple_of(8));
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let even = (((x & LANES) * 26) >> 8) & LANES;
        let odd = ((((x >> 8) & LANES) * 26) >> 8) & LANES;
        // Each byte is at most 25, so adding 'a' to all eight carries nowhere.
        let letters = (even | (odd << 8)) + 0x6161_6161_6161_6161;
        out.extend_from_slice(&letters.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A primary key in a plan: one value, saved as that value (so plans
/// from before composite keys read unchanged), or several, saved as a
/// list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PKey(pub Vec<PValue>);

impl PKey {
    /// The engine values.
    pub fn values(&self) -> Vec<Value> {
        self.0.iter().map(PValue::value).collect()
    }
}

impl From<PValue> for PKey {
    fn from(v: PValue) -> PKey {
        PKey(vec![v])
    }
}

impl Serialize for PKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PKey, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            One(PValue),
            Many(Vec<PValue>),
        }
        Ok(match Form::deserialize(d)? {
            Form::One(v) => PKey(vec![v]),
            Form::Many(vs) => PKey(vs),
        })
    }
}

/// One statement of a planned transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PlannedStmt {
    /// INSERT.
    Insert {
        /// Table.
        table: String,
        /// Values.
        row: Vec<PValue>,
    },
    /// UPDATE by primary key.
    Update {
        /// Table.
        table: String,
        /// Primary key.
        key: PKey,
        /// Column and value.
        set: Vec<(String, PValue)>,
    },
    /// DELETE by primary key.
    Delete {
        /// Table.
        table: String,
        /// Primary key.
        key: PKey,
    },
    /// SELECT by primary key.
    Get {
        /// Table.
        table: String,
        /// Primary key.
        key: PKey,
    },
    /// A scan from a primary key (or the first row), LIMIT rows.
    Scan {
        /// Table.
        table: String,
        /// Secondary index, or the primary key.
        index: Option<String>,
        /// Descending.
        reverse: bool,
        /// LIMIT.
        limit: usize,
        /// Start at this key: a primary key, or a value of the secondary
        /// index's column (inclusive unless `open`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<PValue>,
        /// Stop at this key (inclusive unless `open`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<PValue>,
        /// Both ends exclusive.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        open: bool,
    },
    /// SELECT by primary key FOR UPDATE (`exclusive`) or LOCK IN SHARE
    /// MODE.
    LockingGet {
        /// Table.
        table: String,
        /// Primary key.
        key: PKey,
        /// FOR UPDATE.
        exclusive: bool,
    },
    /// A scan FOR UPDATE or LOCK IN SHARE MODE.
    LockingScan {
        /// Table.
        table: String,
        /// Secondary index, or the primary key.
        index: Option<String>,
        /// Descending.
        reverse: bool,
        /// LIMIT.
        limit: usize,
        /// Start at this key: a primary key, or a value of the secondary
        /// index's column (inclusive unless `open`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<PValue>,
        /// Stop at this key (inclusive unless `open`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<PValue>,
        /// Both ends exclusive.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        open: bool,
        /// FOR UPDATE.
        exclusive: bool,
    },
    /// Moves up to `amount` from account `from` to account `to` (rows of
    /// `sb`, balance in `k`): both read FOR UPDATE, then both updated. The
    /// runner computes the new balances from what it read.
    Transfer {
        /// Debited account.
        from: u64,
        /// Credited account.
        to: u64,
        /// At most this much (no more than the balance).
        amount: u64,
    },
    /// UPDATE (`set`) or DELETE (`set` empty) of the rows of `sb` with
    /// ids `from` to `to` (inclusive) whose `k` is below `below`, read
    /// through the clustered index as MySQL's UPDATE and DELETE read it:
    /// every row of the range locked X, an UPDATE's read semi-consistent
    /// under READ COMMITTED and READ UNCOMMITTED (a row another
    /// transaction holds a lock on is read in its last committed version,
    /// unlocked, and locked only if that version matches), and the rows
    /// the condition rejects let go again under those two levels
    /// (`row_unlock_for_mysql`). The runner runs it as those steps.
    ChangeWhere {
        /// The table (`sb`).
        table: String,
        /// The lowest id.
        from: u64,
        /// The highest id.
        to: u64,
        /// Rows whose `k` is below this match.
        below: u64,
        /// Column and value; empty for a DELETE.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        set: Vec<(String, PValue)>,
    },
    /// SAVEPOINT.
    Savepoint(String),
    /// ROLLBACK TO SAVEPOINT.
    RollbackTo(String),
    /// RELEASE SAVEPOINT: forgets the savepoint and every later one.
    ReleaseSavepoint(String),
    /// CREATE TABLE of a scratch table ([`crate::tables::scratch`]), alone
    /// in an autocommit transaction (DDL commits by itself). No row
    /// statement names a scratch table: what the checkers judge is that it
    /// exists exactly when its last acknowledged DDL says so.
    CreateTable {
        /// One of [`SCRATCH_TABLES`].
        table: String,
        /// Its row format.
        row_format: String,
    },
    /// DROP TABLE of a scratch table, alone in an autocommit transaction.
    DropTable {
        /// One of [`SCRATCH_TABLES`].
        table: String,
    },
    /// TRUNCATE TABLE of a scratch table, alone in an autocommit
    /// transaction: the table exists before and after, in a new file.
    TruncateTable {
        /// One of [`SCRATCH_TABLES`].
        table: String,
    },
    /// CREATE INDEX on one of the plan's drawn tables, alone in an
    /// autocommit transaction, built by fast index creation beside the
    /// open transactions (refused while one of them has changed the
    /// table). Scans may name the index before it exists and after it is
    /// dropped (1176).
    CreateIndex {
        /// The table.
        table: String,
        /// The index (not unique; no TEXT or BLOB column).
        index: crate::schema::IndexSpec,
    },
    /// ALTER TABLE ... ENGINE=InnoDB of one of the plan's tables with a
    /// primary key, alone in an autocommit transaction: MySQL 5.1's
    /// copying ALTER, which builds the table again in a new file under an
    /// X table lock, copying every row (`copy_data_between_tables`), and
    /// swaps it in. The rows stay; a REPEATABLE READ view older than the
    /// copy finds the table empty (the copies carry the ALTER's
    /// transaction id: the limit on consistent reads over ALTER TABLE
    /// that MySQL 5.1's manual names).
    RebuildTable {
        /// The table.
        table: String,
    },
    /// DROP INDEX of an index a [`PlannedStmt::CreateIndex`] of the plan
    /// creates, alone in an autocommit transaction.
    DropIndex {
        /// The table.
        table: String,
        /// The index's name.
        index: String,
    },
}

/// The longest think time a plan or a recorded turn may give: a minute
/// (simulated time is a u64 of microseconds; a plan from a file must not
/// run it out).
pub const MAX_THINK_US: u64 = 60_000_000;

/// The tables DDL statements create and drop while the workload runs.
pub const SCRATCH_TABLES: [&str; 2] = ["s1", "s2"];

impl PlannedStmt {
    /// The table it names, if any (a transfer's is `sb`).
    pub fn table(&self) -> Option<&str> {
        match self {
            PlannedStmt::Insert { table, .. }
            | PlannedStmt::Update { table, .. }
            | PlannedStmt::Delete { table, .. }
            | PlannedStmt::Get { table, .. }
            | PlannedStmt::Scan { table, .. }
            | PlannedStmt::LockingGet { table, .. }
            | PlannedStmt::LockingScan { table, .. }
            | PlannedStmt::ChangeWhere { table, .. } => Some(table),
            PlannedStmt::Transfer { .. } => Some("sb"),
            PlannedStmt::Savepoint(_)
            | PlannedStmt::RollbackTo(_)
            | PlannedStmt::ReleaseSavepoint(_)
            | PlannedStmt::CreateTable { .. }
            | PlannedStmt::DropTable { .. }
            | PlannedStmt::TruncateTable { .. }
            | PlannedStmt::CreateIndex { .. }
            | PlannedStmt::DropIndex { .. }
            | PlannedStmt::RebuildTable { .. } => None,
        }
    }

    /// Whether it can run on a table without a primary key, whose rows
    /// nothing can address by key (the typed requests name rows by
    /// primary key): an insert, or a scan that is not bounded on the
    /// clustered index (its key is the hidden row id).
    fn fits_keyless_table(&self) -> bool {
        match self {
            PlannedStmt::Insert { .. } => true,
            PlannedStmt::Scan {
                index, from, to, ..
            }
            | PlannedStmt::LockingScan {
                index, from, to, ..
            } => index.is_some() || (from.is_none() && to.is_none()),
            _ => false,
        }
    }

    /// Whether it is DDL.
    pub fn is_ddl(&self) -> bool {
        matches!(
            self,
            PlannedStmt::CreateTable { .. }
                | PlannedStmt::DropTable { .. }
                | PlannedStmt::TruncateTable { .. }
                | PlannedStmt::CreateIndex { .. }
                | PlannedStmt::DropIndex { .. }
                | PlannedStmt::RebuildTable { .. }
        )
    }

    /// The engine request (savepoints included); `None` for a transfer,
    /// whose updates depend on what its reads return (the runner runs it),
    /// and for DDL, which is no session's request.
    pub fn request(&self) -> Option<Request> {
        Some(match self {
            PlannedStmt::Insert { table, row } => Request::Insert {
                table: table.clone(),
                row: row.iter().map(PValue::value).collect(),
            },
            PlannedStmt::Update { table, key, set } => Request::Update {
                table: table.clone(),
                key: key.values(),
                set: set.iter().map(|(c, v)| (c.clone(), v.value())).collect(),
            },
            PlannedStmt::Delete { table, key } => Request::Delete {
                table: table.clone(),
                key: key.values(),
            },
            PlannedStmt::Get { table, key } => Request::Get {
                table: table.clone(),
                key: key.values(),
            },
            PlannedStmt::Scan {
                table,
                index,
                reverse,
                limit,
                from,
                to,
                open,
            } => scan_request(table, index, *reverse, *limit, (from, to, *open)),
            PlannedStmt::LockingGet {
                table,
                key,
                exclusive,
            } => Request::Locking {
                read: Box::new(Request::Get {
                    table: table.clone(),
                    key: key.values(),
                }),
                exclusive: *exclusive,
                index_condition: false,
            },
            PlannedStmt::LockingScan {
                table,
                index,
                reverse,
                limit,
                from,
                to,
                open,
                exclusive,
            } => Request::Locking {
                read: Box::new(scan_request(
                    table,
                    index,
                    *reverse,
                    *limit,
                    (from, to, *open),
                )),
                exclusive: *exclusive,
                index_condition: false,
            },
            PlannedStmt::Savepoint(n) => Request::Savepoint(n.clone()),
            PlannedStmt::RollbackTo(n) => Request::RollbackToSavepoint(n.clone()),
            PlannedStmt::ReleaseSavepoint(n) => Request::ReleaseSavepoint(n.clone()),
            PlannedStmt::Transfer { .. }
            | PlannedStmt::ChangeWhere { .. }
            | PlannedStmt::CreateTable { .. }
            | PlannedStmt::DropTable { .. }
            | PlannedStmt::TruncateTable { .. }
            | PlannedStmt::CreateIndex { .. }
            | PlannedStmt::DropIndex { .. }
            | PlannedStmt::RebuildTable { .. } => return None,
        })
    }
}

/// A scan's request: from `from` (the low end of an ascending scan, the
/// high end of a descending one) to `to`, both ends exclusive if `open`.
fn scan_request(
    table: &str,
    index: &Option<String>,
    reverse: bool,
    limit: usize,
    (from, to, open): (&Option<PValue>, &Option<PValue>, bool),
) -> Request {
    let end = |k: &Option<PValue>| match k {
        None => RangeBound::Unbounded,
        Some(k) if open => RangeBound::Excluded(vec![k.value()]),
        Some(k) => RangeBound::Included(vec![k.value()]),
    };
    let (low, high) = if reverse {
        (end(to), end(from))
    } else {
        (end(from), end(to))
    };
    Request::Scan {
        table: table.to_string(),
        index: index.clone(),
        low,
        high,
        reverse,
        limit: Some(limit),
    }
}

/// The row of `sb` preloaded with id `id` (accounts start with 1000).
pub fn preload_row(shape: Shape, id: u64) -> Vec<Value> {
    let k = match shape {
        Shape::Transfer => 1_000,
        _ => id % 50,
    };
    vec![
        Value::UInt(id),
        Value::UInt(k),
        Value::Bytes(format!("preloaded-{id}").into_bytes()),
        Value::Bytes(b"pad".to_vec()),
    ]
}

/// The isolation level a plan names.
pub fn isolation_of(name: &str) -> Option<Isolation> {
    Some(match name {
        "READ-UNCOMMITTED" => Isolation::ReadUncommitted,
        "READ-COMMITTED" => Isolation::ReadCommitted,
        "REPEATABLE-READ" => Isolation::RepeatableRead,
        "SERIALIZABLE" => Isolation::Serializable,
        _ => return None,
    })
}

/// A planned transaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedTxn {
    /// Its statements, in order.
    pub statements: Vec<PlannedStmt>,
    /// Ends in ROLLBACK instead of COMMIT.
    pub rollback: bool,
    /// SET TRANSACTION ISOLATION LEVEL before it (`READ-COMMITTED`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// One statement run without BEGIN, in autocommit mode: it commits
    /// by itself (or rolls back by itself when it fails).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub autocommit: bool,
}

/// A whole run, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The seed it came from (also seeds the scheduler and crash outcomes).
    pub seed: u64,
    /// The profile it came from.
    pub profile: String,
    /// innodb_flush_log_at_trx_commit.
    pub flush: u8,
    /// Buffer pool pages.
    pub pool_pages: usize,
    /// innodb_lock_wait_timeout in seconds.
    pub lock_wait_timeout_s: u64,
    /// Row formats of the tables `sb` and `docs`.
    pub row_formats: [String; 2],
    /// Fault kinds switched on (swarm testing).
    pub faults: Vec<FaultKind>,
    /// With a full disk: KiB of room above what setup used.
    pub disk_headroom_kib: Option<u64>,
    /// The planted canary, if any.
    pub canary: Option<String>,
    /// Concurrent sessions.
    pub sessions: usize,
    /// Transactions, in the order sessions start them.
    pub transactions: Vec<PlannedTxn>,
    /// For each crash, the I/O operations after the (re)start at which it
    /// strikes. Every run also ends with one more crash.
    pub crash_after_ios: Vec<u64>,
    /// The transactions' shape.
    #[serde(default)]
    pub shape: Shape,
    /// Rows of `sb` loaded before the workload ([`preload_row`]).
    #[serde(default)]
    pub preload: u64,
    /// Simulated fsync latency, microseconds.
    #[serde(default)]
    pub sync_latency_us: u64,
    /// The most simulated time between two scheduler steps, microseconds.
    #[serde(default = "crate::profile::default_think_us")]
    pub think_us: u64,
    /// Group commit under flush 1: a commit waits for a sync shared with
    /// the commits written before it.
    #[serde(default)]
    pub group_commit: bool,
    /// The binary log's `prepare_commit_mutex` of MySQL 5.1's built-in
    /// InnoDB (`engine::Config::commit_mutex`), in a time-driven run: under
    /// flush 1 commits take the log's sync one at a time, their locks held
    /// until their turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub commit_mutex: bool,
    /// The size of each of the two redo log files, KiB. Small logs wrap
    /// around many times a run, so checkpoints come often and crashes land
    /// just after them.
    #[serde(default = "default_log_file_kib")]
    pub log_file_kib: u64,
    /// Crashes anchored to the workload (the shrinker's form of a crash):
    /// each strikes a number of I/O operations after the runner issues one
    /// statement of one planned transaction, so it keeps its place when
    /// other transactions and statements are dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crash_at_statements: Vec<CrashAnchor>,
    /// Crashes tied to checkpoints, in order, one armed per (re)start of
    /// the workload (alongside the I/O-indexed and anchored ones: whichever
    /// strikes first): each strikes a number of I/O operations after the
    /// workload's nth checkpoint write since the (re)start. One that
    /// another crash forestalled before its checkpoint came is armed again
    /// at the next start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crash_after_checkpoints: Vec<CheckpointCrash>,
    /// Tables the seed drew for itself, created after `sb` and `docs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<crate::schema::TableSpec>,
    /// Failing fsyncs anchored to the workload (the shrinker's form of the
    /// fsync failures a run drew): each makes the first sync at least
    /// `after_ios` I/O operations after the statement's issue fail with
    /// EIO, so it keeps its place when other statements are dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fsync_failures_at_statements: Vec<CrashAnchor>,
    /// Failing fsyncs anchored to a recovery (the shrinker's form of the
    /// drawn failures that struck while the engine recovered, where no
    /// statement precedes them): each fails the first sync at least
    /// `after_ios` I/O operations after the start of the plan's
    /// `open`-th attempt to open the engine after a crash (from 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fsync_failures_in_recovery: Vec<RecoveryAnchor>,
    /// A recorded interleaving (the shrinker's form of the scheduler's
    /// draws, see [`crate::schedule`]); a generated plan has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::schedule::Schedule>,
    /// innodb_file_per_table OFF: every table's trees in the system
    /// tablespace, where a dropped table's pages go back to the space's
    /// free lists and the next table takes them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub system_tables: bool,
    /// The sort buffer of fast index creation, when the plan makes it
    /// small enough for an index build to spill sorted runs to its merge
    /// file (`innodb_sort_buffer_size`; the engine's 1 MiB otherwise,
    /// which the plans' tables never fill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_buffer_bytes: Option<usize>,
    /// Time-driven scheduling (discrete events, see `runner::timed`):
    /// each session keeps its own time, each step costs the simulated time
    /// of its I/O, and the earliest event runs next; otherwise each turn
    /// picks a session at random after a random think time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed: bool,
    /// What a step costs the processors when time drives the scheduler.
    #[serde(default, skip_serializing_if = "crate::profile::CpuModel::is_free")]
    pub cpu: crate::profile::CpuModel,
    /// The chance of a long pause inside a transaction when time drives
    /// the scheduler (see `Profile::p_long_pause`).
    #[serde(
        default = "crate::profile::default_p_long_pause",
        skip_serializing_if = "is_default_long_pause"
    )]
    pub p_long_pause: f64,
    /// What each storage operation costs, where the profile gives a model
    /// (else only syncs cost, `sync_latency_us` each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::storage::faults::Latency>,
}

/// A failing fsync anchored to a recovery (see
/// [`Plan::fsync_failures_in_recovery`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryAnchor {
    /// Which attempt to open the engine after a crash, from 0, counting
    /// every attempt of the run (a crash inside recovery is followed by
    /// another).
    pub open: usize,
    /// I/O operations from the attempt's start to the sync that fails.
    pub after_ios: u64,
}

/// A crash anchored to a statement: it strikes `after_ios` I/O operations
/// after the runner issues statement `statement` of planned transaction
/// `txn` (both 0-based; `statement` equal to the transaction's statement
/// count is its COMMIT or ROLLBACK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashAnchor {
    /// Index into [`Plan::transactions`].
    pub txn: usize,
    /// Index into that transaction's statements.
    pub statement: usize,
    /// I/O operations from the statement's issue to the crash.
    pub after_ios: u64,
}

/// A crash just after a checkpoint: `after_ios` I/O operations (1: the
/// sync that would make it durable) after the `nth` write (from 1) to a
/// checkpoint slot of the redo log since the workload (re)started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointCrash {
    /// Which checkpoint write.
    pub nth: u64,
    /// I/O operations from it to the crash.
    pub after_ios: u64,
}

/// The redo log file size plans had before it was drawn: 512 KiB.
pub fn default_log_file_kib() -> u64 {
    512
}

/// Row format names in plans: `REDUNDANT`, `COMPACT`, `DYNAMIC`, and
/// `COMPRESSED-<KEY_BLOCK_SIZE>` (a KEY_BLOCK_SIZE that is not 1, 2, 4, 8
/// or 16 has no name: it is named as the default, 8).
pub fn format_name(f: RowFormat) -> &'static str {
    match f {
        RowFormat::Redundant => "REDUNDANT",
        RowFormat::Compact => "COMPACT",
        RowFormat::Dynamic => "DYNAMIC",
        RowFormat::Compressed { key_block_size } => match key_block_size {
            1 => "COMPRESSED-1",
            2 => "COMPRESSED-2",
            4 => "COMPRESSED-4",
            16 => "COMPRESSED-16",
            _ => "COMPRESSED-8",
        },
        _ => unreachable!("the generator draws only the formats above"),
    }
}

/// The row format of a name in a plan.
pub fn format_of(name: &str) -> Option<RowFormat> {
    Some(match name {
        "REDUNDANT" => RowFormat::Redundant,
        "COMPACT" => RowFormat::Compact,
        "DYNAMIC" => RowFormat::Dynamic,
        "COMPRESSED-1" => RowFormat::Compressed { key_block_size: 1 },
        "COMPRESSED-2" => RowFormat::Compressed { key_block_size: 2 },
        "COMPRESSED-4" => RowFormat::Compressed { key_block_size: 4 },
        "COMPRESSED-8" => RowFormat::Compressed { key_block_size: 8 },
        "COMPRESSED-16" => RowFormat::Compressed { key_block_size: 16 },
        _ => return None,
    })
}

impl Plan {
    /// Checks a plan loaded from a file.
    pub fn validate(&self) -> Result<(), String> {
        FlushAtCommit::from_setting(self.flush).map_err(|e| e.to_string())?;
        if !(130..=64 * 1024).contains(&self.log_file_kib) {
            return Err(format!(
                "log_file_kib must be 130 ..= 65536, not {}",
                self.log_file_kib
            ));
        }
        if self.think_us > MAX_THINK_US {
            return Err(format!(
                "think_us must be at most {MAX_THINK_US}, not {}",
                self.think_us
            ));
        }
        if self.pool_pages < 8
            || self.sessions == 0
            || self.sessions > crate::profile::MAX_SESSIONS
            || self.lock_wait_timeout_s == 0
        {
            return Err(format!(
                "pool_pages >= 8, sessions in 1..={} and a positive lock wait timeout are required",
                crate::profile::MAX_SESSIONS
            ));
        }
        for f in &self.row_formats {
            let f = format_of(f).ok_or_else(|| format!("unknown row format '{f}'"))?;
            if self.system_tables && f.zip_size().ok().flatten().is_some() {
                return Err("a compressed table needs innodb_file_per_table".into());
            }
        }
        if self.system_tables
            && self.tables.iter().any(|t| {
                format_of(&t.row_format).is_some_and(|f| f.zip_size().ok().flatten().is_some())
            })
        {
            return Err("a compressed table needs innodb_file_per_table".into());
        }
        if self
            .crash_after_checkpoints
            .iter()
            .any(|c| c.nth == 0 || c.after_ios == 0)
        {
            return Err("a checkpoint crash needs nth >= 1 and after_ios >= 1".into());
        }
        for a in self
            .crash_at_statements
            .iter()
            .chain(&self.fsync_failures_at_statements)
        {
            let ok = self
                .transactions
                .get(a.txn)
                .is_some_and(|t| a.statement <= t.statements.len());
            if !ok {
                return Err(format!(
                    "anchor {a:?} names no statement of the plan's transactions"
                ));
            }
        }
        if let Some(s) = &self.schedule {
            let lens: Vec<usize> = self
                .transactions
                .iter()
                .map(|t| t.statements.len())
                .collect();
            s.validate(&lens)?;
        }
        for t in &self.transactions {
            if let Some(i) = &t.isolation {
                isolation_of(i).ok_or_else(|| format!("unknown isolation level '{i}'"))?;
            }
        }
        // Each table a row statement may name: its column count, and
        // whether it has a primary key.
        let mut tables: Vec<(&str, usize, bool)> = vec![
            (
                "sb",
                crate::tables::sbtest("sb", RowFormat::Compact)
                    .columns
                    .len(),
                true,
            ),
            (
                "docs",
                crate::tables::docs("docs", RowFormat::Compact)
                    .columns
                    .len(),
                true,
            ),
        ];
        for (i, t) in self.tables.iter().enumerate() {
            t.validate()?;
            // A constraint names an earlier drawn table's whole primary
            // key, with columns of its types and collations.
            for f in &t.foreign {
                let parent = self.tables[..i].iter().find(|p| p.name == f.parent);
                let fits = parent.is_some_and(|p| {
                    p.primary_key.len() == f.columns.len()
                        && (p.primary_key.iter().zip(&f.columns).zip(&f.parent_columns)).all(
                            |((&pc, &c), pn)| {
                                let (a, b) = (&p.columns[pc], &t.columns[c]);
                                a.name == *pn && a.ty == b.ty && a.collation == b.collation
                            },
                        )
                });
                if !fits {
                    return Err(format!(
                        "table '{}': its foreign key does not name the primary key of an \
                         earlier table '{}'",
                        t.name, f.parent
                    ));
                }
            }
            let taken = tables.iter().any(|(n, _, _)| *n == t.name);
            if taken || SCRATCH_TABLES.contains(&t.name.as_str()) {
                return Err(format!("table '{}' is defined twice", t.name));
            }
            tables.push((&t.name, t.columns.len(), !t.primary_key.is_empty()));
        }
        for t in &self.transactions {
            for s in &t.statements {
                let scratch = match s {
                    PlannedStmt::CreateTable { table, row_format } => {
                        let f = format_of(row_format)
                            .ok_or_else(|| format!("unknown row format '{row_format}'"))?;
                        // The judge takes scratch tables' pages for 16 KiB.
                        if f.zip_size().ok().flatten().is_some() {
                            return Err(format!("scratch table '{table}' cannot be {row_format}"));
                        }
                        Some(table)
                    }
                    PlannedStmt::DropTable { table } | PlannedStmt::TruncateTable { table } => {
                        Some(table)
                    }
                    _ => None,
                };
                if let Some(v) = self.online_index_error(s) {
                    return Err(v);
                }
                if let PlannedStmt::RebuildTable { table } = s {
                    let keyed = table == "sb"
                        || table == "docs"
                        || self
                            .tables
                            .iter()
                            .any(|x| x.name == *table && !x.primary_key.is_empty());
                    if !keyed {
                        return Err(format!(
                            "ALTER TABLE names '{table}', not one of the plan's tables with a primary key"
                        ));
                    }
                    if !t.autocommit || t.statements.len() != 1 {
                        return Err("a DDL statement runs alone, in autocommit mode".into());
                    }
                }
                if matches!(
                    s,
                    PlannedStmt::CreateIndex { .. } | PlannedStmt::DropIndex { .. }
                ) && (!t.autocommit || t.statements.len() != 1)
                {
                    return Err("a DDL statement runs alone, in autocommit mode".into());
                }
                if let Some(table) = scratch {
                    if !SCRATCH_TABLES.contains(&table.as_str()) {
                        return Err(format!(
                            "DDL names '{table}', not one of the scratch tables {SCRATCH_TABLES:?}"
                        ));
                    }
                    if !t.autocommit || t.statements.len() != 1 {
                        return Err("a DDL statement runs alone, in autocommit mode".into());
                    }
                }
                let Some(table) = s.table() else {
                    continue;
                };
                let Some(&(_, columns, keyed)) = tables.iter().find(|(n, _, _)| *n == table) else {
                    return Err(format!("unknown table '{table}'"));
                };
                if let PlannedStmt::Insert { row, .. } = s {
                    if row.len() != columns {
                        return Err(format!(
                            "an insert into '{table}' gives {} values for its {columns} columns",
                            row.len()
                        ));
                    }
                }
                let keyless = !keyed;
                if keyless && !s.fits_keyless_table() {
                    return Err(format!(
                        "table '{table}' has no primary key: only inserts, and scans not bounded on its clustered index, can name it"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The indexes the plan's CREATE INDEX statements create, by table.
    pub fn online_indexes(&self) -> Vec<(String, crate::schema::IndexSpec)> {
        let mut out: Vec<(String, crate::schema::IndexSpec)> = Vec::new();
        for t in &self.transactions {
            for s in &t.statements {
                if let PlannedStmt::CreateIndex { table, index } = s {
                    if !out.iter().any(|(n, i)| n == table && i.name == index.name) {
                        out.push((table.clone(), index.clone()));
                    }
                }
            }
        }
        out
    }

    /// What is wrong with an index DDL statement of a plan from a file:
    /// its table is one of the drawn tables, its index is none of the
    /// table's own, is not unique and has valid columns that are no TEXT
    /// or BLOB, and each CREATE INDEX of a name creates the same index.
    fn online_index_error(&self, s: &PlannedStmt) -> Option<String> {
        let (table, name) = match s {
            PlannedStmt::CreateIndex { table, index } => (table, &index.name),
            PlannedStmt::DropIndex { table, index } => (table, index),
            _ => return None,
        };
        let Some(spec) = self.tables.iter().find(|t| t.name == *table) else {
            return Some(format!("index DDL names '{table}', not a drawn table"));
        };
        if spec.indexes.iter().any(|i| i.name == *name) {
            return Some(format!(
                "index DDL names '{name}', an index '{table}' is created with"
            ));
        }
        let created: Vec<crate::schema::IndexSpec> = self
            .online_indexes()
            .into_iter()
            .filter(|(t, i)| t == table && i.name == *name)
            .map(|(_, i)| i)
            .collect();
        // A DROP INDEX of an index no CREATE makes (a shrunk plan) is
        // 1091.
        let index = created.first()?;
        let same = self
            .transactions
            .iter()
            .flat_map(|t| &t.statements)
            .all(|x| match x {
                PlannedStmt::CreateIndex { table: t, index: i } => {
                    t != table || i.name != *name || i == index
                }
                _ => true,
            });
        if !same {
            return Some(format!("index '{name}' is created with two definitions"));
        }
        let bad_column = index.columns.iter().any(|&c| {
            spec.columns
                .get(c)
                .is_none_or(|col| matches!(col.ty.as_str(), "TEXT" | "BLOB"))
        });
        if index.unique || index.columns.is_empty() || bad_column {
            return Some(format!(
                "index '{name}' must be non-unique, on columns of '{table}' that are not TEXT or BLOB"
            ));
        }
        None
    }

    /// Every anchor to a statement: the crashes' and the failing fsyncs'.
    fn anchors_mut(&mut self) -> impl Iterator<Item = &mut CrashAnchor> {
        self.crash_at_statements
            .iter_mut()
            .chain(self.fsync_failures_at_statements.iter_mut())
    }

    /// Removes transactions `range`, moving the anchors of later
    /// transactions with them and dropping those of the removed ones.
    pub fn remove_transactions(&mut self, range: std::ops::Range<usize>) {
        let n = range.len();
        if let Some(s) = self.schedule.as_mut() {
            s.remove_transactions(range.clone());
        }
        self.transactions.drain(range.clone());
        self.crash_at_statements.retain(|a| !range.contains(&a.txn));
        self.fsync_failures_at_statements
            .retain(|a| !range.contains(&a.txn));
        for a in self.anchors_mut() {
            if a.txn >= range.end {
                a.txn -= n;
            }
        }
    }

    /// Inserts transaction `t` at `at`, moving the anchors of that
    /// transaction and the later ones with them.
    pub fn insert_transaction(&mut self, at: usize, t: PlannedTxn) {
        if let Some(s) = self.schedule.as_mut() {
            s.insert_transaction(at);
        }
        self.transactions.insert(at, t);
        for a in self.anchors_mut() {
            if a.txn >= at {
                a.txn += 1;
            }
        }
    }

    /// Inserts `st` as statement `statement` of transaction `txn`, moving
    /// the anchors of that statement and the later ones with them.
    pub fn insert_statement(&mut self, txn: usize, statement: usize, st: PlannedStmt) {
        if let Some(s) = self.schedule.as_mut() {
            s.insert_statement(txn, statement);
        }
        self.transactions[txn].statements.insert(statement, st);
        for a in self.anchors_mut() {
            if a.txn == txn && a.statement >= statement {
                a.statement += 1;
            }
        }
    }

    /// Removes statement `statement` of transaction `txn`, moving the
    /// anchors of its later statements with them and dropping its own.
    pub fn remove_statement(&mut self, txn: usize, statement: usize) {
        if let Some(s) = self.schedule.as_mut() {
            s.remove_statement(txn, statement);
        }
        self.transactions[txn].statements.remove(statement);
        self.crash_at_statements
            .retain(|a| (a.txn, a.statement) != (txn, statement));
        self.fsync_failures_at_statements
            .retain(|a| (a.txn, a.statement) != (txn, statement));
        for a in self.anchors_mut() {
            if a.txn == txn && a.statement > statement {
                a.statement -= 1;
            }
        }
    }

    /// Statements in the plan (the shrinker's measure).
    pub fn statement_count(&self) -> usize {
        self.transactions
            .iter()
            .map(|t| t.statements.len() + 1)
            .sum()
    }
}

#[cfg(test)]
mod letter_tests {
    /// The lane arithmetic gives, byte for byte, `b'a' + (b * 26 >> 8)` of
    /// the xorshift words.
    #[test]
    fn long_letters_map_each_byte_of_the_xorshift_words() {
        for (len, seed) in [
            (0, 1),
            (1, 2),
            (7, 3),
            (8, 4),
            (1001, 0xdead_beef),
            (40_000, u64::MAX),
        ] {
            let mut x: u64 = seed | 1;
            let mut want = Vec::new();
            while want.len() < len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                want.extend(
                    x.to_le_bytes()
                        .map(|b| b'a' + ((u32::from(b) * 26) >> 8) as u8),
                );
            }
            want.truncate(len);
            let got = super::long_letters(len, seed);
            assert_eq!(got, want, "len {len} seed {seed}");
            assert!(got.iter().all(u8::is_ascii_lowercase));
        }
    }
}

#[cfg(test)]
mod keyless_tests {
    use super::*;
    use crate::profile::Profile;

    /// Some default plans have a table without a primary key, named only
    /// by inserts and scans; a statement that would address one of its rows
    /// by key, or bound its clustered index, is refused.
    #[test]
    fn a_table_without_a_primary_key_is_named_only_by_inserts_and_scans() {
        let profile = Profile::named("default").expect("known");
        let plans: Vec<Plan> = (0..30)
            .map(|seed| Plan::generate(seed, &profile, None, None))
            .filter(|p| p.tables.iter().any(|t| t.primary_key.is_empty()))
            .collect();
        assert!(plans.len() >= 4, "{} of 30 plans", plans.len());
        let plan = &plans[0];
        plan.validate().expect("a generated plan is valid");
        let t2 = &plan
            .tables
            .iter()
            .find(|t| t.primary_key.is_empty())
            .expect("there")
            .name;
        let named = plan
            .transactions
            .iter()
            .flat_map(|t| &t.statements)
            .filter(|s| s.table() == Some(t2.as_str()))
            .count();
        assert!(named > 0);
        let refused = |st: PlannedStmt| {
            let mut p = plan.clone();
            p.transactions[0].statements.push(st);
            p.validate().expect_err("refused")
        };
        let key = PKey(vec![PValue::Int(1)]);
        assert!(refused(PlannedStmt::Delete {
            table: t2.clone(),
            key: key.clone()
        })
        .contains("no primary key"));
        assert!(refused(PlannedStmt::Get {
            table: t2.clone(),
            key
        })
        .contains("no primary key"));
        assert!(refused(PlannedStmt::Insert {
            table: "sb".into(),
            row: vec![PValue::UInt(1)],
        })
        .contains("values for its"));
        assert!(refused(PlannedStmt::Scan {
            table: t2.clone(),
            index: None,
            reverse: false,
            limit: 3,
            from: Some(PValue::Int(1)),
            to: None,
            open: false,
        })
        .contains("no primary key"));
    }
}

#[cfg(test)]
mod system_tablespace_tests {
    use super::*;
    use crate::profile::Profile;

    /// About a quarter of the plans without a compressed table keep their
    /// tables in the system tablespace, and among them some drop and
    /// create scratch tables there; a plan that asks for both a compressed
    /// table and the system tablespace is refused.
    #[test]
    fn some_plans_keep_their_tables_in_the_system_tablespace() {
        let profile = Profile::named("default").expect("known");
        let plans: Vec<Plan> = (0..200)
            .map(|seed| Plan::generate(seed, &profile, None, None))
            .filter(|p| p.system_tables)
            .collect();
        assert!(plans.len() >= 20, "{} of 200 plans", plans.len());
        for p in &plans {
            p.validate().expect("a generated plan is valid");
        }
        let dropping = plans
            .iter()
            .filter(|p| {
                p.transactions
                    .iter()
                    .flat_map(|t| &t.statements)
                    .any(|s| matches!(s, PlannedStmt::DropTable { .. }))
            })
            .count();
        assert!(dropping > 0, "no system-tablespace plan drops a table");
        let mut bad = plans[0].clone();
        bad.row_formats[0] = "COMPRESSED-4".into();
        assert!(bad.validate().is_err());
        let zip = Profile::named("compressed").expect("known");
        assert!((0..50)
            .map(|seed| Plan::generate(seed, &zip, None, None))
            .filter(|p| p.system_tables)
            .all(|p| p.validate().is_ok()));
    }
}

fn is_default_long_pause(p: &f64) -> bool {
    *p == crate::profile::default_p_long_pause()
}
