//! Table and record locks: queues, conflicts, waits, grants and deadlock
//! detection. Mirrors InnoDB's `lock0lock.cc` (the 5.1 plugin's rules).
//!
//! Record locks are kept by logical position, not by page and heap number:
//! a lock names an index and the key of a record in it, or the index's
//! supremum (the end of the index, above every record). InnoDB's locks
//! live on physical records and move with them when pages split, merge or
//! reorganize (`lock_move_rec_list_end` and friends); naming the key makes
//! those moves no-ops, and leaves two explicit moves, as in InnoDB: a
//! record that disappears hands its locks to its successor as gap locks
//! ([`LockSys::inherit_to_gap`]), and a record inserted into a locked gap
//! takes a copy of the gap locks of the record after it
//! ([`LockSys::inherit_gap_on_insert`]).
//!
//! An insert takes no lock on the record it inserts: the record's
//! DB_TRX_ID is the lock while that transaction is active (InnoDB's
//! implicit lock). A transaction that asks to lock such a record first
//! makes the implicit lock explicit for its owner
//! ([`LockSys::convert_implicit`]) and then queues behind it; an insert
//! nobody asked about carries no lock, so rolling it back hands nothing on
//! to its successor.
//!
//! ```text
//!   queue of (index, key 20):  [T1 X,REC granted] [T2 S,next-key waiting] [T3 S,GAP granted]
//!                               ▲ earlier requests first; a request waits for any
//!                                 conflicting request ahead of it, granted or not
//! ```
//!
//! The conflict rules (`lock_rec_has_to_wait`):
//! - S and S are compatible; X conflicts with both;
//! - a gap request (or any request on the supremum) that is not an insert
//!   intention never waits;
//! - an ordinary request ignores other transactions' gap locks;
//! - an insert intention ignores record-only locks, and nobody waits for an
//!   insert intention.
//!
//! A waiting request is queued; a release grants waiters in queue order as
//! soon as nothing ahead of them conflicts. Deadlock detection
//! (`lock_deadlock_recursive`) runs whenever a request must wait: a depth
//! first search of the wait-for graph from the requester. When it comes
//! back to the requester, the lighter of the requester and the transaction
//! whose wait closed the cycle is the victim (weight: undo records plus
//! lock structs, see `Structs`; on a tie, the requester); a search past
//! [`MAX_DEPTH`] or [`MAX_STEPS`] makes the requester the victim.
//!
//! Every change is recorded as a [`LockEvent`] when the event log is on,
//! for the lock oracle.

use crate::btree::Key;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::fmt;

/// A transaction id.
pub type TrxId = u64;

/// Identifies one lock (request) for its life.
pub type LockId = u64;

/// The deepest wait-for chain the deadlock search follows
/// (`LOCK_MAX_DEPTH_IN_DEADLOCK_CHECK`).
pub const MAX_DEPTH: usize = 200;

/// The most locks the deadlock search visits
/// (`LOCK_MAX_N_STEPS_IN_DEADLOCK_CHECK`).
pub const MAX_STEPS: usize = 1_000_000;

/// A table lock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableMode {
    /// Intention shared.
    IS,
    /// Intention exclusive.
    IX,
    /// Shared.
    S,
    /// Exclusive.
    X,
    /// The auto-increment lock.
    AutoInc,
}

impl TableMode {
    /// InnoDB's table lock compatibility matrix (`lock_compatibility_matrix`).
    pub fn compatible(self, other: TableMode) -> bool {
        use TableMode::*;
        matches!(
            (self, other),
            (IS, IS | IX | S | AutoInc)
                | (IX, IS | IX | AutoInc)
                | (S, IS | S)
                | (AutoInc, IS | IX)
        )
    }

    /// Whether holding `self` makes a request for `other` redundant
    /// (`lock_mode_stronger_or_eq`).
    pub fn covers(self, other: TableMode) -> bool {
        use TableMode::*;
        self == other || matches!((self, other), (X, _) | (S, IS) | (IX, IS))
    }

