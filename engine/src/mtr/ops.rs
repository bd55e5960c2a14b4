//! Redo log records: what a mini-transaction says it did to a page or a
//! file, encoded into the redo payload, and applied again by recovery.
//! Mirrors InnoDB's `mtr0log.cc` record types (MLOG_WRITE_STRING,
//! MLOG_INIT_FILE_PAGE, MLOG_COMP_REC_INSERT, MLOG_FILE_CREATE, ...).
//!
//! Records are physiological: they name a page physically and describe the
//! change logically within it (insert this record at slot 5). Forward
//! execution and recovery call the same [`PageOp::apply`], so a page that
//! recovery rebuilds from an older image is byte-for-byte the page the
//! original execution produced.
//!
//! ```text
//! record   := type u8, space varint, page_no varint, body
//! body     := (by type)
//!   PAGE_INIT       page_type u16
//!   WRITE           offset u16, len varint, bytes
//!   INDEX_INIT      index_id u64, level u16
//!   INDEX_INSERT    slot u16, len varint, record
//!   INDEX_DELETE    slot u16
//!   INDEX_UPDATE    slot u16, len varint, record
//!   INDEX_TRUNCATE  from_slot u16
//!   INDEX_REMOVE_PREFIX to_slot u16
//!   INDEX_REORGANIZE (none)
//!   ZIP_IMAGE       len varint, image    (a compressed page, whole)
//!   FILE_CREATE     len varint, name, zip u8  (page_no is 0; zip: the
//!                   compressed page size as log2(size / 512), 0 for 16 KiB
//!                   pages, as InnoDB's MLOG_FILE_CREATE2 carries the flags)
//!   FILE_DELETE     len varint, name     (page_no is 0)
//! ```
//! Integers are little-endian; varints are LEB128.

use crate::error::{Error, Result};
use crate::page::{self, index, PageId, PageType};

const PAGE_INIT: u8 = 1;
const WRITE: u8 = 2;
const INDEX_INIT: u8 = 3;
const INDEX_INSERT: u8 = 4;
const INDEX_DELETE: u8 = 5;
const INDEX_UPDATE: u8 = 6;
const INDEX_TRUNCATE: u8 = 7;
const INDEX_REORGANIZE: u8 = 8;
const INDEX_REMOVE_PREFIX: u8 = 9;
const ZIP_IMAGE: u8 = 10;
const FILE_CREATE: u8 = 20;
const FILE_DELETE: u8 = 21;

/// A change to one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOp<'a> {
    /// Formats the page afresh (`page::init`).
    Init(PageType),
    /// Writes bytes at an offset.
    Write {
        /// Offset in the page.
        offset: u16,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// Formats the index part of a page (`index::init`).
    IndexInit {
        /// The index id.
        index_id: u64,
        /// The page's level.
        level: u16,
    },
    /// `index::insert`.
    IndexInsert {
        /// The slot the record takes.
        slot: u16,
        /// The record.
        rec: &'a [u8],
    },
    /// `index::delete`.
    IndexDelete {
        /// The slot removed.
        slot: u16,
    },
    /// `index::update`.
    IndexUpdate {
        /// The slot replaced.
        slot: u16,
        /// The new record.
        rec: &'a [u8],
    },
    /// `index::truncate`.
    IndexTruncate {
        /// First slot removed.
        from_slot: u16,
    },
    /// `index::remove_prefix`.
    IndexRemovePrefix {
        /// First slot kept.
        to_slot: u16,
    },
    /// `index::reorganize`.
    IndexReorganize,
    /// A compressed space's index page compressed afresh: its whole image
    /// (InnoDB's MLOG_ZIP_PAGE_COMPRESS). The frame becomes what the image
    /// decompresses to, and the image becomes the page's compressed page.
    ZipImage {
        /// The image, at the space's page size.
        image: &'a [u8],
    },
}

/// A change to the set of files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp<'a> {
    /// A tablespace file was created.
    Create {
        /// Its space id.
        space: u32,
        /// Its file name.
        name: &'a str,
        /// Its compressed page size, `None` for 16 KiB pages.
        zip_size: Option<usize>,
    },
    /// A tablespace file is being deleted.
    Delete {
        /// Its space id.
        space: u32,
        /// Its file name.
        name: &'a str,
    },
}

