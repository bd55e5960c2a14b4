//! The statements innosim's server understands, as the parser leaves them.

use super::value::Datum;
use crate::record::Collation;

/// A table name, maybe qualified by its database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    /// The database, if written.
    pub db: Option<String>,
    /// The table.
    pub name: String,
}

/// A column's SQL type, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlType {
    /// TINYINT, SMALLINT, MEDIUMINT, INT or BIGINT: `bytes` 1, 2, 3, 4, 8.
    Integer {
        /// Storage bytes of the MySQL type.
        bytes: u8,
        /// UNSIGNED.
        unsigned: bool,
        /// The display width, if written.
        width: Option<u16>,
    },
    /// CHAR(n).
    Char(u16),
    /// VARCHAR(n).
    VarChar(u16),
    /// TINYTEXT, TEXT, MEDIUMTEXT, LONGTEXT by their longest value.
    Text(u32),
    /// TINYBLOB, BLOB, MEDIUMBLOB, LONGBLOB by their longest value.
    Blob(u32),
    /// DECIMAL(M,D) (NUMERIC): M digits, D of them after the point.
    Decimal {
        /// M: 1..=65.
        precision: u8,
        /// D: 0..=30, at most M.
        scale: u8,
    },
    /// FLOAT, DOUBLE (REAL, DOUBLE PRECISION), maybe with (M,D).
    Float {
        /// DOUBLE rather than FLOAT.
        double: bool,
        /// (M,D), if written.
        digits: Option<(u8, u8)>,
    },
    /// DATE.
    Date,
    /// TIME.
    Time,
    /// DATETIME.
    DateTime,
    /// TIMESTAMP.
    Timestamp,
    /// YEAR (YEAR(4)).
    Year,
    /// ENUM of this many members ([`ColumnSpec::members`]).
    Enum(u16),
    /// SET of this many members (at most 64).
    Set(u8),
}

/// A column definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: SqlType,
    /// NOT NULL.
    pub not_null: bool,
    /// DEFAULT, as a constant (NULL included).
    pub default: Option<Datum>,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// PRIMARY KEY written on the column.
    pub primary: bool,
    /// `UNIQUE [KEY]` written on the column.
    pub unique: bool,
    /// CHARACTER SET / COLLATE written on the column: its collation, where
    /// the table's default would otherwise be taken.
    pub collation: Option<Collation>,
    /// An ENUM's or SET's members, in order.
    pub members: Vec<Vec<u8>>,
    /// A TIMESTAMP's DEFAULT CURRENT_TIMESTAMP.
    pub default_now: bool,
    /// A TIMESTAMP's ON UPDATE CURRENT_TIMESTAMP.
    pub update_now: bool,
}

/// An index in CREATE TABLE or ALTER TABLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// Name, if given.
    pub name: Option<String>,
    /// Column names.
    pub columns: Vec<String>,
    /// The prefix length written after each column (`c(10)`), if any.
    pub prefixes: Vec<Option<u16>>,
    /// UNIQUE.
    pub unique: bool,
    /// PRIMARY KEY.
    pub primary: bool,
}

/// A FOREIGN KEY clause, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignSpec {
    /// CONSTRAINT name, if given.
    pub constraint: Option<String>,
    /// The index name written after FOREIGN KEY, if any (it names the key
    /// MySQL makes for the constraint, not the constraint).
    pub index: Option<String>,
    /// The child's columns.
    pub columns: Vec<String>,
    /// The parent table.
    pub parent: TableName,
    /// The parent's columns.
    pub parent_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: crate::dict::FkAction,
    /// ON UPDATE.
    pub on_update: crate::dict::FkAction,
}

/// Table options (CREATE TABLE and ALTER TABLE).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// ENGINE=.
    pub engine: Option<String>,
    /// ROW_FORMAT=, upper-cased.
    pub row_format: Option<String>,
    /// KEY_BLOCK_SIZE=.
    pub key_block_size: Option<u32>,
    /// `[DEFAULT] CHARSET=` / `CHARACTER SET=`.
    pub charset: Option<String>,
    /// \[DEFAULT\] COLLATE=: the table's default collation, with or instead
    /// of a character set.
    pub collate: Option<Collation>,
    /// AUTO_INCREMENT=.
    pub auto_increment: Option<u64>,
}

/// CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTable {
    /// Name.
    pub name: TableName,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// Columns.
    pub columns: Vec<ColumnSpec>,
    /// Indexes written apart from the columns.
    pub indexes: Vec<IndexSpec>,
    /// FOREIGN KEY clauses, each with the number of indexes written before
    /// it (where the key MySQL makes for it goes).
    pub foreign: Vec<(usize, ForeignSpec)>,
    /// Options.
    pub options: TableOptions,
}

