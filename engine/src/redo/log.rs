//! The log writer: appends mtr frames to an in-memory buffer of log blocks,
//! writes and syncs them on request, and writes checkpoints. Mirrors
//! `log0log.cc` (`log_write_low`, `log_close`, `log_write_up_to`,
//! `log_checkpoint`).
//!
//! # The buffer
//!
//! The buffer holds whole blocks, from the block holding `written_lsn`
//! (already on disk up to `written_lsn`, rewritten on the next write) to the
//! block holding `lsn`:
//!
//! ```text
//!  buf_start_lsn                                       lsn
//!  |                                                    |
//!  v                                                    v
//!  +-----------+-----------+-----------+----------------+-----+
//!  | hdr  data | hdr  data | hdr  data | hdr  data      |     |
//!  +-----------+-----------+-----------+----------------+-----+
//!      ^ written_lsn somewhere in the first block
//! ```
//!
//! `append` only copies bytes and stamps block numbers; data lengths,
//! checkpoint numbers and checksums are filled in when blocks are written,
//! so the per-byte cost of an append is a memcpy and the frame checksum.
//! After a write, only the partly filled last block stays in the buffer.
//!
//! # Invariants
//!
//! - `lsn`, `written_lsn` and `flushed_lsn` are payload positions with
//!   `flushed_lsn <= written_lsn <= lsn`.
//! - The block holding `lsn` is in the buffer, and no block past it is.
//! - Nothing is ever written over the block holding the checkpoint LSN from
//!   an earlier lap: `block_start(lsn) + 512 <= block_start(checkpoint) +
//!   capacity` (checked by a real `assert!` in `append`).
//! - Every block written carries `checkpoint_no + 1`, the number of the next
//!   checkpoint; [`Log::open`] explains why that makes stale blocks
//!   detectable.
//! - After any I/O error the log refuses all further work with
//!   [`Error::Halted`]: a failed write or sync leaves the files in a state
//!   only recovery may interpret.

use super::block::{
    block_offset, block_start, checksum_ok, encode_frame_header, first_rec_group, init_block,
    is_normalized, lsn_advance, normalize, seal_block, set_checkpoint_no, set_data_len,
    set_first_rec_group, CHECKPOINT_NO_MAX, FRAME_HEADER_SIZE, LOG_BLOCK_CHECKSUM,
    LOG_BLOCK_HDR_SIZE, LOG_BLOCK_SIZE,
};
use super::group::LogFiles;
use super::scan::ScanResult;
use super::{block, Geometry, LogConfig, CHECKPOINT_MARGIN_DIVISOR, LOG_START_LSN, LSN_MAX};
use crate::error::{Error, Result};
use crate::io::Storage;

/// Counters of the work a [`Log`] has done since it was created or opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Bytes of log blocks handed to the files (rewrites of the partial last
    /// block count every time). Header and checkpoint blocks are not
    /// counted.
    pub bytes_written: u64,
    /// Write calls made for log blocks (one per file a write touches).
    pub writes: u64,
    /// File syncs, including those that make checkpoints durable.
    pub syncs: u64,
    /// Checkpoints written, including the first one of a new log and the
    /// one `open` re-writes.
    pub checkpoints: u64,
}

/// The redo log writer. Owns the log files; `Send`, not shared: callers
/// serialize access (the engine holds it behind its own lock).
pub struct Log {
    files: LogFiles,
    geometry: Geometry,
    /// Whole blocks from `buf_start_lsn` to the block holding `lsn`.
    buf: Vec<u8>,
    /// The LSN of `buf[0]`; block-aligned.
    buf_start_lsn: u64,
    /// The buffer's size limit in blocks.
    buf_max_blocks: usize,
    /// Where the next payload byte goes.
    lsn: u64,
    /// Payload before this LSN has been handed to the files.
    written_lsn: u64,
    /// Payload before this LSN is durable.
    flushed_lsn: u64,
    /// The LSN of the last checkpoint written.
    checkpoint_lsn: u64,
    /// The number of the last checkpoint written.
    checkpoint_no: u64,
    /// Set by the first I/O error; every later call fails.
    halted: Option<String>,
    stats: LogStats,
}

// The engine moves the log between threads with the rest of its state.
const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<Log>();
};

