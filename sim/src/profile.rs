//! Workload profiles: named, validated parameter sets that say what a
//! simulated run does (sessions, transactions, statement mix, tables, crash
//! count) and which faults a seed may switch on (swarm testing: each seed
//! turns on a random subset of the profile's fault kinds).
//!
//! # The profiles
//!
//! `default`, `small`, `long-columns`, `crash-heavy`, `io-errors`, `compressed` (every table
//! ROW_FORMAT=COMPRESSED at KEY_BLOCK_SIZE 1 or 2, long columns, pools of 8 to 32 pages, every
//! fault kind), and the lock profiles `hot-rows`, `oltp` (sysbench's oltp_read_write shape) and
//! `transfer` (money transfers whose total must never change). In `default`, `crash-heavy` and
//! `io-errors` a table in five is compressed, at any KEY_BLOCK_SIZE. A name with `+timed` runs
//! the profile on the time-driven scheduler, and a latency preset after it
//! (`oltp+timed+seeds-disk`) prices its I/O; the [crate root](crate) says how, and which fault
//! kinds each profile may switch on (its fault model).

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
    /// Recovery itself crashes, at one of its I/O operations, possibly
    /// several times in a row (each crash a process crash or, where the
    /// seed has them, a power loss).
    RecoveryCrash,
    /// Bits of the data files flip at rest, at every restart: page
    /// validation must catch what is read, and nothing wrong may be
    /// returned as data.
    BitRot,
    /// A page write of a data file lands on another page of its file, just
    /// before a crash: recovery must rebuild the page that missed its write
    /// from redo, and page validation must catch the page it landed on
    /// (or the doublewrite buffer repair it).
    MisdirectedWrite,
    /// Creates, removes and renames are durable only once the directory
    /// is synced (POSIX): a power loss undoes the ones not yet synced, so
    /// the engine must sync the directory after creating a tablespace.
    LostNamespaceOps,
}

impl FaultKind {
    /// Kinds added after plans were first saved: a plan draws them after
    /// everything else, so that the plans of a seed without them are what
    /// they were before.
    pub fn drawn_last(self) -> bool {
        matches!(self, FaultKind::RecoveryCrash | FaultKind::BitRot)
    }

    /// Kinds drawn from a generator of their own (after the drawn-last
    /// ones existed), so that adding them changed no other draw.
    pub fn drawn_apart(self) -> bool {
        matches!(self, FaultKind::MisdirectedWrite)
    }

    /// Kinds drawn with the plan's DDL, from the generator of its own
    /// that came with them.
    pub fn drawn_with_ddl(self) -> bool {
        matches!(self, FaultKind::LostNamespaceOps)
    }
}

/// The most sessions a plan runs (seeds/003 measured up to 512 clients).
pub const MAX_SESSIONS: usize = 1024;

/// What a step costs the server's processors under time-driven
/// scheduling (`runner::timed`), from the engine's own counters of the
/// work it did: per engine call, per page it fixed in the buffer pool, and
/// per KiB it compressed or decompressed. A step's processor time runs on
/// the earliest free of `cores` (none: processors cost nothing), before
/// its I/O. Nanoseconds, so that small costs add up exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuModel {
    /// Processors (0: processor time is free).
    pub cores: usize,
    /// Per engine call (a statement, or a step of one).
    pub call_ns: u64,
    /// Per page fixed in the buffer pool (found or read).
    pub page_ns: u64,
    /// Per KiB of page compressed (each attempt, at its page size).
    pub compress_ns_per_kib: u64,
    /// Per KiB of page decompressed.
    pub decompress_ns_per_kib: u64,
}

impl CpuModel {
    /// No processor cost.
    pub const FREE: CpuModel = CpuModel {
        cores: 0,
        call_ns: 0,
        page_ns: 0,
        compress_ns_per_kib: 0,
        decompress_ns_per_kib: 0,
    };

    /// Whether processor time costs nothing.
    pub fn is_free(&self) -> bool {
        self.cores == 0
    }
}

