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

use crate::plan::{Plan, PlannedStmt};
use crate::profile::Profile;
use backend::{Answer, Backend, Issued};
use engine::{RowFormat, TableDef};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

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

/// Each session's transaction's deadlock weight ([`Backend::weights`]).
pub type Weights = BTreeMap<usize, u64>;

/// Both sides' transactions just before a run's last step
/// ([`weights_before_last`]).
#[derive(Debug, Default)]
pub struct Before {
    /// innosim's weights.
    pub ours: Weights,
    /// The server's weights.
    pub theirs: Weights,
    /// innosim's locks, by session ([`Backend::lock_structs`]).
    pub our_structs: BTreeMap<usize, Vec<backend::LockStruct>>,
    /// The server's lock structs, by session.
    pub their_structs: BTreeMap<usize, Vec<backend::LockStruct>>,
    /// innosim's deadlock cycle once the last step ran again
    /// ([`Backend::latest_deadlock`]; empty if it found none).
    pub our_cycle: Vec<backend::CycleTrx>,
    /// The server's.
    pub their_cycle: Vec<backend::CycleTrx>,
}

/// Each session's transaction's deadlock weight on both sides
/// ([`Backend::weights`]) just before a run's last step: the steps before
/// it run again on fresh sides; then the last step runs again too, for
/// the deadlock cycle each side reports ([`Before::our_cycle`]). Where a deadlock's victims differ, equal
/// weights point at the choice between them, different ones at what one
/// side counts (lock structs, undo records).
pub fn weights_before_last(
    scenario: &Scenario,
    out: &Outcome,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<Before, String> {
    let mut t = Transcript::of_run(scenario, out);
    t.steps.pop();
    ours.set_sort_buffer(scenario.sort_buffer_bytes);
    ours.start(t.sessions, &t.setup)?;
    theirs.start(t.sessions, &t.setup)?;
    let mut again = Outcome::default();
    run_steps(&t, ours, theirs, &mut again)?;
    let mut w = Before {
        ours: ours.weights()?,
        theirs: theirs.weights()?,
        our_structs: ours.lock_structs()?,
        their_structs: theirs.lock_structs()?,
        our_cycle: Vec::new(),
        their_cycle: Vec::new(),
    };
    // The last step again, for the cycle each side then reports: what
    // its transactions weighed when the deadlock was found.
    if let (Some(last), Some(step)) = (out.steps.len().checked_sub(1), out.steps.last()) {
        let waiting = match last.checked_sub(1) {
            Some(k) => out.steps[k].ours.blocked.clone(),
            None => BTreeSet::new(),
        };
        compare_step(
            ours,
            theirs,
            step.session,
            step.sql.clone(),
            &waiting,
            &mut again,
        )?;
        // Only a run that went the same way to the same end found the
        // same deadlock: the monitors keep the latest one, which could
        // otherwise be an earlier step's.
        let same = again.steps.len() == out.steps.len()
            && again
                .steps
                .last()
                .is_some_and(|a| a.ours == step.ours && a.theirs == step.theirs);
        if same {
            w.our_cycle = ours.latest_deadlock()?;
            w.their_cycle = theirs.latest_deadlock()?;
        }
    }
    ours.stop()?;
    theirs.stop()?;
    Ok(w)
}

/// The primary key of the row a single-row `INSERT ... VALUES` puts in
/// `tables`' table, as (column, SQL literal) pairs, and the table's name;
/// `None` for any other statement (REPLACE, IGNORE, ON DUPLICATE KEY
/// UPDATE, INSERT ... SELECT, several rows, a key prefix, a value that is
/// not a literal).
fn inserted_key(sql: &str, tables: &[TableDef]) -> Option<(String, Vec<(String, String)>)> {
    use engine::sql::ast::{Expr, InsertSource, OnDuplicate, Stmt, UnOp};
    use engine::sql::value::Datum;
    let Ok(Stmt::Insert {
        table,
        columns,
        source: InsertSource::Values(rows),
        on_duplicate: OnDuplicate::Error,
    }) = engine::sql::parse::parse(sql)
    else {
        return None;
    };
    let [row] = rows.as_slice() else {
        return None;
    };
    let def = tables
        .iter()
        .find(|d| d.name.eq_ignore_ascii_case(&table.name))?;
    if def.primary_key.is_empty() || def.primary_prefixes.iter().any(|&p| p != 0) {
        return None;
    }
    let lit = |e: &Expr| -> Option<String> {
        match e {
            Expr::Lit(Datum::Int(i)) => Some(i.to_string()),
            Expr::Lit(Datum::UInt(u)) => Some(u.to_string()),
            Expr::Lit(Datum::Str(b)) => Some(render::quote(b)),
            Expr::Unary(UnOp::Neg, inner) => match inner.as_ref() {
                Expr::Lit(Datum::Int(i)) => Some((-i).to_string()),
                Expr::Lit(Datum::UInt(u)) => Some(format!("-{u}")),
                _ => None,
            },
            _ => None,
        }
    };
    let mut key = Vec::new();
    for &c in &def.primary_key {
        let name = &def.columns[c].name;
        let at = match &columns {
            Some(cols) => cols.iter().position(|n| n.eq_ignore_ascii_case(name))?,
            None => c,
        };
        key.push((name.clone(), lit(row.get(at)?)?));
    }
    Some((def.name.clone(), key))
}

/// Whether the sessions innosim leaves waiting at a run's last step, where
/// the server finished them, are inserts the server let in only because
/// of where its pages end: `Ok(report)` if so, `Err(why not)`.
///
/// InnoDB checks an insert against the locks on the record after it on
/// the same page (`lock_rec_insert_check_and_lock`: `page_rec_get_next`),
/// which for a row that goes in last on its page is that page's supremum:
/// a gap lock a range read left on the first record of the next page (a
/// read that stopped there: LIMIT, the end of its range, a descending
/// read's start) does not stop it. innosim keeps its locks by key, not
/// by page (its pages are not InnoDB's byte for byte, and split
/// elsewhere), so its insert waits for that lock. The witness is the
/// server's own: every such session's statement is a single-row INSERT
/// whose wait on innosim's side is an insert intention on a record of the
/// table's clustered index (not its supremum), and on the server the row
/// it put in is the last on its page ([`Backend::ends_its_page`]).
///
/// The mirror: the server keeps waiting inserts innosim finished (with any
/// answer), because a page split handed the left page's supremum the
/// locks of the right page's first record (`lock_rec_inherit_to_gap`,
/// which MariaDB applies to record-only locks too when the heir is a
/// supremum), and an insert that lands last on the left page checks that
/// supremum. The witness: each is a single-row INSERT whose waiting
/// request on the server is an insert intention on the supremum of a page
/// of the table's clustered index that another transaction holds a lock
/// on, while the table has committed rows above the row's key, so that
/// supremum is a page's end, not the index's ([`Backend::waits_at_page_end`]).
///
/// The run is made again on fresh sides to look at both; it must part the
/// same way.
pub fn inserts_at_page_end(
    scenario: &Scenario,
    out: &Outcome,
    ours: &mut dyn Backend,
    theirs: &mut dyn Backend,
) -> Result<Result<String, String>, String> {
    let Some(last) = out.steps.last() else {
        return Ok(Err("no step".into()));
    };
    let (o, t) = (&last.ours, &last.theirs);
    // Which side keeps the inserts waiting: innosim (the server let them
    // in at its page's end), or the server (it checked a page supremum a
    // split gave a lock).
    let ours_wait: BTreeSet<usize> = o.blocked.difference(&t.blocked).copied().collect();
    let theirs_wait: BTreeSet<usize> = t.blocked.difference(&o.blocked).copied().collect();
    let (parted, server_waits) = match (ours_wait.is_empty(), theirs_wait.is_empty()) {
        (false, true) => (ours_wait, false),
        (true, false) => (theirs_wait, true),
        _ => return Ok(Err("the sides do not differ by one side's waits".into())),
    };
    let (waiter, finisher) = if server_waits { (t, o) } else { (o, t) };
    let mut rest = finisher.finished.clone();
    rest.retain(|s, _| !parted.contains(s));
    let same_otherwise = rest == waiter.finished
        && finisher.blocked.is_subset(&waiter.blocked)
        && parted.iter().all(|s| match finisher.finished.get(s) {
            Some(Answer::Ok { .. }) => true,
            // innosim went on past the server's wait: its answer may be
            // the INSERT's own (a duplicate found later, say).
            Some(_) => server_waits,
            None => false,
        });
    if !same_otherwise {
        return Ok(Err(
            "the sides differ in more than inserts one side keeps waiting".into(),
        ));
    }
    let mut inserts = Vec::new();
    for &s in &parted {
        let Some(step) = out.steps.iter().rev().find(|st| st.session == s) else {
            return Ok(Err(format!("s{s} sent nothing")));
        };
        match inserted_key(&step.sql, &scenario.tables) {
            Some((table, key)) => inserts.push((s, table, key)),
            None => return Ok(Err(format!("s{s}'s statement is not a one-row INSERT"))),
        }
    }
    let t_run = Transcript::of_run(scenario, out);
    ours.set_sort_buffer(scenario.sort_buffer_bytes);
    ours.start(t_run.sessions, &t_run.setup)?;
    theirs.start(t_run.sessions, &t_run.setup)?;
    let mut again = Outcome::default();
    run_steps(&t_run, ours, theirs, &mut again)?;
    let verdict = (|| -> Result<Result<String, String>, String> {
        let same_again = again.steps.len() == out.steps.len()
            && again
                .steps
                .last()
                .is_some_and(|st| st.ours == *o && st.theirs == *t);
        if !same_again {
            return Ok(Err("the run does not part the same way again".into()));
        }
        let mut report = String::new();
        if server_waits {
            for (s, table, key) in &inserts {
                let k: Vec<&str> = key.iter().map(|(_, v)| v.as_str()).collect();
                match theirs.waits_at_page_end(*s, table, key)? {
                    Ok(page) => report.push_str(&format!(
                        "         s{s}: its row ({}) waits on the server with an insert intention on \
                         the supremum of {table}.PRIMARY page {page}, which another transaction \
                         holds and which ends a page, not the index (committed rows lie above \
                         the row); innosim keeps no lock on a page's supremum\n",
                        k.join(", ")
                    )),
                    Err(why) => {
                        return Ok(Err(format!(
                            "s{s}'s wait on the server is not at a page's end: {why}"
                        )))
                    }
                }
            }
            return Ok(Ok(report));
        }
        let structs = ours.lock_structs()?;
        for (s, table, key) in &inserts {
            let on = format!("{table}.PRIMARY");
            let waits_ii = structs.get(s).is_some_and(|l| {
                l.iter()
                    .any(|l| l.waiting && l.on == on && l.mode == "X,GAP,II")
            });
            if !waits_ii {
                return Ok(Err(format!(
                    "s{s} waits in innosim for something other than an insert intention on {on}"
                )));
            }
            if theirs.ends_its_page(table, key)? != Some(true) {
                return Ok(Err(format!(
                    "s{s}'s row is not the last of its page on the server"
                )));
            }
            let k: Vec<&str> = key.iter().map(|(_, v)| v.as_str()).collect();
            report.push_str(&format!(
                "         s{s}: its row ({}) is the last of its page on the server, \
                 which checked the page's supremum; innosim waits with an insert intention on {on}\n",
                k.join(", ")
            ));
        }
        Ok(Ok(report))
    })();
    ours.stop()?;
    theirs.stop()?;
    verdict
}

/// Weights by session, as a report shows them (`s0 3, s1 5`): a weight of
/// 0 (a transaction begun that holds nothing and wrote nothing, which
/// innosim lists and MariaDB, starting its transactions at their first
/// read or lock, does not) is left out.
fn describe_weights(w: &BTreeMap<usize, u64>) -> String {
    let parts: Vec<String> = w
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(s, n)| format!("s{s} {n}"))
        .collect();
    if parts.is_empty() {
        return "none".into();
    }
    parts.join(", ")
}

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
enum Signature {
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
struct Outline {
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
    fn of(out: &Outcome) -> Signature {
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

/// Whether the rules of the later version `theirs` follows explain where
/// `out`, the run of `scenario` with 1.0.6's rules, parted from it: the
/// run again with all of them on gets past that step (or to the end
/// without a difference). Then the rule that does so alone names it
/// (`several rules together` if none does), and the run with them all on
/// is what the scenario found from there. `None` if they do not.
pub fn explain(
    scenario: &Scenario,
    out: &Outcome,
    later: engine::LaterRules,
    theirs: &mut dyn Backend,
) -> Result<Option<(String, Outcome)>, String> {
    let at = out.steps.len();
    let gets_past = |o: &Outcome| o.mismatch.is_none() || o.steps.len() > at;
    let again = run(
        scenario,
        &mut backend::Local::with_later_rules(later),
        theirs,
    )?;
    if !gets_past(&again) {
        return Ok(None);
    }
    let mut name = None;
    for rule in later.iter() {
        let alone = engine::LaterRules::NONE.with(rule);
        let one = run(
            scenario,
            &mut backend::Local::with_later_rules(alone),
            theirs,
        )?;
        if gets_past(&one) {
            name = Some(rule.name().to_string());
            break;
        }
    }
    Ok(Some((
        name.unwrap_or_else(|| "several rules together".into()),
        again,
    )))
}

/// The sessions innosim and the server rolled back, where a run's last
/// step is a deadlock each side resolved by killing a transaction the
/// other kept: one 1213 on each side, for different sessions (what the
/// survivor then does, finish or wait on, follows from the choice).
fn victims_swapped(out: &Outcome) -> Option<(usize, usize)> {
    let st = out.steps.last()?;
    let victims = |p: &Picture| -> Vec<usize> {
        (p.finished.iter())
            .filter(|(_, a)| a.error() == Some(1213))
            .map(|(s, _)| *s)
            .collect()
    };
    match (victims(&st.ours).as_slice(), victims(&st.theirs).as_slice()) {
        (&[a], &[b]) if a != b => Some((a, b)),
        _ => None,
    }
}

/// How many lock structs of a transaction SHOW ENGINE INNODB STATUS
/// prints at most ("10 LOCKS PRINTED FOR THIS TRX: SUPPRESSING FURTHER
/// PRINTS", `lock_trx_print_locks`).
const MONITOR_STRUCTS_PRINTED: usize = 10;

/// Whether the victims of a deadlock both sides found, `ours` and
/// `theirs` (the sessions each rolled back), differ only because the
/// server's pages spread the same locks over more lock structs: `Ok(())`
/// when, by the LATEST DETECTED DEADLOCK sections (what each transaction
/// weighed when the deadlock was found, [`backend::CycleTrx`]), the
/// cycles hold the same sessions; each side's victim is the one its own
/// weights pick under MariaDB's rule (`Deadlock::report`: the lightest,
/// weight doubled plus one for any but the `requester`, so the requester
/// loses a tie); and each transaction's counts differ only as pages make
/// them: the server's structs and record locks at least innosim's, the
/// undo records the same but beside a compressed table (see
/// [`layout_bound`]), and some weight different. The record locks do not
/// weigh; more of them on the server are its pages' supremums (a scan
/// that crosses into a page locks its supremum; a split hands a record's
/// locks to one), in new structs or in ones it has.
///
/// A lock innosim wrongly leaves out passes this check where the server
/// holds others beside it; what the before-step comparison of the
/// structs ([`layout_bound`]) shows is printed beside it, and decides
/// too where the weights differed before the step already.
pub fn cycle_bound(
    ours: &[backend::CycleTrx],
    theirs: &[backend::CycleTrx],
    victims: (usize, usize),
    requester: usize,
    compressed: bool,
) -> Result<(), String> {
    let by_session = |c: &[backend::CycleTrx]| -> Option<BTreeMap<usize, backend::CycleTrx>> {
        c.iter().map(|t| Some((t.session?, t.clone()))).collect()
    };
    let (Some(o), Some(t)) = (by_session(ours), by_session(theirs)) else {
        return Err("a transaction of a cycle is not a session's".into());
    };
    if o.is_empty() || t.is_empty() {
        return Err("a side reports no deadlock".into());
    }
    if o.keys().ne(t.keys()) {
        return Err(format!(
            "the cycles differ: innosim {:?}, the server {:?}",
            o.keys().collect::<Vec<_>>(),
            t.keys().collect::<Vec<_>>()
        ));
    }
    let pick = |c: &BTreeMap<usize, backend::CycleTrx>| {
        c.iter()
            .map(|(&s, x)| (((x.structs + x.undo) << 1) | u64::from(s != requester), s))
            .min()
            .map(|(_, s)| s)
    };
    if pick(&o) != Some(victims.0) || pick(&t) != Some(victims.1) {
        return Err("a side's victim is not the lightest by its own counts".into());
    }
    let mut differ = false;
    for (s, x) in &o {
        let y = &t[s];
        if y.structs < x.structs || y.rows < x.rows {
            return Err(format!(
                "s{s}: the server has fewer lock structs or record locks ({} and {}) than innosim ({} and {})",
                y.structs, y.rows, x.structs, x.rows
            ));
        }
        if x.undo != y.undo && !compressed {
            return Err(format!(
                "s{s}: {} undo records on innosim, {} on the server",
                x.undo, y.undo
            ));
        }
        differ |= x.structs + x.undo != y.structs + y.undo;
    }
    if !differ {
        return Err("the weights are the same".into());
    }
    Ok(())
}

/// Why a session's deadlock weights on the two sides differ, if not only
/// by their pages: `Ok(())` when the server's lock structs and innosim's
/// are the same locks, the server's only spread over more structs in the
/// ways InnoDB's pages make them, and the undo records the same or in a
/// scenario with a compressed table.
///
/// InnoDB keeps a record lock struct per page (`lock_rec_create`): a
/// split moves a lock's records to a struct on the new page
/// (`lock_move_rec_list_end`), a compressed page reorganized while a
/// request waits leaves an empty struct behind and makes the wait a new
/// one (`lock_move_reorganize_page`), and a range read that crosses pages
/// locks each page's supremum; an insert its compressed leaf refuses
/// writes more undo records (`btr_cur_optimistic_insert`). innosim's pages
/// hold other bytes than InnoDB's, so they split, reorganize and refuse
/// elsewhere, and it keeps one struct per index. What is left to compare
/// is the locks: every kind of struct innosim has (index, mode, waiting),
/// the server has at least as many of, with the same records where they
/// are records alone (`,REC`), at least as many where they may take in
/// page supremums (next-key), and the same gaps; a kind the server alone
/// has is a next-key one on an index it keeps on several pages; and the
/// server shows something pages did (an empty struct, an index on several
/// pages, or undo records that differ beside a compressed table).
pub fn layout_bound(
    ours: &[backend::LockStruct],
    theirs: &[backend::LockStruct],
    weights: (u64, u64),
    compressed: bool,
) -> Result<(), String> {
    type Kind = (String, String, bool);
    let kind = |l: &backend::LockStruct| (l.on.clone(), l.mode.clone(), l.waiting);
    let (our_undo, their_undo) = (
        weights.0.checked_sub(ours.len() as u64),
        weights.1.checked_sub(theirs.len() as u64),
    );
    let (Some(our_undo), Some(their_undo)) = (our_undo, their_undo) else {
        return Err("fewer undo records than none".into());
    };
    let mut pages: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for l in theirs {
        if let Some(p) = l.page {
            pages.entry(&l.on).or_default().insert(p);
        }
    }
    let spread = |on: &str| pages.get(on).is_some_and(|p| p.len() > 1);
    let tally = |list: &[backend::LockStruct], skip_empty: bool| {
        let mut m: BTreeMap<Kind, (u64, u64)> = BTreeMap::new();
        for l in list.iter().filter(|l| !(skip_empty && l.bits == Some(0))) {
            let e = m.entry(kind(l)).or_default();
            e.0 += 1;
            e.1 += u64::from(l.bits.unwrap_or(0));
        }
        m
    };
    let (mine, server) = (tally(ours, false), tally(theirs, true));
    for (k, &(n, bits)) in &mine {
        let (on, mode, _) = k;
        let Some(&(m, their_bits)) = server.get(k) else {
            return Err(format!("the server has no {on} {mode} struct"));
        };
        if m < n {
            return Err(format!(
                "innosim has {n} {on} {mode} structs, the server {m}"
            ));
        }
        let records_alone = mode.ends_with(",REC");
        let next_key = !mode.contains(',') && on.contains('.');
        let gaps = mode.ends_with(",GAP");
        if (records_alone || gaps) && bits != their_bits || next_key && their_bits < bits {
            return Err(format!(
                "{on} {mode}: innosim locks {bits} records, the server {their_bits}"
            ));
        }
    }
    for (on, mode, waiting) in server.keys().filter(|k| !mine.contains_key(*k)) {
        let next_key = !mode.contains(',') && on.contains('.');
        if !next_key || *waiting || !spread(on) {
            return Err(format!("innosim has no {on} {mode} struct"));
        }
    }
    if our_undo != their_undo && !compressed {
        return Err(format!(
            "{our_undo} undo records against the server's {their_undo}"
        ));
    }
    let empty = theirs.iter().any(|l| l.bits == Some(0));
    let pages_did = empty || pages.keys().any(|on| spread(on)) || our_undo != their_undo;
    if !pages_did {
        return Err("nothing the pages did shows".into());
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::backend::LockStruct;
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
}
