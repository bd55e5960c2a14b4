//! The lock oracle: replays the engine's lock event log against its own
//! statement of InnoDB's lock rules and reports every breach.
//!
//! Independent of the engine's lock manager (it shares no code with it),
//! it keeps its own table of locks from the events and checks, per event
//! and at the end of every engine call (a "step", when the engine's state
//! must be settled):
//!
//! - a lock is granted only if no other transaction's granted lock
//!   conflicts with it, and, granted at once, if no earlier waiting request
//!   does either (a granted insert intention holds nothing: it wakes the
//!   insert, which must check the gap again);
//! - at the end of a step, no waiting request has nothing ahead of it that
//!   conflicts (it should have been granted: a lost wake-up);
//! - at the end of a step, no wait has reached the lock wait timeout
//!   (the runner resumes a waiting session at its deadline, so a correct
//!   engine has timed it out by then), and a timeout never comes early;
//!   both measured from the runner's clock at the engine call that began
//!   the wait, never from an instant the engine stamped;
//! - with deadlock detection on, the wait-for graph has no cycle at the end
//!   of a step (the wait that closed it had to be refused), and every
//!   victim was on a cycle when chosen, and was the lighter of the
//!   requester and the transaction waiting for the requester (undo records
//!   plus lock structs; on a tie, the requester), the undo records being
//!   the runner's own count of the transaction's row changes and the
//!   structs the oracle's, counted from the events by InnoDB's rules (one
//!   per table lock, one per index and record lock mode unless another
//!   transaction waits on the record, one per wait, dropped when the wait
//!   times out or is a victim's; `lock_rec_add_to_queue`); the engine's
//!   undo count is cross-checked: a `Weight` event that disagrees is a
//!   violation (a row written into a compressed table may have taken
//!   [`REFUSED_INSERT_UNDO`] more, as the oracle cannot know which pages
//!   refused an insert: those weights are ranges, judged by their ends);
//! - an implicit lock made explicit (`Converted`) is an X record lock on a
//!   record, for a transaction that holds an IX or X lock on its table;
//! - locks are held until their transaction ends (two-phase locking): a
//!   granted lock released by a transaction that still holds or waits for
//!   others when the engine call ends is set aside as an
//!   [`EarlyRelease`], for the runner to judge against the rows it knows
//!   (only a record that left the index may hand its locks on);
//! - the conflict graph of committed transactions (T1 before T2 when T2 was
//!   granted a lock conflicting with one T1 had released) is acyclic: the
//!   committed locking transactions are serializable.

use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

/// The undo records beyond its own that InnoDB 1.0.6 writes for a
/// clustered insert its compressed leaf page refuses: one by
/// `btr_cur_optimistic_insert`, which writes the record's undo before it
/// tries the page, and one more by the same function called again first
/// by `btr_cur_pessimistic_insert`, before the undo record of the split
/// that takes the row (btr/btr0cur.c).
pub const REFUSED_INSERT_UNDO: u64 = 2;

/// A table lock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TMode {
    /// Intention shared.
    IS,
    /// Intention exclusive.
    IX,
    /// Shared.
    S,
    /// Exclusive.
    X,
    /// Auto-increment.
    AutoInc,
}

/// A record lock: S or X, and which part it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RKind {
    /// Record and the gap before it.
    NextKey,
    /// The record only.
    Record,
    /// The gap only.
    Gap,
    /// An insert's gap request.
    InsertIntention,
}

/// A lock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OMode {
    /// On a table.
    Table(TMode),
    /// On a record position; `true` for X.
    Record(bool, RKind),
}

/// What a lock is on: a table, or a record position (`None` key: the
/// index's supremum).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OTarget {
    /// A table.
    Table(u64),
    /// Table, index, key.
    Record(u64, u64, Option<Vec<Option<Vec<u8>>>>),
}

/// What a record lock struct holds locks of: table, index, mode.
type StructKind = (u64, u64, OMode);

/// The struct kind of a record lock, `None` for a table lock; a lock on
/// the supremum shares the struct of the next-key locks of its mode.
fn struct_kind(target: &OTarget, mode: OMode) -> Option<StructKind> {
    match (target, mode) {
        (OTarget::Table(_), _) => None,
        (OTarget::Record(t, i, None), OMode::Record(x, RKind::Gap)) => {
            Some((*t, *i, OMode::Record(x, RKind::NextKey)))
        }
        (OTarget::Record(t, i, _), m) => Some((*t, *i, m)),
    }
}

/// What an event says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OKind {
    /// Granted at once.
    Granted,
    /// Queued.
    Wait,
    /// A queued request granted.
    GrantedAfterWait,
    /// Released (transaction end, or the record moved away).
    Released,
    /// Withdrawn: the wait timed out.
    TimedOut,
    /// Withdrawn: chosen as a deadlock victim.
    Victim,
    /// Withdrawn otherwise.
    Cancelled,
    /// A gap lock created by inheritance.
    Inherited,
    /// An insert intention granted at once: the gap was free; nothing is
    /// kept.
    InsertChecked,
    /// An implicit lock made explicit: an X record lock granted to an
    /// active transaction on a record it changed, during another
    /// transaction's request for that record.
    Converted,
    /// The requester's undo record count, stamped when its wait is judged
    /// for deadlocks.
    Weight,
}

/// One event of the lock log, with the instants the runner saw: the
/// oracle takes no time from the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OEvent {
    /// The runner's clock when the engine call that produced the event
    /// returned, microseconds.
    pub t_us: u64,
    /// What happened.
    pub kind: OKind,
    /// The lock's id (unique per engine lifetime).
    pub lock: u64,
    /// Its transaction.
    pub trx: u64,
    /// Its target.
    pub target: OTarget,
    /// Its mode.
    pub mode: OMode,
    /// The runner's clock when that engine call began: for a `Wait`, the
    /// earliest instant the wait can have started.
    pub since_us: u64,
    /// For `Weight`: the transaction's undo records as the engine counts
    /// them (cross-checked against the runner's count, never used).
    pub undo_records: u64,
}

/// Whether a request of mode `a` must wait for a lock of mode `b` held or
/// requested by another transaction on the same target (InnoDB's
/// `lock_rec_has_to_wait` and the table compatibility matrix).
pub fn must_wait(a: OMode, b: OMode) -> bool {
    use TMode::*;
    match (a, b) {
        (OMode::Table(x), OMode::Table(y)) => {
            let compatible = matches!(
                (x, y),
                (IS, IS | IX | S | AutoInc)
                    | (IX, IS | IX | AutoInc)
                    | (S, IS | S)
                    | (AutoInc, IS | IX)
            );
            !compatible
        }
        (OMode::Record(ax, ak), OMode::Record(bx, bk)) => {
            if !ax && !bx {
                return false; // S and S
            }
            match (ak, bk) {
                (RKind::Gap, _) => false,
                (RKind::InsertIntention, RKind::Gap | RKind::NextKey) => true,
                (RKind::InsertIntention, _) => false,
                (_, RKind::Gap | RKind::InsertIntention) => false,
                _ => true,
            }
        }
        _ => false,
    }
}

#[derive(Debug, Clone)]
struct OLock {
    trx: u64,
    /// Index into `LockOracle::targets`.
    target: usize,
    mode: OMode,
    waiting: bool,
    /// A wait began between these instants (the engine call that made
    /// it): it may time out from `since_us + timeout` on, and must have by
    /// `seen_us + timeout`.
    since_us: u64,
    seen_us: u64,
}

