//! DDL while the workload runs: CREATE TABLE, DROP TABLE and TRUNCATE
//! TABLE of the scratch tables, CREATE INDEX and DROP INDEX on a drawn
//! table, and the judgment of what a crash left of them.
//!
//! The model of a scratch table is whether it exists. An acknowledged
//! CREATE TABLE or DROP TABLE is durable when it returns (the engine syncs
//! the dictionary's commit, as `row_create_table_for_mysql` does), so after
//! any crash a table exists exactly when its last acknowledged DDL says
//! so; one whose create or drop the crash interrupted may go either way,
//! while a TRUNCATE, acknowledged or interrupted, leaves an existing
//! table existing (in its old file or its new one). The
//! judgment reads the engine's dictionary and, apart from it, the disk's
//! own namespace: a table must have its `.ibd` file and a file must have
//! its table, so a lost file create (a directory never synced) and an
//! orphan left behind are both caught whatever the engine says of itself.
//!
//! Every DDL but CREATE TABLE runs in a session of its own, under a table
//! lock it takes first, as InnoDB does (S for CREATE INDEX, X for the
//! rest): it must wait exactly when another transaction holds or waits
//! for a conflicting lock on the table, by the lock oracle's record of
//! the locks each open transaction holds, and it then blocks its session
//! until the lock is granted (it runs), the wait times out (1205) or a
//! deadlock search takes it (1213). Reads and writes of other sessions go
//! on meanwhile, those that need the table queueing behind it.

use super::*;
use crate::plan::SCRATCH_TABLES;
use engine::DdlStep;
use models::lock::TMode;

/// What the model knows of a scratch table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Presence {
    /// Its last DDL was an acknowledged create.
    Present,
    /// Never created, or its last DDL was an acknowledged drop.
    Absent,
    /// A crash or an engine-stopping error interrupted its last DDL.
    InDoubt,
}

/// What the model knows of an index the workload creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IndexState {
    /// Its last DDL was an acknowledged CREATE INDEX, the `since`th
    /// index change of the run ([`World::index_epoch`]): a REPEATABLE
    /// READ view taken before it must get 1412 reading through it.
    Present { since: u64 },
    /// Never created, or its last DDL was an acknowledged DROP INDEX.
    Absent,
    /// A crash or an engine-stopping error interrupted its last DDL.
    InDoubt,
}

/// Every scratch table, absent.
pub(super) fn initial() -> BTreeMap<String, Presence> {
    SCRATCH_TABLES
        .iter()
        .map(|t| (t.to_string(), Presence::Absent))
        .collect()
}

/// The table lock a planned DDL statement takes before it changes its
/// table, by InnoDB's rule as the engine follows it (S to build an index,
/// X to drop one, to truncate or to drop a table), and the table; `None`
/// for CREATE TABLE, which has no table to lock yet.
fn lock_of(st: &PlannedStmt) -> Option<(&str, TMode)> {
    match st {
        PlannedStmt::CreateIndex { table, .. } => Some((table, TMode::S)),
        PlannedStmt::DropIndex { table, .. }
        | PlannedStmt::TruncateTable { table }
        | PlannedStmt::DropTable { table }
        | PlannedStmt::RebuildTable { table } => Some((table, TMode::X)),
        _ => None,
    }
}

/// The statement's name, for reports.
fn verb(st: &PlannedStmt) -> &'static str {
    match st {
        PlannedStmt::CreateTable { .. } => "CREATE TABLE",
        PlannedStmt::DropTable { .. } => "DROP TABLE",
        PlannedStmt::TruncateTable { .. } => "TRUNCATE TABLE",
        PlannedStmt::CreateIndex { .. } => "CREATE INDEX",
        PlannedStmt::DropIndex { .. } => "DROP INDEX",
        PlannedStmt::RebuildTable { .. } => "ALTER TABLE",
        _ => unreachable!("a DDL statement"),
    }
}

