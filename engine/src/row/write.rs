//! Row changes: insert, update, delete-mark. Mirrors InnoDB's
//! `row0ins.cc` and `row0upd.cc`.
//!
//! Before changing a record, a change checks its implicit lock: a record
//! whose DB_TRX_ID belongs to another active transaction is being changed
//! by it, and the change must wait for that transaction to end
//! ([`Outcome::Wait`]). Nothing is changed before that check, so a waiting
//! statement can be retried from the start.

use super::{place, reps_of, sec_delete_mark, sec_entry, sec_insert, Rep, Source};
use crate::btree::{self, Bound, Cursor, Direction, Key};
use crate::dict::{ClusteredField, Table};
use crate::error::{Error, Result};
use crate::pager::Pager;
use crate::record;
use crate::trx::undo::{self, RollPtr, UndoKind, UndoRecord};
use crate::trx::{Trx, TrxSys};

/// What a row change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the number of rows changed.
    Done(u64),
    /// Another active transaction holds the row: wait for it to end.
    Wait(u64),
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
    trx.undo_records += 1;
    Ok(ptr)
}

/// A key for messages: the values joined by '-', as MySQL prints them.
pub fn format_key(key: &Key) -> String {
    key.iter()
        .map(|f| match f {
            None => "NULL".to_string(),
            Some(b) => String::from_utf8_lossy(b).into_owned(),
        })
        .collect::<Vec<_>>()
        .join("-")
}

fn format_values(table: &Table, cols: &[usize], stored: &[Option<Vec<u8>>]) -> String {
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

/// The clustered key a row's stored columns give (or its row id).
pub fn key_of_columns(table: &Table, cols: &[Option<Vec<u8>>], row_id: Option<u64>) -> Key {
    if table.def.primary_key.is_empty() {
        let id = row_id.expect("a table without a primary key needs a row id");
        vec![Some(id.to_be_bytes()[2..].to_vec())]
    } else {
        table
            .def
            .primary_key
            .iter()
            .map(|&c| cols[c].clone())
            .collect()
    }
}

/// Checks unique secondary indexes for a new record image; returns the
/// transaction to wait for, if any.
fn check_unique(
    pager: &mut Pager,
    sys: &TrxSys,
    table: &Table,
    trx: &Trx,
    cols: &[Option<Vec<u8>>],
    own_key: Option<&Key>,
) -> Result<Option<u64>> {
    for sec in table.secondary.iter().filter(|s| s.def.unique) {
        let prefix: Key = sec.def.columns.iter().map(|&c| cols[c].clone()).collect();
        if prefix.iter().any(|f| f.is_none()) {
            continue; // NULLs never collide
        }
        let mut cur = Cursor::new(
            Bound::Included(prefix.clone()),
            Bound::Included(prefix.clone()),
            Direction::Forward,
        );
        while let Some(entry) = cur.next(pager, &sec.index)? {
            let ck = clustered_key_of_entry(table, sec, &entry)?;
            if Some(&ck) == own_key {
                continue;
            }
            let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(&ck))? else {
                continue;
            };
            let t = super::trx_id_of(table, &found.rec)?;
            if t != trx.id && sys.is_active(t) {
                return Ok(Some(t));
            }
            if !record::is_deleted(&found.rec) {
                let e = sec_entry(table, sec, &found.rec)?;
                let ek = btree::key_of(&sec.index, 0, &e)?;
                if ek[..prefix.len()] == prefix[..] {
                    return Err(Error::DuplicateKey {
                        key: format_values(table, &sec.def.columns, cols),
                        index: sec.def.name.clone(),
                    });
                }
            }
        }
    }
    Ok(None)
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
        let j = sec
            .from_clustered
            .iter()
            .position(|&x| x == f)
            .ok_or_else(|| Error::Corrupt {
                file: table.name().to_string(),
                reason: "secondary index lacks a primary key field".into(),
            })?;
        out.push(k[j].clone());
    }
    Ok(out)
}

