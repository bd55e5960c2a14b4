//! The fault injector: the run-time half of [`FaultConfig`]. It owns the
//! seeded generators, the one-shot state, the attached clock, the fault log
//! and the fault counters, and decides each fault where the disk asks.
//!
//! Each fault kind draws from its own ChaCha8 stream of the configured seed,
//! and draws only where that kind can strike (a misdirection is drawn only
//! for page writes, a lie only with `lying_fsync` on), so the decisions of
//! one kind depend on the seed and on the calls that kind saw, never on
//! which other kinds are switched on.
//!
//! It must never change what a run without faults does: with the default
//! configuration every hook here returns "no fault" without drawing.

use super::disk::{Disk, InodeId};
use super::faults::{BitFlip, Fault, FaultConfig, FaultCounters, FaultRecord, PAGE_BYTES};
use super::trace::IoOp;
use crate::clock::SimClock;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io;

/// The generator stream of each fault kind.
#[derive(Debug, Clone, Copy)]
enum Stream {
    FsyncFailure = 1,
    Lie = 2,
    Misdirect = 3,
    BitRot = 4,
    Namespace = 5,
    Latency = 6,
}

fn generator(seed: u64, stream: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream as u64);
    rng
}

/// Transfer costs are carried in units of 2^-20 microseconds, so that a
/// cost per MiB divides exactly.
const TRANSFER_SHIFT: u32 = 20;

/// Where the latency of a time-driven run goes (see `SimStorage::set_timeline`):
/// the simulated time the step under way has spent, from the clock's time
/// when it began, and when the device ends the last sync it was given. A
/// device serves one sync at a time, so a sync issued while another runs
/// starts when that one ends: commits that sync at once queue, and a
/// group's sync serves everyone written before it starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Microseconds the step under way has spent in I/O, queueing included.
    pub spent_us: u64,
    /// When the device finishes the last sync it was given.
    pub device_free_us: u64,
}

impl Timeline {
    /// Charges an operation of `us` microseconds issued by a step that
    /// began at `now`: a sync waits first for the device. Returns the
    /// microseconds it queued.
    pub fn charge(
        &mut self,
        now: u64,
        us: u64,
        sync: bool,
        latency: &super::faults::Latency,
    ) -> u64 {
        let issued = now + self.spent_us;
        let start = if sync {
            issued.max(self.device_free_us)
        } else {
            issued
        };
        let end = if sync {
            latency.sync_end(start + us, self.device_free_us)
        } else {
            start + us
        };
        if sync {
            self.device_free_us = end;
        }
        self.spent_us = end - now;
        start - issued
    }
}

/// The fault state of one disk.
#[derive(Debug)]
pub(super) struct Injector {
    pub config: FaultConfig,
    fsync_rng: ChaCha8Rng,
    lie_rng: ChaCha8Rng,
    misdirect_rng: ChaCha8Rng,
    rot_rng: ChaCha8Rng,
    namespace_rng: ChaCha8Rng,
    latency_rng: ChaCha8Rng,
    /// Whether `fsync_failure_at_op` has fired.
    fsync_failure_fired: bool,
    /// Transfer cost not yet charged, below one microsecond, in units of
    /// 2^-20 microseconds.
    transfer_remainder: u64,
    /// The clock latency is charged to.
    pub clock: Option<SimClock>,
    /// Time-driven scheduling: latency goes to the running step's own
    /// time instead of the clock, and syncs queue for the device.
    pub timeline: Option<Timeline>,
    /// When the last sync ended, without a timeline (a platter's phase).
    pub last_sync_end_us: u64,
    pub counters: FaultCounters,
    pub log: Vec<FaultRecord>,
    /// The I/O index of every failed sync, kept with tracing off too.
    pub fsync_failed_at: Vec<u64>,
    /// Failures armed one by one (ascending I/O indexes), each striking
    /// the first sync at or after its index; a new configuration keeps
    /// them, a disarm drops them.
    armed_fsync_failures: Vec<u64>,
}

impl Default for Injector {
    fn default() -> Self {
        let config = FaultConfig::default();
        let seed = config.seed;
        Injector {
            config,
            fsync_rng: generator(seed, Stream::FsyncFailure),
            lie_rng: generator(seed, Stream::Lie),
            misdirect_rng: generator(seed, Stream::Misdirect),
            rot_rng: generator(seed, Stream::BitRot),
            namespace_rng: generator(seed, Stream::Namespace),
            latency_rng: generator(seed, Stream::Latency),
            fsync_failure_fired: false,
            transfer_remainder: 0,
            clock: None,
            timeline: None,
            last_sync_end_us: 0,
            counters: FaultCounters::default(),
            log: Vec::new(),
            fsync_failed_at: Vec::new(),
            armed_fsync_failures: Vec::new(),
        }
    }
}

