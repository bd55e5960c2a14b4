//! The read and write judge: what the model says a statement returns or
//! changes, given the rows it sees (the committed state, or a snapshot of
//! it, plus the transaction's own writes), and whether the engine's answer
//! is that.

use crate::judge::foreign;
use crate::schema::{IndexShape, Schema, TableShape};
use engine::{RangeBound, Request, Response, Value};
use models::{Db, ModelValue, Row, Write};
use std::collections::{BTreeMap, BTreeSet};

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

/// What a locking read under REPEATABLE READ or SERIALIZABLE locked: the
/// interval of its index its next-key locks cover, and the rows it saw
/// there. Positions are index keys: the primary key, or the indexed column
/// then the primary key for a secondary index (bounds are prefixes of
/// them). A forward scan from `from` that returned its LIMIT covers
/// `[from, last row]`; one that ran out covers up to the end (the
/// supremum's lock); a backward scan likewise from below; a point read
/// covers its key.
#[derive(Debug, Clone)]
pub(crate) struct LockedRange {
    table: String,
    /// The secondary index, or `None` for the primary key.
    index: Option<String>,
    lo: std::ops::Bound<Vec<ModelValue>>,
    hi: std::ops::Bound<Vec<ModelValue>>,
    rows: Vec<Row>,
    /// How many of the transaction's own writes preceded it.
    writes_mark: usize,
}

/// The range a locking read locked, given the rows it returned in the
/// model's terms (those the model expected, once the read matched them:
/// for a table without a primary key only they carry the model's key).
pub(crate) fn locked_range(
    schema: &Schema,
    read: &Request,
    rows: Vec<Row>,
    writes_mark: usize,
) -> Option<LockedRange> {
    use std::ops::Bound as B;
    let (table, index, lo, hi) = match read {
        Request::Get { table, key } => {
            let k = schema.table(table)?.key_from_values(None, key);
            (table, None, B::Included(k.clone()), B::Included(k))
        }
        Request::Scan {
            table,
            index,
            low,
            high,
            reverse,
            limit,
        } => {
            let (t, ix) = scan_index(schema, table, index)?;
            let bound = |b| model_bound(t, ix, b);
            let full = limit.is_some_and(|l| rows.len() >= l);
            let last = rows.last().map(|r| t.index_key(ix, r));
            let (lo, hi) = match (reverse, full, last) {
                (false, true, Some(last)) => (bound(low), B::Included(last)),
                (true, true, Some(last)) => (B::Included(last), bound(high)),
                _ => (bound(low), bound(high)),
            };
            (table, index.clone(), lo, hi)
        }
        _ => return None,
    };
    Some(LockedRange {
        table: table.clone(),
        index,
        lo,
        hi,
        rows,
        writes_mark,
    })
}

