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

#[test]
fn a_rollback_over_a_page_linked_back_to_itself_is_corruption() {
    let mut pager = pager();
    let (mut log, pages, _) = three_page_log(&mut pager);
    link(&mut pager, pages[2], true, pages[2]);
    assert_loops(rollback_all(&mut pager, &mut log), pages[2]);
}

#[test]
fn a_rollback_over_a_cycle_that_misses_the_first_page_is_corruption() {
    let mut pager = pager();
    let (mut log, pages, _) = three_page_log(&mut pager);
    // Last -> middle -> last ...: never back at the first page.
    link(&mut pager, pages[1], true, pages[2]);
    assert_loops(rollback_all(&mut pager, &mut log), pages[2]);
}

#[test]
fn a_rollback_over_a_cycle_behind_its_first_step_is_corruption() {
    let mut pager = pager();
    let (mut log, pages, _) = log_of_pages(&mut pager, 4);
    // Last -> third -> second -> third ...: the walk comes back to a page
    // it passed after its first.
    link(&mut pager, pages[1], true, pages[2]);
    assert_loops(rollback_all(&mut pager, &mut log), pages[2]);
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
    let mut pager = pager();
    // An intact log is purged whole.
    let (log, _, records) = three_page_log(&mut pager);
    crate::trx::commit_log(&mut pager, &log, 40).unwrap();
    let sys = TrxSys::load(&mut pager).unwrap();
    let stats = crate::row::purge::purge(
        &mut pager,
        &sys,
        &Default::default(),
        1,
        crate::Canaries::default(),
    )
    .unwrap();
    assert_eq!((stats.logs, stats.records), (1, records));

    let (log, pages, _) = three_page_log(&mut pager);
    // Committed with number 50, below every transaction id to come: purge
    // takes it (TRX_SYS_MAX_TRX_ID is 100 in `pager`).
    crate::trx::commit_log(&mut pager, &log, 50).unwrap();
    link(&mut pager, pages[1], false, pages[0]);
    let sys = TrxSys::load(&mut pager).unwrap();
    let r = crate::row::purge::purge(
        &mut pager,
        &sys,
        &Default::default(),
        1,
        crate::Canaries::default(),
    );
    assert_loops(r, pages[0]);
}
