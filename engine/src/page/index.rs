//! The body of a B-tree page: a sorted slot directory over a record heap.
//! Mirrors the role of InnoDB's `page0page.cc` / `page0cur.cc`.
//!
//! InnoDB chains records in key order through next-record pointers and keeps
//! a sparse directory of every fourth to eighth record. This implementation
//! keeps a dense directory instead: one 2-byte slot per record, in key order,
//! so a binary search lands directly on a record and no record needs a
//! next pointer. Each heap entry carries its own length, so the page can be
//! reorganized without knowing the table's record format.
//!
//! ```text
//! offset              size  field
//! ------------------  ----  ------------------------------------------------
//! 0                     38  FIL header (page/mod.rs)
//! INDEX_N_SLOTS          2  number of records (= slots)
//! INDEX_HEAP_TOP         2  lowest offset used by the heap (grows down)
//! INDEX_GARBAGE          2  heap bytes held by removed records
//! INDEX_LEVEL            2  0 for leaves, height above the leaves otherwise
//! INDEX_ID               8  the index this page belongs to
//! INDEX_MAX_TRX_ID       8  newest transaction that changed a secondary page
//! INDEX_SLOTS            2n slot k = offset of the k-th smallest record's
//!                           heap entry
//! ...                       free space
//! heap_top ..                heap entries: [record length u16][record bytes]
//! FIL_PAGE_DATA_END      8  FIL trailer
//! ```
//!
//! Every function here is a pure, deterministic function of the page bytes
//! and its arguments: redo recovery replays them (as physiological log
//! records) and must arrive at the same bytes as the original execution.
//! Callers check [`fits`] before inserting; the functions assert it.

use super::{get_u16, get_u64, put_u16, put_u64, FIL_PAGE_DATA, FIL_PAGE_DATA_END};

/// Offset of the record count.
pub const INDEX_N_SLOTS: usize = FIL_PAGE_DATA;
/// Offset of the heap top.
pub const INDEX_HEAP_TOP: usize = INDEX_N_SLOTS + 2;
/// Offset of the garbage byte count.
pub const INDEX_GARBAGE: usize = INDEX_HEAP_TOP + 2;
/// Offset of the level.
pub const INDEX_LEVEL: usize = INDEX_GARBAGE + 2;
/// Offset of the index id.
pub const INDEX_ID: usize = INDEX_LEVEL + 2;
/// Offset of the max transaction id.
pub const INDEX_MAX_TRX_ID: usize = INDEX_ID + 8;
/// Where the slot directory starts.
pub const INDEX_SLOTS: usize = INDEX_MAX_TRX_ID + 8;
/// Bytes a record costs beyond its own length: its slot and its length.
pub const PER_RECORD_OVERHEAD: usize = 4;
/// Space for records on an empty page.
pub const EMPTY_PAGE_SPACE: usize = FIL_PAGE_DATA_END - INDEX_SLOTS;
/// The largest record a page accepts. InnoDB's rule: any two records must
/// fit on one page, so that a split always makes room.
pub const MAX_REC_LEN: usize = EMPTY_PAGE_SPACE / 2 - PER_RECORD_OVERHEAD;

const _: () = assert!(INDEX_SLOTS == 62);
const _: () = assert!(FIL_PAGE_DATA_END < u16::MAX as usize);

/// Formats the index part of a page that `page::init` has just formatted.
pub fn init(page: &mut [u8], index_id: u64, level: u16) {
    put_u16(page, INDEX_N_SLOTS, 0);
    put_u16(page, INDEX_HEAP_TOP, FIL_PAGE_DATA_END as u16);
    put_u16(page, INDEX_GARBAGE, 0);
    put_u16(page, INDEX_LEVEL, level);
    put_u64(page, INDEX_ID, index_id);
    put_u64(page, INDEX_MAX_TRX_ID, 0);
}

