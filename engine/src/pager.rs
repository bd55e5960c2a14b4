//! The pager: every path by which pages move between the buffer pool and
//! the files. Reads with validation, eviction, flushing through the
//! doublewrite buffer under the WAL rule, the page cleaner's batches and
//! checkpoints. Mirrors InnoDB's `buf0rea.cc`, `buf0flu.cc` and the
//! checkpoint half of `log0log.cc`.
//!
//! The WAL rule lives here and nowhere else: [`Pager::flush_frames`] makes
//! the redo log durable up to the newest LSN of every page in a batch before
//! any of them is written. A checkpoint is only ever written at the oldest
//! modification LSN of the dirty pages (or the log's end when there are
//! none), so every change after it is still in the log.
//!
//! Any error while writing or syncing leaves the files in a state only
//! recovery may interpret; callers turn such errors into a halt.

use crate::buf::{BufferPool, FrameId};
use crate::doublewrite::{self, DBLWR_PAGES};
use crate::error::{Error, Result};
use crate::fil::Fil;
use crate::io::Clock;
use crate::page::zip::{ZipFields, ZipPage, ZipResult};
use crate::page::{self, PageId, PageState, PageType, PAGE_SIZE};
use crate::redo::Log;
use std::sync::Arc;

/// The compressed page images one index operation may log, beyond the
/// redo of an operation on 16 KiB pages (the engine's
/// `REDO_BETWEEN_FREE_CHECKS_MAX_BYTES`):
/// a split logs the images of the two halves, and of the parent when the
/// node pointer recompresses it, at each level it climbs; a root raise
/// logs the copied root and the root again. An assumed bound, like that
/// one: three levels of splits under a raised root.
pub const ZIP_IMAGES_BETWEEN_FREE_CHECKS: usize = 8;

/// Counters.
#[derive(Debug, Default, Clone, Copy)]
pub struct PagerStats {
    /// Pages flushed to their home location.
    pub pages_flushed: u64,
    /// Doublewrite batches.
    pub doublewrite_batches: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Flush batches started because the LRU tail was dirty.
    pub lru_flushes: u64,
    /// Changes to compressed pages that went through the modification log
    /// or the uncompressed columns.
    pub zip_logged: u64,
    /// Changes that recompressed their page (the modification log was full
    /// or the change could not be logged in it).
    pub zip_recompressions: u64,
    /// Of those whose first compression did not fit, the ones whose heap
    /// could be compacted: reorganized and compressed again, as
    /// `page_zip_reorganize` does.
    pub zip_reorganizations: u64,
    /// Reorganizations that then fit.
    pub zip_reorganizations_ok: u64,
    /// Changes refused because the page no longer compressed into its
    /// size, reorganized or not: the frame was rebuilt from its compressed
    /// page and the caller splits.
    pub zip_refused: u64,
    /// Page splits of compressed pages whose 16 KiB frame had room for the
    /// record: the split was forced by the compressed size.
    pub zip_splits_after_failure: u64,
    /// Leaf splits of a compressed index whose new record compressed with
    /// neither neighbour, so the page split between them first and the
    /// record went in by a second split.
    pub zip_splits_in_three: u64,
}

/// INNODB_CMP's counters for one compressed page size (InnoDB's
/// `page_zip_stat_t`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ZipSizeStats {
    /// Compressions attempted.
    pub compress_ops: u64,
    /// Compressions whose result fit in the page size.
    pub compress_ops_ok: u64,
    /// Engine-clock microseconds spent compressing.
    pub compress_us: u64,
    /// Decompressions (a page read, a page restored after a compression
    /// that did not fit, a copied page, recovery's replay of an image).
    pub uncompress_ops: u64,
    /// Engine-clock microseconds spent decompressing.
    pub uncompress_us: u64,
}

impl ZipSizeStats {
    fn minus(&self, o: &ZipSizeStats) -> ZipSizeStats {
        ZipSizeStats {
            compress_ops: self.compress_ops - o.compress_ops,
            compress_ops_ok: self.compress_ops_ok - o.compress_ops_ok,
            compress_us: self.compress_us - o.compress_us,
            uncompress_ops: self.uncompress_ops - o.uncompress_ops,
            uncompress_us: self.uncompress_us - o.uncompress_us,
        }
    }
}

