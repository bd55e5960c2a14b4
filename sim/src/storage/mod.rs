//! [`SimStorage`]: a simulated directory that crashes, loses unsynced writes
//! and tears them at sector granularity, on demand and deterministically.
//!
//! It implements the engine's [`Storage`] and [`File`] traits and honours
//! their durability contract (see `engine::io`), and no more: each file
//! keeps a durable image (the bytes and length a power loss cannot take)
//! and the ordered list of writes and length changes since its last
//! successful sync; reads see the durable image with that list applied.
//! `sync` folds the list into the durable image; a sync that fails drops
//! the list instead, as Linux does after a writeback error (the writes stay
//! readable until a restart, which loses them). `create`, `remove` and
//! `rename` are durable when they return `Ok`, unless losable namespace
//! operations are switched on (see [`faults`]).
//!
//! ```text
//!            write_at / set_len           sync
//!   engine ─────────────────▶ pending ──────────▶ durable
//!      ▲                         │                   │
//!      └──── read_at ◀── current = durable + pending ┘
//! ```
//!
//! Every call on the storage or a file gets the next I/O index (0, 1, 2
//! ...) and is recorded in a [trace](SimStorage::trace). A crash is aimed at
//! an index with [`SimStorage::set_crash_at`]: a crash "at" operation `n`
//! means operations `0..n` happened and operation `n` did not; it and every
//! later call, on the storage or on any file, fail with an `io::Error` of
//! kind `Other` and message "simulated crash" ([`is_simulated_crash`]).
//! [`SimStorage::crash_now`] crashes between operations.
//!
//! [`SimStorage::restart`] then decides, by [`CrashMode`], what survived
//! (see [`PowerLossPolicy`] for the rules of a power loss), and reopens the
//! disk in place: every clone sees the restarted disk, so the engine is
//! reopened on the same `SimStorage`. Each restart starts a new epoch; a
//! handle opened in an earlier epoch is dead for good, as a file descriptor
//! of a dead process would be.
//!
//! Clones share one disk. Calls are serialized by one mutex, so each
//! operation is atomic with respect to crashes: a crash never lands inside
//! a call.
//!
//! Faults other than crashes (failing or lying fsync, a full disk, bit rot
//! at restart, misdirected page writes, latency, losable namespace
//! operations) are off until [`SimStorage::set_faults`] installs a
//! [`FaultConfig`]; every decision comes from generators seeded by it, each
//! injected fault is counted ([`SimStorage::fault_counters`]) and logged
//! beside the trace ([`SimStorage::fault_log`]), and latency advances the
//! clock attached with [`SimStorage::set_clock`]. See [`faults`] for the
//! table of what each does.
//!
//! Misuse the engine can reach (a read past the end, a missing file, a
//! name that exists, an invalid name, a file past [`MAX_FILE_BYTES`]) is an
//! `io::Error`, never a panic. Misuse only a test can reach (an explicit
//! power-loss outcome that does not fit the pending writes) is an assertion.

mod disk;
pub mod faults;
mod image;
mod inject;
mod power_loss;
mod trace;

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod tests;

pub use disk::WriteWatch;
pub use disk::MAX_FILE_BYTES;
pub use faults::{
    BitFlip, BitRot, Fault, FaultConfig, FaultCounters, FaultRecord, InvalidFaultConfig, Latency,
    NamespaceChange, PAGE_BYTES,
};
pub use inject::Timeline;
pub use power_loss::{
    fnv1a, CrashMode, MisdirectedPage, PendingKind, PendingWrite, PowerLossPolicy, RestartReport,
    Survival, DISPLACED_BYTES,
};
pub(crate) use power_loss::{fnv_bytes, fnv_word, FNV_BASIS};
pub use trace::{IoCounters, IoOp, IoOutcome, IoRecord, SyncSpan};