    /// The name INNODB_LOCKS uses.
    pub fn name(self) -> &'static str {
        match self {
            TableMode::IS => "IS",
            TableMode::IX => "IX",
            TableMode::S => "S",
            TableMode::X => "X",
            TableMode::AutoInc => "AUTO_INC",
        }
    }
}

/// A record lock's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecMode {
    /// Shared.
    S,
    /// Exclusive.
    X,
}

impl RecMode {
    fn compatible(self, other: RecMode) -> bool {
        self == RecMode::S && other == RecMode::S
    }

    fn covers(self, other: RecMode) -> bool {
        self == RecMode::X || other == RecMode::S
    }
}

/// What part of a record (and the gap before it) a record lock covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecKind {
    /// The record and the gap before it (`LOCK_ORDINARY`).
    NextKey,
    /// Only the record (`LOCK_REC_NOT_GAP`).
    RecNotGap,
    /// Only the gap before the record (`LOCK_GAP`).
    Gap,
    /// A gap lock an insert asks for (`LOCK_INSERT_INTENTION`).
    InsertIntention,
}

impl RecKind {
    fn covers(self, other: RecKind) -> bool {
        match other {
            RecKind::NextKey => self == RecKind::NextKey,
            RecKind::RecNotGap => matches!(self, RecKind::NextKey | RecKind::RecNotGap),
            RecKind::Gap => matches!(self, RecKind::NextKey | RecKind::Gap),
            RecKind::InsertIntention => false,
        }
    }
}

/// A lock's mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// A table lock.
    Table(TableMode),
    /// A record lock.
    Record(RecMode, RecKind),
}

impl Mode {
    /// The lock_mode column of INNODB_LOCKS: `X`, `S,GAP`, `X,GAP` (insert
    /// intentions too are gap locks there), `IX`, `AUTO_INC`.
    pub fn name(self) -> String {
        match self {
            Mode::Table(m) => m.name().to_string(),
            Mode::Record(m, k) => {
                let m = match m {
                    RecMode::S => "S",
                    RecMode::X => "X",
                };
                match k {
                    RecKind::Gap | RecKind::InsertIntention => format!("{m},GAP"),
                    _ => m.to_string(),
                }
            }
        }
    }
}

/// A record position: a key of the index, or its supremum.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RecKey {
    /// The record with this key (the index's key fields, stored form).
    Key(Key),
    /// Above the last record of the index.
    Supremum,
}

/// What a lock is on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// A table, by id.
    Table(u64),
    /// A record position in an index of a table.
    Record {
        /// The table's id.
        table: u64,
        /// The index's id.
        index: u64,
        /// The position.
        key: RecKey,
    },
}

impl Target {
    /// The table the lock is on or in.
    pub fn table(&self) -> u64 {
        match self {
            Target::Table(t) | Target::Record { table: t, .. } => *t,
        }
    }
}

/// One lock or lock request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    /// Its id.
    pub id: LockId,
    /// Its owner.
    pub trx: TrxId,
    /// What it is on.
    pub target: Target,
    /// Its mode.
    pub mode: Mode,
    /// Whether it waits (not yet granted).
    pub waiting: bool,
    /// When it was requested (engine clock, microseconds).
    pub since_us: u64,
}

/// Whether a request of `mode` by one transaction must wait for `other`
/// (held or requested by another transaction) on the same target.
pub fn has_to_wait(mode: Mode, other: Mode) -> bool {
    match (mode, other) {
        (Mode::Table(a), Mode::Table(b)) => !a.compatible(b),
        (Mode::Record(m, k), Mode::Record(om, ok)) => {
            if m.compatible(om) {
                return false;
            }
            if k == RecKind::Gap {
                return false; // a gap request without insert intention
            }
            if k != RecKind::InsertIntention && ok == RecKind::Gap {
                return false; // ordinary requests ignore gap locks
            }
            if k != RecKind::InsertIntention && ok == RecKind::InsertIntention {
                return false; // nobody waits for an insert intention
            }
            if k == RecKind::InsertIntention && ok == RecKind::RecNotGap {
                return false;
            }
            if k == RecKind::InsertIntention && ok == RecKind::InsertIntention {
                return false;
            }
            true
        }
        _ => false,
    }
}

