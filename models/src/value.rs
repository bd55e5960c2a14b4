//! Model values, rows and database states.

use std::collections::BTreeMap;
use std::fmt;

/// A column value as the model sees it. Ordered: NULL first, then
/// integers, then byte strings.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ModelValue {
    /// SQL NULL.
    Null,
    /// Any integer column.
    Int(i128),
    /// Any string or binary column.
    Bytes(Vec<u8>),
}

impl fmt::Display for ModelValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelValue::Null => write!(f, "NULL"),
            ModelValue::Int(i) => write!(f, "{i}"),
            ModelValue::Bytes(b) if b.len() > 24 => write!(
                f,
                "'{}...'({} bytes)",
                String::from_utf8_lossy(&b[..16]),
                b.len()
            ),
            ModelValue::Bytes(b) => write!(f, "'{}'", String::from_utf8_lossy(b)),
        }
    }
}

/// A row: one value per column.
pub type Row = Vec<ModelValue>;

/// One table's rows by primary key.
pub type TableState = BTreeMap<Vec<ModelValue>, Row>;

/// A database state: tables by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Db {
    /// Tables by name.
    pub tables: BTreeMap<String, TableState>,
}

impl Db {
    /// An empty state with these tables.
    pub fn with_tables<'a>(names: impl IntoIterator<Item = &'a str>) -> Db {
        Db {
            tables: names
                .into_iter()
                .map(|n| (n.to_string(), TableState::new()))
                .collect(),
        }
    }

    /// A short description of how two states differ (first differences).
    pub fn diff(&self, other: &Db) -> String {
        let mut out = Vec::new();
        for (name, a) in &self.tables {
            let Some(b) = other.tables.get(name) else {
                out.push(format!("table {name} missing on the right"));
                continue;
            };
            for (k, ra) in a {
                match b.get(k) {
                    None => out.push(format!("{name}: key {} only on the left", fmt_key(k))),
                    Some(rb) if rb != ra => out.push(format!(
                        "{name}: key {} differs: {} vs {}",
                        fmt_key(k),
                        fmt_key(ra),
                        fmt_key(rb)
                    )),
                    _ => {}
                }
            }
            for k in b.keys() {
                if !a.contains_key(k) {
                    out.push(format!("{name}: key {} only on the right", fmt_key(k)));
                }
            }
        }
        for name in other.tables.keys() {
            if !self.tables.contains_key(name) {
                out.push(format!("table {name} missing on the left"));
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
