//! `innosim script --suite`: a directory laid out as mysql-test's suites
//! runs as mysql-test-run runs it. The suite here is written by the test:
//! one test that passes, one whose result differs (its output goes to
//! `r/NAME.reject`), one that stops at an unexpected error, one skipped by
//! a capability it requires, one disabled, and one whose `-master.opt`
//! sets a startup option.

use sim::script::suite::{run_suite, Verdict};
use std::path::PathBuf;

fn suite() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("innosim-suite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["t", "r", "include"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let w = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
    w(
        "include/make.inc",
        "create table t (a int primary key) engine=innodb;\n",
    );
    w(
        "t/pass.test",
        "--source suite/mine/include/make.inc\ninsert into t values (1);\nselect * from t;\n",
    );
    w(
        "r/pass.result",
        "create table t (a int primary key) engine=innodb;\ninsert into t values (1);\nselect * from t;\na\n1\n",
    );
    w("t/differs.test", "select 1 as x;\nselect 2 as y;\n");
    w(
        "r/differs.result",
        "select 1 as x;\nx\n1\nselect 2 as y;\ny\n3\n",
    );
    w(
        "t/stops.test",
        "select 1 as x;\nselect * from nosuch;\nselect 2;\nselect 3;\n",
    );
    w("r/stops.result", "select 1 as x;\nx\n1\n");
    w("r/yes.require", "x\nyes\n");
    w(
        "t/skips.test",
        "--require r/yes.require\nselect 'no' as x;\nselect 1;\n",
    );
    w("t/off.test", "select 1;\n");
    w("t/disabled.def", "# comment\noff : it is broken upstream\n");
    w("t/opt-master.opt", "--loose-innodb_lock_wait_timeout=7\n");
    w("t/opt.test", "select @@innodb_lock_wait_timeout;\n");
    w(
        "r/opt.result",
        "select @@innodb_lock_wait_timeout;\n@@innodb_lock_wait_timeout\n7\n",
    );
    dir
}

#[test]
fn a_suite_runs_test_by_test_with_rejects_skips_and_disabled_tests() {
    let dir = suite();
    let report = run_suite(&dir, &[], false, |_| {}).unwrap();
    let verdict = |n: &str| {
        report
            .tests
            .iter()
            .find(|t| t.name == n)
            .unwrap_or_else(|| panic!("{n} ran"))
            .clone()
    };
    assert_eq!(verdict("pass").verdict, Verdict::Pass);
    assert_eq!(verdict("opt").verdict, Verdict::Pass, "master.opt is read");
    match verdict("differs").verdict {
        Verdict::Fail(why) => assert_eq!(why, "line 6: expected '3', got '2'"),
        v => panic!("{v:?}"),
    }
    let reject = std::fs::read_to_string(dir.join("r/differs.reject")).unwrap();
    assert!(reject.ends_with("y\n2\n"), "{reject}");
    assert!(!dir.join("r/pass.reject").exists());
    let stops = verdict("stops");
    match &stops.verdict {
        Verdict::Fail(why) => assert!(
            why.contains("query 'select * from nosuch' failed: 1146"),
            "{why}"
        ),
        v => panic!("{v:?}"),
    }
    // One statement right, the failing one wrong, two never reached.
    assert_eq!((stops.matching, stops.statements), (1, 4));
    assert!(
        matches!(verdict("skips").verdict, Verdict::Skipped(ref w) if w == "Test requires: 'yes'")
    );
    assert!(
        matches!(verdict("off").verdict, Verdict::Disabled(ref w) if w == "it is broken upstream")
    );
    let (pass, fail, skip, off) = report.counts();
    assert_eq!((pass, fail, skip, off), (2, 2, 1, 1));
    let again = run_suite(&dir, &["off".to_string()], true, |_| {}).unwrap();
    assert_eq!(again.tests.len(), 1);
    assert!(
        matches!(again.tests[0].verdict, Verdict::Fail(_)),
        "it has no result file"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
