//! `innosim report`: the seeds' tables measured again, written as a page.

use super::*;

/// `innosim report`: runs the benches small or full and writes their
/// charts, beside the seeds' figures, to `out/index.html`.
pub(crate) fn report(out: &std::path::Path, quick: bool) -> ExitCode {
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
