//! Lock requests: whether a transaction already holds what it asks for
//! (`lock_rec_has_expl`, `lock_table_has`), which request ahead of it in
//! the queue it must wait for (`lock_rec_other_has_conflicting`), and
//! where a granted or waiting request joins the queue. Also the locks made
//! without a request: inherited gap locks, and implicit locks made
//! explicit (`lock_rec_convert_impl_to_expl`).

use super::*;

impl LockSys {
    /// Whether `trx` already holds a granted lock covering `mode` on
    /// `target` (`lock_rec_has_expl`, `lock_table_has`).
    pub fn holds(&self, trx: TrxId, target: &Target, mode: Mode) -> bool {
        let Some(queue) = self.queues.get(target) else {
            return false;
        };
        queue.iter().any(|id| {
            let l = &self.locks[id];
            l.trx == trx
                && !l.waiting
                && match (l.mode, mode) {
                    (Mode::Table(a), Mode::Table(b)) => a.covers(b),
                    (Mode::Record(am, ak), Mode::Record(bm, bk)) => am.covers(bm) && ak.covers(bk),
                    _ => false,
                }
        })
    }

    /// Whether a request of `mode` by `trx` on `target` would have to wait
    /// (`lock_rec_other_has_conflicting`), without making one.
    pub fn would_wait(&self, trx: TrxId, target: &Target, mode: Mode) -> bool {
        let mode = normalize(target, mode);
        !self.holds(trx, target, mode) && self.conflict_ahead(trx, target, mode, None).is_some()
    }

    /// Whether a request of `mode` by `trx` on `target`, placed after the
    /// first `ahead` entries of the queue, must wait; and for which lock.
    pub(super) fn conflict_ahead(
        &self,
        trx: TrxId,
        target: &Target,
        mode: Mode,
        ahead: Option<usize>,
    ) -> Option<LockId> {
        let queue = self.queues.get(target)?;
        let n = ahead.unwrap_or(queue.len());
        // An insert intention passes no waiter (MariaDB 10.11.14 still
        // deadlocks an insert into the gap of a waiting next-key request
        // that waits for the inserter: default seeds 264 and 503).
        let bypass = ahead.is_none() && self.may_bypass(trx, queue, mode);
        queue[..n]
            .iter()
            .find(|id| {
                let l = &self.locks[id];
                l.trx != trx
                    && has_to_wait(mode, l.mode)
                    && !(bypass && self.waits_for_holder(l, trx, queue))
            })
            .copied()
    }

    /// Whether the later version lets `trx`'s request of `mode` pass
    /// waiting requests in `queue` ([`LockSys::bypass_waiters`]): a record
    /// lock other than an insert intention, by a transaction that holds a
    /// granted lock there of the same strength or stronger (an S or X
    /// lock, whatever gap it covers). MariaDB 10.11.14: holding X on a
    /// row, a LOCK IN SHARE MODE or FOR UPDATE range read over it passes
    /// the X request waiting there; holding S, a FOR UPDATE does not, and
    /// the two transactions deadlock (compressed seed 1110).
    fn may_bypass(&self, trx: TrxId, queue: &[LockId], mode: Mode) -> bool {
        let Mode::Record(m, kind) = mode else {
            return false;
        };
        self.bypass_waiters
            && kind != RecKind::InsertIntention
            && queue.iter().any(|g| {
                let g = &self.locks[g];
                g.trx == trx && !g.waiting && matches!(g.mode, Mode::Record(h, _) if h.covers(m))
            })
    }

    /// Whether `waiter` is a waiting request in `queue` that waits for a
    /// granted lock of `holder` there (what a later version lets `holder`'s
    /// new request pass: [`LockSys::bypass_waiters`]).
    fn waits_for_holder(&self, waiter: &Lock, holder: TrxId, queue: &[LockId]) -> bool {
        waiter.waiting
            && queue.iter().any(|g| {
                let g = &self.locks[g];
                g.trx == holder && !g.waiting && has_to_wait(waiter.mode, g.mode)
            })
    }

    /// Where a request of `mode` by `trx` granted without waiting goes in
    /// `target`'s queue: at its end, or with the later version's bypass
    /// ([`LockSys::bypass_waiters`]) ahead of the first waiting request it
    /// passed, which then waits for it too.
    fn granted_place(&self, trx: TrxId, target: &Target, mode: Mode) -> Option<usize> {
        let queue = self.queues.get(target)?;
        if !self.may_bypass(trx, queue, mode) {
            return None;
        }
        queue.iter().position(|id| {
            let l = &self.locks[id];
            l.trx != trx && has_to_wait(mode, l.mode) && self.waits_for_holder(l, trx, queue)
        })
    }

