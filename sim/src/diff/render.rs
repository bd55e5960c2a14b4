//! A plan's tables and statements as SQL text, which both sides of a diff
//! run: `CREATE TABLE` from the engine's table definition, and each planned
//! statement as the query a MySQL client would send for it (a key lookup as
//! `WHERE` on every key column, a scan as a range on its index with
//! `FORCE INDEX`, `ORDER BY` the index's columns and then the primary
//! key's, and `LIMIT`, so that both servers walk the same index in the same
//! direction and return the rows in one order).
//!
//! # What a scenario holds
//!
//! The scenarios hold what the fuzzer's plans hold: inserts, updates and deletes by key, point,
//! range and locking reads, savepoints, every isolation level, foreign keys, CREATE and DROP
//! INDEX and TRUNCATE between transactions (a scenario is its plan's first 40 transactions with
//! the DDL of the rest drawn in, each where its place in the whole plan falls, so index builds
//! and their spills reach the diff), and the plans' filtered UPDATEs and DELETEs of a range of
//! `sb` (`UPDATE sb SET ... WHERE id >= a AND id <= b AND k + 0 < n`: `k + 0` so that both
//! servers read the range through the primary key, a single-table DELETE taking no index hint)
//! and copying ALTERs (`ALTER TABLE t ENGINE=InnoDB, ALGORITHM=COPY`: MariaDB rebuilds in place
//! otherwise and reports no rows). Half the scenarios (even seeds) give innosim's index builds
//! a 128-byte sort buffer, so that builds spill to their merge files (a server's is a startup
//! setting; how an index is sorted changes no answer).

use crate::plan::{format_of, PKey, PValue, PlannedStmt};
use engine::dict::FkAction;
use engine::{RowFormat, TableDef};

/// A string literal: quotes doubled, backslashes escaped (`sql_mode` is
/// empty on both sides, so a backslash is an escape).
pub fn quote(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('\'');
    for &b in bytes {
        match b {
            b'\'' => s.push_str("''"),
            b'\\' => s.push_str("\\\\"),
            0 => s.push_str("\\0"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            0x1a => s.push_str("\\Z"),
            // latin1: every byte is one character.
            _ => s.push(char::from(b)),
        }
    }
    s.push('\'');
    s
}

/// A plan value as a literal.
pub fn literal(v: &PValue) -> String {
    match v {
        PValue::Null => "NULL".into(),
        PValue::Int(i) => i.to_string(),
        PValue::UInt(u) => u.to_string(),
        PValue::Text(t) => quote(t.as_bytes()),
        PValue::Long { .. } => match v.value() {
            engine::Value::Bytes(b) => quote(&b),
            _ => unreachable!("a long value is bytes"),
        },
    }
}

/// A backquoted identifier.
pub fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn action(a: FkAction) -> &'static str {
    match a {
        FkAction::Restrict => "RESTRICT",
        FkAction::NoAction => "NO ACTION",
        FkAction::Cascade => "CASCADE",
        FkAction::SetNull => "SET NULL",
    }
}

/// `ROW_FORMAT=...` (and `KEY_BLOCK_SIZE=n`) for a format.
pub fn table_options(fmt: RowFormat) -> String {
    match fmt {
        RowFormat::Redundant => "ROW_FORMAT=REDUNDANT".into(),
        RowFormat::Compact => "ROW_FORMAT=COMPACT".into(),
        RowFormat::Dynamic => "ROW_FORMAT=DYNAMIC".into(),
        RowFormat::Compressed { key_block_size } => {
            format!("ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE={key_block_size}")
        }
        other => format!("ROW_FORMAT={other:?}"),
    }
}

