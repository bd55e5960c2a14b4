//! System variables: SHOW VARIABLES' values, SET with MySQL's scope rules
//! and errors, and the variables expressions read. Mirrors `set_var.cc`.

use super::*;

/// A system variable's scope rules.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum VarScope {
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
pub(super) const VARIABLES: &[(&str, VarScope)] = &[
    ("auto_increment_increment", VarScope::Both),
    ("auto_increment_offset", VarScope::Both),
    ("autocommit", VarScope::Both),
    ("binlog_format", VarScope::Both),
    ("character_set_client", VarScope::Both),
    ("character_set_connection", VarScope::Both),
    ("character_set_database", VarScope::ReadOnly),
    ("character_set_results", VarScope::Both),
    ("character_set_server", VarScope::ReadOnly),
    ("character_set_system", VarScope::ReadOnly),
    ("collation_connection", VarScope::Both),
    ("collation_database", VarScope::ReadOnly),
    ("collation_server", VarScope::ReadOnly),
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
    ("max_allowed_packet", VarScope::ReadOnly),
    ("max_connections", VarScope::ReadOnly),
    ("sql_mode", VarScope::Both),
    ("storage_engine", VarScope::Both),
    ("tx_isolation", VarScope::Both),
    ("unique_checks", VarScope::Both),
    ("version", VarScope::ReadOnly),
    ("version_comment", VarScope::ReadOnly),
];

pub(super) fn iso_name(i: Isolation) -> &'static str {
    match i {
        Isolation::ReadUncommitted => "READ-UNCOMMITTED",
        Isolation::ReadCommitted => "READ-COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE-READ",
        Isolation::Serializable => "SERIALIZABLE",
    }
}

pub(super) fn on_off(b: bool) -> Datum {
    Datum::str(if b { "ON" } else { "OFF" })
}

/// Variable lookups for one connection.
pub(crate) struct ConnVars<'a> {
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

    fn connection_function(&self, name: &str, args: &[Datum]) -> Option<R<Datum>> {
        let conn = self.server.conns.get(&self.conn)?;
        let count = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(SqlError::new(
                    1582,
                    format!("Incorrect parameter count in the call to native function '{name}'"),
                ))
            }
        };
        Some(match name {
            "database" | "schema" => {
                count(0).map(|_| conn.db.as_deref().map_or(Datum::Null, Datum::str))
            }
            "connection_id" => count(0).map(|_| Datum::UInt(u64::from(self.conn))),
            // LAST_INSERT_ID(expr) returns expr and is what the next
            // LAST_INSERT_ID() returns (Item_func_last_insert_id).
            "last_insert_id" => match args {
                [] => Ok(Datum::UInt(conn.last_insert_id.get())),
                [v] => {
                    let n = v.as_i128().unwrap_or(0);
                    conn.last_insert_id.set(u64::try_from(n).unwrap_or(0));
                    Ok(v.clone())
                }
                _ => count(1).map(|_| Datum::Null),
            },
            _ => return None,
        })
    }
}

/// The character sets SET NAMES knows: MySQL 5.1's names for the
/// collations the layer has (`Collation::default_of_charset`).
pub(crate) fn charset_name(name: &str) -> R<&'static str> {
    let lower = name.to_ascii_lowercase();
    ["latin1", "utf8", "binary", "ascii"]
        .into_iter()
        .find(|c| *c == lower)
        .ok_or_else(|| SqlError::new(1115, format!("Unknown character set: '{name}'")))
}

/// The variables that are booleans (`SELECT @@name` gives 1 or 0).
pub(super) const BOOLEANS: &[&str] = &[
    "innodb_doublewrite",
    "innodb_file_per_table",
    "innodb_rollback_on_timeout",
    "innodb_strict_mode",
    "innodb_use_sys_malloc",
];

/// innodb_file_format's and innodb_file_format_check's values: a format's
/// name (any case) or its number, as `innobase_file_format_name_lookup`
/// reads them. `true` for Barracuda.
pub(super) fn file_format(d: &Datum) -> Option<bool> {
    let s = d.render();
    match s.to_ascii_lowercase().as_str() {
        "0" | "antelope" => Some(false),
        "1" | "barracuda" => Some(true),
        _ => None,
    }
}

