//! UPDATE and DELETE whose WHERE the read does not decide
//! ([`PlannedStmt::ChangeWhere`]): a range of `sb` read through its
//! clustered index with every row locked X, the rows whose `k` passes the
//! condition changed one by one, the others let go again under READ
//! COMMITTED and READ UNCOMMITTED, as MySQL's `mysql_update` and
//! `mysql_delete` drive InnoDB: `ha_innobase::unlock_row` for a row the
//! WHERE rejects (`row_unlock_for_mysql`), and for an UPDATE under those
//! levels `try_semi_consistent_read`, where a row another transaction has
//! locked is read unlocked in its last committed version
//! (`row_sel_build_committed_vers_for_mysql`) and, if that version
//! matches, read again with its lock (`was_semi_consistent_read`).
//!
//! The runner issues these steps itself and judges each against its own
//! records, not the engine's word:
//!
//! - the read's rows, like any locking read's, against the committed
//!   state and the transaction's writes;
//! - a semi-consistent read stops after the first row it reads unlocked
//!   (MySQL locks that row, waiting, before it reads on), so its rows are
//!   judged as the range up to that row, and the runner reads on from
//!   after it once the row is dealt with;
//! - a row the engine says it read unlocked must be one another
//!   transaction holds or waits for a lock on that an X record lock
//!   conflicts with, and one this transaction took no lock on, by the
//!   lock oracle's record; every other row read must be X-locked by it;
//! - the rows let go are those whose `k` (as the read returned it, which
//!   the model just judged) the condition rejects; under READ COMMITTED
//!   and READ UNCOMMITTED exactly one of the X locks the statement took on
//!   each must be gone after the call (`lock_rec_unlock` resets one), none
//!   of a row the transaction itself wrote (by the model's writes), and
//!   no other lock may go (the early-release judge allows one X lock a
//!   rejected row); under the stronger levels nothing goes.

use super::*;
use crate::judge::locks::clustered_row;
use models::lock::{must_wait, OMode, OTarget, RKind};
use std::collections::{BTreeSet, VecDeque};

/// A [`PlannedStmt::ChangeWhere`] under way in its transaction.
pub(super) struct FilterRun {
    table: String,
    /// The highest id of its range.
    to: u64,
    below: u64,
    /// The change; empty for a DELETE.
    set: Vec<(String, Value)>,
    /// The engine's lock mark when it began: it may let go of later locks
    /// only.
    mark: engine::lock::LockId,
    /// The granted record locks its transaction held when it began, by the
    /// lock oracle's record.
    held_before: BTreeSet<(OTarget, OMode)>,
    /// What the answer it waits for is.
    phase: Phase,
    /// Its steps still to run.
    queue: VecDeque<Step>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The read of the range.
    Read,
    /// The locking read of the row with this id.
    Relock(u64),
    /// No answer: the next step runs.
    Steps,
}

/// One step after the read.
#[derive(Debug, Clone)]
enum Step {
    /// Change (update or delete) the row with this id.
    Change(u64),
    /// Read the row with this id again, locking it, and change it if it
    /// still matches (else let it go).
    Relock(u64),
    /// Let go of these rows (as the reads returned them).
    Unlock(Vec<Vec<Value>>),
    /// Read on from after the row with this id (a semi-consistent read
    /// stops after the first row it reads unlocked).
    ReadOn(u64),
}

/// The read `read` (a scan of `sb` by id) up to and including row
/// `last`: what a semi-consistent read that stopped there read.
pub(super) fn read_up_to(read: &Request, last: &[Value]) -> Request {
    let mut read = read.clone();
    if let (Request::Scan { high, .. }, Some(id)) = (&mut read, last.first()) {
        *high = RangeBound::Included(vec![id.clone()]);
    }
    read
}

/// The read of a filtered change of `table`: ids from `low` to `to`, every
/// row X-locked, semi-consistently for an UPDATE.
fn range_read(table: &str, low: RangeBound, to: u64, update: bool) -> Request {
    let scan = Request::Scan {
        table: table.to_string(),
        index: None,
        low,
        high: RangeBound::Included(vec![Value::UInt(to)]),
        reverse: false,
        limit: None,
    };
    if update {
        Request::SemiConsistent {
            read: Box::new(scan),
        }
    } else {
        Request::Locking {
            read: Box::new(scan),
            exclusive: true,
            index_condition: false,
        }
    }
}

