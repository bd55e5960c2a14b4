//! The server's view of a table: the SQL types, defaults and options the
//! user wrote (MySQL's `.frm`), mapped onto the engine's definition, and
//! InnoDB Plugin 1.0's rules for what a CREATE TABLE's ROW_FORMAT and
//! KEY_BLOCK_SIZE become under `innodb_file_format`,
//! `innodb_file_per_table` and `innodb_strict_mode` (`ha_innobase::create`
//! and `create_options_are_valid` in `ha_innodb.cc`).
//!
//! The server definition is stored as the table's SHOW CREATE TABLE text
//! in the engine's dictionary row ([`TableDef::server`]), and read back by
//! parsing it: one format, and every reload exercises the parser.

use super::ast::{ColumnSpec, CreateTable, IndexSpec, SqlType, TableOptions};
use super::error::{SqlError, Warning};
use super::value::Datum;
use crate::dict::{ColumnDef, IndexDef, TableDef};
use crate::record::{Collation, ColumnType, RowFormat};

/// A table as the server knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMeta {
    /// The columns as declared.
    pub columns: Vec<ColumnSpec>,
    /// The options as the user wrote them.
    pub options: TableOptions,
}

impl TableOptions {
    /// The table's default collation: its COLLATE=, else its character
    /// set's default, else the server's (latin1_swedish_ci).
    pub fn default_collation(&self) -> Collation {
        self.collate
            .or_else(|| {
                self.charset
                    .as_deref()
                    .and_then(Collation::default_of_charset)
            })
            .unwrap_or(Collation::Latin1SwedishCi)
    }
}

impl TableMeta {
    /// Each column's collation, as the engine compares it.
    pub fn collations(&self) -> Vec<Collation> {
        self.columns
            .iter()
            .map(|c| c.collation.unwrap_or(Collation::Binary))
            .collect()
    }
}

/// MySQL 5.1's TIMESTAMP defaults: the first TIMESTAMP column of a table,
/// NOT NULL with neither DEFAULT nor ON UPDATE written, is DEFAULT
/// CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP; any other TIMESTAMP NOT
/// NULL without a DEFAULT has the zero one.
fn resolve_timestamps(columns: &mut [ColumnSpec]) {
    let first = columns.iter().position(|c| c.ty == SqlType::Timestamp);
    for (i, c) in columns.iter_mut().enumerate() {
        if c.ty != SqlType::Timestamp || !c.not_null || c.default.is_some() || c.default_now {
            continue;
        }
        if Some(i) == first && !c.update_now {
            c.default_now = true;
            c.update_now = true;
        } else {
            c.default = Some(Datum::str("0000-00-00 00:00:00"));
        }
    }
}

/// Gives every string column of a table its collation (the one it was
/// declared with, or the table's default) and every other column none.
/// An ENUM or SET has one too, which its members compare in (the engine
/// orders it by number: [`ColumnSpec::engine_collation`]).
pub(crate) fn resolve_collations(columns: &mut [ColumnSpec], options: &TableOptions) {
    resolve_timestamps(columns);
    let default = options.default_collation();
    for c in columns {
        c.collation = match c.ty {
            SqlType::Char(_)
            | SqlType::VarChar(_)
            | SqlType::Text(_)
            | SqlType::Enum(_)
            | SqlType::Set(_) => Some(c.collation.unwrap_or(default)),
            _ => None,
        };
    }
}

impl ColumnSpec {
    /// The most bytes one character of the column takes (3 in utf8).
    pub fn char_bytes(&self) -> u16 {
        self.collation.map_or(1, |c| c.max_char_bytes() as u16)
    }

    /// The engine's column type. A CHAR or VARCHAR of n characters in a
    /// multi-byte set holds up to n * mbmaxlen bytes, and a CHAR there is
    /// of variable length, as InnoDB keeps it in COMPACT (a character's
    /// bytes vary; InnoDB's REDUNDANT pads it to the longest instead).
    pub fn engine_type(&self) -> ColumnType {
        let w = self.char_bytes();
        match self.ty {
            SqlType::Char(n) | SqlType::VarChar(n) if w > 1 => {
                ColumnType::VarChar(n.saturating_mul(w))
            }
            t => t.engine_type(),
        }
    }

    /// Bytes the column counts toward MySQL's 65535-byte row.
    fn row_bytes(&self) -> u64 {
        match self.ty {
            SqlType::Char(n) => u64::from(n) * u64::from(self.char_bytes()),
            SqlType::VarChar(n) => {
                let b = u64::from(n) * u64::from(self.char_bytes());
                b + if b > 255 { 2 } else { 1 }
            }
            t => t.row_bytes(),
        }
    }

    /// The collation the engine compares the column's stored values in.
    pub fn engine_collation(&self) -> Collation {
        match self.ty {
            SqlType::Enum(_) | SqlType::Set(_) => Collation::Binary,
            _ => self.collation.unwrap_or(Collation::Binary),
        }
    }
}

impl SqlType {
    /// The engine's column type.
    pub fn engine_type(self) -> ColumnType {
        match self {
            SqlType::Integer {
                bytes: 8, unsigned, ..
            } => ColumnType::BigInt { unsigned },
            SqlType::Integer {
                bytes: len @ 1..=3,
                unsigned,
                ..
            } => ColumnType::ShortInt { len, unsigned },
            SqlType::Integer { unsigned, .. } => ColumnType::Int { unsigned },
            // CHAR(0) holds '' or NULL: no fixed field of no bytes.
            SqlType::Char(0) => ColumnType::VarChar(0),
            SqlType::Char(n) => ColumnType::Char(n),
            SqlType::VarChar(n) => ColumnType::VarChar(n),
            SqlType::Text(max_len) => ColumnType::Text { max_len },
            SqlType::Blob(max_len) => ColumnType::Blob { max_len },
            other => super::field::engine_type(other),
        }
    }

