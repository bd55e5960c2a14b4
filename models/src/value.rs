//! Model values, rows and database states.

use crate::collation::Collation;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A column value as the model sees it. Ordered: NULL first, then
/// integers, then byte strings, then strings of a collation (each
/// collation's apart, though a column never mixes them).
#[derive(Debug, Clone)]
pub enum ModelValue {
    /// SQL NULL.
    Null,
    /// Any integer column.
    Int(i128),
    /// Any string or binary column. Shared: model states, snapshots and
    /// transaction write sets copy rows often, and long values run to tens
    /// of kilobytes.
    Bytes(Arc<[u8]>),
    /// A string as a key of a column with a collation: equal to, and
    /// ordered among, other strings of the collation as it compares them
    /// ('a' equals 'A ' in latin1_swedish_ci). Keys only: a row keeps its
    /// value's bytes as [`ModelValue::Bytes`], so that what a read returns
    /// or recovery restores is compared byte for byte.
    Collated(Arc<[u8]>, Collation),
}

impl ModelValue {
    /// This value as a key of a column of `collation`: a string becomes
    /// [`ModelValue::Collated`] (binary strings stay bytes).
    pub fn keyed(self, collation: Collation) -> ModelValue {
        match self {
            ModelValue::Bytes(b) if collation != Collation::Binary => {
                ModelValue::Collated(b, collation)
            }
            v => v,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            ModelValue::Null => 0,
            ModelValue::Int(_) => 1,
            ModelValue::Bytes(_) => 2,
            ModelValue::Collated(..) => 3,
        }
    }
}

impl PartialEq for ModelValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ModelValue::Null, ModelValue::Null) => true,
            (ModelValue::Int(a), ModelValue::Int(b)) => a == b,
            (ModelValue::Bytes(a), ModelValue::Bytes(b)) => a == b,
            (ModelValue::Collated(a, x), ModelValue::Collated(b, y)) => {
                x == y && x.key(a).eq(x.key(b))
            }
            _ => false,
        }
    }
}

impl Eq for ModelValue {}

impl PartialOrd for ModelValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ModelValue {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (ModelValue::Int(a), ModelValue::Int(b)) => a.cmp(b),
            (ModelValue::Bytes(a), ModelValue::Bytes(b)) => a.cmp(b),
            (ModelValue::Collated(a, x), ModelValue::Collated(b, y)) => {
                x.cmp(y).then_with(|| x.compare(a, b))
            }
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl Hash for ModelValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            ModelValue::Null => {}
            ModelValue::Int(i) => i.hash(state),
            ModelValue::Bytes(b) => b.hash(state),
            ModelValue::Collated(b, c) => {
                c.hash(state);
                for w in c.key(b) {
                    w.hash(state);
                }
            }
        }
    }
}

impl fmt::Display for ModelValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelValue::Null => write!(f, "NULL"),
            ModelValue::Int(i) => write!(f, "{i}"),
            ModelValue::Bytes(b) | ModelValue::Collated(b, _) if b.len() > 24 => write!(
                f,
                "'{}...'({} bytes)",
                String::from_utf8_lossy(&b[..16]),
                b.len()
            ),
            ModelValue::Bytes(b) | ModelValue::Collated(b, _) => {
                write!(f, "'{}'", String::from_utf8_lossy(b))
            }
        }
    }
}

/// A row: one value per column.
pub type Row = Vec<ModelValue>;

/// One table's rows by primary key.
pub type TableState = BTreeMap<Vec<ModelValue>, Row>;

/// A database state: tables by name. Each table is shared copy-on-write,
/// so copying a state (a snapshot, a prefix of the commit history) copies
/// only the tables that later change, and comparing two states skips the
/// tables they still share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Db {
    /// Tables by name.
    pub tables: BTreeMap<String, Arc<TableState>>,
}

impl Db {
    /// An empty state with these tables.
    pub fn with_tables<'a>(names: impl IntoIterator<Item = &'a str>) -> Db {
        Db {
            tables: names
                .into_iter()
                .map(|n| (n.to_string(), Arc::default()))
                .collect(),
        }
    }

    /// A table to change, created empty if missing; copied first if another
    /// state shares it.
    pub fn table_mut(&mut self, name: &str) -> &mut TableState {
        if !self.tables.contains_key(name) {
            self.tables.insert(name.to_string(), Arc::default());
        }
        Arc::make_mut(self.tables.get_mut(name).expect("just ensured"))
    }

    /// Whether two states hold the same rows. A table named in `ordinal`
    /// has no key the engine shows (a table without a primary key, keyed
    /// by a hidden row id): its rows are compared in key order, as a
    /// sequence, each without its last value (the model's own position of
    /// the row, which the other side numbers its own way).
    pub fn same_rows(&self, other: &Db, ordinal: &[String]) -> bool {
        if ordinal.is_empty() {
            return self == other;
        }
        self.tables.len() == other.tables.len()
            && self.tables.iter().all(|(name, a)| {
                let Some(b) = other.tables.get(name) else {
                    return false;
                };
                if !ordinal.contains(name) {
                    return a == b;
                }
                fn strip(r: &Row) -> &[ModelValue] {
                    &r[..r.len().saturating_sub(1)]
                }
                a.len() == b.len() && a.values().map(strip).eq(b.values().map(strip))
            })
    }

    /// This state with each table named in `ordinal` renumbered: its rows
    /// keyed `0..` in key order, each row's last value the same number
    /// (see [`Db::same_rows`]). Two states that hold the same rows are
    /// equal once both are renumbered.
    pub fn renumbered(&self, ordinal: &[String]) -> Db {
        let mut out = self.clone();
        for name in ordinal {
            let Some(t) = self.tables.get(name) else {
                continue;
            };
            let rows: TableState = t
                .values()
                .enumerate()
                .map(|(i, r)| {
                    let pos = ModelValue::Int(i as i128);
                    let mut r = r.clone();
                    if let Some(last) = r.last_mut() {
                        *last = pos.clone();
                    }
                    (vec![pos], r)
                })
                .collect();
            out.tables.insert(name.clone(), Arc::new(rows));
        }
        out
    }

    /// A short description of how two states differ (the first eight
    /// differences, separated by "; "), naming each side: `self` is
    /// `left`, `other` is `right` ("the recovered state has key (11), the
    /// model after 2 commits does not").
    pub fn diff_named(&self, left: &str, other: &Db, right: &str) -> String {
        let mut out = Vec::new();
        for (name, a) in &self.tables {
            let Some(b) = other.tables.get(name) else {
                out.push(format!("{left} has table {name}, {right} does not"));
                continue;
            };
            for (k, ra) in a.iter() {
                match b.get(k) {
                    None => out.push(format!(
                        "{name}: {left} has key {}, {right} does not",
                        fmt_key(k)
                    )),
                    Some(rb) if rb != ra => out.push(format!(
                        "{name}: key {} is {} in {left} and {} in {right}",
                        fmt_key(k),
                        fmt_key(ra),
                        fmt_key(rb)
                    )),
                    _ => {}
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    out.push(format!(
                        "{name}: {right} has key {}, {left} does not",
                        fmt_key(k)
                    ));
                }
            }
        }
        for name in other.tables.keys() {
            if !self.tables.contains_key(name) {
                out.push(format!("{right} has table {name}, {left} does not"));
            }
        }
        out.truncate(8);
        out.join("; ")
    }
}

/// Formats a key or row.
pub fn fmt_key(k: &[ModelValue]) -> String {
    let parts: Vec<String> = k.iter().map(|v| v.to_string()).collect();
    format!("({})", parts.join(", "))
}
