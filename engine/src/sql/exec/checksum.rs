//! CHECKSUM TABLE, as MySQL 5.1 computes it for a table that keeps no
//! live checksum, InnoDB's (`mysql_checksum_table`, sql_table.cc): for
//! each row, a CRC-32 (`my_checksum`, zlib's crc32) over the row's NULL
//! bits and then each column as the server's record holds it (a fixed
//! column's bytes, a VARCHAR's, TEXT's or BLOB's value), the rows' CRCs
//! summed modulo 2^32. QUICK answers NULL, InnoDB having no live checksum.
//!
//! The rows are the committed ones, read as a consistent read of their
//! own: what `innodb.result` of MySQL 5.1.45 records (a checksum in a
//! transaction that inserted a row it has not committed leaves that row
//! out).

use super::*;

/// One column of a server record, as the checksum reads it.
enum Part {
    /// A fixed-size field's bytes (`f->ptr`, `f->pack_length()`).
    Fixed(Vec<u8>),
    /// A VARCHAR, TEXT or BLOB: its value (`f->val_str()`).
    Var(Vec<u8>),
}

/// A NULL bitmap and fields as `TABLE::record[0]` lays them out.
struct Layout {
    /// Rows are packed (`HA_OPTION_PACK_RECORD`: a VARCHAR, TEXT or BLOB
    /// column, or ROW_FORMAT=DYNAMIC): no bit is kept for a deleted mark.
    packed: bool,
    /// The NULL bit of each column that takes NULL.
    null_bit: Vec<Option<usize>>,
    /// Bytes of the NULL bitmap.
    null_bytes: usize,
    /// The bits of the last byte past the last NULL bit (`last_null_bit_pos`).
    last_bit: usize,
}

impl Layout {
    fn of(meta: &TableMeta) -> Layout {
        let packed = meta
            .options
            .row_format
            .as_deref()
            .is_some_and(|r| r.eq_ignore_ascii_case("DYNAMIC"))
            || meta.columns.iter().any(|c| {
                matches!(c.ty, SqlType::Text(_) | SqlType::Blob(_))
                    || (matches!(c.ty, SqlType::VarChar(_))
                        && !meta
                            .options
                            .row_format
                            .as_deref()
                            .is_some_and(|r| r.eq_ignore_ascii_case("FIXED")))
            });
        let mut bit = usize::from(!packed);
        let null_bit = (meta.columns.iter())
            .map(|c| {
                (!c.not_null).then(|| {
                    bit += 1;
                    bit - 1
                })
            })
            .collect();
        Layout {
            packed,
            null_bit,
            null_bytes: bit.div_ceil(8),
            last_bit: bit % 8,
        }
    }
}

impl Server {
    /// CHECKSUM TABLE t, ... [QUICK | EXTENDED]: a row per table, its name
    /// as `db.table` and its checksum (NULL, with error 1146 among the
    /// warnings, for a table that does not exist).
    pub(super) fn checksum_tables(
        &mut self,
        c: ConnId,
        tables: Vec<TableName>,
        quick: bool,
    ) -> R<Outcome> {
        let mut rows = Vec::new();
        for t in tables {
            let db = self.db_of(c, &t)?;
            let shown = Datum::str(&format!("{db}.{}", t.name));
            let (name, meta) = match self.resolve(c, &t) {
                Ok(x) => x,
                Err(e) => {
                    self.warn(c, Warning::error(&e));
                    rows.push(vec![shown, Datum::Null]);
                    continue;
                }
            };
            if quick {
                rows.push(vec![shown, Datum::Null]);
                continue;
            }
            let read = Request::scan_all(&name);
            let values = match self.engine.execute(self.internal, read) {
                Ok(Step::Done(Response::Rows(r))) => r,
                Ok(other) => unreachable!("a consistent read answered {other:?}"),
                Err(e) => return Err(self.engine_err(c, &e)),
            };
            rows.push(vec![
                shown,
                Datum::UInt(u64::from(table_checksum(&meta, &values))),
            ]);
        }
        Ok(Outcome::Done(Reply::Rows {
            columns: vec!["Table".into(), "Checksum".into()],
            rows,
            warnings: 0,
        }))
    }
}

/// The checksum of a table whose rows, in the engine's form, are `rows`.
fn table_checksum(meta: &TableMeta, rows: &[Vec<Value>]) -> u32 {
    let layout = Layout::of(meta);
    let null_mask = (256u32 - (1u32 << layout.last_bit)) as u8;
    let mut sum = 0u32;
    for row in rows {
        let mut crc = crc32fast::Hasher::new();
        if layout.null_bytes > 0 {
            let mut bits = vec![0u8; layout.null_bytes];
            for (v, bit) in row.iter().zip(&layout.null_bit) {
                if let (Some(b), true) = (bit, v.is_null()) {
                    bits[b / 8] |= 1 << (b % 8);
                }
            }
            // "fix undefined null bits", as the server does.
            bits[layout.null_bytes - 1] |= null_mask;
            if !layout.packed {
                bits[0] |= 1;
            }
            crc.update(&bits);
        }
        for (col, v) in meta.columns.iter().zip(row) {
            match record_part(col, v) {
                Part::Fixed(b) | Part::Var(b) => crc.update(&b),
            }
        }
        sum = sum.wrapping_add(crc.finalize());
    }
    sum
}

