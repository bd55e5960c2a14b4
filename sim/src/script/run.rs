//! The commands, and queries with their output: mysqltest's main loop
//! switch, `run_query_normal`, `handle_error`, `append_result`,
//! `append_warnings`, `append_info` and the replace functions.

use super::{builtin, Expect, Runner, Stop, Vars};
use engine::sql::{Datum, Outcome, Reply, SqlError};
use std::path::PathBuf;

/// How a query runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum QueryHow {
    /// Sent and its result read.
    Normal,
    /// Sent only (`send`): `reap` reads it.
    SendOnly,
    /// Its result in `vertical_results` form, this once.
    Vertical,
    /// In horizontal form, this once.
    Horizontal,
}

impl Runner {
    /// Runs command `name`; true if it counts as executed (which resets
    /// the replacements and `sorted_result`).
    pub(super) fn command(
        &mut self,
        name: &str,
        cmd: &super::reader::Command,
    ) -> Result<bool, Stop> {
        let raw = cmd.argument();
        // A command's argument ends at the delimiter in the `--` form too.
        let raw = raw
            .strip_suffix(self.delimiter.as_str())
            .unwrap_or(raw)
            .trim_end();
        self.poll_blocked();
        match name {
            "echo" => {
                let text = self.expand(raw)?;
                self.out.push_str(&text);
                self.out.push('\n');
                return Ok(true);
            }
            "connect" => self.connect(raw)?,
            "connection" => {
                let name = self.expand(raw)?;
                let name = name.trim().trim_matches(|c| c == '(' || c == ')').trim();
                self.conn(name);
                self.current = Some(name.to_string());
            }
            "disconnect" | "dirty_close" => {
                let name = self.expand(raw)?.trim().to_string();
                let Some(c) = self.conns.remove(&name) else {
                    return Err(
                        self.die(format!("connection '{name}' not found in connection pool"))
                    );
                };
                if let Err(e) = self.server().disconnect(c.id) {
                    self.out.push_str(&format!("{e}\n"));
                }
                if self.current.as_deref() == Some(name.as_str()) {
                    self.current = None;
                }
            }
            "send" | "send_eval" => {
                if raw.is_empty() {
                    self.send_next = true;
                    return Ok(false);
                }
                let q = if name == "send_eval" {
                    self.expand(raw)?
                } else {
                    raw.to_string()
                };
                self.query(&q, QueryHow::SendOnly)?;
                return Ok(true);
            }
            "reap" => {
                self.reap()?;
                return Ok(true);
            }
            "eval" | "query_vertical" | "query_horizontal" => {
                let q = if name == "eval" {
                    self.expand(raw)?
                } else {
                    raw.to_string()
                };
                let how = match name {
                    "query_vertical" => QueryHow::Vertical,
                    "query_horizontal" => QueryHow::Horizontal,
                    _ => QueryHow::Normal,
                };
                self.query(&q, how)?;
                return Ok(true);
            }
            "error" => self.expect = self.parse_errors(raw)?,
            "sleep" | "real_sleep" => {
                let arg = self.expand(raw)?;
                let secs: f64 = arg
                    .trim()
                    .parse()
                    .map_err(|_| self.die(format!("Invalid argument to {name} \"{arg}\"")))?;
                self.clock.advance_us((secs * 1e6) as u64);
                let _ = self.server().tick();
                self.poll_blocked();
            }
            "source" => self.source(raw)?,
            "require" => {
                let path = self.expand(raw)?.trim().to_string();
                let text = self.read_support_file(&path, builtin::require)?;
                self.require = Some((path, text));
            }
            "let" => self.let_(raw)?,
            "inc" | "dec" => {
                let Some(v) = raw.strip_prefix('$') else {
                    return Err(self.die(format!(
                        "The argument to {name} must be a variable (start with $)"
                    )));
                };
                let n = Vars::name_len(v);
                self.vars.add(&v[..n], if name == "inc" { 1 } else { -1 });
            }
            "delimiter" => {
                let d = raw.trim();
                if d.is_empty() {
                    return Err(self.die("Can't set empty delimiter"));
                }
                self.delimiter = d.to_string();
            }
            "replace_result" => {
                let words = self.strings(raw)?;
                if words.is_empty() || words.len() % 2 != 0 {
                    return Err(self.die(format!(
                        "Wrong number of arguments to replace_result in '{}'",
                        cmd.text
                    )));
                }
                self.next.replace = words
                    .chunks(2)
                    .map(|p| (p[0].clone(), p[1].clone()))
                    .collect();
            }
            "replace_column" => {
                let words = self.strings(raw)?;
                if words.len() % 2 != 0 {
                    return Err(self.die(format!(
                        "Wrong number of arguments to replace_column in '{}'",
                        cmd.text
                    )));
                }
                self.next.columns.clear();
                for p in words.chunks(2) {
                    let n: usize = p[0].parse().unwrap_or(0);
                    if n == 0 {
                        return Err(self.die(format!(
                            "Wrong column number to replace_column in '{}'",
                            cmd.text
                        )));
                    }
                    self.next.columns.insert(n, p[1].clone());
                }
            }
            "replace_regex" => self.next.regex = self.parse_regex(raw)?,
            "sorted_result" => self.next.sorted = true,
            "lowercase_result" => self.next.lowercase = true,
            "vertical_results" => self.flags.vertical = true,
            "horizontal_results" => self.flags.vertical = false,
            "enable_query_log" => self.flags.query_log = true,
            "disable_query_log" => self.flags.query_log = false,
            "enable_result_log" => self.flags.result_log = true,
            "disable_result_log" => self.flags.result_log = false,
            "enable_warnings" => self.flags.warnings = true,
            "disable_warnings" => self.flags.warnings = false,
            "enable_info" => self.flags.info = true,
            "disable_info" => self.flags.info = false,
            "enable_abort_on_error" => self.flags.abort_on_error = true,
            "disable_abort_on_error" => self.flags.abort_on_error = false,
            "enable_blocked_log" => self.flags.blocked_log = true,
            "disable_blocked_log" => self.flags.blocked_log = false,
            "disable_parsing" => {
                if !self.flags.parsing {
                    return Err(self.die("Parsing is already disabled"));
                }
                self.flags.parsing = false;
            }
            "enable_parsing" => {
                if self.flags.parsing {
                    return Err(self.die("Parsing is already enabled"));
                }
                self.flags.parsing = true;
            }
            // Only the text protocol exists; reconnecting is what every
            // connection does after a restart anyway; timers print to a
            // file mysql-test-run reads, not to the result.
            "disable_ps_protocol"
            | "enable_ps_protocol"
            | "disable_reconnect"
            | "enable_reconnect"
            | "start_timer"
            | "end_timer"
            | "disable_metadata" => {}
            "ping" => {}
            "skip" => return Err(Stop::Skip(self.expand(raw)?)),
            "exit" => self.stop_requested = true,
            "die" => return Err(self.die(self.expand(raw)?)),
            "list_files" => self.list_files(&self.expand(raw)?)?,
            "crash" => self.crash(raw)?,
            "restart" => {
                let words: Vec<String> = raw.split_whitespace().map(str::to_string).collect();
                self.restart(&words)?
            }
            "replay-seed" => {
                self.seed = raw
                    .trim()
                    .parse()
                    .map_err(|_| self.die("replay-seed needs a number"))?;
            }
            "enable_metadata" => {
                return Err(Stop::Skip(
                    "innosim's scripts do not print result metadata (--enable_metadata)".into(),
                ))
            }
            "exec"
            | "system"
            | "perl"
            | "write_file"
            | "append_file"
            | "cat_file"
            | "remove_file"
            | "remove_files_wildcard"
            | "file_exists"
            | "copy_file"
            | "move_file"
            | "chmod"
            | "mkdir"
            | "rmdir"
            | "diff_files"
            | "list_files_write_file"
            | "list_files_append_file" => {
                return Err(Stop::Skip(format!(
                    "innosim runs no programs and keeps no files outside its simulated disk \
                     (--{name})"
                )))
            }
            "shutdown_server" | "send_shutdown" | "send_quit" | "change_user" | "character_set" => {
                return Err(Stop::Skip(format!(
                    "innosim's scripts do not support --{name}"
                )))
            }
            "save_master_pos"
            | "sync_with_master"
            | "sync_slave_with_master"
            | "rpl_probe"
            | "enable_rpl_parse"
            | "disable_rpl_parse"
            | "wait_for_slave_to_stop" => {
                return Err(Stop::Skip(format!("innosim has no replication (--{name})")))
            }
            "result" | "eval_result" => {
                return Err(self.die(format!("'{name}' command  is deprecated")))
            }
            other => return Err(self.die(format!("unknown command '{other}'"))),
        }
        Ok(false)
    }

