//! Test scripts in mysqltest's language, run on the simulated disk and
//! clock (so `--sleep 50` costs no wall time), as `client/mysqltest.cc`
//! runs them under mysql-test-run, plus crash and restart commands no
//! mysqltest has. InnoDB's own suite runs under it unchanged
//! ([`suite`]).
//!
//! - Reading (`reader`): a query runs to the delimiter (`;`, or what
//!   `delimiter` sets) outside quotes; a line whose first character is `#`
//!   is a comment and one starting `--` is a command; `cmd args;` is a
//!   command when its first word names one, and a query otherwise.
//! - Output, as mysqltest writes a `.result`: each query echoed with its
//!   delimiter (unless the query log is off), result sets tab-separated
//!   under a header line (or `name\tvalue` lines under
//!   `vertical_results`), `Warnings:` after a statement that left some
//!   (unless `disable_warnings`), `affected rows:`/`info:` under
//!   `enable_info`, an expected error as `ERROR <SQLSTATE>: <text>`, or
//!   `Got one of the listed errors` when `--error` lists several. An
//!   unexpected error, or success where an error was expected, stops the
//!   test with mysqltest's `mysqltest: At line N: ...` line.
//! - Commands: `connect (name, host, user, password, db)`, `connection`,
//!   `disconnect`, `send [query]`/`send_eval`/`reap` (a statement still
//!   blocked at `reap` waits: the clock runs to its lock wait deadline),
//!   `error` (numbers, `ER_*` names, `S<sqlstate>`), `echo`, `let` (a
//!   value, `` `query` `` or `query_get_value(query, column, row)`),
//!   `eval`, `inc`, `dec`, `if`/`while` blocks, `source`, `require`,
//!   `skip`, `exit`, `die`, `delimiter`, `sleep`/`real_sleep` (both on the
//!   simulated clock), `replace_result`, `replace_column`,
//!   `replace_regex`, `sorted_result`, `lowercase_result`,
//!   `vertical_results`/`horizontal_results`, `query_vertical`,
//!   `query_horizontal`, `enable`/`disable_query_log`, `_result_log`,
//!   `_warnings`, `_info`, `_abort_on_error`, `_parsing`, `list_files` (the
//!   simulated data directory). `exec`, `system`, `perl` and the file
//!   commands run nothing: the test is skipped, saying why. `call
//!   mtr.add_suppression(...)` is mysql-test-run's (it tunes a server-log
//!   check innosim's runs do not make) and succeeds without reaching the
//!   server. The standard capability includes are answered by innosim
//!   (`builtin`).
//! - innosim's own: `crash [process|power [torn]] [after <n>]`: the
//!   process dies (the operating system keeps every write), or the power
//!   goes (unsynced writes are lost, or with `torn` each kept, lost or torn
//!   as drawn from the replay seed); `after <n>` arms it at the n-th next
//!   I/O operation instead of now. `restart [name=value ...]`: starts the
//!   server again (recovering after a crash) with startup settings.
//!   `replay-seed <n>`. `enable_blocked_log`: a `send` still blocked when
//!   the next command runs prints `-- <name> is blocked`, once.
//!
//! # Running scripts, and what they cover
//!
//! `innosim script FILE.test` runs one script and compares it with its `.result` file; `innosim
//! script --record FILE.test` accepts a script's new output. `--error` takes MySQL 5.1's whole
//! error list by `ER_*` name; settings given to `restart` are kept by later restarts, as a
//! my.cnf line is. `list_files` takes mysqltest's `$MYSQLD_DATADIR[/db] [pattern]`. The output
//! is mysqltest's; the SQL shell (`innosim sql`) keeps the `mysql` client's `ERROR <code>
//! (<state>): <text>` instead. `innosim script --suite DIR` runs a directory laid out as
//! mysql-test's suites ([`suite`]), one line a test and a total with the share of statements
//! that gave the recorded output.
//!
//! Scripts start the server with MySQL 5.1.45's defaults where they differ from the engine's
//! own: `innodb_file_per_table` is OFF (the simulator's worlds default to ON, so that every
//! table has a file to tear).
//!
//! `cargo test --test scenarios` runs every script in `corpus/scenarios/` (the seeds' sessions
//! of seeds/000 and seeds/002, lock waits and timeouts, deadlocks and the monitor, DDL waiting
//! for its table lock, gap locks, isolation levels, NOWAIT, savepoints, fast index builds
//! beside an older read view, semi-consistent read, tables without a primary key, GROUP BY,
//! strict mode, innodb_file_per_table, TRUNCATE, copying ALTER and column changes, compressed
//! tables, crashes under each flush setting and inside a statement, mysqltest's language,
//! collations, prefix indexes, REPLACE and ON DUPLICATE KEY UPDATE, ANALYZE TABLE, server
//! variables, foreign keys) against its `.result`; a script that stops or is skipped fails the
//! test.
//!
//! InnoDB Plugin 1.0.6's own suite (MySQL 5.1.45's `mysql-test/suite/innodb/`, copied into a
//! scratch directory, never into this repository) under `innosim script --suite DIR`: 15 of its
//! 17 tests pass, 1 is skipped (innodb-index_ucs2: no ucs2) and 1 is disabled by the suite
//! itself (innodb-index); 420 of 420 statements give the recorded output (a statement run with
//! the query and result logs off counts as given when the test goes on past it; statements
//! never reached count as not given).

