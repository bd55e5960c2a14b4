//! The session driver: runs a session's next statement, feeds the lock
//! events to the lock oracle, and judges each result in lockstep against
//! the model (the committed state plus the transaction's own writes).

use super::*;
use crate::judge::locks::to_oracle;
use crate::judge::reads::{
    locked_range, model_rows, phantom, read_expected, resumed_scan_matches, rows_match,
};

/// What the model says a row statement does ([`crate::judge::reads::expected`]),
/// against the committed state and `writes`, an insert taking the next of
/// the runner's numbers for a row of a table without a primary key.
pub(super) fn expected(
    world: &mut World,
    writes: &[Write],
    req: &Request,
) -> Option<(Result<Response, u16>, Vec<Write>)> {
    let seq = world.row_seq;
    let Request::Insert { table, .. } = req else {
        let r = crate::judge::reads::expected(&world.schema, &world.committed, writes, req, seq);
        if let (Request::Update { table, .. } | Request::Delete { table, .. }, Some((want, ws))) =
            (req, &r)
        {
            match want {
                Err(1451) => world.stats.fk_parent_refused += 1,
                Err(1452) => world.stats.fk_child_refused += 1,
                Ok(_) => {
                    world.stats.fk_cascaded +=
                        ws.iter().filter(|w| w.table != *table).count() as u64
                }
                _ => {}
            }
        }
        return r;
    };
    // An insert that took its number before it waited keeps it.
    let seq = match world.insert_seq_override.take() {
        Some(kept) => kept,
        None => {
            world.row_seq += 1;
            seq
        }
    };
    let r = crate::judge::reads::expected(&world.schema, &world.committed, writes, req, seq);
    if r.as_ref().is_some_and(|(want, _)| *want == Err(1452)) {
        world.stats.fk_child_refused += 1;
    }
    if r.as_ref().is_some_and(|(want, _)| want.is_ok())
        && world.schema.table(table).is_some_and(|t| t.hidden)
    {
        world.stats.keyless_inserts += 1;
    }
    r
}

/// Runs the session's next step. Returns `Some(true)` if the disk crashed,
/// `Some(false)` if the engine stopped on an I/O error of its own (a failed
/// fsync), `None` otherwise.
pub(super) fn step_session(world: &mut World, s: &mut Sess) -> Option<bool> {
    if s.waiting {
        if s.txn
            .as_ref()
            .is_some_and(|t| matches!(t.stmts.first(), Some(Stmt::Ddl(_))))
        {
            return super::ddl::resume_ddl(world, s);
        }
        world.call_start_us = world.clock_now();
        let shape = insert_shape(world, s.last.as_ref());
        world.locks.running_insert(shape);
        let own = s.txn.as_ref().map_or(&[][..], |t| t.writes.as_slice());
        let shape = update_shape(world, own, s.last.as_ref());
        world.locks.running_update(shape);
        let writes = s
            .last
            .as_ref()
            .map_or_else(Vec::new, |req| statement_writes(world, own, req));
        world.step_writes = Some((s.id, writes));
        let r = world.engine().resume(s.id);
        return handle(world, s, None, r);
    }
    // A filtered change's steps after its read.
    if let Some(out) = super::filter::next(world, s) {
        return out;
    }
    let txn = s.txn.as_mut().expect("caller checked");
    // Crash anchors name planned statements: the first step of each (a
    // transfer takes four), or the transaction's end.
    let planned = if txn.next >= txn.stmts.len() {
        Some(txn.stmt_map.last().map_or(0, |&k| k + 1))
    } else {
        let k = txn.stmt_map[txn.next];
        (txn.next == 0 || txn.stmt_map[txn.next - 1] != k).then_some(k)
    };
    if let Some(k) = planned {
        let t = txn.plan_index;
        world.issued(t, k);
    }
    let txn = s.txn.as_mut().expect("caller checked");
    if txn.autocommit && txn.next >= txn.stmts.len() {
        // Its one statement ended it (or it had none to run).
        s.txn = None;
        return None;
    }
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
        Stmt::ChangeWhere(st) => super::filter::start(world, s, st),
        Stmt::Ddl(_) => unreachable!("a DDL runs when it starts and resumes while it waits"),
    }
}

/// A transfer's read of an account: SELECT ... FOR UPDATE.
pub(super) fn account_read(id: u64) -> Request {
    Request::Locking {
        read: Box::new(Request::Get {
            table: "sb".into(),
            key: vec![Value::UInt(id)],
        }),
        exclusive: true,
        index_condition: false,
    }
}

/// A transfer's write of a balance.
pub(super) fn balance_update(id: u64, balance: u64) -> Request {
    Request::Update {
        table: "sb".into(),
        key: vec![Value::UInt(id)],
        set: vec![("k".into(), Value::UInt(balance))],
    }
}

