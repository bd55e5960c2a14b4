//! Row locking as InnoDB users see it (issue 4's acceptance): lock waits and
//! the information_schema views during one, the lock wait timeout (1205)
//! with and without `innodb_rollback_on_timeout`, the two-row deadlock and
//! InnoDB's victim rule (1213), gap and next-key locks under REPEATABLE READ
//! and their absence under READ COMMITTED, locking reads against consistent
//! reads across isolation levels, and the FIFO order of a record's queue.
//!
//! Every scenario drives sessions step by step on one engine with a manual
//! clock, so a wait, a timeout or a deadlock verdict happens at a known
//! simulated moment. The table is sysbench's `sbtest` (`id` primary key,
//! secondary index `k`); rows are `(id, k = id, 'c<id>', 'pad')` unless a
//! statement changed `k`.

mod common;

use common::{sb_row as row, sbtest};
use engine::io::{ManualClock, MemStorage};
use engine::*;
use std::sync::Arc;

/// The table every scenario uses.
const T: &str = "t";

/// InnoDB's default `innodb_lock_wait_timeout`, 50 s.
const TIMEOUT_US: u64 = 50_000_000;

/// Only `rule` when `on`, else InnoDB 1.0.6's rules alone.
fn only_if(on: bool, rule: LaterRule) -> LaterRules {
    if on {
        LaterRules::NONE.with(rule)
    } else {
        LaterRules::NONE
    }
}

/// An engine with table [`T`] holding the rows with these ids, and its clock.
fn open(cfg: Config, ids: &[u64]) -> Result<(Engine, Arc<ManualClock>)> {
    let clock = Arc::new(ManualClock::new());
    let (mut e, _) = Engine::open(Box::new(MemStorage::new()), Box::new(clock.clone()), cfg)?;
    e.create_table(sbtest(T, RowFormat::Compact))?;
    let s = e.session();
    for &id in ids {
        let r = ok(&mut e, s, insert(id, id))?;
        assert_eq!(r, Response::Affected(1), "loading row {id}");
    }
    e.close_session(s)?;
    Ok((e, clock))
}

fn insert(id: u64, k: u64) -> Request {
    Request::Insert {
        table: T.into(),
        row: row(id, k),
    }
}

fn update(id: u64, k: u64) -> Request {
    Request::Update {
        table: T.into(),
        key: vec![Value::UInt(id)],
        set: vec![("k".into(), Value::UInt(k))],
    }
}

fn get(id: u64) -> Request {
    Request::Get {
        table: T.into(),
        key: vec![Value::UInt(id)],
    }
}

fn scan(low: RangeBound, high: RangeBound) -> Request {
    Request::Scan {
        table: T.into(),
        index: None,
        low,
        high,
        reverse: false,
        limit: None,
    }
}

/// SELECT * FROM t WHERE id = `id` FOR UPDATE (`exclusive`) or LOCK IN
/// SHARE MODE.
fn locking_get(id: u64, exclusive: bool) -> Request {
    Request::Locking {
        read: Box::new(get(id)),
        exclusive,
        index_condition: false,
    }
}

/// SELECT * FROM t WHERE id BETWEEN `low` AND `high` FOR UPDATE.
fn scan_for_update(low: u64, high: u64) -> Request {
    Request::Locking {
        read: Box::new(scan(
            RangeBound::Included(vec![Value::UInt(low)]),
            RangeBound::Included(vec![Value::UInt(high)]),
        )),
        exclusive: true,
        index_condition: false,
    }
}

/// Runs a statement that must finish without waiting.
#[track_caller]
fn ok(e: &mut Engine, s: SessionId, r: Request) -> Result<Response> {
    let text = engine::handler::statement_text(&r);
    match e.execute(s, r)? {
        Step::Done(resp) => Ok(resp),
        Step::Waiting => panic!("session {s}: `{text}` waits, it must not"),
    }
}

/// Runs a statement that must wait for a lock.
#[track_caller]
fn waits(e: &mut Engine, s: SessionId, r: Request) -> Result<()> {
    let text = engine::handler::statement_text(&r);
    let step = e.execute(s, r)?;
    assert_eq!(step, Step::Waiting, "session {s}: `{text}` must wait");
    assert!(e.is_waiting(s), "session {s} is parked after `{text}`");
    Ok(())
}

/// Resumes a waiting statement that must still wait.
#[track_caller]
fn still_waits(e: &mut Engine, s: SessionId) -> Result<()> {
    assert_eq!(e.resume(s)?, Step::Waiting, "session {s} still waits");
    Ok(())
}

/// Resumes a waiting statement that must now complete.
#[track_caller]
fn resumes(e: &mut Engine, s: SessionId) -> Result<Response> {
    match e.resume(s)? {
        Step::Done(r) => {
            assert!(!e.is_waiting(s), "session {s} is no longer parked");
            Ok(r)
        }
        Step::Waiting => panic!("session {s} still waits, it must have been granted"),
    }
}

#[track_caller]
fn assert_lock_wait_timeout(r: Result<Step>) {
    match r {
        Err(Error::LockWaitTimeout) => {
            let err = Error::LockWaitTimeout;
            assert_eq!(err.mysql_code(), Some(1205));
            assert_eq!(
                err.to_string(),
                "Lock wait timeout exceeded; try restarting transaction"
            );
        }
        other => panic!("expected 1205 (lock wait timeout), got {other:?}"),
    }
}

#[track_caller]
fn assert_deadlock(r: Result<Step>) {
    match r {
        Err(Error::Deadlock) => {
            let err = Error::Deadlock;
            assert_eq!(err.mysql_code(), Some(1213));
            assert_eq!(
                err.to_string(),
                "Deadlock found when trying to get lock; try restarting transaction"
            );
        }
        other => panic!("expected 1213 (deadlock), got {other:?}"),
    }
}

/// Column `k` of row `id` as session `s` reads it (`None`: no such row).
fn k_seen(e: &mut Engine, s: SessionId, r: Request) -> Result<Option<u64>> {
    match ok(e, s, r)? {
        Response::Row(None) => Ok(None),
        Response::Row(Some(cols)) => match cols[1] {
            Value::UInt(k) => Ok(Some(k)),
            ref other => panic!("k is an unsigned int, got {other:?}"),
        },
        other => panic!("a point read returns a row, got {other:?}"),
    }
}

/// Column `k` of row `id` as a fresh autocommit SELECT sees it: the
/// committed state.
fn committed_k(e: &mut Engine, id: u64) -> Result<Option<u64>> {
    let s = e.session();
    let k = k_seen(e, s, get(id))?;
    e.close_session(s)?;
    Ok(k)
}

/// The ids of every committed row, in key order.
fn committed_ids(e: &mut Engine) -> Result<Vec<u64>> {
    let s = e.session();
    let Response::Rows(rows) = ok(e, s, scan(RangeBound::Unbounded, RangeBound::Unbounded))? else {
        panic!("a scan returns rows")
    };
    e.close_session(s)?;
    Ok(rows
        .iter()
        .map(|r| match r[0] {
            Value::UInt(id) => id,
            ref other => panic!("id is an unsigned int, got {other:?}"),
        })
        .collect())
}

/// Session `s`'s transaction id as INNODB_TRX prints it.
#[track_caller]
fn trx_hex(e: &Engine, s: SessionId) -> String {
    let id = e
        .trx_id(s)
        .unwrap_or_else(|| panic!("session {s} has an open transaction"));
    format!("{id:X}")
}

/// Session `s`'s row of INNODB_TRX.
#[track_caller]
fn trx_row(e: &mut Engine, s: SessionId) -> Result<InnodbTrx> {
    let rows = e.innodb_trx()?;
    let mine: Vec<InnodbTrx> = rows
        .into_iter()
        .filter(|r| r.trx_mysql_thread_id == s)
        .collect();
    assert_eq!(mine.len(), 1, "session {s} has one INNODB_TRX row");
    Ok(mine.into_iter().next().expect("one row"))
}

/// INNODB_LOCK_WAITS as sorted (requesting, blocking) transaction id pairs.
fn wait_pairs(e: &mut Engine) -> Result<Vec<(String, String)>> {
    let mut pairs: Vec<(String, String)> = e
        .innodb_lock_waits()?
        .into_iter()
        .map(|w| (w.requesting_trx_id, w.blocking_trx_id))
        .collect();
    pairs.sort();
    Ok(pairs)
}

