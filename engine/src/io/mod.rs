//! The engine's only door to the outside world: files and time.
//!
//! Everything the engine does that could differ between two runs with the same
//! inputs (reading and writing files, asking for the time) goes through the
//! [`Storage`], [`File`] and [`Clock`] traits defined here. On a real directory
//! they are [`OsStorage`] and [`OsClock`]; inside the simulator they are the
//! simulated disk and clock of the `sim` crate, which can crash, tear writes,
//! lose unsynced data and fail fsync. Mirrors InnoDB's `os0file`.
//!
//! Durability contract, which both implementations honour and the engine
//! relies on:
//!
//! - `write_at` makes data visible to later reads of the same file at once, but
//!   durable only after a successful `sync` of that file.
//! - `set_len` is, like a write, durable only after `sync`.
//! - `create`, `remove` and `rename` are durable when they return `Ok` (the OS
//!   implementation syncs the directory).
//! - A failed `sync` means nothing since the last successful sync is known to
//!   be durable; the engine must stop and recover, never carry on.
//!
//! This module must never be bypassed: no other engine module touches
//! `std::fs`, `Instant`, `SystemTime` or threads.

mod mem;
mod os;

pub use mem::MemStorage;
pub use os::{OsClock, OsStorage};

use std::io;

/// A file opened through a [`Storage`].
pub trait File: Send {
    /// Reads exactly `buf.len()` bytes at `offset`. Reading past the end is
    /// an `UnexpectedEof` error.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes all of `buf` at `offset`, extending the file if needed.
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()>;
    /// [`File::write_at`] of a buffer the caller shares: storage that keeps
    /// what is written in memory (the simulated disk) may keep the buffer
    /// itself rather than a copy. The pager writes each page image twice,
    /// to the doublewrite area and home, from one shared buffer.
    fn write_shared(&mut self, offset: u64, buf: &std::sync::Arc<[u8]>) -> io::Result<()> {
        self.write_at(offset, buf)
    }
    /// [`File::read_at`] of `len` bytes at `offset` into a buffer shared
    /// with the storage, for storage that keeps what is written in memory
    /// as such buffers (the simulated disk's page images): the pager's
    /// frames share a page image until they change it. `Ok(None)`, having
    /// done nothing, from storage that does not: the caller reads with
    /// [`File::read_at`].
    fn read_shared(&mut self, offset: u64, len: usize) -> io::Result<Option<std::sync::Arc<[u8]>>> {
        let _ = (offset, len);
        Ok(None)
    }
    /// Makes every earlier write and length change of this file durable.
    fn sync(&mut self) -> io::Result<()>;
    /// The current length of the file in bytes.
    fn len(&mut self) -> io::Result<u64>;
    /// Whether the file is empty.
    fn is_empty(&mut self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Truncates or extends (with zeros) the file to `len` bytes.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

/// A flat namespace of files: a directory, real or simulated.
///
/// As on POSIX file systems, a create, remove or rename is visible at once
/// but durable only once [`Storage::sync_dir`] has returned after it: a
/// power loss before that may undo it, whatever was synced inside the
/// files. Syncing a file makes its bytes durable, never its name.
pub trait Storage: Send {
    /// Creates a new empty file, failing if it exists.
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>>;
    /// Opens an existing file for reading and writing.
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>>;
    /// Whether a file of that name exists.
    fn exists(&mut self, name: &str) -> io::Result<bool>;
    /// Removes a file.
    fn remove(&mut self, name: &str) -> io::Result<()>;
    /// Renames a file, replacing any file at `to`.
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()>;
    /// The names of all files, sorted.
    fn list(&mut self) -> io::Result<Vec<String>>;
    /// Makes every create, remove and rename done so far durable (fsync
    /// of the directory).
    fn sync_dir(&mut self) -> io::Result<()>;
}

/// Monotonic time in microseconds. The engine schedules its background work
/// (the once-a-second log flush, the page cleaner) off this clock. Reading
/// it takes `&self` and it is `Sync`, so the places that share one (see
/// [`SharedClock`]) read it without a lock.
pub trait Clock: Send + Sync {
    /// Microseconds since an arbitrary, fixed origin.
    fn now_us(&self) -> u64;
}

impl<S: Storage + ?Sized> Storage for Box<S> {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        (**self).create(name)
    }
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        (**self).open(name)
    }
    fn exists(&mut self, name: &str) -> io::Result<bool> {
        (**self).exists(name)
    }
    fn remove(&mut self, name: &str) -> io::Result<()> {
        (**self).remove(name)
    }
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        (**self).rename(from, to)
    }
    fn list(&mut self) -> io::Result<Vec<String>> {
        (**self).list()
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        (**self).sync_dir()
    }
}

impl<C: Clock + ?Sized> Clock for Box<C> {
    fn now_us(&self) -> u64 {
        (**self).now_us()
    }
}

/// One clock read from several places of the engine (the compression
/// counters and the buffer pool's relocations).
#[derive(Clone)]
pub struct SharedClock(std::sync::Arc<dyn Clock>);

impl SharedClock {
    /// Shares `clock`.
    pub fn new(clock: Box<dyn Clock>) -> Self {
        SharedClock(std::sync::Arc::from(clock))
    }
}

impl Clock for SharedClock {
    fn now_us(&self) -> u64 {
        self.0.now_us()
    }
}

/// A clock that stands still unless told to move: for tests and benchmarks
/// that must not depend on real time.
#[derive(Debug, Default)]
pub struct ManualClock {
    now_us: std::sync::atomic::AtomicU64,
}

impl ManualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }
    /// Moves the clock forward.
    pub fn advance_us(&self, us: u64) {
        self.now_us
            .fetch_add(us, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_us(&self) -> u64 {
        self.now_us.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_us(&self) -> u64 {
        (**self).now_us()
    }
}

/// The `ignore-fsync-failure` and `retry-fsync-after-eio` canaries: a
/// storage whose files report a failed sync as a success (`retry: false`),
/// or retry it once and report what the retry said (`retry: true`). Only
/// the canaries use it.
pub(crate) struct SwallowFsyncErrors {
    /// The storage whose sync errors are hidden.
    pub inner: Box<dyn Storage>,
    /// Retry a failed sync once instead of ignoring the failure.
    pub retry: bool,
}

struct SwallowFile(Box<dyn File>, bool);

impl File for SwallowFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.0.read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.0.write_at(offset, buf)
    }
    fn write_shared(&mut self, offset: u64, buf: &std::sync::Arc<[u8]>) -> io::Result<()> {
        self.0.write_shared(offset, buf)
    }
    fn read_shared(&mut self, offset: u64, len: usize) -> io::Result<Option<std::sync::Arc<[u8]>>> {
        self.0.read_shared(offset, len)
    }
    fn sync(&mut self) -> io::Result<()> {
        match self.0.sync() {
            Ok(()) => Ok(()),
            // The planted bug: a retry after EIO is believed.
            Err(_) if self.1 => self.0.sync(),
            // The planted bug: whatever fsync said, carry on as if it worked.
            Err(_) => Ok(()),
        }
    }
    fn len(&mut self) -> io::Result<u64> {
        self.0.len()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

impl Storage for SwallowFsyncErrors {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        Ok(Box::new(SwallowFile(self.inner.create(name)?, self.retry)))
    }
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        Ok(Box::new(SwallowFile(self.inner.open(name)?, self.retry)))
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
