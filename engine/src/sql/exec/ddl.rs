//! CREATE, DROP, TRUNCATE, RENAME and the other statements that change
//! what tables and databases exist, under the table locks InnoDB's DDL
//! takes.

use super::*;

impl Server {
    /// Reads the largest value of each AUTO_INCREMENT column, as InnoDB
    /// does the first time a table is used (`row_search_max_autoinc`).
    pub(in crate::sql) fn init_autoinc(&mut self, name: &str) -> R<()> {
        let meta = &self.metas[name];
        let Some(col) = meta.columns.iter().position(|c| c.auto_increment) else {
            return Ok(());
        };
        let s = self.internal;
        let req = Request::scan_all(name);
        let rows = match self.engine.execute(s, req) {
            Ok(Step::Done(Response::Rows(r))) => r,
            Ok(_) => Vec::new(),
            Err(e) => return Err(SqlError::from_engine(&e, crate::sql::DEFAULT_DB)),
        };
        let max = rows
            .iter()
            .filter_map(|r| Datum::from_value(r[col].clone()).as_i128())
            .max()
            .unwrap_or(0);
        self.autoinc
            .insert(name.to_string(), u64::try_from(max).unwrap_or(0) + 1);
        Ok(())
    }

    // ---- DDL ----

    pub(super) fn ddl(&mut self, c: ConnId, stmt: Stmt) -> R<Outcome> {
        match stmt {
            Stmt::CreateDatabase {
                name,
                if_not_exists,
            } => {
                if self.database_exists(&name) {
                    return self.ok_or_fail(
                        c,
                        if_not_exists,
                        1007,
                        format!("Can't create database '{name}'; database exists"),
                    );
                }
                check_name(&name, 1102, "Incorrect database name")?;
                self.create_database_marker(&name)?;
                Ok(self.ok_with(c, vec![]))
            }
            Stmt::DropDatabase { name, if_exists } => {
                if !self.database_exists(&name) {
                    return self.ok_or_fail(
                        c,
                        if_exists,
                        1008,
                        format!("Can't drop database '{name}'; database doesn't exist"),
                    );
                }
                let canon = self.canonical_db(&name);
                let mut tables: VecDeque<String> = self
                    .engine
                    .table_names()
                    .into_iter()
                    .filter(|n| split_name(n).is_some_and(|(d, t)| d == canon && !t.is_empty()))
                    .collect();
                let affected = tables.len() as u64;
                // Then the database's own dictionary row.
                tables.push_back(engine_name(&canon, ""));
                let prefix = engine_name(&canon, "");
                self.drop_tables(
                    c,
                    tables,
                    Some(prefix),
                    Box::new(move |srv, _| {
                        for conn in srv.conns.values_mut() {
                            if conn.db.as_deref() == Some(canon.as_str()) {
                                conn.db = None;
                            }
                        }
                        Ok(Outcome::Done(Reply::Ok {
                            affected,
                            info: None,
                            warnings: 0,
                        }))
                    }),
                )
            }
            Stmt::CreateTable(ct) => {
                let db = self.db_of(c, &ct.name)?;
                if !self.database_exists(&db) {
                    return Err(SqlError::new(1049, format!("Unknown database '{db}'")));
                }
                let db = self.canonical_db(&db);
                check_name(&ct.name.name, 1103, "Incorrect table name")?;
                if self.find_table(&db, &ct.name.name).is_some() {
                    return self.ok_or_fail(
                        c,
                        ct.if_not_exists,
                        1050,
                        format!("Table '{}' already exists", ct.name.name),
                    );
                }
                if let Some(e) = &ct.options.engine {
                    if !e.eq_ignore_ascii_case("innodb") {
                        return Err(SqlError::new(1286, format!("Unknown table engine '{e}'")));
                    }
                }
                let strict = self.conn(c).strict_mode;
                let (format, warnings) = match schema::decide_format(
                    &ct.options,
                    self.globals.barracuda,
                    self.engine.config().file_per_table,
                    strict,
                ) {
                    Ok(x) => x,
                    Err(warnings) => {
                        for w in warnings {
                            self.warn(c, w);
                        }
                        return Err(SqlError::new(
                            1005,
                            format!("Can't create table '{db}.{}' (errno: 1478)", ct.name.name),
                        ));
                    }
                };
                let name = engine_name(&db, &ct.name.name);
                let mut warnings = warnings;
                let (def, meta) = match schema::build(&ct, &name, format, &mut warnings) {
                    Ok(x) => x,
                    Err(e) => {
                        // InnoDB's warnings stay for SHOW WARNINGS.
                        for w in warnings {
                            self.warn(c, w);
                        }
                        return Err(e);
                    }
                };
                let mut def = def;
                if (self.engine.config().later).has(crate::LaterRule::DuplicateIndexNote) {
                    schema::duplicate_index_notes(&def.indexes, 0, &mut warnings);
                }
                if !ct.foreign.is_empty() {
                    // Where each clause stood among the secondary keys.
                    let specs: Vec<(usize, ForeignSpec)> = (ct.foreign.iter())
                        .map(|(at, fk)| {
                            let before = ct.indexes[..*at].iter().filter(|ix| !ix.primary).count();
                            (before, fk.clone())
                        })
                        .collect();
                    self.add_foreign(&db, &ct.name.name, &mut def, &meta, &specs)?;
                    def.server = schema::show_create(&ct.name.name, &def, &meta, None).into_bytes();
                }
                self.strict_record_size(c, &def, 0)?;
                let format = def.row_format;
                let checks = self.conn(c).foreign_key_checks;
                self.engine
                    .create_table_checked(def, checks)
                    .map_err(|e| self.engine_err(c, &e))?;
                self.tag_file_format(format);
                self.metas.insert(name.clone(), meta);
                let start = ct.options.auto_increment.unwrap_or(1).max(1);
                if self.metas[&name].columns.iter().any(|c| c.auto_increment) {
                    self.autoinc.insert(name, start);
                }
                Ok(self.ok_with(c, warnings))
            }
            Stmt::CreateTableLike {
                name,
                like,
                if_not_exists,
            } => {
                let (old, meta) = self.resolve(c, &like)?;
                let def = self
                    .engine
                    .table(&old)
                    .map_err(|e| self.engine_err(c, &e))?
                    .def
                    .clone();
                let db = self.canonical_db(&self.db_of(c, &name)?);
                if !self.database_exists(&db) {
                    return Err(SqlError::new(1049, format!("Unknown database '{db}'")));
                }
                if self.find_table(&db, &name.name).is_some() {
                    return self.ok_or_fail(
                        c,
                        if_not_exists,
                        1050,
                        format!("Table '{}' already exists", name.name),
                    );
                }
                check_name(&name.name, 1103, "Incorrect table name")?;
                let new = engine_name(&db, &name.name);
                let mut def = def;
                def.name = new.clone();
                def.server = schema::show_create(&name.name, &def, &meta, None).into_bytes();
                let format = def.row_format;
                self.engine
                    .create_table(def)
                    .map_err(|e| self.engine_err(c, &e))?;
                self.tag_file_format(format);
                if meta.columns.iter().any(|c| c.auto_increment) {
                    self.autoinc.insert(new.clone(), 1);
                }
                self.metas.insert(new, meta);
                Ok(self.ok_with(c, vec![]))
            }
            Stmt::DropTable { names, if_exists } => {
                let mut missing = Vec::new();
                let mut found = Vec::new();
                for t in &names {
                    let db = self.db_of(c, t)?;
                    match self.find_table(&db, &t.name) {
                        Some(n) => found.push(n),
                        None => missing.push(t.name.clone()),
                    }
                }
                if !missing.is_empty() && !if_exists {
                    return Err(SqlError::new(
                        1051,
                        format!("Unknown table '{}'", missing.join(",")),
                    ));
                }
                let warnings: Vec<Warning> = missing
                    .into_iter()
                    .map(|m| Warning::note(1051, format!("Unknown table '{m}'")))
                    .collect();
                self.drop_tables(
                    c,
                    found.into(),
                    None,
                    Box::new(move |srv, c| Ok(srv.ok_with(c, warnings))),
                )
            }
            Stmt::CreateIndex { table, index } => {
                self.alter_indexes(c, &table, vec![index], vec![])
            }
            Stmt::DropIndex { table, name } => self.alter_indexes(c, &table, vec![], vec![name]),
            Stmt::AlterTable {
                table,
                ops,
                options,
                algorithm,
            } => {
                // A constraint added or dropped copies the table in MySQL
                // 5.1 with InnoDB Plugin 1.0.
                let primary = ops.iter().any(|op| {
                    matches!(
                        op,
                        AlterOp::DropPrimary | AlterOp::AddForeign(_) | AlterOp::DropForeign(_)
                    ) || matches!(op, AlterOp::AddIndex(ix) if ix.primary)
                });
                let columns = ops.iter().any(|op| {
                    matches!(
                        op,
                        AlterOp::AddColumn(..)
                            | AlterOp::DropColumn(_)
                            | AlterOp::ChangeColumn { .. }
                    )
                });
                if columns
                    && algorithm != Some(Algorithm::Copy)
                    && options == TableOptions::default()
                    && self.renames_only(c, &table, &ops)?
                {
                    return self.alter_rename_columns(c, &table, ops);
                }
                // An index dropped and added again under its name (DROP
                // INDEX b, ADD INDEX (b)): the engine builds a new index
                // beside the old one, so the two names would meet; the
                // table is copied instead, which swaps both at once.
                let dropped: Vec<&String> = ops
                    .iter()
                    .filter_map(|op| match op {
                        AlterOp::DropIndex(n) => Some(n),
                        _ => None,
                    })
                    .collect();
                let readded = ops.iter().any(|op| match op {
                    AlterOp::AddIndex(ix) if !ix.primary => {
                        let n = ix.name.as_ref().or(ix.columns.first());
                        n.is_some_and(|n| dropped.iter().any(|d| d.eq_ignore_ascii_case(n)))
                    }
                    _ => false,
                });
                let copy = algorithm == Some(Algorithm::Copy)
                    || options != TableOptions::default()
                    || primary
                    || columns
                    || readded && algorithm != Some(Algorithm::Inplace);
                if copy {
                    if algorithm == Some(Algorithm::Inplace) {
                        return Err(SqlError::new(
                            1846,
                            "ALGORITHM=INPLACE is not supported. Reason: this change rebuilds the table. Try ALGORITHM=COPY.",
                        ));
                    }
                    return self.alter_copy(c, &table, ops, options);
                }
                let mut adds = Vec::new();
                let mut drops = Vec::new();
                for op in ops {
                    match op {
                        AlterOp::AddIndex(ix) => adds.push(ix),
                        AlterOp::DropIndex(n) => drops.push(n),
                        AlterOp::DropPrimary
                        | AlterOp::AddForeign(_)
                        | AlterOp::DropForeign(_)
                        | AlterOp::AddColumn(..)
                        | AlterOp::DropColumn(_)
                        | AlterOp::ChangeColumn { .. } => {
                            unreachable!("a primary key, constraint or column change copies")
                        }
                    }
                }
                self.alter_indexes(c, &table, adds, drops)
            }
            Stmt::RenameTable(pairs) => {
                // Every pair judged first, in order, against the names the
                // earlier pairs leave (MySQL's mysql_rename_tables: a, b
                // TO b, c works), so that a refused pair renames nothing.
                let mut names: std::collections::BTreeSet<String> =
                    self.metas.keys().map(|k| k.to_ascii_lowercase()).collect();
                let mut steps = VecDeque::new();
                for (from, to) in pairs {
                    let db = self.db_of(c, &from)?;
                    let fname = engine_name(&db, &from.name);
                    let real = self
                        .metas
                        .keys()
                        .find(|k| k.eq_ignore_ascii_case(&fname))
                        .cloned()
                        .unwrap_or(fname.clone());
                    if !names.remove(&fname.to_ascii_lowercase()) {
                        return Err(SqlError::no_such_table(&db, &from.name));
                    }
                    let to_db = self.db_of(c, &to)?;
                    if !self.database_exists(&to_db) {
                        return Err(SqlError::new(1049, format!("Unknown database '{to_db}'")));
                    }
                    let tname = engine_name(&to_db, &to.name);
                    if !names.insert(tname.to_ascii_lowercase()) {
                        return Err(SqlError::new(
                            1050,
                            format!("Table '{}' already exists", to.name),
                        ));
                    }
                    steps.push_back((real, tname));
                }
                self.rename_tables(c, steps)
            }
            Stmt::Truncate(t) => {
                let (name, meta) = self.resolve(c, &t)?;
                if self.conn(c).foreign_key_checks && self.engine.is_referenced(&name) {
                    // InnoDB will not recreate a table another table's
                    // constraint references; MySQL 5.1 then deletes its
                    // rows one by one, through the constraints.
                    return self.run_inner(
                        c,
                        Stmt::Delete {
                            table: t,
                            filter: None,
                            order_by: Vec::new(),
                            limit: None,
                        },
                    );
                }
                let auto_increment = meta.columns.iter().any(|c| c.auto_increment);
                self.under_table_lock(
                    c,
                    &name.clone(),
                    true,
                    Box::new(move |srv, c, locked| {
                        locked?;
                        srv.locked_ddl(c, &name, |e, s| e.truncate_table(s, &name))?;
                        // AUTO_INCREMENT starts again, as InnoDB's TRUNCATE
                        // resets it.
                        if auto_increment {
                            srv.autoinc.insert(name, 1);
                        }
                        Ok(srv.ok_with(c, vec![]))
                    }),
                )
            }
            Stmt::Optimize(tables) => self.optimize(c, tables.into(), Vec::new()),
            Stmt::Check(tables) => {
                // CHECK TABLE: every index of each table walked and
                // compared with the clustered index (btr_validate_index,
                // row_check_index_for_mysql); a problem is reported as
                // InnoDB's CHECK TABLE does, and the table as Corrupt.
                let mut rows = Vec::new();
                let row = |t: &Datum, kind: &str, text: &str| {
                    vec![
                        t.clone(),
                        Datum::str("check"),
                        Datum::str(kind),
                        Datum::str(text),
                    ]
                };
                for t in tables {
                    let db = self.db_of(c, &t)?;
                    let shown = Datum::str(&format!("{db}.{}", t.name));
                    let report = match self.resolve(c, &t) {
                        Ok((name, _)) => self
                            .engine
                            .check_table(&name)
                            .map_err(|e| self.engine_err(c, &e)),
                        Err(e) => Err(e),
                    };
                    match report {
                        Ok(r) if r.is_ok() => rows.push(row(&shown, "status", "OK")),
                        Ok(r) => {
                            for p in &r.problems {
                                rows.push(row(&shown, "warning", &format!("InnoDB: {p}")));
                            }
                            rows.push(row(&shown, "error", "Corrupt"));
                        }
                        Err(e) => {
                            rows.push(row(&shown, "Error", &e.message));
                            rows.push(row(&shown, "status", "Operation failed"));
                        }
                    }
                }
                Ok(Outcome::Done(Reply::Rows {
                    columns: ["Table", "Op", "Msg_type", "Msg_text"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                    rows,
                    warnings: 0,
                }))
            }
            Stmt::Analyze(tables) => {
                // ANALYZE TABLE: InnoDB's statistics sampled again from
                // innodb_stats_sample_pages leaf pages of each index.
                let sample = self.globals.stats_sample_pages;
                let mut rows = Vec::new();
                for t in tables {
                    let db = self.db_of(c, &t)?;
                    let shown = Datum::str(&format!("{db}.{}", t.name));
                    let row = |kind: &str, text: &str| {
                        vec![
                            shown.clone(),
                            Datum::str("analyze"),
                            Datum::str(kind),
                            Datum::str(text),
                        ]
                    };
                    let done = match self.resolve(c, &t) {
                        Ok((name, _)) => self
                            .engine
                            .analyze_table(&name, sample)
                            .map_err(|e| self.engine_err(c, &e)),
                        Err(e) => Err(e),
                    };
                    match done {
                        Ok(_) => rows.push(row("status", "OK")),
                        Err(e) => {
                            rows.push(row("Error", &e.message));
                            rows.push(row("status", "Operation failed"));
                        }
                    }
                }
                Ok(Outcome::Done(Reply::Rows {
                    columns: ["Table", "Op", "Msg_type", "Msg_text"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                    rows,
                    warnings: 0,
                }))
            }
            other => unreachable!("not a DDL statement: {other:?}"),
        }
    }

    /// An OK reply with `warnings` given to the connection.
    pub(super) fn ok_with(&mut self, c: ConnId, warnings: Vec<Warning>) -> Outcome {
        let n = warnings.len();
        for w in warnings {
            self.warn(c, w);
        }
        Outcome::Done(Reply::Ok {
            affected: 0,
            info: None,
            warnings: n,
        })
    }

    /// DROP TABLE of `rest` (engine names), one table at a time, each
    /// under its X lock and committed before the next is locked; then
    /// `finish` makes the reply.
    /// The renames of a RENAME TABLE, one table at a time, each under its
    /// X lock and committed by itself (MySQL commits each, and renames
    /// them in order).
    fn rename_tables(&mut self, c: ConnId, mut rest: VecDeque<(String, String)>) -> R<Outcome> {
        let Some((from, to)) = rest.pop_front() else {
            return Ok(self.ok_with(c, vec![]));
        };
        self.under_table_lock(
            c,
            &from.clone(),
            true,
            Box::new(move |srv, c, locked| {
                locked?;
                srv.locked_ddl(c, &from, |e, s| e.rename_table(s, &from, &to))?;
                if let Some(meta) = srv.metas.remove(&from) {
                    srv.metas.insert(to.clone(), meta);
                }
                if let Some(next) = srv.autoinc.remove(&from) {
                    srv.autoinc.insert(to.clone(), next);
                }
                if let Some(id) = srv.open_tables.remove(&from) {
                    srv.open_tables.insert(to, id);
                }
                srv.implicit_commit(c)?;
                srv.rename_tables(c, rest)
            }),
        )
    }

    pub(super) fn drop_tables(
        &mut self,
        c: ConnId,
        mut rest: VecDeque<String>,
        database: Option<String>,
        finish: DdlFinish,
    ) -> R<Outcome> {
        let Some(n) = rest.pop_front() else {
            return finish(self, c);
        };
        self.under_table_lock(
            c,
            &n.clone(),
            true,
            Box::new(move |srv, c, locked| {
                locked?;
                match &database {
                    Some(p) => srv.locked_ddl(c, &n, |e, s| e.drop_table_of_database(s, &n, p))?,
                    None => srv.locked_ddl(c, &n, |e, s| e.drop_table(s, &n))?,
                }
                srv.metas.remove(&n);
                srv.autoinc.remove(&n);
                srv.implicit_commit(c)?;
                srv.drop_tables(c, rest, database, finish)
            }),
        )
    }

    /// OPTIMIZE TABLE: InnoDB has none of its own, so MySQL recreates each
    /// table by copying, and says so; one table at a time, its rows of the
    /// result added to `rows`.
    pub(super) fn optimize(
        &mut self,
        c: ConnId,
        mut rest: VecDeque<TableName>,
        mut rows: Vec<Vec<Datum>>,
    ) -> R<Outcome> {
        let Some(t) = rest.pop_front() else {
            return Ok(Outcome::Done(Reply::Rows {
                columns: ["Table", "Op", "Msg_type", "Msg_text"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                rows,
                warnings: 0,
            }));
        };
        let db = self.db_of(c, &t)?;
        let shown = Datum::str(&format!("{db}.{}", t.name));
        self.alter_copy_then(
            c,
            &t,
            vec![],
            TableOptions::default(),
            Box::new(move |srv, c, r| {
                let op = Datum::str("optimize");
                match r {
                    Ok(_) => {
                        rows.push(vec![
                            shown.clone(),
                            op.clone(),
                            Datum::str("note"),
                            Datum::str(
                                "Table does not support optimize, doing recreate + analyze instead",
                            ),
                        ]);
                        rows.push(vec![shown, op, Datum::str("status"), Datum::str("OK")]);
                    }
                    Err(e) => {
                        rows.push(vec![shown, op, Datum::str("Error"), Datum::str(&e.message)])
                    }
                }
                srv.implicit_commit(c)?;
                srv.optimize(c, rest, rows)
            }),
        )
    }

    /// A DDL statement that finds what it would make already there (or
    /// what it would drop missing): under IF [NOT] EXISTS (`quiet`) a note
    /// and no error, as MySQL does; otherwise the error.
    pub(super) fn ok_or_fail(
        &mut self,
        c: ConnId,
        quiet: bool,
        code: u16,
        message: String,
    ) -> R<Outcome> {
        if !quiet {
            return Err(SqlError::new(code, message));
        }
        self.warn(c, Warning::note(code, message));
        Ok(Outcome::Done(Reply::Ok {
            affected: 0,
            info: None,
            warnings: 1,
        }))
    }
}

/// MySQL's identifier rules for names that become file names.
/// (Letters, digits and `_` only: the engine's names allow `$`, which
/// the server keeps for its `db$table` names.)
impl Server {
    /// In strict mode, the record-size rule InnoDB applies to every table
    /// (`dict_index_too_big_for_tree`, which `dict_create_index_step`
    /// runs when the transaction is strict or the table Barracuda; the
    /// engine checks the Barracuda tables itself): 1118 for a COMPACT or
    /// REDUNDANT table with an index whose records could pass half a page.
    /// `skip`: the indexes not checked, as [`crate::dict::too_big_for_tree`]
    /// takes it.
    pub(super) fn strict_record_size(
        &self,
        c: ConnId,
        def: &crate::dict::TableDef,
        skip: usize,
    ) -> R<()> {
        if !self.conn(c).strict_mode {
            return Ok(());
        }
        match crate::dict::too_big_for_tree(def, skip) {
            Some((_, half_page)) => Err(SqlError::new(
                1118,
                format!(
                    "Row size too large. The maximum row size for the used table type, not \
                     counting BLOBs, is {half_page}. You have to change some columns to TEXT or \
                     BLOBs"
                ),
            )),
            None => Ok(()),
        }
    }
}

pub(in crate::sql) fn check_name(name: &str, code: u16, what: &str) -> R<()> {
    if name.chars().count() > 64 {
        return Err(SqlError::new(
            1059,
            format!("Identifier name '{name}' is too long"),
        ));
    }
    // MySQL 5.1's `check_table_name` and `check_db_name`: any character
    // the filename encoding can write (the Basic Multilingual Plane), but
    // not an empty name or one that ends in a space.
    if name.is_empty() || name.ends_with(' ') || name.chars().any(|c| u32::from(c) > 0xFFFF) {
        return Err(SqlError::new(code, format!("{what} '{name}'")));
    }
    Ok(())
}
