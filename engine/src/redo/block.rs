//! Byte layouts of the redo log: log blocks, the group header and the
//! checkpoint blocks, plus the LSN arithmetic that follows from the block
//! layout. Pure functions over byte slices; no I/O. Mirrors `log0log.h`.
//!
//! # Log block
//!
//! ```text
//! offset  size  field
//! ------  ----  ------------------------------------------------------------
//!      0     4  block number: ((block start LSN / 512) & 0x3FFF_FFFF) + 1
//!      4     2  data_len: bytes in use counted from the block start, header
//!               included: 12 ..= 508; 508 means full
//!      6     2  first_rec_group: offset of the first frame that starts in
//!               this block, 0 if none does
//!      8     4  checkpoint_no: low 32 bits of the number of the next
//!               checkpoint to be written, when the block was written
//!     12   496  payload bytes of the frame stream; bytes at and past
//!               data_len are zero
//!    508     4  crc32 of bytes [0, 508)
//! ```
//!
//! # Group header (block 0 of `ib_logfile0`)
//!
//! ```text
//! offset  size  field
//! ------  ----  ------------------------------------------------------------
//!      0    12  magic b"INNOSIMLOG\0\0"
//!     12     4  format version (LOG_FORMAT_VERSION)
//!     16     4  number of files in the group
//!     20     8  size of each file in bytes
//!     28   480  zero
//!    508     4  crc32 of bytes [0, 508)
//! ```
//!
//! # Checkpoint block (block 1 for odd numbers, block 3 for even ones)
//!
//! ```text
//! offset  size  field
//! ------  ----  ------------------------------------------------------------
//!      0     8  checkpoint number (the first checkpoint of a log is 1)
//!      8     8  checkpoint LSN: recovery starts reading frames here
//!     16   492  zero
//!    508     4  crc32 of bytes [0, 508)
//! ```

use super::{LOG_START_LSN, LSN_MAX};
use crate::page::{get_u16, get_u32, get_u64, put_u16, put_u32, put_u64};

/// Size of a log block: the unit of every log write, one disk sector.
pub const LOG_BLOCK_SIZE: usize = 512;
/// Size of the header area at the start of every log file (4 blocks).
pub const LOG_FILE_HDR_SIZE: usize = 4 * LOG_BLOCK_SIZE;

/// Offset of the block number.
pub(crate) const LOG_BLOCK_HDR_NO: usize = 0;
/// Offset of the bytes-in-use count.
pub(crate) const LOG_BLOCK_HDR_DATA_LEN: usize = LOG_BLOCK_HDR_NO + 4;
/// Offset of the first frame that starts in the block.
pub(crate) const LOG_BLOCK_FIRST_REC_GROUP: usize = LOG_BLOCK_HDR_DATA_LEN + 2;
/// Offset of the checkpoint number.
pub(crate) const LOG_BLOCK_CHECKPOINT_NO: usize = LOG_BLOCK_FIRST_REC_GROUP + 2;
/// Size of the block header: where payload starts.
pub(crate) const LOG_BLOCK_HDR_SIZE: usize = LOG_BLOCK_CHECKPOINT_NO + 4;
/// Size of the block trailer.
pub(crate) const LOG_BLOCK_TRL_SIZE: usize = 4;
/// Offset of the checksum in the trailer; also where payload ends.
pub(crate) const LOG_BLOCK_CHECKSUM: usize = LOG_BLOCK_SIZE - LOG_BLOCK_TRL_SIZE;
/// Payload bytes per block.
pub(crate) const LOG_BLOCK_DATA_SIZE: usize = LOG_BLOCK_CHECKSUM - LOG_BLOCK_HDR_SIZE;
/// Bit mask applied to `lsn / 512` to form a block number.
const LOG_BLOCK_NO_MASK: u64 = 0x3FFF_FFFF;

const _: () = assert!(LOG_BLOCK_HDR_SIZE == 12);
const _: () = assert!(LOG_BLOCK_CHECKSUM == 508);
const _: () = assert!(LOG_BLOCK_DATA_SIZE == 496);
const _: () = assert!(LOG_START_LSN.is_multiple_of(LOG_BLOCK_SIZE as u64));
const _: () = assert!(LOG_FILE_HDR_SIZE == 2048);

/// Offset in `ib_logfile0` of the group header.
pub(crate) const LOG_GROUP_HEADER: u64 = 0;
/// Offset in `ib_logfile0` of the slot for odd checkpoint numbers.
pub(crate) const LOG_CHECKPOINT_1: u64 = LOG_BLOCK_SIZE as u64;
/// Offset in `ib_logfile0` of the slot for even checkpoint numbers.
pub(crate) const LOG_CHECKPOINT_2: u64 = 3 * LOG_BLOCK_SIZE as u64;
const _: () = assert!(LOG_CHECKPOINT_2 + (LOG_BLOCK_SIZE as u64) <= LOG_FILE_HDR_SIZE as u64);

