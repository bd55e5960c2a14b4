//! Records: column values, their stored forms, and the physical record
//! formats REDUNDANT, COMPACT and DYNAMIC. Mirrors InnoDB's `rem0rec.cc`
//! (record formats), `row0mysql.cc` (MySQL values to stored fields) and the
//! part of `btr0cur.cc` / `data0data.cc` (`dtuple_convert_big_rec`) that
//! decides which long columns leave the page.
//!
//! This module is pure code over byte slices. It owns three layers, each in
//! its own file:
//!
//! ```text
//!  Value (Int, UInt, Bytes)        types.rs: ColumnType, to_stored, from_stored
//!     |  one column
//!     v
//!  stored form (memcomparable)
//!     |  one field of an index entry; long ones may be split into a local
//!     |  prefix and an ExternalRef           external.rs: place_long_fields
//!     v
//!  record bytes (RowFormat)         format.rs: encode, RecordView, compare_key
//! ```
//!
//! It must never do I/O, know about pages, or fetch the off-page part of a
//! column: an [`ExternalRef`] is only carried, and the B-tree / BLOB code
//! that owns overflow pages follows it.
//!
//! # Stored forms
//!
//! Every field's stored form is memcomparable: two values of one column type
//! compare as their stored bytes compare under `memcmp` (shorter prefix
//! first). Key comparison is therefore a byte comparison field by field and
//! never needs the column type. Integers are big-endian with the sign bit
//! flipped; this is the one place big-endian appears, because the bytes are
//! data that must sort, not layout that must be parsed (InnoDB does the same
//! in `row_mysql_store_col_in_innobase_format`).
//!
//! # Records in this implementation
//!
//! A record is one index entry: a sequence of fields described by a
//! [`RecordLayout`]. InnoDB's records carry an "extra" header read backwards
//! from the record origin, holding the next-record pointer, heap number,
//! n_owned and record type. Here the slotted page keeps records in a heap
//! that prefixes each one with its own length and keeps the order in its
//! slot array, so none of that is stored in the record: the header is only
//! what describes the fields, it comes before the data, and it is parsed
//! forward. Byte 0 is the info byte in every format:
//!
//! ```text
//! bit   mask  meaning
//! ---   ----  ------------------------------------------------------------
//!   5   0x20  delete-marked (InnoDB's REC_INFO_DELETED_FLAG, same bit)
//! other       reserved, must be zero (InnoDB's min-rec flag 0x10 would go
//!             here once the B-tree needs it; readers reject it until then)
//! ```
//!
//! COMPACT and DYNAMIC records are laid out identically (as in InnoDB, where
//! both are "compact" records); they differ only in where long columns go,
//! see [`place_long_fields`]:
//!
//! ```text
//! offset            size                field
//! ------            ----                -----------------------------------
//! 0                 1                   info byte
//! 1                 ceil(n_nullable/8)  null bitmap: bit k (LSB first) set
//!                                       = k-th nullable field is NULL;
//!                                       unused high bits zero
//! 1 + bitmap        1 or 2 each         one length per non-NULL Variable
//!                                       field, in field order (see below)
//! header_len        sum of lengths      the non-NULL fields' bytes,
//!                                       concatenated; NULLs take none
//! ```
//!
//! A length is one byte when the field can never need two (`max_len <= 255`
//! and not `long`: InnoDB's `!DATA_BIG_COL`). Otherwise it is one byte when
//! the in-record length is below 128 and the field is not external, else two
//! bytes, `0x80 | (external ? 0x40 : 0) | len >> 8` then `len & 0xff`, so
//! `len < 16384`. This is a varint, not an integer field: the first byte's
//! top bit says whether a second follows, which is why the high byte comes
//! first. An external field's in-record bytes are its local prefix followed
//! by the 20-byte [`ExternalRef`].
//!
//! REDUNDANT records store an end offset per field instead of lengths:
//!
//! ```text
//! offset            size          field
//! ------            ----          -------------------------------------------
//! 0                 1             info byte
//! 1                 2             n_fields, u16 LE; 0x8000 set when the end
//!                                 offsets below are 1 byte each
//! 3                 n_fields * w  end offset of each field's data, relative
//!                                 to the start of data, in field order:
//!                                 w = 1: 0x80 NULL, low 7 bits offset
//!                                 w = 2: u16 LE, 0x8000 NULL, 0x4000
//!                                 external, low 14 bits offset
//! 3 + n_fields * w  last offset   data
//! ```
//!
//! Offsets are 1 byte exactly when the data is shorter than 128 bytes and no
//! field is external. A NULL Fixed field occupies its full length of zero
//! bytes (InnoDB reserves the space so that an update to a non-NULL value can
//! happen in place); a NULL Variable field occupies nothing.
//!
//! # Invariants
//!
//! - Every encoding is canonical: [`RecordView::parse`] rejects a record that
//!   [`encode`] would not have produced (a 2-byte length that fits 1 byte,
//!   2-byte REDUNDANT offsets for a short record, reserved bits), so
//!   `encode(parse(r)) == r` for every record that parses.
//! - Record bytes come from disk: [`RecordView::parse`], [`compare_key`] and
//!   [`compare_records`] never panic on any input and report inconsistencies
//!   as [`Error::Corrupt`] with file `"record"` (the
//!   page layer knows which page it was and may wrap it).
//! - [`encode`] takes values the caller has checked ([`to_stored`],
//!   [`place_long_fields`]); a value that does not match its field is a
//!   programmer error and an assertion.

