//! Group commit and the locks of a commit waiting for its sync: without
//! the binary log (`Config::locks_until_durable` off) InnoDB 1.0's
//! `trx_commit_off_kernel` releases the locks before `log_write_up_to`
//! syncs, so another transaction's change of the row goes on at once; with
//! it on (a server whose binary log makes the commit two-phase:
//! `trx_prepare_off_kernel` syncs under the locks) the change waits until
//! the group's sync acknowledges the commit, then goes on.

mod common;

use common::{config, counters_def, insert, set_k, TestClock};
use engine::io::MemStorage;
use engine::{Config, Engine, FlushAtCommit, Request, Response, SessionId, Step};

fn engine(locks_until_durable: bool) -> engine::Result<Engine> {
    let config = Config {
        flush_at_commit: FlushAtCommit::Sync,
        group_commit: true,
        locks_until_durable,
        ..config()
    };
    let (mut e, _) = Engine::open(
        Box::new(MemStorage::new()),
        Box::new(TestClock::default()),
        config,
    )?;
    e.create_table(counters_def())?;
    let s = e.session();
    if let Step::Waiting = e.execute(s, insert(1))? {
        // An autocommit insert's commit waits for its group's sync too.
        assert!(matches!(e.resume(s)?, Step::Done(Response::Affected(1))));
    }
    e.close_session(s)?;
    Ok(e)
}

/// A transaction of `a` changes row 1 and commits (deferred, waiting for
/// its group's sync); a transaction of `b` then changes row 1. Returns what `b`'s change
/// did before `a` was resumed, and the two sessions.
fn commit_then_change(e: &mut Engine) -> engine::Result<(Step, SessionId, SessionId)> {
    let (a, b) = (e.session(), e.session());
    e.execute(a, Request::Begin)?;
    e.execute(a, set_k(1, 7))?;
    assert!(matches!(e.execute(a, Request::Commit)?, Step::Waiting));
    let groups = e.stats.group_commit_syncs;
    e.execute(b, Request::Begin)?;
    let step = e.execute(b, set_k(1, 8))?;
    assert_eq!(e.stats.group_commit_syncs, groups, "nobody synced yet");
    Ok((step, a, b))
}

#[test]
fn a_commit_waiting_for_its_sync_has_released_its_locks_without_the_binary_log(
) -> engine::Result<()> {
    let mut e = engine(false)?;
    let (step, a, _) = commit_then_change(&mut e)?;
    assert!(
        matches!(step, Step::Done(Response::Affected(1))),
        "{step:?}"
    );
    assert!(matches!(e.resume(a)?, Step::Done(Response::Ok)));
    Ok(())
}

#[test]
fn a_commit_waiting_for_its_sync_keeps_its_locks_with_the_binary_log() -> engine::Result<()> {
    let mut e = engine(true)?;
    let (step, a, b) = commit_then_change(&mut e)?;
    assert!(matches!(step, Step::Waiting), "{step:?}");
    assert!(
        matches!(e.resume(b)?, Step::Waiting),
        "still before the sync"
    );
    let groups = e.stats.group_commit_syncs;
    assert!(matches!(e.resume(a)?, Step::Done(Response::Ok)));
    assert_eq!(e.stats.group_commit_syncs, groups + 1);
    assert!(matches!(e.resume(b)?, Step::Done(Response::Affected(1))));
    Ok(())
}

#[test]
fn a_session_closed_while_its_commit_waits_for_the_sync_lets_its_locks_go() -> engine::Result<()> {
    let mut e = engine(true)?;
    let (step, a, b) = commit_then_change(&mut e)?;
    assert!(matches!(step, Step::Waiting), "{step:?}");
    e.close_session(a)?;
    assert!(matches!(e.resume(b)?, Step::Done(Response::Affected(1))));
    Ok(())
}

/// MySQL 5.1's `prepare_commit_mutex` (`Config::commit_mutex`): a commit
/// waits for the mutex uncommitted, its locks held and its changes
/// invisible; the resume that takes the mutex commits it alone.
#[test]
fn a_commit_queued_for_the_binary_log_mutex_commits_when_resumed() -> engine::Result<()> {
    let config = Config {
        flush_at_commit: FlushAtCommit::Sync,
        commit_mutex: true,
        ..config()
    };
    let (mut e, _) = Engine::open(
        Box::new(MemStorage::new()),
        Box::new(TestClock::default()),
        config,
    )?;
    e.create_table(counters_def())?;
    let (a, b, c, d) = (e.session(), e.session(), e.session(), e.session());
    // An autocommit insert queues too, and answers when resumed.
    assert!(matches!(e.execute(a, insert(1))?, Step::Waiting));
    assert!(e.is_commit_queued(a) && e.is_waiting(a));
    assert!(matches!(e.resume(a)?, Step::Done(Response::Affected(1))));
    assert!(!e.is_commit_queued(a));
    e.execute(d, insert(2))?;
    e.resume(d)?;
    let before = e.last_commit_lsn();
    e.execute(a, Request::Begin)?;
    e.execute(a, set_k(1, 7))?;
    assert!(matches!(e.execute(a, Request::Commit)?, Step::Waiting));
    e.execute(d, Request::Begin)?;
    e.execute(d, set_k(2, 9))?;
    assert!(matches!(e.execute(d, Request::Commit)?, Step::Waiting));
    assert_eq!(
        e.last_commit_lsn(),
        before,
        "no commit written while queued"
    );
    // Uncommitted: another transaction's change of row 1 waits, and a
    // consistent read sees the old value.
    e.execute(b, Request::Begin)?;
    assert!(matches!(e.execute(b, set_k(1, 8))?, Step::Waiting));
    match e.execute(c, common::get(1))? {
        Step::Done(r) => assert_eq!(common::k_of(&r), Some(0)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(e.resume(b)?, Step::Waiting), "a still holds row 1");
    // Each resume commits one transaction: its own commit record.
    assert!(matches!(e.resume(a)?, Step::Done(Response::Ok)));
    let after_a = e.last_commit_lsn();
    assert!(after_a > before);
    assert!(matches!(e.resume(d)?, Step::Done(Response::Ok)));
    assert!(e.last_commit_lsn() > after_a);
    assert!(matches!(e.resume(b)?, Step::Done(Response::Affected(1))));
    match e.execute(c, common::get(2))? {
        Step::Done(r) => assert_eq!(common::k_of(&r), Some(9)),
        other => panic!("{other:?}"),
    }
    // A read-only commit has nothing to queue.
    e.execute(c, Request::Begin)?;
    e.execute(c, common::get(1))?;
    assert!(matches!(
        e.execute(c, Request::Commit)?,
        Step::Done(Response::Ok)
    ));
    Ok(())
}