/// The oracle's state; see the module comment.
#[derive(Debug, Default)]
pub struct LockOracle {
    /// Every lock by id (hashed: only ever looked up by id).
    locks: FxHashMap<u64, OLock>,
    /// Every target seen, interned: events name targets by value, the
    /// tables below by index (cloning a key per event was most of the
    /// oracle's cost).
    target_ids: FxHashMap<OTarget, usize>,
    targets: Vec<OTarget>,
    /// Lock ids per target, in request order.
    queues: Vec<Vec<u64>>,
    /// Waiting lock ids by transaction, and lock counts by transaction.
    waiting: BTreeMap<u64, BTreeSet<u64>>,
    held: FxHashMap<u64, usize>,
    /// The insert the engine call being judged runs, if any.
    running_insert: Option<InsertShape>,
    /// The update the engine call being judged runs, if it moves its row
    /// (changes its primary key).
    running_update: Option<UpdateShape>,
    /// Transactions waiting in an insert or a row-moving update, by the
    /// undo records the statement keeps while it waits ([`Kept`]).
    in_place: FxHashMap<u64, Kept>,
    /// Lock structs by transaction: how many, and the (table, index, mode)
    /// of the granted record lock structs a new lock may set a bit in.
    structs: FxHashMap<u64, (u64, BTreeSet<StructKind>)>,
    /// Row changes per transaction (its undo records), as the runner
    /// counted them from the statements and their results.
    changes: FxHashMap<u64, u64>,
    /// Of those, the rows written into a compressed table (new or
    /// changed, as the runner counts them): each may have been an insert
    /// into a clustered leaf that refused it ([`REFUSED_INSERT_UNDO`]).
    refusable: FxHashMap<u64, u64>,
    /// Transactions that released a lock, per target and mode, for the
    /// conflict graph. By mode, so that a grant visits only the modes it
    /// conflicts with (table IX locks pile up by the thousand and conflict
    /// with none of each other).
    history: Vec<BTreeMap<OMode, Vec<u64>>>,
    /// Conflict edges T1 -> T2.
    edges: BTreeSet<(u64, u64)>,
    /// The edges first made in the current step, each with the released
    /// lock it came from (T1, target, mode): an early release's are taken
    /// back when the step settles.
    step_edges: Vec<((u64, u64), usize, OMode)>,
    committed: BTreeSet<u64>,
    /// Granted locks released during the current step: (trx, target,
    /// mode, the gap lock inherited for it just before, if any).
    step_released: Vec<(u64, usize, OMode, Option<usize>)>,
    /// The target of the last event if it was an inherited gap lock, and
    /// its transaction: `inherit_to_gap` records the heir's lock just
    /// before the release of the lock it replaces.
    last_inherited: Option<(u64, usize)>,
    /// The granted locks the last step released: (trx, target, mode).
    last_released: Vec<(u64, usize, OMode)>,
    /// Releases by transactions that still held or waited for a lock at
    /// the end of their step: not the end of the transaction.
    early: Vec<EarlyRelease>,
    /// Whether the engine searches for deadlocks.
    pub deadlock_detect: bool,
    /// The lock wait timeout, microseconds.
    pub timeout_us: u64,
    violations: Vec<String>,
    /// Counters: waits, grants after waits, timeouts, victims.
    pub stats: OracleStats,
}

/// A granted lock released while its transaction went on (it still held
/// or waited for other locks when the engine call ended). Two-phase
/// locking allows that only when the lock's record left the index (purge,
/// or a rolled-back insert) and InnoDB moved the lock to the gap; whether
/// the record can have left is for the runner, which knows every live
/// row, to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlyRelease {
    /// The transaction.
    pub trx: u64,
    /// What the lock was on.
    pub target: OTarget,
    /// Its mode.
    pub mode: OMode,
    /// The gap lock the transaction was given for it in the same breath
    /// (`lock_rec_inherit_to_gap`), if it was not holding one there
    /// already: the record after the one that left.
    pub heir: Option<OTarget>,
}

/// An insert the runner runs (or runs again after a wait), by what its
/// locks are on: InnoDB puts a row in index by index
/// (`row_ins_index_entry_step`), its clustered record first, so what an
/// insert waits for says whether its clustered record is in while it
/// waits (an undo record, in its deadlock weight): a wait on its table's
/// clustered index or its IX lock comes before it; a wait on a secondary
/// index after. A FOREIGN KEY check runs before its own index's entry: a
/// wait on a parent table comes before the clustered record when the
/// constraint's index is the clustered index (or it has none), after it
/// when it is a secondary index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InsertShape {
    /// The table's id.
    pub table: u64,
    /// Its clustered index's id.
    pub clustered: u64,
    /// Parent tables checked before the clustered record goes in.
    pub parents_before: BTreeSet<u64>,
    /// Parent tables checked after it.
    pub parents_after: BTreeSet<u64>,
    /// The table is compressed: a clustered record in place may have
    /// taken [`REFUSED_INSERT_UNDO`] more undo records.
    pub compressed: bool,
}

impl InsertShape {
    /// Whether an insert waiting for a lock on `target` has its clustered
    /// record in; `None` when the shape cannot tell (a parent table checked
    /// both before and after).
    fn in_place(&self, target: &OTarget, other_row: bool) -> Option<bool> {
        let (OTarget::Table(t) | OTarget::Record(t, _, _)) = target;
        if *t == self.table {
            return Some(
                other_row || matches!(target, OTarget::Record(_, i, _) if *i != self.clustered),
            );
        }
        match (
            self.parents_before.contains(t),
            self.parents_after.contains(t),
        ) {
            (true, true) => None,
            (_, after) => Some(after),
        }
    }
}

/// The shape of an UPDATE that moves its row (changes its primary key),
/// a delete and an insert (`row_upd_clust_rec_by_insert`): a wait for the
/// row's own record lock comes before either; a wait in the insert's
/// clustered index (its duplicate check, its insert intention) after the
/// delete, which it keeps (an undo record); a wait in a secondary index
/// comes either in the delete (for the lock on the old entry, which the
/// engine takes before its insert and undoes with the statement) or in
/// the insert after its clustered record went in (two). A wait on another
/// table (a FOREIGN KEY check or cascade after the change) undoes the
/// statement to its start, so it keeps nothing. Where the oracle cannot
/// tell (it does not follow which record is the row's), it allows each
/// count.
///
/// An UPDATE in place and a DELETE of one row change the clustered record
/// first (its undo record written), then the row's secondary entries
/// index by index (`row_upd_sec_step`), and a wait for a lock on one of
/// those entries keeps the change (InnoDB's thread waits inside the row
/// operation): one undo record, the new entry's duplicate check in a
/// unique index included (`row_upd_sec_index_entry` runs it after the old
/// entry is delete-marked). A wait for the row's own lock keeps nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateShape {
    /// The table's id.
    pub table: u64,
    /// Its clustered index's id.
    pub clustered: u64,
    /// The table is compressed: the insert of the moved row may have
    /// taken [`REFUSED_INSERT_UNDO`] more undo records.
    pub compressed: bool,
    /// The update moves its row; else it is an update in place or a
    /// delete.
    pub moves: bool,
}