    /// The range of an integer type.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let SqlType::Integer {
            bytes, unsigned, ..
        } = self
        else {
            return None;
        };
        let bits = u32::from(bytes) * 8;
        Some(if unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// As SHOW CREATE TABLE writes it: `int(11)`, `int(10) unsigned`.
    pub fn render(self) -> String {
        match self {
            SqlType::Integer {
                bytes,
                unsigned,
                width,
            } => {
                let (name, w) = match bytes {
                    1 => ("tinyint", 4),
                    2 => ("smallint", 6),
                    3 => ("mediumint", 9),
                    4 => ("int", 11),
                    _ => ("bigint", 20),
                };
                // The default width is the longest value's digits and sign;
                // UNSIGNED drops the sign (but bigint's is 20 both ways).
                let w = width.unwrap_or(if unsigned && bytes != 8 { w - 1 } else { w });
                format!("{name}({w}){}", if unsigned { " unsigned" } else { "" })
            }
            SqlType::Char(n) => format!("char({n})"),
            SqlType::VarChar(n) => format!("varchar({n})"),
            SqlType::Text(m) => match m {
                255 => "tinytext".into(),
                65_535 => "text".into(),
                16_777_215 => "mediumtext".into(),
                _ => "longtext".into(),
            },
            SqlType::Blob(m) => match m {
                255 => "tinyblob".into(),
                65_535 => "blob".into(),
                16_777_215 => "mediumblob".into(),
                _ => "longblob".into(),
            },
            other => super::field::render(other, &[]),
        }
    }

    fn is_lob(self) -> bool {
        matches!(self, SqlType::Text(_) | SqlType::Blob(_))
    }

    /// Bytes the type counts toward MySQL's 65535-byte row limit.
    fn row_bytes(self) -> u64 {
        match self {
            SqlType::Integer { bytes, .. } => u64::from(bytes),
            SqlType::Char(n) => u64::from(n),
            SqlType::VarChar(n) => u64::from(n) + if n > 255 { 2 } else { 1 },
            // A LOB counts its pointer: 9 to 12 bytes in MySQL.
            SqlType::Text(_) | SqlType::Blob(_) => 10,
            other => super::field::row_bytes(other),
        }
    }
}

/// Quotes an identifier as SHOW CREATE TABLE does.
pub fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Quotes a string constant.
fn quote_str(b: &[u8]) -> String {
    let mut s = String::from("'");
    for &c in b {
        match c {
            b'\'' => s.push_str("''"),
            b'\\' => s.push_str("\\\\"),
            0 => s.push_str("\\0"),
            b'\n' => s.push_str("\\n"),
            c => s.push(c as char),
        }
    }
    s.push('\'');
    s
}

/// InnoDB's decision for a new table's format: the row format it gets and
/// the warnings it leaves, or (strict mode) the warnings and the refusal.
/// A CREATE TABLE: the ROW_FORMAT is the statement's own when it has one.
pub fn decide_format(
    o: &TableOptions,
    barracuda: bool,
    file_per_table: bool,
    strict: bool,
) -> Result<(RowFormat, Vec<Warning>), Vec<Warning>> {
    decide_format_given(o, o.row_format.is_some(), barracuda, file_per_table, strict)
}

/// [`decide_format`] where `row_given` says whether the statement itself
/// names the ROW_FORMAT (MySQL's `HA_CREATE_USED_ROW_FORMAT`): a copying
/// ALTER carries the table's old ROW_FORMAT in `o` without naming it, and
/// `create_options_are_valid` and `ha_innobase::create` judge a ROW_FORMAT
/// beside KEY_BLOCK_SIZE only when the statement names it.
pub fn decide_format_given(
    o: &TableOptions,
    row_given: bool,
    barracuda: bool,
    file_per_table: bool,
    strict: bool,
) -> Result<(RowFormat, Vec<Warning>), Vec<Warning>> {
    let mut w = Vec::new();
    let warn = |w: &mut Vec<Warning>, m: String| w.push(Warning::warn(1478, m));
    let row = o.row_format.as_deref().unwrap_or("DEFAULT");
    if strict {
        let mut bad = false;
        let kbs = o.key_block_size;
        if let Some(k) = kbs {
            if ![1, 2, 4, 8, 16].contains(&k) {
                warn(
                    &mut w,
                    format!(
                        "InnoDB: invalid KEY_BLOCK_SIZE = {k}. Valid values are [1, 2, 4, 8, 16]"
                    ),
                );
                bad = true;
            }
            if !file_per_table {
                warn(
                    &mut w,
                    "InnoDB: KEY_BLOCK_SIZE requires innodb_file_per_table.".into(),
                );
                bad = true;
            }
            if !barracuda {
                warn(
                    &mut w,
                    "InnoDB: KEY_BLOCK_SIZE requires innodb_file_format > Antelope.".into(),
                );
                bad = true;
            }
        }
        match row {
            _ if !row_given => {}
            "COMPRESSED" | "DYNAMIC" => {
                if !file_per_table {
                    warn(
                        &mut w,
                        format!("InnoDB: ROW_FORMAT={row} requires innodb_file_per_table."),
                    );
                    bad = true;
                }
                if !barracuda {
                    warn(
                        &mut w,
                        format!("InnoDB: ROW_FORMAT={row} requires innodb_file_format > Antelope."),
                    );
                    bad = true;
                }
                if kbs.is_some() && row == "DYNAMIC" {
                    warn(
                        &mut w,
                        "InnoDB: cannot specify ROW_FORMAT = DYNAMIC with KEY_BLOCK_SIZE.".into(),
                    );
                    bad = true;
                }
            }
            "REDUNDANT" | "COMPACT" | "DEFAULT" => {
                if kbs.is_some() {
                    // MySQL 5.1 hands InnoDB ROW_FORMAT=DEFAULT as the
                    // default row type, COMPACT, and InnoDB names that.
                    let named = if row == "DEFAULT" { "COMPACT" } else { row };
                    warn(
                        &mut w,
                        format!("InnoDB: cannot specify ROW_FORMAT = {named} with KEY_BLOCK_SIZE."),
                    );
                    bad = true;
                }
            }
            _ => {
                warn(&mut w, "InnoDB: invalid ROW_FORMAT specifier.".into());
                bad = true;
            }
        }
        if bad {
            return Err(w);
        }
    }
    // The non-strict path: what ha_innobase::create makes of the options.
    let mut zip: Option<u32> = None;
    if let Some(k) = o.key_block_size {
        let mut ok = [1, 2, 4, 8, 16].contains(&k);
        if !file_per_table {
            warn(
                &mut w,
                "InnoDB: KEY_BLOCK_SIZE requires innodb_file_per_table.".into(),
            );
            ok = false;
        }
        if !barracuda {
            warn(
                &mut w,
                "InnoDB: KEY_BLOCK_SIZE requires innodb_file_format > Antelope.".into(),
            );
            ok = false;
        }
        if ok {
            zip = Some(k);
        } else {
            warn(&mut w, format!("InnoDB: ignoring KEY_BLOCK_SIZE={k}."));
        }
    }
    let mut row = row.to_string();
    if let Some(k) = zip {
        if !row_given {
            row = "COMPRESSED".into();
        } else if row != "COMPRESSED" {
            warn(
                &mut w,
                format!("InnoDB: ignoring KEY_BLOCK_SIZE={k} unless ROW_FORMAT=COMPRESSED."),
            );
            zip = None;
        }
    } else if row == "COMPRESSED" {
        // ROW_FORMAT=COMPRESSED alone means half the largest block.
        zip = Some(8);
    }
    let format = match row.as_str() {
        "REDUNDANT" => RowFormat::Redundant,
        "COMPACT" | "DEFAULT" => RowFormat::Compact,
        "COMPRESSED" | "DYNAMIC" => {
            if !file_per_table {
                warn(
                    &mut w,
                    format!("InnoDB: ROW_FORMAT={row} requires innodb_file_per_table."),
                );
            } else if !barracuda {
                warn(
                    &mut w,
                    format!("InnoDB: ROW_FORMAT={row} requires innodb_file_format > Antelope."),
                );
            }
            if file_per_table && barracuda {
                match (row.as_str(), zip) {
                    ("COMPRESSED", Some(key_block_size)) => {
                        RowFormat::Compressed { key_block_size }
                    }
                    _ => RowFormat::Dynamic,
                }
            } else {
                warn(&mut w, "InnoDB: assuming ROW_FORMAT=COMPACT.".into());
                RowFormat::Compact
            }
        }
        _ => {
            warn(&mut w, "InnoDB: assuming ROW_FORMAT=COMPACT.".into());
            RowFormat::Compact
        }
    };
    Ok((format, w))
}

