//! The redo log: an append-only stream of checksummed mini-transaction
//! frames in a ring of files, with checkpoints that say where recovery must
//! start. Mirrors InnoDB's `log0log.cc` (the writer, [`Log`]) and the
//! scanning half of `log0recv.cc` ([`scan()`]).
//!
//! # What this module owns
//!
//! The files `ib_logfile0` .. `ib_logfile{n-1}`, their group header, the two
//! checkpoint slots, the 512-byte log blocks and the framing of each
//! mini-transaction (mtr). It treats an mtr's redo as an opaque byte payload:
//! what the records inside mean, and applying them, is the business of the
//! `mtr` module and of recovery. It must never interpret payloads, never
//! write anywhere except the log files, and never read back a frame it cannot
//! prove complete (length, checksum, block sequence).
//!
//! # LSNs and the ring
//!
//! The log sequence number (LSN) counts every byte of the log stream,
//! including block headers and trailers, from [`LOG_START_LSN`]. The stream
//! is laid out on a ring of `n` files; the first [`LOG_FILE_HDR_SIZE`] bytes
//! of every file are a header area and the rest holds blocks:
//!
//! ```text
//!  ib_logfile0                          ib_logfile1
//! +--------+---------------------------+--------+---------------------------+
//! | header |  stream [0, D)            | header |  stream [D, 2D)           |
//! | 2 KiB  |  512-byte blocks          | 2 KiB  |                           |
//! +--------+---------------------------+--------+---------------------------+
//!            ^ D = file_size - 2048; capacity = n * D; after 2D the stream
//!              wraps to the start of ib_logfile0's blocks again
//! ```
//!
//! The stream position of an LSN is `p = (lsn - LOG_START_LSN) % capacity`;
//! it lives in file `p / D` at offset `2048 + p % D`. LOG_START_LSN, the
//! header size and the file sizes are all multiples of 512, so a block never
//! straddles two files and a block's LSN fixes its place on disk.
//!
//! The header area of `ib_logfile0` holds the group header (block 0) and two
//! checkpoint slots (blocks 1 and 3; block 2 is unused, as in InnoDB). The
//! header areas of the other files are unused. Layouts are in `block.rs`.
//!
//! # Blocks and frames
//!
//! A block carries a 12-byte header (block number, bytes in use, the first
//! frame that starts in it, a checkpoint number), 496 payload bytes and a
//! crc32 trailer. The payload bytes of consecutive blocks form one stream in
//! which every mtr is appended as a frame:
//!
//! ```text
//! offset  size  field
//! ------  ----  ------------------------------------------------------------
//!      0     4  len: payload length in bytes, 1 ..= capacity
//!      4     4  crc32 of (the frame's start LSN as u64 LE ++ payload)
//!      8   len  payload: the mtr's redo records, opaque here
//! ```
//!
//! A frame may span many blocks. Because the start LSN is in the checksum, a
//! frame left on disk by an earlier lap of the ring can never be mistaken for
//! one at another LSN. The "current LSN" always points where the next
//! payload byte goes: when a block fills it jumps past the trailer and the
//! next header, so an mtr's end LSN is never the LSN of a trailer.
//!
//! # Checkpoints
//!
//! A checkpoint says: every page change below this LSN is on disk in the
//! tablespaces, so recovery may start here. Checkpoints are numbered; odd
//! numbers go to slot 1, even numbers to slot 2, so writing one never
//! touches the other and a torn checkpoint write leaves the previous one
//! intact. [`scan()`] takes the valid slot with the higher number.
//!
//! # Durability and the end of the log
//!
//! Blocks are written whole; the partly filled last block is written padded
//! and rewritten in place as it fills, as InnoDB does. Like InnoDB we rely on
//! 512-byte sector writes being atomic, so a rewrite leaves the old or the
//! new block, never a mix. The end of the log is found, not stored: scanning
//! from the checkpoint, the first block that fails its checksum, carries the
//! wrong block number (a block from an earlier lap) or a smaller checkpoint
//! number than the block before it (a block from a run whose later writes
//! were lost), or that is only partly filled, ends the log; so does the
//! first frame that is cut off or fails its checksum. A torn or garbage tail
//! is how every log ends after a crash, not an error.
//!
//! # Stale blocks and checkpoint numbers
//!
//! Suppose a run writes blocks X and X+1 without syncing, crashes, and only
//! X+1 reaches the disk. Recovery stops at X. The next run continues at X,
//! and if it then loses its own write of X+1 while X survives, the old X+1
//! (right block number, good checksum) would look like a continuation of
//! the new X. The checkpoint number in every block header tells them apart:
//! a block carries the number of the next checkpoint to be written, and
//! [`Log::open`] first re-writes the recovered checkpoint under the next
//! number (InnoDB's `recv_synchronize_groups` does the same), so every block
//! it writes afterwards carries a number two above the recovered checkpoint,
//! greater than anything the crashed run can have written. See [`Log::open`].

mod block;
mod group;
mod log;
mod scan;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_garbage;

pub use block::{LOG_BLOCK_SIZE, LOG_FILE_HDR_SIZE};
pub use log::{Log, LogStats};
pub use scan::{scan, scan_with, ScanEnd, ScanResult, ScannedMtr};

use crate::error::{Error, Result};
use crate::io::Storage;

/// The LSN of the first byte of the log stream. Multiple of 512; the first
/// checkpoint of a new log is at this LSN.
pub const LOG_START_LSN: u64 = 8192;

/// The largest checkpoint LSN a scan accepts. Far beyond anything a real
/// log reaches (2^62 bytes), it keeps the LSN arithmetic on garbage
/// checkpoints from overflowing.
pub const LSN_MAX: u64 = 1 << 62;

