//! The doublewrite buffer: pages are first written, as a batch, to a fixed
//! area of the system tablespace and synced there, and only then written to
//! their home locations. A crash that tears a home page leaves an intact
//! copy in the area, which recovery copies back before applying redo (redo
//! cannot repair a torn page: it needs a consistent page to apply to).
//! Mirrors InnoDB's `buf0dblwr.cc` (`trx0sys` doublewrite in 5.1).
//!
//! ```text
//! system tablespace pages [DBLWR_START, DBLWR_START + DBLWR_PAGES)
//!   slot k: a sealed copy of some page, identified by its own FIL header;
//!           a compressed space's page at its physical size, the rest of
//!           the slot zeros (as buf0dblwr.cc writes compressed pages)
//! ```
//!
//! A copy is used only if it validates under the identity its header
//! claims; the newest valid copy of a page wins. A home page is replaced
//! when it fails validation or is older than the copy; both are safe
//! because the WAL rule made the copy's redo durable before it was written.
//!
//! A copy older than the checkpoint recovery starts from is never used
//! (MariaDB's `recv_dblwr_t` skips them: "pages written before the
//! checkpoint are not useful"). Later batches overwrite the area from its
//! first slot, so a copy may outlive newer writes of its page whose own
//! copies are gone; on top of such a copy, redo from the checkpoint cannot
//! bring back what changed between the two. A home page that fails
//! validation with no copy from after the checkpoint is damage at rest,
//! and is left for the first read of it to report.

use crate::error::Result;
use crate::fil::{Fil, SYSTEM_SPACE};
use crate::page::{
    self, PageId, PageState, FIL_PAGE_DATA, FIL_PAGE_LSN, FIL_PAGE_OFFSET, FIL_PAGE_SPACE_ID,
    PAGE_SIZE,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// First page of the doublewrite area in the system tablespace.
pub const DBLWR_START: u32 = 8;
/// Pages in the area: InnoDB's two blocks of 64 pages.
pub const DBLWR_PAGES: u32 = 128;

/// What doublewrite recovery did.
#[derive(Debug, Default, Clone)]
pub struct DoublewriteRepair {
    /// Pages whose home needed a look at their copies and had a valid one.
    pub copies_used: usize,
    /// Home pages restored from a copy, with the reason.
    pub restored: Vec<(PageId, String)>,
}

/// Writes a batch of sealed page images to the area and syncs it.
pub fn write_area(fil: &mut Fil, images: &[Arc<[u8]>]) -> Result<()> {
    assert!(
        images.len() <= DBLWR_PAGES as usize,
        "doublewrite batch of {} pages",
        images.len()
    );
    for (k, image) in images.iter().enumerate() {
        let slot = DBLWR_START + k as u32;
        if image.len() == PAGE_SIZE {
            fil.write_page_shared(SYSTEM_SPACE, slot, image)?;
        } else {
            // A compressed page's image, padded with zeros to the slot,
            // built where the write shares it (storage that keeps images
            // then keeps this one, without a copy of its own).
            static ZERO: [u8; PAGE_SIZE] = [0; PAGE_SIZE];
            let mut padded: Arc<[u8]> = Arc::from(&ZERO[..]);
            Arc::get_mut(&mut padded).expect("a new Arc is unique")[..image.len()]
                .copy_from_slice(image);
            fil.write_page_shared(SYSTEM_SPACE, slot, &padded)?;
        }
    }
    fil.sync(SYSTEM_SPACE)
}

/// The physical image a slot holds for page `id`, and whether it is a
/// compressed space's: as the open space says, or, for a page 0 of a space
/// not open yet, as the copy's own FSP flags say.
fn copy_of<'a>(fil: &Fil, id: PageId, slot: &'a [u8]) -> (&'a [u8], bool) {
    let zip = if fil.is_open(id.space) {
        fil.zip_size(id.space)
    } else if id.page_no == 0 {
        crate::fil::page_size_of_flags(page::get_u32(slot, crate::fil::FSP_FLAGS)).unwrap_or(None)
    } else {
        None
    };
    match zip {
        Some(size) => (&slot[..size], true),
        None => (slot, false),
    }
}