pub(super) fn exec(world: &mut World, s: &mut Sess, req: Request) -> Option<bool> {
    world.stats.statements += 1;
    world.call_start_us = world.clock_now();
    if let Some(t) = world.engine().trx_id(s.id) {
        s.trx = Some(t);
        world.trx_sessions.insert(t, s.id);
    }
    count_changes(world, s);
    let began_before = world.engine().last_trx_id(s.id);
    let shape = insert_shape(world, Some(&req));
    world.locks.running_insert(shape);
    let own = s.txn.as_ref().map_or(&[][..], |t| t.writes.as_slice());
    let shape = update_shape(world, own, Some(&req));
    world.locks.running_update(shape);
    // A filtered change's read hands its rows over before a lock it would
    // wait for, to be changed first, as MySQL's UPDATE and DELETE read
    // (see filter); every other read reads whole.
    world.step_writes = Some((s.id, statement_writes(world, own, &req)));
    let filtering = s.txn.as_ref().is_some_and(|t| t.filter.is_some());
    let r = match world.engine().set_row_by_row(s.id, filtering) {
        Ok(()) => world.engine().execute(s.id, req.clone()),
        Err(e) => Err(e),
    };
    if let Some(t) = world.engine.as_ref().and_then(|e| e.trx_id(s.id)) {
        s.trx = Some(t);
        world.trx_sessions.insert(t, s.id);
    } else if s.txn.as_ref().is_some_and(|t| t.autocommit) {
        // An autocommit statement's transaction may have begun and ended
        // inside the call (a consistent read begins none).
        let began = world.engine.as_ref().and_then(|e| e.last_trx_id(s.id));
        if began != began_before {
            s.trx = began;
        }
    }
    handle(world, s, Some(req), r)
}

/// The shape of an insert for the lock oracle
/// ([`models::lock::InsertShape`]), from the model's schema: which parent
/// tables its FOREIGN KEY checks lock before its clustered record goes in
/// and which after. A constraint is checked at the first index whose
/// leading columns are its own (`dict_foreign_find_index`: the clustered
/// index first), or first of all when no index has them.
fn insert_shape(world: &World, req: Option<&Request>) -> Option<models::lock::InsertShape> {
    let Some(Request::Insert { table, .. }) = req else {
        return None;
    };
    let e = world.engine.as_ref()?;
    let t = e.table(table).ok()?;
    let shape = world.schema.table(table)?;
    let mut out = models::lock::InsertShape {
        table: t.id,
        clustered: t.clustered.id,
        compressed: shape.zip_size.is_some(),
        ..Default::default()
    };
    for f in &shape.foreign {
        let Ok(parent) = e.table(&f.parent) else {
            continue;
        };
        let starts = |cols: &[usize]| cols.starts_with(&f.columns);
        let on_clustered = !shape.hidden && starts(&shape.primary_key);
        let on_secondary = (shape.indexes.iter().chain(&shape.online)).any(|i| starts(&i.columns));
        if on_clustered || !on_secondary {
            out.parents_before.insert(parent.id);
        } else {
            out.parents_after.insert(parent.id);
        }
    }
    Some(out)
}

/// The shape of an update or a delete of one row for the lock oracle
/// ([`models::lock::UpdateShape`]): what it keeps while it waits.
fn update_shape(
    world: &World,
    own: &[Write],
    req: Option<&Request>,
) -> Option<models::lock::UpdateShape> {
    let (table, moves) = match req {
        Some(Request::Update { table, key, set }) => {
            (table, moves_row(world, own, table, key, set))
        }
        Some(Request::Delete { table, .. }) => (table, false),
        _ => return None,
    };
    // The engine's ids name the table and index its lock events are on;
    // what the table is (compressed) is the model's.
    let t = world.engine.as_ref()?.table(table).ok()?;
    let shape = world.schema.table(table);
    Some(models::lock::UpdateShape {
        table: t.id,
        clustered: t.clustered.id,
        compressed: shape.is_some_and(|s| s.zip_size.is_some()),
        moves,
    })
}

/// Whether an UPDATE of `table`'s row at `key` setting `set` moves the
/// row: sets a column of the model's primary key to other bytes than the
/// row has (`row_upd_changes_ord_field_binary`: `' '` for `''` under a
/// PAD SPACE collation moves it too), the row as the transaction sees it
/// (`own`: its writes), or, where it sees none, to a value another key
/// compares as.
fn moves_row(
    world: &World,
    own: &[Write],
    table: &str,
    key: &[engine::Value],
    set: &[(String, engine::Value)],
) -> bool {
    let Some(t) = world.schema.table(table).filter(|t| !t.hidden) else {
        return false;
    };
    let old = t.key_from_values(None, key);
    let row = crate::judge::reads::visible(&world.committed, own, table, &old);
    set.iter().any(|(name, v)| {
        let Some(c) = t.columns.iter().position(|n| n == name) else {
            return false;
        };
        let Some(j) = t.primary_key.iter().position(|&k| k == c) else {
            return false;
        };
        let new = crate::judge::reads::to_model(v);
        match &row {
            Some(r) => r.get(c) != Some(&new),
            None => old.get(j) != Some(&t.keyed(c, &new)),
        }
    })
}

/// Tells the lock oracle how many rows the session's transaction has
/// changed so far, by the runner's own count (the model writes of its
/// finished statements): its undo records, half of its weight.
pub(super) fn count_changes(world: &mut World, s: &Sess) {
    if let (Some(t), Some(txn)) = (s.trx, &s.txn) {
        let compressed = |table: &str| {
            world
                .schema
                .tables
                .iter()
                .any(|s| s.name == table && s.zip_size.is_some())
        };
        let refusable = txn
            .writes
            .iter()
            .filter(|w| w.row.is_some() && compressed(&w.table))
            .count();
        world
            .locks
            .set_changes(t, txn.writes.len() as u64, refusable as u64);
    }
}