/// What the model says of a DDL statement's start: whether the engine
/// checks it and refuses it before it takes any lock (an index that
/// exists, or is missing; a table that is missing: 1061, 1091, 1146).
fn refused_before_lock(world: &World, st: &PlannedStmt) -> bool {
    let index_state = |table: &str, name: &str| {
        world
            .online
            .get(&(table.to_string(), name.to_string()))
            .copied()
            .unwrap_or(IndexState::Absent)
    };
    match st {
        PlannedStmt::CreateIndex { table, index } => {
            matches!(index_state(table, &index.name), IndexState::Present { .. })
        }
        PlannedStmt::DropIndex { table, index } => index_state(table, index) == IndexState::Absent,
        PlannedStmt::TruncateTable { table } | PlannedStmt::DropTable { table } => {
            world.scratch.get(table) == Some(&Presence::Absent)
        }
        _ => false,
    }
}

/// Starts a DDL statement, planned transaction `txn`'s only statement, in
/// idle session `i`, and judges what it does. A statement that must wait
/// for its table lock (another transaction holds or waits for a lock on
/// the table that conflicts) is left waiting in its session, to be
/// resumed like any waiting statement ([`resume_ddl`]); one that need not
/// must run at once. Which it is comes from the lock oracle's table of
/// the locks each open transaction holds, the same table the oracle
/// judges every grant against; and the runner's own record of the open
/// transactions that changed the table must agree with it (each holds an
/// IX lock there), so the engine cannot make a DDL go at once by leaving
/// a writer's lock out of its events. Returns what [`step_session`]
/// returns: `Some(true)` if the disk crashed, `Some(false)` if the engine
/// stopped on an error of its own.
pub(super) fn start_ddl(
    world: &mut World,
    txn: usize,
    st: &PlannedStmt,
    sessions: &mut [Sess],
    i: usize,
) -> Option<bool> {
    world.issued(txn, 0);
    world.stats.statements += 1;
    // Its transaction, if it begins one, is learnt from its call.
    sessions[i].trx = None;
    let Some((table, mode)) = lock_of(st) else {
        let PlannedStmt::CreateTable { table, row_format } = st else {
            unreachable!("only CREATE TABLE takes no table lock");
        };
        let fmt = format_of(row_format).unwrap_or(RowFormat::Compact);
        let r = world
            .engine()
            .create_table(crate::tables::scratch(table, fmt));
        return finish(world, txn, st, &mut sessions[i], r);
    };
    let mut must_wait = Vec::new();
    let table_id = world
        .engine
        .as_ref()
        .and_then(|e| e.table(table).ok().map(|t| t.id));
    if let (Some(id), false) = (table_id, refused_before_lock(world, st)) {
        must_wait = world.locks.table_conflicts(id, mode);
        for (j, other) in sessions.iter().enumerate() {
            let Some((t, open)) = other.trx.zip(other.txn.as_ref()) else {
                continue;
            };
            // A transaction that holds no lock has ended (a deadlock victim
            // rolled back during another session's statement), though its
            // session may not know it yet.
            let changed = open.commit_written.is_none()
                && open.touched.contains(table)
                && world.locks.holds_any(t);
            if j != i && changed && !world.locks.holds_table(t, id, &[TMode::IX, TMode::X]) {
                world.violations.push(format!(
                    "DDL: {} on {table}: session {}'s open transaction (trx {t}) changed the table, yet holds no IX lock on it",
                    verb(st),
                    other.id
                ));
            }
        }
    }
    attempt(world, txn, st, &mut sessions[i], must_wait)
}