impl Injector {
    /// Installs a configuration: every generator starts afresh from its
    /// seed and one-shot faults are re-armed. The clock, the counters and
    /// the log carry on.
    pub(super) fn install(&mut self, config: FaultConfig) {
        let seed = config.seed;
        self.fsync_rng = generator(seed, Stream::FsyncFailure);
        self.lie_rng = generator(seed, Stream::Lie);
        self.misdirect_rng = generator(seed, Stream::Misdirect);
        self.rot_rng = generator(seed, Stream::BitRot);
        self.namespace_rng = generator(seed, Stream::Namespace);
        self.latency_rng = generator(seed, Stream::Latency);
        self.fsync_failure_fired = false;
        self.transfer_remainder = 0;
        self.config = config;
    }

    /// Arms a one-shot fsync failure at the first sync at or after
    /// `index`, beside those already armed, leaving every generator where
    /// it is.
    pub(super) fn arm_fsync_failure(&mut self, index: u64) {
        let at = self.armed_fsync_failures.partition_point(|&i| i <= index);
        self.armed_fsync_failures.insert(at, index);
    }

    /// Disarms every failure [`arm_fsync_failure`](Self::arm_fsync_failure)
    /// armed that has not struck.
    pub(super) fn disarm_fsync_failures(&mut self) {
        self.armed_fsync_failures.clear();
    }

    /// Whether the sync with this I/O index fails with EIO.
    fn sync_fails(&mut self, index: u64) -> bool {
        if self
            .armed_fsync_failures
            .first()
            .is_some_and(|&at| index >= at)
        {
            self.armed_fsync_failures.remove(0);
            return true;
        }
        if !self.fsync_failure_fired
            && self
                .config
                .fsync_failure_at_op
                .is_some_and(|at| index >= at)
        {
            self.fsync_failure_fired = true;
            return true;
        }
        let p = self.config.p_fsync_failure;
        p > 0.0 && self.fsync_rng.gen::<f64>() < p
    }

    /// Whether a sync lies.
    fn sync_lies(&mut self) -> bool {
        let p = self.config.p_lie;
        self.config.lying_fsync && p > 0.0 && self.lie_rng.gen::<f64>() < p
    }

    /// Whether growing the files by `growth_bytes` from `used_bytes` is
    /// refused at this I/O index.
    fn full(&self, index: u64, used_bytes: u64, growth_bytes: u64) -> bool {
        growth_bytes > 0
            && (self.config.full_at_op.is_some_and(|at| index >= at)
                || self
                    .config
                    .capacity_bytes
                    .is_some_and(|capacity| used_bytes.saturating_add(growth_bytes) > capacity))
    }

    /// The simulated time an admitted call costs: its kind's latency, plus
    /// the transfer cost of `transferred_bytes` (for a successful read or
    /// write; 0 otherwise).
    fn latency_us(&mut self, op: IoOp, transferred_bytes: u64) -> u64 {
        let latency = &self.config.latency_us;
        let jitter = match op {
            IoOp::ReadAt => latency.read_jitter,
            IoOp::WriteAt => latency.write_jitter,
            IoOp::Sync | IoOp::SyncDir => latency.sync_jitter,
            _ => 0,
        };
        let spread = if jitter > 0 {
            self.latency_rng.gen_range(0..=jitter)
        } else {
            0
        };
        let latency = &self.config.latency_us;
        let (base_us, per_mib_us) = match op {
            IoOp::Create => (latency.create, 0),
            IoOp::Open => (latency.open, 0),
            IoOp::Exists => (latency.exists, 0),
            IoOp::List => (latency.list, 0),
            IoOp::Remove => (latency.remove, 0),
            IoOp::Rename => (latency.rename, 0),
            IoOp::ReadAt => (latency.read, latency.read_per_mib),
            IoOp::WriteAt => (latency.write, latency.write_per_mib),
            IoOp::Sync | IoOp::SyncDir => (latency.sync, 0),
            IoOp::Len => (latency.len, 0),
            IoOp::SetLen => (latency.set_len, 0),
        };
        let base_us = base_us + spread;
        if per_mib_us == 0 || transferred_bytes == 0 {
            return base_us;
        }
        let owed = u128::from(self.transfer_remainder)
            + u128::from(transferred_bytes) * u128::from(per_mib_us);
        let mask = (1u128 << TRANSFER_SHIFT) - 1;
        self.transfer_remainder = (owed & mask) as u64;
        let transfer_us = u64::try_from(owed >> TRANSFER_SHIFT).unwrap_or(u64::MAX);
        base_us.saturating_add(transfer_us)
    }

