//! Reads: point lookups and range scans, through the clustered index or a
//! secondary index, returning the row version the reader may see. Mirrors
//! InnoDB's `row0sel.cc`.
//!
//! A secondary entry carries no transaction id, so every entry found is
//! checked against the clustered record: the version the reader sees must
//! exist, must not be delete-marked, and must imply this very entry
//! (otherwise the entry belongs to another version of the row and the row
//! is reported where its visible version's entry is).

use super::locking::{successor, LockCtx, ScanResume};
use super::{decode_row, sec_entry, visible_version, write::clustered_key_of_entry};
use crate::btree::{self, Bound, Cursor, Direction, Key};
use crate::dict::Table;
use crate::error::Result;
use crate::lock::{LockId, RecKey, RecKind, RecMode, Target};
use crate::pager::Pager;
use crate::record::{self, Value};
use crate::trx::ReadView;
use std::cmp::Ordering;

/// Which version a read returns.
#[derive(Debug, Clone, Copy)]
pub enum ReadMode<'a> {
    /// The version this snapshot sees.
    Consistent(&'a ReadView),
    /// The newest version, committed or not (READ UNCOMMITTED, and the
    /// current reads of locking statements).
    Latest,
}

fn version(
    pager: &mut Pager,
    table: &Table,
    rec: Vec<u8>,
    mode: ReadMode<'_>,
) -> Result<Option<Vec<u8>>> {
    let v = match mode {
        ReadMode::Latest => Some(rec),
        ReadMode::Consistent(view) => visible_version(pager, table, rec, view)?,
    };
    Ok(v.filter(|r| !record::is_deleted(r)))
}

/// A row as a read returns it: its columns, and for a table without a
/// primary key its DB_ROW_ID after them, as `Value::UInt` (what
/// `ha_innobase::position` keeps as the row's reference when the
/// clustered index was generated). The handler takes the row id off.
fn output(pager: &mut Pager, table: &Table, rec: &[u8]) -> Result<Vec<Value>> {
    let mut row = decode_row(pager, table, rec)?;
    if table.def.primary_key.is_empty() {
        row.push(Value::UInt(super::row_id_of(table, rec)?));
    }
    Ok(row)
}

/// The row with this clustered key, as `mode` sees it.
pub fn get(
    pager: &mut Pager,
    table: &Table,
    key: &Key,
    mode: ReadMode<'_>,
) -> Result<Option<Vec<Value>>> {
    let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(key))? else {
        return Ok(None);
    };
    match version(pager, table, found.rec, mode)? {
        Some(rec) => Ok(Some(output(pager, table, &rec)?)),
        None => Ok(None),
    }
}

/// A range scan. `index` is `None` for the clustered index or the position
/// of a secondary index; bounds are key prefixes of that index. At most
/// `limit` rows.
#[allow(clippy::too_many_arguments)]
pub fn scan(
    pager: &mut Pager,
    table: &Table,
    index: Option<usize>,
    low: Bound,
    high: Bound,
    dir: Direction,
    limit: usize,
    mode: ReadMode<'_>,
) -> Result<Vec<Vec<Value>>> {
    let mut out = Vec::new();
    if limit == 0 {
        return Ok(out);
    }
    match index {
        None => {
            let mut cur = Cursor::new(low, high, dir);
            while let Some(rec) = cur.next(pager, &table.clustered)? {
                if let Some(v) = version(pager, table, rec, mode)? {
                    out.push(output(pager, table, &v)?);
                    if out.len() >= limit {
                        break;
                    }
                }
            }
        }
        Some(i) => {
            let sec = &table.secondary[i];
            let mut cur = Cursor::new(low, high, dir);
            while let Some(entry) = cur.next(pager, &sec.index)? {
                let ck = clustered_key_of_entry(table, sec, &entry)?;
                let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(&ck))?
                else {
                    continue;
                };
                let Some(v) = version(pager, table, found.rec, mode)? else {
                    continue;
                };
                let implied = sec_entry(pager, table, sec, &v)?;
                if record::compare_records(&sec.index.leaf, &implied, &entry, sec.index.n_key)?
                    != Ordering::Equal
                {
                    continue;
                }
                out.push(output(pager, table, &v)?);
                if out.len() >= limit {
                    break;
                }
            }
        }
    }
    Ok(out)
}

/// A locking read's result, or the lock it must wait for.
pub type LockedRead<T> = std::result::Result<T, LockId>;

