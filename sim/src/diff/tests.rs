//! The diff's own judgment, without a server: the shrinker keeps the
//! mismatch it began with, deadlock victims and weights the pages spread
//! are told from other differences, and a campaign against a racing server
//! counts a mismatch only if every run shows it.

use super::backend::LockStruct;
use super::shrink::Signature;
use super::*;

fn st(on: &str, page: Option<u32>, mode: &str, waiting: bool, bits: Option<u32>) -> LockStruct {
    LockStruct {
        on: on.into(),
        page,
        mode: mode.into(),
        waiting,
        bits,
    }
}

/// An outcome whose last step `sql` by session 1 finished with `ours`
/// on innosim and waited on the server.
fn mismatched_at(sql: &str, ours: Answer) -> Outcome {
    let waiting = Picture {
        finished: BTreeMap::new(),
        blocked: [1].into(),
    };
    Outcome {
        steps: vec![Step {
            session: 1,
            sql: sql.into(),
            ours: Picture {
                finished: [(1, ours)].into(),
                blocked: BTreeSet::new(),
            },
            theirs: waiting,
        }],
        mismatch: Some("step 1".into()),
        ..Outcome::default()
    }
}

#[test]
fn the_shrinker_keeps_the_mismatch_it_began_with() {
    let ok = |affected| Answer::Ok {
        affected,
        warnings: 0,
        info: None,
    };
    let insert = "INSERT INTO `t1` VALUES (38, 'acb', NULL, 21)";
    let want = Signature::of(&mismatched_at(insert, ok(1)));
    // The same statement, the same shapes: the same difference, though
    // a cut changed a count.
    assert_eq!(Signature::of(&mismatched_at(insert, ok(2))), want);
    // Another statement that differs (seed 1534's first shrink slipped
    // to a CREATE INDEX under a transaction left open), or the same one
    // failing on innosim instead: another difference.
    let ddl = "CREATE INDEX `ox` ON `t1` (`c0`)";
    assert_ne!(Signature::of(&mismatched_at(ddl, ok(0))), want);
    let err = Answer::Err {
        code: 1452,
        state: "23000".into(),
        message: String::new(),
    };
    assert_ne!(Signature::of(&mismatched_at(insert, err)), want);
    // No mismatch at all is not it either.
    assert_ne!(Signature::of(&Outcome::default()), want);
    let end = Outcome {
        mismatch: Some("the table t1 at the end: innosim 1 rows".into()),
        ..Outcome::default()
    };
    assert_eq!(Signature::of(&end), Signature::End("the table t1".into()));
}

#[test]
fn victims_chosen_by_structs_the_pages_spread_are_told_from_other_weights() {
    // compressed seed 2694: s0's scan meets its rows on two pages of
    // the server's and on one struct of innosim's; s3 weighs 6 on
    // both; s0, the requester, loses on innosim and wins on the server.
    let trx = |s, structs, rows, undo| backend::CycleTrx {
        session: Some(s),
        structs,
        rows,
        undo,
    };
    let ours = [trx(0, 6, 9, 0), trx(3, 4, 3, 2)];
    let theirs = [trx(0, 7, 9, 0), trx(3, 4, 3, 2)];
    assert_eq!(cycle_bound(&ours, &theirs, (0, 3), 0, true), Ok(()));
    // Each side's victim must be the lightest by its own counts.
    assert!(cycle_bound(&ours, &theirs, (3, 0), 0, true).is_err());
    // The supremum of the page a scan crossed into is the pages'; a
    // record lock innosim has and the server does not is not.
    let crossed = [trx(0, 7, 10, 0), trx(3, 4, 3, 2)];
    assert_eq!(cycle_bound(&ours, &crossed, (0, 3), 0, true), Ok(()));
    let fewer_rows = [trx(0, 7, 8, 0), trx(3, 4, 3, 2)];
    assert!(cycle_bound(&ours, &fewer_rows, (0, 3), 0, true).is_err());
    // compressed seed 3197: the insert that closes the cycle weighs an
    // undo record more on innosim (a row its compressed leaf refused),
    // and the other transaction holds a supremum more in a struct both
    // sides have.
    let ours = [trx(3, 5, 3, 4), trx(0, 7, 8, 1)];
    let theirs = [trx(3, 5, 4, 3), trx(0, 7, 9, 1)];
    assert_eq!(cycle_bound(&ours, &theirs, (0, 3), 3, true), Ok(()));
    assert!(cycle_bound(&ours, &theirs, (0, 3), 3, false).is_err());
    // Fewer structs on the server, or other undo records beside no
    // compressed table, or another cycle: not the pages.
    assert!(cycle_bound(&theirs, &ours, (3, 0), 0, true).is_err());
    let undo = [trx(0, 6, 9, 1), trx(3, 4, 3, 2)];
    assert!(cycle_bound(&ours, &undo, (0, 3), 0, false).is_err());
    let other = [trx(0, 7, 9, 0), trx(2, 4, 3, 2)];
    assert!(cycle_bound(&ours, &other, (0, 2), 0, true).is_err());
    // The same weights: the pages did not choose.
    assert!(cycle_bound(&ours, &ours, (0, 3), 0, true).is_err());
}

