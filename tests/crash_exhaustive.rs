//! Exhaustive crash-point enumeration, CrashMonkey style: a workload of three
//! transactions over both tables is crashed at every one of its I/O
//! operations, under each `innodb_flush_log_at_trx_commit` setting with the
//! doublewrite buffer on, and each crash point is judged after a process
//! crash once and after a power loss once per way the unsynced writes can
//! survive, up to the bounds below. Where `tests/crash.rs` samples power
//! losses at random, this file tries every outcome it can afford.
//!
//! One crash point, every outcome:
//!
//! ```text
//!   crash at workload I/O i ──▶ pending ops P (global order, n = |P|)
//!     │
//!     ├─ process crash: everything survives                 judged once
//!     └─ power loss, one rerun of the crash per outcome:
//!          keep/lose: the newest min(n, K) ops by issue order
//!                     take every one of 2^min(n,K) Keep/Lose
//!                     vectors; older ops are kept; if n > K
//!                     (a "bounded" point) the all-lost vector too
//!          torn:      each write of 2..=S sectors, at 512 and at
//!                     4096-byte sectors, takes each of its
//!                     2^s - 2 proper torn patterns, with the other
//!                     ops all kept, all lost, and kept exactly when
//!                     issued before it (an in-order disk)
//! ```
//!
//! The bounds: K = [`KEEP_LOSE_OPS_MAX`] = 10, S = [`TORN_SECTORS_MAX`] = 4.
//! At 512-byte sectors S = 4 tears every redo write (the log buffer is four
//! 512-byte blocks); at 4096-byte sectors it tears every single-page write
//! (data pages, undo pages, the doublewrite area). Longer writes (a file
//! extended by 128 KiB) are kept or lost whole. When more than K operations
//! are pending, the ones outside the window are kept rather than lost: the
//! oldest unsynced writes are the ones a real write cache has most likely
//! destaged already, keeping them leaves recovery the most (and the most
//! mixed) state to deal with, and the opposite extreme, everything unsynced
//! lost, is added to every bounded point as one more vector.
//!
//! Every outcome is judged as `tests/crash.rs` judges it, by
//! [`harness::reopen_and_judge`] with the bounds of [`harness::bounds`] for
//! the crash kind (after a power loss: at least the commits whose redo was
//! synced): an allowed prefix of the commit history, no partial
//! transaction, secondary indexes equal to the clustered index, CHECK TABLE
//! clean, and a transaction on the recovered database that reads back
//! right. Each rerun of a crash point must leave exactly the same pending
//! operations, so an outcome names the same writes in every run; a failure
//! prints the configuration, the crash point, the sector size and the
//! survival of every pending operation, which replays it.

mod common;
// Both modules are shared with tests/crash.rs, which uses items this file
// does not (its other workloads).
#[allow(dead_code)]
#[path = "crash/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "crash/workload.rs"]
mod workload;

use engine::{FlushAtCommit, Value};
use harness::{bounds, crash_config, reference_run, reopen_and_judge, Judged, Progress, Setup};
use sim::clock::SimClock;
use sim::storage::{
    CrashMode, IoOp, IoOutcome, PendingKind, PendingWrite, PowerLossPolicy, SimStorage, Survival,
};
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;
use workload::{a_row, b_row, delete, doc, insert, update, Txn};

/// K: at most this many pending operations take every Keep/Lose
/// combination; with more pending, the newest K do.
const KEEP_LOSE_OPS_MAX: usize = 10;

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
            let contexts: [&dyn Fn(usize) -> Survival; 3] =
                [&|_| Survival::Keep, &|_| Survival::Lose, &|j| {
                    if issued_at[j] < issued_at[i] {
                        Survival::Keep
                    } else {
                        Survival::Lose
                    }
                }];
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
// Running one configuration.

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
    /// Recoveries that rolled back a transaction.
    rolled_back: u64,
    /// Why the redo scans ended, LSNs elided.
    log_ends: BTreeMap<String, u64>,
    /// Wall time of the configuration, for the table (never asserted).
    elapsed_s: f64,
}

impl Tally {
    fn power_runs(&self) -> u64 {
        self.keep_lose_runs + self.torn_runs.values().sum::<u64>()
    }

    fn record(&mut self, judged: &Judged, p: &Progress) {
        self.lost_acknowledged += u64::from(judged.k < p.acked);
        self.kept_unacknowledged += u64::from(judged.k > p.acked);
        self.pages_repaired += u64::from(!judged.report.pages_repaired.is_empty());
        self.rolled_back += u64::from(!judged.report.rolled_back.is_empty());
        let end: String = judged
            .report
            .log_end
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect();
        *self.log_ends.entry(end).or_default() += 1;
    }
}

/// Crashes the workload at `offset` (from its first I/O) and drops the
/// engine; checks that the rerun left exactly `expected` pending, if given.
fn crash(
    setup: &Setup,
    offset: u64,
    expected: Option<&[PendingWrite]>,
) -> engine::Result<(SimStorage, SimClock, Progress)> {
    let clock = SimClock::new();
    let (storage, _, p) = setup.crash(&clock, offset)?;
    if let Some(expected) = expected {
        assert_eq!(
            storage.pending_writes(),
            expected,
            "a rerun of the crash at workload I/O {offset} left other operations pending"
        );
    }
    Ok((storage, clock, p))
}