use crate::clock::SimClock;
use disk::{Call, Disk, InodeId, NamespaceOp, Payload, PendingOp};
use engine::io::{File, Storage};
use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// A simulated directory. Clones share the same disk, crash state and
/// trace, so a test keeps one clone, hands another to the engine, and
/// crashes, restarts and inspects the disk through its own.
#[derive(Clone)]
pub struct SimStorage {
    disk: Arc<Mutex<Disk>>,
}

impl Default for SimStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SimStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // File contents would drown the output; say where the disk stands.
        let disk = self.disk();
        f.debug_struct("SimStorage")
            .field("files", &disk.names.len())
            .field("epoch", &disk.epoch)
            .field("crashed", &disk.crashed)
            .field("crash_at", &disk.crash_at)
            .field("counters", &disk.counters)
            .field("fault_counters", &disk.faults.counters)
            .finish()
    }
}

/// Names of the redo log files start with this (`ib_logfile0`, ...): the
/// disk counts their syncs apart ([`IoCounters::log_syncs`]), a record the
/// durability judge holds the engine's own flushed LSN against.
pub const REDO_LOG_PREFIX: &str = "ib_logfile";

/// Whether an error is one a simulated crash caused.
pub fn is_simulated_crash(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::Other && error.to_string() == disk::CRASH_MESSAGE
}

/// Whether an error is a simulated fsync failure (kind `Other`, message
/// "simulated EIO: fsync failed").
pub fn is_simulated_fsync_failure(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::Other && error.to_string() == inject::FSYNC_FAILURE_MESSAGE
}

impl SimStorage {
    /// An empty directory, not crashed, tracing on, at I/O index 0.
    pub fn new() -> Self {
        SimStorage {
            disk: Arc::new(Mutex::new(Disk::new())),
        }
    }

