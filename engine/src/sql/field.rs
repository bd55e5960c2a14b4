//! The server's column types that InnoDB sees only as integers or fixed
//! bytes: DATE, TIME, DATETIME, TIMESTAMP, YEAR, ENUM, SET, DECIMAL, FLOAT
//! and DOUBLE. MySQL's `Field_*` classes (`sql/field.cc`) turn a value
//! into the bytes the engine keeps and back; InnoDB stores what they give
//! (`get_innobase_type_from_mysql_type`): the temporal types, ENUM and SET
//! as DATA_INT of the type's length, DECIMAL as DATA_FIXBINARY in the
//! memcomparable `decimal2bin` form (`strings/decimal.c`), FLOAT and DOUBLE
//! as DATA_FLOAT and DATA_DOUBLE.
//!
//! ```text
//! type        engine type                   value
//! ----        -----------                   -----
//! DATE        3-byte signed integer         day + 32 * month + 512 * year (Field_newdate)
//! TIME        3-byte signed integer         ±(hh * 10000 + mm * 100 + ss)  (Field_time)
//! DATETIME    8-byte signed integer         YYYYMMDDhhmmss                 (Field_datetime)
//! TIMESTAMP   4-byte unsigned integer       seconds since 1970-01-01 UTC   (Field_timestamp)
//! YEAR        1-byte unsigned integer       year - 1900, 0 for 0000        (Field_year)
//! ENUM        1- or 2-byte unsigned         member number, 0 for ''        (Field_enum)
//! SET         1, 2, 3, 4 or 8 bytes         a bit per member               (Field_set)
//! DECIMAL     FixBinary(decimal_bin_size)   decimal2bin                    (Field_new_decimal)
//! FLOAT       FixBinary(4)                  order-preserving IEEE bits
//! DOUBLE      FixBinary(8)                  order-preserving IEEE bits
//! ```
//!
//! One difference from InnoDB, deliberate: InnoDB keeps a FLOAT or DOUBLE
//! in the machine's byte order and compares the two fields as numbers
//! (`cmp_data_data` for DATA_FLOAT/DATA_DOUBLE); the engine here compares
//! fixed fields as bytes, so the bits are kept big-endian with the sign
//! bit flipped (a negative number's bits all inverted), which orders as
//! the numbers do, and -0 is kept as 0 so that the two are one key.
//!
//! A value that does not fit is an error (strict mode), or with
//! `lenient` (INSERT IGNORE) the value MySQL stores instead and its
//! warning: the zero date for a date it cannot read, the type's limit for
//! a number beyond it, '' for an ENUM member it does not have.
//!
//! TIMESTAMP's time zone is UTC (MySQL's `time_zone=SYSTEM` on a machine
//! set to UTC); the current time is the server's clock ([`EPOCH`]).

use super::ast::SqlType;
use super::error::{SqlError, Warning};
use super::value::{Datum, RealFmt};
use crate::record::{ColumnType, Value};

/// What the server's clock reads at the engine clock's origin: 2010-01-01
/// 00:00:00 UTC. CURRENT_TIMESTAMP is this plus the engine clock's
/// seconds, so a simulated run's timestamps are a function of its seed.
pub const EPOCH: u64 = 1_262_304_000;

/// Whether the type is one of this module's.
pub fn is_field_type(ty: SqlType) -> bool {
    !matches!(
        ty,
        SqlType::Integer { .. }
            | SqlType::Char(_)
            | SqlType::VarChar(_)
            | SqlType::Text(_)
            | SqlType::Blob(_)
    )
}

