//! Index statistics: how many distinct values each key prefix has, from a
//! sample of leaf pages, as ANALYZE TABLE and SHOW INDEX's Cardinality
//! report them. Mirrors InnoDB Plugin 1.0's
//! `btr_estimate_number_of_different_key_vals` (btr0cur.c), with
//! `innodb_stats_sample_pages` the sample's size.
//!
//! InnoDB picks its pages by random dives from the root
//! (`btr_cur_open_at_rnd_pos`); innosim's engine takes no randomness of its
//! own, so it samples pages spread evenly over the leaf level instead,
//! which is the same for a tree of no more leaves than the sample (every
//! leaf is read) and a deterministic stand-in for the dives otherwise.

use super::cursor::Bound;
use super::{child_of, fix_node, key_refs, search_page, Index, Mode};
use crate::error::{Error, Result};
use crate::page::{self, index, FIL_NULL};
use crate::pager::Pager;
use crate::record;
use std::cmp::Ordering;

/// What one index's sample found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStats {
    /// For each key prefix of 1 ..= the index's unique fields, the
    /// estimated number of distinct values (InnoDB's
    /// `stat_n_diff_key_vals[1..]`).
    pub n_diff: Vec<u64>,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Pages at every level.
    pub size_pages: u64,
    /// Leaf pages read.
    pub sampled: u64,
}

/// The page numbers of each level of the tree, root level first.
pub fn level_pages(pager: &mut Pager, index: &Index) -> Result<Vec<Vec<u32>>> {
    let mut levels = Vec::new();
    let mut first = index.root;
    loop {
        let mut pages = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut no = first;
        let mut level = None;
        let mut down = None;
        while no != FIL_NULL {
            if !seen.insert(no) {
                return Err(Error::Corrupt {
                    file: index.name.clone(),
                    reason: "a level's page chain does not end".into(),
                });
            }
            let f = fix_node(pager, index, no, level)?;
            let p = pager.page(f);
            let l = index::level(p);
            level = Some(l);
            if down.is_none() && l > 0 && index::n_recs(p) > 0 {
                down = Some(child_of(index, index::rec(p, 0)));
            }
            let next = page::next(p);
            pager.unfix(f);
            pages.push(no);
            no = next;
        }
        levels.push(pages);
        match (level, down) {
            (Some(0), _) | (None, _) => return Ok(levels),
            (Some(_), Some(child)) => first = child?,
            (Some(_), None) => {
                return Err(Error::Corrupt {
                    file: index.name.clone(),
                    reason: "a node level without records".into(),
                })
            }
        }
    }
}

/// Estimates the distinct values of each prefix of the first `n_uniq`
/// fields of `index` from `sample_pages` leaf pages (at least one, at most
/// the index's pages), by InnoDB's formula.
pub fn estimate(
    pager: &mut Pager,
    index: &Index,
    n_uniq: usize,
    sample_pages: u64,
) -> Result<IndexStats> {
    let levels = level_pages(pager, index)?;
    let leaves = levels.last().cloned().unwrap_or_default();
    let size_pages: u64 = levels.iter().map(|l| l.len() as u64).sum();
    let leaf_pages = leaves.len() as u64;
    let n_sample = sample_pages.clamp(1, size_pages.max(1));
    let mut n_diff = vec![0u64; n_uniq + 1];
    let mut not_empty = 0u64;
    for i in 0..n_sample {
        // Evenly spread over the leaves (a leaf more than once when the
        // sample is larger than the leaf level, as random dives may).
        let slot = (i * leaf_pages / n_sample) as usize;
        let Some(&no) = leaves.get(slot) else {
            continue;
        };
        let f = fix_node(pager, index, no, Some(0))?;
        let p = pager.page(f);
        let n = index::n_recs(p);
        let r = (|| -> Result<()> {
            if n > 0 {
                not_empty = 1;
            }
            for s in 1..n {
                let matched =
                    matched_fields(&index.leaf, index::rec(p, s - 1), index::rec(p, s), n_uniq)?;
                for d in &mut n_diff[matched + 1..] {
                    *d += 1;
                }
            }
            // The first record of a page differs from the last of the page
            // before it, when the key is the tree's whole unique key.
            if n_uniq == index.n_key && (page::prev(p) != FIL_NULL || page::next(p) != FIL_NULL) {
                n_diff[n_uniq] += 1;
            }
            Ok(())
        })();
        pager.unfix(f);
        r?;
    }
    let est = |d: u64| {
        let v = (d * leaf_pages + n_sample - 1 + not_empty) / n_sample;
        v + (leaf_pages / (10 * n_sample)).min(n_sample)
    };
    Ok(IndexStats {
        n_diff: n_diff[1..].iter().map(|&d| est(d)).collect(),
        leaf_pages,
        size_pages,
        sampled: n_sample,
    })
}