impl UpdateShape {
    fn kept(&self, target: &OTarget, other_row: bool) -> Kept {
        let (OTarget::Table(t) | OTarget::Record(t, _, _)) = target;
        if other_row && *t == self.table {
            // A unique secondary index's duplicate check, waiting for the
            // inserter of another row at that row's record: the update's
            // own change is made (and, for a move, its insert's clustered
            // record is in).
            let n = 1 + u64::from(self.moves);
            let refused = if self.moves && self.compressed {
                REFUSED_INSERT_UNDO
            } else {
                0
            };
            return Kept {
                lo: n,
                hi: n + refused,
                insert: None,
            };
        }
        if !self.moves {
            let (lo, hi) = match target {
                OTarget::Record(_, i, _) if *t == self.table && *i != self.clustered => (1, 1),
                _ => (0, 0),
            };
            return Kept {
                lo,
                hi,
                insert: None,
            };
        }
        let (lo, hi) = match target {
            _ if *t != self.table => (0, 0),
            OTarget::Table(_) => (0, 0),
            // The row's own lock or the insert's: the oracle does not
            // follow which record is the row's.
            OTarget::Record(_, i, _) if *i == self.clustered => (0, 1),
            OTarget::Record(..) => (0, 2),
        };
        let refused = if self.compressed && hi > 0 {
            REFUSED_INSERT_UNDO
        } else {
            0
        };
        Kept {
            lo,
            hi: hi + refused,
            insert: None,
        }
    }
}

/// What a waiting statement keeps of its work while it waits: between
/// `lo` and `hi` undo records (the oracle cannot always tell which), and,
/// for an insert, whether its clustered record is in (`None`: not an
/// insert, or the shape could not tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kept {
    lo: u64,
    hi: u64,
    insert: Option<bool>,
}

impl Kept {
    fn of_insert(in_place: Option<bool>, compressed: bool) -> Kept {
        // A clustered record in place may have been refused by its leaf
        // first, as the oracle cannot tell.
        let refused = if compressed { REFUSED_INSERT_UNDO } else { 0 };
        match in_place {
            Some(k) => Kept {
                lo: u64::from(k),
                hi: u64::from(k) * (1 + refused),
                insert: Some(k),
            },
            None => Kept {
                lo: 0,
                hi: 1 + refused,
                insert: None,
            },
        }
    }
}

/// What the oracle saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OracleStats {
    /// Requests that waited.
    pub waits: u64,
    /// Waits that ended in a grant.
    pub granted_after_wait: u64,
    /// Waits that timed out.
    pub timeouts: u64,
    /// Deadlock victims.
    pub victims: u64,
    /// Victims that were not the requester (the weight rule chose the
    /// lighter transaction waiting for it).
    pub victims_by_weight: u64,
    /// Gap locks created by inheritance.
    pub inherited: u64,
    /// Implicit locks made explicit.
    pub converted: u64,
}

impl LockOracle {
    /// An oracle for an engine with this timeout and detection setting.
    pub fn new(timeout_us: u64, deadlock_detect: bool) -> Self {
        LockOracle {
            timeout_us,
            deadlock_detect,
            ..LockOracle::default()
        }
    }

    /// The transactions whose locks on table `table`, held or waited for,
    /// a new request of `mode` by a new transaction must wait for (a new
    /// request queues behind every lock already in the queue, as
    /// `lock_table_other_has_incompatible` with `LOCK_WAIT` has it). For
    /// the runner, which holds a DDL statement's table lock to this: a DDL
    /// that may go at once is one that finds nothing here.
    pub fn table_conflicts(&self, table: u64, mode: TMode) -> Vec<u64> {
        let Some(&t) = self.target_ids.get(&OTarget::Table(table)) else {
            return Vec::new();
        };
        let mut out: Vec<u64> = self.queues[t]
            .iter()
            .map(|id| &self.locks[id])
            .filter(|l| must_wait(OMode::Table(mode), l.mode))
            .map(|l| l.trx)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether `trx` holds a granted lock of one of `modes` on table
    /// `table`.
    pub fn holds_table(&self, trx: u64, table: u64, modes: &[TMode]) -> bool {
        self.target_ids
            .get(&OTarget::Table(table))
            .is_some_and(|&t| {
                self.queues[t].iter().any(|id| {
                    let l = &self.locks[id];
                    l.trx == trx
                        && !l.waiting
                        && matches!(l.mode, OMode::Table(m) if modes.contains(&m))
                })
            })
    }

    /// Takes the violations found so far.
    pub fn take_violations(&mut self) -> Vec<String> {
        std::mem::take(&mut self.violations)
    }

    /// The locks of other transactions that lock `id` must wait for: every
    /// conflicting one ahead of it in its queue, or (`only_granted`) every
    /// conflicting granted one.
    fn blockers(&self, id: u64, only_granted: bool) -> impl Iterator<Item = u64> + '_ {
        let l = &self.locks[&id];
        let q = &self.queues[l.target];
        let ahead = if only_granted {
            &q[..]
        } else {
            let pos = q.iter().position(|&x| x == id).unwrap_or(q.len());
            &q[..pos]
        };
        ahead
            .iter()
            .filter(move |&&x| x != id)
            .filter(move |x| {
                let o = &self.locks[x];
                o.trx != l.trx && (!only_granted || !o.waiting) && must_wait(l.mode, o.mode)
            })
            .copied()
    }

    fn first_blocker(&self, id: u64, only_granted: bool) -> Option<u64> {
        self.blockers(id, only_granted).next()
    }

    fn intern(&mut self, target: &OTarget) -> usize {
        if let Some(&i) = self.target_ids.get(target) {
            return i;
        }
        let i = self.targets.len();
        self.targets.push(target.clone());
        self.queues.push(Vec::new());
        self.history.push(BTreeMap::new());
        self.target_ids.insert(target.clone(), i);
        i
    }

    /// Feeds one event.
    pub fn event(&mut self, e: &OEvent) {
        self.event_at(e, false);
    }

