//! The thread-safe wrapper (`engine::shared`) under the loom model checker:
//! every interleaving of its latch and condition variable, up to a
//! preemption bound, on scenarios of two or three threads. A lost wake-up
//! shows as loom's deadlock report (every thread blocked), a missed error as
//! a failed assertion.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --profile testing -p engine --test loom`.
//! Each iteration opens a fresh engine on in-memory storage (loom's
//! primitives must be made inside the model). Lock wait timeouts are driven
//! by a thread that advances the manual clock and calls `tick()`: loom has
//! no timed waits.

#![cfg(loom)]

mod common;

use common::{open_shared, read_k, set_k, LOCK_WAIT_TIMEOUT_US};
use engine::shared::SharedEngine;
use engine::{Error, Request, Response, SessionId};
use loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts model iterations and how often a path of interest was taken.
/// These are the test's own bookkeeping, outside the model: std atomics,
/// which loom neither tracks nor reorders.
struct Tally {
    iterations: AtomicUsize,
    path: AtomicUsize,
}

impl Tally {
    const fn new() -> Tally {
        Tally {
            iterations: AtomicUsize::new(0),
            path: AtomicUsize::new(0),
        }
    }
    fn count(&self, took_path: bool) {
        self.iterations.fetch_add(1, Ordering::Relaxed);
        if took_path {
            self.path.fetch_add(1, Ordering::Relaxed);
        }
    }
    /// The iterations, and those that took the path.
    fn get(&self) -> (usize, usize) {
        (
            self.iterations.load(Ordering::Relaxed),
            self.path.load(Ordering::Relaxed),
        )
    }
}

/// A model checker bounded to `preemptions` forced thread switches per
/// execution: enough for the wake-up races here (a notify between a
/// waiter's check and its sleep needs one), small enough to finish in
/// seconds.
fn builder(preemptions: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b
}

/// Yields until session `s` has a statement waiting (loom runs the other
/// threads meanwhile).
fn until_waiting(shared: &SharedEngine, s: SessionId) -> engine::Result<()> {
    while !shared.is_waiting(s)? {
        thread::yield_now();
    }
    Ok(())
}

/// Runs one model iteration's body, turning an engine error into a panic
/// loom reports with the interleaving that produced it.
fn check(body: impl FnOnce() -> engine::Result<()>) {
    if let Err(e) = body() {
        panic!("unexpected engine error: {e}");
    }
}

#[test]
fn a_waiter_is_woken_when_the_holder_commits() {
    static TALLY: Tally = Tally::new();
    builder(3).check(|| {
        check(|| {
            let (shared, _clock) = open_shared(1, common::config())?;
            let t1 = shared.session()?;
            t1.execute(Request::Begin)?;
            t1.execute(set_k(1, 10))?;
            let t2 = shared.session()?;
            let waiter = thread::spawn(move || t2.execute(set_k(1, 20)));
            // Commits before, during or after T2's wait: T2 must finish.
            t1.execute(Request::Commit)?;
            let outcome = waiter.join().expect("the waiter thread does not panic");
            assert_eq!(outcome?, Response::Affected(1));
            // T2 could only write after T1's commit.
            assert_eq!(read_k(&shared, 1)?, Some(20));
            TALLY.count(shared.with_engine(|e| e.stats.waits)? > 0);
            Ok(())
        })
    });
    let (iterations, waited) = TALLY.get();
    eprintln!("holder commits: {iterations} iterations, T2 waited in {waited}");
    assert!(waited > 0, "T2 never had to wait: the wake-up is untested");
    assert!(
        waited < iterations,
        "T2 always waited: the commit-first order is unexplored"
    );
}