/// Whether the area holds a valid copy of page `id` that [`recover`] would
/// use (written at or after `checkpoint_lsn`). Recovery asks before it
/// opens tablespaces: a `.ibd` file whose page 0 is torn still names its
/// space in its first bytes, and that claim is trusted when a copy of that
/// page 0 is here for [`recover`] to restore. `Some` gives the copy's
/// compressed page size (`None`: 16 KiB pages), which a page 0 holds in its
/// flags.
pub fn has_copy(fil: &mut Fil, id: PageId, checkpoint_lsn: u64) -> Result<Option<Option<usize>>> {
    for k in 0..DBLWR_PAGES {
        let Some(buf) = fil.read_page_raw(PageId::new(SYSTEM_SPACE, DBLWR_START + k))? else {
            continue;
        };
        let claimed = PageId::new(
            page::get_u32(&buf, FIL_PAGE_SPACE_ID),
            page::get_u32(&buf, FIL_PAGE_OFFSET),
        );
        let (copy, compressed) = copy_of(fil, id, &buf);
        let valid = matches!(
            page::validate_image(copy, compressed, id, "doublewrite"),
            Ok(PageState::Valid)
        );
        if claimed == id && valid && page::page_lsn(&buf) >= checkpoint_lsn {
            return Ok(Some(compressed.then_some(copy.len())));
        }
    }
    Ok(None)
}