/// One decoded redo record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRecord<'a> {
    /// A page change.
    Page(PageId, PageOp<'a>),
    /// A file change.
    File(FileOp<'a>),
}

impl PageOp<'_> {
    /// Applies the change to a page image. Deterministic.
    ///
    /// Returns an error instead of panicking when the record does not fit
    /// the page (a page image and a log that disagree mean corruption).
    pub fn apply(&self, id: PageId, page: &mut [u8]) -> Result<()> {
        let bad = |what: &str| Error::Corrupt {
            file: "redo".into(),
            reason: format!("record for page {id} does not fit the page: {what}"),
        };
        match *self {
            PageOp::Init(ty) => page::init(page, id, ty),
            PageOp::Write { offset, bytes } => {
                let end = offset as usize + bytes.len();
                if end > page::PAGE_SIZE {
                    return Err(bad("write past the page end"));
                }
                page[offset as usize..end].copy_from_slice(bytes);
            }
            PageOp::IndexInit { index_id, level } => index::init(page, index_id, level),
            PageOp::IndexInsert { slot, rec } => {
                if slot as usize > index::n_recs(page) || !index::fits(page, rec.len()) {
                    return Err(bad("insert"));
                }
                index::insert(page, slot as usize, rec)
            }
            PageOp::IndexDelete { slot } => {
                if slot as usize >= index::n_recs(page) {
                    return Err(bad("delete"));
                }
                index::delete(page, slot as usize)
            }
            PageOp::IndexUpdate { slot, rec } => {
                let n = index::n_recs(page);
                if slot as usize >= n
                    || index::free_space(page) + index::rec(page, slot as usize).len() < rec.len()
                {
                    return Err(bad("update"));
                }
                index::update(page, slot as usize, rec)
            }
            PageOp::IndexTruncate { from_slot } => {
                if from_slot as usize > index::n_recs(page) {
                    return Err(bad("truncate"));
                }
                index::truncate(page, from_slot as usize)
            }
            PageOp::IndexRemovePrefix { to_slot } => {
                if to_slot as usize > index::n_recs(page) {
                    return Err(bad("remove prefix"));
                }
                index::remove_prefix(page, to_slot as usize)
            }
            PageOp::IndexReorganize => index::reorganize(page),
            PageOp::ZipImage { image } => {
                let zip = page::zip::ZipPage::from_image(image.to_vec())
                    .and_then(|zip| zip.decompress(page));
                if let Err(c) = zip {
                    return Err(bad(&format!("compressed image: {}", c.0)));
                }
            }
        }
        Ok(())
    }
}

pub use crate::mach::put_varint;

/// Encodes a page record.
pub fn encode_page(out: &mut Vec<u8>, id: PageId, op: &PageOp<'_>) {
    let (ty, body): (u8, &[u8]) = match op {
        PageOp::Init(_) => (PAGE_INIT, &[]),
        PageOp::Write { bytes, .. } => (WRITE, bytes),
        PageOp::IndexInit { .. } => (INDEX_INIT, &[]),
        PageOp::IndexInsert { rec, .. } => (INDEX_INSERT, rec),
        PageOp::IndexDelete { .. } => (INDEX_DELETE, &[]),
        PageOp::IndexUpdate { rec, .. } => (INDEX_UPDATE, rec),
        PageOp::IndexTruncate { .. } => (INDEX_TRUNCATE, &[]),
        PageOp::IndexRemovePrefix { .. } => (INDEX_REMOVE_PREFIX, &[]),
        PageOp::IndexReorganize => (INDEX_REORGANIZE, &[]),
        PageOp::ZipImage { image } => (ZIP_IMAGE, image),
    };
    out.push(ty);
    put_varint(out, id.space as u64);
    put_varint(out, id.page_no as u64);
    match *op {
        PageOp::Init(t) => out.extend_from_slice(&(t as u16).to_le_bytes()),
        PageOp::Write { offset, .. } => out.extend_from_slice(&offset.to_le_bytes()),
        PageOp::IndexInit { index_id, level } => {
            out.extend_from_slice(&index_id.to_le_bytes());
            out.extend_from_slice(&level.to_le_bytes());
        }
        PageOp::IndexInsert { slot, .. }
        | PageOp::IndexDelete { slot }
        | PageOp::IndexUpdate { slot, .. } => out.extend_from_slice(&slot.to_le_bytes()),
        PageOp::IndexTruncate { from_slot } => out.extend_from_slice(&from_slot.to_le_bytes()),
        PageOp::IndexRemovePrefix { to_slot } => out.extend_from_slice(&to_slot.to_le_bytes()),
        PageOp::IndexReorganize | PageOp::ZipImage { .. } => {}
    }
    if matches!(
        op,
        PageOp::Write { .. }
            | PageOp::IndexInsert { .. }
            | PageOp::IndexUpdate { .. }
            | PageOp::ZipImage { .. }
    ) {
        put_varint(out, body.len() as u64);
        out.extend_from_slice(body);
    }
}

/// Encodes a file record.
pub fn encode_file(out: &mut Vec<u8>, op: &FileOp<'_>) {
    let (ty, space, name) = match op {
        FileOp::Create { space, name, .. } => (FILE_CREATE, *space, *name),
        FileOp::Delete { space, name } => (FILE_DELETE, *space, *name),
    };
    out.push(ty);
    put_varint(out, space as u64);
    put_varint(out, 0);
    put_varint(out, name.len() as u64);
    out.extend_from_slice(name.as_bytes());
    if let FileOp::Create { zip_size, .. } = op {
        out.push(zip_size.map_or(0, |s| (s / 512).trailing_zeros() as u8));
    }
}

