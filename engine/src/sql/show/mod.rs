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

mod information_schema;
mod vars;

use vars::*;

/// SHOW INDEX's Cardinality of a key prefix with `n_diff` distinct values
/// in a table of `rows`, as MySQL 5.1 derives it from InnoDB's statistics:
/// rows per key value (`rec_per_key`, halved because "MySQL seems to favor
/// table scans too much", at least 1), then rows over that
/// (`ha_innobase::info`, `sql_show.cc`).
fn cardinality(rows: u64, n_diff: u64) -> u64 {
    let per_key = rows.checked_div(n_diff).unwrap_or(rows);
    rows / (per_key / 2).max(1)
}

impl Server {
    /// The engine's definition of table `name`.
    fn engine_def(&self, name: &str) -> R<crate::dict::TableDef> {
        self.engine
            .table(name)
            .map(|t| t.def.clone())
            .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))
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
                let def = self.engine_def(&name)?;
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
                let def = self.engine_def(&name)?;
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
                let def = self.engine_def(&name)?;
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
            Show::Processlist { full } => {
                // One row a connection: who, where, doing what for how
                // long (mysqld_list_processes). The server's own internal
                // session is no connection.
                let now = self.engine.now_us();
                let rows = self
                    .conns
                    .iter()
                    .map(|(&id, conn)| {
                        let busy = conn.query.is_some();
                        let info = conn.query.as_deref().map(|q| {
                            if full {
                                q.to_string()
                            } else {
                                q.chars().take(100).collect()
                            }
                        });
                        // MySQL 5.1's thd_proc_info for the phase a row
                        // statement waits for InnoDB's locks in.
                        let verb = conn
                            .query
                            .as_deref()
                            .and_then(|q| q.split_whitespace().next())
                            .map(str::to_ascii_uppercase);
                        let state = match verb.as_deref() {
                            None | Some("SHOW") => None,
                            Some("SELECT") => Some("Sending data"),
                            Some("UPDATE" | "DELETE") => Some("Updating"),
                            Some("INSERT" | "REPLACE") => Some("update"),
                            Some(_) => Some(""),
                        };
                        vec![
                            int(u64::from(id)),
                            Datum::str(&conn.client.0),
                            Datum::str(&conn.client.1),
                            conn.db.as_deref().map_or(Datum::Null, Datum::str),
                            Datum::str(if busy { "Query" } else { "Sleep" }),
                            int(now.saturating_sub(conn.since_us) / 1_000_000),
                            state.map_or(Datum::Null, Datum::str),
                            info.as_deref().map_or(Datum::Null, Datum::str),
                        ]
                    })
                    .collect();
                Ok(Self::rows(
                    &[
                        "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
                    ],
                    rows,
                ))
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

    /// SHOW ENGINE INNODB STATUS: its LATEST DETECTED DEADLOCK and
    /// TRANSACTIONS sections (the history list's length, then each
    /// session's transaction).
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
                // trx_print's counts: structs, record locks, and undo
                // records where there are any.
                let undo = if t.undo > 0 {
                    format!(", undo log entries {}", t.undo)
                } else {
                    String::new()
                };
                s.push_str(&format!(
                    "*** ({n}) TRANSACTION:\nTRANSACTION {}, MySQL thread id {}\nLOCK WAIT {} lock struct(s), {} row lock(s){undo}\n*** ({n}) WAITING FOR THIS LOCK TO BE GRANTED:\n{waiting}\n",
                    t.trx_id,
                    self.thread_id(t.session),
                    t.lock_structs,
                    t.row_locks,
                    n = i + 1
                ));
            }
            s.push_str(&format!(
                "*** WE ROLL BACK TRANSACTION ({})\n",
                d.victim + 1
            ));
        }
        let history = self
            .engine
            .history_list_length()
            .map_err(|e| SqlError::from_engine(&e, super::DEFAULT_DB))?;
        s.push_str("------------\nTRANSACTIONS\n------------\n");
        s.push_str(&format!("History list length {history}\n"));
        s.push_str("LIST OF TRANSACTIONS FOR EACH SESSION:\n");
        for t in trx {
            s.push_str(&format!(
                "---TRANSACTION {}, {}, MySQL thread id {}\n",
                t.trx_id,
                t.trx_state,
                self.thread_id(t.trx_mysql_thread_id)
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
pub(super) const INNODB_COMMENT: &str =
    "Supports transactions, row-level locking, and foreign keys";

pub(super) const STATUS_COLUMNS: [&str; 18] = [
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
pub(super) fn display_table(t: &str, q: char) -> String {
    let inner = unquoted(t);
    match split_name(inner) {
        Some((d, n)) => format!("{}.{}", quote_in(&d, q), quote_in(&n, q)),
        None => quote_in(inner, q),
    }
}

/// A name the engine shows in backquotes, without them.
pub(super) fn unquoted(name: &str) -> &str {
    name.strip_prefix('`')
        .and_then(|n| n.strip_suffix('`'))
        .unwrap_or(name)
}

/// A name quoted with `q`, which doubles inside it.
pub(super) fn quote_in(name: &str, q: char) -> String {
    let doubled: String = [q, q].iter().collect();
    format!("{q}{}{q}", name.replace(q, &doubled))
}