impl World {
    /// Feeds the lock events of the call just made to the oracle, which
    /// judges the settled state.
    pub(super) fn judge_locks(&mut self) {
        let now = self.clock_now();
        let Some(e) = self.engine.as_mut() else {
            return;
        };
        self.step_events.clear();
        if self.storage.crashed() || e.halted().is_some() {
            // The call died with the process, or stopped the engine (a
            // failed fsync), part-way (a wait queued, its deadlock search
            // not yet run): its lock state dies with it and is judged no
            // further (the oracle restarts at the crash that follows).
            e.take_lock_events();
            return;
        }
        for ev in e.take_lock_events() {
            let ev = to_oracle(ev, self.call_start_us, now);
            if self.trace.lines.is_some() {
                // Kept for the reader of a trace, not hashed: the
                // statement lines of the same steps are.
                let line = json!({
                    "t_us": now,
                    "kind": "lock",
                    "event": format!("{:?}", ev.kind),
                    "lock": ev.lock,
                    "trx": ev.trx,
                    "target": format!("{:?}", ev.target),
                    "mode": format!("{:?}", ev.mode),
                });
                self.trace.keep(line.to_string());
            }
            let other_row = self.waits_at_another_row(&ev);
            self.stats.unique_checks_at_another_row += u64::from(other_row.is_some());
            self.locks.event_at(&ev, other_row.is_some());
            if let Some((table, pk)) = other_row {
                // The waiting branch of the caller's step places its insert
                // from the same finding (`place_insert`).
                self.other_row_wait = Some((ev.trx, table, pk));
            }
            if ev.kind == models::lock::OKind::Converted {
                self.conversions.push(ev.clone());
            }
            self.step_events.push(ev);
        }
        self.locks.settle();
        self.take_lock_violations();
    }

    /// Whether `ev` is a wait for a record-only lock on a row of the
    /// clustered index of a table the running statement writes, a row it
    /// does not write (by the runner's own count of the call's writes,
    /// `step_writes`): a unique secondary index's duplicate check waiting
    /// for the row's uncommitted inserter, with the statement's own change
    /// in (`row::write::sec_unique_scan`). `false` where the runner does
    /// not know the call's writes. Returns the row's table and primary key.
    fn waits_at_another_row(
        &self,
        ev: &models::lock::OEvent,
    ) -> Option<(String, Vec<models::ModelValue>)> {
        use models::lock::{OKind, OMode, RKind};
        if ev.kind != OKind::Wait || !matches!(ev.mode, OMode::Record(_, RKind::Record)) {
            return None;
        }
        let (Some(e), Some((_, writes))) = (self.engine.as_ref(), self.step_writes.as_ref()) else {
            return None;
        };
        let (table, pk) = crate::judge::locks::clustered_row(e, &self.schema, &ev.target)?;
        (writes.iter().any(|w| w.table == table)
            && !writes.iter().any(|w| w.table == table && w.key == pk))
        .then_some((table, pk))
    }

    pub(super) fn take_lock_violations(&mut self) {
        for v in self.locks.take_violations() {
            self.violations.push(format!("lock oracle: {v}"));
        }
    }
}

/// The request a waiting session is running, kept for when it finishes.
pub(super) fn handle(
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
    let waits_before = world.locks.stats.waits;
    world.other_row_wait = None;
    world.judge_locks();
    world.locks.running_insert(None);
    world.locks.running_update(None);
    world.insert_seq_override = s.kept_seq;
    let out = stepped(world, s, req, r, waits_before);
    world.insert_seq_override = None;
    out
}

