//! Range scans over a B-tree in either direction. Mirrors InnoDB's
//! persistent cursor (`btr0pcur.cc`): the cursor remembers where it was by
//! page, slot and page LSN, and by the key of the last record it returned.
//! If the page has not changed since (same LSN) it steps on from the slot;
//! otherwise it searches again from the root for the remembered key, so a
//! scan stays correct while the statement that drives it changes the tree.

use super::{descend, key_of, key_refs, search_page, Index, Key, Mode};
use crate::error::Result;
use crate::page::{self, index, PageId, FIL_NULL};
use crate::pager::Pager;
use crate::record;
use std::cmp::Ordering;

/// One end of a key range. Keys may be prefixes of the index key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bound {
    /// No limit.
    Unbounded,
    /// Records whose key prefix equals the key are inside.
    Included(Key),
    /// Records whose key prefix equals the key are outside.
    Excluded(Key),
}

/// Scan direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Backward,
}

#[derive(Debug, Clone, Copy)]
struct Position {
    page_no: u32,
    slot: usize,
    page_lsn: u64,
}

/// A scan of the leaf records between two bounds, delete-marked ones
/// included (the caller decides what they mean).
#[derive(Debug, Clone)]
pub struct Cursor {
    low: Bound,
    high: Bound,
    dir: Direction,
    pos: Option<Position>,
    /// The record last returned. Its key is extracted only when the scan
    /// must search for it again (its page changed): most steps continue
    /// from the saved position, and extracting a key per record was a
    /// visible share of every scan.
    last_rec: Option<Vec<u8>>,
    done: bool,
}

impl Cursor {
    /// A scan from `low` to `high` (in key order) walking in `dir`.
    pub fn new(low: Bound, high: Bound, dir: Direction) -> Self {
        Cursor {
            low,
            high,
            dir,
            pos: None,
            last_rec: None,
            done: false,
        }
    }

    /// The next record in scan order, or `None` at the end of the range.
    pub fn next(&mut self, pager: &mut Pager, index: &Index) -> Result<Option<Vec<u8>>> {
        if self.done {
            return Ok(None);
        }
        // Slots are signed here: -1 means "before the first record", which
        // in a backward scan sends us to the previous page; i64::MAX means
        // "the last record of the page".
        let (mut page_no, mut slot) = match self.step_from_saved(pager, index)? {
            Some(p) => p,
            None => self.reposition(pager, index)?,
        };
        // The leaf this call last left through a sibling link, and those it
        // left before (empty leaves passed over; rarely any): a corrupt chain
        // that loops must end in an error, not run forever.
        let mut from: Option<u32> = None;
        let mut passed: Vec<u32> = Vec::new();
        loop {
            if page_no == FIL_NULL {
                self.done = true;
                return Ok(None);
            }
            let f = super::fix_node(pager, index, page_no, Some(0))?;
            let page = pager.page(f);
            if let Some(from) = from {
                if let Err(reason) = check_link(page, page_no, self.dir, from, &passed) {
                    pager.unfix(f);
                    return Err(super::corrupt(
                        pager,
                        PageId::new(index.space, page_no),
                        reason,
                    ));
                }
            }
            let n = index::n_recs(page) as i64;
            if self.dir == Direction::Forward && slot >= n {
                let next = page::next(page);
                pager.unfix(f);
                passed.extend(from.replace(page_no));
                page_no = next;
                slot = 0;
                continue;
            }
            if self.dir == Direction::Backward {
                if slot >= n {
                    slot = n - 1;
                }
                if slot < 0 {
                    let prev = page::prev(page);
                    pager.unfix(f);
                    passed.extend(from.replace(page_no));
                    page_no = prev;
                    slot = i64::MAX;
                    continue;
                }
            }
            let rec = index::rec(page, slot as usize).to_vec();
            let lsn = page::page_lsn(page);
            pager.unfix(f);
            if from.is_some() {
                self.check_order(pager, index, page_no, &rec)?;
            }
            if !self.in_range(index, &rec)? {
                self.done = true;
                return Ok(None);
            }
            self.pos = Some(Position {
                page_no,
                slot: slot as usize,
                page_lsn: lsn,
            });
            match &mut self.last_rec {
                Some(last) => {
                    last.clear();
                    last.extend_from_slice(&rec);
                }
                None => self.last_rec = Some(rec.clone()),
            }
            return Ok(Some(rec));
        }
    }

    /// The first record met on a leaf reached through a sibling link must
    /// not lie before the record last returned, in scan order: a chain that
    /// loops or leads back into the tree breaks that, and a scan that went
    /// on would return the same rows forever. (Equal is let pass: entries
    /// that differ only where their collation does not look compare equal,
    /// and a page met twice is [`check_link`]'s to catch.)
    fn check_order(&self, pager: &Pager, index: &Index, page_no: u32, rec: &[u8]) -> Result<()> {
        let Some(last) = &self.last_rec else {
            return Ok(());
        };
        let ord = record::compare_records(&index.leaf, rec, last, index.n_key)?;
        let backwards = match self.dir {
            Direction::Forward => Ordering::Less,
            Direction::Backward => Ordering::Greater,
        };
        if ord != backwards {
            return Ok(());
        }
        Err(super::corrupt(
            pager,
            PageId::new(index.space, page_no),
            "leaf chain out of key order: a sibling's record comes before the last one read".into(),
        ))
    }

