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
//! Around the sessions: the engine's background work runs at each of its
//! deadlines as the clock moves ([`advance`], in every turn, replayed or
//! not); a profile's processor model prices each turn's work from the
//! engine's counters and runs it on the earliest free core before its
//! I/O; clients pause inside a transaction now and then (the profile's
//! `p_long_pause`), so that waits time out; and a session's next step
//! never begins before its last one ended.
//!
//! A step begins at its event's time, and the scheduler records it as a
//! turn whose think time is the clock's advance to it
//! ([`crate::schedule::Turn`]): replaying the turns gives the same steps at
//! the same times without choosing events. Steps are atomic in the engine: a
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
    /// The engine's work counters when the turn began.
    work_before: Work,
    /// When each processor finishes the work it was given.
    cores_free_us: Vec<u64>,
    /// Processor time not yet charged, below one microsecond, in
    /// nanoseconds.
    cpu_remainder_ns: u64,
    /// When the latest step ended (the workload's end).
    pub end_us: u64,
    /// When each session's last turn ended: its next step never begins
    /// before (a grant can come while the waiting statement's own I/O is
    /// still being charged).
    busy_until_us: Vec<u64>,
    /// The plan's bound on a think time between two statements.
    think_max_us: u64,
    /// The chance of a long pause inside a transaction, and its bound
    /// (twice the lock wait timeout).
    long_pause: (f64, u64),
    /// The plan's processor model.
    cpu: crate::profile::CpuModel,
}

/// The engine's counters of the work its calls did, which the processor
/// model prices ([`crate::profile::CpuModel`]).
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    pages: u64,
    compressed_bytes: u64,
    decompressed_bytes: u64,
}

impl Work {
    fn of(world: &World) -> Work {
        let Some(e) = world.engine.as_ref() else {
            return Work::default();
        };
        let pool = e.pager().pool.stats;
        let mut w = Work {
            pages: pool.hits + pool.misses,
            ..Work::default()
        };
        for (size, z) in e.pager().compression.cmp() {
            w.compressed_bytes += z.compress_ops * size as u64;
            w.decompressed_bytes += z.uncompress_ops * size as u64;
        }
        w
    }

    /// The processor time of the work done since `before` and of `calls`
    /// engine calls, in nanoseconds. A counter that went back (a new
    /// engine after a crash) counts nothing.
    fn cost_ns(&self, before: &Work, calls: u64, cpu: &crate::profile::CpuModel) -> u64 {
        let pages = self.pages.saturating_sub(before.pages);
        let zip = self
            .compressed_bytes
            .saturating_sub(before.compressed_bytes);
        let unzip = self
            .decompressed_bytes
            .saturating_sub(before.decompressed_bytes);
        calls * cpu.call_ns
            + pages * cpu.page_ns
            + zip * cpu.compress_ns_per_kib / 1024
            + unzip * cpu.decompress_ns_per_kib / 1024
    }
}

/// The next event a free-running (unrecorded) turn makes: its session, its
/// time, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Event {
    pub session: usize,
    pub at_us: u64,
    pub kind: Kind,
}

/// What an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The session's next step.
    Step,
    /// The deadline of the session's lock wait, which the runner's
    /// resumption of due waits handles: the turn itself steps nothing.
    Deadline,
}

/// Moves the clock `us` forward, running the engine's background work
/// (the once-a-second log flush, the page cleaner, purge) at each of its
/// deadlines on the way, as InnoDB's master thread wakes each second
/// whether or not a client calls: a step-by-step scheduler never let a
/// second pass without a call, an event-driven one jumps over idle time.
/// Every turn of a time-driven run moves the clock so, a replayed one
/// too. The background's I/O occupies the device but delays no session.
/// Returns `Some(crashed)` when the engine stopped in it (the clock then
/// stands where it stopped).
pub(super) fn advance(world: &mut World, us: u64) -> Option<bool> {
    let target = world.clock_now() + us;
    loop {
        let next = match world.engine.as_ref() {
            Some(e) if e.halted().is_none() => e.next_background_us(),
            _ => break,
        };
        if next > target {
            break;
        }
        world.clock.set_us(next.max(world.clock_now()));
        if let Some(c) = tick(world) {
            return Some(c);
        }
    }
    world.clock.set_us(target);
    None
}

