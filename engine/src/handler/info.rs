//! The information_schema tables of the lock system (INNODB_TRX,
//! INNODB_LOCKS and INNODB_LOCK_WAITS, mirroring InnoDB's `trx0i_s.cc`) and
//! of compression (INNODB_CMP and INNODB_CMP_RESET, mirroring
//! `i_s_cmp_fill_low` in `i_s.cc`).
//!
//! Locks are kept by index key (see [`crate::lock`]); the page and heap
//! number INNODB_LOCKS shows are looked up when the table is read: the leaf
//! that holds the key now, and the record's heap number there as InnoDB
//! counts it (0 is the infimum, 1 the supremum, user records from 2, here
//! in key order).

use super::{Engine, Request, SessionId};
use crate::btree;
use crate::dict::{ClusteredField, Table};
use crate::error::Result;
use crate::lock::{Lock, LockId, Mode, RecKey, Target, TrxId};
use crate::record::{self, Value};

/// One row of INFORMATION_SCHEMA.INNODB_TRX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnodbTrx {
    /// The transaction id, in hex as InnoDB prints it.
    pub trx_id: String,
    /// `RUNNING` or `LOCK WAIT` (a statement's commit and rollback finish
    /// within the call that starts them, so `COMMITTING` and `ROLLING
    /// BACK` are never seen between calls).
    pub trx_state: String,
    /// When it started, engine clock microseconds.
    pub trx_started: u64,
    /// The lock it waits for.
    pub trx_requested_lock_id: Option<String>,
    /// When that wait began.
    pub trx_wait_started: Option<u64>,
    /// Undo records plus locks: what the deadlock victim rule weighs.
    pub trx_weight: u64,
    /// The session.
    pub trx_mysql_thread_id: SessionId,
    /// The statement it is running (waiting in), if any.
    pub trx_query: Option<String>,
}

/// One row of INFORMATION_SCHEMA.INNODB_LOCKS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnodbLock {
    /// `trx_id:space:page:heap_no` for a record lock, `trx_id:table_id`
    /// for a table lock.
    pub lock_id: String,
    /// Its transaction, hex.
    pub lock_trx_id: String,
    /// `S`, `X`, `IS`, `IX`, `AUTO_INC`, with `,GAP` for gap locks.
    pub lock_mode: String,
    /// `RECORD` or `TABLE`.
    pub lock_type: String,
    /// The table's name.
    pub lock_table: String,
    /// The index's name (record locks).
    pub lock_index: Option<String>,
    /// Tablespace id (record locks).
    pub lock_space: Option<u32>,
    /// Page number (record locks).
    pub lock_page: Option<u32>,
    /// Heap number (record locks).
    pub lock_rec: Option<u32>,
    /// The record's key as MySQL prints it, or `supremum pseudo-record`.
    pub lock_data: Option<String>,
}

/// One row of INFORMATION_SCHEMA.INNODB_LOCK_WAITS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnodbLockWait {
    /// The waiting transaction.
    pub requesting_trx_id: String,
    /// Its lock.
    pub requested_lock_id: String,
    /// A transaction it waits for.
    pub blocking_trx_id: String,
    /// The lock it waits for.
    pub blocking_lock_id: String,
}

/// One row of INFORMATION_SCHEMA.INNODB_CMP (or INNODB_CMP_RESET): the
/// compressions and decompressions of pages of one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InnodbCmp {
    /// The compressed page size, bytes.
    pub page_size: u32,
    /// Compressions attempted (every one, in a change, a split's trial, a
    /// bulk build).
    pub compress_ops: u64,
    /// Those whose result fit in the page size.
    pub compress_ops_ok: u64,
    /// Seconds spent compressing, in the engine's clock (whole seconds, as
    /// InnoDB shows it).
    pub compress_time: u64,
    /// Decompressions: pages read, pages restored after a compression that
    /// did not fit, pages copied, images recovery replayed.
    pub uncompress_ops: u64,
    /// Seconds spent decompressing, in the engine's clock.
    pub uncompress_time: u64,
}

fn cmp_rows(rows: [(usize, crate::pager::ZipSizeStats); 5]) -> Vec<InnodbCmp> {
    rows.iter()
        .map(|&(size, s)| InnodbCmp {
            page_size: size as u32,
            compress_ops: s.compress_ops,
            compress_ops_ok: s.compress_ops_ok,
            compress_time: s.compress_us / 1_000_000,
            uncompress_ops: s.uncompress_ops,
            uncompress_time: s.uncompress_us / 1_000_000,
        })
        .collect()
}

