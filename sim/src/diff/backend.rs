//! The two sides of a diff: innosim's SQL layer in this process, on the
//! simulated disk ([`Local`]), and any server over the MySQL protocol
//! ([`Remote`]: a real MariaDB, or `innosim serve`), each session on its
//! own connection.
//!
//! Both report a statement the same way: finished with its answer, or
//! blocked in a lock wait. In this process the engine says so itself. Over
//! the protocol a statement is blocked when its connection's transaction is
//! in `LOCK WAIT` in `SHOW ENGINE INNODB STATUS`'s transaction list, seen
//! twice a millisecond apart, and no answer has come; that is asked, not
//! waited for, so a scenario full of lock waits runs in milliseconds.
//! (INFORMATION_SCHEMA.INNODB_TRX would say the same but is a cache that
//! InnoDB refreshes at most every 100 ms, `CACHE_MIN_IDLE_TIME_US` in
//! `trx0i_s.cc`; the monitor reads the lock system under its mutex.)

use super::render;
use crate::client::{Client, ClientError};
use crate::storage::SimStorage;
use engine::io::Clock;
use engine::io::ManualClock;
use engine::sql::{ConnId, Outcome, Reply, Server};
use engine::wire::reply::Reply as WireReply;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

/// What an extra connection of each side runs once the tables are set up
/// and holds to the scenario's end: a read view older than every change
/// the scenario makes, so that purge removes none of its delete-marked
/// records on either side. A server purges in the background whenever its
/// threads get to it, and a record purged on one side and not the other
/// hands its locks on to the next record as gap locks on that side only
/// (`lock_rec_inherit_to_gap`): the same scenario then waits on one side
/// and not the other, depending on the machine's timing. Purge is the
/// fuzzer's to check; the diff compares everything else.
pub const PURGE_BLOCKER: &str = "START TRANSACTION WITH CONSISTENT SNAPSHOT";

/// One statement's answer, as the diff compares it.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A result set: each cell's text, NULL as `None`.
    Rows {
        /// The column names (for a script's result; not compared).
        columns: Vec<String>,
        /// The rows, in the order received.
        rows: Vec<Vec<Option<Vec<u8>>>>,
        /// Warnings left.
        warnings: u16,
    },
    /// OK.
    Ok {
        /// Affected rows.
        affected: u64,
        /// Warnings left.
        warnings: u16,
        /// The info line (`Rows matched: ...`; for a script's result, not
        /// compared).
        info: Option<String>,
    },
    /// ERR: compared by its code; the SQLSTATE and message are for the
    /// reader (and a script's result).
    Err {
        /// The error code.
        code: u16,
        /// The SQLSTATE.
        state: String,
        /// The message.
        message: String,
    },
}

impl PartialEq for Answer {
    fn eq(&self, other: &Answer) -> bool {
        match (self, other) {
            (
                Answer::Rows { rows, warnings, .. },
                Answer::Rows {
                    rows: r2,
                    warnings: w2,
                    ..
                },
            ) => rows == r2 && warnings == w2,
            (
                Answer::Ok {
                    affected, warnings, ..
                },
                Answer::Ok {
                    affected: a2,
                    warnings: w2,
                    ..
                },
            ) => affected == a2 && warnings == w2,
            (Answer::Err { code, .. }, Answer::Err { code: c2, .. }) => code == c2,
            _ => false,
        }
    }
}

impl Eq for Answer {}