/// At most this many log files, as in InnoDB.
pub const LOG_FILES_MAX: u32 = 100;

/// The smallest log file, as in InnoDB (64 KiB; header area included).
pub const LOG_FILE_SIZE_MIN: u64 = 64 * 1024;

/// The largest ring capacity. Block numbers keep 30 bits of `lsn / 512`,
/// so they repeat every 2^39 bytes of LSN; a ring smaller than half of that
/// guarantees a block left from the previous lap has a different number.
pub const LOG_CAPACITY_MAX: u64 = 1 << 38;

/// The smallest log buffer: a few blocks, so that a frame can always be
/// started without writing on every block.
pub const LOG_BUFFER_SIZE_MIN: usize = 4 * LOG_BLOCK_SIZE;

/// [`Log::needs_checkpoint`] turns true once the checkpoint age exceeds
/// `capacity - capacity / CHECKPOINT_MARGIN_DIVISOR`: the last quarter of
/// the ring is the margin that mtrs started before the checkpoint completes
/// may still use. Appending past the whole ring is a panic, not an error.
pub const CHECKPOINT_MARGIN_DIVISOR: u64 = 4;

/// The sizes of the log files and of the in-memory log buffer
/// (`innodb_log_files_in_group`, `innodb_log_file_size`,
/// `innodb_log_buffer_size`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// Number of log files, 1 ..= [`LOG_FILES_MAX`].
    pub files: u32,
    /// Size of each file in bytes, header area included: a multiple of 512,
    /// at least [`LOG_FILE_SIZE_MIN`].
    pub file_size_bytes: u64,
    /// Size of the log buffer: how much redo may gather in memory before
    /// `append` writes it out on its own. At least [`LOG_BUFFER_SIZE_MIN`];
    /// rounded down to whole blocks.
    pub buffer_size_bytes: usize,
}

impl Default for LogConfig {
    /// Two files of 4 MiB and a 1 MiB buffer.
    fn default() -> Self {
        LogConfig {
            files: 2,
            file_size_bytes: 4 * 1024 * 1024,
            buffer_size_bytes: 1024 * 1024,
        }
    }
}

impl LogConfig {
    /// Bytes of redo the files hold together (each file less its header),
    /// or `None` if that overflows or a file is smaller than its header.
    pub fn capacity_bytes(&self) -> Option<u64> {
        self.file_size_bytes
            .checked_sub(LOG_FILE_HDR_SIZE as u64)?
            .checked_mul(u64::from(self.files))
    }

    /// Checks the sizes, returning [`Error::InvalidArgument`] for values the
    /// log cannot work with.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::InvalidArgument(what));
        if self.files == 0 || self.files > LOG_FILES_MAX {
            return bad(format!(
                "the number of log files must be 1 ..= {LOG_FILES_MAX}, not {}",
                self.files
            ));
        }
        if !self.file_size_bytes.is_multiple_of(LOG_BLOCK_SIZE as u64)
            || self.file_size_bytes < LOG_FILE_SIZE_MIN
        {
            return bad(format!(
                "the log file size must be a multiple of {LOG_BLOCK_SIZE} bytes and at least \
                 {LOG_FILE_SIZE_MIN}, not {}",
                self.file_size_bytes
            ));
        }
        let capacity = self.capacity_bytes().filter(|&c| c <= LOG_CAPACITY_MAX);
        if capacity.is_none() {
            return bad(format!(
                "the log files together may hold at most {LOG_CAPACITY_MAX} bytes of log, \
                 not {} x {}",
                self.files, self.file_size_bytes
            ));
        }
        if self.buffer_size_bytes < LOG_BUFFER_SIZE_MIN {
            return bad(format!(
                "the log buffer must be at least {LOG_BUFFER_SIZE_MIN} bytes, not {}",
                self.buffer_size_bytes
            ));
        }
        Ok(())
    }
}

/// Whether a log exists in `storage`, judged by `ib_logfile0`.
pub fn exists(storage: &mut dyn Storage) -> Result<bool> {
    let name = group::file_name(0);
    storage
        .exists(&name)
        .map_err(|e| Error::io("exists", &name, e))
}

/// The shape of the ring, derived from a validated [`LogConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Number of files.
    files: u32,
    /// Size of each file, header area included.
    file_size_bytes: u64,
    /// Stream bytes each file holds: its size minus the header area.
    data_bytes_per_file: u64,
    /// Stream bytes the whole ring holds.
    capacity: u64,
}

impl Geometry {
    /// The geometry of a configuration that passed [`LogConfig::validate`].
    fn new(cfg: &LogConfig) -> Geometry {
        let data_bytes_per_file = cfg.file_size_bytes - LOG_FILE_HDR_SIZE as u64;
        Geometry {
            files: cfg.files,
            file_size_bytes: cfg.file_size_bytes,
            data_bytes_per_file,
            capacity: data_bytes_per_file * u64::from(cfg.files),
        }
    }

    /// Where the stream byte at `lsn` lives: (file index, offset in that
    /// file, bytes from there to the end of the file). Every value is a
    /// multiple of 512 when `lsn` is.
    fn locate(&self, lsn: u64) -> (usize, u64, u64) {
        assert!(lsn >= LOG_START_LSN, "lsn {lsn} precedes the log start");
        let pos = (lsn - LOG_START_LSN) % self.capacity;
        let file = pos / self.data_bytes_per_file;
        let in_file = pos % self.data_bytes_per_file;
        (
            file as usize,
            LOG_FILE_HDR_SIZE as u64 + in_file,
            self.data_bytes_per_file - in_file,
        )
    }
}
