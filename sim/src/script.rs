//! Scenario scripts in mysqltest's language, run on the simulated disk and
//! clock (so `--sleep 50` costs no wall time), with crash and restart
//! commands no mysqltest has. Mirrors `client/mysqltest.cc` for the
//! commands concurrency tests use:
//!
//! - SQL statements end with `;` and may span lines; `#` starts a comment.
//! - `connect (name, ...)`, `connection name`, `disconnect name`; a
//!   connection switched to for the first time is opened then. The first
//!   connection is `default`.
//! - `send [statement]` starts a statement without waiting for it (the
//!   statement is the rest of the line, or the next one); `reap` takes its
//!   result. If it is still blocked then, the clock runs to its lock wait
//!   deadline. A `send` still blocked when the next command runs prints
//!   `-- <name> is blocked`, once.
//! - `error <code|name>[,<code|name>...]` before a statement expects it to
//!   fail with one of them; an unexpected error stops the script.
//! - `echo text`, `sleep <seconds>` (simulated), `source <file>`,
//!   `replace_column <n> <text> ...`, `replace_regex /pattern/replacement/
//!   ...` (on the next result set), `let $v = value` or
//!   ``let $v = `query` ``, `disable_query_log`, `enable_query_log`,
//!   `disable_result_log`, `enable_result_log`, `disable_warnings`,
//!   `enable_warnings`. Commands take the `--cmd args` form or the
//!   `cmd args;` form.
//! - `crash [process|power [torn]] [after <n>]`: the process dies (the
//!   operating system keeps every write), or the power goes (unsynced
//!   writes are lost, or with `torn` each kept, lost or torn as drawn from
//!   the replay seed); `after <n>` arms it at the n-th next I/O operation
//!   instead of now.
//! - `restart [variable=value ...]`: starts the server again, recovering
//!   after a crash or after a clean shutdown otherwise, with startup
//!   settings (innodb_flush_log_at_trx_commit, innodb_lock_wait_timeout,
//!   innodb_buffer_pool_pages, innodb_doublewrite, innodb_rollback_on_timeout).
//!   Every connection is gone.
//! - `replay-seed <n>`: the seed torn-write crashes draw from.
//!
//! The output is mysqltest's: each statement echoed (unless the query log
//! is off), result sets tab-separated under a header line, warnings under
//! `Warnings:`, an expected error as `ERROR <SQLSTATE>: <text>` (`Got one of
//! the listed errors` when `--error` lists several), as mysqltest writes them.

use crate::clock::SimClock;
use crate::storage::{CrashMode, PowerLossPolicy, SimStorage};
use engine::io::Storage as _;
use engine::sql::{format, ConnId, Outcome, Reply, Server};
use engine::{Config, FlushAtCommit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A script that could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// A command is malformed or unknown.
    #[error("{file}:{line}: {message}")]
    Command {
        /// The script.
        file: String,
        /// Its line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {0}: {1}")]
    Read(String, std::io::Error),
}

/// The result of running a script: its output, and whether it stopped at
/// an unexpected error (which the output's last line says).
#[derive(Debug)]
pub struct ScriptRun {
    /// What mysqltest would have written.
    pub output: String,
    /// The script stopped at an unexpected error (or a missing one).
    pub aborted: bool,
    /// Simulated microseconds the script took.
    pub elapsed_us: u64,
}

struct Conn {
    id: ConnId,
    /// A `send` whose result has not been reaped: the finished reply, if
    /// it finished.
    sent: Option<Option<Reply>>,
    /// Its blocked state was reported.
    reported_blocked: bool,
}

struct Runner {
    storage: SimStorage,
    clock: SimClock,
    config: Config,
    server: Option<Server>,
    conns: BTreeMap<String, Conn>,
    current: String,
    out: String,
    query_log: bool,
    result_log: bool,
    warnings_log: bool,
    expect: Option<Vec<u16>>,
    replace: Vec<(usize, String)>,
    /// `replace_regex` for the next result: (pattern, replacement).
    replace_regex: Vec<(regex::Regex, String)>,
    vars: BTreeMap<String, String>,
    seed: u64,
    /// How the armed crash ends (set by `crash`, used by `restart`).
    pending_crash: Option<CrashMode>,
    file: String,
    line: usize,
}

/// The engine settings scripts start with.
pub fn script_config() -> Config {
    Config {
        buffer_pool_pages: 256,
        ..Config::default()
    }
}

/// Runs a script file.
pub fn run_file(path: &Path) -> Result<ScriptRun, ScriptError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScriptError::Read(path.display().to_string(), e))?;
    run_text(
        &text,
        &path.display().to_string(),
        path.parent().map(Path::to_path_buf),
    )
}