impl Log {
    /// Creates a new log: the files (which must not exist), the group
    /// header, an empty first block and checkpoint 1 at [`LOG_START_LSN`],
    /// all synced. The next checkpoint written will be number 2.
    pub fn create(storage: &mut dyn Storage, cfg: &LogConfig) -> Result<Log> {
        cfg.validate()?;
        let files = LogFiles::create(storage, cfg)?;
        let start = normalize(LOG_START_LSN);
        let mut buf = vec![0u8; LOG_BLOCK_SIZE];
        init_block(&mut buf, LOG_START_LSN);
        let mut log = Log::with_state(files, cfg, buf, start, 0, LOG_START_LSN);
        // The empty first block makes a fresh log scan to a clean end rather
        // than to a checksum failure on never-written space.
        log.written_lsn = LOG_START_LSN;
        log.flushed_lsn = LOG_START_LSN;
        log.write_up_to(start, true)?;
        log.write_checkpoint(LOG_START_LSN)?;
        Ok(log)
    }

    /// Opens the log after recovery has scanned it, continuing at
    /// `scan.end_lsn`.
    ///
    /// The bytes of the partly filled block before `end_lsn` are kept and
    /// will be rewritten identically with the next write; its
    /// first_rec_group is recomputed from what survives. Whatever lies past
    /// `end_lsn` (a torn frame, stale blocks) is overwritten as the log
    /// grows.
    ///
    /// Before returning, `open` syncs all log files (their contents may not
    /// be durable yet if the previous run did not crash) and re-writes the
    /// recovered checkpoint, same LSN, as number `scan.checkpoint_no + 1`,
    /// so the next checkpoint is `scan.checkpoint_no + 2`. This is what
    /// makes stale blocks detectable: a block carries the number of the
    /// next checkpoint at the time it was written, and every checkpoint
    /// this log writes is durable before any block carrying the following
    /// number. So any block on disk carries at most one more than the newest
    /// durable checkpoint, here `scan.checkpoint_no + 1`, and every block
    /// written from now on carries `scan.checkpoint_no + 2`. A scan that
    /// meets an old block after new ones sees the number drop and stops.
    /// Without the re-written checkpoint, a run that crashed before writing
    /// any checkpoint of its own would have written its blocks with that
    /// same `+ 2`, and a second crash could replay them.
    pub fn open(storage: &mut dyn Storage, cfg: &LogConfig, scan: &ScanResult) -> Result<Log> {
        cfg.validate()?;
        let mut files = LogFiles::open(storage, cfg)?;
        let geometry = files.geometry();
        check_scan(scan, &geometry)?;
        let end = scan.end_lsn;
        let end_block = block_start(end);
        let end_off = block_offset(end);
        let mut buf = vec![0u8; LOG_BLOCK_SIZE];
        init_block(&mut buf, end_block);
        if end_off > LOG_BLOCK_HDR_SIZE {
            let mut disk = [0u8; LOG_BLOCK_SIZE];
            files.read_blocks(end_block, &mut disk)?;
            let usable = checksum_ok(&disk)
                && block::block_no(&disk) == block::block_no_at(end_block)
                && block::data_len(&disk) >= end_off;
            if usable {
                buf[LOG_BLOCK_HDR_SIZE..end_off]
                    .copy_from_slice(&disk[LOG_BLOCK_HDR_SIZE..end_off]);
                let frg = recompute_first_rec_group(&disk, end_block, end_off, scan);
                set_first_rec_group(&mut buf, frg);
            } else if normalize(scan.checkpoint_lsn) < end {
                // The block holds frames the scan returned: it changed since.
                return Err(Error::Corrupt {
                    file: files.first_name().to_string(),
                    reason: format!(
                        "the log block at lsn {end_block} no longer holds the data scanned \
                         before lsn {end}"
                    ),
                });
            }
            // Otherwise only bytes before the checkpoint were in the block;
            // no scan ever reads them again, so zeros do.
        }
        let mut log = Log::with_state(
            files,
            cfg,
            buf,
            end,
            scan.checkpoint_no,
            scan.checkpoint_lsn,
        );
        log.files.mark_all_dirty();
        let syncs = log.files.sync_dirty();
        log.stats.syncs += log.check_io(syncs)?;
        log.write_checkpoint(scan.checkpoint_lsn)?;
        Ok(log)
    }