/// Number of records.
#[inline]
pub fn n_recs(page: &[u8]) -> usize {
    get_u16(page, INDEX_N_SLOTS) as usize
}
/// The level (0 = leaf).
#[inline]
pub fn level(page: &[u8]) -> u16 {
    get_u16(page, INDEX_LEVEL)
}
/// The index id.
#[inline]
pub fn index_id(page: &[u8]) -> u64 {
    get_u64(page, INDEX_ID)
}
/// The max transaction id field.
pub fn max_trx_id(page: &[u8]) -> u64 {
    get_u64(page, INDEX_MAX_TRX_ID)
}
/// Sets the max transaction id field.
pub fn set_max_trx_id(page: &mut [u8], id: u64) {
    put_u64(page, INDEX_MAX_TRX_ID, id)
}
fn heap_top(page: &[u8]) -> usize {
    get_u16(page, INDEX_HEAP_TOP) as usize
}
/// Heap bytes held by removed records (reclaimed by [`reorganize`]).
pub fn garbage(page: &[u8]) -> usize {
    get_u16(page, INDEX_GARBAGE) as usize
}
fn slot_pos(slot: usize) -> usize {
    INDEX_SLOTS + 2 * slot
}
fn entry_off(page: &[u8], slot: usize) -> usize {
    get_u16(page, slot_pos(slot)) as usize
}

/// Contiguous free bytes between the directory and the heap.
pub fn contiguous_free(page: &[u8]) -> usize {
    heap_top(page).saturating_sub(slot_pos(n_recs(page)))
}

/// Free bytes after a reorganization: contiguous free space plus garbage.
pub fn free_space(page: &[u8]) -> usize {
    contiguous_free(page) + garbage(page)
}

/// Bytes used by records and their overhead.
pub fn used_space(page: &[u8]) -> usize {
    EMPTY_PAGE_SPACE - free_space(page)
}

/// Whether a record of `len` bytes fits (possibly after a reorganization).
pub fn fits(page: &[u8], len: usize) -> bool {
    free_space(page) >= len + PER_RECORD_OVERHEAD
}

/// The record in `slot`.
#[inline]
pub fn rec(page: &[u8], slot: usize) -> &[u8] {
    debug_assert!(slot < n_recs(page));
    let off = entry_off(page, slot);
    let len = get_u16(page, off) as usize;
    &page[off + 2..off + 2 + len]
}

/// Where the heap entry of the record in `slot` starts (its length, then
/// its bytes).
#[inline]
pub fn rec_offset(page: &[u8], slot: usize) -> usize {
    debug_assert!(slot < n_recs(page));
    entry_off(page, slot)
}

/// The record in `slot`, mutable (for changes that keep its length, such as
/// the delete mark and the transaction id).
pub fn rec_mut(page: &mut [u8], slot: usize) -> &mut [u8] {
    debug_assert!(slot < n_recs(page));
    let off = entry_off(page, slot);
    let len = get_u16(page, off) as usize;
    &mut page[off + 2..off + 2 + len]
}

/// Checks the page's directory and heap for structural sanity: every slot
/// points inside the heap, entries do not overlap, counts add up. Used on
/// pages read from disk before trusting them, and by CHECK TABLE.
pub fn check_structure(page: &[u8]) -> Result<(), String> {
    let n = n_recs(page);
    let top = heap_top(page);
    if slot_pos(n) > top || top > FIL_PAGE_DATA_END {
        return Err(format!("{n} slots and heap top {top} overlap"));
    }
    let mut entries: Vec<(usize, usize)> = Vec::with_capacity(n);
    for slot in 0..n {
        let off = entry_off(page, slot);
        if off < top || off + 2 > FIL_PAGE_DATA_END {
            return Err(format!("slot {slot} points outside the heap ({off})"));
        }
        let len = get_u16(page, off) as usize + 2;
        if off + len > FIL_PAGE_DATA_END {
            return Err(format!("record in slot {slot} runs past the heap end"));
        }
        entries.push((off, len));
    }
    entries.sort_unstable();
    let mut used = 0;
    for pair in entries.windows(2) {
        if pair[0].0 + pair[0].1 > pair[1].0 {
            return Err(format!(
                "heap entries at {} and {} overlap",
                pair[0].0, pair[1].0
            ));
        }
    }
    for (_, len) in &entries {
        used += len;
    }
    let heap = FIL_PAGE_DATA_END - top;
    if used + garbage(page) != heap {
        return Err(format!(
            "heap holds {heap} bytes but records use {used} and garbage is {}",
            garbage(page)
        ));
    }
    Ok(())
}

