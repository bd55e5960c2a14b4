//! The locks row operations take, and the physical removals that move
//! locks. Mirrors the lock calls of InnoDB's `row0ins.cc`, `row0upd.cc` and
//! `row0sel.cc` (`lock_rec_insert_check_and_lock`,
//! `lock_clust_rec_modify_check_and_lock`, `sel_set_rec_lock`).

use crate::btree::{self, Bound, Cursor, Direction, Index, Key};
use crate::dict::Table;
use crate::error::Result;
use crate::lock::{LockId, LockSys, Mode, RecKey, RecKind, RecMode, Request, Target, TrxId};
use crate::pager::Pager;

/// What a row operation needs to take locks.
pub struct LockCtx<'a> {
    /// The lock system.
    pub locks: &'a mut LockSys,
    /// The transaction taking them.
    pub trx: TrxId,
    /// The engine clock, microseconds.
    pub now_us: u64,
    /// Whether gaps are locked (REPEATABLE READ and SERIALIZABLE; READ
    /// COMMITTED and READ UNCOMMITTED lock records only).
    pub gaps: bool,
    /// READ COMMITTED itself (not READ UNCOMMITTED): the level at which
    /// `row_search_for_mysql` lets go of its lock on a delete-marked record
    /// it passes.
    pub read_committed: bool,
    /// The transactions active when the statement began, sorted: a record
    /// whose DB_TRX_ID is one of them (other than `trx`) is implicitly
    /// X-locked by it.
    pub active: Vec<TrxId>,
    /// SKIP LOCKED: a request that would wait is not made; `skipped`
    /// says so, and the read leaves the row out.
    pub skip_locked: bool,
    /// A request was skipped (SKIP LOCKED) since this was last cleared.
    pub skipped: bool,
    /// Semi-consistent read (an UPDATE's scan of the clustered index
    /// under READ COMMITTED, `row_search_for_mysql`'s
    /// ROW_READ_TRY_SEMI_CONSISTENT): a record whose lock would wait is
    /// read, unlocked, in the last committed version this snapshot sees
    /// (`skip_locked` is set with it), for the caller to test against its
    /// WHERE and lock for real only if it matches.
    pub semi: Option<crate::trx::ReadView>,
    /// Duplicate checks lock X rather than S: the statement goes on to
    /// replace or update the row it collides with
    /// (`row_ins_set_exclusive_rec_lock` under `trx->duplicates`).
    pub duplicates: bool,
    /// The positions, in a semi-consistent read's rows, of those read so.
    pub semi_rows: Vec<usize>,
    /// A locking scan's place: given, where a scan that waited (or handed
    /// its rows over, `row_by_row`) goes on from; set by a scan that must
    /// wait or hands its rows over.
    pub resume: Option<ScanResume>,
    /// The statement changes each row as it reads it (MySQL's UPDATE and
    /// DELETE, `mysql_update`'s and `mysql_delete`'s read_record loop): a
    /// locking scan that has rows read and meets a lock it would wait for
    /// hands those rows over first, its place kept in `resume`, so the
    /// rows are changed before the wait, as in InnoDB, where they count
    /// in the transaction's weight.
    pub row_by_row: bool,
    /// Set by the scan while it has rows to hand over: a request that
    /// would wait is not made; `yielded` says so.
    pub yield_waits: bool,
    /// A request was not made for `yield_waits` since this was last
    /// cleared.
    pub yielded: bool,
    /// The read is a SELECT's and the server sees a range's end before
    /// the engine looks up the clustered record of a secondary index
    /// entry ([`crate::LaterRule::IndexConditionPushdown`]).
    pub index_condition: bool,
    /// The read needs no column but those its secondary index holds
    /// ([`crate::Request::IndexOnly`]): a shared lock takes the index
    /// entry alone, never the clustered record.
    pub index_only: bool,
}

/// Where a locking scan that waited for a lock goes on from, as InnoDB's
/// `row_search_for_mysql` keeps its cursor on the record it waits for and
/// restores it there once granted (`btr_pcur_restore_position`): the
/// entry's key and the rows it had read, which stay as they were (it
/// locked them). A record inserted behind the cursor meanwhile, in a gap
/// it did not lock, is not read, where running the scan again from its
/// start would read it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanResume {
    /// The key of the index entry waited for.
    pub key: Key,
    /// The rows read before it.
    pub rows: Vec<Vec<crate::record::Value>>,
    /// The entry is the one past the range's end that the scan locks
    /// before the server sees the range is over: once granted, the scan
    /// locks it again and stops, rather than looking for the first entry
    /// past the end anew (one inserted meanwhile between the range and it
    /// would be another).
    pub past_end: bool,
    /// Rows the scan handed over before (`row_by_row`): its LIMIT counts
    /// them.
    pub handed: usize,
    /// The scan goes on from after `key`, the last entry it handed a row
    /// of over (`row_by_row`), where its cursor stood while the rows were
    /// changed: an entry inserted after it meanwhile is read, as InnoDB's
    /// cursor, moving on from that entry, reads it.
    pub after: bool,
}

