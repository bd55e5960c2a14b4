//! The doublewrite buffer: pages are first written, as a batch, to a fixed
//! area of the system tablespace and synced there, and only then written to
//! their home locations. A crash that tears a home page leaves an intact
//! copy in the area, which recovery copies back before applying redo (redo
//! cannot repair a torn page: it needs a consistent page to apply to).
//! Mirrors InnoDB's `buf0dblwr.cc` (`trx0sys` doublewrite in 5.1).
//!
//! ```text
//! system tablespace pages [DBLWR_START, DBLWR_START + DBLWR_PAGES)
//!   slot k: a sealed copy of some page, identified by its own FIL header
//! ```
//!
//! A copy is used only if it validates under the identity its header
//! claims; the newest valid copy of a page wins. A home page is replaced
//! when it fails validation or is older than the copy; both are safe
//! because the WAL rule made the copy's redo durable before it was written.

use crate::error::Result;
use crate::fil::{Fil, SYSTEM_SPACE};
use crate::page::{self, PageId, PageState, FIL_PAGE_OFFSET, FIL_PAGE_SPACE_ID, PAGE_SIZE};
use std::collections::BTreeMap;

/// First page of the doublewrite area in the system tablespace.
pub const DBLWR_START: u32 = 8;
/// Pages in the area: InnoDB's two blocks of 64 pages.
pub const DBLWR_PAGES: u32 = 128;

/// What doublewrite recovery did.
#[derive(Debug, Default, Clone)]
pub struct DoublewriteRepair {
    /// Valid copies found in the area.
    pub copies_found: usize,
    /// Home pages restored from a copy, with the reason.
    pub restored: Vec<(PageId, String)>,
}

/// Writes a batch of sealed page images to the area and syncs it.
pub fn write_area(fil: &mut Fil, images: &[u8]) -> Result<()> {
    assert!(images.len().is_multiple_of(PAGE_SIZE));
    let n = (images.len() / PAGE_SIZE) as u32;
    assert!(n <= DBLWR_PAGES, "doublewrite batch of {n} pages");
    for (k, image) in images.chunks(PAGE_SIZE).enumerate() {
        fil.write_page_at(SYSTEM_SPACE, DBLWR_START + k as u32, image)?;
    }
    fil.sync(SYSTEM_SPACE)
}

/// Whether the area holds a valid copy of page `id`. Recovery asks before
/// it opens tablespaces: a `.ibd` file whose page 0 is torn still names its
/// space in its first bytes, and that claim is trusted when a copy of that
/// page 0 is here for [`recover`] to restore.
pub fn has_copy(fil: &mut Fil, id: PageId) -> Result<bool> {
    let mut buf = vec![0u8; PAGE_SIZE];
    for k in 0..DBLWR_PAGES {
        if !fil.read_page_raw(PageId::new(SYSTEM_SPACE, DBLWR_START + k), &mut buf)? {
            continue;
        }
        let claimed = PageId::new(
            page::get_u32(&buf, FIL_PAGE_SPACE_ID),
            page::get_u32(&buf, FIL_PAGE_OFFSET),
        );
        let valid = matches!(
            page::validate(&buf, id, "doublewrite"),
            Ok(PageState::Valid)
        );
        if claimed == id && valid {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Restores torn or stale home pages from valid copies in the area. Spaces
/// must already be open; copies of pages in spaces that are not open are
/// skipped (their table was dropped).
pub fn recover(fil: &mut Fil) -> Result<DoublewriteRepair> {
    let mut report = DoublewriteRepair::default();
    let mut copies: BTreeMap<PageId, Vec<u8>> = BTreeMap::new();
    let mut buf = vec![0u8; PAGE_SIZE];
    for k in 0..DBLWR_PAGES {
        let slot = PageId::new(SYSTEM_SPACE, DBLWR_START + k);
        if !fil.read_page_raw(slot, &mut buf)? {
            continue;
        }
        let claimed = PageId::new(
            page::get_u32(&buf, FIL_PAGE_SPACE_ID),
            page::get_u32(&buf, FIL_PAGE_OFFSET),
        );
        if !matches!(
            page::validate(&buf, claimed, "doublewrite"),
            Ok(PageState::Valid)
        ) {
            continue;
        }
        report.copies_found += 1;
        let newer = match copies.get(&claimed) {
            Some(old) => page::page_lsn(&buf) > page::page_lsn(old),
            None => true,
        };
        if newer {
            copies.insert(claimed, buf.clone());
        }
    }
    let mut home = vec![0u8; PAGE_SIZE];
    for (id, copy) in copies {
        if !fil.is_open(id.space) {
            continue;
        }
        let state = match fil.read_page_raw(id, &mut home)? {
            false => Ok(PageState::Zero),
            true => page::validate(&home, id, "home"),
        };
        let reason = match state {
            Err(e) => Some(format!("home page failed validation: {e}")),
            Ok(PageState::Zero) => Some("home page was never written".to_string()),
            Ok(PageState::Valid) if page::page_lsn(&home) < page::page_lsn(&copy) => Some(format!(
                "home page LSN {} is older than the copy's {}",
                page::page_lsn(&home),
                page::page_lsn(&copy)
            )),
            Ok(PageState::Valid) => None,
        };
        if let Some(reason) = reason {
            fil.write_page_at(id.space, id.page_no, &copy)?;
            fil.sync(id.space)?;
            report.restored.push((id, reason));
        }
    }
    Ok(report)
}