/// One row of INFORMATION_SCHEMA.INNODB_CMPMEM (or INNODB_CMPMEM_RESET):
/// the buffer pool's buddy allocator at one block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InnodbCmpMem {
    /// The block size, bytes.
    pub page_size: u32,
    /// Blocks holding compressed pages now.
    pub pages_used: u64,
    /// Free blocks (external fragmentation: ideally at most one).
    pub pages_free: u64,
    /// Blocks moved so that a freed block could merge with its buddy.
    pub relocation_ops: u64,
    /// Seconds spent relocating, in the engine's clock (whole seconds).
    pub relocation_time: u64,
}

fn cmpmem_rows(rows: [crate::buf::CmpMemRow; crate::buf::buddy::CLASSES]) -> Vec<InnodbCmpMem> {
    rows.iter()
        .map(|r| InnodbCmpMem {
            page_size: r.page_size as u32,
            pages_used: r.pages_used,
            pages_free: r.pages_free,
            relocation_ops: r.relocation_ops,
            relocation_time: r.relocation_us / 1_000_000,
        })
        .collect()
}

fn hex(trx: TrxId) -> String {
    format!("{trx:X}")
}

impl Engine {
    /// INFORMATION_SCHEMA.INNODB_CMP: one row per compressed page size,
    /// 1024 to 16384, counted since the engine opened or the last
    /// [`Engine::innodb_cmp_reset`].
    pub fn innodb_cmp(&self) -> Vec<InnodbCmp> {
        cmp_rows(self.pager.compression.cmp())
    }

    /// INFORMATION_SCHEMA.INNODB_CMP_RESET: the rows of
    /// [`Engine::innodb_cmp`], which reading this table zeroes.
    pub fn innodb_cmp_reset(&mut self) -> Vec<InnodbCmp> {
        cmp_rows(self.pager.compression.cmp_reset())
    }

    /// INFORMATION_SCHEMA.INNODB_CMPMEM: one row per block size of the
    /// buffer pool's buddy allocator, 1024 to 16384; relocations since the
    /// engine opened or the last [`Engine::innodb_cmpmem_reset`].
    pub fn innodb_cmpmem(&self) -> Vec<InnodbCmpMem> {
        cmpmem_rows(self.pager.pool.cmpmem())
    }

    /// INFORMATION_SCHEMA.INNODB_CMPMEM_RESET: the rows of
    /// [`Engine::innodb_cmpmem`]; reading it zeroes the relocation
    /// counters (the blocks in use and free are the pool's state).
    pub fn innodb_cmpmem_reset(&mut self) -> Vec<InnodbCmpMem> {
        cmpmem_rows(self.pager.pool.cmpmem_reset())
    }

    /// The history list's length: committed transactions' undo logs that
    /// purge has not consumed yet, as SHOW ENGINE INNODB STATUS prints it
    /// ("History list length", read from the rollback segment header as
    /// `trx_sys->rseg_history_len` counts it).
    pub fn history_list_length(&mut self) -> Result<u32> {
        self.check_running()?;
        let r = crate::trx::history(&mut self.pager).map(|(_, len)| len);
        self.guard(r)
    }

    /// INFORMATION_SCHEMA.INNODB_TRX: every active transaction.
    pub fn innodb_trx(&mut self) -> Result<Vec<InnodbTrx>> {
        let mut out = Vec::new();
        let sessions: Vec<SessionId> = self.sessions.keys().copied().collect();
        for s in sessions {
            let sess = &self.sessions[&s];
            let Some(trx) = sess.trx.as_ref() else {
                continue;
            };
            let (id, started, undo) = (trx.id, trx.started_us, trx.undo_no());
            let query = sess.pending.as_ref().map(|p| statement_text(&p.request));
            let waiting = self.locks.waiting_for(id).cloned();
            let requested = match &waiting {
                Some(l) => Some(self.lock_id_text(l)?),
                None => None,
            };
            out.push(InnodbTrx {
                trx_id: hex(id),
                trx_state: if waiting.is_some() {
                    "LOCK WAIT"
                } else {
                    "RUNNING"
                }
                .into(),
                trx_started: started,
                trx_requested_lock_id: requested,
                trx_wait_started: waiting.as_ref().map(|l| l.since_us),
                trx_weight: undo + self.locks.lock_structs(id) as u64,
                trx_mysql_thread_id: s,
                trx_query: query,
            });
        }
        Ok(out)
    }