/// Runs a script's text (`dir`: where `source` looks).
pub fn run_text(text: &str, name: &str, dir: Option<PathBuf>) -> Result<ScriptRun, ScriptError> {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let mut r = Runner {
        storage,
        clock,
        config: script_config(),
        server: None,
        conns: BTreeMap::new(),
        current: "default".into(),
        out: String::new(),
        query_log: true,
        result_log: true,
        warnings_log: true,
        expect: None,
        replace: Vec::new(),
        replace_regex: Vec::new(),
        vars: BTreeMap::new(),
        seed: 0,
        pending_crash: None,
        file: name.to_string(),
        line: 0,
    };
    r.start()?;
    let start = r.clock_now();
    let aborted = match r.run(text, dir.as_deref()) {
        Ok(()) => false,
        Err(Stop::Aborted) => true,
        Err(Stop::Error(e)) => return Err(e),
    };
    let elapsed_us = r.clock_now() - start;
    Ok(ScriptRun {
        output: r.out,
        aborted,
        elapsed_us,
    })
}

enum Stop {
    /// An unexpected error ended the script; the output says so.
    Aborted,
    Error(ScriptError),
}

impl From<ScriptError> for Stop {
    fn from(e: ScriptError) -> Self {
        Stop::Error(e)
    }
}

impl Runner {
    fn clock_now(&self) -> u64 {
        use engine::io::Clock;
        self.clock.now_us()
    }

    fn bad(&self, message: impl Into<String>) -> ScriptError {
        ScriptError::Command {
            file: self.file.clone(),
            line: self.line,
            message: message.into(),
        }
    }

    fn start(&mut self) -> Result<(), ScriptError> {
        let (server, _) = Server::open(
            Box::new(self.storage.clone()),
            Box::new(self.clock.clone()),
            self.config.clone(),
        )
        .map_err(|e| self.bad(format!("the server did not start: {e}")))?;
        self.server = Some(server);
        self.conns.clear();
        self.current = "default".into();
        Ok(())
    }

    fn server(&mut self) -> &mut Server {
        self.server
            .as_mut()
            .expect("the server runs between commands")
    }

    fn conn(&mut self, name: &str) -> ConnId {
        if let Some(c) = self.conns.get(name) {
            return c.id;
        }
        let id = self.server().connect();
        self.conns.insert(
            name.to_string(),
            Conn {
                id,
                sent: None,
                reported_blocked: false,
            },
        );
        id
    }

    fn run(&mut self, text: &str, dir: Option<&Path>) -> Result<(), Stop> {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        let mut stmt = String::new();
        let mut stmt_line = 0;
        while i < lines.len() {
            let raw = lines[i];
            i += 1;
            let line = raw.trim();
            if stmt.is_empty() {
                self.line = i;
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                if let Some(cmd) = line.strip_prefix("--") {
                    self.command(cmd.trim(), dir, &lines, &mut i)?;
                    continue;
                }
                if let Some(cmd) = self.known_command(line) {
                    self.command(cmd.trim_end_matches(';').trim(), dir, &lines, &mut i)?;
                    continue;
                }
                stmt_line = i;
            }
            if !stmt.is_empty() {
                stmt.push('\n');
            }
            stmt.push_str(raw.trim_end());
            if line.ends_with(';') {
                let sql = std::mem::take(&mut stmt);
                self.line = stmt_line;
                let sql = sql.trim().trim_end_matches(';').to_string();
                self.statement(&sql)?;
            }
        }
        if !stmt.is_empty() {
            self.line = stmt_line;
            return Err(Stop::Error(self.bad("a statement without its ';'")));
        }
        Ok(())
    }

