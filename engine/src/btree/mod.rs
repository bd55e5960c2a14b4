//! B+trees: the clustered index and secondary indexes. Mirrors InnoDB's
//! `btr0btr.cc` (structure: split, merge, root raise and lift) and
//! `btr0cur.cc` (search and the optimistic/pessimistic split of every
//! change).
//!
//! ```text
//!                 root (level 2, page number fixed for the index's life)
//!               /            \
//!         [k0 | p]        [k7 | p]           node pointers: key fields + child page
//!         /     \           /    \
//!     leaf <-> leaf <-> leaf <-> leaf        level 0, linked both ways
//! ```
//!
//! Invariants (checked by [`check`](crate::check)):
//! - records in a page are in strictly increasing key order, and every key
//!   in a page's subtree is at least its node pointer's key; the first
//!   pointer on the leftmost page of each level stands for minus infinity;
//! - pages of one level are doubly linked in key order;
//! - the root's page number never changes: a full root is emptied into a
//!   new child ("root raise") and a root with a single child absorbs it
//!   ("lift").
//!
//! Every change is one mini-transaction. The optimistic path fixes only the
//! leaf; when the leaf must split or merge, the pessimistic path first
//! reserves enough free pages (so a full disk fails before anything
//! changed), then fixes the whole path from the root.
//!
//! The tree stores opaque records; [`Index`] carries the record layouts
//! that say how to compare them. Keys are tuples of stored field bytes
//! (`None` for NULL), compared field by field.

pub mod cursor;
pub mod stats;
#[cfg(test)]
mod zip_tests;

use crate::error::{Error, Result};
use crate::fsp;
use crate::mtr::{Mtr, PageOp};
use crate::page::zip::{Stored, ZipFields};
use crate::page::{self, index, PageId, PageType, FIL_NULL, PAGE_SIZE};
use crate::pager::Pager;
use crate::record::{self, FieldDef, FieldKind, FieldValue, RecordLayout, RecordView};
use std::cmp::Ordering;

pub use cursor::{Bound, Cursor, Direction};

/// A key tuple: stored field bytes, `None` for NULL. May be a prefix of the
/// index's key fields (for range searches).
pub type Key = Vec<Option<Vec<u8>>>;

/// Borrows a key as the slice form the record module compares.
pub fn key_refs(key: &[Option<Vec<u8>>]) -> Vec<Option<&[u8]>> {
    key.iter().map(|f| f.as_deref()).collect()
}

/// The name a lock on the record with key `key` of `index` is kept under:
/// the key with each field of a non-binary collation in its canonical form,
/// so that keys equal in the index's collation ('a', 'A', 'a ' under
/// latin1_swedish_ci) name the one record they all find. InnoDB's locks sit
/// on the physical record, which makes this automatic there.
pub fn lock_key(index: &Index, key: Key) -> Key {
    let fields = index.leaf.fields();
    if key.len() <= index.leaf.binary_prefix {
        return key;
    }
    key.into_iter()
        .zip(fields)
        .map(|(f, def)| match f {
            Some(b) if def.collation != record::Collation::Binary => {
                Some(def.collation.canonical(&b))
            }
            f => f,
        })
        .collect()
}

/// Whether two keys of `index` (or prefixes of them, compared as far as
/// the shorter goes) are equal in the index's collations: the equality of
/// duplicate checks, where bytes may differ ('a', 'A').
pub fn keys_equal(index: &Index, a: &[Option<Vec<u8>>], b: &[Option<Vec<u8>>]) -> bool {
    a.iter()
        .zip(b)
        .zip(index.leaf.fields())
        .all(|((x, y), def)| match (x, y) {
            (Some(x), Some(y)) => def.collation.compare(x, y) == Ordering::Equal,
            (x, y) => x == y,
        })
}

/// The in-memory descriptor of one B-tree.
#[derive(Debug, Clone)]
pub struct Index {
    /// Index id, stored in every page of the tree.
    pub id: u64,
    /// Index name (PRIMARY for the clustered index).
    pub name: String,
    /// Tablespace.
    pub space: u32,
    /// Root page number.
    pub root: u32,
    /// Layout of leaf records.
    pub leaf: RecordLayout,
    /// Layout of node pointer records: the key fields plus the child page.
    pub node: RecordLayout,
    /// Number of leading fields that order and identify entries.
    pub n_key: usize,
}

impl Index {
    /// A descriptor; the node layout is derived from the leaf layout.
    pub fn new(
        id: u64,
        name: &str,
        space: u32,
        root: u32,
        leaf: RecordLayout,
        n_key: usize,
    ) -> Self {
        let mut fields: Vec<FieldDef> = leaf.fields()[..n_key].to_vec();
        fields.push(FieldDef::not_null(FieldKind::CHILD_PAGE_NO));
        let node = RecordLayout::new(leaf.format(), fields);
        Index {
            id,
            name: name.to_string(),
            space,
            root,
            leaf,
            node,
            n_key,
        }
    }

    /// The layout of records at `level`.
    pub fn layout(&self, level: u16) -> &RecordLayout {
        if level == 0 {
            &self.leaf
        } else {
            &self.node
        }
    }

    /// Whether this is a table's clustered index: its leaf records carry
    /// DB_TRX_ID and DB_ROLL_PTR right after the key (a secondary index's
    /// records are all key).
    pub fn is_clustered(&self) -> bool {
        let f = self.leaf.fields();
        f.get(self.n_key) == Some(&FieldDef::not_null(FieldKind::TRX_ID))
            && f.get(self.n_key + 1) == Some(&FieldDef::not_null(FieldKind::ROLL_PTR))
    }

    /// How a compressed page at `level` describes its records: a clustered
    /// leaf keeps DB_TRX_ID and DB_ROLL_PTR uncompressed, a node pointer
    /// page its child page numbers (page_zip_compress's choice by index
    /// and level).
    pub fn zip_fields(&self, level: u16) -> Result<ZipFields> {
        let stored = match (level, self.is_clustered()) {
            (0, true) => Stored::TrxRollPtr {
                trx_id_field: self.n_key as u16,
            },
            (0, false) => Stored::Nothing,
            _ => Stored::ChildPageNo,
        };
        ZipFields::new(self.layout(level).clone(), stored)
    }
}

