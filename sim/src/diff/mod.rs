//! `innosim diff`: the fuzzer's generated sessions run on innosim and on
//! another server over the MySQL protocol (a real MariaDB, or `innosim
//! serve`), in the same order, each session on its own connection, and
//! compared statement by statement.
//!
//! The fuzzer's models decide what the engine may do; they were written
//! from InnoDB's sources and documentation, and where both were read the
//! same wrong way the engine and the models agree with each other and not
//! with InnoDB. A real InnoDB as the other side catches those, as SQLancer
//! and SQLsmith compare engines and Jepsen checks databases from outside.
//!
//! A scenario comes from a seed and a profile through the fuzzer's plan
//! generator ([`crate::plan::Plan::generate`]): its tables (as `CREATE
//! TABLE`), preloaded rows, and transactions, rendered as SQL
//! ([`render`]). A seeded scheduler steps one session at a time, the same
//! on both sides: an idle session takes the next transaction, a busy one
//! sends its next statement, a session whose statement waits for a lock is
//! not picked until it finishes. DDL runs between transactions only (no
//! session is in one), since MariaDB's metadata locks (5.5 on) make DDL
//! wait for every open transaction that read the table, where InnoDB 5.1
//! took only its own table lock.
//!
//! After each step both sides report the same picture: which sessions
//! finished a statement (the one just sent, or one that waited and was
//! granted or chosen as a deadlock victim), with what answer (rows in the
//! order the statement orders them, affected rows, warnings, error code),
//! and which wait ([`backend`] says how a server's lock wait is seen). The
//! first step whose pictures differ is a mismatch. At the end every
//! table's rows are compared as well.
//!
//! ```text
//!   seed ─▶ Plan ─▶ Scenario (setup SQL, transactions as SQL)
//!                      │ scheduler (seeded): session s sends its next statement
//!            ┌─────────┴──────────┐
//!        innosim (Local)     server (Remote)
//!            └─ {finished, blocked} ═?═ {finished, blocked} ─▶ next step, or a mismatch
//! ```
//!
//! # Running it
//!
//! ```text
//! innosim diff --server mysql://user@host:port [--seeds A..B | --time T] [--profile P]
//!              [--transactions N] [--shrink N [--save DIR]]
//! ```
//!
//! innosim's side runs in this process, on the simulated disk; the other over the MySQL
//! protocol. Each session has its own connection, and statements go one at a time in an order
//! drawn from the seed. A server's lock wait is read from `SHOW ENGINE INNODB STATUS` (a
//! transaction in `LOCK WAIT`, seen twice a millisecond apart), not waited for; INNODB_TRX
//! would do but InnoDB refreshes it at most every 100 ms. DDL runs only between transactions
//! (MariaDB's metadata locks would make it wait where 5.1 did not). Where a commit wakes two
//! waiting statements at once the sides may part legitimately (InnoDB leaves the order of the
//! woken threads to the scheduler; the rule also covers one waiter woken while another waits,
//! and may hide a real difference); such a scenario ends there and is counted, not reported.
//! Every table's rows are compared at the end.
//!
//! Two things are held still on both sides so that a run is the same on every machine: purge
//! (an extra connection on each side holds `START TRANSACTION WITH CONSISTENT SNAPSHOT` from
//! the setup to the end, so no delete-marked record of the scenario is purged; a record purged
//! on one side only hands its locks on as gap locks on that side only, and the server's purge
//! thread chooses when) and, against `innosim serve`, the clock (`innosim serve
//! --frozen-clock`: no background round comes due; CI once failed on a purge round the wall
//! clock brought on the server's side). Purge is the fuzzer's to check.
//!
//! # Version differences are data
//!
//! MariaDB 10.11 is not InnoDB 1.0.6. `bash tests/tools/start-mariadb.sh DIR PORT` starts a
//! scratch MariaDB (Debian's `mariadb-server`) with 5.1's behaviour where a setting exists
//! (`innodb_strict_mode=OFF`, `innodb_default_row_format=compact`, `sql_mode=''`,
//! `innodb_snapshot_isolation=OFF`, latin1, `optimizer_switch=extended_keys=off`, which the
//! diff also sets on any server it connects to). Where the newer InnoDB's rule differs by
//! design, the rule is a switch in the engine ([`engine::later`], off by default) carrying its
//! entry of the reviewed list: the statements, what 1.0.6 does, what the later version does,
//! why, and the source lines. A scenario that parts from a MariaDB runs again with those rules
//! on; if it then gets past the step where it parted, the difference is the version's, counted
//! by rule (the rule that does it alone names it), and the rest of the run is compared with the
//! rules on. Everything else is a mismatch. [`engine::later`] lists the fifteen rules of today.
//!
//! # What it reports, and the tests
//!
//! `innosim diff` prints what innosim's side reached, by the engine's own counters: sorted runs
//! spilled to merge files, tables rebuilt by a copying ALTER, rows UPDATEs read
//! semi-consistently, and record locks READ COMMITTED let go. A campaign against any server but
//! `innosim serve` (whose partings show on every run) runs a mismatching seed twice more, and
//! one a re-run does not show is counted as "parted on one run only (the server's timing)",
//! with its report, not as a mismatch
//! (`diff::tests::a_mismatch_against_a_racing_server_counts_only_if_every_run_shows_it`).
//!
//! `cargo test --test diff_mariadb` starts `mariadbd` (installed by
//! `tests/tools/setup-clients.sh`, part of the test command) on a scratch directory and a free
//! port, runs 220 scenarios (default and compressed 0..100, hot-rows 0..20), stops it, and
//! fails on any difference that is neither a version difference nor a saved open one and that
//! two more runs of its seed show again (a real server's threads race where one commit wakes
//! two waiters: compressed seed 27 parted once in four runs; at most three such are allowed),
//! 58 s here; without mariadbd it fails with the instruction, never passes. `cargo test --test
//! diff` runs forty scenarios against `innosim serve --frozen-clock` (innosim on both sides
//! must agree) and shows a planted locking bug (`locking-scan-skips-gaps`) parting them. What a
//! scenario holds is [`render`]'s; how a mismatch is shrunk and saved as a script, and `cargo
//! test --test diff_corpus`, are [`save`]'s. Everything the diff has found, fixed or left open,
//! with every campaign's counts, is in [`findings`].