impl Answer {
    /// The error code, if it is an error.
    pub fn error(&self) -> Option<u16> {
        match self {
            Answer::Err { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// A short rendering for a report: long cells abbreviated.
    pub fn describe(&self) -> String {
        fn cell(c: &Option<Vec<u8>>) -> String {
            match c {
                None => "NULL".into(),
                Some(b) if b.len() > 40 => format!(
                    "{}...({} bytes)",
                    String::from_utf8_lossy(&b[..24]),
                    b.len()
                ),
                Some(b) => String::from_utf8_lossy(b).into_owned(),
            }
        }
        match self {
            Answer::Rows { rows, warnings, .. } => {
                let shown: Vec<String> = rows
                    .iter()
                    .map(|r| r.iter().map(cell).collect::<Vec<_>>().join("\t"))
                    .collect();
                let w = if *warnings > 0 {
                    format!(", {warnings} warnings")
                } else {
                    String::new()
                };
                format!("{} rows{w}: [{}]", rows.len(), shown.join(" | "))
            }
            Answer::Ok {
                affected, warnings, ..
            } => {
                format!("OK, {affected} affected, {warnings} warnings")
            }
            Answer::Err { code, message, .. } => format!("ERROR {code}: {message}"),
        }
    }

    fn from_local(reply: Reply) -> Answer {
        match reply {
            Reply::Ok {
                affected,
                warnings,
                info,
            } => Answer::Ok {
                affected,
                warnings: u16::try_from(warnings).unwrap_or(u16::MAX),
                info,
            },
            Reply::Rows {
                columns,
                rows,
                warnings,
            } => Answer::Rows {
                columns,
                rows: rows
                    .into_iter()
                    .map(|r| {
                        r.into_iter()
                            .map(|d| (!d.is_null()).then(|| d.to_bytes()))
                            .collect()
                    })
                    .collect(),
                warnings: u16::try_from(warnings).unwrap_or(u16::MAX),
            },
            Reply::Error(e) => Answer::Err {
                code: e.code,
                state: e.state.to_string(),
                message: e.message,
            },
        }
    }

    fn from_wire(reply: WireReply) -> Answer {
        match reply {
            WireReply::Ok(ok) => Answer::Ok {
                affected: ok.affected,
                warnings: ok.warnings,
                info: (!ok.info.is_empty()).then_some(ok.info),
            },
            WireReply::Rows {
                columns,
                rows,
                warnings,
                ..
            } => Answer::Rows {
                columns: columns.into_iter().map(|c| c.name).collect(),
                rows,
                warnings,
            },
            WireReply::Err(e) => Answer::Err {
                code: e.code,
                state: e.sqlstate,
                message: e.message,
            },
        }
    }
}

/// What became of a statement when it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Issued {
    /// It finished.
    Done(Answer),
    /// It waits for a lock.
    Blocked,
}

/// One side of a diff.
pub trait Backend {
    /// What it is, for reports.
    fn name(&self) -> String;
    /// A fresh database `diff` with `setup` run in it (each statement must
    /// succeed), and `sessions` connections to it.
    fn start(&mut self, sessions: usize, setup: &[String]) -> Result<(), String>;
    /// The sort buffer of the index builds of the next
    /// [`start`](Self::start), where the side can set it per database
    /// (`None`: its default). A server's is a startup setting, left alone.
    fn set_sort_buffer(&mut self, _bytes: Option<usize>) {}
    /// Sends a statement on a session that is not blocked.
    fn issue(&mut self, session: usize, sql: &str) -> Result<Issued, String>;
    /// The blocked statements that have finished since they were sent,
    /// by session, once everything that can move has.
    fn completions(&mut self) -> Result<BTreeMap<usize, Answer>, String>;
    /// Runs a statement on a connection of its own, outside the sessions
    /// (the final comparison of the tables).
    fn query(&mut self, sql: &str) -> Result<Answer, String>;
    /// The rules of a later InnoDB version the side follows where they
    /// differ from 1.0.6's: a difference they explain is the version's
    /// ([`engine::later`]). innosim follows none.
    fn later_rules(&mut self) -> Result<engine::LaterRules, String> {
        Ok(engine::LaterRules::NONE)
    }
    /// Whether the side's own threads may order what one step sets off
    /// differently from run to run (a real server's waiters woken by one
    /// commit), so that a scenario can part on one run and not the next.
    /// innosim, in process or behind `innosim serve`, does not: a
    /// difference there shows on every run.
    fn races(&mut self) -> Result<bool, String> {
        Ok(false)
    }
    /// Each session's open transaction's deadlock weight, as INNODB_TRX
    /// shows it (`trx_weight`: undo records plus lock structs, what
    /// `lock_deadlock_occurs` and MariaDB's `Deadlock::report` pick the
    /// victim by). Sessions without a transaction are left out. Asked on a
    /// connection of its own, so it can be asked while sessions wait.
    fn weights(&mut self) -> Result<BTreeMap<usize, u64>, String>;
    /// Each session's open transaction's lock structs, one line each, for
    /// a report where the weights differ ([`lock_structs_of`]); none from
    /// a side that cannot say.
    fn lock_structs(&mut self) -> Result<BTreeMap<usize, Vec<LockStruct>>, String> {
        Ok(BTreeMap::new())
    }
    /// Whether the record of `table`'s clustered index whose primary key
    /// columns hold `key` (column, SQL literal) is the last record of its
    /// page, the next one on the page its supremum; `None` from a side
    /// whose pages a client cannot see (innosim keeps no lock per page:
    /// [`Local::lock_structs`]), or where the side finds no such record.
    fn ends_its_page(
        &mut self,
        _table: &str,
        _key: &[(String, String)],
    ) -> Result<Option<bool>, String> {
        Ok(None)
    }
    /// Where session `session` waits to insert the row of `table` whose
    /// primary key columns hold `key`: the page of the clustered index
    /// whose supremum its insert intention waits on, when another
    /// transaction holds a lock on that supremum and committed rows with
    /// greater keys exist (so the supremum ends a page, not the index);
    /// otherwise why not (a side whose pages a client cannot see says so).
    fn waits_at_page_end(
        &mut self,
        _session: usize,
        _table: &str,
        _key: &[(String, String)],
    ) -> Result<Result<u32, String>, String> {
        Ok(Err("the side shows no pages".into()))
    }
    /// The transactions of the latest deadlock the side found, as SHOW
    /// ENGINE INNODB STATUS's LATEST DETECTED DEADLOCK section counts them
    /// when the deadlock was found ([`deadlock_of`]); none from a side that
    /// cannot say.
    fn latest_deadlock(&mut self) -> Result<Vec<CycleTrx>, String> {
        Ok(Vec::new())
    }
    /// Closes the sessions (rolling back what they left open).
    fn stop(&mut self) -> Result<(), String>;
}

/// One transaction of a deadlock's cycle, as the monitor's LATEST DETECTED
/// DEADLOCK section prints it (`trx_print`: "LOCK WAIT 7 lock struct(s),
/// heap size 1128, 9 row lock(s), undo log entries 2"), at the moment the
/// deadlock was found, before the victim was rolled back: its deadlock
/// weight is `structs + undo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleTrx {
    /// Its session, by its connection's thread id (`None`: not a session
    /// of the run's).
    pub session: Option<usize>,
    /// Its lock structs, the waiting one included.
    pub structs: u64,
    /// Its record locks (bits set in those structs, supremums included).
    pub rows: u64,
    /// Its undo records (0 where the line names none).
    pub undo: u64,
}

/// The transactions of the LATEST DETECTED DEADLOCK section of a `SHOW
/// ENGINE INNODB STATUS` text, in the order printed; empty without the
/// section. Sessions by their connections' thread ids ("MySQL thread id"
/// or "MariaDB thread id"), in session order.
pub fn deadlock_of(status: &str, threads: &[u32]) -> Vec<CycleTrx> {
    let Some(at) = status.find("LATEST DETECTED DEADLOCK") else {
        return Vec::new();
    };
    let section = &status[at..];
    let section = section
        .find("\nTRANSACTIONS\n")
        .map_or(section, |end| &section[..end]);
    // The number just before `what` in `line`, or just after it.
    let before = |line: &str, what: &str| -> Option<u64> {
        let head = &line[..line.find(what)?];
        head.rsplit(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let after = |line: &str, what: &str| -> Option<u64> {
        let tail = &line[line.find(what)? + what.len()..];
        tail.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let mut out: Vec<CycleTrx> = Vec::new();
    let mut open = false;
    for line in section.lines() {
        if line.starts_with("*** (") && line.ends_with("TRANSACTION:") {
            out.push(CycleTrx {
                session: None,
                structs: 0,
                rows: 0,
                undo: 0,
            });
            open = true;
            continue;
        }
        if line.starts_with("*** WE ROLL BACK") {
            open = false;
        }
        let Some(t) = out.last_mut().filter(|_| open) else {
            continue;
        };
        if let Some(id) = after(line, "thread id ") {
            t.session = threads.iter().position(|&th| u64::from(th) == id);
        }
        if line.contains(" lock struct(s)") {
            t.structs = before(line, " lock struct(s)").unwrap_or(0);
            t.rows = before(line, " row lock(s)").unwrap_or(0);
            t.undo = after(line, "undo log entries ").unwrap_or(0);
        }
    }
    out
}

/// INNODB_TRX's weights by session, from `SELECT trx_mysql_thread_id,
/// trx_weight FROM information_schema.INNODB_TRX` and the sessions'
/// thread ids in session order.
fn weights_of(answer: &Answer, threads: &[u32]) -> Result<BTreeMap<usize, u64>, String> {
    let Answer::Rows { rows, .. } = answer else {
        return Err(format!("INNODB_TRX: {}", answer.describe()));
    };
    let number = |c: Option<&Option<Vec<u8>>>| -> Option<u64> {
        std::str::from_utf8(c?.as_ref()?).ok()?.parse().ok()
    };
    let mut out = BTreeMap::new();
    for row in rows {
        let (Some(thread), Some(weight)) = (number(row.first()), number(row.get(1))) else {
            return Err(format!("INNODB_TRX: a row without numbers: {row:?}"));
        };
        if let Some(s) = threads.iter().position(|&t| u64::from(t) == thread) {
            out.insert(s, weight);
        }
    }
    Ok(out)
}

/// The monitor's query ([`status_text`] reads its answer).
const INNODB_STATUS: &str = "SHOW ENGINE INNODB STATUS";

/// The text of a `SHOW ENGINE INNODB STATUS` answer: its one row's last
/// column (Type, Name, Status).
fn status_text(answer: &Answer) -> Result<String, String> {
    let Answer::Rows { rows, .. } = answer else {
        return Err(format!("{INNODB_STATUS}: {}", answer.describe()));
    };
    Ok((rows.first())
        .and_then(|r| r.last())
        .and_then(|c| c.as_ref())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default())
}

/// The query [`weights_of`] reads.
const WEIGHTS: &str = "SELECT trx_mysql_thread_id, trx_weight FROM information_schema.INNODB_TRX";

/// The statements innosim needs before the tables (compressed tables want
/// Barracuda and a file per table), which a MariaDB refuses with 1193 (it
/// has neither setting: they are its only ways).
const PRELUDE: [&str; 2] = [
    "SET GLOBAL innodb_file_format = 'Barracuda'",
    "SET GLOBAL innodb_file_per_table = ON",
];

/// What a server that is not innosim also gets first, where it has the
/// setting: MySQL 5.1's behaviour. MariaDB's `extended_keys` (on since
/// 10.0) lets ORDER BY go on through the primary key columns a secondary
/// index holds only once; 5.1's `test_if_order_by_key` walks the whole
/// primary key after the index's own columns, so an ORDER BY that names a
/// primary key column the index already has is sorted there, read in
/// index order here (innosim diff default seed 93).
const SERVER_PRELUDE: [&str; 1] = ["SET GLOBAL optimizer_switch = 'extended_keys=off'"];

/// innosim's SQL layer on a fresh simulated disk, in this process. The
/// clock stands still, so nothing times out.
pub struct Local {
    canaries: engine::Canaries,
    later: engine::LaterRules,
    server: Option<Server>,
    control: ConnId,
    sessions: Vec<ConnId>,
    /// The sessions whose statement waits, in the order they began to:
    /// resumed in that order, as InnoDB grants a queue's waiting locks in
    /// the order they were requested and `innosim serve` resumes its
    /// blocked connections (two woken at once may then race on a real
    /// server; resuming them in another order here parted the sides
    /// later, innosim serve seed 1256).
    blocked: Vec<usize>,
    /// The engine's counters when its server closed.
    closed_stats: engine::EngineStats,
    /// The sort buffer of the next start's engine, if not the default.
    sort_buffer_bytes: Option<usize>,
}

impl Local {
    /// The engine's counters: the paths the scenario took (as of its
    /// server's close, if it closed).
    pub fn engine_stats(&self) -> engine::EngineStats {
        match &self.server {
            Some(s) => s.engine().stats,
            None => self.closed_stats,
        }
    }

    /// A side with no server yet ([`Backend::start`] makes one).
    pub fn new() -> Local {
        Local::with_canaries(engine::Canaries::NONE)
    }

    /// A side whose engine carries planted bugs: the diff's own check that
    /// a wrong engine differs from a right one.
    pub fn with_canaries(canaries: engine::Canaries) -> Local {
        Local {
            canaries,
            later: engine::LaterRules::NONE,
            server: None,
            control: 0,
            sessions: Vec::new(),
            blocked: Vec::new(),
            closed_stats: engine::EngineStats::default(),
            sort_buffer_bytes: None,
        }
    }

    /// A side that follows a later version's rules where they differ
    /// from 1.0.6's ([`engine::later`]).
    pub fn with_later_rules(later: engine::LaterRules) -> Local {
        Local {
            later,
            ..Local::new()
        }
    }

    fn server(&mut self) -> Result<&mut Server, String> {
        self.server
            .as_mut()
            .ok_or_else(|| "not started".to_string())
    }

    fn run(&mut self, c: ConnId, sql: &str) -> Result<Answer, String> {
        match self.server()?.execute(c, sql) {
            Outcome::Done(r) => Ok(Answer::from_local(r)),
            Outcome::Blocked => Err(format!("innosim: '{sql}' blocked outside the sessions")),
        }
    }

    fn must(&mut self, c: ConnId, sql: &str) -> Result<(), String> {
        match self.run(c, sql)? {
            Answer::Err { code, message, .. } => Err(format!("innosim: {sql}: {code} {message}")),
            _ => Ok(()),
        }
    }
}

impl Default for Local {
    fn default() -> Self {
        Local::new()
    }
}

impl Backend for Local {
    fn name(&self) -> String {
        "innosim".into()
    }

    fn start(&mut self, sessions: usize, setup: &[String]) -> Result<(), String> {
        let mut config = engine::Config {
            buffer_pool_pages: 512,
            canaries: self.canaries,
            later: self.later,
            ..engine::Config::default()
        };
        if let Some(bytes) = self.sort_buffer_bytes {
            config.sort_buffer_bytes = bytes;
        }
        let (server, _) = Server::open(
            Box::new(SimStorage::new()),
            Box::new(Arc::new(ManualClock::new())),
            config,
        )
        .map_err(|e| format!("innosim: {}", e.message))?;
        self.server = Some(server);
        self.blocked.clear();
        self.control = self.server()?.connect();
        let c = self.control;
        for sql in PRELUDE {
            self.must(c, sql)?;
        }
        self.must(c, "CREATE DATABASE diff")?;
        self.must(c, "USE diff")?;
        for sql in setup {
            self.must(c, sql)?;
        }
        self.sessions = (0..sessions)
            .map(|_| self.server.as_mut().expect("started").connect())
            .collect();
        for s in self.sessions.clone() {
            self.must(s, "USE diff")?;
        }
        // Purge stands still, as on the other side (see PURGE_BLOCKER).
        let b = self.server.as_mut().expect("started").connect();
        self.must(b, "USE diff")?;
        self.must(b, PURGE_BLOCKER)?;
        Ok(())
    }

    fn set_sort_buffer(&mut self, bytes: Option<usize>) {
        self.sort_buffer_bytes = bytes;
    }

    fn issue(&mut self, session: usize, sql: &str) -> Result<Issued, String> {
        let c = self.sessions[session];
        match self.server()?.execute(c, sql) {
            Outcome::Done(r) => Ok(Issued::Done(Answer::from_local(r))),
            Outcome::Blocked => {
                self.blocked.push(session);
                Ok(Issued::Blocked)
            }
        }
    }

    fn completions(&mut self) -> Result<BTreeMap<usize, Answer>, String> {
        let mut done = BTreeMap::new();
        // A resumed statement can end another's wait (a grant, or a
        // deadlock victim chosen when it waits again) without ending
        // itself, after that other one was resumed in the same pass: go
        // round until a pass ends no statement and follows one that ended
        // none either (resuming a statement that still waits for the same
        // lock changes nothing).
        let mut quiet = false;
        loop {
            let mut moved = false;
            for s in self.blocked.clone() {
                let c = self.sessions[s];
                if let Outcome::Done(r) = self.server()?.resume(c) {
                    self.blocked.retain(|&b| b != s);
                    done.insert(s, Answer::from_local(r));
                    moved = true;
                }
            }
            if !moved && quiet {
                return Ok(done);
            }
            quiet = !moved;
        }
    }

    fn query(&mut self, sql: &str) -> Result<Answer, String> {
        let c = self.control;
        self.run(c, sql)
    }

    fn weights(&mut self) -> Result<BTreeMap<usize, u64>, String> {
        let a = self.query(WEIGHTS)?;
        weights_of(&a, &self.sessions)
    }

    fn latest_deadlock(&mut self) -> Result<Vec<CycleTrx>, String> {
        let text = status_text(&self.query(INNODB_STATUS)?)?;
        Ok(deadlock_of(&text, &self.sessions))
    }

    /// innosim keeps no struct per page: its structs as its lock system
    /// counts them ([`engine::lock::LockSys::struct_list`]), each record
    /// lock struct with how many of the transaction's locks are of its
    /// kind (on the first struct of a kind; 0 on the others).
    fn lock_structs(&mut self) -> Result<BTreeMap<usize, Vec<LockStruct>>, String> {
        use engine::lock::{Mode, RecKey, RecKind, RecMode, Target};
        let Some(server) = &self.server else {
            return Ok(BTreeMap::new());
        };
        let engine = server.engine();
        let mut names: BTreeMap<u64, String> = BTreeMap::new();
        let mut indexes: BTreeMap<(u64, u64), String> = BTreeMap::new();
        for name in engine.table_names() {
            let Ok(t) = engine.table(&name) else { continue };
            let short = name.rsplit('$').next().unwrap_or(&name).to_string();
            let clustered = if t.def.primary_key.is_empty() {
                "GEN_CLUST_INDEX"
            } else {
                "PRIMARY"
            };
            indexes.insert((t.id, t.clustered.id), format!("{short}.{clustered}"));
            for sec in &t.secondary {
                indexes.insert((t.id, sec.index.id), format!("{short}.{}", sec.index.name));
            }
            names.insert(t.id, short);
        }
        // A record lock's mode as the server's monitor spells a struct's.
        let spell = |mode: Mode, supremum: bool| match mode {
            Mode::Table(m) => m.name().to_string(),
            Mode::Record(m, k) => {
                let m = match m {
                    RecMode::S => "S",
                    RecMode::X => "X",
                };
                match (k, supremum) {
                    (RecKind::InsertIntention, true) => format!("{m},II"),
                    (_, true) | (RecKind::NextKey, _) => m.to_string(),
                    (RecKind::Gap, _) => format!("{m},GAP"),
                    (RecKind::RecNotGap, _) => format!("{m},REC"),
                    (RecKind::InsertIntention, _) => format!("{m},GAP,II"),
                }
            }
        };
        let mut out = BTreeMap::new();
        for (s, &c) in self.sessions.iter().enumerate() {
            let Some(trx) = server.session_of(c).and_then(|id| engine.trx_id(id)) else {
                continue;
            };
            // The transaction's record locks by the struct they go in.
            let mut bits: BTreeMap<(u64, u64, String, bool), usize> = BTreeMap::new();
            for l in engine.locks().locks().filter(|l| l.trx == trx) {
                if let Target::Record { table, index, key } = &l.target {
                    let name = spell(l.mode, *key == RecKey::Supremum);
                    *bits.entry((*table, *index, name, l.waiting)).or_default() += 1;
                }
            }
            let mut lines = Vec::new();
            for d in engine.locks().struct_list(trx) {
                let table = names.get(&d.table).cloned().unwrap_or(d.table.to_string());
                match d.index {
                    None => lines.push(LockStruct {
                        on: table,
                        page: None,
                        mode: spell(d.mode, false),
                        waiting: false,
                        bits: None,
                    }),
                    Some(index) => {
                        let mode = spell(d.mode, d.supremum);
                        let n = bits
                            .remove(&(d.table, index, mode.clone(), d.waiting))
                            .unwrap_or(0);
                        lines.push(LockStruct {
                            on: indexes
                                .get(&(d.table, index))
                                .cloned()
                                .unwrap_or(format!("{table}.{index}")),
                            page: None,
                            mode,
                            waiting: d.waiting,
                            bits: Some(n as u32),
                        });
                    }
                }
            }
            out.insert(s, lines);
        }
        Ok(out)
    }

    fn stop(&mut self) -> Result<(), String> {
        if let Some(mut server) = self.server.take() {
            self.closed_stats = server.engine().stats;
            for c in self.sessions.drain(..) {
                server
                    .disconnect(c)
                    .map_err(|e| format!("innosim: {}", e.message))?;
            }
            server
                .close()
                .map_err(|e| format!("innosim: {}", e.message))?;
        }
        Ok(())
    }
}

/// A server's address and account, parsed from
/// `mysql://user[:password]@host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// The user.
    pub user: String,
    /// The password (empty: none).
    pub password: String,
    /// `host:port`.
    pub addr: String,
}

impl std::str::FromStr for ServerUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<ServerUrl, String> {
        let bad = || format!("a server is mysql://user[:password]@host:port, not '{s}'");
        let rest = s.strip_prefix("mysql://").ok_or_else(bad)?;
        let (account, addr) = rest.rsplit_once('@').ok_or_else(bad)?;
        let (user, password) = account.split_once(':').unwrap_or((account, ""));
        let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
        if user.is_empty() || host.is_empty() || port.parse::<u16>().is_err() {
            return Err(bad());
        }
        Ok(ServerUrl {
            user: user.into(),
            password: password.into(),
            addr: addr.trim_end_matches('/').into(),
        })
    }
}

impl std::fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mysql://{}@{}", self.user, self.addr)
    }
}

