//! Engine micro-benchmarks on sysbench's table shape, in memory with zero
//! latency, one core: sequential inserts, random inserts, point selects by
//! primary key and updates of the indexed column `k`. Rates are wall-clock
//! rows per second of one run; compare them with each other, not with a
//! fixed number (machines are shared and noisy).
//!
//! # What it measured
//!
//! `cargo run --release -- bench --rows 200000` on the development machine (a 2-core VM;
//! in-memory storage, zero latency, one core used, flush 1, 1,000 rows per transaction while
//! loading, rows made outside the timed calls):
//!
//! | phase | rows/s, median of 5 runs (range) |
//! | --- | --- |
//! | sequential insert | ~226,000 (145,000 - 245,000) |
//! | point select by primary key | ~510,000 (360,000 - 590,000, 10 runs) |
//! | update of k, autocommit | ~55,000 (37,000 - 62,000) |
//! | random insert | ~143,000 (121,000 - 154,000) |
//!
//! These are single runs on a shared machine (they varied by up to 30% between runs): compare
//! them with each other. With real files (`--dir`, flush 2), one million rows in a 64 MiB
//! buffer pool peak at about 80 MiB RSS.
//!
//! The other benches' figures are beside their code: `bench --engine` in
//! [`crate::engine_bench`], `bench --index` in [`crate::index_bench`], `bench --compression` in
//! [`crate::zip_bench`], and `bench --oltp`, `bench --flush` and the write tests, beside the
//! seeds' figures, in [`crate::report`]; `bench --sim`'s rates are [`crate::campaign`]'s.

use engine::io::{ManualClock, MemStorage};
use engine::{Config, Engine, FlushAtCommit, Request, Response, RowFormat, Step, TableDef, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Benchmark settings.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Rows loaded.
    pub rows: u64,
    /// Buffer pool in MiB.
    pub pool_mib: usize,
    /// innodb_flush_log_at_trx_commit.
    pub flush: FlushAtCommit,
    /// Rows per transaction when loading.
    pub batch: u64,
    /// Row format.
    pub row_format: RowFormat,
    /// Seed of the random keys.
    pub seed: u64,
    /// Run on this real directory (OsStorage) instead of in memory, so that
    /// memory use is the engine's own and not the simulated disk's.
    pub dir: Option<std::path::PathBuf>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            rows: 200_000,
            pool_mib: 64,
            flush: FlushAtCommit::Sync,
            batch: 1000,
            row_format: RowFormat::Compact,
            seed: 1,
            dir: None,
        }
    }
}

/// One measured phase.
#[derive(Debug, Clone)]
pub struct Phase {
    /// What was measured.
    pub name: &'static str,
    /// Operations done.
    pub ops: u64,
    /// Wall seconds.
    pub seconds: f64,
}

impl Phase {
    /// Operations per wall second.
    pub fn per_sec(&self) -> f64 {
        self.ops as f64 / self.seconds.max(1e-9)
    }
}

/// The sysbench table the benchmark loads.
pub fn sbtest_def(fmt: RowFormat) -> TableDef {
    crate::tables::sbtest("sbtest1", fmt)
}

pub(crate) fn sb_row(rng: &mut ChaCha8Rng, id: u64, rows: u64) -> Vec<Value> {
    // sysbench's c and pad: groups of digits separated by '-'.
    let mut c = Vec::with_capacity(119);
    for g in 0..10 {
        if g > 0 {
            c.push(b'-');
        }
        for _ in 0..11 {
            c.push(b'0' + rng.gen_range(0..10u8));
        }
    }
    let mut pad = Vec::with_capacity(59);
    for g in 0..5 {
        if g > 0 {
            pad.push(b'-');
        }
        for _ in 0..11 {
            pad.push(b'0' + rng.gen_range(0..10u8));
        }
    }
    vec![
        Value::UInt(id),
        Value::UInt(rng.gen_range(1..=rows.max(1))),
        Value::Bytes(c),
        Value::Bytes(pad),
    ]
}

/// The response of a step that must not wait (one session).
pub(crate) fn ok(step: engine::Result<Step>) -> engine::Result<Response> {
    match step? {
        Step::Done(r) => Ok(r),
        Step::Waiting => Err(engine::Error::InvalidArgument(
            "a single-session benchmark waited for a lock".into(),
        )),
    }
}

