//! FOREIGN KEY constraints around a row change: a child row must find its
//! parent row, and a change of a parent row acts on the child rows that
//! refer to it, as each constraint says. Mirrors InnoDB's
//! `row_ins_check_foreign_constraints` (the child's side),
//! `row_upd_check_references_constraints` (the parent's side) and
//! `row_ins_foreign_check_on_constraint` (CASCADE and SET NULL), row0ins.c
//! and row0upd.c of InnoDB Plugin 1.0.6; the index search and its locks
//! are [`crate::row::foreign`].
//!
//! The parent's side runs after the parent row is delete-marked or
//! changed, with the values it had. A new child row is checked as InnoDB
//! checks it: each constraint when the entry of its index goes in, before
//! that entry (before the clustered record for a constraint on the
//! primary key, after it and the earlier secondary entries for one on a
//! secondary index), so a missing parent fails the insert before a later
//! index's entry can wait for a lock ([`check_child_at`]; `innosim diff`
//! against MariaDB found the insert waiting where InnoDB answers 1452).
//! A changed child row is checked after the change, with the values it
//! has; InnoDB checks it as the new secondary entry goes in, so there the
//! order of the locks within one row's change can still differ.
//!
//! A referential action is a change of the child row in the same
//! statement, which may act on the child's own children in turn: InnoDB
//! refuses a chain deeper than 15 and an update of a table that an
//! enclosing cascade is updating (1451). When anything in the chain must
//! wait or fails, the engine undoes the statement's whole request, the
//! cascades with it. With `foreign_key_checks=0` nothing here runs: no
//! check, no lock, no action (`trx->check_foreigns`).

use super::*;
use crate::btree;
use crate::dict::{FkAction, ForeignDef, TableDef};
use crate::lock::LockId;
use crate::row::foreign::{probe, Probe};
use crate::row::write::Columns;

/// A constraint resolved against the tables that exist now.
#[derive(Debug, Clone)]
pub(super) struct Link {
    /// The child table.
    child: u64,
    /// The constraint's place in the child's definition.
    fk: usize,
    /// The child's index whose leading columns are the constraint's
    /// (`Some(None)`: the clustered index), if it has one.
    child_ix: Option<Option<usize>>,
    /// The parent table and the index of its referenced columns, if both
    /// exist.
    parent: Option<(u64, Option<usize>)>,
}

/// The error a failed constraint gives.
fn fk_error(tables: &BTreeMap<u64, Table>, referenced: bool, link: &Link) -> Error {
    let t = &tables[&link.child];
    let fk: &ForeignDef = &t.def.foreign[link.fk];
    Error::ForeignKey {
        referenced,
        child: t.def.name.clone(),
        constraint: Box::new(
            fk.text(
                fk.columns
                    .iter()
                    .map(|&c| t.def.columns[c].name.clone())
                    .collect(),
            ),
        ),
    }
}

/// One constraint a new child row must satisfy ([`Engine::child_checks`]).
#[derive(Debug)]
pub(super) struct ChildCheck {
    /// The index whose entry it is checked before (`None`: the clustered
    /// index, or no index).
    at: Option<usize>,
    parent: Option<(u64, Option<usize>)>,
    /// The row's values of the constraint's columns.
    values: btree::Key,
    /// The constraint (what a missing parent gives, 1452, names it).
    link: Link,
}

/// The constraints a new child row must satisfy, by index.
#[derive(Debug)]
pub(super) struct ChildChecks {
    /// The child table.
    table: u64,
    checks: Vec<ChildCheck>,
    /// The `child-check-skips-parent-lock` canary.
    lockless: bool,
    /// No gap locks (a later version's rule, under READ COMMITTED or READ
    /// UNCOMMITTED).
    no_gaps: bool,
}

/// Runs the checks of `checks` that belong before the entry of index `at`
/// (`None`: the clustered index) goes in: the parent table's IS lock, then
/// the parent row, locked ([`probe`]). InnoDB's `row_ins_index_entry`
/// calls `row_ins_check_foreign_constraints` for the index before its
/// entry's duplicate check and insertion, so a missing parent fails the
/// statement (1452) before a later index's entry can wait.
pub(super) fn check_child_at(
    tables: &BTreeMap<u64, Table>,
    checks: &ChildChecks,
    pager: &mut crate::pager::Pager,
    ctx: &mut crate::row::locking::LockCtx<'_>,
    at: Option<usize>,
) -> Result<Option<LockId>> {
    check_children_where(tables, checks, pager, ctx, |c| c.at == at)
}