/// [`handle`] past the lock events: what the step's result says.
fn stepped(
    world: &mut World,
    s: &mut Sess,
    req: Request,
    r: engine::Result<Step>,
    waits_before: u64,
) -> Option<bool> {
    match r {
        Ok(Step::Waiting)
            if world
                .engine
                .as_ref()
                .is_some_and(|e| e.is_commit_queued(s.id)) =>
        {
            // Done but uncommitted, waiting for the binary log's mutex
            // (`Config::commit_mutex`). An autocommit statement is judged
            // now, by this step's lock events; its answer and its commit
            // come with the resume that takes the mutex.
            world.stats.commit_queue_waits += 1;
            // Only the configuration the runner chose queues a commit.
            let mutex = world.config.commit_mutex
                && world.config.flush_at_commit == engine::FlushAtCommit::Sync;
            let lock_wait = s.trx.is_some_and(|t| world.locks.deadline(t).is_some());
            if !mutex || lock_wait {
                world.violations.push(format!(
                    "{}: the engine queued a commit for the binary log's mutex {}",
                    describe(&req),
                    if mutex {
                        "while the lock oracle has the transaction waiting for a lock"
                    } else {
                        "that the configuration does not have (or not under flush 1)"
                    }
                ));
            }
            if s.txn
                .as_ref()
                .is_some_and(|t| t.autocommit && t.answer.is_none())
            {
                judge_before_commit(world, s, &req);
            }
            s.waiting = true;
            world.statement_event(s.id, &req, Stepped::Waiting);
            s.last = Some(req);
            None
        }
        Ok(Step::Waiting) => {
            // An insert into a table without a primary key that waits for
            // a record lock has its row id (taken after the table's IX
            // lock, `row_ins_alloc_row_id_step`), kept through the wait.
            if let (Request::Insert { table, .. }, None, Some(trx)) = (&req, s.kept_seq, s.trx) {
                let keyless = world.schema.table(table).is_some_and(|t| t.hidden);
                if keyless && world.locks.waits_for_record(trx) {
                    s.kept_seq = Some(world.row_seq);
                    world.row_seq += 1;
                    world.stats.keyless_kept_row_ids += 1;
                }
            }
            if let (Request::Insert { table, row }, true, Some(trx)) =
                (&req, s.in_flight.is_empty(), s.trx)
            {
                if world.locks.insert_in_place(trx) == Some(true) {
                    // Its clustered record is in (`row_ins_index_entry_step`
                    // keeps its place): the row, as the model would write it.
                    world.stats.inserts_kept_in_place += 1;
                    s.in_flight = in_flight_row(world, table, row, s.kept_seq)
                        .into_iter()
                        .collect();
                }
            }
            if let (true, Some(txn)) = (s.in_flight.is_empty(), s.txn.as_ref()) {
                s.in_flight = moving_update(world, &txn.writes, &req);
            }
            if let (true, Some(txn), Some(trx)) = (s.in_flight.is_empty(), s.txn.as_ref(), s.trx) {
                s.in_flight = kept_change(world, &txn.writes, &req, trx);
                if !s.in_flight.is_empty() {
                    world.stats.changes_kept_in_place += 1;
                }
            }
            if let (Request::Insert { table, .. }, Some(w), Some(trx)) =
                (&req, s.in_flight.first().cloned(), s.trx)
            {
                // The entries it put in before the index it waits in are
                // judged now, against this step's lock events.
                let target = world.locks.waiting_target(trx);
                // As the oracle was told (`judge_locks`): a unique index's
                // duplicate check waits at another row's record.
                let other = world
                    .other_row_wait
                    .take()
                    .filter(|(t, at, pk)| *t == trx && at == table && *pk != w.key);
                if let (Some((_, _, pk)), Some(txn)) = (other, s.txn.as_ref()) {
                    // Which index, the runner finds from that row as its
                    // writer wrote it (`stepped`).
                    world.unplaced_insert = Some(super::UnplacedInsert {
                        trx,
                        table: table.clone(),
                        write: w.clone(),
                        own: txn.writes.clone(),
                        other: pk,
                    });
                }
                let waited = target.as_ref().and_then(|t| {
                    world
                        .engine
                        .as_ref()
                        .and_then(|e| crate::judge::locks::waited_index(e, &world.schema, table, t))
                });
                let waited = waited.filter(|_| world.unplaced_insert.is_none());
                if let (Some(upto), Some(txn)) = (waited, s.txn.as_ref()) {
                    if upto > s.insert_judged {
                        let own = txn.writes.clone();
                        judge_insert_gap(world, trx, table, &w, &own, s.insert_judged..upto);
                        s.insert_judged = upto;
                    }
                }
            }
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
            let commit_pending = s
                .txn
                .as_ref()
                .is_some_and(|t| t.autocommit && t.answer.is_none() && t.commit_written.is_none());
            let lock_wait = s.trx.is_some_and(|t| world.locks.deadline(t).is_some());
            if commit_pending && !lock_wait {
                // An autocommit statement done and committed (in this call,
                // perhaps after lock waits), its commit waiting for a
                // group's sync: its changes are in the log now, its answer
                // comes with the sync.
                world.stats.commit_waits += 1;
                judge_before_commit(world, s, &req);
                commit_written(world, s);
            }
            // A scan waits only as a locking read (a plain one under
            // SERIALIZABLE is one).
            let scan = match &req {
                Request::Locking { read, .. } | Request::SemiConsistent { read } => {
                    matches!(read.as_ref(), Request::Scan { .. })
                }
                Request::Scan { .. } => true,
                _ => false,
            };
            if scan {
                s.scan_states.push(Rc::clone(&world.committed));
            }
            s.waiting = true;
            world.statement_event(s.id, &req, Stepped::Waiting);
            blocked_event(world, s);
            s.last = Some(req);
            None
        }
        Ok(Step::Done(resp)) => {
            s.waiting = false;
            s.kept_seq = None;
            s.in_flight.clear();
            // What the insert (if it is one) put in before its last wait
            // was judged then; `done` judges the rest, then it starts over.
            if let (
                Request::Insert { table, .. }
                | Request::Update { table, .. }
                | Request::Delete { table, .. },
                Some(txn),
            ) = (&req, s.txn.as_mut())
            {
                // It ran, so it took its IX lock, which its transaction
                // keeps to its end (a wait that timed out may have left
                // it none).
                txn.touched.insert(table.clone());
            }
            world.statement_event(s.id, &req, Stepped::Done(&resp));
            world.observe_log();
            done(world, s, &req, resp);
            s.insert_judged = 0;
            s.scan_states.clear();
            // The SET of an autocommit transaction's isolation level runs
            // before its one statement and commits nothing.
            let setting = matches!(req, Request::SetIsolation(_));
            if !setting && s.txn.as_ref().is_some_and(|t| t.autocommit) {
                autocommitted(world, s);
            }
            count_changes(world, s);
            None
        }
        Err(e) => {
            s.waiting = false;
            s.kept_seq = None;
            s.in_flight.clear();
            s.insert_judged = 0;
            s.scan_states.clear();
            world.statement_event(s.id, &req, Stepped::Failed(&e));
            let crashed = failed(world, s, &req, e);
            count_changes(world, s);
            crashed
        }
    }
}

