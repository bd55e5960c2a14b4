//! Gap inheritance, the two explicit moves of locks that naming records
//! by key leaves: a record that leaves the index hands its locks to the
//! record after it as gap locks (`lock_rec_inherit_to_gap`), and a record
//! inserted into a locked gap takes a copy of its successor's gap locks
//! (`lock_rec_inherit_to_gap_if_gap_lock`). Which transactions' X locks
//! are not inherited follows the isolation level each last ran at.

use super::*;

impl LockSys {
    /// Notes the isolation level `trx` runs a statement at: under READ
    /// COMMITTED its X locks are not inherited as gap locks, at any other
    /// level they are (1.0.6's `lock_rec_inherit_to_gap` reads the owner's
    /// level when the record leaves); a later version's rule takes READ
    /// UNCOMMITTED's out too.
    pub fn note_isolation(&mut self, trx: TrxId, iso: crate::trx::Isolation) {
        use crate::trx::Isolation::*;
        let not_inherited = match iso {
            ReadCommitted => true,
            ReadUncommitted => self.ru_x_not_inherited,
            RepeatableRead | Serializable => false,
        };
        if not_inherited {
            self.gapless.insert(trx);
        } else {
            self.gapless.remove(&trx);
        }
    }

    /// A record is gone (purged, or its insert rolled back): every lock on
    /// it becomes a gap lock on `heir`, the record after it, except insert
    /// intentions and the X locks of transactions that lock no gaps
    /// (`lock_rec_inherit_to_gap`). The record's own locks are
    /// dropped; waiting requests on it are granted, as the record they
    /// waited for no longer exists (their statements retry and look again).
    pub fn inherit_to_gap(
        &mut self,
        table: u64,
        index: u64,
        gone: &Key,
        heir: RecKey,
        now_us: u64,
    ) -> Vec<TrxId> {
        let from = Target::Record {
            table,
            index,
            key: RecKey::Key(gone.clone()),
        };
        let Some(queue) = self.queues.get(&from).cloned() else {
            return Vec::new();
        };
        let to = Target::Record {
            table,
            index,
            key: heir,
        };
        let mut woken = Vec::new();
        for id in queue {
            let lock = self.locks[&id].clone();
            // Every lock on the record, a waiting one too (so the gap it
            // was about to lock stays closed to inserts), becomes a
            // granted gap lock on the heir (lock_rec_inherit_to_gap looks
            // at no LOCK_WAIT flag), except insert intentions and the X
            // locks of a transaction at READ COMMITTED (an UPDATE's or
            // DELETE's; `LockSys::note_isolation`); its S locks, a
            // duplicate check's, are inherited.
            if let Mode::Record(m, k) = lock.mode {
                let gapless_x = m == RecMode::X && self.gapless.contains(&lock.trx);
                if k != RecKind::InsertIntention && !gapless_x {
                    self.add_granted(
                        lock.trx,
                        to.clone(),
                        normalize(&to, Mode::Record(m, RecKind::Gap)),
                        now_us,
                    );
                }
            }
            self.remove(id);
            if lock.waiting {
                // The wait ends (lock_rec_reset_and_release_wait), the
                // statement going on from where it stood. Its struct
                // stays, granted now (`lock_rec_cancel` clears LOCK_WAIT):
                // a later lock of its kind sets a bit in it (default seed
                // 1462, where innosim made a second one).
                self.struct_granted(&lock);
                self.record(now_us, EventKind::Cancelled, &lock);
                woken.push(lock.trx);
            } else {
                self.record(now_us, EventKind::Released, &lock);
            }
        }
        woken
    }

    /// A record was inserted before `successor`: it takes a gap lock for
    /// each gap or next-key lock on the successor (not insert intentions),
    /// so the gap before it stays locked (`lock_rec_inherit_to_gap_if_gap_lock`).
    pub fn inherit_gap_on_insert(
        &mut self,
        table: u64,
        index: u64,
        inserted: &Key,
        successor: &RecKey,
        now_us: u64,
    ) {
        let from = Target::Record {
            table,
            index,
            key: successor.clone(),
        };
        let Some(queue) = self.queues.get(&from).cloned() else {
            return;
        };
        let to = Target::Record {
            table,
            index,
            key: RecKey::Key(inserted.clone()),
        };
        for id in queue {
            let lock = self.locks[&id].clone();
            if lock.waiting {
                continue;
            }
            if let Mode::Record(m, k) = lock.mode {
                if matches!(k, RecKind::NextKey | RecKind::Gap) {
                    self.add_granted(lock.trx, to.clone(), Mode::Record(m, RecKind::Gap), now_us);
                }
            }
        }
    }
}
