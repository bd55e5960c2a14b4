//! DDL while the workload runs: CREATE TABLE, DROP TABLE and TRUNCATE
//! TABLE of the scratch tables, and the judgment of what a crash left of
//! them.
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
pub(super) fn run_ddl(world: &mut World, txn: usize, st: &PlannedStmt) -> Option<bool> {
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
