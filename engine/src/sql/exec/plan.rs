//! The access planner: which index a statement reads, and the key range
//! its WHERE puts on that index's leading columns (the rows found are
//! filtered by the whole WHERE again).

use super::*;

impl Server {
    /// MySQL's choice of index for a WHERE: the primary key if the
    /// condition bounds its first column, else the first secondary index
    /// whose first column it bounds, else a scan of the clustered index.
    pub(super) fn access(
        &self,
        c: ConnId,
        name: &str,
        meta: &TableMeta,
        filter: Option<&Expr>,
        hints: &[IndexHint],
    ) -> R<Access> {
        self.plan(c, name, meta, filter, hints, &[])
            .map(|p| p.access)
    }

    /// The access path of a statement over one table ([`Server::access`]'s
    /// choice), and what EXPLAIN and a LIMIT need to know of it: whether
    /// the key range it reads is exactly the rows the WHERE matches (every
    /// conjunct an equality on a leading key column or a bound on the
    /// next one, none on a column the index keeps a prefix of: then a
    /// LIMIT may stop the engine's read, as MySQL stops pulling rows, and
    /// InnoDB locking them, once it has enough), how many leading key
    /// columns it fixes, the indexes the WHERE could have used, and
    /// whether it reads the rows in `order_by`'s order.
    ///
    /// Index hints narrow the candidates first (MySQL's
    /// `TABLE_LIST::process_index_hints`): USE and FORCE INDEX keep only
    /// the indexes they name (USE INDEX () none), IGNORE INDEX drops the
    /// ones it names; a name the table lacks is 1176. When the WHERE
    /// bounds none of the candidates, FORCE INDEX still reads a named
    /// index whole when it gives ORDER BY's order (a table scan is what
    /// FORCE makes too dear, `test_if_skip_sort_order`), and a table scan
    /// gives the primary key's order.
    pub(super) fn plan(
        &self,
        c: ConnId,
        name: &str,
        meta: &TableMeta,
        filter: Option<&Expr>,
        hints: &[IndexHint],
        order_by: &[(Expr, bool)],
    ) -> R<Plan> {
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
        let mut candidates: Vec<Candidate> = Vec::new();
        if !def.primary_key.is_empty() {
            candidates.push(Candidate {
                index: None,
                cols: def.primary_key.clone(),
                prefixes: def.primary_prefixes.clone(),
                unique: true,
                pk_suffix: Vec::new(),
            });
        }
        let extended_keys = (self.engine.config().later).has(crate::LaterRule::OrderByExtendedKey);
        for ix in &def.indexes {
            let pk_suffix = (def.primary_key.iter().enumerate())
                .map(|(i, &c)| (c, def.primary_prefix(i).is_none()))
                // A later version's rule: a unique index has no suffix, and
                // a non-unique one the key's columns it lacks.
                .filter(|&(c, _)| !extended_keys || (!ix.unique && !ix.holds_whole(c)))
                .collect();
            candidates.push(Candidate {
                index: Some(ix.name.clone()),
                cols: ix.columns.clone(),
                prefixes: ix.prefixes.clone(),
                unique: ix.unique,
                pk_suffix,
            });
        }
        let named = |index: &Option<String>, list: &[String]| {
            let n = index.as_deref().unwrap_or("PRIMARY");
            list.iter().any(|x| x.eq_ignore_ascii_case(n))
        };
        for h in hints {
            for x in &h.indexes {
                let known = x.eq_ignore_ascii_case("PRIMARY") && !def.primary_key.is_empty()
                    || def.indexes.iter().any(|ix| ix.name.eq_ignore_ascii_case(x));
                if !known {
                    let table = split_name(name).map_or(name.to_string(), |(_, t)| t);
                    return Err(SqlError::new(
                        1176,
                        format!("Key '{x}' doesn't exist in table '{table}'"),
                    ));
                }
            }
        }
        let only: Vec<&IndexHint> = hints
            .iter()
            .filter(|h| h.kind != HintKind::Ignore)
            .collect();
        if !only.is_empty() {
            let allowed: Vec<String> = only.iter().flat_map(|h| h.indexes.clone()).collect();
            candidates.retain(|cand| named(&cand.index, &allowed));
        }
        for h in hints.iter().filter(|h| h.kind == HintKind::Ignore) {
            candidates.retain(|cand| !named(&cand.index, &h.indexes));
        }
        // MySQL's range optimizer finds a WHERE no row can meet on a key
        // column of an index it may use: a comparison with NULL
        // (`get_mm_leaf`: "any sargable predicate except <=> involving
        // NULL as a constant is always FALSE"), or bounds that leave no
        // value between them (`key_and` of disjoint ranges). The statement
        // then reads nothing and locks nothing ("Impossible WHERE noticed
        // after reading const tables").
        let impossible = candidates.iter().any(|cand| {
            cand.cols
                .iter()
                .any(|&col| impossible_on(&conj, &names, col, meta, &vars))
        });
        if impossible {
            return Ok(Plan {
                access: Access::Ranges {
                    index: None,
                    ranges: Vec::new(),
                },
                exact: true,
                kind: PlanKind::Impossible,
                possible: Vec::new(),
                ordered: true,
            });
        }
        let mut chosen: Option<Plan> = None;
        let mut possible = Vec::new();
        for cand in &candidates {
            let Some(p) = self.bound_plan(cand, &conj, &names, meta, &vars, def, order_by) else {
                continue;
            };
            possible.push(cand.index.clone().unwrap_or_else(|| "PRIMARY".into()));
            if chosen.is_none() {
                chosen = Some(p);
            }
        }
        if let Some(mut p) = chosen {
            p.possible = possible;
            return Ok(p);
        }
        // Nothing bounds: the table is read whole, through the index that
        // gives ORDER BY's order if there is one it may read in order: the
        // clustered index (a table scan is one), or under FORCE INDEX a
        // named one.
        let forced = hints.iter().any(|h| h.kind == HintKind::Force);
        let by_index = candidates
            .iter()
            .filter(|cand| forced || cand.index.is_none())
            .filter(|_| !order_by.is_empty())
            .find_map(|cand| (cand.gives_order(order_by, &[], &names)).map(|r| (cand, r.reverse)));
        let (index, whole_index, reverse) = match by_index {
            Some((cand, reverse)) => (cand.index.clone(), Some(cand.cols.len()), reverse),
            None => (None, None, false),
        };
        Ok(Plan {
            access: Access::Range {
                index,
                low: RangeBound::Unbounded,
                high: RangeBound::Unbounded,
                reverse,
            },
            exact: conj.is_empty(),
            kind: match whole_index {
                Some(parts) => PlanKind::Index { parts },
                None => PlanKind::All,
            },
            possible,
            ordered: whole_index.is_some(),
        })
    }

