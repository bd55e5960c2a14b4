//! The data dictionary: table definitions, their persistent form, and the
//! in-memory descriptors that map a table's columns onto index records.
//! Mirrors InnoDB's `dict0dict.cc`, `dict0crea.cc` and `dict0load.cc`.
//!
//! The dictionary is itself a table: `SYS_TABLES`, a clustered index in
//! the system tablespace whose root page is recorded in the transaction
//! system header. Each row holds a table id, its name and its serialized
//! definition. Because it is an ordinary table with undo and MVCC, DDL is
//! an ordinary transaction: a CREATE TABLE that never committed is rolled
//! back by recovery like any other change, and files that no committed
//! definition names are removed at startup.
//!
//! Clustered records are laid out InnoDB's way:
//!
//! ```text
//! [primary key columns | DB_ROW_ID] DB_TRX_ID DB_ROLL_PTR [other columns]
//! ```
//!
//! and secondary records as `[index columns] [primary key columns not
//! already there]`, all of them the ordering key.

use crate::btree::Index;
use crate::error::{Error, Result};
use crate::record::{Collation, ColumnType, FieldDef, FieldKind, RecordLayout, RowFormat};

mod codec;

pub use codec::{decode_def, encode_def};

/// Table id of SYS_TABLES.
pub const SYS_TABLES_ID: u64 = 1;
/// Index id of SYS_TABLES' clustered index.
pub const SYS_TABLES_INDEX_ID: u64 = 1;
/// Bytes of DB_TRX_ID.
pub const TRX_ID_LEN: u16 = 6;
/// Bytes of DB_ROW_ID.
pub const ROW_ID_LEN: u16 = 6;
/// The longest key column, InnoDB's 767-byte index prefix limit.
pub const MAX_KEY_COLUMN_BYTES: u32 = 767;

/// A column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: ColumnType,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// How its values compare in an index: [`Collation::Binary`] unless the
    /// column is a string of a character set (CHAR, VARCHAR, TEXT).
    pub collation: Collation,
}

/// A secondary index definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// Name.
    pub name: String,
    /// Column positions, in key order.
    pub columns: Vec<usize>,
    /// Whether non-NULL keys must be unique.
    pub unique: bool,
    /// Column prefix lengths in bytes, one per column (`0`: the whole
    /// column), or empty when no column is a prefix: `KEY (c(10))` stores
    /// and compares the first 10 bytes of `c` (InnoDB's
    /// `dict_field_t::prefix_len`).
    pub prefixes: Vec<u16>,
}

impl IndexDef {
    /// The prefix length of key column `i`, if it is a prefix.
    pub fn prefix(&self, i: usize) -> Option<u16> {
        self.prefixes.get(i).copied().filter(|&p| p != 0)
    }

    /// Whether the index holds column `c` whole, not only a prefix of it:
    /// then its entries need no primary key field of `c` besides
    /// (`dict_index_build_internal_non_clust`).
    pub fn holds_whole(&self, c: usize) -> bool {
        holds_whole(&self.columns, &self.prefixes, c)
    }
}

/// Whether a key of `columns` with prefix lengths `prefixes` (empty, or
/// one per column with `0` for a whole column) holds column `c` whole.
fn holds_whole(columns: &[usize], prefixes: &[u16], c: usize) -> bool {
    (columns.iter().enumerate()).any(|(i, &k)| k == c && prefixes.get(i).is_none_or(|&p| p == 0))
}

/// What a foreign key does to the child rows of a parent row that is
/// deleted or whose referenced columns change (InnoDB's
/// `DICT_FOREIGN_ON_DELETE_*` and `DICT_FOREIGN_ON_UPDATE_*` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FkAction {
    /// Refuse the change while a child row refers to the parent row
    /// (1451). InnoDB keeps no flag for it; SHOW CREATE TABLE prints no
    /// clause.
    #[default]
    Restrict,
    /// The same as RESTRICT in InnoDB (checked at once, not at the end of
    /// the statement), printed as `NO ACTION`.
    NoAction,
    /// Delete the child rows, or give them the parent's new values.
    Cascade,
    /// Set the child rows' foreign key columns to NULL.
    SetNull,
}