/// Whether a page of `index` at `level` holding what `page` holds would
/// compress into its space's page size (always, in a space that is not
/// compressed): the trial InnoDB makes before it commits to a split or a
/// merge on compressed pages.
fn compresses(pager: &mut Pager, index: &Index, level: u16, page: &[u8]) -> Result<bool> {
    match pager.fil.zip_size(index.space) {
        None => Ok(true),
        Some(size) => Ok(pager
            .compression
            .compress(page, &index.zip_fields(level)?, size)?
            .is_some()),
    }
}

/// A page image of `index` at `level` holding `recs` in order, built as a
/// fresh page is (for trials).
fn fresh_page(index: &Index, level: u16, recs: &[&[u8]]) -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    page::init(&mut p, PageId::new(index.space, 0), PageType::Index);
    index::init(&mut p, index.id, level);
    for (s, r) in recs.iter().enumerate() {
        index::insert(&mut p, s, r);
    }
    p
}

/// ERROR 1118 for a leaf record that does not compress even alone on an
/// empty page of its index, before anything is changed (InnoDB compares it
/// with `page_zip_empty_size`).
fn fits_compressed_alone(pager: &mut Pager, index: &Index, rec: &[u8]) -> Result<()> {
    if pager.fil.zip_size(index.space).is_none()
        || compresses(pager, index, 0, &fresh_page(index, 0, &[rec]))?
    {
        return Ok(());
    }
    Err(Error::RowTooBig {
        size: rec.len(),
        max: pager.fil.zip_size(index.space).unwrap_or(PAGE_SIZE),
    })
}

/// Gives a compressed space's page, built or changed in bulk, its new
/// image; a trial said it fits, so not fitting is the engine's own error.
fn finish_zip(
    mtr: &mut Mtr,
    pager: &mut Pager,
    index: &Index,
    f: crate::buf::FrameId,
    level: u16,
) -> Result<()> {
    if pager.fil.zip_size(index.space).is_none() {
        return Ok(());
    }
    if mtr.zip_compress(pager, f, &index.zip_fields(level)?)? {
        return Ok(());
    }
    Err(Error::Corrupt {
        file: index.name.clone(),
        reason: format!(
            "page {} does not compress as its trial did",
            pager.pool.frame(f).id
        ),
    })
}

/// How a search positions itself relative to equal keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// On the first record >= key.
    LowerBound,
    /// On the first record > key.
    UpperBound,
}

fn corrupt(pager: &Pager, id: PageId, reason: String) -> Error {
    Error::CorruptPage {
        file: pager.fil.name(id.space).unwrap_or("?").to_string(),
        page_no: id.page_no,
        reason,
    }
}

/// Reads the child page number from a node pointer record.
///
/// The child page number is a fixed, NOT NULL field and the last one, so in
/// every row format it is the record's last four bytes: read them directly
/// (this runs at every level of every search). CHECK TABLE parses node
/// pointers fully.
#[inline]
pub fn child_of(index: &Index, rec: &[u8]) -> Result<u32> {
    match rec.len().checked_sub(4) {
        Some(at) if at > 0 => Ok(u32::from_be_bytes([
            rec[at],
            rec[at + 1],
            rec[at + 2],
            rec[at + 3],
        ])),
        _ => Err(Error::Corrupt {
            file: index.name.clone(),
            reason: "node pointer without a child page number".into(),
        }),
    }
}

/// The key fields of a record at `level`, as an owned key.
pub fn key_of(index: &Index, level: u16, rec: &[u8]) -> Result<Key> {
    let view = RecordView::parse(index.layout(level), rec)?;
    let mut key = Vec::with_capacity(index.n_key);
    for i in 0..index.n_key {
        key.push(match view.field(i) {
            FieldValue::Null => None,
            FieldValue::Inline(b) => Some(b.to_vec()),
            FieldValue::External { .. } => {
                return Err(Error::Corrupt {
                    file: index.name.clone(),
                    reason: "key field stored off page".into(),
                })
            }
        });
    }
    Ok(key)
}

/// Builds the node pointer to `child` from the first record of the child
/// (at `level`, the child's level).
pub fn node_ptr(index: &Index, level: u16, first_rec: &[u8], child: u32) -> Result<Vec<u8>> {
    let view = RecordView::parse(index.layout(level), first_rec)?;
    let child_bytes = child.to_be_bytes();
    let mut fields: Vec<FieldValue> = (0..index.n_key).map(|i| view.field(i)).collect();
    fields.push(FieldValue::Inline(&child_bytes));
    let mut out = Vec::new();
    record::encode(&index.node, &fields, false, &mut out);
    Ok(out)
}

