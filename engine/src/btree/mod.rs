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
mod zip;
mod split;
mod merge;
#[cfg(test)]
mod cursor_tests;
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

use merge::{compress, needs_compress};
use split::{split_and_insert, split_reserve};
use zip::fits_compressed_alone;

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
    // The leaves left through their next link: a corrupt chain that loops
    // over pages of smaller keys must end in an error, not run forever.
    let mut passed: Vec<u32> = Vec::new();
    loop {
        let f = fix_node(pager, index, leaf, Some(0))?;
        let page = pager.page(f);
        if let Some((&from, before)) = passed.split_last() {
            let linked = cursor::check_link(page, leaf, Direction::Forward, from, before);
            if let Err(reason) = linked {
                pager.unfix(f);
                return Err(corrupt(pager, PageId::new(index.space, leaf), reason));
            }
        }
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
            passed.push(leaf);
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