/// One change of ALTER TABLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlterOp {
    /// `ADD [UNIQUE] INDEX` / `ADD PRIMARY KEY`.
    AddIndex(IndexSpec),
    /// DROP INDEX name.
    DropIndex(String),
    /// DROP PRIMARY KEY.
    DropPrimary,
    /// `ADD [CONSTRAINT [name]] FOREIGN KEY ...`
    AddForeign(ForeignSpec),
    /// DROP FOREIGN KEY name.
    DropForeign(String),
    /// `ADD [COLUMN] definition [FIRST | AFTER c]`.
    AddColumn(ColumnSpec, ColumnPlace),
    /// `DROP [COLUMN] c`.
    DropColumn(String),
    /// `CHANGE [COLUMN] old definition`, or `MODIFY [COLUMN] definition` (the
    /// old name the definition's), [FIRST | AFTER c].
    ChangeColumn {
        /// The column changed.
        old: String,
        /// What it becomes.
        spec: ColumnSpec,
        /// Where it goes.
        place: ColumnPlace,
    },
}

/// Where ADD, CHANGE or MODIFY COLUMN puts the column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPlace {
    /// Where it is (CHANGE, MODIFY), or last (ADD).
    Default,
    /// FIRST.
    First,
    /// AFTER the named column.
    After(String),
}

/// ALGORITHM= of ALTER TABLE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// DEFAULT: the fast path where there is one.
    Default,
    /// INPLACE: the fast path, or an error.
    Inplace,
    /// COPY: rebuild by copying.
    Copy,
}

/// An expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A constant.
    Lit(Datum),
    /// A column, maybe qualified.
    Column {
        /// The table qualifier.
        table: Option<String>,
        /// The column.
        name: String,
    },
    /// A system variable, `@@[scope.]name`, or a user variable, `@name`
    /// (its name kept with the `@`).
    Var {
        /// GLOBAL rather than SESSION.
        global: bool,
        /// The name.
        name: String,
    },
    /// `-x`, `NOT x`.
    Unary(UnOp, Box<Expr>),
    /// `x op y`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `x IS [NOT] NULL`.
    IsNull(Box<Expr>, bool),
    /// `x [NOT] BETWEEN lo AND hi`.
    Between(Box<Expr>, Box<Expr>, Box<Expr>, bool),
    /// `x [NOT] IN (list)`.
    In(Box<Expr>, Vec<Expr>, bool),
    /// `x [NOT] LIKE pattern`.
    Like(Box<Expr>, Box<Expr>, bool),
    /// A function or aggregate call.
    Call {
        /// Lower-cased name.
        name: String,
        /// Arguments.
        args: Vec<Expr>,
        /// `COUNT(*)`.
        star: bool,
        /// `COUNT(DISTINCT x)`.
        distinct: bool,
    },
}

impl Expr {
    /// The expression with each node `f` replaces (`Some`) replaced, and
    /// the others rebuilt from their rewritten children; `f` sees a node
    /// before its children, and a replacement is not searched again.
    pub fn rewrite<E>(
        &self,
        f: &mut dyn FnMut(&Expr) -> Result<Option<Expr>, E>,
    ) -> Result<Expr, E> {
        if let Some(r) = f(self)? {
            return Ok(r);
        }
        let mut go = |x: &Expr| x.rewrite(f).map(Box::new);
        Ok(match self {
            Expr::Lit(_) | Expr::Column { .. } | Expr::Var { .. } => self.clone(),
            Expr::Unary(op, x) => Expr::Unary(*op, go(x)?),
            Expr::Binary(op, a, b) => Expr::Binary(*op, go(a)?, go(b)?),
            Expr::IsNull(x, not) => Expr::IsNull(go(x)?, *not),
            Expr::Between(x, a, b, not) => Expr::Between(go(x)?, go(a)?, go(b)?, *not),
            Expr::In(x, list, not) => {
                let x = go(x)?;
                let list = list
                    .iter()
                    .map(|e| e.rewrite(f))
                    .collect::<Result<_, _>>()?;
                Expr::In(x, list, *not)
            }
            Expr::Like(x, p, not) => Expr::Like(go(x)?, go(p)?, *not),
            Expr::Call {
                name,
                args,
                star,
                distinct,
            } => Expr::Call {
                name: name.clone(),
                args: args
                    .iter()
                    .map(|a| a.rewrite(f))
                    .collect::<Result<_, _>>()?,
                star: *star,
                distinct: *distinct,
            },
        })
    }
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-`.
    Neg,
    /// `NOT`, `!`.
    Not,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `OR`, `||`.
    Or,
    /// `XOR`.
    Xor,
    /// `AND`, `&&`.
    And,
    /// `=`.
    Eq,
    /// `<=>`.
    NullSafeEq,
    /// `<>`, `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `DIV`.
    IntDiv,
    /// `%`, `MOD`.
    Mod,
}