/// Runs the engine's background work at the clock's time, judged as a
/// call: its lock events (purge hands removed records' locks on) go to
/// the oracle, its log writes to the durability judge.
fn tick(world: &mut World) -> Option<bool> {
    world.call_start_us = world.clock_now();
    let before = Background::of(world);
    let r = world.engine().tick();
    world.judge_locks();
    world.take_lock_violations();
    let spent = world.storage.take_spent_us();
    match r {
        Ok(()) => {
            world.observe_log();
            // For the timeline: what the round did, as long as its I/O
            // took (it delays no session).
            let now = world.clock_now();
            let done = Background::of(world);
            world.kept_event("background", |_| {
                serde_json::json!({
                    "end_us": now + spent,
                    "pages_flushed": done.pages_flushed.saturating_sub(before.pages_flushed),
                    "checkpoints": done.checkpoints.saturating_sub(before.checkpoints),
                    "log_syncs": done.log_syncs.saturating_sub(before.log_syncs),
                    "purged_rows": done.purged_rows.saturating_sub(before.purged_rows),
                })
            });
            world.keep_device_events(super::SyncsBy::Background, 0, now + spent);
            None
        }
        Err(e) => {
            let crashed = world.storage.crashed();
            if !crashed && !e.stops_engine() && !e.is_fatal() {
                world
                    .violations
                    .push(format!("background work: unexpected engine error: {e}"));
                return None;
            }
            Some(crashed)
        }
    }
}

/// The engine's background counters, for the timeline's account of a
/// round.
#[derive(Debug, Default, Clone, Copy)]
struct Background {
    pages_flushed: u64,
    checkpoints: u64,
    log_syncs: u64,
    purged_rows: u64,
}

impl Background {
    fn of(world: &World) -> Background {
        world.engine.as_ref().map_or_else(Background::default, |e| {
            let p = e.pager();
            Background {
                pages_flushed: p.stats.pages_flushed,
                checkpoints: p.stats.checkpoints,
                log_syncs: p.log.stats().syncs,
                purged_rows: e.stats.purged_rows,
            }
        })
    }
}

impl Timed {
    /// The scheduler of `plan`'s run.
    pub(super) fn new(plan: &crate::plan::Plan) -> Timed {
        Timed {
            think_max_us: plan.think_us,
            long_pause: (
                plan.p_long_pause,
                2 * plan.lock_wait_timeout_s.saturating_mul(1_000_000),
            ),
            cpu: plan.cpu,
            ..Timed::default()
        }
    }

    /// Notes that session `i` steps in the turn beginning at `now_us`.
    pub(super) fn stepping(&mut self, world: &World, i: usize, now_us: u64) {
        if self.stepped.is_empty() {
            self.began_us = now_us;
            self.work_before = Work::of(world);
        }
        if !self.stepped.contains(&i) {
            self.stepped.push(i);
        }
    }

