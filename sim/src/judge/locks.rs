//! The lock judge: the engine's lock events restated in the lock oracle's
//! terms ([`models::lock`]), timed by the runner's clock, and the
//! two-phase-locking judgment of the releases the oracle finds early,
//! against the rows the runner knows.

use crate::judge::reads::to_model;
use crate::schema::{Schema, TableShape};
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
/// model's terms (as keys: each in its column's collation), with the
/// index's name; `None` for a key the runner cannot read back (a hidden
/// row id, an unknown index, a stored form that does not decode). A lock
/// names a string of a column with a collation by the form every string
/// equal to it shares (its weights, without trailing spaces), which is
/// taken as it is: the model compares it in the collation.
fn key_columns(
    table: &engine::dict::Table,
    shape: &TableShape,
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
            Some(b) if shape.collation(c) != models::Collation::Binary => {
                ModelValue::Collated(b.as_slice().into(), shape.collation(c))
            }
            Some(b) => to_model(&engine::record::from_stored(&table.def.columns[c].ty, b).ok()?),
        };
        cols.push((c, v));
    }
    Some((index_name.to_string(), cols))
}

/// A row's primary key from the columns an index entry holds (`None` if
/// one is missing).
fn primary_key_of(
    table: &engine::dict::Table,
    cols: &[(usize, ModelValue)],
) -> Option<Vec<ModelValue>> {
    table
        .def
        .primary_key
        .iter()
        .map(|p| cols.iter().find(|(c, _)| c == p).map(|(_, v)| v.clone()))
        .collect()
}

/// The table and primary key of the row a record lock on a clustered
/// index is on, in the model's terms; `None` for a table lock, the
/// supremum, a secondary index, a table the schema does not know or a
/// hidden row id.
pub(crate) fn clustered_row(
    engine: &engine::Engine,
    schema: &Schema,
    target: &OTarget,
) -> Option<(String, Vec<ModelValue>)> {
    let OTarget::Record(t, i, Some(key)) = target else {
        return None;
    };
    let table = table_by_id(engine, *t)?;
    if table.clustered.id != *i || table.def.primary_key.is_empty() {
        return None;
    }
    let shape = schema.table(table.name())?;
    let (_, cols) = key_columns(table, shape, *i, key)?;
    let pk = primary_key_of(table, &cols)?;
    Some((table.name().to_string(), pk))
}

