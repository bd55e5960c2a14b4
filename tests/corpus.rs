//! Every saved failure in `corpus/` replays: an entry from a real bug must
//! now pass (the bug stays fixed), an entry from a canary must still fail
//! (the checker still catches it). And the shrinker can reduce a canary's
//! failure to a handful of statements.

use sim::corpus;
use sim::plan::Plan;
use sim::profile::Profile;
use sim::runner::execute;
use std::path::Path;

#[test]
fn every_corpus_entry_replays() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let entries = corpus::entries(&root);
    // A missing or emptied corpus would make this test pass by replaying
    // nothing.
    assert!(
        !entries.is_empty(),
        "{} holds no corpus entry (a folder with a plan.json)",
        root.display()
    );
    for dir in &entries {
        let plan = corpus::load(dir).unwrap_or_else(|e| panic!("{e}"));
        let o = execute(&plan, false).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        match &plan.canary {
            Some(c) => {
                assert!(
                    !o.violations.is_empty(),
                    "{}: the canary {c} is no longer caught",
                    dir.display()
                );
                // By the checker that caught it when it was saved.
                let saved = std::fs::read_to_string(dir.join("failure.txt"))
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
                let first = saved
                    .lines()
                    .find_map(|l| l.strip_prefix("violation: "))
                    .unwrap_or_else(|| panic!("{}: failure.txt names no violation", dir.display()));
                assert_eq!(
                    sim::kind::violation_kind(&o.violations[0]),
                    sim::kind::violation_kind(first),
                    "{}: caught by another checker now: {}",
                    dir.display(),
                    o.violations[0]
                );
            }
            None => assert!(
                o.violations.is_empty(),
                "{}: fails again: {:?}",
                dir.display(),
                o.violations
            ),
        }
    }
    eprintln!("{} corpus entries replayed", entries.len());
}

