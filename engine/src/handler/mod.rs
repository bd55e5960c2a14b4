//! The engine: sessions submitting statements, step by step. Mirrors the
//! part of InnoDB's `ha_innodb.cc` and `row0mysql.cc` that drives
//! transactions for the server.
//!
//! The engine is single-threaded and step-driven: a session submits a
//! [`Request`] and gets back either its result or [`Step::Waiting`] (the
//! statement must wait for a lock, see [`crate::lock`]). A waiting
//! statement has had its partial effects rolled back but keeps the locks
//! it took and its place in the lock queue; [`Engine::resume`] runs it
//! again once its lock is granted, fails it with 1205 when the lock wait
//! timeout passes on the engine's clock, or with 1213 if a deadlock search
//! chose its transaction as the victim. Background work (the
//! once-a-second log flush and sync, the page cleaner, purge, checkpoints)
//! runs inside calls when the clock passes its deadline, so given the
//! configuration, the requests and the clock, a run is deterministic.
//!
//! An I/O error or a corrupt page met while changing pages stops the engine
//! ([`Error::Halted`] from then on): memory may hold changes the log does
//! not, so the only safe continuation is to reopen and recover.
//!
//! ```text
//!   mod.rs       the engine, its sessions, execute/resume, background work
//!   request.rs   Request, Response, Step: what a session asks and gets
//!   commit.rs    statements and transactions: scope, commit, rollback
//!   dml.rs       INSERT, UPDATE, DELETE against the row layer
//!   read.rs      read views, the index a scan takes, locking reads
//!   sessions.rs  opening and closing sessions, their state as callers see it
//!   ddl.rs, index.rs, info.rs, recovery.rs, config.rs
//! ```

mod commit;
mod config;
mod ddl;
mod dml;
mod estimate;
mod verify;
pub use verify::FileReport;
mod foreign;
mod index;
mod info;
mod read;
mod recovery;
mod request;
mod sessions;

pub use config::{Config, FlushAtCommit};
pub use ddl::{RowMap, TableStats, TableStatus};
use dml::*;
pub use index::{DdlStep, IndexBuild};
pub use info::{
    statement_text, DeadlockTrx, InnodbCmp, InnodbCmpMem, InnodbLock, InnodbLockWait, InnodbTrx,
    LatestDeadlock,
};
use read::*;
pub use recovery::{RecoveryPhase, RecoveryReport};
pub use request::{RangeBound, Request, Response, Step};

use crate::btree::{Bound, Direction, Key};
use crate::dict::Table;
use crate::error::{Error, Result};
use crate::lock::{Deadlock, EventKind, LockSys, Mode, RecMode, TableMode, Target};
use crate::pager::Pager;
use crate::record::{self, Value};
use crate::row::locking::{self as row_locking, LockCtx};
use crate::row::select::{self, ReadMode};
use crate::row::write::{self, Outcome};
use crate::row::{self, Tables};
use crate::trx::{Isolation, Trx, TrxSys};
use std::collections::BTreeMap;

/// Identifies a session.
pub type SessionId = u32;

#[derive(Debug)]
struct Pending {
    request: Request,
    since_us: u64,
    /// Where its locking scan goes on from when it runs again.
    resume: Option<crate::row::locking::ScanResume>,
    /// The transaction's undo number when the request first ran: what a
    /// lock wait timeout rolls it back to (an insert keeps its work done
    /// in place through a wait).
    undo_mark: u64,
}