/// An item of a SELECT list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectItem {
    /// `*`, or `t.*` (the table or alias named).
    Star(Option<String>),
    /// An expression and its alias.
    Expr {
        /// The expression.
        expr: Expr,
        /// AS alias.
        alias: Option<String>,
        /// The text as written (MySQL's column header).
        text: String,
    },
}

/// Locking clause of a SELECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockClause {
    /// A consistent read.
    #[default]
    None,
    /// LOCK IN SHARE MODE / FOR SHARE.
    Share,
    /// FOR UPDATE.
    Update,
}

/// What a locking read does about a lock it cannot have at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wait {
    /// Wait (up to innodb_lock_wait_timeout).
    #[default]
    Wait,
    /// NOWAIT: fail at once.
    NoWait,
    /// SKIP LOCKED: leave the row out.
    SkipLocked,
}

/// A SELECT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Select {
    /// DISTINCT.
    pub distinct: bool,
    /// The select list.
    pub items: Vec<SelectItem>,
    /// FROM: its first table, if any.
    pub from: Option<TableName>,
    /// The first table's alias.
    pub alias: Option<String>,
    /// The first table's index hints (USE, FORCE, IGNORE INDEX).
    pub hints: Vec<IndexHint>,
    /// The tables joined to it, in order.
    pub joins: Vec<Join>,
    /// WHERE.
    pub filter: Option<Expr>,
    /// GROUP BY: expressions (select-list aliases and positions allowed)
    /// and DESC.
    pub group_by: Vec<(Expr, bool)>,
    /// HAVING.
    pub having: Option<Expr>,
    /// ORDER BY: expressions and DESC.
    pub order_by: Vec<(Expr, bool)>,
    /// LIMIT: offset and count.
    pub limit: Option<(u64, u64)>,
    /// FOR UPDATE / LOCK IN SHARE MODE.
    pub lock: LockClause,
    /// NOWAIT / SKIP LOCKED.
    pub wait: Wait,
}

/// An index hint after a table in FROM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexHint {
    /// USE, FORCE or IGNORE.
    pub kind: HintKind,
    /// The indexes named (`PRIMARY` for the primary key); USE INDEX ()
    /// names none.
    pub indexes: Vec<String>,
}

/// What an index hint asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintKind {
    /// USE INDEX: only these (or a table scan).
    Use,
    /// FORCE INDEX: only these, a table scan only when none can be used.
    Force,
    /// IGNORE INDEX: not these.
    Ignore,
}

/// A table joined in FROM: `, t`, `[INNER | CROSS] JOIN t [ON e | USING
/// (c, ...)]`, `NATURAL JOIN t`, `LEFT [OUTER] JOIN t ON e | USING (...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// The table.
    pub table: TableName,
    /// Its alias.
    pub alias: Option<String>,
    /// LEFT: a row of the tables before it with no match here still
    /// comes out, this table's columns NULL.
    pub left: bool,
    /// NATURAL: USING every column name the two sides share.
    pub natural: bool,
    /// ON.
    pub on: Option<Expr>,
    /// USING's columns.
    pub using: Vec<String>,
}

/// What an inserted row that collides with a row already there (in the
/// primary key or a unique index) does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnDuplicate {
    /// INSERT: the statement fails with 1062.
    Error,
    /// INSERT IGNORE: the row is not inserted, and a warning says why.
    Ignore,
    /// REPLACE: the rows in the way are deleted (or the one in the way of
    /// the last unique key updated) and the row is inserted.
    Replace,
    /// INSERT ... ON DUPLICATE KEY UPDATE: the first row in the way gets
    /// these assignments (`VALUES(c)` is the inserted row's `c`).
    Update(Vec<(String, Expr)>),
}

/// Rows an INSERT takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InsertSource {
    /// VALUES (...), (...).
    Values(Vec<Vec<Expr>>),
    /// INSERT ... SELECT.
    Select(Box<Select>),
}

/// The scope of SET and SHOW VARIABLES.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// SESSION (the default of SET).
    Session,
    /// GLOBAL.
    Global,
    /// A user variable (`SET @x = ...`).
    User,
}