/// The shape of a profile's transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// A random mix of inserts, updates, deletes, reads and savepoints
    /// over both tables.
    #[default]
    Mixed,
    /// Short transactions on a handful of rows of `sb`: updates and locking
    /// reads, so most statements wait and deadlocks are common.
    HotRows,
    /// sysbench's oltp_read_write on a preloaded `sb`: ten point selects,
    /// a range read, an indexed and a non-indexed update, a delete and an
    /// insert of the same id.
    Oltp,
    /// sysbench's oltp_write_only on a preloaded `sb`: oltp_read_write's
    /// transaction without its reads (an indexed and a non-indexed update,
    /// a delete and an insert of the same id).
    OltpWriteOnly,
    /// sysbench's oltp_insert: one autocommit insert a transaction, of the
    /// next id past the preloaded ones (sysbench's auto-increment, drawn in
    /// plan order) and a random `k`.
    OltpInsert,
    /// Money transfers between preloaded accounts of `sb` (the balance is
    /// `k`): both accounts read FOR UPDATE in random order, then updated;
    /// the total never changes.
    Transfer,
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
    /// The transactions' shape.
    #[serde(default)]
    pub shape: Shape,
    /// When set, each seed draws its session count from this range
    /// (instead of `sessions`).
    #[serde(default)]
    pub sessions_range: Option<(usize, usize)>,
    /// innodb_lock_wait_timeout range, seconds.
    #[serde(default = "default_timeouts")]
    pub lock_wait_timeout_s: (u64, u64),
    /// Probability that a read is a locking read (FOR UPDATE or LOCK IN
    /// SHARE MODE) in the mixed shape.
    #[serde(default)]
    pub p_locking_read: f64,
    /// Whether transactions run at random isolation levels (READ
    /// UNCOMMITTED, READ COMMITTED, REPEATABLE READ, SERIALIZABLE).
    #[serde(default)]
    pub mixed_isolation: bool,
    /// Rows of `sb` loaded before the workload.
    #[serde(default)]
    pub preload: u64,
    /// Simulated fsync latency, microseconds.
    #[serde(default)]
    pub sync_latency_us: u64,
    /// The most simulated time that passes between two steps of the
    /// scheduler (drawn uniformly from 0 up to it): the clients' think
    /// time and round trip. It sets how fast statements arrive, so a
    /// throughput in simulated seconds depends on it.
    #[serde(default = "default_think_us")]
    pub think_us: u64,
    /// Probability that a table of the plan (`sb`, `docs`, a drawn table)
    /// is ROW_FORMAT=COMPRESSED instead of its drawn format.
    #[serde(default)]
    pub p_compressed: f64,
    /// The KEY_BLOCK_SIZEs a compressed table draws from.
    #[serde(default = "default_key_block_sizes")]
    pub key_block_sizes: Vec<u32>,
    /// Time-driven scheduling (`runner::timed`): sessions overlap in
    /// simulated time, each step costing its I/O's latency.
    #[serde(default)]
    pub timed: bool,
    /// What a step costs the processors under time-driven scheduling.
    #[serde(default)]
    pub cpu: CpuModel,
    /// Under time-driven scheduling, the chance that a client pauses inside
    /// its transaction after a statement, for up to twice the lock wait
    /// timeout (so that waits for its locks time out, as on a server);
    /// 0 for a steady workload.
    #[serde(default = "default_p_long_pause")]
    pub p_long_pause: f64,
    /// What each storage operation costs in simulated time, where the
    /// profile says (a preset: [`crate::storage::faults::Latency::preset`]);
    /// otherwise only syncs cost, `sync_latency_us` each.
    #[serde(default)]
    pub latency: Option<crate::storage::faults::Latency>,
}

/// The default chance of a long pause inside a transaction: one statement
/// in a hundred.
pub fn default_p_long_pause() -> f64 {
    0.01
}

/// Every KEY_BLOCK_SIZE.
pub fn default_key_block_sizes() -> Vec<u32> {
    vec![1, 2, 4, 8, 16]
}

