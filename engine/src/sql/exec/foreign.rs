//! FOREIGN KEY clauses of CREATE TABLE and ALTER TABLE: the engine's
//! constraint definitions made from them, named as InnoDB names them, and
//! the keys MySQL 5.1 makes for them (`mysql_prepare_create_table`). What
//! the constraints need of the parent (its columns, an index, matching
//! types) the engine checks (errno 150).

use super::ddl::check_name;
use super::*;
use crate::dict::{ForeignDef, IndexDef, TableDef};

impl Server {
    /// Adds the constraints `specs` to `def`, the definition of table
    /// `table` of database `db` whose server columns are `meta`'s: each
    /// named (its CONSTRAINT name, else `table_ibfk_N` after the highest N
    /// the table has, as `dict_table_get_highest_foreign_id` counts), its
    /// parent resolved in the child's database unless one is written, and
    /// a key made on its columns where no key of the table starts with
    /// them, at the place of the clause (`at`: the number of secondary
    /// indexes written before it), named by the index name written after
    /// FOREIGN KEY, else the constraint's name, else the first column's.
    pub(super) fn add_foreign(
        &self,
        db: &str,
        table: &str,
        def: &mut TableDef,
        meta: &TableMeta,
        specs: &[(usize, ForeignSpec)],
    ) -> R<()> {
        let mut highest = def
            .foreign
            .iter()
            .filter_map(|fk| ibfk_number(table, &fk.id))
            .max()
            .unwrap_or(0);
        let mut generated: Vec<(usize, IndexDef)> = Vec::new();
        for (at, spec) in specs {
            if spec.columns.len() != spec.parent_columns.len() {
                return Err(SqlError::new(
                    1239,
                    format!(
                        "Incorrect foreign key definition for '{}': Key reference and table \
                         reference don't match",
                        spec.constraint
                            .as_deref()
                            .unwrap_or("foreign key without name")
                    ),
                ));
            }
            let columns = (spec.columns.iter())
                .map(|n| {
                    meta.columns
                        .iter()
                        .position(|c| c.name.eq_ignore_ascii_case(n))
                        .ok_or_else(|| {
                            SqlError::new(1072, format!("Key column '{n}' doesn't exist in table"))
                        })
                })
                .collect::<R<Vec<usize>>>()?;
            let id = match &spec.constraint {
                Some(n) => n.clone(),
                None => {
                    highest += 1;
                    format!("{table}_ibfk_{highest}")
                }
            };
            check_name(&id, 1280, "Incorrect index name")?;
            // Constraint names are unique in a database (InnoDB's
            // SYS_FOREIGN is keyed on `db/name`): errno 121.
            let prefix = format!("{}$", super::super::encode_name(db));
            let taken = def.foreign.iter().any(|f| f.id.eq_ignore_ascii_case(&id))
                || self.engine.table_names().iter().any(|n| {
                    n.starts_with(&prefix)
                        && *n != def.name
                        && self.engine.table(n).is_ok_and(|t| {
                            t.def.foreign.iter().any(|f| f.id.eq_ignore_ascii_case(&id))
                        })
                });
            if taken {
                return Err(SqlError::new(
                    1005,
                    format!("Can't create table '{db}.{table}' (errno: 121)"),
                ));
            }
            let pdb = spec.parent.db.clone().unwrap_or_else(|| db.to_string());
            let pname = engine_name(&pdb, &spec.parent.name);
            let parent = if pname.eq_ignore_ascii_case(&def.name) {
                def.name.clone()
            } else {
                (self.engine.table_names().into_iter())
                    .find(|n| n.eq_ignore_ascii_case(&pname))
                    .unwrap_or(pname)
            };
            // The parent's spelling of its columns, where it has them.
            let parent_columns = (spec.parent_columns.iter())
                .map(|n| {
                    let pdef = if parent == def.name {
                        Some(&*def)
                    } else {
                        self.engine.table(&parent).ok().map(|t| &t.def)
                    };
                    pdef.and_then(|d| d.column(n).map(|i| d.columns[i].name.clone()))
                        .unwrap_or_else(|| n.clone())
                })
                .collect();
            let has_key = def.find_index(&columns).is_some()
                || generated.iter().any(|(_, g)| {
                    g.columns.len() >= columns.len() && g.columns[..columns.len()] == columns[..]
                });
            if !has_key {
                let taken: Vec<String> = (def.indexes.iter())
                    .chain(generated.iter().map(|(_, g)| g))
                    .map(|x| x.name.clone())
                    .collect();
                let name = match spec.index.as_ref().or(spec.constraint.as_ref()) {
                    Some(n) if taken.iter().any(|t| t.eq_ignore_ascii_case(n)) => {
                        return Err(SqlError::new(1061, format!("Duplicate key name '{n}'")))
                    }
                    Some(n) => n.clone(),
                    None => schema::unnamed_index_name(&meta.columns[columns[0]].name, &taken),
                };
                generated.push((
                    *at,
                    IndexDef {
                        name,
                        columns: columns.clone(),
                        unique: false,
                        prefixes: Vec::new(),
                    },
                ));
            }
            def.foreign.push(ForeignDef {
                id,
                columns,
                parent,
                parent_columns,
                on_delete: spec.on_delete,
                on_update: spec.on_update,
            });
        }
        // Each made key at its clause's place (later ones after earlier
        // ones at the same place).
        for (k, (at, ix)) in generated.into_iter().enumerate() {
            let at = (at + k).min(def.indexes.len());
            def.indexes.insert(at, ix);
        }
        Ok(())
    }
}

/// N of a constraint named `table_ibfk_N`.
fn ibfk_number(table: &str, id: &str) -> Option<u64> {
    let head = id.get(..table.len())?;
    if !head.eq_ignore_ascii_case(table) {
        return None;
    }
    id[table.len()..].strip_prefix("_ibfk_")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_count_from_the_highest() {
        assert_eq!(ibfk_number("t2", "t2_ibfk_7"), Some(7));
        assert_eq!(ibfk_number("t2", "T2_ibfk_3"), Some(3));
        assert_eq!(ibfk_number("t2", "t2_ibfk_x"), None);
        assert_eq!(ibfk_number("t2", "c1"), None);
        assert_eq!(ibfk_number("t", "t2_ibfk_1"), None);
    }
}