#[test]
fn weights_spread_by_pages_are_told_from_other_locks() {
    // innosim diff default seed 837: a reorganized compressed page
    // left empty insert intention structs behind a wait.
    let ours = [
        st("sb", None, "IX", false, None),
        st("sb.PRIMARY", None, "X,GAP", false, Some(2)),
        st("sb.PRIMARY", None, "X,GAP,II", true, Some(1)),
    ];
    let mut theirs = vec![
        st("sb", None, "IX", false, None),
        st("sb.PRIMARY", Some(3), "X,GAP", false, Some(2)),
        st("sb.PRIMARY", Some(3), "X,GAP,II", false, Some(0)),
        st("sb.PRIMARY", Some(3), "X,GAP,II", false, Some(0)),
        st("sb.PRIMARY", Some(3), "X,GAP,II", true, Some(1)),
    ];
    assert_eq!(layout_bound(&ours, &theirs, (3, 5), false), Ok(()));
    // The same structs but one undo record more, beside no
    // compressed table: not the pages.
    assert!(layout_bound(&ours, &theirs, (3, 6), false).is_err());
    assert_eq!(layout_bound(&ours, &theirs, (3, 6), true), Ok(()));
    // A record lock on another index, or another record: not the
    // pages.
    theirs.push(st("sb.k", Some(4), "X,REC", false, Some(1)));
    assert!(layout_bound(&ours, &theirs, (3, 6), true).is_err());
    theirs.pop();
    theirs[1].bits = Some(3);
    assert!(layout_bound(&ours, &theirs, (3, 5), false).is_err());
    theirs[1].bits = Some(2);
    // A next-key struct on a second page (a range read crossing it
    // locks the page's supremum) is the pages'; on the only page, not.
    theirs.push(st("sb.PRIMARY", Some(5), "X", false, Some(1)));
    assert_eq!(layout_bound(&ours, &theirs, (3, 6), false), Ok(()));
    theirs.last_mut().unwrap().page = Some(3);
    assert!(layout_bound(&ours, &theirs, (3, 6), false).is_err());
    theirs.pop();
    // innosim with a struct more than the server: not the pages
    // (default seed 1930).
    let mut more = ours.to_vec();
    more.push(st("sb.PRIMARY", None, "X,GAP", false, Some(0)));
    assert!(layout_bound(&more, &theirs, (4, 5), false).is_err());
    // Equal lists and different undo records beside no compressed
    // table: nothing the pages did.
    assert!(layout_bound(&ours, &ours, (3, 4), false).is_err());
}

/// innosim as the other side, answering one more affected row to the
/// first INSERT of the runs `wrong` names (counted by `start`), and
/// saying whether its threads race.
struct Flaky {
    inner: backend::Local,
    runs: usize,
    wrong: fn(usize) -> bool,
    races: bool,
    inserted: bool,
}