#[test]
fn a_timeout_wakes_the_waiter_with_1205() {
    static TALLY: Tally = Tally::new();
    builder(3).check(|| {
        check(|| {
            let (shared, clock) = open_shared(1, common::config())?;
            // T1 holds row 1 for the whole model.
            let t1 = shared.session()?;
            t1.execute(Request::Begin)?;
            t1.execute(set_k(1, 10))?;
            let t2 = shared.session()?;
            let t2_id = t2.id();
            let waiter = thread::spawn(move || t2.execute(set_k(1, 20)));
            let ticker = {
                let shared = shared.clone();
                thread::spawn(move || -> engine::Result<()> {
                    until_waiting(&shared, t2_id)?;
                    clock.advance_us(LOCK_WAIT_TIMEOUT_US);
                    shared.tick()
                })
            };
            ticker.join().expect("the ticker thread does not panic")?;
            let outcome = waiter.join().expect("the waiter thread does not panic");
            assert!(
                matches!(outcome, Err(Error::LockWaitTimeout)),
                "T2 times out: {outcome:?}"
            );
            // T1 still holds its lock and its change.
            t1.execute(Request::Commit)?;
            assert_eq!(read_k(&shared, 1)?, Some(10));
            TALLY.count(true);
            Ok(())
        })
    });
    let (iterations, _) = TALLY.get();
    eprintln!("timeout: {iterations} iterations");
    assert!(iterations > 1, "loom explored a single interleaving");
}

#[test]
fn a_deadlock_has_exactly_one_victim_and_the_other_completes() {
    static TALLY: Tally = Tally::new();
    builder(2).check(|| {
        check(|| {
            let (shared, _clock) = open_shared(2, common::config())?;
            // T1 holds row 1, T2 holds row 2; each then wants the other's.
            let sessions = [shared.session()?, shared.session()?];
            for (i, s) in sessions.iter().enumerate() {
                s.execute(Request::Begin)?;
                s.execute(set_k(i as u64 + 1, 10 * (i as u64 + 1)))?;
            }
            let handles: Vec<_> = sessions
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    thread::spawn(move || -> engine::Result<engine::Result<Response>> {
                        let mine = i as u64 + 1;
                        let outcome = s.execute(set_k(3 - mine, 10 * mine));
                        if outcome.is_ok() {
                            s.execute(Request::Commit)?;
                        }
                        Ok(outcome)
                    })
                })
                .collect();
            let mut outcomes = Vec::new();
            for h in handles {
                outcomes.push(h.join().expect("a session thread does not panic")?);
            }
            let victims: Vec<usize> = (0..2)
                .filter(|&i| matches!(outcomes[i], Err(Error::Deadlock)))
                .collect();
            assert_eq!(victims.len(), 1, "exactly one victim: {outcomes:?}");
            let winner = 1 - victims[0];
            assert!(
                matches!(outcomes[winner], Ok(Response::Affected(1))),
                "the survivor completes: {outcomes:?}"
            );
            let value = 10 * (winner as u64 + 1);
            assert_eq!(read_k(&shared, 1)?, Some(value));
            assert_eq!(read_k(&shared, 2)?, Some(value));
            // Which thread is the victim; both orders of the two requests
            // are explored, but which one loses is the engine's rule.
            TALLY.count(winner == 0);
            Ok(())
        })
    });
    let (iterations, t1_won) = TALLY.get();
    eprintln!("deadlock: {iterations} iterations, T1 survived in {t1_won}");
    assert!(iterations > 1, "loom explored a single interleaving");
}

