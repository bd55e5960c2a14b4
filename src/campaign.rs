//! Campaigns and their failures: `innosim run`, `fuzz`, `merge`, `replay` and
//! `shrink`, and the lines that reproduce a failure.

use super::*;

fn run_options(
    flush: Option<u8>,
    canary: Option<String>,
    keep_trace: bool,
) -> Result<sim::runner::RunOptions, String> {
    let flush = match flush {
        Some(f) => Some(FlushAtCommit::from_setting(f).map_err(|e| e.to_string())?),
        None => None,
    };
    if let Some(c) = &canary {
        if c != "lying-fsync" && engine::Canary::from_name(c).is_none() {
            return Err(format!("unknown canary '{c}' (see `innosim canaries`)"));
        }
    }
    Ok(sim::runner::RunOptions {
        flush,
        canary,
        keep_trace,
    })
}

/// The command that runs a seed again.
fn replay_command(o: &sim::runner::Outcome, canary: &Option<String>) -> String {
    sim::campaign::replay_command(o.seed, &o.profile, canary)
}

fn reproduce_line(o: &sim::runner::Outcome, canary: &Option<String>) -> String {
    format!("reproduce: {}", replay_command(o, canary))
}

/// The command that draws a failing run as a timeline.
fn timeline_line(o: &sim::runner::Outcome, canary: &Option<String>) -> String {
    format!(
        "timeline: {} --trace seed-{}.json (open it in Perfetto or chrome://tracing)",
        replay_command(o, canary),
        o.seed
    )
}

/// A run's trace as `--trace PATH` writes it: Chrome's trace-event format
/// (Perfetto, chrome://tracing) for a path ending in `.json`, else the
/// trace's own JSON lines.
fn trace_text(path: &std::path::Path, lines: &[String]) -> Result<String, String> {
    if path.extension().is_some_and(|e| e == "json") {
        let v = sim::runner::chrome_trace(lines)?;
        sim::runner::check_chrome_trace(&v)?;
        Ok(v.to_string())
    } else {
        Ok(lines.iter().map(|l| format!("{l}\n")).collect())
    }
}

