//! A thread-safe handle on the step-driven engine: one latch around the
//! [`Engine`], one condition variable for lock waits, and a session per
//! thread whose statements block instead of answering [`Step::Waiting`].
//! Mirrors the part of InnoDB's `srv0srv.c` that suspends a MySQL thread
//! on a lock wait and releases it (`srv_suspend_mysql_thread`,
//! `srv_release_mysql_thread_if_suspended`, the lock timeout thread),
//! with the latch in the role of `kernel_mutex`.
//!
//! ```text
//!   thread A ──execute──▶ ┌──────── latch (Mutex<Engine>) ────────┐
//!   thread B ──execute──▶ │ engine.execute / resume / tick / close │──▶ notify_all
//!   ticker   ──tick─────▶ └───────────────────┬────────────────────┘
//!                                             │ Step::Waiting
//!                                             ▼
//!                         condvar.wait (latch released) ──woken──▶ engine.resume
//! ```
//!
//! How it works: [`SharedSession::execute`] runs the statement under the
//! latch. On [`Step::Waiting`] it waits on the condition variable, which
//! releases the latch, and calls [`Engine::resume`] whenever it is woken,
//! until the statement completes or fails (1205 at the lock wait timeout,
//! 1213 as a deadlock victim, or any other error).
//!
//! Invariants:
//!
//! - No lost wake-up. A waiter decides to sleep (its `resume` said it still
//!   waits) while holding the latch, and every call that can end a wait
//!   changes the engine under the latch and then calls `notify_all`: every
//!   completed statement, every error, [`SharedEngine::tick`],
//!   [`SharedSession::close`] and [`SharedEngine::with_engine`]. The
//!   notification comes from a drop guard, so a panic notifies too.
//! - A statement that starts to wait notifies as well before it sleeps: its
//!   new wait may have closed a cycle whose victim is a transaction that was
//!   already waiting, and that victim must wake to learn it. A `resume` that
//!   still waits notifies only if it changed the wait graph, which the
//!   wrapper reads off [`EngineStats`](crate::handler::EngineStats) (a new
//!   wait, a deadlock, a timeout, a commit or a rollback was counted);
//!   notifying after every fruitless `resume` would have two waiters wake
//!   each other for ever.
//! - The latch is held only while the engine runs a call; the only blocking
//!   operation made with it held is the condition variable wait, which
//!   releases it. The wrapper never spawns threads nor reads time itself.
//! - No panic on a poisoned latch: a thread that panicked inside the engine
//!   may have left memory ahead of the log, exactly the state in which the
//!   engine stops itself, so every later call on the handle (and every
//!   waiter, which the panicking thread's drop guard wakes) gets
//!   [`Error::Halted`]. Errors that stop the engine reach waiters the same
//!   way: the failing call notifies and each waiter's `resume` reports the
//!   halt.
//!
//! Lock wait timeouts: the timeout runs on the engine's clock (microseconds,
//! see [`Clock`](crate::io::Clock)), not on real time. With the std build a
//! waiter sleeps at most until its deadline as the engine clock measures it
//! now (`wait_deadline_us - now_us`, taken as real microseconds and at least
//! a millisecond), so with a real-time clock it wakes at the deadline; it
//! also re-checks whenever anyone notifies. With a manual clock nothing
//! moves time but the caller: [`SharedEngine::tick`] (which runs the
//! engine's background work and then notifies) is what drives timeouts, as
//! InnoDB's lock timeout thread does once a second. Under loom there are no
//! timed waits at all (see `src/sync.rs`).
//!
//! Group commit: a commit that [`Config::group_commit`](crate::Config)
//! defers waits for no other transaction (its `wait_deadline_us` is `None`),
//! so it is resumed at once, and the sync is made under the latch; if such a
//! resume still waits, the statement falls back to waiting for a
//! notification like a lock wait.
//!
//! What it must never do: hold the latch while blocking on anything but the
//! condition variable, lose a wake-up, or turn a poisoned latch into a
//! panic.

use crate::error::{Error, Result};
use crate::handler::{Engine, Request, Response, SessionId, Step};
use crate::sync::{self, Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The shortest real-time sleep of a waiter between two re-checks when no
/// notification comes: a floor so that a deadline already due on the engine
/// clock cannot turn the wait into a busy loop.
const MIN_WAIT_US: u64 = 1_000;

/// What the latch protects and what waiters sleep on.
struct Inner {
    engine: Mutex<Engine>,
    /// Notified after every call that may have ended or changed a wait.
    changed: Condvar,
}

/// A cloneable, thread-safe handle on an [`Engine`]. Clones share the
/// engine; each thread opens its own [`SharedSession`].
pub struct SharedEngine {
    inner: Arc<Inner>,
}

impl Clone for SharedEngine {
    fn clone(&self) -> Self {
        SharedEngine {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl std::fmt::Debug for SharedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEngine").finish_non_exhaustive()
    }
}

/// Calls `notify_all` when dropped: on every way out of a call, panics
/// included. Declared before the latch guard, it runs after the latch is
/// released.
struct WakeAllOnDrop<'a>(&'a Condvar);

impl Drop for WakeAllOnDrop<'_> {
    fn drop(&mut self) {
        // See `SharedSession`'s drop: under loom a panic ends the model.
        #[cfg(loom)]
        if std::thread::panicking() {
            return;
        }
        self.0.notify_all();
    }
}

