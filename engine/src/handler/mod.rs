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

mod config;
mod ddl;
mod index;
mod info;
mod recovery;

pub use config::{Config, FlushAtCommit};
pub use ddl::{RowMap, TableStats, TableStatus};
pub use index::{DdlStep, IndexBuild};
pub use info::{
    statement_text, DeadlockTrx, InnodbCmp, InnodbCmpMem, InnodbLock, InnodbLockWait, InnodbTrx,
    LatestDeadlock,
};
pub use recovery::RecoveryReport;

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

/// One end of a key range, as values of the index's leading columns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RangeBound {
    /// No limit.
    Unbounded,
    /// Inclusive.
    Included(Vec<Value>),
    /// Exclusive.
    Excluded(Vec<Value>),
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Request {
    /// START TRANSACTION (commits any open transaction first, as MySQL).
    Begin,
    /// COMMIT.
    Commit,
    /// ROLLBACK.
    Rollback,
    /// SAVEPOINT name.
    Savepoint(String),
    /// ROLLBACK TO SAVEPOINT name.
    RollbackToSavepoint(String),
    /// RELEASE SAVEPOINT name.
    ReleaseSavepoint(String),
    /// SET SESSION TRANSACTION ISOLATION LEVEL.
    SetIsolation(Isolation),
    /// SET autocommit.
    SetAutocommit(bool),
    /// SET SESSION innodb_lock_wait_timeout = seconds (1 to 1073741824).
    SetLockWaitTimeout(u64),
    /// The table lock a DDL statement takes before it changes the table
    /// (`row_merge_lock_table`, `row_lock_table_for_mysql`): S, or X
    /// (`exclusive`), in the session's transaction, begun for it if none
    /// is open. It waits like any lock (the lock wait timeout, deadlock
    /// detection, INNODB_LOCK_WAITS) and is held until the transaction
    /// ends: never autocommitted, since the DDL runs under it. The DDL
    /// functions ([`Engine::create_indexes`] and the others) make this
    /// request themselves when their session does not hold the lock yet.
    LockTable {
        /// Table name.
        table: String,
        /// X rather than S.
        exclusive: bool,
    },
    /// INSERT INTO table VALUES (row).
    Insert {
        /// Table name.
        table: String,
        /// One value per column.
        row: Vec<Value>,
    },
    /// UPDATE table SET ... WHERE primary key = key.
    Update {
        /// Table name.
        table: String,
        /// Primary key values.
        key: Vec<Value>,
        /// Column names and new values.
        set: Vec<(String, Value)>,
    },
    /// DELETE FROM table WHERE primary key = key.
    Delete {
        /// Table name.
        table: String,
        /// Primary key values.
        key: Vec<Value>,
    },
    /// SELECT * FROM table WHERE primary key = key.
    Get {
        /// Table name.
        table: String,
        /// Primary key values.
        key: Vec<Value>,
    },
    /// A locking read: `read` (a [`Request::Get`] or [`Request::Scan`])
    /// with FOR UPDATE (`exclusive`) or LOCK IN SHARE MODE. It reads the
    /// newest committed-or-own version and locks what it reads.
    Locking {
        /// The read.
        read: Box<Request>,
        /// FOR UPDATE rather than LOCK IN SHARE MODE.
        exclusive: bool,
    },
    /// A locking read that skips the rows other transactions hold locks
    /// on instead of waiting (FOR UPDATE / FOR SHARE ... SKIP LOCKED, as
    /// MySQL 8.0 has it): `read` is a [`Request::Scan`].
    SkipLocked {
        /// The scan.
        read: Box<Request>,
        /// FOR UPDATE rather than FOR SHARE.
        exclusive: bool,
    },
    /// UPDATE's read under READ COMMITTED and READ UNCOMMITTED, InnoDB's
    /// semi-consistent read: an X-locking [`Request::Scan`] of the
    /// clustered index that, where a row's lock would wait, returns the
    /// row's last committed version without locking it
    /// ([`Engine::semi_consistent_rows`] says which); the caller locks
    /// those rows its WHERE matches with a locking read of their key,
    /// which waits. Under REPEATABLE READ and SERIALIZABLE, or through a
    /// secondary index, it is [`Request::Locking`] FOR UPDATE.
    SemiConsistent {
        /// The scan.
        read: Box<Request>,
    },
    /// SELECT * FROM table [FORCE INDEX (index)] WHERE key range
    /// ORDER BY key [DESC] LIMIT n.
    Scan {
        /// Table name.
        table: String,
        /// A secondary index name, or `None` for the primary key.
        index: Option<String>,
        /// Lower end.
        low: RangeBound,
        /// Upper end.
        high: RangeBound,
        /// Descending order.
        reverse: bool,
        /// At most this many rows.
        limit: Option<usize>,
    },
}

/// A statement's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// Done, nothing to report.
    Ok,
    /// Rows changed.
    Affected(u64),
    /// A point read.
    Row(Option<Vec<Value>>),
    /// A range read.
    Rows(Vec<Vec<Value>>),
}

/// The result of submitting a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Finished.
    Done(Response),
    /// Waiting for another transaction; call [`Engine::resume`].
    Waiting,
}

#[derive(Debug)]
struct Pending {
    request: Request,
    since_us: u64,
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
    /// The DB_ROW_ID of each row the last read of a table without a
    /// primary key returned, in order (empty after a read of any other
    /// table).
    row_refs: Vec<u64>,
    /// Group commit: a committed transaction waiting for the sync that makes
    /// it durable before it is acknowledged, and the statement's response.
    commit_wait_lsn: Option<u64>,
    commit_wait_response: Option<Response>,
    /// The id of the last transaction the session began.
    last_trx: Option<u64>,
    /// A statement of several requests is open ([`Engine::begin_statement`]).
    statement: Option<StatementScope>,
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
    /// Background rounds run.
    pub background_rounds: u64,
    /// Syncs made for groups of waiting commits.
    pub group_commit_syncs: u64,
    /// Undo logs purged.
    pub purged_logs: u64,
    /// Delete-marked rows purge removed.
    pub purged_rows: u64,
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

