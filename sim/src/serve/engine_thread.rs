//! The engine thread: one `engine::sql::Server`, the events of every
//! connection in the order they arrive, blocked statements resumed until
//! they end.
//!
//! What the thread does with an event is [`Core::handle`], a function of
//! the engine's state, the event and the clock's reading alone: the live
//! server feeds it the messages of its connection threads (and an
//! [`Event::Idle`] whenever a wait ends with none); `--record FILE` writes
//! each event with the clock's reading and a digest of each answer; and
//! `innosim replay-served FILE` feeds the same events to a new engine on
//! the simulated disk with a manual clock set to each reading, and
//! compares the answers (`super::record`).

use super::host::{advance_to, Host, CRASH_KINDS};
use super::record::SharedRecorder;
use super::{Logger, Sockets, TICK_US};
use engine::io::Clock;
use engine::sql::error::SqlError;
use engine::sql::{ConnId, Outcome, Reply, Server};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// A statement's answer, with the connection's state after it.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) reply: Reply,
    pub(super) in_trans: bool,
    pub(super) autocommit: bool,
    pub(super) insert_id: u64,
    pub(super) sources: Vec<Option<engine::sql::ColumnSource>>,
}

/// A prepared statement's result columns, as the SQL layer describes
/// them (`None`: known only once it runs).
pub(super) type Described = Result<Option<engine::sql::Described>, SqlError>;

/// A table's columns for COM_FIELD_LIST.
pub(super) type Fields = Result<Vec<engine::sql::ColumnSource>, SqlError>;

/// What the engine thread is asked, by which connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A new connection (answered with its id).
    Connect,
    /// COM_QUERY, or a prepared statement's execute as text.
    Query { conn: ConnId, sql: String },
    /// The user the connection logged in as.
    Client {
        conn: ConnId,
        user: String,
        host: String,
    },
    /// COM_PROCESS_KILL.
    Kill { conn: ConnId, target: u32 },
    /// COM_STATISTICS.
    Statistics { conn: ConnId },
    /// COM_SHUTDOWN.
    Shutdown { conn: ConnId },
    /// COM_STMT_PREPARE: what the statement returns.
    Describe { conn: ConnId, sql: String },
    /// COM_FIELD_LIST.
    FieldList {
        conn: ConnId,
        table: String,
        wildcard: String,
    },
    /// The connection closed.
    Disconnect { conn: ConnId },
    /// A wait ended with nothing arrived: background work, and blocked
    /// statements resumed.
    Idle,
}

/// Where the answer to an event goes.
pub(super) enum Back {
    Conn(Sender<ConnId>),
    Answer(Sender<Answer>),
    Described(Sender<Described>),
    Fields(Sender<Fields>),
    Stats(Sender<String>),
}

/// A connection thread's message: an event and where its answer goes.
pub(super) struct Msg {
    pub(super) event: Event,
    pub(super) back: Option<Back>,
}

/// An answer the engine thread gives.
#[derive(Debug)]
pub(super) enum Output {
    Conn(ConnId),
    Answer(Answer),
    Described(Described),
    Fields(Fields),
    Stats(String),
}

impl Output {
    /// A digest of what the client would receive (a recording keeps it,
    /// a replay compares it).
    pub(super) fn digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let text = match self {
            // The result columns' sources follow from the statement.
            Output::Answer(a) => format!(
                "{:?} {} {} {}",
                a.reply, a.in_trans, a.autocommit, a.insert_id
            ),
            other => format!("{other:?}"),
        };
        // SipHash with fixed keys: the same on every run and machine.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    }
}

/// To whom an output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum To {
    /// The connection whose event it answers.
    Asker,
    /// A connection whose blocked statement ended.
    Resumed(ConnId),
}

/// What handling one event did, besides its outputs.
#[derive(Debug, Default)]
pub(super) struct Effects {
    /// Answers, in order.
    pub(super) outputs: Vec<(To, Output)>,
    /// The asker's statement blocked.
    pub(super) blocked: bool,
    /// Connections KILL ended (their sockets to be shut).
    pub(super) killed: Vec<ConnId>,
    /// The machine went down or the engine stopped: every connection is
    /// dropped unanswered, and the engine was opened again.
    pub(super) dropped_all: bool,
    /// SHUTDOWN: the thread ends.
    pub(super) stop: bool,
}

