//! Transactions: ids, the set of active transactions, read views, undo log
//! slots, and the commit itself. Mirrors InnoDB's `trx0sys.cc` and
//! `trx0trx.cc`.
//!
//! Transaction ids and commit numbers come from one counter. The counter's
//! bound is persisted in the transaction system header every
//! [`TRX_ID_WRITE_MARGIN`] ids, so after a crash the next id is above every
//! id ever handed out. The commit of a transaction with changes is one
//! mini-transaction that marks its undo log committed, clears its slot and
//! appends the log to the history list; the redo of that mini-transaction
//! is the commit record, and its end LSN the commit LSN that the flush
//! setting makes durable.

pub mod undo;
pub mod view;

use crate::error::{Error, Result};
use crate::fil::SYSTEM_SPACE;
use crate::mtr::Mtr;
use crate::page::{self, PageId, FIL_NULL};
use crate::pager::Pager;
use std::collections::{BTreeMap, BTreeSet};
use undo::{
    UndoLog, RSEG_HISTORY_FIRST, RSEG_HISTORY_LAST, RSEG_HISTORY_LEN, RSEG_N_SLOTS, RSEG_PAGE,
    RSEG_SLOTS,
};
pub use view::ReadView;

/// How often the id bound is persisted.
pub const TRX_ID_WRITE_MARGIN: u64 = 256;

/// Isolation levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Isolation {
    /// Reads see the newest version, committed or not.
    ReadUncommitted,
    /// Each statement reads from a fresh snapshot.
    ReadCommitted,
    /// The transaction reads from one snapshot taken at its first read.
    #[default]
    RepeatableRead,
    /// Like REPEATABLE READ; plain reads become locking reads once the lock
    /// manager exists.
    Serializable,
}

/// A transaction in progress.
#[derive(Debug, Clone)]
pub struct Trx {
    /// Its id.
    pub id: u64,
    /// Its isolation level.
    pub isolation: Isolation,
    /// Its undo log, once it has changed something.
    pub undo: Option<UndoLog>,
    /// Its read view, if one is open.
    pub view: Option<ReadView>,
    /// Named savepoints: the undo number at each, and the first lock id
    /// requested after it.
    pub savepoints: Vec<(String, u64, u64)>,
    /// Simulated time it started, in microseconds.
    pub started_us: u64,
    /// A statement that reads or changes a table has run in it: MySQL has
    /// registered InnoDB in the transaction (`innobase_register_trx_and_stmt`
    /// from `external_lock`), which BEGIN and SAVEPOINT alone do not.
    pub touched: bool,
}

impl Trx {
    /// The undo number the next change will get: the undo records it has
    /// and has not rolled back, which InnoDB's `trx_weight` counts
    /// (`trx->undo_no`).
    pub fn undo_no(&self) -> u64 {
        self.undo.as_ref().map_or(0, |u| u.next_undo_no)
    }
}

/// The transaction system.
#[derive(Debug)]
pub struct TrxSys {
    next_id: u64,
    persisted_bound: u64,
    /// Active transaction ids (with changes or not).
    active: BTreeSet<u64>,
    free_slots: SlotSet,
    /// Open read views, by the transaction that holds them.
    views: BTreeMap<u64, ReadView>,
    /// Commits since purge last emptied what it could: a cheap hint of the
    /// history list's length, to run purge before it grows long.
    pub history_hint: u64,
    /// How many undo records a clustered insert that its compressed leaf
    /// refused writes before the one its record points to: 2 in 1.0.6,
    /// whose `btr_cur_optimistic_insert` writes one before it finds the
    /// page cannot take the record and whose `btr_cur_pessimistic_insert`
    /// tries that again first; 1 under
    /// [`crate::LaterRule::PessimisticInsertTriesNoOptimisticFirst`].
    pub refused_insert_undo: u8,
}

/// The free undo slots of the rollback segment, as a bitmap: the lowest
/// free slot is taken first, as InnoDB's `trx_rsegf_undo_find_free` does.
/// (A `BTreeSet` of up to 1024 slots cost a visible share of every
/// recovery to build.)
#[derive(Debug, Clone, Default)]
struct SlotSet {
    words: [u64; RSEG_N_SLOTS / 64],
}

