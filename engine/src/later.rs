//! Rules of later InnoDB versions: where a newer server (MariaDB 10.11's
//! InnoDB) does by design what InnoDB Plugin 1.0.6 did not, the newer rule
//! is a switch here, off unless [`Config::later`](crate::Config) turns it
//! on. The engine is 1.0.6's; the switches exist for `innosim diff`, which
//! runs a scenario that parted from a newer server again with that
//! server's rules on: a difference the rules explain (the run gets past
//! the step where it parted) is the version's, counted by rule, and
//! anything else is a mismatch. Each rule carries its entry of the
//! reviewed list of version differences ([`LaterRule::difference`]): the
//! statements it concerns, what each version does, why, and where the
//! sources say so.

use std::fmt;

/// One rule of a later version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LaterRule {
    /// A FOREIGN KEY check under READ COMMITTED or READ UNCOMMITTED takes
    /// no gap lock: nothing on the supremum or on the record past the
    /// matches, and a record-only lock on a delete-marked match.
    FkCheckNoGapsUnderReadCommitted,
}

/// An entry of the list of version differences.
#[derive(Debug, Clone, Copy)]
pub struct Difference {
    /// The statements it concerns.
    pub pattern: &'static str,
    /// What InnoDB Plugin 1.0.6 (and innosim) does.
    pub innodb_1_0: &'static str,
    /// What the later version does.
    pub later: &'static str,
    /// Why they differ.
    pub why: &'static str,
    /// Where the sources say so.
    pub source: &'static str,
}

impl LaterRule {
    /// Every rule.
    pub const ALL: [LaterRule; 1] = [LaterRule::FkCheckNoGapsUnderReadCommitted];

    /// The rule's name.
    pub fn name(self) -> &'static str {
        match self {
            LaterRule::FkCheckNoGapsUnderReadCommitted => "fk-check-no-gaps-under-read-committed",
        }
    }

    /// A rule by name.
    pub fn from_name(name: &str) -> Option<LaterRule> {
        LaterRule::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Its entry of the list of version differences.
    pub fn difference(self) -> Difference {
        match self {
            LaterRule::FkCheckNoGapsUnderReadCommitted => Difference {
                pattern: "a transaction at READ COMMITTED or READ UNCOMMITTED inserts a child row \
                          whose parent is missing (1452), or changes a row a constraint \
                          references; another transaction then inserts into the gap the check \
                          passed",
                innodb_1_0: "the check leaves an S lock on the gap after the missing parent (a \
                             next-key lock on the supremum at the end of the index), and the \
                             other insert waits for it until the first transaction ends",
                later: "the check locks no gap under READ COMMITTED or READ UNCOMMITTED, and the \
                        other insert goes ahead",
                why: "InnoDB later took gap locking out of constraint checks under READ \
                      COMMITTED, as it had out of reads; 1.0.6 keeps it at every isolation level \
                      so that a missing parent stays missing",
                source: "InnoDB Plugin 1.0.6 row/row0ins.c row_ins_check_foreign_constraint: \
                         LOCK_ORDINARY on the supremum and LOCK_GAP on the record past the \
                         matches, whatever trx->isolation_level; MariaDB 10.11 \
                         storage/innobase/row/row0ins.cc row_ins_check_foreign_constraint: \
                         skip_gap_lock = (trx->isolation_level <= TRX_ISO_READ_COMMITTED), then \
                         no lock on the supremum or the gap and LOCK_REC_NOT_GAP on a \
                         delete-marked match",
            },
        }
    }

    fn bit(self) -> u64 {
        1 << (self as u64)
    }
}

impl fmt::Display for LaterRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of later rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct LaterRules(u64);

impl LaterRules {
    /// None: InnoDB Plugin 1.0.6's rules.
    pub const NONE: LaterRules = LaterRules(0);

    /// The rules of MariaDB 10.11's InnoDB that differ from 1.0.6's where
    /// innosim knows them.
    pub fn mariadb_10_11() -> LaterRules {
        LaterRule::ALL
            .into_iter()
            .fold(LaterRules::NONE, LaterRules::with)
    }

    /// This set plus `r`.
    pub fn with(self, r: LaterRule) -> LaterRules {
        LaterRules(self.0 | r.bit())
    }

    /// Whether `r` is in the set.
    pub fn has(self, r: LaterRule) -> bool {
        self.0 & r.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The rules in the set.
    pub fn iter(self) -> impl Iterator<Item = LaterRule> {
        LaterRule::ALL.into_iter().filter(move |&r| self.has(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_a_name_and_a_complete_entry() {
        for r in LaterRule::ALL {
            assert_eq!(LaterRule::from_name(r.name()), Some(r));
            let d = r.difference();
            for field in [d.pattern, d.innodb_1_0, d.later, d.why, d.source] {
                assert!(field.len() > 20, "{r}: {field:?}");
            }
            assert!(LaterRules::mariadb_10_11().has(r));
        }
        assert!(LaterRules::NONE.is_empty());
        assert_eq!(
            LaterRules::mariadb_10_11().iter().count(),
            LaterRule::ALL.len()
        );
    }
}
