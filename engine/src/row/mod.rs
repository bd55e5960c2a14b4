//! Rows: the mapping between a table's rows and its index records, and the
//! row operations on top of the B-trees, undo logs and read views. Mirrors
//! InnoDB's `row0ins.cc`, `row0upd.cc`, `row0sel.cc`, `row0vers.cc`,
//! `row0undo.cc` and `row0purge.cc`.
//!
//! A change to a row is, in order: the undo record (so rollback and older
//! readers can find the previous version), the clustered record, then the
//! secondary entries. Each step is its own mini-transaction; rollback and
//! purge are written so that replaying them after a crash at any step is
//! harmless (they check the record's DB_TRX_ID and DB_ROLL_PTR before
//! acting, and every secondary change is idempotent).
//!
//! Secondary entries are never updated in place: a change of an indexed
//! column delete-marks the old entry and inserts (or un-marks) the new one.
//! Delete-marked entries stay until purge proves no version of the row that
//! any read view can see still needs them.

pub mod foreign;
pub mod locking;
pub mod merge;
pub mod purge;
pub mod rollback;
pub mod select;
pub mod write;

use crate::blob;
use crate::btree::{self, Key};
use crate::dict::{Secondary, Table};
use crate::error::{Error, Result};
use crate::lock::TrxId;
use crate::pager::Pager;
use crate::record::{self, ExternalRef, FieldValue, Placement, RecordLayout, RecordView, Value};
use crate::trx::undo::{self, RollPtr};
use crate::trx::ReadView;
use std::collections::BTreeMap;

/// The loaded tables, by id.
pub type Tables = BTreeMap<u64, Table>;

/// One field as it sits in a record, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rep {
    /// NULL.
    Null,
    /// Wholly in the record.
    Inline(Vec<u8>),
    /// A local prefix and the rest off page.
    External {
        /// Local prefix.
        prefix: Vec<u8>,
        /// The off-page chain.
        reference: ExternalRef,
    },
}

impl Rep {
    /// Borrowed form for encoding.
    pub fn as_field(&self) -> FieldValue<'_> {
        match self {
            Rep::Null => FieldValue::Null,
            Rep::Inline(b) => FieldValue::Inline(b),
            Rep::External { prefix, reference } => FieldValue::External {
                prefix,
                reference: *reference,
            },
        }
    }

    fn from_field(f: FieldValue<'_>) -> Rep {
        match f {
            FieldValue::Null => Rep::Null,
            FieldValue::Inline(b) => Rep::Inline(b.to_vec()),
            FieldValue::External { prefix, reference } => Rep::External {
                prefix: prefix.to_vec(),
                reference,
            },
        }
    }

    /// The chain this field owns, if it is off page.
    pub fn external(&self) -> Option<ExternalRef> {
        match self {
            Rep::External { reference, .. } => Some(*reference),
            _ => None,
        }
    }
}

/// Parses a record into owned field representations.
pub fn reps_of(layout: &RecordLayout, rec: &[u8]) -> Result<Vec<Rep>> {
    let view = RecordView::parse(layout, rec)?;
    Ok((0..view.n_fields())
        .map(|i| Rep::from_field(view.field(i)))
        .collect())
}

/// Encodes a record from field representations.
pub fn encode(layout: &RecordLayout, reps: &[Rep], deleted: bool) -> Vec<u8> {
    let fields: Vec<FieldValue> = reps.iter().map(|r| r.as_field()).collect();
    let mut out = Vec::with_capacity(64);
    record::encode(layout, &fields, deleted, &mut out);
    out
}

fn corrupt(table: &Table, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        file: format!("{}.ibd", table.name()),
        reason: reason.into(),
    }
}

/// A clustered record's DB_TRX_ID.
pub fn trx_id_of(table: &Table, rec: &[u8]) -> Result<u64> {
    if let Some(b) = record::fixed_field(&table.clustered.leaf, rec, table.trx_id_field) {
        let mut x = [0u8; 8];
        x[2..].copy_from_slice(b);
        return Ok(u64::from_be_bytes(x));
    }
    let view = RecordView::parse(&table.clustered.leaf, rec)?;
    match view.field(table.trx_id_field) {
        FieldValue::Inline(b) if b.len() == 6 => {
            let mut x = [0u8; 8];
            x[2..].copy_from_slice(b);
            Ok(u64::from_be_bytes(x))
        }
        _ => Err(corrupt(table, "clustered record without a DB_TRX_ID")),
    }
}

