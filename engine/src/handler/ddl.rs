//! CREATE TABLE and DROP TABLE as transactions on the dictionary. Mirrors
//! InnoDB's `row_create_table_for_mysql` and `row_drop_table_for_mysql`.
//!
//! CREATE TABLE creates the `.ibd` file (logging FILE_CREATE first, so
//! recovery knows the file), formats its header and trees, and inserts the
//! definition into SYS_TABLES in a transaction whose commit is synced. A
//! crash before that commit leaves a file no committed definition names,
//! which startup removes. DROP TABLE delete-marks the definition, commits
//! (synced), and only then logs FILE_DELETE and removes the file; a crash
//! in between leaves an orphan file for startup to remove.
//!
//! With `innodb_file_per_table` off a new table's trees go into the system
//! tablespace instead (`row_create_table_for_mysql` with space 0): no
//! file, and DROP frees the trees' pages (their off-page columns first)
//! to the system tablespace's free list after the dictionary commit, so
//! `ibdata1` never shrinks. A crash between that commit and the last free
//! leaks the pages not yet freed; nothing names them, so nothing reads
//! them.

use super::index::DdlStep;
use super::{Engine, SessionId};
use crate::btree;
use crate::dict::{self, Table, TableDef, TableStorage, SYS_TABLES_ID};
use crate::error::{Error, Result};
use crate::fil::SYSTEM_SPACE;
use crate::fsp;
use crate::lock::TableMode;
use crate::mtr::{FileOp, Mtr};
use crate::page::{self, PageId};
use crate::record::Value;
use crate::row::write::{self, Outcome};
use crate::trx::undo::{TRX_SYS_NEXT_INDEX, TRX_SYS_NEXT_SPACE, TRX_SYS_NEXT_TABLE, TRX_SYS_PAGE};
use crate::trx::Isolation;

/// Pages a new tablespace starts with.
pub const INITIAL_SPACE_PAGES: u32 = 4;

impl Engine {
    /// Allocates the next id of a kind from the transaction system header.
    pub(super) fn next_sys_id(&mut self, offset: usize, wide: bool) -> Result<u64> {
        let mut mtr = Mtr::new();
        let f = mtr.fix(&mut self.pager, PageId::new(0, TRX_SYS_PAGE))?;
        let p = self.pager.page(f);
        let cur = if wide {
            page::get_u64(p, offset)
        } else {
            page::get_u32(p, offset) as u64
        };
        if wide {
            mtr.write_u64(&mut self.pager, f, offset, cur + 1)?;
        } else {
            mtr.write_u32(&mut self.pager, f, offset, (cur + 1) as u32)?;
        }
        mtr.commit(&mut self.pager)?;
        Ok(cur)
    }

    /// CREATE TABLE of a definition with FOREIGN KEY constraints, checked
    /// as InnoDB checks them (errno 150; `foreign_key_checks` off accepts a
    /// parent that does not exist yet).
    pub fn create_table_checked(&mut self, def: TableDef, foreign_key_checks: bool) -> Result<()> {
        self.check_running()?;
        def.validate()?;
        self.check_foreign_defs(&def, foreign_key_checks)?;
        self.create_table(def)
    }

    /// CREATE TABLE.
    pub fn create_table(&mut self, def: TableDef) -> Result<()> {
        self.check_running()?;
        def.validate()?;
        Self::check_record_size(&def, 0)?;
        if self.names.keys().any(|n| n.eq_ignore_ascii_case(&def.name)) {
            return Err(Error::TableExists(def.name.clone()));
        }
        let r = self.create_table_inner(def);
        self.guard(r)
    }

    /// Refuses a Barracuda table with an index whose records could be too
    /// big for its pages ([`dict::too_big_for_tree`]; `skip` as there).
    pub(crate) fn check_record_size(def: &TableDef, skip: usize) -> Result<()> {
        let barracuda = matches!(
            def.row_format,
            crate::RowFormat::Dynamic | crate::RowFormat::Compressed { .. }
        );
        match dict::too_big_for_tree(def, skip).filter(|_| barracuda) {
            Some((index, half_page)) => Err(Error::IndexTooBig { index, half_page }),
            None => Ok(()),
        }
    }

    fn create_table_inner(&mut self, def: TableDef) -> Result<()> {
        if !self.config.file_per_table {
            self.pager.free_check()?;
            let table_id = self.next_sys_id(TRX_SYS_NEXT_TABLE, true)?;
            let st = self.build_in_system(&def, table_id)?;
            let row = DictChange::Insert(table_id, def.name.clone(), dict::encode_def(&def, &st));
            if let Err(e) = self.dict_transaction(&[row]) {
                if !e.stops_engine() {
                    self.free_trees(&Table::new(def, &st))?;
                }
                return Err(e);
            }
            let table = Table::new(def, &st);
            self.names.insert(table.name().to_string(), table.id);
            self.tables.insert(table.id, table);
            return Ok(());
        }
        let file = format!("{}.ibd", def.name);
        if self
            .pager
            .fil
            .storage()
            .exists(&file)
            .map_err(|e| Error::io("stat", &file, e))?
        {
            return Err(Error::CantCreateTable {
                table: def.name.clone(),
                reason: format!("tablespace file '{file}' exists (error 1813)"),
            });
        }
        // A bad KEY_BLOCK_SIZE is refused before anything is written.
        def.row_format.zip_size()?;
        self.pager.free_check()?;
        let table_id = self.next_sys_id(TRX_SYS_NEXT_TABLE, true)?;
        let (space, st) = self.build_space(&def, table_id, None, |_| file.clone())?;
        // The definition row, in its own transaction.
        let row = DictChange::Insert(table_id, def.name.clone(), dict::encode_def(&def, &st));
        if let Err(e) = self.dict_transaction(&[row]) {
            if !e.stops_engine() {
                self.drop_space(space, &file)?;
            }
            return Err(e);
        }
        let table = Table::new(def, &st);
        self.names.insert(table.name().to_string(), table.id);
        self.tables.insert(table.id, table);
        Ok(())
    }

