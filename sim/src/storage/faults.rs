//! The fault model beyond crashes, as data: [`FaultConfig`] says which faults
//! a [`SimStorage`](super::SimStorage) injects and how often, and what the
//! disk reports when it injects one ([`FaultRecord`], [`FaultCounters`],
//! [`BitFlip`]).
//!
//! Every fault is off in [`FaultConfig::default`], so a disk never loses what
//! a sync made durable until a test switches faults on with
//! [`SimStorage::set_faults`](super::SimStorage::set_faults). A configuration
//! is plain data that (de)serializes with serde and refuses unknown fields,
//! so a fault profile saved beside a failure in `corpus/` cannot silently
//! mean something else after a field is renamed.
//!
//! | fault | switch | what the engine sees | what the disk does |
//! | --- | --- | --- | --- |
//! | failing fsync | `p_fsync_failure`, `fsync_failure_at_op` | `sync` fails, "EIO", once | the file's pending operations are dropped: still read back until a restart, lost at any crash; a later sync succeeds without them |
//! | lying fsync | `lying_fsync`, `p_lie` | `sync` succeeds | nothing becomes durable; the file's operations stay pending |
//! | full disk | `capacity_bytes`, `full_at_op` | a growing `write_at`/`set_len` fails, `StorageFull` | nothing changes |
//! | bit rot | `bit_rot` | wrong bits in pages read after a restart | bits of data files' durable images flip at restart |
//! | lost namespace operation | `lose_unsynced_namespace_ops` | nothing until a power loss | a create, remove or rename not yet followed by `sync_dir` is undone at a power loss (the later ones of a sequence first) |
//! | misdirected write | `p_misdirected_write`, `misdirect_data_files_only`, `crash_after_misdirection` | `write_at` succeeds (and, with the crash, the next operation crashes) | a page write lands on another page of the file |
//! | latency | `latency_us` | nothing | the attached [`SimClock`](crate::clock::SimClock) advances |
//!
//! Decisions are drawn from ChaCha8 generators seeded with
//! [`FaultConfig::seed`], one stream per fault kind, so a run is a pure
//! function of its inputs and the seed, and switching one fault kind on or
//! off does not change the decisions of the others (which keeps swarm
//! testing and shrinking stable).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which faults a simulated disk injects, and how often. Every fault is off
/// by default; see the module comment for what each one does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultConfig {
    /// Seeds every fault decision (one ChaCha8 stream per fault kind).
    pub seed: u64,

    /// Probability that a `sync` fails with EIO. A failed sync behaves as
    /// Linux's does after a writeback error ("fsyncgate"): the error is
    /// reported once, and the file's pending operations are marked clean
    /// without reaching the disk. Reads still see them until a restart;
    /// any restart, a process crash too, loses them; a later sync succeeds
    /// without persisting them. So the engine must stop after a failed
    /// sync: one that retries and carries on loses what it wrote.
    pub p_fsync_failure: f64,
    /// The first `sync` whose I/O index is at least this fails with EIO,
    /// once (an index, not a count of syncs, so it can be aimed from a
    /// reference run's trace just as a crash is).
    pub fsync_failure_at_op: Option<u64>,

    /// Whether syncs may lie, as a disk with a volatile write cache does: a
    /// lying `sync` returns `Ok` and makes nothing durable; the operations
    /// stay pending until a later sync that does not lie. A negative
    /// control: the recovery oracle must report the losses it causes.
    pub lying_fsync: bool,
    /// With `lying_fsync`, the probability that a given sync lies; 1.0 (the
    /// default) makes every sync lie.
    pub p_lie: f64,

    /// The most bytes the files may hold together, counted as the sum of
    /// their current lengths (unlinked files still open count too). A
    /// `write_at` or `set_len` that would grow the total past it fails with
    /// `StorageFull` and changes nothing (no partial write); writes that do
    /// not grow a file, and shrinks, always succeed; `create` succeeds too
    /// (an empty file costs an inode, not space).
    pub capacity_bytes: Option<u64>,
    /// From the operation with this I/O index on, the disk is full: every
    /// `write_at` or `set_len` that would grow a file fails as above.
    pub full_at_op: Option<u64>,

    /// Bits flipped in data files at rest, at every restart.
    pub bit_rot: Option<BitRot>,

    /// Probability that a page write (a `write_at` of 1, 2, 4, 8 or 16
    /// KiB at a multiple of its length: a page of any size a tablespace may
    /// have) is misdirected: its bytes land on another page of that size
    /// in the same file, chosen uniformly among
    /// the whole pages the file has once the intended write has extended it
    /// (or, if the file has no other page, on the page after the intended
    /// one), and the intended page keeps its old contents. The file's length
    /// changes as the intended write would have changed it; the misdirection
    /// is skipped if the page after would not fit (full disk, maximum file
    /// size). The trace shows the intended offset, the fault log the actual.
    pub p_misdirected_write: f64,
    /// Misdirect only writes to data files (the tablespaces, as
    /// [`BitRot::covers`] names them without the redo log): a page-sized
    /// write to the redo log is a run of 512-byte blocks, not a page.
    pub misdirect_data_files_only: bool,
    /// Crash at the operation after a misdirected write (the write itself
    /// succeeded and stays pending): a write that goes astray as the power
    /// fails. The lost write is then one whose page the engine has not
    /// synced, so the redo since the last checkpoint still covers it; a
    /// misdirected write that a later sync and checkpoint pass is
    /// undetectable by InnoDB's design.
    pub crash_after_misdirection: bool,

    /// Simulated time each operation costs, charged to the clock attached
    /// with [`SimStorage::set_clock`](super::SimStorage::set_clock).
    pub latency_us: Latency,

    /// Makes `create`, `remove` and `rename` durable only once a later
    /// `sync_dir` succeeds, as POSIX promises (a file's own sync makes its
    /// bytes durable, not its name). Off, they are durable when they
    /// return. At a
    /// power loss the unsynced namespace operations survive as a prefix, in
    /// the order they were made (none for `LoseAll`, a length drawn from
    /// this seed for `Random` and `Explicit`); a process crash keeps them all.
    pub lose_unsynced_namespace_ops: bool,
}