/// The record locks session `s`'s transaction holds or waits for.
fn record_locks_of(e: &Engine, s: SessionId) -> usize {
    let Some(trx) = e.trx_id(s) else {
        return 0;
    };
    e.locks()
        .locks()
        .filter(|l| l.trx == trx && matches!(l.target, engine::lock::Target::Record { .. }))
        .count()
}

// ---------------------------------------------------------------------------
// 1. The seeds' scenario: a wait, the views during it, the timeout.
// ---------------------------------------------------------------------------

/// Session 1 locks row 5 FOR UPDATE; session 2 inserts row 100, then its
/// UPDATE of row 5 waits. Returns (session 1, session 2); the wait began
/// at 2 s on the clock.
fn seed_wait(e: &mut Engine, clock: &ManualClock) -> Result<(SessionId, SessionId)> {
    let s1 = e.session();
    let s2 = e.session();
    ok(e, s1, Request::Begin)?;
    assert_eq!(k_seen(e, s1, locking_get(5, true))?, Some(5));
    clock.advance_us(2_000_000);
    ok(e, s2, Request::Begin)?;
    assert_eq!(ok(e, s2, insert(100, 100))?, Response::Affected(1));
    waits(e, s2, update(5, 500))?;
    Ok((s1, s2))
}

#[test]
fn seed_scenario_views_show_one_wait_between_two_x_record_locks() -> Result<()> {
    let (mut e, clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let (s1, s2) = seed_wait(&mut e, &clock)?;
    let (t1, t2) = (trx_hex(&e, s1), trx_hex(&e, s2));
    assert_ne!(t1, t2);
    assert_eq!(e.stats.waits, 1);

    // INNODB_LOCK_WAITS: exactly one row, session 2 waiting for session 1.
    let waits = e.innodb_lock_waits()?;
    assert_eq!(waits.len(), 1, "one lock wait: {waits:?}");
    let w = &waits[0];
    assert_eq!(w.requesting_trx_id, t2);
    assert_eq!(w.blocking_trx_id, t1);

    // INNODB_LOCKS: the waiting lock and the one blocking it, both X record
    // locks on PRIMARY holding the key 5, on the same record.
    let locks = e.innodb_locks()?;
    assert_eq!(locks.len(), 2, "two locks: {locks:?}");
    let requested = locks
        .iter()
        .find(|l| l.lock_id == w.requested_lock_id)
        .expect("the requested lock is listed");
    let blocking = locks
        .iter()
        .find(|l| l.lock_id == w.blocking_lock_id)
        .expect("the blocking lock is listed");
    assert_eq!(requested.lock_trx_id, t2);
    assert_eq!(blocking.lock_trx_id, t1);
    for l in [requested, blocking] {
        assert_eq!(l.lock_mode, "X", "{l:?}");
        assert_eq!(l.lock_type, "RECORD", "{l:?}");
        assert!(l.lock_table.ends_with("`t`"), "{l:?}");
        assert_eq!(l.lock_index.as_deref(), Some("`PRIMARY`"), "{l:?}");
        assert_eq!(l.lock_data.as_deref(), Some("5"), "{l:?}");
        let (space, page, heap) = (
            l.lock_space.expect("a record lock has a space"),
            l.lock_page.expect("a record lock has a page"),
            l.lock_rec.expect("a record lock has a heap number"),
        );
        // Rows 1..=10 were inserted in key order into one leaf: row 5 is
        // the fifth user record, heap number 2 + 4 (0 and 1 are the
        // infimum and supremum).
        assert_eq!(heap, 6, "{l:?}");
        assert_eq!(
            l.lock_id,
            format!("{}:{space}:{page}:{heap}", l.lock_trx_id),
            "lock_id is trx:space:page:heap"
        );
    }
    assert_eq!(requested.lock_space, blocking.lock_space);
    assert_eq!(requested.lock_page, blocking.lock_page);
    assert_eq!(requested.lock_rec, blocking.lock_rec);

    // INNODB_TRX: session 2 in LOCK WAIT for that lock since 2 s, session 1
    // RUNNING with nothing requested.
    let trxs = e.innodb_trx()?;
    assert_eq!(trxs.len(), 2, "two transactions: {trxs:?}");
    let r2 = trx_row(&mut e, s2)?;
    assert_eq!(r2.trx_id, t2);
    assert_eq!(r2.trx_state, "LOCK WAIT");
    assert_eq!(
        r2.trx_requested_lock_id.as_deref(),
        Some(w.requested_lock_id.as_str())
    );
    assert_eq!(r2.trx_wait_started, Some(2_000_000));
    assert_eq!(r2.trx_started, 2_000_000);
    let query = r2.trx_query.expect("a waiting transaction shows its query");
    assert!(query.contains("UPDATE"), "trx_query: {query}");
    let r1 = trx_row(&mut e, s1)?;
    assert_eq!(r1.trx_id, t1);
    assert_eq!(r1.trx_state, "RUNNING");
    assert_eq!(r1.trx_requested_lock_id, None);
    assert_eq!(r1.trx_wait_started, None);
    assert_eq!(r1.trx_started, 0);
    // As in the seed: no undo, an IX table lock and one record lock.
    assert_eq!(r1.trx_weight, 2);
    // One undo record (the insert) and at least the IX table lock and the
    // waiting record lock (InnoDB's insert lock is implicit, the engine's
    // explicit, so 3 or 4).
    assert!(r2.trx_weight >= 3, "weight of session 2: {}", r2.trx_weight);
    Ok(())
}

#[test]
fn seed_scenario_timeout_rolls_back_only_the_statement() -> Result<()> {
    let (mut e, clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let (s1, s2) = seed_wait(&mut e, &clock)?;
    let t2 = e.trx_id(s2);

    // 49.9 s into the wait: still waiting.
    clock.advance_us(TIMEOUT_US - 100_000);
    still_waits(&mut e, s2)?;
    assert_eq!(e.stats.lock_wait_timeouts, 0);
    assert_eq!(e.innodb_lock_waits()?.len(), 1);

    // 50 s: 1205, and only the UPDATE is undone.
    clock.advance_us(100_000);
    assert_lock_wait_timeout(e.resume(s2));
    assert_eq!(e.stats.lock_wait_timeouts, 1);
    assert!(!e.is_waiting(s2));
    assert_eq!(e.trx_id(s2), t2, "session 2's transaction is still open");
    assert!(e.innodb_lock_waits()?.is_empty());
    assert!(e.innodb_locks()?.is_empty());
    let r2 = trx_row(&mut e, s2)?;
    assert_eq!(r2.trx_state, "RUNNING");
    assert_eq!(r2.trx_requested_lock_id, None);
    assert_eq!(r2.trx_query, None);
    assert_eq!(k_seen(&mut e, s2, get(100))?, Some(100), "its insert stays");
    assert_eq!(
        k_seen(&mut e, s2, get(5))?,
        Some(5),
        "its update is not done"
    );
    // Session 1 still holds row 5: session 2's retry waits again.
    waits(&mut e, s2, update(5, 500))?;
    ok(&mut e, s1, Request::Commit)?;
    assert_eq!(resumes(&mut e, s2)?, Response::Affected(1));
    ok(&mut e, s2, Request::Commit)?;
    assert_eq!(committed_k(&mut e, 100)?, Some(100));
    assert_eq!(committed_k(&mut e, 5)?, Some(500));
    Ok(())
}

#[test]
fn seed_scenario_rollback_on_timeout_undoes_the_whole_transaction() -> Result<()> {
    let cfg = Config {
        rollback_on_timeout: true,
        ..Config::default()
    };
    let (mut e, clock) = open(cfg, &(1..=10).collect::<Vec<_>>())?;
    let (s1, s2) = seed_wait(&mut e, &clock)?;
    let t1 = e.trx_id(s1);

    clock.advance_us(TIMEOUT_US - 100_000);
    still_waits(&mut e, s2)?;
    clock.advance_us(100_000);
    assert_lock_wait_timeout(e.resume(s2));
    assert_eq!(e.stats.lock_wait_timeouts, 1);
    assert_eq!(e.trx_id(s2), None, "session 2's transaction is gone");
    assert!(!e.is_waiting(s2));
    let trxs = e.innodb_trx()?;
    assert_eq!(trxs.len(), 1, "only session 1's transaction: {trxs:?}");
    assert_eq!(trxs[0].trx_mysql_thread_id, s1);
    assert_eq!(e.trx_id(s1), t1, "session 1 is untouched");
    assert_eq!(record_locks_of(&e, s2), 0);
    // The insert of row 100 is gone, for session 2 itself too.
    assert_eq!(k_seen(&mut e, s2, get(100))?, None);
    assert_eq!(committed_k(&mut e, 100)?, None);
    ok(&mut e, s1, Request::Commit)?;
    assert_eq!(committed_ids(&mut e)?, (1..=10).collect::<Vec<_>>());
    Ok(())
}

#[test]
fn session_lock_wait_timeout_overrides_the_default() -> Result<()> {
    let (mut e, clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let s1 = e.session();
    let s2 = e.session();
    ok(&mut e, s2, Request::SetLockWaitTimeout(2))?;
    ok(&mut e, s1, Request::Begin)?;
    ok(&mut e, s1, update(5, 50))?;
    waits(&mut e, s2, update(5, 51))?;
    assert_eq!(e.wait_deadline_us(s2), Some(2_000_000));
    clock.advance_us(1_999_999);
    still_waits(&mut e, s2)?;
    clock.advance_us(1);
    assert_lock_wait_timeout(e.resume(s2));
    // An autocommit statement's transaction ends with it.
    assert_eq!(e.trx_id(s2), None);
    ok(&mut e, s1, Request::Commit)?;
    assert_eq!(committed_k(&mut e, 5)?, Some(50));
    Ok(())
}

// ---------------------------------------------------------------------------
// 2. The two-row deadlock.
// ---------------------------------------------------------------------------

/// Row A, row B, and the rows only the heavy transaction touches.
const A: u64 = 1;
const B: u64 = 2;
const EXTRA: [u64; 3] = [11, 12, 13];

/// T1 updates `extra` rows, then row A; T2 updates row B. Returns the
/// engine, its clock and (T1's session, T2's session).
fn two_lockers(
    cfg: Config,
    extra: &[u64],
) -> Result<(Engine, Arc<ManualClock>, SessionId, SessionId)> {
    let (mut e, clock) = open(cfg, &(1..=20).collect::<Vec<_>>())?;
    let t1 = e.session();
    let t2 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    for &id in extra {
        assert_eq!(
            ok(&mut e, t1, update(id, 1000 + id))?,
            Response::Affected(1)
        );
    }
    assert_eq!(ok(&mut e, t1, update(A, 101))?, Response::Affected(1));
    ok(&mut e, t2, Request::Begin)?;
    assert_eq!(ok(&mut e, t2, update(B, 202))?, Response::Affected(1));
    Ok((e, clock, t1, t2))
}

/// After T1 survived a deadlock with T2 as the victim and committed: T1's
/// changes (B included) are in, T2's are not.
fn check_t1_won(e: &mut Engine, t1: SessionId, t2: SessionId, extra: &[u64]) -> Result<()> {
    assert_eq!(e.trx_id(t2), None, "the victim is rolled back");
    assert_eq!(record_locks_of(e, t2), 0, "the victim holds no locks");
    assert_eq!(e.stats.deadlocks, 1);
    ok(e, t1, Request::Commit)?;
    assert_eq!(committed_k(e, A)?, Some(101));
    assert_eq!(committed_k(e, B)?, Some(102), "T1's update of B, not T2's");
    for &id in extra {
        assert_eq!(committed_k(e, id)?, Some(1000 + id));
    }
    Ok(())
}

#[test]
fn deadlock_lighter_requester_closing_the_cycle_is_the_victim() -> Result<()> {
    let (mut e, _clock, t1, t2) = two_lockers(Config::default(), &EXTRA)?;
    waits(&mut e, t1, update(B, 102))?;
    let (w1, w2) = (
        trx_row(&mut e, t1)?.trx_weight,
        trx_row(&mut e, t2)?.trx_weight,
    );
    assert!(w1 > w2, "T1 ({w1}) is heavier than T2 ({w2})");
    // T2: one undo record, the IX table lock, the X lock on B.
    assert_eq!(w2, 3);
    // T2 closes the cycle and, lighter, is the victim at once.
    assert_deadlock(e.execute(t2, update(A, 201)));
    assert!(!e.is_waiting(t2));
    // Its earlier update of B is undone, and T1's wait for B is over.
    assert_eq!(resumes(&mut e, t1)?, Response::Affected(1));
    assert!(e.innodb_lock_waits()?.is_empty());
    check_t1_won(&mut e, t1, t2, &EXTRA)
}

#[test]
fn deadlock_heavier_requester_closing_the_cycle_survives() -> Result<()> {
    let (mut e, _clock, t1, t2) = two_lockers(Config::default(), &EXTRA)?;
    waits(&mut e, t2, update(A, 201))?;
    let (w1, w2) = (
        trx_row(&mut e, t1)?.trx_weight,
        trx_row(&mut e, t2)?.trx_weight,
    );
    assert!(w1 > w2, "T1 ({w1}) is heavier than T2 ({w2})");
    // T2: one undo record, IX, the X lock on B, the waiting lock on A.
    assert_eq!(w2, 4);
    // T1 closes the cycle; the waiting T2, lighter, is the victim, and
    // T1's statement completes at once on the lock T2 gave up.
    assert_eq!(ok(&mut e, t1, update(B, 102))?, Response::Affected(1));
    assert_eq!(e.stats.deadlocks, 1);
    assert_eq!(e.trx_id(t2), None, "the victim is rolled back at once");
    // T2 learns of it at its next resume.
    assert!(e.is_waiting(t2));
    assert_deadlock(e.resume(t2));
    assert!(!e.is_waiting(t2));
    check_t1_won(&mut e, t1, t2, &EXTRA)
}

#[test]
fn deadlock_with_equal_weights_the_requester_is_the_victim() -> Result<()> {
    // T2 closes the cycle: T2 is the victim.
    let (mut e, _clock, t1, t2) = two_lockers(Config::default(), &[])?;
    waits(&mut e, t1, update(B, 102))?;
    assert_eq!(trx_row(&mut e, t1)?.trx_weight, 4);
    assert_eq!(trx_row(&mut e, t2)?.trx_weight, 3);
    assert_deadlock(e.execute(t2, update(A, 201)));
    assert_eq!(resumes(&mut e, t1)?, Response::Affected(1));
    check_t1_won(&mut e, t1, t2, &[])?;

    // T1 closes the cycle: T1 is the victim, T2 proceeds.
    let (mut e, _clock, t1, t2) = two_lockers(Config::default(), &[])?;
    waits(&mut e, t2, update(A, 201))?;
    assert_eq!(trx_row(&mut e, t1)?.trx_weight, 3);
    assert_eq!(trx_row(&mut e, t2)?.trx_weight, 4);
    assert_deadlock(e.execute(t1, update(B, 102)));
    assert_eq!(e.trx_id(t1), None);
    assert_eq!(e.stats.deadlocks, 1);
    assert_eq!(resumes(&mut e, t2)?, Response::Affected(1));
    ok(&mut e, t2, Request::Commit)?;
    assert_eq!(committed_k(&mut e, A)?, Some(201));
    assert_eq!(committed_k(&mut e, B)?, Some(202));
    Ok(())
}

#[test]
fn deadlock_detection_off_leaves_both_waiting_until_1205() -> Result<()> {
    let cfg = Config {
        deadlock_detect: false,
        ..Config::default()
    };
    let (mut e, clock, t1, t2) = two_lockers(cfg, &[])?;
    waits(&mut e, t1, update(B, 102))?;
    waits(&mut e, t2, update(A, 201))?;
    assert_eq!(e.stats.deadlocks, 0);
    let (h1, h2) = (trx_hex(&e, t1), trx_hex(&e, t2));
    let mut cycle = vec![(h1.clone(), h2.clone()), (h2, h1)];
    cycle.sort();
    assert_eq!(wait_pairs(&mut e)?, cycle, "each waits for the other");

    clock.advance_us(TIMEOUT_US - 1);
    still_waits(&mut e, t1)?;
    still_waits(&mut e, t2)?;
    clock.advance_us(1);
    assert_lock_wait_timeout(e.resume(t1));
    assert_lock_wait_timeout(e.resume(t2));
    assert_eq!(e.stats.lock_wait_timeouts, 2);
    assert_eq!(e.stats.deadlocks, 0);
    // Only the statements were rolled back: each still has its first row.
    assert!(e.trx_id(t1).is_some() && e.trx_id(t2).is_some());
    assert_eq!(k_seen(&mut e, t1, get(A))?, Some(101));
    assert_eq!(k_seen(&mut e, t2, get(B))?, Some(202));
    ok(&mut e, t1, Request::Commit)?;
    ok(&mut e, t2, Request::Commit)?;
    assert_eq!(committed_k(&mut e, A)?, Some(101));
    assert_eq!(committed_k(&mut e, B)?, Some(202));
    Ok(())
}

/// InnoDB weighs a transaction by `trx->undo_no` plus its lock structs,
/// and a rollback to a savepoint sets `undo_no` back to the savepoint's
/// (`trx_roll_pop_top_rec_of_trx`): undo records rolled back no longer
/// make a transaction heavier (the locks the rolled-back statements took
/// stay, and still count).
#[test]
fn rolled_back_undo_records_no_longer_weigh() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=20).collect::<Vec<_>>())?;
    let t1 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, Request::Savepoint("sp".into()))?;
    for id in EXTRA {
        ok(&mut e, t1, update(id, 1000 + id))?;
    }
    // Three undo records, the IX table lock's struct, and one struct for
    // the three X record locks (one index, one mode).
    assert_eq!(trx_row(&mut e, t1)?.trx_weight, 5);
    ok(&mut e, t1, Request::RollbackToSavepoint("sp".into()))?;
    assert_eq!(k_seen(&mut e, t1, get(EXTRA[0]))?, Some(EXTRA[0]));
    assert_eq!(record_locks_of(&e, t1), 3, "the locks stay");
    assert_eq!(trx_row(&mut e, t1)?.trx_weight, 2, "no undo records left");
    Ok(())
}

