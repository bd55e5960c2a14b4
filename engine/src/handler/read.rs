//! Reads: the read view a consistent read uses, the index a scan takes,
//! and locking reads (FOR UPDATE, LOCK IN SHARE MODE, SKIP LOCKED,
//! semi-consistent).

use super::*;

/// An index's key columns, each with its prefix length if it keeps one.
pub(super) type KeyColumns = Vec<(usize, Option<u16>)>;

impl Engine {
    /// The read mode of a consistent read in `s`, opening a view if needed.
    pub(super) fn read_mode_view(&mut self, s: SessionId) -> Option<crate::trx::ReadView> {
        if let Some(v) = &self.statement_view {
            return v.clone();
        }
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let trx = sess.trx.as_mut().expect("transaction open");
        match trx.isolation {
            Isolation::ReadUncommitted => None,
            Isolation::ReadCommitted => {
                self.sys.open_view(trx);
                trx.view.clone()
            }
            Isolation::RepeatableRead | Isolation::Serializable => {
                if trx.view.is_none()
                    || self
                        .config
                        .canaries
                        .has(crate::Canary::SnapshotPerStatement)
                {
                    self.sys.open_view(trx);
                }
                trx.view.clone()
            }
        }
    }

    /// The index a scan uses (`None`: the clustered index) and its key
    /// columns.
    pub(super) fn scan_index(
        t: &Table,
        index: Option<&str>,
        low: &RangeBound,
        high: &RangeBound,
    ) -> Result<(Option<usize>, KeyColumns)> {
        let (ix, cols) = match index {
            None => (
                None,
                (t.def.primary_key.iter().enumerate())
                    .map(|(i, &c)| (c, t.def.primary_prefix(i)))
                    .collect(),
            ),
            Some(name) => {
                let i = t
                    .secondary
                    .iter()
                    .position(|x| x.def.name.eq_ignore_ascii_case(name))
                    .ok_or_else(|| Error::NoSuchIndex {
                        index: name.to_string(),
                        table: t.name().to_string(),
                    })?;
                let def = &t.secondary[i].def;
                let cols: Vec<_> = (def.columns.iter().enumerate())
                    .map(|(k, &c)| (c, def.prefix(k)))
                    .collect();
                (Some(i), cols)
            }
        };
        if ix.is_none()
            && cols.is_empty()
            && (*low != RangeBound::Unbounded || *high != RangeBound::Unbounded)
        {
            return Err(Error::InvalidArgument(format!(
                "table '{}' has no primary key to range over",
                t.name()
            )));
        }
        Ok((ix, cols))
    }

