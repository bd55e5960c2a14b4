//! Prepared statements' binary protocol (MySQL 5.1's sql_prepare.cc and
//! Protocol_binary in protocol.cc): COM_STMT_PREPARE's OK, the parameters
//! of COM_STMT_EXECUTE, and result rows in binary form (a null bitmap
//! offset by two bits, then each value in its column type's own
//! encoding).

use super::reply::{ty, ColumnDef};
use super::{put_lenenc_str, Reader, WireError, WireResult};

/// COM_STMT_PREPARE's answer: the statement's id and how many columns
/// and parameters it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrepareOk {
    /// The statement id.
    pub statement_id: u32,
    /// Result columns (0: no result set known at prepare).
    pub columns: u16,
    /// `?` parameters.
    pub params: u16,
    /// Warnings.
    pub warnings: u16,
}

impl PrepareOk {
    /// The payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0];
        out.extend_from_slice(&self.statement_id.to_le_bytes());
        out.extend_from_slice(&self.columns.to_le_bytes());
        out.extend_from_slice(&self.params.to_le_bytes());
        out.push(0);
        out.extend_from_slice(&self.warnings.to_le_bytes());
        out
    }

    /// Reads one (a client's side).
    pub fn decode(payload: &[u8]) -> WireResult<PrepareOk> {
        let mut r = Reader::new(payload);
        if r.u8("prepare OK")? != 0 {
            return Err(WireError("not a prepare OK".into()));
        }
        let statement_id = r.uint(4, "prepare OK")? as u32;
        let columns = r.uint(2, "prepare OK")? as u16;
        let params = r.uint(2, "prepare OK")? as u16;
        r.u8("prepare OK")?;
        let warnings = r.uint(2, "prepare OK").unwrap_or(0) as u16;
        Ok(PrepareOk {
            statement_id,
            columns,
            params,
            warnings,
        })
    }
}

/// A parameter's value as COM_STMT_EXECUTE binds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A FLOAT or DOUBLE.
    Double(f64),
    /// A string, a DECIMAL's text, a BLOB.
    Bytes(Vec<u8>),
    /// A DATE, DATETIME, TIMESTAMP or TIME, as its text.
    Temporal(String),
}

impl Param {
    /// The SQL literal that stands for it in the statement's text (the
    /// server substitutes the parameters into the statement, as MySQL
    /// does for its query log): a string quoted with backslash escapes.
    pub fn literal(&self) -> String {
        match self {
            Param::Null => "NULL".into(),
            Param::Int(i) => i.to_string(),
            Param::UInt(u) => u.to_string(),
            Param::Double(x) if x.is_finite() => format!("{x:e}"),
            Param::Double(_) => "NULL".into(),
            Param::Temporal(t) => format!("'{t}'"),
            Param::Bytes(b) => {
                let mut s = String::with_capacity(b.len() + 2);
                s.push('\'');
                for ch in String::from_utf8_lossy(b).chars() {
                    match ch {
                        '\'' => s.push_str("\\'"),
                        '\\' => s.push_str("\\\\"),
                        '\0' => s.push_str("\\0"),
                        '\n' => s.push_str("\\n"),
                        '\r' => s.push_str("\\r"),
                        '\u{1a}' => s.push_str("\\Z"),
                        c => s.push(c),
                    }
                }
                s.push('\'');
                s
            }
        }
    }
}

