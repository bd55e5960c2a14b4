//! SHOW statements, information_schema tables and system variables.
//! Mirrors `sql_show.cc` and `set_var.cc` for what innosim has, and
//! InnoDB's `i_s.cc` for the INNODB_* tables.

use super::ast::*;
use super::error::{SqlError, Warning};
use super::eval::{self, int, Columns, Vars};
use super::schema;
use super::value::Datum;
use super::{split_name, ConnId, Reply, Server};
use crate::handler::{FlushAtCommit, Request, Step};
use crate::record::collation::Collation;
use crate::trx::Isolation;

type R<T> = Result<T, SqlError>;

/// A system variable's scope rules.
#[derive(Clone, Copy, PartialEq, Eq)]
enum VarScope {
    /// Session and global.
    Both,
    /// Global only.
    Global,
    /// Read only.
    ReadOnly,
    /// Session only.
    Session,
}

/// The variables innosim knows, with their scopes.
const VARIABLES: &[(&str, VarScope)] = &[
    ("auto_increment_increment", VarScope::Both),
    ("auto_increment_offset", VarScope::Both),
    ("autocommit", VarScope::Both),
    ("binlog_format", VarScope::Both),
    ("innodb_compression_level", VarScope::Global),
    ("innodb_io_capacity", VarScope::Global),
    ("innodb_max_dirty_pages_pct", VarScope::Global),
    ("foreign_key_checks", VarScope::Both),
    ("innodb_buffer_pool_size", VarScope::ReadOnly),
    ("innodb_doublewrite", VarScope::ReadOnly),
    ("innodb_file_format", VarScope::Global),
    ("innodb_file_format_check", VarScope::Global),
    ("innodb_file_per_table", VarScope::Global),
    ("innodb_flush_log_at_trx_commit", VarScope::Global),
    ("innodb_lock_wait_timeout", VarScope::Both),
    ("innodb_page_size", VarScope::ReadOnly),
    ("innodb_rollback_on_timeout", VarScope::ReadOnly),
    ("innodb_stats_sample_pages", VarScope::Global),
    ("innodb_strict_mode", VarScope::Both),
    ("innodb_use_sys_malloc", VarScope::ReadOnly),
    ("innodb_version", VarScope::ReadOnly),
    ("insert_id", VarScope::Session),
    ("sql_mode", VarScope::Both),
    ("storage_engine", VarScope::Both),
    ("tx_isolation", VarScope::Both),
    ("unique_checks", VarScope::Both),
    ("version", VarScope::ReadOnly),
];

/// SHOW INDEX's Cardinality of a key prefix with `n_diff` distinct values
/// in a table of `rows`, as MySQL 5.1 derives it from InnoDB's statistics:
/// rows per key value (`rec_per_key`, halved because "MySQL seems to favor
/// table scans too much", at least 1), then rows over that
/// (`ha_innobase::info`, `sql_show.cc`).
fn cardinality(rows: u64, n_diff: u64) -> u64 {
    let per_key = if n_diff == 0 { rows } else { rows / n_diff };
    rows / (per_key / 2).max(1)
}

fn iso_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadUncommitted => "READ-UNCOMMITTED",
        Isolation::ReadCommitted => "READ-COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE-READ",
        Isolation::Serializable => "SERIALIZABLE",
    }
}

fn on_off(b: bool) -> Datum {
    Datum::str(if b { "ON" } else { "OFF" })
}

/// Variable lookups for one connection.
pub(super) struct ConnVars<'a> {
    server: &'a Server,
    conn: ConnId,
}

impl Vars for ConnVars<'_> {
    fn var(&self, global: bool, name: &str) -> R<Datum> {
        if let Some(user) = name.strip_prefix('@') {
            // A user variable never set is NULL.
            return Ok(self
                .server
                .conn(self.conn)
                .user_vars
                .get(user)
                .cloned()
                .unwrap_or(Datum::Null));
        }
        // A boolean variable reads as 1 or 0 in an expression; SHOW
        // VARIABLES shows it as ON or OFF.
        Ok(match self.server.variable(self.conn, global, name)? {
            Datum::Str(b) if BOOLEANS.contains(&name) && b == b"ON" => Datum::Int(1),
            Datum::Str(b) if BOOLEANS.contains(&name) && b == b"OFF" => Datum::Int(0),
            d => d,
        })
    }
}

/// The variables that are booleans (`SELECT @@name` gives 1 or 0).
const BOOLEANS: &[&str] = &[
    "innodb_doublewrite",
    "innodb_file_per_table",
    "innodb_rollback_on_timeout",
    "innodb_strict_mode",
    "innodb_use_sys_malloc",
];

/// innodb_file_format's and innodb_file_format_check's values: a format's
/// name (any case) or its number, as `innobase_file_format_name_lookup`
/// reads them. `true` for Barracuda.
fn file_format(d: &Datum) -> Option<bool> {
    let s = d.render();
    match s.to_ascii_lowercase().as_str() {
        "0" | "antelope" => Some(false),
        "1" | "barracuda" => Some(true),
        _ => None,
    }
}

/// A plugin variable's check function refused the value
/// (ER_WRONG_ARGUMENTS, as `sql_plugin.cc` reports it).
fn wrong_arguments() -> SqlError {
    SqlError::new(1210, "Incorrect arguments to SET")
}

