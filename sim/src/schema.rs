//! The tables of a plan, as the model needs them: the two fixed tables
//! every plan has (`sb` and `docs`, [`crate::tables`]) and the tables a
//! seed draws for itself ([`TableSpec`], saved in the plan): composite
//! primary keys, unique and composite secondary indexes, every column type
//! and NULLs in indexed columns. The read, write and lock judges take a
//! row's primary key and its index keys from here, never from the engine's
//! answers.

use crate::judge::reads::to_model;
use crate::plan::{format_of, PValue};
use engine::{ColumnDef, ColumnType, IndexDef, TableDef};
use models::{Collation, ModelValue, Row};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A table a seed drew, as plain data in its plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Its name.
    pub name: String,
    /// Its columns, in order.
    pub columns: Vec<ColumnSpec>,
    /// The primary key's columns, by position, in key order; empty for a
    /// table without one (InnoDB clusters it on a hidden DB_ROW_ID).
    pub primary_key: Vec<usize>,
    /// Secondary indexes.
    pub indexes: Vec<IndexSpec>,
    /// `REDUNDANT`, `COMPACT` or `DYNAMIC`.
    pub row_format: String,
    /// FOREIGN KEY constraints, each naming another table's whole primary
    /// key (the child's columns need an index that starts with them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign: Vec<ForeignKeySpec>,
}

/// A FOREIGN KEY constraint of a [`TableSpec`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForeignKeySpec {
    /// The parent table, whose primary key the columns name.
    pub parent: String,
    /// The child's columns, by position, one per parent key column.
    pub columns: Vec<usize>,
    /// The parent's primary key columns, by name, in key order.
    pub parent_columns: Vec<String>,
    /// `RESTRICT`, `CASCADE` or `SET NULL`.
    pub on_delete: String,
    /// `RESTRICT`, `CASCADE` or `SET NULL`.
    pub on_update: String,
}

/// What a constraint does to the child rows of a changed parent row, as
/// the model acts it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Refuse the change (1451); NO ACTION too.
    Restrict,
    /// Delete the child rows, or give them the new key.
    Cascade,
    /// Set the child rows' columns to NULL.
    SetNull,
}

impl Action {
    /// An action by its SQL name.
    pub fn by_name(name: &str) -> Option<Action> {
        Some(match name {
            "RESTRICT" | "NO ACTION" => Action::Restrict,
            "CASCADE" => Action::Cascade,
            "SET NULL" => Action::SetNull,
            _ => return None,
        })
    }

    fn engine(self) -> engine::dict::FkAction {
        match self {
            Action::Restrict => engine::dict::FkAction::Restrict,
            Action::Cascade => engine::dict::FkAction::Cascade,
            Action::SetNull => engine::dict::FkAction::SetNull,
        }
    }

    fn of_engine(a: engine::dict::FkAction) -> Action {
        match a {
            engine::dict::FkAction::Restrict | engine::dict::FkAction::NoAction => Action::Restrict,
            engine::dict::FkAction::Cascade => Action::Cascade,
            engine::dict::FkAction::SetNull => Action::SetNull,
        }
    }
}

/// A constraint as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignShape {
    /// The parent table: its primary key is what the columns name.
    pub parent: String,
    /// The child's columns, in the order of the parent's key.
    pub columns: Vec<usize>,
    /// ON DELETE.
    pub on_delete: Action,
    /// ON UPDATE.
    pub on_update: Action,
}

/// A column of a [`TableSpec`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    /// Its name.
    pub name: String,
    /// Its SQL type: `TINYINT`, `SMALLINT`, `MEDIUMINT UNSIGNED`, `INT`,
    /// `INT UNSIGNED`, `BIGINT`, `BIGINT UNSIGNED`,
    /// `CHAR(n)`, `VARCHAR(n)`, `TEXT` or `BLOB`.
    pub ty: String,
    /// NULL allowed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable: bool,
    /// A CHAR or VARCHAR column's collation, by MySQL's name
    /// (`latin1_swedish_ci`, `latin1_bin`); none is binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
}

