//! INSERT, UPDATE, DELETE and the reads that serve them: a request run
//! against the row layer, its lock waits suspended and resumed.

use super::*;

impl Engine {
    pub(super) fn run_dml(&mut self, s: SessionId, request: Request) -> Result<Step> {
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
            && matches!(
                request,
                Request::Get { .. } | Request::Scan { .. } | Request::Ranges { .. }
            )
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
        } else if !scoped {
            self.statement_isolation(s);
        }
        // A request run again after a wait is undone, should it fail, to
        // where it first began (an insert keeps its work through a wait).
        let current = (self.session_mut(s).trx.as_ref())
            .expect("transaction open")
            .undo_no();
        let undo_no = self.session_mut(s).undo_mark.take().unwrap_or(current);
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
                let sess = self.session_mut(s);
                if sess.insert_progress.is_none()
                    && sess.update_progress.is_none()
                    && sess.change_progress.is_none()
                {
                    self.rollback_statement(s, undo_no)?;
                }
                self.suspend(s, request, lock, undo_no)
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
    pub(super) fn suspend(
        &mut self,
        s: SessionId,
        request: Request,
        lock: crate::lock::LockId,
        undo_mark: u64,
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
                        self.session_mut(s).undo_mark = Some(undo_mark);
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
        let resume = self.session_mut(s).scan_resume.take();
        self.session_mut(s).pending = Some(Pending {
            request,
            since_us,
            resume,
            undo_mark,
        });
        Ok(Step::Waiting)
    }

