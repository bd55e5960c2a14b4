//! Evaluating expressions over a row, and the select list's aggregates.
//! Mirrors the semantics of MySQL's `Item` classes for the operators and
//! functions innosim has: three-valued logic, NULL propagation, LIKE with
//! `%` and `_`.

use super::ast::{BinOp, Expr, UnOp};
use super::error::SqlError;
use super::value::{arith, int_datum, Datum};
use crate::record::collation::Collation;
use std::cmp::Ordering;

/// How strongly an operand's collation holds (MySQL's coercibility: the
/// lower wins when two operands differ).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Coercibility {
    /// A table's column.
    Implicit = 2,
    /// A variable.
    SysConst = 3,
    /// A literal, and what is computed from literals.
    Coercible = 4,
    /// No string at all (numbers, NULL).
    Ignorable = 6,
}

/// The connection's collation (`collation_connection`), literals' own.
pub const CONNECTION_COLLATION: Collation = Collation::Latin1SwedishCi;

/// The collation of an expression's string value and how strongly it
/// holds, derived as MySQL's `Item::collation` is: a column's own, a
/// literal's the connection's, a function's that of its string arguments.
fn derive(e: &Expr, cols: &Columns<'_>) -> (Collation, Coercibility) {
    match e {
        Expr::Column { table, name } => match cols.find(table.as_deref(), name) {
            Ok(i) => (
                cols.collations
                    .and_then(|c| c.get(i).copied())
                    .unwrap_or(CONNECTION_COLLATION),
                Coercibility::Implicit,
            ),
            Err(_) => (CONNECTION_COLLATION, Coercibility::Coercible),
        },
        Expr::Lit(Datum::Str(_)) => (CONNECTION_COLLATION, Coercibility::Coercible),
        Expr::Lit(_) => (CONNECTION_COLLATION, Coercibility::Ignorable),
        Expr::Var { .. } => (CONNECTION_COLLATION, Coercibility::SysConst),
        Expr::Call { args, .. } => args
            .iter()
            .map(|a| derive(a, cols))
            .min_by_key(|d| d.1)
            .unwrap_or((CONNECTION_COLLATION, Coercibility::Coercible)),
        _ => (CONNECTION_COLLATION, Coercibility::Ignorable),
    }
}

/// The collation an expression's strings sort and group in.
pub fn collation_of(e: &Expr, cols: &Columns<'_>) -> Collation {
    derive(e, cols).0
}

/// The collation two operands compare in: the one that holds more
/// strongly (the left's on a tie).
fn pair(a: &Expr, b: &Expr, cols: &Columns<'_>) -> Collation {
    let (ca, xa) = derive(a, cols);
    let (cb, xb) = derive(b, cols);
    if xb < xa {
        cb
    } else {
        ca
    }
}

/// Names the columns of the rows an expression is evaluated over.
#[derive(Clone, Copy)]
pub struct Columns<'a> {
    /// The column names, in row order.
    pub names: &'a [String],
    /// Their collations, in row order; `None`: the rows are the server's
    /// own (SHOW, information_schema), whose strings compare as
    /// latin1_swedish_ci.
    pub collations: Option<&'a [Collation]>,
    /// The table name (or alias) a qualified column must name.
    pub table: Option<&'a str>,
    /// The clause named in a 1054 error.
    pub clause: &'a str,
    /// For the rows of a join: which table each column comes from.
    pub join: Option<&'a JoinColumns>,
}

/// The columns of a join's rows, each table's after the one before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinColumns {
    /// The table (its alias, if it has one) each column comes from.
    pub tables: Vec<String>,
    /// The columns an unqualified name does not find: the right side's
    /// copy of a USING or NATURAL column, which is the left side's.
    pub merged: Vec<bool>,
}

impl Columns<'static> {
    /// No columns: a constant expression (a VALUES row, SET's value),
    /// whose column names are unknown in the field list.
    pub fn none() -> Columns<'static> {
        Columns {
            names: &[],
            collations: None,
            table: None,
            clause: "field list",
            join: None,
        }
    }
}

