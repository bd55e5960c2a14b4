//! The engine and the model, run in lockstep: each [`Op`] runs on both and
//! the answers are compared; reopen and crash compare everything.

use super::answers::*;
use super::ops::*;
use crate::common::{read_db, row_to_model, to_model};
use engine::io::{ManualClock, MemStorage};
use engine::redo::LogConfig;
use engine::{
    Config, Engine, Error, FlushAtCommit, Isolation, Request, Response, SessionId, Step, Value,
};
use models::value::fmt_key;
use models::{Db, ModelValue, Row, TableState};
use std::sync::Arc;

/// How often the rare paths a model test exists for were taken: a run
/// whose counters stay at zero tested less than it claims.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    /// Operations run.
    pub ops: u64,
    /// Statements refused with 1062, which must change nothing.
    pub duplicate_errors: u64,
    /// Updates that moved a row to another primary key.
    pub key_moves: u64,
    /// ROLLBACK TO SAVEPOINT that undid something.
    pub savepoint_undos: u64,
    /// Rollbacks that undid something.
    pub rollback_undos: u64,
    /// Consistent reads of the reader whose snapshot was behind the
    /// committed state.
    pub stale_snapshot_reads: u64,
    /// Crashes after which recovery rolled a transaction back.
    pub crash_rollbacks: u64,
    /// Rows written with a long value stored off page in every row format.
    pub off_page_docs: u64,
    /// Buffer pool evictions.
    pub evictions: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Engine lifetimes whose log wrapped around its files.
    pub log_wraps: u64,
    /// Delete-marked rows purge removed.
    pub purged_rows: u64,
    /// The tallest clustered index CHECK TABLE saw.
    pub max_tree_height: u16,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.ops += o.ops;
        self.duplicate_errors += o.duplicate_errors;
        self.key_moves += o.key_moves;
        self.savepoint_undos += o.savepoint_undos;
        self.rollback_undos += o.rollback_undos;
        self.stale_snapshot_reads += o.stale_snapshot_reads;
        self.crash_rollbacks += o.crash_rollbacks;
        self.off_page_docs += o.off_page_docs;
        self.evictions += o.evictions;
        self.checkpoints += o.checkpoints;
        self.log_wraps += o.log_wraps;
        self.purged_rows += o.purged_rows;
        self.max_tree_height = self.max_tree_height.max(o.max_tree_height);
    }
}

/// The reader session and what it may see.
pub struct Reader {
    pub session: SessionId,
    pub in_trx: bool,
    pub snapshot: Option<Db>,
}

/// The engine and the model, run in lockstep.
pub struct Harness {
    pub storage: MemStorage,
    pub clock: Arc<ManualClock>,
    pub config: Config,
    pub engine: Option<Engine>,
    pub main: SessionId,
    pub committed: Db,
    pub current: Db,
    pub autocommit: bool,
    /// BEGIN was given and the transaction has not ended.
    pub explicit: bool,
    pub savepoints: Vec<(String, Db)>,
    pub reader: Option<Reader>,
    pub reader_isolation: Isolation,
    /// The operation being run, for messages.
    pub step: usize,
    pub counters: Counters,
}