/// Where one end of a range lies on each page of its root-to-leaf path
/// (root first): the position of the cursor's record counted as InnoDB's
/// `page_rec_get_n_recs_before` counts it (the infimum is 0, the first
/// record 1, the supremum one past the last), and the page's records
/// (`btr_cur_add_path_info`).
#[derive(Debug, Clone, Copy)]
struct PathSlot {
    nth_rec: u64,
    n_recs: u64,
}

/// One end of a range as InnoDB's search modes place a cursor for it
/// (ha_innobase::records_in_range's `convert_search_mode_to_innobase`):
/// a low end included is PAGE_CUR_GE, excluded PAGE_CUR_G; a high end
/// included is PAGE_CUR_G (the first record after it), excluded
/// PAGE_CUR_L (the last record before it); an open end is the cursor
/// opened at that side of the index (`btr_cur_open_at_index_side`).
fn range_path(pager: &mut Pager, index: &Index, bound: &Bound, low: bool) -> Result<Vec<PathSlot>> {
    #[derive(Clone, Copy, PartialEq)]
    enum M {
        Ge,
        G,
        L,
    }
    let (key, mode) = match (bound, low) {
        (Bound::Unbounded, _) => (None, M::Ge),
        (Bound::Included(k), true) => (Some(k), M::Ge),
        (Bound::Excluded(k), true) | (Bound::Included(k), false) => (Some(k), M::G),
        (Bound::Excluded(k), false) => (Some(k), M::L),
    };
    let key = key.map(|k| key_refs(k));
    let mut path = Vec::new();
    let mut no = index.root;
    let mut expected = None;
    loop {
        let f = fix_node(pager, index, no, expected)?;
        let p = pager.page(f);
        let level = index::level(p);
        let n = index::n_recs(p);
        let r = (|| -> Result<(u64, Option<u32>)> {
            if level == 0 {
                let nth = match (&key, mode) {
                    (None, _) if low => 0,
                    (None, _) => n as u64 + 1,
                    (Some(k), M::Ge) => search_page(index, p, k, Mode::LowerBound)? as u64 + 1,
                    (Some(k), M::G) => search_page(index, p, k, Mode::UpperBound)? as u64 + 1,
                    (Some(k), M::L) => search_page(index, p, k, Mode::LowerBound)? as u64,
                };
                return Ok((nth, None));
            }
            // A node level: the node pointer the search follows, the last
            // one below the key (PAGE_CUR_L, for GE and L) or not above it
            // (PAGE_CUR_LE, for G), the first standing for everything
            // smaller; an open end follows the first or the last.
            let pos = match (&key, mode) {
                (None, _) if low => 1,
                (None, _) => n,
                (Some(k), M::G) => search_page(index, p, k, Mode::UpperBound)?.max(1),
                (Some(k), _) => search_page(index, p, k, Mode::LowerBound)?.max(1),
            };
            let child = child_of(index, index::rec(p, pos - 1))?;
            Ok((pos as u64, Some(child)))
        })();
        pager.unfix(f);
        let (nth_rec, child) = r?;
        path.push(PathSlot {
            nth_rec,
            n_recs: n as u64,
        });
        match child {
            Some(c) => {
                no = c;
                expected = Some(level - 1);
            }
            None => return Ok(path),
        }
    }
}

/// The estimated number of records of `index` between `low` and `high`
/// (InnoDB's `btr_estimate_n_rows_in_range`): the two ends are searched
/// from the root, and where their paths part the records between them
/// are counted, on the levels below multiplied by the pages' average
/// fill, doubled once more below the level after the parting (the
/// algorithm underestimates in taller trees), and never more than half of
/// `table_rows` (the table's `stat_n_rows`), unless the table holds no
/// more than one row. As `ha_innobase::records_in_range` gives it: never
/// 0, which MySQL would take for an exact empty range.
pub fn records_in_range(
    pager: &mut Pager,
    index: &Index,
    low: &Bound,
    high: &Bound,
    table_rows: u64,
) -> Result<u64> {
    let path1 = range_path(pager, index, low, true)?;
    let path2 = range_path(pager, index, high, false)?;
    let mut n_rows: u64 = 1;
    let mut diverged = false;
    let mut diverged_lot = false;
    let mut divergence_level = usize::MAX;
    let mut i = 0;
    let n_rows = loop {
        let (Some(s1), Some(s2)) = (path1.get(i), path2.get(i)) else {
            if divergence_level != usize::MAX && i > divergence_level + 1 {
                n_rows *= 2;
            }
            if n_rows > table_rows / 2 {
                n_rows = table_rows / 2;
                if n_rows == 0 {
                    n_rows = table_rows;
                }
            }
            break n_rows;
        };
        if !diverged && s1.nth_rec != s2.nth_rec {
            diverged = true;
            if s1.nth_rec < s2.nth_rec {
                n_rows = s2.nth_rec - s1.nth_rec;
                if n_rows > 1 {
                    diverged_lot = true;
                    divergence_level = i;
                }
            } else {
                // The ends crossed (an empty range, or a tree that changed
                // between the two searches): InnoDB's answer.
                break 10;
            }
        } else if diverged && !diverged_lot {
            if s1.nth_rec < s1.n_recs || s2.nth_rec > 1 {
                diverged_lot = true;
                divergence_level = i;
                n_rows = 0;
                if s1.nth_rec < s1.n_recs {
                    n_rows += s1.n_recs - s1.nth_rec;
                }
                if s2.nth_rec > 1 {
                    n_rows += s2.nth_rec - 1;
                }
            }
        } else if diverged_lot {
            n_rows = n_rows * (s1.n_recs + s2.n_recs) / 2;
        }
        i += 1;
    };
    Ok(n_rows.max(1))
}