/// Magic bytes opening the group header.
const LOG_MAGIC: &[u8; 12] = b"INNOSIMLOG\0\0";
/// The format version this code writes and reads.
pub(crate) const LOG_FORMAT_VERSION: u32 = 1;
/// Offset of the magic.
const LOG_HEADER_MAGIC: usize = 0;
/// Offset of the format version.
const LOG_HEADER_VERSION: usize = LOG_HEADER_MAGIC + LOG_MAGIC.len();
/// Offset of the number of files.
const LOG_HEADER_FILES: usize = LOG_HEADER_VERSION + 4;
/// Offset of the file size.
const LOG_HEADER_FILE_SIZE: usize = LOG_HEADER_FILES + 4;
/// End of the header's fields.
const LOG_HEADER_END: usize = LOG_HEADER_FILE_SIZE + 8;
const _: () = assert!(LOG_HEADER_END == 28);
const _: () = assert!(LOG_HEADER_END <= LOG_BLOCK_CHECKSUM);

/// Offset of the checkpoint number in a checkpoint block.
const LOG_CHECKPOINT_NO: usize = 0;
/// Offset of the checkpoint LSN in a checkpoint block.
const LOG_CHECKPOINT_LSN: usize = LOG_CHECKPOINT_NO + 8;
/// End of the checkpoint block's fields.
const LOG_CHECKPOINT_END: usize = LOG_CHECKPOINT_LSN + 8;
const _: () = assert!(LOG_CHECKPOINT_END <= LOG_BLOCK_CHECKSUM);

/// The largest checkpoint number a scan accepts; keeps `+ 2` on a garbage
/// number from overflowing.
pub(crate) const CHECKPOINT_NO_MAX: u64 = 1 << 62;

/// Offset of the length in a frame header.
const FRAME_LEN: usize = 0;
/// Offset of the checksum in a frame header.
const FRAME_CRC: usize = FRAME_LEN + 4;
/// Size of a frame header: where the payload starts.
pub(crate) const FRAME_HEADER_SIZE: usize = FRAME_CRC + 4;
const _: () = assert!(FRAME_HEADER_SIZE == 8);

// ---------------------------------------------------------------------------
// LSN arithmetic
// ---------------------------------------------------------------------------

/// The LSN of the start of the block holding `lsn`.
#[inline]
pub(crate) fn block_start(lsn: u64) -> u64 {
    lsn & !(LOG_BLOCK_SIZE as u64 - 1)
}

/// Offset of `lsn` within its block.
#[inline]
pub(crate) fn block_offset(lsn: u64) -> usize {
    (lsn % LOG_BLOCK_SIZE as u64) as usize
}

/// Moves an LSN that points into a header or trailer forward to the next
/// payload position, so that every LSN the log hands out or stores as an
/// end points where a payload byte can go.
pub(crate) fn normalize(lsn: u64) -> u64 {
    let off = block_offset(lsn);
    if off < LOG_BLOCK_HDR_SIZE {
        block_start(lsn) + LOG_BLOCK_HDR_SIZE as u64
    } else if off >= LOG_BLOCK_CHECKSUM {
        block_start(lsn) + (LOG_BLOCK_SIZE + LOG_BLOCK_HDR_SIZE) as u64
    } else {
        lsn
    }
}

/// Whether `lsn` is a payload position (what [`normalize`] returns).
pub(crate) fn is_normalized(lsn: u64) -> bool {
    (LOG_BLOCK_HDR_SIZE..LOG_BLOCK_CHECKSUM).contains(&block_offset(lsn))
}

/// Counts the payload bytes before `lsn` since LSN 0; `lsn` must be a
/// payload position or the end of a block's payload.
fn payload_count(lsn: u64) -> u64 {
    let off = block_offset(lsn);
    debug_assert!((LOG_BLOCK_HDR_SIZE..=LOG_BLOCK_CHECKSUM).contains(&off));
    (lsn / LOG_BLOCK_SIZE as u64) * LOG_BLOCK_DATA_SIZE as u64 + (off - LOG_BLOCK_HDR_SIZE) as u64
}

/// The payload position reached by moving `n` payload bytes on from the
/// payload position `lsn`, skipping block headers and trailers. A result at
/// the very end of a block's payload is reported as the next block's first
/// payload position.
pub(crate) fn lsn_advance(lsn: u64, n: u64) -> u64 {
    let count = payload_count(lsn) + n;
    let data = LOG_BLOCK_DATA_SIZE as u64;
    (count / data) * LOG_BLOCK_SIZE as u64 + count % data + LOG_BLOCK_HDR_SIZE as u64
}

