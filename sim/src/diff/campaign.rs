//! A diff campaign: seeds within a budget, each scenario run on both sides
//! and judged where they part (the later version's rules, the pages'
//! doing, or a mismatch, re-run against a server whose threads race), and
//! the sums: waits, deadlocks, errors, and the rare paths innosim's side
//! reached by the engine's counters.

use super::diagnosis::{describe_weights, victims_swapped, MONITOR_STRUCTS_PRINTED};
use super::*;

/// Which seeds a campaign runs.
#[derive(Debug, Clone, Copy)]
pub enum Budget {
    /// Seeds `start..end`.
    Seeds(u64, u64),
    /// Seeds from 0 on, until this many seconds have passed.
    Time(f64),
}

/// What a campaign found.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Scenarios run.
    pub scenarios: u64,
    /// Steps (statements) run on each side.
    pub steps: u64,
    /// Statements that waited for a lock.
    pub waits: u64,
    /// Deadlocks.
    pub deadlocks: u64,
    /// Errors by code.
    pub errors: BTreeMap<u16, u64>,
    /// Each mismatching seed with its report.
    pub mismatches: Vec<(u64, String)>,
    /// Seeds that parted on their first run but not on every one of
    /// [`RERUNS`] more (against a server whose threads race:
    /// [`Backend::races`]), each with its first run's report: the server's
    /// timing, not mismatches.
    pub timing: Vec<(u64, String)>,
    /// Scenarios that parted where woken waiters raced (not mismatches).
    pub racy: u64,
    /// The later version's rules the other side follows (none for innosim
    /// serve; MariaDB's for MariaDB): innosim's side of a mismatch they do
    /// not explain, and of its shrinking, runs with them.
    pub later: engine::LaterRules,
    /// Scenarios that parted where a later version's rule explains it, by
    /// rule ([`explain`]): the version's differences, not mismatches.
    pub versions: BTreeMap<String, u64>,
    /// Each such seed, with the rule.
    pub version_seeds: Vec<(u64, String)>,
    /// The rare paths innosim's side took, by the engine's counters.
    pub reached: Reached,
    /// Deadlocks whose victims differ where the two sides' weights differ
    /// only by what their pages make of the same locks and rows
    /// ([`layout_bound`]): each seed with its report. Not mismatches, and
    /// not the version's: innosim's pages are not InnoDB's byte for byte.
    pub layout: Vec<(u64, String)>,
    /// Inserts one side keeps waiting that the other finished, because of
    /// where the server's page ends ([`inserts_at_page_end`]: the server
    /// let a row in last on its page, or checked a page's supremum a split
    /// gave a lock): each seed with its report. Not mismatches, for the
    /// same reason.
    pub page_end: Vec<(u64, String)>,
}

/// The rare paths innosim's side of a campaign took: what the scenarios
/// drive the engine through, by the engine's own counters (the fuzzer's
/// runner counts the same paths by its judges).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reached {
    /// Sorted runs index builds spilled to their merge files.
    pub merge_runs_spilled: u64,
    /// Tables rebuilt by a copying ALTER TABLE.
    pub tables_rebuilt: u64,
    /// Rows UPDATEs read semi-consistently.
    pub semi_consistent_rows: u64,
    /// Record locks READ COMMITTED let go of (`row_unlock_for_mysql`).
    pub record_locks_let_go: u64,
}

impl Reached {
    fn add(&mut self, e: &engine::EngineStats) {
        self.merge_runs_spilled += e.merge_runs_spilled;
        self.tables_rebuilt += e.tables_rebuilt;
        self.semi_consistent_rows += e.semi_consistent_rows;
        self.record_locks_let_go += e.record_locks_let_go;
    }

    /// The counters, named as `innosim fuzz` names them.
    pub fn table(&self) -> [(&'static str, u64); 4] {
        [
            (
                "sorted runs index builds spilled to their merge files",
                self.merge_runs_spilled,
            ),
            ("tables rebuilt by a copying ALTER", self.tables_rebuilt),
            (
                "rows UPDATEs read semi-consistently",
                self.semi_consistent_rows,
            ),
            (
                "record locks READ COMMITTED let go (row_unlock_for_mysql)",
                self.record_locks_let_go,
            ),
        ]
    }
}

/// How a seed's run came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// No difference (or one the later version's rules explain, or woken
    /// waiters raced).
    Alike,
    /// Deadlock victims chosen by weights the pages spread ([`layout_bound`]).
    Layout,
    /// An insert parted by where the server's page ends
    /// ([`inserts_at_page_end`]).
    PageEnd,
    /// A mismatch.
    Mismatch,
}