/// A boolean setting's value: ON/OFF, 1/0, TRUE/FALSE.
fn bool_value(var: &str, d: &Datum) -> R<bool> {
    match d {
        Datum::Int(0) => Ok(false),
        Datum::Int(1) => Ok(true),
        Datum::Str(b) => match String::from_utf8_lossy(b).to_ascii_uppercase().as_str() {
            "ON" | "TRUE" => Ok(true),
            "OFF" | "FALSE" => Ok(false),
            _ => Err(SqlError::wrong_value(var, &d.render())),
        },
        _ => Err(SqlError::wrong_value(var, &d.render())),
    }
}

impl Server {
    pub(super) fn vars(&self, c: ConnId) -> ConnVars<'_> {
        ConnVars {
            server: self,
            conn: c,
        }
    }

    fn scope_of(name: &str) -> R<VarScope> {
        VARIABLES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .ok_or_else(|| SqlError::unknown_variable(name))
    }

    /// A variable's value (`global`: the GLOBAL one).
    pub(super) fn variable(&self, c: ConnId, global: bool, name: &str) -> R<Datum> {
        let name = if name == "transaction_isolation" {
            "tx_isolation"
        } else {
            name
        };
        let scope = Self::scope_of(name)?;
        let conn = self.conn(c);
        let session = !global && matches!(scope, VarScope::Both | VarScope::Session);
        let cfg = self.engine.config();
        Ok(match name {
            "autocommit" => Datum::Int(i64::from(if session {
                self.engine.autocommit(conn.session)
            } else {
                self.globals.autocommit
            })),
            "foreign_key_checks" => Datum::Int(i64::from(!session || conn.foreign_key_checks)),
            "auto_increment_increment" | "auto_increment_offset" => {
                let step = if session {
                    conn.autoinc_step
                } else {
                    self.globals.autoinc_step
                };
                int(if name == "auto_increment_increment" {
                    step.increment
                } else {
                    step.offset
                })
            }
            "binlog_format" => Datum::str(if session {
                conn.binlog_format
            } else {
                self.globals.binlog_format
            }),
            "insert_id" => int(conn.insert_id.unwrap_or(0)),
            "unique_checks" => Datum::Int(i64::from(!session || conn.unique_checks)),
            "innodb_buffer_pool_size" => {
                int(cfg.buffer_pool_pages as u64 * crate::page::PAGE_SIZE as u64)
            }
            "innodb_doublewrite" => on_off(cfg.doublewrite),
            "innodb_compression_level" => int(u64::from(cfg.compression_level)),
            "innodb_io_capacity" => int(cfg.io_capacity as u64),
            "innodb_max_dirty_pages_pct" => int(cfg.max_dirty_pages_pct as u64),
            "innodb_file_format" => Datum::str(if self.globals.barracuda {
                "Barracuda"
            } else {
                "Antelope"
            }),
            "innodb_file_per_table" => on_off(cfg.file_per_table),
            "innodb_file_format_check" => Datum::str(if self.globals.format_check {
                "Barracuda"
            } else {
                "Antelope"
            }),
            // innosim allocates through Rust's allocator, the system's.
            "innodb_use_sys_malloc" => on_off(true),
            "storage_engine" => Datum::str("InnoDB"),
            "sql_mode" => Datum::str(
                &if session {
                    conn.sql_mode
                } else {
                    self.globals.sql_mode
                }
                .render(),
            ),
            "innodb_flush_log_at_trx_commit" => int(u64::from(cfg.flush_at_commit.setting())),
            "innodb_lock_wait_timeout" => int(if session {
                self.engine.lock_wait_timeout_secs(conn.session)
            } else {
                self.globals.lock_wait_timeout
            }),
            "innodb_page_size" => int(crate::page::PAGE_SIZE as u64),
            "innodb_rollback_on_timeout" => on_off(cfg.rollback_on_timeout),
            "innodb_stats_sample_pages" => int(self.globals.stats_sample_pages),
            "innodb_strict_mode" => on_off(if session {
                conn.strict_mode
            } else {
                self.globals.strict_mode
            }),
            "innodb_version" => Datum::str("1.0.2"),
            "tx_isolation" => Datum::str(iso_name(if session {
                self.engine.isolation(conn.session)
            } else {
                self.globals.isolation
            })),
            "version" => Datum::str("5.1.30-innosim"),
            _ => return Err(SqlError::unknown_variable(name)),
        })
    }

    /// A variable's compiled-in default, for `SET x = DEFAULT`.
    fn default_of(&self, name: &str) -> Datum {
        match name {
            "autocommit" | "foreign_key_checks" | "unique_checks" => Datum::Int(1),
            "auto_increment_increment" | "auto_increment_offset" => Datum::Int(1),
            "binlog_format" => Datum::str("STATEMENT"),
            "insert_id" => Datum::Int(0),
            "innodb_file_format" => Datum::str("Antelope"),
            // The latest format this release supports.
            "innodb_file_format_check" => Datum::str("Barracuda"),
            "innodb_file_per_table" | "innodb_strict_mode" => Datum::str("OFF"),
            "innodb_lock_wait_timeout" => Datum::Int(50),
            "innodb_flush_log_at_trx_commit" => Datum::Int(1),
            "innodb_compression_level" => Datum::Int(6),
            "innodb_io_capacity" => Datum::Int(200),
            "innodb_max_dirty_pages_pct" => Datum::Int(75),
            "innodb_stats_sample_pages" => Datum::Int(8),
            "tx_isolation" => Datum::str("REPEATABLE-READ"),
            "storage_engine" => Datum::str("InnoDB"),
            "sql_mode" => Datum::str(""),
            _ => Datum::str("DEFAULT"),
        }
    }

    /// SET, with MySQL's scope rules and errors.
    pub(super) fn set_variable(&mut self, c: ConnId, scope: Scope, name: &str, e: &Expr) -> R<()> {
        if scope == Scope::User {
            let no_cols = Columns {
                names: &[],
                collations: None,
                table: None,
                clause: "field list",
                join: None,
            };
            let v = eval::eval(e, None, &no_cols, &self.vars(c))?;
            self.conn_mut(c).user_vars.insert(name.to_string(), v);
            return Ok(());
        }
        let name = if name == "transaction_isolation" {
            "tx_isolation"
        } else {
            name
        };
        let vs = Self::scope_of(name)?;
        match (vs, scope) {
            (VarScope::ReadOnly, _) => {
                return Err(SqlError::new(
                    1238,
                    format!("Variable '{name}' is a read only variable"),
                ))
            }
            (VarScope::Session, Scope::Global) => {
                return Err(SqlError::new(
                    1228,
                    format!(
                        "Variable '{name}' is a SESSION variable and can't be used with SET GLOBAL"
                    ),
                ))
            }
            (VarScope::Global, Scope::Session) => {
                return Err(SqlError::new(
                    1229,
                    format!(
                        "Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"
                    ),
                ))
            }
            _ => {}
        }
        // A bare word is its own name as a string (`SET x = ON`);
        // DEFAULT is the variable's compiled-in default.
        let v = match e {
            Expr::Call { name: f, args, .. } if f == "default" && args.is_empty() => {
                self.default_of(name)
            }
            Expr::Column { table: None, name } => Datum::str(name),
            e => {
                let no_cols = Columns {
                    names: &[],
                    collations: None,
                    table: None,
                    clause: "field list",
                    join: None,
                };
                eval::eval(e, None, &no_cols, &self.vars(c))?
            }
        };
        let global = scope == Scope::Global;
        match name {
            "autocommit" => {
                let on = bool_value(name, &v)?;
                if global {
                    self.globals.autocommit = on;
                } else {
                    self.session_request(c, Request::SetAutocommit(on))?;
                }
            }
            "auto_increment_increment" | "auto_increment_offset" | "insert_id" => {
                let n = match &v {
                    Datum::Int(_) | Datum::UInt(_) => v.as_i128().unwrap_or(0),
                    _ => {
                        return Err(SqlError::new(
                            1232,
                            format!("Incorrect argument type to variable '{name}'"),
                        ))
                    }
                };
                if name == "insert_id" {
                    self.conn_mut(c).insert_id = u64::try_from(n).ok().filter(|&n| n > 0);
                } else {
                    // MySQL clamps to 1..=65535 with a warning.
                    let clamped = n.clamp(1, 65_535) as u64;
                    if clamped as i128 != n {
                        self.warn(
                            c,
                            Warning::warn(1292, format!("Truncated incorrect {name} value: '{n}'")),
                        );
                    }
                    let step = if global {
                        &mut self.globals.autoinc_step
                    } else {
                        &mut self.conn_mut(c).autoinc_step
                    };
                    if name == "auto_increment_increment" {
                        step.increment = clamped;
                    } else {
                        step.offset = clamped;
                    }
                }
            }
            "binlog_format" => {
                let text = v.render().to_ascii_uppercase();
                let f = match text.as_str() {
                    "ROW" | "2" => "ROW",
                    "STATEMENT" | "1" => "STATEMENT",
                    "MIXED" | "0" => "MIXED",
                    _ => return Err(SqlError::wrong_value(name, &v.render())),
                };
                if global {
                    self.globals.binlog_format = f;
                } else {
                    self.conn_mut(c).binlog_format = f;
                }
            }
            "foreign_key_checks" | "unique_checks" => {
                let on = bool_value(name, &v)?;
                if !global {
                    let conn = self.conn_mut(c);
                    if name == "unique_checks" {
                        conn.unique_checks = on;
                    } else {
                        conn.foreign_key_checks = on;
                    }
                }
            }
            "innodb_strict_mode" => {
                let on = bool_value(name, &v)?;
                if global {
                    self.globals.strict_mode = on;
                } else {
                    self.conn_mut(c).strict_mode = on;
                }
            }
            "innodb_file_format" => {
                self.globals.barracuda = file_format(&v).ok_or_else(wrong_arguments)?;
            }
            "innodb_file_format_check" => {
                // innodb_file_format_check_validate: ON and OFF only at
                // startup; a format up to Barracuda, by name or number.
                let Some(f) = file_format(&v) else {
                    let on_off = matches!(v.render().to_ascii_lowercase().as_str(), "on" | "off");
                    self.warn(
                        c,
                        Warning::warn(
                            1210,
                            if on_off {
                                "InnoDB: invalid innodb_file_format_check value; on/off can only \
                                 be set at startup or in the configuration file"
                            } else {
                                "InnoDB: invalid innodb_file_format_check value; can be any \
                                 format up to Barracuda or its equivalent numeric id"
                            },
                        ),
                    );
                    return Err(wrong_arguments());
                };
                self.globals.format_check = f;
            }
            "sql_mode" => {
                let text = v.render();
                let mode = match super::SqlMode::parse(&text) {
                    Ok(Ok(m)) => m,
                    Ok(Err(unsupported)) => {
                        return Err(SqlError::unsupported(&format!("sql_mode {unsupported}")))
                    }
                    Err(_) => return Err(SqlError::wrong_value(name, &text)),
                };
                if global {
                    self.globals.sql_mode = mode;
                } else {
                    self.conn_mut(c).sql_mode = mode;
                }
            }
            "storage_engine" => {
                if !v.render().eq_ignore_ascii_case("innodb") {
                    return Err(SqlError::new(
                        1286,
                        format!("Unknown table engine '{}'", v.render()),
                    ));
                }
            }
            "innodb_file_per_table" => {
                let on = bool_value(name, &v)?;
                self.engine.set_file_per_table(on);
            }
            "innodb_flush_log_at_trx_commit" => {
                let n = v.as_i128().filter(|n| (0..=2).contains(n));
                let f = n
                    .and_then(|n| FlushAtCommit::from_setting(n as u8).ok())
                    .ok_or_else(|| SqlError::wrong_value(name, &v.render()))?;
                self.engine.set_flush_at_commit(f);
            }
            "innodb_lock_wait_timeout" => {
                let n = match &v {
                    Datum::Int(_) | Datum::UInt(_) => v.as_i128().unwrap_or(0),
                    _ => {
                        return Err(SqlError::new(
                            1232,
                            format!("Incorrect argument type to variable '{name}'"),
                        ))
                    }
                };
                // MySQL clamps to 1..=1073741824 with a warning.
                let clamped = n.clamp(1, 1_073_741_824) as u64;
                if clamped as i128 != n {
                    self.warn(
                        c,
                        Warning::warn(1292, format!("Truncated incorrect {name} value: '{n}'")),
                    );
                }
                if global {
                    self.globals.lock_wait_timeout = clamped;
                } else {
                    self.session_request(c, Request::SetLockWaitTimeout(clamped))?;
                }
            }
            "innodb_compression_level"
            | "innodb_io_capacity"
            | "innodb_max_dirty_pages_pct"
            | "innodb_stats_sample_pages" => {
                // Integer variables with a range: out of it, MySQL clamps
                // and warns.
                let (lo, hi) = match name {
                    "innodb_compression_level" => (0, 9),
                    "innodb_io_capacity" => (100, 1 << 32),
                    "innodb_stats_sample_pages" => (1, i128::from(u64::MAX)),
                    _ => (0, 99),
                };
                let n = match &v {
                    Datum::Int(_) | Datum::UInt(_) => v.as_i128().unwrap_or(0),
                    _ => {
                        return Err(SqlError::new(
                            1232,
                            format!("Incorrect argument type to variable '{name}'"),
                        ))
                    }
                };
                let clamped = n.clamp(lo, hi);
                if clamped != n {
                    self.warn(
                        c,
                        Warning::warn(1292, format!("Truncated incorrect {name} value: '{n}'")),
                    );
                }
                let n = clamped as u64;
                match name {
                    "innodb_compression_level" => self.engine.set_compression_level(n as u32),
                    "innodb_io_capacity" => self.engine.set_io_capacity(n as usize),
                    "innodb_stats_sample_pages" => self.globals.stats_sample_pages = n,
                    _ => self.engine.set_max_dirty_pages_pct(n as usize),
                }
            }
            "tx_isolation" => {
                let t = v.render().to_ascii_uppercase().replace(' ', "-");
                let iso = match t.as_str() {
                    "READ-UNCOMMITTED" => Isolation::ReadUncommitted,
                    "READ-COMMITTED" => Isolation::ReadCommitted,
                    "REPEATABLE-READ" => Isolation::RepeatableRead,
                    "SERIALIZABLE" => Isolation::Serializable,
                    _ => return Err(SqlError::wrong_value(name, &v.render())),
                };
                if global {
                    self.globals.isolation = iso;
                } else {
                    self.session_request(c, Request::SetIsolation(iso))?;
                }
            }
            _ => return Err(SqlError::unknown_variable(name)),
        }
        Ok(())
    }

    /// A settings request, which neither waits nor fails on a session
    /// without a waiting statement.
    fn session_request(&mut self, c: ConnId, r: Request) -> R<()> {
        let s = self.conn(c).session;
        match self.engine.execute(s, r) {
            Ok(Step::Done(_)) => Ok(()),
            Ok(Step::Waiting) => {
                let mut step = self.engine.resume(s);
                while let Ok(Step::Waiting) = step {
                    step = self.engine.resume(s);
                }
                step.map(|_| ())
                    .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))
            }
            Err(e) => Err(SqlError::from_engine(&e, super::DEFAULT_DB)),
        }
    }

    fn rows(columns: &[&str], rows: Vec<Vec<Datum>>) -> Reply {
        Reply::Rows {
            columns: columns.iter().map(|s| s.to_string()).collect(),
            rows,
            warnings: 0,
        }
    }

    /// Filters rows by a LIKE pattern on their first column, or a WHERE.
    fn filtered(
        &self,
        c: ConnId,
        columns: &[&str],
        rows: Vec<Vec<Datum>>,
        like: Option<&str>,
        filter: Option<&Expr>,
    ) -> R<Reply> {
        let names: Vec<String> = columns.iter().map(|s| s.to_string()).collect();
        let cols = Columns {
            names: &names,
            collations: None,
            table: None,
            clause: "where clause",
            join: None,
        };
        let vars = self.vars(c);
        let mut out = Vec::new();
        for r in rows {
            let keep = match (like, filter) {
                (Some(p), _) => {
                    let e = Expr::Like(
                        Box::new(Expr::Lit(r[0].clone())),
                        Box::new(Expr::Lit(Datum::str(p))),
                        false,
                    );
                    eval::eval(&e, None, &cols, &vars)?.truth() == Some(true)
                }
                (None, Some(f)) => eval::eval(f, Some(&r), &cols, &vars)?.truth() == Some(true),
                (None, None) => true,
            };
            if keep {
                out.push(r);
            }
        }
        Ok(Self::rows(columns, out))
    }

    pub(super) fn show(&mut self, c: ConnId, s: Show) -> R<Reply> {
        match s {
            Show::Warnings | Show::Errors => {
                let errors_only = s == Show::Errors;
                let rows = self
                    .conn(c)
                    .warnings
                    .iter()
                    .filter(|w| !errors_only || w.level == "Error")
                    .map(|w| {
                        vec![
                            Datum::str(w.level),
                            int(u64::from(w.code)),
                            Datum::str(&w.message),
                        ]
                    })
                    .collect();
                Ok(Self::rows(&["Level", "Code", "Message"], rows))
            }
            Show::Databases => {
                let mut dbs: Vec<String> = vec!["information_schema".into()];
                dbs.extend(
                    self.engine
                        .table_names()
                        .iter()
                        .filter_map(|n| split_name(n))
                        .filter(|(_, t)| t.is_empty())
                        .map(|(d, _)| d.to_string()),
                );
                Ok(Self::rows(
                    &["Database"],
                    dbs.iter().map(|d| vec![Datum::str(d)]).collect(),
                ))
            }
            Show::Tables => {
                let db = self
                    .conn(c)
                    .db
                    .clone()
                    .ok_or_else(|| SqlError::new(1046, "No database selected"))?;
                let rows = self
                    .tables_of(&db)
                    .into_iter()
                    .map(|t| vec![Datum::str(&t)])
                    .collect();
                Ok(Self::rows(&[&format!("Tables_in_{db}")], rows))
            }
            Show::Variables(scope, like, filter) => {
                let global = scope == Scope::Global;
                let mut rows = Vec::new();
                for (name, _) in VARIABLES {
                    rows.push(vec![Datum::str(name), self.variable(c, global, name)?]);
                }
                self.filtered(
                    c,
                    &["Variable_name", "Value"],
                    rows,
                    like.as_deref(),
                    filter.as_ref(),
                )
            }
            Show::CreateTable(t) => {
                let (name, meta) = self.resolve(c, &t)?;
                let def = self
                    .engine
                    .table(&name)
                    .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))?
                    .def
                    .clone();
                let auto = self.autoinc.get(&name).copied();
                let text = schema::show_create(&t.name, &def, &meta, auto);
                Ok(Self::rows(
                    &["Table", "Create Table"],
                    vec![vec![Datum::str(&t.name), Datum::str(&text)]],
                ))
            }
            Show::TableStatus(like, filter) => {
                let db = self
                    .conn(c)
                    .db
                    .clone()
                    .ok_or_else(|| SqlError::new(1046, "No database selected"))?;
                let mut rows = Vec::new();
                for t in self.tables_of(&db) {
                    // SHOW TABLE STATUS opens every table it lists.
                    if let Some(name) = self.find_table(&db, &t) {
                        self.open_table(&name);
                    }
                    rows.push(self.status_row(&db, &t)?);
                }
                self.filtered(c, &STATUS_COLUMNS, rows, like.as_deref(), filter.as_ref())
            }
            Show::Index(t) => {
                let (name, meta) = self.resolve(c, &t)?;
                let def = self
                    .engine
                    .table(&name)
                    .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))?
                    .def
                    .clone();
                let stats = self.engine.table_stats(&name).cloned();
                let mut rows = Vec::new();
                let mut push = |key: &str, unique: bool, cols: &[usize], prefixes: &[u16]| {
                    let est = stats.as_ref().and_then(|s| {
                        let (_, ix) = s.indexes.iter().find(|(n, _)| n == key)?;
                        Some((s.rows, ix.n_diff.clone()))
                    });
                    for (i, &col) in cols.iter().enumerate() {
                        let cardinality = match &est {
                            Some((rows, n_diff)) => match n_diff.get(i) {
                                Some(&d) => int(cardinality(*rows, d)),
                                None => Datum::Null,
                            },
                            // Not analyzed since the server started.
                            None => Datum::Null,
                        };
                        // In characters, as MySQL shows it.
                        let w = meta.columns.get(col).map_or(1, |c| c.char_bytes());
                        let sub_part = match prefixes.get(i) {
                            Some(&p) if p != 0 => int(u64::from(p / w)),
                            _ => Datum::Null,
                        };
                        let column = &def.columns[col];
                        rows.push(vec![
                            Datum::str(&t.name),
                            Datum::Int(i64::from(!unique)),
                            Datum::str(key),
                            int(i as u64 + 1),
                            Datum::str(&column.name),
                            Datum::str("A"),
                            cardinality,
                            sub_part,
                            Datum::Null,
                            Datum::str(if column.nullable { "YES" } else { "" }),
                            Datum::str("BTREE"),
                            Datum::str(""),
                        ]);
                    }
                };
                if !def.primary_key.is_empty() {
                    push("PRIMARY", true, &def.primary_key, &def.primary_prefixes);
                }
                for ix in &def.indexes {
                    push(&ix.name, ix.unique, &ix.columns, &ix.prefixes);
                }
                Ok(Self::rows(
                    &[
                        "Table",
                        "Non_unique",
                        "Key_name",
                        "Seq_in_index",
                        "Column_name",
                        "Collation",
                        "Cardinality",
                        "Sub_part",
                        "Packed",
                        "Null",
                        "Index_type",
                        "Comment",
                    ],
                    rows,
                ))
            }
            Show::Columns(t) => {
                let (name, meta) = self.resolve(c, &t)?;
                let def = self
                    .engine
                    .table(&name)
                    .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))?
                    .def
                    .clone();
                let rows = meta
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, col)| {
                        let key = if def.primary_key.contains(&i) {
                            "PRI"
                        } else if def.indexes.iter().any(|x| x.columns[0] == i && x.unique) {
                            "UNI"
                        } else if def.indexes.iter().any(|x| x.columns[0] == i) {
                            "MUL"
                        } else {
                            ""
                        };
                        vec![
                            Datum::str(&col.name),
                            Datum::str(&col.render_type()),
                            Datum::str(if col.not_null { "NO" } else { "YES" }),
                            Datum::str(key),
                            col.default.clone().unwrap_or(Datum::Null),
                            Datum::str(if col.auto_increment {
                                "auto_increment"
                            } else {
                                ""
                            }),
                        ]
                    })
                    .collect();
                Ok(Self::rows(
                    &["Field", "Type", "Null", "Key", "Default", "Extra"],
                    rows,
                ))
            }
            Show::Collation(like, filter) => {
                let rows = Collation::ALL
                    .into_iter()
                    .map(|k| {
                        let default = Collation::default_of_charset(k.charset()) == Some(k);
                        vec![
                            Datum::str(k.name()),
                            Datum::str(k.charset()),
                            int(u64::from(k.id())),
                            Datum::str(if default { "Yes" } else { "" }),
                            Datum::str("Yes"),
                            int(1),
                        ]
                    })
                    .collect();
                self.filtered(
                    c,
                    &[
                        "Collation",
                        "Charset",
                        "Id",
                        "Default",
                        "Compiled",
                        "Sortlen",
                    ],
                    rows,
                    like.as_deref(),
                    filter.as_ref(),
                )
            }
            Show::CharacterSet(like, filter) => {
                let rows = [
                    ("latin1", "cp1252 West European", "latin1_swedish_ci"),
                    ("binary", "Binary pseudo charset", "binary"),
                ]
                .into_iter()
                .map(|(n, d, k)| vec![Datum::str(n), Datum::str(d), Datum::str(k), int(1)])
                .collect();
                self.filtered(
                    c,
                    &["Charset", "Description", "Default collation", "Maxlen"],
                    rows,
                    like.as_deref(),
                    filter.as_ref(),
                )
            }
            Show::InnodbStatus => {
                let text = self.innodb_status()?;
                Ok(Self::rows(
                    &["Type", "Name", "Status"],
                    vec![vec![
                        Datum::str("InnoDB"),
                        Datum::str(""),
                        Datum::str(&text),
                    ]],
                ))
            }
        }
    }

    /// The tables of database `db`, sorted by name.
    fn tables_of(&self, db: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .metas
            .keys()
            .filter_map(|n| split_name(n))
            .filter(|(d, t)| d.eq_ignore_ascii_case(db) && !t.is_empty())
            .map(|(_, t)| t.to_string())
            .collect();
        v.sort();
        v
    }

    fn status_row(&mut self, db: &str, table: &str) -> R<Vec<Datum>> {
        let name = self.find_table(db, table).expect("listed tables exist");
        let st = self
            .engine
            .table_status(&name)
            .map_err(|e| SqlError::from_engine(&e, db))?;
        let meta = &self.metas[&name];
        let fmt = match st.row_format.as_str() {
            "COMPACT" => "Compact",
            "REDUNDANT" => "Redundant",
            "DYNAMIC" => "Dynamic",
            _ => "Compressed",
        };
        let auto = if meta.columns.iter().any(|c| c.auto_increment) {
            self.autoinc.get(&name).map_or(Datum::Null, |&n| int(n))
        } else {
            Datum::Null
        };
        Ok(vec![
            Datum::str(table),
            Datum::str("InnoDB"),
            Datum::Int(10),
            Datum::str(fmt),
            int(st.rows),
            int(st.avg_row_length),
            int(st.data_length),
            Datum::Int(0),
            int(st.index_length),
            int(st.data_free),
            auto,
            Datum::Null,
            Datum::Null,
            Datum::Null,
            Datum::str("latin1_swedish_ci"),
            Datum::Null,
            Datum::str(&schema::create_options(meta)),
            Datum::str(""),
        ])
    }

    /// The rows of an information_schema table.
    pub(super) fn information_schema(
        &mut self,
        c: ConnId,
        table: &str,
    ) -> R<(Vec<String>, Vec<Vec<Datum>>)> {
        let opt_str = |s: &Option<String>| s.as_deref().map_or(Datum::Null, Datum::str);
        let opt_int = |v: Option<u64>| v.map_or(Datum::Null, int);
        let names = |cols: &[&str]| cols.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = |e: crate::Error| SqlError::from_engine(&e, super::DEFAULT_DB);
        let lower = table.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "innodb_trx" => {
                let queries: std::collections::BTreeMap<u32, String> = self
                    .conns
                    .values()
                    .filter_map(|x| x.query.clone().map(|q| (x.session, q)))
                    .collect();
                let rows = self
                    .engine
                    .innodb_trx()
                    .map_err(e)?
                    .into_iter()
                    .map(|t| {
                        vec![
                            Datum::str(&t.trx_id),
                            Datum::str(&t.trx_state),
                            int(t.trx_started / 1_000_000),
                            opt_str(&t.trx_requested_lock_id),
                            opt_int(t.trx_wait_started.map(|w| w / 1_000_000)),
                            int(t.trx_weight),
                            int(u64::from(t.trx_mysql_thread_id)),
                            queries
                                .get(&t.trx_mysql_thread_id)
                                .map_or(Datum::Null, |q| Datum::str(q)),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "trx_id",
                        "trx_state",
                        "trx_started",
                        "trx_requested_lock_id",
                        "trx_wait_started",
                        "trx_weight",
                        "trx_mysql_thread_id",
                        "trx_query",
                    ]),
                    rows,
                )
            }
            "innodb_locks" => {
                // Names are quoted as the connection quotes identifiers
                // (`innobase_convert_identifier`: `"` under ANSI_QUOTES).
                let q = if self.conn(c).sql_mode.ansi_quotes {
                    '"'
                } else {
                    '`'
                };
                let rows = self
                    .engine
                    .innodb_locks()
                    .map_err(e)?
                    .into_iter()
                    .map(|l| {
                        vec![
                            Datum::str(&l.lock_id),
                            Datum::str(&l.lock_trx_id),
                            Datum::str(&l.lock_mode),
                            Datum::str(&l.lock_type),
                            Datum::str(&display_table(&l.lock_table, q)),
                            l.lock_index
                                .as_deref()
                                .map_or(Datum::Null, |i| Datum::str(&quote_in(unquoted(i), q))),
                            opt_int(l.lock_space.map(u64::from)),
                            opt_int(l.lock_page.map(u64::from)),
                            opt_int(l.lock_rec.map(u64::from)),
                            opt_str(&l.lock_data),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "lock_id",
                        "lock_trx_id",
                        "lock_mode",
                        "lock_type",
                        "lock_table",
                        "lock_index",
                        "lock_space",
                        "lock_page",
                        "lock_rec",
                        "lock_data",
                    ]),
                    rows,
                )
            }
            "innodb_lock_waits" => {
                let rows = self
                    .engine
                    .innodb_lock_waits()
                    .map_err(e)?
                    .into_iter()
                    .map(|w| {
                        vec![
                            Datum::str(&w.requesting_trx_id),
                            Datum::str(&w.requested_lock_id),
                            Datum::str(&w.blocking_trx_id),
                            Datum::str(&w.blocking_lock_id),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "requesting_trx_id",
                        "requested_lock_id",
                        "blocking_trx_id",
                        "blocking_lock_id",
                    ]),
                    rows,
                )
            }
            "innodb_cmp" | "innodb_cmp_reset" => {
                let rows = if lower == "innodb_cmp" {
                    self.engine.innodb_cmp()
                } else {
                    self.engine.innodb_cmp_reset()
                };
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        vec![
                            int(u64::from(r.page_size)),
                            int(r.compress_ops),
                            int(r.compress_ops_ok),
                            int(r.compress_time),
                            int(r.uncompress_ops),
                            int(r.uncompress_time),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "page_size",
                        "compress_ops",
                        "compress_ops_ok",
                        "compress_time",
                        "uncompress_ops",
                        "uncompress_time",
                    ]),
                    rows,
                )
            }
            "innodb_cmpmem" | "innodb_cmpmem_reset" => {
                let rows = if lower == "innodb_cmpmem" {
                    self.engine.innodb_cmpmem()
                } else {
                    self.engine.innodb_cmpmem_reset()
                };
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        vec![
                            int(u64::from(r.page_size)),
                            int(r.pages_used),
                            int(r.pages_free),
                            int(r.relocation_ops),
                            int(r.relocation_time),
                        ]
                    })
                    .collect();
                (
                    names(&[
                        "page_size",
                        "pages_used",
                        "pages_free",
                        "relocation_ops",
                        "relocation_time",
                    ]),
                    rows,
                )
            }
            "tables" => {
                let mut rows = Vec::new();
                let dbs: Vec<(String, String)> = self
                    .metas
                    .keys()
                    .filter_map(|n| split_name(n).map(|(d, t)| (d.to_string(), t.to_string())))
                    .collect();
                for (d, t) in dbs {
                    let mut r = vec![Datum::str("def"), Datum::str(&d)];
                    r.extend(self.status_row(&d, &t)?);
                    rows.push(r);
                }
                let mut cols = vec!["TABLE_CATALOG", "TABLE_SCHEMA"];
                cols.extend(STATUS_COLUMNS.iter().map(|c| match *c {
                    "Name" => "TABLE_NAME",
                    "Engine" => "ENGINE",
                    "Version" => "VERSION",
                    "Row_format" => "ROW_FORMAT",
                    "Rows" => "TABLE_ROWS",
                    "Avg_row_length" => "AVG_ROW_LENGTH",
                    "Data_length" => "DATA_LENGTH",
                    "Max_data_length" => "MAX_DATA_LENGTH",
                    "Index_length" => "INDEX_LENGTH",
                    "Data_free" => "DATA_FREE",
                    "Auto_increment" => "AUTO_INCREMENT",
                    "Create_time" => "CREATE_TIME",
                    "Update_time" => "UPDATE_TIME",
                    "Check_time" => "CHECK_TIME",
                    "Collation" => "TABLE_COLLATION",
                    "Checksum" => "CHECKSUM",
                    "Create_options" => "CREATE_OPTIONS",
                    _ => "TABLE_COMMENT",
                }));
                (names(&cols), rows)
            }
            // The one storage engine there is.
            "engines" => (
                names(&[
                    "ENGINE",
                    "SUPPORT",
                    "COMMENT",
                    "TRANSACTIONS",
                    "XA",
                    "SAVEPOINTS",
                ]),
                vec![vec![
                    Datum::str("InnoDB"),
                    Datum::str("DEFAULT"),
                    Datum::str(INNODB_COMMENT),
                    Datum::str("YES"),
                    Datum::str("YES"),
                    Datum::str("YES"),
                ]],
            ),
            // The InnoDB Plugin's storage engine and its information_schema
            // tables, as the plugin declares them (ha_innodb.cc's
            // mysql_declare_plugin, i_s.cc).
            "plugins" => {
                let plugin = |name: &str, kind: &str, descr: &str| {
                    vec![
                        Datum::str(name),
                        Datum::str("1.0"),
                        Datum::str("ACTIVE"),
                        Datum::str(kind),
                        Datum::str("50145.0"),
                        Datum::str("ha_innodb_plugin.so"),
                        Datum::str("1.0"),
                        Datum::str("Innobase Oy"),
                        Datum::str(descr),
                        Datum::str("GPL"),
                    ]
                };
                let mut rows = vec![plugin("InnoDB", "STORAGE ENGINE", INNODB_COMMENT)];
                for (n, d) in [
                    ("INNODB_TRX", "InnoDB transactions"),
                    ("INNODB_LOCKS", "InnoDB conflicting locks"),
                    ("INNODB_LOCK_WAITS", "InnoDB which lock is blocking which"),
                    ("INNODB_CMP", "Statistics for the InnoDB compression"),
                    (
                        "INNODB_CMP_RESET",
                        "Statistics for the InnoDB compression; reset cumulated counts",
                    ),
                    (
                        "INNODB_CMPMEM",
                        "Statistics for the InnoDB compressed buffer pool",
                    ),
                    (
                        "INNODB_CMPMEM_RESET",
                        "Statistics for the InnoDB compressed buffer pool; reset cumulated counts",
                    ),
                ] {
                    rows.push(plugin(n, "INFORMATION SCHEMA", d));
                }
                (
                    names(&[
                        "PLUGIN_NAME",
                        "PLUGIN_VERSION",
                        "PLUGIN_STATUS",
                        "PLUGIN_TYPE",
                        "PLUGIN_TYPE_VERSION",
                        "PLUGIN_LIBRARY",
                        "PLUGIN_LIBRARY_VERSION",
                        "PLUGIN_AUTHOR",
                        "PLUGIN_DESCRIPTION",
                        "PLUGIN_LICENSE",
                    ]),
                    rows,
                )
            }
            _ => {
                let _ = c;
                return Err(SqlError::no_such_table("information_schema", table));
            }
        })
    }

    /// SHOW ENGINE INNODB STATUS: its LATEST DETECTED DEADLOCK and
    /// TRANSACTIONS sections.
    fn innodb_status(&mut self) -> R<String> {
        let trx = self
            .engine
            .innodb_trx()
            .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))?;
        let mut s = String::from("\n=====================================\nINNODB MONITOR OUTPUT\n=====================================\n");
        if let Some(d) = self.engine.latest_deadlock() {
            s.push_str(
                "------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n",
            );
            s.push_str(&format!(
                "at {:.6} s of the engine's clock\n",
                d.at_us as f64 / 1e6
            ));
            for (i, t) in d.trxs.iter().enumerate() {
                let mut waiting = t.waiting_for.clone();
                for name in self.metas.keys() {
                    if let Some((db, table)) = split_name(name) {
                        waiting =
                            waiting.replace(&format!("`{name}`"), &format!("`{db}`.`{table}`"));
                    }
                }
                s.push_str(&format!(
                    "*** ({n}) TRANSACTION:\nTRANSACTION {}, MySQL thread id {}\n*** ({n}) WAITING FOR THIS LOCK TO BE GRANTED:\n{waiting}\n",
                    t.trx_id,
                    t.session,
                    n = i + 1
                ));
            }
            s.push_str(&format!(
                "*** WE ROLL BACK TRANSACTION ({})\n",
                d.victim + 1
            ));
        }
        s.push_str("------------\nTRANSACTIONS\n------------\n");
        s.push_str("LIST OF TRANSACTIONS FOR EACH SESSION:\n");
        for t in trx {
            s.push_str(&format!(
                "---TRANSACTION {}, {}, MySQL thread id {}\n",
                t.trx_id, t.trx_state, t.trx_mysql_thread_id
            ));
            if let Some(l) = &t.trx_requested_lock_id {
                s.push_str(&format!("------- TRX HAS BEEN WAITING FOR LOCK {l}\n"));
            }
        }
        s.push_str("----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n");
        Ok(s)
    }
}