/// Judges an implicit lock made explicit (a `Converted` event: the engine
/// says `holder` holds an implicit X lock on a record). An implicit lock
/// is what a transaction's own change leaves, by the runner's count of
/// the holder's writes (`writes`, those its rollbacks left) and of the
/// committed state (the row as it was before the holder's first change:
/// the holder has held the row's X lock since):
///
/// - on a clustered record, the holder wrote the row;
/// - on a secondary entry, one of the holder's changes of the row changed
///   whether its row implies the entry (inserted the entry, or
///   delete-marked it, or moved the row onto or off its values), as
///   `row_vers_impl_x_locked` asks. A change of other columns leaves the
///   entry as it was, and nobody's.
///
/// Returns what is wrong, if anything.
pub(crate) fn judge_conversion(
    engine: &engine::Engine,
    schema: &Schema,
    committed: &Db,
    ev: &OEvent,
    writes: &[Write],
) -> Option<String> {
    let OTarget::Record(table_id, index_id, Some(key)) = &ev.target else {
        return None;
    };
    let t = table_by_id(engine, *table_id)?;
    let shape = schema.table(t.name())?;
    // The row: its primary key, read from the key itself or from the
    // primary-key columns a secondary entry carries (none for a hidden
    // row id, which the runner cannot read back).
    let (index, cols) = key_columns(t, shape, *index_id, key)?;
    let pk = primary_key_of(t, &cols).filter(|pk| !pk.is_empty())?;
    let table = t.name().to_string();
    let mine: Vec<&Write> = writes
        .iter()
        .filter(|w| w.table == table && w.key == pk)
        .collect();
    if mine.is_empty() {
        return Some(format!(
            "implicit locks: trx {}'s implicit lock on {table} {pk:?} ({index}) was made explicit, yet it has written no such row",
            ev.trx
        ));
    }
    if t.clustered.id == *index_id {
        return None;
    }
    let n_index = t
        .secondary
        .iter()
        .find(|s| s.index.id == *index_id)?
        .def
        .columns
        .len();
    let implies = |row: Option<&Row>| {
        row.is_some_and(|r| {
            cols[..n_index]
                .iter()
                .all(|(c, v)| r.get(*c).is_some_and(|x| shape.keyed(*c, x) == *v))
        })
    };
    // A change touches the entry when the row comes to have it or stops
    // having it, and also when the row keeps it with other bytes in the
    // index's columns ('a' for 'A' under a case-insensitive collation):
    // InnoDB compares an update's fields in binary
    // (`row_upd_changes_ord_field_binary`), delete-marks the old entry and
    // inserts the new one.
    let bytes = |row: Option<&Row>| {
        row.map(|r| {
            (cols[..n_index].iter())
                .map(|(c, _)| r.get(*c).cloned())
                .collect::<Vec<_>>()
        })
    };
    let before = committed.tables.get(&table).and_then(|rows| rows.get(&pk));
    let mut prev = (implies(before), bytes(before));
    for w in &mine {
        let now = (implies(w.row.as_ref()), bytes(w.row.as_ref()));
        if now.0 != prev.0 || (now.0 && now.1 != prev.1) {
            return None;
        }
        prev = now;
    }
    let entry: Vec<&ModelValue> = cols[..n_index].iter().map(|(_, v)| v).collect();
    Some(format!(
        "implicit locks: trx {}'s implicit lock on the {index} entry {entry:?} of {table} {pk:?} was made explicit, yet none of its changes of the row touched that entry",
        ev.trx
    ))
}

/// Whether a record lock is on a secondary index of its table.
pub(crate) fn on_secondary(engine: &engine::Engine, ev: &OEvent) -> bool {
    match &ev.target {
        OTarget::Record(table_id, index_id, _) => {
            table_by_id(engine, *table_id).is_some_and(|t| t.clustered.id != *index_id)
        }
        OTarget::Table(_) => false,
    }
}

/// The table with this id.
fn table_by_id(engine: &engine::Engine, id: u64) -> Option<&engine::dict::Table> {
    engine
        .table_names()
        .into_iter()
        .filter_map(|n| engine.table(&n).ok())
        .find(|t| t.id == id)
}

/// The columns an index's key fields hold, in key order (`None` for a
/// hidden row id).
fn index_columns(table: &engine::dict::Table, index_id: u64) -> Option<Vec<Option<usize>>> {
    let fields: Vec<usize> = if table.clustered.id == index_id {
        (0..table.clustered.n_key).collect()
    } else {
        table
            .secondary
            .iter()
            .find(|s| s.index.id == index_id)?
            .from_clustered
            .clone()
    };
    Some(
        fields
            .iter()
            .map(|&f| match table.fields.get(f) {
                Some(engine::dict::ClusteredField::Column(c)) => Some(*c),
                _ => None,
            })
            .collect(),
    )
}

/// A row's key in an index, in the model's terms.
fn entry_of(shape: &TableShape, cols: &[Option<usize>], row: &Row) -> Option<Vec<ModelValue>> {
    cols.iter()
        .map(|c| {
            let c = (*c)?;
            row.get(c).map(|v| shape.keyed(c, v))
        })
        .collect()
}