/// Writes a run's kept trace to `path` (Chrome's JSON for a `.json` path,
/// the raw lines otherwise).
fn write_trace(path: &std::path::Path, lines: &[String]) -> Result<(), String> {
    let text = trace_text(path, lines)?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub(crate) fn one_run(
    seed: u64,
    profile_name: &str,
    flush: Option<u8>,
    canary: Option<String>,
    trace: Option<std::path::PathBuf>,
) -> ExitCode {
    let p = match profile(profile_name) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let opts = match run_options(flush, canary.clone(), trace.is_some()) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let o = match sim::runner::run(seed, &p, &opts) {
        Ok(o) => o,
        Err(e) => return usage(e.to_string()),
    };
    if let Some(path) = trace {
        if let Err(e) = write_trace(&path, &o.trace) {
            return usage(e);
        }
    }
    print_outcome(&o);
    if o.violations.is_empty() {
        println!("no violation");
        ExitCode::SUCCESS
    } else {
        println!("{} (commit {})", reproduce_line(&o, &canary), commit_id());
        println!("{}", timeline_line(&o, &canary));
        ExitCode::FAILURE
    }
}

fn print_outcome(o: &sim::runner::Outcome) {
    let s = &o.stats;
    println!(
        "seed {} profile {}: {} statements, {} commits, {} rollbacks, {} waits, {} crashes, {} fsync failures, {} full-disk errors, {:.3} simulated s, {} I/Os, trace {:016x}",
        o.seed, o.profile, s.statements, s.commits, s.rollbacks, s.waits, s.crashes, s.fsync_failures, s.full_disk_errors, s.sim_us as f64 / 1e6, s.io_ops, o.trace_hash
    );
    for v in &o.violations {
        println!("violation: {v}");
    }
}

pub(crate) fn replay_entry(dir: &std::path::Path, trace: Option<std::path::PathBuf>) -> ExitCode {
    let plan = match sim::corpus::load(dir) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let o = match sim::runner::execute(&plan, trace.is_some()) {
        Ok(o) => o,
        Err(e) => return usage(e.to_string()),
    };
    if let Some(path) = trace {
        if let Err(e) = write_trace(&path, &o.trace) {
            return usage(e);
        }
    }
    print_outcome(&o);
    if o.violations.is_empty() {
        println!("no violation");
        ExitCode::SUCCESS
    } else {
        println!(
            "timeline: innosim replay {} --trace seed-{}.json (open it in Perfetto or chrome://tracing)",
            dir.display(),
            o.seed
        );
        ExitCode::FAILURE
    }
}

/// Shrinks a failing plan and saves it; returns the entry's folder.
pub(crate) fn shrink_and_save(
    plan: &sim::plan::Plan,
    budget: usize,
) -> Option<(std::path::PathBuf, sim::shrink::Shrunk)> {
    shrink_and_save_while(plan, budget, &mut || true)
}

/// Shrinks a corpus entry's plan and saves the result over the entry.
fn shrink_and_save_over(
    dir: &std::path::Path,
    plan: &sim::plan::Plan,
    budget: usize,
) -> Option<(std::path::PathBuf, sim::shrink::Shrunk)> {
    let shrunk = sim::shrink::shrink(plan, budget)?;
    match sim::corpus::save_in(dir, &shrunk.plan, &shrunk.outcome, commit_id()) {
        Ok(()) => Some((dir.to_path_buf(), shrunk)),
        Err(e) => {
            eprintln!("innosim: cannot save to {}: {e}", dir.display());
            None
        }
    }
}

/// [`shrink_and_save`], shrinking only while `keep_going` says so.
fn shrink_and_save_while(
    plan: &sim::plan::Plan,
    budget: usize,
    keep_going: &mut dyn FnMut() -> bool,
) -> Option<(std::path::PathBuf, sim::shrink::Shrunk)> {
    sim::campaign::shrink_and_save(
        plan,
        budget,
        std::path::Path::new("corpus"),
        commit_id(),
        keep_going,
    )
}

pub(crate) fn shrink_cmd(
    seed: u64,
    profile_name: &str,
    canary: Option<String>,
    budget: usize,
) -> ExitCode {
    let p = match profile(profile_name) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    if let Err(e) = run_options(None, canary.clone(), false) {
        return usage(e);
    }
    let plan = sim::plan::Plan::generate(seed, &p, None, canary);
    let before = plan.statement_count();
    match shrink_and_save(&plan, budget) {
        None => {
            println!("seed {seed} profile {profile_name} does not fail: nothing to shrink");
            ExitCode::SUCCESS
        }
        Some((dir, s)) => {
            println!(
                "shrunk from {before} to {} statements in {} runs, {} transactions, {} crashes: {}",
                s.plan.statement_count(),
                s.attempts,
                s.plan.transactions.len(),
                s.plan.crash_after_ios.len(),
                s.outcome
                    .violations
                    .first()
                    .map(String::as_str)
                    .unwrap_or("")
            );
            println!(
                "saved: {}\nreproduce: innosim replay {}",
                dir.display(),
                dir.display()
            );
            ExitCode::FAILURE
        }
    }
}

/// `innosim shrink --entry DIR`: shrinks a saved plan further (entries
/// saved before the shrinker could anchor crashes, or drop statements
/// that a seed's plan no longer has).
pub(crate) fn shrink_entry(dir: &std::path::Path, budget: usize) -> ExitCode {
    let plan = match sim::corpus::load(dir) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let before = plan.statement_count();
    match shrink_and_save_over(dir, &plan, budget) {
        None => {
            println!("{} does not fail: nothing to shrink", dir.display());
            ExitCode::SUCCESS
        }
        Some((saved, s)) => {
            println!(
                "shrunk from {before} to {} statements in {} runs: {}\nsaved: {}",
                s.plan.statement_count(),
                s.attempts,
                s.outcome
                    .violations
                    .first()
                    .map(String::as_str)
                    .unwrap_or(""),
                saved.display()
            );
            ExitCode::FAILURE
        }
    }
}

/// Candidate runs the fuzzer's shrinker may try per failure (with
/// `--time`, the time left bounds it too): a default seed's failure takes
/// about 1,500 to reach a few dozen statements.
const SHRINK_BUDGET: usize = 3000;

/// The most worker threads `innosim fuzz` runs.
const MAX_JOBS: usize = 256;

/// `innosim fuzz`'s worker threads when `--jobs` is not given: one per core
/// this process may use (`available_parallelism` heeds the CPU affinity and
/// the cgroup quota a batch system's task runs under), at most [`MAX_JOBS`].
/// Results do not depend on it, so a one-minute campaign simply runs more
/// seeds on a bigger machine.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_JOBS))
}

/// The options of `innosim fuzz`.
pub(crate) struct FuzzArgs {
    pub(crate) seeds: Option<String>,
    pub(crate) time: Option<String>,
    pub(crate) profile: String,
    pub(crate) canary: Option<String>,
    pub(crate) json: bool,
    /// `None`: one per core this process may use ([`default_jobs`]).
    pub(crate) jobs: Option<usize>,
    pub(crate) shard: Option<String>,
    pub(crate) doublecheck: bool,
    pub(crate) stop_on_failure: bool,
    pub(crate) corpus: std::path::PathBuf,
}

