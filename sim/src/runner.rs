//! The simulation runner: one seeded, deterministic run of the engine in
//! the simulated world, judged by the recovery oracle.
//!
//! ```text
//! seed ─► ChaCha8 ─► configuration (flush setting, pool, row formats)
//!                 ├► swarm: which of the profile's fault kinds are on
//!                 ├► scheduler: which session steps next
//!                 ├► workload: each transaction's statements
//!                 └► crash points and what survives them
//! ```
//!
//! Sessions run transactions of inserts, updates, deletes, reads, savepoints
//! and rollbacks. Every statement's result is checked in lockstep against a
//! model (the committed state plus the transaction's own writes): a
//! duplicate key where the model has none, or a row count that differs, is
//! a violation. Acknowledged commits enter a [`CommitHistory`]. At each
//! crash the engine is dropped, the disk decides what survived, the engine
//! reopens and recovers, and the oracle judges the recovered state: it must
//! equal the state after the first k commits, k between what the flush
//! setting promised and what was acknowledged; CHECK TABLE must pass.
//!
//! Everything nondeterministic comes from the seed, so a run is a pure
//! function of (seed, profile, options); [`Outcome::trace_hash`] lets a
//! determinism check compare two runs.

use crate::clock::SimClock;
use crate::judge::durability::{CommitRecord, DurabilityJudge};
use crate::plan::{format_of, Plan, PlannedStmt};
use crate::profile::{FaultKind, Profile};
use crate::storage::faults::FaultConfig;
use crate::storage::{CrashMode, PowerLossPolicy, SimStorage};
use engine::redo::LogConfig;
use engine::{
    Canaries, Canary, Config, Engine, Error, FlushAtCommit, RangeBound, Request, Response,
    RowFormat, SessionId, Step, Value,
};
use models::lock::{LockOracle, OEvent, OKind, OMode, OTarget, RKind, TMode};
use models::{CommitHistory, Db, ModelValue, RecoveryVerdict, Row, TxnEffects, Write};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Tables every run creates.
pub const TABLES: [&str; 2] = ["sb", "docs"];

/// What to run besides the seed and profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Force a flush setting instead of drawing one.
    pub flush: Option<FlushAtCommit>,
    /// Plant a canary: an engine canary's name, or `lying-fsync`.
    pub canary: Option<String>,
    /// Keep the trace lines (they are always hashed).
    pub keep_trace: bool,
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Statements submitted.
    pub statements: u64,
    /// Commits acknowledged.
    pub commits: u64,
    /// Transactions rolled back (by ROLLBACK or by the engine).
    pub rollbacks: u64,
    /// Statements that waited.
    pub waits: u64,
    /// Commits that waited for a group commit's sync.
    pub commit_waits: u64,
    /// Transactions chosen as deadlock victims (error 1213).
    pub deadlocks: u64,
    /// Statements that timed out waiting for a lock (error 1205).
    pub lock_timeouts: u64,
    /// Simulated microseconds when the workload ended (before the final
    /// crash and its recovery): the denominator of transaction rates.
    pub workload_us: u64,
    /// Crash-and-recover cycles.
    pub crashes: u64,
    /// Simulated microseconds.
    pub sim_us: u64,
    /// Simulated I/O operations.
    pub io_ops: u64,
    /// Injected fsync failures.
    pub fsync_failures: u64,
    /// Writes refused by a full disk.
    pub full_disk_errors: u64,
    /// Pages recovery restored from the doublewrite buffer (torn or
    /// damaged home pages repaired).
    pub pages_repaired: u64,
    /// Redo records recovery applied.
    pub redo_records_applied: u64,
    /// Transactions recovery rolled back (they never committed).
    pub recovery_rollbacks: u64,
    /// Gap locks inherited by a successor when a record went away.
    pub locks_inherited: u64,
    /// Deadlock victims that were not the requester: the weight rule
    /// picked the lighter transaction waiting for it.
    pub victims_by_weight: u64,
    /// Statements that waited again after a wait of theirs was granted.
    pub rewaits: u64,
    /// Crashes inside recovery.
    pub recovery_crashes: u64,
    /// Bits bit rot flipped in data files.
    pub bit_flips: u64,
    /// Runs ended because the engine reported a page that bit rot had
    /// damaged (caught by page validation; InnoDB too refuses to go on).
    pub bit_rot_caught: u64,
}

impl RunStats {
    /// Adds another run's counters (a campaign's totals).
    pub fn add(&mut self, o: &RunStats) {
        let RunStats {
            statements,
            commits,
            rollbacks,
            waits,
            commit_waits,
            deadlocks,
            lock_timeouts,
            workload_us,
            crashes,
            sim_us,
            io_ops,
            fsync_failures,
            full_disk_errors,
            pages_repaired,
            redo_records_applied,
            recovery_rollbacks,
            locks_inherited,
            victims_by_weight,
            rewaits,
            recovery_crashes,
            bit_flips,
            bit_rot_caught,
        } = o;
        self.statements += statements;
        self.commits += commits;
        self.rollbacks += rollbacks;
        self.waits += waits;
        self.commit_waits += commit_waits;
        self.deadlocks += deadlocks;
        self.lock_timeouts += lock_timeouts;
        self.workload_us += workload_us;
        self.crashes += crashes;
        self.sim_us += sim_us;
        self.io_ops += io_ops;
        self.fsync_failures += fsync_failures;
        self.full_disk_errors += full_disk_errors;
        self.pages_repaired += pages_repaired;
        self.redo_records_applied += redo_records_applied;
        self.recovery_rollbacks += recovery_rollbacks;
        self.locks_inherited += locks_inherited;
        self.victims_by_weight += victims_by_weight;
        self.rewaits += rewaits;
        self.recovery_crashes += recovery_crashes;
        self.bit_flips += bit_flips;
        self.bit_rot_caught += bit_rot_caught;
    }

    /// The faults injected and the rare paths reached, by name: what a
    /// campaign shows it exercised.
    pub fn reached(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("crashes", self.crashes),
            ("crashes during recovery", self.recovery_crashes),
            ("fsync failures", self.fsync_failures),
            ("full-disk errors", self.full_disk_errors),
            ("bits flipped by bit rot", self.bit_flips),
            ("bit rot caught", self.bit_rot_caught),
            ("torn pages repaired", self.pages_repaired),
            ("redo records applied", self.redo_records_applied),
            (
                "transactions rolled back at recovery",
                self.recovery_rollbacks,
            ),
            ("lock waits", self.waits),
            ("waits again after a grant", self.rewaits),
            ("lock wait timeouts", self.lock_timeouts),
            ("deadlocks", self.deadlocks),
            ("victims chosen by weight", self.victims_by_weight),
            ("locks inherited", self.locks_inherited),
            ("group commit waits", self.commit_waits),
        ]
    }
}

/// The result of a run.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The seed.
    pub seed: u64,
    /// The profile's name.
    pub profile: String,
    /// What the checkers found wrong; empty for a good run.
    pub violations: Vec<String>,
    /// Hash of the trace (FNV-1a over 8-byte words): equal for two runs of
    /// the same inputs.
    pub trace_hash: u64,
    /// The trace lines, when asked for.
    pub trace: Vec<String>,
    /// Counters.
    pub stats: RunStats,
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// Unknown canary name.
    UnknownCanary(String),
    /// The profile is invalid.
    BadProfile(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::UnknownCanary(n) => {
                write!(f, "unknown canary '{n}' (see `innosim canaries`)")
            }
            RunError::BadProfile(why) => write!(f, "invalid profile: {why}"),
        }
    }
}

struct Trace {
    hash: u64,
    lines: Option<Vec<String>>,
}

impl Trace {
    /// Hashes the line and its newline FNV-1a style, eight bytes a step
    /// (one statement's line is hashed at every step of every seed).
    fn push(&mut self, line: &str) {
        const PRIME: u64 = 0x100_0000_01b3;
        let bytes = line.as_bytes();
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.hash ^= u64::from_le_bytes(w.try_into().expect("eight bytes"));
            self.hash = self.hash.wrapping_mul(PRIME);
        }
        for b in words.remainder().iter().chain(b"\n") {
            self.hash ^= *b as u64;
            self.hash = self.hash.wrapping_mul(PRIME);
        }
        if let Some(l) = &mut self.lines {
            l.push(line.to_string());
        }
    }
}