pub fn fail<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl Harness {
    pub fn new(case: &Case, tweak: impl FnOnce(&mut Config)) -> Result<Harness, String> {
        let log = if case.small_log {
            LogConfig {
                files: 2,
                file_size_bytes: 256 * 1024,
                buffer_size_bytes: 64 * 1024,
            }
        } else {
            LogConfig::default()
        };
        let mut config = Config {
            buffer_pool_pages: case.buffer_pool_pages,
            log,
            doublewrite: case.doublewrite,
            flush_at_commit: FlushAtCommit::Sync,
            ..Config::default()
        };
        tweak(&mut config);
        let mut h = Harness {
            storage: MemStorage::new(),
            clock: Arc::new(ManualClock::new()),
            config,
            engine: None,
            main: 0,
            committed: Db::with_tables([SB, DOCS]),
            current: Db::with_tables([SB, DOCS]),
            autocommit: true,
            explicit: false,
            savepoints: Vec::new(),
            reader: None,
            reader_isolation: case.reader_isolation,
            step: 0,
            counters: Counters::default(),
        };
        h.open()?;
        let e = h.engine();
        e.create_table(crate::common::sbtest(SB, case.sb_format))
            .map_err(fail("create sbtest"))?;
        e.create_table(crate::common::docs(DOCS, case.docs_format))
            .map_err(fail("create docs"))?;
        Ok(h)
    }

    pub fn engine(&mut self) -> &mut Engine {
        self.engine
            .as_mut()
            .expect("the engine is open between operations")
    }

    /// Opens the engine on the storage; a new main session, no reader, and
    /// the model at its last committed state.
    pub fn open(&mut self) -> Result<(), String> {
        let (mut e, report) = Engine::open(
            Box::new(self.storage.clone()),
            Box::new(self.clock.clone()),
            self.config.clone(),
        )
        .map_err(fail("open"))?;
        self.main = e.session();
        self.engine = Some(e);
        self.current = self.committed.clone();
        self.autocommit = true;
        self.explicit = false;
        self.savepoints.clear();
        self.reader = None;
        if !report.rolled_back.is_empty() {
            self.counters.crash_rollbacks += 1;
        }
        Ok(())
    }

    /// Adds the engine's own counters before it goes away.
    pub fn harvest(&mut self) {
        let e = self.engine.as_ref().expect("engine open");
        let p = e.pager();
        let c = &mut self.counters;
        c.evictions += p.pool.stats.evictions;
        c.checkpoints += p.stats.checkpoints;
        c.log_wraps += u64::from(p.log.lsn() > p.log.capacity());
        c.purged_rows += e.stats.purged_rows;
    }

    pub fn in_trx(&self) -> bool {
        self.explicit || !self.autocommit
    }

    pub fn at(&self) -> String {
        format!("step {}", self.step)
    }

    /// Runs a statement that must not wait; engine errors are returned.
    pub fn exec(&mut self, s: SessionId, req: Request) -> Result<engine::Result<Response>, String> {
        let at = self.at();
        match self.engine().execute(s, req) {
            Ok(Step::Done(r)) => Ok(Ok(r)),
            Ok(Step::Waiting) => Err(format!(
                "{at}: a statement waits for a lock, but only one session writes"
            )),
            Err(e) => Ok(Err(e)),
        }
    }

    /// Runs a statement that must succeed with `want`.
    pub fn exec_expect(
        &mut self,
        s: SessionId,
        req: Request,
        want: Response,
    ) -> Result<(), String> {
        let at = self.at();
        match self.exec(s, req)? {
            Ok(r) if r == want => Ok(()),
            Ok(r) => Err(format!(
                "{at}: engine answered {r:?}, model expects {want:?}"
            )),
            Err(e) => Err(format!(
                "{at}: engine failed with '{e}', model expects {want:?}"
            )),
        }
    }

    pub fn commit_model(&mut self) {
        self.committed = self.current.clone();
        self.explicit = false;
        self.savepoints.clear();
    }

    pub fn rollback_model(&mut self) {
        if self.current != self.committed {
            self.counters.rollback_undos += 1;
        }
        self.current = self.committed.clone();
        self.explicit = false;
        self.savepoints.clear();
    }

    /// Runs a row change in the main session and checks it against `want`.
    pub fn write(&mut self, table: Tbl, req: Request, want: Expect) -> Result<(), String> {
        let at = self.at();
        let got = self.exec(self.main, req)?;
        match (got, want) {
            (Ok(Response::Affected(n)), Expect::Affected(m, writes)) if n == m => {
                if writes.len() == 2 {
                    self.counters.key_moves += 1;
                }
                let off_page = |r: &Row| matches!(r.get(2), Some(ModelValue::Bytes(b)) if b.len() > index_page_half());
                if table == Tbl::Docs
                    && writes.iter().any(|(_, r)| r.as_ref().is_some_and(off_page))
                {
                    self.counters.off_page_docs += 1;
                }
                let autocommit = !self.in_trx();
                for (key, row) in writes {
                    let mut targets = vec![&mut self.current];
                    if autocommit {
                        targets.push(&mut self.committed);
                    }
                    for db in targets {
                        let t = db.table_mut(table.name());
                        match &row {
                            Some(r) => t.insert(key.clone(), r.clone()),
                            None => t.remove(&key),
                        };
                    }
                }
                Ok(())
            }
            (Err(Error::DuplicateKey { .. }), Expect::Duplicate) => {
                self.counters.duplicate_errors += 1;
                Ok(())
            }
            (Err(Error::DataTooLong { .. }), Expect::TooLong) => Ok(()),
            (Ok(r), want) => Err(format!(
                "{at}: engine answered {r:?}, model expects {want:?}"
            )),
            (Err(e), want) => Err(format!(
                "{at}: engine failed with '{e}', model expects {want:?}"
            )),
        }
    }

    pub fn table(&self, t: Tbl) -> &TableState {
        &self.current.tables[t.name()]
    }

    pub fn get(&mut self, s: SessionId, table: Tbl, id: i64, state: &Db) -> Result<(), String> {
        let at = self.at();
        let key = table.id_value(id);
        let want = state.tables[table.name()]
            .get(&vec![to_model(&key)])
            .cloned();
        match self.exec(
            s,
            Request::Get {
                table: table.name().into(),
                key: vec![key],
            },
        )? {
            Ok(Response::Row(got)) => {
                let got = got.map(|r| row_to_model(&r));
                if got != want {
                    let show =
                        |r: &Option<Row>| r.as_ref().map_or("no row".to_string(), |r| fmt_key(r));
                    return Err(format!(
                        "{at}: get {id} from {}: engine {}, model {}",
                        table.name(),
                        show(&got),
                        show(&want)
                    ));
                }
                Ok(())
            }
            other => Err(format!("{at}: get answered {other:?}")),
        }
    }

    pub fn scan(&mut self, s: SessionId, spec: &ScanSpec, state: &Db) -> Result<(), String> {
        let at = self.at();
        let want = model_scan(&state.tables[spec.table.name()], spec);
        match self.exec(s, scan_request(spec))? {
            Ok(Response::Rows(rows)) => {
                let got: Vec<Row> = rows.iter().map(|r| row_to_model(r)).collect();
                if got != want {
                    return Err(format!("{at}: {spec:?}: {}", rows_diff(&got, &want)));
                }
                Ok(())
            }
            Ok(other) => Err(format!("{at}: scan answered {other:?}")),
            Err(e) => Err(format!("{at}: scan failed: {e}")),
        }
    }

    /// The reader session, opened on first use.
    pub fn reader(&mut self) -> Result<SessionId, String> {
        if let Some(r) = &self.reader {
            return Ok(r.session);
        }
        let s = self.engine().session();
        self.exec_expect(
            s,
            Request::SetIsolation(self.reader_isolation),
            Response::Ok,
        )?;
        self.reader = Some(Reader {
            session: s,
            in_trx: false,
            snapshot: None,
        });
        Ok(s)
    }

    /// What the reader's next consistent read must see.
    pub fn reader_state(&mut self) -> Db {
        if self.reader_isolation == Isolation::ReadUncommitted {
            return self.current.clone();
        }
        let committed = &self.committed;
        let rr = self.reader_isolation == Isolation::RepeatableRead;
        let r = self.reader.as_mut().expect("reader opened");
        if r.in_trx && rr {
            let snapshot = r.snapshot.get_or_insert_with(|| committed.clone()).clone();
            if snapshot != *committed {
                self.counters.stale_snapshot_reads += 1;
            }
            snapshot
        } else {
            committed.clone()
        }
    }

    /// Every table, read in the main session, equals `current`.
    pub fn verify_main(&mut self) -> Result<(), String> {
        let state = self.current.clone();
        for table in [Tbl::Sb, Tbl::Docs] {
            let all = ScanSpec {
                table,
                secondary: false,
                low: Bnd::Unbounded,
                high: Bnd::Unbounded,
                reverse: false,
                limit: None,
            };
            self.scan(self.main, &all, &state)?;
            self.scan(
                self.main,
                &ScanSpec {
                    secondary: true,
                    ..all
                },
                &state,
            )?;
        }
        Ok(())
    }

    /// A fresh session sees `committed`, and CHECK TABLE passes.
    pub fn verify_db(&mut self) -> Result<(), String> {
        let at = self.at();
        let db = read_db(self.engine(), &[SB, DOCS]).map_err(fail(&at))?;
        if db != self.committed {
            return Err(format!(
                "{at}: a fresh session sees other rows than the model committed: {}",
                db.diff_named("the fresh session", &self.committed, "the model")
            ));
        }
        self.check_tables()
    }

    pub fn check_tables(&mut self) -> Result<(), String> {
        let at = self.at();
        for name in [SB, DOCS] {
            let report = self.engine().check_table(name).map_err(fail(&at))?;
            if !report.is_ok() {
                return Err(format!("{at}: CHECK TABLE {name}: {:?}", report.problems));
            }
            let height = report.trees.first().map_or(0, |(_, t)| t.height);
            self.counters.max_tree_height = self.counters.max_tree_height.max(height);
        }
        Ok(())
    }

    pub fn reopen(&mut self, crash: bool) -> Result<(), String> {
        let at = self.at();
        self.harvest();
        let e = self.engine.take().expect("engine open");
        if crash {
            drop(e);
        } else {
            e.close().map_err(fail(&at))?;
        }
        self.open()?;
        self.verify_db()
    }

    pub fn run(&mut self, op: &Op) -> Result<(), String> {
        let main = self.main;
        match op {
            Op::Get { table, id } => {
                let state = self.current.clone();
                self.get(main, *table, *id, &state)
            }
            Op::Scan(spec) => {
                let state = self.current.clone();
                self.scan(main, spec, &state)
            }
            Op::InsertSb { id, k, c } => {
                let row = sb_row(*id, *k, *c);
                let want = model_insert(self.table(Tbl::Sb), &row);
                self.write(
                    Tbl::Sb,
                    Request::Insert {
                        table: SB.into(),
                        row,
                    },
                    want,
                )
            }
            Op::InsertDoc { id, v, doc } => {
                let row = doc_row(*id, *v, *doc);
                let want = model_insert(self.table(Tbl::Docs), &row);
                self.write(
                    Tbl::Docs,
                    Request::Insert {
                        table: DOCS.into(),
                        row,
                    },
                    want,
                )
            }
            Op::BulkInsertSb { start, n } => {
                for id in *start..start + u32::from(*n) {
                    let row = sb_row(id, (id * 7 + u32::from(*n)) % SB_K_VALUES, id as u16);
                    let want = model_insert(self.table(Tbl::Sb), &row);
                    self.write(
                        Tbl::Sb,
                        Request::Insert {
                            table: SB.into(),
                            row,
                        },
                        want,
                    )?;
                }
                Ok(())
            }
            Op::InsertTooLong { table, id } => {
                let row = match table {
                    Tbl::Sb => vec![
                        Value::UInt(*id as u64),
                        Value::UInt(0),
                        Value::Bytes(vec![b'c'; 121]),
                        Value::Bytes(vec![]),
                    ],
                    Tbl::Docs => vec![Value::Int(*id), Value::Bytes(vec![b'v'; 41]), Value::Null],
                };
                self.write(
                    *table,
                    Request::Insert {
                        table: table.name().into(),
                        row,
                    },
                    Expect::TooLong,
                )
            }
            Op::UpdateSb { id, k, c } => {
                let mut set = Vec::new();
                if let Some(k) = k {
                    set.push((1, "k", Value::UInt(u64::from(*k))));
                }
                if let Some(c) = c {
                    set.push((2, "c", sb_c(*c)));
                }
                self.update(Tbl::Sb, i64::from(*id), set)
            }
            Op::UpdateDoc { id, v, doc } => {
                let mut set = Vec::new();
                if let Some(v) = v {
                    set.push((1, "v", v_value(*v)));
                }
                if let Some(doc) = doc {
                    set.push((2, "doc", doc_value(*doc)));
                }
                self.update(Tbl::Docs, *id, set)
            }
            Op::UpdateKey {
                table,
                id,
                new_id,
                also,
            } => {
                let mut set = vec![(0, "id", table.id_value(*new_id))];
                if let Some(x) = also {
                    let (c, name) = table.secondary();
                    set.push((c, name, table.secondary_value(i64::from(*x))));
                }
                self.update(*table, *id, set)
            }
            Op::Delete { table, id } => {
                let key = table.id_value(*id);
                let want = model_delete(self.table(*table), &key);
                self.write(
                    *table,
                    Request::Delete {
                        table: table.name().into(),
                        key: vec![key],
                    },
                    want,
                )
            }
            Op::Begin => {
                self.exec_expect(main, Request::Begin, Response::Ok)?;
                self.commit_model();
                self.explicit = true;
                Ok(())
            }
            Op::Commit => {
                self.exec_expect(main, Request::Commit, Response::Ok)?;
                self.commit_model();
                Ok(())
            }
            Op::Rollback => {
                self.exec_expect(main, Request::Rollback, Response::Ok)?;
                self.rollback_model();
                Ok(())
            }
            Op::Savepoint(n) => {
                // In autocommit mode outside BEGIN every statement is its own
                // transaction, and MySQL leaves what a savepoint there means
                // unclear; test savepoints only inside transactions.
                if !self.in_trx() {
                    return Ok(());
                }
                let name = format!("sp{n}");
                self.exec_expect(main, Request::Savepoint(name.clone()), Response::Ok)?;
                self.savepoints.retain(|(x, _)| *x != name);
                self.savepoints.push((name, self.current.clone()));
                Ok(())
            }
            Op::RollbackToSavepoint(n) => {
                let name = format!("sp{n}");
                let pos = self.savepoints.iter().position(|(x, _)| *x == name);
                self.savepoint_statement(Request::RollbackToSavepoint(name), pos)?;
                if let Some(pos) = pos {
                    if self.current != self.savepoints[pos].1 {
                        self.counters.savepoint_undos += 1;
                    }
                    self.current = self.savepoints[pos].1.clone();
                    self.savepoints.truncate(pos + 1);
                }
                Ok(())
            }
            Op::ReleaseSavepoint(n) => {
                let name = format!("sp{n}");
                let pos = self.savepoints.iter().position(|(x, _)| *x == name);
                self.savepoint_statement(Request::ReleaseSavepoint(name), pos)?;
                if let Some(pos) = pos {
                    self.savepoints.truncate(pos);
                }
                Ok(())
            }
            Op::ToggleAutocommit => {
                let on = !self.autocommit;
                self.exec_expect(main, Request::SetAutocommit(on), Response::Ok)?;
                if on {
                    // Turning autocommit on commits the open transaction.
                    self.commit_model();
                }
                self.autocommit = on;
                Ok(())
            }
            Op::PurgeAll => self
                .engine()
                .purge_all()
                .map(|_| ())
                .map_err(fail("purge_all")),
            Op::Checkpoint => self.engine().checkpoint().map_err(fail("checkpoint")),
            Op::Tick => {
                self.clock.advance_us(1_100_000);
                self.engine().tick().map_err(fail("tick"))
            }
            Op::Verify => {
                self.verify_main()?;
                self.check_tables()
            }
            Op::Reopen => self.reopen(false),
            Op::Crash => self.reopen(true),
            Op::ReaderBegin => {
                let s = self.reader()?;
                self.exec_expect(s, Request::Begin, Response::Ok)?;
                let r = self.reader.as_mut().expect("reader opened");
                r.in_trx = true;
                r.snapshot = None;
                Ok(())
            }
            Op::ReaderGet { table, id } => {
                let s = self.reader()?;
                let state = self.reader_state();
                self.get(s, *table, *id, &state)
            }
            Op::ReaderScan(spec) => {
                let s = self.reader()?;
                let state = self.reader_state();
                self.scan(s, spec, &state)
            }
            Op::ReaderCommit => {
                let s = self.reader()?;
                self.exec_expect(s, Request::Commit, Response::Ok)?;
                let r = self.reader.as_mut().expect("reader opened");
                r.in_trx = false;
                r.snapshot = None;
                Ok(())
            }
        }
    }

    pub fn update(
        &mut self,
        table: Tbl,
        id: i64,
        set: Vec<(usize, &str, Value)>,
    ) -> Result<(), String> {
        let key = table.id_value(id);
        let changes: Vec<(usize, Value)> = set.iter().map(|(c, _, v)| (*c, v.clone())).collect();
        let want = model_update(self.table(table), &key, &changes);
        let set = set
            .into_iter()
            .map(|(_, name, v)| (name.to_string(), v))
            .collect();
        self.write(
            table,
            Request::Update {
                table: table.name().into(),
                key: vec![key],
                set,
            },
            want,
        )
    }

    /// ROLLBACK TO / RELEASE SAVEPOINT: fine when the model knows the
    /// savepoint (at `pos`), error 1305 otherwise.
    pub fn savepoint_statement(&mut self, req: Request, pos: Option<usize>) -> Result<(), String> {
        let at = self.at();
        match (self.exec(self.main, req)?, pos) {
            (Ok(Response::Ok), Some(_)) | (Err(Error::NoSuchSavepoint(_)), None) => Ok(()),
            (got, pos) => Err(format!(
                "{at}: engine answered {got:?}, model knows the savepoint at {pos:?}"
            )),
        }
    }

    /// The end of a case: the main session sees `current`, a fresh one
    /// `committed`; both survive a clean reopen.
    pub fn finish(&mut self) -> Result<(), String> {
        self.step += 1;
        self.verify_main()?;
        self.verify_db()?;
        self.reopen(false)?;
        self.harvest();
        let e = self.engine.take().expect("engine open");
        e.close().map_err(fail("final close"))
    }
}

/// Runs a case; the error says at which step and how engine and model
/// differ.
pub fn run_case(case: &Case) -> Result<Counters, String> {
    run_case_with(case, |_| {})
}

/// [`run_case`] with a change to the engine's configuration (canaries).
pub fn run_case_with(case: &Case, tweak: impl FnOnce(&mut Config)) -> Result<Counters, String> {
    let mut h = Harness::new(case, tweak)?;
    for (i, op) in case.ops.iter().enumerate() {
        h.step = i;
        h.counters.ops += 1;
        h.run(op).map_err(|e| format!("{e}\n  op {i}: {op:?}"))?;
    }
    h.finish()?;
    Ok(h.counters)
}
