//! SELECT: the engine read a statement plans, then the server's work on
//! its rows (filter, group, aggregate, order, distinct, limit).

use super::explain::used_columns;
use super::plan::{index_covers, Access};
use super::*;

impl Server {
    pub(super) fn select(&mut self, c: ConnId, sel: Select) -> R<Outcome> {
        let Some(from) = sel.from.clone() else {
            // SELECT without FROM: one row of constants.
            let post = SelectPost::constant(sel);
            return Ok(Outcome::Done(self.finish_select(
                c,
                &post,
                vec![Vec::new()],
            )?));
        };
        if from
            .db
            .as_deref()
            .is_some_and(|d| d.eq_ignore_ascii_case("information_schema"))
        {
            let (names, rows) = self.information_schema(c, &from.name)?;
            let post = SelectPost {
                sel,
                names,
                table: Some(from.name.clone()),
                shapes: Vec::new(),
                collations: None,
                join: None,
                star: None,
                sources: None,
            };
            return Ok(Outcome::Done(self.finish_select(c, &post, rows)?));
        }
        if !sel.joins.is_empty() {
            return self.select_join(c, sel);
        }
        let (name, meta) = self.resolve(c, &from)?;
        self.tables_locked(c);
        let qualifier = sel.alias.clone().unwrap_or_else(|| from.name.clone());
        let mut post = post_for(sel, &meta, &qualifier);
        post.sources = table_sources(&name, &meta, &qualifier);
        let sources = result_sources(&post);
        self.conn_mut(c).result_columns = sources;
        let plan = self.plan(
            c,
            &name,
            &meta,
            post.sel.filter.as_ref(),
            &post.sel.hints,
            &post.sel.order_by,
        )?;
        let sel = &post.sel;
        // The engine may stop early only when nothing after it drops or
        // reorders rows: no WHERE beyond the range it reads, no ORDER BY
        // but the order the read gives, no GROUP BY, DISTINCT or
        // aggregate. A locking read then locks only the rows the LIMIT
        // takes, as InnoDB does.
        let in_order = sel.order_by.is_empty() || plan.ordered;
        let grouped = !sel.group_by.is_empty() || sel.having.is_some();
        let limit = match (plan.exact && in_order && !grouped, sel.distinct, &sel.limit) {
            (true, false, Some((off, n)))
                if !sel.items.iter().any(
                    |i| matches!(i, SelectItem::Expr { expr, .. } if eval::has_aggregate(expr)),
                ) =>
            {
                usize::try_from(off.saturating_add(*n)).ok()
            }
            _ => None,
        };
        let read = plan.access.request(&name, limit);
        let covered = match &plan.access {
            Access::Range {
                index: Some(ix), ..
            }
            | Access::Ranges {
                index: Some(ix), ..
            } => {
                let def = &self
                    .engine
                    .table(&name)
                    .map_err(|e| self.engine_err(c, &e))?
                    .def;
                index_covers(def, Some(ix), &used_columns(sel, &post.names))
            }
            _ => false,
        };
        let req = match sel.lock {
            LockClause::None => read,
            l if sel.wait == Wait::SkipLocked => {
                // SKIP LOCKED reads a range: a point read becomes the range
                // of its one key.
                Request::SkipLocked {
                    read: Box::new(read.as_range()),
                    exclusive: l == LockClause::Update,
                }
            }
            l => Request::Locking {
                read: Box::new(read),
                exclusive: l == LockClause::Update,
                index_condition: true,
            },
        };
        let req = if covered {
            Request::IndexOnly {
                read: Box::new(req),
            }
        } else {
            req
        };
        Ok(self.single(c, req, Then::Select(Box::new(post))))
    }

