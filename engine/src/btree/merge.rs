//! Merges after deletes (`btr_compress`, `btr_lift_page_up`): a page left
//! less than half full is merged with a sibling under the same parent, or
//! freed when empty, and a root with a single child absorbs it. On a
//! compressed index a merge or lift happens only if its result compresses.

use super::zip::{compresses, finish_zip, fresh_page};
use super::*;

pub(super) fn needs_compress(page: &[u8]) -> bool {
    // InnoDB's BTR_CUR_PAGE_COMPRESS_LIMIT: try to merge below half full.
    index::used_space(page) < index::EMPTY_PAGE_SPACE / 2
}

/// Restores the fill invariants after a delete left `page_no` too empty:
/// frees an empty page, merges with a sibling under the same parent, and
/// lifts a root that has a single child.
pub(super) fn compress(
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