/// Resumes session `s`, which waits for its DDL statement's table lock:
/// once the lock is granted the DDL runs (and must not wait again); a
/// wait that ends in 1205 or 1213 fails the statement, which changed
/// nothing. Returns what [`step_session`] returns.
pub(super) fn resume_ddl(world: &mut World, s: &mut Sess) -> Option<bool> {
    let (txn, st) = match s.txn.as_ref().map(|t| (t.plan_index, t.stmts.first())) {
        Some((txn, Some(Stmt::Ddl(st)))) => (txn, st.clone()),
        _ => unreachable!("resume_ddl resumes a waiting DDL statement"),
    };
    world.call_start_us = world.clock_now();
    let r = world.engine().resume(s.id);
    world.judge_locks();
    match r {
        Ok(Step::Waiting) => None,
        // Granted: the statement runs under its lock.
        Ok(Step::Done(_)) => attempt(world, txn, &st, s, Vec::new()),
        Err(e) => lock_failed(world, txn, &st, s, e),
    }
}

/// A DDL statement's table lock request failed with `e`: 1205 at the lock
/// wait timeout, or 1213 as a deadlock's victim (the lock oracle judges
/// when a wait may time out and which transaction a deadlock may take).
/// The statement changed nothing, and its transaction is gone.
fn lock_failed(
    world: &mut World,
    txn: usize,
    st: &PlannedStmt,
    s: &mut Sess,
    e: Error,
) -> Option<bool> {
    s.waiting = false;
    s.txn = None;
    s.trx = None;
    let crashed = world.storage.crashed();
    if crashed || e.stops_engine() {
        return Some(crashed);
    }
    world.event(
        "ddl",
        json!({"statement": verb(st), "answer": format!("error {}", e.mysql_code().unwrap_or(0))}),
    );
    match e {
        Error::LockWaitTimeout => world.stats.ddl_lock_failures += 1,
        Error::Deadlock => {
            world.stats.ddl_lock_failures += 1;
            world.stats.deadlocks += 1;
        }
        e => world.violations.push(format!(
            "DDL: {} waiting for its table lock: an unexpected error: {e}",
            verb(st)
        )),
    }
    world.issued(txn, 1);
    None
}

/// One call of a DDL statement in session `s`; `must_wait`: the
/// transactions its table lock must wait for, by the model (none once the
/// lock is held).
fn attempt(
    world: &mut World,
    txn: usize,
    st: &PlannedStmt,
    s: &mut Sess,
    must_wait: Vec<u64>,
) -> Option<bool> {
    world.call_start_us = world.clock_now();
    let r = call(world.engine(), s.id, st);
    world.judge_locks();
    if let Some(t) = world.engine.as_ref().and_then(|e| e.trx_id(s.id)) {
        s.trx = Some(t);
        world.trx_sessions.insert(t, s.id);
    }
    match r {
        Ok(DdlStep::Waiting) => {
            if must_wait.is_empty() {
                world.violations.push(format!(
                    "DDL: {} waits for its table lock, yet no other transaction holds a lock on the table that conflicts",
                    verb(st)
                ));
            }
            if !s.waiting {
                world.stats.ddl_lock_waits += 1;
            }
            world.event("ddl", json!({"statement": verb(st), "answer": "waiting"}));
            s.txn = Some(Txn::ddl(txn, st.clone(), s.isolation));
            s.waiting = true;
            None
        }
        Ok(DdlStep::Done(())) => {
            if !must_wait.is_empty() {
                let mode = lock_of(st).map_or(TMode::X, |(_, m)| m);
                world.violations.push(format!(
                    "DDL: {} ran at once, yet trx {must_wait:?} held a lock on the table that conflicts with the {mode:?} table lock it takes (it must wait)",
                    verb(st),
                ));
            }
            finish(world, txn, st, s, Ok(()))
        }
        // Its lock request closed a wait-for cycle and was the lighter
        // side (a new transaction that holds nothing cannot be on a cycle
        // at its first request, but the lock oracle is the judge).
        Err(Error::Deadlock) => lock_failed(world, txn, st, s, Error::Deadlock),
        Err(e) => finish(world, txn, st, s, Err(e)),
    }
}

