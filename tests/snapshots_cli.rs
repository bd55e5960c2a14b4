//! The command line's outputs that a change should never alter unseen:
//! `innosim run`'s summary of one fixed seed, a violation's message, and
//! the whole trace of that seed. Each is an insta snapshot
//! (`tests/snapshots/`); a change made on purpose is accepted with
//! `cargo insta review` (or `INSTA_UPDATE=always`), and shows in the diff.

use std::process::Command;

fn innosim(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_innosim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("innosim runs");
    let mut text = String::from_utf8(out.stdout).expect("text");
    text.push_str(&String::from_utf8(out.stderr).expect("text"));
    (out.status.success(), text)
}

#[test]
fn a_fixed_seeds_summary() {
    let (ok, text) = innosim(&["run", "--seed", "3", "--profile", "small"]);
    assert!(ok, "{text}");
    insta::assert_snapshot!("run_seed_3_small", text);
}

#[test]
fn a_violations_message() {
    // A planted bug (the commit acknowledged before its sync) caught by the
    // recovery oracle, from its corpus entry.
    let (_, text) = innosim(&["replay", "corpus/default-6-ack-before-sync"]);
    assert!(text.contains("violation: recovery oracle"), "{text}");
    insta::assert_snapshot!("violation_ack_before_sync", text);
}

#[test]
fn a_fixed_seeds_trace() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("trace.jsonl");
    let path = file.to_str().expect("a path");
    let (ok, text) = innosim(&["run", "--seed", "3", "--profile", "small", "--trace", path]);
    assert!(ok, "{text}");
    let trace = std::fs::read_to_string(&file).expect("the trace is written");
    assert!(trace.lines().count() > 100);
    insta::assert_snapshot!("trace_seed_3_small", trace);
}