/// Starts planned statement `st` (a [`PlannedStmt::ChangeWhere`]) in
/// session `s`: its read.
pub(super) fn start(world: &mut World, s: &mut Sess, st: PlannedStmt) -> Option<bool> {
    let PlannedStmt::ChangeWhere {
        table,
        from,
        to,
        below,
        set,
    } = st
    else {
        unreachable!("a filtered change")
    };
    // A filtered change is a statement of its own: its read never goes on
    // from where an earlier one's handed its rows over. One that ended in
    // an error (1114 from a change, say) left that place in the engine,
    // and the engine goes on from it for the next row-by-row read it is
    // asked, whatever its range (`Engine::set_row_by_row`). An error here
    // (no such session) comes back from the read's own call below.
    let _ = world.engine().set_row_by_row(s.id, false);
    let mark = world.engine().lock_mark();
    let held_before = match s.trx {
        Some(trx) => world
            .locks
            .all_locks()
            .into_iter()
            .filter(|(t, _, _, waiting)| *t == trx && !waiting)
            .map(|(_, target, mode, _)| (target, mode))
            .collect(),
        None => BTreeSet::new(),
    };
    let req = range_read(
        &table,
        RangeBound::Included(vec![Value::UInt(from)]),
        to,
        !set.is_empty(),
    );
    let txn = s.txn.as_mut().expect("caller checked");
    txn.filter = Some(FilterRun {
        table,
        to,
        below,
        set: set.iter().map(|(c, v)| (c.clone(), v.value())).collect(),
        mark,
        held_before,
        phase: Phase::Read,
        queue: VecDeque::new(),
    });
    session::exec(world, s, req)
}

/// Runs the next step of the session's filtered change, if it has one
/// left (`None` when it has not: the transaction goes on).
pub(super) fn next(world: &mut World, s: &mut Sess) -> Option<Option<bool>> {
    let txn = s.txn.as_mut()?;
    let f = txn.filter.as_mut()?;
    let Some(step) = f.queue.pop_front() else {
        txn.filter = None;
        return None;
    };
    let table = f.table.clone();
    let key = |id: u64| vec![Value::UInt(id)];
    Some(match step {
        Step::Change(id) if f.set.is_empty() => session::exec(
            world,
            s,
            Request::Delete {
                table,
                key: key(id),
            },
        ),
        Step::Change(id) => {
            let set = f.set.clone();
            session::exec(
                world,
                s,
                Request::Update {
                    table,
                    key: key(id),
                    set,
                },
            )
        }
        Step::Relock(id) => {
            f.phase = Phase::Relock(id);
            session::exec(
                world,
                s,
                Request::Locking {
                    read: Box::new(Request::Get {
                        table,
                        key: key(id),
                    }),
                    exclusive: true,
                    index_condition: false,
                },
            )
        }
        Step::Unlock(rows) => unlock(world, s, rows),
        Step::ReadOn(id) => {
            f.phase = Phase::Read;
            let req = range_read(
                &table,
                RangeBound::Excluded(vec![Value::UInt(id)]),
                f.to,
                !f.set.is_empty(),
            );
            session::exec(world, s, req)
        }
    })
}