/// On the supremum every lock is a gap lock (InnoDB treats a next-key lock
/// on the supremum as a gap lock).
fn normalize(target: &Target, mode: Mode) -> Mode {
    match (target, mode) {
        (
            Target::Record {
                key: RecKey::Supremum,
                ..
            },
            Mode::Record(m, RecKind::NextKey | RecKind::RecNotGap),
        ) => Mode::Record(m, RecKind::Gap),
        _ => mode,
    }
}

/// What happened to a lock, for the oracle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Granted at once.
    Granted,
    /// Queued to wait.
    Wait,
    /// A waiting request granted.
    GrantedAfterWait,
    /// Released at the end of its transaction.
    Released,
    /// A waiting request withdrawn because the wait timed out.
    TimedOut,
    /// A waiting request withdrawn because its transaction was chosen as a
    /// deadlock victim; `weights` are the victim's and the survivor's.
    Victim,
    /// A waiting request withdrawn for any other reason (the statement or
    /// the transaction ended otherwise).
    Cancelled,
    /// A gap lock created by inheritance (a record removed or inserted).
    Inherited,
    /// An insert intention granted at once: the gap was free, and nothing
    /// is kept (the lock is gone when the event is recorded).
    InsertChecked,
    /// An implicit lock made explicit: the X record lock an active
    /// transaction holds on a record it changed, created for it when
    /// another transaction asks to lock that record.
    Converted,
    /// The waiting transaction's undo record count when its wait is judged
    /// for deadlocks (the lock is its waiting request).
    Weight,
}

/// One entry of the lock event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockEvent {
    /// Engine clock, microseconds.
    pub t_us: u64,
    /// What happened.
    pub kind: EventKind,
    /// The lock.
    pub lock: Lock,
    /// For [`EventKind::Weight`]: the transaction's undo records.
    pub undo_records: u64,
}

/// The verdict of a deadlock search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadlock {
    /// No cycle through the requester.
    None,
    /// The requester is the victim.
    Requester,
    /// Another transaction in the cycle is the victim: roll it back.
    Other(TrxId),
}

/// The outcome of a lock request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Granted now (or already held).
    Granted,
    /// Queued; the transaction waits for this lock.
    Waiting(LockId),
}

/// One row of INNODB_LOCK_WAITS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitEdge {
    /// The waiting transaction.
    pub requesting_trx: TrxId,
    /// Its waiting lock.
    pub requested_lock: LockId,
    /// A transaction it waits for.
    pub blocking_trx: TrxId,
    /// The lock it waits for.
    pub blocking_lock: LockId,
}

/// Planted bugs of the lock manager (see [`crate::Canary`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockCanaries {
    /// Grant record requests without checking conflicts.
    pub grant_conflicting: bool,
    /// A release forgets to grant the first waiter it could.
    pub lose_wakeup: bool,
    /// Never search for deadlocks.
    pub skip_deadlock_detection: bool,
    /// Choose the heavier transaction as the victim.
    pub wrong_victim: bool,
    /// Inserts check their gap only when the index holds many gap locks.
    pub skip_gap_check: bool,
    /// A removed record's locks go to the supremum.
    pub inherit_to_supremum: bool,
}