enum Stmt {
    Req(Request),
    Savepoint(String),
    RollbackTo(String),
    /// A transfer's debit, once both balances are read.
    Debit {
        from: u64,
        to: u64,
        amount: u64,
    },
    /// A transfer's credit, as the debit decided.
    Credit,
}

struct Txn {
    stmts: Vec<Stmt>,
    next: usize,
    rollback: bool,
    writes: Vec<Write>,
    savepoints: Vec<(String, usize)>,
    ending: bool,
    /// Balances (`sb.k`) its locking reads returned, by account.
    balances: BTreeMap<u64, Option<u64>>,
    /// The credit the last debit owes: account and new balance.
    credit: Option<(u64, u64)>,
    /// A transfer's client rolls the whole transaction back when a
    /// statement times out, rather than leave a transfer half done.
    abort_on_timeout: bool,
    /// Its isolation level.
    isolation: engine::Isolation,
    /// REPEATABLE READ: the committed state its first consistent read saw,
    /// which every later one must see too. Shared with the world's
    /// committed state until the next commit changes that.
    snapshot: Option<Rc<Db>>,
    /// Group commit: its commit is written (its index in the commit
    /// history) and waits for the sync that acknowledges it.
    commit_written: Option<usize>,
}

struct Sess {
    id: SessionId,
    /// The session's isolation level (SET persists across transactions).
    isolation: engine::Isolation,
    txn: Option<Txn>,
    waiting: bool,
    /// The engine's id of the open transaction, once known.
    trx: Option<u64>,
    /// The statement a waiting session runs, so that once resumed it is
    /// judged as what it was.
    last: Option<Request>,
    /// The simulated instant its current statement was issued.
    issued_us: u64,
}

fn to_model(v: &Value) -> ModelValue {
    match v {
        Value::Null => ModelValue::Null,
        Value::Int(i) => ModelValue::Int(*i as i128),
        Value::UInt(u) => ModelValue::Int(*u as i128),
        Value::Bytes(b) => ModelValue::Bytes(b.as_slice().into()),
    }
}

/// Whether `v` is `m` as the model sees it (`to_model(v) == *m`, without
/// building it).
fn same_value(v: &Value, m: &ModelValue) -> bool {
    match (v, m) {
        (Value::Null, ModelValue::Null) => true,
        (Value::Int(i), ModelValue::Int(j)) => *i as i128 == *j,
        (Value::UInt(u), ModelValue::Int(j)) => *u as i128 == *j,
        (Value::Bytes(b), ModelValue::Bytes(c)) => b[..] == c[..],
        _ => false,
    }
}

/// Whether a read's response holds exactly the rows `want`
/// (`model_rows(resp) == want`, without building them).
fn rows_match(resp: &Response, want: &[Row]) -> bool {
    let same_row =
        |r: &[Value], w: &Row| r.len() == w.len() && r.iter().zip(w).all(|(v, m)| same_value(v, m));
    match resp {
        Response::Row(Some(r)) => want.len() == 1 && same_row(r, &want[0]),
        Response::Rows(rs) => {
            rs.len() == want.len() && rs.iter().zip(want).all(|(r, w)| same_row(r, w))
        }
        _ => want.is_empty(),
    }
}

fn column_names(table: &str) -> &'static [&'static str] {
    if table == "sb" {
        &["id", "k", "c", "pad"]
    } else {
        &["id", "v", "doc"]
    }
}

/// A short description of a request for the trace (no long payloads).
/// Built once per statement, so written without `format!` per value.
pub fn describe(r: &Request) -> String {
    use std::fmt::Write as _;
    fn v(out: &mut String, x: &Value) {
        match x {
            Value::Null => out.push_str("NULL"),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::UInt(u) => {
                let _ = write!(out, "{u}");
            }
            Value::Bytes(b) if b.len() > 16 => {
                let _ = write!(out, "<{} bytes>", b.len());
            }
            Value::Bytes(b) => out.extend(b.iter().map(|&c| char::from(c))),
        }
    }
    fn vs(out: &mut String, xs: &[Value]) {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v(out, x);
        }
    }
    let mut out = String::with_capacity(48);
    match r {
        Request::Insert { table, row } => {
            let _ = write!(out, "insert {table} (");
            vs(&mut out, row);
            out.push(')');
        }
        Request::Update { table, key, set } => {
            let _ = write!(out, "update {table} [");
            vs(&mut out, key);
            out.push_str("] set ");
            for (i, (c, x)) in set.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(c);
                out.push('=');
                v(&mut out, x);
            }
        }
        Request::Delete { table, key } => {
            let _ = write!(out, "delete {table} [");
            vs(&mut out, key);
            out.push(']');
        }
        Request::Get { table, key } => {
            let _ = write!(out, "get {table} [");
            vs(&mut out, key);
            out.push(']');
        }
        Request::Scan {
            table,
            index,
            reverse,
            limit,
            ..
        } => {
            let _ = write!(out, "scan {table} {index:?} rev={reverse} limit={limit:?}");
        }
        Request::Locking { read, exclusive } => {
            out.push_str(&describe(read));
            out.push_str(if *exclusive {
                " for update"
            } else {
                " lock in share mode"
            });
        }
        other => {
            let _ = write!(out, "{other:?}");
        }
    }
    out
}

struct World {
    /// Replays the engine's lock events (see models::lock).
    locks: LockOracle,
    /// For transfers: the total of every balance.
    transfer_total: Option<i128>,
    storage: SimStorage,
    clock: SimClock,
    config: Config,
    engine: Option<Engine>,
    history: CommitHistory,
    /// The state after every acknowledged commit (kept up to date, so that
    /// statements are judged without replaying the history). Copied on
    /// write: REPEATABLE READ snapshots share it.
    committed: Rc<Db>,
    /// The commits since the last recovery as the client saw them, and
    /// the engine's claims checked against the disk (see
    /// [`crate::judge::durability`]).
    durability: DurabilityJudge,
    /// The disk's count of failed log fsyncs at the last restart: one more
    /// since means a failed fsync dropped log writes.
    log_fsync_failures: u64,
    /// The clock when the engine call being made began: the lock oracle
    /// times waits from the runner's instants, not the engine's stamps.
    call_start_us: u64,
    /// Decides crashes inside recovery (its own stream, so that seeds
    /// without them run as before).
    recovery_rng: ChaCha8Rng,
    /// Pages bit rot has flipped bits in, by file and page number: a
    /// corrupt-page report on one of them is the fault caught.
    rotted_pages: std::collections::BTreeSet<(String, u32)>,
    trace: Trace,
    /// Reused for each statement's result in the trace.
    short_buf: String,
    /// Reused for every statement's trace line.
    line_buf: String,
    violations: Vec<String>,
    stats: RunStats,
    faults: Vec<FaultKind>,
    /// The plan's crash points, and how many have been armed.
    crash_plan: Vec<u64>,
    crashes_armed: usize,
}

impl World {
    /// Records a trace event: one JSON object, with the simulated time and
    /// the I/O index at which it happened.
    fn event(&mut self, kind: &str, fields: serde_json::Value) {
        let mut obj = serde_json::Map::new();
        obj.insert("t_us".into(), json!(self.clock_now()));
        obj.insert("io".into(), json!(self.storage.counters().ops));
        obj.insert("kind".into(), json!(kind));
        if let serde_json::Value::Object(f) = fields {
            obj.extend(f);
        }
        self.trace.push(&serde_json::Value::Object(obj).to_string());
    }