mod builtin;
mod reader;
mod run;
pub mod suite;
mod vars;
mod world;

use crate::clock::SimClock;
use crate::storage::{CrashMode, SimStorage};
use engine::sql::{ConnId, Server};
use engine::Config;
use reader::Reader;
use run::QueryHow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use vars::Vars;

/// A script that could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The server would not start with the script's settings.
    #[error("{file}: {message}")]
    Start {
        /// The script.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {0}: {1}")]
    Read(String, std::io::Error),
}

/// How a script ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It ran to its end (or to `exit`).
    Completed,
    /// mysqltest would have died here: an unexpected error, a missing
    /// error, a malformed command. The message is mysqltest's line.
    Failed(String),
    /// The test cannot run here (`skip`, a capability it requires, a
    /// command innosim does not run), with the reason.
    Skipped(String),
}

/// The result of running a script.
#[derive(Debug)]
pub struct ScriptRun {
    /// What mysqltest would have written, ending with its failure line
    /// when the script failed.
    pub output: String,
    /// The script stopped at an unexpected error (or a missing one).
    pub aborted: bool,
    /// How it ended.
    pub ending: Ending,
    /// Simulated microseconds the script took.
    pub elapsed_us: u64,
    /// For each query run, the lines of `output` it wrote (first, end).
    pub statements: Vec<(usize, usize)>,
    /// Queries read but never run because the script stopped first.
    pub unreached: usize,
}

/// Where a script runs, beyond its text.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The directory `include/...`, `r/...` and `suite/<name>/...` paths
    /// resolve in (mysql-test-run's base directory: a suite's own), after
    /// the sourcing file's own directory.
    pub base: Option<PathBuf>,
    /// Startup options, in mysqld's spelling (`--innodb_lock_wait_timeout=2`,
    /// `--loose-...`), as a test's `-master.opt` gives them.
    pub startup: Vec<String>,
    /// Rules of a later InnoDB the engine follows (none: 1.0.6's); see
    /// `engine::LaterRule`.
    pub later: engine::LaterRules,
}

/// The engine settings scripts start with: MySQL 5.1.45's defaults where
/// they differ from the engine's own (`innodb_file_per_table` is OFF in
/// 5.1; the simulator's worlds default to ON so that every table has its
/// own file to tear).
pub fn script_config() -> Config {
    Config {
        buffer_pool_pages: 256,
        file_per_table: false,
        ..Config::default()
    }
}

/// Runs a script file: its directory is where includes resolve.
pub fn run_file(path: &Path) -> Result<ScriptRun, ScriptError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScriptError::Read(path.display().to_string(), e))?;
    let opts = Options {
        base: path.parent().map(Path::to_path_buf),
        ..Options::default()
    };
    run_with(&text, &path.display().to_string(), &opts)
}

