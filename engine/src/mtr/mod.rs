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
pub(crate) mod zip;

use crate::buf::FrameId;
use crate::error::{Error, Result};
use crate::page::zip::{ZipFields, ZipPage};
use crate::page::{self, PageId, PageType};
use crate::pager::Pager;
pub use ops::{FileOp, LogRecord, PageOp};

/// A mini-transaction in progress.
#[derive(Default)]
pub struct Mtr {
    log: Vec<u8>,
    fixed: Vec<FrameId>,
    modified: Vec<FrameId>,
    /// Compressed-space index pages being built in their frames, whose
    /// changes are not logged: [`Mtr::zip_compress`] logs their image.
    unlogged: Vec<FrameId>,
}

impl Mtr {
    /// Starts a mini-transaction, with the vectors of one that ended on
    /// this thread (a statement runs many: each would otherwise allocate
    /// and grow its log and page lists afresh).
    pub fn new() -> Self {
        spare::take()
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

    /// Applies a change to a fixed page and logs it. A change a compressed
    /// page cannot take (see [`Mtr::try_page_op`]) is an error here: use
    /// this only for changes that cannot grow an index page.
    pub fn page_op(&mut self, pager: &mut Pager, f: FrameId, op: PageOp<'_>) -> Result<()> {
        if self.try_page_op(pager, f, op)? {
            Ok(())
        } else {
            Err(Error::Corrupt {
                file: "zip".into(),
                reason: format!(
                    "page {} no longer compresses into its size after a change that was not checked",
                    pager.pool.frame(f).id
                ),
            })
        }
    }

    /// Applies a change to a fixed page and logs it; `Ok(false)` when the
    /// page is a compressed space's index page that the change would leave
    /// too big to compress into its page size: then nothing was changed or
    /// logged, and the caller must make room (split the page), as
    /// `btr_cur_optimistic_insert` gives way to `btr_cur_pessimistic_insert`.
    ///
    /// On a compressed page the change is mirrored onto the compressed
    /// image (the modification log or the uncompressed columns, `mtr::zip`);
    /// when that cannot follow it, the frame is compressed afresh and the
    /// new image logged after the change (MLOG_ZIP_PAGE_COMPRESS).
    pub fn try_page_op(&mut self, pager: &mut Pager, f: FrameId, op: PageOp<'_>) -> Result<bool> {
        debug_assert!(
            self.fixed.contains(&f),
            "change to a page the mtr has not fixed"
        );
        let id = pager.pool.frame(f).id;
        let zip_size = pager.fil.zip_size(id.space);
        if self.unlogged.contains(&f) {
            // Built in the frame, logged as the image it compresses to.
            op.apply(id, &mut pager.pool.frame_mut(f).data)?;
            self.note_modified(f);
            return Ok(true);
        }
        let (data, zip) = pager.pool.page_and_zip_mut(f);
        let Some(mut zf) = zip.filter(|_| zip_size.is_some()) else {
            if let (Some(size), PageOp::Write { offset, bytes }) = (zip_size, &op) {
                // A compressed space's other pages keep only their first
                // `size` bytes on disk: a write past them would be lost.
                if usize::from(*offset) + bytes.len() > size {
                    return Err(Error::InvalidArgument(format!(
                        "write past the {size} bytes page {id} keeps on disk"
                    )));
                }
            }
            op.apply(id, data)?;
            ops::encode_page(&mut self.log, id, &op);
            self.note_modified(f);
            return Ok(true);
        };
        let size = zip_size.expect("a compressed space");
        if matches!(op, PageOp::Init(_) | PageOp::IndexInit { .. }) {
            // A page formatted afresh: its compressed page comes from
            // Mtr::zip_compress once it is an index page again.
            drop(zf);
            op.apply(id, data)?;
            pager.pool.detach_zip(f);
            ops::encode_page(&mut self.log, id, &op);
            self.note_modified(f);
            return Ok(true);
        }
        // PageOp::apply checks before it changes anything.
        let before = zip::before(&op, data);
        op.apply(id, data)?;
        if page::page_type_raw(data) != PageType::Index as u16 {
            // No longer an index page (freed): it has no compressed page.
            drop(zf);
            pager.pool.detach_zip(f);
            ops::encode_page(&mut self.log, id, &op);
            self.note_modified(f);
            return Ok(true);
        }
        // On an error or a refusal from here on, the frame goes back to the
        // compressed page, so that no unlogged change is left in it. The
        // compressed page is as it was: a mirror that cannot follow the
        // change leaves it untouched (and one that fails part-way is an
        // error the engine stops on).
        let restore = |data: &mut [u8],
                       zf: &crate::buf::ZipMut<'_>,
                       compression: &mut crate::pager::Compression| {
            compression
                .decompress(&zf.page, data)
                .map(|_| ())
                .map_err(|c| c.at("zip", id.page_no))
        };
        let stale = pager.zip_trx_id_frame_only;
        let fields = zf.fields;
        let mirrored = match zip::mirror(&mut zf.page, fields, &op, data, &before, stale) {
            Ok(m) => m,
            Err(e) => {
                restore(data, &zf, &mut pager.compression)?;
                return Err(e);
            }
        };
        if mirrored == zip::Mirrored::Done {
            drop(zf);
            ops::encode_page(&mut self.log, id, &op);
            self.note_modified(f);
            pager.stats.zip_logged += 1;
            return Ok(true);
        }
        pager.stats.zip_recompressions += 1;
        let compression = &mut pager.compression;
        let mut compressed = compression.compress(data, fields, size);
        let mut reorganized = false;
        if matches!(compressed, Ok(None)) && !crate::page::index::is_compact(data) {
            // It does not fit as it is: compact the heap and compress again
            // (`page_zip_reorganize`), before the caller splits.
            pager.stats.zip_reorganizations += 1;
            crate::page::index::reorganize(data);
            reorganized = true;
            compressed = compression.compress(data, fields, size);
            pager.stats.zip_reorganizations_ok += u64::from(matches!(compressed, Ok(Some(_))));
        }
        let compressed = match compressed {
            Ok(c) => c,
            Err(e) => {
                restore(data, &zf, compression)?;
                return Err(e);
            }
        };
        match compressed {
            Some(page) => {
                zf.page.assign(&page);
                ops::encode_page(&mut self.log, id, &op);
                if reorganized {
                    ops::encode_page(&mut self.log, id, &PageOp::IndexReorganize);
                }
                if !pager.zip_skip_image_redo {
                    ops::encode_page(
                        &mut self.log,
                        id,
                        &PageOp::ZipImage {
                            image: zf.page.image(),
                        },
                    );
                }
                self.note_modified(f);
                Ok(true)
            }
            None => {
                // The change does not fit: the frame goes back to what the
                // compressed page holds, as page_zip_decompress restores it.
                pager.stats.zip_refused += 1;
                restore(data, &zf, compression)?;
                Ok(false)
            }
        }
    }

    /// Compresses a compressed space's index page afresh, with its records'
    /// layout `fields`, and logs the image: after the page was formatted
    /// (`page_create_zip`) or filled in bulk. `Ok(false)` when the page does
    /// not compress into its size; nothing is then logged, and the frame
    /// keeps no compressed page (the caller must change it and try again,
    /// or give up the mini-transaction).
    pub fn zip_compress(
        &mut self,
        pager: &mut Pager,
        f: FrameId,
        fields: &ZipFields,
    ) -> Result<bool> {
        debug_assert!(
            self.fixed.contains(&f),
            "compressing a page the mtr has not fixed"
        );
        let id = pager.pool.frame(f).id;
        let size = pager.fil.zip_size(id.space).ok_or_else(|| {
            Error::InvalidArgument(format!("page {id} is not in a compressed space"))
        })?;
        let Some(page) = pager
            .compression
            .compress(&pager.pool.frame(f).data, fields, size)?
        else {
            pager.pool.detach_zip(f);
            return Ok(false);
        };
        self.unlogged.retain(|&u| u != f);
        ops::encode_page(
            &mut self.log,
            id,
            &PageOp::ZipImage {
                image: page.image(),
            },
        );
        pager.pool.set_zip(f, &page, fields);
        self.note_modified(f);
        Ok(true)
    }

    /// Makes the page in `to` a copy of the compressed page in `from` (its
    /// image, with `to`'s page number), decompressed, and logs the image:
    /// InnoDB's `page_zip_copy_recs`, used when a root moves down a level.
    pub fn zip_copy(&mut self, pager: &mut Pager, from: FrameId, to: FrameId) -> Result<()> {
        let to_id = pager.pool.frame(to).id;
        let src = pager.pool.zip(from).ok_or_else(|| Error::Corrupt {
            file: "zip".into(),
            reason: format!(
                "page {} has no compressed page to copy",
                pager.pool.frame(from).id
            ),
        })?;
        let fields = src.fields.clone();
        let mut image = src.page.image().to_vec();
        page::put_u32(&mut image, page::FIL_PAGE_OFFSET, to_id.page_no);
        page::put_u32(&mut image, page::FIL_PAGE_SPACE_ID, to_id.space);
        let zip = ZipPage::from_image(image).map_err(|c| c.at("zip", to_id.page_no))?;
        let frame = pager.pool.frame_mut(to);
        pager
            .compression
            .decompress(&zip, &mut frame.data)
            .map_err(|c| c.at("zip", to_id.page_no))?;
        pager.pool.set_zip(to, &zip, &fields);
        ops::encode_page(
            &mut self.log,
            to_id,
            &PageOp::ZipImage { image: zip.image() },
        );
        self.note_modified(to);
        Ok(())
    }

    /// Detaches a compressed page from its frame for a bulk change: the
    /// changes that follow are made to the frame alone, unlogged, and
    /// [`Mtr::zip_compress`] must give the page a new image, which is its
    /// redo, before the mini-transaction commits. InnoDB builds split and
    /// merged compressed pages so: the records are copied with logging off
    /// (`page_copy_rec_list_end` under MTR_LOG_NONE) and the page is
    /// logged as its compressed image (MLOG_ZIP_PAGE_COMPRESS).
    pub fn zip_detach(&mut self, pager: &mut Pager, f: FrameId) {
        let id = pager.pool.frame(f).id;
        if pager.fil.zip_size(id.space).is_some() {
            pager.pool.detach_zip(f);
            self.zip_build(f);
        }
    }

    /// Marks a new compressed-space index page, fixed and without a
    /// compressed image, as built in its frame: its changes until
    /// [`Mtr::zip_compress`] are not logged (see [`Mtr::zip_detach`]).
    pub fn zip_build(&mut self, f: FrameId) {
        debug_assert!(self.fixed.contains(&f), "building a page not fixed");
        if !self.unlogged.contains(&f) {
            self.unlogged.push(f);
        }
    }

    fn note_modified(&mut self, f: FrameId) {
        if !self.modified.contains(&f) {
            self.modified.push(f);
        }
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
        if let Some(&f) = self.unlogged.first() {
            // Its changes have no redo: the engine must stop before any
            // of them can reach the disk.
            return Err(Error::Corrupt {
                file: "redo".into(),
                reason: format!(
                    "page {} was built without redo and never compressed",
                    pager.pool.frame(f).id
                ),
            });
        }
        let mut end = 0;
        if !self.log.is_empty() {
            let (start, end_lsn) = pager.log.append(&self.log)?;
            end = end_lsn;
            for &f in &self.modified {
                {
                    let (data, zip) = pager.pool.page_and_zip_mut(f);
                    page::set_page_lsn(data, end_lsn);
                    if let Some(mut zf) = zip {
                        zf.page.write_header(data);
                    }
                }
                pager.pool.mark_dirty(f, start, end_lsn);
            }
        }
        self.release_fixes(pager);
        Ok(end)
    }

    /// Releases the fixes of a mini-transaction that changed nothing.
    pub fn release(mut self, pager: &mut Pager) {
        assert!(
            self.log.is_empty() && self.modified.is_empty(),
            "a mini-transaction with changes was released without commit"
        );
        self.release_fixes(pager);
    }

    fn release_fixes(&mut self, pager: &mut Pager) {
        for f in self.fixed.drain(..) {
            pager.unfix(f);
        }
        self.modified.clear();
        self.unlogged.clear();
        self.log.clear();
    }
}

impl Drop for Mtr {
    fn drop(&mut self) {
        spare::give(self);
    }
}

/// This thread's vectors of ended mini-transactions, empty, for the next.
mod spare {
    use super::{FrameId, Mtr};
    use crate::spare::{self, Spares};

