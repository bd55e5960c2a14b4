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

use super::*;
use crate::plan::SCRATCH_TABLES;

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

/// Runs a DDL statement (planned transaction `txn`'s only statement) and
/// judges its answer against what the model knows of the table. Returns
/// what [`step_session`] returns: `Some(true)` if the disk crashed,
/// `Some(false)` if the engine stopped on an error of its own.
pub(super) fn run_ddl(
    world: &mut World,
    txn: usize,
    st: &PlannedStmt,
    sessions: &[Sess],
) -> Option<bool> {
    if let PlannedStmt::CreateIndex { table, index } = st {
        return run_index_ddl(world, txn, table, &index.name, Some(index), sessions);
    }
    if let PlannedStmt::DropIndex { table, index } = st {
        return run_index_ddl(world, txn, table, index, None, sessions);
    }
    world.issued(txn, 0);
    world.stats.statements += 1;
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
        _ => unreachable!("run_ddl runs DDL"),
    };
    let r = match st {
        PlannedStmt::CreateTable { table, row_format } => {
            let fmt = format_of(row_format).unwrap_or(RowFormat::Compact);
            world
                .engine()
                .create_table(crate::tables::scratch(table, fmt))
        }
        PlannedStmt::TruncateTable { .. } => world.engine().truncate_table(&table),
        _ => world.engine().drop_table(&table),
    };
    let create = kind == Kind::Create;
    let verb = match kind {
        Kind::Create => "CREATE TABLE",
        Kind::Drop => "DROP TABLE",
        Kind::Truncate => "TRUNCATE TABLE",
    };
    let answer = match &r {
        Ok(()) => "ok".to_string(),
        Err(e) => match e.mysql_code() {
            Some(code) => format!("error {code}"),
            None => format!("error ({e})"),
        },
    };
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
    if crashed {
        return Some(true);
    }
    if world.engine.as_ref().is_some_and(|e| e.halted().is_some()) {
        return Some(false);
    }
    // The statement's end: anchors there strike after it.
    world.issued(txn, 1);
    None
}

/// After a recovery: every scratch table exists exactly when the model
/// says it must (in doubt: either way, and now known), in the dictionary
/// and on the disk alike, and passes CHECK TABLE; no `.ibd` file on the
/// disk belongs to no table. Returns true if CHECK TABLE caught damage a
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
        if in_dictionary != on_disk {
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

/// Runs CREATE INDEX (`create`: its definition) or DROP INDEX of index
/// `name` on `table`, and judges the answer against the model: the
/// statement is refused exactly when an open transaction has changed the
/// table (by the runner's own record of the statements each open
/// transaction issued; a committed one waiting for its group's sync is
/// no longer open); otherwise a CREATE of an index that exists is 1061, a
/// DROP of one that does not 1091, and the rest succeed (a full disk
/// undoes a build). The new index's place in the run's index changes
/// tells the read judge which views it is too new for.
fn run_index_ddl(
    world: &mut World,
    txn: usize,
    table: &str,
    name: &str,
    create: Option<&crate::schema::IndexSpec>,
    sessions: &[Sess],
) -> Option<bool> {
    world.issued(txn, 0);
    world.stats.statements += 1;
    let key = (table.to_string(), name.to_string());
    let before = world
        .online
        .get(&key)
        .copied()
        .unwrap_or(IndexState::Absent);
    // A transaction that holds no lock any more has ended, though its
    // session may not know it yet: a deadlock victim rolled back during
    // another session's statement (crash-heavy seed 5341).
    let writer = sessions.iter().find(|s| {
        s.txn
            .as_ref()
            .is_some_and(|t| t.commit_written.is_none() && t.touched.contains(table))
            && s.trx.is_none_or(|t| world.locks.holds_any(t))
    });
    let r = match create {
        Some(spec) => {
            let def = engine::IndexDef {
                name: spec.name.clone(),
                columns: spec.columns.clone(),
                unique: spec.unique,
            };
            world
                .engine()
                .create_indexes(table, &[def], Vec::new())
                .map(|_| ())
        }
        None => world.engine().drop_index(table, name, Vec::new()),
    };
    let verb = if create.is_some() {
        "CREATE INDEX"
    } else {
        "DROP INDEX"
    };
    let answer = match &r {
        Ok(()) => "ok".to_string(),
        Err(e) => match e.mysql_code() {
            Some(code) => format!("error {code}"),
            None => format!("error ({e})"),
        },
    };
    world.event(
        "ddl",
        json!({"statement": verb, "table": table, "index": name, "answer": answer}),
    );
    let crashed = world.storage.crashed();
    let present = matches!(before, IndexState::Present { .. });
    let (after, violation) = match r {
        Err(e) if crashed || e.stops_engine() => (IndexState::InDoubt, None),
        Err(Error::TableInUse(_)) => {
            world.stats.index_builds_refused += 1;
            (
                before,
                writer
                    .is_none()
                    .then(|| "refused as in use, yet no open transaction has changed the table".into()),
            )
        }
        _ if writer.is_some() => (
            before,
            Some(format!(
                "answered {answer} while session {:?}'s open transaction has changed the table (it must be refused)",
                writer.map(|s| s.id)
            )),
        ),
        Ok(()) if create.is_some() => {
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
        Err(Error::DuplicateKeyName(_)) if create.is_some() => (
            before,
            (!present).then(|| "1061, yet the index does not exist".into()),
        ),
        Err(Error::CantDropKey(_)) if create.is_none() => (
            before,
            present.then(|| "1091, yet the index exists".into()),
        ),
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
    if crashed {
        return Some(true);
    }
    if world.engine.as_ref().is_some_and(|e| e.halted().is_some()) {
        return Some(false);
    }
    world.issued(txn, 1);
    None
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