/// A secondary index of a [`TableSpec`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSpec {
    /// Its name.
    pub name: String,
    /// Its columns, by position, in key order.
    pub columns: Vec<usize>,
    /// UNIQUE.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unique: bool,
}

/// The type a plan's type name stands for.
pub fn column_type(name: &str) -> Option<ColumnType> {
    let sized = |prefix: &str| -> Option<u16> {
        name.strip_prefix(prefix)?
            .strip_suffix(')')?
            .parse()
            .ok()
            .filter(|n| (1..=255).contains(n))
    };
    Some(match name {
        "TINYINT" => ColumnType::TINYINT,
        "SMALLINT" => ColumnType::SMALLINT,
        "MEDIUMINT UNSIGNED" => ColumnType::ShortInt {
            len: 3,
            unsigned: true,
        },
        "INT" => ColumnType::INT,
        "INT UNSIGNED" => ColumnType::INT_UNSIGNED,
        "BIGINT" => ColumnType::BIGINT,
        "BIGINT UNSIGNED" => ColumnType::BigInt { unsigned: true },
        "TEXT" => ColumnType::Text { max_len: 65_535 },
        "BLOB" => ColumnType::Blob { max_len: 65_535 },
        _ if name.starts_with("CHAR(") => ColumnType::Char(sized("CHAR(")?),
        _ if name.starts_with("VARCHAR(") => ColumnType::VarChar(sized("VARCHAR(")?),
        _ => return None,
    })
}