/// Decodes the records of one mini-transaction's payload.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads records from an mtr payload.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn corrupt(&self, what: &str) -> Error {
        Error::Corrupt {
            file: "redo".into(),
            reason: format!("malformed redo record at byte {}: {what}", self.pos),
        }
    }
    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| self.corrupt("truncated"))?;
        self.pos += 1;
        Ok(b)
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.corrupt("truncated"))?;
        let b = &self.buf[self.pos..end];
        self.pos = end;
        Ok(b)
    }
    fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u64(&mut self) -> Result<u64> {
        let b = self.bytes(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn varint(&mut self) -> Result<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt("varint too long"))
    }
    fn u32_varint(&mut self) -> Result<u32> {
        u32::try_from(self.varint()?).map_err(|_| self.corrupt("value exceeds 32 bits"))
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<LogRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        Some(self.read_one())
    }
}

impl<'a> Reader<'a> {
    fn read_one(&mut self) -> Result<LogRecord<'a>> {
        let ty = self.byte()?;
        let space = self.u32_varint()?;
        let page_no = self.u32_varint()?;
        let id = PageId::new(space, page_no);
        let op = match ty {
            PAGE_INIT => {
                let raw = self.u16()?;
                let t = PageType::from_u16(raw).ok_or_else(|| self.corrupt("bad page type"))?;
                PageOp::Init(t)
            }
            WRITE => {
                let offset = self.u16()?;
                let n = self.varint()? as usize;
                PageOp::Write {
                    offset,
                    bytes: self.bytes(n)?,
                }
            }
            INDEX_INIT => PageOp::IndexInit {
                index_id: self.u64()?,
                level: self.u16()?,
            },
            INDEX_INSERT | INDEX_UPDATE => {
                let slot = self.u16()?;
                let n = self.varint()? as usize;
                let rec = self.bytes(n)?;
                if ty == INDEX_INSERT {
                    PageOp::IndexInsert { slot, rec }
                } else {
                    PageOp::IndexUpdate { slot, rec }
                }
            }
            INDEX_DELETE => PageOp::IndexDelete { slot: self.u16()? },
            INDEX_TRUNCATE => PageOp::IndexTruncate {
                from_slot: self.u16()?,
            },
            INDEX_REMOVE_PREFIX => PageOp::IndexRemovePrefix {
                to_slot: self.u16()?,
            },
            INDEX_REORGANIZE => PageOp::IndexReorganize,
            ZIP_IMAGE => {
                let n = self.varint()? as usize;
                PageOp::ZipImage {
                    image: self.bytes(n)?,
                }
            }
            FILE_CREATE | FILE_DELETE => {
                let n = self.varint()? as usize;
                let raw = self.bytes(n)?;
                let name = std::str::from_utf8(raw).map_err(|_| self.corrupt("file name"))?;
                return Ok(LogRecord::File(if ty == FILE_CREATE {
                    let zip_size = match self.byte()? {
                        0 => None,
                        s @ 1..=5 => Some(512usize << s),
                        s => return Err(self.corrupt(&format!("compressed page size code {s}"))),
                    };
                    FileOp::Create {
                        space,
                        name,
                        zip_size,
                    }
                } else {
                    FileOp::Delete { space, name }
                }));
            }
            _ => return Err(self.corrupt(&format!("unknown record type {ty}"))),
        };
        Ok(LogRecord::Page(id, op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let id = PageId::new(5, 300);
        let ops = [
            PageOp::Init(PageType::Index),
            PageOp::IndexInit {
                index_id: 9,
                level: 2,
            },
            PageOp::Write {
                offset: 100,
                bytes: b"hello",
            },
            PageOp::IndexInsert {
                slot: 0,
                rec: b"abc",
            },
            PageOp::IndexUpdate {
                slot: 0,
                rec: b"abcd",
            },
            PageOp::IndexDelete { slot: 0 },
            PageOp::IndexTruncate { from_slot: 0 },
            PageOp::IndexRemovePrefix { to_slot: 0 },
            PageOp::IndexReorganize,
        ];
        let mut buf = Vec::new();
        for op in &ops {
            encode_page(&mut buf, id, op);
        }
        encode_file(
            &mut buf,
            &FileOp::Create {
                space: 5,
                name: "t.ibd",
                zip_size: Some(2048),
            },
        );
        let got: Vec<_> = Reader::new(&buf).collect::<Result<_>>().unwrap();
        assert_eq!(got.len(), ops.len() + 1);
        for (g, op) in got.iter().zip(ops.iter()) {
            assert_eq!(g, &LogRecord::Page(id, *op));
        }
        assert_eq!(
            got[ops.len()],
            LogRecord::File(FileOp::Create {
                space: 5,
                name: "t.ibd",
                zip_size: Some(2048),
            })
        );
        // Every truncation of the buffer is an error or a shorter list, never a panic.
        for cut in 0..buf.len() {
            let _ = Reader::new(&buf[..cut]).collect::<Result<Vec<_>>>();
        }
    }
}