    /// Feeds one event; `other_row`: the runner knows it is a wait for a
    /// record-only lock on a record of the running statement's table's
    /// clustered index that is not the row the statement changes (the
    /// duplicate check of a unique secondary index waits there for the
    /// uncommitted inserter of the row its entry belongs to), so the
    /// statement's own change is in while it waits.
    pub fn event_at(&mut self, e: &OEvent, other_row: bool) {
        let inherited_before = self.last_inherited.take();
        match e.kind {
            OKind::Weight => {
                let counted = self.changes.get(&e.trx).copied().unwrap_or(0);
                let kept = self.in_place.get(&e.trx).copied();
                // Where the shape cannot tell, every count in its range is
                // InnoDB's, and the victim rule is judged with the ends.
                let (lo, hi) = kept.map_or((0, 0), |k| (k.lo, k.hi));
                // A compressed row may have taken more: which ones a page
                // refused is the pages' to know, not the model's.
                let hi = hi + self.refused_extra(e.trx);
                // Where the statement keeps no records in doubt, each
                // refused row adds exactly REFUSED_INSERT_UNDO.
                let whole = kept.is_some()
                    || e.undo_records.saturating_sub(counted) % REFUSED_INSERT_UNDO == 0;
                let ok = whole && (counted + lo..=counted + hi).contains(&e.undo_records);
                if !ok {
                    self.violations.push(format!(
                        "trx {} has {} undo records by the engine's count, but made {counted} row changes{}",
                        e.trx,
                        e.undo_records,
                        match kept {
                            Some(Kept { insert: Some(true), .. }) => {
                                " and waits with an insert's clustered record in place".to_string()
                            }
                            Some(Kept { insert: Some(false), .. }) => {
                                " and waits in an insert before its clustered record".to_string()
                            }
                            Some(k) if k.hi > 0 => format!(
                                " and waits keeping {}..={} undo records of its statement",
                                k.lo, k.hi
                            ),
                            _ => String::new(),
                        }
                    ));
                }
            }
            OKind::Granted | OKind::Wait | OKind::Inherited | OKind::Converted => {
                *self.held.entry(e.trx).or_default() += 1;
                self.count_struct(e);
                if e.kind == OKind::Wait {
                    self.waiting.entry(e.trx).or_default().insert(e.lock);
                    let kept = match (&self.running_insert, &self.running_update) {
                        (Some(shape), _) => Some(Kept::of_insert(
                            shape.in_place(&e.target, other_row),
                            shape.compressed,
                        )),
                        (None, Some(shape)) => Some(shape.kept(&e.target, other_row)),
                        (None, None) => None,
                    };
                    if let Some(kept) = kept {
                        self.in_place.insert(e.trx, kept);
                    }
                }
                let target = self.intern(&e.target);
                self.locks.insert(
                    e.lock,
                    OLock {
                        trx: e.trx,
                        target,
                        mode: e.mode,
                        waiting: e.kind == OKind::Wait,
                        since_us: e.since_us,
                        seen_us: e.t_us,
                    },
                );
                self.queues[target].push(e.lock);
                match e.kind {
                    OKind::Granted => {
                        if let Some(b) = self.first_blocker(e.lock, false) {
                            self.violations.push(format!(
                                "trx {} granted {:?} on {:?} at once although lock {} of trx {} ({:?}) conflicts",
                                e.trx,
                                e.mode,
                                e.target,
                                b,
                                self.locks[&b].trx,
                                self.locks[&b].mode
                            ));
                        }
                        self.granted(e);
                    }
                    OKind::Converted => {
                        self.stats.converted += 1;
                        self.check_converted(e);
                        self.granted(e);
                    }
                    OKind::Wait => {
                        self.stats.waits += 1;
                        if self.first_blocker(e.lock, false).is_none() {
                            self.violations.push(format!(
                                "trx {} waits for {:?} on {:?} with nothing ahead of it in conflict",
                                e.trx, e.mode, e.target
                            ));
                        }
                    }
                    _ => {
                        self.stats.inherited += 1;
                        self.last_inherited = Some((e.trx, target));
                        // Inherited locks are gap locks, compatible with
                        // anything granted.
                        if !matches!(e.mode, OMode::Record(_, RKind::Gap)) {
                            self.violations
                                .push(format!("an inherited lock that is not a gap lock: {e:?}"));
                        }
                    }
                }
            }
            OKind::GrantedAfterWait => {
                self.stats.granted_after_wait += 1;
                match self.locks.get_mut(&e.lock) {
                    Some(l) if l.waiting => {
                        l.waiting = false;
                        self.unwait(e.trx, e.lock);
                        if let Some(k) = struct_kind(&e.target, e.mode) {
                            self.structs.entry(e.trx).or_default().1.insert(k);
                        }
                    }
                    _ => {
                        self.violations.push(format!(
                            "lock {} granted after a wait it was not in",
                            e.lock
                        ));
                        return;
                    }
                }
                if let Some(b) = self.first_blocker(e.lock, false) {
                    self.violations.push(format!(
                        "trx {} granted {:?} on {:?} while lock {} of trx {} ahead of it conflicts",
                        e.trx, e.mode, e.target, b, self.locks[&b].trx
                    ));
                }
                if matches!(e.mode, OMode::Record(_, RKind::InsertIntention)) {
                    // The insert is woken to check the gap again; nothing
                    // is held.
                    self.remove(e.lock, false);
                    return;
                }
                self.granted(e);
            }
            OKind::InsertChecked => {
                // A request that is granted and gone at once: judged
                // against the queue as it stands, not kept.
                let target = self.intern(&e.target);
                let blocker = self.queues[target].iter().copied().find(|x| {
                    let o = &self.locks[x];
                    o.trx != e.trx && must_wait(e.mode, o.mode)
                });
                if let Some(b) = blocker {
                    self.violations.push(format!(
                        "trx {} inserted into the gap before {:?} although lock {b} of trx {} ({:?}) covers it",
                        e.trx, e.target, self.locks[&b].trx, self.locks[&b].mode
                    ));
                }
            }
            OKind::TimedOut => {
                self.stats.timeouts += 1;
                self.drop_wait_struct(e.trx);
                // Measured from the oracle's own record of when the wait
                // began, not from anything the engine stamped.
                let since = self.locks.get(&e.lock).map_or(e.since_us, |l| l.since_us);
                if e.t_us < since + self.timeout_us {
                    self.violations.push(format!(
                        "trx {} timed out after at most {} us of waiting, before the {} us timeout",
                        e.trx,
                        e.t_us.saturating_sub(since),
                        self.timeout_us
                    ));
                }
                self.remove(e.lock, false);
            }
            OKind::Victim => {
                self.stats.victims += 1;
                self.check_victim(e);
                self.drop_wait_struct(e.trx);
                self.remove(e.lock, false);
            }
            OKind::Released | OKind::Cancelled => {
                let held = self.locks.get(&e.lock).is_some_and(|l| !l.waiting);
                if e.kind == OKind::Cancelled && !held {
                    // A wait ended without a grant (its record left, or
                    // the request given up): its struct stays, no longer
                    // waiting (`lock_rec_cancel`), one a later lock of
                    // its kind sets a bit in.
                    if let Some(k) = struct_kind(&e.target, e.mode) {
                        self.structs.entry(e.trx).or_default().1.insert(k);
                    }
                }
                if held && e.kind == OKind::Released {
                    let target = self.locks[&e.lock].target;
                    // The inheritance just before the release, unless it
                    // made this very lock: an insert that splits a locked
                    // gap hands the new record the gap's lock, and when the
                    // insert is undone in the same step (a FOREIGN KEY
                    // check failing after it) that lock goes again, its
                    // gap back to a lock the transaction already holds on
                    // the successor, which no event repeats.
                    let heir = inherited_before
                        .filter(|&(t, h)| t == e.trx && h != target && self.same_index(h, target))
                        .map(|(_, h)| h);
                    self.step_released.push((e.trx, target, e.mode, heir));
                }
                self.remove(e.lock, held);
            }
        }
    }

    /// An implicit lock is the X record lock of a transaction that changed
    /// the record: it must be X and record-only, on a record (not the
    /// supremum), and its owner must be writing that table (hold a granted
    /// IX or X lock on it, which every change takes first).
    fn check_converted(&mut self, e: &OEvent) {
        let OTarget::Record(table, _, Some(_)) = &e.target else {
            self.violations
                .push(format!("an implicit lock converted on no record: {e:?}"));
            return;
        };
        if e.mode != OMode::Record(true, RKind::Record) {
            self.violations.push(format!(
                "an implicit lock converted as {:?}, not an X record lock: {e:?}",
                e.mode
            ));
        }
        let writes_table = self
            .target_ids
            .get(&OTarget::Table(*table))
            .is_some_and(|&t| {
                self.queues[t].iter().any(|id| {
                    let l = &self.locks[id];
                    l.trx == e.trx
                        && !l.waiting
                        && matches!(l.mode, OMode::Table(TMode::IX | TMode::X))
                })
            });
        if !writes_table {
            self.violations.push(format!(
                "trx {} given an implicit lock on {:?} without writing table {table} (no IX or X lock on it)",
                e.trx, e.target
            ));
        }
    }

