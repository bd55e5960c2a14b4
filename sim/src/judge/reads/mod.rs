//! The read and write judge: what the model says a statement returns or
//! changes, given the rows it sees (the committed state, or a snapshot of
//! it, plus the transaction's own writes), and whether the engine's answer
//! is that.

use crate::judge::foreign;
use crate::schema::{IndexShape, Schema, TableShape};
use engine::{RangeBound, Request, Response, Value};
use models::{Db, ModelValue, Row, Write};
use std::collections::{BTreeMap, BTreeSet};

mod locking;

pub(crate) use locking::{locked_range, phantom, resumed_scan_matches, LockedRange};

pub(crate) fn to_model(v: &Value) -> ModelValue {
    match v {
        Value::Null => ModelValue::Null,
        Value::Int(i) => ModelValue::Int(*i as i128),
        Value::UInt(u) => ModelValue::Int(*u as i128),
        Value::Bytes(b) => ModelValue::Bytes(b.as_slice().into()),
    }
}

/// Whether `v` is `m` as the model sees it (`to_model(v) == *m`, without
/// building it).
pub(crate) fn same_value(v: &Value, m: &ModelValue) -> bool {
    match (v, m) {
        (Value::Null, ModelValue::Null) => true,
        (Value::Int(i), ModelValue::Int(j)) => *i as i128 == *j,
        (Value::UInt(u), ModelValue::Int(j)) => *u as i128 == *j,
        (Value::Bytes(b), ModelValue::Bytes(c)) => b[..] == c[..],
        _ => false,
    }
}

/// Whether a read's response holds exactly the rows `want`
/// (`model_rows(resp) == want`, without building them). Rows of a table
/// with a hidden key (`hidden`) come from the engine without it: each is
/// compared with the model's row but for its last value.
pub(crate) fn rows_match(resp: &Response, want: &[Row], hidden: bool) -> bool {
    let extra = usize::from(hidden);
    let same_row = |r: &[Value], w: &Row| {
        r.len() + extra == w.len() && r.iter().zip(w).all(|(v, m)| same_value(v, m))
    };
    match resp {
        Response::Row(Some(r)) => want.len() == 1 && same_row(r, &want[0]),
        Response::Rows(rs) => {
            rs.len() == want.len() && rs.iter().zip(want).all(|(r, w)| same_row(r, w))
        }
        _ => want.is_empty(),
    }
}

/// The table a request names, and the index a scan goes through
/// (`None`: the clustered index); `None` for a table or index the schema
/// does not have.
fn scan_index<'s>(
    schema: &'s Schema,
    table: &str,
    index: &Option<String>,
) -> Option<(&'s TableShape, Option<&'s IndexShape>)> {
    let t = schema.table(table)?;
    match index {
        None => Some((t, None)),
        Some(i) => Some((t, Some(t.index(i)?))),
    }
}

/// Whether a visible row other than the one at `own` holds `row`'s values
/// in a unique index, as the columns' collations compare them (NULLs never
/// collide).
fn unique_taken(
    t: &TableShape,
    committed: &Db,
    writes: &[Write],
    own: &[ModelValue],
    row: &Row,
) -> bool {
    let unique: Vec<&IndexShape> = t
        .indexes
        .iter()
        .filter(|i| i.unique && i.columns.iter().all(|&c| row[c] != ModelValue::Null))
        .collect();
    if unique.is_empty() {
        return false;
    }
    let clash = |other: &Row| {
        unique
            .iter()
            .any(|i| i.columns.iter().all(|&c| t.same_key(c, &other[c], &row[c])))
    };
    let mut rows: BTreeMap<&[ModelValue], Option<&Row>> = committed
        .tables
        .get(&t.name)
        .map(|rows| rows.iter().map(|(k, r)| (k.as_slice(), Some(r))).collect())
        .unwrap_or_default();
    for w in writes.iter().filter(|w| w.table == t.name) {
        rows.insert(&w.key, w.row.as_ref());
    }
    rows.iter().any(|(k, r)| *k != own && r.is_some_and(&clash))
}

