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

use super::{child_of, fix_node, Index};
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

/// How many leading fields (of the first `n`) two records share.
fn matched_fields(layout: &record::RecordLayout, a: &[u8], b: &[u8], n: usize) -> Result<usize> {
    for k in 1..=n {
        if record::compare_records(layout, a, b, k)? != Ordering::Equal {
            return Ok(k - 1);
        }
    }
    Ok(n)
}
