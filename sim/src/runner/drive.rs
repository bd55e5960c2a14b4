//! Running a built plan: the scheduler's loop, turn by turn, the
//! transactions it starts, the judges that look across sessions after each
//! step, and the run's end (its last crash and recovery, and the outcome).

use super::*;

/// Runs a built plan's transactions, turn by turn (a recorded schedule's
/// turns first, then drawn ones, or the earliest event when time drives
/// the scheduler), recovering each crash, until every transaction has
/// ended, the engine stopped for good or the step budget ran out (a
/// liveness violation), and counts the workload's time, log syncs and
/// compressions.
pub(super) fn drive(plan: &Plan, run: &mut Run) {
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
pub(super) fn end(plan: &Plan, run: Run) -> Outcome {
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

pub(super) fn finish(plan: &Plan, mut world: World) -> Outcome {
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