    pub(super) fn expand(&self, s: &str) -> Result<String, Stop> {
        self.vars.expand(s).map_err(|m| self.die(m))
    }

    /// `connect (name, host, user, password, db, ...)`.
    fn connect(&mut self, raw: &str) -> Result<(), Stop> {
        let raw = self.expand(raw)?;
        let inner = raw
            .trim()
            .strip_prefix('(')
            .and_then(|r| r.trim_end().strip_suffix(')'))
            .ok_or_else(|| self.die("Syntax error in connect - expected '(' found ''"))?;
        let args: Vec<&str> = inner.split(',').map(str::trim).collect();
        let name = args[0].to_string();
        if name.is_empty() {
            return Err(self.die("Illegal argument for connection name: ''"));
        }
        if self.conns.contains_key(&name) {
            return Err(self.die(format!("Connection {name} already exists")));
        }
        let id = self.conn(&name);
        if let Some(db) = args.get(4).filter(|d| !d.is_empty()) {
            let db = db.trim_matches('\'');
            if let Outcome::Done(Reply::Error(e)) = self.server().execute(id, &format!("USE {db}"))
            {
                return Err(self.die(format!(
                    "Could not open connection '{name}': {} {}",
                    e.code, e.message
                )));
            }
        }
        self.current = Some(name);
        Ok(())
    }

