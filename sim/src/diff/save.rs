//! A shrunk mismatch saved as a mysqltest script whose `.result` is the
//! other server's output: `corpus/diff/` keeps them, and `cargo test`
//! runs each on innosim alone (`tests/diff_corpus.rs`), so every
//! difference found stays found.
//!
//! The script follows the server's run, step by step: a statement the
//! server answered at once is sent plainly (`--error N` before it when it
//! failed); one the server made wait is sent with `send`, and the default
//! connection then waits until as many transactions wait for a lock as did
//! on the server (`include/wait_condition.inc` over INNODB_TRX); a waiting
//! statement the server finished at a later step is reaped there. On
//! innosim, a statement that does not wait where the server's did leaves
//! the wait to time out ("Timeout in wait_condition.inc"), and one that
//! waits where the server's did not runs into the lock wait timeout
//! (1205): either way the output parts from the server's. A script whose
//! last statement left others waiting on the server ends by waiting until
//! as many wait, so a waiter innosim ended (a deadlock victim) shows too.
//! Affected rows
//! and info lines are compared (`--enable_info`), warnings are not (their
//! texts are not kept), nor the tables' rows at the end.
//!
//! # Shrinking, saving, and the saved scripts' test
//!
//! `innosim diff --shrink N` cuts each of the first N mismatches down to the fewest statements
//! that still differ the same way (delta debugging over the run's transcript: a cut is kept
//! only if the same statement still parts the sides with the same outline, who waits and who
//! finished with rows, OK or which error, or the same table at the end; seed 1534's first
//! shrink had slipped to another difference, a CREATE INDEX under a transaction whose COMMIT
//! the cut dropped) and prints it as a mysqltest script with both sides' answers where they
//! part. `--save corpus/diff` also writes it as `PROFILE-SEED.test` with the server's output as
//! its `.result`, as above (warning texts and the final table rows are not kept).
//!
//! `cargo test --test diff_corpus` runs each on innosim alone: a fixed one must give the
//! server's output; an open one is listed in `corpus/diff/disabled.def` with what is known of
//! it and must still differ, so a fix shows as an entry to take out; one a later rule explains
//! is listed in `corpus/diff/versions.def` with its rule, and must differ with 1.0.6's rules
//! and give the server's output with that rule on, or with the rules it names together (twenty
//! scripts).

use super::backend::Answer;
use super::{Outcome, Transcript};
use std::collections::BTreeSet;

/// A saved difference: the script and the server's output of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The `.test`.
    pub test: String,
    /// The `.result`: the server's answers, as mysqltest prints them.
    pub result: String,
}

/// The answer as mysqltest prints it under `--enable_info` (the echo of
/// the statement aside).
fn printed(a: &Answer) -> String {
    let cell = |c: &Option<Vec<u8>>| match c {
        None => "NULL".to_string(),
        Some(b) => String::from_utf8_lossy(b).into_owned(),
    };
    match a {
        Answer::Rows { columns, rows, .. } => {
            let mut s = columns.join("\t");
            s.push('\n');
            for r in rows {
                let cells: Vec<String> = r.iter().map(cell).collect();
                s.push_str(&cells.join("\t"));
                s.push('\n');
            }
            s.push_str(&format!("affected rows: {}\n", rows.len()));
            s
        }
        Answer::Ok { affected, info, .. } => {
            let mut s = format!("affected rows: {affected}\n");
            if let Some(i) = info {
                s.push_str(&format!("info: {i}\n"));
            }
            s
        }
        Answer::Err { state, message, .. } => format!("ERROR {state}: {message}\n"),
    }
}

/// `--error N` before a statement (or reap) whose answer is an error.
fn expect(a: &Answer) -> String {
    match a.error() {
        Some(code) => format!("--error {code}\n"),
        None => String::new(),
    }
}