/// Runs a script's text (`dir`: where `source` looks).
pub fn run_text(text: &str, name: &str, dir: Option<PathBuf>) -> Result<ScriptRun, ScriptError> {
    run_with(
        text,
        name,
        &Options {
            base: dir,
            ..Options::default()
        },
    )
}

/// The simulated data directory's name, as `$MYSQLD_DATADIR` and
/// `@@datadir`-style paths give it to tests.
pub const DATADIR: &str = "/innosim/data";

/// Runs a script's text with options.
pub fn run_with(text: &str, name: &str, opts: &Options) -> Result<ScriptRun, ScriptError> {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let env = BTreeMap::from([
        ("MYSQLD_DATADIR".to_string(), DATADIR.to_string()),
        ("MYSQLTEST_VARDIR".to_string(), "/innosim/var".to_string()),
        (
            "MYSQL_TEST_DIR".to_string(),
            "/innosim/mysql-test".to_string(),
        ),
        ("MASTER_MYPORT".to_string(), "13000".to_string()),
    ]);
    let mut r = Runner {
        storage,
        clock,
        config: script_config(),
        server: None,
        conns: BTreeMap::new(),
        current: Some("default".into()),
        out: String::new(),
        flags: Flags::default(),
        expect: Vec::new(),
        next: Decor::default(),
        vars: Vars::new(env),
        seed: 0,
        pending_crash: None,
        reader: Reader::new(name, text),
        cmds: Vec::new(),
        at: 0,
        blocks: vec![Block {
            kind: BlockKind::Top,
            ok: true,
            line: 0,
            delimiter: None,
        }],
        delimiter: ";".into(),
        send_next: false,
        require: None,
        base: opts.base.clone(),
        statements: Vec::new(),
        stop_requested: false,
        file: name.to_string(),
        line: 0,
    };
    r.config.later = opts.later;
    world::apply_startup(&mut r.config, &opts.startup).map_err(|m| ScriptError::Start {
        file: name.to_string(),
        message: m,
    })?;
    r.start().map_err(|m| ScriptError::Start {
        file: name.to_string(),
        message: m,
    })?;
    r.conn("default");
    let start = r.clock_now();
    let ending = match r.run() {
        Ok(()) => Ending::Completed,
        Err(Stop::Die(m)) => Ending::Failed(m),
        Err(Stop::Skip(m)) => Ending::Skipped(m),
    };
    let elapsed_us = r.clock_now() - start;
    let unreached = if matches!(ending, Ending::Completed) {
        0
    } else {
        r.count_unreached()
    };
    let mut output = r.out;
    if let Ending::Failed(m) = &ending {
        output.push_str(m);
        output.push('\n');
    }
    Ok(ScriptRun {
        output,
        aborted: matches!(ending, Ending::Failed(_)),
        ending,
        elapsed_us,
        statements: r.statements,
        unreached,
    })
}

/// Why a script stopped early.
enum Stop {
    /// mysqltest's `die`, with its message line.
    Die(String),
    /// `abort_not_supported_test`, with the reason.
    Skip(String),
}

struct Conn {
    id: ConnId,
    /// A `send` whose result has not been reaped: the query, and the
    /// finished reply if it finished.
    sent: Option<(String, Option<engine::sql::Reply>)>,
    /// Its blocked state was reported.
    reported_blocked: bool,
}

/// The output switches (`enable_*`/`disable_*`).
struct Flags {
    query_log: bool,
    result_log: bool,
    warnings: bool,
    info: bool,
    abort_on_error: bool,
    parsing: bool,
    vertical: bool,
    blocked_log: bool,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            query_log: true,
            result_log: true,
            warnings: true,
            info: false,
            abort_on_error: true,
            parsing: true,
            vertical: false,
            blocked_log: false,
        }
    }
}

/// What applies to the next command that runs something, then is reset
/// (mysqltest's `free_all_replace`, sorted and lowercase flags).
#[derive(Default)]
struct Decor {
    replace: Vec<(String, String)>,
    columns: BTreeMap<usize, String>,
    regex: Vec<(regex::Regex, String)>,
    sorted: bool,
    lowercase: bool,
}

/// One `--error` alternative.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    Errno(u16),
    State(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Top,
    If,
    While,
}