/// The rows a change `req` writes, as the model would write them from the
/// committed state and the transaction's own writes `own` whether or not
/// it goes on to succeed: an UPDATE's row with its SET applied (and its
/// old key gone first, if the SET names a primary key column), a DELETE's
/// key gone, an INSERT's row (in a table with a primary key). Empty for
/// any other request.
pub(super) fn statement_writes(world: &World, own: &[Write], req: &Request) -> Vec<Write> {
    let (table, key) = match req {
        Request::Update { table, key, .. } | Request::Delete { table, key } => (table, key),
        Request::Insert { table, row } => {
            return in_flight_row(world, table, row, None).into_iter().collect();
        }
        _ => return Vec::new(),
    };
    let Some(t) = world.schema.table(table) else {
        return Vec::new();
    };
    let old = t.key_from_values(None, key);
    let gone = Write {
        table: table.to_string(),
        key: old.clone(),
        row: None,
    };
    let Request::Update { set, .. } = req else {
        return vec![gone];
    };
    let Some(mut row) = crate::judge::reads::visible(&world.committed, own, table, &old) else {
        return Vec::new();
    };
    // A SET of a primary key column moves the row even to the key it has
    // (the engine deletes it and inserts it again, its entries with it).
    let mut moves = false;
    for (name, v) in set {
        if let Some(c) = t.columns.iter().position(|n| n == name) {
            row[c] = crate::judge::reads::to_model(v);
            moves |= t.primary_key.contains(&c);
        }
    }
    let new_key = t.key_of(&row);
    let mut out = Vec::new();
    if moves || new_key != old {
        out.push(gone);
    }
    out.push(Write {
        table: table.to_string(),
        key: new_key,
        row: Some(row),
    });
    out
}

/// What a waiting UPDATE `req` may have done where a READ UNCOMMITTED
/// reader sees it, if it moves its row ([`moves_row`]): the old key
/// deleted and the row at its new key (the model's writes where it says
/// the update would succeed now, else the row as the change makes it; see
/// `Sess::in_flight`). Empty for any other statement, and for an update
/// that leaves the key alone ([`kept_change`]).
fn moving_update(world: &World, own: &[Write], req: &Request) -> Vec<Write> {
    let Request::Update { table, key, set } = req else {
        return Vec::new();
    };
    let Some(t) = world.schema.table(table) else {
        return Vec::new();
    };
    if !moves_row(world, own, table, key, set) {
        return Vec::new();
    }
    let old = t.key_from_values(None, key);
    let mut out = vec![Write {
        table: table.to_string(),
        key: old.clone(),
        row: None,
    }];
    let expected =
        crate::judge::reads::expected(&world.schema, &world.committed, own, req, world.row_seq);
    match expected {
        Some((Ok(_), writes)) => out.extend(
            writes
                .into_iter()
                .filter(|w| w.table == *table && w.key != old && w.row.is_some()),
        ),
        // One the model says fails (a constraint checked after the
        // change, a duplicate) may still have put its new row in while
        // it waits: the row as the change makes it.
        _ => {
            if let Some(mut row) = crate::judge::reads::visible(&world.committed, own, table, &old)
            {
                for (name, v) in set {
                    if let Some(c) = t.columns.iter().position(|n| n == name) {
                        row[c] = crate::judge::reads::to_model(v);
                    }
                }
                out.push(Write {
                    table: table.to_string(),
                    key: t.key_of(&row),
                    row: Some(row),
                });
            }
        }
    }
    out
}

/// What a waiting UPDATE in place or DELETE of one row `req` has done
/// where a READ UNCOMMITTED reader sees it, when its transaction `trx`
/// waits in one of the table's secondary indexes: its clustered change,
/// kept through the wait (`models::lock::UpdateShape`; the row as the
/// model would change it, or deleted). Empty for any other wait and
/// statement.
fn kept_change(world: &World, own: &[Write], req: &Request, trx: u64) -> Vec<Write> {
    let (Request::Update { table, key, .. } | Request::Delete { table, key }) = req else {
        return Vec::new();
    };
    let Some(engine_table) = world.engine.as_ref().and_then(|e| e.table(table).ok()) else {
        return Vec::new();
    };
    let in_secondary = matches!(
        world.locks.waiting_target(trx),
        Some(models::lock::OTarget::Record(t, i, _))
            if t == engine_table.id && i != engine_table.clustered.id
    );
    let Some(t) = world.schema.table(table).filter(|_| in_secondary) else {
        return Vec::new();
    };
    let at = t.key_from_values(None, key);
    let Some(mut row) = crate::judge::reads::visible(&world.committed, own, table, &at) else {
        return Vec::new();
    };
    let Request::Update { set, .. } = req else {
        return vec![Write {
            table: table.to_string(),
            key: at,
            row: None,
        }];
    };
    for (name, v) in set {
        if let Some(c) = t.columns.iter().position(|n| n == name) {
            row[c] = crate::judge::reads::to_model(v);
        }
    }
    vec![Write {
        table: table.to_string(),
        key: at,
        row: Some(row),
    }]
}

/// The model's row for an insert of `values` into `table` (`seq`: its
/// number, for a table without a primary key).
fn in_flight_row(
    world: &World,
    table: &str,
    values: &[engine::Value],
    seq: Option<u64>,
) -> Option<Write> {
    let t = world.schema.table(table)?;
    let mut row: models::Row = values.iter().map(crate::judge::reads::to_model).collect();
    let key = if t.hidden {
        let seq = seq?;
        row.push(models::ModelValue::Int(seq.into()));
        vec![models::ModelValue::Int(seq.into())]
    } else {
        t.key_of_values(values)
    };
    Some(Write {
        table: table.to_string(),
        key,
        row: Some(row),
    })
}