/// Bytes of a DECIMAL's `decimal2bin` form for `digits` digits.
fn dig_bytes(digits: u32) -> u32 {
    const DIG2BYTES: [u32; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
    digits / 9 * 4 + DIG2BYTES[(digits % 9) as usize]
}

/// `decimal_bin_size(precision, scale)`.
pub fn decimal_bin_size(precision: u8, scale: u8) -> u16 {
    (dig_bytes(u32::from(precision - scale)) + dig_bytes(u32::from(scale))) as u16
}

/// SET's stored bytes: 1, 2, 3, 4 or 8 (`get_set_pack_length`).
pub(crate) fn set_len(members: usize) -> u8 {
    match members.div_ceil(8) {
        0 | 1 => 1,
        n @ 2..=4 => n as u8,
        _ => 8,
    }
}

fn unsigned_int(len: u8) -> ColumnType {
    match len {
        1..=3 => ColumnType::ShortInt {
            len,
            unsigned: true,
        },
        4 => ColumnType::INT_UNSIGNED,
        _ => ColumnType::BIGINT_UNSIGNED,
    }
}

/// The engine's type for a column of this module's types.
pub fn engine_type(ty: SqlType) -> ColumnType {
    let signed3 = ColumnType::ShortInt {
        len: 3,
        unsigned: false,
    };
    match ty {
        SqlType::Date | SqlType::Time => signed3,
        SqlType::DateTime => ColumnType::BIGINT,
        SqlType::Timestamp => ColumnType::INT_UNSIGNED,
        SqlType::Year => unsigned_int(1),
        SqlType::Enum(n) => unsigned_int(if n > 255 { 2 } else { 1 }),
        SqlType::Set(n) => unsigned_int(set_len(usize::from(n))),
        SqlType::Decimal { precision, scale } => {
            ColumnType::FixBinary(decimal_bin_size(precision, scale))
        }
        SqlType::Float { double: false, .. } => ColumnType::FixBinary(4),
        SqlType::Float { double: true, .. } => ColumnType::FixBinary(8),
        SqlType::Integer { .. }
        | SqlType::Char(_)
        | SqlType::VarChar(_)
        | SqlType::Text(_)
        | SqlType::Blob(_) => unreachable!("not a field type: {ty:?}"),
    }
}

/// Bytes the type counts toward MySQL's 65535-byte row.
pub fn row_bytes(ty: SqlType) -> u64 {
    u64::from(engine_type(ty).fixed_len().unwrap_or(8))
}

/// The type as SHOW CREATE TABLE writes it.
pub fn render(ty: SqlType, members: &[Vec<u8>]) -> String {
    let list = || {
        members
            .iter()
            .map(|m| format!("'{}'", String::from_utf8_lossy(m).replace('\'', "''")))
            .collect::<Vec<_>>()
            .join(",")
    };
    match ty {
        SqlType::Date => "date".into(),
        SqlType::Time => "time".into(),
        SqlType::DateTime => "datetime".into(),
        SqlType::Timestamp => "timestamp".into(),
        SqlType::Year => "year(4)".into(),
        SqlType::Enum(_) => format!("enum({})", list()),
        SqlType::Set(_) => format!("set({})", list()),
        SqlType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        SqlType::Float { double, digits } => {
            let name = if double { "double" } else { "float" };
            match digits {
                Some((m, d)) => format!("{name}({m},{d})"),
                None => name.into(),
            }
        }
        _ => unreachable!("not a field type: {ty:?}"),
    }
}

/// A value's text as the conversions read it.
fn text_of(d: &Datum) -> String {
    match d {
        Datum::Str(b) | Datum::Hex(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.render(),
    }
}

fn truncated(column: &str) -> SqlError {
    SqlError::new(
        1265,
        format!("Data truncated for column '{column}' at row 1"),
    )
}

fn out_of_range(column: &str) -> SqlError {
    SqlError::new(
        1264,
        format!("Out of range value for column '{column}' at row 1"),
    )
}

fn incorrect(kind: &str, text: &str, column: &str) -> SqlError {
    SqlError::new(
        1292,
        format!("Incorrect {kind} value: '{text}' for column '{column}' at row 1"),
    )
}

/// The error, or under `lenient` the warning it becomes and `instead`.
fn fail_or(
    lenient: bool,
    warnings: &mut Vec<Warning>,
    e: SqlError,
    instead: Datum,
) -> Result<Datum, SqlError> {
    if lenient {
        warnings.push(Warning::warn(e.code, e.message));
        Ok(instead)
    } else {
        Err(e)
    }
}

/// Converts `d` to the engine's form for a column of `ty` (a field type)
/// named `column`, ENUM and SET with their `members`.
pub fn store(
    ty: SqlType,
    members: &[Vec<u8>],
    d: &Datum,
    column: &str,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Datum, SqlError> {
    if d.is_null() {
        return Ok(Datum::Null);
    }
    match ty {
        SqlType::Date | SqlType::DateTime | SqlType::Timestamp => {
            let text = text_of(d);
            let (kind, zero) = match ty {
                SqlType::Date => ("date", Datum::Int(0)),
                SqlType::DateTime => ("datetime", Datum::Int(0)),
                _ => ("datetime", Datum::UInt(0)),
            };
            let Some(t) = parse_datetime(&text, matches!(d, Datum::Str(_))) else {
                return fail_or(
                    lenient,
                    warnings,
                    if lenient {
                        truncated(column)
                    } else {
                        incorrect(kind, &text, column)
                    },
                    zero,
                );
            };
            Ok(match ty {
                SqlType::Date => Datum::Int(t.day + 32 * t.month + 512 * t.year),
                SqlType::DateTime => Datum::Int(t.packed()),
                _ => match t.epoch_seconds() {
                    Some(s) => Datum::UInt(s),
                    None => return fail_or(lenient, warnings, out_of_range(column), zero),
                },
            })
        }
        SqlType::Time => {
            let text = text_of(d);
            match parse_time(&text) {
                Some(v) if v.abs() <= 8_385_959 => Ok(Datum::Int(v)),
                Some(v) => fail_or(
                    lenient,
                    warnings,
                    out_of_range(column),
                    Datum::Int(8_385_959 * v.signum()),
                ),
                None => fail_or(
                    lenient,
                    warnings,
                    if lenient {
                        truncated(column)
                    } else {
                        incorrect("time", &text, column)
                    },
                    Datum::Int(0),
                ),
            }
        }
        SqlType::Year => {
            let text = text_of(d);
            let t = text.trim();
            let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
            let Ok(n) = digits.parse::<i64>() else {
                return fail_or(lenient, warnings, out_of_range(column), Datum::UInt(0));
            };
            // Field_year::store: a string of one or two digits, or a
            // number from 1 to 99, is a year of 1970..2069; the number 0 is
            // 0000, the string '0' or '00' the year 2000.
            let string = matches!(d, Datum::Str(_));
            let y = match n {
                0 if string && !digits.is_empty() => 2000,
                0 => return Ok(Datum::UInt(0)),
                1..=69 => 2000 + n,
                70..=99 => 1900 + n,
                _ => n,
            };
            if !(1901..=2155).contains(&y) {
                return fail_or(lenient, warnings, out_of_range(column), Datum::UInt(0));
            }
            Ok(Datum::UInt((y - 1900) as u64))
        }
        SqlType::Enum(_) => {
            let pos = match d {
                Datum::Str(b) => members
                    .iter()
                    .position(|m| same_member(m, b))
                    .map(|p| p as u64 + 1)
                    .or_else(|| {
                        // A number in a string names a member by position.
                        std::str::from_utf8(b).ok()?.trim().parse::<u64>().ok()
                    }),
                other => other.as_i128().and_then(|v| u64::try_from(v).ok()),
            };
            match pos {
                Some(p) if p >= 1 && p <= members.len() as u64 => Ok(Datum::UInt(p)),
                _ => fail_or(lenient, warnings, truncated(column), Datum::UInt(0)),
            }
        }
        SqlType::Set(_) => {
            let all = if members.len() >= 64 {
                u64::MAX
            } else {
                (1u64 << members.len()) - 1
            };
            match d {
                Datum::Str(b) if !b.is_empty() => {
                    let mut bits = 0u64;
                    let mut unknown = false;
                    for part in b.split(|&c| c == b',') {
                        match members.iter().position(|m| same_member(m, part)) {
                            Some(p) => bits |= 1 << p,
                            None => unknown = true,
                        }
                    }
                    if unknown {
                        // Field_set::store: a string of digits that names
                        // no member is the bits themselves.
                        if bits == 0 && b.len() < 22 {
                            if let Some(n) = std::str::from_utf8(b)
                                .ok()
                                .and_then(|s| s.parse::<u64>().ok())
                            {
                                if n <= all {
                                    return Ok(Datum::UInt(n));
                                }
                            }
                            return fail_or(lenient, warnings, truncated(column), Datum::UInt(0));
                        }
                        return fail_or(lenient, warnings, truncated(column), Datum::UInt(bits));
                    }
                    Ok(Datum::UInt(bits))
                }
                Datum::Str(_) => Ok(Datum::UInt(0)),
                other => {
                    let n = other.as_i128().unwrap_or(0);
                    match u64::try_from(n) {
                        Ok(n) if n <= all => Ok(Datum::UInt(n)),
                        _ => fail_or(
                            lenient,
                            warnings,
                            truncated(column),
                            Datum::UInt((n as u64) & all),
                        ),
                    }
                }
            }
        }
        SqlType::Decimal { precision, scale } => {
            store_decimal(precision, scale, d, column, lenient, warnings)
        }
        SqlType::Float { double, digits } => {
            let (x, clean) = float_of(d);
            let mut err = if clean { None } else { Some(truncated(column)) };
            let mut x = x;
            let max = match digits {
                Some((m, dec)) => {
                    let p = 10f64.powi(i32::from(dec));
                    x = (x * p).round() / p;
                    10f64.powi(i32::from(m) - i32::from(dec)) - 1.0 / p
                }
                None if double => f64::MAX,
                None => f64::from(f32::MAX),
            };
            if x.is_nan() {
                x = 0.0;
            }
            if x.abs() > max {
                x = max.copysign(x);
                err = Some(out_of_range(column));
            }
            let stored = float_bytes(x, double);
            match err {
                Some(e) => fail_or(lenient, warnings, e, stored),
                None => Ok(stored),
            }
        }
        _ => unreachable!("not a field type: {ty:?}"),
    }
}

/// Whether `given` names member `m`: case and trailing spaces aside, as
/// ENUM and SET compare in latin1_swedish_ci (`find_type2`).
fn same_member(m: &[u8], given: &[u8]) -> bool {
    crate::record::Collation::Latin1SwedishCi
        .compare(m, given)
        .is_eq()
}

/// The engine's value read back as the server shows it.
pub fn read(ty: SqlType, members: &[Vec<u8>], v: Value) -> Datum {
    let int = match &v {
        Value::Null => return Datum::Null,
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::Bytes(_) => 0,
    };
    match ty {
        SqlType::Date => {
            let (y, m, d) = (int / 512, int / 32 % 16, int % 32);
            Datum::str(&format!("{y:04}-{m:02}-{d:02}"))
        }
        SqlType::DateTime => Datum::str(&render_packed(int as i64)),
        SqlType::Timestamp => Datum::str(&if int == 0 {
            "0000-00-00 00:00:00".to_string()
        } else {
            render_packed(packed_of_epoch(int as u64))
        }),
        SqlType::Time => {
            let a = int.abs();
            Datum::str(&format!(
                "{}{:02}:{:02}:{:02}",
                if int < 0 { "-" } else { "" },
                a / 10000,
                a / 100 % 100,
                a % 100
            ))
        }
        SqlType::Year => Datum::str(&if int == 0 {
            "0000".to_string()
        } else {
            (1900 + int).to_string()
        }),
        SqlType::Enum(_) => Datum::Str(
            usize::try_from(int - 1)
                .ok()
                .and_then(|i| members.get(i))
                .cloned()
                .unwrap_or_default(),
        ),
        SqlType::Set(_) => {
            let mut out = Vec::new();
            for (i, m) in members.iter().enumerate() {
                if int >> i & 1 == 1 {
                    if !out.is_empty() {
                        out.push(b',');
                    }
                    out.extend_from_slice(m);
                }
            }
            Datum::Str(out)
        }
        SqlType::Decimal { precision, scale } => match &v {
            Value::Bytes(b) => read_decimal(precision, scale, b),
            _ => Datum::Null,
        },
        SqlType::Float { double, digits } => match &v {
            Value::Bytes(b) => Datum::real(
                float_of_bytes(b, double),
                match digits {
                    Some((_, d)) => RealFmt::Fixed(d),
                    None => RealFmt::G(if double { 15 } else { 6 }),
                },
            ),
            _ => Datum::Null,
        },
        _ => unreachable!("not a field type: {ty:?}"),
    }
}

/// A date and time as `str_to_datetime` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DateTime {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
}

impl DateTime {
    fn packed(&self) -> i64 {
        ((self.year * 100 + self.month) * 100 + self.day) * 1_000_000
            + self.hour * 10_000
            + self.minute * 100
            + self.second
    }

    /// Seconds since 1970 (UTC), if TIMESTAMP holds them (1970-01-01
    /// 00:00:01 to 2038-01-19 03:14:07); the zero date is 0.
    fn epoch_seconds(&self) -> Option<u64> {
        if self.packed() == 0 {
            return Some(0);
        }
        if self.month == 0 || self.day == 0 {
            return None;
        }
        let days = days_from_civil(self.year, self.month, self.day);
        let s = days * 86_400 + self.hour * 3_600 + self.minute * 60 + self.second;
        (1..=i64::from(i32::MAX)).contains(&s).then_some(s as u64)
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The DATETIME packing of a TIMESTAMP's seconds.
fn packed_of_epoch(s: u64) -> i64 {
    let s = s as i64;
    let (days, rem) = (s.div_euclid(86_400), s.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    DateTime {
        year: y,
        month: m,
        day: d,
        hour: rem / 3_600,
        minute: rem / 60 % 60,
        second: rem % 60,
    }
    .packed()
}

/// The current time as TIMESTAMP stores it, from the server clock's
/// reading of `now_us` microseconds past its origin.
pub fn timestamp_now(now_us: u64) -> Datum {
    Datum::str(&render_packed(packed_of_epoch(EPOCH + now_us / 1_000_000)))
}

fn render_packed(p: i64) -> String {
    let (date, time) = (p / 1_000_000, p % 1_000_000);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        date / 10_000,
        date / 100 % 100,
        date % 100,
        time / 10_000,
        time / 100 % 100,
        time % 100
    )
}

/// `str_to_datetime` and `number_to_datetime` for the forms MySQL
/// documents: `YYYY-MM-DD[ hh:mm:ss]` with any punctuation between the
/// parts, a two-digit year (70..99 the 1900s, 00..69 the 2000s), and runs
/// of digits (`YYMMDD`, `YYYYMMDD`, `YYMMDDhhmmss`, `YYYYMMDDhhmmss`; a
/// number shorter than its form is read right-aligned). `None` for what
/// is not a valid date: month above 12, a day past its month's end (the
/// zero date and zero parts allowed, as MySQL 5.1 allows them without
/// NO_ZERO_DATE / NO_ZERO_IN_DATE).
fn parse_datetime(text: &str, string: bool) -> Option<DateTime> {
    let t = text.trim();
    // A number's fraction (`20091104.5`) is dropped.
    let t = match t.split_once('.') {
        Some((a, b))
            if !a.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit()) =>
        {
            a
        }
        _ => t,
    };
    let parts: Vec<i64>;
    let two_digit_year;
    if !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit()) {
        let n = t.len();
        let (width, year_digits) = match n {
            0..=6 => (6, 2),
            7..=8 => (8, 4),
            9..=12 => (12, 2),
            13..=14 => (14, 4),
            _ => return None,
        };
        if string && ![6, 8, 12, 14].contains(&n) {
            return None;
        }
        let s = format!("{t:0>width$}");
        let num = |a: usize, b: usize| s[a..b].parse::<i64>().ok();
        let mut v = vec![num(0, year_digits)?];
        let mut at = year_digits;
        while at < width {
            v.push(num(at, at + 2)?);
            at += 2;
        }
        two_digit_year = year_digits == 2;
        parts = v;
    } else {
        let groups: Vec<&str> = t
            .split(|c: char| !c.is_ascii_digit())
            .filter(|g| !g.is_empty())
            .collect();
        if groups.len() < 3 || groups.len() > 7 || !t.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        two_digit_year = groups[0].len() <= 2;
        parts = groups
            .iter()
            .take(6)
            .map(|g| g.parse::<i64>().ok())
            .collect::<Option<_>>()?;
    }
    let get = |i: usize| parts.get(i).copied().unwrap_or(0);
    let mut year = get(0);
    if two_digit_year {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let dt = DateTime {
        year,
        month: get(1),
        day: get(2),
        hour: get(3),
        minute: get(4),
        second: get(5),
    };
    if dt.packed() == 0 && get(0) == 0 {
        return Some(DateTime { year: 0, ..dt });
    }
    let ok = (0..=9999).contains(&dt.year)
        && (0..=12).contains(&dt.month)
        && (0..=31).contains(&dt.day)
        && (dt.month == 0 || dt.day <= days_in_month(dt.year, dt.month))
        && (0..=23).contains(&dt.hour)
        && (0..=59).contains(&dt.minute)
        && (0..=59).contains(&dt.second);
    ok.then_some(dt)
}

/// `str_to_time` for `[-][D ]hh:mm[:ss]` and `[-]hhmmss` (digits read
/// right-aligned: `'1:2'` is 01:02:00, `'102'` is 00:01:02), as the packed
/// ±hhmmss; `None` for minutes or seconds above 59 or what is not a time.
fn parse_time(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim_start()),
        None => (false, t),
    };
    let t = t.split('.').next().unwrap_or(t);
    let (h, m, s) = if t.contains(':') {
        let (days, clock) = match t.split_once(' ') {
            Some((d, c)) => (d.parse::<i64>().ok()?, c),
            None => (0, t),
        };
        let f: Vec<&str> = clock.split(':').collect();
        if f.len() > 3
            || f.iter()
                .any(|x| x.is_empty() || !x.bytes().all(|c| c.is_ascii_digit()))
        {
            return None;
        }
        let n = |i: usize| f.get(i).map_or(Some(0), |x| x.parse::<i64>().ok());
        (days * 24 + n(0)?, n(1)?, n(2)?)
    } else {
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) || t.len() > 12 {
            return None;
        }
        let v: i64 = t.parse().ok()?;
        (v / 10_000, v / 100 % 100, v % 100)
    };
    if m > 59 || s > 59 {
        return None;
    }
    let v = h.checked_mul(10_000)?.checked_add(m * 100 + s)?;
    Some(if neg { -v } else { v })
}

