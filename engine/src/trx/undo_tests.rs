//! Walks along an undo log's page chain that corruption bent back on
//! itself. A rollback walks the log backwards by prev links, purge forwards
//! by next links, truncation and freeing backwards from the last page; each
//! stopped only at the log's first or last page, so a chain that looped
//! without passing that page had them undo the same records, or free the
//! same pages, forever. Each must end with a corruption error instead.

use super::*;
use crate::fil::{Fil, SYSTEM_SPACE};
use crate::io::MemStorage;
use crate::redo::{Log, LogConfig};
use crate::row::rollback::rollback_to;
use crate::trx::TrxSys;

/// The system space's first pages as a database has them: the space
/// header, the transaction system page, the rollback segment.
fn pager() -> Pager {
    let mut fil = Fil::new(Box::new(MemStorage::new()));
    fil.create(SYSTEM_SPACE, "ibdata1").unwrap();
    let log = Log::create(fil.storage(), &LogConfig::default()).unwrap();
    let mut pager = Pager::new(fil, log, 64, true, Box::new(crate::io::ManualClock::new()));
    fsp::create_space(&mut pager, SYSTEM_SPACE, 64, 3, 0).unwrap();
    let mut mtr = Mtr::new();
    let f = mtr
        .create(&mut pager, sys(TRX_SYS_PAGE), PageType::TrxSys)
        .unwrap();
    mtr.write_u64(&mut pager, f, TRX_SYS_MAX_TRX_ID, 100)
        .unwrap();
    create_rseg(&mut mtr, &mut pager).unwrap();
    mtr.commit(&mut pager).unwrap();
    pager
}

/// A log of insert records (of a table no longer there, which a rollback
/// skips) spanning three pages: (log, its pages first to last, records).
fn three_page_log(pager: &mut Pager) -> (UndoLog, Vec<u32>, u64) {
    log_of_pages(pager, 3)
}

/// [`three_page_log`] with `n` pages.
fn log_of_pages(pager: &mut Pager, n: usize) -> (UndoLog, Vec<u32>, u64) {
    let mut log = create_log(pager, 7, 0).unwrap();
    let mut pages = vec![log.first_page];
    let mut undo_no = 0;
    while pages.len() < n || undo_no % 4 != 0 {
        let rec = UndoRecord {
            kind: UndoKind::Insert,
            undo_no,
            table_id: 99,
            key: vec![Some(vec![b'k'; 900])],
            updated: Vec::new(),
            old_rec: Vec::new(),
            externals_freed: false,
        };
        append(pager, &mut log, &rec).unwrap();
        if *pages.last().unwrap() != log.last_page {
            pages.push(log.last_page);
        }
        undo_no += 1;
    }
    assert_eq!(
        pages.len(),
        n,
        "records of 900 bytes fill a page with a few"
    );
    (log, pages, undo_no)
}

/// Links `page`'s prev (or next) to `to`, as a corrupt page would.
fn link(pager: &mut Pager, page: u32, prev: bool, to: u32) {
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, sys(page)).unwrap();
    if prev {
        mtr.set_prev(pager, f, to).unwrap();
    } else {
        mtr.set_next(pager, f, to).unwrap();
    }
    mtr.commit(pager).unwrap();
}

fn rollback_all(pager: &mut Pager, log: &mut UndoLog) -> Result<u64> {
    let sys = TrxSys::load(pager).unwrap();
    rollback_to(pager, &sys, &Default::default(), 7, log, 0, &mut Vec::new())
}

fn assert_loops(r: Result<impl std::fmt::Debug>, page: u32) {
    match r {
        Err(e @ Error::Corrupt { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("loops back to page {page}")),
                "{text}"
            );
        }
        other => panic!("expected a looping chain's error, got {other:?}"),
    }
}

#[test]
fn an_intact_log_rolls_back_and_frees_to_its_first_page() {
    let mut pager = pager();
    let (mut log, pages, records) = three_page_log(&mut pager);
    assert_eq!(rollback_all(&mut pager, &mut log).unwrap(), records);
    // Truncated to its first page, whose records are gone too.
    assert_eq!(log.last_page, pages[0]);
    assert!(page_records(&mut pager, pages[0]).unwrap().0.is_empty());

    let (log, pages, _) = three_page_log(&mut pager);
    assert_eq!(log_header(&mut pager, log.first_page).unwrap().3, pages[2]);
    free_tail(&mut pager, log.first_page).unwrap();
    assert_eq!(log_header(&mut pager, log.first_page).unwrap().3, pages[0]);
}

/// Rollbacks over prev links bent back, each case (pages in the log, the
/// page whose prev link is bent, where it leads, where the walk notices):
/// a page linked to itself; last -> middle -> last, never back at the
/// first page; last -> third -> second -> third, back to a page passed
/// after the walk's first.
#[test]
fn a_rollback_over_a_looping_chain_is_corruption() {
    for (n, bent, to, noticed) in [(3, 2, 2, 2), (3, 1, 2, 2), (4, 1, 2, 2)] {
        let mut pager = pager();
        let (mut log, pages, _) = log_of_pages(&mut pager, n);
        link(&mut pager, pages[bent], true, pages[to]);
        assert_loops(rollback_all(&mut pager, &mut log), pages[noticed]);
    }
}

