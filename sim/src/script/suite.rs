//! A directory laid out as mysql-test's suites are (`t/NAME.test`,
//! `t/NAME-master.opt`, `t/disabled.def`, `r/NAME.result`, `include/`),
//! run as mysql-test-run runs it: each test on a fresh server started with
//! its `-master.opt`, its output compared with its `.result`, a failing
//! test's output written to `r/NAME.reject`, one line a test.

use super::{common_lines, run_with, Ending, Options};
use std::path::{Path, PathBuf};

/// How one test went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its output equals its `.result`.
    Pass,
    /// It differs: the first differing line, or how it stopped.
    Fail(String),
    /// It cannot run here, and why.
    Skipped(String),
    /// `disabled.def` lists it, with its comment.
    Disabled(String),
}

/// One test's outcome.
#[derive(Debug, Clone)]
pub struct TestReport {
    /// The test's name.
    pub name: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Statements run and statements never reached (which count as
    /// wrong).
    pub statements: usize,
    /// Of `statements`, those that gave the recorded output.
    pub matching: usize,
}

/// A whole suite's outcome.
#[derive(Debug, Clone, Default)]
pub struct SuiteReport {
    /// Each test, in name order.
    pub tests: Vec<TestReport>,
}

impl SuiteReport {
    /// (passed, failed, skipped, disabled).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0);
        for t in &self.tests {
            match t.verdict {
                Verdict::Pass => c.0 += 1,
                Verdict::Fail(_) => c.1 += 1,
                Verdict::Skipped(_) => c.2 += 1,
                Verdict::Disabled(_) => c.3 += 1,
            }
        }
        c
    }

    /// (statements matching, statements counted) over every test run.
    pub fn statements(&self) -> (usize, usize) {
        self.tests
            .iter()
            .fold((0, 0), |(m, n), t| (m + t.matching, n + t.statements))
    }
}

/// The tests `disabled.def` lists: name and comment.
fn disabled(dir: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(dir.join("t/disabled.def")) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let (name, why) = l.split_once(':')?;
            Some((name.trim().to_string(), why.trim().to_string()))
        })
        .collect()
}

/// The tests in `dir/t`, by name.
pub fn tests(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("t"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    v.sort();
    Ok(v)
}

/// Runs one test of a suite.
pub fn run_test(dir: &Path, name: &str) -> TestReport {
    let t = dir.join("t").join(format!("{name}.test"));
    let result = dir.join("r").join(format!("{name}.result"));
    let reject = dir.join("r").join(format!("{name}.reject"));
    let fail = |why: String| TestReport {
        name: name.to_string(),
        verdict: Verdict::Fail(why),
        statements: 0,
        matching: 0,
    };
    let text = match std::fs::read_to_string(&t) {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot read {}: {e}", t.display())),
    };
    let startup: Vec<String> =
        std::fs::read_to_string(dir.join("t").join(format!("{name}-master.opt")))
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default();
    let opts = Options {
        base: Some(dir.to_path_buf()),
        startup,
        ..Options::default()
    };
    let run = match run_with(&text, &t.display().to_string(), &opts) {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    if let Ending::Skipped(why) = &run.ending {
        return TestReport {
            name: name.to_string(),
            verdict: Verdict::Skipped(why.clone()),
            statements: 0,
            matching: 0,
        };
    }
    let want = std::fs::read_to_string(&result).unwrap_or_default();
    let want_lines: Vec<&str> = want.lines().collect();
    let got_lines: Vec<&str> = run.output.lines().collect();
    let matched = common_lines(&want_lines, &got_lines);
    let mut ok_line = vec![false; got_lines.len()];
    for &(_, j) in &matched {
        ok_line[j] = true;
    }
    // A statement that wrote lines gave the recorded output when every
    // line is in place; a silent one (its log and result turned off) when
    // it did what the test expects of it, which is to say the test went
    // on past it: all of them but one the script stopped at.
    let failed_silently = matches!(run.ending, Ending::Failed(_))
        && run.statements.last().is_some_and(|(a, b)| a == b);
    let matching = run
        .statements
        .iter()
        .filter(|(a, b)| (*a..*b).all(|k| ok_line.get(k).copied().unwrap_or(false)))
        .count()
        - usize::from(failed_silently);
    let statements = run.statements.len() + run.unreached;
    let verdict = if run.output == want {
        let _ = std::fs::remove_file(&reject);
        Verdict::Pass
    } else {
        let _ = std::fs::write(&reject, &run.output);
        Verdict::Fail(match &run.ending {
            Ending::Failed(m) => m.clone(),
            _ => first_difference(&want_lines, &got_lines, &matched),
        })
    };
    TestReport {
        name: name.to_string(),
        verdict,
        statements,
        matching,
    }
}

/// The first line where the output leaves the result.
fn first_difference(want: &[&str], got: &[&str], matched: &[(usize, usize)]) -> String {
    let mut k = 0;
    for &(i, j) in matched {
        if i != k || j != k {
            break;
        }
        k += 1;
    }
    match (want.get(k), got.get(k)) {
        (Some(w), Some(g)) => format!("line {}: expected '{w}', got '{g}'", k + 1),
        (Some(w), None) => format!("line {}: expected '{w}', the output ended", k + 1),
        (None, Some(g)) => format!("line {}: the result ended, got '{g}'", k + 1),
        (None, None) => "the output differs in line endings".into(),
    }
}

/// Runs every test of the suite in `dir` (disabled ones too when
/// `enable_disabled`), calling `each` as each finishes.
pub fn run_suite(
    dir: &Path,
    only: &[String],
    enable_disabled: bool,
    mut each: impl FnMut(&TestReport),
) -> std::io::Result<SuiteReport> {
    let off = disabled(dir);
    let mut report = SuiteReport::default();
    for name in tests(dir)? {
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        let t = match off.iter().find(|(n, _)| *n == name) {
            Some((_, why)) if !enable_disabled => TestReport {
                name: name.clone(),
                verdict: Verdict::Disabled(why.clone()),
                statements: 0,
                matching: 0,
            },
            _ => run_test(dir, &name),
        };
        each(&t);
        report.tests.push(t);
    }
    Ok(report)
}

/// A message's first line, at most 160 characters (a failing query may
/// span many).
fn short(why: &str) -> String {
    let first = why.lines().next().unwrap_or("");
    let mut s: String = first.chars().take(160).collect();
    if s.len() < why.len() {
        s.push_str(" ...");
    }
    s
}

/// A test's line in mysql-test-run's manner.
pub fn line(t: &TestReport) -> String {
    let stmts = if t.statements > 0 {
        format!("  ({}/{} statements)", t.matching, t.statements)
    } else {
        String::new()
    };
    match &t.verdict {
        Verdict::Pass => format!("{:<32} [ pass ]{stmts}", t.name),
        Verdict::Fail(why) => format!("{:<32} [ fail ]{stmts}  {}", t.name, short(why)),
        Verdict::Skipped(why) => format!("{:<32} [ skipped ]  {why}", t.name),
        Verdict::Disabled(why) => format!("{:<32} [ disabled ]  {why}", t.name),
    }
}

/// The suite directory a path names (the directory itself, or one above
/// its `t/`).
pub fn suite_dir(p: &Path) -> PathBuf {
    if p.join("t").is_dir() {
        p.to_path_buf()
    } else {
        p.parent().map_or(p.to_path_buf(), Path::to_path_buf)
    }
}