/// SELECT ... WHERE pk = key FOR UPDATE / LOCK IN SHARE MODE: locks the
/// record (alone, when it is live; with its gap when delete-marked under
/// REPEATABLE READ) or, when there is no such record under REPEATABLE
/// READ, the gap where it would be; returns the newest version.
pub fn get_locking(
    pager: &mut Pager,
    table: &Table,
    key: &Key,
    mode: RecMode,
    ctx: &mut LockCtx<'_>,
) -> Result<LockedRead<Option<Vec<Value>>>> {
    let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(key))? else {
        if ctx.gaps {
            let next = successor(pager, &table.clustered, key)?;
            if let Some(w) = ctx.record(
                pager,
                table,
                &table.clustered,
                next,
                mode,
                RecKind::Gap,
                None,
            )? {
                return Ok(Err(w));
            }
        }
        return Ok(Ok(None));
    };
    let deleted = record::is_deleted(&found.rec);
    if ctx.passes_committed_delete(table, &found.rec)? {
        return Ok(Ok(None));
    }
    // A search for a whole primary key that finds it locks the record
    // alone, delete-marked or not, and stops there: 1.0.6's
    // row_search_for_mysql takes LOCK_REC_NOT_GAP for an exact PAGE_CUR_GE
    // match on the clustered index, and a delete-marked one ends the
    // unique search without a lock on the record after it.
    let kind = RecKind::RecNotGap;
    let mark = ctx.locks.next_lock_id();
    let target = RecKey::Key(btree::lock_key(&table.clustered, key.clone()));
    if let Some(w) = ctx.record(
        pager,
        table,
        &table.clustered,
        target.clone(),
        mode,
        kind,
        Some(&found.rec),
    )? {
        return Ok(Err(w));
    }
    if deleted {
        let target = Target::Record {
            table: table.id,
            index: table.clustered.id,
            key: target,
        };
        let_go_deleted(ctx, table, &found.rec, &[target], mode, mark)?;
        return Ok(Ok(None));
    }
    Ok(Ok(Some(output(pager, table, &found.rec)?)))
}

/// The bound on the other side of `b`: where the records beyond a range
/// that ends at `b` begin.
fn beyond(b: &Bound) -> Option<Bound> {
    match b {
        Bound::Unbounded => None,
        Bound::Included(k) => Some(Bound::Excluded(k.clone())),
        Bound::Excluded(k) => Some(Bound::Included(k.clone())),
    }
}

/// The first record beyond a range end, in the direction `dir` moves: its
/// key, the supremum (forward, nothing beyond), or `None` (backward,
/// nothing below).
fn first_beyond(
    pager: &mut Pager,
    index: &btree::Index,
    end: &Bound,
    dir: Direction,
) -> Result<Option<RecKey>> {
    let (low, high) = match (dir, beyond(end)) {
        (Direction::Forward, None) => return Ok(Some(RecKey::Supremum)),
        (Direction::Backward, None) => return Ok(None),
        (Direction::Forward, Some(b)) => (b, Bound::Unbounded),
        (Direction::Backward, Some(b)) => (Bound::Unbounded, b),
    };
    let mut cur = Cursor::new(low, high, dir);
    match cur.next(pager, index)? {
        Some(rec) => Ok(Some(RecKey::Key(btree::lock_key(
            index,
            btree::key_of(index, 0, &rec)?,
        )))),
        None if dir == Direction::Forward => Ok(Some(RecKey::Supremum)),
        None => Ok(None),
    }
}

