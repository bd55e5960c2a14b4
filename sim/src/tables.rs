//! The table shapes the benchmarks, the simulator and the tests share:
//! sysbench's table, a table with a long column, and the scratch tables
//! the workloads create and drop.

use engine::{ColumnDef, ColumnType, IndexDef, RowFormat, TableDef};

/// sysbench's table: id INT UNSIGNED primary key, k INT UNSIGNED with a
/// secondary index, c CHAR(120), pad CHAR(60).
pub fn sbtest(name: &str, fmt: RowFormat) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::INT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "k".into(),
                ty: ColumnType::INT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "c".into(),
                ty: ColumnType::Char(120),
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "pad".into(),
                ty: ColumnType::Char(60),
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "k".into(),
            columns: vec![1],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: fmt,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

/// A table with a long column: id BIGINT primary key, v VARCHAR(40) NULL
/// with a secondary index, doc MEDIUMTEXT NULL.
pub fn docs(name: &str, fmt: RowFormat) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::BIGINT,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "v".into(),
                ty: ColumnType::VarChar(40),
                nullable: true,
                collation: Default::default(),
            },
            ColumnDef {
                name: "doc".into(),
                ty: ColumnType::MEDIUMTEXT,
                nullable: true,
                collation: Default::default(),
            },
        ],
        // `s2` has no primary key: InnoDB clusters it on DB_ROW_ID, and
        // recovery counts its rows' ids by reading its tree.
        primary_key: if name == "s2" { Vec::new() } else { vec![0] },
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "v".into(),
            columns: vec![1],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: fmt,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

/// A scratch table, created and dropped while the workload runs: id INT
/// UNSIGNED (the primary key of `s1`; `s2` has none), v INT NULL with a
/// secondary index (a tablespace with two trees, or with
/// innodb_file_per_table off two trees in the system tablespace).
pub fn scratch(name: &str, fmt: RowFormat) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::INT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "v".into(),
                ty: ColumnType::INT,
                nullable: true,
                collation: Default::default(),
            },
        ],
        // `s2` has no primary key: InnoDB clusters it on DB_ROW_ID, and
        // recovery counts its rows' ids by reading its tree.
        primary_key: if name == "s2" { Vec::new() } else { vec![0] },
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "v".into(),
            columns: vec![1],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: fmt,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}