    /// A SELECT over joined tables, as a nested loop in the order written:
    /// each table read whole by a consistent read of the statement's view,
    /// each row of the tables before it combined with each row here that
    /// meets the join's condition (ON, or equality of the USING or NATURAL
    /// columns, compared in their collations), a LEFT JOIN's unmatched
    /// rows with this table's columns NULL; then WHERE and the rest as for
    /// one table. `*` lists a USING column once, first, as MySQL does.
    /// Locking reads of joins, and plain reads of them in a SERIALIZABLE
    /// transaction (which lock), are refused: MySQL would read the inner tables
    /// through their indexes and lock only what those lookups touch, which
    /// this nested loop over whole tables does not reproduce.
    fn select_join(&mut self, c: ConnId, sel: Select) -> R<Outcome> {
        if sel.lock != LockClause::None {
            return Err(SqlError::unsupported("locking reads of joins"));
        }
        let session = self.conn(c).session;
        if self.engine.isolation(session) == crate::trx::Isolation::Serializable
            && !self.engine.autocommit(session)
        {
            return Err(SqlError::unsupported("joins under SERIALIZABLE"));
        }
        let from = sel.from.clone().expect("a join has a first table");
        let mut sources = vec![(from.clone(), sel.alias.clone(), None)];
        for j in &sel.joins {
            sources.push((j.table.clone(), j.alias.clone(), Some(j.clone())));
        }
        // Resolve every table first: an unknown one fails before any read.
        let mut metas = Vec::with_capacity(sources.len());
        for (t, alias, _) in &sources {
            let (name, meta) = self.resolve(c, t)?;
            let shown = alias.clone().unwrap_or_else(|| t.name.clone());
            if metas
                .iter()
                .any(|(_, _, s): &(String, TableMeta, String)| s.eq_ignore_ascii_case(&shown))
            {
                return Err(SqlError::new(
                    1066,
                    format!("Not unique table/alias: '{shown}'"),
                ));
            }
            metas.push((name, meta, shown));
        }
        self.tables_locked(c);
        let mut names: Vec<String> = Vec::new();
        let mut cols = eval::JoinColumns {
            tables: Vec::new(),
            merged: Vec::new(),
        };
        let mut shapes = Vec::new();
        let mut collations = Vec::new();
        let mut rows: Vec<Vec<Datum>> = vec![Vec::new()];
        let mut star: Vec<usize> = Vec::new();
        // The reads share what they see: nothing commits between two
        // requests of one statement, so each consistent read (a
        // transaction's view, or an autocommit read's own snapshot) sees
        // the same state.
        for (k, (name, meta, shown)) in metas.iter().enumerate() {
            let read = Request::scan_all(name);
            let resp = match self.engine.execute(session, read) {
                Ok(Step::Done(resp)) => resp,
                Ok(Step::Waiting) => {
                    // A consistent read never waits; should it, give the
                    // wait up rather than leave it hanging.
                    let _ = self.engine.cancel_wait(session);
                    return Err(SqlError::unsupported("a join whose read waits for a lock"));
                }
                Err(e) => return Err(self.engine_err(c, &e)),
            };
            let here_shapes = schema::Shape::of_all(meta);
            let here = to_datums(
                &here_shapes,
                match resp {
                    Response::Rows(r) => r,
                    Response::Row(r) => r.into_iter().collect(),
                    _ => Vec::new(),
                },
            );
            let base = names.len();
            let here_names: Vec<String> = meta.columns.iter().map(|c| c.name.clone()).collect();
            let here_colls = meta.collations();
            // The USING columns: each named on both sides (1054 if not).
            let join = sources[k].2.as_ref();
            let using: Vec<String> = match join {
                Some(j) if j.natural => here_names
                    .iter()
                    .filter(|n| {
                        (0..base).any(|i| !cols.merged[i] && names[i].eq_ignore_ascii_case(n))
                    })
                    .cloned()
                    .collect(),
                Some(j) => j.using.clone(),
                None => Vec::new(),
            };
            let mut pairs = Vec::new();
            for u in &using {
                let left = (0..base)
                    .filter(|&i| !cols.merged[i] && names[i].eq_ignore_ascii_case(u))
                    .collect::<Vec<_>>();
                let right = here_names.iter().position(|n| n.eq_ignore_ascii_case(u));
                match (left.as_slice(), right) {
                    ([l], Some(r)) => pairs.push((*l, base + r)),
                    ([_, _, ..], Some(_)) => {
                        return Err(SqlError::new(
                            1052,
                            format!("Column '{u}' in from clause is ambiguous"),
                        ))
                    }
                    _ => {
                        return Err(SqlError::new(
                            1054,
                            format!("Unknown column '{u}' in 'from clause'"),
                        ))
                    }
                }
            }
            names.extend(here_names.iter().cloned());
            cols.tables
                .extend(std::iter::repeat_n(shown.clone(), here_names.len()));
            cols.merged
                .extend((0..here_names.len()).map(|i| pairs.iter().any(|&(_, r)| r == base + i)));
            shapes.extend(here_shapes);
            collations.extend(here_colls.iter().copied());
            // `*`: the USING columns first (once), then the rest in order.
            if !pairs.is_empty() {
                let firsts: Vec<usize> = pairs.iter().map(|&(l, _)| l).collect();
                star.retain(|i| !firsts.contains(i));
                let mut front = firsts;
                front.extend(star.iter().copied());
                star = front;
            }
            star.extend(
                (0..here_names.len())
                    .map(|i| base + i)
                    .filter(|i| !pairs.iter().any(|&(_, r)| r == *i)),
            );
            let on = join.and_then(|j| j.on.clone());
            let left = join.is_some_and(|j| j.left);
            let ecols = Columns {
                names: &names,
                collations: Some(&collations),
                table: None,
                clause: "on clause",
                join: Some(&cols),
            };
            if let Some(e) = &on {
                eval::check_names(e, &ecols)?;
            }
            let mut next = Vec::new();
            for r in &rows {
                let mut matched = false;
                for h in &here {
                    let mut combined = r.clone();
                    combined.extend(h.iter().cloned());
                    let mut keep = pairs.iter().all(|&(l, rr)| {
                        combined[l].compare_in(&combined[rr], collations[l])
                            == Some(Ordering::Equal)
                    });
                    if keep {
                        if let Some(e) = &on {
                            keep = eval::eval(e, Some(&combined), &ecols, &self.vars(c))?.truth()
                                == Some(true);
                        }
                    }
                    if keep {
                        matched = true;
                        next.push(combined);
                    }
                }
                if left && !matched {
                    let mut combined = r.clone();
                    combined.extend(std::iter::repeat_n(Datum::Null, here_names.len()));
                    next.push(combined);
                }
            }
            rows = next;
        }
        let mut sel = sel;
        sel.joins.clear();
        let post = SelectPost {
            sel,
            names,
            // Any qualifier the join's columns know.
            table: Some(String::new()),
            shapes,
            collations: Some(collations),
            join: Some(cols),
            star: Some(star),
            sources: None,
        };
        Ok(Outcome::Done(self.finish_select(c, &post, rows)?))
    }