pub mod collation;
mod compare;
mod external;
mod format;
mod types;
mod utf8_general_ci;

#[cfg(test)]
mod tests;

pub use collation::Collation;
pub use compare::{compare_key, compare_records, fixed_field_fast as fixed_field};
pub use external::{
    place_long_fields, record_len_with, ExternalRef, Placement, COMPACT_PREFIX_LEN,
    DYNAMIC_INLINE_MAX, EXTERNAL_REF_LEN,
};
pub use format::{encode, encoded_len, is_deleted, set_deleted, RecordView, INFO_DELETED_FLAG};
pub use types::{from_stored, to_stored, write_stored, ColumnType, Value};

use crate::error::{Error, Result};

/// Length of DB_TRX_ID, the id of the transaction that last changed a row.
pub const DATA_TRX_ID_LEN: u16 = 6;
/// Length of DB_ROLL_PTR, the pointer to the row's previous version in undo.
pub const DATA_ROLL_PTR_LEN: u16 = 7;
/// Length of DB_ROW_ID, the generated key of a table without a primary key.
pub const DATA_ROW_ID_LEN: u16 = 6;
/// Length of the child page number that ends every node-pointer record.
pub const CHILD_PAGE_NO_LEN: u16 = 4;

/// The most fields a record may have (InnoDB's `REC_MAX_N_FIELDS`).
pub const REC_MAX_N_FIELDS: usize = 1023;
/// The longest Fixed field (InnoDB's `DICT_MAX_FIXED_COL_LEN`: longer
/// fixed-length columns are stored as variable-length ones).
pub const MAX_FIXED_LEN: u16 = 768;
/// The longest in-record length a Variable field or a REDUNDANT record's data
/// can have: both are stored in 14 bits.
pub const MAX_IN_RECORD_LEN: usize = 0x3fff;

/// How records of an index are laid out, from the table's `ROW_FORMAT`.
///
/// `#[non_exhaustive]` because ROW_FORMAT=COMPRESSED (`page0zip.cc`) will
/// join it: its records are DYNAMIC records inside a compressed page image,
/// so it will share COMPACT's layout and DYNAMIC's placement of long columns.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowFormat {
    /// The pre-5.0 format: an end offset per field.
    Redundant,
    /// The 5.0 format: a null bitmap and lengths of variable fields only;
    /// long columns keep a 768-byte prefix on the page.
    Compact,
    /// The Barracuda format: COMPACT records whose long columns go wholly
    /// off page, leaving only the 20-byte reference.
    Dynamic,
    /// Barracuda's compressed tables: DYNAMIC records on pages compressed
    /// into `key_block_size` KiB ([`crate::page::zip`]). A table's format
    /// only: its records' layouts are DYNAMIC ([`RowFormat::record_format`]).
    Compressed {
        /// The physical page size in KiB: 1, 2, 4, 8 or 16.
        key_block_size: u32,
    },
}

