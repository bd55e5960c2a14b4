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
//! A plan may carry its scheduler's turns and crash draws recorded
//! ([`crate::schedule`]): the runner takes them from there while they
//! last, and records every run's, which the shrinker writes into a failing
//! plan so the work that stays keeps its order.
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
//!
//! The runner's rooms: this module holds the world and the scheduler's
//! loop; `session` drives one session's statements and judges their
//! results in lockstep; `recovery` crashes, restarts and recovers, and
//! has the recovered state judged; `trace` records and hashes the run;
//! `stats` counts what it reached. The judging itself lives in
//! [`crate::judge`].

mod ddl;
mod filter;
mod recovery;
mod session;
mod stats;
mod timed;
mod timeline;
mod trace;

pub use stats::RunStats;
pub use timeline::{check_chrome_trace, chrome_trace};
pub use trace::describe;

use crate::clock::SimClock;
use crate::judge::durability::{CommitRecord, DurabilityJudge};
use crate::plan::{format_of, Plan, PlannedStmt};
use crate::profile::{FaultKind, Profile};
use crate::storage::faults::FaultConfig;
use crate::storage::{CrashMode, SimStorage};
use engine::redo::LogConfig;
use engine::{
    Canaries, Canary, Config, Engine, Error, FlushAtCommit, RangeBound, Request, Response,
    RowFormat, SessionId, Step, Value,
};
use models::lock::LockOracle;
use models::{CommitHistory, Db, ModelValue, RecoveryVerdict, Row, TxnEffects, Write};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use recovery::{balance_total, preloaded_db, recover};
use serde_json::json;
use session::{account_read, exec, step_session};
use std::collections::BTreeMap;
use std::rc::Rc;
use trace::{push_json_str, short, Stepped, Trace};

/// Tables every run creates.
pub const TABLES: [&str; 2] = ["sb", "docs"];

/// With misdirected writes on, one page write of a data file in this many
/// goes astray.
const MISDIRECTION_ODDS: f64 = 400.0;

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
    /// Each crash of the workload (not the final one), anchored to the
    /// statement it struck after: what the shrinker turns I/O-index crash
    /// points into.
    pub crash_anchors: Vec<crate::plan::CrashAnchor>,
    /// Each crash of the workload that no crash point or anchor armed (a
    /// misdirected write's, which strikes as the power fails), anchored
    /// the same way: the shrinker tries them without the fault kind.
    pub unarmed_crash_anchors: Vec<crate::plan::CrashAnchor>,
    /// Each fsync failure of the workload, anchored to the statement issued
    /// last before it: what the shrinker turns the drawn failures into.
    pub fsync_failure_anchors: Vec<crate::plan::CrashAnchor>,
    /// Each fsync failure that struck while the engine recovered, anchored
    /// to that attempt to open it.
    pub recovery_fsync_failure_anchors: Vec<crate::plan::RecoveryAnchor>,
    /// The run's interleaving and crash draws, as a plan records them
    /// ([`crate::schedule`]): with it, the plan runs the same, turn for
    /// turn, and keeps its order while the shrinker drops work.
    pub schedule: crate::schedule::Schedule,
}

/// The turns and crash draws of a plan's schedule not yet used.
#[derive(Debug, Default)]
struct Replay {
    turns: std::collections::VecDeque<crate::schedule::Turn>,
    crashes: std::collections::VecDeque<crate::schedule::CrashDraw>,
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
    /// A DDL statement, the only one of its transaction: kept while it
    /// waits for its table lock (see [`ddl::start_ddl`]).
    Ddl(PlannedStmt),
    /// An UPDATE or DELETE whose WHERE the read does not decide (see
    /// [`filter`]).
    ChangeWhere(PlannedStmt),
}

struct Txn {
    /// Its index in the plan's transactions, and for each of its steps the
    /// planned statement it comes from (a transfer is four steps): what
    /// crash anchors name.
    plan_index: usize,
    stmt_map: Vec<usize>,
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
    /// The run's index changes when it took its snapshot
    /// ([`World::index_epoch`]).
    snapshot_epoch: u64,
    /// The tables it has changed (a row statement that ran, found rows or
    /// not, so took its IX lock): while it is open, the lock oracle must
    /// know that lock, which DDL on the table must wait for.
    touched: std::collections::BTreeSet<String>,
    /// Group commit: its commit is written (its index in the commit
    /// history) and waits for the sync that acknowledges it.
    commit_written: Option<usize>,
    /// REPEATABLE READ and SERIALIZABLE: the ranges its locking reads
    /// locked, and what they saw (a later locking read must agree).
    locked_ranges: Vec<crate::judge::reads::LockedRange>,
    /// One statement in autocommit mode, without BEGIN: it ends the
    /// transaction by itself.
    autocommit: bool,
    /// An autocommit statement whose commit waits for a group's sync: the
    /// answer the model expects, judged when it comes.
    answer: Option<Result<Response, u16>>,
    /// The filtered change under way, its steps after its read.
    filter: Option<filter::FilterRun>,
}

impl Txn {
    /// The transaction of DDL statement `st` (planned transaction
    /// `plan_index`) while it waits for its table lock: issued, so its one
    /// step is behind it.
    fn ddl(plan_index: usize, st: PlannedStmt, isolation: engine::Isolation) -> Txn {
        Txn {
            plan_index,
            stmt_map: vec![0],
            stmts: vec![Stmt::Ddl(st)],
            next: 1,
            rollback: false,
            writes: Vec::new(),
            savepoints: Vec::new(),
            ending: false,
            balances: BTreeMap::new(),
            credit: None,
            abort_on_timeout: false,
            isolation,
            snapshot: None,
            snapshot_epoch: 0,
            touched: Default::default(),
            commit_written: None,
            locked_ranges: Vec::new(),
            autocommit: true,
            answer: None,
            filter: None,
        }
    }
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
    /// The committed state at each wait of the running locking scan: a
    /// scan keeps its place through a wait, so what it read before one
    /// came from the state then (see `judge::reads::resumed_scan_matches`).
    scan_states: Vec<Rc<models::Db>>,
    /// The model's number for the row of the running insert into a table
    /// without a primary key, taken when it first waited for a record
    /// lock: InnoDB takes the row id once, after the table's IX lock, and
    /// keeps it through the wait, so the row sorts where its first attempt
    /// put it, before rows inserted while it waited.
    kept_seq: Option<u64>,
    /// The row of the running insert while it waits with its clustered
    /// record in place (the lock oracle says so by what it waits for; see
    /// `models::lock::InsertShape`): a READ UNCOMMITTED reader may see it,
    /// and another transaction locking it finds this one's implicit lock.
    /// For a waiting update that moves its row (a change of its primary
    /// key), the delete of the old key and the row at the new one: InnoDB
    /// keeps the delete through a wait in the insert
    /// (`row_upd_clust_rec_by_insert`), and the insert's clustered record
    /// through a wait in a secondary index, so a READ UNCOMMITTED reader
    /// may find either state (the runner allows both: which one the wait
    /// is in, it does not follow). For a waiting update in place or
    /// delete whose wait is in a secondary index, the row as it changes it
    /// (its clustered change is kept through the wait).
    in_flight: Vec<Write>,
    /// How many of the running insert's indexes (the clustered index
    /// first) were judged for the gaps they checked, in the steps that put
    /// their entries in before it waited.
    insert_judged: usize,
    /// Time-driven scheduling ([`timed`]): when the session's next step
    /// comes; `None` while it waits for a lock (until the wait ends).
    ready_us: Option<u64>,
}

