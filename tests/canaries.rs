//! Negative controls (DESIGN.md, "Negative controls"; STYLE.md habit 12):
//! every planted bug ("canary", `engine::canary`) and the lying fsync must
//! be reported by the project's checkers, and the very same scenario
//! without the bug must pass them. A checker that cannot fail is a defect;
//! a checker that fails without the bug proves nothing about the bug.
//!
//! Each test runs one deterministic scenario twice, planted and clean, and
//! judges every recovery the way `tests/crash.rs` does
//! ([`harness::reopen_and_judge`]: the recovery oracle with DESIGN.md's
//! bounds, index agreement, CHECK TABLE, a transaction after recovery; a
//! recovery that refuses to open counts as a report too). Where the bug
//! bites only at some crash points, the scenario tries them all and asserts
//! that at least one is caught planted and none clean.
//!
//! | control | scenario | what reports it |
//! | --- | --- | --- |
//! | skip-doublewrite | every home-page write torn at 512 B, doublewrite on | reopen fails on the torn page |
//! | ack-before-sync | flush 1, autocommit inserts, power loss (lose all) at every I/O | oracle: acknowledged commits lost |
//! | ignore-page-lsn | process crash at every I/O (pages written after the checkpoint) | replay refuses a record, oracle, index agreement, CHECK TABLE |
//! | skip-recovery-rollback | process crash at every I/O (redo of open transactions in the log) | oracle: uncommitted effects |
//! | accept-torn-log-tail | the last log write torn inside a block (256 B pieces), power loss | recovery refuses the torn frame, or oracle |
//! | ignore-fsync-failure | EIO at each log sync, then power loss | oracle: the commit acknowledged over EIO is lost |
//! | lying fsync | every sync lies, power loss (lose all) at every I/O | oracle: acknowledged commits lost |
//!
//! The runs print how many points they tried and how many were caught.

mod common;
#[allow(dead_code)]
#[path = "crash/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "crash/workload.rs"]
mod workload;

use engine::page::{self, PageId, PAGE_SIZE};
use engine::{Canaries, Canary, Config, Engine, FlushAtCommit, Request, Step};
use harness::{bounds, crash_config, reference_run, reopen_and_judge, Progress, Setup};
use sim::clock::SimClock;
use sim::storage::{
    CrashMode, FaultConfig, IoOp, IoOutcome, IoRecord, PendingKind, PowerLossPolicy, SimStorage,
    Survival,
};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use workload::{a_row, b_row, insert, workload, Txn, STATEMENT_GAP_US, TXN_GAP_US};

// ---------------------------------------------------------------------------
// Planted and clean.

/// What one sweep of a scenario found.
#[derive(Debug, Default)]
struct Sweep {
    /// Points (crash points, torn writes, failing syncs) tried.
    tried: u64,
    /// The points the checkers reported, each with the report.
    caught: Vec<(String, String)>,
}

impl Sweep {
    /// Records the verdict of one point.
    fn record(&mut self, point: String, verdict: Result<harness::Judged, String>) {
        self.tried += 1;
        if let Err(why) = verdict {
            self.caught.push((point, why));
        }
    }

