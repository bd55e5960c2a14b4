//! Off-page storage of long columns: chains of BLOB pages, and in a
//! compressed space chains of ZBLOB pages that hold one zlib stream of the
//! column. Mirrors the externally-stored-field half of InnoDB's
//! `btr0cur.cc` (`btr_store_big_rec_extern_fields`, `btr_copy_blob_prefix`,
//! `btr_copy_zblob_prefix`).
//!
//! ```text
//! BLOB or ZBLOB page, after the FIL header:
//! BLOB_PART_LEN   4  bytes of the column (of its stream) on this page
//! BLOB_NEXT       4  next page of the chain, or FIL_NULL
//! BLOB_DATA          the bytes
//! ```
//!
//! In a compressed space the column is deflated as one stream at
//! `innodb_compression_level` and the stream is cut over pages of the
//! physical size, every page full but the last; the first page is a ZBLOB
//! page, the others ZBLOB2, as in InnoDB. (InnoDB links them through
//! FIL_PAGE_NEXT and stores no part length, the stream ending itself; ours
//! keep the BLOB page's header, so that both chains are checked alike.)
//! The reference's length is the column's, uncompressed, as InnoDB's
//! BTR_EXTERN_LEN is.
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

/// Bytes per page in `space`: a compressed space's pages keep only their
/// physical size (and have no trailer).
pub fn part_max(pager: &Pager, space: u32) -> usize {
    match pager.fil.zip_size(space) {
        Some(size) => size - BLOB_DATA,
        None => BLOB_PART_MAX,
    }
}

/// The type of the `n`th page of a chain in a space compressed or not.
fn page_type(compressed: bool, n: usize) -> PageType {
    match (compressed, n) {
        (false, _) => PageType::Blob,
        (true, 0) => PageType::ZBlob,
        (true, _) => PageType::ZBlob2,
    }
}

/// At most the bytes of a zlib stream of `len` bytes (zlib's
/// `compressBound`, with its header and trailer).
fn stream_bound(len: u64) -> u64 {
    len.saturating_add((len >> 12) + (len >> 14) + (len >> 25) + 13 + 6)
}

