//! Purge: removing what no read view can see any more. Mirrors InnoDB's
//! `row0purge.cc` and `trx0purge.cc`.
//!
//! Purge takes committed undo logs from the old end of the history list
//! while their commit number is below the purge view's limit (every view
//! sees those commits). For each record it removes delete-marked rows and
//! the secondary entries that no visible version needs, and frees the
//! off-page chains that only the old version used; then it frees the log.
//! Every step checks before it acts, so a purge interrupted by a crash is
//! simply run again.

use super::{clustered_key, reps_of, sec_entry, sec_remove_if_unneeded, trx_id_of, Tables};
use crate::blob;
use crate::btree;
use crate::error::Result;
use crate::mtr::Mtr;
use crate::page::{PageId, FIL_NULL};
use crate::pager::Pager;
use crate::record::{self, ExternalRef};
use crate::trx::undo::{self, UndoKind, UndoRecord, UNDO_EXTERNALS_FREED};
use crate::trx::{self, ReadView, TrxSys};

/// What a purge round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PurgeStats {
    /// Undo logs consumed.
    pub logs: u64,
    /// Undo records processed.
    pub records: u64,
    /// Delete-marked rows removed.
    pub rows_removed: u64,
    /// Every record removed, whose locks move to its successor.
    pub removed: Vec<super::locking::Removed>,
}

/// Purges up to `max_logs` committed logs. Returns what it did.
pub fn purge(
    pager: &mut Pager,
    sys: &TrxSys,
    tables: &Tables,
    max_logs: usize,
    canaries: crate::Canaries,
) -> Result<PurgeStats> {
    let view = sys.purge_view();
    let mut stats = PurgeStats::default();
    for _ in 0..max_logs {
        let (first, _) = trx::history(pager)?;
        if first == FIL_NULL {
            break;
        }
        let (_, trx_id, trx_no, last, _) = undo::log_header(pager, first)?;
        if trx_no >= view.low_limit_id {
            if canaries.has(crate::Canary::PurgeSecondaryAheadOfViews) {
                // Every log the views still hold, oldest first.
                let (mut log, mut last) = (first, last);
                for _ in 0..max_logs {
                    clean_secondary_early(pager, tables, log, last, &mut stats)?;
                    let (_, _, _, _, next) = undo::log_header(pager, log)?;
                    if next == FIL_NULL {
                        break;
                    }
                    log = next;
                    last = undo::log_header(pager, log)?.3;
                }
            }
            break;
        }
        let mut page_no = first;
        let mut walk = undo::ChainWalk::default();
        loop {
            walk.reach(page_no)?;
            let (recs, _) = undo::page_records(pager, page_no)?;
            for (off, u) in recs {
                // A round may purge any number of records: make room in the
                // log before each, as InnoDB's row_purge does.
                pager.free_check()?;
                purge_record(pager, tables, trx_id, &u, page_no, off, &view, &mut stats)?;
                stats.records += 1;
            }
            if page_no == last {
                break;
            }
            let next = super::rollback::next_page(pager, page_no)?;
            if next == FIL_NULL {
                break;
            }
            page_no = next;
        }
        undo::free_tail(pager, first)?;
        trx::pop_history(pager, first)?;
        stats.logs += 1;
    }
    Ok(stats)
}