    fn disk(&self) -> MutexGuard<'_, Disk> {
        lock(&self.disk)
    }

    /// Arms (or, with `None`, disarms) a crash at the operation with that
    /// I/O index: when it is about to run, the disk crashes instead, so
    /// operations before it happened and it did not. The crash fires once;
    /// an index already passed never fires.
    pub fn set_crash_at(&self, index: Option<u64>) {
        self.disk().crash_at = index;
    }

    /// Arms (or, with `None`, disarms) a crash tied to what is written
    /// rather than to an I/O index: see [`WriteWatch`]. A restart disarms
    /// it.
    pub fn watch_writes(&self, watch: Option<WriteWatch>) {
        let mut disk = self.disk();
        disk.watch = watch.map(|w| (w, 0));
        disk.watch_fired = false;
    }

    /// Whether the armed [`WriteWatch`] has seen its write and armed its
    /// crash (until the next `watch_writes` or restart).
    pub fn watch_fired(&self) -> bool {
        self.disk().watch_fired
    }

    /// Arms a crash at `index` unless one is armed sooner (and not yet
    /// passed): the earliest armed crash strikes, whoever armed it (a
    /// [`WriteWatch`] arms its own).
    pub fn set_crash_at_earliest(&self, index: u64) {
        self.disk().crash_at_earliest(index);
    }

    /// Makes the first sync at or after I/O index `index` fail with EIO,
    /// once, without restarting any fault generator (as
    /// [`set_faults`](Self::set_faults) would); each call arms one more
    /// failure, and [`set_faults`](Self::set_faults) keeps them.
    pub fn fail_sync_at(&self, index: u64) {
        self.disk().faults.arm_fsync_failure(index);
    }

    /// Drops the failures [`fail_sync_at`](Self::fail_sync_at) armed that
    /// have not struck.
    pub fn disarm_sync_failures(&self) {
        self.disk().faults.disarm_fsync_failures();
    }

    /// Crashes now, between operations: every later call fails until
    /// [`restart`](Self::restart).
    pub fn crash_now(&self) {
        self.disk().crash();
    }

    /// Whether the disk has crashed and not yet restarted.
    pub fn crashed(&self) -> bool {
        self.disk().crashed
    }

    /// Restarts the machine in place: crashes first if the disk has not
    /// crashed yet (pulling the plug now), decides per `mode` what of the
    /// unsynced operations survived, makes that the durable and current
    /// state of every file, drops files that were removed while still open,
    /// starts a new epoch (killing every handle opened before) and clears
    /// the crashed state. The I/O index and the trace carry on. With the
    /// faults that strike at a restart switched on, it also loses a suffix
    /// of the unsynced namespace operations (power loss only) and then
    /// flips bits at rest; the report says which.
    ///
    /// # Panics
    ///
    /// If an explicit policy does not fit the pending operations, or a
    /// random one has an invalid sector size or probabilities; the disk is
    /// unchanged when it panics.
    pub fn restart(&self, mode: CrashMode) -> RestartReport {
        let mut disk = self.disk();
        let mut report = power_loss::settle(&mut disk, &mode);
        disk.crash();
        disk.forget_handles();
        report.bit_flips = disk.rot();
        report.misdirected = std::mem::take(&mut disk.misdirected);
        disk.watch = None;
        disk.crash_next = false;
        disk.crashed = false;
        disk.counters.restarts += 1;
        report
    }

    /// Installs a fault configuration, replacing the previous one: every
    /// fault generator restarts from `config.seed` and a one-shot fsync
    /// failure is re-armed. Counters, the fault log and the clock carry on.
    /// Switching `lose_unsynced_namespace_ops` off makes pending namespace
    /// operations durable at once.
    ///
    /// # Panics
    ///
    /// If [`FaultConfig::check`] refuses the configuration; callers holding
    /// a configuration from outside (a file, a command line) check first.
    pub fn set_faults(&self, config: FaultConfig) {
        if let Err(error) = config.check() {
            panic!("{error}");
        }
        let mut disk = self.disk();
        let keep_pending = config.lose_unsynced_namespace_ops;
        disk.faults.install(config);
        if !keep_pending {
            disk.commit_namespace();
        }
    }

    /// The fault configuration in force.
    pub fn faults(&self) -> FaultConfig {
        self.disk().faults.config.clone()
    }

    /// Attaches the clock that latency advances (replacing any before).
    pub fn set_clock(&self, clock: SimClock) {
        self.disk().faults.clock = Some(clock);
    }

    /// Time-driven scheduling on or off. On, latency no longer advances
    /// the clock: each operation is charged to the step under way, from
    /// the clock's time when the step began (the scheduler sets the clock
    /// to each event's time and reads what the step spent with
    /// [`take_spent_us`](Self::take_spent_us)), and a sync waits for the
    /// device to finish the sync before it.
    pub fn set_timeline(&self, on: bool) {
        self.disk().faults.timeline = on.then(Timeline::default);
    }

    /// What the step under way has spent in I/O since the last call
    /// (queueing for the device included), starting the next step's
    /// account; 0 without a timeline.
    pub fn take_spent_us(&self) -> u64 {
        self.disk()
            .faults
            .timeline
            .as_mut()
            .map_or(0, |t| std::mem::take(&mut t.spent_us))
    }

    /// When the device finishes the last sync it was given (0 without a
    /// timeline).
    pub fn device_free_us(&self) -> u64 {
        self.disk().faults.timeline.map_or(0, |t| t.device_free_us)
    }

    /// Takes the syncs the device has run on the timeline since the last
    /// call, with their times (kept while tracing is on: the timeline of
    /// `innosim run --trace` draws them).
    pub fn take_sync_spans(&self) -> Vec<SyncSpan> {
        std::mem::take(&mut self.disk().sync_spans)
    }

    /// The running totals of injected faults.
    pub fn fault_counters(&self) -> FaultCounters {
        self.disk().faults.counters
    }

    /// A copy of the log of injected faults since the storage was made or
    /// the trace last cleared (kept only while tracing is on).
    pub fn fault_log(&self) -> Vec<FaultRecord> {
        self.disk().faults.log.clone()
    }

    /// The I/O indexes of the failed syncs from the `start`-th on (kept
    /// whether tracing is on or not).
    pub fn fsync_failures_since(&self, start: usize) -> Vec<u64> {
        let disk = self.disk();
        let all = &disk.faults.fsync_failed_at;
        all[start.min(all.len())..].to_vec()
    }

    /// Every unsynced write and length change of every file, ordered by
    /// file name, then by the order they were issued: the order in which
    /// [`PowerLossPolicy::Explicit`] takes its survivals.
    pub fn pending_writes(&self) -> Vec<PendingWrite> {
        power_loss::pending_writes(&self.disk())
    }

    /// The number of restarts so far; handles remember the epoch they were
    /// opened in.
    pub fn epoch(&self) -> u64 {
        self.disk().epoch
    }

    /// A copy of the trace of every I/O operation since the storage was
    /// made or the trace last cleared.
    pub fn trace(&self) -> Vec<IoRecord> {
        self.disk().trace.clone()
    }

    /// Empties the trace and the fault log; the I/O index carries on.
    pub fn clear_trace(&self) {
        let mut disk = self.disk();
        disk.trace.clear();
        disk.faults.log.clear();
    }

    /// Turns tracing (and the fault log) on (the default) or off, for long
    /// runs whose trace would not fit in memory. Counters and indexes are
    /// kept either way.
    pub fn set_tracing(&self, on: bool) {
        self.disk().tracing = on;
    }

    /// The running totals.
    pub fn counters(&self) -> IoCounters {
        self.disk().counters
    }

    /// A copy of what reads of a file would see now, without an I/O
    /// operation; `None` if no such file.
    pub fn read_file(&self, name: &str) -> Option<Vec<u8>> {
        let disk = self.disk();
        let id = disk.names.get(name)?;
        disk.inodes.get(id).map(|inode| inode.current.to_vec())
    }

    /// Bytes of what reads of a file would see now at `offset`, without an
    /// I/O operation; `None` if no such file or the range runs past its
    /// end.
    pub fn read_current_at(&self, name: &str, offset: u64, len: usize) -> Option<Vec<u8>> {
        self.read_image_at(name, offset, len, false)
    }

    /// Bytes of a file's durable image at `offset`, without an I/O
    /// operation or a copy of the whole file; `None` if no such file or
    /// the range runs past its end.
    pub fn read_durable_at(&self, name: &str, offset: u64, len: usize) -> Option<Vec<u8>> {
        self.read_image_at(name, offset, len, true)
    }

    /// [`read_durable_at`](Self::read_durable_at) or
    /// [`read_current_at`](Self::read_current_at).
    fn read_image_at(&self, name: &str, offset: u64, len: usize, durable: bool) -> Option<Vec<u8>> {
        let disk = self.disk();
        let inode = disk.inodes.get(disk.names.get(name)?)?;
        let image = if durable {
            &inode.durable
        } else {
            &inode.current
        };
        let mut buf = vec![0; len];
        image.read(offset, &mut buf).then_some(buf)
    }

    /// A copy of a file's durable image, what a power loss that loses
    /// every pending operation would leave, without an I/O operation.
    pub fn read_durable_file(&self, name: &str) -> Option<Vec<u8>> {
        let disk = self.disk();
        let id = disk.names.get(name)?;
        disk.inodes.get(id).map(|inode| inode.durable.to_vec())
    }

    /// Every file and what reads of it would see now, without an I/O
    /// operation: a disk to start other runs from
    /// ([`SimStorage::with_files`]).
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let disk = self.disk();
        disk.names
            .iter()
            .filter_map(|(n, id)| Some((n.clone(), disk.inodes.get(id)?.current.to_vec())))
            .collect()
    }

    /// A new disk holding `files`, durably ([`SimStorage::write_file`]).
    pub fn with_files(files: &[(String, Vec<u8>)]) -> SimStorage {
        let storage = SimStorage::new();
        for (n, b) in files {
            storage.write_file(n, b.clone());
        }
        storage
    }

    /// Replaces a file's contents (creating it if need be), durably and
    /// without an I/O operation, forgetting its pending operations: for
    /// tests that plant files or corrupt them at rest. Open handles see the
    /// new contents. No fault applies: a full disk does not refuse it, and
    /// the creation is durable even with `lose_unsynced_namespace_ops`.
    pub fn write_file(&self, name: &str, bytes: Vec<u8>) {
        let mut disk = self.disk();
        let id = match disk.names.get(name) {
            Some(id) => *id,
            None => {
                let inode = disk.allocate_inode();
                let create = NamespaceOp::Create {
                    name: name.to_string(),
                    inode,
                };
                disk.apply_namespace_with(create, true);
                inode
            }
        };
        disk.inode_mut(id).reset(image::Image::from_bytes(&bytes));
    }

    /// Runs a namespace call through admission and the trace.
    fn call<T>(
        &self,
        op: IoOp,
        file: &str,
        to: Option<&str>,
        body: impl FnOnce(&mut Disk) -> io::Result<T>,
    ) -> io::Result<T> {
        let call = Call {
            op,
            file,
            to,
            offset: 0,
            len: 0,
            handle_epoch: None,
        };
        self.disk().perform(call, body)
    }

    /// Opens a handle on an inode inside an admitted call.
    fn handle(&self, disk: &mut Disk, inode: InodeId) -> Box<dyn File> {
        disk.inode_mut(inode).open_handles += 1;
        Box::new(SimFile {
            disk: Arc::clone(&self.disk),
            inode,
            epoch: disk.epoch,
        })
    }
}