/// COM_STMT_EXECUTE's arguments after the command byte, for a statement
/// of `n_params` parameters: the statement id and the values. `types`
/// holds the parameters' types from the last execute that sent them
/// (a client sends them with the first execute, then only when it binds
/// anew); it is updated here.
pub fn decode_execute(
    payload: &[u8],
    n_params: usize,
    types: &mut Vec<(u8, bool)>,
) -> WireResult<(u32, Vec<Param>)> {
    let mut r = Reader::new(payload);
    let id = r.uint(4, "COM_STMT_EXECUTE")? as u32;
    let _flags = r.u8("COM_STMT_EXECUTE")?;
    let _iterations = r.uint(4, "COM_STMT_EXECUTE")?;
    if n_params == 0 {
        return Ok((id, Vec::new()));
    }
    let nulls = r
        .take(n_params.div_ceil(8), "COM_STMT_EXECUTE null bitmap")?
        .to_vec();
    if r.u8("COM_STMT_EXECUTE")? == 1 {
        types.clear();
        for _ in 0..n_params {
            let t = r.u8("parameter type")?;
            let f = r.u8("parameter type")?;
            types.push((t, f & 0x80 != 0));
        }
    }
    if types.len() != n_params {
        return Err(WireError(
            "COM_STMT_EXECUTE without its parameters' types".into(),
        ));
    }
    let mut out = Vec::with_capacity(n_params);
    for (i, &(t, unsigned)) in types.iter().enumerate() {
        if nulls[i / 8] & (1 << (i % 8)) != 0 || t == ty::NULL {
            out.push(Param::Null);
            continue;
        }
        let int = |r: &mut Reader<'_>, n: usize| -> WireResult<Param> {
            let v = r.uint(n, "parameter")?;
            Ok(if unsigned {
                Param::UInt(v)
            } else {
                let shift = 64 - 8 * n as u32;
                Param::Int(((v << shift) as i64) >> shift)
            })
        };
        out.push(match t {
            ty::TINY => int(&mut r, 1)?,
            ty::SHORT | ty::YEAR => int(&mut r, 2)?,
            ty::LONG | ty::INT24 => int(&mut r, 4)?,
            ty::LONGLONG => int(&mut r, 8)?,
            ty::FLOAT => Param::Double(f64::from(f32::from_bits(r.uint(4, "parameter")? as u32))),
            ty::DOUBLE => Param::Double(f64::from_bits(r.uint(8, "parameter")?)),
            ty::DATE | ty::DATETIME | ty::TIMESTAMP => {
                let len = usize::from(r.u8("parameter")?);
                let b = r.take(len, "parameter")?;
                Param::Temporal(datetime_text(b, t == ty::DATE)?)
            }
            ty::TIME => {
                let len = usize::from(r.u8("parameter")?);
                Param::Temporal(time_text(r.take(len, "parameter")?)?)
            }
            _ => Param::Bytes(r.lenenc_str("parameter")?.unwrap_or_default().to_vec()),
        });
    }
    Ok((id, out))
}

fn datetime_text(b: &[u8], date_only: bool) -> WireResult<String> {
    let get = |i: usize| b.get(i).copied().unwrap_or(0);
    let (y, mo, d) = match b.len() {
        0 => (0, 0, 0),
        4 | 7 | 11 => (u16::from_le_bytes([b[0], b[1]]), get(2), get(3)),
        n => return Err(WireError(format!("a date of {n} bytes"))),
    };
    let (h, mi, s) = (get(4), get(5), get(6));
    let micro = if b.len() == 11 {
        u32::from_le_bytes([b[7], b[8], b[9], b[10]])
    } else {
        0
    };
    let mut out = format!("{y:04}-{mo:02}-{d:02}");
    if !date_only {
        out.push_str(&format!(" {h:02}:{mi:02}:{s:02}"));
        if micro > 0 {
            out.push_str(&format!(".{micro:06}"));
        }
    }
    Ok(out)
}

fn time_text(b: &[u8]) -> WireResult<String> {
    match b.len() {
        0 => Ok("00:00:00".into()),
        8 | 12 => {
            let neg = b[0] == 1;
            let days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
            let hours = days * 24 + u32::from(b[5]);
            Ok(format!(
                "{}{hours:02}:{:02}:{:02}",
                if neg { "-" } else { "" },
                b[6],
                b[7]
            ))
        }
        n => Err(WireError(format!("a time of {n} bytes"))),
    }
}