/// The size of a page write that can be misdirected: InnoDB's 16 KiB page.
pub const PAGE_BYTES: u64 = 16 * 1024;

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            seed: 0,
            p_fsync_failure: 0.0,
            fsync_failure_at_op: None,
            lying_fsync: false,
            p_lie: 1.0,
            capacity_bytes: None,
            full_at_op: None,
            bit_rot: None,
            p_misdirected_write: 0.0,
            misdirect_data_files_only: false,
            crash_after_misdirection: false,
            latency_us: Latency::default(),
            lose_unsynced_namespace_ops: false,
        }
    }
}

/// Bit rot at rest: at every restart, after the crash mode has decided what
/// survived, `per_restart_flips` bits are flipped in the durable images of
/// the data files, each bit chosen uniformly among all bits of the eligible
/// files (so a bit may flip twice and flip back; the report lists both).
///
/// Data files are the tablespaces: names ending in `.ibd` and the system
/// tablespace `ibdata1`. The redo log (`ib_logfile*`) is left alone unless
/// `include_redo_log` is set: its torn or lost tail is what crashes and
/// power losses already exercise, and a bad block there ends the log scan
/// by design (each 512-byte block has a checksum), so rot in it mostly
/// tests the same path again while hiding the data-file rot that page
/// validation must catch. Other files are never touched.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BitRot {
    /// How many bits flip at each restart.
    pub per_restart_flips: u32,
    /// Whether the redo log files may rot too.
    pub include_redo_log: bool,
}

impl Default for BitRot {
    fn default() -> Self {
        BitRot {
            per_restart_flips: 1,
            include_redo_log: false,
        }
    }
}

impl BitRot {
    /// Whether a file of that name may rot.
    pub fn covers(&self, name: &str) -> bool {
        name.ends_with(".ibd")
            || name == "ibdata1"
            || (self.include_redo_log && name.starts_with("ib_logfile"))
    }
}

