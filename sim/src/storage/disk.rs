//! The state behind every clone of a [`SimStorage`](super::SimStorage): the
//! namespace, the files' durable and current images, the pending (unsynced)
//! operations, and the crash machinery.
//!
//! Files are inodes, as on a real file system: a name points at an inode, a
//! handle points at the inode it opened. Renaming a file therefore does not
//! disturb its open handles, and a handle to a removed file keeps reading
//! and writing the unlinked inode (which a restart then discards) instead of
//! silently landing in whatever file later takes the name.
//!
//! ```text
//!   names                 inodes
//!   "ibdata1" ──────────▶ #0  durable ─┬─ pending: [write, set_len, write]
//!   "ib_logfile0" ──────▶ #1  durable ─┘            │ applied in order
//!                         #4  (unlinked,            ▼
//!                              handle still open)  current (what reads see)
//! ```
//!
//! Invariant, per inode: `current` equals `durable` with `pending` applied in
//! order. `sync` folds `pending` into `durable`; a restart rebuilds `durable`
//! from the operations the crash mode lets survive.
//!
//! Namespace operations are records ([`NamespaceOp`]) applied in one place,
//! to two namespaces: `names`, what calls see, and `durable_names`, what a
//! power loss keeps. By default both change at once (durable on return).
//! With `lose_unsynced_namespace_ops`, as POSIX promises, only `names` changes and the record waits in
//! `pending_namespace` until a `sync_dir` commits it to `durable_names`, or
//! a restart replays the prefix that survived:
//!
//! ```text
//!   durable_names ── pending_namespace: [create, rename, remove] ──▶ names
//!                    (committed by the next successful sync_dir; a file's
//!                    own sync commits its bytes, never its name)
//! ```
//!
//! An inode lives while a name in either namespace, a pending creation, or
//! a handle of the current epoch refers to it, so a restart that revives a
//! name always finds its inode.

use super::faults::NamespaceChange;
use super::image::{Chunk, Image, CHUNK};
use super::inject::Injector;
use super::trace::{IoCounters, IoOp, IoOutcome, IoRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::io;

/// Identifies an inode for the life of a storage; never reused.
pub(super) type InodeId = u64;

/// The largest file the simulated disk holds. A write or extension past it
/// fails with `FileTooLarge` (EFBIG on a real file system) rather than
/// asking the allocator for a garbage-sized buffer and aborting the test.
pub const MAX_FILE_BYTES: u64 = 1 << 32;

/// The message of every error caused by a simulated crash.
pub(super) const CRASH_MESSAGE: &str = "simulated crash";

/// The error returned by every operation that a crash refuses.
pub(super) fn crash_error() -> io::Error {
    io::Error::other(CRASH_MESSAGE)
}

/// A change to a file's contents that has not been synced yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PendingOp {
    /// `write_at(offset, bytes)`.
    Write { offset: u64, bytes: Payload },
    /// `set_len(len)`.
    SetLen { len: u64 },
}

/// The bytes of a pending write: whole chunks (page writes), shared with
/// the current image and handed to the durable one at a sync without a
/// copy, or any other run of bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Payload {
    /// Any bytes.
    Bytes(Vec<u8>),
    /// Whole chunks at a chunk boundary.
    Chunks(Vec<Chunk>),
}

impl Payload {
    /// Bytes written.
    pub(super) fn len(&self) -> usize {
        match self {
            Payload::Bytes(b) => b.len(),
            Payload::Chunks(c) => c.len() * CHUNK,
        }
    }

    /// The bytes, as one run (a copy for chunks; torn writes only).
    pub(super) fn to_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            Payload::Bytes(b) => std::borrow::Cow::Borrowed(b),
            Payload::Chunks(c) => {
                std::borrow::Cow::Owned(c.iter().flat_map(|c| c.iter().copied()).collect())
            }
        }
    }
}

impl PendingOp {
    /// Applies the whole operation to an image.
    pub(super) fn apply(&self, image: &mut Image) {
        match self {
            PendingOp::Write {
                offset,
                bytes: Payload::Bytes(bytes),
            } => image.write(*offset, bytes),
            PendingOp::Write {
                offset,
                bytes: Payload::Chunks(chunks),
            } => image.put_chunks(*offset, chunks),
            PendingOp::SetLen { len } => image.set_len(*len),
        }
    }
}