/// A number's sign and digits: `(negative, integer digits, fraction
/// digits)`, and whether the whole text was the number.
fn decimal_digits(d: &Datum) -> (bool, String, String, bool) {
    let text = match d {
        Datum::Hex(_) => d.as_i128().unwrap_or(0).to_string(),
        Datum::Real(bits, _) => format!("{:e}", f64::from_bits(*bits)),
        other => text_of(other),
    };
    let t = text.trim_start();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let int: String = body.chars().take_while(|c| c.is_ascii_digit()).collect();
    let rest = &body[int.len()..];
    let (frac, rest) = match rest.strip_prefix('.') {
        Some(r) => {
            let f: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
            let n = f.len();
            (f, &r[n..])
        }
        None => (String::new(), rest),
    };
    if int.is_empty() && frac.is_empty() {
        return (false, String::new(), String::new(), false);
    }
    if let Some(e) = rest.strip_prefix(['e', 'E']) {
        // An exponent: through a double, as MySQL reads '1e3'.
        if let Ok(x) = format!("{int}.{frac}e{e}")
            .trim_start_matches('.')
            .parse::<f64>()
        {
            let s = format!("{:.30}", x.abs());
            let (i, f) = s.split_once('.').unwrap_or((&s, ""));
            return (neg && x != 0.0, i.to_string(), f.to_string(), true);
        }
    }
    (neg, int, frac, rest.trim().is_empty())
}

