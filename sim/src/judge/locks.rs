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

/// Judges a lock released while its transaction went on (the oracle's
/// [`EarlyRelease`]). Two-phase locking allows it only for a record lock
/// whose record left the index (purged, or its insert rolled back) and so
/// was moved to the gap (`lock_rec_inherit_to_gap`): table locks and the
/// supremum's never leave early, and a record some row the runner knows
/// still has cannot have left. The rows it knows: the committed state (a
/// row deleted by a transaction still open is only delete-marked) and the
/// writes of every transaction still open (`open`). A key the runner
/// cannot read back (a hidden row id) is not judged. Returns what is
/// wrong, if anything.
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
    let table = engine
        .table_names()
        .into_iter()
        .filter_map(|n| engine.table(&n).ok())
        .find(|t| t.id == table_id)?;
    let (index_name, fields): (&str, Vec<usize>) = if table.clustered.id == index_id {
        ("PRIMARY", (0..key.len()).collect())
    } else {
        let sec = table.secondary.iter().find(|s| s.index.id == index_id)?;
        (&sec.def.name, sec.from_clustered.clone())
    };
    // Each key field's column and value, in the model's terms.
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
        return None;
    };
    let shown: Vec<String> = cols.iter().map(|(_, v)| v.to_string()).collect();
    Some(format!(
        "two-phase locking: trx {} released its {:?} lock on {name}.{index_name} ({}) before it ended, while {holder} still has that record",
        r.trx,
        r.mode,
        shown.join(", ")
    ))
}