/// The engine thread's state: the engine on its host, its connections,
/// its blocked statements.
pub(super) struct Core {
    host: Box<dyn Host>,
    server: Option<Server>,
    blocked: Vec<ConnId>,
    /// The connections of this engine: an event from one opened before
    /// the last crash finds its connection gone.
    live: HashSet<ConnId>,
    started_us: u64,
    questions: u64,
    max_connections: u64,
    /// The first connection id after a crash.
    next_conn: ConnId,
    log: Logger,
}

impl Core {
    /// The engine `server` on `host`, admitting `max_connections` (again
    /// after every restart).
    pub(super) fn new(
        host: Box<dyn Host>,
        mut server: Server,
        max_connections: u64,
        log: Logger,
    ) -> Core {
        server.set_max_connections(max_connections);
        let started_us = server.engine().now_us();
        Core {
            host,
            server: Some(server),
            blocked: Vec::new(),
            live: HashSet::new(),
            started_us,
            questions: 0,
            max_connections,
            next_conn: 0,
            log,
        }
    }

    /// The engine's clock, which the caller moves before each event.
    pub(super) fn clock(&self) -> std::sync::Arc<engine::io::ManualClock> {
        self.host.clock()
    }

    fn srv(&mut self) -> &mut Server {
        self.server.as_mut().expect("open between crashes")
    }

    /// The engine's clock.
    pub(super) fn now_us(&mut self) -> u64 {
        self.srv().engine().now_us()
    }

    /// How long to wait for the next event: until the earliest lock wait
    /// deadline on the engine's clock, or the next round of background
    /// work; a blocked statement with no deadline (a commit waiting for
    /// the group commit's sync) is resumed again soon.
    pub(super) fn wait_us(&mut self) -> u64 {
        let now = self.now_us();
        let blocked = self.blocked.clone();
        let srv = self.srv();
        let mut wait_us = TICK_US;
        for c in blocked {
            wait_us = wait_us.min(match srv.wait_deadline_us(c) {
                Some(d) => d.saturating_sub(now),
                None => 1_000,
            });
        }
        wait_us.max(100)
    }