    /// INFORMATION_SCHEMA.INNODB_LOCKS: every waiting lock and every lock
    /// blocking one.
    pub fn innodb_locks(&mut self) -> Result<Vec<InnodbLock>> {
        let mut ids: Vec<LockId> = Vec::new();
        for e in self.locks.wait_edges() {
            ids.push(e.requested_lock);
            ids.push(e.blocking_lock);
        }
        ids.sort_unstable();
        ids.dedup();
        let mut out = Vec::new();
        for id in ids {
            let lock = self
                .locks
                .lock(id)
                .expect("an edge names live locks")
                .clone();
            out.push(self.lock_row(&lock)?);
        }
        Ok(out)
    }

    /// INFORMATION_SCHEMA.INNODB_LOCK_WAITS: one row per waiting lock and
    /// lock it waits for.
    pub fn innodb_lock_waits(&mut self) -> Result<Vec<InnodbLockWait>> {
        let mut out = Vec::new();
        for e in self.locks.wait_edges() {
            let requested = self.locks.lock(e.requested_lock).cloned();
            let blocking = self.locks.lock(e.blocking_lock).cloned();
            let (Some(r), Some(b)) = (requested, blocking) else {
                continue;
            };
            out.push(InnodbLockWait {
                requesting_trx_id: hex(e.requesting_trx),
                requested_lock_id: self.lock_id_text(&r)?,
                blocking_trx_id: hex(e.blocking_trx),
                blocking_lock_id: self.lock_id_text(&b)?,
            });
        }
        Ok(out)
    }

    /// Where a record lock's key is now: space, page, heap number.
    fn lock_position(&mut self, lock: &Lock) -> Result<Option<(u32, u32, u32)>> {
        let Target::Record { table, index, key } = &lock.target else {
            return Ok(None);
        };
        let Some(t) = self.tables.get(table) else {
            return Ok(None);
        };
        let ix = if t.clustered.id == *index {
            &t.clustered
        } else {
            match t.secondary.iter().find(|s| s.index.id == *index) {
                Some(s) => &s.index,
                None => return Ok(None),
            }
        };
        let space = ix.space;
        match key {
            RecKey::Key(k) => match btree::get(&mut self.pager, ix, &btree::key_refs(k))? {
                Some(found) => Ok(Some((space, found.page_no, found.slot as u32 + 2))),
                // A record gone since (its locks wait to move): no position.
                None => Ok(Some((space, 0, 0))),
            },
            RecKey::Supremum => {
                let mut cur = btree::Cursor::new(
                    btree::Bound::Unbounded,
                    btree::Bound::Unbounded,
                    btree::Direction::Backward,
                );
                let page = match cur.next(&mut self.pager, ix)? {
                    Some(_) => cur.page_no().unwrap_or(ix.root),
                    None => ix.root,
                };
                Ok(Some((space, page, 1)))
            }
        }
    }

    /// The key of the record a lock key names, as the record stores it
    /// (the lock key itself if the record is gone).
    fn record_key(&mut self, table: u64, index: u64, key: &RecKey) -> Result<RecKey> {
        let RecKey::Key(k) = key else {
            return Ok(key.clone());
        };
        let Some(t) = self.tables.get(&table) else {
            return Ok(key.clone());
        };
        let ix = if t.clustered.id == index {
            &t.clustered
        } else {
            match t.secondary.iter().find(|s| s.index.id == index) {
                Some(s) => &s.index,
                None => return Ok(key.clone()),
            }
        };
        Ok(
            match btree::get(&mut self.pager, ix, &btree::key_refs(k))? {
                Some(found) => RecKey::Key(btree::key_of(ix, 0, &found.rec)?),
                None => key.clone(),
            },
        )
    }

    fn lock_id_text(&mut self, lock: &Lock) -> Result<String> {
        Ok(match self.lock_position(lock)? {
            Some((space, page, heap)) => format!("{}:{space}:{page}:{heap}", hex(lock.trx)),
            None => format!("{}:{}", hex(lock.trx), lock.target.table()),
        })
    }