/// A locking range scan (`row_search_for_mysql` with a lock type): every
/// index record the scan passes is locked (with the gap before it under
/// REPEATABLE READ, alone under READ COMMITTED), a secondary entry's row
/// also on the clustered record, and under REPEATABLE READ the record
/// that ends the range too (a gap lock above the start of a descending
/// scan), so nothing can be inserted into the range. Returns the newest
/// versions of the live rows.
#[allow(clippy::too_many_arguments)]
pub fn scan_locking(
    pager: &mut Pager,
    table: &Table,
    index: Option<usize>,
    low: Bound,
    high: Bound,
    dir: Direction,
    limit: usize,
    mode: RecMode,
    ctx: &mut LockCtx<'_>,
) -> Result<LockedRead<Vec<Vec<Value>>>> {
    let mut out = Vec::new();
    // Rows handed over before this part of a row-by-row read (see
    // `LockCtx::row_by_row`): the LIMIT counts them.
    let handed = ctx.resume.as_ref().map_or(0, |r| r.handed);
    let limit = limit.saturating_sub(handed);
    if limit == 0 {
        ctx.resume = None;
        return Ok(Ok(out));
    }
    let ix = match index {
        None => &table.clustered,
        Some(i) => &table.secondary[i].index,
    };
    let kind = if ctx.gaps {
        RecKind::NextKey
    } else {
        RecKind::RecNotGap
    };
    if ctx.gaps && dir == Direction::Backward {
        if let Some(above) = first_beyond(pager, ix, &high, Direction::Forward)? {
            if let Some(w) = ctx.record(pager, table, ix, above, mode, RecKind::Gap, None)? {
                return Ok(Err(w));
            }
        }
    }
    // A forward scan from `>= full primary key` that finds that very key
    // locks it alone: nothing below the start can enter the range
    // (row_search_for_mysql's LOCK_REC_NOT_GAP for an exact PAGE_CUR_GE
    // match on the clustered index, in the call that opens the scan:
    // `direction == 0`). A wait for that lock ends in the same call (`goto
    // rec_loop`), so the lock it takes then is record-only too (compressed
    // seed 2059: MariaDB lets an insert below the start in).
    let exact_start = match (&low, index, dir) {
        (Bound::Included(k), None, Direction::Forward) if k.len() == table.clustered.n_key => {
            Some(k.clone())
        }
        _ => None,
    };
    // A scan that waited goes on from the entry it waited for, with the
    // rows it had read (see ScanResume); semi-consistent and SKIP LOCKED
    // reads never wait.
    let keeps_place = ctx.semi.is_none() && !ctx.skip_locked;
    let resume = ctx.resume.take().filter(|_| keeps_place);
    // A scan that waited on the entry past the range's end starts there.
    let past_end_at = resume
        .as_ref()
        .filter(|r| r.past_end)
        .map(|r| r.key.clone());
    let (start_low, start_high) = match (&resume, dir) {
        (Some(r), Direction::Forward) if r.after => (Bound::Excluded(r.key.clone()), high.clone()),
        (Some(r), Direction::Backward) if r.after => (low.clone(), Bound::Excluded(r.key.clone())),
        (Some(r), Direction::Forward) => (Bound::Included(r.key.clone()), high.clone()),
        (Some(r), Direction::Backward) => (low.clone(), Bound::Included(r.key.clone())),
        (None, _) => (low.clone(), high.clone()),
    };
    if let Some(r) = resume {
        out = r.rows;
    }
    let mut cur = Cursor::new(start_low, start_high, dir);
    // The entry of the last row read, where a row-by-row scan's cursor
    // stands when it hands its rows over.
    let mut last_out: Option<Key> = None;
    while let Some(rec) = match past_end_at {
        Some(_) => None,
        None => cur.next(pager, ix)?,
    } {
        let k = btree::key_of(ix, 0, &rec)?;
        let this_kind = if exact_start.as_ref() == Some(&k) {
            RecKind::RecNotGap
        } else {
            kind
        };
        let passes = match index {
            None => ctx.passes_committed_delete(table, &rec)?,
            Some(i) => ctx.passes_committed_entry(pager, table, &table.secondary[i], &rec)?,
        };
        if passes {
            continue;
        }
        let place = keeps_place.then(|| k.clone());
        let mark = ctx.locks.next_lock_id();
        ctx.yield_waits = ctx.row_by_row && !out.is_empty();
        let locked = lock_entry(pager, table, ix, k.clone(), &rec, mode, this_kind, ctx);
        ctx.yield_waits = false;
        if let Some(w) = locked? {
            keep_place(ctx, place, out, false, handed);
            return Ok(Err(w));
        }
        if std::mem::take(&mut ctx.yielded) {
            hand_over(ctx, last_out.take(), k, handed + out.len());
            return Ok(Ok(out));
        }
        if std::mem::take(&mut ctx.skipped) {
            // Semi-consistent: the last committed version instead, if the
            // row has one and it is not a delete.
            if let (None, Some(view)) = (index, &ctx.semi) {
                if let Some(v) = version(pager, table, rec, ReadMode::Consistent(view))? {
                    ctx.semi_rows.push(out.len());
                    out.push(output(pager, table, &v)?);
                    // MySQL's UPDATE reads this row again with its lock
                    // (`was_semi_consistent_read`) before it reads on: the
                    // caller goes on from after it (a table without a
                    // primary key has no key to go on from: its scan reads
                    // on, the rows past it read before that wait).
                    if out.len() >= limit || !table.def.primary_key.is_empty() {
                        return Ok(Ok(out));
                    }
                }
            }
            continue;
        }
        let entry_target = Target::Record {
            table: table.id,
            index: ix.id,
            key: RecKey::Key(btree::lock_key(ix, k.clone())),
        };
        // A delete-marked record is passed once it is locked, a secondary
        // entry's row never looked up (row_search_for_mysql tests the mark
        // before it fetches the clustered record).
        if record::is_deleted(&rec) {
            if index.is_none() {
                let_go_deleted(ctx, table, &rec, &[entry_target], mode, mark)?;
            }
            continue;
        }
        let row_rec = match index {
            None => rec,
            Some(i) => {
                let sec = &table.secondary[i];
                ctx.yield_waits = ctx.row_by_row && !out.is_empty();
                let locked = lock_clustered_of(pager, table, i, &rec, mode, ctx);
                ctx.yield_waits = false;
                let found = match locked? {
                    Err(w) => {
                        keep_place(ctx, place, out, false, handed);
                        return Ok(Err(w));
                    }
                    Ok(_) if std::mem::take(&mut ctx.yielded) => {
                        hand_over(ctx, last_out.take(), k, handed + out.len());
                        return Ok(Ok(out));
                    }
                    Ok(None) => continue,
                    Ok(Some(found)) => found,
                };
                if std::mem::take(&mut ctx.skipped) {
                    continue;
                }
                // A row whose clustered record is delete-marked is passed,
                // its two locks let go under READ COMMITTED.
                if record::is_deleted(&found.rec) {
                    let ck = clustered_key_of_entry(table, sec, &rec)?;
                    let clustered = Target::Record {
                        table: table.id,
                        index: table.clustered.id,
                        key: RecKey::Key(btree::lock_key(&table.clustered, ck)),
                    };
                    let targets = [entry_target, clustered];
                    let_go_deleted(ctx, table, &found.rec, &targets, mode, mark)?;
                    continue;
                }
                // A stale entry (another version of the row) reads nothing.
                let implied = sec_entry(pager, table, sec, &found.rec)?;
                if record::compare_records(&sec.index.leaf, &implied, &rec, sec.index.n_key)?
                    != Ordering::Equal
                {
                    continue;
                }
                found.rec
            }
        };
        out.push(output(pager, table, &row_rec)?);
        last_out = Some(k);
        if out.len() >= limit {
            return Ok(Ok(out));
        }
    }
    let end = match dir {
        Direction::Forward => &high,
        Direction::Backward => &low,
    };
    let equal = matches!((&low, &high), (Bound::Included(a), Bound::Included(b)) if a == b);
    // An equality read forward (ROW_SEL_EXACT, ROW_SEL_EXACT_PREFIX): the
    // first record that does not match ends the search, its gap locked
    // under REPEATABLE READ, nothing under READ COMMITTED. Read backward,
    // one value is a range (the server's QUICK_SELECT_DESC reads it with
    // HA_READ_PREFIX_LAST_OR_PREV, which InnoDB searches without a match
    // mode): the record below the value is read and locked as the one past
    // the end. (The server reads a descending EQ_RANGE over a whole key
    // forward; the SQL layer's plan asks for that read.)
    if equal && dir == Direction::Forward {
        if ctx.gaps {
            if let Some(stop) = first_beyond(pager, ix, end, dir)? {
                if let Some(w) = lock_gap_at(pager, table, ix, stop, mode, ctx)? {
                    return Ok(Err(w));
                }
                ctx.skipped = false;
            }
        }
        return Ok(Ok(out));
    }
    // A range: InnoDB 1.0 leaves its end to the server, so it reads on
    // past it to the first record it would hand over, locking each one it
    // passes as it locks those inside (delete-marked ones passed), and for
    // a secondary entry the row's clustered record too; the server then
    // sees the row is beyond the range. Those locks stay, under READ
    // COMMITTED as well.
    let past = match &past_end_at {
        Some(k) => Some(Bound::Included(k.clone())),
        None => beyond(end),
    };
    let Some(past) = past else {
        if dir == Direction::Forward && ctx.gaps {
            if let Some(w) = ctx.record(pager, table, ix, RecKey::Supremum, mode, kind, None)? {
                return Ok(Err(w));
            }
            ctx.skipped = false;
        }
        return Ok(Ok(out));
    };
    let (lo2, hi2) = match dir {
        Direction::Forward => (past, Bound::Unbounded),
        Direction::Backward => (Bound::Unbounded, past),
    };
    let mut cur = Cursor::new(lo2, hi2, dir);
    loop {
        let Some(rec) = cur.next(pager, ix)? else {
            if dir == Direction::Forward && ctx.gaps {
                let sup = RecKey::Supremum;
                if let Some(w) = ctx.record(pager, table, ix, sup, mode, kind, None)? {
                    return Ok(Err(w));
                }
            }
            break;
        };
        let passes = match index {
            None => ctx.passes_committed_delete(table, &rec)?,
            Some(i) => ctx.passes_committed_entry(pager, table, &table.secondary[i], &rec)?,
        };
        if passes {
            continue;
        }
        let k = btree::key_of(ix, 0, &rec)?;
        let place = keeps_place.then(|| k.clone());
        let mark = ctx.locks.next_lock_id();
        let entry_target = Target::Record {
            table: table.id,
            index: ix.id,
            key: RecKey::Key(btree::lock_key(ix, k.clone())),
        };
        ctx.yield_waits = ctx.row_by_row && !out.is_empty();
        let locked = lock_entry(pager, table, ix, k.clone(), &rec, mode, kind, ctx);
        ctx.yield_waits = false;
        if let Some(w) = locked? {
            keep_place(ctx, place, out, true, handed);
            return Ok(Err(w));
        }
        if std::mem::take(&mut ctx.yielded) {
            hand_over(ctx, last_out.take(), k, handed + out.len());
            return Ok(Ok(out));
        }
        if std::mem::take(&mut ctx.skipped) {
            break;
        }
        if record::is_deleted(&rec) {
            if index.is_none() {
                let_go_deleted(ctx, table, &rec, &[entry_target], mode, mark)?;
            }
            continue;
        }
        let mut targets = vec![entry_target];
        // A later server checks the range's end on a secondary entry
        // itself, before it looks up the row (`handler_index_cond_check`'s
        // end_range, CHECK_OUT_OF_RANGE): the row's clustered record is
        // not locked. A clustered index takes no pushed condition.
        let pushed = ctx.index_condition && dir == Direction::Forward && index.is_some();
        if let Some(i) = index.filter(|_| !pushed) {
            ctx.yield_waits = ctx.row_by_row && !out.is_empty();
            let locked = lock_clustered_of(pager, table, i, &rec, mode, ctx);
            ctx.yield_waits = false;
            if std::mem::take(&mut ctx.yielded) {
                hand_over(ctx, last_out.take(), k, handed + out.len());
                return Ok(Ok(out));
            }
            match locked? {
                Err(w) => {
                    keep_place(ctx, place, out, true, handed);
                    return Ok(Err(w));
                }
                Ok(Some(_)) => {
                    let ck = clustered_key_of_entry(table, &table.secondary[i], &rec)?;
                    targets.push(Target::Record {
                        table: table.id,
                        index: table.clustered.id,
                        key: RecKey::Key(btree::lock_key(&table.clustered, ck)),
                    });
                }
                Ok(None) => {}
            }
        }
        let kept = ctx.locks.unlock_clustered_only && index.is_some();
        if !ctx.gaps && ctx.locks.past_end_unlocked && !pushed && !kept && dir == Direction::Forward
        {
            // A later version's rule: the server gives back the lock on
            // the row past the range's end (`handler::read_range_next`'s
            // unlock_row, which releases it under READ COMMITTED and READ
            // UNCOMMITTED); a descending read (`QUICK_SELECT_DESC`) finds
            // its end itself and gives nothing back. A row its pushed index condition found past
            // the end never reaches the server, and its entry's lock stays
            // (compressed seed 430).
            let now = ctx.now_us;
            ctx.locks
                .release_records(ctx.trx, &targets, mode, mark, now);
        }
        break;
    }
    ctx.skipped = false;
    Ok(Ok(out))
}

