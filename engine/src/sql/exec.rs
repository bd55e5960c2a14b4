//! Running statements: planning them onto the engine's requests and
//! driving those requests one at a time, so a lock wait suspends the
//! statement where it is.

use super::ast::*;
use super::error::{SqlError, Warning};
use super::eval::{self, Columns};
use super::schema::{self, TableMeta};
use super::value::Datum;
use super::{engine_name, split_name, ConnId, Outcome, Reply, Server};
use crate::handler::{RangeBound, Request, Response, Step};
use crate::record::collation::Collation;
use crate::record::{ColumnType, Value};
use std::cmp::Ordering;
use std::collections::VecDeque;

/// A statement that is blocked in the engine.
#[derive(Debug)]
pub(super) struct Running {
    prog: Prog,
}

enum Prog {
    /// One request; `then` makes its response the reply.
    Single { then: Then },
    /// A row-changing statement inside a statement scope.
    Change(Box<Change>),
    /// A DDL statement waiting for its table lock: the rest of it.
    Ddl(DdlWork),
}

impl std::fmt::Debug for Prog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Prog::Single { then } => f.debug_struct("Single").field("then", then).finish(),
            Prog::Change(ch) => f.debug_tuple("Change").field(ch).finish(),
            Prog::Ddl(_) => f.write_str("Ddl"),
        }
    }
}

/// The rest of a DDL statement once its table lock request is over:
/// given `Ok` when the connection's transaction holds the lock, or the
/// request's error (1205, 1213, 1146), which the statement reports in its
/// own way (OPTIMIZE makes a row of it).
type DdlWork = Box<dyn FnOnce(&mut Server, ConnId, R<()>) -> R<Outcome>>;

/// What a statement of several DDL steps does with one step's result
/// (OPTIMIZE makes a row of it, then goes on to the next table).
type DdlThen = Box<dyn FnOnce(&mut Server, ConnId, R<Outcome>) -> R<Outcome>>;

/// The reply a statement of several DDL steps makes after its last one.
type DdlFinish = Box<dyn FnOnce(&mut Server, ConnId) -> R<Outcome>>;

#[derive(Debug)]
enum Then {
    Ok,
    Select(Box<SelectPost>),
}