    /// The leaf of the record last returned.
    pub fn page_no(&self) -> Option<u32> {
        self.pos.map(|p| p.page_no)
    }

    /// Continues from the saved position if its page is unchanged.
    fn step_from_saved(&mut self, pager: &mut Pager, index: &Index) -> Result<Option<(u32, i64)>> {
        let Some(pos) = self.pos else { return Ok(None) };
        let f = pager.fix(PageId::new(index.space, pos.page_no))?;
        let lsn = page::page_lsn(pager.page(f));
        pager.unfix(f);
        if lsn != pos.page_lsn {
            return Ok(None);
        }
        Ok(Some(match self.dir {
            Direction::Forward => (pos.page_no, pos.slot as i64 + 1),
            Direction::Backward => (pos.page_no, pos.slot as i64 - 1),
        }))
    }

    /// Finds the first position to look at: from the bound on the first call,
    /// after the last returned key afterwards.
    fn reposition(&mut self, pager: &mut Pager, index: &Index) -> Result<(u32, i64)> {
        let last_key = match &self.last_rec {
            Some(rec) => Some(key_of(index, 0, rec)?),
            None => None,
        };
        let (key, mode): (Option<Key>, Mode) = match (last_key, self.dir) {
            (Some(k), Direction::Forward) => (Some(k), Mode::UpperBound),
            (Some(k), Direction::Backward) => (Some(k), Mode::LowerBound),
            (None, Direction::Forward) => match &self.low {
                Bound::Unbounded => (None, Mode::LowerBound),
                Bound::Included(k) => (Some(k.clone()), Mode::LowerBound),
                Bound::Excluded(k) => (Some(k.clone()), Mode::UpperBound),
            },
            (None, Direction::Backward) => match &self.high {
                Bound::Unbounded => (None, Mode::UpperBound),
                Bound::Included(k) => (Some(k.clone()), Mode::UpperBound),
                Bound::Excluded(k) => (Some(k.clone()), Mode::LowerBound),
            },
        };
        let (page_no, pos) = match key {
            Some(k) => {
                let refs = key_refs(&k);
                let (_, leaf) = descend(pager, index, &refs, mode)?;
                let f = pager.fix(PageId::new(index.space, leaf))?;
                let pos = search_page(index, pager.page(f), &refs, mode);
                pager.unfix(f);
                (leaf, pos?)
            }
            None => edge_leaf(pager, index, self.dir)?,
        };
        Ok(match self.dir {
            Direction::Forward => (page_no, pos as i64),
            // Backward: the record before the search position.
            Direction::Backward => (page_no, pos as i64 - 1),
        })
    }

    fn in_range(&self, index: &Index, rec: &[u8]) -> Result<bool> {
        let (bound, dir) = match self.dir {
            Direction::Forward => (&self.high, 1),
            Direction::Backward => (&self.low, -1),
        };
        let (key, inclusive) = match bound {
            Bound::Unbounded => return Ok(true),
            Bound::Included(k) => (k, true),
            Bound::Excluded(k) => (k, false),
        };
        let ord = record::compare_key(&index.leaf, rec, &key_refs(key))?;
        Ok(match (ord, dir) {
            (Ordering::Equal, _) => inclusive,
            (Ordering::Less, 1) | (Ordering::Greater, -1) => true,
            _ => false,
        })
    }
}

/// A leaf `page` (number `page_no`) reached from leaf `from` through its
/// sibling link in direction `dir` must link back to it
/// (`btr_pcur_move_to_next_page` asserts as much) and must not be one the
/// walk already passed (`from` itself, or one of `passed`): a corrupt chain
/// that loops must end in an error, not run forever.
pub(super) fn check_link(
    page: &[u8],
    page_no: u32,
    dir: Direction,
    from: u32,
    passed: &[u32],
) -> Result<(), String> {
    let back = match dir {
        Direction::Forward => page::prev(page),
        Direction::Backward => page::next(page),
    };
    if back != from {
        return Err(format!(
            "leaf chain broken: reached from page {from}, but links back to {back}"
        ));
    }
    if page_no == from || passed.contains(&page_no) {
        return Err(format!("leaf chain loops back to page {page_no}"));
    }
    Ok(())
}

/// The leftmost (forward) or rightmost (backward) leaf, with the position
/// just before its first record (forward: 0) or after its last (backward:
/// the record count).
pub(super) fn edge_leaf(pager: &mut Pager, index: &Index, dir: Direction) -> Result<(u32, usize)> {
    let mut page_no = index.root;
    loop {
        let f = super::fix_node(pager, index, page_no, None)?;
        let page = pager.page(f);
        let n = index::n_recs(page);
        if index::level(page) == 0 {
            pager.unfix(f);
            return Ok((page_no, if dir == Direction::Forward { 0 } else { n }));
        }
        let slot = if dir == Direction::Forward {
            0
        } else {
            n.saturating_sub(1)
        };
        let child = super::child_of(index, index::rec(page, slot));
        pager.unfix(f);
        page_no = child?;
    }
}