    /// Opens a new session.
    pub fn session(&mut self) -> SessionId {
        let id = self.next_session;
        self.next_session += 1;
        self.sessions.insert(id, Session::default());
        id
    }

    /// Runs a DDL (`ddl`: one of the DDL functions, given a session) for
    /// a caller that has no session to wait in: in a session of its own,
    /// closed after it (its transaction, which holds nothing but the
    /// table lock, ends with it). A DDL that would wait for its table lock
    /// withdraws its request and is [`Error::TableInUse`], having changed
    /// nothing.
    pub fn ddl_now<T>(
        &mut self,
        table: &str,
        ddl: impl FnOnce(&mut Engine, SessionId) -> Result<DdlStep<T>>,
    ) -> Result<T> {
        let s = self.session();
        let r = match ddl(self, s) {
            Ok(DdlStep::Waiting) => self
                .cancel_wait(s)
                .and(Err(Error::TableInUse(table.to_string()))),
            other => other.and_then(|step| step.done(table)),
        };
        if self.halted.is_some() {
            self.sessions.remove(&s);
            return r;
        }
        let closed = self.close_session(s);
        r.and_then(|t| closed.map(|_| t))
    }

    /// Closes a session, rolling back its open transaction.
    pub fn close_session(&mut self, s: SessionId) -> Result<()> {
        self.check_running()?;
        if self.sessions.contains_key(&s) {
            let r = self.rollback_trx(s);
            self.guard(r)?;
            self.sessions.remove(&s);
        }
        Ok(())
    }

    /// Whether a session has a statement waiting.
    pub fn is_waiting(&self, s: SessionId) -> bool {
        self.sessions
            .get(&s)
            .is_some_and(|x| x.pending.is_some() || x.commit_wait_lsn.is_some())
    }

    /// The id of a session's open transaction.
    pub fn trx_id(&self, s: SessionId) -> Option<u64> {
        self.sessions
            .get(&s)
            .and_then(|x| x.trx.as_ref())
            .map(|t| t.id)
    }

    /// The id of the last transaction a session began, open or not (an
    /// autocommit statement's ends with it).
    pub fn last_trx_id(&self, s: SessionId) -> Option<u64> {
        self.sessions.get(&s).and_then(|x| x.last_trx)
    }

    /// Opens a statement made of several requests (a multi-row UPDATE, an
    /// INSERT of several rows): its requests share one transaction, which
    /// the statement begins in autocommit mode, and
    /// [`end_statement`](Self::end_statement) commits or undoes them
    /// together, as `row_mysql_handle_errors` and the statement savepoint
    /// of `trx_mark_sql_stat_end` do. A request that fails inside the
    /// statement undoes only its own part and leaves the rest to
    /// `end_statement`; a deadlock still rolls the whole transaction back.
    pub fn begin_statement(&mut self, s: SessionId) -> Result<()> {
        self.check_running()?;
        let sess = self
            .sessions
            .get(&s)
            .ok_or(Error::SessionState(s, "no such session"))?;
        if sess.pending.is_some() || sess.commit_wait_lsn.is_some() || sess.statement.is_some() {
            return Err(Error::SessionState(s, "a statement is open"));
        }
        if sess.trx.is_none() {
            let implicit = !sess.autocommit_off;
            let r = self.background().and_then(|_| self.begin_trx(s, implicit));
            self.guard(r)?;
        }
        let undo_no = self.session_mut(s).trx.as_ref().map_or(0, |t| t.undo_no());
        self.session_mut(s).statement = Some(StatementScope {
            undo_no,
            duplicates: false,
        });
        Ok(())
    }

    /// Marks the open statement as one that replaces, updates or ignores
    /// the rows its writes collide with: from now until it ends, the
    /// duplicates its inserts and updates find are locked X, not S, as
    /// InnoDB does when MySQL calls `extra(HA_EXTRA_IGNORE_DUP_KEY)`, so
    /// that the row it goes on to change is not first shared with another
    /// transaction doing the same.
    pub fn set_statement_duplicates(&mut self, s: SessionId) -> Result<()> {
        let sess = self
            .sessions
            .get_mut(&s)
            .ok_or(Error::SessionState(s, "no such session"))?;
        let scope = sess
            .statement
            .as_mut()
            .ok_or(Error::SessionState(s, "no statement is open"))?;
        scope.duplicates = true;
        Ok(())
    }