/// A lock wait's blockers, by the engine's wait graph, as the sessions
/// they belong to: the timeline draws an arrow from each to the waiter.
fn blocked_event(world: &mut World, s: &Sess) {
    let Some(t) = s.trx else { return };
    let Some(e) = world.engine.as_ref() else {
        return;
    };
    let mut by: Vec<SessionId> = e
        .locks()
        .wait_edges()
        .iter()
        .filter(|w| w.requesting_trx == t)
        .filter_map(|w| world.trx_sessions.get(&w.blocking_trx).copied())
        .filter(|&b| b != s.id)
        .collect();
    by.sort_unstable();
    by.dedup();
    if !by.is_empty() {
        world.event("blocked", json!({"session": s.id, "by": by}));
    }
}

/// An autocommit statement done, its commit not acknowledged yet (waiting
/// for a group's sync or for the binary log's mutex): judged against the
/// state it ran in and by its step's lock events; the answer it expects is
/// kept for when the acknowledgement comes.
fn judge_before_commit(world: &mut World, s: &mut Sess, req: &Request) {
    let Some(txn) = s.txn.as_ref() else { return };
    if let Some((want, writes)) = expected(world, &txn.writes, req) {
        if let (Request::Insert { table, .. }, Ok(_), Some(w), Some(trx)) =
            (req, &want, writes.first(), s.trx)
        {
            let from = s.insert_judged;
            judge_insert_gap(world, trx, table, w, &txn.writes, from..usize::MAX);
        }
        let txn = s.txn.as_mut().expect("checked");
        if want.is_ok() {
            txn.writes.extend(writes);
        }
        txn.answer = Some(want);
    }
}

/// A commit reached the log: it joins the committed model and the commit
/// history, in log order. Returns its index in the history if its
/// acknowledgement will promise it durable: it has writes in the model, or
/// it waited for a group commit's sync (which only a commit with redo
/// does, even one whose writes a ROLLBACK TO SAVEPOINT undid).
pub(super) fn commit_written(world: &mut World, s: &mut Sess) -> Option<usize> {
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
        acked_us: None,
        promises: false,
        claimed_lsn: lsn,
    });
    txn.commit_written = Some(i);
    // A read-only commit's acknowledgement says nothing of the log (the
    // LSN above is an earlier commit's).
    (!read_only).then_some(i)
}

/// An autocommit statement finished: its transaction committed with it,
/// and the answer acknowledges the commit.
fn autocommitted(world: &mut World, s: &mut Sess) {
    if let Some(i) = commit_written(world, s) {
        let now = world.clock_now();
        world.durability.acknowledged(i, now);
    }
    world.stats.commits += 1;
    s.txn = None;
}

pub(super) fn done(world: &mut World, s: &mut Sess, req: &Request, resp: Response) {
    let filtering = matches!(
        req,
        Request::Locking { .. } | Request::SemiConsistent { .. }
    ) && s.txn.as_ref().is_some_and(|t| t.filter.is_some());
    let answer = filtering.then(|| resp.clone());
    judged(world, s, req, resp);
    if let Some(resp) = answer {
        super::filter::answered(world, s, &resp);
    }
}