/// The lock system: every lock of every active transaction.
#[derive(Debug, Default)]
pub struct LockSys {
    locks: table::LockTable,
    /// Per target, lock ids in request order. Hashed: only ever looked up
    /// by target (ordering keys was a visible share of every release).
    queues: FxHashMap<Target, Vec<LockId>>,
    /// Per transaction, its lock ids in request order.
    by_trx: BTreeMap<TrxId, Vec<LockId>>,
    /// The one lock each waiting transaction waits for.
    waits: BTreeMap<TrxId, LockId>,
    next_id: LockId,
    /// Per (table, index): record locks and requests, and how many of them
    /// cover a gap, so that inserts into an index nobody gap-locks skip
    /// the insert intention check.
    per_index: BTreeMap<(u64, u64), (usize, usize)>,
    /// Transactions whose X locks are not inherited as gap locks when
    /// their record leaves the index: READ COMMITTED's
    /// (`lock_rec_inherit_to_gap`), and READ UNCOMMITTED's too under a
    /// later version's rule ([`LockSys::ru_x_not_inherited`]).
    gapless: std::collections::BTreeSet<TrxId>,
    /// Per transaction, its lock structs (InnoDB's `trx->trx_locks`),
    /// which its deadlock weight counts.
    structs: BTreeMap<TrxId, Structs>,
    /// A later version's deadlock search
    /// ([`crate::LaterRule::DeadlockSearchOneBlocker`]): each wait points
    /// at one transaction, and the search follows those pointers.
    pub one_blocker: bool,
    /// A later version's rule
    /// ([`crate::LaterRule::ReadUncommittedXLocksNotInherited`]): READ
    /// UNCOMMITTED's X locks are not inherited either.
    pub ru_x_not_inherited: bool,
    /// A later version's rule
    /// ([`crate::LaterRule::PastEndRowUnlockedUnderReadCommitted`]): a
    /// locking range scan under READ COMMITTED or READ UNCOMMITTED gives
    /// back its lock on the row past the range's end.
    pub past_end_unlocked: bool,
    /// A later version's rule
    /// ([`crate::LaterRule::UnlockRowClusteredOnly`]): READ COMMITTED's
    /// release of a row the server does not want lets go of nothing when
    /// the read went through a secondary index.
    pub unlock_clustered_only: bool,
    /// A later version's rule
    /// ([`crate::LaterRule::UnlockRowKeepsWaitedLock`]): READ COMMITTED's
    /// release of a row ([`LockSys::release_records`]) keeps a lock that
    /// was granted after a wait.
    pub keep_waited: bool,
    /// The locks granted after a wait, while they are held (for
    /// [`LockSys::keep_waited`]).
    granted_after_wait: std::collections::BTreeSet<LockId>,
    /// A later version's rule
    /// ([`crate::LaterRule::WaiterBypassedByItsBlocker`]): a new request
    /// passes a waiting one that waits for a lock the requester holds on
    /// the same record, and is queued ahead of it, if the requester holds
    /// a lock there as strong as the request (`LockSys::may_bypass`).
    pub bypass_waiters: bool,
    /// A later version's rule
    /// ([`crate::LaterRule::ReadCommittedSkipsCommittedDeletes`]): READ
    /// COMMITTED's locking reads pass a clustered record a committed
    /// transaction delete-marked without locking it.
    pub skip_committed_deletes: bool,
    /// A later version's rule
    /// ([`crate::LaterRule::OwnImplicitLockSuffices`]): a transaction's
    /// own implicit lock on a record is not made explicit, and stands for
    /// a record-only lock it asks for there.
    pub own_implicit_suffices: bool,
    /// With `one_blocker`, the transaction each waiting one points at
    /// (MariaDB's `trx->lock.wait_trx`): the owner of the first lock in
    /// its way (of a table lock's, the newest), moved on to the next one
    /// in the way when that goes.
    wait_trx: BTreeMap<TrxId, TrxId>,
    /// A later version's rule
    /// ([`crate::LaterRule::IndexConditionPushdown`]): a SELECT's
    /// forward range read of a secondary index does not lock the
    /// clustered record of the entry past the range's end.
    pub index_condition_pushdown: bool,
    /// Whether events are recorded.
    pub log_events: bool,
    events: Vec<LockEvent>,
    /// Planted bugs.
    pub canaries: LockCanaries,
}