    /// Settles the turn just made: what its steps spent on the storage
    /// moves each stepped session's next statement (after a think time
    /// drawn up to the plan's bound, or inside a transaction, now and then
    /// (the plan's `p_long_pause`), a pause up to twice the lock wait
    /// timeout: without such pauses no lock is held long enough for a wait
    /// to time out); a session left waiting for a lock has
    /// none until the wait ends; a commit left waiting for its group's
    /// sync comes when the device is free; and every waiter whose wait
    /// ended in the turn (granted, or chosen as a deadlock victim) goes on
    /// when the turn's steps end.
    ///
    /// The turn's processor time (the plan's model, from the engine's
    /// counters) runs
    /// first, on the earliest free processor at or after the turn began;
    /// its I/O follows.
    pub(super) fn settle(
        &mut self,
        world: &mut World,
        sessions: &mut [Sess],
        rng: &mut ChaCha8Rng,
    ) {
        let (think_max_us, long_pause, cpu) = (self.think_max_us, self.long_pause, self.cpu);
        let spent = world.storage.take_spent_us();
        let stepped = std::mem::take(&mut self.stepped);
        if stepped.is_empty() && spent == 0 {
            return;
        }
        let mut end = self.began_us + spent;
        if !cpu.is_free() && !stepped.is_empty() {
            if self.cores_free_us.len() != cpu.cores {
                self.cores_free_us = vec![0; cpu.cores];
            }
            let ns = Work::of(world).cost_ns(&self.work_before, stepped.len() as u64, &cpu)
                + self.cpu_remainder_ns;
            self.cpu_remainder_ns = ns % 1_000;
            let (core, free) = self
                .cores_free_us
                .iter()
                .copied()
                .enumerate()
                .min_by_key(|&(_, f)| f)
                .expect("at least one core");
            let start = free.max(self.began_us);
            let done = start + ns / 1_000;
            self.cores_free_us[core] = done;
            end = done + spent;
        }
        self.end_us = self.end_us.max(end);
        // For the timeline: the turn's syncs (its I/O came after its
        // processor time) and the engine's counters at its end.
        let ids: Vec<u32> = stepped.iter().map(|&i| sessions[i].id).collect();
        let shift = end - (self.began_us + spent);
        world.keep_device_events(super::SyncsBy::Turn(&ids), shift, end);
        let device_free = world.storage.device_free_us();
        if self.busy_until_us.len() < sessions.len() {
            self.busy_until_us.resize(sessions.len(), 0);
        }
        for &i in &stepped {
            self.busy_until_us[i] = end;
            let id = sessions[i].id;
            world.event(
                "step end",
                serde_json::json!({"session": id, "end_us": end}),
            );
            let s = &mut sessions[i];
            s.ready_us = if !s.waiting {
                // A client inside a transaction now and then does other
                // work for a while (up to twice the lock wait timeout), so
                // that waits for its locks time out as on a server.
                let (p, long_pause_us) = long_pause;
                let pause = s.txn.is_some() && long_pause_us > 0 && p > 0.0 && rng.gen_bool(p);
                let think = if pause {
                    rng.gen_range(0..long_pause_us)
                } else {
                    rng.gen_range(0..think_max_us.max(1))
                };
                Some(end + think)
            } else if s.txn.as_ref().is_some_and(|t| t.commit_written.is_some()) || queued(world, s)
            {
                // A group's sync starts when the device is free: every
                // commit written by then joins it. A commit queued for the
                // binary log's mutex takes it when the sync before it has
                // ended.
                Some(end.max(device_free))
            } else {
                None
            };
        }
        for (i, s) in sessions.iter_mut().enumerate() {
            let busy = self.busy_until_us[i];
            // The engine says whether a wait goes on (a scheduler is no
            // judge; the oracle judges what the engine did).
            let lock_wait = world
                .engine
                .as_ref()
                .is_some_and(|e| s.trx.is_some_and(|t| e.locks().waiting_for(t).is_some()));
            if s.waiting && queued(world, s) {
                // The mutex is free once the device is: a commit that took
                // it in this turn holds it through its sync.
                s.ready_us = Some(s.ready_us.unwrap_or(end).max(device_free).max(busy));
                continue;
            }
            if s.waiting && s.ready_us.is_none() && !lock_wait {
                s.ready_us = Some(
                    if s.txn.as_ref().is_some_and(|t| t.commit_written.is_some()) {
                        end.max(device_free)
                    } else {
                        end
                    }
                    .max(busy),
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
                    kind: Kind::Step,
                },
                // A lock wait's deadline by the oracle's clock of the wait
                // (so that a timeout the engine fires late is seen late);
                // the engine's own, where it is earlier, wakes the waiter
                // as InnoDB's lock timeout thread does (so that a timeout
                // the engine fires early is seen early).
                None => {
                    let oracle = s.trx.and_then(|t| world.locks.deadline(t));
                    let engine = world.engine.as_ref().and_then(|e| e.wait_deadline_us(s.id));
                    match (oracle, engine) {
                        (Some(o), Some(e)) if e < o => Event {
                            session: i,
                            at_us: e.max(now),
                            kind: Kind::Step,
                        },
                        (Some(o), _) => Event {
                            session: i,
                            at_us: o.max(now),
                            kind: Kind::Deadline,
                        },
                        (None, e) => Event {
                            session: i,
                            at_us: e.map_or(now, |d| d.max(now)),
                            kind: Kind::Step,
                        },
                    }
                }
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

/// Whether a session's commit waits for the binary log's mutex
/// (`engine::Config::commit_mutex`).
fn queued(world: &World, s: &Sess) -> bool {
    world
        .engine
        .as_ref()
        .is_some_and(|e| e.is_commit_queued(s.id))
}