    /// The plan of a read through `cand` when the WHERE bounds its first
    /// column (`None` when it does not).
    #[allow(clippy::too_many_arguments)]
    fn bound_plan(
        &self,
        cand: &Candidate,
        conj: &[&Expr],
        names: &[String],
        meta: &TableMeta,
        vars: &dyn eval::Vars,
        def: &crate::dict::TableDef,
        order_by: &[(Expr, bool)],
    ) -> Option<Plan> {
        let cols = &cand.cols;
        let prefixed = cand.prefixes.iter().any(|&p| p != 0);
        let mut eq = Vec::new();
        for &col in cols {
            match find_eq(conj, names, col, meta, vars) {
                Some(v) => eq.push(v),
                None => break,
            }
        }
        let exact = |used_range: bool| {
            !prefixed
                && conj.iter().all(|e| {
                    implied(
                        e,
                        names,
                        &cols[..eq.len()],
                        used_range.then(|| cols[eq.len()]),
                        meta,
                        vars,
                    )
                })
                && (0..eq.len()).all(|k| {
                    conj.iter()
                        .filter(|e| eq_column(e, names) == Some(cols[k]))
                        .count()
                        == 1
                })
        };
        let order = cand.gives_order(order_by, &cols[..eq.len()], names);
        let ordered = order.is_some();
        let index = cand.index.clone();
        if index.is_none() && eq.len() == cols.len() {
            let exact = exact(false);
            return Some(Plan {
                access: Access::Point(eq),
                exact,
                kind: PlanKind::Const { parts: cols.len() },
                possible: Vec::new(),
                ordered: true,
            });
        }
        // An IN list of constants on the next column: one range a
        // member, read in key order (MySQL's range optimizer makes a
        // point range of each; InnoDB then looks each one up, and locks
        // those lookups, not the span between them).
        if eq.len() < cols.len() && !prefixed && !def.primary_key.is_empty() {
            if let Some(members) = find_in(conj, names, cols[eq.len()], meta, vars) {
                let parts = eq.len() + 1;
                let ranges = members
                    .into_iter()
                    .map(|v| {
                        let mut k = eq.clone();
                        k.push(v);
                        (RangeBound::Included(k.clone()), RangeBound::Included(k))
                    })
                    .collect();
                // The engine reads an IN list's ranges forward only.
                return Some(Plan {
                    access: Access::Ranges { index, ranges },
                    exact: false,
                    kind: PlanKind::Range { parts },
                    possible: Vec::new(),
                    ordered: order.is_some_and(|o| !o.reverse),
                });
            }
        }
        let (lo, hi) = if eq.len() < cols.len() {
            find_range(conj, names, cols[eq.len()], meta, vars)
        } else {
            (None, None)
        };
        if eq.is_empty() && lo.is_none() && hi.is_none() {
            return None;
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
        // Only an upper bound on a column that takes NULL: the range starts
        // past the NULLs, which sort first in the index and which no
        // comparison matches (get_mm_leaf's NEAR_MIN over a NULL key for
        // `<` and `<=`), so that they are neither read, nor locked, nor
        // counted against a LIMIT.
        let past_nulls = lo.is_none()
            && hi.is_some()
            && eq.len() < cols.len()
            && !meta.columns[cols[eq.len()]].not_null;
        let ranged = eq.len() < cols.len() && (lo.is_some() || hi.is_some());
        let kind = if ranged {
            PlanKind::Range {
                parts: eq.len() + 1,
            }
        } else if eq.len() == cols.len()
            && cand.unique
            && cols.iter().all(|&c| meta.columns[c].not_null)
        {
            // Every column of a unique index without NULLs fixed: one row
            // at most (MySQL's const table).
            PlanKind::Const { parts: eq.len() }
        } else {
            PlanKind::Ref { parts: eq.len() }
        };
        let exact = exact(ranged);
        // A descending read of one value of the whole key (every column
        // the index was defined with equal to one constant) is an
        // EQ_RANGE, which MySQL's `QUICK_SELECT_DESC::get_next` reads
        // forward, as an exact match ("sorting backwards is same as
        // sorting forwards"), unless ORDER BY goes on into the primary key
        // suffix; then it reads backward as a range
        // (HA_READ_PREFIX_LAST_OR_PREV). The rows of the forward read come
        // in the index's order, the server sorts nothing.
        let one_value = match (&lo, &hi) {
            _ if eq.len() == cols.len() => true,
            (Some((a, true)), Some((b, true))) if eq.len() + 1 == cols.len() => {
                let ty = meta.columns[cols[eq.len()]].engine_type();
                let stored = |v: &Value| crate::record::to_stored(&ty, v, "").ok();
                matches!((stored(a), stored(b)), (Some(x), Some(y)) if x == y)
            }
            _ => false,
        };
        let reverse = order.is_some_and(|o| o.reverse && (o.into_suffix || !one_value));
        Some(Plan {
            access: Access::Range {
                index,
                low: if past_nulls {
                    let mut k = eq.clone();
                    k.push(Value::Null);
                    RangeBound::Excluded(k)
                } else {
                    bound(lo, &eq)
                },
                high: bound(hi, &eq),
                reverse,
            },
            exact,
            kind,
            possible: Vec::new(),
            ordered,
        })
    }

    // ---- INSERT, UPDATE, DELETE ----
}

/// An index a statement may read: `None` is the clustered index.
struct Candidate {
    index: Option<String>,
    cols: Vec<usize>,
    prefixes: Vec<u16>,
    unique: bool,
    /// For a secondary index, the primary key's columns (each with
    /// whether it is held whole), which InnoDB appends to every entry
    /// (`HA_PRIMARY_KEY_IN_READ_INDEX`): ORDER BY may go on through them.
    pk_suffix: Vec<(usize, bool)>,
}

impl Candidate {
    /// Whether reading this index in key order gives the rows in
    /// `order_by`'s order, the columns in `fixed` (equal to constants)
    /// aside, as MySQL's `test_if_order_by_key` decides: each ORDER BY key
    /// a column the index holds whole, in the index's order from the first
    /// unfixed column on (a secondary index's primary key suffix
    /// included), all ascending (read forward) or all descending (read
    /// backward, as `QUICK_SELECT_DESC` and `join_read_last` do); `None`
    /// when neither.
    fn gives_order(
        &self,
        order_by: &[(Expr, bool)],
        fixed: &[usize],
        names: &[String],
    ) -> Option<IndexOrder> {
        // The index's parts after the fixed ones, then the primary key's
        // (test_if_order_by_key's `on_pk_suffix`), each with whether it
        // holds its column whole.
        let own: Vec<(usize, bool)> = (self.cols.iter().enumerate())
            .skip(fixed.len())
            .map(|(i, &c)| (c, self.prefixes.get(i).is_none_or(|&p| p == 0)))
            .filter(|(c, _)| !fixed.contains(c))
            .collect();
        let parts: Vec<(usize, bool)> = (own.iter().copied())
            .chain(
                self.pk_suffix
                    .iter()
                    .copied()
                    .filter(|(c, _)| !fixed.contains(c)),
            )
            .collect();
        let mut next = 0;
        let mut direction = None;
        for (e, desc) in order_by {
            let col = column_of(e, names)?;
            if fixed.contains(&col) {
                continue;
            }
            match parts.get(next) {
                Some(&(c, true)) if c == col => {}
                _ => return None,
            }
            if *direction.get_or_insert(*desc) != *desc {
                return None;
            }
            next += 1;
        }
        Some(IndexOrder {
            reverse: direction.unwrap_or(false),
            into_suffix: next > own.len(),
        })
    }
}

/// How an index gives ORDER BY's order ([`Candidate::gives_order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexOrder {
    /// Read backward (ORDER BY ... DESC).
    reverse: bool,
    /// ORDER BY goes on into a secondary index's primary key suffix, so
    /// that it uses more parts than the index was defined with
    /// (`test_if_order_by_key`'s `used_key_parts` above `key_parts`).
    into_suffix: bool,
}