#[test]
fn concurrent_statements_and_commits_always_finish() {
    static TALLY: Tally = Tally::new();
    builder(2).check(|| {
        check(|| {
            let (shared, _clock) = open_shared(2, common::config())?;
            // Locks are taken in row order, so no deadlock is possible and
            // every statement must complete.
            let scripts: [Vec<Request>; 3] = [
                vec![Request::Begin, set_k(1, 11), set_k(2, 12), Request::Commit],
                vec![set_k(1, 21)],
                vec![Request::Begin, set_k(2, 32), Request::Commit],
            ];
            let handles: Vec<_> = scripts
                .into_iter()
                .map(|script| {
                    let shared = shared.clone();
                    thread::spawn(move || -> engine::Result<()> {
                        let s = shared.session()?;
                        for request in script {
                            let r = s.execute(request.clone())?;
                            let expected = match request {
                                Request::Update { .. } => Response::Affected(1),
                                _ => Response::Ok,
                            };
                            assert_eq!(r, expected, "{request:?}");
                        }
                        s.close()
                    })
                })
                .collect();
            for h in handles {
                h.join().expect("a session thread does not panic")?;
            }
            let k1 = read_k(&shared, 1)?;
            let k2 = read_k(&shared, 2)?;
            assert!(matches!(k1, Some(11 | 21)), "row 1: {k1:?}");
            assert!(matches!(k2, Some(12 | 32)), "row 2: {k2:?}");
            TALLY.count(shared.with_engine(|e| e.stats.waits)? > 0);
            Ok(())
        })
    });
    let (iterations, waited) = TALLY.get();
    eprintln!("concurrent: {iterations} iterations, a statement waited in {waited}");
    assert!(
        waited > 0,
        "no statement ever waited: no contention explored"
    );
}

#[test]
fn a_waiting_victim_of_a_three_way_deadlock_is_woken() {
    // T1 holds row 1 and wants row 2, T2 holds row 2 and wants row 3, T3
    // holds row 3 and wants row 1. T3 is made the heaviest (two more rows
    // changed), so under InnoDB's weight rule a cycle T3 closes takes T2,
    // which is already waiting, as its victim while T3 itself keeps waiting
    // for T1: only a notification from T3's new wait wakes T1 (whose lock
    // the rollback granted) and T2 (which must report 1213).
    static TALLY: Tally = Tally::new();
    builder(2).check(|| {
        check(|| {
            let (shared, _clock) = open_shared(5, common::config())?;
            let mut sessions = Vec::new();
            for t in 1..=3u64 {
                let s = shared.session()?;
                s.execute(Request::Begin)?;
                s.execute(set_k(t, 10 * t))?;
                sessions.push(s);
            }
            sessions[2].execute(set_k(4, 30))?;
            sessions[2].execute(set_k(5, 30))?;
            let handles: Vec<_> = sessions
                .into_iter()
                .zip(1..=3u64)
                .map(|(s, t)| {
                    thread::spawn(move || -> engine::Result<engine::Result<Response>> {
                        let outcome = s.execute(set_k(t % 3 + 1, 10 * t));
                        if outcome.is_ok() {
                            s.execute(Request::Commit)?;
                        }
                        Ok(outcome)
                    })
                })
                .collect();
            let mut outcomes = Vec::new();
            for h in handles {
                outcomes.push(h.join().expect("a session thread does not panic")?);
            }
            let victims: Vec<u64> = (1..=3u64)
                .filter(|&t| matches!(outcomes[t as usize - 1], Err(Error::Deadlock)))
                .collect();
            assert_eq!(victims.len(), 1, "exactly one victim: {outcomes:?}");
            let victim = victims[0];
            for t in (1..=3u64).filter(|&t| t != victim) {
                assert!(
                    matches!(outcomes[t as usize - 1], Ok(Response::Affected(1))),
                    "T{t} survives and completes: {outcomes:?}"
                );
            }
            // Row j is T(j)'s own and T(j-1)'s target: the targeting
            // survivor wrote it last; else its owner, if it survived.
            for row in 1..=3u64 {
                let targeting = (row + 1) % 3 + 1;
                let expected = if targeting != victim {
                    10 * targeting
                } else if row != victim {
                    10 * row
                } else {
                    0
                };
                assert_eq!(read_k(&shared, row)?, Some(expected), "row {row}");
            }
            TALLY.count(victim == 2);
            Ok(())
        })
    });
    let (iterations, t2_victim) = TALLY.get();
    eprintln!("three-way deadlock: {iterations} iterations, T2 the victim in {t2_victim}");
    assert!(iterations > 1, "loom explored a single interleaving");
}