/// The engine call of a DDL statement that takes a table lock.
fn call(e: &mut Engine, s: engine::SessionId, st: &PlannedStmt) -> engine::Result<DdlStep<()>> {
    let unit = |step: DdlStep<_>| match step {
        DdlStep::Done(_) => DdlStep::Done(()),
        DdlStep::Waiting => DdlStep::Waiting,
    };
    match st {
        PlannedStmt::CreateIndex { table, index } => {
            let def = engine::IndexDef {
                name: index.name.clone(),
                columns: index.columns.clone(),
                unique: index.unique,
                prefixes: Vec::new(),
            };
            e.create_indexes(s, table, &[def], Vec::new()).map(unit)
        }
        PlannedStmt::DropIndex { table, index } => e.drop_index(s, table, index, Vec::new()),
        PlannedStmt::TruncateTable { table } => e.truncate_table(s, table),
        PlannedStmt::DropTable { table } => e.drop_table(s, table),
        // The same definition: MySQL 5.1 copies the table for ALTER TABLE
        // ... ENGINE=InnoDB as for any change it cannot make in place.
        PlannedStmt::RebuildTable { table } => {
            let def = e.table(table)?.def.clone();
            e.rebuild_table(s, table, def).map(|step| match step {
                DdlStep::Done(_) => DdlStep::Done(()),
                DdlStep::Waiting => DdlStep::Waiting,
            })
        }
        _ => unreachable!("a DDL statement that takes a table lock"),
    }
}

/// Judges a DDL statement's answer `r`, then ends the transaction that
/// held its table lock (committed, as MySQL ends every DDL): the session
/// is idle again.
fn finish(
    world: &mut World,
    txn: usize,
    st: &PlannedStmt,
    s: &mut Sess,
    r: engine::Result<()>,
) -> Option<bool> {
    match st {
        PlannedStmt::CreateIndex { table, index } => {
            judge_index_ddl(world, table, &index.name, true, r)
        }
        PlannedStmt::DropIndex { table, index } => judge_index_ddl(world, table, index, false, r),
        PlannedStmt::RebuildTable { table } => judge_rebuild(world, table, r),
        _ => judge_table_ddl(world, st, r),
    }
    s.txn = None;
    s.waiting = false;
    let trx = s.trx.take();
    if world.storage.crashed() {
        return Some(true);
    }
    if world.engine.as_ref().is_some_and(|e| e.halted().is_some()) {
        return Some(false);
    }
    if world.engine().in_transaction(s.id) {
        world.call_start_us = world.clock_now();
        let r = world.engine().execute(s.id, Request::Commit);
        world.judge_locks();
        match r {
            Ok(Step::Done(_)) => {
                if let Some(t) = trx {
                    world.locks.committed(t);
                }
            }
            Ok(Step::Waiting) => world.violations.push(format!(
                "DDL: the commit after {} waits, though its transaction changed nothing",
                verb(st)
            )),
            Err(e) => {
                let crashed = world.storage.crashed();
                if crashed || e.stops_engine() {
                    return Some(crashed);
                }
                world
                    .violations
                    .push(format!("DDL: the commit after {}: {e}", verb(st)));
            }
        }
    }
    // The statement's end: anchors there strike after it.
    world.issued(txn, 1);
    None
}

/// A DDL statement's answer for the trace: `ok` or its error.
fn answer_of(r: &engine::Result<()>) -> String {
    match r {
        Ok(()) => "ok".to_string(),
        Err(e) => match e.mysql_code() {
            Some(code) => format!("error {code}"),
            None => format!("error ({e})"),
        },
    }
}