/// Compression's setting, the clock that times it and its counters: every
/// compression and decompression of a page goes through here, so
/// INNODB_CMP counts each one, at its page size.
pub struct Compression {
    /// The zlib level pages are compressed at (`innodb_compression_level`).
    pub level: u32,
    /// The `zip-count-failed-compression` canary (see [`crate::Canary`]).
    pub count_failure_as_success: bool,
    clock: Box<dyn Clock>,
    /// Since the engine opened, per page size (1 KiB, 2, 4, 8, 16).
    totals: [ZipSizeStats; 5],
    /// `totals` at the last INNODB_CMP_RESET.
    reset_at: [ZipSizeStats; 5],
}

fn size_index(size: usize) -> usize {
    debug_assert!(page::zip::is_zip_size(size), "page size {size}");
    (size.trailing_zeros() as usize).saturating_sub(10).min(4)
}

impl Compression {
    fn new(clock: Box<dyn Clock>) -> Self {
        Compression {
            level: page::zip::DEFAULT_LEVEL,
            count_failure_as_success: false,
            clock,
            totals: Default::default(),
            reset_at: Default::default(),
        }
    }

    /// The engine's clock.
    pub fn now_us(&self) -> u64 {
        self.clock.now_us()
    }

    /// Compresses `frame` into a page of `size` bytes at the configured
    /// level (`page_zip_compress`), counted and timed.
    pub fn compress(
        &mut self,
        frame: &[u8],
        fields: &ZipFields,
        size: usize,
    ) -> Result<Option<ZipPage>> {
        let start = self.clock.now_us();
        let mut result = ZipPage::compress(frame, fields, size, self.level);
        if self.count_failure_as_success && matches!(result, Ok(None)) {
            result = ZipPage::compress_cut_to_fit(frame, fields, size, self.level);
        }
        let s = &mut self.totals[size_index(size)];
        s.compress_ops += 1;
        s.compress_ops_ok += u64::from(matches!(result, Ok(Some(_))));
        s.compress_us += self.clock.now_us().saturating_sub(start);
        result
    }

    /// Decompresses `zip` into `frame` (`page_zip_decompress`), counted and
    /// timed.
    pub fn decompress<D: AsRef<[u8]>>(
        &mut self,
        zip: &ZipPage<D>,
        frame: &mut [u8],
    ) -> ZipResult<ZipFields> {
        let start = self.clock.now_us();
        let result = zip.decompress(frame);
        self.note_decompress(zip.size(), start);
        result
    }

    /// Counts a decompression of a page of `size` bytes begun at `start`
    /// (engine-clock microseconds) by a caller that made it itself.
    pub fn note_decompress(&mut self, size: usize, start: u64) {
        let s = &mut self.totals[size_index(size)];
        s.uncompress_ops += 1;
        s.uncompress_us += self.clock.now_us().saturating_sub(start);
    }

    /// INNODB_CMP: the counters since the last reset, per page size.
    pub fn cmp(&self) -> [(usize, ZipSizeStats); 5] {
        std::array::from_fn(|i| {
            (
                page::zip::ZIP_SIZES[i],
                self.totals[i].minus(&self.reset_at[i]),
            )
        })
    }

    /// INNODB_CMP_RESET: [`Compression::cmp`], then zeroes it.
    pub fn cmp_reset(&mut self) -> [(usize, ZipSizeStats); 5] {
        let rows = self.cmp();
        self.reset_at = self.totals;
        rows
    }
}

/// Buffer pool, files and log, together.
pub struct Pager {
    /// The tablespace files.
    pub fil: Fil,
    /// The redo log.
    pub log: Log,
    /// The buffer pool.
    pub pool: BufferPool,
    doublewrite: bool,
    batch_pages: usize,
    /// The `early-checkpoint` canary: checkpoint at the log's end whatever
    /// is still dirty.
    pub early_checkpoint: bool,
    /// The `unique-check-first-column` canary (see [`crate::Canary`]).
    pub unique_first_column: bool,
    /// The `unique-check-binary` canary.
    pub unique_binary: bool,
    /// The `implicit-lock-of-row-changer` canary (see [`crate::Canary`]).
    pub implicit_by_row_changer: bool,
    /// Compression's level, clock and counters.
    pub compression: Compression,
    /// The `zip-skip-mod-log` canary (see [`crate::Canary`]).
    pub zip_skip_mod_log: bool,
    /// The `zip-skip-image-redo` canary.
    pub zip_skip_image_redo: bool,
    /// The `zip-trx-id-frame-only` canary.
    pub zip_trx_id_frame_only: bool,
    /// Counters.
    pub stats: PagerStats,
}

