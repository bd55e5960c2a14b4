//! The secondary indexes of a row change: a new row's entries put in
//! index by index, each unique one's duplicate check first
//! (`row_ins_index_entry_step`, `row_ins_scan_sec_index_for_duplicate`);
//! the entries an update in place changes (`row_upd_sec_step`); and the
//! entries a delete marks. Each entry's place is locked, or its locks
//! checked (`lock_sec_rec_modify_check_and_lock`), before it changes, and
//! a change that must wait keeps the entries it has done.

use super::*;

/// The unique columns of a row in unique index `sec`, as its entry holds
/// them (prefixes cut); `None` when one is NULL (NULLs never collide). The
/// `unique-check-first-column` canary keeps the first column alone.
fn unique_prefix(
    pager: &Pager,
    sec: &crate::dict::Secondary,
    cols: &[Option<Vec<u8>>],
) -> Option<Key> {
    let mut prefix: Key = (sec.def.columns.iter().enumerate())
        .map(|(i, &c)| {
            let mut v = cols[c].clone();
            if let (Some(v), Some(p)) = (&mut v, sec.def.prefix(i)) {
                v.truncate(usize::from(p));
            }
            v
        })
        .collect();
    if prefix.iter().any(|f| f.is_none()) {
        return None;
    }
    if pager.unique_first_column {
        prefix.truncate(1);
    }
    Some(prefix)
}

/// The duplicate check of a new entry of unique secondary index `sec`,
/// as `row_ins_scan_sec_index_for_duplicate` runs it once the row's
/// clustered record is in, when an entry with the new row's unique columns
/// is there: from the first such entry on, each entry is locked (next-key; S, or X when the statement
/// goes on to replace or update what it collides with) until the first
/// that differs in them, which is locked too (or the supremum); an equal
/// one that is not delete-marked is a duplicate. A row with a NULL in its
/// unique columns collides with nothing and checks nothing. `Some(lock)`
/// if the check must wait.
fn sec_unique_scan(
    pager: &mut Pager,
    table: &Table,
    sec: &crate::dict::Secondary,
    cols: &[Option<Vec<u8>>],
    ctx: &mut LockCtx<'_>,
) -> Result<Option<LockId>> {
    let Some(prefix) = unique_prefix(pager, sec, cols) else {
        return Ok(None);
    };
    // The scan runs only when the entry's place in the index is next to
    // an entry with the same unique columns, delete-marked or not
    // (`row_ins_index_entry_low` looks at the search's `up_match` and
    // `low_match`): a value nobody has locks nothing.
    let mut probe = Cursor::new(
        Bound::Included(prefix.clone()),
        Bound::Included(prefix.clone()),
        Direction::Forward,
    );
    if probe.next(pager, &sec.index)?.is_none() {
        return Ok(None);
    }
    let mode = if ctx.duplicates {
        RecMode::X
    } else {
        RecMode::S
    };
    let mut cur = Cursor::new(
        Bound::Included(prefix.clone()),
        Bound::Unbounded,
        Direction::Forward,
    );
    loop {
        let Some(entry) = cur.next(pager, &sec.index)? else {
            // Past the last entry: the supremum is locked too.
            return Ok(ctx.gap(
                table.id,
                &sec.index,
                RecKey::Supremum,
                mode,
                RecKind::NextKey,
            ));
        };
        let entry_key = btree::key_of(&sec.index, 0, &entry)?;
        let target = RecKey::Key(btree::lock_key(&sec.index, entry_key.clone()));
        if unmarked_by_active(pager, table, sec, &entry, ctx)? {
            // Wait for the inserter where it really holds its lock: at its
            // clustered record (its implicit lock there is made explicit),
            // never by an explicit lock on the entry, which a reader may
            // hold in share already (it was granted one, as in InnoDB).
            let ck = clustered_key_of_entry(table, sec, &entry)?;
            if let Some(w) = ctx.record(
                pager,
                table,
                &table.clustered,
                RecKey::Key(btree::lock_key(&table.clustered, ck)),
                RecMode::S,
                RecKind::RecNotGap,
                None,
            )? {
                return Ok(Some(w));
            }
        }
        if let Some(w) = ctx.record(
            pager,
            table,
            &sec.index,
            target,
            mode,
            RecKind::NextKey,
            Some(&entry),
        )? {
            return Ok(Some(w));
        }
        if !btree::keys_equal(&sec.index, &entry_key, &prefix) {
            return Ok(None);
        }
        if pager.unique_binary && entry_key[..prefix.len()] != prefix[..] {
            // The canary takes only a byte-equal entry as a duplicate.
            continue;
        }
        if record::is_deleted(&entry) {
            continue;
        }
        return Err(Error::DuplicateKey {
            key: format_values(table, &sec.def.columns, cols),
            index: sec.def.name.clone(),
        });
    }
}