    /// Requests a lock for `trx`. Granted at once when the transaction
    /// already holds one as strong, or when nothing in the queue conflicts;
    /// otherwise queued as waiting (the caller then runs
    /// [`deadlock_check`](Self::deadlock_check)). An insert intention that
    /// need not wait is not kept, as in InnoDB.
    pub fn request(&mut self, trx: TrxId, target: Target, mode: Mode, now_us: u64) -> Request {
        let mode = normalize(&target, mode);
        if mode != Mode::Record(RecMode::X, RecKind::InsertIntention)
            && mode != Mode::Record(RecMode::S, RecKind::InsertIntention)
            && self.holds(trx, &target, mode)
        {
            return Request::Granted;
        }
        let conflict = if self.canaries.grant_conflicting && matches!(mode, Mode::Record(..)) {
            None
        } else {
            self.conflict_ahead(trx, &target, mode, None)
        };
        let is_ii = matches!(mode, Mode::Record(_, RecKind::InsertIntention));
        let id = self.next_id;
        self.next_id += 1;
        if conflict.is_none() && is_ii {
            if self.log_events {
                let lock = Lock {
                    id,
                    trx,
                    target,
                    mode,
                    waiting: false,
                    since_us: now_us,
                };
                self.record_owned(now_us, EventKind::InsertChecked, lock);
            }
            return Request::Granted;
        }
        self.new_struct(trx, &target, mode, conflict.is_some());
        let lock = Lock {
            id,
            trx,
            target: target.clone(),
            mode,
            waiting: conflict.is_some(),
            since_us: now_us,
        };
        self.record(
            now_us,
            if lock.waiting {
                EventKind::Wait
            } else {
                EventKind::Granted
            },
            &lock,
        );
        if lock.waiting {
            self.waits.insert(trx, id);
            if self.one_blocker {
                // `lock_rec_other_has_conflicting` finds the first lock in
                // the way; `lock_table_other_has_incompatible` looks from
                // the newest table lock back.
                let pointed = match &target {
                    Target::Table(_) => self.queues.get(&target).and_then(|q| {
                        q.iter().rev().copied().find(|x| {
                            let o = &self.locks[x];
                            o.trx != trx && has_to_wait(mode, o.mode)
                        })
                    }),
                    Target::Record { .. } => conflict,
                };
                if let Some(c) = pointed {
                    self.wait_trx.insert(trx, self.locks[&c].trx);
                }
            }
        }
        let place = match conflict {
            None => self.granted_place(trx, &target, mode),
            Some(_) => None,
        };
        let queue = self.queues.entry(target).or_default();
        match place {
            Some(at) => queue.insert(at, id),
            None => queue.push(id),
        }
        self.by_trx.entry(trx).or_default().push(id);
        self.count(&lock, 1);
        self.locks.insert(id, lock);
        match conflict {
            None => Request::Granted,
            Some(_) => Request::Waiting(id),
        }
    }

    /// Adds a granted lock without checking conflicts: inheritance, which
    /// only ever adds gap locks (and gap locks never conflict with what a
    /// queue may already hold).
    pub(super) fn add_granted(&mut self, trx: TrxId, target: Target, mode: Mode, now_us: u64) {
        if self.holds(trx, &target, mode) {
            return;
        }
        self.new_struct(trx, &target, mode, false);
        let id = self.next_id;
        self.next_id += 1;
        let lock = Lock {
            id,
            trx,
            target: target.clone(),
            mode,
            waiting: false,
            since_us: now_us,
        };
        self.record(now_us, EventKind::Inherited, &lock);
        self.queues.entry(target).or_default().push(id);
        self.by_trx.entry(trx).or_default().push(id);
        self.count(&lock, 1);
        self.locks.insert(id, lock);
    }

    /// Makes explicit the implicit X lock `holder` has on the record at
    /// `target` because its DB_TRX_ID names it
    /// (`lock_rec_convert_impl_to_expl`): a granted X record-only lock,
    /// unless it already holds one as strong. Nothing can conflict with
    /// it: every other transaction that locked the record converted first.
    pub fn convert_implicit(&mut self, holder: TrxId, target: &Target, now_us: u64) {
        let mode = Mode::Record(RecMode::X, RecKind::RecNotGap);
        if self.holds(holder, target, mode) {
            return;
        }
        self.new_struct(holder, target, mode, false);
        let id = self.next_id;
        self.next_id += 1;
        let lock = Lock {
            id,
            trx: holder,
            target: target.clone(),
            mode,
            waiting: false,
            since_us: now_us,
        };
        self.record(now_us, EventKind::Converted, &lock);
        self.queues.entry(target.clone()).or_default().push(id);
        self.by_trx.entry(holder).or_default().push(id);
        self.count(&lock, 1);
        self.locks.insert(id, lock);
    }
}