    /// How many reports came from each checker, by the report's opening
    /// words (see [`harness::reopen_and_judge`]).
    fn by_checker(&self) -> BTreeMap<&'static str, usize> {
        let mut tally = BTreeMap::new();
        for (_, why) in &self.caught {
            let checker = if why.starts_with("reopen failed") {
                "recovery refused to open"
            } else if why.starts_with("oracle") {
                "recovery oracle"
            } else if why.starts_with("panicked: index ") {
                // `read_via_index` asserts that no row comes back twice.
                "index agreement / CHECK TABLE"
            } else if why.starts_with("panicked") {
                "assertion (panic)"
            } else if why.contains("CHECK TABLE") || why.starts_with("index ") {
                "index agreement / CHECK TABLE"
            } else {
                "reading or writing after recovery"
            };
            *tally.entry(checker).or_default() += 1;
        }
        tally
    }

    /// The first `n` reports, one a line.
    fn first_lines(&self, n: usize) -> String {
        self.caught
            .iter()
            .take(n)
            .map(|(point, why)| format!("  {point}: {why}"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs `sweep` with the bug planted and without, prints the tally, and
/// checks that the checkers caught the planted bug at least once and never
/// reported the clean run.
fn negative_control(
    name: &str,
    sweep: impl Fn(bool) -> engine::Result<Sweep>,
) -> engine::Result<()> {
    let planted = sweep(true)?;
    let clean = sweep(false)?;
    eprintln!(
        "{name}: planted: caught at {} of {} points {:?}; clean: reported at {} of {} points\n{}",
        planted.caught.len(),
        planted.tried,
        planted.by_checker(),
        clean.caught.len(),
        clean.tried,
        planted.first_lines(1)
    );
    assert!(
        clean.caught.is_empty(),
        "{name}: the scenario without the bug was reported at {} points, so a catch proves nothing; the first:\n{}",
        clean.caught.len(),
        clean.first_lines(6)
    );
    assert!(
        !planted.caught.is_empty(),
        "{name}: planted, it was caught at none of {} points: the checkers cannot see this bug",
        planted.tried
    );
    Ok(())
}

/// The crash tests' configuration, with `canary` planted when `planted`.
fn config(flush: FlushAtCommit, doublewrite: bool, canary: Canary, planted: bool) -> Config {
    let canaries = if planted {
        Canaries::NONE.with(canary)
    } else {
        Canaries::NONE
    };
    Config {
        canaries,
        ..crash_config(flush, doublewrite)
    }
}

/// Judges the recovery of a restarted disk as the crash tests do
/// ([`reopen_and_judge`]), with the oracle's bounds for a crash after `p`.
/// The harness reports some violations by panicking (an index that returns
/// a row twice), and a damaged page can trip an engine assertion; both are
/// reports too, caught here and told apart by "panicked".
fn judge(
    setup: &Setup,
    storage: &SimStorage,
    clock: &SimClock,
    p: &Progress,
    power_loss: bool,
) -> Result<harness::Judged, String> {
    let (min_k, max_k) = bounds(setup.config.flush_at_commit, power_loss, p);
    catch_panic(|| reopen_and_judge(storage, clock, &setup.config, &setup.history, min_k, max_k))
        .unwrap_or_else(|why| Err(format!("panicked: {why}")))
}

thread_local! {
    /// Whether this thread is inside [`catch_panic`], whose panics are
    /// reports, not test failures, and are not printed.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, returning the message of a panic instead of unwinding. The
/// panic hook is shared by every test thread; it stays quiet only for the
/// thread that is catching.
fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                previous(info);
            }
        }));
    });
    CATCHING.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}

/// Crashes the workload of `setup` at every one of its I/O operations,
/// restarts with `mode` and judges each recovery.
fn sweep_crash_points(setup: &Setup, mode: CrashMode) -> engine::Result<Sweep> {
    let (ops, _) = reference_run(setup)?;
    let power_loss = mode != CrashMode::ProcessCrash;
    let mut sweep = Sweep::default();
    for offset in 0..ops {
        let clock = SimClock::new();
        let (storage, start, p) = setup.crash(&clock, offset)?;
        storage.restart(mode.clone());
        let verdict = judge(setup, &storage, &clock, &p, power_loss);
        sweep.record(
            format!(
                "crash at I/O {} (acked {}, failed in {:?})",
                start + offset,
                p.acked,
                p.failed
            ),
            verdict,
        );
    }
    Ok(sweep)
}

// ---------------------------------------------------------------------------
// A runner that believes the engine.

/// A run of a workload that only records what the engine acknowledged. The
/// harness's runner asserts the flush setting's promises as it goes (a
/// commit under setting 1 is synced when acknowledged) and takes any error
/// but the simulated crash for a bug; that would stop ack-before-sync at its
/// first commit and refuse a failing fsync, before the recovery oracle,
/// whose report these controls are about, ever ran.
struct BelievingRun {
    storage: SimStorage,
    clock: SimClock,
    /// The I/O index the workload started at.
    start: u64,
    /// The workload's I/O operations (up to the crash or the stop).
    ops: u64,
    progress: Progress,
    /// Whether the engine had stopped itself when the plug was pulled.
    halted: bool,
}