/// The smallest key above `entry` in an index that the runner knows is
/// there: a committed row's (a delete by an open transaction only marks
/// it) or that of a row an open transaction wrote. The record that follows
/// `entry` in the index is at or below it (delete-marked records the
/// runner cannot see may come first).
fn next_known(
    committed: &Db,
    open: &[&[Write]],
    shape: &TableShape,
    cols: &[Option<usize>],
    entry: &[ModelValue],
    primary: bool,
) -> Option<Vec<ModelValue>> {
    let table = shape.name.as_str();
    let open_rows = open
        .iter()
        .flat_map(|w| w.iter())
        .filter(|w| w.table == table)
        .filter_map(|w| w.row.as_ref());
    let from_open = open_rows
        .filter_map(|r| entry_of(shape, cols, r))
        .filter(|k| k.as_slice() > entry)
        .min();
    let rows = committed.tables.get(table);
    // The clustered index is the model's own order (its rows are keyed
    // by primary key): one range lookup.
    let from_committed = if primary {
        use std::ops::Bound::{Excluded, Unbounded};
        rows.and_then(|t| {
            t.range::<Vec<ModelValue>, _>((Excluded(entry.to_vec()), Unbounded))
                .next()
                .map(|(k, _)| k.clone())
        })
    } else {
        // By reference: the committed rows are many, the entries short.
        // Every key field is a column here (an entry exists only then).
        let Some(cols) = cols.iter().copied().collect::<Option<Vec<usize>>>() else {
            return from_open;
        };
        let above =
            |r: &Row| shape.cmp_row_key(&cols, r, |j| entry.get(j)) == std::cmp::Ordering::Greater;
        let below = |a: &Row, b: &Row| {
            shape.cmp_row_key(&cols, a, |j| b.get(cols[j])) == std::cmp::Ordering::Less
        };
        let mut best: Option<&Row> = None;
        for r in rows.into_iter().flat_map(|t| t.values()) {
            if above(r) && best.is_none_or(|b| below(r, b)) {
                best = Some(r);
            }
        }
        best.map(|r| cols.iter().map(|&c| shape.keyed(c, &r[c])).collect())
    };
    match (from_committed, from_open) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether a gap lock's or an insert intention's position `pos` is a
/// possible successor of `entry` in its index: above it, and no further
/// than the next record the runner knows. `None` when it is, or when the
/// index cannot be judged; otherwise what is wrong.
fn successor_error(
    table: &engine::dict::Table,
    shape: &TableShape,
    committed: &Db,
    open: &[&[Write]],
    entry: &[ModelValue],
    pos: &OTarget,
) -> Option<String> {
    let OTarget::Record(_, index, pos_key) = pos else {
        return None;
    };
    let cols = index_columns(table, *index)?;
    let primary = *index == table.clustered.id;
    let next = next_known(committed, open, shape, &cols, entry, primary);
    let shown = |k: &[ModelValue]| models::value::fmt_key(k);
    match (pos_key, next) {
        (None, None) => None,
        (None, Some(n)) => Some(format!(
            "the supremum, past the record {} that follows {}",
            shown(&n),
            shown(entry)
        )),
        (Some(p), next) => {
            let (_, p) = key_columns(table, shape, *index, p)?;
            let p: Vec<ModelValue> = p.into_iter().map(|(_, v)| v).collect();
            if p.as_slice() <= entry {
                Some(format!("{}, not above {}", shown(&p), shown(entry)))
            } else if next.as_ref().is_some_and(|n| &p > n) {
                Some(format!(
                    "{}, past the record {} that follows {}",
                    shown(&p),
                    shown(next.as_ref().expect("checked")),
                    shown(entry)
                ))
            } else {
                None
            }
        }
    }
}

/// Judges an insert of `row` into `table_name` by `trx` that succeeded in
/// the step whose lock events are `events`, in the clustered index and in
/// every secondary index (the model orders keys as InnoDB does: NULL
/// first, integers by value, strings in their column's collation, byte by
/// byte for binary ones; the workloads' strings are letters, so CHAR's
/// padding changes no order). In each, it
/// must have checked the gap its entry went into, unless no other
/// transaction locked any gap of the index (the engine may skip the check
/// then, as InnoDB skips `lock_rec_insert_check_and_lock` when no lock is
/// on the page) or it took over a delete-marked record of that entry (it
/// holds an X lock on it instead). Every gap it checked must be the one
/// the entry falls into: its position above the entry, no further than
/// the next record the runner knows. `known` are the rows the runner knows
/// are in the table besides the committed ones (the transaction's own
/// writes). A table without a primary key is judged by the order of its
/// row ids instead ([`KeylessInsert`]). Only the indexes at positions
/// `judged` (the clustered index first, then the secondary ones in the
/// table's order) are: an insert that waited with its clustered record in
/// place had the indexes before the one it waited in judged in the step
/// that put their entries in. Returns what is wrong, if anything.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge_insert(
    engine: &engine::Engine,
    schema: &Schema,
    oracle: &models::lock::LockOracle,
    events: &[OEvent],
    trx: u64,
    table_name: &str,
    row: &Row,
    committed: &Db,
    known: &[&[Write]],
    next_seq: u64,
    judged: std::ops::Range<usize>,
) -> Option<String> {
    let table = engine.table(table_name).ok()?;
    let shape = schema.table(table_name)?;
    let tid = table.id;
    let mut indexes = vec![(table.clustered.id, "PRIMARY")];
    for sec in &table.secondary {
        indexes.push((sec.index.id, sec.def.name.as_str()));
    }
    let judged = judged.start.min(indexes.len())..judged.end.min(indexes.len());
    for (pos, &(iid, iname)) in indexes
        .iter()
        .enumerate()
        .skip(judged.start)
        .take(judged.len())
    {
        let Some(cols) = index_columns(table, iid) else {
            continue;
        };
        // The indexes the insert puts its entries in after this one.
        let later: Vec<u64> = indexes[pos + 1..].iter().map(|&(id, _)| id).collect();
        if table.def.primary_key.is_empty() {
            let ctx = KeylessInsert {
                table,
                shape,
                oracle,
                events,
                trx,
                index: (iid, iname),
                cols: &cols,
                next_seq,
                later: &later,
            };
            if let Some(v) = ctx.judge(row, committed, known) {
                return Some(v);
            }
            continue;
        }
        let Some(entry) = entry_of(shape, &cols, row) else {
            continue;
        };
        let in_index =
            |t: &OTarget| matches!(t, OTarget::Record(a, b, _) if *a == tid && *b == iid);
        let checks: Vec<&OEvent> = events
            .iter()
            .filter(|e| e.trx == trx && in_index(&e.target))
            .filter(|e| matches!(e.mode, OMode::Record(_, RKind::InsertIntention)))
            .filter(|e| matches!(e.kind, OKind::InsertChecked | OKind::Wait))
            .collect();
        // A delete-marked record of the entry is taken over under an X
        // lock on it, which the transaction may have held since an earlier
        // statement (and, in autocommit mode, released with its commit in
        // this call).
        let on_entry = |t: &OTarget| match t {
            OTarget::Record(a, b, Some(k)) if *a == tid && *b == iid => {
                key_columns(table, shape, iid, k)
                    .is_some_and(|(_, kv)| kv.iter().map(|(_, v)| v).eq(entry.iter()))
            }
            _ => false,
        };
        let took_over = || {
            oracle.held_where(trx, |t, m| {
                matches!(m, OMode::Record(true, RKind::Record | RKind::NextKey)) && on_entry(t)
            })
        };
        // Formatted only for a message: this runs for every insert.
        let shown = || models::value::fmt_key(&entry);
        let later = inherited_after(
            events,
            trx,
            |t| matches!(t, OTarget::Record(a, b, _) if *a == tid && later.contains(b)),
        );
        if checks.is_empty() && oracle.others_lock_gaps(trx, tid, iid, &later) && !took_over() {
            return Some(format!(
                "gap locking: trx {trx} inserted {} into {table_name}.{iname} without checking its gap, while another transaction locks gaps of that index",
                shown()
            ));
        }
        for e in checks {
            if let Some(v) = successor_error(table, shape, committed, known, &entry, &e.target) {
                return Some(format!(
                    "gap locking: trx {trx}'s insert of {} into {table_name}.{iname} checked the gap before {v}",
                    shown()
                ));
            }
        }
    }
    None
}