    /// A log with more room than this is let go (a bulk build's
    /// mini-transaction logs whole pages).
    const MAX_LOG: usize = 64 * 1024;

    /// A mini-transaction's vectors, kept without it (a kept `Mtr` would
    /// come back here when dropped).
    struct Vectors {
        log: Vec<u8>,
        fixed: Vec<FrameId>,
        modified: Vec<FrameId>,
        unlogged: Vec<FrameId>,
    }

    thread_local! {
        /// At most 8 are kept.
        static SPARE: Spares<Vectors> = const { Spares::new(8) };
    }

    pub(super) fn take() -> Mtr {
        spare::take(&SPARE).map_or_else(Mtr::default, |v| Mtr {
            log: v.log,
            fixed: v.fixed,
            modified: v.modified,
            unlogged: v.unlogged,
        })
    }

    pub(super) fn give(mtr: &mut Mtr) {
        if mtr.log.capacity() == 0 || mtr.log.capacity() > MAX_LOG {
            return;
        }
        let mut v = Vectors {
            log: std::mem::take(&mut mtr.log),
            fixed: std::mem::take(&mut mtr.fixed),
            modified: std::mem::take(&mut mtr.modified),
            unlogged: std::mem::take(&mut mtr.unlogged),
        };
        v.log.clear();
        v.fixed.clear();
        v.modified.clear();
        v.unlogged.clear();
        spare::give(&SPARE, v);
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// A mini-transaction that ended leaves its vectors, empty, to the
        /// next one on the thread; a log grown past the bound is let go.
        #[test]
        fn an_ended_mini_transaction_leaves_its_vectors_to_the_next() {
            let mut a = Mtr::new();
            a.log.extend_from_slice(&[1; 300]);
            a.fixed.push(7);
            let (log, fixed) = (a.log.as_ptr(), a.fixed.as_ptr());
            drop(a);
            let b = Mtr::new();
            assert_eq!((b.log.as_ptr(), b.fixed.as_ptr()), (log, fixed));
            assert!(b.log.is_empty() && b.fixed.is_empty());
            assert!(b.log.capacity() >= 300);
            drop(b);

            let mut big = Mtr::new();
            big.log.resize(MAX_LOG + 1, 0);
            drop(big);
            let c = Mtr::new();
            assert!(c.log.capacity() <= MAX_LOG, "{}", c.log.capacity());
        }
    }
}