/// Whether index `index` of `def` (`None`: the clustered key) holds every
/// column of `used` whole in its entries (MySQL's `covering_keys`): the
/// primary key's columns, and a secondary index's own, which InnoDB
/// appends the primary key to (its `build_template` then finds each such
/// column in the secondary record). A column held only as a prefix is not
/// held; a table without a primary key has no covering clustered key.
pub(super) fn index_covers(
    def: &crate::dict::TableDef,
    index: Option<&str>,
    used: &[usize],
) -> bool {
    let in_pk = |c: usize| {
        (def.primary_key.iter().enumerate())
            .any(|(i, &k)| k == c && def.primary_prefix(i).is_none())
    };
    match index {
        None => !def.primary_key.is_empty() && used.iter().all(|&c| in_pk(c)),
        Some(name) => match def
            .indexes
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
        {
            Some(ix) => used.iter().all(|&c| ix.holds_whole(c) || in_pk(c)),
            None => false,
        },
    }
}

/// How a statement reads its table, in EXPLAIN's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlanKind {
    /// One row at most, by every column of the primary key or of a unique
    /// index without NULLs (`const`).
    Const { parts: usize },
    /// The rows equal to constants on `parts` leading columns (`ref`).
    Ref { parts: usize },
    /// Ranges over `parts` leading columns (`range`).
    Range { parts: usize },
    /// A secondary index or the clustered index read whole, in its order
    /// (`index`), `parts` its key columns.
    Index { parts: usize },
    /// The clustered index read whole, its order not wanted (`ALL`).
    All,
    /// A WHERE no row can meet: nothing read (an access of no ranges).
    Impossible,
}