/// A transaction's lock structs. InnoDB keeps record locks as one struct
/// per page, mode and transaction, a bitmap of the page's records
/// (`lock_rec_create`): a new lock sets a bit in a struct the transaction
/// has for the same page and mode (`lock_rec_find_similar_on_page`) unless
/// another transaction waits on that record (`lock_rec_add_to_queue`), and
/// a request that must wait always gets a struct of its own, kept after it
/// is granted and dropped only if the wait is withdrawn
/// (`lock_rec_dequeue_from_page`). A lock released early (READ COMMITTED's
/// `lock_rec_unlock`) clears its bit and leaves the struct. Each table lock
/// is a struct. The weight of a deadlock victim (`TRX_WEIGHT`) is the
/// transaction's undo records plus its structs.
///
/// The page is taken as the index: every record of an index counts as one
/// page. InnoDB makes a new struct for a lock on another page of the same
/// index, and when a split moves locked records to a new page
/// (`lock_move_rec_list_end`); here neither happens, so a transaction
/// locking records on several pages of one index weighs less than in
/// InnoDB by the extra pages' structs.
#[derive(Debug, Default)]
struct Structs {
    /// Each, in the order made: how many is what later InnoDBs show as
    /// INNODB_TRX.trx_lock_structs.
    list: Vec<StructDesc>,
    /// The record lock kinds, by (table, index, mode), it has a granted
    /// struct for: where a new lock sets a bit.
    similar: std::collections::BTreeSet<(u64, u64, Mode)>,
}

/// One lock struct ([`LockSys::struct_list`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructDesc {
    /// The table it is on or in.
    pub table: u64,
    /// The index, for a record lock struct.
    pub index: Option<u64>,
    /// Its mode (a lock on the supremum counts as a next-key lock).
    pub mode: Mode,
    /// The lock that made it is on the supremum: an insert intention's
    /// struct there is spelled without the gap flag, which InnoDB drops
    /// for the supremum (`lock_rec_add_to_queue`).
    pub supremum: bool,
    /// It was made for a request that had to wait (and waits still if it
    /// is its transaction's last such and the transaction waits).
    pub waiting: bool,
}

/// The kind of struct a record lock goes into, or `None` for a table lock:
/// a lock on the supremum is a next-key lock there
/// (`lock_rec_add_to_queue` clears its gap bit), so it shares a struct
/// with the next-key locks of its mode.
fn struct_kind(target: &Target, mode: Mode) -> Option<(u64, u64, Mode)> {
    match (target, mode) {
        (Target::Table(_), _) => None,
        (Target::Record { table, index, key }, Mode::Record(m, k)) => {
            let k = match (key, k) {
                (RecKey::Supremum, RecKind::Gap) => RecKind::NextKey,
                _ => k,
            };
            Some((*table, *index, Mode::Record(m, k)))
        }
        (Target::Record { table, index, .. }, m) => Some((*table, *index, m)),
    }
}

impl LockSys {
    /// An empty lock system.
    pub fn new() -> Self {
        LockSys::default()
    }

    /// An empty lock system with planted bugs.
    pub fn with_canaries(canaries: LockCanaries) -> Self {
        LockSys {
            canaries,
            ..LockSys::default()
        }
    }

    /// This lock system with a later version's deadlock search, or not
    /// ([`LockSys::one_blocker`]).
    pub fn with_one_blocker(mut self, on: bool) -> Self {
        self.one_blocker = on;
        self
    }

    /// This lock system with a later version's inheritance under READ
    /// UNCOMMITTED, or not ([`LockSys::ru_x_not_inherited`]).
    pub fn with_ru_x_not_inherited(mut self, on: bool) -> Self {
        self.ru_x_not_inherited = on;
        self
    }

    /// This lock system with a later version's keeping of the locks a
    /// wait ended in through a row's release, or not
    /// ([`LockSys::keep_waited`]).
    pub fn with_keep_waited(mut self, on: bool) -> Self {
        self.keep_waited = on;
        self
    }