/// The block number stored in the block that starts at `block_lsn`.
#[inline]
pub(crate) fn block_no_at(block_lsn: u64) -> u32 {
    (((block_lsn / LOG_BLOCK_SIZE as u64) & LOG_BLOCK_NO_MASK) + 1) as u32
}

// ---------------------------------------------------------------------------
// Log blocks
// ---------------------------------------------------------------------------

/// Zeroes a block and stamps the block number of `block_lsn`.
pub(crate) fn init_block(block: &mut [u8], block_lsn: u64) {
    debug_assert_eq!(block.len(), LOG_BLOCK_SIZE);
    block.fill(0);
    put_u32(block, LOG_BLOCK_HDR_NO, block_no_at(block_lsn));
}

/// The stored block number.
pub(crate) fn block_no(block: &[u8]) -> u32 {
    get_u32(block, LOG_BLOCK_HDR_NO)
}
/// The stored bytes-in-use count.
pub(crate) fn data_len(block: &[u8]) -> usize {
    usize::from(get_u16(block, LOG_BLOCK_HDR_DATA_LEN))
}
/// Sets the bytes-in-use count.
pub(crate) fn set_data_len(block: &mut [u8], len: usize) {
    debug_assert!((LOG_BLOCK_HDR_SIZE..=LOG_BLOCK_CHECKSUM).contains(&len));
    put_u16(block, LOG_BLOCK_HDR_DATA_LEN, len as u16);
}
/// The stored offset of the first frame starting in the block (0: none).
pub(crate) fn first_rec_group(block: &[u8]) -> usize {
    usize::from(get_u16(block, LOG_BLOCK_FIRST_REC_GROUP))
}
/// Sets the offset of the first frame starting in the block.
pub(crate) fn set_first_rec_group(block: &mut [u8], offset: usize) {
    debug_assert!(offset == 0 || (LOG_BLOCK_HDR_SIZE..LOG_BLOCK_CHECKSUM).contains(&offset));
    put_u16(block, LOG_BLOCK_FIRST_REC_GROUP, offset as u16);
}
/// The stored checkpoint number (low 32 bits).
pub(crate) fn checkpoint_no(block: &[u8]) -> u32 {
    get_u32(block, LOG_BLOCK_CHECKPOINT_NO)
}
/// Sets the checkpoint number (low 32 bits are kept).
pub(crate) fn set_checkpoint_no(block: &mut [u8], no: u64) {
    put_u32(block, LOG_BLOCK_CHECKPOINT_NO, no as u32);
}

/// The checksum of a block (or of a header or checkpoint block): crc32 of
/// everything before the trailer.
pub(crate) fn block_checksum(block: &[u8]) -> u32 {
    crc32fast::hash(&block[..LOG_BLOCK_CHECKSUM])
}
/// Stores the checksum in the trailer; called right before every write.
pub(crate) fn seal_block(block: &mut [u8]) {
    debug_assert_eq!(block.len(), LOG_BLOCK_SIZE);
    let sum = block_checksum(block);
    put_u32(block, LOG_BLOCK_CHECKSUM, sum);
}
/// Whether the stored checksum matches the contents.
pub(crate) fn checksum_ok(block: &[u8]) -> bool {
    debug_assert_eq!(block.len(), LOG_BLOCK_SIZE);
    get_u32(block, LOG_BLOCK_CHECKSUM) == block_checksum(block)
}

// ---------------------------------------------------------------------------
// Group header and checkpoints
// ---------------------------------------------------------------------------

/// The group header block for a log of `files` files of `file_size_bytes`.
pub(crate) fn encode_group_header(files: u32, file_size_bytes: u64) -> [u8; LOG_BLOCK_SIZE] {
    let mut block = [0u8; LOG_BLOCK_SIZE];
    block[LOG_HEADER_MAGIC..LOG_HEADER_VERSION].copy_from_slice(LOG_MAGIC);
    put_u32(&mut block, LOG_HEADER_VERSION, LOG_FORMAT_VERSION);
    put_u32(&mut block, LOG_HEADER_FILES, files);
    put_u64(&mut block, LOG_HEADER_FILE_SIZE, file_size_bytes);
    seal_block(&mut block);
    block
}

/// Decodes a group header: (number of files, file size), or why the block
/// is not a group header this code can read.
pub(crate) fn decode_group_header(block: &[u8]) -> std::result::Result<(u32, u64), String> {
    if !checksum_ok(block) {
        return Err("the log group header fails its checksum".to_string());
    }
    if &block[LOG_HEADER_MAGIC..LOG_HEADER_VERSION] != LOG_MAGIC {
        return Err("the file is not an innosim redo log (bad magic)".to_string());
    }
    let version = get_u32(block, LOG_HEADER_VERSION);
    if version != LOG_FORMAT_VERSION {
        return Err(format!(
            "unsupported redo log format version {version} (this build reads {LOG_FORMAT_VERSION})"
        ));
    }
    Ok((
        get_u32(block, LOG_HEADER_FILES),
        get_u64(block, LOG_HEADER_FILE_SIZE),
    ))
}