#[test]
fn freeing_or_truncating_a_looping_tail_is_corruption() {
    let mut pager = pager();
    let (log, pages, _) = three_page_log(&mut pager);
    link(&mut pager, pages[1], true, pages[2]);
    assert_loops(free_tail(&mut pager, log.first_page), pages[2]);

    let (mut log, pages, _) = three_page_log(&mut pager);
    link(&mut pager, pages[2], true, pages[2]);
    // Cut back to the first record of the first page: the walk from the
    // last page never gets there.
    assert_loops(
        truncate(&mut pager, &mut log, pages[0], UNDO_LOG_END as u16),
        pages[2],
    );
}

#[test]
fn a_chain_that_links_into_the_space_header_is_corruption() {
    let mut pager = pager();
    let (mut log, pages, _) = three_page_log(&mut pager);
    link(&mut pager, pages[1], true, 0);
    let e = rollback_all(&mut pager, &mut log).unwrap_err();
    assert!(e.to_string().contains("links to page 0"), "{e}");
    // And freeing the header page is refused, not a panic.
    let mut mtr = Mtr::new();
    let e = fsp::free(&mut mtr, &mut pager, sys(0)).unwrap_err();
    assert!(e.is_corruption(), "{e}");
}

#[test]
fn purging_a_log_whose_next_link_leads_back_is_corruption() {
    // Purges the oldest committed log (commit numbers below 100, the
    // transaction ids to come in `pager`, so purge takes them).
    let purge_one = |pager: &mut Pager| {
        let sys = TrxSys::load(pager).unwrap();
        crate::row::purge::purge(pager, &sys, &Default::default(), 1, Default::default())
    };
    let mut pager = pager();
    // An intact log is purged whole.
    let (log, _, records) = three_page_log(&mut pager);
    crate::trx::commit_log(&mut pager, &log, 40).unwrap();
    let stats = purge_one(&mut pager).unwrap();
    assert_eq!((stats.logs, stats.records), (1, records));

    let (log, pages, _) = three_page_log(&mut pager);
    crate::trx::commit_log(&mut pager, &log, 50).unwrap();
    link(&mut pager, pages[1], false, pages[0]);
    assert_loops(purge_one(&mut pager), pages[0]);
}

/// Sets the history list's next link of the committed log whose first
/// page is `log_page` to `to`, as a corrupt page would.
fn link_next_log(pager: &mut Pager, log_page: u32, to: u32) {
    let mut mtr = Mtr::new();
    let f = mtr.fix(pager, sys(log_page)).unwrap();
    mtr.write_u32(pager, f, UNDO_NEXT_LOG, to).unwrap();
    mtr.commit(pager).unwrap();
}

#[test]
fn a_history_list_that_loops_back_is_corruption_before_a_page_is_freed_twice() {
    let purge = |pager: &mut Pager, logs: usize| {
        let sys = TrxSys::load(pager).unwrap();
        crate::row::purge::purge(pager, &sys, &Default::default(), logs, Default::default())
    };
    let history = |pager: &mut Pager| crate::trx::history(pager).unwrap();
    // Three one-page logs in the list, intact: purged in order, each freed
    // once, the list empty after.
    let mut pager = pager();
    let mut firsts = Vec::new();
    for no in [40, 41, 42] {
        let (log, pages, _) = log_of_pages(&mut pager, 1);
        crate::trx::commit_log(&mut pager, &log, no).unwrap();
        firsts.push(pages[0]);
    }
    assert_eq!(history(&mut pager), (firsts[0], 3));
    assert_eq!(purge(&mut pager, 10).unwrap().logs, 3);
    assert_eq!(history(&mut pager), (FIL_NULL, 0));

    // The oldest log links to itself: an error before it is freed.
    let mut pager = self::pager();
    let (log, pages, _) = log_of_pages(&mut pager, 1);
    crate::trx::commit_log(&mut pager, &log, 40).unwrap();
    link_next_log(&mut pager, pages[0], pages[0]);
    let e = purge(&mut pager, 10).unwrap_err();
    assert!(e.to_string().contains("links to page"), "{e}");
    assert_eq!(fsp::header(&mut pager, SYSTEM_SPACE).unwrap().free_len, 0);

    // A two-page log, then two one-page logs, the second bent back to the
    // first log, purged and freed already (its first page listed as free,
    // its second heading the free list). The first log is met again and
    // its first page would be freed a second time: the list's length, one
    // log, says the bent link cannot be followed.
    let mut pager = self::pager();
    let mut firsts = Vec::new();
    for (no, n) in [(40, 2), (41, 1), (42, 1)] {
        let (log, pages, _) = log_of_pages(&mut pager, n);
        crate::trx::commit_log(&mut pager, &log, no).unwrap();
        firsts.push(pages[0]);
    }
    link_next_log(&mut pager, firsts[1], firsts[0]);
    let e = purge(&mut pager, 10).unwrap_err();
    assert!(e.to_string().contains("history list of 1 logs"), "{e}");
    // Three pages freed once each: the first log's two and the second's.
    assert_eq!(fsp::header(&mut pager, SYSTEM_SPACE).unwrap().free_len, 3);

    // A list that says it is shorter than its links: it ends where its
    // length says, in an error, not with a log beyond it purged.
    let mut pager = self::pager();
    for no in [40, 41] {
        let (log, _, _) = log_of_pages(&mut pager, 1);
        crate::trx::commit_log(&mut pager, &log, no).unwrap();
    }
    let mut mtr = Mtr::new();
    let r = mtr.fix(&mut pager, sys(RSEG_PAGE)).unwrap();
    mtr.write_u32(&mut pager, r, RSEG_HISTORY_LEN, 1).unwrap();
    mtr.commit(&mut pager).unwrap();
    let e = purge(&mut pager, 10).unwrap_err();
    assert!(e.to_string().contains("history list of 1 logs"), "{e}");
}