fn storage(opts: &BenchOptions, sub: &str) -> engine::Result<Box<dyn engine::io::Storage>> {
    Ok(match &opts.dir {
        None => Box::new(MemStorage::new()),
        Some(d) => {
            let path = d.join(sub);
            if path.exists() {
                std::fs::remove_dir_all(&path).map_err(|e| engine::Error::io("remove", sub, e))?;
            }
            Box::new(
                engine::io::OsStorage::new(path)
                    .map_err(|e| engine::Error::io("create", sub, e))?,
            )
        }
    })
}

/// Wall seconds since an origin the caller chose. The micro-benchmarks'
/// rates are wall time, which enters this crate only through such a
/// function: the command line passes a real stopwatch, tests a counting
/// one (the simulations themselves know only their own clocks).
pub type Wall<'a> = &'a dyn Fn() -> f64;

/// Inserts rows with these ids, `opts.batch` per transaction, and returns
/// the seconds spent in the engine (the rows are made outside the timing).
fn load(
    e: &mut Engine,
    s: engine::SessionId,
    table: &str,
    ids: &[u64],
    opts: &BenchOptions,
    rng: &mut ChaCha8Rng,
    wall: Wall<'_>,
) -> engine::Result<f64> {
    let mut seconds = 0.0;
    for chunk in ids.chunks(opts.batch.max(1) as usize) {
        let rows: Vec<Request> = chunk
            .iter()
            .map(|&id| Request::Insert {
                table: table.to_string(),
                row: sb_row(rng, id, opts.rows),
            })
            .collect();
        let t0 = wall();
        ok(e.execute(s, Request::Begin))?;
        for r in rows {
            ok(e.execute(s, r))?;
        }
        ok(e.execute(s, Request::Commit))?;
        seconds += wall() - t0;
    }
    Ok(seconds)
}

/// Runs the benchmark phases.
pub fn run(opts: &BenchOptions, wall: Wall<'_>) -> engine::Result<Vec<Phase>> {
    run_with_contents(opts, wall).map(|(phases, _)| phases)
}

/// A table's row count and sum of `k`, by a full scan (not timed).
fn contents(e: &mut Engine, s: engine::SessionId, table: &str) -> engine::Result<(u64, u64)> {
    let Response::Rows(rows) = ok(e.execute(s, Request::scan_all(table)))? else {
        return Err(engine::Error::InvalidArgument(
            "a scan answered no rows".into(),
        ));
    };
    let k = rows
        .iter()
        .map(|r| match r.get(1) {
            Some(Value::UInt(k)) => *k,
            _ => 0,
        })
        .sum();
    Ok((rows.len() as u64, k))
}

