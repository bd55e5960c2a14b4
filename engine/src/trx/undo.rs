//! Undo logs: per-transaction chains of undo pages in the system
//! tablespace, themselves redo-logged, holding what is needed to roll a
//! change back and to rebuild older row versions for consistent reads.
//! Mirrors InnoDB's `trx0undo.cc`, `trx0rec.cc` and `trx0rseg.cc`.
//!
//! ```text
//! undo page (PageType::UndoLog):
//! offset            size  field
//! UNDO_PAGE_START      2  offset of the first record on this page
//! UNDO_PAGE_FREE       2  offset of the first free byte on this page
//! -- first page of a log only --
//! UNDO_STATE           2  ACTIVE or COMMITTED
//! UNDO_TRX_ID          8  the owning transaction
//! UNDO_TRX_NO          8  its commit number (history order), once committed
//! UNDO_LAST_PAGE       4  the log's last page
//! UNDO_NEXT_LOG        4  first page of the next log in the history list
//! UNDO_FLAGS           2  UNDO_FLAG_*
//! UNDO_LOG_END            records start here on the first page
//! records: [length u16][body], pages chained by the FIL prev/next links
//!
//! rollback segment header (system page RSEG_PAGE):
//! RSEG_HISTORY_LEN     4  committed logs waiting for purge
//! RSEG_HISTORY_FIRST   4  oldest of them (first page), or FIL_NULL
//! RSEG_HISTORY_LAST    4  newest of them
//! RSEG_SLOTS        4*N  first page of the log of each active transaction
//! ```
//!
//! A transaction's log is in a slot while it is active; the mini-
//! transaction that moves it from its slot to the end of the history list
//! is the transaction's commit. Recovery rolls back every log still in a
//! slot, and purge consumes the history list from the oldest end.
//!
//! An undo record keeps the whole previous record image rather than only the
//! changed columns (InnoDB keeps changed columns): it costs more undo bytes
//! per update but makes rebuilding a version a copy, not a merge. Long
//! columns stay off page in both versions, so an image is at most a page's
//! maximum record.

use crate::btree::Key;
use crate::error::{Error, Result};
use crate::fsp;
use crate::mach::put_varint;
use crate::mtr::Mtr;
use crate::page::{self, PageId, PageType, FIL_NULL, FIL_PAGE_DATA, FIL_PAGE_DATA_END};
use crate::pager::Pager;

/// Page number of the transaction system header in the system space.
pub const TRX_SYS_PAGE: u32 = 1;
/// Page number of the rollback segment header.
pub const RSEG_PAGE: u32 = 2;

/// Offset (in the TRX_SYS page) of the persisted transaction id bound.
pub const TRX_SYS_MAX_TRX_ID: usize = FIL_PAGE_DATA;
/// Offset of the next tablespace id.
pub const TRX_SYS_NEXT_SPACE: usize = TRX_SYS_MAX_TRX_ID + 8;
/// Offset of the next table id.
pub const TRX_SYS_NEXT_TABLE: usize = TRX_SYS_NEXT_SPACE + 4;
/// Offset of the next index id.
pub const TRX_SYS_NEXT_INDEX: usize = TRX_SYS_NEXT_TABLE + 8;
/// Offset of the dictionary tree's root page.
pub const TRX_SYS_DICT_ROOT: usize = TRX_SYS_NEXT_INDEX + 8;

/// Offset of the history length.
pub const RSEG_HISTORY_LEN: usize = FIL_PAGE_DATA;
/// Offset of the oldest history log.
pub const RSEG_HISTORY_FIRST: usize = RSEG_HISTORY_LEN + 4;
/// Offset of the newest history log.
pub const RSEG_HISTORY_LAST: usize = RSEG_HISTORY_FIRST + 4;
/// Offset of the slot array.
pub const RSEG_SLOTS: usize = RSEG_HISTORY_LAST + 4;
/// Number of slots: at most this many transactions with changes at once.
pub const RSEG_N_SLOTS: usize = 1024;
const _: () = assert!(RSEG_SLOTS + 4 * RSEG_N_SLOTS <= FIL_PAGE_DATA_END);

