//! The `innosim` command line.

use clap::{Parser, Subcommand, ValueEnum};
use engine::{FlushAtCommit, RowFormat};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "innosim", version, about = "A crash-recovery and concurrency testbed around a Rust re-implementation of the InnoDB Plugin 1.0 storage engine")]
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
    /// The planted bugs (canaries) the checkers must catch, one per line;
    /// `lying-fsync` is the simulated disk's negative control.
    Canaries,
    /// Engine micro-benchmarks on sysbench's table, in memory, one core.
    Bench {
        /// Rows to load.
        #[arg(long, default_value_t = 200_000)]
        rows: u64,
        /// Buffer pool size in MiB.
        #[arg(long, default_value_t = 64)]
        pool_mib: usize,
        /// innodb_flush_log_at_trx_commit: 0, 1 or 2.
        #[arg(long, default_value_t = 1)]
        flush: u8,
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

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Canaries => {
            for c in engine::Canary::ALL {
                println!("{c}");
            }
            println!("lying-fsync");
            ExitCode::SUCCESS
        }
        Command::Bench { rows, pool_mib, flush, row_format, json, dir } => {
            let flush = match FlushAtCommit::from_setting(flush) {
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
            match sim::bench::run(&opts) {
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
                            println!("{:<24} {:>10} ops {:>8.3} s {:>12.0} /s", p.name, p.ops, p.seconds, p.per_sec());
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
