//! The engine thread: one `engine::sql::Server`, statements in the order
//! they arrive, blocked ones resumed until they end.

use super::host::{Host, CRASH_KINDS};
use super::{Logger, Sockets, TICK_US};
use engine::sql::error::SqlError;
use engine::sql::{ConnId, Outcome, Reply, Server};
use std::collections::HashSet;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// A statement's answer, with the connection's state after it.
pub(super) struct Answer {
    pub(super) reply: Reply,
    pub(super) in_trans: bool,
    pub(super) autocommit: bool,
    pub(super) insert_id: u64,
    pub(super) sources: Vec<Option<engine::sql::ColumnSource>>,
}

/// What a connection thread asks the engine thread.
pub(super) enum Msg {
    Connect(Sender<ConnId>),
    Query {
        conn: ConnId,
        sql: String,
        answer: Sender<Answer>,
    },
    Disconnect(ConnId),
    /// The user the connection logged in as.
    Client {
        conn: ConnId,
        user: String,
        host: String,
    },
    /// COM_PROCESS_KILL.
    Kill {
        conn: ConnId,
        target: u32,
        answer: Sender<Answer>,
    },
    /// COM_STATISTICS.
    Statistics(Sender<String>),
    /// COM_SHUTDOWN, from this connection.
    Shutdown(ConnId),
    /// COM_STMT_PREPARE: what the statement returns.
    Describe {
        conn: ConnId,
        sql: String,
        answer: Sender<Described>,
    },
    /// COM_FIELD_LIST: a table's columns matching a pattern.
    FieldList {
        conn: ConnId,
        table: String,
        wildcard: String,
        answer: Sender<Result<Vec<engine::sql::ColumnSource>, engine::sql::error::SqlError>>,
    },
}

/// A prepared statement's result columns, as the SQL layer describes
/// them (`None`: known only once it runs).
pub(super) type Described = Result<Option<engine::sql::Described>, engine::sql::error::SqlError>;