    /// This lock system with a later version's release of rows read
    /// through the clustered index only, or not
    /// ([`LockSys::unlock_clustered_only`]).
    pub fn with_unlock_clustered_only(mut self, on: bool) -> Self {
        self.unlock_clustered_only = on;
        self
    }

    /// This lock system with a later version's release of the row past a
    /// range's end, or not ([`LockSys::past_end_unlocked`]).
    pub fn with_past_end_unlocked(mut self, on: bool) -> Self {
        self.past_end_unlocked = on;
        self
    }

    /// This lock system with a later version's bypass of waiting requests
    /// by their blocker, or not ([`LockSys::bypass_waiters`]).
    pub fn with_bypass_waiters(mut self, on: bool) -> Self {
        self.bypass_waiters = on;
        self
    }

    /// This lock system with a later version's pass over committed
    /// deletes under READ COMMITTED, or not
    /// ([`LockSys::skip_committed_deletes`]).
    pub fn with_skip_committed_deletes(mut self, on: bool) -> Self {
        self.skip_committed_deletes = on;
        self
    }

    /// This lock system with a later version's use of a transaction's own
    /// implicit locks, or not ([`LockSys::own_implicit_suffices`]).
    pub fn with_own_implicit_suffices(mut self, on: bool) -> Self {
        self.own_implicit_suffices = on;
        self
    }

    /// This lock system with a later version's index condition
    /// pushdown, or not ([`LockSys::index_condition_pushdown`]).
    pub fn with_index_condition_pushdown(mut self, on: bool) -> Self {
        self.index_condition_pushdown = on;
        self
    }

    /// A lock by id.
    pub fn lock(&self, id: LockId) -> Option<&Lock> {
        self.locks.get(&id)
    }

    /// Every lock, in id order.
    pub fn locks(&self) -> impl Iterator<Item = &Lock> {
        self.locks.values()
    }

    /// How many record locks (held or requested) are in an index, and how
    /// many of them cover a gap (next-key, gap, insert intention).
    pub fn index_locks(&self, table: u64, index: u64) -> (usize, usize) {
        self.per_index
            .get(&(table, index))
            .copied()
            .unwrap_or((0, 0))
    }

    fn count(&mut self, lock: &Lock, delta: isize) {
        if let (Target::Record { table, index, .. }, Mode::Record(_, kind)) =
            (&lock.target, lock.mode)
        {
            let e = self.per_index.entry((*table, *index)).or_default();
            e.0 = e.0.wrapping_add_signed(delta);
            if kind != RecKind::RecNotGap {
                e.1 = e.1.wrapping_add_signed(delta);
            }
            if e.0 == 0 {
                self.per_index.remove(&(*table, *index));
            }
        }
    }

    /// Whether any lock or request is on `target`.
    pub fn has_queue(&self, target: &Target) -> bool {
        self.queues.contains_key(target)
    }

    /// The locks a transaction holds or waits for.
    pub fn locks_of(&self, trx: TrxId) -> usize {
        self.by_trx.get(&trx).map_or(0, Vec::len)
    }

    /// The record locks a transaction holds or waits for, a supremum's
    /// included: the bits set in its record lock structs, what InnoDB's
    /// `lock_number_of_rows_locked` counts and its monitor prints as
    /// "row lock(s)".
    pub fn record_locks_of(&self, trx: TrxId) -> usize {
        self.by_trx.get(&trx).map_or(0, |ids| {
            (ids.iter())
                .filter(|id| {
                    (self.locks.get(id)).is_some_and(|l| matches!(l.target, Target::Record { .. }))
                })
                .count()
        })
    }

    /// The lock structs a transaction has (see `Structs`): with its undo
    /// records, its deadlock weight.
    pub fn lock_structs(&self, trx: TrxId) -> usize {
        self.structs.get(&trx).map_or(0, |s| s.list.len())
    }