struct World {
    /// Replays the engine's lock events (see models::lock).
    locks: LockOracle,
    /// The lock events of the last engine call, as the oracle got them.
    step_events: Vec<models::lock::OEvent>,
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
    /// Pages a fault damaged on disk (bit rot flipped their bits, or a
    /// misdirected write landed on them), by file and page number: a
    /// corrupt-page report on one of them is the fault caught.
    damaged_pages: std::collections::BTreeMap<(String, u32), recovery::Damaged>,
    /// The run's tables, as the model reads them.
    schema: crate::schema::Schema,
    /// READ UNCOMMITTED reads of the step just made, with their results:
    /// judged after the step, when every session's writes are at hand.
    uncommitted_reads: Vec<(Request, Response)>,
    /// The number the next insert into a table without a primary key
    /// takes as its key in the model ([`crate::schema::TableShape::hidden`]):
    /// the runner's count, in the order the inserts take their row ids.
    row_seq: u64,
    /// The number the insert being judged took before it waited (its
    /// session's `kept_seq`), which [`session::expected`] takes instead of
    /// the next one.
    insert_seq_override: Option<u64>,
    /// The plan's crash anchors, and which have been armed.
    anchors: Vec<crate::plan::CrashAnchor>,
    anchors_armed: Vec<bool>,
    /// The statement issued last: planned transaction, statement, and the
    /// I/O index then.
    last_issued: Option<(usize, usize, u64)>,
    /// The run's own last crash is coming (no fault's, nor the plan's).
    final_crash: bool,
    /// The I/O index the armed crash strikes at.
    armed_at: Option<u64>,
    /// Each workload crash anchored to the statement it struck after.
    observed_anchors: Vec<crate::plan::CrashAnchor>,
    observed_unarmed_anchors: Vec<crate::plan::CrashAnchor>,
    /// What is left of the plan's recorded schedule.
    replay: Replay,
    /// This run's schedule, recorded.
    recorded: crate::schedule::Schedule,
    /// The plan's fsync-failure anchors, and which have been armed.
    fsync_anchors: Vec<crate::plan::CrashAnchor>,
    fsync_anchors_armed: Vec<bool>,
    /// Each workload fsync failure anchored to the statement issued last
    /// before it, and how many of the disk's failed syncs were looked at.
    observed_fsync_anchors: Vec<crate::plan::CrashAnchor>,
    fsync_failures_seen: usize,
    /// The plan's fsync failures anchored to recoveries; how many attempts
    /// to open the engine after a crash began, and the last one's number
    /// and first I/O index until a statement is issued.
    recovery_fsync_anchors: Vec<crate::plan::RecoveryAnchor>,
    opens: usize,
    last_open: Option<(usize, u64)>,
    /// Each fsync failure that struck inside a recovery, anchored to it.
    observed_recovery_fsync_anchors: Vec<crate::plan::RecoveryAnchor>,
    trace: Trace,
    violations: Vec<String>,
    stats: RunStats,
    faults: Vec<FaultKind>,
    /// The plan's crash points, and how many have been armed.
    crash_plan: Vec<u64>,
    crashes_armed: usize,
    /// The plan's checkpoint crashes, how many have been armed, and
    /// whether one is armed for this (re)start.
    checkpoint_crashes: Vec<crate::plan::CheckpointCrash>,
    checkpoint_crashes_armed: usize,
    checkpoint_watch_armed: bool,
    /// What the model knows of each scratch table (DDL).
    scratch: BTreeMap<String, ddl::Presence>,
    /// What the model knows of each index the workload creates, by table
    /// and name.
    online: BTreeMap<(String, String), ddl::IndexState>,
    /// CREATE INDEX statements acknowledged so far, and restarts: a view
    /// taken at a smaller count is older than an index built at a larger.
    index_epoch: u64,
    /// Implicit locks the engine made explicit since they were last
    /// judged (see [`judge_conversions`]).
    conversions: Vec<models::lock::OEvent>,
    /// An insert of the step just made that waits at another row's record
    /// (see [`place_insert`]).
    unplaced_insert: Option<UnplacedInsert>,
    /// The wait of the step just made, if the oracle was told it is at
    /// another row's clustered record (`World::waits_at_another_row`):
    /// the waiter and the row's table and primary key.
    other_row_wait: Option<(u64, String, Vec<ModelValue>)>,
    /// The session that made the last call, and the rows that call's
    /// change writes (its old key gone, its new row in; see
    /// [`session::statement_writes`]): an implicit lock its own statement
    /// made explicit may be on one of them before the statement fails
    /// and writes nothing (InnoDB 1.0.6 converts the caller's own implicit
    /// locks too, `lock_rec_convert_impl_to_expl`).
    step_writes: Option<(SessionId, Vec<Write>)>,
    /// The releases the step's call may make: a READ COMMITTED or READ
    /// UNCOMMITTED transaction letting go of the rows of a table (by id)
    /// that its filtered change read and rejected (see [`filter`]).
    allowed_releases: Option<(u64, String, std::collections::BTreeSet<u64>)>,
    /// The tables a copying ALTER rebuilt, with the run's index change
    /// ([`World::index_epoch`]) it was: a REPEATABLE READ view older than
    /// it finds the table empty.
    rebuilt: BTreeMap<String, u64>,
    /// Time-driven scheduling ([`timed`]): the storage charges latency to
    /// each step, not the clock.
    timed: bool,
    /// The session each transaction the engine named belongs to, so that
    /// a wait's blockers can be drawn as arrows between sessions.
    trx_sessions: BTreeMap<u64, SessionId>,
}

/// Who issued the syncs the timeline draws ([`World::keep_device_events`]).
#[derive(Debug, Clone, Copy)]
enum SyncsBy<'a> {
    /// The sessions of a time-driven turn.
    Turn(&'a [u32]),
    /// The engine's background round.
    Background,
    /// A turn a crash cut short (drawn from its start: its processor time
    /// is not known then).
    CrashedTurn,
}