/// [`run`], and what the two tables hold at the end: each one's row count
/// and sum of `k` (SQLite's must be the same: [`crate::engine_bench`]).
pub fn run_with_contents(
    opts: &BenchOptions,
    wall: Wall<'_>,
) -> engine::Result<(Vec<Phase>, crate::engine_bench::Contents)> {
    let mut held = Vec::new();
    let mut phases = Vec::new();
    let config = Config {
        buffer_pool_pages: opts.pool_mib * 64,
        flush_at_commit: opts.flush,
        ..Config::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let table = "sbtest1".to_string();

    // Sequential inserts.
    let (mut e, _) = Engine::open(
        storage(opts, "sequential")?,
        Box::new(Arc::new(ManualClock::new())),
        config.clone(),
    )?;
    e.create_table(sbtest_def(opts.row_format))?;
    let s = e.session();
    let ids: Vec<u64> = (1..=opts.rows).collect();
    let seconds = load(&mut e, s, &table, &ids, opts, &mut rng, wall)?;
    phases.push(Phase {
        name: "sequential insert",
        ops: opts.rows,
        seconds,
    });

    // Point selects by primary key.
    let n_sel = opts.rows.min(1_000_000);
    let t0 = wall();
    for _ in 0..n_sel {
        let id = rng.gen_range(1..=opts.rows);
        let r = ok(e.execute(
            s,
            Request::Get {
                table: table.clone(),
                key: vec![Value::UInt(id)],
            },
        ))?;
        debug_assert!(matches!(r, Response::Row(Some(_))));
    }
    phases.push(Phase {
        name: "point select",
        ops: n_sel,
        seconds: wall() - t0,
    });

    // Updates of k (the indexed column), autocommit like sysbench's
    // oltp_update_index.
    let n_upd = (opts.rows / 4).max(1);
    let t0 = wall();
    for _ in 0..n_upd {
        let id = rng.gen_range(1..=opts.rows);
        let k = rng.gen_range(1..=opts.rows);
        ok(e.execute(
            s,
            Request::Update {
                table: table.clone(),
                key: vec![Value::UInt(id)],
                set: vec![("k".into(), Value::UInt(k))],
            },
        ))?;
    }
    phases.push(Phase {
        name: "update k (autocommit)",
        ops: n_upd,
        seconds: wall() - t0,
    });
    held.push(contents(&mut e, s, &table)?);
    e.close()?;

    // Random inserts into a fresh table.
    let (mut e, _) = Engine::open(
        storage(opts, "random")?,
        Box::new(Arc::new(ManualClock::new())),
        config,
    )?;
    e.create_table(sbtest_def(opts.row_format))?;
    let s = e.session();
    let mut ids: Vec<u64> = (1..=opts.rows).collect();
    for i in (1..ids.len()).rev() {
        let j = rng.gen_range(0..=i);
        ids.swap(i, j);
    }
    let seconds = load(&mut e, s, &table, &ids, opts, &mut rng, wall)?;
    phases.push(Phase {
        name: "random insert",
        ops: opts.rows,
        seconds,
    });
    held.push(contents(&mut e, s, &table)?);
    e.close()?;
    Ok((phases, held))
}

/// The processors of the lock benchmark's server when time drives it.
pub const OLTP_CPU: crate::profile::CpuModel = crate::profile::CpuModel {
    cores: 1,
    call_ns: 40_000,
    page_ns: 1_000,
    compress_ns_per_kib: 0,
    decompress_ns_per_kib: 0,
};

/// The lock benchmark's workload: the `oltp` profile (sysbench's
/// oltp_read_write on 2000 preloaded rows) with 16 sessions, a 1 ms fsync,
/// at most 100 us between two statements (a client's round trip on one
/// host; the fuzzing profiles' 2 ms would make the clients, not the
/// engine, set the rate), a buffer pool of 512 pages that holds the table
/// (the seeds' servers held theirs: 12 GB in seeds/002), and no fault but
/// the power loss at the run's end, so that the rates are those of a
/// steady workload (a misdirected write or a flipped bit that stops the
/// engine early would cut a run's simulated time short). Every run is
/// still judged by every checker, and the power loss checks what each
/// flush setting promised.
/// With `timed`, time drives the scheduler and the server has
/// [`OLTP_CPU`]'s processor.
pub fn oltp_bench_profile(timed: bool) -> crate::profile::Profile {
    let base = crate::profile::Profile::named("oltp").expect("oltp is a profile");
    crate::profile::Profile {
        name: if timed {
            "oltp-bench+timed"
        } else {
            "oltp-bench"
        }
        .into(),
        timed,
        cpu: if timed { OLTP_CPU } else { base.cpu },
        p_long_pause: 0.0,
        faults: vec![crate::profile::FaultKind::PowerLoss],
        pool_pages: (512, 512),
        sessions_range: Some((16, 16)),
        sessions: 16,
        sync_latency_us: 1_000,
        think_us: 100,
        crashes: 0,
        ..base
    }
}

/// The plan the lock benchmark runs for `seed` on a bench profile (a
/// latency preset's): under one flush setting, with or without group
/// commit. A failing one saved to the corpus replays as it ran.
pub fn oltp_plan_of(
    seed: u64,
    flush: FlushAtCommit,
    group_commit: bool,
    profile: &crate::profile::Profile,
) -> crate::plan::Plan {
    let path = if group_commit {
        CommitPath::Group
    } else {
        CommitPath::Own
    };
    flush_plan(seed, flush, path, profile)
}

/// How a commit under flush 1 reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitPath {
    /// Each commit syncs the log itself (a later commit whose record an
    /// earlier sync covered syncs nothing).
    Own,
    /// Group commit: a commit waits for a sync shared with every commit
    /// written before it starts, its locks held until then (as with the
    /// plugin's two-phase commit from 1.0.4: `Plan::group_commit`).
    Group,
    /// MySQL 5.1's built-in InnoDB with the binary log: the
    /// `prepare_commit_mutex` queue, one commit and one sync at a time,
    /// locks held until a commit's turn (`Plan::commit_mutex`).
    BinlogMutex,
}

