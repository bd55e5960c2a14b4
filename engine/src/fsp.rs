//! File space management: the header on page 0 of every tablespace, page
//! allocation from a free list, and file growth. Mirrors the role of
//! InnoDB's `fsp0fsp.cc`, without its extents and segments: one free list
//! of single pages per space, plus a high-water mark.
//!
//! ```text
//! page 0, after the FIL header:
//! offset               size  field
//! FSP_SPACE_ID            4  the space id (also in the FIL header)
//! FSP_SIZE                4  pages the space owns (the file is at least this long)
//! FSP_FREE_LIMIT          4  pages at or past this number were never used
//! FSP_FREE_HEAD           4  first page of the free list, or FIL_NULL
//! FSP_FREE_LEN            4  pages on the free list
//! FSP_FLAGS               4  bits 1-4: the compressed page size as
//!                            log2(size / 512) (0: 16 KiB pages), as
//!                            InnoDB's DICT_TF_ZSSIZE; the rest 0
//! ```
//!
//! The free list is a chain of list pages, each a free page that holds the
//! numbers of other free pages, so freeing a page does not touch it (as
//! InnoDB's extent descriptors free a segment's pages without reading
//! them): a freed page's number goes into the head list page, and only
//! when that is full does the freed page itself become the new head. An
//! allocation takes the head's last number, or the head itself once it
//! holds none. A list page:
//!
//! ```text
//! FIL_PAGE_TYPE      PageType::Allocated
//! FIL_PAGE_NEXT      the next list page, or FIL_NULL
//! FIL_PAGE_DATA      4  FREE_MAGIC
//!               +4   4  numbers held
//!               +8   4  each: a free page's number
//! ```
//!
//! A list head without the magic is a free page of the format before list
//! pages (each free page linked to the next): it is taken whole, and the
//! next freed page starts a list page in front of it. All header and list
//! changes are redo-logged through the caller's mini-transaction.
//!
//! File growth happens only in [`reserve`], which runs in its own
//! mini-transaction before an operation that may allocate, so a full disk
//! fails the operation before it has changed anything. [`alloc`] never does
//! I/O beyond fixing pages.

use crate::error::{Error, Result};
use crate::mtr::Mtr;
use crate::page::{self, PageId, PageType, FIL_NULL, FIL_PAGE_DATA};
use crate::pager::Pager;

/// Offset of the space id.
pub const FSP_SPACE_ID: usize = FIL_PAGE_DATA;
/// Offset of the size in pages.
pub const FSP_SIZE: usize = FSP_SPACE_ID + 4;
/// Offset of the free limit.
pub const FSP_FREE_LIMIT: usize = FSP_SIZE + 4;
/// Offset of the free list head.
pub const FSP_FREE_HEAD: usize = FSP_FREE_LIMIT + 4;
/// Offset of the free list length.
pub const FSP_FREE_LEN: usize = FSP_FREE_HEAD + 4;
/// Offset of the flags (the file layer reads them: [`crate::fil::FSP_FLAGS`]).
pub const FSP_FLAGS: usize = crate::fil::FSP_FLAGS;
const _: () = assert!(
    FSP_FLAGS == FSP_FREE_LEN + 4,
    "the flags follow the free list length"
);

pub use crate::fil::{flags_for, page_size_of_flags};

/// Header of a space, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceHeader {
    /// Space id.
    pub space: u32,
    /// Pages owned.
    pub size: u32,
    /// High-water mark.
    pub free_limit: u32,
    /// Free list head.
    pub free_head: u32,
    /// Free list length.
    pub free_len: u32,
    /// Flags.
    pub flags: u32,
}

impl SpaceHeader {
    /// Reads the header from page 0's image.
    pub fn read(page0: &[u8]) -> SpaceHeader {
        SpaceHeader {
            space: page::get_u32(page0, FSP_SPACE_ID),
            size: page::get_u32(page0, FSP_SIZE),
            free_limit: page::get_u32(page0, FSP_FREE_LIMIT),
            free_head: page::get_u32(page0, FSP_FREE_HEAD),
            free_len: page::get_u32(page0, FSP_FREE_LEN),
            flags: page::get_u32(page0, FSP_FLAGS),
        }
    }

