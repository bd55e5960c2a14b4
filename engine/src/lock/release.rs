//! Releases and the grants they make: a transaction's locks let go at its
//! end, after a savepoint (a canary) or, under READ COMMITTED, a row at a
//! time (`row_unlock_for_mysql`); a waiting request withdrawn; and the
//! waiters each release lets go, in queue order
//! (`lock_rec_dequeue_from_page`).

use super::*;

impl LockSys {
    /// Removes a lock from every index; returns it.
    pub(super) fn remove(&mut self, id: LockId) -> Option<Lock> {
        self.remove_inner(id, true)
    }

    /// [`LockSys::remove`], leaving the transaction's lock list alone when
    /// `unlist` is false (the caller drops the whole list).
    fn remove_inner(&mut self, id: LockId, unlist: bool) -> Option<Lock> {
        let lock = self.locks.remove(&id)?;
        self.granted_after_wait.remove(&id);
        self.count(&lock, -1);
        if let Some(q) = self.queues.get_mut(&lock.target) {
            q.retain(|&x| x != id);
            if q.is_empty() {
                self.queues.remove(&lock.target);
            }
        }
        if unlist {
            if let Some(v) = self.by_trx.get_mut(&lock.trx) {
                v.retain(|&x| x != id);
                if v.is_empty() {
                    self.by_trx.remove(&lock.trx);
                }
            }
        }
        if self.waits.get(&lock.trx) == Some(&id) {
            self.waits.remove(&lock.trx);
            self.wait_trx.remove(&lock.trx);
        }
        Some(lock)
    }

    /// Grants, in queue order, the waiting requests on `target` that no
    /// earlier request conflicts with (`lock_rec_dequeue_from_page`'s
    /// second half). Returns the transactions granted.
    pub(super) fn grant_waiters(&mut self, target: &Target, now_us: u64) -> Vec<TrxId> {
        let mut granted = Vec::new();
        if !self.has_waiter(target) {
            return granted;
        }
        let queue = self.queues[target].clone();
        let mut skipped_one = false;
        for id in &queue {
            let Some(l) = self.locks.get(id) else {
                continue;
            };
            if !l.waiting {
                continue;
            }
            // Granted insert intentions leave the queue: count positions
            // in the queue as it is now.
            let Some(pos) = self
                .queues
                .get(target)
                .and_then(|q| q.iter().position(|x| x == id))
            else {
                continue;
            };
            if let Some(c) = self.conflict_ahead(l.trx, target, l.mode, Some(pos)) {
                if self.one_blocker {
                    // Still in the way of something: pointed at it
                    // (`lock_rec_grant_by_heap_no`).
                    let (waiter, holder) = (l.trx, self.locks[&c].trx);
                    self.wait_trx.insert(waiter, holder);
                }
                continue;
            }
            if self.canaries.lose_wakeup && !skipped_one {
                skipped_one = true;
                continue;
            }
            let trx = l.trx;
            let lock = self.locks.get_mut(id).expect("queued lock exists");
            lock.waiting = false;
            let lock = lock.clone();
            if self.keep_waited {
                self.granted_after_wait.insert(lock.id);
            }
            self.waits.remove(&trx);
            self.wait_trx.remove(&trx);
            // Its struct, granted, is one a later lock of its kind may
            // set a bit in.
            if let (Some(k), Some(s)) = (
                struct_kind(&lock.target, lock.mode),
                self.structs.get_mut(&trx),
            ) {
                s.similar.insert(k);
            }
            self.record(now_us, EventKind::GrantedAfterWait, &lock);
            if matches!(lock.mode, Mode::Record(_, RecKind::InsertIntention)) {
                // A granted insert intention is a wake-up, not a lock to
                // keep (InnoDB keeps none once an insert may go): the
                // insert checks the gap again, against every lock on it,
                // including gap locks granted while it waited.
                self.remove(*id);
            }
            granted.push(trx);
        }
        granted
    }

    /// Releases every lock of `trx` (commit or rollback) and grants the
    /// waiters that can go. Returns the transactions granted.
    pub fn release_all(&mut self, trx: TrxId, now_us: u64) -> Vec<TrxId> {
        self.gapless.remove(&trx);
        self.structs.remove(&trx);
        let ids = self.by_trx.remove(&trx).unwrap_or_default();
        // Only queues left with a waiter can grant anything; they are
        // visited in target order, as before (sorting every released
        // target cost more than the release).
        let mut targets = Vec::new();
        for id in ids {
            if let Some(lock) = self.remove_inner(id, false) {
                let kind = if lock.waiting {
                    EventKind::Cancelled
                } else {
                    EventKind::Released
                };
                if self.has_waiter(&lock.target) {
                    targets.push(lock.target.clone());
                }
                self.record_owned(now_us, kind, lock);
            }
        }
        self.grant_on(targets, now_us)
    }