    /// How many of `pending` unsynced namespace operations a power loss
    /// keeps (a prefix), drawn uniformly from `0..=pending`.
    pub(super) fn namespace_ops_kept(&mut self, pending: usize) -> usize {
        if pending == 0 {
            return 0;
        }
        self.namespace_rng.gen_range(0..=pending)
    }
}

/// The message of every error a simulated fsync failure causes.
pub(super) const FSYNC_FAILURE_MESSAGE: &str = "simulated EIO: fsync failed";

/// Where a misdirected page write goes.
pub(super) struct Misdirection {
    /// The file's length once the intended write has extended it: the
    /// length the call sets whether or not the page lands where intended.
    pub length: u64,
    /// Where the page lands.
    pub target: u64,
}

/// Whether a write is a page write: 1, 2, 4, 8 or 16 KiB (the page sizes
/// a tablespace may have, compressed or not) at a multiple of its length.
pub fn is_page_write(offset: u64, len: usize) -> bool {
    let len = len as u64;
    len.is_power_of_two() && (1024..=PAGE_BYTES).contains(&len) && offset.is_multiple_of(len)
}

impl Disk {
    /// Logs and counts an injected fault, at the index of the call being
    /// performed.
    pub(super) fn record_fault(&mut self, fault: Fault) {
        self.record_fault_at(self.op_index, fault);
    }

    /// Logs and counts an injected fault at an explicit index.
    pub(super) fn record_fault_at(&mut self, index: u64, fault: Fault) {
        self.faults.counters.count(&fault);
        if self.tracing {
            self.faults.log.push(FaultRecord { index, fault });
        }
    }

    /// Charges an admitted call's latency to the counters and the clock,
    /// or, on a timeline, to the step under way (a sync waiting first for
    /// the device to finish the sync before it).
    pub(super) fn charge_latency(&mut self, op: IoOp, transferred_bytes: u64, file: &str) {
        let us = self.faults.latency_us(op, transferred_bytes);
        let now = self
            .faults
            .clock
            .as_ref()
            .map_or(0, engine::io::Clock::now_us);
        let sync = matches!(op, IoOp::Sync | IoOp::SyncDir);
        if let Some(t) = &mut self.faults.timeline {
            let issued = now + t.spent_us;
            let queued = t.charge(now, us, sync, &self.faults.config.latency_us);
            self.faults.counters.sync_queue_us_total += queued;
            self.faults.counters.latency_us_total += us;
            if sync && self.tracing {
                self.sync_spans.push(super::SyncSpan {
                    start_us: issued + queued,
                    end_us: now + t.spent_us,
                    file: file.to_string(),
                });
            }
            return;
        }
        let us = if sync {
            // Without a timeline the clock is the step's: a sync on a
            // platter still waits for its sectors.
            let end =
                (self.faults.config.latency_us).sync_end(now + us, self.faults.last_sync_end_us);
            self.faults.last_sync_end_us = end;
            end - now
        } else {
            us
        };
        if us == 0 {
            return;
        }
        self.faults.counters.latency_us_total += us;
        if let Some(clock) = &self.faults.clock {
            clock.advance_us(us);
        }
    }

    /// Decides whether the sync being performed fails, logging it if so.
    pub(super) fn sync_fails(&mut self, id: InodeId) -> bool {
        if !self.faults.sync_fails(self.op_index) {
            return false;
        }
        let file = self.inode_name(id);
        self.record_fault(Fault::FsyncFailure { file });
        let index = self.op_index;
        self.faults.fsync_failed_at.push(index);
        true
    }

    /// Decides whether the sync being performed lies, logging it if so.
    pub(super) fn sync_lies(&mut self, id: InodeId) -> bool {
        if !self.faults.sync_lies() {
            return false;
        }
        let file = self.inode_name(id);
        let pending_ops = self.inode_mut(id).pending.len();
        self.record_fault(Fault::LyingSync { file, pending_ops });
        true
    }

