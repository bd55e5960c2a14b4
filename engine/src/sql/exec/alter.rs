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
        let old_meta = match self.resolve(c, table) {
            Ok((_, m)) => m,
            Err(e) => return then(self, c, Err(e)),
        };
        let (name, def, meta, warnings, sources) =
            match self.alter_copy_plan(c, table, ops, options) {
                Ok(p) => p,
                Err(e) => return then(self, c, Err(e)),
            };
        if let Err(e) = self.strict_record_size(c, &def, 0) {
            return then(self, c, Err(e));
        }
        let format = def.row_format;
        self.under_table_lock(
            c,
            &name.clone(),
            true,
            Box::new(move |srv, c, locked| {
                let r = locked.and_then(|_| {
                    let mut warnings = warnings;
                    let rows = match &sources {
                        None => srv.locked_ddl(c, &name, |e, s| e.rebuild_table(s, &name, def))?,
                        Some(sources) => {
                            let mut conv = RowConversion::new(&old_meta, &meta, sources);
                            let done = srv.locked_ddl(c, &name, |e, s| {
                                e.rebuild_table_mapped(s, &name, def, &mut |row| conv.convert(row))
                            });
                            if let Some(e) = conv.error.take() {
                                return Err(e);
                            }
                            warnings.extend(conv.warnings);
                            done?
                        }
                    };
                    srv.tag_file_format(format);
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
    ) -> R<AlterPlan> {
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
            // ha_innobase::create judges a KEY_BLOCK_SIZE the statement
            // gives, 0 included (its "ignoring KEY_BLOCK_SIZE=0."), and the
            // new definition keeps none for 0.
            let mut given = meta.options.clone();
            if let Some(k) = options.key_block_size {
                given.key_block_size = Some(k);
                meta.options.key_block_size = (k != 0).then_some(k);
            }
            let strict = self.conn(c).strict_mode;
            let per_table = self.engine.config().file_per_table;
            match schema::decide_format_given(
                &given,
                options.row_format.is_some(),
                self.globals.barracuda,
                per_table,
                strict,
            ) {
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
        // Column changes first (MySQL applies them before the keys): the
        // new columns, each with the old column it comes from.
        let mut sources = self.alter_columns(&name, &mut meta, &mut def, &ops)?;
        if sources.is_none()
            && (def.columns.iter().zip(&meta.columns)).any(|(d, m)| d.name != m.name)
        {
            // Columns renamed by the server alone (InnoDB 1.0.6's fast
            // rename): the copy takes the server's names.
            for (d, m) in def.columns.iter_mut().zip(&meta.columns) {
                d.name = m.name.clone();
            }
            sources = Some((0..def.columns.len()).map(Some).collect());
        }
        let mut adds = Vec::new();
        let mut foreign = Vec::new();
        for op in ops {
            match op {
                AlterOp::AddColumn(..) | AlterOp::DropColumn(_) | AlterOp::ChangeColumn { .. } => {}
                AlterOp::AddForeign(fk) => foreign.push(fk),
                AlterOp::DropForeign(id) => {
                    match def
                        .foreign
                        .iter()
                        .position(|f| f.id.eq_ignore_ascii_case(&id))
                    {
                        Some(p) => {
                            def.foreign.remove(p);
                        }
                        // InnoDB refuses the rename of the copy: errno 152.
                        None => {
                            let (d, t) = split_name(&name).expect("a server table");
                            return Err(SqlError::new(
                                1025,
                                format!(
                                    "Error on rename of './{d}/#sql-copy' to './{d}/{t}' \
                                     (errno: 152)"
                                ),
                            ));
                        }
                    }
                }
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
                    def.primary_prefixes.clear();
                }
                AlterOp::AddIndex(ix) if ix.primary => {
                    if !def.primary_key.is_empty() {
                        return Err(SqlError::new(1068, "Multiple primary key defined"));
                    }
                    let (cols, prefixes) = self.key_positions(&meta, &ix, &mut warnings)?;
                    // The columns of a primary key are NOT NULL.
                    for &col in &cols {
                        meta.columns[col].not_null = true;
                        def.columns[col].nullable = false;
                    }
                    def.primary_key = cols;
                    def.primary_prefixes = prefixes;
                }
                AlterOp::AddIndex(ix) => adds.push(ix),
            }
        }
        for ix in &adds {
            let d = self.new_index_def(&meta, &def, ix, &mut warnings, false)?;
            def.indexes.push(d);
        }
        if !foreign.is_empty() {
            let end = def.indexes.len();
            let specs: Vec<(usize, ForeignSpec)> = foreign.into_iter().map(|f| (end, f)).collect();
            let (_, t) = split_name(&name).expect("a server table");
            self.add_foreign(&db, &t, &mut def, &meta, &specs)?;
        }
        let (_, t) = split_name(&name).expect("a server table");
        def.server = schema::show_create(&t, &def, &meta, None).into_bytes();
        Ok((name, def, meta, warnings, sources))
    }

    /// Applies ALTER TABLE's column changes to the server's and the
    /// engine's definitions, with MySQL's errors (1054 for an unknown
    /// column, 1060 for a name taken, 1091 for a column to drop that is
    /// not there, 1090 for dropping them all), moving the keys with their
    /// columns (a dropped column leaves its keys, and a key left with no
    /// column goes). Returns, for each new column, the old column it comes
    /// from (`None` for an added one), or `None` if no column changes.
    fn alter_columns(
        &self,
        name: &str,
        meta: &mut TableMeta,
        def: &mut crate::dict::TableDef,
        ops: &[AlterOp],
    ) -> R<Option<Vec<Option<usize>>>> {
        if !ops.iter().any(|op| {
            matches!(
                op,
                AlterOp::AddColumn(..) | AlterOp::DropColumn(_) | AlterOp::ChangeColumn { .. }
            )
        }) {
            return Ok(None);
        }
        let (_, table) = split_name(name).expect("a server table");
        let unknown =
            |col: &str| SqlError::new(1054, format!("Unknown column '{col}' in '{table}'"));
        let mut cols: Vec<(ColumnSpec, Option<usize>)> = meta
            .columns
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, c)| (c, Some(i)))
            .collect();
        let find = |cols: &[(ColumnSpec, Option<usize>)], n: &str| {
            cols.iter()
                .position(|(c, _)| c.name.eq_ignore_ascii_case(n))
        };
        let place_at = |cols: &mut Vec<(ColumnSpec, Option<usize>)>,
                        item: (ColumnSpec, Option<usize>),
                        place: &ColumnPlace,
                        default: usize|
         -> R<()> {
            let at = match place {
                ColumnPlace::Default => default,
                ColumnPlace::First => 0,
                ColumnPlace::After(a) => find(cols, a).ok_or_else(|| unknown(a))? + 1,
            };
            cols.insert(at.min(cols.len()), item);
            Ok(())
        };
        for op in ops {
            match op {
                AlterOp::AddColumn(spec, place) => {
                    schema::reserved_column(&spec.name)?;
                    if find(&cols, &spec.name).is_some() {
                        return Err(SqlError::new(
                            1060,
                            format!("Duplicate column name '{}'", spec.name),
                        ));
                    }
                    let end = cols.len();
                    place_at(&mut cols, (spec.clone(), None), place, end)?;
                }
                AlterOp::DropColumn(n) => {
                    let i = find(&cols, n).ok_or_else(|| {
                        SqlError::new(
                            1091,
                            format!("Can't DROP '{n}'; check that column/key exists"),
                        )
                    })?;
                    if cols.len() == 1 {
                        return Err(SqlError::new(
                            1090,
                            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
                        ));
                    }
                    cols.remove(i);
                }
                AlterOp::ChangeColumn { old, spec, place } => {
                    let i = find(&cols, old).ok_or_else(|| unknown(old))?;
                    schema::reserved_column(&spec.name)?;
                    if !spec.name.eq_ignore_ascii_case(old) && find(&cols, &spec.name).is_some() {
                        return Err(SqlError::new(
                            1060,
                            format!("Duplicate column name '{}'", spec.name),
                        ));
                    }
                    let (_, from) = cols.remove(i);
                    place_at(&mut cols, (spec.clone(), from), place, i)?;
                }
                _ => {}
            }
        }
        let sources: Vec<Option<usize>> = cols.iter().map(|(_, s)| *s).collect();
        let mut specs: Vec<ColumnSpec> = cols.into_iter().map(|(c, _)| c).collect();
        schema::resolve_collations(&mut specs, &meta.options);
        // Where each old column went.
        let new_pos = |old: usize| sources.iter().position(|s| *s == Some(old));
        let remap = |key: &[usize], prefixes: &[u16]| -> (Vec<usize>, Vec<u16>) {
            let mut k = Vec::new();
            let mut p = Vec::new();
            for (i, &c) in key.iter().enumerate() {
                if let Some(n) = new_pos(c) {
                    k.push(n);
                    p.push(prefixes.get(i).copied().unwrap_or(0));
                }
            }
            if p.iter().all(|&x| x == 0) {
                p.clear();
            }
            (k, p)
        };
        (def.primary_key, def.primary_prefixes) = remap(&def.primary_key, &def.primary_prefixes);
        def.indexes = std::mem::take(&mut def.indexes)
            .into_iter()
            .filter_map(|mut ix| {
                let (k, p) = remap(&ix.columns, &ix.prefixes);
                (!k.is_empty()).then(|| {
                    ix.columns = k;
                    ix.prefixes = p;
                    ix
                })
            })
            .collect();
        // A constraint keeps its columns where they went; dropping one of
        // them fails as InnoDB fails the rename of the copy (errno 150).
        for fk in &mut def.foreign {
            let cols: Option<Vec<usize>> = fk.columns.iter().map(|&c| new_pos(c)).collect();
            match cols {
                Some(cols) => fk.columns = cols,
                None => {
                    let (d, t) = split_name(name).expect("a server table");
                    return Err(SqlError::new(
                        1025,
                        format!("Error on rename of './{d}/#sql-copy' to './{d}/{t}' (errno: 150)"),
                    ));
                }
            }
        }
        for &c in &def.primary_key {
            specs[c].not_null = true;
        }
        def.columns = specs
            .iter()
            .map(|c| crate::dict::ColumnDef {
                name: c.name.clone(),
                ty: c.engine_type(),
                nullable: !c.not_null,
                collation: c.engine_collation(),
            })
            .collect();
        meta.columns = specs;
        Ok(Some(sources))
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
        fast: bool,
    ) -> R<crate::dict::IndexDef> {
        let (cols, prefixes) = self.key_positions(meta, ix, warnings)?;
        // Fast index creation finds an index's columns by the names the
        // server gives; a column the server renamed alone is not there
        // (bug 44571). A copy makes the engine's table from the server's
        // definition, names and all.
        let renamed = |&col: &usize| {
            !def.columns[col]
                .name
                .eq_ignore_ascii_case(&meta.columns[col].name)
        };
        if fast && cols.iter().any(renamed) {
            let table = split_name(&def.name).map_or(def.name.clone(), |(_, t)| t);
            return Err(SqlError::new(
                1034,
                format!("Incorrect key file for table '{table}'; try to repair it"),
            ));
        }
        let taken: Vec<String> = def.indexes.iter().map(|x| x.name.clone()).collect();
        if let Some(n) = &ix.name {
            // mysql_prepare_create_table's check_column_name.
            super::ddl::check_name(n, 1280, "Incorrect index name")?;
        }
        let name = match &ix.name {
            Some(n) if taken.iter().any(|t| t.eq_ignore_ascii_case(n)) => {
                return Err(SqlError::new(1061, format!("Duplicate key name '{n}'")))
            }
            Some(n) if n.eq_ignore_ascii_case("PRIMARY") => {
                return Err(SqlError::new(1280, format!("Incorrect index name '{n}'")))
            }
            Some(n) => {
                schema::reserved_index(n, warnings)?;
                n.clone()
            }
            None => schema::unnamed_index_name(&meta.columns[cols[0]].name, &taken),
        };
        let d = crate::dict::IndexDef {
            name,
            columns: cols,
            unique: ix.unique,
            prefixes,
        };
        if (self.engine.config().later).has(crate::LaterRule::DuplicateIndexNote) {
            let mut all = def.indexes.clone();
            all.push(d.clone());
            schema::duplicate_index_notes(&all, def.indexes.len(), warnings);
        }
        Ok(d)
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
            let d = self.new_index_def(&meta, &def, ix, &mut warnings, true)?;
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
                    let existing = 1 + with_adds.indexes.len();
                    with_adds.indexes.extend(new.iter().cloned());
                    srv.strict_record_size(c, &with_adds, existing)?;
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

    /// Whether every change of an ALTER TABLE is a column renamed in place
    /// with its definition unchanged: what MySQL 5.1 does by rewriting the
    /// `.frm` alone with InnoDB Plugin 1.0.6.
    pub(super) fn renames_only(
        &mut self,
        c: ConnId,
        table: &TableName,
        ops: &[AlterOp],
    ) -> R<bool> {
        let (_, meta) = self.resolve(c, table)?;
        let default = meta.options.default_collation();
        Ok(ops.iter().all(|op| match op {
            AlterOp::ChangeColumn {
                old,
                spec,
                place: ColumnPlace::Default,
            } => meta
                .columns
                .iter()
                .find(|m| m.name.eq_ignore_ascii_case(old))
                .is_some_and(|m| {
                    let mut same = spec.clone();
                    same.name = m.name.clone();
                    if same.collation.is_none() && m.collation.is_some() {
                        same.collation = Some(default);
                    }
                    same == *m
                }),
            _ => false,
        }))
    }

    /// ALTER TABLE that only renames columns, as InnoDB Plugin 1.0.6 does
    /// it: the server's definition changes, the engine's dictionary keeps
    /// the old names (MySQL bug 44571), so a fast index creation naming the
    /// new name then fails with 1034, as 1.0.6's does.
    pub(super) fn alter_rename_columns(
        &mut self,
        c: ConnId,
        table: &TableName,
        ops: Vec<AlterOp>,
    ) -> R<Outcome> {
        let (name, mut meta) = self.resolve(c, table)?;
        for op in &ops {
            if let AlterOp::ChangeColumn { old, spec, .. } = op {
                if !spec.name.eq_ignore_ascii_case(old)
                    && meta
                        .columns
                        .iter()
                        .any(|m| m.name.eq_ignore_ascii_case(&spec.name))
                {
                    return Err(SqlError::new(
                        1060,
                        format!("Duplicate column name '{}'", spec.name),
                    ));
                }
                if let Some(m) = meta
                    .columns
                    .iter_mut()
                    .find(|m| m.name.eq_ignore_ascii_case(old))
                {
                    m.name = spec.name.clone();
                }
            }
        }
        let def = self
            .engine
            .table(&name)
            .map_err(|e| self.engine_err(c, &e))?
            .def
            .clone();
        let (_, t) = split_name(&name).expect("a server table");
        let text = schema::show_create(&t, &def, &meta, None).into_bytes();
        self.under_table_lock(
            c,
            &name.clone(),
            true,
            Box::new(move |srv, c, locked| {
                locked?;
                srv.locked_ddl(c, &name, |e, s| e.set_server_definition(s, &name, text))?;
                srv.metas.insert(name, meta);
                Ok(Outcome::Done(Reply::Ok {
                    affected: 0,
                    info: Some("Records: 0  Duplicates: 0  Warnings: {warnings}".into()),
                    warnings: 0,
                }))
            }),
        )
    }
}

/// What a copying ALTER makes of the table: its engine name, the new
/// definition, the server's meta, the warnings to give, and, when columns
/// change, where each new column comes from.
pub(super) type AlterPlan = (
    String,
    crate::dict::TableDef,
    TableMeta,
    Vec<Warning>,
    Option<Vec<Option<usize>>>,
);

/// The conversion of an old row into the new columns of an ALTER TABLE:
/// each kept column's value stored as its new type would take it (MySQL's
/// copy_data_between_tables, Field::store), an added column's default (or
/// the type's implicit one, or the next number of an AUTO_INCREMENT).
pub(super) struct RowConversion {
    old_shapes: Vec<schema::Shape>,
    new: Vec<ColumnSpec>,
    sources: Vec<Option<usize>>,
    row: u64,
    next_auto: u64,
    /// The first error, which the rebuild's failure reports.
    pub error: Option<SqlError>,
    /// Warnings for values the new columns could not take as they were.
    pub warnings: Vec<Warning>,
}

impl RowConversion {
    pub(super) fn new(old: &TableMeta, new: &TableMeta, sources: &[Option<usize>]) -> Self {
        RowConversion {
            old_shapes: schema::Shape::of_all(old),
            new: new.columns.clone(),
            sources: sources.to_vec(),
            row: 0,
            next_auto: 1,
            error: None,
            warnings: Vec::new(),
        }
    }

    pub(super) fn convert(&mut self, row: Vec<Value>) -> crate::Result<Vec<Value>> {
        self.row += 1;
        let old = to_datums(&self.old_shapes, vec![row]).remove(0);
        let mut out = Vec::with_capacity(self.new.len());
        for (spec, src) in self.new.iter().zip(&self.sources) {
            let d = match src {
                Some(i) => old[*i].clone(),
                None if spec.auto_increment => {
                    self.next_auto += 1;
                    Datum::UInt(self.next_auto - 1)
                }
                None => spec.default.clone().unwrap_or(Datum::Null),
            };
            let d = if d.is_null() && spec.not_null {
                if src.is_some() {
                    // A NULL into a NOT NULL column: the type's implicit
                    // default, with MySQL's warning.
                    self.warnings.push(Warning::warn(
                        1265,
                        format!(
                            "Data truncated for column '{}' at row {}",
                            spec.name, self.row
                        ),
                    ));
                }
                schema::implicit_default(spec.ty)
            } else {
                d
            };
            match schema::coerce_column(spec, &d) {
                Ok(v) => out.push(v.to_value()),
                Err(e) => {
                    let text = e.message.clone();
                    self.error = Some(e);
                    return Err(crate::Error::InvalidArgument(text));
                }
            }
        }
        Ok(out)
    }
}
