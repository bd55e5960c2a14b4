//! Values as the server layer computes with them: the engine's integers
//! and strings, plus the exact decimals that `/` and AVG give. Comparison
//! and arithmetic follow MySQL's rules for these types (`Item_func`,
//! `Arg_comparator`): numbers compare as numbers, a string against a
//! number is read as a number, strings compare byte by byte with trailing
//! spaces ignored. (MySQL's latin1_swedish_ci also ignores case; the
//! engine's indexes order bytes, and the server must agree with them.)

use super::error::SqlError;
use crate::record::collation::Collation;
use crate::record::Value;
use std::cmp::Ordering;

/// A value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Datum {
    /// NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer above `i64::MAX` or from an unsigned column.
    UInt(u64),
    /// An exact decimal: `value / 10^scale`.
    Dec(i128, u8),
    /// A string.
    Str(Vec<u8>),
    /// A FLOAT's or DOUBLE's value, as its double's bits, and how MySQL
    /// prints it. It compares as a number.
    Real(u64, RealFmt),
    /// A hexadecimal literal (`0x616263`, `X'616263'`): a binary string,
    /// which in a numeric context (arithmetic, an integer column, a
    /// comparison with a number) reads as the unsigned integer its last
    /// eight bytes spell, big-endian (`Item_hex_string::val_int`).
    Hex(Vec<u8>),
}

/// How a FLOAT or DOUBLE prints (`Field_float::val_str`,
/// `Field_double::val_str`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RealFmt {
    /// C's `%g` with this many significant digits: 6 for FLOAT
    /// (FLT_DIG), 15 for DOUBLE (DBL_DIG).
    G(u8),
    /// This many digits after the point: FLOAT(M,D), DOUBLE(M,D).
    Fixed(u8),
}

impl Datum {
    /// A FLOAT's or DOUBLE's value.
    pub fn real(x: f64, fmt: RealFmt) -> Datum {
        Datum::Real(x.to_bits(), fmt)
    }

    /// From an engine value.
    pub fn from_value(v: Value) -> Datum {
        match v {
            Value::Null => Datum::Null,
            Value::Int(i) => Datum::Int(i),
            Value::UInt(u) => Datum::UInt(u),
            Value::Bytes(b) => Datum::Str(b),
        }
    }

    /// Whether this is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }

    /// A string datum.
    pub fn str(s: &str) -> Datum {
        Datum::Str(s.as_bytes().to_vec())
    }

    /// The value as MySQL prints it (NULL as `NULL`).
    pub fn render(&self) -> String {
        match self {
            Datum::Null => "NULL".into(),
            Datum::Int(i) => i.to_string(),
            Datum::UInt(u) => u.to_string(),
            Datum::Dec(v, s) => render_dec(*v, *s),
            Datum::Real(bits, RealFmt::G(p)) => {
                super::field::format_g(f64::from_bits(*bits), usize::from(*p))
            }
            Datum::Real(bits, RealFmt::Fixed(d)) => {
                format!("{:.*}", usize::from(*d), f64::from_bits(*bits))
            }
            Datum::Str(b) | Datum::Hex(b) => String::from_utf8_lossy(b).into_owned(),
        }
    }