/// What a SHOW statement shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Show {
    /// SHOW TABLES.
    Tables,
    /// SHOW DATABASES.
    Databases,
    /// SHOW TABLE STATUS [LIKE 'p' | WHERE expr].
    TableStatus(Option<String>, Option<Expr>),
    /// SHOW CREATE TABLE t.
    CreateTable(TableName),
    /// SHOW WARNINGS.
    Warnings,
    /// SHOW ERRORS.
    Errors,
    /// SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'p' | WHERE expr].
    Variables(Scope, Option<String>, Option<Expr>),
    /// SHOW INDEX FROM t.
    Index(TableName),
    /// SHOW ENGINE INNODB STATUS.
    InnodbStatus,
    /// SHOW COLUMNS FROM t.
    Columns(TableName),
    /// SHOW COLLATION [LIKE 'p' | WHERE expr].
    Collation(Option<String>, Option<Expr>),
    /// SHOW CHARACTER SET [LIKE 'p' | WHERE expr].
    CharacterSet(Option<String>, Option<Expr>),
    /// `SHOW [FULL] PROCESSLIST`.
    Processlist {
        /// FULL: the whole statement text, not its first 100 characters.
        full: bool,
    },
}

/// A statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    /// CREATE TABLE.
    CreateTable(CreateTable),
    /// CREATE TABLE new LIKE old.
    CreateTableLike {
        /// The new table.
        name: TableName,
        /// The table copied.
        like: TableName,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// RENAME TABLE a TO b, ... (and ALTER TABLE a RENAME TO b).
    RenameTable(Vec<(TableName, TableName)>),
    /// DROP TABLE.
    DropTable {
        /// Tables.
        names: Vec<TableName>,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// CREATE DATABASE.
    CreateDatabase {
        /// Name.
        name: String,
        /// IF NOT EXISTS.
        if_not_exists: bool,
    },
    /// DROP DATABASE.
    DropDatabase {
        /// Name.
        name: String,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// USE db.
    Use(String),
    /// `CREATE [UNIQUE] INDEX name ON t (cols)`.
    CreateIndex {
        /// The table.
        table: TableName,
        /// The index.
        index: IndexSpec,
    },
    /// DROP INDEX name ON t.
    DropIndex {
        /// The table.
        table: TableName,
        /// The index.
        name: String,
    },
    /// ALTER TABLE.
    AlterTable {
        /// The table.
        table: TableName,
        /// Index changes.
        ops: Vec<AlterOp>,
        /// Options changed.
        options: TableOptions,
        /// ALGORITHM=.
        algorithm: Option<Algorithm>,
    },
    /// `TRUNCATE [TABLE] t`.
    Truncate(TableName),
    /// OPTIMIZE TABLE t, ...
    Optimize(Vec<TableName>),
    /// `CHECK TABLE t, ... [options]`
    Check(Vec<TableName>),
    /// EXPLAIN SELECT (DESCRIBE SELECT).
    Explain(Box<Select>),
    /// KILL [CONNECTION | QUERY] id.
    Kill {
        /// The connection's id.
        id: Expr,
        /// QUERY: only the statement it runs.
        query: bool,
    },
    /// CHECKSUM TABLE t, ... [QUICK | EXTENDED]
    Checksum {
        /// The tables.
        tables: Vec<TableName>,
        /// QUICK: the live checksum only (InnoDB keeps none: NULL).
        quick: bool,
    },
    /// ANALYZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE t, ...
    Analyze(Vec<TableName>),
    /// INSERT, and REPLACE.
    Insert {
        /// The table.
        table: TableName,
        /// The columns named, if any.
        columns: Option<Vec<String>>,
        /// The rows.
        source: InsertSource,
        /// What a row that collides with one already there does.
        on_duplicate: OnDuplicate,
    },
    /// UPDATE.
    Update {
        /// The table.
        table: TableName,
        /// Assignments.
        set: Vec<(String, Expr)>,
        /// WHERE.
        filter: Option<Expr>,
        /// ORDER BY.
        order_by: Vec<(Expr, bool)>,
        /// LIMIT.
        limit: Option<u64>,
    },
    /// DELETE.
    Delete {
        /// The table.
        table: TableName,
        /// WHERE.
        filter: Option<Expr>,
        /// ORDER BY.
        order_by: Vec<(Expr, bool)>,
        /// LIMIT.
        limit: Option<u64>,
    },
    /// SELECT.
    Select(Select),
    /// BEGIN / START TRANSACTION.
    Begin,
    /// START TRANSACTION WITH CONSISTENT SNAPSHOT.
    BeginSnapshot,
    /// COMMIT.
    Commit,
    /// ROLLBACK.
    Rollback,
    /// SAVEPOINT name.
    Savepoint(String),
    /// `ROLLBACK TO [SAVEPOINT] name`.
    RollbackTo(String),
    /// RELEASE SAVEPOINT name.
    Release(String),
    /// SET var = value, ...
    Set(Vec<(Scope, String, Expr)>),
    /// SET [GLOBAL|SESSION] TRANSACTION ISOLATION LEVEL ...
    SetIsolation(Option<Scope>, crate::trx::Isolation),
    /// SHOW ...
    Show(Show),
}