    /// Filter, aggregate or project, order, distinct and limit.
    /// 1054 (and 1056) for a column a SELECT names that its tables lack,
    /// in MySQL's order of clauses, before any row is looked at.
    pub(in crate::sql) fn check_select_names(&self, post: &SelectPost) -> R<()> {
        let sel = &post.sel;
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: post.table.as_deref(),
            clause: "where clause",
            join: post.join.as_ref(),
        };
        if let Some(f) = &sel.filter {
            eval::check_names(f, &cols)?;
        }
        {
            let fcols = cols.in_clause("field list");
            for item in &sel.items {
                if let SelectItem::Expr { expr, .. } = item {
                    eval::check_names(expr, &fcols)?;
                }
            }
            let ocols = cols.in_clause("order clause");
            for (e, _) in &sel.order_by {
                eval::check_names(self.order_expr(e, &sel.items)?, &ocols)?;
            }
            let gcols = cols.in_clause("group statement");
            for (e, _) in &sel.group_by {
                let e = self.order_expr(e, &sel.items)?;
                if eval::has_aggregate(e) {
                    return Err(SqlError::new(
                        1056,
                        format!("Can't group on '{}'", expr_text(e, &sel.items)),
                    ));
                }
                eval::check_names(e, &gcols)?;
            }
            if let Some(h) = &sel.having {
                eval::check_names(
                    &with_aliases(h, &sel.items),
                    &cols.in_clause("having clause"),
                )?;
            }
        }
        Ok(())
    }

    pub(in crate::sql) fn finish_select(
        &self,
        c: ConnId,
        post: &SelectPost,
        rows: Vec<Vec<Datum>>,
    ) -> R<Reply> {
        let sel = &post.sel;
        let vars = self.vars(c);
        self.check_select_names(post)?;
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: post.table.as_deref(),
            clause: "where clause",
            join: post.join.as_ref(),
        };
        let mut kept = Vec::with_capacity(rows.len());
        for r in rows {
            let keep = match &sel.filter {
                None => true,
                Some(f) => eval::eval(f, Some(&r), &cols, &vars)?.truth() == Some(true),
            };
            if keep {
                kept.push(r);
            }
        }
        let cols = cols.in_clause("field list");
        // The columns each `*` of the select list stands for.
        let mut stars: Vec<Option<Vec<usize>>> = Vec::new();
        for item in &sel.items {
            if let SelectItem::Star(q) = item {
                stars.push(star_columns(post, q.as_deref())?);
            }
        }
        // `None`: the whole source row, as it came (an UPDATE's rows carry
        // the hidden row id past the named columns).
        let star_of = |k: usize| -> Option<&[usize]> { stars[k].as_deref() };
        let pick = |k: usize, r: &[Datum]| -> Vec<Datum> {
            match star_of(k) {
                Some(cols) => cols.iter().map(|&i| r[i].clone()).collect(),
                None => r.to_vec(),
            }
        };
        let mut names = Vec::new();
        let mut k = 0;
        for item in &sel.items {
            match item {
                SelectItem::Star(_) => {
                    match star_of(k) {
                        Some(cols) => names.extend(cols.iter().map(|&i| post.names[i].clone())),
                        None => names.extend(post.names.iter().cloned()),
                    }
                    k += 1;
                }
                SelectItem::Expr { alias, text, .. } => {
                    names.push(alias.clone().unwrap_or_else(|| text.clone()))
                }
            }
        }
        let aggregate = sel
            .items
            .iter()
            .any(|i| matches!(i, SelectItem::Expr { expr, .. } if eval::has_aggregate(expr)));
        let grouped = aggregate || !sel.group_by.is_empty() || sel.having.is_some();
        let mut out: Vec<Vec<Datum>> = if grouped {
            // GROUP BY: the rows in groups of equal keys, in the keys'
            // order (MySQL 5.1 sorts by the GROUP BY list, each ASC or
            // DESC, unless ORDER BY says otherwise); without it, one group
            // of every row, which gives a row even when there are none.
            // Each select item, HAVING and ORDER BY is evaluated over the
            // group: aggregates over its rows, other columns from its
            // first row, as MySQL does without ONLY_FULL_GROUP_BY.
            let groups: Vec<Vec<Vec<Datum>>> = if sel.group_by.is_empty() {
                vec![kept]
            } else {
                let gcols = cols.in_clause("group statement");
                let mut keyed = Vec::with_capacity(kept.len());
                for r in kept {
                    let mut k = Vec::with_capacity(sel.group_by.len());
                    for (e, _) in &sel.group_by {
                        k.push(eval::eval(
                            self.order_expr(e, &sel.items)?,
                            Some(&r),
                            &gcols,
                            &vars,
                        )?);
                    }
                    keyed.push((k, r));
                }
                let spec = self.sort_spec(&sel.group_by, &sel.items, &gcols)?;
                let cmp = |a: &[Datum], b: &[Datum]| cmp_keys(a, b, &spec);
                // A stable sort keeps each group's rows in the order they
                // were read, so its first row is the first one read.
                keyed.sort_by(|a, b| cmp(&a.0, &b.0));
                let mut groups: Vec<(Vec<Datum>, Vec<Vec<Datum>>)> = Vec::new();
                for (k, r) in keyed {
                    match groups.last_mut() {
                        Some((gk, rows)) if cmp(gk, &k) == Ordering::Equal => rows.push(r),
                        _ => groups.push((k, vec![r])),
                    }
                }
                groups.into_iter().map(|(_, rows)| rows).collect()
            };
            let having = sel.having.as_ref().map(|h| with_aliases(h, &sel.items));
            let hcols = cols.in_clause("having clause");
            let ocols = cols.in_clause("order clause");
            let mut rows = Vec::with_capacity(groups.len());
            let mut keys = Vec::with_capacity(groups.len());
            for g in &groups {
                if let Some(h) = &having {
                    if eval::eval_aggregate(h, g, &hcols, &vars)?.truth() != Some(true) {
                        continue;
                    }
                }
                let mut row = Vec::new();
                let mut k = 0;
                for item in &sel.items {
                    match item {
                        SelectItem::Star(_) if sel.group_by.is_empty() => return Err(SqlError::new(1140, "Mixing of GROUP columns (MIN(),MAX(),COUNT(),...) with no GROUP columns is illegal if there is no GROUP BY clause")),
                        SelectItem::Star(_) => {
                            row.extend(pick(k, &g[0]));
                            k += 1;
                        }
                        SelectItem::Expr { expr, .. } => row.push(eval::eval_aggregate(expr, g, &cols, &vars)?),
                    }
                }
                let mut k = Vec::with_capacity(sel.order_by.len());
                for (e, _) in &sel.order_by {
                    k.push(eval::eval_aggregate(
                        self.order_expr(e, &sel.items)?,
                        g,
                        &ocols,
                        &vars,
                    )?);
                }
                rows.push(row);
                keys.push(k);
            }
            if !sel.order_by.is_empty() {
                let spec = self.sort_spec(&sel.order_by, &sel.items, &ocols)?;
                rows = sort_by_keys(rows, &keys, &spec);
            }
            rows
        } else {
            // ORDER BY over the source rows, by expression, select-list
            // alias or position.
            if !sel.order_by.is_empty() {
                let mut keys = Vec::with_capacity(kept.len());
                for r in &kept {
                    let mut k = Vec::new();
                    for (e, _) in &sel.order_by {
                        let e = self.order_expr(e, &sel.items)?;
                        k.push(eval::eval(
                            e,
                            Some(r),
                            &cols.in_clause("order clause"),
                            &vars,
                        )?);
                    }
                    keys.push(k);
                }
                let spec =
                    self.sort_spec(&sel.order_by, &sel.items, &cols.in_clause("order clause"))?;
                kept = sort_by_keys(kept, &keys, &spec);
            }
            let mut out = Vec::with_capacity(kept.len());
            for r in &kept {
                let mut row = Vec::new();
                let mut k = 0;
                for item in &sel.items {
                    match item {
                        SelectItem::Star(_) => {
                            row.extend(pick(k, r));
                            k += 1;
                        }
                        SelectItem::Expr { expr, .. } => {
                            let src = if post.table.is_some() {
                                Some(r.as_slice())
                            } else {
                                None
                            };
                            row.push(eval::eval(expr, src, &cols, &vars)?)
                        }
                    }
                }
                out.push(row);
            }
            out
        };
        if sel.distinct {
            // Values equal in their collation are one ('a' and 'A' under
            // latin1_swedish_ci); the first read is kept.
            let mut colls = Vec::new();
            let mut k = 0;
            for item in &sel.items {
                match item {
                    SelectItem::Star(_) => {
                        let all = cols.collations.unwrap_or(&[]);
                        match star_of(k) {
                            Some(cs) => {
                                colls.extend(cs.iter().filter_map(|&i| all.get(i).copied()))
                            }
                            None => colls.extend(all.iter().copied()),
                        }
                        k += 1;
                    }
                    SelectItem::Expr { expr, .. } => colls.push(eval::collation_of(expr, &cols)),
                }
            }
            let mut seen: Vec<Vec<Datum>> = Vec::new();
            out.retain(|r| {
                let dup = seen.iter().any(|s| {
                    s.len() == r.len()
                        && s.iter().zip(r).enumerate().all(|(i, (a, b))| {
                            let coll = colls.get(i).copied().unwrap_or(eval::CONNECTION_COLLATION);
                            a.sort_cmp_in(b, coll) == Ordering::Equal
                        })
                });
                if !dup {
                    seen.push(r.clone());
                }
                !dup
            });
        }
        if let Some((off, n)) = sel.limit {
            let off = usize::try_from(off).unwrap_or(usize::MAX);
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            out = out.into_iter().skip(off).take(n).collect();
        }
        Ok(Reply::Rows {
            columns: names,
            rows: out,
            warnings: 0,
        })
    }

    /// The collation and direction of each ORDER BY or GROUP BY key.
    pub(super) fn sort_spec(
        &self,
        by: &[(Expr, bool)],
        items: &[SelectItem],
        cols: &eval::Columns<'_>,
    ) -> R<Vec<(Collation, bool)>> {
        by.iter()
            .map(|(e, desc)| Ok((eval::collation_of(self.order_expr(e, items)?, cols), *desc)))
            .collect()
    }

    pub(super) fn order_expr<'a>(&self, e: &'a Expr, items: &'a [SelectItem]) -> R<&'a Expr> {
        if let Expr::Lit(Datum::Int(n)) = e {
            let i = usize::try_from(*n)
                .ok()
                .filter(|&i| i >= 1 && i <= items.len());
            return match i.map(|i| &items[i - 1]) {
                Some(SelectItem::Expr { expr, .. }) => Ok(expr),
                _ => Err(SqlError::bad_field(&n.to_string(), "order clause")),
            };
        }
        if let Expr::Column { table: None, name } = e {
            for item in items {
                if let SelectItem::Expr {
                    expr,
                    alias: Some(a),
                    ..
                } = item
                {
                    if a.eq_ignore_ascii_case(name) {
                        return Ok(expr);
                    }
                }
            }
        }
        Ok(e)
    }

    // ---- access paths ----
}