/// The victim rule on the same grounds: T1 changed three rows and rolled
/// them back to a savepoint before locking A; T2 changed three rows. T1's
/// one live undo record makes it the lighter (1 and three structs, its
/// IX, its X locks and its wait, against T2's 3 and three structs when
/// the cycle closes; 7 had the rolled-back records counted), so T1 is the
/// victim even though T2, the requester, closes the cycle.
#[test]
fn deadlock_victim_weight_ignores_rolled_back_undo_records() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=20).collect::<Vec<_>>())?;
    let t1 = e.session();
    let t2 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, Request::Savepoint("sp".into()))?;
    for id in EXTRA {
        ok(&mut e, t1, update(id, 1000 + id))?;
    }
    ok(&mut e, t1, Request::RollbackToSavepoint("sp".into()))?;
    ok(&mut e, t1, update(A, 101))?;
    ok(&mut e, t2, Request::Begin)?;
    for id in [B, 14, 15] {
        ok(&mut e, t2, update(id, 200 + id))?;
    }
    waits(&mut e, t1, update(B, 102))?;
    assert_eq!(trx_row(&mut e, t1)?.trx_weight, 4);
    assert_eq!(trx_row(&mut e, t2)?.trx_weight, 5);
    // T2 closes the cycle; the lighter waiting T1 is the victim.
    assert_eq!(ok(&mut e, t2, update(A, 201))?, Response::Affected(1));
    assert_deadlock(e.resume(t1));
    assert_eq!(e.trx_id(t1), None);
    ok(&mut e, t2, Request::Commit)?;
    assert_eq!(committed_k(&mut e, A)?, Some(201));
    assert_eq!(committed_k(&mut e, B)?, Some(202));
    Ok(())
}

