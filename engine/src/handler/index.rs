//! Fast index creation and DROP INDEX. Mirrors InnoDB Plugin 1.0's
//! `ha_innobase::add_index` and `row0merge.cc`:
//!
//! 1. the new indexes enter the dictionary under a name that starts with
//!    [`BUILDING_PREFIX`] (`TEMP_INDEX_PREFIX`), with empty trees, in one
//!    synced dictionary transaction (`row_merge_create_index`);
//! 2. one scan of the clustered index gives every new index its entries
//!    (`row_merge_read_clustered_index`), each index's sorted by an
//!    external merge sort with a bounded buffer ([`crate::row::merge`]);
//! 3. the sorted entries go into the trees in order
//!    (`row_merge_insert_index_tuples`: ordinary logged inserts), a unique
//!    index refusing the first duplicate;
//! 4. one more dictionary transaction gives the indexes their names
//!    (`row_merge_rename_indexes`); a read view older than it may not read
//!    them (1412, `row_merge_is_index_usable`).
//!
//! A failure before step 4 (a duplicate, a full disk) drops the indexes
//! again (`row_merge_drop_indexes`); a crash before it leaves them named
//! as building, and startup drops them (`row_merge_drop_temp_indexes`), so
//! no half-built index is ever visible. No table is copied.
//!
//! DROP INDEX is a dictionary change, then the index's pages go back to
//! the tablespace's free list: the file keeps its size.
//!
//! Every DDL first takes its table lock in the session's transaction
//! ([`Engine::ddl_lock`]): S for a build, X for the rest. It waits like a
//! row statement's lock does, so a CREATE INDEX beside a transaction that
//! has changed the table blocks until that transaction ends, or fails
//! with 1205 at the lock wait timeout (or 1213 as a deadlock's victim).

use super::ddl::DictChange;
use super::{Engine, Request, SessionId, Step};
use crate::btree::{self, Bound, Cursor, Direction};
use crate::dict::{self, IndexDef, Table, TableStorage, BUILDING_PREFIX};
use crate::error::{Error, Result};
use crate::lock::{Mode, TableMode, Target};
use crate::record;
use crate::row::{self, merge};

/// What a fast index creation did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IndexBuild {
    /// Clustered records scanned (once, for every new index).
    pub rows_scanned: u64,
    /// Entries put into the new indexes.
    pub entries: u64,
    /// Sorted runs written to the merge file.
    pub runs: u64,
    /// Bytes written to the merge file.
    pub bytes_spilled: u64,
}

/// A DDL statement's progress: done, or waiting for its table lock.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum DdlStep<T> {
    /// Finished, under its table lock; the caller ends the transaction
    /// that holds it (commit, as MySQL does at the end of every DDL).
    Done(T),
    /// Waiting for its table lock: [`Engine::resume`] the session until
    /// the wait is over ([`Step::Done`](super::Step::Done): the lock is
    /// held; 1205 or 1213: the DDL failed and its transaction is gone),
    /// then call the DDL again.
    Waiting,
}

impl<T> DdlStep<T> {
    /// The result, for a caller that cannot wait: a DDL that would wait is
    /// [`Error::TableInUse`].
    pub fn done(self, table: &str) -> Result<T> {
        match self {
            DdlStep::Done(t) => Ok(t),
            DdlStep::Waiting => Err(Error::TableInUse(table.to_string())),
        }
    }
}

impl Engine {
    /// The table lock a DDL statement on `table` needs, in session `s`'s
    /// transaction: `Ok(true)` once it holds the lock (taking it now if it
    /// can be had at once), `Ok(false)` while it waits for it. InnoDB
    /// Plugin 1.0 takes S for fast index creation and X to drop an index
    /// (`ha_innobase::add_index` and `final_drop_index`, through
    /// `row_merge_lock_table`); TRUNCATE, DROP TABLE and a copying ALTER
    /// take X here too, so that they wait for every transaction that has
    /// used the table, as the metadata locks of MySQL 5.5 and later make
    /// them wait (MySQL 5.1 had none, and InnoDB 1.0 took no table lock
    /// for them: a DROP beside an open transaction went ahead).
    pub(super) fn ddl_lock(&mut self, s: SessionId, table: &str, mode: TableMode) -> Result<bool> {
        self.check_idle(s)?;
        let id = self.table_id(table)?;
        if let Some(trx) = self.trx_id(s) {
            if self.locks.holds(trx, &Target::Table(id), Mode::Table(mode)) {
                return Ok(true);
            }
        }
        let request = Request::LockTable {
            table: table.to_string(),
            exclusive: mode == TableMode::X,
        };
        let r = self.run(s, request);
        match self.guard(r)? {
            Step::Done(_) => Ok(true),
            Step::Waiting => Ok(false),
        }
    }