/// A session's connection, served by a thread of its own so that a
/// blocked statement blocks only it.
struct Conn {
    /// The server's id of the connection (`MySQL thread id`).
    id: u32,
    send: Sender<String>,
    answers: Receiver<Result<WireReply, ClientError>>,
    /// Sent and not answered.
    busy: bool,
}

/// How long a statement may run before the diff gives up on the server.
const STUCK_US: u64 = 30_000_000;

/// A server over the MySQL protocol.
pub struct Remote {
    url: ServerUrl,
    control: Option<Client>,
    sessions: Vec<Conn>,
    /// The connection holding [`PURGE_BLOCKER`]'s read view.
    blocker: Option<Client>,
    /// The real clock a real server's statements are timed by (the one
    /// place real time enters, `engine::io::OsClock`).
    clock: Box<dyn Clock>,
    /// When INNODB_TRX was last read ([`Backend::weights`]).
    trx_cache_read_us: Option<u64>,
    /// Later rules left out of the server's ([`Remote::without_rules`]).
    without: engine::LaterRules,
}

/// How long after a read of INNODB_TRX the server refreshes its cache
/// (InnoDB's CACHE_MIN_IDLE_TIME_US, 100 ms), with a margin.
const TRX_CACHE_IDLE_US: u64 = 110_000;

