//! Tests of the redo log through its public API, with on-disk damage made
//! by editing the files of a [`MemStorage`] directly: torn tails, lost
//! writes, stale blocks, corrupt checkpoints and garbage.

use super::block::{
    block_offset, block_start, first_rec_group, LOG_BLOCK_CHECKSUM, LOG_BLOCK_HDR_SIZE,
    LOG_CHECKPOINT_1, LOG_CHECKPOINT_2,
};
use super::group::file_name;
use super::*;
use crate::error::{Error, Result};
use crate::io::{File, MemStorage, Storage};
use proptest::prelude::*;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A small deterministic generator (xorshift64*), so tests need no RNG
/// dependency and every payload is reproducible from its seed.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(super) fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next() as u8;
        }
    }
}

/// A payload of `len` bytes determined by `seed`.
pub(super) fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    Rng::new(seed).fill(&mut v);
    v
}

/// Two files of 64 KiB (the smallest allowed) and an 8 KiB buffer: the ring
/// is small enough to wrap quickly.
pub(super) fn small_cfg() -> LogConfig {
    LogConfig {
        files: 2,
        file_size_bytes: LOG_FILE_SIZE_MIN,
        buffer_size_bytes: 8 * 1024,
    }
}

/// Appends `p` and returns the frame as a scan would report it.
pub(super) fn append(log: &mut Log, p: Vec<u8>) -> Result<ScannedMtr> {
    let (start_lsn, end_lsn) = log.append(&p)?;
    Ok(ScannedMtr {
        start_lsn,
        end_lsn,
        payload: p,
    })
}

/// Asserts two frame lists are equal, printing only their LSNs on failure
/// (payloads would drown the message).
#[track_caller]
pub(super) fn assert_frames(actual: &[ScannedMtr], expected: &[ScannedMtr], what: &str) {
    let lsns = |v: &[ScannedMtr]| -> Vec<(u64, u64)> {
        v.iter().map(|m| (m.start_lsn, m.end_lsn)).collect()
    };
    assert_eq!(lsns(actual), lsns(expected), "{what}");
    assert!(actual == expected, "{what}: payloads differ");
}

/// The file and offset of the block at `lsn`.
fn block_place(cfg: &LogConfig, lsn: u64) -> (String, usize) {
    let (file, offset, _) = Geometry::new(cfg).locate(block_start(lsn));
    (file_name(file), offset as usize)
}

/// A copy of the block at `lsn` as it is on disk.
fn read_block(storage: &MemStorage, cfg: &LogConfig, lsn: u64) -> Vec<u8> {
    let (name, offset) = block_place(cfg, lsn);
    let data = storage.read_file(&name).expect("log file exists");
    data[offset..offset + LOG_BLOCK_SIZE].to_vec()
}

/// Overwrites the block at `lsn` on disk.
fn write_block(storage: &MemStorage, cfg: &LogConfig, lsn: u64, block: &[u8]) {
    let (name, offset) = block_place(cfg, lsn);
    let mut data = storage.read_file(&name).expect("log file exists");
    data[offset..offset + LOG_BLOCK_SIZE].copy_from_slice(block);
    storage.write_file(&name, data);
}

/// Every file of the directory, to restore parts of later.
fn snapshot(storage: &MemStorage, cfg: &LogConfig) -> Vec<Vec<u8>> {
    (0..cfg.files as usize)
        .map(|i| storage.read_file(&file_name(i)).expect("log file exists"))
        .collect()
}

/// Puts back the block at `lsn` as it was in `snap`: the write of that
/// block since then was lost.
fn restore_block(storage: &MemStorage, cfg: &LogConfig, snap: &[Vec<u8>], lsn: u64) {
    let (name, offset) = block_place(cfg, lsn);
    let file: usize = name["ib_logfile".len()..].parse().expect("log file name");
    write_block(
        storage,
        cfg,
        lsn,
        &snap[file][offset..offset + LOG_BLOCK_SIZE],
    );
}

