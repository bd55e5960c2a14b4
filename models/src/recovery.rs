//! The recovery oracle: what state may a database recover to?
//!
//! Transactions are recorded in commit order with their effects. After a
//! crash, the recovered state must equal the state after the first `k`
//! committed transactions, for some `k` between the number of commits the
//! flush setting promised to keep and the number that were acknowledged
//! (a commit whose redo reached the disk before it was acknowledged may
//! survive too). Nothing else is allowed: no partial transaction, no
//! effect of a transaction that never committed, no reordering.
//!
//! | innodb_flush_log_at_trx_commit | process crash | power loss |
//! | --- | --- | --- |
//! | 1 | all acknowledged | all acknowledged |
//! | 2 | all acknowledged | those synced (about the last second may go) |
//! | 0 | those written (about the last second may go) | those synced |

use crate::value::{fmt_key, Db, ModelValue, Row};

/// One row change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Table name.
    pub table: String,
    /// Primary key.
    pub key: Vec<ModelValue>,
    /// The new row, or `None` for a delete.
    pub row: Option<Row>,
}

/// What a committed transaction did, in statement order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnEffects {
    /// Changes in order; later ones win.
    pub writes: Vec<Write>,
}

/// How far a commit got towards the disk before the crash, as the harness
/// observed it through the storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Durability {
    /// Acknowledged to the client, its redo maybe only in memory.
    Acknowledged,
    /// Its redo was handed to the OS (survives a process crash).
    Written,
    /// Its redo was synced (survives a power loss).
    Synced,
}

/// Committed transactions in commit order.
#[derive(Debug, Clone, Default)]
pub struct CommitHistory {
    initial: Db,
    commits: Vec<TxnEffects>,
    /// Tables compared by the order of their rows (see [`Db::same_rows`]).
    ordinal: Vec<String>,
}

/// The oracle's judgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryVerdict {
    /// The state equals the state after the first `k` commits.
    Prefix(usize),
    /// It equals no allowed prefix.
    Violation(String),
}

impl CommitHistory {
    /// A history starting from `initial`.
    pub fn new(initial: Db) -> Self {
        CommitHistory {
            initial,
            commits: Vec::new(),
            ordinal: Vec::new(),
        }
    }

    /// The same history, comparing these tables by the order of their
    /// rows: tables without a primary key, whose rows the model keys by
    /// its own insertion order and a recovered state by position.
    pub fn ordinal(mut self, tables: Vec<String>) -> Self {
        self.ordinal = tables;
        self
    }

    /// Records a commit (in commit order).
    pub fn commit(&mut self, effects: TxnEffects) {
        self.commits.push(effects);
    }

    /// Number of commits recorded.
    pub fn len(&self) -> usize {
        self.commits.len()
    }

    /// Whether nothing was committed.
    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    /// The state after the first `k` commits.
    pub fn state_after(&self, k: usize) -> Db {
        let mut db = self.initial.clone();
        for c in &self.commits[..k] {
            apply(&mut db, c);
        }
        db
    }

    /// The state after all commits.
    pub fn current(&self) -> Db {
        self.state_after(self.commits.len())
    }

    /// Judges a recovered state: it must equal the state after `k` commits
    /// for some `k` in `min_k..=max_k`.
    pub fn judge(&self, recovered: &Db, min_k: usize, max_k: usize) -> RecoveryVerdict {
        let max_k = max_k.min(self.commits.len());
        if min_k > max_k {
            return RecoveryVerdict::Violation(format!(
                "the harness promised {min_k} commits but only {max_k} happened"
            ));
        }
        let mut db = self.state_after(min_k);
        for k in min_k..=max_k {
            if k > min_k {
                apply(&mut db, &self.commits[k - 1]);
            }
            if db.same_rows(recovered, &self.ordinal) {
                return RecoveryVerdict::Prefix(k);
            }
        }
        // No prefix matches: describe the closest (only now, as diffs cost
        // far more than comparisons).
        let mut db = self.state_after(min_k);
        let mut best = (usize::MAX, String::new());
        let recovered = recovered.renumbered(&self.ordinal);
        for k in min_k..=max_k {
            if k > min_k {
                apply(&mut db, &self.commits[k - 1]);
            }
            let d = recovered.diff_named(
                "the recovered state",
                &db.renumbered(&self.ordinal),
                &format!("the model after {k} commits"),
            );
            let n = d.matches(';').count();
            if n < best.0 {
                best = (n, format!("closest allowed prefix k={k}: {d}"));
            }
        }
        RecoveryVerdict::Violation(format!(
            "recovered state equals no state after k in {min_k}..={max_k} commits; {}",
            best.1
        ))
    }
}