/// Runs the checks of `checks` that `which` picks, in order.
fn check_children_where(
    tables: &BTreeMap<u64, Table>,
    checks: &ChildChecks,
    pager: &mut crate::pager::Pager,
    ctx: &mut crate::row::locking::LockCtx<'_>,
    which: impl Fn(&ChildCheck) -> bool,
) -> Result<Option<LockId>> {
    for c in checks.checks.iter().filter(|c| which(c)) {
        let Some((parent, pix)) = c.parent else {
            // No parent table (made with foreign_key_checks=0, or dropped
            // since): no row can be its parent.
            return Err(fk_error(tables, false, &c.link));
        };
        if parent != checks.table {
            if let Some(w) = table_lock(ctx.locks, ctx.trx, parent, TableMode::IS, ctx.now_us) {
                return Ok(Some(w));
            }
        }
        // The parent's row is locked S as any check's, whatever the insert
        // itself takes (REPLACE's X).
        let duplicates = std::mem::replace(&mut ctx.duplicates, false);
        let found = probe(
            pager,
            &tables[&parent],
            pix,
            &c.values,
            None,
            ctx,
            checks.lockless,
            checks.no_gaps,
        );
        ctx.duplicates = duplicates;
        match found? {
            Probe::Wait(w) => return Ok(Some(w)),
            Probe::Found { .. } => {}
            Probe::Missing => return Err(fk_error(tables, false, &c.link)),
        }
    }
    Ok(None)
}

/// A change enclosing a referential action: InnoDB's ancestor update
/// nodes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ancestor {
    table: u64,
    delete: bool,
}

/// The deepest chain of cascades InnoDB runs (`row_ins_cascade_n_ancestors`
/// compared with 15).
const MAX_CASCADE_DEPTH: usize = 15;

impl Engine {
    /// Turns FOREIGN KEY checks and actions on or off for session `s`
    /// (`SET foreign_key_checks`).
    pub fn set_foreign_key_checks(&mut self, s: SessionId, on: bool) {
        self.session_mut(s).no_foreign_checks = !on;
    }

    /// Whether another table's FOREIGN KEY constraint references table
    /// `name` (TRUNCATE of such a table deletes its rows one by one).
    pub fn is_referenced(&self, name: &str) -> bool {
        self.names
            .get(name)
            .is_some_and(|&id| self.referenced_by_other(id))
    }

    /// Whether session `s` checks FOREIGN KEY constraints.
    pub fn foreign_key_checks(&self, s: SessionId) -> bool {
        self.sessions.get(&s).is_none_or(|x| !x.no_foreign_checks)
    }

    fn resolve(&self, child: &Table, fk: usize) -> Link {
        let def = &child.def.foreign[fk];
        let parent = self
            .names
            .get(&def.parent)
            .and_then(|id| self.tables.get(id))
            .and_then(|p| {
                let cols: Option<Vec<usize>> =
                    def.parent_columns.iter().map(|n| p.def.column(n)).collect();
                Some((p.id, p.def.find_index(&cols?)?))
            });
        Link {
            child: child.id,
            fk,
            child_ix: child.def.find_index(&def.columns),
            parent,
        }
    }

    /// The constraints of table `id`, as the child.
    fn foreign_of(&self, id: u64) -> Vec<Link> {
        let t = &self.tables[&id];
        (0..t.def.foreign.len())
            .map(|i| self.resolve(t, i))
            .collect()
    }

    /// The constraints that reference table `id`, its own included.
    pub(super) fn referencing(&self, id: u64) -> Vec<Link> {
        let name = &self.tables[&id].def.name;
        let mut out = Vec::new();
        for t in self.tables.values() {
            for (i, fk) in t.def.foreign.iter().enumerate() {
                if fk.parent == *name {
                    out.push(self.resolve(t, i));
                }
            }
        }
        out
    }

    /// The error a failed constraint gives.
    fn fk_error(&self, referenced: bool, link: &Link) -> Error {
        fk_error(&self.tables, referenced, link)
    }