/// What a row-changing statement does with the rows its read returned.
#[derive(Debug)]
enum ChangePlan {
    /// The inserts are queued already.
    Insert,
    /// INSERT ... SELECT: the read's rows, selected, go into `target`.
    InsertSelect {
        target: String,
        columns: Option<Vec<String>>,
        post: Box<SelectPost>,
    },
    /// UPDATE.
    Update {
        set: Vec<(usize, Expr)>,
        post: Box<SelectPost>,
    },
    /// DELETE.
    Delete { post: Box<SelectPost> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Awaiting {
    Read,
    /// A row a semi-consistent read left unlocked, read again with its
    /// lock.
    Relock,
    Write,
    End,
}

#[derive(Debug)]
struct Change {
    table: String,
    read: Option<Request>,
    plan: ChangePlan,
    /// Locking reads of the rows a semi-consistent read matched unlocked,
    /// made before the writes.
    relock: VecDeque<Request>,
    queue: VecDeque<Request>,
    awaiting: Awaiting,
    affected: u64,
    matched: u64,
    records: u64,
    kind: ChangeKind,
    /// The engine's lock id when the statement began: READ COMMITTED
    /// releases the locks it took since on rows its WHERE rejects.
    lock_mark: crate::lock::LockId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChangeKind {
    Insert,
    Update,
    Delete,
}

/// A SELECT's work after the engine's read: filter, aggregate or project,
/// order, distinct, limit.
#[derive(Debug, Clone)]
pub(super) struct SelectPost {
    pub sel: Select,
    /// The source's column names.
    pub names: Vec<String>,
    /// The name a qualified column must use.
    pub table: Option<String>,
    /// Source columns whose trailing spaces are removed (CHAR).
    pub char_cols: Vec<bool>,
    /// The source columns' collations; `None` for the server's own rows.
    pub collations: Option<Vec<Collation>>,
}

type R<T> = Result<T, SqlError>;

impl Server {
    /// The database a connection's statement means.
    pub(super) fn db_of(&self, c: ConnId, t: &TableName) -> R<String> {
        match &t.db {
            Some(d) => Ok(d.clone()),
            None => self
                .conn(c)
                .db
                .clone()
                .ok_or_else(|| SqlError::new(1046, "No database selected")),
        }
    }

    /// The engine name and meta of an existing table.
    pub(super) fn resolve(&self, c: ConnId, t: &TableName) -> R<(String, TableMeta)> {
        let db = self.db_of(c, t)?;
        let name = self.find_table(&db, &t.name);
        match name.and_then(|n| self.metas.get(&n).map(|m| (n, m.clone()))) {
            Some(x) => Ok(x),
            None => Err(SqlError::no_such_table(&db, &t.name)),
        }
    }

    /// The engine name of `db`.`table`, matched without regard to case.
    pub(super) fn find_table(&self, db: &str, table: &str) -> Option<String> {
        let want = engine_name(db, table);
        self.metas
            .keys()
            .find(|k| k.eq_ignore_ascii_case(&want))
            .cloned()
    }

    fn engine_err(&self, c: ConnId, e: &crate::Error) -> SqlError {
        let db = self
            .conn(c)
            .db
            .clone()
            .unwrap_or_else(|| super::DEFAULT_DB.into());
        let mut err = SqlError::from_engine(e, &db);
        // Engine names carry the database: show them as MySQL would.
        if let crate::Error::NoSuchTable(n) | crate::Error::TableExists(n) = e {
            if let Some((d, t)) = split_name(n) {
                err = if matches!(e, crate::Error::NoSuchTable(_)) {
                    SqlError::no_such_table(d, t)
                } else {
                    SqlError::new(1050, format!("Table '{t}' already exists"))
                };
            }
        }
        err
    }

    pub(super) fn run(&mut self, c: ConnId, stmt: Stmt) -> Outcome {
        match self.run_inner(c, stmt) {
            Ok(o) => o,
            Err(e) => Outcome::Done(Reply::Error(e)),
        }
    }

    fn run_inner(&mut self, c: ConnId, stmt: Stmt) -> R<Outcome> {
        let ok = || {
            Outcome::Done(Reply::Ok {
                affected: 0,
                info: None,
                warnings: 0,
            })
        };
        match stmt {
            Stmt::Begin => Ok(self.single(c, Request::Begin, Then::Ok)),
            Stmt::Commit => Ok(self.single(c, Request::Commit, Then::Ok)),
            Stmt::Rollback => Ok(self.single(c, Request::Rollback, Then::Ok)),
            Stmt::Savepoint(n) => Ok(self.single(c, Request::Savepoint(n), Then::Ok)),
            Stmt::RollbackTo(n) => Ok(self.single(c, Request::RollbackToSavepoint(n), Then::Ok)),
            Stmt::Release(n) => Ok(self.single(c, Request::ReleaseSavepoint(n), Then::Ok)),
            Stmt::SetIsolation(scope, iso) => {
                if scope == Some(Scope::Global) {
                    self.globals.isolation = iso;
                    return Ok(ok());
                }
                Ok(self.single(c, Request::SetIsolation(iso), Then::Ok))
            }
            Stmt::Set(items) => {
                for (scope, name, value) in items {
                    self.set_variable(c, scope, &name, &value)?;
                }
                Ok(ok())
            }
            Stmt::Use(db) => {
                if !self.database_exists(&db) {
                    return Err(SqlError::new(1049, format!("Unknown database '{db}'")));
                }
                let canon = self.canonical_db(&db);
                self.conn_mut(c).db = Some(canon);
                Ok(ok())
            }
            Stmt::Show(s) => Ok(Outcome::Done(self.show(c, s)?)),
            Stmt::Select(sel) => self.select(c, sel),
            Stmt::Insert {
                table,
                columns,
                source,
            } => self.insert(c, table, columns, source),
            Stmt::Update {
                table,
                set,
                filter,
                order_by,
                limit,
            } => self.update(c, table, set, filter, order_by, limit),
            Stmt::Delete {
                table,
                filter,
                order_by,
                limit,
            } => self.delete(c, table, filter, order_by, limit),
            ddl => {
                self.implicit_commit(c)?;
                self.ddl(c, ddl)
            }
        }
    }

    /// The name a database was created with.
    fn canonical_db(&self, db: &str) -> String {
        self.engine
            .table_names()
            .iter()
            .filter_map(|n| split_name(n))
            .find(|(d, t)| t.is_empty() && d.eq_ignore_ascii_case(db))
            .map_or(db.to_string(), |(d, _)| d.to_string())
    }

    /// DDL commits the open transaction first, as MySQL does.
    pub(super) fn implicit_commit(&mut self, c: ConnId) -> R<()> {
        let s = self.conn(c).session;
        if !self.engine.in_transaction(s) {
            return Ok(());
        }
        let mut step = self.engine.execute(s, Request::Commit);
        // Under group commit the commit waits for a sync, which the next
        // resume makes.
        while let Ok(Step::Waiting) = step {
            step = self.engine.resume(s);
        }
        step.map(|_| ()).map_err(|e| self.engine_err(c, &e))
    }

    fn single(&mut self, c: ConnId, req: Request, then: Then) -> Outcome {
        let s = self.conn(c).session;
        let step = self.engine.execute(s, req);
        self.single_result(c, step, then)
    }

    fn single_result(&mut self, c: ConnId, step: crate::Result<Step>, then: Then) -> Outcome {
        match step {
            Err(e) => Outcome::Done(Reply::Error(self.engine_err(c, &e))),
            Ok(Step::Waiting) => {
                if matches!(&then, Then::Select(p) if p.sel.wait == Wait::NoWait) {
                    let s = self.conn(c).session;
                    return Outcome::Done(Reply::Error(match self.engine.cancel_wait(s) {
                        Ok(()) => SqlError::new(
                            3572,
                            "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.",
                        ),
                        Err(e) => self.engine_err(c, &e),
                    }));
                }
                self.conn_mut(c).running = Some(Running {
                    prog: Prog::Single { then },
                });
                Outcome::Blocked
            }
            Ok(Step::Done(resp)) => match then {
                Then::Ok => Outcome::Done(Reply::Ok {
                    affected: match resp {
                        Response::Affected(n) => n,
                        _ => 0,
                    },
                    info: None,
                    warnings: 0,
                }),
                Then::Select(post) => {
                    let rows = match resp {
                        Response::Row(r) => r.into_iter().collect(),
                        Response::Rows(r) => r,
                        _ => Vec::new(),
                    };
                    let rows = to_datums(&post.char_cols, rows);
                    match self.finish_select(c, &post, rows) {
                        Ok(r) => Outcome::Done(r),
                        Err(e) => Outcome::Done(Reply::Error(e)),
                    }
                }
            },
        }
    }

    pub(super) fn continue_running(&mut self, c: ConnId, running: Running) -> Outcome {
        let s = self.conn(c).session;
        let step = self.engine.resume(s);
        match running.prog {
            Prog::Single { then } => self.single_result(c, step, then),
            Prog::Change(ch) => self.drive_change(c, ch, Some(step)),
            Prog::Ddl(work) => {
                let out = match step {
                    Ok(Step::Waiting) => {
                        self.conn_mut(c).running = Some(Running {
                            prog: Prog::Ddl(work),
                        });
                        return Outcome::Blocked;
                    }
                    Ok(Step::Done(_)) => self.ddl_work(c, work, Ok(())),
                    Err(e) => {
                        let e = self.engine_err(c, &e);
                        self.ddl_work(c, work, Err(e))
                    }
                };
                out.unwrap_or_else(|e| Outcome::Done(Reply::Error(e)))
            }
        }
    }

    /// Runs `work`, the rest of a DDL statement, under the table lock of
    /// `table` (X if `exclusive`, else S) in the connection's transaction,
    /// as InnoDB's DDL takes it before it changes the table
    /// (`row_merge_lock_table`): at once if the lock can be had, else
    /// once the lock wait is over (the statement blocked until then, like
    /// a row statement waiting for a row lock, and INNODB_LOCK_WAITS shows
    /// the wait).
    pub(super) fn under_table_lock(
        &mut self,
        c: ConnId,
        table: &str,
        exclusive: bool,
        work: DdlWork,
    ) -> R<Outcome> {
        let s = self.conn(c).session;
        let req = Request::LockTable {
            table: table.to_string(),
            exclusive,
        };
        match self.engine.execute(s, req) {
            Ok(Step::Done(_)) => self.ddl_work(c, work, Ok(())),
            Ok(Step::Waiting) => {
                self.conn_mut(c).running = Some(Running {
                    prog: Prog::Ddl(work),
                });
                Ok(Outcome::Blocked)
            }
            Err(e) => {
                let e = self.engine_err(c, &e);
                // Nothing is held: a failed request ends the transaction
                // it began.
                self.ddl_work(c, work, Err(e))
            }
        }
    }

    /// Runs `ddl`, one of the engine's DDL functions, on `table` in the
    /// connection's session, whose transaction holds the table lock
    /// ([`Server::under_table_lock`]): it runs at once.
    fn locked_ddl<T>(
        &mut self,
        c: ConnId,
        table: &str,
        ddl: impl FnOnce(&mut crate::Engine, crate::SessionId) -> crate::Result<crate::DdlStep<T>>,
    ) -> R<T> {
        let s = self.conn(c).session;
        let r = ddl(&mut self.engine, s).and_then(|step| step.done(table));
        r.map_err(|e| self.engine_err(c, &e))
    }

    /// Runs the rest of a DDL statement, then commits the transaction that
    /// held its lock (MySQL commits at the end of every DDL), unless the
    /// rest is blocked in turn (a statement of several tables waiting for
    /// the next one's lock).
    fn ddl_work(&mut self, c: ConnId, work: DdlWork, locked: R<()>) -> R<Outcome> {
        let out = work(self, c, locked);
        if matches!(out, Ok(Outcome::Blocked)) {
            return out;
        }
        let ended = self.implicit_commit(c);
        let out = out?;
        ended.map(|_| out)
    }

    // ---- SELECT ----

    fn select(&mut self, c: ConnId, sel: Select) -> R<Outcome> {
        let Some(from) = sel.from.clone() else {
            // SELECT without FROM: one row of constants.
            let post = SelectPost {
                sel,
                names: Vec::new(),
                table: None,
                char_cols: Vec::new(),
                collations: None,
            };
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
                char_cols: Vec::new(),
                collations: None,
            };
            return Ok(Outcome::Done(self.finish_select(c, &post, rows)?));
        }
        let (name, meta) = self.resolve(c, &from)?;
        let post = post_for(sel, &meta, &from.name);
        let access = self.access(c, &name, &meta, post.sel.filter.as_ref())?;
        let sel = &post.sel;
        // The engine may stop early only when nothing after it drops or
        // reorders rows.
        let limit = match (
            &sel.filter,
            sel.order_by.is_empty(),
            sel.distinct,
            &sel.limit,
        ) {
            (None, true, false, Some((off, n)))
                if !sel.items.iter().any(
                    |i| matches!(i, SelectItem::Expr { expr, .. } if eval::has_aggregate(expr)),
                ) =>
            {
                usize::try_from(off.saturating_add(*n)).ok()
            }
            _ => None,
        };
        let read = access.request(&name, limit);
        let req = match sel.lock {
            LockClause::None => read,
            l if sel.wait == Wait::SkipLocked => {
                // SKIP LOCKED reads a range: a point read becomes the range
                // of its one key.
                let read = match read {
                    Request::Get { table, key } => Request::Scan {
                        table,
                        index: None,
                        low: RangeBound::Included(key.clone()),
                        high: RangeBound::Included(key),
                        reverse: false,
                        limit: None,
                    },
                    r => r,
                };
                Request::SkipLocked {
                    read: Box::new(read),
                    exclusive: l == LockClause::Update,
                }
            }
            l => Request::Locking {
                read: Box::new(read),
                exclusive: l == LockClause::Update,
            },
        };
        Ok(self.single(c, req, Then::Select(Box::new(post))))
    }

    /// Filter, aggregate or project, order, distinct and limit.
    pub(super) fn finish_select(
        &self,
        c: ConnId,
        post: &SelectPost,
        rows: Vec<Vec<Datum>>,
    ) -> R<Reply> {
        let sel = &post.sel;
        let vars = self.vars(c);
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: post.table.as_deref(),
            clause: "where clause",
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
        let mut names = Vec::new();
        for item in &sel.items {
            match item {
                SelectItem::Star => {
                    if post.table.is_none() {
                        return Err(SqlError::new(1096, "No tables used"));
                    }
                    names.extend(post.names.iter().cloned())
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
                for item in &sel.items {
                    match item {
                        SelectItem::Star if sel.group_by.is_empty() => return Err(SqlError::new(1140, "Mixing of GROUP columns (MIN(),MAX(),COUNT(),...) with no GROUP columns is illegal if there is no GROUP BY clause")),
                        SelectItem::Star => row.extend(g[0].iter().cloned()),
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
                for item in &sel.items {
                    match item {
                        SelectItem::Star => row.extend(r.iter().cloned()),
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
            for item in &sel.items {
                match item {
                    SelectItem::Star => colls.extend(cols.collations.into_iter().flatten()),
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
    fn sort_spec(
        &self,
        by: &[(Expr, bool)],
        items: &[SelectItem],
        cols: &eval::Columns<'_>,
    ) -> R<Vec<(Collation, bool)>> {
        by.iter()
            .map(|(e, desc)| Ok((eval::collation_of(self.order_expr(e, items)?, cols), *desc)))
            .collect()
    }

    fn order_expr<'a>(&self, e: &'a Expr, items: &'a [SelectItem]) -> R<&'a Expr> {
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

    /// MySQL's choice of index for a WHERE: the primary key if the
    /// condition bounds its first column, else the first secondary index
    /// whose first column it bounds, else a scan of the clustered index.
    fn access(&self, c: ConnId, name: &str, meta: &TableMeta, filter: Option<&Expr>) -> R<Access> {
        let t = self
            .engine
            .table(name)
            .map_err(|e| self.engine_err(c, &e))?;
        let def = &t.def;
        let mut conj = Vec::new();
        if let Some(f) = filter {
            conjuncts(f, &mut conj);
        }
        let vars = self.vars(c);
        let names: Vec<String> = meta.columns.iter().map(|c| c.name.clone()).collect();
        let mut candidates: Vec<(Option<String>, Vec<usize>)> = Vec::new();
        if !def.primary_key.is_empty() {
            candidates.push((None, def.primary_key.clone()));
        }
        for ix in &def.indexes {
            candidates.push((Some(ix.name.clone()), ix.columns.clone()));
        }
        for (index, cols) in candidates {
            let mut eq = Vec::new();
            for &col in &cols {
                match find_eq(&conj, &names, col, meta, &vars) {
                    Some(v) => eq.push(v),
                    None => break,
                }
            }
            if index.is_none() && eq.len() == cols.len() {
                return Ok(Access::Point(eq));
            }
            let (lo, hi) = if eq.len() < cols.len() {
                find_range(&conj, &names, cols[eq.len()], meta, &vars)
            } else {
                (None, None)
            };
            if eq.is_empty() && lo.is_none() && hi.is_none() {
                continue;
            }
            let bound = |b: Option<(Value, bool)>, eq: &Vec<Value>| match b {
                Some((v, incl)) => {
                    let mut k = eq.clone();
                    k.push(v);
                    if incl {
                        RangeBound::Included(k)
                    } else {
                        RangeBound::Excluded(k)
                    }
                }
                None if eq.is_empty() => RangeBound::Unbounded,
                None => RangeBound::Included(eq.clone()),
            };
            return Ok(Access::Range {
                index,
                low: bound(lo, &eq),
                high: bound(hi, &eq),
            });
        }
        Ok(Access::Range {
            index: None,
            low: RangeBound::Unbounded,
            high: RangeBound::Unbounded,
        })
    }

    // ---- INSERT, UPDATE, DELETE ----

    fn insert(
        &mut self,
        c: ConnId,
        table: TableName,
        columns: Option<Vec<String>>,
        source: InsertSource,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, &table)?;
        match source {
            InsertSource::Values(rows) => {
                let mut queue = VecDeque::new();
                for (i, r) in rows.iter().enumerate() {
                    let vars = self.vars(c);
                    let no_cols = Columns {
                        names: &[],
                        collations: None,
                        table: None,
                        clause: "field list",
                    };
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
                    let row = self.build_row(&name, &meta, columns.as_deref(), vals, i + 1)?;
                    queue.push_back(Request::Insert {
                        table: name.clone(),
                        row,
                    });
                }
                let n = queue.len() as u64;
                Ok(self.start_change(
                    c,
                    Change {
                        table: name,
                        read: None,
                        plan: ChangePlan::Insert,
                        relock: VecDeque::new(),
                        queue,
                        awaiting: Awaiting::Read,
                        affected: 0,
                        matched: 0,
                        records: n,
                        kind: ChangeKind::Insert,
                        lock_mark: 0,
                    },
                ))
            }
            InsertSource::Select(sel) => {
                let from = sel
                    .from
                    .clone()
                    .ok_or_else(|| SqlError::unsupported("INSERT ... SELECT without FROM"))?;
                let (src, src_meta) = self.resolve(c, &from)?;
                let post = post_for(*sel, &src_meta, &from.name);
                let access = self.access(c, &src, &src_meta, post.sel.filter.as_ref())?;
                // InnoDB reads INSERT ... SELECT's source with shared
                // next-key locks (innodb_locks_unsafe_for_binlog off).
                let read = Request::Locking {
                    read: Box::new(access.request(&src, None)),
                    exclusive: false,
                };
                Ok(self.start_change(
                    c,
                    Change {
                        table: name.clone(),
                        read: Some(read),
                        plan: ChangePlan::InsertSelect {
                            target: name,
                            columns,
                            post: Box::new(post),
                        },
                        relock: VecDeque::new(),
                        queue: VecDeque::new(),
                        awaiting: Awaiting::Read,
                        affected: 0,
                        matched: 0,
                        records: 0,
                        kind: ChangeKind::Insert,
                        lock_mark: 0,
                    },
                ))
            }
        }
    }

    /// One row for the engine: values for the named columns (`None`: the
    /// DEFAULT keyword), defaults and AUTO_INCREMENT for the others.
    fn build_row(
        &mut self,
        name: &str,
        meta: &TableMeta,
        columns: Option<&[String]>,
        vals: Vec<Option<Datum>>,
        n: usize,
    ) -> R<Vec<Value>> {
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
                let next = self.autoinc.entry(name.to_string()).or_insert(1);
                let v = *next;
                let (_, hi) = col.ty.int_range().expect("an integer column");
                if i128::from(v) > hi {
                    return Err(SqlError::new(
                        1467,
                        "Failed to read auto-increment value from storage engine",
                    ));
                }
                *next += 1;
                Datum::UInt(v)
            } else {
                match v {
                    Some(v) => v,
                    None => match &col.default {
                        Some(d) => d.clone(),
                        None if !col.not_null => Datum::Null,
                        None => {
                            return Err(SqlError::new(
                                1364,
                                format!("Field '{}' doesn't have a default value", col.name),
                            ))
                        }
                    },
                }
            };
            if v.is_null() && col.not_null {
                return Err(SqlError::new(
                    1048,
                    format!("Column '{}' cannot be null", col.name),
                ));
            }
            let v = schema::coerce(col.ty, &v, &col.name)?;
            if col.auto_increment {
                if let Some(x) = v.as_i128().and_then(|x| u64::try_from(x).ok()) {
                    let next = self.autoinc.entry(name.to_string()).or_insert(1);
                    if x >= *next {
                        *next = x.saturating_add(1);
                    }
                }
            }
            row.push(v.to_value());
        }
        Ok(row)
    }

    fn update(
        &mut self,
        c: ConnId,
        table: TableName,
        set: Vec<(String, Expr)>,
        filter: Option<Expr>,
        order_by: Vec<(Expr, bool)>,
        limit: Option<u64>,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, &table)?;
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

    fn delete(
        &mut self,
        c: ConnId,
        table: TableName,
        filter: Option<Expr>,
        order_by: Vec<(Expr, bool)>,
        limit: Option<u64>,
    ) -> R<Outcome> {
        let (name, meta) = self.resolve(c, &table)?;
        self.row_change(c, &table, name, meta, filter, order_by, limit, None)
    }

    #[allow(clippy::too_many_arguments)]
    fn row_change(
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
            items: vec![SelectItem::Star],
            from: Some(table.clone()),
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
        };
        if let Some(f) = &post.sel.filter {
            eval::check_names(f, &cols)?;
        }
        for (_, e) in set.iter().flatten() {
            eval::check_names(e, &cols.in_clause("field list"))?;
        }
        let access = self.access(c, &name, &meta, post.sel.filter.as_ref())?;
        let inner = access.request(&name, None);
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
        Ok(self.start_change(
            c,
            Change {
                table: name,
                read: Some(read),
                plan,
                relock: VecDeque::new(),
                queue: VecDeque::new(),
                awaiting: Awaiting::Read,
                affected: 0,
                matched: 0,
                records: 0,
                kind,
                lock_mark: 0,
            },
        ))
    }

    fn start_change(&mut self, c: ConnId, mut ch: Change) -> Outcome {
        let s = self.conn(c).session;
        if let Err(e) = self.engine.begin_statement(s) {
            return Outcome::Done(Reply::Error(self.engine_err(c, &e)));
        }
        ch.lock_mark = self.engine.lock_mark();
        self.drive_change(c, Box::new(ch), None)
    }

    fn drive_change(
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
                    Err(e) => {
                        let err = self.engine_err(c, &e);
                        return self.fail_change(c, &ch, err);
                    }
                    Ok(Step::Done(resp)) => match ch.awaiting {
                        Awaiting::Read => {
                            let rows = match resp {
                                Response::Rows(r) => r,
                                Response::Row(r) => r.into_iter().collect(),
                                _ => Vec::new(),
                            };
                            if let Err(e) = self.plan_writes(c, &mut ch, rows) {
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
                                        "Records: {}  Duplicates: 0  Warnings: {{warnings}}",
                                        ch.records
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
                pending = Some(self.engine.execute(s, read));
            } else if let Some(r) = ch.relock.pop_front() {
                ch.awaiting = Awaiting::Relock;
                pending = Some(self.engine.execute(s, r));
            } else if let Some(w) = ch.queue.pop_front() {
                ch.awaiting = Awaiting::Write;
                pending = Some(self.engine.execute(s, w));
            } else {
                ch.awaiting = Awaiting::End;
                pending = Some(self.engine.end_statement(s, true));
            }
        }
    }

    fn fail_change(&mut self, c: ConnId, ch: &Change, e: SqlError) -> Outcome {
        let s = self.conn(c).session;
        if ch.awaiting != Awaiting::End {
            // Undo the statement; if that fails too the engine has
            // stopped, and the first error is the one to report.
            let _ = self.engine.end_statement(s, false);
        }
        Outcome::Done(Reply::Error(e))
    }

    /// The writes a read's rows call for.
    fn plan_writes(&mut self, c: ConnId, ch: &mut Change, rows: Vec<Vec<Value>>) -> R<()> {
        let table = ch.table.clone();
        match &ch.plan {
            ChangePlan::Insert => {}
            ChangePlan::InsertSelect {
                target,
                columns,
                post,
            } => {
                let (target, columns, post) = (target.clone(), columns.clone(), post.clone());
                let rows = to_datums(&post.char_cols, rows);
                let Reply::Rows { rows, .. } = self.finish_select(c, &post, rows)? else {
                    unreachable!("a select gives rows")
                };
                let meta = self.metas[&target].clone();
                for (i, r) in rows.into_iter().enumerate() {
                    let row = self.build_row(
                        &target,
                        &meta,
                        columns.as_deref(),
                        r.into_iter().map(Some).collect(),
                        i + 1,
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
                    let d = to_datums(&post.char_cols, vec![v.clone()]).remove(0);
                    if self.row_matches(c, &post, &d)? {
                        let key = self.primary_key_of(c, &table, &v)?;
                        ch.relock.push_back(Request::Locking {
                            read: Box::new(Request::Get {
                                table: table.clone(),
                                key,
                            }),
                            exclusive: true,
                        });
                    }
                }
                let rows = locked;
                let src = to_datums(&post.char_cols, rows.clone());
                // READ COMMITTED lets go of the rows the WHERE rejects
                // (the engine does nothing under the stronger levels).
                let mut rejected = Vec::new();
                for (d, v) in src.iter().zip(&rows) {
                    if !self.row_matches(c, &post, d)? {
                        rejected.push(v.clone());
                    }
                }
                if !rejected.is_empty() {
                    self.unlock(c, &table, rejected, ch.lock_mark)?;
                }
                // Filter and order the rows as a SELECT * would.
                let Reply::Rows { rows: matched, .. } = self.finish_select(c, &post, src)? else {
                    unreachable!("a select gives rows")
                };
                ch.matched = matched.len() as u64;
                for r in matched {
                    self.queue_row_change(c, ch, r)?;
                }
            }
        }
        Ok(())
    }

    /// Whether a row (as a SELECT * of the statement's table reads it)
    /// passes the statement's WHERE.
    fn row_matches(&self, c: ConnId, post: &SelectPost, row: &[Datum]) -> R<bool> {
        let Some(f) = &post.sel.filter else {
            return Ok(true);
        };
        let vars = self.vars(c);
        let cols = Columns {
            names: &post.names,
            collations: post.collations.as_deref(),
            table: post.table.as_deref(),
            clause: "where clause",
        };
        Ok(eval::eval(f, Some(row), &cols, &vars)?.truth() == Some(true))
    }

    /// The key the engine addresses a row by: its primary key values, or
    /// for a table without one the row id the row carries after its
    /// columns ([`with_row_refs`](Self::with_row_refs)).
    fn primary_key_of(&self, c: ConnId, table: &str, row: &[Value]) -> R<Vec<Value>> {
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
    fn with_row_refs(
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
    fn unlock(
        &mut self,
        c: ConnId,
        table: &str,
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
            .unlock_rows(s, table, &rows, &ids, mark)
            .map_err(|e| self.engine_err(c, &e))
    }

    /// The row a semi-consistent read left unlocked, read again with its
    /// lock (`row`: its newest version, or `None` if it is gone): changed
    /// if the WHERE still matches it, otherwise let go again.
    fn relocked(&mut self, c: ConnId, ch: &mut Change, row: Option<Vec<Value>>) -> R<()> {
        let Some(v) = row else {
            return Ok(());
        };
        let table = ch.table.clone();
        let v = self.with_row_refs(c, &table, vec![v])?.remove(0);
        let (ChangePlan::Update { post, .. } | ChangePlan::Delete { post }) = &ch.plan else {
            return Ok(());
        };
        let post = post.clone();
        let d = to_datums(&post.char_cols, vec![v.clone()]).remove(0);
        if self.row_matches(c, &post, &d)? {
            ch.matched += 1;
            return self.queue_row_change(c, ch, d);
        }
        self.unlock(c, &table, vec![v], ch.lock_mark)
    }

    /// Queues the write an UPDATE or DELETE makes of a row it matched.
    fn queue_row_change(&mut self, c: ConnId, ch: &mut Change, r: Vec<Datum>) -> R<()> {
        let table = ch.table.clone();
        let (set, post) = match &ch.plan {
            ChangePlan::Update { set, post } => (Some(set.clone()), post.clone()),
            ChangePlan::Delete { post } => (None, post.clone()),
            _ => return Ok(()),
        };
        let meta = self.metas[&table].clone();
        let row: Vec<Value> = r.iter().map(Datum::to_value).collect();
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
        };
        let mut changes = Vec::new();
        for (i, e) in &set {
            let col = &meta.columns[*i];
            let v = match e {
                Expr::Call { name, args, .. } if name == "default" && args.is_empty() => {
                    col.default.clone().unwrap_or(Datum::Null)
                }
                e => eval::eval(e, Some(&r), &cols, &vars)?,
            };
            if v.is_null() && col.not_null {
                return Err(SqlError::new(
                    1048,
                    format!("Column '{}' cannot be null", col.name),
                ));
            }
            let v = schema::coerce(col.ty, &v, &col.name)?;
            changes.push((col.name.clone(), v.to_value()));
        }
        ch.queue.push_back(Request::Update {
            table,
            key,
            set: changes,
        });
        Ok(())
    }

    /// Reads the largest value of each AUTO_INCREMENT column, as InnoDB
    /// does the first time a table is used (`row_search_max_autoinc`).
    pub(super) fn init_autoinc(&mut self, name: &str) -> R<()> {
        let meta = &self.metas[name];
        let Some(col) = meta.columns.iter().position(|c| c.auto_increment) else {
            return Ok(());
        };
        let s = self.internal;
        let req = Request::Scan {
            table: name.to_string(),
            index: None,
            low: RangeBound::Unbounded,
            high: RangeBound::Unbounded,
            reverse: false,
            limit: None,
        };
        let rows = match self.engine.execute(s, req) {
            Ok(Step::Done(Response::Rows(r))) => r,
            Ok(_) => Vec::new(),
            Err(e) => return Err(SqlError::from_engine(&e, super::DEFAULT_DB)),
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

    fn ddl(&mut self, c: ConnId, stmt: Stmt) -> R<Outcome> {
        let ok = |warnings: Vec<Warning>, me: &mut Server| {
            let n = warnings.len();
            for w in warnings {
                me.warn(c, w);
            }
            Outcome::Done(Reply::Ok {
                affected: 0,
                info: None,
                warnings: n,
            })
        };
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
                Ok(ok(vec![], self))
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
                tables.push_back(format!("{canon}$"));
                self.drop_tables(
                    c,
                    tables,
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
                let (def, meta) = schema::build(&ct, &name, format, &mut warnings)?;
                self.engine
                    .create_table(def)
                    .map_err(|e| self.engine_err(c, &e))?;
                self.metas.insert(name.clone(), meta);
                let start = ct.options.auto_increment.unwrap_or(1).max(1);
                if self.metas[&name].columns.iter().any(|c| c.auto_increment) {
                    self.autoinc.insert(name, start);
                }
                Ok(ok(warnings, self))
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
                self.engine
                    .create_table(def)
                    .map_err(|e| self.engine_err(c, &e))?;
                if meta.columns.iter().any(|c| c.auto_increment) {
                    self.autoinc.insert(new.clone(), 1);
                }
                self.metas.insert(new, meta);
                Ok(ok(vec![], self))
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
                let primary = ops.iter().any(|op| {
                    matches!(op, AlterOp::DropPrimary)
                        || matches!(op, AlterOp::AddIndex(ix) if ix.primary)
                });
                let copy = algorithm == Some(Algorithm::Copy)
                    || options != TableOptions::default()
                    || primary;
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
                        AlterOp::DropPrimary => unreachable!("a primary key change copies"),
                    }
                }
                self.alter_indexes(c, &table, adds, drops)
            }
            Stmt::Truncate(t) => {
                let (name, meta) = self.resolve(c, &t)?;
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
            other => unreachable!("not a DDL statement: {other:?}"),
        }
    }
}

impl Server {
    /// ALTER TABLE by copying the table into its new definition (new
    /// options, a primary key change, ALGORITHM=COPY, OPTIMIZE).
    fn alter_copy(
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
    fn alter_copy_then(
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
    fn alter_copy_plan(
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
    fn key_positions(
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
    fn new_index_def(
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
    fn alter_indexes(
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

    /// An OK reply with `warnings` given to the connection.
    fn ok_with(&mut self, c: ConnId, warnings: Vec<Warning>) -> Outcome {
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
    fn drop_tables(
        &mut self,
        c: ConnId,
        mut rest: VecDeque<String>,
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
                srv.locked_ddl(c, &n, |e, s| e.drop_table(s, &n))?;
                srv.metas.remove(&n);
                srv.autoinc.remove(&n);
                srv.implicit_commit(c)?;
                srv.drop_tables(c, rest, finish)
            }),
        )
    }

    /// OPTIMIZE TABLE: InnoDB has none of its own, so MySQL recreates each
    /// table by copying, and says so; one table at a time, its rows of the
    /// result added to `rows`.
    fn optimize(
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
}

impl Server {
    /// A DDL statement that finds what it would make already there (or
    /// what it would drop missing): under IF [NOT] EXISTS (`quiet`) a note
    /// and no error, as MySQL does; otherwise the error.
    fn ok_or_fail(&mut self, c: ConnId, quiet: bool, code: u16, message: String) -> R<Outcome> {
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
fn check_name(name: &str, code: u16, what: &str) -> R<()> {
    if name.len() > 64 {
        return Err(SqlError::new(
            1059,
            format!("Identifier name '{name}' is too long"),
        ));
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(SqlError::new(code, format!("{what} '{name}'")));
    }
    Ok(())
}

/// An access path.
#[derive(Debug)]
enum Access {
    /// The whole primary key by equality.
    Point(Vec<Value>),
    /// A range of an index (`None`: the clustered index).
    Range {
        index: Option<String>,
        low: RangeBound,
        high: RangeBound,
    },
}

impl Access {
    fn request(&self, table: &str, limit: Option<usize>) -> Request {
        match self {
            Access::Point(key) => Request::Get {
                table: table.to_string(),
                key: key.clone(),
            },
            Access::Range { index, low, high } => Request::Scan {
                table: table.to_string(),
                index: index.clone(),
                low: low.clone(),
                high: high.clone(),
                reverse: false,
                limit,
            },
        }
    }
}

fn conjuncts<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        e => out.push(e),
    }
}

/// The column position an expression names, if it is a bare column.
fn column_of(e: &Expr, names: &[String]) -> Option<usize> {
    match e {
        Expr::Column { name, .. } => names.iter().position(|n| n.eq_ignore_ascii_case(name)),
        _ => None,
    }
}

/// A constant side, converted to the column's engine value exactly (a
/// value that would round or does not fit is no bound: the rows are found
/// by the filter instead).
fn const_for(e: &Expr, col: usize, meta: &TableMeta, vars: &dyn eval::Vars) -> Option<Value> {
    if !is_const(e) {
        return None;
    }
    let no_cols = Columns {
        names: &[],
        collations: None,
        table: None,
        clause: "",
    };
    let d = eval::eval(e, None, &no_cols, vars).ok()?;
    if d.is_null() {
        return None;
    }
    let ty = meta.columns[col].ty;
    match (ty.engine_type(), &d) {
        (ColumnType::Int { .. } | ColumnType::BigInt { .. }, Datum::Int(_) | Datum::UInt(_)) => {}
        (ColumnType::Char(_) | ColumnType::VarChar(_), Datum::Str(_)) => {}
        _ => return None,
    }
    schema::coerce(ty, &d, "").ok().map(|d| d.to_value())
}

fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Var { .. } => true,
        Expr::Unary(_, x) => is_const(x),
        Expr::Binary(_, a, b) => is_const(a) && is_const(b),
        _ => false,
    }
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// `col = const` among the conjuncts.
fn find_eq(
    conj: &[&Expr],
    names: &[String],
    col: usize,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> Option<Value> {
    for e in conj {
        if let Expr::Binary(BinOp::Eq, a, b) = e {
            for (x, y) in [(a, b), (b, a)] {
                if column_of(x, names) == Some(col) {
                    if let Some(v) = const_for(y, col, meta, vars) {
                        return Some(v);
                    }
                }
            }
        }
        if let Expr::In(x, list, false) = e {
            if list.len() == 1 && column_of(x, names) == Some(col) {
                if let Some(v) = const_for(&list[0], col, meta, vars) {
                    return Some(v);
                }
            }
        }
    }
    None
}

type Edge = Option<(Value, bool)>;

/// The tightest range the conjuncts put on `col` (bounds and whether
/// each is inclusive). Values compare as the column's stored forms do.
fn find_range(
    conj: &[&Expr],
    names: &[String],
    col: usize,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> (Edge, Edge) {
    let ty = meta.columns[col].ty.engine_type();
    // Bounds compare as the index orders them: in the column's collation.
    let coll = meta.columns[col].collation.unwrap_or(Collation::Binary);
    let key = |v: &Value| crate::record::to_stored(&ty, v, "").ok();
    let mut lo: Edge = None;
    let mut hi: Edge = None;
    let tighten = |edge: &mut Edge, v: Value, incl: bool, lower: bool| {
        let better = match edge {
            None => true,
            Some((cur, cur_incl)) => match (key(&v), key(cur)) {
                (Some(a), Some(b)) => {
                    let o = coll.compare(&a, &b);
                    (if lower {
                        o == Ordering::Greater
                    } else {
                        o == Ordering::Less
                    }) || (o == Ordering::Equal && *cur_incl && !incl)
                }
                _ => false,
            },
        };
        if better {
            *edge = Some((v, incl));
        }
    };
    for e in conj {
        match e {
            Expr::Binary(op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge), a, b) => {
                let (op, other) = if column_of(a, names) == Some(col) {
                    (*op, b)
                } else if column_of(b, names) == Some(col) {
                    (flip(*op), a)
                } else {
                    continue;
                };
                let Some(v) = const_for(other, col, meta, vars) else {
                    continue;
                };
                match op {
                    BinOp::Gt => tighten(&mut lo, v, false, true),
                    BinOp::Ge => tighten(&mut lo, v, true, true),
                    BinOp::Lt => tighten(&mut hi, v, false, false),
                    _ => tighten(&mut hi, v, true, false),
                }
            }
            Expr::Between(x, a, b, false) if column_of(x, names) == Some(col) => {
                if let Some(v) = const_for(a, col, meta, vars) {
                    tighten(&mut lo, v, true, true);
                }
                if let Some(v) = const_for(b, col, meta, vars) {
                    tighten(&mut hi, v, true, false);
                }
            }
            Expr::In(x, list, false) if column_of(x, names) == Some(col) => {
                // The span of the list; the filter picks the members.
                let vals: Option<Vec<Value>> =
                    list.iter().map(|e| const_for(e, col, meta, vars)).collect();
                if let Some(vals) = vals {
                    let mut keyed: Vec<(Vec<u8>, Value)> = vals
                        .into_iter()
                        .filter_map(|v| key(&v).map(|k| (k, v)))
                        .collect();
                    keyed.sort_by(|a, b| coll.compare(&a.0, &b.0));
                    if let (Some(first), Some(last)) =
                        (keyed.first().cloned(), keyed.last().cloned())
                    {
                        tighten(&mut lo, first.1, true, true);
                        tighten(&mut hi, last.1, true, false);
                    }
                }
            }
            _ => {}
        }
    }
    (lo, hi)
}

/// The post-processing of a SELECT over a table.
fn post_for(sel: Select, meta: &TableMeta, table: &str) -> SelectPost {
    SelectPost {
        sel,
        names: meta.columns.iter().map(|c| c.name.clone()).collect(),
        table: Some(table.to_string()),
        char_cols: meta
            .columns
            .iter()
            .map(|c| matches!(c.ty, SqlType::Char(_)))
            .collect(),
        collations: Some(meta.collations()),
    }
}

/// Compares two sort keys by `spec`'s collations and directions (ORDER
/// BY, GROUP BY).
fn cmp_keys(a: &[Datum], b: &[Datum], spec: &[(Collation, bool)]) -> Ordering {
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
fn sort_by_keys(
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
fn with_aliases(e: &Expr, items: &[SelectItem]) -> Expr {
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
    let go = |x: &Expr| Box::new(with_aliases(x, items));
    match e {
        Expr::Column { table: None, name } => alias_of(name).unwrap_or_else(|| e.clone()),
        Expr::Column { .. } | Expr::Lit(_) | Expr::Var { .. } => e.clone(),
        Expr::Unary(op, x) => Expr::Unary(*op, go(x)),
        Expr::IsNull(x, not) => Expr::IsNull(go(x), *not),
        Expr::Binary(op, a, b) => Expr::Binary(*op, go(a), go(b)),
        Expr::Like(a, b, not) => Expr::Like(go(a), go(b), *not),
        Expr::Between(a, b, c, not) => Expr::Between(go(a), go(b), go(c), *not),
        Expr::In(a, l, not) => Expr::In(
            go(a),
            l.iter().map(|x| with_aliases(x, items)).collect(),
            *not,
        ),
        Expr::Call {
            name,
            args,
            star,
            distinct,
        } => Expr::Call {
            name: name.clone(),
            args: args.iter().map(|x| with_aliases(x, items)).collect(),
            star: *star,
            distinct: *distinct,
        },
    }
}

/// How a GROUP BY item is named in an error: its select-list alias or
/// text when it is one of the items, else a placeholder.
fn expr_text(e: &Expr, items: &[SelectItem]) -> String {
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

fn to_datums(char_cols: &[bool], rows: Vec<Vec<Value>>) -> Vec<Vec<Datum>> {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .enumerate()
                .map(|(i, v)| match Datum::from_value(v) {
                    Datum::Str(mut b) if char_cols.get(i) == Some(&true) => {
                        while b.last() == Some(&b' ') {
                            b.pop();
                        }
                        Datum::Str(b)
                    }
                    d => d,
                })
                .collect()
        })
        .collect()
}