/// Inserts a row given its stored columns.
pub fn insert(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    cols: &[Option<Vec<u8>>],
    row_id: Option<u64>,
) -> Result<Outcome> {
    let key = key_of_columns(table, cols, row_id);
    let refs = btree::key_refs(&key);
    let (existing, hint) = btree::get_for_insert(pager, &table.clustered, &refs)?;
    if let Some(found) = &existing {
        let t = super::trx_id_of(table, &found.rec)?;
        if t != trx.id && sys.is_active(t) {
            return Ok(Outcome::Wait(t));
        }
        if !record::is_deleted(&found.rec) {
            return Err(Error::DuplicateKey {
                key: format_values(table, &table.def.primary_key, cols),
                index: "PRIMARY".into(),
            });
        }
    }
    if let Some(t) = check_unique(pager, sys, table, trx, cols, None)? {
        return Ok(Outcome::Wait(t));
    }
    if let Some(found) = existing {
        // Insert over a delete-marked row with the same key: an update of
        // it that InnoDB logs as TRX_UNDO_UPD_DEL_REC.
        let sources = new_sources(table, cols, row_id, trx.id);
        let sources: Vec<Source> = sources.iter().map(|s| Source::New(s.as_deref())).collect();
        return update_record(
            pager,
            sys,
            table,
            trx,
            &found.rec,
            &sources,
            UndoKind::UpdDel,
        );
    }
    let ptr = write_undo(
        pager,
        sys,
        trx,
        UndoRecord {
            kind: UndoKind::Insert,
            undo_no: 0,
            table_id: table.id,
            key: key.clone(),
            updated: vec![],
            old_rec: vec![],
            externals_freed: false,
        },
    )?;
    let mut sources = new_sources(table, cols, row_id, trx.id);
    sources[table.roll_ptr_field] = Some(ptr.encode().to_vec());
    let sources: Vec<Source> = sources.iter().map(|s| Source::New(s.as_deref())).collect();
    let (reps, written) = place(pager, table, &sources)?;
    let rec = super::encode(&table.clustered.leaf, &reps, false);
    if let Err(e) = btree::insert_with_hint(pager, &table.clustered, &rec, &hint) {
        if !e.stops_engine() {
            super::free_chains(pager, &written)?;
        }
        return Err(e);
    }
    for sec in &table.secondary {
        let e = sec_entry(table, sec, &rec)?;
        sec_insert(pager, sec, &e)?;
    }
    Ok(Outcome::Done(1))
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
        .map(|f| match *f {
            ClusteredField::Column(c) => cols[c].clone(),
            ClusteredField::RowId => Some(row_id.unwrap_or(0).to_be_bytes()[2..].to_vec()),
            ClusteredField::TrxId => Some(super::trx_id_bytes(trx_id)),
            ClusteredField::RollPtr => Some(vec![0u8; undo::ROLL_PTR_LEN]),
        })
        .collect()
}

/// Replaces a live (or, for `UpdDel`, delete-marked) clustered record with
/// a new image, logging the old one.
fn update_record(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    old_rec: &[u8],
    sources: &[Source<'_>],
    kind: UndoKind,
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
    if let Err(e) = btree::update(pager, &table.clustered, &new_rec) {
        if !e.stops_engine() {
            super::free_chains(pager, &written)?;
        }
        return Err(e);
    }
    for sec in &table.secondary {
        let old_e = sec_entry(table, sec, old_rec)?;
        let new_e = sec_entry(table, sec, &new_rec)?;
        if old_e != new_e && kind == UndoKind::UpdExist {
            sec_delete_mark(pager, sec, &old_e, true)?;
        }
        if old_e != new_e || kind == UndoKind::UpdDel {
            sec_insert(pager, sec, &new_e)?;
        }
    }
    Ok(Outcome::Done(1))
}

/// Updates the row with clustered key `key`: `changes` are (column, new
/// stored value). A change of the primary key is a delete and an insert.
pub fn update(
    pager: &mut Pager,
    sys: &mut TrxSys,
    table: &Table,
    trx: &mut Trx,
    key: &Key,
    changes: &[(usize, Option<Vec<u8>>)],
) -> Result<Outcome> {
    let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(key))? else {
        return Ok(Outcome::Done(0));
    };
    let t = super::trx_id_of(table, &found.rec)?;
    if t != trx.id && sys.is_active(t) {
        return Ok(Outcome::Wait(t));
    }
    if record::is_deleted(&found.rec) {
        return Ok(Outcome::Done(0));
    }
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
    let pk_changes = changes.iter().any(|(c, v)| {
        table.def.primary_key.contains(c)
            && old_reps[table.col_field[*c]] != Rep::Inline(v.clone().unwrap_or_default())
    });
    // Unique secondary indexes must still hold with the new values.
    let mut new_cols = current_columns(pager, table, &found.rec)?;
    for (c, v) in changes {
        new_cols[*c] = v.clone();
    }
    if let Some(t) = check_unique(pager, sys, table, trx, &new_cols, Some(key))? {
        return Ok(Outcome::Wait(t));
    }
    if pk_changes {
        let new_key = key_of_columns(table, &new_cols, None);
        if let Some(other) = btree::get(pager, &table.clustered, &btree::key_refs(&new_key))? {
            let t = super::trx_id_of(table, &other.rec)?;
            if t != trx.id && sys.is_active(t) {
                return Ok(Outcome::Wait(t));
            }
        }
        if let Outcome::Wait(t) = delete(pager, sys, table, trx, key)? {
            return Ok(Outcome::Wait(t));
        }
        return insert(pager, sys, table, trx, &new_cols, None);
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
    )
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
) -> Result<Outcome> {
    let refs = btree::key_refs(key);
    let Some(found) = btree::get(pager, &table.clustered, &refs)? else {
        return Ok(Outcome::Done(0));
    };
    let t = super::trx_id_of(table, &found.rec)?;
    if t != trx.id && sys.is_active(t) {
        return Ok(Outcome::Wait(t));
    }
    if record::is_deleted(&found.rec) {
        return Ok(Outcome::Done(0));
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
    for sec in &table.secondary {
        let e = sec_entry(table, sec, &found.rec)?;
        sec_delete_mark(pager, sec, &e, true)?;
    }
    Ok(Outcome::Done(1))
}