impl FkAction {
    /// The clause SHOW CREATE TABLE and the error texts print, if any.
    pub fn clause(self) -> Option<&'static str> {
        match self {
            FkAction::Restrict => None,
            FkAction::NoAction => Some("NO ACTION"),
            FkAction::Cascade => Some("CASCADE"),
            FkAction::SetNull => Some("SET NULL"),
        }
    }

    fn code(self) -> u8 {
        match self {
            FkAction::Restrict => 0,
            FkAction::NoAction => 1,
            FkAction::Cascade => 2,
            FkAction::SetNull => 3,
        }
    }

    fn from_code(c: u8) -> Option<FkAction> {
        Some(match c {
            0 => FkAction::Restrict,
            1 => FkAction::NoAction,
            2 => FkAction::Cascade,
            3 => FkAction::SetNull,
            _ => return None,
        })
    }
}

/// A FOREIGN KEY constraint of a table (the child): its columns must hold
/// a value the parent's referenced columns hold, or a NULL. InnoDB keeps
/// constraints in SYS_FOREIGN and SYS_FOREIGN_COLS; here they are part of
/// the child's definition, so a DDL that adds, drops or carries one
/// changes the dictionary in the same row, under the same transaction.
/// The parent is named, not numbered: it may not exist yet (created with
/// `foreign_key_checks=0`), and it may be rebuilt under its name by a
/// copying ALTER, as InnoDB's `REF_NAME` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignDef {
    /// The constraint's name (`t2_ibfk_1` when none was given).
    pub id: String,
    /// The child's columns, by position.
    pub columns: Vec<usize>,
    /// The parent table's name.
    pub parent: String,
    /// The parent's referenced columns, by name, one per child column.
    pub parent_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: FkAction,
    /// ON UPDATE.
    pub on_update: FkAction,
}

/// A constraint as SHOW CREATE TABLE and InnoDB's error texts print it
/// ([`crate::error::ConstraintText::render`]), its child columns named by
/// `columns` and the parent's name rendered by `parent`.
pub fn foreign_text(
    fk: &ForeignDef,
    columns: &[String],
    parent: impl Fn(&str) -> String,
) -> String {
    fk.text(columns.to_vec()).render(parent)
}

impl ForeignDef {
    /// This constraint as its texts print it, its child columns named
    /// `columns`.
    pub fn text(&self, columns: Vec<String>) -> crate::error::ConstraintText {
        crate::error::ConstraintText {
            id: self.id.clone(),
            columns,
            parent: self.parent.clone(),
            parent_columns: self.parent_columns.clone(),
            on_delete: self.on_delete.clause(),
            on_update: self.on_update.clause(),
        }
    }
}

/// A table definition as given to CREATE TABLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    /// Name: letters, digits, `_` and `$`, at most [`MAX_TABLE_NAME_BYTES`].
    pub name: String,
    /// Columns.
    pub columns: Vec<ColumnDef>,
    /// Primary key column positions; empty for a hidden DB_ROW_ID key.
    pub primary_key: Vec<usize>,
    /// The primary key's column prefix lengths in bytes, one per key
    /// column (`0`: the whole column), or empty when none is a prefix:
    /// `PRIMARY KEY (c(10))` orders and identifies rows by the first 10
    /// bytes of `c`, and the clustered record holds those bytes as a key
    /// field and the whole column among the others
    /// (`dict_index_build_internal_clust`).
    pub primary_prefixes: Vec<u16>,
    /// Secondary indexes.
    pub indexes: Vec<IndexDef>,
    /// Row format.
    pub row_format: RowFormat,
    /// FOREIGN KEY constraints, in the order they were made.
    pub foreign: Vec<ForeignDef>,
    /// The server layer's own definition of the table (what MySQL keeps in
    /// the `.frm` file: column defaults, display widths, the options the
    /// user wrote), opaque to the engine. Kept in the same dictionary row
    /// as the rest, so a DDL leaves both or neither.
    pub server: Vec<u8>,
}

/// The longest table name: the server layer names a table `db$table`,
/// each part up to MySQL's 64 characters in the filename encoding, which
/// writes a character as at most five bytes (`@0060`).
pub const MAX_TABLE_NAME_BYTES: usize = 5 * 64 + 1 + 5 * 64;

/// The longest server-layer definition a table may carry.
pub const MAX_SERVER_DEF_BYTES: usize = 64 * 1024;