fn lock(disk: &Mutex<Disk>) -> MutexGuard<'_, Disk> {
    // A poisoned lock only means a test thread panicked while holding it;
    // every mutation that can panic validates before it changes anything.
    disk.lock().unwrap_or_else(|e| e.into_inner())
}

/// The names the real directory accepts, so that a name the engine gets
/// away with in simulation also works on [`engine::io::OsStorage`].
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid file name {name:?}"),
        ));
    }
    Ok(())
}

impl Storage for SimStorage {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        self.call(IoOp::Create, name, None, |disk| {
            check_name(name)?;
            if disk.names.contains_key(name) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("file {name:?} exists"),
                ));
            }
            let inode = disk.allocate_inode();
            disk.apply_namespace(NamespaceOp::Create {
                name: name.to_string(),
                inode,
            });
            Ok(self.handle(disk, inode))
        })
    }

    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        self.call(IoOp::Open, name, None, |disk| {
            check_name(name)?;
            let inode = disk.lookup(name)?;
            Ok(self.handle(disk, inode))
        })
    }

    fn exists(&mut self, name: &str) -> io::Result<bool> {
        self.call(IoOp::Exists, name, None, |disk| {
            check_name(name)?;
            Ok(disk.names.contains_key(name))
        })
    }

    fn remove(&mut self, name: &str) -> io::Result<()> {
        self.call(IoOp::Remove, name, None, |disk| {
            check_name(name)?;
            disk.lookup(name)?;
            disk.apply_namespace(NamespaceOp::Remove {
                name: name.to_string(),
            });
            Ok(())
        })
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.call(IoOp::Rename, from, Some(to), |disk| {
            check_name(from)?;
            check_name(to)?;
            disk.lookup(from)?;
            disk.apply_namespace(NamespaceOp::Rename {
                from: from.to_string(),
                to: to.to_string(),
            });
            Ok(())
        })
    }

    fn list(&mut self) -> io::Result<Vec<String>> {
        self.call(IoOp::List, "", None, |disk| {
            Ok(disk.names.keys().cloned().collect())
        })
    }

    fn sync_dir(&mut self) -> io::Result<()> {
        self.call(IoOp::SyncDir, "", None, |disk| {
            disk.commit_namespace();
            disk.counters.dir_syncs += 1;
            Ok(())
        })
    }
}

