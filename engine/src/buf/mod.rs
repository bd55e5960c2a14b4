//! The buffer pool's bookkeeping: frames, the page hash, the LRU list and
//! the flush list. Mirrors InnoDB's `buf0buf.cc`, `buf0lru.cc` and the list
//! half of `buf0flu.cc`.
//!
//! This module never does I/O; the [`pager`](crate::pager) moves pages
//! between frames and files and decides when to flush. Invariants:
//!
//! - a page is in at most one frame, found through the page hash;
//! - a fixed (pinned) frame is never evicted or reused;
//! - a frame is on the flush list exactly when it is dirty, keyed by the LSN
//!   of the first change not yet written (its oldest modification), so the
//!   head of the list bounds how far a checkpoint may advance;
//! - the pool holds at most `capacity` 16 KiB blocks of memory: the
//!   uncompressed frames, and the chunks the buddy allocator holds
//!   compressed images in ([`BufferPool::resident`]); when every page is
//!   fixed by the running mini-transaction it may borrow beyond that
//!   (counted in [`PoolStats::overcommits`]); a mini-transaction fixes a
//!   bounded number of pages, so the excess is bounded too.
//!
//! A compressed space's index page keeps its compressed image in a block
//! of the [buddy] allocator, with its 16 KiB uncompressed frame beside it
//! or alone (a compressed-only page, InnoDB's `BUF_BLOCK_ZIP_PAGE` or
//! `BUF_BLOCK_ZIP_DIRTY`): [`BufferPool::evict_uncompressed`] frees the
//! frame alone, and the pager decompresses the page again when it is next
//! fixed. The pages with both, in LRU order, are InnoDB's unzip LRU
//! (`buf_unzip_LRU_add_block` keeps that list in the LRU's order).

pub mod buddy;

use crate::io::Clock;
use crate::page::zip::{ZipFields, ZipPage};
use crate::page::PageId;
use buddy::{Addr, Buddy};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// Index of a frame in the pool.
pub type FrameId = u32;

const NIL: FrameId = FrameId::MAX;

/// The smallest pool the engine accepts.
pub const MIN_POOL_PAGES: usize = 8;

/// One page's descriptor: its images and its state.
pub struct Frame {
    /// The page held (meaningless when not in use).
    pub id: PageId,
    /// The uncompressed page image; empty for a compressed-only page (and
    /// a free descriptor). Shared with the disk's image after a read or a
    /// flush until the page changes ([`PageBuf`]).
    pub data: PageBuf,
    /// A compressed space's index page: where its compressed image is,
    /// kept in step with `data` by every mini-transaction (InnoDB's
    /// `page_zip_des_t`); what is written to disk.
    zip: Option<ZipDesc>,
    /// Number of fixes (pins) held.
    pub fix_count: u32,
    /// LSN of the oldest change not yet written to disk, 0 when clean.
    pub oldest_lsn: u64,
    /// End LSN of the newest change.
    pub newest_lsn: u64,
    in_use: bool,
    /// The access sequence number at which it last moved to the LRU head.
    last_moved: u64,
    lru_prev: FrameId,
    lru_next: FrameId,
}

/// Where a compressed image is, and what InnoDB's `page_zip_des_t` keeps
/// beside it.
struct ZipDesc {
    addr: Addr,
    class: u8,
    /// The modification log's end.
    m_end: usize,
    /// The records' layout.
    fields: ZipFields,
}

impl Frame {
    /// Whether the page has its compressed image in the pool.
    pub fn has_zip(&self) -> bool {
        self.zip.is_some()
    }

    /// Whether only the compressed image is in the pool (the uncompressed
    /// frame was evicted).
    pub fn is_compressed_only(&self) -> bool {
        self.data.is_empty() && self.zip.is_some()
    }

    fn has_both(&self) -> bool {
        !self.data.is_empty() && self.zip.is_some()
    }
}

/// A compressed image in the pool, borrowed for reading.
pub struct ZipRef<'a> {
    /// The image.
    pub page: ZipPage<&'a [u8]>,
    /// The records' layout.
    pub fields: &'a ZipFields,
}