/// Runs every crash point of one flush setting, doublewrite on, through
/// every outcome; returns the tally and a reproduction line per violation.
fn enumerate(flush: FlushAtCommit) -> engine::Result<(Tally, Vec<String>)> {
    let started = Instant::now();
    let setup = Setup::build(&crash_config(flush, true), three_transactions())?;
    let (ops, _) = reference_run(&setup)?;
    let mut tally = Tally::default();
    let mut violations = Vec::new();
    let mut judge = |tally: &mut Tally,
                     offset: u64,
                     storage: &SimStorage,
                     clock: &SimClock,
                     p: &Progress,
                     power_loss: bool,
                     what: &dyn Fn() -> String| {
        let (min_k, max_k) = bounds(flush, power_loss, p);
        match reopen_and_judge(storage, clock, &setup.config, &setup.history, min_k, max_k) {
            Ok(judged) => tally.record(&judged, p),
            Err(why) => violations.push(format!(
                "flush={} doublewrite=on crash_at=start+{} {}: acked={} failed in {:?}; \
                 k must be in {min_k}..={max_k}: {why}",
                flush.setting(),
                offset,
                what(),
                p.acked,
                p.failed,
            )),
        }
    };
    // The last point crashes after the workload's last I/O: the restart
    // pulls the plug with whatever the workload left unsynced.
    for offset in 0..=ops {
        tally.points += 1;
        let (storage, clock, p) = crash(&setup, offset, None)?;
        assert_eq!(
            storage.crashed(),
            offset < ops,
            "the crash at workload I/O {offset} fired exactly when inside the workload"
        );
        let pending = storage.pending_writes();
        let issued_at = issue_order(&storage, &pending);
        storage.restart(CrashMode::ProcessCrash);
        tally.process_runs += 1;
        judge(&mut tally, offset, &storage, &clock, &p, false, &|| {
            "process crash".to_string()
        });

        if pending.is_empty() {
            continue;
        }
        tally.points_with_pending += 1;
        tally.pending_max = tally.pending_max.max(pending.len());
        let outcomes = power_loss_outcomes(&pending, &issued_at);
        tally.bounded_points += u64::from(outcomes.bounded);
        for (sector_bytes, survivals) in outcomes.list {
            let (storage, clock, p) = crash(&setup, offset, Some(&pending))?;
            let torn = survivals.iter().any(|s| matches!(s, Survival::Torn { .. }));
            if torn {
                *tally.torn_runs.entry(sector_bytes).or_default() += 1;
            } else {
                tally.keep_lose_runs += 1;
                let kept = survivals.iter().any(|s| *s == Survival::Keep);
                let lost = survivals.iter().any(|s| *s == Survival::Lose);
                tally.split_runs += u64::from(kept && lost);
            }
            let what = || {
                format!(
                    "power loss sector_bytes={sector_bytes} survivals=[{}] of pending {:?}",
                    describe_survivals(&survivals),
                    pending
                        .iter()
                        .map(|w| format!("{:?} {} @{}+{}", w.kind, w.file, w.offset, w.len))
                        .collect::<Vec<_>>()
                )
            };
            storage.restart(CrashMode::PowerLoss(PowerLossPolicy::Explicit {
                sector_bytes,
                survivals: survivals.clone(),
            }));
            judge(&mut tally, offset, &storage, &clock, &p, true, &what);
        }
    }
    tally.elapsed_s = started.elapsed().as_secs_f64();
    Ok((tally, violations))
}

/// The configurations' table, one row each.
fn table(rows: &[(FlushAtCommit, &Tally)]) -> String {
    let mut out = format!(
        "exhaustive crash points, three transactions, doublewrite on, K={KEEP_LOSE_OPS_MAX} \
         S={TORN_SECTORS_MAX} at {TORN_SECTOR_BYTES:?}-byte sectors\n\
         flush | points | pending>0 | max pending | bounded | process | keep/lose (split) | \
         torn@512 | torn@4096 | power runs | lost acked | kept unacked | dblwr repairs | \
         rollbacks | seconds\n"
    );
    for (flush, t) in rows {
        out.push_str(&format!(
            "{:>5} | {:>6} | {:>9} | {:>11} | {:>7} | {:>7} | {:>9} ({:>5}) | {:>8} | {:>9} | \
             {:>10} | {:>10} | {:>12} | {:>13} | {:>9} | {:>7.1}\n",
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
            t.rolled_back,
            t.elapsed_s,
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
/// and S, for each flush setting with the doublewrite buffer on. The three
/// settings run on their own threads.
#[test]
fn every_crash_point_and_survival_of_three_transactions() -> engine::Result<()> {
    let settings = [
        FlushAtCommit::Lazy,
        FlushAtCommit::Sync,
        FlushAtCommit::Write,
    ];
    let results: Vec<engine::Result<(Tally, Vec<String>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = settings
            .iter()
            .map(|&flush| scope.spawn(move || enumerate(flush)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut tallies = Vec::new();
    let mut violations = Vec::new();
    for (flush, result) in settings.into_iter().zip(results) {
        let (tally, v) = result?;
        violations.extend(v);
        tallies.push((flush, tally));
    }
    let rows: Vec<(FlushAtCommit, &Tally)> = tallies.iter().map(|(f, t)| (*f, t)).collect();
    eprintln!("{}", table(&rows));
    assert!(
        violations.is_empty(),
        "{} crash outcomes violated recovery guarantees; the first ones:\n{}",
        violations.len(),
        violations
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    for (flush, t) in &tallies {
        let setting = flush.setting();
        // The enumeration reached what it claims to enumerate.
        assert!(
            t.points_with_pending > 0,
            "flush={setting}: nothing was ever pending"
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
            t.pages_repaired > 0,
            "flush={setting}: no torn page was restored from the doublewrite buffer"
        );
        assert!(
            t.rolled_back > 0,
            "flush={setting}: no recovery rolled back a transaction"
        );
        match flush {
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