/// Column `col`'s part of a server record holding engine value `v`. A
/// NULL's bytes are those of the column's DEFAULT (InnoDB copies the
/// table's default record into a NULL column, `row_sel_store_mysql_rec`),
/// or of its reset value where the default is NULL.
fn record_part(col: &ColumnSpec, v: &Value) -> Part {
    if v.is_null() {
        let default = col
            .default
            .as_ref()
            .filter(|d| !d.is_null() && !col.default_now)
            .and_then(|d| schema::coerce_column(col, d).ok())
            .map(|d| d.to_value());
        return match default {
            Some(d) => record_part(col, &d),
            None => reset_part(col),
        };
    }
    let int = |n: usize| -> Part {
        let x: i128 = match v {
            Value::Int(i) => i128::from(*i),
            Value::UInt(u) => i128::from(*u),
            _ => 0,
        };
        Part::Fixed((x as u128).to_le_bytes()[..n].to_vec())
    };
    let bytes = || match v {
        Value::Bytes(b) => b.clone(),
        _ => Vec::new(),
    };
    match col.ty {
        SqlType::Integer { bytes, .. } => int(usize::from(bytes)),
        SqlType::Date | SqlType::Time => int(3),
        SqlType::DateTime => int(8),
        SqlType::Timestamp => int(4),
        SqlType::Year => int(1),
        SqlType::Enum(n) => int(if n > 255 { 2 } else { 1 }),
        SqlType::Set(n) => int(set_bytes(n)),
        SqlType::Char(n) => {
            let mut b = bytes();
            b.resize(usize::from(n) * usize::from(col.char_bytes()), b' ');
            Part::Fixed(b)
        }
        SqlType::VarChar(_) | SqlType::Text(_) | SqlType::Blob(_) => Part::Var(bytes()),
        // decimal2bin's bytes, the server's record form too.
        SqlType::Decimal { .. } => Part::Fixed(bytes()),
        SqlType::Float { double, .. } => {
            let x = match field::read(col.ty, &col.members, v.clone()) {
                Datum::Real(bits, _) => f64::from_bits(bits),
                d => d.as_f64().unwrap_or(0.0),
            };
            Part::Fixed(if double {
                x.to_le_bytes().to_vec()
            } else {
                (x as f32).to_le_bytes().to_vec()
            })
        }
    }
}

/// A column's bytes when its DEFAULT is NULL (`Field::reset`): spaces in a
/// CHAR, DECIMAL's zero, zeros elsewhere; nothing for a VARCHAR, TEXT or
/// BLOB.
fn reset_part(col: &ColumnSpec) -> Part {
    match col.ty {
        SqlType::Char(n) => Part::Fixed(vec![b' '; usize::from(n) * usize::from(col.char_bytes())]),
        SqlType::VarChar(_) | SqlType::Text(_) | SqlType::Blob(_) => Part::Var(Vec::new()),
        SqlType::Decimal { .. } => match schema::coerce_column(col, &Datum::Int(0)) {
            Ok(d) => record_part(col, &d.to_value()),
            Err(_) => Part::Fixed(Vec::new()),
        },
        _ => match record_part(col, &Value::Int(0)) {
            Part::Fixed(b) => Part::Fixed(vec![0; b.len()]),
            p => p,
        },
    }
}

/// A SET's record bytes for `n` members (`get_set_pack_length`).
fn set_bytes(n: u8) -> usize {
    let len = usize::from(n).div_ceil(8);
    if len > 4 {
        8
    } else {
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(sql: &str) -> TableMeta {
        let text = format!("CREATE TABLE t ({sql}) ENGINE=InnoDB");
        schema::load(text.as_bytes()).expect("a definition")
    }

    /// The figures MySQL 5.1.45's `innodb.result` records.
    #[test]
    fn checksums_are_mysql_5_1s() {
        let m = meta("a int not null");
        let rows = |ids: &[i64]| ids.iter().map(|&i| vec![Value::Int(i)]).collect::<Vec<_>>();
        assert_eq!(table_checksum(&m, &rows(&[1, 2])), 1_531_596_814);
        assert_eq!(table_checksum(&m, &rows(&[1, 2, 3])), 2_050_879_373);
        let m = meta("a int, b varchar(200), c text not null");
        let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        let rows = vec![
            vec![Value::Int(1), b("aaa"), b("bbb")],
            vec![Value::Null, b(""), b("ccccc")],
            vec![Value::Int(0), Value::Null, b("")],
        ];
        assert_eq!(table_checksum(&m, &rows), 2_948_697_075);
    }

    #[test]
    fn record_layouts_follow_the_server() {
        // Not packed: a bit for the deleted mark first.
        let l = Layout::of(&meta("a int, b char(3) not null"));
        assert!(!l.packed);
        assert_eq!(
            (l.null_bit.clone(), l.null_bytes, l.last_bit),
            (vec![Some(1), None], 1, 2)
        );
        // ROW_FORMAT=DYNAMIC packs rows of fixed columns too.
        let mut m = meta("a int");
        m.options.row_format = Some("DYNAMIC".into());
        assert!(Layout::of(&m).packed);
        assert_eq!(set_bytes(3), 1);
        assert_eq!(set_bytes(17), 3);
        assert_eq!(set_bytes(33), 8);
    }
}