/// One file's contents, durable and current.
#[derive(Debug, Clone, Default)]
pub(super) struct Inode {
    /// The name the inode has, or last had before it was unlinked.
    pub name: String,
    /// Whether a name points at this inode.
    pub linked: bool,
    /// The bytes, and so the length, that survive a power loss.
    pub durable: Image,
    /// Writes and length changes since the last successful sync, in order.
    pub pending: Vec<PendingOp>,
    /// What reads see: `durable` with `pending` applied, and the writes a
    /// failed sync dropped since the last restart (see `writes_dropped`).
    pub current: Image,
    /// Whether a failed sync dropped pending writes since the last restart:
    /// `current` then holds bytes no crash lets survive.
    pub writes_dropped: bool,
    /// Live handles of the current epoch; an unlinked inode is dropped when
    /// its last handle goes, unless a durable name or a pending creation
    /// still refers to it (see the module comment).
    pub open_handles: usize,
}

impl Inode {
    fn new(name: &str) -> Self {
        Inode {
            name: name.to_string(),
            linked: true,
            ..Inode::default()
        }
    }

    /// Replaces both images and forgets pending operations. The two share
    /// their chunks until the next write.
    pub(super) fn reset(&mut self, image: Image) {
        self.current = image.clone();
        self.durable = image;
        self.pending.clear();
        self.writes_dropped = false;
    }
}

/// A change to the namespace; see the module comment for when it becomes
/// durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NamespaceOp {
    /// A new empty file.
    Create { name: String, inode: InodeId },
    /// Unlink a name.
    Remove { name: String },
    /// Move `from` to `to`, unlinking whatever `to` named.
    Rename { from: String, to: String },
}

impl NamespaceOp {
    /// Applies the change to a namespace, returning the inode it unlinked
    /// (the removed one, or the one a rename replaced), if any. A create
    /// over an existing name (possible only when replaying onto the durable
    /// namespace) replaces it.
    fn apply_to(&self, names: &mut BTreeMap<String, InodeId>) -> Option<InodeId> {
        match self {
            NamespaceOp::Create { name, inode } => names.insert(name.clone(), *inode),
            NamespaceOp::Remove { name } => names.remove(name),
            NamespaceOp::Rename { from, to } => {
                if from == to {
                    return None;
                }
                let id = names.remove(from)?;
                names.insert(to.clone(), id)
            }
        }
    }

    /// The public description of the change.
    pub(super) fn describe(&self) -> NamespaceChange {
        match self {
            NamespaceOp::Create { name, .. } => NamespaceChange::Create { name: name.clone() },
            NamespaceOp::Remove { name } => NamespaceChange::Remove { name: name.clone() },
            NamespaceOp::Rename { from, to } => NamespaceChange::Rename {
                from: from.clone(),
                to: to.clone(),
            },
        }
    }
}

/// Everything one simulated disk holds.
#[derive(Debug, Default)]
pub(super) struct Disk {
    /// The namespace calls see.
    pub names: BTreeMap<String, InodeId>,
    /// The namespace a power loss keeps (before pending operations).
    pub durable_names: BTreeMap<String, InodeId>,
    /// Namespace operations not yet durable, oldest first; empty unless
    /// `lose_unsynced_namespace_ops` is on.
    pub pending_namespace: Vec<NamespaceOp>,
    pub inodes: BTreeMap<InodeId, Inode>,
    next_inode: InodeId,
    /// The I/O index the next call gets.
    next_index: u64,
    /// The I/O index of the call being performed (or last performed).
    pub op_index: u64,
    /// The I/O index at which to crash, disarmed when it fires.
    pub crash_at: Option<u64>,
    /// Crash at the next operation (set by a misdirection that crashes).
    pub crash_next: bool,
    /// Page writes misdirected since the last restart.
    pub misdirected: Vec<super::MisdirectedPage>,
    /// The armed write watch, and how many of its writes it has seen.
    pub watch: Option<(WriteWatch, u64)>,
    /// Whether the watch armed its crash.
    pub watch_fired: bool,
    pub crashed: bool,
    /// Bumped by every restart; handles of an older epoch are dead.
    pub epoch: u64,
    pub tracing: bool,
    pub trace: Vec<IoRecord>,
    /// The syncs run on the timeline, while tracing.
    pub sync_spans: Vec<super::SyncSpan>,
    pub counters: IoCounters,
    /// Faults other than crashes: configuration, generators, log, clock.
    pub faults: Injector,
}