    /// `--error`: numbers, names, `S<sqlstate>`.
    fn parse_errors(&self, raw: &str) -> Result<Vec<Expect>, Stop> {
        let raw = self.expand(raw)?;
        let mut v = Vec::new();
        for w in raw.split(',') {
            let w = w.trim();
            if w.is_empty() {
                continue;
            }
            if let Some(state) = w.strip_prefix('S') {
                if state.len() != 5 {
                    return Err(self.die(format!("The sqlstate must be exactly 5 chars long: {w}")));
                }
                v.push(Expect::State(state.to_string()));
            } else if w.starts_with(|c: char| c.is_ascii_digit()) {
                let n = w
                    .parse::<u16>()
                    .map_err(|_| self.die(format!("Invalid argument to error: '{w}'")))?;
                v.push(Expect::Errno(n));
            } else if w.starts_with("ER_") || w.starts_with("WARN_") || w.starts_with("CR_") {
                let n = super::error_by_name(w)
                    .ok_or_else(|| self.die(format!("Unknown SQL error name '{w}'")))?;
                v.push(Expect::Errno(n));
            } else {
                return Err(self.die(format!("Invalid argument to error: '{w}'")));
            }
        }
        if v.is_empty() {
            return Err(self.die("Missing argument(s) to 'error'"));
        }
        Ok(v)
    }

