//! CHECK TABLE: a structural verifier for B-trees and for the agreement of
//! secondary indexes with the clustered index. Mirrors InnoDB's
//! `btr_validate_index` and `row_check_index_for_mysql`.
//!
//! Per tree it checks: page type, index id and level; the slot directory
//! and heap; strictly increasing keys within a page and across the level;
//! every key in a child within the bounds its node pointers give;
//! sibling links both ways; and the on-disk image of every clean page
//! against its checksum. Across trees: every live clustered record has its
//! live secondary entries, and every live secondary entry has a live
//! clustered record that implies it.

use crate::btree::{self, child_of, key_of, Bound, Cursor, Direction, Index, Key};
use crate::dict::Table;
use crate::error::Result;
use crate::page::{self, index, PageId, PageType, FIL_NULL};
use crate::pager::Pager;
use crate::record;
use crate::row;
use std::cmp::Ordering;

/// Shape of one tree.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TreeStats {
    /// Levels.
    pub height: u16,
    /// Pages in the tree.
    pub pages: u64,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Leaf records, delete-marked ones included.
    pub records: u64,
    /// Delete-marked leaf records.
    pub deleted: u64,
    /// Bytes the leaf records take, with their overhead.
    pub leaf_bytes_used: u64,
}

/// The result of CHECK TABLE.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    /// Per index (clustered first): name and shape.
    pub trees: Vec<(String, TreeStats)>,
    /// Everything found wrong; empty means the table is OK.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

struct Walk<'a> {
    index: &'a Index,
    problems: &'a mut Vec<String>,
    /// Pages of each level, left to right (index 0 = leaves).
    levels: Vec<Vec<(u32, u32, u32)>>,
    stats: TreeStats,
}

fn cmp_key(index: &Index, level: u16, rec: &[u8], key: &Key) -> Result<Ordering> {
    record::compare_key(index.layout(level), rec, &btree::key_refs(key))
}

impl Walk<'_> {
    fn problem(&mut self, msg: String) {
        if self.problems.len() < 100 {
            self.problems.push(format!("{}: {msg}", self.index.name));
        }
    }

    fn visit(
        &mut self,
        pager: &mut Pager,
        page_no: u32,
        level: Option<u16>,
        low: Option<Key>,
        high: Option<Key>,
    ) -> Result<()> {
        let id = PageId::new(self.index.space, page_no);
        if !pager.disk_image_ok(id)? {
            self.problem(format!("page {page_no} fails validation on disk"));
        }
        let f = pager.fix(id)?;
        let p = pager.page(f).to_vec();
        pager.unfix(f);
        if page::page_type_raw(&p) != PageType::Index as u16 || index::index_id(&p) != self.index.id
        {
            self.problem(format!("page {page_no} is not a page of this index"));
            return Ok(());
        }
        let lvl = index::level(&p);
        if let Some(l) = level {
            if l != lvl {
                self.problem(format!("page {page_no} at level {lvl}, expected {l}"));
                return Ok(());
            }
        }
        if let Err(e) = index::check_structure(&p) {
            self.problem(format!("page {page_no}: {e}"));
            return Ok(());
        }
        while self.levels.len() <= lvl as usize {
            self.levels.push(Vec::new());
        }
        self.levels[lvl as usize].push((page_no, page::prev(&p), page::next(&p)));
        self.stats.pages += 1;
        let n = index::n_recs(&p);
        if n == 0 && (lvl > 0 || page_no != self.index.root) {
            self.problem(format!("page {page_no} is empty"));
        }
        let layout = self.index.layout(lvl);
        // The first node pointer on the leftmost page of a non-leaf level
        // stands for minus infinity (InnoDB's REC_INFO_MIN_REC_FLAG): its
        // key is whatever the level's first key once was, and a key inserted
        // below it, or a split of the leftmost child, legitimately leaves it
        // at or above the second pointer's key. `descend` never reads it.
        let min_rec = lvl > 0 && page::prev(&p) == FIL_NULL;
        for s in 0..n {
            let r = index::rec(&p, s);
            if let Err(e) = record::RecordView::parse(layout, r) {
                self.problem(format!("page {page_no} slot {s}: {e}"));
                return Ok(());
            }
            if s > 0
                && !(min_rec && s == 1)
                && record::compare_records(layout, index::rec(&p, s - 1), r, self.index.n_key)?
                    != Ordering::Less
            {
                self.problem(format!("page {page_no}: keys out of order at slot {s}"));
            }
            if let Some(lo) = &low {
                if cmp_key(self.index, lvl, r, lo)? == Ordering::Less {
                    self.problem(format!(
                        "page {page_no} slot {s}: key below its node pointer"
                    ));
                }
            }
            if let Some(hi) = &high {
                if cmp_key(self.index, lvl, r, hi)? != Ordering::Less {
                    self.problem(format!(
                        "page {page_no} slot {s}: key not below the next node pointer"
                    ));
                }
            }
        }
        if lvl == 0 {
            self.stats.leaf_pages += 1;
            self.stats.records += n as u64;
            self.stats.deleted += (0..n)
                .filter(|&s| record::is_deleted(index::rec(&p, s)))
                .count() as u64;
            self.stats.leaf_bytes_used += index::used_space(&p) as u64;
            return Ok(());
        }
        for s in 0..n {
            let child = child_of(self.index, index::rec(&p, s))?;
            let child_low = if s == 0 {
                low.clone()
            } else {
                Some(key_of(self.index, lvl, index::rec(&p, s))?)
            };
            let child_high = if s + 1 < n {
                Some(key_of(self.index, lvl, index::rec(&p, s + 1))?)
            } else {
                high.clone()
            };
            self.visit(pager, child, Some(lvl - 1), child_low, child_high)?;
        }
        Ok(())
    }
}

