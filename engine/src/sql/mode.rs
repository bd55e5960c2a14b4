//! sql_mode: the flags the server layer has, each changing what it does,
//! and the names MySQL 5.1 knows (`sql_mode_names` in `sql/mysqld.cc`).

/// The sql_mode flags the server layer has: each changes what it does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SqlMode {
    /// ANSI_QUOTES: `"` quotes identifiers, not strings, and the server
    /// quotes the names it shows (INNODB_LOCKS.lock_table) with it.
    pub ansi_quotes: bool,
    /// STRICT_TRANS_TABLES: a value a column cannot take fails the
    /// statement (for InnoDB's tables, all transactional).
    pub strict_trans_tables: bool,
    /// STRICT_ALL_TABLES: the same, for every table.
    pub strict_all_tables: bool,
}

impl SqlMode {
    /// The modes MySQL 5.1 knows (`sql_mode_names` in `sql/mysqld.cc`),
    /// in its order: a value names them in this order.
    pub const MYSQL_NAMES: [&'static str; 31] = [
        "REAL_AS_FLOAT",
        "PIPES_AS_CONCAT",
        "ANSI_QUOTES",
        "IGNORE_SPACE",
        "NOT_USED",
        "ONLY_FULL_GROUP_BY",
        "NO_UNSIGNED_SUBTRACTION",
        "NO_DIR_IN_CREATE",
        "POSTGRESQL",
        "ORACLE",
        "MSSQL",
        "DB2",
        "MAXDB",
        "NO_KEY_OPTIONS",
        "NO_TABLE_OPTIONS",
        "NO_FIELD_OPTIONS",
        "MYSQL323",
        "MYSQL40",
        "ANSI",
        "NO_AUTO_VALUE_ON_ZERO",
        "NO_BACKSLASH_ESCAPES",
        "STRICT_TRANS_TABLES",
        "STRICT_ALL_TABLES",
        "NO_ZERO_IN_DATE",
        "NO_ZERO_DATE",
        "ALLOW_INVALID_DATES",
        "ERROR_FOR_DIVISION_BY_ZERO",
        "TRADITIONAL",
        "NO_AUTO_CREATE_USER",
        "HIGH_NOT_PRECEDENCE",
        "NO_ENGINE_SUBSTITUTION",
    ];

    /// The value as `@@sql_mode` shows it: the names in MySQL's order.
    pub fn render(self) -> String {
        [
            (self.ansi_quotes, "ANSI_QUOTES"),
            (self.strict_trans_tables, "STRICT_TRANS_TABLES"),
            (self.strict_all_tables, "STRICT_ALL_TABLES"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
    }

    /// Whether a value a column cannot take fails the statement (either
    /// strict mode: InnoDB's tables are transactional), rather than being
    /// adjusted with a warning as MySQL 5.1's default ('') does.
    pub fn strict(self) -> bool {
        self.strict_trans_tables || self.strict_all_tables
    }

    /// The mode a value names: names separated by commas, any case
    /// (`Err` with the name MySQL does not know, or with one whose
    /// behaviour innosim lacks, as `Ok(Err(name))`).
    pub fn parse(value: &str) -> Result<Result<SqlMode, String>, String> {
        let mut mode = SqlMode::default();
        for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let upper = name.to_ascii_uppercase();
            if !SqlMode::MYSQL_NAMES.contains(&upper.as_str()) {
                return Err(name.to_string());
            }
            match upper.as_str() {
                "ANSI_QUOTES" => mode.ansi_quotes = true,
                "STRICT_TRANS_TABLES" => mode.strict_trans_tables = true,
                "STRICT_ALL_TABLES" => mode.strict_all_tables = true,
                _ => return Ok(Err(upper)),
            }
        }
        Ok(Ok(mode))
    }
}