#[derive(Debug, Default)]
struct Session {
    trx: Option<Trx>,
    /// The open transaction was started by the statement itself
    /// (autocommit), not by BEGIN.
    implicit: bool,
    autocommit_off: bool,
    isolation: Isolation,
    /// The session's innodb_lock_wait_timeout, if set.
    lock_wait_timeout_us: Option<u64>,
    pending: Option<Pending>,
    /// The deadlock search chose this session's transaction as the victim
    /// while it waited: it was rolled back, and the waiting statement gets
    /// 1213 when it resumes.
    victim: bool,
    /// The rows of the last semi-consistent read that were read unlocked,
    /// by position.
    semi_rows: Vec<usize>,
    /// The place of the running statement's locking scan: set when it
    /// must wait (moved into its [`Pending`]), given back when it runs
    /// again.
    scan_resume: Option<crate::row::locking::ScanResume>,
    /// The DB_ROW_ID the running insert into a table without a primary
    /// key took (with the table's id), kept while it waits so that it
    /// inserts under the same id when it runs again: InnoDB allocates the
    /// id once (`row_ins_alloc_row_id_step`) and `row_insert_for_mysql`
    /// runs the same insert node again after a lock wait.
    kept_row_id: Option<(u64, u64)>,
    /// How far the running insert into a table (by id) got before it
    /// waited: its clustered record and this many secondary entries are
    /// in ([`write::insert`]); it goes on from there when it runs again.
    insert_progress: Option<(u64, usize)>,
    /// An update of a table (by id) that moves its row and waited in its
    /// insert: its delete is done, and its insert got this far
    /// ([`write::update_returning`]); it goes on from there.
    update_progress: Option<(u64, Option<usize>)>,
    /// An update in place or a delete of a table (by id) that waited in a
    /// secondary index: its clustered change and the entries before that
    /// index are done ([`write::KeptChange`]); it goes on from there.
    change_progress: Option<(u64, write::KeptChange)>,
    /// The undo number the request that runs again after a wait began at
    /// (moved here from its [`Pending`] for the run).
    undo_mark: Option<u64>,
    /// The DB_ROW_ID of each row the last read of a table without a
    /// primary key returned, in order (empty after a read of any other
    /// table).
    row_refs: Vec<u64>,
    /// Group commit: a committed transaction waiting for the sync that makes
    /// it durable before it is acknowledged, and the statement's response.
    commit_wait_lsn: Option<u64>,
    commit_wait_response: Option<Response>,
    /// With [`Config::locks_until_durable`]: the committed transaction
    /// whose locks the sync releases.
    commit_wait_trx: Option<u64>,
    /// With [`Config::commit_mutex`]: the session's prepared transaction
    /// waits for the mutex to commit (its response in
    /// `commit_wait_response`).
    commit_queued: bool,
    /// The id of the last transaction the session began.
    last_trx: Option<u64>,
    /// A statement of several requests is open ([`Engine::begin_statement`]).
    statement: Option<StatementScope>,
    /// Where the open statement's row-by-row locking scan goes on from,
    /// once the rows it handed over are changed
    /// ([`Engine::set_statement_row_by_row`]): its next locking scan
    /// starts there.
    read_on: Option<ReadOn>,
    /// Every locking scan of the session reads row by row, statement or
    /// not ([`Engine::set_row_by_row`]).
    row_by_row: bool,
    /// `foreign_key_checks=0`: no FOREIGN KEY check or action runs.
    no_foreign_checks: bool,
    /// The request running is a SELECT's read (see
    /// [`Request::Locking`]'s `index_condition`).
    index_condition: bool,
    /// The request running reads its secondary index alone where it
    /// locks S ([`Request::IndexOnly`]).
    index_only: bool,
}

/// Where a statement of several requests began.
#[derive(Debug, Clone, Copy)]
struct StatementScope {
    /// The transaction's undo number when the statement began.
    undo_no: u64,
    /// The statement replaces, updates or ignores the rows its writes
    /// collide with (REPLACE, INSERT ... ON DUPLICATE KEY UPDATE, INSERT
    /// IGNORE): its duplicate checks take X locks (InnoDB's
    /// `trx->duplicates`, set by `ha_innobase::extra`).
    duplicates: bool,
    /// The statement changes each row its locking scan reads before the
    /// scan reads on ([`Engine::set_statement_row_by_row`]).
    row_by_row: bool,
}

/// Counters an engine keeps about itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct EngineStats {
    /// Transactions committed.
    pub commits: u64,
    /// Transactions rolled back.
    pub rollbacks: u64,
    /// Statements that had to wait.
    pub waits: u64,
    /// Deadlocks found.
    pub deadlocks: u64,
    /// Lock wait timeouts.
    pub lock_wait_timeouts: u64,
    /// Inserts that waited with their clustered record in place.
    pub inserts_kept_in_place: u64,
    /// Updates moving their row that waited in its insert with their
    /// delete kept.
    pub updates_kept_deleted: u64,
    /// Background rounds run.
    pub background_rounds: u64,
    /// Syncs made for groups of waiting commits.
    pub group_commit_syncs: u64,
    /// Undo logs purged.
    pub purged_logs: u64,
    /// Delete-marked rows purge removed.
    pub purged_rows: u64,
    /// Sorted runs fast index creation wrote to its merge file (the sort
    /// buffer overflowed).
    pub merge_runs_spilled: u64,
    /// Rows UPDATEs read semi-consistently: unlocked, in their last
    /// committed version, where their lock would have waited.
    pub semi_consistent_rows: u64,
    /// Rows an UPDATE's or DELETE's locking scan handed over to be changed
    /// before a lock it then waited for ([`Engine::set_statement_row_by_row`]).
    pub rows_handed_before_waits: u64,
    /// Record locks READ COMMITTED let go of for rows a statement read and
    /// did not change (`row_unlock_for_mysql`).
    pub record_locks_let_go: u64,
    /// Tables rebuilt by copying (ALTER TABLE by copy, OPTIMIZE TABLE).
    pub tables_rebuilt: u64,
    /// Rollbacks that failed on an error that would not have stopped the
    /// engine by itself (a full disk), and so stopped it (see
    /// `Engine::rollback_failed`).
    pub failed_rollbacks: u64,
}

