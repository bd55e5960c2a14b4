//! Mini-transactions: the unit of atomic change to pages. Mirrors InnoDB's
//! `mtr0mtr.cc`.
//!
//! A mini-transaction fixes the pages it touches, changes them only through
//! [`PageOp`]s (each both applied to the frame and encoded as a redo
//! record), and at commit appends its records to the log as one frame, sets
//! the LSN of every page it changed and puts those pages on the flush list.
//! Recovery applies a mini-transaction's records all or none, because the
//! log scan only returns complete frames.
//!
//! Rules callers follow:
//! - every page change goes through [`Mtr::page_op`] (or a helper on it);
//! - a mini-transaction that has changed a page and then fails must not be
//!   committed or forgotten: the engine halts, because the frames now hold
//!   changes the log does not (see [`Mtr::is_dirty`]);
//! - pages stay fixed until commit, so nothing a mini-transaction changed
//!   can be written before its redo.

pub mod ops;

use crate::buf::FrameId;
use crate::error::Result;
use crate::page::{self, PageId, PageType};
use crate::pager::Pager;
pub use ops::{FileOp, LogRecord, PageOp};

/// A mini-transaction in progress.
#[derive(Default)]
pub struct Mtr {
    log: Vec<u8>,
    fixed: Vec<FrameId>,
    modified: Vec<FrameId>,
}

impl Mtr {
    /// Starts a mini-transaction.
    pub fn new() -> Self {
        Mtr::default()
    }

    /// Whether the mini-transaction has changed anything.
    pub fn is_dirty(&self) -> bool {
        !self.log.is_empty()
    }

    /// Bytes of redo so far.
    pub fn log_len(&self) -> usize {
        self.log.len()
    }

    /// Fixes a page for the rest of the mini-transaction.
    pub fn fix(&mut self, pager: &mut Pager, id: PageId) -> Result<FrameId> {
        let f = pager.fix(id)?;
        self.fixed.push(f);
        Ok(f)
    }

    /// Fixes a page and formats it afresh as `ty` (no read).
    pub fn create(&mut self, pager: &mut Pager, id: PageId, ty: PageType) -> Result<FrameId> {
        let f = pager.fix_new(id)?;
        self.fixed.push(f);
        self.page_op(pager, f, PageOp::Init(ty))?;
        Ok(f)
    }

    /// Applies a change to a fixed page and logs it.
    pub fn page_op(&mut self, pager: &mut Pager, f: FrameId, op: PageOp<'_>) -> Result<()> {
        debug_assert!(
            self.fixed.contains(&f),
            "change to a page the mtr has not fixed"
        );
        let id = pager.pool.frame(f).id;
        op.apply(id, pager.page_mut(f))?;
        ops::encode_page(&mut self.log, id, &op);
        if !self.modified.contains(&f) {
            self.modified.push(f);
        }
        Ok(())
    }

    /// Logs a file operation.
    pub fn file_op(&mut self, op: FileOp<'_>) {
        ops::encode_file(&mut self.log, &op);
    }

    /// Writes bytes into a fixed page.
    pub fn write(
        &mut self,
        pager: &mut Pager,
        f: FrameId,
        offset: usize,
        bytes: &[u8],
    ) -> Result<()> {
        self.page_op(
            pager,
            f,
            PageOp::Write {
                offset: offset as u16,
                bytes,
            },
        )
    }

    /// Writes a little-endian u32 into a fixed page.
    pub fn write_u32(
        &mut self,
        pager: &mut Pager,
        f: FrameId,
        offset: usize,
        v: u32,
    ) -> Result<()> {
        self.write(pager, f, offset, &v.to_le_bytes())
    }

    /// Writes a little-endian u64 into a fixed page.
    pub fn write_u64(
        &mut self,
        pager: &mut Pager,
        f: FrameId,
        offset: usize,
        v: u64,
    ) -> Result<()> {
        self.write(pager, f, offset, &v.to_le_bytes())
    }

    /// Writes a little-endian u16 into a fixed page.
    pub fn write_u16(
        &mut self,
        pager: &mut Pager,
        f: FrameId,
        offset: usize,
        v: u16,
    ) -> Result<()> {
        self.write(pager, f, offset, &v.to_le_bytes())
    }

    /// Sets a page's previous-page link.
    pub fn set_prev(&mut self, pager: &mut Pager, f: FrameId, prev: u32) -> Result<()> {
        self.write_u32(pager, f, page::FIL_PAGE_PREV, prev)
    }

    /// Sets a page's next-page link.
    pub fn set_next(&mut self, pager: &mut Pager, f: FrameId, next: u32) -> Result<()> {
        self.write_u32(pager, f, page::FIL_PAGE_NEXT, next)
    }

    /// Commits: appends the redo, stamps the changed pages with the end LSN,
    /// puts them on the flush list and releases every fix. Returns the end
    /// LSN (0 for a mini-transaction that changed nothing).
    pub fn commit(mut self, pager: &mut Pager) -> Result<u64> {
        let mut end = 0;
        if !self.log.is_empty() {
            let (start, end_lsn) = pager.log.append(&self.log)?;
            end = end_lsn;
            for &f in &self.modified {
                page::set_page_lsn(pager.page_mut(f), end_lsn);
                pager.pool.mark_dirty(f, start, end_lsn);
            }
        }
        self.release_fixes(pager);
        Ok(end)
    }

    /// Releases the fixes of a mini-transaction that changed nothing.
    pub fn release(mut self, pager: &mut Pager) {
        assert!(
            self.log.is_empty(),
            "a mini-transaction with changes was released without commit"
        );
        self.release_fixes(pager);
    }

    fn release_fixes(&mut self, pager: &mut Pager) {
        for f in self.fixed.drain(..) {
            pager.unfix(f);
        }
        self.modified.clear();
        self.log.clear();
    }

    /// Forgets a failed mini-transaction's fixes after the engine has
    /// decided to halt. Its changes stay in memory, unlogged, which is why
    /// the engine must not be used again.
    pub fn abandon(mut self, pager: &mut Pager) {
        self.log.clear();
        self.release_fixes(pager);
    }
}