    /// A log whose buffer is the single block `buf`, with `lsn` in it, and
    /// everything before `lsn` already written and flushed.
    fn with_state(
        files: LogFiles,
        cfg: &LogConfig,
        buf: Vec<u8>,
        lsn: u64,
        checkpoint_no: u64,
        checkpoint_lsn: u64,
    ) -> Log {
        debug_assert!(is_normalized(lsn));
        debug_assert_eq!(buf.len(), LOG_BLOCK_SIZE);
        Log {
            geometry: files.geometry(),
            files,
            buf,
            buf_start_lsn: block_start(lsn),
            buf_max_blocks: cfg.buffer_size_bytes / LOG_BLOCK_SIZE,
            lsn,
            written_lsn: lsn,
            flushed_lsn: lsn,
            checkpoint_lsn,
            checkpoint_no,
            halted: None,
            stats: LogStats::default(),
        }
    }

    /// Frames one mtr's redo into the log buffer and returns its
    /// `(start_lsn, end_lsn)`. Nothing is synced; if the buffer would
    /// outgrow its size, what it holds is written first, and a frame larger
    /// than the whole buffer is written out in pieces as it is copied.
    ///
    /// An empty payload appends nothing and returns `(lsn, lsn)`: InnoDB
    /// writes no log for an mtr that logged nothing.
    ///
    /// # Panics
    ///
    /// If the frame would overwrite the block holding the checkpoint LSN
    /// (see [`Log::can_append`]), or the payload is 4 GiB or more. Both are
    /// engine bugs: the caller must checkpoint in time.
    pub fn append(&mut self, payload: &[u8]) -> Result<(u64, u64)> {
        self.check_halted()?;
        let start = self.lsn;
        if payload.is_empty() {
            return Ok((start, start));
        }
        assert!(
            u32::try_from(payload.len()).is_ok(),
            "an mtr of {} bytes is too large for one frame",
            payload.len()
        );
        let end = lsn_advance(start, (FRAME_HEADER_SIZE + payload.len()) as u64);
        assert!(
            self.end_fits(end),
            "redo log overflow: an mtr of {} bytes at lsn {start} would overwrite the block \
             holding checkpoint lsn {} (capacity {}); the engine must checkpoint first",
            payload.len(),
            self.checkpoint_lsn,
            self.geometry.capacity
        );
        let blocks_after = ((block_start(end) - self.buf_start_lsn) / LOG_BLOCK_SIZE as u64) + 1;
        if blocks_after > self.buf_max_blocks as u64 && self.written_lsn < self.lsn {
            let r = self.write_buffer();
            self.check_io(r)?;
        }
        self.mark_frame_start();
        let header = encode_frame_header(start, payload);
        let r = self.copy_in(&header);
        self.check_io(r)?;
        let r = self.copy_in(payload);
        self.check_io(r)?;
        debug_assert_eq!(self.lsn, end);
        Ok((start, end))
    }

    /// The current end of the log: where the next payload byte goes.
    pub fn lsn(&self) -> u64 {
        self.lsn
    }

    /// Payload before this LSN has been handed to the files (it may not be
    /// durable yet).
    pub fn written_lsn(&self) -> u64 {
        self.written_lsn
    }

    /// Payload before this LSN is durable.
    pub fn flushed_lsn(&self) -> u64 {
        self.flushed_lsn
    }

    /// Makes the log written (and durable if `sync`) at least up to `lsn`.
    /// A no-op if it already is; otherwise writes everything buffered,
    /// including the partly filled last block, and with `sync` then syncs
    /// every log file written since its last sync. An `lsn` past the end
    /// means the end.
    pub fn write_up_to(&mut self, lsn: u64, sync: bool) -> Result<()> {
        self.check_halted()?;
        let target = lsn.min(self.lsn);
        if target > self.written_lsn {
            let r = self.write_buffer();
            self.check_io(r)?;
        }
        if sync && target > self.flushed_lsn {
            let r = self.files.sync_dirty();
            self.stats.syncs += self.check_io(r)?;
            self.flushed_lsn = self.written_lsn;
        }
        Ok(())
    }

    /// The LSN of the last checkpoint written.
    pub fn checkpoint_lsn(&self) -> u64 {
        self.checkpoint_lsn
    }

    /// The number of the last checkpoint written.
    pub fn checkpoint_no(&self) -> u64 {
        self.checkpoint_no
    }