impl TableSpec {
    /// Checks a spec loaded from a file.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.columns.len();
        let bad = |what: String| Err(format!("table '{}': {what}", self.name));
        if n == 0 {
            return bad("needs columns".into());
        }
        for c in &self.columns {
            let Some(ty) = column_type(&c.ty) else {
                return bad(format!("column '{}' has unknown type '{}'", c.name, c.ty));
            };
            if let Some(name) = &c.collation {
                let text = matches!(ty, ColumnType::Char(_) | ColumnType::VarChar(_));
                if !text || models::Collation::by_name(name).is_none() {
                    return bad(format!(
                        "column '{}' ({}) cannot have the collation '{name}'",
                        c.name, c.ty
                    ));
                }
            }
        }
        for &c in &self.primary_key {
            if c >= n || self.columns[c].nullable {
                return bad(format!("primary key column {c} is missing or nullable"));
            }
        }
        for i in &self.indexes {
            if i.columns.is_empty() || i.columns.iter().any(|&c| c >= n) {
                return bad(format!(
                    "index '{}' names no column or a missing one",
                    i.name
                ));
            }
        }
        for f in &self.foreign {
            let actions = [&f.on_delete, &f.on_update];
            if f.columns.is_empty()
                || f.columns.len() != f.parent_columns.len()
                || f.columns.iter().any(|&c| c >= n)
                || actions.iter().any(|a| Action::by_name(a).is_none())
                || !self
                    .indexes
                    .iter()
                    .any(|i| i.columns.starts_with(&f.columns))
            {
                return bad(format!(
                    "a foreign key to '{}' names a missing column or action, or has no index",
                    f.parent
                ));
            }
        }
        format_of(&self.row_format)
            .map(|_| ())
            .ok_or_else(|| format!("unknown row format '{}'", self.row_format))
    }

    /// The engine's definition.
    pub fn definition(&self) -> TableDef {
        TableDef {
            name: self.name.clone(),
            columns: self
                .columns
                .iter()
                .map(|c| ColumnDef {
                    name: c.name.clone(),
                    ty: column_type(&c.ty).expect("validated"),
                    nullable: c.nullable,
                    collation: c
                        .collation
                        .as_deref()
                        .and_then(engine::record::Collation::by_name)
                        .unwrap_or_default(),
                })
                .collect(),
            primary_key: self.primary_key.clone(),
            primary_prefixes: Vec::new(),
            indexes: self
                .indexes
                .iter()
                .map(|i| IndexDef {
                    name: i.name.clone(),
                    columns: i.columns.clone(),
                    unique: i.unique,
                    prefixes: Vec::new(),
                })
                .collect(),
            row_format: format_of(&self.row_format).expect("validated"),
            foreign: self
                .foreign
                .iter()
                .enumerate()
                .map(|(k, f)| engine::dict::ForeignDef {
                    id: format!("{}_ibfk_{}", self.name, k + 1),
                    columns: f.columns.clone(),
                    parent: f.parent.clone(),
                    parent_columns: f.parent_columns.clone(),
                    on_delete: Action::by_name(&f.on_delete).expect("validated").engine(),
                    on_update: Action::by_name(&f.on_update).expect("validated").engine(),
                })
                .collect(),
            server: Vec::new(),
        }
    }

    /// Draws a table: two to six columns of every type, a primary key of
    /// one or two integer or short string columns, one to three secondary
    /// indexes (some unique, some composite) over the columns that are not
    /// large objects, NULLs allowed in some indexed columns. Values are
    /// drawn from small domains (see [`TableSpec::value`]) so that keys
    /// collide: duplicate keys, waits and gap locks.
    pub fn draw(rng: &mut ChaCha8Rng, name: &str, row_format: &str) -> TableSpec {
        const KEY_TYPES: [&str; 6] = [
            "INT",
            "INT UNSIGNED",
            "BIGINT",
            "BIGINT UNSIGNED",
            "CHAR(4)",
            "VARCHAR(12)",
        ];
        const OTHER_TYPES: [&str; 8] = [
            "INT",
            "INT UNSIGNED",
            "BIGINT",
            "CHAR(8)",
            "VARCHAR(30)",
            "VARCHAR(200)",
            "TEXT",
            "BLOB",
        ];
        let key_cols = rng.gen_range(1..=2);
        let mut columns: Vec<ColumnSpec> = (0..key_cols)
            .map(|i| ColumnSpec {
                name: format!("p{i}"),
                ty: KEY_TYPES[rng.gen_range(0..KEY_TYPES.len())].into(),
                nullable: false,
                collation: None,
            })
            .collect();
        for i in 0..rng.gen_range(2..=4) {
            // The first is never a large object: every table has a column
            // to index besides its key.
            let types = if i == 0 {
                &OTHER_TYPES[..6]
            } else {
                &OTHER_TYPES[..]
            };
            columns.push(ColumnSpec {
                name: format!("c{i}"),
                ty: types[rng.gen_range(0..types.len())].into(),
                nullable: rng.gen_bool(0.4),
                collation: None,
            });
        }
        // The primary key's columns, sometimes out of column order.
        let mut primary_key: Vec<usize> = (0..key_cols).collect();
        if key_cols == 2 && rng.gen_bool(0.3) {
            primary_key.reverse();
        }
        let indexable: Vec<usize> = (0..columns.len())
            .filter(|&c| !matches!(columns[c].ty.as_str(), "TEXT" | "BLOB"))
            .collect();
        let others: Vec<usize> = indexable
            .iter()
            .copied()
            .filter(|c| !primary_key.contains(c))
            .collect();
        let mut indexes = Vec::new();
        for i in 0..rng.gen_range(1..=3) {
            let Some(&first) = others.get(rng.gen_range(0..others.len().max(1))) else {
                break;
            };
            let mut cols = vec![first];
            if rng.gen_bool(0.4) {
                // Composite: another column, a key column included.
                let second = indexable[rng.gen_range(0..indexable.len())];
                if second != first {
                    cols.push(second);
                }
            }
            indexes.push(IndexSpec {
                name: format!("i{i}"),
                columns: cols,
                unique: rng.gen_bool(0.35),
            });
        }
        TableSpec {
            name: name.into(),
            columns,
            primary_key,
            indexes,
            row_format: row_format.into(),
            foreign: Vec::new(),
        }
    }

    /// Draws a table without a primary key: one drawn as by
    /// [`TableSpec::draw`], its key columns left as plain ones, and
    /// sometimes an index on the first of them, so that its secondary
    /// indexes end in the hidden row id. No unique index is over NOT NULL
    /// columns only: MySQL takes the first such index as the table's
    /// primary key (`TABLE_SHARE::primary_key`, set in table.cc), so
    /// InnoDB clusters the table on it instead of DB_ROW_ID; this engine's
    /// typed API does not (that belongs with the SQL layer's DDL).
    pub fn draw_without_key(rng: &mut ChaCha8Rng, name: &str, row_format: &str) -> TableSpec {
        let mut t = TableSpec::draw(rng, name, row_format);
        t.primary_key.clear();
        if rng.gen_bool(0.5) {
            t.indexes.push(IndexSpec {
                name: format!("i{}", t.indexes.len()),
                columns: vec![0],
                unique: rng.gen_bool(0.3),
            });
        }
        for i in 0..t.indexes.len() {
            let not_null = t.indexes[i].columns.iter().all(|&c| !t.columns[c].nullable);
            if not_null {
                t.indexes[i].unique = false;
            }
        }
        t
    }

    /// Draws a child of `parent` (a table with a primary key): `id INT`
    /// as its key, one column for each of the parent's key columns, of
    /// its type and collation (mostly NULL-able), indexed, and a FOREIGN
    /// KEY from them to the parent's key, with ON DELETE and ON UPDATE
    /// each RESTRICT, CASCADE or SET NULL (the last only where the columns
    /// take NULL), and a plain column `v`.
    pub fn draw_child(
        rng: &mut ChaCha8Rng,
        name: &str,
        parent: &TableSpec,
        row_format: &str,
    ) -> TableSpec {
        let nullable = rng.gen_bool(0.8);
        let mut columns = vec![ColumnSpec {
            name: "id".into(),
            ty: "INT".into(),
            nullable: false,
            collation: None,
        }];
        let mut fk_columns = Vec::new();
        for (k, &pc) in parent.primary_key.iter().enumerate() {
            let p = &parent.columns[pc];
            fk_columns.push(columns.len());
            columns.push(ColumnSpec {
                name: format!("p{k}"),
                ty: p.ty.clone(),
                nullable,
                collation: p.collation.clone(),
            });
        }
        columns.push(ColumnSpec {
            name: "v".into(),
            ty: "INT".into(),
            nullable: true,
            collation: None,
        });
        let action = |rng: &mut ChaCha8Rng| {
            match rng.gen_range(0..if nullable { 10 } else { 7 }) {
                0..=1 => "RESTRICT",
                2..=6 => "CASCADE",
                _ => "SET NULL",
            }
            .to_string()
        };
        let on_delete = action(rng);
        let on_update = action(rng);
        let mut indexes = vec![IndexSpec {
            name: "fk".into(),
            columns: fk_columns.clone(),
            unique: false,
        }];
        if rng.gen_bool(0.4) {
            indexes.push(IndexSpec {
                name: "iv".into(),
                columns: vec![columns.len() - 1],
                unique: false,
            });
        }
        TableSpec {
            name: name.into(),
            columns,
            primary_key: vec![0],
            indexes,
            row_format: row_format.into(),
            foreign: vec![ForeignKeySpec {
                parent: parent.name.clone(),
                columns: fk_columns,
                parent_columns: (parent.primary_key.iter())
                    .map(|&c| parent.columns[c].name.clone())
                    .collect(),
                on_delete,
                on_update,
            }],
        }
    }

    /// Gives some CHAR and VARCHAR columns a collation: about half
    /// latin1_swedish_ci (MySQL's default), a few latin1_bin, the rest
    /// binary. Drawn from a generator of its own, after the table, so
    /// that no other draw of a plan moves.
    pub fn draw_collations(&mut self, rng: &mut ChaCha8Rng) {
        for c in &mut self.columns {
            if !matches!(
                column_type(&c.ty),
                Some(ColumnType::Char(_) | ColumnType::VarChar(_))
            ) {
                continue;
            }
            c.collation = match rng.gen_range(0..20) {
                0..=9 => Some("latin1_swedish_ci".into()),
                10..=12 => Some("latin1_bin".into()),
                _ => None,
            };
        }
    }

    /// A value for column `c`: NULL now and then where allowed; integers
    /// from `0..domain` (negative too where signed); strings of letters
    /// from an alphabet of four, so short ones repeat; large objects up to
    /// a few kilobytes (some off page). A string of a column with a
    /// collation has some capitals, and in a VARCHAR now and then trailing
    /// spaces, so that values its collation takes as equal ('ab', 'aB ')
    /// meet in its keys.
    pub fn value(&self, rng: &mut ChaCha8Rng, c: usize, domain: u64) -> PValue {
        let col = &self.columns[c];
        if col.nullable && rng.gen_bool(0.15) {
            return PValue::Null;
        }
        let letters = |rng: &mut ChaCha8Rng, len: usize| {
            PValue::Text(
                (0..len)
                    .map(|_| (b'a' + rng.gen_range(0..4u8)) as char)
                    .collect(),
            )
        };
        let domain = domain.max(2);
        match column_type(&col.ty).expect("validated") {
            // Within the type's range: 0..=127 (signed) or 0..=255 for a
            // TINYINT, and so on.
            ColumnType::ShortInt { len, unsigned } => {
                let bits = 8 * u32::from(len) - u32::from(!unsigned);
                let d = domain.min(1 << bits) as i64;
                if unsigned {
                    PValue::UInt(rng.gen_range(0..d as u64))
                } else {
                    PValue::Int(rng.gen_range(-d / 4..d))
                }
            }
            ColumnType::Int { unsigned: true } | ColumnType::BigInt { unsigned: true } => {
                PValue::UInt(rng.gen_range(0..domain))
            }
            ColumnType::Int { unsigned: false } | ColumnType::BigInt { unsigned: false } => {
                let d = domain as i64;
                PValue::Int(rng.gen_range(-d / 4..d))
            }
            ColumnType::Char(n) | ColumnType::VarChar(n) => {
                // Mostly short (so they repeat), some long keys.
                let n = usize::from(n);
                let len = if n > 12 && rng.gen_bool(0.2) {
                    rng.gen_range(0..=n.min(40))
                } else {
                    rng.gen_range(0..=n.min(4))
                };
                let v = letters(rng, len);
                match (v, &col.collation) {
                    (PValue::Text(s), Some(_)) => {
                        let mut s: String = s
                            .chars()
                            .map(|ch| {
                                if rng.gen_bool(0.3) {
                                    ch.to_ascii_uppercase()
                                } else {
                                    ch
                                }
                            })
                            .collect();
                        let var = matches!(column_type(&col.ty), Some(ColumnType::VarChar(_)));
                        if var && s.len() < n && rng.gen_bool(0.15) {
                            s.push(' ');
                        }
                        PValue::Text(s)
                    }
                    (v, _) => v,
                }
            }
            ColumnType::Text { .. } | ColumnType::Blob { .. } => {
                if rng.gen_bool(0.3) {
                    PValue::Long {
                        len: rng.gen_range(500..6_000),
                        seed: rng.gen(),
                    }
                } else {
                    let len = rng.gen_range(0..40);
                    letters(rng, len)
                }
            }
            // Not among column_type's names: the fuzzer's schemas hold no
            // DECIMAL, FLOAT or DOUBLE, whose bytes these letters stand for.
            ColumnType::FixBinary(n) => letters(rng, usize::from(n)),
        }
    }
}