    /// Grants the waiters that can go on each of `targets` (visited in
    /// target order, each once). Returns the transactions granted.
    fn grant_on(&mut self, mut targets: Vec<Target>, now_us: u64) -> Vec<TrxId> {
        targets.sort();
        targets.dedup();
        let mut granted = Vec::new();
        for t in &targets {
            granted.extend(self.grant_waiters(t, now_us));
        }
        granted
    }

    /// The id the next lock request will get: lock ids grow with every
    /// request, so a savepoint can name the locks taken after it.
    pub fn next_lock_id(&self) -> LockId {
        self.next_id
    }

    /// Releases the granted record locks of `trx` with ids from `first`
    /// on, and grants the waiters that can go. Only the
    /// `savepoint-rollback-releases-locks` canary calls this: InnoDB keeps
    /// a transaction's locks until it ends.
    pub fn release_since(&mut self, trx: TrxId, first: LockId, now_us: u64) -> Vec<TrxId> {
        let ids: Vec<LockId> =
            self.by_trx
                .get(&trx)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&id| {
                    id >= first
                        && self.locks.get(&id).is_some_and(|l| {
                            !l.waiting && matches!(l.target, Target::Record { .. })
                        })
                })
                .collect();
        let mut targets = Vec::new();
        for id in ids {
            if let Some(lock) = self.remove(id) {
                targets.push(lock.target.clone());
                self.record_owned(now_us, EventKind::Released, lock);
            }
        }
        self.grant_on(targets, now_us)
    }

    /// How many locks `trx` holds or waits for.
    pub fn held_count(&self, trx: TrxId) -> usize {
        self.by_trx.get(&trx).map_or(0, |ids| ids.len())
    }

    /// Releases, on each of `targets`, the newest granted record lock of
    /// `trx` in `mode` (S or X, of any gap kind) with an id from `first`
    /// on (taken during the current statement), and grants the waiters
    /// that can go: READ COMMITTED's release of the rows an UPDATE or
    /// DELETE read but does not change (`row_unlock_for_mysql`), which
    /// lets go of one lock a record: `lock_rec_unlock` resets the record's
    /// bit in the last lock of the transaction's in its queue whose mode
    /// is the read's. Of a record lock the statement took and a gap lock
    /// inherited onto the record after it (from a record purge removed
    /// before it), the later goes.
    pub fn release_records(
        &mut self,
        trx: TrxId,
        targets: &[Target],
        mode: RecMode,
        first: LockId,
        now_us: u64,
    ) -> Vec<TrxId> {
        let mut newest: BTreeMap<&Target, LockId> = BTreeMap::new();
        for &id in self.by_trx.get(&trx).into_iter().flatten() {
            let Some(l) = self.locks.get(&id) else {
                continue;
            };
            let in_mode = matches!(l.mode, Mode::Record(m, _) if m == mode);
            if self.granted_after_wait.contains(&id) {
                // The later rule: the wait's lock is not the statement's
                // new lock (MariaDB's sel_set_rec_lock returns DB_SUCCESS,
                // not DB_SUCCESS_LOCKED_REC, once it is granted).
                continue;
            }
            if id >= first && in_mode && !l.waiting && targets.contains(&l.target) {
                let e = newest.entry(&l.target).or_insert(id);
                *e = (*e).max(id);
            }
        }
        let ids: Vec<LockId> = newest.into_values().collect();
        let mut freed = Vec::new();
        for id in ids {
            if let Some(lock) = self.remove(id) {
                freed.push(lock.target.clone());
                self.record_owned(now_us, EventKind::Released, lock);
            }
        }
        self.grant_on(freed, now_us)
    }

    /// Withdraws the waiting request of `trx`, if any, recording why, and
    /// grants the waiters that can go now. Returns the transactions
    /// granted.
    pub fn cancel_wait(&mut self, trx: TrxId, why: EventKind, now_us: u64) -> Vec<TrxId> {
        let Some(id) = self.waits.get(&trx).copied() else {
            return Vec::new();
        };
        let lock = self.remove(id).expect("a waiting lock exists");
        if why == EventKind::Cancelled {
            self.struct_granted(&lock);
        }
        if matches!(why, EventKind::TimedOut | EventKind::Victim) {
            // Dequeued, its struct with it (`lock_cancel_waiting_and_release`).
            // A NOWAIT request given up keeps its struct, as a wait ended
            // by its record's removal does (`lock_rec_cancel`).
            if let Some(s) = self.structs.get_mut(&trx) {
                if let Some(i) = s.list.iter().rposition(|d| d.waiting) {
                    s.list.remove(i);
                }
            }
        }
        self.record(now_us, why, &lock);
        self.grant_waiters(&lock.target, now_us)
    }
}
