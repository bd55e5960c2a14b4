//! Workload profiles: named, validated parameter sets that say what a
//! simulated run does (sessions, transactions, statement mix, tables, crash
//! count) and which faults a seed may switch on (swarm testing: each seed
//! turns on a random subset of the profile's fault kinds).

use serde::{Deserialize, Serialize};

/// Fault kinds a profile allows; each seed picks a subset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// Crashes where everything written survives.
    ProcessCrash,
    /// Crashes where unsynced writes are lost or survive whole.
    PowerLoss,
    /// Power losses that also tear writes at sector granularity.
    TornWrites,
    /// fsync fails with EIO.
    FsyncFailure,
    /// The disk fills up.
    DiskFull,
}

/// A workload profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Its name.
    pub name: String,
    /// Concurrent sessions.
    pub sessions: usize,
    /// Transactions per run, across sessions.
    pub transactions: usize,
    /// Statements per transaction, at most.
    pub max_statements: usize,
    /// Rows the keys are drawn from (smaller means more conflicts).
    pub key_space: u64,
    /// Probability that a transaction ends in ROLLBACK.
    pub p_rollback: f64,
    /// Probability that a statement is a savepoint or a rollback to one.
    pub p_savepoint: f64,
    /// Probability that a row of the long-column table gets a value long
    /// enough to go off page.
    pub p_long_value: f64,
    /// Crash-and-recover cycles per run.
    pub crashes: usize,
    /// Fault kinds seeds may switch on.
    pub faults: Vec<FaultKind>,
    /// Buffer pool sizes in pages, smallest and largest.
    pub pool_pages: (usize, usize),
}

impl Profile {
    /// The profiles by name.
    pub fn named(name: &str) -> Option<Profile> {
        let base = Profile {
            name: name.to_string(),
            sessions: 4,
            transactions: 200,
            max_statements: 6,
            key_space: 400,
            p_rollback: 0.15,
            p_savepoint: 0.05,
            p_long_value: 0.1,
            crashes: 2,
            faults: vec![
                FaultKind::ProcessCrash,
                FaultKind::PowerLoss,
                FaultKind::TornWrites,
            ],
            pool_pages: (16, 256),
        };
        Some(match name {
            "default" => base,
            "small" => Profile {
                sessions: 2,
                transactions: 30,
                max_statements: 4,
                key_space: 40,
                crashes: 1,
                pool_pages: (8, 32),
                ..base
            },
            "long-columns" => Profile {
                p_long_value: 0.6,
                transactions: 120,
                ..base
            },
            "crash-heavy" => Profile {
                transactions: 150,
                crashes: 6,
                pool_pages: (8, 64),
                ..base
            },
            "io-errors" => Profile {
                faults: vec![
                    FaultKind::ProcessCrash,
                    FaultKind::PowerLoss,
                    FaultKind::TornWrites,
                    FaultKind::FsyncFailure,
                    FaultKind::DiskFull,
                ],
                ..base
            },
            _ => return None,
        })
    }

    /// Every profile name.
    pub const NAMES: [&'static str; 5] = [
        "default",
        "small",
        "long-columns",
        "crash-heavy",
        "io-errors",
    ];

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        let p_ok = |p: f64| (0.0..=1.0).contains(&p);
        if self.sessions == 0 || self.sessions > 64 {
            return Err(format!("sessions must be 1..=64, not {}", self.sessions));
        }
        if self.max_statements == 0 || self.key_space == 0 {
            return Err("max_statements and key_space must be positive".into());
        }
        if !p_ok(self.p_rollback) || !p_ok(self.p_savepoint) || !p_ok(self.p_long_value) {
            return Err("probabilities must be in 0..=1".into());
        }
        if self.pool_pages.0 < 8 || self.pool_pages.1 < self.pool_pages.0 {
            return Err(format!(
                "pool_pages must be at least 8 and ordered, not {:?}",
                self.pool_pages
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_profiles_are_valid_and_round_trip_as_data() {
        for n in Profile::NAMES {
            let p = Profile::named(n).unwrap();
            p.validate().unwrap();
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), p);
        }
        assert!(Profile::named("nope").is_none());
        let bad = r#"{"name":"x","sessions":1,"transactions":1,"max_statements":1,"key_space":1,"p_rollback":0,"p_savepoint":0,"p_long_value":0,"crashes":0,"faults":[],"pool_pages":[8,8],"extra":1}"#;
        assert!(
            serde_json::from_str::<Profile>(bad).is_err(),
            "unknown fields are refused"
        );
    }
}