/// A compressed image in the pool, borrowed for a change; where its
/// modification log ends is kept when it is dropped.
pub struct ZipMut<'a> {
    /// The image.
    pub page: ZipPage<&'a mut [u8]>,
    /// The records' layout.
    pub fields: &'a ZipFields,
    m_end: &'a mut usize,
}

impl Drop for ZipMut<'_> {
    fn drop(&mut self) {
        *self.m_end = self.page.m_end();
    }
}

/// INNODB_CMPMEM's row for one block size.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CmpMemRow {
    /// The block size in bytes.
    pub page_size: usize,
    /// Blocks in use.
    pub pages_used: u64,
    /// Blocks on the free list.
    pub pages_free: u64,
    /// Relocations since the last reset.
    pub relocation_ops: u64,
    /// Engine-clock microseconds of relocation since the last reset.
    pub relocation_us: u64,
}

/// Counters.
#[derive(Debug, Default, Clone, Copy)]
pub struct PoolStats {
    /// Page lookups that found the page in the pool.
    pub hits: u64,
    /// Page lookups that had to read.
    pub misses: u64,
    /// Frames evicted.
    pub evictions: u64,
    /// Frames borrowed beyond capacity because all were fixed.
    pub overcommits: u64,
    /// Uncompressed frames evicted alone, their compressed pages kept (the
    /// unzip LRU).
    pub unzip_evictions: u64,
    /// Compressed-only pages decompressed again when they were fixed.
    pub unzips: u64,
}

/// Frames, page hash, LRU and flush list.
pub struct BufferPool {
    frames: Vec<Frame>,
    capacity: usize,
    map: FxHashMap<PageId, FrameId>,
    free: Vec<FrameId>,
    lru_head: FrameId,
    lru_tail: FrameId,
    flush_list: BTreeSet<(u64, FrameId)>,
    /// Page accesses so far (the LRU's clock).
    access_seq: u64,
    /// The compressed images.
    buddy: Buddy,
    /// Descriptors holding an uncompressed frame.
    n_data: usize,
    /// Pages holding both images (the unzip LRU's length).
    n_unzip: usize,
    /// Times relocations (none: they count as taking no time).
    clock: Option<Box<dyn Clock>>,
    /// The `buddy-free-in-use` canary: an uncompressed frame evicted alone
    /// frees its page's compressed block too, which the page still uses.
    pub free_zip_in_use: bool,
    /// Counters.
    pub stats: PoolStats,
}

impl BufferPool {
    /// A pool of `capacity` frames (allocated lazily).
    pub fn new(capacity: usize) -> Self {
        assert!(capacity >= MIN_POOL_PAGES);
        BufferPool {
            frames: Vec::new(),
            capacity,
            map: FxHashMap::default(),
            free: Vec::new(),
            lru_head: NIL,
            lru_tail: NIL,
            flush_list: BTreeSet::new(),
            access_seq: 0,
            buddy: Buddy::default(),
            n_data: 0,
            n_unzip: 0,
            clock: None,
            free_zip_in_use: false,
            stats: PoolStats::default(),
        }
    }

    /// Times relocations in the buddy allocator with `clock`.
    pub fn set_clock(&mut self, clock: Box<dyn Clock>) {
        self.clock = Some(clock);
    }

    /// 16 KiB blocks of memory in use: uncompressed frames and the buddy
    /// allocator's chunks. At most the capacity, but for borrowed frames.
    pub fn resident(&self) -> usize {
        self.n_data + self.buddy.chunks()
    }

    /// Configured capacity in frames.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Pages cached (with either image or both).
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no page is cached.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of dirty frames.
    pub fn dirty_count(&self) -> usize {
        self.flush_list.len()
    }

    /// The frame.
    #[inline]
    pub fn frame(&self, f: FrameId) -> &Frame {
        &self.frames[f as usize]
    }

    /// The frame, mutable.
    #[inline]
    pub fn frame_mut(&mut self, f: FrameId) -> &mut Frame {
        &mut self.frames[f as usize]
    }