/// The slot offset in `ib_logfile0` for checkpoint number `no`.
pub(crate) fn checkpoint_slot(no: u64) -> u64 {
    if no % 2 == 1 {
        LOG_CHECKPOINT_1
    } else {
        LOG_CHECKPOINT_2
    }
}

/// A checkpoint block.
pub(crate) fn encode_checkpoint(no: u64, lsn: u64) -> [u8; LOG_BLOCK_SIZE] {
    let mut block = [0u8; LOG_BLOCK_SIZE];
    put_u64(&mut block, LOG_CHECKPOINT_NO, no);
    put_u64(&mut block, LOG_CHECKPOINT_LSN, lsn);
    seal_block(&mut block);
    block
}

/// Decodes the checkpoint block read from `slot`: (number, LSN), or `None`
/// if it is not a valid checkpoint (bad checksum, a number that belongs in
/// the other slot or is out of range, an LSN outside the log).
pub(crate) fn decode_checkpoint(block: &[u8], slot: u64) -> Option<(u64, u64)> {
    if !checksum_ok(block) {
        return None;
    }
    let no = get_u64(block, LOG_CHECKPOINT_NO);
    let lsn = get_u64(block, LOG_CHECKPOINT_LSN);
    let valid = (1..=CHECKPOINT_NO_MAX).contains(&no)
        && checkpoint_slot(no) == slot
        && (LOG_START_LSN..=LSN_MAX).contains(&lsn);
    valid.then_some((no, lsn))
}

// ---------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------

/// The checksum of a frame starting at `start_lsn`: the start LSN is mixed
/// in so that a frame left by an earlier lap, or shifted, never verifies.
pub(crate) fn frame_crc(start_lsn: u64, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&start_lsn.to_le_bytes());
    hasher.update(payload);
    hasher.finalize()
}

/// The header of a frame carrying `payload` at `start_lsn`.
pub(crate) fn encode_frame_header(start_lsn: u64, payload: &[u8]) -> [u8; FRAME_HEADER_SIZE] {
    let mut header = [0u8; FRAME_HEADER_SIZE];
    put_u32(&mut header, FRAME_LEN, payload.len() as u32);
    put_u32(&mut header, FRAME_CRC, frame_crc(start_lsn, payload));
    header
}

/// Decodes a frame header: (payload length, checksum).
pub(crate) fn decode_frame_header(header: &[u8]) -> (u32, u32) {
    (get_u32(header, FRAME_LEN), get_u32(header, FRAME_CRC))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsn_arithmetic_skips_headers_and_trailers() {
        assert_eq!(normalize(8192), 8204);
        assert_eq!(normalize(8204), 8204);
        assert_eq!(normalize(8192 + 508), 8192 + 512 + 12);
        assert_eq!(normalize(8192 + 511), 8192 + 512 + 12);
        assert_eq!(lsn_advance(8204, 0), 8204);
        assert_eq!(lsn_advance(8204, 495), 8192 + 507);
        // Filling a block exactly lands on the next block's first payload byte.
        assert_eq!(lsn_advance(8204, 496), 8192 + 512 + 12);
        assert_eq!(lsn_advance(8204, 497), 8192 + 512 + 13);
        assert_eq!(lsn_advance(8204, 10 * 496), 8192 + 10 * 512 + 12);
        for lsn in (8192..8192 + 2048).map(normalize) {
            assert!(is_normalized(lsn));
        }
    }

    #[test]
    fn block_numbers_follow_the_lsn() {
        assert_eq!(block_no_at(0), 1);
        assert_eq!(block_no_at(8192), 17);
        assert_eq!(block_no_at(512 << 30), 1);
    }

    #[test]
    fn headers_and_checkpoints_round_trip() {
        let h = encode_group_header(3, 1 << 20);
        assert_eq!(decode_group_header(&h), Ok((3, 1 << 20)));
        let mut bad = h;
        bad[0] ^= 1;
        assert!(decode_group_header(&bad).is_err());

        let c = encode_checkpoint(5, 9000);
        assert_eq!(decode_checkpoint(&c, LOG_CHECKPOINT_1), Some((5, 9000)));
        // An odd number found in the even slot is not trusted.
        assert_eq!(decode_checkpoint(&c, LOG_CHECKPOINT_2), None);
        assert_eq!(
            decode_checkpoint(&encode_checkpoint(6, 100), LOG_CHECKPOINT_2),
            None
        );
        assert_eq!(
            decode_checkpoint(&[0u8; LOG_BLOCK_SIZE], LOG_CHECKPOINT_2),
            None
        );
    }
}