/// SHOW TABLE STATUS's columns.
/// The InnoDB Plugin's description of itself.
const INNODB_COMMENT: &str = "Supports transactions, row-level locking, and foreign keys";

const STATUS_COLUMNS: [&str; 18] = [
    "Name",
    "Engine",
    "Version",
    "Row_format",
    "Rows",
    "Avg_row_length",
    "Data_length",
    "Max_data_length",
    "Index_length",
    "Data_free",
    "Auto_increment",
    "Create_time",
    "Update_time",
    "Check_time",
    "Collation",
    "Checksum",
    "Create_options",
    "Comment",
];

/// An engine table name (in backquotes, as the engine shows it) as
/// `db`.`table`, quoted with `q`.
fn display_table(t: &str, q: char) -> String {
    let inner = unquoted(t);
    match split_name(inner) {
        Some((d, n)) => format!("{}.{}", quote_in(&d, q), quote_in(&n, q)),
        None => quote_in(inner, q),
    }
}

/// A name the engine shows in backquotes, without them.
fn unquoted(name: &str) -> &str {
    name.strip_prefix('`')
        .and_then(|n| n.strip_suffix('`'))
        .unwrap_or(name)
}

/// A name quoted with `q`, which doubles inside it.
fn quote_in(name: &str, q: char) -> String {
    let doubled: String = [q, q].iter().collect();
    format!("{q}{}{q}", name.replace(q, &doubled))
}
