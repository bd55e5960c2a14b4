//! Running statements: planning them onto the engine's requests and
//! driving those requests one at a time, so a lock wait suspends the
//! statement where it is.
//!
//! ```text
//!   mod.rs     dispatch (run), a blocked statement's continuation, DDL
//!              under its table lock, name resolution
//!   select.rs  SELECT: the read, then filter, group, order, distinct, limit
//!   plan.rs    the access path: index and key range from the WHERE
//!   change.rs  INSERT, REPLACE, UPDATE, DELETE: read, then write row by row
//!   ddl.rs     CREATE, DROP, TRUNCATE, RENAME, OPTIMIZE
//!   alter.rs   ALTER TABLE by copy, or by fast index creation
//!   checksum.rs CHECKSUM TABLE over the server's record format
//!   foreign.rs FOREIGN KEY clauses made into the engine's constraints
//! ```

use super::ast::*;
use super::error::{SqlError, Warning};
use super::eval::{self, Columns};
use super::field;
use super::schema::{self, TableMeta};
use super::value::Datum;
use super::{engine_name, split_name, ConnId, Outcome, Reply, Server};
use crate::handler::{RangeBound, Request, Response, Step};
use crate::record::collation::Collation;
use crate::record::{ColumnType, Value};
use std::cmp::Ordering;
use std::collections::VecDeque;

mod alter;
mod change;
mod checksum;
pub(in crate::sql) mod ddl;
mod explain;
mod foreign;
mod plan;
mod select;

use select::*;

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
type DdlWork = Box<dyn FnOnce(&mut Server, ConnId, R<()>) -> R<Outcome> + Send>;

/// What a statement of several DDL steps does with one step's result
/// (OPTIMIZE makes a row of it, then goes on to the next table).
type DdlThen = Box<dyn FnOnce(&mut Server, ConnId, R<Outcome>) -> R<Outcome> + Send>;

/// The reply a statement of several DDL steps makes after its last one.
type DdlFinish = Box<dyn FnOnce(&mut Server, ConnId) -> R<Outcome> + Send>;

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
    /// The row an insert collided with, read with an X lock (REPLACE, ON
    /// DUPLICATE KEY UPDATE).
    Duplicate,
    End,
}

#[derive(Debug)]
struct Change {
    table: String,
    /// The secondary index its read goes through, if it does.
    read_index: Option<String>,
    read: Option<Request>,
    /// Its read, when it is semi-consistent: a read that stopped at a row
    /// it read unlocked goes on from after it ([`Request::SemiConsistent`]).
    semi_read: Option<Request>,
    /// The read that goes on, once the writes and the relock of the rows
    /// read so far are done.
    next_read: Option<Request>,
    /// Its read, when the statement changes each row as the read hands it
    /// over ([`crate::Engine::set_statement_row_by_row`]): asked again, it
    /// goes on from where it handed rows over before a wait.
    read_again: Option<Request>,
    plan: ChangePlan,
    /// Locking reads of the rows a semi-consistent read matched unlocked,
    /// made before the writes.
    relock: VecDeque<Request>,
    queue: VecDeque<Request>,
    awaiting: Awaiting,
    affected: u64,
    matched: u64,
    /// Rows whose UPDATE has been queued: the row a warning names.
    updated: u64,
    records: u64,
    kind: ChangeKind,
    /// The engine's lock id when the statement began: READ COMMITTED
    /// releases the locks it took since on rows its WHERE rejects.
    lock_mark: crate::lock::LockId,
    /// What an insert that collides does.
    on_duplicate: OnDuplicate,
    /// The insert being written, kept while `on_duplicate` may have to
    /// write it again.
    inserting: Option<Request>,
    /// The unique index the insert collided with.
    collided: Option<String>,
    /// Rows not inserted for a collision (IGNORE), or deleted or updated
    /// for one (REPLACE, ON DUPLICATE KEY UPDATE): the info line's
    /// `Duplicates`.
    duplicates: u64,
}

impl Change {
    /// A change of `table` that starts with `read` (none for INSERT ...
    /// VALUES, whose rows are queued already), nothing written yet.
    fn new(
        table: String,
        read: Option<Request>,
        plan: ChangePlan,
        kind: ChangeKind,
        on_duplicate: OnDuplicate,
    ) -> Change {
        let read_index = match &read {
            Some(Request::Locking { read: r, .. } | Request::SemiConsistent { read: r }) => {
                match &**r {
                    Request::Scan { index, .. } | Request::Ranges { index, .. } => index.clone(),
                    _ => None,
                }
            }
            _ => None,
        };
        let semi_read = read
            .as_ref()
            .filter(|r| matches!(r, Request::SemiConsistent { .. }))
            .cloned();
        Change {
            table,
            read_index,
            semi_read,
            next_read: None,
            read_again: None,
            read,
            plan,
            relock: VecDeque::new(),
            queue: VecDeque::new(),
            awaiting: Awaiting::Read,
            affected: 0,
            matched: 0,
            updated: 0,
            records: 0,
            kind,
            lock_mark: 0,
            on_duplicate,
            inserting: None,
            collided: None,
            duplicates: 0,
        }
    }
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
    /// How each source column's engine value reads (CHAR without its
    /// padding, a DATE as its text, ...).
    pub shapes: Vec<schema::Shape>,
    /// The source columns' collations; `None` for the server's own rows.
    pub collations: Option<Vec<Collation>>,
    /// A join's columns: the table of each.
    pub join: Option<eval::JoinColumns>,
    /// The columns `*` stands for, in order (`None`: every column).
    pub star: Option<Vec<usize>>,
    /// Each source column's table column, for the result's column
    /// definitions (`None`: not known).
    pub sources: Option<Vec<super::ColumnSource>>,
}