impl Pager {
    /// A pager over open files and log.
    pub fn new(
        fil: Fil,
        log: Log,
        pool_pages: usize,
        doublewrite: bool,
        clock: Box<dyn Clock>,
    ) -> Self {
        let clock = crate::io::SharedClock::new(clock);
        let mut pool = BufferPool::new(pool_pages);
        pool.set_clock(Box::new(clock.clone()));
        Pager {
            fil,
            log,
            pool,
            doublewrite,
            batch_pages: (DBLWR_PAGES as usize).min(pool_pages / 2).max(1),
            early_checkpoint: false,
            unique_first_column: false,
            unique_binary: false,
            implicit_by_row_changer: false,
            compression: Compression::new(Box::new(clock)),
            zip_skip_mod_log: false,
            zip_skip_image_redo: false,
            zip_trx_id_frame_only: false,
            stats: PagerStats::default(),
        }
    }

    /// The engine's clock.
    pub fn now_us(&self) -> u64 {
        self.compression.now_us()
    }

    /// Whether pages go through the doublewrite buffer.
    pub fn doublewrite(&self) -> bool {
        self.doublewrite
    }

    /// Fixes a page in the pool, reading and validating it if needed. A page
    /// never written comes back all zeros. A compressed-only page is
    /// decompressed into a new frame (`buf_page_get_gen` on a
    /// `BUF_BLOCK_ZIP_PAGE`).
    pub fn fix(&mut self, id: PageId) -> Result<FrameId> {
        if let Some(f) = self.pool.lookup_fix(id) {
            self.refill(f, true)?;
            return Ok(f);
        }
        let f = self.free_frame()?;
        if let Some(zip_size) = self.fil.zip_size(id.space) {
            return match self.read_compressed(id, f, zip_size) {
                Ok(()) => {
                    self.pool.install(f, id);
                    Ok(f)
                }
                Err(e) => {
                    self.pool.give_back(f);
                    Err(e)
                }
            };
        }
        // The disk's image itself where the storage shares it (the frame
        // copies it at its first change), else a copy into the frame.
        let read = match self.fil.read_page_shared(id) {
            Ok(Some((state, image))) => {
                self.pool.share_image(f, image);
                Ok(state)
            }
            Ok(None) => self.fil.read_page(id, &mut self.pool.frame_mut(f).data),
            Err(e) => Err(e),
        };
        let res = read.and_then(|state| {
            // An index page's directory and heap are checked once, as it
            // comes from disk, so that no later access trusts a bad offset.
            let data = &self.pool.frame(f).data;
            if state == PageState::Valid && page::page_type_raw(data) == PageType::Index as u16 {
                if let Err(reason) = page::index::check_structure(data) {
                    return Err(Error::CorruptPage {
                        file: self.fil.name(id.space).unwrap_or("?").to_string(),
                        page_no: id.page_no,
                        reason,
                    });
                }
            }
            Ok(state)
        });
        match res {
            Ok(_) => {
                self.pool.install(f, id);
                Ok(f)
            }
            Err(e) => {
                self.pool.give_back(f);
                Err(e)
            }
        }
    }

    /// Reads a page of a compressed space into frame `f`: an index page is
    /// decompressed and keeps its compressed image beside the frame
    /// (InnoDB's `buf_page_get` with `buf_zip_decompress`); any other page
    /// is the first `zip_size` bytes of its frame, the rest zeros.
    fn read_compressed(&mut self, id: PageId, f: FrameId, zip_size: usize) -> Result<()> {
        let mut image = vec![0u8; zip_size];
        let state = self.fil.read_page(id, &mut image)?;
        let name = self.fil.name(id.space).unwrap_or("?").to_string();
        self.pool.detach_zip(f);
        let frame = self.pool.frame_mut(f);
        if state == PageState::Zero {
            frame.data.fill(0);
            return Ok(());
        }
        if page::page_type_raw(&image) == PageType::Index as u16 {
            let compression = &mut self.compression;
            let decoded = ZipPage::from_image(image).and_then(|zip| {
                let fields = compression.decompress(&zip, &mut frame.data)?;
                Ok((zip, fields))
            });
            let (zip, fields) = decoded.map_err(|c| c.at(&name, id.page_no))?;
            self.pool.set_zip(f, &zip, &fields);
        } else {
            frame.data[..zip_size].copy_from_slice(&image);
            frame.data[zip_size..].fill(0);
        }
        Ok(())
    }

