//! The synchronization primitives of the thread-safe wrapper
//! ([`crate::shared`]), switchable to the loom model checker.
//!
//! A normal build uses `std::sync`; a build with `RUSTFLAGS="--cfg loom"`
//! uses loom's versions of the same types, so `tests/loom.rs` can explore
//! every interleaving of the wrapper's latch and condition variable. Only
//! the wrapper may use this module: the step-driven engine itself is
//! single-threaded and must stay deterministic (see [`crate::io`]).
//!
//! Loom has no timed waits (its `wait_timeout` never times out), so
//! [`wait`] takes the timeout as a hint that a loom build ignores: under
//! loom a waiter wakes only when another thread notifies, and the tests
//! drive lock wait timeouts by advancing a manual clock and calling
//! [`crate::shared::SharedEngine::tick`].

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use std::sync::LockResult;
use std::time::Duration;

/// Waits on `condvar`, releasing `guard`'s mutex until woken. With a
/// `timeout`, a std build also wakes once it has passed; a loom build
/// waits for a notification only.
pub(crate) fn wait<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Option<Duration>,
) -> LockResult<MutexGuard<'a, T>> {
    #[cfg(not(loom))]
    if let Some(timeout) = timeout {
        return match condvar.wait_timeout(guard, timeout) {
            Ok((guard, _)) => Ok(guard),
            Err(poisoned) => Err(std::sync::PoisonError::new(poisoned.into_inner().0)),
        };
    }
    #[cfg(loom)]
    let _ = timeout;
    condvar.wait(guard)
}
