//! Column types, SQL values, and the stored form of a value in a field.
//! Mirrors the parts of InnoDB's `row0mysql.cc`
//! (`row_mysql_store_col_in_innobase_format`) and `data0type` that this
//! engine needs, with MySQL's strict-mode checks (errors 1406 and 1264).
//!
//! Stored forms are memcomparable, so that comparing two values of a column
//! is `memcmp` of their stored forms:
//!
//! ```text
//! type               stored form                                   bytes
//! ----               -----------                                   -----
//! TINYINT .. MEDIUMINT  like INT, in 1, 2 or 3 bytes                1..=3
//! INT                (v as i32 as u32 ^ 0x8000_0000), big-endian    4
//! INT UNSIGNED       v as u32, big-endian                          4
//! BIGINT             (v as u64 ^ 0x8000_0000_0000_0000), big-endian 8
//! BIGINT UNSIGNED    v as u64, big-endian                          8
//! CHAR(n)            the bytes, right-padded with b' '             n
//! VARCHAR(n)         the bytes                                     0..=n
//! TEXT, BLOB, ...    the bytes                                     0..=max
//! ```
//!
//! Big-endian is deliberate: these bytes are data that must sort, not
//! layout that must be parsed. Flipping the sign bit makes negative numbers
//! sort below positive ones. Strings are bytes in a single-byte character set
//! under a binary collation: CHAR's padding means `'a'` and `'a '` store the
//! same (MySQL's PAD SPACE behaviour for CHAR), while in VARCHAR and TEXT
//! `'a' < 'a '`.
//!
//! NULL has no stored form: whether a column may be NULL, and the
//! [`Error::NotNull`] that follows, is the caller's business.

use std::fmt;

use crate::error::{Error, Result};

use super::corrupt;

/// The type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// TINYINT, SMALLINT or MEDIUMINT: an integer of 1, 2 or 3 bytes
    /// (InnoDB's DATA_INT of that length).
    ShortInt {
        /// Its bytes: 1, 2 or 3.
        len: u8,
        /// UNSIGNED.
        unsigned: bool,
    },
    /// A 32-bit integer.
    Int {
        /// Whether it is `INT UNSIGNED`.
        unsigned: bool,
    },
    /// A 64-bit integer.
    BigInt {
        /// Whether it is `BIGINT UNSIGNED`.
        unsigned: bool,
    },
    /// A fixed-length string of 1..=255 bytes.
    Char(u16),
    /// A variable-length string of up to 1..=65535 bytes.
    VarChar(u16),
    /// A character large object of up to `max_len` bytes.
    Text {
        /// The longest value, in bytes.
        max_len: u32,
    },
    /// A binary large object of up to `max_len` bytes.
    Blob {
        /// The longest value, in bytes.
        max_len: u32,
    },
    /// Exactly `n` bytes (1..=255), kept and given back as they are:
    /// InnoDB's DATA_FIXBINARY, which holds MySQL's DECIMAL in its
    /// memcomparable `decimal2bin` form, and the server's FLOAT and DOUBLE
    /// (see `sql/field.rs`).
    FixBinary(u16),
}

impl ColumnType {
    /// `INT`.
    pub const INT: ColumnType = ColumnType::Int { unsigned: false };
    /// `INT UNSIGNED`.
    pub const INT_UNSIGNED: ColumnType = ColumnType::Int { unsigned: true };
    /// `BIGINT`.
    pub const BIGINT: ColumnType = ColumnType::BigInt { unsigned: false };
    /// `BIGINT UNSIGNED`.
    pub const BIGINT_UNSIGNED: ColumnType = ColumnType::BigInt { unsigned: true };
    /// `TINYINT`.
    pub const TINYINT: ColumnType = ColumnType::ShortInt {
        len: 1,
        unsigned: false,
    };
    /// `SMALLINT`.
    pub const SMALLINT: ColumnType = ColumnType::ShortInt {
        len: 2,
        unsigned: false,
    };
    /// `MEDIUMINT`.
    pub const MEDIUMINT: ColumnType = ColumnType::ShortInt {
        len: 3,
        unsigned: false,
    };
    /// `TINYTEXT`: up to 255 bytes.
    pub const TINYTEXT: ColumnType = ColumnType::Text { max_len: 255 };
    /// `TEXT`: up to 65535 bytes.
    pub const TEXT: ColumnType = ColumnType::Text { max_len: 65_535 };
    /// `MEDIUMTEXT`: up to 16 MiB - 1.
    pub const MEDIUMTEXT: ColumnType = ColumnType::Text {
        max_len: 16_777_215,
    };
    /// `LONGTEXT`: up to 4 GiB - 1.
    pub const LONGTEXT: ColumnType = ColumnType::Text { max_len: u32::MAX };
    /// `TINYBLOB`: up to 255 bytes.
    pub const TINYBLOB: ColumnType = ColumnType::Blob { max_len: 255 };
    /// `BLOB`: up to 65535 bytes.
    pub const BLOB: ColumnType = ColumnType::Blob { max_len: 65_535 };
    /// `MEDIUMBLOB`: up to 16 MiB - 1.
    pub const MEDIUMBLOB: ColumnType = ColumnType::Blob {
        max_len: 16_777_215,
    };
    /// `LONGBLOB`: up to 4 GiB - 1.
    pub const LONGBLOB: ColumnType = ColumnType::Blob { max_len: u32::MAX };

