//! MySQL's errors and warnings: code, SQLSTATE and text, as the client
//! prints them (`ERROR 1146 (42S02): Table 'test.t' doesn't exist`). The
//! texts are those of MySQL 5.1's `errmsg.txt` for the codes innosim can
//! reach.

use super::errmsg::{ErrorInfo, ERRORS};
use crate::error::Error;
use std::fmt;

/// An error a statement ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// MySQL's error number.
    pub code: u16,
    /// The SQLSTATE.
    pub state: &'static str,
    /// The text.
    pub message: String,
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.message)
    }
}

impl std::error::Error for SqlError {}

/// The SQLSTATE MySQL gives an error number (`HY000` for a number it
/// does not list).
pub fn sqlstate(code: u16) -> &'static str {
    by_code(code).map_or("HY000", |e| e.2)
}

/// The error list's entry for a number.
pub fn by_code(code: u16) -> Option<&'static ErrorInfo> {
    // The list is dense from 1000 in number order.
    let e = ERRORS.get(usize::from(code.checked_sub(1000)?))?;
    (e.1 == code).then_some(e)
}

/// The error list's entry for a name (`ER_DUP_ENTRY`), any case.
pub fn by_name(name: &str) -> Option<&'static ErrorInfo> {
    ERRORS.iter().find(|e| e.0.eq_ignore_ascii_case(name))
}

impl SqlError {
    /// An error with MySQL's SQLSTATE for its code.
    pub fn new(code: u16, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state: sqlstate(code),
            message: message.into(),
        }
    }

    /// ER_PARSE_ERROR (1064) at byte `at` of `text`: MySQL's near-text is
    /// the statement from the token it could not take, at most 80 bytes,
    /// and the line that token is on.
    pub fn syntax(text: &str, at: usize) -> SqlError {
        let at = at.min(text.len());
        let mut end = (at + 80).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut start = at;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let line = 1 + text[..start].matches('\n').count();
        SqlError::new(
            1064,
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your \
                 MySQL server version for the right syntax to use near '{}' at line {line}",
                &text[start..end]
            ),
        )
    }

    /// ER_NOT_SUPPORTED_YET (1235).
    pub fn unsupported(what: &str) -> SqlError {
        SqlError::new(
            1235,
            format!("This version of MySQL doesn't yet support '{what}'"),
        )
    }

    /// ER_NO_SUCH_TABLE (1146) for `db`.`table`.
    pub fn no_such_table(db: &str, table: &str) -> SqlError {
        SqlError::new(1146, format!("Table '{db}.{table}' doesn't exist"))
    }

    /// ER_BAD_FIELD_ERROR (1054).
    pub fn bad_field(column: &str, clause: &str) -> SqlError {
        SqlError::new(1054, format!("Unknown column '{column}' in '{clause}'"))
    }

    /// ER_UNKNOWN_SYSTEM_VARIABLE (1193).
    pub fn unknown_variable(name: &str) -> SqlError {
        SqlError::new(1193, format!("Unknown system variable '{name}'"))
    }

    /// ER_WRONG_VALUE_FOR_VAR (1231).
    pub fn wrong_value(var: &str, value: &str) -> SqlError {
        SqlError::new(
            1231,
            format!("Variable '{var}' can't be set to the value of '{value}'"),
        )
    }

    /// An engine error, as the server reports it. `db` qualifies table
    /// names the way MySQL's messages do.
    pub fn from_engine(e: &Error, db: &str) -> SqlError {
        match e {
            Error::NoSuchTable(t) => SqlError::no_such_table(db, t),
            Error::TableExists(t) => SqlError::new(1050, format!("Table '{t}' already exists")),
            Error::CantCreateTable { table, reason } => SqlError::new(
                1005,
                format!("Can't create table '{db}.{table}' ({reason})"),
            ),
            // MySQL 5.1 prints a duplicate key through
            // ER_DUP_ENTRY_WITH_KEY_NAME's "%-.64s": 64 characters of it.
            Error::DuplicateKey { key, index } => SqlError::new(
                1062,
                format!(
                    "Duplicate entry '{}' for key '{index}'",
                    key.chars().take(64).collect::<String>()
                ),
            ),
            Error::Halted(_) | Error::Io { .. } => {
                SqlError::new(1030, format!("Got error from storage engine: {e}"))
            }
            other => match other.mysql_code() {
                Some(code) => SqlError::new(code, other.to_string()),
                None => SqlError::new(1030, format!("Got error from storage engine: {other}")),
            },
        }
    }
}

/// A note or warning a statement leaves for SHOW WARNINGS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `Note`, `Warning` or `Error`.
    pub level: &'static str,
    /// MySQL's error number.
    pub code: u16,
    /// The text.
    pub message: String,
}

impl Warning {
    /// A warning.
    pub fn warn(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Warning",
            code,
            message: message.into(),
        }
    }

    /// A note.
    pub fn note(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Note",
            code,
            message: message.into(),
        }
    }

    /// The error a statement ended with, as SHOW WARNINGS lists it.
    pub fn error(e: &SqlError) -> Warning {
        Warning {
            level: "Error",
            code: e.code,
            message: e.message.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_list_is_dense_and_numbered_from_1000() {
        for (k, e) in ERRORS.iter().enumerate() {
            assert_eq!(usize::from(e.1), 1000 + k, "{}", e.0);
        }
        assert_eq!(by_name("er_lock_wait_timeout").map(|e| e.1), Some(1205));
        assert_eq!(sqlstate(1062), "23000");
        assert_eq!(sqlstate(1146), "42S02");
        assert_eq!(sqlstate(1213), "40001");
        assert_eq!(sqlstate(1205), "HY000");
        assert_eq!(sqlstate(999), "HY000");
        assert_eq!(by_name("ER_WRONG_ARGUMENTS").map(|e| e.1), Some(1210));
        assert_eq!(by_code(1641), None);
    }

    #[test]
    fn syntax_errors_quote_eighty_bytes_from_the_token_and_its_line() {
        let t = "select *\nfrom t wher x = 1";
        let e = SqlError::syntax(t, t.find("wher").unwrap());
        assert_eq!(e.to_string(), "ERROR 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'wher x = 1' at line 2");
        let long = format!("select {}", "x".repeat(200));
        let e = SqlError::syntax(&long, 7);
        assert!(e.message.contains(&format!("near '{}' at", "x".repeat(80))));
        let e = SqlError::syntax("select", 6);
        assert!(e.message.ends_with("near '' at line 1"));
    }
}