pub mod backend;
pub mod findings;
pub mod render;
pub mod save;

mod campaign;
mod diagnosis;
mod shrink;

use crate::plan::{Plan, PlannedStmt};
use crate::profile::Profile;
use backend::{Answer, Backend, Issued};
use engine::{RowFormat, TableDef};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

pub use campaign::{campaign, Budget, Reached, Summary, RERUNS};
pub use diagnosis::{
    cycle_bound, explain, inserts_at_page_end, layout_bound, weights_before_last, Before, Weights,
};
pub use shrink::shrink;

/// One step of a transaction, as SQL or as the parts of a transfer whose
/// updates depend on what its reads returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A statement.
    Sql(String),
    /// A transfer's read of an account's balance (`sb.k`), FOR UPDATE.
    TransferRead(u64),
    /// A transfer's update of one account, by the amount its reads allow.
    TransferWrite {
        /// The account debited.
        from: u64,
        /// The account credited.
        to: u64,
        /// At most this much.
        amount: u64,
        /// This step debits `from` (else it credits `to`).
        debit: bool,
    },
}

/// A planned transaction as the scenario runs it.
#[derive(Debug, Clone)]
pub struct Txn {
    /// Its steps, from `SET TRANSACTION ISOLATION LEVEL` and `BEGIN` to
    /// `COMMIT` or `ROLLBACK`.
    pub items: Vec<Item>,
    /// It is DDL: it starts only while no session is in a transaction.
    pub ddl: bool,
}

/// A scenario: what both sides run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The seed it came from.
    pub seed: u64,
    /// The profile it came from.
    pub profile: String,
    /// Concurrent sessions.
    pub sessions: usize,
    /// `CREATE TABLE` and the preloaded rows.
    pub setup: Vec<String>,
    /// The tables, for the final comparison.
    pub tables: Vec<TableDef>,
    /// The transactions, in the order sessions take them.
    pub txns: Vec<Txn>,
    /// The sort buffer of innosim's index builds, when it is small enough
    /// to spill (a server's is a startup setting; how an index is sorted
    /// changes no answer).
    pub sort_buffer_bytes: Option<usize>,
}