    pub(super) fn key_stored(table: &Table, key: &[Value]) -> Result<Key> {
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
        // A key on a column prefix is addressed by the whole value, and
        // identifies the row by its prefix.
        (table.def.primary_key.iter().enumerate())
            .zip(key)
            .map(|((i, &c), v)| {
                let col = &table.def.columns[c];
                if v.is_null() {
                    Ok(None)
                } else {
                    let v = record::to_stored(&col.ty, v, &col.name).map(Some)?;
                    Ok(write::cut(&v, table.def.primary_prefix(i).map(usize::from)))
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
    pub(super) fn bound_stored(
        table: &Table,
        cols: &[(usize, Option<u16>)],
        b: &RangeBound,
    ) -> Result<Bound> {
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

    /// Keeps the row id of session `s`'s insert into table `table` that
    /// must wait, for when it runs again.
    fn keep_row_id(&mut self, s: SessionId, table: u64, row_id: Option<u64>) {
        if let (Some(r), Some(x)) = (row_id, self.sessions.get_mut(&s)) {
            x.kept_row_id = Some((table, r));
        }
    }

    pub(super) fn dml(&mut self, s: SessionId, request: &Request) -> Result<DmlResult> {
        let (index_only, request) = match request {
            Request::IndexOnly { read } => (true, &**read),
            r => (false, r),
        };
        if matches!(request, Request::IndexOnly { .. }) {
            return Err(Error::InvalidArgument(
                "an index-only read wraps a read, not another".into(),
            ));
        }
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.index_only = index_only;
        }
        // Whether the read is a SELECT's: a locking read says so, a plain
        // read is one (its SERIALIZABLE lock included).
        let index_condition = match request {
            Request::Locking {
                index_condition, ..
            } => *index_condition,
            Request::Get { .. } | Request::Scan { .. } | Request::Ranges { .. } => true,
            _ => false,
        };
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.index_condition = index_condition;
        }
        match request {
            Request::Insert { table, row } => {
                let id = self.table_id(table)?;
                let t = &self.tables[&id];
                let cols = row::stored_columns(t, row)?;
                let keyless = t.def.primary_key.is_empty();
                let checks = self.child_checks(s, id, &cols, None, None);
                let now = self.pager.now_us();
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let trx = sess.trx.as_mut().expect("transaction open");
                if let Some(w) = table_lock(&mut self.locks, trx.id, id, TableMode::IX, now) {
                    return Ok(DmlResult::Wait(w));
                }
                // The row id comes after the table's IX lock and once: an
                // insert run again after a lock wait keeps the id it took
                // (`row_ins` leaves its node past INS_NODE_ALLOC_ROW_ID).
                let in_place = sess.insert_progress.is_some_and(|(t, _)| t == id);
                let row_id = if keyless {
                    // The planted bug takes a new id for an insert that
                    // waited before its clustered record went in (one
                    // whose record is in keeps it: the record is its).
                    let kept = sess
                        .kept_row_id
                        .take()
                        .filter(|&(t, _)| t == id)
                        .filter(|_| {
                            in_place
                                || !self
                                    .config
                                    .canaries
                                    .has(crate::Canary::RowIdRetakenAfterWait)
                        });
                    Some(match kept {
                        Some((_, r)) => r,
                        None => {
                            let t = self.tables.get_mut(&id).expect("table exists");
                            t.next_row_id += 1;
                            t.next_row_id - 1
                        }
                    })
                } else {
                    None
                };
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let mut progress = (sess.insert_progress.take())
                    .filter(|&(t, _)| t == id)
                    .map(|(_, done)| done);
                let trx = sess.trx.as_mut().expect("transaction open");
                let duplicates = sess.statement.as_ref().is_some_and(|st| st.duplicates);
                let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, duplicates);
                let tables = &self.tables;
                let mut before = |pager: &mut crate::pager::Pager,
                                  ctx: &mut crate::row::locking::LockCtx<'_>,
                                  at: Option<usize>| {
                    foreign::check_child_at(tables, &checks, pager, ctx, at)
                };
                match write::insert(
                    &mut self.pager,
                    &mut self.sys,
                    &self.tables[&id],
                    trx,
                    &cols,
                    row_id,
                    &mut ctx,
                    &mut before,
                    &mut progress,
                )? {
                    Outcome::Done(n) => Ok(DmlResult::Done(Response::Affected(n))),
                    Outcome::Wait(t) => {
                        self.keep_row_id(s, id, row_id);
                        if let Some(done) = progress {
                            self.stats.inserts_kept_in_place += 1;
                            self.session_mut(s).insert_progress = Some((id, done));
                        }
                        Ok(DmlResult::Wait(t))
                    }
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
                let mut progress = (sess.update_progress.take())
                    .filter(|&(t, _)| t == id)
                    .map(|(_, done)| done);
                let mut kept = (sess.change_progress.take())
                    .filter(|(t, _)| *t == id)
                    .map(|(_, k)| k);
                let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, duplicates);
                let mut old = None;
                let outcome = write::update_returning(
                    &mut self.pager,
                    &mut self.sys,
                    &self.tables[&id],
                    trx,
                    &key,
                    &changes,
                    &mut ctx,
                    &mut old,
                    &mut progress,
                    &mut kept,
                )?;
                if let (Outcome::Wait(_), Some(done)) = (&outcome, progress) {
                    self.stats.updates_kept_deleted += 1;
                    self.session_mut(s).update_progress = Some((id, done));
                }
                if let (Outcome::Wait(_), Some(k)) = (&outcome, kept) {
                    self.session_mut(s).change_progress = Some((id, k));
                }
                match outcome {
                    Outcome::Done(n) => match old.filter(|_| n > 0) {
                        Some(old) => {
                            let mut new = old.clone();
                            for (c, v) in changes {
                                new[c] = v;
                            }
                            Ok(self.after_change(s, id, &old, Some(&new), n)?)
                        }
                        None => Ok(DmlResult::Done(Response::Affected(n))),
                    },
                    Outcome::Wait(t) => Ok(DmlResult::Wait(t)),
                }
            }
            Request::Delete { table, key } => {
                let id = self.table_id(table)?;
                let key = Self::key_stored(&self.tables[&id], key)?;
                let referenced = self.foreign_key_checks(s) && !self.referencing(id).is_empty();
                let now = self.pager.now_us();
                let sess = self.sessions.get_mut(&s).expect("session exists");
                let trx = sess.trx.as_mut().expect("transaction open");
                if let Some(w) = table_lock(&mut self.locks, trx.id, id, TableMode::IX, now) {
                    return Ok(DmlResult::Wait(w));
                }
                let mut kept = (sess.change_progress.take())
                    .filter(|(t, _)| *t == id)
                    .map(|(_, k)| k);
                let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, false);
                let mut old = None;
                // The deleted row's columns, for the constraints that
                // reference the table.
                match write::delete_returning(
                    &mut self.pager,
                    &mut self.sys,
                    &self.tables[&id],
                    trx,
                    &key,
                    &mut ctx,
                    referenced.then_some(&mut old),
                    &mut kept,
                )? {
                    Outcome::Done(n) => match old.filter(|_| n > 0) {
                        Some(old) => Ok(self.after_change(s, id, &old, None, n)?),
                        None => Ok(DmlResult::Done(Response::Affected(n))),
                    },
                    Outcome::Wait(t) => {
                        if let Some(k) = kept {
                            self.session_mut(s).change_progress = Some((id, k));
                        }
                        Ok(DmlResult::Wait(t))
                    }
                }
            }
            Request::Locking {
                read, exclusive, ..
            } if matches!(**read, Request::Ranges { .. }) => {
                self.read_ranges(s, read, Some((*exclusive, ReadWait::Wait)))
            }
            Request::SkipLocked { read, exclusive } if matches!(**read, Request::Ranges { .. }) => {
                self.read_ranges(s, read, Some((*exclusive, ReadWait::Skip)))
            }
            Request::Ranges { .. } => self.read_ranges(s, request, None),
            Request::Locking {
                read, exclusive, ..
            } => self.locking_read(s, read, *exclusive, ReadWait::Wait),
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
}

impl Engine {
    /// A [`Request::Ranges`] (locking FOR UPDATE or in share mode when
    /// `locking` says so): each of its reads in turn, the rows in order;
    /// a read that must wait makes the whole request wait (it runs again
    /// from its first read once the lock is granted, the locks taken so far
    /// kept, as any statement that waits).
    fn read_ranges(
        &mut self,
        s: SessionId,
        request: &Request,
        locking: Option<(bool, ReadWait)>,
    ) -> Result<DmlResult> {
        let Request::Ranges {
            table,
            index,
            ranges,
        } = request
        else {
            unreachable!("a ranges read");
        };
        let id = self.table_id(table)?;
        let pk_len = self.tables[&id].def.primary_key.len();
        if pk_len == 0 {
            return Err(Error::InvalidArgument(format!(
                "table '{table}' has no primary key: read its ranges one by one"
            )));
        }
        let mut out = Vec::new();
        for sub in Request::range_reads(table, index, ranges, pk_len) {
            let r = match (locking, sub) {
                // SKIP LOCKED reads ranges: a point read is its key's range.
                (Some((exclusive, ReadWait::Skip)), sub) => {
                    self.locking_read(s, &sub.as_range(), exclusive, ReadWait::Skip)?
                }
                (Some((exclusive, wait)), sub) => self.locking_read(s, &sub, exclusive, wait)?,
                (None, sub) => self.dml(s, &sub)?,
            };
            match r {
                DmlResult::Wait(w) => return Ok(DmlResult::Wait(w)),
                DmlResult::Done(Response::Row(row)) => out.extend(row),
                DmlResult::Done(Response::Rows(rows)) => out.extend(rows),
                DmlResult::Done(other) => unreachable!("a read answered {other:?}"),
            }
        }
        Ok(DmlResult::Done(Response::Rows(out)))
    }

    /// The constraints a change of a row of table `id` from `old` to `new`
    /// (`None`: a delete) answers to: those that reference the table, then
    /// the table's own.
    fn after_change(
        &mut self,
        s: SessionId,
        id: u64,
        old: &write::Columns,
        new: Option<&write::Columns>,
        n: u64,
    ) -> Result<DmlResult> {
        let mut chain = Vec::new();
        if let Some(w) = self.check_children(s, id, old, new, &mut chain)? {
            return Ok(DmlResult::Wait(w));
        }
        if let Some(new) = new {
            if let Some(w) = self.check_parents(s, id, new, old, None)? {
                return Ok(DmlResult::Wait(w));
            }
        }
        Ok(DmlResult::Done(Response::Affected(n)))
    }
}

pub(super) enum DmlResult {
    Done(Response),
    Wait(crate::lock::LockId),
}

/// Requests a table lock; `Some(lock)` if it must wait.
pub(super) fn table_lock(
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

/// The lock context of a statement of `trx` (`duplicates`: its
/// duplicate checks lock X, see `Engine::set_statement_duplicates`).
pub(super) fn lock_ctx<'a>(
    locks: &'a mut LockSys,
    trx: &Trx,
    now_us: u64,
    sys: &TrxSys,
    duplicates: bool,
) -> LockCtx<'a> {
    locks.note_isolation(trx.id, trx.isolation);
    LockCtx {
        locks,
        trx: trx.id,
        now_us,
        active: sys.active_ids(),
        gaps: matches!(
            trx.isolation,
            Isolation::RepeatableRead | Isolation::Serializable
        ),
        read_committed: trx.isolation == Isolation::ReadCommitted,
        skip_locked: false,
        skipped: false,
        semi: None,
        semi_rows: Vec::new(),
        resume: None,
        row_by_row: false,
        index_condition: false,
        index_only: false,
        yield_waits: false,
        yielded: false,
        duplicates,
    }
}