/// A scan that must wait at the entry `place` (`None`: it does not keep
/// its place) with the rows `rows` read so far: where it goes on from
/// ([`ScanResume`]).
fn keep_place(
    ctx: &mut LockCtx<'_>,
    place: Option<Key>,
    rows: Vec<Vec<Value>>,
    past_end: bool,
    handed: usize,
) {
    if let Some(key) = place {
        ctx.resume = Some(ScanResume {
            key,
            rows,
            past_end,
            handed,
            after: false,
        });
    }
}

/// A row-by-row scan that has rows to hand over and would wait at the
/// entry `at` (`LockCtx::row_by_row`): it stops there, the rows going to
/// the caller to be changed, and goes on, when asked again, from after
/// `last`, the entry of the last row it read (from `at` if it knows none);
/// `handed` rows will have been handed over by then.
fn hand_over(ctx: &mut LockCtx<'_>, last: Option<Key>, at: Key, handed: usize) {
    let after = last.is_some();
    ctx.resume = Some(ScanResume {
        key: last.unwrap_or(at),
        rows: Vec::new(),
        past_end: false,
        handed,
        after,
    });
}

/// Locks record `rec` of `ix`, whose key is `key`.
#[allow(clippy::too_many_arguments)]
fn lock_entry(
    pager: &mut Pager,
    table: &Table,
    ix: &btree::Index,
    key: Key,
    rec: &[u8],
    mode: RecMode,
    kind: RecKind,
    ctx: &mut LockCtx<'_>,
) -> Result<Option<LockId>> {
    let at = RecKey::Key(btree::lock_key(ix, key));
    ctx.record(pager, table, ix, at, mode, kind, Some(rec))
}