    /// The bytes a string column stores for this value: a string's own
    /// bytes, a number's digits.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Datum::Str(b) | Datum::Hex(b) => b.clone(),
            other => other.render().into_bytes(),
        }
    }

    /// As an exact number scaled to `scale` digits, if it is a number or
    /// a string that starts with one (MySQL reads `'12abc'` as 12).
    fn as_scaled(&self, scale: u8) -> Option<i128> {
        let (v, s) = match self {
            Datum::Null => return None,
            Datum::Int(i) => (*i as i128, 0),
            Datum::UInt(u) => (*u as i128, 0),
            Datum::Dec(v, s) => (*v, *s),
            Datum::Str(b) => parse_number_prefix(b),
            Datum::Hex(b) => (hex_number(b), 0),
            // Rounded half away from zero at the scale (the cast
            // saturates beyond i128).
            Datum::Real(bits, _) => {
                let x = f64::from_bits(*bits) * 10f64.powi(i32::from(scale));
                return Some(x.round() as i128);
            }
        };
        Some(rescale(v, s, scale))
    }

    /// As a double, if it is a number or a string that starts with one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Datum::Null => None,
            Datum::Real(bits, _) => Some(f64::from_bits(*bits)),
            Datum::Int(i) => Some(*i as f64),
            Datum::UInt(u) => Some(*u as f64),
            Datum::Dec(v, s) => Some(*v as f64 / 10f64.powi(i32::from(*s))),
            Datum::Hex(b) => Some(hex_number(b) as f64),
            Datum::Str(b) => {
                let t = String::from_utf8_lossy(b);
                let t = t.trim_start();
                let end = (0..=t.len().min(64))
                    .rev()
                    .find(|&i| t.is_char_boundary(i) && t[..i].parse::<f64>().is_ok())
                    .unwrap_or(0);
                Some(
                    t[..end]
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .unwrap_or(0.0),
                )
            }
        }
    }

    /// The scale this value has as a number.
    fn scale(&self) -> u8 {
        match self {
            Datum::Dec(_, s) => *s,
            Datum::Str(b) => parse_number_prefix(b).1,
            _ => 0,
        }
    }

    /// Truth as a condition: NULL is unknown (`None`), a number is true
    /// unless zero, a string by its number.
    pub fn truth(&self) -> Option<bool> {
        if self.is_null() {
            return None;
        }
        Some(self.as_scaled(self.scale()).unwrap_or(0) != 0)
    }

    /// As an integer (for LIMIT and the like).
    pub fn as_i128(&self) -> Option<i128> {
        self.as_scaled(0)
    }

    /// MySQL's comparison; `None` if either side is NULL.
    pub fn compare(&self, other: &Datum) -> Option<Ordering> {
        match (self, other) {
            (Datum::Null, _) | (_, Datum::Null) => None,
            (Datum::Str(a), Datum::Str(b)) => Some(cmp_pad_space(a, b)),
            // A hex literal beside a string is a (binary) string.
            (Datum::Hex(a), Datum::Str(b) | Datum::Hex(b)) | (Datum::Str(a), Datum::Hex(b)) => {
                Some(a.cmp(b))
            }
            // A FLOAT or DOUBLE beside anything compares as doubles.
            (Datum::Real(..), _) | (_, Datum::Real(..)) => {
                Some(self.as_f64()?.total_cmp(&other.as_f64()?))
            }
            _ => {
                let s = self.scale().max(other.scale());
                Some(self.as_scaled(s)?.cmp(&other.as_scaled(s)?))
            }
        }
    }

    /// MySQL's comparison with strings compared by `coll`; `None` if
    /// either side is NULL.
    pub fn compare_in(&self, other: &Datum, coll: Collation) -> Option<Ordering> {
        match (self, other) {
            // A literal yields to the column's collation (MySQL's
            // coercibility: a literal 4, a column 2).
            (Datum::Str(a) | Datum::Hex(a), Datum::Str(b) | Datum::Hex(b)) => {
                Some(coll.compare(a, b))
            }
            _ => self.compare(other),
        }
    }

    /// The ordering ORDER BY and DISTINCT use: NULL first.
    pub fn sort_cmp(&self, other: &Datum) -> Ordering {
        self.sort_cmp_in(other, Collation::Latin1Bin)
    }

    /// [`Datum::sort_cmp`] with strings compared by `coll`: the order of
    /// ORDER BY, GROUP BY and DISTINCT on an expression of that collation.
    pub fn sort_cmp_in(&self, other: &Datum, coll: Collation) -> Ordering {
        match (self.is_null(), other.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => self.compare_in(other, coll).unwrap_or(Ordering::Equal),
        }
    }

    /// The engine value for a column, or the conversion error.
    pub fn to_value(&self) -> Value {
        match self {
            Datum::Null => Value::Null,
            Datum::Int(i) => Value::Int(*i),
            Datum::UInt(u) => Value::UInt(*u),
            Datum::Dec(v, s) => {
                // Rounded half away from zero, as MySQL stores a decimal in
                // an integer column.
                let p = 10i128.pow(u32::from(*s));
                let r = (v.abs() + p / 2) / p * v.signum();
                int_datum(r).map_or(Value::Bytes(render_dec(*v, *s).into_bytes()), |d| match d {
                    Datum::Int(i) => Value::Int(i),
                    Datum::UInt(u) => Value::UInt(u),
                    _ => unreachable!("int_datum gives integers"),
                })
            }
            Datum::Str(b) | Datum::Hex(b) => Value::Bytes(b.clone()),
            Datum::Real(..) => Value::Bytes(self.render().into_bytes()),
        }
    }
}