/// A clustered record's DB_ROLL_PTR.
pub fn roll_ptr_of(table: &Table, rec: &[u8]) -> Result<RollPtr> {
    if let Some(b) = record::fixed_field(&table.clustered.leaf, rec, table.roll_ptr_field) {
        return RollPtr::decode(b);
    }
    let view = RecordView::parse(&table.clustered.leaf, rec)?;
    match view.field(table.roll_ptr_field) {
        FieldValue::Inline(b) => RollPtr::decode(b),
        _ => Err(corrupt(table, "clustered record without a DB_ROLL_PTR")),
    }
}

/// The stored form of a transaction id.
pub fn trx_id_bytes(id: u64) -> Vec<u8> {
    id.to_be_bytes()[2..].to_vec()
}

/// The clustered key of a record.
pub fn clustered_key(table: &Table, rec: &[u8]) -> Result<Key> {
    btree::key_of(&table.clustered, 0, rec)
}

/// The DB_ROW_ID of a clustered record of a table without a primary key.
pub fn row_id_of(table: &Table, rec: &[u8]) -> Result<u64> {
    let key = clustered_key(table, rec)?;
    match key.first() {
        Some(Some(b)) if b.len() == usize::from(crate::dict::ROW_ID_LEN) => {
            let mut v = [0u8; 8];
            v[2..].copy_from_slice(b);
            Ok(u64::from_be_bytes(v))
        }
        _ => Err(corrupt(table, "clustered record without a 6-byte row id")),
    }
}

/// The secondary entry a clustered record implies for index `sec`.
pub fn sec_entry(pager: &mut Pager, table: &Table, sec: &Secondary, rec: &[u8]) -> Result<Vec<u8>> {
    let view = RecordView::parse(&table.clustered.leaf, rec)?;
    // Columns the index keeps a prefix of may be off page; their prefix is
    // read from the record or, past its local part, from the chain (as
    // InnoDB's row_ext caches the prefixes of indexed off-page columns).
    let mut fetched: Vec<Option<Vec<u8>>> = Vec::new();
    for (i, &f) in sec.from_clustered.iter().enumerate() {
        let field = view.field(f);
        match (field, sec.prefix[i]) {
            (FieldValue::External { .. }, None) => {
                return Err(corrupt(table, "indexed column stored off page"));
            }
            (FieldValue::External { prefix, reference }, Some(p)) if prefix.len() < p => {
                let mut whole = blob::read(pager, &reference)?;
                whole.truncate(p);
                fetched.resize(i + 1, None);
                fetched[i] = Some(whole);
            }
            _ => {}
        }
    }
    let fields: Vec<FieldValue> = sec
        .from_clustered
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            if let Some(Some(bytes)) = fetched.get(i) {
                return FieldValue::Inline(bytes);
            }
            match (view.field(f), sec.prefix[i]) {
                (FieldValue::Inline(b), Some(p)) => FieldValue::Inline(&b[..b.len().min(p)]),
                (FieldValue::External { prefix, .. }, Some(p)) => FieldValue::Inline(&prefix[..p]),
                (v, _) => v,
            }
        })
        .collect();
    let mut out = Vec::new();
    record::encode(&sec.index.leaf, &fields, false, &mut out);
    Ok(out)
}

/// The stored form of each column of a row, checked against the columns.
pub fn stored_columns(table: &Table, row: &[Value]) -> Result<Vec<Option<Vec<u8>>>> {
    if row.len() != table.def.columns.len() {
        return Err(Error::InvalidArgument(format!(
            "Column count doesn't match value count: table '{}' has {} columns, got {} values",
            table.name(),
            table.def.columns.len(),
            row.len()
        )));
    }
    let mut out = Vec::with_capacity(row.len());
    for (col, v) in table.def.columns.iter().zip(row) {
        if v.is_null() {
            if !col.nullable {
                return Err(Error::NotNull {
                    column: col.name.clone(),
                });
            }
            out.push(None);
        } else {
            out.push(Some(record::to_stored(&col.ty, v, &col.name)?));
        }
    }
    Ok(out)
}

