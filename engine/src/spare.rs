//! Per-thread lists of spare buffers, bounded: what a thread's engine let
//! go of (a dropped pool's page buffers and compressed chunks, an ended
//! mini-transaction's vectors), kept for its next user instead of being
//! freed and allocated (and zeroed) again. The simulator runs each seed's
//! engines, one after every crash, on one thread, so the next user is
//! usually moments away.
//!
//! Each list is the value of a `thread_local!` in the module that owns
//! the buffers; [`take`] and [`give`] work on it.

use std::cell::RefCell;
use std::thread::LocalKey;

/// A list of at most `cap` spares.
pub(crate) struct Spares<T> {
    list: RefCell<Vec<T>>,
    cap: usize,
}

impl<T> Spares<T> {
    /// An empty list that keeps at most `cap` spares.
    pub(crate) const fn new(cap: usize) -> Spares<T> {
        Spares {
            list: RefCell::new(Vec::new()),
            cap,
        }
    }
}

/// A spare from this thread's list `key`, if it holds one.
pub(crate) fn take<T>(key: &'static LocalKey<Spares<T>>) -> Option<T> {
    key.try_with(|s| s.list.borrow_mut().pop()).ok().flatten()
}

/// Keeps `item` in this thread's list `key`; drops it when the list is
/// full, or gone (during the thread's teardown).
pub(crate) fn give<T>(key: &'static LocalKey<Spares<T>>, item: T) {
    let refused = key.try_with(|s| {
        let mut list = s.list.borrow_mut();
        if list.len() < s.cap {
            list.push(item);
            None
        } else {
            Some(item)
        }
    });
    // Dropped here, with no list borrowed.
    drop(refused);
}

/// How many spares this thread's list `key` holds.
#[cfg(test)]
pub(crate) fn held<T>(key: &'static LocalKey<Spares<T>>) -> usize {
    key.with(|s| s.list.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static TWO: Spares<Vec<u8>> = const { Spares::new(2) };
    }

    /// Spares come back last in, first out, and no more than the bound
    /// are kept.
    #[test]
    fn a_list_keeps_up_to_its_bound_and_hands_the_last_back_first() {
        assert_eq!(take(&TWO), None);
        for n in 1..=3 {
            give(&TWO, vec![n]);
        }
        assert_eq!(held(&TWO), 2, "the third was dropped");
        assert_eq!(take(&TWO), Some(vec![2]));
        assert_eq!(take(&TWO), Some(vec![1]));
        assert_eq!(take(&TWO), None);
    }
}