/// The engine thread: statements in arrival order, blocked ones resumed
/// until they end. When the machine goes down (a crash armed with
/// `SET GLOBAL innosim_crash`) or the engine stops itself (a failed fsync
/// or rollback), every connection is dropped without an answer, as a
/// crashed server's are, and the engine is opened again (recovery's report
/// in the log). `SHUTDOWN` (or COM_SHUTDOWN, or the stop flag that SIGTERM
/// raises) closes the engine cleanly and ends the thread.
pub(super) fn engine_loop(
    mut host: Box<dyn Host>,
    server: Server,
    rx: Receiver<Msg>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    log: Logger,
    sockets: Sockets,
) -> Result<(), String> {
    let mut server = Some(server);
    let mut blocked: Vec<(ConnId, Sender<Answer>)> = Vec::new();
    // The connections of this engine: a message from one opened before
    // the last crash finds its connection gone.
    let mut live: HashSet<ConnId> = HashSet::new();
    let started_us = server.as_mut().map_or(0, |s| s.engine().now_us());
    let mut questions = 0u64;
    // The connection that asked for a shutdown, whose answer is on its way.
    let mut asker: Option<ConnId> = None;
    let answer = |server: &Server, c: ConnId, reply: Reply| {
        let (in_trans, autocommit) = server.transaction_state(c);
        Answer {
            reply,
            in_trans,
            autocommit,
            insert_id: server.statement_insert_id(c),
            sources: server.result_columns(c).to_vec(),
        }
    };
    let ok = || Reply::Ok {
        affected: 0,
        info: None,
        warnings: 0,
    };
    loop {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let srv = server.as_mut().expect("open between crashes");
        // Wait for a message, or until the earliest lock wait deadline on
        // the engine's clock, or the next round of background work; a
        // blocked statement with no deadline (a commit waiting for the
        // group commit's sync) is resumed again soon.
        let now = srv.engine().now_us();
        let mut wait_us = TICK_US;
        for (c, _) in &blocked {
            wait_us = wait_us.min(match srv.wait_deadline_us(*c) {
                Some(d) => d.saturating_sub(now),
                None => 1_000,
            });
        }
        match rx.recv_timeout(Duration::from_micros(wait_us.max(100))) {
            Ok(Msg::Connect(back)) => {
                let c = srv.connect();
                live.insert(c);
                let _ = back.send(c);
            }
            // A connection from before a crash: dropping its answer ends
            // it.
            Ok(Msg::Query { conn, .. }) if !live.contains(&conn) => {}
            Ok(Msg::Query {
                conn,
                sql,
                answer: back,
            }) => {
                questions += 1;
                match admin_command(&sql) {
                    Some(Admin::Shutdown) => {
                        log(format!("connection {conn} asked for a shutdown"));
                        let _ = back.send(answer(srv, conn, ok()));
                        asker = Some(conn);
                        stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    Some(Admin::Crash(Err(e))) => {
                        let _ = back.send(answer(srv, conn, Reply::Error(e)));
                    }
                    Some(Admin::Crash(Ok((kind, after)))) => match host.arm_crash(&kind, after) {
                        Ok(()) => {
                            log(format!(
                                "connection {conn} armed a crash: {kind}{}",
                                after.map_or(String::new(), |n| format!(" after {n} I/Os"))
                            ));
                            if !host.crashed() {
                                let _ = back.send(answer(srv, conn, ok()));
                            }
                        }
                        Err(e) => {
                            let e = SqlError::new(1231, e);
                            let _ = back.send(answer(srv, conn, Reply::Error(e)));
                        }
                    },
                    None => match srv.execute(conn, &sql) {
                        Outcome::Done(reply) => {
                            if !down(srv, host.as_ref()) {
                                let _ = back.send(answer(srv, conn, reply));
                            }
                        }
                        Outcome::Blocked => blocked.push((conn, back)),
                    },
                }
            }
            Ok(Msg::Client { conn, user, host }) => {
                if live.contains(&conn) {
                    srv.set_client(conn, &user, &host)
                }
            }
            Ok(Msg::Kill { conn, .. }) if !live.contains(&conn) => {}
            Ok(Msg::Kill {
                conn,
                target,
                answer: back,
            }) => {
                let reply = match srv.kill(conn, u64::from(target), false) {
                    Ok(()) => ok(),
                    Err(e) => Reply::Error(e),
                };
                let _ = back.send(answer(srv, conn, reply));
            }
            Ok(Msg::Describe { conn, .. }) if !live.contains(&conn) => {}
            Ok(Msg::Describe {
                conn,
                sql,
                answer: back,
            }) => {
                let _ = back.send(srv.describe(conn, &sql));
            }
            Ok(Msg::FieldList { conn, .. }) if !live.contains(&conn) => {}
            Ok(Msg::FieldList {
                conn,
                table,
                wildcard,
                answer: back,
            }) => {
                let _ = back.send(srv.table_columns(conn, &table, &wildcard));
            }
            Ok(Msg::Statistics(back)) => {
                let uptime = (srv.engine().now_us().saturating_sub(started_us) / 1_000_000).max(1);
                let threads = sockets.lock().map_or(0, |m| m.len());
                let _ = back.send(format!(
                    "Uptime: {uptime}  Threads: {threads}  Questions: {questions}  \
                     Slow queries: 0  Opens: 0  Flush tables: 1  Open tables: 0  \
                     Queries per second avg: {:.3}",
                    questions as f64 / uptime as f64
                ));
            }
            Ok(Msg::Shutdown(conn)) => {
                log(format!("connection {conn} asked for a shutdown"));
                asker = Some(conn);
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(Msg::Disconnect(conn)) => {
                if live.remove(&conn) {
                    blocked.retain(|(c, _)| *c != conn);
                    match srv.disconnect(conn) {
                        Ok(()) => log(format!("connection {conn} closed")),
                        Err(e) => log(format!("connection {conn} closed: {e}")),
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !down(srv, host.as_ref()) {
            if let Err(e) = srv.tick() {
                log(format!("background work: {e}"));
            }
        }
        // Whatever ran may have released a lock, and time has passed.
        let mut still = Vec::with_capacity(blocked.len());
        for (conn, back) in blocked.drain(..) {
            if down(srv, host.as_ref()) {
                break;
            }
            match srv.resume(conn) {
                Outcome::Done(reply) => {
                    if !down(srv, host.as_ref()) {
                        let _ = back.send(answer(srv, conn, reply));
                    }
                }
                Outcome::Blocked => still.push((conn, back)),
            }
        }
        blocked = still;
        // KILL: the connection's socket is shut, its thread sees the end
        // and disconnects it (rolling back what it had open).
        for k in srv.take_killed() {
            if let Some(close) = sockets.lock().ok().and_then(|mut m| m.remove(&k)) {
                close();
            }
            log(format!("connection {k} killed"));
        }
        if down(srv, host.as_ref()) {
            let why = match srv.engine().halted() {
                Some(why) => format!("the engine stopped: {why}"),
                None => "the machine went down".to_string(),
            };
            log(format!("{why}; every connection dropped"));
            // Their answers are never sent; their sockets close.
            blocked.clear();
            live.clear();
            if let Ok(mut m) = sockets.lock() {
                for (_, close) in m.drain() {
                    close();
                }
            }
            let next = srv.next_conn_id();
            drop(server.take());
            log(host.restart());
            let (mut s, report) = host.open()?;
            s.continue_conn_ids(next);
            log(format!("recovered: {report:?}"));
            server = Some(s);
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
    let closed = server
        .take()
        .map_or(Ok(()), |s| s.close().map_err(|e| e.to_string()));
    log(match &closed {
        Ok(()) => "engine closed cleanly".to_string(),
        Err(e) => format!("engine closed: {e}"),
    });
    closed
}

/// Whether the engine can go on: not if the machine went down or the
/// engine stopped itself.
fn down(server: &mut Server, host: &dyn Host) -> bool {
    host.crashed() || server.engine().halted().is_some()
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