impl CommitPath {
    /// Every path, in the table's order.
    pub const ALL: [CommitPath; 3] = [CommitPath::Own, CommitPath::Group, CommitPath::BinlogMutex];

    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            CommitPath::Own => "own sync",
            CommitPath::Group => "group commit",
            CommitPath::BinlogMutex => "binlog mutex",
        }
    }
}

/// The plan the flush benchmark runs for `seed`: `profile`'s plan under
/// one flush setting and commit path (which matters under flush 1 only).
pub fn flush_plan(
    seed: u64,
    flush: FlushAtCommit,
    path: CommitPath,
    profile: &crate::profile::Profile,
) -> crate::plan::Plan {
    let mut plan = crate::plan::Plan::generate(seed, profile, Some(flush), None);
    // MySQL 5.1's default innodb_log_file_size (seeds/004 changed only the
    // flush setting): a run's redo fits, so no commit waits for a
    // checkpoint's flush as with the fuzzing profiles' small logs.
    plan.log_file_kib = 5 * 1024;
    plan.group_commit = path == CommitPath::Group;
    plan.commit_mutex = path == CommitPath::BinlogMutex;
    plan
}

/// The sysbench tests the flush benchmark runs (sysbench 1.0's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sysbench {
    /// oltp_read_write: ten point selects, a range, two updates, a delete
    /// and an insert a transaction (seeds/002 and seeds/004 ran its
    /// ancestor, 0.4's OLTP `complex` mode).
    ReadWrite,
    /// oltp_write_only: the same transaction without its reads.
    WriteOnly,
    /// oltp_insert: one autocommit insert of the next id a transaction.
    Insert,
}

impl Sysbench {
    /// Every test, in the table's order.
    pub const ALL: [Sysbench; 3] = [Sysbench::ReadWrite, Sysbench::WriteOnly, Sysbench::Insert];

    /// Its name in tables and JSON: sysbench's.
    pub fn name(self) -> &'static str {
        match self {
            Sysbench::ReadWrite => "oltp_read_write",
            Sysbench::WriteOnly => "oltp_write_only",
            Sysbench::Insert => "oltp_insert",
        }
    }

    /// The plans' shape for it.
    pub fn shape(self) -> crate::profile::Shape {
        match self {
            Sysbench::ReadWrite => crate::profile::Shape::Oltp,
            Sysbench::WriteOnly => crate::profile::Shape::OltpWriteOnly,
            Sysbench::Insert => crate::profile::Shape::OltpInsert,
        }
    }

    /// Transactions a run makes: about as many statements a run as
    /// oltp_read_write's 150 transactions of 16, but at least 600
    /// commits where its transactions are short.
    pub fn transactions(self) -> usize {
        match self {
            Sysbench::ReadWrite => 150,
            Sysbench::WriteOnly | Sysbench::Insert => 600,
        }
    }

    /// The clients it runs at: seeds/002's 4, 8 and 16 threads and one
    /// for oltp_read_write, 1, 4 and 16 for the others; 1 and 16 with
    /// `quick`.
    pub fn threads(self, quick: bool) -> &'static [usize] {
        match (quick, self) {
            (true, _) => &[1, 16],
            (false, Sysbench::ReadWrite) => &[1, 4, 8, 16],
            (false, _) => &[1, 4, 16],
        }
    }
}

/// The time-driven bench profile on a latency preset running `test` with
/// `sessions` clients. `None` for an unknown preset.
pub fn flush_profile(
    preset: &str,
    test: Sysbench,
    sessions: usize,
) -> Option<crate::profile::Profile> {
    let base = oltp_bench_profile_on(preset)?;
    let name = match test {
        Sysbench::ReadWrite => format!("{}:{sessions}", base.name),
        other => format!("{}:{}:{sessions}", base.name, other.name()),
    };
    Some(crate::profile::Profile {
        name,
        shape: test.shape(),
        transactions: test.transactions(),
        sessions_range: Some((sessions, sessions)),
        sessions,
        ..base
    })
}

/// One row the flush benchmark runs: a test on a preset with some clients,
/// under a flush setting and commit path.
#[derive(Debug, Clone, PartialEq)]
pub struct FlushPoint {
    /// The latency preset.
    pub preset: String,
    /// The sysbench test.
    pub test: Sysbench,
    /// Clients.
    pub sessions: usize,
    /// innodb_flush_log_at_trx_commit.
    pub flush: FlushAtCommit,
    /// The commit path (matters under flush 1 only).
    pub path: CommitPath,
}