    /// mysqltest's `get_string` over a command's arguments: words split
    /// at spaces, or quoted with `'` or `"` (a doubled quote is one), with
    /// `\n`, `\t` and `\x` escapes; a word that is a `$variable` is its
    /// value.
    fn strings(&self, raw: &str) -> Result<Vec<String>, Stop> {
        let b = raw.trim().as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let sep = match b[i] {
                q @ (b'\'' | b'"') => {
                    i += 1;
                    q
                }
                _ => b' ',
            };
            let mut w: Vec<u8> = Vec::new();
            while i < b.len() {
                let c = b[i];
                if c == b'\\' && i + 1 < b.len() {
                    i += 1;
                    w.push(match b[i] {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'b' => 8,
                        b'Z' => 26,
                        x => x,
                    });
                } else if c == sep {
                    if sep == b' ' || b.get(i + 1) != Some(&sep) {
                        i += 1;
                        break;
                    }
                    w.push(c);
                    i += 1;
                } else {
                    w.push(c);
                }
                i += 1;
            }
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let w = String::from_utf8_lossy(&w).into_owned();
            let w = match w.strip_prefix('$') {
                Some(name) if Vars::name_len(name) == name.len() && !name.is_empty() => {
                    self.vars.get(name)
                }
                _ => w,
            };
            out.push(w);
        }
        Ok(out)
    }

    /// `replace_regex /from/to/[i] ...`, a `\/` standing for `/`.
    fn parse_regex(&self, raw: &str) -> Result<Vec<(regex::Regex, String)>, Stop> {
        let b = raw.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        let bad = || self.die(format!("Error parsing replace_regex \"{raw}\""));
        loop {
            while i < b.len() && b[i] != b'/' {
                i += 1;
            }
            if i + 1 >= b.len() {
                break;
            }
            i += 1;
            let mut parts = [Vec::new(), Vec::new()];
            for part in &mut parts {
                let mut last = 0u8;
                loop {
                    let Some(&c) = b.get(i) else {
                        return Err(bad());
                    };
                    i += 1;
                    if c == b'/' {
                        if last == b'\\' {
                            *part.last_mut().expect("the backslash") = b'/';
                            last = b'/';
                            continue;
                        }
                        break;
                    }
                    part.push(c);
                    last = c;
                }
            }
            let icase = b.get(i) == Some(&b'i');
            if icase {
                i += 1;
            }
            let pat = String::from_utf8_lossy(&parts[0]).into_owned();
            let re = regex::RegexBuilder::new(&pat)
                .case_insensitive(icase)
                .build()
                .map_err(|e| self.die(format!("replace_regex: {e}")))?;
            out.push((re, backrefs(&String::from_utf8_lossy(&parts[1]))));
        }
        if out.is_empty() {
            return Err(bad());
        }
        Ok(out)
    }

    /// `source FILE`: read once; inside a `while` its commands are already
    /// in the cache when the loop comes round again.
    fn source(&mut self, raw: &str) -> Result<(), Stop> {
        if self.at + 1 < self.cmds.len() {
            return Ok(());
        }
        let path = self.expand(raw)?.trim().to_string();
        let text = self.read_support_file(&path, builtin::include)?;
        if self.reader.depth() > 16 {
            return Err(self.die("Source directives are nesting too deep"));
        }
        self.reader.push(&path, &text);
        Ok(())
    }

    /// A sourced or required file: beside the file that names it, then in
    /// the base directory (`suite/<name>/x` is the base's `x`), then
    /// innosim's own.
    fn read_support_file(
        &self,
        path: &str,
        builtin: fn(&str) -> Option<&'static str>,
    ) -> Result<String, Stop> {
        let mut tries: Vec<PathBuf> = Vec::new();
        if let Some(dir) = std::path::Path::new(&self.file).parent() {
            tries.push(dir.join(path));
        }
        if let Some(base) = &self.base {
            tries.push(base.join(path));
            if let Some(rest) = path.strip_prefix("suite/") {
                if let Some((_, inside)) = rest.split_once('/') {
                    tries.push(base.join(inside));
                }
            }
        }
        for p in &tries {
            if let Ok(t) = std::fs::read_to_string(p) {
                return Ok(t);
            }
        }
        builtin(path)
            .map(str::to_string)
            .ok_or_else(|| self.die(format!("Could not open '{path}' for reading, errno: 2")))
    }

    /// `let $name = value`.
    fn let_(&mut self, raw: &str) -> Result<(), Stop> {
        let eq = raw
            .find('=')
            .ok_or_else(|| self.die("Missing assignment operator in let"))?;
        let name = raw[..eq].trim();
        if name.contains(char::is_whitespace) {
            return Err(self.die("Missing assignment operator in let"));
        }
        let name = name.strip_prefix('$').unwrap_or(name);
        if name.is_empty() {
            return Err(self.die("Missing variable name in let"));
        }
        let rhs = raw[eq + 1..].trim_start();
        let rhs = self.expand(rhs)?;
        let value =
            if rhs.starts_with('$') || rhs.starts_with('`') || rhs.starts_with("query_get_value") {
                // The expansion already replaced a leading $variable; what is
                // left to evaluate is a query.
                self.eval_expr(&rhs)?
            } else {
                rhs
            };
        self.vars.set(name, value);
        Ok(())
    }

    /// `` `query` ``: the first row's fields, tab-separated.
    pub(super) fn query_value(&mut self, q: &str) -> Result<String, Stop> {
        match self.run_util(q)? {
            Reply::Rows { rows, .. } => Ok(rows.first().map_or(String::new(), |r| {
                r.iter()
                    .map(|d| match d {
                        Datum::Null => String::new(),
                        d => d.render(),
                    })
                    .collect::<Vec<_>>()
                    .join("\t")
            })),
            _ => Err(self.die(format!("Query '{q}' didn't return a result set"))),
        }
    }

    /// `query_get_value(query, column, row)`.
    pub(super) fn query_get_value(&mut self, args: &str) -> Result<String, Stop> {
        let inner = args
            .trim()
            .strip_prefix('(')
            .and_then(|a| a.strip_suffix(')'))
            .ok_or_else(|| self.die("Missing '(' in query_get_value"))?;
        let mut parts = inner.rsplitn(3, ',');
        let (Some(row), Some(col), Some(q)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(self.die("Missing argument to query_get_value"));
        };
        let q = q.trim().trim_matches('"');
        let row: usize = row
            .trim()
            .parse()
            .map_err(|_| self.die(format!("Invalid row number: '{}'", row.trim())))?;
        let col = col.trim();
        match self.run_util(q)? {
            Reply::Rows { columns, rows, .. } => {
                let k = columns.iter().position(|c| c == col).ok_or_else(|| {
                    self.die(format!(
                        "Could not find column '{col}' in the result of '{q}'"
                    ))
                })?;
                Ok(rows
                    .get(row.wrapping_sub(1))
                    .map_or("No such row".into(), |r| r[k].render()))
            }
            _ => Err(self.die(format!("Query '{q}' didn't return a result set"))),
        }
    }

    /// A query mysqltest runs for itself on the current connection.
    fn run_util(&mut self, q: &str) -> Result<Reply, Stop> {
        let name = self.current()?;
        let id = self.conn(&name);
        let out = self.server().execute(id, q);
        match self.wait_for(id, out)? {
            Reply::Error(e) => Err(self.die(format!(
                "Error running query '{q}': {} {}",
                e.code, e.message
            ))),
            r => Ok(r),
        }
    }

    /// Resumes every sent statement that is blocked, keeping results for
    /// `reap`, and reports (once, under `enable_blocked_log`) those still
    /// blocked.
    pub(super) fn poll_blocked(&mut self) {
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for n in names {
            let Some(c) = self.conns.get(&n) else {
                continue;
            };
            let (id, waiting) = (c.id, matches!(&c.sent, Some((_, None))));
            if !waiting {
                continue;
            }
            let out = self.server().resume(id);
            let log = self.flags.blocked_log;
            let c = self.conns.get_mut(&n).expect("listed");
            match out {
                Outcome::Done(r) => {
                    if let Some((_, slot)) = &mut c.sent {
                        *slot = Some(r);
                    }
                }
                Outcome::Blocked => {
                    if !c.reported_blocked && log {
                        c.reported_blocked = true;
                        self.out.push_str(&format!("-- {n} is blocked\n"));
                    }
                }
            }
        }
    }

    /// The reply of a statement, waiting for it as a client would if it is
    /// blocked: nothing else in the script runs meanwhile, so simulated
    /// time passes to its lock wait deadline (or a second, for a wait
    /// without one) and the engine's background work runs.
    pub(super) fn wait_for(
        &mut self,
        id: engine::sql::ConnId,
        mut out: Outcome,
    ) -> Result<Reply, Stop> {
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
        Err(self.die("a statement stayed blocked"))
    }

    fn reap(&mut self) -> Result<(), Stop> {
        let name = self.current()?;
        let Some(c) = self.conns.get_mut(&name) else {
            return Err(self.die("No current connection"));
        };
        let Some((q, reply)) = c.sent.take() else {
            return Err(self.die("Cannot reap on a connection without pending send"));
        };
        let id = c.id;
        let reply = match reply {
            Some(r) => r,
            None => {
                let out = self.server().resume(id);
                self.wait_for(id, out)?
            }
        };
        let first = self.out_lines();
        let r = self.report(&q, reply, false);
        self.statements.push((first, self.out_lines()));
        r
    }

    fn out_lines(&self) -> usize {
        self.out.matches('\n').count()
    }

    /// Runs a query: logs it, sends it, and (unless send-only) reports
    /// its result.
    pub(super) fn query(&mut self, q: &str, how: QueryHow) -> Result<(), Stop> {
        let how = if std::mem::take(&mut self.send_next) && how == QueryHow::Normal {
            QueryHow::SendOnly
        } else {
            how
        };
        let name = self.current()?;
        let id = self.conn(&name);
        if self.conns[&name].sent.is_some() {
            return Err(self.die("Cannot run query on connection between send and reap"));
        }
        let first = self.out_lines();
        if self.flags.query_log && self.require.is_none() {
            let logged = self.replaced(q);
            self.out.push_str(&logged);
            self.out.push_str(&self.delimiter.clone());
            self.out.push('\n');
        }
        // mysql-test-run's own procedure: it tunes the server-log check,
        // which innosim's runs do not make.
        let lower = q.trim_start().to_ascii_lowercase();
        if lower.starts_with("call mtr.") {
            self.statements.push((first, self.out_lines()));
            return Ok(());
        }
        let out = self.server().execute(id, q);
        // A connection KILL ended is gone, as mysqld closes it: its next
        // statement finds the connection lost (2013).
        for killed in self.server().take_killed() {
            let _ = self.server().disconnect(killed);
        }
        if how == QueryHow::SendOnly {
            let c = self.conns.get_mut(&name).expect("connected");
            c.reported_blocked = false;
            c.sent = Some((
                q.to_string(),
                match out {
                    Outcome::Done(r) => Some(r),
                    Outcome::Blocked => None,
                },
            ));
            self.statements.push((first, self.out_lines()));
            return Ok(());
        }
        let reply = self.wait_for(id, out)?;
        let vertical = match how {
            QueryHow::Vertical => true,
            QueryHow::Horizontal => false,
            _ => self.flags.vertical,
        };
        let r = self.report(q, reply, vertical);
        self.statements.push((first, self.out_lines()));
        r
    }

    /// The replacements applied to one piece of output (lowercase, then
    /// the regexes, then replace_result), as `replace_dynstr_append_mem`.
    fn replaced(&self, s: &str) -> String {
        let mut v = if self.next.lowercase {
            s.to_ascii_lowercase()
        } else {
            s.to_string()
        };
        for (re, rep) in &self.next.regex {
            v = re.replace_all(&v, rep.as_str()).into_owned();
        }
        if !self.next.replace.is_empty() {
            v = replace_strings(&v, &self.next.replace);
        }
        v
    }

    /// A finished statement's output and its judgment against `--error`.
    fn report(&mut self, q: &str, reply: Reply, vertical: bool) -> Result<(), Stop> {
        let expect = std::mem::take(&mut self.expect);
        let errno = match &reply {
            Reply::Error(e) => e.code,
            _ => 0,
        };
        self.vars.set("mysql_errno", errno.to_string());
        if let Reply::Error(e) = &reply {
            return self.handle_error(q, e, &expect);
        }
        if let Some(Expect::Errno(n)) = expect.first().filter(|x| **x != Expect::Errno(0)) {
            return Err(self.die(format!(
                "query '{q}' succeeded - should have failed with errno {n}..."
            )));
        }
        if let Some(Expect::State(s)) = expect
            .first()
            .filter(|x| **x != Expect::State("00000".into()))
        {
            return Err(self.die(format!(
                "query '{q}' succeeded - should have failed with sqlstate {s}..."
            )));
        }
        let mut ds = String::new();
        if self.flags.result_log || self.require.is_some() {
            if let Reply::Rows { columns, rows, .. } = &reply {
                if !vertical {
                    let head: Vec<String> = columns.iter().map(|c| self.replaced(c)).collect();
                    ds.push_str(&head.join("\t"));
                    ds.push('\n');
                }
                for r in rows {
                    for (k, d) in r.iter().enumerate() {
                        let val = match self.next.columns.get(&(k + 1)) {
                            Some(v) => v.clone(),
                            None => d.render(),
                        };
                        if vertical {
                            ds.push_str(&columns[k]);
                            ds.push('\t');
                            ds.push_str(&self.replaced(&val));
                            ds.push('\n');
                        } else {
                            if k > 0 {
                                ds.push('\t');
                            }
                            ds.push_str(&self.replaced(&val));
                        }
                    }
                    if !vertical {
                        ds.push('\n');
                    }
                }
            }
            let warnings = match &reply {
                Reply::Ok { warnings, .. } | Reply::Rows { warnings, .. } => *warnings,
                Reply::Error(_) => 0,
            };
            if self.flags.warnings && warnings > 0 {
                ds.push_str("Warnings:\n");
                ds.push_str(&self.warnings_text()?);
            }
            if self.flags.info {
                let (affected, info) = match &reply {
                    Reply::Ok { affected, info, .. } => (*affected, info.clone()),
                    // mysql_affected_rows after a SELECT: the rows it sent.
                    Reply::Rows { rows, .. } => (rows.len() as u64, None),
                    Reply::Error(_) => (0, None),
                };
                ds.push_str(&format!("affected rows: {affected}\n"));
                if let Some(i) = info {
                    ds.push_str(&format!("info: {i}\n"));
                }
            }
        }
        if let Some((file, want)) = self.require.take() {
            if ds != want {
                let name = std::path::Path::new(&file)
                    .file_stem()
                    .map_or(file.clone(), |s| s.to_string_lossy().into_owned());
                return Err(Stop::Skip(format!("Test requires: '{name}'")));
            }
            return Ok(());
        }
        if !self.flags.result_log {
            return Ok(());
        }
        if self.next.sorted {
            ds = sorted_after_first(&ds);
        }
        self.out.push_str(&ds);
        Ok(())
    }

    /// SHOW WARNINGS on the current connection, as `append_warnings`
    /// prints its rows.
    fn warnings_text(&mut self) -> Result<String, Stop> {
        let name = self.current()?;
        let id = self.conn(&name);
        let mut s = String::new();
        if let Outcome::Done(Reply::Rows { rows, .. }) = self.server().execute(id, "SHOW WARNINGS")
        {
            for r in rows {
                let fields: Vec<String> = r.iter().map(|d| self.replaced(&d.render())).collect();
                s.push_str(&fields.join("\t"));
                s.push('\n');
            }
        }
        Ok(s)
    }

    /// mysqltest's `handle_error`.
    fn handle_error(&mut self, q: &str, e: &SqlError, expect: &[Expect]) -> Result<(), Stop> {
        if self.require.take().is_some() {
            return Err(Stop::Skip(format!(
                "Query '{q}' failed, required functionality not supported"
            )));
        }
        if expect.is_empty() && self.flags.abort_on_error {
            return Err(self.die(format!("query '{q}' failed: {}: {}", e.code, e.message)));
        }
        let matched = expect.iter().any(|x| match x {
            Expect::Errno(n) => *n == e.code,
            Expect::State(s) => s == e.state,
        });
        let line = format!(
            "ERROR {}: {}\n",
            self.replaced(e.state),
            self.replaced(&e.message)
        );
        if matched {
            if self.flags.result_log {
                if expect.len() == 1 {
                    self.out.push_str(&line);
                } else if !matches!(expect[0], Expect::Errno(0)) {
                    self.out.push_str("Got one of the listed errors\n");
                }
            }
            return Ok(());
        }
        if self.flags.result_log {
            self.out.push_str(&line);
        }
        match expect.first() {
            Some(Expect::Errno(n)) => Err(self.die(format!(
                "query '{q}' failed with wrong errno {}: '{}', instead of {n}...",
                e.code, e.message
            ))),
            Some(Expect::State(s)) => Err(self.die(format!(
                "query '{q}' failed with wrong sqlstate {}: '{}', instead of {s}...",
                e.state, e.message
            ))),
            None => Ok(()),
        }
    }
}

