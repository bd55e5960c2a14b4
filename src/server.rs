//! The server and its clients' tools: `innosim serve`, `crashloop`, `replay-
//! served` and `diff`.

use super::*;

/// `innosim serve`'s options.
#[derive(clap::Args)]
pub(crate) struct ServeOpts {
    /// The data directory (created, with its database, if missing).
    #[arg(long, default_value = "innosim-data", conflicts_with = "sim")]
    pub(crate) dir: std::path::PathBuf,
    /// Serve the simulated disk (in memory, on the real clock) instead of a
    /// directory: `SET GLOBAL innosim_crash = 'power-loss' [AFTER n]`
    /// pulls its plug, and the server recovers and serves again.
    #[arg(long)]
    pub(crate) sim: bool,
    /// With --sim: the seed of the disk's faults and crashes.
    #[arg(long, default_value_t = 0, requires = "sim")]
    pub(crate) seed: u64,
    /// With --sim: a profile whose faults the disk injects while serving
    /// (failed fsyncs, misdirected writes, lost namespace operations, bit
    /// rot; see `innosim profiles`). Without it, only crashes on command.
    #[arg(long, requires = "sim")]
    pub(crate) profile: Option<String>,
    /// The TCP port on 127.0.0.1 (MySQL's 3306 left free).
    #[arg(long, default_value_t = 3407)]
    pub(crate) port: u16,
    /// The one account's user name.
    #[arg(long, default_value = "root")]
    pub(crate) user: String,
    /// Its password (empty: none).
    #[arg(long, default_value = "")]
    pub(crate) password: String,
    /// innodb_flush_log_at_trx_commit: 0, 1 or 2.
    #[arg(long = "innodb-flush-log-at-trx-commit", default_value_t = 1)]
    pub(crate) flush: u8,
    /// innodb_lock_wait_timeout, seconds.
    #[arg(long = "innodb-lock-wait-timeout", default_value_t = 50)]
    pub(crate) lock_wait_timeout: u64,
    /// max_connections: more are refused with 1040.
    #[arg(long = "max-connections", default_value_t = 151)]
    pub(crate) max_connections: usize,
    /// innodb_buffer_pool_size: bytes, or with a K, M or G suffix, as
    /// MySQL reads it (16 KiB pages; at least 64 of them).
    #[arg(long = "innodb-buffer-pool-size", default_value = "4M", value_parser = parse_size)]
    pub(crate) buffer_pool: u64,
    /// A Unix socket to listen on as well.
    #[arg(long)]
    pub(crate) socket: Option<std::path::PathBuf>,
    /// Record every event the engine handles (with its clock reading and
    /// digests of its answers) and every command packet to this file;
    /// `innosim replay-served FILE` runs it again on the simulated disk.
    #[arg(long)]
    pub(crate) record: Option<std::path::PathBuf>,
    /// The engine's clock stands still: no background round (purge, the
    /// log's once-a-second flush) comes due and no lock wait times out, as
    /// on `innosim diff`'s in-process side; for `innosim diff` against
    /// this server.
    #[arg(long)]
    pub(crate) frozen_clock: bool,
}