/// A handle on one inode of a [`SimStorage`], valid for the epoch it was
/// opened in.
struct SimFile {
    disk: Arc<Mutex<Disk>>,
    inode: InodeId,
    epoch: u64,
}

impl SimFile {
    /// Runs a call on this handle through admission and the trace.
    fn call<T>(
        &self,
        op: IoOp,
        offset: u64,
        len: u64,
        body: impl FnOnce(&mut Disk) -> io::Result<T>,
    ) -> io::Result<T> {
        let mut disk = lock(&self.disk);
        // A stale handle's inode may be gone; its calls are refused anyway.
        let name = if disk.tracing {
            disk.inode_name(self.inode)
        } else {
            String::new()
        };
        let call = Call {
            op,
            file: &name,
            to: None,
            offset,
            len,
            handle_epoch: Some(self.epoch),
        };
        disk.perform(call, body)
    }
}

/// Fills `buf` from an inode's current image inside an admitted call,
/// counting the read; past the end it is an `UnexpectedEof` error.
fn read_current(disk: &mut Disk, inode: InodeId, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    if !disk.inode_mut(inode).current.read(offset, buf) {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "read past the end of the file",
        ));
    }
    disk.count_read(buf.len() as u64);
    Ok(())
}

/// Checks that a file may reach `end` bytes, returning `end`.
fn check_end(end: Option<u64>) -> io::Result<u64> {
    match end {
        Some(end) if end <= MAX_FILE_BYTES => Ok(end),
        _ => Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("a simulated file holds at most {MAX_FILE_BYTES} bytes"),
        )),
    }
}

