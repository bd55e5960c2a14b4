//! The buddy allocator that holds compressed page images in the buffer
//! pool. Mirrors InnoDB's `buf0buddy.cc`: `buf_buddy_alloc_low`,
//! `buf_buddy_alloc_from`, `buf_buddy_free_low` and `buf_buddy_relocate`.
//!
//! Memory comes in chunks of one 16 KiB pool frame each; a chunk is split
//! into halves down to the block size asked for (1, 2, 4, 8 or 16 KiB),
//! the unused halves going to the free lists. A freed block merges with its
//! buddy (the other half of the block it was split from) when the buddy is
//! free; when the buddy is in use and another block of the same size is
//! free, the buddy's page is moved there (a relocation) so that the merge
//! can go on. A chunk whose blocks are all free again goes back to the
//! pool. Addresses are `chunk * 16384 + offset`, so a block's buddy is its
//! address with the size's bit flipped, as in InnoDB.
//!
//! Invariants: a block is either allocated (in `allocated`, at its size
//! class) or on the free list of its class, never both; blocks never
//! overlap; every live chunk has at least one allocated block or a free
//! block smaller than the whole chunk.
//!
//! Unlike InnoDB 1.0, the allocator holds only compressed images (InnoDB
//! also carved the descriptors of compressed-only pages from it).

use crate::page::PAGE_SIZE;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// A block's address: chunk number times 16 KiB plus its offset.
pub type Addr = u32;

/// Size classes: 1, 2, 4, 8 and 16 KiB.
pub const CLASSES: usize = 5;

/// The smallest block.
const LOW: usize = 1024;

/// A chunk: one pool frame.
const CHUNK: usize = PAGE_SIZE;

/// The size class of a block of `size` bytes (a compressed page size).
pub fn class_of(size: usize) -> usize {
    debug_assert!(crate::page::zip::is_zip_size(size), "block of {size} bytes");
    (size.trailing_zeros() as usize)
        .saturating_sub(10)
        .min(CLASSES - 1)
}

/// The bytes of a block of class `class`.
pub fn size_of(class: usize) -> usize {
    LOW << class
}

/// INNODB_CMPMEM's counters for one block size (`buf_buddy_stat_t`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BuddyStat {
    /// Blocks allocated now.
    pub used: u64,
    /// Blocks moved so that a freed block could merge with its buddy.
    pub relocated: u64,
    /// Engine-clock microseconds spent relocating.
    pub relocated_us: u64,
}

/// The allocator.
#[derive(Default)]
pub struct Buddy {
    chunks: Vec<Option<Box<[u8]>>>,
    free_chunks: Vec<u32>,
    live_chunks: usize,
    free: [BTreeSet<Addr>; CLASSES],
    allocated: FxHashMap<Addr, u8>,
    stat: [BuddyStat; CLASSES],
    /// `relocated` and `relocated_us` at the last INNODB_CMPMEM_RESET.
    reset_at: [(u64, u64); CLASSES],
    /// Frees of a block that was not allocated at that size (a bug in the
    /// caller: a double free, or a freed block's stale address).
    pub bad_frees: u64,
}

impl Buddy {
    /// Chunks (pool frames) the allocator holds.
    pub fn chunks(&self) -> usize {
        self.live_chunks
    }

    /// Whether a block of class `class` can be had without a new chunk.
    pub fn has_free(&self, class: usize) -> bool {
        self.free[class..].iter().any(|l| !l.is_empty())
    }

    /// Whether `addr` is an allocated block of class `class`.
    pub fn is_allocated(&self, addr: Addr, class: usize) -> bool {
        self.allocated.get(&addr) == Some(&(class as u8))
    }

    /// A block of class `class`, from the free lists (splitting a larger
    /// free block) or from a new chunk that `new_chunk` gives
    /// (`buf_buddy_alloc_low`).
    pub fn alloc(&mut self, class: usize, new_chunk: impl FnOnce() -> Box<[u8]>) -> Addr {
        let found = (class..CLASSES).find_map(|j| self.free[j].pop_first().map(|a| (a, j)));
        let (addr, from) = found.unwrap_or_else(|| {
            let mem = new_chunk();
            debug_assert_eq!(mem.len(), CHUNK);
            let n = match self.free_chunks.pop() {
                Some(n) => {
                    self.chunks[n as usize] = Some(mem);
                    n
                }
                None => {
                    self.chunks.push(Some(mem));
                    (self.chunks.len() - 1) as u32
                }
            };
            self.live_chunks += 1;
            (n * CHUNK as u32, CLASSES - 1)
        });
        // buf_buddy_alloc_from: the upper halves go to the free lists.
        let mut j = from;
        while j > class {
            j -= 1;
            self.free[j].insert(addr + size_of(j) as u32);
        }
        self.allocated.insert(addr, class as u8);
        self.stat[class].used += 1;
        addr
    }