/// Scans and reopens, as recovery does.
fn reopen(storage: &mut MemStorage, cfg: &LogConfig) -> Result<(ScanResult, Log)> {
    let s = scan(storage, cfg)?;
    let log = Log::open(storage, cfg, &s)?;
    Ok((s, log))
}

#[test]
fn fresh_log_scans_to_a_clean_end() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = small_cfg();
    assert!(!exists(&mut storage)?);
    let log = Log::create(&mut storage, &cfg)?;
    assert!(exists(&mut storage)?);
    assert_eq!(log.lsn(), LOG_START_LSN + LOG_BLOCK_HDR_SIZE as u64);
    assert_eq!(log.flushed_lsn(), log.lsn());
    assert_eq!(
        (log.checkpoint_no(), log.checkpoint_lsn()),
        (1, LOG_START_LSN)
    );
    assert_eq!(log.capacity(), 2 * (LOG_FILE_SIZE_MIN - 2048));
    drop(log);
    let s = scan(&mut storage, &cfg)?;
    let expected = ScanResult {
        checkpoint_lsn: LOG_START_LSN,
        checkpoint_no: 1,
        end_lsn: LOG_START_LSN + LOG_BLOCK_HDR_SIZE as u64,
        mtrs: vec![],
        tail: ScanEnd::CleanEnd,
    };
    assert_eq!(s, expected);
    assert!(Log::create(&mut storage, &cfg).is_err(), "files exist");
    Ok(())
}

#[test]
fn frames_of_every_small_size_and_some_large_round_trip() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = LogConfig {
        files: 2,
        file_size_bytes: 1024 * 1024,
        buffer_size_bytes: 16 * 1024,
    };
    let mut log = Log::create(&mut storage, &cfg)?;
    let mut frames = Vec::new();
    let sizes = (1..=1100).chain(19_990..=20_000);
    for (i, len) in sizes.enumerate() {
        frames.push(append(&mut log, payload(i as u64, len))?);
        if i % 7 == 0 {
            log.write_up_to(log.lsn(), i % 2 == 0)?;
        }
    }
    for pair in frames.windows(2) {
        assert_eq!(pair[0].end_lsn, pair[1].start_lsn, "frames are contiguous");
    }
    log.write_up_to(log.lsn(), true)?;
    let end = log.lsn();
    drop(log);
    let s = scan(&mut storage, &cfg)?;
    assert_eq!(s.tail, ScanEnd::CleanEnd);
    assert_eq!(s.end_lsn, end);
    assert_frames(&s.mtrs, &frames, "scan returns exactly the frames appended");
    Ok(())
}

#[test]
fn frames_larger_than_the_buffer_are_written_in_pieces() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = LogConfig {
        buffer_size_bytes: LOG_BUFFER_SIZE_MIN,
        ..small_cfg()
    };
    let mut log = Log::create(&mut storage, &cfg)?;
    let before = log.stats().writes;
    let frames = vec![
        append(&mut log, payload(1, 20_000))?,
        append(&mut log, payload(2, 3))?,
        append(&mut log, payload(3, 9_000))?,
    ];
    assert!(
        log.stats().writes > before + 10,
        "the buffer was written as it filled"
    );
    assert!(log.written_lsn() < log.lsn());
    log.write_up_to(u64::MAX, true)?;
    assert_eq!(log.flushed_lsn(), log.lsn());
    drop(log);
    assert_frames(&scan(&mut storage, &cfg)?.mtrs, &frames, "big frames");
    Ok(())
}