    /// Pages that can be allocated without growing the file.
    pub fn available(&self) -> u32 {
        self.free_len + self.size.saturating_sub(self.free_limit)
    }

    /// Bytes in free extents, as InnoDB reports them for SHOW TABLE
    /// STATUS's Data_free (`fsp_get_available_space_in_free_extents`, times
    /// 1024): nothing for a space under one extent (64 pages); otherwise
    /// whole free extents, counted safe above the free limit (one less,
    /// and less the extents that hold a descriptor page), less InnoDB's
    /// reserve for undo logs and cleaning (two extents and 1 % of the
    /// space). This file space manager keeps free pages in one list, not
    /// extents: its free pages count as `free_len / 64` extents.
    pub fn free_extents_bytes(&self, zip_size: Option<usize>) -> u64 {
        const EXTENT: u32 = 64;
        if self.size < EXTENT {
            return 0;
        }
        let page = zip_size.unwrap_or(page::PAGE_SIZE) as u32;
        let mut up = self.size.saturating_sub(self.free_limit) / EXTENT;
        if up > 0 {
            up -= 1;
            up -= up / (page / EXTENT);
        }
        let n_free = self.free_len / EXTENT + up;
        let reserve = 2 + (self.size / EXTENT) * 2 / 200;
        if reserve > n_free {
            return 0;
        }
        u64::from(n_free - reserve) * u64::from(EXTENT) * u64::from(page)
    }
}

/// Formats page 0 of a new space. Pages below `first_free` are reserved
/// for fixed uses. The file is grown to `size` pages first.
pub fn create_space(
    pager: &mut Pager,
    space: u32,
    size: u32,
    first_free: u32,
    flags: u32,
) -> Result<()> {
    assert!(first_free >= 1 && size >= first_free);
    pager.fil.extend(space, size)?;
    let mut mtr = Mtr::new();
    let f = mtr.create(pager, PageId::new(space, 0), PageType::FspHdr)?;
    let mut hdr = [0u8; 24];
    hdr[0..4].copy_from_slice(&space.to_le_bytes());
    hdr[4..8].copy_from_slice(&size.to_le_bytes());
    hdr[8..12].copy_from_slice(&first_free.to_le_bytes());
    hdr[12..16].copy_from_slice(&FIL_NULL.to_le_bytes());
    hdr[16..20].copy_from_slice(&0u32.to_le_bytes());
    hdr[20..24].copy_from_slice(&flags.to_le_bytes());
    mtr.write(pager, f, FSP_SPACE_ID, &hdr)?;
    mtr.commit(pager)?;
    Ok(())
}

/// Reads a space's header.
pub fn header(pager: &mut Pager, space: u32) -> Result<SpaceHeader> {
    let f = pager.fix(PageId::new(space, 0))?;
    let hdr = SpaceHeader::read(pager.page(f));
    pager.unfix(f);
    if hdr.space != space {
        return Err(Error::Corrupt {
            file: pager.fil.name(space).unwrap_or("?").to_string(),
            reason: format!("space header names space {} instead of {space}", hdr.space),
        });
    }
    Ok(hdr)
}

/// Makes sure at least `n` pages can be allocated in `space` without I/O,
/// growing the file if needed. A full disk fails here, before the caller
/// has changed anything.
pub fn reserve(pager: &mut Pager, space: u32, n: u32) -> Result<()> {
    let hdr = header(pager, space)?;
    if hdr.available() >= n {
        return Ok(());
    }
    let needed = n - hdr.available();
    let growth = (hdr.size / 4).clamp(4, 256).max(needed);
    let new_size = hdr
        .size
        .checked_add(growth)
        .ok_or_else(|| Error::TableFull {
            table: pager.fil.name(space).unwrap_or("?").to_string(),
        })?;
    pager.fil.extend(space, new_size)?;
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, PageId::new(space, 0))?;
    mtr.write_u32(pager, f, FSP_SIZE, new_size)?;
    mtr.commit(pager)?;
    Ok(())
}