    /// A transaction's lock structs, in the order made (see `Structs`),
    /// `waiting` set only on the one its waiting request has.
    pub fn struct_list(&self, trx: TrxId) -> Vec<StructDesc> {
        let mut list = self
            .structs
            .get(&trx)
            .map_or(Vec::new(), |s| s.list.clone());
        let waits = self.waits.contains_key(&trx);
        let last = list.iter().rposition(|d| d.waiting);
        for (i, d) in list.iter_mut().enumerate() {
            d.waiting = waits && Some(i) == last;
        }
        list
    }

    /// Counts the struct a new lock of `trx` takes, if it needs one: before
    /// the lock joins its queue.
    fn new_struct(&mut self, trx: TrxId, target: &Target, mode: Mode, waiting: bool) {
        let kind = struct_kind(target, mode);
        let someone_waits = kind.is_some() && !waiting && self.has_waiter(target);
        let s = self.structs.entry(trx).or_default();
        let desc = StructDesc {
            table: target.table(),
            index: kind.map(|k| k.1),
            mode: kind.map_or(mode, |k| k.2),
            supremum: matches!(
                target,
                Target::Record {
                    key: RecKey::Supremum,
                    ..
                }
            ),
            waiting,
        };
        match kind {
            Some(k) if !waiting => {
                if someone_waits || !s.similar.contains(&k) {
                    s.list.push(desc);
                    s.similar.insert(k);
                }
            }
            _ => s.list.push(desc),
        }
    }

    /// A waiting request's struct stays once its wait ends without a
    /// grant (its record left, or the request given up), no longer
    /// waiting: one a later lock of its kind may set a bit in.
    fn struct_granted(&mut self, lock: &Lock) {
        if let (Some(k), Some(s)) = (
            struct_kind(&lock.target, lock.mode),
            self.structs.get_mut(&lock.trx),
        ) {
            s.similar.insert(k);
        }
    }

    /// The lock a transaction waits for.
    pub fn waiting_for(&self, trx: TrxId) -> Option<&Lock> {
        self.waits.get(&trx).and_then(|id| self.locks.get(id))
    }

    /// Takes the events recorded since the last call.
    pub fn take_events(&mut self) -> Vec<LockEvent> {
        std::mem::take(&mut self.events)
    }

    fn record(&mut self, t_us: u64, kind: EventKind, lock: &Lock) {
        if self.log_events {
            self.record_owned(t_us, kind, lock.clone());
        }
    }

    /// [`LockSys::record`] of a lock that is gone: no copy.
    fn record_owned(&mut self, t_us: u64, kind: EventKind, lock: Lock) {
        if self.log_events {
            self.events.push(LockEvent {
                t_us,
                kind,
                lock,
                undo_records: 0,
            });
        }
    }

    /// Whether any request on `target` waits.
    fn has_waiter(&self, target: &Target) -> bool {
        self.queues.get(target).is_some_and(|q| {
            q.iter()
                .any(|id| self.locks.get(id).is_some_and(|l| l.waiting))
        })
    }

    /// Records the undo record count of a waiting transaction, which its
    /// deadlock weight adds to its locks (for the oracle).
    pub fn note_weight(&mut self, trx: TrxId, undo_records: u64, now_us: u64) {
        if !self.log_events {
            return;
        }
        if let Some(lock) = self.waiting_for(trx).cloned() {
            self.events.push(LockEvent {
                t_us: now_us,
                kind: EventKind::Weight,
                lock,
                undo_records,
            });
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Table(t) => write!(f, "table {t}"),
            Target::Record { table, index, key } => match key {
                RecKey::Supremum => write!(f, "table {table} index {index} supremum"),
                RecKey::Key(k) => write!(f, "table {table} index {index} key {k:?}"),
            },
        }
    }
}

mod request;
mod release;
mod deadlock;
mod inherit;
mod table;
#[cfg(test)]
mod tests;