    /// Finds a cached page, fixes it and makes it most recently used.
    #[inline]
    pub fn lookup_fix(&mut self, id: PageId) -> Option<FrameId> {
        let f = *self.map.get(&id)?;
        self.stats.hits += 1;
        self.access_seq += 1;
        let frame = &mut self.frames[f as usize];
        frame.fix_count += 1;
        // InnoDB's buf_page_peek_if_too_old: a page touched recently stays
        // where it is; only one that has aged a quarter of the pool moves to
        // the head. Hot pages then cost no list surgery on every access.
        if self.access_seq - frame.last_moved > (self.capacity as u64 / 4).max(1) {
            frame.last_moved = self.access_seq;
            self.lru_unlink(f);
            self.lru_push_head(f);
        }
        Some(f)
    }

    /// Whether a page is cached.
    pub fn contains(&self, id: PageId) -> bool {
        self.map.contains_key(&id)
    }

    /// Releases one fix.
    #[inline]
    pub fn unfix(&mut self, f: FrameId) {
        let frame = &mut self.frames[f as usize];
        assert!(frame.fix_count > 0, "unfix of an unfixed frame");
        frame.fix_count -= 1;
    }

    /// Takes a free frame without eviction, if one is available (a free
    /// frame, or room to allocate one under the capacity). `force` borrows a
    /// frame beyond capacity.
    pub fn take_free(&mut self, force: bool) -> Option<FrameId> {
        if self.resident() >= self.capacity {
            if !force {
                return None;
            }
            self.stats.overcommits += 1;
        }
        let f = self.free.pop().unwrap_or_else(|| {
            self.frames.push(Frame {
                id: PageId::new(u32::MAX, u32::MAX),
                data: PageBuf::default(),
                zip: None,
                fix_count: 0,
                oldest_lsn: 0,
                newest_lsn: 0,
                in_use: false,
                last_moved: 0,
                lru_prev: NIL,
                lru_next: NIL,
            });
            (self.frames.len() - 1) as FrameId
        });
        debug_assert!(self.frames[f as usize].data.is_empty());
        self.frames[f as usize].data = PageBuf::spare();
        self.n_data += 1;
        Some(f)
    }

    /// Gives a compressed-only page, fixed, an uncompressed frame again
    /// (its bytes are stale: the caller decompresses into it). Borrowed
    /// beyond capacity if the caller could not make room.
    pub fn attach_data(&mut self, f: FrameId) {
        if self.resident() >= self.capacity {
            self.stats.overcommits += 1;
        }
        let frame = &mut self.frames[f as usize];
        assert!(frame.in_use && frame.data.is_empty() && frame.fix_count > 0);
        frame.data = PageBuf::spare();
        self.n_data += 1;
        self.n_unzip += usize::from(frame.zip.is_some());
    }

    /// Takes a compressed-only page's stale frame back after it could
    /// not be decompressed into.
    pub fn detach_data(&mut self, f: FrameId) {
        let before = self.frames[f as usize].has_both();
        self.release_data(f);
        self.n_unzip -= usize::from(before);
    }

    /// Evicts the uncompressed frame of an unfixed page that has its
    /// compressed image too, clean or dirty: the compressed image (its
    /// headers brought up to date) stays, and is what a flush writes
    /// (`buf_LRU_free_block` with `zip == FALSE`).
    pub fn evict_uncompressed(&mut self, f: FrameId) {
        {
            let frame = &self.frames[f as usize];
            assert!(frame.in_use && frame.fix_count == 0 && frame.has_both());
        }
        if let (data, Some(mut zip)) = self.page_and_zip_mut(f) {
            zip.page.write_header(data);
        }
        self.release_data(f);
        self.n_unzip -= 1;
        self.stats.unzip_evictions += 1;
        if self.free_zip_in_use {
            let frame = &self.frames[f as usize];
            let (addr, class) = frame
                .zip
                .as_ref()
                .map(|z| (z.addr, z.class))
                .expect("a zip");
            self.free_block(addr, class);
        }
    }

    /// The coldest unfixed page holding both images: the unzip LRU's tail.
    pub fn unzip_victim(&self) -> Option<FrameId> {
        let mut f = self.lru_tail;
        while f != NIL {
            let frame = &self.frames[f as usize];
            if frame.fix_count == 0 && frame.has_both() {
                return Some(f);
            }
            f = frame.lru_prev;
        }
        None
    }