#[test]
fn every_canary_has_a_corpus_entry_of_a_few_statements() {
    // Each canary's catch is saved, shrunk to at most 10 statements, or to
    // the size given here, with the reason it needs more.
    let larger: &[(&str, usize, &str)] = &[
        // A torn page needs a page written in place with others pending
        // at the power loss: a buffer pool full enough to flush mid-run.
        ("skip-doublewrite", 20, "pages must be flushed and torn"),
        // A wait must last to the timeout: a chain of sessions that all
        // wait, long enough for time to jump to the deadline.
        ("late-lock-timeout", 40, "a wait that lasts to its timeout"),
        // A compressed page must fill until a compression fails, or fill
        // its modification log and recompress.
        (
            "zip-count-failed-compression",
            25,
            "a page filled until its compression fails",
        ),
        // (The entry has 17 since compressed pages stay in the pool
        // without their frames: the plan needs more churn before the
        // crash.)
        (
            "zip-skip-image-redo",
            20,
            "a page recompressed, then a crash",
        ),
        // A row in each of three tables, each committed before the next
        // names it, and the top one's delete: the shrinker stops at 11.
        (
            "cascade-skips-second-level",
            11,
            "a parent, a child and a grandchild row, then the parent's delete",
        ),
    ];
    // Torn log blocks need tears below the disk's 512-byte sectors:
    // tests/canaries.rs plants that one.
    let untestable = ["accept-torn-log-tail"];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let plans: Vec<Plan> = corpus::entries(&root)
        .iter()
        .map(|d| corpus::load(d).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    for c in engine::Canary::ALL {
        let name = c.name();
        if untestable.contains(&name) {
            continue;
        }
        let (limit, why) = larger
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or((10, "none"), |(_, n, why)| (*n, *why));
        let smallest = plans
            .iter()
            .filter(|p| p.canary.as_deref() == Some(name))
            .map(Plan::statement_count)
            .min()
            .unwrap_or_else(|| panic!("no corpus entry for canary {name}"));
        assert!(
            smallest <= limit,
            "canary {name}: the smallest entry has {smallest} statements, more than {limit} (needs: {why})"
        );
    }
}

#[test]
fn the_shrinker_reduces_a_canary_failure_to_a_few_statements() {
    let p = Profile::named("small").expect("known profile");
    let plan = (0..50)
        .map(|seed| Plan::generate(seed, &p, None, Some("ack-before-sync".into())))
        .find(|plan| !execute(plan, false).expect("valid").violations.is_empty())
        .expect("the canary is caught within 50 seeds");
    let before = plan.statement_count();
    let shrunk = sim::shrink::shrink(&plan, 1000).expect("the plan fails");
    assert!(!shrunk.outcome.violations.is_empty());
    assert!(
        shrunk.plan.statement_count() <= 10,
        "shrunk from {before} to only {} statements",
        shrunk.plan.statement_count()
    );
    // The shrunk plan fails again, the same way, when replayed.
    let again = execute(&shrunk.plan, false).expect("valid");
    assert_eq!(again.violations, shrunk.outcome.violations);
}

#[test]
fn an_fsync_failure_anchored_to_its_statement_is_the_same_failure() {
    // The shrinker turns the fsync failures a run drew (one sync in 50
    // fails in io-errors) into failures anchored to the statement issued
    // before each, or to the attempt to open the engine they struck in.
    // Where every failure of a run was anchored (none in setup), the
    // anchored form must run the very same way.
    use sim::profile::FaultKind;
    let p = Profile::named("io-errors").expect("known profile");
    let (mut converted, mut in_recovery) = (0, 0);
    for seed in 0..40 {
        let plan = Plan::generate(seed, &p, None, None);
        let o = execute(&plan, false).expect("valid");
        let anchors = o.fsync_failure_anchors.clone();
        let recovery = o.recovery_fsync_failure_anchors.clone();
        let all = (anchors.len() + recovery.len()) as u64;
        if all == 0 || all != o.stats.fsync_failures {
            continue;
        }
        in_recovery += usize::from(!recovery.is_empty());
        let mut anchored = plan.clone();
        anchored.faults.retain(|&k| k != FaultKind::FsyncFailure);
        anchored.fsync_failures_at_statements = anchors.clone();
        anchored.fsync_failures_in_recovery = recovery.clone();
        let again = execute(&anchored, false).expect("valid");
        // The trace names the plan's fault kinds, so its hash differs;
        // everything the run did and reached must not.
        assert_eq!(
            again.stats, o.stats,
            "seed {seed}: fsync anchors {anchors:?} ran differently"
        );
        assert_eq!(again.violations, o.violations);
        assert_eq!(again.crash_anchors, o.crash_anchors);
        assert_eq!(again.fsync_failure_anchors, anchors);
        assert_eq!(again.recovery_fsync_failure_anchors, recovery);
        converted += 1;
    }
    assert!(converted >= 3, "only {converted} seeds converted");
    assert!(
        in_recovery >= 1,
        "no converted seed had a failure inside a recovery"
    );
}

#[test]
fn a_recorded_schedule_replays_the_same_run_and_keeps_its_order_when_work_goes() {
    // The shrinker's schedule: a run's turns and crash draws written into
    // its plan. Replayed with it, the run must be the very same (same
    // trace hash) in every profile shape; the schedule stays valid when
    // transactions and statements are dropped, and a schedule whose work
    // went runs to the end without a liveness failure.
    let mut with_crashes = 0;
    for (profile, seeds) in [("default", 0..12), ("hot-rows", 0..3), ("transfer", 0..3)] {
        let p = Profile::named(profile).expect("known profile");
        for seed in seeds {
            let plan = Plan::generate(seed, &p, None, None);
            let o = execute(&plan, false).expect("valid");
            assert!(!o.schedule.turns.is_empty());
            // Only a misdirected write brings a crash nothing armed (the
            // run's own final crash is none).
            if !plan
                .faults
                .contains(&sim::profile::FaultKind::MisdirectedWrite)
            {
                assert_eq!(o.unarmed_crash_anchors, vec![], "{profile} seed {seed}");
            }
            with_crashes += usize::from(o.schedule.crashes.len() > 1);
            let mut scheduled = plan.clone();
            scheduled.schedule = Some(o.schedule.clone());
            scheduled.validate().expect("a recorded schedule is valid");
            // Through JSON, as a corpus entry keeps it.
            let json = serde_json::to_string_pretty(&scheduled).expect("serializes");
            let back: Plan = serde_json::from_str(&json).expect("parses");
            assert_eq!(back, scheduled);
            let again = execute(&back, false).expect("valid");
            assert_eq!(
                again.trace_hash, o.trace_hash,
                "{profile} seed {seed}: the scheduled run differs"
            );
            if let Some(i) = (0..o.schedule.turns.len().max(again.schedule.turns.len()))
                .find(|&i| o.schedule.turns.get(i) != again.schedule.turns.get(i))
            {
                panic!(
                    "{profile} seed {seed}: turn {i} was {:?}, recorded again as {:?}",
                    o.schedule.turns.get(i),
                    again.schedule.turns.get(i)
                );
            }
            assert_eq!(again.schedule.crashes, o.schedule.crashes);
            let mut smaller = scheduled.clone();
            smaller.remove_transactions(0..smaller.transactions.len() / 2);
            if smaller
                .transactions
                .first()
                .is_some_and(|t| !t.statements.is_empty())
            {
                smaller.remove_statement(0, 0);
            }
            smaller.validate().expect("still valid");
            // Fewer sessions than the schedule names: starts go to another
            // idle session, and a start that found none is caught up.
            let mut fewer = scheduled.clone();
            fewer.sessions = (fewer.sessions / 2).max(1);
            for cand in [smaller, fewer] {
                let o = execute(&cand, false).expect("valid");
                assert!(
                    o.violations.iter().all(|v| !v.starts_with("liveness")),
                    "{profile} seed {seed}: {:?}",
                    o.violations
                );
                // Every transaction ran (each has a start turn), unless
                // damage the engine caught ended the run.
                let starts = o
                    .schedule
                    .turns
                    .iter()
                    .filter(|t| t.txn.is_some() && t.at == 0)
                    .count();
                if o.stats.bit_rot_caught + o.stats.misdirection_caught == 0 {
                    assert_eq!(starts, cand.transactions.len(), "{profile} seed {seed}");
                }
            }
        }
    }
    assert!(
        with_crashes >= 3,
        "{with_crashes} runs crashed mid-workload"
    );
}

#[test]
fn a_crash_anchored_to_its_statement_is_the_same_crash() {
    // The shrinker's first step: a crash pinned to an I/O index becomes one
    // anchored to the statement it struck after. Replayed that way, the run
    // must be the very same (same trace hash), so the anchor means what the
    // I/O index meant, and then keeps its place while statements go.
    let p = Profile::named("default").expect("known profile");
    let mut converted = 0;
    for seed in 0..20 {
        let plan = Plan::generate(seed, &p, None, None);
        let o = execute(&plan, false).expect("valid");
        if o.crash_anchors.is_empty() {
            continue;
        }
        let mut anchored = plan.clone();
        anchored.crash_after_ios.clear();
        anchored.crash_at_statements = o.crash_anchors.clone();
        let again = execute(&anchored, false).expect("valid");
        assert_eq!(
            again.trace_hash, o.trace_hash,
            "seed {seed}: anchors {:?} ran differently",
            o.crash_anchors
        );
        assert_eq!(again.crash_anchors, o.crash_anchors);
        converted += 1;
    }
    assert!(
        converted >= 5,
        "only {converted} of 20 seeds crashed mid-run"
    );
}
