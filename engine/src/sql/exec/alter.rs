//! ALTER TABLE: by copying the table into its new definition, or, for
//! index changes alone, by fast index creation.

use super::*;

impl Server {
    /// ALTER TABLE by copying the table into its new definition (new
    /// options, a primary key change, ALGORITHM=COPY, OPTIMIZE).
    pub(super) fn alter_copy(
        &mut self,
        c: ConnId,
        table: &TableName,
        ops: Vec<AlterOp>,
        options: TableOptions,
    ) -> R<Outcome> {
        self.alter_copy_then(c, table, ops, options, Box::new(|_, _, r| r))
    }

    /// [`Server::alter_copy`], its result (or its error, from its checks,
    /// its table lock or the copy) handed to `then`.
    pub(super) fn alter_copy_then(
        &mut self,
        c: ConnId,
        table: &TableName,
        ops: Vec<AlterOp>,
        options: TableOptions,
        then: DdlThen,
    ) -> R<Outcome> {
        let (name, def, meta, warnings) = match self.alter_copy_plan(c, table, ops, options) {
            Ok(p) => p,
            Err(e) => return then(self, c, Err(e)),
        };
        self.under_table_lock(
            c,
            &name.clone(),
            true,
            Box::new(move |srv, c, locked| {
                let r = locked.and_then(|_| {
                    let rows = srv.locked_ddl(c, &name, |e, s| e.rebuild_table(s, &name, def))?;
                    srv.metas.insert(name, meta);
                    let n = warnings.len();
                    for w in warnings {
                        srv.warn(c, w);
                    }
                    Ok(Outcome::Done(Reply::Ok {
                        affected: rows,
                        info: Some(format!(
                            "Records: {rows}  Duplicates: 0  Warnings: {{warnings}}"
                        )),
                        warnings: n,
                    }))
                });
                then(srv, c, r)
            }),
        )
    }

    /// What a copying ALTER makes of the table, checked: its engine name,
    /// the new definition, the server's meta and the warnings to give.
    pub(super) fn alter_copy_plan(
        &mut self,
        c: ConnId,
        table: &TableName,
        ops: Vec<AlterOp>,
        options: TableOptions,
    ) -> R<(String, crate::dict::TableDef, TableMeta, Vec<Warning>)> {
        let (name, mut meta) = self.resolve(c, table)?;
        let db = self.db_of(c, table)?;
        let mut def = self
            .engine
            .table(&name)
            .map_err(|e| self.engine_err(c, &e))?
            .def
            .clone();
        if let Some(e) = &options.engine {
            if !e.eq_ignore_ascii_case("innodb") {
                return Err(SqlError::new(1286, format!("Unknown table engine '{e}'")));
            }
        }
        let mut warnings;
        // The copy is a new table made from the table's options (and the
        // changed ones), so ha_innobase::create's checks run again under
        // the file format and innodb_file_per_table of now.
        {
            if let Some(r) = &options.row_format {
                meta.options.row_format = Some(r.clone());
            }
            if let Some(k) = options.key_block_size {
                // KEY_BLOCK_SIZE=0 takes the option away.
                meta.options.key_block_size = (k != 0).then_some(k);
            }
            let strict = self.conn(c).strict_mode;
            let per_table = self.engine.config().file_per_table;
            match schema::decide_format(&meta.options, self.globals.barracuda, per_table, strict) {
                Ok((f, w)) => {
                    def.row_format = f;
                    warnings = w;
                }
                Err(w) => {
                    for w in w {
                        self.warn(c, w);
                    }
                    return Err(SqlError::new(
                        1005,
                        format!("Can't create table '{db}.#sql-copy' (errno: 1478)"),
                    ));
                }
            }
        }
        let mut adds = Vec::new();
        for op in ops {
            match op {
                AlterOp::DropIndex(d) => match def
                    .indexes
                    .iter()
                    .position(|x| x.name.eq_ignore_ascii_case(&d))
                {
                    Some(p) => {
                        def.indexes.remove(p);
                    }
                    None => {
                        return Err(SqlError::new(
                            1091,
                            format!("Can't DROP '{d}'; check that column/key exists"),
                        ))
                    }
                },
                AlterOp::DropPrimary => {
                    if def.primary_key.is_empty() {
                        return Err(SqlError::new(
                            1091,
                            "Can't DROP 'PRIMARY'; check that column/key exists",
                        ));
                    }
                    def.primary_key.clear();
                }
                AlterOp::AddIndex(ix) if ix.primary => {
                    if !def.primary_key.is_empty() {
                        return Err(SqlError::new(1068, "Multiple primary key defined"));
                    }
                    let (cols, prefixes) = self.key_positions(&meta, &ix, &mut warnings)?;
                    if !prefixes.is_empty() {
                        return Err(SqlError::unsupported("a column prefix in a PRIMARY KEY"));
                    }
                    // The columns of a primary key are NOT NULL.
                    for &col in &cols {
                        meta.columns[col].not_null = true;
                        def.columns[col].nullable = false;
                    }
                    def.primary_key = cols;
                }
                AlterOp::AddIndex(ix) => adds.push(ix),
            }
        }
        for ix in &adds {
            let d = self.new_index_def(&meta, &def, ix, &mut warnings)?;
            def.indexes.push(d);
        }
        let (_, t) = split_name(&name).expect("a server table");
        def.server = schema::show_create(t, &def, &meta, None).into_bytes();
        Ok((name, def, meta, warnings))
    }

