//! Exhaustive crash-point enumeration, CrashMonkey style: a workload of three
//! transactions over both tables (secondary indexes on each, a long column
//! on overflow pages) is crashed at every one of its I/O operations, under
//! each `innodb_flush_log_at_trx_commit` setting with the doublewrite buffer
//! on; each crash point is judged once after a process crash and once per
//! way its unsynced writes can survive a power loss, up to the bounds
//! below. Where `tests/crash.rs` samples power losses at random, this file
//! tries every outcome within the bounds.
//!
//! One crash point, every outcome:
//!
//! ```text
//!   crash at workload I/O i ──▶ pending ops P (global order, n = |P|)
//!     │
//!     ├─ process crash: everything survives               judged once
//!     └─ power loss, one rerun of the crash per outcome:
//!          keep/lose  the newest min(n, K) ops by issue order take
//!                     every one of the 2^min(n, K) Keep/Lose vectors,
//!                     older ops kept; if n > K (a "bounded" point),
//!                     the all-lost vector too
//!          torn       each write of 2..=S sectors, at 512 and at
//!                     4096-byte sectors, takes each of its 2^s - 2
//!                     proper torn patterns, with the other ops all
//!                     kept, kept exactly when issued before it (an
//!                     in-order disk), and all lost
//! ```
//!
//! The bounds: K = [`KEEP_LOSE_OPS_MAX`] = 8, S = [`TORN_SECTORS_MAX`] = 4.
//! At 512-byte sectors S = 4 tears every redo write (the log buffer is four
//! 512-byte blocks); at 4096-byte sectors it tears every single-page write
//! (table pages, system pages, the doublewrite area). Longer writes (a
//! tablespace extended by 128 KiB) are kept or lost whole. At most 14
//! operations are pending at one point of this workload, so K = 8 bounds
//! about a third of the points; K = 10 with the same S passes too but takes
//! about twice as long (~150 s instead of ~75 s in release on two cores).
//!
//! When more than K operations are pending, the ones outside the window
//! are kept rather than lost: the oldest unsynced writes are the ones a real
//! write cache has most likely destaged already; keeping them leaves
//! recovery the most, and the most mixed, state to deal with (a lost write
//! only brings back an image that was synced once); and the other extreme,
//! everything unsynced lost, is added to every bounded point as one more
//! vector.
//!
//! The crash points are every I/O index of the workload and its end (the
//! plug pulled after the last I/O, with whatever the workload left
//! unsynced). Every outcome is judged as `tests/crash.rs` judges it, by
//! [`harness::reopen_and_judge`] with the bounds of [`harness::bounds`] for
//! the crash kind (after a power loss: at least the commits whose redo was
//! synced): an allowed prefix of the commit history, no partial
//! transaction, secondary indexes equal to the clustered index, CHECK TABLE
//! clean, and a transaction on the recovered database that reads back
//! right. A rerun of a crash point must leave exactly the same pending
//! operations, so an outcome names the same writes in every run; a
//! violation prints the configuration, the crash point, the sector size and
//! the survival of every pending operation, which replays it. A negative
//! control runs the same enumeration with the doublewrite buffer off and
//! must catch a torn page as corruption.

mod common;
// Both modules are shared with tests/crash.rs, which uses items this file
// does not (its other workloads).
#[allow(dead_code)]
#[path = "crash/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "crash/workload.rs"]
mod workload;

use engine::page::PAGE_SIZE;
use engine::{FlushAtCommit, Value};
use harness::{bounds, crash_config, reference_run, reopen_and_judge, Judged, Progress, Setup};
use sim::clock::SimClock;
use sim::storage::{
    CrashMode, IoOp, IoOutcome, PendingKind, PendingWrite, PowerLossPolicy, SimStorage, Survival,
};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use workload::{a_row, b_row, delete, doc, insert, update, Txn};

/// K: at most this many pending operations take every Keep/Lose
/// combination; with more pending, the newest K do.
const KEEP_LOSE_OPS_MAX: usize = 8;

/// S: a write of at most this many sectors (and at least two) takes every
/// torn pattern.
const TORN_SECTORS_MAX: usize = 4;

/// The sector sizes writes are torn at: 512 tears redo writes block by
/// block, 4096 tears a 16 KiB page into four pieces.
const TORN_SECTOR_BYTES: [u32; 2] = [512, 4096];

/// The sector size given with outcomes that tear nothing.
const WHOLE_SECTOR_BYTES: u32 = 512;

