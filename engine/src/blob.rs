//! Off-page storage of long columns: chains of BLOB pages. Mirrors the
//! externally-stored-field half of InnoDB's `btr0cur.cc`.
//!
//! ```text
//! BLOB page, after the FIL header:
//! BLOB_PART_LEN   4  bytes of the column on this page
//! BLOB_NEXT       4  next page of the chain, or FIL_NULL
//! BLOB_DATA          the bytes
//! ```
//!
//! A record points at the chain with a 20-byte [`ExternalRef`]. Chains are
//! immutable: an update that changes a long column writes a new chain, and
//! the old one is freed when the last version that needs it goes (purge, or
//! the rollback of the change). Writing a chain takes one
//! mini-transaction per page; freeing one happens inside the caller's
//! mini-transaction, together with the change that drops the last
//! reference, so that a crash can neither leak a referenced chain nor free
//! a chain twice. A crash in the middle of writing a chain, before any
//! record points to it, leaks its pages (InnoDB has the same window).

use crate::error::{Error, Result};
use crate::fsp;
use crate::mtr::Mtr;
use crate::page::{self, PageId, PageType, FIL_NULL, FIL_PAGE_DATA, FIL_PAGE_DATA_END};
use crate::pager::Pager;
use crate::record::ExternalRef;

/// Offset of the part length.
pub const BLOB_PART_LEN: usize = FIL_PAGE_DATA;
/// Offset of the next-page link.
pub const BLOB_NEXT: usize = BLOB_PART_LEN + 4;
/// Offset of the data.
pub const BLOB_DATA: usize = BLOB_NEXT + 4;
/// Column bytes per page.
pub const BLOB_PART_MAX: usize = FIL_PAGE_DATA_END - BLOB_DATA;

/// Column bytes per page in `space`: a compressed space's pages keep only
/// their physical size (and have no trailer). They hold the column
/// uncompressed: InnoDB's own zlib streams for them (ZBLOB pages) are not
/// built yet.
pub fn part_max(pager: &Pager, space: u32) -> usize {
    match pager.fil.zip_size(space) {
        Some(size) => size - BLOB_DATA,
        None => BLOB_PART_MAX,
    }
}

/// Writes `data` (non-empty) as a new chain in `space`.
pub fn write(pager: &mut Pager, space: u32, data: &[u8]) -> Result<ExternalRef> {
    assert!(!data.is_empty(), "empty external column");
    let part_max = part_max(pager, space);
    fsp::reserve(pager, space, data.len().div_ceil(part_max) as u32)?;
    let mut first = FIL_NULL;
    let mut prev = FIL_NULL;
    for part in data.chunks(part_max) {
        // Each page is a mini-transaction of a page's worth of redo, and a
        // column may take many: make room in the log before each, as
        // InnoDB's btr_blob_log_check_t does between the pages of a big
        // record (with no mini-transaction open, every page is consistent).
        pager.free_check()?;
        let mut mtr = Mtr::new();
        let page_no = fsp::alloc(&mut mtr, pager, space, PageType::Blob)?;
        let f = mtr.fix(pager, PageId::new(space, page_no))?;
        let mut hdr = [0u8; 8];
        hdr[..4].copy_from_slice(&(part.len() as u32).to_le_bytes());
        hdr[4..].copy_from_slice(&FIL_NULL.to_le_bytes());
        mtr.write(pager, f, BLOB_PART_LEN, &hdr)?;
        mtr.write(pager, f, BLOB_DATA, part)?;
        if prev != FIL_NULL {
            let pf = mtr.fix(pager, PageId::new(space, prev))?;
            mtr.write_u32(pager, pf, BLOB_NEXT, page_no)?;
        } else {
            first = page_no;
        }
        mtr.commit(pager)?;
        prev = page_no;
    }
    Ok(ExternalRef {
        space,
        page_no: first,
        offset: BLOB_DATA as u32,
        len: data.len() as u64,
    })
}

fn corrupt(pager: &Pager, r: &ExternalRef, page_no: u32, reason: &str) -> Error {
    Error::CorruptPage {
        file: pager.fil.name(r.space).unwrap_or("?").to_string(),
        page_no,
        reason: format!("off-page column: {reason}"),
    }
}

/// The page numbers of a chain, checked against the reference's length.
fn chain(pager: &mut Pager, r: &ExternalRef) -> Result<Vec<(u32, usize)>> {
    let mut out = Vec::new();
    let part_max = part_max(pager, r.space);
    let mut page_no = r.page_no;
    let mut remaining = r.len;
    while remaining > 0 {
        if page_no == FIL_NULL || out.len() as u64 > r.len / part_max as u64 + 1 {
            return Err(corrupt(
                pager,
                r,
                page_no,
                "chain ends before the column does",
            ));
        }
        let f = pager.fix(PageId::new(r.space, page_no))?;
        let p = pager.page(f);
        let ty = page::page_type_raw(p);
        let part = page::get_u32(p, BLOB_PART_LEN) as usize;
        let next = page::get_u32(p, BLOB_NEXT);
        pager.unfix(f);
        if ty != PageType::Blob as u16 {
            return Err(corrupt(
                pager,
                r,
                page_no,
                "chain reaches a page that is not a BLOB page",
            ));
        }
        if part == 0 || part > part_max || part as u64 > remaining {
            return Err(corrupt(pager, r, page_no, "bad part length"));
        }
        out.push((page_no, part));
        remaining -= part as u64;
        page_no = next;
    }
    Ok(out)
}

/// Reads a whole chain.
pub fn read(pager: &mut Pager, r: &ExternalRef) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(r.len as usize);
    for (page_no, part) in chain(pager, r)? {
        let f = pager.fix(PageId::new(r.space, page_no))?;
        out.extend_from_slice(&pager.page(f)[BLOB_DATA..BLOB_DATA + part]);
        pager.unfix(f);
    }
    Ok(out)
}

/// Frees a chain inside the caller's mini-transaction.
pub fn free_in(mtr: &mut Mtr, pager: &mut Pager, r: &ExternalRef) -> Result<()> {
    for (page_no, _) in chain(pager, r)? {
        fsp::free(mtr, pager, PageId::new(r.space, page_no))?;
    }
    Ok(())
}