    /// Closes the statement [`begin_statement`](Self::begin_statement)
    /// opened. `ok`: in autocommit mode its transaction commits (under
    /// group commit the answer may be [`Step::Waiting`] for the sync, as a
    /// commit's is). Not `ok`: every change the statement made is undone,
    /// and in autocommit mode its transaction rolls back; the locks it
    /// took stay with an open transaction, as InnoDB keeps them.
    pub fn end_statement(&mut self, s: SessionId, ok: bool) -> Result<Step> {
        self.check_running()?;
        let sess = self
            .sessions
            .get_mut(&s)
            .ok_or(Error::SessionState(s, "no such session"))?;
        let Some(scope) = sess.statement.take() else {
            return Err(Error::SessionState(s, "no statement is open"));
        };
        if sess.trx.is_none() {
            // A deadlock rolled the transaction back already.
            return Ok(Step::Done(Response::Ok));
        }
        let implicit = sess.implicit;
        let r = if ok {
            if implicit {
                match self.commit_trx_maybe_grouped(s, true) {
                    Ok(true) => {
                        self.session_mut(s).commit_wait_response = Some(Response::Ok);
                        return Ok(Step::Waiting);
                    }
                    Ok(false) => Ok(()),
                    Err(e) => Err(e),
                }
            } else {
                Ok(())
            }
        } else {
            self.rollback_statement(s, scope.undo_no).and_then(|_| {
                if implicit {
                    self.rollback_trx(s)
                } else {
                    Ok(())
                }
            })
        };
        self.guard(r).map(|_| Step::Done(Response::Ok))
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

    /// Gives up a statement's lock wait at once (NOWAIT): the lock request
    /// leaves the queue and the statement fails, undone as after a lock
    /// wait timeout; the transaction stays open (InnoDB's
    /// `lock_wait_suspend_thread` answering DB_LOCK_NOWAIT).
    pub fn cancel_wait(&mut self, s: SessionId) -> Result<()> {
        self.check_running()?;
        let sess = self
            .sessions
            .get_mut(&s)
            .ok_or(Error::SessionState(s, "no such session"))?;
        if sess.pending.take().is_none() {
            return Err(Error::SessionState(s, "nothing is waiting"));
        }
        if std::mem::take(&mut sess.victim) {
            // Chosen as a deadlock victim while it waited: the whole
            // transaction is gone already.
            return Err(Error::Deadlock);
        }
        if let Some(trx) = sess.trx.as_ref().map(|t| t.id) {
            let now = self.pager.now_us();
            self.locks.cancel_wait(trx, EventKind::Cancelled, now);
        }
        self.end_implicit_on_error(s)
    }

    /// The positions, among the rows the session's last
    /// [`Request::SemiConsistent`] read returned, of the rows it read
    /// unlocked in their last committed version (empty after any other
    /// locking read).
    pub fn semi_consistent_rows(&self, s: SessionId) -> &[usize] {
        self.sessions.get(&s).map_or(&[], |x| &x.semi_rows)
    }

    /// The DB_ROW_ID of each row the session's last read returned, when
    /// it read a table without a primary key (empty otherwise): the key
    /// by which [`Request::Get`], [`Request::Update`] and
    /// [`Request::Delete`] address such a row (`[Value::UInt(row_id)]`),
    /// as MySQL addresses it by `ha_innobase::position`'s reference.
    pub fn row_refs(&self, s: SessionId) -> &[u64] {
        self.sessions.get(&s).map_or(&[], |x| &x.row_refs)
    }

    /// Takes the row ids a read of table `id` appended to its rows (a
    /// table without a primary key) into the session's
    /// [`row_refs`](Self::row_refs).
    fn take_row_refs(&mut self, s: SessionId, id: u64, rows: &mut [Vec<Value>]) {
        let keyless = self.tables[&id].def.primary_key.is_empty();
        let Some(sess) = self.sessions.get_mut(&s) else {
            return;
        };
        sess.row_refs.clear();
        if !keyless {
            return;
        }
        for r in rows {
            match r.pop() {
                Some(Value::UInt(id)) => sess.row_refs.push(id),
                other => unreachable!("a keyless table's row ends in its row id, not {other:?}"),
            }
        }
    }

    /// [`take_row_refs`](Self::take_row_refs) of a point read's row.
    fn take_row_ref(
        &mut self,
        s: SessionId,
        id: u64,
        row: Option<Vec<Value>>,
    ) -> Option<Vec<Value>> {
        let mut rows: Vec<Vec<Value>> = row.into_iter().collect();
        self.take_row_refs(s, id, &mut rows);
        rows.pop()
    }

    /// The lock id the session's next lock request will get: a mark for
    /// [`unlock_rows`](Self::unlock_rows).
    pub fn lock_mark(&self) -> crate::lock::LockId {
        self.locks.next_lock_id()
    }

    /// READ COMMITTED and READ UNCOMMITTED: releases the record locks the
    /// session's transaction took since `mark` on the rows `rows` (whole
    /// rows of `table`, as a read returned them), in every index of the
    /// table: the rows an UPDATE or DELETE read and found not matching
    /// its WHERE (InnoDB's `row_unlock_for_mysql`). Under REPEATABLE READ
    /// and SERIALIZABLE it does nothing: those keep every lock.
    pub fn unlock_rows(
        &mut self,
        s: SessionId,
        table: &str,
        rows: &[Vec<Value>],
        row_ids: &[u64],
        mark: crate::lock::LockId,
    ) -> Result<()> {
        self.check_running()?;
        let Some(trx) = self.sessions.get(&s).and_then(|x| x.trx.as_ref()) else {
            return Ok(());
        };
        if !matches!(
            trx.isolation,
            Isolation::ReadCommitted | Isolation::ReadUncommitted
        ) {
            return Ok(());
        }
        let trx = trx.id;
        let id = self.table_id(table)?;
        let t = &self.tables[&id];
        let keyless = t.def.primary_key.is_empty();
        if keyless && row_ids.len() != rows.len() {
            return Err(Error::InvalidArgument(format!(
                "table '{table}' has no primary key: unlock_rows needs each row's row id"
            )));
        }
        let mut targets = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let cols = row::stored_columns(t, row)?;
            let pk = write::key_of_columns(t, &cols, keyless.then(|| row_ids[i]));
            targets.push(Target::Record {
                table: id,
                index: t.clustered.id,
                key: crate::lock::RecKey::Key(crate::btree::lock_key(&t.clustered, pk.clone())),
            });
            for sec in &t.secondary {
                let mut key: Vec<Option<Vec<u8>>> =
                    sec.def.columns.iter().map(|&c| cols[c].clone()).collect();
                for &c in &t.def.primary_key {
                    if !sec.def.columns.contains(&c) {
                        key.push(cols[c].clone());
                    }
                }
                if keyless {
                    key.extend(pk.iter().cloned());
                }
                targets.push(Target::Record {
                    table: id,
                    index: sec.index.id,
                    key: crate::lock::RecKey::Key(crate::btree::lock_key(&sec.index, key)),
                });
            }
        }
        let now = self.pager.now_us();
        self.locks.release_records(trx, &targets, mark, now);
        Ok(())
    }

    /// Whether the session has a transaction open.
    pub fn in_transaction(&self, s: SessionId) -> bool {
        self.sessions.get(&s).is_some_and(|x| x.trx.is_some())
    }

    /// Whether autocommit is on for the session.
    pub fn autocommit(&self, s: SessionId) -> bool {
        self.sessions.get(&s).is_some_and(|x| !x.autocommit_off)
    }

    /// The session's isolation level.
    pub fn isolation(&self, s: SessionId) -> Isolation {
        self.sessions
            .get(&s)
            .map_or(Isolation::default(), |x| x.isolation)
    }