/// Three transactions over both tables: a commit that inserts into each
/// (one row of `b` with a long column on overflow pages), a rollback that
/// changes an indexed column, deletes a row and rewrites the long column,
/// and a commit that changes both secondary indexes, deletes a row and
/// rewrites the long column.
fn three_transactions() -> Vec<Txn> {
    use Value::{Int, UInt};
    vec![
        Txn::Commit(vec![
            insert("a", a_row(1, 1)),
            insert("a", a_row(2, 2)),
            insert("b", b_row(1, "v1", 20_000, 1)),
            insert("b", b_row(2, "v2", 100, 2)),
        ]),
        Txn::Rollback(vec![
            update("a", UInt(1), "k", UInt(9)),
            delete("b", Int(2)),
            update("b", Int(1), "doc", doc(18_000, 5)),
        ]),
        Txn::Commit(vec![
            update("a", UInt(2), "k", UInt(7)),
            update("b", Int(1), "v", Value::Bytes(b"w1".to_vec())),
            delete("b", Int(2)),
            update("b", Int(1), "doc", doc(17_000, 7)),
        ]),
    ]
}

// ---------------------------------------------------------------------------
// The outcomes of one crash point.

/// The power-loss outcomes tried at one crash point: each is the sector
/// size and one survival per pending operation, in the global order.
#[derive(Debug, Default)]
struct Outcomes {
    list: Vec<(u32, Vec<Survival>)>,
    /// More operations were pending than [`KEEP_LOSE_OPS_MAX`].
    bounded: bool,
}

/// Every outcome of a power loss with `pending` operations, issued at the
/// I/O indexes `issued_at`, within the bounds the module comment states.
fn power_loss_outcomes(pending: &[PendingWrite], issued_at: &[u64]) -> Outcomes {
    assert_eq!(pending.len(), issued_at.len());
    let n = pending.len();
    let mut newest_first: Vec<usize> = (0..n).collect();
    newest_first.sort_by_key(|&i| std::cmp::Reverse(issued_at[i]));
    let window = &newest_first[..n.min(KEEP_LOSE_OPS_MAX)];
    let mut out = Outcomes {
        bounded: n > KEEP_LOSE_OPS_MAX,
        ..Outcomes::default()
    };
    let mut seen = HashSet::new();
    let mut push = |out: &mut Outcomes, sector_bytes: u32, survivals: Vec<Survival>| {
        if seen.insert((sector_bytes, survivals.clone())) {
            out.list.push((sector_bytes, survivals));
        }
    };
    for mask in 0u32..1 << window.len() {
        let mut survivals = vec![Survival::Keep; n];
        for (bit, &i) in window.iter().enumerate() {
            if mask >> bit & 1 == 1 {
                survivals[i] = Survival::Lose;
            }
        }
        push(&mut out, WHOLE_SECTOR_BYTES, survivals);
    }
    if out.bounded {
        push(&mut out, WHOLE_SECTOR_BYTES, vec![Survival::Lose; n]);
    }
    for sector_bytes in TORN_SECTOR_BYTES {
        for (i, write) in pending.iter().enumerate() {
            let sectors = write.sectors(sector_bytes);
            if write.kind != PendingKind::Write || !(2..=TORN_SECTORS_MAX).contains(&sectors) {
                continue;
            }
            // The other operations all kept (the torn write is the one in
            // flight, everything else reached the disk), kept exactly when
            // issued before it (a disk that writes in order lost power
            // while writing it), and all lost (only what was synced, and
            // part of this write).
            let all_kept = |_: usize| Survival::Keep;
            let in_order = |j: usize| {
                if issued_at[j] < issued_at[i] {
                    Survival::Keep
                } else {
                    Survival::Lose
                }
            };
            let all_lost = |_: usize| Survival::Lose;
            let contexts: [&dyn Fn(usize) -> Survival; 3] = [&all_kept, &in_order, &all_lost];
            // Patterns 0 and all-ones are Lose and Keep, tried above.
            for pattern in 1u32..(1 << sectors) - 1 {
                let sectors_kept: Vec<bool> = (0..sectors).map(|b| pattern >> b & 1 == 1).collect();
                for context in contexts {
                    let mut survivals: Vec<Survival> = (0..n).map(context).collect();
                    survivals[i] = Survival::Torn {
                        sectors_kept: sectors_kept.clone(),
                    };
                    push(&mut out, sector_bytes, survivals);
                }
            }
        }
    }
    out
}

