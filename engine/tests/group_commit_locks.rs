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