impl SimFile {
    /// A write, of a buffer the caller may share: one whole chunk at a
    /// chunk boundary is then kept as it is, not copied.
    fn write(&mut self, offset: u64, buf: &[u8], shared: Option<&Arc<[u8]>>) -> io::Result<()> {
        let len = buf.len() as u64;
        self.call(IoOp::WriteAt, offset, len, |disk| {
            let end = check_end(offset.checked_add(len))?;
            if !buf.is_empty() {
                let file_len = disk.inode_mut(self.inode).current.len();
                disk.admit_growth(self.inode, end.saturating_sub(file_len))?;
            }
            // A misdirected page write sets the length the intended write
            // would have set, then lands its bytes elsewhere.
            let mut target = offset;
            if let Some(misdirection) = disk.misdirect(self.inode, offset, buf.len()) {
                let inode = disk.inode_mut(self.inode);
                if misdirection.length > inode.current.len() {
                    inode.current.set_len(misdirection.length);
                    inode.pending.push(PendingOp::SetLen {
                        len: misdirection.length,
                    });
                }
                let mut old = vec![0; buf.len()];
                inode.current.read(misdirection.target, &mut old);
                let displaced = old[..power_loss::DISPLACED_BYTES].to_vec();
                let displaced_hash = power_loss::fnv1a(&old);
                target = misdirection.target;
                let file = disk.inode_name(self.inode);
                disk.misdirected.push(MisdirectedPage {
                    file,
                    intended_offset: offset,
                    actual_offset: target,
                    page_bytes: buf.len() as u64,
                    displaced,
                    displaced_hash,
                });
                if disk.faults.config.crash_after_misdirection {
                    disk.crash_next = true;
                }
            }
            let inode = disk.inode_mut(self.inode);
            let chunks = shared
                .and_then(|b| image::shared_chunk(target, b))
                .or_else(|| image::whole_chunks(target, buf));
            match chunks {
                Some(chunks) => {
                    inode.current.put_chunks(target, &chunks);
                    inode.pending.push(PendingOp::Write {
                        offset: target,
                        bytes: Payload::Chunks(chunks),
                    });
                }
                None => {
                    inode.current.write(target, buf);
                    if !buf.is_empty() {
                        inode.pending.push(PendingOp::Write {
                            offset: target,
                            bytes: Payload::Bytes(buf.to_vec()),
                        });
                    }
                }
            }
            disk.counters.writes += 1;
            disk.counters.bytes_written += len;
            disk.watch_write(self.inode, offset);
            Ok(())
        })
    }
}

