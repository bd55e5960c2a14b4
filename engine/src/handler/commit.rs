//! Statements and transactions: a statement's scope and its rollback,
//! BEGIN, COMMIT (with its three flush paths and group commit), ROLLBACK
//! and savepoints.

use super::*;

impl Engine {
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
        let sess = self.open_session(s)?;
        if sess.pending.is_some()
            || sess.commit_wait_lsn.is_some()
            || sess.commit_queued
            || sess.statement.is_some()
        {
            return Err(Error::SessionState(s, "a statement is open"));
        }
        if sess.trx.is_none() {
            let implicit = !sess.autocommit_off;
            let r = self.background().and_then(|_| self.begin_trx(s, implicit));
            self.guard(r)?;
        }
        self.statement_isolation(s);
        let undo_no = self.session_mut(s).trx.as_ref().map_or(0, |t| t.undo_no());
        self.session_mut(s).statement = Some(StatementScope {
            undo_no,
            duplicates: false,
            row_by_row: false,
        });
        self.session_mut(s).read_on = None;
        Ok(())
    }

    /// Marks the open statement as one that changes each row as it reads
    /// it, as MySQL's UPDATE and DELETE do (`mysql_update` and
    /// `mysql_delete` call `ha_update_row`/`ha_delete_row` inside their
    /// read_record loop, unless an ORDER BY must sort first or an UPDATE
    /// changes the key it reads by): from now until it ends, a locking
    /// scan that has rows read and meets a lock it would wait for returns
    /// those rows first ([`Engine::read_goes_on`]), and the same read
    /// asked again goes on from there, to wait. The rows are then changed
    /// before the wait, and their undo records count in the transaction's
    /// deadlock weight, as in InnoDB.
    pub fn set_statement_row_by_row(&mut self, s: SessionId) -> Result<()> {
        self.open_statement(s)?.row_by_row = true;
        Ok(())
    }

    /// The statement open in session `s`.
    fn open_statement(&mut self, s: SessionId) -> Result<&mut StatementScope> {
        self.open_session_mut(s)?
            .statement
            .as_mut()
            .ok_or(Error::SessionState(s, "no statement is open"))
    }

    /// [`set_statement_row_by_row`](Self::set_statement_row_by_row) for
    /// every locking scan of session `s` from now until it is turned off,
    /// for a caller that sends a change's read and its writes as requests
    /// of their own (the fuzzer's runner drives MySQL's UPDATE and DELETE
    /// so). Turning it off forgets where a scan would have gone on from.
    pub fn set_row_by_row(&mut self, s: SessionId, on: bool) -> Result<()> {
        let sess = self.open_session_mut(s)?;
        if !on {
            sess.read_on = None;
        }
        sess.row_by_row = on;
        Ok(())
    }

    /// Marks the open statement as one that replaces, updates or ignores
    /// the rows its writes collide with: from now until it ends, the
    /// duplicates its inserts and updates find are locked X, not S, as
    /// InnoDB does when MySQL calls `extra(HA_EXTRA_IGNORE_DUP_KEY)`, so
    /// that the row it goes on to change is not first shared with another
    /// transaction doing the same.
    pub fn set_statement_duplicates(&mut self, s: SessionId) -> Result<()> {
        self.open_statement(s)?.duplicates = true;
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
        let sess = self.open_session_mut(s)?;
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

    /// A statement of session `s` begins: its transaction takes the
    /// session's isolation level now, as InnoDB reads it at each
    /// statement's start (`ha_innobase::start_stmt` and `external_lock`
    /// set `trx->isolation_level` from the session's). Its locking follows
    /// the new level at once; a consistent read under READ COMMITTED gets a
    /// view of its own, and one under REPEATABLE READ after a READ
    /// COMMITTED statement a new view it then keeps (InnoDB closes a READ
    /// COMMITTED view when its statement ends).
    ///
    /// Under [`crate::LaterRule::IsolationSetForNextTransaction`] a
    /// transaction begun by BEGIN (or by a statement with autocommit off)
    /// keeps the level it began with.
    pub(super) fn statement_isolation(&mut self, s: SessionId) {
        let kept = (self.config.later).has(crate::LaterRule::IsolationSetForNextTransaction);
        let Some(sess) = self.sessions.get_mut(&s) else {
            return;
        };
        if kept && !sess.implicit {
            return;
        }
        let iso = sess.isolation;
        let Some(trx) = sess.trx.as_mut() else {
            return;
        };
        if trx.isolation == iso {
            return;
        }
        let gapless = |i| matches!(i, Isolation::ReadCommitted | Isolation::ReadUncommitted);
        if gapless(trx.isolation) && !gapless(iso) {
            self.sys.close_view(trx);
        }
        trx.isolation = iso;
        self.locks.note_isolation(trx.id, iso);
    }

    pub(super) fn begin_trx(&mut self, s: SessionId, implicit: bool) -> Result<()> {
        let now = self.pager.now_us();
        let iso = self.session_mut(s).isolation;
        let trx = self.sys.begin(&mut self.pager, iso, now)?;
        let sess = self.session_mut(s);
        sess.last_trx = Some(trx.id);
        sess.trx = Some(trx);
        sess.implicit = implicit;
        // A place an earlier transaction's scan would have gone on from
        // is not this one's.
        sess.read_on = None;
        Ok(())
    }

    pub(super) fn commit_trx(&mut self, s: SessionId) -> Result<()> {
        self.commit_trx_maybe_grouped(s, false).map(|_| ())
    }

    /// Commits; with group commit on (and `may_defer`), a commit whose redo
    /// still needs a sync is not acknowledged yet: it waits for the next
    /// sync, which covers every commit waiting by then. Returns whether the
    /// acknowledgement was deferred.
    pub(super) fn commit_trx_maybe_grouped(
        &mut self,
        s: SessionId,
        may_defer: bool,
    ) -> Result<bool> {
        let queue = may_defer
            && self.config.commit_mutex
            && self.config.flush_at_commit == FlushAtCommit::Sync;
        let sess = self.session_mut(s);
        if queue && sess.trx.as_ref().is_some_and(|t| t.undo.is_some()) {
            // Prepared; the commit comes when the mutex is free (`resume`).
            sess.commit_queued = true;
            return Ok(true);
        }
        let Some(mut trx) = sess.trx.take() else {
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
        if deferred && self.config.locks_until_durable {
            // Released by the sync that acknowledges it (`resume`).
            self.session_mut(s).commit_wait_trx = Some(trx.id);
        } else {
            self.locks.release_all(trx.id, now);
        }
        self.stats.commits += 1;
        let sess = self.session_mut(s);
        sess.implicit = false;
        Ok(deferred)
    }

    pub(super) fn rollback_trx(&mut self, s: SessionId) -> Result<()> {
        let Some(mut trx) = self.session_mut(s).trx.take() else {
            return Ok(());
        };
        self.session_mut(s).pending = None;
        let now = self.pager.now_us();
        self.locks.cancel_wait(trx.id, EventKind::Cancelled, now);
        let mut removed = Vec::new();
        if let Some(mut log) = trx.undo.clone() {
            let r = row::rollback::rollback_to(
                &mut self.pager,
                &self.sys,
                &self.tables,
                trx.id,
                &mut log,
                0,
                &mut removed,
            )
            .and_then(|_| crate::trx::drop_rolled_back_log(&mut self.pager, &log));
            if let Err(e) = r {
                return Err(self.rollback_failed(e));
            }
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
    pub(super) fn rollback_statement(&mut self, s: SessionId, undo_no: u64) -> Result<()> {
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let Some(trx) = sess.trx.as_mut() else {
            return Ok(());
        };
        let mut removed = Vec::new();
        if let Some(log) = trx.undo.as_mut() {
            if log.next_undo_no > undo_no {
                let r = row::rollback::rollback_to(
                    &mut self.pager,
                    &self.sys,
                    &self.tables,
                    trx.id,
                    log,
                    undo_no,
                    &mut removed,
                );
                if let Err(e) = r {
                    return Err(self.rollback_failed(e));
                }
            }
        }
        self.inherit_removed(&removed)
    }

    /// A rollback that fails (a page split that meets a full disk while
    /// restoring a longer row, an undo page that cannot be read) leaves its
    /// transaction half undone with its locks held, and nothing but
    /// recovery can finish it: the engine stops. InnoDB's `row_undo_step`
    /// does the same ("Fatal error %lu in rollback", and `exit(1)` for
    /// DB_OUT_OF_FILE_SPACE); its recovery then rolls the transaction back.
    /// The error that stops the engine keeps its type (a failed fsync is
    /// still an I/O error); any other becomes [`Error::Halted`].
    pub(super) fn rollback_failed(&mut self, e: Error) -> Error {
        let why = format!("rollback failed: {e}");
        if self.halted.is_none() {
            self.halted = Some(why.clone());
        }
        if e.stops_engine() {
            // Stopped by the error itself (a crash, a failed write).
            e
        } else {
            self.stats.failed_rollbacks += 1;
            Error::Halted(why)
        }
    }

    /// After a failed statement in autocommit mode, its transaction ends.
    pub(super) fn end_implicit_on_error(&mut self, s: SessionId) -> Result<()> {
        let sess = self.session_mut(s);
        if sess.implicit && sess.statement.is_none() {
            let r = self.rollback_trx(s);
            self.guard(r)?;
        }
        Ok(())
    }

    /// The open transaction and the position of its savepoint `name`
    /// (MySQL 1305 if either is missing).
    pub(super) fn savepoint(&mut self, s: SessionId, name: &str) -> Result<(&mut Trx, usize)> {
        let missing = || Error::NoSuchSavepoint(name.to_string());
        let trx = self.session_mut(s).trx.as_mut().ok_or_else(missing)?;
        let pos = trx
            .savepoints
            .iter()
            .position(|(n, ..)| n.eq_ignore_ascii_case(name))
            .ok_or_else(missing)?;
        Ok((trx, pos))
    }
}
