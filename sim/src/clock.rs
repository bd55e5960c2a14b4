//! [`SimClock`]: simulated time, in microseconds, that moves only when the
//! simulation moves it.
//!
//! The engine schedules its background work (the once-a-second log flush,
//! the page cleaner) off [`Clock::now_us`]; under simulation a second of that
//! time costs no wall time, and two runs of one seed see the same times.
//! Clones share one time, so the harness advances the clock it kept while
//! the engine reads the clone it was given. Time never goes backwards: the
//! trait promises a monotonic clock.

use engine::io::Clock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Simulated microseconds, shared by clones.
#[derive(Debug, Clone, Default)]
pub struct SimClock {
    now_us: Arc<AtomicU64>,
}

impl SimClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `us` microseconds.
    pub fn advance_us(&self, us: u64) {
        self.now_us.fetch_add(us, Ordering::Relaxed);
    }

    /// Moves the clock forward to `us` microseconds.
    ///
    /// # Panics
    ///
    /// If `us` is earlier than now: a monotonic clock cannot go back.
    pub fn set_us(&self, us: u64) {
        let before_us = self.now_us.fetch_max(us, Ordering::Relaxed);
        assert!(
            before_us <= us,
            "the clock cannot go back from {before_us} us to {us} us"
        );
    }
}

impl Clock for SimClock {
    fn now_us(&self) -> u64 {
        self.now_us.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_time() {
        let clock = SimClock::new();
        let engine_side: Box<dyn Clock> = Box::new(clock.clone());
        assert_eq!(engine_side.now_us(), 0);
        clock.advance_us(1_500);
        assert_eq!(engine_side.now_us(), 1_500);
        clock.set_us(1_000_000);
        assert_eq!(engine_side.now_us(), 1_000_000);
        clock.set_us(1_000_000);
        assert_eq!(clock.now_us(), 1_000_000);
    }

    #[test]
    #[should_panic(expected = "cannot go back")]
    fn time_never_goes_back() {
        let clock = SimClock::new();
        clock.advance_us(10);
        clock.set_us(9);
    }
}