/// The position (as [`waited_index`] counts) of the unique secondary
/// index of `table_name` whose duplicate check an insert of `ours` waits
/// in when it waits at the clustered record of row `theirs` (the check
/// waits there for that row's uncommitted inserter): the first whose key,
/// without NULLs, the two rows share (in the model's order of keys).
pub(crate) fn unique_index_shared(
    engine: &engine::Engine,
    schema: &Schema,
    table_name: &str,
    ours: &Row,
    theirs: &Row,
) -> Option<usize> {
    let table = engine.table(table_name).ok()?;
    let shape = schema.table(table_name)?;
    table.secondary.iter().enumerate().find_map(|(p, sec)| {
        if !sec.def.unique {
            return None;
        }
        let n = sec.def.columns.len();
        let cols = index_columns(table, sec.index.id)?;
        let (a, b) = (
            entry_of(shape, &cols, ours)?,
            entry_of(shape, &cols, theirs)?,
        );
        let shared = a[..n] == b[..n] && !a[..n].contains(&ModelValue::Null);
        shared.then_some(p + 1)
    })
}

/// The position (the clustered index first, then the secondary ones in
/// the table's order) of the index an insert into `table_name` that waits
/// for a lock on `target` waits in: its own index's, or, for a FOREIGN KEY
/// check of a parent table, the index the constraint is checked at (the
/// first whose leading columns are its own, by the model's schema; the
/// earliest of several constraints on one parent).
pub(crate) fn waited_index(
    engine: &engine::Engine,
    schema: &Schema,
    table_name: &str,
    target: &OTarget,
) -> Option<usize> {
    let table = engine.table(table_name).ok()?;
    let (OTarget::Table(t) | OTarget::Record(t, _, _)) = target;
    if *t == table.id {
        return match target {
            OTarget::Record(_, iid, _) if *iid != table.clustered.id => table
                .secondary
                .iter()
                .position(|s| s.index.id == *iid)
                .map(|p| p + 1),
            _ => Some(0),
        };
    }
    let shape = schema.table(table_name)?;
    shape
        .foreign
        .iter()
        .filter(|f| engine.table(&f.parent).is_ok_and(|p| p.id == *t))
        .map(|f| {
            let starts = |cols: &[usize]| cols.starts_with(&f.columns);
            if !shape.hidden && starts(&shape.primary_key) {
                return 0;
            }
            let model_ix = (shape.indexes.iter().chain(&shape.online)).find(|i| starts(&i.columns));
            model_ix
                .and_then(|i| table.secondary.iter().position(|s| s.def.name == i.name))
                .map_or(0, |p| p + 1)
        })
        .min()
}