    /// The session's lock wait timeout, in seconds.
    pub fn lock_wait_timeout_secs(&self, s: SessionId) -> u64 {
        self.sessions
            .get(&s)
            .and_then(|x| x.lock_wait_timeout_us)
            .unwrap_or(self.config.lock_wait_timeout_us)
            / 1_000_000
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
        let session = self
            .sessions
            .get(&s)
            .ok_or(Error::SessionState(s, "no such session"))?;
        if session.pending.is_some() || session.commit_wait_lsn.is_some() {
            return Err(Error::SessionState(s, "a statement is waiting"));
        }
        Ok(())
    }

    /// Submits a statement.
    pub fn execute(&mut self, s: SessionId, request: Request) -> Result<Step> {
        self.check_idle(s)?;
        let r = self.background().and_then(|_| self.pager.free_check());
        self.guard(r)?;
        let r = self
            .run(s, request)
            .and_then(|step| self.purge_if_long().map(|_| step));
        self.guard(r)
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
        let session = self
            .sessions
            .get_mut(&s)
            .ok_or(Error::SessionState(s, "no such session"))?;
        if let Some(lsn) = session.commit_wait_lsn.take() {
            let resp = session.commit_wait_response.take().unwrap_or(Response::Ok);
            if self.pager.log.flushed_lsn() < lsn {
                // One sync for every commit written so far: the group.
                let end = self.pager.log.lsn();
                let sync = !self.config.canaries.has(crate::Canary::SkipGroupSync);
                let r = self.pager.log.write_up_to(end, sync);
                self.guard(r)?;
                self.stats.group_commit_syncs += 1;
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
                    self.end_implicit_on_error(s)?;
                }
                return Err(Error::LockWaitTimeout);
            }
            self.sessions.get_mut(&s).expect("session exists").pending = Some(p);
            return Ok(Step::Waiting);
        }
        self.resumed_wait_since_us = Some(p.since_us);
        let r = self.run(s, p.request.clone());
        self.resumed_wait_since_us = None;
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

    fn session_mut(&mut self, s: SessionId) -> &mut Session {
        self.sessions
            .get_mut(&s)
            .expect("session checked by the caller")
    }

    fn begin_trx(&mut self, s: SessionId, implicit: bool) -> Result<()> {
        let now = self.pager.now_us();
        let iso = self.session_mut(s).isolation;
        let trx = self.sys.begin(&mut self.pager, iso, now)?;
        let sess = self.session_mut(s);
        sess.last_trx = Some(trx.id);
        sess.trx = Some(trx);
        sess.implicit = implicit;
        Ok(())
    }

    fn commit_trx(&mut self, s: SessionId) -> Result<()> {
        self.commit_trx_maybe_grouped(s, false).map(|_| ())
    }

    /// Commits; with group commit on (and `may_defer`), a commit whose redo
    /// still needs a sync is not acknowledged yet: it waits for the next
    /// sync, which covers every commit waiting by then. Returns whether the
    /// acknowledgement was deferred.
    fn commit_trx_maybe_grouped(&mut self, s: SessionId, may_defer: bool) -> Result<bool> {
        let Some(mut trx) = self.session_mut(s).trx.take() else {
            return Ok(false);
        };
        let lsn = match self.sys.commit(&mut self.pager, &mut trx) {
            Ok(lsn) => lsn,
            Err(e) => {
                // Still the session's: a failure that does not stop the
                // engine changed nothing, and the transaction may still
                // commit or roll back. (Every failure after the commit's
                // mini-transaction has changed a page is an I/O or
                // corruption error, which stops the engine: a retry never
                // sees a half-made commit.)
                self.session_mut(s).trx = Some(trx);
                return Err(e);
            }
        };
        let mut deferred = false;
        if lsn != 0 {
            self.last_commit_lsn = lsn;
            match self.config.flush_at_commit {
                // The planted bug comes first, so group commit cannot hide it.
                FlushAtCommit::Sync if self.config.canaries.has(crate::Canary::AckBeforeSync) => {
                    self.pager.log.write_up_to(lsn, false)?
                }
                FlushAtCommit::Sync if may_defer && self.config.group_commit => {
                    self.session_mut(s).commit_wait_lsn = Some(lsn);
                    deferred = true;
                }
                FlushAtCommit::Sync => self.pager.log.write_up_to(lsn, true)?,
                FlushAtCommit::Write => self.pager.log.write_up_to(lsn, false)?,
                FlushAtCommit::Lazy => {}
            }
        }
        let now = self.pager.now_us();
        self.locks.release_all(trx.id, now);
        self.stats.commits += 1;
        let sess = self.session_mut(s);
        sess.implicit = false;
        Ok(deferred)
    }

    fn rollback_trx(&mut self, s: SessionId) -> Result<()> {
        let Some(mut trx) = self.session_mut(s).trx.take() else {
            return Ok(());
        };
        self.session_mut(s).pending = None;
        let now = self.pager.now_us();
        self.locks.cancel_wait(trx.id, EventKind::Cancelled, now);
        let mut removed = Vec::new();
        if let Some(mut log) = trx.undo.clone() {
            row::rollback::rollback_to(
                &mut self.pager,
                &self.sys,
                &self.tables,
                trx.id,
                &mut log,
                0,
                &mut removed,
            )?;
            crate::trx::drop_rolled_back_log(&mut self.pager, &log)?;
            trx.undo = Some(log);
        }
        self.inherit_removed(&removed)?;
        self.locks.release_all(trx.id, now);
        self.sys.end(&mut trx);
        self.stats.rollbacks += 1;
        let sess = self.session_mut(s);
        sess.implicit = false;
        Ok(())
    }

    /// Rolls back a statement's partial changes.
    fn rollback_statement(&mut self, s: SessionId, undo_no: u64) -> Result<()> {
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let Some(trx) = sess.trx.as_mut() else {
            return Ok(());
        };
        let mut removed = Vec::new();
        if let Some(log) = trx.undo.as_mut() {
            if log.next_undo_no > undo_no {
                row::rollback::rollback_to(
                    &mut self.pager,
                    &self.sys,
                    &self.tables,
                    trx.id,
                    log,
                    undo_no,
                    &mut removed,
                )?;
            }
        }
        self.inherit_removed(&removed)
    }