struct Block {
    kind: BlockKind,
    ok: bool,
    /// The command index of its `while`/`if`.
    line: usize,
    /// The delimiter to restore at the end of a false block.
    delimiter: Option<String>,
}

struct Runner {
    storage: SimStorage,
    clock: SimClock,
    config: Config,
    server: Option<Server>,
    conns: BTreeMap<String, Conn>,
    current: Option<String>,
    out: String,
    flags: Flags,
    expect: Vec<Expect>,
    next: Decor,
    vars: Vars,
    seed: u64,
    /// How the armed crash ends (set by `crash`, used by `restart`).
    pending_crash: Option<CrashMode>,
    reader: Reader,
    /// Every command read so far, for `while` to run again.
    cmds: Vec<reader::Command>,
    /// The next command's index in `cmds`.
    at: usize,
    blocks: Vec<Block>,
    delimiter: String,
    /// An empty `send` came: the next query is sent only.
    send_next: bool,
    /// `require`: the next query's output must equal this text, or the
    /// test is skipped (file name, text).
    require: Option<(String, String)>,
    base: Option<PathBuf>,
    statements: Vec<(usize, usize)>,
    /// `exit` ran.
    stop_requested: bool,
    file: String,
    line: usize,
}

impl Runner {
    fn clock_now(&self) -> u64 {
        use engine::io::Clock;
        self.clock.now_us()
    }

    /// mysqltest's `die`: its message with where it happened.
    fn die(&self, message: impl AsRef<str>) -> Stop {
        Stop::Die(format!(
            "mysqltest: {}At line {}: {}",
            if self.file_is_included() {
                format!("In included file \"{}\": ", self.file)
            } else {
                String::new()
            },
            self.line,
            message.as_ref()
        ))
    }

    fn file_is_included(&self) -> bool {
        self.cmds
            .first()
            .is_some_and(|first| first.file != self.file)
    }

    fn server(&mut self) -> &mut Server {
        self.server
            .as_mut()
            .expect("the server runs between commands")
    }

    /// The connection called `name`, opened now if it is new.
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

    /// The current connection's name.
    fn current(&self) -> Result<String, Stop> {
        self.current
            .clone()
            .ok_or_else(|| self.die("No current connection"))
    }

    /// The next command: again from the cache inside a `while`, else read.
    fn next_command(&mut self) -> Option<reader::Command> {
        if self.at < self.cmds.len() {
            return Some(self.cmds[self.at].clone());
        }
        let c = self.reader.read_command(&self.delimiter)?;
        self.cmds.push(c.clone());
        Some(c)
    }

    fn run(&mut self) -> Result<(), Stop> {
        while let Some(cmd) = self.next_command() {
            self.file = cmd.file.clone();
            self.line = cmd.line;
            let kind = self.kind(&cmd)?;
            let kind = if !self.flags.parsing
                && !matches!(kind, Kind::Cmd("enable_parsing" | "disable_parsing"))
            {
                Kind::Comment
            } else {
                kind
            };
            let ok = self.blocks.last().expect("the top block").ok
                || matches!(kind, Kind::Cmd("delimiter"));
            let mut advance = true;
            let mut executed = false;
            match kind {
                Kind::Comment => {}
                Kind::Cmd("while") | Kind::Cmd("if") => {
                    self.block(&cmd)?;
                    advance = false;
                }
                Kind::EndBlock => {
                    self.end_block()?;
                    advance = false;
                }
                _ if !ok => {}
                Kind::Query => {
                    executed = true;
                    let q = cmd.text.clone();
                    self.query(&q, QueryHow::Normal)?;
                }
                Kind::Cmd(name) => {
                    executed = self.command(name, &cmd)?;
                }
            }
            if !matches!(kind, Kind::Cmd("error") | Kind::Comment) {
                self.expect.clear();
            }
            if executed {
                self.next = Decor::default();
            }
            if advance {
                self.at += 1;
            }
            if self.stop_requested {
                break;
            }
        }
        if self.blocks.len() > 1 {
            return Err(self.die("Missing end of block"));
        }
        Ok(())
    }