/// An insert into a table without a primary key, judged in one of its
/// indexes ([`judge_insert`]). Its key ends in the hidden row id, which
/// the runner never reads; the model's number for the row stands in for
/// it, since both are taken in the same order (an insert that waited keeps
/// the one it took before the wait). The entry's successor among the rows
/// the runner knows is found by columns and then that number. Where no
/// insert took a number after this one, its row id is larger than every
/// other row's, so the entry sorts after every entry with the same
/// columns: in the clustered index the gap it goes into is the supremum's,
/// and in a secondary index it is before the first entry whose columns
/// are greater. Where others did (it waited, and they inserted meanwhile),
/// a record with the same columns may follow it, and in the clustered
/// index any record may: the engine's record there is not judged, since
/// the runner cannot read its row id.
struct KeylessInsert<'a> {
    table: &'a engine::dict::Table,
    shape: &'a TableShape,
    oracle: &'a models::lock::LockOracle,
    events: &'a [OEvent],
    trx: u64,
    /// The index's id and name.
    index: (u64, &'a str),
    /// Its key fields' columns (`None`: the row id).
    cols: &'a [Option<usize>],
    /// The model's number for the next row (`World::row_seq`).
    next_seq: u64,
    /// The indexes the insert puts its entries in after this one.
    later: &'a [u64],
}