#[test]
fn write_up_to_does_nothing_twice() -> Result<()> {
    let mut storage = MemStorage::new();
    let mut log = Log::create(&mut storage, &small_cfg())?;
    let f = append(&mut log, payload(1, 100))?;
    log.write_up_to(f.end_lsn, false)?;
    assert_eq!(log.written_lsn(), f.end_lsn);
    assert!(log.flushed_lsn() < f.end_lsn);
    let stats = log.stats();
    log.write_up_to(f.end_lsn, false)?;
    log.write_up_to(f.start_lsn, false)?;
    assert_eq!(log.stats(), stats);
    log.write_up_to(f.end_lsn, true)?;
    assert_eq!(
        log.stats().writes,
        stats.writes,
        "already written: sync only"
    );
    assert!(log.stats().syncs > stats.syncs);
    let stats = log.stats();
    log.write_up_to(f.end_lsn, true)?;
    assert_eq!(log.stats(), stats);
    assert_eq!(
        log.append(&[])?,
        (f.end_lsn, f.end_lsn),
        "an empty mtr logs nothing"
    );
    Ok(())
}

/// Checkpoints like the page cleaner: at the start of a frame about a
/// quarter of the ring back (the oldest dirty page), after making it
/// durable.
pub(super) fn checkpoint_behind(log: &mut Log, frames: &[ScannedMtr]) -> Result<()> {
    let behind = log.lsn() - log.capacity() / 4;
    let target = frames
        .iter()
        .find(|f| f.start_lsn >= behind)
        .map_or(log.lsn(), |f| f.start_lsn);
    log.write_up_to(target, true)?;
    log.write_checkpoint(target)
}

#[test]
fn the_log_wraps_many_laps_and_scans_from_the_last_checkpoint() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = small_cfg();
    let mut log = Log::create(&mut storage, &cfg)?;
    let capacity = log.capacity();
    let mut frames: Vec<ScannedMtr> = Vec::new();
    let mut i = 0u64;
    for lap_goal in [6, 12] {
        while log.lsn() < LOG_START_LSN + lap_goal * capacity {
            let len = (i * 7919 % 3000 + 1) as usize;
            if log.needs_checkpoint() {
                checkpoint_behind(&mut log, &frames)?;
            }
            assert!(log.can_append(len));
            frames.push(append(&mut log, payload(i, len))?);
            if i.is_multiple_of(5) {
                log.write_up_to(log.lsn(), i.is_multiple_of(10))?;
            }
            i += 1;
        }
        log.write_up_to(log.lsn(), true)?;
        let (end, checkpoint) = (log.lsn(), log.checkpoint_lsn());
        assert!(log.checkpoint_no() > 6);
        drop(log);
        let (s, reopened) = reopen(&mut storage, &cfg)?;
        log = reopened;
        let expected: Vec<_> = frames
            .iter()
            .filter(|f| f.start_lsn >= checkpoint)
            .cloned()
            .collect();
        assert_eq!(s.checkpoint_lsn, checkpoint);
        assert_eq!(s.end_lsn, end);
        assert_eq!(s.tail, ScanEnd::CleanEnd);
        assert_frames(
            &s.mtrs,
            &expected,
            "exactly the frames after the checkpoint",
        );
        assert_eq!(log.lsn(), end);
    }
    Ok(())
}

#[test]
#[should_panic(expected = "redo log overflow")]
fn appending_over_the_checkpoint_is_a_panic() {
    let mut storage = MemStorage::new();
    let mut log = Log::create(&mut storage, &small_cfg()).expect("create");
    let mut i = 0;
    while log.can_append(1000) {
        log.append(&payload(i, 1000)).expect("append");
        i += 1;
    }
    assert!(log.needs_checkpoint());
    let _ = log.append(&payload(i, 1000));
}