/// Locks the clustered record of the row entry `rec` of secondary index
/// `i` stands for, record only (`row_sel_get_clust_rec_for_mysql`): the
/// record, if the row has one, or the lock to wait for.
fn lock_clustered_of(
    pager: &mut Pager,
    table: &Table,
    i: usize,
    rec: &[u8],
    mode: RecMode,
    ctx: &mut LockCtx<'_>,
) -> Result<std::result::Result<Option<btree::Found>, LockId>> {
    let ck = clustered_key_of_entry(table, &table.secondary[i], rec)?;
    let Some(found) = btree::get(pager, &table.clustered, &btree::key_refs(&ck))? else {
        return Ok(Ok(None));
    };
    // A read of the index alone under a shared lock: InnoDB returns the
    // entry's own fields and never visits the clustered record (the
    // record here only gives the row's columns, which the entry holds,
    // locked as it is).
    if ctx.index_only && mode == RecMode::S {
        return Ok(Ok(Some(found)));
    }
    if let Some(w) = ctx.record(
        pager,
        table,
        &table.clustered,
        RecKey::Key(btree::lock_key(&table.clustered, ck)),
        mode,
        RecKind::RecNotGap,
        Some(&found.rec),
    )? {
        return Ok(Err(w));
    }
    Ok(Ok(Some(found)))
}

