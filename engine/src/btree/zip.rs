//! The compressed-page trials: before a split, a merge or a root lift on a
//! compressed index commits to anything, the pages it would make are
//! built and compressed aside to see that they fit (the retries of
//! `btr_page_split_and_insert`, `btr_can_merge_with_page`); a record that
//! does not compress even alone on an empty page is refused first (ERROR
//! 1118, as InnoDB compares it with `page_zip_empty_size`).

use super::*;

/// Whether a page of `index` at `level` holding what `page` holds would
/// compress into its space's page size (always, in a space that is not
/// compressed): the trial InnoDB makes before it commits to a split or a
/// merge on compressed pages.
pub(super) fn compresses(
    pager: &mut Pager,
    index: &Index,
    level: u16,
    page: &[u8],
) -> Result<bool> {
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
pub(super) fn fresh_page(index: &Index, level: u16, recs: &[&[u8]]) -> Vec<u8> {
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
pub(super) fn fits_compressed_alone(pager: &mut Pager, index: &Index, rec: &[u8]) -> Result<()> {
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
pub(super) fn finish_zip(
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

/// On a compressed index, the split point nearest `k` (the first `k` of
/// the page's records with `rec` inserted at `slot` stay) whose two pages
/// both compress into the page size, as InnoDB retries a split of a
/// compressed page at another point (`btr_page_split_and_insert`). The
/// record was checked to compress alone on an empty page; when it still
/// compresses with none of its neighbours, `None`: the page must be split
/// between them first.
#[allow(clippy::too_many_arguments)]
pub(super) fn zip_split_point(
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
/// [`split_page`](super::split::split_page) relies on): with `ins` (a
/// slot and a record, counted in `k`) inserted where it belongs, or
/// without a record, the first `k` records staying.
pub(super) fn halves_compress(
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