impl<'a> Columns<'a> {
    /// The same columns, named in another clause's errors.
    pub fn in_clause(self, clause: &'a str) -> Columns<'a> {
        Columns { clause, ..self }
    }

    /// The position of a column.
    pub fn find(&self, table: Option<&str>, name: &str) -> Result<usize, SqlError> {
        let shown = || match table {
            Some(t) => format!("{t}.{name}"),
            None => name.to_string(),
        };
        if let Some(j) = self.join {
            let mut found = (0..self.names.len()).filter(|&i| {
                self.names[i].eq_ignore_ascii_case(name)
                    && match table {
                        Some(t) => j.tables[i].eq_ignore_ascii_case(t),
                        None => !j.merged[i],
                    }
            });
            let first = found
                .next()
                .ok_or_else(|| SqlError::bad_field(&shown(), self.clause))?;
            if found.next().is_some() {
                return Err(SqlError::new(
                    1052,
                    format!("Column '{}' in {} is ambiguous", shown(), self.clause),
                ));
            }
            return Ok(first);
        }
        if let (Some(t), Some(mine)) = (table, self.table) {
            if !t.eq_ignore_ascii_case(mine) {
                return Err(SqlError::bad_field(&shown(), self.clause));
            }
        }
        self.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| SqlError::bad_field(&shown(), self.clause))
    }
}

/// Values a system variable reference reads.
pub trait Vars {
    /// `@@[global.]name`.
    fn var(&self, global: bool, name: &str) -> Result<Datum, SqlError>;

    /// A function of the connection (`DATABASE()`, `LAST_INSERT_ID()`,
    /// `CONNECTION_ID()`): `None` when `name` is not one, or there is no
    /// connection.
    fn connection_function(&self, _name: &str, _args: &[Datum]) -> Option<Result<Datum, SqlError>> {
        None
    }
}

/// Checks that every column `e` names exists (MySQL resolves names
/// before it reads a row, so an unknown column fails on an empty table
/// too).
pub fn check_names(e: &Expr, cols: &Columns<'_>) -> Result<(), SqlError> {
    match e {
        Expr::Column { table, name } => cols.find(table.as_deref(), name).map(|_| ()),
        Expr::Lit(_) | Expr::Var { .. } => Ok(()),
        Expr::Unary(_, x) | Expr::IsNull(x, _) => check_names(x, cols),
        Expr::Binary(_, a, b) | Expr::Like(a, b, _) => {
            check_names(a, cols)?;
            check_names(b, cols)
        }
        Expr::Between(a, b, c, _) => {
            check_names(a, cols)?;
            check_names(b, cols)?;
            check_names(c, cols)
        }
        Expr::In(a, l, _) => {
            check_names(a, cols)?;
            l.iter().try_for_each(|x| check_names(x, cols))
        }
        Expr::Call { args, .. } => args.iter().try_for_each(|x| check_names(x, cols)),
    }
}

/// Evaluates `e` over `row` (`None`: no row, as in `SELECT 1 + 1`).
pub fn eval(
    e: &Expr,
    row: Option<&[Datum]>,
    cols: &Columns<'_>,
    vars: &dyn Vars,
) -> Result<Datum, SqlError> {
    Ok(match e {
        Expr::Lit(d) => d.clone(),
        Expr::Column { table, name } => {
            let i = cols.find(table.as_deref(), name)?;
            match row {
                Some(r) => r[i].clone(),
                None => return Err(SqlError::bad_field(name, cols.clause)),
            }
        }
        Expr::Var { global, name } => vars.var(*global, name)?,
        Expr::Unary(UnOp::Neg, x) => arith(BinOp::Sub, &Datum::Int(0), &eval(x, row, cols, vars)?)?,
        Expr::Unary(UnOp::Not, x) => bool_datum(eval(x, row, cols, vars)?.truth().map(|b| !b)),
        Expr::Binary(op, l, r) => {
            let a = eval(l, row, cols, vars)?;
            match op {
                BinOp::And => {
                    // FALSE AND anything is FALSE, NULL or not.
                    let x = a.truth();
                    if x == Some(false) {
                        return Ok(Datum::Int(0));
                    }
                    let y = eval(r, row, cols, vars)?.truth();
                    bool_datum(match (x, y) {
                        (_, Some(false)) => Some(false),
                        (Some(true), Some(true)) => Some(true),
                        _ => None,
                    })
                }
                BinOp::Or => {
                    let x = a.truth();
                    if x == Some(true) {
                        return Ok(Datum::Int(1));
                    }
                    let y = eval(r, row, cols, vars)?.truth();
                    bool_datum(match (x, y) {
                        (_, Some(true)) => Some(true),
                        (Some(false), Some(false)) => Some(false),
                        _ => None,
                    })
                }
                BinOp::Xor => {
                    let y = eval(r, row, cols, vars)?.truth();
                    bool_datum(a.truth().zip(y).map(|(x, y)| x != y))
                }
                _ => {
                    let b = eval(r, row, cols, vars)?;
                    binary(*op, &a, &b, pair(l, r, cols))?
                }
            }
        }
        Expr::IsNull(x, neg) => bool_datum(Some(eval(x, row, cols, vars)?.is_null() != *neg)),
        Expr::Between(x, lo_e, hi_e, neg) => {
            let v = eval(x, row, cols, vars)?;
            let lo = eval(lo_e, row, cols, vars)?;
            let hi = eval(hi_e, row, cols, vars)?;
            let (cl, ch) = (pair(x, lo_e, cols), pair(x, hi_e, cols));
            let a = v.compare_in(&lo, cl).map(|o| o != Ordering::Less);
            let b = v.compare_in(&hi, ch).map(|o| o != Ordering::Greater);
            let inside = match (a, b) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            bool_datum(inside.map(|i| i != *neg))
        }
        Expr::In(x, list, neg) => {
            let v = eval(x, row, cols, vars)?;
            if v.is_null() {
                return Ok(Datum::Null);
            }
            let mut unknown = false;
            let mut found = false;
            for item in list {
                match v.compare_in(&eval(item, row, cols, vars)?, pair(x, item, cols)) {
                    Some(Ordering::Equal) => {
                        found = true;
                        break;
                    }
                    None => unknown = true,
                    _ => {}
                }
            }
            bool_datum(if found {
                Some(!*neg)
            } else if unknown {
                None
            } else {
                Some(*neg)
            })
        }
        Expr::Like(x, p_e, neg) => {
            let v = eval(x, row, cols, vars)?;
            let p = eval(p_e, row, cols, vars)?;
            if v.is_null() || p.is_null() {
                return Ok(Datum::Null);
            }
            let coll = pair(x, p_e, cols);
            let m = like(v.render().as_bytes(), p.render().as_bytes(), |a, b| {
                coll.weight(a) == coll.weight(b)
            });
            bool_datum(Some(m != *neg))
        }
        Expr::Call { name, args, .. } => {
            if is_aggregate(name) {
                return Err(SqlError::new(1111, "Invalid use of group function"));
            }
            let vals = args
                .iter()
                .map(|a| eval(a, row, cols, vars))
                .collect::<Result<Vec<_>, _>>()?;
            match vars.connection_function(name, &vals) {
                Some(r) => r?,
                None => function(name, &vals)?,
            }
        }
    })
}