/// A crash tied to what the engine writes: `after_ops` operations after
/// the `nth` successful write (counting from 1) to `file` at one of
/// `offsets`, the disk crashes (1: the very next operation, typically the
/// sync that would have made the write durable). The redo log's checkpoint
/// slots are the use: a crash just after a checkpoint was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteWatch {
    /// The file watched.
    pub file: String,
    /// The offsets at which a write counts.
    pub offsets: Vec<u64>,
    /// Which counted write arms the crash.
    pub nth: u64,
    /// Operations from that write to the crash (at least 1).
    pub after_ops: u64,
}

/// Describes a call for admission and for the trace.
pub(super) struct Call<'a> {
    pub op: IoOp,
    pub file: &'a str,
    pub to: Option<&'a str>,
    pub offset: u64,
    pub len: u64,
    /// For calls on a handle, the epoch it was opened in.
    pub handle_epoch: Option<u64>,
}

impl Disk {
    pub(super) fn new() -> Self {
        Disk {
            tracing: true,
            sync_spans: Vec::new(),
            ..Disk::default()
        }
    }

    /// Runs one I/O operation: hands out its index, fires a crash set for
    /// it, refuses it if the disk has crashed or the handle is stale, runs
    /// `body` otherwise, and records the outcome.
    pub(super) fn perform<T>(
        &mut self,
        call: Call<'_>,
        body: impl FnOnce(&mut Disk) -> io::Result<T>,
    ) -> io::Result<T> {
        let index = self.next_index;
        self.next_index += 1;
        self.counters.ops += 1;
        if self.crash_at == Some(index) {
            self.crash_at = None;
            self.crash();
        }
        if std::mem::take(&mut self.crash_next) {
            self.crash();
        }
        let stale = call.handle_epoch.is_some_and(|epoch| epoch != self.epoch);
        let result = if self.crashed || stale {
            Err(crash_error())
        } else {
            self.op_index = index;
            let result = body(self);
            let transferred_bytes = match (&result, call.op) {
                (Ok(_), IoOp::ReadAt | IoOp::WriteAt) => call.len,
                _ => 0,
            };
            self.charge_latency(call.op, transferred_bytes, call.file);
            result
        };
        if self.tracing {
            let outcome = match &result {
                Ok(_) => IoOutcome::Done,
                Err(_) if self.crashed || stale => IoOutcome::Crashed,
                Err(error) => IoOutcome::Failed(error.kind()),
            };
            self.trace.push(IoRecord {
                index,
                op: call.op,
                file: call.file.to_string(),
                to: call.to.map(str::to_string),
                offset: call.offset,
                len: call.len,
                outcome,
            });
        }
        result
    }

    /// Counts a read of `len` bytes.
    pub(super) fn count_read(&mut self, len: u64) {
        self.counters.reads += 1;
        self.counters.bytes_read += len;
    }

    /// Counts a write at `offset` of inode `id` against the armed watch,
    /// arming its crash at the `nth` (an earlier armed crash still wins).
    pub(super) fn watch_write(&mut self, id: InodeId, offset: u64) {
        let Some((watch, seen)) = &mut self.watch else {
            return;
        };
        if !watch.offsets.contains(&offset)
            || self.inodes.get(&id).map(|i| i.name.as_str()) != Some(watch.file.as_str())
        {
            return;
        }
        *seen += 1;
        if *seen < watch.nth {
            return;
        }
        let at = self.op_index + watch.after_ops.max(1);
        self.crash_at_earliest(at);
        self.watch = None;
        self.watch_fired = true;
    }

    /// Arms a crash at `index` unless one still to come is armed sooner.
    pub(super) fn crash_at_earliest(&mut self, index: u64) {
        self.crash_at = Some(match self.crash_at {
            Some(c) if c >= self.next_index && c < index => c,
            _ => index,
        });
    }

    /// Pulls the plug: every later operation fails until a restart.
    pub(super) fn crash(&mut self) {
        if !self.crashed {
            self.crashed = true;
            self.counters.crashes += 1;
        }
    }

    /// The inode a live handle refers to. Admission has checked the epoch,
    /// and inodes of the current epoch are dropped only with their last
    /// handle, so it is there.
    pub(super) fn inode_mut(&mut self, id: InodeId) -> &mut Inode {
        self.inodes
            .get_mut(&id)
            .expect("a live handle's inode outlives the handle")
    }

    /// The name to trace for a handle's calls.
    pub(super) fn inode_name(&self, id: InodeId) -> String {
        self.inodes
            .get(&id)
            .map(|inode| inode.name.clone())
            .unwrap_or_default()
    }

