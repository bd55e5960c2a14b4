//! Benchmarks: `innosim bench` and its tables (the simulator's rates,
//! compression, the engine against SQLite, flush points, the index build).

use super::*;

/// The seeds' file sizes (seeds/000, 10M sysbench 0.4 rows), MiB: COMPACT,
/// then COMPRESSED at 8, 4 and 2 KiB.
pub(crate) const SEED_SIZES_MIB: [(&str, f64); 4] = [
    ("COMPACT", 2355.0),
    ("COMPRESSED 8K", 1229.0),
    ("COMPRESSED 4K", 592.0),
    ("COMPRESSED 2K", 324.0),
];

pub(crate) fn format_label(f: RowFormat) -> String {
    match f {
        RowFormat::Compressed { key_block_size } => format!("COMPRESSED {key_block_size}K"),
        other => other.name().to_string(),
    }
}

/// Runs `seeds` of every profile on both schedulers (step-driven, then
/// `+timed`): (row, wall seconds), the wall timed here (the simulation
/// knows only its own clock).
pub(crate) fn run_sim_rows(seeds: u64) -> Vec<(sim::bench::SimRow, f64)> {
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

pub(crate) fn bench_sim(seeds: u64, json: bool) -> ExitCode {
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

pub(crate) fn bench_compression(rows: u64, seeds: u64, quick: bool, json: bool) -> ExitCode {
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

/// `innosim bench --engine`: the micro-benchmarks' phases on the engine
/// and on SQLite, in one run, side by side with their ratios; the two must
/// end holding the same rows.
pub(crate) fn bench_engine(
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
pub(crate) fn run_flush_points(
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
pub(crate) fn bench_flush(
    seeds: u64,
    quick: bool,
    json: bool,
    latency: Option<String>,
) -> ExitCode {
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

/// `innosim bench --index`.
pub(crate) fn bench_index(rows: u64, pool_mib: usize, json: bool) -> ExitCode {
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
