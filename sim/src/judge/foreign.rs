//! The model of FOREIGN KEY constraints, restated from the documented rules
//! of InnoDB Plugin 1.0 (the MySQL 5.1 manual's "FOREIGN KEY Constraints"
//! and row0ins.c's comments), not from the engine's code: a child row's
//! constraint columns, when none is NULL, name a parent row that exists;
//! a parent row that child rows name is not deleted, nor its key changed,
//! unless the constraint says what becomes of them (CASCADE: they go, or
//! follow the new key; SET NULL: their columns become NULL), each such
//! change answering to the changed row's own constraints in turn, the
//! whole statement refused (1451) when any part is; InnoDB refuses an
//! update that would cascade back into a table an enclosing change
//! updates, and a chain deeper than 15.
//!
//! A change's checks see what a locking read sees when the change is done:
//! the committed rows and the transaction's own writes (the checks wait
//! for other transactions' changes of the rows they look at). The model
//! tables' constraints always name the parent's whole primary key.

use crate::schema::{Action, Schema, TableShape};
use models::{Db, ModelValue, Row, Write};

/// A change enclosing a referential action.
#[derive(Clone, Copy)]
struct Enclosing<'a> {
    table: &'a str,
    delete: bool,
}

/// The deepest chain of actions InnoDB runs.
const MAX_DEPTH: usize = 15;

/// The row `key` of `table` as the statement sees it.
fn visible(committed: &Db, ws: &[Write], table: &str, key: &[ModelValue]) -> Option<Row> {
    for w in ws.iter().rev() {
        if w.table == table && w.key == key {
            return w.row.clone();
        }
    }
    committed.tables.get(table)?.get(key).cloned()
}

/// Every row of `table` as the statement sees it, with its key.
fn rows(committed: &Db, ws: &[Write], table: &str) -> Vec<(Vec<ModelValue>, Row)> {
    let mut out: std::collections::BTreeMap<Vec<ModelValue>, Option<Row>> = committed
        .tables
        .get(table)
        .map(|t| {
            t.iter()
                .map(|(k, r)| (k.clone(), Some(r.clone())))
                .collect()
        })
        .unwrap_or_default();
    for w in ws.iter().filter(|w| w.table == table) {
        out.insert(w.key.clone(), w.row.clone());
    }
    out.into_iter()
        .filter_map(|(k, r)| r.map(|r| (k, r)))
        .collect()
}

/// The parent's primary key a child row's constraint columns name, as the
/// parent keys it; `None` when a column is NULL.
fn parent_key(parent: &TableShape, child_row: &Row, columns: &[usize]) -> Option<Vec<ModelValue>> {
    (parent.primary_key.iter().zip(columns))
        .map(|(&pc, &c)| {
            let v = &child_row[c];
            (*v != ModelValue::Null).then(|| parent.keyed(pc, v))
        })
        .collect()
}

/// After a row of `table` went in as `new` (`old` is `None`), or changed
/// from `old` to `new`: each constraint of the table whose columns (or
/// the row's key) the change set must name an existing parent row (1452).
/// `skip`: the constraint an ON UPDATE CASCADE is carrying out.
pub(crate) fn check_parents(
    schema: &Schema,
    committed: &Db,
    ws: &[Write],
    table: &str,
    new: &Row,
    old: Option<&Row>,
    skip: Option<(&str, usize)>,
) -> Result<(), u16> {
    let Some(t) = schema.table(table) else {
        return Ok(());
    };
    for (i, fk) in t.foreign.iter().enumerate() {
        if skip == Some((table, i)) {
            continue;
        }
        if let Some(old) = old {
            let same = |c: &usize| old[*c] == new[*c];
            if fk.columns.iter().all(same) && t.primary_key.iter().all(same) {
                continue;
            }
        }
        if fk.columns.iter().any(|&c| new[c] == ModelValue::Null) {
            continue;
        }
        let Some(parent) = schema.table(&fk.parent) else {
            return Err(1452);
        };
        let key = parent_key(parent, new, &fk.columns).expect("no NULL");
        if visible(committed, ws, &fk.parent, &key).is_none() {
            return Err(1452);
        }
    }
    Ok(())
}

/// After a row of `table` was deleted (`new` is `None`) or changed from
/// `old` to `new`, with its writes in `ws`: the child rows of each
/// constraint on the table whose key the change altered are refused
/// (1451) or acted on; the actions' writes are appended to `ws`.
pub(crate) fn check_children(
    schema: &Schema,
    committed: &Db,
    ws: &mut Vec<Write>,
    table: &str,
    old: &Row,
    new: Option<&Row>,
) -> Result<(), u16> {
    children(schema, committed, ws, table, old, new, &mut Vec::new())
}

