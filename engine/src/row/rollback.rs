//! Rollback: applying undo records in reverse to undo a transaction, a
//! statement or everything after a savepoint. Mirrors InnoDB's
//! `row0undo.cc`, `row0uins.cc` and `row0umod.cc`.
//!
//! Each record is undone only if the clustered record still carries this
//! transaction's id and a roll pointer to this very undo record; otherwise
//! the change it describes never reached the index (a crash or an error
//! between writing the undo record and changing the index) and there is
//! nothing to undo. Secondary entries are fixed before the clustered
//! record, so a crash in between leaves the clustered record still
//! pointing at the undo record and the next rollback attempt redoes both.

use super::locking::Removed;
use super::{
    clustered_key, reps_of, roll_ptr_of, sec_ensure, sec_entry, sec_remove_if_unneeded, trx_id_of,
    Tables,
};
use crate::blob;
use crate::btree;
use crate::error::Result;
use crate::page::{self, PageId, FIL_NULL};
use crate::pager::Pager;
use crate::record::ExternalRef;
use crate::trx::undo::{self, RollPtr, UndoKind, UndoLog, UndoRecord};
use crate::trx::TrxSys;

/// Undoes every change of the transaction with undo number >= `target`,
/// then cuts the log back to `target`.
pub fn rollback_to(
    pager: &mut Pager,
    sys: &TrxSys,
    tables: &Tables,
    trx_id: u64,
    log: &mut UndoLog,
    target: u64,
    removed: &mut Vec<Removed>,
) -> Result<u64> {
    let mut earliest: Option<(u32, u16)> = None;
    let mut undone = 0;
    let mut page_no = log.last_page;
    let mut walk = undo::ChainWalk::default();
    'pages: loop {
        walk.reach(page_no)?;
        let (recs, prev) = undo::page_records(pager, page_no)?;
        for (off, u) in recs.into_iter().rev() {
            if u.undo_no < target {
                break 'pages;
            }
            let ptr = RollPtr {
                insert: u.kind == UndoKind::Insert,
                page_no,
                offset: off,
            };
            // A rollback logs as much as the changes it undoes, which one
            // statement's check could not foresee: make room in the log
            // before each record, as InnoDB's row_undo does.
            pager.free_check()?;
            undo_record(pager, sys, tables, trx_id, &u, ptr, removed)?;
            earliest = Some((page_no, off));
            undone += 1;
        }
        if page_no == log.first_page || prev == FIL_NULL {
            break;
        }
        page_no = prev;
    }
    if let Some((p, off)) = earliest {
        undo::truncate(pager, log, p, off)?;
    }
    log.next_undo_no = log.next_undo_no.min(target);
    Ok(undone)
}

/// Undoes one change.
pub fn undo_record(
    pager: &mut Pager,
    sys: &TrxSys,
    tables: &Tables,
    trx_id: u64,
    u: &UndoRecord,
    ptr: RollPtr,
    removed: &mut Vec<Removed>,
) -> Result<()> {
    let Some(table) = tables.get(&u.table_id) else {
        // The table is gone (a dropped table's undo): nothing to undo.
        return Ok(());
    };
    let key = match u.kind {
        UndoKind::Insert => u.key.clone(),
        _ => clustered_key(table, &u.old_rec)?,
    };
    let refs = btree::key_refs(&key);
    let Some(found) = btree::get(pager, &table.clustered, &refs)? else {
        return Ok(());
    };
    let cur = found.rec;
    if trx_id_of(table, &cur)? != trx_id || roll_ptr_of(table, &cur)? != ptr {
        return Ok(());
    }
    let cur_reps = reps_of(&table.clustered.leaf, &cur)?;
    if u.kind == UndoKind::Insert {
        for sec in &table.secondary {
            let e = sec_entry(pager, table, sec, &cur)?;
            let k = btree::key_of(&sec.index, 0, &e)?;
            btree::delete(pager, &sec.index, &btree::key_refs(&k))?;
            removed.push(Removed {
                table: table.id,
                index: sec.index.id,
                key: btree::lock_key(&sec.index, k),
            });
        }
        let chains: Vec<ExternalRef> = cur_reps.iter().filter_map(|r| r.external()).collect();
        btree::delete_with(pager, &table.clustered, &refs, &mut |mtr, pager| {
            for c in &chains {
                blob::free_in(mtr, pager, c)?;
            }
            Ok(())
        })?;
        removed.push(Removed {
            table: table.id,
            index: table.clustered.id,
            key: btree::lock_key(&table.clustered, key),
        });
        return Ok(());
    }
    let old = &u.old_rec;
    let view = sys.purge_view();
    for sec in &table.secondary {
        let old_e = sec_entry(pager, table, sec, old)?;
        let cur_e = sec_entry(pager, table, sec, &cur)?;
        match u.kind {
            UndoKind::DelMark => sec_ensure(pager, sec, &old_e, false)?,
            UndoKind::UpdExist | UndoKind::UpdDel => {
                let old_deleted = u.kind == UndoKind::UpdDel;
                if old_e != cur_e {
                    sec_remove_if_unneeded(
                        pager,
                        table,
                        sec,
                        &cur_e,
                        Some(old.clone()),
                        &view,
                        false,
                        removed,
                    )?;
                }
                sec_ensure(pager, sec, &old_e, old_deleted)?;
            }
            UndoKind::Insert => unreachable!("handled above"),
        }
    }
    // Chains the undone change created: in updated fields, not the old one's.
    let old_reps = reps_of(&table.clustered.leaf, old)?;
    let chains: Vec<ExternalRef> = u
        .updated
        .iter()
        .filter_map(|&f| {
            let f = f as usize;
            let c = cur_reps.get(f)?.external()?;
            (old_reps.get(f)?.external() != Some(c)).then_some(c)
        })
        .collect();
    btree::update_with(pager, &table.clustered, old, &mut |mtr, pager| {
        for c in &chains {
            blob::free_in(mtr, pager, c)?;
        }
        Ok(())
    })
}

/// The next page of an undo log (FIL next link).
pub fn next_page(pager: &mut Pager, page_no: u32) -> Result<u32> {
    let f = pager.fix(PageId::new(crate::fil::SYSTEM_SPACE, page_no))?;
    let n = page::next(pager.page(f));
    pager.unfix(f);
    Ok(n)
}
