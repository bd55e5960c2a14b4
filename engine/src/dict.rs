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
use crate::mach::put_varint;
use crate::record::{Collation, ColumnType, FieldDef, FieldKind, RecordLayout, RowFormat};

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

// ---- persistent form of a definition ----

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn type_code(ty: &ColumnType) -> (u8, u64) {
    match *ty {
        ColumnType::ShortInt { len, unsigned } => (7, u64::from(len) | (unsigned as u64) << 8),
        ColumnType::Int { unsigned } => (1, unsigned as u64),
        ColumnType::BigInt { unsigned } => (2, unsigned as u64),
        ColumnType::Char(n) => (3, n as u64),
        ColumnType::VarChar(n) => (4, n as u64),
        ColumnType::Text { max_len } => (5, max_len as u64),
        ColumnType::Blob { max_len } => (6, max_len as u64),
        ColumnType::FixBinary(n) => (8, n as u64),
    }
}

fn format_code(f: RowFormat) -> u8 {
    match f {
        RowFormat::Redundant => 0,
        RowFormat::Compact => 1,
        RowFormat::Dynamic => 2,
        RowFormat::Compressed { .. } => 3,
    }
}

/// Serializes a definition and its storage for SYS_TABLES.
///
/// Version 1 has no server definition; version 2 ends with one; version 3
/// adds each column's collation number after its nullability and each
/// index's prefix lengths after its columns, and ends with a server
/// definition of any length; version 4 adds the primary key's prefix
/// lengths after its columns; version 5 ends with the foreign keys. A table is written in the lowest version that
/// holds it, so the engine's own tables keep the bytes (and page counts)
/// they had before the later versions.
pub fn encode_def(def: &TableDef, st: &TableStorage) -> Vec<u8> {
    let v5 = !def.foreign.is_empty();
    let v4 = v5 || !def.primary_prefixes.is_empty();
    let v3 = v4
        || def.columns.iter().any(|c| c.collation != Collation::Binary)
        || def.indexes.iter().any(|ix| !ix.prefixes.is_empty());
    let version = if v5 {
        5u8
    } else if v4 {
        4u8
    } else if v3 {
        3
    } else if def.server.is_empty() {
        1
    } else {
        2
    };
    let mut out = vec![version];
    put_str(&mut out, &def.name);
    out.push(format_code(def.row_format));
    if let RowFormat::Compressed { key_block_size } = def.row_format {
        out.push(key_block_size as u8);
    }
    put_varint(&mut out, def.columns.len() as u64);
    for c in &def.columns {
        put_str(&mut out, &c.name);
        let (code, p) = type_code(&c.ty);
        out.push(code);
        put_varint(&mut out, p);
        out.push(c.nullable as u8);
        if v3 {
            put_varint(&mut out, u64::from(c.collation.id()));
        }
    }
    put_varint(&mut out, def.primary_key.len() as u64);
    for &c in &def.primary_key {
        put_varint(&mut out, c as u64);
    }
    if v4 {
        // One per key column (0: whole), given or not.
        for i in 0..def.primary_key.len() {
            put_varint(
                &mut out,
                u64::from(def.primary_prefixes.get(i).copied().unwrap_or(0)),
            );
        }
    }
    put_varint(&mut out, def.indexes.len() as u64);
    for ix in &def.indexes {
        put_str(&mut out, &ix.name);
        out.push(ix.unique as u8);
        put_varint(&mut out, ix.columns.len() as u64);
        for &c in &ix.columns {
            put_varint(&mut out, c as u64);
        }
        if v3 {
            put_varint(&mut out, ix.prefixes.len() as u64);
            for &p in &ix.prefixes {
                put_varint(&mut out, u64::from(p));
            }
        }
    }
    put_varint(&mut out, st.id);
    put_varint(&mut out, st.space as u64);
    put_varint(&mut out, st.clustered.0);
    put_varint(&mut out, st.clustered.1 as u64);
    put_varint(&mut out, st.secondary.len() as u64);
    for &(id, root) in &st.secondary {
        put_varint(&mut out, id);
        put_varint(&mut out, root as u64);
    }
    if version >= 2 {
        put_varint(&mut out, def.server.len() as u64);
        out.extend_from_slice(&def.server);
    }
    if version >= 5 {
        put_varint(&mut out, def.foreign.len() as u64);
        for fk in &def.foreign {
            put_str(&mut out, &fk.id);
            put_str(&mut out, &fk.parent);
            put_varint(&mut out, fk.columns.len() as u64);
            for (&c, p) in fk.columns.iter().zip(&fk.parent_columns) {
                put_varint(&mut out, c as u64);
                put_str(&mut out, p);
            }
            out.push(fk.on_delete.code());
            out.push(fk.on_update.code());
        }
    }
    out
}

struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Rd<'_> {
    fn err() -> Error {
        Error::Corrupt {
            file: "ibdata1".into(),
            reason: "malformed table definition in SYS_TABLES".into(),
        }
    }
    fn byte(&mut self) -> Result<u8> {
        let v = *self.b.get(self.pos).ok_or_else(Self::err)?;
        self.pos += 1;
        Ok(v)
    }
    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Self::err())
    }
    fn small(&mut self, max: u64) -> Result<usize> {
        let v = self.varint()?;
        if v > max {
            return Err(Self::err());
        }
        Ok(v as usize)
    }
    fn string(&mut self) -> Result<String> {
        let n = self.small(1024)?;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(Self::err)?;
        let s = std::str::from_utf8(&self.b[self.pos..end])
            .map_err(|_| Self::err())?
            .to_string();
        self.pos = end;
        Ok(s)
    }
}

/// Deserializes a SYS_TABLES definition.
pub fn decode_def(b: &[u8]) -> Result<(TableDef, TableStorage)> {
    let mut r = Rd { b, pos: 0 };
    let version = r.byte()?;
    if !(1..=5).contains(&version) {
        return Err(Rd::err());
    }
    let name = r.string()?;
    let row_format = match r.byte()? {
        0 => RowFormat::Redundant,
        1 => RowFormat::Compact,
        2 => RowFormat::Dynamic,
        3 => {
            let key_block_size = u32::from(r.byte()?);
            crate::mach::zip_size_of(key_block_size).map_err(|_| Rd::err())?;
            RowFormat::Compressed { key_block_size }
        }
        _ => return Err(Rd::err()),
    };
    let n = r.small(1000)?;
    let mut columns = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.string()?;
        let code = r.byte()?;
        let p = r.varint()?;
        let ty = match code {
            7 => ColumnType::ShortInt {
                len: u8::try_from(p & 0xFF)
                    .ok()
                    .filter(|l| (1..=3).contains(l))
                    .ok_or_else(Rd::err)?,
                unsigned: p >> 8 != 0,
            },
            1 => ColumnType::Int { unsigned: p != 0 },
            2 => ColumnType::BigInt { unsigned: p != 0 },
            3 => ColumnType::Char(u16::try_from(p).map_err(|_| Rd::err())?),
            4 => ColumnType::VarChar(u16::try_from(p).map_err(|_| Rd::err())?),
            5 => ColumnType::Text {
                max_len: u32::try_from(p).map_err(|_| Rd::err())?,
            },
            6 => ColumnType::Blob {
                max_len: u32::try_from(p).map_err(|_| Rd::err())?,
            },
            8 => ColumnType::FixBinary(u16::try_from(p).map_err(|_| Rd::err())?),
            _ => return Err(Rd::err()),
        };
        let nullable = r.byte()? != 0;
        let collation = if version >= 3 {
            let id = u16::try_from(r.varint()?).map_err(|_| Rd::err())?;
            Collation::from_id(id).ok_or_else(Rd::err)?
        } else {
            Collation::Binary
        };
        columns.push(ColumnDef {
            name,
            ty,
            nullable,
            collation,
        });
    }
    let npk = r.small(16)?;
    let mut primary_key = Vec::new();
    for _ in 0..npk {
        primary_key.push(r.small(n as u64)?);
    }
    let mut primary_prefixes = Vec::new();
    if version >= 4 {
        for _ in 0..npk {
            primary_prefixes.push(u16::try_from(r.varint()?).map_err(|_| Rd::err())?);
        }
        // A key with no prefix column has no prefix lengths in memory.
        if primary_prefixes.iter().all(|&p| p == 0) {
            primary_prefixes.clear();
        }
    }
    let nix = r.small(64)?;
    let mut indexes = Vec::new();
    for _ in 0..nix {
        let name = r.string()?;
        let unique = r.byte()? != 0;
        let nc = r.small(16)?;
        let mut cols = Vec::new();
        for _ in 0..nc {
            cols.push(r.small(n as u64)?);
        }
        let mut prefixes = Vec::new();
        if version >= 3 {
            for _ in 0..r.small(16)? {
                prefixes.push(u16::try_from(r.varint()?).map_err(|_| Rd::err())?);
            }
        }
        indexes.push(IndexDef {
            name,
            columns: cols,
            unique,
            prefixes,
        });
    }
    let id = r.varint()?;
    let space = r.small(u32::MAX as u64)? as u32;
    let cid = r.varint()?;
    let croot = r.small(u32::MAX as u64)? as u32;
    let ns = r.small(64)?;
    let mut secondary = Vec::new();
    for _ in 0..ns {
        let sid = r.varint()?;
        let sroot = r.small(u32::MAX as u64)? as u32;
        secondary.push((sid, sroot));
    }
    let server = if version >= 2 {
        let n = r.small(MAX_SERVER_DEF_BYTES as u64)?;
        let end = r.pos + n;
        if (n == 0 && version == 2) || end > b.len() {
            return Err(Rd::err());
        }
        let v = b[r.pos..end].to_vec();
        r.pos = end;
        v
    } else {
        Vec::new()
    };
    let mut foreign = Vec::new();
    if version >= 5 {
        for _ in 0..r.small(1024)? {
            let id = r.string()?;
            let parent = r.string()?;
            let nc = r.small(16)?;
            let mut columns = Vec::with_capacity(nc);
            let mut parent_columns = Vec::with_capacity(nc);
            for _ in 0..nc {
                columns.push(r.small(n as u64)?);
                parent_columns.push(r.string()?);
            }
            let on_delete = FkAction::from_code(r.byte()?).ok_or_else(Rd::err)?;
            let on_update = FkAction::from_code(r.byte()?).ok_or_else(Rd::err)?;
            foreign.push(ForeignDef {
                id,
                columns,
                parent,
                parent_columns,
                on_delete,
                on_update,
            });
        }
    }
    if ns != nix || r.pos != b.len() {
        return Err(Rd::err());
    }
    let def = TableDef {
        name,
        columns,
        primary_key,
        primary_prefixes,
        indexes,
        row_format,
        foreign,
        server,
    };
    def.validate().map_err(|_| Rd::err())?;
    Ok((
        def,
        TableStorage {
            id,
            space,
            clustered: (cid, croot),
            secondary,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_round_trip() {
        let def = TableDef {
            name: "sbtest".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: ColumnType::INT_UNSIGNED,
                    nullable: false,
                    collation: Default::default(),
                },
                ColumnDef {
                    name: "k".into(),
                    ty: ColumnType::INT,
                    nullable: false,
                    collation: Default::default(),
                },
                ColumnDef {
                    name: "c".into(),
                    ty: ColumnType::Char(120),
                    nullable: false,
                    collation: Default::default(),
                },
                ColumnDef {
                    name: "pad".into(),
                    ty: ColumnType::Char(60),
                    nullable: true,
                    collation: Default::default(),
                },
                ColumnDef {
                    name: "tiny".into(),
                    ty: ColumnType::ShortInt {
                        len: 3,
                        unsigned: true,
                    },
                    nullable: true,
                    collation: Default::default(),
                },
            ],
            primary_key: vec![0],
            primary_prefixes: Vec::new(),
            indexes: vec![IndexDef {
                name: "k".into(),
                columns: vec![1],
                unique: false,
                prefixes: Vec::new(),
            }],
            row_format: RowFormat::Dynamic,
            foreign: Vec::new(),
            server: Vec::new(),
        };
        def.validate().unwrap();
        let st = TableStorage {
            id: 7,
            space: 3,
            clustered: (10, 1),
            secondary: vec![(11, 2)],
        };
        let enc = encode_def(&def, &st);
        assert_eq!(enc[0], 1, "no server definition: version 1");
        assert_eq!(decode_def(&enc).unwrap(), (def.clone(), st.clone()));
        for cut in 0..enc.len() {
            assert!(decode_def(&enc[..cut]).is_err());
        }
        let with_server = TableDef {
            foreign: Vec::new(),
            server: b"CREATE TABLE `sbtest` (...)".to_vec(),
            ..def.clone()
        };
        let enc2 = encode_def(&with_server, &st);
        assert_eq!(enc2[0], 2);
        assert_eq!(decode_def(&enc2).unwrap(), (with_server, st.clone()));
        for cut in 0..enc2.len() {
            assert!(decode_def(&enc2[..cut]).is_err());
        }
        // Version 5: the constraints, after the server definition.
        let with_foreign = TableDef {
            foreign: vec![ForeignDef {
                id: "sbtest_ibfk_1".into(),
                columns: vec![1],
                parent: "parent".into(),
                parent_columns: vec!["pk".into()],
                on_delete: FkAction::Cascade,
                on_update: FkAction::SetNull,
            }],
            ..def.clone()
        };
        let enc5 = encode_def(&with_foreign, &st);
        assert_eq!(enc5[0], 5);
        assert_eq!(decode_def(&enc5).unwrap(), (with_foreign, st.clone()));
        for cut in 0..enc5.len() {
            assert!(decode_def(&enc5[..cut]).is_err());
        }
        let t = Table::new(def, &st);
        assert_eq!(t.fields.len(), 7);
        assert_eq!(t.secondary[0].from_clustered, vec![t.col_field[1], 0]);
    }

    /// `dict_index_too_big_for_tree`'s arithmetic at KEY_BLOCK_SIZE=1: a
    /// secondary index on a TEXT prefix and an INT key has an empty-page
    /// room of 1024 - 106 - compressBound(6) = 899 bytes, a byte less for
    /// a record and half that, 449, for a node pointer, whose size is 2
    /// (directory slot) + 1 (null bits) + 2 + p (the prefix and its
    /// length) + 4 (the key) + 4 (the child page): so a prefix of 435
    /// fits and 436 does not; at 2 KiB both fit.
    #[test]
    fn too_big_for_tree_follows_innodb_arithmetic() {
        let def = |p: u16, kbs: u32| TableDef {
            name: "t".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: ColumnType::INT,
                    nullable: false,
                    collation: Default::default(),
                },
                ColumnDef {
                    name: "c".into(),
                    ty: ColumnType::TEXT,
                    nullable: true,
                    collation: Default::default(),
                },
            ],
            primary_key: vec![0],
            primary_prefixes: Vec::new(),
            indexes: vec![IndexDef {
                name: "c".into(),
                columns: vec![1],
                unique: false,
                prefixes: vec![p],
            }],
            row_format: RowFormat::Compressed {
                key_block_size: kbs,
            },
            foreign: Vec::new(),
            server: Vec::new(),
        };
        assert_eq!(crate::page::zip::empty_size(2, 1024), 899);
        assert_eq!(too_big_for_tree(&def(435, 1), 0), None);
        assert_eq!(too_big_for_tree(&def(436, 1), 0), Some(("c".into(), 8126)));
        assert_eq!(
            too_big_for_tree(&def(436, 1), 2),
            None,
            "only the indexes checked"
        );
        assert_eq!(too_big_for_tree(&def(436, 2), 0), None);
        // The whole TEXT in the clustered index counts as 40 bytes.
        let mut wide = def(10, 1);
        wide.indexes.clear();
        assert_eq!(too_big_for_tree(&wide, 0), None);
    }
}