    /// The sum of all files' current lengths.
    fn used_bytes(&self) -> u64 {
        self.inodes.values().map(|inode| inode.current.len()).sum()
    }

    /// Refuses, with `StorageFull`, a call that would grow a file by
    /// `growth_bytes` on a full disk; the caller has changed nothing yet.
    pub(super) fn admit_growth(&mut self, id: InodeId, growth_bytes: u64) -> io::Result<()> {
        if growth_bytes == 0 {
            return Ok(());
        }
        let used_bytes = self.used_bytes();
        if !self.faults.full(self.op_index, used_bytes, growth_bytes) {
            return Ok(());
        }
        let file = self.inode_name(id);
        self.record_fault(Fault::DiskFull {
            file,
            used_bytes,
            growth_bytes,
        });
        Err(io::Error::new(
            io::ErrorKind::StorageFull,
            "simulated full disk: no space left on device",
        ))
    }

    /// Decides whether a write of `len` bytes at `offset`, already admitted,
    /// is a misdirected page write (see [`is_page_write`]), and where it
    /// lands: on another page of its size. Logs it if so.
    pub(super) fn misdirect(
        &mut self,
        id: InodeId,
        offset: u64,
        len: usize,
    ) -> Option<Misdirection> {
        let p = self.faults.config.p_misdirected_write;
        let page_bytes = len as u64;
        if p == 0.0 || !is_page_write(offset, len) {
            return None;
        }
        if self.faults.config.misdirect_data_files_only {
            let name = self.inode_name(id);
            if !(name.ends_with(".ibd") || name == "ibdata1") {
                return None;
            }
        }
        if self.faults.misdirect_rng.gen::<f64>() >= p {
            return None;
        }
        let file_len = self.inode_mut(id).current.len();
        let length = file_len.max(offset + page_bytes);
        // Whole pages of the file once extended; the intended page is one.
        let pages = length / page_bytes;
        let intended_page = offset / page_bytes;
        let target = if pages > 1 {
            let draw = self.faults.misdirect_rng.gen_range(0..pages - 1);
            let page = if draw < intended_page { draw } else { draw + 1 };
            page * page_bytes
        } else {
            // The file has no other page: the write lands on the next one,
            // which it must then have room for.
            let target = offset + page_bytes;
            let end = target + page_bytes;
            let extra_bytes = end.saturating_sub(length);
            let used_bytes = self.used_bytes() + (length - file_len);
            if end > super::MAX_FILE_BYTES
                || self.faults.full(self.op_index, used_bytes, extra_bytes)
            {
                return None;
            }
            target
        };
        debug_assert_ne!(target, offset, "a misdirected page lands elsewhere");
        let file = self.inode_name(id);
        self.record_fault(Fault::MisdirectedWrite {
            file,
            intended_offset: offset,
            actual_offset: target,
        });
        Some(Misdirection { length, target })
    }

    /// Bit rot at a restart: flips the configured number of bits in the
    /// images of the eligible linked files (durable and current are equal
    /// after a restart), logs them at the next I/O index and returns them.
    pub(super) fn rot(&mut self) -> Vec<BitFlip> {
        let Some(rot) = self.faults.config.bit_rot.clone() else {
            return Vec::new();
        };
        // Name order makes the choice independent of inode numbering.
        let files: Vec<(String, InodeId, u64)> = self
            .names
            .iter()
            .filter(|(name, _)| rot.covers(name))
            .filter_map(|(name, id)| {
                let bits = self.inodes.get(id)?.durable.len() * 8;
                (bits > 0).then(|| (name.clone(), *id, bits))
            })
            .collect();
        let total_bits: u64 = files.iter().map(|(_, _, bits)| bits).sum();
        if total_bits == 0 {
            return Vec::new();
        }
        let mut flips = Vec::new();
        for _ in 0..rot.per_restart_flips {
            let mut bit_no = self.faults.rot_rng.gen_range(0..total_bits);
            for (name, id, bits) in &files {
                if bit_no >= *bits {
                    bit_no -= bits;
                    continue;
                }
                let offset = bit_no / 8;
                let bit = (bit_no % 8) as u8;
                let inode = self.inode_mut(*id);
                inode.durable.flip_bit(offset, bit);
                inode.current.flip_bit(offset, bit);
                flips.push(BitFlip {
                    file: name.clone(),
                    offset,
                    bit,
                });
                break;
            }
        }
        let index = self.next_index();
        for flip in &flips {
            self.record_fault_at(index, Fault::BitFlip(flip.clone()));
        }
        flips
    }
}