/// The columns a `*` (`q`: `q.*`) of the select list stands for: every
/// column in the order `*` lists them (`None`: the source row as it is),
/// or those of table `q` (1051 for a table the statement does not read;
/// 1096 with no table at all).
fn star_columns(post: &SelectPost, q: Option<&str>) -> R<Option<Vec<usize>>> {
    let Some(table) = &post.table else {
        return Err(SqlError::new(1096, "No tables used"));
    };
    let all = post.star.clone();
    let Some(q) = q else {
        return Ok(all);
    };
    let unknown = || SqlError::new(1051, format!("Unknown table '{q}'"));
    match &post.join {
        Some(j) => {
            let mine: Vec<usize> = (0..post.names.len())
                .filter(|&i| j.tables[i].eq_ignore_ascii_case(q))
                .collect();
            if mine.is_empty() {
                Err(unknown())
            } else {
                Ok(Some(mine))
            }
        }
        None if table.eq_ignore_ascii_case(q) => Ok(all),
        None => Err(unknown()),
    }
}

impl Server {
    /// What COM_STMT_PREPARE says of a statement before it runs: for a
    /// SELECT of one table (or of no table), its result columns' names
    /// and table columns; for a statement without a result set, none;
    /// `None` where the columns are known only by running it (a join,
    /// SHOW, EXPLAIN). A statement that does not parse, or names what
    /// does not exist, is its error.
    pub fn describe(&mut self, c: ConnId, sql: &str) -> R<Option<super::super::Described>> {
        let ansi = self.conn(c).sql_mode.ansi_quotes;
        let stmt = super::super::parse::parse_in(sql, ansi)?;
        let sel = match stmt {
            Stmt::Select(sel) => sel,
            Stmt::Show(_) | Stmt::Explain(_) | Stmt::Checksum { .. } => return Ok(None),
            Stmt::Analyze(_) | Stmt::Check(_) | Stmt::Optimize(_) => return Ok(None),
            _ => return Ok(Some(Vec::new())),
        };
        let name_of = |item: &SelectItem| match item {
            SelectItem::Expr { alias, text, .. } => alias.clone().unwrap_or_else(|| text.clone()),
            SelectItem::Star(_) => String::new(),
        };
        let Some(from) = sel.from.clone() else {
            if sel.items.iter().any(|i| matches!(i, SelectItem::Star(_))) {
                return Err(SqlError::new(1096, "No tables used"));
            }
            return Ok(Some(sel.items.iter().map(|i| (name_of(i), None)).collect()));
        };
        if !sel.joins.is_empty()
            || from
                .db
                .as_deref()
                .is_some_and(|d| d.eq_ignore_ascii_case("information_schema"))
        {
            return Ok(None);
        }
        let (name, meta) = self.resolve(c, &from)?;
        let qualifier = sel.alias.clone().unwrap_or_else(|| from.name.clone());
        let mut post = post_for(sel, &meta, &qualifier);
        post.sources = table_sources(&name, &meta, &qualifier);
        self.check_select_names(&post)?;
        let sources = result_sources(&post);
        let mut names = Vec::new();
        for item in &post.sel.items {
            match item {
                SelectItem::Star(q) => match star_columns(&post, q.as_deref())? {
                    Some(cols) => names.extend(cols.iter().map(|&i| post.names[i].clone())),
                    None => names.extend(post.names.iter().cloned()),
                },
                other => names.push(name_of(other)),
            }
        }
        if sources.len() != names.len() {
            return Ok(Some(names.into_iter().map(|n| (n, None)).collect()));
        }
        Ok(Some(names.into_iter().zip(sources).collect()))
    }
}