/// Checks one tree.
pub fn check_tree(
    pager: &mut Pager,
    index: &Index,
    problems: &mut Vec<String>,
) -> Result<TreeStats> {
    let mut w = Walk {
        index,
        problems,
        levels: Vec::new(),
        stats: TreeStats::default(),
    };
    w.visit(pager, index.root, None, None, None)?;
    w.stats.height = w.levels.len() as u16;
    let levels = std::mem::take(&mut w.levels);
    for (l, pages) in levels.iter().enumerate() {
        for (i, &(page_no, prev, next)) in pages.iter().enumerate() {
            let want_prev = if i == 0 { FIL_NULL } else { pages[i - 1].0 };
            let want_next = if i + 1 == pages.len() {
                FIL_NULL
            } else {
                pages[i + 1].0
            };
            if prev != want_prev || next != want_next {
                w.problem(format!("level {l} page {page_no}: sibling links {prev}/{next}, expected {want_prev}/{want_next}"));
            }
        }
    }
    Ok(w.stats)
}

/// CHECK TABLE.
pub fn check_table(pager: &mut Pager, table: &Table) -> Result<CheckReport> {
    let mut report = CheckReport::default();
    let s = check_tree(pager, &table.clustered, &mut report.problems)?;
    report.trees.push(("PRIMARY".into(), s));
    for sec in &table.secondary {
        let s = check_tree(pager, &sec.index, &mut report.problems)?;
        report.trees.push((sec.def.name.clone(), s));
    }
    if !report.problems.is_empty() {
        return Ok(report);
    }
    // Clustered -> secondary.
    let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    while let Some(rec) = cur.next(pager, &table.clustered)? {
        if record::is_deleted(&rec) {
            continue;
        }
        for sec in &table.secondary {
            let e = row::sec_entry(table, sec, &rec)?;
            let k = key_of(&sec.index, 0, &e)?;
            match btree::get(pager, &sec.index, &btree::key_refs(&k))? {
                Some(f) if !record::is_deleted(&f.rec) => {}
                Some(_) => report.problems.push(format!(
                    "{}: entry for a live row is delete-marked",
                    sec.def.name
                )),
                None => report
                    .problems
                    .push(format!("{}: entry for a live row is missing", sec.def.name)),
            }
        }
        if report.problems.len() > 100 {
            return Ok(report);
        }
    }
    // Secondary -> clustered.
    for sec in &table.secondary {
        let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        while let Some(e) = cur.next(pager, &sec.index)? {
            if record::is_deleted(&e) {
                continue;
            }
            let ck = row::write::clustered_key_of_entry(table, sec, &e)?;
            match btree::get(pager, &table.clustered, &btree::key_refs(&ck))? {
                Some(f) if !record::is_deleted(&f.rec) => {
                    let implied = row::sec_entry(table, sec, &f.rec)?;
                    if record::compare_records(&sec.index.leaf, &implied, &e, sec.index.n_key)?
                        != Ordering::Equal
                    {
                        report.problems.push(format!(
                            "{}: live entry does not match its row",
                            sec.def.name
                        ));
                    }
                }
                _ => report
                    .problems
                    .push(format!("{}: live entry without a live row", sec.def.name)),
            }
            if report.problems.len() > 100 {
                return Ok(report);
            }
        }
    }
    Ok(report)
}