/// The simulated time, in microseconds, each operation costs; every field is
/// in microseconds and 0 by default. Every operation the disk admits is
/// charged its kind's cost whatever its outcome; a successful `read_at` or
/// `write_at` is also charged its transfer cost, per MiB, carried exactly
/// across operations (no rounding drift: 4 KiB at 1,000 us per MiB costs
/// 3 or 4 us, 1,000 us every 256 calls). Calls refused by a crash cost
/// nothing: the machine is down.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Latency {
    /// `Storage::create`.
    pub create: u64,
    /// `Storage::open`.
    pub open: u64,
    /// `Storage::exists`.
    pub exists: u64,
    /// `Storage::list`.
    pub list: u64,
    /// `Storage::remove`.
    pub remove: u64,
    /// `Storage::rename`.
    pub rename: u64,
    /// `File::read_at`, before its transfer cost.
    pub read: u64,
    /// `File::write_at`, before its transfer cost.
    pub write: u64,
    /// `File::sync` (a lying or failing sync costs the same).
    pub sync: u64,
    /// `File::len`.
    pub len: u64,
    /// `File::set_len`.
    pub set_len: u64,
    /// Transfer cost of reads, per MiB (1,048,576 bytes).
    pub read_per_mib: u64,
    /// Transfer cost of writes, per MiB (1,048,576 bytes).
    pub write_per_mib: u64,
    /// A read's spread: each costs `read` plus a uniform draw from
    /// `0..=read_jitter` (the injector's own generator, drawn only when
    /// the spread is not 0).
    pub read_jitter: u64,
    /// A write's spread, as `read_jitter`.
    pub write_jitter: u64,
    /// A sync's spread, as `read_jitter`.
    pub sync_jitter: u64,
    /// The platter's turn, for a disk without a write cache (0: none).
    /// A sync ends only when its sectors pass under the head: at a whole
    /// number of turns after the previous sync ended, the earliest one not
    /// before its own cost (`sync` and spread) has passed. The redo log's
    /// syncs rewrite its last block, so back to back they cost a whole
    /// turn each: a 10,000 rpm disk (6 ms a turn) syncs a log at most
    /// about 166 times a second, whatever the sync's own cost.
    pub rotation: u64,
}

impl Latency {
    /// The presets, by name: `seeds-disk` (about 1 ms a sync, 5 to
    /// 10 ms a random page read, 100 MB/s), `platter` (a 10,000 rpm disk
    /// without a write cache: a sync waits for its sectors to come round,
    /// 6 ms a turn, so back-to-back log syncs cost a turn each; reads and
    /// transfers as `seeds-disk`), `ssd` (about 85 us a sync, 100 us a
    /// read, 500 MB/s) and `memory` (nothing costs time).
    pub fn preset(name: &str) -> Option<Latency> {
        Some(match name {
            "seeds-disk" => Latency {
                read: 5_000,
                read_jitter: 5_000,
                write: 20,
                sync: 700,
                sync_jitter: 600,
                read_per_mib: 10_000,
                write_per_mib: 10_000,
                ..Latency::default()
            },
            "platter" => Latency {
                read: 5_000,
                read_jitter: 5_000,
                write: 20,
                sync: 200,
                rotation: 6_000,
                read_per_mib: 10_000,
                write_per_mib: 10_000,
                ..Latency::default()
            },
            "ssd" => Latency {
                read: 80,
                read_jitter: 40,
                write: 10,
                sync: 60,
                sync_jitter: 50,
                read_per_mib: 2_000,
                write_per_mib: 2_000,
                ..Latency::default()
            },
            "memory" => Latency::default(),
            _ => return None,
        })
    }

    /// Every preset's name.
    pub const PRESETS: [&'static str; 4] = ["seeds-disk", "platter", "ssd", "memory"];

    /// The mean cost of a sync issued at a random moment, microseconds (on
    /// a platter, half a turn more).
    pub fn mean_sync_us(&self) -> f64 {
        self.sync as f64 + self.sync_jitter as f64 / 2.0 + self.rotation as f64 / 2.0
    }

    /// When a sync that could end at `earliest` ends, the previous one
    /// having ended at `previous` (on a platter, a whole number of turns
    /// after it).
    pub fn sync_end(&self, earliest: u64, previous: u64) -> u64 {
        if self.rotation == 0 || earliest <= previous {
            return earliest;
        }
        let turns = (earliest - previous).div_ceil(self.rotation);
        previous + turns * self.rotation
    }
}

/// Why a [`FaultConfig`] was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidFaultConfig {
    /// The field at fault.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for InvalidFaultConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid fault configuration: {}: {}",
            self.field, self.reason
        )
    }
}

impl std::error::Error for InvalidFaultConfig {}

impl FaultConfig {
    /// Checks what serde cannot: probabilities lie in [0, 1].
    pub fn check(&self) -> Result<(), InvalidFaultConfig> {
        for (field, p) in [
            ("p_fsync_failure", self.p_fsync_failure),
            ("p_lie", self.p_lie),
            ("p_misdirected_write", self.p_misdirected_write),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(InvalidFaultConfig {
                    field,
                    reason: format!("{p} is not a probability"),
                });
            }
        }
        Ok(())
    }
}