/// Offset of the first record's offset on this page.
pub const UNDO_PAGE_START: usize = FIL_PAGE_DATA;
/// Offset of the free offset on this page.
pub const UNDO_PAGE_FREE: usize = UNDO_PAGE_START + 2;
/// Where records start on pages other than the first.
pub const UNDO_PAGE_HDR_END: usize = UNDO_PAGE_FREE + 2;
/// Offset of the log state.
pub const UNDO_STATE: usize = UNDO_PAGE_HDR_END;
/// Offset of the owning transaction id.
pub const UNDO_TRX_ID: usize = UNDO_STATE + 2;
/// Offset of the commit number.
pub const UNDO_TRX_NO: usize = UNDO_TRX_ID + 8;
/// Offset of the last page.
pub const UNDO_LAST_PAGE: usize = UNDO_TRX_NO + 8;
/// Offset of the history link.
pub const UNDO_NEXT_LOG: usize = UNDO_LAST_PAGE + 4;
/// Offset of the flags.
pub const UNDO_FLAGS: usize = UNDO_NEXT_LOG + 4;
/// Where records start on the first page.
pub const UNDO_LOG_END: usize = UNDO_FLAGS + 2;

/// State of a log whose transaction is active (or was, at a crash).
pub const UNDO_ACTIVE: u16 = 1;
/// State of a committed log waiting for purge.
pub const UNDO_COMMITTED: u16 = 2;

/// The largest undo record body.
pub const MAX_UNDO_RECORD: usize = FIL_PAGE_DATA_END - UNDO_LOG_END - 2;

/// Where an undo record is: what a record's DB_ROLL_PTR holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollPtr {
    /// The record undoes an insert (there is no previous version).
    pub insert: bool,
    /// Undo page in the system tablespace.
    pub page_no: u32,
    /// Offset of the record's length field on that page.
    pub offset: u16,
}

/// Length of a stored roll pointer.
pub const ROLL_PTR_LEN: usize = 7;

impl RollPtr {
    /// The stored form: flag byte, page number and offset, big-endian (it
    /// is a record field).
    pub fn encode(&self) -> [u8; ROLL_PTR_LEN] {
        let mut b = [0u8; ROLL_PTR_LEN];
        b[0] = if self.insert { 0x80 } else { 0 };
        b[1..5].copy_from_slice(&self.page_no.to_be_bytes());
        b[5..7].copy_from_slice(&self.offset.to_be_bytes());
        b
    }
    /// Decodes a stored roll pointer.
    pub fn decode(b: &[u8]) -> Result<RollPtr> {
        if b.len() != ROLL_PTR_LEN {
            return Err(Error::Corrupt {
                file: "ibdata1".into(),
                reason: format!("roll pointer of {} bytes", b.len()),
            });
        }
        Ok(RollPtr {
            insert: b[0] & 0x80 != 0,
            page_no: u32::from_be_bytes([b[1], b[2], b[3], b[4]]),
            offset: u16::from_be_bytes([b[5], b[6]]),
        })
    }
}

/// Kinds of undo records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum UndoKind {
    /// A fresh insert: undo removes the row.
    Insert = 1,
    /// An update of a live row: undo restores the old image.
    UpdExist = 2,
    /// A delete mark: undo clears it; purge removes the row.
    DelMark = 3,
    /// An insert over a delete-marked row with the same key: undo restores
    /// the delete-marked image.
    UpdDel = 4,
}

/// A decoded undo record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoRecord {
    /// Kind.
    pub kind: UndoKind,
    /// Sequence number within the transaction.
    pub undo_no: u64,
    /// The table changed.
    pub table_id: u64,
    /// For inserts: the clustered key of the new row.
    pub key: Key,
    /// For the others: numbers of the clustered fields the change wrote.
    pub updated: Vec<u16>,
    /// For the others: the previous record image.
    pub old_rec: Vec<u8>,
    /// Purge has freed the off-page chains this record's updated fields
    /// owned (stored as the kind byte's high bit, set in place by purge).
    pub externals_freed: bool,
}

