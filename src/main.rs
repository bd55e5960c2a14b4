//! The `innosim` command line.

use clap::{Parser, Subcommand, ValueEnum};
use engine::{FlushAtCommit, RowFormat};
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
        /// Worker threads (each runs whole seeds; results do not depend on it).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
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

/// The seeds' file sizes (seeds/000, 10M sysbench 0.4 rows), MiB: COMPACT,
/// then COMPRESSED at 8, 4 and 2 KiB.
const SEED_SIZES_MIB: [(&str, f64); 4] = [
    ("COMPACT", 2355.0),
    ("COMPRESSED 8K", 1229.0),
    ("COMPRESSED 4K", 592.0),
    ("COMPRESSED 2K", 324.0),
];

fn format_label(f: RowFormat) -> String {
    match f {
        RowFormat::Compressed { key_block_size } => format!("COMPRESSED {key_block_size}K"),
        other => other.name().to_string(),
    }
}

/// Runs `seeds` of every profile on both schedulers (step-driven, then
/// `+timed`): (row, wall seconds), the wall timed here (the simulation
/// knows only its own clock).
fn run_sim_rows(seeds: u64) -> Vec<(sim::bench::SimRow, f64)> {
    let mut rows = Vec::new();
    for name in sim::profile::Profile::NAMES {
        for full in [name.to_string(), format!("{name}+timed")] {
            let p = sim::profile::Profile::named(&full).expect("a named profile");
            let start = std::time::Instant::now();
            let row = sim::bench::sim_rates(&p, 0..seeds);
            rows.push((row, start.elapsed().as_secs_f64().max(1e-9)));
        }
    }
    rows
}