/// `SET SESSION TRANSACTION ISOLATION LEVEL` for a plan's level name: a
/// plan's level stays the session's until another is set, as the runner
/// sets it. (Without SESSION the level is the next transaction's only, and
/// where that ends differs between versions: see the differences list.)
fn isolation_sql(name: &str) -> String {
    format!(
        "SET SESSION TRANSACTION ISOLATION LEVEL {}",
        name.replace('-', " ").to_ascii_uppercase()
    )
}

impl Scenario {
    /// The scenario of a plan.
    pub fn of_plan(plan: &Plan) -> Result<Scenario, String> {
        let formats = [
            crate::plan::format_of(&plan.row_formats[0]).unwrap_or(RowFormat::Compact),
            crate::plan::format_of(&plan.row_formats[1]).unwrap_or(RowFormat::Compact),
        ];
        let mut tables = vec![
            crate::tables::sbtest("sb", formats[0]),
            crate::tables::docs("docs", formats[1]),
        ];
        for t in &plan.tables {
            t.validate()?;
            tables.push(t.definition());
        }
        let mut setup: Vec<String> = tables.iter().map(render::create_table).collect();
        let ids: Vec<u64> = (1..=plan.preload).collect();
        for chunk in ids.chunks(200) {
            let rows: Vec<String> = chunk
                .iter()
                .map(|&id| {
                    let vals: Vec<String> = crate::plan::preload_row(plan.shape, id)
                        .into_iter()
                        .map(|v| match v {
                            engine::Value::Null => "NULL".into(),
                            engine::Value::Int(i) => i.to_string(),
                            engine::Value::UInt(u) => u.to_string(),
                            engine::Value::Bytes(b) => render::quote(&b),
                        })
                        .collect();
                    format!("({})", vals.join(", "))
                })
                .collect();
            setup.push(format!("INSERT INTO `sb` VALUES {}", rows.join(", ")));
        }
        // Scratch tables come and go with the plan's DDL; the scans and
        // DDL name them by the same definitions.
        let mut known = tables.clone();
        for name in crate::plan::SCRATCH_TABLES {
            known.push(crate::tables::scratch(name, RowFormat::Compact));
        }
        // A scan of an index the plan creates reads that index's columns
        // once it exists (default seed 293 bounded the first column with
        // the index's values before), so the index belongs to the
        // definition the statements are rendered by, not to the setup's.
        for st in plan.transactions.iter().flat_map(|t| &t.statements) {
            if let PlannedStmt::CreateIndex { table, index } = st {
                if let Some(def) = known.iter_mut().find(|d| d.name == *table) {
                    if def.indexes.iter().all(|i| i.name != index.name) {
                        def.indexes.push(engine::dict::IndexDef {
                            name: index.name.clone(),
                            columns: index.columns.clone(),
                            unique: index.unique,
                            prefixes: Vec::new(),
                        });
                    }
                }
            }
        }
        let defs = render::Tables::new(&known);
        let mut txns = Vec::new();
        for t in &plan.transactions {
            let mut items = Vec::new();
            if let Some(level) = &t.isolation {
                items.push(Item::Sql(isolation_sql(level)));
            }
            let ddl = t.statements.iter().any(PlannedStmt::is_ddl);
            let explicit = !t.autocommit && !ddl;
            if explicit {
                items.push(Item::Sql("BEGIN".into()));
            }
            for st in &t.statements {
                match st {
                    PlannedStmt::Transfer { from, to, amount } => {
                        items.push(Item::TransferRead(*from));
                        items.push(Item::TransferRead(*to));
                        for debit in [true, false] {
                            items.push(Item::TransferWrite {
                                from: *from,
                                to: *to,
                                amount: *amount,
                                debit,
                            });
                        }
                    }
                    st => {
                        if let Some(sql) = defs.statement(st)? {
                            items.push(Item::Sql(sql));
                        }
                    }
                }
            }
            if explicit {
                items.push(Item::Sql(
                    if t.rollback { "ROLLBACK" } else { "COMMIT" }.into(),
                ));
            }
            txns.push(Txn { items, ddl });
        }
        Ok(Scenario {
            seed: plan.seed,
            profile: plan.profile.clone(),
            sessions: plan.sessions.max(1),
            setup,
            tables,
            txns,
            // Half the scenarios (those of even seeds) whose plan gives
            // none sort in 128 bytes too: a scenario holds a tenth of its
            // plan, and few of its index builds would spill otherwise.
            sort_buffer_bytes: plan
                .sort_buffer_bytes
                .or(plan.seed.is_multiple_of(2).then_some(128)),
        })
    }

