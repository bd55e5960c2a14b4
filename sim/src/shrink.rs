//! The shrinker: makes a failing plan smaller while it keeps failing the
//! same way. Crashes pinned to I/O indexes are first anchored to the
//! statements they struck after (so they stay put while the rest goes),
//! and the run's interleaving is recorded into the plan (so the sessions
//! that stay keep meeting in the same order, [`crate::schedule`]); then
//! fewer transactions (halves, then one at a time), fewer statements,
//! fewer sessions, earlier and fewer crashes, fewer fault kinds, commits
//! instead of rollbacks. Like Turso's simulator and Pebble's op-log
//! reducer, it only ever keeps a candidate that still fails.
//!
//! # By hand
//!
//! `innosim fuzz` shrinks the first failure of each kind by itself. `innosim shrink --seed N
//! --profile P` shrinks one seed by hand, `innosim shrink --seed N --canary C` a canary's
//! catch, and `innosim shrink --entry corpus/<entry>` shrinks a saved entry further (saved back
//! under its name). What is cut: fewer transactions, statements, sessions, crashes and fault
//! kinds; crashes and failing fsyncs that struck at an I/O index, and the crash a misdirected
//! write brings, are first tried anchored to the statement issued before them (a failing fsync
//! inside a recovery, to that attempt to open the engine), where they stay while the rest goes;
//! and the run's interleaving is written into the plan as a `schedule`, one turn per line,
//! `txn/at +think @session`, so that the sessions that stay meet in the same order and at the
//! same simulated instants while the rest goes ([`crate::schedule`]).

use crate::kind::violation_kind;
use crate::plan::Plan;
use crate::runner::{execute, Outcome};

/// The smallest buffer pool a plan may have.
const MIN_POOL_PAGES: usize = 8;

fn class_of(o: &Outcome) -> Option<String> {
    o.violations.first().map(|v| violation_kind(v))
}

/// The result of shrinking.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The smallest failing plan found.
    pub plan: Plan,
    /// Its outcome.
    pub outcome: Outcome,
    /// Candidate plans executed.
    pub attempts: usize,
}

/// Shrinks `plan`, which must fail, trying at most `budget` candidates.
/// Returns `None` if the plan does not fail.
pub fn shrink(plan: &Plan, budget: usize) -> Option<Shrunk> {
    shrink_while(plan, budget, &mut || true)
}

