//! Row changes: insert, update, delete-mark. Mirrors InnoDB's
//! `row0ins.cc` and `row0upd.cc`.
//!
//! Every change locks what it touches first (see [`super::locking`]): an
//! X record lock on the clustered record it changes, an insert intention
//! on the gap a new record goes into, S locks for duplicate checks. A
//! request that must wait ends the operation with [`Outcome::Wait`]; the
//! engine rolls back the request's partial changes and runs it again once
//! the lock is granted (the locks it took stay, as in InnoDB), except an
//! insert past its clustered record, which stays in place and goes on from
//! the index it waited in ([`insert`]).

use super::locking::{insert_check, LockCtx};
use super::{place, reps_of, sec_delete_mark, sec_entry, sec_insert, Rep, Source};
use crate::btree::{self, Bound, Cursor, Direction, Key};
use crate::dict::{ClusteredField, Table};
use crate::error::{Error, Result};
use crate::lock::{LockId, RecKey, RecKind, RecMode};
use crate::pager::Pager;
use crate::record;
use crate::trx::undo::{self, RollPtr, UndoKind, UndoRecord};
use crate::trx::{Trx, TrxSys};

mod secondary;

use secondary::{change_secondaries, insert_secondaries, mark_secondaries};

/// What a row change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the number of rows changed.
    Done(u64),
    /// A lock must be waited for: the transaction's waiting request.
    Wait(LockId),
}

/// Makes sure the transaction has an undo log.
pub fn ensure_undo(pager: &mut Pager, sys: &mut TrxSys, trx: &mut Trx) -> Result<()> {
    if trx.undo.is_none() {
        let slot = sys.take_slot()?;
        match undo::create_log(pager, trx.id, slot) {
            Ok(log) => trx.undo = Some(log),
            Err(e) => {
                sys.give_slot(slot);
                return Err(e);
            }
        }
    }
    Ok(())
}

fn write_undo(
    pager: &mut Pager,
    sys: &mut TrxSys,
    trx: &mut Trx,
    mut rec: UndoRecord,
) -> Result<RollPtr> {
    ensure_undo(pager, sys, trx)?;
    let log = trx.undo.as_mut().expect("undo log just ensured");
    rec.undo_no = log.next_undo_no;
    let ptr = undo::append(pager, log, &rec)?;
    Ok(ptr)
}