    /// Requests table lock `mode` on `table` for session `s`'s transaction.
    fn fk_table_lock(&mut self, s: SessionId, table: u64, mode: TableMode) -> Option<LockId> {
        let now = self.pager.now_us();
        let trx = self.sessions[&s].trx.as_ref().expect("transaction open").id;
        table_lock(&mut self.locks, trx, table, mode, now)
    }

    /// Whether session `s`'s constraint checks lock no gaps: a later
    /// version's rule, under READ COMMITTED or READ UNCOMMITTED.
    fn fk_checks_skip_gaps(&self, s: SessionId) -> bool {
        self.config
            .later
            .has(crate::LaterRule::FkCheckNoGapsUnderReadCommitted)
            && self
                .sessions
                .get(&s)
                .and_then(|x| x.trx.as_ref())
                .is_some_and(|t| {
                    matches!(
                        t.isolation,
                        Isolation::ReadCommitted | Isolation::ReadUncommitted
                    )
                })
    }

    /// Runs [`probe`] for session `s`'s transaction.
    fn fk_probe(
        &mut self,
        s: SessionId,
        table: u64,
        ix: Option<usize>,
        values: &btree::Key,
        after: Option<&btree::Key>,
        lockless: bool,
    ) -> Result<Probe> {
        let no_gaps = self.fk_checks_skip_gaps(s);
        let now = self.pager.now_us();
        let trx = self.sessions[&s].trx.as_ref().expect("transaction open");
        let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, false);
        probe(
            &mut self.pager,
            &self.tables[&table],
            ix,
            values,
            after,
            &mut ctx,
            lockless,
            no_gaps,
        )
    }

    /// The child's side of the constraints of table `id` for a row with
    /// columns `new` (changed from `old`, if it was), for [`check_child_at`]
    /// to run index by index as a new row goes in, or all at once after a
    /// change ([`Engine::check_parents`]). A constraint is left out when its
    /// columns hold a NULL, when a change left its index entry as it was
    /// (`row_upd_changes_ord_field_binary`), and when it is `skip` (the one
    /// an ON UPDATE CASCADE carries out). Empty with `foreign_key_checks=0`.
    pub(super) fn child_checks(
        &self,
        s: SessionId,
        id: u64,
        new: &Columns,
        old: Option<&Columns>,
        skip: Option<(u64, usize)>,
    ) -> ChildChecks {
        let mut checks = Vec::new();
        if self.foreign_key_checks(s) {
            let t = &self.tables[&id];
            for link in self.foreign_of(id) {
                if skip == Some((link.child, link.fk)) {
                    continue;
                }
                let def = &t.def.foreign[link.fk];
                if let Some(old) = old {
                    let mut cols: Vec<usize> = match link.child_ix {
                        Some(Some(i)) => t.def.indexes[i].columns.clone(),
                        _ => def.columns.clone(),
                    };
                    cols.extend(&t.def.primary_key);
                    if cols.iter().all(|&c| old[c] == new[c]) {
                        continue;
                    }
                }
                let values: btree::Key = def.columns.iter().map(|&c| new[c].clone()).collect();
                if values.iter().any(Option::is_none) {
                    continue;
                }
                checks.push(ChildCheck {
                    // A constraint without an index of its own (made with
                    // foreign_key_checks=0) is checked first.
                    at: link.child_ix.flatten(),
                    parent: link.parent,
                    values,
                    link,
                });
            }
        }
        ChildChecks {
            table: id,
            checks,
            lockless: self
                .config
                .canaries
                .has(crate::Canary::ChildCheckSkipsParentLock),
            no_gaps: self.fk_checks_skip_gaps(s),
        }
    }

    /// After a row of table `id` changed to `new` from `old`: each
    /// constraint of the table whose index entry the change rewrote, and
    /// whose columns are all non-NULL, must find its parent row (1452
    /// otherwise). `skip`: the constraint an ON UPDATE CASCADE is carrying
    /// out, not checked against the parent it follows. `Some(lock)` if the
    /// statement must wait.
    pub(super) fn check_parents(
        &mut self,
        s: SessionId,
        id: u64,
        new: &Columns,
        old: &Columns,
        skip: Option<(u64, usize)>,
    ) -> Result<Option<LockId>> {
        let checks = self.child_checks(s, id, new, Some(old), skip);
        if checks.checks.is_empty() {
            return Ok(None);
        }
        let now = self.pager.now_us();
        let trx = self.sessions[&s].trx.as_ref().expect("transaction open");
        let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, false);
        check_children_where(&self.tables, &checks, &mut self.pager, &mut ctx, |_| true)
    }

    /// After a row of table `id` with columns `old` was delete-marked
    /// (`new` is `None`) or changed to `new`: for each constraint that
    /// references the table and whose referenced columns the change
    /// altered, the child rows that hold the old values are refused (1451)
    /// or acted on, as the constraint says. `chain`: the changes enclosing
    /// this one, the statement's own first. `Some(lock)` if the statement
    /// must wait.
    pub(super) fn check_children(
        &mut self,
        s: SessionId,
        id: u64,
        old: &Columns,
        new: Option<&Columns>,
        chain: &mut Vec<Ancestor>,
    ) -> Result<Option<LockId>> {
        if !self.foreign_key_checks(s) {
            return Ok(None);
        }
        for link in self.referencing(id) {
            let Some((parent, _)) = link.parent else {
                continue;
            };
            debug_assert_eq!(parent, id);
            let child = &self.tables[&link.child];
            let def = child.def.foreign[link.fk].clone();
            let pt = &self.tables[&id];
            let pcols: Vec<usize> = def
                .parent_columns
                .iter()
                .map(|n| pt.def.column(n).expect("resolved"))
                .collect();
            if let Some(new) = new {
                if pcols.iter().all(|&c| old[c] == new[c]) {
                    continue;
                }
            }
            let values: btree::Key = pcols.iter().map(|&c| old[c].clone()).collect();
            if values.iter().any(Option::is_none) {
                continue;
            }
            let Some(cix) = link.child_ix else {
                // The child lost its index (dropped under
                // foreign_key_checks=0): there is nothing to search.
                continue;
            };
            if link.child != id {
                if let Some(w) = self.fk_table_lock(s, link.child, TableMode::IS) {
                    return Ok(Some(w));
                }
            }
            let action = match new {
                None => def.on_delete,
                Some(_) => def.on_update,
            };
            let mut after: Option<btree::Key> = None;
            loop {
                let (at, clustered) =
                    match self.fk_probe(s, link.child, cix, &values, after.as_ref(), false)? {
                        Probe::Wait(w) => return Ok(Some(w)),
                        Probe::Missing => break,
                        Probe::Found { at, clustered } => (at, clustered),
                    };
                let delete = new.is_none() && action == FkAction::Cascade;
                match action {
                    FkAction::Restrict | FkAction::NoAction => {
                        return Err(self.fk_error(true, &link))
                    }
                    FkAction::Cascade | FkAction::SetNull => {
                        // No cyclic cascaded update of one table, and no
                        // chain deeper than InnoDB's: the new action's
                        // ancestors are this change and those enclosing it.
                        let me = Ancestor {
                            table: id,
                            delete: new.is_none(),
                        };
                        let mut ancestors = chain.iter().chain(std::iter::once(&me));
                        if (!delete && ancestors.any(|a| a.table == link.child && !a.delete))
                            || chain.len() + 1 >= MAX_CASCADE_DEPTH
                        {
                            return Err(self.fk_error(true, &link));
                        }
                    }
                }
                let set: Vec<(usize, Option<Vec<u8>>)> = if delete {
                    Vec::new()
                } else if action == FkAction::SetNull {
                    def.columns.iter().map(|&c| (c, None)).collect()
                } else {
                    let new = new.expect("an update");
                    let mut set = Vec::with_capacity(def.columns.len());
                    for (&c, &p) in def.columns.iter().zip(&pcols) {
                        let v = match &new[p] {
                            None => None,
                            Some(b) => match self.fit(link.child, c, id, p, b) {
                                Some(v) => Some(v),
                                None => return Err(self.fk_error(true, &link)),
                            },
                        };
                        set.push((c, v));
                    }
                    set
                };
                if !delete
                    && set.iter().any(|(c, v)| {
                        v.is_none() && !self.tables[&link.child].def.columns[*c].nullable
                    })
                {
                    return Err(self.fk_error(true, &link));
                }
                chain.push(Ancestor {
                    table: id,
                    delete: new.is_none(),
                });
                let r = self.cascade(s, &link, &clustered, delete, &set, chain);
                chain.pop();
                if let Some(w) = r? {
                    return Ok(Some(w));
                }
                after = Some(at);
            }
        }
        Ok(None)
    }

    /// A parent's new value `b` of column `p` of table `parent` as column
    /// `c` of table `child` stores it, if it fits
    /// (`row_ins_cascade_calc_update_vec`): a CHAR's padding is its own.
    fn fit(&self, child: u64, c: usize, parent: u64, p: usize, b: &[u8]) -> Option<Vec<u8>> {
        use crate::record::ColumnType as T;
        let cty = &self.tables[&child].def.columns[c];
        let pty = &self.tables[&parent].def.columns[p].ty;
        let string = |t: &T| {
            matches!(
                t,
                T::Char(_) | T::VarChar(_) | T::Text { .. } | T::Blob { .. }
            )
        };
        if !string(&cty.ty) || !string(pty) {
            // Types that match store alike (`columns_match`).
            return Some(b.to_vec());
        }
        let mut v = b;
        if matches!(pty, crate::record::ColumnType::Char(_)) {
            while let [rest @ .., b' '] = v {
                v = rest;
            }
        }
        record::to_stored(&cty.ty, &Value::Bytes(v.to_vec()), &cty.name).ok()
    }

    /// Carries out a referential action on the child row with clustered
    /// key `key`: deletes it, or sets its columns as `set` says; then that
    /// row's own constraints, as a change of it, in turn.
    fn cascade(
        &mut self,
        s: SessionId,
        link: &Link,
        key: &btree::Key,
        delete: bool,
        set: &[(usize, Option<Vec<u8>>)],
        chain: &mut Vec<Ancestor>,
    ) -> Result<Option<LockId>> {
        // IX on the child table and X on its clustered record, taken by
        // the change itself (lock_clust_rec_read_check_and_lock_alt).
        if let Some(w) = self.fk_table_lock(s, link.child, TableMode::IX) {
            return Ok(Some(w));
        }
        let now = self.pager.now_us();
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let trx = sess.trx.as_mut().expect("transaction open");
        let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, false);
        let table = &self.tables[&link.child];
        let mut old = None;
        let outcome = if delete {
            write::delete_returning(
                &mut self.pager,
                &mut self.sys,
                table,
                trx,
                key,
                &mut ctx,
                Some(&mut old),
                // A cascade that waits is undone with its statement and
                // runs again from the start.
                &mut None,
            )?
        } else {
            write::update_returning(
                &mut self.pager,
                &mut self.sys,
                table,
                trx,
                key,
                set,
                &mut ctx,
                &mut old,
                // A cascade that waits is undone with its statement and
                // runs again from the start.
                &mut None,
                &mut None,
            )?
        };
        match outcome {
            Outcome::Wait(w) => return Ok(Some(w)),
            // Already deleted (a cycle of rows reached it again), or set
            // to what it holds: nothing follows.
            Outcome::Done(0) => return Ok(None),
            Outcome::Done(_) => {}
        }
        let Some(old) = old else {
            return Ok(None);
        };
        if self
            .config
            .canaries
            .has(crate::Canary::CascadeSkipsSecondLevel)
        {
            // The planted bug: the child row changed, its own children not.
            return Ok(None);
        }
        if delete {
            return self.check_children(s, link.child, &old, None, chain);
        }
        let mut new = old.clone();
        for (c, v) in set {
            new[*c] = v.clone();
        }
        if let Some(w) = self.check_children(s, link.child, &old, Some(&new), chain)? {
            return Ok(Some(w));
        }
        self.check_parents(s, link.child, &new, &old, Some((link.child, link.fk)))
    }
}