/// The I/O index each pending operation was issued at, read from the
/// trace: a file's pending operations are its last writes and length
/// changes (a sync settles all of them).
fn issue_order(storage: &SimStorage, pending: &[PendingWrite]) -> Vec<u64> {
    let trace = storage.trace();
    let mut issued_at = Vec::with_capacity(pending.len());
    let mut i = 0;
    while i < pending.len() {
        let file = &pending[i].file;
        let count = pending[i..].iter().take_while(|w| &w.file == file).count();
        let changes: Vec<_> = trace
            .iter()
            .filter(|r| {
                &r.file == file
                    && r.outcome == IoOutcome::Done
                    && (r.op == IoOp::SetLen || (r.op == IoOp::WriteAt && r.len > 0))
            })
            .collect();
        assert!(
            changes.len() >= count,
            "{file} has {count} pending operations but the trace shows {} changes",
            changes.len()
        );
        for (w, r) in pending[i..i + count]
            .iter()
            .zip(&changes[changes.len() - count..])
        {
            let kind = if r.op == IoOp::SetLen {
                PendingKind::SetLen
            } else {
                PendingKind::Write
            };
            assert_eq!(
                (w.kind, w.offset, w.len),
                (kind, r.offset, r.len),
                "pending operation of {file} matches the trace record {r:?}"
            );
            issued_at.push(r.index);
        }
        i += count;
    }
    issued_at
}