impl Backend for Flaky {
    fn name(&self) -> String {
        "flaky".into()
    }
    fn start(&mut self, sessions: usize, setup: &[String]) -> Result<(), String> {
        self.runs += 1;
        self.inserted = false;
        self.inner.start(sessions, setup)
    }
    fn set_sort_buffer(&mut self, bytes: Option<usize>) {
        self.inner.set_sort_buffer(bytes);
    }
    fn issue(&mut self, session: usize, sql: &str) -> Result<backend::Issued, String> {
        let issued = self.inner.issue(session, sql)?;
        if self.inserted || !sql.starts_with("INSERT") || !(self.wrong)(self.runs) {
            return Ok(issued);
        }
        Ok(match issued {
            backend::Issued::Done(Answer::Ok {
                affected,
                warnings,
                info,
            }) => {
                self.inserted = true;
                backend::Issued::Done(Answer::Ok {
                    affected: affected + 1,
                    warnings,
                    info,
                })
            }
            other => other,
        })
    }
    fn completions(&mut self) -> Result<BTreeMap<usize, Answer>, String> {
        self.inner.completions()
    }
    fn query(&mut self, sql: &str) -> Result<Answer, String> {
        self.inner.query(sql)
    }
    fn races(&mut self) -> Result<bool, String> {
        Ok(self.races)
    }
    fn weights(&mut self) -> Result<BTreeMap<usize, u64>, String> {
        self.inner.weights()
    }
    fn stop(&mut self) -> Result<(), String> {
        self.inner.stop()
    }
}

/// A campaign of seed 3 against `theirs`.
fn one_seed(theirs: &mut Flaky) -> Summary {
    let profile = Profile::named("default").unwrap();
    let clock = engine::io::OsClock::new();
    campaign(
        &profile,
        Budget::Seeds(3, 4),
        Some(40),
        theirs,
        &clock,
        |_, _| {},
    )
    .unwrap()
}

#[test]
fn a_mismatch_against_a_racing_server_counts_only_if_every_run_shows_it() {
    let flaky = |wrong: fn(usize) -> bool, races| Flaky {
        inner: backend::Local::new(),
        runs: 0,
        wrong,
        races,
        inserted: false,
    };
    // Parted on the first run only: the server's timing, run 1 + RERUNS
    // times no more (the first re-run that agrees ends it).
    let mut once = flaky(|run| run == 1, true);
    let sum = one_seed(&mut once);
    assert_eq!(once.runs, 2);
    assert!(sum.mismatches.is_empty(), "{sum:?}");
    assert_eq!(sum.timing.len(), 1, "{sum:?}");
    assert_eq!(sum.timing[0].0, 3);
    assert_eq!(sum.scenarios, 1);
    // Parted on the first two runs, not the third: still timing.
    let mut twice = flaky(|run| run <= 2, true);
    let sum = one_seed(&mut twice);
    assert_eq!(twice.runs, 1 + RERUNS);
    assert!(
        sum.mismatches.is_empty() && sum.timing.len() == 1,
        "{sum:?}"
    );
    // Parted on every run: a mismatch, counted once.
    let mut always = flaky(|_| true, true);
    let sum = one_seed(&mut always);
    assert_eq!(always.runs, 1 + RERUNS);
    assert_eq!(sum.mismatches.len(), 1, "{sum:?}");
    assert!(sum.timing.is_empty());
    assert_eq!(sum.scenarios, 1);
    // A side that does not race is never run again: what parted once
    // is a mismatch.
    let mut steady = flaky(|run| run == 1, false);
    let sum = one_seed(&mut steady);
    assert_eq!(steady.runs, 1);
    assert_eq!(sum.mismatches.len(), 1, "{sum:?}");
    assert!(sum.timing.is_empty());
    // And one that agrees is run once.
    let mut right = flaky(|_| false, true);
    let sum = one_seed(&mut right);
    assert_eq!(right.runs, 1);
    assert!(
        sum.mismatches.is_empty() && sum.timing.is_empty(),
        "{sum:?}"
    );
}
