//! The `innosim` command line: the arguments parsed and each command
//! handed to the library that does its work. The commands live in rooms
//! of their own: `campaign` (run, fuzz, merge, replay, shrink), `bench`,
//! `report`, `sql` (the shell, scripts, suites, check) and `server` (serve,
//! crashloop, replay-served, diff).

mod bench;
mod campaign;
mod report;
mod server;
mod sql;

use bench::{
    bench_compression, bench_engine, bench_flush, bench_index, bench_sim, format_label,
    run_flush_points, run_sim_rows, SEED_SIZES_MIB,
};
use campaign::{
    fuzz, merge_cmd, one_run, replay_entry, shrink_and_save, shrink_cmd, shrink_entry, FuzzArgs,
};
use clap::{Parser, Subcommand, ValueEnum};
use engine::{FlushAtCommit, RowFormat};
use report::report;
use server::{crashloop, diff, replay_served, serve, CrashloopOpts, DiffOpts, ServeOpts};
use sql::{check_dir, run_scripts, run_suite, sql_shell};
use std::io::IsTerminal;
use std::process::ExitCode;

/// The engine allocates many small, short-lived buffers per statement
/// (keys, rows, undo images) and a simulated run builds and drops whole
/// disks; mimalloc's thread-local free lists make a fuzz campaign about a
/// fifth faster than the system allocator (see the commit that added it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "innosim",
    version,
    about = "A crash-recovery and concurrency testbed around a Rust re-implementation of the InnoDB Plugin 1.0 storage engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Redundant,
    Compact,
    Dynamic,
}