    /// The scenario of a seed under a profile, cut to its first
    /// `transactions` transactions if given, with the DDL of the rest
    /// drawn in: each DDL transaction cut off goes where its place in the
    /// whole plan falls in the cut one. A plan places its index build, its
    /// copying ALTERs and its TRUNCATEs anywhere in hundreds of
    /// transactions, so a cut to its first forty would lose most of them
    /// (and the sort that spills with them).
    pub fn generate(
        seed: u64,
        profile: &Profile,
        transactions: Option<usize>,
    ) -> Result<Scenario, String> {
        let mut plan = Plan::generate(seed, profile, None, None);
        if let Some(n) = transactions {
            let len = plan.transactions.len();
            if len > n {
                let rest: Vec<(usize, crate::plan::PlannedTxn)> = plan
                    .transactions
                    .drain(n..)
                    .enumerate()
                    .filter(|(_, t)| t.statements.iter().any(PlannedStmt::is_ddl))
                    .map(|(i, t)| (n + i, t))
                    .collect();
                for (k, (at, t)) in rest.into_iter().enumerate() {
                    plan.transactions.insert(at * n / len + k, t);
                }
            }
        }
        Scenario::of_plan(&plan)
    }
}

/// What one side showed after a step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Picture {
    /// The sessions that finished a statement during the step, with the
    /// answers.
    pub finished: BTreeMap<usize, Answer>,
    /// The sessions waiting for a lock after it.
    pub blocked: BTreeSet<usize>,
}

impl Picture {
    /// A line a report prints.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .finished
            .iter()
            .map(|(s, a)| format!("s{s}: {}", a.describe()))
            .collect();
        if !self.blocked.is_empty() {
            let b: Vec<String> = self.blocked.iter().map(|s| format!("s{s}")).collect();
            parts.push(format!("waiting: {}", b.join(" ")));
        }
        parts.join("; ")
    }
}

/// One step as run: the session, its statement, and both pictures.
#[derive(Debug, Clone)]
pub struct Step {
    /// The session that sent the statement.
    pub session: usize,
    /// The statement.
    pub sql: String,
    /// innosim's picture after it.
    pub ours: Picture,
    /// The other side's.
    pub theirs: Picture,
}

/// What a scenario's run found.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Every step run, the mismatching one last.
    pub steps: Vec<Step>,
    /// The first difference, if any: a step's pictures, or a table's rows
    /// at the end.
    pub mismatch: Option<String>,
    /// Statements that waited for a lock.
    pub waits: u64,
    /// Statements that ended in a deadlock (1213).
    pub deadlocks: u64,
    /// Errors by code (deadlocks included).
    pub errors: BTreeMap<u16, u64>,
    /// The sides parted at a step that woke two or more waiting
    /// statements at once, whose order InnoDB does not fix: not a
    /// mismatch, and the end of the comparison.
    pub racy: bool,
}

/// A session's place in the scenario.
#[derive(Debug, Clone, Default)]
struct Sess {
    /// The transaction it runs, and its next item.
    txn: Option<(usize, usize)>,
    blocked: bool,
    /// A transfer's balances, as innosim's reads returned them.
    balances: Vec<Option<u64>>,
}

/// The first column of the only row, as a number.
fn single_number(a: &Answer) -> Option<u64> {
    match a {
        Answer::Rows { rows, .. } if rows.len() == 1 => rows[0]
            .first()?
            .as_ref()
            .and_then(|b| std::str::from_utf8(b).ok()?.parse().ok()),
        _ => None,
    }
}