/// Binary search within a page: the first slot whose record is >= key
/// (LowerBound) or > key (UpperBound).
pub fn search_page(index: &Index, page: &[u8], key: &[Option<&[u8]>], mode: Mode) -> Result<usize> {
    let layout = index.layout(index::level(page));
    let (mut lo, mut hi) = (0usize, index::n_recs(page));
    while lo < hi {
        let mid = (lo + hi) / 2;
        let ord = record::compare_key(layout, index::rec(page, mid), key)?;
        let go_right = match mode {
            Mode::LowerBound => ord == Ordering::Less,
            Mode::UpperBound => ord != Ordering::Greater,
        };
        if go_right {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// One step of a root-to-leaf path: a non-leaf page and the slot followed.
#[derive(Debug, Clone, Copy)]
pub struct PathStep {
    /// The page.
    pub page_no: u32,
    /// The slot of the node pointer followed.
    pub slot: usize,
}

/// Descends from the root to the leaf where `key` belongs under `mode`.
/// Returns the path of non-leaf steps and the leaf page number.
pub fn descend(
    pager: &mut Pager,
    index: &Index,
    key: &[Option<&[u8]>],
    mode: Mode,
) -> Result<(Vec<PathStep>, u32)> {
    let mut path = Vec::new();
    let mut page_no = index.root;
    let mut expected_level: Option<u16> = None;
    loop {
        let id = PageId::new(index.space, page_no);
        let f = pager.fix(id)?;
        let page = pager.page(f);
        if let Err(reason) = check_index_page(index, page, expected_level) {
            pager.unfix(f);
            return Err(corrupt(pager, id, reason));
        }
        let level = index::level(page);
        if level == 0 {
            pager.unfix(f);
            return Ok((path, page_no));
        }
        let res = search_page(index, page, key, mode).and_then(|pos| {
            let slot = pos.saturating_sub(1);
            child_of(index, index::rec(page, slot)).map(|c| (slot, c))
        });
        pager.unfix(f);
        let (slot, child) = res?;
        path.push(PathStep { page_no, slot });
        page_no = child;
        expected_level = Some(level - 1);
    }
}

/// Fixes a page reached by a link of the tree (a sibling pointer, a root,
/// a level's first page) and checks that it is a page of this index, at
/// `expected_level` if given: a link into another index, a freed page or a
/// BLOB page is corruption, never records to read.
pub(crate) fn fix_node(
    pager: &mut Pager,
    index: &Index,
    page_no: u32,
    expected_level: Option<u16>,
) -> Result<crate::buf::FrameId> {
    let id = PageId::new(index.space, page_no);
    let f = pager.fix(id)?;
    if let Err(reason) = check_index_page(index, pager.page(f), expected_level) {
        pager.unfix(f);
        return Err(corrupt(pager, id, reason));
    }
    Ok(f)
}

fn check_index_page(index: &Index, page: &[u8], expected_level: Option<u16>) -> Result<(), String> {
    if page::page_type_raw(page) != PageType::Index as u16 {
        return Err(format!(
            "page of type {} in index {}",
            page::page_type_raw(page),
            index.name
        ));
    }
    if index::index_id(page) != index.id {
        return Err(format!(
            "page belongs to index {} not {}",
            index::index_id(page),
            index.id
        ));
    }
    if let Some(l) = expected_level {
        if index::level(page) != l {
            return Err(format!(
                "page at level {} where {l} was expected",
                index::level(page)
            ));
        }
    }
    if index::n_recs(page) == 0 && index::level(page) > 0 {
        return Err("empty non-leaf page".into());
    }
    // The directory and heap were checked when the page came from disk
    // (Pager::fix); every change since went through page::index.
    Ok(())
}

/// Creates an empty tree in `space`, returning its root page number.
///
/// In a compressed space, `zip` describes the leaf records (the root starts
/// as a leaf) and the root gets its compressed page.
pub fn create(
    pager: &mut Pager,
    space: u32,
    index_id: u64,
    zip: Option<&ZipFields>,
) -> Result<u32> {
    fsp::reserve(pager, space, 1)?;
    let mut mtr = Mtr::new();
    let root = fsp::alloc(&mut mtr, pager, space, PageType::Index)?;
    let f = mtr.fix(pager, PageId::new(space, root))?;
    mtr.page_op(pager, f, PageOp::IndexInit { index_id, level: 0 })?;
    if pager.fil.zip_size(space).is_some() {
        let fields = zip.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "index {index_id} in compressed space {space} needs its records' layout"
            ))
        })?;
        if !mtr.zip_compress(pager, f, fields)? {
            return Err(Error::InvalidArgument(format!(
                "an empty page of index {index_id} does not compress"
            )));
        }
    }
    mtr.commit(pager)?;
    Ok(root)
}

/// A located record: its leaf and slot, and a copy of it.
#[derive(Debug, Clone)]
pub struct Found {
    /// Leaf page number.
    pub page_no: u32,
    /// Slot in the leaf.
    pub slot: usize,
    /// The record bytes.
    pub rec: Vec<u8>,
}

/// Finds the record whose first `key.len()` fields equal `key` (the first
/// such record in key order).
pub fn get(pager: &mut Pager, index: &Index, key: &[Option<&[u8]>]) -> Result<Option<Found>> {
    let (_, mut leaf) = descend(pager, index, key, Mode::LowerBound)?;
    loop {
        let f = fix_node(pager, index, leaf, Some(0))?;
        let page = pager.page(f);
        let res = search_page(index, page, key, Mode::LowerBound);
        let slot = match res {
            Ok(s) => s,
            Err(e) => {
                pager.unfix(f);
                return Err(e);
            }
        };
        if slot == index::n_recs(page) {
            // Every record here is smaller; an equal one may start the next page.
            let next = page::next(page);
            pager.unfix(f);
            if next == FIL_NULL {
                return Ok(None);
            }
            leaf = next;
            continue;
        }
        let rec = index::rec(page, slot);
        let ord = record::compare_key(&index.leaf, rec, key);
        let out = match ord {
            Ok(Ordering::Equal) => Ok(Some(Found {
                page_no: leaf,
                slot,
                rec: rec.to_vec(),
            })),
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        };
        pager.unfix(f);
        return out;
    }
}

/// Inserts a record. The caller has checked that no record with the same
/// key exists.
pub fn insert(pager: &mut Pager, index: &Index, rec: &[u8]) -> Result<()> {
    insert_inner(pager, index, rec, false, None, false).map(|_| ())
}

/// Where a search for a full key ended: the leaf it belongs to, as the leaf
/// was then. An insert of that key can start from here, without a second
/// search from the root, if the leaf has not changed since (same LSN).
#[derive(Debug, Clone)]
pub struct LeafHint {
    leaf: u32,
    leaf_lsn: u64,
}

/// Looks up a full key the way an insert of it would search (the first
/// record greater than the key, and the one before it), returning the
/// record if present and a hint for [`insert_with_hint`].
pub fn get_for_insert(
    pager: &mut Pager,
    index: &Index,
    key: &[Option<&[u8]>],
) -> Result<(Option<Found>, LeafHint)> {
    let (_, leaf) = descend(pager, index, key, Mode::UpperBound)?;
    let f = pager.fix(PageId::new(index.space, leaf))?;
    let page = pager.page(f);
    let lsn = page::page_lsn(page);
    let res = search_page(index, page, key, Mode::UpperBound).and_then(|pos| {
        if pos == 0 {
            return Ok(None);
        }
        let rec = index::rec(page, pos - 1);
        Ok(
            (record::compare_key(&index.leaf, rec, key)? == Ordering::Equal).then(|| Found {
                page_no: leaf,
                slot: pos - 1,
                rec: rec.to_vec(),
            }),
        )
    });
    pager.unfix(f);
    Ok((
        res?,
        LeafHint {
            leaf,
            leaf_lsn: lsn,
        },
    ))
}

/// [`insert`], starting at the leaf a [`get_for_insert`] found if that leaf
/// is unchanged; a split still searches from the root for its path.
pub fn insert_with_hint(
    pager: &mut Pager,
    index: &Index,
    rec: &[u8],
    hint: &LeafHint,
) -> Result<()> {
    insert_inner(pager, index, rec, false, Some(hint), false).map(|_| ())
}