/// What the model says a statement does, given the rows it sees: an
/// insert or update refused with 1062 when its primary key, or its values
/// in a unique index, are another visible row's. An insert into a table
/// without a primary key takes `seq` as its hidden key (the caller's
/// count of such inserts, in the order they succeed: see
/// [`TableShape::hidden`]); such a table is never addressed by key.
pub(crate) fn expected(
    schema: &Schema,
    committed: &Db,
    writes: &[Write],
    req: &Request,
    seq: u64,
) -> Option<(Result<Response, u16>, Vec<Write>)> {
    let visible = |table: &str, key: &[ModelValue]| visible(committed, writes, table, key);
    match req {
        Request::Insert { table, row: values } => {
            let t = schema.table(table)?;
            let mut row: Row = values.iter().map(to_model).collect();
            let key = if t.hidden {
                row.push(ModelValue::Int(seq.into()));
                vec![ModelValue::Int(seq.into())]
            } else {
                t.key_of_values(values)
            };
            if visible(table, &key).is_some() || unique_taken(t, committed, writes, &key, &row) {
                Some((Err(1062), vec![]))
            } else {
                let write = Write {
                    table: table.clone(),
                    key,
                    row: Some(row.clone()),
                };
                if !t.foreign.is_empty() {
                    let mut ws = writes.to_vec();
                    ws.push(write.clone());
                    if let Err(code) =
                        foreign::check_parents(schema, committed, &ws, table, &row, None, None)
                    {
                        return Some((Err(code), vec![]));
                    }
                }
                Some((Ok(Response::Affected(1)), vec![write]))
            }
        }
        Request::Update { table, key, set } => {
            let t = schema.table(table).filter(|t| !t.hidden)?;
            let key = t.key_from_values(None, key);
            let Some(mut row) = visible(table, &key) else {
                return Some((Ok(Response::Affected(0)), vec![]));
            };
            let old = row.clone();
            for (col, v) in set {
                row[t.column(col)?] = to_model(v);
            }
            if row == old {
                return Some((Ok(Response::Affected(0)), vec![]));
            }
            if unique_taken(t, committed, writes, &key, &row) {
                return Some((Err(1062), vec![]));
            }
            // A primary key whose bytes change moves the row, even to a
            // key its collation takes as the same ('a' to 'A'), as
            // `row_upd_changes_ord_field_binary` decides: a delete and an
            // insert (two undo records), refused if another row has the
            // new key.
            let moved = t.primary_key.iter().any(|&c| row[c] != old[c]);
            let mut own = Vec::new();
            if moved {
                let new_key = t.key_of(&row);
                if new_key != key && visible(table, &new_key).is_some() {
                    return Some((Err(1062), vec![]));
                }
                own.push(Write {
                    table: table.clone(),
                    key,
                    row: None,
                });
                own.push(Write {
                    table: table.clone(),
                    key: new_key,
                    row: Some(row.clone()),
                });
            } else {
                own.push(Write {
                    table: table.clone(),
                    key,
                    row: Some(row.clone()),
                });
            }
            // The constraints: the child rows of the old key first, then
            // the row's own parents.
            Some(
                match with_constraints(schema, committed, writes, own, table, &old, Some(&row)) {
                    Ok(all) => (Ok(Response::Affected(1)), all),
                    Err(code) => (Err(code), vec![]),
                },
            )
        }
        Request::Delete { table, key } => {
            let t = schema.table(table).filter(|t| !t.hidden)?;
            let key = t.key_from_values(None, key);
            match visible(table, &key) {
                Some(old) => {
                    let own = vec![Write {
                        table: table.clone(),
                        key,
                        row: None,
                    }];
                    Some(
                        match with_constraints(schema, committed, writes, own, table, &old, None) {
                            Ok(all) => (Ok(Response::Affected(1)), all),
                            Err(code) => (Err(code), vec![]),
                        },
                    )
                }
                None => Some((Ok(Response::Affected(0)), vec![])),
            }
        }
        // Reads see a snapshot; the lock issue brings their oracle.
        _ => None,
    }
}

