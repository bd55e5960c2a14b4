//! The lock judge: the engine's lock events restated in the lock oracle's
//! terms ([`models::lock`]), timed by the runner's clock, and the
//! two-phase-locking judgment of the releases the oracle finds early,
//! against the rows the runner knows.

use crate::judge::reads::to_model;
use models::lock::{EarlyRelease, OEvent, OKind, OMode, OTarget, RKind, TMode};
use models::{Db, ModelValue, Row, Write};

/// The engine's lock event as the oracle states it, timed by the runner:
/// the call that produced it began at `since_us` and returned at `now_us`
/// (the engine's own stamps are not passed on).
pub(crate) fn to_oracle(e: engine::lock::LockEvent, since_us: u64, now_us: u64) -> OEvent {
    use engine::lock::{EventKind, Mode, RecKey, RecKind, RecMode, TableMode, Target};
    let kind = match e.kind {
        EventKind::Granted => OKind::Granted,
        EventKind::Wait => OKind::Wait,
        EventKind::GrantedAfterWait => OKind::GrantedAfterWait,
        EventKind::Released => OKind::Released,
        EventKind::TimedOut => OKind::TimedOut,
        EventKind::Victim => OKind::Victim,
        EventKind::Cancelled => OKind::Cancelled,
        EventKind::Inherited => OKind::Inherited,
        EventKind::Converted => OKind::Converted,
        EventKind::InsertChecked => OKind::InsertChecked,
        EventKind::Weight => OKind::Weight,
    };
    let target = match e.lock.target {
        Target::Table(t) => OTarget::Table(t),
        Target::Record { table, index, key } => OTarget::Record(
            table,
            index,
            match key {
                RecKey::Key(k) => Some(k),
                RecKey::Supremum => None,
            },
        ),
    };
    let mode = match e.lock.mode {
        Mode::Table(m) => OMode::Table(match m {
            TableMode::IS => TMode::IS,
            TableMode::IX => TMode::IX,
            TableMode::S => TMode::S,
            TableMode::X => TMode::X,
            TableMode::AutoInc => TMode::AutoInc,
        }),
        Mode::Record(m, k) => OMode::Record(
            m == RecMode::X,
            match k {
                RecKind::NextKey => RKind::NextKey,
                RecKind::RecNotGap => RKind::Record,
                RecKind::Gap => RKind::Gap,
                RecKind::InsertIntention => RKind::InsertIntention,
            },
        ),
    };
    OEvent {
        t_us: now_us,
        kind,
        lock: e.lock.id,
        trx: e.lock.trx,
        target,
        mode,
        since_us,
        undo_records: e.undo_records,
    }
}

/// The columns and values of a key of one of `table`'s indexes, in the
/// model's terms, with the index's name; `None` for a key the runner
/// cannot read back (a hidden row id, an unknown index, a stored form that
/// does not decode).
fn key_columns(
    table: &engine::dict::Table,
    index_id: u64,
    key: &[Option<Vec<u8>>],
) -> Option<(String, Vec<(usize, ModelValue)>)> {
    let (index_name, fields): (&str, Vec<usize>) = if table.clustered.id == index_id {
        ("PRIMARY", (0..key.len()).collect())
    } else {
        let sec = table.secondary.iter().find(|s| s.index.id == index_id)?;
        (&sec.def.name, sec.from_clustered.clone())
    };
    let mut cols = Vec::with_capacity(key.len());
    for (j, stored) in key.iter().enumerate() {
        let engine::dict::ClusteredField::Column(c) = *table.fields.get(*fields.get(j)?)? else {
            return None;
        };
        let v = match stored {
            None => ModelValue::Null,
            Some(b) => to_model(&engine::record::from_stored(&table.def.columns[c].ty, b).ok()?),
        };
        cols.push((c, v));
    }
    Some((index_name.to_string(), cols))
}

/// The table with this id.
fn table_by_id(engine: &engine::Engine, id: u64) -> Option<&engine::dict::Table> {
    engine
        .table_names()
        .into_iter()
        .filter_map(|n| engine.table(&n).ok())
        .find(|t| t.id == id)
}