#[test]
fn a_torn_last_block_ends_the_log_at_the_last_complete_frame() -> Result<()> {
    let cfg = small_cfg();
    for (case, garbage_at) in [(0u64, 12usize), (1, 100), (2, 300), (3, 500)] {
        let mut storage = MemStorage::new();
        let mut log = Log::create(&mut storage, &cfg)?;
        let mut frames = Vec::new();
        for (j, len) in [100usize, 700, 50, 1500, 30, 200, 600].iter().enumerate() {
            frames.push(append(&mut log, payload(case * 100 + j as u64, *len))?);
        }
        log.write_up_to(log.lsn(), true)?;
        let last = block_start(log.lsn());
        drop(log);
        let mut block = read_block(&storage, &cfg, last);
        let end = (garbage_at + 64).min(LOG_BLOCK_SIZE);
        Rng::new(case).fill(&mut block[garbage_at..end]);
        write_block(&storage, &cfg, last, &block);
        let s = scan(&mut storage, &cfg)?;
        let complete: Vec<_> = frames
            .iter()
            .filter(|f| f.end_lsn <= last + LOG_BLOCK_HDR_SIZE as u64)
            .cloned()
            .collect();
        assert_frames(&s.mtrs, &complete, &format!("case {case}"));
        let cut = frames.get(complete.len()).map(|f| f.start_lsn);
        let tail = match cut {
            Some(lsn) if lsn < last => ScanEnd::IncompleteFrame { lsn },
            _ => ScanEnd::BadChecksum { lsn: last },
        };
        assert_eq!(s.tail, tail, "case {case}");
    }
    Ok(())
}

#[test]
fn losing_half_of_a_multi_block_frame_ends_the_log_before_it() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = small_cfg();
    let mut log = Log::create(&mut storage, &cfg)?;
    let mut frames = vec![
        append(&mut log, payload(1, 40))?,
        append(&mut log, payload(2, 900))?,
    ];
    log.write_up_to(log.lsn(), true)?;
    let before = snapshot(&storage, &cfg);
    let big = append(&mut log, payload(3, 5000))?;
    log.write_up_to(log.lsn(), true)?;
    drop(log);
    // The second half of the big frame never reached the disk.
    let mut b = block_start(super::block::lsn_advance(big.start_lsn, 2500));
    while b <= block_start(big.end_lsn) {
        restore_block(&storage, &cfg, &before, b);
        b += LOG_BLOCK_SIZE as u64;
    }
    let (s, mut log) = reopen(&mut storage, &cfg)?;
    assert_frames(&s.mtrs, &frames, "before the torn frame");
    assert_eq!(s.tail, ScanEnd::IncompleteFrame { lsn: big.start_lsn });
    assert_eq!(s.end_lsn, big.start_lsn);
    // The log continues where the torn frame started.
    frames.push(append(&mut log, payload(4, 30))?);
    log.write_up_to(log.lsn(), true)?;
    drop(log);
    let s = scan(&mut storage, &cfg)?;
    assert_frames(&s.mtrs, &frames, "after the torn frame is overwritten");
    assert_eq!(s.tail, ScanEnd::CleanEnd);
    Ok(())
}

#[test]
fn a_corrupt_newest_checkpoint_falls_back_to_the_other_slot() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = small_cfg();
    let mut log = Log::create(&mut storage, &cfg)?;
    let a = append(&mut log, payload(1, 300))?;
    log.write_up_to(a.end_lsn, true)?;
    log.write_checkpoint(a.end_lsn)?; // number 2: the even slot
    let b = append(&mut log, payload(2, 300))?;
    log.write_up_to(b.end_lsn, true)?;
    drop(log);
    let s = scan(&mut storage, &cfg)?;
    assert_eq!((s.checkpoint_no, s.checkpoint_lsn), (2, a.end_lsn));
    assert_frames(&s.mtrs, std::slice::from_ref(&b), "from checkpoint 2");

    let mut file0 = storage.read_file("ib_logfile0").expect("file 0");
    file0[LOG_CHECKPOINT_2 as usize + 9] ^= 0x40;
    storage.write_file("ib_logfile0", file0.clone());
    let s = scan(&mut storage, &cfg)?;
    assert_eq!((s.checkpoint_no, s.checkpoint_lsn), (1, LOG_START_LSN));
    assert_frames(&s.mtrs, &[a, b], "from checkpoint 1");

    file0[LOG_CHECKPOINT_1 as usize + 3] ^= 0x01;
    storage.write_file("ib_logfile0", file0);
    let err = scan(&mut storage, &cfg).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    Ok(())
}