    /// CREATE INDEX / ALTER TABLE ... ADD INDEX of one or more indexes,
    /// built from one scan of the table, in session `s` under an S lock on
    /// the table (see [`DdlStep`]): the build waits for every transaction
    /// that holds IX on it, so it reads no uncommitted change. `server` is
    /// the server layer's definition of the table with the new indexes
    /// (see [`dict::TableDef::server`]). A name the table has already is
    /// 1061 at once, before any lock.
    pub fn create_indexes(
        &mut self,
        s: SessionId,
        table: &str,
        defs: &[IndexDef],
        server: Vec<u8>,
    ) -> Result<DdlStep<IndexBuild>> {
        self.check_running()?;
        let id = self.table_id(table)?;
        let old = self.tables[&id].clone();
        let mut final_def = old.def.clone();
        for d in defs {
            if final_def
                .indexes
                .iter()
                .any(|x| x.name.eq_ignore_ascii_case(&d.name))
            {
                return Err(Error::DuplicateKeyName(d.name.clone()));
            }
            final_def.indexes.push(d.clone());
        }
        final_def.server = server;
        final_def.validate()?;
        // The new indexes only, as InnoDB checks the index it adds.
        Self::check_record_size(&final_def, 1 + old.def.indexes.len())?;
        let skip_lock = self
            .config
            .canaries
            .has(crate::Canary::IndexBuildSkipsTableLock);
        if !skip_lock && !self.ddl_lock(s, table, TableMode::S)? {
            return Ok(DdlStep::Waiting);
        }
        let r = self.create_indexes_inner(&old, final_def, defs.len());
        self.guard(r).map(DdlStep::Done)
    }

    fn create_indexes_inner(
        &mut self,
        old: &Table,
        final_def: dict::TableDef,
        n_new: usize,
    ) -> Result<IndexBuild> {
        self.pager.free_check()?;
        let first_new = old.def.indexes.len();
        // Step 1: the indexes, named as building, with empty trees.
        let mut building = final_def.clone();
        building.server = old.def.server.clone();
        for ix in &mut building.indexes[first_new..] {
            ix.name = format!("{BUILDING_PREFIX}{}", ix.name);
        }
        let mut st = old.storage();
        let layouts = Table::new(building.clone(), &{
            let mut s = st.clone();
            s.secondary.extend((0..n_new).map(|_| (0, 0)));
            s
        });
        let zip = building.row_format.zip_size()?;
        for i in first_new..building.indexes.len() {
            let index_id = self.next_sys_id(crate::trx::undo::TRX_SYS_NEXT_INDEX, true)?;
            let zf = zip
                .map(|_| layouts.secondary[i].index.zip_fields(0))
                .transpose()?;
            let root = btree::create(&mut self.pager, old.space, index_id, zf.as_ref())?;
            st.secondary.push((index_id, root));
        }
        self.dict_transaction(&[DictChange::Update(old.id, dict::encode_def(&building, &st))])?;
        let mut table = Table::new(building.clone(), &st);
        carry_over(old, &mut table, first_new, 0);
        self.tables.insert(old.id, table.clone());
        // Steps 2 to 4; a failure that leaves the engine running drops
        // what step 1 made.
        let result = self.build_indexes(&table, first_new).and_then(|stats| {
            // Step 4: the names, and the transaction readers must see.
            let trx = self.dict_transaction(&[DictChange::Update(
                old.id,
                dict::encode_def(&final_def, &st),
            )])?;
            Ok((stats, trx))
        });
        match result {
            Ok((stats, trx)) => {
                let mut done = Table::new(final_def, &st);
                carry_over(old, &mut done, first_new, trx);
                self.tables.insert(old.id, done);
                Ok(stats)
            }
            Err(e) if e.stops_engine() => Err(e),
            Err(e) => {
                if let Err(d) = self.drop_building(old.id) {
                    // The half-built indexes stay in the dictionary, named
                    // as building: only startup may drop them now.
                    self.halted
                        .get_or_insert_with(|| format!("dropping a failed index build: {d}"));
                }
                Err(e)
            }
        }
    }

