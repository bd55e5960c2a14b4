//! The thread-safe wrapper (`engine::shared`) under real std threads: hot
//! rows contended by several threads, deadlocks, lock wait timeouts driven
//! by a ticker thread, and failures (an engine that halts, a thread that
//! panics under the latch) that must reach every waiter instead of leaving
//! it asleep. `tests/loom.rs` explores the same wake-ups exhaustively on
//! smaller scenarios.

mod common;

use common::{get, k_of, open_shared, read_k, set_k, set_owner, TestClock};
use engine::io::{File, MemStorage, Storage};
use engine::shared::SharedEngine;
use engine::{Config, Engine, Error, Request, Response, SessionId};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Joins a thread, passing its panic on to the test.
fn join<T>(handle: JoinHandle<T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Spins (sleeping) until session `s` has a statement waiting.
fn until_waiting(shared: &SharedEngine, s: SessionId) -> engine::Result<()> {
    while !shared.is_waiting(s)? {
        thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

const THREADS: u64 = 4;
const ROUNDS: u64 = 200;
const HOT_ROWS: u64 = 2;

#[test]
fn autocommit_updates_of_hot_rows_from_four_threads_all_complete() -> engine::Result<()> {
    let (shared, _clock) = open_shared(HOT_ROWS, common::config())?;
    let commits_before = shared.with_engine(|e| e.stats.commits)?;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let shared = shared.clone();
            thread::spawn(move || -> engine::Result<()> {
                let s = shared.session()?;
                for i in 0..ROUNDS {
                    // Values unique per thread and round, so every update
                    // changes its row and reports one affected row.
                    let r = s.execute(set_k(1 + i % HOT_ROWS, t * 1_000_000 + i + 1))?;
                    assert_eq!(r, Response::Affected(1), "thread {t} round {i}");
                }
                s.close()
            })
        })
        .collect();
    for h in handles {
        join(h)?;
    }
    let commits = shared.with_engine(|e| e.stats.commits)? - commits_before;
    assert_eq!(
        commits,
        THREADS * ROUNDS,
        "one commit per autocommit update"
    );
    // Each hot row ends with the last value some thread wrote to it.
    let last_writes = |row: u64| -> Vec<u64> {
        let last_round = (0..ROUNDS).rev().find(|i| 1 + i % HOT_ROWS == row);
        let last_round = last_round.unwrap_or_else(|| panic!("row {row} is never written"));
        (0..THREADS)
            .map(|t| t * 1_000_000 + last_round + 1)
            .collect()
    };
    for row in 1..=HOT_ROWS {
        let k = read_k(&shared, row)?.unwrap_or_else(|| panic!("row {row} is gone"));
        assert!(
            last_writes(row).contains(&k),
            "row {row} holds {k}, which is no thread's last write to it"
        );
    }
    Ok(())
}

#[test]
fn read_modify_write_increments_from_four_threads_add_up() -> engine::Result<()> {
    let (shared, _clock) = open_shared(HOT_ROWS, common::config())?;
    // Contention is made certain rather than left to the OS scheduler
    // (which may run the threads one after another): this transaction
    // holds row 1 until some worker waits for it.
    let holder = shared.session()?;
    holder.execute(Request::Begin)?;
    holder.execute(set_owner(1, u64::MAX))?;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let shared = shared.clone();
            thread::spawn(move || -> engine::Result<()> {
                let s = shared.session()?;
                for i in 0..ROUNDS {
                    let row = 1 + (t + i) % HOT_ROWS;
                    s.execute(Request::Begin)?;
                    // Writing `owner` takes the row's lock, so the read that
                    // follows sees the newest k and nobody can change it
                    // before this transaction commits.
                    s.execute(set_owner(row, t * 1_000_000 + i + 1))?;
                    let k =
                        k_of(&s.execute(get(row))?).unwrap_or_else(|| panic!("row {row} is gone"));
                    s.execute(set_k(row, k + 1))?;
                    s.execute(Request::Commit)?;
                }
                s.close()
            })
        })
        .collect();
    while shared.with_engine(|e| e.stats.waits)? == 0 {
        thread::yield_now();
    }
    holder.execute(Request::Commit)?;
    holder.close()?;
    for h in handles {
        join(h)?;
    }
    let mut total = 0;
    for row in 1..=HOT_ROWS {
        total += read_k(&shared, row)?.unwrap_or_else(|| panic!("row {row} is gone"));
    }
    assert_eq!(total, THREADS * ROUNDS, "every increment counted once");
    Ok(())
}

