//! What a server runs on: a data directory on real files, or the
//! simulated disk, which loses power on command.
//!
//! The engine thread asks its host to open the engine (running recovery),
//! to arm a crash (`SET GLOBAL innosim_crash = 'KIND' [AFTER n]`), whether
//! the machine went down, and to bring it back. On real files nothing can
//! pull the plug from inside; `kill -9` of the process is the same test.
//! On the simulated disk a crash is the simulator's: what was synced
//! survives, and each unsynced write survives, is lost or is torn as the
//! crash kind says (`crate::storage::power_loss`). An engine that stops
//! itself (a failed fsync, a failed rollback: `Engine::halted`) is opened
//! again on either host, as `mysqld_safe` restarts a server that died.

use crate::profile::FaultKind;
use crate::storage::{CrashMode, FaultConfig, PowerLossPolicy, SimStorage};
use engine::io::{Clock, ManualClock};
use engine::sql::Server;
use engine::{Config, RecoveryReport};
use std::sync::Arc;

/// Moves `clock` forward to `us` (never back).
pub fn advance_to(clock: &ManualClock, us: u64) {
    let now = clock.now_us();
    if us > now {
        clock.advance_us(us - now);
    }
}

/// Why real files refuse a crash on command.
const NO_CRASH_ON_REAL_FILES: &str =
    "innosim_crash needs the simulated disk (innosim serve --sim); on real files, kill -9 the process";

/// The crash kinds `SET GLOBAL innosim_crash` takes.
pub const CRASH_KINDS: [&str; 3] = ["power-loss", "power-loss-all", "process-crash"];

/// Where the engine's files live.
pub trait Host: Send {
    /// Opens the engine, running recovery.
    fn open(&mut self) -> Result<(Server, RecoveryReport), String>;
    /// Arms a crash of kind `kind` (one of [`CRASH_KINDS`]), now or after
    /// `after_ios` more I/O operations.
    fn arm_crash(&mut self, kind: &str, after_ios: Option<u64>) -> Result<(), String>;
    /// Whether the machine went down (an armed crash struck).
    fn crashed(&self) -> bool;
    /// Brings the machine back after the engine was dropped (deciding, on
    /// the simulated disk, what survived); says what it did.
    fn restart(&mut self) -> String;
    /// The engine's clock. It stands still while the engine thread handles
    /// an event; the thread moves it (to the wall clock's reading when
    /// serving, to the recorded reading when replaying) before each one,
    /// so that a replay reads the same times.
    fn clock(&self) -> Arc<ManualClock>;
    /// How a recording describes this host (`super::record`).
    fn describe(&self) -> super::record::HostRecord;
    /// The settings the engine is opened with.
    fn config(&self) -> &Config;
}

/// A data directory on real files.
pub struct DirHost {
    dir: std::path::PathBuf,
    config: Config,
    clock: Arc<ManualClock>,
}

impl DirHost {
    /// The directory `dir` (created if missing), opened with `config`.
    pub fn new(dir: &std::path::Path, config: Config) -> Result<DirHost, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(DirHost {
            dir: dir.to_path_buf(),
            config,
            clock: Arc::new(ManualClock::new()),
        })
    }
}

impl Host for DirHost {
    fn open(&mut self) -> Result<(Server, RecoveryReport), String> {
        let storage = engine::io::OsStorage::new(&self.dir)
            .map_err(|e| format!("cannot open {}: {e}", self.dir.display()))?;
        Server::open(
            Box::new(storage),
            Box::new(self.clock.clone()),
            self.config.clone(),
        )
        .map_err(|e| e.to_string())
    }

    fn clock(&self) -> Arc<ManualClock> {
        self.clock.clone()
    }

    fn describe(&self) -> super::record::HostRecord {
        super::record::HostRecord::Dir
    }

    fn config(&self) -> &Config {
        &self.config
    }

    fn arm_crash(&mut self, _kind: &str, _after_ios: Option<u64>) -> Result<(), String> {
        Err(NO_CRASH_ON_REAL_FILES.into())
    }

    fn crashed(&self) -> bool {
        false
    }

    fn restart(&mut self) -> String {
        format!("{} opened again", self.dir.display())
    }
}

/// The simulated disk on the real clock, with a profile's faults.
pub struct SimHost {
    storage: SimStorage,
    config: Config,
    clock: Arc<ManualClock>,
    seed: u64,
    faults: Vec<FaultKind>,
    workload: FaultConfig,
    mode: CrashMode,
    crashes: u64,
    refuse_crashes: bool,
}