    /// The frequent event, written without building a JSON tree (the fuzzer
    /// hashes one per statement). Same shape as [`World::event`]'s.
    fn statement_event(&mut self, session: u32, op: &str, result: &str) {
        use std::fmt::Write as _;
        let mut line = std::mem::take(&mut self.line_buf);
        line.clear();
        let _ = write!(
            line,
            "{{\"io\":{},\"kind\":\"statement\",\"op\":",
            self.storage.counters().ops
        );
        push_json_str(&mut line, op);
        line.push_str(",\"result\":");
        push_json_str(&mut line, result);
        let _ = write!(
            line,
            ",\"session\":{session},\"t_us\":{}}}",
            self.clock_now()
        );
        self.trace.push(&line);
        self.line_buf = line;
    }

    fn engine(&mut self) -> &mut Engine {
        self.engine
            .as_mut()
            .expect("the engine is open between crashes")
    }

    /// Takes the engine's written and flushed LSN as claims, which the
    /// durability judge holds against the disk's record of log syncs.
    fn observe_log(&mut self) {
        if let Some(e) = &self.engine {
            let (written, flushed) = (e.pager().log.written_lsn(), e.pager().log.flushed_lsn());
            let log_syncs = self.storage.counters().log_syncs;
            if let Some(v) = self.durability.observe(written, flushed, log_syncs) {
                self.violations.push(v);
            }
        }
    }

    /// Starts the durability record afresh (after setup or a recovery).
    fn reset_durability(&mut self) {
        if let Some(e) = &self.engine {
            let (written, flushed) = (e.pager().log.written_lsn(), e.pager().log.flushed_lsn());
            let log_syncs = self.storage.counters().log_syncs;
            self.durability.reset(written, flushed, log_syncs);
        }
    }

    /// The state a session sees: committed rows plus its own writes.
    fn visible(&self, writes: &[Write], table: &str, key: &[ModelValue]) -> Option<Row> {
        for w in writes.iter().rev() {
            if w.table == table && w.key == key {
                return w.row.clone();
            }
        }
        self.committed
            .tables
            .get(table)
            .and_then(|t| t.get(key))
            .cloned()
    }
}

/// What the model says a statement does, given the rows it sees.
fn expected(
    world: &World,
    txn: &Txn,
    req: &Request,
) -> Option<(Result<Response, u16>, Option<Write>)> {
    let key_of = |k: &[Value]| k.iter().map(to_model).collect::<Vec<_>>();
    match req {
        Request::Insert { table, row } => {
            let key = key_of(&row[..1]);
            if world.visible(&txn.writes, table, &key).is_some() {
                Some((Err(1062), None))
            } else {
                Some((
                    Ok(Response::Affected(1)),
                    Some(Write {
                        table: table.clone(),
                        key,
                        row: Some(row.iter().map(to_model).collect()),
                    }),
                ))
            }
        }
        Request::Update { table, key, set } => {
            let key = key_of(key);
            let Some(mut row) = world.visible(&txn.writes, table, &key) else {
                return Some((Ok(Response::Affected(0)), None));
            };
            let old = row.clone();
            for (col, v) in set {
                let c = column_names(table)
                    .iter()
                    .position(|n| n == col)
                    .expect("generated column");
                row[c] = to_model(v);
            }
            if row == old {
                return Some((Ok(Response::Affected(0)), None));
            }
            Some((
                Ok(Response::Affected(1)),
                Some(Write {
                    table: table.clone(),
                    key,
                    row: Some(row),
                }),
            ))
        }
        Request::Delete { table, key } => {
            let key = key_of(key);
            match world.visible(&txn.writes, table, &key) {
                Some(_) => Some((
                    Ok(Response::Affected(1)),
                    Some(Write {
                        table: table.clone(),
                        key,
                        row: None,
                    }),
                )),
                None => Some((Ok(Response::Affected(0)), None)),
            }
        }
        // Reads see a snapshot; the lock issue brings their oracle.
        _ => None,
    }
}

/// A read's rows in the model's terms.
fn model_rows(resp: &Response) -> Vec<Row> {
    match resp {
        Response::Row(Some(r)) => vec![r.iter().map(to_model).collect()],
        Response::Rows(rs) => rs
            .iter()
            .map(|r| r.iter().map(to_model).collect())
            .collect(),
        _ => Vec::new(),
    }
}

/// What a read must return, seeing `base` (a committed state) plus its
/// transaction's own writes. A locking (current) read sees the committed
/// state: its locks serialize it after every committed writer of what it
/// reads; a consistent read sees its snapshot. `None` for reads the model
/// does not order (secondary indexes).
fn read_expected(base: &Db, txn: &Txn, read: &Request) -> Option<Vec<Row>> {
    let key_of = |k: &[Value]| k.iter().map(to_model).collect::<Vec<_>>();
    match read {
        Request::Get { table, key } => {
            let key = key_of(key);
            let own = txn
                .writes
                .iter()
                .rev()
                .find(|w| &w.table == table && w.key == key);
            let row = match own {
                Some(w) => w.row.clone(),
                None => base
                    .tables
                    .get(table.as_str())
                    .and_then(|t| t.get(&key))
                    .cloned(),
            };
            Some(row.into_iter().collect())
        }
        Request::Scan {
            table,
            index: None,
            low,
            high,
            reverse,
            limit,
        } => {
            use std::ops::Bound as B;
            let bound = |b: &RangeBound| match b {
                RangeBound::Unbounded => B::Unbounded,
                RangeBound::Included(v) => B::Included(key_of(v)),
                RangeBound::Excluded(v) => B::Excluded(key_of(v)),
            };
            let (lo, hi) = (bound(low), bound(high));
            let inside = |k: &[ModelValue]| {
                let ok_low = match &lo {
                    B::Unbounded => true,
                    B::Included(v) => k >= v.as_slice(),
                    B::Excluded(v) => k > v.as_slice(),
                };
                let ok_high = match &hi {
                    B::Unbounded => true,
                    B::Included(v) => k <= v.as_slice(),
                    B::Excluded(v) => k < v.as_slice(),
                };
                ok_low && ok_high
            };
            // Only as many committed rows as the limit can need (own
            // deletes may remove some): from the end the scan starts at.
            let own: Vec<&Write> = txn.writes.iter().filter(|w| &w.table == table).collect();
            let need = limit.unwrap_or(usize::MAX).saturating_add(own.len());
            let mut rows: BTreeMap<Vec<ModelValue>, Row> = BTreeMap::new();
            if let Some(t) = base.tables.get(table.as_str()) {
                if lo_le_hi(&lo, &hi) {
                    let range = t.range::<Vec<ModelValue>, _>((lo.clone(), hi.clone()));
                    let picked: Box<dyn Iterator<Item = (&Vec<ModelValue>, &Row)>> = if *reverse {
                        Box::new(range.rev().take(need))
                    } else {
                        Box::new(range.take(need))
                    };
                    rows.extend(picked.map(|(k, r)| (k.clone(), r.clone())));
                }
            }
            let boundary = if *reverse {
                rows.keys().next().cloned()
            } else {
                rows.keys().next_back().cloned()
            };
            let truncated = rows.len() == need;
            for w in own {
                // An own write past the rows taken matters only if the
                // committed rows were cut short before it.
                let beyond = truncated
                    && boundary.as_ref().is_some_and(|b| {
                        if *reverse {
                            &w.key < b
                        } else {
                            &w.key > b
                        }
                    });
                if beyond {
                    continue;
                }
                match &w.row {
                    Some(r) => rows.insert(w.key.clone(), r.clone()),
                    None => rows.remove(&w.key),
                };
            }
            let mut out: Vec<Row> = rows
                .into_iter()
                .filter(|(k, _)| inside(k))
                .map(|(_, r)| r)
                .collect();
            if *reverse {
                out.reverse();
            }
            out.truncate(limit.unwrap_or(usize::MAX));
            Some(out)
        }
        _ => None,
    }
}

/// Whether a range with these ends is not empty-by-construction
/// (`BTreeMap::range` panics on a start above the end).
fn lo_le_hi(lo: &std::ops::Bound<Vec<ModelValue>>, hi: &std::ops::Bound<Vec<ModelValue>>) -> bool {
    use std::ops::Bound as B;
    match (lo, hi) {
        (B::Included(a), B::Included(b)) => a <= b,
        (B::Included(a), B::Excluded(b))
        | (B::Excluded(a), B::Included(b))
        | (B::Excluded(a), B::Excluded(b)) => a < b,
        _ => true,
    }
}

