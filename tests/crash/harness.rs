//! The crash tests' harness: the post-setup disk copied into each run, the
//! workload runner that records what was acknowledged and how far the log
//! got, the crash kinds, the oracle's bounds, and the judge of a recovered
//! database.

use crate::common::{docs, done, read_db, row_to_model, sbtest};
use crate::workload::{
    a_row, b_row, insert, model_key, statement_effect, Txn, STATEMENT_GAP_US, TABLES, TXN_GAP_US,
};
use engine::io::Storage;
use engine::redo::LogConfig;
use engine::{
    Config, Engine, Error, FlushAtCommit, RangeBound, RecoveryReport, Request, Response, RowFormat,
    Step, Value,
};
use models::{CommitHistory, Db, ModelValue, RecoveryVerdict};
use sim::clock::SimClock;
use sim::storage::{is_simulated_crash, CrashMode, IoRecord, PowerLossPolicy, SimStorage};
use std::collections::BTreeMap;

/// The engine settings of the crash tests: a small buffer pool (dirty pages
/// are evicted mid-transaction), a small log buffer (redo of open
/// transactions is written before their commit), a low dirty-page limit
/// (the page cleaner writes pages in every background round), and small
/// log files (each run copies them).
pub fn crash_config(flush: FlushAtCommit, doublewrite: bool) -> Config {
    Config {
        buffer_pool_pages: 24,
        log: LogConfig {
            files: 2,
            file_size_bytes: 256 * 1024,
            buffer_size_bytes: 4 * 512,
        },
        doublewrite,
        flush_at_commit: flush,
        max_dirty_pages_pct: 5,
        ..Config::default()
    }
}

/// The database after setup (two tables, created and closed cleanly), as
/// file images, so each run starts from a fresh copy; and the workload run
/// on it, with the commit history the oracle judges by.
pub struct Setup {
    /// The engine settings of every run.
    pub config: Config,
    /// Every file after setup, by name.
    pub files: Vec<(String, Vec<u8>)>,
    /// The transactions each run submits.
    pub workload: Vec<Txn>,
    /// The workload's commits, in commit order.
    pub history: CommitHistory,
}

impl Setup {
    pub fn build(config: &Config, workload: Vec<Txn>) -> engine::Result<Setup> {
        Setup::build_in(config, workload, RowFormat::Compact)
    }

    /// [`Setup::build`] with both tables in `format`.
    pub fn build_in(
        config: &Config,
        workload: Vec<Txn>,
        format: RowFormat,
    ) -> engine::Result<Setup> {
        let storage = SimStorage::new();
        let (mut e, report) = Engine::open(
            Box::new(storage.clone()),
            Box::new(SimClock::new()),
            config.clone(),
        )?;
        assert!(report.created);
        e.create_table(sbtest("a", format))?;
        e.create_table(docs("b", format))?;
        e.close()?;
        let files = snapshot(&storage);
        let history = crate::workload::history(&workload);
        Ok(Setup {
            config: config.clone(),
            files,
            workload,
            history,
        })
    }

    /// A fresh disk holding the setup's files.
    pub fn plant(&self) -> SimStorage {
        plant(&self.files)
    }

    /// Plants the files, opens the engine (never crashed), arms a crash at
    /// `crash_at` (an offset from the first I/O operation of the workload)
    /// and runs the workload until it ends or a statement fails. Returns
    /// the engine, the storage, the I/O index the workload started at, and
    /// what the workload saw. Dropping the engine without closing it is the
    /// crash.
    pub fn run(
        &self,
        clock: &SimClock,
        crash_at: Option<u64>,
    ) -> engine::Result<(Engine, SimStorage, u64, Progress)> {
        let storage = self.plant();
        let (mut e, _) = Engine::open(
            Box::new(storage.clone()),
            Box::new(clock.clone()),
            self.config.clone(),
        )?;
        let start = storage.counters().ops;
        storage.set_crash_at(crash_at.map(|offset| start + offset));
        let mut progress = Progress {
            crash_at: crash_at.map(|offset| start + offset),
            ..Progress::default()
        };
        run_workload(
            &mut e,
            clock,
            &self.workload,
            self.config.flush_at_commit,
            &mut progress,
        );
        Ok((e, storage, start, progress))
    }

    /// [`Setup::run`] with a crash at `offset`, the engine dropped.
    pub fn crash(
        &self,
        clock: &SimClock,
        offset: u64,
    ) -> engine::Result<(SimStorage, u64, Progress)> {
        let (e, storage, start, progress) = self.run(clock, Some(offset))?;
        drop(e);
        Ok((storage, start, progress))
    }
}