/// A statement's access path and what is known of it.
#[derive(Debug)]
pub(super) struct Plan {
    /// What the engine reads.
    pub(super) access: Access,
    /// Whether the rows read are exactly those the WHERE matches.
    pub(super) exact: bool,
    /// How, in EXPLAIN's terms.
    pub(super) kind: PlanKind,
    /// The indexes whose first column the WHERE bounds (`PRIMARY` for
    /// the clustered index), in the table's order.
    pub(super) possible: Vec<String>,
    /// Whether the rows come in ORDER BY's order.
    pub(super) ordered: bool,
}

/// An access path.
#[derive(Debug)]
pub(super) enum Access {
    /// The whole primary key by equality.
    Point(Vec<Value>),
    /// A range of an index (`None`: the clustered index), read backward
    /// if `reverse` (ORDER BY ... DESC in the index's order).
    Range {
        index: Option<String>,
        low: RangeBound,
        high: RangeBound,
        reverse: bool,
    },
    /// Several ranges of one index, in key order (an IN list).
    Ranges {
        index: Option<String>,
        ranges: Vec<(RangeBound, RangeBound)>,
    },
}

impl Access {
    pub(super) fn request(&self, table: &str, limit: Option<usize>) -> Request {
        match self {
            Access::Point(key) => Request::Get {
                table: table.to_string(),
                key: key.clone(),
            },
            Access::Range {
                index,
                low,
                high,
                reverse,
            } => Request::Scan {
                table: table.to_string(),
                index: index.clone(),
                low: low.clone(),
                high: high.clone(),
                reverse: *reverse,
                limit,
            },
            Access::Ranges { index, ranges } => Request::Ranges {
                table: table.to_string(),
                index: index.clone(),
                ranges: ranges.clone(),
            },
        }
    }
}