/// A plugin variable's check function refused the value
/// (ER_WRONG_ARGUMENTS, as `sql_plugin.cc` reports it).
pub(super) fn wrong_arguments() -> SqlError {
    SqlError::new(1210, "Incorrect arguments to SET")
}

/// A boolean setting's value: ON/OFF, 1/0, TRUE/FALSE.
pub(super) fn bool_value(var: &str, d: &Datum) -> R<bool> {
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
    pub(crate) fn vars(&self, c: ConnId) -> ConnVars<'_> {
        ConnVars {
            server: self,
            conn: c,
        }
    }

    pub(super) fn scope_of(name: &str) -> R<VarScope> {
        VARIABLES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .ok_or_else(|| SqlError::unknown_variable(name))
    }

    /// A variable's value (`global`: the GLOBAL one).
    pub(crate) fn variable(&self, c: ConnId, global: bool, name: &str) -> R<Datum> {
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
            "version_comment" => Datum::str("innosim"),
            // The protocol's limit (sim::serve's MAX_ALLOWED_PACKET):
            // read-only until the server takes another.
            "max_allowed_packet" => int(1 << 20),
            "max_connections" => int(self.globals.max_connections),
            "character_set_client"
            | "character_set_connection"
            | "character_set_results"
            | "collation_connection" => {
                let (client, connection, results) = if session {
                    conn.charsets
                } else {
                    self.globals.charsets
                };
                match name {
                    "character_set_client" => Datum::str(client),
                    "character_set_connection" => Datum::str(connection.charset()),
                    "character_set_results" => results.map_or(Datum::Null, Datum::str),
                    _ => Datum::str(connection.name()),
                }
            }
            "character_set_database" | "character_set_server" => Datum::str("latin1"),
            "character_set_system" => Datum::str("utf8"),
            "collation_database" | "collation_server" => Datum::str("latin1_swedish_ci"),
            _ => return Err(SqlError::unknown_variable(name)),
        })
    }

    /// A variable's compiled-in default, for `SET x = DEFAULT`.
    pub(super) fn default_of(&self, name: &str) -> Datum {
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
    pub(crate) fn set_variable(&mut self, c: ConnId, scope: Scope, name: &str, e: &Expr) -> R<()> {
        if scope == Scope::User {
            let no_cols = Columns::none();
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
                let no_cols = Columns::none();
                eval::eval(e, None, &no_cols, &self.vars(c))?
            }
        };
        let global = scope == Scope::Global;
        match name {
            "character_set_client"
            | "character_set_connection"
            | "character_set_results"
            | "collation_connection" => {
                let cs = if (v.is_null() && name == "character_set_results")
                    || name == "collation_connection"
                {
                    None
                } else {
                    Some(charset_name(&v.render())?)
                };
                // character_set_connection takes its set's default
                // collation; collation_connection names one.
                let coll = if name == "collation_connection" {
                    Collation::by_name(&v.render()).ok_or_else(|| {
                        SqlError::new(1273, format!("Unknown collation: '{}'", v.render()))
                    })?
                } else {
                    Collation::default_of_charset(cs.unwrap_or("latin1")).unwrap_or_default()
                };
                // The global values are the next connections' defaults.
                let charsets = if global {
                    &mut self.globals.charsets
                } else {
                    &mut self.conn_mut(c).charsets
                };
                match name {
                    "character_set_client" => charsets.0 = cs.unwrap_or("latin1"),
                    "character_set_results" => charsets.2 = cs,
                    _ => charsets.1 = coll,
                }
            }
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
                        let session = conn.session;
                        self.engine.set_foreign_key_checks(session, on);
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
                let mode = match crate::sql::SqlMode::parse(&text) {
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
    pub(super) fn session_request(&mut self, c: ConnId, r: Request) -> R<()> {
        let s = self.conn(c).session;
        match self.engine.execute(s, r) {
            Ok(Step::Done(_)) => Ok(()),
            Ok(Step::Waiting) => {
                let mut step = self.engine.resume(s);
                while let Ok(Step::Waiting) = step {
                    step = self.engine.resume(s);
                }
                step.map(|_| ())
                    .map_err(|e| SqlError::from_engine(&e, crate::sql::DEFAULT_DB))
            }
            Err(e) => Err(SqlError::from_engine(&e, crate::sql::DEFAULT_DB)),
        }
    }
}