fn bool_datum(b: Option<bool>) -> Datum {
    match b {
        None => Datum::Null,
        Some(b) => Datum::Int(i64::from(b)),
    }
}

fn binary(op: BinOp, a: &Datum, b: &Datum, coll: Collation) -> Result<Datum, SqlError> {
    Ok(match op {
        BinOp::NullSafeEq => Datum::Int(i64::from(match (a.is_null(), b.is_null()) {
            (true, true) => true,
            (false, false) => a.compare_in(b, coll) == Some(Ordering::Equal),
            _ => false,
        })),
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            bool_datum(a.compare_in(b, coll).map(|o| match op {
                BinOp::Eq => o == Ordering::Equal,
                BinOp::Ne => o != Ordering::Equal,
                BinOp::Lt => o == Ordering::Less,
                BinOp::Le => o != Ordering::Greater,
                BinOp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }))
        }
        _ => arith(op, a, b)?,
    })
}

/// `LIKE` with `%`, `_` and `\` escapes, characters matching when `eq`
/// says so (by their weights in the comparison's collation, as
/// `my_wildcmp_8bit` matches through the sort order).
pub(crate) fn like(s: &[u8], p: &[u8], eq: impl Fn(u8, u8) -> bool) -> bool {
    // Iterative matching with backtracking to the last `%`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < p.len() {
            match p[j] {
                b'%' => {
                    star = Some((j, i));
                    j += 1;
                    continue;
                }
                b'_' => {
                    i += 1;
                    j += 1;
                    continue;
                }
                b'\\' if j + 1 < p.len() && eq(p[j + 1], s[i]) => {
                    i += 1;
                    j += 2;
                    continue;
                }
                b'\\' if j + 1 < p.len() => {}
                c if eq(c, s[i]) => {
                    i += 1;
                    j += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sj, si)) => {
                j = sj + 1;
                i = si + 1;
                star = Some((sj, si + 1));
            }
            None => return false,
        }
    }
    p[j..].iter().all(|&c| c == b'%')
}

/// Whether a function name is an aggregate.
pub fn is_aggregate(name: &str) -> bool {
    matches!(name, "count" | "sum" | "min" | "max" | "avg")
}