impl TableDef {
    /// Checks a definition, with MySQL's errors where MySQL has them.
    pub fn validate(&self) -> Result<()> {
        let bad = |reason: String| Error::CantCreateTable {
            table: self.name.clone(),
            reason,
        };
        if self.server.len() > MAX_SERVER_DEF_BYTES {
            return Err(bad(format!(
                "a server definition of {} bytes is longer than {MAX_SERVER_DEF_BYTES}",
                self.server.len()
            )));
        }
        if self.name.is_empty()
            || self.name.len() > MAX_TABLE_NAME_BYTES
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '@'))
        {
            return Err(Error::InvalidArgument(format!(
                "Incorrect table name '{}'",
                self.name
            )));
        }
        if self.columns.is_empty() || self.columns.len() > 1000 {
            return Err(bad(format!(
                "a table needs 1 to 1000 columns, not {}",
                self.columns.len()
            )));
        }
        for (i, c) in self.columns.iter().enumerate() {
            if c.name.is_empty() || c.name.len() > 64 {
                return Err(Error::InvalidArgument(format!(
                    "Incorrect column name '{}'",
                    c.name
                )));
            }
            if self.columns[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(Error::DuplicateColumn(c.name.clone()));
            }
            c.ty.validate(&c.name)?;
            let string = matches!(
                c.ty,
                ColumnType::Char(_) | ColumnType::VarChar(_) | ColumnType::Text { .. }
            );
            if c.collation != Collation::Binary && !string {
                return Err(bad(format!(
                    "column '{}' is not a string and cannot have collation {}",
                    c.name,
                    c.collation.name()
                )));
            }
        }
        let key_ok = |cols: &[usize], prefixes: &[u16], what: &str| -> Result<()> {
            if cols.is_empty() || cols.len() > 16 {
                return Err(bad(format!("{what} must have 1 to 16 columns")));
            }
            for (i, &c) in cols.iter().enumerate() {
                let col = self
                    .columns
                    .get(c)
                    .ok_or_else(|| bad(format!("{what} names column {c}, which does not exist")))?;
                if cols[..i].contains(&c) {
                    return Err(Error::DuplicateColumn(col.name.clone()));
                }
                if let Some(&p) = prefixes.get(i).filter(|&&p| p != 0) {
                    let max = match col.ty {
                        ColumnType::Char(n) | ColumnType::VarChar(n) => u32::from(n),
                        ColumnType::Text { max_len } | ColumnType::Blob { max_len } => max_len,
                        _ => 0,
                    };
                    if u32::from(p) > max {
                        return Err(Error::InvalidArgument(format!(
                            "Incorrect prefix key: column '{}' has no prefix of {p} bytes",
                            col.name
                        )));
                    }
                    if u32::from(p) > MAX_KEY_COLUMN_BYTES {
                        return Err(Error::InvalidArgument(
                            "Specified key was too long; max key length is 767 bytes".into(),
                        ));
                    }
                    continue;
                }
                match col.ty {
                    ColumnType::Text { .. } | ColumnType::Blob { .. } => {
                        return Err(Error::InvalidArgument(format!(
                            "BLOB/TEXT column '{}' used in key specification without a key length",
                            col.name
                        )))
                    }
                    ColumnType::VarChar(n) if n as u32 > MAX_KEY_COLUMN_BYTES => {
                        return Err(Error::InvalidArgument(
                            "Specified key was too long; max key length is 767 bytes".into(),
                        ))
                    }
                    _ => {}
                }
            }
            Ok(())
        };
        if !self.primary_prefixes.is_empty()
            && self.primary_prefixes.len() != self.primary_key.len()
        {
            return Err(bad(format!(
                "the primary key has {} prefix lengths for {} columns",
                self.primary_prefixes.len(),
                self.primary_key.len()
            )));
        }
        if !self.primary_key.is_empty() {
            key_ok(&self.primary_key, &self.primary_prefixes, "the primary key")?;
            for &c in &self.primary_key {
                if self.columns[c].nullable {
                    return Err(Error::InvalidArgument(format!(
                        "All parts of a PRIMARY KEY must be NOT NULL; column '{}' is nullable",
                        self.columns[c].name
                    )));
                }
            }
        }
        for (i, ix) in self.indexes.iter().enumerate() {
            if !ix.prefixes.is_empty() && ix.prefixes.len() != ix.columns.len() {
                return Err(bad(format!(
                    "index '{}' has {} prefix lengths for {} columns",
                    ix.name,
                    ix.prefixes.len(),
                    ix.columns.len()
                )));
            }
            key_ok(&ix.columns, &ix.prefixes, &format!("index '{}'", ix.name))?;
            if ix.name.is_empty()
                || ix.name.eq_ignore_ascii_case("PRIMARY")
                || self.indexes[..i]
                    .iter()
                    .any(|o| o.name.eq_ignore_ascii_case(&ix.name))
            {
                return Err(Error::InvalidArgument(format!(
                    "Duplicate or invalid key name '{}'",
                    ix.name
                )));
            }
        }
        for (i, fk) in self.foreign.iter().enumerate() {
            if fk.id.is_empty()
                || fk.id.len() > 64
                || self.foreign[..i]
                    .iter()
                    .any(|o| o.id.eq_ignore_ascii_case(&fk.id))
            {
                return Err(bad(format!(
                    "duplicate or invalid constraint name '{}'",
                    fk.id
                )));
            }
            if fk.columns.is_empty()
                || fk.columns.len() > 16
                || fk.columns.len() != fk.parent_columns.len()
                || fk.columns.iter().any(|&c| c >= self.columns.len())
                || fk.parent.is_empty()
                || fk.parent.len() > MAX_TABLE_NAME_BYTES
            {
                return Err(bad(format!("malformed foreign key '{}'", fk.id)));
            }
        }
        Ok(())
    }

    /// The foreign key whose columns lead index `ix` of this table
    /// (`None`: the clustered index), if `cols` are its first columns, whole
    /// (`dict_foreign_find_index`: the index InnoDB searches for a
    /// constraint's child or parent rows). Types are checked by the caller.
    pub fn index_leads(&self, ix: Option<usize>, cols: &[usize]) -> bool {
        let (columns, prefixes): (&[usize], &[u16]) = match ix {
            None => (&self.primary_key, &self.primary_prefixes),
            Some(i) => (&self.indexes[i].columns, &self.indexes[i].prefixes),
        };
        columns.len() >= cols.len()
            && cols
                .iter()
                .enumerate()
                .all(|(k, &c)| columns[k] == c && prefixes.get(k).is_none_or(|&p| p == 0))
    }

    /// The first index (`None`: the clustered one, tried first) whose
    /// leading columns are `cols`, whole; the outer `None` when there is
    /// none.
    pub fn find_index(&self, cols: &[usize]) -> Option<Option<usize>> {
        if !self.primary_key.is_empty() && self.index_leads(None, cols) {
            return Some(None);
        }
        (0..self.indexes.len())
            .find(|&i| {
                !self.indexes[i].name.starts_with(BUILDING_PREFIX)
                    && self.index_leads(Some(i), cols)
            })
            .map(Some)
    }

    /// The prefix length of primary key column `i`, if it is a prefix.
    pub fn primary_prefix(&self, i: usize) -> Option<u16> {
        self.primary_prefixes.get(i).copied().filter(|&p| p != 0)
    }

    /// Whether column `c` is a whole (not a prefix) primary key column.
    pub fn in_primary_whole(&self, c: usize) -> bool {
        holds_whole(&self.primary_key, &self.primary_prefixes, c)
    }

    /// Position of a column by name (case-insensitive, as MySQL).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }
}