/// Orders a new table's secondary indexes as MySQL 5.1's
/// `mysql_prepare_create_table` sorts its keys (`sort_keys`): UNIQUE
/// before the others; among UNIQUE ones, those with no nullable column
/// first, then those with no column prefix; otherwise as declared. The
/// order is InnoDB's too (the indexes a row's insert goes through, the
/// duplicate checks first) and SHOW CREATE TABLE's.
fn sort_keys(defs: &mut [IndexDef], columns: &[ColumnSpec]) {
    defs.sort_by_key(|d| {
        let nullable = d.columns.iter().any(|&c| !columns[c].not_null);
        let partial = d.prefixes.iter().any(|&p| p != 0);
        (!d.unique, d.unique && nullable, d.unique && partial)
    });
}

/// Builds the engine's definition of a CREATE TABLE (engine name
/// `engine_name`), with the server definition text inside.
pub fn build(
    ct: &CreateTable,
    engine_name: &str,
    row_format: RowFormat,
    warnings: &mut Vec<Warning>,
) -> Result<(TableDef, TableMeta), SqlError> {
    let mut columns: Vec<ColumnSpec> = ct.columns.clone();
    resolve_collations(&mut columns, &ct.options);
    let mut primary: Option<(Vec<String>, Vec<Option<u16>>)> = None;
    let mut indexes: Vec<IndexSpec> = Vec::new();
    let mut set_primary = |cols: (Vec<String>, Vec<Option<u16>>)| -> Result<(), SqlError> {
        if primary.is_some() {
            return Err(SqlError::new(1068, "Multiple primary key defined"));
        }
        primary = Some(cols);
        Ok(())
    };
    for c in &ct.columns {
        if c.primary {
            set_primary((vec![c.name.clone()], vec![None]))?;
        }
    }
    for ix in &ct.indexes {
        if ix.primary {
            set_primary((ix.columns.clone(), ix.prefixes.clone()))?;
        } else {
            indexes.push(ix.clone());
        }
    }
    for c in &ct.columns {
        if c.unique {
            indexes.push(IndexSpec {
                name: Some(c.name.clone()),
                columns: vec![c.name.clone()],
                prefixes: vec![None],
                unique: true,
                primary: false,
            });
        }
    }
    fn position(columns: &[ColumnSpec], name: &str) -> Result<usize, SqlError> {
        columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                SqlError::new(1072, format!("Key column '{name}' doesn't exist in table"))
            })
    }
    let pos = |name: &str| position(&ct.columns, name);
    let pk: Vec<usize> = match &primary {
        Some((cols, _)) => cols.iter().map(|c| pos(c)).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    let pk_prefixes = primary.as_ref().map(|p| p.1.clone()).unwrap_or_default();
    // Columns of the primary key are NOT NULL, as MySQL makes them.
    for &c in &pk {
        columns[c].not_null = true;
    }
    // Name the unnamed indexes MySQL's way: after the first column, with
    // _2, _3 ... for repeats.
    let mut defs: Vec<IndexDef> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for ix in &indexes {
        let cols: Vec<usize> = ix
            .columns
            .iter()
            .map(|c| pos(c))
            .collect::<Result<_, _>>()?;
        let name = match &ix.name {
            Some(n) => {
                // mysql_prepare_create_table's check_column_name.
                super::exec::ddl::check_name(n, 1280, "Incorrect index name")?;
                if n.eq_ignore_ascii_case("PRIMARY") {
                    return Err(SqlError::new(1280, format!("Incorrect index name '{n}'")));
                }
                if names.iter().any(|x| x.eq_ignore_ascii_case(n)) {
                    return Err(SqlError::new(1061, format!("Duplicate key name '{n}'")));
                }
                reserved_index(n, warnings)?;
                n.clone()
            }
            None => unnamed_index_name(&columns[cols[0]].name, &names),
        };
        names.push(name.clone());
        defs.push(IndexDef {
            name,
            columns: cols,
            unique: ix.unique,
            prefixes: Vec::new(),
        });
    }
    check_columns(&columns, &pk, &defs)?;
    for c in &columns {
        reserved_column(&c.name)?;
    }
    for (d, ix) in defs.iter_mut().zip(&indexes) {
        d.prefixes = key_parts(&columns, &d.columns, &ix.prefixes, ix.unique, warnings)?;
    }
    let primary_prefixes = key_parts(&columns, &pk, &pk_prefixes, true, warnings)?;
    sort_keys(&mut defs, &columns);
    for c in &mut columns {
        if c.default == Some(Datum::Null) {
            c.default = None;
        }
    }
    let meta = TableMeta {
        columns: columns.clone(),
        options: ct.options.clone(),
    };
    let mut def = TableDef {
        name: engine_name.to_string(),
        columns: columns
            .iter()
            .map(|c| ColumnDef {
                name: c.name.clone(),
                ty: c.engine_type(),
                nullable: !c.not_null,
                collation: c.engine_collation(),
            })
            .collect(),
        primary_key: pk,
        primary_prefixes,
        indexes: defs,
        row_format,
        foreign: Vec::new(),
        server: Vec::new(),
    };
    def.server = show_create(&ct.name.name, &def, &meta, None).into_bytes();
    Ok((def, meta))
}