    /// A locking read: an intention lock on the table, then the records.
    pub(super) fn locking_read(
        &mut self,
        s: SessionId,
        read: &Request,
        exclusive: bool,
        wait: ReadWait,
    ) -> Result<DmlResult> {
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.semi_rows.clear();
        }
        let (table, mode, table_mode) = match read {
            Request::Get { table, .. } | Request::Scan { table, .. } => (
                table,
                if exclusive { RecMode::X } else { RecMode::S },
                if exclusive {
                    TableMode::IX
                } else {
                    TableMode::IS
                },
            ),
            _ => {
                return Err(Error::InvalidArgument(
                    "FOR UPDATE and LOCK IN SHARE MODE apply to a SELECT".into(),
                ))
            }
        };
        let id = self.table_id(table)?;
        let t = &self.tables[&id];
        let scan_args = match read {
            Request::Scan {
                index,
                low,
                high,
                reverse,
                limit,
                ..
            } => {
                let (ix, cols) = Self::scan_index(t, index.as_deref(), low, high)?;
                Some((
                    ix,
                    Self::bound_stored(t, &cols, low)?,
                    Self::bound_stored(t, &cols, high)?,
                    if *reverse {
                        Direction::Backward
                    } else {
                        Direction::Forward
                    },
                    limit.unwrap_or(usize::MAX),
                ))
            }
            _ => None,
        };
        let key = match read {
            Request::Get { key, .. } => Some(Self::key_stored(t, key)?),
            _ => None,
        };
        if let Some((ix, ..)) = &scan_args {
            let view = self.sessions[&s].trx.as_ref().and_then(|t| t.view.as_ref());
            if !self
                .config
                .canaries
                .has(crate::Canary::OldViewsReadNewIndex)
            {
                index_usable(t, *ix, view)?;
            }
        }
        let now = self.pager.now_us();
        let sess = self.sessions.get_mut(&s).expect("session exists");
        let row_by_row = scan_args.is_some()
            && wait == ReadWait::Wait
            && (sess.row_by_row || sess.statement.is_some_and(|st| st.row_by_row));
        // A row-by-row scan goes on from where it handed its rows over; a
        // scan that waited, from where it waited.
        let read_on = if row_by_row {
            match sess.read_on.take() {
                Some(on) if on.exclusive == exclusive && same_but_start(&on.read, read) => {
                    Some(on.place)
                }
                // The place is this read's alone: a caller that asks
                // another read (a new statement's) without turning
                // row-by-row mode off first would get rows from the old
                // read's range. The place is forgotten.
                Some(_) => {
                    return Err(Error::SessionState(
                        s,
                        "a row-by-row read other than the one whose place is kept",
                    ))
                }
                None => None,
            }
        } else {
            None
        };
        let resume = sess.scan_resume.take().or(read_on);
        let index_condition = sess.index_condition;
        let index_only = sess.index_only;
        let trx = sess.trx.as_mut().expect("transaction open");
        if let Some(w) = table_lock(&mut self.locks, trx.id, id, table_mode, now) {
            return Ok(DmlResult::Wait(w));
        }
        let mut ctx = lock_ctx(&mut self.locks, trx, now, &self.sys, false);
        ctx.resume = resume;
        ctx.row_by_row = row_by_row;
        ctx.index_condition = ctx.locks.index_condition_pushdown && index_condition;
        ctx.index_only = index_only;
        ctx.skip_locked = wait != ReadWait::Wait;
        if wait == ReadWait::Semi {
            ctx.semi = Some(self.sys.snapshot());
        }
        let table = &self.tables[&id];
        Ok(match (key, scan_args) {
            (Some(key), _) => {
                match select::get_locking(&mut self.pager, table, &key, mode, &mut ctx)? {
                    Ok(row) => {
                        drop(ctx);
                        let row = self.take_row_ref(s, id, row);
                        DmlResult::Done(Response::Row(row))
                    }
                    Err(w) => DmlResult::Wait(w),
                }
            }
            (None, Some((ix, low, high, dir, limit))) => {
                if self
                    .config
                    .canaries
                    .has(crate::Canary::LockingScanSkipsGaps)
                {
                    // The planted bug: the range's records are locked, the
                    // gaps between them are not, so inserts into the range
                    // go ahead (phantoms) under REPEATABLE READ.
                    ctx.gaps = false;
                }
                match select::scan_locking(
                    &mut self.pager,
                    table,
                    ix,
                    low,
                    high,
                    dir,
                    limit,
                    mode,
                    &mut ctx,
                )? {
                    Ok(mut rows) => {
                        let semi = std::mem::take(&mut ctx.semi_rows);
                        // Set only where a row-by-row scan handed its rows
                        // over before a wait.
                        let read_on = ctx.resume.take();
                        drop(ctx);
                        self.stats.semi_consistent_rows += semi.len() as u64;
                        if read_on.is_some() {
                            self.stats.rows_handed_before_waits += rows.len() as u64;
                        }
                        if let Some(sess) = self.sessions.get_mut(&s) {
                            sess.semi_rows = semi;
                            sess.read_on = read_on.map(|place| ReadOn {
                                read: read.clone(),
                                exclusive,
                                place,
                            });
                        }
                        self.take_row_refs(s, id, &mut rows);
                        DmlResult::Done(Response::Rows(rows))
                    }
                    Err(w) => {
                        let resume = ctx.resume.take();
                        drop(ctx);
                        if let Some(sess) = self.sessions.get_mut(&s) {
                            sess.scan_resume = resume;
                        }
                        DmlResult::Wait(w)
                    }
                }
            }
            (None, None) => unreachable!("a Get has a key, a Scan its bounds"),
        })
    }
}

/// What a locking read does about a lock it would wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadWait {
    /// Waits.
    Wait,
    /// SKIP LOCKED: leaves the row out.
    Skip,
    /// Semi-consistent: reads the row's last committed version, unlocked.
    Semi,
}

/// 1412 if `view` is older than the commit that made secondary index `ix`
/// usable (InnoDB's `row_merge_is_index_usable`).
pub(super) fn index_usable(
    t: &Table,
    ix: Option<usize>,
    view: Option<&crate::trx::ReadView>,
) -> Result<()> {
    let Some(i) = ix else {
        return Ok(());
    };
    match view {
        Some(v) if !v.sees(t.secondary[i].created_by) => Err(Error::TableDefChanged),
        _ => Ok(()),
    }
}

/// Whether `b` is the read `a` asked again: the same table, index,
/// direction, limit and end. Its start may differ (a caller that goes on
/// may start it past the rows it was handed): the read goes on from its
/// kept place either way.
fn same_but_start(a: &Request, b: &Request) -> bool {
    match (a, b) {
        (
            Request::Scan {
                table: t1,
                index: i1,
                low: l1,
                high: h1,
                reverse: r1,
                limit: n1,
            },
            Request::Scan {
                table: t2,
                index: i2,
                low: l2,
                high: h2,
                reverse: r2,
                limit: n2,
            },
        ) => {
            let end = |r: bool, low, high| if r { low } else { high };
            (t1, i1, r1, n1) == (t2, i2, r2, n2) && end(*r1, l1, h1) == end(*r2, l2, h2)
        }
        _ => a == b,
    }
}