/// The kind byte's flag for [`UndoRecord::externals_freed`].
pub const UNDO_EXTERNALS_FREED: u8 = 0x80;

fn corrupt(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        file: "ibdata1".into(),
        reason: reason.into(),
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8> {
        let v = *self
            .b
            .get(self.pos)
            .ok_or_else(|| corrupt("truncated undo record"))?;
        self.pos += 1;
        Ok(v)
    }
    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("undo varint too long"))
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| corrupt("truncated undo record"))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

impl UndoRecord {
    /// Encodes the record body.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(
            self.kind as u8
                | if self.externals_freed {
                    UNDO_EXTERNALS_FREED
                } else {
                    0
                },
        );
        put_varint(out, self.undo_no);
        put_varint(out, self.table_id);
        if self.kind == UndoKind::Insert {
            put_varint(out, self.key.len() as u64);
            for f in &self.key {
                match f {
                    None => put_varint(out, 0),
                    Some(b) => {
                        put_varint(out, b.len() as u64 + 1);
                        out.extend_from_slice(b);
                    }
                }
            }
        } else {
            put_varint(out, self.updated.len() as u64);
            for &f in &self.updated {
                put_varint(out, f as u64);
            }
            put_varint(out, self.old_rec.len() as u64);
            out.extend_from_slice(&self.old_rec);
        }
    }

    /// Decodes a record body.
    pub fn decode(b: &[u8]) -> Result<UndoRecord> {
        let mut r = Reader { b, pos: 0 };
        let kind_byte = r.byte()?;
        let kind = match kind_byte & !UNDO_EXTERNALS_FREED {
            1 => UndoKind::Insert,
            2 => UndoKind::UpdExist,
            3 => UndoKind::DelMark,
            4 => UndoKind::UpdDel,
            k => return Err(corrupt(format!("unknown undo record kind {k}"))),
        };
        let undo_no = r.varint()?;
        let table_id = r.varint()?;
        let mut rec = UndoRecord {
            kind,
            undo_no,
            table_id,
            key: Vec::new(),
            updated: Vec::new(),
            old_rec: Vec::new(),
            externals_freed: kind_byte & UNDO_EXTERNALS_FREED != 0,
        };
        if kind == UndoKind::Insert {
            let n = r.varint()?;
            if n > 64 {
                return Err(corrupt("undo key with too many fields"));
            }
            for _ in 0..n {
                let l = r.varint()?;
                rec.key.push(if l == 0 {
                    None
                } else {
                    Some(r.bytes(l as usize - 1)?.to_vec())
                });
            }
        } else {
            let n = r.varint()?;
            if n > 4096 {
                return Err(corrupt("undo record with too many fields"));
            }
            for _ in 0..n {
                rec.updated.push(r.varint()? as u16);
            }
            let l = r.varint()? as usize;
            rec.old_rec = r.bytes(l)?.to_vec();
        }
        if r.pos != b.len() {
            return Err(corrupt("trailing bytes in undo record"));
        }
        Ok(rec)
    }
}

/// An undo log being written by an active transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoLog {
    /// Its first page (holds the log header).
    pub first_page: u32,
    /// Its last page.
    pub last_page: u32,
    /// Its rollback segment slot.
    pub slot: usize,
    /// Undo number the next record gets.
    pub next_undo_no: u64,
}

/// The pages a walk along a log's page chain has passed. Each page of a
/// log is passed once, so a link that leads back to one (a corrupt prev or
/// next link, or a page number out of the log's reach) ends the walk with
/// a corruption error instead of walking, undoing or freeing forever.
/// InnoDB trusts the links (`trx_undo_get_prev_rec_from_prev_page` follows
/// the previous page with an assertion on nothing but its page type).
#[derive(Debug, Default)]
pub struct ChainWalk {
    /// The first page passed, kept apart: most logs have one page, and
    /// their walks allocate nothing.
    first: Option<u32>,
    seen: std::collections::HashSet<u32>,
}

