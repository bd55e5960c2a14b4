//! Pages: 16 KiB frames, their common header and trailer, checksums and
//! validation. Mirrors InnoDB's `fil0fil.h` page layout and `buf0buf.cc`'s
//! corruption checks.
//!
//! Every page of every file starts with the FIL header and ends with the FIL
//! trailer. All integers are little-endian.
//!
//! ```text
//! offset  size  field
//! ------  ----  -----------------------------------------------------------
//!      0     4  checksum: crc32 of bytes [4, PAGE_SIZE - 8)
//!      4     4  page number (catches a page written at the wrong offset)
//!      8     4  previous page at the same B-tree level, or FIL_NULL
//!     12     4  next page at the same level / in the same list, or FIL_NULL
//!     16     8  LSN of the newest change written to this page
//!     24     2  page type (PageType)
//!     26     8  flush LSN (page 0 of the system tablespace only; else 0)
//!     34     4  space id (catches a page written to the wrong file)
//!     38        FIL_PAGE_DATA: the type-specific body starts here
//!   ...
//!  16376     4  copy of the checksum
//!  16380     4  low 32 bits of the LSN at offset 16 (a torn write that
//!               reaches the trailer but not the header, or the reverse,
//!               shows as a mismatch)
//! ```
//!
//! A page that is all zeros has never been written; it reads as
//! [`PageState::Zero`] and is not corruption. Anything else that fails a
//! check is [`crate::Error::CorruptPage`] and must never
//! be returned as data.

pub mod index;
pub mod zip;

use crate::error::{Error, Result};

/// Size of every uncompressed page.
pub const PAGE_SIZE: usize = 16 * 1024;
/// "No page": the null value of page links.
pub const FIL_NULL: u32 = u32::MAX;

/// Offset of the checksum.
pub const FIL_PAGE_CHECKSUM: usize = 0;
/// Offset of the page number.
pub const FIL_PAGE_OFFSET: usize = FIL_PAGE_CHECKSUM + 4;
/// Offset of the previous-page link.
pub const FIL_PAGE_PREV: usize = FIL_PAGE_OFFSET + 4;
/// Offset of the next-page link.
pub const FIL_PAGE_NEXT: usize = FIL_PAGE_PREV + 4;
/// Offset of the page LSN.
pub const FIL_PAGE_LSN: usize = FIL_PAGE_NEXT + 4;
/// Offset of the page type.
pub const FIL_PAGE_TYPE: usize = FIL_PAGE_LSN + 8;
/// Offset of the flush LSN.
pub const FIL_PAGE_FLUSH_LSN: usize = FIL_PAGE_TYPE + 2;
/// Offset of the space id.
pub const FIL_PAGE_SPACE_ID: usize = FIL_PAGE_FLUSH_LSN + 8;
/// Where the type-specific body starts.
pub const FIL_PAGE_DATA: usize = FIL_PAGE_SPACE_ID + 4;
/// Size of the trailer.
pub const FIL_TRAILER_SIZE: usize = 8;
/// Offset of the trailer's checksum copy.
pub const FIL_TRAILER_CHECKSUM: usize = PAGE_SIZE - FIL_TRAILER_SIZE;
/// Offset of the trailer's LSN low word.
pub const FIL_TRAILER_LSN: usize = FIL_TRAILER_CHECKSUM + 4;
/// Where the type-specific body must end.
pub const FIL_PAGE_DATA_END: usize = PAGE_SIZE - FIL_TRAILER_SIZE;

const _: () = assert!(FIL_PAGE_DATA == 38);
const _: () = assert!(FIL_TRAILER_LSN + 4 == PAGE_SIZE);

/// Identifies a page: the tablespace and the page number in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageId {
    /// Tablespace id (0 is the system tablespace).
    pub space: u32,
    /// Page number within the tablespace.
    pub page_no: u32,
}

impl PageId {
    /// A page id.
    pub const fn new(space: u32, page_no: u32) -> Self {
        PageId { space, page_no }
    }
}

impl std::fmt::Display for PageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.space, self.page_no)
    }
}