/// What an insert into its leaf alone made of a record
/// ([`try_insert_with_hint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optimistic {
    /// It is in.
    Done,
    /// The leaf has no room for it: InnoDB's `btr_cur_optimistic_insert`
    /// gives up before it writes the undo record.
    NoRoom,
    /// The leaf has room but its compressed page cannot take it, even
    /// reorganized: `btr_cur_optimistic_insert` gives up after it wrote
    /// the undo record (`btr_cur_ins_lock_and_undo` comes before
    /// `page_cur_tuple_insert`), which stays in the transaction's undo log.
    Refused,
}

/// [`insert_with_hint`] without a split: the record goes into its leaf if
/// that can take it, or nothing changes and the answer says why not.
pub fn try_insert_with_hint(
    pager: &mut Pager,
    index: &Index,
    rec: &[u8],
    hint: &LeafHint,
) -> Result<Optimistic> {
    insert_inner(pager, index, rec, false, Some(hint), true)
}

/// Inserts a record, or, if one with the same full key is there, clears its
/// delete mark (secondary entries coming back), taking `rec`'s bytes where
/// the key is equal only in its collation. One search either way.
pub fn insert_or_unmark(pager: &mut Pager, index: &Index, rec: &[u8]) -> Result<()> {
    insert_inner(pager, index, rec, true, None, false).map(|_| ())
}

fn insert_inner(
    pager: &mut Pager,
    index: &Index,
    rec: &[u8],
    unmark_existing: bool,
    hint: Option<&LeafHint>,
    optimistic_only: bool,
) -> Result<Optimistic> {
    if rec.len() > index::MAX_REC_LEN {
        return Err(Error::RowTooBig {
            size: rec.len(),
            max: index::MAX_REC_LEN,
        });
    }
    let key = key_of(index, 0, rec)?;
    let key = key_refs(&key);
    let hinted = match hint {
        Some(h) => {
            let f = pager.fix(PageId::new(index.space, h.leaf))?;
            let same =
                page::page_lsn(pager.page(f)) == h.leaf_lsn && index::level(pager.page(f)) == 0;
            pager.unfix(f);
            same.then_some(h.leaf)
        }
        None => None,
    };
    let (mut path, leaf) = match hinted {
        Some(leaf) => (Vec::new(), leaf),
        None => descend(pager, index, &key, Mode::UpperBound)?,
    };
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(index.space, leaf))?;
    let slot = match search_page(index, pager.page(f), &key, Mode::UpperBound) {
        Ok(s) => s,
        Err(e) => {
            mtr.release(pager);
            return Err(e);
        }
    };
    if unmark_existing && slot > 0 {
        let prev = index::rec(pager.page(f), slot - 1);
        match record::compare_key(&index.leaf, prev, &key) {
            Ok(Ordering::Equal) => {
                let mut r = prev.to_vec();
                record::set_deleted(&mut r, false);
                if record::is_deleted(prev) && r != rec {
                    // Equal in the collation but not in bytes ('a' over a
                    // delete-marked 'A'): the entry takes the new bytes, as
                    // row_ins_sec_index_entry_by_modify rewrites it.
                    mtr.release(pager);
                    return update(pager, index, rec).map(|_| Optimistic::Done);
                }
                if record::is_deleted(prev) {
                    mtr.page_op(
                        pager,
                        f,
                        PageOp::IndexUpdate {
                            slot: (slot - 1) as u16,
                            rec: &r,
                        },
                    )?;
                    mtr.commit(pager)?;
                } else {
                    mtr.release(pager);
                }
                return Ok(Optimistic::Done);
            }
            Ok(_) => {}
            Err(e) => {
                mtr.release(pager);
                return Err(e);
            }
        }
    }
    let fits = index::fits(pager.page(f), rec.len());
    if fits
        && mtr.try_page_op(
            pager,
            f,
            PageOp::IndexInsert {
                slot: slot as u16,
                rec,
            },
        )?
    {
        mtr.commit(pager)?;
        return Ok(Optimistic::Done);
    }
    mtr.release(pager);
    if optimistic_only {
        return Ok(if fits {
            Optimistic::Refused
        } else {
            Optimistic::NoRoom
        });
    }
    fits_compressed_alone(pager, index, rec)?;
    if hinted.is_some() {
        // The hint skipped the search from the root; a split needs its path.
        let (p, l) = descend(pager, index, &key, Mode::UpperBound)?;
        debug_assert_eq!(l, leaf);
        path = p;
    }
    fsp::reserve(pager, index.space, split_reserve(pager, index, path.len()))?;
    let mut mtr = Mtr::new();
    split_and_insert(&mut mtr, pager, index, &path, leaf, slot, rec)?;
    mtr.commit(pager)?;
    Ok(Optimistic::Done)
}

/// Replaces the record with the same key as `new_rec` (at a known leaf
/// position) by `new_rec`, splitting if it no longer fits.
pub fn update(pager: &mut Pager, index: &Index, new_rec: &[u8]) -> Result<()> {
    update_with(pager, index, new_rec, &mut |_, _| Ok(()))
}

/// A hook run inside a tree change's mini-transaction, before it commits:
/// for changes that must be atomic with it (freeing the chains of off-page
/// columns the change drops).
pub type Extra<'a> = dyn FnMut(&mut Mtr, &mut Pager) -> Result<()> + 'a;

/// [`update`], running `extra` in the same mini-transaction.
pub fn update_with(
    pager: &mut Pager,
    index: &Index,
    new_rec: &[u8],
    extra: &mut Extra<'_>,
) -> Result<()> {
    if new_rec.len() > index::MAX_REC_LEN {
        return Err(Error::RowTooBig {
            size: new_rec.len(),
            max: index::MAX_REC_LEN,
        });
    }
    let key = key_of(index, 0, new_rec)?;
    let key = key_refs(&key);
    let (path, leaf, slot) = locate_exact(pager, index, &key)?;
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(index.space, leaf))?;
    let page = pager.page(f);
    let old_len = index::rec(page, slot).len();
    if index::free_space(page) + old_len >= new_rec.len()
        && mtr.try_page_op(
            pager,
            f,
            PageOp::IndexUpdate {
                slot: slot as u16,
                rec: new_rec,
            },
        )?
    {
        extra(&mut mtr, pager)?;
        mtr.commit(pager)?;
        return Ok(());
    }
    mtr.release(pager);
    fits_compressed_alone(pager, index, new_rec)?;
    fsp::reserve(pager, index.space, split_reserve(pager, index, path.len()))?;
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(index.space, leaf))?;
    mtr.page_op(pager, f, PageOp::IndexDelete { slot: slot as u16 })?;
    split_and_insert(&mut mtr, pager, index, &path, leaf, slot, new_rec)?;
    extra(&mut mtr, pager)?;
    mtr.commit(pager)?;
    Ok(())
}

