//! A statement's answer as packets: OK, ERR, or a text result set whose
//! column definitions come from the schema where a column is a table's
//! (`Field::make_field`) and from the values otherwise.

use super::connection::err;
use super::engine_thread::Answer;
use super::{status_of, LATIN1};
use engine::sql::Reply;
use engine::wire::reply::{self, flag, ty, ColumnDef, OkPacket};

/// The packets that answer a statement.
pub(super) fn answer_packets(a: Answer) -> Vec<Vec<u8>> {
    let status = status_of(a.in_trans, a.autocommit);
    match a.reply {
        Reply::Error(e) => vec![err(e.code, &e.message)],
        Reply::Ok {
            affected,
            info,
            warnings,
        } => vec![OkPacket {
            affected,
            last_insert_id: a.insert_id,
            status,
            warnings: warnings.min(usize::from(u16::MAX)) as u16,
            info: info.unwrap_or_default(),
        }
        .encode()],
        Reply::Rows {
            columns,
            rows,
            warnings,
        } => {
            let mut out = Vec::with_capacity(rows.len() + columns.len() + 3);
            let mut count = Vec::new();
            engine::wire::put_lenenc(&mut count, columns.len() as u64);
            out.push(count);
            for (i, name) in columns.iter().enumerate() {
                let def = match a.sources.get(i) {
                    Some(Some(src)) if a.sources.len() == columns.len() => column_of(name, src),
                    _ => column_def(name, rows.iter().map(|r| &r[i])),
                };
                out.push(def.encode());
            }
            out.push(reply::eof(0, status));
            for r in &rows {
                let values: Vec<Option<Vec<u8>>> = r
                    .iter()
                    .map(|d| (!d.is_null()).then(|| d.to_bytes()))
                    .collect();
                out.push(reply::text_row(&values));
            }
            out.push(reply::eof(
                warnings.min(usize::from(u16::MAX)) as u16,
                status,
            ));
            out
        }
    }
}

/// A table column's definition as MySQL 5.1 sends it: its type code,
/// display length in bytes, flags and decimals (`Field::make_field`).
pub(super) fn column_of(name: &str, src: &engine::sql::ColumnSource) -> ColumnDef {
    use engine::sql::ast::SqlType;
    let spec = &src.spec;
    let mb = src.collation.max_char_bytes();
    let binary_coll = src.collation == engine::record::collation::Collation::Binary;
    let text_charset = if binary_coll { 63 } else { src.collation.id() };
    let mut flags = if spec.not_null { flag::NOT_NULL } else { 0 };
    if spec.primary {
        flags |= flag::PRI_KEY;
    }
    if spec.unique {
        flags |= flag::UNIQUE_KEY;
    }
    if spec.auto_increment {
        flags |= flag::AUTO_INCREMENT;
    }
    let (t, length, more, charset, decimals) = match spec.ty {
        SqlType::Integer {
            bytes,
            unsigned,
            width,
        } => {
            let (t, w) = match bytes {
                1 => (ty::TINY, 4),
                2 => (ty::SHORT, 6),
                3 => (ty::INT24, 9),
                4 => (ty::LONG, 11),
                _ => (ty::LONGLONG, 20),
            };
            let w = width.map_or(if unsigned && bytes < 8 { w - 1 } else { w }, u32::from);
            let u = if unsigned { flag::UNSIGNED } else { 0 };
            (t, w, flag::NUM | u, 63, 0)
        }
        SqlType::Char(n) => (
            ty::STRING,
            u32::from(n) * mb,
            if binary_coll { flag::BINARY } else { 0 },
            text_charset,
            0,
        ),
        SqlType::VarChar(n) => (
            ty::VAR_STRING,
            u32::from(n) * mb,
            if binary_coll { flag::BINARY } else { 0 },
            text_charset,
            0,
        ),
        SqlType::Text(max) => (
            ty::BLOB,
            max.saturating_mul(mb),
            flag::BLOB,
            text_charset,
            0,
        ),
        SqlType::Blob(max) => (ty::BLOB, max, flag::BLOB | flag::BINARY, 63, 0),
        SqlType::Decimal { precision, scale } => (
            ty::NEWDECIMAL,
            u32::from(precision) + u32::from(scale > 0) + 1,
            flag::NUM,
            63,
            scale,
        ),
        SqlType::Float { double, digits } => {
            let (t, len) = if double {
                (ty::DOUBLE, 22)
            } else {
                (ty::FLOAT, 12)
            };
            match digits {
                Some((m, d)) => (t, u32::from(m), flag::NUM, 63, d),
                None => (t, len, flag::NUM, 63, 31),
            }
        }
        SqlType::Date => (ty::DATE, 10, flag::BINARY, 63, 0),
        SqlType::Time => (ty::TIME, 8, flag::BINARY, 63, 0),
        SqlType::DateTime => (ty::DATETIME, 19, flag::BINARY, 63, 0),
        SqlType::Timestamp => (
            ty::TIMESTAMP,
            19,
            flag::BINARY | flag::TIMESTAMP | flag::UNSIGNED,
            63,
            0,
        ),
        SqlType::Year => (ty::YEAR, 4, flag::NUM | flag::UNSIGNED, 63, 0),
        SqlType::Enum(_) => {
            let longest = spec.members.iter().map(|m| m.len()).max().unwrap_or(0) as u32;
            (ty::STRING, longest * mb, flag::ENUM, text_charset, 0)
        }
        SqlType::Set(_) => {
            let all: usize = spec.members.iter().map(|m| m.len() + 1).sum();
            let len = all.saturating_sub(1) as u32;
            (ty::STRING, len * mb, flag::SET, text_charset, 0)
        }
    };
    ColumnDef {
        schema: src.db.clone(),
        table: src.table.clone(),
        org_table: src.org_table.clone(),
        name: name.to_string(),
        org_name: spec.name.clone(),
        charset,
        length,
        ty: t,
        flags: flags | more,
        decimals,
    }
}

/// A result column's definition, its type inferred from its values.
fn column_def<'a>(
    name: &str,
    values: impl Iterator<Item = &'a engine::sql::value::Datum>,
) -> ColumnDef {
    use engine::sql::value::Datum;
    let mut kind = None;
    let mut length = 0u32;
    for v in values {
        length = length.max(v.to_bytes().len() as u32);
        if v.is_null() {
            continue;
        }
        let k = match v {
            Datum::Int(_) => 0,
            Datum::UInt(_) => 1,
            Datum::Dec(..) => 2,
            Datum::Real(..) => 3,
            _ => 4,
        };
        kind = Some(match kind {
            None => k,
            Some(p) if p == k => k,
            // Integers beside unsigned integers: unsigned where any is.
            Some(p @ (0 | 1)) if k <= 1 => p.max(k),
            Some(_) => 4,
        });
    }
    let (t, flags, charset, decimals) = match kind {
        Some(0) => (ty::LONGLONG, flag::NUM, 63, 0),
        Some(1) => (ty::LONGLONG, flag::NUM | flag::UNSIGNED, 63, 0),
        Some(2) => (ty::NEWDECIMAL, flag::NUM, 63, 0),
        Some(3) => (ty::DOUBLE, flag::NUM, 63, 31),
        Some(_) => (ty::VAR_STRING, 0, u16::from(LATIN1), 0),
        None => (ty::NULL, flag::BINARY, 63, 0),
    };
    ColumnDef {
        name: name.to_string(),
        org_name: name.to_string(),
        charset,
        length: length.max(1),
        ty: t,
        flags,
        decimals,
        ..ColumnDef::default()
    }
}
