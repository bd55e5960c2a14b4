//! How clients print replies: mysqltest's tab-separated result sets and
//! the mysql client's boxed tables and `\G` records.

use super::{Reply, Warning};

/// A result set as mysqltest writes it: a header line of column names,
/// then one line per row, fields separated by tabs, NULL as `NULL`.
pub fn tabbed(columns: &[String], rows: &[Vec<super::Datum>]) -> String {
    let mut s = columns.join("\t");
    s.push('\n');
    for r in rows {
        s.push_str(&r.iter().map(|d| d.render()).collect::<Vec<_>>().join("\t"));
        s.push('\n');
    }
    s
}

/// Warnings as mysqltest lists them after a statement.
pub fn warnings_block(w: &[Warning]) -> String {
    let mut s = String::from("Warnings:\n");
    for w in w {
        s.push_str(&format!("{}\t{}\t{}\n", w.level, w.code, w.message));
    }
    s
}

/// A result set as the mysql client draws it: names and strings
/// left-justified, a numeric column's values (NULL among them)
/// right-justified, as `print_table_data` does by the field's type. A
/// column counts as numeric here when it holds a number and nothing but
/// numbers and NULLs.
pub fn boxed(columns: &[String], rows: &[Vec<super::Datum>]) -> String {
    use super::Datum;
    let numeric: Vec<bool> = (0..columns.len())
        .map(|i| {
            let vals = || rows.iter().filter_map(|r| r.get(i));
            vals().any(|d| !matches!(d, Datum::Null))
                && vals().all(|d| !matches!(d, Datum::Str(_) | Datum::Hex(_)))
        })
        .collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|d| d.render()).collect())
        .collect();
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for r in &cells {
        for (i, c) in r.iter().enumerate() {
            // A multi-line cell widens by its longest line.
            let w = c.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            widths[i] = widths[i].max(w);
        }
    }
    let line = {
        let mut s = String::from("+");
        for w in &widths {
            s.push_str(&"-".repeat(w + 2));
            s.push('+');
        }
        s.push('\n');
        s
    };
    let row = |vals: &[String], right: &[bool]| {
        let mut s = String::from("|");
        for (i, (v, w)) in vals.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w.saturating_sub(v.chars().count()));
            if right.get(i) == Some(&true) {
                s.push_str(&format!(" {pad}{v} |"));
            } else {
                s.push_str(&format!(" {v}{pad} |"));
            }
        }
        s.push('\n');
        s
    };
    let mut s = line.clone();
    s.push_str(&row(columns, &[]));
    s.push_str(&line);
    for r in &cells {
        s.push_str(&row(r, &numeric));
    }
    if !cells.is_empty() {
        s.push_str(&line);
    }
    s
}

/// A result set as `\G` prints it: one record per row.
pub fn vertical(columns: &[String], rows: &[Vec<super::Datum>]) -> String {
    let w = columns.iter().map(|c| c.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        s.push_str(&format!(
            "*************************** {}. row ***************************\n",
            i + 1
        ));
        for (c, d) in columns.iter().zip(r) {
            s.push_str(&format!("{c:>w$}: {}\n", d.render()));
        }
    }
    s
}

/// The mysql client's summary line of a reply (times left out: they are
/// the simulated clock's, and a transcript should not depend on them).
pub fn summary(reply: &Reply) -> String {
    match reply {
        Reply::Ok {
            affected,
            info,
            warnings,
        } => {
            let mut s = format!(
                "Query OK, {affected} row{} affected",
                if *affected == 1 { "" } else { "s" }
            );
            if *warnings > 0 {
                s.push_str(&format!(
                    ", {warnings} warning{}",
                    if *warnings == 1 { "" } else { "s" }
                ));
            }
            if let Some(i) = info {
                s.push('\n');
                s.push_str(i);
            }
            s
        }
        Reply::Rows { rows, warnings, .. } => {
            let mut s = match rows.len() {
                0 => "Empty set".to_string(),
                1 => "1 row in set".to_string(),
                n => format!("{n} rows in set"),
            };
            if *warnings > 0 {
                s.push_str(&format!(
                    ", {warnings} warning{}",
                    if *warnings == 1 { "" } else { "s" }
                ));
            }
            s
        }
        Reply::Error(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Datum;
    use super::*;

    #[test]
    fn boxed_tables_look_like_the_clients() {
        let t = boxed(
            &["Level".into(), "Code".into()],
            &[vec![Datum::str("Warning"), Datum::Int(1478)]],
        );
        assert_eq!(
            t,
            "+---------+------+\n| Level   | Code |\n+---------+------+\n| Warning | 1478 |\n+---------+------+\n"
        );
    }

    #[test]
    fn numbers_are_right_justified_strings_left() {
        let t = boxed(
            &["k".into(), "count(*)".into(), "c".into()],
            &[
                vec![Datum::Null, Datum::Int(3), Datum::str("a")],
                vec![Datum::Int(12), Datum::Int(1), Datum::Null],
            ],
        );
        assert_eq!(
            t,
            "+------+----------+------+\n\
             | k    | count(*) | c    |\n\
             +------+----------+------+\n\
             | NULL |        3 | a    |\n\
             |   12 |        1 | NULL |\n\
             +------+----------+------+\n"
        );
    }
}