/// Runs a scenario on both sides. `Err` is a failure of a side (a lost
/// connection, a setup statement refused), not a mismatch.
pub fn run(
    scenario: &Scenario,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<Outcome, String> {
    ours.set_sort_buffer(scenario.sort_buffer_bytes);
    ours.start(scenario.sessions, &scenario.setup)?;
    theirs.start(scenario.sessions, &scenario.setup)?;
    let mut out = Outcome::default();
    let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed ^ 0xD1FF_5CE4_A210_0001);
    let mut sessions = vec![Sess::default(); scenario.sessions];
    let mut next_txn = 0;
    loop {
        let anyone_in_txn = sessions.iter().any(|s| s.txn.is_some());
        let next_is_ddl = scenario.txns.get(next_txn).is_some_and(|t| t.ddl);
        let candidates: Vec<usize> = (0..sessions.len())
            .filter(|&i| {
                let s = &sessions[i];
                !s.blocked
                    && (s.txn.is_some()
                        || (next_txn < scenario.txns.len() && !(next_is_ddl && anyone_in_txn)))
            })
            .collect();
        if candidates.is_empty() {
            if sessions.iter().any(|s| s.blocked) {
                return Err(format!(
                    "seed {}: every session with work waits for a lock on both sides \
                     (a wait only a timeout ends)",
                    scenario.seed
                ));
            }
            break;
        }
        let s = candidates[rng.gen_range(0..candidates.len())];
        if sessions[s].txn.is_none() {
            sessions[s].txn = Some((next_txn, 0));
            sessions[s].balances.clear();
            next_txn += 1;
        }
        let (t, i) = sessions[s].txn.expect("in a transaction");
        let sql = match &scenario.txns[t].items[i] {
            Item::Sql(sql) => Some(sql.clone()),
            Item::TransferRead(id) => {
                Some(format!("SELECT `k` FROM `sb` WHERE `id` = {id} FOR UPDATE"))
            }
            Item::TransferWrite {
                from,
                to,
                amount,
                debit,
            } => match sessions[s].balances.as_slice() {
                [Some(balance), Some(_)] => {
                    let x = (*amount).min(*balance);
                    Some(if *debit {
                        format!("UPDATE `sb` SET `k` = `k` - {x} WHERE `id` = {from}")
                    } else {
                        format!("UPDATE `sb` SET `k` = `k` + {x} WHERE `id` = {to}")
                    })
                }
                _ => None,
            },
        };
        let Some(sql) = sql else {
            advance(scenario, &mut sessions[s]);
            continue;
        };
        let was_waiting: BTreeSet<usize> = (0..sessions.len())
            .filter(|&i| sessions[i].blocked)
            .collect();
        let (ours_pic, verdict) = compare_step(ours, theirs, s, sql, &was_waiting, &mut out)?;
        match verdict {
            Verdict::Same => {}
            Verdict::Racy => {
                out.racy = true;
                return Ok(out);
            }
            Verdict::Mismatch => return Ok(out),
        }
        if ours_pic.blocked.contains(&s) {
            out.waits += 1;
        }
        for (i, sess) in sessions.iter_mut().enumerate() {
            sess.blocked = ours_pic.blocked.contains(&i);
        }
        for (&f, answer) in &ours_pic.finished {
            if let Some(code) = answer.error() {
                *out.errors.entry(code).or_default() += 1;
            }
            let sess = &mut sessions[f];
            let Some((t, i)) = sess.txn else {
                continue;
            };
            if matches!(scenario.txns[t].items[i], Item::TransferRead(_)) {
                sess.balances.push(single_number(answer));
            }
            if answer.error() == Some(1213) {
                // The server rolled the transaction back.
                out.deadlocks += 1;
                sess.txn = None;
            } else {
                advance(scenario, sess);
            }
        }
    }
    if let Some(m) = compare_tables(scenario, ours, theirs)? {
        out.mismatch = Some(m);
    }
    ours.stop()?;
    theirs.stop()?;
    Ok(out)
}

/// How a step's two pictures compare.
enum Verdict {
    Same,
    /// Different where woken waiters raced: not a mismatch.
    Racy,
    Mismatch,
}