/// What a page holds, stored at [`FIL_PAGE_TYPE`]. Numbers follow InnoDB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum PageType {
    /// Allocated but unused, or on the free list.
    Allocated = 0,
    /// An undo log page.
    UndoLog = 2,
    /// System page (rollback segment header, dictionary header).
    Sys = 6,
    /// The transaction system header.
    TrxSys = 7,
    /// The file space header (page 0 of every tablespace).
    FspHdr = 8,
    /// An overflow page of a long column.
    Blob = 10,
    /// The first overflow page of a compressed space's long column: the
    /// start of its zlib stream (FIL_PAGE_TYPE_ZBLOB).
    ZBlob = 11,
    /// A later overflow page of a compressed space's long column
    /// (FIL_PAGE_TYPE_ZBLOB2).
    ZBlob2 = 12,
    /// A B-tree node.
    Index = 17855,
}

impl PageType {
    /// Decodes a stored page type.
    pub fn from_u16(v: u16) -> Option<PageType> {
        Some(match v {
            0 => PageType::Allocated,
            2 => PageType::UndoLog,
            6 => PageType::Sys,
            7 => PageType::TrxSys,
            8 => PageType::FspHdr,
            10 => PageType::Blob,
            11 => PageType::ZBlob,
            12 => PageType::ZBlob2,
            17855 => PageType::Index,
            _ => return None,
        })
    }
}