impl LockCtx<'_> {
    /// Requests a lock on a position of `index`; `Some(lock)` if the
    /// transaction must wait. A request that covers a record (next-key or
    /// record-only) first makes explicit the implicit lock the record's
    /// last modifier holds (`lock_rec_convert_impl_to_expl`), so that it
    /// waits for an uncommitted insert. `rec` is the record at the key in
    /// `index` when the caller has it at hand (otherwise it is looked up).
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        pager: &mut Pager,
        table: &Table,
        index: &Index,
        key: RecKey,
        mode: RecMode,
        kind: RecKind,
        rec: Option<&[u8]>,
    ) -> Result<Option<LockId>> {
        // A read's lock on a user record makes its owner's implicit lock
        // explicit first, whatever its kind: a gap lock too
        // (`lock_clust_rec_read_check_and_lock` and its secondary twin
        // convert before `lock_rec_lock` for any record but the
        // supremum), which gives the owner a lock struct and its weight.
        // The owner may be the reader itself: 1.0.6 converts its own
        // implicit lock as well (`lock_rec_convert_impl_to_expl` takes
        // whoever `lock_clust_rec_some_has_impl` names), where a later
        // version leaves it implicit, and takes it for a record-only lock
        // asked for.
        if matches!(kind, RecKind::NextKey | RecKind::RecNotGap | RecKind::Gap) {
            if let RecKey::Key(k) = &key {
                if let Some(holder) = self.implicit_holder(pager, table, index, k, rec)? {
                    if holder == self.trx && self.locks.own_implicit_suffices {
                        if kind == RecKind::RecNotGap {
                            return Ok(None);
                        }
                        return Ok(self.request(table.id, index, key, mode, kind));
                    }
                    let target = Target::Record {
                        table: table.id,
                        index: index.id,
                        key: key.clone(),
                    };
                    self.locks.convert_implicit(holder, &target, self.now_us);
                }
            }
        }
        Ok(self.request(table.id, index, key, mode, kind))
    }

    /// [`LockCtx::record`] for a request that covers no record (a gap or
    /// an insert intention): implicit locks never conflict with it.
    pub fn gap(
        &mut self,
        table: u64,
        index: &Index,
        key: RecKey,
        mode: RecMode,
        kind: RecKind,
    ) -> Option<LockId> {
        debug_assert!(matches!(kind, RecKind::Gap | RecKind::InsertIntention));
        self.request(table, index, key, mode, kind)
    }

    /// An X record-only lock for a change of a secondary entry whose row
    /// the transaction has changed already (`lock_sec_rec_modify_check_and_lock`):
    /// no implicit lock is made explicit first.
    pub fn modify(&mut self, table: u64, index: &Index, key: RecKey) -> Option<LockId> {
        self.request(table, index, key, RecMode::X, RecKind::RecNotGap)
    }

    fn request(
        &mut self,
        table: u64,
        index: &Index,
        key: RecKey,
        mode: RecMode,
        kind: RecKind,
    ) -> Option<LockId> {
        let target = Target::Record {
            table,
            index: index.id,
            key,
        };
        // A request that would wait is not made by a scan handing its rows
        // over first (`yield_waits`) or by SKIP LOCKED and semi-consistent
        // reads (`skip_locked`); a read is never both.
        if (self.yield_waits || self.skip_locked)
            && self
                .locks
                .would_wait(self.trx, &target, Mode::Record(mode, kind))
        {
            if self.yield_waits {
                self.yielded = true;
            } else {
                self.skipped = true;
            }
            return None;
        }
        match self
            .locks
            .request(self.trx, target, Mode::Record(mode, kind), self.now_us)
        {
            Request::Granted => None,
            Request::Waiting(id) => Some(id),
        }
    }

    /// The active transaction (ours included) whose implicit lock covers
    /// the record with key `key` in `index`, if any: a clustered record is
    /// implicitly locked by its DB_TRX_ID while that transaction is active
    /// (`lock_clust_rec_some_has_impl`); a secondary entry by the active
    /// transaction that last changed its row if that transaction made the
    /// entry what it is (inserted it, or set or cleared its delete mark),
    /// as `row_vers_impl_x_locked` decides ([`super::sec_implicit_holder`]).
    /// "Changed the row" alone would give it locks it never had: a
    /// reader that locked the entry before the change would conflict.
    fn implicit_holder(
        &self,
        pager: &mut Pager,
        table: &Table,
        index: &Index,
        key: &Key,
        rec: Option<&[u8]>,
    ) -> Result<Option<TrxId>> {
        if index.id != table.clustered.id {
            let Some(sec) = table.secondary.iter().find(|s| s.index.id == index.id) else {
                return Ok(None);
            };
            let found;
            let entry = match rec {
                Some(r) => r,
                None => match btree::get(pager, index, &btree::key_refs(key))? {
                    Some(f) => {
                        found = f;
                        &found.rec[..]
                    }
                    None => return Ok(None),
                },
            };
            return super::sec_implicit_holder(pager, table, sec, entry, None, &self.active);
        }
        let holder = match rec {
            Some(r) => super::trx_id_of(table, r)?,
            None => match btree::get(pager, index, &btree::key_refs(key))? {
                Some(found) => super::trx_id_of(table, &found.rec)?,
                None => return Ok(None),
            },
        };
        Ok((holder == self.trx || self.active.binary_search(&holder).is_ok()).then_some(holder))
    }

    /// Whether a locking read passes the clustered record `rec` without a
    /// lock: a later version's rule
    /// ([`crate::LaterRule::ReadCommittedSkipsCommittedDeletes`]) under
    /// READ COMMITTED and READ UNCOMMITTED (no gap locks) for a record
    /// delete-marked by a transaction that has committed.
    pub fn passes_committed_delete(&self, table: &Table, rec: &[u8]) -> Result<bool> {
        if !self.locks.skip_committed_deletes || self.gaps || !crate::record::is_deleted(rec) {
            return Ok(false);
        }
        let marker = super::trx_id_of(table, rec)?;
        Ok(marker != self.trx && self.active.binary_search(&marker).is_err())
    }

    /// [`passes_committed_delete`](Self::passes_committed_delete) for an
    /// entry `rec` of secondary index `sec`: delete-marked, and no
    /// transaction still active (this one included) holds an implicit lock
    /// on it, so that the delete that marked it has committed. MariaDB
    /// 10.11.14 passes such an entry under READ COMMITTED without waiting
    /// for another transaction's lock on it.
    pub fn passes_committed_entry(
        &self,
        pager: &mut Pager,
        table: &Table,
        sec: &super::Secondary,
        rec: &[u8],
    ) -> Result<bool> {
        if !self.locks.skip_committed_deletes || self.gaps || !crate::record::is_deleted(rec) {
            return Ok(false);
        }
        let mut active = self.active.clone();
        if let Err(at) = active.binary_search(&self.trx) {
            active.insert(at, self.trx);
        }
        Ok(super::sec_implicit_holder(pager, table, sec, rec, None, &active)?.is_none())
    }
}

