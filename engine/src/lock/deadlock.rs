//! The wait-for graph and the deadlock search over it: the locks a
//! waiting request waits for (INNODB_LOCK_WAITS), InnoDB's depth-first
//! search for a cycle back to the requester (`lock_deadlock_recursive`)
//! and a later version's search along one blocker per wait (MariaDB's
//! `Deadlock::find_cycle`), each choosing the victim by weight.

use super::*;

impl LockSys {
    /// The locks the waiting lock `id` has to wait for: conflicting
    /// requests of other transactions ahead of it in its queue.
    pub fn blockers(&self, id: LockId) -> Vec<LockId> {
        let Some(lock) = self.locks.get(&id) else {
            return Vec::new();
        };
        let Some(queue) = self.queues.get(&lock.target) else {
            return Vec::new();
        };
        let pos = queue.iter().position(|&x| x == id).unwrap_or(queue.len());
        queue[..pos]
            .iter()
            .filter(|x| {
                let other = &self.locks[x];
                other.trx != lock.trx && has_to_wait(lock.mode, other.mode)
            })
            .copied()
            .collect()
    }

    /// Every wait-for edge (INNODB_LOCK_WAITS), by waiting transaction.
    pub fn wait_edges(&self) -> Vec<WaitEdge> {
        let mut out = Vec::new();
        for (&trx, &id) in &self.waits {
            for b in self.blockers(id) {
                out.push(WaitEdge {
                    requesting_trx: trx,
                    requested_lock: id,
                    blocking_trx: self.locks[&b].trx,
                    blocking_lock: b,
                });
            }
        }
        out
    }

    /// Searches the wait-for graph from `requester` (which has just been
    /// queued to wait) for a cycle back to it, and picks the victim by
    /// InnoDB's rule. `undo_records` gives a transaction's undo record
    /// count; its weight adds the locks it holds or waits for.
    pub fn deadlock_check(
        &self,
        requester: TrxId,
        undo_records: &dyn Fn(TrxId) -> u64,
    ) -> Deadlock {
        if self.canaries.skip_deadlock_detection {
            return Deadlock::None;
        }
        let weight = |t: TrxId| undo_records(t) + self.lock_structs(t) as u64;
        if self.one_blocker {
            return self.deadlock_one_blocker(requester, &weight);
        }
        let mut steps = 0usize;
        // Depth-first, iterative: a stack of (transaction, its blockers, next index).
        let Some(&start_lock) = self.waits.get(&requester) else {
            return Deadlock::None;
        };
        let mut visited: std::collections::BTreeSet<TrxId> = std::collections::BTreeSet::new();
        let mut stack: Vec<(TrxId, Vec<LockId>, usize)> =
            vec![(requester, self.blockers(start_lock), 0)];
        while let Some((trx, blockers, next)) = stack.last_mut() {
            let waiter = *trx;
            let Some(&b) = blockers.get(*next) else {
                stack.pop();
                continue;
            };
            *next += 1;
            steps += 1;
            if steps > MAX_STEPS || stack.len() > MAX_DEPTH {
                return Deadlock::Requester;
            }
            let holder = self.locks[&b].trx;
            if holder == requester {
                // `waiter` waits for the requester: the cycle is closed.
                let (wr, ww) = (weight(requester), weight(waiter));
                let requester_lighter_or_tie = if self.canaries.wrong_victim {
                    wr > ww
                } else {
                    ww >= wr
                };
                return if requester_lighter_or_tie || waiter == requester {
                    Deadlock::Requester
                } else {
                    Deadlock::Other(waiter)
                };
            }
            if !visited.insert(holder) {
                continue;
            }
            if let Some(&w) = self.waits.get(&holder) {
                stack.push((holder, self.blockers(w), 0));
            }
        }
        Deadlock::None
    }

    /// A later version's deadlock search
    /// ([`crate::LaterRule::DeadlockSearchOneBlocker`], MariaDB 10.6's
    /// `Deadlock::find_cycle` and `Deadlock::report`): Brent's cycle
    /// detection along the one transaction each wait points at, from the
    /// requester; on a cycle, the victim is the lightest transaction on it
    /// (weight doubled, plus one for any but the requester, so that the
    /// requester loses a tie; among others, the first met from where the
    /// cycle was found).
    fn deadlock_one_blocker(&self, requester: TrxId, weight: &dyn Fn(TrxId) -> u64) -> Deadlock {
        let (mut tortoise, mut hare) = (requester, requester);
        let (mut power, mut l) = (1u64, 1u64);
        let cycle = loop {
            let Some(&next) = self.wait_trx.get(&hare) else {
                return Deadlock::None;
            };
            hare = next;
            if tortoise == hare {
                break hare;
            }
            if l == power {
                power <<= 1;
                l = 0;
                tortoise = hare;
            }
            l += 1;
        };
        let key = |t: TrxId| (weight(t) << 1) | u64::from(t != requester);
        let (mut victim, mut least) = (cycle, key(cycle));
        let mut next = cycle;
        loop {
            next = self.wait_trx[&next];
            let k = key(next);
            if k < least {
                victim = next;
                least = k;
            }
            if next == cycle {
                break;
            }
        }
        if victim == requester {
            Deadlock::Requester
        } else {
            Deadlock::Other(victim)
        }
    }
}