/// Where a row-by-row locking read goes on from, and the read it was: the
/// place is kept for that read alone.
#[derive(Debug)]
struct ReadOn {
    /// The read as the caller asked it.
    read: Request,
    /// Whether it locked X.
    exclusive: bool,
    /// Where it stopped.
    place: crate::row::locking::ScanResume,
}

/// The storage engine.
pub struct Engine {
    pager: Pager,
    sys: TrxSys,
    locks: LockSys,
    tables: Tables,
    names: BTreeMap<String, u64>,
    sessions: BTreeMap<SessionId, Session>,
    next_session: SessionId,
    config: Config,
    halted: Option<String>,
    /// The snapshot of an autocommit SELECT while it runs.
    statement_view: Option<Option<crate::trx::ReadView>>,
    /// While a resumed statement runs again: when its previous wait began
    /// (only the `deadline-from-first-wait` canary reads it).
    resumed_wait_since_us: Option<u64>,
    next_background_us: u64,
    /// End LSN of the newest user commit that wrote redo (0 if none yet).
    last_commit_lsn: u64,
    /// The latest deadlock found, for SHOW ENGINE INNODB STATUS.
    latest_deadlock: Option<info::LatestDeadlock>,
    /// Each table's statistics from its last ANALYZE TABLE, by table id
    /// (in memory, as InnoDB Plugin 1.0 keeps them in its dictionary
    /// cache).
    index_stats: BTreeMap<u64, TableStats>,
    /// Counters.
    pub stats: EngineStats,
}

const BACKGROUND_PERIOD_US: u64 = 1_000_000;
/// Commits after which a statement boundary runs a purge batch.
const PURGE_THRESHOLD: u64 = 128;

impl Engine {
    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The clock's time.
    pub fn now_us(&self) -> u64 {
        self.pager.now_us()
    }

    /// The pager, for inspection (statistics, tests).
    pub fn pager(&self) -> &Pager {
        &self.pager
    }

    /// The pager, to damage pages behind the engine's back in tests.
    #[cfg(test)]
    pub(crate) fn pager_mut(&mut self) -> &mut Pager {
        &mut self.pager
    }

    /// The end LSN of the newest user transaction's commit that wrote redo
    /// (0 if none since open; DDL's dictionary commits do not count): the
    /// commit is durable once the log's flushed LSN reaches it.
    /// Crash tests compare it with the log's written and flushed LSNs to
    /// know which commits the flush setting promised to keep.
    pub fn last_commit_lsn(&self) -> u64 {
        self.last_commit_lsn
    }

    /// Why the engine stopped, if it did.
    pub fn halted(&self) -> Option<&str> {
        self.halted.as_deref()
    }

    /// Table names, sorted.
    pub fn table_names(&self) -> Vec<String> {
        self.names.keys().cloned().collect()
    }

    /// A loaded table by name.
    pub fn table(&self, name: &str) -> Result<&Table> {
        let id = self
            .names
            .get(name)
            .ok_or_else(|| Error::NoSuchTable(name.to_string()))?;
        Ok(&self.tables[id])
    }

    fn check_running(&self) -> Result<()> {
        match &self.halted {
            Some(why) => Err(Error::Halted(why.clone())),
            None => Ok(()),
        }
    }

