//! The server's replies to a command: OK (`net_send_ok`), ERR
//! (`net_send_error_packet`), EOF (`net_send_eof`), and a text result
//! set (`Protocol::send_fields`, then one row packet a row, each column
//! a length-encoded string or 0xFB for NULL, then an EOF); and the
//! client's reading of them.

use super::{put_lenenc, put_lenenc_str, Reader, WireError, WireResult};

/// Column types (`enum_field_types`).
pub mod ty {
    /// DECIMAL (old).
    pub const DECIMAL: u8 = 0x00;
    /// TINYINT.
    pub const TINY: u8 = 0x01;
    /// SMALLINT.
    pub const SHORT: u8 = 0x02;
    /// INT.
    pub const LONG: u8 = 0x03;
    /// FLOAT.
    pub const FLOAT: u8 = 0x04;
    /// DOUBLE.
    pub const DOUBLE: u8 = 0x05;
    /// NULL.
    pub const NULL: u8 = 0x06;
    /// TIMESTAMP.
    pub const TIMESTAMP: u8 = 0x07;
    /// BIGINT.
    pub const LONGLONG: u8 = 0x08;
    /// MEDIUMINT.
    pub const INT24: u8 = 0x09;
    /// DATE.
    pub const DATE: u8 = 0x0A;
    /// TIME.
    pub const TIME: u8 = 0x0B;
    /// DATETIME.
    pub const DATETIME: u8 = 0x0C;
    /// YEAR.
    pub const YEAR: u8 = 0x0D;
    /// DECIMAL.
    pub const NEWDECIMAL: u8 = 0xF6;
    /// ENUM.
    pub const ENUM: u8 = 0xF7;
    /// SET.
    pub const SET: u8 = 0xF8;
    /// TEXT and BLOB.
    pub const BLOB: u8 = 0xFC;
    /// VARCHAR, VARBINARY.
    pub const VAR_STRING: u8 = 0xFD;
    /// CHAR, BINARY.
    pub const STRING: u8 = 0xFE;
}

/// Column flags (`*_FLAG`).
pub mod flag {
    /// NOT NULL.
    pub const NOT_NULL: u16 = 1;
    /// Part of the primary key.
    pub const PRI_KEY: u16 = 2;
    /// Part of a unique key.
    pub const UNIQUE_KEY: u16 = 4;
    /// Part of a key.
    pub const MULTIPLE_KEY: u16 = 8;
    /// A BLOB or TEXT.
    pub const BLOB: u16 = 16;
    /// UNSIGNED.
    pub const UNSIGNED: u16 = 32;
    /// Binary collation.
    pub const BINARY: u16 = 128;
    /// ENUM.
    pub const ENUM: u16 = 256;
    /// AUTO_INCREMENT.
    pub const AUTO_INCREMENT: u16 = 512;
    /// TIMESTAMP.
    pub const TIMESTAMP: u16 = 1024;
    /// SET.
    pub const SET: u16 = 2048;
    /// A number.
    pub const NUM: u16 = 32768;
}

/// An OK packet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OkPacket {
    /// Affected rows.
    pub affected: u64,
    /// The AUTO_INCREMENT value the statement generated (or 0).
    pub last_insert_id: u64,
    /// Status flags.
    pub status: u16,
    /// Warnings.
    pub warnings: u16,
    /// The info text (`Records: 3  Duplicates: 0  Warnings: 0`).
    pub info: String,
}

impl OkPacket {
    /// The payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0];
        put_lenenc(&mut out, self.affected);
        put_lenenc(&mut out, self.last_insert_id);
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&self.warnings.to_le_bytes());
        if !self.info.is_empty() {
            put_lenenc_str(&mut out, self.info.as_bytes());
        }
        out
    }

    fn decode(payload: &[u8]) -> WireResult<OkPacket> {
        let mut r = Reader::new(&payload[1..]);
        let affected = r.lenenc("OK")?.unwrap_or(0);
        let last_insert_id = r.lenenc("OK")?.unwrap_or(0);
        let status = r.uint(2, "OK")? as u16;
        let warnings = r.uint(2, "OK")? as u16;
        let info = if r.is_empty() {
            String::new()
        } else {
            String::from_utf8_lossy(r.lenenc_str("OK info")?.unwrap_or_default()).into_owned()
        };
        Ok(OkPacket {
            affected,
            last_insert_id,
            status,
            warnings,
            info,
        })
    }
}

/// An ERR packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    /// MySQL's error number.
    pub code: u16,
    /// Its SQLSTATE (five characters).
    pub sqlstate: String,
    /// The message.
    pub message: String,
}

impl ErrPacket {
    /// The payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0xFF];
        out.extend_from_slice(&self.code.to_le_bytes());
        out.push(b'#');
        let mut state = self.sqlstate.clone().into_bytes();
        state.resize(5, b'0');
        out.extend_from_slice(&state[..5]);
        out.extend_from_slice(self.message.as_bytes());
        out
    }

    fn decode(payload: &[u8]) -> WireResult<ErrPacket> {
        let mut r = Reader::new(&payload[1..]);
        let code = r.uint(2, "ERR")? as u16;
        let sqlstate = if r.rest().first() == Some(&b'#') {
            r.take(1, "ERR")?;
            String::from_utf8_lossy(r.take(5, "ERR")?).into_owned()
        } else {
            "HY000".into()
        };
        Ok(ErrPacket {
            code,
            sqlstate,
            message: String::from_utf8_lossy(r.rest()).into_owned(),
        })
    }
}