/// Appends a frame whose payload makes it end exactly at a block boundary,
/// at least two blocks on.
fn append_to_block_end(log: &mut Log, seed: u64) -> Result<ScannedMtr> {
    let used = block_offset(log.lsn()) - LOG_BLOCK_HDR_SIZE;
    let len = (LOG_BLOCK_CHECKSUM - LOG_BLOCK_HDR_SIZE - used) + 2 * 496 - 8;
    let f = append(log, payload(seed, len))?;
    assert_eq!(block_offset(f.end_lsn), LOG_BLOCK_HDR_SIZE);
    Ok(f)
}

/// One round of the stale-block scenario on an open log whose contents are
/// all durable. Returns the reopened log and the frames recovery keeps.
///
/// 1. Frames A, B, C are written but not synced; B ends exactly at a block
///    boundary X, where C starts. Only the block holding A's start is lost.
/// 2. Recovery ends the log at A. The next run appends D, exactly as long as
///    A and B together, so D ends at X too, and syncs; but the header-only
///    block it wrote at X is lost, and the old block X (C's start, good
///    checksum, right block number) shows through.
/// 3. The scan must return D and stop at X: C's frame there is
///    self-consistent (same start LSN), and only the block's checkpoint
///    number shows that it is stale.
fn stale_round(
    storage: &mut MemStorage,
    cfg: &LogConfig,
    mut log: Log,
    mut kept: Vec<ScannedMtr>,
    seed: u64,
) -> Result<(Log, Vec<ScannedMtr>)> {
    let durable = snapshot(storage, cfg);
    let a = append(&mut log, payload(seed, 300))?;
    let b = append_to_block_end(&mut log, seed + 1)?;
    let c = append(&mut log, payload(seed + 2, 1500))?;
    log.write_up_to(c.end_lsn, false)?;
    let lost_run = snapshot(storage, cfg);
    drop(log);
    restore_block(storage, cfg, &durable, a.start_lsn);

    let (s, mut log) = reopen(storage, cfg)?;
    assert_eq!(s.end_lsn, a.start_lsn);
    assert_eq!(s.tail, ScanEnd::CleanEnd);
    assert_frames(&s.mtrs, &kept, "the log ends before A");
    let d_len = a.payload.len() + b.payload.len() + 8;
    let d = append(&mut log, payload(seed + 3, d_len))?;
    assert_eq!(d.end_lsn, c.start_lsn);
    log.write_up_to(d.end_lsn, true)?;
    drop(log);
    let x = block_start(c.start_lsn);
    let stale = read_block(storage, cfg, x);
    restore_block(storage, cfg, &lost_run, x);
    assert!(super::block::checksum_ok(&read_block(storage, cfg, x)));

    let s = scan(storage, cfg)?;
    kept.push(d);
    assert_frames(&s.mtrs, &kept, "D is recovered and stale C is not");
    assert_eq!(s.tail, ScanEnd::StaleCheckpointNo { lsn: x });
    // Put back what D's run wrote, so the next round starts from a log
    // that is all durable.
    write_block(storage, cfg, x, &stale);
    let (s, log) = reopen(storage, cfg)?;
    assert_frames(&s.mtrs, &kept, "after D's write is restored");
    Ok((log, kept))
}