/// What a clustered record field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusteredField {
    /// A table column.
    Column(usize),
    /// The first `len` bytes of a table column: a primary key field on a
    /// column prefix. The column itself is also in the record, whole.
    Prefix {
        /// The column.
        column: usize,
        /// The bytes kept.
        len: usize,
    },
    /// The hidden row id (tables without a primary key).
    RowId,
    /// DB_TRX_ID.
    TrxId,
    /// DB_ROLL_PTR.
    RollPtr,
}

/// A secondary index, loaded.
#[derive(Debug, Clone)]
pub struct Secondary {
    /// Its definition.
    pub def: IndexDef,
    /// The tree.
    pub index: Index,
    /// For each field of its records, the clustered field it copies.
    pub from_clustered: Vec<usize>,
    /// For each field of its records, the bytes of the clustered field it
    /// keeps, when it keeps only a prefix.
    pub prefix: Vec<Option<usize>>,
    /// The transaction whose commit made the index usable (fast index
    /// creation; 0 for an index as old as its table): a read view that
    /// does not see it may not read the index (InnoDB's `index->trx_id`).
    pub created_by: u64,
}

/// An index being built by fast index creation carries this before its
/// name in the dictionary until its build commits (InnoDB's
/// `TEMP_INDEX_PREFIX`); startup drops every index that still does.
pub const BUILDING_PREFIX: char = '\u{ff}';