/// Whether an active transaction other than this one inserted the row of
/// live secondary entry `entry` over a delete-marked record, where no
/// implicit lock is found on the entry: InnoDB's
/// `row_vers_impl_x_locked_off_kernel` stops at the deleted version and
/// finds none, so its duplicate check reports a duplicate of a row that is
/// not committed and may yet be rolled back. Here the duplicate check
/// waits for that transaction at the row's clustered record, then looks
/// again: the one place the check differs from InnoDB's (a reader too
/// meets the inserter at the clustered record, as in InnoDB, unless it
/// reads the entry alone).
fn unmarked_by_active(
    pager: &mut Pager,
    table: &Table,
    sec: &crate::dict::Secondary,
    entry: &[u8],
    ctx: &LockCtx<'_>,
) -> Result<bool> {
    if record::is_deleted(entry) {
        return Ok(false);
    }
    Ok(matches!(
        super::super::sec_holder(pager, table, sec, entry, Some(ctx.trx), &ctx.active)?,
        super::super::SecHolder::OverDeleted
    ))
}

/// Puts in the secondary entries of a new row whose clustered record
/// `rec` is in, from the `*done`-th index on, as `row_ins_index_entry_step`
/// goes through the table's indexes: for each, its FOREIGN KEY checks
/// (`before`), the duplicate check of a unique index, and the entry.
/// `*done` counts the entries in: an insert that must wait keeps its
/// place there, its clustered record and the entries before in place.
#[allow(clippy::too_many_arguments)]
pub(super) fn insert_secondaries(
    pager: &mut Pager,
    table: &Table,
    cols: &[Option<Vec<u8>>],
    rec: &[u8],
    ctx: &mut LockCtx<'_>,
    before: &mut BeforeIndex<'_>,
    done: &mut usize,
) -> Result<Outcome> {
    while let Some(sec) = table.secondary.get(*done) {
        if let Some(w) = before(pager, ctx, Some(*done))? {
            return Ok(Outcome::Wait(w));
        }
        if sec.def.unique {
            if let Some(w) = sec_unique_scan(pager, table, sec, cols, ctx)? {
                return Ok(Outcome::Wait(w));
            }
        }
        let e = sec_entry(pager, table, sec, rec)?;
        pager.free_check()?;
        if let Some(w) = sec_insert_locked(pager, table, sec, &e, ctx)? {
            return Ok(Outcome::Wait(w));
        }
        *done += 1;
    }
    Ok(Outcome::Done(1))
}

/// Inserts (or un-marks) a secondary entry after locking its place: an
/// insert intention on the gap, or an X lock on a delete-marked entry it
/// revives. `Some(lock)` if that must wait (nothing changed then).
fn sec_insert_locked(
    pager: &mut Pager,
    table: &Table,
    sec: &crate::dict::Secondary,
    entry: &[u8],
    ctx: &mut LockCtx<'_>,
) -> Result<Option<LockId>> {
    if ctx.locks.index_locks(table.id, sec.index.id).0 == 0 {
        // Nobody locks anything in this index: no lock to check, none to
        // inherit, and the row's clustered X lock covers the entry.
        sec_insert(pager, sec, entry)?;
        return Ok(None);
    }
    let key = btree::key_of(&sec.index, 0, entry)?;
    let exists = btree::get(pager, &sec.index, &btree::key_refs(&key))?.is_some();
    if exists {
        // The entry's row is this transaction's own change by now (its
        // clustered record changed first): the modify check makes no
        // implicit lock explicit (`lock_sec_rec_modify_check_and_lock`).
        // It takes an X lock here where 1.0.6 takes one only if it must
        // wait (`impl = TRUE`).
        if let Some(w) = ctx.modify(
            table.id,
            &sec.index,
            RecKey::Key(btree::lock_key(&sec.index, key)),
        ) {
            return Ok(Some(w));
        }
        sec_insert(pager, sec, entry)?;
        return Ok(None);
    }
    let (next, wait) = insert_check(ctx, pager, table.id, &sec.index, &key)?;
    if wait.is_some() {
        return Ok(wait);
    }
    sec_insert(pager, sec, entry)?;
    if let Some(next) = &next {
        ctx.locks.inherit_gap_on_insert(
            table.id,
            sec.index.id,
            &btree::lock_key(&sec.index, key),
            next,
            ctx.now_us,
        );
    }
    Ok(None)
}