    /// `buf_LRU_evict_from_unzip_LRU`: whether to make room by evicting an
    /// uncompressed frame alone rather than a whole page. Not while the
    /// unzip LRU is at most a tenth of the LRU (hot decompressed pages
    /// stay); otherwise when the load looks I/O-bound: before any eviction,
    /// or while decompressions of compressed-only pages are at most 50
    /// times the pages read. InnoDB weighs the last intervals of its
    /// monitor thread; here the counts since the pool opened are used,
    /// which are deterministic under the simulator.
    pub fn evict_from_unzip_lru(&self) -> bool {
        if self.n_unzip == 0 || self.n_unzip <= self.map.len() / 10 {
            return false;
        }
        if self.stats.evictions + self.stats.unzip_evictions == 0 {
            return true;
        }
        self.stats.unzips <= self.stats.misses * 50
    }

    /// The compressed image of a page, if it has one.
    pub fn zip(&self, f: FrameId) -> Option<ZipRef<'_>> {
        let z = self.frames[f as usize].zip.as_ref()?;
        let class = usize::from(z.class);
        if !self.buddy.is_allocated(z.addr, class) {
            return None;
        }
        Some(ZipRef {
            page: ZipPage::from_parts(self.buddy.bytes(z.addr, buddy::size_of(class)), z.m_end),
            fields: &z.fields,
        })
    }

    /// A page's uncompressed frame and its compressed image, if it has
    /// one, both mutable.
    pub fn page_and_zip_mut(&mut self, f: FrameId) -> (&mut [u8], Option<ZipMut<'_>>) {
        let frame = &mut self.frames[f as usize];
        let data = &mut frame.data[..];
        let zip = match &mut frame.zip {
            Some(z) if self.buddy.is_allocated(z.addr, usize::from(z.class)) => {
                let bytes = self
                    .buddy
                    .bytes_mut(z.addr, buddy::size_of(usize::from(z.class)));
                Some(ZipMut {
                    page: ZipPage::from_parts(bytes, z.m_end),
                    fields: &z.fields,
                    m_end: &mut z.m_end,
                })
            }
            _ => None,
        };
        (data, zip)
    }

    /// Gives a page the compressed image `page` with layout `fields`: in
    /// its block when it has one of that size, else in a new block
    /// (borrowed beyond capacity when the allocator needs a chunk and the
    /// pool is full: the pager makes room before the next page comes in).
    pub fn set_zip<D: AsRef<[u8]>>(&mut self, f: FrameId, page: &ZipPage<D>, fields: &ZipFields) {
        let class = buddy::class_of(page.size());
        let frame = &mut self.frames[f as usize];
        if let Some(z) = frame.zip.as_mut().filter(|z| usize::from(z.class) == class) {
            if self.buddy.is_allocated(z.addr, class) {
                let bytes = self.buddy.bytes_mut(z.addr, page.size());
                ZipPage::from_parts(bytes, z.m_end).assign(page);
                z.m_end = page.m_end();
                if z.fields != *fields {
                    z.fields = fields.clone();
                }
                return;
            }
        }
        self.detach_zip(f);
        if !self.buddy.has_free(class) && self.resident() >= self.capacity {
            self.stats.overcommits += 1;
        }
        let addr = self.buddy.alloc(class, spare_frames::take);
        ZipPage::from_parts(self.buddy.bytes_mut(addr, page.size()), 0).assign(page);
        let frame = &mut self.frames[f as usize];
        frame.zip = Some(ZipDesc {
            addr,
            class: class as u8,
            m_end: page.m_end(),
            fields: fields.clone(),
        });
        self.n_unzip += usize::from(frame.has_both());
    }

    /// Frees a page's compressed image, if it has one.
    pub fn detach_zip(&mut self, f: FrameId) {
        let frame = &mut self.frames[f as usize];
        let before = frame.has_both();
        if let Some(z) = frame.zip.take() {
            self.n_unzip -= usize::from(before);
            self.free_block(z.addr, z.class);
        }
    }

    fn release_data(&mut self, f: FrameId) {
        let frame = &mut self.frames[f as usize];
        if !frame.data.is_empty() {
            std::mem::take(&mut frame.data).give_back();
            self.n_data -= 1;
        }
    }

    /// `buf_buddy_free`: frees a block, relocating in-use buddies of
    /// unfixed pages so that blocks merge; a chunk all free goes back.
    fn free_block(&mut self, addr: Addr, class: u8) {
        let (frames, map, clock) = (&mut self.frames, &self.map, &self.clock);
        let mut relocate = |b: &mut Buddy, src: Addr, dst: Addr, class: usize| -> bool {
            let start = clock.as_ref().map_or(0, |c| c.now_us());
            // Like buf_buddy_relocate: the block's page is found by the
            // space and page number in its header.
            let header = b.bytes(src, crate::page::FIL_PAGE_DATA);
            if header.len() < crate::page::FIL_PAGE_DATA {
                return false;
            }
            let id = PageId::new(
                crate::page::get_u32(header, crate::page::FIL_PAGE_SPACE_ID),
                crate::page::get_u32(header, crate::page::FIL_PAGE_OFFSET),
            );
            let Some(&owner) = map.get(&id) else {
                return false;
            };
            let frame = &mut frames[owner as usize];
            let movable = frame.fix_count == 0;
            match frame.zip.as_mut() {
                Some(z) if movable && z.addr == src && usize::from(z.class) == class => {
                    z.addr = dst;
                    let us = clock
                        .as_ref()
                        .map_or(0, |c| c.now_us().saturating_sub(start));
                    b.relocate_block(src, dst, class, us);
                    true
                }
                _ => false,
            }
        };
        if let Some(mem) = self.buddy.free(addr, usize::from(class), &mut relocate) {
            spare_frames::give(mem);
        }
    }

    /// INNODB_CMPMEM: per block size, 1 KiB to 16 KiB.
    pub fn cmpmem(&self) -> [CmpMemRow; buddy::CLASSES] {
        std::array::from_fn(|class| {
            let s = self.buddy.stat(class);
            CmpMemRow {
                page_size: buddy::size_of(class),
                pages_used: s.used,
                pages_free: self.buddy.n_free(class) as u64,
                relocation_ops: s.relocated,
                relocation_us: s.relocated_us,
            }
        })
    }

    /// INNODB_CMPMEM_RESET: [`BufferPool::cmpmem`], then the relocation
    /// counters start again from zero.
    pub fn cmpmem_reset(&mut self) -> [CmpMemRow; buddy::CLASSES] {
        let rows = self.cmpmem();
        self.buddy.reset();
        rows
    }

    /// Installs page `id` in free frame `f`, fixed once, most recently used.
    /// The caller fills the frame's data.
    pub fn install(&mut self, f: FrameId, id: PageId) {
        let frame = &mut self.frames[f as usize];
        assert!(!frame.in_use);
        frame.id = id;
        frame.in_use = true;
        frame.fix_count = 1;
        frame.oldest_lsn = 0;
        frame.newest_lsn = 0;
        frame.last_moved = self.access_seq;
        let prev = self.map.insert(id, f);
        assert!(prev.is_none(), "page {id} installed twice");
        self.lru_push_head(f);
        self.stats.misses += 1;
    }

    /// Makes frame `f`, taken with [`take_free`](Self::take_free), hold a
    /// page image shared with the storage; the buffer it was given goes
    /// back to this thread's spares, for the next frame that needs one of
    /// its own (rather than being freed, and a new one zeroed then).
    pub fn share_image(&mut self, f: FrameId, image: std::sync::Arc<[u8]>) {
        let frame = &mut self.frames[f as usize];
        std::mem::replace(&mut frame.data, PageBuf::shared(image)).give_back();
    }

    /// Returns a frame taken with [`take_free`](Self::take_free) but not
    /// installed (a read failed).
    pub fn give_back(&mut self, f: FrameId) {
        assert!(!self.frames[f as usize].in_use);
        self.detach_zip(f);
        self.release_data(f);
        self.free.push(f);
    }

    /// Unfixed frames from the cold end of the LRU list, at most `n`.
    pub fn lru_victims(&self, n: usize) -> Vec<FrameId> {
        let mut out = Vec::new();
        let mut f = self.lru_tail;
        while f != NIL && out.len() < n {
            if self.frames[f as usize].fix_count == 0 {
                out.push(f);
            }
            f = self.frames[f as usize].lru_prev;
        }
        out
    }

    /// Evicts a clean, unfixed frame, making it free.
    pub fn evict(&mut self, f: FrameId) {
        let frame = &self.frames[f as usize];
        assert!(frame.in_use && frame.fix_count == 0 && frame.oldest_lsn == 0);
        let id = frame.id;
        self.map.remove(&id);
        self.lru_unlink(f);
        self.frames[f as usize].in_use = false;
        self.detach_zip(f);
        self.release_data(f);
        self.free.push(f);
        self.stats.evictions += 1;
    }

    /// Drops a page from the pool whatever its state (used when a
    /// tablespace is deleted). The frame must be unfixed.
    pub fn discard(&mut self, id: PageId) {
        if let Some(&f) = self.map.get(&id) {
            let frame = &mut self.frames[f as usize];
            assert_eq!(frame.fix_count, 0);
            if frame.oldest_lsn != 0 {
                self.flush_list.remove(&(frame.oldest_lsn, f));
                frame.oldest_lsn = 0;
            }
            self.evict(f);
        }
    }

    /// Pages of a space that are cached, for discarding.
    pub fn pages_of_space(&self, space: u32) -> Vec<PageId> {
        let mut v: Vec<PageId> = self
            .map
            .keys()
            .filter(|p| p.space == space)
            .copied()
            .collect();
        v.sort();
        v
    }

    /// Records a change by a mini-transaction spanning `[start, end)`.
    pub fn mark_dirty(&mut self, f: FrameId, start_lsn: u64, end_lsn: u64) {
        let frame = &mut self.frames[f as usize];
        if frame.oldest_lsn == 0 {
            frame.oldest_lsn = start_lsn;
            self.flush_list.insert((start_lsn, f));
        }
        frame.newest_lsn = end_lsn;
    }

    /// Marks a frame clean after its page was written.
    pub fn mark_clean(&mut self, f: FrameId) {
        let frame = &mut self.frames[f as usize];
        if frame.oldest_lsn != 0 {
            self.flush_list.remove(&(frame.oldest_lsn, f));
            frame.oldest_lsn = 0;
        }
    }

    /// The oldest modification LSN among dirty frames.
    pub fn oldest_dirty_lsn(&self) -> Option<u64> {
        self.flush_list.iter().next().map(|&(lsn, _)| lsn)
    }

    /// Dirty, unfixed frames in flush-list order whose oldest modification is
    /// below `lsn_limit`, at most `n`.
    pub fn flush_list_batch(&self, n: usize, lsn_limit: u64) -> Vec<FrameId> {
        self.flush_list
            .iter()
            .take_while(|&&(lsn, _)| lsn < lsn_limit)
            .filter(|&&(_, f)| self.frames[f as usize].fix_count == 0)
            .map(|&(_, f)| f)
            .take(n)
            .collect()
    }

    fn lru_unlink(&mut self, f: FrameId) {
        let (prev, next) = {
            let fr = &self.frames[f as usize];
            (fr.lru_prev, fr.lru_next)
        };
        if prev != NIL {
            self.frames[prev as usize].lru_next = next;
        } else {
            self.lru_head = next;
        }
        if next != NIL {
            self.frames[next as usize].lru_prev = prev;
        } else {
            self.lru_tail = prev;
        }
        let fr = &mut self.frames[f as usize];
        fr.lru_prev = NIL;
        fr.lru_next = NIL;
    }

    fn lru_push_head(&mut self, f: FrameId) {
        let old = self.lru_head;
        {
            let fr = &mut self.frames[f as usize];
            fr.lru_prev = NIL;
            fr.lru_next = old;
        }
        if old != NIL {
            self.frames[old as usize].lru_prev = f;
        } else {
            self.lru_tail = f;
        }
        self.lru_head = f;
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        for frame in self.frames.drain(..) {
            if !frame.data.is_empty() {
                frame.data.give_back();
            }
        }
        for chunk in self.buddy.take_chunks() {
            spare_frames::give(chunk);
        }
    }
}