    /// Frees a block of class `class` (`buf_buddy_free_low`), merging it
    /// with its buddy while the buddy is free or can be moved:
    /// `relocate(self, src, dst, class)` moves the page in block `src` to
    /// the free block `dst` and says whether it could. Returns the chunk's
    /// memory when the whole chunk became free.
    pub fn free(
        &mut self,
        addr: Addr,
        class: usize,
        relocate: &mut dyn FnMut(&mut Buddy, Addr, Addr, usize) -> bool,
    ) -> Option<Box<[u8]>> {
        if self.allocated.get(&addr) != Some(&(class as u8)) {
            self.bad_frees += 1;
            return None;
        }
        self.allocated.remove(&addr);
        self.stat[class].used -= 1;
        let (mut addr, mut class) = (addr, class);
        loop {
            if class == CLASSES - 1 {
                let n = addr as usize / CHUNK;
                self.live_chunks -= 1;
                self.free_chunks.push(n as u32);
                return self.chunks[n].take();
            }
            let buddy = addr ^ size_of(class) as u32;
            if self.free[class].remove(&buddy) {
                addr = addr.min(buddy);
                class += 1;
                continue;
            }
            // The buddy is in use: move it into a free block of its size,
            // if there is one, and merge after all.
            if let Some(dst) = self.free[class].pop_first() {
                if relocate(self, buddy, dst, class) {
                    addr = addr.min(buddy);
                    class += 1;
                    continue;
                }
                self.free[class].insert(dst);
            }
            self.free[class].insert(addr);
            return None;
        }
    }

    /// Moves the allocated block `src` of class `class` to the free block
    /// `dst` (taken off its free list by [`Buddy::free`]): copies the bytes
    /// and the allocation, and counts `us` microseconds of relocation.
    pub fn relocate_block(&mut self, src: Addr, dst: Addr, class: usize, us: u64) {
        let size = size_of(class);
        let bytes = self.bytes(src, size).to_vec();
        self.bytes_mut(dst, size).copy_from_slice(&bytes);
        self.allocated.remove(&src);
        self.allocated.insert(dst, class as u8);
        self.stat[class].relocated += 1;
        self.stat[class].relocated_us += us;
    }

    /// The bytes of a block, or of any `size` bytes at `addr` in a live
    /// chunk (a relocation reads a page header through it); empty in a
    /// chunk that was given back.
    pub fn bytes(&self, addr: Addr, size: usize) -> &[u8] {
        let (n, off) = (addr as usize / CHUNK, addr as usize % CHUNK);
        match self.chunks.get(n) {
            Some(Some(c)) if off + size <= CHUNK => &c[off..off + size],
            _ => &[],
        }
    }

    /// The bytes of a block, mutable; empty in a chunk given back.
    pub fn bytes_mut(&mut self, addr: Addr, size: usize) -> &mut [u8] {
        let (n, off) = (addr as usize / CHUNK, addr as usize % CHUNK);
        match self.chunks.get_mut(n) {
            Some(Some(c)) if off + size <= CHUNK => &mut c[off..off + size],
            _ => &mut [],
        }
    }

    /// Free blocks of class `class` (INNODB_CMPMEM's `pages_free`).
    pub fn n_free(&self, class: usize) -> usize {
        self.free[class].len()
    }

    /// Counters of class `class`, relocations since the last reset.
    pub fn stat(&self, class: usize) -> BuddyStat {
        let s = self.stat[class];
        let (r, us) = self.reset_at[class];
        BuddyStat {
            used: s.used,
            relocated: s.relocated - r,
            relocated_us: s.relocated_us - us,
        }
    }

    /// INNODB_CMPMEM_RESET's zeroing: relocations count from now.
    pub fn reset(&mut self) {
        for (at, s) in self.reset_at.iter_mut().zip(&self.stat) {
            *at = (s.relocated, s.relocated_us);
        }
    }