/// The unsigned integer a hex literal spells: its last eight bytes,
/// big-endian.
fn hex_number(b: &[u8]) -> i128 {
    let tail = &b[b.len().saturating_sub(8)..];
    i128::from(tail.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

/// An integer result as a datum, or `None` outside `BIGINT [UNSIGNED]`.
pub fn int_datum(v: i128) -> Option<Datum> {
    if let Ok(i) = i64::try_from(v) {
        Some(Datum::Int(i))
    } else {
        u64::try_from(v).ok().map(Datum::UInt)
    }
}

fn render_dec(v: i128, s: u8) -> String {
    if s == 0 {
        return v.to_string();
    }
    let p = 10u128.pow(u32::from(s));
    let a = v.unsigned_abs();
    format!(
        "{}{}.{:0width$}",
        if v < 0 { "-" } else { "" },
        a / p,
        a % p,
        width = s as usize
    )
}

fn rescale(v: i128, from: u8, to: u8) -> i128 {
    match from.cmp(&to) {
        Ordering::Equal => v,
        Ordering::Less => v.saturating_mul(10i128.pow(u32::from(to - from))),
        Ordering::Greater => v / 10i128.pow(u32::from(from - to)),
    }
}

/// The number a string starts with (leading spaces, sign, digits, a
/// fraction), as value and scale; 0 if none. At most 30 digits are kept.
fn parse_number_prefix(b: &[u8]) -> (i128, u8) {
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i128 = 0;
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        if digits < 30 {
            v = v * 10 + i128::from(b[i] - b'0');
            if v != 0 {
                digits += 1;
            }
        }
        i += 1;
    }
    let mut scale = 0u8;
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() && scale < 8 && digits < 30 {
            v = v * 10 + i128::from(b[i] - b'0');
            scale += 1;
            digits += 1;
            i += 1;
        }
    }
    (if neg { -v } else { v }, scale)
}

/// Byte comparison with trailing spaces ignored (PAD SPACE).
fn cmp_pad_space(a: &[u8], b: &[u8]) -> Ordering {
    let trim = |x: &[u8]| x.len() - x.iter().rev().take_while(|&&c| c == b' ').count();
    a[..trim(a)].cmp(&b[..trim(b)])
}

