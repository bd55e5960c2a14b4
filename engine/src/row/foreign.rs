//! The index search of a FOREIGN KEY check and the locks it takes. Mirrors
//! the loop of InnoDB's `row_ins_check_foreign_constraint` (row0ins.c,
//! InnoDB Plugin 1.0.6); what the engine does with a match (accept a
//! child row, refuse a parent change, cascade) is the handler's.
//!
//! A check looks in one index for records whose first fields equal the
//! constraint's values, from the first such record on, and locks what it
//! passes in shared mode, whatever the isolation level (gap locking is
//! off under READ COMMITTED for reads, never for constraint checks):
//!
//! ```text
//!   a matching delete-marked record   S, the record and the gap before it
//!   a matching live record            S, the record alone
//!   the first record past the matches S, the gap before it
//!   the supremum                      S, next-key (the gap at the end)
//! ```
//!
//! so the outcome of the check holds until the transaction ends: a parent
//! row found stays (its S lock blocks a delete), a parent row not found
//! cannot appear (the gap lock blocks the insert). With a later version's
//! rule ([`crate::later::LaterRule::FkCheckNoGapsUnderReadCommitted`]) a
//! check under READ COMMITTED or READ UNCOMMITTED locks no gap: a
//! delete-marked match record-only, the gap past the matches and the
//! supremum not at all.

use super::write::clustered_key_of_entry;
use crate::btree::{self, Bound, Cursor, Direction, Key};
use crate::dict::Table;
use crate::error::Result;
use crate::lock::{LockId, RecKey, RecKind, RecMode};
use crate::pager::Pager;
use crate::record;

use super::locking::LockCtx;

/// What one step of a constraint's search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// A lock must be waited for.
    Wait(LockId),
    /// A live matching record, S-locked: its key in the index searched
    /// (to go on after it) and its row's clustered key.
    Found {
        /// The record's key in the index searched.
        at: Key,
        /// The clustered key of its row.
        clustered: Key,
    },
    /// No (further) live matching record; the gap after the matches is
    /// S-locked.
    Missing,
}

/// The next live record of index `ix` of `table` (`None`: the clustered
/// index) after `after` (or from the start of the matches) whose first
/// fields equal `values`, locking as described in the module header
/// (`lockless`: nothing locked, for the `child-check-skips-parent-lock`
/// canary only; `no_gaps`: no gap locked, a later version's rule).
#[allow(clippy::too_many_arguments)]
pub fn probe(
    pager: &mut Pager,
    table: &Table,
    ix: Option<usize>,
    values: &Key,
    after: Option<&Key>,
    ctx: &mut LockCtx<'_>,
    lockless: bool,
    no_gaps: bool,
) -> Result<Probe> {
    let index = match ix {
        None => &table.clustered,
        Some(i) => &table.secondary[i].index,
    };
    let low = match after {
        Some(k) => Bound::Excluded(k.clone()),
        None => Bound::Included(values.clone()),
    };
    let high = Bound::Included(values.clone());
    let mut cur = Cursor::new(low, high, Direction::Forward);
    while let Some(rec) = cur.next(pager, index)? {
        let k = btree::key_of(index, 0, &rec)?;
        let deleted = record::is_deleted(&rec);
        let kind = if deleted && !no_gaps {
            RecKind::NextKey
        } else {
            RecKind::RecNotGap
        };
        if lockless {
            // The planted bug: no lock, so nothing waits either.
        } else if let Some(w) = ctx.record(
            pager,
            table,
            index,
            RecKey::Key(btree::lock_key(index, k.clone())),
            RecMode::S,
            kind,
            Some(&rec[..]),
        )? {
            return Ok(Probe::Wait(w));
        }
        if deleted {
            continue;
        }
        let clustered = match ix {
            None => k.clone(),
            Some(i) => clustered_key_of_entry(table, &table.secondary[i], &rec)?,
        };
        return Ok(Probe::Found { at: k, clustered });
    }
    if lockless || no_gaps {
        return Ok(Probe::Missing);
    }
    // Past the matches: the first record beyond them, or the supremum.
    let mut beyond = Cursor::new(
        Bound::Excluded(values.clone()),
        Bound::Unbounded,
        Direction::Forward,
    );
    let wait = match beyond.next(pager, index)? {
        Some(rec) => {
            let k = btree::key_of(index, 0, &rec)?;
            ctx.record(
                pager,
                table,
                index,
                RecKey::Key(btree::lock_key(index, k)),
                RecMode::S,
                RecKind::Gap,
                Some(&rec),
            )?
        }
        None => ctx.record(
            pager,
            table,
            index,
            RecKey::Supremum,
            RecMode::S,
            RecKind::NextKey,
            None,
        )?,
    };
    Ok(match wait {
        Some(w) => Probe::Wait(w),
        None => Probe::Missing,
    })
}