/// The position of the first record (delete-marked or not) whose key is
/// greater than `key`, or the supremum.
pub fn successor(pager: &mut Pager, index: &Index, key: &Key) -> Result<RecKey> {
    let mut cur = Cursor::new(
        Bound::Excluded(key.clone()),
        Bound::Unbounded,
        Direction::Forward,
    );
    match cur.next(pager, index)? {
        Some(rec) => Ok(RecKey::Key(btree::lock_key(
            index,
            btree::key_of(index, 0, &rec)?,
        ))),
        None => Ok(RecKey::Supremum),
    }
}

/// The insert intention check before `key` goes into `index`: waits if
/// another transaction locks the gap the key falls into. Returns the
/// successor (for gap inheritance after the insert; `None` when no lock in
/// the index covers a gap, so there is nothing to check or inherit) and
/// the wait, if any.
pub fn insert_check(
    ctx: &mut LockCtx<'_>,
    pager: &mut Pager,
    table: u64,
    index: &Index,
    key: &Key,
) -> Result<(Option<RecKey>, Option<LockId>)> {
    // The `insert-skips-gap-check` canary's fast path takes "few" for
    // "none".
    let few = if ctx.locks.canaries.skip_gap_check {
        1000
    } else {
        1
    };
    if ctx.locks.index_locks(table, index.id).1 < few {
        return Ok((None, None));
    }
    let next = successor(pager, index, key)?;
    let wait = ctx.gap(
        table,
        index,
        next.clone(),
        RecMode::X,
        RecKind::InsertIntention,
    );
    Ok((Some(next), wait))
}

/// A record removed from an index (purged, or its insert rolled back):
/// the locks on it move to its successor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The table's id.
    pub table: u64,
    /// The index's id.
    pub index: u64,
    /// The removed record's key.
    pub key: Key,
}

/// Hands the locks of removed records to their successors as gap locks
/// (`lock_update_delete`). Returns the transactions whose waits ended.
pub fn inherit_removed(
    pager: &mut Pager,
    tables: &super::Tables,
    locks: &mut LockSys,
    removed: &[Removed],
    now_us: u64,
) -> Result<Vec<TrxId>> {
    let mut woken = Vec::new();
    for r in removed {
        let target = Target::Record {
            table: r.table,
            index: r.index,
            key: RecKey::Key(r.key.clone()),
        };
        if !locks.has_queue(&target) {
            continue;
        }
        let Some(table) = tables.get(&r.table) else {
            continue;
        };
        let index = if table.clustered.id == r.index {
            &table.clustered
        } else if let Some(s) = table.secondary.iter().find(|s| s.index.id == r.index) {
            &s.index
        } else {
            continue;
        };
        let heir = if locks.canaries.inherit_to_supremum {
            RecKey::Supremum
        } else {
            successor(pager, index, &r.key)?
        };
        woken.extend(locks.inherit_to_gap(r.table, r.index, &r.key, heir, now_us));
    }
    Ok(woken)
}
