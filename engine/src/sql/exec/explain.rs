//! EXPLAIN SELECT: MySQL 5.1's ten columns (`id`, `select_type`, `table`,
//! `type`, `possible_keys`, `key`, `key_len`, `ref`, `rows`, `Extra`) for
//! the access path this layer takes for the statement ([`Server::plan`]),
//! in the words `select_describe` (sql_select.cc) uses for the same path,
//! with InnoDB's estimates for `rows`: the table's `stat_n_rows` for a
//! read of a whole index (`ha_innobase::info`) and the rows of each key
//! range (`ha_innobase::records_in_range`) for the others. Nothing is
//! read through a read view and nothing is locked.
//!
//! Where MySQL's optimizer would choose otherwise, EXPLAIN says what the
//! layer does: it says `Using index` where the index it reads holds every
//! column the statement names, as MySQL's key read (the layer reads a
//! covering secondary index alone only for a read that locks S,
//! [`crate::Request::IndexOnly`], and looks up the rows of the others,
//! which returns the same rows), picks
//! the primary key, else the first secondary index, that the WHERE bounds
//! (not the cheapest), and does not evaluate a const table's row while
//! planning (no `Impossible WHERE noticed after reading const tables`).
//! Joins, which the layer reads as a nested loop over whole tables, are
//! not explained (1235).

use super::plan::{index_covers, Access, Plan, PlanKind};
use super::*;

/// EXPLAIN's columns.
const COLUMNS: [&str; 10] = [
    "id",
    "select_type",
    "table",
    "type",
    "possible_keys",
    "key",
    "key_len",
    "ref",
    "rows",
    "Extra",
];

impl Server {
    pub(super) fn explain(&mut self, c: ConnId, sel: Select) -> R<Outcome> {
        let reply = |row: Vec<Datum>| {
            Ok(Outcome::Done(Reply::Rows {
                columns: COLUMNS.iter().map(|s| s.to_string()).collect(),
                rows: vec![row],
                warnings: 0,
            }))
        };
        let Some(from) = sel.from.clone() else {
            let post = SelectPost::constant(sel);
            self.check_select_names(&post)?;
            let mut row = described(None, None, None, None, None, None, None);
            row[9] = Datum::str("No tables used");
            return reply(row);
        };
        if from
            .db
            .as_deref()
            .is_some_and(|d| d.eq_ignore_ascii_case("information_schema"))
        {
            return Err(SqlError::unsupported("EXPLAIN of information_schema"));
        }
        if !sel.joins.is_empty() {
            return Err(SqlError::unsupported("EXPLAIN of a join"));
        }
        let (name, meta) = self.resolve(c, &from)?;
        let shown = sel.alias.clone().unwrap_or_else(|| from.name.clone());
        let post = post_for(sel, &meta, &shown);
        self.check_select_names(&post)?;
        let sel = &post.sel;
        let plan = self.plan(
            c,
            &name,
            &meta,
            sel.filter.as_ref(),
            &sel.hints,
            &sel.order_by,
        )?;
        if matches!(plan.kind, PlanKind::Impossible) {
            let mut row = described(None, None, None, None, None, None, None);
            row[9] = Datum::str("Impossible WHERE noticed after reading const tables");
            return reply(row);
        }
        let rows = self.plan_rows(c, &name, &plan)?;
        let def = self
            .engine
            .table(&name)
            .map_err(|e| self.engine_err(c, &e))?
            .def
            .clone();
        let index = match &plan.access {
            Access::Point(_) => None,
            Access::Range { index, .. } | Access::Ranges { index, .. } => index.clone(),
        };
        let (cols, prefixes) = match &index {
            None => (def.primary_key.clone(), def.primary_prefixes.clone()),
            Some(n) => {
                let ix = def
                    .indexes
                    .iter()
                    .find(|ix| ix.name.eq_ignore_ascii_case(n))
                    .ok_or_else(|| SqlError::new(1176, format!("Key '{n}' doesn't exist")))?;
                (ix.columns.clone(), ix.prefixes.clone())
            }
        };
        let key_name = index.clone().unwrap_or_else(|| "PRIMARY".into());
        // Every column the statement names is a whole column of the index
        // read (a secondary index's own, or the primary key's, which each
        // of its entries carries): MySQL's `covering_keys`, a key read
        // (`table->key_read`), which `select_describe` shows as `Using
        // index`. A scan of the whole clustered index that needs its key
        // alone is an index scan.
        let covered = index_covers(&def, index.as_deref(), &used_columns(sel, &post.names));
        let kind = match plan.kind {
            PlanKind::All if covered && index.is_none() => PlanKind::Index {
                parts: def.primary_key.len(),
            },
            k => k,
        };
        let (ty, parts, refs) = match kind {
            PlanKind::Const { parts } => ("const", Some(parts), Some(parts)),
            PlanKind::Ref { parts } => ("ref", Some(parts), Some(parts)),
            PlanKind::Range { parts } => ("range", Some(parts), None),
            PlanKind::Index { parts } => ("index", Some(parts), None),
            PlanKind::All => ("ALL", None, None),
            PlanKind::Impossible => unreachable!("answered above"),
        };
        let key_len = parts.map(|p| key_len(&meta, &cols[..p], &prefixes));
        let mut extra: Vec<&str> = Vec::new();
        // The WHERE is checked on the rows read unless the read is exactly
        // what it asks; a range read keeps its condition (MySQL 5.1 says
        // so for every range), a const read has none left to check.
        let checked = match kind {
            PlanKind::Const { .. } => false,
            PlanKind::Range { .. } => true,
            _ => sel.filter.is_some() && !plan.exact,
        };
        if checked {
            extra.push("Using where");
        }
        if covered && !matches!(kind, PlanKind::Const { .. }) {
            extra.push("Using index");
        }
        let aggregate = sel
            .items
            .iter()
            .any(|i| matches!(i, SelectItem::Expr { expr, .. } if eval::has_aggregate(expr)));
        if !sel.group_by.is_empty() {
            // GROUP BY sorts its groups (ORDER BY NULL aside, which the
            // layer does not parse) through a temporary table.
            extra.push("Using temporary");
            extra.push("Using filesort");
        } else if sel.distinct && !aggregate {
            extra.push("Using temporary");
            if !sel.order_by.is_empty() && !plan.ordered {
                extra.push("Using filesort");
            }
        } else if !sel.order_by.is_empty() && !plan.ordered && !aggregate {
            extra.push("Using filesort");
        }
        let row = described(
            Some(&shown),
            Some(ty),
            (!plan.possible.is_empty()).then(|| plan.possible.join(",")),
            parts.map(|_| key_name),
            key_len,
            refs.map(|n| vec!["const"; n].join(",")),
            Some(rows),
        );
        let mut row = row;
        row[9] = Datum::str(&extra.join("; "));
        reply(row)
    }

