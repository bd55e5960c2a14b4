//! A run's interleaving as plan data: the scheduler's turns (which
//! planned transaction stepped, after how much think time) and what each
//! crash lost. A seed's scheduler draws its choices from a generator, so
//! dropping one statement moves every later choice: a failure that needs
//! two sessions to meet in a certain order goes with it. The shrinker
//! records a failing run's schedule into its plan first (the run is the
//! same, turn for turn), and then drops statements and transactions
//! together with their turns, so the rest keep their order. Like a crash
//! anchored to a statement, a turn names planned work, never an index
//! into something that moves: it steps the session running its
//! transaction (whatever that session does next; `at` is what keeps a
//! turn with its statement when the shrinker drops work).
//!
//! A turn is written `txn/at +think @session`: the planned transaction
//! (`-` for a turn on which a session had nothing to do), where in it the
//! step was (0: its start, BEGIN; `k + 1`: its statement `k`, a resumed
//! wait included; `n + 1` for a transaction of `n` statements: its COMMIT
//! or ROLLBACK), the simulated microseconds of think time before it, and
//! the session the scheduler picked.

use crate::storage::{CrashMode, PowerLossPolicy};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One turn of the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// The planned transaction stepped; `None` when the picked session had
    /// nothing to run.
    pub txn: Option<usize>,
    /// Where in it (see the module's documentation).
    pub at: usize,
    /// Think time before the turn, simulated microseconds.
    pub think_us: u64,
    /// The session the scheduler picked.
    pub session: usize,
}

impl fmt::Display for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.txn {
            Some(t) => write!(f, "{t}/{}", self.at)?,
            None => f.write_str("-")?,
        }
        write!(f, " +{} @{}", self.think_us, self.session)
    }
}

impl std::str::FromStr for Turn {
    type Err = String;

    fn from_str(s: &str) -> Result<Turn, String> {
        let bad =
            || format!("a turn is 'txn/at +think @session' or '- +think @session', not '{s}'");
        let mut parts = s.split(' ');
        let (head, think, session) = (parts.next(), parts.next(), parts.next());
        if parts.next().is_some() {
            return Err(bad());
        }
        let num = |x: Option<&str>, prefix: char| -> Result<u64, String> {
            x.and_then(|x| x.strip_prefix(prefix))
                .and_then(|x| x.parse().ok())
                .ok_or_else(bad)
        };
        let (txn, at) = match head.ok_or_else(bad)? {
            "-" => (None, 0),
            h => {
                let (t, a) = h.split_once('/').ok_or_else(bad)?;
                (
                    Some(t.parse().map_err(|_| bad())?),
                    a.parse().map_err(|_| bad())?,
                )
            }
        };
        Ok(Turn {
            txn,
            at,
            think_us: num(think, '+')?,
            session: usize::try_from(num(session, '@')?).map_err(|_| bad())?,
        })
    }
}

impl Serialize for Turn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Turn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Turn, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What a crash lost, as the runner drew it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum CrashDraw {
    /// The process died; the OS kept every write.
    Process,
    /// The power went: each unsynced operation survives with even odds.
    Power {
        /// The policy's generator.
        seed: u64,
    },
    /// The power went and tore writes.
    Torn {
        /// The policy's generator.
        seed: u64,
        /// The sector size the tears follow.
        sector_bytes: u32,
    },
}

impl CrashDraw {
    /// The storage's crash mode for it.
    pub fn mode(self) -> CrashMode {
        match self {
            CrashDraw::Process => CrashMode::ProcessCrash,
            CrashDraw::Power { seed } => CrashMode::PowerLoss(PowerLossPolicy::Random {
                seed,
                sector_bytes: 512,
                p_survive: 0.5,
                p_torn: 0.0,
            }),
            CrashDraw::Torn { seed, sector_bytes } => {
                CrashMode::PowerLoss(PowerLossPolicy::Random {
                    seed,
                    sector_bytes,
                    p_survive: 0.4,
                    p_torn: 0.3,
                })
            }
        }
    }
}

/// A recorded interleaving.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// The scheduler's turns, in order; once they run out it draws again.
    pub turns: Vec<Turn>,
    /// What each crash of the workload lost (the last: the final crash),
    /// in order; once they run out they are drawn again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crashes: Vec<CrashDraw>,
}

