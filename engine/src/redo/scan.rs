//! Reading the log at recovery: find the newest checkpoint, then read
//! blocks and frames from it until the log ends. Mirrors `log0recv.cc`
//! (`recv_find_max_checkpoint`, `recv_group_scan_log_recs`,
//! `recv_scan_log_recs`), minus record parsing, which is the `mtr` module's.
//!
//! The scan trusts nothing it reads. Every block must pass its checksum,
//! carry the block number its LSN implies, and carry a checkpoint number no
//! smaller than the block before it; every frame must have a sane length
//! and a checksum over its start LSN and payload. The first failure ends the
//! log there, and [`ScanResult::tail`] says which check it was. The scan
//! reads at most one lap of the ring past the checkpoint and never panics on
//! any file contents.

use super::block::{
    self, block_no, block_no_at, block_offset, block_start, checksum_ok, data_len,
    decode_frame_header, first_rec_group, frame_crc, lsn_advance, normalize, FRAME_HEADER_SIZE,
    LOG_BLOCK_CHECKSUM, LOG_BLOCK_HDR_SIZE, LOG_BLOCK_SIZE,
};
use super::group::LogFiles;
use super::LogConfig;
use crate::error::Result;
use crate::io::Storage;
use std::fmt;

/// How many bytes the scan reads per I/O.
const SCAN_CHUNK_BYTES: usize = 64 * 1024;
const _: () = assert!(SCAN_CHUNK_BYTES.is_multiple_of(LOG_BLOCK_SIZE));

/// One complete mini-transaction frame found by [`scan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedMtr {
    /// The LSN of the frame's first byte.
    pub start_lsn: u64,
    /// The LSN just past the frame (the next frame's start).
    pub end_lsn: u64,
    /// The mtr's redo, as given to [`Log::append`](super::Log::append).
    pub payload: Vec<u8>,
}

/// Why a scan stopped. Every variant is a normal way for a log to end after
/// a crash; which one it was is for diagnostics and tests. `lsn` is the
/// block start for block checks and the frame start for frame checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanEnd {
    /// The last block was only partly filled and every frame in it was
    /// complete: the log as last written.
    CleanEnd,
    /// A block failed its checksum: a torn write, space never written, or
    /// garbage.
    BadChecksum {
        /// The block's LSN.
        lsn: u64,
    },
    /// A block carries another block number than its LSN implies: a block
    /// left from an earlier lap of the ring.
    WrongBlockNo {
        /// The block's LSN.
        lsn: u64,
    },
    /// A block carries a smaller checkpoint number than the block before
    /// it: a block written by an earlier run, beyond where that run's log
    /// was cut short by lost writes.
    StaleCheckpointNo {
        /// The block's LSN.
        lsn: u64,
    },
    /// A block passed its checksum but its header is impossible (data
    /// length outside 12 ..= 508, a first frame offset outside the data,
    /// or less data than the checkpoint position in the first block).
    BadBlockHeader {
        /// The block's LSN.
        lsn: u64,
    },
    /// A frame runs past the end of the valid blocks: its end was never
    /// written or was lost.
    IncompleteFrame {
        /// The frame's start LSN.
        lsn: u64,
    },
    /// A frame's length is 0 or larger than the ring.
    BadFrameLength {
        /// The frame's start LSN.
        lsn: u64,
    },
    /// A frame fails its checksum: its blocks mix two writes.
    BadFrameCrc {
        /// The frame's start LSN.
        lsn: u64,
    },
    /// A whole lap of valid data was read without finding the end. The
    /// writer never fills the ring, so only damage produces this.
    Wrapped,
}

impl fmt::Display for ScanEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanEnd::CleanEnd => write!(f, "clean end of the log"),
            ScanEnd::BadChecksum { lsn } => write!(f, "log block at lsn {lsn} fails its checksum"),
            ScanEnd::WrongBlockNo { lsn } => {
                write!(f, "log block at lsn {lsn} is from an earlier lap")
            }
            ScanEnd::StaleCheckpointNo { lsn } => {
                write!(f, "log block at lsn {lsn} is left from an earlier run")
            }
            ScanEnd::BadBlockHeader { lsn } => {
                write!(f, "log block at lsn {lsn} has an impossible header")
            }
            ScanEnd::IncompleteFrame { lsn } => write!(f, "the frame at lsn {lsn} is incomplete"),
            ScanEnd::BadFrameLength { lsn } => {
                write!(f, "the frame at lsn {lsn} has an impossible length")
            }
            ScanEnd::BadFrameCrc { lsn } => write!(f, "the frame at lsn {lsn} fails its checksum"),
            ScanEnd::Wrapped => write!(f, "a full lap of the log was read without an end"),
        }
    }
}