    /// mysqltest's `get_command_type`.
    fn kind(&self, cmd: &reader::Command) -> Result<Kind, Stop> {
        if cmd.form == reader::Form::Comment {
            return Ok(Kind::Comment);
        }
        if cmd.text.starts_with('}') {
            return Ok(Kind::EndBlock);
        }
        let word = cmd.first_word().to_ascii_lowercase();
        if let Some(name) = COMMANDS.iter().find(|c| **c == word) {
            if *name == "end" {
                return Ok(Kind::EndBlock);
            }
            if *name == "query" {
                return Ok(Kind::Query);
            }
            return Ok(Kind::Cmd(name));
        }
        if cmd.form == reader::Form::Dashed {
            if cmd.text.is_empty() {
                return Ok(Kind::Comment);
            }
            return Err(self.die(
                "Found line beginning with --  that didn't contain a valid mysqltest command, \
                 check your syntax or use # if you intended to write a comment",
            ));
        }
        Ok(Kind::Query)
    }

    fn block(&mut self, cmd: &reader::Command) -> Result<(), Stop> {
        let kind = if cmd.first_word().eq_ignore_ascii_case("while") {
            BlockKind::While
        } else {
            BlockKind::If
        };
        let line = self.at;
        self.at += 1;
        if !self.blocks.last().expect("the top block").ok {
            self.blocks.push(Block {
                kind,
                ok: false,
                line,
                delimiter: None,
            });
            return Ok(());
        }
        let text = cmd.argument();
        let open = text
            .find('(')
            .ok_or_else(|| self.die(format!("missing '(' in {}", cmd.first_word())))?;
        let close = text
            .rfind(')')
            .ok_or_else(|| self.die(format!("missing ')' in {}", cmd.first_word())))?;
        let mut expr = text[open + 1..close].trim();
        let rest = text[close + 1..].trim();
        if !rest.is_empty() && rest != "{" {
            return Err(self.die(format!(
                "Missing '{{' after {}. Found \"{rest}\"",
                cmd.first_word()
            )));
        }
        let not = expr.starts_with('!');
        if not {
            expr = expr[1..].trim_start();
        }
        let value = self.eval_expr(expr)?;
        let mut ok = vars::atoi(&value) != 0;
        if not {
            ok = !ok;
        }
        let delimiter = (!ok).then(|| self.delimiter.clone());
        self.blocks.push(Block {
            kind,
            ok,
            line,
            delimiter,
        });
        Ok(())
    }

    fn end_block(&mut self) -> Result<(), Stop> {
        if self.blocks.len() == 1 {
            return Err(self.die("Stray '}' - end of block before beginning"));
        }
        let b = self.blocks.pop().expect("an inner block");
        if b.ok && b.kind == BlockKind::While {
            self.at = b.line;
        } else {
            if let Some(d) = b.delimiter {
                self.delimiter = d;
            }
            self.at += 1;
        }
        Ok(())
    }

    /// mysqltest's `eval_expr` on an already-written expression: a
    /// `$variable`, a `` `query` ``, `query_get_value(...)`, or the text.
    fn eval_expr(&mut self, expr: &str) -> Result<String, Stop> {
        if let Some(name) = expr.strip_prefix('$') {
            let n = Vars::name_len(name);
            if n == 0 {
                return Err(self.die("Empty variable"));
            }
            if !name[n..].trim().is_empty() {
                return Err(self.die(format!(
                    "Found junk '{}' after $variable in expression",
                    name[n..].trim()
                )));
            }
            return Ok(self.vars.get(&name[..n]));
        }
        if expr.starts_with('`') {
            let end = expr
                .rfind('`')
                .filter(|&e| e > 0)
                .ok_or_else(|| self.die("Syntax error in query, missing '`'"))?;
            let q = self.vars.expand(&expr[1..end]).map_err(|m| self.die(m))?;
            return self.query_value(&q);
        }
        if let Some(args) = expr.strip_prefix("query_get_value") {
            return self.query_get_value(args);
        }
        Ok(expr.to_string())
    }

    /// Counts the queries the script still holds after it stopped.
    fn count_unreached(&mut self) -> usize {
        let mut n = 0;
        self.at += 1;
        while let Some(cmd) = self.next_command() {
            if matches!(self.kind(&cmd), Ok(Kind::Query)) {
                n += 1;
            }
            self.at += 1;
        }
        n
    }
}