impl World {
    /// Anchors the fsync failures the disk injected since the last look to
    /// the statement issued last before each, or, where none was issued
    /// since the engine was last opened after a crash, to that attempt to
    /// open it (those in setup stay unanchored).
    fn note_fsync_failures(&mut self) {
        let new = self.storage.fsync_failures_since(self.fsync_failures_seen);
        self.fsync_failures_seen += new.len();
        match (self.last_issued, self.last_open) {
            (Some((txn, statement, io)), _) => {
                for index in new.into_iter().filter(|&i| i >= io) {
                    self.observed_fsync_anchors.push(crate::plan::CrashAnchor {
                        txn,
                        statement,
                        after_ios: index - io,
                    });
                }
            }
            (None, Some((open, io))) => {
                for index in new.into_iter().filter(|&i| i >= io) {
                    self.observed_recovery_fsync_anchors
                        .push(crate::plan::RecoveryAnchor {
                            open,
                            after_ios: index - io,
                        });
                }
            }
            (None, None) => {}
        }
    }

    /// An attempt to open the engine after a crash begins: the failures so
    /// far are anchored, and the plan's fsync failures anchored to this
    /// attempt are armed ([`World::opened`] drops those that did not
    /// strike).
    fn opening(&mut self) {
        self.note_fsync_failures();
        let io = self.storage.counters().ops;
        let n = self.opens;
        self.opens += 1;
        self.last_open = Some((n, io));
        for a in self.recovery_fsync_anchors.iter().filter(|a| a.open == n) {
            self.storage.fail_sync_at(io.saturating_add(a.after_ios));
        }
    }

    /// An attempt to open the engine ended: what it armed and did not
    /// strike must not strike the workload.
    fn opened(&mut self) {
        self.storage.disarm_sync_failures();
    }

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

    /// A line for the reader of a trace only, not hashed (the facts it
    /// shows follow from the hashed lines' inputs): built only when the
    /// trace's lines are kept.
    fn kept_event(&mut self, kind: &str, fields: impl FnOnce(&World) -> serde_json::Value) {
        if self.trace.lines.is_none() {
            return;
        }
        let mut obj = serde_json::Map::new();
        obj.insert("t_us".into(), json!(self.clock_now()));
        obj.insert("io".into(), json!(self.storage.counters().ops));
        obj.insert("kind".into(), json!(kind));
        if let serde_json::Value::Object(f) = fields(self) {
            obj.extend(f);
        }
        self.trace.keep(serde_json::Value::Object(obj).to_string());
    }

    /// For the timeline, kept lines of what the device and the engine's
    /// background did: each sync the device ran since the last call (its
    /// times moved `shift_us` later: a turn's I/O follows its processor
    /// time), issued by `by`, then the engine's dirty pages, log age,
    /// checkpoints and pages flushed at `at_us`.
    fn keep_device_events(&mut self, by: SyncsBy<'_>, shift_us: u64, at_us: u64) {
        if self.trace.lines.is_none() {
            return;
        }
        let (sessions, source) = match by {
            SyncsBy::Turn(ids) => (ids, "turn"),
            SyncsBy::Background => (&[][..], "background"),
            SyncsBy::CrashedTurn => (&[][..], "crashed turn"),
        };
        for span in self.storage.take_sync_spans() {
            self.kept_event("sync", |_| {
                json!({
                    "start_us": span.start_us + shift_us,
                    "end_us": span.end_us + shift_us,
                    "file": span.file,
                    "sessions": sessions,
                    "source": source,
                })
            });
        }
        let Some(p) = self.engine.as_ref().map(|e| e.pager()) else {
            return;
        };
        let counters = json!({
            "at_us": at_us,
            "epoch": self.storage.epoch(),
            "dirty_pages": p.pool.dirty_count(),
            "log_age": p.log.lsn().saturating_sub(p.log.checkpoint_lsn()),
            "checkpoints": p.stats.checkpoints,
            "pages_flushed": p.stats.pages_flushed,
        });
        self.kept_event("counters", |_| counters);
    }

    /// The frequent event, one per statement step. Its hash covers what
    /// its line says (the I/O count, session, statement, result and time)
    /// but is taken from those values, not from the line: formatting a line
    /// for every step of every seed cost about 4% of a campaign, and lines
    /// are only kept when a trace is asked for.
    fn statement_event(&mut self, session: u32, req: &Request, result: Stepped<'_>) {
        let io = self.storage.counters().ops;
        let t_us = self.clock_now();
        let message = match result {
            Stepped::Failed(e) => Some(e.to_string()),
            _ => None,
        };
        self.trace
            .hash_statement(io, session, t_us, req, result, message.as_deref());
        if self.trace.lines.is_none() {
            return;
        }
        use std::fmt::Write as _;
        // The keys in order, as serde_json writes an object.
        let mut line = String::from("{");
        if let Stepped::Failed(e) = result {
            match e.mysql_code() {
                Some(code) => {
                    let _ = write!(line, "\"code\":{code},");
                }
                None => line.push_str("\"code\":null,"),
            }
        }
        // The rows answered, as a digest: runs that must agree row for row
        // (the compression oracle's metamorphic test) compare it.
        let rows: Option<Vec<&Vec<Value>>> = match result {
            Stepped::Done(Response::Row(r)) => Some(r.iter().collect()),
            Stepped::Done(Response::Rows(rs)) => Some(rs.iter().collect()),
            _ => None,
        };
        if let Some(rows) = rows {
            let digest = crate::storage::fnv1a(format!("{rows:?}").as_bytes());
            let _ = write!(line, "\"digest\":\"{digest:016x}\",");
        }
        let _ = write!(line, "\"io\":{io},\"kind\":\"statement\",");
        if let Some(m) = &message {
            line.push_str("\"message\":");
            push_json_str(&mut line, m);
            line.push(',');
        }
        line.push_str("\"op\":");
        push_json_str(&mut line, &describe(req));
        line.push_str(",\"result\":");
        let mut buf = String::new();
        push_json_str(
            &mut line,
            match result {
                Stepped::Waiting => "waiting",
                Stepped::Done(resp) => short(resp, &mut buf),
                Stepped::Failed(_) => "error",
            },
        );
        let _ = write!(line, ",\"session\":{session},\"t_us\":{t_us}}}");
        self.trace.keep(line);
    }