fn store_decimal(
    precision: u8,
    scale: u8,
    d: &Datum,
    column: &str,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Datum, SqlError> {
    let (neg, int, frac, clean) = decimal_digits(d);
    let scale_n = usize::from(scale);
    let int_n = usize::from(precision - scale);
    let zero = decimal_bin(false, "", "", precision, scale);
    if int.is_empty() && frac.is_empty() {
        let e = SqlError::new(
            1366,
            format!(
                "Incorrect decimal value: '{}' for column '{column}' at row 1",
                text_of(d)
            ),
        );
        return fail_or(lenient, warnings, e, zero);
    }
    // Rounded half away from zero to the scale (decimal_round, HALF_UP).
    let mut digits: Vec<u8> = int
        .trim_start_matches('0')
        .bytes()
        .map(|c| c - b'0')
        .collect();
    let int_len = digits.len();
    let mut f: Vec<u8> = frac.bytes().map(|c| c - b'0').collect();
    let round_up = f.get(scale_n).is_some_and(|&x| x >= 5);
    // Digits rounded away are a note, in strict mode too.
    let rounded = f.iter().skip(scale_n).any(|&x| x != 0);
    f.resize(scale_n, 0);
    digits.extend_from_slice(&f);
    let mut int_len = int_len;
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                int_len += 1;
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let as_text = |v: &[u8]| v.iter().map(|&x| (x + b'0') as char).collect::<String>();
    if int_len > int_n {
        let nines = "9".repeat(int_n);
        let max = decimal_bin(neg, &nines, &"9".repeat(scale_n), precision, scale);
        return fail_or(lenient, warnings, out_of_range(column), max);
    }
    let (i, f) = digits.split_at(int_len);
    let is_zero = digits.iter().all(|&x| x == 0);
    let v = decimal_bin(neg && !is_zero, &as_text(i), &as_text(f), precision, scale);
    if !clean {
        return fail_or(lenient, warnings, truncated(column), v);
    }
    if rounded {
        let e = truncated(column);
        warnings.push(Warning::note(e.code, e.message));
    }
    Ok(v)
}

/// `decimal2bin`: the integer digits right-aligned in `precision - scale`
/// places and the fraction left-aligned in `scale`, in groups of nine
/// digits of four bytes (a leading or trailing shorter group in fewer),
/// big-endian; a negative number's bytes inverted; the first byte's top
/// bit flipped. The bytes then order as the numbers do.
fn decimal_bin(neg: bool, int: &str, frac: &str, precision: u8, scale: u8) -> Datum {
    let int_n = usize::from(precision - scale);
    let scale_n = usize::from(scale);
    let int = format!("{int:0>int_n$}");
    let frac = format!("{frac:0<scale_n$}");
    let mut out = Vec::new();
    let mut put = |digits: &str| {
        if digits.is_empty() {
            return;
        }
        let n = dig_bytes(digits.len() as u32) as usize;
        let v: u32 = digits.parse().unwrap_or(0);
        out.extend_from_slice(&v.to_be_bytes()[4 - n..]);
    };
    let lead = int_n % 9;
    put(&int[..lead]);
    for g in int.as_bytes()[lead..].chunks(9) {
        put(std::str::from_utf8(g).unwrap_or("0"));
    }
    for g in frac.as_bytes().chunks(9) {
        put(std::str::from_utf8(g).unwrap_or("0"));
    }
    if neg {
        for b in &mut out {
            *b = !*b;
        }
    }
    if let Some(b) = out.first_mut() {
        *b ^= 0x80;
    }
    Datum::Str(out)
}

/// `bin2decimal`: the number a `decimal2bin` form holds.
fn read_decimal(precision: u8, scale: u8, b: &[u8]) -> Datum {
    if b.is_empty() {
        return Datum::Null;
    }
    let mut bytes = b.to_vec();
    bytes[0] ^= 0x80;
    let neg = bytes[0] & 0x80 != 0;
    if neg {
        for x in &mut bytes {
            *x = !*x;
        }
    }
    let int_n = u32::from(precision - scale);
    let mut pos = 0;
    let mut take = |digits: u32| -> String {
        let n = dig_bytes(digits) as usize;
        let v = bytes
            .get(pos..pos + n)
            .map_or(0, |s| s.iter().fold(0u32, |a, &x| a << 8 | u32::from(x)));
        pos += n;
        format!("{v:0>w$}", w = digits as usize)
    };
    let mut int = String::new();
    if int_n % 9 != 0 {
        int.push_str(&take(int_n % 9));
    }
    for _ in 0..int_n / 9 {
        int.push_str(&take(9));
    }
    let mut frac = String::new();
    for _ in 0..u32::from(scale) / 9 {
        frac.push_str(&take(9));
    }
    if !scale.is_multiple_of(9) {
        frac.push_str(&take(u32::from(scale) % 9));
    }
    let int = int.trim_start_matches('0');
    let text = format!(
        "{}{}{}{}",
        if neg { "-" } else { "" },
        if int.is_empty() { "0" } else { int },
        if scale > 0 { "." } else { "" },
        frac
    );
    let unscaled = format!("{}{}{}", if neg { "-" } else { "" }, int, frac);
    match unscaled.parse::<i128>() {
        Ok(v) => Datum::Dec(v, scale),
        Err(_) if unscaled.trim_start_matches('-').is_empty() => Datum::Dec(0, scale),
        Err(_) => Datum::str(&text),
    }
}

/// A number as a double, and whether the whole value was the number.
fn float_of(d: &Datum) -> (f64, bool) {
    match d {
        Datum::Int(i) => (*i as f64, true),
        Datum::UInt(u) => (*u as f64, true),
        Datum::Dec(v, s) => (*v as f64 / 10f64.powi(i32::from(*s)), true),
        Datum::Hex(_) => (d.as_i128().unwrap_or(0) as f64, true),
        Datum::Real(bits, _) => (f64::from_bits(*bits), true),
        Datum::Str(b) => {
            let t = String::from_utf8_lossy(b);
            let t = t.trim();
            // The longest prefix that reads as a number.
            let end = (0..=t.len())
                .rev()
                .find(|&i| t.is_char_boundary(i) && t[..i].parse::<f64>().is_ok())
                .unwrap_or(0);
            let x = t[..end].parse::<f64>().unwrap_or(0.0);
            (
                if x.is_finite() { x } else { 0.0 },
                end == t.len() && end > 0,
            )
        }
        Datum::Null => (0.0, true),
    }
}

/// A FLOAT's or DOUBLE's order-preserving bytes.
fn float_bytes(x: f64, double: bool) -> Datum {
    let x = if x == 0.0 { 0.0 } else { x };
    Datum::Str(if double {
        let b = x.to_bits();
        let k = if b >> 63 == 1 { !b } else { b ^ 1 << 63 };
        k.to_be_bytes().to_vec()
    } else {
        let b = (x as f32).to_bits();
        let k = if b >> 31 == 1 { !b } else { b ^ 1 << 31 };
        k.to_be_bytes().to_vec()
    })
}

fn float_of_bytes(b: &[u8], double: bool) -> f64 {
    if double {
        let k = u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
        f64::from_bits(if k >> 63 == 1 { k ^ 1 << 63 } else { !k })
    } else {
        let k = u32::from_be_bytes(b.try_into().unwrap_or([0; 4]));
        f64::from(f32::from_bits(if k >> 31 == 1 { k ^ 1 << 31 } else { !k }))
    }
}

/// C's `%.<prec>g`: `prec` significant digits, trailing zeros dropped, in
/// exponent form (`1.5e+20`) when the exponent is below -4 or at least
/// `prec`.
pub fn format_g(x: f64, prec: usize) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let sci = format!("{:.*e}", prec - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= prec as i32 {
        format!(
            "{}e{}{:02}",
            trim(mant),
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        let decimals = (prec as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(ty: SqlType, d: Datum) -> Result<Datum, SqlError> {
        store(ty, &[], &d, "c", false, &mut Vec::new())
    }

    fn round_trip(ty: SqlType, text: &str) -> String {
        let v = st(ty, Datum::str(text)).unwrap();
        read(ty, &[], v.to_value()).render()
    }

    #[test]
    fn dates_pack_as_field_newdate_and_read_back() {
        assert_eq!(
            st(SqlType::Date, Datum::str("2009-11-04")).unwrap(),
            Datum::Int(4 + 32 * 11 + 512 * 2009)
        );
        assert_eq!(round_trip(SqlType::Date, "2009-11-04"), "2009-11-04");
        assert_eq!(round_trip(SqlType::Date, "20091104"), "2009-11-04");
        assert_eq!(round_trip(SqlType::Date, "09/11/4"), "2009-11-04");
        assert_eq!(round_trip(SqlType::Date, "0000-00-00"), "0000-00-00");
        assert_eq!(
            round_trip(SqlType::DateTime, "2056-01-03 03:59:39"),
            "2056-01-03 03:59:39"
        );
        assert_eq!(
            round_trip(SqlType::DateTime, "20560103035939"),
            "2056-01-03 03:59:39"
        );
        assert_eq!(
            st(SqlType::Date, Datum::str("2001-02-29"))
                .unwrap_err()
                .code,
            1292
        );
        assert_eq!(
            st(SqlType::Date, Datum::str("12592418")).unwrap_err().code,
            1292
        );
        let mut w = Vec::new();
        let v = store(SqlType::Date, &[], &Datum::str("x"), "c", true, &mut w).unwrap();
        assert_eq!(v, Datum::Int(0));
        assert_eq!(w[0].code, 1265);
    }

    #[test]
    fn timestamps_are_utc_seconds_within_2038() {
        assert_eq!(
            st(SqlType::Timestamp, Datum::str("1970-01-01 00:00:01")).unwrap(),
            Datum::UInt(1)
        );
        assert_eq!(
            st(SqlType::Timestamp, Datum::str("2038-01-19 03:14:07")).unwrap(),
            Datum::UInt(i32::MAX as u64)
        );
        assert_eq!(
            st(SqlType::Timestamp, Datum::str("2038-01-19 03:14:08"))
                .unwrap_err()
                .code,
            1264
        );
        assert_eq!(
            round_trip(SqlType::Timestamp, "2010-01-01 00:00:00"),
            "2010-01-01 00:00:00"
        );
        assert_eq!(timestamp_now(90_000_000).render(), "2010-01-01 00:01:30");
        assert_eq!(
            round_trip(SqlType::Timestamp, "0000-00-00 00:00:00"),
            "0000-00-00 00:00:00"
        );
    }

    #[test]
    fn times_years_enums_and_sets() {
        assert_eq!(round_trip(SqlType::Time, "-12:34:56"), "-12:34:56");
        assert_eq!(round_trip(SqlType::Time, "3570409"), "357:04:09");
        assert_eq!(round_trip(SqlType::Time, "1 02:00"), "26:00:00");
        assert!(
            st(SqlType::Time, Datum::str("3570490")).is_err(),
            "90 seconds"
        );
        assert_eq!(
            st(SqlType::Time, Datum::str("839:00:00")).unwrap_err().code,
            1264
        );
        assert_eq!(round_trip(SqlType::Year, "1944"), "1944");
        assert_eq!(round_trip(SqlType::Year, "05"), "2005");
        assert_eq!(st(SqlType::Year, Datum::Int(0)).unwrap(), Datum::UInt(0));
        assert_eq!(st(SqlType::Year, Datum::Int(1900)).unwrap_err().code, 1264);
        let m: Vec<Vec<u8>> = ["test1", "test2", "test3"]
            .map(|s| s.as_bytes().to_vec())
            .into();
        let e = |d: Datum| store(SqlType::Enum(3), &m, &d, "c", false, &mut Vec::new());
        assert_eq!(e(Datum::str("TEST2 ")).unwrap(), Datum::UInt(2));
        assert_eq!(e(Datum::Int(3)).unwrap(), Datum::UInt(3));
        assert_eq!(e(Datum::str("nope")).unwrap_err().code, 1265);
        assert_eq!(read(SqlType::Enum(3), &m, Value::UInt(1)).render(), "test1");
        let s = |d: Datum| store(SqlType::Set(3), &m, &d, "c", false, &mut Vec::new());
        assert_eq!(s(Datum::str("test3,test1")).unwrap(), Datum::UInt(5));
        assert_eq!(s(Datum::str("6")).unwrap(), Datum::UInt(6));
        assert_eq!(s(Datum::str("15173")).unwrap_err().code, 1265);
        assert_eq!(
            read(SqlType::Set(3), &m, Value::UInt(5)).render(),
            "test1,test3"
        );
        assert_eq!(engine_type(SqlType::Set(9)).fixed_len(), Some(2));
        assert_eq!(engine_type(SqlType::Set(33)).fixed_len(), Some(8));
    }

    #[test]
    fn decimals_are_decimal2bin_and_order_as_numbers() {
        assert_eq!(decimal_bin_size(10, 0), 5);
        assert_eq!(decimal_bin_size(14, 4), 7);
        assert_eq!(decimal_bin_size(65, 30), 30);
        // decimal2bin's own example: 1234567890.1234 in DECIMAL(14,4).
        let ty = SqlType::Decimal {
            precision: 14,
            scale: 4,
        };
        assert_eq!(
            st(ty, Datum::str("1234567890.1234")).unwrap(),
            Datum::Str(vec![0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2])
        );
        let d10 = SqlType::Decimal {
            precision: 10,
            scale: 0,
        };
        assert_eq!(round_trip(d10, "4293854615.6906948000"), "4293854616");
        assert_eq!(round_trip(ty, "-0.00005"), "-0.0001");
        assert_eq!(round_trip(ty, "-0.00004"), "0.0000");
        assert_eq!(st(d10, Datum::str("99999999999")).unwrap_err().code, 1264);
        assert_eq!(st(d10, Datum::str("abc")).unwrap_err().code, 1366);
        let mut keys: Vec<(i64, Vec<u8>)> = [-1000, -1, 0, 1, 7, 999_999_999, -999_999_999]
            .iter()
            .map(|&n| match st(d10, Datum::Int(n)).unwrap() {
                Datum::Str(b) => (n, b),
                _ => unreachable!(),
            })
            .collect();
        keys.sort_by(|a, b| a.1.cmp(&b.1));
        assert!(keys.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn floats_order_as_numbers_and_print_as_g() {
        let ty = SqlType::Float {
            double: true,
            digits: None,
        };
        let b = |x: f64| match float_bytes(x, true) {
            Datum::Str(b) => b,
            _ => unreachable!(),
        };
        let xs = [-1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, 1e300];
        for w in xs.windows(2) {
            assert!(b(w[0]) <= b(w[1]), "{} {}", w[0], w[1]);
        }
        assert_eq!(b(-0.0), b(0.0));
        assert_eq!(round_trip(ty, "4286985783.6771750000"), "4286985783.67718");
        let f = SqlType::Float {
            double: false,
            digits: None,
        };
        assert_eq!(round_trip(f, "6354540.9826654866"), "6.35454e+06");
        assert_eq!(round_trip(f, "1.5"), "1.5");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001, 6), "1e-05");
        assert_eq!(st(f, Datum::str("1e39")).unwrap_err().code, 1264);
    }
}
