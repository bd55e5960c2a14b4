//! The parser's SET and SHOW statements.

use super::*;

impl Parser<'_> {
    pub(super) fn set(&mut self) -> R<Stmt> {
        let scope = if self.eat_kw("GLOBAL") {
            Some(Scope::Global)
        } else if self.eat_kw("SESSION") || self.eat_kw("LOCAL") {
            Some(Scope::Session)
        } else {
            None
        };
        // SET NAMES x [COLLATE y] and SET CHARACTER SET x
        // (sql_yacc.yy's option_value: set_names, charset): the
        // connection's character set variables.
        let charset = |p: &mut Self| -> R<Expr> {
            if p.eat_kw("DEFAULT") {
                return Ok(Expr::Lit(Datum::str("latin1")));
            }
            let name = if matches!(p.peek(), Some(Tok::Str(_))) {
                p.string()?
            } else {
                p.ident()?
            };
            Ok(Expr::Lit(Datum::str(&name)))
        };
        if self.eat_kw("NAMES") {
            let cs = charset(self)?;
            let mut items = vec![
                (
                    Scope::Session,
                    "character_set_client".to_string(),
                    cs.clone(),
                ),
                (
                    Scope::Session,
                    "character_set_results".to_string(),
                    cs.clone(),
                ),
                (Scope::Session, "character_set_connection".to_string(), cs),
            ];
            if self.eat_kw("COLLATE") {
                let coll = charset(self)?;
                items.push((Scope::Session, "collation_connection".to_string(), coll));
            }
            return Ok(Stmt::Set(items));
        }
        if self.eat_kw("CHARSET")
            || (self.is_kw("CHARACTER") && {
                self.pos += 1;
                self.expect_kw("SET")?;
                true
            })
        {
            let cs = charset(self)?;
            return Ok(Stmt::Set(vec![
                (
                    Scope::Session,
                    "character_set_client".to_string(),
                    cs.clone(),
                ),
                (Scope::Session, "character_set_results".to_string(), cs),
                // The connection's character set becomes the database's.
                (
                    Scope::Session,
                    "character_set_connection".to_string(),
                    Expr::Lit(Datum::str("latin1")),
                ),
            ]));
        }
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

    /// Whether the token `ahead` places past the next is the keyword `kw`.
    pub(super) fn peek_kw_at(&self, ahead: usize, kw: &str) -> bool {
        matches!(self.toks.get(self.pos + ahead).map(|t| &t.tok),
            Some(Tok::Word { text, quoted: false }) if text.eq_ignore_ascii_case(kw))
    }

    /// Whether the token just taken is the keyword `kw`.
    pub(super) fn prev_is_kw(&self, kw: &str) -> bool {
        self.pos > 0
            && matches!(&self.toks[self.pos - 1].tok, Tok::Word { text, quoted: false } if text.eq_ignore_ascii_case(kw))
    }

    pub(super) fn err_prev(&self) -> SqlError {
        SqlError::syntax(self.text, self.toks[self.pos - 1].start)
    }

    pub(super) fn like_or_where(&mut self) -> R<(Option<String>, Option<Expr>)> {
        if self.eat_kw("LIKE") {
            return Ok((Some(self.string()?), None));
        }
        if self.eat_kw("WHERE") {
            return Ok((None, Some(self.expr()?)));
        }
        Ok((None, None))
    }

    pub(super) fn show(&mut self) -> R<Stmt> {
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
        } else if self.eat_kw("PROCESSLIST") {
            Show::Processlist { full: false }
        } else if self.is_kw("FULL") && self.peek_kw_at(1, "PROCESSLIST") {
            self.pos += 2;
            Show::Processlist { full: true }
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
}