/// What [`scan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanResult {
    /// The LSN of the newest valid checkpoint: where recovery starts.
    pub checkpoint_lsn: u64,
    /// Its number.
    pub checkpoint_no: u64,
    /// The end of the last complete frame: where the log continues. With no
    /// frames it is the checkpoint LSN moved past any block header (the
    /// checkpoint of a new log, [`LOG_START_LSN`](super::LOG_START_LSN),
    /// gives `LOG_START_LSN + 12`).
    pub end_lsn: u64,
    /// The complete frames from the checkpoint on, in LSN order.
    pub mtrs: Vec<ScannedMtr>,
    /// Why the scan stopped.
    pub tail: ScanEnd,
}

/// Reads the log in `storage`: validates the group header against `cfg`
/// (a mismatch is [`Error::InvalidArgument`](crate::Error::InvalidArgument);
/// a missing or short file or a bad header is
/// [`Error::Corrupt`](crate::Error::Corrupt)), takes the valid checkpoint with
/// the highest number (none valid is `Error::Corrupt`), and returns every
/// complete frame from it to the end of the log. I/O errors are returned;
/// damaged log contents never are: they end the log.
pub fn scan(storage: &mut dyn Storage, cfg: &LogConfig) -> Result<ScanResult> {
    scan_with(storage, cfg, false)
}

/// [`scan`], with the `accept-torn-log-tail` canary: a block that fails its
/// checksum, and a frame that fails its own, are taken as they are once
/// (the planted bug the simulator must catch), then the scan stops.
pub fn scan_with(
    storage: &mut dyn Storage,
    cfg: &LogConfig,
    accept_torn_tail: bool,
) -> Result<ScanResult> {
    cfg.validate()?;
    let mut files = LogFiles::open(storage, cfg)?;
    let capacity = files.geometry().capacity;
    let (checkpoint_no, checkpoint_lsn) = files.read_checkpoint()?;
    let start = normalize(checkpoint_lsn);
    let first_block = block_start(start);
    // One lap: the block after the last one read is the checkpoint's own.
    let limit = first_block + capacity;
    let mut frames = FrameParser {
        pending: Vec::new(),
        next_lsn: start,
        limit,
        capacity,
        mtrs: Vec::new(),
        accept_bad_crc: accept_torn_tail,
    };
    let mut accepted_torn_block = false;
    let mut chunk = vec![0u8; SCAN_CHUNK_BYTES];
    let mut prev_checkpoint_no = None;
    let mut lsn = first_block;
    let blocks_end = 'read: loop {
        if lsn >= limit {
            break ScanEnd::Wrapped;
        }
        let want = (limit - lsn).min(SCAN_CHUNK_BYTES as u64) as usize;
        let n = files.read_blocks(lsn, &mut chunk[..want])?;
        for block in chunk[..n].chunks_exact(LOG_BLOCK_SIZE) {
            if let Err(end) = check_block(block, lsn, prev_checkpoint_no) {
                let torn = matches!(end, ScanEnd::BadChecksum { .. });
                if !(accept_torn_tail && torn && !accepted_torn_block) {
                    break 'read end;
                }
                accepted_torn_block = true;
            }
            prev_checkpoint_no = Some(block::checkpoint_no(block));
            let len = data_len(block);
            let from = if lsn == first_block {
                block_offset(start)
            } else {
                LOG_BLOCK_HDR_SIZE
            };
            if len < from {
                break 'read ScanEnd::BadBlockHeader { lsn };
            }
            if let Some(end) = frames.push(&block[from..len]) {
                // A bad frame inside valid blocks: that, not the blocks,
                // is why the log ends.
                return Ok(frames.finish(checkpoint_lsn, checkpoint_no, end));
            }
            if len < LOG_BLOCK_CHECKSUM {
                break 'read ScanEnd::CleanEnd;
            }
            lsn += LOG_BLOCK_SIZE as u64;
        }
    };
    let tail = if frames.pending.is_empty() {
        blocks_end
    } else {
        ScanEnd::IncompleteFrame {
            lsn: frames.next_lsn,
        }
    };
    Ok(frames.finish(checkpoint_lsn, checkpoint_no, tail))
}