/// READ COMMITTED passes a delete-marked clustered record without keeping
/// the lock it just took on it (and, for a row a secondary entry led to,
/// the entry's): `row_search_for_mysql` calls `row_unlock_for_mysql`
/// there ("no need to keep a lock on a delete-marked record if we do not
/// want to use next-key locking"), which unlocks a clustered record whose
/// DB_TRX_ID (`clustered`'s) is not the transaction's own. A delete-marked
/// secondary entry passed before its row is looked up keeps its lock: 1.0.6's
/// `row_unlock_for_mysql` unlocks clustered records only ("we do not know
/// how to unlock the record"). READ UNCOMMITTED and the other levels keep
/// every lock.
pub(super) fn let_go_deleted(
    ctx: &mut LockCtx<'_>,
    table: &Table,
    clustered: &[u8],
    targets: &[Target],
    mode: RecMode,
    mark: LockId,
) -> Result<()> {
    if ctx.read_committed && super::trx_id_of(table, clustered)? != ctx.trx {
        let now = ctx.now_us;
        ctx.locks.release_records(ctx.trx, targets, mode, mark, now);
    }
    Ok(())
}

/// A gap lock on the gap before `at` (the supremum's: the gap at the end).
fn lock_gap_at(
    pager: &mut Pager,
    table: &Table,
    ix: &btree::Index,
    at: RecKey,
    mode: RecMode,
    ctx: &mut LockCtx<'_>,
) -> Result<Option<LockId>> {
    match at {
        RecKey::Supremum => ctx.record(
            pager,
            table,
            ix,
            RecKey::Supremum,
            mode,
            RecKind::NextKey,
            None,
        ),
        key => ctx.record(pager, table, ix, key, mode, RecKind::Gap, None),
    }
}