/// Finds the exact position of a full key, with its path. Errors if absent.
fn locate_exact(
    pager: &mut Pager,
    index: &Index,
    key: &[Option<&[u8]>],
) -> Result<(Vec<PathStep>, u32, usize)> {
    let (path, leaf) = descend(pager, index, key, Mode::UpperBound)?;
    let f = pager.fix(PageId::new(index.space, leaf))?;
    let page = pager.page(f);
    let res = search_page(index, page, key, Mode::UpperBound).and_then(|pos| {
        if pos == 0 {
            return Ok(None);
        }
        let ord = record::compare_key(&index.leaf, index::rec(page, pos - 1), key)?;
        Ok((ord == Ordering::Equal).then_some(pos - 1))
    });
    pager.unfix(f);
    match res? {
        Some(slot) => Ok((path, leaf, slot)),
        None => Err(Error::Corrupt {
            file: index.name.clone(),
            reason: "record to change is not in the index".into(),
        }),
    }
}

/// Sets or clears the delete mark of the record with this full key.
pub fn set_delete_mark(
    pager: &mut Pager,
    index: &Index,
    key: &[Option<&[u8]>],
    deleted: bool,
    new_rec: Option<&[u8]>,
) -> Result<()> {
    let (_, leaf, slot) = locate_exact(pager, index, key)?;
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(index.space, leaf))?;
    let mut rec = match new_rec {
        Some(r) => r.to_vec(),
        None => index::rec(pager.page(f), slot).to_vec(),
    };
    debug_assert_eq!(rec.len(), index::rec(pager.page(f), slot).len());
    record::set_deleted(&mut rec, deleted);
    mtr.page_op(
        pager,
        f,
        PageOp::IndexUpdate {
            slot: slot as u16,
            rec: &rec,
        },
    )?;
    mtr.commit(pager)?;
    Ok(())
}

/// Removes the record with this full key, merging or freeing pages that
/// become too empty. Returns whether the record existed.
pub fn delete(pager: &mut Pager, index: &Index, key: &[Option<&[u8]>]) -> Result<bool> {
    delete_with(pager, index, key, &mut |_, _| Ok(()))
}

/// [`delete`], running `extra` in the same mini-transaction (only if the
/// record was found).
pub fn delete_with(
    pager: &mut Pager,
    index: &Index,
    key: &[Option<&[u8]>],
    extra: &mut Extra<'_>,
) -> Result<bool> {
    let (path, leaf) = descend(pager, index, key, Mode::UpperBound)?;
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(index.space, leaf))?;
    let page = pager.page(f);
    let found = search_page(index, page, key, Mode::UpperBound).and_then(|pos| {
        if pos == 0 {
            return Ok(None);
        }
        let ord = record::compare_key(&index.leaf, index::rec(page, pos - 1), key)?;
        Ok((ord == Ordering::Equal).then_some(pos - 1))
    });
    let slot = match found {
        Ok(Some(slot)) => slot,
        Ok(None) => {
            mtr.release(pager);
            return Ok(false);
        }
        Err(e) => {
            mtr.release(pager);
            return Err(e);
        }
    };
    mtr.page_op(pager, f, PageOp::IndexDelete { slot: slot as u16 })?;
    if leaf != index.root && needs_compress(pager.page(f)) {
        compress(&mut mtr, pager, index, &path, leaf)?;
    }
    extra(&mut mtr, pager)?;
    mtr.commit(pager)?;
    Ok(true)
}

fn needs_compress(page: &[u8]) -> bool {
    // InnoDB's BTR_CUR_PAGE_COMPRESS_LIMIT: try to merge below half full.
    index::used_space(page) < index::EMPTY_PAGE_SPACE / 2
}

/// The pages a split of a leaf `depth` levels below the root may allocate:
/// a page on each level and a new root; on a compressed index twice that
/// and one more, for a split in three (a split, a root raise, and a second
/// split one level deeper).
fn split_reserve(pager: &Pager, index: &Index, depth: usize) -> u32 {
    let one = depth as u32 + 2;
    if pager.fil.zip_size(index.space).is_some() {
        2 * one + 1
    } else {
        one
    }
}