/// Checks a block read at `lsn` on its own and against the checkpoint
/// number of the block before it.
fn check_block(block: &[u8], lsn: u64, prev_checkpoint_no: Option<u32>) -> Result<(), ScanEnd> {
    if !checksum_ok(block) {
        return Err(ScanEnd::BadChecksum { lsn });
    }
    if block_no(block) != block_no_at(lsn) {
        return Err(ScanEnd::WrongBlockNo { lsn });
    }
    if prev_checkpoint_no.is_some_and(|prev| block::checkpoint_no(block) < prev) {
        return Err(ScanEnd::StaleCheckpointNo { lsn });
    }
    let len = data_len(block);
    let frg = first_rec_group(block);
    let header_ok = (LOG_BLOCK_HDR_SIZE..=LOG_BLOCK_CHECKSUM).contains(&len)
        && (frg == 0 || (LOG_BLOCK_HDR_SIZE..len).contains(&frg));
    if !header_ok {
        return Err(ScanEnd::BadBlockHeader { lsn });
    }
    Ok(())
}

/// Cuts the payload stream of valid blocks into frames.
struct FrameParser {
    /// Payload bytes from `next_lsn` on that do not yet form a frame.
    pending: Vec<u8>,
    /// The start of the next frame.
    next_lsn: u64,
    /// The first block a frame may not reach: the checkpoint's block one
    /// lap on (the writer never writes there).
    limit: u64,
    /// The ring's capacity: no frame can be longer.
    capacity: u64,
    /// Complete frames so far.
    mtrs: Vec<ScannedMtr>,
    /// The `accept-torn-log-tail` canary: take one frame with a bad
    /// checksum as if it were good.
    accept_bad_crc: bool,
}

impl FrameParser {
    /// Takes the next payload bytes and cuts every complete frame off
    /// them. Returns why parsing must stop, if a frame is bad.
    fn push(&mut self, bytes: &[u8]) -> Option<ScanEnd> {
        self.pending.extend_from_slice(bytes);
        let mut pos = 0;
        let stop = loop {
            let rest = &self.pending[pos..];
            if rest.len() < FRAME_HEADER_SIZE {
                break None;
            }
            let (len, crc) = decode_frame_header(&rest[..FRAME_HEADER_SIZE]);
            let lsn = self.next_lsn;
            if len == 0 || u64::from(len) > self.capacity {
                break Some(ScanEnd::BadFrameLength { lsn });
            }
            let total = FRAME_HEADER_SIZE + len as usize;
            if rest.len() < total {
                break None;
            }
            let payload = &rest[FRAME_HEADER_SIZE..total];
            let bad_crc = frame_crc(lsn, payload) != crc;
            if bad_crc && !self.accept_bad_crc {
                break Some(ScanEnd::BadFrameCrc { lsn });
            }
            if bad_crc {
                self.accept_bad_crc = false;
            }
            let end = lsn_advance(lsn, total as u64);
            if block_start(end) >= self.limit {
                break Some(ScanEnd::Wrapped);
            }
            self.mtrs.push(ScannedMtr {
                start_lsn: lsn,
                end_lsn: end,
                payload: payload.to_vec(),
            });
            self.next_lsn = end;
            pos += total;
        };
        self.pending.drain(..pos);
        stop
    }

    /// The result of a scan that stopped for `tail`.
    fn finish(self, checkpoint_lsn: u64, checkpoint_no: u64, tail: ScanEnd) -> ScanResult {
        ScanResult {
            checkpoint_lsn,
            checkpoint_no,
            end_lsn: self.next_lsn,
            mtrs: self.mtrs,
            tail,
        }
    }
}