fn bench_sim(seeds: u64, json: bool) -> ExitCode {
    if seeds == 0 {
        return usage("--seeds must be positive".into());
    }
    let rows = run_sim_rows(seeds);
    if json {
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|(r, wall)| {
                serde_json::json!({
                    "profile": r.profile, "seeds": r.seeds, "failing": r.failing,
                    "sim_seconds": r.sim_seconds, "wall_seconds": wall,
                    "seeds_per_sec": r.seeds as f64 / wall, "sim_per_wall": r.sim_seconds / wall,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({ "sim": out, "commit": commit_id() })
        );
    } else {
        println!(
            "the simulator on one core, {seeds} seeds a profile, every run judged (commit {})",
            commit_id()
        );
        println!(
            "{:<22} {:>8} {:>8} {:>10} {:>16}",
            "profile", "seeds", "failing", "seeds/s", "sim s per wall s"
        );
        for (r, wall) in &rows {
            println!(
                "{:<22} {:>8} {:>8} {:>10.1} {:>16.1}",
                r.profile,
                r.seeds,
                r.failing,
                r.seeds as f64 / wall,
                r.sim_seconds / wall
            );
        }
    }
    if rows.iter().any(|(r, _)| r.failing > 0) {
        eprintln!("innosim bench --sim: a seed failed; run innosim fuzz on its profile to see it");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn bench_compression(rows: u64, seeds: u64, quick: bool, json: bool) -> ExitCode {
    use sim::zip_bench::{measure, variants, DataSet, ZipBenchOptions};
    if rows == 0 {
        return usage("--rows must be positive".into());
    }
    if seeds == 0 {
        return usage("--seeds must be positive".into());
    }
    // Every page in memory: a 1 KiB page holds about 4 rows of random
    // digits, and each page has a 16 KiB frame.
    let pool_pages = (rows / 3 + 1024) as usize;
    let opts = ZipBenchOptions {
        rows,
        pool_pages,
        seed: 1,
    };
    let mut out = Vec::new();
    for data in [DataSet::Sysbench04, DataSet::Sysbench10] {
        let mut compact: Option<sim::zip_bench::ZipRow> = None;
        if !json {
            println!(
                "{} rows of {}, a pool of {pool_pages} pages (allocated as used), in memory, one core",
                rows,
                data.name()
            );
            println!(
                "{:<15} {:>12} {:>7} {:>8} {:>12} {:>10} {:>10} {:>7} {:>8} {:>10} {:>7} {:>7} {:>7} {:>8}",
                "format",
                ".ibd bytes",
                "ratio",
                "seeds",
                "after upd",
                "cmp ops",
                "ok",
                "ok %",
                "splits",
                "load/s",
                "select",
                "misses",
                "update",
                "cmp/upd"
            );
        }
        for format in variants() {
            let row = match measure(data, format, &opts) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("innosim: {}: {e}", format_label(format));
                    return ExitCode::FAILURE;
                }
            };
            let base = compact.get_or_insert_with(|| row.clone()).clone();
            let label = format_label(format);
            let ratio = base.ibd_bytes as f64 / row.ibd_bytes.max(1) as f64;
            let seeds = (data == DataSet::Sysbench04)
                .then(|| SEED_SIZES_MIB.iter().find(|(n, _)| *n == label))
                .flatten()
                .map(|(_, mib)| SEED_SIZES_MIB[0].1 / mib);
            let sel = row.select_per_sec / base.select_per_sec.max(1e-9);
            let upd = row.update_per_sec / base.update_per_sec.max(1e-9);
            if json {
                out.push(serde_json::json!({
                    "data": data.name(), "format": label, "ibd_bytes": row.ibd_bytes,
                    "ibd_bytes_after_updates": row.ibd_bytes_after_updates,
                    "ratio_to_compact": ratio, "seeds_ratio": seeds,
                    "compress_ops": row.compress_ops, "compress_ops_ok": row.compress_ops_ok,
                    "ok_rate": row.ok_rate(), "uncompress_ops": row.uncompress_ops,
                    "splits_after_failure": row.splits_after_failure,
                    "load_per_sec": row.load_per_sec, "select_per_sec": row.select_per_sec,
                    "update_per_sec": row.update_per_sec, "select_misses": row.select_misses,
                    "select_vs_compact": sel, "update_vs_compact": upd,
                    "compressions_per_update": row.compressions_per_update,
                }));
            } else {
                println!(
                    "{:<15} {:>12} {:>6.2}x {:>8} {:>12} {:>10} {:>10} {:>6.1}% {:>8} {:>10.0} {:>6.2}x {:>7} {:>6.2}x {:>8.3}",
                    label,
                    row.ibd_bytes,
                    ratio,
                    seeds.map_or("-".to_string(), |r| format!("{r:.2}x")),
                    row.ibd_bytes_after_updates,
                    row.compress_ops,
                    row.compress_ops_ok,
                    100.0 * row.ok_rate(),
                    row.splits_after_failure,
                    row.load_per_sec,
                    sel,
                    row.select_misses,
                    upd,
                    row.compressions_per_update
                );
            }
        }
        if !json {
            println!();
        }
    }
    if !json {
        println!("ratio: COMPACT's .ibd over this one's, after the load; seeds: the same ratio in seeds/000 at 10M rows; after upd: the .ibd after updates of k in a tenth of the rows; select and update: rate over COMPACT's, this run; cmp/upd: page compressions per update of k");
        println!();
    }
    let oltp = zip_oltp_table(seeds, quick, json);
    if json {
        println!(
            "{}",
            serde_json::json!({"sizes": serde_json::Value::Array(out), "oltp": oltp})
        );
    }
    ExitCode::SUCCESS
}

/// The compression benchmark's OLTP table: time-driven sysbench OLTP in
/// memory on COMPACT and COMPRESSED 8K at seeds/003's thread counts (1 and
/// 16 with `quick`), `seeds` runs a row, printed beside the seed's figures
/// (unless `json`) and returned as JSON rows.
fn zip_oltp_table(seeds: u64, quick: bool, json: bool) -> Vec<serde_json::Value> {
    use sim::bench::{zip_oltp_row, SEED_ZIP_TPS, ZIP_OLTP_CPU, ZIP_OLTP_FORMATS, ZIP_OLTP_ROWS};
    let threads: Vec<usize> = if quick {
        vec![1, 16]
    } else {
        SEED_ZIP_TPS.iter().map(|&(n, _, _)| n).collect()
    };
    if !json {
        println!(
            "sysbench OLTP in memory, time-driven: {ZIP_OLTP_ROWS} rows, one core at {} us a statement, {} us a page, {} us a compressed KiB (seeds/003's INNODB_CMP), {seeds} seed(s) a row",
            ZIP_OLTP_CPU.call_ns / 1000,
            ZIP_OLTP_CPU.page_ns / 1000,
            ZIP_OLTP_CPU.compress_ns_per_kib as f64 / 1000.0
        );
        println!(
            "{:>7} {:>12} {:>14} {:>7} {:>12} {:>11} {:>7} {:>12} {:>8}",
            "threads",
            "COMPACT tps",
            "COMPRESSED-8",
            "ratio",
            "seed COMPACT",
            "seed COMPR.",
            "seed",
            "cmp ops/trx",
            "wall s"
        );
    }
    let mut out = Vec::new();
    for n in threads {
        let start = std::time::Instant::now();
        let [compact, zip] = ZIP_OLTP_FORMATS.map(|f| zip_oltp_row(f, n, 0..seeds));
        let wall = start.elapsed().as_secs_f64();
        let ratio = zip.tps() / compact.tps().max(1e-9);
        let seed = SEED_ZIP_TPS.iter().find(|&&(t, _, _)| t == n);
        let failing: Vec<u64> = compact
            .failing_seeds
            .iter()
            .chain(&zip.failing_seeds)
            .copied()
            .collect();
        let per_trx = zip.zip_compress_ops as f64 / zip.commits.max(1) as f64;
        if json {
            out.push(serde_json::json!({
                "threads": n, "seeds": seeds,
                "compact_tps": compact.tps(), "compressed_tps": zip.tps(), "ratio": ratio,
                "seed_compact_tps": seed.map(|s| s.1), "seed_compressed_tps": seed.map(|s| s.2),
                "seed_ratio": seed.map(|s| s.2 / s.1),
                "compressions_per_transaction": per_trx,
                "compact_deadlocks": compact.deadlocks, "compressed_deadlocks": zip.deadlocks,
                "failing_seeds": failing, "wall_seconds": wall,
            }));
        } else {
            let fig = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
            println!(
                "{:>7} {:>12.1} {:>14.1} {:>6.3}x {:>12} {:>11} {:>6}x {:>12.3} {:>8.1}{}",
                n,
                compact.tps(),
                zip.tps(),
                ratio,
                fig(seed.map(|s| s.1), 0),
                fig(seed.map(|s| s.2), 0),
                fig(seed.map(|s| s.2 / s.1), 3),
                per_trx,
                wall,
                if failing.is_empty() {
                    String::new()
                } else {
                    format!("  VIOLATIONS in seeds {failing:?}")
                }
            );
        }
    }
    if !json {
        println!("ratio: COMPRESSED 8K's transactions/s over COMPACT's, this run; seed: the same in seeds/003 (500,000 rows, 500 MB pool); cmp ops/trx: page compressions per COMPRESSED 8K transaction");
    }
    out
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

fn one_run(
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
        let text = match trace_text(&path, &o.trace) {
            Ok(t) => t,
            Err(e) => return usage(e),
        };
        if let Err(e) = std::fs::write(&path, text) {
            return usage(format!("cannot write {}: {e}", path.display()));
        }
    }
    let s = &o.stats;
    println!(
        "seed {} profile {}: {} statements, {} commits, {} rollbacks, {} waits, {} crashes, {} fsync failures, {} full-disk errors, {:.3} simulated s, {} I/Os, trace {:016x}",
        o.seed, o.profile, s.statements, s.commits, s.rollbacks, s.waits, s.crashes, s.fsync_failures, s.full_disk_errors, s.sim_us as f64 / 1e6, s.io_ops, o.trace_hash
    );
    if o.violations.is_empty() {
        println!("no violation");
        ExitCode::SUCCESS
    } else {
        for v in &o.violations {
            println!("violation: {v}");
        }
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

fn replay_entry(dir: &std::path::Path, trace: Option<std::path::PathBuf>) -> ExitCode {
    let plan = match sim::corpus::load(dir) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let o = match sim::runner::execute(&plan, trace.is_some()) {
        Ok(o) => o,
        Err(e) => return usage(e.to_string()),
    };
    if let Some(path) = trace {
        let text = match trace_text(&path, &o.trace) {
            Ok(t) => t,
            Err(e) => return usage(e),
        };
        if let Err(e) = std::fs::write(&path, text) {
            return usage(format!("cannot write {}: {e}", path.display()));
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
fn shrink_and_save(
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

fn shrink_cmd(seed: u64, profile_name: &str, canary: Option<String>, budget: usize) -> ExitCode {
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
fn shrink_entry(dir: &std::path::Path, budget: usize) -> ExitCode {
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

/// The options of `innosim fuzz`.
struct FuzzArgs {
    seeds: Option<String>,
    time: Option<String>,
    profile: String,
    canary: Option<String>,
    json: bool,
    jobs: usize,
    shard: Option<String>,
    doublecheck: bool,
    stop_on_failure: bool,
    corpus: std::path::PathBuf,
}

fn fuzz(args: FuzzArgs) -> ExitCode {
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
    if jobs == 0 || jobs > 256 {
        return usage(format!("--jobs must be 1..=256, not {jobs}"));
    }
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
    let shards = if report.shards > 1 {
        format!(" in {} shards", report.shards)
    } else {
        String::new()
    };
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
fn merge_cmd(
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

/// `innosim report`: runs the benches small or full and writes their
/// charts, beside the seeds' figures, to `out/index.html`.
fn report(out: &std::path::Path, quick: bool) -> ExitCode {
    use sim::bench::{flush_settings, seed_figure, CommitPath, Sysbench};
    use sim::report::{bar_chart, line_chart, page, Section, Series, PALETTE};
    let seeds = if quick { 2 } else { 20 };
    let threads = Sysbench::ReadWrite.threads(quick);
    let rows_n = if quick { 5_000 } else { 100_000 };
    let presets = ["seeds-disk", "platter"];
    let label = |flush: FlushAtCommit, path: CommitPath| match flush {
        FlushAtCommit::Sync => format!("1, {}", path.name()),
        other => other.setting().to_string(),
    };
    let points = sim::bench::flush_points(&presets.map(String::from), quick);
    let all_rows: Vec<sim::bench::FlushRow> = run_flush_points(&points, seeds)
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    if let Some(r) = all_rows.iter().find(|r| !r.row.failing_seeds.is_empty()) {
        eprintln!(
            "innosim: report: a violation in the flush bench ({}, {}, {} clients, flush {}, {}): run innosim bench --flush to save and replay it",
            r.test.name(),
            r.preset,
            r.sessions,
            r.row.flush,
            r.path.name()
        );
        return ExitCode::FAILURE;
    }
    let (flush_rows, other_tests): (Vec<_>, Vec<_>) = all_rows
        .into_iter()
        .partition(|r| r.test == Sysbench::ReadWrite);
    let settings = flush_settings();
    let categories: Vec<String> = settings.iter().map(|&(f, p)| label(f, p)).collect();
    let at16 = |preset: &str, f: FlushAtCommit, p: CommitPath| {
        flush_rows
            .iter()
            .find(|r| {
                r.preset == preset && r.sessions == 16 && r.row.flush == f.setting() && r.path == p
            })
            .map(|r| &r.row)
    };
    let seed16 = |f: FlushAtCommit| seed_figure(16, f.setting()).first().copied();
    // A series per preset and seeds/004's, of one figure of a row.
    let at16_series = |of_row: &dyn Fn(&sim::bench::OltpRow) -> f64,
                       of_seed: &dyn Fn(&sim::bench::SeedFigure) -> f64|
     -> Vec<Series> {
        presets
            .iter()
            .enumerate()
            .map(|(i, preset)| Series {
                name: format!("innosim, {preset}"),
                color: PALETTE[i],
                values: settings
                    .iter()
                    .map(|&(f, p)| at16(preset, f, p).map(of_row))
                    .collect(),
            })
            .chain([Series {
                name: "seeds/004".into(),
                color: PALETTE[3],
                values: settings
                    .iter()
                    .map(|&(f, _)| {
                        seed16(f)
                            .filter(|s| s.source.starts_with("seeds/004"))
                            .map(|s| of_seed(&s))
                    })
                    .collect(),
            }])
            .collect()
    };
    let flush_svg = bar_chart(
        "flush",
        "oltp_read_write at 16 clients: transactions per second",
        &categories,
        &at16_series(&|r| r.tps(), &|s| s.tps),
        "transactions / simulated s",
    );
    let dl_series = at16_series(
        &|r| 1000.0 * r.deadlocks as f64 / r.commits.max(1) as f64,
        &|s| 1000.0 * s.deadlocks_per_sec / s.tps,
    );
    let deadlock_svg = bar_chart(
        "deadlocks",
        "Deadlocks per 1,000 transactions at 16 clients",
        &categories,
        &dl_series,
        "deadlocks / 1,000 trx",
    );
    let xs: Vec<f64> = threads.iter().map(|&n| n as f64).collect();
    let scaling = |f: FlushAtCommit, p: CommitPath| -> Vec<Option<f64>> {
        threads
            .iter()
            .map(|&n| {
                flush_rows
                    .iter()
                    .find(|r| {
                        r.preset == "platter"
                            && r.sessions == n
                            && r.row.flush == f.setting()
                            && r.path == p
                    })
                    .map(|r| r.row.tps())
            })
            .collect()
    };
    let seed002: Vec<Option<f64>> = threads
        .iter()
        .map(|&n| {
            seed_figure(n, 1)
                .iter()
                .find(|s| s.source.starts_with("seeds/002"))
                .map(|s| s.tps)
        })
        .collect();
    let scaling_svg = line_chart(
        "scaling",
        "Thread scaling on the platter preset: transactions per second",
        &xs,
        &[
            Series {
                name: "flush 0".into(),
                color: PALETTE[0],
                values: scaling(FlushAtCommit::Lazy, CommitPath::Own),
            },
            Series {
                name: "flush 1, group commit".into(),
                color: PALETTE[1],
                values: scaling(FlushAtCommit::Sync, CommitPath::Group),
            },
            Series {
                name: "flush 1, binlog mutex".into(),
                color: PALETTE[2],
                values: scaling(FlushAtCommit::Sync, CommitPath::BinlogMutex),
            },
            Series {
                name: "seeds/002, flush 1".into(),
                color: PALETTE[3],
                values: seed002,
            },
        ],
        "clients",
        "transactions / simulated s",
    );
    // Every sysbench test at 16 clients on the seeds' disk, by setting.
    let tests_svg = bar_chart(
        "tests",
        "sysbench tests at 16 clients on seeds-disk: transactions per second",
        &categories,
        &Sysbench::ALL
            .iter()
            .enumerate()
            .map(|(i, &test)| Series {
                name: test.name().into(),
                color: PALETTE[i],
                values: settings
                    .iter()
                    .map(|&(f, p)| {
                        flush_rows
                            .iter()
                            .chain(&other_tests)
                            .find(|r| {
                                r.test == test
                                    && r.preset == "seeds-disk"
                                    && r.sessions == 16
                                    && r.row.flush == f.setting()
                                    && r.path == p
                            })
                            .map(|r| r.row.tps())
                    })
                    .collect(),
            })
            .collect::<Vec<_>>(),
        "transactions / simulated s",
    );
    // Compressed sizes: COMPACT's .ibd over each format's, beside seeds/000's.
    let opts = sim::zip_bench::ZipBenchOptions {
        rows: rows_n,
        pool_pages: (rows_n / 3 + 1024) as usize,
        seed: 1,
    };
    let mut zip = Vec::new();
    for format in sim::zip_bench::variants() {
        match sim::zip_bench::measure(sim::zip_bench::DataSet::Sysbench04, format, &opts) {
            Ok(r) => zip.push(r),
            Err(e) => {
                eprintln!("innosim: report: the compression bench failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let compact = zip
        .iter()
        .find(|r| r.format == RowFormat::Compact)
        .map_or(1, |r| r.ibd_bytes) as f64;
    let zip_labels: Vec<String> = zip.iter().map(|r| format_label(r.format)).collect();
    // Short enough to sit under a bar group.
    let zip_short: Vec<String> = zip_labels
        .iter()
        .map(|l| l.replace("COMPRESSED ", "KBS "))
        .collect();
    let zip_svg = bar_chart(
        "sizes",
        "COMPACT's .ibd over each format's (KBS: COMPRESSED, KEY_BLOCK_SIZE)",
        &zip_short,
        &[
            Series {
                name: format!("innosim, {rows_n} rows"),
                color: PALETTE[0],
                values: zip
                    .iter()
                    .map(|r| Some(compact / r.ibd_bytes.max(1) as f64))
                    .collect(),
            },
            Series {
                name: "seeds/000, 10M rows".into(),
                color: PALETTE[3],
                values: zip_labels
                    .iter()
                    .map(|l| {
                        SEED_SIZES_MIB
                            .iter()
                            .find(|(n, _)| n == l)
                            .map(|(_, mib)| SEED_SIZES_MIB[0].1 / mib)
                    })
                    .collect(),
            },
        ],
        "size ratio to COMPACT",
    );
    let start = std::time::Instant::now();
    let index = match sim::index_bench::run(rows_n, 4096, &|| start.elapsed().as_secs_f64()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: report: the index bench failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ratio = |a: usize, b: usize| index[b].simulated_s / index[a].simulated_s.max(1e-9);
    let index_svg = bar_chart(
        "index",
        "The slow way over the fast way, simulated time",
        &[
            "DROP INDEX: COPY / in place".into(),
            "CREATE INDEX: COPY / fast".into(),
            "emptying: DELETE / TRUNCATE".into(),
        ],
        &[
            Series {
                name: format!("innosim, {rows_n} rows"),
                color: PALETTE[0],
                values: vec![Some(ratio(0, 2)), Some(ratio(1, 3)), Some(ratio(5, 4))],
            },
            Series {
                name: "seeds/000, 10M rows".into(),
                color: PALETTE[3],
                values: vec![Some(169.0), Some(3.0), None],
            },
        ],
        "slow time / fast time",
    );
    // The simulator's own rates: simulated seconds per wall second.
    let sim_seeds = if quick { 2 } else { 10 };
    let names: Vec<String> = sim::profile::Profile::NAMES.map(String::from).to_vec();
    let (mut step, mut timed) = (Vec::new(), Vec::new());
    for (row, wall) in run_sim_rows(sim_seeds) {
        if row.failing > 0 {
            let full = &row.profile;
            eprintln!("innosim: report: {} of {full}'s seeds failed: run innosim fuzz --seeds 0..{sim_seeds} --profile {full}", row.failing);
            return ExitCode::FAILURE;
        }
        let out = if row.profile.ends_with("+timed") {
            &mut timed
        } else {
            &mut step
        };
        out.push(Some(row.sim_seconds / wall));
    }
    let sim_svg = bar_chart(
        "simulator",
        "Simulated seconds per wall second, by profile (this machine)",
        &names,
        &[
            Series {
                name: "step-driven".into(),
                color: PALETTE[0],
                values: step,
            },
            Series {
                name: "time-driven".into(),
                color: PALETTE[1],
                values: timed,
            },
        ],
        "simulated s / wall s",
    );
    let runs = if quick {
        "--quick: 2 seeds a row"
    } else {
        "20 seeds a row"
    };
    let sections = [
        Section {
            title: "Flush setting and commit path".into(),
            text: format!("Time-driven oltp_read_write on 2,000 rows, one core (40 us a statement, 1 us a page), 16 clients, {runs}. seeds-disk syncs in about 1 ms; platter is a 10,000 rpm disk without a write cache, whose back-to-back log syncs cost a turn (6 ms) each. The binlog mutex is MySQL 5.1's prepare_commit_mutex: one commit and one sync at a time. seeds/004 measured 780 transactions a second under flush 0 and 182 under flush 1."),
            svg: flush_svg,
            command: "innosim bench --flush".into(),
        },
        Section {
            title: "Deadlocks".into(),
            text: "Deadlock victims per 1,000 commits at 16 clients: a commit that waits for its turn with its locks held makes others wait, and some of them deadlock (seeds/004: 44 per 1,000 under flush 1, none under flush 0).".into(),
            svg: deadlock_svg,
            command: "innosim bench --flush --json".into(),
        },
        Section {
            title: "Thread scaling".into(),
            text: "Transactions per simulated second by clients on the platter preset; seeds/002's flush-1 figures (a server with a write cache and more processors) for reference.".into(),
            svg: scaling_svg,
            command: "innosim bench --flush --latency platter".into(),
        },
        Section {
            title: "sysbench's write tests".into(),
            text: "oltp_read_write beside oltp_write_only (its writes without its eleven reads) and oltp_insert (one autocommit insert of the next id), 16 clients on seeds-disk. The shorter a transaction, the more of its time is its commit's sync under flush 1, and the more a shared sync (group commit) is worth.".into(),
            svg: tests_svg,
            command: "innosim bench --flush --latency seeds-disk".into(),
        },
        Section {
            title: "Compressed sizes per KEY_BLOCK_SIZE".into(),
            text: format!("How many times smaller than COMPACT each format's .ibd is after loading {rows_n} rows of sysbench 0.4's table, beside seeds/000's ratios at 10 million rows."),
            svg: zip_svg,
            command: format!("innosim bench --compression --rows {rows_n}"),
        },
        Section {
            title: "Fast index creation, and emptying a table".into(),
            text: format!("Simulated time of DROP INDEX and CREATE INDEX by copying the table over the same in place (fast index creation), {rows_n} rows, beside seeds/000's wall-time ratios at 10 million rows; and of emptying the table by DELETE over TRUNCATE TABLE (seeds/004's advice, which gives no figure)."),
            svg: index_svg,
            command: format!("innosim bench --index --rows {rows_n}"),
        },
        Section {
            title: "The simulator".into(),
            text: format!("Simulated seconds per wall second of {sim_seeds} seeds of every profile, on both schedulers, every seed judged by every checker (this machine's rate; compare builds side by side)."),
            svg: sim_svg,
            command: "innosim bench --sim".into(),
        },
    ];
    let html = page(
        "innosim: the seeds' tables, reproduced",
        "Each chart puts innosim's figure beside the one the seed measured on its server; the note under each says what ran.",
        &sections,
    );
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("innosim: cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    let file = out.join("index.html");
    if let Err(e) = std::fs::write(&file, html) {
        eprintln!("innosim: cannot write {}: {e}", file.display());
        return ExitCode::FAILURE;
    }
    println!("{}", file.display());
    ExitCode::SUCCESS
}

/// `innosim bench --engine`: the micro-benchmarks' phases on the engine
/// and on SQLite, in one run, side by side with their ratios; the two must
/// end holding the same rows.
fn bench_engine(
    rows: u64,
    pool_mib: usize,
    flush_setting: u8,
    json: bool,
    dir: Option<std::path::PathBuf>,
) -> ExitCode {
    let flush = match FlushAtCommit::from_setting(flush_setting) {
        Ok(f) => f,
        Err(e) => return usage(e.to_string()),
    };
    if rows == 0 || pool_mib == 0 {
        return usage("--rows and --pool-mib must be positive".into());
    }
    let opts = sim::bench::BenchOptions {
        rows,
        pool_mib,
        flush,
        dir: dir.map(|d| d.join("innosim")),
        ..Default::default()
    };
    let sqlite_opts = sim::bench::BenchOptions {
        dir: opts.dir.as_ref().map(|d| d.with_file_name("sqlite")),
        ..opts.clone()
    };
    // The rates are wall time: the stopwatch is the command line's.
    let start = std::time::Instant::now();
    let wall = || start.elapsed().as_secs_f64();
    let (ours, our_contents) = match sim::bench::run_with_contents(&opts, &wall) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (theirs, their_contents) = match sim::engine_bench::run_sqlite(&sqlite_opts, &wall) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
    };
    if our_contents != their_contents {
        eprintln!("innosim: the engine ended with (rows, sum of k) {our_contents:?} per table, SQLite with {their_contents:?}");
        return ExitCode::FAILURE;
    }
    let place = if opts.dir.is_some() {
        "real files"
    } else {
        "in memory"
    };
    if json {
        let phases: Vec<serde_json::Value> = ours
            .iter()
            .zip(&theirs)
            .map(|(a, b)| {
                serde_json::json!({
                    "phase": a.name, "ops": a.ops,
                    "innosim_per_sec": a.per_sec(), "sqlite_per_sec": b.per_sec(),
                    "innosim_over_sqlite": a.per_sec() / b.per_sec().max(1e-9),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "rows": rows, "pool_mib": pool_mib, "flush": flush.setting(), "storage": place,
                "sqlite": sim::engine_bench::sqlite_version(), "phases": phases,
            })
        );
    } else {
        println!(
            "sysbench table, {rows} rows, {pool_mib} MiB cache, flush {} (SQLite WAL, synchronous {}), {place}, one core; SQLite {}",
            flush.setting(),
            match flush {
                FlushAtCommit::Sync => "FULL",
                FlushAtCommit::Write => "NORMAL",
                FlushAtCommit::Lazy => "OFF",
            },
            sim::engine_bench::sqlite_version()
        );
        println!(
            "{:<24} {:>10} {:>14} {:>14} {:>16}",
            "phase", "ops", "innosim /s", "SQLite /s", "innosim/SQLite"
        );
        for (a, b) in ours.iter().zip(&theirs) {
            println!(
                "{:<24} {:>10} {:>14.0} {:>14.0} {:>16.2}",
                a.name,
                a.ops,
                a.per_sec(),
                b.per_sec(),
                a.per_sec() / b.per_sec().max(1e-9)
            );
        }
    }
    ExitCode::SUCCESS
}

/// Runs the flush benchmark's `points`, `seeds` each: (row, wall
/// seconds), the wall timed here (the simulation knows only its own clock).
fn run_flush_points(
    points: &[sim::bench::FlushPoint],
    seeds: u64,
) -> Vec<(sim::bench::FlushRow, f64)> {
    points
        .iter()
        .map(|point| {
            let start = std::time::Instant::now();
            let row = sim::bench::flush_row(point, 0..seeds).expect("the preset was checked");
            (row, start.elapsed().as_secs_f64())
        })
        .collect()
}

/// `innosim bench --flush`: the flush benchmark's table (or JSON), the
/// flush 0 over flush 1 ratios beside seeds/004's, and every failing
/// seed shrunk and saved.
fn bench_flush(seeds: u64, quick: bool, json: bool, latency: Option<String>) -> ExitCode {
    if seeds == 0 {
        return usage("--seeds must be positive".into());
    }
    let presets: Vec<String> = match latency {
        Some(p) => vec![p],
        None => vec!["seeds-disk".into(), "platter".into()],
    };
    for p in &presets {
        if sim::storage::faults::Latency::preset(p).is_none() {
            return usage(format!(
                "no latency preset named '{p}' (one of: {})",
                sim::storage::faults::Latency::PRESETS.join(", ")
            ));
        }
    }
    let seeds = if quick { 2 } else { seeds };
    let rows = run_flush_points(&sim::bench::flush_points(&presets, quick), seeds);
    let tps_of = |preset: &str, flush: u8, path: sim::bench::CommitPath| {
        rows.iter()
            .find(|(r, _)| {
                r.test == sim::bench::Sysbench::ReadWrite
                    && r.preset == preset
                    && r.sessions == 16
                    && r.row.flush == flush
                    && r.path == path
            })
            .map(|(r, _)| r.row.tps())
    };
    let seed_ratio = sim::bench::seed_flush_ratio();
    let mut ratios = Vec::new();
    for preset in &presets {
        for path in sim::bench::CommitPath::ALL {
            if let (Some(f0), Some(f1)) = (
                tps_of(preset, 0, sim::bench::CommitPath::Own),
                tps_of(preset, 1, path),
            ) {
                ratios.push((preset.clone(), path, f0 / f1.max(1e-9)));
            }
        }
    }
    let per_trx = |r: &sim::bench::OltpRow| r.deadlocks as f64 / r.commits.max(1) as f64;
    if json {
        let out: Vec<serde_json::Value> = rows
            .iter()
            .map(|(r, wall)| {
                let seed: Vec<serde_json::Value> = r
                    .seed_figures()
                    .iter()
                    .map(|f| {
                        serde_json::json!({
                            "source": f.source,
                            "tps": f.tps,
                            "deadlocks_per_sec": f.deadlocks_per_sec,
                            "ours_over_seed": r.row.tps() / f.tps,
                        })
                    })
                    .collect();
                serde_json::json!({
                    "preset": r.preset,
                    "test": r.test.name(),
                    "sessions": r.sessions,
                    "flush": r.row.flush,
                    "commit_path": (r.row.flush == 1).then(|| r.path.name()),
                    "seeds": r.row.seeds,
                    "commits": r.row.commits,
                    "deadlocks": r.row.deadlocks,
                    "lock_timeouts": r.row.lock_timeouts,
                    "waits": r.row.waits,
                    "log_syncs": r.row.log_syncs,
                    "sim_seconds": r.row.sim_seconds,
                    "tps_sim": r.row.tps(),
                    "deadlocks_per_sim_sec": r.row.deadlocks_per_sec(),
                    "deadlocks_per_trx": per_trx(&r.row),
                    "commits_per_log_sync": r.row.commits_per_log_sync(),
                    "wall_seconds": wall,
                    "seeds_per_sec": r.row.seeds as f64 / wall.max(1e-9),
                    "failing_seeds": r.row.failing_seeds,
                    "seed_figures": seed,
                })
            })
            .collect();
        let ratios: Vec<serde_json::Value> = ratios
            .iter()
            .map(|(p, path, x)| {
                serde_json::json!({
                    "preset": p,
                    "commit_path": path.name(),
                    "flush0_over_flush1": x,
                    "seed": seed_ratio,
                })
            })
            .collect();
        println!("{}", serde_json::json!({ "flush": out, "ratios": ratios }));
    } else {
        let cpu = sim::bench::OLTP_CPU;
        println!(
            "sysbench tests on 2,000 preloaded rows, time-driven, {} core ({} us a statement, {} us a page), {seeds} seeds a row",
            cpu.cores,
            cpu.call_ns / 1_000,
            cpu.page_ns / 1_000
        );
        println!(
            "{:<15} {:<11} {:>7} {:>5} {:<13} {:>8} {:>8} {:>12} {:>14} {:>17} {:>22} {:>24} {:>13}",
            "test",
            "preset",
            "clients",
            "flush",
            "path",
            "commits",
            "trx/s",
            "deadlocks/s",
            "deadlocks/trx",
            "commits/log sync",
            "seed trx/s",
            "ours/seed",
            "seeds/wall s"
        );
        for (r, wall) in &rows {
            let figures = r.seed_figures();
            // Every seed that measured the row, each named ("004": seeds/004).
            let tag = |f: &sim::bench::SeedFigure| {
                f.source
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("seeds/")
                    .to_string()
            };
            let (seed, vs) = if figures.is_empty() {
                ("-".to_string(), "-".to_string())
            } else {
                (
                    figures
                        .iter()
                        .map(|f| format!("{:.0} ({})", f.tps, tag(f)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    figures
                        .iter()
                        .map(|f| format!("{:.2} ({})", r.row.tps() / f.tps, tag(f)))
                        .collect::<Vec<_>>()
                        .join(", "),
                )
            };
            println!(
                "{:<15} {:<11} {:>7} {:>5} {:<13} {:>8} {:>8.1} {:>12.2} {:>14.4} {:>17.2} {:>22} {:>24} {:>13.1}",
                r.test.name(),
                r.preset,
                r.sessions,
                r.row.flush,
                if r.row.flush == 1 { r.path.name() } else { "-" },
                r.row.commits,
                r.row.tps(),
                r.row.deadlocks_per_sec(),
                per_trx(&r.row),
                r.row.commits_per_log_sync(),
                seed,
                vs,
                r.row.seeds as f64 / wall.max(1e-9)
            );
        }
        for f in sim::bench::SEED_FLUSH_FIGURES {
            println!(
                "seed figure: {}, {} threads, flush {}: {:.2} trx/s, {:.2} deadlocks/s",
                f.source, f.sessions, f.flush, f.tps, f.deadlocks_per_sec
            );
        }
        for (p, path, x) in &ratios {
            println!(
                "flush 0 over flush 1 at 16 clients, {p}, {}: {x:.2} (seeds/004: {seed_ratio:.2})",
                path.name()
            );
        }
    }
    // A failure is shrunk and saved like the fuzzer's, so that `innosim
    // replay corpus/ENTRY` runs the bench's own plan.
    let mut failed = false;
    for (r, _) in &rows {
        let profile = sim::bench::flush_profile(&r.preset, r.test, r.sessions).expect("checked");
        let flush = FlushAtCommit::from_setting(r.row.flush).expect("a setting");
        for &seed in &r.row.failing_seeds {
            failed = true;
            let plan = sim::bench::flush_plan(seed, flush, r.path, &profile);
            match shrink_and_save(&plan, 200) {
                Some((dir, _)) => eprintln!(
                    "violation: seed {seed}, {}, {} clients, flush {} ({}); reproduce: innosim replay {}",
                    r.test.name(),
                    r.sessions,
                    r.row.flush,
                    r.path.name(),
                    dir.display()
                ),
                None => eprintln!(
                    "violation: seed {seed}, flush {} did not fail again (nondeterminism)",
                    r.row.flush
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

/// `innosim script --suite DIR`: one line a test, then the totals.
fn run_suite(
    dir: &std::path::Path,
    only: &[std::path::PathBuf],
    enable_disabled: bool,
) -> ExitCode {
    use sim::script::suite;
    let dir = suite::suite_dir(dir);
    let only: Vec<String> = only
        .iter()
        .map(|p| {
            p.file_stem().map_or(p.display().to_string(), |s| {
                s.to_string_lossy().into_owned()
            })
        })
        .collect();
    let report = match suite::run_suite(&dir, &only, enable_disabled, |t| {
        println!("{}", suite::line(t))
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: cannot read the suite {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    let (pass, fail, skip, off) = report.counts();
    let (m, n) = report.statements();
    println!(
        "{} tests: {pass} passed, {fail} failed, {skip} skipped, {off} disabled; \
         {m} of {n} statements ({:.1} %) gave the recorded output",
        report.tests.len(),
        if n == 0 {
            100.0
        } else {
            100.0 * m as f64 / n as f64
        }
    );
    if fail == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `innosim script`: runs each script, compares or records its result.
fn run_scripts(files: &[std::path::PathBuf], record: bool) -> ExitCode {
    let mut failed = 0;
    for f in files {
        let result = f.with_extension("result");
        let run = match sim::script::run_file(f) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("innosim: {e}");
                failed += 1;
                continue;
            }
        };
        if let sim::script::Ending::Skipped(why) = &run.ending {
            println!("{}: skipped: {why}", f.display());
            continue;
        }
        if record {
            if let Err(e) = std::fs::write(&result, &run.output) {
                eprintln!("innosim: cannot write {}: {e}", result.display());
                failed += 1;
                continue;
            }
            println!(
                "{}: recorded ({} simulated s)",
                f.display(),
                run.elapsed_us / 1_000_000
            );
            continue;
        }
        match std::fs::read_to_string(&result) {
            Ok(want) if want == run.output => println!("{}: ok", f.display()),
            Ok(want) => {
                failed += 1;
                println!("{}: MISMATCH against {}", f.display(), result.display());
                print!("{}", sim::script::diff(&want, &run.output));
                println!(
                    "(accept the new output with: innosim script --record {})",
                    f.display()
                );
            }
            Err(e) => {
                failed += 1;
                println!(
                    "{}: no result file {} ({e}); record one with --record",
                    f.display(),
                    result.display()
                );
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn print_reply(reply: &engine::sql::Reply, vertical: bool) {
    use engine::sql::{format, Reply};
    if let Reply::Rows { columns, rows, .. } = reply {
        if !rows.is_empty() || !vertical {
            if vertical {
                print!("{}", format::vertical(columns, rows));
            } else if !rows.is_empty() {
                print!("{}", format::boxed(columns, rows));
            }
        }
    }
    println!("{}\n", format::summary(reply));
}

/// `innosim sql`.
/// `innosim serve`'s options.
#[derive(clap::Args)]
struct ServeOpts {
    /// The data directory (created, with its database, if missing).
    #[arg(long, default_value = "innosim-data", conflicts_with = "sim")]
    dir: std::path::PathBuf,
    /// Serve the simulated disk (in memory, on the real clock) instead of a
    /// directory: `SET GLOBAL innosim_crash = 'power-loss' [AFTER n]`
    /// pulls its plug, and the server recovers and serves again.
    #[arg(long)]
    sim: bool,
    /// With --sim: the seed of the disk's faults and crashes.
    #[arg(long, default_value_t = 0, requires = "sim")]
    seed: u64,
    /// With --sim: a profile whose faults the disk injects while serving
    /// (failed fsyncs, misdirected writes, lost namespace operations, bit
    /// rot; see `innosim profiles`). Without it, only crashes on command.
    #[arg(long, requires = "sim")]
    profile: Option<String>,
    /// The TCP port on 127.0.0.1 (MySQL's 3306 left free).
    #[arg(long, default_value_t = 3407)]
    port: u16,
    /// The one account's user name.
    #[arg(long, default_value = "root")]
    user: String,
    /// Its password (empty: none).
    #[arg(long, default_value = "")]
    password: String,
    /// innodb_flush_log_at_trx_commit: 0, 1 or 2.
    #[arg(long = "innodb-flush-log-at-trx-commit", default_value_t = 1)]
    flush: u8,
    /// innodb_lock_wait_timeout, seconds.
    #[arg(long = "innodb-lock-wait-timeout", default_value_t = 50)]
    lock_wait_timeout: u64,
    /// max_connections: more are refused with 1040.
    #[arg(long = "max-connections", default_value_t = 151)]
    max_connections: usize,
    /// innodb_buffer_pool_size: bytes, or with a K, M or G suffix, as
    /// MySQL reads it (16 KiB pages; at least 64 of them).
    #[arg(long = "innodb-buffer-pool-size", default_value = "4M", value_parser = parse_size)]
    buffer_pool: u64,
    /// A Unix socket to listen on as well.
    #[arg(long)]
    socket: Option<std::path::PathBuf>,
    /// Record every event the engine handles (with its clock reading and
    /// digests of its answers) and every command packet to this file;
    /// `innosim replay-served FILE` runs it again on the simulated disk.
    #[arg(long)]
    record: Option<std::path::PathBuf>,
    /// The engine's clock stands still: no background round (purge, the
    /// log's once-a-second flush) comes due and no lock wait times out, as
    /// on `innosim diff`'s in-process side; for `innosim diff` against
    /// this server.
    #[arg(long)]
    frozen_clock: bool,
}

fn serve(opts: ServeOpts) -> ExitCode {
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

fn check_dir(dir: &std::path::Path) -> ExitCode {
    if !dir.join(engine::fil::SYSTEM_FILE).is_file() {
        eprintln!(
            "innosim: {} holds no database ({} is missing)",
            dir.display(),
            engine::fil::SYSTEM_FILE
        );
        return ExitCode::from(2);
    }
    let storage = match engine::io::OsStorage::new(dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("innosim: cannot open {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    let (mut e, report) = match engine::Engine::open(
        Box::new(storage),
        Box::new(engine::io::OsClock::new()),
        sim::script::script_config(),
    ) {
        Ok(x) => x,
        Err(err) => {
            println!("recovery failed: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "recovery: from checkpoint {} to LSN {} ({}), {} mini-transactions scanned, {} records applied, \
         {} pages repaired from the doublewrite buffer, {} transactions rolled back",
        report.checkpoint_lsn,
        report.end_lsn,
        if report.log_end.is_empty() { "clean end" } else { &report.log_end },
        report.mtrs_scanned,
        report.records_applied,
        report.pages_repaired.len(),
        report.rolled_back.len()
    );
    let mut damaged = false;
    for name in e.table_names() {
        let Some((db, t)) = engine::sql::split_name(&name) else {
            continue;
        };
        if t.is_empty() {
            continue;
        }
        match e.check_table(&name) {
            Ok(r) if r.is_ok() => println!("{db}.{t}: OK"),
            Ok(r) => {
                damaged = true;
                for p in &r.problems {
                    println!("{db}.{t}: {p}");
                }
            }
            Err(err) => {
                damaged = true;
                println!("{db}.{t}: {err}");
            }
        }
    }
    match e.verify_files() {
        Ok(f) => {
            println!(
                "files: {} pages read back ({} never written, {} compressed pages decompressed; \
                 {} doublewrite slots skipped), {} problems",
                f.pages,
                f.zero_pages,
                f.compressed,
                f.doublewrite_slots,
                f.problems.len()
            );
            for p in &f.problems {
                println!("{p}");
            }
            damaged |= !f.problems.is_empty();
        }
        Err(err) => {
            damaged = true;
            println!("files: {err}");
        }
    }
    if let Err(err) = e.close() {
        println!("closing: {err}");
        damaged = true;
    }
    if damaged {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn sql_shell(execute: Option<String>, dir: Option<std::path::PathBuf>) -> ExitCode {
    use engine::sql::{Outcome, Reply, Server};
    let config = sim::script::script_config();
    // On the simulated disk the shell keeps the clock, to run it forward
    // to a blocked statement's lock wait deadline.
    let mut sim_clock = None;
    let opened = match &dir {
        Some(d) => {
            if let Err(e) = std::fs::create_dir_all(d) {
                eprintln!("innosim: cannot create {}: {e}", d.display());
                return ExitCode::FAILURE;
            }
            match engine::io::OsStorage::new(d) {
                Ok(st) => Server::open(Box::new(st), Box::new(engine::io::OsClock::new()), config),
                Err(e) => {
                    eprintln!("innosim: cannot open {}: {e}", d.display());
                    return ExitCode::FAILURE;
                }
            }
        }
        None => {
            let st = sim::storage::SimStorage::new();
            let clock = sim::clock::SimClock::new();
            st.set_clock(clock.clone());
            sim_clock = Some(clock.clone());
            Server::open(Box::new(st), Box::new(clock), config)
        }
    };
    let (mut server, _) = match opened {
        Ok(x) => x,
        Err(e) => {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
    };
    let conn = server.connect();
    let run = |server: &mut Server, sql: &str, vertical: bool| -> bool {
        let reply = match server.execute(conn, sql) {
            Outcome::Done(r) => r,
            Outcome::Blocked => {
                // One connection: nothing else can release the lock, so the
                // wait ends by its timeout. On the simulated disk the clock
                // runs to it; on real files the shell waits in wall time, as
                // a mysql client would.
                loop {
                    use engine::io::Clock;
                    match (&sim_clock, server.wait_deadline_us(conn)) {
                        (Some(c), Some(d)) if d > c.now_us() => c.set_us(d),
                        (Some(c), _) => c.advance_us(1_000_000),
                        (None, _) => std::thread::sleep(std::time::Duration::from_millis(50)),
                    }
                    let _ = server.tick();
                    if let Outcome::Done(r) = server.resume(conn) {
                        break r;
                    }
                }
            }
        };
        print_reply(&reply, vertical);
        !matches!(reply, Reply::Error(_))
    };
    if let Some(text) = execute {
        let mut ok = true;
        for (sql, vertical) in engine::sql::split::split_statements(&text) {
            ok &= run(&mut server, &sql, vertical);
        }
        let closed = server.close();
        if let Err(e) = closed {
            eprintln!("innosim: {e}");
            return ExitCode::FAILURE;
        }
        return if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let mut rl = match rustyline::DefaultEditor::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("innosim: no line editor: {e}");
            return ExitCode::FAILURE;
        }
    };
    let history = dir.as_ref().map(|d| d.join(".innosim_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!(
        "innosim SQL shell ({}). End statements with ; or \\G; quit with exit or Ctrl-D.",
        match &dir {
            Some(d) => format!("directory {}", d.display()),
            None => "simulated disk in memory; nothing is kept".into(),
        }
    );
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() { "mysql> " } else { "    -> " };
        let line = match rl.readline(prompt) {
            Ok(l) => l,
            Err(_) => break,
        };
        if buf.is_empty()
            && matches!(
                line.trim().to_ascii_lowercase().as_str(),
                "exit" | "quit" | "\\q"
            )
        {
            break;
        }
        buf.push_str(&line);
        buf.push('\n');
        let t = buf.trim_end();
        if t.ends_with(';') || t.ends_with("\\G") {
            let _ = rl.add_history_entry(buf.trim());
            for (sql, vertical) in engine::sql::split::split_statements(&buf) {
                run(&mut server, &sql, vertical);
            }
            buf.clear();
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    match server.close() {
        Ok(()) => {
            println!("Bye");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("innosim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `innosim bench --index`.
fn bench_index(rows: u64, pool_mib: usize, json: bool) -> ExitCode {
    if rows == 0 || pool_mib == 0 {
        return usage("--rows and --pool-mib must be positive".into());
    }
    let pool_pages = pool_mib * 64;
    let start = std::time::Instant::now();
    match sim::index_bench::run(rows, pool_pages, &|| start.elapsed().as_secs_f64()) {
        Ok(out) => {
            if json {
                let v: Vec<serde_json::Value> = out
                    .iter()
                    .map(|r| serde_json::json!({"statement": r.statement, "simulated_s": r.simulated_s, "bytes_written": r.bytes_written, "file_bytes_before": r.file_before, "file_bytes": r.file_bytes, "wall_s": r.wall_s}))
                    .collect();
                println!("{}", serde_json::Value::Array(v));
                return ExitCode::SUCCESS;
            }
            println!("sysbench table, {rows} rows (random k), {pool_mib} MiB pool, simulated disk: 100 us per operation, 200 MB/s, 1 ms per sync; each statement ends with a checkpoint");
            println!(
                "{:<30} {:>12} {:>16} {:>14} {:>14} {:>10}",
                "statement", "simulated s", "bytes written", ".ibd before", ".ibd after", "wall s"
            );
            for r in &out {
                println!(
                    "{:<30} {:>12.3} {:>16} {:>14} {:>14} {:>10.3}",
                    r.statement,
                    r.simulated_s,
                    r.bytes_written,
                    r.file_before,
                    r.file_bytes,
                    r.wall_s
                );
            }
            let ratio = |a: usize, b: usize| out[b].simulated_s / out[a].simulated_s.max(1e-9);
            println!("COPY / in place, simulated time: DROP INDEX {:.1}x, CREATE INDEX {:.1}x (seeds/000 at 10M rows, wall time: DROP INDEX 169x, CREATE INDEX 3.0x)", ratio(0, 2), ratio(1, 3));
            println!("DELETE / TRUNCATE, simulated time: {:.1}x (seeds/004: \"TRUNCATE TABLE is much faster than DELETE\", no figure)", ratio(5, 4));
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
struct CrashloopOpts {
    /// Real files in this directory (created if missing); the server
    /// process is killed with SIGKILL each cycle.
    #[arg(long, conflicts_with = "sim")]
    dir: Option<std::path::PathBuf>,
    /// The simulated disk, which loses power on command each cycle.
    #[arg(long)]
    sim: bool,
    /// Crash-and-restart cycles.
    #[arg(long, default_value_t = 1000)]
    cycles: u64,
    /// Commits a cycle.
    #[arg(long, default_value_t = 200)]
    commits: u64,
    /// innodb_flush_log_at_trx_commit: 0, 1 or 2.
    #[arg(long = "innodb-flush-log-at-trx-commit", default_value_t = 1)]
    flush: u8,
    /// The loopback port the server listens on.
    #[arg(long, default_value_t = 3408)]
    port: u16,
    /// Seeds the crash points (and the simulated disk).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// On real files: run `innosim check` every this many cycles.
    #[arg(long, default_value_t = 100)]
    check_every: u64,
    /// Append the server's log to this file.
    #[arg(long)]
    server_log: Option<std::path::PathBuf>,
}

fn crashloop(o: CrashloopOpts) -> ExitCode {
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

fn replay_served(file: &std::path::Path) -> ExitCode {
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

#[derive(clap::Args)]
struct DiffOpts {
    /// The other server, as mysql://user:password@host:port, the password
    /// optional (a database `diff` is dropped and made there for every
    /// scenario).
    #[arg(long)]
    server: String,
    /// Seeds to run, as A..B (B excluded).
    #[arg(long)]
    seeds: Option<String>,
    /// Run for this long (e.g. 60s, 5m) instead of a seed range.
    #[arg(long)]
    time: Option<String>,
    /// The workload profile the scenarios come from.
    #[arg(long, default_value = "default")]
    profile: String,
    /// Keep only each scenario's first N transactions.
    #[arg(long, default_value_t = 40)]
    transactions: usize,
    /// Shrink each mismatch (at most this many) to the fewest statements
    /// that still differ, and print it as a mysqltest script with both
    /// sides' answers where they part.
    #[arg(long, default_value_t = 0)]
    shrink: usize,
    /// Save each shrunk mismatch under this directory (`corpus/diff` in
    /// the repository) as PROFILE-SEED.test with the server's output as
    /// its .result (needs --shrink).
    #[arg(long)]
    save: Option<std::path::PathBuf>,
    /// Leave this later version's rule (by name, as the version
    /// differences are listed) out of those innosim's side may follow: what
    /// it explains is then a mismatch, to shrink and save as the rule's
    /// script for corpus/diff/versions.def. May be given more than once.
    #[arg(long = "without-rule")]
    without_rule: Vec<String>,
}

fn diff(o: DiffOpts) -> ExitCode {
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
