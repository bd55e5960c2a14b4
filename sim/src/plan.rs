//! Plans: everything a simulated run does, as data. A seed and a profile
//! generate a plan; the runner executes it; the shrinker makes it smaller;
//! the corpus saves it as readable JSON. Executing the same plan always does
//! the same thing.

use crate::profile::{FaultKind, Profile, Shape};
use engine::{FlushAtCommit, Isolation, RangeBound, Request, RowFormat, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

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
            | PlannedStmt::LockingScan { table, .. } => Some(table),
            PlannedStmt::Transfer { .. } => Some("sb"),
            PlannedStmt::Savepoint(_)
            | PlannedStmt::RollbackTo(_)
            | PlannedStmt::ReleaseSavepoint(_)
            | PlannedStmt::CreateTable { .. }
            | PlannedStmt::DropTable { .. } => None,
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
            PlannedStmt::CreateTable { .. } | PlannedStmt::DropTable { .. }
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
            },
            PlannedStmt::Savepoint(n) => Request::Savepoint(n.clone()),
            PlannedStmt::RollbackTo(n) => Request::RollbackToSavepoint(n.clone()),
            PlannedStmt::ReleaseSavepoint(n) => Request::ReleaseSavepoint(n.clone()),
            PlannedStmt::Transfer { .. }
            | PlannedStmt::CreateTable { .. }
            | PlannedStmt::DropTable { .. } => return None,
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
    /// A recorded interleaving (the shrinker's form of the scheduler's
    /// draws, see [`crate::schedule`]); a generated plan has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<crate::schedule::Schedule>,
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

/// Row format names in plans.
pub fn format_name(f: RowFormat) -> &'static str {
    match f {
        RowFormat::Redundant => "REDUNDANT",
        RowFormat::Compact => "COMPACT",
        RowFormat::Dynamic => "DYNAMIC",
        // ROW_FORMAT=COMPRESSED arrives with compression.
        _ => "COMPACT",
    }
}

/// The row format of a name in a plan.
pub fn format_of(name: &str) -> Option<RowFormat> {
    Some(match name {
        "REDUNDANT" => RowFormat::Redundant,
        "COMPACT" => RowFormat::Compact,
        "DYNAMIC" => RowFormat::Dynamic,
        _ => return None,
    })
}