/// Writes `data` (non-empty) as a new chain in `space`.
pub fn write(pager: &mut Pager, space: u32, data: &[u8]) -> Result<ExternalRef> {
    assert!(!data.is_empty(), "empty external column");
    let part_max = part_max(pager, space);
    let compressed = pager.fil.zip_size(space).is_some();
    let stream;
    let stored = if compressed {
        stream = page::zip::deflate_column(data, pager.compression.level);
        &stream[..]
    } else {
        data
    };
    fsp::reserve(pager, space, stored.len().div_ceil(part_max) as u32)?;
    let mut first = FIL_NULL;
    let mut prev = FIL_NULL;
    for (n, part) in stored.chunks(part_max).enumerate() {
        // Each page is a mini-transaction of a page's worth of redo, and a
        // column may take many: make room in the log before each, as
        // InnoDB's btr_blob_log_check_t does between the pages of a big
        // record (with no mini-transaction open, every page is consistent).
        pager.free_check()?;
        let mut mtr = Mtr::new();
        let page_no = fsp::alloc(&mut mtr, pager, space, page_type(compressed, n))?;
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

/// The page numbers of a chain and the bytes each holds, checked against
/// the reference's length (in a compressed space, against what a stream
/// of the column can take, every page full but the last).
fn chain(pager: &mut Pager, r: &ExternalRef) -> Result<Vec<(u32, usize)>> {
    let mut out = Vec::new();
    let part_max = part_max(pager, r.space);
    let compressed = pager.fil.zip_size(r.space).is_some();
    let stored_max = if compressed {
        stream_bound(r.len)
    } else {
        r.len
    };
    let mut page_no = r.page_no;
    let mut remaining = stored_max;
    // A chain that comes back to one of its pages would run as long as a
    // corrupt length lets it.
    let mut seen = rustc_hash::FxHashSet::default();
    loop {
        let end = if compressed {
            !out.is_empty() && page_no == FIL_NULL
        } else {
            remaining == 0
        };
        if end {
            return Ok(out);
        }
        if !seen.insert(page_no) {
            return Err(corrupt(pager, r, page_no, "chain comes back to a page"));
        }
        if page_no == FIL_NULL || out.len() as u64 > stored_max / part_max as u64 + 1 {
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
        let want = page_type(compressed, out.len());
        if ty != want as u16 {
            let name = match want {
                PageType::ZBlob => "a first ZBLOB page",
                PageType::ZBlob2 => "a ZBLOB2 page",
                _ => "a BLOB page",
            };
            return Err(corrupt(
                pager,
                r,
                page_no,
                &format!("chain reaches a page that is not {name}"),
            ));
        }
        let short = compressed && next != FIL_NULL && part != part_max;
        if part == 0 || part > part_max || part as u64 > remaining || short {
            return Err(corrupt(pager, r, page_no, "bad part length"));
        }
        out.push((page_no, part));
        remaining -= part as u64;
        page_no = next;
    }
}

/// Reads a whole chain: the column (inflated, in a compressed space).
pub fn read(pager: &mut Pager, r: &ExternalRef) -> Result<Vec<u8>> {
    let compressed = pager.fil.zip_size(r.space).is_some();
    let parts = chain(pager, r)?;
    let stored_len: usize = parts.iter().map(|p| p.1).sum();
    let mut out = Vec::with_capacity(stored_len);
    for (page_no, part) in parts {
        let f = pager.fix(PageId::new(r.space, page_no))?;
        out.extend_from_slice(&pager.page(f)[BLOB_DATA..BLOB_DATA + part]);
        pager.unfix(f);
    }
    if !compressed {
        return Ok(out);
    }
    page::zip::inflate_column(&out, r.len).map_err(|c| {
        corrupt(
            pager,
            r,
            r.page_no,
            &format!("the column's zlib stream: {}", c.0),
        )
    })
}

/// Frees a chain inside the caller's mini-transaction.
pub fn free_in(mtr: &mut Mtr, pager: &mut Pager, r: &ExternalRef) -> Result<()> {
    for (page_no, _) in chain(pager, r)? {
        fsp::free(mtr, pager, PageId::new(r.space, page_no))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fil::{Fil, SYSTEM_SPACE};
    use crate::io::MemStorage;
    use crate::redo::{Log, LogConfig};

    const SPACE: u32 = 3;

    fn pager_with(zip_size: Option<usize>) -> Pager {
        let mut fil = Fil::new(Box::new(MemStorage::new()));
        fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
        fil.extend(SYSTEM_SPACE, 200).unwrap();
        fil.create_sized(SPACE, "c.ibd", zip_size).unwrap();
        let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
        let clock = Box::new(crate::io::ManualClock::new());
        let mut pager = Pager::new(fil, log, 16, true, clock);
        fsp::create_space(&mut pager, SPACE, 4, 1, fsp::flags_for(zip_size)).unwrap();
        pager
    }

    /// A column of text, compressible as prose is.
    fn column(len: usize) -> Vec<u8> {
        let words = ["innodb ", "page ", "zlib ", "buddy ", "redo ", "undo "];
        let mut out = Vec::with_capacity(len);
        let mut x = 7u64;
        while out.len() < len {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.extend_from_slice(words[(x >> 33) as usize % words.len()].as_bytes());
        }
        out.truncate(len);
        out
    }

    fn types(pager: &mut Pager, r: &ExternalRef) -> Vec<u16> {
        chain(pager, r)
            .unwrap()
            .iter()
            .map(|&(page_no, _)| {
                let f = pager.fix(PageId::new(r.space, page_no)).unwrap();
                let ty = page::page_type_raw(pager.page(f));
                pager.unfix(f);
                ty
            })
            .collect()
    }

    /// In a compressed space a column is one zlib stream over ZBLOB pages
    /// (the first ZBLOB, the rest ZBLOB2), far fewer than the pages of its
    /// bytes as they are; it reads back whole, and the chain frees.
    #[test]
    fn a_compressed_spaces_column_is_one_stream_over_zblob_pages() {
        let data = column(60_000);
        let mut plain = pager_with(None);
        let r0 = write(&mut plain, SPACE, &data).unwrap();
        assert_eq!(read(&mut plain, &r0).unwrap(), data);
        assert!(types(&mut plain, &r0)
            .iter()
            .all(|&t| t == PageType::Blob as u16));

        let mut zipped = pager_with(Some(1024));
        let r = write(&mut zipped, SPACE, &data).unwrap();
        assert_eq!(
            r.len,
            data.len() as u64,
            "the reference has the column's length"
        );
        assert_eq!(read(&mut zipped, &r).unwrap(), data);
        let t = types(&mut zipped, &r);
        assert!(t.len() > 1, "{t:?}");
        assert_eq!(t[0], PageType::ZBlob as u16);
        assert!(
            t[1..].iter().all(|&x| x == PageType::ZBlob2 as u16),
            "{t:?}"
        );
        // Uncompressed, 1 KiB pages would take 60000 / 1012 = 60 pages.
        let uncompressed = data.len().div_ceil(part_max(&zipped, SPACE));
        assert!(
            t.len() * 3 < uncompressed,
            "{} pages, {uncompressed} uncompressed",
            t.len()
        );

        let mut mtr = Mtr::new();
        free_in(&mut mtr, &mut zipped, &r).unwrap();
        mtr.commit(&mut zipped).unwrap();
        let f = zipped.fix(PageId::new(SPACE, r.page_no)).unwrap();
        assert_eq!(
            page::page_type_raw(zipped.page(f)),
            PageType::Allocated as u16
        );
        zipped.unfix(f);
    }

    /// A damaged stream, a chain cut short or a reference whose length is
    /// not the stream's are corruption errors naming the file and page.
    #[test]
    fn a_damaged_zblob_chain_is_a_typed_corruption() {
        let data = column(20_000);
        let mut pager = pager_with(Some(2048));
        let r = write(&mut pager, SPACE, &data).unwrap();
        let is_corrupt =
            |e: Error| matches!(e, Error::CorruptPage { ref file, .. } if file == "c.ibd");
        // The reference claims another length.
        let longer = ExternalRef {
            len: r.len + 1,
            ..r
        };
        assert!(is_corrupt(read(&mut pager, &longer).unwrap_err()));
        let shorter = ExternalRef {
            len: r.len - 1,
            ..r
        };
        assert!(is_corrupt(read(&mut pager, &shorter).unwrap_err()));
        // A byte of the stream flipped in the first page.
        let f = pager.fix(PageId::new(SPACE, r.page_no)).unwrap();
        let at = BLOB_DATA + 100;
        let mut mtr = Mtr::new();
        let byte = [pager.page(f)[at] ^ 0x5a];
        pager.unfix(f);
        let f = mtr.fix(&mut pager, PageId::new(SPACE, r.page_no)).unwrap();
        mtr.write(&mut pager, f, at, &byte).unwrap();
        mtr.commit(&mut pager).unwrap();
        assert!(is_corrupt(read(&mut pager, &r).unwrap_err()));
        // A reference whose length no column has.
        let absurd = ExternalRef { len: u64::MAX, ..r };
        assert!(is_corrupt(read(&mut pager, &absurd).unwrap_err()));
        // The first page linked back to itself, under a length that would
        // let the loop run for a billion pages.
        let mut mtr = Mtr::new();
        let f = mtr.fix(&mut pager, PageId::new(SPACE, r.page_no)).unwrap();
        mtr.write_u32(&mut pager, f, BLOB_NEXT, r.page_no).unwrap();
        mtr.commit(&mut pager).unwrap();
        let huge = ExternalRef { len: 1 << 40, ..r };
        assert!(is_corrupt(read(&mut pager, &huge).unwrap_err()));
        // The chain cut after its first page.
        let mut mtr = Mtr::new();
        let f = mtr.fix(&mut pager, PageId::new(SPACE, r.page_no)).unwrap();
        mtr.write_u32(&mut pager, f, BLOB_NEXT, FIL_NULL).unwrap();
        mtr.commit(&mut pager).unwrap();
        assert!(is_corrupt(read(&mut pager, &r).unwrap_err()));
    }
}
