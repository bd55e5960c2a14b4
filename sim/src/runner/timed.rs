//! Time-driven scheduling (discrete events): which session steps next,
//! and when, where the plan says so ([`crate::plan::Plan::timed`]).
//!
//! Each session keeps its own time: when its next statement comes (its
//! last one's end plus a think time), or, while it waits for a lock, none
//! until the wait ends. A step is one engine call, made at once at the
//! time it begins; the storage charges the I/O it does to the step and not
//! to the clock ([`crate::storage::SimStorage::set_timeline`]), a sync
//! waiting for the device to finish the sync before it, so the step ends
//! that much later and the session's next statement comes after that. The
//! next event is always the earliest: a session's next statement, the
//! deadline of a lock wait, a waiter's grant (at the end of the step that
//! granted it), or a group commit's sync (when the device is free, so that
//! every commit written until then joins it). Ties break by the seeded
//! generator, so a run stays a pure function of its seed.
//!
//! A step begins at its event's time, and the scheduler records it as a
//! turn whose think time is the clock's advance to it
//! ([`crate::schedule::Turn`]): replaying the turns gives the same steps at
//! the same times without this module. Steps are atomic in the engine: a
//! statement's changes and lock releases take effect at the time it
//! begins, and another session's step inside its span sees them; what a
//! statement's span holds back is its own session's next statement.

use super::{Sess, World};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The time-driven scheduler's own state.
#[derive(Debug, Default)]
pub(super) struct Timed {
    /// The sessions stepped in the turn under way and the time it began.
    stepped: Vec<usize>,
    began_us: u64,
    /// When the latest step ended (the workload's end).
    pub end_us: u64,
}

/// The next event a free-running (unrecorded) turn makes: its session, its
/// time, and whether it is the deadline of that session's lock wait
/// (which the runner's resumption of due waits handles: the turn itself
/// then steps nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Event {
    pub session: usize,
    pub at_us: u64,
    pub deadline: bool,
}

impl Timed {
    /// Notes that session `i` steps in the turn beginning at `now_us`.
    pub(super) fn stepping(&mut self, i: usize, now_us: u64) {
        if self.stepped.is_empty() {
            self.began_us = now_us;
        }
        if !self.stepped.contains(&i) {
            self.stepped.push(i);
        }
    }

    /// Settles the turn just made: what its steps spent on the storage
    /// moves each stepped session's next statement (after a think time
    /// drawn up to `think_max_us`); a session left waiting for a lock has
    /// none until the wait ends; a commit left waiting for its group's
    /// sync comes when the device is free; and every waiter whose wait
    /// ended in the turn (granted, or chosen as a deadlock victim) goes on
    /// when the turn's steps end.
    pub(super) fn settle(
        &mut self,
        world: &mut World,
        sessions: &mut [Sess],
        rng: &mut ChaCha8Rng,
        think_max_us: u64,
    ) {
        let spent = world.storage.take_spent_us();
        let stepped = std::mem::take(&mut self.stepped);
        if stepped.is_empty() && spent == 0 {
            return;
        }
        let end = self.began_us + spent;
        self.end_us = self.end_us.max(end);
        let device_free = world.storage.device_free_us();
        for &i in &stepped {
            let s = &mut sessions[i];
            s.ready_us = if !s.waiting {
                Some(end + rng.gen_range(0..think_max_us.max(1)))
            } else if s.txn.as_ref().is_some_and(|t| t.commit_written.is_some()) {
                // A group's sync starts when the device is free: every
                // commit written by then joins it.
                Some(end.max(device_free))
            } else {
                None
            };
        }
        for s in sessions.iter_mut() {
            // The engine says whether a wait goes on (a scheduler is no
            // judge; the oracle judges what the engine did).
            let lock_wait = world
                .engine
                .as_ref()
                .is_some_and(|e| s.trx.is_some_and(|t| e.locks().waiting_for(t).is_some()));
            if s.waiting && s.ready_us.is_none() && !lock_wait {
                s.ready_us = Some(
                    if s.txn.as_ref().is_some_and(|t| t.commit_written.is_some()) {
                        end.max(device_free)
                    } else {
                        end
                    },
                );
            }
        }
    }

    /// The earliest event, if any session has one: a session with a
    /// statement to run (an idle one only while transactions remain to
    /// start), or a lock wait's deadline. Ties break by `rng`.
    pub(super) fn next_event(
        &self,
        world: &World,
        sessions: &[Sess],
        more_to_start: bool,
        rng: &mut ChaCha8Rng,
    ) -> Option<Event> {
        let now = world.clock_now();
        let mut best: Vec<Event> = Vec::new();
        for (i, s) in sessions.iter().enumerate() {
            if s.txn.is_none() && !more_to_start {
                continue;
            }
            let event = match s.ready_us {
                Some(at) => Event {
                    session: i,
                    at_us: at.max(now),
                    deadline: false,
                },
                // A lock wait's deadline by the oracle's clock of the wait
                // (so that a timeout the engine fires late is seen late),
                // else by the engine's.
                None => match s.trx.and_then(|t| world.locks.deadline(t)) {
                    Some(d) => Event {
                        session: i,
                        at_us: d.max(now),
                        deadline: true,
                    },
                    None => Event {
                        session: i,
                        at_us: world
                            .engine
                            .as_ref()
                            .and_then(|e| e.wait_deadline_us(s.id))
                            .map_or(now, |d| d.max(now)),
                        deadline: false,
                    },
                },
            };
            match best.first() {
                Some(b) if b.at_us < event.at_us => {}
                Some(b) if b.at_us == event.at_us => best.push(event),
                _ => best = vec![event],
            }
        }
        match best.len() {
            0 => None,
            1 => Some(best[0]),
            n => Some(best[rng.gen_range(0..n)]),
        }
    }
}