    /// Checks a newly granted lock against every other granted lock, and
    /// adds the conflict edges from earlier holders.
    fn granted(&mut self, e: &OEvent) {
        if let Some(c) = self.first_blocker(e.lock, true) {
            self.violations.push(format!(
                "conflicting locks granted together on {:?}: trx {} {:?} and trx {} {:?}",
                e.target, e.trx, e.mode, self.locks[&c].trx, self.locks[&c].mode
            ));
        }
        let target = self.locks[&e.lock].target;
        for (&m, trxs) in &self.history[target] {
            if must_wait(e.mode, m) || must_wait(m, e.mode) {
                for &t in trxs {
                    if t == e.trx {
                        continue;
                    }
                    let edge = (t, e.trx);
                    // Every source of an edge new in this step is kept.
                    if self.edges.insert(edge) || self.step_edges.iter().any(|(x, _, _)| *x == edge)
                    {
                        self.step_edges.push((edge, target, m));
                    }
                }
            }
        }
    }

    /// Takes a release of `trx`'s lock (`target`, `mode`) out of the
    /// conflict history, with the edges it made during this step.
    fn forget_release(
        &mut self,
        trx: u64,
        target: usize,
        mode: OMode,
        step_edges: &mut Vec<((u64, u64), usize, OMode)>,
    ) {
        if let Some(trxs) = self.history[target].get_mut(&mode) {
            if let Some(pos) = trxs.iter().rposition(|&t| t == trx) {
                trxs.remove(pos);
            }
        }
        let (gone, kept): (Vec<_>, Vec<_>) = step_edges
            .drain(..)
            .partition(|(edge, t, m)| edge.0 == trx && *t == target && *m == mode);
        *step_edges = kept;
        for (edge, _, _) in gone {
            // An edge another release of this step also made stays.
            if !step_edges.iter().any(|(x, _, _)| *x == edge) {
                self.edges.remove(&edge);
            }
        }
    }

    fn unwait(&mut self, trx: u64, id: u64) {
        if let Some(w) = self.waiting.get_mut(&trx) {
            w.remove(&id);
            if w.is_empty() {
                self.waiting.remove(&trx);
                self.in_place.remove(&trx);
            }
        }
    }

    fn remove(&mut self, id: u64, was_held: bool) {
        let Some(l) = self.locks.remove(&id) else {
            return;
        };
        if l.waiting {
            self.unwait(l.trx, id);
        }
        if let Some(n) = self.held.get_mut(&l.trx) {
            *n -= 1;
            if *n == 0 {
                self.held.remove(&l.trx);
                self.structs.remove(&l.trx);
            }
        }
        let q = &mut self.queues[l.target];
        if let Some(pos) = q.iter().position(|&x| x == id) {
            q.remove(pos);
        }
        if was_held {
            let trxs = self.history[l.target].entry(l.mode).or_default();
            if trxs.last() != Some(&l.trx) {
                trxs.push(l.trx);
            }
        }
    }