/// Arithmetic: `+ - * / DIV %` with MySQL's result types (integers stay
/// integers, `/` gives a decimal of four more digits, overflow is error
/// 1690), NULL in, NULL out; division by zero is NULL.
pub fn arith(op: super::ast::BinOp, a: &Datum, b: &Datum) -> Result<Datum, SqlError> {
    use super::ast::BinOp::*;
    if a.is_null() || b.is_null() {
        return Ok(Datum::Null);
    }
    let out_of_range = || SqlError::new(1690, "BIGINT value is out of range");
    if matches!(a, Datum::Real(..)) || matches!(b, Datum::Real(..)) {
        // With a FLOAT or DOUBLE the arithmetic is a double's.
        let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
        let r = match op {
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div if y == 0.0 => return Ok(Datum::Null),
            Div => x / y,
            IntDiv if y == 0.0 => return Ok(Datum::Null),
            IntDiv => return int_datum((x / y).trunc() as i128).ok_or_else(out_of_range),
            Mod if y == 0.0 => return Ok(Datum::Null),
            Mod => x % y,
            _ => unreachable!("not an arithmetic operator"),
        };
        return if r.is_finite() {
            Ok(Datum::real(r, RealFmt::G(15)))
        } else {
            Err(SqlError::new(1690, "DOUBLE value is out of range"))
        };
    }
    let s = a.scale().max(b.scale());
    let x = a.as_scaled(s).unwrap_or(0);
    let y = b.as_scaled(s).unwrap_or(0);
    let finish = |v: i128, scale: u8| -> Result<Datum, SqlError> {
        if scale == 0 {
            int_datum(v).ok_or_else(out_of_range)
        } else if v.unsigned_abs() < 10u128.pow(30) {
            Ok(Datum::Dec(v, scale))
        } else {
            Err(out_of_range())
        }
    };
    match op {
        Add => finish(x.checked_add(y).ok_or_else(out_of_range)?, s),
        Sub => finish(x.checked_sub(y).ok_or_else(out_of_range)?, s),
        Mul => finish(x.checked_mul(y).ok_or_else(out_of_range)?, s * 2),
        Div => {
            if y == 0 {
                return Ok(Datum::Null);
            }
            let scale = a.scale() + 4;
            let num = x
                .checked_mul(10i128.pow(u32::from(scale)))
                .ok_or_else(out_of_range)?;
            // Rounded half away from zero at the last digit.
            let q2 = num.checked_mul(2).ok_or_else(out_of_range)? / y;
            let q = (q2 + q2.signum()) / 2;
            finish(q, scale)
        }
        IntDiv => {
            if y == 0 {
                return Ok(Datum::Null);
            }
            finish(x / y, 0)
        }
        Mod => {
            if y == 0 {
                return Ok(Datum::Null);
            }
            finish(x % y, s)
        }
        _ => unreachable!("not an arithmetic operator"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::ast::BinOp;
    use super::*;

    #[test]
    fn comparisons_follow_mysql() {
        assert_eq!(
            Datum::Int(2).compare(&Datum::str("10")),
            Some(Ordering::Less)
        );
        assert_eq!(
            Datum::str("2").compare(&Datum::str("10")),
            Some(Ordering::Greater)
        );
        assert_eq!(
            Datum::str("ab  ").compare(&Datum::str("ab")),
            Some(Ordering::Equal)
        );
        assert_eq!(
            Datum::UInt(u64::MAX).compare(&Datum::Int(-1)),
            Some(Ordering::Greater)
        );
        assert_eq!(Datum::Null.compare(&Datum::Int(1)), None);
        assert_eq!(
            Datum::Dec(15, 1).compare(&Datum::Int(1)),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn arithmetic_types_and_overflow() {
        assert_eq!(
            arith(BinOp::Add, &Datum::Int(1), &Datum::Int(2)).unwrap(),
            Datum::Int(3)
        );
        assert_eq!(
            arith(BinOp::Div, &Datum::Int(1), &Datum::Int(3))
                .unwrap()
                .render(),
            "0.3333"
        );
        assert_eq!(
            arith(BinOp::Div, &Datum::Int(2), &Datum::Int(3))
                .unwrap()
                .render(),
            "0.6667"
        );
        assert_eq!(
            arith(BinOp::Div, &Datum::Int(1), &Datum::Int(0)).unwrap(),
            Datum::Null
        );
        assert_eq!(
            arith(BinOp::Mod, &Datum::Int(7), &Datum::Int(3)).unwrap(),
            Datum::Int(1)
        );
        assert_eq!(
            arith(BinOp::IntDiv, &Datum::Int(7), &Datum::Int(2)).unwrap(),
            Datum::Int(3)
        );
        assert_eq!(
            arith(BinOp::Sub, &Datum::Int(-3), &Datum::Int(4))
                .unwrap()
                .render(),
            "-7"
        );
        assert_eq!(
            arith(BinOp::Add, &Datum::UInt(u64::MAX), &Datum::Int(1))
                .unwrap_err()
                .code,
            1690
        );
        assert_eq!(
            arith(BinOp::Add, &Datum::Null, &Datum::Int(1)).unwrap(),
            Datum::Null
        );
    }
}