#[test]
fn a_deadlock_between_two_threads_has_exactly_one_victim() -> engine::Result<()> {
    const TRIALS: u64 = 20;
    let (shared, _clock) = open_shared(2, common::config())?;
    for trial in 0..TRIALS {
        let barrier = Arc::new(Barrier::new(2));
        // Thread `mine` locks row `mine`, then wants the other row.
        let handles: Vec<_> = [1u64, 2]
            .into_iter()
            .map(|mine| {
                let (shared, barrier) = (shared.clone(), Arc::clone(&barrier));
                thread::spawn(move || -> engine::Result<engine::Result<Response>> {
                    let s = shared.session()?;
                    let value = trial * 10 + mine;
                    s.execute(Request::Begin)?;
                    s.execute(set_k(mine, value))?;
                    barrier.wait();
                    let outcome = s.execute(set_k(3 - mine, value));
                    if outcome.is_ok() {
                        s.execute(Request::Commit)?;
                    }
                    s.close()?;
                    Ok(outcome)
                })
            })
            .collect();
        let outcomes: Vec<engine::Result<Response>> = handles
            .into_iter()
            .map(join)
            .collect::<engine::Result<_>>()?;
        let victims: Vec<usize> = (0..2)
            .filter(|&i| matches!(outcomes[i], Err(Error::Deadlock)))
            .collect();
        assert_eq!(victims.len(), 1, "trial {trial}: outcomes {outcomes:?}");
        let winner = 1 - victims[0];
        assert!(
            matches!(outcomes[winner], Ok(Response::Affected(1))),
            "trial {trial}: the survivor's statement completes: {outcomes:?}"
        );
        // The survivor committed both of its writes; the victim's were
        // rolled back.
        let value = trial * 10 + winner as u64 + 1;
        assert_eq!(read_k(&shared, 1)?, Some(value), "trial {trial}");
        assert_eq!(read_k(&shared, 2)?, Some(value), "trial {trial}");
    }
    let deadlocks = shared.with_engine(|e| e.stats.deadlocks)?;
    assert_eq!(deadlocks, TRIALS, "one deadlock found per trial");
    Ok(())
}

#[test]
fn a_ticker_advancing_the_manual_clock_times_a_waiter_out_with_1205() -> engine::Result<()> {
    // An hour on the engine clock: were the waiter woken by its own timed
    // wait rather than by the ticker's notification, the test would hang.
    const TIMEOUT_US: u64 = 3_600_000_000;
    let config = Config {
        lock_wait_timeout_us: TIMEOUT_US,
        ..common::config()
    };
    let (shared, clock) = open_shared(1, config)?;
    let holder = shared.session()?;
    holder.execute(Request::Begin)?;
    holder.execute(set_k(1, 7))?;

    let waiter = shared.session()?;
    let ticker = {
        let (shared, clock, waiter_id) = (shared.clone(), clock.clone(), waiter.id());
        thread::spawn(move || -> engine::Result<()> {
            until_waiting(&shared, waiter_id)?;
            clock.advance_us(TIMEOUT_US);
            shared.tick()
        })
    };
    let outcome = thread::spawn(move || waiter.execute(set_k(1, 8)));
    let outcome = join(outcome);
    join(ticker)?;
    assert!(
        matches!(outcome, Err(Error::LockWaitTimeout)),
        "the waiter times out: {outcome:?}"
    );
    assert_eq!(outcome.err().and_then(|e| e.mysql_code()), Some(1205));
    // The holder keeps its lock and its transaction through the timeout.
    holder.execute(Request::Commit)?;
    assert_eq!(read_k(&shared, 1)?, Some(7));
    let timeouts = shared.with_engine(|e| e.stats.lock_wait_timeouts)?;
    assert_eq!(timeouts, 1);
    Ok(())
}

#[test]
fn dropping_a_session_rolls_back_and_wakes_its_waiters() -> engine::Result<()> {
    let (shared, _clock) = open_shared(1, common::config())?;
    let holder = shared.session()?;
    holder.execute(Request::Begin)?;
    holder.execute(set_k(1, 7))?;
    let waiter = shared.session()?;
    let waiter_id = waiter.id();
    let outcome = thread::spawn(move || waiter.execute(set_k(1, 8)));
    until_waiting(&shared, waiter_id)?;
    drop(holder);
    assert_eq!(join(outcome)?, Response::Affected(1));
    assert_eq!(
        read_k(&shared, 1)?,
        Some(8),
        "the holder's write was rolled back"
    );
    Ok(())
}

#[test]
fn group_commit_waits_are_resumed_without_a_notification() -> engine::Result<()> {
    // A deferred commit waits for no other transaction: a wrapper that slept
    // on it would sleep for ever, as nobody else is there to notify.
    let config = Config {
        group_commit: true,
        ..common::config()
    };
    let (shared, _clock) = open_shared(1, config)?;
    let s = shared.session()?;
    for i in 1..=20 {
        assert_eq!(s.execute(set_k(1, i))?, Response::Affected(1));
    }
    s.execute(Request::Begin)?;
    s.execute(set_k(1, 100))?;
    assert_eq!(s.execute(Request::Commit)?, Response::Ok);
    assert_eq!(read_k(&shared, 1)?, Some(100));
    let syncs = shared.with_engine(|e| e.stats.group_commit_syncs)?;
    assert!(
        syncs > 0,
        "no commit was deferred: the group commit path is untested"
    );
    Ok(())
}

/// In-memory storage whose syncs fail once `failing` is set: an fsync
/// error, which stops the engine.
struct FailingSyncs {
    inner: MemStorage,
    failing: Arc<AtomicBool>,
}