    /// The type as MySQL prints it: `int`, `bigint unsigned`, `char(120)`,
    /// `varchar(255)`, `text`, `mediumblob`. A TEXT or BLOB of a length
    /// between MySQL's four sizes prints as the smallest that holds it, as
    /// `TEXT(n)` does in MySQL.
    pub fn sql_name(&self) -> String {
        fn lob_size(max_len: u32) -> &'static str {
            match max_len {
                0..=255 => "tiny",
                256..=65_535 => "",
                65_536..=16_777_215 => "medium",
                _ => "long",
            }
        }
        match *self {
            ColumnType::ShortInt { len, unsigned } => format!(
                "{}int{}",
                match len {
                    1 => "tiny",
                    2 => "small",
                    _ => "medium",
                },
                if unsigned { " unsigned" } else { "" }
            ),
            ColumnType::Int { unsigned: false } => "int".to_string(),
            ColumnType::Int { unsigned: true } => "int unsigned".to_string(),
            ColumnType::BigInt { unsigned: false } => "bigint".to_string(),
            ColumnType::BigInt { unsigned: true } => "bigint unsigned".to_string(),
            ColumnType::Char(n) => format!("char({n})"),
            ColumnType::VarChar(n) => format!("varchar({n})"),
            ColumnType::Text { max_len } => format!("{}text", lob_size(max_len)),
            ColumnType::Blob { max_len } => format!("{}blob", lob_size(max_len)),
            ColumnType::FixBinary(n) => format!("binary({n})"),
        }
    }

    /// Whether this is an integer type.
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            ColumnType::ShortInt { .. } | ColumnType::Int { .. } | ColumnType::BigInt { .. }
        )
    }

    /// The length of every stored form, for the types that have one.
    pub fn fixed_len(&self) -> Option<u16> {
        match *self {
            ColumnType::ShortInt { len, .. } => Some(u16::from(len)),
            ColumnType::Int { .. } => Some(4),
            ColumnType::BigInt { .. } => Some(8),
            ColumnType::Char(n) | ColumnType::FixBinary(n) => Some(n),
            _ => None,
        }
    }

    /// The longest stored form, in bytes.
    pub fn max_stored_len(&self) -> u64 {
        match *self {
            ColumnType::ShortInt { len, .. } => u64::from(len),
            ColumnType::Int { .. } => 4,
            ColumnType::BigInt { .. } => 8,
            ColumnType::Char(n) | ColumnType::VarChar(n) | ColumnType::FixBinary(n) => u64::from(n),
            ColumnType::Text { max_len } | ColumnType::Blob { max_len } => u64::from(max_len),
        }
    }

    /// Checks the type's parameters: CHAR of 1..=255 bytes, VARCHAR, TEXT
    /// and BLOB of at least 1. `column` names the column in the error.
    pub fn validate(&self, column: &str) -> Result<()> {
        let ok = match *self {
            ColumnType::ShortInt { len, .. } => (1..=3).contains(&len),
            ColumnType::Int { .. } | ColumnType::BigInt { .. } => true,
            ColumnType::Char(n) | ColumnType::FixBinary(n) => (1..=255).contains(&n),
            // VARCHAR(0), as MySQL allows it: '' or NULL.
            ColumnType::VarChar(_) => true,
            ColumnType::Text { max_len } | ColumnType::Blob { max_len } => max_len >= 1,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "column '{column}': invalid type {}",
                self.sql_name()
            )))
        }
    }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sql_name())
    }
}