/// Allocates a page inside `mtr` and formats it as `ty`. The space must
/// have been [`reserve`]d.
pub fn alloc(mtr: &mut Mtr, pager: &mut Pager, space: u32, ty: PageType) -> Result<u32> {
    let h = mtr.fix(pager, PageId::new(space, 0))?;
    let hdr = SpaceHeader::read(pager.page(h));
    let page_no = if hdr.free_head != FIL_NULL {
        let f = mtr.fix(pager, PageId::new(space, hdr.free_head))?;
        let held = list_count(pager.page(f)).unwrap_or(0);
        mtr.write_u32(pager, h, FSP_FREE_LEN, hdr.free_len.saturating_sub(1))?;
        if held > 0 {
            // The head's last number.
            let page_no = page::get_u32(pager.page(f), FREE_LIST_ENTRIES + 4 * (held - 1) as usize);
            if page_no == 0 || page_no == hdr.free_head || page_no >= hdr.free_limit {
                return Err(Error::Corrupt {
                    file: pager.fil.name(space).unwrap_or("?").to_string(),
                    reason: format!(
                        "free list page {} holds page {page_no}, below the space header or past the used pages ({})",
                        hdr.free_head, hdr.free_limit
                    ),
                });
            }
            mtr.write_u32(pager, f, FREE_LIST_N, held - 1)?;
            page_no
        } else {
            // An empty list page (or an old-format free page) is taken
            // itself; the next one heads the list.
            let next = page::next(pager.page(f));
            mtr.write_u32(pager, h, FSP_FREE_HEAD, next)?;
            hdr.free_head
        }
    } else if hdr.free_limit < hdr.size {
        mtr.write_u32(pager, h, FSP_FREE_LIMIT, hdr.free_limit + 1)?;
        hdr.free_limit
    } else {
        return Err(Error::Corrupt {
            file: pager.fil.name(space).unwrap_or("?").to_string(),
            reason: "page allocation without a reservation".into(),
        });
    };
    mtr.create(pager, PageId::new(space, page_no), ty)?;
    Ok(page_no)
}

/// Marks a list page (see the module's header).
pub const FREE_MAGIC: u32 = 0x4652_4545;
/// Offset of a list page's magic.
const FREE_LIST_MAGIC: usize = FIL_PAGE_DATA;
/// Offset of the count of numbers a list page holds.
const FREE_LIST_N: usize = FREE_LIST_MAGIC + 4;
/// Offset of the first number.
const FREE_LIST_ENTRIES: usize = FREE_LIST_N + 4;

/// How many numbers a list page of a space with pages of `zip_size`
/// bytes (`None`: 16 KiB) holds: its physical page, less a trailer's room.
pub fn free_list_capacity(zip_size: Option<usize>) -> u32 {
    let physical = zip_size.unwrap_or(page::PAGE_SIZE);
    ((physical - FREE_LIST_ENTRIES - page::FIL_TRAILER_SIZE) / 4) as u32
}

/// The count a list page holds, or `None` for a free page of the old
/// format (no magic).
fn list_count(page: &[u8]) -> Option<u32> {
    (page::get_u32(page, FREE_LIST_MAGIC) == FREE_MAGIC).then(|| page::get_u32(page, FREE_LIST_N))
}