impl RowFormat {
    /// The SQL name, as in `ROW_FORMAT=COMPACT`.
    pub fn name(self) -> &'static str {
        match self {
            RowFormat::Redundant => "REDUNDANT",
            RowFormat::Compact => "COMPACT",
            RowFormat::Dynamic => "DYNAMIC",
            RowFormat::Compressed { .. } => "COMPRESSED",
        }
    }

    /// The format of the records of a table of this format: a compressed
    /// table's are DYNAMIC.
    pub fn record_format(self) -> RowFormat {
        match self {
            RowFormat::Compressed { .. } => RowFormat::Dynamic,
            f => f,
        }
    }

    /// A compressed table's physical page size in bytes, checked
    /// ([`crate::Error::InvalidArgument`] for a KEY_BLOCK_SIZE that is not
    /// 1, 2, 4, 8 or 16); `None` for the other formats.
    pub fn zip_size(self) -> Result<Option<usize>> {
        match self {
            RowFormat::Compressed { key_block_size } => {
                crate::mach::zip_size_of(key_block_size).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Whether records have the compact layout (null bitmap and lengths)
    /// rather than REDUNDANT's end offsets.
    pub fn is_compact_layout(self) -> bool {
        !matches!(self, RowFormat::Redundant)
    }
}

impl std::fmt::Display for RowFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The physical shape of one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// Always exactly this many bytes (1..=[`MAX_FIXED_LEN`]).
    Fixed(u16),
    /// Up to `max_len` bytes. `long` fields (TEXT, BLOB, VARCHAR longer than
    /// 255 bytes) may be stored off page and always have room for a 2-byte
    /// length.
    Variable {
        /// The longest value, in bytes.
        max_len: u32,
        /// Whether the field may be stored off page.
        long: bool,
    },
}

impl FieldKind {
    /// DB_TRX_ID.
    pub const TRX_ID: FieldKind = FieldKind::Fixed(DATA_TRX_ID_LEN);
    /// DB_ROLL_PTR.
    pub const ROLL_PTR: FieldKind = FieldKind::Fixed(DATA_ROLL_PTR_LEN);
    /// DB_ROW_ID.
    pub const ROW_ID: FieldKind = FieldKind::Fixed(DATA_ROW_ID_LEN);
    /// The child page number of a node pointer.
    pub const CHILD_PAGE_NO: FieldKind = FieldKind::Fixed(CHILD_PAGE_NO_LEN);

    /// The field that stores a column of type `ty`.
    pub fn of(ty: &ColumnType) -> FieldKind {
        match *ty {
            ColumnType::ShortInt { len, .. } => FieldKind::Fixed(u16::from(len)),
            ColumnType::Int { .. } => FieldKind::Fixed(4),
            ColumnType::BigInt { .. } => FieldKind::Fixed(8),
            ColumnType::Char(n) | ColumnType::FixBinary(n) => FieldKind::Fixed(n),
            ColumnType::VarChar(n) => FieldKind::Variable {
                max_len: u32::from(n),
                long: n > 255,
            },
            ColumnType::Text { max_len } | ColumnType::Blob { max_len } => FieldKind::Variable {
                max_len,
                long: true,
            },
        }
    }

    /// Whether a COMPACT length of this field may take two bytes (InnoDB's
    /// `DATA_BIG_COL`). When it cannot, the length is always one byte.
    #[inline]
    pub fn is_big(self) -> bool {
        match self {
            FieldKind::Fixed(_) => false,
            FieldKind::Variable { max_len, long } => long || max_len > 255,
        }
    }

    /// The length of a Fixed field.
    #[inline]
    pub fn fixed_len(self) -> Option<usize> {
        match self {
            FieldKind::Fixed(n) => Some(usize::from(n)),
            FieldKind::Variable { .. } => None,
        }
    }
}

/// One field of a record: its shape, whether it may be NULL, and how its
/// values compare (InnoDB keeps the last in the column's `prtype`, the
/// charset-collation number `cmp_data_data` looks up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldDef {
    /// The physical shape.
    pub kind: FieldKind,
    /// Whether the field may be NULL.
    pub nullable: bool,
    /// How two values of the field compare. [`Collation::Binary`] for
    /// everything but strings of a character set.
    pub collation: Collation,
}

impl FieldDef {
    /// A field definition, comparing as bytes.
    pub const fn new(kind: FieldKind, nullable: bool) -> Self {
        FieldDef {
            kind,
            nullable,
            collation: Collation::Binary,
        }
    }

    /// A NOT NULL field, comparing as bytes.
    pub const fn not_null(kind: FieldKind) -> Self {
        FieldDef::new(kind, false)
    }

    /// The field storing a column of type `ty`, comparing as bytes.
    pub fn of(ty: &ColumnType, nullable: bool) -> Self {
        FieldDef::new(FieldKind::of(ty), nullable)
    }

    /// The same field, its values compared in `collation`.
    pub const fn collated(self, collation: Collation) -> Self {
        FieldDef { collation, ..self }
    }
}

/// The layout of the records of one index (or of one level of it: node
/// pointers have their own layout): the format and the fields in order.
///
/// The fields are private so that the precomputed counts cannot go stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordLayout {
    format: RowFormat,
    fields: Vec<FieldDef>,
    n_nullable: usize,
    null_bitmap_len: usize,
    /// COMPACT/DYNAMIC layouts with only Fixed, NOT NULL fields have no
    /// length bytes and no NULLs: their data starts at this fixed offset...
    pub(crate) const_data_start: Option<usize>,
    /// ... and every record is this long.
    pub(crate) const_len: usize,
    /// Offsets (from the data start) and lengths of the leading fields that
    /// are Fixed and NOT NULL: those sit at fixed positions.
    pub(crate) fixed_prefix: Vec<(usize, usize)>,
    /// How many leading fields compare as bytes: a comparison of no more
    /// fields than this (and than `fixed_prefix`) takes the fast path.
    pub(crate) binary_prefix: usize,
}