/// An SQL value.
///
/// Deliberately not `Ord`: a variant-then-value order would put every
/// `UInt` after every `Int`, which is not SQL's order. Values of one column
/// order as their stored forms do ([`to_stored`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A string or binary string: bytes in a single-byte character set.
    Bytes(Vec<u8>),
}

impl Value {
    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The bytes of a string value.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::UInt(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::UInt(u64::from(v))
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Bytes(v)
    }
}
impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Self {
        Value::Bytes(v.to_vec())
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Bytes(v.as_bytes().to_vec())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Prints the value as MySQL shows it in messages such as "Duplicate entry
/// '...'": numbers in decimal, strings as Latin-1 text.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(v) => write!(f, "{v}"),
            Value::UInt(v) => write!(f, "{v}"),
            Value::Bytes(b) => b.iter().try_for_each(|&c| write!(f, "{}", char::from(c))),
        }
    }
}

/// The stored form of `v` in a column of type `ty` named `column`.
///
/// Errors: [`Error::DataTooLong`] (MySQL 1406) for a string longer than the
/// column; [`Error::OutOfRange`] (MySQL 1264) for an integer outside the
/// type's range; [`Error::InvalidArgument`] for NULL (the caller decides
/// about NULLs) or a value of the wrong kind (an integer for a string column
/// or the reverse). `Int` is accepted by unsigned columns when non-negative
/// and `UInt` by signed ones when in range.
pub fn to_stored(ty: &ColumnType, v: &Value, column: &str) -> Result<Vec<u8>> {
    let capacity = match v {
        Value::Bytes(b) => b.len().max(usize::from(ty.fixed_len().unwrap_or(0))),
        _ => 8,
    };
    let mut out = Vec::with_capacity(capacity);
    write_stored(ty, v, column, &mut out)?;
    Ok(out)
}

