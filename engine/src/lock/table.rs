//! Locks by id. Ids are handed out in increasing order and every lock
//! is inserted under the newest id, so the table is a deque of slots
//! from the oldest id still in use: a lookup is an index, a removal leaves
//! a hole, and the front is trimmed as holes reach it. Iteration is in id
//! order, as with the ordered map this replaces (a release's removals
//! from that map were a visible share of every campaign).

use super::{Lock, LockId};
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub(super) struct LockTable {
    /// The id of `slots[0]`.
    base: LockId,
    slots: VecDeque<Option<Lock>>,
}

impl LockTable {
    fn slot(&self, id: LockId) -> Option<usize> {
        let i = usize::try_from(id.checked_sub(self.base)?).ok()?;
        (i < self.slots.len()).then_some(i)
    }

    pub(super) fn get(&self, id: &LockId) -> Option<&Lock> {
        self.slots.get(self.slot(*id)?)?.as_ref()
    }

    pub(super) fn get_mut(&mut self, id: &LockId) -> Option<&mut Lock> {
        let i = self.slot(*id)?;
        self.slots.get_mut(i)?.as_mut()
    }

    /// Inserts a lock under an id newer than every id inserted before.
    ///
    /// # Panics
    ///
    /// If `id` is not newer: the lock system hands ids out in order.
    pub(super) fn insert(&mut self, id: LockId, lock: Lock) {
        if self.slots.is_empty() {
            self.base = id;
        }
        let next = self.base + self.slots.len() as LockId;
        assert!(id >= next, "lock id {id} inserted after {next}");
        for _ in next..id {
            self.slots.push_back(None);
        }
        self.slots.push_back(Some(lock));
    }

    pub(super) fn remove(&mut self, id: &LockId) -> Option<Lock> {
        let i = self.slot(*id)?;
        let lock = self.slots[i].take();
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        lock
    }

    /// Every lock, in id order.
    pub(super) fn values(&self) -> impl Iterator<Item = &Lock> {
        self.slots.iter().flatten()
    }
}

impl std::ops::Index<&LockId> for LockTable {
    type Output = Lock;

    fn index(&self, id: &LockId) -> &Lock {
        self.get(id).expect("no lock with this id")
    }
}