    /// A line in the `cmd args;` form, if it names a command.
    fn known_command<'a>(&self, line: &'a str) -> Option<&'a str> {
        const CMDS: &[&str] = &[
            "connect",
            "connection",
            "disconnect",
            "send",
            "reap",
            "error",
            "echo",
            "sleep",
            "source",
            "replace_column",
            "let",
            "disable_query_log",
            "enable_query_log",
            "disable_result_log",
            "enable_result_log",
            "disable_warnings",
            "enable_warnings",
            "crash",
            "restart",
            "replay-seed",
            "list_files",
        ];
        let word = line
            .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
            .next()?;
        CMDS.iter()
            .any(|c| c.eq_ignore_ascii_case(word))
            .then_some(line)
    }

    fn substitute(&self, s: &str) -> String {
        let mut out = s.to_string();
        // Longest names first, so $a does not eat $ab.
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for n in names {
            out = out.replace(&format!("${n}"), &self.vars[n]);
        }
        out
    }

    fn command(
        &mut self,
        cmd: &str,
        dir: Option<&Path>,
        lines: &[&str],
        i: &mut usize,
    ) -> Result<(), Stop> {
        let cmd = self.substitute(cmd);
        let (word, rest) = match cmd.find(|c: char| c.is_whitespace() || c == '(') {
            Some(p) => (&cmd[..p], cmd[p..].trim()),
            None => (cmd.as_str(), ""),
        };
        let rest = rest.trim_end_matches(';').trim();
        self.poll_blocked();
        match word.to_ascii_lowercase().as_str() {
            "echo" => {
                self.out.push_str(rest);
                self.out.push('\n');
            }
            "connect" => {
                let inner = rest.trim_start_matches('(').trim_end_matches(')');
                let name = inner.split(',').next().unwrap_or("").trim().to_string();
                if name.is_empty() {
                    return Err(Stop::Error(self.bad("connect needs a name")));
                }
                if self.conns.contains_key(&name) {
                    return Err(Stop::Error(self.bad(format!("connection {name} exists"))));
                }
                self.conn(&name);
                self.current = name;
            }
            "connection" => {
                let name = rest.to_string();
                self.conn(&name);
                self.current = name;
            }
            "disconnect" => {
                let name = rest.to_string();
                if let Some(c) = self.conns.remove(&name) {
                    let r = self.server().disconnect(c.id);
                    if let Err(e) = r {
                        self.out.push_str(&format!("{e}\n"));
                    }
                }
            }
            "send" => {
                let sql = if rest.is_empty() {
                    // The next statement.
                    let mut s = String::new();
                    while *i < lines.len() {
                        let l = lines[*i];
                        *i += 1;
                        if s.is_empty() && (l.trim().is_empty() || l.trim().starts_with('#')) {
                            continue;
                        }
                        if !s.is_empty() {
                            s.push('\n');
                        }
                        s.push_str(l.trim_end());
                        if l.trim().ends_with(';') {
                            break;
                        }
                    }
                    s.trim().trim_end_matches(';').to_string()
                } else {
                    rest.to_string()
                };
                self.send(&sql)?;
            }
            "reap" => self.reap()?,
            "error" => {
                let mut codes = Vec::new();
                for c in rest.split(',') {
                    let c = c.trim();
                    let code = c
                        .parse::<u16>()
                        .ok()
                        .or_else(|| error_by_name(c))
                        .ok_or_else(|| self.bad(format!("unknown error {c}")))?;
                    codes.push(code);
                }
                self.expect = Some(codes);
            }
            "sleep" => {
                let secs: f64 = rest.parse().map_err(|_| self.bad("sleep needs seconds"))?;
                self.clock.advance_us((secs * 1e6) as u64);
                let _ = self.server().tick();
                self.poll_blocked();
            }
            "source" => {
                let path = dir.map_or(PathBuf::from(rest), |d| d.join(rest));
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| ScriptError::Read(path.display().to_string(), e))?;
                let (file, line) = (
                    std::mem::replace(&mut self.file, path.display().to_string()),
                    self.line,
                );
                self.run(&text, path.parent())?;
                self.file = file;
                self.line = line;
            }
            "replace_column" => {
                let parts: Vec<&str> = rest.split_whitespace().collect();
                if !parts.len().is_multiple_of(2) {
                    return Err(Stop::Error(self.bad("replace_column takes pairs")));
                }
                for p in parts.chunks(2) {
                    let n: usize = p[0]
                        .parse()
                        .map_err(|_| self.bad("replace_column needs column numbers"))?;
                    self.replace.push((n, p[1].to_string()));
                }
            }
            "replace_regex" => {
                // `/pattern/replacement/` pairs, as mysqltest takes them.
                let mut rest = rest.trim();
                while !rest.is_empty() {
                    let Some(body) = rest.strip_prefix('/') else {
                        return Err(Stop::Error(
                            self.bad("replace_regex takes /pattern/replacement/ pairs"),
                        ));
                    };
                    let mut parts = body.splitn(3, '/');
                    let (Some(pat), Some(rep), Some(tail)) =
                        (parts.next(), parts.next(), parts.next())
                    else {
                        return Err(Stop::Error(
                            self.bad("replace_regex takes /pattern/replacement/ pairs"),
                        ));
                    };
                    let re = regex::Regex::new(pat)
                        .map_err(|e| self.bad(format!("replace_regex: {e}")))?;
                    self.replace_regex.push((re, rep.to_string()));
                    rest = tail.trim_start();
                }
            }
            "let" => {
                let (name, value) = rest
                    .split_once('=')
                    .ok_or_else(|| self.bad("let $name = value"))?;
                let name = name.trim().trim_start_matches('$').to_string();
                let value = value.trim();
                let value = if let Some(q) =
                    value.strip_prefix('`').and_then(|v| v.strip_suffix('`'))
                {
                    let id = self.conn(&self.current.clone());
                    match self.server().execute(id, q) {
                        Outcome::Done(Reply::Rows { rows, .. }) => rows
                            .first()
                            .and_then(|r| r.first())
                            .map_or("NULL".into(), |d| d.render()),
                        Outcome::Done(Reply::Error(e)) => {
                            return Err(Stop::Error(self.bad(format!("let query failed: {e}"))))
                        }
                        Outcome::Done(_) => String::new(),
                        Outcome::Blocked => return Err(Stop::Error(self.bad("let query blocked"))),
                    }
                } else {
                    value.to_string()
                };
                self.vars.insert(name, value);
            }
            "disable_query_log" => self.query_log = false,
            "enable_query_log" => self.query_log = true,
            "disable_result_log" => self.result_log = false,
            "enable_result_log" => self.result_log = true,
            "disable_warnings" => self.warnings_log = false,
            "enable_warnings" => self.warnings_log = true,
            "replay-seed" => {
                self.seed = rest
                    .parse()
                    .map_err(|_| self.bad("replay-seed needs a number"))?;
            }
            "crash" => self.crash(rest)?,
            "restart" => self.restart(rest)?,
            "list_files" => self.list_files(rest)?,
            other => return Err(Stop::Error(self.bad(format!("unknown command '{other}'")))),
        }
        Ok(())
    }

    /// `list_files DIR [PATTERN]`, as mysqltest's: the files of the
    /// simulated data directory `DIR` (`$MYSQLD_DATADIR` is its root; a
    /// database's directory is `$MYSQLD_DATADIR/<db>`) whose names match
    /// the glob `PATTERN` (`*` and `?`), sorted, one a line. The engine
    /// keeps a database's files as `<db>$<name>`; they are listed by name.
    /// The server keeps a database's own entry as a table of an empty
    /// name (`<db>$`); its file stands for the directory and is not
    /// listed.
    fn list_files(&mut self, args: &str) -> Result<(), Stop> {
        let mut words = args.split_whitespace();
        let dir = words
            .next()
            .ok_or_else(|| Stop::Error(self.bad("list_files needs a directory")))?;
        let pattern = words.next().unwrap_or("*");
        let dir = dir.trim_end_matches('/');
        let db = dir
            .strip_prefix("$MYSQLD_DATADIR")
            .ok_or_else(|| Stop::Error(self.bad("list_files lists under $MYSQLD_DATADIR")))?
            .trim_start_matches('/');
        let names = self
            .storage
            .clone()
            .list()
            .map_err(|e| Stop::Error(self.bad(format!("list_files: {e}"))))?;
        let mut shown: Vec<String> = names
            .into_iter()
            .filter_map(|n| match n.split_once('$') {
                Some((d, f)) if d == db && !f.starts_with('.') => Some(f.to_string()),
                None if db.is_empty() => Some(n),
                _ => None,
            })
            .filter(|f| glob(pattern.as_bytes(), f.as_bytes()))
            .collect();
        shown.sort();
        for f in shown {
            self.out.push_str(&f);
            self.out.push('\n');
        }
        Ok(())
    }

    fn crash(&mut self, args: &str) -> Result<(), Stop> {
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut after = None;
        let mut power = false;
        let mut torn = false;
        let mut k = 0;
        while k < words.len() {
            match words[k] {
                "process" => power = false,
                "power" => power = true,
                "torn" => torn = true,
                "after" => {
                    k += 1;
                    after = Some(
                        words
                            .get(k)
                            .and_then(|w| w.parse::<u64>().ok())
                            .ok_or_else(|| self.bad("crash after <n>"))?,
                    );
                }
                w => return Err(Stop::Error(self.bad(format!("crash: unknown word '{w}'")))),
            }
            k += 1;
        }
        self.pending_crash = Some(if power {
            if torn {
                CrashMode::PowerLoss(PowerLossPolicy::Random {
                    seed: self.seed,
                    sector_bytes: 512,
                    p_survive: 0.5,
                    p_torn: 0.25,
                })
            } else {
                CrashMode::PowerLoss(PowerLossPolicy::LoseAll)
            }
        } else {
            CrashMode::ProcessCrash
        });
        match after {
            Some(n) => {
                let at = self.storage.counters().ops + n;
                self.storage.set_crash_at(Some(at));
            }
            None => {
                self.storage.crash_now();
            }
        }
        Ok(())
    }

    fn restart(&mut self, args: &str) -> Result<(), Stop> {
        for kv in args.split_whitespace() {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| self.bad(format!("restart: '{kv}' is not name=value")))?;
            let n: u64 = v
                .parse()
                .map_err(|_| self.bad(format!("restart: '{v}' is not a number")))?;
            match k {
                "innodb_flush_log_at_trx_commit" => {
                    self.config.flush_at_commit =
                        FlushAtCommit::from_setting(n as u8).map_err(|e| self.bad(e.to_string()))?
                }
                "innodb_lock_wait_timeout" => self.config.lock_wait_timeout_us = n * 1_000_000,
                "innodb_buffer_pool_pages" => self.config.buffer_pool_pages = n as usize,
                "innodb_doublewrite" => self.config.doublewrite = n != 0,
                "innodb_rollback_on_timeout" => self.config.rollback_on_timeout = n != 0,
                "innodb_file_per_table" => self.config.file_per_table = n != 0,
                _ => {
                    return Err(Stop::Error(
                        self.bad(format!("restart: unknown setting '{k}'")),
                    ))
                }
            }
        }
        let server = self.server.take().expect("a server runs");
        match self.pending_crash.take() {
            Some(mode) => {
                // Dropping the server without closing it is the crash; the
                // disk decides what survived.
                drop(server);
                self.storage.set_crash_at(None);
                self.storage.restart(mode);
            }
            None => {
                if let Err(e) = server.close() {
                    self.out.push_str(&format!("shutdown failed: {e}\n"));
                }
            }
        }
        self.start()?;
        Ok(())
    }

    /// Resumes every sent statement that is blocked, keeping results for
    /// `reap`, and reports (once) those still blocked.
    fn poll_blocked(&mut self) {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for n in names {
            let Some(c) = self.conns.get(&n) else {
                continue;
            };
            let (id, waiting) = (c.id, matches!(&c.sent, Some(None)));
            if !waiting {
                continue;
            }
            let out = self.server().resume(id);
            let c = self.conns.get_mut(&n).expect("listed");
            match out {
                Outcome::Done(r) => {
                    c.sent = Some(Some(r));
                }
                Outcome::Blocked => {
                    if !c.reported_blocked {
                        c.reported_blocked = true;
                        self.out.push_str(&format!("-- {n} is blocked\n"));
                    }
                }
            }
        }
    }

    fn send(&mut self, sql: &str) -> Result<(), Stop> {
        let name = self.current.clone();
        let id = self.conn(&name);
        if self.conns[&name].sent.is_some() {
            return Err(Stop::Error(
                self.bad(format!("{name} has a statement sent and not reaped")),
            ));
        }
        if self.query_log {
            self.out.push_str(&format!("send {sql};\n"));
        }
        let out = self.server().execute(id, sql);
        let c = self.conns.get_mut(&name).expect("connected");
        c.reported_blocked = false;
        c.sent = Some(match out {
            Outcome::Done(r) => Some(r),
            Outcome::Blocked => None,
        });
        Ok(())
    }

    fn reap(&mut self) -> Result<(), Stop> {
        let name = self.current.clone();
        let Some(c) = self.conns.get_mut(&name) else {
            return Err(Stop::Error(self.bad("reap without send")));
        };
        let Some(reply) = c.sent.take() else {
            return Err(Stop::Error(self.bad("reap without send")));
        };
        let id = c.id;
        let reply = match reply {
            Some(r) => r,
            None => {
                let out = self.server().resume(id);
                self.wait_for(id, out)?
            }
        };
        self.report(reply)
    }

    /// The reply of a statement, waiting for it as a client would if it is
    /// blocked: nothing else in the script runs meanwhile, so simulated
    /// time passes to its lock wait deadline (or a second, for a wait
    /// without one) and the engine's background work runs.
    fn wait_for(&mut self, id: ConnId, mut out: Outcome) -> Result<Reply, Stop> {
        for _ in 0..10_000 {
            match out {
                Outcome::Done(r) => return Ok(r),
                Outcome::Blocked => {
                    match self.server().wait_deadline_us(id) {
                        Some(d) if d > self.clock_now() => self.clock.set_us(d),
                        _ => self.clock.advance_us(1_000_000),
                    }
                    let _ = self.server().tick();
                    out = self.server().resume(id);
                }
            }
        }
        Err(Stop::Error(self.bad("a statement stayed blocked")))
    }

    fn statement(&mut self, sql: &str) -> Result<(), Stop> {
        let sql = self.substitute(sql);
        let name = self.current.clone();
        let id = self.conn(&name);
        if self.conns[&name].sent.is_some() {
            return Err(Stop::Error(
                self.bad(format!("{name} has a statement sent and not reaped")),
            ));
        }
        if self.query_log {
            self.out.push_str(&sql);
            self.out.push_str(";\n");
        }
        let out = self.server().execute(id, &sql);
        let reply = self.wait_for(id, out)?;
        self.report(reply)
    }

    fn report(&mut self, reply: Reply) -> Result<(), Stop> {
        let expect = self.expect.take();
        let replace = std::mem::take(&mut self.replace);
        let regexes = std::mem::take(&mut self.replace_regex);
        match &reply {
            Reply::Error(e) => {
                let listed = expect.as_deref().unwrap_or(&[]);
                // mysqltest's handle_error: the error itself when it was
                // the one expected; for a list, that it was one of them
                // (nothing when the list allows success first).
                match listed {
                    [_] => self
                        .out
                        .push_str(&format!("ERROR {}: {}\n", e.state, e.message)),
                    [0, ..] | [] => {}
                    _ => self.out.push_str("Got one of the listed errors\n"),
                }
                if !listed.contains(&e.code) {
                    self.out.push_str(&format!(
                        "mysqltest: At line {}: query failed: {}: {} (expected {})\n",
                        self.line,
                        e.code,
                        e.message,
                        expect.map_or("success".into(), |c| c
                            .iter()
                            .map(u16::to_string)
                            .collect::<Vec<_>>()
                            .join(","))
                    ));
                    return Err(Stop::Aborted);
                }
            }
            _ if expect.is_some() => {
                self.out.push_str(&format!(
                    "mysqltest: At line {}: query succeeded, but error {} was expected\n",
                    self.line,
                    expect
                        .unwrap_or_default()
                        .iter()
                        .map(u16::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                ));
                return Err(Stop::Aborted);
            }
            Reply::Rows { columns, rows, .. } => {
                if self.result_log {
                    let mut rows = rows.clone();
                    for r in &mut rows {
                        for (n, text) in &replace {
                            if let Some(cell) = n.checked_sub(1).and_then(|k| r.get_mut(k)) {
                                *cell = engine::sql::Datum::str(text);
                            }
                        }
                    }
                    let mut text = format::tabbed(columns, &rows);
                    for (re, rep) in &regexes {
                        text = re.replace_all(&text, rep.as_str()).into_owned();
                    }
                    self.out.push_str(&text);
                }
            }
            Reply::Ok { .. } => {}
        }
        let warnings = match &reply {
            Reply::Ok { warnings, .. } | Reply::Rows { warnings, .. } => *warnings,
            Reply::Error(_) => 0,
        };
        if warnings > 0 && self.warnings_log {
            let id = self.conn(&self.current.clone());
            if let Outcome::Done(Reply::Rows { rows, .. }) =
                self.server().execute(id, "SHOW WARNINGS")
            {
                let w: Vec<engine::sql::Warning> = rows
                    .iter()
                    .map(|r| engine::sql::Warning {
                        level: match r[0].render().as_str() {
                            "Note" => "Note",
                            "Error" => "Error",
                            _ => "Warning",
                        },
                        code: r[1].as_i128().unwrap_or(0) as u16,
                        message: r[2].render(),
                    })
                    .collect();
                self.out.push_str(&format::warnings_block(&w));
            }
        }
        Ok(())
    }
}