/// An UPDATE in place or a DELETE that must wait to change the row's
/// entry in a secondary index keeps what it did while it waits: InnoDB
/// changes the clustered record first (its undo record written) and waits
/// inside `row_upd_sec_step`, so the change counts in the transaction's
/// deadlock weight (default seed 2861: MariaDB chose the other victim by
/// it) and the statement goes on from there when granted.
#[test]
fn a_change_waiting_in_a_secondary_index_keeps_its_clustered_change() -> Result<()> {
    for delete in [false, true] {
        let (mut e, _clock) = open(Config::default(), &[4, 5, 6])?;
        let (t1, t2) = (e.session(), e.session());
        // T1 shares the entry (5, 5) of index k alone: a LOCK IN SHARE
        // MODE read of the covering index (build_template needs no
        // clustered record).
        ok(&mut e, t1, Request::Begin)?;
        let entry = RangeBound::Included(vec![Value::UInt(5)]);
        let read = Request::IndexOnly {
            read: Box::new(Request::Locking {
                read: Box::new(Request::Scan {
                    table: T.into(),
                    index: Some("k".into()),
                    low: entry.clone(),
                    high: entry,
                    reverse: false,
                    limit: None,
                }),
                exclusive: false,
                index_condition: false,
            }),
        };
        ok(&mut e, t1, read)?;
        ok(&mut e, t2, Request::Begin)?;
        let change = if delete {
            Request::Delete {
                table: T.into(),
                key: vec![Value::UInt(5)],
            }
        } else {
            update(5, 105)
        };
        waits(&mut e, t2, change)?;
        // Its undo record, its IX, its X on the clustered record, and its
        // waiting X on the entry.
        assert_eq!(trx_row(&mut e, t2)?.trx_weight, 4, "delete {delete}");
        still_waits(&mut e, t2)?;
        ok(&mut e, t1, Request::Commit)?;
        assert_eq!(resumes(&mut e, t2)?, Response::Affected(1));
        // Granted, it went on from the entry: still one undo record (the
        // waiting struct now holds the granted lock).
        assert_eq!(trx_row(&mut e, t2)?.trx_weight, 4, "one change, not two");
        ok(&mut e, t2, Request::Commit)?;
        let want = if delete { None } else { Some(105) };
        assert_eq!(committed_k(&mut e, 5)?, want);
        assert!(e.check_table(T)?.problems.is_empty());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 3. Gaps under REPEATABLE READ.
// ---------------------------------------------------------------------------

/// The rows of the gap scenarios: gaps (12, 18) and (20, 40) inside and
/// just above the range 10..=20, (40, 50) and above 50 outside it.
const GAP_ROWS: [u64; 7] = [5, 10, 12, 18, 20, 40, 50];

#[test]
fn next_key_locks_of_a_range_block_inserts_into_and_just_above_it() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &GAP_ROWS)?;
    let t1 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    let Response::Rows(rows) = ok(&mut e, t1, scan_for_update(10, 20))? else {
        panic!("a scan returns rows")
    };
    assert_eq!(
        rows,
        vec![row(10, 10), row(12, 12), row(18, 18), row(20, 20)]
    );
    let h1 = trx_hex(&e, t1);

    // Inside the range: the gap before 18 is locked.
    let t2 = e.session();
    waits(&mut e, t2, insert(15, 15))?;
    let h2 = trx_hex(&e, t2);
    let locks = e.innodb_locks()?;
    assert_eq!(locks.len(), 2, "{locks:?}");
    let mine = locks
        .iter()
        .find(|l| l.lock_trx_id == h2)
        .expect("T2's lock");
    assert_eq!(mine.lock_mode, "X,GAP", "an insert intention is a gap lock");
    assert_eq!(mine.lock_data.as_deref(), Some("18"));
    let theirs = locks
        .iter()
        .find(|l| l.lock_trx_id == h1)
        .expect("T1's lock");
    assert_eq!(theirs.lock_mode, "X", "a next-key lock shows as X");
    assert_eq!(theirs.lock_data.as_deref(), Some("18"));

    // Above the range end, below the next record: the scan's next-key lock
    // on 40 covers (20, 40), and 40 itself.
    let t3 = e.session();
    waits(&mut e, t3, insert(30, 30))?;
    let t4 = e.session();
    waits(&mut e, t4, update(40, 4000))?;
    let h3 = trx_hex(&e, t3);
    let h4 = trx_hex(&e, t4);
    let mut expected = vec![(h2, h1.clone()), (h3, h1.clone()), (h4, h1)];
    expected.sort();
    assert_eq!(wait_pairs(&mut e)?, expected);

    // Far outside: no wait, in the gap above 40 or above the last row.
    let t5 = e.session();
    assert_eq!(ok(&mut e, t5, insert(45, 45))?, Response::Affected(1));
    assert_eq!(ok(&mut e, t5, insert(1000, 1000))?, Response::Affected(1));
    assert_eq!(ok(&mut e, t5, update(50, 5000))?, Response::Affected(1));
    assert_eq!(e.stats.waits, 3);

    // T1 commits: every waiter goes.
    ok(&mut e, t1, Request::Commit)?;
    assert_eq!(resumes(&mut e, t2)?, Response::Affected(1));
    assert_eq!(resumes(&mut e, t3)?, Response::Affected(1));
    assert_eq!(resumes(&mut e, t4)?, Response::Affected(1));
    assert_eq!(
        committed_ids(&mut e)?,
        vec![5, 10, 12, 15, 18, 20, 30, 40, 45, 50, 1000]
    );
    assert_eq!(committed_k(&mut e, 40)?, Some(4000));
    Ok(())
}