/// The key part list of an index: columns by name, with prefix lengths.
fn key_parts(def: &TableDef, columns: &[usize], prefixes: &[u16]) -> String {
    columns
        .iter()
        .enumerate()
        .map(|(i, &c)| match prefixes.get(i) {
            Some(&p) if p > 0 => format!("{}({p})", ident(&def.columns[c].name)),
            _ => ident(&def.columns[c].name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CREATE TABLE` for a definition.
pub fn create_table(def: &TableDef) -> String {
    let mut parts: Vec<String> = def
        .columns
        .iter()
        .map(|c| {
            let mut s = format!("{} {}", ident(&c.name), c.ty.sql_name());
            let textual = matches!(
                c.ty,
                engine::ColumnType::Char(_)
                    | engine::ColumnType::VarChar(_)
                    | engine::ColumnType::Text { .. }
            );
            // The engine's typed tables leave a column's collation binary
            // when they do not care; in SQL such a column takes the
            // server's default (latin1_swedish_ci), the same on both sides.
            if textual && c.collation != engine::record::collation::Collation::Binary {
                s.push_str(&format!(" COLLATE {}", c.collation.name()));
            }
            s.push_str(if c.nullable { " NULL" } else { " NOT NULL" });
            s
        })
        .collect();
    if !def.primary_key.is_empty() {
        parts.push(format!(
            "PRIMARY KEY ({})",
            key_parts(def, &def.primary_key, &def.primary_prefixes)
        ));
    }
    for i in &def.indexes {
        parts.push(format!(
            "{}KEY {} ({})",
            if i.unique { "UNIQUE " } else { "" },
            ident(&i.name),
            key_parts(def, &i.columns, &i.prefixes)
        ));
    }
    for fk in &def.foreign {
        let cols: Vec<String> = fk
            .columns
            .iter()
            .map(|&c| ident(&def.columns[c].name))
            .collect();
        let parent_cols: Vec<String> = fk.parent_columns.iter().map(|c| ident(c)).collect();
        parts.push(format!(
            "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({}) ON DELETE {} ON UPDATE {}",
            ident(&fk.id),
            cols.join(", "),
            ident(&fk.parent),
            parent_cols.join(", "),
            action(fk.on_delete),
            action(fk.on_update)
        ));
    }
    format!(
        "CREATE TABLE {} ({}) ENGINE=InnoDB {}",
        ident(&def.name),
        parts.join(", "),
        table_options(def.row_format)
    )
}

/// The table definitions a plan's statements name, by name.
pub struct Tables<'a> {
    defs: &'a [TableDef],
}

impl<'a> Tables<'a> {
    /// Over `defs`.
    pub fn new(defs: &'a [TableDef]) -> Self {
        Tables { defs }
    }

    fn def(&self, table: &str) -> Result<&'a TableDef, String> {
        self.defs
            .iter()
            .find(|d| d.name == table)
            .ok_or_else(|| format!("the plan names a table it has no definition of: {table}"))
    }

    /// `WHERE` on every primary key column.
    fn key_condition(&self, table: &str, key: &PKey) -> Result<String, String> {
        let def = self.def(table)?;
        if def.primary_key.len() != key.0.len() {
            return Err(format!(
                "a key of {} values for {table}'s {}-column primary key",
                key.0.len(),
                def.primary_key.len()
            ));
        }
        Ok(def
            .primary_key
            .iter()
            .zip(&key.0)
            .map(|(&c, v)| match v {
                PValue::Null => format!("{} IS NULL", ident(&def.columns[c].name)),
                v => format!("{} = {}", ident(&def.columns[c].name), literal(v)),
            })
            .collect::<Vec<_>>()
            .join(" AND "))
    }

    /// A scan: the rows of `index` (the primary key when `None`) from
    /// `from` to `to` in index order (descending if `reverse`), `LIMIT`.
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        table: &str,
        index: &Option<String>,
        reverse: bool,
        limit: usize,
        (from, to, open): (&Option<PValue>, &Option<PValue>, bool),
        lock: &str,
    ) -> Result<String, String> {
        let def = self.def(table)?;
        // The index's first column carries the bounds; the order is the
        // index's columns, then the primary key's (a secondary index's
        // entries are ordered by both).
        let (force, order_cols): (String, Vec<usize>) = match index {
            None if def.primary_key.is_empty() => (String::new(), Vec::new()),
            None => (" FORCE INDEX (PRIMARY)".into(), def.primary_key.clone()),
            Some(name) => {
                let cols = def
                    .indexes
                    .iter()
                    .find(|i| i.name == *name)
                    .map(|i| i.columns.clone())
                    .unwrap_or_default();
                let mut order = cols;
                for &c in &def.primary_key {
                    if !order.contains(&c) {
                        order.push(c);
                    }
                }
                (format!(" FORCE INDEX ({})", ident(name)), order)
            }
        };
        let bound_col = match index {
            None => def.primary_key.first().copied(),
            Some(name) => match def.indexes.iter().find(|i| i.name == *name) {
                Some(i) => i.columns.first().copied(),
                // An index the plan creates later (or never): the server
                // says 1176 before it looks at the condition; any column
                // will do.
                None => Some(0),
            },
        };
        let mut conds = Vec::new();
        if let Some(c) = bound_col {
            let col = ident(&def.columns[c].name);
            let (low, high) = if reverse { (to, from) } else { (from, to) };
            let (lo_op, hi_op) = if open { (">", "<") } else { (">=", "<=") };
            if let Some(v) = low {
                conds.push(format!("{col} {lo_op} {}", literal(v)));
            }
            if let Some(v) = high {
                conds.push(format!("{col} {hi_op} {}", literal(v)));
            }
        }
        let mut sql = format!("SELECT * FROM {}{force}", ident(table));
        if !conds.is_empty() {
            sql.push_str(&format!(" WHERE {}", conds.join(" AND ")));
        }
        if !order_cols.is_empty() {
            let dir = if reverse { " DESC" } else { "" };
            let order: Vec<String> = order_cols
                .iter()
                .map(|&c| format!("{}{dir}", ident(&def.columns[c].name)))
                .collect();
            sql.push_str(&format!(" ORDER BY {}", order.join(", ")));
        }
        sql.push_str(&format!(" LIMIT {limit}{lock}"));
        Ok(sql)
    }

    /// A planned statement as SQL; `None` for a transfer, which the
    /// scenario runs as reads and then updates computed from them.
    pub fn statement(&self, st: &PlannedStmt) -> Result<Option<String>, String> {
        Ok(Some(match st {
            PlannedStmt::Insert { table, row } => format!(
                "INSERT INTO {} VALUES ({})",
                ident(table),
                row.iter().map(literal).collect::<Vec<_>>().join(", ")
            ),
            PlannedStmt::Update { table, key, set } => {
                let sets: Vec<String> = set
                    .iter()
                    .map(|(c, v)| format!("{} = {}", ident(c), literal(v)))
                    .collect();
                format!(
                    "UPDATE {} SET {} WHERE {}",
                    ident(table),
                    sets.join(", "),
                    self.key_condition(table, key)?
                )
            }
            PlannedStmt::Delete { table, key } => format!(
                "DELETE FROM {} WHERE {}",
                ident(table),
                self.key_condition(table, key)?
            ),
            PlannedStmt::ChangeWhere {
                table,
                from,
                to,
                below,
                set,
            } => {
                // `k + 0`: a condition no index serves, so that both
                // servers read the range through the primary key (a
                // single-table DELETE takes no index hint).
                let filter = format!("`id` >= {from} AND `id` <= {to} AND `k` + 0 < {below}");
                if set.is_empty() {
                    format!("DELETE FROM {} WHERE {filter}", ident(table))
                } else {
                    let sets: Vec<String> = set
                        .iter()
                        .map(|(c, v)| format!("{} = {}", ident(c), literal(v)))
                        .collect();
                    format!(
                        "UPDATE {} SET {} WHERE {filter}",
                        ident(table),
                        sets.join(", ")
                    )
                }
            }
            PlannedStmt::Get { table, key } => format!(
                "SELECT * FROM {} WHERE {}",
                ident(table),
                self.key_condition(table, key)?
            ),
            PlannedStmt::LockingGet {
                table,
                key,
                exclusive,
            } => format!(
                "SELECT * FROM {} WHERE {}{}",
                ident(table),
                self.key_condition(table, key)?,
                lock_clause(*exclusive)
            ),
            PlannedStmt::Scan {
                table,
                index,
                reverse,
                limit,
                from,
                to,
                open,
            } => self.scan(table, index, *reverse, *limit, (from, to, *open), "")?,
            PlannedStmt::LockingScan {
                table,
                index,
                reverse,
                limit,
                from,
                to,
                open,
                exclusive,
            } => self.scan(
                table,
                index,
                *reverse,
                *limit,
                (from, to, *open),
                lock_clause(*exclusive),
            )?,
            PlannedStmt::Transfer { .. } => return Ok(None),
            PlannedStmt::Savepoint(n) => format!("SAVEPOINT {}", ident(n)),
            PlannedStmt::RollbackTo(n) => format!("ROLLBACK TO SAVEPOINT {}", ident(n)),
            PlannedStmt::ReleaseSavepoint(n) => format!("RELEASE SAVEPOINT {}", ident(n)),
            PlannedStmt::CreateTable { table, row_format } => create_table(
                &crate::tables::scratch(table, format_of(row_format).unwrap_or(RowFormat::Compact)),
            ),
            PlannedStmt::DropTable { table } => format!("DROP TABLE {}", ident(table)),
            PlannedStmt::TruncateTable { table } => format!("TRUNCATE TABLE {}", ident(table)),
            PlannedStmt::CreateIndex { table, index } => {
                let def = self.def(table)?;
                format!(
                    "CREATE {}INDEX {} ON {} ({})",
                    if index.unique { "UNIQUE " } else { "" },
                    ident(&index.name),
                    ident(table),
                    key_parts(def, &index.columns, &[])
                )
            }
            // MySQL 5.1 copies the table for any ALTER; MariaDB rebuilds
            // it in place unless told to copy, and reports no rows then.
            PlannedStmt::RebuildTable { table } => {
                format!("ALTER TABLE {} ENGINE=InnoDB, ALGORITHM=COPY", ident(table))
            }
            PlannedStmt::DropIndex { table, index } => {
                format!("DROP INDEX {} ON {}", ident(index), ident(table))
            }
        }))
    }
}

fn lock_clause(exclusive: bool) -> &'static str {
    if exclusive {
        " FOR UPDATE"
    } else {
        " LOCK IN SHARE MODE"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_what_a_server_reads_as_escapes() {
        assert_eq!(quote(b"it's a\\b"), "'it''s a\\\\b'");
        assert_eq!(quote(&[0, b'\n', 0x1a]), "'\\0\\n\\Z'");
        assert_eq!(literal(&PValue::Int(-3)), "-3");
        assert_eq!(literal(&PValue::Null), "NULL");
    }

    #[test]
    fn sysbench_table_renders_as_mysql_reads_it() {
        let def = crate::tables::sbtest("sb", RowFormat::Compressed { key_block_size: 8 });
        assert_eq!(
            create_table(&def),
            "CREATE TABLE `sb` (`id` int unsigned NOT NULL, `k` int unsigned NOT NULL, \
             `c` char(120) NOT NULL, `pad` char(60) NOT NULL, PRIMARY KEY (`id`), \
             KEY `k` (`k`)) ENGINE=InnoDB \
             ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8"
        );
    }

    #[test]
    fn a_descending_range_scan_names_its_index_and_order() {
        let defs = [crate::tables::sbtest("sb", RowFormat::Compact)];
        let t = Tables::new(&defs);
        let sql = t
            .statement(&PlannedStmt::LockingScan {
                table: "sb".into(),
                index: Some("k".into()),
                reverse: true,
                limit: 3,
                from: Some(PValue::UInt(9)),
                to: Some(PValue::UInt(2)),
                open: false,
                exclusive: true,
            })
            .unwrap()
            .unwrap();
        assert_eq!(
            sql,
            "SELECT * FROM `sb` FORCE INDEX (`k`) WHERE `k` >= 2 AND `k` <= 9 \
             ORDER BY `k` DESC, `id` DESC LIMIT 3 FOR UPDATE"
        );
    }
}