    /// Fixes a frame for a page that is about to be formatted afresh: no
    /// read. Any cached image is reused. The frame's bytes are whatever it
    /// last held: the caller's next change must be the formatting
    /// ([`PageOp::Init`](crate::mtr::PageOp::Init), which zeroes the page).
    pub fn fix_new(&mut self, id: PageId) -> Result<FrameId> {
        if let Some(f) = self.pool.lookup_fix(id) {
            // Compressed only: a frame to format, nothing to decompress.
            self.refill(f, false)?;
            return Ok(f);
        }
        let f = self.free_frame()?;
        // Debug builds poison the stale bytes, so that a caller breaking
        // the contract reads garbage, not another page that looks right.
        #[cfg(debug_assertions)]
        self.pool.frame_mut(f).data.fill(0xA5);
        self.pool.install(f, id);
        Ok(f)
    }

    /// Gives a fixed page that is compressed only a frame again, the page
    /// decompressed into it when `decompress` (else it is stale, for a page
    /// about to be formatted). On an error the fix is released.
    fn refill(&mut self, f: FrameId, decompress: bool) -> Result<()> {
        if !self.pool.frame(f).data.is_empty() {
            return Ok(());
        }
        let result = self.make_room().and_then(|()| {
            self.pool.attach_data(f);
            if decompress {
                self.unzip(f)
            } else {
                Ok(())
            }
        });
        if result.is_err() {
            self.pool.unfix(f);
        }
        result
    }

    /// Decompresses a compressed-only page into the frame just attached.
    fn unzip(&mut self, f: FrameId) -> Result<()> {
        let id = self.pool.frame(f).id;
        let result = {
            let (data, zip) = self.pool.page_and_zip_mut(f);
            match zip {
                Some(zip) => self.compression.decompress(&zip.page, data).map(|_| ()),
                None => Err("its compressed block is not its own".into()),
            }
        };
        if let Err(c) = result {
            self.pool.detach_data(f);
            return Err(c.at(self.fil.name(id.space).unwrap_or("?"), id.page_no));
        }
        self.pool.stats.unzips += 1;
        Ok(())
    }

    /// Releases a fix.
    #[inline]
    pub fn unfix(&mut self, f: FrameId) {
        self.pool.unfix(f)
    }

    /// The page image in a fixed frame.
    #[inline]
    pub fn page(&self, f: FrameId) -> &[u8] {
        &self.pool.frame(f).data
    }

    /// The page image in a fixed frame, mutable. Only mini-transactions
    /// change pages.
    #[inline]
    pub fn page_mut(&mut self, f: FrameId) -> &mut [u8] {
        &mut self.pool.frame_mut(f).data
    }

    fn free_frame(&mut self) -> Result<FrameId> {
        self.make_room()?;
        Ok(self.pool.take_free(true).expect("forced allocation"))
    }

    /// Evicts until a 16 KiB block is free (`buf_LRU_get_free_block`): an
    /// uncompressed frame alone when the unzip LRU should give one up,
    /// else the coldest clean page, else a flushed batch of the cold end.
    /// When every page is fixed, the caller borrows beyond capacity.
    fn make_room(&mut self) -> Result<()> {
        while self.pool.resident() >= self.pool.capacity() {
            if self.pool.evict_from_unzip_lru() {
                if let Some(f) = self.pool.unzip_victim() {
                    self.pool.evict_uncompressed(f);
                    continue;
                }
            }
            let victims = self.pool.lru_victims(self.batch_pages);
            if let Some(&clean) = victims
                .iter()
                .find(|&&f| self.pool.frame(f).oldest_lsn == 0)
            {
                self.pool.evict(clean);
                continue;
            }
            if victims.is_empty() {
                return Ok(());
            }
            // The cold end is all dirty: write a batch of it, then evict.
            self.stats.lru_flushes += 1;
            self.flush_frames(&victims)?;
            self.pool.evict(victims[0]);
        }
        Ok(())
    }