/// [`to_stored`] appending to `out`, which is left unchanged on error.
pub fn write_stored(ty: &ColumnType, v: &Value, column: &str, out: &mut Vec<u8>) -> Result<()> {
    match *ty {
        ColumnType::ShortInt { len, unsigned } => {
            let bits = 8 * u32::from(len);
            let (min, max) = if unsigned {
                (0, (1i128 << bits) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            };
            let i = integer_in(ty, v, column, min, max)?;
            // The low `len` bytes, big-endian; a signed value's top bit
            // flipped, as row_mysql_store_col_in_innobase_format does.
            let be = (i as i64 as u64).to_be_bytes();
            let start = out.len();
            out.extend_from_slice(&be[8 - usize::from(len)..]);
            if !unsigned {
                out[start] ^= 0x80;
            }
        }
        ColumnType::Int { unsigned: false } => {
            let i = integer_in(ty, v, column, i128::from(i32::MIN), i128::from(i32::MAX))?;
            // In range, so the casts are exact; the XOR moves the sign bit
            // so that negative numbers sort first.
            out.extend_from_slice(&((i as i32 as u32) ^ 0x8000_0000).to_be_bytes());
        }
        ColumnType::Int { unsigned: true } => {
            let i = integer_in(ty, v, column, 0, i128::from(u32::MAX))?;
            out.extend_from_slice(&(i as u32).to_be_bytes());
        }
        ColumnType::BigInt { unsigned: false } => {
            let i = integer_in(ty, v, column, i128::from(i64::MIN), i128::from(i64::MAX))?;
            out.extend_from_slice(&((i as i64 as u64) ^ (1 << 63)).to_be_bytes());
        }
        ColumnType::BigInt { unsigned: true } => {
            let i = integer_in(ty, v, column, 0, i128::from(u64::MAX))?;
            out.extend_from_slice(&(i as u64).to_be_bytes());
        }
        ColumnType::Char(n) => {
            let b = string_in(ty, v, column, u64::from(n))?;
            out.extend_from_slice(b);
            out.resize(out.len() + (usize::from(n) - b.len()), b' ');
        }
        ColumnType::VarChar(_) | ColumnType::Text { .. } | ColumnType::Blob { .. } => {
            out.extend_from_slice(string_in(ty, v, column, ty.max_stored_len())?);
        }
        ColumnType::FixBinary(n) => {
            let b = string_in(ty, v, column, u64::from(n))?;
            if b.len() != usize::from(n) {
                return Err(Error::InvalidArgument(format!(
                    "column '{column}' ({}): {} bytes given",
                    ty.sql_name(),
                    b.len()
                )));
            }
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

/// The integer in `v`, if it is one and lies in `min..=max`.
fn integer_in(ty: &ColumnType, v: &Value, column: &str, min: i128, max: i128) -> Result<i128> {
    let i = match *v {
        Value::Int(i) => i128::from(i),
        Value::UInt(u) => i128::from(u),
        _ => return Err(wrong_kind(ty, v, column)),
    };
    if i < min || i > max {
        return Err(Error::OutOfRange {
            column: column.to_string(),
        });
    }
    Ok(i)
}

/// The bytes in `v`, if it is a string of at most `max_len` bytes.
fn string_in<'v>(ty: &ColumnType, v: &'v Value, column: &str, max_len: u64) -> Result<&'v [u8]> {
    let Value::Bytes(b) = v else {
        return Err(wrong_kind(ty, v, column));
    };
    if b.len() as u64 > max_len {
        return Err(Error::DataTooLong {
            column: column.to_string(),
        });
    }
    Ok(b)
}

fn wrong_kind(ty: &ColumnType, v: &Value, column: &str) -> Error {
    let what = match v {
        Value::Null => "NULL has no stored form (NULL handling is the caller's)",
        Value::Int(_) | Value::UInt(_) => "an integer cannot be stored in a string column",
        Value::Bytes(_) => "a string cannot be stored in an integer column",
    };
    Error::InvalidArgument(format!("column '{column}' ({}): {what}", ty.sql_name()))
}

/// The value a stored form holds. Integers come back in their canonical
/// variant: `Int` for signed types, `UInt` for unsigned ones. CHAR loses its
/// trailing spaces, as MySQL returns it.
///
/// A stored form of the wrong length for `ty` is [`Error::Corrupt`]: these
/// bytes come from disk.
pub fn from_stored(ty: &ColumnType, bytes: &[u8]) -> Result<Value> {
    let bad_len = || {
        corrupt(format!(
            "a stored {} cannot be {} bytes long",
            ty.sql_name(),
            bytes.len()
        ))
    };
    Ok(match *ty {
        ColumnType::ShortInt { len, unsigned } => {
            if bytes.len() != usize::from(len) {
                return Err(bad_len());
            }
            let raw = bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
            if unsigned {
                Value::UInt(raw)
            } else {
                let bits = 8 * u32::from(len);
                let biased = raw ^ (1 << (bits - 1));
                // Sign-extend from the type's width.
                let shift = 64 - bits;
                Value::Int(((biased << shift) as i64) >> shift)
            }
        }
        ColumnType::Int { unsigned } => {
            let raw = u32::from_be_bytes(bytes.try_into().map_err(|_| bad_len())?);
            if unsigned {
                Value::UInt(u64::from(raw))
            } else {
                Value::Int(i64::from((raw ^ 0x8000_0000) as i32))
            }
        }
        ColumnType::BigInt { unsigned } => {
            let raw = u64::from_be_bytes(bytes.try_into().map_err(|_| bad_len())?);
            if unsigned {
                Value::UInt(raw)
            } else {
                Value::Int((raw ^ (1 << 63)) as i64)
            }
        }
        ColumnType::Char(n) => {
            if bytes.len() != usize::from(n) {
                return Err(bad_len());
            }
            let end = bytes.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
            Value::Bytes(bytes[..end].to_vec())
        }
        ColumnType::VarChar(_) | ColumnType::Text { .. } | ColumnType::Blob { .. } => {
            if bytes.len() as u64 > ty.max_stored_len() {
                return Err(bad_len());
            }
            Value::Bytes(bytes.to_vec())
        }
        ColumnType::FixBinary(n) => {
            if bytes.len() != usize::from(n) {
                return Err(bad_len());
            }
            Value::Bytes(bytes.to_vec())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn code(r: Result<Vec<u8>>) -> Option<u16> {
        r.err().and_then(|e| e.mysql_code())
    }

    #[test]
    fn sql_names() {
        assert_eq!(ColumnType::INT.sql_name(), "int");
        assert_eq!(ColumnType::BIGINT_UNSIGNED.sql_name(), "bigint unsigned");
        assert_eq!(ColumnType::Char(120).sql_name(), "char(120)");
        assert_eq!(ColumnType::VarChar(255).sql_name(), "varchar(255)");
        assert_eq!(ColumnType::TEXT.sql_name(), "text");
        assert_eq!(ColumnType::TINYTEXT.sql_name(), "tinytext");
        assert_eq!(ColumnType::MEDIUMBLOB.sql_name(), "mediumblob");
        assert_eq!(ColumnType::LONGTEXT.to_string(), "longtext");
        assert!(ColumnType::Char(0).validate("c").is_err());
        assert!(ColumnType::Char(256).validate("c").is_err());
        assert!(ColumnType::VarChar(65_535).validate("c").is_ok());
    }

    #[test]
    fn too_long_is_1406() {
        let s = Value::from("abcd");
        assert_eq!(
            code(to_stored(&ColumnType::VarChar(3), &s, "c")),
            Some(1406)
        );
        assert_eq!(code(to_stored(&ColumnType::Char(3), &s, "c")), Some(1406));
        let t = ColumnType::Text { max_len: 3 };
        assert_eq!(code(to_stored(&t, &s, "c")), Some(1406));
        assert!(to_stored(&ColumnType::VarChar(4), &s, "c").is_ok());
        let err = to_stored(&ColumnType::VarChar(3), &s, "name").unwrap_err();
        assert_eq!(err.to_string(), "Data too long for column 'name' at row 1");
    }

    /// InnoDB's stored form of the short integers: big-endian in the
    /// type's bytes, a signed one's top bit flipped (-128 is 0x00, -1 is
    /// 0x7F, 0 is 0x80 in a TINYINT).
    #[test]
    fn short_integers_store_as_innodb_does() {
        let st = |ty: ColumnType, v: i64| to_stored(&ty, &Value::Int(v), "c").unwrap();
        assert_eq!(st(ColumnType::TINYINT, -128), vec![0x00]);
        assert_eq!(st(ColumnType::TINYINT, -1), vec![0x7F]);
        assert_eq!(st(ColumnType::TINYINT, 0), vec![0x80]);
        assert_eq!(st(ColumnType::TINYINT, 127), vec![0xFF]);
        assert_eq!(st(ColumnType::SMALLINT, 1), vec![0x80, 0x01]);
        assert_eq!(st(ColumnType::MEDIUMINT, -2), vec![0x7F, 0xFF, 0xFE]);
        let u = ColumnType::ShortInt {
            len: 3,
            unsigned: true,
        };
        assert_eq!(st(u, 0x0A0B0C), vec![0x0A, 0x0B, 0x0C]);
        assert!(
            from_stored(&ColumnType::SMALLINT, &[1]).is_err(),
            "a wrong length is corrupt"
        );
        assert_eq!(ColumnType::SMALLINT.sql_name(), "smallint");
        assert_eq!(u.sql_name(), "mediumint unsigned");
        assert!(ColumnType::ShortInt {
            len: 4,
            unsigned: false
        }
        .validate("c")
        .is_err());
    }

    #[test]
    fn out_of_range_is_1264() {
        let cases: &[(ColumnType, Value)] = &[
            (ColumnType::INT_UNSIGNED, Value::Int(-1)),
            (ColumnType::INT, Value::Int(1 << 31)),
            (ColumnType::INT, Value::Int(-(1 << 31) - 1)),
            (ColumnType::INT, Value::UInt(1 << 31)),
            (ColumnType::INT_UNSIGNED, Value::Int(1 << 32)),
            (ColumnType::BIGINT_UNSIGNED, Value::Int(-1)),
            (ColumnType::BIGINT, Value::UInt(1 << 63)),
            (ColumnType::TINYINT, Value::Int(128)),
            (ColumnType::TINYINT, Value::Int(-129)),
            (
                ColumnType::ShortInt {
                    len: 1,
                    unsigned: true,
                },
                Value::Int(256),
            ),
            (ColumnType::SMALLINT, Value::Int(1 << 15)),
            (ColumnType::MEDIUMINT, Value::Int(-(1 << 23) - 1)),
        ];
        for (ty, v) in cases {
            assert_eq!(code(to_stored(ty, v, "c")), Some(1264), "{v:?} into {ty}");
        }
        let ok: &[(ColumnType, Value)] = &[
            (ColumnType::INT_UNSIGNED, Value::Int(0)),
            (ColumnType::INT_UNSIGNED, Value::Int(u32::MAX.into())),
            (ColumnType::INT, Value::Int(i32::MIN.into())),
            (ColumnType::INT, Value::UInt(i32::MAX as u64)),
            (ColumnType::BIGINT, Value::Int(i64::MIN)),
            (ColumnType::BIGINT, Value::UInt(i64::MAX as u64)),
            (ColumnType::BIGINT_UNSIGNED, Value::UInt(u64::MAX)),
        ];
        for (ty, v) in ok {
            assert!(to_stored(ty, v, "c").is_ok(), "{v:?} into {ty}");
        }
    }

    #[test]
    fn wrong_kinds_and_null_are_invalid_arguments() {
        let cases: &[(ColumnType, Value)] = &[
            (ColumnType::INT, Value::from("1")),
            (ColumnType::VarChar(5), Value::Int(1)),
            (ColumnType::Char(5), Value::UInt(1)),
            (ColumnType::INT, Value::Null),
            (ColumnType::BLOB, Value::Null),
        ];
        for (ty, v) in cases {
            let err = to_stored(ty, v, "c").unwrap_err();
            assert!(
                matches!(err, Error::InvalidArgument(_)),
                "{v:?} into {ty}: {err}"
            );
        }
    }

    #[test]
    fn write_stored_leaves_output_alone_on_error() {
        let mut out = b"xy".to_vec();
        assert!(write_stored(&ColumnType::Char(2), &Value::from("abc"), "c", &mut out).is_err());
        assert_eq!(out, b"xy");
        write_stored(&ColumnType::Char(4), &Value::from("ab"), "c", &mut out).unwrap();
        assert_eq!(out, b"xyab  ");
    }

    #[test]
    fn char_pads_and_strips() {
        let ty = ColumnType::Char(5);
        let stored = to_stored(&ty, &Value::from("ab "), "c").unwrap();
        assert_eq!(stored, b"ab   ");
        assert_eq!(from_stored(&ty, &stored).unwrap(), Value::from("ab"));
        assert!(from_stored(&ty, b"abc").unwrap_err().is_corruption());
        assert!(from_stored(&ColumnType::INT, b"abc")
            .unwrap_err()
            .is_corruption());
        assert!(from_stored(&ColumnType::VarChar(2), b"abc").is_err());
    }

    fn int_type() -> impl Strategy<Value = (ColumnType, i128, i128)> {
        prop_oneof![
            Just((ColumnType::TINYINT, -128, 127)),
            Just((
                ColumnType::ShortInt {
                    len: 1,
                    unsigned: true
                },
                0,
                255
            )),
            Just((ColumnType::SMALLINT, -32_768, 32_767)),
            Just((ColumnType::MEDIUMINT, -8_388_608, 8_388_607)),
            Just((
                ColumnType::ShortInt {
                    len: 3,
                    unsigned: true
                },
                0,
                16_777_215
            )),
            Just((ColumnType::INT, i32::MIN.into(), i32::MAX.into())),
            Just((ColumnType::INT_UNSIGNED, 0, u32::MAX.into())),
            Just((ColumnType::BIGINT, i64::MIN.into(), i64::MAX.into())),
            Just((ColumnType::BIGINT_UNSIGNED, 0, u64::MAX.into())),
        ]
    }

    fn value_of(i: i128) -> Value {
        match i64::try_from(i) {
            Ok(v) => Value::Int(v),
            Err(_) => Value::UInt(i as u64),
        }
    }

    proptest! {
        /// Stored integers round-trip and sort as the numbers do.
        #[test]
        fn integers_round_trip_and_sort(
            (ty, min, max) in int_type(),
            a in any::<i128>(),
            b in any::<i128>(),
        ) {
            let span = max - min + 1;
            let (a, b) = (min + a.rem_euclid(span), min + b.rem_euclid(span));
            let sa = to_stored(&ty, &value_of(a), "c").unwrap();
            let sb = to_stored(&ty, &value_of(b), "c").unwrap();
            prop_assert_eq!(sa.cmp(&sb), a.cmp(&b));
            let back = match from_stored(&ty, &sa).unwrap() {
                Value::Int(v) => i128::from(v),
                Value::UInt(v) => i128::from(v),
                other => panic!("{other:?}"),
            };
            prop_assert_eq!(back, a);
        }

        /// Strings round-trip (CHAR up to trailing spaces) and CHAR sorts as
        /// its padded form.
        #[test]
        fn strings_round_trip(s in proptest::collection::vec(any::<u8>(), 0..40)) {
            for ty in [ColumnType::VarChar(40), ColumnType::BLOB, ColumnType::Char(40)] {
                let stored = to_stored(&ty, &Value::Bytes(s.clone()), "c").unwrap();
                let mut expect = s.clone();
                if let ColumnType::Char(_) = ty {
                    prop_assert_eq!(stored.len(), 40);
                    while expect.last() == Some(&b' ') {
                        expect.pop();
                    }
                }
                prop_assert_eq!(from_stored(&ty, &stored).unwrap(), Value::Bytes(expect));
            }
        }
    }
}