#[derive(Subcommand)]
enum Command {
    /// One simulation: a seeded workload with crashes, judged by the oracle.
    Run {
        /// The seed (decimal).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The workload profile.
        #[arg(long, default_value = "default")]
        profile: String,
        /// Force innodb_flush_log_at_trx_commit (0, 1 or 2).
        #[arg(long)]
        flush: Option<u8>,
        /// Plant a canary (see `innosim canaries`).
        #[arg(long)]
        canary: Option<String>,
        /// Write the trace, one event per line; a path ending in .json gets
        /// a timeline in Chrome's trace-event format (Perfetto).
        #[arg(long)]
        trace: Option<std::path::PathBuf>,
    },
    /// The same run again, bit for bit: from its seed, or a corpus entry.
    Replay {
        /// The seed printed by the failing run, or a corpus entry's folder.
        target: String,
        /// The workload profile.
        #[arg(long, default_value = "default")]
        profile: String,
        /// Force innodb_flush_log_at_trx_commit (0, 1 or 2).
        #[arg(long)]
        flush: Option<u8>,
        /// Plant a canary (see `innosim canaries`).
        #[arg(long)]
        canary: Option<String>,
        /// Write the trace, one event per line; a path ending in .json gets
        /// a timeline in Chrome's trace-event format (Perfetto).
        #[arg(long)]
        trace: Option<std::path::PathBuf>,
    },
    /// Shrinks a failing run and saves it to corpus/: a seed's, or a
    /// corpus entry's (saved back under its name when it got smaller).
    Shrink {
        /// The failing seed.
        #[arg(long, conflicts_with = "entry", required_unless_present = "entry")]
        seed: Option<u64>,
        /// A corpus entry's folder, shrunk further (its own canary and
        /// profile).
        #[arg(long)]
        entry: Option<std::path::PathBuf>,
        /// The workload profile.
        #[arg(long, default_value = "default")]
        profile: String,
        /// Plant a canary (see `innosim canaries`).
        #[arg(long)]
        canary: Option<String>,
        /// Candidate runs the shrinker may try.
        #[arg(long, default_value_t = 2000)]
        budget: usize,
    },
    /// Many simulations: a range of seeds, or as many as fit in a time.
    Fuzz {
        /// Seeds to run, as A..B (B excluded).
        #[arg(long)]
        seeds: Option<String>,
        /// Run for this long (e.g. 60s, 5m, 1h) instead of a seed range.
        #[arg(long)]
        time: Option<String>,
        /// The workload profile.
        #[arg(long, default_value = "default")]
        profile: String,
        /// Plant a canary (see `innosim canaries`).
        #[arg(long)]
        canary: Option<String>,
        /// One JSON object on stdout with the summary.
        #[arg(long)]
        json: bool,
        /// Worker threads (each runs whole seeds; results do not depend on
        /// it). By default one per core this process may use: its CPU
        /// affinity and cgroup quota, as a batch system's task sets them.
        #[arg(long)]
        jobs: Option<usize>,
        /// Run only this shard of the seeds, as I/N: the seeds whose
        /// offset from the range's start is I modulo N. Machines of a
        /// campaign take one shard each; `innosim merge` adds their JSON
        /// reports up.
        #[arg(long)]
        shard: Option<String>,
        /// Run every seed twice and report a seed whose two traces differ
        /// (nondeterminism is a bug in the testbed).
        #[arg(long)]
        doublecheck: bool,
        /// Stop at the first failing seed (and shrink it).
        #[arg(long)]
        stop_on_failure: bool,
        /// Where failures' shrunk plans are saved (a shard of a campaign
        /// takes a directory of its own).
        #[arg(long, default_value = "corpus")]
        corpus: std::path::PathBuf,
    },
    /// Adds up the JSON reports (`fuzz --json`) of a campaign's shards,
    /// after checking that they are one campaign's (one build, profile,
    /// canary and seed range) and cover the range once each; keeps the
    /// smallest saved reproduction of each kind of violation.
    Merge {
        /// The shards' reports.
        #[arg(required = true)]
        reports: Vec<std::path::PathBuf>,
        /// Copy each kind's chosen corpus entry into this directory.
        #[arg(long)]
        corpus: Option<std::path::PathBuf>,
        /// The merged report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Runs mysqltest scripts on the simulated disk and clock and compares
    /// each one's output with the `.result` file beside it (a diff on a
    /// mismatch); with --suite, runs a directory laid out as mysql-test's
    /// suites (t/, r/, include/) as mysql-test-run does, one line a test.
    Script {
        /// The `.test` files (with --suite: only these tests of the suite,
        /// by name).
        #[arg(required_unless_present = "suite")]
        files: Vec<std::path::PathBuf>,
        /// Write each script's output to its `.result` file instead.
        #[arg(long, conflicts_with = "suite")]
        record: bool,
        /// A suite directory: each t/NAME.test runs with its
        /// t/NAME-master.opt and is compared with r/NAME.result; a failing
        /// test's output goes to r/NAME.reject.
        #[arg(long)]
        suite: Option<std::path::PathBuf>,
        /// With --suite: run the tests t/disabled.def lists too.
        #[arg(long, requires = "suite")]
        enable_disabled: bool,
    },
    /// An SQL shell (line editing and history) on a real directory, or on
    /// a simulated disk in memory when no --dir is given.
    Sql {
        /// Run these statements (separated by `;`) and exit.
        #[arg(short = 'e', long = "execute")]
        execute: Option<String>,
        /// The database directory (created if missing).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
    /// Serves the engine over the MySQL protocol on loopback TCP (the
    /// `mariadb` client, drivers), on a real data directory
    Serve(ServeOpts),
    /// The fuzzer's generated sessions run on innosim and, over the MySQL
    /// protocol, on another server (a real MariaDB or MySQL, or `innosim
    /// serve`), statement by statement: every answer, warning count, error
    /// and lock wait compared; exit 1 on a mismatch
    Diff(DiffOpts),
    /// Crash-and-restart cycles of `innosim serve` under a real client:
    /// commits through the protocol, the process killed (real files) or
    /// the simulated disk's power pulled mid-load, recovery, and every
    /// acknowledged commit checked
    Crashloop(CrashloopOpts),
    /// Replays a run `innosim serve --record FILE` recorded, on the
    /// simulated disk, and checks that every answer is the recorded one
    ReplayServed {
        /// The recording.
        file: std::path::PathBuf,
    },
    /// Checks a real data directory as innochecksum and mysqlcheck do:
    /// recovers it, runs CHECK TABLE on every table, and reads back every
    /// page of every file (checksum, page number, LSN, compressed pages
    /// against their frames); exit 1 on any damage
    Check {
        /// The data directory.
        dir: std::path::PathBuf,
    },
    /// The planted bugs (canaries) the checkers must catch, one per line;
    /// `lying-fsync` is the simulated disk's negative control.
    Canaries,
    /// One self-contained HTML page of the benches' figures beside the
    /// seeds' (SVG charts): the flush setting by commit path and latency
    /// preset, thread scaling, deadlocks, compressed sizes per
    /// KEY_BLOCK_SIZE, fast against copying index changes, and the
    /// simulator's own rates.
    Report {
        /// The directory the page (index.html) goes into.
        #[arg(long, default_value = "report")]
        out: std::path::PathBuf,
        /// Small runs (2 seeds a flush row, 5,000-row tables), for CI.
        #[arg(long)]
        quick: bool,
    },
    /// Engine micro-benchmarks on sysbench's table, in memory, one core;
    /// with `--oltp`, the lock benchmark: simulated sysbench
    /// oltp_read_write, 16 sessions, 1 ms fsync, under flush 0, 1 and 2.
    Bench {
        /// Run the lock benchmark (the `oltp` profile with 16 sessions and
        /// a 1 ms fsync, every run judged by the checkers) instead of the
        /// micro-benchmarks: transactions and deadlocks per simulated
        /// second and seeds per wall second, for each flush setting (and
        /// flush 1 with group commit).
        #[arg(long)]
        oltp: bool,
        /// Run the compression benchmark instead: the table (at --rows,
        /// default 1,000,000 here) loaded into COMPACT, DYNAMIC and
        /// COMPRESSED at 16, 8, 4, 2 and 1 KiB, on sysbench 0.4's rows and
        /// sysbench 1.0's: file sizes beside the seeds', INNODB_CMP's
        /// ok-rates, forced splits, and rates relative to COMPACT; then
        /// time-driven sysbench OLTP in memory on COMPACT and COMPRESSED
        /// 8K at seeds/003's 1 to 512 clients, beside its figures.
        #[arg(long, conflicts_with_all = ["oltp", "pool_mib", "flush", "flush_setting", "row_format", "dir"])]
        compression: bool,
        /// Run the index benchmark instead (seeds/000's experiment):
        /// sysbench's table (at --rows, default 1,000,000 here) on the
        /// simulated disk, DROP INDEX k and CREATE INDEX k in place and by
        /// copying the table, in simulated seconds of I/O (100 us per
        /// operation, 200 MB/s, 1 ms per sync) and bytes written.
        #[arg(long, conflicts_with_all = ["oltp", "compression", "flush", "flush_setting", "row_format", "dir"])]
        index: bool,
        /// Run the simulator's own benchmark instead: seeds per wall
        /// second and simulated seconds per wall second for every profile,
        /// step-driven and time-driven (--seeds each; 10 with --quick).
        #[arg(long, conflicts_with_all = ["oltp", "compression", "index", "flush_setting", "row_format", "dir"])]
        sim: bool,
        /// With --sim: a short run (10 seeds a profile, whatever --seeds
        /// says); with --flush, 2 seeds a row at 1 and 16 clients; with
        /// --compression, 20,000 rows (unless --rows) and its OLTP table
        /// at 1 and 16 clients. For CI.
        #[arg(long)]
        quick: bool,
        /// With --oltp and --flush: seeds per row (default 50); with
        /// --sim, per profile (50); with --compression, per row of its
        /// OLTP table (1).
        #[arg(long)]
        seeds: Option<u64>,
        /// With --oltp: time-driven scheduling (sessions overlap in
        /// simulated time; a sync waits for the device).
        #[arg(long, requires = "oltp")]
        timed: bool,
        /// With --oltp --timed or --flush: every storage operation costs
        /// as this preset says (seeds-disk, platter, ssd, memory), a sync
        /// included.
        #[arg(long)]
        latency: Option<String>,
        /// Rows to load (default 200,000; 1,000,000 with --compression).
        #[arg(long)]
        rows: Option<u64>,
        /// Buffer pool size in MiB.
        #[arg(long, default_value_t = 64)]
        pool_mib: usize,
        /// Run the engine beside SQLite instead (rusqlite's bundled
        /// library): the micro-benchmarks' phases on the same table, rows
        /// and operations, at the same cache (--pool-mib) and durability
        /// (--innodb-flush-log-at-trx-commit: SQLite's WAL with
        /// synchronous FULL, NORMAL or OFF), in memory or in --dir, one
        /// core, as ratios (--quick: 20,000 rows).
        #[arg(long, conflicts_with_all = ["oltp", "compression", "index", "sim", "flush", "row_format"])]
        engine: bool,
        /// Run the flush benchmark instead (time-driven oltp_read_write at
        /// 1, 4, 8 and 16 clients on the seeds-disk and platter latency
        /// presets, or --latency's): transactions and deadlocks per
        /// simulated second and commits per log sync for flush 0, 2 and 1
        /// on each commit path (own sync, group commit, the binary log's
        /// mutex), beside the seeds' figures.
        #[arg(long, conflicts_with_all = ["oltp", "compression", "index", "sim", "flush_setting", "row_format", "pool_mib", "rows", "dir"])]
        flush: bool,
        /// With the micro-benchmarks: innodb_flush_log_at_trx_commit, 0, 1
        /// or 2.
        #[arg(long = "innodb-flush-log-at-trx-commit", default_value_t = 1)]
        flush_setting: u8,
        /// Row format.
        #[arg(long, value_enum, default_value_t = Format::Compact)]
        row_format: Format,
        /// One JSON object on stdout instead of a table.
        #[arg(long)]
        json: bool,
        /// Use this directory (real files, real fsync) instead of memory.
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
    },
}

fn usage(msg: String) -> ExitCode {
    eprintln!("innosim: {msg}");
    ExitCode::from(2)
}

fn parse_duration_s(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * mult)
}

fn parse_range(s: &str) -> Option<(u64, u64)> {
    let (a, b) = s.split_once("..")?;
    let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
    (a < b).then_some((a, b))
}

fn profile(name: &str) -> Result<sim::profile::Profile, String> {
    sim::profile::Profile::named(name).ok_or_else(|| {
        format!(
            "unknown profile '{name}' (one of: {})",
            sim::profile::Profile::NAMES.join(", ")
        )
    })
}

fn commit_id() -> &'static str {
    env!("INNOSIM_COMMIT")
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Transparent huge pages off for this process. mimalloc asks for them on
/// its arenas, and a campaign builds and drops a simulated disk per seed:
/// the kernel then zeroes 2 MiB pages over and over for memory that is
/// touched a few KiB at a time. In a profile of `innosim fuzz --seeds 0..300
/// --jobs 1` the kernel's share fell from 3.9% to 1.6% without them.
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is variadic; PR_SET_THP_DISABLE reads its flag and
    // requires the remaining three arguments to be zero, all as unsigned
    // longs, which is what is passed. It changes only this process's page
    // policy and touches no memory of ours. A failure (an old kernel)
    // leaves huge pages on, which costs time, not correctness.
    unsafe {
        let zero: libc::c_ulong = 0;
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            1 as libc::c_ulong,
            zero,
            zero,
            zero,
        );
    }
}