/// An EOF packet's payload.
pub fn eof(warnings: u16, status: u16) -> Vec<u8> {
    let mut out = vec![0xFE];
    out.extend_from_slice(&warnings.to_le_bytes());
    out.extend_from_slice(&status.to_le_bytes());
    out
}

/// A column definition (ColumnDefinition41).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnDef {
    /// Database.
    pub schema: String,
    /// Table (or alias).
    pub table: String,
    /// The table's own name.
    pub org_table: String,
    /// Column name (or alias, or the expression's text).
    pub name: String,
    /// The column's own name.
    pub org_name: String,
    /// Character set (collation id); 63 is binary.
    pub charset: u16,
    /// Display length in bytes.
    pub length: u32,
    /// Type (`ty`).
    pub ty: u8,
    /// Flags (`flag`).
    pub flags: u16,
    /// Decimals.
    pub decimals: u8,
}

impl ColumnDef {
    /// The payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_lenenc_str(&mut out, b"def");
        for s in [
            &self.schema,
            &self.table,
            &self.org_table,
            &self.name,
            &self.org_name,
        ] {
            put_lenenc_str(&mut out, s.as_bytes());
        }
        out.push(0x0C);
        out.extend_from_slice(&self.charset.to_le_bytes());
        out.extend_from_slice(&self.length.to_le_bytes());
        out.push(self.ty);
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.push(self.decimals);
        out.extend_from_slice(&[0, 0]);
        out
    }

    /// Reads a column definition.
    pub fn decode(payload: &[u8]) -> WireResult<ColumnDef> {
        let mut r = Reader::new(payload);
        let mut s = || -> WireResult<String> {
            Ok(String::from_utf8_lossy(r.lenenc_str("column")?.unwrap_or_default()).into_owned())
        };
        let _catalog = s()?;
        let (schema, table, org_table, name, org_name) = (s()?, s()?, s()?, s()?, s()?);
        r.lenenc("column")?;
        let charset = r.uint(2, "column")? as u16;
        let length = r.uint(4, "column")? as u32;
        let ty = r.u8("column")?;
        let flags = r.uint(2, "column")? as u16;
        let decimals = r.u8("column")?;
        Ok(ColumnDef {
            schema,
            table,
            org_table,
            name,
            org_name,
            charset,
            length,
            ty,
            flags,
            decimals,
        })
    }
}

/// A text-protocol row's payload: each value a length-encoded string,
/// NULL as 0xFB.
pub fn text_row(values: &[Option<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        match v {
            None => out.push(0xFB),
            Some(b) => put_lenenc_str(&mut out, b),
        }
    }
    out
}

/// What a client reads in reply to a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// OK.
    Ok(OkPacket),
    /// ERR.
    Err(ErrPacket),
    /// A result set: its columns, rows, and the closing EOF's warnings
    /// and status.
    Rows {
        /// Column definitions.
        columns: Vec<ColumnDef>,
        /// Rows.
        rows: Vec<Vec<Option<Vec<u8>>>>,
        /// Warnings.
        warnings: u16,
        /// Status flags.
        status: u16,
    },
}

/// Reads a query's reply from its packets' payloads in order (a client's
/// side, for tests and `innosim diff`): returns the reply and how many
/// payloads it took.
pub fn read_reply(payloads: &[Vec<u8>]) -> WireResult<Option<(Reply, usize)>> {
    let Some(first) = payloads.first() else {
        return Ok(None);
    };
    match first.first() {
        Some(0x00) => return Ok(Some((Reply::Ok(OkPacket::decode(first)?), 1))),
        Some(0xFF) => return Ok(Some((Reply::Err(ErrPacket::decode(first)?), 1))),
        None => return Err(WireError("an empty reply packet".into())),
        _ => {}
    }
    let n = Reader::new(first)
        .lenenc("column count")?
        .ok_or_else(|| WireError("a NULL column count".into()))?;
    let n = usize::try_from(n).map_err(|_| WireError("column count".into()))?;
    let mut at = 1;
    let mut columns = Vec::with_capacity(n);
    for _ in 0..n {
        let Some(p) = payloads.get(at) else {
            return Ok(None);
        };
        columns.push(ColumnDef::decode(p)?);
        at += 1;
    }
    let is_eof = |p: &Vec<u8>| p.first() == Some(&0xFE) && p.len() < 9;
    match payloads.get(at) {
        None => return Ok(None),
        Some(p) if is_eof(p) => at += 1,
        Some(_) => return Err(WireError("no EOF after the column definitions".into())),
    }
    let mut rows = Vec::new();
    loop {
        let Some(p) = payloads.get(at) else {
            return Ok(None);
        };
        at += 1;
        if is_eof(p) {
            let mut r = Reader::new(&p[1..]);
            let warnings = r.uint(2, "EOF")? as u16;
            let status = r.uint(2, "EOF")? as u16;
            return Ok(Some((
                Reply::Rows {
                    columns,
                    rows,
                    warnings,
                    status,
                },
                at,
            )));
        }
        if p.first() == Some(&0xFF) {
            return Ok(Some((Reply::Err(ErrPacket::decode(p)?), at)));
        }
        let mut r = Reader::new(p);
        let mut row = Vec::with_capacity(n);
        for _ in 0..n {
            row.push(r.lenenc_str("row")?.map(|b| b.to_vec()));
        }
        rows.push(row);
    }
}
