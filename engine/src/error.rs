//! The engine's error type: every operating error a caller can see.
//!
//! Programmer errors (broken invariants) are assertions, not variants here.
//! Where MySQL has an error code for a condition, [`Error::mysql_code`] gives
//! it, and `Display` is MySQL's message text where one exists.

use std::io;

/// Shorthand for results of engine operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An operating error of the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file operation failed. `op` names the operation (read, write,
    /// sync, ...), `file` the file.
    #[error("I/O error during {op} of '{file}': {source}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The file it was applied to.
        file: String,
        /// What the storage reported.
        source: io::Error,
    },
    /// The storage is full: a write or a file extension was refused.
    /// MySQL error 1114 (ER_RECORD_FILE_FULL).
    #[error("The table '{table}' is full")]
    TableFull {
        /// The table (or system file) that could not grow.
        table: String,
    },
    /// A page failed validation: bad checksum, header/trailer LSN mismatch,
    /// wrong page number or space id (a misdirected write), or an impossible
    /// layout. Never returned as data.
    #[error("corrupt page {page_no} in '{file}': {reason}")]
    CorruptPage {
        /// The file holding the page.
        file: String,
        /// The page number within the file.
        page_no: u32,
        /// Which check failed.
        reason: String,
    },
    /// The redo log or another on-disk structure is unusable.
    #[error("corruption in '{file}': {reason}")]
    Corrupt {
        /// The file.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// An insert or update would duplicate a unique key. MySQL 1062.
    #[error("Duplicate entry '{key}' for key '{index}'")]
    DuplicateKey {
        /// The key value, printed.
        key: String,
        /// The index name (PRIMARY for the clustered index).
        index: String,
    },
    /// A value does not fit its column. MySQL 1406.
    #[error("Data too long for column '{column}' at row 1")]
    DataTooLong {
        /// The column.
        column: String,
    },
    /// A value is of the wrong type or out of range for its column. MySQL 1264.
    #[error("Out of range value for column '{column}' at row 1")]
    OutOfRange {
        /// The column.
        column: String,
    },
    /// NULL given for a NOT NULL column. MySQL 1048.
    #[error("Column '{column}' cannot be null")]
    NotNull {
        /// The column.
        column: String,
    },
    /// An index whose records could be too big for its pages
    /// (`dict_index_too_big_for_tree`), refused at CREATE TABLE or CREATE
    /// INDEX. MySQL 1118.
    #[error("Row size too large. The maximum row size for the used table type, not counting BLOBs, is {half_page}. You have to change some columns to TEXT or BLOBs")]
    IndexTooBig {
        /// The index.
        index: String,
        /// Half the free space of an empty page, as MySQL's message says.
        half_page: usize,
    },
    /// A row is larger than a page can hold even with long columns stored
    /// off page. MySQL 1118.
    #[error("Row size too large ({size} > {max}). Changing some columns to TEXT or BLOB may help")]
    RowTooBig {
        /// The row's size on the page, in bytes.
        size: usize,
        /// The largest size allowed.
        max: usize,
    },
    /// No such table. MySQL 1146.
    #[error("Table '{0}' doesn't exist")]
    NoSuchTable(String),
    /// A table of that name exists. MySQL 1050.
    #[error("Table '{0}' already exists")]
    TableExists(String),
    /// A table definition is invalid. MySQL 1005 (can't create table) carries
    /// the reason.
    #[error("Can't create table '{table}' ({reason})")]
    CantCreateTable {
        /// The table.
        table: String,
        /// Why.
        reason: String,
    },
    /// An argument is malformed: wrong number of values, unknown column,
    /// unknown savepoint, and the like.
    #[error("{0}")]
    InvalidArgument(String),
    /// No index of that name in the table. MySQL 1176
    /// (ER_KEY_DOES_NOT_EXITS).
    #[error("Key '{index}' doesn't exist in table '{table}'")]
    NoSuchIndex {
        /// The index named.
        index: String,
        /// Its table.
        table: String,
    },
    /// A table or key that names a column twice. MySQL 1060.
    #[error("Duplicate column name '{0}'")]
    DuplicateColumn(String),
    /// CREATE INDEX of a name the table has. MySQL 1061.
    #[error("Duplicate key name '{0}'")]
    DuplicateKeyName(String),
    /// DROP INDEX of a name the table lacks. MySQL 1091.
    #[error("Can't DROP '{0}'; check that column/key exists")]
    CantDropKey(String),
    /// A DDL would wait for its table lock where its caller cannot wait
    /// ([`Engine::ddl_now`](crate::Engine::ddl_now)): another transaction
    /// holds a lock on the table that conflicts.
    #[error("table '{0}' is in use by an open transaction")]
    TableInUse(String),
    /// A transaction's read view is older than the index it would read
    /// (built by fast index creation after the view). MySQL 1412.
    #[error("Table definition has changed, please retry transaction")]
    TableDefChanged,
    /// A savepoint name is unknown. MySQL 1305.
    #[error("SAVEPOINT {0} does not exist")]
    NoSuchSavepoint(String),
    /// A lock wait timed out. MySQL 1205.
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// The transaction was chosen as a deadlock victim and rolled back.
    /// MySQL 1213.
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// A FOREIGN KEY constraint fails: a child row whose parent row does
    /// not exist (MySQL 1452), or a change of a parent row that child rows
    /// refer to (1451; also a cascade InnoDB refuses: deeper than 15, or
    /// updating a table an enclosing cascade updates).
    #[error(
        "Cannot {} row: a foreign key constraint fails ({}, {})",
        if *referenced { "delete or update a parent" } else { "add or update a child" },
        child,
        constraint.render(|t| format!("`{t}`"))
    )]
    ForeignKey {
        /// Whether the row is a parent (1451) rather than a child (1452).
        referenced: bool,
        /// The child table.
        child: String,
        /// The constraint, as its texts print it.
        constraint: Box<ConstraintText>,
    },
    /// DROP TABLE of a table another table's constraint references, with
    /// foreign_key_checks on. MySQL 1217.
    #[error("Cannot delete or update a parent row: a foreign key constraint fails")]
    ReferencedTable(String),
    /// DROP INDEX of the index a constraint searches. MySQL 1553.
    #[error("Cannot drop index '{0}': needed in a foreign key constraint")]
    IndexNeededByForeignKey(String),
    /// A session already has a statement waiting, or has none to resume.
    #[error("session {0} is busy or idle: {1}")]
    SessionState(u32, &'static str),
    /// The engine stopped after an error that makes carrying on unsafe (a
    /// failed fsync, a failed write of the log or of a page). Reopen the
    /// engine to recover.
    #[error("the engine has stopped after a fatal error ({0}); reopen it to recover")]
    Halted(String),
}