/// One index of a table, as the model orders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexShape {
    /// Its name.
    pub name: String,
    /// Its columns, in key order.
    pub columns: Vec<usize>,
    /// UNIQUE (NULLs never collide).
    pub unique: bool,
}

/// A table as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableShape {
    /// Its name.
    pub name: String,
    /// Column names, in order.
    pub columns: Vec<String>,
    /// The primary key's columns, in key order. A table without a
    /// primary key has the model's own: a hidden last column of each model
    /// row (one past `columns`), the row's place in insertion order (see
    /// [`TableShape::hidden`]).
    pub primary_key: Vec<usize>,
    /// Secondary indexes.
    pub indexes: Vec<IndexShape>,
    /// Secondary indexes the workload creates and drops while it runs
    /// ([`crate::plan::PlannedStmt::CreateIndex`]): whether one exists,
    /// and which read views may use it, is the runner's to know.
    pub online: Vec<IndexShape>,
    /// No primary key: the engine clusters the rows on DB_ROW_ID, a
    /// counter it never shows, so the model keys them by a number of its
    /// own, taken from a count of the insert statements the runner judged
    /// (in the order they took their row ids, the first attempt of one that
    /// waited; only the order matters). InnoDB hands row ids out
    /// in increasing order, so the clustered index holds the rows in the
    /// order of those numbers, and a secondary index by its columns and
    /// then by them. Engine rows lack the column: they are matched to the
    /// model's by their place, never by a key the engine reports.
    pub hidden: bool,
    /// Its physical page size when it is compressed.
    pub zip_size: Option<usize>,
    /// Each column's collation, as its definition declares it: a key of
    /// a column with one compares in it ([`ModelValue::Collated`]).
    pub collations: Vec<Collation>,
    /// Whether each column takes NULL.
    pub nullable: Vec<bool>,
    /// FOREIGN KEY constraints.
    pub foreign: Vec<ForeignShape>,
}