    fn lock_row(&mut self, lock: &Lock) -> Result<InnodbLock> {
        let table_id = lock.target.table();
        let table_name = self
            .tables
            .get(&table_id)
            .map(|t| t.name().to_string())
            .unwrap_or_else(|| table_id.to_string());
        let pos = self.lock_position(lock)?;
        let (index_name, data) = match &lock.target {
            Target::Table(_) => (None, None),
            Target::Record { index, key, .. } => {
                // A lock names its record by the key's canonical form (see
                // btree::lock_key); lock_data shows the record's own bytes,
                // as InnoDB prints the locked record.
                let shown = self.record_key(table_id, *index, key)?;
                let (name, data) = index_and_data(&self.tables[&table_id], *index, &shown);
                (Some(name), Some(data))
            }
        };
        // A lock on the supremum is shown without GAP: InnoDB clears the
        // gap bits of every lock it makes there (`lock_rec_create`), all
        // of them being gap locks by their place.
        let on_supremum = matches!(
            lock.target,
            Target::Record {
                key: RecKey::Supremum,
                ..
            }
        );
        let lock_mode = match lock.mode {
            Mode::Record(m, _) if on_supremum => {
                Mode::Record(m, crate::lock::RecKind::NextKey).name()
            }
            m => m.name(),
        };
        Ok(InnodbLock {
            lock_id: self.lock_id_text(lock)?,
            lock_trx_id: hex(lock.trx),
            lock_mode,
            lock_type: match lock.mode {
                Mode::Table(_) => "TABLE",
                Mode::Record(..) => "RECORD",
            }
            .into(),
            lock_table: format!("`{table_name}`"),
            lock_index: index_name.map(|n| format!("`{n}`")),
            lock_space: pos.map(|p| p.0),
            lock_page: pos.map(|p| p.1),
            lock_rec: pos.map(|p| p.2),
            lock_data: data,
        })
    }
}

/// One transaction of the latest deadlock, as SHOW ENGINE INNODB STATUS's
/// LATEST DETECTED DEADLOCK section prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockTrx {
    /// Its id, in hex.
    pub trx_id: String,
    /// Its session (MySQL thread id).
    pub session: SessionId,
    /// The lock it waited for: mode, index, table, key.
    pub waiting_for: String,
    /// Its lock structs when the deadlock was found, the waiting one
    /// included (with `undo`, its deadlock weight).
    pub lock_structs: u64,
    /// Its record locks then ([`crate::lock::LockSys::record_locks_of`]).
    pub row_locks: u64,
    /// Its undo records then.
    pub undo: u64,
}

/// The latest deadlock the engine found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestDeadlock {
    /// When, on the engine's clock (microseconds).
    pub at_us: u64,
    /// The transactions of the cycle, the one whose request closed it
    /// first.
    pub trxs: Vec<DeadlockTrx>,
    /// The victim's position in `trxs`.
    pub victim: usize,
}

impl Engine {
    /// The cycle through `me` in the wait-for graph, starting at `me`.
    fn wait_cycle(&self, me: TrxId) -> Vec<TrxId> {
        let edges = self.locks.wait_edges();
        // Depth-first from `me` until it is reached again.
        let mut path = vec![me];
        let mut seen = std::collections::BTreeSet::new();
        fn dfs(
            edges: &[crate::lock::WaitEdge],
            me: TrxId,
            path: &mut Vec<TrxId>,
            seen: &mut std::collections::BTreeSet<TrxId>,
        ) -> bool {
            let at = *path.last().expect("a path starts at me");
            for e in edges.iter().filter(|e| e.requesting_trx == at) {
                if e.blocking_trx == me {
                    return true;
                }
                if seen.insert(e.blocking_trx) {
                    path.push(e.blocking_trx);
                    if dfs(edges, me, path, seen) {
                        return true;
                    }
                    path.pop();
                }
            }
            false
        }
        if dfs(&edges, me, &mut path, &mut seen) {
            path
        } else {
            vec![me]
        }
    }

    /// Records the deadlock `me`'s request closed, before the victim is
    /// rolled back. Reads no page: the lock's key is printed from the lock.
    pub(super) fn note_deadlock(&mut self, me: TrxId, victim: TrxId) {
        let cycle = self.wait_cycle(me);
        let session_of = |t: TrxId| {
            self.sessions
                .iter()
                .find(|(_, x)| x.trx.as_ref().map(|tr| tr.id) == Some(t))
                .map_or(0, |(&id, _)| id)
        };
        let undo_of = |t: TrxId| {
            (self.sessions.values())
                .filter_map(|x| x.trx.as_ref())
                .find(|tr| tr.id == t)
                .map_or(0, |tr| tr.undo_no())
        };
        let trxs: Vec<DeadlockTrx> = cycle
            .iter()
            .map(|&t| DeadlockTrx {
                trx_id: hex(t),
                session: session_of(t),
                waiting_for: self
                    .locks
                    .waiting_for(t)
                    .map_or_else(String::new, |l| self.lock_text(l)),
                lock_structs: self.locks.lock_structs(t) as u64,
                row_locks: self.locks.record_locks_of(t) as u64,
                undo: undo_of(t),
            })
            .collect();
        let victim = cycle.iter().position(|&t| t == victim).unwrap_or(0);
        self.latest_deadlock = Some(LatestDeadlock {
            at_us: self.pager.now_us(),
            trxs,
            victim,
        });
    }