/// How many leading fields (of the first `n`) two records share.
fn matched_fields(layout: &record::RecordLayout, a: &[u8], b: &[u8], n: usize) -> Result<usize> {
    for k in 1..=n {
        if record::compare_records(layout, a, b, k)? != Ordering::Equal {
            return Ok(k - 1);
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btree::{create, insert, Key};
    use crate::fil::{Fil, SYSTEM_SPACE};
    use crate::fsp;
    use crate::io::MemStorage;
    use crate::record::{encode, FieldDef, FieldKind, FieldValue, RecordLayout, RowFormat};
    use crate::redo::{Log, LogConfig};

    const SPACE: u32 = 3;

    /// A tree of `n` records keyed 0, 2, 4, ... (a secondary index: the
    /// key and 200 bytes), tall enough to have node levels.
    fn tree(n: u32) -> (Pager, Index) {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
        fil.extend(SYSTEM_SPACE, 200).unwrap();
        fil.create_sized(SPACE, "t.ibd", None).unwrap();
        let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
        let mut pager = Pager::new(fil, log, 512, true, Box::new(crate::io::ManualClock::new()));
        fsp::create_space(&mut pager, SPACE, 4, 1, 0).unwrap();
        let layout = RecordLayout::new(
            RowFormat::Compact,
            vec![
                FieldDef::not_null(FieldKind::Fixed(4)),
                FieldDef::not_null(FieldKind::Fixed(200)),
            ],
        );
        let mut index = Index::new(9, "k", SPACE, 0, layout, 1);
        index.root = create(&mut pager, SPACE, index.id, None).unwrap();
        for k in 0..n {
            let mut rec = Vec::new();
            encode(
                &index.leaf,
                &[
                    FieldValue::Inline(&(2 * k).to_be_bytes()),
                    FieldValue::Inline(&[b'x'; 200]),
                ],
                false,
                &mut rec,
            );
            insert(&mut pager, &index, &rec).unwrap();
        }
        (pager, index)
    }

    fn key(k: u32) -> Key {
        vec![Some(k.to_be_bytes().to_vec())]
    }

    /// btr_estimate_n_rows_in_range's answers: exact inside one leaf (the
    /// paths part only there), close across leaves, at most half the
    /// table, never 0, and 10 for ends that cross.
    #[test]
    fn rows_in_range_follow_innodbs_estimate() {
        let n = 3000;
        let (mut pager, index) = tree(n);
        let levels = level_pages(&mut pager, &index).unwrap();
        assert!(levels.len() >= 2, "a node level: {} levels", levels.len());
        let est = |pager: &mut Pager, lo: &Bound, hi: &Bound| {
            records_in_range(pager, &index, lo, hi, u64::from(n)).unwrap()
        };
        // Keys 10 ..= 20: 10, 12, ..., 20, on one leaf.
        let inc = |k| Bound::Included(key(k));
        let exc = |k| Bound::Excluded(key(k));
        assert_eq!(est(&mut pager, &inc(10), &inc(20)), 6);
        assert_eq!(est(&mut pager, &exc(10), &inc(20)), 5);
        // An excluded high end puts InnoDB's cursor on the last record
        // before it (PAGE_CUR_L): one fewer than the records in range.
        assert_eq!(est(&mut pager, &inc(10), &exc(20)), 4);
        assert_eq!(est(&mut pager, &inc(12), &inc(12)), 1);
        // Nothing in range is still 1; crossed ends are InnoDB's 10.
        assert_eq!(est(&mut pager, &inc(11), &inc(11)), 1);
        assert_eq!(est(&mut pager, &inc(100), &inc(50)), 10);
        // The whole index, or most of it: half the table's rows.
        let half = u64::from(n / 2);
        assert_eq!(est(&mut pager, &Bound::Unbounded, &Bound::Unbounded), half);
        assert_eq!(est(&mut pager, &inc(100), &Bound::Unbounded), half);
        // A range over several leaves: within a factor of two of the 500
        // records in it.
        let wide = est(&mut pager, &inc(1000), &exc(2000));
        assert!((250..=1000).contains(&wide), "{wide}");
    }
}