/// A frame's uncompressed page image: its own buffer, or one it shares
/// with the storage (the simulated disk keeps each written page image as
/// one reference-counted buffer, [`crate::io::File::read_shared`]). A
/// read shares the disk's image instead of copying it, a flush hands the
/// frame's image to the writes instead of copying it, and the first
/// change after either copies the image into a buffer of the frame's own
/// (copy on write): a page read and never changed, the common case of
/// recovery's checks and scans, is never copied. Reading is a deref;
/// every mutable access makes the buffer the frame's own first.
#[derive(Default)]
pub struct PageBuf(std::sync::Arc<[u8]>);

impl PageBuf {
    /// A buffer of the frame's own, from this thread's spares (its bytes
    /// are stale).
    fn spare() -> PageBuf {
        PageBuf(spare_pages::take())
    }

    /// A page image shared with the storage.
    pub fn shared(image: std::sync::Arc<[u8]>) -> PageBuf {
        PageBuf(image)
    }

    /// The image, shared: a flush's writes take it without a copy.
    pub fn share(&self) -> std::sync::Arc<[u8]> {
        std::sync::Arc::clone(&self.0)
    }

    fn give_back(self) {
        spare_pages::give(self.0);
    }
}

impl std::ops::Deref for PageBuf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::DerefMut for PageBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        if self.0.is_empty() {
            // No image (a compressed-only page): nothing to own.
            return &mut [];
        }
        // Counts first (plain loads; no weak reference is ever made), so
        // that a buffer of the frame's own costs one atomic exchange, in
        // get_mut below, not two.
        if std::sync::Arc::strong_count(&self.0) != 1 {
            self.0 = spare_pages::copy_of(&self.0);
        }
        std::sync::Arc::get_mut(&mut self.0).expect("made unshared above")
    }
}