/// Sends `sql` on session `s` on both sides and compares what each shows
/// after it; the step is added to `out` (and a mismatch noted there).
/// `was_waiting` are the sessions blocked before the step.
fn compare_step(
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
    s: usize,
    sql: String,
    was_waiting: &BTreeSet<usize>,
    out: &mut Outcome,
) -> Result<(Picture, Verdict), String> {
    let mut pictures = Vec::new();
    for side in 0..2 {
        let side: &mut dyn Backend = if side == 0 { &mut *ours } else { &mut *theirs };
        let issued = side.issue(s, &sql)?;
        let mut finished = side.completions()?;
        if let Issued::Done(a) = issued {
            finished.insert(s, a);
        }
        let blocked: BTreeSet<usize> = was_waiting
            .iter()
            .copied()
            .chain(std::iter::once(s))
            .filter(|i| !finished.contains_key(i))
            .collect();
        pictures.push(Picture { finished, blocked });
    }
    let theirs_pic = pictures.pop().expect("two sides");
    let ours_pic = pictures.pop().expect("two sides");
    let same = ours_pic == theirs_pic;
    // Waiters the step may have woken: a commit that releases the locks
    // two statements wait for grants both at once, and InnoDB leaves the
    // order in which their threads then run (and meet each other's locks)
    // to the scheduler.
    let woken = |p: &Picture| {
        was_waiting
            .iter()
            .filter(|i| p.finished.contains_key(i))
            .count()
    };
    let racy = woken(&ours_pic).max(woken(&theirs_pic)) >= 2
        || (woken(&ours_pic) + woken(&theirs_pic) >= 1 && was_waiting.len() >= 2);
    out.steps.push(Step {
        session: s,
        sql,
        ours: ours_pic.clone(),
        theirs: theirs_pic,
    });
    let verdict = if same {
        Verdict::Same
    } else if racy {
        Verdict::Racy
    } else {
        out.mismatch = Some(format!("step {}", out.steps.len()));
        Verdict::Mismatch
    };
    Ok((ours_pic, verdict))
}

/// A run as a fixed list of statements, each on its session, in order: a
/// mismatch's steps, to be shrunk. A statement for a session whose last
/// one still waits is left out (the shrinker's cuts can make a wait
/// longer).
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The seed it came from.
    pub seed: u64,
    /// Sessions.
    pub sessions: usize,
    /// `CREATE TABLE` and preloaded rows.
    pub setup: Vec<String>,
    /// The tables, for the final comparison.
    pub tables: Vec<TableDef>,
    /// The statements, by session.
    pub steps: Vec<(usize, String)>,
}

impl Transcript {
    /// The steps a scenario's run took.
    pub fn of_run(scenario: &Scenario, out: &Outcome) -> Transcript {
        Transcript {
            seed: scenario.seed,
            sessions: scenario.sessions,
            setup: scenario.setup.clone(),
            tables: scenario.tables.clone(),
            steps: out
                .steps
                .iter()
                .map(|s| (s.session, s.sql.clone()))
                .collect(),
        }
    }

    /// As a mysqltest script, one connection a session, a waiting
    /// statement sent with `send` and its answer taken with `reap` once it
    /// finished; each step's pictures as comments when `out` is given.
    pub fn script(&self, out: Option<&Outcome>, theirs: &str) -> String {
        let mut s = format!(
            "# innosim diff, seed {}: {} statements on {} sessions\n",
            self.seed,
            self.steps.len(),
            self.sessions
        );
        s.push_str("CREATE DATABASE diff;\nUSE diff;\n");
        for sql in &self.setup {
            s.push_str(&format!("{sql};\n"));
        }
        for i in 0..self.sessions {
            s.push_str(&format!("connect (s{i},localhost,root,,diff);\n"));
        }
        let mut sent: BTreeSet<usize> = BTreeSet::new();
        for (k, (session, sql)) in self.steps.iter().enumerate() {
            let step = out.and_then(|o| o.steps.get(k));
            s.push_str(&format!("connection s{session};\n"));
            let waits = step.is_some_and(|st| st.ours.blocked.contains(session));
            if waits {
                s.push_str(&format!("send {sql};\n"));
                sent.insert(*session);
            } else {
                s.push_str(&format!("{sql};\n"));
            }
            if let Some(st) = step {
                for f in st.ours.finished.keys() {
                    if f != session && sent.remove(f) {
                        s.push_str(&format!("connection s{f};\nreap;\n"));
                    }
                }
                if st.ours != st.theirs {
                    s.push_str(&format!("# innosim: {}\n", st.ours.describe()));
                    s.push_str(&format!("# {theirs}: {}\n", st.theirs.describe()));
                }
            }
        }
        s
    }
}

