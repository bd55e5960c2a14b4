//! Shrinking a mismatch by delta debugging: runs of steps, then of setup
//! statements, are cut while the sides still part the same way (the same
//! statement, each side's picture the same in outline), so that a cut
//! which finds another difference is not taken for a smaller case of this
//! one.

use super::*;

/// Shrinks a mismatching transcript: drops runs of steps, then of setup
/// statements, halving the run length down to one (delta debugging),
/// keeping each cut after which the sides still differ (not merely race).
/// `make_ours` gives a fresh innosim side for each try.
pub fn shrink(
    t: &Transcript,
    make_ours: &dyn Fn() -> backend::Local,
    theirs: &mut dyn Backend,
) -> Result<(Transcript, Outcome), String> {
    let mut best = t.clone();
    let (mut best_out, consumed) = run_transcript(&best, &mut make_ours(), theirs)?;
    if best_out.mismatch.is_none() {
        return Err(format!(
            "seed {}: the transcript does not mismatch again",
            t.seed
        ));
    }
    let want = Signature::of(&best_out);
    // Past the mismatching step nothing runs.
    best.steps.truncate(consumed);
    for part in [false, true] {
        let len = |t: &Transcript| if part { t.setup.len() } else { t.steps.len() };
        let mut chunk = len(&best).div_ceil(2).max(1);
        loop {
            let mut i = 0;
            while i < len(&best) {
                let mut cand = best.clone();
                let end = (i + chunk).min(len(&cand));
                if part {
                    cand.setup.drain(i..end);
                } else {
                    cand.steps.drain(i..end);
                }
                // A cut that breaks the setup (a child table whose parent
                // went) is a cut that does not keep the difference.
                match run_transcript(&cand, &mut make_ours(), theirs) {
                    Ok((out, consumed)) if Signature::of(&out) == want => {
                        cand.steps.truncate(consumed);
                        best = cand;
                        best_out = out;
                    }
                    _ => i += chunk,
                }
            }
            if chunk == 1 {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
    }
    Ok((best, best_out))
}

/// What a mismatch is, as the shrinker keeps it: the statement whose
/// pictures differed (its session and text) with each side's picture in
/// outline (who waits after it; who finished, with rows, OK or which
/// error), or the table whose rows differed at the end. A cut after which
/// the sides differ elsewhere, or otherwise, has found another difference
/// (delta debugging's slippage: a cut that drops a COMMIT leaves a
/// transaction open under DDL the scenario runs only between
/// transactions), not a smaller case of this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Signature {
    /// No mismatch.
    None,
    /// At a step.
    Step {
        session: usize,
        sql: String,
        ours: Outline,
        theirs: Outline,
    },
    /// In a table's rows at the end (the table's name).
    End(String),
}

/// A picture without its rows and counts: the waiting sessions and what
/// kind of answer each finished session had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Outline {
    blocked: BTreeSet<usize>,
    finished: BTreeMap<usize, Option<u16>>,
}

impl Outline {
    fn of(p: &Picture) -> Outline {
        Outline {
            blocked: p.blocked.clone(),
            finished: (p.finished.iter())
                .map(|(&s, a)| {
                    let code = match a {
                        Answer::Err { code, .. } => Some(*code),
                        Answer::Rows { .. } | Answer::Ok { .. } => None,
                    };
                    (s, code)
                })
                .collect(),
        }
    }
}

impl Signature {
    pub(super) fn of(out: &Outcome) -> Signature {
        let Some(m) = &out.mismatch else {
            return Signature::None;
        };
        match out.steps.last() {
            Some(st) if st.ours != st.theirs => Signature::Step {
                session: st.session,
                sql: st.sql.clone(),
                ours: Outline::of(&st.ours),
                theirs: Outline::of(&st.theirs),
            },
            _ => Signature::End(m.split(" at the end").next().unwrap_or(m).to_string()),
        }
    }
}