/// The frames' page buffers of dropped pools (and the unshared ones
/// evicted), kept for the next frame or pool of this thread, as
/// [`spare_frames`] keeps the compressed blocks' chunks.
mod spare_pages {
    use crate::page::PAGE_SIZE;
    use crate::spare::{self, Spares};
    use std::sync::Arc;

    thread_local! {
        /// At most 1024 buffers are kept (16 MiB).
        static SPARE: Spares<Arc<[u8]>> = const { Spares::new(1024) };
    }

    /// A page buffer no one else holds: a spare one, or a new zeroed one
    /// (one allocation and one copy, no zeroed vector built first).
    pub(super) fn take() -> Arc<[u8]> {
        static ZERO: [u8; PAGE_SIZE] = [0; PAGE_SIZE];
        spare::take(&SPARE).unwrap_or_else(|| Arc::from(&ZERO[..]))
    }

    /// A buffer no one else holds with `page` copied into it: a spare one,
    /// or a new one (one allocation and one copy, nothing zeroed first).
    pub(super) fn copy_of(page: &[u8]) -> Arc<[u8]> {
        match spare::take(&SPARE) {
            Some(mut own) => {
                Arc::get_mut(&mut own)
                    .expect("a spare buffer is unshared")
                    .copy_from_slice(page);
                own
            }
            None => Arc::from(page),
        }
    }