impl KeylessInsert<'_> {
    /// The columns of a key of this index, without the row id.
    fn columns_of(&self, key: &[Option<Vec<u8>>]) -> Option<Vec<ModelValue>> {
        self.cols
            .iter()
            .zip(key)
            .filter_map(|(c, stored)| c.map(|c| (c, stored)))
            .map(|(c, stored)| match stored {
                None => Some(ModelValue::Null),
                Some(b) if self.shape.collation(c) != models::Collation::Binary => Some(
                    ModelValue::Collated(b.as_slice().into(), self.shape.collation(c)),
                ),
                Some(b) => engine::record::from_stored(&self.table.def.columns[c].ty, b)
                    .ok()
                    .map(|v| to_model(&v)),
            })
            .collect()
    }

    fn judge(&self, row: &Row, committed: &Db, known: &[&[Write]]) -> Option<String> {
        let (tid, (iid, iname)) = (self.table.id, self.index);
        let name = self.table.name();
        // A row's columns of this index, without the row id, as keys.
        let cols: Vec<usize> = self.cols.iter().filter_map(|c| *c).collect();
        let shape = self.shape;
        let project =
            |r: &Row| -> Vec<ModelValue> { cols.iter().map(|&c| shape.keyed(c, &r[c])).collect() };
        let entry = project(row);
        // The columns, then the model's number in the row id's place.
        let hidden = *shape.primary_key.first()?;
        let full: Vec<usize> = cols.iter().copied().chain([hidden]).collect();
        let entry_full: Vec<ModelValue> = full.iter().map(|&c| shape.keyed(c, &row[c])).collect();
        let newest = match row.get(hidden) {
            Some(ModelValue::Int(n)) => u64::try_from(*n).is_ok_and(|n| n + 1 >= self.next_seq),
            _ => return None,
        };
        let checks: Vec<&OEvent> = self
            .events
            .iter()
            .filter(|e| e.trx == self.trx)
            .filter(|e| matches!(&e.target, OTarget::Record(a, b, _) if *a == tid && *b == iid))
            .filter(|e| matches!(e.mode, OMode::Record(_, RKind::InsertIntention)))
            .filter(|e| matches!(e.kind, OKind::InsertChecked | OKind::Wait))
            .collect();
        let shown = || models::value::fmt_key(&entry);
        let later = inherited_after(
            self.events,
            self.trx,
            |t| matches!(t, OTarget::Record(a, b, _) if *a == tid && self.later.contains(b)),
        );
        if checks.is_empty() && self.oracle.others_lock_gaps(self.trx, tid, iid, &later) {
            return Some(format!(
                "gap locking: trx {} inserted {} into {name}.{iname} without checking its gap, while another transaction locks gaps of that index",
                self.trx,
                shown()
            ));
        }
        if checks.is_empty() {
            return None;
        }
        // The first columns above the entry's among the rows the runner
        // knows are there (the committed ones and the inserter's own
        // writes; other open transactions' inserts can only bring the real
        // successor nearer, so this bound is loose, never wrong).
        let rows = committed
            .tables
            .get(name)
            .into_iter()
            .flat_map(|t| t.values());
        let written = known
            .iter()
            .flat_map(|w| w.iter())
            .filter(|w| w.table == name)
            .filter_map(|w| w.row.as_ref());
        // Compared in place: projecting every row would allocate per row.
        let mut nearest: Option<&Row> = None;
        for r in rows.chain(written) {
            if shape.cmp_row_key(&full, r, |j| entry_full.get(j)) == std::cmp::Ordering::Greater
                && nearest.is_none_or(|n| {
                    shape.cmp_row_key(&full, r, |j| n.get(full[j])) == std::cmp::Ordering::Less
                })
            {
                nearest = Some(r);
            }
        }
        let next = nearest.map(project);
        for e in checks {
            let OTarget::Record(_, _, pos) = &e.target else {
                continue;
            };
            let wrong = match (pos, &next) {
                (None, None) => None,
                (None, Some(_)) => Some(format!(
                    "the supremum, past the record {} (the model's row number last) that follows it",
                    models::value::fmt_key(
                        &full
                            .iter()
                            .map(|&c| shape.keyed(c, &nearest.expect("next is of it")[c]))
                            .collect::<Vec<_>>()
                    )
                )),
                (Some(p), next) => {
                    let p = self.columns_of(p)?;
                    if p.is_empty() && !newest {
                        // The clustered index, a row id some rows inserted
                        // since are above: which record is unknown.
                        None
                    } else if p.is_empty() {
                        // The clustered index: the new row id is the
                        // largest, so its gap is the supremum's.
                        Some(
                            "a record, not the supremum (a new row id sorts after every row)"
                                .into(),
                        )
                    } else if p < entry || (p == entry && newest) {
                        Some(format!(
                            "{}, not above it (a new row id sorts after every entry with its columns)",
                            models::value::fmt_key(&p)
                        ))
                    } else if next.as_ref().is_some_and(|n| &p > n) {
                        Some(format!(
                            "{}, past the record {} that follows it",
                            models::value::fmt_key(&p),
                            models::value::fmt_key(next.as_ref().expect("checked"))
                        ))
                    } else {
                        None
                    }
                }
            };
            if let Some(v) = wrong {
                return Some(format!(
                    "gap locking: trx {}'s insert of {} (and a new row id) into {name}.{iname} checked the gap before {v}",
                    self.trx,
                    shown()
                ));
            }
        }
        None
    }
}