/// Whether an expression contains an aggregate.
pub fn has_aggregate(e: &Expr) -> bool {
    match e {
        Expr::Call { name, args, .. } => is_aggregate(name) || args.iter().any(has_aggregate),
        Expr::Unary(_, x) | Expr::IsNull(x, _) => has_aggregate(x),
        Expr::Binary(_, a, b) | Expr::Like(a, b, _) => has_aggregate(a) || has_aggregate(b),
        Expr::Between(a, b, c, _) => has_aggregate(a) || has_aggregate(b) || has_aggregate(c),
        Expr::In(a, l, _) => has_aggregate(a) || l.iter().any(has_aggregate),
        Expr::Lit(_) | Expr::Column { .. } | Expr::Var { .. } => false,
    }
}

/// Evaluates an expression with aggregates over all `rows` (no GROUP BY:
/// one group). Columns outside an aggregate take the first row's value, as
/// MySQL does without ONLY_FULL_GROUP_BY.
pub fn eval_aggregate(
    e: &Expr,
    rows: &[Vec<Datum>],
    cols: &Columns<'_>,
    vars: &dyn Vars,
) -> Result<Datum, SqlError> {
    match e {
        Expr::Call {
            name,
            args,
            star,
            distinct,
        } if is_aggregate(name) => {
            if args.iter().any(has_aggregate) {
                return Err(SqlError::new(1111, "Invalid use of group function"));
            }
            let mut vals = Vec::new();
            for r in rows {
                let v = if *star {
                    Datum::Int(1)
                } else {
                    match args.as_slice() {
                        [a] => eval(a, Some(r), cols, vars)?,
                        _ => {
                            return Err(SqlError::new(
                                1064,
                                format!(
                                "Incorrect parameter count in the call to native function '{name}'"
                            ),
                            ))
                        }
                    }
                };
                if !v.is_null() {
                    vals.push(v);
                }
            }
            if *distinct {
                vals.sort_by(|a, b| a.sort_cmp(b));
                vals.dedup_by(|a, b| a.sort_cmp(b) == Ordering::Equal);
            }
            Ok(match name.as_str() {
                "count" => Datum::Int(vals.len() as i64),
                "min" => vals
                    .into_iter()
                    .min_by(|a, b| a.sort_cmp(b))
                    .unwrap_or(Datum::Null),
                "max" => vals
                    .into_iter()
                    .max_by(|a, b| a.sort_cmp(b))
                    .unwrap_or(Datum::Null),
                "sum" | "avg" => {
                    if vals.is_empty() {
                        return Ok(Datum::Null);
                    }
                    let n = vals.len() as i64;
                    let mut total = Datum::Int(0);
                    for v in &vals {
                        total = arith(BinOp::Add, &total, v)?;
                    }
                    if name == "avg" {
                        arith(BinOp::Div, &total, &Datum::Int(n))?
                    } else {
                        total
                    }
                }
                _ => unreachable!("an aggregate"),
            })
        }
        _ => {
            // Each aggregate inside becomes its value; what is left reads
            // the first row (columns outside an aggregate), or no row.
            let folded = fold_aggregates(e, rows, cols, vars)?;
            match rows.first() {
                Some(r) => eval(&folded, Some(r), cols, vars),
                None => eval_without_row(&folded, cols, vars),
            }
        }
    }
}

/// `e` with each aggregate call replaced by its value over `rows`.
fn fold_aggregates(
    e: &Expr,
    rows: &[Vec<Datum>],
    cols: &Columns<'_>,
    vars: &dyn Vars,
) -> Result<Expr, SqlError> {
    e.rewrite(&mut |x| match x {
        Expr::Call { name, .. } if is_aggregate(name) => {
            Ok(Some(Expr::Lit(eval_aggregate(x, rows, cols, vars)?)))
        }
        _ => Ok(None),
    })
}

/// An expression of an aggregate query over no rows: a column outside an
/// aggregate is NULL there, as in MySQL.
fn eval_without_row(e: &Expr, cols: &Columns<'_>, vars: &dyn Vars) -> Result<Datum, SqlError> {
    let probe = vec![Datum::Null; cols.names.len()];
    eval(e, Some(&probe), cols, vars)
}