    /// Takes the counters of an engine about to go (crashed, stopped, or
    /// at the run's end) into the run's, and holds its INNODB_CMP to the
    /// rules: ok never above ops; nothing counted at a page size no table
    /// of the plan has; INNODB_CMP_RESET returns what INNODB_CMP shows and
    /// zeroes it; and the table agrees with the changes the engine counted
    /// (each recompression and reorganization is a compression, each
    /// change refused is a compression that did not fit and a
    /// decompression that rebuilt the frame).
    fn retire_engine(&mut self) {
        let Some(e) = self.engine.as_mut() else {
            return;
        };
        self.stats.failed_rollbacks += e.stats.failed_rollbacks;
        self.stats.merge_runs_spilled += e.stats.merge_runs_spilled;
        let z = e.pager().stats;
        let cmp = e.innodb_cmp();
        let reset = e.innodb_cmp_reset();
        let after = e.innodb_cmp();
        let mut problems = Vec::new();
        if reset != cmp {
            problems.push(format!(
                "INNODB_CMP_RESET returned {reset:?} where INNODB_CMP showed {cmp:?}"
            ));
        }
        if after.iter().any(|r| {
            (r.compress_ops, r.compress_ops_ok, r.uncompress_ops) != (0, 0, 0)
                || (r.compress_time, r.uncompress_time) != (0, 0)
        }) {
            problems.push(format!("INNODB_CMP after a reset: {after:?}"));
        }
        let sizes: std::collections::BTreeSet<usize> = self
            .schema
            .tables
            .iter()
            .filter_map(|t| t.zip_size)
            .collect();
        let (mut ops, mut ok, mut unzips) = (0, 0, 0);
        for r in &cmp {
            if r.compress_ops_ok > r.compress_ops {
                problems.push(format!("INNODB_CMP row with ok above ops: {r:?}"));
            }
            let used = r.compress_ops + r.uncompress_ops > 0;
            if used && !sizes.contains(&(r.page_size as usize)) {
                problems.push(format!(
                    "INNODB_CMP counts pages of {} bytes, which no table has: {r:?}",
                    r.page_size
                ));
            }
            ops += r.compress_ops;
            ok += r.compress_ops_ok;
            unzips += r.uncompress_ops;
        }
        if ops < z.zip_recompressions + z.zip_reorganizations
            || ops.saturating_sub(ok) < z.zip_refused
            || unzips < z.zip_refused
        {
            problems.push(format!(
                "INNODB_CMP ({ops} compressions, {ok} fit, {unzips} decompressions) disagrees with \
                 the engine's {} recompressions, {} reorganizations and {} refused changes",
                z.zip_recompressions, z.zip_reorganizations, z.zip_refused
            ));
        }
        // INNODB_CMPMEM: blocks only of the sizes the tables have, used and
        // free blocks tiling whole 16 KiB chunks, and _RESET returning the
        // table and zeroing its relocations.
        let mem = e.innodb_cmpmem();
        let mem_reset = e.innodb_cmpmem_reset();
        let mem_after = e.innodb_cmpmem();
        if mem_reset != mem {
            problems.push(format!(
                "INNODB_CMPMEM_RESET returned {mem_reset:?} where INNODB_CMPMEM showed {mem:?}"
            ));
        }
        if mem_after
            .iter()
            .any(|r| (r.relocation_ops, r.relocation_time) != (0, 0))
        {
            problems.push(format!("INNODB_CMPMEM after a reset: {mem_after:?}"));
        }
        let mut bytes = 0u64;
        for r in &mem {
            if r.pages_used > 0 && !sizes.contains(&(r.page_size as usize)) {
                problems.push(format!(
                    "INNODB_CMPMEM holds blocks of {} bytes, which no table has: {r:?}",
                    r.page_size
                ));
            }
            bytes += (r.pages_used + r.pages_free) * u64::from(r.page_size);
        }
        if !bytes.is_multiple_of(engine::page::PAGE_SIZE as u64) {
            problems.push(format!(
                "INNODB_CMPMEM's blocks ({bytes} bytes) do not fill whole 16 KiB frames: {mem:?}"
            ));
        }
        let relocations: u64 = mem.iter().map(|r| r.relocation_ops).sum();
        let pool = e.pager().pool.stats;
        self.violations.extend(problems);
        self.stats.zip_unzip_evictions += pool.unzip_evictions;
        self.stats.zip_unzips += pool.unzips;
        self.stats.zip_relocations += relocations;
        self.stats.zip_compress_ops += ops;
        self.stats.zip_compress_ok += ok;
        self.stats.zip_uncompress_ops += unzips;
        self.stats.zip_logged += z.zip_logged;
        self.stats.zip_recompressions += z.zip_recompressions;
        self.stats.zip_reorganizations += z.zip_reorganizations;
        self.stats.zip_reorganizations_ok += z.zip_reorganizations_ok;
        self.stats.zip_refused += z.zip_refused;
        self.stats.zip_splits_after_failure += z.zip_splits_after_failure;
    }

    /// The running engine's page compressions so far, every size
    /// (INNODB_CMP's COMPRESS_OPS); 0 without an engine.
    fn zip_compress_ops(&self) -> u64 {
        self.engine.as_ref().map_or(0, |e| {
            e.pager()
                .compression
                .cmp()
                .iter()
                .map(|(_, z)| z.compress_ops)
                .sum()
        })
    }

    fn engine(&mut self) -> &mut Engine {
        self.engine
            .as_mut()
            .expect("the engine is open between crashes")
    }

    /// Takes the engine's written and flushed LSN as claims, which the
    /// durability judge holds against the disk's record of log syncs.
    fn observe_log(&mut self) {
        if let Some((written, flushed, log_syncs)) = self.log_claims() {
            if let Some(v) = self.durability.observe(written, flushed, log_syncs) {
                self.violations.push(v);
            }
        }
    }

    /// Starts the durability record afresh (after setup or a recovery).
    fn reset_durability(&mut self) {
        if let Some((written, flushed, log_syncs)) = self.log_claims() {
            self.durability.reset(written, flushed, log_syncs);
        }
    }

    /// The engine's written and flushed LSN (claims) and the disk's count
    /// of acknowledged log syncs (its record).
    fn log_claims(&self) -> Option<(u64, u64, u64)> {
        let log = &self.engine.as_ref()?.pager().log;
        Some((
            log.written_lsn(),
            log.flushed_lsn(),
            self.storage.counters().log_syncs,
        ))
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
            crash_anchors: Vec::new(),
            unarmed_crash_anchors: Vec::new(),
            recovery_fsync_failure_anchors: Vec::new(),
            schedule: Default::default(),
            fsync_failure_anchors: Vec::new(),
        })
    })
}

/// A run built from its plan: the world, the engine set up with its
/// tables and preloaded rows, the faults armed, the sessions open.
struct Run {
    world: World,
    rng: ChaCha8Rng,
    sessions: Vec<Sess>,
}

/// What building a run from its plan gave.
enum Built {
    /// Ready to run.
    Ready(Box<Run>),
    /// The engine's setup failed (before any fault is on): the world holds
    /// the violation.
    SetupFailed(Box<World>),
}

/// Runs a plan: builds its world ([`build`]), runs its transactions
/// ([`drive`]), and ends it with a crash and its recovery ([`end`]).
fn execute_unguarded(plan: &Plan, keep_trace: bool) -> Result<Outcome, RunError> {
    let mut run = match build(plan, keep_trace)? {
        Built::Ready(run) => run,
        Built::SetupFailed(world) => return Ok(finish(plan, *world)),
    };
    drive(plan, &mut run);
    Ok(end(plan, *run))
}