impl SelectPost {
    /// The post-processing of a SELECT without FROM: one row of constants.
    pub(super) fn constant(sel: Select) -> SelectPost {
        SelectPost {
            sel,
            names: Vec::new(),
            table: None,
            shapes: Vec::new(),
            collations: None,
            join: None,
            star: None,
            sources: None,
        }
    }
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
    pub(super) fn resolve(&mut self, c: ConnId, t: &TableName) -> R<(String, TableMeta)> {
        let db = self.db_of(c, t)?;
        let name = self.find_table(&db, &t.name);
        match name.and_then(|n| self.metas.get(&n).map(|m| (n, m.clone()))) {
            Some(x) => {
                self.open_table(&x.0);
                Ok(x)
            }
            None => Err(SqlError::no_such_table(&db, &t.name)),
        }
    }

    /// A DML statement has opened and locked its tables: InnoDB is part of
    /// the connection's open transaction from now on, whatever the
    /// statement does next ([`crate::Engine::register_statement`]).
    pub(super) fn tables_locked(&mut self, c: ConnId) {
        let s = self.conn(c).session;
        self.engine.register_statement(s);
    }

    /// What `ha_innobase::open` does when a statement opens a table the
    /// server's table cache does not hold: raises the tablespace's file
    /// format tag to the table's format, as a CREATE does (5.1's
    /// table_open_cache keeps it open until the table is dropped or
    /// rebuilt, which gives it a new table id here). The cache holds
    /// every table: innosim's tables are far fewer than its 64.
    pub(super) fn open_table(&mut self, name: &str) {
        let Ok(t) = self.engine.table(name) else {
            return;
        };
        let (id, format) = (t.id, t.def.row_format);
        if self.open_tables.get(name) != Some(&id) {
            self.open_tables.insert(name.to_string(), id);
            self.tag_file_format(format);
        }
    }