/// A result row in binary form, from each column's value in text form
/// (as the text protocol would send it): integers in their type's width,
/// FLOAT and DOUBLE as IEEE 754, DATE, DATETIME and TIMESTAMP as their
/// fields, TIME as its, anything else length-encoded.
pub fn binary_row(columns: &[ColumnDef], values: &[Option<Vec<u8>>]) -> WireResult<Vec<u8>> {
    let n = columns.len();
    let mut out = vec![0u8];
    let bitmap_at = out.len();
    out.resize(bitmap_at + (n + 7 + 2) / 8, 0);
    for (i, (col, v)) in columns.iter().zip(values).enumerate() {
        let Some(v) = v else {
            let bit = i + 2;
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
            continue;
        };
        let text = std::str::from_utf8(v).unwrap_or("");
        let bad = || WireError(format!("column {}: '{text}' is no {}", col.name, col.ty));
        let int = |out: &mut Vec<u8>, w: usize| -> WireResult<()> {
            let bytes = match text.parse::<i64>() {
                Ok(i) => i.to_le_bytes(),
                Err(_) => text.parse::<u64>().map_err(|_| bad())?.to_le_bytes(),
            };
            out.extend_from_slice(&bytes[..w]);
            Ok(())
        };
        match col.ty {
            ty::TINY => int(&mut out, 1)?,
            ty::SHORT | ty::YEAR => int(&mut out, 2)?,
            ty::LONG | ty::INT24 => int(&mut out, 4)?,
            ty::LONGLONG => int(&mut out, 8)?,
            ty::FLOAT => {
                let x: f32 = text.parse().map_err(|_| bad())?;
                out.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            ty::DOUBLE => {
                let x: f64 = text.parse().map_err(|_| bad())?;
                out.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            ty::DATE | ty::DATETIME | ty::TIMESTAMP => {
                let (date, time) = text.split_once(' ').unwrap_or((text, ""));
                let mut d = date.split('-').map(|x| x.parse::<u32>());
                let (Some(Ok(y)), Some(Ok(mo)), Some(Ok(day))) = (d.next(), d.next(), d.next())
                else {
                    return Err(bad());
                };
                let (hms, micro) = time.split_once('.').unwrap_or((time, ""));
                let mut t = hms.split(':').map(|x| x.parse::<u32>().unwrap_or(0));
                let (h, mi, s) = (
                    t.next().unwrap_or(0),
                    t.next().unwrap_or(0),
                    t.next().unwrap_or(0),
                );
                let micro: u32 = format!("{micro:0<6}")[..6].parse().unwrap_or(0);
                let mut b = (y as u16).to_le_bytes().to_vec();
                b.extend([mo as u8, day as u8]);
                if h + mi + s + micro > 0 {
                    b.extend([h as u8, mi as u8, s as u8]);
                }
                if micro > 0 {
                    b.extend(micro.to_le_bytes());
                }
                out.push(b.len() as u8);
                out.extend(b);
            }
            ty::TIME => {
                let neg = text.starts_with('-');
                let mut t = text.trim_start_matches('-').split(':');
                let h: u32 = t.next().and_then(|x| x.parse().ok()).ok_or_else(bad)?;
                let mi: u8 = t.next().and_then(|x| x.parse().ok()).unwrap_or(0);
                let s: u8 = t.next().and_then(|x| x.parse().ok()).unwrap_or(0);
                out.push(8);
                out.push(u8::from(neg));
                out.extend((h / 24).to_le_bytes());
                out.extend([(h % 24) as u8, mi, s]);
            }
            _ => put_lenenc_str(&mut out, v),
        }
    }
    Ok(out)
}

/// Reads a binary row back into each value's text form (a client's side).
pub fn decode_binary_row(
    columns: &[ColumnDef],
    payload: &[u8],
) -> WireResult<Vec<Option<Vec<u8>>>> {
    let n = columns.len();
    let mut r = Reader::new(payload);
    if r.u8("binary row")? != 0 {
        return Err(WireError("not a binary row".into()));
    }
    let bitmap = r.take((n + 7 + 2) / 8, "binary row")?.to_vec();
    let mut out = Vec::with_capacity(n);
    for (i, col) in columns.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(None);
            continue;
        }
        let unsigned = col.flags & super::reply::flag::UNSIGNED != 0;
        let int = |r: &mut Reader<'_>, w: usize| -> WireResult<Vec<u8>> {
            let v = r.uint(w, "binary row")?;
            Ok(if unsigned {
                v.to_string()
            } else {
                let shift = 64 - 8 * w as u32;
                (((v << shift) as i64) >> shift).to_string()
            }
            .into_bytes())
        };
        out.push(Some(match col.ty {
            ty::TINY => int(&mut r, 1)?,
            ty::SHORT | ty::YEAR => int(&mut r, 2)?,
            ty::LONG | ty::INT24 => int(&mut r, 4)?,
            ty::LONGLONG => int(&mut r, 8)?,
            ty::FLOAT => f32::from_bits(r.uint(4, "binary row")? as u32)
                .to_string()
                .into_bytes(),
            ty::DOUBLE => f64::from_bits(r.uint(8, "binary row")?)
                .to_string()
                .into_bytes(),
            ty::DATE | ty::DATETIME | ty::TIMESTAMP => {
                let len = usize::from(r.u8("binary row")?);
                datetime_text(r.take(len, "binary row")?, col.ty == ty::DATE)?.into_bytes()
            }
            ty::TIME => {
                let len = usize::from(r.u8("binary row")?);
                time_text(r.take(len, "binary row")?)?.into_bytes()
            }
            _ => r.lenenc_str("binary row")?.unwrap_or_default().to_vec(),
        }));
    }
    Ok(out)
}