/// Plants the setup's files, opens the engine, installs `faults`, arms a
/// crash at `crash_at` (an offset from the workload's first I/O) and runs
/// the workload until it ends, a statement fails, or `stop` says so after
/// a statement; then pulls the plug (the caller restarts the disk).
fn run_believing(
    setup: &Setup,
    crash_at: Option<u64>,
    faults: Option<FaultConfig>,
    stop: &dyn Fn(&SimStorage) -> bool,
) -> engine::Result<BelievingRun> {
    let clock = SimClock::new();
    let storage = setup.plant();
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock.clone()),
        setup.config.clone(),
    )?;
    let start = storage.counters().ops;
    if let Some(faults) = faults {
        storage.set_faults(faults);
    }
    storage.set_crash_at(crash_at.map(|offset| start + offset));
    let mut progress = Progress {
        crash_at: crash_at.map(|offset| start + offset),
        ..Progress::default()
    };
    let s = e.session();
    'workload: for txn in &setup.workload {
        clock.advance_us(TXN_GAP_US);
        // Each statement, and whether it is the commit.
        let statements: Vec<(Request, bool)> = match txn {
            Txn::Auto(r) => vec![(r.clone(), true)],
            Txn::Commit(stmts) | Txn::Rollback(stmts) => {
                let mut all = vec![(Request::Begin, false)];
                all.extend(stmts.iter().map(|r| (r.clone(), false)));
                let end_is_commit = matches!(txn, Txn::Commit(_));
                let end = if end_is_commit {
                    Request::Commit
                } else {
                    Request::Rollback
                };
                all.push((end, end_is_commit));
                all
            }
        };
        let in_transaction = !matches!(txn, Txn::Auto(_));
        let last = statements.len() - 1;
        for (i, (request, is_commit)) in statements.into_iter().enumerate() {
            if in_transaction && i > 0 && i < last {
                clock.advance_us(STATEMENT_GAP_US);
            }
            let what = harness::describe(&request);
            match e.execute(s, request) {
                Ok(Step::Done(_)) => {
                    let log = &e.pager().log;
                    progress.written_lsn = log.written_lsn();
                    progress.flushed_lsn = log.flushed_lsn();
                    if is_commit {
                        progress.acked += 1;
                        progress.commit_lsns.push(e.last_commit_lsn());
                    }
                }
                Ok(Step::Waiting) => panic!("{what} waits, with a single session"),
                Err(err) => {
                    progress.failed = Some(format!("{what}: {err}"));
                    progress.failed_in_commit = is_commit;
                    break 'workload;
                }
            }
            if stop(&storage) {
                break 'workload;
            }
        }
    }
    let ops = storage.counters().ops - start;
    let halted = e.halted().is_some();
    // A crash armed past the workload's end must not strike the reopen.
    storage.set_crash_at(None);
    // The plug is pulled before the engine is dropped, so nothing the
    // engine does on its way out reaches the disk.
    if !storage.crashed() {
        storage.crash_now();
    }
    drop(e);
    Ok(BelievingRun {
        storage,
        clock,
        start,
        ops,
        progress,
        halted,
    })
}

/// Restarts a believing run's disk with `mode`, switches faults off, and
/// judges the recovery with the bounds of the flush setting.
fn judge_believing(
    setup: &Setup,
    run: &BelievingRun,
    mode: CrashMode,
) -> Result<harness::Judged, String> {
    let power_loss = mode != CrashMode::ProcessCrash;
    run.storage.restart(mode);
    run.storage.set_faults(FaultConfig::default());
    judge(setup, &run.storage, &run.clock, &run.progress, power_loss)
}

fn never(_: &SimStorage) -> bool {
    false
}

/// Crashes a believing run at every I/O of its workload and once after it
/// ends, restarts with a power loss that loses every unsynced write, and
/// judges each recovery.
fn sweep_believing_power_losses(
    setup: &Setup,
    faults: Option<FaultConfig>,
) -> engine::Result<Sweep> {
    let reference = run_believing(setup, None, faults.clone(), &never)?;
    let mut sweep = Sweep::default();
    // `reference.ops` is past the last I/O: the crash after the workload.
    for offset in 0..=reference.ops {
        let run = run_believing(setup, Some(offset), faults.clone(), &never)?;
        let verdict = judge_believing(setup, &run, CrashMode::PowerLoss(PowerLossPolicy::LoseAll));
        sweep.record(
            format!(
                "power loss at I/O {} (acked {}, failed in {:?})",
                run.start + offset,
                run.progress.acked,
                run.progress.failed
            ),
            verdict,
        );
    }
    Ok(sweep)
}