/// Judges the answer of a copying ALTER TABLE of `table`: it succeeds (a
/// full disk undoes the copy); once it has, every REPEATABLE READ view
/// older than it finds the table empty, and its indexes, new ones built
/// with the table, are as old as the table to every view (InnoDB sets an
/// index's `trx_id` for fast index creation only, so none refuses a view
/// with 1412). What the rows are is the durability and read judges'
/// business: the same as before.
fn judge_rebuild(world: &mut World, table: &str, r: engine::Result<()>) {
    let answer = answer_of(&r);
    world.event(
        "ddl",
        json!({"statement": "ALTER TABLE", "table": table, "answer": answer}),
    );
    let crashed = world.storage.crashed();
    match r {
        Ok(()) => {
            world.stats.tables_rebuilt += 1;
            world.index_epoch += 1;
            world.rebuilt.insert(table.to_string(), world.index_epoch);
            for ((t, _), state) in world.online.iter_mut() {
                if t == table && matches!(state, IndexState::Present { .. }) {
                    *state = IndexState::Present { since: 0 };
                }
            }
        }
        // A crash ends every view; the table is the old one or the new,
        // with the same rows.
        Err(e) if crashed || e.stops_engine() => {}
        Err(Error::TableFull { .. }) => {}
        Err(e) => world.violations.push(format!(
            "DDL: ALTER TABLE {table} ENGINE=InnoDB answered {answer}: an unexpected error: {e}"
        )),
    }
}

/// Judges the answer of CREATE TABLE, DROP TABLE or TRUNCATE TABLE of a
/// scratch table against the model of whether it exists.
fn judge_table_ddl(world: &mut World, st: &PlannedStmt, r: engine::Result<()>) {
    #[derive(PartialEq)]
    enum Kind {
        Create,
        Drop,
        Truncate,
    }
    let (table, kind) = match st {
        PlannedStmt::CreateTable { table, .. } => (table.clone(), Kind::Create),
        PlannedStmt::DropTable { table } => (table.clone(), Kind::Drop),
        PlannedStmt::TruncateTable { table } => (table.clone(), Kind::Truncate),
        _ => unreachable!("a table's DDL"),
    };
    let create = kind == Kind::Create;
    let verb = verb(st);
    let answer = answer_of(&r);
    world.event(
        "ddl",
        json!({"statement": verb, "table": table, "answer": answer}),
    );
    let before = world.scratch[&table];
    let crashed = world.storage.crashed();
    let (after, violation) = match r {
        // A TRUNCATE keeps the table whatever happens to the statement: it
        // exists after exactly when it did before.
        Ok(()) if kind == Kind::Truncate => {
            world.stats.ddl_done += 1;
            (
                before,
                (before == Presence::Absent).then(|| {
                    "it does not exist (never created, or its drop was acknowledged)".into()
                }),
            )
        }
        Err(Error::NoSuchTable(_)) if kind == Kind::Truncate => (
            Presence::Absent,
            (before == Presence::Present).then(|| "1146, yet it exists".to_string()),
        ),
        Err(e) if kind == Kind::Truncate && (crashed || e.stops_engine()) => (before, None),
        Err(Error::TableFull { .. }) if kind == Kind::Truncate => (before, None),
        Ok(()) => {
            world.stats.ddl_done += 1;
            let (after, why) = if create {
                (
                    Presence::Present,
                    "it exists already (its create was acknowledged)",
                )
            } else {
                (
                    Presence::Absent,
                    "it does not exist (never created, or its drop was acknowledged)",
                )
            };
            (after, (before == after).then(|| why.to_string()))
        }
        Err(Error::TableExists(_)) if create => (
            Presence::Present,
            (before == Presence::Absent).then(|| "1050, yet it does not exist".to_string()),
        ),
        Err(Error::NoSuchTable(_)) if !create => (
            Presence::Absent,
            (before == Presence::Present).then(|| "1146, yet it exists".to_string()),
        ),
        Err(_) if crashed => (Presence::InDoubt, None),
        Err(e) if e.stops_engine() => (Presence::InDoubt, None),
        // A create that met a full disk undoes itself (its file removed,
        // its FILE_DELETE logged) and the engine goes on.
        Err(Error::TableFull { .. }) if create => (Presence::Absent, None),
        // A drop that met it leaves the table.
        Err(Error::TableFull { .. }) => (before, None),
        Err(e) => (before, Some(format!("an unexpected error: {e}"))),
    };
    if let Some(v) = violation {
        world
            .violations
            .push(format!("DDL: {verb} {table} answered {answer}: {v}"));
    }
    world.scratch.insert(table, after);
}