impl ChainWalk {
    /// Notes that the walk reaches `page_no`: an error if it passed the
    /// page before or the number cannot be a log page (the space's first
    /// pages hold its header, the transaction system and the rollback
    /// segment; FIL_NULL ends a chain and is never reached).
    pub fn reach(&mut self, page_no: u32) -> Result<()> {
        if page_no <= RSEG_PAGE || page_no == FIL_NULL {
            return Err(corrupt(format!(
                "undo log page chain links to page {page_no}, which no log holds"
            )));
        }
        let again = match self.first {
            None => {
                self.first = Some(page_no);
                false
            }
            Some(first) => first == page_no || !self.seen.insert(page_no),
        };
        if again {
            return Err(corrupt(format!(
                "undo log page chain loops back to page {page_no}"
            )));
        }
        Ok(())
    }
}

fn sys(page_no: u32) -> PageId {
    PageId::new(crate::fil::SYSTEM_SPACE, page_no)
}

/// Formats the rollback segment header page (database creation).
pub fn create_rseg(mtr: &mut Mtr, pager: &mut Pager) -> Result<()> {
    let f = mtr.create(pager, sys(RSEG_PAGE), PageType::Sys)?;
    let mut hdr = Vec::with_capacity(12 + 4 * RSEG_N_SLOTS);
    hdr.extend_from_slice(&0u32.to_le_bytes());
    hdr.extend_from_slice(&FIL_NULL.to_le_bytes());
    hdr.extend_from_slice(&FIL_NULL.to_le_bytes());
    for _ in 0..RSEG_N_SLOTS {
        hdr.extend_from_slice(&FIL_NULL.to_le_bytes());
    }
    mtr.write(pager, f, RSEG_HISTORY_LEN, &hdr)
}

/// Starts a log for `trx_id` in the free slot `slot`.
pub fn create_log(pager: &mut Pager, trx_id: u64, slot: usize) -> Result<UndoLog> {
    assert!(slot < RSEG_N_SLOTS);
    fsp::reserve(pager, crate::fil::SYSTEM_SPACE, 1)?;
    let mut mtr = Mtr::new();
    let page_no = fsp::alloc(&mut mtr, pager, crate::fil::SYSTEM_SPACE, PageType::UndoLog)?;
    let f = mtr.fix(pager, sys(page_no))?;
    let mut hdr = [0u8; UNDO_LOG_END - UNDO_PAGE_START];
    let put = |h: &mut [u8], off: usize, b: &[u8]| {
        h[off - UNDO_PAGE_START..off - UNDO_PAGE_START + b.len()].copy_from_slice(b)
    };
    put(
        &mut hdr,
        UNDO_PAGE_START,
        &(UNDO_LOG_END as u16).to_le_bytes(),
    );
    put(
        &mut hdr,
        UNDO_PAGE_FREE,
        &(UNDO_LOG_END as u16).to_le_bytes(),
    );
    put(&mut hdr, UNDO_STATE, &UNDO_ACTIVE.to_le_bytes());
    put(&mut hdr, UNDO_TRX_ID, &trx_id.to_le_bytes());
    put(&mut hdr, UNDO_TRX_NO, &0u64.to_le_bytes());
    put(&mut hdr, UNDO_LAST_PAGE, &page_no.to_le_bytes());
    put(&mut hdr, UNDO_NEXT_LOG, &FIL_NULL.to_le_bytes());
    mtr.write(pager, f, UNDO_PAGE_START, &hdr)?;
    let r = mtr.fix(pager, sys(RSEG_PAGE))?;
    mtr.write_u32(pager, r, RSEG_SLOTS + 4 * slot, page_no)?;
    mtr.commit(pager)?;
    Ok(UndoLog {
        first_page: page_no,
        last_page: page_no,
        slot,
        next_undo_no: 0,
    })
}