/// A change's own writes `own` (a row of `table` from `old` to `new`, or
/// deleted) with what the FOREIGN KEY constraints add to them, or the
/// error they end the statement with.
fn with_constraints(
    schema: &Schema,
    committed: &Db,
    writes: &[Write],
    own: Vec<Write>,
    table: &str,
    old: &Row,
    new: Option<&Row>,
) -> Result<Vec<Write>, u16> {
    if schema.tables.iter().all(|t| t.foreign.is_empty()) {
        return Ok(own);
    }
    let mut ws = writes.to_vec();
    let base = ws.len();
    ws.extend(own);
    foreign::check_children(schema, committed, &mut ws, table, old, new)?;
    if let Some(new) = new {
        foreign::check_parents(schema, committed, &ws, table, new, Some(old), None)?;
    }
    Ok(ws.split_off(base))
}

/// The row a transaction sees at `key`: its own latest write, else the
/// committed one.
pub(crate) fn visible(
    committed: &Db,
    writes: &[Write],
    table: &str,
    key: &[ModelValue],
) -> Option<Row> {
    for w in writes.iter().rev() {
        if w.table == table && w.key == key {
            return w.row.clone();
        }
    }
    committed
        .tables
        .get(table)
        .and_then(|t| t.get(key))
        .cloned()
}

/// Judges a READ UNCOMMITTED read, which sees the newest version of each
/// row, committed or not: every row it returns (and a point read's
/// absence) must be the committed one or a write that a transaction still
/// open has made (`open_writes`, one slice per open transaction; writes a
/// rollback, whole or to a savepoint, undid are no longer there), and a
/// scan's rows come in its order and inside its bounds. So it never
/// returns a value that was never written, nor one whose rollback has
/// finished, as far as the runner knows: a deadlock victim, rolled back
/// during another session's statement, keeps its writes here until its
/// own statement reports 1213. Returns what is wrong, if anything, for the
/// caller to put after its description of the read.
pub(crate) fn judge_uncommitted(
    schema: &Schema,
    committed: &Db,
    open_writes: &[&[Write]],
    read: &Request,
    resp: &Response,
) -> Option<String> {
    let allowed = |table: &str, key: &[ModelValue], row: Option<&Row>| {
        committed.tables.get(table).and_then(|t| t.get(key)) == row
            || open_writes
                .iter()
                .flat_map(|ws| ws.iter())
                .any(|w| w.table == table && w.key == key && w.row.as_ref() == row)
    };
    match (read, resp) {
        (Request::Get { table, key }, Response::Row(r)) => {
            let key = schema.table(table)?.key_from_values(None, key);
            let row = r.as_ref().map(|r| r.iter().map(to_model).collect::<Row>());
            (!allowed(table, &key, row.as_ref())).then(|| {
                format!("a ReadUncommitted read returned {row:?}, which is neither the committed row nor a write of an open transaction")
            })
        }
        (
            Request::Scan {
                table,
                index,
                low,
                high,
                reverse,
                ..
            },
            Response::Rows(rows),
        ) => {
            let rows: Vec<Row> = rows
                .iter()
                .map(|r| r.iter().map(to_model).collect())
                .collect();
            let (t, ix) = scan_index(schema, table, index)?;
            if t.hidden {
                return uncommitted_in_order(
                    t,
                    ix,
                    committed,
                    open_writes,
                    (low, high, *reverse),
                    &rows,
                )
                .map(|v| format!("a ReadUncommitted read {v}"));
            }
            // Index order: the indexed columns, then the primary key.
            let order = |r: &Row| t.index_key(ix, r);
            for (i, r) in rows.iter().enumerate() {
                let key = t.key_of(r);
                if !allowed(table, &key, Some(r)) {
                    return Some(format!("a ReadUncommitted read returned {r:?}, which is neither the committed row nor a write of an open transaction"));
                }
                if i > 0 {
                    let (a, b) = (order(&rows[i - 1]), order(r));
                    let in_order = if *reverse { a > b } else { a < b };
                    if !in_order {
                        return Some(format!(
                            "a ReadUncommitted read returned {:?} before {r:?}, out of order",
                            rows[i - 1]
                        ));
                    }
                }
                if !inside_bounds(t, ix, &order(r), low, high) {
                    return Some(format!(
                        "a ReadUncommitted read returned {r:?}, outside its range"
                    ));
                }
            }
            None
        }
        _ => None,
    }
}