/// After a recovery: every scratch table exists exactly when the model
/// says it must (in doubt: either way, and now known), in the dictionary
/// and on the disk alike (its `.ibd` file, or none with
/// innodb_file_per_table off), and passes CHECK TABLE; no `.ibd` file on
/// the disk belongs to no table. Returns true if CHECK TABLE caught damage a
/// fault planted, which ends the run.
pub(super) fn judge_recovered(world: &mut World, e: &mut Engine) -> bool {
    let files = match engine::io::Storage::list(&mut world.storage.clone()) {
        Ok(f) => f,
        Err(err) => {
            world.violations.push(format!(
                "DDL: listing the recovered directory failed: {err}"
            ));
            return false;
        }
    };
    let known = e.table_names();
    for (table, presence) in world.scratch.clone() {
        let in_dictionary = known.contains(&table);
        let file = format!("{table}.ibd");
        let on_disk = files.contains(&file);
        let verdict = match (presence, in_dictionary) {
            (Presence::Present, false) => Some("its create was acknowledged, yet recovery lost it"),
            (Presence::Absent, true) => {
                Some("it was never created or its drop was acknowledged, yet it exists")
            }
            _ => None,
        };
        if let Some(v) = verdict {
            world
                .violations
                .push(format!("DDL: table {table} after recovery: {v}"));
        }
        // A table in the system tablespace has no file of its own.
        if in_dictionary && world.config.file_per_table != on_disk || !in_dictionary && on_disk {
            world.violations.push(format!(
                "DDL: after recovery the dictionary {} table {table} and the disk {} {file}",
                if in_dictionary { "has" } else { "has no" },
                if on_disk { "has" } else { "has no" },
            ));
        }
        if in_dictionary {
            match e.check_table(&table) {
                Ok(c) if c.is_ok() => {}
                Ok(c) if c.problems.iter().any(|p| world.damage_named(p)) => return true,
                Ok(c) => world
                    .violations
                    .push(format!("CHECK TABLE {table}: {}", c.problems.join("; "))),
                Err(err) if world.damage_caught(&err) => return true,
                Err(err) => world.violations.push(format!("CHECK TABLE {table}: {err}")),
            }
        }
        world.scratch.insert(
            table,
            if in_dictionary {
                Presence::Present
            } else {
                Presence::Absent
            },
        );
    }
    for f in files.iter().filter(|f| f.ends_with(".ibd")) {
        let table = &f[..f.len() - 4];
        if !known.iter().any(|n| n == table) {
            world.violations.push(format!(
                "DDL: after recovery the disk has {f}, which no table of the dictionary uses"
            ));
        }
    }
    false
}

/// Judges the answer `r` of CREATE INDEX (`create`) or DROP INDEX of
/// index `name` on `table` against the model: a CREATE of an index that
/// exists is 1061, a DROP of one that does not 1091, and the rest succeed
/// (a full disk undoes a build); whether it had to wait first is judged
/// before ([`start_ddl`]). The new index's place in the run's index
/// changes tells the read judge which views it is too new for.
fn judge_index_ddl(
    world: &mut World,
    table: &str,
    name: &str,
    create: bool,
    r: engine::Result<()>,
) {
    let key = (table.to_string(), name.to_string());
    let before = world
        .online
        .get(&key)
        .copied()
        .unwrap_or(IndexState::Absent);
    let verb = if create { "CREATE INDEX" } else { "DROP INDEX" };
    let answer = answer_of(&r);
    world.event(
        "ddl",
        json!({"statement": verb, "table": table, "index": name, "answer": answer}),
    );
    let crashed = world.storage.crashed();
    let present = matches!(before, IndexState::Present { .. });
    let (after, violation) = match r {
        Err(e) if crashed || e.stops_engine() => (IndexState::InDoubt, None),
        Ok(()) if create => {
            world.stats.indexes_built += 1;
            world.index_epoch += 1;
            let since = world.index_epoch;
            (
                IndexState::Present { since },
                present.then(|| "built a second index of the name".into()),
            )
        }
        Ok(()) => {
            world.stats.indexes_dropped += 1;
            (
                IndexState::Absent,
                (!present).then(|| "dropped an index that does not exist".into()),
            )
        }
        Err(Error::DuplicateKeyName(_)) if create => (
            before,
            (!present).then(|| "1061, yet the index does not exist".into()),
        ),
        Err(Error::CantDropKey(_)) if !create => {
            (before, present.then(|| "1091, yet the index exists".into()))
        }
        // A build that met a full disk drops what it built; a drop that
        // met it leaves the index.
        Err(Error::TableFull { .. }) => (before, None),
        Err(e) => (before, Some(format!("an unexpected error: {e}"))),
    };
    if let Some(v) = violation {
        world.violations.push(format!(
            "DDL: {verb} {name} ON {table} answered {answer}: {v}"
        ));
    }
    world.online.insert(key, after);
}