pub(super) fn conjuncts<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary(BinOp::And, a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        e => out.push(e),
    }
}

/// The column position an expression names, if it is a bare column.
pub(super) fn column_of(e: &Expr, names: &[String]) -> Option<usize> {
    match e {
        Expr::Column { name, .. } => names.iter().position(|n| n.eq_ignore_ascii_case(name)),
        _ => None,
    }
}

/// A constant side, converted to the column's engine value exactly (a
/// value that would round or does not fit is no bound: the rows are found
/// by the filter instead).
pub(super) fn const_for(
    e: &Expr,
    col: usize,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> Option<Value> {
    if !is_const(e) {
        return None;
    }
    let no_cols = Columns::none();
    let d = eval::eval(e, None, &no_cols, vars).ok()?;
    if d.is_null() {
        return None;
    }
    let spec = &meta.columns[col];
    match (spec.engine_type(), &d) {
        (
            ColumnType::ShortInt { .. } | ColumnType::Int { .. } | ColumnType::BigInt { .. },
            Datum::Int(_) | Datum::UInt(_) | Datum::Hex(_),
        ) => {}
        (ColumnType::Char(_) | ColumnType::VarChar(_), Datum::Str(_) | Datum::Hex(_)) => {}
        _ => return None,
    }
    schema::coerce_column(spec, &d).ok().map(|d| d.to_value())
}

pub(super) fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Var { .. } => true,
        Expr::Unary(_, x) => is_const(x),
        Expr::Binary(_, a, b) => is_const(a) && is_const(b),
        _ => false,
    }
}

pub(super) fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        o => o,
    }
}

/// The column a conjunct sets equal to a constant (`col = c`, `c = col`,
/// `col IN (c)`), if it is one.
fn eq_column(e: &Expr, names: &[String]) -> Option<usize> {
    match e {
        Expr::Binary(BinOp::Eq, a, b) => match (column_of(a, names), column_of(b, names)) {
            (Some(c), None) if is_const(b) => Some(c),
            (None, Some(c)) if is_const(a) => Some(c),
            _ => None,
        },
        Expr::In(x, list, false) if list.len() == 1 && is_const(&list[0]) => column_of(x, names),
        _ => None,
    }
}