/// One bit flipped by bit rot.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BitFlip {
    /// The file's name.
    pub file: String,
    /// The byte's offset in the file.
    pub offset: u64,
    /// The bit within the byte, 0 the least significant.
    pub bit: u8,
}

/// A fault the disk injected.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A `sync` of this file failed with EIO; its pending operations were
    /// dropped (readable until the next restart, never durable).
    FsyncFailure {
        /// The file synced.
        file: String,
    },
    /// A `sync` of this file said yes and persisted nothing.
    LyingSync {
        /// The file synced.
        file: String,
        /// How many of its operations stayed pending.
        pending_ops: usize,
    },
    /// A `write_at` or `set_len` was refused with `StorageFull`.
    DiskFull {
        /// The file that would have grown.
        file: String,
        /// The sum of all files' lengths at the time.
        used_bytes: u64,
        /// By how much the call would have grown it.
        growth_bytes: u64,
    },
    /// A page write landed on another page of the same file.
    MisdirectedWrite {
        /// The file written.
        file: String,
        /// Where the engine asked the page to go (the traced offset).
        intended_offset: u64,
        /// Where it went.
        actual_offset: u64,
    },
    /// Bit rot at a restart.
    BitFlip(BitFlip),
    /// A power loss lost unsynced namespace operations (only with
    /// `lose_unsynced_namespace_ops`).
    NamespaceOpsLost {
        /// How many, from the end of the pending list.
        count: usize,
    },
}

/// An injected fault and when: the I/O index of the call it struck, or, for
/// faults injected at a restart (bit rot, lost namespace operations), the
/// I/O index the next call gets. Records form the fault log, kept beside the
/// trace rather than inside [`IoRecord`](super::IoRecord) so that the trace
/// of a run without faults is unchanged and restart faults, which belong to
/// no call, fit; the trace and the fault log together describe a run.
/// Latency is not logged: it is a pure function of the trace and the
/// configuration, and [`FaultCounters::latency_us_total`] sums it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FaultRecord {
    /// The I/O index (see above).
    pub index: u64,
    /// What happened.
    pub fault: Fault,
}

/// Running totals of injected faults over the life of a storage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FaultCounters {
    /// Syncs that failed with EIO.
    pub fsync_failures: u64,
    /// Of those, the syncs of redo log files ([`super::REDO_LOG_PREFIX`]):
    /// each dropped log writes.
    pub log_fsync_failures: u64,
    /// Syncs that lied.
    pub lying_syncs: u64,
    /// Writes and length changes refused with `StorageFull`.
    pub full_disk_errors: u64,
    /// Bits flipped by bit rot.
    pub bit_flips: u64,
    /// Page writes that landed elsewhere.
    pub misdirected_writes: u64,
    /// Namespace operations a power loss lost.
    pub namespace_ops_lost: u64,
    /// Simulated microseconds charged as latency (charged to the clock, if
    /// one is attached).
    pub latency_us_total: u64,
    /// Simulated microseconds syncs waited for the device to finish an
    /// earlier sync (time-driven runs only: `SimStorage::set_timeline`).
    pub sync_queue_us_total: u64,
}

impl FaultCounters {
    /// Counts one injected fault.
    pub(super) fn count(&mut self, fault: &Fault) {
        match fault {
            Fault::FsyncFailure { file } => {
                self.fsync_failures += 1;
                if file.starts_with(super::REDO_LOG_PREFIX) {
                    self.log_fsync_failures += 1;
                }
            }
            Fault::LyingSync { .. } => self.lying_syncs += 1,
            Fault::DiskFull { .. } => self.full_disk_errors += 1,
            Fault::MisdirectedWrite { .. } => self.misdirected_writes += 1,
            Fault::BitFlip(_) => self.bit_flips += 1,
            Fault::NamespaceOpsLost { count } => self.namespace_ops_lost += *count as u64,
        }
    }
}

/// A namespace operation, as a restart reports it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NamespaceChange {
    /// `create(name)`.
    Create {
        /// The name created.
        name: String,
    },
    /// `remove(name)`.
    Remove {
        /// The name removed.
        name: String,
    },
    /// `rename(from, to)`.
    Rename {
        /// The old name.
        from: String,
        /// The new name.
        to: String,
    },
}