#[allow(clippy::too_many_arguments)]
fn purge_record(
    pager: &mut Pager,
    tables: &Tables,
    trx_id: u64,
    u: &UndoRecord,
    page_no: u32,
    off: u16,
    view: &ReadView,
    stats: &mut PurgeStats,
) -> Result<()> {
    if u.kind == UndoKind::Insert {
        return Ok(());
    }
    let Some(table) = tables.get(&u.table_id) else {
        return Ok(());
    };
    let key = clustered_key(table, &u.old_rec)?;
    let refs = btree::key_refs(&key);
    let cur = btree::get(pager, &table.clustered, &refs)?.map(|f| f.rec);
    if u.kind == UndoKind::DelMark {
        let Some(cur) = cur else { return Ok(()) };
        if !record::is_deleted(&cur) || trx_id_of(table, &cur)? != trx_id {
            return Ok(());
        }
        for sec in &table.secondary {
            let e = sec_entry(pager, table, sec, &cur)?;
            sec_remove_if_unneeded(pager, table, sec, &e, None, view, true, &mut stats.removed)?;
        }
        let chains: Vec<ExternalRef> = reps_of(&table.clustered.leaf, &cur)?
            .iter()
            .filter_map(|r| r.external())
            .collect();
        btree::delete_with(pager, &table.clustered, &refs, &mut |mtr, pager| {
            for c in &chains {
                blob::free_in(mtr, pager, c)?;
            }
            Ok(())
        })?;
        stats.removed.push(super::locking::Removed {
            table: table.id,
            index: table.clustered.id,
            key: btree::lock_key(&table.clustered, key),
        });
        stats.rows_removed += 1;
        return Ok(());
    }
    for sec in &table.secondary {
        let old_e = sec_entry(pager, table, sec, &u.old_rec)?;
        sec_remove_if_unneeded(
            pager,
            table,
            sec,
            &old_e,
            cur.clone(),
            view,
            true,
            &mut stats.removed,
        )?;
    }
    if !u.externals_freed {
        let old_reps = reps_of(&table.clustered.leaf, &u.old_rec)?;
        let chains: Vec<ExternalRef> = u
            .updated
            .iter()
            .filter_map(|&f| old_reps.get(f as usize)?.external())
            .collect();
        if !chains.is_empty() {
            // Free the chains and flag the undo record in one
            // mini-transaction, so a crash cannot free them twice.
            let mut mtr = Mtr::new();
            for c in &chains {
                blob::free_in(&mut mtr, pager, c)?;
            }
            let f = mtr.fix(pager, PageId::new(crate::fil::SYSTEM_SPACE, page_no))?;
            let kind_off = off as usize + 2;
            let kind = pager.page(f)[kind_off] | UNDO_EXTERNALS_FREED;
            mtr.write(pager, f, kind_off, &[kind])?;
            mtr.commit(pager)?;
        }
    }
    Ok(())
}

/// The `purge-secondary-ahead-of-views` canary: the secondary entries an
/// update or delete of a log that some view still needs left behind are
/// removed as if every view had passed it (only the current version is
/// asked whether it needs them). A consistent read through the secondary
/// index by an older view then misses the row.
fn clean_secondary_early(
    pager: &mut Pager,
    tables: &Tables,
    first: u32,
    last: u32,
    stats: &mut PurgeStats,
) -> Result<()> {
    let everything = ReadView {
        creator: 0,
        low_limit_id: u64::MAX,
        up_limit_id: u64::MAX,
        active: Vec::new(),
    };
    let mut page_no = first;
    let mut walk = undo::ChainWalk::default();
    loop {
        walk.reach(page_no)?;
        let (recs, _) = undo::page_records(pager, page_no)?;
        for (_, u) in recs {
            pager.free_check()?;
            if u.kind == UndoKind::Insert {
                continue;
            }
            let Some(table) = tables.get(&u.table_id) else {
                continue;
            };
            let key = clustered_key(table, &u.old_rec)?;
            let refs = btree::key_refs(&key);
            let cur = btree::get(pager, &table.clustered, &refs)?.map(|f| f.rec);
            for sec in &table.secondary {
                let old_e = sec_entry(pager, table, sec, &u.old_rec)?;
                let start = cur.clone();
                sec_remove_if_unneeded(
                    pager,
                    table,
                    sec,
                    &old_e,
                    start,
                    &everything,
                    true,
                    &mut stats.removed,
                )?;
            }
        }
        if page_no == last {
            return Ok(());
        }
        let next = super::rollback::next_page(pager, page_no)?;
        if next == FIL_NULL {
            return Ok(());
        }
        page_no = next;
    }
}