/// Whether child column `c` may refer to parent column `p`
/// (`cmp_cols_are_equal`): strings of a character set when their
/// collations agree (not compared with `check_charsets` off, as under
/// foreign_key_checks=0), binary strings with each other, integers of one
/// length and signedness, other types when they are the same.
fn columns_match(
    c: &crate::dict::ColumnDef,
    p: &crate::dict::ColumnDef,
    check_charsets: bool,
) -> bool {
    use crate::record::{Collation, ColumnType as T};
    let string = |t: &T| {
        matches!(
            t,
            T::Char(_) | T::VarChar(_) | T::Text { .. } | T::Blob { .. }
        )
    };
    let text = |x: &crate::dict::ColumnDef| string(&x.ty) && x.collation != Collation::Binary;
    let binary = |x: &crate::dict::ColumnDef| string(&x.ty) && x.collation == Collation::Binary;
    if text(c) && text(p) {
        return !check_charsets || c.collation == p.collation;
    }
    if binary(c) && binary(p) {
        return true;
    }
    let int = |t: &T| match *t {
        T::ShortInt { len, unsigned } => Some((len, unsigned)),
        T::Int { unsigned } => Some((4, unsigned)),
        T::BigInt { unsigned } => Some((8, unsigned)),
        _ => None,
    };
    match (int(&c.ty), int(&p.ty)) {
        (Some(a), Some(b)) => a == b,
        (None, None) => c.ty == p.ty,
        _ => false,
    }
}