    /// What `ha_innobase::create` does after making a table: raises the
    /// tablespace's file format tag (innodb_file_format_check) to the new
    /// table's format (`trx_sys_file_format_max_upgrade`). CREATE TABLE,
    /// CREATE TABLE ... LIKE and a copying ALTER's new table all pass here.
    pub(super) fn tag_file_format(&mut self, format: crate::RowFormat) {
        if matches!(
            format,
            crate::RowFormat::Dynamic | crate::RowFormat::Compressed { .. }
        ) {
            self.globals.format_check = true;
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
            .unwrap_or_else(|| crate::sql::DEFAULT_DB.into());
        let mut err = SqlError::from_engine(e, &db);
        // Engine names carry the database: show them as MySQL would.
        match e {
            crate::Error::CantCreateTable { table, reason } => {
                if let Some((d, t)) = split_name(table) {
                    err = SqlError::new(1005, format!("Can't create table '{d}.{t}' ({reason})"));
                }
            }
            crate::Error::ForeignKey {
                referenced,
                child,
                constraint,
            } => {
                let (cdb, ct) = split_name(child).unwrap_or((db.clone(), child.clone()));
                let text = constraint.render(|p| parent_name(&cdb, p));
                let what = if *referenced {
                    "delete or update a parent"
                } else {
                    "add or update a child"
                };
                // MySQL's "%.192s" of InnoDB's text.
                let detail: String = format!("`{cdb}`.`{ct}`, {text}")
                    .chars()
                    .take(192)
                    .collect();
                err = SqlError::new(
                    e.mysql_code().expect("a constraint's code"),
                    format!("Cannot {what} row: a foreign key constraint fails ({detail})"),
                );
            }
            _ => {}
        }
        if let crate::Error::NoSuchTable(n) | crate::Error::TableExists(n) = e {
            if let Some((d, t)) = split_name(n) {
                err = if matches!(e, crate::Error::NoSuchTable(_)) {
                    SqlError::no_such_table(&d, &t)
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
            Stmt::BeginSnapshot => Ok(self.single(c, Request::BeginSnapshot, Then::Ok)),
            Stmt::Commit => Ok(self.single(c, Request::Commit, Then::Ok)),
            Stmt::Rollback => Ok(self.single(c, Request::Rollback, Then::Ok)),
            Stmt::Savepoint(n) => Ok(self.savepoint(c, n)),
            Stmt::RollbackTo(n) => Ok(self.rollback_to_savepoint(c, n)),
            Stmt::Release(n) => {
                let list = &mut self.conn_mut(c).unregistered_savepoints;
                if let Some(pos) = list.iter().position(|(x, _)| x.eq_ignore_ascii_case(&n)) {
                    list.truncate(pos);
                }
                Ok(self.single(c, Request::ReleaseSavepoint(n), Then::Ok))
            }
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
            Stmt::Explain(sel) => self.explain(c, *sel),
            Stmt::Kill { id, query } => {
                let no_cols = Columns::none();
                let id = eval::eval(&id, None, &no_cols, &self.vars(c))?;
                let id = id
                    .as_i128()
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| {
                        SqlError::new(1094, format!("Unknown thread id: {}", id.render()))
                    })?;
                self.kill(c, id, query)?;
                Ok(ok())
            }
            Stmt::Insert {
                table,
                columns,
                source,
                on_duplicate,
            } => self.insert(c, table, columns, source, on_duplicate),
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
            // A read of the committed rows: no implicit commit.
            Stmt::Checksum { tables, quick } => self.checksum_tables(c, tables, quick),
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

    /// SAVEPOINT: the engine keeps it; the server notes whether InnoDB
    /// was part of the transaction yet (a statement touched a table since
    /// it began), as MySQL's savepoint keeps the engines registered then.
    /// In autocommit mode outside a transaction it does nothing.
    fn savepoint(&mut self, c: ConnId, n: String) -> Outcome {
        let s = self.conn(c).session;
        if self.engine.autocommit(s) && !self.engine.in_transaction(s) {
            // Autocommit and no BEGIN: MySQL 5.1's SQLCOM_SAVEPOINT answers
            // OK and does nothing (no transaction to keep it in).
            return Outcome::Done(Reply::Ok {
                affected: 0,
                info: None,
                warnings: 0,
            });
        }
        let touched = self.engine.trx_touched(s);
        let out = self.single(c, Request::Savepoint(n.clone()), Then::Ok);
        if matches!(out, Outcome::Done(Reply::Ok { .. })) {
            let trx = self.engine.trx_id(s);
            let list = &mut self.conn_mut(c).unregistered_savepoints;
            list.retain(|(x, t)| !x.eq_ignore_ascii_case(&n) && *t == trx);
            if !touched {
                list.push((n, trx));
            }
        }
        out
    }

    /// ROLLBACK TO SAVEPOINT. To one set before InnoDB was part of the
    /// transaction, MySQL 5.1's `ha_rollback_to_savepoint` rolls InnoDB's
    /// transaction back whole (changes and locks, the read view with
    /// them) and InnoDB joins again at the next statement; the savepoint
    /// and those before it stay. Otherwise InnoDB's own: the changes after
    /// it undone, every lock kept.
    fn rollback_to_savepoint(&mut self, c: ConnId, n: String) -> Outcome {
        let s = self.conn(c).session;
        let trx = self.engine.trx_id(s);
        let pos = self
            .conn(c)
            .unregistered_savepoints
            .iter()
            .position(|(x, t)| x.eq_ignore_ascii_case(&n) && *t == trx && t.is_some());
        let Some(pos) = pos else {
            return self.single(c, Request::RollbackToSavepoint(n), Then::Ok);
        };
        let mut kept = std::mem::take(&mut self.conn_mut(c).unregistered_savepoints);
        kept.truncate(pos + 1);
        for req in [Request::Rollback, Request::Begin] {
            if let Err(e) = self.engine.execute(s, req) {
                return Outcome::Done(Reply::Error(self.engine_err(c, &e)));
            }
        }
        for (name, _) in &kept {
            if let Err(e) = self.engine.execute(s, Request::Savepoint(name.clone())) {
                return Outcome::Done(Reply::Error(self.engine_err(c, &e)));
            }
        }
        let trx = self.engine.trx_id(s);
        self.conn_mut(c).unregistered_savepoints =
            kept.into_iter().map(|(name, _)| (name, trx)).collect();
        Outcome::Done(Reply::Ok {
            affected: 0,
            info: None,
            warnings: 0,
        })
    }

    fn single(&mut self, c: ConnId, req: Request, then: Then) -> Outcome {
        let s = self.conn(c).session;
        let step = if req.reads_nothing() {
            // An impossible WHERE: no row, and the engine never asked.
            Ok(Step::Done(Response::Rows(Vec::new())))
        } else {
            self.engine.execute(s, req)
        };
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
                    let rows = to_datums(&post.shapes, rows);
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
}

/// A constraint's parent as MySQL prints it for a child in database `db`:
/// `` `t1` ``, or `` `db2`.`t1` `` in another database.
pub(crate) fn parent_name(db: &str, parent: &str) -> String {
    match split_name(parent) {
        Some((d, t)) if d == db => format!("`{t}`"),
        Some((d, t)) => format!("`{d}`.`{t}`"),
        None => format!("`{parent}`"),
    }
}