    /// After a failed statement in autocommit mode, its transaction ends.
    fn end_implicit_on_error(&mut self, s: SessionId) -> Result<()> {
        let sess = self.session_mut(s);
        if sess.implicit && sess.statement.is_none() {
            let r = self.rollback_trx(s);
            self.guard(r)?;
        }
        Ok(())
    }

    /// The open transaction and the position of its savepoint `name`
    /// (MySQL 1305 if either is missing).
    fn savepoint(&mut self, s: SessionId, name: &str) -> Result<(&mut Trx, usize)> {
        let missing = || Error::NoSuchSavepoint(name.to_string());
        let trx = self.session_mut(s).trx.as_mut().ok_or_else(missing)?;
        let pos = trx
            .savepoints
            .iter()
            .position(|(n, ..)| n.eq_ignore_ascii_case(name))
            .ok_or_else(missing)?;
        Ok((trx, pos))
    }

    fn run(&mut self, s: SessionId, request: Request) -> Result<Step> {
        match request {
            Request::Begin => {
                self.commit_trx(s)?;
                self.begin_trx(s, false)?;
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
            Some(lock) => self.suspend(s, request, lock),
        }
    }

    fn run_dml(&mut self, s: SessionId, request: Request) -> Result<Step> {
        let sess = self.session_mut(s);
        let scoped = sess.statement.is_some();
        if scoped && sess.trx.is_none() {
            // A deadlock rolled the statement's transaction back: the rest
            // of the statement must not run in a new one.
            return Err(Error::SessionState(
                s,
                "the statement's transaction was rolled back",
            ));
        }
        if sess.trx.is_none()
            && !scoped
            && !sess.autocommit_off
            && matches!(request, Request::Get { .. } | Request::Scan { .. })
        {
            // An autocommit SELECT is a consistent read of its own (at every
            // isolation level, SERIALIZABLE included, as in MySQL). It
            // changes nothing and purge cannot run while it reads, so it
            // needs neither a transaction id nor a registered view.
            let view = match sess.isolation {
                Isolation::ReadUncommitted => None,
                _ => Some(self.sys.snapshot()),
            };
            self.statement_view = Some(view);
            let r = self.dml(s, &request);
            self.statement_view = None;
            return match r? {
                DmlResult::Done(resp) => Ok(Step::Done(resp)),
                DmlResult::Wait(_) => unreachable!("a consistent read never waits"),
            };
        }
        let started_here = self.session_mut(s).trx.is_none();
        if started_here {
            let implicit = !self.session_mut(s).autocommit_off;
            self.begin_trx(s, implicit)?;
        }
        let undo_no = self
            .session_mut(s)
            .trx
            .as_ref()
            .expect("transaction open")
            .undo_no();
        let result = self.dml(s, &request);
        match result {
            Ok(DmlResult::Done(resp)) => {
                if !scoped
                    && self.session_mut(s).implicit
                    && self.commit_trx_maybe_grouped(s, true)?
                {
                    self.session_mut(s).commit_wait_response = Some(resp);
                    return Ok(Step::Waiting);
                }
                Ok(Step::Done(resp))
            }
            Ok(DmlResult::Wait(lock)) => {
                self.rollback_statement(s, undo_no)?;
                self.suspend(s, request, lock)
            }
            Err(e) => {
                if e.stops_engine() {
                    return Err(e);
                }
                self.rollback_statement(s, undo_no)?;
                if !scoped && self.session_mut(s).implicit {
                    self.rollback_trx(s)?;
                }
                Err(e)
            }
        }
    }

    /// A request of session `s` that queued `lock` and must wait for it:
    /// the deadlock search runs (a victim is rolled back at once), and the
    /// request is kept to run again when [`Engine::resume`] finds the wait
    /// over (`lock_wait_suspend_thread`).
    fn suspend(
        &mut self,
        s: SessionId,
        request: Request,
        lock: crate::lock::LockId,
    ) -> Result<Step> {
        self.stats.waits += 1;
        let me = self
            .trx_id(s)
            .expect("a waiting statement has a transaction");
        debug_assert_eq!(
            self.locks.waiting_for(me).map(|l| l.id),
            Some(lock),
            "the statement waits for the lock its transaction waits for"
        );
        let undo = self.sessions[&s].trx.as_ref().map_or(0, |t| t.undo_no());
        self.locks.note_weight(me, undo, self.pager.now_us());
        loop {
            let weights: BTreeMap<u64, u64> = self
                .sessions
                .values()
                .filter_map(|x| x.trx.as_ref().map(|t| (t.id, t.undo_no())))
                .collect();
            let verdict = if self.config.deadlock_detect {
                self.locks
                    .deadlock_check(me, &|t| weights.get(&t).copied().unwrap_or(0))
            } else {
                Deadlock::None
            };
            let now = self.pager.now_us();
            match verdict {
                Deadlock::None => break,
                Deadlock::Requester => {
                    self.stats.deadlocks += 1;
                    self.note_deadlock(me, me);
                    self.locks.cancel_wait(me, EventKind::Victim, now);
                    self.rollback_trx(s)?;
                    return Err(Error::Deadlock);
                }
                Deadlock::Other(victim) => {
                    self.stats.deadlocks += 1;
                    self.note_deadlock(me, victim);
                    let vs = self
                        .sessions
                        .iter()
                        .find(|(_, x)| x.trx.as_ref().map(|t| t.id) == Some(victim))
                        .map(|(&id, _)| id)
                        .expect("a waiting transaction belongs to a session");
                    self.locks.cancel_wait(victim, EventKind::Victim, now);
                    // Rolled back now, releasing its locks; its
                    // waiting statement reports 1213 when resumed.
                    let pending = self.session_mut(vs).pending.take();
                    self.rollback_trx(vs)?;
                    let sess = self.session_mut(vs);
                    sess.pending = pending;
                    sess.victim = true;
                    if self.locks.waiting_for(me).is_none() {
                        // The victim's locks were what we waited for.
                        return self.run(s, request);
                    }
                }
            }
        }
        let now = self.pager.now_us();
        // Each wait is timed from its own start, as
        // lock_wait_suspend_thread does; the planted bug keeps the
        // start of the statement's first wait.
        let since_us = match self.resumed_wait_since_us {
            Some(first)
                if self
                    .config
                    .canaries
                    .has(crate::Canary::DeadlineFromFirstWait) =>
            {
                first
            }
            _ => now,
        };
        self.session_mut(s).pending = Some(Pending { request, since_us });
        Ok(Step::Waiting)
    }

    fn key_stored(table: &Table, key: &[Value]) -> Result<Key> {
        if table.def.primary_key.is_empty() {
            // A table without a primary key: its rows are addressed by
            // their DB_ROW_ID ([`Engine::row_refs`]).
            let id = match key {
                [Value::UInt(u)] => Some(*u),
                [Value::Int(i)] => u64::try_from(*i).ok(),
                _ => None,
            };
            return match id {
                Some(id) if id < 1 << 48 => Ok(vec![Some(write::row_id_bytes(id))]),
                _ => Err(Error::InvalidArgument(format!(
                    "table '{}' has no primary key: its rows are addressed by one row id \
                     below 2^48, got {key:?}",
                    table.name()
                ))),
            };
        }
        if key.len() != table.def.primary_key.len() {
            return Err(Error::InvalidArgument(format!(
                "the primary key of '{}' has {} columns, got {} values",
                table.name(),
                table.def.primary_key.len(),
                key.len()
            )));
        }
        table
            .def
            .primary_key
            .iter()
            .zip(key)
            .map(|(&c, v)| {
                let col = &table.def.columns[c];
                if v.is_null() {
                    Ok(None)
                } else {
                    record::to_stored(&col.ty, v, &col.name).map(Some)
                }
            })
            .collect()
    }

    /// A range bound as stored key fields of an index whose key columns are
    /// `cols` (each with its prefix length, if the index keeps a prefix).
    /// A value longer than its column's prefix is cut to it, and the bound
    /// then ends there and includes its end: the range covers every row
    /// whose prefix is in range, a superset of the rows asked for, which
    /// the caller filters (as MySQL rechecks a prefix key's condition).
    fn bound_stored(table: &Table, cols: &[(usize, Option<u16>)], b: &RangeBound) -> Result<Bound> {
        let conv = |vals: &Vec<Value>| -> Result<(Key, bool)> {
            if vals.len() > cols.len() {
                return Err(Error::InvalidArgument(
                    "range bound has more values than the index has columns".into(),
                ));
            }
            let mut key = Key::new();
            for (v, &(c, prefix)) in vals.iter().zip(cols) {
                let col = &table.def.columns[c];
                if v.is_null() {
                    key.push(None);
                    continue;
                }
                let mut stored = record::to_stored(&col.ty, v, &col.name)?;
                let cut = prefix.is_some_and(|p| stored.len() > usize::from(p));
                if let Some(p) = prefix {
                    stored.truncate(usize::from(p));
                }
                key.push(Some(stored));
                if cut {
                    return Ok((key, true));
                }
            }
            Ok((key, false))
        };
        Ok(match b {
            RangeBound::Unbounded => Bound::Unbounded,
            RangeBound::Included(v) => Bound::Included(conv(v)?.0),
            RangeBound::Excluded(v) => match conv(v)? {
                (k, true) => Bound::Included(k),
                (k, false) => Bound::Excluded(k),
            },
        })
    }

    fn table_id(&self, name: &str) -> Result<u64> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| Error::NoSuchTable(name.to_string()))
    }

    /// The read mode of a consistent read in `s`, opening a view if needed.
    fn read_mode_view(&mut self, s: SessionId) -> Option<crate::trx::ReadView> {
        if let Some(v) = &self.statement_view {
            return v.clone();
        }
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let trx = sess.trx.as_mut().expect("transaction open");
        match trx.isolation {
            Isolation::ReadUncommitted => None,
            Isolation::ReadCommitted => {
                self.sys.open_view(trx);
                trx.view.clone()
            }
            Isolation::RepeatableRead | Isolation::Serializable => {
                if trx.view.is_none()
                    || self
                        .config
                        .canaries
                        .has(crate::Canary::SnapshotPerStatement)
                {
                    self.sys.open_view(trx);
                }
                trx.view.clone()
            }
        }
    }

    fn dml(&mut self, s: SessionId, request: &Request) -> Result<DmlResult> {
        match request {
            Request::Insert { table, row } => {
                let id = self.table_id(table)?;
                let t = &self.tables[&id];
                let cols = row::stored_columns(t, row)?;
                let row_id = if t.def.primary_key.is_empty() {
                    let t = self.tables.get_mut(&id).expect("table exists");
                    let r = t.next_row_id;
                    t.next_row_id += 1;
                    Some(r)
                } else {
                    None
                };
                let now = self.pager.now_us();
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let trx = sess.trx.as_mut().expect("transaction open");
                if let Some(w) = table_lock(&mut self.locks, trx.id, id, TableMode::IX, now) {
                    return Ok(DmlResult::Wait(w));
                }
                let duplicates = sess.statement.as_ref().is_some_and(|st| st.duplicates);
                let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys);
                ctx.duplicates = duplicates;
                match write::insert(
                    &mut self.pager,
                    &mut self.sys,
                    &self.tables[&id],
                    trx,
                    &cols,
                    row_id,
                    &mut ctx,
                )? {
                    Outcome::Done(n) => Ok(DmlResult::Done(Response::Affected(n))),
                    Outcome::Wait(t) => Ok(DmlResult::Wait(t)),
                }
            }
            Request::Update { table, key, set } => {
                let id = self.table_id(table)?;
                let t = &self.tables[&id];
                let key = Self::key_stored(t, key)?;
                let mut changes = Vec::with_capacity(set.len());
                for (name, v) in set {
                    let c = t.def.column(name).ok_or_else(|| {
                        Error::InvalidArgument(format!("Unknown column '{name}' in 'field list'"))
                    })?;
                    let col = &t.def.columns[c];
                    let stored = if v.is_null() {
                        if !col.nullable {
                            return Err(Error::NotNull {
                                column: col.name.clone(),
                            });
                        }
                        None
                    } else {
                        Some(record::to_stored(&col.ty, v, &col.name)?)
                    };
                    changes.push((c, stored));
                }
                let now = self.pager.now_us();
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let trx = sess.trx.as_mut().expect("transaction open");
                if let Some(w) = table_lock(&mut self.locks, trx.id, id, TableMode::IX, now) {
                    return Ok(DmlResult::Wait(w));
                }
                let duplicates = sess.statement.as_ref().is_some_and(|st| st.duplicates);
                let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys);
                ctx.duplicates = duplicates;
                match write::update(
                    &mut self.pager,
                    &mut self.sys,
                    &self.tables[&id],
                    trx,
                    &key,
                    &changes,
                    &mut ctx,
                )? {
                    Outcome::Done(n) => Ok(DmlResult::Done(Response::Affected(n))),
                    Outcome::Wait(t) => Ok(DmlResult::Wait(t)),
                }
            }
            Request::Delete { table, key } => {
                let id = self.table_id(table)?;
                let key = Self::key_stored(&self.tables[&id], key)?;
                let now = self.pager.now_us();
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let trx = sess.trx.as_mut().expect("transaction open");
                if let Some(w) = table_lock(&mut self.locks, trx.id, id, TableMode::IX, now) {
                    return Ok(DmlResult::Wait(w));
                }
                let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys);
                match write::delete(
                    &mut self.pager,
                    &mut self.sys,
                    &self.tables[&id],
                    trx,
                    &key,
                    &mut ctx,
                )? {
                    Outcome::Done(n) => Ok(DmlResult::Done(Response::Affected(n))),
                    Outcome::Wait(t) => Ok(DmlResult::Wait(t)),
                }
            }
            Request::Locking { read, exclusive } => {
                self.locking_read(s, read, *exclusive, ReadWait::Wait)
            }
            Request::SkipLocked { read, exclusive } => {
                if !matches!(**read, Request::Scan { .. }) {
                    return Err(Error::InvalidArgument(
                        "SKIP LOCKED applies to a range read".into(),
                    ));
                }
                self.locking_read(s, read, *exclusive, ReadWait::Skip)
            }
            Request::SemiConsistent { read } => {
                let semi = match &**read {
                    Request::Scan { index: None, .. } => {
                        self.sessions[&s].trx.as_ref().is_some_and(|t| {
                            matches!(
                                t.isolation,
                                Isolation::ReadCommitted | Isolation::ReadUncommitted
                            )
                        })
                    }
                    Request::Scan { .. } => false,
                    _ => {
                        return Err(Error::InvalidArgument(
                            "a semi-consistent read is a range read".into(),
                        ))
                    }
                };
                let wait = if semi { ReadWait::Semi } else { ReadWait::Wait };
                self.locking_read(s, read, true, wait)
            }
            Request::Get { .. } | Request::Scan { .. }
                if self.statement_view.is_none()
                    && self.sessions[&s]
                        .trx
                        .as_ref()
                        .is_some_and(|t| t.isolation == Isolation::Serializable) =>
            {
                // SERIALIZABLE: plain reads in a transaction lock like
                // LOCK IN SHARE MODE.
                self.locking_read(s, request, false, ReadWait::Wait)
            }
            Request::Get { table, key } => {
                let id = self.table_id(table)?;
                let key = Self::key_stored(&self.tables[&id], key)?;
                let view = self.read_mode_view(s);
                let mode = match &view {
                    Some(v) => ReadMode::Consistent(v),
                    None => ReadMode::Latest,
                };
                let row = select::get(&mut self.pager, &self.tables[&id], &key, mode)?;
                let row = self.take_row_ref(s, id, row);
                Ok(DmlResult::Done(Response::Row(row)))
            }
            Request::Scan {
                table,
                index,
                low,
                high,
                reverse,
                limit,
            } => {
                let id = self.table_id(table)?;
                let t = &self.tables[&id];
                let (ix, cols) = Self::scan_index(t, index.as_deref(), low, high)?;
                let low = Self::bound_stored(t, &cols, low)?;
                let high = Self::bound_stored(t, &cols, high)?;
                let dir = if *reverse {
                    Direction::Backward
                } else {
                    Direction::Forward
                };
                let view = self.read_mode_view(s);
                if !self
                    .config
                    .canaries
                    .has(crate::Canary::OldViewsReadNewIndex)
                {
                    index_usable(&self.tables[&id], ix, view.as_ref())?;
                }
                let mode = match &view {
                    Some(v) => ReadMode::Consistent(v),
                    None => ReadMode::Latest,
                };
                let mut rows = select::scan(
                    &mut self.pager,
                    &self.tables[&id],
                    ix,
                    low,
                    high,
                    dir,
                    limit.unwrap_or(usize::MAX),
                    mode,
                )?;
                self.take_row_refs(s, id, &mut rows);
                Ok(DmlResult::Done(Response::Rows(rows)))
            }
            _ => unreachable!("not a row statement"),
        }
    }

    /// The index a scan uses (`None`: the clustered index) and its key
    /// columns.
    fn scan_index(
        t: &Table,
        index: Option<&str>,
        low: &RangeBound,
        high: &RangeBound,
    ) -> Result<(Option<usize>, Vec<(usize, Option<u16>)>)> {
        let (ix, cols) = match index {
            None => (None, t.def.primary_key.iter().map(|&c| (c, None)).collect()),
            Some(name) => {
                let i = t
                    .secondary
                    .iter()
                    .position(|x| x.def.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| Error::NoSuchIndex {
                        index: name.to_string(),
                        table: t.name().to_string(),
                    })?;
                let def = &t.secondary[i].def;
                let cols: Vec<_> = (def.columns.iter().enumerate())
                    .map(|(k, &c)| (c, def.prefix(k)))
                    .collect();
                (Some(i), cols)
            }
        };
        if ix.is_none()
            && cols.is_empty()
            && (*low != RangeBound::Unbounded || *high != RangeBound::Unbounded)
        {
            return Err(Error::InvalidArgument(format!(
                "table '{}' has no primary key to range over",
                t.name()
            )));
        }
        Ok((ix, cols))
    }

    /// A locking read: an intention lock on the table, then the records.
    fn locking_read(
        &mut self,
        s: SessionId,
        read: &Request,
        exclusive: bool,
        wait: ReadWait,
    ) -> Result<DmlResult> {
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.semi_rows.clear();
        }
        let (table, mode, table_mode) = match read {
            Request::Get { table, .. } | Request::Scan { table, .. } => (
                table,
                if exclusive { RecMode::X } else { RecMode::S },
                if exclusive {
                    TableMode::IX
                } else {
                    TableMode::IS
                },
            ),
            _ => {
                return Err(Error::InvalidArgument(
                    "FOR UPDATE and LOCK IN SHARE MODE apply to a SELECT".into(),
                ))
            }
        };
        let id = self.table_id(table)?;
        let t = &self.tables[&id];
        let scan_args = match read {
            Request::Scan {
                index,
                low,
                high,
                reverse,
                limit,
                ..
            } => {
                let (ix, cols) = Self::scan_index(t, index.as_deref(), low, high)?;
                Some((
                    ix,
                    Self::bound_stored(t, &cols, low)?,
                    Self::bound_stored(t, &cols, high)?,
                    if *reverse {
                        Direction::Backward
                    } else {
                        Direction::Forward
                    },
                    limit.unwrap_or(usize::MAX),
                ))
            }
            _ => None,
        };
        let key = match read {
            Request::Get { key, .. } => Some(Self::key_stored(t, key)?),
            _ => None,
        };
        if let Some((ix, ..)) = &scan_args {
            let view = self.sessions[&s].trx.as_ref().and_then(|t| t.view.as_ref());
            if !self
                .config
                .canaries
                .has(crate::Canary::OldViewsReadNewIndex)
            {
                index_usable(t, *ix, view)?;
            }
        }
        let now = self.pager.now_us();
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let trx = sess.trx.as_mut().expect("transaction open");
        if let Some(w) = table_lock(&mut self.locks, trx.id, id, table_mode, now) {
            return Ok(DmlResult::Wait(w));
        }
        let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys);
        ctx.skip_locked = wait != ReadWait::Wait;
        if wait == ReadWait::Semi {
            ctx.semi = Some(self.sys.snapshot());
        }
        let table = &self.tables[&id];
        Ok(match (key, scan_args) {
            (Some(key), _) => {
                match select::get_locking(&mut self.pager, table, &key, mode, &mut ctx)? {
                    Ok(row) => {
                        drop(ctx);
                        let row = self.take_row_ref(s, id, row);
                        DmlResult::Done(Response::Row(row))
                    }
                    Err(w) => DmlResult::Wait(w),
                }
            }
            (None, Some((ix, low, high, dir, limit))) => {
                if self
                    .config
                    .canaries
                    .has(crate::Canary::LockingScanSkipsGaps)
                {
                    // The planted bug: the range's records are locked, the
                    // gaps between them are not, so inserts into the range
                    // go ahead (phantoms) under REPEATABLE READ.
                    ctx.gaps = false;
                }
                match select::scan_locking(
                    &mut self.pager,
                    table,
                    ix,
                    low,
                    high,
                    dir,
                    limit,
                    mode,
                    &mut ctx,
                )? {
                    Ok(mut rows) => {
                        let semi = std::mem::take(&mut ctx.semi_rows);
                        drop(ctx);
                        if let Some(sess) = self.sessions.get_mut(&s) {
                            sess.semi_rows = semi;
                        }
                        self.take_row_refs(s, id, &mut rows);
                        DmlResult::Done(Response::Rows(rows))
                    }
                    Err(w) => DmlResult::Wait(w),
                }
            }
            (None, None) => unreachable!("a Get has a key, a Scan its bounds"),
        })
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