/// The scalar functions.
fn function(name: &str, a: &[Datum]) -> Result<Datum, SqlError> {
    let argc = |n: usize| -> Result<(), SqlError> {
        if a.len() == n {
            Ok(())
        } else {
            Err(SqlError::new(
                1582,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ))
        }
    };
    Ok(match name {
        "abs" => {
            argc(1)?;
            match &a[0] {
                Datum::Null => Datum::Null,
                d if d.compare(&Datum::Int(0)) == Some(Ordering::Less) => {
                    arith(BinOp::Sub, &Datum::Int(0), d)?
                }
                d => d.clone(),
            }
        }
        "length" | "octet_length" | "char_length" | "character_length" => {
            argc(1)?;
            if a[0].is_null() {
                Datum::Null
            } else {
                Datum::Int(a[0].to_bytes().len() as i64)
            }
        }
        "hex" => {
            argc(1)?;
            match &a[0] {
                Datum::Null => Datum::Null,
                // A string's bytes; a number's value (MySQL: HEX(255) is
                // 'FF'), a fraction rounded first.
                Datum::Str(b) | Datum::Hex(b) => Datum::Str(
                    b.iter()
                        .flat_map(|x| format!("{x:02X}").into_bytes())
                        .collect(),
                ),
                d => {
                    let v = d.to_value();
                    let n: i128 = match v {
                        crate::Value::Int(i) => i128::from(i),
                        crate::Value::UInt(u) => i128::from(u),
                        _ => d.as_i128().unwrap_or(0),
                    };
                    // A negative number is its 64-bit two's complement.
                    Datum::str(&format!("{:X}", n as i64 as u64))
                }
            }
        }
        "upper" | "ucase" | "lower" | "lcase" => {
            argc(1)?;
            match &a[0] {
                Datum::Null => Datum::Null,
                d => {
                    let s = d.render();
                    Datum::str(&if name.starts_with('u') {
                        s.to_ascii_uppercase()
                    } else {
                        s.to_ascii_lowercase()
                    })
                }
            }
        }
        "concat" => {
            if a.iter().any(Datum::is_null) {
                Datum::Null
            } else {
                Datum::Str(a.iter().flat_map(Datum::to_bytes).collect())
            }
        }
        "ifnull" => {
            argc(2)?;
            if a[0].is_null() {
                a[1].clone()
            } else {
                a[0].clone()
            }
        }
        "coalesce" => a
            .iter()
            .find(|d| !d.is_null())
            .cloned()
            .unwrap_or(Datum::Null),
        "if" => {
            argc(3)?;
            if a[0].truth() == Some(true) {
                a[1].clone()
            } else {
                a[2].clone()
            }
        }
        "mod" => {
            argc(2)?;
            arith(BinOp::Mod, &a[0], &a[1])?
        }
        "greatest" | "least" => {
            if a.is_empty() {
                return Err(SqlError::new(
                    1582,
                    format!("Incorrect parameter count in the call to native function '{name}'"),
                ));
            }
            if a.iter().any(Datum::is_null) {
                Datum::Null
            } else {
                let pick = if name == "greatest" {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                a.iter().skip(1).fold(a[0].clone(), |m, d| {
                    if d.sort_cmp(&m) == pick {
                        d.clone()
                    } else {
                        m
                    }
                })
            }
        }
        "repeat" => {
            argc(2)?;
            if a[0].is_null() || a[1].is_null() {
                Datum::Null
            } else {
                let n = a[1].as_i128().unwrap_or(0).clamp(0, 1 << 20) as usize;
                let s = a[0].render();
                if s.len().saturating_mul(n) > 16 << 20 {
                    Datum::Null
                } else {
                    Datum::str(&s.repeat(n))
                }
            }
        }
        "left" | "right" => {
            argc(2)?;
            if a[0].is_null() || a[1].is_null() {
                Datum::Null
            } else {
                let s = a[0].to_bytes();
                let n = usize::try_from(a[1].as_i128().unwrap_or(0).max(0))
                    .unwrap_or(usize::MAX)
                    .min(s.len());
                Datum::Str(if name == "left" {
                    s[..n].to_vec()
                } else {
                    s[s.len() - n..].to_vec()
                })
            }
        }
        "version" => {
            argc(0)?;
            Datum::str("5.1.30-innosim")
        }
        _ => {
            return Err(SqlError::new(
                1305,
                format!("FUNCTION {name} does not exist"),
            ))
        }
    })
}

/// An integer datum (for row counts and the like).
pub fn int(v: u64) -> Datum {
    int_datum(i128::from(v)).expect("a u64 fits")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like_bytes(s: &[u8], p: &[u8]) -> bool {
        like(s, p, |a, b| a == b)
    }

    #[test]
    fn like_patterns() {
        assert!(like_bytes(b"innodb_file_format", b"%format%"));
        assert!(like_bytes(b"abc", b"a_c"));
        assert!(!like_bytes(b"abc", b"a_"));
        assert!(like_bytes(b"a%c", b"a\\%c"));
        assert!(!like_bytes(b"abc", b"a\\%c"));
        assert!(like_bytes(b"", b"%"));
        assert!(like_bytes(b"aXbXc", b"%b%c"));
    }
}
