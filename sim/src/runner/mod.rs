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
//! The runner's rooms: this module holds the world; `build` makes it from
//! a plan and `drive` runs the scheduler's loop over it; `session` drives one session's statements and judges their
//! results in lockstep; `recovery` crashes, restarts and recovers, and
//! has the recovered state judged; `trace` records and hashes the run;
//! `stats` counts what it reached. The judging itself lives in
//! [`crate::judge`].

mod build;
mod ddl;
mod drive;
mod filter;
mod recovery;
mod session;
mod stats;
mod timed;
mod timeline;
mod trace;

pub use build::workload_faults;
pub use stats::RunStats;
pub use timeline::{check_chrome_trace, chrome_trace};
pub use trace::describe;

use crate::clock::SimClock;
use crate::judge::durability::{CommitRecord, DurabilityJudge};
use crate::plan::{format_of, Plan, PlannedStmt};
use crate::profile::{FaultKind, Profile};
use crate::storage::faults::FaultConfig;
use crate::storage::{CrashMode, SimStorage};
use build::build;
use drive::{drive, end, finish};
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