/// What the workload saw before it ended or failed.
#[derive(Debug, Default, Clone)]
pub struct Progress {
    /// Commits acknowledged (a COMMIT or an autocommit statement returned Ok).
    pub acked: usize,
    /// The end LSN of each acknowledged commit.
    pub commit_lsns: Vec<u64>,
    /// The log's written LSN after the last successful statement.
    pub written_lsn: u64,
    /// The log's flushed (synced) LSN after the last successful statement.
    pub flushed_lsn: u64,
    /// The statement that failed, if one did.
    pub failed: Option<String>,
    /// The failing statement was committing the next transaction.
    pub failed_in_commit: bool,
    /// The I/O index the crash was armed at, for failure messages.
    pub crash_at: Option<u64>,
}

impl Progress {
    /// Acknowledged commits whose redo was at or below `lsn`.
    pub fn commits_below(&self, lsn: u64) -> usize {
        self.commit_lsns.iter().take_while(|&&c| c <= lsn).count()
    }
}

/// A statement, short enough for a failure message: long values by length.
pub fn describe(request: &Request) -> String {
    let value = |v: &Value| match v {
        Value::Bytes(b) if b.len() > 16 => format!("<{} bytes>", b.len()),
        Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
        other => format!("{other:?}"),
    };
    let values = |vs: &[Value]| vs.iter().map(value).collect::<Vec<_>>().join(", ");
    match request {
        Request::Insert { table, row } => format!("INSERT INTO {table} VALUES ({})", values(row)),
        Request::Update { table, key, set } => {
            let set: Vec<String> = set
                .iter()
                .map(|(c, v)| format!("{c} = {}", value(v)))
                .collect();
            format!(
                "UPDATE {table} SET {} WHERE pk = ({})",
                set.join(", "),
                values(key)
            )
        }
        Request::Delete { table, key } => {
            format!("DELETE FROM {table} WHERE pk = ({})", values(key))
        }
        other => format!("{other:?}"),
    }
}

/// Submits one statement; returns whether the workload may go on.
pub fn step(
    e: &mut Engine,
    s: engine::SessionId,
    request: Request,
    is_commit: bool,
    flush: FlushAtCommit,
    p: &mut Progress,
) -> bool {
    let what = describe(&request);
    match e.execute(s, request.clone()) {
        Ok(Step::Done(response)) => {
            match &request {
                Request::Insert { .. } | Request::Update { .. } | Request::Delete { .. } => {
                    assert_eq!(
                        response,
                        Response::Affected(1),
                        "{what} changes exactly one row"
                    );
                }
                _ => assert_eq!(response, Response::Ok, "{what}"),
            }
            let log = &e.pager().log;
            p.written_lsn = log.written_lsn();
            p.flushed_lsn = log.flushed_lsn();
            if is_commit {
                let lsn = e.last_commit_lsn();
                assert!(
                    lsn > p.commit_lsns.last().copied().unwrap_or(0),
                    "commit LSNs grow with every commit that changed rows"
                );
                match flush {
                    FlushAtCommit::Sync => assert!(
                        p.flushed_lsn >= lsn,
                        "setting 1 acknowledged a commit (lsn {lsn}) not yet synced ({})",
                        p.flushed_lsn
                    ),
                    FlushAtCommit::Write => assert!(
                        p.written_lsn >= lsn,
                        "setting 2 acknowledged a commit (lsn {lsn}) not yet written ({})",
                        p.written_lsn
                    ),
                    FlushAtCommit::Lazy => {}
                }
                p.acked += 1;
                p.commit_lsns.push(lsn);
            }
            true
        }
        Ok(Step::Waiting) => panic!("{what} waits, with a single session"),
        Err(err) => {
            let from_crash = matches!(&err, Error::Io { source, .. } if is_simulated_crash(source));
            assert!(from_crash, "{what} failed with something other than the simulated crash (armed at I/O {:?}): {err}", p.crash_at);
            assert!(
                e.halted().is_some(),
                "an I/O error while running {what} must halt the engine"
            );
            p.failed = Some(what);
            p.failed_in_commit = is_commit;
            false
        }
    }
}

/// Runs the workload in one session until it ends or a statement fails.
pub fn run_workload(
    e: &mut Engine,
    clock: &SimClock,
    workload: &[Txn],
    flush: FlushAtCommit,
    p: &mut Progress,
) {
    let s = e.session();
    for txn in workload {
        clock.advance_us(TXN_GAP_US);
        let ok = match txn {
            Txn::Auto(r) => step(e, s, r.clone(), true, flush, p),
            Txn::Commit(stmts) | Txn::Rollback(stmts) => {
                let mut ok = step(e, s, Request::Begin, false, flush, p);
                for r in stmts {
                    if !ok {
                        break;
                    }
                    clock.advance_us(STATEMENT_GAP_US);
                    ok = step(e, s, r.clone(), false, flush, p);
                }
                match (ok, txn) {
                    (false, _) => false,
                    (true, Txn::Commit(_)) => step(e, s, Request::Commit, true, flush, p),
                    (true, _) => step(e, s, Request::Rollback, false, flush, p),
                }
            }
        };
        if !ok {
            break;
        }
    }
}