/// Inserts `record` so that it becomes slot `slot`, shifting later slots up.
pub fn insert(page: &mut [u8], slot: usize, record: &[u8]) {
    let n = n_recs(page);
    assert!(slot <= n, "insert slot {slot} beyond {n} records");
    assert!(
        fits(page, record.len()),
        "record of {} bytes does not fit",
        record.len()
    );
    if contiguous_free(page) < record.len() + PER_RECORD_OVERHEAD {
        reorganize(page);
    }
    let off = heap_top(page) - record.len() - 2;
    put_u16(page, off, record.len() as u16);
    page[off + 2..off + 2 + record.len()].copy_from_slice(record);
    put_u16(page, INDEX_HEAP_TOP, off as u16);
    page.copy_within(slot_pos(slot)..slot_pos(n), slot_pos(slot + 1));
    put_u16(page, slot_pos(slot), off as u16);
    put_u16(page, INDEX_N_SLOTS, (n + 1) as u16);
}

/// Removes the record in `slot`; its heap bytes become garbage.
pub fn delete(page: &mut [u8], slot: usize) {
    let n = n_recs(page);
    assert!(slot < n, "delete slot {slot} beyond {n} records");
    let off = entry_off(page, slot);
    let entry_len = get_u16(page, off) as usize + 2;
    put_u16(page, INDEX_GARBAGE, (garbage(page) + entry_len) as u16);
    page.copy_within(slot_pos(slot + 1)..slot_pos(n), slot_pos(slot));
    put_u16(page, INDEX_N_SLOTS, (n - 1) as u16);
}

/// Replaces the record in `slot` with `record`, in place when the length is
/// unchanged. The caller checks that a longer record fits:
/// `free_space + old length >= new length`.
pub fn update(page: &mut [u8], slot: usize, record: &[u8]) {
    let old_len = rec(page, slot).len();
    if old_len == record.len() {
        rec_mut(page, slot).copy_from_slice(record);
        return;
    }
    delete(page, slot);
    insert(page, slot, record);
}

/// Removes every record from `from_slot` on.
pub fn truncate(page: &mut [u8], from_slot: usize) {
    let n = n_recs(page);
    assert!(from_slot <= n);
    let mut freed = 0;
    for slot in from_slot..n {
        let off = entry_off(page, slot);
        freed += get_u16(page, off) as usize + 2;
    }
    put_u16(page, INDEX_GARBAGE, (garbage(page) + freed) as u16);
    put_u16(page, INDEX_N_SLOTS, from_slot as u16);
}

/// Removes every record before `to_slot`, shifting the rest down.
pub fn remove_prefix(page: &mut [u8], to_slot: usize) {
    let n = n_recs(page);
    assert!(to_slot <= n);
    let mut freed = 0;
    for slot in 0..to_slot {
        let off = entry_off(page, slot);
        freed += get_u16(page, off) as usize + 2;
    }
    put_u16(page, INDEX_GARBAGE, (garbage(page) + freed) as u16);
    page.copy_within(slot_pos(to_slot)..slot_pos(n), slot_pos(0));
    put_u16(page, INDEX_N_SLOTS, (n - to_slot) as u16);
}