/// InnoDB's `row_search_for_mysql`: a `>=` search on the clustered index
/// that finds a record with exactly the search key locks that record only
/// (LOCK_REC_NOT_GAP), since no insert into the gap below it can fall in
/// the range. An insert just below the range start must not wait.
#[test]
fn range_starting_on_an_existing_key_leaves_the_gap_below_it_open() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &GAP_ROWS)?;
    let t1 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, scan_for_update(10, 20))?;
    let t2 = e.session();
    assert_eq!(ok(&mut e, t2, insert(7, 7))?, Response::Affected(1));
    // The record 10 itself stays locked.
    waits(&mut e, t2, update(10, 1000))?;
    Ok(())
}

#[test]
fn gap_locks_on_one_gap_coexist_and_both_block_an_insert() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &GAP_ROWS)?;
    let t1 = e.session();
    let t2 = e.session();
    let t3 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t2, Request::Begin)?;
    // Missing keys in the gap (12, 18): each read locks that gap.
    assert_eq!(ok(&mut e, t1, locking_get(15, true))?, Response::Row(None));
    assert_eq!(ok(&mut e, t2, locking_get(16, true))?, Response::Row(None));
    assert_eq!(e.stats.waits, 0, "gap locks never wait for each other");
    assert_eq!(record_locks_of(&e, t1), 1);
    assert_eq!(record_locks_of(&e, t2), 1);

    ok(&mut e, t3, Request::Begin)?;
    waits(&mut e, t3, insert(14, 14))?;
    let (h1, h2, h3) = (trx_hex(&e, t1), trx_hex(&e, t2), trx_hex(&e, t3));
    let mut expected = vec![(h3.clone(), h1), (h3, h2)];
    expected.sort();
    assert_eq!(wait_pairs(&mut e)?, expected, "the insert waits for both");
    let locks = e.innodb_locks()?;
    assert_eq!(locks.len(), 3, "{locks:?}");
    for l in &locks {
        assert_eq!(l.lock_mode, "X,GAP", "{l:?}");
        assert_eq!(l.lock_data.as_deref(), Some("18"), "{l:?}");
    }

    // One gap lock gone is not enough.
    ok(&mut e, t1, Request::Commit)?;
    still_waits(&mut e, t3)?;
    assert_eq!(e.innodb_lock_waits()?.len(), 1);
    ok(&mut e, t2, Request::Commit)?;
    assert_eq!(resumes(&mut e, t3)?, Response::Affected(1));
    ok(&mut e, t3, Request::Commit)?;
    assert_eq!(committed_k(&mut e, 14)?, Some(14));
    Ok(())
}

#[test]
fn read_committed_locking_read_of_a_missing_key_locks_no_gap() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &GAP_ROWS)?;
    let t1 = e.session();
    ok(&mut e, t1, Request::SetIsolation(Isolation::ReadCommitted))?;
    ok(&mut e, t1, Request::Begin)?;
    assert_eq!(ok(&mut e, t1, locking_get(15, true))?, Response::Row(None));
    assert_eq!(record_locks_of(&e, t1), 0, "no gap lock");
    let t2 = e.session();
    ok(&mut e, t2, Request::Begin)?;
    assert_eq!(ok(&mut e, t2, insert(14, 14))?, Response::Affected(1));
    assert_eq!(ok(&mut e, t2, insert(15, 15))?, Response::Affected(1));
    assert_eq!(e.stats.waits, 0);
    ok(&mut e, t2, Request::Commit)?;
    // T1's next locking read sees the new committed row (a current read).
    assert_eq!(k_seen(&mut e, t1, locking_get(15, true))?, Some(15));
    Ok(())
}

// ---------------------------------------------------------------------------
// 4. Locking reads against consistent reads.
// ---------------------------------------------------------------------------

#[test]
fn locking_reads_see_the_newest_committed_version() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let t1 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    assert_eq!(
        k_seen(&mut e, t1, get(5))?,
        Some(5),
        "the snapshot is taken"
    );
    let other = e.session();
    ok(&mut e, other, update(5, 55))?;
    ok(&mut e, other, update(6, 66))?;
    // The consistent read keeps its snapshot, the locking reads do not.
    assert_eq!(k_seen(&mut e, t1, get(5))?, Some(5));
    assert_eq!(k_seen(&mut e, t1, locking_get(5, false))?, Some(55));
    assert_eq!(k_seen(&mut e, t1, locking_get(6, true))?, Some(66));
    assert_eq!(k_seen(&mut e, t1, get(5))?, Some(5), "still the snapshot");

    // A row another transaction is changing: the locking read waits, then
    // reads what that transaction committed.
    let t2 = e.session();
    ok(&mut e, t2, Request::Begin)?;
    ok(&mut e, t2, update(7, 77))?;
    // READ UNCOMMITTED reads the uncommitted version meanwhile.
    let dirty = e.session();
    ok(
        &mut e,
        dirty,
        Request::SetIsolation(Isolation::ReadUncommitted),
    )?;
    assert_eq!(k_seen(&mut e, dirty, get(7))?, Some(77));
    waits(&mut e, t1, locking_get(7, true))?;
    ok(&mut e, t2, Request::Commit)?;
    match resumes(&mut e, t1)? {
        Response::Row(Some(cols)) => assert_eq!(cols, row(7, 77)),
        other => panic!("the locking read returns row 7, got {other:?}"),
    }
    assert_eq!(
        k_seen(&mut e, t1, get(7))?,
        Some(7),
        "the snapshot is older"
    );
    Ok(())
}

#[test]
fn serializable_plain_read_in_a_transaction_blocks_a_writer() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let t1 = e.session();
    ok(&mut e, t1, Request::SetIsolation(Isolation::Serializable))?;
    ok(&mut e, t1, Request::Begin)?;
    assert_eq!(k_seen(&mut e, t1, get(5))?, Some(5));
    let writer = e.session();
    waits(&mut e, writer, update(5, 55))?;
    let locks = e.innodb_locks()?;
    let reader = trx_hex(&e, t1);
    let held = locks
        .iter()
        .find(|l| l.lock_trx_id == reader)
        .expect("T1's lock blocks the writer");
    assert_eq!(held.lock_mode, "S", "a plain SERIALIZABLE read takes S");
    assert_eq!(held.lock_data.as_deref(), Some("5"));
    // A second read in the same transaction still sees the old row.
    assert_eq!(k_seen(&mut e, t1, get(5))?, Some(5));
    ok(&mut e, t1, Request::Commit)?;
    assert_eq!(resumes(&mut e, writer)?, Response::Affected(1));
    assert_eq!(committed_k(&mut e, 5)?, Some(55));
    Ok(())
}

#[test]
fn autocommit_selects_and_repeatable_read_plain_reads_never_wait() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let writer = e.session();
    ok(&mut e, writer, Request::Begin)?;
    ok(&mut e, writer, update(5, 55))?;
    ok(&mut e, writer, insert(11, 11))?;

    // An autocommit SELECT under SERIALIZABLE is a consistent read.
    let ser = e.session();
    ok(&mut e, ser, Request::SetIsolation(Isolation::Serializable))?;
    assert_eq!(k_seen(&mut e, ser, get(5))?, Some(5));
    assert_eq!(
        ok(
            &mut e,
            ser,
            scan(RangeBound::Unbounded, RangeBound::Unbounded)
        )?,
        Response::Rows((1..=10).map(|i| row(i, i)).collect())
    );
    assert_eq!(
        e.trx_id(ser),
        None,
        "the autocommit SELECT left no transaction"
    );

    // Plain reads in a REPEATABLE READ transaction.
    let rr = e.session();
    ok(&mut e, rr, Request::Begin)?;
    assert_eq!(k_seen(&mut e, rr, get(5))?, Some(5));
    assert_eq!(k_seen(&mut e, rr, get(11))?, None);
    assert_eq!(
        ok(
            &mut e,
            rr,
            scan(RangeBound::Unbounded, RangeBound::Unbounded)
        )?,
        Response::Rows((1..=10).map(|i| row(i, i)).collect())
    );
    assert_eq!(record_locks_of(&e, rr), 0, "consistent reads lock nothing");
    assert_eq!(e.stats.waits, 0);
    assert!(e.innodb_lock_waits()?.is_empty());
    ok(&mut e, writer, Request::Commit)?;
    assert_eq!(k_seen(&mut e, rr, get(5))?, Some(5), "one snapshot");
    Ok(())
}