/// Each column of table `name` (an engine name) as a result column's
/// source, the table named `qualifier` in the statement.
fn table_sources(
    name: &str,
    meta: &TableMeta,
    qualifier: &str,
) -> Option<Vec<super::super::ColumnSource>> {
    let (db, table) = split_name(name)?;
    let default = meta.options.default_collation();
    Some(
        meta.columns
            .iter()
            .map(|spec| super::super::ColumnSource {
                db: db.clone(),
                table: qualifier.to_string(),
                org_table: table.clone(),
                spec: spec.clone(),
                collation: spec.collation.unwrap_or(default),
            })
            .collect(),
    )
}

/// The table column each result column of a SELECT is, where it is one
/// (`*`'s columns, and bare column names); empty when the statement's
/// sources are not known.
fn result_sources(post: &SelectPost) -> Vec<Option<super::super::ColumnSource>> {
    let Some(sources) = &post.sources else {
        return Vec::new();
    };
    let cols = Columns {
        names: &post.names,
        collations: post.collations.as_deref(),
        table: post.table.as_deref(),
        clause: "field list",
        join: post.join.as_ref(),
    };
    let mut out = Vec::new();
    for item in &post.sel.items {
        match item {
            SelectItem::Star(q) => match star_columns(post, q.as_deref()) {
                Ok(Some(cs)) => out.extend(cs.iter().map(|&i| sources.get(i).cloned())),
                Ok(None) => out.extend(sources.iter().cloned().map(Some)),
                // The statement fails on it later.
                Err(_) => return Vec::new(),
            },
            SelectItem::Expr {
                expr: Expr::Column { table, name },
                ..
            } => out.push(
                cols.find(table.as_deref(), name)
                    .ok()
                    .and_then(|i| sources.get(i).cloned()),
            ),
            SelectItem::Expr { .. } => out.push(None),
        }
    }
    out
}