impl File for SimFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let len = buf.len() as u64;
        self.call(IoOp::ReadAt, offset, len, |disk| {
            read_current(disk, self.inode, offset, buf)
        })
    }

    fn read_shared(&mut self, offset: u64, len: usize) -> io::Result<Option<Arc<[u8]>>> {
        // The same operation as read_at, answered with the image's own
        // chunk where the read is exactly one (a page), else a copy.
        self.call(IoOp::ReadAt, offset, len as u64, |disk| {
            let chunk = disk
                .inode_mut(self.inode)
                .current
                .shared_chunk_at(offset, len);
            let image = match chunk {
                Some(chunk) => {
                    disk.count_read(len as u64);
                    chunk
                }
                None => {
                    let mut buf = vec![0; len];
                    read_current(disk, self.inode, offset, &mut buf)?;
                    Arc::from(buf)
                }
            };
            Ok(Some(image))
        })
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.write(offset, buf, None)
    }

    fn write_shared(&mut self, offset: u64, buf: &Arc<[u8]>) -> io::Result<()> {
        self.write(offset, buf, Some(buf))
    }

    fn sync(&mut self) -> io::Result<()> {
        self.call(IoOp::Sync, 0, 0, |disk| {
            // A failed sync behaves as Linux's does after a writeback
            // error: the error is reported once and the file's pending
            // writes are marked clean without reaching the disk. Reads
            // still see them until a restart, which loses them whatever
            // the crash mode; a later sync has nothing left to persist and
            // succeeds, so a retry that says yes means nothing.
            if disk.sync_fails(self.inode) {
                let inode = disk.inode_mut(self.inode);
                inode.pending.clear();
                inode.writes_dropped = true;
                return Err(io::Error::other(inject::FSYNC_FAILURE_MESSAGE));
            }
            let log = disk.inode_mut(self.inode).name.starts_with(REDO_LOG_PREFIX);
            if disk.sync_lies(self.inode) {
                disk.counters.syncs += 1;
                disk.counters.log_syncs += u64::from(log);
                return Ok(());
            }
            let inode = disk.inode_mut(self.inode);
            // Replaying the few pending operations is cheaper than copying
            // the whole current image.
            for op in inode.pending.drain(..) {
                op.apply(&mut inode.durable);
            }
            // Comparing whole images here would make every sync cost the
            // file's size; the tests compare them, this checks the length
            // (which writes a failed sync dropped may have changed).
            assert!(
                inode.writes_dropped || inode.durable.len() == inode.current.len(),
                "a synced file's durable length is its current length"
            );
            disk.counters.syncs += 1;
            disk.counters.log_syncs += u64::from(log);
            Ok(())
        })
    }

    fn len(&mut self) -> io::Result<u64> {
        self.call(IoOp::Len, 0, 0, |disk| {
            Ok(disk.inode_mut(self.inode).current.len())
        })
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.call(IoOp::SetLen, 0, len, |disk| {
            check_end(Some(len))?;
            let file_len = disk.inode_mut(self.inode).current.len();
            disk.admit_growth(self.inode, len.saturating_sub(file_len))?;
            let inode = disk.inode_mut(self.inode);
            inode.current.set_len(len);
            inode.pending.push(PendingOp::SetLen { len });
            Ok(())
        })
    }
}

impl Drop for SimFile {
    fn drop(&mut self) {
        let mut disk = lock(&self.disk);
        // Handles of an earlier epoch were forgotten wholesale at restart.
        if disk.epoch == self.epoch {
            disk.close_handle(self.inode);
        }
    }
}