/// The read of a filtered change, or a relock, answered `resp` (judged
/// already as a locking read): its next steps.
pub(super) fn answered(world: &mut World, s: &mut Sess, resp: &Response) {
    let (Some(trx), Some(txn)) = (s.trx, s.txn.as_mut()) else {
        return;
    };
    let isolation = txn.isolation;
    let Some(f) = txn.filter.as_mut() else {
        return;
    };
    let k_of = |row: &[Value]| match row.get(1) {
        Some(Value::UInt(k)) => Some(*k),
        _ => None,
    };
    match (f.phase, resp) {
        (Phase::Read, Response::Rows(rows)) => {
            let semi = world.engine().semi_consistent_rows(s.id).to_vec();
            let lenient = matches!(
                isolation,
                engine::Isolation::ReadCommitted | engine::Isolation::ReadUncommitted
            );
            if semi.len() > 1 || semi.first().is_some_and(|&i| i + 1 != rows.len()) {
                world.violations.push(format!(
                    "filtered UPDATE of {}: the semi-consistent read went on past the first row it read unlocked (rows {semi:?} of {}): MySQL locks that row before it reads on",
                    f.table,
                    rows.len()
                ));
            }
            if !semi.is_empty() && (!lenient || f.set.is_empty()) {
                world.violations.push(format!(
                    "filtered {} of {} under {isolation:?}: the engine read {} rows semi-consistently, which only an UPDATE under READ COMMITTED or READ UNCOMMITTED does",
                    if f.set.is_empty() { "DELETE" } else { "UPDATE" },
                    f.table,
                    semi.len()
                ));
            }
            let locks = locks_by_row(world, &f.table);
            let x_record = OMode::Record(true, RKind::Record);
            let mut rejected = Vec::new();
            let mut steps = VecDeque::new();
            for (i, row) in rows.iter().enumerate() {
                let (Some(Value::UInt(id)), Some(k)) = (row.first(), k_of(row)) else {
                    world.violations.push(format!(
                        "filtered change of {}: a row without its id and k: {row:?}",
                        f.table
                    ));
                    continue;
                };
                let on_row = locks.get(id).map_or(&[][..], |v| v.as_slice());
                let mine_new = on_row.iter().any(|(t, target, mode, waiting)| {
                    *t == trx && !waiting && !f.held_before.contains(&(target.clone(), *mode))
                });
                if semi.binary_search(&i).is_ok() {
                    world.stats.semi_consistent_rows += 1;
                    let conflicting = on_row
                        .iter()
                        .any(|(t, _, mode, _)| *t != trx && must_wait(x_record, *mode));
                    if mine_new || !conflicting {
                        world.violations.push(format!(
                            "filtered UPDATE of {}: row {id} was read semi-consistently, but {}",
                            f.table,
                            if mine_new {
                                "this transaction took a lock on it"
                            } else {
                                "no other transaction holds or waits for a lock on it that it would wait for"
                            }
                        ));
                    }
                    if k < f.below {
                        steps.push_back(Step::Relock(*id));
                    }
                    steps.push_back(Step::ReadOn(*id));
                    continue;
                }
                let locked = on_row.iter().any(|(t, _, mode, waiting)| {
                    *t == trx
                        && !waiting
                        && matches!(mode, OMode::Record(true, RKind::Record | RKind::NextKey))
                });
                if !locked {
                    world.violations.push(format!(
                        "filtered change of {}: row {id} was read without an X lock on it",
                        f.table
                    ));
                }
                if k < f.below {
                    steps.push_back(Step::Change(*id));
                } else {
                    rejected.push(row.clone());
                }
            }
            if !rejected.is_empty() {
                steps.push_front(Step::Unlock(rejected));
            }
            // A read that handed its rows over before a lock it would wait
            // for (MySQL changes each row as it reads it) reads on, to
            // wait, once they are changed; a semi-consistent read never
            // waits, so never does both.
            if world.engine().read_goes_on(s.id) {
                let last = rows.last().and_then(|r| match r.first() {
                    Some(Value::UInt(id)) => Some(*id),
                    _ => None,
                });
                match last {
                    Some(id) if semi.is_empty() => steps.push_back(Step::ReadOn(id)),
                    _ => world.violations.push(format!(
                        "filtered change of {}: the read stopped to hand over {} rows ({} read semi-consistently), which a row-by-row read does only with rows read and none semi-consistently",
                        f.table,
                        rows.len(),
                        semi.len()
                    )),
                }
            }
            f.queue = steps;
            f.phase = Phase::Steps;
        }
        (Phase::Relock(id), Response::Row(row)) => {
            if let Some(row) = row {
                if k_of(row).is_some_and(|k| k < f.below) {
                    f.queue.push_front(Step::Change(id));
                } else {
                    f.queue.push_front(Step::Unlock(vec![row.clone()]));
                }
            }
            world.stats.semi_consistent_relocks += 1;
            f.phase = Phase::Steps;
        }
        _ => {}
    }
}