/// MySQL's checks of columns, with its errors.
fn check_columns(
    columns: &[ColumnSpec],
    pk: &[usize],
    indexes: &[IndexDef],
) -> Result<(), SqlError> {
    let mut row = 0u64;
    for (i, c) in columns.iter().enumerate() {
        if columns[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(SqlError::new(
                1060,
                format!("Duplicate column name '{}'", c.name),
            ));
        }
        if c.name.len() > 64 {
            return Err(SqlError::new(
                1059,
                format!("Identifier name '{}' is too long", c.name),
            ));
        }
        if c.ty.is_lob() && c.default.as_ref().is_some_and(|d| !d.is_null()) {
            return Err(SqlError::new(
                1101,
                format!("BLOB/TEXT column '{}' can't have a default value", c.name),
            ));
        }
        match &c.default {
            Some(Datum::Null) if c.not_null => {
                return Err(SqlError::new(
                    1067,
                    format!("Invalid default value for '{}'", c.name),
                ))
            }
            Some(d) if !d.is_null() && default_fits(c, d).is_err() => {
                return Err(SqlError::new(
                    1067,
                    format!("Invalid default value for '{}'", c.name),
                ));
            }
            _ => {}
        }
        if c.auto_increment {
            if !matches!(c.ty, SqlType::Integer { .. }) {
                return Err(SqlError::new(
                    1063,
                    format!("Incorrect column specifier for column '{}'", c.name),
                ));
            }
            if columns[..i].iter().any(|o| o.auto_increment) {
                return Err(auto_key_error());
            }
            let leads = pk.first() == Some(&i) || indexes.iter().any(|ix| ix.columns[0] == i);
            if !leads {
                return Err(auto_key_error());
            }
        }
        row += c.row_bytes() + u64::from(!c.not_null);
    }
    if row > 65_535 {
        return Err(SqlError::new(
            1118,
            "Row size too large. The maximum row size for the used table type, not counting \
             BLOBs, is 65535. You have to change some columns to TEXT or BLOBs",
        ));
    }
    Ok(())
}

/// What MySQL makes of an index's key parts (`mysql_prepare_create_table`),
/// as InnoDB keeps them (`create_index` in ha_innodb.cc): each column's
/// prefix length, `0` for the whole column, or an empty list when no part
/// is a prefix. A BLOB or TEXT without a prefix is 1170; a prefix of a
/// column that is not a string, or longer than a CHAR or VARCHAR, is 1089;
/// a prefix as long as its CHAR or VARCHAR is the whole column. A part
/// longer than InnoDB's 767 bytes is cut to 767 with warning 1071 in a
/// plain index and refused with 1071 in a unique one.
pub fn key_parts(
    columns: &[ColumnSpec],
    key: &[usize],
    written: &[Option<u16>],
    unique: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<u16>, SqlError> {
    let max = crate::dict::MAX_KEY_COLUMN_BYTES;
    let too_long = || {
        SqlError::new(
            1071,
            format!("Specified key was too long; max key length is {max} bytes"),
        )
    };
    let mut out = Vec::with_capacity(key.len());
    for (i, &c) in key.iter().enumerate() {
        let col = &columns[c];
        let prefix = written.get(i).copied().flatten();
        // Prefixes count characters; InnoDB keeps bytes (3 a character
        // in utf8).
        let w = u32::from(col.char_bytes());
        let (len, part) = match (col.ty, prefix) {
            (SqlType::Text(_) | SqlType::Blob(_), None) => {
                return Err(SqlError::new(
                    1170,
                    format!(
                        "BLOB/TEXT column '{}' used in key specification without a key length",
                        col.name
                    ),
                ))
            }
            (SqlType::Text(_) | SqlType::Blob(_), Some(p)) => (u32::from(p) * w, u32::from(p) * w),
            (SqlType::Char(n) | SqlType::VarChar(n), None) => (u32::from(n) * w, 0),
            (SqlType::Char(n) | SqlType::VarChar(n), Some(p)) if p <= n => {
                (u32::from(p) * w, if p < n { u32::from(p) * w } else { 0 })
            }
            (_, None) => (0, 0),
            (_, Some(_)) => {
                return Err(SqlError::new(
                    1089,
                    "Incorrect prefix key; the used key part isn't a string, the used length \
                     is longer than the key part, or the storage engine doesn't support \
                     unique prefix keys",
                ))
            }
        };
        let part = if len > max {
            if unique {
                return Err(too_long());
            }
            warnings.push(Warning::warn(
                1071,
                format!("Specified key was too long; max key length is {max} bytes"),
            ));
            max
        } else {
            part
        };
        out.push(part as u16);
    }
    if out.iter().all(|&p| p == 0) {
        out.clear();
    }
    Ok(out)
}

/// A column name refused with 1166: an empty one or one that ends in a
/// space (the server's `check_column_name`), or one of InnoDB's own
/// (`dict_col_name_is_reserved`), in any case, which ha_innobase::create
/// refuses (`create_table_def`).
pub fn reserved_column(name: &str) -> Result<(), SqlError> {
    const RESERVED: [&str; 4] = ["DB_ROW_ID", "DB_TRX_ID", "DB_ROLL_PTR", "DB_MIX_ID"];
    if name.is_empty()
        || name.ends_with(' ')
        || RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name))
    {
        return Err(SqlError::new(
            1166,
            format!("Incorrect column name '{name}'"),
        ));
    }
    Ok(())
}