    /// Writes dirty, unfixed frames to disk: redo first (the WAL rule), then
    /// the doublewrite area, then home locations, then syncs.
    pub fn flush_frames(&mut self, frames: &[FrameId]) -> Result<()> {
        let frames: Vec<FrameId> = frames
            .iter()
            .copied()
            .filter(|&f| self.pool.frame(f).oldest_lsn != 0)
            .collect();
        if frames.is_empty() {
            return Ok(());
        }
        let newest = frames
            .iter()
            .map(|&f| self.pool.frame(f).newest_lsn)
            .max()
            .expect("non-empty batch");
        self.log.write_up_to(newest, true)?;
        for chunk in frames.chunks(DBLWR_PAGES as usize) {
            // One copy of each sealed image, shared by both of its writes.
            let mut images: Vec<Arc<[u8]>> = Vec::with_capacity(chunk.len());
            for &f in chunk {
                let id = self.pool.frame(f).id;
                let zip_size = self.fil.zip_size(id.space);
                let frame = self.pool.frame_mut(f);
                debug_assert_eq!(frame.fix_count, 0, "flushing a fixed page");
                debug_assert!(frame.newest_lsn <= newest);
                images.push(match zip_size {
                    None => {
                        // Sealed in the frame's own buffer (a dirty
                        // page's), which the writes then share.
                        page::seal(&mut frame.data);
                        frame.data.share()
                    }
                    Some(size) => {
                        physical_image(&mut self.pool, f, size, id, self.zip_skip_mod_log)?
                    }
                });
            }
            if self.doublewrite {
                doublewrite::write_area(&mut self.fil, &images)?;
                self.stats.doublewrite_batches += 1;
            }
            let mut spaces = Vec::new();
            for (&f, image) in chunk.iter().zip(&images) {
                let id = self.pool.frame(f).id;
                self.fil.write_page_shared(id.space, id.page_no, image)?;
                if !spaces.contains(&id.space) {
                    spaces.push(id.space);
                }
            }
            spaces.sort_unstable();
            for space in spaces {
                self.fil.sync(space)?;
            }
            for &f in chunk {
                self.pool.mark_clean(f);
            }
            self.stats.pages_flushed += chunk.len() as u64;
        }
        Ok(())
    }

    /// Flushes up to `max_pages` of the oldest dirty pages whose oldest
    /// modification is below `lsn_limit`. Returns how many were written.
    pub fn flush_oldest(&mut self, max_pages: usize, lsn_limit: u64) -> Result<usize> {
        let batch = self.pool.flush_list_batch(max_pages, lsn_limit);
        self.flush_frames(&batch)?;
        Ok(batch.len())
    }

    /// Writes every dirty page.
    pub fn flush_all(&mut self) -> Result<()> {
        loop {
            let n = self.flush_oldest(self.batch_pages, u64::MAX)?;
            if n == 0 {
                return Ok(());
            }
        }
    }

    /// Writes a checkpoint at the oldest modification of the dirty pages,
    /// or at the log's end when the pool is clean.
    pub fn checkpoint(&mut self) -> Result<()> {
        let oldest_dirty = if self.early_checkpoint {
            None
        } else {
            self.pool.oldest_dirty_lsn()
        };
        let target = oldest_dirty.unwrap_or_else(|| self.log.lsn());
        if target <= self.log.checkpoint_lsn() {
            return Ok(());
        }
        self.log.write_up_to(target, true)?;
        self.log.write_checkpoint(target)?;
        self.stats.checkpoints += 1;
        Ok(())
    }