impl Schedule {
    /// Checks it against the plan's transactions (`statements[t]`: how
    /// many statements transaction `t` has). A turn's session is only a
    /// preference (a plan with fewer sessions starts the transaction on
    /// another idle one).
    pub fn validate(&self, statements: &[usize]) -> Result<(), String> {
        for t in &self.turns {
            let ok = t.think_us <= crate::plan::MAX_THINK_US
                && match t.txn {
                    Some(i) => statements.get(i).is_some_and(|&n| t.at <= n + 1),
                    None => t.at == 0,
                };
            if !ok {
                return Err(format!("turn '{t}' names no step of the plan"));
            }
        }
        for c in &self.crashes {
            if let CrashDraw::Torn { sector_bytes, .. } = c {
                if !sector_bytes.is_power_of_two() || !(512..=65_536).contains(sector_bytes) {
                    return Err(format!(
                        "a torn-writes crash needs a sector of 512 to 65536 bytes, a power of two, not {sector_bytes}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Drops the turns `gone` picks. Their think time passes anyway, on the
    /// next turn that stays, so the rest keep their simulated instants
    /// (lock wait timeouts, the once-a-second log flush and purge stay
    /// where they were).
    fn drop_turns(&mut self, gone: impl Fn(&Turn) -> bool) {
        let mut carried: u64 = 0;
        self.turns.retain_mut(|t| {
            if gone(t) {
                carried = carried.saturating_add(t.think_us);
                false
            } else {
                t.think_us = t.think_us.saturating_add(std::mem::take(&mut carried));
                true
            }
        });
    }

    /// Transactions `range` are gone: their turns go, later ones move.
    pub fn remove_transactions(&mut self, range: std::ops::Range<usize>) {
        let n = range.len();
        self.drop_turns(|t| t.txn.is_some_and(|i| range.contains(&i)));
        for t in &mut self.turns {
            if let Some(i) = t.txn.as_mut().filter(|i| **i >= range.end) {
                *i -= n;
            }
        }
    }

    /// A transaction came in at `at`: later ones move.
    pub fn insert_transaction(&mut self, at: usize) {
        for t in &mut self.turns {
            if let Some(i) = t.txn.as_mut().filter(|i| **i >= at) {
                *i += 1;
            }
        }
    }

    /// Statement `statement` of transaction `txn` is gone: its turns go,
    /// those of its later statements move.
    pub fn remove_statement(&mut self, txn: usize, statement: usize) {
        let at = statement + 1;
        self.drop_turns(|t| t.txn == Some(txn) && t.at == at);
        for t in &mut self.turns {
            if t.txn == Some(txn) && t.at > at {
                t.at -= 1;
            }
        }
    }

    /// A statement came in as statement `statement` of `txn`: the turns
    /// of that place and later move.
    pub fn insert_statement(&mut self, txn: usize, statement: usize) {
        for t in &mut self.turns {
            if t.txn == Some(txn) && t.at > statement {
                t.at += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_read_back_as_written_and_bad_ones_are_refused() {
        for t in [
            Turn {
                txn: Some(3),
                at: 2,
                think_us: 1234,
                session: 1,
            },
            Turn {
                txn: None,
                at: 0,
                think_us: 0,
                session: 0,
            },
        ] {
            assert_eq!(t.to_string().parse::<Turn>(), Ok(t));
            let json = serde_json::to_string(&t).expect("serializes");
            assert_eq!(serde_json::from_str::<Turn>(&json).expect("parses"), t);
        }
        assert_eq!("3/2 +1234 @1".parse::<Turn>().map(|t| t.txn), Ok(Some(3)));
        for bad in [
            "",
            "3 +1 @1",
            "3/x +1 @1",
            "3/1 1 @1",
            "3/1 +1 1",
            "- +1 @1 x",
        ] {
            assert!(bad.parse::<Turn>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dropping_work_drops_its_turns_and_moves_the_rest() {
        let turn = |txn: Option<usize>, at| Turn {
            txn,
            at,
            think_us: 1,
            session: 0,
        };
        let mut s = Schedule {
            turns: vec![
                turn(Some(0), 0),
                turn(Some(1), 0),
                turn(Some(0), 1),
                turn(Some(1), 1),
                turn(None, 0),
                turn(Some(0), 2),
                turn(Some(2), 0),
                turn(Some(0), 3),
            ],
            crashes: vec![],
        };
        s.validate(&[2, 1, 0]).expect("valid");
        let total = |s: &Schedule| s.turns.iter().map(|t| t.think_us).sum::<u64>();
        assert_eq!(total(&s), 8);
        assert!(s.validate(&[1, 1, 0]).is_err(), "txn 0 has no 3");
        assert!(s.validate(&[2, 1]).is_err(), "no txn 2");
        let mut long = s.clone();
        long.turns[0].think_us = u64::MAX;
        assert!(
            long.validate(&[2, 1, 0]).is_err(),
            "a think time past a minute"
        );
        let mut torn = s.clone();
        torn.crashes = vec![CrashDraw::Torn {
            seed: 1,
            sector_bytes: 4096,
        }];
        torn.validate(&[2, 1, 0]).expect("a 4 KiB sector");
        torn.crashes[0] = CrashDraw::Torn {
            seed: 1,
            sector_bytes: 3,
        };
        assert!(torn.validate(&[2, 1, 0]).is_err(), "a sector of 3 bytes");
        // Statement 0 of txn 0 goes: its turn (at 1) too; at 2, 3 move.
        s.remove_statement(0, 0);
        let of0: Vec<usize> = s
            .turns
            .iter()
            .filter(|t| t.txn == Some(0))
            .map(|t| t.at)
            .collect();
        assert_eq!(of0, vec![0, 1, 2]);
        s.remove_transactions(1..2);
        assert!(s.turns.iter().all(|t| t.txn != Some(2)));
        assert_eq!(
            s.turns.iter().filter(|t| t.txn == Some(1)).count(),
            1,
            "txn 2 is txn 1 now"
        );
        assert_eq!(total(&s), 8, "the think time of dropped turns passes on");
        s.insert_transaction(0);
        s.insert_statement(1, 0);
        let places: Vec<(Option<usize>, usize)> = s.turns.iter().map(|t| (t.txn, t.at)).collect();
        assert_eq!(
            places,
            vec![
                (Some(1), 0),
                (None, 0),
                (Some(1), 2),
                (Some(2), 0),
                (Some(1), 3)
            ],
            "a start stays at 0, the statements after the new one move"
        );
    }
}