impl SimHost {
    /// An empty simulated disk whose workload faults are `faults` (the
    /// kinds a profile switches on), seeded with `seed`.
    pub fn new(config: Config, seed: u64, faults: &[FaultKind]) -> SimHost {
        let storage = SimStorage::new();
        // A server runs for as long as its users like: a trace of every I/O
        // would grow without bound, and nothing the server does reads it.
        storage.set_tracing(false);
        SimHost {
            storage,
            config,
            clock: Arc::new(ManualClock::new()),
            seed,
            faults: faults.to_vec(),
            workload: crate::runner::workload_faults(seed, false, faults),
            mode: CrashMode::ProcessCrash,
            crashes: 0,
            refuse_crashes: false,
        }
    }

    /// This disk refusing crashes on command as real files do (the replay
    /// of a run served on a directory).
    pub fn refusing_crashes(mut self) -> SimHost {
        self.refuse_crashes = true;
        self
    }

    /// The disk (a test reads its counters).
    pub fn storage(&self) -> &SimStorage {
        &self.storage
    }
}

impl Host for SimHost {
    fn open(&mut self) -> Result<(Server, RecoveryReport), String> {
        // Recovery that meets an injected fault (a failed fsync, a crash
        // armed into it) is started again, as an operator would; after a
        // few tries on a calm disk. Anything else is an error.
        let mut last = String::new();
        for attempt in 0..20 {
            let faults = if attempt < 10 {
                self.workload.clone()
            } else {
                FaultConfig {
                    seed: self.workload.seed,
                    ..FaultConfig::default()
                }
            };
            self.storage.set_faults(faults);
            let opened = engine::Engine::open(
                Box::new(self.storage.clone()),
                Box::new(self.clock.clone()),
                self.config.clone(),
            );
            match opened {
                Ok((e, report)) => {
                    return Server::new(e)
                        .map(|s| (s, report))
                        .map_err(|e| e.to_string())
                }
                Err(e) => {
                    let injected = self.storage.crashed()
                        || matches!(&e, engine::Error::Io { source, .. }
                            if crate::storage::is_simulated_fsync_failure(source));
                    last = e.to_string();
                    if !injected {
                        return Err(last);
                    }
                    self.storage.restart(CrashMode::ProcessCrash);
                }
            }
        }
        Err(format!("recovery failed twenty times: {last}"))
    }

    fn arm_crash(&mut self, kind: &str, after_ios: Option<u64>) -> Result<(), String> {
        if self.refuse_crashes {
            return Err(NO_CRASH_ON_REAL_FILES.into());
        }
        self.crashes += 1;
        self.mode = match kind {
            "process-crash" => CrashMode::ProcessCrash,
            "power-loss-all" => CrashMode::PowerLoss(PowerLossPolicy::LoseAll),
            // Unsynced writes kept, lost or torn by a mix seeded with the
            // crash's number.
            "power-loss" => CrashMode::sweep(self.workload.seed ^ self.crashes)[2]
                .1
                .clone(),
            other => {
                return Err(format!(
                    "unknown crash kind '{other}' (one of {})",
                    CRASH_KINDS.join(", ")
                ))
            }
        };
        match after_ios {
            None => self.storage.crash_now(),
            Some(n) => {
                let at = self
                    .storage
                    .counters()
                    .ops
                    .checked_add(n)
                    .ok_or_else(|| format!("AFTER {n}: too many I/O operations"))?;
                self.storage.set_crash_at(Some(at));
            }
        }
        Ok(())
    }

    fn crashed(&self) -> bool {
        self.storage.crashed()
    }

    fn clock(&self) -> Arc<ManualClock> {
        self.clock.clone()
    }

    fn config(&self) -> &Config {
        &self.config
    }

    fn describe(&self) -> super::record::HostRecord {
        super::record::HostRecord::Sim {
            seed: self.seed,
            faults: self.faults.clone(),
        }
    }

    fn restart(&mut self) -> String {
        let armed = std::mem::replace(&mut self.mode, CrashMode::ProcessCrash);
        // The armed kind if its crash struck; an engine that stopped itself
        // first died as a process does, the disk keeping what it was given.
        let mode = if self.storage.crashed() {
            armed
        } else {
            CrashMode::ProcessCrash
        };
        self.storage.set_crash_at(None);
        let report = self.storage.restart(mode.clone());
        format!("the simulated machine restarted after a {mode:?}: {report:?}")
    }
}