impl Error {
    /// Wraps an I/O error, classifying a full disk as [`Error::TableFull`].
    pub fn io(op: &'static str, file: &str, source: io::Error) -> Error {
        if source.kind() == io::ErrorKind::StorageFull {
            return Error::TableFull {
                table: file.to_string(),
            };
        }
        Error::Io {
            op,
            file: file.to_string(),
            source,
        }
    }

    /// The MySQL error code, where MySQL has one.
    pub fn mysql_code(&self) -> Option<u16> {
        Some(match self {
            Error::TableFull { .. } => 1114,
            Error::DuplicateKey { .. } => 1062,
            Error::DataTooLong { .. } => 1406,
            Error::OutOfRange { .. } => 1264,
            Error::NotNull { .. } => 1048,
            Error::RowTooBig { .. } | Error::IndexTooBig { .. } => 1118,
            Error::NoSuchTable(_) => 1146,
            Error::TableExists(_) => 1050,
            Error::CantCreateTable { .. } => 1005,
            Error::NoSuchSavepoint(_) => 1305,
            Error::TableDefChanged => 1412,
            Error::NoSuchIndex { .. } => 1176,
            Error::DuplicateColumn(_) => 1060,
            Error::DuplicateKeyName(_) => 1061,
            Error::CantDropKey(_) => 1091,
            Error::ForeignKey { referenced, .. } => {
                if *referenced {
                    1451
                } else {
                    1452
                }
            }
            Error::ReferencedTable(_) => 1217,
            Error::IndexNeededByForeignKey(_) => 1553,
            Error::LockWaitTimeout => 1205,
            Error::Deadlock => 1213,
            Error::CorruptPage { .. } | Error::Corrupt { .. } => 1877,
            _ => return None,
        })
    }

    /// Whether this error reports damaged on-disk data.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::CorruptPage { .. } | Error::Corrupt { .. })
    }

    /// Whether the engine has stopped and must be reopened.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Halted(_))
    }

    /// Whether this error stops the engine: after a failed read, write or
    /// sync, or damaged data met while changing pages, memory may hold
    /// changes the log does not (or the log is unusable), so only recovery
    /// may run. Nor may a failed statement's cleanup: it would read the
    /// half-changed pages and replace the first error with its own.
    pub fn stops_engine(&self) -> bool {
        matches!(
            self,
            Error::Io { .. } | Error::CorruptPage { .. } | Error::Corrupt { .. } | Error::Halted(_)
        )
    }
}

/// A FOREIGN KEY constraint as SHOW CREATE TABLE and InnoDB's error texts
/// print it (`dict_print_info_on_foreign_key_in_create_format`): the
/// dictionary's definition with its child columns named, so that an error
/// carries it without the error type depending on the dictionary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintText {
    /// The constraint's name.
    pub id: String,
    /// The child's constraint columns.
    pub columns: Vec<String>,
    /// The parent table's name.
    pub parent: String,
    /// The parent's referenced columns, one per child column.
    pub parent_columns: Vec<String>,
    /// The ON DELETE clause, if one is printed.
    pub on_delete: Option<&'static str>,
    /// The ON UPDATE clause, if one is printed.
    pub on_update: Option<&'static str>,
}

impl ConstraintText {
    /// ``CONSTRAINT `id` FOREIGN KEY (`a`) REFERENCES `t1` (`a`) ON DELETE
    /// CASCADE``, the parent's name as `parent` renders it (the server
    /// layer leaves out the database when it is the child's).
    pub fn render(&self, parent: impl Fn(&str) -> String) -> String {
        let list = |names: &[String]| {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = format!(
            "CONSTRAINT `{}` FOREIGN KEY ({}) REFERENCES {} ({})",
            self.id,
            list(&self.columns),
            parent(&self.parent),
            list(&self.parent_columns)
        );
        if let Some(c) = self.on_delete {
            out.push_str(" ON DELETE ");
            out.push_str(c);
        }
        if let Some(c) = self.on_update {
            out.push_str(" ON UPDATE ");
            out.push_str(c);
        }
        out
    }
}