/// [`done`] but for a filtered change's next steps.
fn judged(world: &mut World, s: &mut Sess, req: &Request, resp: Response) {
    let scan_states = s.scan_states.clone();
    let Some(txn) = s.txn.as_mut() else { return };
    if let Some(want) = txn.answer.take() {
        // Judged against the state its commit was written in.
        if want != Ok(resp.clone()) {
            world.violations.push(format!(
                "{}: the engine answered {resp:?} after its commit waited, the model expected {want:?}",
                describe(req)
            ));
        }
        return;
    }
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
                txn.locked_ranges.retain(|r| r.writes_mark() <= mark);
                let pos = txn
                    .savepoints
                    .iter()
                    .position(|(n, _)| n == name)
                    .expect("found");
                txn.savepoints.truncate(pos + 1);
            }
        }
        Request::ReleaseSavepoint(name) => {
            // The savepoint and every later one are forgotten; nothing is
            // undone (trx_release_savepoint_for_mysql).
            if let Some(pos) = txn.savepoints.iter().position(|(n, _)| n == name) {
                txn.savepoints.truncate(pos);
            }
        }
        Request::Begin | Request::Savepoint(_) => {}
        Request::Get { .. } | Request::Scan { .. } => {
            use engine::Isolation::*;
            if hidden_key(world, req) {
                world.stats.keyless_reads += 1;
            }
            if txn.isolation == RepeatableRead && txn.snapshot.is_none() {
                txn.snapshot = Some(Rc::clone(&world.committed));
                txn.snapshot_epoch = world.index_epoch;
            }
            // Then judged for its rows as well: an old view that read a
            // new index shows what it missed.
            if let Some(v) = super::ddl::judge_online_read(world, Some(txn), req, None) {
                world.violations.push(format!("{}: {v}", describe(req)));
            }
            if txn.isolation == ReadUncommitted {
                // Judged once the step is over, against every open
                // transaction's writes (see World::judge_uncommitted_reads).
                world.uncommitted_reads.push((req.clone(), resp));
                return;
            }
            let txn_ref: &Txn = txn;
            // A view older than a copying ALTER of the table finds it
            // empty: every row the ALTER copied is its transaction's.
            let emptied;
            let base = match (&txn_ref.snapshot, txn_ref.isolation) {
                (Some(snapshot), RepeatableRead) => match req {
                    Request::Get { table: t, .. } | Request::Scan { table: t, .. }
                        if world
                            .rebuilt
                            .get(t)
                            .is_some_and(|&e| e > txn_ref.snapshot_epoch) =>
                    {
                        world.stats.rebuilt_old_view_reads += 1;
                        let mut db = (**snapshot).clone();
                        db.tables.insert(t.clone(), Default::default());
                        emptied = Rc::new(db);
                        &emptied
                    }
                    _ => snapshot,
                },
                _ => &world.committed,
            };
            if let Some(want) = read_expected(&world.schema, base, &txn_ref.writes, req) {
                let hidden = hidden_key(world, req);
                // Under SERIALIZABLE the read locks, and one that waited
                // read on from where it stood (see the locking branch).
                let kept_place = txn_ref.isolation == Serializable
                    && kept_place(world, &scan_states, &txn_ref.writes, req, &resp, hidden);
                if kept_place && !rows_match(&resp, &want, hidden) {
                    world.stats.scans_kept_place += 1;
                } else if !rows_match(&resp, &want, hidden) {
                    let got = model_rows(&resp);
                    world.violations.push(format!(
                        "{}: a {:?} read returned {got:?}, its snapshot and the transaction's own writes say {want:?}",
                        describe(req),
                        txn_ref.isolation
                    ));
                }
            }
        }
        Request::Locking { read, .. } | Request::SemiConsistent { read } => {
            // A semi-consistent read stops after the first row it reads
            // unlocked (its last), a row-by-row read before a lock it
            // would wait for (filter): what it read is the range up to
            // its last row.
            let stopped = match (req, read.as_ref(), &resp) {
                (Request::SemiConsistent { .. }, Request::Scan { .. }, Response::Rows(rows)) => {
                    let semi = world.engine().semi_consistent_rows(s.id);
                    match (semi.last(), rows.last()) {
                        (Some(&i), Some(last)) if i + 1 == rows.len() => {
                            Some(super::filter::read_up_to(read, last))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            let stopped = match (stopped, read.as_ref(), &resp) {
                (None, Request::Scan { .. }, Response::Rows(rows))
                    if world.engine().read_goes_on(s.id) =>
                {
                    world.stats.rows_handed_before_waits += rows.len() as u64;
                    rows.last()
                        .map(|last| super::filter::read_up_to(read, last))
                }
                (stopped, ..) => stopped,
            };
            let read = stopped.as_ref().unwrap_or(read.as_ref());
            if let (Request::Get { table, key }, Response::Row(r)) = (read, &resp) {
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
            let hidden = hidden_key(world, read);
            world.stats.keyless_reads += u64::from(hidden);
            // The rows it returned, in the model's terms: those the model
            // expected once they match (only they carry a hidden key).
            let mut seen = None;
            if let Some(want) =
                read_expected(&world.schema, &world.committed, &txn_ref.writes, read)
            {
                if rows_match(&resp, &want, hidden) {
                    seen = Some(want);
                } else if kept_place(world, &scan_states, &txn_ref.writes, read, &resp, hidden) {
                    // It read on from where it waited; the range it has
                    // locked now holds the rows of the state at its end.
                    world.stats.scans_kept_place += 1;
                    seen = Some(want);
                } else {
                    let got = model_rows(&resp);
                    world.violations.push(format!(
                        "{}: a locking read returned {got:?}, the committed state and the transaction's own writes say {want:?}",
                        describe(req)
                    ));
                }
            }
            let seen = seen.or_else(|| (!hidden).then(|| model_rows(&resp)));
            // Gaps are locked under REPEATABLE READ and SERIALIZABLE: what
            // an earlier locking read locked cannot have changed under it.
            use engine::Isolation::*;
            if let (RepeatableRead | Serializable, Some(seen)) = (txn.isolation, seen) {
                if let Some(range) = locked_range(&world.schema, read, seen, txn.writes.len()) {
                    for earlier in &txn.locked_ranges {
                        if let Some(v) = phantom(&world.schema, earlier, &range, &txn.writes) {
                            world.violations.push(format!("{}: {v}", describe(req)));
                            break;
                        }
                    }
                    txn.locked_ranges.push(range);
                }
            }
        }
        row_req => {
            let txn_ref: &Txn = txn;
            if let Some((want, writes)) = expected(world, &txn_ref.writes, row_req) {
                match want {
                    Ok(w) if w == resp => {
                        if let (Request::Insert { table, .. }, Some(w), Some(trx)) =
                            (row_req, writes.first(), s.trx)
                        {
                            let from = s.insert_judged;
                            judge_insert_gap(
                                world,
                                trx,
                                table,
                                w,
                                &txn_ref.writes,
                                from..usize::MAX,
                            );
                        }
                        s.txn.as_mut().expect("open").writes.extend(writes);
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

/// Whether a scan that waited returned what a cursor keeping its place
/// through each wait could have: read in the model's committed states at
/// each wait and at the end (see `judge::reads::resumed_scan_matches`).
fn kept_place(
    world: &World,
    scan_states: &[Rc<models::Db>],
    writes: &[Write],
    read: &Request,
    resp: &Response,
    hidden: bool,
) -> bool {
    if scan_states.is_empty() {
        return false;
    }
    let states: Vec<&models::Db> = scan_states
        .iter()
        .map(|x| x.as_ref())
        .chain(std::iter::once(world.committed.as_ref()))
        .collect();
    resumed_scan_matches(&world.schema, &states, writes, read, resp, hidden)
}

/// Whether a read is of a table without a primary key, whose rows the
/// engine returns without the model's hidden key.
fn hidden_key(world: &World, read: &Request) -> bool {
    let table = match read {
        Request::Get { table, .. } | Request::Scan { table, .. } => table,
        _ => return false,
    };
    world.schema.table(table).is_some_and(|t| t.hidden)
}

/// Judges the gap an insert that went ahead checked (see
/// [`crate::judge::locks::judge_insert`]), from the step's lock events.
pub(super) fn judge_insert_gap(
    world: &mut World,
    trx: u64,
    table: &str,
    write: &Write,
    own: &[Write],
    judged: std::ops::Range<usize>,
) {
    let Some(row) = write.row.as_ref() else {
        return;
    };
    let Some(engine) = world.engine.as_ref() else {
        return;
    };
    if world.storage.crashed() {
        // The step's lock events died with the disk (see `judge_locks`);
        // an engine that swallows the failed fsyncs after a crash (the
        // `ignore-fsync-failure` canary) may still answer, but what it
        // locked is judged no further.
        return;
    }
    if let Some(v) = crate::judge::locks::judge_insert(
        engine,
        &world.schema,
        &world.locks,
        &world.step_events,
        trx,
        table,
        row,
        &world.committed,
        &[own],
        world.row_seq,
        judged,
    ) {
        world.violations.push(format!("lock oracle: {v}"));
    }
}

pub(super) fn failed(world: &mut World, s: &mut Sess, req: &Request, e: Error) -> Option<bool> {
    if world.damage_caught(&e) {
        return None;
    }
    // Files are extended before their pages are used, and recovery grows
    // back what a crash lost: a page write that meets a full disk means a
    // page past the end of its file (the engine stops, but it should never
    // have got there).
    if let Error::Io {
        op: "write",
        source,
        ..
    } = &e
    {
        if source.kind() == std::io::ErrorKind::StorageFull {
            world.violations.push(format!(
                "{}: a page write grew its file and met the full disk: {e}",
                describe(req)
            ));
        }
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
            } else if s
                .txn
                .as_ref()
                .is_some_and(|t| t.autocommit && t.commit_written.is_none())
            {
                // So may an autocommit statement's, with the changes the
                // model expects of it (one whose commit was written, its
                // sync failing now, is in the history already).
                let txn = s.txn.take().expect("checked");
                let writes = if txn.answer.is_some() {
                    // Judged when it finished, its commit queued for the
                    // binary log's mutex: its writes are the statement's.
                    Some(txn.writes)
                } else {
                    match expected(world, &txn.writes, req) {
                        Some((Ok(_), writes)) => Some(writes),
                        _ => None,
                    }
                };
                if let Some(writes) = writes.filter(|w| !w.is_empty()) {
                    world.history.commit(TxnEffects { writes });
                    world.durability.cut_off();
                }
            }
            return Some(crashed);
        }
        world
            .violations
            .push(format!("{}: unexpected engine error: {e}", describe(req)));
        return None;
    }
    // A failed step ends a filtered change: MySQL's statement stops at
    // its first error.
    if let Some(t) = s.txn.as_mut() {
        t.filter = None;
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
        Error::NoSuchIndex { .. } | Error::TableDefChanged => {
            let Request::Scan {
                table,
                index: Some(index),
                ..
            } = req
            else {
                world
                    .violations
                    .push(format!("{}: unexpected error: {e}", describe(req)));
                return None;
            };
            let known = world
                .schema
                .table(table)
                .is_some_and(|t| t.indexes.iter().any(|i| i.name == *index));
            if world.online.contains_key(&(table.clone(), index.clone())) {
                match super::ddl::judge_online_read(world, s.txn.as_ref(), req, Some(&e)) {
                    Some(v) => world.violations.push(format!("{}: {v}", describe(req))),
                    None if matches!(e, Error::TableDefChanged) => {
                        world.stats.old_views_refused += 1
                    }
                    None => {}
                }
            } else if known || matches!(e, Error::TableDefChanged) {
                // An index the table was created with, or a plan's
                // unknown one (a shrunk plan may keep the scans of an
                // index whose CREATE it lost: 1176 is right for those).
                world
                    .violations
                    .push(format!("{}: unexpected error: {e}", describe(req)));
            }
        }
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
        Error::DuplicateKey { .. } | Error::ForeignKey { .. } => {
            let code = e.mysql_code().expect("a duplicate key or a constraint");
            if let Some(txn) = &s.txn {
                if let Some((want, _)) = expected(world, &txn.writes, req) {
                    if want != Err(code) {
                        let what = if code == 1062 {
                            "a duplicate key".to_string()
                        } else {
                            format!("a failed foreign key check ({code})")
                        };
                        world.violations.push(format!(
                            "{}: the engine reported {what}, the model expected {want:?}",
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
    // In autocommit mode a failed statement's transaction is rolled back
    // with it.
    if s.txn.as_ref().is_some_and(|t| t.autocommit) {
        world.stats.rollbacks += 1;
        s.txn = None;
    }
    None
}