/// The script and result of transcript `t` as the server ran it: `out` is
/// `t` run on both sides ([`super::run_transcript`]), whose steps carry the
/// server's pictures. `header` goes first, as comments.
pub fn saved(t: &Transcript, out: &Outcome, header: &str) -> Saved {
    let mut test = String::new();
    let mut result = String::new();
    for line in header.lines() {
        test.push_str(&format!("# {line}\n"));
    }
    test.push_str("--disable_warnings\n");
    for sql in ["CREATE DATABASE diff", "USE diff"]
        .iter()
        .map(|s| s.to_string())
        .chain(t.setup.iter().cloned())
    {
        test.push_str(&format!("{sql};\n"));
        result.push_str(&format!("{sql};\n"));
    }
    for s in 0..t.sessions {
        test.push_str(&format!("connect (s{s},localhost,root,,diff);\n"));
    }
    // Purge stands still, as it did in the diff (`PURGE_BLOCKER`).
    let blocker = super::backend::PURGE_BLOCKER;
    test.push_str(&format!(
        "connect (purge_blocker,localhost,root,,diff);\n{blocker};\n"
    ));
    result.push_str(&format!("{blocker};\n"));
    test.push_str("--enable_info\n");
    let mut current: Option<usize> = None;
    let mut sent: BTreeSet<usize> = BTreeSet::new();
    let switch = |test: &mut String, to: usize, current: &mut Option<usize>| {
        if *current != Some(to) {
            test.push_str(&format!("connection s{to};\n"));
            *current = Some(to);
        }
    };
    for step in &out.steps {
        let theirs = &step.theirs;
        let s = step.session;
        switch(&mut test, s, &mut current);
        result.push_str(&format!("{};\n", step.sql));
        match theirs.finished.get(&s) {
            Some(a) => {
                test.push_str(&expect(a));
                test.push_str(&format!("{};\n", step.sql));
                result.push_str(&printed(a));
            }
            None => {
                test.push_str(&format!("send {};\n", step.sql));
                sent.insert(s);
                // Until as many transactions wait as did on the server.
                test.push_str("connection default;\n");
                current = None;
                test.push_str(&format!(
                    "let $wait_condition= SELECT COUNT(*) = {} FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT';\n\
                     --source include/wait_condition.inc\n",
                    theirs.blocked.len()
                ));
            }
        }
        for (&f, a) in &theirs.finished {
            if f != s && sent.remove(&f) {
                switch(&mut test, f, &mut current);
                test.push_str(&expect(a));
                test.push_str("reap;\n");
                result.push_str(&printed(a));
            }
        }
    }
    // Statements still waiting on the server at the end: the script ends
    // by waiting until as many do, so that a difference in who waits (a
    // waiter innosim chose as a deadlock victim, or granted) shows.
    if let Some(last) = out.steps.last() {
        if last.theirs.finished.contains_key(&last.session) && !last.theirs.blocked.is_empty() {
            test.push_str(&format!(
                "connection default;\n\
                 let $wait_condition= SELECT COUNT(*) = {} FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT';\n\
                 --source include/wait_condition.inc\n",
                last.theirs.blocked.len()
            ));
        }
    }
    Saved { test, result }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Picture, Step};
    use std::collections::BTreeMap;

    fn pic(finished: &[(usize, Answer)], blocked: &[usize]) -> Picture {
        Picture {
            finished: finished.iter().cloned().collect::<BTreeMap<_, _>>(),
            blocked: blocked.iter().copied().collect(),
        }
    }

    #[test]
    fn a_script_that_leaves_a_statement_waiting_ends_by_waiting_for_it() {
        let ok = |n| Answer::Ok {
            affected: n,
            warnings: 0,
            info: None,
        };
        let t = Transcript {
            seed: 1,
            sessions: 2,
            setup: Vec::new(),
            tables: Vec::new(),
            steps: Vec::new(),
        };
        let step = |session, sql: &str, theirs: Picture| Step {
            session,
            sql: sql.into(),
            ours: theirs.clone(),
            theirs,
        };
        let out = Outcome {
            steps: vec![
                step(1, "UPDATE t SET v = 1", pic(&[], &[1])),
                step(0, "SELECT 1", pic(&[(0, ok(0))], &[1])),
            ],
            ..Outcome::default()
        };
        let s = saved(&t, &out, "seed 1");
        assert!(
            s.test.ends_with(
                "connection s0;\nSELECT 1;\nconnection default;\n\
                 let $wait_condition= SELECT COUNT(*) = 1 FROM information_schema.innodb_trx \
                 WHERE trx_state = 'LOCK WAIT';\n--source include/wait_condition.inc\n"
            ),
            "{}",
            s.test
        );
        // A wait condition prints nothing when it holds.
        assert!(
            s.result.ends_with("SELECT 1;\naffected rows: 0\n"),
            "{}",
            s.result
        );
    }

    #[test]
    fn a_wait_on_the_server_is_a_send_a_wait_for_it_and_a_reap() {
        let ok = |n| Answer::Ok {
            affected: n,
            warnings: 0,
            info: None,
        };
        let t = Transcript {
            seed: 1,
            sessions: 2,
            setup: vec!["CREATE TABLE t (id INT PRIMARY KEY)".into()],
            tables: Vec::new(),
            steps: Vec::new(),
        };
        let step = |session, sql: &str, theirs: Picture| Step {
            session,
            sql: sql.into(),
            ours: theirs.clone(),
            theirs,
        };
        let out = Outcome {
            steps: vec![
                step(0, "BEGIN", pic(&[(0, ok(0))], &[])),
                step(
                    0,
                    "SELECT * FROM t FOR UPDATE",
                    pic(
                        &[(
                            0,
                            Answer::Rows {
                                columns: vec!["id".into()],
                                rows: vec![vec![None]],
                                warnings: 0,
                            },
                        )],
                        &[],
                    ),
                ),
                step(1, "INSERT INTO t VALUES (1)", pic(&[], &[1])),
                step(
                    0,
                    "COMMIT",
                    pic(
                        &[
                            (0, ok(0)),
                            (
                                1,
                                Answer::Err {
                                    code: 1062,
                                    state: "23000".into(),
                                    message: "Duplicate entry '1' for key 'PRIMARY'".into(),
                                },
                            ),
                        ],
                        &[],
                    ),
                ),
            ],
            ..Outcome::default()
        };
        let s = saved(&t, &out, "seed 1");
        assert!(
            s.test.starts_with("# seed 1\n--disable_warnings\n"),
            "{}",
            s.test
        );
        assert!(
            s.test.contains(
                "connection s1;\nsend INSERT INTO t VALUES (1);\nconnection default;\n\
                 let $wait_condition= SELECT COUNT(*) = 1 FROM information_schema.innodb_trx \
                 WHERE trx_state = 'LOCK WAIT';\n--source include/wait_condition.inc\n\
                 connection s0;\nCOMMIT;\nconnection s1;\n--error 1062\nreap;\n"
            ),
            "{}",
            s.test
        );
        assert!(
            s.result.ends_with(
                "SELECT * FROM t FOR UPDATE;\nid\nNULL\naffected rows: 1\n\
                 INSERT INTO t VALUES (1);\nCOMMIT;\naffected rows: 0\n\
                 ERROR 23000: Duplicate entry '1' for key 'PRIMARY'\n"
            ),
            "{}",
            s.result
        );
    }
}