// ---------------------------------------------------------------------------
// 5. The order of a record's queue.
// ---------------------------------------------------------------------------

#[test]
fn shared_request_queues_behind_a_waiting_exclusive_one() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=10).collect::<Vec<_>>())?;
    let [s1, s2, x, s4] = [e.session(), e.session(), e.session(), e.session()];
    for s in [s1, s2, x, s4] {
        ok(&mut e, s, Request::Begin)?;
    }
    assert_eq!(k_seen(&mut e, s1, locking_get(5, false))?, Some(5));
    assert_eq!(k_seen(&mut e, s2, locking_get(5, false))?, Some(5));
    waits(&mut e, x, update(5, 55))?;
    // Compatible with both holders, yet behind the waiting X: FIFO.
    waits(&mut e, s4, locking_get(5, false))?;
    let [h1, h2, hx, h4] = [s1, s2, x, s4].map(|s| trx_hex(&e, s));
    let mut expected = vec![
        (hx.clone(), h1),
        (hx.clone(), h2.clone()),
        (h4.clone(), hx.clone()),
    ];
    expected.sort();
    assert_eq!(wait_pairs(&mut e)?, expected);
    let modes: Vec<(String, String)> = e
        .innodb_locks()?
        .into_iter()
        .map(|l| (l.lock_trx_id, l.lock_mode))
        .collect();
    assert_eq!(modes.len(), 4, "{modes:?}");
    assert!(modes.contains(&(hx.clone(), "X".into())), "{modes:?}");
    assert!(modes.contains(&(h4.clone(), "S".into())), "{modes:?}");
    assert_eq!(trx_row(&mut e, x)?.trx_state, "LOCK WAIT");
    assert_eq!(trx_row(&mut e, s4)?.trx_state, "LOCK WAIT");

    // The first holder leaves: X still waits for the second, S for X.
    ok(&mut e, s1, Request::Commit)?;
    still_waits(&mut e, x)?;
    still_waits(&mut e, s4)?;
    let mut expected = vec![(hx.clone(), h2), (h4.clone(), hx.clone())];
    expected.sort();
    assert_eq!(wait_pairs(&mut e)?, expected);

    // The second leaves: X is granted, S now waits for the granted X.
    ok(&mut e, s2, Request::Commit)?;
    still_waits(&mut e, s4)?;
    assert_eq!(resumes(&mut e, x)?, Response::Affected(1));
    assert_eq!(wait_pairs(&mut e)?, vec![(h4, hx)]);

    // X commits: S reads what it wrote.
    ok(&mut e, x, Request::Commit)?;
    match resumes(&mut e, s4)? {
        Response::Row(Some(cols)) => assert_eq!(cols, row(5, 55)),
        other => panic!("the shared read returns row 5, got {other:?}"),
    }
    assert_eq!(e.stats.waits, 2);
    Ok(())
}

// ---------------------------------------------------------------------------
// Implicit locks: an insert's DB_TRX_ID is its lock.
// ---------------------------------------------------------------------------

/// An inserted record carries no lock of its own until another
/// transaction asks for it; then its inserter is given the X record lock
/// its DB_TRX_ID stood for, and the asker waits for it
/// (`lock_rec_convert_impl_to_expl`).
#[test]
fn an_insert_is_locked_implicitly_until_another_transaction_asks() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=20).collect::<Vec<_>>())?;
    let t1 = e.session();
    let t2 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, insert(15_000, 7))?;
    assert_eq!(
        record_locks_of(&e, t1),
        0,
        "the insert holds no explicit lock"
    );
    ok(&mut e, t2, Request::Begin)?;
    waits(&mut e, t2, locking_get(15_000, false))?;
    assert_eq!(
        record_locks_of(&e, t1),
        1,
        "the implicit lock was made explicit"
    );
    let (h1, h2) = (trx_hex(&e, t1), trx_hex(&e, t2));
    assert_eq!(wait_pairs(&mut e)?, vec![(h2, h1)]);
    ok(&mut e, t1, Request::Commit)?;
    match resumes(&mut e, t2)? {
        Response::Row(Some(cols)) => assert_eq!(cols, row(15_000, 7)),
        other => panic!("the shared read returns the committed insert, got {other:?}"),
    }
    Ok(())
}

/// SELECT * FROM t WHERE k BETWEEN `low` AND `high` FOR UPDATE, through
/// the secondary index on `k`.
fn k_range_for_update(low: u64, high: u64) -> Request {
    Request::Locking {
        read: Box::new(Request::Scan {
            table: T.into(),
            index: Some("k".into()),
            low: RangeBound::Included(vec![Value::UInt(low)]),
            high: RangeBound::Included(vec![Value::UInt(high)]),
            reverse: false,
            limit: None,
        }),
        exclusive: true,
        index_condition: false,
    }
}

/// A secondary entry is implicitly locked by the active transaction that
/// made it (`row_vers_impl_x_locked`): a locking range read through the
/// index that stops at an uncommitted insert's entry (its next-key lock on
/// the first entry past the range) waits for the inserter, who is given
/// the X lock its change stood for. An entry the row's active changer did
/// not touch (it updated another column) carries no lock of its: the same
/// read locks that entry without converting anything, and waits only at
/// the row's clustered record, which InnoDB locks too for the entry that
/// ends a range (the server, not InnoDB 1.0, sees it is past the end).
#[test]
fn a_secondary_entry_is_locked_implicitly_only_by_the_transaction_that_made_it() -> Result<()> {
    // An uncommitted insert of k = 13, the first entry past 10..=12.
    let without_13: Vec<u64> = (1..=20).filter(|&id| id != 13).collect();
    let (mut e, _clock) = open(Config::default(), &without_13)?;
    let (t1, t2) = (e.session(), e.session());
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, insert(100, 13))?;
    assert_eq!(
        record_locks_of(&e, t1),
        0,
        "the insert holds no explicit lock"
    );
    ok(&mut e, t2, Request::Begin)?;
    waits(&mut e, t2, k_range_for_update(10, 12))?;
    assert_eq!(
        record_locks_of(&e, t1),
        1,
        "the insert's entry (13, 100) was made explicitly locked"
    );
    ok(&mut e, t1, Request::Rollback)?;
    match resumes(&mut e, t2)? {
        Response::Rows(rows) => assert_eq!(rows, vec![row(10, 10), row(11, 11), row(12, 12)]),
        other => panic!("the range read returns rows 10 to 12, got {other:?}"),
    }

    // Row 13 changed by an active transaction in a column the index does
    // not hold: its entry (13, 13) is as it was, and nobody's.
    let ids: Vec<u64> = (1..=20).collect();
    let (mut e, _clock) = open(Config::default(), &ids)?;
    let (t1, t2) = (e.session(), e.session());
    ok(&mut e, t1, Request::Begin)?;
    ok(
        &mut e,
        t1,
        Request::Update {
            table: T.into(),
            key: vec![Value::UInt(13)],
            set: vec![("pad".into(), Value::Bytes(b"changed".to_vec()))],
        },
    )?;
    ok(&mut e, t2, Request::Begin)?;
    assert_eq!(record_locks_of(&e, t1), 1, "its own X lock on row 13");
    waits(&mut e, t2, k_range_for_update(10, 12))?;
    assert_eq!(
        record_locks_of(&e, t1),
        1,
        "still only its X lock on row 13: the entry (13, 13) was not taken as its"
    );
    ok(&mut e, t1, Request::Commit)?;
    match resumes(&mut e, t2)? {
        Response::Rows(rows) => assert_eq!(rows.len(), 3),
        other => panic!("rows 10 to 12, got {other:?}"),
    }
    ok(&mut e, t2, Request::Commit)?;
    Ok(())
}