    /// How many buffers this thread keeps.
    #[cfg(test)]
    pub(super) fn held() -> usize {
        spare::held(&SPARE)
    }

    /// Keeps a buffer no one else holds for a later frame (or frees it
    /// when enough are kept); one the storage still shares is let go.
    pub(super) fn give(mut data: Arc<[u8]>) {
        if data.len() == PAGE_SIZE && Arc::get_mut(&mut data).is_some() {
            spare::give(&SPARE, data);
        }
    }
}

/// The compressed blocks' 16 KiB chunks of dropped pools, kept for the
/// next pool of this thread (the frames' buffers are [`spare_pages`]).
///
/// A pool allocates its memory as pages first come in, and the simulator
/// opens a new engine, with a new pool, after every crash: up to 16 MiB of
/// fresh memory per recovery, which the allocator had to get and zero. A
/// buffer's contents are never read before a page is read, decompressed
/// or formatted into it, so a spare buffer serves as well as a new one.
mod spare_frames {
    use crate::page::PAGE_SIZE;
    use crate::spare::{self, Spares};

    thread_local! {
        /// At most 1024 buffers are kept (16 MiB).
        static SPARE: Spares<Box<[u8]>> = const { Spares::new(1024) };
    }

    /// A page buffer: a spare one, or a new zeroed one.
    pub(super) fn take() -> Box<[u8]> {
        spare::take(&SPARE).unwrap_or_else(|| vec![0u8; PAGE_SIZE].into_boxed_slice())
    }