pub(crate) fn serve(opts: ServeOpts) -> ExitCode {
    let ServeOpts {
        dir,
        sim,
        seed,
        profile: profile_name,
        port,
        user,
        password,
        flush,
        lock_wait_timeout,
        max_connections,
        buffer_pool,
        socket,
        record,
        frozen_clock,
    } = opts;
    let flush_at_commit = match engine::FlushAtCommit::from_setting(flush) {
        Ok(f) => f,
        Err(e) => return usage(format!("--innodb-flush-log-at-trx-commit: {e}")),
    };
    let pages = buffer_pool / engine::page::PAGE_SIZE as u64;
    if pages < 64 {
        return usage(format!(
            "--innodb-buffer-pool-size: {buffer_pool} bytes is under 64 pages of 16 KiB"
        ));
    }
    let config = engine::Config {
        flush_at_commit,
        lock_wait_timeout_us: lock_wait_timeout.saturating_mul(1_000_000),
        buffer_pool_pages: pages as usize,
        ..sim::script::script_config()
    };
    let host: Box<dyn sim::serve::Host> = if sim {
        let faults = match profile_name.as_deref().map(profile).transpose() {
            Ok(p) => p.map(|p| p.faults).unwrap_or_default(),
            Err(e) => return usage(e),
        };
        Box::new(sim::serve::SimHost::new(config, seed, &faults))
    } else {
        match sim::serve::DirHost::new(&dir, config) {
            Ok(h) => Box::new(h),
            Err(e) => {
                eprintln!("innosim: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    let listener = match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("innosim: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let log: sim::serve::Logger = std::sync::Arc::new(|line| eprintln!("innosim: {line}"));
    let settings = sim::serve::Settings {
        account: sim::serve::Account::new(&user, &password),
        max_connections,
        socket: socket.clone(),
        // The scrambles must not be guessable: the one draw from the OS.
        scramble_seed: sim::serve::os_seed(),
        record,
        frozen_clock,
    };
    let (h, report) = match sim::serve::start(host, listener, settings, log) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
    };
    let what = if sim {
        format!("the simulated disk (seed {seed})")
    } else {
        dir.display().to_string()
    };
    eprintln!("innosim: {what} opened; recovery: {report:?}");
    // SIGTERM and SIGINT close the engine cleanly, as SHUTDOWN does.
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(sig, h.stopper()) {
            eprintln!("innosim: cannot handle signal {sig}: {e}");
        }
    }
    match &socket {
        Some(p) => eprintln!(
            "innosim: listening on {} and {} (user {user})",
            h.addr,
            p.display()
        ),
        None => eprintln!("innosim: listening on {} (user {user})", h.addr),
    }
    match h.wait() {
        Ok(()) => {
            eprintln!("innosim: shut down");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("innosim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The options of `innosim crashloop`.
#[derive(clap::Args, Debug)]
pub(crate) struct CrashloopOpts {
    /// Real files in this directory (created if missing); the server
    /// process is killed with SIGKILL each cycle.
    #[arg(long, conflicts_with = "sim")]
    pub(crate) dir: Option<std::path::PathBuf>,
    /// The simulated disk, which loses power on command each cycle.
    #[arg(long)]
    pub(crate) sim: bool,
    /// Crash-and-restart cycles.
    #[arg(long, default_value_t = 1000)]
    pub(crate) cycles: u64,
    /// Commits a cycle.
    #[arg(long, default_value_t = 200)]
    pub(crate) commits: u64,
    /// innodb_flush_log_at_trx_commit: 0, 1 or 2.
    #[arg(long = "innodb-flush-log-at-trx-commit", default_value_t = 1)]
    pub(crate) flush: u8,
    /// The loopback port the server listens on.
    #[arg(long, default_value_t = 3408)]
    pub(crate) port: u16,
    /// Seeds the crash points (and the simulated disk).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// On real files: run `innosim check` every this many cycles.
    #[arg(long, default_value_t = 100)]
    pub(crate) check_every: u64,
    /// Append the server's log to this file.
    #[arg(long)]
    pub(crate) server_log: Option<std::path::PathBuf>,
}

pub(crate) fn crashloop(o: CrashloopOpts) -> ExitCode {
    if o.dir.is_none() && !o.sim {
        return usage("crashloop needs --dir DIR or --sim".into());
    }
    if engine::FlushAtCommit::from_setting(o.flush).is_err() {
        return usage(format!(
            "--innodb-flush-log-at-trx-commit: {} is not 0, 1 or 2",
            o.flush
        ));
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("innosim: cannot find my own executable: {e}");
            return ExitCode::FAILURE;
        }
    };
    let target = match &o.dir {
        Some(d) => sim::crashloop::Target::Dir(d.clone()),
        None => sim::crashloop::Target::Sim,
    };
    let opts = sim::crashloop::Options {
        exe,
        target,
        cycles: o.cycles,
        commits: o.commits,
        flush: o.flush,
        port: o.port,
        seed: o.seed,
        check_every: o.check_every,
        server_log: o.server_log.clone(),
    };
    let bar = indicatif::ProgressBar::new(o.cycles);
    let report = sim::crashloop::run(&opts, |_, _| bar.inc(1));
    bar.finish_and_clear();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: crashloop: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cycles = &report.cycles;
    let n = cycles.len();
    let acked: u64 = cycles.iter().map(|c| c.acked).sum();
    let lost: u64 = cycles.iter().map(|c| c.lost).sum();
    let kept = cycles.iter().filter(|c| c.in_flight_kept).count();
    let rate = sim::crashloop::Report::rate;
    let head = &cycles[..n.min(100)];
    let tail = &cycles[n.saturating_sub(100)..];
    println!(
        "{n} cycles, {acked} acknowledged commits ({:.1} a cycle), {lost} lost, {kept} in-flight commits kept, {} checks passed",
        acked as f64 / n.max(1) as f64,
        report.checks_passed
    );
    println!(
        "cycles/s: {:.2} overall, {:.2} over the first {}, {:.2} over the last {}",
        rate(cycles),
        rate(head),
        head.len(),
        rate(tail),
        tail.len()
    );
    for v in &report.violations {
        println!("violation: {v}");
    }
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

pub(crate) fn replay_served(file: &std::path::Path) -> ExitCode {
    let log: sim::serve::Logger = std::sync::Arc::new(|line| eprintln!("innosim: {line}"));
    match sim::serve::record::replay(file, log) {
        Ok(r) => {
            println!(
                "{} events replayed, {} answers compared, {} restarts",
                r.events, r.answers, r.restarts
            );
            match r.mismatch {
                None => {
                    println!("every answer is the recorded one");
                    ExitCode::SUCCESS
                }
                Some(m) => {
                    println!("differs: {m}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("innosim: replay-served: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(clap::Args)]
pub(crate) struct DiffOpts {
    /// The other server, as mysql://user:password@host:port, the password
    /// optional (a database `diff` is dropped and made there for every
    /// scenario).
    #[arg(long)]
    pub(crate) server: String,
    /// Seeds to run, as A..B (B excluded).
    #[arg(long)]
    pub(crate) seeds: Option<String>,
    /// Run for this long (e.g. 60s, 5m) instead of a seed range.
    #[arg(long)]
    pub(crate) time: Option<String>,
    /// The workload profile the scenarios come from.
    #[arg(long, default_value = "default")]
    pub(crate) profile: String,
    /// Keep only each scenario's first N transactions.
    #[arg(long, default_value_t = 40)]
    pub(crate) transactions: usize,
    /// Shrink each mismatch (at most this many) to the fewest statements
    /// that still differ, and print it as a mysqltest script with both
    /// sides' answers where they part.
    #[arg(long, default_value_t = 0)]
    pub(crate) shrink: usize,
    /// Save each shrunk mismatch under this directory (`corpus/diff` in
    /// the repository) as PROFILE-SEED.test with the server's output as
    /// its .result (needs --shrink).
    #[arg(long)]
    pub(crate) save: Option<std::path::PathBuf>,
    /// Leave this later version's rule (by name, as the version
    /// differences are listed) out of those innosim's side may follow: what
    /// it explains is then a mismatch, to shrink and save as the rule's
    /// script for corpus/diff/versions.def. May be given more than once.
    #[arg(long = "without-rule")]
    pub(crate) without_rule: Vec<String>,
}

pub(crate) fn diff(o: DiffOpts) -> ExitCode {
    let url: sim::diff::backend::ServerUrl = match o.server.parse() {
        Ok(u) => u,
        Err(e) => return usage(e),
    };
    let mut without = engine::LaterRules::NONE;
    for name in &o.without_rule {
        match engine::LaterRule::from_name(name) {
            Some(r) => without = without.with(r),
            None => {
                let names: Vec<&str> = engine::LaterRule::ALL.iter().map(|r| r.name()).collect();
                return usage(format!(
                    "no later rule named '{name}' (the rules: {})",
                    names.join(", ")
                ));
            }
        }
    }
    let Some(profile) = sim::profile::Profile::named(&o.profile) else {
        return usage(format!("no profile named '{}'", o.profile));
    };
    let budget = match (&o.seeds, &o.time) {
        (Some(r), None) => match parse_range(r) {
            Some((a, b)) => sim::diff::Budget::Seeds(a, b),
            None => return usage(format!("--seeds is A..B with A < B, not '{r}'")),
        },
        (None, Some(t)) => match parse_duration_s(t) {
            Some(s) => sim::diff::Budget::Time(s),
            None => return usage(format!("--time is a duration such as 60s, not '{t}'")),
        },
        (None, None) => sim::diff::Budget::Seeds(0, 100),
        (Some(_), Some(_)) => return usage("--seeds and --time exclude each other".into()),
    };
    let mut theirs = sim::diff::backend::Remote::new(url).without_rules(without);
    let clock = engine::io::OsClock::new();
    let result = sim::diff::campaign(
        &profile,
        budget,
        Some(o.transactions),
        &mut theirs,
        &clock,
        |seed, out| {
            if out.mismatch.is_some() {
                eprintln!(
                    "seed {seed}: MISMATCH ({})",
                    out.mismatch.as_deref().unwrap_or("")
                );
            } else if out.racy {
                eprintln!("seed {seed}: parted where woken waiters raced");
            }
        },
    );
    let sum = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!("innosim diff: {e}");
            return ExitCode::from(2);
        }
    };
    for (_, report) in &sum.layout {
        println!("(the same locks on both sides, their weights spread by the pages)\n{report}");
    }
    for (_, report) in &sum.page_end {
        println!("(an insert parted by where the server's page ends)\n{report}");
    }
    for (_, report) in &sum.timing {
        println!(
            "(parted on its first run, not on every one of {} more: the server's timing)\n{report}",
            sim::diff::RERUNS
        );
    }
    for (_, report) in &sum.mismatches {
        println!("{report}");
    }
    // The mismatches left are innosim's with the later rules on, where a
    // run without them parted at a difference the rules explain (and the
    // rules change nothing where they do not apply).
    let later = sum.later;
    let ours = || sim::diff::backend::Local::with_later_rules(later);
    for (seed, _) in sum.mismatches.iter().take(o.shrink) {
        let shrunk = sim::diff::Scenario::generate(*seed, &profile, Some(o.transactions)).and_then(
            |scenario| {
                let out = sim::diff::run(&scenario, &mut ours(), &mut theirs)?;
                let t = sim::diff::Transcript::of_run(&scenario, &out);
                sim::diff::shrink(&t, &ours, &mut theirs)
            },
        );
        match shrunk {
            Ok((t, out)) => {
                println!("{}", t.script(Some(&out), &o.server));
                // A script runs on innosim as it is (1.0.6's rules): one
                // that parts earlier without the later rules shows the
                // version's difference, not this one, and is not saved.
                let plain = sim::diff::run_transcript(
                    &t,
                    &mut sim::diff::backend::Local::new(),
                    &mut theirs,
                )
                .map(|(p, _)| p.steps.len() == out.steps.len());
                let save_to = match (&o.save, plain) {
                    (Some(dir), Ok(true)) => Some(dir),
                    (Some(_), Ok(false)) => {
                        println!(
                            "# seed {seed}: not saved: without the server's later rules innosim \
                             parts from it earlier (a version difference)"
                        );
                        None
                    }
                    (Some(_), Err(e)) => {
                        println!("# seed {seed}: not saved: {e}");
                        None
                    }
                    (None, _) => None,
                };
                if let Some(dir) = save_to {
                    let header = format!(
                        "innosim diff --profile {} --seeds {seed}..{} --transactions {}, shrunk to {} statements;\n\
                         the .result is the output of {} ({}).",
                        o.profile,
                        seed + 1,
                        o.transactions,
                        t.steps.len(),
                        theirs.version(),
                        o.server
                    );
                    let saved = sim::diff::save::saved(&t, &out, &header);
                    let base = dir.join(format!("{}-{seed}", o.profile));
                    let written = std::fs::create_dir_all(dir)
                        .and_then(|_| std::fs::write(base.with_extension("test"), &saved.test))
                        .and_then(|_| std::fs::write(base.with_extension("result"), &saved.result));
                    match written {
                        Ok(()) => println!("# saved as {}.test", base.display()),
                        Err(e) => println!("# seed {seed}: not saved: {e}"),
                    }
                }
            }
            Err(e) => println!("# seed {seed}: not shrunk: {e}"),
        }
    }
    let errors: Vec<String> = sum
        .errors
        .iter()
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    println!(
        "{} scenarios of profile {} against {}: {} statements, {} lock waits, {} deadlocks, errors {{{}}}, {} parted where woken waiters raced, {} version differences, {} victims chosen by weights the pages spread, {} inserts parted by a page's end, {} parted on one run only (the server's timing), {} mismatches, {:.1} s",
        sum.scenarios,
        o.profile,
        o.server,
        sum.steps,
        sum.waits,
        sum.deadlocks,
        errors.join(", "),
        sum.racy,
        sum.version_seeds.len(),
        sum.layout.len(),
        sum.page_end.len(),
        sum.timing.len(),
        sum.mismatches.len(),
        engine::io::Clock::now_us(&clock) as f64 / 1e6
    );
    let reached: Vec<String> = sum
        .reached
        .table()
        .iter()
        .map(|(name, n)| format!("{n} {name}"))
        .collect();
    println!("reached on innosim's side: {}", reached.join(", "));
    if !sum.layout.is_empty() {
        let seeds: Vec<String> = sum.layout.iter().map(|(s, _)| s.to_string()).collect();
        println!(
            "  deadlock victims chosen by weights the pages spread (innosim keeps one lock struct \
             per index and its own page layout; see each report above): seeds {}",
            seeds.join(" ")
        );
    }
    if !sum.page_end.is_empty() {
        let seeds: Vec<String> = sum.page_end.iter().map(|(s, _)| s.to_string()).collect();
        println!(
            "  inserts parted by where the server's page ends (it checks the locks on the next \
             record of the same page, a supremum at a page's end; innosim keeps its locks by \
             key): seeds {}",
            seeds.join(" ")
        );
    }
    if !sum.timing.is_empty() {
        let seeds: Vec<String> = sum.timing.iter().map(|(s, _)| s.to_string()).collect();
        println!(
            "  parted on the first run only (the server's threads woke waiters in another \
             order; see each report above): seeds {}",
            seeds.join(" ")
        );
    }
    for (rule, n) in &sum.versions {
        let seeds: Vec<String> = sum
            .version_seeds
            .iter()
            .filter(|(_, r)| r == rule)
            .map(|(s, _)| s.to_string())
            .collect();
        println!(
            "  version difference {rule}: {n} scenarios (seeds {})",
            seeds.join(" ")
        );
    }
    if sum.mismatches.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