/// One seed's run, judged.
struct Judged {
    /// The run (with the later rules on past a difference they explain).
    out: Outcome,
    /// innosim's engine counters of the first run.
    stats: engine::EngineStats,
    /// The later rule that explains where the run without it parted.
    version: Option<String>,
    kind: Kind,
    /// The report of a difference (empty for [`Kind::Alike`]).
    report: String,
}

/// Runs `seed`'s scenario on innosim and on `theirs` and judges where they
/// part: by the later version's rules `later`, the deadlock weights the
/// pages spread, or an insert at the server's page end, else a mismatch.
fn judge_seed(
    seed: u64,
    profile: &Profile,
    transactions: Option<usize>,
    later: engine::LaterRules,
    theirs: &mut dyn Backend,
) -> Result<Judged, String> {
    let name = theirs.name();
    let scenario = Scenario::generate(seed, profile, transactions)?;
    let mut ours = backend::Local::new();
    let mut out = run(&scenario, &mut ours, theirs).map_err(|e| format!("seed {seed}: {e}"))?;
    let stats = ours.engine_stats();
    let mut version = None;
    if out.mismatch.is_some() && !later.is_empty() {
        if let Some((rule, again)) =
            explain(&scenario, &out, later, theirs).map_err(|e| format!("seed {seed}: {e}"))?
        {
            version = Some(rule);
            out = again;
        }
    }
    let with_rules = version.is_some();
    let mut kind = Kind::Alike;
    let mut r = String::new();
    if out.mismatch.is_some() {
        r = report(&scenario, &out, &name);
        let deadlock = out.steps.last().is_some_and(|st| {
            st.ours != st.theirs
                && [&st.ours, &st.theirs]
                    .iter()
                    .any(|p| p.finished.values().any(|a| a.error() == Some(1213)))
        });
        let mut layout = false;
        if deadlock {
            // The weights innosim gives with the server's rules: those
            // the server's choice is to be compared with.
            let mut ours = backend::Local::with_later_rules(later);
            let before = weights_before_last(&scenario, &out, &mut ours, theirs)
                .map_err(|e| format!("seed {seed}: {e}"))?;
            let (a, b) = (
                describe_weights(&before.ours),
                describe_weights(&before.theirs),
            );
            r.push_str(&format!(
                "         trx_weight before it: innosim {a}; {name} {b}{}\n",
                if a == b { "" } else { " (weights differ)" }
            ));
            let compressed = scenario
                .setup
                .iter()
                .any(|sql| sql.contains("ROW_FORMAT=COMPRESSED"));
            let requester = out.steps.last().map_or(0, |st| st.session);
            let members: BTreeSet<usize> = (before.their_cycle.iter())
                .filter_map(|t| t.session)
                .collect();
            // What each side's transactions weighed when it found the
            // deadlock decides whether the pages chose the victims.
            let at_deadlock = match victims_swapped(&out) {
                Some(v) => cycle_bound(
                    &before.our_cycle,
                    &before.their_cycle,
                    v,
                    requester,
                    compressed,
                ),
                None => Err("the sides do not each roll back another session".into()),
            };
            let show_cycle = |c: &[backend::CycleTrx]| {
                let v: Vec<String> = c
                    .iter()
                    .map(|t| {
                        format!(
                            "{} {} structs, {} record locks, {} undo",
                            t.session.map_or("?".into(), |s| format!("s{s}")),
                            t.structs,
                            t.rows,
                            t.undo
                        )
                    })
                    .collect();
                v.join("; ")
            };
            r.push_str(&format!(
                "         at the deadlock: innosim {}; {name} {}: {}\n",
                show_cycle(&before.our_cycle),
                show_cycle(&before.their_cycle),
                match &at_deadlock {
                    Ok(()) => "the victims follow from structs the pages spread".to_string(),
                    Err(e) => format!("not by the pages alone: {e}"),
                }
            ));
            let mut bound = at_deadlock.is_ok();
            if a != b {
                let sessions: BTreeSet<usize> = before
                    .ours
                    .keys()
                    .chain(before.theirs.keys())
                    .copied()
                    .collect();
                for s in sessions {
                    let (w0, w1) = (
                        before.ours.get(&s).copied().unwrap_or(0),
                        before.theirs.get(&s).copied().unwrap_or(0),
                    );
                    if w0 == w1 {
                        continue;
                    }
                    let list = |m: &BTreeMap<usize, Vec<backend::LockStruct>>| {
                        m.get(&s).map_or(Vec::new(), Clone::clone)
                    };
                    let (l0, l1) = (list(&before.our_structs), list(&before.their_structs));
                    let why = layout_bound(&l0, &l1, (w0, w1), compressed);
                    let show = |l: &[backend::LockStruct]| {
                        let v: Vec<String> = l.iter().map(ToString::to_string).collect();
                        if v.is_empty() {
                            "none".to_string()
                        } else {
                            v.join("; ")
                        }
                    };
                    r.push_str(&format!(
                        "         s{s}'s lock structs: innosim {}\n         s{s}'s lock structs: {name} {}\n         s{s}: {}\n",
                        show(&l0),
                        show(&l1),
                        match &why {
                            Ok(()) => "the same locks, spread by the pages".to_string(),
                            Err(e) => format!("not by the pages alone: {e}"),
                        }
                    ));
                    // Only the cycle's transactions weigh in the
                    // choice; the monitor prints ten structs of a
                    // transaction at most, so a longer list cannot be
                    // compared.
                    if members.contains(&s) && l1.len() < MONITOR_STRUCTS_PRINTED {
                        bound &= why.is_ok();
                    }
                }
            }
            layout = bound;
        }
        if with_rules {
            r = format!(
                "(innosim with the later version's rules, past a difference they explain)\n{r}"
            );
        }
        let mut page_end = false;
        let waits_differ = out
            .steps
            .last()
            .is_some_and(|st| st.ours.blocked != st.theirs.blocked);
        if !deadlock && waits_differ {
            let mut ours = backend::Local::with_later_rules(if with_rules {
                later
            } else {
                engine::LaterRules::NONE
            });
            match inserts_at_page_end(&scenario, &out, &mut ours, theirs)
                .map_err(|e| format!("seed {seed}: {e}"))?
            {
                Ok(why) => {
                    r.push_str(&why);
                    page_end = true;
                }
                Err(why) => r.push_str(&format!("         not the pages' doing: {why}\n")),
            }
        }
        kind = if layout {
            Kind::Layout
        } else if page_end {
            Kind::PageEnd
        } else {
            Kind::Mismatch
        };
    }
    Ok(Judged {
        out,
        stats,
        version,
        kind,
        report: r,
    })
}