/// The primary key a clustered key names, in the model's terms.
fn primary_key(table: &engine::dict::Table, key: &[Option<Vec<u8>>]) -> Option<Vec<ModelValue>> {
    let (_, cols) = key_columns(table, table.clustered.id, key)?;
    let pk: Vec<ModelValue> = cols.into_iter().map(|(_, v)| v).collect();
    (pk.len() == table.def.primary_key.len()).then_some(pk)
}

/// The smallest primary key above `key` that the runner knows is in the
/// clustered index: a committed row (a delete by an open transaction only
/// marks it) or a row an open transaction wrote. The record that follows
/// `key` in the index is at or below it (delete-marked records the runner
/// cannot see may come first).
fn next_known(committed: &Db, open: &[&[Write]], table: &str, key: &[ModelValue]) -> Option<Vec<ModelValue>> {
    use std::ops::Bound::{Excluded, Unbounded};
    let above = (Excluded(key.to_vec()), Unbounded);
    let from_committed = committed
        .tables
        .get(table)
        .and_then(|t| t.range::<Vec<ModelValue>, _>(above.clone()).next().map(|(k, _)| k.clone()));
    let from_open = open
        .iter()
        .flat_map(|w| w.iter())
        .filter(|w| w.table == table && w.row.is_some() && w.key.as_slice() > key)
        .map(|w| w.key.clone())
        .min();
    match (from_committed, from_open) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether a gap lock's or an insert intention's position `pos` in a
/// clustered index is a possible successor of primary key `key`: above
/// it, and no further than the next record the runner knows. `None`
/// when it is; otherwise what is wrong.
fn successor_error(
    table: &engine::dict::Table,
    committed: &Db,
    open: &[&[Write]],
    key: &[ModelValue],
    pos: &OTarget,
) -> Option<String> {
    let OTarget::Record(_, index, pos_key) = pos else {
        return None;
    };
    if *index != table.clustered.id {
        return None;
    }
    let next = next_known(committed, open, table.name(), key);
    let shown = |k: &[ModelValue]| models::value::fmt_key(k);
    match (pos_key, next) {
        (None, None) => None,
        (None, Some(n)) => Some(format!(
            "the supremum, past the record {} that follows {}",
            shown(&n),
            shown(key)
        )),
        (Some(p), next) => {
            let p = primary_key(table, p)?;
            if p.as_slice() <= key {
                Some(format!("{}, not above {}", shown(&p), shown(key)))
            } else if next.as_ref().is_some_and(|n| &p > n) {
                Some(format!(
                    "{}, past the record {} that follows {}",
                    shown(&p),
                    shown(next.as_ref().expect("checked")),
                    shown(key)
                ))
            } else {
                None
            }
        }
    }
}

/// Judges an insert of primary key `key` into `table_name` by `trx` that
/// succeeded in the step whose lock events are `events`. It must have
/// checked the gap it went into, unless no other transaction locked any
/// gap of the index (the engine may skip the check then, as InnoDB skips
/// `lock_rec_insert_check_and_lock` when no lock is on the page) or it
/// took over a delete-marked record of that key (it holds an X lock on
/// the key instead). Every
/// gap it checked must be the one `key` falls into: its position above
/// `key`, no further than the next record the runner knows. `known` are
/// the rows the runner knows are in the index besides the committed ones
/// (the transaction's own writes). Returns what is wrong, if anything.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge_insert(
    engine: &engine::Engine,
    oracle: &models::lock::LockOracle,
    events: &[OEvent],
    trx: u64,
    table_name: &str,
    key: &[ModelValue],
    committed: &Db,
    known: &[&[Write]],
) -> Option<String> {
    let table = engine.table(table_name).ok()?;
    let (tid, cid) = (table.id, table.clustered.id);
    let in_index = |t: &OTarget| matches!(t, OTarget::Record(a, b, _) if *a == tid && *b == cid);
    let checks: Vec<&OEvent> = events
        .iter()
        .filter(|e| e.trx == trx && in_index(&e.target))
        .filter(|e| matches!(e.mode, OMode::Record(_, RKind::InsertIntention)))
        .filter(|e| matches!(e.kind, OKind::InsertChecked | OKind::Wait))
        .collect();
    // A delete-marked record of the key is taken over under an X lock on
    // it, which the transaction may have held since an earlier statement
    // (and, in autocommit mode, released with its commit in this call).
    let on_key = |t: &OTarget| {
        matches!(t, OTarget::Record(a, b, Some(k)) if *a == tid && *b == cid
            && primary_key(table, k).as_deref() == Some(key))
    };
    let took_over = oracle.held_where(trx, |t, m| {
        on_key(t) && matches!(m, OMode::Record(true, RKind::Record | RKind::NextKey))
    });
    let shown = models::value::fmt_key(key);
    if checks.is_empty() && !took_over && oracle.others_lock_gaps(trx, tid, cid) {
        return Some(format!(
            "gap locking: trx {trx} inserted {table_name} {shown} without checking its gap, while another transaction locks gaps of {table_name}.PRIMARY"
        ));
    }
    for e in checks {
        if let Some(v) = successor_error(table, committed, known, key, &e.target) {
            return Some(format!(
                "gap locking: trx {trx}'s insert of {table_name} {shown} checked the gap before {v}"
            ));
        }
    }
    None
}