impl LockedRange {
    /// How many of the transaction's own writes preceded the read: a
    /// rollback to a savepoint below it takes its record away (what it saw
    /// included writes that are gone).
    pub(crate) fn writes_mark(&self) -> usize {
        self.writes_mark
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

/// Judges a locking read against an earlier one of the same transaction
/// (REPEATABLE READ or SERIALIZABLE): where both ranges' locks reach,
/// nobody else can have inserted, deleted or changed a row, so it must see
/// exactly what the earlier one saw there, changed only by the
/// transaction's own writes since (`writes`, all of them so far). A
/// difference is a phantom, or a change under a lock. Returns what is
/// wrong, if anything.
pub(crate) fn phantom(
    schema: &Schema,
    earlier: &LockedRange,
    now: &LockedRange,
    writes: &[Write],
) -> Option<String> {
    if earlier.table != now.table
        || earlier.index != now.index
        || writes.len() < earlier.writes_mark
    {
        return None;
    }
    let (t, ix) = scan_index(schema, &earlier.table, &earlier.index)?;
    let both = |r: &Row| {
        let k = t.index_key(ix, r);
        in_interval(&k, &earlier.lo, &earlier.hi) && in_interval(&k, &now.lo, &now.hi)
    };
    // Rows by primary key: an own write moves a row (out of the range, or
    // within a secondary index) or removes it.
    let mut want: BTreeMap<Vec<ModelValue>, Row> = earlier
        .rows
        .iter()
        .filter(|r| both(r))
        .map(|r| (t.key_of(r), r.clone()))
        .collect();
    for w in writes[earlier.writes_mark..]
        .iter()
        .filter(|w| w.table == earlier.table)
    {
        want.remove(&w.key);
        if let Some(r) = w.row.as_ref().filter(|r| both(r)) {
            want.insert(w.key.clone(), r.clone());
        }
    }
    let got: BTreeMap<Vec<ModelValue>, Row> = now
        .rows
        .iter()
        .filter(|r| both(r))
        .map(|r| (t.key_of(r), r.clone()))
        .collect();
    (got != want).then(|| {
        let extra: Vec<&Vec<ModelValue>> = got.keys().filter(|k| want.get(*k) != got.get(*k)).collect();
        let missing: Vec<&Vec<ModelValue>> =
            want.keys().filter(|k| !got.contains_key(*k)).collect();
        format!(
            "{}: a locking read saw a phantom in a range this transaction had locked: rows {extra:?} differ from what its earlier locking read saw, rows {missing:?} are gone",
            earlier.table
        )
    })
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

/// Whether a locking scan that waited for locks returned what a cursor
/// that kept its place through each wait could have (InnoDB's
/// `row_search_for_mysql` restores its cursor on the record it waited for,
/// so a row inserted behind it during the wait, in a gap it did not lock,
/// is not read): walking the range in scan order, each position read in
/// one of `states` (the committed states at each wait, then at the end),
/// never going back to an earlier one, gives `resp` (with the
/// transaction's own `writes` over each). The states come from the
/// runner's model, never from the engine: where the cursor stood is not
/// asked of it.
pub(crate) fn resumed_scan_matches(
    schema: &Schema,
    states: &[&Db],
    writes: &[Write],
    read: &Request,
    resp: &Response,
    hidden: bool,
) -> bool {
    let Request::Scan {
        table,
        index,
        low,
        high,
        reverse,
        limit,
    } = read
    else {
        return false;
    };
    let Some((t, ix)) = scan_index(schema, table, index) else {
        return false;
    };
    let Response::Rows(got) = resp else {
        return false;
    };
    let unlimited = Request::Scan {
        table: table.clone(),
        index: index.clone(),
        low: low.clone(),
        high: high.clone(),
        reverse: *reverse,
        limit: None,
    };
    // Each state's rows by their place in the index.
    let mut per_state: Vec<BTreeMap<Vec<ModelValue>, Row>> = Vec::new();
    for st in states {
        let Some(rows) = read_expected(schema, st, writes, &unlimited) else {
            return false;
        };
        per_state.push(rows.into_iter().map(|r| (t.index_key(ix, &r), r)).collect());
    }
    let mut places: Vec<&Vec<ModelValue>> = per_state.iter().flat_map(|m| m.keys()).collect();
    places.sort();
    places.dedup();
    if *reverse {
        places.reverse();
    }
    let extra = usize::from(hidden);
    let same_row = |r: &[Value], w: &Row| {
        r.len() + extra == w.len() && r.iter().zip(w).all(|(v, m)| same_value(v, m))
    };
    let want_len = got.len();
    let full = limit.is_some_and(|n| n == want_len);
    // (state, rows matched so far) pairs the cursor can be in.
    let mut at: BTreeSet<(usize, usize)> = BTreeSet::from([(0, 0)]);
    for place in places {
        if full && at.iter().any(|&(_, n)| n == want_len) {
            return true;
        }
        let mut next = BTreeSet::new();
        for &(j, n) in &at {
            for (k, state) in per_state.iter().enumerate().skip(j) {
                match state.get(place) {
                    None => {
                        next.insert((k, n));
                    }
                    Some(row) if n < want_len && same_row(&got[n], row) => {
                        next.insert((k, n + 1));
                    }
                    Some(_) => {}
                }
            }
        }
        if next.is_empty() {
            return false;
        }
        at = next;
    }
    at.iter().any(|&(_, n)| n == want_len)
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
mod tests {
    use super::*;

    /// The fixed tables' schema.
    fn fixed() -> Schema {
        use engine::RowFormat::Compact;
        Schema::of(&[
            crate::tables::sbtest("sb", Compact),
            crate::tables::docs("docs", Compact),
        ])
    }

    /// A composite primary key (b, a) and a unique index on c: the model
    /// keys rows by (b, a), refuses a second row with c's value (NULLs
    /// never collide), lets a row keep its own, and moves a row whose key
    /// changes.
    #[test]
    fn composite_keys_and_unique_indexes_are_judged_by_the_schema() {
        use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};
        let col = |name: &str, nullable| ColumnDef {
            name: name.into(),
            ty: ColumnType::INT,
            nullable,
            collation: Default::default(),
        };
        let schema = Schema::of(&[TableDef {
            name: "t".into(),
            columns: vec![col("a", false), col("b", false), col("c", true)],
            primary_key: vec![1, 0],
            primary_prefixes: Vec::new(),
            indexes: vec![IndexDef {
                name: "c".into(),
                columns: vec![2],
                unique: true,
                prefixes: Vec::new(),
            }],
            row_format: RowFormat::Compact,
            foreign: Vec::new(),
            server: Vec::new(),
        }]);
        let v = |x: Option<i64>| x.map_or(Value::Null, Value::Int);
        let insert = |a, b, c| Request::Insert {
            table: "t".into(),
            row: vec![v(Some(a)), v(Some(b)), v(c)],
        };
        let db = Db::with_tables(["t"]);
        let (got, writes) = expected(&schema, &db, &[], &insert(1, 2, Some(7)), 0).expect("judged");
        assert_eq!(got, Ok(Response::Affected(1)));
        assert_eq!(writes[0].key, vec![ModelValue::Int(2), ModelValue::Int(1)]);
        let own = writes;
        let refused = |req: &Request| expected(&schema, &db, &own, req, 0).expect("judged").0;
        assert_eq!(refused(&insert(1, 2, None)), Err(1062), "the same key");
        assert_eq!(refused(&insert(5, 5, Some(7))), Err(1062), "c = 7 is taken");
        assert_eq!(refused(&insert(5, 5, None)), Ok(Response::Affected(1)));
        let (_, nulls) = expected(&schema, &db, &[], &insert(1, 1, None), 0).expect("judged");
        assert_eq!(
            expected(&schema, &db, &nulls, &insert(2, 2, None), 0)
                .expect("judged")
                .0,
            Ok(Response::Affected(1)),
            "NULLs never collide"
        );
        let update = |set: Vec<(&str, Value)>| Request::Update {
            table: "t".into(),
            key: vec![Value::Int(2), Value::Int(1)],
            set: set.into_iter().map(|(c, x)| (c.to_string(), x)).collect(),
        };
        assert_eq!(
            refused(&update(vec![("c", Value::Int(7))])),
            Ok(Response::Affected(0))
        );
        let (got, moved) =
            expected(&schema, &db, &own, &update(vec![("a", Value::Int(9))]), 0).expect("judged");
        assert_eq!(got, Ok(Response::Affected(1)));
        assert_eq!(moved.len(), 2, "a delete and an insert: {moved:?}");
        assert_eq!(moved[1].key, vec![ModelValue::Int(2), ModelValue::Int(9)]);
    }

    /// A latin1_swedish_ci primary key and unique index: the model takes
    /// 'ab' and 'AB ' as one key, so the second insert is a duplicate, a
    /// read by either finds the row with its own bytes, and a change of
    /// the key's case moves the row (two writes, as the engine's delete and
    /// insert) without colliding with itself.
    #[test]
    fn collated_keys_are_equal_in_their_collation() {
        use engine::record::Collation;
        use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};
        let col = |name: &str| ColumnDef {
            name: name.into(),
            ty: ColumnType::VarChar(8),
            nullable: false,
            collation: Collation::Latin1SwedishCi,
        };
        let schema = Schema::of(&[TableDef {
            name: "t".into(),
            columns: vec![col("p"), col("u")],
            primary_key: vec![0],
            primary_prefixes: Vec::new(),
            indexes: vec![IndexDef {
                name: "u".into(),
                columns: vec![1],
                unique: true,
                prefixes: Vec::new(),
            }],
            row_format: RowFormat::Compact,
            foreign: Vec::new(),
            server: Vec::new(),
        }]);
        let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        let insert = |p: &str, u: &str| Request::Insert {
            table: "t".into(),
            row: vec![b(p), b(u)],
        };
        let db = Db::with_tables(["t"]);
        let (got, own) = expected(&schema, &db, &[], &insert("ab", "x"), 0).expect("judged");
        assert_eq!(got, Ok(Response::Affected(1)));
        let judged = |req: &Request| expected(&schema, &db, &own, req, 0).expect("judged");
        assert_eq!(
            judged(&insert("AB ", "y")).0,
            Err(1062),
            "the same primary key"
        );
        assert_eq!(
            judged(&insert("cd", "X")).0,
            Err(1062),
            "the same unique value"
        );
        assert_eq!(judged(&insert("cd", "xy")).0, Ok(Response::Affected(1)));
        let get = Request::Get {
            table: "t".into(),
            key: vec![b("aB")],
        };
        let rows = read_expected(&schema, &db, &own, &get).expect("judged");
        assert_eq!(
            rows,
            vec![vec![
                ModelValue::Bytes(b"ab"[..].into()),
                ModelValue::Bytes(b"x"[..].into()),
            ]]
        );
        let update = |p: &str| Request::Update {
            table: "t".into(),
            key: vec![b("ab")],
            set: vec![("p".into(), b(p))],
        };
        let (got, moved) = judged(&update("AB"));
        assert_eq!(got, Ok(Response::Affected(1)));
        assert_eq!(moved.len(), 2, "a delete and an insert: {moved:?}");
        assert_eq!(
            judged(&update("ab")).0,
            Ok(Response::Affected(0)),
            "no change"
        );
    }

    /// The allocation-free comparison agrees with converting the response
    /// to model rows and comparing those.
    #[test]
    fn rows_match_agrees_with_model_rows() {
        let row = |id: u64, v: i64, doc: Option<&[u8]>| {
            vec![
                Value::UInt(id),
                Value::Int(v),
                doc.map_or(Value::Null, |d| Value::Bytes(d.to_vec())),
            ]
        };
        let responses = [
            Response::Ok,
            Response::Affected(1),
            Response::Row(None),
            Response::Row(Some(row(1, -1, Some(b"x")))),
            Response::Rows(vec![]),
            Response::Rows(vec![row(1, -1, Some(b"x")), row(2, 2, None)]),
            Response::Rows(vec![row(1, -1, Some(b"y")), row(2, 2, None)]),
            Response::Rows(vec![row(1, -1, Some(b"x"))]),
            Response::Rows(vec![row(1, 7, Some(b"x")), row(2, 2, None)]),
            Response::Rows(vec![row(1, -1, None), row(2, 2, None)]),
        ];
        for a in &responses {
            for b in &responses {
                let want = model_rows(b);
                assert_eq!(
                    rows_match(a, &want, false),
                    model_rows(a) == want,
                    "{a:?} against {b:?}"
                );
            }
        }
    }

    /// READ UNCOMMITTED may see the committed row or an open transaction's
    /// write, and nothing else: not a value never written, not a write a
    /// rollback undid.
    #[test]
    fn uncommitted_reads_see_committed_or_open_writes_only() {
        let row = |k: i64| vec![Value::UInt(1), Value::Int(k), Value::Null];
        let model = |k: i64| -> Row { row(k).iter().map(to_model).collect() };
        let mut committed = Db::with_tables(["docs"]);
        committed
            .table_mut("docs")
            .insert(vec![ModelValue::Int(1)], model(10));
        let open = [Write {
            table: "docs".into(),
            key: vec![ModelValue::Int(1)],
            row: Some(model(11)),
        }];
        let get = Request::Get {
            table: "docs".into(),
            key: vec![Value::Int(1)],
        };
        let judge = |open: &[&[Write]], k: i64| {
            judge_uncommitted(
                &fixed(),
                &committed,
                open,
                &get,
                &Response::Row(Some(row(k))),
            )
        };
        assert_eq!(judge(&[&open], 10), None, "the committed row");
        assert_eq!(judge(&[&open], 11), None, "an open transaction's write");
        assert!(judge(&[&open], 12).is_some(), "a value never written");
        assert!(judge(&[], 11).is_some(), "a write whose rollback finished");
    }

    /// Where two locking reads of one transaction overlap, the later sees
    /// what the earlier saw there, changed only by the transaction's own
    /// writes; past the earlier range's locks, anything goes.
    #[test]
    fn a_phantom_inside_a_locked_range_is_reported_and_nothing_else() {
        let row = |id: u64| vec![Value::UInt(id), Value::Int(0), Value::Null];
        let scan = |from: u64, limit: usize| Request::Scan {
            table: "docs".into(),
            index: None,
            low: RangeBound::Included(vec![Value::UInt(from)]),
            high: RangeBound::Unbounded,
            reverse: false,
            limit: Some(limit),
        };
        let rows = |ids: &[u64]| model_rows(&Response::Rows(ids.iter().map(|&i| row(i)).collect()));
        // Locked [10, 30] (the LIMIT was reached at 30).
        let earlier = locked_range(&fixed(), &scan(10, 2), rows(&[10, 30]), 0).expect("a range");
        // 20 appeared inside: a phantom.
        let now = locked_range(&fixed(), &scan(10, 3), rows(&[10, 20, 30]), 0).expect("a range");
        assert!(phantom(&fixed(), &earlier, &now, &[]).is_some());
        // 40 lies past the earlier range: not a phantom.
        let now = locked_range(&fixed(), &scan(10, 3), rows(&[10, 30, 40]), 0).expect("a range");
        assert_eq!(phantom(&fixed(), &earlier, &now, &[]), None);
        // The transaction's own insert of 20 is no phantom.
        let own = [Write {
            table: "docs".into(),
            key: vec![ModelValue::Int(20)],
            row: Some(row(20).iter().map(to_model).collect()),
        }];
        let now = locked_range(&fixed(), &scan(10, 3), rows(&[10, 20, 30]), 1).expect("a range");
        assert_eq!(phantom(&fixed(), &earlier, &now, &own), None);
    }

    /// A table without a primary key: the model numbers its inserts, an
    /// engine row (without the hidden key) matches the model's row but for
    /// that number, and READ UNCOMMITTED scans must run through the
    /// committed and open rows in the model's order.
    #[test]
    fn rows_of_a_table_without_a_primary_key_are_judged_by_their_order() {
        use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};
        let schema = Schema::of(&[TableDef {
            name: "h".into(),
            columns: vec![ColumnDef {
                name: "a".into(),
                ty: ColumnType::INT,
                nullable: false,
                collation: Default::default(),
            }],
            primary_key: vec![],
            primary_prefixes: Vec::new(),
            indexes: vec![IndexDef {
                name: "a".into(),
                columns: vec![0],
                unique: false,
                prefixes: Vec::new(),
            }],
            row_format: RowFormat::Compact,
            foreign: Vec::new(),
            server: Vec::new(),
        }]);
        let t = schema.table("h").expect("there");
        assert!(t.hidden);
        let insert = |a: i64| Request::Insert {
            table: "h".into(),
            row: vec![Value::Int(a)],
        };
        let db = Db::with_tables(["h"]);
        let (got, w7) = expected(&schema, &db, &[], &insert(5), 7).expect("judged");
        assert_eq!(got, Ok(Response::Affected(1)));
        assert_eq!(w7[0].key, vec![ModelValue::Int(7)]);
        assert_eq!(
            w7[0].row,
            Some(vec![ModelValue::Int(5), ModelValue::Int(7)])
        );
        // The same values again are another row, not a duplicate.
        let (got, w8) = expected(&schema, &db, &w7, &insert(5), 8).expect("judged");
        assert_eq!(got, Ok(Response::Affected(1)));
        let (_, w9) = expected(&schema, &db, &[], &insert(3), 9).expect("judged");
        // Engine rows come without the number.
        let resp = Response::Rows(vec![vec![Value::Int(5)], vec![Value::Int(5)]]);
        let want: Vec<Row> = [&w7, &w8]
            .iter()
            .map(|w| w[0].row.clone().expect("a row"))
            .collect();
        assert!(rows_match(&resp, &want, true));
        assert!(!rows_match(&resp, &want, false));
        assert!(!rows_match(&resp, &want[..1], true));
        // READ UNCOMMITTED on the index a: committed 5 (#7), open 5 (#8)
        // and 3 (#9), in the order (a, number): 3, 5, 5.
        let mut committed = db.clone();
        models::recovery::apply(&mut committed, &models::TxnEffects { writes: w7 });
        let open: Vec<Write> = w8.into_iter().chain(w9).collect();
        let scan = |reverse| Request::Scan {
            table: "h".into(),
            index: Some("a".into()),
            low: RangeBound::Unbounded,
            high: RangeBound::Unbounded,
            reverse,
            limit: None,
        };
        let judge = |open: &[&[Write]], reverse, vals: &[i64]| {
            let rows = Response::Rows(vals.iter().map(|&a| vec![Value::Int(a)]).collect());
            judge_uncommitted(&schema, &committed, open, &scan(reverse), &rows)
        };
        assert_eq!(judge(&[&open], false, &[3, 5, 5]), None);
        assert_eq!(judge(&[&open], false, &[5]), None, "a run through them");
        assert_eq!(judge(&[&open], true, &[5, 5, 3]), None);
        assert!(judge(&[&open], false, &[5, 3]).is_some(), "out of order");
        assert!(
            judge(&[&open], false, &[3, 5, 5, 5]).is_some(),
            "a row too many"
        );
        assert!(judge(&[], false, &[3, 5]).is_some(), "a rolled-back insert");
        assert!(judge(&[&open], false, &[4]).is_some(), "never written");
    }
}