    /// Creates a new tablespace for `def`: a new space id (`reuse`: that
    /// one, for the `truncate-reuses-space-id` canary only), its file named
    /// `file_name(space)` and logged by FILE_CREATE first so recovery knows
    /// it, its header and empty trees with new index ids. After a failure that does not stop the engine the file
    /// is gone again; after one that does, recovery removes it.
    fn build_space(
        &mut self,
        def: &TableDef,
        table_id: u64,
        reuse: Option<u32>,
        file_name: impl Fn(u32) -> String,
    ) -> Result<(u32, TableStorage)> {
        let zip_size = def.row_format.zip_size()?;
        let space = match reuse {
            Some(s) => s,
            None => self.next_sys_id(TRX_SYS_NEXT_SPACE, false)? as u32,
        };
        let file = file_name(space);
        let mut index_ids = Vec::new();
        for _ in 0..=def.indexes.len() {
            index_ids.push(self.next_sys_id(TRX_SYS_NEXT_INDEX, true)?);
        }
        let mut mtr = Mtr::new();
        mtr.file_op(FileOp::Create {
            space,
            name: &file,
            zip_size,
        });
        mtr.commit(&mut self.pager)?;
        self.pager.fil.create_sized(space, &file, zip_size)?;
        // The indexes' layouts, for their compressed roots.
        let layouts = dict::Table::new(
            def.clone(),
            &TableStorage {
                id: table_id,
                space,
                clustered: (index_ids[0], 0),
                secondary: index_ids[1..].iter().map(|&id| (id, 0)).collect(),
            },
        );
        let zip_fields = |ix: &btree::Index| -> Result<Option<crate::page::zip::ZipFields>> {
            zip_size.map(|_| ix.zip_fields(0)).transpose()
        };
        let result: Result<TableStorage> = (|| {
            fsp::create_space(
                &mut self.pager,
                space,
                INITIAL_SPACE_PAGES,
                1,
                fsp::flags_for(zip_size),
            )?;
            // Recovery knows a file's space id from its page 0, or from a
            // FILE_CREATE after the checkpoint. A checkpoint may pass that
            // record while page 0 is still only in the buffer pool, so
            // write page 0 now, as InnoDB's
            // fil_create_new_single_table_tablespace does.
            let f = self.pager.fix(PageId::new(space, 0))?;
            self.pager.unfix(f);
            self.pager.flush_frames(&[f])?;
            let zf = zip_fields(&layouts.clustered)?;
            let croot = btree::create(&mut self.pager, space, index_ids[0], zf.as_ref())?;
            let mut secondary = Vec::new();
            for (&id, sec) in index_ids[1..].iter().zip(&layouts.secondary) {
                let zf = zip_fields(&sec.index)?;
                secondary.push((id, btree::create(&mut self.pager, space, id, zf.as_ref())?));
            }
            Ok(TableStorage {
                id: table_id,
                space,
                clustered: (index_ids[0], croot),
                secondary,
            })
        })();
        let st = match result {
            Ok(st) => st,
            Err(e) => {
                // After an engine-stopping error only recovery may touch the
                // pages; it removes the orphan file.
                if !e.stops_engine() {
                    self.drop_space(space, &file)?;
                }
                return Err(e);
            }
        };
        Ok((space, st))
    }