/// Judges a lock released while its transaction went on (the oracle's
/// [`EarlyRelease`]). Two-phase locking allows it only for a record lock
/// whose record left the index (purged, or its insert rolled back) and so
/// was moved to the gap (`lock_rec_inherit_to_gap`): table locks and the
/// supremum's never leave early, and a record some row the runner knows
/// still has cannot have left. The rows it knows: the committed state (a
/// row deleted by a transaction still open is only delete-marked) and the
/// writes of every transaction still open (`open`). A key the runner
/// cannot read back (a hidden row id) is not judged. A record that may
/// have left hands its locks to the record after it: the heir must be
/// above it and no further than the next record the runner knows.
/// Returns what is wrong, if anything.
pub(crate) fn early_release(
    engine: &engine::Engine,
    committed: &Db,
    open: &[&[Write]],
    r: &EarlyRelease,
) -> Option<String> {
    let (table_id, index_id, key) = match &r.target {
        OTarget::Table(t) => {
            return Some(format!(
                "two-phase locking: trx {} released its {:?} lock on table {t} before it ended",
                r.trx, r.mode
            ))
        }
        OTarget::Record(t, i, None) => {
            return Some(format!(
                "two-phase locking: trx {} released its {:?} lock on the supremum of index {i} of table {t} before it ended",
                r.trx, r.mode
            ))
        }
        OTarget::Record(t, i, Some(k)) => (*t, *i, k),
    };
    let table = table_by_id(engine, table_id)?;
    let (index_name, cols) = key_columns(table, index_id, key)?;
    let pk: Vec<ModelValue> = table
        .def
        .primary_key
        .iter()
        .map(|p| cols.iter().find(|(c, _)| c == p).map(|(_, v)| v.clone()))
        .collect::<Option<_>>()?;
    let name = table.name();
    let has = |row: &Row| cols.iter().all(|(c, v)| row.get(*c) == Some(v));
    let committed_row = committed.tables.get(name).and_then(|t| t.get(&pk));
    let open_row = open.iter().find_map(|writes| {
        writes
            .iter()
            .rev()
            .find(|w| w.table == name && w.key == pk)
            .and_then(|w| w.row.as_ref())
            .filter(|row| has(row))
    });
    let holder = if committed_row.is_some_and(has) {
        "the committed state"
    } else if open_row.is_some() {
        "an open transaction's writes"
    } else {
        // The record may have left: its locks go to the record after it.
        let heir = r.heir.as_ref()?;
        let v = successor_error(table, committed, open, &pk, heir)?;
        return Some(format!(
            "gap locking: trx {}'s lock on {name}.{index_name} {} was inherited by {v}",
            r.trx,
            models::value::fmt_key(&pk)
        ));
    };
    let shown: Vec<String> = cols.iter().map(|(_, v)| v.to_string()).collect();
    Some(format!(
        "two-phase locking: trx {} released its {:?} lock on {name}.{index_name} ({}) before it ended, while {holder} still has that record",
        r.trx,
        r.mode,
        shown.join(", ")
    ))
}