    /// Handles one event, then the background work and the blocked
    /// statements it may have freed. If the machine went down or the
    /// engine stopped, `Effects::dropped_all` says so and the engine is
    /// closed: the caller drops every connection, then calls
    /// [`Core::reopen`].
    pub(super) fn handle(&mut self, event: &Event) -> Result<Effects, String> {
        let mut fx = Effects::default();
        let ok = || Reply::Ok {
            affected: 0,
            info: None,
            warnings: 0,
        };
        let live = |c: &ConnId| self.live.contains(c);
        match event {
            Event::Connect => {
                let c = self.srv().connect();
                self.live.insert(c);
                fx.outputs.push((To::Asker, Output::Conn(c)));
            }
            // A connection from before a crash: no answer ends it.
            Event::Query { conn, .. }
            | Event::Kill { conn, .. }
            | Event::Describe { conn, .. }
            | Event::FieldList { conn, .. }
            | Event::Client { conn, .. }
                if !live(conn) => {}
            Event::Query { conn, sql } => {
                let conn = *conn;
                self.questions += 1;
                match admin_command(sql) {
                    Some(Admin::Shutdown) => {
                        (self.log)(format!("connection {conn} asked for a shutdown"));
                        let a = answer(self.srv(), conn, ok());
                        fx.outputs.push((To::Asker, Output::Answer(a)));
                        fx.stop = true;
                    }
                    Some(Admin::Crash(Err(e))) => {
                        let a = answer(self.srv(), conn, Reply::Error(e));
                        fx.outputs.push((To::Asker, Output::Answer(a)));
                    }
                    Some(Admin::Crash(Ok((kind, after)))) => {
                        match self.host.arm_crash(&kind, after) {
                            Ok(()) => {
                                (self.log)(format!(
                                    "connection {conn} armed a crash: {kind}{}",
                                    after.map_or(String::new(), |n| format!(" after {n} I/Os"))
                                ));
                                if !self.host.crashed() {
                                    let a = answer(self.srv(), conn, ok());
                                    fx.outputs.push((To::Asker, Output::Answer(a)));
                                }
                            }
                            Err(e) => {
                                let e = SqlError::new(1231, e);
                                let a = answer(self.srv(), conn, Reply::Error(e));
                                fx.outputs.push((To::Asker, Output::Answer(a)));
                            }
                        }
                    }
                    None => match self.srv().execute(conn, sql) {
                        Outcome::Done(reply) => {
                            if !self.down() {
                                let a = answer(self.srv(), conn, reply);
                                fx.outputs.push((To::Asker, Output::Answer(a)));
                            }
                        }
                        Outcome::Blocked => {
                            self.blocked.push(conn);
                            fx.blocked = true;
                        }
                    },
                }
            }
            Event::Client { conn, user, host } => self.srv().set_client(*conn, user, host),
            Event::Kill { conn, target } => {
                let reply = match self.srv().kill(*conn, u64::from(*target), false) {
                    Ok(()) => ok(),
                    Err(e) => Reply::Error(e),
                };
                let a = answer(self.srv(), *conn, reply);
                fx.outputs.push((To::Asker, Output::Answer(a)));
            }
            Event::Describe { conn, sql } => {
                let d = self.srv().describe(*conn, sql);
                fx.outputs.push((To::Asker, Output::Described(d)));
            }
            Event::FieldList {
                conn,
                table,
                wildcard,
            } => {
                let f = self.srv().table_columns(*conn, table, wildcard);
                fx.outputs.push((To::Asker, Output::Fields(f)));
            }
            Event::Statistics { .. } => {
                let now = self.now_us();
                let uptime = (now.saturating_sub(self.started_us) / 1_000_000).max(1);
                fx.outputs.push((
                    To::Asker,
                    Output::Stats(format!(
                        "Uptime: {uptime}  Threads: {}  Questions: {}  \
                         Slow queries: 0  Opens: 0  Flush tables: 1  Open tables: 0  \
                         Queries per second avg: {:.3}",
                        self.live.len(),
                        self.questions,
                        self.questions as f64 / uptime as f64
                    )),
                ));
            }
            Event::Shutdown { conn } => {
                (self.log)(format!("connection {conn} asked for a shutdown"));
                fx.stop = true;
            }
            Event::Disconnect { conn } => {
                if self.live.remove(conn) {
                    self.blocked.retain(|c| c != conn);
                    match self.srv().disconnect(*conn) {
                        Ok(()) => (self.log)(format!("connection {conn} closed")),
                        Err(e) => (self.log)(format!("connection {conn} closed: {e}")),
                    }
                }
            }
            Event::Idle => {}
        }
        if !self.down() {
            if let Err(e) = self.srv().tick() {
                (self.log)(format!("background work: {e}"));
            }
        }
        // Whatever ran may have released a lock, and time has passed.
        let mut still = Vec::with_capacity(self.blocked.len());
        for conn in std::mem::take(&mut self.blocked) {
            if self.down() {
                break;
            }
            match self.srv().resume(conn) {
                Outcome::Done(reply) => {
                    if !self.down() {
                        let a = answer(self.srv(), conn, reply);
                        fx.outputs.push((To::Resumed(conn), Output::Answer(a)));
                    }
                }
                Outcome::Blocked => still.push(conn),
            }
        }
        self.blocked = still;
        // KILL: the connection's socket is shut, its thread sees the end
        // and disconnects it (rolling back what it had open).
        // A killed connection ends here, not when its thread next reads:
        // a statement it sent meanwhile finds it gone and is not run.
        fx.killed = self.srv().take_killed();
        for k in &fx.killed {
            (self.log)(format!("connection {k} killed"));
            if self.live.remove(k) {
                self.blocked.retain(|c| c != k);
                if let Err(e) = self.srv().disconnect(*k) {
                    (self.log)(format!("connection {k} closed: {e}"));
                }
            }
        }
        if self.down() {
            let why = match self.srv().engine().halted() {
                Some(why) => format!("the engine stopped: {why}"),
                None => "the machine went down".to_string(),
            };
            (self.log)(format!("{why}; every connection dropped"));
            // Their answers are never sent.
            fx.outputs.clear();
            fx.blocked = false;
            fx.dropped_all = true;
            self.blocked.clear();
            self.live.clear();
            self.next_conn = self.srv().next_conn_id();
            // The clients learn of it now; the engine is opened again by
            // `reopen`, after their sockets are shut.
            drop(self.server.take());
        }
        Ok(fx)
    }

    /// After an event that took the machine down (`Effects::dropped_all`):
    /// brings it back and opens the engine again, running recovery. An
    /// error is recovery failing: the server cannot go on.
    /// `wall`, when given (the live server's wall clock, through the
    /// Clock trait; a replay gives none), times the two steps for the log.
    pub(super) fn reopen(&mut self, wall: Option<&dyn Clock>) -> Result<(), String> {
        let took = |from: Option<u64>| match (wall, from) {
            (Some(w), Some(t)) => format!(" (in {} us)", w.now_us().saturating_sub(t)),
            _ => String::new(),
        };
        let began = wall.map(|w| w.now_us());
        let restarted = self.host.restart();
        (self.log)(format!("{restarted}{}", took(began)));
        let began = wall.map(|w| w.now_us());
        let (mut s, report) = self.host.open()?;
        s.continue_conn_ids(self.next_conn);
        s.set_max_connections(self.max_connections);
        (self.log)(format!("recovered{}: {report:?}", took(began)));
        self.server = Some(s);
        Ok(())
    }