/// Decodes a clustered record into a row, reading off-page columns.
pub fn decode_row(pager: &mut Pager, table: &Table, rec: &[u8]) -> Result<Vec<Value>> {
    let view = RecordView::parse(&table.clustered.leaf, rec)?;
    let mut row = Vec::with_capacity(table.def.columns.len());
    for (c, col) in table.def.columns.iter().enumerate() {
        let v = match view.field(table.col_field[c]) {
            FieldValue::Null => Value::Null,
            FieldValue::Inline(b) => record::from_stored(&col.ty, b)?,
            FieldValue::External { prefix, reference } => {
                let mut full = prefix.to_vec();
                full.extend_from_slice(&blob::read(pager, &reference)?);
                record::from_stored(&col.ty, &full)?
            }
        };
        row.push(v);
    }
    Ok(row)
}

/// What the new record's field `i` should hold.
pub enum Source<'a> {
    /// A new stored value (or NULL).
    New(Option<&'a [u8]>),
    /// The previous version's representation, inherited as is.
    Keep(&'a Rep),
}

/// Chooses which long columns go off page and writes their chains. Fields
/// that keep an off-page representation keep it (an inherited chain).
/// Returns the representations of every field, system fields as given.
pub fn place(
    pager: &mut Pager,
    table: &Table,
    sources: &[Source<'_>],
) -> Result<(Vec<Rep>, Vec<ExternalRef>)> {
    let layout = &table.clustered.leaf;
    let lens: Vec<Option<usize>> = sources
        .iter()
        .map(|s| match s {
            Source::New(v) => v.map(|b| b.len()),
            Source::Keep(Rep::Null) => None,
            Source::Keep(Rep::Inline(b)) => Some(b.len()),
            Source::Keep(Rep::External { prefix, reference }) => {
                Some(prefix.len() + reference.len as usize)
            }
        })
        .collect();
    let max_rec_len = table.max_rec_len();
    let placements = record::place_long_fields(layout, &lens, max_rec_len)?;
    let mut reps = Vec::with_capacity(sources.len());
    let mut written = Vec::new();
    let result: Result<()> = (|| {
        for (s, p) in sources.iter().zip(&placements) {
            let rep = match (s, p) {
                (Source::Keep(r @ Rep::External { .. }), _) => (*r).clone(),
                (Source::Keep(Rep::Inline(b)), Placement::External { local_prefix }) => {
                    let r = blob::write(pager, table.space, &b[*local_prefix..])?;
                    written.push(r);
                    Rep::External {
                        prefix: b[..*local_prefix].to_vec(),
                        reference: r,
                    }
                }
                (Source::Keep(r), _) => (*r).clone(),
                (Source::New(None), _) => Rep::Null,
                (Source::New(Some(b)), Placement::Inline) => Rep::Inline(b.to_vec()),
                (Source::New(Some(b)), Placement::External { local_prefix }) => {
                    let r = blob::write(pager, table.space, &b[*local_prefix..])?;
                    written.push(r);
                    Rep::External {
                        prefix: b[..*local_prefix].to_vec(),
                        reference: r,
                    }
                }
            };
            reps.push(rep);
        }
        Ok(())
    })();
    match result {
        Ok(()) => {
            let fields: Vec<FieldValue> = reps.iter().map(|r| r.as_field()).collect();
            let len = record::encoded_len(layout, &fields);
            if len > max_rec_len {
                free_chains(pager, &written)?;
                return Err(Error::RowTooBig {
                    size: len,
                    max: max_rec_len,
                });
            }
            Ok((reps, written))
        }
        Err(e) => {
            if !e.stops_engine() {
                free_chains(pager, &written)?;
            }
            Err(e)
        }
    }
}

/// Frees chains that no record points to (a failed statement's). Not
/// after an error that [stops the engine](Error::stops_engine): the chains
/// then leak, as they would in a crash while they were written.
pub fn free_chains(pager: &mut Pager, chains: &[ExternalRef]) -> Result<()> {
    for r in chains {
        let mut mtr = crate::mtr::Mtr::new();
        blob::free_in(&mut mtr, pager, r)?;
        mtr.commit(pager)?;
    }
    Ok(())
}

/// The version of a clustered record that `view` sees, following the undo
/// chain back; `None` if the row did not exist for the view.
pub fn visible_version(
    pager: &mut Pager,
    table: &Table,
    rec: Vec<u8>,
    view: &ReadView,
) -> Result<Option<Vec<u8>>> {
    let mut rec = rec;
    for _ in 0..1_000_000 {
        if view.sees(trx_id_of(table, &rec)?) {
            return Ok(Some(rec));
        }
        let ptr = roll_ptr_of(table, &rec)?;
        if ptr.insert {
            return Ok(None);
        }
        let u = undo::read(pager, ptr)?;
        if u.table_id != table.id {
            return Err(corrupt(
                table,
                "roll pointer leads to another table's undo record",
            ));
        }
        rec = u.old_rec;
    }
    Err(corrupt(table, "undo chain does not end"))
}

/// Whether some version of the row, from `start` back to the first one the
/// purge view sees, is live and implies secondary entry `entry`. Such an
/// entry must stay (perhaps delete-marked) for readers of that version.
pub fn entry_needed(
    pager: &mut Pager,
    table: &Table,
    sec: &Secondary,
    entry: &[u8],
    start: Option<Vec<u8>>,
    view: &ReadView,
) -> Result<bool> {
    let mut cur = start;
    let n = sec.index.n_key;
    for _ in 0..1_000_000 {
        let Some(rec) = cur else { return Ok(false) };
        if !record::is_deleted(&rec) {
            let e = sec_entry(pager, table, sec, &rec)?;
            if record::compare_records(&sec.index.leaf, &e, entry, n)? == std::cmp::Ordering::Equal
            {
                return Ok(true);
            }
        }
        if view.sees(trx_id_of(table, &rec)?) {
            return Ok(false);
        }
        let ptr = roll_ptr_of(table, &rec)?;
        if ptr.insert {
            return Ok(false);
        }
        cur = Some(undo::read(pager, ptr)?.old_rec);
    }
    Err(corrupt(table, "undo chain does not end"))
}

/// The active transaction (other than `except`) that holds an implicit X
/// lock on secondary record `srec` of `sec`, as InnoDB's
/// `row_vers_impl_x_locked` decides: the transaction that last changed
/// the entry's row, if it is active and one of its versions of the row
/// differs from the version before it in what it implies for this entry
/// (the entry missing, or delete-marked where `srec` is not, or the other
/// way round). A version that only needs the entry as it is, which the
/// transaction has not yet touched, gives no lock. `active` is sorted.
pub fn sec_implicit_holder(
    pager: &mut Pager,
    table: &Table,
    sec: &Secondary,
    srec: &[u8],
    except: Option<TrxId>,
    active: &[TrxId],
) -> Result<Option<TrxId>> {
    Ok(match sec_holder(pager, table, sec, srec, except, active)? {
        SecHolder::Holder(t) => Some(t),
        SecHolder::None | SecHolder::OverDeleted => None,
    })
}

/// What [`sec_implicit_holder`] finds.
pub enum SecHolder {
    /// The transaction holding the entry's implicit lock.
    Holder(TrxId),
    /// Nobody.
    None,
    /// Nobody, as InnoDB sees it, because the row's writer, still active,
    /// inserted it over a delete-marked record of another transaction's:
    /// the version walk stops there.
    OverDeleted,
}

/// [`sec_implicit_holder`], saying why it found nobody.
pub fn sec_holder(
    pager: &mut Pager,
    table: &Table,
    sec: &Secondary,
    srec: &[u8],
    except: Option<TrxId>,
    active: &[TrxId],
) -> Result<SecHolder> {
    let ck = write::clustered_key_of_entry(table, sec, srec)?;
    let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(&ck))? else {
        return Ok(SecHolder::None);
    };
    let trx = trx_id_of(table, &found.rec)?;
    if Some(trx) == except || active.binary_search(&trx).is_err() {
        return Ok(SecHolder::None);
    }
    if pager.implicit_by_row_changer {
        // The planted bug: whoever changed the row holds every entry of it.
        return Ok(SecHolder::Holder(trx));
    }
    let rec_del = record::is_deleted(srec);
    let n = sec.index.n_key;
    let mut version = found.rec;
    for _ in 0..1_000_000 {
        let ptr = roll_ptr_of(table, &version)?;
        if ptr.insert {
            // The transaction inserted the row: the entry is its, unless
            // it is delete-marked (an entry is never inserted marked, so
            // the marking was not this transaction's).
            return Ok(if rec_del {
                SecHolder::None
            } else {
                SecHolder::Holder(trx)
            });
        }
        let prev = undo::read(pager, ptr)?.old_rec;
        let vers_del = record::is_deleted(&prev);
        let prev_trx = trx_id_of(table, &prev)?;
        if vers_del && prev_trx != trx {
            // The row was deleted by a transaction that committed before
            // this one changed it (an insert over a delete-marked row):
            // InnoDB reports no implicit lock here, the inserter's neither
            // (row_vers_impl_x_locked_low breaks out with none); a reader
            // then meets the inserter at the clustered record.
            return Ok(SecHolder::OverDeleted);
        }
        let implied = sec_entry(pager, table, sec, &prev)?;
        let same = record::compare_records(&sec.index.leaf, &implied, srec, n)?
            == std::cmp::Ordering::Equal;
        if (same && rec_del != vers_del) || (!same && !rec_del) {
            // Before the change the entry was otherwise: the change made it.
            return Ok(SecHolder::Holder(trx));
        }
        if prev_trx != trx {
            return Ok(SecHolder::None);
        }
        version = prev;
    }
    Err(corrupt(table, "undo chain does not end"))
}

/// Inserts a secondary entry, or clears the delete mark of an identical one.
pub fn sec_insert(pager: &mut Pager, sec: &Secondary, entry: &[u8]) -> Result<()> {
    btree::insert_or_unmark(pager, &sec.index, entry)
}

/// Sets the delete mark of a secondary entry, if present.
pub fn sec_delete_mark(
    pager: &mut Pager,
    sec: &Secondary,
    entry: &[u8],
    deleted: bool,
) -> Result<()> {
    let key = btree::key_of(&sec.index, 0, entry)?;
    let refs = btree::key_refs(&key);
    match btree::get(pager, &sec.index, &refs)? {
        Some(found) if record::is_deleted(&found.rec) != deleted => {
            btree::set_delete_mark(pager, &sec.index, &refs, deleted, None)
        }
        _ => Ok(()),
    }
}

/// Ensures a secondary entry exists with the given delete mark and bytes.
pub fn sec_ensure(pager: &mut Pager, sec: &Secondary, entry: &[u8], deleted: bool) -> Result<()> {
    let key = btree::key_of(&sec.index, 0, entry)?;
    let refs = btree::key_refs(&key);
    match btree::get(pager, &sec.index, &refs)? {
        Some(found) => {
            let mut want = entry.to_vec();
            record::set_deleted(&mut want, deleted);
            let mut have = found.rec.clone();
            record::set_deleted(&mut have, deleted);
            if have != want {
                // Equal in the collation, not in bytes (a rollback of 'a'
                // to 'A'): the entry takes the bytes back, as
                // row_undo_mod_del_unmark_sec_and_undo_update does.
                btree::update(pager, &sec.index, &want)
            } else if record::is_deleted(&found.rec) != deleted {
                btree::set_delete_mark(pager, &sec.index, &refs, deleted, None)
            } else {
                Ok(())
            }
        }
        None => {
            let mut e = entry.to_vec();
            record::set_deleted(&mut e, deleted);
            btree::insert(pager, &sec.index, &e)
        }
    }
}

/// Removes a secondary entry if it is delete-marked and no version that a
/// reader may still see needs it; otherwise leaves it (or delete-marks it
/// when `mark_if_needed` and it is live).
#[allow(clippy::too_many_arguments)]
pub fn sec_remove_if_unneeded(
    pager: &mut Pager,
    table: &Table,
    sec: &Secondary,
    entry: &[u8],
    start: Option<Vec<u8>>,
    view: &ReadView,
    only_if_marked: bool,
    removed: &mut Vec<locking::Removed>,
) -> Result<()> {
    let key = btree::key_of(&sec.index, 0, entry)?;
    let refs = btree::key_refs(&key);
    let Some(found) = btree::get(pager, &sec.index, &refs)? else {
        return Ok(());
    };
    if only_if_marked && !record::is_deleted(&found.rec) {
        return Ok(());
    }
    if entry_needed(pager, table, sec, entry, start, view)? {
        if !record::is_deleted(&found.rec) && !only_if_marked {
            btree::set_delete_mark(pager, &sec.index, &refs, true, None)?;
        }
        return Ok(());
    }
    btree::delete(pager, &sec.index, &refs)?;
    removed.push(locking::Removed {
        table: table.id,
        index: sec.index.id,
        key: btree::lock_key(&sec.index, key),
    });
    Ok(())
}