    /// Writes a checkpoint at `lsn` under the next number, into the slot
    /// for that number, and syncs file 0; then the checkpoint is current.
    /// `lsn` must be an mtr boundary (a start or end LSN `append` returned,
    /// or [`LOG_START_LSN`]): recovery reads frames from it.
    ///
    /// # Panics
    ///
    /// If `lsn` is below the current checkpoint or above the flushed LSN:
    /// a checkpoint may only promise what is durable.
    pub fn write_checkpoint(&mut self, lsn: u64) -> Result<()> {
        self.check_halted()?;
        assert!(
            lsn >= self.checkpoint_lsn,
            "checkpoint lsn {lsn} is below the current checkpoint {}",
            self.checkpoint_lsn
        );
        assert!(
            lsn <= self.flushed_lsn,
            "checkpoint lsn {lsn} is past the flushed lsn {}",
            self.flushed_lsn
        );
        let no = self.checkpoint_no + 1;
        let r = self.files.write_checkpoint(no, lsn);
        self.check_io(r)?;
        self.checkpoint_no = no;
        self.checkpoint_lsn = lsn;
        self.stats.checkpoints += 1;
        self.stats.syncs += 1;
        Ok(())
    }

    /// Bytes of LSN the ring holds: files x (file size - 2048).
    pub fn capacity(&self) -> u64 {
        self.geometry.capacity
    }

    /// The checkpoint age: how much log recovery would have to read.
    pub fn age(&self) -> u64 {
        self.lsn - self.checkpoint_lsn
    }

    /// Whether the checkpoint age has entered the margin (the last
    /// `1 / CHECKPOINT_MARGIN_DIVISOR` of the capacity) and a checkpoint is
    /// due before the log fills.
    pub fn needs_checkpoint(&self) -> bool {
        let capacity = self.geometry.capacity;
        self.age() > capacity - capacity / CHECKPOINT_MARGIN_DIVISOR
    }

    /// Whether a payload of `payload_len` bytes can be appended now without
    /// overwriting the block that holds the checkpoint LSN. `append` panics
    /// when this is false.
    pub fn can_append(&self, payload_len: usize) -> bool {
        let frame = FRAME_HEADER_SIZE as u64 + payload_len as u64;
        frame <= self.geometry.capacity && self.end_fits(lsn_advance(self.lsn, frame))
    }

    /// Counters.
    pub fn stats(&self) -> LogStats {
        self.stats
    }

    /// Whether a log ending at `end` leaves the block holding the checkpoint
    /// LSN untouched: the block holding `end` is written too (padded), so it
    /// must still be short of the checkpoint's block one lap on.
    fn end_fits(&self, end: u64) -> bool {
        block_start(end) + LOG_BLOCK_SIZE as u64
            <= block_start(normalize(self.checkpoint_lsn)) + self.geometry.capacity
    }

    /// Records a frame starting at `lsn` in its block's first_rec_group
    /// unless an earlier frame already starts there.
    fn mark_frame_start(&mut self) {
        let at = (block_start(self.lsn) - self.buf_start_lsn) as usize;
        let block = &mut self.buf[at..at + LOG_BLOCK_SIZE];
        if first_rec_group(block) == 0 {
            set_first_rec_group(block, block_offset(self.lsn));
        }
    }

    /// Copies `data` into the buffer at `lsn`, opening new blocks as blocks
    /// fill. Writes the buffer out when it is full of full blocks.
    fn copy_in(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let off = block_offset(self.lsn);
            let n = (LOG_BLOCK_CHECKSUM - off).min(data.len());
            let at = (self.lsn - self.buf_start_lsn) as usize;
            self.buf[at..at + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            self.lsn += n as u64;
            if off + n == LOG_BLOCK_CHECKSUM {
                self.open_next_block()?;
            }
        }
        Ok(())
    }

    /// Called when the block holding `lsn` has just filled (`lsn` is at its
    /// trailer): moves `lsn` to the next block's first payload byte, adding
    /// that block to the buffer, after writing the buffer out if it is at
    /// its size limit.
    fn open_next_block(&mut self) -> Result<()> {
        debug_assert_eq!(block_offset(self.lsn), LOG_BLOCK_CHECKSUM);
        let next = block_start(self.lsn) + LOG_BLOCK_SIZE as u64;
        if self.buf.len() / LOG_BLOCK_SIZE >= self.buf_max_blocks {
            self.write_buffer()?;
        }
        let at = self.buf.len();
        debug_assert_eq!(self.buf_start_lsn + at as u64, next);
        self.buf.resize(at + LOG_BLOCK_SIZE, 0);
        init_block(&mut self.buf[at..], next);
        self.lsn = next + LOG_BLOCK_HDR_SIZE as u64;
        Ok(())
    }