impl RecordLayout {
    /// A layout.
    ///
    /// # Panics
    ///
    /// If the fields are invalid (see [`RecordLayout::try_new`]): layouts are
    /// built by the dictionary, which validates table definitions first.
    pub fn new(format: RowFormat, fields: Vec<FieldDef>) -> Self {
        match Self::try_new(format, fields) {
            Ok(layout) => layout,
            Err(e) => panic!("invalid record layout: {e}"),
        }
    }

    /// A layout, or [`Error::InvalidArgument`] if there are more than
    /// [`REC_MAX_N_FIELDS`] fields or a Fixed field is not
    /// 1..=[`MAX_FIXED_LEN`] bytes long.
    pub fn try_new(format: RowFormat, fields: Vec<FieldDef>) -> Result<Self> {
        if fields.len() > REC_MAX_N_FIELDS {
            return Err(Error::InvalidArgument(format!(
                "a record has at most {REC_MAX_N_FIELDS} fields, not {}",
                fields.len()
            )));
        }
        for (i, def) in fields.iter().enumerate() {
            if let FieldKind::Fixed(n) = def.kind {
                if n == 0 || n > MAX_FIXED_LEN {
                    return Err(Error::InvalidArgument(format!(
                        "field {i}: a fixed-length field has 1 to {MAX_FIXED_LEN} bytes, not {n}"
                    )));
                }
            }
        }
        let n_nullable = fields.iter().filter(|f| f.nullable).count();
        let null_bitmap_len = if format == RowFormat::Redundant {
            0
        } else {
            n_nullable.div_ceil(8)
        };
        let all_fixed = fields
            .iter()
            .all(|f| matches!(f.kind, FieldKind::Fixed(_)) && !f.nullable);
        let const_data_start =
            (format != RowFormat::Redundant && all_fixed).then_some(1 + null_bitmap_len);
        let const_len = const_data_start.unwrap_or(0)
            + fields
                .iter()
                .map(|f| f.kind.fixed_len().unwrap_or(0))
                .sum::<usize>();
        let mut fixed_prefix = Vec::new();
        let mut off = 0;
        for f in &fields {
            match f.kind {
                FieldKind::Fixed(n) if !f.nullable => {
                    fixed_prefix.push((off, n as usize));
                    off += n as usize;
                }
                _ => break,
            }
        }
        let binary_prefix = fields
            .iter()
            .take_while(|f| f.collation == Collation::Binary)
            .count();
        Ok(RecordLayout {
            format,
            binary_prefix,
            fields,
            n_nullable,
            null_bitmap_len: n_nullable.div_ceil(8),
            const_data_start,
            const_len,
            fixed_prefix,
        })
    }

    /// The row format.
    #[inline]
    pub fn format(&self) -> RowFormat {
        self.format
    }

    /// The fields, in record order.
    #[inline]
    pub fn fields(&self) -> &[FieldDef] {
        &self.fields
    }

    /// The number of fields.
    #[inline]
    pub fn n_fields(&self) -> usize {
        self.fields.len()
    }

    /// The number of nullable fields.
    #[inline]
    pub fn n_nullable(&self) -> usize {
        self.n_nullable
    }

    /// Bytes of the COMPACT null bitmap (0 for REDUNDANT, which has none).
    #[inline]
    pub fn null_bitmap_len(&self) -> usize {
        if self.format.is_compact_layout() {
            self.null_bitmap_len
        } else {
            0
        }
    }
}

/// One field's value as it sits in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// SQL NULL.
    Null,
    /// The whole stored form, in the record.
    Inline(&'a [u8]),
    /// A long field stored off page: the first bytes of the stored form stay
    /// in the record (768 in REDUNDANT and COMPACT, none in DYNAMIC), the rest
    /// is where `reference` says.
    External {
        /// The locally stored beginning of the value.
        prefix: &'a [u8],
        /// Where the rest is.
        reference: ExternalRef,
    },
}

impl FieldValue<'_> {
    /// Whether this is NULL.
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, FieldValue::Null)
    }

    /// Whether this is stored off page.
    #[inline]
    pub fn is_external(&self) -> bool {
        matches!(self, FieldValue::External { .. })
    }

    /// The bytes this field occupies in a COMPACT record's data (a REDUNDANT
    /// NULL Fixed field occupies more: see the module documentation).
    #[inline]
    pub fn in_record_len(&self) -> usize {
        match self {
            FieldValue::Null => 0,
            FieldValue::Inline(b) => b.len(),
            FieldValue::External { prefix, .. } => prefix.len() + EXTERNAL_REF_LEN,
        }
    }
}

/// The error for a record that does not parse.
#[cold]
fn corrupt(reason: String) -> Error {
    Error::Corrupt {
        file: "record".to_string(),
        reason,
    }
}