    /// Stops the engine if `e` leaves memory ahead of the log.
    fn guard<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            if e.stops_engine() && self.halted.is_none() {
                // The first report keeps its own type; every later call
                // says the engine has stopped.
                self.halted = Some(e.to_string());
            }
        }
        r
    }

    /// SET GLOBAL innodb_flush_log_at_trx_commit: commits from now on.
    pub fn set_flush_at_commit(&mut self, f: FlushAtCommit) {
        self.config.flush_at_commit = f;
    }

    /// SET GLOBAL innodb_compression_level (0 to 9, checked by the
    /// caller): the zlib level of the pages compressed from now on.
    pub fn set_compression_level(&mut self, level: u32) {
        let level = level.min(crate::page::zip::MAX_LEVEL);
        self.config.compression_level = level;
        self.pager.compression.level = level;
    }

    /// SET GLOBAL innodb_io_capacity: pages the page cleaner may write
    /// per second.
    pub fn set_io_capacity(&mut self, pages: usize) {
        self.config.io_capacity = pages.max(1);
    }

    /// SET GLOBAL innodb_max_dirty_pages_pct.
    pub fn set_max_dirty_pages_pct(&mut self, pct: usize) {
        self.config.max_dirty_pages_pct = pct.min(99);
    }

    /// SET GLOBAL innodb_file_per_table: where tables created from now on
    /// (and tables rebuilt) go.
    pub fn set_file_per_table(&mut self, on: bool) {
        self.config.file_per_table = on;
    }

    /// When the background work (the once-a-second log flush, the page
    /// cleaner, purge) is next due, in the engine's clock: a scheduler
    /// that moves simulated time from event to event calls
    /// [`tick`](Self::tick) then, as InnoDB's master thread wakes each
    /// second whether or not a client calls.
    pub fn next_background_us(&self) -> u64 {
        self.next_background_us
    }

    /// Runs background work that is due, then checks waiting statements
    /// for timeouts (they report at their next [`resume`](Self::resume)).
    pub fn tick(&mut self) -> Result<()> {
        self.check_running()?;
        let r = self.background();
        self.guard(r)
    }

    fn background(&mut self) -> Result<()> {
        let now = self.pager.now_us();
        if now < self.next_background_us {
            return Ok(());
        }
        self.next_background_us = now + BACKGROUND_PERIOD_US;
        self.stats.background_rounds += 1;
        // The once-a-second log flush: this is what makes commits durable
        // under innodb_flush_log_at_trx_commit 0 and 2.
        let lsn = self.pager.log.lsn();
        let sync = !self.config.canaries.has(crate::Canary::StalledLogSync);
        self.pager.log.write_up_to(lsn, sync)?;
        self.pager
            .clean(self.config.io_capacity, self.config.max_dirty_pages_pct)?;
        let p = row::purge::purge(
            &mut self.pager,
            &self.sys,
            &self.tables,
            self.config.purge_batch_logs,
            self.config.canaries,
        )?;
        self.stats.purged_logs += p.logs;
        self.stats.purged_rows += p.rows_removed;
        self.inherit_removed(&p.removed)
    }

    /// Moves the locks of records purge or a rollback removed to their
    /// successors.
    fn inherit_removed(&mut self, removed: &[row_locking::Removed]) -> Result<()> {
        if removed.is_empty() {
            return Ok(());
        }
        let now = self.pager.now_us();
        row_locking::inherit_removed(&mut self.pager, &self.tables, &mut self.locks, removed, now)?;
        Ok(())
    }

    /// The lock system, for inspection (tests, information_schema).
    pub fn locks(&self) -> &LockSys {
        &self.locks
    }

    /// Turns the lock event log on or off.
    pub fn set_lock_event_log(&mut self, on: bool) {
        self.locks.log_events = on;
    }

    /// Takes the lock events recorded since the last call.
    pub fn take_lock_events(&mut self) -> Vec<crate::lock::LockEvent> {
        self.locks.take_events()
    }

    /// Runs purge until the history list is empty or blocked by a view.
    pub fn purge_all(&mut self) -> Result<u64> {
        self.check_running()?;
        let mut total = 0;
        loop {
            let r = row::purge::purge(
                &mut self.pager,
                &self.sys,
                &self.tables,
                1000,
                self.config.canaries,
            );
            let p = self.guard(r)?;
            let r = self.inherit_removed(&p.removed);
            self.guard(r)?;
            self.stats.purged_logs += p.logs;
            self.stats.purged_rows += p.rows_removed;
            total += p.logs;
            if p.logs == 0 {
                return Ok(total);
            }
        }
    }

    /// The engine runs, and session `s` exists and has no statement
    /// waiting: it may submit one.
    fn check_idle(&self, s: SessionId) -> Result<()> {
        self.check_running()?;
        let session = self.open_session(s)?;
        if session.pending.is_some() || session.commit_wait_lsn.is_some() || session.commit_queued {
            return Err(Error::SessionState(s, "a statement is waiting"));
        }
        Ok(())
    }

    /// Submits a statement.
    pub fn execute(&mut self, s: SessionId, request: Request) -> Result<Step> {
        self.check_idle(s)?;
        let r = self.background().and_then(|_| self.pager.free_check());
        self.guard(r)?;
        let touches = request.touches_table();
        // A new statement scans from its start: a place left by one that
        // waited and then failed (a deadlock victim) is not its.
        if let Some(x) = self.sessions.get_mut(&s) {
            x.scan_resume = None;
            x.kept_row_id = None;
            x.insert_progress = None;
            x.update_progress = None;
            x.change_progress = None;
            x.undo_mark = None;
        }
        let r = self
            .run(s, request)
            .and_then(|step| self.purge_if_long().map(|_| step));
        if touches {
            if let Some(trx) = self.sessions.get_mut(&s).and_then(|x| x.trx.as_mut()) {
                trx.touched = true;
            }
        }
        self.guard(r)
    }

    /// Notes that a statement of session `s` opened and locked its tables
    /// (`ha_innobase::external_lock`, which registers InnoDB in the open
    /// transaction, `innobase_register_trx_and_stmt`), whether or not the
    /// statement then fails before it asks InnoDB for a row: MySQL checks
    /// a statement's columns, index hints and values only after that
    /// (1054, 1136 and 1176 leave InnoDB registered; 1146, a table that
    /// does not exist, does not). Nothing without an open transaction.
    pub fn register_statement(&mut self, s: SessionId) {
        if let Some(trx) = self.sessions.get_mut(&s).and_then(|x| x.trx.as_mut()) {
            trx.touched = true;
        }
    }

    /// Whether session `s`'s open transaction has run a statement on a
    /// table (MySQL has registered InnoDB in it); `false` with none open.
    pub fn trx_touched(&self, s: SessionId) -> bool {
        self.sessions
            .get(&s)
            .and_then(|x| x.trx.as_ref())
            .is_some_and(|t| t.touched)
    }

    /// InnoDB purges continuously in the background; a step engine purges
    /// when enough commits have piled up, so the history list (and the
    /// undo pages it holds) stays short between the once-a-second rounds.
    fn purge_if_long(&mut self) -> Result<()> {
        if self.sys.history_hint < PURGE_THRESHOLD {
            return Ok(());
        }
        let p = row::purge::purge(
            &mut self.pager,
            &self.sys,
            &self.tables,
            self.config.purge_batch_logs,
            self.config.canaries,
        )?;
        self.stats.purged_logs += p.logs;
        self.stats.purged_rows += p.rows_removed;
        self.inherit_removed(&p.removed)?;
        self.sys.history_hint = self
            .sys
            .history_hint
            .saturating_sub(p.logs.max(PURGE_THRESHOLD / 2));
        Ok(())
    }

    /// Continues a waiting statement: runs it again if the transaction it
    /// waited for has ended, fails it with 1205 once the lock wait timeout
    /// has passed, or reports it still waiting.
    pub fn resume(&mut self, s: SessionId) -> Result<Step> {
        self.check_running()?;
        let r = self.background().and_then(|_| self.pager.free_check());
        self.guard(r)?;
        let session = self.open_session_mut(s)?;
        if std::mem::take(&mut session.commit_queued) {
            // The mutex is ours: commit, sync for this commit alone, and
            // release the locks.
            let resp = session.commit_wait_response.take().unwrap_or(Response::Ok);
            let r = self.commit_trx(s);
            self.guard(r)?;
            return Ok(Step::Done(resp));
        }
        if let Some(lsn) = session.commit_wait_lsn.take() {
            let resp = session.commit_wait_response.take().unwrap_or(Response::Ok);
            let holder = session.commit_wait_trx.take();
            if self.pager.log.flushed_lsn() < lsn {
                // One sync for every commit written so far: the group.
                let end = self.pager.log.lsn();
                let sync = !self.config.canaries.has(crate::Canary::SkipGroupSync);
                let r = self.pager.log.write_up_to(end, sync);
                self.guard(r)?;
                self.stats.group_commit_syncs += 1;
            }
            if let Some(trx) = holder {
                let now = self.pager.now_us();
                self.locks.release_all(trx, now);
            }
            return Ok(Step::Done(resp));
        }
        if std::mem::take(&mut session.victim) {
            // Rolled back when it was chosen; its statement reports now.
            session.pending = None;
            return Err(Error::Deadlock);
        }
        let Some(p) = session.pending.take() else {
            return Err(Error::SessionState(s, "nothing is waiting"));
        };
        let trx = session.trx.as_ref().map(|t| t.id);
        if let Some(trx) = trx.filter(|&t| self.locks.waiting_for(t).is_some()) {
            let now = self.pager.now_us();
            if now >= p.since_us + self.timeout_us(s) {
                self.stats.lock_wait_timeouts += 1;
                self.locks.cancel_wait(trx, EventKind::TimedOut, now);
                if self.config.rollback_on_timeout {
                    let r = self.rollback_trx(s);
                    self.guard(r)?;
                } else {
                    self.undo_waited(s, p.undo_mark)?;
                    self.end_implicit_on_error(s)?;
                }
                return Err(Error::LockWaitTimeout);
            }
            self.sessions.get_mut(&s).expect("session exists").pending = Some(p);
            return Ok(Step::Waiting);
        }
        self.resumed_wait_since_us = Some(p.since_us);
        self.session_mut(s).scan_resume = p.resume;
        self.session_mut(s).undo_mark = Some(p.undo_mark);
        let r = self.run(s, p.request.clone());
        self.resumed_wait_since_us = None;
        // A wait again moved the new place into the pending statement.
        self.session_mut(s).scan_resume = None;
        self.guard(r)
    }

    /// The lock wait timeout in effect for a session (with the
    /// `late-lock-timeout` canary, a second late).
    fn timeout_us(&self, s: SessionId) -> u64 {
        let t = self
            .sessions
            .get(&s)
            .and_then(|x| x.lock_wait_timeout_us)
            .unwrap_or(self.config.lock_wait_timeout_us);
        if self.config.canaries.has(crate::Canary::LateLockTimeout) {
            t + 1_000_000
        } else {
            t
        }
    }

    /// When the lock wait timeout of a waiting statement expires, in the
    /// engine's clock (for schedulers that advance time to the next event).
    pub fn wait_deadline_us(&self, s: SessionId) -> Option<u64> {
        let p = self.sessions.get(&s)?.pending.as_ref()?;
        Some(p.since_us + self.timeout_us(s))
    }

    /// Session `s`, or the error for a session that is not open.
    fn open_session(&self, s: SessionId) -> Result<&Session> {
        self.sessions
            .get(&s)
            .ok_or(Error::SessionState(s, "no such session"))
    }

    /// Session `s` to change, or the error for a session that is not open.
    fn open_session_mut(&mut self, s: SessionId) -> Result<&mut Session> {
        self.sessions
            .get_mut(&s)
            .ok_or(Error::SessionState(s, "no such session"))
    }

    fn session_mut(&mut self, s: SessionId) -> &mut Session {
        self.sessions
            .get_mut(&s)
            .expect("session checked by the caller")
    }

    fn run(&mut self, s: SessionId, request: Request) -> Result<Step> {
        match request {
            Request::Begin => {
                self.commit_trx(s)?;
                self.begin_trx(s, false)?;
                Ok(Step::Done(Response::Ok))
            }
            Request::BeginSnapshot => {
                self.commit_trx(s)?;
                self.begin_trx(s, false)?;
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let trx = sess.trx.as_mut().expect("just begun");
                trx.touched = true;
                if trx.isolation == Isolation::RepeatableRead {
                    self.sys.open_view(trx);
                }
                Ok(Step::Done(Response::Ok))
            }
            Request::Commit => {
                if self.commit_trx_maybe_grouped(s, true)? {
                    self.session_mut(s).commit_wait_response = Some(Response::Ok);
                    return Ok(Step::Waiting);
                }
                Ok(Step::Done(Response::Ok))
            }
            Request::Rollback => {
                self.rollback_trx(s)?;
                Ok(Step::Done(Response::Ok))
            }
            Request::SetIsolation(iso) => {
                self.session_mut(s).isolation = iso;
                Ok(Step::Done(Response::Ok))
            }
            Request::SetLockWaitTimeout(secs) => {
                if !(1..=1_073_741_824).contains(&secs) {
                    return Err(Error::InvalidArgument(format!(
                        "Variable 'innodb_lock_wait_timeout' can't be set to the value of '{secs}'"
                    )));
                }
                self.session_mut(s).lock_wait_timeout_us = Some(secs * 1_000_000);
                Ok(Step::Done(Response::Ok))
            }
            Request::SetAutocommit(on) => {
                self.session_mut(s).autocommit_off = !on;
                if on {
                    self.commit_trx(s)?;
                }
                Ok(Step::Done(Response::Ok))
            }
            Request::Savepoint(name) => {
                if self.session_mut(s).trx.is_none() {
                    // With autocommit off the transaction this starts lasts
                    // until COMMIT, as one a row statement starts would.
                    let implicit = !self.session_mut(s).autocommit_off;
                    self.begin_trx(s, implicit)?;
                }
                let lock_mark = self.locks.next_lock_id();
                let trx = self.session_mut(s).trx.as_mut().expect("just begun");
                let undo_no = trx.undo_no();
                trx.savepoints
                    .retain(|(n, ..)| !n.eq_ignore_ascii_case(&name));
                trx.savepoints.push((name, undo_no, lock_mark));
                Ok(Step::Done(Response::Ok))
            }
            Request::ReleaseSavepoint(name) => {
                let (trx, pos) = self.savepoint(s, &name)?;
                trx.savepoints.truncate(pos);
                Ok(Step::Done(Response::Ok))
            }
            Request::RollbackToSavepoint(name) => {
                let (trx, pos) = self.savepoint(s, &name)?;
                let (_, undo_no, lock_mark) = trx.savepoints[pos];
                let trx_id = trx.id;
                trx.savepoints.truncate(pos + 1);
                self.rollback_statement(s, undo_no)?;
                if self
                    .config
                    .canaries
                    .has(crate::Canary::SavepointRollbackReleasesLocks)
                {
                    // InnoDB keeps every lock to the end of the
                    // transaction, those taken after the savepoint too.
                    let now = self.pager.now_us();
                    self.locks.release_since(trx_id, lock_mark, now);
                }
                Ok(Step::Done(Response::Ok))
            }
            Request::LockTable { .. } => self.lock_table_step(s, request),
            dml => self.run_dml(s, dml),
        }
    }

    /// [`Request::LockTable`].
    fn lock_table_step(&mut self, s: SessionId, request: Request) -> Result<Step> {
        let Request::LockTable { table, exclusive } = &request else {
            unreachable!("called for LockTable");
        };
        let id = self.table_id(table)?;
        let mode = if *exclusive {
            TableMode::X
        } else {
            TableMode::S
        };
        if self.session_mut(s).trx.is_none() {
            // Implicit, so that a lock wait timeout ends it (nothing else
            // does: the statement that follows commits it).
            self.begin_trx(s, true)?;
        }
        let now = self.pager.now_us();
        let trx = self.trx_id(s).expect("transaction open");
        match table_lock(&mut self.locks, trx, id, mode, now) {
            None => Ok(Step::Done(Response::Ok)),
            Some(lock) => {
                let mark = self.session_mut(s).trx.as_ref().map_or(0, |t| t.undo_no());
                self.suspend(s, request, lock, mark)
            }
        }
    }

    fn table_id(&self, name: &str) -> Result<u64> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| Error::NoSuchTable(name.to_string()))
    }

    /// Shuts down cleanly: rolls back open transactions, writes every dirty
    /// page and a final checkpoint. A drop without `close` is a crash.
    pub fn close(mut self) -> Result<()> {
        self.check_running()?;
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for s in ids {
            self.rollback_trx(s)?;
        }
        let lsn = self.pager.log.lsn();
        let sync = !self.config.canaries.has(crate::Canary::StalledLogSync);
        self.pager.log.write_up_to(lsn, sync)?;
        self.pager.flush_all()?;
        self.pager.checkpoint()?;
        Ok(())
    }

    /// Writes every dirty page and a checkpoint (InnoDB's sharp checkpoint).
    pub fn checkpoint(&mut self) -> Result<()> {
        self.check_running()?;
        let lsn = self.pager.log.lsn();
        let r = self
            .pager
            .log
            .write_up_to(lsn, true)
            .and_then(|_| self.pager.flush_all())
            .and_then(|_| self.pager.checkpoint());
        self.guard(r)
    }
}