    /// Writes every buffered block, the partly filled last one padded with
    /// zeros, then keeps only that last block (if it is not full). `lsn` may
    /// be at a block's trailer here (called from `open_next_block`).
    fn write_buffer(&mut self) -> Result<()> {
        let n_blocks = self.buf.len() / LOG_BLOCK_SIZE;
        debug_assert!(n_blocks >= 1);
        let last_start = self.buf_start_lsn + ((n_blocks - 1) * LOG_BLOCK_SIZE) as u64;
        let last_len = (self.lsn - last_start) as usize;
        debug_assert!((LOG_BLOCK_HDR_SIZE..=LOG_BLOCK_CHECKSUM).contains(&last_len));
        let next_checkpoint_no = self.checkpoint_no + 1;
        for (i, block) in self.buf.chunks_exact_mut(LOG_BLOCK_SIZE).enumerate() {
            let len = if i + 1 == n_blocks {
                last_len
            } else {
                LOG_BLOCK_CHECKSUM
            };
            debug_assert!(block[len..LOG_BLOCK_CHECKSUM].iter().all(|&b| b == 0));
            set_data_len(block, len);
            set_checkpoint_no(block, next_checkpoint_no);
            seal_block(block);
        }
        let writes = self.files.write_blocks(self.buf_start_lsn, &self.buf)?;
        self.stats.writes += writes;
        self.stats.bytes_written += self.buf.len() as u64;
        self.written_lsn = normalize(self.lsn);
        if last_len < LOG_BLOCK_CHECKSUM {
            self.buf.copy_within((n_blocks - 1) * LOG_BLOCK_SIZE.., 0);
            self.buf.truncate(LOG_BLOCK_SIZE);
            self.buf_start_lsn = last_start;
        } else {
            self.buf.clear();
            self.buf_start_lsn = last_start + LOG_BLOCK_SIZE as u64;
        }
        Ok(())
    }

    /// Fails if an earlier I/O error stopped the log.
    fn check_halted(&self) -> Result<()> {
        match &self.halted {
            Some(why) => Err(Error::Halted(format!("redo log: {why}"))),
            None => Ok(()),
        }
    }

    /// Passes a result through, stopping the log on an error.
    fn check_io<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.halted = Some(e.to_string());
        }
        r
    }
}

/// Rejects a scan result that cannot describe a log of this geometry.
fn check_scan(scan: &ScanResult, geometry: &Geometry) -> Result<()> {
    let bad = |what: &str| {
        Err(Error::InvalidArgument(format!(
            "the scan result does not describe this redo log: {what}"
        )))
    };
    if !(LOG_START_LSN..=LSN_MAX).contains(&scan.checkpoint_lsn) {
        return bad("checkpoint lsn out of range");
    }
    if !(1..=CHECKPOINT_NO_MAX).contains(&scan.checkpoint_no) {
        return bad("checkpoint number out of range");
    }
    let start = normalize(scan.checkpoint_lsn);
    if !is_normalized(scan.end_lsn) || scan.end_lsn < start {
        return bad("end lsn is not a payload position at or after the checkpoint");
    }
    if block_start(scan.end_lsn) + LOG_BLOCK_SIZE as u64 > block_start(start) + geometry.capacity {
        return bad("end lsn is more than the capacity past the checkpoint");
    }
    Ok(())
}

/// The first_rec_group of the partly filled block at `block_lsn` that keeps
/// the bytes before `end_off` of `disk`: the first frame start among those
/// the block recorded before `end_off` (frames that may precede the
/// checkpoint and so are not in the scan) and those the scan found in it.
fn recompute_first_rec_group(
    disk: &[u8],
    block_lsn: u64,
    end_off: usize,
    scan: &ScanResult,
) -> usize {
    let stored = first_rec_group(disk);
    let mut frg = if (LOG_BLOCK_HDR_SIZE..end_off).contains(&stored) {
        stored
    } else {
        0
    };
    let first = scan.mtrs.partition_point(|m| m.start_lsn < block_lsn);
    if let Some(m) = scan.mtrs.get(first) {
        let payload = block_lsn + LOG_BLOCK_HDR_SIZE as u64..block_lsn + end_off as u64;
        if payload.contains(&m.start_lsn) {
            let off = (m.start_lsn - block_lsn) as usize;
            if frg == 0 || off < frg {
                frg = off;
            }
        }
    }
    frg
}