/// Every row of the flush benchmark on `presets`, in the table's order:
/// each test at its [`Sysbench::threads`], each under every one of
/// [`flush_settings`].
pub fn flush_points(presets: &[String], quick: bool) -> Vec<FlushPoint> {
    let mut v = Vec::new();
    for test in Sysbench::ALL {
        for preset in presets {
            for &sessions in test.threads(quick) {
                for (flush, path) in flush_settings() {
                    v.push(FlushPoint {
                        preset: preset.clone(),
                        test,
                        sessions,
                        flush,
                        path,
                    });
                }
            }
        }
    }
    v
}

/// A figure a seed measured with sysbench's OLTP test (0.4's `complex`
/// mode, oltp_read_write's ancestor).
#[derive(Debug, Clone, Copy)]
pub struct SeedFigure {
    /// The seed and its server.
    pub source: &'static str,
    /// sysbench's threads.
    pub sessions: usize,
    /// innodb_flush_log_at_trx_commit.
    pub flush: u8,
    /// Transactions per second.
    pub tps: f64,
    /// Deadlocks per second.
    pub deadlocks_per_sec: f64,
}

/// The seeds' OLTP figures by flush setting and threads.
pub const SEED_FLUSH_FIGURES: [SeedFigure; 5] = [
    SeedFigure {
        source: "seeds/004 (MySQL 5.x, 500,000 rows)",
        sessions: 16,
        flush: 1,
        tps: 181.90,
        deadlocks_per_sec: 8.04,
    },
    SeedFigure {
        source: "seeds/004 (MySQL 5.x, 500,000 rows)",
        sessions: 16,
        flush: 0,
        tps: 780.35,
        deadlocks_per_sec: 0.0,
    },
    SeedFigure {
        source: "seeds/002 (5.1.24-rc + Plugin 1.0.0, 12 GB pool, 1,000,000 rows)",
        sessions: 4,
        flush: 1,
        tps: 1189.56,
        deadlocks_per_sec: 0.0,
    },
    SeedFigure {
        source: "seeds/002 (5.1.24-rc + Plugin 1.0.0, 12 GB pool, 1,000,000 rows)",
        sessions: 8,
        flush: 1,
        tps: 1689.60,
        deadlocks_per_sec: 0.0,
    },
    SeedFigure {
        source: "seeds/002 (5.1.24-rc + Plugin 1.0.0, 12 GB pool, 1,000,000 rows)",
        sessions: 16,
        flush: 1,
        tps: 1401.51,
        deadlocks_per_sec: 0.0,
    },
];

/// seeds/004's flush 0 over flush 1 transactions per second at 16
/// threads: the ratio `bench --flush` is judged by.
pub fn seed_flush_ratio() -> f64 {
    let tps = |flush| {
        seed_figure(16, flush)
            .iter()
            .find(|f| f.source.starts_with("seeds/004"))
            .map_or(f64::NAN, |f| f.tps)
    };
    tps(0) / tps(1)
}

/// The seeds' figure for `sessions` threads under `flush`, if one measured it.
pub fn seed_figure(sessions: usize, flush: u8) -> Vec<SeedFigure> {
    SEED_FLUSH_FIGURES
        .iter()
        .filter(|f| f.sessions == sessions && f.flush == flush)
        .copied()
        .collect()
}

/// One row of the flush benchmark.
#[derive(Debug, Clone)]
pub struct FlushRow {
    /// The latency preset.
    pub preset: String,
    /// The sysbench test.
    pub test: Sysbench,
    /// Clients.
    pub sessions: usize,
    /// The commit path (flush 1; `Own` otherwise).
    pub path: CommitPath,
    /// What ran.
    pub row: OltpRow,
}

/// The settings the flush benchmark runs at each preset and thread count:
/// flush 0 and 2, and flush 1 on each commit path.
pub fn flush_settings() -> Vec<(FlushAtCommit, CommitPath)> {
    let mut v = vec![(FlushAtCommit::Lazy, CommitPath::Own)];
    v.extend(CommitPath::ALL.map(|p| (FlushAtCommit::Sync, p)));
    v.push((FlushAtCommit::Write, CommitPath::Own));
    v
}