/// The gap locks inherited in this step's `events` after `trx` had put
/// its entry into an index: after its first event in one of the indexes
/// it inserts into after that one (`later`: it had left this index then,
/// default seed 9161: a waiting insert into a secondary index chose a
/// deadlock victim whose rolled-back record handed its locks to the
/// clustered record the insert had just put in), or else after its last
/// event (io-errors seed 11531: purge at the end of the call, after an
/// autocommit insert had committed, moved a reader's record locks to the
/// gaps). They did not exist when its insert ran, so it had no reason to
/// check them. None when the step has no event of `trx`, whose insert's
/// place in the step is then unknown.
fn inherited_after(events: &[OEvent], trx: u64, later: impl Fn(&OTarget) -> bool) -> Vec<u64> {
    let left = events.iter().position(|e| e.trx == trx && later(&e.target));
    let Some(from) = left.or_else(|| events.iter().rposition(|e| e.trx == trx)) else {
        return Vec::new();
    };
    events[from + 1..]
        .iter()
        .filter(|e| e.kind == OKind::Inherited)
        .map(|e| e.lock)
        .collect()
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
    schema: &Schema,
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
    let shape = schema.table(table.name())?;
    let (index_name, cols) = key_columns(table, shape, index_id, key)?;
    let pk = primary_key_of(table, &cols)?;
    let name = table.name();
    let has = |row: &Row| {
        cols.iter().all(|(c, v)| {
            row.get(*c)
                .is_some_and(|x| shape.cmp_key_values(*c, x, v).is_eq())
        })
    };
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
        let entry: Vec<ModelValue> = cols.iter().map(|(_, v)| v.clone()).collect();
        let v = successor_error(table, shape, committed, open, &entry, heir)?;
        return Some(format!(
            "gap locking: trx {}'s lock on {name}.{index_name} {} was inherited by {v}",
            r.trx,
            models::value::fmt_key(&entry)
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