    /// A lock as the monitor prints it, without its page position.
    fn lock_text(&self, lock: &Lock) -> String {
        let table_id = lock.target.table();
        let Some(t) = self.tables.get(&table_id) else {
            return format!("{} lock on table {table_id}", lock.mode.name());
        };
        match &lock.target {
            Target::Table(_) => format!(
                "TABLE LOCK table `{}` lock mode {}",
                t.name(),
                lock.mode.name()
            ),
            Target::Record { index, key, .. } => {
                let (name, data) = index_and_data(t, *index, key);
                format!(
                    "RECORD LOCKS index `{name}` of table `{}` lock_mode {} waiting, key {data}",
                    t.name(),
                    lock.mode.name()
                )
            }
        }
    }

    /// The latest deadlock found since the engine opened.
    pub fn latest_deadlock(&self) -> Option<&LatestDeadlock> {
        self.latest_deadlock.as_ref()
    }
}

/// A record lock's index name (`PRIMARY` for the clustered index) and its
/// key as lock_data prints it.
fn index_and_data(t: &Table, index: u64, key: &RecKey) -> (String, String) {
    let name = if t.clustered.id == index {
        "PRIMARY".to_string()
    } else {
        t.secondary
            .iter()
            .find(|s| s.index.id == index)
            .map(|s| s.def.name.clone())
            .unwrap_or_default()
    };
    let data = match key {
        RecKey::Supremum => "supremum pseudo-record".to_string(),
        RecKey::Key(k) => key_text(t, index, k),
    };
    (name, data)
}

/// A key as MySQL prints lock_data: numbers bare, strings quoted, fields
/// separated by ", ".
fn key_text(t: &Table, index: u64, key: &btree::Key) -> String {
    let fields: Vec<usize> = if t.clustered.id == index {
        (0..key.len()).collect()
    } else {
        t.secondary
            .iter()
            .find(|s| s.index.id == index)
            .map(|s| s.from_clustered.clone())
            .unwrap_or_default()
    };
    key.iter()
        .zip(fields)
        .map(|(v, f)| match (v, t.fields.get(f)) {
            (None, _) => "NULL".to_string(),
            (
                Some(b),
                Some(ClusteredField::Column(c) | ClusteredField::Prefix { column: c, .. }),
            ) => match record::from_stored(&t.def.columns[*c].ty, b) {
                Ok(Value::Int(i)) => i.to_string(),
                Ok(Value::UInt(u)) => u.to_string(),
                Ok(Value::Bytes(b)) => sql_format(&b),
                _ => "?".into(),
            },
            (Some(b), _) => format!(
                "0x{}",
                b.iter().map(|x| format!("{x:02X}")).collect::<String>()
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A string as lock_data shows it (`ut_str_sql_format`): in single
/// quotes, a quote or backslash doubled, NUL as `\0`.
fn sql_format(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len() + 2);
    out.push('\'');
    for ch in String::from_utf8_lossy(b).chars() {
        match ch {
            '\0' => out.push_str("\\0"),
            '\'' | '\\' => {
                out.push(ch);
                out.push(ch);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A statement as SQL-ish text, for trx_query.
pub fn statement_text(r: &Request) -> String {
    let vals = |xs: &[Value]| {
        xs.iter()
            .map(|v| match v {
                Value::Bytes(b) if b.len() > 32 => format!("<{} bytes>", b.len()),
                Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match r {
        Request::Insert { table, row } => format!("INSERT INTO {table} VALUES ({})", vals(row)),
        Request::Update { table, key, set } => format!(
            "UPDATE {table} SET {} WHERE PRIMARY KEY = ({})",
            set.iter()
                .map(|(c, v)| format!("{c} = {}", vals(std::slice::from_ref(v))))
                .collect::<Vec<_>>()
                .join(", "),
            vals(key)
        ),
        Request::Delete { table, key } => {
            format!("DELETE FROM {table} WHERE PRIMARY KEY = ({})", vals(key))
        }
        Request::Get { table, key } => {
            format!("SELECT * FROM {table} WHERE PRIMARY KEY = ({})", vals(key))
        }
        Request::Scan { table, .. } => format!("SELECT * FROM {table} WHERE <range>"),
        Request::Locking {
            read, exclusive, ..
        } => format!(
            "{} {}",
            statement_text(read),
            if *exclusive {
                "FOR UPDATE"
            } else {
                "LOCK IN SHARE MODE"
            }
        ),
        other => format!("{other:?}"),
    }
}