    /// A later version's rule
    /// ([`crate::LaterRule::SecondaryIndexOnOneRowTie`]) for a
    /// single-table UPDATE or DELETE whose plan reads one row of the
    /// primary key by equality on all its columns: the first secondary
    /// index whose leading columns (one or more) the WHERE fixes by
    /// equality, its range estimated at one row too, is read instead. `None` when the rule is
    /// off or nothing takes the primary key's place.
    pub(super) fn one_row_tie(
        &mut self,
        c: ConnId,
        name: &str,
        meta: &TableMeta,
        filter: Option<&Expr>,
        plan: &Plan,
    ) -> R<Option<Plan>> {
        let later = self.engine.config().later;
        if !later.has(crate::LaterRule::SecondaryIndexOnOneRowTie) {
            return Ok(None);
        }
        let on_primary = match &plan.access {
            Access::Point(_) => true,
            Access::Range { index, .. } | Access::Ranges { index, .. } => index.is_none(),
        };
        if !on_primary || !matches!(plan.kind, PlanKind::Const { .. }) {
            return Ok(None);
        }
        if self.plan_rows(c, name, plan)? > 1 {
            return Ok(None);
        }
        let indexes: Vec<String> = match self.engine.table(name) {
            Ok(t) => (t.def.indexes.iter()).map(|ix| ix.name.clone()).collect(),
            Err(e) => return Err(self.engine_err(c, &e)),
        };
        for ix in indexes {
            let hint = IndexHint {
                kind: HintKind::Use,
                indexes: vec![ix.clone()],
            };
            let alt = self.plan(c, name, meta, filter, &[hint], &[])?;
            // Equality on the index's first columns, all of them or a
            // prefix (MariaDB 10.11.14's EXPLAIN: `range` on KEY (p1, c0)
            // for `p0 = 1 AND p1 = 'z'` beside PRIMARY KEY (p0, p1)).
            let fixes_lead = matches!(
                alt.kind,
                PlanKind::Ref { parts: 1.. } | PlanKind::Const { parts: 1.. }
            );
            let on_it = matches!(&alt.access,
                Access::Range { index: Some(i), .. } | Access::Ranges { index: Some(i), .. } if *i == ix);
            if fixes_lead && on_it && self.plan_rows(c, name, &alt)? <= 1 {
                return Ok(Some(Plan {
                    possible: plan.possible.clone(),
                    ..alt
                }));
            }
        }
        Ok(None)
    }

    /// EXPLAIN's `rows`: 1 for a const read, the estimate of each key range
    /// summed for a ref or range read, the table's estimated rows for a
    /// read of a whole index.
    fn plan_rows(&mut self, c: ConnId, name: &str, plan: &Plan) -> R<u64> {
        let sample = self.globals.stats_sample_pages;
        let ranges: Vec<(Option<String>, RangeBound, RangeBound)> = match (&plan.kind, &plan.access)
        {
            (PlanKind::Const { .. }, _) => return Ok(1),
            (PlanKind::Impossible, _) => return Ok(0),
            (PlanKind::Index { .. } | PlanKind::All, _) => {
                return self
                    .engine
                    .estimated_rows(name, sample)
                    .map_err(|e| self.engine_err(c, &e))
            }
            (_, Access::Point(key)) => vec![(
                None,
                RangeBound::Included(key.clone()),
                RangeBound::Included(key.clone()),
            )],
            (
                _,
                Access::Range {
                    index, low, high, ..
                },
            ) => {
                vec![(index.clone(), low.clone(), high.clone())]
            }
            (_, Access::Ranges { index, ranges }) => ranges
                .iter()
                .map(|(l, h)| (index.clone(), l.clone(), h.clone()))
                .collect(),
        };
        let mut total = 0u64;
        for (index, low, high) in &ranges {
            total += self
                .engine
                .records_in_range(name, index.as_deref(), low, high, sample)
                .map_err(|e| self.engine_err(c, &e))?;
        }
        Ok(total)
    }
}