/// Judges a READ UNCOMMITTED scan of a table without a primary key,
/// whose rows come from the engine without the model's key: the rows it
/// may return are those committed and those open transactions inserted
/// (nothing else changes such a table), in index order within the scan's
/// bounds, and what it returned must be some of them in that order (a
/// subsequence, as the primary-key path allows: matched greedily, each
/// returned row to the first candidate after the previous match with the
/// same values, which finds a match whenever one exists). Returns what is
/// wrong, if anything.
fn uncommitted_in_order(
    t: &TableShape,
    ix: Option<&IndexShape>,
    committed: &Db,
    open_writes: &[&[Write]],
    (low, high, reverse): (&RangeBound, &RangeBound, bool),
    rows: &[Row],
) -> Option<String> {
    let (lo, hi) = (model_bound(t, ix, low), model_bound(t, ix, high));
    let mut candidates: BTreeMap<Vec<ModelValue>, &Row> = BTreeMap::new();
    let committed_rows = committed
        .tables
        .get(&t.name)
        .into_iter()
        .flat_map(|t| t.values());
    let written = open_writes
        .iter()
        .flat_map(|ws| ws.iter())
        .filter(|w| w.table == t.name)
        .filter_map(|w| w.row.as_ref());
    for r in committed_rows.chain(written) {
        let k = t.index_key(ix, r);
        if in_interval(&k, &lo, &hi) {
            candidates.insert(k, r);
        }
    }
    let mut order: Box<dyn Iterator<Item = &Row>> = if reverse {
        Box::new(candidates.values().rev().copied())
    } else {
        Box::new(candidates.values().copied())
    };
    for r in rows {
        if !order.any(|c| c[..c.len() - 1] == r[..]) {
            return Some(format!(
                "returned {r:?}, which is neither a committed row nor an open transaction's insert, or came out of order or outside its range"
            ));
        }
    }
    None
}

/// Whether a key (a primary key, or an index key) lies within a scan's
/// bounds.
fn inside_bounds(
    t: &TableShape,
    ix: Option<&IndexShape>,
    key: &[ModelValue],
    low: &RangeBound,
    high: &RangeBound,
) -> bool {
    in_interval(key, &model_bound(t, ix, low), &model_bound(t, ix, high))
}

/// A scan bound of index `ix` of `t` in the model's terms (a prefix of
/// the index's keys, each value in its column's collation).
fn model_bound(
    t: &TableShape,
    ix: Option<&IndexShape>,
    b: &RangeBound,
) -> std::ops::Bound<Vec<ModelValue>> {
    use std::ops::Bound as B;
    match b {
        RangeBound::Unbounded => B::Unbounded,
        RangeBound::Included(v) => B::Included(t.key_from_values(ix, v)),
        RangeBound::Excluded(v) => B::Excluded(t.key_from_values(ix, v)),
    }
}