fn text(rng: &mut ChaCha8Rng, len: usize) -> PValue {
    if len > 64 {
        return PValue::Long {
            len,
            seed: rng.gen(),
        };
    }
    PValue::Text(
        (0..len)
            .map(|_| (b'a' + rng.gen_range(0..26u8)) as char)
            .collect(),
    )
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
            || self.sessions > 64
            || self.lock_wait_timeout_s == 0
        {
            return Err(
                "pool_pages >= 8, sessions in 1..=64 and a positive lock wait timeout are required"
                    .into(),
            );
        }
        for f in &self.row_formats {
            format_of(f).ok_or_else(|| format!("unknown row format '{f}'"))?;
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
        let mut names = vec!["sb".to_string(), "docs".to_string()];
        for t in &self.tables {
            t.validate()?;
            if names.contains(&t.name) || SCRATCH_TABLES.contains(&t.name.as_str()) {
                return Err(format!("table '{}' is defined twice", t.name));
            }
            names.push(t.name.clone());
        }
        for t in &self.transactions {
            for s in &t.statements {
                let scratch = match s {
                    PlannedStmt::CreateTable { table, row_format } => {
                        format_of(row_format)
                            .ok_or_else(|| format!("unknown row format '{row_format}'"))?;
                        Some(table)
                    }
                    PlannedStmt::DropTable { table } => Some(table),
                    _ => None,
                };
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
                if !names.iter().any(|n| n == table) {
                    return Err(format!("unknown table '{table}'"));
                }
                if let PlannedStmt::Insert { row, .. } = s {
                    let want = match table {
                        "sb" => crate::tables::sbtest("sb", RowFormat::Compact)
                            .columns
                            .len(),
                        "docs" => crate::tables::docs("docs", RowFormat::Compact)
                            .columns
                            .len(),
                        _ => self
                            .tables
                            .iter()
                            .find(|t| t.name == table)
                            .map_or(0, |t| t.columns.len()),
                    };
                    if row.len() != want {
                        return Err(format!(
                            "an insert into '{table}' gives {} values for its {want} columns",
                            row.len()
                        ));
                    }
                }
                let keyless = self
                    .tables
                    .iter()
                    .any(|t| t.name == table && t.primary_key.is_empty());
                if keyless && !s.fits_keyless_table() {
                    return Err(format!(
                        "table '{table}' has no primary key: only inserts, and scans not bounded on its clustered index, can name it"
                    ));
                }
            }
        }
        Ok(())
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

    /// The plan a seed and a profile give.
    pub fn generate(
        seed: u64,
        profile: &Profile,
        flush: Option<FlushAtCommit>,
        canary: Option<String>,
    ) -> Plan {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let flush = flush.unwrap_or(match rng.gen_range(0..3) {
            0 => FlushAtCommit::Lazy,
            1 => FlushAtCommit::Sync,
            _ => FlushAtCommit::Write,
        });
        // Swarm testing: a random non-empty subset of the fault kinds.
        let mut faults: Vec<FaultKind> = profile
            .faults
            .iter()
            .copied()
            .filter(|k| !k.drawn_last() && !k.drawn_apart() && !k.drawn_with_ddl())
            .filter(|_| rng.gen_bool(0.6))
            .collect();
        if faults.is_empty() {
            faults.push(FaultKind::ProcessCrash);
        }
        let formats = [RowFormat::Redundant, RowFormat::Compact, RowFormat::Dynamic];
        let mut plan = Plan {
            seed,
            profile: profile.name.clone(),
            flush: flush.setting(),
            pool_pages: rng.gen_range(profile.pool_pages.0..=profile.pool_pages.1),
            lock_wait_timeout_s: rng.gen_range(1..=5),
            row_formats: [
                format_name(formats[rng.gen_range(0..3)]).into(),
                format_name(formats[rng.gen_range(0..3)]).into(),
            ],
            disk_headroom_kib: faults
                .contains(&FaultKind::DiskFull)
                .then(|| rng.gen_range(64..4096)),
            faults,
            canary,
            sessions: profile.sessions,
            transactions: Vec::new(),
            crash_after_ios: (0..profile.crashes)
                .map(|_| rng.gen_range(10..800))
                .collect(),
            shape: profile.shape,
            preload: profile.preload,
            sync_latency_us: profile.sync_latency_us,
            think_us: profile.think_us,
            group_commit: false,
            log_file_kib: default_log_file_kib(),
            crash_at_statements: Vec::new(),
            crash_after_checkpoints: Vec::new(),
            tables: Vec::new(),
            fsync_failures_at_statements: Vec::new(),
            schedule: None,
        };
        if let Some((lo, hi)) = profile.sessions_range {
            plan.sessions = rng.gen_range(lo..=hi);
        }
        let (t0, t1) = profile.lock_wait_timeout_s;
        if (t0, t1) != (1, 5) {
            plan.lock_wait_timeout_s = rng.gen_range(t0..=t1);
        }
        for _ in 0..profile.transactions {
            let mut t = match profile.shape {
                Shape::Mixed => txn(&mut rng, profile),
                Shape::HotRows => hot_txn(&mut rng, profile),
                Shape::Oltp => oltp_txn(&mut rng, profile),
                Shape::Transfer => transfer_txn(&mut rng, profile),
            };
            if profile.mixed_isolation && rng.gen_bool(0.5) {
                let levels = [
                    "READ-UNCOMMITTED",
                    "READ-COMMITTED",
                    "REPEATABLE-READ",
                    "SERIALIZABLE",
                ];
                t.isolation = Some(levels[rng.gen_range(0..4)].to_string());
            }
            plan.transactions.push(t);
        }
        // Drawn last, so that the rest of every plan is what it was before
        // group commit was simulated.
        plan.group_commit = rng.gen_bool(0.5);
        // Also last: a quarter of the mixed seeds think ten times longer,
        // so that their runs span seconds between crashes and the time
        // promise of flush 0 and 2 (a commit acknowledged a window before
        // a power loss survives it) has commits to hold the engine to.
        if profile.shape == Shape::Mixed && rng.gen_bool(0.25) {
            plan.think_us = plan.think_us.saturating_mul(10);
        }
        // The fault kinds added since (crashes during recovery, bit rot),
        // each switched on like the others, at the very end.
        for &k in profile.faults.iter().filter(|k| k.drawn_last()) {
            if rng.gen_bool(0.6) {
                plan.faults.push(k);
            }
        }
        // Last: a quarter of the plans run on the smallest log the engine
        // allows (two 130 KiB files, 256 KiB of redo; see
        // engine::handler::config::LOG_CAPACITY_MIN_BYTES), which wraps
        // around many times a run.
        if rng.gen_bool(0.25) {
            plan.log_file_kib = 130;
        }
        // Last again: some mixed plans hold long REPEATABLE READ readers,
        // whose one snapshot outlives many commits and purge rounds, so
        // that reads by old views (through the secondary indexes too) are
        // judged while purge works behind them.
        if profile.shape == Shape::Mixed && rng.gen_bool(0.3) {
            for _ in 0..rng.gen_range(1..=3) {
                let reader = long_reader(&mut rng, profile);
                let at = rng.gen_range(0..=plan.transactions.len());
                plan.transactions.insert(at, reader);
            }
        }
        // Last of all: some ROLLBACK TO SAVEPOINTs become RELEASE
        // SAVEPOINTs of the same name.
        for t in &mut plan.transactions {
            for st in &mut t.statements {
                if let PlannedStmt::RollbackTo(name) = st {
                    if rng.gen_bool(0.3) {
                        *st = PlannedStmt::ReleaseSavepoint(std::mem::take(name));
                    }
                }
            }
        }
        // Last: bounded scans on every index. In the mixed workloads some
        // scans get both ends, some of them exclusive, and some locking
        // scans go through a secondary index.
        if profile.shape == Shape::Mixed {
            for t in &mut plan.transactions {
                for st in &mut t.statements {
                    bound_scan(&mut rng, profile, st);
                }
            }
            // And some locking scans are repeated later in their
            // transaction, as an application re-reads what it locked: the
            // second must see what the first saw, changed only by the
            // transaction's own writes (no phantoms).
            for t in &mut plan.transactions {
                let mut i = 0;
                while i < t.statements.len() {
                    if matches!(t.statements[i], PlannedStmt::LockingScan { .. })
                        && rng.gen_bool(0.3)
                    {
                        let again = t.statements[i].clone();
                        let at = rng.gen_range(i + 1..=t.statements.len());
                        t.statements.insert(at, again);
                        i += 1;
                    }
                    i += 1;
                }
            }
        }
        // Last: a third of the plans that crash also crash at a statement
        // drawn from the whole workload. The I/O counts above count from
        // each start, so they strike within its first 800 I/Os; an
        // anchor reaches a long run's later part too.
        if profile.crashes > 0 && !plan.transactions.is_empty() && rng.gen_bool(0.33) {
            let txn = rng.gen_range(0..plan.transactions.len());
            let statement = rng.gen_range(0..=plan.transactions[txn].statements.len());
            plan.crash_at_statements.push(CrashAnchor {
                txn,
                statement,
                after_ios: rng.gen_range(0..40),
            });
        }
        // Last: some row statements of the mixed workloads leave their
        // transaction to run alone in autocommit mode, just before it
        // (crash anchors follow their transactions).
        if profile.shape == Shape::Mixed {
            let mut i = plan.transactions.len();
            while i > 0 {
                i -= 1;
                let t = &mut plan.transactions[i];
                let alone = t.statements.first().is_some_and(|st| {
                    !matches!(
                        st,
                        PlannedStmt::Savepoint(_)
                            | PlannedStmt::RollbackTo(_)
                            | PlannedStmt::ReleaseSavepoint(_)
                            | PlannedStmt::Transfer { .. }
                    )
                });
                if !alone || t.statements.len() < 2 || !rng.gen_bool(0.2) {
                    continue;
                }
                let st = t.statements.remove(0);
                plan.transactions.insert(
                    i,
                    PlannedTxn {
                        statements: vec![st],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
                for a in &mut plan.crash_at_statements {
                    if a.txn > i {
                        a.txn += 1;
                    } else if a.txn == i {
                        if a.statement == 0 {
                            // It named the statement that moved.
                        } else {
                            a.txn += 1;
                            a.statement -= 1;
                        }
                    }
                }
            }
        }
        // Last: the lock profiles roll back to savepoints too. A third of
        // their transactions set one before a random statement and roll
        // back to it (or, one time in four, release it) after a later one:
        // the locks taken in between stay until the transaction ends.
        if matches!(profile.shape, Shape::HotRows | Shape::Oltp) {
            for t in &mut plan.transactions {
                let n = t.statements.len();
                if n < 2 || !rng.gen_bool(0.33) {
                    continue;
                }
                let at = rng.gen_range(0..n - 1);
                let back = rng.gen_range(at + 1..n) + 1;
                let name = "lk".to_string();
                let end = if rng.gen_bool(0.25) {
                    PlannedStmt::ReleaseSavepoint(name.clone())
                } else {
                    PlannedStmt::RollbackTo(name.clone())
                };
                t.statements.insert(back, end);
                t.statements.insert(at, PlannedStmt::Savepoint(name));
            }
        }
        // Last: long secondary keys. A tenth of the values the mixed
        // workloads write to `docs.v` (VARCHAR(40), indexed) are 30 to 40
        // letters long, so that its index holds few entries a page and
        // splits and merges often.
        if profile.shape == Shape::Mixed {
            for t in &mut plan.transactions {
                for st in &mut t.statements {
                    let v = match st {
                        PlannedStmt::Insert { table, row } if table == "docs" => row.get_mut(1),
                        PlannedStmt::Update { table, set, .. } if table == "docs" => {
                            set.iter_mut().find(|(c, _)| c == "v").map(|(_, v)| v)
                        }
                        _ => None,
                    };
                    if let Some(v) = v.filter(|v| !matches!(v, PValue::Null)) {
                        if rng.gen_bool(0.1) {
                            let l = rng.gen_range(30..=40);
                            *v = text(&mut rng, l);
                        }
                    }
                }
            }
        }
        // Last: some updates of the mixed workloads move their row to a new
        // primary key (a delete and an insert in the engine, 1062 if the
        // key is taken).
        if profile.shape == Shape::Mixed {
            for t in &mut plan.transactions {
                for st in &mut t.statements {
                    if let PlannedStmt::Update { table, set, .. } = st {
                        if rng.gen_bool(0.15) {
                            let to = key(&mut rng, profile, table);
                            set.insert(0, ("id".to_string(), to));
                        }
                    }
                }
            }
        }
        // Kinds drawn apart (misdirected writes): their own generator, so
        // no draw above moved when they came.
        let mut apart = ChaCha8Rng::seed_from_u64(seed ^ 0xA9A2_7000_0000_0005);
        for &k in profile.faults.iter().filter(|k| k.drawn_apart()) {
            if apart.gen_bool(0.6) {
                plan.faults.push(k);
            }
        }
        // Half the mixed plans draw a table of their own (its own
        // generator too): its statements go into a third of the
        // transactions, one to three each, at drawn places.
        if profile.shape == Shape::Mixed && apart.gen_bool(0.5) {
            let format = format_name(formats[apart.gen_range(0..3)]);
            let spec = crate::schema::TableSpec::draw(&mut apart, "t1", format);
            let domain = (profile.key_space / 8).max(8);
            for i in 0..plan.transactions.len() {
                if plan.transactions[i].autocommit || !apart.gen_bool(0.33) {
                    continue;
                }
                for _ in 0..apart.gen_range(1..=3) {
                    let st = seed_table_stmt(&mut apart, profile, &spec, domain);
                    let at = apart.gen_range(0..=plan.transactions[i].statements.len());
                    plan.insert_statement(i, at, st);
                }
            }
            plan.tables.push(spec);
        }
        // Half the plans also crash just after one of the first
        // checkpoints of a (re)start (some as its slot is written, before
        // the sync), once or twice.
        if apart.gen_bool(0.5) {
            plan.crash_after_checkpoints = (0..apart.gen_range(1..=2))
                .map(|_| CheckpointCrash {
                    nth: apart.gen_range(1..=2),
                    after_ios: if apart.gen_bool(0.3) {
                        1
                    } else {
                        apart.gen_range(2..=40)
                    },
                })
                .collect();
        }
        // Last, from a generator of their own: two in five mixed plans
        // create and drop scratch tables while the workload runs, one to
        // four times, each DDL statement alone in an autocommit
        // transaction at a drawn place: a mostly valid sequence (a create
        // of a table that exists, 1050, and a drop of one that does not,
        // 1146, now and then). Half of them also crash a few I/O
        // operations after the statement is issued, inside the DDL; half
        // of those at the third, which in a CREATE TABLE is usually the
        // directory sync after the file's creation (exists, create,
        // sync_dir, unless the buffer pool had pages to flush first), where
        // a power loss may take the unsynced name away.
        let mut ddl = ChaCha8Rng::seed_from_u64(seed ^ 0xDD1D_0000_0000_0007);
        if profile.shape == Shape::Mixed && ddl.gen_bool(0.4) {
            let mut at: Vec<usize> = (0..ddl.gen_range(1..=4))
                .map(|_| ddl.gen_range(0..=plan.transactions.len()))
                .collect();
            at.sort_unstable();
            let mut exists = [false; SCRATCH_TABLES.len()];
            for (n, &pos) in at.iter().enumerate() {
                let i = ddl.gen_range(0..SCRATCH_TABLES.len());
                let table = SCRATCH_TABLES[i].to_string();
                let create = if exists[i] {
                    ddl.gen_bool(0.15)
                } else {
                    !ddl.gen_bool(0.1)
                };
                let st = if create {
                    exists[i] = true;
                    PlannedStmt::CreateTable {
                        table,
                        row_format: format_name(formats[ddl.gen_range(0..3)]).into(),
                    }
                } else {
                    exists[i] = false;
                    PlannedStmt::DropTable { table }
                };
                // Each earlier insertion moved this place on by one.
                let txn = pos + n;
                plan.insert_transaction(
                    txn,
                    PlannedTxn {
                        statements: vec![st],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
                if profile.crashes > 0 && ddl.gen_bool(0.5) {
                    plan.crash_at_statements.push(CrashAnchor {
                        txn,
                        statement: 0,
                        after_ios: if ddl.gen_bool(0.5) {
                            2
                        } else {
                            ddl.gen_range(0..12)
                        },
                    });
                }
            }
        }
        for &k in profile.faults.iter().filter(|k| k.drawn_with_ddl()) {
            if ddl.gen_bool(0.7) {
                plan.faults.push(k);
            }
        }
        // Last, from a generator of its own: a third of the mixed plans
        // have a table without a primary key, `t2` (clustered on InnoDB's
        // hidden row id), whose inserts and scans go into a third of the
        // transactions, one to three each, and into a few autocommit
        // inserts of their own.
        let mut bare = ChaCha8Rng::seed_from_u64(seed ^ 0x0B0D_0000_0000_0009);
        if profile.shape == Shape::Mixed && bare.gen_bool(0.35) {
            let format = format_name(formats[bare.gen_range(0..3)]);
            let spec = crate::schema::TableSpec::draw_without_key(&mut bare, "t2", format);
            let domain = (profile.key_space / 8).max(8);
            for i in 0..plan.transactions.len() {
                if plan.transactions[i].autocommit || !bare.gen_bool(0.33) {
                    continue;
                }
                for _ in 0..bare.gen_range(1..=3) {
                    let st = keyless_table_stmt(&mut bare, profile, &spec, domain);
                    let at = bare.gen_range(0..=plan.transactions[i].statements.len());
                    plan.insert_statement(i, at, st);
                }
            }
            for _ in 0..bare.gen_range(0..=3) {
                let row = (0..spec.columns.len())
                    .map(|c| spec.value(&mut bare, c, domain))
                    .collect();
                let at = bare.gen_range(0..=plan.transactions.len());
                plan.insert_transaction(
                    at,
                    PlannedTxn {
                        statements: vec![PlannedStmt::Insert {
                            table: spec.name.clone(),
                            row,
                        }],
                        rollback: false,
                        isolation: None,
                        autocommit: true,
                    },
                );
            }
            plan.tables.push(spec);
        }
        plan
    }
}

/// A statement on a table without a primary key, which nothing can
/// address by key: inserts of whole rows, and scans (locking ones too) of
/// its clustered index, whole, or of a secondary index, bounded by values
/// of the index's first column.
fn keyless_table_stmt(
    rng: &mut ChaCha8Rng,
    profile: &Profile,
    spec: &crate::schema::TableSpec,
    domain: u64,
) -> PlannedStmt {
    let table = spec.name.clone();
    if rng.gen_bool(0.55) {
        return PlannedStmt::Insert {
            row: (0..spec.columns.len())
                .map(|c| spec.value(rng, c, domain))
                .collect(),
            table,
        };
    }
    let which = rng.gen_range(0..=spec.indexes.len());
    let index = (which > 0).then(|| spec.indexes[which - 1].name.clone());
    let reverse = rng.gen_bool(0.5);
    let limit = rng.gen_range(1..12);
    let (mut from, mut to) = (None, None);
    let open = rng.gen_bool(0.3);
    if which > 0 && rng.gen_bool(0.6) {
        let first = spec.indexes[which - 1].columns[0];
        let (a, b) = (
            spec.value(rng, first, domain),
            spec.value(rng, first, domain),
        );
        (from, to) = scan_ends(rng, a, b, reverse);
    }
    if rng.gen_bool(profile.p_locking_read) {
        PlannedStmt::LockingScan {
            table,
            index,
            reverse,
            limit,
            from,
            to,
            open,
            exclusive: rng.gen_bool(0.5),
        }
    } else {
        PlannedStmt::Scan {
            table,
            index,
            reverse,
            limit,
            from,
            to,
            open,
        }
    }
}

/// Gives a scan (sometimes) bounds: a locking one may move to its table's
/// secondary index first; then, with even odds, a start, an end and
/// exclusive ends are drawn, in the index's terms (primary keys, `k`'s
/// values 0 to 49, or short strings for `v`).
fn bound_scan(rng: &mut ChaCha8Rng, profile: &Profile, st: &mut PlannedStmt) {
    let (table, index, reverse, from, to, open, locking) = match st {
        PlannedStmt::Scan {
            table,
            index,
            reverse,
            from,
            to,
            open,
            ..
        } => (table, index, *reverse, from, to, open, false),
        PlannedStmt::LockingScan {
            table,
            index,
            reverse,
            from,
            to,
            open,
            ..
        } => (table, index, *reverse, from, to, open, true),
        _ => return,
    };
    if locking && rng.gen_bool(0.3) {
        *index = Some(if table == "sb" { "k" } else { "v" }.into());
        *from = None;
    }
    if !rng.gen_bool(0.5) {
        return;
    }
    let draw = |rng: &mut ChaCha8Rng| match index.as_deref() {
        None => key(rng, profile, table),
        Some("k") => PValue::UInt(rng.gen_range(0..50)),
        _ => {
            let l = rng.gen_range(0..3);
            text(rng, l)
        }
    };
    let (a, b) = (draw(rng), draw(rng));
    (*from, *to) = scan_ends(rng, a, b, reverse);
    *open = rng.gen_bool(0.3);
}

/// A scan's ends from two drawn values: the lower one first (the higher
/// for a descending scan), each kept with its own odds (a start 0.8, an
/// end 0.6).
fn scan_ends(
    rng: &mut ChaCha8Rng,
    a: PValue,
    b: PValue,
    reverse: bool,
) -> (Option<PValue>, Option<PValue>) {
    use crate::judge::reads::to_model;
    let (lo, hi) = if to_model(&a.value()) <= to_model(&b.value()) {
        (a, b)
    } else {
        (b, a)
    };
    let (start, end) = if reverse { (hi, lo) } else { (lo, hi) };
    (
        rng.gen_bool(0.8).then_some(start),
        rng.gen_bool(0.6).then_some(end),
    )
}

/// A statement on a table the seed drew: inserts of whole rows, updates
/// of a column by primary key (sometimes a key column, sometimes an
/// indexed one, so that keys move and unique keys collide), deletes, point
/// reads, and scans (locking ones too) of any of its indexes, bounded by
/// values of the index's first column.
fn seed_table_stmt(
    rng: &mut ChaCha8Rng,
    profile: &Profile,
    spec: &crate::schema::TableSpec,
    domain: u64,
) -> PlannedStmt {
    let table = spec.name.clone();
    let key = |rng: &mut ChaCha8Rng| {
        PKey(
            spec.primary_key
                .iter()
                .map(|&c| spec.value(rng, c, domain))
                .collect(),
        )
    };
    match rng.gen_range(0..100) {
        0..=34 => PlannedStmt::Insert {
            row: (0..spec.columns.len())
                .map(|c| spec.value(rng, c, domain))
                .collect(),
            table,
        },
        35..=54 => {
            let c = rng.gen_range(0..spec.columns.len());
            let set = vec![(spec.columns[c].name.clone(), spec.value(rng, c, domain))];
            PlannedStmt::Update {
                key: key(rng),
                table,
                set,
            }
        }
        55..=64 => PlannedStmt::Delete {
            key: key(rng),
            table,
        },
        65..=79 if rng.gen_bool(profile.p_locking_read) => PlannedStmt::LockingGet {
            key: key(rng),
            table,
            exclusive: rng.gen_bool(0.5),
        },
        65..=79 => PlannedStmt::Get {
            key: key(rng),
            table,
        },
        _ => {
            let which = rng.gen_range(0..=spec.indexes.len());
            let (index, first) = match which {
                0 => (None, spec.primary_key[0]),
                i => (
                    Some(spec.indexes[i - 1].name.clone()),
                    spec.indexes[i - 1].columns[0],
                ),
            };
            let reverse = rng.gen_bool(0.5);
            let limit = rng.gen_range(1..12);
            let (mut from, mut to) = (None, None);
            if rng.gen_bool(0.6) {
                let (a, b) = (
                    spec.value(rng, first, domain),
                    spec.value(rng, first, domain),
                );
                (from, to) = scan_ends(rng, a, b, reverse);
            }
            let open = rng.gen_bool(0.3);
            if rng.gen_bool(profile.p_locking_read) {
                PlannedStmt::LockingScan {
                    table,
                    index,
                    reverse,
                    limit,
                    from,
                    to,
                    open,
                    exclusive: rng.gen_bool(0.5),
                }
            } else {
                PlannedStmt::Scan {
                    table,
                    index,
                    reverse,
                    limit,
                    from,
                    to,
                    open,
                }
            }
        }
    }
}

/// A REPEATABLE READ transaction of 10 to 40 reads: point reads and scans
/// of the secondary indexes.
fn long_reader(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let statements = (0..rng.gen_range(10..=40))
        .map(|_| {
            let table = if rng.gen_bool(0.6) { "sb" } else { "docs" };
            if rng.gen_bool(0.6) {
                PlannedStmt::Scan {
                    table: table.into(),
                    index: Some(if table == "sb" { "k" } else { "v" }.into()),
                    reverse: rng.gen_bool(0.5),
                    limit: rng.gen_range(1..40),
                    from: None,
                    to: None,
                    open: false,
                }
            } else {
                PlannedStmt::Get {
                    table: table.into(),
                    key: key(rng, profile, table).into(),
                }
            }
        })
        .collect();
    PlannedTxn {
        statements,
        rollback: false,
        isolation: Some("REPEATABLE-READ".into()),
        autocommit: false,
    }
}

fn key(rng: &mut ChaCha8Rng, profile: &Profile, table: &str) -> PValue {
    let k = rng.gen_range(1..=profile.key_space);
    if table == "sb" {
        PValue::UInt(k)
    } else {
        PValue::Int(k as i64)
    }
}

fn doc(rng: &mut ChaCha8Rng, profile: &Profile) -> PValue {
    if rng.gen_bool(0.1) {
        PValue::Null
    } else if rng.gen_bool(profile.p_long_value) {
        PValue::Long {
            len: rng.gen_range(1_000..40_000),
            seed: rng.gen(),
        }
    } else {
        let len = rng.gen_range(0..300);
        text(rng, len)
    }
}

fn row(rng: &mut ChaCha8Rng, profile: &Profile, table: &str, key: PValue) -> Vec<PValue> {
    if table == "sb" {
        let c_len = rng.gen_range(1..=120);
        vec![
            key,
            PValue::UInt(rng.gen_range(0..50)),
            text(rng, c_len),
            text(rng, 8),
        ]
    } else {
        let v = if rng.gen_bool(0.2) {
            PValue::Null
        } else {
            let l = rng.gen_range(0..12);
            text(rng, l)
        };
        vec![key, v, doc(rng, profile)]
    }
}

fn txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let n = rng.gen_range(1..=profile.max_statements);
    let mut statements = Vec::with_capacity(n);
    let mut sp = 0;
    for _ in 0..n {
        if rng.gen_bool(profile.p_savepoint) {
            if sp > 0 && rng.gen_bool(0.5) {
                statements.push(PlannedStmt::RollbackTo(format!(
                    "sp{}",
                    rng.gen_range(0..sp)
                )));
            } else {
                statements.push(PlannedStmt::Savepoint(format!("sp{sp}")));
                sp += 1;
            }
            continue;
        }
        let table = if rng.gen_bool(0.6) { "sb" } else { "docs" };
        let k = key(rng, profile, table);
        let stmt = match rng.gen_range(0..100) {
            0..=34 => PlannedStmt::Insert {
                table: table.into(),
                row: row(rng, profile, table, k),
            },
            35..=59 => {
                let set = if table == "sb" {
                    if rng.gen_bool(0.5) {
                        vec![("k".to_string(), PValue::UInt(rng.gen_range(0..50)))]
                    } else {
                        let l = rng.gen_range(1..=120);
                        vec![("c".to_string(), text(rng, l))]
                    }
                } else if rng.gen_bool(0.5) {
                    let l = rng.gen_range(0..12);
                    vec![("v".to_string(), text(rng, l))]
                } else {
                    vec![("doc".to_string(), doc(rng, profile))]
                };
                PlannedStmt::Update {
                    table: table.into(),
                    key: k.clone().into(),
                    set,
                }
            }
            60..=74 => PlannedStmt::Delete {
                table: table.into(),
                key: k.clone().into(),
            },
            75..=89 if rng.gen_bool(profile.p_locking_read) => PlannedStmt::LockingGet {
                table: table.into(),
                key: k.clone().into(),
                exclusive: rng.gen_bool(0.5),
            },
            75..=89 => PlannedStmt::Get {
                table: table.into(),
                key: k.clone().into(),
            },
            _ if rng.gen_bool(profile.p_locking_read) => PlannedStmt::LockingScan {
                table: table.into(),
                index: None,
                reverse: rng.gen_bool(0.5),
                limit: rng.gen_range(1..10),
                from: Some(key(rng, profile, table)),
                to: None,
                open: false,
                exclusive: rng.gen_bool(0.5),
            },
            _ => PlannedStmt::Scan {
                table: table.into(),
                index: if rng.gen_bool(0.5) {
                    None
                } else {
                    Some(if table == "sb" {
                        "k".into()
                    } else {
                        "v".into()
                    })
                },
                reverse: rng.gen_bool(0.5),
                limit: rng.gen_range(1..20),
                from: None,
                to: None,
                open: false,
            },
        };
        statements.push(stmt);
    }
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
        isolation: None,
        autocommit: false,
    }
}

/// A hot-rows transaction: updates and reads of a few preloaded rows.
fn hot_txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let n = rng.gen_range(1..=profile.max_statements);
    let statements = (0..n)
        .map(|_| {
            let k = PValue::UInt(rng.gen_range(1..=profile.key_space));
            match rng.gen_range(0..10) {
                0..=4 => PlannedStmt::Update {
                    table: "sb".into(),
                    key: k.clone().into(),
                    set: vec![("k".into(), PValue::UInt(rng.gen_range(0..50)))],
                },
                5..=7 => PlannedStmt::LockingGet {
                    table: "sb".into(),
                    key: k.clone().into(),
                    exclusive: rng.gen_bool(0.6),
                },
                // A short locking range over the hot rows: it locks them
                // one after another, so it can wait again after a grant.
                8 => PlannedStmt::LockingScan {
                    table: "sb".into(),
                    index: None,
                    reverse: rng.gen_bool(0.5),
                    limit: rng.gen_range(2..=3),
                    from: Some(k),
                    to: None,
                    open: false,
                    exclusive: rng.gen_bool(0.6),
                },
                _ => PlannedStmt::Get {
                    table: "sb".into(),
                    key: k.clone().into(),
                },
            }
        })
        .collect();
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
        isolation: None,
        autocommit: false,
    }
}

/// sysbench's oltp_read_write transaction on the preloaded ids.
fn oltp_txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let mut id = || PValue::UInt(rng.gen_range(1..=profile.key_space));
    let mut statements: Vec<PlannedStmt> = (0..10)
        .map(|_| PlannedStmt::Get {
            table: "sb".into(),
            key: id().into(),
        })
        .collect();
    statements.push(PlannedStmt::Scan {
        table: "sb".into(),
        index: None,
        reverse: false,
        limit: 100,
        from: Some(id()),
        to: None,
        open: false,
    });
    statements.push(PlannedStmt::Update {
        table: "sb".into(),
        key: id().into(),
        set: vec![("k".into(), PValue::UInt(rng.gen_range(0..50)))],
    });
    let c_len = rng.gen_range(1..=120);
    let c = text(rng, c_len);
    statements.push(PlannedStmt::Update {
        table: "sb".into(),
        key: PValue::UInt(rng.gen_range(1..=profile.key_space)).into(),
        set: vec![("c".into(), c)],
    });
    let gone = PValue::UInt(rng.gen_range(1..=profile.key_space));
    statements.push(PlannedStmt::Delete {
        table: "sb".into(),
        key: gone.clone().into(),
    });
    let row = row(rng, profile, "sb", gone);
    statements.push(PlannedStmt::Insert {
        table: "sb".into(),
        row,
    });
    PlannedTxn {
        statements,
        rollback: false,
        isolation: None,
        autocommit: false,
    }
}

/// Transfers between accounts, in random order of the two accounts.
fn transfer_txn(rng: &mut ChaCha8Rng, profile: &Profile) -> PlannedTxn {
    let n = rng.gen_range(1..=profile.max_statements);
    let statements = (0..n)
        .map(|_| {
            let from = rng.gen_range(1..=profile.key_space);
            let mut to = rng.gen_range(1..profile.key_space.max(2));
            if to >= from {
                to += 1;
            }
            PlannedStmt::Transfer {
                from,
                to: to.min(profile.key_space.max(2)),
                amount: rng.gen_range(1..=300),
            }
        })
        .collect();
    PlannedTxn {
        statements,
        rollback: rng.gen_bool(profile.p_rollback),
        isolation: None,
        autocommit: false,
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