/// Reads a little-endian u16.
#[inline]
pub fn get_u16(page: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([page[off], page[off + 1]])
}
/// Reads a little-endian u32.
#[inline]
pub fn get_u32(page: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(page[off..off + 4].try_into().expect("4 bytes"))
}
/// Reads a little-endian u64.
#[inline]
pub fn get_u64(page: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(page[off..off + 8].try_into().expect("8 bytes"))
}
/// Writes a little-endian u16.
#[inline]
pub fn put_u16(page: &mut [u8], off: usize, v: u16) {
    page[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
/// Writes a little-endian u32.
#[inline]
pub fn put_u32(page: &mut [u8], off: usize, v: u32) {
    page[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
/// Writes a little-endian u64.
#[inline]
pub fn put_u64(page: &mut [u8], off: usize, v: u64) {
    page[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// The page LSN.
pub fn page_lsn(page: &[u8]) -> u64 {
    get_u64(page, FIL_PAGE_LSN)
}
/// Sets the page LSN in the header (the trailer is set by [`seal`]).
pub fn set_page_lsn(page: &mut [u8], lsn: u64) {
    put_u64(page, FIL_PAGE_LSN, lsn)
}
/// The stored page type, raw.
pub fn page_type_raw(page: &[u8]) -> u16 {
    get_u16(page, FIL_PAGE_TYPE)
}
/// The previous-page link.
pub fn prev(page: &[u8]) -> u32 {
    get_u32(page, FIL_PAGE_PREV)
}
/// The next-page link.
pub fn next(page: &[u8]) -> u32 {
    get_u32(page, FIL_PAGE_NEXT)
}

/// Formats a fresh page: zero body, the given identity and type, null links
/// and LSN 0. The caller's mini-transaction sets the LSN at commit.
pub fn init(page: &mut [u8], id: PageId, ty: PageType) {
    debug_assert_eq!(page.len(), PAGE_SIZE);
    page.fill(0);
    put_u32(page, FIL_PAGE_OFFSET, id.page_no);
    put_u32(page, FIL_PAGE_PREV, FIL_NULL);
    put_u32(page, FIL_PAGE_NEXT, FIL_NULL);
    put_u16(page, FIL_PAGE_TYPE, ty as u16);
    put_u32(page, FIL_PAGE_SPACE_ID, id.space);
}

/// The checksum of a page image: crc32 of everything between the checksum
/// field and the trailer.
pub fn checksum(page: &[u8]) -> u32 {
    crc32fast::hash(&page[FIL_PAGE_OFFSET..FIL_TRAILER_CHECKSUM])
}

/// Completes a page image for writing: the trailer's LSN word, then the
/// checksum in the header and the trailer. Called right before every write.
pub fn seal(page: &mut [u8]) {
    debug_assert_eq!(page.len(), PAGE_SIZE);
    let lsn = page_lsn(page);
    put_u32(page, FIL_TRAILER_LSN, lsn as u32);
    let sum = checksum(page);
    put_u32(page, FIL_PAGE_CHECKSUM, sum);
    put_u32(page, FIL_TRAILER_CHECKSUM, sum);
}

/// Completes a physical page image for writing: a 16 KiB page's trailer
/// and checksums, or, in a compressed space, the image's checksum
/// ([`zip::seal`]).
pub fn seal_image(image: &mut [u8], compressed: bool) {
    if compressed {
        zip::seal(image)
    } else {
        seal(image)
    }
}

/// [`validate`] for a physical page image: a compressed space's pages (of
/// any size, 16 KiB included) are checked by [`zip::validate`].
pub fn validate_image(image: &[u8], compressed: bool, id: PageId, file: &str) -> Result<PageState> {
    if compressed {
        zip::validate(image, id, file)
    } else {
        validate(image, id, file)
    }
}

/// The outcome of validating a page image read from disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// All zeros: never written.
    Zero,
    /// A complete, self-consistent page.
    Valid,
}

/// Whether a page image is all zeros, eight bytes at a time (recovery asks
/// this of every doublewrite slot).
pub fn is_all_zero(page: &[u8]) -> bool {
    let (chunks, rest) = page.split_at(page.len() / 8 * 8);
    chunks
        .chunks_exact(8)
        .all(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")) == 0)
        && rest.iter().all(|&b| b == 0)
}

/// Checks a page image read from `file` at the position of `id`: checksum,
/// header/trailer LSN agreement, page number and space id.
pub fn validate(page: &[u8], id: PageId, file: &str) -> Result<PageState> {
    debug_assert_eq!(page.len(), PAGE_SIZE);
    let corrupt = |reason: String| Error::CorruptPage {
        file: file.to_string(),
        page_no: id.page_no,
        reason,
    };
    if is_all_zero(page) {
        return Ok(PageState::Zero);
    }
    let stored = get_u32(page, FIL_PAGE_CHECKSUM);
    let computed = checksum(page);
    if stored != computed {
        return Err(corrupt(format!(
            "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
        )));
    }
    let trailer = get_u32(page, FIL_TRAILER_CHECKSUM);
    if trailer != computed {
        return Err(corrupt(format!(
            "trailer checksum {trailer:#010x} does not match header {computed:#010x}"
        )));
    }
    let lsn = page_lsn(page);
    let lsn_low = get_u32(page, FIL_TRAILER_LSN);
    if lsn as u32 != lsn_low {
        return Err(corrupt(format!(
            "header LSN {lsn} does not match trailer LSN low word {lsn_low}"
        )));
    }
    let page_no = get_u32(page, FIL_PAGE_OFFSET);
    if page_no != id.page_no {
        return Err(corrupt(format!(
            "page holds page number {page_no}: a misdirected write"
        )));
    }
    let space = get_u32(page, FIL_PAGE_SPACE_ID);
    if space != id.space {
        return Err(corrupt(format!(
            "page belongs to space {space}, not {}: a misdirected write",
            id.space
        )));
    }
    if PageType::from_u16(page_type_raw(page)).is_none() {
        return Err(corrupt(format!(
            "unknown page type {}",
            page_type_raw(page)
        )));
    }
    Ok(PageState::Valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(id: PageId) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        init(&mut p, id, PageType::Index);
        set_page_lsn(&mut p, 0x1_0000_1234);
        p[100] = 7;
        seal(&mut p);
        p
    }

    #[test]
    fn sealed_page_validates() {
        let id = PageId::new(3, 9);
        assert_eq!(
            validate(&sealed(id), id, "t.ibd").unwrap(),
            PageState::Valid
        );
        assert_eq!(
            validate(&vec![0u8; PAGE_SIZE], id, "t.ibd").unwrap(),
            PageState::Zero
        );
    }

    #[test]
    fn every_single_bit_flip_is_caught() {
        let id = PageId::new(3, 9);
        let page = sealed(id);
        for byte in (0..PAGE_SIZE).step_by(97) {
            for bit in 0..8 {
                let mut p = page.clone();
                p[byte] ^= 1 << bit;
                let err = validate(&p, id, "t.ibd").unwrap_err();
                assert!(err.is_corruption(), "byte {byte} bit {bit}");
            }
        }
    }

    #[test]
    fn misdirected_and_torn_pages_are_caught() {
        let id = PageId::new(3, 9);
        let page = sealed(id);
        assert!(validate(&page, PageId::new(3, 10), "t.ibd").is_err());
        assert!(validate(&page, PageId::new(4, 9), "t.ibd").is_err());
        // A torn write: the first 512-byte sector is new, the rest old (zero).
        let mut torn = vec![0u8; PAGE_SIZE];
        torn[..512].copy_from_slice(&page[..512]);
        assert!(validate(&torn, id, "t.ibd").is_err());
        let mut torn = page.clone();
        torn[PAGE_SIZE - 512..].fill(0);
        assert!(validate(&torn, id, "t.ibd").is_err());
    }
}
