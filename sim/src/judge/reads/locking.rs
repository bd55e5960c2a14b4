//! The judge of locking reads under REPEATABLE READ and SERIALIZABLE: the
//! range a locking read's next-key locks cover and the rows it saw there,
//! a later locking read of the same transaction checked against it for
//! phantoms, and a scan that waited for locks checked against what a
//! cursor restored after each wait could have read (InnoDB's
//! `row_search_for_mysql`).

use super::*;

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