impl TableShape {
    fn of(def: &TableDef) -> TableShape {
        let hidden = def.primary_key.is_empty();
        TableShape {
            name: def.name.clone(),
            columns: def.columns.iter().map(|c| c.name.clone()).collect(),
            primary_key: if hidden {
                vec![def.columns.len()]
            } else {
                def.primary_key.clone()
            },
            hidden,
            zip_size: def.row_format.zip_size().ok().flatten(),
            collations: def
                .columns
                .iter()
                .map(|c| Collation::by_name(c.collation.name()).unwrap_or_default())
                .collect(),
            online: Vec::new(),
            nullable: def.columns.iter().map(|c| c.nullable).collect(),
            foreign: def
                .foreign
                .iter()
                .map(|f| ForeignShape {
                    parent: f.parent.clone(),
                    columns: f.columns.clone(),
                    on_delete: Action::of_engine(f.on_delete),
                    on_update: Action::of_engine(f.on_update),
                })
                .collect(),
            indexes: def
                .indexes
                .iter()
                .map(|i| IndexShape {
                    name: i.name.clone(),
                    columns: i.columns.clone(),
                    unique: i.unique,
                })
                .collect(),
        }
    }

    /// Column `c`'s collation (binary for the model's hidden key).
    pub fn collation(&self, c: usize) -> Collation {
        self.collations.get(c).copied().unwrap_or_default()
    }