    /// Column positions of an index's columns (1072 for an unknown one)
    /// and their prefix lengths, checked as MySQL checks key parts.
    pub(super) fn key_positions(
        &self,
        meta: &TableMeta,
        ix: &IndexSpec,
        warnings: &mut Vec<Warning>,
    ) -> R<(Vec<usize>, Vec<u16>)> {
        let cols = (ix.columns.iter())
            .map(|col| {
                meta.columns
                    .iter()
                    .position(|m| m.name.eq_ignore_ascii_case(col))
                    .ok_or_else(|| {
                        SqlError::new(1072, format!("Key column '{col}' doesn't exist in table"))
                    })
            })
            .collect::<R<Vec<usize>>>()?;
        let prefixes = schema::key_parts(&meta.columns, &cols, &ix.prefixes, ix.unique, warnings)?;
        Ok((cols, prefixes))
    }

    /// The engine definition of an index an ALTER adds to `def`: its name
    /// as given (1061 if taken) or as MySQL makes one.
    pub(super) fn new_index_def(
        &self,
        meta: &TableMeta,
        def: &crate::dict::TableDef,
        ix: &IndexSpec,
        warnings: &mut Vec<Warning>,
    ) -> R<crate::dict::IndexDef> {
        let (cols, prefixes) = self.key_positions(meta, ix, warnings)?;
        let taken: Vec<String> = def.indexes.iter().map(|x| x.name.clone()).collect();
        let name = match &ix.name {
            Some(n) if taken.iter().any(|t| t.eq_ignore_ascii_case(n)) => {
                return Err(SqlError::new(1061, format!("Duplicate key name '{n}'")))
            }
            Some(n) if n.eq_ignore_ascii_case("PRIMARY") => {
                return Err(SqlError::new(1280, format!("Incorrect index name '{n}'")))
            }
            Some(n) => n.clone(),
            None => schema::unnamed_index_name(&meta.columns[cols[0]].name, &taken),
        };
        Ok(crate::dict::IndexDef {
            name,
            columns: cols,
            unique: ix.unique,
            prefixes,
        })
    }

    /// ADD INDEX and DROP INDEX without copying the table: the new indexes
    /// by fast index creation (one scan, sorted, built in order), then the
    /// dropped ones as dictionary changes.
    pub(super) fn alter_indexes(
        &mut self,
        c: ConnId,
        table: &TableName,
        adds: Vec<IndexSpec>,
        drops: Vec<String>,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, table)?;
        let mut def = self
            .engine
            .table(&name)
            .map_err(|e| self.engine_err(c, &e))?
            .def
            .clone();
        for d in &drops {
            match def
                .indexes
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(d))
            {
                Some(p) => {
                    def.indexes.remove(p);
                }
                None => {
                    return Err(SqlError::new(
                        1091,
                        format!("Can't DROP '{d}'; check that column/key exists"),
                    ))
                }
            }
        }
        let mut new = Vec::new();
        let mut warnings = Vec::new();
        for ix in &adds {
            let d = self.new_index_def(&meta, &def, ix, &mut warnings)?;
            def.indexes.push(d.clone());
            new.push(d);
        }
        for w in warnings {
            self.warn(c, w);
        }
        let (_, t) = split_name(&name).expect("a server table");
        let t = t.to_string();
        // One lock for the statement: X if it drops an index (which the
        // build's S lock would have to wait to become), else S.
        let exclusive = !drops.is_empty();
        self.under_table_lock(
            c,
            &name.clone(),
            exclusive,
            Box::new(move |srv, c, locked| {
                locked?;
                let text = |def: &crate::dict::TableDef| {
                    schema::show_create(&t, def, &meta, None).into_bytes()
                };
                let current = |srv: &Server| {
                    srv.engine
                        .table(&name)
                        .map(|t| t.def.clone())
                        .map_err(|e| srv.engine_err(c, &e))
                };
                if !new.is_empty() {
                    let mut with_adds = current(srv)?;
                    with_adds.indexes.extend(new.iter().cloned());
                    let server = text(&with_adds);
                    srv.locked_ddl(c, &name, |e, s| e.create_indexes(s, &name, &new, server))?;
                }
                for d in &drops {
                    let mut after = current(srv)?;
                    after.indexes.retain(|x| !x.name.eq_ignore_ascii_case(d));
                    let server = text(&after);
                    srv.locked_ddl(c, &name, |e, s| e.drop_index(s, &name, d, server))?;
                }
                Ok(Outcome::Done(Reply::Ok {
                    affected: 0,
                    info: Some("Records: 0  Duplicates: 0  Warnings: {warnings}".into()),
                    warnings: 0,
                }))
            }),
        )
    }
}