fn parse_canary(name: &str) -> Result<(Canaries, bool), RunError> {
    if name == "lying-fsync" {
        return Ok((Canaries::NONE, true));
    }
    match Canary::from_name(name) {
        Some(c) => Ok((Canaries::NONE.with(c), false)),
        None => Err(RunError::UnknownCanary(name.to_string())),
    }
}

/// Runs one simulation: the plan a seed and a profile give, executed.
pub fn run(seed: u64, profile: &Profile, opts: &RunOptions) -> Result<Outcome, RunError> {
    profile.validate().map_err(RunError::BadProfile)?;
    if let Some(n) = &opts.canary {
        parse_canary(n)?;
    }
    let plan = Plan::generate(seed, profile, opts.flush, opts.canary.clone());
    execute(&plan, opts.keep_trace)
}

/// Executes a plan. The scheduler's choices and what survives each crash
/// are drawn from the plan's seed, so a plan always runs the same way.
///
/// A panic anywhere in the engine or the runner is a finding like any
/// other (the engine must answer bad data with typed errors): it becomes
/// the run's violation instead of ending a whole campaign.
pub fn execute(plan: &Plan, keep_trace: bool) -> Result<Outcome, RunError> {
    plan.validate().map_err(RunError::BadProfile)?;
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute_unguarded(plan, keep_trace)
    }));
    ran.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Ok(Outcome {
            seed: plan.seed,
            profile: plan.profile.clone(),
            violations: vec![format!("panic: {message}")],
            trace_hash: 0,
            trace: Vec::new(),
            stats: RunStats::default(),
        })
    })
}

fn execute_unguarded(plan: &Plan, keep_trace: bool) -> Result<Outcome, RunError> {
    let (canaries, lying) = match &plan.canary {
        Some(n) => parse_canary(n)?,
        None => (Canaries::NONE, false),
    };
    let seed = plan.seed;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5C4E_D01E_0000_0001);
    let flush =
        FlushAtCommit::from_setting(plan.flush).map_err(|e| RunError::BadProfile(e.to_string()))?;
    let faults = plan.faults.clone();
    let config = Config {
        buffer_pool_pages: plan.pool_pages,
        log: LogConfig {
            files: 2,
            file_size_bytes: 512 * 1024,
            buffer_size_bytes: 64 * 1024,
        },
        flush_at_commit: flush,
        lock_wait_timeout_us: plan.lock_wait_timeout_s * 1_000_000,
        group_commit: plan.group_commit,
        canaries,
        ..Config::default()
    };
    let storage = SimStorage::new();
    storage.set_tracing(keep_trace);
    let clock = SimClock::new();
    let mut fc = FaultConfig {
        seed,
        lying_fsync: lying,
        ..FaultConfig::default()
    };
    if faults.contains(&FaultKind::FsyncFailure) {
        fc.p_fsync_failure = 0.02;
    }
    if faults.contains(&FaultKind::BitRot) {
        fc.bit_rot = Some(crate::storage::BitRot {
            per_restart_flips: 1 + (seed % 3) as u32,
            include_redo_log: false,
        });
    }
    if plan.sync_latency_us > 0 {
        // Simulated time passes at every sync, so throughput can be told
        // in simulated seconds.
        fc.latency_us.sync = plan.sync_latency_us;
        storage.set_clock(clock.clone());
    }
    let disk_headroom = plan.disk_headroom_kib.map(|k| k * 1024);
    let preloaded = preloaded_db(plan);
    let mut world = World {
        locks: LockOracle::new(config.lock_wait_timeout_us, config.deadlock_detect),
        transfer_total: (plan.shape == crate::profile::Shape::Transfer)
            .then(|| balance_total(&preloaded)),
        storage: storage.clone(),
        clock: clock.clone(),
        config: config.clone(),
        engine: None,
        history: CommitHistory::new(preloaded.clone()),
        committed: Rc::new(preloaded),
        durability: DurabilityJudge::default(),
        log_fsync_failures: 0,
        call_start_us: 0,
        recovery_rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7EC0_7E11_0000_0003),
        rotted_pages: std::collections::BTreeSet::new(),
        trace: Trace {
            hash: 0xcbf2_9ce4_8422_2325,
            lines: keep_trace.then(Vec::new),
        },
        line_buf: String::new(),
        short_buf: String::new(),
        violations: Vec::new(),
        stats: RunStats::default(),
        faults: faults.clone(),
        crash_plan: plan.crash_after_ios.clone(),
        crashes_armed: 0,
    };
    world.event(
        "run",
        json!({"seed": seed, "profile": plan.profile, "flush": flush.setting(), "pool_pages": config.buffer_pool_pages,
               "faults": format!("{faults:?}"), "canary": plan.canary, "transactions": plan.transactions.len()}),
    );
    let formats = [
        format_of(&plan.row_formats[0]).unwrap_or(RowFormat::Compact),
        format_of(&plan.row_formats[1]).unwrap_or(RowFormat::Compact),
    ];
    let setup = (|| -> engine::Result<Engine> {
        let (mut e, _) = Engine::open(
            Box::new(storage.clone()),
            Box::new(clock.clone()),
            config.clone(),
        )?;
        e.create_table(crate::tables::sbtest("sb", formats[0]))?;
        e.create_table(crate::tables::docs("docs", formats[1]))?;
        if plan.preload > 0 {
            let s = e.session();
            e.execute(s, Request::Begin)?;
            for id in 1..=plan.preload {
                e.execute(
                    s,
                    Request::Insert {
                        table: "sb".into(),
                        row: crate::plan::preload_row(plan.shape, id),
                    },
                )?;
            }
            e.execute(s, Request::Commit)?;
            e.close_session(s)?;
        }
        e.checkpoint()?;
        Ok(e)
    })();
    match setup {
        Ok(mut e) => {
            e.set_lock_event_log(true);
            world.engine = Some(e);
        }
        Err(e) => {
            // Setup runs before any fault is switched on.
            world.violations.push(format!("setup failed: {e}"));
            return Ok(finish(plan, world));
        }
    }
    // The disk's faults start with the workload; a full disk leaves some
    // room above what setup used.
    if let Some(room) = disk_headroom {
        let used: u64 = world
            .engine()
            .file_sizes()
            .map(|v| v.iter().map(|(_, n)| n).sum())
            .unwrap_or(0);
        fc.capacity_bytes = Some(used + room);
    }
    storage.set_faults(fc);
    world.reset_durability();
    arm_crash(&mut world);
    let mut sessions: Vec<Sess> = Vec::new();
    for _ in 0..plan.sessions {
        let id = world.engine().session();
        sessions.push(Sess {
            isolation: engine::Isolation::default(),
            trx: None,
            id,
            txn: None,
            waiting: false,
            last: None,
            issued_us: 0,
        });
    }
    let mut started = 0usize;
    let mut steps = 0u64;
    let n_txns = plan.transactions.len();
    let step_limit = (plan.statement_count() as u64 + n_txns as u64 * 4) * 20 + 10_000;
    while steps < step_limit {
        steps += 1;
        if world.engine.is_none() {
            break;
        }
        let busy = sessions.iter().any(|s| s.txn.is_some());
        if !busy && started >= n_txns {
            break;
        }
        world
            .clock
            .advance_us(rng.gen_range(0..plan.think_us.max(1)));
        let commit_waiting = sessions
            .iter()
            .any(|s| s.txn.as_ref().is_some_and(|t| t.commit_written.is_some()));
        if sessions.iter().all(|s| s.waiting) && !commit_waiting {
            // Everyone waits for a lock: let time run to the next lock wait
            // deadline (at most half a second). A grouped commit waits for
            // nothing but its own resumption, so time does not jump then.
            let now = world.clock_now();
            let next = sessions
                .iter()
                .filter_map(|s| s.trx.and_then(|t| world.locks.deadline(t)))
                .min()
                .unwrap_or(now + 500_000);
            world
                .clock
                .advance_us(next.saturating_sub(now).clamp(1, 500_000));
        }
        // A wait that reached its deadline is resumed now, so the oracle can
        // tell a timeout that fires late.
        let now = world.clock_now();
        let mut crashed = None;
        for s in sessions.iter_mut() {
            let due = s.waiting
                && s.trx
                    .and_then(|t| world.locks.deadline(t))
                    .is_some_and(|d| d <= now);
            if due && crashed.is_none() && world.engine.is_some() {
                crashed = step_session(&mut world, s);
            }
        }
        if let Some(c) = crashed {
            recover(&mut world, &mut rng, &mut sessions, c);
            continue;
        }
        world.locks.check_timeouts(now);
        world.take_lock_violations();
        let i = rng.gen_range(0..sessions.len());
        if sessions[i].txn.is_none() {
            if started >= n_txns {
                continue;
            }
            let planned = &plan.transactions[started];
            started += 1;
            let isolation = planned
                .isolation
                .as_deref()
                .and_then(crate::plan::isolation_of);
            sessions[i].txn = Some(Txn {
                stmts: planned
                    .statements
                    .iter()
                    .flat_map(|st| match st {
                        PlannedStmt::Savepoint(n) => vec![Stmt::Savepoint(n.clone())],
                        PlannedStmt::RollbackTo(n) => vec![Stmt::RollbackTo(n.clone())],
                        PlannedStmt::Transfer { from, to, amount } => vec![
                            Stmt::Req(account_read(*from)),
                            Stmt::Req(account_read(*to)),
                            Stmt::Debit {
                                from: *from,
                                to: *to,
                                amount: *amount,
                            },
                            Stmt::Credit,
                        ],
                        other => other.request().map(Stmt::Req).into_iter().collect(),
                    })
                    .collect(),
                next: 0,
                rollback: planned.rollback,
                writes: Vec::new(),
                savepoints: Vec::new(),
                ending: false,
                balances: BTreeMap::new(),
                credit: None,
                abort_on_timeout: planned
                    .statements
                    .iter()
                    .any(|st| matches!(st, PlannedStmt::Transfer { .. })),
                isolation: isolation.unwrap_or(sessions[i].isolation),
                snapshot: None,
                commit_written: None,
            });
            if let Some(iso) = isolation {
                sessions[i].isolation = iso;
            }
            if let Some(iso) = isolation {
                let r = exec(&mut world, &mut sessions[i], Request::SetIsolation(iso));
                if let Some(crashed) = r {
                    recover(&mut world, &mut rng, &mut sessions, crashed);
                    continue;
                }
            }
            let r = exec(&mut world, &mut sessions[i], Request::Begin);
            if let Some(crashed) = r {
                recover(&mut world, &mut rng, &mut sessions, crashed);
            }
            continue;
        }
        if let Some(crashed) = step_session(&mut world, &mut sessions[i]) {
            recover(&mut world, &mut rng, &mut sessions, crashed);
        }
        if world.violations.len() > 20 {
            break;
        }
    }
    // Liveness: with every wait bounded by the timeout, the workload ends
    // well inside the step budget unless something hangs.
    if steps >= step_limit && world.engine.is_some() {
        let open = sessions.iter().filter(|s| s.txn.is_some()).count();
        if open > 0 || started < n_txns {
            world.violations.push(format!(
                "liveness: after {steps} steps, {open} transactions are still open and {} never started",
                n_txns - started
            ));
        }
    }
    world.stats.workload_us = world.clock_now();
    // Every run ends with a crash, so every run exercises recovery.
    if world.engine.is_some() && world.violations.is_empty() {
        world.storage.crash_now();
        world.event("crash", json!({"final": true}));
        world.crash_plan.clear();
        recover(&mut world, &mut rng, &mut sessions, true);
    }
    Ok(finish(plan, world))
}