/// Runs one row of the flush benchmark: `seeds` of [`flush_profile`].
/// `None` for an unknown preset.
pub fn flush_row(point: &FlushPoint, seeds: std::ops::Range<u64>) -> Option<FlushRow> {
    let profile = flush_profile(&point.preset, point.test, point.sessions)?;
    let row = run_rows(seeds, point.flush, point.path, &profile);
    Some(FlushRow {
        preset: point.preset.clone(),
        test: point.test,
        sessions: point.sessions,
        path: point.path,
        row,
    })
}

impl FlushRow {
    /// The seeds' figures for this row: only oltp_read_write's (their
    /// OLTP runs), at its clients and flush setting.
    pub fn seed_figures(&self) -> Vec<SeedFigure> {
        if self.test == Sysbench::ReadWrite {
            seed_figure(self.sessions, self.row.flush)
        } else {
            Vec::new()
        }
    }
}

/// The time-driven bench profile on a latency preset
/// ([`crate::storage::faults::Latency::preset`]): every storage operation
/// costs, a sync its preset's. `None` for an unknown preset.
pub fn oltp_bench_profile_on(preset: &str) -> Option<crate::profile::Profile> {
    let latency = crate::storage::faults::Latency::preset(preset)?;
    let base = oltp_bench_profile(true);
    Some(crate::profile::Profile {
        name: format!("{}:{preset}", base.name),
        sync_latency_us: latency.mean_sync_us() as u64,
        latency: Some(latency),
        ..base
    })
}

/// What the lock benchmark measured for one flush setting, in simulated
/// time (the caller times the wall).
#[derive(Debug, Clone, Default)]
pub struct OltpRow {
    /// innodb_flush_log_at_trx_commit.
    pub flush: u8,
    /// Group commit (flush 1 only): a commit waits for a sync it shares.
    pub group_commit: bool,
    /// Seeds run.
    pub seeds: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Deadlock victims (1213).
    pub deadlocks: u64,
    /// Lock wait timeouts (1205).
    pub lock_timeouts: u64,
    /// Statements that waited for a lock.
    pub waits: u64,
    /// Syncs of the redo log during the workloads.
    pub log_syncs: u64,
    /// Page compressions during the workloads.
    pub zip_compress_ops: u64,
    /// Simulated seconds of workload (to the last statement).
    pub sim_seconds: f64,
    /// Seeds whose run had a violation (a correct engine has none).
    pub failing_seeds: Vec<u64>,
}

impl OltpRow {
    /// Commits per simulated second.
    pub fn tps(&self) -> f64 {
        self.commits as f64 / self.sim_seconds.max(1e-9)
    }

    /// Commits per sync of the redo log (group commit makes it above 1).
    pub fn commits_per_log_sync(&self) -> f64 {
        self.commits as f64 / self.log_syncs.max(1) as f64
    }

    /// Deadlocks per simulated second.
    pub fn deadlocks_per_sec(&self) -> f64 {
        self.deadlocks as f64 / self.sim_seconds.max(1e-9)
    }
}

/// Runs [`oltp_plan_of`] of [`oltp_bench_profile`] for each of `seeds`.
pub fn oltp(
    seeds: std::ops::Range<u64>,
    flush: FlushAtCommit,
    group_commit: bool,
    timed: bool,
) -> OltpRow {
    oltp_of(seeds, flush, group_commit, &oltp_bench_profile(timed))
}

/// [`oltp`] on another bench profile (a latency preset's:
/// [`oltp_bench_profile_on`]).
pub fn oltp_of(
    seeds: std::ops::Range<u64>,
    flush: FlushAtCommit,
    group_commit: bool,
    profile: &crate::profile::Profile,
) -> OltpRow {
    let path = if group_commit {
        CommitPath::Group
    } else {
        CommitPath::Own
    };
    run_rows(seeds, flush, path, profile)
}

fn run_rows(
    seeds: std::ops::Range<u64>,
    flush: FlushAtCommit,
    path: CommitPath,
    profile: &crate::profile::Profile,
) -> OltpRow {
    run_plans(seeds, flush, path, |seed| {
        flush_plan(seed, flush, path, profile)
    })
}