    /// A value of column `c` as a key holds it: compared in the column's
    /// collation.
    pub fn keyed(&self, c: usize, v: &ModelValue) -> ModelValue {
        v.clone().keyed(self.collation(c))
    }

    /// Whether two values of column `c` are the same key: equal in its
    /// collation.
    pub fn same_key(&self, c: usize, a: &ModelValue, b: &ModelValue) -> bool {
        match (self.collation(c), a, b) {
            (Collation::Binary, ..) => a == b,
            (coll, ModelValue::Bytes(x), ModelValue::Bytes(y)) => coll.key(x).eq(coll.key(y)),
            _ => a == b,
        }
    }

    /// Compares two values of column `c` as its keys compare them (either
    /// may be a row's value or a key's), without building keys.
    pub fn cmp_key_values(&self, c: usize, a: &ModelValue, b: &ModelValue) -> Ordering {
        match self.collation(c) {
            Collation::Binary => a.cmp(b),
            coll => match (a, b) {
                (
                    ModelValue::Bytes(x) | ModelValue::Collated(x, _),
                    ModelValue::Bytes(y) | ModelValue::Collated(y, _),
                ) => coll.compare(x, y),
                _ => a.cmp(b),
            },
        }
    }

    /// Compares a row's key in the columns `cols` with another key, whose
    /// `j`-th field `other(j)` gives (`None`: the other key is shorter),
    /// field by field as the columns' keys compare.
    pub fn cmp_row_key<'v>(
        &self,
        cols: &[usize],
        row: &Row,
        other: impl Fn(usize) -> Option<&'v ModelValue>,
    ) -> Ordering {
        for (j, &c) in cols.iter().enumerate() {
            let Some(b) = other(j) else {
                return Ordering::Greater;
            };
            let Some(a) = row.get(c) else {
                return Ordering::Less;
            };
            match self.cmp_key_values(c, a, b) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        Ordering::Equal
    }

    /// A row's primary key.
    pub fn key_of(&self, row: &[ModelValue]) -> Vec<ModelValue> {
        self.primary_key
            .iter()
            .map(|&c| self.keyed(c, &row[c]))
            .collect()
    }

    /// A row's primary key, from engine values (not for a table with a
    /// hidden key, whose rows the engine gives without it).
    pub fn key_of_values(&self, row: &[engine::Value]) -> Vec<ModelValue> {
        self.primary_key
            .iter()
            .map(|&c| self.keyed(c, &to_model(&row[c])))
            .collect()
    }

    /// The columns of an index's keys, in key order (`None`: the
    /// clustered index): the indexed columns, then the primary key's.
    pub fn key_columns<'a>(
        &'a self,
        index: Option<&'a IndexShape>,
    ) -> impl Iterator<Item = usize> + 'a {
        index
            .map_or(&[][..], |i| &i.columns[..])
            .iter()
            .chain(&self.primary_key)
            .copied()
    }

    /// A key (or a prefix of one) of an index given as engine values, as
    /// the model holds it: each value in its column's collation.
    pub fn key_from_values(
        &self,
        index: Option<&IndexShape>,
        values: &[engine::Value],
    ) -> Vec<ModelValue> {
        self.key_columns(index)
            .zip(values)
            .map(|(c, v)| self.keyed(c, &to_model(v)))
            .collect()
    }

    /// A column by name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// A secondary index by name (one the workload creates too).
    pub fn index(&self, name: &str) -> Option<&IndexShape> {
        self.indexes
            .iter()
            .chain(&self.online)
            .find(|i| i.name == name)
    }

    /// Whether `name` is an index the workload creates and drops.
    pub fn is_online(&self, name: &str) -> bool {
        self.online.iter().any(|i| i.name == name)
    }

    /// A row's position in an index (`None`: the clustered index): the
    /// indexed columns, then the primary key (InnoDB appends the primary
    /// key's columns the index lacks; appending them all orders the same).
    pub fn index_key(&self, index: Option<&IndexShape>, row: &Row) -> Vec<ModelValue> {
        self.key_columns(index)
            .map(|c| self.keyed(c, &row[c]))
            .collect()
    }
}