/// Appends a record to the log, returning where it went.
pub fn append(pager: &mut Pager, log: &mut UndoLog, rec: &UndoRecord) -> Result<RollPtr> {
    let mut body = Vec::with_capacity(64 + rec.old_rec.len());
    rec.encode(&mut body);
    if body.len() > MAX_UNDO_RECORD {
        return Err(Error::RowTooBig {
            size: body.len(),
            max: MAX_UNDO_RECORD,
        });
    }
    let need = body.len() + 2;
    let free = {
        let f = pager.fix(sys(log.last_page))?;
        let free = page::get_u16(pager.page(f), UNDO_PAGE_FREE) as usize;
        pager.unfix(f);
        free
    };
    let mut mtr = Mtr::new();
    let (page_no, offset) = if free + need <= FIL_PAGE_DATA_END {
        (log.last_page, free)
    } else {
        fsp::reserve(pager, crate::fil::SYSTEM_SPACE, 1)?;
        let new_page = fsp::alloc(&mut mtr, pager, crate::fil::SYSTEM_SPACE, PageType::UndoLog)?;
        let nf = mtr.fix(pager, sys(new_page))?;
        mtr.write_u16(pager, nf, UNDO_PAGE_START, UNDO_PAGE_HDR_END as u16)?;
        mtr.set_prev(pager, nf, log.last_page)?;
        let lf = mtr.fix(pager, sys(log.last_page))?;
        mtr.set_next(pager, lf, new_page)?;
        let hf = mtr.fix(pager, sys(log.first_page))?;
        mtr.write_u32(pager, hf, UNDO_LAST_PAGE, new_page)?;
        log.last_page = new_page;
        (new_page, UNDO_PAGE_HDR_END)
    };
    let f = mtr.fix(pager, sys(page_no))?;
    let mut bytes = Vec::with_capacity(need);
    bytes.extend_from_slice(&(body.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&body);
    mtr.write(pager, f, offset, &bytes)?;
    mtr.write_u16(pager, f, UNDO_PAGE_FREE, (offset + need) as u16)?;
    mtr.commit(pager)?;
    log.next_undo_no = rec.undo_no + 1;
    Ok(RollPtr {
        insert: rec.kind == UndoKind::Insert,
        page_no,
        offset: offset as u16,
    })
}

/// Reads the undo record a roll pointer points to.
pub fn read(pager: &mut Pager, ptr: RollPtr) -> Result<UndoRecord> {
    let f = pager.fix(sys(ptr.page_no))?;
    let page = pager.page(f);
    let res = (|| {
        if page::page_type_raw(page) != PageType::UndoLog as u16 {
            return Err(corrupt(format!(
                "roll pointer to page {} which is not an undo page",
                ptr.page_no
            )));
        }
        let off = ptr.offset as usize;
        let free = page::get_u16(page, UNDO_PAGE_FREE) as usize;
        if off < UNDO_PAGE_HDR_END || off + 2 > free || free > FIL_PAGE_DATA_END {
            return Err(corrupt(format!(
                "roll pointer offset {off} outside the records of page {}",
                ptr.page_no
            )));
        }
        let len = page::get_u16(page, off) as usize;
        if off + 2 + len > free {
            return Err(corrupt("undo record runs past the page's free offset"));
        }
        UndoRecord::decode(&page[off + 2..off + 2 + len])
    })();
    pager.unfix(f);
    res
}

/// The records of one undo page: (offset, record), in log order.
pub fn page_records(pager: &mut Pager, page_no: u32) -> Result<(Vec<(u16, UndoRecord)>, u32)> {
    let f = pager.fix(sys(page_no))?;
    let page = pager.page(f);
    let res = (|| {
        let mut out = Vec::new();
        let start = page::get_u16(page, UNDO_PAGE_START) as usize;
        let free = page::get_u16(page, UNDO_PAGE_FREE) as usize;
        if start < UNDO_PAGE_HDR_END || free > FIL_PAGE_DATA_END || start > free {
            return Err(corrupt(format!(
                "undo page {page_no} has start {start} and free {free}"
            )));
        }
        let mut off = start;
        while off < free {
            if off + 2 > free {
                return Err(corrupt("undo record header past the free offset"));
            }
            let len = page::get_u16(page, off) as usize;
            if off + 2 + len > free {
                return Err(corrupt("undo record past the free offset"));
            }
            out.push((
                off as u16,
                UndoRecord::decode(&page[off + 2..off + 2 + len])?,
            ));
            off += 2 + len;
        }
        Ok((out, page::prev(page)))
    })();
    pager.unfix(f);
    res
}

/// Reads a log header: (state, trx id, trx no, last page, next log).
pub fn log_header(pager: &mut Pager, first_page: u32) -> Result<(u16, u64, u64, u32, u32)> {
    let f = pager.fix(sys(first_page))?;
    let p = pager.page(f);
    let ok = page::page_type_raw(p) == PageType::UndoLog as u16;
    let out = (
        page::get_u16(p, UNDO_STATE),
        page::get_u64(p, UNDO_TRX_ID),
        page::get_u64(p, UNDO_TRX_NO),
        page::get_u32(p, UNDO_LAST_PAGE),
        page::get_u32(p, UNDO_NEXT_LOG),
    );
    pager.unfix(f);
    if !ok {
        return Err(corrupt(format!(
            "undo log header page {first_page} is not an undo page"
        )));
    }
    Ok(out)
}

/// Cuts the log back so that the record at (`page_no`, `offset`) and
/// everything after it are gone, freeing emptied pages (one
/// mini-transaction per page, so the log is consistent at every step).
pub fn truncate(pager: &mut Pager, log: &mut UndoLog, page_no: u32, offset: u16) -> Result<()> {
    let mut walk = ChainWalk::default();
    while log.last_page != page_no {
        let last = log.last_page;
        walk.reach(last)?;
        let f = pager.fix(sys(last))?;
        let prev = page::prev(pager.page(f));
        pager.unfix(f);
        if prev == FIL_NULL {
            return Err(corrupt("undo truncation point is not in the log"));
        }
        let mut mtr = Mtr::new();
        let hf = mtr.fix(pager, sys(log.first_page))?;
        mtr.write_u32(pager, hf, UNDO_LAST_PAGE, prev)?;
        let pf = mtr.fix(pager, sys(prev))?;
        mtr.set_next(pager, pf, FIL_NULL)?;
        fsp::free(&mut mtr, pager, sys(last))?;
        mtr.commit(pager)?;
        log.last_page = prev;
    }
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, sys(page_no))?;
    mtr.write_u16(pager, f, UNDO_PAGE_FREE, offset)?;
    mtr.commit(pager)?;
    Ok(())
}

/// Frees every page of a log but the first, from the end (one
/// mini-transaction each). The caller frees the first page together with
/// whatever still points to it.
pub fn free_tail(pager: &mut Pager, first_page: u32) -> Result<()> {
    let (_, _, _, mut last, _) = log_header(pager, first_page)?;
    let mut walk = ChainWalk::default();
    walk.reach(first_page)?;
    while last != first_page {
        walk.reach(last)?;
        let f = pager.fix(sys(last))?;
        let prev = page::prev(pager.page(f));
        pager.unfix(f);
        if prev == FIL_NULL {
            return Err(corrupt("undo log page chain is broken"));
        }
        let mut mtr = Mtr::new();
        let hf = mtr.fix(pager, sys(first_page))?;
        mtr.write_u32(pager, hf, UNDO_LAST_PAGE, prev)?;
        let pf = mtr.fix(pager, sys(prev))?;
        mtr.set_next(pager, pf, FIL_NULL)?;
        fsp::free(&mut mtr, pager, sys(last))?;
        mtr.commit(pager)?;
        last = prev;
    }
    Ok(())
}

#[cfg(test)]
#[path = "undo_tests.rs"]
mod tests;
