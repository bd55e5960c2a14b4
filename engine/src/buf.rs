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
//! - the pool holds at most `capacity` frames, except that when every frame
//!   is fixed by the running mini-transaction it may borrow extra frames
//!   (counted in [`PoolStats::overcommits`]); a mini-transaction fixes a
//!   bounded number of pages, so the excess is bounded too.

use crate::page::PageId;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// Index of a frame in the pool.
pub type FrameId = u32;

const NIL: FrameId = FrameId::MAX;

/// The smallest pool the engine accepts.
pub const MIN_POOL_PAGES: usize = 8;

/// One frame: a page image and its state.
pub struct Frame {
    /// The page held (meaningless when not in use).
    pub id: PageId,
    /// The page image.
    pub data: Box<[u8]>,
    /// A compressed space's index page: its compressed image, kept in step
    /// with `data` by every mini-transaction (InnoDB's `page_zip_des_t`
    /// beside the uncompressed frame); what is written to disk.
    pub zip: Option<Box<crate::page::zip::ZipFrame>>,
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
            stats: PoolStats::default(),
        }
    }

    /// Configured capacity in frames.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Frames holding pages.
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
        if let Some(f) = self.free.pop() {
            return Some(f);
        }
        if self.frames.len() < self.capacity || force {
            if self.frames.len() >= self.capacity {
                self.stats.overcommits += 1;
            }
            self.frames.push(Frame {
                id: PageId::new(u32::MAX, u32::MAX),
                data: spare_frames::take(),
                zip: None,
                fix_count: 0,
                oldest_lsn: 0,
                newest_lsn: 0,
                in_use: false,
                last_moved: 0,
                lru_prev: NIL,
                lru_next: NIL,
            });
            return Some((self.frames.len() - 1) as FrameId);
        }
        None
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

    /// Returns a frame taken with [`take_free`](Self::take_free) but not
    /// installed (a read failed).
    pub fn give_back(&mut self, f: FrameId) {
        assert!(!self.frames[f as usize].in_use);
        self.frames[f as usize].zip = None;
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
        self.frames[f as usize].zip = None;
        self.free.push(f);
        self.stats.evictions += 1;
        // Give back frames borrowed beyond capacity.
        if self.frames.len() > self.capacity && self.free.len() > 1 {
            self.shrink_tail();
        }
    }

    fn shrink_tail(&mut self) {
        while self.frames.len() > self.capacity {
            let last = (self.frames.len() - 1) as FrameId;
            if self.frames[last as usize].in_use {
                break;
            }
            self.free.retain(|&x| x != last);
            if let Some(frame) = self.frames.pop() {
                spare_frames::give(frame.data);
            }
        }
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
            spare_frames::give(frame.data);
        }
    }
}

/// Page buffers of dropped pools, kept for the next pool of this thread.
///
/// A pool allocates its frames as pages first come in, and the simulator
/// opens a new engine, with a new pool, after every crash: up to 16 MiB of
/// fresh memory per recovery, which the allocator had to get and zero. A
/// frame's contents are never read before a page is read or formatted
/// into it (an evicted frame is reused the same way), so a spare buffer
/// serves as well as a new one.
mod spare_frames {
    use crate::page::PAGE_SIZE;
    use std::cell::RefCell;

    /// At most this many buffers are kept (16 MiB).
    const MAX_SPARE: usize = 1024;

    thread_local! {
        static SPARE: RefCell<Vec<Box<[u8]>>> = const { RefCell::new(Vec::new()) };
    }

    /// A page buffer: a spare one, or a new zeroed one.
    pub(super) fn take() -> Box<[u8]> {
        SPARE
            .with(|s| s.borrow_mut().pop())
            .unwrap_or_else(|| vec![0u8; PAGE_SIZE].into_boxed_slice())
    }

    /// Keeps a buffer for a later pool (or frees it when enough are kept).
    pub(super) fn give(data: Box<[u8]>) {
        debug_assert_eq!(data.len(), PAGE_SIZE);
        // During thread teardown the list may be gone: then just free it.
        let _ = SPARE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < MAX_SPARE {
                s.push(data);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
