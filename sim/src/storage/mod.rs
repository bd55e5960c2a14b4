//! [`SimStorage`]: a simulated directory that crashes, loses unsynced writes
//! and tears them at sector granularity, on demand and deterministically.
//!
//! It implements the engine's [`Storage`] and [`File`] traits and honours
//! their durability contract (see `engine::io`), and no more: each file
//! keeps a durable image (the bytes and length a power loss cannot take)
//! and the ordered list of writes and length changes since its last
//! successful sync; reads see the durable image with that list applied.
//! `sync` folds the list into the durable image. `create`, `remove` and
//! `rename` are durable when they return `Ok`.
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
//! a call. Faults other than crashes (failing or lying fsync, a full disk,
//! bit rot, latency) are not modelled yet.
//!
//! Misuse the engine can reach (a read past the end, a missing file, a
//! name that exists, an invalid name, a file past [`MAX_FILE_BYTES`]) is an
//! `io::Error`, never a panic. Misuse only a test can reach (an explicit
//! power-loss outcome that does not fit the pending writes) is an assertion.

mod disk;
mod power_loss;
mod trace;

#[cfg(test)]
mod tests;

pub use disk::MAX_FILE_BYTES;
pub use power_loss::{
    CrashMode, PendingKind, PendingWrite, PowerLossPolicy, RestartReport, Survival,
};
pub use trace::{IoCounters, IoOp, IoOutcome, IoRecord};

use disk::{Call, Disk, InodeId, NamespaceOp, PendingOp};
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
            .finish()
    }
}

/// Whether an error is one a simulated crash caused.
pub fn is_simulated_crash(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::Other && error.to_string() == disk::CRASH_MESSAGE
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
    /// the crashed state. The I/O index and the trace carry on.
    ///
    /// # Panics
    ///
    /// If an explicit policy does not fit the pending operations, or a
    /// random one has an invalid sector size or probabilities; the disk is
    /// unchanged when it panics.
    pub fn restart(&self, mode: CrashMode) -> RestartReport {
        let mut disk = self.disk();
        let report = power_loss::settle(&mut disk, &mode);
        disk.crash();
        disk.forget_handles();
        disk.crashed = false;
        disk.counters.restarts += 1;
        report
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

    /// Empties the trace; the I/O index carries on.
    pub fn clear_trace(&self) {
        self.disk().trace.clear();
    }

    /// Turns tracing on (the default) or off, for long runs whose trace
    /// would not fit in memory. Counters and indexes are kept either way.
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
        disk.inodes.get(id).map(|inode| inode.current.clone())
    }

    /// A copy of a file's durable image, what a power loss that loses
    /// every pending operation would leave, without an I/O operation.
    pub fn read_durable_file(&self, name: &str) -> Option<Vec<u8>> {
        let disk = self.disk();
        let id = disk.names.get(name)?;
        disk.inodes.get(id).map(|inode| inode.durable.clone())
    }

    /// Replaces a file's contents (creating it if need be), durably and
    /// without an I/O operation, forgetting its pending operations: for
    /// tests that plant files or corrupt them at rest. Open handles see the
    /// new contents.
    pub fn write_file(&self, name: &str, bytes: Vec<u8>) {
        let mut disk = self.disk();
        let id = match disk.names.get(name) {
            Some(id) => *id,
            None => {
                let inode = disk.allocate_inode();
                disk.apply_namespace(NamespaceOp::Create {
                    name: name.to_string(),
                    inode,
                });
                inode
            }
        };
        disk.inode_mut(id).reset(bytes);
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

/// Checks that a file may reach `end` bytes.
fn check_end(end: Option<u64>) -> io::Result<()> {
    match end {
        Some(end) if end <= MAX_FILE_BYTES => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("a simulated file holds at most {MAX_FILE_BYTES} bytes"),
        )),
    }
}

impl File for SimFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let len = buf.len() as u64;
        self.call(IoOp::ReadAt, offset, len, |disk| {
            let image = &disk.inode_mut(self.inode).current;
            match offset.checked_add(len) {
                Some(end) if end <= image.len() as u64 => {
                    buf.copy_from_slice(&image[offset as usize..end as usize]);
                }
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "read past the end of the file",
                    ))
                }
            }
            disk.counters.reads += 1;
            disk.counters.bytes_read += len;
            Ok(())
        })
    }

    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let len = buf.len() as u64;
        self.call(IoOp::WriteAt, offset, len, |disk| {
            check_end(offset.checked_add(len))?;
            let inode = disk.inode_mut(self.inode);
            disk::write_image(&mut inode.current, offset, buf);
            if !buf.is_empty() {
                inode.pending.push(PendingOp::Write {
                    offset,
                    bytes: buf.to_vec(),
                });
            }
            disk.counters.writes += 1;
            disk.counters.bytes_written += len;
            Ok(())
        })
    }

    fn sync(&mut self) -> io::Result<()> {
        self.call(IoOp::Sync, 0, 0, |disk| {
            let inode = disk.inode_mut(self.inode);
            // Replaying the few pending operations is cheaper than copying
            // the whole current image.
            for op in inode.pending.drain(..) {
                op.apply(&mut inode.durable);
            }
            // Comparing whole images here would make every sync cost the
            // file's size; the tests compare them, this checks the length.
            assert_eq!(
                inode.durable.len(),
                inode.current.len(),
                "a synced file's durable length is its current length"
            );
            disk.counters.syncs += 1;
            Ok(())
        })
    }

    fn len(&mut self) -> io::Result<u64> {
        self.call(IoOp::Len, 0, 0, |disk| {
            Ok(disk.inode_mut(self.inode).current.len() as u64)
        })
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.call(IoOp::SetLen, 0, len, |disk| {
            check_end(Some(len))?;
            let inode = disk.inode_mut(self.inode);
            disk::set_image_len(&mut inode.current, len);
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