    /// The inode a name points at.
    pub(super) fn lookup(&self, name: &str) -> io::Result<InodeId> {
        self.names.get(name).copied().ok_or_else(|| not_found(name))
    }

    /// Allocates a fresh inode id.
    pub(super) fn allocate_inode(&mut self) -> InodeId {
        let id = self.next_inode;
        self.next_inode += 1;
        id
    }

    /// The I/O index the next call gets.
    pub(super) fn next_index(&self) -> u64 {
        self.next_index
    }

    /// Applies a namespace change to the namespace calls see, and to the
    /// durable one unless namespace changes wait for a sync.
    pub(super) fn apply_namespace(&mut self, op: NamespaceOp) {
        let durable_now = !self.faults.config.lose_unsynced_namespace_ops;
        self.apply_namespace_with(op, durable_now);
    }

    /// Applies a namespace change, durable at once or pending.
    pub(super) fn apply_namespace_with(&mut self, op: NamespaceOp, durable_now: bool) {
        if let NamespaceOp::Create { name, inode } = &op {
            assert!(
                !self.names.contains_key(name),
                "create of an existing name is refused before it is applied"
            );
            self.inodes.insert(*inode, Inode::new(name));
        }
        let unlinked = op.apply_to(&mut self.names);
        if let NamespaceOp::Rename { from, to } = &op {
            if from != to {
                if let Some(inode) = self.names.get(to).and_then(|id| self.inodes.get_mut(id)) {
                    inode.name = to.clone();
                }
            }
        }
        if durable_now {
            op.apply_to(&mut self.durable_names);
        } else {
            self.pending_namespace.push(op);
        }
        if let Some(id) = unlinked {
            if let Some(inode) = self.inodes.get_mut(&id) {
                inode.linked = false;
            }
            self.collect_garbage();
        }
    }

    /// Makes every pending namespace change durable (a successful
    /// `sync_dir`, or switching the fault off).
    pub(super) fn commit_namespace(&mut self) {
        if self.pending_namespace.is_empty() {
            return;
        }
        for op in std::mem::take(&mut self.pending_namespace) {
            op.apply_to(&mut self.durable_names);
        }
        self.collect_garbage();
    }

    /// Drops every inode nothing refers to any more: no current name, no
    /// durable name, no pending creation, no handle.
    fn collect_garbage(&mut self) {
        let mut reachable: BTreeSet<InodeId> = self.durable_names.values().copied().collect();
        for op in &self.pending_namespace {
            if let NamespaceOp::Create { inode, .. } = op {
                reachable.insert(*inode);
            }
        }
        self.inodes
            .retain(|id, inode| inode.linked || inode.open_handles > 0 || reachable.contains(id));
    }

    /// At a restart: keeps the first `kept` pending namespace changes and
    /// loses the rest, making the result both namespaces. Inodes no longer
    /// named are marked unlinked (and dropped with the old handles).
    pub(super) fn settle_namespace(&mut self, kept: usize) {
        let mut names = std::mem::take(&mut self.durable_names);
        for op in self.pending_namespace.drain(..).take(kept) {
            op.apply_to(&mut names);
        }
        for inode in self.inodes.values_mut() {
            inode.linked = false;
        }
        for (name, id) in &names {
            let inode = self
                .inodes
                .get_mut(id)
                .expect("an inode lives while a durable name or pending creation refers to it");
            inode.linked = true;
            inode.name.clone_from(name);
        }
        self.names.clone_from(&names);
        self.durable_names = names;
    }

    /// Forgets a handle of the current epoch.
    pub(super) fn close_handle(&mut self, id: InodeId) {
        let Some(inode) = self.inodes.get_mut(&id) else {
            return;
        };
        assert!(inode.open_handles > 0, "a handle is closed once");
        inode.open_handles -= 1;
        if inode.open_handles == 0 && !inode.linked {
            self.collect_garbage();
        }
    }

    /// After a crash: unlinked inodes die with the process that held them,
    /// and no handle of the old epoch counts any more.
    pub(super) fn forget_handles(&mut self) {
        self.inodes.retain(|_, inode| inode.linked);
        for inode in self.inodes.values_mut() {
            inode.open_handles = 0;
        }
        self.epoch += 1;
    }
}

/// The error for a name that does not exist.
pub(super) fn not_found(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no file {name:?}"))
}