/// Returns a page to its space's free list inside `mtr`, without touching
/// the page unless it becomes the list's new head page.
pub fn free(mtr: &mut Mtr, pager: &mut Pager, id: PageId) -> Result<()> {
    if id.page_no == 0 {
        // Only a corrupt link names it (an undo chain, a B-tree's page).
        return Err(Error::Corrupt {
            file: pager.fil.name(id.space).unwrap_or("?").to_string(),
            reason: "a page to free is the space's header page".into(),
        });
    }
    let h = mtr.fix(pager, PageId::new(id.space, 0))?;
    let hdr = SpaceHeader::read(pager.page(h));
    let corrupt = |pager: &Pager, why: String| Error::Corrupt {
        file: pager.fil.name(id.space).unwrap_or("?").to_string(),
        reason: format!("page {} to free {why}", id.page_no),
    };
    if id.page_no >= hdr.free_limit {
        return Err(corrupt(
            pager,
            format!("was never used (pages from {} on)", hdr.free_limit),
        ));
    }
    if hdr.free_head != FIL_NULL {
        if id.page_no == hdr.free_head {
            return Err(corrupt(pager, "heads the free list".into()));
        }
        let l = mtr.fix(pager, PageId::new(id.space, hdr.free_head))?;
        let cap = free_list_capacity(pager.fil.zip_size(id.space));
        let listed = list_count(pager.page(l)).unwrap_or(0).min(cap) as usize;
        if (0..listed)
            .any(|i| page::get_u32(pager.page(l), FREE_LIST_ENTRIES + 4 * i) == id.page_no)
        {
            // A page freed twice would be allocated twice. Only the head
            // list page is searched (it is fixed anyway): the pages freed
            // lately, where a page freed again by a looping walk would be.
            return Err(corrupt(
                pager,
                format!("is free already (listed in page {})", hdr.free_head),
            ));
        }
        if let Some(n) = list_count(pager.page(l)).filter(|&n| n < cap) {
            let at = FREE_LIST_ENTRIES + 4 * n as usize;
            mtr.write_u32(pager, l, at, id.page_no)?;
            mtr.write_u32(pager, l, FREE_LIST_N, n + 1)?;
            mtr.write_u32(pager, h, FSP_FREE_LEN, hdr.free_len + 1)?;
            return Ok(());
        }
    }
    // The page becomes the head list page, formatted afresh (it is not
    // read: its old contents do not matter).
    let f = mtr.create(pager, id, PageType::Allocated)?;
    mtr.set_next(pager, f, hdr.free_head)?;
    mtr.write_u32(pager, f, FREE_LIST_MAGIC, FREE_MAGIC)?;
    mtr.write_u32(pager, f, FREE_LIST_N, 0)?;
    mtr.write_u32(pager, h, FSP_FREE_HEAD, id.page_no)?;
    mtr.write_u32(pager, h, FSP_FREE_LEN, hdr.free_len + 1)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fil::{Fil, SYSTEM_SPACE};
    use crate::io::MemStorage;
    use crate::redo::{Log, LogConfig};

    /// A pager over a system space and space `SPACE`, formatted with 4
    /// pages.
    fn space_pager() -> Pager {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
        fil.extend(SYSTEM_SPACE, 200).unwrap();
        fil.create_sized(SPACE, "t.ibd", None).unwrap();
        let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
        let clock = Box::new(crate::io::ManualClock::new());
        let mut pager = Pager::new(fil, log, 16, true, clock);
        create_space(&mut pager, SPACE, 4, 1, flags_for(None)).unwrap();
        pager
    }

    const SPACE: u32 = 3;

    /// A page freed twice would be allocated twice, to two owners; a page
    /// never used was never anyone's. Each free is refused as corruption
    /// and leaves the list as it was.
    #[test]
    fn freeing_a_free_or_never_used_page_is_corruption() {
        let mut pager = space_pager();
        reserve(&mut pager, SPACE, 3).unwrap();
        let pages: Vec<u32> = (0..3)
            .map(|_| {
                let mut mtr = Mtr::new();
                let p = alloc(&mut mtr, &mut pager, SPACE, PageType::Index).unwrap();
                mtr.commit(&mut pager).unwrap();
                p
            })
            .collect();
        let free_one = |pager: &mut Pager, p: u32| {
            let mut mtr = Mtr::new();
            let r = free(&mut mtr, pager, PageId::new(SPACE, p));
            match r {
                Ok(()) => mtr.commit(pager).map(|_| ()),
                Err(e) => {
                    mtr.release(pager);
                    Err(e)
                }
            }
        };
        // The first page freed heads the list; the second is listed in it.
        free_one(&mut pager, pages[0]).unwrap();
        free_one(&mut pager, pages[1]).unwrap();
        let before = header(&mut pager, SPACE).unwrap();
        assert_eq!((before.free_head, before.free_len), (pages[0], 2));
        let never_used = before.free_limit;
        for (p, says) in [
            (pages[0], "heads the free list"),
            (pages[1], "is free already"),
            (never_used, "was never used"),
        ] {
            let e = free_one(&mut pager, p).unwrap_err();
            assert!(e.is_corruption() && e.to_string().contains(says), "{e}");
            let after = header(&mut pager, SPACE).unwrap();
            assert_eq!((after.free_head, after.free_len), (before.free_head, 2));
        }
        // The page still in use is freed as ever.
        free_one(&mut pager, pages[2]).unwrap();
        assert_eq!(header(&mut pager, SPACE).unwrap().free_len, 3);
    }

    /// Frees more pages than a list page holds, then allocates them back:
    /// freeing reads none of them (only list pages are written), and each
    /// comes back once, before the space's unused pages.
    #[test]
    fn freed_pages_are_listed_untouched_and_allocated_back_once() {
        let mut pager = space_pager();
        let n = free_list_capacity(None) + 900;
        reserve(&mut pager, SPACE, n).unwrap();
        let mut pages = Vec::new();
        for _ in 0..n {
            let mut mtr = Mtr::new();
            pages.push(alloc(&mut mtr, &mut pager, SPACE, PageType::Index).unwrap());
            mtr.commit(&mut pager).unwrap();
        }
        pager.flush_all().unwrap();
        let misses = pager.pool.stats.misses;
        for &p in &pages {
            let mut mtr = Mtr::new();
            free(&mut mtr, &mut pager, PageId::new(SPACE, p)).unwrap();
            mtr.commit(&mut pager).unwrap();
        }
        // The header and the head list page, fetched again after the pool
        // evicted them, at most a few times; never the freed pages.
        assert!(
            pager.pool.stats.misses - misses < 8,
            "{}",
            pager.pool.stats.misses - misses
        );
        let hdr = header(&mut pager, SPACE).unwrap();
        assert_eq!(hdr.free_len, n);
        let mut back = Vec::new();
        for _ in 0..n {
            let mut mtr = Mtr::new();
            back.push(alloc(&mut mtr, &mut pager, SPACE, PageType::Index).unwrap());
            mtr.commit(&mut pager).unwrap();
        }
        back.sort_unstable();
        pages.sort_unstable();
        assert_eq!(back, pages);
        let hdr = header(&mut pager, SPACE).unwrap();
        assert_eq!((hdr.free_len, hdr.free_head), (0, FIL_NULL));
        reserve(&mut pager, SPACE, 1).unwrap();
        let hdr = header(&mut pager, SPACE).unwrap();
        let mut mtr = Mtr::new();
        let next = alloc(&mut mtr, &mut pager, SPACE, PageType::Index).unwrap();
        mtr.commit(&mut pager).unwrap();
        assert_eq!(
            next, hdr.free_limit,
            "an unused page once the list is empty"
        );
    }

    fn hdr(size: u32, free_limit: u32, free_len: u32) -> SpaceHeader {
        SpaceHeader {
            space: 1,
            size,
            free_limit,
            free_head: 0,
            free_len,
            flags: 0,
        }
    }

    #[test]
    fn data_free_counts_free_extents_less_innodbs_reserve() {
        // Under an extent, or all of it in use or reserved: nothing.
        assert_eq!(hdr(63, 10, 40).free_extents_bytes(None), 0);
        assert_eq!(hdr(640, 640, 64).free_extents_bytes(None), 0);
        // 100 extents, one used: 99 above the limit, one less for safety,
        // less 98 / 256 descriptor extents (none), less a reserve of 3.
        assert_eq!(hdr(6400, 64, 0).free_extents_bytes(None), 95 * 64 * 16384);
        // Compressed 8 KiB pages: a descriptor page every 8192 pages, so
        // one extent in 128 holds one; extents are 64 of those pages.
        assert_eq!(
            hdr(6400, 64, 0).free_extents_bytes(Some(8192)),
            95 * 64 * 8192
        );
        // Free pages in the list count by whole extents.
        assert_eq!(
            hdr(6400, 6400, 64 * 5 + 3).free_extents_bytes(None),
            2 * 64 * 16384
        );
    }
}
