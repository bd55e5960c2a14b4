//! The parser: a recursive descent over [`lex`](super::lex)'s tokens for
//! the MySQL statements innosim runs (the seeds' DDL and SHOW statements,
//! what sysbench's OLTP scripts send, transactions and settings).
//!
//! Hand-written rather than sqlparser's: MySQL's 1064 quotes the
//! statement from the token its grammar could not take, and only a parser
//! of MySQL's own grammar stops at the same token (sqlparser's MySQL
//! dialect refuses `LOCK IN SHARE MODE`, table options in ALTER TABLE,
//! `SHOW TABLE STATUS WHERE` and OPTIMIZE TABLE, and would need a
//! pre-parser for a third of the statements anyway). Mirrors the rules of
//! `sql_yacc.yy` for these statements, operator precedence included.

use super::ast::*;
use super::error::SqlError;
use super::lex::{Tok, Token};
use super::value::Datum;
use crate::record::Collation;
use crate::trx::Isolation;

/// Words that are never identifiers unless backquoted (MySQL's reserved
/// words the grammar here meets).
const RESERVED: &[&str] = &[
    "ADD",
    "ALL",
    "ALTER",
    "AND",
    "AS",
    "ASC",
    "BETWEEN",
    "BIGINT",
    "BLOB",
    "BY",
    "CHAR",
    "CHARACTER",
    "CHECK",
    "COLLATE",
    "CONSTRAINT",
    "CREATE",
    "DATABASE",
    "DEFAULT",
    "DELETE",
    "DESC",
    "DISTINCT",
    "DIV",
    "DROP",
    "EXISTS",
    "FOR",
    "FROM",
    "GROUP",
    "HAVING",
    "IF",
    "IN",
    "INDEX",
    "INSERT",
    "INT",
    "INTEGER",
    "INTO",
    "IS",
    "KEY",
    "KEYS",
    "LIKE",
    "LIMIT",
    "LOCK",
    "LONGBLOB",
    "LONGTEXT",
    "MEDIUMBLOB",
    "MEDIUMINT",
    "MEDIUMTEXT",
    "MOD",
    "NOT",
    "NULL",
    "ON",
    "OPTIMIZE",
    "OR",
    "ORDER",
    "PRIMARY",
    "SELECT",
    "SET",
    "SHOW",
    "SMALLINT",
    "TABLE",
    "TINYBLOB",
    "TINYINT",
    "TINYTEXT",
    "TO",
    "UNIQUE",
    "UNSIGNED",
    "UPDATE",
    "USE",
    "VALUES",
    "VARCHAR",
    "WHERE",
    "XOR",
    "ZEROFILL",
];

/// Parses one statement (an optional trailing `;` allowed).
pub fn parse(text: &str) -> Result<Stmt, SqlError> {
    parse_in(text, false)
}

/// [`parse`], with `"` quoting identifiers when `ansi_quotes` (sql_mode
/// ANSI_QUOTES).
pub fn parse_in(text: &str, ansi_quotes: bool) -> Result<Stmt, SqlError> {
    let toks = super::lex::tokenize_in(text, ansi_quotes)?;
    if toks.is_empty() {
        return Err(SqlError::new(1065, "Query was empty"));
    }
    let mut p = Parser { text, toks, pos: 0 };
    let stmt = p.statement()?;
    p.eat_op(";");
    if p.pos < p.toks.len() {
        return Err(p.err());
    }
    Ok(stmt)
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
}

type R<T> = Result<T, SqlError>;