/// How many more runs of a mismatching seed a campaign against a server
/// that races ([`Backend::races`]) makes: the mismatch counts only if
/// each shows one.
pub const RERUNS: usize = 2;

/// Runs scenarios of `profile` on innosim and on `theirs` within the
/// budget, calling `each` with every seed's outcome (for progress).
/// A time budget is read off `clock` (real time, `engine::io::OsClock`, for
/// a campaign against a real server). Against a server whose threads race
/// ([`Backend::races`]), a mismatching seed runs [`RERUNS`] more times,
/// and one that a re-run does not show is the server's timing
/// ([`Summary::timing`]), not a mismatch.
pub fn campaign(
    profile: &Profile,
    budget: Budget,
    transactions: Option<usize>,
    theirs: &mut dyn Backend,
    clock: &dyn engine::io::Clock,
    mut each: impl FnMut(u64, &Outcome),
) -> Result<Summary, String> {
    let began = clock.now_us();
    let (start, end) = match budget {
        Budget::Seeds(a, b) => (a, b),
        Budget::Time(_) => (0, u64::MAX),
    };
    let mut sum = Summary {
        later: theirs.later_rules()?,
        ..Summary::default()
    };
    let races = theirs.races()?;
    for seed in start..end {
        if let Budget::Time(t) = budget {
            if clock.now_us().saturating_sub(began) as f64 / 1e6 >= t {
                break;
            }
        }
        let j = judge_seed(seed, profile, transactions, sum.later, theirs)?;
        sum.reached.add(&j.stats);
        if let Some(rule) = &j.version {
            *sum.versions.entry(rule.clone()).or_default() += 1;
            sum.version_seeds.push((seed, rule.clone()));
        }
        let out = &j.out;
        sum.scenarios += 1;
        sum.steps += out.steps.len() as u64;
        sum.waits += out.waits;
        sum.deadlocks += out.deadlocks;
        for (code, n) in &out.errors {
            *sum.errors.entry(*code).or_default() += n;
        }
        sum.racy += u64::from(out.racy);
        match j.kind {
            Kind::Alike => {}
            Kind::Layout => sum.layout.push((seed, j.report.clone())),
            Kind::PageEnd => sum.page_end.push((seed, j.report.clone())),
            Kind::Mismatch => {
                let mut shown = true;
                if races {
                    for _ in 0..RERUNS {
                        let again = judge_seed(seed, profile, transactions, sum.later, theirs)?;
                        if again.kind != Kind::Mismatch {
                            shown = false;
                            break;
                        }
                    }
                }
                if shown {
                    sum.mismatches.push((seed, j.report.clone()));
                } else {
                    sum.timing.push((seed, j.report.clone()));
                }
            }
        }
        each(seed, out);
    }
    Ok(sum)
}