#[test]
fn stale_blocks_after_a_reopen_are_not_replayed() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = small_cfg();
    let mut log = Log::create(&mut storage, &cfg)?;
    let mut kept = vec![
        append(&mut log, payload(100, 700))?,
        append(&mut log, payload(101, 20))?,
    ];
    log.write_up_to(log.lsn(), true)?;
    // Each round after the first starts from a run that was itself opened
    // after recovery and wrote no checkpoint of its own: the case that
    // needs `open` to re-write the recovered checkpoint.
    for round in 0..4 {
        (log, kept) = stale_round(&mut storage, &cfg, log, kept, round * 10)?;
    }
    // Two reopens a round, each re-writing the recovered checkpoint.
    assert_eq!(log.checkpoint_no(), 1 + 4 * 2);
    Ok(())
}

#[test]
fn open_keeps_the_partial_block_and_first_rec_group_tracks_frames() -> Result<()> {
    let mut storage = MemStorage::new();
    let cfg = small_cfg();
    let mut log = Log::create(&mut storage, &cfg)?;
    let mut frames = Vec::new();
    for (i, len) in [5usize, 600, 1, 2000, 17, 480, 496, 300].iter().enumerate() {
        frames.push(append(&mut log, payload(i as u64, *len))?);
    }
    log.write_up_to(log.lsn(), true)?;
    let end = log.lsn();
    let tail_block = read_block(&storage, &cfg, end);
    drop(log);
    let (_, mut log) = reopen(&mut storage, &cfg)?;
    for (i, len) in [3usize, 1000, 40].iter().enumerate() {
        frames.push(append(&mut log, payload(50 + i as u64, *len))?);
    }
    log.write_up_to(log.lsn(), true)?;
    let end_off = block_offset(end);
    let rewritten = read_block(&storage, &cfg, end);
    assert_eq!(
        rewritten[LOG_BLOCK_HDR_SIZE..end_off],
        tail_block[LOG_BLOCK_HDR_SIZE..end_off]
    );
    // Every block's first_rec_group names the first frame starting in it.
    let mut b = LOG_START_LSN;
    while b <= block_start(log.lsn()) {
        let expected = frames
            .iter()
            .find(|f| block_start(f.start_lsn) == b)
            .map_or(0, |f| block_offset(f.start_lsn));
        let block = read_block(&storage, &cfg, b);
        assert_eq!(first_rec_group(&block), expected, "block at {b}");
        b += LOG_BLOCK_SIZE as u64;
    }
    drop(log);
    assert_frames(&scan(&mut storage, &cfg)?.mtrs, &frames, "after reopening");
    Ok(())
}

#[test]
fn configuration_is_validated_against_the_files() -> Result<()> {
    let ok = small_cfg();
    assert!(ok.validate().is_ok());
    assert!(LogConfig::default().validate().is_ok());
    let bad = [
        LogConfig {
            files: 0,
            ..ok.clone()
        },
        LogConfig {
            files: 101,
            ..ok.clone()
        },
        LogConfig {
            file_size_bytes: 65 * 1024 + 1,
            ..ok.clone()
        },
        LogConfig {
            file_size_bytes: 32 * 1024,
            ..ok.clone()
        },
        LogConfig {
            file_size_bytes: 1 << 40,
            ..ok.clone()
        },
        LogConfig {
            buffer_size_bytes: 512,
            ..ok.clone()
        },
    ];
    for cfg in bad {
        let err = cfg.validate().unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{cfg:?}: {err}");
    }

    let mut storage = MemStorage::new();
    drop(Log::create(&mut storage, &ok)?);
    let bigger = LogConfig {
        file_size_bytes: 128 * 1024,
        ..ok.clone()
    };
    let err = scan(&mut storage, &bigger).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let more = LogConfig {
        files: 3,
        ..ok.clone()
    };
    assert!(matches!(
        scan(&mut storage, &more).unwrap_err(),
        Error::InvalidArgument(_)
    ));

    storage.write_file("ib_logfile1", vec![0; 100]);
    assert!(
        scan(&mut storage, &ok).unwrap_err().is_corruption(),
        "short file"
    );
    storage
        .remove("ib_logfile1")
        .map_err(|e| Error::io("remove", "", e))?;
    assert!(
        scan(&mut storage, &ok).unwrap_err().is_corruption(),
        "missing file"
    );
    storage
        .remove("ib_logfile0")
        .map_err(|e| Error::io("remove", "", e))?;
    assert!(
        scan(&mut storage, &ok).unwrap_err().is_corruption(),
        "missing file 0"
    );
    assert!(!exists(&mut storage)?);
    Ok(())
}