impl Engine {
    /// Checks the constraints of definition `def` as InnoDB checks a
    /// constraint it adds (`dict_create_foreign_constraints`,
    /// `dict_foreign_add_to_cache`): the child has an index led by the
    /// constraint's columns, SET NULL only on columns that take NULL, and
    /// the parent (`def` itself for a constraint on its own table) its
    /// columns, an index led by them, and types that match. A parent that
    /// does not exist is accepted with `checks` off (foreign_key_checks=0),
    /// as is a collation mismatch. Any failure is InnoDB's errno 150.
    pub(super) fn check_foreign_defs(&self, def: &TableDef, checks: bool) -> Result<()> {
        let bad = || Error::CantCreateTable {
            table: def.name.clone(),
            reason: "errno: 150".into(),
        };
        for fk in &def.foreign {
            if def.find_index(&fk.columns).is_none() {
                return Err(bad());
            }
            let set_null = fk.on_delete == FkAction::SetNull || fk.on_update == FkAction::SetNull;
            if set_null && fk.columns.iter().any(|&c| !def.columns[c].nullable) {
                return Err(bad());
            }
            let parent = if fk.parent == def.name {
                Some(def)
            } else {
                self.names.get(&fk.parent).map(|id| &self.tables[id].def)
            };
            let Some(p) = parent else {
                if checks {
                    return Err(bad());
                }
                continue;
            };
            let pcols: Option<Vec<usize>> = fk.parent_columns.iter().map(|n| p.column(n)).collect();
            let Some(pcols) = pcols else {
                return Err(bad());
            };
            if p.find_index(&pcols).is_none()
                || !(fk.columns.iter().zip(&pcols))
                    .all(|(&c, &pc)| columns_match(&def.columns[c], &p.columns[pc], checks))
            {
                return Err(bad());
            }
        }
        Ok(())
    }