/// A table, loaded: definition plus trees and record mappings.
#[derive(Debug, Clone)]
pub struct Table {
    /// Table id.
    pub id: u64,
    /// Definition.
    pub def: TableDef,
    /// Tablespace.
    pub space: u32,
    /// Clustered index.
    pub clustered: Index,
    /// Secondary indexes, in definition order.
    pub secondary: Vec<Secondary>,
    /// What each clustered field holds.
    pub fields: Vec<ClusteredField>,
    /// Clustered field of each column.
    pub col_field: Vec<usize>,
    /// Clustered field of DB_TRX_ID.
    pub trx_id_field: usize,
    /// Clustered field of DB_ROLL_PTR.
    pub roll_ptr_field: usize,
    /// Next hidden row id (tables without a primary key).
    pub next_row_id: u64,
}

/// Ids and root pages of a table's trees, stored with its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableStorage {
    /// Table id.
    pub id: u64,
    /// Tablespace.
    pub space: u32,
    /// Clustered index id and root.
    pub clustered: (u64, u32),
    /// Secondary index ids and roots, in definition order.
    pub secondary: Vec<(u64, u32)>,
}

fn key_kind(ty: &ColumnType) -> FieldKind {
    match FieldKind::of(ty) {
        // Key fields never go off page.
        FieldKind::Variable { max_len, .. } => FieldKind::Variable {
            max_len,
            long: false,
        },
        k => k,
    }
}

/// The field of a key that keeps the first `p` bytes of a column of type
/// `ty`: of fixed length for CHAR (whose values are padded), of up to `p`
/// bytes otherwise (`dict_index_add_col`).
fn prefix_kind(ty: &ColumnType, p: u16) -> FieldKind {
    match ty {
        ColumnType::Char(n) => FieldKind::Fixed(p.min(*n)),
        _ => FieldKind::Variable {
            max_len: u32::from(p),
            long: false,
        },
    }
}

/// One field of an index as [`too_big_for_tree`] sizes it: its fixed
/// length, or its longest value; whether it may be NULL.
struct SizedField {
    fixed: Option<usize>,
    max: usize,
    nullable: bool,
}