/// A survival vector, short: `K` kept, `L` lost, `T0110` torn with its
/// sectors kept (1) or old (0).
fn describe_survivals(survivals: &[Survival]) -> String {
    survivals
        .iter()
        .map(|s| match s {
            Survival::Keep => "K".to_string(),
            Survival::Lose => "L".to_string(),
            Survival::Torn { sectors_kept } => {
                let bits: String = sectors_kept
                    .iter()
                    .map(|&k| if k { '1' } else { '0' })
                    .collect();
                format!("T{bits}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------
// Running the crash points.

/// What the runs of one configuration enumerated and reached.
#[derive(Debug, Default)]
struct Tally {
    /// Crash points: every I/O index of the workload, and its end.
    points: u64,
    /// Crash points with at least one operation pending.
    points_with_pending: u64,
    /// The most operations pending at one crash point.
    pending_max: usize,
    /// Crash points with more than K operations pending.
    bounded_points: u64,
    /// Process crashes judged (one per point).
    process_runs: u64,
    /// Power losses that kept or lost every operation whole.
    keep_lose_runs: u64,
    /// Of those, the ones that kept some operations and lost others.
    split_runs: u64,
    /// Power losses that tore a write, by sector size.
    torn_runs: BTreeMap<u32, u64>,
    /// Recoveries that found fewer commits than were acknowledged.
    lost_acknowledged: u64,
    /// Recoveries that found a commit whose acknowledgement was lost.
    kept_unacknowledged: u64,
    /// Recoveries that restored a page from the doublewrite buffer.
    pages_repaired: u64,
    /// Of those, the ones that restored a home page failing validation (a
    /// torn page), not only one older than its copy.
    torn_pages_repaired: u64,
    /// Recoveries that rolled back a transaction.
    rolled_back: u64,
    /// Why the redo scans ended, LSNs elided.
    log_ends: BTreeMap<String, u64>,
    /// Wall time spent on the configuration's crash points, for the table
    /// (never asserted).
    busy_s: f64,
}

impl Tally {
    fn power_runs(&self) -> u64 {
        self.keep_lose_runs + self.torn_runs.values().sum::<u64>()
    }

    fn record(&mut self, judged: &Judged, p: &Progress) {
        self.lost_acknowledged += u64::from(judged.k < p.acked);
        self.kept_unacknowledged += u64::from(judged.k > p.acked);
        let repairs = &judged.report.pages_repaired;
        self.pages_repaired += u64::from(!repairs.is_empty());
        self.torn_pages_repaired += u64::from(
            repairs
                .iter()
                .any(|(_, why)| why.starts_with("home page failed validation")),
        );
        self.rolled_back += u64::from(!judged.report.rolled_back.is_empty());
        let end: String = judged
            .report
            .log_end
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        *self.log_ends.entry(end).or_default() += 1;
    }

    fn add(&mut self, other: &Tally) {
        self.points += other.points;
        self.points_with_pending += other.points_with_pending;
        self.pending_max = self.pending_max.max(other.pending_max);
        self.bounded_points += other.bounded_points;
        self.process_runs += other.process_runs;
        self.keep_lose_runs += other.keep_lose_runs;
        self.split_runs += other.split_runs;
        for (sector_bytes, n) in &other.torn_runs {
            *self.torn_runs.entry(*sector_bytes).or_default() += n;
        }
        self.lost_acknowledged += other.lost_acknowledged;
        self.kept_unacknowledged += other.kept_unacknowledged;
        self.pages_repaired += other.pages_repaired;
        self.torn_pages_repaired += other.torn_pages_repaired;
        self.rolled_back += other.rolled_back;
        for (end, n) in &other.log_ends {
            *self.log_ends.entry(end.clone()).or_default() += n;
        }
        self.busy_s += other.busy_s;
    }
}

/// One configuration: a flush setting and the doublewrite buffer on or
/// off, the workload's setup and its number of I/O operations.
struct Configuration {
    flush: FlushAtCommit,
    setup: Setup,
    ops: u64,
}

impl Configuration {
    fn new(flush: FlushAtCommit, doublewrite: bool) -> engine::Result<Configuration> {
        let setup = Setup::build(&crash_config(flush, doublewrite), three_transactions())?;
        let (ops, _) = reference_run(&setup)?;
        Ok(Configuration { flush, setup, ops })
    }

    /// Crashes the workload at `offset` (from its first I/O; `ops` is
    /// after the last) and drops the engine; checks that the rerun left
    /// exactly `expected` pending, if given.
    fn crash(&self, offset: u64, expected: Option<&[PendingWrite]>) -> engine::Result<Crashed> {
        let clock = SimClock::new();
        let (storage, _, progress) = self.setup.crash(&clock, offset)?;
        assert_eq!(
            storage.crashed(),
            offset < self.ops,
            "the crash at workload I/O {offset} fired exactly when inside the workload"
        );
        // A crash armed past the workload's end never fired: disarm it, or
        // it would fire inside recovery. The restart pulls the plug.
        storage.set_crash_at(None);
        if let Some(expected) = expected {
            assert_eq!(
                storage.pending_writes(),
                expected,
                "a rerun of the crash at workload I/O {offset} left other operations pending"
            );
        }
        Ok(Crashed {
            offset,
            storage,
            clock,
            progress,
        })
    }

    /// Restarts a crashed disk in `mode` and judges it by the oracle's
    /// bounds for that crash kind; `what` describes the crash for a
    /// violation.
    fn restart_and_judge(
        &self,
        crashed: Crashed,
        mode: CrashMode,
        what: &dyn Fn() -> String,
        findings: &mut Findings,
    ) {
        let Crashed {
            offset,
            storage,
            clock,
            progress: p,
        } = crashed;
        let power_loss = mode != CrashMode::ProcessCrash;
        storage.restart(mode);
        let (min_k, max_k) = bounds(self.flush, power_loss, &p);
        let setup = &self.setup;
        match reopen_and_judge(
            &storage,
            &clock,
            &setup.config,
            &setup.history,
            min_k,
            max_k,
        ) {
            Ok(judged) => findings.tally.record(&judged, &p),
            Err(why) => findings.violations.push(format!(
                "flush={} doublewrite={} crash_at=start+{offset} {}: acked={} failed in {:?}; \
                 k must be in {min_k}..={max_k}: {why}",
                self.flush.setting(),
                setup.config.doublewrite,
                what(),
                p.acked,
                p.failed,
            )),
        }
    }

    /// Runs one crash point through the process crash and every power-loss
    /// outcome.
    fn crash_point(&self, offset: u64, findings: &mut Findings) -> engine::Result<()> {
        let started = Instant::now();
        let crashed = self.crash(offset, None)?;
        let pending = crashed.storage.pending_writes();
        let issued_at = issue_order(&crashed.storage, &pending);
        let tally = &mut findings.tally;
        tally.points += 1;
        tally.process_runs += 1;
        if !pending.is_empty() {
            tally.points_with_pending += 1;
            tally.pending_max = tally.pending_max.max(pending.len());
        }
        let process = || "process crash".to_string();
        self.restart_and_judge(crashed, CrashMode::ProcessCrash, &process, findings);

        let outcomes = power_loss_outcomes(&pending, &issued_at);
        findings.tally.bounded_points += u64::from(outcomes.bounded);
        for (sector_bytes, survivals) in outcomes.list {
            let tally = &mut findings.tally;
            if survivals.iter().any(|s| matches!(s, Survival::Torn { .. })) {
                *tally.torn_runs.entry(sector_bytes).or_default() += 1;
            } else {
                tally.keep_lose_runs += 1;
                let kept = survivals.contains(&Survival::Keep);
                let lost = survivals.contains(&Survival::Lose);
                tally.split_runs += u64::from(kept && lost);
            }
            let what = || {
                let pending: Vec<String> = pending
                    .iter()
                    .map(|w| format!("{:?} {} @{}+{}", w.kind, w.file, w.offset, w.len))
                    .collect();
                format!(
                    "power loss sector_bytes={sector_bytes} survivals=[{}] of pending {pending:?}",
                    describe_survivals(&survivals),
                )
            };
            let crashed = self.crash(offset, Some(&pending))?;
            let mode = CrashMode::PowerLoss(PowerLossPolicy::Explicit {
                sector_bytes,
                survivals: survivals.clone(),
            });
            self.restart_and_judge(crashed, mode, &what, findings);
        }
        findings.tally.busy_s += started.elapsed().as_secs_f64();
        Ok(())
    }
}

/// A crash point's disk, crashed and not yet restarted, with what the
/// workload saw.
struct Crashed {
    offset: u64,
    storage: SimStorage,
    clock: SimClock,
    progress: Progress,
}

/// What the crash points of one configuration reached, and a reproduction
/// line per violation.
#[derive(Debug, Default)]
struct Findings {
    tally: Tally,
    violations: Vec<String>,
}

impl Findings {
    fn add(&mut self, other: Findings) {
        self.tally.add(&other.tally);
        self.violations.extend(other.violations);
    }
}

/// Runs every crash point of every configuration on all cores (the points
/// are independent); returns each configuration's findings.
fn run_all(configurations: &[Configuration]) -> engine::Result<Vec<Findings>> {
    let points: Vec<(usize, u64)> = configurations
        .iter()
        .enumerate()
        .flat_map(|(c, configuration)| (0..=configuration.ops).map(move |offset| (c, offset)))
        .collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let fresh =
        || -> Vec<Findings> { configurations.iter().map(|_| Findings::default()).collect() };
    let worker = || -> engine::Result<Vec<Findings>> {
        let mut findings = fresh();
        while let Some(&(c, offset)) = points.get(next.fetch_add(1, Ordering::Relaxed)) {
            configurations[c].crash_point(offset, &mut findings[c])?;
        }
        Ok(findings)
    };
    let per_worker: Vec<engine::Result<Vec<Findings>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut merged = fresh();
    for findings in per_worker {
        for (total, part) in merged.iter_mut().zip(findings?) {
            total.add(part);
        }
    }
    Ok(merged)
}

/// The configurations' table, one row each.
fn table(rows: &[(FlushAtCommit, &Tally)], elapsed_s: f64) -> String {
    let mut out = format!(
        "exhaustive crash points, three transactions, doublewrite on; K={KEEP_LOSE_OPS_MAX} \
         ops kept/lost in every combination, writes of 2..={TORN_SECTORS_MAX} sectors torn \
         every way at {TORN_SECTOR_BYTES:?}-byte sectors; {elapsed_s:.1} s\n\
         flush | points | pending>0 | max pending | bounded | process | keep/lose (split) | \
         torn@512 | torn@4096 | power runs | lost acked | kept unacked | dblwr repairs (torn) | \
         rollbacks | busy s\n"
    );
    for (flush, t) in rows {
        out.push_str(&format!(
            "{:>5} | {:>6} | {:>9} | {:>11} | {:>7} | {:>7} | {:>7} ({:>6}) | {:>8} | {:>9} | \
             {:>10} | {:>10} | {:>12} | {:>11} ({:>6}) | {:>9} | {:>6.1}\n",
            flush.setting(),
            t.points,
            t.points_with_pending,
            t.pending_max,
            t.bounded_points,
            t.process_runs,
            t.keep_lose_runs,
            t.split_runs,
            t.torn_runs.get(&512).copied().unwrap_or(0),
            t.torn_runs.get(&4096).copied().unwrap_or(0),
            t.power_runs(),
            t.lost_acknowledged,
            t.kept_unacknowledged,
            t.pages_repaired,
            t.torn_pages_repaired,
            t.rolled_back,
            t.busy_s,
        ));
    }
    for (flush, t) in rows {
        out.push_str(&format!(
            "flush={} redo scan ends: {:?}\n",
            flush.setting(),
            t.log_ends
        ));
    }
    out
}

/// The acceptance item: every I/O index of a three-transaction workload x
/// both crash kinds x every way the pending writes can survive, within K
/// and S, for each flush setting with the doublewrite buffer on.
#[test]
fn every_crash_point_and_survival_of_three_transactions() -> engine::Result<()> {
    let started = Instant::now();
    let configurations = [
        FlushAtCommit::Lazy,
        FlushAtCommit::Sync,
        FlushAtCommit::Write,
    ]
    .map(|flush| Configuration::new(flush, true))
    .into_iter()
    .collect::<engine::Result<Vec<_>>>()?;
    let results = run_all(&configurations)?;
    let rows: Vec<(FlushAtCommit, &Tally)> = configurations
        .iter()
        .zip(&results)
        .map(|(c, f)| (c.flush, &f.tally))
        .collect();
    eprintln!("{}", table(&rows, started.elapsed().as_secs_f64()));
    let violations: Vec<&String> = results.iter().flat_map(|f| &f.violations).collect();
    assert!(
        violations.is_empty(),
        "{} crash outcomes violated recovery guarantees; the first ones:\n{}",
        violations.len(),
        violations
            .iter()
            .take(8)
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for (configuration, Findings { tally: t, .. }) in configurations.iter().zip(&results) {
        let setting = configuration.flush.setting();
        assert_eq!(
            t.points,
            configuration.ops + 1,
            "flush={setting}: every crash point ran"
        );
        // The enumeration reached what it claims to enumerate.
        assert!(
            t.bounded_points > 0,
            "flush={setting}: no crash point had more than K operations pending"
        );
        assert!(
            t.split_runs > 0,
            "flush={setting}: no power loss kept some pending writes and lost others"
        );
        for sector_bytes in TORN_SECTOR_BYTES {
            assert!(
                t.torn_runs.get(&sector_bytes).copied().unwrap_or(0) > 0,
                "flush={setting}: no write was torn at {sector_bytes}-byte sectors"
            );
        }
        assert!(
            t.torn_pages_repaired > 0,
            "flush={setting}: no torn page was restored from the doublewrite buffer"
        );
        assert!(
            t.rolled_back > 0,
            "flush={setting}: no recovery rolled back a transaction"
        );
        match configuration.flush {
            FlushAtCommit::Sync => assert_eq!(
                t.lost_acknowledged, 0,
                "setting 1 never loses an acknowledged commit"
            ),
            FlushAtCommit::Write | FlushAtCommit::Lazy => assert!(
                t.lost_acknowledged > 0,
                "flush={setting}: no power loss took an acknowledged, unsynced commit"
            ),
        }
    }
    Ok(())
}

/// Negative control: with the doublewrite buffer off nothing can repair a
/// torn page, so the same enumeration must report a violation, and the
/// violation must be the torn page caught as corruption (never read back
/// as data). Proves that the enumeration reaches torn home pages and that
/// its judge can fail; stops at the first one caught.
#[test]
fn torn_page_without_doublewrite_is_caught_by_the_enumeration() -> engine::Result<()> {
    let configuration = Configuration::new(FlushAtCommit::Sync, false)?;
    let mut findings = Findings::default();
    for offset in 0..=configuration.ops {
        let crashed = configuration.crash(offset, None)?;
        let pending = crashed.storage.pending_writes();
        let issued_at = issue_order(&crashed.storage, &pending);
        for (sector_bytes, survivals) in power_loss_outcomes(&pending, &issued_at).list {
            let tears_a_page = pending
                .iter()
                .zip(&survivals)
                .any(|(w, s)| matches!(s, Survival::Torn { .. }) && w.len == PAGE_SIZE as u64);
            if !tears_a_page {
                continue;
            }
            let what = || format!("torn page, survivals=[{}]", describe_survivals(&survivals));
            let crashed = configuration.crash(offset, Some(&pending))?;
            let mode = CrashMode::PowerLoss(PowerLossPolicy::Explicit {
                sector_bytes,
                survivals: survivals.clone(),
            });
            configuration.restart_and_judge(crashed, mode, &what, &mut findings);
            if let Some(violation) = findings.violations.first() {
                assert!(
                    violation.contains("corrupt"),
                    "a torn page without doublewrite was not reported as corruption: {violation}"
                );
                eprintln!("negative control caught: {violation}");
                return Ok(());
            }
        }
    }
    panic!("no torn page was caught with the doublewrite buffer off")
}
