//! What the simulated disk remembers about the calls made on it: a trace of
//! every I/O operation and running counters.
//!
//! Every call on the storage or on one of its files gets the next I/O index,
//! starting at 0, whether it succeeds, fails or is refused because the disk
//! has crashed. The index is what [`SimStorage::set_crash_at`] aims at, so a
//! test can run a workload once, read how many operations it issued from the
//! trace or the counters, and then rerun it crashing at every index.
//!
//! The trace is data, not text: two runs of the same seed must produce equal
//! traces, and a determinism check can hash them (every type here is `Hash`).
//!
//! [`SimStorage::set_crash_at`]: super::SimStorage::set_crash_at

use std::io;

/// The kind of an I/O operation, one per method of the
/// [`Storage`](engine::io::Storage) and [`File`](engine::io::File) traits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IoOp {
    /// [`Storage::create`](engine::io::Storage::create).
    Create,
    /// [`Storage::open`](engine::io::Storage::open).
    Open,
    /// [`Storage::exists`](engine::io::Storage::exists).
    Exists,
    /// [`Storage::list`](engine::io::Storage::list).
    List,
    /// [`Storage::remove`](engine::io::Storage::remove).
    Remove,
    /// [`Storage::rename`](engine::io::Storage::rename).
    Rename,
    /// [`File::read_at`](engine::io::File::read_at).
    ReadAt,
    /// [`File::write_at`](engine::io::File::write_at).
    WriteAt,
    /// [`File::sync`](engine::io::File::sync).
    Sync,
    /// [`File::len`](engine::io::File::len).
    Len,
    /// [`File::set_len`](engine::io::File::set_len).
    SetLen,
    /// [`Storage::sync_dir`](engine::io::Storage::sync_dir).
    SyncDir,
}

/// How an I/O operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoOutcome {
    /// It ran and succeeded.
    Done,
    /// It ran and failed with an error of this kind (a missing file, a read
    /// past the end, an invalid name ...).
    Failed(io::ErrorKind),
    /// It did not run: the disk had crashed, the crash was set to fire at
    /// this very operation, or the file handle was opened before a crash.
    Crashed,
}

/// A sync's time on the device in a time-driven run (kept while tracing):
/// when the device began it (after the sync before it) and finished it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncSpan {
    /// When the device began the sync, in simulated microseconds.
    pub start_us: u64,
    /// When it finished.
    pub end_us: u64,
    /// The file synced (empty for a directory's sync).
    pub file: String,
}

/// One traced I/O operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IoRecord {
    /// The operation's I/O index: 0 for the first call on a new storage,
    /// counting on across crashes and restarts.
    pub index: u64,
    /// What was called.
    pub op: IoOp,
    /// The file the call names, or that the handle refers to (its name at
    /// the time of the call); empty for [`IoOp::List`] and for a handle
    /// whose file a restart discarded. For [`IoOp::Rename`], the source.
    pub file: String,
    /// For [`IoOp::Rename`], the destination.
    pub to: Option<String>,
    /// For [`IoOp::ReadAt`] and [`IoOp::WriteAt`], the byte offset; 0
    /// otherwise.
    pub offset: u64,
    /// For [`IoOp::ReadAt`] and [`IoOp::WriteAt`], the number of bytes; for
    /// [`IoOp::SetLen`], the new length of the file; 0 otherwise.
    pub len: u64,
    /// How it ended.
    pub outcome: IoOutcome,
}

/// Running totals over the life of a storage, across crashes and restarts.
/// Reads, writes and syncs count only calls that succeeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct IoCounters {
    /// I/O indexes handed out: every call, whatever its outcome.
    pub ops: u64,
    /// Successful `read_at` calls.
    pub reads: u64,
    /// Bytes returned by successful `read_at` calls.
    pub bytes_read: u64,
    /// Successful `write_at` calls.
    pub writes: u64,
    /// Bytes accepted by successful `write_at` calls.
    pub bytes_written: u64,
    /// Successful `sync` calls, lying ones included (they say yes).
    pub syncs: u64,
    /// Of those, the syncs of redo log files ([`super::REDO_LOG_PREFIX`]).
    pub log_syncs: u64,
    /// Successful `sync_dir` calls.
    pub dir_syncs: u64,
    /// Crashes, whether set with `set_crash_at`, called with `crash_now`, or
    /// implied by `restart`.
    pub crashes: u64,
    /// Completed restarts.
    pub restarts: u64,
}