/// Column values as a 1062 message prints them, joined by `-`.
pub(crate) fn format_values(table: &Table, cols: &[usize], stored: &[Option<Vec<u8>>]) -> String {
    cols.iter()
        .map(|&c| match &stored[c] {
            None => "NULL".to_string(),
            Some(b) => match record::from_stored(&table.def.columns[c].ty, b) {
                Ok(record::Value::Int(i)) => i.to_string(),
                Ok(record::Value::UInt(u)) => u.to_string(),
                Ok(record::Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
                _ => "?".into(),
            },
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// The stored form of a DB_ROW_ID (6 bytes, big-endian).
pub fn row_id_bytes(id: u64) -> Vec<u8> {
    id.to_be_bytes()[2..].to_vec()
}

/// The first `len` bytes of a stored value: what a key field on a column
/// prefix keeps of it.
pub fn cut(v: &Option<Vec<u8>>, len: Option<usize>) -> Option<Vec<u8>> {
    v.as_ref()
        .map(|b| b[..len.map_or(b.len(), |p| b.len().min(p))].to_vec())
}

/// The stored value of clustered field `f` for a row's stored columns: a
/// column, or a key field's prefix of one; `None` for a system field.
fn column_field(table: &Table, f: usize, cols: &[Option<Vec<u8>>]) -> Option<Vec<u8>> {
    match table.fields[f] {
        ClusteredField::Column(c) => cols[c].clone(),
        ClusteredField::Prefix { column, len } => cut(&cols[column], Some(len)),
        ClusteredField::RowId | ClusteredField::TrxId | ClusteredField::RollPtr => None,
    }
}

/// The clustered key a row's stored columns give (or its row id): each
/// key column whole, or its prefix where the key keeps one.
pub fn key_of_columns(table: &Table, cols: &[Option<Vec<u8>>], row_id: Option<u64>) -> Key {
    if table.def.primary_key.is_empty() {
        let id = row_id.expect("a table without a primary key needs a row id");
        vec![Some(row_id_bytes(id))]
    } else {
        (table.def.primary_key.iter().enumerate())
            .map(|(i, &c)| cut(&cols[c], table.def.primary_prefix(i).map(usize::from)))
            .collect()
    }
}

/// The key of secondary index `sec`'s entry for a row's stored columns
/// (and its row id, for a table without a primary key): the fields
/// [`Table::new`](crate::dict::Table::new) maps from the clustered record,
/// each cut to the prefix the entry keeps.
pub fn sec_key_of_columns(
    table: &Table,
    sec: &crate::dict::Secondary,
    cols: &[Option<Vec<u8>>],
    row_id: Option<u64>,
) -> Key {
    (sec.from_clustered.iter().zip(&sec.prefix))
        .map(|(&f, &p)| {
            let whole = match table.fields[f] {
                ClusteredField::RowId => row_id.map(row_id_bytes),
                _ => column_field(table, f, cols),
            };
            cut(&whole, p)
        })
        .collect()
}

fn lacks(table: &Table) -> Error {
    Error::Corrupt {
        file: table.name().to_string(),
        reason: "secondary index lacks a primary key field".into(),
    }
}

/// The clustered key stored in a secondary entry.
pub fn clustered_key_of_entry(
    table: &Table,
    sec: &crate::dict::Secondary,
    entry: &[u8],
) -> Result<Key> {
    let k = btree::key_of(&sec.index, 0, entry)?;
    let mut out = Vec::with_capacity(table.clustered.n_key);
    for f in 0..table.clustered.n_key {
        // The whole field: a prefix of a key column is followed by the
        // column itself. A key field on a column prefix is cut from the
        // column where the index holds it whole instead.
        let j =
            (sec.from_clustered.iter().zip(&sec.prefix)).position(|(&x, p)| x == f && p.is_none());
        let v = match (j, table.fields[f]) {
            (Some(j), _) => k[j].clone(),
            (None, ClusteredField::Prefix { column, len }) => {
                let whole = (sec.from_clustered.iter().zip(&sec.prefix))
                    .position(|(&x, p)| x == table.col_field[column] && p.is_none());
                match whole {
                    Some(j) => cut(&k[j], Some(len)),
                    None => return Err(lacks(table)),
                }
            }
            _ => return Err(lacks(table)),
        };
        out.push(v);
    }
    Ok(out)
}

/// What runs before an insert puts each index's entry in: the
/// clustered index's (`None`) and each secondary index's (`Some(i)`, its
/// place in `Table::secondary`). `row_ins_index_entry` checks the FOREIGN
/// KEY constraints of an index there, before the entry's own duplicate
/// check and insertion; `Some(lock)` if the insert must wait.
pub type BeforeIndex<'h> =
    dyn FnMut(&mut Pager, &mut LockCtx<'_>, Option<usize>) -> Result<Option<LockId>> + 'h;

/// Nothing before each index's entry (a row with no constraints to check).
pub fn no_checks(_: &mut Pager, _: &mut LockCtx<'_>, _: Option<usize>) -> Result<Option<LockId>> {
    Ok(None)
}

/// Inserts a row given its stored columns, running `before` ahead of each
/// index's entry ([`BeforeIndex`]), index by index as
/// `row_ins_index_entry_step` does: the clustered record first (its
/// duplicate check, its insert intention), then each secondary index's
/// checks and entry. `progress` is where the insert stands: `None` until
/// its clustered record is in, then how many secondary entries are. An
/// insert that must wait past its clustered record leaves it in place
/// (another transaction that locks it waits for this one, a READ
/// UNCOMMITTED reader sees it, and it counts in the deadlock weight) and,
/// run again with the same `progress`, goes on from the index it waited
/// in, as `row_insert_for_mysql` runs the same insert node again.
#[allow(clippy::too_many_arguments)]
pub fn insert(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    cols: &[Option<Vec<u8>>],
    row_id: Option<u64>,
    ctx: &mut LockCtx<'_>,
    before: &mut BeforeIndex<'_>,
    progress: &mut Option<usize>,
) -> Result<Outcome> {
    let key = key_of_columns(table, cols, row_id);
    let refs = btree::key_refs(&key);
    if let Some(done) = progress.as_mut() {
        let Some(found) = btree::get(pager, &table.clustered, &refs)? else {
            return Err(Error::Corrupt {
                file: table.name().to_string(),
                reason: "the clustered record of an insert that waited is gone".into(),
            });
        };
        return insert_secondaries(pager, table, cols, &found.rec, ctx, before, done);
    }
    if let Some(w) = before(pager, ctx, None)? {
        return Ok(Outcome::Wait(w));
    }
    let (existing, hint) = btree::get_for_insert(pager, &table.clustered, &refs)?;
    let mut successor = None;
    match &existing {
        Some(found) => {
            // The duplicate check locks the record it finds (S, record
            // only); a delete-marked one is taken over in place (X).
            let deleted = record::is_deleted(&found.rec);
            let mode = if deleted || ctx.duplicates {
                RecMode::X
            } else {
                RecMode::S
            };
            if let Some(w) = ctx.record(
                pager,
                table,
                &table.clustered,
                RecKey::Key(btree::lock_key(&table.clustered, key.clone())),
                mode,
                RecKind::RecNotGap,
                Some(&found.rec),
            )? {
                return Ok(Outcome::Wait(w));
            }
            if !deleted {
                // The key as the index holds it: prefixes cut.
                let mut shown = cols.to_vec();
                for (&c, k) in table.def.primary_key.iter().zip(&key) {
                    shown[c] = k.clone();
                }
                return Err(Error::DuplicateKey {
                    key: format_values(table, &table.def.primary_key, &shown),
                    index: "PRIMARY".into(),
                });
            }
        }
        None => {
            let (next, wait) = insert_check(ctx, pager, table.id, &table.clustered, &key)?;
            if let Some(w) = wait {
                return Ok(Outcome::Wait(w));
            }
            successor = next;
        }
    }
    if let Some(found) = existing {
        // Insert over a delete-marked row with the same key: an update of
        // it that InnoDB logs as TRX_UNDO_UPD_DEL_REC
        // (`row_ins_clust_index_entry_by_modify`); the row's old entries
        // are delete-marked already, its new ones go in as a new row's.
        let sources = new_sources(table, cols, row_id, trx.id);
        let sources: Vec<Source> = sources.iter().map(|s| Source::New(s.as_deref())).collect();
        let done = update_record(
            pager,
            sys,
            table,
            trx,
            &found.rec,
            &sources,
            UndoKind::UpdDel,
            ctx,
            false,
            &mut None,
        )?;
        debug_assert_eq!(done, Outcome::Done(1), "no secondary entry was touched");
        let Some(now) = btree::get(pager, &table.clustered, &refs)? else {
            return Err(Error::Corrupt {
                file: table.name().to_string(),
                reason: "a record taken over by an insert is gone".into(),
            });
        };
        let done = progress.insert(0);
        return insert_secondaries(pager, table, cols, &now.rec, ctx, before, done);
    }
    let undo_rec = UndoRecord {
        kind: UndoKind::Insert,
        undo_no: 0,
        table_id: table.id,
        key: key.clone(),
        updated: vec![],
        old_rec: vec![],
        externals_freed: false,
    };
    let ptr = write_undo(pager, sys, trx, undo_rec.clone())?;
    let mut sources = new_sources(table, cols, row_id, trx.id);
    sources[table.roll_ptr_field] = Some(ptr.encode().to_vec());
    let sources: Vec<Source> = sources.iter().map(|s| Source::New(s.as_deref())).collect();
    let (mut reps, written) = place(pager, table, &sources)?;
    let mut rec = super::encode(&table.clustered.leaf, &reps, false);
    // Room in the log before each index operation (a split logs pages
    // whole), as InnoDB's row_ins_index_entry_step does with
    // log_free_check: no mini-transaction is open between them.
    pager.free_check()?;
    // The leaf alone first (`btr_cur_optimistic_insert`), then the tree
    // (`btr_cur_pessimistic_insert`). A compressed leaf that refuses the
    // record after the undo record was written leaves that record in the
    // log, and each attempt after it writes another: the record points at
    // the last, and a rollback passes the others, whose roll pointer no
    // record has (`row_undo_search_clust_to_pcur`). They count in the
    // transaction's weight as InnoDB's do.
    let done = match btree::try_insert_with_hint(pager, &table.clustered, &rec, &hint) {
        Ok(btree::Optimistic::Done) => Ok(()),
        Ok(btree::Optimistic::NoRoom) => {
            btree::insert_with_hint(pager, &table.clustered, &rec, &hint)
        }
        Ok(btree::Optimistic::Refused) => {
            let mut again = Ok(());
            for _ in 0..sys.refused_insert_undo {
                match write_undo(pager, sys, trx, undo_rec.clone()) {
                    Ok(p) => reps[table.roll_ptr_field] = super::Rep::Inline(p.encode().to_vec()),
                    Err(e) => {
                        again = Err(e);
                        break;
                    }
                }
            }
            again.and_then(|()| {
                rec = super::encode(&table.clustered.leaf, &reps, false);
                btree::insert_with_hint(pager, &table.clustered, &rec, &hint)
            })
        }
        Err(e) => Err(e),
    };
    if let Err(e) = done {
        if !e.stops_engine() {
            super::free_chains(pager, &written)?;
        }
        return Err(e);
    }
    // The new record keeps the gap before it locked for whoever locked
    // the gap it split. It takes no lock of its own: its DB_TRX_ID is its
    // inserter's implicit X lock, made explicit only if another
    // transaction asks for it (LockCtx::record).
    if let Some(next) = &successor {
        ctx.locks.inherit_gap_on_insert(
            table.id,
            table.clustered.id,
            &btree::lock_key(&table.clustered, key.clone()),
            next,
            ctx.now_us,
        );
    }
    let done = progress.insert(0);
    insert_secondaries(pager, table, cols, &rec, ctx, before, done)
}

/// The stored value of every clustered field of a new row (roll pointer
/// left as a placeholder).
fn new_sources(
    table: &Table,
    cols: &[Option<Vec<u8>>],
    row_id: Option<u64>,
    trx_id: u64,
) -> Vec<Option<Vec<u8>>> {
    table
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| match *f {
            ClusteredField::Column(_) | ClusteredField::Prefix { .. } => {
                column_field(table, i, cols)
            }
            ClusteredField::RowId => Some(row_id.unwrap_or(0).to_be_bytes()[2..].to_vec()),
            ClusteredField::TrxId => Some(super::trx_id_bytes(trx_id)),
            ClusteredField::RollPtr => Some(vec![0u8; undo::ROLL_PTR_LEN]),
        })
        .collect()
}

/// Replaces a live (or, for `UpdDel`, delete-marked) clustered record with
/// a new image, logging the old one.
#[allow(clippy::too_many_arguments)]
fn update_record(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    old_rec: &[u8],
    sources: &[Source<'_>],
    kind: UndoKind,
    ctx: &mut LockCtx<'_>,
    secondaries: bool,
    kept: &mut Option<KeptChange>,
) -> Result<Outcome> {
    let old_reps = reps_of(&table.clustered.leaf, old_rec)?;
    let (mut reps, written) = place(pager, table, sources)?;
    let updated: Vec<u16> = (0..reps.len())
        .filter(|&i| matches!(table.fields[i], ClusteredField::Column(_)) && reps[i] != old_reps[i])
        .map(|i| i as u16)
        .collect();
    let ptr = match write_undo(
        pager,
        sys,
        trx,
        UndoRecord {
            kind,
            undo_no: 0,
            table_id: table.id,
            key: vec![],
            updated,
            old_rec: old_rec.to_vec(),
            externals_freed: false,
        },
    ) {
        Ok(p) => p,
        Err(e) => {
            if !e.stops_engine() {
                super::free_chains(pager, &written)?;
            }
            return Err(e);
        }
    };
    reps[table.trx_id_field] = Rep::Inline(super::trx_id_bytes(trx.id));
    reps[table.roll_ptr_field] = Rep::Inline(ptr.encode().to_vec());
    let new_rec = super::encode(&table.clustered.leaf, &reps, false);
    pager.free_check()?;
    if let Err(e) = btree::update(pager, &table.clustered, &new_rec) {
        if !e.stops_engine() {
            super::free_chains(pager, &written)?;
        }
        return Err(e);
    }
    if !secondaries {
        return Ok(Outcome::Done(1));
    }
    match change_secondaries(pager, table, old_rec, &new_rec, kind, ctx, 0)? {
        Ok(()) => Ok(Outcome::Done(1)),
        Err((done, w)) => {
            if kind == UndoKind::UpdExist {
                *kept = Some(KeptChange {
                    old_rec: old_rec.to_vec(),
                    done,
                });
            }
            Ok(Outcome::Wait(w))
        }
    }
}

/// What an UPDATE in place or a DELETE of one row has done when it waits
/// for a lock on a secondary entry (`lock_sec_rec_modify_check_and_lock`,
/// or an insert intention): its clustered record is changed, its undo
/// record written, and the entries of the first `done` secondary indexes
/// changed. InnoDB's thread waits inside the row operation
/// (`row_upd_sec_step`) and goes on from there when granted, so the
/// change counts in the transaction's deadlock weight while it waits;
/// the statement runs again from here ([`update_returning`],
/// [`delete_returning`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptChange {
    /// The row's clustered record before the change.
    pub old_rec: Vec<u8>,
    /// Secondary indexes done.
    pub done: usize,
}

/// The stored form of a row's columns, one per column (`None`: NULL).
pub type Columns = Vec<Option<Vec<u8>>>;

/// Updates the row with clustered key `key`: `changes` are (column, new
/// stored value). A change of the primary key is a delete and an insert.
pub fn update(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    key: &Key,
    changes: &[(usize, Option<Vec<u8>>)],
    ctx: &mut LockCtx<'_>,
) -> Result<Outcome> {
    update_returning(
        pager, sys, table, trx, key, changes, ctx, &mut None, &mut None, &mut None,
    )
}

/// [`update`], leaving the row's columns as they were before in `old`
/// when it changes the row (the foreign key checks that follow a change
/// need them). An update that moves the row (a change of its primary
/// key) and must wait in its insert keeps its delete and what the insert
/// put in (`row_upd_clust_rec_by_insert` leaves its node at
/// UPD_NODE_INSERT_CLUSTERED): `progress` says so (`Some`, with the
/// insert's own progress), and the update run again with it goes on with
/// the insert. An update in place that must wait in a secondary index
/// keeps its clustered change and the entries done (`kept`,
/// [`KeptChange`]), and the update run again with it goes on from there.
#[allow(clippy::too_many_arguments)]
pub fn update_returning(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    key: &Key,
    changes: &[(usize, Option<Vec<u8>>)],
    ctx: &mut LockCtx<'_>,
    old: &mut Option<Columns>,
    progress: &mut Option<Option<usize>>,
    kept: &mut Option<KeptChange>,
) -> Result<Outcome> {
    if let Some(k) = kept.take() {
        let now = kept_record(pager, table, key, "update")?;
        *old = Some(current_columns(pager, table, &k.old_rec)?);
        let kind = UndoKind::UpdExist;
        return Ok(
            match change_secondaries(pager, table, &k.old_rec, &now, kind, ctx, k.done)? {
                Ok(()) => Outcome::Done(1),
                Err((done, w)) => {
                    *kept = Some(KeptChange { done, ..k });
                    Outcome::Wait(w)
                }
            },
        );
    }
    if let Some(inserted) = progress.take() {
        // The row is delete-marked, by this transaction, under its X lock.
        let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(key))? else {
            return Err(Error::Corrupt {
                file: table.name().to_string(),
                reason: "the old record of an update that waited in its insert is gone".into(),
            });
        };
        let old_cols = current_columns(pager, table, &found.rec)?;
        *old = Some(old_cols.clone());
        let mut new_cols = old_cols;
        for (c, v) in changes {
            new_cols[*c] = v.clone();
        }
        return insert_moved(pager, sys, table, trx, &new_cols, ctx, inserted, progress);
    }
    let Some(found) = lock_for_change(pager, table, key, ctx)? else {
        return Ok(Outcome::Done(0));
    };
    let found = match found {
        Locked::Wait(w) => return Ok(Outcome::Wait(w)),
        Locked::Deleted => return Ok(Outcome::Done(0)),
        Locked::Live(found) => found,
    };
    let old_reps = reps_of(&table.clustered.leaf, &found.rec)?;
    let mut any_change = false;
    for (c, v) in changes {
        let f = table.col_field[*c];
        let differs = match (&old_reps[f], v) {
            (Rep::Null, None) => false,
            (Rep::Inline(a), Some(b)) => a != b,
            // MySQL counts changed rows: setting a long column to the value
            // it has is no change, so compare with the off-page part too
            // (read only when the lengths and local prefixes agree).
            (Rep::External { prefix, reference }, Some(b)) => {
                b.len() != prefix.len() + reference.len as usize
                    || !b.starts_with(prefix)
                    || crate::blob::read(pager, reference)? != b[prefix.len()..]
            }
            _ => true,
        };
        any_change |= differs;
    }
    if !any_change {
        return Ok(Outcome::Done(0));
    }
    // The row's new columns; unique secondary indexes are checked for
    // them index by index after the clustered change (`change_secondaries`).
    let old_cols = current_columns(pager, table, &found.rec)?;
    *old = Some(old_cols.clone());
    let mut new_cols = old_cols.clone();
    for (c, v) in changes {
        new_cols[*c] = v.clone();
    }
    // A change of a key field's bytes moves the row, as
    // row_upd_changes_ord_field_binary decides: for a key on a column
    // prefix, a change of the prefix.
    let pk_changes = !table.def.primary_key.is_empty()
        && key_of_columns(table, &old_cols, None) != key_of_columns(table, &new_cols, None);
    if pk_changes {
        // A delete and an insert (`row_upd_clust_rec_by_insert`), whose
        // duplicate checks are the insert's, index by index. A wait in the
        // delete (for the row's lock) undoes it and runs the update again;
        // a wait in the insert keeps the delete (see `progress`).
        if let Outcome::Wait(w) = delete(pager, sys, table, trx, key, ctx)? {
            return Ok(Outcome::Wait(w));
        }
        // The changed row's constraints are checked after the update
        // (`Engine::check_parents`).
        return insert_moved(pager, sys, table, trx, &new_cols, ctx, None, progress);
    }
    let sources: Vec<Source> = (0..table.fields.len())
        .map(|f| match table.fields[f] {
            ClusteredField::Column(c) => match changes.iter().find(|(cc, _)| *cc == c) {
                Some((_, v)) => Source::New(v.as_deref()),
                None => Source::Keep(&old_reps[f]),
            },
            _ => Source::Keep(&old_reps[f]),
        })
        .collect();
    update_record(
        pager,
        sys,
        table,
        trx,
        &found.rec,
        &sources,
        UndoKind::UpdExist,
        ctx,
        true,
        kept,
    )
}

/// The clustered record of the row whose change waited with its work kept
/// ([`KeptChange`]): it is there, changed by this transaction.
fn kept_record(pager: &mut Pager, table: &Table, key: &Key, what: &str) -> Result<Vec<u8>> {
    match btree::get(pager, &table.clustered, &btree::key_refs(key))? {
        Some(found) => Ok(found.rec),
        None => Err(Error::Corrupt {
            file: table.name().to_string(),
            reason: format!("the record of an {what} that waited with its change kept is gone"),
        }),
    }
}

/// The insert of a row-moving update ([`update_returning`]), its
/// progress `inserted` so far: a wait keeps the update's progress.
#[allow(clippy::too_many_arguments)]
fn insert_moved(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    new_cols: &[Option<Vec<u8>>],
    ctx: &mut LockCtx<'_>,
    mut inserted: Option<usize>,
    progress: &mut Option<Option<usize>>,
) -> Result<Outcome> {
    let o = insert(
        pager,
        sys,
        table,
        trx,
        new_cols,
        None,
        ctx,
        &mut no_checks,
        &mut inserted,
    )?;
    if matches!(o, Outcome::Wait(_)) {
        *progress = Some(inserted);
    }
    Ok(o)
}

/// A row an update or delete found and locked.
enum Locked {
    /// Must wait for this lock.
    Wait(LockId),
    /// Locked, but delete-marked: nothing to change.
    Deleted,
    /// Locked and live.
    Live(btree::Found),
}

/// Finds the row an UPDATE or DELETE by primary key changes and X-locks
/// it (`lock_clust_rec_modify_check_and_lock` after a unique search): the
/// record alone, delete-marked or not; a missing row locks the gap where
/// it would be (REPEATABLE READ). `None` if there is no such row.
fn lock_for_change(
    pager: &mut Pager,
    table: &Table,
    key: &Key,
    ctx: &mut LockCtx<'_>,
) -> Result<Option<Locked>> {
    let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(key))? else {
        if ctx.gaps {
            let next = super::locking::successor(pager, &table.clustered, key)?;
            let (clustered, x, gap) = (&table.clustered, RecMode::X, RecKind::Gap);
            if let Some(w) = ctx.record(pager, table, clustered, next, x, gap, None)? {
                return Ok(Some(Locked::Wait(w)));
            }
        }
        return Ok(None);
    };
    let deleted = record::is_deleted(&found.rec);
    if ctx.passes_committed_delete(table, &found.rec)? {
        return Ok(Some(Locked::Deleted));
    }
    // A search for a whole primary key that finds it locks the record
    // alone, delete-marked or not, and stops there: 1.0.6's
    // row_search_for_mysql takes LOCK_REC_NOT_GAP for an exact PAGE_CUR_GE
    // match on the clustered index, and a delete-marked one ends the
    // unique search without a lock on the record after it.
    let kind = RecKind::RecNotGap;
    let mark = ctx.locks.next_lock_id();
    let at = RecKey::Key(btree::lock_key(&table.clustered, key.clone()));
    if let Some(w) = ctx.record(
        pager,
        table,
        &table.clustered,
        at.clone(),
        RecMode::X,
        kind,
        Some(&found.rec),
    )? {
        return Ok(Some(Locked::Wait(w)));
    }
    if deleted {
        let target = crate::lock::Target::Record {
            table: table.id,
            index: table.clustered.id,
            key: at,
        };
        super::select::let_go_deleted(ctx, table, &found.rec, &[target], RecMode::X, mark)?;
        return Ok(Some(Locked::Deleted));
    }
    Ok(Some(Locked::Live(found)))
}

/// The stored form of every column of a record, off-page columns read in.
pub fn current_columns(
    pager: &mut Pager,
    table: &Table,
    rec: &[u8],
) -> Result<Vec<Option<Vec<u8>>>> {
    let reps = reps_of(&table.clustered.leaf, rec)?;
    let mut out = Vec::with_capacity(table.def.columns.len());
    for c in 0..table.def.columns.len() {
        out.push(match &reps[table.col_field[c]] {
            Rep::Null => None,
            Rep::Inline(b) => Some(b.clone()),
            Rep::External { prefix, reference } => {
                let mut v = prefix.clone();
                v.extend_from_slice(&crate::blob::read(pager, reference)?);
                Some(v)
            }
        });
    }
    Ok(out)
}

/// Delete-marks the row with clustered key `key` and its secondary entries.
pub fn delete(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    key: &Key,
    ctx: &mut LockCtx<'_>,
) -> Result<Outcome> {
    delete_returning(pager, sys, table, trx, key, ctx, None, &mut None)
}

/// [`delete`], leaving the deleted row's columns in `old` when it is
/// given and the row is deleted. A delete that must wait to delete-mark
/// a secondary entry keeps its clustered delete mark and the entries
/// marked (`kept`, [`KeptChange`]), and the delete run again with it
/// goes on from there.
#[allow(clippy::too_many_arguments)]
pub fn delete_returning(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    key: &Key,
    ctx: &mut LockCtx<'_>,
    old: Option<&mut Option<Columns>>,
    kept: &mut Option<KeptChange>,
) -> Result<Outcome> {
    if let Some(k) = kept.take() {
        kept_record(pager, table, key, "delete")?;
        if let Some(old) = old {
            *old = Some(current_columns(pager, table, &k.old_rec)?);
        }
        return mark_secondaries(pager, table, k.old_rec, ctx, k.done, kept);
    }
    let refs = btree::key_refs(key);
    let found = match lock_for_change(pager, table, key, ctx)? {
        None | Some(Locked::Deleted) => return Ok(Outcome::Done(0)),
        Some(Locked::Wait(w)) => return Ok(Outcome::Wait(w)),
        Some(Locked::Live(found)) => found,
    };
    if let Some(old) = old {
        *old = Some(current_columns(pager, table, &found.rec)?);
    }
    let ptr = write_undo(
        pager,
        sys,
        trx,
        UndoRecord {
            kind: UndoKind::DelMark,
            undo_no: 0,
            table_id: table.id,
            key: vec![],
            updated: vec![],
            old_rec: found.rec.clone(),
            externals_freed: false,
        },
    )?;
    let mut reps = reps_of(&table.clustered.leaf, &found.rec)?;
    reps[table.trx_id_field] = Rep::Inline(super::trx_id_bytes(trx.id));
    reps[table.roll_ptr_field] = Rep::Inline(ptr.encode().to_vec());
    let new_rec = super::encode(&table.clustered.leaf, &reps, true);
    btree::set_delete_mark(pager, &table.clustered, &refs, true, Some(&new_rec))?;
    mark_secondaries(pager, table, found.rec, ctx, 0, kept)
}