/// A later version's rule ([`crate::LaterRule::DuplicateIndexNote`]):
/// Note 1831 for each index from the `from`-th on that has the same kind
/// (KEY or UNIQUE), columns and prefix lengths as an index before it
/// (MariaDB's `check_duplicate_key`).
pub fn duplicate_index_notes(indexes: &[IndexDef], from: usize, warnings: &mut Vec<Warning>) {
    let parts = |d: &IndexDef| -> Vec<(usize, u16)> {
        (d.columns.iter().enumerate())
            .map(|(i, &c)| (c, d.prefix(i).unwrap_or(0)))
            .collect()
    };
    for (i, d) in indexes.iter().enumerate().skip(from) {
        let same = |e: &IndexDef| e.unique == d.unique && parts(e) == parts(d);
        if indexes[..i].iter().any(same) {
            warnings.push(Warning::note(
                1831,
                format!(
                    "Duplicate index `{}`. This is deprecated and will be disallowed in a future release",
                    d.name
                ),
            ));
        }
    }
}

/// The name of the clustered index InnoDB makes for a table without a
/// primary key (`innobase_index_name_is_reserved`): no index may take it,
/// in any case; InnoDB warns and refuses with 1280.
pub fn reserved_index(name: &str, warnings: &mut Vec<Warning>) -> Result<(), SqlError> {
    if name.eq_ignore_ascii_case("GEN_CLUST_INDEX") {
        warnings.push(Warning::warn(
            1280,
            "Cannot Create Index with name 'GEN_CLUST_INDEX'. The name is reserved for the \
             system default primary index.",
        ));
        return Err(SqlError::new(
            1280,
            "Incorrect index name 'GEN_CLUST_INDEX'",
        ));
    }
    Ok(())
}

/// The name MySQL gives an index written without one: its first
/// column's, with `_2`, `_3` ... while that is taken.
pub fn unnamed_index_name(first_column: &str, taken: &[String]) -> String {
    let mut n = first_column.to_string();
    let mut k = 2;
    while taken.iter().any(|x| x.eq_ignore_ascii_case(&n)) || n.eq_ignore_ascii_case("PRIMARY") {
        n = format!("{first_column}_{k}");
        k += 1;
    }
    n
}

fn auto_key_error() -> SqlError {
    SqlError::new(
        1075,
        "Incorrect table definition; there can be only one auto column and it must be defined as a key",
    )
}

impl ColumnSpec {
    /// The type as SHOW CREATE TABLE writes it.
    pub fn render_type(&self) -> String {
        if super::field::is_field_type(self.ty) {
            super::field::render(self.ty, &self.members)
        } else {
            self.ty.render()
        }
    }
}

/// How a column's engine value reads back as the server's value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Shape {
    /// As the engine gives it.
    #[default]
    Plain,
    /// A CHAR: its padding dropped, as MySQL returns it.
    Char,
    /// One of [`super::field`]'s types, with its members.
    Field(SqlType, Vec<Vec<u8>>),
}

impl Shape {
    /// The shape of a column.
    pub fn of(c: &ColumnSpec) -> Shape {
        match c.ty {
            SqlType::Char(_) => Shape::Char,
            t if super::field::is_field_type(t) => Shape::Field(t, c.members.clone()),
            _ => Shape::Plain,
        }
    }

    /// The shapes of a table's columns.
    pub fn of_all(meta: &TableMeta) -> Vec<Shape> {
        meta.columns.iter().map(Shape::of).collect()
    }

    /// An engine value as the server's.
    pub fn read(&self, v: crate::record::Value) -> Datum {
        match self {
            Shape::Plain => Datum::from_value(v),
            Shape::Char => match Datum::from_value(v) {
                Datum::Str(mut b) => {
                    while b.last() == Some(&b' ') {
                        b.pop();
                    }
                    Datum::Str(b)
                }
                d => d,
            },
            Shape::Field(t, members) => super::field::read(*t, members, v),
        }
    }

    /// A value in the engine's form (as [`coerce_column`] gives it) as
    /// the server's.
    pub fn show(&self, d: &Datum) -> Datum {
        match self {
            Shape::Field(..) => self.read(d.to_value()),
            _ => d.clone(),
        }
    }
}

/// Whether a constant fits a column (for DEFAULT).
pub fn default_fits(col: &ColumnSpec, d: &Datum) -> Result<Datum, SqlError> {
    coerce_column(col, d)
}