/// A POSIX replacement (`\1`) in the regex crate's form (`${1}`), a `$`
/// kept literal.
fn backrefs(rep: &str) -> String {
    let b = rep.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
            out.push_str(&format!("${{{}}}", b[i + 1] - b'0'));
            i += 2;
        } else if b[i] == b'$' {
            out.push_str("$$");
            i += 1;
        } else {
            let ch = rep[i..].chars().next().expect("in bounds");
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// `replace_result`: each position takes the longest `from` that starts
/// there, left to right, replaced text not scanned again.
fn replace_strings(s: &str, pairs: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        let best = pairs
            .iter()
            .filter(|(f, _)| !f.is_empty() && s[i..].starts_with(f.as_str()))
            .max_by_key(|(f, _)| f.len());
        match best {
            Some((f, t)) => {
                out.push_str(t);
                i += f.len();
            }
            None => {
                let ch = s[i..].chars().next().expect("in bounds");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// `dynstr_append_sorted`: the first line, then the others sorted
/// bytewise.
fn sorted_after_first(ds: &str) -> String {
    if ds.is_empty() {
        return String::new();
    }
    let (head, rest) = ds.split_once('\n').unwrap_or((ds, ""));
    let mut lines: Vec<&str> = rest.lines().collect();
    lines.sort_unstable();
    let mut out = format!("{head}\n");
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_take_the_longest_match_and_backrefs_translate() {
        let pairs = vec![
            ("a".to_string(), "X".to_string()),
            ("ab".to_string(), "Y".to_string()),
        ];
        assert_eq!(replace_strings("abac", &pairs), "YXc");
        assert_eq!(backrefs(r"<\1>$"), "<${1}>$$");
        assert_eq!(sorted_after_first("h\nb\na\n"), "h\na\nb\n");
    }
}