/// Splits page `page_no` (whose parent path is `path`) and inserts `rec` at
/// `slot`, inserting the new page's node pointer into the parent (and
/// splitting it in turn if needed).
// The page is copied out because `halves_compress` needs the pager as well
// (clippy's unnecessary_to_owned misses that borrow).
#[allow(clippy::unnecessary_to_owned)]
fn split_and_insert(
    mtr: &mut Mtr,
    pager: &mut Pager,
    index: &Index,
    path: &[PathStep],
    page_no: u32,
    slot: usize,
    rec: &[u8],
) -> Result<()> {
    let id = PageId::new(index.space, page_no);
    let f = mtr.fix(pager, id)?;
    let fits = index::fits(pager.page(f), rec.len());
    if fits
        && mtr.try_page_op(
            pager,
            f,
            PageOp::IndexInsert {
                slot: slot as u16,
                rec,
            },
        )?
    {
        return Ok(());
    }
    if page_no == index.root {
        let child = raise_root(mtr, pager, index)?;
        let root_step = [PathStep {
            page_no: index.root,
            slot: 0,
        }];
        return split_and_insert(mtr, pager, index, &root_step, child, slot, rec);
    }
    let page = pager.page(f);
    let level = index::level(page);
    let n = index::n_recs(page);
    let old_next = page::next(page);
    let old_prev = page::prev(page);
    // Sizes of the records as they would be with `rec` inserted.
    let mut sizes: Vec<usize> = (0..n)
        .map(|s| index::rec(page, s).len() + index::PER_RECORD_OVERHEAD)
        .collect();
    sizes.insert(slot, rec.len() + index::PER_RECORD_OVERHEAD);
    let total: usize = sizes.iter().sum();
    // Split point k: the first k virtual records stay. Sequential inserts at
    // the right (or left) edge of the level leave full pages behind, as
    // InnoDB's split heuristics do.
    let k = if slot == n && old_next == FIL_NULL {
        n
    } else if slot == 0 && old_prev == FIL_NULL {
        1
    } else {
        let mut acc = 0;
        let mut k = 1;
        for (i, s) in sizes.iter().enumerate() {
            acc += s;
            if acc * 2 >= total {
                k = i + 1;
                break;
            }
        }
        // The byte midpoint can leave more than a page on the left when a
        // large record straddles it; then split before that record. Some
        // split point always works: no record takes more than half a page
        // (MAX_REC_LEN), so the longest prefix that fits leaves a suffix
        // that fits too.
        let mut k = k.clamp(1, n);
        while k > 1 && sizes[..k].iter().sum::<usize>() > index::EMPTY_PAGE_SPACE {
            k -= 1;
        }
        k
    };
    let compressed = pager.fil.zip_size(index.space).is_some();
    if compressed && fits {
        pager.stats.zip_splits_after_failure += 1;
    }
    let k = if compressed {
        match zip_split_point(pager, index, f, level, slot, rec, &sizes, k)? {
            Some(k) => k,
            None if level == 0 && n >= 2 => {
                // The record compresses with neither neighbour, or with no
                // part of the page beside it: split the page first (between
                // the record's neighbours if both halves compress, else
                // where both do, nearest the middle), then insert it again,
                // searching from the root, as btr_page_split_and_insert
                // splits again a compressed page that the insert still does
                // not fit.
                let page = pager.page(f).to_vec();
                let mut plain: Vec<usize> = (1..n).collect();
                plain.sort_by_key(|&c| (c != slot, c.abs_diff(n / 2), c));
                let mut at = None;
                for c in plain {
                    if halves_compress(pager, index, &page, 0, c, None)? {
                        at = Some(c);
                        break;
                    }
                }
                let Some(at) = at else {
                    return Err(Error::Corrupt {
                        file: index.name.clone(),
                        reason: format!(
                            "no split point of page {page_no} compresses with a record of {} bytes, nor without it",
                            rec.len()
                        ),
                    });
                };
                pager.stats.zip_splits_in_three += 1;
                split_page(mtr, pager, index, path, page_no, f, at, None)?;
                let key = key_of(index, 0, rec)?;
                let key = key_refs(&key);
                let (path, leaf) = descend(pager, index, &key, Mode::UpperBound)?;
                let lf = mtr.fix(pager, PageId::new(index.space, leaf))?;
                let slot = search_page(index, pager.page(lf), &key, Mode::UpperBound)?;
                return split_and_insert(mtr, pager, index, &path, leaf, slot, rec);
            }
            None => {
                return Err(Error::Corrupt {
                    file: index.name.clone(),
                    reason: format!(
                        "no split point of page {page_no} compresses with a record of {} bytes",
                        rec.len()
                    ),
                })
            }
        }
    } else {
        k
    };
    split_page(mtr, pager, index, path, page_no, f, k, Some((slot, rec)))
}

/// Splits page `page_no` (fixed in `f`, its parent path `path`) so that its
/// first `k` records stay, with `ins` (a record and its slot among the
/// page's records) inserted where it belongs (`k` counts it), and puts
/// the new page's node pointer into the parent.
#[allow(clippy::too_many_arguments)]
fn split_page(
    mtr: &mut Mtr,
    pager: &mut Pager,
    index: &Index,
    path: &[PathStep],
    page_no: u32,
    f: crate::buf::FrameId,
    k: usize,
    ins: Option<(usize, &[u8])>,
) -> Result<()> {
    let page = pager.page(f);
    let level = index::level(page);
    let n = index::n_recs(page);
    let old_next = page::next(page);
    let compressed = pager.fil.zip_size(index.space).is_some();
    let mut sizes: Vec<usize> = (0..n)
        .map(|s| index::rec(page, s).len() + index::PER_RECORD_OVERHEAD)
        .collect();
    // Without a record to insert, `slot` is past every record: nothing is
    // inserted, and the first `k` records stay.
    let (slot, rec): (usize, &[u8]) = match ins {
        Some((slot, rec)) => {
            sizes.insert(slot, rec.len() + index::PER_RECORD_OVERHEAD);
            (slot, rec)
        }
        None => (usize::MAX, &[]),
    };
    let left: usize = sizes[..k].iter().sum();
    let right: usize = sizes[k..].iter().sum();
    assert!(
        left <= index::EMPTY_PAGE_SPACE,
        "split of page {page_no} leaves {left} bytes on the left"
    );
    assert!(
        right <= index::EMPTY_PAGE_SPACE,
        "split of page {page_no} moves {right} bytes to the right"
    );
    // Records moved to the new page: old slots [first_moved, n).
    let (first_moved, rec_left) = if slot < k { (k - 1, true) } else { (k, false) };
    let moved: Vec<Vec<u8>> = (first_moved..n)
        .map(|s| index::rec(pager.page(f), s).to_vec())
        .collect();

    let new_no = fsp::alloc(mtr, pager, index.space, PageType::Index)?;
    let q = mtr.fix(pager, PageId::new(index.space, new_no))?;
    if compressed {
        // Built in its frame and logged as its compressed image.
        mtr.zip_build(q);
    }
    mtr.page_op(
        pager,
        q,
        PageOp::IndexInit {
            index_id: index.id,
            level,
        },
    )?;
    let mut qslot = 0u16;
    for (i, r) in moved.iter().enumerate() {
        if !rec_left && first_moved + i == slot {
            mtr.page_op(pager, q, PageOp::IndexInsert { slot: qslot, rec })?;
            qslot += 1;
        }
        mtr.page_op(
            pager,
            q,
            PageOp::IndexInsert {
                slot: qslot,
                rec: r,
            },
        )?;
        qslot += 1;
    }
    if !rec_left && slot == n {
        mtr.page_op(pager, q, PageOp::IndexInsert { slot: qslot, rec })?;
    }
    finish_zip(mtr, pager, index, q, level)?;
    if compressed {
        mtr.zip_detach(pager, f);
    }
    mtr.page_op(
        pager,
        f,
        PageOp::IndexTruncate {
            from_slot: first_moved as u16,
        },
    )?;
    if rec_left {
        mtr.page_op(
            pager,
            f,
            PageOp::IndexInsert {
                slot: slot as u16,
                rec,
            },
        )?;
    }
    finish_zip(mtr, pager, index, f, level)?;
    // Sibling links: page <-> new <-> old next.
    mtr.set_prev(pager, q, page_no)?;
    mtr.set_next(pager, q, old_next)?;
    mtr.set_next(pager, f, new_no)?;
    if old_next != FIL_NULL {
        let nf = mtr.fix(pager, PageId::new(index.space, old_next))?;
        mtr.set_prev(pager, nf, new_no)?;
    }
    // The new page's node pointer goes right after this page's.
    let ptr = node_ptr(index, level, index::rec(pager.page(q), 0), new_no)?;
    let (parent, rest) = path.split_last().expect("a non-root page has a parent");
    split_and_insert(
        mtr,
        pager,
        index,
        rest,
        parent.page_no,
        parent.slot + 1,
        &ptr,
    )
}