/// [`shrink`], asking `keep_going` before each candidate: once it says no,
/// the smallest failing plan found so far is the result. The caller owns
/// the deadline (the simulator knows no wall clock): `innosim fuzz --time`
/// stops shrinking when its time is up.
pub fn shrink_while(
    plan: &Plan,
    budget: usize,
    keep_going: &mut dyn FnMut() -> bool,
) -> Option<Shrunk> {
    let first = execute(plan, false).ok()?;
    let class = class_of(&first)?;
    let mut best = Shrunk {
        plan: plan.clone(),
        outcome: first,
        attempts: 0,
    };
    let mut try_plan = |cand: Plan, best: &mut Shrunk| -> bool {
        if best.attempts >= budget || !keep_going() {
            return false;
        }
        best.attempts += 1;
        match execute(&cand, false) {
            Ok(o) if class_of(&o).as_deref() == Some(class.as_str()) => {
                best.plan = cand;
                best.outcome = o;
                true
            }
            _ => false,
        }
    };
    anchor_moving_faults(&mut try_plan, &mut best);
    // The scheduler's draws move when statements go, and with them the
    // order in which sessions meet; recorded into the plan, the turns of
    // the work that stays keep their order.
    if best.plan.schedule.is_none() {
        let mut cand = best.plan.clone();
        cand.schedule = Some(best.outcome.schedule.clone());
        try_plan(cand, &mut best);
    }
    // A shorter lock wait timeout makes a wait that runs to it take fewer
    // statements, and fewer sessions all waiting while time jumps.
    if best.plan.lock_wait_timeout_s > 1 {
        let mut cand = best.plan.clone();
        cand.lock_wait_timeout_s = 1;
        try_plan(cand, &mut best);
    }
    // A smaller buffer pool flushes and evicts sooner, so a failure that
    // needs pages on disk needs fewer statements to get them there.
    if best.plan.pool_pages > MIN_POOL_PAGES {
        let mut cand = best.plan.clone();
        cand.pool_pages = MIN_POOL_PAGES;
        try_plan(cand, &mut best);
    }
    loop {
        let before = (
            best.plan.tables.len(),
            best.plan.statement_count(),
            best.plan.crash_after_ios.clone(),
            best.plan.crash_at_statements.clone(),
            best.plan.crash_after_checkpoints.clone(),
            best.plan.fsync_failures_at_statements.len(),
            best.plan.faults.len(),
            best.plan.sessions,
        );
        // Transactions: remove chunks, halving the chunk size.
        let mut chunk = best.plan.transactions.len().div_ceil(2).max(1);
        while chunk >= 1 && best.attempts < budget {
            let mut i = 0;
            while i < best.plan.transactions.len() && best.attempts < budget {
                let mut cand = best.plan.clone();
                let end = (i + chunk).min(cand.transactions.len());
                cand.remove_transactions(i..end);
                if !try_plan(cand, &mut best) {
                    i += chunk;
                }
            }
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
        // Statements, one at a time.
        let mut t = 0;
        while t < best.plan.transactions.len() && best.attempts < budget {
            let mut s = 0;
            while s < best.plan.transactions[t].statements.len() && best.attempts < budget {
                let mut cand = best.plan.clone();
                cand.remove_statement(t, s);
                if !try_plan(cand, &mut best) {
                    s += 1;
                }
            }
            if best.plan.transactions[t].rollback {
                let mut cand = best.plan.clone();
                cand.transactions[t].rollback = false;
                try_plan(cand, &mut best);
            }
            t += 1;
        }
        // Sessions: halved while that fails the same way, then one fewer
        // at a time.
        while best.plan.sessions > 2 && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.sessions /= 2;
            if !try_plan(cand, &mut best) {
                break;
            }
        }
        while best.plan.sessions > 1 && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.sessions -= 1;
            if !try_plan(cand, &mut best) {
                break;
            }
        }
        // Crashes: drop them, or strike earlier.
        let mut c = 0;
        while c < best.plan.crash_after_ios.len() && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.crash_after_ios.remove(c);
            if try_plan(cand, &mut best) {
                continue;
            }
            let mut cand = best.plan.clone();
            cand.crash_after_ios[c] /= 2;
            if cand.crash_after_ios[c] > 0 && try_plan(cand, &mut best) {
                continue;
            }
            c += 1;
        }
        // Anchored crashes: drop them, or strike sooner after their
        // statement.
        let mut c = 0;
        while c < best.plan.crash_at_statements.len() && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.crash_at_statements.remove(c);
            if try_plan(cand, &mut best) {
                continue;
            }
            let mut cand = best.plan.clone();
            cand.crash_at_statements[c].after_ios /= 2;
            if cand.crash_at_statements[c] != best.plan.crash_at_statements[c]
                && try_plan(cand, &mut best)
            {
                continue;
            }
            c += 1;
        }
        // Anchored fsync failures: drop them.
        let mut c = 0;
        while c < best.plan.fsync_failures_at_statements.len() && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.fsync_failures_at_statements.remove(c);
            if !try_plan(cand, &mut best) {
                c += 1;
            }
        }
        // Crashes after checkpoints: drop them, or strike sooner.
        let mut c = 0;
        while c < best.plan.crash_after_checkpoints.len() && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.crash_after_checkpoints.remove(c);
            if try_plan(cand, &mut best) {
                continue;
            }
            let mut cand = best.plan.clone();
            let k = &mut cand.crash_after_checkpoints[c];
            k.after_ios = (k.after_ios / 2).max(1);
            if cand.crash_after_checkpoints[c] != best.plan.crash_after_checkpoints[c]
                && try_plan(cand, &mut best)
            {
                continue;
            }
            c += 1;
        }
        // Tables the seed drew that no statement names any more.
        let mut i = 0;
        while i < best.plan.tables.len() && best.attempts < budget {
            let name = best.plan.tables[i].name.clone();
            let named = best
                .plan
                .transactions
                .iter()
                .flat_map(|t| &t.statements)
                .any(|s| s.table() == Some(name.as_str()));
            let mut cand = best.plan.clone();
            cand.tables.remove(i);
            if named || !try_plan(cand, &mut best) {
                i += 1;
            }
        }
        // Fault kinds.
        let mut f = 0;
        while f < best.plan.faults.len() && best.attempts < budget {
            let mut cand = best.plan.clone();
            cand.faults.remove(f);
            if cand.faults.is_empty() || !try_plan(cand, &mut best) {
                f += 1;
            }
        }
        // A smaller plan may now fail the same way with its moving
        // faults anchored, where the whole one did not.
        anchor_moving_faults(&mut try_plan, &mut best);
        let after = (
            best.plan.tables.len(),
            best.plan.statement_count(),
            best.plan.crash_after_ios.clone(),
            best.plan.crash_at_statements.clone(),
            best.plan.crash_after_checkpoints.clone(),
            best.plan.fsync_failures_at_statements.len(),
            best.plan.faults.len(),
            best.plan.sessions,
        );
        if after == before || best.attempts >= budget {
            // A schedule the failure no longer needs goes; one it needs is
            // rewritten as the smallest plan ran it (turns whose work went
            // are gone).
            if let Some(schedule) = best.plan.schedule.clone() {
                let mut cand = best.plan.clone();
                cand.schedule = None;
                if !try_plan(cand, &mut best) && best.outcome.schedule != schedule {
                    let mut cand = best.plan.clone();
                    cand.schedule = Some(best.outcome.schedule.clone());
                    try_plan(cand, &mut best);
                }
            }
            return Some(best);
        }
    }
}