/// mysqltest's names for the error codes scripts expect.
pub fn error_by_name(name: &str) -> Option<u16> {
    Some(match name.to_ascii_uppercase().as_str() {
        "ER_CANT_CREATE_TABLE" => 1005,
        "ER_DUP_ENTRY" => 1062,
        "ER_PARSE_ERROR" => 1064,
        "ER_NO_SUCH_TABLE" => 1146,
        "ER_TABLE_EXISTS_ERROR" => 1050,
        "ER_BAD_FIELD_ERROR" => 1054,
        "ER_DUP_KEYNAME" => 1061,
        "ER_CANT_DROP_FIELD_OR_KEY" => 1091,
        "ER_LOCK_WAIT_TIMEOUT" => 1205,
        "ER_LOCK_DEADLOCK" => 1213,
        "ER_ILLEGAL_HA_CREATE_OPTION" => 1478,
        "ER_TOO_BIG_ROWSIZE" => 1118,
        "ER_TABLE_DEF_CHANGED" => 1412,
        "ER_BAD_NULL_ERROR" => 1048,
        "ER_BAD_TABLE_ERROR" => 1051,
        "ER_UNKNOWN_SYSTEM_VARIABLE" => 1193,
        "ER_WRONG_VALUE_FOR_VAR" => 1231,
        "ER_GLOBAL_VARIABLE" => 1229,
        "ER_INCORRECT_GLOBAL_LOCAL_VAR" => 1238,
        "ER_SP_DOES_NOT_EXIST" => 1305,
        "ER_NOT_SUPPORTED_YET" => 1235,
        "ER_WARN_DATA_OUT_OF_RANGE" => 1264,
        "ER_DATA_TOO_LONG" => 1406,
        "ER_BAD_DB_ERROR" => 1049,
        "ER_NO_DB_ERROR" => 1046,
        "ER_WRONG_VALUE_COUNT_ON_ROW" => 1136,
        _ => return None,
    })
}

/// A line diff of expected and actual output, for a failed comparison.
pub fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // Longest common subsequence, then the edits.
    let (n, m) = (a.len(), b.len());
    let mut l = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            l[i][j] = if a[i] == b[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < m && (i == n || l[i][j + 1] >= l[i + 1][j]) {
            out.push_str(&format!("+{}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{}\n", a[i]));
            i += 1;
        }
    }
    out
}

/// Whether `name` matches the glob `pat` (`*` any run, `?` one byte).
fn glob(pat: &[u8], name: &[u8]) -> bool {
    match (pat.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&pat[1..], name) || (!name.is_empty() && glob(pat, &name[1..])),
        (Some(b'?'), Some(_)) => glob(&pat[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => glob(&pat[1..], &name[1..]),
        _ => false,
    }
}