/// A change that delete-marks a secondary entry checks the locks on it
/// first (`lock_sec_rec_modify_check_and_lock`): a locking read through
/// the index that holds the entry and waits for the row's clustered record
/// makes the row's writer wait in turn, the classic deadlock of a
/// secondary-index reader and a writer, and the reader (the lighter) is
/// the victim.
#[test]
fn moving_a_row_off_an_entry_a_reader_locked_deadlocks_with_the_reader() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=20).collect::<Vec<_>>())?;
    let (t0, t1) = (e.session(), e.session());
    ok(&mut e, t0, Request::Begin)?;
    let pad = Request::Update {
        table: T.into(),
        key: vec![Value::UInt(5)],
        set: vec![("pad".into(), Value::Bytes(b"first".to_vec()))],
    };
    assert_eq!(ok(&mut e, t0, pad)?, Response::Affected(1));
    ok(&mut e, t1, Request::Begin)?;
    // Locks the entry (5, 5), then waits for row 5.
    waits(&mut e, t1, k_range_for_update(5, 5))?;
    // Moving row 5 to k = 50 delete-marks (5, 5), which t1 holds: the
    // cycle is closed, t1 rolled back, and t0's update goes through.
    assert_eq!(ok(&mut e, t0, update(5, 50))?, Response::Affected(1));
    assert_deadlock(e.resume(t1));
    ok(&mut e, t0, Request::Commit)?;
    assert_eq!(committed_k(&mut e, 5)?, Some(50));
    Ok(())
}

/// An insert rolled back to a savepoint leaves nothing behind: no lock of
/// its inserter moves to the record after it, so another session inserts
/// the same key, and keys in the same gap, without waiting (an explicit
/// insert lock would have become a gap lock on the supremum here).
#[test]
fn an_insert_rolled_back_to_a_savepoint_hands_no_lock_to_its_successor() -> Result<()> {
    let (mut e, _clock) = open(Config::default(), &(1..=20).collect::<Vec<_>>())?;
    let t1 = e.session();
    let t2 = e.session();
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, Request::Savepoint("sp".into()))?;
    ok(&mut e, t1, insert(50, 50))?;
    ok(&mut e, t1, Request::RollbackToSavepoint("sp".into()))?;
    assert_eq!(record_locks_of(&e, t1), 0);
    ok(&mut e, t2, Request::Begin)?;
    assert_eq!(ok(&mut e, t2, insert(50, 1))?, Response::Affected(1));
    assert_eq!(ok(&mut e, t2, insert(49, 1))?, Response::Affected(1));
    ok(&mut e, t2, Request::Commit)?;
    ok(&mut e, t1, Request::Commit)?;
    assert_eq!(committed_k(&mut e, 50)?, Some(1));
    Ok(())
}

/// `lock_rec_inherit_to_gap` hands a purged record's locks to the record
/// after it as gap locks, but not the X locks of a READ COMMITTED
/// transaction (which locks no gaps): its DELETE of an already deleted row
/// leaves no gap lock behind once purge removes the row, and another
/// session inserts the key without waiting. Under REPEATABLE READ the same
/// DELETE's lock becomes a gap lock on the next record, and the insert
/// waits.
#[test]
fn a_purged_record_hands_on_no_x_lock_of_a_read_committed_transaction() -> Result<()> {
    for (iso, insert_waits) in [
        (Isolation::ReadCommitted, false),
        (Isolation::RepeatableRead, true),
    ] {
        let (mut e, _clock) = open(Config::default(), &(1..=20).collect::<Vec<_>>())?;
        let (t0, t1, t2) = (e.session(), e.session(), e.session());
        ok(
            &mut e,
            t0,
            Request::Delete {
                table: T.into(),
                key: vec![Value::UInt(15)],
            },
        )?;
        ok(&mut e, t1, Request::SetIsolation(iso))?;
        ok(&mut e, t1, Request::Begin)?;
        let deleted = ok(
            &mut e,
            t1,
            Request::Delete {
                table: T.into(),
                key: vec![Value::UInt(15)],
            },
        )?;
        assert_eq!(
            deleted,
            Response::Affected(0),
            "{iso:?}: the row is gone already"
        );
        e.purge_all()?;
        ok(&mut e, t2, Request::Begin)?;
        if insert_waits {
            waits(&mut e, t2, insert(15, 1))?;
        } else {
            assert_eq!(
                ok(&mut e, t2, insert(15, 1))?,
                Response::Affected(1),
                "{iso:?}"
            );
        }
        ok(&mut e, t1, Request::Commit)?;
    }
    Ok(())
}

/// A transaction locks a row it inserted itself: InnoDB 1.0.6 makes its
/// own implicit lock explicit first (`lock_rec_convert_impl_to_expl`
/// takes whoever holds it), a struct that adds to its deadlock weight; a
/// later version leaves it implicit and takes it for a record-only lock
/// (`LaterRule::OwnImplicitLockSuffices`, innosim diff default seed
/// 1782). Under both, the range read's next-key lock on the row keeps the
/// gap below it from other inserts.
#[test]
fn an_own_implicit_lock_is_made_explicit_by_1_0_6_and_not_by_the_later_rule() -> Result<()> {
    for later in [false, true] {
        let cfg = Config {
            later: only_if(later, LaterRule::OwnImplicitLockSuffices),
            ..Config::default()
        };
        let (mut e, _clock) = open(cfg.clone(), &[10, 30])?;
        let (t1, t2) = (e.session(), e.session());
        ok(&mut e, t1, Request::Begin)?;
        ok(&mut e, t1, insert(20, 20))?;
        // One undo record and the IX table lock; the insert's own lock is
        // implicit.
        assert_eq!(trx_row(&mut e, t1)?.trx_weight, 2, "later {later}");
        ok(&mut e, t1, locking_get(20, true))?;
        // 1.0.6: the converted X record-only lock, which the read's own
        // request finds held; later: nothing.
        let w = trx_row(&mut e, t1)?.trx_weight;
        assert_eq!(w, if later { 2 } else { 3 }, "later {later}");
        ok(&mut e, t1, scan_for_update(15, 25))?;
        // One next-key X struct more (20 and 30 share it) either way.
        let w = trx_row(&mut e, t1)?.trx_weight;
        assert_eq!(w, if later { 3 } else { 4 }, "later {later}");
        ok(&mut e, t2, Request::Begin)?;
        waits(&mut e, t2, insert(15, 15))?;
        // A descending scan's gap lock on the row above its range, the
        // transaction's own insert, is taken under both (compressed seed
        // 2): another insert into that gap waits.
        let (mut e, _clock) = open(cfg, &[10])?;
        let (t1, t2) = (e.session(), e.session());
        ok(&mut e, t1, Request::Begin)?;
        ok(&mut e, t1, insert(30, 30))?;
        let descending = Request::Locking {
            read: Box::new(Request::Scan {
                table: T.into(),
                index: None,
                low: RangeBound::Included(vec![Value::UInt(15)]),
                high: RangeBound::Included(vec![Value::UInt(25)]),
                reverse: true,
                limit: None,
            }),
            exclusive: true,
            index_condition: false,
        };
        ok(&mut e, t1, descending)?;
        ok(&mut e, t2, Request::Begin)?;
        waits(&mut e, t2, insert(20, 20))?;
    }
    Ok(())
}