/// The error for a latch poisoned by a thread that panicked holding it.
fn poisoned() -> Error {
    Error::Halted("a thread panicked while it held the engine latch".into())
}

/// Counters that move whenever a call changes the wait graph: a statement
/// started waiting, a deadlock victim or a timeout was chosen, or a
/// transaction ended.
fn wait_graph_marks(engine: &Engine) -> [u64; 5] {
    let s = &engine.stats;
    [
        s.waits,
        s.deadlocks,
        s.lock_wait_timeouts,
        s.commits,
        s.rollbacks,
    ]
}

impl SharedEngine {
    /// Wraps an open engine.
    pub fn new(engine: Engine) -> SharedEngine {
        SharedEngine {
            inner: Arc::new(Inner {
                engine: Mutex::new(engine),
                changed: Condvar::new(),
            }),
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, Engine>> {
        self.inner.engine.lock().map_err(|_| poisoned())
    }

    /// Opens a session for the calling thread.
    pub fn session(&self) -> Result<SharedSession> {
        let id = self.lock()?.session();
        Ok(SharedSession {
            engine: self.clone(),
            id,
            closed: false,
        })
    }

    /// Runs the engine's background work that is due ([`Engine::tick`]),
    /// then wakes every waiter so each re-checks its lock wait timeout.
    /// With a manual clock this is what makes waits time out.
    pub fn tick(&self) -> Result<()> {
        let _wake = WakeAllOnDrop(&self.inner.changed);
        self.lock()?.tick()
    }

    /// Whether session `s` has a statement waiting. Changes nothing, so it
    /// wakes nobody.
    pub fn is_waiting(&self, s: SessionId) -> Result<bool> {
        Ok(self.lock()?.is_waiting(s))
    }

    /// Runs `f` on the engine under the latch (DDL, inspection, purge,
    /// checkpoints), then wakes every waiter, since `f` may have changed
    /// anything. `f` must not leave a session of a [`SharedSession`] with a
    /// statement waiting: only that session's own thread resumes it.
    pub fn with_engine<T>(&self, f: impl FnOnce(&mut Engine) -> T) -> Result<T> {
        let _wake = WakeAllOnDrop(&self.inner.changed);
        let mut engine = self.lock()?;
        Ok(f(&mut engine))
    }
}

/// A session owned by one thread. Dropping it closes the session, rolling
/// back its open transaction, like a client that disconnects.
#[derive(Debug)]
pub struct SharedSession {
    engine: SharedEngine,
    id: SessionId,
    closed: bool,
}

impl SharedSession {
    /// The engine's id of this session.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// The engine this session belongs to.
    pub fn engine(&self) -> &SharedEngine {
        &self.engine
    }

    /// Runs a statement to its end: if it has to wait for a lock, the
    /// thread sleeps (the latch released) until the statement completes,
    /// times out (MySQL 1205, [`Error::LockWaitTimeout`]), is chosen as a
    /// deadlock victim (1213, [`Error::Deadlock`]) or fails otherwise.
    pub fn execute(&self, request: Request) -> Result<Response> {
        let inner = &*self.engine.inner;
        // Declared before the latch guard so that it runs after the latch
        // is released, on every return and on a panic.
        let _wake = WakeAllOnDrop(&inner.changed);
        let mut engine = self.engine.lock()?;
        let mut step = engine.execute(self.id, request)?;
        // A new statement ran: whatever it changed, others may care.
        let mut changed = true;
        let mut may_resume_at_once = true;
        loop {
            if let Step::Done(response) = step {
                return Ok(response);
            }
            let deadline_us = engine.wait_deadline_us(self.id);
            if deadline_us.is_none() && may_resume_at_once {
                // Not a lock wait (a commit waiting for group commit's
                // sync): nothing to sleep for.
                may_resume_at_once = false;
                step = engine.resume(self.id)?;
                changed = true;
                continue;
            }
            if changed {
                // This wait may have made a waiting transaction a deadlock
                // victim; the sleeper must wake to report it.
                inner.changed.notify_all();
            }
            let timeout = deadline_us.map(|deadline_us| {
                let remaining_us = deadline_us.saturating_sub(engine.now_us());
                Duration::from_micros(remaining_us.max(MIN_WAIT_US))
            });
            engine = sync::wait(&inner.changed, engine, timeout).map_err(|_| poisoned())?;
            let before = wait_graph_marks(&engine);
            step = engine.resume(self.id)?;
            changed = wait_graph_marks(&engine) != before;
            may_resume_at_once = true;
        }
    }

    /// Closes the session, rolling back its open transaction, and wakes
    /// every waiter (the rollback released its locks).
    pub fn close(mut self) -> Result<()> {
        self.close_once()
    }

    fn close_once(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let _wake = WakeAllOnDrop(&self.engine.inner.changed);
        self.engine.lock()?.close_session(self.id)
    }
}

impl Drop for SharedSession {
    fn drop(&mut self) {
        // Under loom a panic is the model checker's failure report, and
        // touching its primitives while unwinding aborts the process before
        // the report is printed; the model is over anyway.
        #[cfg(loom)]
        if std::thread::panicking() {
            return;
        }
        // Nobody is left to report a failure to; a halted or poisoned
        // engine holds no locks anyone could still wait for.
        let _ = self.close_once();
    }
}