/// Applies a transaction's effects to a state.
pub fn apply(db: &mut Db, t: &TxnEffects) {
    for w in &t.writes {
        let table = db.table_mut(&w.table);
        match &w.row {
            Some(r) => {
                table.insert(w.key.clone(), r.clone());
            }
            None => {
                table.remove(&w.key);
            }
        }
    }
}

/// Describes a write, for failure messages.
pub fn describe(w: &Write) -> String {
    match &w.row {
        Some(r) => format!("{}: put {} = {}", w.table, fmt_key(&w.key), fmt_key(r)),
        None => format!("{}: delete {}", w.table, fmt_key(&w.key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(k: i128, v: i128) -> Write {
        Write {
            table: "t".into(),
            key: vec![ModelValue::Int(k)],
            row: Some(vec![ModelValue::Int(k), ModelValue::Int(v)]),
        }
    }

    #[test]
    fn judges_prefixes_and_rejects_everything_else() {
        let mut h = CommitHistory::new(Db::with_tables(["t"]));
        h.commit(TxnEffects {
            writes: vec![put(1, 1), put(2, 2)],
        });
        h.commit(TxnEffects {
            writes: vec![put(1, 10)],
        });
        assert_eq!(h.judge(&h.state_after(1), 0, 2), RecoveryVerdict::Prefix(1));
        assert_eq!(h.judge(&h.state_after(2), 0, 2), RecoveryVerdict::Prefix(2));
        // A promised commit missing is a violation.
        assert!(matches!(
            h.judge(&h.state_after(1), 2, 2),
            RecoveryVerdict::Violation(_)
        ));
        // A partial transaction is a violation.
        let mut partial = h.state_after(0);
        apply(
            &mut partial,
            &TxnEffects {
                writes: vec![put(1, 1)],
            },
        );
        assert!(matches!(
            h.judge(&partial, 0, 2),
            RecoveryVerdict::Violation(_)
        ));
    }

    #[test]
    fn ordinal_tables_are_judged_by_the_order_of_their_rows() {
        // Rows keyed by the model's insertion numbers (3, 8), the last
        // value of each row the same number; the recovered state numbers
        // them by position.
        let row = |v: i128, seq: i128| vec![ModelValue::Int(v), ModelValue::Int(seq)];
        let ins = |v: i128, seq: i128| Write {
            table: "h".into(),
            key: vec![ModelValue::Int(seq)],
            row: Some(row(v, seq)),
        };
        let mut h = CommitHistory::new(Db::with_tables(["h"])).ordinal(vec!["h".into()]);
        h.commit(TxnEffects {
            writes: vec![ins(5, 3)],
        });
        h.commit(TxnEffects {
            writes: vec![ins(5, 8)],
        });
        let recovered = |vals: &[i128]| {
            let mut db = Db::with_tables(["h"]);
            for (i, &v) in vals.iter().enumerate() {
                db.table_mut("h")
                    .insert(vec![ModelValue::Int(i as i128)], row(v, i as i128));
            }
            db
        };
        assert_eq!(h.judge(&recovered(&[5]), 0, 2), RecoveryVerdict::Prefix(1));
        assert_eq!(
            h.judge(&recovered(&[5, 5]), 0, 2),
            RecoveryVerdict::Prefix(2)
        );
        // A row too many, or a value changed, is no prefix.
        let RecoveryVerdict::Violation(v) = h.judge(&recovered(&[5, 5, 5]), 0, 2) else {
            panic!("three rows where two were inserted");
        };
        assert!(v.contains("the recovered state has key (2)"), "{v}");
        assert!(matches!(
            h.judge(&recovered(&[6]), 0, 2),
            RecoveryVerdict::Violation(_)
        ));
        // Without the ordinal rule the positions would not match the keys.
        let plain = CommitHistory::new(h.state_after(2));
        assert!(matches!(
            plain.judge(&recovered(&[5, 5]), 0, 0),
            RecoveryVerdict::Violation(_)
        ));
    }
}
