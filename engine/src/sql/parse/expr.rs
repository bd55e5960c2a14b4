//! The parser's expressions, by MySQL's precedence (`sql_yacc.yy`).

use super::*;

impl Parser<'_> {
    /// An expression.
    pub(super) fn expr(&mut self) -> R<Expr> {
        self.depth_guard(|p| p.or_expr())
    }

    /// Bounds the recursion of nested expressions (MySQL's parser stack
    /// has a limit too), so a statement of ten thousand `(` fails cleanly.
    pub(super) fn depth_guard(&mut self, f: impl FnOnce(&mut Self) -> R<Expr>) -> R<Expr> {
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

    pub(super) fn or_expr(&mut self) -> R<Expr> {
        let mut l = self.xor_expr()?;
        while self.eat_kw("OR") || self.eat_op("||") {
            let r = self.xor_expr()?;
            l = Expr::Binary(BinOp::Or, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    pub(super) fn xor_expr(&mut self) -> R<Expr> {
        let mut l = self.and_expr()?;
        while self.eat_kw("XOR") {
            let r = self.and_expr()?;
            l = Expr::Binary(BinOp::Xor, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    pub(super) fn and_expr(&mut self) -> R<Expr> {
        let mut l = self.not_expr()?;
        while self.eat_kw("AND") || self.eat_op("&&") {
            let r = self.not_expr()?;
            l = Expr::Binary(BinOp::And, Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    pub(super) fn not_expr(&mut self) -> R<Expr> {
        if self.eat_kw("NOT") {
            let e = self.depth_guard(|p| p.not_expr())?;
            return Ok(Expr::Unary(UnOp::Not, Box::new(e)));
        }
        self.predicate()
    }

    pub(super) fn predicate(&mut self) -> R<Expr> {
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

    pub(super) fn additive(&mut self) -> R<Expr> {
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

    pub(super) fn multiplicative(&mut self) -> R<Expr> {
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

    pub(super) fn unary(&mut self) -> R<Expr> {
        if self.eat_op("-") {
            let e = self.depth_guard(|p| p.unary())?;
            if let Expr::Lit(d) = &e {
                if !matches!(d, Datum::Str(_) | Datum::Null) {
                    return Ok(Expr::Lit(crate::sql::value::arith(
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

    pub(super) fn primary(&mut self) -> R<Expr> {
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
            Tok::Float(f) => {
                self.pos += 1;
                match f.parse::<f64>() {
                    Ok(x) if x.is_finite() => {
                        Ok(Expr::Lit(Datum::real(x, crate::sql::value::RealFmt::G(15))))
                    }
                    // MySQL: "Illegal double '1e999' value found during
                    // parsing".
                    _ => Err(SqlError::new(
                        1367,
                        format!("Illegal double '{f}' value found during parsing"),
                    )),
                }
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

    pub(super) fn call(&mut self, name: String) -> R<Expr> {
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