/// Builds a plan's world: the engine's configuration, the simulated disk
/// and clock with the plan's faults, the model, the engine opened with its
/// tables and preloaded rows, the workload's faults and crashes armed, and
/// the sessions.
fn build(plan: &Plan, keep_trace: bool) -> Result<Built, RunError> {
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
            file_size_bytes: plan.log_file_kib * 1024,
            buffer_size_bytes: 64 * 1024,
        },
        flush_at_commit: flush,
        lock_wait_timeout_us: plan.lock_wait_timeout_s * 1_000_000,
        group_commit: plan.group_commit,
        // A time-driven run's grouped commits keep their locks until their
        // sync, as a server with the binary log does: the time a commit
        // waits for its sync is then time others wait for its rows.
        locks_until_durable: plan.timed && plan.group_commit,
        commit_mutex: plan.timed && plan.commit_mutex,
        canaries,
        file_per_table: !plan.system_tables,
        sort_buffer_bytes: plan
            .sort_buffer_bytes
            .unwrap_or(Config::default().sort_buffer_bytes),
        ..Config::default()
    };
    let storage = SimStorage::new();
    storage.set_tracing(keep_trace);
    let clock = SimClock::new();
    let mut fc = workload_faults(seed, lying, &faults);
    if plan.sync_latency_us > 0 {
        // Simulated time passes at every sync, so throughput can be told
        // in simulated seconds.
        fc.latency_us.sync = plan.sync_latency_us;
        storage.set_clock(clock.clone());
    }
    if let Some(l) = &plan.latency {
        // The profile's whole model: every operation costs.
        fc.latency_us = l.clone();
        storage.set_clock(clock.clone());
    }
    if plan.timed {
        // Latency goes to each step instead (set once setup is done).
        storage.set_clock(clock.clone());
    }
    let disk_headroom = plan.disk_headroom_kib.map(|k| k * 1024);
    let formats = [
        format_of(&plan.row_formats[0]).unwrap_or(RowFormat::Compact),
        format_of(&plan.row_formats[1]).unwrap_or(RowFormat::Compact),
    ];
    let mut definitions = vec![
        crate::tables::sbtest("sb", formats[0]),
        crate::tables::docs("docs", formats[1]),
    ];
    for t in &plan.tables {
        t.validate().map_err(RunError::BadProfile)?;
        definitions.push(t.definition());
    }
    let preloaded = preloaded_db(plan);
    let mut schema = crate::schema::Schema::of(&definitions);
    for (t, i) in plan.online_indexes() {
        schema.add_online(&t, &i);
    }
    let mut world = World {
        step_events: Vec::new(),
        locks: LockOracle::new(config.lock_wait_timeout_us, config.deadlock_detect),
        transfer_total: (plan.shape == crate::profile::Shape::Transfer)
            .then(|| balance_total(&preloaded)),
        storage: storage.clone(),
        clock: clock.clone(),
        config: config.clone(),
        engine: None,
        history: CommitHistory::new(preloaded.clone()).ordinal(schema.hidden_key_tables()),
        committed: Rc::new(preloaded),
        durability: DurabilityJudge::default(),
        log_fsync_failures: 0,
        call_start_us: 0,
        recovery_rng: ChaCha8Rng::seed_from_u64(seed ^ 0x7EC0_7E11_0000_0003),
        damaged_pages: std::collections::BTreeMap::new(),
        schema,
        uncommitted_reads: Vec::new(),
        row_seq: 0,
        insert_seq_override: None,
        anchors: plan.crash_at_statements.clone(),
        anchors_armed: vec![false; plan.crash_at_statements.len()],
        last_issued: None,
        final_crash: false,
        armed_at: None,
        observed_anchors: Vec::new(),
        observed_unarmed_anchors: Vec::new(),
        replay: Replay {
            turns: plan
                .schedule
                .iter()
                .flat_map(|s| s.turns.iter().copied())
                .collect(),
            crashes: plan
                .schedule
                .iter()
                .flat_map(|s| s.crashes.iter().copied())
                .collect(),
        },
        recorded: Default::default(),
        recovery_fsync_anchors: plan.fsync_failures_in_recovery.clone(),
        opens: 0,
        last_open: None,
        observed_recovery_fsync_anchors: Vec::new(),
        fsync_anchors: plan.fsync_failures_at_statements.clone(),
        fsync_anchors_armed: vec![false; plan.fsync_failures_at_statements.len()],
        observed_fsync_anchors: Vec::new(),
        fsync_failures_seen: 0,
        trace: Trace {
            hash: crate::storage::FNV_BASIS,
            lines: keep_trace.then(Vec::new),
        },
        violations: Vec::new(),
        stats: RunStats::default(),
        faults: faults.clone(),
        crash_plan: plan.crash_after_ios.clone(),
        crashes_armed: 0,
        checkpoint_crashes: plan.crash_after_checkpoints.clone(),
        checkpoint_crashes_armed: 0,
        checkpoint_watch_armed: false,
        scratch: ddl::initial(),
        online: plan
            .online_indexes()
            .into_iter()
            .map(|(t, i)| ((t, i.name), ddl::IndexState::Absent))
            .collect(),
        index_epoch: 0,
        conversions: Vec::new(),
        step_writes: None,
        unplaced_insert: None,
        other_row_wait: None,
        allowed_releases: None,
        rebuilt: BTreeMap::new(),
        timed: plan.timed,
        trx_sessions: BTreeMap::new(),
    };
    world.event(
        "run",
        json!({"seed": seed, "profile": plan.profile, "flush": flush.setting(), "pool_pages": config.buffer_pool_pages,
               "faults": format!("{faults:?}"), "canary": plan.canary, "transactions": plan.transactions.len()}),
    );
    let setup = (|| -> engine::Result<Engine> {
        let (mut e, _) = Engine::open(
            Box::new(storage.clone()),
            Box::new(clock.clone()),
            config.clone(),
        )?;
        for def in &definitions {
            e.create_table(def.clone())?;
        }
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
            if e.is_commit_queued(s) {
                // Queued for the binary log's mutex, which nobody holds.
                e.resume(s)?;
            }
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
            return Ok(Built::SetupFailed(Box::new(world)));
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
            scan_states: Vec::new(),
            kept_seq: None,
            in_flight: Vec::new(),
            insert_judged: 0,
            ready_us: plan.timed.then(|| rng.gen_range(0..plan.think_us.max(1))),
        });
    }
    Ok(Built::Ready(Box::new(Run {
        world,
        rng,
        sessions,
    })))
}