/// A directory whose files start failing writes and syncs on demand.
#[derive(Clone)]
struct FailingStorage {
    inner: MemStorage,
    fail: Arc<AtomicBool>,
}

struct FailingFile {
    inner: Box<dyn File>,
    fail: Arc<AtomicBool>,
}

impl FailingFile {
    fn check(&self) -> io::Result<()> {
        if self.fail.load(Ordering::Relaxed) {
            return Err(io::Error::other("injected failure"));
        }
        Ok(())
    }
}

impl File for FailingFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.check()?;
        self.inner.write_at(offset, buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.check()?;
        self.inner.sync()
    }
    fn len(&mut self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.check()?;
        self.inner.set_len(len)
    }
}

impl Storage for FailingStorage {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let inner = self.inner.create(name)?;
        Ok(Box::new(FailingFile {
            inner,
            fail: self.fail.clone(),
        }))
    }
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let inner = self.inner.open(name)?;
        Ok(Box::new(FailingFile {
            inner,
            fail: self.fail.clone(),
        }))
    }
    fn exists(&mut self, name: &str) -> io::Result<bool> {
        self.inner.exists(name)
    }
    fn remove(&mut self, name: &str) -> io::Result<()> {
        self.inner.remove(name)
    }
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn list(&mut self) -> io::Result<Vec<String>> {
        self.inner.list()
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        self.inner.sync_dir()
    }
}

#[test]
fn an_io_error_stops_the_log_for_good() -> Result<()> {
    let fail = Arc::new(AtomicBool::new(false));
    let mut storage = FailingStorage {
        inner: MemStorage::new(),
        fail: fail.clone(),
    };
    let mut log = Log::create(&mut storage, &small_cfg())?;
    append(&mut log, payload(1, 100))?;
    fail.store(true, Ordering::Relaxed);
    let err = log.write_up_to(log.lsn(), true).unwrap_err();
    assert!(matches!(err, Error::Io { op: "write", .. }), "{err}");
    fail.store(false, Ordering::Relaxed);
    assert!(log.write_up_to(log.lsn(), true).unwrap_err().is_fatal());
    assert!(log.append(b"x").unwrap_err().is_fatal());
    assert!(log
        .write_checkpoint(log.checkpoint_lsn())
        .unwrap_err()
        .is_fatal());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any mix of frame sizes, buffer sizes and write/sync points scans
    /// back exactly.
    #[test]
    fn appended_frames_scan_back(
        sizes in prop::collection::vec((1usize..20_000, 0u8..3), 1..40),
        buffer_kib in 2usize..64,
    ) {
        let mut storage = MemStorage::new();
        let cfg = LogConfig {
            files: 3,
            file_size_bytes: 512 * 1024,
            buffer_size_bytes: buffer_kib * 1024,
        };
        let mut log = Log::create(&mut storage, &cfg)?;
        let mut frames = Vec::new();
        for (i, &(len, action)) in sizes.iter().enumerate() {
            frames.push(append(&mut log, payload(i as u64, len))?);
            if action > 0 {
                log.write_up_to(log.lsn(), action == 2)?;
            }
        }
        log.write_up_to(log.lsn(), true)?;
        let end = log.lsn();
        drop(log);
        let s = scan(&mut storage, &cfg)?;
        prop_assert_eq!(s.tail, ScanEnd::CleanEnd);
        prop_assert_eq!(s.end_lsn, end);
        prop_assert!(s.mtrs == frames);
    }
}