/// The tables of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    /// By name, in creation order.
    pub tables: Vec<TableShape>,
}

impl Schema {
    /// The tables of these definitions.
    pub fn of(defs: &[TableDef]) -> Schema {
        Schema {
            tables: defs.iter().map(TableShape::of).collect(),
        }
    }

    /// Adds an index the workload creates to `table`'s shape (once).
    pub fn add_online(&mut self, table: &str, index: &IndexSpec) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.name == table) {
            if t.index(&index.name).is_none() {
                t.online.push(IndexShape {
                    name: index.name.clone(),
                    columns: index.columns.clone(),
                    unique: index.unique,
                });
            }
        }
    }

    /// A table by name.
    pub fn table(&self, name: &str) -> Option<&TableShape> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The table names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|t| t.name.as_str())
    }

    /// The tables the model keys by its own insertion order.
    pub fn hidden_key_tables(&self) -> Vec<String> {
        self.tables
            .iter()
            .filter(|t| t.hidden)
            .map(|t| t.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn drawn_tables_are_valid_and_varied() {
        let mut composite = 0;
        let mut unique = 0;
        let mut nullable_indexed = 0;
        let mut collated = 0;
        let mut types = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let t = TableSpec::draw(&mut rng, "t1", "COMPACT");
            t.validate().expect("a drawn table is valid");
            assert!(!t.indexes.is_empty(), "seed {seed}: {t:?}");
            composite += usize::from(t.primary_key.len() > 1);
            unique += t.indexes.iter().filter(|i| i.unique).count();
            nullable_indexed += t
                .indexes
                .iter()
                .filter(|i| i.columns.iter().any(|&c| t.columns[c].nullable))
                .count();
            types.extend(t.columns.iter().map(|c| c.ty.clone()));
            let def = t.definition();
            assert_eq!(def.columns.len(), t.columns.len());
            let mut t = t;
            t.draw_collations(&mut rng);
            t.validate()
                .expect("collations go only on CHAR and VARCHAR");
            collated += t.columns.iter().filter(|c| c.collation.is_some()).count();
        }
        assert!(collated > 100, "{collated}");
        assert!(composite > 50, "{composite}");
        assert!(unique > 50, "{unique}");
        assert!(nullable_indexed > 30, "{nullable_indexed}");
        assert!(types.len() >= 10, "{types:?}");
    }

    #[test]
    fn tables_without_a_primary_key_are_valid_and_keyed_by_the_model() {
        for seed in 0..50 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let t = TableSpec::draw_without_key(&mut rng, "t2", "REDUNDANT");
            t.validate().expect("a drawn table is valid");
            assert!(t.primary_key.is_empty());
            let def = t.definition();
            let shape = &Schema::of(&[def]).tables[0];
            assert!(shape.hidden);
            // The model's key is the hidden last column, one past the
            // table's own.
            assert_eq!(shape.primary_key, vec![t.columns.len()]);
            // No unique index InnoDB would take as the clustered key.
            assert!(t
                .indexes
                .iter()
                .all(|i| !i.unique || i.columns.iter().any(|&c| t.columns[c].nullable)));
        }
    }

    #[test]
    fn bad_specs_are_refused() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let good = TableSpec::draw(&mut rng, "t1", "DYNAMIC");
        let mut t = good.clone();
        t.columns[0].collation = Some("latin1_swedish_ci".into());
        t.columns[0].ty = "INT".into();
        assert!(t
            .validate()
            .unwrap_err()
            .contains("cannot have the collation"));
        let mut t = good.clone();
        t.columns[0].ty = "FLOAT".into();
        assert!(t.validate().unwrap_err().contains("unknown type"));
        let mut t = good.clone();
        t.primary_key = vec![99];
        assert!(t.validate().is_err());
        let mut t = good.clone();
        t.indexes[0].columns = vec![];
        assert!(t.validate().is_err());
        let mut t = good;
        t.row_format = "FANCY".into();
        assert!(t.validate().is_err());
        assert_eq!(column_type("CHAR(0)"), None);
        assert_eq!(column_type("VARCHAR(255)"), Some(ColumnType::VarChar(255)));
    }
}