    /// The transactions `trx` waits for.
    fn waits_for(&self, trx: u64) -> Vec<u64> {
        let mut out: Vec<u64> = self
            .waiting
            .get(&trx)
            .into_iter()
            .flatten()
            .flat_map(|&id| self.blockers(id, false).collect::<Vec<_>>())
            .map(|b| self.locks[&b].trx)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The transactions on a cycle through `trx`, if any: the one waiting
    /// for `trx` on it (its predecessor) is returned.
    fn cycle_predecessor(&self, trx: u64) -> Option<u64> {
        // Depth-first search from trx; a path back to trx ends a cycle.
        let mut stack = vec![(trx, self.waits_for(trx), 0usize)];
        let mut seen = BTreeSet::from([trx]);
        while let Some((t, next, i)) = stack.last_mut() {
            let Some(&n) = next.get(*i) else {
                stack.pop();
                continue;
            };
            *i += 1;
            let waiter = *t;
            if n == trx {
                return Some(waiter);
            }
            if seen.insert(n) {
                let w = self.waits_for(n);
                stack.push((n, w, 0));
            }
        }
        None
    }

    /// InnoDB's transaction weight (`TRX_WEIGHT`): undo records plus
    /// lock structs, both counted by the oracle (row changes from the
    /// runner, structs from the event log).
    fn weight(&self, trx: u64) -> u64 {
        let structs = self.structs.get(&trx).map_or(0, |s| s.0);
        let kept = self.in_place.get(&trx).map_or(0, |k| k.lo);
        self.changes.get(&trx).copied().unwrap_or(0) + structs + kept
    }

    /// [`LockOracle::weight`] with the most undo records a waiting
    /// statement may keep where the oracle cannot tell how many.
    fn weight_hi(&self, trx: u64) -> u64 {
        let unknown = self.in_place.get(&trx).map_or(0, |k| k.hi - k.lo);
        self.weight(trx) + unknown + self.refused_extra(trx)
    }

    /// The insert the next engine call runs (or runs again), or `None`
    /// after it: waits it makes are judged by its shape.
    pub fn running_insert(&mut self, shape: Option<InsertShape>) {
        self.running_insert = shape;
    }

    /// The row-moving update the next engine call runs (or runs again),
    /// or `None` after it: waits it makes are judged by its shape.
    pub fn running_update(&mut self, shape: Option<UpdateShape>) {
        self.running_update = shape;
    }

    /// Whether `trx` waits in an insert with its clustered record in place
    /// (as the running insert's shape says; `None` if it does not wait in
    /// one, or the shape could not tell).
    pub fn insert_in_place(&self, trx: u64) -> Option<bool> {
        self.in_place.get(&trx).and_then(|k| k.insert)
    }

    /// Counts the struct a new lock takes, if it needs one (before it joins
    /// its queue): a wait's own; a granted record lock's, unless the
    /// transaction has a granted struct of its index and mode and nobody
    /// waits on the record; a table lock's.
    fn count_struct(&mut self, e: &OEvent) {
        let kind = struct_kind(&e.target, e.mode);
        let someone_waits = kind.is_some()
            && e.kind != OKind::Wait
            && self.target_ids.get(&e.target).is_some_and(|&t| {
                self.queues[t]
                    .iter()
                    .any(|id| self.locks.get(id).is_some_and(|l| l.waiting))
            });
        let s = self.structs.entry(e.trx).or_default();
        match kind {
            Some(k) if e.kind != OKind::Wait => {
                if someone_waits || !s.1.contains(&k) {
                    s.0 += 1;
                    s.1.insert(k);
                }
            }
            _ => s.0 += 1,
        }
    }

    /// A wait withdrawn (timed out, or a victim's) takes its struct away.
    fn drop_wait_struct(&mut self, trx: u64) {
        if let Some(s) = self.structs.get_mut(&trx) {
            s.0 = s.0.saturating_sub(1);
        }
    }

    /// The runner's count of a transaction's row changes so far (its undo
    /// records: one per row a finished statement inserted, updated or
    /// deleted, less those a rollback to a savepoint undid), and how many
    /// of them wrote a row of a compressed table.
    pub fn set_changes(&mut self, trx: u64, changes: u64, refusable: u64) {
        self.changes.insert(trx, changes);
        self.refusable.insert(trx, refusable);
    }

    /// The most undo records beyond one a row that the compressed rows a
    /// transaction wrote may have taken ([`REFUSED_INSERT_UNDO`] each).
    fn refused_extra(&self, trx: u64) -> u64 {
        self.refusable.get(&trx).copied().unwrap_or(0) * REFUSED_INSERT_UNDO
    }

    /// A victim must be on a cycle, and the lighter of the requester (the
    /// transaction whose wait closed it, the last to wait) and the one
    /// waiting for it.
    fn check_victim(&mut self, e: &OEvent) {
        if self.cycle_predecessor(e.trx).is_none() {
            self.violations.push(format!(
                "trx {} chosen as a deadlock victim while on no wait-for cycle",
                e.trx
            ));
            return;
        }
        // The requester is the transaction whose wait is the newest on the
        // cycle (lock ids grow with every request): the victim itself, or
        // the one it waits for.
        let newest_wait = |t: u64| {
            self.waiting
                .get(&t)
                .and_then(|w| w.iter().next_back().copied())
                .unwrap_or(0)
        };
        let succ = self.waits_for(e.trx);
        let requester = std::iter::once(e.trx)
            .chain(succ.iter().copied())
            .max_by_key(|&t| newest_wait(t))
            .unwrap_or(e.trx);
        // Every transaction waiting for the requester on a cycle through it
        // is a candidate the search may have met first; the victim must be
        // the lighter of the requester and one of them.
        let req = requester;
        let preds: Vec<u64> = self
            .waiting
            .keys()
            .copied()
            .filter(|&t| t != req)
            .filter(|&t| self.waits_for(t).contains(&req) && self.reaches(req, t))
            .collect();
        let wr = self.weight(req);
        let ok = if e.trx == req {
            preds.iter().any(|&p| self.weight_hi(p) >= wr)
        } else {
            preds.contains(&e.trx) && self.weight(e.trx) < self.weight_hi(req)
        };
        if ok && e.trx != req {
            self.stats.victims_by_weight += 1;
        }
        if !ok {
            self.violations.push(format!(
                "deadlock victim trx {} (weight {}) breaks the weight rule: requester trx {req} (weight {wr}), waiting for it on the cycle: {:?}",
                e.trx,
                self.weight(e.trx),
                preds.iter().map(|&p| (p, self.weight(p))).collect::<Vec<_>>()
            ));
        }
    }

    /// Whether `from` reaches `to` in the wait-for graph.
    fn reaches(&self, from: u64, to: u64) -> bool {
        let mut seen = BTreeSet::from([from]);
        let mut todo = vec![from];
        while let Some(t) = todo.pop() {
            for n in self.waits_for(t) {
                if n == to {
                    return true;
                }
                if seen.insert(n) {
                    todo.push(n);
                }
            }
        }
        false
    }

    /// The end of an engine call: no grantable waiter, no undetected
    /// cycle; releases by transactions that go on are set aside for
    /// [`LockOracle::take_early_releases`].
    pub fn settle(&mut self) {
        self.last_inherited = None;
        self.last_released.clear();
        let mut step_edges = std::mem::take(&mut self.step_edges);
        for (trx, target, mode, heir) in std::mem::take(&mut self.step_released) {
            self.last_released.push((trx, target, mode));
            if self.held.contains_key(&trx) {
                // A release two-phase locking allows only when the record
                // left the index (the runner judges that): the lock
                // protected no row its transaction can still depend on
                // (what was left of the gap went to the heir's lock), so it
                // orders the transaction before no later holder of the key.
                self.forget_release(trx, target, mode, &mut step_edges);
                self.early.push(EarlyRelease {
                    trx,
                    target: self.targets[target].clone(),
                    mode,
                    heir: heir.map(|h| self.targets[h].clone()),
                });
            }
        }
        let waiting: Vec<u64> = self.waiting.values().flatten().copied().collect();
        for id in &waiting {
            let l = &self.locks[id];
            if self.first_blocker(*id, false).is_none() {
                self.violations.push(format!(
                    "trx {} still waits for {:?} on {:?} with nothing ahead of it in conflict (a lost wake-up)",
                    l.trx, l.mode, self.targets[l.target]
                ));
            }
        }
        if self.deadlock_detect {
            let trxs: BTreeSet<u64> = waiting.iter().map(|id| self.locks[id].trx).collect();
            for t in trxs {
                if self.cycle_predecessor(t).is_some() {
                    self.violations.push(format!(
                        "a wait-for cycle through trx {t} was left undetected"
                    ));
                    break;
                }
            }
        }
        // Keep reports bounded: one broken rule floods every later step.
        self.violations.truncate(20);
    }

    /// Once every session whose wait reached its deadline has been resumed
    /// at time `now_us`: no wait may have outlived the timeout.
    pub fn check_timeouts(&mut self, now_us: u64) {
        for l in self.waiting.values().flatten().map(|id| &self.locks[id]) {
            if now_us >= l.seen_us + self.timeout_us {
                self.violations.push(format!(
                    "trx {} has waited at least {} us, past the {} us lock wait timeout",
                    l.trx,
                    now_us - l.seen_us,
                    self.timeout_us
                ));
                break;
            }
        }
        self.violations.truncate(20);
    }

    /// Whether two interned targets are record positions in one index.
    fn same_index(&self, a: usize, b: usize) -> bool {
        match (&self.targets[a], &self.targets[b]) {
            (OTarget::Record(t1, i1, _), OTarget::Record(t2, i2, _)) => t1 == t2 && i1 == i2,
            _ => false,
        }
    }

    /// Whether `trx` holds a granted lock for which `pred` (of its target
    /// and mode) is true, or held one until the last step released it (an
    /// autocommit statement's locks go with its commit in the same call).
    pub fn held_where(&self, trx: u64, pred: impl Fn(&OTarget, OMode) -> bool) -> bool {
        self.locks
            .values()
            .any(|l| l.trx == trx && !l.waiting && pred(&self.targets[l.target], l.mode))
            || self
                .last_released
                .iter()
                .any(|&(t, target, mode)| t == trx && pred(&self.targets[target], mode))
    }

    /// Every lock the oracle knows, granted or waiting: its transaction,
    /// target, mode and whether it waits, in lock id order.
    pub fn all_locks(&self) -> Vec<(u64, OTarget, OMode, bool)> {
        let mut ids: Vec<&u64> = self.locks.keys().collect();
        ids.sort_unstable();
        ids.into_iter()
            .map(|id| {
                let l = &self.locks[id];
                (l.trx, self.targets[l.target].clone(), l.mode, l.waiting)
            })
            .collect()
    }

    /// Whether a transaction other than `trx` holds or waits for a lock
    /// that covers a gap (next-key, gap, insert intention) anywhere in an
    /// index: then an insert into it must check its gap.
    pub fn others_lock_gaps(&self, trx: u64, table: u64, index: u64, except: &[u64]) -> bool {
        self.locks.iter().any(|(id, l)| {
            l.trx != trx
                && !except.contains(id)
                && !matches!(l.mode, OMode::Record(_, RKind::Record) | OMode::Table(_))
                && matches!(&self.targets[l.target], OTarget::Record(t, i, _) if *t == table && *i == index)
        })
    }

    /// Takes the releases of locks whose transactions went on (see
    /// [`EarlyRelease`]).
    pub fn take_early_releases(&mut self) -> Vec<EarlyRelease> {
        std::mem::take(&mut self.early)
    }

    /// Whether a transaction holds or waits for any lock: every
    /// transaction that changed a row holds at least the IX lock on its
    /// table until it ends, so one that holds nothing has ended (or never
    /// wrote).
    pub fn holds_any(&self, trx: u64) -> bool {
        self.held.contains_key(&trx)
    }

    /// What a waiting transaction's newest waiting request is on.
    pub fn waiting_target(&self, trx: u64) -> Option<OTarget> {
        let id = self.waiting.get(&trx)?.iter().next_back()?;
        Some(self.targets[self.locks[id].target].clone())
    }

    /// Whether a transaction waits for a lock on a record (or a gap), not
    /// on a table.
    pub fn waits_for_record(&self, trx: u64) -> bool {
        self.waiting.get(&trx).is_some_and(|ids| {
            ids.iter()
                .any(|id| matches!(self.targets[self.locks[id].target], OTarget::Record(..)))
        })
    }

    /// The wait deadline of a transaction's waiting lock.
    pub fn deadline(&self, trx: u64) -> Option<u64> {
        self.waiting
            .get(&trx)?
            .iter()
            .map(|id| self.locks[id].seen_us + self.timeout_us)
            .min()
    }

    /// A transaction committed (its locks' conflicts count for
    /// serializability).
    pub fn committed(&mut self, trx: u64) {
        self.committed.insert(trx);
    }

    /// Checks the conflict graph of committed transactions for a cycle.
    pub fn check_serializable(&mut self) {
        let mut adj: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &(a, b) in &self.edges {
            if self.committed.contains(&a) && self.committed.contains(&b) {
                adj.entry(a).or_default().push(b);
            }
        }
        // Kahn's algorithm: a cycle leaves nodes with incoming edges.
        let mut indeg: BTreeMap<u64, usize> = BTreeMap::new();
        for (&a, bs) in &adj {
            indeg.entry(a).or_default();
            for &b in bs {
                *indeg.entry(b).or_default() += 1;
            }
        }
        let mut ready: Vec<u64> = indeg
            .iter()
            .filter(|(_, &d)| d == 0)
            .map(|(&t, _)| t)
            .collect();
        let mut done = 0;
        while let Some(t) = ready.pop() {
            done += 1;
            for &b in adj.get(&t).map(Vec::as_slice).unwrap_or(&[]) {
                let d = indeg.get_mut(&b).expect("counted");
                *d -= 1;
                if *d == 0 {
                    ready.push(b);
                }
            }
        }
        if done < indeg.len() {
            self.violations.push(format!(
                "committed locking transactions are not serializable: {} of them are on conflict cycles",
                indeg.len() - done
            ));
        }
    }

    /// A crash: every lock is gone with the process. The conflict graph so
    /// far is checked first.
    pub fn crash(&mut self) {
        self.check_serializable();
        let (timeout, detect, stats) = (self.timeout_us, self.deadlock_detect, self.stats);
        let violations = std::mem::take(&mut self.violations);
        *self = LockOracle::new(timeout, detect);
        self.violations = violations;
        self.stats = stats;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: OKind, lock: u64, trx: u64, key: u8, mode: OMode, t: u64) -> OEvent {
        OEvent {
            t_us: t,
            kind,
            lock,
            trx,
            target: OTarget::Record(1, 1, Some(vec![Some(vec![key])])),
            mode,
            since_us: t,
            undo_records: 0,
        }
    }

    const X: OMode = OMode::Record(true, RKind::Record);

    #[test]
    fn structs_are_counted_by_mode_and_waits() {
        let mut o = LockOracle::new(1_000_000, true);
        // Trx 1: three X record locks in one struct.
        for k in 1..=3 {
            o.event(&ev(OKind::Granted, k as u64, 1, k, X, 0));
        }
        assert_eq!(o.weight(1), 1);
        // Trx 2 waits on record 1 (a struct); trx 1's S next-key lock on
        // record 1 is a new mode, and one on record 2 shares it; its next
        // X lock on record 1 must make a struct: trx 2 waits there.
        o.event(&ev(OKind::Wait, 10, 2, 1, X, 1));
        assert_eq!(o.weight(2), 1);
        let s_next = OMode::Record(false, RKind::NextKey);
        o.event(&ev(OKind::Granted, 11, 1, 2, s_next, 2));
        assert_eq!(o.weight(1), 2);
        o.event(&ev(OKind::Granted, 12, 1, 1, s_next, 2));
        assert_eq!(o.weight(1), 3, "someone waits on record 1");
        // The wait timed out: its struct goes.
        o.event(&ev(OKind::TimedOut, 10, 2, 1, X, 2_000_000));
        assert_eq!(o.weight(2), 0);
    }

    #[test]
    fn conflicting_grants_are_reported() {
        let mut o = LockOracle::new(1_000, true);
        o.event(&ev(OKind::Granted, 1, 1, 5, X, 0));
        o.event(&ev(OKind::Granted, 2, 2, 5, X, 1));
        assert!(!o.take_violations().is_empty());
    }

    #[test]
    fn a_lost_wakeup_and_a_late_timeout_are_reported() {
        let mut o = LockOracle::new(1_000, true);
        o.event(&ev(OKind::Granted, 1, 1, 5, X, 0));
        o.event(&ev(OKind::Wait, 2, 2, 5, X, 10));
        o.settle();
        o.check_timeouts(10);
        assert!(o.take_violations().is_empty());
        o.event(&ev(OKind::Released, 1, 1, 5, X, 20));
        o.settle();
        assert!(o.take_violations()[0].contains("lost wake-up"));
        let mut o = LockOracle::new(1_000, true);
        o.event(&ev(OKind::Granted, 1, 1, 5, X, 0));
        o.event(&ev(OKind::Wait, 2, 2, 5, X, 10));
        o.check_timeouts(1_010);
        assert!(o.take_violations()[0].contains("past the"));
    }

    #[test]
    fn an_undetected_cycle_and_a_heavy_victim_are_reported() {
        let mut o = LockOracle::new(1_000_000, true);
        o.event(&ev(OKind::Granted, 1, 1, 1, X, 0));
        o.event(&ev(OKind::Granted, 2, 2, 2, X, 0));
        o.event(&ev(OKind::Wait, 3, 1, 2, X, 1));
        o.event(&ev(OKind::Wait, 4, 2, 1, X, 2));
        o.settle();
        assert!(o.take_violations()[0].contains("undetected"));
        // Trx 1 is heavier by the runner's count: trx 2 (the requester)
        // must be the victim.
        o.set_changes(1, 10, 0);
        o.event(&ev(OKind::Victim, 3, 1, 2, X, 2));
        assert!(o.take_violations()[0].contains("weight rule"));
    }

    #[test]
    fn the_engines_weight_is_checked_against_the_runners_count_not_used() {
        let mut o = LockOracle::new(1_000_000, true);
        o.set_changes(1, 3, 0);
        let mut w = ev(OKind::Weight, 1, 1, 1, X, 0);
        w.undo_records = 3;
        o.event(&w);
        assert!(o.take_violations().is_empty());
        w.undo_records = 30;
        o.event(&w);
        assert!(o.take_violations()[0].contains("undo records by the engine's count"));
        assert_eq!(o.weight(1), 3, "the engine's count sets nothing");
    }

    #[test]
    fn a_compressed_row_may_take_the_undo_records_of_a_refused_insert() {
        // Three rows, one of them into a compressed table: 3 undo records,
        // or 5 if its leaf refused it, and no other count.
        let mut o = LockOracle::new(1_000_000, true);
        o.set_changes(1, 3, 1);
        let mut w = ev(OKind::Weight, 1, 1, 1, X, 0);
        for ok in [3, 5] {
            w.undo_records = ok;
            o.event(&w);
            assert!(o.take_violations().is_empty(), "{ok} undo records");
        }
        for bad in [2, 4, 6, 7] {
            w.undo_records = bad;
            o.event(&w);
            let v = o.take_violations();
            assert!(
                v.len() == 1 && v[0].contains("undo records by the engine's count"),
                "{bad}: {v:?}"
            );
        }
        assert_eq!((o.weight(1), o.weight_hi(1)), (3, 5), "judged by both ends");
        o.set_changes(1, 3, 0);
        w.undo_records = 5;
        o.event(&w);
        assert!(
            !o.take_violations().is_empty(),
            "no compressed row: exactly 3"
        );
    }

    #[test]
    fn a_timeout_is_measured_from_when_the_oracle_saw_the_wait_begin() {
        // The engine stamps nothing the oracle uses: a second wait of the
        // same statement, timed out a timeout after the first one began,
        // is early.
        let mut o = LockOracle::new(1_000, true);
        o.event(&ev(OKind::Granted, 1, 1, 5, X, 0));
        o.event(&ev(OKind::Wait, 2, 2, 5, X, 600));
        let mut out = ev(OKind::TimedOut, 2, 2, 5, X, 1_000);
        out.since_us = 0;
        o.event(&out);
        assert!(o.take_violations()[0].contains("before the 1000 us timeout"));
    }

    #[test]
    fn a_release_is_early_only_when_the_transaction_goes_on() {
        let mut o = LockOracle::new(1_000, true);
        let ix = |kind, lock, trx| OEvent {
            target: OTarget::Table(1),
            ..ev(kind, lock, trx, 0, OMode::Table(TMode::IX), 0)
        };
        o.event(&ix(OKind::Granted, 1, 1));
        o.event(&ev(OKind::Granted, 2, 1, 5, X, 0));
        o.event(&ev(OKind::Granted, 3, 1, 6, X, 0));
        // The record lock goes, the transaction keeps its others.
        o.event(&ev(OKind::Released, 2, 1, 5, X, 1));
        o.settle();
        let early = o.take_early_releases();
        assert_eq!(early.len(), 1);
        assert_eq!(
            early[0].target,
            OTarget::Record(1, 1, Some(vec![Some(vec![5])]))
        );
        // Everything goes in one step: the transaction ended.
        o.event(&ev(OKind::Released, 3, 1, 6, X, 2));
        o.event(&ix(OKind::Released, 1, 1));
        o.settle();
        assert!(o.take_early_releases().is_empty());
        assert!(!o.holds_any(1));
    }

    #[test]
    fn a_converted_lock_must_be_an_x_record_lock_of_a_writer() {
        let mut o = LockOracle::new(1_000, true);
        o.event(&ev(OKind::Converted, 1, 1, 5, X, 0));
        assert!(o.take_violations()[0].contains("without writing table 1"));
        let mut o = LockOracle::new(1_000, true);
        o.event(&OEvent {
            target: OTarget::Table(1),
            ..ev(OKind::Granted, 1, 1, 0, OMode::Table(TMode::IX), 0)
        });
        o.event(&ev(OKind::Converted, 2, 1, 5, X, 0));
        assert!(o.take_violations().is_empty());
        o.event(&ev(
            OKind::Converted,
            3,
            1,
            6,
            OMode::Record(false, RKind::NextKey),
            0,
        ));
        assert!(o.take_violations()[0].contains("not an X record lock"));
    }

    #[test]
    fn serial_histories_pass_and_cycles_fail() {
        let mut o = LockOracle::new(1_000, true);
        // T1 then T2 on key 1; T2 then T1 on key 2: a cycle.
        o.event(&ev(OKind::Granted, 1, 1, 1, X, 0));
        o.event(&ev(OKind::Released, 1, 1, 1, X, 1));
        o.event(&ev(OKind::Granted, 2, 2, 1, X, 2));
        o.event(&ev(OKind::Granted, 3, 2, 2, X, 3));
        o.event(&ev(OKind::Released, 3, 2, 2, X, 4));
        o.event(&ev(OKind::Granted, 4, 1, 2, X, 5));
        o.committed(1);
        o.committed(2);
        o.check_serializable();
        assert!(o.take_violations()[0].contains("not serializable"));
    }

    /// Small seed 36464: a READ UNCOMMITTED delete's lock on a delete-marked
    /// record went with the record when purge removed it (no gap lock is
    /// inherited at that level), another transaction inserted the key
    /// again, and the deleter then waited for that insert. The release
    /// protected nothing the deleter depended on, so it orders neither
    /// transaction: the oracle reported a conflict cycle of two.
    #[test]
    fn a_release_of_a_record_that_left_orders_nothing() {
        let mut o = LockOracle::new(1_000, true);
        let ix = OMode::Table(TMode::IX);
        let mut table = ev(OKind::Granted, 10, 1, 0, ix, 0);
        table.target = OTarget::Table(1);
        o.event(&table);
        o.event(&ev(OKind::Granted, 1, 1, 3, X, 0));
        o.settle();
        // Purge: trx 1 goes on (it holds the table's IX), its lock gone.
        o.event(&ev(OKind::Released, 1, 1, 3, X, 1));
        o.settle();
        assert_eq!(o.take_early_releases().len(), 1);
        // Trx 2 locks the key's new record and commits; trx 1 then locks
        // it too.
        o.event(&ev(OKind::Granted, 2, 2, 3, X, 2));
        o.settle();
        o.event(&ev(OKind::Released, 2, 2, 3, X, 3));
        o.event(&ev(OKind::Granted, 3, 1, 3, X, 3));
        o.settle();
        o.committed(2);
        o.event(&ev(OKind::Released, 3, 1, 3, X, 4));
        table.kind = OKind::Released;
        o.event(&table);
        o.settle();
        o.committed(1);
        o.check_serializable();
        assert_eq!(o.take_violations(), Vec::<String>::new());
        // The same history with trx 1's first release at its end (it held
        // nothing else) is a cycle.
        let mut o = LockOracle::new(1_000, true);
        o.event(&ev(OKind::Granted, 1, 1, 3, X, 0));
        o.settle();
        o.event(&ev(OKind::Released, 1, 1, 3, X, 1));
        o.settle();
        o.event(&ev(OKind::Granted, 2, 2, 3, X, 2));
        o.settle();
        o.event(&ev(OKind::Released, 2, 2, 3, X, 3));
        o.event(&ev(OKind::Granted, 3, 1, 3, X, 3));
        o.settle();
        o.committed(1);
        o.committed(2);
        o.check_serializable();
        assert!(o.take_violations()[0].contains("not serializable"));
    }
}