/// `dict_index_too_big_for_tree` (dict0dict.c, InnoDB Plugin 1.0.6): the
/// first index of `def` (clustered first) whose longest possible record
/// would not fit its pages: on a compressed page, an empty page's room
/// for one record (`page_zip_empty_size`) less a byte, and half that for a
/// node pointer; on an uncompressed page, half an empty page. In the
/// clustered index a variable-length column longer than 40 bytes counts
/// as 40 (the most that stays on the page once it goes off); prefixes
/// count their length. InnoDB checks this in strict mode and for every
/// table of the Barracuda format (`dict_create_index_step`); the engine,
/// which has no strict mode of its own, for the Barracuda formats.
/// Returns the index's name and MySQL's figure for the message.
/// `skip`: how many indexes, counting the clustered one first, are not
/// checked (InnoDB checks the indexes it adds: CREATE INDEX the new
/// ones, CREATE TABLE and a copying ALTER all).
pub fn too_big_for_tree(def: &TableDef, skip: usize) -> Option<(String, usize)> {
    let comp = def.row_format.is_compact_layout();
    let zip = def.row_format.zip_size().ok().flatten();
    // page_get_free_space_of_empty: the page less its header, infimum,
    // supremum, trailer and two directory slots.
    let empty_free = if comp {
        16_384 - 120 - 8 - 4
    } else {
        16_384 - 125 - 8 - 4
    };
    let column = |c: usize, prefix: Option<u16>| -> SizedField {
        let col = &def.columns[c];
        let fixed = match (col.ty.fixed_len(), prefix) {
            (Some(n), Some(p)) => Some(usize::from(n.min(p))),
            (Some(n), None) => Some(usize::from(n)),
            _ => None,
        };
        let full = usize::try_from(col.ty.max_stored_len()).unwrap_or(usize::MAX);
        SizedField {
            fixed,
            max: prefix.map_or(full, |p| full.min(usize::from(p))),
            nullable: col.nullable,
        }
    };
    let sys = |n: usize| SizedField {
        fixed: Some(n),
        max: n,
        nullable: false,
    };
    // The clustered index: its key, DB_TRX_ID and DB_ROLL_PTR, the rest.
    let mut clust: Vec<(SizedField, bool)> = Vec::new();
    if def.primary_key.is_empty() {
        clust.push((sys(ROW_ID_LEN as usize), false));
    }
    for (i, &c) in def.primary_key.iter().enumerate() {
        clust.push((column(c, def.primary_prefix(i)), false));
    }
    let n_uniq = clust.len();
    clust.push((sys(6), false));
    clust.push((sys(7), false));
    for c in (0..def.columns.len()).filter(|&c| !def.in_primary_whole(c)) {
        // Off-page eligible: not a key field.
        clust.push((column(c, None), true));
    }
    let mut indexes = vec![("PRIMARY".to_string(), clust, n_uniq, true)];
    for ix in &def.indexes {
        let mut fields: Vec<(SizedField, bool)> = ix
            .columns
            .iter()
            .enumerate()
            .map(|(i, &c)| (column(c, ix.prefix(i).filter(|&p| p > 0)), false))
            .collect();
        if def.primary_key.is_empty() {
            fields.push((sys(ROW_ID_LEN as usize), false));
        }
        for (i, &c) in def.primary_key.iter().enumerate() {
            if !ix.holds_whole(c) {
                fields.push((column(c, def.primary_prefix(i)), false));
            }
        }
        let n = fields.len();
        indexes.push((ix.name.clone(), fields, n, false));
    }
    for (name, fields, n_unique, clustered) in indexes.into_iter().skip(skip) {
        let (page_rec_max, page_ptr_max, mut rec) = match zip.filter(|&z| z < 16_384) {
            Some(z) => {
                let rec_max = crate::page::zip::empty_size(fields.len(), z).saturating_sub(1);
                (rec_max, rec_max / 2, 2)
            }
            None => (empty_free / 2, empty_free / 2, if comp { 5 } else { 6 }),
        };
        if comp {
            rec += fields
                .iter()
                .filter(|(f, _)| f.nullable)
                .count()
                .div_ceil(8);
        } else {
            rec += 2 * fields.len();
        }
        for (i, (f, offpage)) in fields.iter().enumerate() {
            let size = match f.fixed {
                Some(n) => n,
                None => {
                    let mut max = f.max;
                    let mut ext = if max < 256 { 1 } else { 2 };
                    if clustered && *offpage && max > 2 * 20 {
                        max = 2 * 20;
                        ext = 1;
                    }
                    if comp {
                        rec += ext;
                    }
                    max
                }
            };
            rec = rec.saturating_add(size);
            if rec >= page_rec_max {
                return Some((name, empty_free / 2));
            }
            // The node pointer: the unique fields and a child page number.
            if i + 1 == n_unique && rec + 4 >= page_ptr_max {
                return Some((name, empty_free / 2));
            }
        }
    }
    None
}

impl Table {
    /// The longest clustered record the table stores, its long columns
    /// moved off page until it fits: half a page's record space, or, for a
    /// compressed table, what an empty compressed page holds of one record
    /// (`page_zip_empty_size`), so that a record may fill a compressed page
    /// alone, as in InnoDB (a split then leaves it a page of its own).
    pub fn max_rec_len(&self) -> usize {
        match self.def.row_format.zip_size() {
            // page_zip_rec_needs_ext: a record of `rec_size` bytes needs its
            // long columns off page once rec_size - (REC_N_NEW_EXTRA_BYTES
            // - 2) >= page_zip_empty_size(n_fields, zip_size) - 1, or once
            // it takes half an uncompressed page.
            Ok(Some(size)) => (crate::page::zip::empty_size(self.clustered.leaf.n_fields(), size)
                + 1)
            .min(crate::page::index::MAX_REC_LEN),
            _ => crate::page::index::MAX_REC_LEN,
        }
    }