impl SlotSet {
    fn insert(&mut self, slot: usize) {
        self.words[slot / 64] |= 1 << (slot % 64);
    }

    fn pop_first(&mut self) -> Option<usize> {
        let (i, w) = self.words.iter_mut().enumerate().find(|(_, w)| **w != 0)?;
        let bit = w.trailing_zeros() as usize;
        *w &= !(1 << bit);
        Some(i * 64 + bit)
    }
}

const _: () = assert!(RSEG_N_SLOTS.is_multiple_of(64));

fn trx_sys_page() -> PageId {
    PageId::new(SYSTEM_SPACE, undo::TRX_SYS_PAGE)
}

impl TrxSys {
    /// Loads the transaction system: the id bound from the header, which
    /// undo slots are taken (by transactions recovery will roll back), and
    /// the history list's length, which purge starts from as InnoDB's
    /// `trx_rseg_mem_create` adds each segment's length to
    /// `trx_sys->rseg_history_len`. (Starting from zero, a server that
    /// crashed after fewer commits than the purge threshold never purged
    /// the logs earlier runs left, and the system space grew at every
    /// crash.)
    pub fn load(pager: &mut Pager) -> Result<TrxSys> {
        let f = pager.fix(trx_sys_page())?;
        let bound = page::get_u64(pager.page(f), undo::TRX_SYS_MAX_TRX_ID);
        pager.unfix(f);
        let mut free_slots = SlotSet::default();
        let f = pager.fix(PageId::new(SYSTEM_SPACE, RSEG_PAGE))?;
        for s in 0..RSEG_N_SLOTS {
            if page::get_u32(pager.page(f), RSEG_SLOTS + 4 * s) == FIL_NULL {
                free_slots.insert(s);
            }
        }
        let history_len = page::get_u32(pager.page(f), RSEG_HISTORY_LEN);
        pager.unfix(f);
        Ok(TrxSys {
            next_id: bound.max(1),
            persisted_bound: bound.max(1),
            active: BTreeSet::new(),
            free_slots,
            views: BTreeMap::new(),
            history_hint: u64::from(history_len),
            refused_insert_undo: 2,
        })
    }

    /// Hands out an id, persisting a new bound when the old one is reached.
    pub fn alloc_id(&mut self, pager: &mut Pager) -> Result<u64> {
        if self.next_id >= self.persisted_bound {
            let bound = self.next_id + TRX_ID_WRITE_MARGIN;
            let mut mtr = Mtr::new();
            let f = mtr.fix(pager, trx_sys_page())?;
            mtr.write_u64(pager, f, undo::TRX_SYS_MAX_TRX_ID, bound)?;
            mtr.commit(pager)?;
            self.persisted_bound = bound;
        }
        let id = self.next_id;
        self.next_id += 1;
        Ok(id)
    }

    /// Makes sure ids above `id` are handed out from now on (recovery saw
    /// `id` in an undo log).
    pub fn observe_id(&mut self, id: u64) {
        if id >= self.next_id {
            self.next_id = id + 1;
        }
    }

    /// Starts a transaction.
    pub fn begin(&mut self, pager: &mut Pager, isolation: Isolation, now_us: u64) -> Result<Trx> {
        let id = self.alloc_id(pager)?;
        self.active.insert(id);
        Ok(Trx {
            id,
            isolation,
            undo: None,
            view: None,
            savepoints: Vec::new(),
            started_us: now_us,
            touched: false,
        })
    }

    /// Registers a transaction found active by recovery.
    pub fn resurrect(&mut self, id: u64) {
        self.observe_id(id);
        self.active.insert(id);
    }

    /// Active transaction ids, ascending.
    pub fn active_ids(&self) -> Vec<u64> {
        self.active.iter().copied().collect()
    }