    /// InnoDB's `log_free_check`: before a mini-transaction starts, make
    /// sure the log has room, flushing old pages and checkpointing if not.
    pub fn free_check(&mut self) -> Result<()> {
        // An operation on a compressed index logs whole compressed images
        // (each page a split writes, each page recompressed), up to
        // ZIP_IMAGES_BETWEEN_FREE_CHECKS of the largest size open, beyond
        // what the margin holds for an operation on 16 KiB pages.
        let reserve = self
            .fil
            .max_zip_size()
            .map_or(0, |z| (ZIP_IMAGES_BETWEEN_FREE_CHECKS * z) as u64);
        let capacity = self.log.capacity();
        let trigger =
            (capacity - capacity / crate::redo::CHECKPOINT_MARGIN_DIVISOR).saturating_sub(reserve);
        if !self.log.needs_checkpoint() && self.log.age() <= trigger {
            return Ok(());
        }
        // Flushed down to half the log, or (a reserve taken) to half of
        // what the trigger leaves.
        let keep = if reserve == 0 {
            capacity / 2
        } else {
            (capacity / 2).min(trigger / 2)
        };
        let limit = self.log.lsn() - keep;
        while self.flush_oldest(self.batch_pages, limit)? > 0 {}
        self.checkpoint()
    }

    /// One round of the page cleaner: flush up to `io_capacity` of the
    /// oldest pages when the pool is mostly dirty or the log is filling,
    /// then checkpoint.
    pub fn clean(&mut self, io_capacity: usize, max_dirty_pct: usize) -> Result<()> {
        let dirty_pct = self.pool.dirty_count() * 100 / self.pool.capacity();
        let log_busy = self.log.age() > self.log.capacity() / 4;
        if dirty_pct >= max_dirty_pct || log_busy {
            self.flush_oldest(io_capacity, u64::MAX)?;
        }
        self.checkpoint()
    }

    /// Whether the on-disk image of a page validates. Pages with changes
    /// not yet written are judged by their next write, not now.
    pub fn disk_image_ok(&mut self, id: PageId) -> Result<bool> {
        if let Some(f) = self.pool.lookup_fix(id) {
            let dirty = self.pool.frame(f).oldest_lsn != 0;
            self.pool.unfix(f);
            if dirty {
                return Ok(true);
            }
        }
        let mut buf = vec![0u8; self.fil.page_size(id.space).unwrap_or(PAGE_SIZE)];
        match self.fil.read_page(id, &mut buf) {
            Ok(_) => Ok(true),
            Err(e) if e.is_corruption() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Drops all cached pages of a space (its file is being deleted).
    pub fn discard_space(&mut self, space: u32) {
        for id in self.pool.pages_of_space(space) {
            self.pool.discard(id);
        }
    }
}

/// The sealed image of a compressed space's page: an index page's
/// compressed image with the frame's header (LSN, links) copied in, as
/// `buf_flush_init_for_writing` does with `page_zip_write_header`; any
/// other page's first `zip_size` bytes, which is all such a page uses.
/// With `skip_mod_log` (a canary), the image's modification log is
/// dropped.
///
/// A compressed-only page's image had its headers brought up to date when
/// its frame was evicted, and cannot have changed since.
fn physical_image(
    pool: &mut BufferPool,
    f: FrameId,
    zip_size: usize,
    id: PageId,
    skip_mod_log: bool,
) -> Result<Arc<[u8]>> {
    let compressed_only = pool.frame(f).is_compressed_only();
    let (data, zip) = pool.page_and_zip_mut(f);
    // Copied once, into the shared image the writes take.
    let mut shared: Arc<[u8]> = match zip {
        Some(mut zip) => {
            if !data.is_empty() {
                zip.page.write_header(data);
            }
            let mut shared = Arc::from(zip.page.image());
            if skip_mod_log {
                let image = Arc::get_mut(&mut shared).expect("a new Arc is unique");
                zip.page.clear_mod_log(image);
            }
            shared
        }
        None if compressed_only => {
            return Err(Error::Corrupt {
                file: format!("space {}", id.space),
                reason: format!("compressed page {id}'s block in the pool is not its own"),
            });
        }
        None if page::page_type_raw(data) == PageType::Index as u16 => {
            return Err(Error::Corrupt {
                file: format!("space {}", id.space),
                reason: format!("index page {id} of a compressed space has no compressed image"),
            });
        }
        None => Arc::from(&data[..zip_size]),
    };
    page::zip::seal(Arc::get_mut(&mut shared).expect("a new Arc is unique"));
    Ok(shared)
}