    /// Checks that a new definition `def` of table `id` still serves the
    /// constraints of other tables that reference it (their columns, an
    /// index led by them, matching types): errno 150 otherwise, as InnoDB
    /// refuses to rename the rebuilt table into place.
    pub(super) fn check_referencing_defs(
        &self,
        id: u64,
        def: &TableDef,
        checks: bool,
    ) -> Result<()> {
        for link in self.referencing(id) {
            if link.child == id {
                continue;
            }
            let child = &self.tables[&link.child].def;
            let fk = &child.foreign[link.fk];
            let pcols: Option<Vec<usize>> =
                fk.parent_columns.iter().map(|n| def.column(n)).collect();
            let ok = pcols.is_some_and(|pcols| {
                def.find_index(&pcols).is_some()
                    && (fk.columns.iter().zip(&pcols))
                        .all(|(&c, &pc)| columns_match(&child.columns[c], &def.columns[pc], checks))
            });
            if !ok {
                return Err(Error::CantCreateTable {
                    table: def.name.clone(),
                    reason: "errno: 150".into(),
                });
            }
        }
        Ok(())
    }

    /// Whether another table's constraint references table `id`
    /// (`row_drop_table_for_mysql` and `row_truncate_table_for_mysql` refuse
    /// such a table while foreign_key_checks is on).
    pub(super) fn referenced_by_other(&self, id: u64) -> bool {
        self.referenced_from_outside(id, None)
    }