/// Whether a key lies in an interval whose ends are keys or prefixes of
/// keys (an end shorter than the key compares with the key's first
/// fields, as the engine's bounds do).
fn in_interval(
    k: &[ModelValue],
    lo: &std::ops::Bound<Vec<ModelValue>>,
    hi: &std::ops::Bound<Vec<ModelValue>>,
) -> bool {
    use std::ops::Bound as B;
    let head = |v: &[ModelValue]| &k[..v.len().min(k.len())];
    let lo_ok = match lo {
        B::Unbounded => true,
        B::Included(v) => head(v) >= v.as_slice(),
        B::Excluded(v) => head(v) > v.as_slice(),
    };
    let hi_ok = match hi {
        B::Unbounded => true,
        B::Included(v) => head(v) <= v.as_slice(),
        B::Excluded(v) => head(v) < v.as_slice(),
    };
    lo_ok && hi_ok
}

/// A read's rows in the model's terms.
pub(crate) fn model_rows(resp: &Response) -> Vec<Row> {
    match resp {
        Response::Row(Some(r)) => vec![r.iter().map(to_model).collect()],
        Response::Rows(rs) => rs
            .iter()
            .map(|r| r.iter().map(to_model).collect())
            .collect(),
        _ => Vec::new(),
    }
}