fn main() -> ExitCode {
    no_huge_pages();
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            seed,
            profile,
            flush,
            canary,
            trace,
        } => one_run(seed, &profile, flush, canary, trace),
        Command::Replay {
            target,
            profile,
            flush,
            canary,
            trace,
        } => match target.parse::<u64>() {
            Ok(seed) => one_run(seed, &profile, flush, canary, trace),
            Err(_) => replay_entry(std::path::Path::new(&target), trace),
        },
        Command::Shrink {
            seed: Some(seed),
            profile,
            canary,
            budget,
            ..
        } => shrink_cmd(seed, &profile, canary, budget),
        Command::Shrink {
            entry: Some(dir),
            budget,
            ..
        } => shrink_entry(&dir, budget),
        Command::Shrink { .. } => usage("shrink needs --seed or --entry".into()),
        Command::Fuzz {
            seeds,
            time,
            profile,
            canary,
            json,
            jobs,
            shard,
            doublecheck,
            stop_on_failure,
            corpus,
        } => fuzz(FuzzArgs {
            seeds,
            time,
            profile,
            canary,
            json,
            jobs,
            shard,
            doublecheck,
            stop_on_failure,
            corpus,
        }),
        Command::Merge {
            reports,
            corpus,
            json,
        } => merge_cmd(&reports, corpus.as_deref(), json),
        Command::Script {
            files,
            record,
            suite: Some(dir),
            enable_disabled,
        } => {
            let _ = record;
            run_suite(&dir, &files, enable_disabled)
        }
        Command::Script {
            files,
            record,
            suite: None,
            ..
        } => run_scripts(&files, record),
        Command::Sql { execute, dir } => sql_shell(execute, dir),
        Command::Serve(opts) => serve(opts),
        Command::Check { dir } => check_dir(&dir),
        Command::Crashloop(opts) => crashloop(opts),
        Command::Diff(opts) => diff(opts),
        Command::ReplayServed { file } => replay_served(&file),
        Command::Canaries => {
            for c in engine::Canary::ALL {
                println!("{c}");
            }
            println!("lying-fsync");
            ExitCode::SUCCESS
        }
        Command::Report { out, quick } => report(&out, quick),
        Command::Bench {
            quick: true,
            sim: false,
            flush: false,
            compression: false,
            engine: false,
            ..
        } => usage("--quick goes with --sim, --flush, --compression or --engine".into()),
        Command::Bench {
            latency: Some(_),
            flush: false,
            timed: false,
            ..
        } => usage("--latency goes with --flush or --oltp --timed".into()),
        Command::Bench {
            sim: true,
            seeds,
            quick,
            json,
            ..
        } => bench_sim(if quick { 10 } else { seeds.unwrap_or(50) }, json),
        Command::Bench {
            oltp: true,
            seeds,
            json,
            timed,
            latency,
            ..
        } => {
            let seeds = seeds.unwrap_or(50);
            if seeds == 0 {
                eprintln!("innosim: --seeds must be positive");
                return ExitCode::from(2);
            }
            let bench_profile = match &latency {
                None => sim::bench::oltp_bench_profile(timed),
                Some(p) => match sim::bench::oltp_bench_profile_on(p) {
                    Some(profile) => profile,
                    None => {
                        return usage(format!(
                            "no latency preset named '{p}' (one of: {})",
                            sim::storage::faults::Latency::PRESETS.join(", ")
                        ))
                    }
                },
            };
            let settings = [
                (FlushAtCommit::Lazy, false),
                (FlushAtCommit::Sync, false),
                (FlushAtCommit::Sync, true),
                (FlushAtCommit::Write, false),
            ];
            // (row, wall seconds): the wall is timed here, the simulation
            // knows only its own clock.
            let rows: Vec<(sim::bench::OltpRow, f64)> = settings
                .into_iter()
                .map(|(f, group)| {
                    let start = std::time::Instant::now();
                    let row = sim::bench::oltp_of(0..seeds, f, group, &bench_profile);
                    (row, start.elapsed().as_secs_f64())
                })
                .collect();
            let seeds_per_sec = |wall: f64| seeds as f64 / wall.max(1e-9);
            if json {
                let out: Vec<serde_json::Value> = rows
                    .iter()
                    .map(|(r, wall)| {
                        serde_json::json!({
                            "flush": r.flush,
                            "group_commit": r.group_commit,
                            "seeds": r.seeds,
                            "commits": r.commits,
                            "deadlocks": r.deadlocks,
                            "lock_timeouts": r.lock_timeouts,
                            "waits": r.waits,
                            "sim_seconds": r.sim_seconds,
                            "wall_seconds": wall,
                            "tps_sim": r.tps(),
                            "deadlocks_per_sim_sec": r.deadlocks_per_sec(),
                            "log_syncs": r.log_syncs,
                            "commits_per_log_sync": r.commits_per_log_sync(),
                            "seeds_per_sec": seeds_per_sec(*wall),
                            "failing_seeds": r.failing_seeds,
                        })
                    })
                    .collect();
                println!("{}", serde_json::json!({ "oltp": out }));
            } else {
                println!(
                    "oltp_read_write, 16 sessions, {} fsync, {seeds} seeds per setting, one core{}",
                    match &bench_profile.latency {
                        Some(l) => format!("{:.0} us", l.mean_sync_us()),
                        None => format!("{} us", bench_profile.sync_latency_us),
                    },
                    match (&latency, timed) {
                        (Some(p), _) => format!(", time-driven, latency preset {p}"),
                        (None, true) => ", time-driven".to_string(),
                        (None, false) => String::new(),
                    }
                );
                println!("flush         commits  deadlocks  timeouts   sim s   trx/sim s  deadlocks/sim s  commits/log sync  seeds/wall s");
                for (r, wall) in &rows {
                    println!(
                        "{:<12} {:>8} {:>10} {:>9} {:>7.2} {:>11.1} {:>16.2} {:>17.2} {:>13.1}",
                        if r.group_commit {
                            format!("{} (group)", r.flush)
                        } else {
                            r.flush.to_string()
                        },
                        r.commits,
                        r.deadlocks,
                        r.lock_timeouts,
                        r.sim_seconds,
                        r.tps(),
                        r.deadlocks_per_sec(),
                        r.commits_per_log_sync(),
                        seeds_per_sec(*wall)
                    );
                }
            }
            // A failure is shrunk and saved like the fuzzer's, so that
            // `innosim replay corpus/ENTRY` runs the bench's own plan.
            let mut failed = false;
            for ((flush, group), (row, _)) in settings.into_iter().zip(&rows) {
                for &seed in &row.failing_seeds {
                    failed = true;
                    let plan = sim::bench::oltp_plan_of(seed, flush, group, &bench_profile);
                    match shrink_and_save(&plan, 200) {
                        Some((dir, _)) => eprintln!(
                            "violation: seed {seed}, flush {}{}; reproduce: innosim replay {}",
                            flush.setting(),
                            if group { " with group commit" } else { "" },
                            dir.display()
                        ),
                        None => eprintln!(
                            "violation: seed {seed}, flush {} did not fail again (nondeterminism)",
                            flush.setting()
                        ),
                    }
                }
            }
            if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Command::Bench {
            index: true,
            rows,
            pool_mib,
            json,
            ..
        } => bench_index(rows.unwrap_or(1_000_000), pool_mib, json),
        Command::Bench {
            compression: true,
            rows,
            json,
            quick,
            seeds,
            ..
        } => bench_compression(
            rows.unwrap_or(if quick { 20_000 } else { 1_000_000 }),
            seeds.unwrap_or(1),
            quick,
            json,
        ),
        Command::Bench {
            flush: true,
            seeds,
            quick,
            json,
            latency,
            ..
        } => bench_flush(seeds.unwrap_or(50), quick, json, latency),
        Command::Bench {
            engine: true,
            rows,
            pool_mib,
            flush_setting,
            json,
            dir,
            quick,
            ..
        } => bench_engine(
            rows.unwrap_or(if quick { 20_000 } else { 200_000 }),
            pool_mib,
            flush_setting,
            json,
            dir,
        ),
        Command::Bench {
            rows,
            pool_mib,
            flush_setting,
            row_format,
            json,
            dir,
            ..
        } => {
            let rows = rows.unwrap_or(200_000);
            let flush = match FlushAtCommit::from_setting(flush_setting) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("innosim: {e}");
                    return ExitCode::from(2);
                }
            };
            if rows == 0 || pool_mib == 0 {
                eprintln!("innosim: --rows and --pool-mib must be positive");
                return ExitCode::from(2);
            }
            let opts = sim::bench::BenchOptions {
                rows,
                pool_mib,
                flush,
                row_format: match row_format {
                    Format::Redundant => RowFormat::Redundant,
                    Format::Compact => RowFormat::Compact,
                    Format::Dynamic => RowFormat::Dynamic,
                },
                dir,
                ..Default::default()
            };
            let start = std::time::Instant::now();
            match sim::bench::run(&opts, &|| start.elapsed().as_secs_f64()) {
                Ok(phases) => {
                    let rss = peak_rss_kib();
                    if json {
                        let obj: serde_json::Map<String, serde_json::Value> = phases
                            .iter()
                            .map(|p| (p.name.replace(' ', "_"), serde_json::json!({"ops": p.ops, "seconds": p.seconds, "per_sec": p.per_sec()})))
                            .chain([("peak_rss_kib".to_string(), serde_json::json!(rss))])
                            .collect();
                        println!("{}", serde_json::Value::Object(obj));
                    } else {
                        println!("sysbench table, {rows} rows, {pool_mib} MiB pool, flush {}, {}, one core", flush.setting(), if opts.dir.is_some() { "real files" } else { "in memory" });
                        for p in &phases {
                            println!(
                                "{:<24} {:>10} ops {:>8.3} s {:>12.0} /s",
                                p.name,
                                p.ops,
                                p.seconds,
                                p.per_sec()
                            );
                        }
                        if let Some(kib) = rss {
                            println!("peak RSS {:.1} MiB", kib as f64 / 1024.0);
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("innosim: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// A size as MySQL's options take it: bytes, or a number with a K, M or G
/// suffix (powers of 1024).
fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], c.to_ascii_uppercase()),
        _ => (s, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        other => return Err(format!("unknown size suffix '{other}' (K, M or G)")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a size (bytes, or a number with K, M or G)"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("'{s}' is too large"))
}