    /// Whether another table refers to this one, not counting tables whose
    /// names start with `db_prefix` (those a DROP DATABASE drops too).
    pub(super) fn referenced_from_outside(&self, id: u64, db_prefix: Option<&str>) -> bool {
        self.referencing(id).iter().any(|l| {
            l.child != id
                && !db_prefix.is_some_and(|p| self.tables[&l.child].def.name.starts_with(p))
        })
    }

    /// Whether the table's definition without index `pos` would leave a
    /// constraint, its own or another table's on it, without the index it
    /// searches (`ha_innobase::prepare_drop_index`).
    pub(super) fn index_needed(&self, id: u64, pos: usize) -> bool {
        let t = &self.tables[&id].def;
        let mut without = t.clone();
        without.indexes.remove(pos);
        let own = t.foreign.iter().any(|fk| {
            t.find_index(&fk.columns).is_some() && without.find_index(&fk.columns).is_none()
        });
        own || self.referencing(id).iter().any(|l| {
            let fk = &self.tables[&l.child].def.foreign[l.fk];
            let cols: Option<Vec<usize>> = fk.parent_columns.iter().map(|n| t.column(n)).collect();
            cols.is_some_and(|c| t.find_index(&c).is_some() && without.find_index(&c).is_none())
        })
    }

    /// The rows of table `id` that a constraint of `def` (one `old` lacks)
    /// would leave without a parent: 1452 for the first such row. An ALTER
    /// TABLE that adds a constraint copies the rows through the checks in
    /// MySQL 5.1; here the rows are checked before the copy, by their
    /// newest versions (the ALTER holds the table's X lock, so they are
    /// committed), against the parent's newest versions, unlocked.
    pub(super) fn check_new_constraints(
        &mut self,
        id: u64,
        old: &TableDef,
        def: &TableDef,
    ) -> Result<()> {
        let added: Vec<&ForeignDef> = def
            .foreign
            .iter()
            .filter(|fk| !old.foreign.iter().any(|o| o == *fk))
            .collect();
        if added.is_empty() {
            return Ok(());
        }
        let table = self.tables[&id].clone();
        let mut cur = btree::Cursor::new(
            btree::Bound::Unbounded,
            btree::Bound::Unbounded,
            btree::Direction::Forward,
        );
        while let Some(rec) = cur.next(&mut self.pager, &table.clustered)? {
            if record::is_deleted(&rec) {
                continue;
            }
            let cols = write::current_columns(&mut self.pager, &table, &rec)?;
            for fk in &added {
                let values: btree::Key = fk.columns.iter().map(|&c| cols[c].clone()).collect();
                if values.iter().any(Option::is_none) {
                    continue;
                }
                let parent = if fk.parent == def.name {
                    None
                } else {
                    self.names.get(&fk.parent).copied()
                };
                let found = match parent {
                    // A constraint on its own table: the rows themselves.
                    None if fk.parent == def.name => {
                        let pcols: Vec<usize> = fk
                            .parent_columns
                            .iter()
                            .filter_map(|n| def.column(n))
                            .collect();
                        self.has_row_with(&table, &pcols, &values)?
                    }
                    None => false,
                    Some(p) => {
                        let pt = self.tables[&p].clone();
                        let pcols: Vec<usize> = fk
                            .parent_columns
                            .iter()
                            .filter_map(|n| pt.def.column(n))
                            .collect();
                        self.has_row_with(&pt, &pcols, &values)?
                    }
                };
                if !found {
                    return Err(Error::ForeignKey {
                        referenced: false,
                        child: def.name.clone(),
                        constraint: Box::new(
                            fk.text(
                                fk.columns
                                    .iter()
                                    .map(|&c| def.columns[c].name.clone())
                                    .collect(),
                            ),
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether `table` has a live row whose columns `cols` hold `values`,
    /// searched through the index led by them.
    fn has_row_with(&mut self, table: &Table, cols: &[usize], values: &btree::Key) -> Result<bool> {
        let Some(ix) = table.def.find_index(cols) else {
            return Ok(false);
        };
        let index = match ix {
            None => &table.clustered,
            Some(i) => &table.secondary[i].index,
        };
        let mut cur = btree::Cursor::new(
            btree::Bound::Included(values.clone()),
            btree::Bound::Included(values.clone()),
            btree::Direction::Forward,
        );
        while let Some(rec) = cur.next(&mut self.pager, index)? {
            if !record::is_deleted(&rec) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
