//! Splits (`btr_page_split_and_insert`, `btr_root_raise`): a page too full
//! for a record is split in two and the new page's node pointer goes into
//! the parent, which may split in turn; a full root moves into a new child,
//! so that the root's page number never changes. On a compressed index the
//! split point is one whose halves both compress, and a record that
//! compresses beside neither neighbour splits its page in three.

use super::zip::{finish_zip, halves_compress, zip_split_point};
use super::*;

/// The pages a split of a leaf `depth` levels below the root may allocate:
/// a page on each level and a new root; on a compressed index twice that
/// and one more, for a split in three (a split, a root raise, and a second
/// split one level deeper).
pub(super) fn split_reserve(pager: &Pager, index: &Index, depth: usize) -> u32 {
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
pub(super) fn split_and_insert(
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
