//! The parser's DML: INSERT and REPLACE, UPDATE, DELETE and SELECT (its
//! FROM, joins and index hints).

use super::*;

impl Parser<'_> {
    /// INSERT, or REPLACE (`replace`).
    pub(super) fn insert(&mut self, replace: bool) -> R<Stmt> {
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
    pub(super) fn assignments(&mut self) -> R<Vec<(String, Expr)>> {
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

    /// UPDATE's and DELETE's `LIMIT n`, if written.
    fn single_limit(&mut self) -> R<Option<u64>> {
        Ok(if self.eat_kw("LIMIT") {
            Some(self.number()?)
        } else {
            None
        })
    }

    pub(super) fn update(&mut self) -> R<Stmt> {
        let table = self.table_name()?;
        self.expect_kw("SET")?;
        let set = self.assignments()?;
        let filter = self.where_clause()?;
        let order_by = self.order_by()?;
        let limit = self.single_limit()?;
        Ok(Stmt::Update {
            table,
            set,
            filter,
            order_by,
            limit,
        })
    }

    pub(super) fn delete(&mut self) -> R<Stmt> {
        self.expect_kw("FROM")?;
        let table = self.table_name()?;
        let filter = self.where_clause()?;
        let order_by = self.order_by()?;
        let limit = self.single_limit()?;
        Ok(Stmt::Delete {
            table,
            filter,
            order_by,
            limit,
        })
    }

    pub(super) fn where_clause(&mut self) -> R<Option<Expr>> {
        if self.eat_kw("WHERE") {
            return Ok(Some(self.expr()?));
        }
        Ok(None)
    }

    pub(super) fn order_by(&mut self) -> R<Vec<(Expr, bool)>> {
        if self.eat_kw("ORDER") {
            self.expect_kw("BY")?;
            return self.sort_list();
        }
        Ok(Vec::new())
    }

    /// `expr [ASC|DESC], ...` of ORDER BY and GROUP BY.
    pub(super) fn sort_list(&mut self) -> R<Vec<(Expr, bool)>> {
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

    pub(super) fn select(&mut self) -> R<Select> {
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
    pub(super) fn index_hints(&mut self) -> R<Vec<IndexHint>> {
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

    pub(super) fn table_alias(&mut self) -> R<Option<String>> {
        if self.eat_kw("AS")
            || (matches!(self.peek(), Some(Tok::Word { .. })) && !self.is_reserved_here())
        {
            return self.ident().map(Some);
        }
        Ok(None)
    }

    pub(super) fn is_reserved_here(&self) -> bool {
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
}
