//! The compression oracle's metamorphic half: compression changes how pages
//! are stored, never what a statement answers. The same plan, run with
//! every table COMPACT and with every table COMPRESSED at each
//! KEY_BLOCK_SIZE, must give the same answer to every statement, in the
//! same order, and each run must pass every checker (the recovery oracle
//! at its final crash among them).
//!
//! The plans run without the faults that strike at an I/O count (crash
//! points, misdirected writes, fsync failures, a full disk): compressed
//! pages make different I/O, so those would strike at different
//! statements. What is left depends only on the statements, the
//! interleaving (drawn from the seed) and the simulated clock.

use sim::plan::{format_name, Plan};
use sim::profile::{FaultKind, Profile};
use sim::runner::execute;

/// The statement lines of a kept trace without their I/O counts: what each
/// session asked and what it was answered (rows by their digest), when,
/// in order.
fn answers(plan: &Plan) -> Vec<String> {
    let o = execute(plan, true).expect("a valid plan");
    assert!(
        o.violations.is_empty(),
        "seed {} with {:?}: {:?}",
        plan.seed,
        plan.row_formats,
        o.violations
    );
    o.trace
        .iter()
        .filter_map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(line).ok()?;
            let obj = v.as_object_mut()?;
            if obj.get("kind")?.as_str()? != "statement" {
                return None;
            }
            obj.remove("io");
            Some(v.to_string())
        })
        .collect()
}

fn with_format(plan: &Plan, format: engine::RowFormat) -> Plan {
    let mut p = plan.clone();
    let name = format_name(format).to_string();
    // Compressed tables need files of their own.
    p.system_tables = false;
    p.row_formats = [name.clone(), name.clone()];
    for t in &mut p.tables {
        t.row_format = name.clone();
    }
    p
}

#[test]
fn compressed_tables_answer_every_statement_as_compact_ones_do() {
    let profile = Profile::named("default").expect("a profile");
    let mut compared = 0;
    for seed in 0..12 {
        let mut plan = Plan::generate(seed, &profile, None, None);
        plan.crash_after_ios.clear();
        plan.crash_at_statements.clear();
        plan.crash_after_checkpoints.clear();
        plan.fsync_failures_at_statements.clear();
        plan.fsync_failures_in_recovery.clear();
        plan.disk_headroom_kib = None;
        plan.faults = vec![FaultKind::ProcessCrash];
        let base = answers(&with_format(&plan, engine::RowFormat::Compact));
        assert!(base.len() > 100, "seed {seed}: {} statements", base.len());
        assert!(
            base.iter().filter(|l| l.contains("\"digest\"")).count() > 20,
            "seed {seed}: reads answered with rows"
        );
        for key_block_size in [1, 2, 4, 8, 16] {
            let got = answers(&with_format(
                &plan,
                engine::RowFormat::Compressed { key_block_size },
            ));
            if let Some(i) = (0..base.len().max(got.len())).find(|&i| base.get(i) != got.get(i)) {
                panic!(
                    "seed {seed}, KEY_BLOCK_SIZE {key_block_size}: statement {i} differs\n  COMPACT:    {:?}\n  COMPRESSED: {:?}",
                    base.get(i),
                    got.get(i)
                );
            }
            compared += got.len();
        }
    }
    assert!(compared > 5_000, "{compared} statements compared");
}