    /// One scan of the clustered index; each new index's entries sorted and
    /// inserted in order.
    fn build_indexes(&mut self, table: &Table, first_new: usize) -> Result<IndexBuild> {
        let new = &table.secondary[first_new..];
        let mut sorters: Vec<merge::Sorter<'_>> = new
            .iter()
            .enumerate()
            .map(|(i, sec)| {
                merge::Sorter::new(
                    &sec.index.leaf,
                    sec.index.n_key,
                    self.config.sort_buffer_bytes,
                    format!("{}{}-{i}", merge::TEMP_PREFIX, sec.index.id),
                )
            })
            .collect();
        let mut stats = IndexBuild::default();
        let scanned = (|| -> Result<()> {
            let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
            while let Some(rec) = cur.next(&mut self.pager, &table.clustered)? {
                stats.rows_scanned += 1;
                // A delete-marked row is a committed delete purge has not
                // removed yet (no open transaction has changed the table).
                // It gets no entry (`row_merge_read_clustered_index`: "Skip
                // delete marked records"): a view old enough to see the row
                // is older than the index, which it may not read (1412), and
                // purge and a later insert of the same key find no entry to
                // remove or clear and go on. So a lock that would have
                // fallen on the entry falls on the next one (default seed
                // 3901: an UPDATE's gap lock through the new index, and the
                // insert it stops, as MariaDB 10.11.14 has them).
                if record::is_deleted(&rec) {
                    continue;
                }
                for (sec, sorter) in new.iter().zip(&mut sorters) {
                    let e = row::sec_entry(&mut self.pager, table, sec, &rec)?;
                    sorter.add(self.pager.fil.storage(), e)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = scanned {
            for sorter in sorters {
                self.remove_merge_file(sorter.abort());
            }
            return Err(e);
        }
        let mut sorters = sorters.into_iter();
        for sec in new {
            let sorter = sorters.next().expect("one sorter per new index");
            let mut prev: Option<Vec<u8>> = None;
            let n_unique = sec.def.columns.len();
            let mut entries = 0;
            let pager = &mut self.pager;
            let (r, file) = sorter.finish(|e| {
                // No entry is delete-marked (the scan left those rows out).
                if sec.def.unique {
                    if let Some(p) = &prev {
                        if unique_clash(sec, p, e, n_unique)? {
                            return Err(duplicate(table, sec, e));
                        }
                    }
                    prev = Some(e.to_vec());
                }
                pager.free_check()?;
                btree::insert(pager, &sec.index, e)?;
                entries += 1;
                Ok(())
            });
            let removed = match file {
                Some(name) => self
                    .pager
                    .fil
                    .storage()
                    .remove(&name)
                    .map_err(|e| Error::io("remove", &name, e)),
                None => Ok(()),
            };
            if r.is_err() {
                // The later indexes' sorts are given up too.
                for rest in sorters.by_ref() {
                    self.remove_merge_file(rest.abort());
                }
            }
            let s = r?;
            removed?;
            stats.entries += entries;
            stats.runs += s.runs;
            stats.bytes_spilled += s.bytes_spilled;
            if s.bytes_spilled > 0 {
                self.stats.merge_runs_spilled += s.runs;
            }
        }
        Ok(stats)
    }

    /// Removes a merge file a failed build leaves; a failure to is left
    /// for startup, which removes stale merge files.
    fn remove_merge_file(&mut self, name: Option<String>) {
        if let Some(n) = name {
            let _ = self.pager.fil.storage().remove(&n);
        }
    }

    /// Drops the indexes of table `id` still named as building: one
    /// dictionary transaction, then their pages are freed.
    pub(super) fn drop_building(&mut self, id: u64) -> Result<()> {
        let t = self.tables[&id].clone();
        let keep: Vec<usize> = (0..t.def.indexes.len())
            .filter(|&i| !t.def.indexes[i].name.starts_with(BUILDING_PREFIX))
            .collect();
        if keep.len() == t.def.indexes.len() {
            return Ok(());
        }
        let (def, st) = without_indexes(&t, &keep);
        self.dict_transaction(&[DictChange::Update(id, dict::encode_def(&def, &st))])?;
        let mut table = Table::new(def, &st);
        for (n, &i) in keep.iter().enumerate() {
            table.secondary[n].created_by = t.secondary[i].created_by;
        }
        table.next_row_id = t.next_row_id;
        self.tables.insert(id, table);
        for (i, sec) in t.secondary.iter().enumerate() {
            if !keep.contains(&i) {
                btree::free_tree(&mut self.pager, &sec.index)?;
            }
        }
        Ok(())
    }

    /// DROP INDEX: a dictionary change, then the index's pages freed (the
    /// file keeps its size), in session `s` under an X lock on the table
    /// (see [`DdlStep`]). `server` as for
    /// [`create_indexes`](Self::create_indexes). An index the table lacks
    /// is 1091 at once, before any lock.
    pub fn drop_index(
        &mut self,
        s: SessionId,
        table: &str,
        name: &str,
        server: Vec<u8>,
    ) -> Result<DdlStep<()>> {
        self.check_running()?;
        let id = self.table_id(table)?;
        let t = self.tables[&id].clone();
        let Some(pos) = t
            .def
            .indexes
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(name))
        else {
            return Err(Error::CantDropKey(name.to_string()));
        };
        if self.foreign_key_checks(s) && self.index_needed(id, pos) {
            return Err(Error::IndexNeededByForeignKey(
                t.def.indexes[pos].name.clone(),
            ));
        }
        if !self.ddl_lock(s, table, TableMode::X)? {
            return Ok(DdlStep::Waiting);
        }
        let r = (|| {
            self.pager.free_check()?;
            let keep: Vec<usize> = (0..t.def.indexes.len()).filter(|&i| i != pos).collect();
            let (mut def, st) = without_indexes(&t, &keep);
            def.server = server;
            self.dict_transaction(&[DictChange::Update(id, dict::encode_def(&def, &st))])?;
            let mut table = Table::new(def, &st);
            for (n, &i) in keep.iter().enumerate() {
                table.secondary[n].created_by = t.secondary[i].created_by;
            }
            table.next_row_id = t.next_row_id;
            self.tables.insert(id, table);
            btree::free_tree(&mut self.pager, &t.secondary[pos].index)
        })();
        self.guard(r).map(DdlStep::Done)
    }

    /// At startup: drops the indexes a crash left half built, in every
    /// table (InnoDB's `row_merge_drop_temp_indexes`).
    pub(super) fn drop_interrupted_builds(&mut self) -> Result<Vec<String>> {
        let mut dropped = Vec::new();
        if self
            .config
            .canaries
            .has(crate::Canary::SkipIndexBuildRollback)
        {
            return Ok(dropped);
        }
        let ids: Vec<u64> = self
            .tables
            .values()
            .filter(|t| {
                t.def
                    .indexes
                    .iter()
                    .any(|x| x.name.starts_with(BUILDING_PREFIX))
            })
            .map(|t| t.id)
            .collect();
        for id in ids {
            let t = &self.tables[&id];
            for ix in &t.def.indexes {
                if let Some(n) = ix.name.strip_prefix(BUILDING_PREFIX) {
                    dropped.push(format!("{}.{n}", t.name()));
                }
            }
            self.drop_building(id)?;
        }
        Ok(dropped)
    }
}

/// What a table descriptor rebuilt from its definition must keep of the
/// one it replaces: the next hidden row id, and for each secondary index
/// older than `first_new` the transaction that made it usable (the new
/// ones get `created_by`).
fn carry_over(old: &Table, new: &mut Table, first_new: usize, created_by: u64) {
    new.next_row_id = old.next_row_id;
    for (i, sec) in new.secondary.iter_mut().enumerate() {
        sec.created_by = if i < first_new {
            old.secondary[i].created_by
        } else {
            created_by
        };
    }
}

/// A table's definition and storage with only the secondary indexes at
/// positions `keep`.
fn without_indexes(t: &Table, keep: &[usize]) -> (dict::TableDef, TableStorage) {
    let mut def = t.def.clone();
    def.indexes = keep.iter().map(|&i| t.def.indexes[i].clone()).collect();
    let mut st = t.storage();
    st.secondary = keep.iter().map(|&i| st.secondary[i]).collect();
    (def, st)
}

/// Whether two entries of a unique index (in order) have the same values
/// in the index's own columns, none of them NULL.
fn unique_clash(sec: &dict::Secondary, a: &[u8], b: &[u8], n_unique: usize) -> Result<bool> {
    let ka = btree::key_of(&sec.index, 0, a)?;
    if ka[..n_unique].iter().any(Option::is_none) {
        return Ok(false);
    }
    let kb = btree::key_of(&sec.index, 0, b)?;
    Ok(btree::keys_equal(
        &sec.index,
        &ka[..n_unique],
        &kb[..n_unique],
    ))
}

/// 1062 for an entry of a unique index being built.
fn duplicate(table: &Table, sec: &dict::Secondary, e: &[u8]) -> Error {
    let key = btree::key_of(&sec.index, 0, e).unwrap_or_default();
    // The key's fields are the index's columns first: place them at their
    // column positions for the shared formatter.
    let mut stored = vec![None; table.def.columns.len()];
    for (&c, v) in sec.def.columns.iter().zip(&key) {
        stored[c] = v.clone();
    }
    let text = crate::row::write::format_values(table, &sec.def.columns, &stored);
    Error::DuplicateKey {
        key: text,
        index: sec.def.name.trim_start_matches(BUILDING_PREFIX).to_string(),
    }
}