/// The post-processing of a SELECT over a table.
pub(super) fn post_for(sel: Select, meta: &TableMeta, table: &str) -> SelectPost {
    SelectPost {
        sel,
        names: meta.columns.iter().map(|c| c.name.clone()).collect(),
        table: Some(table.to_string()),
        shapes: schema::Shape::of_all(meta),
        collations: Some(meta.collations()),
        join: None,
        star: None,
        sources: None,
    }
}

/// Compares two sort keys by `spec`'s collations and directions (ORDER
/// BY, GROUP BY).
pub(super) fn cmp_keys(a: &[Datum], b: &[Datum], spec: &[(Collation, bool)]) -> Ordering {
    for (i, (coll, desc)) in spec.iter().enumerate() {
        let o = a[i].sort_cmp_in(&b[i], *coll);
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// `rows` in the order of their `keys` (one per row) under `spec`; a
/// stable sort, so equal keys keep their order.
pub(super) fn sort_by_keys(
    rows: Vec<Vec<Datum>>,
    keys: &[Vec<Datum>],
    spec: &[(Collation, bool)],
) -> Vec<Vec<Datum>> {
    let mut idx: Vec<usize> = (0..rows.len()).collect();
    idx.sort_by(|&a, &b| cmp_keys(&keys[a], &keys[b], spec));
    let mut taken: Vec<Option<Vec<Datum>>> = rows.into_iter().map(Some).collect();
    idx.into_iter()
        .map(|i| taken[i].take().expect("each once"))
        .collect()
}

/// `e` with each bare column name that is a select-list alias replaced by
/// the aliased expression (HAVING may name aliases, as MySQL allows).
pub(super) fn with_aliases(e: &Expr, items: &[SelectItem]) -> Expr {
    let alias_of = |name: &str| {
        items.iter().find_map(|i| match i {
            SelectItem::Expr {
                expr,
                alias: Some(a),
                ..
            } if a.eq_ignore_ascii_case(name) => Some(expr.clone()),
            _ => None,
        })
    };
    let done: Result<Expr, std::convert::Infallible> = e.rewrite(&mut |x| {
        Ok(match x {
            Expr::Column { table: None, name } => alias_of(name),
            _ => None,
        })
    });
    match done {
        Ok(e) => e,
        Err(never) => match never {},
    }
}

/// How a GROUP BY item is named in an error: its select-list alias or
/// text when it is one of the items, else a placeholder.
pub(super) fn expr_text(e: &Expr, items: &[SelectItem]) -> String {
    items
        .iter()
        .find_map(|i| match i {
            SelectItem::Expr { expr, text, alias } if expr == e => {
                Some(alias.clone().unwrap_or_else(|| text.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| "group function".into())
}

pub(super) fn to_datums(shapes: &[schema::Shape], rows: Vec<Vec<Value>>) -> Vec<Vec<Datum>> {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .enumerate()
                .map(|(i, v)| match shapes.get(i) {
                    Some(shape) => shape.read(v),
                    None => Datum::from_value(v),
                })
                .collect()
        })
        .collect()
}
