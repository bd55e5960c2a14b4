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

mod ddl;
mod dml;
mod expr;
mod set_show;

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
            "CHECKSUM" => {
                self.expect_kw("TABLE")?;
                let mut tables = vec![self.table_name()?];
                while self.eat_op(",") {
                    tables.push(self.table_name()?);
                }
                let quick = self.eat_kw("QUICK");
                if !quick {
                    self.eat_kw("EXTENDED");
                }
                Ok(Stmt::Checksum { tables, quick })
            }
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
                if self.eat_kw("WITH") {
                    self.expect_kw("CONSISTENT")?;
                    self.expect_kw("SNAPSHOT")?;
                    return Ok(Stmt::BeginSnapshot);
                }
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
            "KILL" => {
                let query = if self.eat_kw("QUERY") {
                    true
                } else {
                    self.eat_kw("CONNECTION");
                    false
                };
                Ok(Stmt::Kill {
                    id: self.expr()?,
                    query,
                })
            }
            "RELEASE" => {
                self.expect_kw("SAVEPOINT")?;
                Ok(Stmt::Release(self.ident()?))
            }
            "SET" => self.set(),
            "SHOW" => self.show(),
            "DESC" | "DESCRIBE" | "EXPLAIN" if self.is_kw("SELECT") => {
                Ok(Stmt::Explain(Box::new(self.select()?)))
            }
            "DESC" | "DESCRIBE" | "EXPLAIN"
                if self.is_kw("EXTENDED") || self.is_kw("PARTITIONS") =>
            {
                Err(SqlError::unsupported(
                    "EXPLAIN EXTENDED and EXPLAIN PARTITIONS",
                ))
            }
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