/// The locks the oracle knows on the clustered records of `table`, by the
/// row's id: transaction, target, mode, waiting.
fn locks_by_row(world: &World, table: &str) -> BTreeMap<u64, Vec<(u64, OTarget, OMode, bool)>> {
    let mut by_row: BTreeMap<u64, Vec<_>> = BTreeMap::new();
    let Some(engine) = world.engine.as_ref() else {
        return by_row;
    };
    for (t, target, mode, waiting) in world.locks.all_locks() {
        let Some((name, pk)) = clustered_row(engine, &world.schema, &target) else {
            continue;
        };
        if let (true, [ModelValue::Int(id)]) = (name == table, pk.as_slice()) {
            if let Ok(id) = u64::try_from(*id) {
                by_row
                    .entry(id)
                    .or_default()
                    .push((t, target, mode, waiting));
            }
        }
    }
    by_row
}

/// Lets go of `rows`, which the condition rejected, and judges it.
fn unlock(world: &mut World, s: &mut Sess, rows: Vec<Vec<Value>>) -> Option<bool> {
    let txn = s.txn.as_ref().expect("caller checked");
    let f = txn.filter.as_ref().expect("caller checked");
    let lenient = matches!(
        txn.isolation,
        engine::Isolation::ReadCommitted | engine::Isolation::ReadUncommitted
    );
    let (table, mark) = (f.table.clone(), f.mark);
    let ids: BTreeSet<u64> = rows
        .iter()
        .filter_map(|r| match r.first() {
            Some(Value::UInt(id)) => Some(*id),
            _ => None,
        })
        .collect();
    // The rows the transaction wrote itself, by the model: they keep their
    // locks (row_unlock_for_mysql unlocks only a record whose DB_TRX_ID is
    // another transaction's).
    let own: BTreeSet<u64> = ids
        .iter()
        .copied()
        .filter(|&id| {
            let key = [ModelValue::Int(id.into())];
            txn.writes
                .iter()
                .any(|w| w.table == table && w.key.as_slice() == key)
        })
        .collect();
    if let (true, Some(trx)) = (lenient, s.trx) {
        let others: BTreeSet<u64> = ids.difference(&own).copied().collect();
        world.allowed_releases = Some((trx, table.clone(), others));
    }
    let taken_before = taken(world, s, &table, &ids);
    world.call_start_us = world.clock_now();
    let r = world
        .engine()
        .unlock_rows(s.id, &table, None, &rows, &[], mark);
    world.judge_locks();
    if let Err(e) = r {
        let req = Request::Get {
            table,
            key: Vec::new(),
        };
        return session::failed(world, s, &req, e);
    }
    world.event(
        "unlock",
        json!({"session": s.id, "table": table, "rows": ids.len()}),
    );
    if !lenient {
        return None;
    }
    world.stats.rows_let_go += ids.len() as u64;
    let taken_after = taken(world, s, &table, &ids);
    for id in &ids {
        let (before, after) = (taken_before[id], taken_after[id]);
        let released = usize::from(before > 0 && !own.contains(id));
        if after + released != before {
            world.violations.push(format!(
                "READ COMMITTED: row {id} of {table}, read and rejected by a filtered change, held {before} X locks the statement took and {after} after it let go of the row (row_unlock_for_mysql lets go of one, none of a row the transaction wrote: {})",
                own.contains(id)
            ));
        }
    }
    None
}

/// For each of `ids`, how many granted X locks on its clustered record the
/// session's transaction holds that it did not hold when its filtered
/// change began.
fn taken(world: &World, s: &Sess, table: &str, ids: &BTreeSet<u64>) -> BTreeMap<u64, usize> {
    let mut n: BTreeMap<u64, usize> = ids.iter().map(|&id| (id, 0)).collect();
    let (Some(trx), Some(f)) = (s.trx, s.txn.as_ref().and_then(|t| t.filter.as_ref())) else {
        return n;
    };
    let locks = locks_by_row(world, table);
    for id in ids {
        let c = locks.get(id).map_or(0, |v| {
            v.iter()
                .filter(|(t, target, mode, waiting)| {
                    *t == trx
                        && !waiting
                        && matches!(mode, OMode::Record(true, _))
                        && !f.held_before.contains(&(target.clone(), *mode))
                })
                .count()
        });
        n.insert(*id, c);
    }
    n
}