/// Whether a conjunct holds for every row of the range that sets the
/// `eq` columns equal (to the constants the conjuncts give) and bounds
/// `range` (by the conjuncts' bounds): it is one of those equalities or
/// bounds, its constant converting exactly to the column's type.
fn implied(
    e: &Expr,
    names: &[String],
    eq: &[usize],
    range: Option<usize>,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> bool {
    let exact = |col: usize, other: &Expr| const_for(other, col, meta, vars).is_some();
    match e {
        Expr::Binary(BinOp::Eq, a, b)
        | Expr::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, a, b) => {
            let is_eq = matches!(e, Expr::Binary(BinOp::Eq, ..));
            let (col, other) = match (column_of(a, names), column_of(b, names)) {
                (Some(c), None) => (c, b),
                (None, Some(c)) => (c, a),
                _ => return false,
            };
            if is_eq {
                eq.contains(&col) && exact(col, other)
            } else {
                range == Some(col) && exact(col, other)
            }
        }
        Expr::Between(x, a, b, false) => match column_of(x, names) {
            Some(col) => range == Some(col) && exact(col, a) && exact(col, b),
            None => false,
        },
        Expr::In(x, list, false) if list.len() == 1 => match column_of(x, names) {
            Some(col) => eq.contains(&col) && exact(col, &list[0]),
            None => false,
        },
        _ => false,
    }
}

/// `col = const` among the conjuncts.
pub(super) fn find_eq(
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

/// The members of `col IN (c1, c2, ...)` among the conjuncts, two or more
/// constants, as the column stores them, in its index's order, each once
/// (equal in the column's collation: once).
pub(super) fn find_in(
    conj: &[&Expr],
    names: &[String],
    col: usize,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> Option<Vec<Value>> {
    let ty = meta.columns[col].engine_type();
    let coll = meta.columns[col].collation.unwrap_or(Collation::Binary);
    for e in conj {
        let Expr::In(x, list, false) = e else {
            continue;
        };
        if list.len() < 2 || column_of(x, names) != Some(col) {
            continue;
        }
        let vals: Option<Vec<Value>> = list.iter().map(|e| const_for(e, col, meta, vars)).collect();
        let mut keyed: Vec<(Vec<u8>, Value)> = vals?
            .into_iter()
            .filter_map(|v| crate::record::to_stored(&ty, &v, "").ok().map(|k| (k, v)))
            .collect();
        keyed.sort_by(|a, b| coll.compare(&a.0, &b.0));
        keyed.dedup_by(|a, b| coll.compare(&a.0, &b.0) == Ordering::Equal);
        if keyed.is_empty() {
            return None;
        }
        return Some(keyed.into_iter().map(|(_, v)| v).collect());
    }
    None
}

/// Whether the conjuncts leave key column `col` no value: a comparison
/// of it with NULL (`=`, `<`, `<=`, `>`, `>=`, BETWEEN; `<=>` and IS NULL
/// are not comparisons), or a lower bound above the upper one (equal, one
/// of them exclusive) in the column's collation.
fn impossible_on(
    conj: &[&Expr],
    names: &[String],
    col: usize,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> bool {
    let null = |e: &Expr| {
        is_const(e) && eval::eval(e, None, &Columns::none(), vars).is_ok_and(|d: Datum| d.is_null())
    };
    let with_null = conj.iter().any(|e| match e {
        Expr::Binary(BinOp::Eq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, a, b) => {
            (column_of(a, names) == Some(col) && null(b))
                || (column_of(b, names) == Some(col) && null(a))
        }
        Expr::Between(x, a, b, false) => column_of(x, names) == Some(col) && (null(a) || null(b)),
        _ => false,
    });
    if with_null {
        return true;
    }
    let (Some((lo, lo_incl)), Some((hi, hi_incl))) = find_range(conj, names, col, meta, vars)
    else {
        return false;
    };
    let ty = meta.columns[col].engine_type();
    let coll = meta.columns[col].collation.unwrap_or(Collation::Binary);
    let (Ok(a), Ok(b)) = (
        crate::record::to_stored(&ty, &lo, ""),
        crate::record::to_stored(&ty, &hi, ""),
    ) else {
        return false;
    };
    match coll.compare(&a, &b) {
        Ordering::Greater => true,
        Ordering::Equal => !(lo_incl && hi_incl),
        Ordering::Less => false,
    }
}

pub(super) type Edge = Option<(Value, bool)>;

/// The tightest range the conjuncts put on `col` (bounds and whether
/// each is inclusive). Values compare as the column's stored forms do.
pub(super) fn find_range(
    conj: &[&Expr],
    names: &[String],
    col: usize,
    meta: &TableMeta,
    vars: &dyn eval::Vars,
) -> (Edge, Edge) {
    let ty = meta.columns[col].engine_type();
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