fn finish(plan: &Plan, mut world: World) -> Outcome {
    world.locks.check_serializable();
    world.take_lock_violations();
    // With a kept trace, the disk's own I/O and fault records follow (not
    // hashed: they are the same whenever the events are).
    let hash = world.trace.hash;
    if world.trace.lines.is_some() {
        for r in world.storage.trace() {
            let line = json!({"kind": "io", "io": r.index, "op": format!("{:?}", r.op), "file": r.file, "offset": r.offset, "len": r.len, "outcome": format!("{:?}", r.outcome)});
            world.trace.push(&line.to_string());
        }
        for f in world.storage.fault_log() {
            let line = json!({"kind": "fault", "io": f.index, "fault": format!("{:?}", f.fault)});
            world.trace.push(&line.to_string());
        }
    }
    world.trace.hash = hash;
    world.stats.sim_us = world.clock_now();
    world.stats.io_ops = world.storage.counters().ops;
    let f = world.storage.fault_counters();
    world.stats.fsync_failures = f.fsync_failures;
    world.stats.full_disk_errors = f.full_disk_errors;
    world.stats.locks_inherited = world.locks.stats.inherited;
    world.stats.victims_by_weight = world.locks.stats.victims_by_weight;
    Outcome {
        seed: plan.seed,
        profile: plan.profile.clone(),
        violations: world.violations,
        trace_hash: world.trace.hash,
        trace: world.trace.lines.unwrap_or_default(),
        stats: world.stats,
    }
}

impl World {
    fn clock_now(&self) -> u64 {
        use engine::io::Clock;
        self.clock.now_us()
    }
}

fn arm_crash(world: &mut World) {
    match world.crash_plan.get(world.crashes_armed) {
        None => world.storage.set_crash_at(None),
        Some(&after) => {
            world.crashes_armed += 1;
            let at = world.storage.counters().ops + after;
            world.storage.set_crash_at(Some(at));
        }
    }
}

/// Runs the session's next step. Returns `Some(true)` if the disk crashed,
/// `Some(false)` if the engine stopped on an I/O error of its own (a failed
/// fsync), `None` otherwise.
fn step_session(world: &mut World, s: &mut Sess) -> Option<bool> {
    if s.waiting {
        world.call_start_us = world.clock_now();
        let r = world.engine().resume(s.id);
        return handle(world, s, None, r);
    }
    let txn = s.txn.as_mut().expect("caller checked");
    if txn.next >= txn.stmts.len() {
        txn.ending = true;
        let req = if txn.rollback {
            Request::Rollback
        } else {
            Request::Commit
        };
        return exec(world, s, req);
    }
    let stmt = std::mem::replace(&mut txn.stmts[txn.next], Stmt::Savepoint(String::new()));
    txn.next += 1;
    match stmt {
        Stmt::Req(r) => exec(world, s, r),
        Stmt::Debit { from, to, amount } => {
            let (Some(Some(bf)), Some(Some(bt))) = (txn.balances.get(&from), txn.balances.get(&to))
            else {
                return None; // an account is missing: nothing to move
            };
            let (bf, bt) = (*bf, *bt);
            let moved = amount.min(bf);
            if moved == 0 {
                return None;
            }
            txn.credit = Some((to, bt + moved));
            exec(world, s, balance_update(from, bf - moved))
        }
        Stmt::Credit => match txn.credit.take() {
            Some((to, balance)) => exec(world, s, balance_update(to, balance)),
            None => None,
        },
        Stmt::Savepoint(name) => {
            let mark = txn.writes.len();
            txn.savepoints.retain(|(n, _)| *n != name);
            txn.savepoints.push((name.clone(), mark));
            exec(world, s, Request::Savepoint(name))
        }
        Stmt::RollbackTo(name) => exec(world, s, Request::RollbackToSavepoint(name)),
    }
}

/// A transfer's read of an account: SELECT ... FOR UPDATE.
fn account_read(id: u64) -> Request {
    Request::Locking {
        read: Box::new(Request::Get {
            table: "sb".into(),
            key: vec![Value::UInt(id)],
        }),
        exclusive: true,
    }
}

/// A transfer's write of a balance.
fn balance_update(id: u64, balance: u64) -> Request {
    Request::Update {
        table: "sb".into(),
        key: vec![Value::UInt(id)],
        set: vec![("k".into(), Value::UInt(balance))],
    }
}