/// A row its compressed leaf refuses, the page then split: InnoDB 1.0.6
/// writes the insert's undo record before it tries the page
/// (`btr_cur_optimistic_insert`), and tries it once more, with another,
/// before the split's own (`btr_cur_pessimistic_insert`): three undo
/// records for the row, each in the transaction's weight. A later version
/// writes two (`LaterRule::PessimisticInsertTriesNoOptimisticFirst`,
/// MariaDB's 'undo log entries' in innosim diff compressed seed 1648). A
/// row its leaf takes, or one into an uncompressed table, writes one.
#[test]
fn a_row_its_compressed_leaf_refuses_writes_the_undo_records_of_each_try() -> Result<()> {
    for (format, later, per_refusal) in [
        (RowFormat::Compressed { key_block_size: 1 }, false, 3),
        (RowFormat::Compressed { key_block_size: 1 }, true, 2),
        (RowFormat::Compact, false, 1),
    ] {
        let cfg = Config {
            file_per_table: true,
            later: only_if(later, LaterRule::PessimisticInsertTriesNoOptimisticFirst),
            ..Config::default()
        };
        let (mut e, _) = Engine::open(
            Box::new(MemStorage::new()),
            Box::new(ManualClock::new()),
            cfg,
        )?;
        e.create_table(sbtest("z", format))?;
        let s = e.session();
        ok(&mut e, s, Request::Begin)?;
        let (mut before, mut steps) = (1, Vec::new());
        // Rows that do not compress to nothing: letters from a counter.
        let mut x: u64 = 7;
        for id in 1..=40 {
            let c: Vec<u8> = (0..100)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    b'a' + (x >> 59) as u8
                })
                .collect();
            let row = vec![
                Value::UInt(id),
                Value::UInt(id),
                Value::Bytes(c),
                Value::Bytes(b"pad".to_vec()),
            ];
            ok(
                &mut e,
                s,
                Request::Insert {
                    table: "z".into(),
                    row,
                },
            )?;
            // The IX lock's struct and the undo records.
            let w = trx_row(&mut e, s)?.trx_weight;
            steps.push(w - before);
            before = w;
        }
        assert_eq!(steps[0], 1, "{format:?}: the first row");
        assert!(
            steps.iter().all(|&d| d == 1 || d == per_refusal),
            "{format:?} later {later}: {steps:?}"
        );
        let refusals = steps
            .iter()
            .filter(|&&d| d == per_refusal && d != 1)
            .count();
        if per_refusal == 1 {
            continue;
        }
        // Forty rows of over a hundred bytes do not fit one 1 KiB page.
        assert!(refusals > 0, "{format:?} later {later}: {steps:?}");
    }
    Ok(())
}

/// A SELECT's locking read of a secondary index range, ascending: InnoDB
/// 1.0.6 hands the row past the range's end to the server before the
/// server sees it is past, so it locks that entry and its row's clustered
/// record; under `LaterRule::IndexConditionPushdown` (MariaDB's pushed
/// index condition, `handler_index_cond_check`) the entry is checked
/// first and its clustered record is not locked (innosim diff compressed
/// seed 1287). The same read by an UPDATE (no pushed condition) locks it
/// under both. Under READ COMMITTED with the past-end rule too, the
/// entry's lock stays: the server never sees that row to unlock it
/// (compressed seed 430).
#[test]
fn the_past_end_row_is_given_back_by_a_forward_read_only() -> Result<()> {
    // READ COMMITTED under the later rule past-end-row-unlocked-under-
    // read-committed: a forward read of ids 10..=20 gives back its lock on
    // row 30, past the end (handler::read_range_next's unlock_row); a
    // descending read of 20..=30 keeps its lock on row 10, below the end
    // (QUICK_SELECT_DESC finds its end itself; compressed seed 1211). Under
    // 1.0.6's rules both keep theirs.
    let range = |low: u64, high: u64, reverse: bool| Request::Locking {
        read: Box::new(Request::Scan {
            table: T.into(),
            index: None,
            low: RangeBound::Included(vec![Value::UInt(low)]),
            high: RangeBound::Included(vec![Value::UInt(high)]),
            reverse,
            limit: None,
        }),
        exclusive: true,
        index_condition: true,
    };
    for later in [false, true] {
        for (reverse, past_end) in [(false, 30), (true, 10)] {
            let cfg = Config {
                later: only_if(later, LaterRule::PastEndRowUnlockedUnderReadCommitted),
                ..Config::default()
            };
            let (mut e, _clock) = open(cfg, &[10, 20, 30])?;
            let (t1, t2) = (e.session(), e.session());
            ok(&mut e, t1, Request::SetIsolation(Isolation::ReadCommitted))?;
            ok(&mut e, t1, Request::Begin)?;
            let (low, high) = if reverse { (20, 30) } else { (10, 20) };
            ok(&mut e, t1, range(low, high, reverse))?;
            ok(&mut e, t2, Request::Begin)?;
            if later && !reverse {
                ok(&mut e, t2, locking_get(past_end, true))?;
            } else {
                waits(&mut e, t2, locking_get(past_end, true))?;
            }
        }
    }
    Ok(())
}

#[test]
fn a_pushed_index_condition_stops_before_the_clustered_record_past_the_end() -> Result<()> {
    let read = |select| match k_range_for_update(10, 20) {
        Request::Locking {
            read, exclusive, ..
        } => Request::Locking {
            read,
            exclusive,
            index_condition: select,
        },
        _ => unreachable!("a locking read"),
    };
    for (later, select, waits_past_end) in [
        (false, true, true),
        (true, true, false),
        (true, false, true),
    ] {
        let cfg = Config {
            later: only_if(later, LaterRule::IndexConditionPushdown),
            ..Config::default()
        };
        // Rows 10, 20 and 30 (k as id): 30 is past the range's end.
        let (mut e, _clock) = open(cfg, &[10, 20, 30])?;
        let (t1, t2) = (e.session(), e.session());
        ok(&mut e, t1, Request::Begin)?;
        ok(&mut e, t1, locking_get(30, true))?;
        ok(&mut e, t2, Request::Begin)?;
        if waits_past_end {
            waits(&mut e, t2, read(select))?;
        } else {
            match ok(&mut e, t2, read(select))? {
                Response::Rows(rows) => assert_eq!(rows, vec![row(10, 10), row(20, 20)]),
                other => panic!("later {later}: {other:?}"),
            }
        }
    }
    // READ COMMITTED, both rules: the past-end entry (k = 30) stays locked
    // (record only), its clustered record is free.
    let cfg = Config {
        later: LaterRules::NONE
            .with(LaterRule::IndexConditionPushdown)
            .with(LaterRule::PastEndRowUnlockedUnderReadCommitted),
        ..Config::default()
    };
    let (mut e, _clock) = open(cfg, &[10, 20, 30])?;
    let (t1, t2) = (e.session(), e.session());
    ok(&mut e, t1, Request::SetIsolation(Isolation::ReadCommitted))?;
    ok(&mut e, t1, Request::Begin)?;
    ok(&mut e, t1, read(true))?;
    let trx = e.trx_id(t1).expect("t1's transaction");
    let keys: Vec<String> = (e.locks().locks())
        .filter(|l| l.trx == trx)
        .map(|l| format!("{}", l.target))
        .collect();
    assert_eq!(
        keys.len(),
        6,
        "IX, three k entries, two clustered records: {keys:?}"
    );
    ok(&mut e, t2, Request::Begin)?;
    ok(&mut e, t2, locking_get(30, true))?;
    Ok(())
}

/// SET SESSION TRANSACTION ISOLATION LEVEL inside a transaction: 1.0.6
/// runs the transaction's next statement at the new level (InnoDB reads
/// the session's `tx_isolation` at each statement), so a plain read under
/// SERIALIZABLE locks and reads the newest row; under
/// `LaterRule::IsolationSetForNextTransaction` the transaction keeps its
/// REPEATABLE READ snapshot, and the next transaction takes the new level
/// (innosim diff compressed seed 1805).
#[test]
fn an_isolation_level_set_inside_a_transaction_waits_for_the_next_under_the_later_rule(
) -> Result<()> {
    for later in [false, true] {
        let cfg = Config {
            later: only_if(later, LaterRule::IsolationSetForNextTransaction),
            ..Config::default()
        };
        let (mut e, _clock) = open(cfg, &[10])?;
        let (t1, t2) = (e.session(), e.session());
        ok(&mut e, t1, Request::Begin)?;
        assert_eq!(k_seen(&mut e, t1, get(20))?, None);
        ok(&mut e, t2, insert(20, 20))?;
        ok(&mut e, t1, Request::SetIsolation(Isolation::Serializable))?;
        let seen = k_seen(&mut e, t1, get(20))?;
        assert_eq!(seen, if later { None } else { Some(20) }, "later {later}");
        ok(&mut e, t1, Request::Commit)?;
        // The next transaction is SERIALIZABLE either way: its plain read
        // locks the row, and another transaction's change of it waits.
        ok(&mut e, t1, Request::Begin)?;
        assert_eq!(k_seen(&mut e, t1, get(20))?, Some(20));
        ok(&mut e, t2, Request::Begin)?;
        waits(&mut e, t2, update(20, 21))?;
    }
    Ok(())
}