/// Runs the plan `plan_of` gives for each of `seeds` (all under `flush`
/// on `path`) and adds up what they did.
fn run_plans(
    seeds: std::ops::Range<u64>,
    flush: FlushAtCommit,
    path: CommitPath,
    plan_of: impl Fn(u64) -> crate::plan::Plan,
) -> OltpRow {
    let mut row = OltpRow {
        flush: flush.setting(),
        group_commit: path == CommitPath::Group,
        ..OltpRow::default()
    };
    let mut sim_us = 0u64;
    for seed in seeds {
        let plan = plan_of(seed);
        let o = crate::runner::execute(&plan, false).expect("the bench profile is valid");
        row.seeds += 1;
        row.commits += o.stats.commits;
        row.deadlocks += o.stats.deadlocks;
        row.lock_timeouts += o.stats.lock_timeouts;
        row.log_syncs += o.stats.workload_log_syncs;
        row.zip_compress_ops += o.stats.workload_zip_compress_ops;
        row.waits += o.stats.waits - o.stats.commit_waits;
        sim_us += o.stats.workload_us;
        if !o.violations.is_empty() {
            row.failing_seeds.push(seed);
        }
    }
    row.sim_seconds = sim_us as f64 / 1e6;
    row
}

/// The processors of the compression benchmark's server: [`OLTP_CPU`]'s,
/// and seeds/003's own price of a page compression, from its INNODB_CMP
/// after loading the table into KEY_BLOCK_SIZE=8 on one thread (12 s of
/// COMPRESS_TIME over 44,574 COMPRESS_OPS: 269 us an 8 KiB page, 33.6 us
/// a KiB). A decompression costs what the same seed's INNODB_CMP after
/// its OLTP runs says relative to a compression (8 KiB: 4 s over 19,513
/// UNCOMPRESS_OPS against 337 s over 21,740 COMPRESS_OPS, a 75th of one;
/// its absolute times there are inflated by 512 threads on few cores).
pub const ZIP_OLTP_CPU: crate::profile::CpuModel = crate::profile::CpuModel {
    cores: 1,
    call_ns: OLTP_CPU.call_ns,
    page_ns: OLTP_CPU.page_ns,
    compress_ns_per_kib: 33_600,
    decompress_ns_per_kib: 444,
};

/// seeds/003's sysbench 0.4 OLTP runs on a 500,000-row table of CHAR
/// columns held in a 500 MB buffer pool, by threads: transactions per
/// second on COMPACT and after `ALTER TABLE ... ROW_FORMAT=COMPRESSED
/// KEY_BLOCK_SIZE=8`.
pub const SEED_ZIP_TPS: [(usize, f64, f64); 10] = [
    (1, 256.0, 236.0),
    (2, 471.0, 418.0),
    (4, 457.0, 401.0),
    (8, 439.0, 413.0),
    (16, 436.0, 404.0),
    (32, 386.0, 385.0),
    (64, 376.0, 380.0),
    (128, 356.0, 350.0),
    (256, 337.0, 330.0),
    (512, 313.0, 293.0),
];

/// Rows the compression benchmark's OLTP runs preload (and pick from):
/// enough that 512 clients do not spend their time in deadlocks, as
/// seeds/003's 500,000 did not.
pub const ZIP_OLTP_ROWS: u64 = 20_000;

/// Transactions a compression benchmark run makes (at least two a
/// client): enough that its pages' modification logs fill and are
/// recompressed again and again, as in a steady load.
pub const ZIP_OLTP_TRANSACTIONS: usize = 3_000;

/// The compression benchmark's OLTP profile with `sessions` clients: the
/// flush benchmark's on the `memory` preset (no I/O costs anything: the
/// table is in the pool and syncs are free), [`ZIP_OLTP_CPU`]'s processor,
/// [`ZIP_OLTP_ROWS`] rows, and at least two transactions a client.
pub fn zip_oltp_profile(sessions: usize) -> crate::profile::Profile {
    let base = flush_profile("memory", Sysbench::ReadWrite, sessions).expect("memory is a preset");
    crate::profile::Profile {
        name: format!("zip-{}", base.name),
        cpu: ZIP_OLTP_CPU,
        key_space: ZIP_OLTP_ROWS,
        preload: ZIP_OLTP_ROWS,
        transactions: ZIP_OLTP_TRANSACTIONS.max(2 * sessions),
        ..base
    }
}

/// The row formats the compression benchmark's OLTP runs compare, as
/// plans name them.
pub const ZIP_OLTP_FORMATS: [&str; 2] = ["COMPACT", "COMPRESSED-8"];

