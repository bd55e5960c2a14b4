//! INSERT, UPDATE and DELETE: the statement's read, the writes its rows
//! call for, driven one engine request at a time so that a lock wait
//! suspends the statement where it is.

use super::*;

impl Server {
    pub(super) fn insert(
        &mut self,
        c: ConnId,
        table: TableName,
        columns: Option<Vec<String>>,
        source: InsertSource,
        on_duplicate: OnDuplicate,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, &table)?;
        if matches!(source, InsertSource::Values(_)) {
            self.tables_locked(c);
        }
        match source {
            InsertSource::Values(rows) => {
                let mut queue = VecDeque::new();
                let mut interval = AutoincInterval {
                    rows: rows.len() as u64,
                    multi_row: rows.len() > 1,
                    ..AutoincInterval::default()
                };
                for (i, r) in rows.iter().enumerate() {
                    let vars = self.vars(c);
                    let no_cols = Columns::none();
                    let vals = r
                        .iter()
                        .map(|e| match e {
                            Expr::Call { name, args, .. }
                                if name == "default" && args.is_empty() =>
                            {
                                Ok(None)
                            }
                            e => eval::eval(e, None, &no_cols, &vars).map(Some),
                        })
                        .collect::<R<Vec<_>>>()?;
                    let lenient = on_duplicate == OnDuplicate::Ignore;
                    let row = self.build_row(
                        c,
                        &name,
                        &meta,
                        columns.as_deref(),
                        vals,
                        i + 1,
                        lenient,
                        &mut interval,
                    )?;
                    queue.push_back(Request::Insert {
                        table: name.clone(),
                        row,
                    });
                }
                let n = queue.len() as u64;
                Ok(self.start_change(
                    c,
                    Change {
                        queue,
                        records: n,
                        ..Change::new(
                            name,
                            None,
                            ChangePlan::Insert,
                            ChangeKind::Insert,
                            on_duplicate.clone(),
                        )
                    },
                ))
            }
            InsertSource::Select(sel) => {
                let from = sel
                    .from
                    .clone()
                    .ok_or_else(|| SqlError::unsupported("INSERT ... SELECT without FROM"))?;
                if !sel.joins.is_empty() {
                    // InnoDB reads the source with shared locks, which the
                    // layer's join (a nested loop over consistent reads of
                    // whole tables) cannot take: refused, rather than
                    // read as its first table alone.
                    return Err(SqlError::unsupported("INSERT ... SELECT from a join"));
                }
                let (src, src_meta) = self.resolve(c, &from)?;
                self.tables_locked(c);
                let qualifier = sel.alias.clone().unwrap_or_else(|| from.name.clone());
                let post = post_for(*sel, &src_meta, &qualifier);
                let access = self.access(
                    c,
                    &src,
                    &src_meta,
                    post.sel.filter.as_ref(),
                    &post.sel.hints,
                )?;
                // InnoDB reads INSERT ... SELECT's source with shared
                // next-key locks (innodb_locks_unsafe_for_binlog off),
                // except under READ COMMITTED, where it is a consistent
                // read (ha_innobase::store_lock).
                let plain = access.request(&src, None);
                let s = self.conn(c).session;
                let read = if self.engine.isolation(s) == crate::trx::Isolation::ReadCommitted {
                    plain
                } else {
                    Request::Locking {
                        read: Box::new(plain),
                        exclusive: false,
                        index_condition: false,
                    }
                };
                Ok(self.start_change(
                    c,
                    Change::new(
                        name.clone(),
                        Some(read),
                        ChangePlan::InsertSelect {
                            target: name,
                            columns,
                            post: Box::new(post),
                        },
                        ChangeKind::Insert,
                        on_duplicate.clone(),
                    ),
                ))
            }
        }
    }

    /// One row for the engine: values for the named columns (`None`: the
    /// DEFAULT keyword), defaults and AUTO_INCREMENT for the others; a
    /// TIMESTAMP's CURRENT_TIMESTAMP. With `ignore` (INSERT IGNORE), or
    /// outside strict mode (MySQL 5.1's default sql_mode), a value a
    /// column cannot take is stored as MySQL adjusts it, with a warning,
    /// and a NOT NULL column with no value and no default takes its type's
    /// implicit default (warning 1364).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_row(
        &mut self,
        c: ConnId,
        name: &str,
        meta: &TableMeta,
        columns: Option<&[String]>,
        vals: Vec<Option<Datum>>,
        n: usize,
        ignore: bool,
        interval: &mut AutoincInterval,
    ) -> R<Vec<Value>> {
        let lenient = ignore || !self.conn(c).sql_mode.strict();
        let positions: Vec<usize> = match columns {
            Some(cols) => cols
                .iter()
                .map(|c| {
                    meta.columns
                        .iter()
                        .position(|m| m.name.eq_ignore_ascii_case(c))
                        .ok_or_else(|| SqlError::bad_field(c, "field list"))
                })
                .collect::<R<_>>()?,
            None => (0..meta.columns.len()).collect(),
        };
        if positions.len() != vals.len() {
            return Err(SqlError::new(
                1136,
                format!("Column count doesn't match value count at row {n}"),
            ));
        }
        let mut given: Vec<Option<Option<Datum>>> = vec![None; meta.columns.len()];
        for (p, v) in positions.into_iter().zip(vals) {
            given[p] = Some(v);
        }
        let mut row = Vec::with_capacity(meta.columns.len());
        for (i, col) in meta.columns.iter().enumerate() {
            let v = match given[i].take() {
                Some(Some(v)) => Some(v),
                Some(None) | None => None,
            };
            let v = if col.auto_increment
                && v.as_ref()
                    .is_none_or(|v| v.is_null() || v.as_i128() == Some(0))
            {
                let (_, hi) = col.ty.int_range().expect("an integer column");
                let max = u64::try_from(hi).unwrap_or(u64::MAX);
                let v = match self.conn_mut(c).insert_id.take() {
                    // insert_id names the value once.
                    Some(forced) => {
                        let next = self.autoinc.entry(name.to_string()).or_insert(1);
                        *next = (*next).max(forced.saturating_add(1).min(max));
                        forced
                    }
                    None => self.next_autoinc(c, name, max, interval),
                };
                // MySQL's "no value" mark, which InnoDB hands out when the
                // counter of a BIGINT UNSIGNED is spent; any other type
                // stops at its maximum, whose second insert is a duplicate.
                if v == u64::MAX {
                    return Err(SqlError::new(
                        1467,
                        "Failed to read auto-increment value from storage engine",
                    ));
                }
                self.conn_mut(c).stmt_insert_id.get_or_insert(v);
                Datum::UInt(v)
            } else if col.ty == SqlType::Timestamp
                && (if v.is_some() {
                    v.as_ref().is_some_and(|v| v.is_null()) && col.not_null
                } else {
                    col.default_now
                })
            {
                // No value for a DEFAULT CURRENT_TIMESTAMP column, or NULL
                // for a TIMESTAMP NOT NULL: the current time (MySQL's
                // Field_timestamp::set_time).
                field::timestamp_now(self.engine.now_us())
            } else {
                match v {
                    Some(v) => v,
                    None => match &col.default {
                        Some(d) => d.clone(),
                        None if !col.not_null => Datum::Null,
                        // An ENUM NOT NULL's default is its first member.
                        None if matches!(col.ty, SqlType::Enum(_)) => Datum::Int(1),
                        None => {
                            let e = SqlError::new(
                                1364,
                                format!("Field '{}' doesn't have a default value", col.name),
                            );
                            if !lenient {
                                return Err(e);
                            }
                            self.warn(c, Warning::warn(e.code, e.message));
                            schema::implicit_default(col.ty)
                        }
                    },
                }
            };
            // NULL into a NOT NULL column: an error, except in INSERT
            // IGNORE, and outside strict mode in a statement of several rows
            // (a VALUES list of more than one, INSERT ... SELECT), where the
            // column takes its type's implicit default with warning 1048
            // (set_field_to_null_with_conversions).
            let v = if v.is_null() && col.not_null {
                let e = SqlError::new(1048, format!("Column '{}' cannot be null", col.name));
                if !(ignore || (!self.conn(c).sql_mode.strict() && interval.multi_row)) {
                    return Err(e);
                }
                self.warn(c, Warning::warn(e.code, e.message));
                schema::implicit_default(col.ty)
            } else {
                v
            };
            // The conversions name row 1; this is row `n` of the statement.
            let at_row = |m: String| match m.strip_suffix(" at row 1") {
                Some(head) => format!("{head} at row {n}"),
                None => m,
            };
            let mut warnings = Vec::new();
            let v = schema::coerce_column_in(col, &v, lenient, &mut warnings)
                .map_err(|e| SqlError::new(e.code, at_row(e.message)))?;
            for w in warnings {
                self.warn(
                    c,
                    Warning {
                        message: at_row(w.message),
                        ..w
                    },
                );
            }
            if col.auto_increment {
                if let Some(x) = v.as_i128().and_then(|x| u64::try_from(x).ok()) {
                    // A value given (or generated) at or past the counter
                    // moves it on, to the type's maximum at most
                    // (innobase_next_autoinc in write_row).
                    let (_, hi) = col.ty.int_range().expect("an integer column");
                    let max = u64::try_from(hi).unwrap_or(u64::MAX);
                    let next = self.autoinc.entry(name.to_string()).or_insert(1);
                    if x >= *next {
                        *next = x.saturating_add(1).min(max);
                    }
                }
            }
            row.push(v.to_value());
        }
        Ok(row)
    }

    /// The next generated AUTO_INCREMENT value of table `name` (a column
    /// whose type stops at `max`), as `innodb_autoinc_lock_mode = 1`
    /// hands them out: from the statement's reserved interval while it
    /// lasts; else a new interval, of as many values as the statement has
    /// rows when it knows that (a multi-row VALUES list) and of 1, 2, 4,
    /// ... values after that (INSERT ... SELECT: `handler::update_auto_increment`),
    /// whose reservation moves the table's counter past its end at once
    /// (`ha_innobase::get_auto_increment`): the values a statement reserved
    /// and did not use are gone. At the type's maximum the counter stays
    /// there (`innobase_next_autoinc`).
    fn next_autoinc(
        &mut self,
        c: ConnId,
        name: &str,
        max: u64,
        interval: &mut AutoincInterval,
    ) -> u64 {
        let step = self.conn(c).autoinc_step;
        let inc = step.increment.max(1);
        if interval.left == 0 {
            let nb = if interval.intervals == 0 && interval.rows > 0 {
                interval.rows
            } else {
                1u64 << interval.intervals.min(16)
            };
            let counter = self.autoinc.entry(name.to_string()).or_insert(1);
            let first = step.at_or_above(*counter).min(max);
            let end = first.saturating_add(nb.saturating_mul(inc)).min(max);
            *counter = (*counter).max(end);
            interval.next = first;
            interval.left = nb;
            interval.intervals += 1;
        }
        let v = interval.next;
        interval.next = v.saturating_add(inc).min(max);
        interval.left -= 1;
        v
    }

    pub(super) fn update(
        &mut self,
        c: ConnId,
        table: TableName,
        set: Vec<(String, Expr)>,
        filter: Option<Expr>,
        order_by: Vec<(Expr, bool)>,
        limit: Option<u64>,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, &table)?;
        self.tables_locked(c);
        let set = set
            .into_iter()
            .map(|(col, e)| {
                meta.columns
                    .iter()
                    .position(|m| m.name.eq_ignore_ascii_case(&col))
                    .map(|p| (p, e))
                    .ok_or_else(|| SqlError::bad_field(&col, "field list"))
            })
            .collect::<R<Vec<_>>>()?;
        self.row_change(c, &table, name, meta, filter, order_by, limit, Some(set))
    }

    pub(super) fn delete(
        &mut self,
        c: ConnId,
        table: TableName,
        filter: Option<Expr>,
        order_by: Vec<(Expr, bool)>,
        limit: Option<u64>,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, &table)?;
        self.tables_locked(c);
        self.row_change(c, &table, name, meta, filter, order_by, limit, None)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn row_change(
        &mut self,
        c: ConnId,
        table: &TableName,
        name: String,
        meta: TableMeta,
        filter: Option<Expr>,
        order_by: Vec<(Expr, bool)>,
        limit: Option<u64>,
        set: Option<Vec<(usize, Expr)>>,
    ) -> R<Outcome> {
        let sel = Select {
            distinct: false,
            items: vec![SelectItem::Star(None)],
            from: Some(table.clone()),
            alias: None,
            hints: Vec::new(),
            joins: Vec::new(),
            filter,
            group_by: Vec::new(),
            having: None,
            order_by,
            limit: limit.map(|n| (0, n)),
            lock: LockClause::Update,
            wait: Wait::Wait,
        };
        let post = post_for(sel, &meta, &table.name);
        // Check the WHERE's and SET's columns before anything runs.
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: Some(&table.name),
            clause: "where clause",
            join: None,
        };
        if let Some(f) = &post.sel.filter {
            eval::check_names(f, &cols)?;
        }
        for (_, e) in set.iter().flatten() {
            eval::check_names(e, &cols.in_clause("field list"))?;
        }
        let mut plan = self.plan(
            c,
            &name,
            &meta,
            post.sel.filter.as_ref(),
            &post.sel.hints,
            &post.sel.order_by,
        )?;
        if post.sel.hints.is_empty() && post.sel.order_by.is_empty() {
            if let Some(tied) =
                self.one_row_tie(c, &name, &meta, post.sel.filter.as_ref(), &plan)?
            {
                plan = tied;
            }
        }
        let access = plan.access;
        // UPDATE and DELETE ... LIMIT stop where MySQL stops pulling rows
        // when the WHERE is exactly the range read, in ORDER BY's order
        // (see select).
        let in_order = post.sel.order_by.is_empty() || plan.ordered;
        let pushed = match (plan.exact && in_order, limit) {
            (true, Some(n)) => usize::try_from(n).ok(),
            _ => None,
        };
        let inner = access.request(&name, pushed);
        // MySQL changes each row as its read hands it over (the
        // read_record loops of mysql_update and mysql_delete), unless an
        // ORDER BY must sort the rows first, or an UPDATE changes the key
        // it reads by (`used_key_is_modified`: it reads every row first,
        // then changes them). A LIMIT the read does not stop at is left
        // to the whole read here.
        let key_changed = match (&set, &inner) {
            (Some(set), Request::Scan { index, .. }) => {
                let t = self
                    .engine
                    .table(&name)
                    .map_err(|e| self.engine_err(c, &e))?;
                let mut keyed: Vec<usize> = t.def.primary_key.clone();
                if let Some(ix) = index {
                    if let Some(sec) = t
                        .secondary
                        .iter()
                        .find(|s| s.def.name.eq_ignore_ascii_case(ix))
                    {
                        keyed.extend(sec.def.columns.iter().copied());
                    }
                }
                set.iter().any(|(i, _)| keyed.contains(i))
            }
            _ => false,
        };
        let row_by_row = matches!(inner, Request::Scan { .. })
            && in_order
            && (limit.is_none() || pushed.is_some())
            && !key_changed;
        // An UPDATE without LIMIT that scans the clustered index reads
        // semi-consistently (the engine does so under READ COMMITTED and
        // READ UNCOMMITTED only): rows others have locked are not waited
        // for unless their last committed version matches the WHERE.
        let read = if set.is_some()
            && limit.is_none()
            && matches!(inner, Request::Scan { index: None, .. })
        {
            Request::SemiConsistent {
                read: Box::new(inner),
            }
        } else {
            Request::Locking {
                read: Box::new(inner),
                exclusive: true,
                index_condition: false,
            }
        };
        let (plan, kind) = match set {
            Some(set) => (
                ChangePlan::Update {
                    set,
                    post: Box::new(post),
                },
                ChangeKind::Update,
            ),
            None => (
                ChangePlan::Delete {
                    post: Box::new(post),
                },
                ChangeKind::Delete,
            ),
        };
        let mut change = Change::new(name, Some(read.clone()), plan, kind, OnDuplicate::Error);
        change.read_again = row_by_row.then_some(read);
        Ok(self.start_change(c, change))
    }

    pub(super) fn start_change(&mut self, c: ConnId, mut ch: Change) -> Outcome {
        let s = self.conn(c).session;
        if let Err(e) = self.engine.begin_statement(s) {
            return Outcome::Done(Reply::Error(self.engine_err(c, &e)));
        }
        if ch.on_duplicate != OnDuplicate::Error {
            if let Err(e) = self.engine.set_statement_duplicates(s) {
                let err = self.engine_err(c, &e);
                return self.fail_change(c, &ch, err);
            }
        }
        if ch.read_again.is_some() {
            if let Err(e) = self.engine.set_statement_row_by_row(s) {
                let err = self.engine_err(c, &e);
                return self.fail_change(c, &ch, err);
            }
        }
        ch.lock_mark = self.engine.lock_mark();
        self.drive_change(c, Box::new(ch), None)
    }

    pub(super) fn drive_change(
        &mut self,
        c: ConnId,
        mut ch: Box<Change>,
        mut pending: Option<crate::Result<Step>>,
    ) -> Outcome {
        let s = self.conn(c).session;
        loop {
            if let Some(step) = pending.take() {
                match step {
                    Ok(Step::Waiting) => {
                        self.conn_mut(c).running = Some(Running {
                            prog: Prog::Change(ch),
                        });
                        return Outcome::Blocked;
                    }
                    Err(crate::Error::DuplicateKey { index, .. })
                        if ch.awaiting == Awaiting::Write
                            && ch.inserting.is_some()
                            && ch.on_duplicate != OnDuplicate::Error =>
                    {
                        if ch.on_duplicate == OnDuplicate::Ignore {
                            // INSERT IGNORE: the row stays out, silently
                            // in MySQL 5.1 (its write_record pushes no
                            // warning; 5.5 added one).
                            ch.duplicates += 1;
                            continue;
                        }
                        let lookup = match self.collision_lookup(c, &ch, &index) {
                            Ok(r) => r,
                            Err(e) => return self.fail_change(c, &ch, e),
                        };
                        ch.collided = Some(index);
                        ch.awaiting = Awaiting::Duplicate;
                        pending = Some(self.engine.execute(s, lookup));
                        continue;
                    }
                    Err(e) => {
                        let err = self.engine_err(c, &e);
                        return self.fail_change(c, &ch, err);
                    }
                    Ok(Step::Done(resp)) => match ch.awaiting {
                        Awaiting::Duplicate => {
                            if let Err(e) = self.collided(c, &mut ch, rows_of(resp)) {
                                return self.fail_change(c, &ch, e);
                            }
                        }
                        Awaiting::Read => {
                            if let Err(e) = self.plan_writes(c, &mut ch, rows_of(resp)) {
                                return self.fail_change(c, &ch, e);
                            }
                        }
                        Awaiting::Relock => {
                            let row = match resp {
                                Response::Row(r) => r,
                                _ => None,
                            };
                            if let Err(e) = self.relocked(c, &mut ch, row) {
                                return self.fail_change(c, &ch, e);
                            }
                        }
                        Awaiting::Write => {
                            if let Response::Affected(n) = resp {
                                ch.affected += n;
                            }
                        }
                        Awaiting::End => {
                            let info = match ch.kind {
                                ChangeKind::Insert
                                    if ch.records > 1
                                        || ch.read.is_none()
                                            && matches!(
                                                ch.plan,
                                                ChangePlan::InsertSelect { .. }
                                            ) =>
                                {
                                    Some(format!(
                                        "Records: {}  Duplicates: {}  Warnings: {{warnings}}",
                                        ch.records, ch.duplicates
                                    ))
                                }
                                ChangeKind::Update => Some(format!(
                                    "Rows matched: {}  Changed: {}  Warnings: {{warnings}}",
                                    ch.matched, ch.affected
                                )),
                                _ => None,
                            };
                            return Outcome::Done(Reply::Ok {
                                affected: ch.affected,
                                info,
                                warnings: 0,
                            });
                        }
                    },
                }
            }
            if let Some(read) = ch.read.take() {
                ch.awaiting = Awaiting::Read;
                pending = Some(if read.reads_nothing() {
                    // An impossible WHERE: nothing read, nothing locked.
                    Ok(Step::Done(Response::Rows(Vec::new())))
                } else {
                    self.engine.execute(s, read)
                });
            } else if let Some(w) = ch.queue.pop_front() {
                // The rows read so far change before a row read unlocked
                // is locked (MySQL changes each row as it reads it).
                ch.awaiting = Awaiting::Write;
                ch.inserting = (ch.on_duplicate != OnDuplicate::Error
                    && matches!(w, Request::Insert { .. }))
                .then(|| w.clone());
                pending = Some(self.engine.execute(s, w));
            } else if let Some(r) = ch.relock.pop_front() {
                ch.awaiting = Awaiting::Relock;
                pending = Some(self.engine.execute(s, r));
            } else if let Some(read) = ch.next_read.take() {
                ch.read = Some(read);
            } else {
                ch.awaiting = Awaiting::End;
                pending = Some(self.engine.end_statement(s, true));
            }
        }
    }

    pub(super) fn fail_change(&mut self, c: ConnId, ch: &Change, e: SqlError) -> Outcome {
        let s = self.conn(c).session;
        if ch.awaiting != Awaiting::End {
            // Undo the statement; if that fails too the engine has
            // stopped, and the first error is the one to report.
            let _ = self.engine.end_statement(s, false);
        }
        Outcome::Done(Reply::Error(e))
    }

    /// The writes a read's rows call for.
    pub(super) fn plan_writes(
        &mut self,
        c: ConnId,
        ch: &mut Change,
        rows: Vec<Vec<Value>>,
    ) -> R<()> {
        let table = ch.table.clone();
        match &ch.plan {
            ChangePlan::Insert => {}
            ChangePlan::InsertSelect {
                target,
                columns,
                post,
            } => {
                let (target, columns, post) = (target.clone(), columns.clone(), post.clone());
                let rows = to_datums(&post.shapes, rows);
                let Reply::Rows { rows, .. } = self.finish_select(c, &post, rows)? else {
                    unreachable!("a select gives rows")
                };
                let meta = self.metas[&target].clone();
                // The number of rows is not known ahead of an INSERT ...
                // SELECT (MySQL's estimate is 0).
                let mut interval = AutoincInterval {
                    multi_row: true,
                    ..AutoincInterval::default()
                };
                for (i, r) in rows.into_iter().enumerate() {
                    let lenient = ch.on_duplicate == OnDuplicate::Ignore;
                    let row = self.build_row(
                        c,
                        &target,
                        &meta,
                        columns.as_deref(),
                        r.into_iter().map(Some).collect(),
                        i + 1,
                        lenient,
                        &mut interval,
                    )?;
                    ch.queue.push_back(Request::Insert {
                        table: target.clone(),
                        row,
                    });
                }
                ch.records = ch.queue.len() as u64;
            }
            ChangePlan::Update { post, .. } | ChangePlan::Delete { post } => {
                let post = post.clone();
                let s = self.conn(c).session;
                // A semi-consistent read's unlocked rows (their last
                // committed versions): those the WHERE matches are locked
                // and read again before they change; the others are left
                // alone, never locked (row_search_for_mysql's
                // did_semi_consistent_read, which MySQL's UPDATE answers by
                // reading the row again with its lock).
                let semi = self.engine.semi_consistent_rows(s).to_vec();
                // A semi-consistent read that stopped at a row it read
                // unlocked (the last) goes on from after it, once that row
                // is dealt with.
                let keyed = !self
                    .engine
                    .table(&table)
                    .map_err(|e| self.engine_err(c, &e))?
                    .def
                    .primary_key
                    .is_empty();
                if let (true, Some(&last), Some(read)) = (keyed, semi.last(), &ch.semi_read) {
                    if last + 1 == rows.len() {
                        let key = self.primary_key_of(c, &table, &rows[last])?;
                        ch.next_read = Some(read_on_after(read, key));
                    }
                }
                // A table without a primary key: each row carries its
                // row id after its columns from here on, the key its
                // change, relock or unlock addresses it by.
                let rows = self.with_row_refs(c, &table, rows)?;
                let mut locked = Vec::with_capacity(rows.len());
                for (i, v) in rows.into_iter().enumerate() {
                    if semi.binary_search(&i).is_err() {
                        locked.push(v);
                        continue;
                    }
                    let d = to_datums(&post.shapes, vec![v.clone()]).remove(0);
                    if self.row_matches(c, &post, &d)? {
                        let key = self.primary_key_of(c, &table, &v)?;
                        ch.relock.push_back(Request::Locking {
                            read: Box::new(Request::Get {
                                table: table.clone(),
                                key,
                            }),
                            exclusive: true,
                            index_condition: false,
                        });
                    }
                }
                let rows = locked;
                let src = to_datums(&post.shapes, rows.clone());
                // READ COMMITTED lets go of the rows the WHERE rejects
                // (the engine does nothing under the stronger levels).
                let mut rejected = Vec::new();
                for (d, v) in src.iter().zip(&rows) {
                    if !self.row_matches(c, &post, d)? {
                        rejected.push(v.clone());
                    }
                }
                if !rejected.is_empty() {
                    let index = ch.read_index.clone();
                    self.unlock(c, &table, index.as_deref(), rejected, ch.lock_mark)?;
                }
                // Filter and order the rows as a SELECT * would.
                let Reply::Rows { rows: matched, .. } = self.finish_select(c, &post, src)? else {
                    unreachable!("a select gives rows")
                };
                ch.matched += matched.len() as u64;
                for r in matched {
                    self.queue_row_change(c, ch, r)?;
                }
                // A row-by-row read that handed its rows over before a
                // lock it would wait for goes on, once they are changed.
                if ch.next_read.is_none() && self.engine.read_goes_on(s) {
                    ch.next_read = ch.read_again.clone();
                }
            }
        }
        Ok(())
    }

    /// Whether a row (as a SELECT * of the statement's table reads it)
    /// passes the statement's WHERE.
    pub(super) fn row_matches(&self, c: ConnId, post: &SelectPost, row: &[Datum]) -> R<bool> {
        let Some(f) = &post.sel.filter else {
            return Ok(true);
        };
        let vars = self.vars(c);
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: post.table.as_deref(),
            clause: "where clause",
            join: None,
        };
        Ok(eval::eval(f, Some(row), &cols, &vars)?.truth() == Some(true))
    }

    /// The key the engine addresses a row by: its primary key values, or
    /// for a table without one the row id the row carries after its
    /// columns ([`with_row_refs`](Self::with_row_refs)).
    pub(super) fn primary_key_of(&self, c: ConnId, table: &str, row: &[Value]) -> R<Vec<Value>> {
        let t = self
            .engine
            .table(table)
            .map_err(|e| self.engine_err(c, &e))?;
        if t.def.primary_key.is_empty() {
            return match row.get(t.def.columns.len()) {
                Some(id @ Value::UInt(_)) => Ok(vec![id.clone()]),
                _ => Err(SqlError::new(
                    1030,
                    format!("Got error from storage engine: a row of '{table}' without its row id"),
                )),
            };
        }
        Ok(t.def.primary_key.iter().map(|&i| row[i].clone()).collect())
    }

    /// The rows the session's last read returned, each with its row id
    /// after its columns when `table` has no primary key (as the engine
    /// reports them, [`Engine::row_refs`]); unchanged otherwise.
    pub(super) fn with_row_refs(
        &self,
        c: ConnId,
        table: &str,
        mut rows: Vec<Vec<Value>>,
    ) -> R<Vec<Vec<Value>>> {
        let t = self
            .engine
            .table(table)
            .map_err(|e| self.engine_err(c, &e))?;
        if !t.def.primary_key.is_empty() {
            return Ok(rows);
        }
        let refs = self.engine.row_refs(self.conn(c).session);
        if refs.len() != rows.len() {
            return Err(SqlError::new(
                1030,
                format!(
                    "Got error from storage engine: {} rows of '{table}' but {} row ids",
                    rows.len(),
                    refs.len()
                ),
            ));
        }
        for (r, &id) in rows.iter_mut().zip(refs) {
            r.push(Value::UInt(id));
        }
        Ok(rows)
    }

    /// Lets go of the locks of rows a READ COMMITTED statement read and
    /// rejected (rows as [`with_row_refs`](Self::with_row_refs) gives).
    pub(super) fn unlock(
        &mut self,
        c: ConnId,
        table: &str,
        index: Option<&str>,
        mut rows: Vec<Vec<Value>>,
        mark: crate::lock::LockId,
    ) -> R<()> {
        let n = self
            .engine
            .table(table)
            .map_err(|e| self.engine_err(c, &e))?
            .def
            .columns
            .len();
        let mut ids = Vec::new();
        for r in &mut rows {
            if r.len() > n {
                if let Some(Value::UInt(id)) = r.pop() {
                    ids.push(id);
                }
            }
        }
        let s = self.conn(c).session;
        self.engine
            .unlock_rows(s, table, index, &rows, &ids, mark)
            .map_err(|e| self.engine_err(c, &e))
    }

    /// The row a semi-consistent read left unlocked, read again with its
    /// lock (`row`: its newest version, or `None` if it is gone): changed
    /// if the WHERE still matches it, otherwise let go again.
    pub(super) fn relocked(
        &mut self,
        c: ConnId,
        ch: &mut Change,
        row: Option<Vec<Value>>,
    ) -> R<()> {
        let Some(v) = row else {
            return Ok(());
        };
        let table = ch.table.clone();
        let v = self.with_row_refs(c, &table, vec![v])?.remove(0);
        let (ChangePlan::Update { post, .. } | ChangePlan::Delete { post }) = &ch.plan else {
            return Ok(());
        };
        let post = post.clone();
        let d = to_datums(&post.shapes, vec![v.clone()]).remove(0);
        if self.row_matches(c, &post, &d)? {
            ch.matched += 1;
            return self.queue_row_change(c, ch, d);
        }
        let index = ch.read_index.clone();
        self.unlock(c, &table, index.as_deref(), vec![v], ch.lock_mark)
    }

    /// Queues the write an UPDATE or DELETE makes of a row it matched.
    pub(super) fn queue_row_change(&mut self, c: ConnId, ch: &mut Change, r: Vec<Datum>) -> R<()> {
        let table = ch.table.clone();
        let (set, post) = match &ch.plan {
            ChangePlan::Update { set, post } => (Some(set.clone()), post.clone()),
            ChangePlan::Delete { post } => (None, post.clone()),
            _ => return Ok(()),
        };
        let meta = self.metas[&table].clone();
        // Back in the engine's form: a DATE's text is its packed number.
        // Leniently, so that what was stored comes back as it was (an
        // ENUM's '' is its 0, which strict mode would not store anew).
        let row: Vec<Value> = r
            .iter()
            .enumerate()
            .map(|(i, d)| match meta.columns.get(i) {
                Some(col) if field::is_field_type(col.ty) => {
                    schema::coerce_column_in(col, d, true, &mut Vec::new()).map(|v| v.to_value())
                }
                _ => Ok(d.to_value()),
            })
            .collect::<R<_>>()?;
        let key = self.primary_key_of(c, &table, &row)?;
        let Some(set) = set else {
            ch.queue.push_back(Request::Delete { table, key });
            return Ok(());
        };
        let vars = self.vars(c);
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: post.table.as_deref(),
            clause: "field list",
            join: None,
        };
        let mut changes = Vec::new();
        let mut pending_warnings = Vec::new();
        ch.updated += 1;
        // MySQL evaluates a single-table UPDATE's assignments left to
        // right, each seeing the ones before it (SET a = a + 1, b = a).
        let mut cur = r.clone();
        for (i, e) in &set {
            let col = &meta.columns[*i];
            let v = match e {
                Expr::Call { name, args, .. } if name == "default" && args.is_empty() => {
                    col.default.clone().unwrap_or(Datum::Null)
                }
                e => eval::eval(e, Some(&cur), &cols, &vars)?,
            };
            let v = if v.is_null() && col.not_null && col.ty == SqlType::Timestamp {
                field::timestamp_now(self.engine.now_us())
            } else {
                v
            };
            // SET c = NULL on a NOT NULL column: outside strict mode the
            // type's implicit default, with warning 1048.
            let v = if v.is_null() && col.not_null {
                let e = SqlError::new(1048, format!("Column '{}' cannot be null", col.name));
                if self.conn(c).sql_mode.strict() {
                    return Err(e);
                }
                pending_warnings.push(Warning::warn(e.code, e.message));
                schema::implicit_default(col.ty)
            } else {
                v
            };
            // Outside strict mode a value the column cannot take is
            // adjusted, with a warning that names the row.
            let lenient = !self.conn(c).sql_mode.strict();
            let mut warnings = Vec::new();
            let v = schema::coerce_column_in(col, &v, lenient, &mut warnings)?;
            let row_no = ch.updated;
            pending_warnings.extend(warnings.into_iter().map(|w| {
                let message = match w.message.strip_suffix(" at row 1") {
                    Some(head) => format!("{head} at row {row_no}"),
                    None => w.message,
                };
                Warning { message, ..w }
            }));
            if let Some(slot) = cur.get_mut(*i) {
                *slot = schema::Shape::of(col).show(&v);
            }
            changes.push((self.engine_column(c, &table, *i)?, v.to_value()));
        }
        for w in pending_warnings {
            self.warn(c, w);
        }
        // ON UPDATE CURRENT_TIMESTAMP: a column the statement does not
        // set takes the time when the row changes (MySQL compares the
        // record before and after, compare_record).
        if cur != r {
            for (i, col) in meta.columns.iter().enumerate() {
                if col.update_now && !set.iter().any(|(j, _)| *j == i) {
                    let v =
                        schema::coerce_column(col, &field::timestamp_now(self.engine.now_us()))?;
                    changes.push((self.engine_column(c, &table, i)?, v.to_value()));
                }
            }
        }
        ch.queue.push_back(Request::Update {
            table,
            key,
            set: changes,
        });
        Ok(())
    }

    /// The locking read of the row an insert collided with in `index`
    /// (`PRIMARY` or a unique index): an exact search of that key, X
    /// locked, as MySQL's write_record reads the row in the way
    /// (index_read_idx_map) under the statement's X lock.
    pub(super) fn collision_lookup(&self, c: ConnId, ch: &Change, index: &str) -> R<Request> {
        let Some(Request::Insert { table, row }) = &ch.inserting else {
            unreachable!("a collision is an insert's")
        };
        let t = self
            .engine
            .table(table)
            .map_err(|e| self.engine_err(c, &e))?;
        let read = if index == "PRIMARY" {
            Request::Get {
                table: table.clone(),
                key: t.def.primary_key.iter().map(|&i| row[i].clone()).collect(),
            }
        } else {
            let ix = (t.def.indexes.iter())
                .find(|x| x.name == index)
                .ok_or_else(|| SqlError::new(1030, format!("no unique index '{index}'")))?;
            let vals: Vec<Value> = ix.columns.iter().map(|&i| row[i].clone()).collect();
            Request::Scan {
                table: table.clone(),
                index: Some(ix.name.clone()),
                low: RangeBound::Included(vals.clone()),
                high: RangeBound::Included(vals),
                reverse: false,
                limit: Some(1),
            }
        };
        Ok(Request::Locking {
            read: Box::new(read),
            exclusive: true,
            index_condition: false,
        })
    }

    /// What a collision does with the row in the way (`rows`, the first of
    /// them; none if it went away): MySQL's write_record. REPLACE deletes
    /// it and inserts again, or updates it in place when the key collided
    /// is the table's last unique one; ON DUPLICATE KEY UPDATE assigns to
    /// it. The affected rows count as MySQL counts them: 2 for a row
    /// replaced or updated, 1 for one replaced by an identical row, 0 for
    /// an update that changes nothing.
    pub(super) fn collided(&mut self, c: ConnId, ch: &mut Change, rows: Vec<Vec<Value>>) -> R<()> {
        let Some(insert) = ch.inserting.take() else {
            unreachable!("a collision is an insert's")
        };
        let Request::Insert { table, row } = &insert else {
            unreachable!("a collision is an insert's")
        };
        let (table, row) = (table.clone(), row.clone());
        let rows = self.with_row_refs(c, &table, rows)?;
        let Some(found) = rows.into_iter().next() else {
            // The row in the way is gone: insert again.
            ch.queue.push_front(insert);
            return Ok(());
        };
        let key = self.primary_key_of(c, &table, &found)?;
        let meta = self.metas[&table].clone();
        let names: Vec<String> = meta.columns.iter().map(|m| m.name.clone()).collect();
        let n = meta.columns.len();
        // The row as the server sees it (CHAR without its padding), for
        // MySQL's compare_record: a change of bytes is a change.
        let shapes = schema::Shape::of_all(&meta);
        let current = to_datums(&shapes, vec![found[..n].to_vec()]).remove(0);
        match ch.on_duplicate.clone() {
            OnDuplicate::Replace => {
                let t = self
                    .engine
                    .table(&table)
                    .map_err(|e| self.engine_err(c, &e))?;
                let last_unique = match t.def.indexes.iter().rev().find(|x| x.unique) {
                    Some(ix) => ch.collided.as_deref() == Some(ix.name.as_str()),
                    None => true,
                };
                if last_unique && !t.def.primary_key.is_empty() {
                    ch.affected += 1;
                    if to_datums(&shapes, vec![row.clone()]).remove(0) != current {
                        ch.duplicates += 1;
                        let set = (0..n)
                            .map(|i| Ok((self.engine_column(c, &table, i)?, row[i].clone())))
                            .collect::<R<Vec<_>>>()?;
                        ch.queue.push_front(Request::Update { table, key, set });
                    }
                } else {
                    ch.duplicates += 1;
                    ch.queue.push_front(insert);
                    ch.queue.push_front(Request::Delete { table, key });
                }
            }
            OnDuplicate::Update(assignments) => {
                let inserted = to_datums(&shapes, vec![row.clone()]).remove(0);
                let collations = meta.collations();
                let short = split_name(&table).map(|(_, t)| t);
                let cols = Columns {
                    names: &names,
                    collations: Some(&collations),
                    table: short.as_deref(),
                    clause: "field list",
                    join: None,
                };
                let vars = self.vars(c);
                let mut new = current.clone();
                for (col, e) in &assignments {
                    let i = names
                        .iter()
                        .position(|m| m.eq_ignore_ascii_case(col))
                        .ok_or_else(|| {
                            SqlError::new(1054, format!("Unknown column '{col}' in 'field list'"))
                        })?;
                    let e = with_values(e, &names, &inserted);
                    // Each assignment sees the ones before it, as MySQL's.
                    new[i] = eval::eval(&e, Some(&new), &cols, &vars)?;
                }
                let mut set = Vec::new();
                for (i, (a, b)) in new.iter().zip(&current).enumerate() {
                    let col = &meta.columns[i];
                    if a.is_null() && col.not_null {
                        return Err(SqlError::new(
                            1048,
                            format!("Column '{}' cannot be null", col.name),
                        ));
                    }
                    // Compared as the column stores them (5 and 5.0 into
                    // an INT are the same value).
                    let v = schema::coerce_column(col, a)?;
                    if v != schema::coerce_column(col, b)? {
                        set.push((i, v.to_value()));
                    }
                }
                if !set.is_empty() {
                    ch.affected += 1;
                    ch.duplicates += 1;
                    let set = set
                        .into_iter()
                        .map(|(i, v)| Ok((self.engine_column(c, &table, i)?, v)))
                        .collect::<R<Vec<_>>>()?;
                    ch.queue.push_front(Request::Update { table, key, set });
                }
            }
            OnDuplicate::Error | OnDuplicate::Ignore => unreachable!("no lookup for these"),
        }
        Ok(())
    }

    /// The engine's name of column `i` of `table`, which an UPDATE request
    /// names: the server's columns and the engine's match by position (the
    /// names differ after a rename InnoDB 1.0.6 never saw).
    pub(super) fn engine_column(&self, c: ConnId, table: &str, i: usize) -> R<String> {
        let t = self
            .engine
            .table(table)
            .map_err(|e| self.engine_err(c, &e))?;
        t.def
            .columns
            .get(i)
            .map(|col| col.name.clone())
            .ok_or_else(|| SqlError::new(1054, format!("Unknown column {i} in 'field list'")))
    }
}