/// What a locking read does about a lock it would wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadWait {
    /// Waits.
    Wait,
    /// SKIP LOCKED: leaves the row out.
    Skip,
    /// Semi-consistent: reads the row's last committed version, unlocked.
    Semi,
}

enum DmlResult {
    Done(Response),
    Wait(crate::lock::LockId),
}

/// 1412 if `view` is older than the commit that made secondary index `ix`
/// usable (InnoDB's `row_merge_is_index_usable`).
fn index_usable(t: &Table, ix: Option<usize>, view: Option<&crate::trx::ReadView>) -> Result<()> {
    let Some(i) = ix else {
        return Ok(());
    };
    match view {
        Some(v) if !v.sees(t.secondary[i].created_by) => Err(Error::TableDefChanged),
        _ => Ok(()),
    }
}

/// Requests a table lock; `Some(lock)` if it must wait.
fn table_lock(
    locks: &mut LockSys,
    trx: u64,
    table: u64,
    mode: TableMode,
    now_us: u64,
) -> Option<crate::lock::LockId> {
    match locks.request(trx, Target::Table(table), Mode::Table(mode), now_us) {
        crate::lock::Request::Granted => None,
        crate::lock::Request::Waiting(w) => Some(w),
    }
}

/// The lock context of a statement of `trx`.
fn lock_ctx<'a>(locks: &'a mut LockSys, trx: &Trx, now_us: u64, sys: &TrxSys) -> LockCtx<'a> {
    if matches!(
        trx.isolation,
        Isolation::ReadCommitted | Isolation::ReadUncommitted
    ) {
        locks.set_gapless(trx.id);
    }
    LockCtx {
        locks,
        trx: trx.id,
        now_us,
        active: sys.active_ids(),
        gaps: matches!(
            trx.isolation,
            Isolation::RepeatableRead | Isolation::Serializable
        ),
        skip_locked: false,
        skipped: false,
        semi: None,
        semi_rows: Vec::new(),
        duplicates: false,
    }
}