/// How a crash run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The process dies; every write survives.
    Process,
    /// The power goes; every unsynced write is lost.
    PowerLoseAll,
    /// The power goes; each unsynced write survives, is lost, or (with
    /// `torn`) is torn at `sector_bytes`; `draw` tells runs of the same
    /// crash point apart.
    PowerRandom {
        sector_bytes: u32,
        torn: bool,
        draw: u8,
    },
}

impl Kind {
    /// The crash kinds tried at each crash point, with `draws` random power
    /// losses per sector size. With the doublewrite buffer on: every kind,
    /// torn writes at 512 and 4096-byte sectors too. With it off nothing
    /// can repair a torn page (that is
    /// `torn_home_page_without_doublewrite_is_detected_as_corruption`), so
    /// unsynced writes survive whole or not at all, in any combination.
    pub fn all(doublewrite: bool, draws: u8) -> Vec<Kind> {
        let mut kinds = vec![Kind::Process, Kind::PowerLoseAll];
        let sectors: &[u32] = if doublewrite { &[512, 4096] } else { &[512] };
        for &sector_bytes in sectors {
            for draw in 0..draws {
                kinds.push(Kind::PowerRandom {
                    sector_bytes,
                    torn: doublewrite,
                    draw,
                });
            }
        }
        kinds
    }

    /// The restart mode; `seed` drives a random power loss.
    pub fn mode(self, seed: u64) -> CrashMode {
        match self {
            Kind::Process => CrashMode::ProcessCrash,
            Kind::PowerLoseAll => CrashMode::PowerLoss(PowerLossPolicy::LoseAll),
            Kind::PowerRandom {
                sector_bytes, torn, ..
            } => {
                let p_torn = if torn { 0.4 } else { 0.0 };
                CrashMode::PowerLoss(PowerLossPolicy::Random {
                    seed,
                    sector_bytes,
                    p_survive: 0.4,
                    p_torn,
                })
            }
        }
    }

    /// Whether unsynced writes may be lost (the oracle's power-loss column).
    pub fn is_power_loss(self) -> bool {
        self != Kind::Process
    }
}

/// The oracle's bounds on `k` for a crash after `p`.
pub fn bounds(flush: FlushAtCommit, power_loss: bool, p: &Progress) -> (usize, usize) {
    let max = p.acked + usize::from(p.failed_in_commit);
    let min = match (flush, power_loss) {
        (FlushAtCommit::Sync, _) | (FlushAtCommit::Write, false) => p.acked,
        (FlushAtCommit::Lazy, false) => p.commits_below(p.written_lsn),
        (FlushAtCommit::Write | FlushAtCommit::Lazy, true) => p.commits_below(p.flushed_lsn),
    };
    (min, max)
}

/// What a recovery that passed every check found.
#[derive(Debug)]
pub struct Judged {
    /// The recovered state is the state after the first `k` commits.
    pub k: usize,
    /// What recovery said it did.
    pub report: RecoveryReport,
}

/// Reads every row of `table` through a secondary index into a model table.
pub fn read_via_index(
    e: &mut Engine,
    table: &str,
    index: &str,
) -> engine::Result<BTreeMap<Vec<ModelValue>, Vec<ModelValue>>> {
    let s = e.session();
    let scan = Request::Scan {
        table: table.into(),
        index: Some(index.into()),
        low: RangeBound::Unbounded,
        high: RangeBound::Unbounded,
        reverse: false,
        limit: None,
    };
    let Response::Rows(rows) = done(e.execute(s, scan)?) else {
        panic!("a scan returns rows")
    };
    e.close_session(s)?;
    let mut out = BTreeMap::new();
    for r in rows {
        let row = row_to_model(&r);
        let previous = out.insert(model_key(table, &row), row);
        assert!(
            previous.is_none(),
            "index {table}.{index} returned a row twice"
        );
    }
    Ok(out)
}

/// Checks a state read back from the engine: each secondary index yields
/// exactly the rows of the clustered index, and every tree is sound.
pub fn check_indexes(e: &mut Engine, state: &Db) -> Result<(), String> {
    for (table, index) in [("a", "k"), ("b", "v")] {
        let via_index = read_via_index(e, table, index)
            .map_err(|err| format!("scan of {table} by index {index} failed: {err}"))?;
        if via_index != *state.tables[table] {
            let mut as_db = state.clone();
            as_db.tables.insert(table.to_string(), via_index.into());
            return Err(format!(
                "index {table}.{index} disagrees with the clustered index: {}",
                state.diff_named("the clustered index", &as_db, "the secondary index")
            ));
        }
    }
    for table in TABLES {
        let check = e
            .check_table(table)
            .map_err(|err| format!("CHECK TABLE {table} failed: {err}"))?;
        if !check.is_ok() {
            return Err(format!("CHECK TABLE {table}: {:?}", check.problems));
        }
    }
    Ok(())
}

