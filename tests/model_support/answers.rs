//! What the model says a statement must answer: rows affected and the
//! writes that follow, an error, or the rows of a scan.

use super::ops::{range_bound, ScanSpec};
use crate::common::{row_to_model, to_model};
use engine::{RangeBound, Value};
use models::value::fmt_key;
use models::{Row, TableState};
use std::cmp::Ordering;

/// What a statement must do, by the model.
pub enum Expect {
    /// Succeed with this many rows affected, after which these keys hold
    /// these rows (`None`: deleted), in order.
    Affected(u64, Vec<(Row, Option<Row>)>),
    /// Fail with MySQL error 1062.
    Duplicate,
    /// Fail with MySQL error 1406.
    TooLong,
}

/// Short: rows may hold 100 KB values.
impl std::fmt::Debug for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Affected(n, writes) => {
                let keys: Vec<String> = writes
                    .iter()
                    .map(|(k, r)| {
                        format!(
                            "{}{}",
                            fmt_key(k),
                            if r.is_some() { "" } else { " deleted" }
                        )
                    })
                    .collect();
                write!(f, "Affected({n}) writing [{}]", keys.join(", "))
            }
            Expect::Duplicate => write!(f, "error 1062 (duplicate key)"),
            Expect::TooLong => write!(f, "error 1406 (data too long)"),
        }
    }
}

pub fn model_insert(t: &TableState, row: &[Value]) -> Expect {
    let row = row_to_model(row);
    let key = vec![row[0].clone()];
    if t.contains_key(&key) {
        return Expect::Duplicate;
    }
    Expect::Affected(1, vec![(key, Some(row))])
}

pub fn model_update(t: &TableState, key: &Value, set: &[(usize, Value)]) -> Expect {
    let key = vec![to_model(key)];
    let Some(old) = t.get(&key) else {
        return Expect::Affected(0, vec![]);
    };
    let mut new = old.clone();
    for (c, v) in set {
        new[*c] = to_model(v);
    }
    if &new == old {
        // MySQL counts changed rows, not matched ones.
        return Expect::Affected(0, vec![]);
    }
    let new_key = vec![new[0].clone()];
    if new_key == key {
        return Expect::Affected(1, vec![(key, Some(new))]);
    }
    if t.contains_key(&new_key) {
        return Expect::Duplicate;
    }
    Expect::Affected(1, vec![(key, None), (new_key, Some(new))])
}

pub fn model_delete(t: &TableState, key: &Value) -> Expect {
    let key = vec![to_model(key)];
    match t.contains_key(&key) {
        true => Expect::Affected(1, vec![(key, None)]),
        false => Expect::Affected(0, vec![]),
    }
}

/// The rows a scan returns: ordered by the index key (the indexed column,
/// then the primary key, which makes it unique), bounds compared on the
/// key prefix they give, as the engine's cursor does.
pub fn model_scan(t: &TableState, s: &ScanSpec) -> Vec<Row> {
    let mut keyed: Vec<(Row, &Row)> = t
        .iter()
        .map(|(pk, row)| {
            let mut k = if s.secondary {
                vec![row[s.table.secondary().0].clone()]
            } else {
                vec![]
            };
            k.extend(pk.iter().cloned());
            (k, row)
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let low = range_bound(s.table, s.secondary, s.low);
    let high = range_bound(s.table, s.secondary, s.high);
    let prefix_cmp = |k: &Row, b: &[Value]| -> Ordering {
        let b: Row = b.iter().map(to_model).collect();
        k[..b.len()].cmp(&b)
    };
    keyed.retain(|(k, _)| {
        let above = match &low {
            RangeBound::Unbounded => true,
            RangeBound::Included(b) => prefix_cmp(k, b) != Ordering::Less,
            RangeBound::Excluded(b) => prefix_cmp(k, b) == Ordering::Greater,
        };
        let below = match &high {
            RangeBound::Unbounded => true,
            RangeBound::Included(b) => prefix_cmp(k, b) != Ordering::Greater,
            RangeBound::Excluded(b) => prefix_cmp(k, b) == Ordering::Less,
        };
        above && below
    });
    if s.reverse {
        keyed.reverse();
    }
    keyed
        .into_iter()
        .take(s.limit.map_or(usize::MAX, usize::from))
        .map(|(_, r)| r.clone())
        .collect()
}

/// The first difference between two row lists, printed short.
pub fn rows_diff(got: &[Row], want: &[Row]) -> String {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            return format!("row {i}: engine {} model {}", fmt_key(g), fmt_key(w));
        }
    }
    let (longer, who) = if got.len() > want.len() {
        (got, "engine")
    } else {
        (want, "model")
    };
    let extra: Vec<String> = longer[got.len().min(want.len())..]
        .iter()
        .take(4)
        .map(|r| fmt_key(&r[..1]))
        .collect();
    format!(
        "{} rows from the engine, {} from the model; the {who} also has keys {}",
        got.len(),
        want.len(),
        extra.join(" ")
    )
}
