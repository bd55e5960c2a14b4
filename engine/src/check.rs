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
use crate::dict::{Secondary, Table};
use crate::error::Result;
use crate::page::{self, index, PageId, PageType, FIL_NULL};
use crate::pager::Pager;
use crate::record;
use crate::row;
use std::cmp::Ordering;
use std::collections::BTreeSet;

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
        // A compressed page must decompress to its frame
        // (page_zip_validate).
        let zip_verdict = match (pager.pool.zip(f), pager.fil.zip_size(id.space)) {
            (_, None) => Ok(()),
            (Some(zf), Some(_)) => crate::page::zip::validate_against(&zf.page, &p),
            (None, Some(_)) => Err("no compressed image".to_string()),
        };
        pager.unfix(f);
        if let Err(why) = zip_verdict {
            self.problem(format!("compressed page {page_no}: {why}"));
        }
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
///
/// Across trees, each secondary index is walked once: every live entry
/// must lead to a live clustered record that implies it, and no two to the
/// same record. Then the records reached must be all the live ones, which
/// the clustered tree's walk counted (`row_check_index_for_mysql` compares
/// the same counts). Only when they are not is every live record looked
/// up, to name what is missing: a lookup per record and index costs more
/// than the rest of the check together.
pub fn check_table(pager: &mut Pager, table: &Table) -> Result<CheckReport> {
    let mut report = CheckReport::default();
    let s = check_tree(pager, &table.clustered, &mut report.problems)?;
    let live_rows = s.records - s.deleted;
    report.trees.push(("PRIMARY".into(), s));
    for sec in &table.secondary {
        let s = check_tree(pager, &sec.index, &mut report.problems)?;
        report.trees.push((sec.def.name.clone(), s));
    }
    if !report.problems.is_empty() {
        return Ok(report);
    }
    for sec in &table.secondary {
        if entries_match_rows(pager, table, sec)? {
            continue;
        }
        let mut reached: BTreeSet<Key> = BTreeSet::new();
        let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        while let Some(e) = cur.next(pager, &sec.index)? {
            if record::is_deleted(&e) {
                continue;
            }
            let ck = row::write::clustered_key_of_entry(table, sec, &e)?;
            match btree::get(pager, &table.clustered, &btree::key_refs(&ck))? {
                Some(f) if !record::is_deleted(&f.rec) => {
                    let implied = row::sec_entry(pager, table, sec, &f.rec)?;
                    if implied[..] != e[..] {
                        report.problems.push(format!(
                            "{}: live entry does not match its row",
                            sec.def.name
                        ));
                    } else if !reached.insert(ck) {
                        report
                            .problems
                            .push(format!("{}: two live entries for one row", sec.def.name));
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
        if reached.len() as u64 != live_rows {
            let before = report.problems.len();
            rows_without_entries(pager, table, sec, &mut report.problems)?;
            if report.problems.len() == before {
                report.problems.push(format!(
                    "{}: {} live entries reach a row, but the table has {live_rows} live rows",
                    sec.def.name,
                    reached.len()
                ));
            }
        }
    }
    Ok(report)
}

/// Whether the live entries of `sec` are, in index order, exactly the
/// entries its table's live rows imply: one scan of each tree and a sort,
/// where the lookups in [`check_table`] cost a clustered search per entry.
/// When they are not (or a record does not decode), those lookups say
/// what is wrong; errors reading pages are errors here too.
fn entries_match_rows(pager: &mut Pager, table: &Table, sec: &Secondary) -> Result<bool> {
    let mut implied: Vec<Vec<u8>> = Vec::new();
    let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    while let Some(rec) = cur.next(pager, &table.clustered)? {
        if record::is_deleted(&rec) {
            continue;
        }
        match row::sec_entry(pager, table, sec, &rec) {
            Ok(e) => implied.push(e),
            Err(_) => return Ok(false),
        }
    }
    let (layout, n_key) = (&sec.index.leaf, sec.index.n_key);
    // A comparison fails only on a record it cannot read, and each record
    // is read the same way every time: checked first, the sort's
    // comparisons cannot fail (a comparator that gave up would not be a
    // total order).
    if implied
        .iter()
        .any(|e| record::compare_records(layout, e, e, n_key).is_err())
    {
        return Ok(false);
    }
    implied.sort_unstable_by(|a, b| {
        record::compare_records(layout, a, b, n_key).unwrap_or(Ordering::Equal)
    });
    let mut want = implied.iter();
    let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    while let Some(e) = cur.next(pager, &sec.index)? {
        if record::is_deleted(&e) {
            continue;
        }
        let Some(w) = want.next() else {
            return Ok(false);
        };
        // Equal in bytes, not only in the index's collation: a change of
        // case rewrites the entry (stricter than InnoDB's own CHECK TABLE,
        // which compares in the collation).
        if w[..] != e[..] {
            return Ok(false);
        }
    }
    Ok(want.next().is_none())
}

/// Looks up the entry of every live clustered record in `sec`, reporting
/// those missing or delete-marked.
fn rows_without_entries(
    pager: &mut Pager,
    table: &Table,
    sec: &Secondary,
    problems: &mut Vec<String>,
) -> Result<()> {
    let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    while let Some(rec) = cur.next(pager, &table.clustered)? {
        if record::is_deleted(&rec) {
            continue;
        }
        let e = row::sec_entry(pager, table, sec, &rec)?;
        let k = key_of(&sec.index, 0, &e)?;
        match btree::get(pager, &sec.index, &btree::key_refs(&k))? {
            Some(f) if !record::is_deleted(&f.rec) => {}
            Some(_) => problems.push(format!(
                "{}: entry for a live row is delete-marked",
                sec.def.name
            )),
            None => problems.push(format!("{}: entry for a live row is missing", sec.def.name)),
        }
        if problems.len() > 100 {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{ManualClock, MemStorage};
    use crate::redo::LogConfig;
    use crate::{
        ColumnDef, ColumnType, Config, Engine, IndexDef, Request, RowFormat, TableDef, Value,
    };

    /// `t (id PRIMARY KEY, k, KEY k (k))` with rows 1..=40, `k = id % 7`,
    /// on a pool small enough that the trees have several pages.
    fn table_with_rows() -> Result<Engine> {
        let config = Config {
            buffer_pool_pages: 16,
            log: LogConfig {
                files: 2,
                file_size_bytes: 256 * 1024,
                buffer_size_bytes: 64 * 1024,
            },
            ..Config::default()
        };
        let (mut e, _) = Engine::open(
            Box::new(MemStorage::new()),
            Box::new(ManualClock::new()),
            config,
        )?;
        let col = |name: &str| ColumnDef {
            name: name.into(),
            ty: ColumnType::BIGINT_UNSIGNED,
            nullable: false,
            collation: Default::default(),
        };
        e.create_table(TableDef {
            name: "t".into(),
            columns: vec![col("id"), col("k")],
            primary_key: vec![0],
            primary_prefixes: Vec::new(),
            indexes: vec![IndexDef {
                name: "k".into(),
                columns: vec![1],
                unique: false,
                prefixes: Vec::new(),
            }],
            row_format: RowFormat::Compact,
            foreign: Vec::new(),
            server: Vec::new(),
        })?;
        let s = e.session();
        for id in 1..=40u64 {
            e.execute(
                s,
                Request::Insert {
                    table: "t".into(),
                    row: vec![Value::UInt(id), Value::UInt(id % 7)],
                },
            )?;
        }
        Ok(e)
    }

    /// Row `id`'s secondary entry and that entry's key.
    fn entry_of_row(e: &mut Engine, table: &Table, id: u64) -> Result<(Vec<u8>, Key)> {
        let pk = id.to_be_bytes();
        let found =
            btree::get(e.pager_mut(), &table.clustered, &[Some(&pk[..])])?.expect("the row exists");
        let entry = row::sec_entry(e.pager_mut(), table, &table.secondary[0], &found.rec)?;
        let key = key_of(&table.secondary[0].index, 0, &entry)?;
        Ok((entry, key))
    }

    fn problems(e: &mut Engine) -> Result<Vec<String>> {
        Ok(e.check_table("t")?.problems)
    }

    #[test]
    fn an_intact_table_passes() -> Result<()> {
        let mut e = table_with_rows()?;
        let report = e.check_table("t")?;
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!(report.trees[0].1.records, 40);
        assert_eq!(report.trees[1].1.records, 40);
        Ok(())
    }

    /// Every live entry still matches its row, so only the count of rows
    /// reached shows the loss; the lookup pass then names it.
    #[test]
    fn a_missing_entry_is_found_by_the_count() -> Result<()> {
        let mut e = table_with_rows()?;
        let table = e.table("t")?.clone();
        let (_, key) = entry_of_row(&mut e, &table, 12)?;
        assert!(btree::delete(
            e.pager_mut(),
            &table.secondary[0].index,
            &btree::key_refs(&key)
        )?);
        assert_eq!(problems(&mut e)?, ["k: entry for a live row is missing"]);
        Ok(())
    }

    #[test]
    fn a_delete_marked_entry_of_a_live_row_is_reported() -> Result<()> {
        let mut e = table_with_rows()?;
        let table = e.table("t")?.clone();
        let (_, key) = entry_of_row(&mut e, &table, 30)?;
        btree::set_delete_mark(
            e.pager_mut(),
            &table.secondary[0].index,
            &btree::key_refs(&key),
            true,
            None,
        )?;
        assert_eq!(
            problems(&mut e)?,
            ["k: entry for a live row is delete-marked"]
        );
        Ok(())
    }

    #[test]
    fn an_entry_whose_row_is_gone_is_reported() -> Result<()> {
        let mut e = table_with_rows()?;
        let table = e.table("t")?.clone();
        let pk = 7u64.to_be_bytes();
        assert!(btree::delete(
            e.pager_mut(),
            &table.clustered,
            &[Some(&pk[..])]
        )?);
        assert_eq!(problems(&mut e)?, ["k: live entry without a live row"]);
        Ok(())
    }

    /// Row 5's entry says k = 5 while the row now says 6: the entry leads
    /// to a live row that does not imply it.
    #[test]
    fn a_stale_entry_is_reported() -> Result<()> {
        let mut e = table_with_rows()?;
        let table = e.table("t")?.clone();
        let (stale, key) = entry_of_row(&mut e, &table, 5)?;
        let s = e.session();
        e.execute(
            s,
            Request::Update {
                table: "t".into(),
                key: vec![Value::UInt(5)],
                set: vec![("k".into(), Value::UInt(6))],
            },
        )?;
        let index = &table.secondary[0].index;
        if btree::get(e.pager_mut(), index, &btree::key_refs(&key))?.is_some() {
            btree::set_delete_mark(e.pager_mut(), index, &btree::key_refs(&key), false, None)?;
        } else {
            btree::insert(e.pager_mut(), index, &stale)?;
        }
        assert_eq!(problems(&mut e)?, ["k: live entry does not match its row"]);
        Ok(())
    }
}