/// Faults that strike at an I/O index, which moves when statements go,
/// anchored to the statements issued before them, where they stay: crash
/// points, the crash a misdirected write brings, drawn fsync failures.
/// Each anchored form is kept only if it fails the same way.
fn anchor_moving_faults(try_plan: &mut dyn FnMut(Plan, &mut Shrunk) -> bool, best: &mut Shrunk) {
    // Crashes pinned to I/O indexes move when statements go; anchored to
    // the statements they struck after, they stay. Convert first, keeping
    // the anchored form only if it fails the same way.
    if !best.plan.crash_after_ios.is_empty() && !best.outcome.crash_anchors.is_empty() {
        let mut cand = best.plan.clone();
        cand.crash_after_ios.clear();
        cand.crash_at_statements = best.outcome.crash_anchors.clone();
        try_plan(cand, best);
    }
    // A misdirected write crashes the run as it lands, at a page write
    // that moves when statements go; where the failure needs only the
    // crash, an anchored crash at the same place keeps it.
    let misdirection = crate::profile::FaultKind::MisdirectedWrite;
    if best.plan.faults.contains(&misdirection) && !best.outcome.unarmed_crash_anchors.is_empty() {
        let mut cand = best.plan.clone();
        cand.faults.retain(|&k| k != misdirection);
        cand.crash_after_ios.clear();
        cand.crash_at_statements = best.outcome.crash_anchors.clone();
        cand.crash_at_statements
            .extend(best.outcome.unarmed_crash_anchors.iter().copied());
        cand.crash_at_statements
            .sort_by_key(|a| (a.txn, a.statement, a.after_ios));
        try_plan(cand, best);
    }
    // Failing fsyncs drawn at random move too (the draws are per sync);
    // anchored to the statement issued before each, or to the recovery
    // they struck in, they stay.
    let drawn = crate::profile::FaultKind::FsyncFailure;
    let anchored = !best.outcome.fsync_failure_anchors.is_empty()
        || !best.outcome.recovery_fsync_failure_anchors.is_empty();
    if best.plan.faults.contains(&drawn) && anchored {
        let mut cand = best.plan.clone();
        cand.faults.retain(|&k| k != drawn);
        cand.fsync_failures_at_statements = best.outcome.fsync_failure_anchors.clone();
        cand.fsync_failures_in_recovery = best.outcome.recovery_fsync_failure_anchors.clone();
        try_plan(cand, best);
    }
}