/// Changes the row's entries in the secondary indexes from `from` on, for
/// a clustered record changed from `old_rec` to `new_rec`: an update in
/// place delete-marks each entry that changes and inserts the new one; an
/// insert over a delete-marked record (`UpdDel`) inserts every entry.
/// `Err((index, lock))` where one must wait (that index not done).
#[allow(clippy::too_many_arguments)]
pub(super) fn change_secondaries(
    pager: &mut Pager,
    table: &Table,
    old_rec: &[u8],
    new_rec: &[u8],
    kind: UndoKind,
    ctx: &mut LockCtx<'_>,
    from: usize,
) -> Result<std::result::Result<(), (usize, LockId)>> {
    let mut new_cols = None;
    for (i, sec) in table.secondary.iter().enumerate().skip(from) {
        let old_e = sec_entry(pager, table, sec, old_rec)?;
        let new_e = sec_entry(pager, table, sec, new_rec)?;
        if old_e != new_e && kind == UndoKind::UpdExist {
            if let Some(w) = sec_mark_locked(pager, table, sec, &old_e, ctx)? {
                return Ok(Err((i, w)));
            }
            if sec.def.unique {
                // The new entry's duplicate check, as an insert's
                // (`row_upd_sec_index_entry` calls `row_ins_index_entry`
                // once the old entry is delete-marked): a wait here keeps
                // the clustered change and the old entry's mark, and the
                // change run again after it marks nothing twice.
                let cols = match &new_cols {
                    Some(c) => c,
                    None => new_cols.insert(current_columns(pager, table, new_rec)?),
                };
                if let Some(w) = sec_unique_scan(pager, table, sec, cols, ctx)? {
                    return Ok(Err((i, w)));
                }
            }
        }
        if old_e != new_e || kind == UndoKind::UpdDel {
            pager.free_check()?;
            if let Some(w) = sec_insert_locked(pager, table, sec, &new_e, ctx)? {
                return Ok(Err((i, w)));
            }
        }
    }
    Ok(Ok(()))
}

/// Delete-marks the entries of a deleted row (whose clustered record was
/// `old_rec`) in the secondary indexes from `from` on; where one must
/// wait, the work so far is `kept`.
pub(super) fn mark_secondaries(
    pager: &mut Pager,
    table: &Table,
    old_rec: Vec<u8>,
    ctx: &mut LockCtx<'_>,
    from: usize,
    kept: &mut Option<KeptChange>,
) -> Result<Outcome> {
    for (i, sec) in table.secondary.iter().enumerate().skip(from) {
        let e = sec_entry(pager, table, sec, &old_rec)?;
        if let Some(w) = sec_mark_locked(pager, table, sec, &e, ctx)? {
            *kept = Some(KeptChange { old_rec, done: i });
            return Ok(Outcome::Wait(w));
        }
    }
    Ok(Outcome::Done(1))
}

/// Delete-marks the secondary entry a change leaves behind, after checking
/// the locks on it, as `lock_sec_rec_modify_check_and_lock` does (with
/// `impl = TRUE`): where another transaction's lock on the entry conflicts
/// with X (a locking read through the index that has not reached the row
/// yet), the change queues an X lock and waits; otherwise it takes none,
/// the row's clustered X lock covering the entry. `Some(lock)` if the
/// change must wait (the change keeps its work, [`KeptChange`]).
fn sec_mark_locked(
    pager: &mut Pager,
    table: &Table,
    sec: &crate::dict::Secondary,
    entry: &[u8],
    ctx: &mut LockCtx<'_>,
) -> Result<Option<LockId>> {
    let key = btree::key_of(&sec.index, 0, entry)?;
    let target = crate::lock::Target::Record {
        table: table.id,
        index: sec.index.id,
        key: RecKey::Key(btree::lock_key(&sec.index, key.clone())),
    };
    let x = crate::lock::Mode::Record(RecMode::X, RecKind::RecNotGap);
    if ctx.locks.would_wait(ctx.trx, &target, x) {
        if let Some(w) = ctx.record(
            pager,
            table,
            &sec.index,
            RecKey::Key(btree::lock_key(&sec.index, key)),
            RecMode::X,
            RecKind::RecNotGap,
            None,
        )? {
            return Ok(Some(w));
        }
    }
    sec_delete_mark(pager, sec, entry, true)?;
    Ok(None)
}