/// A transaction run on the recovered database: it allocates pages (new
/// rows, an overflow chain), so free-space bookkeeping that recovery left
/// wrong (a page both free and in use) shows up as a damaged tree or a
/// wrong row.
pub fn probe() -> Vec<Request> {
    vec![
        insert("a", a_row(10_000, 3)),
        insert("a", a_row(10_001, 4)),
        insert("b", b_row(10_000, "probe", 40_000, 21)),
        Request::Commit,
    ]
}

/// Reopens the engine on a restarted disk and checks everything the oracle
/// and CHECK TABLE can: the state is an allowed prefix, no transaction is
/// partly present, each secondary index yields exactly the clustered rows,
/// every tree is sound, and the database takes new writes. Returns a
/// description of the first violation.
pub fn reopen_and_judge(
    storage: &SimStorage,
    clock: &SimClock,
    config: &Config,
    history: &CommitHistory,
    min_k: usize,
    max_k: usize,
) -> Result<Judged, String> {
    let (mut e, report) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock.clone()),
        config.clone(),
    )
    .map_err(|err| format!("reopen failed: {err}"))?;
    let recovered = read_db(&mut e, &TABLES)
        .map_err(|err| format!("reading the recovered tables failed: {err}"))?;
    let k = match history.judge(&recovered, min_k, max_k) {
        RecoveryVerdict::Prefix(k) => k,
        RecoveryVerdict::Violation(why) => return Err(format!("oracle: {why}")),
    };
    check_indexes(&mut e, &recovered)?;
    let s = e.session();
    let mut expected = recovered;
    done(
        e.execute(s, Request::Begin)
            .map_err(|err| format!("BEGIN after recovery failed: {err}"))?,
    );
    for request in probe() {
        if request != Request::Commit {
            statement_effect(&mut expected, &request);
        }
        let what = describe(&request);
        done(
            e.execute(s, request)
                .map_err(|err| format!("{what} after recovery failed: {err}"))?,
        );
    }
    let after =
        read_db(&mut e, &TABLES).map_err(|err| format!("reading after the probe failed: {err}"))?;
    if after != expected {
        return Err(format!(
            "a transaction after recovery read back wrong: {}",
            expected.diff_named("the model", &after, "the engine")
        ));
    }
    check_indexes(&mut e, &after)
        .map_err(|why| format!("after a transaction on the recovered database: {why}"))?;
    Ok(Judged { k, report })
}

/// Counts the workload's I/O operations on a clean run, checks the run
/// ends in the state the model predicts, and returns the count and the
/// trace of the workload's I/O.
pub fn reference_run(setup: &Setup) -> engine::Result<(u64, Vec<IoRecord>)> {
    let clock = SimClock::new();
    let (mut e, storage, start, p) = setup.run(&clock, None)?;
    assert_eq!(p.failed, None, "the workload runs without a crash");
    assert_eq!(
        p.acked,
        setup.history.len(),
        "every commit of the workload is acknowledged"
    );
    let ops = storage.counters().ops - start;
    let trace: Vec<_> = storage
        .trace()
        .into_iter()
        .filter(|r| r.index >= start)
        .collect();
    assert_eq!(trace.len() as u64, ops);
    let db = read_db(&mut e, &TABLES)?;
    assert!(
        db == setup.history.current(),
        "the model and the engine disagree on the workload: {}",
        setup
            .history
            .current()
            .diff_named("the model", &db, "the engine")
    );
    Ok((ops, trace))
}

/// Every file of a disk that has nothing pending (after a restart or a
/// clean close), by name.
pub fn snapshot(storage: &SimStorage) -> Vec<(String, Vec<u8>)> {
    let mut names = storage
        .clone()
        .list()
        .expect("a restarted disk lists its files");
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let durable = storage
                .read_durable_file(&name)
                .expect("listed file exists");
            assert_eq!(
                Some(&durable),
                storage.read_file(&name).as_ref(),
                "{name} has unsynced changes"
            );
            (name, durable)
        })
        .collect()
}

/// A fresh disk holding `files`, durably, at I/O index 0.
pub fn plant(files: &[(String, Vec<u8>)]) -> SimStorage {
    let storage = SimStorage::new();
    for (name, bytes) in files {
        storage.write_file(name, bytes.clone());
    }
    storage
}