/// Whether the heap is as [`reorganize`] leaves it: no garbage, records
/// laid out in slot order from the end of the page down.
pub fn is_compact(page: &[u8]) -> bool {
    if garbage(page) > 0 {
        return false;
    }
    let mut top = FIL_PAGE_DATA_END;
    for slot in 0..n_recs(page) {
        let off = entry_off(page, slot);
        let len = get_u16(page, off) as usize + 2;
        if off + len != top {
            return false;
        }
        top = off;
    }
    true
}

/// Rewrites the heap without garbage, records laid out in slot order from
/// the end of the page down.
pub fn reorganize(page: &mut [u8]) {
    let n = n_recs(page);
    let mut heap: Vec<u8> = Vec::with_capacity(FIL_PAGE_DATA_END - heap_top(page));
    let mut lens = Vec::with_capacity(n);
    for slot in 0..n {
        let off = entry_off(page, slot);
        let len = get_u16(page, off) as usize + 2;
        heap.extend_from_slice(&page[off..off + len]);
        lens.push(len);
    }
    let mut top = FIL_PAGE_DATA_END;
    let mut src = 0;
    for (slot, len) in lens.into_iter().enumerate() {
        top -= len;
        page[top..top + len].copy_from_slice(&heap[src..src + len]);
        put_u16(page, slot_pos(slot), top as u16);
        src += len;
    }
    page[slot_pos(n)..top].fill(0);
    put_u16(page, INDEX_HEAP_TOP, top as u16);
    put_u16(page, INDEX_GARBAGE, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{self, PageId, PageType, PAGE_SIZE};

    fn fresh() -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        page::init(&mut p, PageId::new(1, 3), PageType::Index);
        init(&mut p, 7, 0);
        p
    }

    #[test]
    fn insert_delete_update_keep_order_and_accounting() {
        let mut p = fresh();
        let mut model: Vec<Vec<u8>> = Vec::new();
        let mut x: u64 = 1;
        for i in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 33) as usize % 300 + 1;
            let new_rec = vec![(i % 251) as u8; len];
            let op = (x >> 20) % 4;
            if op < 2 && fits(&p, len) {
                let slot = (x >> 40) as usize % (model.len() + 1);
                insert(&mut p, slot, &new_rec);
                model.insert(slot, new_rec);
            } else if op == 2 && !model.is_empty() {
                let slot = (x >> 40) as usize % model.len();
                delete(&mut p, slot);
                model.remove(slot);
            } else if !model.is_empty() {
                let slot = (x >> 40) as usize % model.len();
                if free_space(&p) + model[slot].len() >= len {
                    update(&mut p, slot, &new_rec);
                    model[slot] = new_rec;
                }
            }
            check_structure(&p).unwrap();
            assert_eq!(n_recs(&p), model.len());
            for (slot, r) in model.iter().enumerate() {
                assert_eq!(rec(&p, slot), &r[..]);
            }
        }
    }

    #[test]
    fn two_max_records_fit_an_empty_page() {
        let mut p = fresh();
        let r = vec![1u8; MAX_REC_LEN];
        insert(&mut p, 0, &r);
        assert!(fits(&p, MAX_REC_LEN));
        insert(&mut p, 1, &r);
        assert!(!fits(&p, 1));
        check_structure(&p).unwrap();
    }

    #[test]
    fn truncate_and_remove_prefix() {
        let mut p = fresh();
        for i in 0..10u8 {
            insert(&mut p, i as usize, &[i; 5]);
        }
        truncate(&mut p, 7);
        remove_prefix(&mut p, 2);
        check_structure(&p).unwrap();
        assert_eq!(n_recs(&p), 5);
        assert_eq!(rec(&p, 0), &[2u8; 5]);
        reorganize(&mut p);
        check_structure(&p).unwrap();
        assert_eq!(garbage(&p), 0);
        assert_eq!(rec(&p, 4), &[6u8; 5]);
    }
}