    /// Every chunk's memory, for the pool to keep when it is dropped.
    pub fn take_chunks(&mut self) -> impl Iterator<Item = Box<[u8]>> + '_ {
        self.live_chunks = 0;
        self.chunks.drain(..).flatten()
    }

    /// Checks the invariants (tests).
    #[cfg(test)]
    pub fn check(&self) {
        let mut covered = vec![0u8; self.chunks.len() * (CHUNK / LOW)];
        let mut mark = |addr: Addr, class: usize| {
            assert_eq!(addr as usize % size_of(class), 0, "misaligned block");
            let first = addr as usize / LOW;
            for c in &mut covered[first..first + size_of(class) / LOW] {
                *c += 1;
            }
        };
        for (&a, &c) in &self.allocated {
            mark(a, usize::from(c));
        }
        for (class, list) in self.free.iter().enumerate() {
            for &a in list {
                mark(a, class);
            }
        }
        for (n, chunk) in self.chunks.iter().enumerate() {
            let units = &covered[n * CHUNK / LOW..(n + 1) * CHUNK / LOW];
            if chunk.is_some() {
                assert!(units.iter().all(|&u| u == 1), "chunk {n}: {units:?}");
            } else {
                assert!(units.iter().all(|&u| u == 0), "freed chunk {n} in use");
            }
        }
        for class in 0..CLASSES {
            let used = self
                .allocated
                .values()
                .filter(|&&c| usize::from(c) == class)
                .count();
            assert_eq!(used as u64, self.stat[class].used);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chunk() -> Box<[u8]> {
        vec![0u8; CHUNK].into_boxed_slice()
    }

    #[test]
    fn split_and_merge() {
        let mut b = Buddy::default();
        let a = b.alloc(0, chunk);
        assert_eq!(b.chunks(), 1);
        // The other halves: 1, 2, 4 and 8 KiB.
        assert_eq!(
            (0..4).map(|c| b.n_free(c)).collect::<Vec<_>>(),
            [1, 1, 1, 1]
        );
        let c = b.alloc(1, chunk);
        assert_eq!(c, 2048);
        b.check();
        let mut never = |_: &mut Buddy, _, _, _| false;
        assert!(b.free(a, 0, &mut never).is_none());
        b.check();
        let mem = b.free(c, 1, &mut never);
        assert!(mem.is_some(), "the whole chunk is free again");
        assert_eq!(b.chunks(), 0);
        assert_eq!(b.bad_frees, 0);
        assert!(b.free(c, 1, &mut never).is_none());
        assert_eq!(b.bad_frees, 1, "a double free is refused and counted");
    }

    #[test]
    fn a_used_buddy_is_relocated_into_a_free_block() {
        let mut b = Buddy::default();
        // Two chunks of 8 KiB blocks: x0 x1 | y0 y1.
        let x0 = b.alloc(3, chunk);
        let x1 = b.alloc(3, chunk);
        let y0 = b.alloc(3, chunk);
        let y1 = b.alloc(3, chunk);
        assert_eq!(b.chunks(), 2);
        b.bytes_mut(y1, 8192)[0] = 7;
        let mut never = |_: &mut Buddy, _, _, _| false;
        b.free(x0, 3, &mut never);
        // Freeing y0: its buddy y1 is in use and x0 is free, so y1 moves
        // to x0 and the second chunk goes back.
        let mut moved = Vec::new();
        let mut reloc = |b: &mut Buddy, src, dst, class| {
            moved.push((src, dst));
            b.relocate_block(src, dst, class, 3);
            true
        };
        assert!(b.free(y0, 3, &mut reloc).is_some());
        assert_eq!(moved, [(y1, x0)]);
        assert_eq!(b.bytes(x0, 8192)[0], 7);
        assert_eq!(b.chunks(), 1);
        assert_eq!(b.stat(3).relocated, 1);
        assert_eq!(b.stat(3).relocated_us, 3);
        b.reset();
        assert_eq!(b.stat(3).relocated, 0);
        assert!(b.is_allocated(x0, 3) && b.is_allocated(x1, 3));
        b.check();
    }

    proptest! {
        /// Random allocations and frees (with and without relocation) keep
        /// the blocks disjoint and covering every live chunk, keep each
        /// block's bytes, and give every chunk back once all is freed.
        #[test]
        fn blocks_stay_disjoint(ops in proptest::collection::vec((0usize..5, any::<bool>(), any::<u8>()), 1..200)) {
            let mut b = Buddy::default();
            // Live blocks: (id, class) keyed by address, with a tag byte.
            let mut live: Vec<(Addr, usize, u8)> = Vec::new();
            for (class, free, tag) in ops {
                if free && !live.is_empty() {
                    let (addr, class, _) = live.remove(usize::from(tag) % live.len());
                    let mut reloc = |b: &mut Buddy, src: Addr, dst: Addr, c: usize| {
                        if !b.is_allocated(src, c) {
                            return false;
                        }
                        b.relocate_block(src, dst, c, 0);
                        true
                    };
                    let before: Vec<Addr> = live.iter().map(|l| l.0).collect();
                    b.free(addr, class, &mut reloc);
                    // Follow the moves: a live block no longer allocated
                    // at its address was relocated.
                    for l in live.iter_mut() {
                        if !b.is_allocated(l.0, l.1) {
                            let moved = (0..b.chunks.len() * CHUNK / LOW)
                                .map(|u| (u * LOW) as Addr)
                                .find(|&a| b.is_allocated(a, l.1) && !before.contains(&a)
                                    && b.bytes(a, 1)[0] == l.2);
                            l.0 = moved.expect("a relocated block is found by its tag");
                        }
                    }
                } else {
                    let addr = b.alloc(class, chunk);
                    b.bytes_mut(addr, size_of(class)).fill(tag);
                    live.push((addr, class, tag));
                }
                b.check();
                for &(addr, class, tag) in &live {
                    prop_assert!(b.bytes(addr, size_of(class)).iter().all(|&x| x == tag));
                }
            }
            let mut never = |_: &mut Buddy, _, _, _| false;
            for (addr, class, _) in live {
                b.free(addr, class, &mut never);
            }
            prop_assert_eq!(b.chunks(), 0);
            prop_assert_eq!(b.bad_frees, 0);
        }
    }
}