/// What a read must return, seeing `base` (a committed state) plus its
/// transaction's own writes. A locking (current) read sees the committed
/// state: its locks serialize it after every committed writer of what it
/// reads; a consistent read sees its snapshot. `None` for a table or
/// index the schema does not have.
pub(crate) fn read_expected(
    schema: &Schema,
    base: &Db,
    writes: &[Write],
    read: &Request,
) -> Option<Vec<Row>> {
    match read {
        Request::Get { table, .. } if schema.table(table).is_some_and(|t| t.hidden) => None,
        Request::Get { table, key } => {
            let key = schema.table(table)?.key_from_values(None, key);
            let own = writes
                .iter()
                .rev()
                .find(|w| &w.table == table && w.key == key);
            let row = match own {
                Some(w) => w.row.clone(),
                None => base
                    .tables
                    .get(table.as_str())
                    .and_then(|t| t.get(&key))
                    .cloned(),
            };
            Some(row.into_iter().collect())
        }
        // A scan of a whole secondary index: the rows the transaction sees,
        // in index order (the indexed column, NULL first, then the primary
        // key, which InnoDB appends to every secondary entry), each row as
        // the clustered index has it for this read: a consistent read
        // returns the version its view sees, and only if that version's
        // key is the entry's (row_sel_sec_rec_is_for_clust_rec).
        //
        // Bounds are prefixes of the index key, on its first column (an
        // exclusive end leaves out every entry with that value). A NULL
        // bound is a value here, the smallest, as in the engine's order
        // (not SQL's `c >= NULL`, which is empty).
        Request::Scan {
            table,
            index: Some(index),
            low,
            high,
            reverse,
            limit,
        } => {
            let (t, ix) = scan_index(schema, table, &Some(index.clone()))?;
            let (lo, hi) = (model_bound(t, ix, low), model_bound(t, ix, high));
            // The transaction's last write of a key stands for the
            // committed row (a few writes against a whole table: the
            // committed rows are not copied into a map of their own).
            let mut own: BTreeMap<&[ModelValue], Option<&Row>> = BTreeMap::new();
            for w in writes.iter().filter(|w| &w.table == table) {
                own.insert(&w.key, w.row.as_ref());
            }
            let committed = base
                .tables
                .get(table.as_str())
                .into_iter()
                .flat_map(|t| t.iter())
                .filter(|(k, _)| !own.contains_key(k.as_slice()))
                .map(|(_, r)| r);
            let mut ordered: Vec<(Vec<ModelValue>, &Row)> = committed
                .chain(own.values().filter_map(|r| *r))
                .map(|r| (t.index_key(ix, r), r))
                .filter(|(k, _)| in_interval(k, &lo, &hi))
                .collect();
            // Index keys end in the primary key, so no two are equal and
            // an unstable sort gives the one order. With a limit, only
            // the rows it keeps are sorted.
            let by_scan = |a: &(Vec<ModelValue>, &Row), b: &(Vec<ModelValue>, &Row)| {
                if *reverse {
                    b.0.cmp(&a.0)
                } else {
                    a.0.cmp(&b.0)
                }
            };
            if let Some(n) = limit.filter(|&n| n < ordered.len()) {
                if n == 0 {
                    ordered.clear();
                } else {
                    ordered.select_nth_unstable_by(n - 1, by_scan);
                    ordered.truncate(n);
                }
            }
            ordered.sort_unstable_by(by_scan);
            Some(ordered.into_iter().map(|(_, r)| r.clone()).collect())
        }
        Request::Scan {
            table,
            index: None,
            low,
            high,
            reverse,
            limit,
        } => {
            let shape = schema.table(table)?;
            let (lo, hi) = (
                model_bound(shape, None, low),
                model_bound(shape, None, high),
            );
            let inside = |k: &[ModelValue]| in_interval(k, &lo, &hi);
            // Only as many committed rows as the limit can need (own
            // deletes may remove some): from the end the scan starts at.
            let own: Vec<&Write> = writes.iter().filter(|w| &w.table == table).collect();
            let mut need = limit.unwrap_or(usize::MAX).saturating_add(own.len());
            // A bound shorter than a composite key is a prefix, which the
            // map's range does not know: such an end is widened (every row
            // on that side is taken, and `inside` decides).
            let key_len = shape.primary_key.len();
            let (mut range_lo, mut range_hi) = (lo.clone(), hi.clone());
            for end in [&mut range_lo, &mut range_hi] {
                if matches!(end, std::ops::Bound::Included(v) | std::ops::Bound::Excluded(v) if v.len() < key_len)
                {
                    *end = std::ops::Bound::Unbounded;
                    need = usize::MAX;
                }
            }
            let mut rows: BTreeMap<Vec<ModelValue>, Row> = BTreeMap::new();
            if let Some(t) = base.tables.get(table.as_str()) {
                if lo_le_hi(&range_lo, &range_hi) {
                    let range = t.range::<Vec<ModelValue>, _>((range_lo, range_hi));
                    let picked: Box<dyn Iterator<Item = (&Vec<ModelValue>, &Row)>> = if *reverse {
                        Box::new(range.rev().take(need))
                    } else {
                        Box::new(range.take(need))
                    };
                    rows.extend(picked.map(|(k, r)| (k.clone(), r.clone())));
                }
            }
            let boundary = if *reverse {
                rows.keys().next().cloned()
            } else {
                rows.keys().next_back().cloned()
            };
            let truncated = rows.len() == need;
            for w in own {
                // An own write past the rows taken matters only if the
                // committed rows were cut short before it.
                let beyond = truncated
                    && boundary.as_ref().is_some_and(|b| {
                        if *reverse {
                            &w.key < b
                        } else {
                            &w.key > b
                        }
                    });
                if beyond {
                    continue;
                }
                match &w.row {
                    Some(r) => rows.insert(w.key.clone(), r.clone()),
                    None => rows.remove(&w.key),
                };
            }
            let mut out: Vec<Row> = rows
                .into_iter()
                .filter(|(k, _)| inside(k))
                .map(|(_, r)| r)
                .collect();
            if *reverse {
                out.reverse();
            }
            out.truncate(limit.unwrap_or(usize::MAX));
            Some(out)
        }
        _ => None,
    }
}

/// Whether a range with these ends is not empty-by-construction
/// (`BTreeMap::range` panics on a start above the end).
pub(crate) fn lo_le_hi(
    lo: &std::ops::Bound<Vec<ModelValue>>,
    hi: &std::ops::Bound<Vec<ModelValue>>,
) -> bool {
    use std::ops::Bound as B;
    match (lo, hi) {
        (B::Included(a), B::Included(b)) => a <= b,
        (B::Included(a), B::Excluded(b))
        | (B::Excluded(a), B::Included(b))
        | (B::Excluded(a), B::Excluded(b)) => a < b,
        _ => true,
    }
}

#[cfg(test)]
mod tests;