/// Restores torn or stale home pages from valid copies in the area written
/// at or after `checkpoint_lsn` (see the module comment). Spaces
/// must already be open; copies of pages in spaces that are not open are
/// skipped (their table was dropped).
///
/// Home first, as InnoDB's `buf_dblwr_process` does: the slots' FIL headers
/// say which pages the area holds and at which LSN; a page whose home
/// validates and is at least as new as every slot's claim needs nothing,
/// and only for the others are the slots read whole and validated, newest
/// claim first, until a valid copy is found. That is the newest valid copy
/// (a valid copy's header tells the truth), without reading and
/// checksumming 128 slots at every start.
pub fn recover(fil: &mut Fil, checkpoint_lsn: u64) -> Result<DoublewriteRepair> {
    let mut report = DoublewriteRepair::default();
    // Per claimed page: (claimed LSN, slot), from the headers alone.
    let mut claims: BTreeMap<PageId, Vec<(u64, u32)>> = BTreeMap::new();
    let mut header = [0u8; FIL_PAGE_DATA];
    for k in 0..DBLWR_PAGES {
        if !fil.read_page_prefix(PageId::new(SYSTEM_SPACE, DBLWR_START + k), &mut header)? {
            continue;
        }
        let claimed = PageId::new(
            page::get_u32(&header, FIL_PAGE_SPACE_ID),
            page::get_u32(&header, FIL_PAGE_OFFSET),
        );
        let lsn = page::get_u64(&header, FIL_PAGE_LSN);
        if lsn < checkpoint_lsn {
            continue;
        }
        claims.entry(claimed).or_default().push((lsn, k));
    }
    for (id, mut slots) in claims {
        let Some(size) = fil.page_size(id.space) else {
            continue;
        };
        let compressed = fil.zip_size(id.space).is_some();
        let home = fil.read_page_raw(id)?;
        let state = match &home {
            None => Ok(PageState::Zero),
            Some(home) => page::validate_image(home, compressed, id, "home"),
        };
        let home_lsn = home.as_deref().map_or(0, page::page_lsn);
        // Newest claim first; among equal ones the lowest slot.
        slots.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        if matches!(state, Ok(PageState::Valid)) && home_lsn >= slots[0].0 {
            continue;
        }
        let mut found = None;
        for &(_, k) in &slots {
            let Some(copy) = fil.read_page_raw(PageId::new(SYSTEM_SPACE, DBLWR_START + k))? else {
                continue;
            };
            if matches!(
                page::validate_image(&copy[..size], compressed, id, "doublewrite"),
                Ok(PageState::Valid)
            ) {
                found = Some(copy);
                break;
            }
        }
        let Some(copy) = found else {
            continue;
        };
        report.copies_used += 1;
        let reason = match state {
            Err(e) => format!("home page failed validation: {e}"),
            Ok(PageState::Zero) => "home page was never written".to_string(),
            Ok(PageState::Valid) if home_lsn < page::page_lsn(&copy) => format!(
                "home page LSN {home_lsn} is older than the copy's {}",
                page::page_lsn(&copy)
            ),
            Ok(PageState::Valid) => continue,
        };
        if size == PAGE_SIZE {
            fil.write_page_shared(id.space, id.page_no, &copy)?;
        } else {
            fil.write_page_at(id.space, id.page_no, &copy[..size])?;
        }
        fil.sync(id.space)?;
        report.restored.push((id, reason));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemStorage;
    use crate::page::PageType;

    /// A sealed index page `id` at `lsn`.
    fn image(id: PageId, lsn: u64) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        page::init(&mut p, id, PageType::Index);
        page::set_page_lsn(&mut p, lsn);
        page::seal(&mut p);
        p
    }

    /// A system tablespace with the area, and space 5 whose page 3 was
    /// written at LSN 300 and then damaged at rest; the area still holds
    /// a copy of that page from LSN 100 (a later batch took the slot of the
    /// LSN 300 copy, not this one).
    fn damaged_page_with_an_old_copy() -> Result<(Fil, PageId)> {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1")?;
        fil.extend(SYSTEM_SPACE, DBLWR_START + DBLWR_PAGES)?;
        fil.create(5, "t.ibd")?;
        fil.extend(5, 4)?;
        let id = PageId::new(5, 3);
        fil.write_page_at(SYSTEM_SPACE, DBLWR_START + 20, &image(id, 100))?;
        let mut home = image(id, 300);
        home[5000] ^= 0x10;
        fil.write_page_at(5, 3, &home)?;
        Ok((fil, id))
    }

    #[test]
    fn a_copy_older_than_the_checkpoint_does_not_replace_a_damaged_page() -> Result<()> {
        let (mut fil, id) = damaged_page_with_an_old_copy()?;
        // Redo from LSN 200 on cannot turn the LSN 100 copy into the page
        // as it was at 300: the damage stays, for the first read to report.
        let repair = recover(&mut fil, 200)?;
        assert!(repair.restored.is_empty(), "{:?}", repair.restored);
        let mut buf = vec![0u8; PAGE_SIZE];
        assert!(
            fil.read_page(id, &mut buf).is_err(),
            "the damaged page is reported"
        );
        Ok(())
    }

    #[test]
    fn a_copy_from_after_the_checkpoint_repairs_a_damaged_page() -> Result<()> {
        let (mut fil, id) = damaged_page_with_an_old_copy()?;
        // From a checkpoint at 50, redo brings the copy forward.
        let repair = recover(&mut fil, 50)?;
        assert_eq!(repair.restored.len(), 1, "{:?}", repair.restored);
        assert_eq!(repair.restored[0].0, id);
        let mut buf = vec![0u8; PAGE_SIZE];
        assert!(matches!(fil.read_page(id, &mut buf)?, PageState::Valid));
        assert_eq!(page::page_lsn(&buf), 100);
        Ok(())
    }

    /// A sealed compressed index page `id` of `size` bytes at `lsn`.
    fn zip_image(id: PageId, size: usize, lsn: u64) -> Vec<u8> {
        use crate::page::zip::{Stored, ZipFields, ZipPage};
        use crate::record::{FieldDef, FieldKind, RecordLayout, RowFormat};
        let mut p = vec![0u8; PAGE_SIZE];
        page::init(&mut p, id, PageType::Index);
        page::set_page_lsn(&mut p, lsn);
        page::index::init(&mut p, 9, 0);
        let layout = RecordLayout::new(
            RowFormat::Dynamic,
            vec![FieldDef::not_null(FieldKind::Fixed(4))],
        );
        for k in 0..50u32 {
            let mut rec = Vec::new();
            let key = k.to_be_bytes();
            crate::record::encode(
                &layout,
                &[crate::record::FieldValue::Inline(&key)],
                false,
                &mut rec,
            );
            page::index::insert(&mut p, k as usize, &rec);
        }
        let fields = ZipFields::new(layout, Stored::Nothing).unwrap();
        let zip = ZipPage::compress(&p, &fields, size, 6).unwrap().unwrap();
        let mut image = zip.image().to_vec();
        page::zip::seal(&mut image);
        image
    }

    /// A compressed space of 4 KiB pages whose page 2 was torn while being
    /// written (its first sector new, the rest of the old, never-written
    /// zeros), with `copy` in the area when it is `true`.
    fn torn_compressed_page(copy: bool) -> Result<(Fil, PageId, Vec<u8>)> {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1")?;
        fil.extend(SYSTEM_SPACE, DBLWR_START + DBLWR_PAGES)?;
        fil.create_sized(6, "c.ibd", Some(4096))?;
        fil.extend(6, 4)?;
        let id = PageId::new(6, 2);
        let image = zip_image(id, 4096, 500);
        if copy {
            write_area(&mut fil, &[Arc::from(&image[..])])?;
        }
        let mut torn = vec![0u8; 4096];
        torn[..512].copy_from_slice(&image[..512]);
        fil.write_page_at(6, 2, &torn)?;
        Ok((fil, id, image))
    }

    #[test]
    fn a_torn_compressed_page_is_repaired_from_its_copy() -> Result<()> {
        let (mut fil, id, image) = torn_compressed_page(true)?;
        let mut buf = vec![0u8; 4096];
        assert!(fil.read_page(id, &mut buf).unwrap_err().is_corruption());
        let repair = recover(&mut fil, 100)?;
        assert_eq!(repair.restored.len(), 1, "{:?}", repair.restored);
        assert_eq!(fil.read_page(id, &mut buf)?, PageState::Valid);
        assert_eq!(buf, image, "the copy, at the physical size");
        Ok(())
    }

    #[test]
    fn without_a_copy_a_torn_compressed_page_is_corruption_not_data() -> Result<()> {
        let (mut fil, id, _) = torn_compressed_page(false)?;
        let repair = recover(&mut fil, 100)?;
        assert!(repair.restored.is_empty());
        let mut buf = vec![0u8; 4096];
        let err = fil.read_page(id, &mut buf).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        Ok(())
    }

    #[test]
    fn a_compressed_space_is_opened_at_the_size_its_page_0_records() -> Result<()> {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        for (space, zip) in [(7u32, Some(1024usize)), (8, Some(16384)), (9, None)] {
            let name = format!("t{space}.ibd");
            fil.create_sized(space, &name, zip)?;
            let size = zip.unwrap_or(PAGE_SIZE);
            let mut p0 = vec![0u8; PAGE_SIZE];
            page::init(&mut p0, PageId::new(space, 0), PageType::FspHdr);
            page::put_u32(&mut p0, crate::fil::FSP_FLAGS, crate::fil::flags_for(zip));
            let mut image = p0[..size].to_vec();
            page::seal_image(&mut image, zip.is_some());
            fil.write_page_at(space, 0, &image)?;
            fil.close(space);
            fil.open(space, &name)?;
            assert_eq!(fil.page_size(space), Some(size));
            assert_eq!(fil.zip_size(space), zip);
            let mut buf = vec![0u8; size];
            assert_eq!(
                fil.read_page(PageId::new(space, 0), &mut buf)?,
                PageState::Valid
            );
        }
        Ok(())
    }

    /// Before its space is open, a copy of a compressed page 0 is found and
    /// its size read from its own flags.
    #[test]
    fn a_copy_of_a_compressed_page_0_names_its_size() -> Result<()> {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1")?;
        fil.extend(SYSTEM_SPACE, DBLWR_START + DBLWR_PAGES)?;
        let id = PageId::new(9, 0);
        let mut p0 = vec![0u8; PAGE_SIZE];
        page::init(&mut p0, id, PageType::FspHdr);
        page::set_page_lsn(&mut p0, 700);
        page::put_u32(
            &mut p0,
            crate::fil::FSP_FLAGS,
            crate::fil::flags_for(Some(1024)),
        );
        let mut image = p0[..1024].to_vec();
        page::seal_image(&mut image, true);
        write_area(&mut fil, &[Arc::from(&image[..])])?;
        assert_eq!(has_copy(&mut fil, id, 100)?, Some(Some(1024)));
        assert_eq!(
            has_copy(&mut fil, id, 800)?,
            None,
            "older than the checkpoint"
        );
        assert_eq!(has_copy(&mut fil, PageId::new(9, 1), 100)?, None);
        Ok(())
    }
}