    /// Builds the descriptor of a table from its definition and storage.
    pub fn new(def: TableDef, st: &TableStorage) -> Table {
        let fmt = def.row_format.record_format();
        let mut fields = Vec::new();
        let mut layout = Vec::new();
        let mut col_field = vec![usize::MAX; def.columns.len()];
        if def.primary_key.is_empty() {
            fields.push(ClusteredField::RowId);
            layout.push(FieldDef::not_null(FieldKind::Fixed(ROW_ID_LEN)));
        } else {
            for (i, &c) in def.primary_key.iter().enumerate() {
                let col = &def.columns[c];
                let kind = match def.primary_prefix(i) {
                    Some(p) => {
                        fields.push(ClusteredField::Prefix {
                            column: c,
                            len: usize::from(p),
                        });
                        prefix_kind(&col.ty, p)
                    }
                    None => {
                        col_field[c] = fields.len();
                        fields.push(ClusteredField::Column(c));
                        key_kind(&col.ty)
                    }
                };
                layout.push(FieldDef::not_null(kind).collated(col.collation));
            }
        }
        let n_key = fields.len();
        let trx_id_field = fields.len();
        fields.push(ClusteredField::TrxId);
        layout.push(FieldDef::not_null(FieldKind::Fixed(TRX_ID_LEN)));
        let roll_ptr_field = fields.len();
        fields.push(ClusteredField::RollPtr);
        layout.push(FieldDef::not_null(FieldKind::Fixed(
            crate::trx::undo::ROLL_PTR_LEN as u16,
        )));
        for (c, col) in def.columns.iter().enumerate() {
            if col_field[c] != usize::MAX {
                continue;
            }
            col_field[c] = fields.len();
            fields.push(ClusteredField::Column(c));
            layout.push(FieldDef::of(&col.ty, col.nullable).collated(col.collation));
        }
        let clustered = Index::new(
            st.clustered.0,
            "PRIMARY",
            st.space,
            st.clustered.1,
            RecordLayout::new(fmt, layout.clone()),
            n_key,
        );
        let mut secondary = Vec::new();
        for (ix, &(id, root)) in def.indexes.iter().zip(st.secondary.iter()) {
            let mut from = Vec::new();
            let mut prefix = Vec::new();
            let mut sl = Vec::new();
            for (i, &c) in ix.columns.iter().enumerate() {
                let col = &def.columns[c];
                let p = ix.prefix(i);
                from.push(col_field[c]);
                prefix.push(p.map(usize::from));
                let kind = match p {
                    Some(p) => prefix_kind(&col.ty, p),
                    None => key_kind(&col.ty),
                };
                sl.push(FieldDef::new(kind, col.nullable).collated(col.collation));
            }
            for (f, fd) in layout.iter().enumerate().take(n_key) {
                // A primary key field is in the entry once, as the
                // clustered key has it (a prefix, if it is one), unless the
                // index holds its column whole already.
                let whole = match fields[f] {
                    ClusteredField::Column(c) | ClusteredField::Prefix { column: c, .. } => {
                        ix.holds_whole(c)
                    }
                    _ => false,
                };
                if !whole {
                    from.push(f);
                    prefix.push(None);
                    sl.push(FieldDef {
                        nullable: false,
                        ..*fd
                    });
                }
            }
            let n = from.len();
            secondary.push(Secondary {
                def: ix.clone(),
                index: Index::new(id, &ix.name, st.space, root, RecordLayout::new(fmt, sl), n),
                from_clustered: from,
                prefix,
                created_by: 0,
            });
        }
        Table {
            id: st.id,
            def,
            space: st.space,
            clustered,
            secondary,
            fields,
            col_field,
            trx_id_field,
            roll_ptr_field,
            next_row_id: 1,
        }
    }

    /// Name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// Ids and roots, for persisting.
    pub fn storage(&self) -> TableStorage {
        TableStorage {
            id: self.id,
            space: self.space,
            clustered: (self.clustered.id, self.clustered.root),
            secondary: self
                .secondary
                .iter()
                .map(|s| (s.index.id, s.index.root))
                .collect(),
        }
    }
}

/// The definition of SYS_TABLES itself.
pub fn sys_tables_def() -> TableDef {
    TableDef {
        name: "SYS_TABLES".into(),
        columns: vec![
            ColumnDef {
                name: "ID".into(),
                ty: ColumnType::BIGINT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "NAME".into(),
                ty: ColumnType::VarChar(192),
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "DEF".into(),
                ty: ColumnType::LONGBLOB,
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![],
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