/// Runs `seeds` of [`zip_oltp_profile`] with the OLTP table (`sb`) in
/// `format` (a plan's name: [`ZIP_OLTP_FORMATS`]), under flush 1 (the
/// default; free on the memory preset).
pub fn zip_oltp_row(format: &str, sessions: usize, seeds: std::ops::Range<u64>) -> OltpRow {
    let profile = zip_oltp_profile(sessions);
    let (flush, path) = (FlushAtCommit::Sync, CommitPath::Own);
    run_plans(seeds, flush, path, |seed| {
        let mut plan = flush_plan(seed, flush, path, &profile);
        plan.row_formats[0] = format.to_string();
        plan
    })
}

/// What the simulator did on one profile: [`sim_rates`]. The wall time is
/// the caller's to take (the simulator knows only its own clock).
#[derive(Debug, Clone, Default)]
pub struct SimRow {
    /// The profile's name.
    pub profile: String,
    /// Seeds run (every one judged by every checker).
    pub seeds: u64,
    /// Seeds with a violation (a correct engine has none).
    pub failing: u64,
    /// Simulated seconds of the runs, the final crash and recovery
    /// included.
    pub sim_seconds: f64,
}

/// Runs `seeds` of `profile` on one core (`innosim bench --sim`, which
/// times the call: seeds per wall second, simulated seconds per wall
/// second). Compare builds side by side in one sitting.
pub fn sim_rates(profile: &crate::profile::Profile, seeds: std::ops::Range<u64>) -> SimRow {
    let mut row = SimRow {
        profile: profile.name.clone(),
        ..SimRow::default()
    };
    let opts = crate::runner::RunOptions::default();
    for seed in seeds {
        let o = crate::runner::run(seed, profile, &opts).expect("a named profile is valid");
        row.seeds += 1;
        row.failing += u64::from(!o.violations.is_empty());
        row.sim_seconds += o.stats.sim_us as f64 / 1e6;
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_oltp_insert_client_syncs_the_log_once_a_commit_under_flush_1() {
        // Every autocommit insert commits and, with nobody to share a sync
        // with, syncs the log itself; a run where some of them never ran
        // (their isolation level's SET taken for the statement) synced
        // half as often as it counted commits.
        let point = FlushPoint {
            preset: "seeds-disk".into(),
            test: Sysbench::Insert,
            sessions: 1,
            flush: FlushAtCommit::Sync,
            path: CommitPath::Group,
        };
        let r = flush_row(&point, 0..2).expect("a preset");
        assert!(r.row.failing_seeds.is_empty(), "{r:?}");
        assert_eq!(r.row.commits, 2 * Sysbench::Insert.transactions() as u64);
        // (The background's once-a-second flush may add one a second.)
        let extra = r.row.log_syncs.checked_sub(r.row.commits);
        assert!(
            extra.is_some_and(|x| x as f64 <= r.row.sim_seconds + 2.0),
            "{r:?}"
        );
        // With 16 clients group commit shares the syncs.
        let r = flush_row(
            &FlushPoint {
                sessions: 16,
                ..point
            },
            0..2,
        )
        .expect("a preset");
        assert!(r.row.failing_seeds.is_empty(), "{r:?}");
        assert!(r.row.commits_per_log_sync() > 2.0, "{r:?}");
    }

    /// seeds/003's finding on the engine's own page compressions: sysbench
    /// OLTP in memory on COMPRESSED 8K runs within a quarter of COMPACT's
    /// transactions/s, slower by what its recompressions cost at the
    /// seed's price. A change that recompressed on every row change, or
    /// never, would break one bound or the other.
    #[test]
    fn compressed_oltp_in_memory_runs_within_a_quarter_of_compact() {
        let [compact, zip] = ZIP_OLTP_FORMATS.map(|f| zip_oltp_row(f, 4, 0..1));
        assert!(compact.failing_seeds.is_empty() && zip.failing_seeds.is_empty());
        assert_eq!(compact.zip_compress_ops, 0);
        let per_trx = zip.zip_compress_ops as f64 / zip.commits as f64;
        assert!(
            (0.05..1.0).contains(&per_trx),
            "{per_trx} compressions a transaction"
        );
        let ratio = zip.tps() / compact.tps();
        assert!(
            (0.75..1.0).contains(&ratio),
            "COMPRESSED 8K at {ratio} of COMPACT"
        );
    }
}
