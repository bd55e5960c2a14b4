//! Table names as the engine keeps them: `db$table`, each part in MySQL's
//! filename encoding (`tablename_to_filename`), and back.

/// A table's engine name: `db$table`, each part in MySQL's filename
/// encoding ([`encode_name`]), as InnoDB names a table `db/table` from
/// the server's `tablename_to_filename`.
pub fn engine_name(db: &str, table: &str) -> String {
    format!("{}${}", encode_name(db), encode_name(table))
}

/// Splits an engine name into database and table, decoded (`None` for a
/// table not made by the server).
pub fn split_name(name: &str) -> Option<(String, String)> {
    let (db, table) = name.split_once('$')?;
    Some((decode_name(db)?, decode_name(table)?))
}

/// A name as MySQL 5.1's `filename` character set writes it into a file
/// name (`strings/ctype-utf8.c`, `my_wc_mb_filename`): ASCII letters,
/// digits and `_` as they are, any other character as `@` and its code
/// point in four hex digits (`` `t' `` is `@0060t@0027`). MySQL writes
/// the accented Latin letters in a shorter form of its own (`À` is
/// `@0G`); here they take the four-digit form, which MySQL reads as well.
pub fn encode_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push_str(&format!("@{:04x}", u32::from(c)));
        }
    }
    out
}

/// The name [`encode_name`] wrote (`None` for a form it cannot have
/// written).
pub fn decode_name(encoded: &str) -> Option<String> {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(c) = rest.chars().next() {
        if c == '@' {
            let hex = rest.get(1..5)?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            out.push(char::from_u32(code)?);
            rest = &rest[5..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Some(out)
}