impl Remote {
    /// A side on the server at `url` (connected at [`Backend::start`]).
    pub fn new(url: ServerUrl) -> Remote {
        Remote {
            url,
            control: None,
            sessions: Vec::new(),
            blocker: None,
            clock: Box::new(engine::io::OsClock::new()),
            trx_cache_read_us: None,
            without: engine::LaterRules::NONE,
        }
    }

    /// This side, with `rules` left out of the later rules its server's
    /// version has ([`Backend::later_rules`]).
    pub fn without_rules(mut self, rules: engine::LaterRules) -> Remote {
        self.without = rules;
        self
    }

    /// What the server says it is (`SELECT VERSION()`), or why not.
    pub fn version(&mut self) -> String {
        match Backend::query(self, "SELECT VERSION()") {
            Ok(Answer::Rows { rows, .. }) => rows
                .first()
                .and_then(|r| r.first())
                .and_then(|c| c.as_ref())
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default(),
            Ok(a) => a.describe(),
            Err(e) => e,
        }
    }

    fn connect(&self, db: Option<&str>) -> Result<Client, String> {
        Client::connect(
            self.url.addr.as_str(),
            &self.url.user,
            &self.url.password,
            db,
        )
        .map_err(|e| format!("{}: {e}", self.url))
    }

    fn control(&mut self) -> Result<&mut Client, String> {
        if self.control.is_none() {
            self.control = Some(self.connect(None)?);
        }
        Ok(self.control.as_mut().expect("just connected"))
    }