/// Moves the root's records into a new child and makes the root its only
/// node pointer, one level higher. Returns the child's page number.
fn raise_root(mtr: &mut Mtr, pager: &mut Pager, index: &Index) -> Result<u32> {
    let rf = mtr.fix(pager, PageId::new(index.space, index.root))?;
    let level = index::level(pager.page(rf));
    let n = index::n_recs(pager.page(rf));
    let recs: Vec<Vec<u8>> = (0..n)
        .map(|s| index::rec(pager.page(rf), s).to_vec())
        .collect();
    let child = fsp::alloc(mtr, pager, index.space, PageType::Index)?;
    let cf = mtr.fix(pager, PageId::new(index.space, child))?;
    if pager.fil.zip_size(index.space).is_some() {
        // The compressed root is copied whole, image and all, as
        // btr_root_raise does with page_zip_copy_recs: laid out afresh,
        // its records might no longer compress into the page.
        mtr.zip_copy(pager, rf, cf)?;
    } else {
        mtr.page_op(
            pager,
            cf,
            PageOp::IndexInit {
                index_id: index.id,
                level,
            },
        )?;
        for (s, r) in recs.iter().enumerate() {
            mtr.page_op(
                pager,
                cf,
                PageOp::IndexInsert {
                    slot: s as u16,
                    rec: r,
                },
            )?;
        }
    }
    let ptr = node_ptr(index, level, &recs[0], child)?;
    mtr.zip_detach(pager, rf);
    mtr.page_op(
        pager,
        rf,
        PageOp::IndexInit {
            index_id: index.id,
            level: level + 1,
        },
    )?;
    mtr.page_op(pager, rf, PageOp::IndexReorganize)?;
    mtr.page_op(pager, rf, PageOp::IndexInsert { slot: 0, rec: &ptr })?;
    finish_zip(mtr, pager, index, rf, level + 1)?;
    Ok(child)
}

/// Restores the fill invariants after a delete left `page_no` too empty:
/// frees an empty page, merges with a sibling under the same parent, and
/// lifts a root that has a single child.
fn compress(
    mtr: &mut Mtr,
    pager: &mut Pager,
    index: &Index,
    path: &[PathStep],
    page_no: u32,
) -> Result<()> {
    let f = mtr.fix(pager, PageId::new(index.space, page_no))?;
    if page_no == index.root {
        let page = pager.page(f);
        if index::level(page) > 0 && index::n_recs(page) == 1 {
            return lift_root(mtr, pager, index);
        }
        return Ok(());
    }
    let (parent, rest) = path.split_last().expect("a non-root page has a parent");
    let pf = mtr.fix(pager, PageId::new(index.space, parent.page_no))?;
    let parent_n = index::n_recs(pager.page(pf));
    let level = index::level(pager.page(f));

    if index::n_recs(pager.page(f)) == 0 {
        unlink_and_free(mtr, pager, index, page_no)?;
        mtr.page_op(
            pager,
            pf,
            PageOp::IndexDelete {
                slot: parent.slot as u16,
            },
        )?;
        return after_parent_delete(mtr, pager, index, rest, parent.page_no);
    }
    // Merge the right one of (this, right sibling) or (left sibling, this)
    // into the left one, if both hang under the same parent and fit.
    let candidates = [
        (parent.slot + 1 < parent_n).then_some((page_no, parent.slot + 1)),
        (parent.slot > 0).then_some((0, parent.slot)),
    ];
    for cand in candidates.into_iter().flatten() {
        let (left_no, right_slot) = match cand {
            (p, s) if p == page_no => (page_no, s),
            (_, s) => (child_of(index, index::rec(pager.page(pf), s - 1))?, s),
        };
        let right_no = child_of(index, index::rec(pager.page(pf), right_slot))?;
        let lf = mtr.fix(pager, PageId::new(index.space, left_no))?;
        let rf = mtr.fix(pager, PageId::new(index.space, right_no))?;
        if index::level(pager.page(lf)) != level || index::level(pager.page(rf)) != level {
            return Err(corrupt(
                pager,
                PageId::new(index.space, left_no),
                "sibling at another level".into(),
            ));
        }
        let need = index::used_space(pager.page(rf));
        if index::free_space(pager.page(lf)) < need {
            continue;
        }
        let recs: Vec<Vec<u8>> = (0..index::n_recs(pager.page(rf)))
            .map(|s| index::rec(pager.page(rf), s).to_vec())
            .collect();
        let base = index::n_recs(pager.page(lf));
        if pager.fil.zip_size(index.space).is_some() {
            // The merged page must compress too (btr_can_merge_with_page).
            let mut trial = pager.page(lf).to_vec();
            for (i, r) in recs.iter().enumerate() {
                index::insert(&mut trial, base + i, r);
            }
            if !compresses(pager, index, level, &trial)? {
                continue;
            }
            mtr.zip_detach(pager, lf);
        }
        for (i, r) in recs.iter().enumerate() {
            mtr.page_op(
                pager,
                lf,
                PageOp::IndexInsert {
                    slot: (base + i) as u16,
                    rec: r,
                },
            )?;
        }
        finish_zip(mtr, pager, index, lf, level)?;
        mtr.page_op(pager, rf, PageOp::IndexTruncate { from_slot: 0 })?;
        unlink_and_free(mtr, pager, index, right_no)?;
        mtr.page_op(
            pager,
            pf,
            PageOp::IndexDelete {
                slot: right_slot as u16,
            },
        )?;
        return after_parent_delete(mtr, pager, index, rest, parent.page_no);
    }
    Ok(())
}

fn after_parent_delete(
    mtr: &mut Mtr,
    pager: &mut Pager,
    index: &Index,
    path: &[PathStep],
    parent_no: u32,
) -> Result<()> {
    let pf = mtr.fix(pager, PageId::new(index.space, parent_no))?;
    if parent_no == index.root || needs_compress(pager.page(pf)) {
        compress(mtr, pager, index, path, parent_no)?;
    }
    Ok(())
}

