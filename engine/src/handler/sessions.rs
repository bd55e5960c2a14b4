//! A session's life and state as callers see it: opening and closing
//! sessions, the transaction a session runs and how, the place a
//! row-by-row read keeps, the rows a read handed over and the locks on
//! them that an UPDATE or DELETE lets go (`ha_innodb.cc`'s per-connection
//! state, `row_unlock_for_mysql`).

use super::*;

impl Engine {
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
            if let Some(session) = self.sessions.remove(&s) {
                // A commit waiting for its group's sync with its locks: the
                // commit is written; the locks go with the session.
                if let Some(trx) = session.commit_wait_trx {
                    let now = self.pager.now_us();
                    self.locks.release_all(trx, now);
                }
            }
        }
        Ok(())
    }

    /// Whether a session has a statement waiting.
    pub fn is_waiting(&self, s: SessionId) -> bool {
        self.sessions
            .get(&s)
            .is_some_and(|x| x.pending.is_some() || x.commit_wait_lsn.is_some() || x.commit_queued)
    }

    /// Whether a session's commit waits, still uncommitted, for the
    /// binary log's mutex ([`Config::commit_mutex`]).
    pub fn is_commit_queued(&self, s: SessionId) -> bool {
        self.sessions.get(&s).is_some_and(|x| x.commit_queued)
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

    /// Gives up a statement's lock wait at once (NOWAIT): the lock request
    /// leaves the queue and the statement fails, undone as after a lock
    /// wait timeout; the transaction stays open (InnoDB's
    /// `lock_wait_suspend_thread` answering DB_LOCK_NOWAIT).
    pub fn cancel_wait(&mut self, s: SessionId) -> Result<()> {
        self.check_running()?;
        let sess = self.open_session_mut(s)?;
        let Some(p) = sess.pending.take() else {
            return Err(Error::SessionState(s, "nothing is waiting"));
        };
        if std::mem::take(&mut sess.victim) {
            // Chosen as a deadlock victim while it waited: the whole
            // transaction is gone already.
            return Err(Error::Deadlock);
        }
        if let Some(trx) = sess.trx.as_ref().map(|t| t.id) {
            let now = self.pager.now_us();
            self.locks.cancel_wait(trx, EventKind::Cancelled, now);
        }
        self.undo_waited(s, p.undo_mark)?;
        self.end_implicit_on_error(s)
    }

    /// A waiting request that gives up (its wait timed out or was given
    /// up) undoes what it did before it waited: an insert's clustered
    /// record and entries kept in place, an update's or delete's change.
    pub(super) fn undo_waited(&mut self, s: SessionId, undo_mark: u64) -> Result<()> {
        self.session_mut(s).insert_progress = None;
        self.session_mut(s).update_progress = None;
        self.session_mut(s).change_progress = None;
        let r = self.rollback_statement(s, undo_mark);
        self.guard(r)
    }

    /// The positions, among the rows the session's last
    /// [`Request::SemiConsistent`] read returned, of the rows it read
    /// unlocked in their last committed version (empty after any other
    /// locking read).
    pub fn semi_consistent_rows(&self, s: SessionId) -> &[usize] {
        self.sessions.get(&s).map_or(&[], |x| &x.semi_rows)
    }

    /// Whether the session's last locking scan handed its rows over before
    /// a lock it would wait for ([`Engine::set_statement_row_by_row`]):
    /// the same read, asked again in the statement, goes on from there.
    pub fn read_goes_on(&self, s: SessionId) -> bool {
        self.sessions.get(&s).is_some_and(|x| x.read_on.is_some())
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
    pub(super) fn take_row_refs(&mut self, s: SessionId, id: u64, rows: &mut [Vec<Value>]) {
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
    pub(super) fn take_row_ref(
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

    /// READ COMMITTED and READ UNCOMMITTED: releases an X lock the
    /// session's transaction took since `mark` on each of the rows `rows`
    /// (whole rows of `table`, as a read returned them), on its clustered
    /// record and, when the read went through secondary index `index`, on
    /// its entry there: the rows an UPDATE or DELETE read and found not
    /// matching its WHERE (InnoDB's `row_unlock_for_mysql`, which unlocks
    /// the record under the read's cursor and, for a secondary index, the
    /// clustered record it locked too; the entries the statement's own
    /// changes locked in other indexes stay), unless the transaction
    /// wrote the row itself (its DB_TRX_ID is the transaction's). Under
    /// REPEATABLE READ and SERIALIZABLE it does nothing: those keep every
    /// lock.
    pub fn unlock_rows(
        &mut self,
        s: SessionId,
        table: &str,
        index: Option<&str>,
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
        // A later version's rule: nothing is let go of a row read through
        // a secondary index.
        if self.locks.unlock_clustered_only && index.is_some() {
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
            // A record the transaction itself wrote keeps its locks
            // (`row_unlock_for_mysql` unlocks only a record whose
            // DB_TRX_ID is another's): its implicit lock stands, and a
            // waiter granted the released one would meet it.
            if let Some(found) =
                crate::btree::get(&mut self.pager, &t.clustered, &crate::btree::key_refs(&pk))?
            {
                if row::trx_id_of(t, &found.rec)? == trx {
                    continue;
                }
            }
            targets.push(Target::Record {
                table: id,
                index: t.clustered.id,
                key: crate::lock::RecKey::Key(crate::btree::lock_key(&t.clustered, pk.clone())),
            });
            for sec in t
                .secondary
                .iter()
                .filter(|x| Some(x.def.name.as_str()) == index)
            {
                let key = write::sec_key_of_columns(t, sec, &cols, keyless.then(|| row_ids[i]));
                targets.push(Target::Record {
                    table: id,
                    index: sec.index.id,
                    key: crate::lock::RecKey::Key(crate::btree::lock_key(&sec.index, key)),
                });
            }
        }
        let now = self.pager.now_us();
        let before = self.locks.held_count(trx);
        self.locks
            .release_records(trx, &targets, crate::lock::RecMode::X, mark, now);
        let after = self.locks.held_count(trx);
        self.stats.record_locks_let_go += before.saturating_sub(after) as u64;
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
}