    /// Opens a read view for `trx` (replacing any it had).
    pub fn open_view(&mut self, trx: &mut Trx) {
        let active: Vec<u64> = self
            .active
            .iter()
            .copied()
            .filter(|&t| t != trx.id)
            .collect();
        let view = ReadView {
            creator: trx.id,
            low_limit_id: self.next_id,
            up_limit_id: active.first().copied().unwrap_or(self.next_id),
            active,
        };
        self.views.insert(trx.id, view.clone());
        trx.view = Some(view);
    }

    /// A snapshot for a read outside any transaction (creator 0, an id no
    /// transaction has). Not registered: the caller uses it within one
    /// statement, during which purge does not run.
    pub fn snapshot(&self) -> ReadView {
        let active: Vec<u64> = self.active.iter().copied().collect();
        ReadView {
            creator: 0,
            low_limit_id: self.next_id,
            up_limit_id: active.first().copied().unwrap_or(self.next_id),
            active,
        }
    }

    /// Closes `trx`'s read view.
    pub fn close_view(&mut self, trx: &mut Trx) {
        self.views.remove(&trx.id);
        trx.view = None;
    }

    /// The purge view: the oldest open view, or one taken now. Committed
    /// changes it sees are visible to every view, so the versions before
    /// them are needed by nobody.
    pub fn purge_view(&self) -> ReadView {
        let limit = self
            .views
            .values()
            .map(|v| v.low_limit_id)
            .min()
            .unwrap_or(self.next_id);
        // A transaction active when a view was taken stays invisible to
        // that view after it commits, so purge must not see it either: hide
        // what every view hides as well as what is active now. (InnoDB
        // copies the oldest view, whose list holds all of these.)
        let mut active: BTreeSet<u64> =
            self.active.iter().copied().filter(|&t| t < limit).collect();
        for v in self.views.values() {
            active.extend(v.active.iter().copied().filter(|&t| t < limit));
        }
        let active: Vec<u64> = active.into_iter().collect();
        ReadView {
            creator: 0,
            low_limit_id: limit,
            up_limit_id: active.first().copied().unwrap_or(limit),
            active,
        }
    }

    /// Takes a free undo slot.
    pub fn take_slot(&mut self) -> Result<usize> {
        self.free_slots.pop_first().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "too many concurrent transactions with changes (at most {RSEG_N_SLOTS})"
            ))
        })
    }

    /// Returns an undo slot.
    pub fn give_slot(&mut self, slot: usize) {
        self.free_slots.insert(slot);
    }

    /// Forgets a finished transaction.
    pub fn end(&mut self, trx: &mut Trx) {
        self.close_view(trx);
        self.active.remove(&trx.id);
        if let Some(u) = trx.undo.take() {
            self.give_slot(u.slot);
        }
    }

    /// Commits: the commit mini-transaction for a transaction with changes.
    /// Returns the commit LSN (0 when there was nothing to commit).
    pub fn commit(&mut self, pager: &mut Pager, trx: &mut Trx) -> Result<u64> {
        let mut lsn = 0;
        if let Some(log) = trx.undo.clone() {
            let trx_no = self.alloc_id(pager)?;
            lsn = commit_log(pager, &log, trx_no)?;
            self.history_hint += 1;
        }
        self.end(trx);
        Ok(lsn)
    }
}

/// The commit mini-transaction: the log becomes COMMITTED with its commit
/// number, leaves its slot, and joins the end of the history list.
fn commit_log(pager: &mut Pager, log: &UndoLog, trx_no: u64) -> Result<u64> {
    let sys = |p| PageId::new(SYSTEM_SPACE, p);
    let mut mtr = Mtr::new();
    let h = mtr.fix(pager, sys(log.first_page))?;
    mtr.write_u16(pager, h, undo::UNDO_STATE, undo::UNDO_COMMITTED)?;
    mtr.write_u64(pager, h, undo::UNDO_TRX_NO, trx_no)?;
    mtr.write_u32(pager, h, undo::UNDO_NEXT_LOG, FIL_NULL)?;
    let r = mtr.fix(pager, sys(RSEG_PAGE))?;
    let (len, last) = {
        let p = pager.page(r);
        (
            page::get_u32(p, RSEG_HISTORY_LEN),
            page::get_u32(p, RSEG_HISTORY_LAST),
        )
    };
    mtr.write_u32(pager, r, RSEG_SLOTS + 4 * log.slot, FIL_NULL)?;
    if last == FIL_NULL {
        mtr.write_u32(pager, r, RSEG_HISTORY_FIRST, log.first_page)?;
    } else {
        let l = mtr.fix(pager, sys(last))?;
        mtr.write_u32(pager, l, undo::UNDO_NEXT_LOG, log.first_page)?;
    }
    mtr.write_u32(pager, r, RSEG_HISTORY_LAST, log.first_page)?;
    mtr.write_u32(pager, r, RSEG_HISTORY_LEN, len + 1)?;
    mtr.commit(pager)
}