/// Autocommit inserts into both tables: each statement is a commit
/// acknowledged on its own.
fn autocommit_inserts() -> Vec<Txn> {
    (1..=8)
        .flat_map(|id| {
            [
                Txn::Auto(insert("a", a_row(id, id % 3))),
                Txn::Auto(insert(
                    "b",
                    b_row(id as i64, &format!("v{id}"), 64, id as u8),
                )),
            ]
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The controls.

/// skip-doublewrite: every write of a table page to its home location (a
/// page that existed at setup, so redo cannot rebuild it from a
/// page-create record) is torn in turn by a power loss right after it, at
/// 512-byte sectors, first half new. With the doublewrite buffer the page
/// is restored from its copy; without the copy it is lost for good and
/// recovery (or the first read) reports it as corrupt.
#[test]
fn skip_doublewrite_is_caught_by_a_torn_home_page() -> engine::Result<()> {
    negative_control("skip-doublewrite", |planted| {
        let setup = Setup::build(
            &config(FlushAtCommit::Sync, true, Canary::SkipDoublewrite, planted),
            workload(),
        )?;
        let (_, trace) = reference_run(&setup)?;
        let existed_at_setup = |r: &IoRecord| {
            setup.files.iter().any(|(name, image)| {
                let at = r.offset as usize;
                *name == r.file
                    && image.len() >= at + PAGE_SIZE
                    && image[at..at + PAGE_SIZE].iter().any(|&b| b != 0)
            })
        };
        let mut sweep = Sweep::default();
        let mut repaired = 0;
        for target in trace.iter().filter(|r| {
            r.op == IoOp::WriteAt
                && r.outcome == IoOutcome::Done
                && r.file.ends_with(".ibd")
                && r.len == PAGE_SIZE as u64
                && existed_at_setup(r)
        }) {
            let clock = SimClock::new();
            let (storage, start, p) = setup.crash(&clock, target.index - trace[0].index + 1)?;
            // Tear the newest pending write of that page; keep the rest.
            let pending = storage.pending_writes();
            let torn_at = pending
                .iter()
                .rposition(|w| {
                    w.file == target.file
                        && w.kind == PendingKind::Write
                        && w.offset == target.offset
                        && w.len == PAGE_SIZE as u64
                })
                .expect("the page write is pending (unsynced) at the crash right after it");
            let sectors = pending[torn_at].sectors(512);
            let survivals = (0..pending.len())
                .map(|i| {
                    if i == torn_at {
                        Survival::Torn {
                            sectors_kept: (0..sectors).map(|s| s < sectors / 2).collect(),
                        }
                    } else {
                        Survival::Keep
                    }
                })
                .collect();
            storage.restart(CrashMode::PowerLoss(PowerLossPolicy::Explicit {
                sector_bytes: 512,
                survivals,
            }));
            // The premise: what is on disk fails validation.
            let at = target.offset as usize;
            let image = storage.read_file(&target.file).expect("the file exists");
            let torn = &image[at..at + PAGE_SIZE];
            let page_no = (target.offset / PAGE_SIZE as u64) as u32;
            let space = page::get_u32(torn, page::FIL_PAGE_SPACE_ID);
            if page::validate(torn, PageId::new(space, page_no), &target.file).is_ok() {
                continue;
            }
            let verdict = judge(&setup, &storage, &clock, &p, true);
            if let Ok(judged) = &verdict {
                repaired += u64::from(
                    judged
                        .report
                        .pages_repaired
                        .iter()
                        .any(|(id, _)| id.page_no == page_no),
                );
            }
            sweep.record(
                format!(
                    "page {page_no} of {} torn at I/O {} (start {start})",
                    target.file, target.index
                ),
                verdict,
            );
        }
        if !planted {
            // The clean runs passed because the doublewrite buffer did its
            // job, not because the tears missed.
            assert_eq!(
                repaired, sweep.tried,
                "every torn page is restored from the doublewrite buffer"
            );
        }
        Ok(sweep)
    })
}

/// ack-before-sync: under `innodb_flush_log_at_trx_commit = 1` autocommit
/// inserts are acknowledged; a power loss that loses every unsynced write,
/// at each I/O of the workload and after it, must keep every one of them.
/// Acknowledged on a write alone, the commits since the last once-a-second
/// sync are gone.
#[test]
fn ack_before_sync_is_caught_by_a_power_loss() -> engine::Result<()> {
    negative_control("ack-before-sync", |planted| {
        let setup = Setup::build(
            &config(FlushAtCommit::Sync, true, Canary::AckBeforeSync, planted),
            autocommit_inserts(),
        )?;
        sweep_believing_power_losses(&setup, None)
    })
}

/// ignore-page-lsn: a process crash at every I/O of the workload. Pages
/// written after the newest checkpoint (evicted from the small buffer
/// pool, or flushed by a page-cleaner round the crash cut before its
/// checkpoint) already hold some of the redo recovery replays; applying
/// physiological records to them a second time damages them.
#[test]
fn ignore_page_lsn_is_caught_by_a_process_crash() -> engine::Result<()> {
    negative_control("ignore-page-lsn", |planted| {
        let setup = Setup::build(
            &config(FlushAtCommit::Sync, true, Canary::IgnorePageLsn, planted),
            workload(),
        )?;
        sweep_crash_points(&setup, CrashMode::ProcessCrash)
    })
}

/// skip-recovery-rollback: a process crash at every I/O of the workload.
/// The small log buffer and the once-a-second log write put the redo of
/// transactions still open (and of the one that rolls back) into the log,
/// so recovery finds their changes on the pages; left there, they are
/// effects of transactions that never committed.
#[test]
fn skip_recovery_rollback_is_caught_by_a_process_crash() -> engine::Result<()> {
    negative_control("skip-recovery-rollback", |planted| {
        let setup = Setup::build(
            &config(
                FlushAtCommit::Sync,
                true,
                Canary::SkipRecoveryRollback,
                planted,
            ),
            workload(),
        )?;
        sweep_crash_points(&setup, CrashMode::ProcessCrash)
    })
}

/// How finely the accept-torn-log-tail control tears a log write: below a
/// log block (512 bytes). Log writes are whole 512-byte blocks at 512-byte
/// aligned offsets, so tears at the fault model's 512 and 4096-byte sectors
/// never split a block: each block is wholly old or wholly new, and an old
/// one is a valid earlier image of itself (its smaller data length ends the
/// log), zeros (whose data length ends it even when the canary lets the
/// checksum pass), or a block of an earlier lap (a wrong block number).
/// The same sweep at 512 bytes catches the canary at none of its points.
/// A block fails its checksum with a plausible header only when torn inside
/// itself, as on a device whose atomic write unit is smaller than a log
/// block (persistent memory, some flash): the case the checksum is for.
const LOG_TEAR_BYTES: u32 = 256;

/// The size of a redo log block.
const LOG_BLOCK_BYTES: u64 = 512;

/// Crashes the workload right after each of its log writes and, at a power
/// loss, tears that write in `sector_bytes` pieces, losing one piece at a
/// time (every other pending write survives). Returns the sweep.
fn sweep_torn_log_writes(setup: &Setup, sector_bytes: u32) -> engine::Result<Sweep> {
    let (_, trace) = reference_run(setup)?;
    let mut sweep = Sweep::default();
    for target in trace.iter().filter(|r| {
        r.op == IoOp::WriteAt && r.outcome == IoOutcome::Done && r.file.starts_with("ib_logfile")
    }) {
        let offset = target.index - trace[0].index + 1;
        let pieces = {
            let clock = SimClock::new();
            let (storage, _, _) = setup.crash(&clock, offset)?;
            let pending = storage.pending_writes();
            let newest = pending
                .iter()
                .rposition(|w| w.file == target.file && w.offset == target.offset)
                .expect("the log write is pending at the crash right after it");
            pending[newest].sectors(sector_bytes)
        };
        // The block a write starts in may hold redo an earlier write put
        // there and a sync made durable (the log rewrites its last, partly
        // filled block in place): torn inside itself, that block takes
        // acknowledged commits with it however careful the scan is, so
        // only the blocks this write is the first to fill are torn.
        let first_piece = (LOG_BLOCK_BYTES / u64::from(sector_bytes)).max(1) as usize;
        for lost in first_piece..pieces {
            let clock = SimClock::new();
            let (storage, start, p) = setup.crash(&clock, offset)?;
            let pending = storage.pending_writes();
            let newest = pending
                .iter()
                .rposition(|w| w.file == target.file && w.offset == target.offset)
                .expect("the rerun is deterministic");
            let survivals = (0..pending.len())
                .map(|i| {
                    if i == newest {
                        Survival::Torn {
                            sectors_kept: (0..pieces).map(|s| s != lost).collect(),
                        }
                    } else {
                        Survival::Keep
                    }
                })
                .collect();
            storage.restart(CrashMode::PowerLoss(PowerLossPolicy::Explicit {
                sector_bytes,
                survivals,
            }));
            let verdict = judge(setup, &storage, &clock, &p, true);
            sweep.record(
                format!(
                    "log write at I/O {} ({} bytes at {} of {}, start {start}) torn at {sector_bytes} B, piece {lost} of {pieces} lost",
                    target.index, target.len, target.offset, target.file
                ),
                verdict,
            );
        }
    }
    Ok(sweep)
}

/// accept-torn-log-tail: the last log write before a power loss is torn
/// inside a block; the torn block fails its checksum and must end the log.
/// Accepted, it hands recovery a frame of mixed old and new bytes.
#[test]
fn accept_torn_log_tail_is_caught_by_a_torn_log_write() -> engine::Result<()> {
    negative_control("accept-torn-log-tail", |planted| {
        let setup = Setup::build(
            &config(
                FlushAtCommit::Sync,
                true,
                Canary::AcceptTornLogTail,
                planted,
            ),
            workload(),
        )?;
        sweep_torn_log_writes(&setup, LOG_TEAR_BYTES)
    })
}

/// ignore-fsync-failure: each sync of the log in the workload fails with
/// EIO in turn, and the power goes right after the statement that made it.
/// The engine must stop and acknowledge nothing that sync was to make
/// durable; swallowing the error, it acknowledges a commit whose redo the
/// power loss then takes.
#[test]
fn ignore_fsync_failure_is_caught_by_a_power_loss_after_eio() -> engine::Result<()> {
    negative_control("ignore-fsync-failure", |planted| {
        let setup = Setup::build(
            &config(
                FlushAtCommit::Sync,
                true,
                Canary::IgnoreFsyncFailure,
                planted,
            ),
            workload(),
        )?;
        let reference = run_believing(&setup, None, None, &never)?;
        let log_syncs: Vec<u64> = reference
            .storage
            .trace()
            .into_iter()
            .filter(|r| {
                r.index >= reference.start
                    && r.op == IoOp::Sync
                    && r.outcome == IoOutcome::Done
                    && r.file.starts_with("ib_logfile")
            })
            .map(|r| r.index)
            .collect();
        let failed_sync = |storage: &SimStorage| storage.fault_counters().fsync_failures > 0;
        let mut sweep = Sweep::default();
        for at in log_syncs {
            let faults = FaultConfig {
                fsync_failure_at_op: Some(at),
                ..FaultConfig::default()
            };
            let run = run_believing(&setup, None, Some(faults), &failed_sync)?;
            assert_eq!(run.start, reference.start, "the reruns are deterministic");
            assert_eq!(
                run.storage.fault_counters().fsync_failures,
                1,
                "the sync at I/O {at} failed"
            );
            if !planted {
                assert!(
                    run.progress.failed.is_some() && run.halted,
                    "the statement whose sync failed (I/O {at}) failed and stopped the engine"
                );
            }
            let verdict =
                judge_believing(&setup, &run, CrashMode::PowerLoss(PowerLossPolicy::LoseAll));
            sweep.record(
                format!(
                    "log sync at I/O {at} failed (acked {}, failed in {:?})",
                    run.progress.acked, run.progress.failed
                ),
                verdict,
            );
        }
        Ok(sweep)
    })
}

/// The lying fsync (a volatile write cache that says yes and persists
/// nothing): not a canary but a fault of the disk, the seventh negative
/// control. Every sync from the start of the workload lies; a power loss
/// that loses every unsynced write, at each I/O and after the workload,
/// takes every commit acknowledged as durable under setting 1.
#[test]
fn lying_fsync_is_caught_by_a_power_loss() -> engine::Result<()> {
    negative_control("lying fsync", |planted| {
        let setup = Setup::build(
            &crash_config(FlushAtCommit::Sync, true),
            autocommit_inserts(),
        )?;
        let faults = planted.then(|| FaultConfig {
            lying_fsync: true,
            ..FaultConfig::default()
        });
        sweep_believing_power_losses(&setup, faults)
    })
}