    fn must(&mut self, sql: &str) -> Result<(), String> {
        let url = self.url.clone();
        match self.control()?.query(sql) {
            Ok(WireReply::Err(e)) => Err(format!("{url}: {sql}: {} {}", e.code, e.message)),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("{url}: {sql}: {e}")),
        }
    }

    /// A connection to the scenario's database with a thread of its own
    /// that sends it statements one at a time ([`Backend::issue`]).
    fn open_session(&self) -> Result<Conn, String> {
        let mut client = self.connect(Some("diff"))?;
        let id = client.greeting.connection_id;
        let (send, requests) = mpsc::channel::<String>();
        let (answer, answers) = mpsc::channel();
        std::thread::Builder::new()
            .name(format!("diff-session-{id}"))
            .spawn(move || {
                for sql in requests {
                    let r = client.query(&sql);
                    let failed = r.is_err();
                    if answer.send(r).is_err() || failed {
                        return;
                    }
                }
                let _ = client.quit();
            })
            .map_err(|e| e.to_string())?;
        Ok(Conn {
            id,
            send,
            answers,
            busy: false,
        })
    }

    /// Runs `sql`, a read of the INFORMATION_SCHEMA tables InnoDB fills
    /// from its transaction cache (INNODB_TRX, INNODB_LOCKS,
    /// INNODB_LOCK_WAITS), no sooner than InnoDB refreshes the cache: when
    /// it was last read more than 100 ms before
    /// (`trx_i_s_possibly_fetch_data_into_cache`, CACHE_MIN_IDLE_TIME_US).
    /// The wait is real time, as this side's statements are (`settle`):
    /// the other side is a real server, outside the simulated world, and
    /// what these tables say only annotates or classifies a mismatch.
    fn query_trx_cache(&mut self, sql: &str) -> Result<Answer, String> {
        if let Some(last) = self.trx_cache_read_us {
            let since = self.clock.now_us().saturating_sub(last);
            if since < TRX_CACHE_IDLE_US {
                std::thread::sleep(Duration::from_micros(TRX_CACHE_IDLE_US - since));
            }
        }
        let a = Backend::query(self, sql);
        self.trx_cache_read_us = Some(self.clock.now_us());
        a
    }

    /// The connections whose transaction waits for a lock now.
    fn lock_waits(&mut self) -> Result<BTreeSet<u32>, String> {
        Ok(waiting_threads(&self.innodb_status()?))
    }

    /// The text of `SHOW ENGINE INNODB STATUS`.
    fn innodb_status(&mut self) -> Result<String, String> {
        let a = Backend::query(self, INNODB_STATUS)?;
        status_text(&a).map_err(|e| format!("{}: {e}", self.url))
    }

    /// Waits for session `s`'s statement: its answer, or `None` once it is
    /// seen waiting for a lock twice a millisecond apart.
    fn settle(&mut self, s: usize) -> Result<Option<Answer>, String> {
        let began = self.clock.now_us();
        let mut seen_waiting = false;
        loop {
            // Once seen waiting, the answer has a millisecond to come
            // before the second look.
            let patience = if seen_waiting { 1_000 } else { 300 };
            match self.sessions[s]
                .answers
                .recv_timeout(Duration::from_micros(patience))
            {
                Ok(r) => {
                    self.sessions[s].busy = false;
                    let r = r.map_err(|e| format!("{}: session {s}: {e}", self.url))?;
                    return Ok(Some(Answer::from_wire(r)));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{}: session {s}'s connection is gone", self.url))
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            let id = self.sessions[s].id;
            if self.lock_waits()?.contains(&id) {
                if seen_waiting {
                    return Ok(None);
                }
                seen_waiting = true;
            } else {
                seen_waiting = false;
            }
            if self.clock.now_us().saturating_sub(began) > STUCK_US {
                return Err(format!(
                    "{}: session {s}'s statement neither finished nor waited for a lock in {} s",
                    self.url,
                    STUCK_US / 1_000_000
                ));
            }
        }
    }
}

/// The `MySQL thread id`s of the transactions in `LOCK WAIT` in the
/// TRANSACTIONS section of `SHOW ENGINE INNODB STATUS` (InnoDB's, MariaDB's
/// and innosim's alike: a `---TRANSACTION` line, then lines up to the next
/// one, among them `LOCK WAIT` and `MySQL thread id N`, which MariaDB
/// spells `MariaDB thread id N`).
pub fn waiting_threads(status: &str) -> BTreeSet<u32> {
    transactions(status)
        .filter(|(_, block)| block.contains("LOCK WAIT"))
        .map(|(id, _)| id)
        .collect()
}

/// Each transaction of the TRANSACTIONS section of `SHOW ENGINE INNODB
/// STATUS` that names its connection (`MySQL thread id N`, which MariaDB
/// spells `MariaDB thread id N`): the id and the transaction's lines.
fn transactions(status: &str) -> impl Iterator<Item = (u32, &str)> {
    let section = status
        .find("\nTRANSACTIONS\n")
        .map_or("", |start| &status[start..]);
    section.split("---TRANSACTION").skip(1).filter_map(|block| {
        let at = block.find(" thread id ")?;
        let digits: String = block[at + 11..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        Some((digits.parse().ok()?, block))
    })
}

/// A comparison of the columns of `key` (column, SQL literal) with its
/// values, as ranges the optimizer reads: `(a, b) <= (x, y)` is `a < x OR
/// (a = x AND b <= y)` with `op` `<` and `last` `<=`.
fn key_compared(key: &[(String, String)], op: &str, last: &str) -> String {
    let mut ors = Vec::new();
    for i in 0..key.len() {
        let mut ands: Vec<String> = key[..i]
            .iter()
            .map(|(c, v)| format!("{} = {v}", render::ident(c)))
            .collect();
        let (c, v) = &key[i];
        let op = if i + 1 == key.len() { last } else { op };
        ands.push(format!("{} {op} {v}", render::ident(c)));
        ors.push(format!("({})", ands.join(" AND ")));
    }
    ors.join(" OR ")
}

/// One lock struct of a transaction ([`Backend::lock_structs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockStruct {
    /// The table (a table lock) or `table.index` (a record lock struct).
    pub on: String,
    /// The page, where the side keeps a struct per page.
    pub page: Option<u32>,
    /// The mode as the monitor spells a struct's: `IX`, `X`, `S,GAP`,
    /// `X,REC` (record only), `X,GAP,II` (insert intention).
    pub mode: String,
    /// It is the transaction's waiting request.
    pub waiting: bool,
    /// How many records (supremums included) it has a bit for; `None` for
    /// a table lock.
    pub bits: Option<u32>,
}

impl std::fmt::Display for LockStruct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.on)?;
        if let Some(p) = self.page {
            write!(f, " p{p}")?;
        }
        write!(f, " {}", self.mode)?;
        if self.waiting {
            write!(f, " waiting")?;
        }
        match self.bits {
            Some(n) => write!(f, " {n}"),
            None => Ok(()),
        }
    }
}

/// Each session's lock structs, from the TRANSACTIONS section of `SHOW
/// ENGINE INNODB STATUS` with `innodb_status_output_locks` on
/// (`lock_trx_print_locks`): one line per struct, in the order listed,
/// `sb IX` for a table lock and `sb.PRIMARY p3 X,GAP,II 1` for a record
/// lock struct (its index, page, mode, and how many records it has a bit
/// for: 0 for a struct whose records moved to another page or whose
/// waiting request was made again elsewhere). The waiting request the
/// section shows first is listed once, in its place among the others.
/// Sessions by their connections' thread ids, as [`waiting_threads`].
pub fn lock_structs_of(status: &str, threads: &[u32]) -> BTreeMap<usize, Vec<LockStruct>> {
    let mut out = BTreeMap::new();
    for (id, block) in transactions(status) {
        let Some(s) = threads.iter().position(|&t| t == id) else {
            continue;
        };
        let structs = structs_of_block(block)
            .into_iter()
            .map(|(l, _)| l)
            .collect();
        out.insert(s, structs);
    }
    out
}

/// The lock structs of the transaction of connection `thread` in `status`
/// (as [`lock_structs_of`] reads them), each with the heap numbers of the
/// records it has a bit for (1 is the page's supremum).
pub fn lock_structs_with_heaps(status: &str, thread: u32) -> Vec<(LockStruct, Vec<u32>)> {
    transactions(status)
        .find(|(id, _)| *id == thread)
        .map_or(Vec::new(), |(_, block)| structs_of_block(block))
}