/// Removes the oldest log from the history list and frees its first page
/// (its other pages were freed already). One mini-transaction.
pub fn pop_history(pager: &mut Pager, first_page: u32) -> Result<()> {
    let sys = |p| PageId::new(SYSTEM_SPACE, p);
    let (_, _, _, _, next) = undo::log_header(pager, first_page)?;
    let mut mtr = Mtr::new();
    let r = mtr.fix(pager, sys(RSEG_PAGE))?;
    let (len, head) = {
        let p = pager.page(r);
        (
            page::get_u32(p, RSEG_HISTORY_LEN),
            page::get_u32(p, RSEG_HISTORY_FIRST),
        )
    };
    assert_eq!(
        head, first_page,
        "purge must consume the history list in order"
    );
    // The list's length and its links agree: a log whose link leads back
    // to itself, or a list that goes on past its length (a link bent back
    // to an earlier log), would have purge free the same pages again.
    if len == 0 || next == first_page || (len == 1) != (next == FIL_NULL) {
        mtr.release(pager);
        return Err(Error::Corrupt {
            file: "ibdata1".into(),
            reason: format!(
                "history list of {len} logs: the log at page {first_page} links to {}",
                if next == FIL_NULL {
                    "none".to_string()
                } else {
                    format!("page {next}")
                }
            ),
        });
    }
    mtr.write_u32(pager, r, RSEG_HISTORY_FIRST, next)?;
    if next == FIL_NULL {
        mtr.write_u32(pager, r, RSEG_HISTORY_LAST, FIL_NULL)?;
    }
    mtr.write_u32(pager, r, RSEG_HISTORY_LEN, len - 1)?;
    crate::fsp::free(&mut mtr, pager, sys(first_page))?;
    mtr.commit(pager)?;
    Ok(())
}

/// Frees the first page of a rolled-back log and clears its slot. One
/// mini-transaction: the end of a rollback.
pub fn drop_rolled_back_log(pager: &mut Pager, log: &UndoLog) -> Result<()> {
    let sys = |p| PageId::new(SYSTEM_SPACE, p);
    let mut mtr = Mtr::new();
    let r = mtr.fix(pager, sys(RSEG_PAGE))?;
    mtr.write_u32(pager, r, RSEG_SLOTS + 4 * log.slot, FIL_NULL)?;
    crate::fsp::free(&mut mtr, pager, sys(log.first_page))?;
    mtr.commit(pager)?;
    Ok(())
}

/// The history list: (first page of the oldest log, length).
pub fn history(pager: &mut Pager) -> Result<(u32, u32)> {
    let f = pager.fix(PageId::new(SYSTEM_SPACE, RSEG_PAGE))?;
    let p = pager.page(f);
    let out = (
        page::get_u32(p, RSEG_HISTORY_FIRST),
        page::get_u32(p, RSEG_HISTORY_LEN),
    );
    pager.unfix(f);
    Ok(out)
}

/// Undo logs left in slots (active at a crash): (slot, first page).
pub fn slotted_logs(pager: &mut Pager) -> Result<Vec<(usize, u32)>> {
    let f = pager.fix(PageId::new(SYSTEM_SPACE, RSEG_PAGE))?;
    let mut out = Vec::new();
    for s in 0..RSEG_N_SLOTS {
        let p = page::get_u32(pager.page(f), RSEG_SLOTS + 4 * s);
        if p != FIL_NULL {
            out.push((s, p));
        }
    }
    pager.unfix(f);
    Ok(out)
}