struct FailingSyncFile {
    inner: Box<dyn File>,
    failing: Arc<AtomicBool>,
}

impl File for FailingSyncFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(io::Error::other("planted fsync failure"));
        }
        self.inner.sync()
    }
    fn len(&mut self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
}

impl FailingSyncs {
    fn wrap(&self, file: Box<dyn File>) -> Box<dyn File> {
        Box::new(FailingSyncFile {
            inner: file,
            failing: Arc::clone(&self.failing),
        })
    }
}

impl Storage for FailingSyncs {
    fn create(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let file = self.inner.create(name)?;
        Ok(self.wrap(file))
    }
    fn open(&mut self, name: &str) -> io::Result<Box<dyn File>> {
        let file = self.inner.open(name)?;
        Ok(self.wrap(file))
    }
    fn exists(&mut self, name: &str) -> io::Result<bool> {
        self.inner.exists(name)
    }
    fn remove(&mut self, name: &str) -> io::Result<()> {
        self.inner.remove(name)
    }
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn list(&mut self) -> io::Result<Vec<String>> {
        self.inner.list()
    }
    fn sync_dir(&mut self) -> io::Result<()> {
        self.inner.sync_dir()
    }
}

#[test]
fn an_engine_that_halts_wakes_every_waiter_with_the_halt() -> engine::Result<()> {
    let failing = Arc::new(AtomicBool::new(false));
    let storage = FailingSyncs {
        inner: MemStorage::new(),
        failing: Arc::clone(&failing),
    };
    let (mut engine, _) = Engine::open(
        Box::new(storage),
        Box::new(TestClock::default()),
        common::config(),
    )?;
    engine.create_table(common::counters_def())?;
    let shared = SharedEngine::new(engine);
    let holder = shared.session()?;
    holder.execute(common::insert(1))?;
    holder.execute(Request::Begin)?;
    holder.execute(set_k(1, 7))?;
    let waiters: Vec<_> = (0..2)
        .map(|i| -> engine::Result<_> {
            let waiter = shared.session()?;
            let waiter_id = waiter.id();
            let handle = thread::spawn(move || waiter.execute(set_k(1, 10 + i)));
            until_waiting(&shared, waiter_id)?;
            Ok(handle)
        })
        .collect::<engine::Result<_>>()?;
    failing.store(true, Ordering::SeqCst);
    let commit = holder.execute(Request::Commit);
    assert!(
        matches!(commit, Err(Error::Io { op: "sync", .. })),
        "the commit's log sync fails: {commit:?}"
    );
    for (i, handle) in waiters.into_iter().enumerate() {
        let outcome = join(handle);
        assert!(
            matches!(outcome, Err(Error::Halted(_))),
            "waiter {i} learns the engine stopped: {outcome:?}"
        );
    }
    assert!(matches!(shared.tick(), Err(Error::Halted(_))));
    Ok(())
}

#[test]
fn a_panic_under_the_latch_halts_the_handle_and_wakes_waiters() -> engine::Result<()> {
    let (shared, _clock) = open_shared(1, common::config())?;
    let holder = shared.session()?;
    holder.execute(Request::Begin)?;
    holder.execute(set_k(1, 7))?;
    let waiter = shared.session()?;
    let waiter_id = waiter.id();
    let outcome = thread::spawn(move || waiter.execute(set_k(1, 8)));
    until_waiting(&shared, waiter_id)?;
    let panicker = {
        let shared = shared.clone();
        thread::spawn(move || shared.with_engine(|_| panic!("planted panic under the latch")))
    };
    assert!(panicker.join().is_err(), "the planted panic happened");
    let outcome = join(outcome);
    assert!(
        matches!(outcome, Err(Error::Halted(_))),
        "the waiter learns the latch is poisoned: {outcome:?}"
    );
    assert!(matches!(shared.session(), Err(Error::Halted(_))));
    assert!(matches!(
        holder.execute(Request::Commit),
        Err(Error::Halted(_))
    ));
    Ok(())
}

#[test]
fn a_statement_of_a_busy_session_is_refused_not_run() -> engine::Result<()> {
    // Two threads sharing one session: while the first waits, the second's
    // statement gets the engine's typed refusal.
    let (shared, _clock) = open_shared(1, common::config())?;
    let holder = shared.session()?;
    holder.execute(Request::Begin)?;
    holder.execute(set_k(1, 7))?;
    let waiter = Arc::new(shared.session()?);
    let first = {
        let waiter = Arc::clone(&waiter);
        thread::spawn(move || waiter.execute(set_k(1, 8)))
    };
    until_waiting(&shared, waiter.id())?;
    let second = waiter.execute(set_k(1, 9));
    assert!(
        matches!(second, Err(Error::SessionState(_, _))),
        "a waiting session refuses a second statement: {second:?}"
    );
    holder.execute(Request::Commit)?;
    assert_eq!(join(first)?, Response::Affected(1));
    assert_eq!(read_k(&shared, 1)?, Some(8));
    Ok(())
}