/// One transaction's block of the monitor's TRANSACTIONS section, read
/// into its lock structs with their records' heap numbers.
fn structs_of_block(block: &str) -> Vec<(LockStruct, Vec<u32>)> {
    let mut structs: Vec<(LockStruct, Vec<u32>)> = Vec::new();
    let mut in_wait = false;
    for line in block.lines() {
        if line.starts_with("------- TRX HAS BEEN WAITING") {
            in_wait = true;
            continue;
        }
        if in_wait {
            in_wait = !line.starts_with("------------------");
            continue;
        }
        // `db`.`t` after " table ": the table's name.
        let table = || {
            line.find(" table `").map_or(String::new(), |i| {
                let rest = line[i + 7..].split(' ').next().unwrap_or("");
                rest.rsplit('.')
                    .next()
                    .unwrap_or(rest)
                    .trim_matches('`')
                    .to_string()
            })
        };
        let word = |key: &str| {
            line.find(key).map_or(String::new(), |i| {
                line[i + key.len()..]
                    .split(' ')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
        };
        if line.starts_with("TABLE LOCK") {
            let lock = LockStruct {
                on: table(),
                page: None,
                mode: line
                    .rsplit("lock mode ")
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string(),
                waiting: false,
                bits: None,
            };
            structs.push((lock, Vec::new()));
        } else if line.starts_with("RECORD LOCKS") {
            let mode = line
                .find("lock_mode ")
                .or_else(|| line.find("lock mode "))
                .map_or("", |i| &line[i + 10..]);
            let mut name = mode.split(' ').next().unwrap_or("").to_string();
            if mode.contains("locks gap before rec") {
                name.push_str(",GAP");
            }
            if mode.contains("locks rec but not gap") {
                name.push_str(",REC");
            }
            if mode.contains("insert intention") {
                name.push_str(",II");
            }
            let lock = LockStruct {
                on: format!("{}.{}", table(), word("index ")),
                page: word("page no ").parse().ok(),
                mode: name,
                waiting: mode.contains("waiting"),
                bits: Some(0),
            };
            structs.push((lock, Vec::new()));
        } else if line.starts_with("Record lock, heap no") {
            if let Some((LockStruct { bits: Some(n), .. }, heaps)) = structs.last_mut() {
                *n += 1;
                heaps.extend(word("heap no ").parse::<u32>().ok());
            }
        }
    }
    structs
}

impl Backend for Remote {
    fn name(&self) -> String {
        self.url.to_string()
    }

    fn start(&mut self, sessions: usize, setup: &[String]) -> Result<(), String> {
        self.stop()?;
        for sql in PRELUDE.iter().chain(&SERVER_PRELUDE) {
            let url = self.url.clone();
            match self.control()?.query(sql) {
                // A server without the variable, or without the switch.
                Ok(WireReply::Err(e)) if e.code == 1193 || e.code == 1231 => {}
                Ok(WireReply::Err(e)) => {
                    return Err(format!("{url}: {sql}: {} {}", e.code, e.message))
                }
                Ok(_) => {}
                Err(e) => return Err(format!("{url}: {sql}: {e}")),
            }
        }
        self.must("DROP DATABASE IF EXISTS diff")?;
        self.must("CREATE DATABASE diff")?;
        self.must("USE diff")?;
        for sql in setup {
            self.must(sql)?;
        }
        for _ in 0..sessions {
            let conn = self.open_session()?;
            self.sessions.push(conn);
        }
        let mut blocker = self.connect(Some("diff"))?;
        match blocker.query(PURGE_BLOCKER) {
            Ok(WireReply::Err(e)) => {
                return Err(format!(
                    "{}: {PURGE_BLOCKER}: {} {}",
                    self.url, e.code, e.message
                ))
            }
            Ok(_) => {}
            Err(e) => return Err(format!("{}: {PURGE_BLOCKER}: {e}", self.url)),
        }
        self.blocker = Some(blocker);
        Ok(())
    }

    fn issue(&mut self, session: usize, sql: &str) -> Result<Issued, String> {
        let conn = &mut self.sessions[session];
        conn.send
            .send(sql.to_string())
            .map_err(|_| format!("{}: session {session}'s connection is gone", self.url))?;
        conn.busy = true;
        Ok(match self.settle(session)? {
            Some(a) => Issued::Done(a),
            None => Issued::Blocked,
        })
    }

    fn completions(&mut self) -> Result<BTreeMap<usize, Answer>, String> {
        let mut done = BTreeMap::new();
        for s in 0..self.sessions.len() {
            if self.sessions[s].busy {
                if let Some(a) = self.settle(s)? {
                    done.insert(s, a);
                }
            }
        }
        Ok(done)
    }

    fn query(&mut self, sql: &str) -> Result<Answer, String> {
        let url = self.url.clone();
        self.control()?
            .query(sql)
            .map(Answer::from_wire)
            .map_err(|e| format!("{url}: {sql}: {e}"))
    }

    /// INNODB_TRX, read as its cache allows (`Remote::query_trx_cache`);
    /// the weights only annotate a mismatch's report, never decide one.
    fn weights(&mut self) -> Result<BTreeMap<usize, u64>, String> {
        let a = self.query_trx_cache(WEIGHTS);
        let threads: Vec<u32> = self.sessions.iter().map(|c| c.id).collect();
        weights_of(&a?, &threads)
    }

    fn lock_structs(&mut self) -> Result<BTreeMap<usize, Vec<LockStruct>>, String> {
        // A server without the setting prints no locks: nothing to list.
        let _ = self
            .control()?
            .query("SET GLOBAL innodb_status_output_locks = ON");
        let text = self.innodb_status()?;
        let threads: Vec<u32> = self.sessions.iter().map(|c| c.id).collect();
        Ok(lock_structs_of(&text, &threads))
    }

    fn latest_deadlock(&mut self) -> Result<Vec<CycleTrx>, String> {
        let text = self.innodb_status()?;
        let threads: Vec<u32> = self.sessions.iter().map(|c| c.id).collect();
        Ok(deadlock_of(&text, &threads))
    }

    /// MariaDB's (10.11's, as far as innosim knows them) when the server
    /// says it is MariaDB; none otherwise (innosim serve is 1.0.6).
    fn later_rules(&mut self) -> Result<engine::LaterRules, String> {
        let version = self.version();
        Ok(if version.contains("MariaDB") {
            engine::LaterRules::mariadb_10_11().without(self.without)
        } else {
            engine::LaterRules::NONE
        })
    }

    /// A server other than `innosim serve` (whose version ends in
    /// `-innosim`) runs each connection on its own thread and wakes waiters
    /// in whatever order its scheduler gives.
    fn races(&mut self) -> Result<bool, String> {
        match Backend::query(self, "SELECT VERSION()")? {
            Answer::Rows { rows, .. } => Ok(!rows
                .iter()
                .flatten()
                .flatten()
                .any(|v| String::from_utf8_lossy(v).contains("innosim"))),
            a => Err(format!("SELECT VERSION(): {}", a.describe())),
        }
    }

    /// A probe on its own connection, at REPEATABLE READ: `SELECT ...
    /// WHERE key <= the record's ORDER BY key DESC LIMIT 1 FOR UPDATE`
    /// through the clustered index. A descending locking read places a gap
    /// lock on the record after the one it starts from before it locks that
    /// one (`row_search_mvcc`, "to prevent phantoms in ORDER BY ... DESC
    /// queries": `page_rec_get_next` on the same page), so the probe's
    /// locks in the monitor show the page of the record and whether the
    /// page's supremum comes next. The probe may wait for the record (its
    /// inserter's implicit lock); it is read while it waits, then killed.
    fn ends_its_page(
        &mut self,
        table: &str,
        key: &[(String, String)],
    ) -> Result<Option<bool>, String> {
        if key.is_empty() {
            return Ok(None);
        }
        let below = key_compared(key, "<", "<=");
        let order: Vec<String> = key
            .iter()
            .map(|(c, _)| format!("{} DESC", render::ident(c)))
            .collect();
        let sql = format!(
            "SELECT 1 FROM {} FORCE INDEX (PRIMARY) WHERE {} ORDER BY {} LIMIT 1 FOR UPDATE",
            render::ident(table),
            below,
            order.join(", ")
        );
        let _ = self
            .control()?
            .query("SET GLOBAL innodb_status_output_locks = ON");
        let probe = self.open_session()?;
        let id = probe.id;
        self.sessions.push(probe);
        let s = self.sessions.len() - 1;
        let result = (|| -> Result<Option<bool>, String> {
            for sql in [
                "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                "BEGIN",
                sql.as_str(),
            ] {
                match self.issue(s, sql)? {
                    Issued::Done(Answer::Err { code, message, .. }) => {
                        return Err(format!("{}: probe {sql}: {code} {message}", self.url))
                    }
                    Issued::Done(_) | Issued::Blocked => {}
                }
            }
            let status = self.innodb_status()?;
            let on = format!("{table}.PRIMARY");
            let structs = lock_structs_with_heaps(&status, id);
            // The page of the record the read started from: the one it
            // locks (or waits for) other than a supremum.
            let Some(page) = structs
                .iter()
                .filter(|(l, heaps)| l.on == on && heaps.iter().any(|&h| h > 1))
                .find_map(|(l, _)| l.page)
            else {
                return Ok(None);
            };
            Ok(Some(structs.iter().any(|(l, heaps)| {
                l.on == on && l.page == Some(page) && heaps.contains(&1)
            })))
        })();
        if self.sessions[s].busy {
            // Waiting: end the probe's statement and transaction.
            self.must(&format!("KILL {id}"))?;
        }
        self.sessions.pop();
        result
    }

    /// From the monitor: the session's waiting struct is an insert
    /// intention on `table`.PRIMARY with heap no 1 alone, another
    /// transaction holds a struct on the same page with heap no 1; then a
    /// plain read on the control connection finds a committed row above
    /// `key`.
    fn waits_at_page_end(
        &mut self,
        session: usize,
        table: &str,
        key: &[(String, String)],
    ) -> Result<Result<u32, String>, String> {
        let Some(conn) = self.sessions.get(session) else {
            return Ok(Err(format!("no session {session}")));
        };
        let id = conn.id;
        let _ = self
            .control()?
            .query("SET GLOBAL innodb_status_output_locks = ON");
        let status = self.innodb_status()?;
        let on = format!("{table}.PRIMARY");
        let structs = lock_structs_with_heaps(&status, id);
        let Some(page) = structs
            .iter()
            .find(|(l, heaps)| {
                l.waiting && l.on == on && l.mode.contains("II") && heaps.as_slice() == [1]
            })
            .and_then(|(l, _)| l.page)
        else {
            let waiting: Vec<String> = structs
                .iter()
                .filter(|(l, _)| l.waiting)
                .map(|(l, heaps)| format!("{l} heap {heaps:?}"))
                .collect();
            return Ok(Err(format!(
                "it waits for {}, not an insert intention on a supremum of {on}",
                if waiting.is_empty() {
                    "nothing the monitor lists".to_string()
                } else {
                    waiting.join("; ")
                }
            )));
        };
        // What it waits for, from the lock wait tables (the monitor prints
        // ten structs of a transaction at most): a lock on that supremum.
        // They are the same cache as INNODB_TRX ([`Remote::query_trx_cache`]).
        let blockers = self.query_trx_cache(&format!(
            "SELECT b.lock_page, b.lock_rec FROM information_schema.INNODB_LOCK_WAITS w \
                 JOIN information_schema.INNODB_LOCKS b ON b.lock_id = w.blocking_lock_id \
                 JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id \
                 WHERE r.trx_mysql_thread_id = {id} AND b.lock_index = 'PRIMARY'"
        ));
        let cell = |c: &Option<Vec<u8>>| {
            c.as_deref()
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(|t| t.parse::<u32>().ok())
        };
        let held = match blockers? {
            Answer::Rows { rows, .. } => rows
                .iter()
                .any(|r| r.len() == 2 && cell(&r[0]) == Some(page) && cell(&r[1]) == Some(1)),
            other => {
                return Err(format!(
                    "{}: INNODB_LOCK_WAITS: {}",
                    self.url,
                    other.describe()
                ))
            }
        };
        if !held {
            return Ok(Err(format!(
                "no other transaction holds the supremum of {on} page {page}"
            )));
        }
        let sql = format!(
            "SELECT 1 FROM `diff`.{} WHERE {} LIMIT 1",
            render::ident(table),
            key_compared(key, ">", ">")
        );
        match Backend::query(self, &sql)? {
            Answer::Rows { rows, .. } if !rows.is_empty() => Ok(Ok(page)),
            Answer::Rows { .. } => Ok(Err(format!(
                "no committed row above it: page {page} may end the index"
            ))),
            other => Err(format!("{}: {sql}: {}", self.url, other.describe())),
        }
    }

    fn stop(&mut self) -> Result<(), String> {
        // Dropping a session's sender ends its thread, which quits.
        self.sessions.clear();
        if let Some(b) = self.blocker.take() {
            let _ = b.quit();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadlock_cycle_is_read_from_either_monitor() {
        // MariaDB 10.11.14's section (trimmed), compressed seed 2694.
        let maria = "------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n\
            2026-12-06 11:30:29 0x7f58677fe6c0\n\
            *** (1) TRANSACTION:\n\
            TRANSACTION 142032, ACTIVE 0 sec fetching rows\n\
            mysql tables in use 1, locked 1\n\
            LOCK WAIT 7 lock struct(s), heap size 1128, 9 row lock(s)\n\
            MariaDB thread id 1813, OS thread handle 140017670284992, query id 58992 localhost 127.0.0.1 root Sending data\n\
            *** WAITING FOR THIS LOCK TO BE GRANTED:\n\
            RECORD LOCKS space id 6067 page no 4 n bits 320 index k of table `diffx`.`sb` trx id 142032 lock mode S waiting\n\
            *** (2) TRANSACTION:\n\
            TRANSACTION 142031, ACTIVE 0 sec inserting\n\
            LOCK WAIT 4 lock struct(s), heap size 1128, 3 row lock(s), undo log entries 2\n\
            MariaDB thread id 1816, OS thread handle 140017669977792, query id 58991 localhost 127.0.0.1 root Update\n\
            *** WE ROLL BACK TRANSACTION (1)\n\
            ------------\nTRANSACTIONS\n------------\n\
            ---TRANSACTION 142032, ACTIVE 0 sec\n\
            7 lock struct(s), heap size 1128, 13 row lock(s)\n\
            MariaDB thread id 1813, OS thread handle 1, query id 58992 localhost 127.0.0.1 root\n";
        let cycle = deadlock_of(maria, &[1810, 1813, 1815, 1816]);
        let want = vec![
            CycleTrx {
                session: Some(1),
                structs: 7,
                rows: 9,
                undo: 0,
            },
            CycleTrx {
                session: Some(3),
                structs: 4,
                rows: 3,
                undo: 2,
            },
        ];
        assert_eq!(cycle, want);
        // innosim's own section says the same in its words.
        let ours = "LATEST DETECTED DEADLOCK\n------------------------\n\
            at 0.000000 s of the engine's clock\n\
            *** (1) TRANSACTION:\nTRANSACTION 1E, MySQL thread id 1813\n\
            LOCK WAIT 7 lock struct(s), 9 row lock(s)\n\
            *** (1) WAITING FOR THIS LOCK TO BE GRANTED:\n\
            RECORD LOCKS index `k` of table `diff`.`sb` lock_mode S waiting, key 7, 59\n\
            *** (2) TRANSACTION:\nTRANSACTION 1C, MySQL thread id 1816\n\
            LOCK WAIT 4 lock struct(s), 3 row lock(s), undo log entries 2\n\
            *** (2) WAITING FOR THIS LOCK TO BE GRANTED:\n\
            RECORD LOCKS index `PRIMARY` of table `diff`.`sb` lock_mode X,GAP waiting, key 326\n\
            *** WE ROLL BACK TRANSACTION (1)\n------------\nTRANSACTIONS\n";
        assert_eq!(deadlock_of(ours, &[1810, 1813, 1815, 1816]), want);
        // No section, no cycle; a thread that is no session's is None.
        assert!(deadlock_of("------------\nTRANSACTIONS\n", &[1]).is_empty());
        assert_eq!(deadlock_of(maria, &[1813])[1].session, None);
    }

    #[test]
    fn urls_name_user_password_and_address() {
        let u: ServerUrl = "mysql://root@127.0.0.1:3417".parse().unwrap();
        assert_eq!(
            (u.user.as_str(), u.password.as_str(), u.addr.as_str()),
            ("root", "", "127.0.0.1:3417")
        );
        let u: ServerUrl = "mysql://a:b@h:1".parse().unwrap();
        assert_eq!(u.password, "b");
        assert!("mysql://h:1".parse::<ServerUrl>().is_err());
        assert!("http://root@h:1".parse::<ServerUrl>().is_err());
        assert!("mysql://root@h".parse::<ServerUrl>().is_err());
    }

    #[test]
    fn lock_waits_are_read_from_the_transaction_list() {
        let status = "\n=====\nLATEST DETECTED DEADLOCK\n---TRANSACTION 9, LOCK WAIT\n\
                      MySQL thread id 77\n------------\nTRANSACTIONS\n------------\n\
                      History list length 3\nLIST OF TRANSACTIONS FOR EACH SESSION:\n\
                      ---TRANSACTION 421, ACTIVE 3 sec starting index read\n\
                      mysql tables in use 1, locked 1\nLOCK WAIT 2 lock struct(s), heap size 1128\n\
                      MySQL thread id 5, OS thread handle 1, query id 9 localhost root\n\
                      ---TRANSACTION 420, ACTIVE 4 sec\nMySQL thread id 4, OS thread handle 2\n\
                      ---TRANSACTION 59, ACTIVE 1 sec\nLOCK WAIT 2 lock struct(s)\n\
                      MariaDB thread id 11, OS thread handle 1, query id 7\n\
                      ---TRANSACTION 0x2a, LOCK WAIT, MySQL thread id 12\n";
        assert_eq!(waiting_threads(status), BTreeSet::from([5, 11, 12]));
    }

    #[test]
    fn weights_are_read_by_session_from_the_thread_ids() {
        let cell = |s: &str| Some(s.as_bytes().to_vec());
        let rows = Answer::Rows {
            columns: vec!["trx_mysql_thread_id".into(), "trx_weight".into()],
            rows: vec![
                vec![cell("12"), cell("5")],
                vec![cell("9"), cell("0")],
                // Another connection's transaction (the purge blocker).
                vec![cell("40"), cell("1")],
            ],
            warnings: 0,
        };
        let w = weights_of(&rows, &[9, 11, 12]).unwrap();
        assert_eq!(w, BTreeMap::from([(0, 0), (2, 5)]));
        let bad = Answer::Rows {
            columns: vec!["trx_mysql_thread_id".into(), "trx_weight".into()],
            rows: vec![vec![cell("12"), None]],
            warnings: 0,
        };
        assert!(weights_of(&bad, &[12]).is_err());
    }

    #[test]
    fn a_key_comparison_is_written_as_the_ranges_it_means() {
        let key = [
            ("a".to_string(), "1".to_string()),
            ("b".into(), "'x'".into()),
        ];
        assert_eq!(
            key_compared(&key, "<", "<="),
            "(`a` < 1) OR (`a` = 1 AND `b` <= 'x')"
        );
        assert_eq!(key_compared(&key[..1], ">", ">"), "(`a` > 1)");
    }

    #[test]
    fn lock_structs_are_read_from_the_monitor_with_their_pages_and_records() {
        // As MariaDB 10.11.14 printed it (innosim diff default seed 837),
        // records' fields left out.
        let status = "------------\nTRANSACTIONS\n------------\n\
            ---TRANSACTION 4749354, ACTIVE 1 sec inserting\n\
            mysql tables in use 1, locked 1\n\
            LOCK WAIT 6 lock struct(s), heap size 1128, 3 row lock(s)\n\
            MariaDB thread id 544, OS thread handle 1, query id 11569 localhost root Update\n\
            INSERT INTO `sb` VALUES (286, 8, 'x', 'y')\n\
            ------- TRX HAS BEEN WAITING 301833 us FOR THIS LOCK TO BE GRANTED:\n\
            RECORD LOCKS space id 240976 page no 3 n bits 320 index PRIMARY of table `diffx`.`sb` trx id 4749354 lock_mode X locks gap before rec insert intention waiting\n\
            Record lock, heap no 5 PHYSICAL RECORD: n_fields 6; compact format; info bits 0\n\
            ------------------\n\
            TABLE LOCK table `diffx`.`docs` trx id 4749354 lock mode IX\n\
            RECORD LOCKS space id 240977 page no 3 n bits 320 index PRIMARY of table `diffx`.`docs` trx id 4749354 lock_mode X\n\
            Record lock, heap no 1 PHYSICAL RECORD: n_fields 1; compact format; info bits 0\n\
            TABLE LOCK table `diffx`.`sb` trx id 4749354 lock mode IX\n\
            RECORD LOCKS space id 240976 page no 3 n bits 320 index PRIMARY of table `diffx`.`sb` trx id 4749354 lock_mode X locks gap before rec insert intention\n\
            RECORD LOCKS space id 240976 page no 7 n bits 320 index k of table `diffx`.`sb` trx id 4749354 lock_mode S locks rec but not gap\n\
            Record lock, heap no 4 PHYSICAL RECORD: n_fields 6; compact format; info bits 0\n\
            Record lock, heap no 6 PHYSICAL RECORD: n_fields 6; compact format; info bits 0\n\
            RECORD LOCKS space id 240976 page no 3 n bits 320 index PRIMARY of table `diffx`.`sb` trx id 4749354 lock_mode X locks gap before rec insert intention waiting\n\
            Record lock, heap no 5 PHYSICAL RECORD: n_fields 6; compact format; info bits 0\n\
            ---TRANSACTION 4749355, ACTIVE 1 sec\n\
            MariaDB thread id 9, OS thread handle 2\n\
            --------\nFILE I/O\n";
        let got = lock_structs_of(status, &[7, 544]);
        let lines: Vec<String> = got[&1].iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "docs IX",
                "docs.PRIMARY p3 X 1",
                "sb IX",
                "sb.PRIMARY p3 X,GAP,II 0",
                "sb.k p7 S,REC 2",
                "sb.PRIMARY p3 X,GAP,II waiting 1",
            ]
        );
        assert_eq!(got.len(), 1, "a connection not the scenario's is left out");
    }
}
