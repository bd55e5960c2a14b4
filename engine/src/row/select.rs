//! Reads: point lookups and range scans, through the clustered index or a
//! secondary index, returning the row version the reader may see. Mirrors
//! InnoDB's `row0sel.cc`.
//!
//! A secondary entry carries no transaction id, so every entry found is
//! checked against the clustered record: the version the reader sees must
//! exist, must not be delete-marked, and must imply this very entry
//! (otherwise the entry belongs to another version of the row and the row
//! is reported where its visible version's entry is).

use super::{decode_row, sec_entry, visible_version, write::clustered_key_of_entry};
use crate::btree::{self, Bound, Cursor, Direction, Key};
use crate::dict::Table;
use crate::error::Result;
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
        Some(rec) => Ok(Some(decode_row(pager, table, &rec)?)),
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
                    out.push(decode_row(pager, table, &v)?);
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
                let implied = sec_entry(table, sec, &v)?;
                if record::compare_records(&sec.index.leaf, &implied, &entry, sec.index.n_key)?
                    != Ordering::Equal
                {
                    continue;
                }
                out.push(decode_row(pager, table, &v)?);
                if out.len() >= limit {
                    break;
                }
            }
        }
    }
    Ok(out)
}