/// Runs a transcript on both sides: the steps in order, then the tables.
/// The second value is how many of the transcript's steps it went through
/// (up to the mismatching one).
pub fn run_transcript(
    t: &Transcript,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<(Outcome, usize), String> {
    ours.start(t.sessions, &t.setup)?;
    theirs.start(t.sessions, &t.setup)?;
    let mut out = Outcome::default();
    let consumed = run_steps(t, ours, theirs, &mut out)?;
    if out.mismatch.is_none() && !out.racy {
        let scenario = Scenario {
            seed: t.seed,
            profile: String::new(),
            sessions: t.sessions,
            setup: t.setup.clone(),
            tables: t.tables.clone(),
            txns: Vec::new(),
            sort_buffer_bytes: None,
        };
        if let Some(m) = compare_tables(&scenario, ours, theirs)? {
            out.mismatch = Some(m);
        }
    }
    ours.stop()?;
    theirs.stop()?;
    Ok((out, consumed))
}

/// A started transcript's steps in order, on both sides, up to the first
/// that mismatches or races: how many of them it went through.
fn run_steps(
    t: &Transcript,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
    out: &mut Outcome,
) -> Result<usize, String> {
    let mut blocked: BTreeSet<usize> = BTreeSet::new();
    for (k, (s, sql)) in t.steps.iter().enumerate() {
        if blocked.contains(s) {
            continue;
        }
        let (pic, verdict) = compare_step(ours, theirs, *s, sql.clone(), &blocked, out)?;
        match verdict {
            Verdict::Same => blocked = pic.blocked,
            Verdict::Racy => {
                out.racy = true;
                return Ok(k + 1);
            }
            Verdict::Mismatch => return Ok(k + 1),
        }
    }
    Ok(t.steps.len())
}

/// Moves a session to its next item, ending its transaction after the
/// last.
fn advance(scenario: &Scenario, s: &mut Sess) {
    if let Some((t, i)) = s.txn {
        s.txn = (i + 1 < scenario.txns[t].items.len()).then_some((t, i + 1));
    }
}

/// Every table's rows on both sides, in primary key order (all columns
/// for a table without one): the first difference, if any.
fn compare_tables(
    scenario: &Scenario,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<Option<String>, String> {
    let mut defs = scenario.tables.clone();
    for name in crate::plan::SCRATCH_TABLES {
        defs.push(crate::tables::scratch(name, RowFormat::Compact));
    }
    for def in &defs {
        let order: Vec<String> = if def.primary_key.is_empty() {
            def.columns.iter().map(|c| render::ident(&c.name)).collect()
        } else {
            def.primary_key
                .iter()
                .map(|&c| render::ident(&def.columns[c].name))
                .collect()
        };
        let sql = format!(
            "SELECT * FROM {} ORDER BY {}",
            render::ident(&def.name),
            order.join(", ")
        );
        let a = ours.query(&sql)?;
        let b = theirs.query(&sql)?;
        if a != b {
            return Ok(Some(format!(
                "the table {} at the end: innosim {}; {} {}",
                def.name,
                a.describe(),
                theirs.name(),
                b.describe()
            )));
        }
    }
    Ok(None)
}

/// A mismatch as a report: the steps that led to it, the last with both
/// sides' pictures.
pub fn report(scenario: &Scenario, out: &Outcome, theirs: &str) -> String {
    let mut s = format!(
        "seed {} (profile {}): {} sessions, mismatch at {}\n",
        scenario.seed,
        scenario.profile,
        scenario.sessions,
        out.mismatch.as_deref().unwrap_or("nowhere")
    );
    let n = out.steps.len();
    for (k, step) in out.steps.iter().enumerate() {
        let sql = if step.sql.len() > 160 {
            format!("{}...", &step.sql[..160])
        } else {
            step.sql.clone()
        };
        s.push_str(&format!("  {:>4} s{}: {sql}\n", k + 1, step.session));
        if k + 1 == n && step.ours != step.theirs {
            s.push_str(&format!("         innosim: {}\n", step.ours.describe()));
            s.push_str(&format!("         {theirs}: {}\n", step.theirs.describe()));
        }
    }
    s
}

#[cfg(test)]
mod tests;
