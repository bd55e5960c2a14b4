//! Read views: which transactions' changes a consistent read sees.
//! Mirrors InnoDB's `read0read.cc`.
//!
//! A view taken when the next transaction id was `low_limit_id` and the
//! transactions in `active` had not committed sees a change by transaction
//! `t` iff `t` is the view's creator, or `t < up_limit_id` (committed before
//! anything still active started), or `t < low_limit_id` and `t` is not in
//! `active`. Commit numbers come from the same counter as transaction ids,
//! so `low_limit_id` is also the view's purge limit: every transaction with
//! a commit number below it committed before the view existed.

/// A consistent-read snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadView {
    /// The transaction the view belongs to (its own changes are visible).
    pub creator: u64,
    /// Ids at or above this are invisible.
    pub low_limit_id: u64,
    /// Ids below this are visible.
    pub up_limit_id: u64,
    /// Transactions active when the view was taken (sorted, creator
    /// excluded): invisible.
    pub active: Vec<u64>,
}

impl ReadView {
    /// Whether a change by transaction `trx_id` is visible.
    #[inline]
    pub fn sees(&self, trx_id: u64) -> bool {
        if trx_id == self.creator || trx_id < self.up_limit_id {
            return true;
        }
        if trx_id >= self.low_limit_id {
            return false;
        }
        self.active.binary_search(&trx_id).is_err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visibility_rules() {
        let v = ReadView {
            creator: 12,
            low_limit_id: 20,
            up_limit_id: 10,
            active: vec![10, 15],
        };
        assert!(v.sees(5));
        assert!(!v.sees(10));
        assert!(v.sees(11));
        assert!(v.sees(12));
        assert!(!v.sees(15));
        assert!(v.sees(19));
        assert!(!v.sees(20));
        assert!(!v.sees(100));
    }
}