/// The value MySQL gives a NOT NULL column that gets no value: 0 for
/// numbers, the empty string for strings.
pub fn implicit_default(ty: SqlType) -> Datum {
    match ty {
        SqlType::Integer { .. }
        | SqlType::Decimal { .. }
        | SqlType::Float { .. }
        | SqlType::Year => Datum::Int(0),
        SqlType::Date => Datum::str("0000-00-00"),
        SqlType::Time => Datum::str("00:00:00"),
        SqlType::DateTime | SqlType::Timestamp => Datum::str("0000-00-00 00:00:00"),
        // An ENUM's first member.
        SqlType::Enum(_) => Datum::Int(1),
        _ => Datum::Str(Vec::new()),
    }
}

/// [`coerce`] for a column, which also checks a string's characters are
/// of the column's set (1366, as MySQL's strict mode refuses a string it
/// cannot convert).
pub fn coerce_column(col: &ColumnSpec, d: &Datum) -> Result<Datum, SqlError> {
    coerce_column_in(col, d, false, &mut Vec::new())
}

/// [`coerce_column`], or with `lenient` (INSERT IGNORE, UPDATE IGNORE)
/// the value MySQL stores instead of failing, with its warning in
/// `warnings`: a number clipped to the type's range (1264), a string cut
/// to the column (1265), the number a string starts with (1366).
pub fn coerce_column_in(
    col: &ColumnSpec,
    d: &Datum,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Datum, SqlError> {
    if super::field::is_field_type(col.ty) {
        return super::field::store(col.ty, &col.members, d, &col.name, lenient, warnings);
    }
    if let (SqlType::Char(n) | SqlType::VarChar(n), Some(coll)) = (col.ty, col.collation) {
        if coll.max_char_bytes() > 1 && !d.is_null() {
            // CHAR(n) and VARCHAR(n) count characters.
            let b = d.to_bytes();
            let chars = coll.chars(&b);
            let b = if chars > usize::from(n) {
                let e = SqlError::new(
                    1406,
                    format!("Data too long for column '{}' at row 1", col.name),
                );
                if !lenient {
                    return Err(e);
                }
                warnings.push(Warning::warn(
                    1265,
                    format!("Data truncated for column '{}' at row 1", col.name),
                ));
                let mut seen = 0;
                let end = b
                    .iter()
                    .position(|&x| {
                        if x & 0xC0 != 0x80 {
                            seen += 1;
                        }
                        seen > usize::from(n)
                    })
                    .unwrap_or(b.len());
                b[..end].to_vec()
            } else {
                b
            };
            return check_charset(col, Datum::Str(b));
        }
    }
    let v = match coerce(col.ty, d, &col.name) {
        Err(e) if lenient => {
            // A number clipped to the range (out of range, 1264, or the
            // number a string starts with, 1366); a string cut.
            let instead = match col.ty {
                SqlType::Integer { .. } => {
                    let (lo, hi) = col.ty.int_range().expect("an integer type");
                    let v = d.as_i128().unwrap_or(0).clamp(lo, hi);
                    super::value::int_datum(v).expect("in range")
                }
                SqlType::Char(n) | SqlType::VarChar(n) => {
                    Datum::Str(d.to_bytes().into_iter().take(usize::from(n)).collect())
                }
                SqlType::Text(m) | SqlType::Blob(m) => {
                    Datum::Str(d.to_bytes().into_iter().take(m as usize).collect())
                }
                _ => return Err(e),
            };
            let code = if e.code == 1406 { 1265 } else { e.code };
            let message = if e.code == 1406 {
                format!("Data truncated for column '{}' at row 1", col.name)
            } else {
                e.message
            };
            warnings.push(Warning::warn(code, message));
            instead
        }
        r => r?,
    };
    check_charset(col, v)
}

/// `v` if its bytes are characters of the column's set, else 1366.
fn check_charset(col: &ColumnSpec, v: Datum) -> Result<Datum, SqlError> {
    if let (Datum::Str(b), Some(coll)) = (&v, col.collation) {
        if !coll.accepts(b) {
            let shown: String = (b.iter().take_while(|c| c.is_ascii()).count()..b.len())
                .take(6)
                .map(|i| format!("\\x{:02X}", b[i]))
                .collect();
            return Err(SqlError::new(
                1366,
                format!(
                    "Incorrect string value: '{shown}' for column '{}' at row 1",
                    col.name
                ),
            ));
        }
    }
    Ok(v)
}

/// Converts a value for a column, with MySQL's strict-mode errors: 1264
/// for an integer out of range, 1406 for a string too long, 1366 for a
/// string that is not a number.
pub fn coerce(ty: SqlType, d: &Datum, column: &str) -> Result<Datum, SqlError> {
    if d.is_null() {
        return Ok(Datum::Null);
    }
    match ty {
        SqlType::Integer { .. } => {
            if let Datum::Str(b) = d {
                let t = String::from_utf8_lossy(b);
                let s = t.trim();
                if s.is_empty() || s.parse::<i128>().is_err() {
                    return Err(SqlError::new(
                        1366,
                        format!("Incorrect integer value: '{t}' for column '{column}' at row 1"),
                    ));
                }
            }
            let v = match d {
                Datum::Dec(v, s) => {
                    let p = 10i128.pow(u32::from(*s));
                    (v.abs() + p / 2) / p * v.signum()
                }
                other => other.as_i128().unwrap_or(0),
            };
            let (lo, hi) = ty.int_range().expect("an integer type");
            if v < lo || v > hi {
                return Err(SqlError::new(
                    1264,
                    format!("Out of range value for column '{column}' at row 1"),
                ));
            }
            Ok(super::value::int_datum(v).expect("in range"))
        }
        SqlType::Char(n) | SqlType::VarChar(n) => {
            let b = d.to_bytes();
            if b.len() > usize::from(n) {
                return Err(SqlError::new(
                    1406,
                    format!("Data too long for column '{column}' at row 1"),
                ));
            }
            Ok(Datum::Str(b))
        }
        SqlType::Text(m) | SqlType::Blob(m) => {
            let b = d.to_bytes();
            if b.len() as u64 > u64::from(m) {
                return Err(SqlError::new(
                    1406,
                    format!("Data too long for column '{column}' at row 1"),
                ));
            }
            Ok(Datum::Str(b))
        }
        t => super::field::store(t, &[], d, column, false, &mut Vec::new()),
    }
}

/// SHOW CREATE TABLE's text. `auto_increment`: the next value, shown when
/// above 1.
pub fn show_create(
    name: &str,
    def: &TableDef,
    meta: &TableMeta,
    auto_increment: Option<u64>,
) -> String {
    let mut lines = Vec::new();
    let table_collation = meta.options.default_collation();
    for c in &meta.columns {
        let mut l = format!("  {} {}", quote(&c.name), c.render_type());
        // As MySQL writes a column's character set when it is not the
        // table's; its collation when it is not the table's either (MySQL:
        // not its set's default), so that the text gives it back.
        if let Some(coll) = c.collation.filter(|&k| k != table_collation) {
            if coll.charset() != table_collation.charset() {
                l.push_str(&format!(" CHARACTER SET {}", coll.charset()));
            }
            if Collation::default_of_charset(coll.charset()) != Some(coll)
                || coll.charset() == table_collation.charset()
            {
                l.push_str(&format!(" COLLATE {}", coll.name()));
            }
        }
        if c.not_null {
            l.push_str(" NOT NULL");
        }
        match &c.default {
            _ if c.default_now => l.push_str(" DEFAULT CURRENT_TIMESTAMP"),
            Some(Datum::Null) | None if !c.not_null && !c.ty.is_lob() => {
                l.push_str(" DEFAULT NULL")
            }
            Some(d) if !d.is_null() => {
                // As the column holds it ('0000-00-00' for a DATE's 0).
                let shown = match coerce_column(c, d) {
                    Ok(v) if super::field::is_field_type(c.ty) => Shape::of(c).show(&v),
                    _ => d.clone(),
                };
                l.push_str(" DEFAULT ");
                l.push_str(&quote_str(shown.render().as_bytes()));
            }
            _ => {}
        }
        if c.update_now {
            l.push_str(" ON UPDATE CURRENT_TIMESTAMP");
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        lines.push(l);
    }
    let cols = |ix: &[usize], prefixes: &[u16]| {
        ix.iter()
            .enumerate()
            .map(|(i, &c)| match prefixes.get(i).filter(|&&p| p != 0) {
                // The server's names: after a column rename InnoDB 1.0.6
                // left its own (see Engine::set_server_definition).
                // In characters, as written (InnoDB keeps bytes).
                Some(p) => format!(
                    "{}({})",
                    quote(&meta.columns[c].name),
                    p / meta.columns[c].char_bytes()
                ),
                None => quote(&meta.columns[c].name),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    if !def.primary_key.is_empty() {
        lines.push(format!(
            "  PRIMARY KEY ({})",
            cols(&def.primary_key, &def.primary_prefixes)
        ));
    }
    for ix in &def.indexes {
        lines.push(format!(
            "  {}KEY {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            quote(&ix.name),
            cols(&ix.columns, &ix.prefixes)
        ));
    }
    // The constraints, as InnoDB gives them to SHOW CREATE TABLE
    // (`dict_print_info_on_foreign_keys`); the parent without its database
    // when it is the child's.
    let db = super::split_name(&def.name).map(|(d, _)| d);
    for fk in &def.foreign {
        let names: Vec<String> = fk
            .columns
            .iter()
            .map(|&c| {
                meta.columns
                    .get(c)
                    .map_or(def.columns[c].name.clone(), |m| m.name.clone())
            })
            .collect();
        lines.push(format!(
            "  {}",
            crate::dict::foreign_text(fk, &names, |p| match &db {
                Some(d) => super::exec::parent_name(d, p),
                None => format!("`{p}`"),
            })
        ));
    }
    let mut s = format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB",
        quote(name),
        lines.join(",\n")
    );
    if let Some(n) = auto_increment.filter(|&n| n > 1) {
        s.push_str(&format!(" AUTO_INCREMENT={n}"));
    }
    s.push_str(&format!(" DEFAULT CHARSET={}", table_collation.charset()));
    if Collation::default_of_charset(table_collation.charset()) != Some(table_collation) {
        s.push_str(&format!(" COLLATE={}", table_collation.name()));
    }
    if let Some(r) = &meta.options.row_format {
        s.push_str(&format!(" ROW_FORMAT={r}"));
    }
    if let Some(k) = meta.options.key_block_size {
        s.push_str(&format!(" KEY_BLOCK_SIZE={k}"));
    }
    s
}

/// SHOW TABLE STATUS's Create_options: the options the user gave.
pub fn create_options(meta: &TableMeta) -> String {
    let mut parts = Vec::new();
    if let Some(r) = &meta.options.row_format {
        parts.push(format!("row_format={r}"));
    }
    if let Some(k) = meta.options.key_block_size {
        parts.push(format!("KEY_BLOCK_SIZE={k}"));
    }
    parts.join(" ")
}

/// Reads a server definition back.
pub fn load(server: &[u8]) -> Result<TableMeta, SqlError> {
    let text = std::str::from_utf8(server)
        .map_err(|_| SqlError::new(1033, "Incorrect information in file"))?;
    match super::parse::parse(text)? {
        super::ast::Stmt::CreateTable(ct) => {
            let mut columns = ct.columns;
            resolve_collations(&mut columns, &ct.options);
            // PRIMARY KEY columns are NOT NULL in the text already.
            for c in &mut columns {
                c.primary = false;
                c.unique = false;
                if c.default == Some(Datum::Null) {
                    c.default = None;
                }
            }
            Ok(TableMeta {
                columns,
                options: ct.options,
            })
        }
        _ => Err(SqlError::new(1033, "Incorrect information in file")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(row: Option<&str>, kbs: Option<u32>) -> TableOptions {
        TableOptions {
            row_format: row.map(str::to_string),
            key_block_size: kbs,
            ..TableOptions::default()
        }
    }

    fn texts(w: &[Warning]) -> Vec<String> {
        w.iter().map(|w| w.message.clone()).collect()
    }

    #[test]
    fn the_seeds_fall_backs_word_for_word() {
        // seeds/000: Antelope, ROW_FORMAT=Dynamic.
        let (f, w) = decide_format(&opts(Some("DYNAMIC"), None), false, true, false).unwrap();
        assert_eq!(f, RowFormat::Compact);
        assert_eq!(
            texts(&w),
            [
                "InnoDB: ROW_FORMAT=DYNAMIC requires innodb_file_format > Antelope.",
                "InnoDB: assuming ROW_FORMAT=COMPACT."
            ]
        );
        // seeds/000: Antelope, ROW_FORMAT=Compressed KEY_BLOCK_SIZE=8.
        let (f, w) = decide_format(&opts(Some("COMPRESSED"), Some(8)), false, true, false).unwrap();
        assert_eq!(f, RowFormat::Compact);
        assert_eq!(
            texts(&w),
            [
                "InnoDB: KEY_BLOCK_SIZE requires innodb_file_format > Antelope.",
                "InnoDB: ignoring KEY_BLOCK_SIZE=8.",
                "InnoDB: ROW_FORMAT=COMPRESSED requires innodb_file_format > Antelope.",
                "InnoDB: assuming ROW_FORMAT=COMPACT."
            ]
        );
        // Strict: refused, with the reasons.
        let w = decide_format(&opts(Some("COMPRESSED"), Some(8)), false, true, true).unwrap_err();
        assert_eq!(
            texts(&w),
            [
                "InnoDB: KEY_BLOCK_SIZE requires innodb_file_format > Antelope.",
                "InnoDB: ROW_FORMAT=COMPRESSED requires innodb_file_format > Antelope.",
            ]
        );
    }

    #[test]
    fn barracuda_outcomes() {
        let ok = |row, kbs| decide_format(&opts(row, kbs), true, true, false).unwrap();
        assert_eq!(
            ok(Some("COMPRESSED"), None).0,
            RowFormat::Compressed { key_block_size: 8 }
        );
        assert_eq!(
            ok(None, Some(4)).0,
            RowFormat::Compressed { key_block_size: 4 }
        );
        let (f, w) = ok(Some("DYNAMIC"), Some(4));
        assert_eq!(f, RowFormat::Dynamic);
        assert_eq!(
            texts(&w),
            ["InnoDB: ignoring KEY_BLOCK_SIZE=4 unless ROW_FORMAT=COMPRESSED."]
        );
        let (f, w) = ok(None, Some(3));
        assert_eq!(f, RowFormat::Compact);
        assert_eq!(texts(&w), ["InnoDB: ignoring KEY_BLOCK_SIZE=3."]);
        assert_eq!(ok(Some("REDUNDANT"), None).0, RowFormat::Redundant);
        let (f, w) = ok(Some("FIXED"), None);
        assert_eq!(f, RowFormat::Compact);
        assert_eq!(texts(&w), ["InnoDB: assuming ROW_FORMAT=COMPACT."]);
        let w = decide_format(&opts(Some("DYNAMIC"), Some(8)), true, true, true).unwrap_err();
        assert_eq!(
            texts(&w),
            ["InnoDB: cannot specify ROW_FORMAT = DYNAMIC with KEY_BLOCK_SIZE."]
        );
        // Strict mode: KEY_BLOCK_SIZE alone compresses; a named DEFAULT is
        // refused beside it; an ALTER's carried ROW_FORMAT is not judged.
        let strict =
            |row, kbs, given| decide_format_given(&opts(row, kbs), given, true, true, true);
        assert_eq!(
            strict(None, Some(2), false).unwrap().0,
            RowFormat::Compressed { key_block_size: 2 }
        );
        assert_eq!(
            texts(&strict(Some("DEFAULT"), Some(2), true).unwrap_err()),
            ["InnoDB: cannot specify ROW_FORMAT = COMPACT with KEY_BLOCK_SIZE."]
        );
        assert_eq!(
            strict(Some("COMPACT"), Some(1), false).unwrap().0,
            RowFormat::Compressed { key_block_size: 1 }
        );
        let (f, w) = decide_format(&opts(Some("COMPRESSED"), None), true, false, false).unwrap();
        assert_eq!(f, RowFormat::Compact);
        assert_eq!(
            texts(&w),
            [
                "InnoDB: ROW_FORMAT=COMPRESSED requires innodb_file_per_table.",
                "InnoDB: assuming ROW_FORMAT=COMPACT."
            ]
        );
    }

    #[test]
    fn a_definition_survives_its_text() {
        let t = "CREATE TABLE `sbtest` ( `id` int(10) unsigned NOT NULL auto_increment, `k` int(10) unsigned NOT NULL DEFAULT '0', `c` char(120) NOT NULL DEFAULT '', `pad` char(60) NOT NULL DEFAULT '', d varchar(20), PRIMARY KEY (`id`), KEY `k` (`k`) ) ENGINE=InnoDB ROW_FORMAT=compressed";
        let super::super::ast::Stmt::CreateTable(ct) = super::super::parse::parse(t).unwrap()
        else {
            panic!()
        };
        let (def, meta) = build(&ct, "test$sbtest", RowFormat::Compact, &mut Vec::new()).unwrap();
        let text = String::from_utf8(def.server.clone()).unwrap();
        assert_eq!(
            text,
            "CREATE TABLE `sbtest` (\n  `id` int(10) unsigned NOT NULL AUTO_INCREMENT,\n  `k` int(10) unsigned NOT NULL DEFAULT '0',\n  `c` char(120) NOT NULL DEFAULT '',\n  `pad` char(60) NOT NULL DEFAULT '',\n  `d` varchar(20) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `k` (`k`)\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 ROW_FORMAT=COMPRESSED"
        );
        let mut back = load(&def.server).unwrap();
        back.options.engine = None;
        back.options.charset = None;
        let mut want = meta.clone();
        want.options.engine = None;
        for c in &mut want.columns {
            c.primary = false;
        }
        assert_eq!(back, want);
    }
}