/// The rows a read answered with (none for any other answer).
fn rows_of(resp: Response) -> Vec<Vec<Value>> {
    match resp {
        Response::Rows(r) => r,
        Response::Row(r) => r.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// `e` with each `VALUES(col)` replaced by the inserted row's value of
/// `col` (ON DUPLICATE KEY UPDATE's view of the row it did not insert).
fn with_values(e: &Expr, names: &[String], inserted: &[Datum]) -> Expr {
    let done: Result<Expr, std::convert::Infallible> = e.rewrite(&mut |x| {
        Ok(match x {
            Expr::Call { name, args, .. } if name == "values" && args.len() == 1 => {
                match &args[0] {
                    Expr::Column { name: col, .. } => names
                        .iter()
                        .position(|n| n.eq_ignore_ascii_case(col))
                        .map(|i| Expr::Lit(inserted[i].clone())),
                    _ => None,
                }
            }
            _ => None,
        })
    });
    match done {
        Ok(e) => e,
        Err(never) => match never {},
    }
}

/// What an INSERT's rows share: the AUTO_INCREMENT values the statement
/// has reserved and not yet used (MySQL's `auto_inc_intervals` of one
/// statement), and whether it has several rows.
#[derive(Debug, Default)]
pub(super) struct AutoincInterval {
    /// The next value of the interval.
    next: u64,
    /// How many values of it are left.
    left: u64,
    /// Intervals reserved so far.
    intervals: u32,
    /// The statement's rows, when known ahead (a VALUES list), else 0.
    rows: u64,
    /// The statement inserts several rows (a VALUES list of more than one,
    /// or INSERT ... SELECT): outside strict mode a NULL for a NOT NULL
    /// column is then a warning.
    multi_row: bool,
}

/// Semi-consistent read `read` going on from after the row with primary
/// key `key`, in its direction.
fn read_on_after(read: &Request, key: Vec<Value>) -> Request {
    let mut read = read.clone();
    if let Request::SemiConsistent { read: scan } = &mut read {
        if let Request::Scan {
            low, high, reverse, ..
        } = scan.as_mut()
        {
            if *reverse {
                *high = crate::RangeBound::Excluded(key);
            } else {
                *low = crate::RangeBound::Excluded(key);
            }
        }
    }
    read
}