/// After a recovery: each index the workload creates exists exactly when
/// the model says it must (in doubt: either way, and now known); CHECK
/// TABLE (run on every table after recovery) holds it to its table's rows.
/// Every view from now on is newer than the indexes that exist.
pub(super) fn judge_recovered_indexes(world: &mut World, e: &Engine) {
    for ((table, name), state) in world.online.clone() {
        let exists = e
            .table(&table)
            .is_ok_and(|t| t.secondary.iter().any(|s| s.def.name == name));
        let verdict = match (state, exists) {
            (IndexState::Present { .. }, false) => {
                Some("its CREATE INDEX was acknowledged, yet recovery lost it")
            }
            (IndexState::Absent, true) => {
                Some("it was never built or its drop was acknowledged, yet it exists")
            }
            _ => None,
        };
        if let Some(v) = verdict {
            world
                .violations
                .push(format!("DDL: index {name} on {table} after recovery: {v}"));
        }
        let after = if exists {
            IndexState::Present {
                since: world.index_epoch,
            }
        } else {
            IndexState::Absent
        };
        world.online.insert((table, name), after);
    }
}

/// Judges a read through an index the workload creates, which the engine
/// answered with `error` (`None`: it returned rows): 1176 exactly when the
/// index does not exist, 1412 exactly when it does and the transaction's
/// REPEATABLE READ view is older than it. Returns what is wrong; `None`
/// also for a read the rule does not cover (no such index in the plan).
pub(super) fn judge_online_read(
    world: &World,
    txn: Option<&Txn>,
    req: &Request,
    error: Option<&Error>,
) -> Option<String> {
    let Request::Scan {
        table,
        index: Some(index),
        ..
    } = req
    else {
        return None;
    };
    let state = *world.online.get(&(table.clone(), index.clone()))?;
    let old = match (state, txn) {
        (IndexState::Present { since }, Some(t)) => {
            t.isolation == engine::Isolation::RepeatableRead
                && t.snapshot.is_some()
                && t.snapshot_epoch < since
        }
        _ => false,
    };
    let want = match state {
        IndexState::Absent => "1176 (the index does not exist)",
        IndexState::InDoubt => "nothing: no statement runs while the index is in doubt",
        IndexState::Present { .. } if old => {
            "1412 (the transaction's view is older than the index)"
        }
        IndexState::Present { .. } => "rows",
    };
    let fine = match (state, error) {
        (IndexState::Absent, Some(Error::NoSuchIndex { .. })) => true,
        (IndexState::Present { .. }, Some(Error::TableDefChanged)) => old,
        (IndexState::Present { .. }, None) => !old,
        _ => false,
    };
    let got = match error {
        None => "rows".to_string(),
        Some(e) => e.to_string(),
    };
    (!fine).then(|| {
        format!("a read through index {index} of {table} answered {got}, the model expected {want}")
    })
}