fn children<'s>(
    schema: &'s Schema,
    committed: &Db,
    ws: &mut Vec<Write>,
    table: &'s str,
    old: &Row,
    new: Option<&Row>,
    chain: &mut Vec<Enclosing<'s>>,
) -> Result<(), u16> {
    let Some(parent) = schema.table(table) else {
        return Ok(());
    };
    if let Some(new) = new {
        if parent.primary_key.iter().all(|&c| old[c] == new[c]) {
            return Ok(());
        }
    }
    for child in &schema.tables {
        for (i, fk) in child.foreign.iter().enumerate() {
            if fk.parent != table {
                continue;
            }
            let keyed: Vec<ModelValue> = (parent.primary_key.iter())
                .map(|&c| parent.keyed(c, &old[c]))
                .collect();
            let refer: Vec<(Vec<ModelValue>, Row)> = rows(committed, ws, &child.name)
                .into_iter()
                .filter(|(_, r)| parent_key(parent, r, &fk.columns).as_ref() == Some(&keyed))
                .collect();
            let action = if new.is_some() {
                fk.on_update
            } else {
                fk.on_delete
            };
            for (key, _) in refer {
                let delete = new.is_none() && action == Action::Cascade;
                if action == Action::Restrict {
                    return Err(1451);
                }
                let me = Enclosing {
                    table,
                    delete: new.is_none(),
                };
                let cyclic = !delete
                    && chain
                        .iter()
                        .chain(std::iter::once(&me))
                        .any(|a| a.table == child.name && !a.delete);
                if cyclic || chain.len() + 1 >= MAX_DEPTH {
                    return Err(1451);
                }
                // A row an earlier action of this statement already took
                // (a cycle of rows) is gone: nothing more to do.
                let Some(current) = visible(committed, ws, &child.name, &key) else {
                    continue;
                };
                chain.push(me);
                let r = act(
                    schema, committed, ws, child, i, &key, &current, delete, action, new, chain,
                );
                chain.pop();
                r?;
            }
        }
    }
    Ok(())
}

/// Carries out a referential action on the child row `row` (key `key`)
/// of constraint `i` of `child`, then that row's own constraints.
#[allow(clippy::too_many_arguments)]
fn act<'s>(
    schema: &'s Schema,
    committed: &Db,
    ws: &mut Vec<Write>,
    child: &'s TableShape,
    i: usize,
    key: &[ModelValue],
    row: &Row,
    delete: bool,
    action: Action,
    parent_new: Option<&Row>,
    chain: &mut Vec<Enclosing<'s>>,
) -> Result<(), u16> {
    let fk = &child.foreign[i];
    if delete {
        ws.push(Write {
            table: child.name.clone(),
            key: key.to_vec(),
            row: None,
        });
        return children(schema, committed, ws, &child.name, row, None, chain);
    }
    let mut new = row.clone();
    let parent = schema
        .table(&fk.parent)
        .expect("the parent is the changed table");
    for (k, &c) in fk.columns.iter().enumerate() {
        new[c] = match (action, parent_new) {
            (Action::Cascade, Some(p)) => p[parent.primary_key[k]].clone(),
            _ => ModelValue::Null,
        };
        if new[c] == ModelValue::Null && !child.nullable[c] {
            return Err(1451);
        }
    }
    if new == *row {
        return Ok(());
    }
    let new_key = child.key_of(&new);
    if new_key.as_slice() != key {
        ws.push(Write {
            table: child.name.clone(),
            key: key.to_vec(),
            row: None,
        });
    }
    ws.push(Write {
        table: child.name.clone(),
        key: new_key,
        row: Some(new.clone()),
    });
    children(schema, committed, ws, &child.name, row, Some(&new), chain)?;
    check_parents(
        schema,
        committed,
        ws,
        &child.name,
        &new,
        Some(row),
        Some((&child.name, i)),
    )
}

/// The first child row of `db` whose constraint names a parent row `db`
/// lacks, described: after any crash, recovery must leave no such row
/// (a committed state never has one, and recovery restores a committed
/// state). An invariant of the constraint itself, apart from the model's
/// account of which rows the commits left.
pub(crate) fn orphan(schema: &Schema, db: &Db) -> Option<String> {
    for child in &schema.tables {
        for fk in &child.foreign {
            let parent = schema.table(&fk.parent)?;
            let rows = db.tables.get(&child.name)?;
            for (key, row) in rows.iter() {
                let Some(pk) = parent_key(parent, row, &fk.columns) else {
                    continue;
                };
                if db
                    .tables
                    .get(&fk.parent)
                    .is_none_or(|p| !p.contains_key(&pk))
                {
                    return Some(format!(
                        "{} row {} names {} {}, which is not there",
                        child.name,
                        models::value::fmt_key(key),
                        fk.parent,
                        models::value::fmt_key(&pk)
                    ));
                }
            }
        }
    }
    None
}