/// Runs a built plan's transactions, turn by turn (a recorded schedule's
/// turns first, then drawn ones, or the earliest event when time drives
/// the scheduler), recovering each crash, until every transaction has
/// ended, the engine stopped for good or the step budget ran out (a
/// liveness violation), and counts the workload's time, log syncs and
/// compressions.
fn drive(plan: &Plan, run: &mut Run) {
    let Run {
        world,
        rng,
        sessions,
    } = run;
    let mut timed = timed::Timed::new(plan);
    if plan.timed {
        world.storage.set_timeline(true);
    }
    let log_syncs_before = world.storage.counters().log_syncs;
    let zip_before = world.zip_compress_ops();
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
        if plan.timed {
            timed.settle(world, sessions, rng);
        }
        // The plan's recorded turn, while it has one; else a draw (the
        // earliest event, when time drives the scheduler).
        let turn = world.replay.turns.pop_front();
        let mut event = None;
        let think_us = match turn {
            Some(t) => t.think_us,
            None if plan.timed => {
                let Some(e) = timed.next_event(world, sessions, started < n_txns, rng) else {
                    break;
                };
                event = Some(e);
                e.at_us - world.clock_now()
            }
            None => rng.gen_range(0..plan.think_us.max(1)),
        };
        let stopped = if plan.timed {
            timed::advance(world, think_us)
        } else {
            world.clock.advance_us(think_us);
            None
        };
        let commit_waiting = sessions
            .iter()
            .any(|s| s.txn.as_ref().is_some_and(|t| t.commit_written.is_some()));
        if !plan.timed && sessions.iter().all(|s| s.waiting) && !commit_waiting {
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
        // tell a timeout that fires late (unless the engine stopped in the
        // background work the clock's advance ran).
        let now = world.clock_now();
        let mut crashed = stopped;
        for i in 0..sessions.len() {
            let s = &sessions[i];
            let due = s.waiting
                && s.trx
                    .and_then(|t| world.locks.deadline(t))
                    .is_some_and(|d| d <= now);
            if due && crashed.is_none() && world.engine.is_some() {
                if plan.timed {
                    timed.stepping(world, i, now);
                }
                crashed = stepped(world, sessions, i);
            }
        }
        if let Some(c) = crashed {
            // The turn's think time passed: a turn with nothing to do
            // (the engine stopped in it).
            world.recorded.turns.push(crate::schedule::Turn {
                txn: None,
                at: 0,
                think_us,
                session: turn.map_or(0, |t| t.session),
            });
            recover(world, rng, sessions, c);
            continue;
        }
        if world.engine.is_none() {
            // Bit rot caught while a wait was resumed: the run is over.
            break;
        }
        world.locks.check_timeouts(now);
        world.take_lock_violations();
        let i = match (turn, event) {
            (None, Some(e)) if e.kind != timed::Kind::Step => {
                // The event was a wait's deadline, resumed above: the turn
                // steps nothing more.
                world.recorded.turns.push(crate::schedule::Turn {
                    txn: None,
                    at: 0,
                    think_us,
                    session: e.session,
                });
                continue;
            }
            (None, Some(e)) => e.session,
            (None, None) => rng.gen_range(0..sessions.len()),
            (Some(t), _) => match turn_session(&t, sessions, started) {
                Some(i) => i,
                None => {
                    // A turn with nothing to do, or whose work is gone or
                    // not there yet: only its think time passed.
                    world.recorded.turns.push(crate::schedule::Turn {
                        txn: None,
                        at: 0,
                        ..t
                    });
                    continue;
                }
            },
        };
        world.recorded.turns.push(crate::schedule::Turn {
            think_us,
            session: i,
            ..turn_of(plan, &sessions[i], started)
        });
        if plan.timed {
            timed.stepping(world, i, world.clock_now());
        }
        if sessions[i].txn.is_none() {
            if started >= n_txns {
                continue;
            }
            started += 1;
            match start_txn(plan, world, rng, sessions, i, started - 1) {
                Flow::Next => continue,
                Flow::Stop => break,
            }
        }
        let crashed = stepped(world, sessions, i);
        if let Some(crashed) = crashed {
            recover(world, rng, sessions, crashed);
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
    if plan.timed {
        timed.settle(world, sessions, rng);
    }
    world.stats.workload_us = world.clock_now().max(timed.end_us);
    world.stats.workload_log_syncs = world.storage.counters().log_syncs - log_syncs_before;
    world.stats.workload_zip_compress_ops = world.zip_compress_ops().saturating_sub(zip_before);
}

/// What the loop does after a turn that started a transaction.
enum Flow {
    /// On to the next turn.
    Next,
    /// The run is over (the engine stopped for good).
    Stop,
}

/// Starts the plan's transaction `index` in the idle session `i`: a DDL
/// statement runs at once; otherwise the transaction's steps are laid
/// out, its isolation level set and (unless it is an autocommit
/// statement) BEGIN issued, each crash recovered.
fn start_txn(
    plan: &Plan,
    world: &mut World,
    rng: &mut ChaCha8Rng,
    sessions: &mut [Sess],
    i: usize,
    index: usize,
) -> Flow {
    let planned = &plan.transactions[index];
    if let [st] = planned.statements.as_slice() {
        if st.is_ddl() {
            // Run at once in the idle session; one that must wait
            // for its table lock keeps the session busy.
            if let Some(crashed) = ddl::start_ddl(world, index, st, sessions, i) {
                recover(world, rng, sessions, crashed);
            }
            return Flow::Next;
        }
    }
    let isolation = planned
        .isolation
        .as_deref()
        .and_then(crate::plan::isolation_of);
    let steps: Vec<(usize, Stmt)> = planned
        .statements
        .iter()
        .enumerate()
        .flat_map(|(k, st)| {
            let steps: Vec<Stmt> = match st {
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
                PlannedStmt::ChangeWhere { .. } => vec![Stmt::ChangeWhere(st.clone())],
                other => other.request().map(Stmt::Req).into_iter().collect(),
            };
            steps.into_iter().map(move |x| (k, x))
        })
        .collect();
    let (stmt_map, stmts): (Vec<usize>, Vec<Stmt>) = steps.into_iter().unzip();
    sessions[i].txn = Some(Txn {
        plan_index: index,
        stmt_map,
        stmts,
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
        snapshot_epoch: 0,
        touched: Default::default(),
        commit_written: None,
        locked_ranges: Vec::new(),
        autocommit: planned.autocommit,
        answer: None,
        filter: None,
    });
    // Its engine transaction is learnt from its first statement.
    sessions[i].trx = None;
    if let Some(iso) = isolation {
        sessions[i].isolation = iso;
    }
    if let Some(iso) = isolation {
        let r = exec(world, &mut sessions[i], Request::SetIsolation(iso));
        if let Some(crashed) = r {
            recover(world, rng, sessions, crashed);
            return Flow::Next;
        }
        if world.engine.is_none() {
            return Flow::Stop;
        }
    }
    if planned.autocommit {
        return Flow::Next;
    }
    let r = exec(world, &mut sessions[i], Request::Begin);
    judge_early_releases(world, sessions, (i, 0));
    judge_conversions(world, sessions);
    if let Some(crashed) = r {
        recover(world, rng, sessions, crashed);
    }
    Flow::Next
}

/// Ends a run with a crash and its recovery (unless the engine stopped
/// for good or a violation ended it already), so that every run exercises
/// recovery, and gives its outcome.
fn end(plan: &Plan, run: Run) -> Outcome {
    let Run {
        mut world,
        mut rng,
        mut sessions,
    } = run;
    // Every run ends with a crash, so every run exercises recovery.
    world.final_crash = true;
    if world.engine.is_some() && world.violations.is_empty() {
        world.storage.crash_now();
        world.event("crash", json!({"final": true}));
        world.crash_plan.clear();
        recover(&mut world, &mut rng, &mut sessions, true);
    }
    finish(plan, world)
}

/// The session a recorded turn steps: the one running its transaction
/// (whatever comes next there), or, for a start, an idle one (the turn's
/// own if it is idle), which starts the next transaction in plan order.
/// Transactions start in plan order, so a start turn for a transaction
/// later than the next one means an earlier start could not happen (no
/// session was idle): it starts the next one, and the schedule catches up.
/// `None` when the turn's work is gone, or no session is idle, or for a
/// turn with nothing to do.
fn turn_session(t: &crate::schedule::Turn, sessions: &[Sess], started: usize) -> Option<usize> {
    let txn = t.txn?;
    if let Some(i) = sessions
        .iter()
        .position(|s| s.txn.as_ref().is_some_and(|x| x.plan_index == txn))
    {
        return Some(i);
    }
    if t.at != 0 || txn < started {
        return None;
    }
    let idle = |i: usize| sessions.get(i).is_some_and(|s| s.txn.is_none());
    if idle(t.session) {
        Some(t.session)
    } else {
        (0..sessions.len()).find(|&i| idle(i))
    }
}

/// The turn a step of session `s` is, but for its think time and session
/// (see [`crate::schedule`]).
fn turn_of(plan: &Plan, s: &Sess, started: usize) -> crate::schedule::Turn {
    let (txn, at) = match &s.txn {
        None if started < plan.transactions.len() => (Some(started), 0),
        None => (None, 0),
        Some(t) => {
            // A waiting statement was issued already: the turn resumes it.
            let at = match (t.ending, s.waiting) {
                (true, _) => None,
                (false, true) => t.next.checked_sub(1).and_then(|n| t.stmt_map.get(n)),
                (false, false) => t.stmt_map.get(t.next),
            };
            let end = plan.transactions[t.plan_index].statements.len() + 1;
            (Some(t.plan_index), at.map_or(end, |k| k + 1))
        }
    };
    crate::schedule::Turn {
        txn,
        at,
        think_us: 0,
        session: 0,
    }
}

/// Steps session `i` and judges what the step did to the locks and what
/// its READ UNCOMMITTED reads saw, at once: against the committed state
/// of this instant, which the next step may change (a resumption at a
/// lock wait deadline is a step like any other). Returns what
/// [`step_session`] returns.
fn stepped(world: &mut World, sessions: &mut [Sess], i: usize) -> Option<bool> {
    let writes_before = sessions[i].txn.as_ref().map_or(0, |t| t.writes.len());
    let crashed = step_session(world, &mut sessions[i]);
    place_insert(world, sessions, i);
    judge_uncommitted_reads(world, sessions);
    judge_early_releases(world, sessions, (i, writes_before));
    judge_conversions(world, sessions);
    crashed
}

/// An insert that waits in a unique index's duplicate check at another
/// row's clustered record (for that row's uncommitted inserter), its
/// entries before that index judged once the index is known.
struct UnplacedInsert {
    trx: u64,
    table: String,
    /// The insert's row.
    write: Write,
    /// Its transaction's writes before it.
    own: Vec<Write>,
    /// The primary key of the row it waits at.
    other: Vec<models::ModelValue>,
}

/// Judges the entries an insert put in before the unique index whose
/// duplicate check it waits in at another row's record (see
/// [`UnplacedInsert`]), against the step's lock events: the index is the
/// first unique one whose key the insert's row shares with that row, as
/// the open transaction that wrote it has it.
fn place_insert(world: &mut World, sessions: &mut [Sess], i: usize) {
    let Some(u) = world.unplaced_insert.take() else {
        return;
    };
    let theirs = sessions
        .iter()
        .filter(|s| s.trx != Some(u.trx))
        .flat_map(|s| s.txn.iter().flat_map(|t| &t.writes).chain(&s.in_flight))
        .rfind(|w| w.table == u.table && w.key == u.other)
        .and_then(|w| w.row.clone());
    let (Some(theirs), Some(ours), Some(e)) = (theirs, u.write.row.as_ref(), world.engine.as_ref())
    else {
        return;
    };
    let Some(upto) =
        crate::judge::locks::unique_index_shared(e, &world.schema, &u.table, ours, &theirs)
    else {
        return;
    };
    let from = sessions[i].insert_judged;
    if upto > from {
        session::judge_insert_gap(world, u.trx, &u.table, &u.write, &u.own, from..upto);
        sessions[i].insert_judged = upto;
    }
}

/// Judges the locks released in the step just made by transactions that
/// went on (two-phase locking), against the committed state and the
/// writes of every transaction still open. A transaction that holds no
/// lock any more has ended, though its session may not know yet (a
/// deadlock victim rolled back during another session's statement): its
/// writes are gone. Nor does the statement of the step count (`stepped`:
/// the session and how many writes it had before): a statement that
/// waited was rolled back, its inserts leaving the index, and run again
/// inside the same call, so what it wrote says nothing of what was there
/// when the locks moved.
fn judge_early_releases(world: &mut World, sessions: &[Sess], stepped: (usize, usize)) {
    let early = world.locks.take_early_releases();
    let allowed = world.allowed_releases.take();
    if early.is_empty() {
        return;
    }
    let Some(engine) = world.engine.as_ref() else {
        return;
    };
    let open: Vec<&[Write]> = sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| s.trx.is_some_and(|t| world.locks.holds_any(t)))
        .filter_map(|(j, s)| {
            let w = s.txn.as_ref()?.writes.as_slice();
            Some(if j == stepped.0 {
                &w[..stepped.1.min(w.len())]
            } else {
                w
            })
        })
        .collect();
    // A READ COMMITTED filtered change lets go of one X lock on each row
    // it rejected (row_unlock_for_mysql: the last of its X locks in the
    // record's queue, of any gap kind); the filter judges that the locks
    // it took went.
    let mut let_go_rows = std::collections::BTreeSet::new();
    for r in &early {
        let let_go = allowed.as_ref().and_then(|(trx, table, ids)| {
            let row = crate::judge::locks::clustered_row(engine, &world.schema, &r.target)?;
            let id = match row.1.as_slice() {
                [ModelValue::Int(id)] => u64::try_from(*id).ok()?,
                _ => return None,
            };
            (r.trx == *trx
                && matches!(r.mode, models::lock::OMode::Record(true, _))
                && row.0 == *table
                && ids.contains(&id))
            .then_some(id)
        });
        if let Some(id) = let_go {
            if let_go_rows.insert(id) {
                continue;
            }
        }
        if let Some(v) =
            crate::judge::locks::early_release(engine, &world.schema, &world.committed, &open, r)
        {
            world.violations.push(format!("lock oracle: {v}"));
        }
    }
}

/// Judges the implicit locks made explicit since the last judgment: each
/// holder must have written the row (see
/// [`crate::judge::locks::judge_conversion`]). A holder no session knows
/// as its transaction any more (it ended) cannot be judged.
fn judge_conversions(world: &mut World, sessions: &[Sess]) {
    if world.conversions.is_empty() {
        return;
    }
    let conversions = std::mem::take(&mut world.conversions);
    let Some(engine) = world.engine.as_ref() else {
        return;
    };
    for ev in &conversions {
        if crate::judge::locks::on_secondary(engine, ev) {
            world.stats.secondary_locks_converted += 1;
        }
        let holder = sessions.iter().find(|s| s.trx == Some(ev.trx));
        if let Some((txn, s)) = holder.and_then(|s| s.txn.as_ref().map(|t| (t, s))) {
            let mut writes = txn.writes.clone();
            writes.extend(s.in_flight.iter().cloned());
            if let Some((_, w)) = world.step_writes.as_ref().filter(|(id, _)| *id == s.id) {
                writes.extend(w.iter().cloned());
            }
            if let Some(v) = crate::judge::locks::judge_conversion(
                engine,
                &world.schema,
                &world.committed,
                ev,
                &writes,
            ) {
                world.violations.push(format!("lock oracle: {v}"));
            }
        }
    }
}

/// Judges the READ UNCOMMITTED reads of the step just made against the
/// committed state and the writes of every transaction still open.
fn judge_uncommitted_reads(world: &mut World, sessions: &[Sess]) {
    if world.uncommitted_reads.is_empty() {
        return;
    }
    let open: Vec<&[Write]> = sessions
        .iter()
        .filter_map(|s| s.txn.as_ref().map(|t| t.writes.as_slice()))
        .chain(
            sessions
                .iter()
                .filter(|s| !s.in_flight.is_empty())
                .map(|s| s.in_flight.as_slice()),
        )
        .collect();
    for (read, resp) in std::mem::take(&mut world.uncommitted_reads) {
        if let Some(v) = crate::judge::reads::judge_uncommitted(
            &world.schema,
            &world.committed,
            &open,
            &read,
            &resp,
        ) {
            world.violations.push(format!("{}: {v}", describe(&read)));
        }
    }
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
    world.retire_engine();
    world.stats.sim_us = world.clock_now();
    world.stats.io_ops = world.storage.counters().ops;
    let f = world.storage.fault_counters();
    world.stats.fsync_failures = f.fsync_failures;
    world.stats.full_disk_errors = f.full_disk_errors;
    world.stats.locks_inherited = world.locks.stats.inherited;
    world.stats.locks_converted = world.locks.stats.converted;
    world.stats.victims_by_weight = world.locks.stats.victims_by_weight;
    Outcome {
        seed: plan.seed,
        profile: plan.profile.clone(),
        violations: world.violations,
        trace_hash: world.trace.hash,
        trace: world.trace.lines.unwrap_or_default(),
        stats: world.stats,
        crash_anchors: world.observed_anchors,
        unarmed_crash_anchors: world.observed_unarmed_anchors,
        schedule: world.recorded,
        fsync_failure_anchors: world.observed_fsync_anchors,
        recovery_fsync_failure_anchors: world.observed_recovery_fsync_anchors,
    }
}

impl World {
    fn clock_now(&self) -> u64 {
        use engine::io::Clock;
        self.clock.now_us()
    }
}

fn arm_crash(world: &mut World) {
    // The next crash tied to a checkpoint: counted from this (re)start,
    // at a write to either checkpoint slot of the first log file (the
    // format's fixed places: engine::redo, LOG_CHECKPOINT_1 and _2).
    let watch = world
        .checkpoint_crashes
        .get(world.checkpoint_crashes_armed)
        .map(|c| crate::storage::WriteWatch {
            file: "ib_logfile0".into(),
            offsets: vec![512, 1536],
            nth: c.nth,
            after_ops: c.after_ios,
        });
    world.checkpoint_crashes_armed += usize::from(watch.is_some());
    world.checkpoint_watch_armed = watch.is_some();
    world.storage.watch_writes(watch);
    match world.crash_plan.get(world.crashes_armed) {
        None => world.disarm(),
        Some(&after) => {
            world.crashes_armed += 1;
            let at = world.storage.counters().ops + after;
            world.storage.set_crash_at(Some(at));
            world.armed_at = Some(at);
        }
    }
}

impl World {
    /// No crash armed, nor an anchored fsync failure (what was armed for
    /// the workload must not strike inside recovery).
    fn disarm(&mut self) {
        self.storage.set_crash_at(None);
        self.storage.disarm_sync_failures();
        self.armed_at = None;
    }

    /// The runner issues statement `statement` of planned transaction
    /// `txn`: crash anchors on it are armed (the earliest armed crash
    /// strikes).
    fn issued(&mut self, txn: usize, statement: usize) {
        let io = self.storage.counters().ops;
        self.note_fsync_failures();
        self.last_issued = Some((txn, statement, io));
        self.last_open = None;
        for (i, a) in self.fsync_anchors.iter().enumerate() {
            if !self.fsync_anchors_armed[i] && (a.txn, a.statement) == (txn, statement) {
                self.fsync_anchors_armed[i] = true;
                self.storage.fail_sync_at(io + a.after_ios);
            }
        }
        for (i, a) in self.anchors.iter().enumerate() {
            if self.anchors_armed[i] || (a.txn, a.statement) != (txn, statement) {
                continue;
            }
            self.anchors_armed[i] = true;
            let at = io + a.after_ios;
            if self.armed_at.is_none_or(|x| at < x) {
                // A checkpoint's watch may have armed a sooner crash: it
                // stays.
                self.storage.set_crash_at_earliest(at);
                self.armed_at = Some(at);
            }
        }
    }
}

/// The disk's faults for a workload that switched on `faults` (the kinds
/// that act while it runs: failed fsyncs, misdirected writes, lost
/// namespace operations, bit rot), seeded with `seed`.
pub fn workload_faults(seed: u64, lying: bool, faults: &[FaultKind]) -> FaultConfig {
    let mut fc = FaultConfig {
        seed,
        lying_fsync: lying,
        ..FaultConfig::default()
    };
    if faults.contains(&FaultKind::FsyncFailure) {
        fc.p_fsync_failure = 0.02;
    }
    if faults.contains(&FaultKind::MisdirectedWrite) {
        // A page write of a data file lands on another page as the power
        // fails (see FaultConfig::crash_after_misdirection): about one in
        // MISDIRECTION_ODDS page writes.
        fc.p_misdirected_write = 1.0 / MISDIRECTION_ODDS;
        fc.misdirect_data_files_only = true;
        fc.crash_after_misdirection = true;
    }
    if faults.contains(&FaultKind::LostNamespaceOps) {
        // A create or remove is durable once the directory is synced.
        fc.lose_unsynced_namespace_ops = true;
    }
    if faults.contains(&FaultKind::BitRot) {
        fc.bit_rot = Some(crate::storage::BitRot {
            per_restart_flips: 1 + (seed % 3) as u32,
            include_redo_log: false,
        });
    }
    fc
}