/// Unlinks an empty page from its level and frees it.
fn unlink_and_free(mtr: &mut Mtr, pager: &mut Pager, index: &Index, page_no: u32) -> Result<()> {
    let f = mtr.fix(pager, PageId::new(index.space, page_no))?;
    let prev = page::prev(pager.page(f));
    let next = page::next(pager.page(f));
    if prev != FIL_NULL {
        let pf = mtr.fix(pager, PageId::new(index.space, prev))?;
        mtr.set_next(pager, pf, next)?;
    }
    if next != FIL_NULL {
        let nf = mtr.fix(pager, PageId::new(index.space, next))?;
        mtr.set_prev(pager, nf, prev)?;
    }
    fsp::free(mtr, pager, PageId::new(index.space, page_no))
}

/// The root has one child: move the child's records into the root, one
/// level down, and free the child. Repeats while that holds.
fn lift_root(mtr: &mut Mtr, pager: &mut Pager, index: &Index) -> Result<()> {
    loop {
        let rf = mtr.fix(pager, PageId::new(index.space, index.root))?;
        let page = pager.page(rf);
        if index::level(page) == 0 || index::n_recs(page) != 1 {
            return Ok(());
        }
        let child = child_of(index, index::rec(page, 0))?;
        let cf = mtr.fix(pager, PageId::new(index.space, child))?;
        let clevel = index::level(pager.page(cf));
        let recs: Vec<Vec<u8>> = (0..index::n_recs(pager.page(cf)))
            .map(|s| index::rec(pager.page(cf), s).to_vec())
            .collect();
        let refs: Vec<&[u8]> = recs.iter().map(|r| &r[..]).collect();
        if pager.fil.zip_size(index.space).is_some()
            && !compresses(pager, index, clevel, &fresh_page(index, clevel, &refs))?
        {
            // The root stays one level higher: a tree may keep a root with
            // one child, and the child's records do not compress into it.
            return Ok(());
        }
        mtr.zip_detach(pager, rf);
        mtr.page_op(
            pager,
            rf,
            PageOp::IndexInit {
                index_id: index.id,
                level: clevel,
            },
        )?;
        mtr.page_op(pager, rf, PageOp::IndexReorganize)?;
        for (s, r) in recs.iter().enumerate() {
            mtr.page_op(
                pager,
                rf,
                PageOp::IndexInsert {
                    slot: s as u16,
                    rec: r,
                },
            )?;
        }
        finish_zip(mtr, pager, index, rf, clevel)?;
        mtr.page_op(pager, cf, PageOp::IndexTruncate { from_slot: 0 })?;
        fsp::free(mtr, pager, PageId::new(index.space, child))?;
    }
}

/// On a compressed index, the split point nearest `k` (the first `k` of
/// the page's records with `rec` inserted at `slot` stay) whose two pages
/// both compress into the page size, as InnoDB retries a split of a
/// compressed page at another point (`btr_page_split_and_insert`). The
/// record was checked to compress alone on an empty page; when it still
/// compresses with none of its neighbours, `None`: the page must be split
/// between them first.
#[allow(clippy::too_many_arguments)]
fn zip_split_point(
    pager: &mut Pager,
    index: &Index,
    f: crate::buf::FrameId,
    level: u16,
    slot: usize,
    rec: &[u8],
    sizes: &[usize],
    k: usize,
) -> Result<Option<usize>> {
    let page = &pager.page(f).to_vec();
    let n = index::n_recs(page);
    let mut order: Vec<usize> = (1..=n).collect();
    order.sort_by_key(|&c| (c.abs_diff(k), c));
    for c in order {
        if sizes[..c].iter().sum::<usize>() > index::EMPTY_PAGE_SPACE
            || sizes[c..].iter().sum::<usize>() > index::EMPTY_PAGE_SPACE
        {
            continue;
        }
        if halves_compress(pager, index, page, level, c, Some((slot, rec)))? {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

/// Whether both pages of a split of `page` at `k` compress (the trial
/// [`split_page`] relies on): with `ins` (a slot and a record, counted in
/// `k`) inserted where it belongs, or without a record, the first `k`
/// records staying.
fn halves_compress(
    pager: &mut Pager,
    index: &Index,
    page: &[u8],
    level: u16,
    k: usize,
    ins: Option<(usize, &[u8])>,
) -> Result<bool> {
    let n = index::n_recs(page);
    let (first_moved, rec_left) = match ins {
        Some((slot, _)) if slot < k => (k - 1, true),
        _ => (k, false),
    };
    let mut left = page.to_vec();
    index::truncate(&mut left, first_moved);
    let mut moved: Vec<&[u8]> = (first_moved..n).map(|s| index::rec(page, s)).collect();
    if let Some((slot, rec)) = ins {
        if rec_left {
            index::insert(&mut left, slot, rec);
        } else {
            moved.insert(slot - first_moved, rec);
        }
    }
    let right = fresh_page(index, level, &moved);
    Ok(compresses(pager, index, level, &left)? && compresses(pager, index, level, &right)?)
}

/// Frees every page of a tree (DROP INDEX, DROP TABLE of a table in the
/// system tablespace). One mini-transaction per page. Only the tree's
/// node pages are read, level by level from the root, for the numbers of
/// the pages below them: its leaves are freed by number, never read or
/// written (the free list does not touch the pages it takes), as
/// `btr_free_but_not_root` frees a segment's extents without reading them.
pub fn free_tree(pager: &mut Pager, index: &Index) -> Result<()> {
    let mut level = vec![index.root];
    while !level.is_empty() {
        let mut below = Vec::new();
        for &p in &level {
            let f = fix_node(pager, index, p, None)?;
            let page = pager.page(f);
            let height = index::level(page);
            let children = if height > 0 {
                (0..index::n_recs(page))
                    .map(|slot| child_of(index, index::rec(page, slot)))
                    .collect::<Result<Vec<u32>>>()
            } else {
                Ok(Vec::new())
            };
            pager.unfix(f);
            let children = children?;
            if height == 1 {
                // Leaves: freed by number.
                free_pages(pager, index, &children)?;
            } else {
                below.extend(children);
            }
        }
        free_pages(pager, index, &level)?;
        level = below;
    }
    Ok(())
}

/// Frees `pages` of `index`, one mini-transaction each.
fn free_pages(pager: &mut Pager, index: &Index, pages: &[u32]) -> Result<()> {
    for &p in pages {
        let mut mtr = Mtr::new();
        fsp::free(&mut mtr, pager, PageId::new(index.space, p))?;
        mtr.commit(pager)?;
    }
    Ok(())
}