/// The default think time bound: 2 ms.
pub fn default_think_us() -> u64 {
    2_000
}

fn default_timeouts() -> (u64, u64) {
    (1, 5)
}

impl Profile {
    /// The profiles by name; `NAME+timed` is profile NAME with time-driven
    /// scheduling ([`Profile::timed`]), and `NAME+PRESET` profile NAME on a
    /// latency preset's disk ([`crate::storage::faults::Latency::preset`]:
    /// `oltp+timed+seeds-disk` syncs in about a millisecond, and its
    /// timeline draws each sync as long as it took).
    pub fn named(name: &str) -> Option<Profile> {
        if let Some((base, preset)) = name.rsplit_once('+') {
            if let Some(latency) = crate::storage::faults::Latency::preset(preset) {
                return Profile::named(base)
                    .filter(|p| p.latency.is_none())
                    .map(|p| Profile {
                        name: name.to_string(),
                        sync_latency_us: latency.mean_sync_us() as u64,
                        latency: Some(latency),
                        ..p
                    });
            }
        }
        if let Some(base) = name.strip_suffix("+timed") {
            return Profile::named(base).filter(|p| !p.timed).map(|p| Profile {
                name: name.to_string(),
                timed: true,
                ..p
            });
        }
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
                FaultKind::RecoveryCrash,
                FaultKind::BitRot,
                FaultKind::MisdirectedWrite,
                FaultKind::LostNamespaceOps,
            ],
            pool_pages: (16, 256),
            shape: Shape::Mixed,
            sessions_range: None,
            lock_wait_timeout_s: default_timeouts(),
            p_locking_read: 0.3,
            mixed_isolation: true,
            preload: 0,
            sync_latency_us: 0,
            think_us: default_think_us(),
            p_compressed: 0.2,
            key_block_sizes: default_key_block_sizes(),
            timed: false,
            cpu: CpuModel::FREE,
            p_long_pause: default_p_long_pause(),
            latency: None,
        };
        let io_faults = vec![
            FaultKind::ProcessCrash,
            FaultKind::PowerLoss,
            FaultKind::TornWrites,
            FaultKind::FsyncFailure,
            FaultKind::DiskFull,
            FaultKind::RecoveryCrash,
            FaultKind::BitRot,
            FaultKind::MisdirectedWrite,
            FaultKind::LostNamespaceOps,
        ];
        Some(match name {
            "default" => base,
            "small" => Profile {
                p_compressed: 0.0,
                sessions: 2,
                transactions: 30,
                max_statements: 4,
                key_space: 40,
                crashes: 1,
                pool_pages: (8, 32),
                ..base
            },
            "long-columns" => Profile {
                p_compressed: 0.0,
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
                faults: io_faults,
                ..base
            },
            // Compression's rare paths: every table compressed into 1 or
            // 2 KiB pages, so that the modification log fills and pages
            // fail to compress and split all the time; random letters
            // (about 4.7 bits a byte) compress poorly; long columns go off
            // page; small pools evict and reread (and decompress) pages;
            // every fault kind.
            "compressed" => Profile {
                p_compressed: 1.0,
                key_block_sizes: vec![1, 2],
                p_long_value: 0.4,
                transactions: 150,
                crashes: 3,
                pool_pages: (8, 32),
                faults: io_faults,
                ..base
            },
            "hot-rows" => Profile {
                p_compressed: 0.0,
                shape: Shape::HotRows,
                sessions: 16,
                transactions: 300,
                max_statements: 4,
                key_space: 6,
                preload: 6,
                p_rollback: 0.1,
                p_savepoint: 0.0,
                crashes: 1,
                lock_wait_timeout_s: (1, 50),
                ..base
            },
            "oltp" => Profile {
                p_compressed: 0.0,
                shape: Shape::Oltp,
                sessions_range: Some((4, 64)),
                transactions: 150,
                key_space: 2_000,
                preload: 2_000,
                p_rollback: 0.0,
                p_savepoint: 0.0,
                crashes: 1,
                pool_pages: (64, 512),
                lock_wait_timeout_s: (1, 50),
                ..base
            },
            "transfer" => Profile {
                p_compressed: 0.0,
                shape: Shape::Transfer,
                sessions: 8,
                transactions: 300,
                max_statements: 3,
                key_space: 20,
                preload: 20,
                p_rollback: 0.05,
                p_savepoint: 0.0,
                crashes: 2,
                lock_wait_timeout_s: (1, 50),
                ..base
            },
            _ => return None,
        })
    }

    /// Every profile name.
    pub const NAMES: [&'static str; 9] = [
        "default",
        "small",
        "long-columns",
        "crash-heavy",
        "io-errors",
        "hot-rows",
        "oltp",
        "transfer",
        "compressed",
    ];

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), String> {
        let p_ok = |p: f64| (0.0..=1.0).contains(&p);
        if self.sessions == 0 || self.sessions > MAX_SESSIONS {
            return Err(format!(
                "sessions must be 1..={MAX_SESSIONS}, not {}",
                self.sessions
            ));
        }
        if self.max_statements == 0 || self.key_space == 0 {
            return Err("max_statements and key_space must be positive".into());
        }
        if let Some((lo, hi)) = self.sessions_range {
            if lo == 0 || hi > MAX_SESSIONS || lo > hi {
                return Err(format!(
                    "sessions_range must be within 1..={MAX_SESSIONS}, not {lo}..={hi}"
                ));
            }
        }
        let (t0, t1) = self.lock_wait_timeout_s;
        if t0 == 0 || t1 < t0 || t1 > 1_073_741_824 {
            return Err(format!(
                "lock_wait_timeout_s must be ordered and positive, not {t0}..={t1}"
            ));
        }
        if self.cpu.cores > 1024 {
            return Err(format!(
                "cpu.cores must be 0..=1024, not {}",
                self.cpu.cores
            ));
        }
        if self.shape != Shape::Mixed && self.preload == 0 {
            return Err("the hot-rows, oltp and transfer shapes need preloaded rows".into());
        }
        if !p_ok(self.p_rollback)
            || !p_ok(self.p_savepoint)
            || !p_ok(self.p_long_value)
            || !p_ok(self.p_locking_read)
            || !p_ok(self.p_long_pause)
        {
            return Err("probabilities must be in 0..=1".into());
        }
        if !p_ok(self.p_compressed) {
            return Err("probabilities must be in 0..=1".into());
        }
        if self.p_compressed > 0.0 && self.key_block_sizes.is_empty() {
            return Err("compressed tables need a KEY_BLOCK_SIZE to draw".into());
        }
        if let Some(&kbs) = self
            .key_block_sizes
            .iter()
            .find(|&&k| !matches!(k, 1 | 2 | 4 | 8 | 16))
        {
            return Err(format!("KEY_BLOCK_SIZE {kbs} is not 1, 2, 4, 8 or 16"));
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
        // Suffixes: time-driven, a latency preset's disk, in either order,
        // each once.
        for name in ["oltp+timed+seeds-disk", "oltp+seeds-disk+timed"] {
            let p = Profile::named(name).unwrap();
            assert!(p.timed, "{name}");
            assert_eq!(
                p.latency,
                crate::storage::faults::Latency::preset("seeds-disk")
            );
            assert!(p.sync_latency_us > 0, "{name}");
            assert_eq!(p.name, name);
        }
        assert!(Profile::named("oltp+ssd+platter").is_none());
        assert!(Profile::named("oltp+timed+timed").is_none());
        assert!(Profile::named("nope+ssd").is_none());
        let bad = r#"{"name":"x","sessions":1,"transactions":1,"max_statements":1,"key_space":1,"p_rollback":0,"p_savepoint":0,"p_long_value":0,"crashes":0,"faults":[],"pool_pages":[8,8],"extra":1}"#;
        assert!(
            serde_json::from_str::<Profile>(bad).is_err(),
            "unknown fields are refused"
        );
    }
}