    /// Keeps a buffer for a later pool (or frees it when enough are kept).
    pub(super) fn give(data: Box<[u8]>) {
        debug_assert_eq!(data.len(), PAGE_SIZE);
        spare::give(&SPARE, data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame's image shared with the storage is read in place, copied at
    /// its first change (the storage's copy untouched), and changed in
    /// place from then on.
    #[test]
    fn a_shared_page_is_copied_at_its_first_change_only() {
        use crate::page::PAGE_SIZE;
        use std::sync::Arc;
        let image: Arc<[u8]> = Arc::from(vec![7u8; PAGE_SIZE]);
        let mut b = PageBuf::shared(Arc::clone(&image));
        assert_eq!(b[100], 7);
        assert!(Arc::ptr_eq(&b.share(), &image), "read without a copy");
        b[0] = 1;
        assert_eq!((image[0], b[0], b[1]), (7, 1, 7), "copied, then changed");
        assert!(!Arc::ptr_eq(&b.share(), &image));
        let own = b.as_ptr();
        b[1] = 2;
        assert_eq!(b.as_ptr(), own, "its own buffer is changed in place");

        // A compressed-only page has no image, and nothing to copy.
        let mut e = PageBuf::default();
        let bytes: &mut [u8] = &mut e;
        assert!(bytes.is_empty());
    }

    /// A frame that takes the storage's image gives the buffer it was
    /// handed back to the spares: the next frame that needs one of its own
    /// takes that buffer, not a new one.
    #[test]
    fn a_frame_that_shares_the_disk_image_gives_its_buffer_back() {
        use crate::page::PAGE_SIZE;
        use std::sync::Arc;
        let mut pool = BufferPool::new(MIN_POOL_PAGES);
        let a = pool.take_free(false).unwrap();
        let spares = spare_pages::held();
        let image: Arc<[u8]> = Arc::from(vec![7u8; PAGE_SIZE]);
        pool.share_image(a, Arc::clone(&image));
        assert!(Arc::ptr_eq(&pool.frame(a).data.share(), &image));
        assert_eq!(spare_pages::held(), spares + 1, "the buffer kept");
        pool.take_free(false).unwrap();
        assert_eq!(spare_pages::held(), spares, "and handed out again");
    }

    #[test]
    fn lru_order_and_flush_list() {
        let mut pool = BufferPool::new(8);
        let mut ids = Vec::new();
        for i in 0..8 {
            let f = pool.take_free(false).unwrap();
            pool.install(f, PageId::new(0, i));
            pool.unfix(f);
            ids.push(f);
        }
        assert!(pool.take_free(false).is_none());
        // Touch page 0 until it has aged past a quarter of the pool (two
        // accesses here): then it moves to the most recently used end.
        for _ in 0..3 {
            let f0 = pool.lookup_fix(PageId::new(0, 0)).unwrap();
            pool.unfix(f0);
        }
        let victims = pool.lru_victims(2);
        assert_eq!(pool.frame(victims[0]).id, PageId::new(0, 1));
        pool.mark_dirty(victims[0], 100, 120);
        pool.mark_dirty(victims[1], 90, 130);
        assert_eq!(pool.oldest_dirty_lsn(), Some(90));
        assert_eq!(pool.flush_list_batch(10, 95), vec![victims[1]]);
        pool.mark_clean(victims[1]);
        pool.evict(victims[1]);
        assert!(!pool.contains(PageId::new(0, 2)));
        assert_eq!(pool.take_free(false), Some(victims[1]));
    }
}