/// What a command is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Comment,
    Query,
    EndBlock,
    Cmd(&'static str),
}

/// mysqltest's command names (`command_names` in mysqltest.cc), and
/// innosim's own at the end.
const COMMANDS: &[&str] = &[
    "connection",
    "query",
    "connect",
    "sleep",
    "real_sleep",
    "inc",
    "dec",
    "source",
    "disconnect",
    "let",
    "echo",
    "while",
    "end",
    "system",
    "result",
    "require",
    "save_master_pos",
    "sync_with_master",
    "sync_slave_with_master",
    "error",
    "send",
    "reap",
    "dirty_close",
    "replace_result",
    "replace_column",
    "ping",
    "eval",
    "rpl_probe",
    "enable_rpl_parse",
    "disable_rpl_parse",
    "eval_result",
    "enable_query_log",
    "disable_query_log",
    "enable_result_log",
    "disable_result_log",
    "wait_for_slave_to_stop",
    "enable_warnings",
    "disable_warnings",
    "enable_info",
    "disable_info",
    "enable_metadata",
    "disable_metadata",
    "exec",
    "delimiter",
    "disable_abort_on_error",
    "enable_abort_on_error",
    "vertical_results",
    "horizontal_results",
    "query_vertical",
    "query_horizontal",
    "sorted_result",
    "lowercase_result",
    "start_timer",
    "end_timer",
    "character_set",
    "disable_ps_protocol",
    "enable_ps_protocol",
    "disable_reconnect",
    "enable_reconnect",
    "if",
    "disable_parsing",
    "enable_parsing",
    "replace_regex",
    "remove_file",
    "file_exists",
    "write_file",
    "copy_file",
    "perl",
    "die",
    "exit",
    "skip",
    "chmod",
    "append_file",
    "cat_file",
    "diff_files",
    "send_quit",
    "change_user",
    "mkdir",
    "rmdir",
    "list_files",
    "list_files_write_file",
    "list_files_append_file",
    "send_shutdown",
    "shutdown_server",
    "move_file",
    "remove_files_wildcard",
    "send_eval",
    // innosim's
    "crash",
    "restart",
    "replay-seed",
    "enable_blocked_log",
    "disable_blocked_log",
];

/// mysqltest's name for an error code, from MySQL's error list.
pub fn error_by_name(name: &str) -> Option<u16> {
    engine::sql::error::by_name(name).map(|e| e.1)
}

/// A line diff of expected and actual output, for a failed comparison.
pub fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let matched = common_lines(&a, &b);
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    for (mi, mj) in matched
        .into_iter()
        .chain(std::iter::once((a.len(), b.len())))
    {
        while i < mi {
            out.push_str(&format!("-{}\n", a[i]));
            i += 1;
        }
        while j < mj {
            out.push_str(&format!("+{}\n", b[j]));
            j += 1;
        }
        i += 1;
        j += 1;
    }
    out
}

/// The pairs of line numbers a longest common subsequence of `a` and `b`
/// matches, in order.
pub fn common_lines(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    // Equal heads and tails first: the table is only for the middle.
    let mut head = 0;
    while head < n && head < m && a[head] == b[head] {
        head += 1;
    }
    let mut tail = 0;
    while tail < n - head && tail < m - head && a[n - 1 - tail] == b[m - 1 - tail] {
        tail += 1;
    }
    let (a2, b2) = (&a[head..n - tail], &b[head..m - tail]);
    let (n2, m2) = (a2.len(), b2.len());
    let mut l = vec![vec![0u32; m2 + 1]; n2 + 1];
    for i in (0..n2).rev() {
        for j in (0..m2).rev() {
            l[i][j] = if a2[i] == b2[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let mut out: Vec<(usize, usize)> = (0..head).map(|k| (k, k)).collect();
    let (mut i, mut j) = (0, 0);
    while i < n2 && j < m2 {
        if a2[i] == b2[j] {
            out.push((head + i, head + j));
            i += 1;
            j += 1;
        } else if l[i + 1][j] >= l[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out.extend((0..tail).map(|k| (n - tail + k, m - tail + k)));
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