/// The columns (positions in `columns`) a single-table SELECT names
/// anywhere: its list (`*` is all of them), WHERE, GROUP BY, HAVING and
/// ORDER BY.
pub(super) fn used_columns(sel: &Select, columns: &[String]) -> Vec<usize> {
    fn walk(e: &Expr, names: &mut Vec<String>) {
        match e {
            Expr::Column { name, .. } => names.push(name.clone()),
            Expr::Lit(_) | Expr::Var { .. } => {}
            Expr::Unary(_, x) | Expr::IsNull(x, _) => walk(x, names),
            Expr::Binary(_, a, b) | Expr::Like(a, b, _) => {
                walk(a, names);
                walk(b, names);
            }
            Expr::Between(a, b, c, _) => {
                walk(a, names);
                walk(b, names);
                walk(c, names);
            }
            Expr::In(a, l, _) => {
                walk(a, names);
                l.iter().for_each(|x| walk(x, names));
            }
            Expr::Call { args, .. } => args.iter().for_each(|x| walk(x, names)),
        }
    }
    let mut names = Vec::new();
    for item in &sel.items {
        match item {
            SelectItem::Star(_) => return (0..columns.len()).collect(),
            SelectItem::Expr { expr, .. } => walk(expr, &mut names),
        }
    }
    let clauses = sel.filter.iter().chain(&sel.having);
    clauses.for_each(|e| walk(e, &mut names));
    for (e, _) in sel.group_by.iter().chain(&sel.order_by) {
        walk(e, &mut names);
    }
    let mut used: Vec<usize> = names
        .iter()
        .filter_map(|n| columns.iter().position(|c| c.eq_ignore_ascii_case(n)))
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// One EXPLAIN row of a simple SELECT, `Extra` empty.
fn described(
    table: Option<&str>,
    ty: Option<&str>,
    possible_keys: Option<String>,
    key: Option<String>,
    key_len: Option<u64>,
    refs: Option<String>,
    rows: Option<u64>,
) -> Vec<Datum> {
    let text = |s: Option<&str>| s.map_or(Datum::Null, Datum::str);
    vec![
        Datum::Int(1),
        Datum::str("SIMPLE"),
        text(table),
        text(ty),
        text(possible_keys.as_deref()),
        text(key.as_deref()),
        key_len.map_or(Datum::Null, |n| Datum::str(&n.to_string())),
        text(refs.as_deref()),
        rows.map_or(Datum::Null, Datum::UInt),
        Datum::str(""),
    ]
}

/// EXPLAIN's `key_len`: the bytes MySQL's key buffer gives the key parts
/// `cols` (with their `prefixes`, in bytes): each type's stored length
/// (a character counting as its character set's widest), two more bytes
/// of length for a VARCHAR, TEXT or BLOB part, one more for a column that
/// may be NULL (`KEY_PART_INFO::store_length`).
fn key_len(meta: &TableMeta, cols: &[usize], prefixes: &[u16]) -> u64 {
    let mut total = 0u64;
    for (i, &c) in cols.iter().enumerate() {
        let spec = &meta.columns[c];
        let mb = u64::from(spec.collation.unwrap_or_default().max_char_bytes());
        let prefix = prefixes.get(i).copied().filter(|&p| p != 0).map(u64::from);
        let len = match spec.ty {
            SqlType::Integer { bytes, .. } => u64::from(bytes),
            SqlType::Char(n) => prefix.unwrap_or(u64::from(n) * mb),
            SqlType::VarChar(n) => prefix.unwrap_or(u64::from(n) * mb) + 2,
            SqlType::Text(max) | SqlType::Blob(max) => prefix.unwrap_or(u64::from(max)) + 2,
            SqlType::Decimal { precision, scale } => {
                u64::from(field::decimal_bin_size(precision, scale))
            }
            SqlType::Float { double, .. } => {
                if double {
                    8
                } else {
                    4
                }
            }
            SqlType::Date | SqlType::Time => 3,
            SqlType::DateTime => 8,
            SqlType::Timestamp => 4,
            SqlType::Year => 1,
            SqlType::Enum(n) => {
                if n > 255 {
                    2
                } else {
                    1
                }
            }
            SqlType::Set(n) => u64::from(field::set_len(usize::from(n))),
        };
        total += len + u64::from(!spec.not_null);
    }
    total
}