/// The committed state a plan starts from: its preloaded rows.
fn preloaded_db(plan: &Plan) -> Db {
    let mut db = Db::with_tables(TABLES);
    let sb = db.table_mut("sb");
    for id in 1..=plan.preload {
        let row: Row = crate::plan::preload_row(plan.shape, id)
            .iter()
            .map(to_model)
            .collect();
        sb.insert(vec![row[0].clone()], row);
    }
    db
}

/// The sum of every balance (`sb.k`).
fn balance_total(db: &Db) -> i128 {
    db.tables
        .get("sb")
        .map(|t| {
            t.values()
                .map(|r| match r.get(1) {
                    Some(ModelValue::Int(k)) => *k,
                    _ => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

fn exec(world: &mut World, s: &mut Sess, req: Request) -> Option<bool> {
    world.stats.statements += 1;
    s.issued_us = world.clock_now();
    world.call_start_us = s.issued_us;
    if let Some(t) = world.engine().trx_id(s.id) {
        s.trx = Some(t);
    }
    count_changes(world, s);
    let r = world.engine().execute(s.id, req.clone());
    if let Some(t) = world.engine.as_ref().and_then(|e| e.trx_id(s.id)) {
        s.trx = Some(t);
    }
    handle(world, s, Some(req), r)
}

/// Tells the lock oracle how many rows the session's transaction has
/// changed so far, by the runner's own count (the model writes of its
/// finished statements): its undo records, half of its weight.
fn count_changes(world: &mut World, s: &Sess) {
    if let (Some(t), Some(txn)) = (s.trx, &s.txn) {
        world.locks.set_changes(t, txn.writes.len() as u64);
    }
}

/// The engine's lock event as the oracle states it, timed by the runner:
/// the call that produced it began at `since_us` and returned at `now_us`
/// (the engine's own stamps are not passed on).
fn to_oracle(e: engine::lock::LockEvent, since_us: u64, now_us: u64) -> OEvent {
    use engine::lock::{EventKind, Mode, RecKey, RecKind, RecMode, TableMode, Target};
    let kind = match e.kind {
        EventKind::Granted => OKind::Granted,
        EventKind::Wait => OKind::Wait,
        EventKind::GrantedAfterWait => OKind::GrantedAfterWait,
        EventKind::Released => OKind::Released,
        EventKind::TimedOut => OKind::TimedOut,
        EventKind::Victim => OKind::Victim,
        EventKind::Cancelled => OKind::Cancelled,
        EventKind::Inherited => OKind::Inherited,
        EventKind::Weight => OKind::Weight,
    };
    let target = match e.lock.target {
        Target::Table(t) => OTarget::Table(t),
        Target::Record { table, index, key } => OTarget::Record(
            table,
            index,
            match key {
                RecKey::Key(k) => Some(k),
                RecKey::Supremum => None,
            },
        ),
    };
    let mode = match e.lock.mode {
        Mode::Table(m) => OMode::Table(match m {
            TableMode::IS => TMode::IS,
            TableMode::IX => TMode::IX,
            TableMode::S => TMode::S,
            TableMode::X => TMode::X,
            TableMode::AutoInc => TMode::AutoInc,
        }),
        Mode::Record(m, k) => OMode::Record(
            m == RecMode::X,
            match k {
                RecKind::NextKey => RKind::NextKey,
                RecKind::RecNotGap => RKind::Record,
                RecKind::Gap => RKind::Gap,
                RecKind::InsertIntention => RKind::InsertIntention,
            },
        ),
    };
    OEvent {
        t_us: now_us,
        kind,
        lock: e.lock.id,
        trx: e.lock.trx,
        target,
        mode,
        since_us,
        undo_records: e.undo_records,
    }
}

impl World {
    /// Feeds the lock events of the call just made to the oracle, which
    /// judges the settled state.
    fn judge_locks(&mut self) {
        let now = self.clock_now();
        let Some(e) = self.engine.as_mut() else {
            return;
        };
        for ev in e.take_lock_events() {
            self.locks.event(&to_oracle(ev, self.call_start_us, now));
        }
        self.locks.settle();
        self.take_lock_violations();
    }

    fn take_lock_violations(&mut self) {
        for v in self.locks.take_violations() {
            self.violations.push(format!("lock oracle: {v}"));
        }
    }
}

/// The request a waiting session is running, kept for when it finishes.
fn handle(
    world: &mut World,
    s: &mut Sess,
    req: Option<Request>,
    r: engine::Result<Step>,
) -> Option<bool> {
    if let Some(q) = &req {
        if s.waiting {
            unreachable!("a waiting session gets no new statement: {q:?}");
        }
    }
    let req = match req {
        Some(q) => q,
        None => s
            .last
            .take()
            .expect("a session resumes only after it waited, and keeps its statement"),
    };
    let label = describe(&req);
    let waits_before = world.locks.stats.waits;
    world.judge_locks();
    match r {
        Ok(Step::Waiting) => {
            if !s.waiting {
                world.stats.waits += 1;
            } else if world.locks.stats.waits > waits_before {
                // Resumed, granted, run again, and waiting on another lock.
                world.stats.rewaits += 1;
            }
            if matches!(req, Request::Commit) && !s.waiting {
                // Group commit: the commit is in the log buffer and visible;
                // its acknowledgement waits for a sync.
                world.stats.commit_waits += 1;
                commit_written(world, s);
            }
            s.waiting = true;
            world.statement_event(s.id, &label, "waiting");
            s.last = Some(req);
            None
        }
        Ok(Step::Done(resp)) => {
            s.waiting = false;
            let mut buf = std::mem::take(&mut world.short_buf);
            world.statement_event(s.id, &label, short(&resp, &mut buf));
            world.short_buf = buf;
            world.observe_log();
            done(world, s, &req, resp);
            count_changes(world, s);
            None
        }
        Err(e) => {
            s.waiting = false;
            world.event(
                "statement",
                json!({"session": s.id, "op": label, "result": "error", "code": e.mysql_code(), "message": e.to_string()}),
            );
            let crashed = failed(world, s, &req, e);
            count_changes(world, s);
            crashed
        }
    }
}

/// Appends `s` as a JSON string literal (printable ASCII without quotes
/// or backslashes as it is, anything else through serde).
fn push_json_str(out: &mut String, s: &str) {
    if s.bytes()
        .all(|c| c >= 0x20 && c != b'"' && c != b'\\' && c < 0x7f)
    {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into()));
    }
}

/// A short description of a response for the trace, into a reused buffer.
fn short<'b>(r: &Response, buf: &'b mut String) -> &'b str {
    use std::fmt::Write as _;
    buf.clear();
    let _ = match r {
        Response::Ok => buf.write_str("ok"),
        Response::Affected(n) => write!(buf, "affected {n}"),
        Response::Row(r) => write!(buf, "row {}", r.is_some()),
        Response::Rows(rs) => write!(buf, "{} rows", rs.len()),
    };
    buf
}

/// A commit reached the log: it joins the committed model and the commit
/// history, in log order. Returns its index in the history if its
/// acknowledgement will promise it durable: it has writes in the model, or
/// it waited for a group commit's sync (which only a commit with redo
/// does, even one whose writes a ROLLBACK TO SAVEPOINT undid).
fn commit_written(world: &mut World, s: &mut Sess) -> Option<usize> {
    let txn = s.txn.as_mut()?;
    if let Some(i) = txn.commit_written {
        return Some(i);
    }
    if let Some(t) = s.trx.take() {
        world.locks.committed(t);
    }
    let effects = TxnEffects {
        writes: std::mem::take(&mut txn.writes),
    };
    let read_only = effects.writes.is_empty();
    models::recovery::apply(Rc::make_mut(&mut world.committed), &effects);
    world.history.commit(effects);
    let lsn = world.engine.as_ref().map_or(0, |e| e.last_commit_lsn());
    let i = world.durability.logged(CommitRecord {
        issued_us: s.issued_us,
        acked_us: None,
        promises: false,
        claimed_lsn: lsn,
    });
    txn.commit_written = Some(i);
    // A read-only commit's acknowledgement says nothing of the log (the
    // LSN above is an earlier commit's).
    (!read_only).then_some(i)
}

fn done(world: &mut World, s: &mut Sess, req: &Request, resp: Response) {
    let Some(txn) = s.txn.as_mut() else { return };
    match req {
        Request::Commit => {
            if let Some(i) = commit_written(world, s) {
                let now = world.clock_now();
                world.durability.acknowledged(i, now);
            }
            world.stats.commits += 1;
            s.txn = None;
        }
        Request::Rollback => {
            world.stats.rollbacks += 1;
            s.txn = None;
        }
        Request::RollbackToSavepoint(name) => {
            if let Some(&(_, mark)) = txn.savepoints.iter().find(|(n, _)| n == name) {
                txn.writes.truncate(mark);
                let pos = txn
                    .savepoints
                    .iter()
                    .position(|(n, _)| n == name)
                    .expect("found");
                txn.savepoints.truncate(pos + 1);
            }
        }
        Request::Begin | Request::Savepoint(_) => {}
        Request::Get { .. } | Request::Scan { .. } => {
            use engine::Isolation::*;
            if txn.isolation == ReadUncommitted {
                return; // sees others' uncommitted rows
            }
            if txn.isolation == RepeatableRead && txn.snapshot.is_none() {
                txn.snapshot = Some(Rc::clone(&world.committed));
            }
            let txn_ref: &Txn = txn;
            let base = match (&txn_ref.snapshot, txn_ref.isolation) {
                (Some(snapshot), RepeatableRead) => snapshot,
                _ => &world.committed,
            };
            if let Some(want) = read_expected(base, txn_ref, req) {
                if !rows_match(&resp, &want) {
                    let got = model_rows(&resp);
                    world.violations.push(format!(
                        "{}: a {:?} read returned {got:?}, its snapshot and the transaction's own writes say {want:?}",
                        describe(req),
                        txn_ref.isolation
                    ));
                }
            }
        }
        Request::Locking { read, .. } => {
            if let (Request::Get { table, key }, Response::Row(r)) = (read.as_ref(), &resp) {
                if table == "sb" {
                    if let Some(Value::UInt(id)) = key.first() {
                        let balance = r.as_ref().and_then(|row| match row.get(1) {
                            Some(Value::UInt(k)) => Some(*k),
                            _ => None,
                        });
                        txn.balances.insert(*id, balance);
                    }
                }
            }
            let txn_ref: &Txn = txn;
            if let Some(want) = read_expected(&world.committed, txn_ref, read) {
                if !rows_match(&resp, &want) {
                    let got = model_rows(&resp);
                    world.violations.push(format!(
                        "{}: a locking read returned {got:?}, the committed state and the transaction's own writes say {want:?}",
                        describe(req)
                    ));
                }
            }
        }
        row_req => {
            let txn_ref: &Txn = txn;
            if let Some((want, write)) = expected(world, txn_ref, row_req) {
                match want {
                    Ok(w) if w == resp => {
                        if let Some(w) = write {
                            s.txn.as_mut().expect("open").writes.push(w);
                        }
                    }
                    other => world.violations.push(format!(
                        "{}: the engine answered {resp:?}, the model expected {other:?}",
                        describe(row_req)
                    )),
                }
            }
        }
    }
}

fn failed(world: &mut World, s: &mut Sess, req: &Request, e: Error) -> Option<bool> {
    if world.bit_rot_caught(&e) {
        return None;
    }
    if e.stops_engine() || e.is_fatal() {
        let crashed = world.storage.crashed();
        if crashed || matches!(e, Error::Io { .. }) || e.is_fatal() {
            if matches!(req, Request::Commit) {
                // The commit may have reached the log before the failure
                // (a group commit's is in the history already).
                if let Some(txn) = s.txn.take() {
                    if txn.commit_written.is_none() {
                        world.history.commit(TxnEffects { writes: txn.writes });
                        world.durability.cut_off();
                    }
                }
            }
            return Some(crashed);
        }
        world
            .violations
            .push(format!("{}: unexpected engine error: {e}", describe(req)));
        return None;
    }
    match e {
        Error::Deadlock => {
            world.stats.deadlocks += 1;
            world.stats.rollbacks += 1;
            s.txn = None;
        }
        Error::LockWaitTimeout => {
            world.stats.lock_timeouts += 1;
            if let Some(txn) = s.txn.as_mut() {
                if txn.abort_on_timeout && !txn.ending {
                    txn.next = txn.stmts.len();
                    txn.rollback = true;
                    txn.credit = None;
                }
            }
        }
        Error::TableFull { .. } => {}
        Error::NoSuchSavepoint(name) => {
            // ROLLBACK TO an earlier savepoint erases the later ones.
            let known = s
                .txn
                .as_ref()
                .is_some_and(|t| t.savepoints.iter().any(|(n, _)| *n == name));
            if known {
                world.violations.push(format!(
                    "{}: the engine lost savepoint {name}, which the model still has",
                    describe(req)
                ));
            }
        }
        Error::DuplicateKey { .. } => {
            if let Some(txn) = &s.txn {
                if let Some((want, _)) = expected(world, txn, req) {
                    if want != Err(1062) {
                        world.violations.push(format!(
                            "{}: the engine reported a duplicate key, the model expected {want:?}",
                            describe(req)
                        ));
                    }
                }
            }
        }
        other => world
            .violations
            .push(format!("{}: unexpected error: {other}", describe(req))),
    }
    None
}

/// The crash: drop the engine, let the disk decide what survived, reopen,
/// and judge.
fn recover(world: &mut World, rng: &mut ChaCha8Rng, sessions: &mut [Sess], _crashed: bool) {
    world.stats.crashes += 1;
    world.engine = None;
    world.locks.crash();
    world.take_lock_violations();
    if !world.storage.crashed() {
        world.storage.crash_now();
    }
    // What survives.
    let mode = crash_mode(&world.faults, rng);
    let mut power = !matches!(mode, CrashMode::ProcessCrash);
    let crash_us = world.clock_now();
    // A crash armed for later must not fire inside recovery; crashes in
    // recovery are drawn here, from their own generator.
    world.storage.set_crash_at(None);
    world.restart(mode);
    world.event(
        "crash",
        json!({"mode": if power { "power loss" } else { "process crash" }}),
    );
    let mut crashes_left = if world.faults.contains(&FaultKind::RecoveryCrash) {
        world.recovery_rng.gen_range(0..=3u32)
    } else {
        0
    };
    let mut opened = open_recovering(world, &mut crashes_left);
    // Recovery that meets an injected fault stops like any other run of the
    // engine; the operator retries it (after freeing space, for a full
    // disk). A crash inside recovery is followed by another recovery.
    // Anything else that stops recovery is a violation.
    for _ in 0..100 {
        if opened.is_err() && world.storage.crashed() {
            world.stats.recovery_crashes += 1;
            let mode = {
                let faults = world.faults.clone();
                crash_mode(&faults, &mut world.recovery_rng)
            };
            power |= !matches!(mode, CrashMode::ProcessCrash);
            world.event(
                "recovery",
                json!({"step": "crashed", "mode": if matches!(mode, CrashMode::ProcessCrash) { "process crash" } else { "power loss" }}),
            );
            world.restart(mode);
            opened = open_recovering(world, &mut crashes_left);
            continue;
        }
        let injected = match &opened {
            Err(Error::Io { source, .. }) => crate::storage::is_simulated_fsync_failure(source),
            Err(Error::TableFull { .. }) => {
                let mut fc = world.storage.faults();
                fc.capacity_bytes = None;
                world.storage.set_faults(fc);
                true
            }
            _ => false,
        };
        if !injected {
            break;
        }
        let why = opened
            .as_ref()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        world.event(
            "recovery",
            json!({"step": "stopped by an injected fault", "error": why}),
        );
        world.storage.crash_now();
        world.restart(CrashMode::ProcessCrash);
        opened = open_recovering(world, &mut crashes_left);
    }
    world.storage.set_crash_at(None);
    // The bounds the flush setting promises, from the client's instants
    // and the disk's record (see crate::judge::durability): a power loss
    // anywhere in the sequence counts, and so does a failed log fsync,
    // in the workload or in recovery.
    let dropped = world.storage.fault_counters().log_fsync_failures > world.log_fsync_failures;
    let bounds = world
        .durability
        .bounds(world.config.flush_at_commit, power, dropped, crash_us);
    let (min_k, max_k) = (bounds.min_k, bounds.max_k);
    world.event(
        "bounds",
        json!({"acknowledged": bounds.acknowledged_k, "promised": bounds.promised_k, "claimed": min_k}),
    );
    if let Err(e) = &opened {
        if world.bit_rot_caught(e) {
            return;
        }
    }
    match opened {
        Err(e) => {
            world.violations.push(format!("recovery failed: {e}"));
        }
        Ok((mut e, report)) => {
            // The oracle reads with the disk's faults off: what it reads is
            // the recovered state, not a new workload.
            let workload_faults = world.storage.faults();
            world.storage.set_faults(FaultConfig {
                seed: workload_faults.seed,
                ..FaultConfig::default()
            });
            world.stats.pages_repaired += report.pages_repaired.len() as u64;
            world.stats.redo_records_applied += report.records_applied;
            world.stats.recovery_rollbacks += report.rolled_back.len() as u64;
            world.event(
                "recovery",
                json!({"step": "recovered", "log_end": report.log_end, "records_applied": report.records_applied,
                       "pages_repaired": report.pages_repaired.len(), "rolled_back": report.rolled_back.len()}),
            );
            match read_db(&mut e) {
                Err(err) if world.bit_rot_caught(&err) => return,
                Err(err) => world
                    .violations
                    .push(format!("reading the recovered database failed: {err}")),
                Ok(db) => match world.history.judge(&db, min_k, max_k) {
                    _ if world
                        .transfer_total
                        .is_some_and(|t| balance_total(&db) != t) =>
                    {
                        world.violations.push(format!(
                            "transfer: the recovered balances add up to {}, not {}",
                            balance_total(&db),
                            world.transfer_total.unwrap_or(0)
                        ))
                    }
                    RecoveryVerdict::Prefix(k) => {
                        world.event("recovery", json!({"step": "judged", "prefix_commits": k}));
                        // The recovered state equals the state after k
                        // commits: it is the new starting point.
                        world.history = CommitHistory::new(db.clone());
                        world.committed = Rc::new(db);
                    }
                    RecoveryVerdict::Violation(v) => {
                        // Was it only the engine's own claim that made it
                        // owe more than the client and the disk promised?
                        let claim = match &bounds.claim {
                            Some(c)
                                if matches!(
                                    world.history.judge(&db, bounds.promised_k, max_k),
                                    RecoveryVerdict::Prefix(_)
                                ) =>
                            {
                                format!(" ({c}, which the disk did not honour)")
                            }
                            _ => String::new(),
                        };
                        world
                            .violations
                            .push(format!("recovery oracle: {v}{claim}"))
                    }
                },
            }
            for t in TABLES {
                match e.check_table(t) {
                    Ok(c) if c.is_ok() => {}
                    Ok(c) if c.problems.iter().any(|p| world.bit_rot_named(p)) => return,
                    Ok(c) => world
                        .violations
                        .push(format!("CHECK TABLE {t}: {}", c.problems.join("; "))),
                    Err(err) if world.bit_rot_caught(&err) => return,
                    Err(err) => world.violations.push(format!("CHECK TABLE {t}: {err}")),
                }
            }
            let mut resumed = workload_faults;
            resumed.seed = resumed.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            world.storage.set_faults(resumed);
            for s in sessions.iter_mut() {
                s.id = e.session();
                s.txn = None;
                s.waiting = false;
                s.last = None;
                s.trx = None;
                s.isolation = engine::Isolation::default();
            }
            e.set_lock_event_log(true);
            world.engine = Some(e);
        }
    }
    world.log_fsync_failures = world.storage.fault_counters().log_fsync_failures;
    world.reset_durability();
    if world.engine.is_some() {
        arm_crash(world);
    }
}

/// What survives a crash: a process crash, or a power loss (with torn
/// writes) where the plan has them.
fn crash_mode(faults: &[FaultKind], rng: &mut ChaCha8Rng) -> CrashMode {
    let mut kinds = vec![FaultKind::ProcessCrash];
    kinds.extend(
        faults
            .iter()
            .copied()
            .filter(|k| matches!(k, FaultKind::PowerLoss | FaultKind::TornWrites)),
    );
    let kind = kinds[rng.gen_range(0..kinds.len())];
    match kind {
        FaultKind::PowerLoss => CrashMode::PowerLoss(PowerLossPolicy::Random {
            seed: rng.gen(),
            sector_bytes: 512,
            p_survive: 0.5,
            p_torn: 0.0,
        }),
        FaultKind::TornWrites => CrashMode::PowerLoss(PowerLossPolicy::Random {
            seed: rng.gen(),
            sector_bytes: if rng.gen_bool(0.5) { 512 } else { 4096 },
            p_survive: 0.4,
            p_torn: 0.3,
        }),
        _ => CrashMode::ProcessCrash,
    }
}

/// Opens (recovers) the engine; while `crashes_left` says so, with a crash
/// armed at one of recovery's first 400 I/O operations (recovery of these
/// workloads takes about 100 to 300, so some fire and some do not).
fn open_recovering(
    world: &mut World,
    crashes_left: &mut u32,
) -> engine::Result<(Engine, engine::RecoveryReport)> {
    if *crashes_left > 0 {
        *crashes_left -= 1;
        let at = world.storage.counters().ops + world.recovery_rng.gen_range(1..=400);
        world.storage.set_crash_at(Some(at));
    }
    Engine::open(
        Box::new(world.storage.clone()),
        Box::new(world.clock.clone()),
        world.config.clone(),
    )
}

impl World {
    /// Restarts the disk, noting the pages bit rot damaged.
    fn restart(&mut self, mode: CrashMode) {
        let report = self.storage.restart(mode);
        for f in report.bit_flips {
            self.stats.bit_flips += 1;
            let page = (f.offset / crate::storage::PAGE_BYTES) as u32;
            self.rotted_pages.insert((f.file, page));
        }
    }

    /// Whether `e` reports a page bit rot damaged: the fault is caught.
    /// The database is damaged beyond what the engine promises to repair
    /// (InnoDB refuses to go on too), so the run ends here, judged good.
    fn bit_rot_caught(&mut self, e: &Error) -> bool {
        let Error::CorruptPage { file, page_no, .. } = e else {
            return false;
        };
        if !self.rotted_pages.contains(&(file.clone(), *page_no)) {
            return false;
        }
        self.stats.bit_rot_caught += 1;
        self.event(
            "bit rot caught",
            json!({"file": file, "page": page_no, "error": e.to_string()}),
        );
        self.engine = None;
        true
    }

    /// Whether a CHECK TABLE problem names a page bit rot damaged.
    fn bit_rot_named(&mut self, problem: &str) -> bool {
        let named = self
            .rotted_pages
            .iter()
            .any(|(file, page)| problem.contains(&format!("corrupt page {page} in '{file}'")));
        if named {
            self.stats.bit_rot_caught += 1;
            self.event("bit rot caught", json!({"problem": problem}));
            self.engine = None;
        }
        named
    }
}

fn read_db(e: &mut Engine) -> engine::Result<Db> {
    let s = e.session();
    let mut db = Db::default();
    for t in TABLES {
        let Step::Done(Response::Rows(rows)) = e.execute(
            s,
            Request::Scan {
                table: t.into(),
                index: None,
                low: RangeBound::Unbounded,
                high: RangeBound::Unbounded,
                reverse: false,
                limit: None,
            },
        )?
        else {
            return Err(Error::InvalidArgument(
                "a full scan did not return rows".into(),
            ));
        };
        let table = db.table_mut(t);
        for r in rows {
            let row: Row = r.iter().map(to_model).collect();
            table.insert(vec![row[0].clone()], row);
        }
    }
    e.close_session(s)?;
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    rows_match(a, &want),
                    model_rows(a) == want,
                    "{a:?} against {b:?}"
                );
            }
        }
    }
}