pub(crate) fn fuzz(args: FuzzArgs) -> ExitCode {
    let FuzzArgs {
        seeds,
        time,
        profile: profile_name,
        canary,
        json,
        jobs,
        shard,
        doublecheck,
        stop_on_failure,
        corpus,
    } = args;
    let jobs = match jobs {
        Some(jobs @ 1..=MAX_JOBS) => jobs,
        Some(jobs) => return usage(format!("--jobs must be 1..={MAX_JOBS}, not {jobs}")),
        None => default_jobs(),
    };
    let shard = match shard.as_deref().map(sim::campaign::Shard::parse) {
        None => sim::campaign::Shard::WHOLE,
        Some(Ok(s)) => s,
        Some(Err(e)) => return usage(e),
    };
    let p = match profile(&profile_name) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    if let Err(e) = run_options(None, canary.clone(), false) {
        return usage(e);
    }
    let seeds = match (seeds, time) {
        (Some(_), Some(_)) => return usage("give --seeds or --time, not both".into()),
        (Some(r), None) => match parse_range(&r) {
            Some((start, end)) => sim::campaign::Seeds::Range { start, end },
            None => {
                return usage(format!(
                    "malformed seed range '{r}': expected A..B with A < B"
                ))
            }
        },
        (None, Some(t)) => match parse_duration_s(&t) {
            Some(seconds) => sim::campaign::Seeds::For { seconds },
            None => {
                return usage(format!(
                    "malformed duration '{t}': expected e.g. 60s, 5m, 1h"
                ))
            }
        },
        (None, None) => sim::campaign::Seeds::Range {
            start: 0,
            end: 1000,
        },
    };
    let bar = (!json && std::io::stdout().is_terminal()).then(|| {
        let b = match seeds {
            sim::campaign::Seeds::For { .. } => indicatif::ProgressBar::new_spinner(),
            sim::campaign::Seeds::Range { start, end } => {
                indicatif::ProgressBar::new((end - start).div_ceil(shard.count))
            }
        };
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos} seeds {per_sec} {msg} [{elapsed_precise}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b
    });
    let campaign = sim::campaign::Campaign {
        profile: p,
        canary: canary.clone(),
        seeds,
        shard,
        jobs,
        doublecheck,
        stop_on_failure,
        corpus,
        commit: commit_id().to_string(),
        shrink_budget: SHRINK_BUDGET,
    };
    let start = std::time::Instant::now();
    let wall = || start.elapsed().as_secs_f64();
    let progress = |o: &sim::runner::Outcome| {
        if let Some(b) = &bar {
            b.inc(1);
            if !o.violations.is_empty() {
                b.set_message(format!("violation at seed {}", o.seed));
            }
        }
    };
    let report = sim::campaign::run(&campaign, &wall, &progress);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let report = match report {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    print_campaign(&report, json);
    if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints a campaign's (or a merge's) report: its JSON, or a line per
/// failing seed with its replay and timeline commands, the reached
/// counters and a summary line.
fn print_campaign(report: &sim::campaign::Report, json: bool) {
    if json {
        match serde_json::to_string(report) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("innosim: cannot write the report: {e}"),
        }
        return;
    }
    for f in &report.failures {
        println!("seed {}: {}", f.seed, f.violation);
        println!("reproduce: {} (commit {})", f.replay, report.commit);
        println!(
            "timeline: {} --trace seed-{}.json (open it in Perfetto or chrome://tracing)",
            f.replay, f.seed
        );
        if let Some(k) = report
            .kinds
            .iter()
            .find(|k| k.kind == f.kind && k.seed == f.seed)
        {
            match (&k.saved, k.statements) {
                (Some(dir), Some(n)) => println!("shrunk to {n} statements: {dir}"),
                _ => println!("not shrunk: the time ran out first"),
            }
        }
    }
    let reached: Vec<String> = report
        .reached_in_order()
        .into_iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    println!("reached: {}", reached.join(", "));
    let mut shards = if report.shards > 1 {
        format!(" in {} shards", report.shards)
    } else {
        String::new()
    };
    match report.jobs {
        0 => {}
        1 => shards.push_str(" on 1 worker"),
        n => shards.push_str(&format!(" on {n} workers")),
    }
    println!(
        "{} seeds of profile {}{shards}, {} violations of {} kinds, {:.1} seeds/s, {:.1} simulated s per wall s",
        report.seeds,
        report.profile,
        report.violations,
        report.kinds.len(),
        report.seeds_per_sec,
        report.sim_to_wall
    );
}

/// `innosim merge`: adds sharded campaigns' reports up.
pub(crate) fn merge_cmd(
    files: &[std::path::PathBuf],
    corpus: Option<&std::path::Path>,
    json: bool,
) -> ExitCode {
    let mut reports = Vec::new();
    for f in files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => return usage(format!("cannot read {}: {e}", f.display())),
        };
        match serde_json::from_str::<sim::campaign::Report>(text.trim()) {
            Ok(r) => reports.push(r),
            Err(e) => {
                return usage(format!(
                    "{} is not a report of `innosim fuzz --json`: {e}",
                    f.display()
                ))
            }
        }
    }
    match sim::campaign::merge(&reports, corpus) {
        Ok(merged) => {
            print_campaign(&merged, json);
            if merged.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => usage(e.to_string()),
    }
}