    /// Empty trees for `def` in the system tablespace, with new index
    /// ids (`innodb_file_per_table` off). Compressed pages need a space of
    /// their own, so a compressed definition is refused. After a failure
    /// that does not stop the engine the trees built so far are freed.
    fn build_in_system(&mut self, def: &TableDef, table_id: u64) -> Result<TableStorage> {
        if def.row_format.zip_size()?.is_some() {
            return Err(Error::CantCreateTable {
                table: def.name.clone(),
                reason: "ROW_FORMAT=COMPRESSED requires innodb_file_per_table".into(),
            });
        }
        let mut index_ids = Vec::new();
        for _ in 0..=def.indexes.len() {
            index_ids.push(self.next_sys_id(TRX_SYS_NEXT_INDEX, true)?);
        }
        let mut built: Vec<(u64, u32)> = Vec::new();
        let mut result = Ok(());
        for &id in &index_ids {
            match btree::create(&mut self.pager, SYSTEM_SPACE, id, None) {
                Ok(root) => built.push((id, root)),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if let Err(e) = result {
            if !e.stops_engine() {
                // The indexes' descriptors, to free the roots built.
                let layouts = dict::Table::new(
                    def.clone(),
                    &TableStorage {
                        id: table_id,
                        space: SYSTEM_SPACE,
                        clustered: (index_ids[0], 0),
                        secondary: index_ids[1..].iter().map(|&id| (id, 0)).collect(),
                    },
                );
                for (i, &(_, root)) in built.iter().enumerate() {
                    let mut ix = if i == 0 {
                        layouts.clustered.clone()
                    } else {
                        layouts.secondary[i - 1].index.clone()
                    };
                    ix.root = root;
                    btree::free_tree(&mut self.pager, &ix)?;
                }
            }
            return Err(e);
        }
        Ok(TableStorage {
            id: table_id,
            space: SYSTEM_SPACE,
            clustered: built[0],
            secondary: built[1..].to_vec(),
        })
    }

    /// Frees every page of a table's trees in the system tablespace: the
    /// off-page columns of its clustered records first, while the leaves
    /// that point to them can still be read, then each index's pages. The
    /// table must be out of the dictionary (or never in it): its undo
    /// records are then skipped by purge, which leaves the chains of old
    /// versions it would have freed behind, unreachable.
    fn free_trees(&mut self, table: &Table) -> Result<()> {
        let mut cur = btree::Cursor::new(
            btree::Bound::Unbounded,
            btree::Bound::Unbounded,
            btree::Direction::Forward,
        );
        while let Some(rec) = cur.next(&mut self.pager, &table.clustered)? {
            for rep in crate::row::reps_of(&table.clustered.leaf, &rec)? {
                if let crate::row::Rep::External { reference, .. } = rep {
                    let mut mtr = Mtr::new();
                    crate::blob::free_in(&mut mtr, &mut self.pager, &reference)?;
                    mtr.commit(&mut self.pager)?;
                }
            }
        }
        btree::free_tree(&mut self.pager, &table.clustered)?;
        for sec in &table.secondary {
            btree::free_tree(&mut self.pager, &sec.index)?;
        }
        Ok(())
    }

    /// Logs FILE_DELETE, forgets a space's pages and removes its file.
    pub(crate) fn drop_space(&mut self, space: u32, file: &str) -> Result<()> {
        let mut mtr = Mtr::new();
        mtr.file_op(FileOp::Delete { space, name: file });
        let lsn = mtr.commit(&mut self.pager)?;
        self.pager.log.write_up_to(lsn, true)?;
        self.pager.discard_space(space);
        self.pager.fil.delete(space)
    }

    /// DROP TABLE, in session `s` under an X lock on the table (see
    /// [`DdlStep`]).
    pub fn drop_table(&mut self, s: SessionId, name: &str) -> Result<DdlStep<()>> {
        self.drop_table_of(s, name, None)
    }

    /// DROP TABLE as DROP DATABASE does it, table by table: a table that
    /// only tables whose names start with `db_prefix` (the same
    /// database's) refer to may go, as `row_drop_table_for_mysql` lets a
    /// parent go when `drop_db` is set and the child is in the same
    /// database (`dict_tables_have_same_db`).
    pub fn drop_table_of_database(
        &mut self,
        s: SessionId,
        name: &str,
        db_prefix: &str,
    ) -> Result<DdlStep<()>> {
        self.drop_table_of(s, name, Some(db_prefix))
    }

    fn drop_table_of(
        &mut self,
        s: SessionId,
        name: &str,
        db_prefix: Option<&str>,
    ) -> Result<DdlStep<()>> {
        if !self.ddl_lock(s, name, TableMode::X)? {
            return Ok(DdlStep::Waiting);
        }
        let id = self.table_id(name)?;
        if self.foreign_key_checks(s) && self.referenced_from_outside(id, db_prefix) {
            return Err(Error::ReferencedTable(name.to_string()));
        }
        let r = self.drop_table_inner(id);
        self.guard(r).map(DdlStep::Done)
    }

    fn drop_table_inner(&mut self, id: u64) -> Result<()> {
        self.pager.free_check()?;
        self.dict_transaction(&[DictChange::Delete(id)])?;
        let table = self.tables.remove(&id).expect("table exists");
        self.names.remove(table.name());
        self.drop_placement(&table)
    }

    /// Frees what held a table no committed definition names any more:
    /// its file, or its trees in the system tablespace.
    fn drop_placement(&mut self, table: &Table) -> Result<()> {
        if table.space == SYSTEM_SPACE {
            self.free_trees(table)
        } else {
            self.drop_space(table.space, &format!("{}.ibd", table.name()))
        }
    }

    /// TRUNCATE TABLE, as InnoDB's `row_truncate_table_for_mysql` does it
    /// for a table in its own file: a new tablespace (a new space id, so
    /// no redo of the old pages can ever apply to the new file) with empty
    /// trees, built under a temporary name; one dictionary transaction
    /// replaces the definition (a new table id) and commits, synced: that
    /// is the moment the table is empty. Then the old file is deleted and
    /// the new one takes its name. A crash before the commit leaves the
    /// old table (startup removes the new file, which no committed
    /// definition uses); after it, the new one (startup removes the old
    /// file and finishes the rename, see `recovery::remove_orphans`).
    ///
    /// It runs in session `s` under an X lock on the table (see
    /// [`DdlStep`]).
    pub fn truncate_table(&mut self, s: SessionId, name: &str) -> Result<DdlStep<()>> {
        let id = self.table_id(name)?;
        if self.foreign_key_checks(s) && self.referenced_by_other(id) {
            // InnoDB will not truncate a referenced table by recreating it;
            // MySQL then deletes its rows one by one.
            return Err(Error::ReferencedTable(name.to_string()));
        }
        if !self.ddl_lock(s, name, TableMode::X)? {
            return Ok(DdlStep::Waiting);
        }
        let r = self.truncate_table_inner(id);
        self.guard(r).map(DdlStep::Done)
    }

    fn truncate_table_inner(&mut self, id: u64) -> Result<()> {
        let old = self.tables[&id].clone();
        let def = old.def.clone();
        let file = format!("{}.ibd", def.name);
        self.pager.free_check()?;
        let table_id = self.next_sys_id(TRX_SYS_NEXT_TABLE, true)?;
        if self
            .config
            .canaries
            .has(crate::Canary::TruncateReusesSpaceId)
        {
            // The planted bug: the old file goes first, the new one takes
            // its space id and name, and only then does the dictionary
            // change.
            self.drop_space(old.space, &file)?;
            let (_, st) = self.build_space(&def, table_id, Some(old.space), |_| file.clone())?;
            let row = DictChange::Insert(table_id, def.name.clone(), dict::encode_def(&def, &st));
            self.dict_transaction(&[DictChange::Delete(id), row])?;
            self.replace_table(id, def, &st);
            return Ok(());
        }
        // A table keeps its place: in its own file, or in the system
        // tablespace, where InnoDB truncates in place and the space stays
        // with InnoDB.
        let system = old.space == SYSTEM_SPACE;
        self.swap_in_new_space(&old, def, table_id, false, system, None)
            .map(|_| ())
    }

    /// ALTER TABLE by copying (and OPTIMIZE TABLE), as MySQL 5.1's
    /// `mysql_alter_table` with `copy_data_between_tables` does it, made
    /// crash-safe the way [`truncate_table`](Self::truncate_table) is: the
    /// new definition `def` (its indexes, row format or primary key may
    /// differ, and whether a column takes NULL; its columns' names and
    /// types must be the table's) gets a new tablespace under
    /// a temporary name, every row is copied into it (committed every
    /// 10,000 rows, into a table no committed definition names yet, so a
    /// crash leaves an orphan file startup removes), and one dictionary
    /// transaction swaps the definitions. Returns the rows copied. It runs
    /// in session `s` under an X lock on the table (see [`DdlStep`]), so
    /// no transaction that changed the old table is still open: the copy
    /// reads the newest versions, which are all committed.
    pub fn rebuild_table(
        &mut self,
        s: SessionId,
        name: &str,
        def: TableDef,
    ) -> Result<DdlStep<u64>> {
        self.check_running()?;
        let id = self.table_id(name)?;
        def.validate()?;
        Self::check_record_size(&def, 0)?;
        let old = self.tables[&id].clone();
        let same_columns = def.columns.len() == old.def.columns.len()
            && def
                .columns
                .iter()
                .zip(&old.def.columns)
                .all(|(a, b)| a.name == b.name && a.ty == b.ty);
        if def.name != old.def.name || !same_columns {
            return Err(Error::InvalidArgument(
                "a rebuild keeps the table's name and columns (NULL may change)".into(),
            ));
        }
        self.rebuild(s, name, &old, def, None)
    }

    /// A rebuild's work once its definition is checked: the X lock, then
    /// the copy into a new placement and the swap.
    fn rebuild(
        &mut self,
        s: SessionId,
        name: &str,
        old: &Table,
        def: TableDef,
        map: Option<RowMap<'_>>,
    ) -> Result<DdlStep<u64>> {
        let checks = self.foreign_key_checks(s);
        self.check_foreign_defs(&def, checks)?;
        if checks {
            self.check_referencing_defs(old.id, &def, checks)?;
        }
        if !self.ddl_lock(s, name, TableMode::X)? {
            return Ok(DdlStep::Waiting);
        }
        if checks {
            let r = self.check_new_constraints(old.id, &old.def, &def);
            self.guard(r)?;
        }
        let r = (|| {
            self.pager.free_check()?;
            let table_id = self.next_sys_id(TRX_SYS_NEXT_TABLE, true)?;
            // A rebuilt table goes where innodb_file_per_table says now.
            let system = !self.config.file_per_table;
            self.swap_in_new_space(old, def, table_id, true, system, map)
        })();
        if r.is_ok() {
            self.stats.tables_rebuilt += 1;
        }
        self.guard(r).map(DdlStep::Done)
    }

    /// [`rebuild_table`](Self::rebuild_table) into a definition whose
    /// columns differ (ALTER TABLE ADD, DROP, CHANGE, MODIFY COLUMN): each
    /// old row goes through `map`, which gives the new row (one value per
    /// new column) or the error that stops the rebuild, which then leaves
    /// the table as it was. The same crash safety: the new table is in a
    /// file no committed definition names until the one dictionary
    /// transaction that swaps them.
    pub fn rebuild_table_mapped(
        &mut self,
        s: SessionId,
        name: &str,
        def: TableDef,
        map: RowMap<'_>,
    ) -> Result<DdlStep<u64>> {
        self.check_running()?;
        let id = self.table_id(name)?;
        def.validate()?;
        Self::check_record_size(&def, 0)?;
        let old = self.tables[&id].clone();
        if def.name != old.def.name {
            return Err(Error::InvalidArgument(
                "a rebuild keeps the table's name".into(),
            ));
        }
        self.rebuild(s, name, &old, def, Some(map))
    }

    /// Replaces the server layer's definition of a table and nothing else
    /// (one dictionary transaction, under an X lock on the table): what
    /// MySQL 5.1 does for an ALTER TABLE it judges to change only its
    /// `.frm`, such as renaming a column with InnoDB Plugin 1.0.6, which
    /// then does not rename the column in its own dictionary (MySQL bug
    /// 44571, fixed in 1.0.7 by refusing the fast path for a rename).
    pub fn set_server_definition(
        &mut self,
        s: SessionId,
        name: &str,
        server: Vec<u8>,
    ) -> Result<DdlStep<()>> {
        self.check_running()?;
        let id = self.table_id(name)?;
        let old = self.tables[&id].clone();
        let mut def = old.def.clone();
        def.server = server;
        def.validate()?;
        if !self.ddl_lock(s, name, TableMode::X)? {
            return Ok(DdlStep::Waiting);
        }
        let st = old.storage();
        let r = self.dict_transaction(&[DictChange::Update(id, dict::encode_def(&def, &st))]);
        self.guard(r)?;
        self.replace_table(id, def, &st);
        if let Some(t) = self.tables.get_mut(&id) {
            t.next_row_id = old.next_row_id;
        }
        Ok(DdlStep::Done(()))
    }

    /// RENAME TABLE, as `row_rename_table_for_mysql` does it, in session
    /// `s` under an X lock on the table (see [`DdlStep`]): one dictionary
    /// transaction gives the definition its new name (the same table id,
    /// the same trees), committed and synced; that is the moment of the
    /// rename. Then a table in its own file has the file take the name; a
    /// crash between the two leaves the file under the old name, and
    /// startup finishes the rename (`recovery::remove_orphans`), as after
    /// a TRUNCATE. A name that is taken is [`Error::TableExists`].
    pub fn rename_table(&mut self, s: SessionId, from: &str, to: &str) -> Result<DdlStep<()>> {
        self.check_running()?;
        let id = self.table_id(from)?;
        if self.names.contains_key(to) {
            return Err(Error::TableExists(to.to_string()));
        }
        let old = self.tables[&id].clone();
        let mut def = old.def.clone();
        def.name = to.to_string();
        def.validate()?;
        if !self.ddl_lock(s, from, TableMode::X)? {
            return Ok(DdlStep::Waiting);
        }
        self.pager.free_check()?;
        let st = old.storage();
        // The constraints that name the table as their parent follow it,
        // in the same dictionary transaction (row_rename_table_for_mysql
        // updates SYS_FOREIGN's REF_NAME).
        for fk in &mut def.foreign {
            if fk.parent == from {
                fk.parent = to.to_string();
            }
        }
        let mut changes = vec![DictChange::Rename(
            id,
            to.to_string(),
            dict::encode_def(&def, &st),
        )];
        let mut children = Vec::new();
        for t in self.tables.values().filter(|t| t.id != id) {
            if t.def.foreign.iter().any(|fk| fk.parent == from) {
                let mut cdef = t.def.clone();
                for fk in &mut cdef.foreign {
                    if fk.parent == from {
                        fk.parent = to.to_string();
                    }
                }
                let cst = t.storage();
                changes.push(DictChange::Update(t.id, dict::encode_def(&cdef, &cst)));
                children.push((t.clone(), cdef, cst));
            }
        }
        let r = self.dict_transaction(&changes);
        self.guard(r)?;
        for (was, cdef, cst) in children {
            self.replace_table(was.id, cdef, &cst);
            if let Some(t) = self.tables.get_mut(&was.id) {
                t.next_row_id = was.next_row_id;
                for (new, old) in t.secondary.iter_mut().zip(&was.secondary) {
                    new.created_by = old.created_by;
                }
            }
        }
        self.names.remove(from);
        self.replace_table(id, def, &st);
        if let Some(t) = self.tables.get_mut(&id) {
            t.next_row_id = old.next_row_id;
        }
        if old.space != SYSTEM_SPACE {
            // Committed: a rename the disk refuses leaves the file under
            // its old name until startup; only an error that stops the
            // engine counts.
            if let Err(e) = self.pager.fil.rename(old.space, &format!("{to}.ibd")) {
                if e.stops_engine() {
                    return Err(e);
                }
            }
        }
        Ok(DdlStep::Done(()))
    }

    /// The new table of a TRUNCATE or a copying rebuild: built in a new
    /// space under a temporary name (filled from `old` if `copy`), swapped
    /// in by one dictionary transaction, then the old file deleted and the
    /// new one renamed to the table's name (startup finishes a rename a
    /// crash cut short). Returns the rows copied.
    fn swap_in_new_space(
        &mut self,
        old: &Table,
        def: TableDef,
        table_id: u64,
        copy: bool,
        system: bool,
        map: Option<RowMap<'_>>,
    ) -> Result<u64> {
        if system {
            return self.swap_in_system(old, def, table_id, copy, map);
        }
        let file = format!("{}.ibd", def.name);
        let name = def.name.clone();
        let (space, st) = self.build_space(&def, table_id, None, |s| temporary_file(&name, s))?;
        let tmp = temporary_file(&name, space);
        let row = DictChange::Insert(table_id, def.name.clone(), dict::encode_def(&def, &st));
        let copied = if copy {
            let new = Table::new(def.clone(), &st);
            self.copy_rows(old, &new, map)
        } else {
            Ok((0, 0))
        };
        let (rows, next_row_id) = match copied.and_then(|c| {
            self.dict_transaction(&[DictChange::Delete(old.id), row])
                .map(|_| c)
        }) {
            Ok(c) => c,
            Err(e) => {
                if !e.stops_engine() {
                    self.drop_space(space, &tmp)?;
                }
                return Err(e);
            }
        };
        self.replace_table(old.id, def, &st);
        if let Some(t) = self.tables.get_mut(&table_id) {
            t.next_row_id = t.next_row_id.max(next_row_id);
        }
        self.drop_placement(old)?;
        // The statement has committed: a rename the disk refuses (full)
        // leaves the table working under its temporary name, and startup
        // finishes the rename; only an error that stops the engine counts.
        match self.pager.fil.rename(space, &file) {
            Err(e) if e.stops_engine() => Err(e),
            _ => Ok(rows),
        }
    }

    /// [`swap_in_new_space`](Self::swap_in_new_space) into the system
    /// tablespace: the new trees there (filled from `old` if `copy`), one
    /// dictionary transaction, then the old placement freed. A crash
    /// before the commit leaks the new trees' pages, after it the old
    /// ones'; the committed definition always names whole trees.
    fn swap_in_system(
        &mut self,
        old: &Table,
        def: TableDef,
        table_id: u64,
        copy: bool,
        map: Option<RowMap<'_>>,
    ) -> Result<u64> {
        let st = self.build_in_system(&def, table_id)?;
        let row = DictChange::Insert(table_id, def.name.clone(), dict::encode_def(&def, &st));
        let new = Table::new(def.clone(), &st);
        let copied = if copy {
            self.copy_rows(old, &new, map)
        } else {
            Ok((0, 0))
        };
        let (rows, next_row_id) = match copied.and_then(|c| {
            self.dict_transaction(&[DictChange::Delete(old.id), row])
                .map(|_| c)
        }) {
            Ok(c) => c,
            Err(e) => {
                if !e.stops_engine() {
                    self.free_trees(&new)?;
                }
                return Err(e);
            }
        };
        self.replace_table(old.id, def, &st);
        if let Some(t) = self.tables.get_mut(&table_id) {
            t.next_row_id = t.next_row_id.max(next_row_id);
        }
        self.drop_placement(old)?;
        Ok(rows)
    }

    /// Copies every row of `old` into `new` (not yet in the dictionary),
    /// in transactions of 10,000 rows. Returns the rows copied and the next
    /// hidden row id of `new`.
    fn copy_rows(
        &mut self,
        old: &Table,
        new: &Table,
        mut map: Option<RowMap<'_>>,
    ) -> Result<(u64, u64)> {
        const ROWS_PER_COMMIT: u64 = 10_000;
        let mut cur = btree::Cursor::new(
            btree::Bound::Unbounded,
            btree::Bound::Unbounded,
            btree::Direction::Forward,
        );
        let mut copied = 0u64;
        let mut next_row_id = 1u64;
        let mut trx: Option<crate::trx::Trx> = None;
        let mut locks = crate::lock::LockSys::new();
        let result = (|| -> Result<()> {
            while let Some(rec) = cur.next(&mut self.pager, &old.clustered)? {
                if crate::record::is_deleted(&rec) {
                    continue;
                }
                let mut values = crate::row::decode_row(&mut self.pager, old, &rec)?;
                if let Some(map) = map.as_mut() {
                    values = map(values)?;
                }
                let cols = crate::row::stored_columns(new, &values)?;
                if trx.is_none() {
                    let now = self.pager.now_us();
                    trx = Some(
                        self.sys
                            .begin(&mut self.pager, Isolation::RepeatableRead, now)?,
                    );
                }
                let t = trx.as_mut().expect("begun above");
                let row_id = new.def.primary_key.is_empty().then(|| {
                    next_row_id += 1;
                    next_row_id - 1
                });
                let mut ctx = crate::row::locking::LockCtx {
                    locks: &mut locks,
                    trx: t.id,
                    now_us: 0,
                    gaps: false,
                    read_committed: false,
                    active: Vec::new(),
                    skip_locked: false,
                    skipped: false,
                    semi: None,
                    semi_rows: Vec::new(),
                    resume: None,
                    row_by_row: false,
                    index_condition: false,
                    index_only: false,
                    yield_waits: false,
                    yielded: false,
                    duplicates: false,
                };
                self.pager.free_check()?;
                if let Outcome::Wait(_) = write::insert(
                    &mut self.pager,
                    &mut self.sys,
                    new,
                    t,
                    &cols,
                    row_id,
                    &mut ctx,
                    &mut write::no_checks,
                    &mut None,
                )? {
                    unreachable!("no other transaction knows the new table");
                }
                copied += 1;
                if copied.is_multiple_of(ROWS_PER_COMMIT) {
                    let mut t = trx.take().expect("open");
                    self.sys.commit(&mut self.pager, &mut t)?;
                    locks = crate::lock::LockSys::new();
                }
            }
            if let Some(mut t) = trx.take() {
                self.sys.commit(&mut self.pager, &mut t)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            // The copy's open transaction is rolled back (its records are
            // in the new file, which the caller removes).
            if let Some(mut t) = trx.take() {
                if !e.stops_engine() {
                    self.abandon_dict_trx(&mut t)?;
                }
            }
            return Err(e);
        }
        Ok((copied, next_row_id))
    }

    /// Puts the table a TRUNCATE made in the place of table `id`.
    fn replace_table(&mut self, id: u64, def: TableDef, st: &TableStorage) {
        self.tables.remove(&id);
        let table = Table::new(def, st);
        self.names.insert(table.name().to_string(), table.id);
        self.tables.insert(table.id, table);
    }

    /// One dictionary transaction of `changes`, committed and synced;
    /// returns its transaction id. A failure that does not stop the engine
    /// leaves nothing of it.
    pub(crate) fn dict_transaction(&mut self, changes: &[DictChange]) -> Result<u64> {
        let sys_table = self.tables[&SYS_TABLES_ID].clone();
        let now = self.pager.now_us();
        let mut trx = self
            .sys
            .begin(&mut self.pager, Isolation::RepeatableRead, now)?;
        // The dictionary's own rows are changed by DDL alone, one statement
        // at a time: its locks live and die with the statement.
        let mut dict_locks = crate::lock::LockSys::new();
        let mut ctx = crate::row::locking::LockCtx {
            locks: &mut dict_locks,
            trx: trx.id,
            now_us: 0,
            gaps: false,
            read_committed: false,
            active: Vec::new(),
            skip_locked: false,
            skipped: false,
            semi: None,
            semi_rows: Vec::new(),
            resume: None,
            row_by_row: false,
            index_condition: false,
            index_only: false,
            yield_waits: false,
            yielded: false,
            duplicates: false,
        };
        let missing = |id: u64| Error::Corrupt {
            file: "ibdata1".into(),
            reason: format!("table {id} has no definition row"),
        };
        let mut step = || -> Result<()> {
            for change in changes {
                let outcome = match change {
                    DictChange::Delete(id) => {
                        let key = vec![Some(id.to_be_bytes().to_vec())];
                        let o = write::delete(
                            &mut self.pager,
                            &mut self.sys,
                            &sys_table,
                            &mut trx,
                            &key,
                            &mut ctx,
                        )?;
                        if o != Outcome::Done(1) {
                            return Err(missing(*id));
                        }
                        o
                    }
                    DictChange::Update(id, _) | DictChange::Rename(id, ..) => {
                        // The definition, and with a rename the name too.
                        let set: Vec<(usize, Option<Vec<u8>>)> = match change {
                            DictChange::Rename(_, name, enc) => {
                                vec![(1, Some(name.clone().into_bytes())), (2, Some(enc.clone()))]
                            }
                            DictChange::Update(_, enc) => vec![(2, Some(enc.clone()))],
                            _ => unreachable!("matched above"),
                        };
                        let key = vec![Some(id.to_be_bytes().to_vec())];
                        let o = write::update(
                            &mut self.pager,
                            &mut self.sys,
                            &sys_table,
                            &mut trx,
                            &key,
                            &set,
                            &mut ctx,
                        )?;
                        if o != Outcome::Done(1) {
                            return Err(missing(*id));
                        }
                        o
                    }
                    DictChange::Insert(id, name, enc) => {
                        let cols = crate::row::stored_columns(
                            &sys_table,
                            &[
                                Value::UInt(*id),
                                Value::Bytes(name.clone().into_bytes()),
                                Value::Bytes(enc.clone()),
                            ],
                        )?;
                        let o = write::insert(
                            &mut self.pager,
                            &mut self.sys,
                            &sys_table,
                            &mut trx,
                            &cols,
                            None,
                            &mut ctx,
                            &mut write::no_checks,
                            &mut None,
                        )?;
                        if let Outcome::Wait(_) = o {
                            return Err(Error::TableExists(name.clone()));
                        }
                        o
                    }
                };
                debug_assert!(!matches!(outcome, Outcome::Wait(_)));
            }
            Ok(())
        };
        match step() {
            Ok(()) => {}
            Err(e) if e.stops_engine() => return Err(e),
            Err(e) => {
                // A full system tablespace (the undo record found no
                // room), say: nothing of the half-made change may stay.
                self.abandon_dict_trx(&mut trx)?;
                return Err(e);
            }
        }
        let id = trx.id;
        let lsn = self.sys.commit(&mut self.pager, &mut trx)?;
        self.pager.log.write_up_to(lsn, true)?;
        Ok(id)
    }

    /// Rolls back and ends a dictionary (or copying) transaction whose
    /// statement failed.
    fn abandon_dict_trx(&mut self, trx: &mut crate::trx::Trx) -> Result<()> {
        if let Some(mut log) = trx.undo.clone() {
            let r = crate::row::rollback::rollback_to(
                &mut self.pager,
                &self.sys,
                &self.tables,
                trx.id,
                &mut log,
                0,
                &mut Vec::new(),
            )
            .and_then(|_| crate::trx::drop_rolled_back_log(&mut self.pager, &log));
            if let Err(e) = r {
                return Err(self.rollback_failed(e));
            }
        }
        self.sys.end(trx);
        Ok(())
    }

    /// The definition of SYS_TABLES' storage: its root from the header.
    pub(crate) fn sys_tables_storage(root: u32) -> TableStorage {
        TableStorage {
            id: SYS_TABLES_ID,
            space: 0,
            clustered: (dict::SYS_TABLES_INDEX_ID, root),
            secondary: vec![],
        }
    }
}

/// One change of a dictionary transaction.
pub(crate) enum DictChange {
    /// Delete-mark table `id`'s definition row.
    Delete(u64),
    /// Insert a row: table id, name, encoded definition.
    Insert(u64, String, Vec<u8>),
    /// Replace table `id`'s encoded definition.
    Update(u64, Vec<u8>),
    /// Give table `id` a new name and its encoded definition.
    Rename(u64, String, Vec<u8>),
}

/// What a rebuild that changes columns does with each old row: the new
/// row, one value per new column, or the error that stops the rebuild.
pub type RowMap<'a> = &'a mut dyn FnMut(Vec<Value>) -> Result<Vec<Value>>;

/// The name a TRUNCATE builds the new file under before it takes the
/// table's name (`#` is in no table name, so no table owns it).
pub(crate) fn temporary_file(table: &str, space: u32) -> String {
    format!("{table}#{space}.ibd")
}

/// SHOW TABLE STATUS for one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableStatus {
    /// Name.
    pub name: String,
    /// Row format.
    pub row_format: String,
    /// Live rows (exact: counted, where InnoDB estimates).
    pub rows: u64,
    /// data_length / rows.
    pub avg_row_length: u64,
    /// Bytes of clustered index pages.
    pub data_length: u64,
    /// Bytes of secondary index pages.
    pub index_length: u64,
    /// Bytes of free pages in the tablespace.
    pub data_free: u64,
    /// Size of the .ibd file.
    pub file_size: u64,
}

/// A table's statistics: per index (the clustered one first, as
/// `PRIMARY`), what its sample found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableStats {
    /// The estimated number of rows (InnoDB's `stat_n_rows`: the clustered
    /// index's distinct keys).
    pub rows: u64,
    /// Per index, its name and statistics.
    pub indexes: Vec<(String, crate::btree::stats::IndexStats)>,
}

impl Engine {
    /// ANALYZE TABLE: each index's distinct key prefixes estimated from
    /// `sample_pages` leaf pages (`innodb_stats_sample_pages`), as
    /// `dict_update_statistics` does, and kept for [`Engine::table_stats`].
    pub fn analyze_table(&mut self, name: &str, sample_pages: u64) -> Result<TableStats> {
        self.check_running()?;
        let id = self.table_id(name)?;
        let t = self.tables[&id].clone();
        let r = (|| -> Result<TableStats> {
            let mut indexes = Vec::new();
            let est = crate::btree::stats::estimate(
                &mut self.pager,
                &t.clustered,
                t.clustered.n_key,
                sample_pages,
            )?;
            let rows = est.n_diff.last().copied().unwrap_or(0);
            indexes.push(("PRIMARY".to_string(), est));
            for sec in &t.secondary {
                // A unique index's values are told apart by its own
                // columns; a plain one's only with the primary key after
                // them (dict_index_get_n_unique).
                let n_uniq = if sec.def.unique {
                    sec.def.columns.len()
                } else {
                    sec.index.n_key
                };
                let est = crate::btree::stats::estimate(
                    &mut self.pager,
                    &sec.index,
                    n_uniq,
                    sample_pages,
                )?;
                indexes.push((sec.def.name.clone(), est));
            }
            Ok(TableStats { rows, indexes })
        })();
        let stats = self.guard(r)?;
        self.index_stats.insert(id, stats.clone());
        Ok(stats)
    }

    /// The statistics of the last ANALYZE TABLE of `name`, if any since the
    /// engine opened (and since the table was last rebuilt).
    pub fn table_stats(&self, name: &str) -> Option<&TableStats> {
        let id = self.names.get(name)?;
        self.index_stats.get(id)
    }

    /// CHECK TABLE.
    pub fn check_table(&mut self, name: &str) -> Result<crate::check::CheckReport> {
        self.check_running()?;
        let id = self.table_id(name)?;
        let t = self.tables[&id].clone();
        let r = crate::check::check_table(&mut self.pager, &t);
        self.guard(r)
    }

    /// SHOW TABLE STATUS.
    pub fn table_status(&mut self, name: &str) -> Result<TableStatus> {
        self.check_running()?;
        let id = self.table_id(name)?;
        let t = self.tables[&id].clone();
        let r = (|| {
            let mut problems = Vec::new();
            let c = crate::check::check_tree(&mut self.pager, &t.clustered, &mut problems)?;
            let mut index_pages = 0;
            for sec in &t.secondary {
                index_pages +=
                    crate::check::check_tree(&mut self.pager, &sec.index, &mut problems)?.pages;
            }
            let hdr = fsp::header(&mut self.pager, t.space)?;
            let rows = c.records - c.deleted;
            let data_length = c.pages * page::PAGE_SIZE as u64;
            Ok(TableStatus {
                name: t.name().to_string(),
                row_format: t.def.row_format.name().to_string(),
                rows,
                avg_row_length: data_length.checked_div(rows).unwrap_or(0),
                data_length,
                index_length: index_pages * page::PAGE_SIZE as u64,
                data_free: hdr.free_extents_bytes(self.pager.fil.zip_size(t.space)),
                file_size: self.pager.fil.file_size_bytes(t.space)?,
            })
        })();
        self.guard(r)
    }

    /// Every file the engine manages, with its size in bytes.
    pub fn file_sizes(&mut self) -> Result<Vec<(String, u64)>> {
        let names = self
            .pager
            .fil
            .storage()
            .list()
            .map_err(|e| Error::io("list", ".", e))?;
        let mut out = Vec::new();
        for n in names {
            let mut f = self
                .pager
                .fil
                .storage()
                .open(&n)
                .map_err(|e| Error::io("open", &n, e))?;
            out.push((n.clone(), f.len().map_err(|e| Error::io("stat", &n, e))?));
        }
        Ok(out)
    }
}