    /// Closes the engine cleanly.
    pub(super) fn close(mut self) -> Result<(), String> {
        match self.server.take() {
            Some(s) => s.close().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// Whether the engine can go on: not if the machine went down or the
    /// engine stopped itself.
    fn down(&mut self) -> bool {
        self.host.crashed() || self.srv().engine().halted().is_some()
    }
}

/// A statement's answer with the connection's state after it.
fn answer(server: &Server, c: ConnId, reply: Reply) -> Answer {
    let (in_trans, autocommit) = server.transaction_state(c);
    Answer {
        reply,
        in_trans,
        autocommit,
        insert_id: server.statement_insert_id(c),
        sources: server.result_columns(c).to_vec(),
    }
}

/// The engine thread: the connection threads' messages in arrival order.
/// When the machine goes down (a crash armed with `SET GLOBAL
/// innosim_crash`) or the engine stops itself (a failed fsync or
/// rollback), every connection is dropped without an answer, as a crashed
/// server's are, and the engine is opened again (recovery's report in the
/// log). `SHUTDOWN` (or COM_SHUTDOWN, or the stop flag that SIGTERM
/// raises) closes the engine cleanly and ends the thread.
pub(super) fn engine_loop(
    mut core: Core,
    rx: Receiver<Msg>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sockets: Sockets,
    mut recorder: Option<SharedRecorder>,
    log: Logger,
    frozen_clock: bool,
) -> Result<(), String> {
    // The engine's clock follows the wall clock, moved once per event
    // (unless it is frozen: see `Settings::frozen_clock`).
    let clock = core.clock();
    let wall = engine::io::OsClock::new();
    // Where the answers of blocked statements go.
    let mut waiting: HashMap<ConnId, Sender<Answer>> = HashMap::new();
    // The connection that asked for a shutdown, whose answer is on its way.
    let mut asker: Option<ConnId> = None;
    loop {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let wait = Duration::from_micros(core.wait_us());
        let (event, mut back) = match rx.recv_timeout(wait) {
            Ok(m) => (m.event, m.back),
            Err(RecvTimeoutError::Timeout) => (Event::Idle, None),
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if !frozen_clock {
            advance_to(&clock, wall.now_us());
        }
        let now = core.now_us();
        let fx = match core.handle(&event) {
            Ok(fx) => fx,
            Err(e) => {
                // Recovery failed: the server cannot go on. Every client
                // sees its connection end.
                if let Ok(mut m) = sockets.lock() {
                    for (_, close) in m.drain() {
                        close();
                    }
                }
                log(format!("recovery failed, the server stops: {e}"));
                return Err(e);
            }
        };
        if let Some(r) = recorder.as_ref() {
            let written = r
                .lock()
                .map_err(|_| "poisoned".to_string())
                .and_then(|mut r| r.event(now, &event, &fx));
            if let Err(e) = written {
                log(format!("--record stopped: {e}"));
                recorder = None;
            }
        }
        let from = match &event {
            Event::Query { conn, .. } | Event::Shutdown { conn } => Some(*conn),
            _ => None,
        };
        if fx.stop {
            asker = from;
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if fx.blocked {
            if let (Some(c), Some(Back::Answer(tx))) = (from, back.take()) {
                waiting.insert(c, tx);
            }
        }
        for (to, out) in fx.outputs {
            match (to, out) {
                (To::Resumed(c), Output::Answer(a)) => {
                    if let Some(tx) = waiting.remove(&c) {
                        let _ = tx.send(a);
                    }
                }
                (To::Asker, out) => match (back.take(), out) {
                    (Some(Back::Conn(tx)), Output::Conn(c)) => drop(tx.send(c)),
                    (Some(Back::Answer(tx)), Output::Answer(a)) => drop(tx.send(a)),
                    (Some(Back::Described(tx)), Output::Described(d)) => drop(tx.send(d)),
                    (Some(Back::Fields(tx)), Output::Fields(f)) => drop(tx.send(f)),
                    (Some(Back::Stats(tx)), Output::Stats(s)) => drop(tx.send(s)),
                    _ => {}
                },
                _ => {}
            }
        }
        if let Event::Disconnect { conn } = &event {
            waiting.remove(conn);
        }
        for k in &fx.killed {
            if let Some(close) = sockets.lock().ok().and_then(|mut m| m.remove(k)) {
                close();
            }
        }
        if fx.dropped_all {
            // Their answers are never sent; their sockets close, and then
            // the machine comes back.
            waiting.clear();
            if let Ok(mut m) = sockets.lock() {
                for (_, close) in m.drain() {
                    close();
                }
            }
            if let Err(e) = core.reopen(Some(&wall)) {
                log(format!("recovery failed, the server stops: {e}"));
                return Err(e);
            }
        }
    }
    // Every other connection is closed; the asker's thread sends its
    // answer and sees the end when it next reads.
    if let Ok(mut m) = sockets.lock() {
        for (c, close) in m.drain() {
            if Some(c) != asker {
                close();
            }
        }
    }
    let closed = core.close();
    log(match &closed {
        Ok(()) => "engine closed cleanly".to_string(),
        Err(e) => format!("engine closed: {e}"),
    });
    closed
}

/// A statement the server answers itself rather than the SQL layer.
enum Admin {
    /// `SHUTDOWN`.
    Shutdown,
    /// `SET GLOBAL innosim_crash = 'KIND' [AFTER n]`: the kind and the
    /// I/O count, or why the statement is wrong.
    Crash(Result<(String, Option<u64>), SqlError>),
}

/// Recognizes the server's own statements: `SHUTDOWN`, and
/// `SET [GLOBAL|@@global.]innosim_crash = 'KIND' [AFTER n]`.
fn admin_command(sql: &str) -> Option<Admin> {
    let words: Vec<&str> = sql
        .trim()
        .trim_end_matches(';')
        .split(|c: char| c.is_whitespace() || c == '=')
        .filter(|w| !w.is_empty())
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    match lower
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["shutdown"] => Some(Admin::Shutdown),
        ["set", "global", "innosim_crash", ..] => Some(Admin::Crash(crash_args(&words[3..]))),
        ["set", "@@global.innosim_crash", ..] => Some(Admin::Crash(crash_args(&words[2..]))),
        _ => None,
    }
}

/// `'KIND' [AFTER n]`.
fn crash_args(words: &[&str]) -> Result<(String, Option<u64>), SqlError> {
    let wrong = || {
        SqlError::new(
            1231,
            format!(
                "Variable 'innosim_crash' can't be set to the value of '{}' (one of {}, optionally followed by AFTER n)",
                words.join(" "),
                CRASH_KINDS.join(", ")
            ),
        )
    };
    let kind = words
        .first()
        .map(|w| {
            w.trim_matches(|c| c == '\'' || c == '"')
                .to_ascii_lowercase()
        })
        .filter(|k| CRASH_KINDS.contains(&k.as_str()))
        .ok_or_else(wrong)?;
    match &words[1..] {
        [] => Ok((kind, None)),
        [after, n] if after.eq_ignore_ascii_case("after") => n
            .parse::<u64>()
            .map(|n| Ok((kind, Some(n))))
            .map_err(|_| wrong())?,
        _ => Err(wrong()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_statements_are_recognized_and_checked() {
        assert!(matches!(
            admin_command(" shutdown ;"),
            Some(Admin::Shutdown)
        ));
        assert!(admin_command("SELECT 1").is_none());
        assert!(admin_command("SET GLOBAL innodb_strict_mode = 1").is_none());
        match admin_command("SET GLOBAL innosim_crash = 'power-loss' AFTER 40") {
            Some(Admin::Crash(Ok((k, n)))) => assert_eq!((k.as_str(), n), ("power-loss", Some(40))),
            _ => panic!("not parsed"),
        }
        match admin_command("set @@global.innosim_crash='PROCESS-CRASH'") {
            Some(Admin::Crash(Ok((k, n)))) => assert_eq!((k.as_str(), n), ("process-crash", None)),
            _ => panic!("not parsed"),
        }
        for bad in [
            "SET GLOBAL innosim_crash = 'meteor'",
            "SET GLOBAL innosim_crash = 'power-loss' AFTER",
            "SET GLOBAL innosim_crash = 'power-loss' AFTER -3",
            "SET GLOBAL innosim_crash = 'power-loss' BEFORE 3",
            "SET GLOBAL innosim_crash",
        ] {
            match admin_command(bad) {
                Some(Admin::Crash(Err(e))) => assert_eq!(e.code, 1231, "{bad}"),
                _ => panic!("{bad}: not refused"),
            }
        }
    }
}