impl Parser<'_> {
    fn err(&self) -> SqlError {
        SqlError::syntax(
            self.text,
            self.toks.get(self.pos).map_or(self.text.len(), |t| t.start),
        )
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.tok)
    }

    fn is_kw_at(&self, k: usize, kw: &str) -> bool {
        matches!(self.peek_at(k), Some(Tok::Word { text, quoted: false }) if text.eq_ignore_ascii_case(kw))
    }

    fn is_kw(&self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> R<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, op: &str) -> R<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    /// An identifier: a backquoted name or a word that is not reserved.
    fn ident(&mut self) -> R<String> {
        match self.peek() {
            Some(Tok::Word { text, quoted }) => {
                if !*quoted
                    && (RESERVED.iter().any(|r| r.eq_ignore_ascii_case(text))
                        || text.starts_with('@'))
                {
                    return Err(self.err());
                }
                let t = text.clone();
                self.pos += 1;
                Ok(t)
            }
            _ => Err(self.err()),
        }
    }

    /// An identifier or a string (MySQL accepts `'name'` where it allows
    /// a savepoint or variable value).
    fn ident_or_string(&mut self) -> R<String> {
        if let Some(Tok::Str(_)) = self.peek() {
            return self.string();
        }
        self.ident()
    }

    fn table_name(&mut self) -> R<TableName> {
        let first = self.ident()?;
        if self.eat_op(".") {
            let name = self.ident()?;
            return Ok(TableName {
                db: Some(first),
                name,
            });
        }
        Ok(TableName {
            db: None,
            name: first,
        })
    }

    fn string(&mut self) -> R<String> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = String::from_utf8_lossy(s).into_owned();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.err()),
        }
    }

    fn number(&mut self) -> R<u64> {
        match self.peek() {
            Some(Tok::Int(d)) => {
                let v = d.parse::<u64>().map_err(|_| self.err())?;
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.err()),
        }
    }

    fn statement(&mut self) -> R<Stmt> {
        let Some(Tok::Word {
            text,
            quoted: false,
        }) = self.peek()
        else {
            return Err(self.err());
        };
        let kw = text.to_ascii_uppercase();
        self.pos += 1;
        match kw.as_str() {
            "SELECT" => {
                self.pos -= 1;
                Ok(Stmt::Select(self.select()?))
            }
            "INSERT" => self.insert(false),
            "REPLACE" => self.insert(true),
            "UPDATE" => self.update(),
            "DELETE" => self.delete(),
            "CREATE" => self.create(),
            "DROP" => self.drop(),
            "ALTER" => self.alter(),
            "TRUNCATE" => {
                self.eat_kw("TABLE");
                Ok(Stmt::Truncate(self.table_name()?))
            }
            "RENAME" => {
                self.expect_kw("TABLE")?;
                let mut pairs = Vec::new();
                loop {
                    let from = self.table_name()?;
                    self.expect_kw("TO")?;
                    pairs.push((from, self.table_name()?));
                    if !self.eat_op(",") {
                        break;
                    }
                }
                Ok(Stmt::RenameTable(pairs))
            }
            "ANALYZE" => Ok(Stmt::Analyze(self.admin_tables()?)),
            "OPTIMIZE" => Ok(Stmt::Optimize(self.admin_tables()?)),
            "CHECK" => {
                self.expect_kw("TABLE")?;
                let mut names = vec![self.table_name()?];
                while self.eat_op(",") {
                    names.push(self.table_name()?);
                }
                // The check options change nothing here: InnoDB checks
                // every index in full whatever is asked.
                loop {
                    let eaten = ["FOR", "QUICK", "FAST", "MEDIUM", "EXTENDED", "CHANGED"]
                        .iter()
                        .any(|k| self.eat_kw(k));
                    if !eaten {
                        break;
                    }
                    self.eat_kw("UPGRADE");
                }
                Ok(Stmt::Check(names))
            }
            "USE" => Ok(Stmt::Use(self.ident()?)),
            "BEGIN" => {
                self.eat_kw("WORK");
                Ok(Stmt::Begin)
            }
            "START" => {
                self.expect_kw("TRANSACTION")?;
                Ok(Stmt::Begin)
            }
            "COMMIT" => {
                self.eat_kw("WORK");
                Ok(Stmt::Commit)
            }
            "ROLLBACK" => {
                self.eat_kw("WORK");
                if self.eat_kw("TO") {
                    self.eat_kw("SAVEPOINT");
                    return Ok(Stmt::RollbackTo(self.ident()?));
                }
                Ok(Stmt::Rollback)
            }
            "SAVEPOINT" => Ok(Stmt::Savepoint(self.ident()?)),
            "RELEASE" => {
                self.expect_kw("SAVEPOINT")?;
                Ok(Stmt::Release(self.ident()?))
            }
            "SET" => self.set(),
            "SHOW" => self.show(),
            "DESC" | "DESCRIBE" | "EXPLAIN"
                if matches!(self.peek(), Some(Tok::Word { .. })) && !self.is_kw("SELECT") =>
            {
                Ok(Stmt::Show(Show::Columns(self.table_name()?)))
            }
            _ => {
                self.pos -= 1;
                Err(self.err())
            }
        }
    }

    // ---- DDL ----

    fn create(&mut self) -> R<Stmt> {
        if self.eat_kw("DATABASE") || self.eat_kw("SCHEMA") {
            let if_not_exists = self.if_not_exists()?;
            let name = self.ident()?;
            // CHARACTER SET options are accepted and are latin1 anyway.
            self.table_options(&mut TableOptions::default())?;
            return Ok(Stmt::CreateDatabase {
                name,
                if_not_exists,
            });
        }
        let unique = self.eat_kw("UNIQUE");
        if self.eat_kw("INDEX") {
            let name = self.ident()?;
            self.expect_kw("ON")?;
            let table = self.table_name()?;
            let (columns, prefixes) = self.column_list()?;
            self.index_tail()?;
            return Ok(Stmt::CreateIndex {
                table,
                index: IndexSpec {
                    name: Some(name),
                    columns,
                    prefixes,
                    unique,
                    primary: false,
                },
            });
        }
        if unique {
            return Err(self.err());
        }
        self.expect_kw("TABLE")?;
        let if_not_exists = self.if_not_exists()?;
        let name = self.table_name()?;
        if self.eat_kw("LIKE") {
            let like = self.table_name()?;
            return Ok(Stmt::CreateTableLike {
                name,
                like,
                if_not_exists,
            });
        }
        if self.is_op("(") && self.is_kw_at(1, "LIKE") {
            self.pos += 2;
            let like = self.table_name()?;
            self.expect_op(")")?;
            return Ok(Stmt::CreateTableLike {
                name,
                like,
                if_not_exists,
            });
        }
        self.expect_op("(")?;
        let mut columns = Vec::new();
        let mut indexes = Vec::new();
        loop {
            if let Some(ix) = self.index_def()? {
                indexes.push(ix);
            } else {
                columns.push(self.column_def()?);
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        let mut options = TableOptions::default();
        self.table_options(&mut options)?;
        if self.is_kw("SELECT") || self.is_kw("AS") {
            return Err(SqlError::unsupported("CREATE TABLE ... SELECT"));
        }
        Ok(Stmt::CreateTable(CreateTable {
            name,
            if_not_exists,
            columns,
            indexes,
            options,
        }))
    }

    fn if_not_exists(&mut self) -> R<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn if_exists(&mut self) -> R<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// `USING BTREE` and `COMMENT '...'` after an index's columns.
    fn index_tail(&mut self) -> R<()> {
        loop {
            if self.eat_kw("USING") {
                if !self.eat_kw("BTREE") {
                    self.expect_kw("HASH")?;
                }
            } else if self.eat_kw("COMMENT") {
                self.string()?;
            } else {
                return Ok(());
            }
        }
    }

    /// `(a, b(10))`: the key's columns and the prefix length written after
    /// each, if any.
    fn column_list(&mut self) -> R<(Vec<String>, Vec<Option<u16>>)> {
        self.expect_op("(")?;
        let mut cols = Vec::new();
        let mut prefixes = Vec::new();
        loop {
            cols.push(self.ident()?);
            let p = self.paren_number()?;
            prefixes.push(match p {
                None => None,
                Some(n) if (1..=u64::from(u16::MAX)).contains(&n) => Some(n as u16),
                Some(_) => {
                    return Err(SqlError::new(
                        1089,
                        "Incorrect prefix key; the used key part isn't a string, the used \
                         length is longer than the key part, or the storage engine doesn't \
                         support unique prefix keys",
                    ))
                }
            });
            if !self.eat_kw("ASC") {
                self.eat_kw("DESC");
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        Ok((cols, prefixes))
    }

    /// An index definition inside CREATE TABLE or after ADD, if one starts
    /// here.
    fn index_def(&mut self) -> R<Option<IndexSpec>> {
        let save = self.pos;
        let foreign = |p: &Self| {
            // Refused whole rather than parsed and not kept: a constraint
            // innosim would not enforce.
            if p.is_kw("FOREIGN") {
                Err(SqlError::unsupported("FOREIGN KEY constraints"))
            } else {
                Ok(())
            }
        };
        foreign(self)?;
        if self.eat_kw("CONSTRAINT") {
            if !self.is_kw("PRIMARY") && !self.is_kw("UNIQUE") && !self.is_kw("FOREIGN") {
                self.ident()?;
            }
            foreign(self)?;
            if !self.is_kw("PRIMARY") && !self.is_kw("UNIQUE") {
                return Err(self.err());
            }
        }
        if self.eat_kw("PRIMARY") {
            self.expect_kw("KEY")?;
            self.index_tail()?;
            let (columns, prefixes) = self.column_list()?;
            self.index_tail()?;
            return Ok(Some(IndexSpec {
                name: None,
                columns,
                prefixes,
                unique: true,
                primary: true,
            }));
        }
        let unique = self.eat_kw("UNIQUE");
        let keyword = self.eat_kw("KEY") || self.eat_kw("INDEX");
        if !unique && !keyword {
            self.pos = save;
            return Ok(None);
        }
        let name = if self.is_op("(") || self.is_kw("USING") {
            None
        } else {
            Some(self.ident()?)
        };
        self.index_tail()?;
        let (columns, prefixes) = self.column_list()?;
        self.index_tail()?;
        Ok(Some(IndexSpec {
            name,
            columns,
            prefixes,
            unique,
            primary: false,
        }))
    }

    fn column_def(&mut self) -> R<ColumnSpec> {
        let name = self.ident()?;
        let (ty, collation, members) = self.data_type()?;
        let mut c = ColumnSpec {
            name,
            ty,
            collation,
            not_null: false,
            default: None,
            auto_increment: false,
            primary: false,
            unique: false,
            members,
            default_now: false,
            update_now: false,
        };
        let mut explicit_null = false;
        loop {
            if self.eat_kw("NOT") {
                self.expect_kw("NULL")?;
                c.not_null = true;
            } else if self.eat_kw("NULL") {
                c.not_null = false;
                explicit_null = true;
            } else if self.eat_kw("DEFAULT") {
                if self.current_timestamp()? {
                    c.default_now = true;
                    c.default = None;
                } else {
                    c.default = Some(self.constant()?);
                    c.default_now = false;
                }
            } else if self.eat_kw("ON") {
                self.expect_kw("UPDATE")?;
                if !self.current_timestamp()? {
                    return Err(self.err());
                }
                c.update_now = true;
            } else if self.eat_kw("AUTO_INCREMENT") {
                c.auto_increment = true;
            } else if self.eat_kw("PRIMARY") {
                self.expect_kw("KEY")?;
                c.primary = true;
            } else if self.eat_kw("KEY") {
                c.primary = true;
            } else if self.eat_kw("UNIQUE") {
                self.eat_kw("KEY");
                c.unique = true;
            } else if self.eat_kw("COMMENT") {
                self.string()?;
            } else if self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
                let coll = self.charset_clause(c.collation)?;
                c.collation = Some(coll);
            } else {
                // A TIMESTAMP is NOT NULL unless NULL is written.
                if c.ty == SqlType::Timestamp && !explicit_null {
                    c.not_null = true;
                }
                return Ok(c);
            }
        }
    }

    /// CURRENT_TIMESTAMP, NOW() or their synonyms, if next.
    fn current_timestamp(&mut self) -> R<bool> {
        for kw in ["CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP"] {
            if self.eat_kw(kw) {
                if self.eat_op("(") {
                    self.expect_op(")")?;
                } else if kw == "NOW" {
                    return Err(self.err());
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A constant for DEFAULT: a literal, maybe negative, or NULL.
    fn constant(&mut self) -> R<Datum> {
        let neg = self.eat_op("-");
        let d = match self.peek() {
            Some(Tok::Str(s)) if !neg => Datum::Str(s.clone()),
            Some(Tok::Hex(b)) if !neg => Datum::Hex(b.clone()),
            Some(Tok::Int(_)) | Some(Tok::Decimal(_)) => {
                let Expr::Lit(d) = self.primary()? else {
                    unreachable!("a number is a literal")
                };
                self.pos -= 1;
                if neg {
                    super::value::arith(BinOp::Sub, &Datum::Int(0), &d)?
                } else {
                    d
                }
            }
            Some(Tok::Word {
                text,
                quoted: false,
            }) if !neg && text.eq_ignore_ascii_case("NULL") => Datum::Null,
            _ => return Err(self.err()),
        };
        self.pos += 1;
        Ok(d)
    }

    /// `CHARACTER SET x`, `CHARSET x` (the set's default collation) or
    /// `COLLATE x`, after `before` (an earlier clause's collation): the
    /// collation they give. A COLLATE of another set than the one named
    /// is MySQL's 1253; a set innosim lacks is refused as unsupported.
    fn charset_clause(&mut self, before: Option<Collation>) -> R<Collation> {
        if self.eat_kw("CHARACTER") {
            self.expect_kw("SET")?;
        } else if !self.eat_kw("CHARSET") {
            self.expect_kw("COLLATE")?;
            self.eat_op("=");
            let c = self.ident_or_string()?;
            let coll = Collation::by_name(&c)
                .ok_or_else(|| SqlError::new(1273, format!("Unknown collation: '{c}'")))?;
            if let Some(b) = before.filter(|b| b.charset() != coll.charset()) {
                return Err(SqlError::new(
                    1253,
                    format!(
                        "COLLATION '{}' is not valid for CHARACTER SET '{}'",
                        coll.name(),
                        b.charset()
                    ),
                ));
            }
            return Ok(coll);
        }
        self.eat_op("=");
        let c = self.ident_or_string()?;
        if c.eq_ignore_ascii_case("default") {
            return Ok(Collation::Latin1SwedishCi);
        }
        Collation::default_of_charset(&c)
            .ok_or_else(|| SqlError::unsupported(&format!("character set {c}")))
    }

    fn paren_number(&mut self) -> R<Option<u64>> {
        if self.eat_op("(") {
            let n = self.number()?;
            self.expect_op(")")?;
            return Ok(Some(n));
        }
        Ok(None)
    }

    /// `(M)` or `(M,D)` after a number type.
    fn paren_digits(&mut self) -> R<Option<(u64, Option<u64>)>> {
        if !self.eat_op("(") {
            return Ok(None);
        }
        let m = self.number()?;
        let d = if self.eat_op(",") {
            Some(self.number()?)
        } else {
            None
        };
        self.expect_op(")")?;
        Ok(Some((m, d)))
    }

    /// An ENUM's or SET's member list: `('a','b',...)`.
    fn members(&mut self) -> R<Vec<Vec<u8>>> {
        self.expect_op("(")?;
        let mut out = Vec::new();
        loop {
            let Some(Tok::Str(s)) = self.peek() else {
                return Err(self.err());
            };
            // Trailing spaces are not part of a member (MySQL strips them).
            let mut m = s.clone();
            while m.last() == Some(&b' ') {
                m.pop();
            }
            out.push(m);
            self.pos += 1;
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        Ok(out)
    }

    /// A column type, the collation written with it, and an ENUM's or
    /// SET's members.
    fn data_type(&mut self) -> R<(SqlType, Option<Collation>, Vec<Vec<u8>>)> {
        let Some(Tok::Word {
            text,
            quoted: false,
        }) = self.peek()
        else {
            return Err(self.err());
        };
        let kw = text.to_ascii_uppercase();
        let start = self.pos;
        self.pos += 1;
        let ty = match kw.as_str() {
            "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "INTEGER" | "BIGINT" => {
                let bytes = match kw.as_str() {
                    "TINYINT" => 1,
                    "SMALLINT" => 2,
                    "MEDIUMINT" => 3,
                    "BIGINT" => 8,
                    _ => 4,
                };
                let width = self.paren_number()?;
                let width = match width {
                    Some(w) if !(1..=255).contains(&w) => {
                        return Err(SqlError::new(
                            1439,
                            "Display width out of range for column (max = 255)",
                        ))
                    }
                    w => w.map(|w| w as u16),
                };
                let unsigned = self.eat_kw("UNSIGNED");
                if self.eat_kw("ZEROFILL") {
                    return Err(SqlError::unsupported("ZEROFILL"));
                }
                SqlType::Integer {
                    bytes,
                    unsigned,
                    width,
                }
            }
            "CHAR" | "CHARACTER" => {
                let n = self.paren_number()?.unwrap_or(1);
                if n > 255 {
                    return Err(SqlError::new(
                        1074,
                        format!(
                            "Column length too big for column '{}' (max = 255); use BLOB or TEXT instead",
                            self.column_name_before(start)
                        ),
                    ));
                }
                SqlType::Char(n as u16)
            }
            "VARCHAR" => {
                let n = self.paren_number()?.ok_or_else(|| self.err())?;
                if n > 65_535 {
                    return Err(SqlError::new(
                        1074,
                        format!(
                            "Column length too big for column '{}' (max = 65535); use BLOB or TEXT instead",
                            self.column_name_before(start)
                        ),
                    ));
                }
                SqlType::VarChar(n as u16)
            }
            "TINYTEXT" => SqlType::Text(255),
            "TEXT" => {
                self.paren_number()?;
                SqlType::Text(65_535)
            }
            "MEDIUMTEXT" => SqlType::Text(16_777_215),
            "LONGTEXT" => SqlType::Text(u32::MAX),
            "TINYBLOB" => SqlType::Blob(255),
            "BLOB" => {
                self.paren_number()?;
                SqlType::Blob(65_535)
            }
            "MEDIUMBLOB" => SqlType::Blob(16_777_215),
            "LONGBLOB" => SqlType::Blob(u32::MAX),
            "BOOL" | "BOOLEAN" => SqlType::Integer {
                bytes: 1,
                unsigned: false,
                width: Some(1),
            },
            "DECIMAL" | "NUMERIC" | "DEC" | "FIXED" => {
                let (m, d) = match self.paren_digits()? {
                    None => (10, 0),
                    Some((m, d)) => (m, d.unwrap_or(0)),
                };
                let name = self.column_name_before(start);
                if m > 65 {
                    return Err(SqlError::new(
                        1426,
                        format!(
                            "Too big precision {m} specified for column '{name}'. Maximum is 65."
                        ),
                    ));
                }
                if d > 30 {
                    return Err(SqlError::new(
                        1425,
                        format!("Too big scale {d} specified for column '{name}'. Maximum is 30."),
                    ));
                }
                if d > m {
                    return Err(SqlError::new(
                        1427,
                        format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')."),
                    ));
                }
                SqlType::Decimal {
                    precision: m.max(1) as u8,
                    scale: d as u8,
                }
            }
            "FLOAT" | "DOUBLE" | "REAL" => {
                if kw == "DOUBLE" {
                    self.eat_kw("PRECISION");
                }
                let digits = self.paren_digits()?;
                let name = self.column_name_before(start);
                let (double, digits) = match (kw.as_str(), digits) {
                    // FLOAT(p): a FLOAT up to 24 bits of precision, else
                    // a DOUBLE.
                    ("FLOAT", Some((p, None))) if p <= 24 => (false, None),
                    ("FLOAT", Some((p, None))) if p <= 53 => (true, None),
                    (_, Some((_, None))) => return Err(self.err()),
                    (_, Some((m, Some(d)))) => {
                        if d > 30 || d > m || m > 255 {
                            return Err(SqlError::new(
                                1427,
                                format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')."),
                            ));
                        }
                        (kw != "FLOAT", Some((m as u8, d as u8)))
                    }
                    (_, None) => (kw != "FLOAT", None),
                };
                SqlType::Float { double, digits }
            }
            "DATE" => SqlType::Date,
            "TIME" => SqlType::Time,
            "DATETIME" => SqlType::DateTime,
            "TIMESTAMP" => {
                self.paren_number()?;
                SqlType::Timestamp
            }
            "YEAR" => {
                if let Some(w) = self.paren_number()? {
                    if w != 4 {
                        return Err(SqlError::unsupported("YEAR(2)"));
                    }
                }
                SqlType::Year
            }
            "ENUM" | "SET" => {
                let members = self.members()?;
                let name = self.column_name_before(start);
                let mut seen: Vec<&Vec<u8>> = Vec::new();
                for m in &members {
                    if seen.iter().any(|s| {
                        crate::record::Collation::Latin1SwedishCi
                            .compare(s, m)
                            .is_eq()
                    }) {
                        return Err(SqlError::new(
                            1291,
                            format!(
                                "Column '{name}' has duplicated value '{}' in {kw}",
                                String::from_utf8_lossy(m)
                            ),
                        ));
                    }
                    seen.push(m);
                }
                let ty = if kw == "ENUM" {
                    if members.len() > 65_535 {
                        return Err(SqlError::new(
                            1097,
                            format!("Too many strings for column {name} and SET"),
                        ));
                    }
                    SqlType::Enum(members.len() as u16)
                } else {
                    if members.len() > 64 {
                        return Err(SqlError::new(
                            1097,
                            format!("Too many strings for column {name} and SET"),
                        ));
                    }
                    SqlType::Set(members.len() as u8)
                };
                let mut collation = None;
                while self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
                    collation = Some(self.charset_clause(collation)?);
                }
                return Ok((ty, collation, members));
            }
            "BIT" | "BINARY" | "VARBINARY" => {
                return Err(SqlError::unsupported(&format!("the {kw} type")))
            }
            _ => {
                self.pos -= 1;
                return Err(self.err());
            }
        };
        let mut collation = None;
        while self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
            collation = Some(self.charset_clause(collation)?);
        }
        if self.eat_kw("BINARY") {
            return Err(SqlError::unsupported("BINARY string columns"));
        }
        if matches!(ty, SqlType::Decimal { .. } | SqlType::Float { .. })
            && (self.eat_kw("UNSIGNED") || self.eat_kw("ZEROFILL"))
        {
            return Err(SqlError::unsupported(
                "UNSIGNED or ZEROFILL on DECIMAL, FLOAT and DOUBLE",
            ));
        }
        Ok((ty, collation, Vec::new()))
    }

    fn column_name_before(&self, type_pos: usize) -> String {
        match type_pos.checked_sub(1).and_then(|i| self.toks.get(i)) {
            Some(Token {
                tok: Tok::Word { text, .. },
                ..
            }) => text.clone(),
            _ => String::new(),
        }
    }

    /// Table options, in any order, commas allowed between them. Returns
    /// whether any was read.
    fn table_options(&mut self, o: &mut TableOptions) -> R<bool> {
        let mut any = false;
        loop {
            let save = self.pos;
            self.eat_kw("DEFAULT");
            if self.is_kw("CHARACTER") || self.is_kw("CHARSET") || self.is_kw("COLLATE") {
                let charset = self.is_kw("CHARACTER") || self.is_kw("CHARSET");
                let coll = self.charset_clause(o.collate)?;
                if charset {
                    o.charset = Some(coll.charset().into());
                    if o.collate.is_some_and(|c| c.charset() != coll.charset()) {
                        o.collate = None;
                    }
                } else {
                    o.collate = Some(coll);
                }
            } else if self.pos != save {
                self.pos = save;
                return Err(self.err());
            } else if self.eat_kw("ENGINE") || self.eat_kw("TYPE") {
                self.eat_op("=");
                o.engine = Some(self.ident_or_string()?);
            } else if self.eat_kw("ROW_FORMAT") {
                self.eat_op("=");
                let f = if self.eat_kw("DEFAULT") {
                    "DEFAULT".to_string()
                } else {
                    self.ident()?.to_ascii_uppercase()
                };
                if ![
                    "DEFAULT",
                    "DYNAMIC",
                    "FIXED",
                    "COMPRESSED",
                    "REDUNDANT",
                    "COMPACT",
                ]
                .contains(&f.as_str())
                {
                    self.pos -= 1;
                    return Err(self.err());
                }
                o.row_format = Some(f);
            } else if self.eat_kw("KEY_BLOCK_SIZE") {
                self.eat_op("=");
                o.key_block_size = Some(u32::try_from(self.number()?).unwrap_or(u32::MAX));
            } else if self.eat_kw("AUTO_INCREMENT") {
                self.eat_op("=");
                o.auto_increment = Some(self.number()?);
            } else if self.eat_kw("COMMENT") {
                self.eat_op("=");
                self.string()?;
            } else {
                return Ok(any);
            }
            any = true;
            if self.is_op(",") && !self.next_is_alter_op(1) {
                self.pos += 1;
            }
        }
    }

    /// Whether the token `k` ahead starts an ALTER TABLE operation (so a
    /// comma before it separates operations, not options).
    fn next_is_alter_op(&self, k: usize) -> bool {
        self.is_kw_at(k, "ADD") || self.is_kw_at(k, "DROP") || self.is_kw_at(k, "ALGORITHM")
    }

    fn drop(&mut self) -> R<Stmt> {
        if self.eat_kw("DATABASE") || self.eat_kw("SCHEMA") {
            let if_exists = self.if_exists()?;
            return Ok(Stmt::DropDatabase {
                name: self.ident()?,
                if_exists,
            });
        }
        if self.eat_kw("INDEX") {
            let name = self.ident()?;
            self.expect_kw("ON")?;
            let table = self.table_name()?;
            return Ok(Stmt::DropIndex { table, name });
        }
        self.eat_kw("TEMPORARY");
        self.expect_kw("TABLE")?;
        let if_exists = self.if_exists()?;
        let mut names = vec![self.table_name()?];
        while self.eat_op(",") {
            names.push(self.table_name()?);
        }
        if !self.eat_kw("RESTRICT") {
            self.eat_kw("CASCADE");
        }
        Ok(Stmt::DropTable { names, if_exists })
    }

    fn alter(&mut self) -> R<Stmt> {
        self.expect_kw("TABLE")?;
        let table = self.table_name()?;
        let mut ops = Vec::new();
        let mut options = TableOptions::default();
        let mut algorithm = None;
        if self.eat_kw("RENAME") {
            if !self.eat_kw("TO") {
                self.eat_kw("AS");
            }
            let to = self.table_name()?;
            if self.is_op(",") {
                return Err(SqlError::unsupported(
                    "RENAME beside other changes in one ALTER TABLE",
                ));
            }
            return Ok(Stmt::RenameTable(vec![(table, to)]));
        }
        loop {
            if self.eat_kw("ADD") {
                if let Some(ix) = self.index_def()? {
                    ops.push(AlterOp::AddIndex(ix));
                } else {
                    self.eat_kw("COLUMN");
                    if self.eat_op("(") {
                        loop {
                            let spec = self.column_def()?;
                            ops.extend(column_keys(&spec));
                            ops.push(AlterOp::AddColumn(spec, ColumnPlace::Default));
                            if !self.eat_op(",") {
                                break;
                            }
                        }
                        self.expect_op(")")?;
                    } else {
                        let spec = self.column_def()?;
                        let place = self.column_place()?;
                        let keys = column_keys(&spec);
                        ops.push(AlterOp::AddColumn(spec, place));
                        ops.extend(keys);
                    }
                }
            } else if self.eat_kw("CHANGE") || self.eat_kw("MODIFY") {
                let modify = self.prev_is_kw("MODIFY");
                self.eat_kw("COLUMN");
                let old = if modify { None } else { Some(self.ident()?) };
                let spec = self.column_def()?;
                let place = self.column_place()?;
                let keys = column_keys(&spec);
                ops.push(AlterOp::ChangeColumn {
                    old: old.unwrap_or_else(|| spec.name.clone()),
                    spec,
                    place,
                });
                ops.extend(keys);
            } else if self.eat_kw("DROP") {
                if self.eat_kw("PRIMARY") {
                    self.expect_kw("KEY")?;
                    ops.push(AlterOp::DropPrimary);
                } else if self.eat_kw("INDEX") || self.eat_kw("KEY") {
                    ops.push(AlterOp::DropIndex(self.ident()?));
                } else if self.is_kw("FOREIGN") {
                    return Err(SqlError::unsupported("FOREIGN KEY constraints"));
                } else {
                    self.eat_kw("COLUMN");
                    ops.push(AlterOp::DropColumn(self.ident()?));
                }
            } else if self.eat_kw("ALGORITHM") {
                self.eat_op("=");
                algorithm = Some(if self.eat_kw("DEFAULT") {
                    Algorithm::Default
                } else if self.eat_kw("INPLACE") {
                    Algorithm::Inplace
                } else {
                    self.expect_kw("COPY")?;
                    Algorithm::Copy
                });
            } else if !self.table_options(&mut options)? {
                return Err(self.err());
            }
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(Stmt::AlterTable {
            table,
            ops,
            options,
            algorithm,
        })
    }

    /// `[NO_WRITE_TO_BINLOG | LOCAL] TABLE t, ...` of ANALYZE and
    /// OPTIMIZE.
    fn admin_tables(&mut self) -> R<Vec<TableName>> {
        if !self.eat_kw("NO_WRITE_TO_BINLOG") {
            self.eat_kw("LOCAL");
        }
        self.expect_kw("TABLE")?;
        let mut names = vec![self.table_name()?];
        while self.eat_op(",") {
            names.push(self.table_name()?);
        }
        Ok(names)
    }

    /// `FIRST`, `AFTER c`, or nothing.
    fn column_place(&mut self) -> R<ColumnPlace> {
        Ok(if self.eat_kw("FIRST") {
            ColumnPlace::First
        } else if self.eat_kw("AFTER") {
            ColumnPlace::After(self.ident()?)
        } else {
            ColumnPlace::Default
        })
    }

    // ---- DML ----

    /// INSERT, or REPLACE (`replace`).
    fn insert(&mut self, replace: bool) -> R<Stmt> {
        if self.is_kw("DELAYED") {
            // InnoDB has no delayed inserts (MySQL's 1616 names the table).
            return Err(SqlError::unsupported("INSERT DELAYED"));
        }
        if !self.eat_kw("LOW_PRIORITY") {
            self.eat_kw("HIGH_PRIORITY");
        }
        let ignore = self.eat_kw("IGNORE");
        self.eat_kw("INTO");
        let table = self.table_name()?;
        let mut columns = None;
        if self.is_op("(") && !self.is_kw_at(1, "SELECT") {
            self.pos += 1;
            let mut cols = Vec::new();
            if !self.is_op(")") {
                loop {
                    cols.push(self.ident()?);
                    if !self.eat_op(",") {
                        break;
                    }
                }
            }
            self.expect_op(")")?;
            columns = Some(cols);
        }
        let source = if self.eat_kw("VALUES") || self.eat_kw("VALUE") {
            let mut rows = Vec::new();
            loop {
                self.expect_op("(")?;
                let mut row = Vec::new();
                if !self.is_op(")") {
                    loop {
                        row.push(self.expr()?);
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                }
                self.expect_op(")")?;
                rows.push(row);
                if !self.eat_op(",") {
                    break;
                }
            }
            InsertSource::Values(rows)
        } else if self.eat_kw("SET") {
            if columns.is_some() {
                return Err(self.err());
            }
            let mut cols = Vec::new();
            let mut row = Vec::new();
            loop {
                cols.push(self.ident()?);
                self.expect_op("=")?;
                row.push(self.expr()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            columns = Some(cols);
            InsertSource::Values(vec![row])
        } else if self.is_kw("SELECT") || (self.is_op("(") && self.is_kw_at(1, "SELECT")) {
            let paren = self.eat_op("(");
            let s = self.select()?;
            if paren {
                self.expect_op(")")?;
            }
            InsertSource::Select(Box::new(s))
        } else {
            return Err(self.err());
        };
        let mut on_duplicate = if replace {
            OnDuplicate::Replace
        } else if ignore {
            OnDuplicate::Ignore
        } else {
            OnDuplicate::Error
        };
        if !replace && self.eat_kw("ON") {
            self.expect_kw("DUPLICATE")?;
            self.expect_kw("KEY")?;
            self.expect_kw("UPDATE")?;
            let set = self.assignments()?;
            // INSERT IGNORE ... ON DUPLICATE KEY UPDATE updates; IGNORE
            // then only quiets errors of the update.
            on_duplicate = OnDuplicate::Update(set);
        }
        Ok(Stmt::Insert {
            table,
            columns,
            source,
            on_duplicate,
        })
    }

    /// `col = expr, ...` (a column maybe qualified), as UPDATE and ON
    /// DUPLICATE KEY UPDATE write them.
    fn assignments(&mut self) -> R<Vec<(String, Expr)>> {
        let mut set = Vec::new();
        loop {
            let mut col = self.ident()?;
            if self.eat_op(".") {
                col = self.ident()?;
            }
            self.expect_op("=")?;
            set.push((col, self.expr()?));
            if !self.eat_op(",") {
                return Ok(set);
            }
        }
    }

    fn update(&mut self) -> R<Stmt> {
        let table = self.table_name()?;
        self.expect_kw("SET")?;
        let set = self.assignments()?;
        let filter = self.where_clause()?;
        let order_by = self.order_by()?;
        let limit = if self.eat_kw("LIMIT") {
            Some(self.number()?)
        } else {
            None
        };
        Ok(Stmt::Update {
            table,
            set,
            filter,
            order_by,
            limit,
        })
    }

    fn delete(&mut self) -> R<Stmt> {
        self.expect_kw("FROM")?;
        let table = self.table_name()?;
        let filter = self.where_clause()?;
        let order_by = self.order_by()?;
        let limit = if self.eat_kw("LIMIT") {
            Some(self.number()?)
        } else {
            None
        };
        Ok(Stmt::Delete {
            table,
            filter,
            order_by,
            limit,
        })
    }

    fn where_clause(&mut self) -> R<Option<Expr>> {
        if self.eat_kw("WHERE") {
            return Ok(Some(self.expr()?));
        }
        Ok(None)
    }

    fn order_by(&mut self) -> R<Vec<(Expr, bool)>> {
        if self.eat_kw("ORDER") {
            self.expect_kw("BY")?;
            return self.sort_list();
        }
        Ok(Vec::new())
    }

    /// `expr [ASC|DESC], ...` of ORDER BY and GROUP BY.
    fn sort_list(&mut self) -> R<Vec<(Expr, bool)>> {
        let mut out = Vec::new();
        loop {
            let e = self.expr()?;
            let desc = if self.eat_kw("DESC") {
                true
            } else {
                self.eat_kw("ASC");
                false
            };
            out.push((e, desc));
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(out)
    }

    fn select(&mut self) -> R<Select> {
        self.expect_kw("SELECT")?;
        let distinct = if self.eat_kw("DISTINCT") {
            true
        } else {
            self.eat_kw("ALL");
            false
        };
        let mut items = Vec::new();
        loop {
            if self.eat_op("*") {
                items.push(SelectItem::Star(None));
            } else if matches!(self.peek(), Some(Tok::Word { .. }))
                && matches!(self.peek_at(1), Some(Tok::Op(".")))
                && matches!(self.peek_at(2), Some(Tok::Op("*")))
            {
                let table = self.ident()?;
                self.pos += 2;
                items.push(SelectItem::Star(Some(table)));
            } else {
                let start = self.toks.get(self.pos).map_or(self.text.len(), |t| t.start);
                let expr = self.expr()?;
                let end = self.toks[self.pos - 1].end;
                // MySQL names a column by its field's name and a string
                // by its value; anything else by its text as written.
                let text = match &expr {
                    Expr::Column { name, .. } => name.clone(),
                    Expr::Lit(Datum::Str(s)) => String::from_utf8_lossy(s).into_owned(),
                    _ => self.text[start..end].to_string(),
                };
                let alias = if self.eat_kw("AS") {
                    Some(self.ident_or_string()?)
                } else if matches!(self.peek(), Some(Tok::Word { .. }) | Some(Tok::Str(_)))
                    && !self.is_kw("FROM")
                {
                    self.ident_or_string().ok()
                } else {
                    None
                };
                items.push(SelectItem::Expr { expr, alias, text });
            }
            if !self.eat_op(",") {
                break;
            }
        }
        let mut alias = None;
        let mut joins = Vec::new();
        let mut hints = Vec::new();
        let from = if self.eat_kw("FROM") {
            let t = self.table_name()?;
            alias = self.table_alias()?;
            hints = self.index_hints()?;
            loop {
                let (left, natural) = if self.eat_op(",") {
                    (false, false)
                } else if self.eat_kw("NATURAL") {
                    let left = self.eat_kw("LEFT");
                    if left {
                        self.eat_kw("OUTER");
                    }
                    self.expect_kw("JOIN")?;
                    (left, true)
                } else if self.eat_kw("LEFT") {
                    self.eat_kw("OUTER");
                    self.expect_kw("JOIN")?;
                    (true, false)
                } else if self.is_kw("RIGHT") {
                    return Err(SqlError::unsupported("RIGHT JOIN"));
                } else if self.eat_kw("INNER") || self.eat_kw("CROSS") {
                    self.expect_kw("JOIN")?;
                    (false, false)
                } else if self.eat_kw("JOIN") {
                    (false, false)
                } else {
                    break;
                };
                let table = self.table_name()?;
                let alias = self.table_alias()?;
                let mut on = None;
                let mut using = Vec::new();
                if !natural && self.eat_kw("ON") {
                    on = Some(self.expr()?);
                } else if !natural && self.eat_kw("USING") {
                    self.expect_op("(")?;
                    loop {
                        using.push(self.ident()?);
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    self.expect_op(")")?;
                } else if left && !natural {
                    // LEFT JOIN needs its condition.
                    return Err(self.err());
                }
                joins.push(Join {
                    table,
                    alias,
                    left,
                    natural,
                    on,
                    using,
                });
            }
            if self.is_kw("FORCE") || self.is_kw("USE") || self.is_kw("IGNORE") {
                // innosim's joins read each joined table whole.
                return Err(SqlError::unsupported("index hints on a joined table"));
            }
            Some(t)
        } else {
            None
        };
        let filter = self.where_clause()?;
        let mut group_by = Vec::new();
        if self.eat_kw("GROUP") {
            self.expect_kw("BY")?;
            group_by = self.sort_list()?;
            if self.is_kw("WITH") {
                return Err(SqlError::unsupported("WITH ROLLUP"));
            }
        }
        let having = if self.eat_kw("HAVING") {
            Some(self.expr()?)
        } else {
            None
        };
        let order_by = self.order_by()?;
        let mut limit = None;
        if self.eat_kw("LIMIT") {
            let a = self.number()?;
            limit = Some(if self.eat_op(",") {
                (a, self.number()?)
            } else if self.eat_kw("OFFSET") {
                (self.number()?, a)
            } else {
                (0, a)
            });
        }
        let mut lock = LockClause::None;
        let mut wait = Wait::Wait;
        if self.eat_kw("FOR") {
            if self.eat_kw("UPDATE") {
                lock = LockClause::Update;
            } else {
                self.expect_kw("SHARE")?;
                lock = LockClause::Share;
            }
            if self.eat_kw("NOWAIT") {
                wait = Wait::NoWait;
            } else if self.eat_kw("SKIP") {
                self.expect_kw("LOCKED")?;
                wait = Wait::SkipLocked;
            }
        } else if self.eat_kw("LOCK") {
            self.expect_kw("IN")?;
            self.expect_kw("SHARE")?;
            self.expect_kw("MODE")?;
            lock = LockClause::Share;
        }
        Ok(Select {
            distinct,
            items,
            from,
            alias,
            hints,
            joins,
            filter,
            group_by,
            having,
            order_by,
            limit,
            lock,
            wait,
        })
    }

    /// A table's alias after its name, if one is written (`AS a` or `a`).
    /// `{USE | FORCE | IGNORE} {INDEX | KEY} [FOR {JOIN | ORDER BY |
    /// GROUP BY}] (name, ...)`, any number of them.
    fn index_hints(&mut self) -> R<Vec<IndexHint>> {
        let mut hints = Vec::new();
        loop {
            let kind = if self.eat_kw("USE") {
                HintKind::Use
            } else if self.eat_kw("FORCE") {
                HintKind::Force
            } else if self.eat_kw("IGNORE") {
                HintKind::Ignore
            } else {
                return Ok(hints);
            };
            if !self.eat_kw("INDEX") {
                self.expect_kw("KEY")?;
            }
            if self.eat_kw("FOR") {
                if self.eat_kw("ORDER") || self.eat_kw("GROUP") {
                    self.expect_kw("BY")?;
                    // The planner picks an index for the WHERE alone.
                    return Err(SqlError::unsupported(
                        "index hints FOR ORDER BY or GROUP BY",
                    ));
                }
                self.expect_kw("JOIN")?;
            }
            self.expect_op("(")?;
            let mut indexes = Vec::new();
            if !self.eat_op(")") {
                loop {
                    indexes.push(if self.eat_kw("PRIMARY") {
                        "PRIMARY".to_string()
                    } else {
                        self.ident()?
                    });
                    if !self.eat_op(",") {
                        break;
                    }
                }
                self.expect_op(")")?;
            }
            if kind != HintKind::Use && indexes.is_empty() {
                return Err(self.err());
            }
            hints.push(IndexHint { kind, indexes });
        }
    }

    fn table_alias(&mut self) -> R<Option<String>> {
        if self.eat_kw("AS")
            || (matches!(self.peek(), Some(Tok::Word { .. })) && !self.is_reserved_here())
        {
            return self.ident().map(Some);
        }
        Ok(None)
    }

    fn is_reserved_here(&self) -> bool {
        match self.peek() {
            Some(Tok::Word {
                text,
                quoted: false,
            }) => {
                RESERVED.iter().any(|r| r.eq_ignore_ascii_case(text))
                    || [
                        "FORCE",
                        "USE",
                        "IGNORE",
                        "LIMIT",
                        "JOIN",
                        "LEFT",
                        "RIGHT",
                        "INNER",
                        "CROSS",
                        "NATURAL",
                        "ON",
                        "USING",
                        "STRAIGHT_JOIN",
                    ]
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(text))
            }
            _ => false,
        }
    }

    // ---- SET and SHOW ----

    fn set(&mut self) -> R<Stmt> {
        let scope = if self.eat_kw("GLOBAL") {
            Some(Scope::Global)
        } else if self.eat_kw("SESSION") || self.eat_kw("LOCAL") {
            Some(Scope::Session)
        } else {
            None
        };
        if self.eat_kw("TRANSACTION") {
            self.expect_kw("ISOLATION")?;
            self.expect_kw("LEVEL")?;
            let iso = if self.eat_kw("READ") {
                if self.eat_kw("UNCOMMITTED") {
                    Isolation::ReadUncommitted
                } else {
                    self.expect_kw("COMMITTED")?;
                    Isolation::ReadCommitted
                }
            } else if self.eat_kw("REPEATABLE") {
                self.expect_kw("READ")?;
                Isolation::RepeatableRead
            } else {
                self.expect_kw("SERIALIZABLE")?;
                Isolation::Serializable
            };
            return Ok(Stmt::SetIsolation(scope, iso));
        }
        let mut items = Vec::new();
        let mut scope = scope.unwrap_or(Scope::Session);
        loop {
            if !items.is_empty() {
                if self.eat_kw("GLOBAL") {
                    scope = Scope::Global;
                } else if self.eat_kw("SESSION") || self.eat_kw("LOCAL") {
                    scope = Scope::Session;
                }
            }
            let (s, name) = match self.peek() {
                Some(Tok::Word {
                    text,
                    quoted: false,
                }) if text.starts_with("@@") => {
                    let v = text[2..].to_ascii_lowercase();
                    self.pos += 1;
                    match v.split_once('.') {
                        Some(("global", n)) => (Scope::Global, n.to_string()),
                        Some(("session" | "local", n)) => (Scope::Session, n.to_string()),
                        Some(_) => return Err(self.err_prev()),
                        None => (Scope::Session, v),
                    }
                }
                Some(Tok::Word {
                    text,
                    quoted: false,
                }) if text.starts_with('@') => {
                    let n = text[1..].to_ascii_lowercase();
                    self.pos += 1;
                    (Scope::User, n)
                }
                _ => (scope, self.ident()?.to_ascii_lowercase()),
            };
            if !self.eat_op("=") {
                self.expect_op(":")?;
            }
            let value = self.expr()?;
            items.push((s, name, value));
            if !self.eat_op(",") {
                break;
            }
        }
        Ok(Stmt::Set(items))
    }

    /// Whether the token just taken is the keyword `kw`.
    fn prev_is_kw(&self, kw: &str) -> bool {
        self.pos > 0
            && matches!(&self.toks[self.pos - 1].tok, Tok::Word { text, quoted: false } if text.eq_ignore_ascii_case(kw))
    }

    fn err_prev(&self) -> SqlError {
        SqlError::syntax(self.text, self.toks[self.pos - 1].start)
    }

    fn like_or_where(&mut self) -> R<(Option<String>, Option<Expr>)> {
        if self.eat_kw("LIKE") {
            return Ok((Some(self.string()?), None));
        }
        if self.eat_kw("WHERE") {
            return Ok((None, Some(self.expr()?)));
        }
        Ok((None, None))
    }

    fn show(&mut self) -> R<Stmt> {
        let show = if self.eat_kw("TABLES") {
            Show::Tables
        } else if self.eat_kw("DATABASES") || self.eat_kw("SCHEMAS") {
            Show::Databases
        } else if self.eat_kw("TABLE") {
            self.expect_kw("STATUS")?;
            if self.eat_kw("FROM") || self.eat_kw("IN") {
                self.ident()?;
            }
            let (l, w) = self.like_or_where()?;
            Show::TableStatus(l, w)
        } else if self.eat_kw("CREATE") {
            self.expect_kw("TABLE")?;
            Show::CreateTable(self.table_name()?)
        } else if self.eat_kw("WARNINGS") {
            Show::Warnings
        } else if self.eat_kw("ERRORS") {
            Show::Errors
        } else if self.is_kw("VARIABLES") || self.is_kw("GLOBAL") || self.is_kw("SESSION") {
            let scope = if self.eat_kw("GLOBAL") {
                Scope::Global
            } else {
                self.eat_kw("SESSION");
                Scope::Session
            };
            self.expect_kw("VARIABLES")?;
            let (l, w) = self.like_or_where()?;
            Show::Variables(scope, l, w)
        } else if self.eat_kw("INDEX") || self.eat_kw("INDEXES") || self.eat_kw("KEYS") {
            if !self.eat_kw("FROM") {
                self.expect_kw("IN")?;
            }
            Show::Index(self.table_name()?)
        } else if self.eat_kw("COLLATION") {
            let (l, w) = self.like_or_where()?;
            Show::Collation(l, w)
        } else if self.eat_kw("CHARSET") || self.eat_kw("CHARACTER") {
            // CHARACTER SET, or its synonym CHARSET.
            if self.prev_is_kw("CHARACTER") {
                self.expect_kw("SET")?;
            }
            let (l, w) = self.like_or_where()?;
            Show::CharacterSet(l, w)
        } else if self.eat_kw("ENGINE") {
            self.expect_kw("INNODB")?;
            self.expect_kw("STATUS")?;
            Show::InnodbStatus
        } else if self.eat_kw("INNODB") {
            self.expect_kw("STATUS")?;
            Show::InnodbStatus
        } else if self.is_kw("COLUMNS") || self.is_kw("FULL") || self.is_kw("FIELDS") {
            self.eat_kw("FULL");
            if !self.eat_kw("COLUMNS") {
                self.expect_kw("FIELDS")?;
            }
            if !self.eat_kw("FROM") {
                self.expect_kw("IN")?;
            }
            Show::Columns(self.table_name()?)
        } else {
            return Err(self.err());
        };
        Ok(Stmt::Show(show))
    }

    // ---- expressions, by MySQL's precedence ----

    /// An expression.
    pub(super) fn expr(&mut self) -> R<Expr> {
        self.depth_guard(|p| p.or_expr())
    }

    /// Bounds the recursion of nested expressions (MySQL's parser stack
    /// has a limit too), so a statement of ten thousand `(` fails cleanly.
    fn depth_guard(&mut self, f: impl FnOnce(&mut Self) -> R<Expr>) -> R<Expr> {
        thread_local!(static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
        let d = DEPTH.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        let r = if d > 200 {
            Err(SqlError::new(
                1436,
                "Thread stack overrun: the expression is nested too deeply",
            ))
        } else {
            f(self)
        };
        DEPTH.with(|c| c.set(c.get() - 1));
        r
    }

    fn or_expr(&mut self) -> R<Expr> {
        let mut l = self.xor_expr()?;
        while self.eat_kw("OR") || self.eat_op("||") {
            let r = self.xor_expr()?;
            l = Expr::Binary(BinOp::Or, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn xor_expr(&mut self) -> R<Expr> {
        let mut l = self.and_expr()?;
        while self.eat_kw("XOR") {
            let r = self.and_expr()?;
            l = Expr::Binary(BinOp::Xor, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and_expr(&mut self) -> R<Expr> {
        let mut l = self.not_expr()?;
        while self.eat_kw("AND") || self.eat_op("&&") {
            let r = self.not_expr()?;
            l = Expr::Binary(BinOp::And, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn not_expr(&mut self) -> R<Expr> {
        if self.eat_kw("NOT") {
            let e = self.depth_guard(|p| p.not_expr())?;
            return Ok(Expr::Unary(UnOp::Not, Box::new(e)));
        }
        self.predicate()
    }

    fn predicate(&mut self) -> R<Expr> {
        let l = self.additive()?;
        if self.eat_kw("IS") {
            let neg = self.eat_kw("NOT");
            if self.eat_kw("NULL") {
                return Ok(Expr::IsNull(Box::new(l), neg));
            }
            let truth = if self.eat_kw("TRUE") {
                1
            } else {
                self.expect_kw("FALSE")?;
                0
            };
            let cmp = Expr::Binary(
                BinOp::NullSafeEq,
                Box::new(Expr::Unary(
                    UnOp::Not,
                    Box::new(Expr::Unary(UnOp::Not, Box::new(l))),
                )),
                Box::new(Expr::Lit(Datum::Int(truth))),
            );
            return Ok(if neg {
                Expr::Unary(UnOp::Not, Box::new(cmp))
            } else {
                cmp
            });
        }
        let neg = if self.is_kw("NOT")
            && (self.is_kw_at(1, "BETWEEN") || self.is_kw_at(1, "IN") || self.is_kw_at(1, "LIKE"))
        {
            self.pos += 1;
            true
        } else {
            false
        };
        if self.eat_kw("BETWEEN") {
            let lo = self.additive()?;
            self.expect_kw("AND")?;
            let hi = self.additive()?;
            return Ok(Expr::Between(Box::new(l), Box::new(lo), Box::new(hi), neg));
        }
        if self.eat_kw("IN") {
            self.expect_op("(")?;
            if self.is_kw("SELECT") {
                return Err(SqlError::unsupported("subqueries"));
            }
            let mut list = Vec::new();
            loop {
                list.push(self.expr()?);
                if !self.eat_op(",") {
                    break;
                }
            }
            self.expect_op(")")?;
            return Ok(Expr::In(Box::new(l), list, neg));
        }
        if self.eat_kw("LIKE") {
            let pat = self.additive()?;
            return Ok(Expr::Like(Box::new(l), Box::new(pat), neg));
        }
        if neg {
            return Err(self.err());
        }
        let op = match self.peek() {
            Some(Tok::Op("=")) => BinOp::Eq,
            Some(Tok::Op("<=>")) => BinOp::NullSafeEq,
            Some(Tok::Op("<>")) | Some(Tok::Op("!=")) => BinOp::Ne,
            Some(Tok::Op("<")) => BinOp::Lt,
            Some(Tok::Op("<=")) => BinOp::Le,
            Some(Tok::Op(">")) => BinOp::Gt,
            Some(Tok::Op(">=")) => BinOp::Ge,
            _ => return Ok(l),
        };
        self.pos += 1;
        let r = self.additive()?;
        let mut e = Expr::Binary(op, Box::new(l), Box::new(r));
        // `a = b = c` compares left to right, as MySQL.
        while let Some(Tok::Op(o)) = self.peek() {
            let op = match *o {
                "=" => BinOp::Eq,
                "<>" | "!=" => BinOp::Ne,
                "<" => BinOp::Lt,
                "<=" => BinOp::Le,
                ">" => BinOp::Gt,
                ">=" => BinOp::Ge,
                "<=>" => BinOp::NullSafeEq,
                _ => break,
            };
            self.pos += 1;
            let r = self.additive()?;
            e = Expr::Binary(op, Box::new(e), Box::new(r));
        }
        Ok(e)
    }

    fn additive(&mut self) -> R<Expr> {
        let mut l = self.multiplicative()?;
        loop {
            let op = if self.eat_op("+") {
                BinOp::Add
            } else if self.eat_op("-") {
                BinOp::Sub
            } else {
                return Ok(l);
            };
            let r = self.multiplicative()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }

    fn multiplicative(&mut self) -> R<Expr> {
        let mut l = self.unary()?;
        loop {
            let op = if self.eat_op("*") {
                BinOp::Mul
            } else if self.eat_op("/") {
                BinOp::Div
            } else if self.eat_op("%") || self.eat_kw("MOD") {
                BinOp::Mod
            } else if self.eat_kw("DIV") {
                BinOp::IntDiv
            } else {
                return Ok(l);
            };
            let r = self.unary()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }

    fn unary(&mut self) -> R<Expr> {
        if self.eat_op("-") {
            let e = self.depth_guard(|p| p.unary())?;
            if let Expr::Lit(d) = &e {
                if !matches!(d, Datum::Str(_) | Datum::Null) {
                    return Ok(Expr::Lit(super::value::arith(
                        BinOp::Sub,
                        &Datum::Int(0),
                        d,
                    )?));
                }
            }
            return Ok(Expr::Unary(UnOp::Neg, Box::new(e)));
        }
        if self.eat_op("+") {
            return self.depth_guard(|p| p.unary());
        }
        if self.eat_op("!") {
            let e = self.depth_guard(|p| p.unary())?;
            return Ok(Expr::Unary(UnOp::Not, Box::new(e)));
        }
        self.primary()
    }

    fn primary(&mut self) -> R<Expr> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.err());
        };
        match tok {
            Tok::Int(d) => {
                self.pos += 1;
                Ok(Expr::Lit(match d.parse::<i64>() {
                    Ok(i) => Datum::Int(i),
                    Err(_) => match d.parse::<u64>() {
                        Ok(u) => Datum::UInt(u),
                        Err(_) => match d.parse::<i128>() {
                            Ok(v) if v.unsigned_abs() < 10u128.pow(30) => Datum::Dec(v, 0),
                            _ => return Err(self.err_prev()),
                        },
                    },
                }))
            }
            Tok::Decimal(d) => {
                self.pos += 1;
                let (int, frac) = d.split_once('.').unwrap_or((&d, ""));
                let frac = &frac[..frac.len().min(8)];
                let v: i128 = format!("{int}{frac}").parse().unwrap_or(0);
                if int.len() > 30 {
                    return Err(self.err_prev());
                }
                Ok(Expr::Lit(Datum::Dec(v, frac.len() as u8)))
            }
            Tok::Str(s) => {
                self.pos += 1;
                Ok(Expr::Lit(Datum::Str(s)))
            }
            Tok::Hex(b) => {
                self.pos += 1;
                Ok(Expr::Lit(Datum::Hex(b)))
            }
            Tok::Op("(") => {
                self.pos += 1;
                if self.is_kw("SELECT") {
                    return Err(SqlError::unsupported("subqueries"));
                }
                let e = self.expr()?;
                self.expect_op(")")?;
                Ok(e)
            }
            Tok::Word { text, quoted } => {
                if !quoted {
                    if let Some(v) = text.strip_prefix("@@") {
                        self.pos += 1;
                        let v = v.to_ascii_lowercase();
                        return Ok(match v.split_once('.') {
                            Some(("global", n)) => Expr::Var {
                                global: true,
                                name: n.to_string(),
                            },
                            Some(("session" | "local", n)) => Expr::Var {
                                global: false,
                                name: n.to_string(),
                            },
                            Some(_) => return Err(self.err_prev()),
                            None => Expr::Var {
                                global: false,
                                name: v,
                            },
                        });
                    }
                    if let Some(n) = text.strip_prefix('@') {
                        // A user variable: `Var` with its `@` kept.
                        let name = format!("@{}", n.to_ascii_lowercase());
                        self.pos += 1;
                        return Ok(Expr::Var {
                            global: false,
                            name,
                        });
                    }
                    match text.to_ascii_uppercase().as_str() {
                        "NULL" => {
                            self.pos += 1;
                            return Ok(Expr::Lit(Datum::Null));
                        }
                        "TRUE" => {
                            self.pos += 1;
                            return Ok(Expr::Lit(Datum::Int(1)));
                        }
                        "FALSE" => {
                            self.pos += 1;
                            return Ok(Expr::Lit(Datum::Int(0)));
                        }
                        "DEFAULT" => {
                            self.pos += 1;
                            return Ok(Expr::Call {
                                name: "default".into(),
                                args: vec![],
                                star: false,
                                distinct: false,
                            });
                        }
                        "ON" if self
                            .peek_at(1)
                            .is_none_or(|t| matches!(t, Tok::Op(",") | Tok::Op(";"))) =>
                        {
                            // `SET x = ON`.
                            self.pos += 1;
                            return Ok(Expr::Column {
                                table: None,
                                name: "ON".into(),
                            });
                        }
                        _ => {}
                    }
                    if matches!(self.peek_at(1), Some(Tok::Op("("))) {
                        return self.call(text.to_ascii_lowercase());
                    }
                }
                let first = self.ident()?;
                if self.eat_op(".") {
                    let name = self.ident()?;
                    return Ok(Expr::Column {
                        table: Some(first),
                        name,
                    });
                }
                Ok(Expr::Column {
                    table: None,
                    name: first,
                })
            }
            Tok::Op(_) => Err(self.err()),
        }
    }

    fn call(&mut self, name: String) -> R<Expr> {
        self.pos += 2;
        let mut args = Vec::new();
        let mut star = false;
        let mut distinct = false;
        if self.eat_op("*") {
            star = true;
        } else if !self.is_op(")") {
            distinct = self.eat_kw("DISTINCT");
            loop {
                args.push(self.expr()?);
                if !self.eat_op(",") {
                    break;
                }
            }
        }
        self.expect_op(")")?;
        if star && name != "count" {
            return Err(self.err_prev());
        }
        Ok(Expr::Call {
            name,
            args,
            star,
            distinct,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(t: &str) -> Stmt {
        parse(t).unwrap_or_else(|e| panic!("{t}: {e}"))
    }

    fn near(t: &str) -> String {
        let e = parse(t).unwrap_err();
        assert_eq!(e.code, 1064, "{t}: {e}");
        let m = e.message;
        let a = m.find("near '").unwrap() + 6;
        let b = m.rfind("' at line").unwrap();
        m[a..b].to_string()
    }

    #[test]
    fn the_seeds_statements_parse() {
        for t in [
            "CREATE TABLE `sbtest` ( `id` int(10) unsigned NOT NULL, `k` int(10) unsigned NOT NULL DEFAULT '0', `c` char(120) NOT NULL DEFAULT '', `pad` char(60) NOT NULL DEFAULT '', PRIMARY KEY (`id`), KEY `k` (`k`) ) ENGINE=InnoDB",
            "create table test(c1 int primary key) engine=InnoDB ROW_FORMAT=Compressed KEY_BLOCK_SIZE=8",
            "create table t (id int auto_increment, primary key(id)) /*!40100 DEFAULT CHARSET=latin1 */",
            "alter table testformat row_format=Compressed",
            "alter table t add index k (k), add index j(j)",
            "alter table t add index k(k), algorithm=copy",
            "alter table t engine=innodb",
            "drop index k on sbtest",
            "create index k on sbtest(k)",
            "truncate table sbtest",
            "optimize table sbtest",
            "check table sbtest, t extended",
            "select k, count(*) n from sbtest group by k desc having n > 1 order by 2",
            "select * from t where id=1 lock in share mode",
            "select * from t where id=1 for update nowait",
            "select c from sbtest where id between 1 and 10 order by c limit 5",
            "select distinct c from sbtest where id in (1,2,3)",
            "select count(*), sum(k) from t",
            "show table status like 'sbtest'",
            "show table status where Name='x'",
            "show variables like '%format%'",
            "show engine innodb status",
            "set global innodb_file_format='Barracuda'",
            "set global innodb_file_format=Barracuda",
            "set session innodb_strict_mode=on",
            "set @@session.tx_isolation='READ-COMMITTED'",
            "set session transaction isolation level read committed",
            "rollback to savepoint a",
            "insert into t values (1,'a'),(2,'b')",
            "insert into t select * from u",
            "update t set k=k+1 where id=5",
            "delete from t where id >= 5 and id < 10;",
            "select * from information_schema.innodb_trx",
            "create table t2 like t",
            "alter table t drop primary key, add primary key (id)",
        ] {
            ok(t);
        }
    }

    #[test]
    fn precedence_is_mysqls() {
        let Stmt::Select(s) = ok("select 1 + 2 * 3 = 7 and not 0 or 0") else {
            panic!()
        };
        let SelectItem::Expr { expr, text, .. } = &s.items[0] else {
            panic!()
        };
        assert_eq!(text, "1 + 2 * 3 = 7 and not 0 or 0");
        assert!(matches!(expr, Expr::Binary(BinOp::Or, ..)));
    }

    #[test]
    fn syntax_errors_quote_from_the_failing_token() {
        assert_eq!(near("selec * from t"), "selec * from t");
        assert_eq!(near("select * from t where"), "");
        assert_eq!(near("select * from t wher id = 1"), "id = 1");
        assert_eq!(near("create table t (a int,)"), ")");
        assert_eq!(near("insert into t values (1,"), "");
        assert_eq!(near("update t set where id = 1"), "where id = 1");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let t = format!("select {}1{}", "(".repeat(5000), ")".repeat(5000));
        assert!(parse(&t).is_err());
        let t = format!("select {}1", "-".repeat(5000));
        assert!(parse(&t).is_err());
    }
}

/// The keys a column definition of ALTER TABLE declares on itself
/// (`ADD COLUMN c INT PRIMARY KEY`, `... UNIQUE`), as index additions.
fn column_keys(spec: &ColumnSpec) -> Vec<AlterOp> {
    let key = |primary: bool| {
        AlterOp::AddIndex(IndexSpec {
            name: (!primary).then(|| spec.name.clone()),
            columns: vec![spec.name.clone()],
            prefixes: vec![None],
            unique: true,
            primary,
        })
    };
    let mut out = Vec::new();
    if spec.primary {
        out.push(key(true));
    }
    if spec.unique {
        out.push(key(false));
    }
    out
}
