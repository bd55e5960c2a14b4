//! Opening the engine: creating a new database, or recovering an existing
//! one. Mirrors InnoDB's `srv0start.cc` and `log0recv.cc`.
//!
//! Recovery, in order:
//! 1. scan the redo log from the newest valid checkpoint to the last
//!    complete mini-transaction (a torn or garbage tail ends the log);
//! 2. open the tablespaces: every `.ibd` file, identified by its page 0 or
//!    by a FILE_CREATE record in the scanned log;
//! 3. restore torn pages from the doublewrite buffer;
//! 4. apply the redo: each page's records from mini-transactions newer than
//!    the page's LSN, in log order; file creations and deletions replayed;
//! 5. load the dictionary and roll back every transaction whose undo log is
//!    still in a slot (it never committed);
//! 6. drop indexes a crash left half built (still named as building),
//!    remove `.ibd` files no committed definition names and merge files of
//!    interrupted index builds, give a
//!    truncated table's new file its name if a crash came before the
//!    rename;
//! 7. make the rollback's redo durable, write every page recovery changed
//!    and take a checkpoint, so that the next recovery starts from here.

use super::{Config, Engine, EngineStats};
use crate::btree::{self, Bound, Cursor, Direction};
use crate::dict::{self, Table, SYS_TABLES_ID};
use crate::doublewrite::{self, DBLWR_PAGES, DBLWR_START};
use crate::error::{Error, Result};
use crate::fil::{Fil, SYSTEM_FILE, SYSTEM_SPACE};
use crate::fsp;
use crate::io::{Clock, Storage};
use crate::mtr::ops::Reader;
use crate::mtr::{FileOp, LogRecord, Mtr, PageOp};
use crate::page::{self, PageId, PageState, PageType, FIL_PAGE_SPACE_ID, PAGE_SIZE};
use crate::pager::Pager;
use crate::record::{self, RecordView, Value};
use crate::redo::{self, Log};
use crate::row;
use crate::trx::undo::{
    self, UndoLog, TRX_SYS_DICT_ROOT, TRX_SYS_MAX_TRX_ID, TRX_SYS_NEXT_INDEX, TRX_SYS_NEXT_SPACE,
    TRX_SYS_NEXT_TABLE, TRX_SYS_PAGE,
};
use crate::trx::{self as trxmod, TrxSys};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// What opening the engine did.
#[derive(Debug, Default, Clone)]
pub struct RecoveryReport {
    /// A new database was created.
    pub created: bool,
    /// The checkpoint recovery started from.
    pub checkpoint_lsn: u64,
    /// The end of the log that was found.
    pub end_lsn: u64,
    /// Why the log scan stopped.
    pub log_end: String,
    /// Mini-transactions scanned.
    pub mtrs_scanned: u64,
    /// Redo records applied to pages (records for pages already newer are
    /// skipped and not counted).
    pub records_applied: u64,
    /// Pages restored from the doublewrite buffer, with why.
    pub pages_repaired: Vec<(PageId, String)>,
    /// Transactions rolled back, by id.
    pub rolled_back: Vec<u64>,
    /// Undo records those rollbacks undid.
    pub undo_records_rolled_back: u64,
    /// Tablespace files created or removed while replaying the log.
    pub files_replayed: Vec<String>,
    /// Files removed because no committed definition names them (and
    /// merge files of index builds a crash cut short).
    pub orphans_removed: Vec<String>,
    /// Indexes a crash left half built, dropped (`table.index`).
    pub indexes_dropped: Vec<String>,
    /// Tablespace files grown back to the size their header records (a
    /// crash lost their extension).
    pub files_extended: Vec<String>,
    /// Recovery's phases in order, each with the clock's time at its start
    /// and end (microseconds): the redo scan, opening the tablespaces,
    /// the doublewrite repair, the redo apply, loading the dictionary,
    /// the rollback, the clean-up (half-built indexes, orphan files) and
    /// the final flush and checkpoint.
    pub phases: Vec<RecoveryPhase>,
}

/// One phase of recovery and when it ran ([`RecoveryReport::phases`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPhase {
    /// Its name.
    pub name: &'static str,
    /// The clock when it began, microseconds.
    pub start_us: u64,
    /// The clock when it ended.
    pub end_us: u64,
}

impl RecoveryReport {
    /// Notes a phase that ran from `start_us` to `end_us`.
    fn phase(&mut self, name: &'static str, start_us: u64, end_us: u64) {
        self.phases.push(RecoveryPhase {
            name,
            start_us,
            end_us,
        });
    }
}

/// First page a new system tablespace may allocate.
const SYSTEM_FIRST_FREE: u32 = DBLWR_START + DBLWR_PAGES;
/// Pages a new system tablespace starts with.
const SYSTEM_INITIAL_PAGES: u32 = SYSTEM_FIRST_FREE + 64;

/// The pager over open files and log, with the configuration's settings
/// and canaries.
fn pager_for(fil: Fil, log: Log, clock: Box<dyn Clock>, config: &Config) -> Pager {
    let mut pager = Pager::new(
        fil,
        log,
        config.buffer_pool_pages,
        doublewrite_on(config),
        clock,
    );
    pager.early_checkpoint = config.canaries.has(crate::Canary::EarlyCheckpoint);
    pager.unique_first_column = config.canaries.has(crate::Canary::UniqueCheckFirstColumn);
    pager.unique_binary = config.canaries.has(crate::Canary::UniqueCheckBinary);
    pager.implicit_by_row_changer = config.canaries.has(crate::Canary::ImplicitLockOfRowChanger);
    pager.compression.level = config.compression_level;
    pager.compression.count_failure_as_success = config
        .canaries
        .has(crate::Canary::ZipCountFailedCompression);
    pager.zip_skip_mod_log = config.canaries.has(crate::Canary::ZipSkipModLog);
    pager.zip_skip_image_redo = config.canaries.has(crate::Canary::ZipSkipImageRedo);
    pager.zip_trx_id_frame_only = config.canaries.has(crate::Canary::ZipTrxIdFrameOnly);
    pager.pool.free_zip_in_use = config.canaries.has(crate::Canary::BuddyFreeInUse);
    pager
}

fn io_err<'a>(op: &'static str, file: &'a str) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |e| Error::io(op, file, e)
}

impl Engine {
    /// Opens the engine on `storage`: creates a database if there is none,
    /// recovers it otherwise.
    pub fn open(
        storage: Box<dyn Storage>,
        clock: Box<dyn Clock>,
        config: Config,
    ) -> Result<(Engine, RecoveryReport)> {
        config.validate()?;
        let mut storage = storage;
        let ignore = config.canaries.has(crate::Canary::IgnoreFsyncFailure);
        let retry = config.canaries.has(crate::Canary::RetryFsyncAfterEio);
        if ignore || retry {
            storage = Box::new(crate::io::SwallowFsyncErrors {
                inner: storage,
                retry,
            });
        }
        let exists = storage
            .exists(SYSTEM_FILE)
            .map_err(io_err("stat", SYSTEM_FILE))?;
        if !exists {
            if redo::exists(&mut *storage)? {
                return Err(Error::Corrupt {
                    file: SYSTEM_FILE.into(),
                    reason: "log files exist but the system tablespace does not".into(),
                });
            }
            return Self::create(storage, clock, config);
        }
        Self::recover(storage, clock, config)
    }

    fn assemble(pager: Pager, config: Config) -> Result<Engine> {
        let mut pager = pager;
        let mut sys = TrxSys::load(&mut pager)?;
        if (config.later).has(crate::LaterRule::PessimisticInsertTriesNoOptimisticFirst) {
            sys.refused_insert_undo = 1;
        }
        let next_background_us = pager.now_us() + super::BACKGROUND_PERIOD_US;
        Ok(Engine {
            pager,
            sys,
            locks: crate::lock::LockSys::with_canaries(crate::lock::LockCanaries {
                grant_conflicting: config.canaries.has(crate::Canary::GrantConflictingLock),
                lose_wakeup: config.canaries.has(crate::Canary::LoseWakeup),
                skip_deadlock_detection: config.canaries.has(crate::Canary::SkipDeadlockDetection),
                wrong_victim: config.canaries.has(crate::Canary::WrongDeadlockVictim),
                skip_gap_check: config.canaries.has(crate::Canary::InsertSkipsGapCheck),
                inherit_to_supremum: config.canaries.has(crate::Canary::InheritToSupremum),
            })
            .with_one_blocker(config.later.has(crate::LaterRule::DeadlockSearchOneBlocker))
            .with_ru_x_not_inherited(
                (config.later).has(crate::LaterRule::ReadUncommittedXLocksNotInherited),
            )
            .with_unlock_clustered_only(
                (config.later).has(crate::LaterRule::UnlockRowClusteredOnly),
            )
            .with_keep_waited((config.later).has(crate::LaterRule::UnlockRowKeepsWaitedLock))
            .with_past_end_unlocked(
                (config.later).has(crate::LaterRule::PastEndRowUnlockedUnderReadCommitted),
            )
            .with_bypass_waiters((config.later).has(crate::LaterRule::WaiterBypassedByItsBlocker))
            .with_skip_committed_deletes(
                (config.later).has(crate::LaterRule::ReadCommittedSkipsCommittedDeletes),
            )
            .with_own_implicit_suffices(
                (config.later).has(crate::LaterRule::OwnImplicitLockSuffices),
            )
            .with_index_condition_pushdown(
                (config.later).has(crate::LaterRule::IndexConditionPushdown),
            ),
            tables: BTreeMap::new(),
            names: BTreeMap::new(),
            sessions: BTreeMap::new(),
            next_session: 1,
            next_background_us,
            config,
            halted: None,
            statement_view: None,
            resumed_wait_since_us: None,
            last_commit_lsn: 0,
            latest_deadlock: None,
            index_stats: Default::default(),
            stats: EngineStats::default(),
        })
    }

    fn create(
        storage: Box<dyn Storage>,
        clock: Box<dyn Clock>,
        config: Config,
    ) -> Result<(Engine, RecoveryReport)> {
        let mut fil = Fil::new(storage);
        fil.trust_page_id = config.canaries.has(crate::Canary::TrustPageId);
        fil.skip_dir_sync = config.canaries.has(crate::Canary::SkipDirectorySync);
        fil.create(SYSTEM_SPACE, SYSTEM_FILE)?;
        let log = Log::create(fil.storage(), &config.log)?;
        let mut pager = pager_for(fil, log, clock, &config);
        fsp::create_space(
            &mut pager,
            SYSTEM_SPACE,
            SYSTEM_INITIAL_PAGES,
            SYSTEM_FIRST_FREE,
            0,
        )?;
        let mut mtr = Mtr::new();
        let f = mtr.create(
            &mut pager,
            PageId::new(SYSTEM_SPACE, TRX_SYS_PAGE),
            PageType::TrxSys,
        )?;
        mtr.write_u64(&mut pager, f, TRX_SYS_MAX_TRX_ID, 1)?;
        mtr.write_u32(&mut pager, f, TRX_SYS_NEXT_SPACE, 1)?;
        mtr.write_u64(&mut pager, f, TRX_SYS_NEXT_TABLE, SYS_TABLES_ID + 1)?;
        mtr.write_u64(
            &mut pager,
            f,
            TRX_SYS_NEXT_INDEX,
            dict::SYS_TABLES_INDEX_ID + 1,
        )?;
        undo::create_rseg(&mut mtr, &mut pager)?;
        mtr.commit(&mut pager)?;
        let root = btree::create(&mut pager, SYSTEM_SPACE, dict::SYS_TABLES_INDEX_ID, None)?;
        let mut mtr = Mtr::new();
        let f = mtr.fix(&mut pager, PageId::new(SYSTEM_SPACE, TRX_SYS_PAGE))?;
        mtr.write_u32(&mut pager, f, TRX_SYS_DICT_ROOT, root)?;
        mtr.commit(&mut pager)?;
        let lsn = pager.log.lsn();
        pager.log.write_up_to(lsn, true)?;
        pager.flush_all()?;
        pager.checkpoint()?;
        let mut engine = Self::assemble(pager, config)?;
        let sys_tables = Table::new(dict::sys_tables_def(), &Self::sys_tables_storage(root));
        engine.tables.insert(SYS_TABLES_ID, sys_tables);
        Ok((
            engine,
            RecoveryReport {
                created: true,
                ..Default::default()
            },
        ))
    }

    fn recover(
        storage: Box<dyn Storage>,
        clock: Box<dyn Clock>,
        config: Config,
    ) -> Result<(Engine, RecoveryReport)> {
        let mut report = RecoveryReport::default();
        let t0 = clock.now_us();
        let mut fil = Fil::new(storage);
        fil.trust_page_id = config.canaries.has(crate::Canary::TrustPageId);
        fil.skip_dir_sync = config.canaries.has(crate::Canary::SkipDirectorySync);
        // The system tablespace always has 16 KiB pages: its flags are not
        // read (bit rot there must not decide how the file is read).
        fil.open_sized(SYSTEM_SPACE, SYSTEM_FILE, Some(None))?;
        let scan = redo::scan_with(
            fil.storage(),
            &config.log,
            config.canaries.has(crate::Canary::AcceptTornLogTail),
        )?;
        report.checkpoint_lsn = scan.checkpoint_lsn;
        report.end_lsn = scan.end_lsn;
        report.log_end = scan.tail.to_string();
        report.mtrs_scanned = scan.mtrs.len() as u64;

        // Every record, decoded once: (mini-transaction index, record).
        let mut records = Vec::new();
        for (i, m) in scan.mtrs.iter().enumerate() {
            for rec in Reader::new(&m.payload) {
                records.push((i, rec?));
            }
        }
        // Names of files created in the scanned log, for files whose page 0
        // never reached the disk.
        let mut created: BTreeMap<String, (u32, Option<usize>)> = BTreeMap::new();
        for (_, rec) in &records {
            if let LogRecord::File(FileOp::Create {
                space,
                name,
                zip_size,
            }) = rec
            {
                created.insert(name.to_string(), (*space, *zip_size));
            }
        }
        let t1 = clock.now_us();
        report.phase("redo scan", t0, t1);
        let unidentified = open_tablespaces(&mut fil, &created, scan.checkpoint_lsn)?;
        let t2 = clock.now_us();
        report.phase("open tablespaces", t1, t2);
        let repair = doublewrite::recover(&mut fil, scan.checkpoint_lsn)?;
        report.pages_repaired = repair.restored;
        let t3 = clock.now_us();
        report.phase("doublewrite repair", t2, t3);

        let log = Log::open(fil.storage(), &config.log, &scan)?;
        let mut pager = pager_for(fil, log, clock, &config);
        apply_redo(
            &mut pager,
            &scan,
            records,
            &mut report,
            config.canaries.has(crate::Canary::IgnorePageLsn),
            &unidentified,
        )?;
        report.files_extended = extend_to_recorded_sizes(&mut pager)?;
        let t4 = pager.now_us();
        report.phase("redo apply", t3, t4);

        let mut engine = Self::assemble(pager, config)?;
        engine.load_dictionary(true, &unidentified)?;
        let t5 = engine.pager.now_us();
        report.phase("dictionary", t4, t5);
        // Roll back what never committed.
        let slotted = if engine
            .config
            .canaries
            .has(crate::Canary::SkipRecoveryRollback)
        {
            Vec::new()
        } else {
            trxmod::slotted_logs(&mut engine.pager)?
        };
        for (slot, first) in slotted {
            let (state, trx_id, _, last, _) = undo::log_header(&mut engine.pager, first)?;
            if state != undo::UNDO_ACTIVE {
                return Err(Error::Corrupt {
                    file: SYSTEM_FILE.into(),
                    reason: format!("undo log in slot {slot} is in state {state}"),
                });
            }
            engine.sys.resurrect(trx_id);
            let mut log = UndoLog {
                first_page: first,
                last_page: last,
                slot,
                next_undo_no: u64::MAX,
            };
            let n = row::rollback::rollback_to(
                &mut engine.pager,
                &engine.sys,
                &engine.tables,
                trx_id,
                &mut log,
                0,
                // No transaction holds locks during recovery.
                &mut Vec::new(),
            )?;
            trxmod::drop_rolled_back_log(&mut engine.pager, &log)?;
            let mut t = crate::trx::Trx {
                id: trx_id,
                isolation: Default::default(),
                undo: None,
                view: None,
                savepoints: vec![],
                started_us: 0,
                touched: true,
            };
            engine.sys.end(&mut t);
            engine.sys.give_slot(slot);
            report.rolled_back.push(trx_id);
            report.undo_records_rolled_back += n;
        }
        engine.load_dictionary(false, &unidentified)?;
        let t6 = engine.pager.now_us();
        report.phase("rollback", t5, t6);
        report.indexes_dropped = engine.drop_interrupted_builds()?;
        report.orphans_removed = engine.remove_orphans()?;
        let t7 = engine.pager.now_us();
        report.phase("clean-up", t6, t7);
        // The rollback's redo is made durable, then every page recovery
        // changed is written and a checkpoint taken before the engine
        // serves, so that the next recovery starts here and not at the
        // old checkpoint: a process that is killed again and again (and
        // never lives long enough for the page cleaner's checkpoints)
        // replays only what it did since it last opened, where it would
        // otherwise replay its whole history each time (InnoDB bounds
        // recovery the same way: recv_recovery_from_checkpoint_finish's
        // flush, and the checkpoints the log's size forces).
        let lsn = engine.pager.log.lsn();
        engine.pager.log.write_up_to(lsn, true)?;
        if report.records_applied > 0 || !report.rolled_back.is_empty() || lsn > scan.checkpoint_lsn
        {
            engine.pager.flush_all()?;
            engine.pager.checkpoint()?;
        }
        report.phase("flush and checkpoint", t7, engine.pager.now_us());
        Ok((engine, report))
    }

    /// Loads SYS_TABLES. With `all_versions`, also definitions whose row is
    /// delete-marked or uncommitted (before rollback, every table an undo
    /// record may name must be known). `unidentified` holds the `.ibd`
    /// files whose first page failed validation, with the error: a
    /// committed table whose file is among them is reported as that
    /// corrupt page, not as a missing tablespace.
    fn load_dictionary(
        &mut self,
        all_versions: bool,
        unidentified: &BTreeMap<String, Error>,
    ) -> Result<()> {
        let f = self.pager.fix(PageId::new(SYSTEM_SPACE, TRX_SYS_PAGE))?;
        let root = page::get_u32(self.pager.page(f), TRX_SYS_DICT_ROOT);
        self.pager.unfix(f);
        let sys_tables = Table::new(dict::sys_tables_def(), &Self::sys_tables_storage(root));
        let mut tables = BTreeMap::new();
        let mut names = BTreeMap::new();
        let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        while let Some(rec) = cur.next(&mut self.pager, &sys_tables.clustered)? {
            if record::is_deleted(&rec) && !all_versions {
                continue;
            }
            let row = row::decode_row(&mut self.pager, &sys_tables, &rec)?;
            let Value::Bytes(enc) = &row[2] else {
                return Err(Error::Corrupt {
                    file: SYSTEM_FILE.into(),
                    reason: "SYS_TABLES row without a definition".into(),
                });
            };
            let (def, st) = dict::decode_def(enc)?;
            if !self.pager.fil.is_open(st.space) {
                let file = format!("{}.ibd", def.name);
                if !all_versions {
                    // The file may still have the name a TRUNCATE or a
                    // rebuild gave it before the rename a crash cut short.
                    let temporary = super::ddl::temporary_file(&def.name, st.space);
                    let unreadable = unidentified
                        .get(&file)
                        .or_else(|| unidentified.get(&temporary));
                    return Err(match unreadable {
                        Some(Error::CorruptPage {
                            file,
                            page_no,
                            reason,
                        }) => Error::CorruptPage {
                            file: file.clone(),
                            page_no: *page_no,
                            reason: format!(
                                "the first page of table '{}' cannot be read: {reason}",
                                def.name
                            ),
                        },
                        _ => Error::Corrupt {
                            file,
                            reason: format!("the tablespace of table '{}' is missing", def.name),
                        },
                    });
                }
                continue;
            }
            let mut table = Table::new(def, &st);
            // A delete-marked definition is a dropped table's, kept only
            // so that the rollback that follows knows its id: a committed
            // DROP of a table in the system tablespace has freed its
            // trees, whose pages other indexes may hold by now, so they
            // are not read (the second pass, of live rows only, counts
            // row ids).
            if !record::is_deleted(&rec) {
                table.next_row_id = next_row_id(&mut self.pager, &table, self.config.canaries)?;
            }
            names.insert(table.name().to_string(), table.id);
            tables.insert(table.id, table);
        }
        tables.insert(SYS_TABLES_ID, sys_tables);
        self.tables = tables;
        self.names = names;
        Ok(())
    }

    /// Removes `.ibd` files that no loaded table uses.
    fn remove_orphans(&mut self) -> Result<Vec<String>> {
        let used: Vec<u32> = self.tables.values().map(|t| t.space).collect();
        let mut removed = Vec::new();
        for space in self.pager.fil.space_ids() {
            if space == SYSTEM_SPACE || used.contains(&space) {
                continue;
            }
            let name = self.pager.fil.name(space).unwrap_or("?").to_string();
            self.drop_space(space, &name)?;
            removed.push(name);
        }
        // A TRUNCATE that committed but crashed before its new file took
        // the table's name: the old file went just above; finish the rename.
        let renames: Vec<(u32, String)> = self
            .tables
            .values()
            // Tables in the system tablespace (SYS_TABLES, and those
            // created with innodb_file_per_table off) have no file of
            // their own.
            .filter(|t| t.space != SYSTEM_SPACE)
            .map(|t| (t.space, format!("{}.ibd", t.name())))
            .filter(|(space, file)| self.pager.fil.name(*space) != Some(file.as_str()))
            .collect();
        for (space, file) in renames {
            self.pager.fil.rename(space, &file)?;
        }
        let files = self
            .pager
            .fil
            .storage()
            .list()
            .map_err(io_err("list", "."))?;
        for f in files {
            let stale_merge = f.starts_with(crate::row::merge::TEMP_PREFIX);
            if stale_merge
                || f.ends_with(".ibd") && !self.names.keys().any(|n| format!("{n}.ibd") == f)
            {
                self.pager
                    .fil
                    .storage()
                    .remove(&f)
                    .map_err(io_err("remove", &f))?;
                self.pager.fil.sync_dir()?;
                removed.push(f);
            }
        }
        removed.sort();
        removed.dedup();
        Ok(removed)
    }
}

/// Grows each tablespace file that is shorter than the size its header
/// records (after redo): a power loss can keep the redo of an extension
/// and lose the extension itself, and the pages past the end would then
/// grow the file when they are written, where a full disk makes that
/// write fail. MariaDB's `recv_sys_t::apply` extends such files the same
/// way (`fil_space_extend`). A full disk fails here, as `TableFull`,
/// before the engine runs; a space whose first page is still all zeros
/// (created, never written) is left to the dictionary to judge.
fn extend_to_recorded_sizes(pager: &mut Pager) -> Result<Vec<String>> {
    let mut extended = Vec::new();
    for space in pager.fil.space_ids() {
        let f = pager.fix(PageId::new(space, 0))?;
        let fresh = page::is_all_zero(pager.page(f));
        pager.unfix(f);
        if fresh {
            continue;
        }
        let size = fsp::header(pager, space)?.size;
        if pager.fil.len_pages(space)? < size {
            pager.fil.extend(space, size)?;
            extended.push(pager.fil.name(space).unwrap_or("?").to_string());
        }
    }
    Ok(extended)
}

/// Whether pages go through the doublewrite buffer: the setting, unless the
/// `skip-doublewrite` canary is planted.
fn doublewrite_on(config: &Config) -> bool {
    config.doublewrite && !config.canaries.has(crate::Canary::SkipDoublewrite)
}

/// The next hidden row id: one past the largest in the tree (InnoDB keeps
/// a counter in the dictionary header, written every 256 ids and moved
/// past the margin at startup, `dict_boot`; the largest id in the tree
/// gives the same order of new rows after old ones).
fn next_row_id(pager: &mut Pager, table: &Table, canaries: crate::Canaries) -> Result<u64> {
    if !table.def.primary_key.is_empty() {
        return Ok(1);
    }
    let dir = if canaries.has(crate::Canary::RowIdFromSmallest) {
        Direction::Forward
    } else {
        Direction::Backward
    };
    let mut cur = Cursor::new(Bound::Unbounded, Bound::Unbounded, dir);
    match cur.next(pager, &table.clustered)? {
        None => Ok(1),
        Some(rec) => {
            let view = RecordView::parse(&table.clustered.leaf, &rec)?;
            match view.field(0) {
                record::FieldValue::Inline(b) if b.len() == 6 => {
                    let mut x = [0u8; 8];
                    x[2..].copy_from_slice(b);
                    Ok(u64::from_be_bytes(x) + 1)
                }
                _ => Err(Error::Corrupt {
                    file: table.name().into(),
                    reason: "hidden row id missing".into(),
                }),
            }
        }
    }
}

/// Opens every `.ibd` file, learning its space id from its first page (or,
/// if that page never reached the disk, from the FILE_CREATE record).
/// Returns the files it could not identify because their first page failed
/// validation, with the error (as `Datafile::validate_first_page` reports
/// a corrupted page 0): if a committed table names one, that is the error
/// to report, and the file is not removed.
fn open_tablespaces(
    fil: &mut Fil,
    created: &BTreeMap<String, (u32, Option<usize>)>,
    checkpoint_lsn: u64,
) -> Result<BTreeMap<String, Error>> {
    let files = fil.storage().list().map_err(io_err("list", "."))?;
    let mut unidentified = BTreeMap::new();
    for name in files.iter().filter(|f| f.ends_with(".ibd")) {
        let mut file = fil.storage().open(name).map_err(io_err("open", name))?;
        let len = file.len().map_err(io_err("stat", name))?;
        let mut space = None;
        let mut invalid = None;
        let created_zip = created.get(name).and_then(|&(_, z)| z);
        // Page 0, read once, up to 16 KiB. Its size is the one at which it
        // validates: first the one its FSP flags give (bit rot may have hit
        // them, or another page's write landed there), then the
        // FILE_CREATE's, then 16 KiB, then the other compressed sizes.
        let mut zip_size = created_zip;
        let mut buf = vec![0u8; (len.min(PAGE_SIZE as u64)) as usize];
        // The space id page 0 claims, valid or not.
        let mut claimed_space = None;
        if buf.len() > crate::fsp::FSP_FLAGS + 4 {
            file.read_at(0, &mut buf).map_err(io_err("read", name))?;
            let claimed = page::get_u32(&buf, FIL_PAGE_SPACE_ID);
            claimed_space = Some(claimed);
            let id = PageId::new(claimed, 0);
            let flags = crate::fsp::page_size_of_flags(page::get_u32(&buf, crate::fsp::FSP_FLAGS));
            let mut candidates: Vec<Option<usize>> = flags.into_iter().collect();
            candidates.extend([created_zip, None]);
            candidates.extend(page::zip::ZIP_SIZES.map(Some));
            let mut seen = Vec::new();
            candidates.retain(|c| {
                let new = !seen.contains(c);
                seen.push(*c);
                new
            });
            let mut verdict = None;
            for z in candidates {
                let size = z.unwrap_or(PAGE_SIZE);
                if size > buf.len() {
                    continue;
                }
                match page::validate_image(&buf[..size], z.is_some(), id, name) {
                    Ok(PageState::Valid) => {
                        space = Some(claimed);
                        zip_size = z;
                        verdict = None;
                        break;
                    }
                    v => {
                        if verdict.is_none() {
                            verdict = Some(v);
                        }
                    }
                }
            }
            if let Some(v) = verdict {
                if claimed != SYSTEM_SPACE {
                    if let Some(z) = doublewrite::has_copy(fil, id, checkpoint_lsn)? {
                        // A page 0 torn by a crash while it was written
                        // still has the space id in its first sector, old
                        // or new; doublewrite repair, next, restores the
                        // page from its copy, whose flags give the size.
                        space = Some(claimed);
                        zip_size = z;
                    }
                }
                invalid = v.err();
            }
        }
        if space.is_none() {
            // For a page 0 that never reached the disk (zeros, or a file
            // shorter than a page), or one that fails its checksum but
            // names the logged space: a file of that name may be a later
            // space's (a TRUNCATE's new file, renamed), and taking it for
            // the logged one would hand it to that space's FILE_DELETE.
            space = created
                .get(name)
                .map(|&(s, _)| s)
                .filter(|&s| invalid.is_none() || claimed_space == Some(s));
        }
        if let (None, Some(e)) = (space, invalid) {
            unidentified.insert(name.clone(), e);
        }
        drop(file);
        match space {
            Some(s) if s != SYSTEM_SPACE && !fil.is_open(s) => {
                fil.open_sized(s, name, Some(zip_size))?
            }
            // A file we cannot identify was never part of a committed table
            // (its creation did not reach the log); startup removes it.
            _ => {}
        }
    }
    Ok(unidentified)
}

/// Applies the scanned redo, as InnoDB's `recv_apply_hashed_log_recs`
/// does: the file operations first, in log order, then the page records
/// gathered by page and applied page by page, each page's in log order.
/// Each page is then read once however many mini-transactions changed it;
/// applied in log order instead, a small pool wrote back and read again the
/// same pages over and over. A page record only ever changes its own page,
/// so the order between pages does not matter.
fn apply_redo(
    pager: &mut Pager,
    scan: &redo::ScanResult,
    records: Vec<(usize, LogRecord<'_>)>,
    report: &mut RecoveryReport,
    ignore_page_lsn: bool,
    unidentified: &BTreeMap<String, Error>,
) -> Result<()> {
    // (page, mini-transaction index, record), in log order until sorted.
    let mut pages: Vec<(PageId, usize, PageOp<'_>)> = Vec::with_capacity(records.len());
    for (i, rec) in records {
        match rec {
            // A file name outlives its space when a table is dropped and
            // created again: the log then holds CREATE, DELETE and CREATE of
            // one name under two space ids. As InnoDB's
            // fil_op_log_parse_or_replay, an operation on a space that is
            // not open leaves alone a file another open space owns.
            LogRecord::File(FileOp::Create {
                space,
                name,
                zip_size,
            }) => {
                if !pager.fil.is_open(space) && pager.fil.space_of(name).is_none() {
                    if !pager
                        .fil
                        .storage()
                        .exists(name)
                        .map_err(io_err("stat", name))?
                    {
                        pager.fil.create_sized(space, name, zip_size)?;
                        report.files_replayed.push(format!("created {name}"));
                    } else if !unidentified.contains_key(name) {
                        pager.fil.open_sized(space, name, Some(zip_size))?;
                        report.files_replayed.push(format!("created {name}"));
                    }
                    // A file of the name whose page 0 fails validation and
                    // names another space is not this one's (see
                    // `open_tablespaces`): left alone.
                }
            }
            LogRecord::File(FileOp::Delete { space, name }) => {
                pager.discard_space(space);
                if pager.fil.is_open(space) {
                    pager.fil.delete(space)?;
                    report.files_replayed.push(format!("deleted {name}"));
                } else if pager.fil.space_of(name).is_none()
                    // A file whose page 0 failed validation is of no known
                    // space: perhaps a later table's under the name, with
                    // bit rot on its first page (crash-heavy seed 16988:
                    // a TRUNCATE's new file, renamed, deleted by the old
                    // file's FILE_DELETE). Startup removes it if no table
                    // uses it; a table that does reports the corrupt page.
                    && !unidentified.contains_key(name)
                    && pager
                        .fil
                        .storage()
                        .exists(name)
                        .map_err(io_err("stat", name))?
                {
                    pager
                        .fil
                        .storage()
                        .remove(name)
                        .map_err(io_err("remove", name))?;
                    pager.fil.sync_dir()?;
                    report.files_replayed.push(format!("deleted {name}"));
                }
            }
            LogRecord::Page(id, op) => pages.push((id, i, op)),
        }
    }
    // By page, each page's records in log order, the pages in order of
    // their ids: the records are bucketed by page (a counting sort over the
    // pages they name, which are few against the records), so neither the
    // records nor their indices are compared or moved more than once.
    // Space ids are never reused, so a space open now was open when each of
    // its records was written; a space not open was dropped.
    let sorted = by_page(&pages);
    for recs in sorted.chunk_by(|a, b| a.0 == b.0) {
        let id = recs[0].0;
        if !pager.fil.is_open(id.space) {
            continue;
        }
        apply_page(pager, scan, id, recs, report, ignore_page_lsn)?;
    }
    Ok(())
}

/// `pages` bucketed by page id, the buckets in id order and each in the
/// order `pages` gives (log order): what a stable sort by page id gives.
fn by_page<'a, 'r>(
    pages: &'a [(PageId, usize, PageOp<'r>)],
) -> Vec<&'a (PageId, usize, PageOp<'r>)> {
    let mut bucket_of: FxHashMap<PageId, usize> = FxHashMap::default();
    let mut ids: Vec<PageId> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    let mut buckets: Vec<usize> = Vec::with_capacity(pages.len());
    let mut last: Option<(PageId, usize)> = None;
    for &(id, _, _) in pages {
        let b = match last {
            Some((l, b)) if l == id => b,
            _ => *bucket_of.entry(id).or_insert_with(|| {
                ids.push(id);
                counts.push(0);
                ids.len() - 1
            }),
        };
        last = Some((id, b));
        counts[b] += 1;
        buckets.push(b);
    }
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_unstable_by_key(|&b| ids[b]);
    // Each bucket's first slot in the output.
    let mut next = vec![0; ids.len()];
    let mut at = 0;
    for &b in &order {
        next[b] = at;
        at += counts[b];
    }
    let mut slots = vec![0; pages.len()];
    for (i, &b) in buckets.iter().enumerate() {
        slots[next[b]] = i;
        next[b] += 1;
    }
    slots.into_iter().map(|i| &pages[i]).collect()
}

/// Applies one page's records: each mini-transaction's, unless the page
/// is already as new as its end (InnoDB's page-LSN check); a record that
/// formats the page afresh needs no read and no check.
fn apply_page(
    pager: &mut Pager,
    scan: &redo::ScanResult,
    id: PageId,
    recs: &[&(PageId, usize, PageOp<'_>)],
    report: &mut RecoveryReport,
    ignore_page_lsn: bool,
) -> Result<()> {
    let mut frame = None;
    let mut applied: Option<(u64, u64)> = None;
    let zip_size = pager.fil.zip_size(id.space);
    let compressed = zip_size.is_some();
    // Whether the page is known to be a sound index page.
    let mut sound = false;
    for group in recs.chunk_by(|a, b| a.1 == b.1) {
        let m = &scan.mtrs[group[0].1];
        let init = matches!(group[0].2, PageOp::Init(_));
        let f = match frame {
            Some(f) => f,
            None => {
                let f = if init {
                    pager.fix_new(id)?
                } else {
                    pager.fix(id)?
                };
                frame = Some(f);
                f
            }
        };
        if page::page_lsn(pager.page(f)) >= m.end_lsn && !init && !ignore_page_lsn {
            continue; // already newer
        }
        for (_, _, op) in group {
            // A record that edits an index page's records needs a sound
            // one: a page image and a log that disagree (a page the log
            // did not write, or bytes written for another layout) are
            // corruption, reported, never a panic inside the edit. The
            // record edits keep a sound page sound, so the page is checked
            // before the first of them and again after raw writes.
            let edits_records = !matches!(
                op,
                PageOp::Init(_)
                    | PageOp::Write { .. }
                    | PageOp::IndexInit { .. }
                    | PageOp::ZipImage { .. }
            );
            if !edits_records {
                // A decompressed image was checked as it was rebuilt.
                sound = matches!(op, PageOp::IndexInit { .. } | PageOp::ZipImage { .. });
            } else if !sound {
                if let Err(why) = page::index::check_structure(pager.page(f)) {
                    return Err(Error::Corrupt {
                        file: "redo".into(),
                        reason: format!("record for page {id} meets a malformed index page: {why}"),
                    });
                }
                sound = true;
            }
            let start = pager.now_us();
            let (data, mut zip) = pager.pool.page_and_zip_mut(f);
            let parts = zip.as_mut().map(|z| (&mut z.page, z.fields));
            let replayed = crate::mtr::zip::replay(data, parts, zip_size, id, op)?;
            drop(zip);
            match replayed {
                crate::mtr::zip::Replayed::Kept => {}
                crate::mtr::zip::Replayed::Lost => pager.pool.detach_zip(f),
                crate::mtr::zip::Replayed::Image(z) => pager.pool.set_zip(f, &z.page, &z.fields),
            }
            if let (Some(size), PageOp::ZipImage { .. }) = (zip_size, op) {
                pager.compression.note_decompress(size, start);
            }
            report.records_applied += 1;
        }
        let (data, zip) = pager.pool.page_and_zip_mut(f);
        page::set_page_lsn(data, m.end_lsn);
        if let Some(mut zf) = zip {
            zf.page.write_header(data);
        }
        let first_start = applied.map_or(m.start_lsn, |(start, _)| start);
        applied = Some((first_start, m.end_lsn));
    }
    let Some(f) = frame else {
        return Ok(());
    };
    let Some((start_lsn, end_lsn)) = applied else {
        pager.unfix(f);
        return Ok(());
    };
    pager.pool.mark_dirty(f, start_lsn, end_lsn);
    // Every record the original wrote after a change its compressed page
    // could not follow included the new image; a page left without one
    // had a log that is not its own.
    if compressed
        && page::page_type_raw(pager.page(f)) == page::PageType::Index as u16
        && !pager.pool.frame(f).has_zip()
    {
        pager.unfix(f);
        return Err(Error::Corrupt {
            file: "redo".into(),
            reason: format!("compressed page {id} is left without its compressed image"),
        });
    }
    // Redo applied to a page of another history (a disk that lied about a
    // sync, say) can leave a directory pointing outside the page: that is
    // corruption to report now, not an offset for a later read to trust.
    let data = pager.page(f);
    let verdict = if page::page_type_raw(data) == page::PageType::Index as u16 {
        page::index::check_structure(data)
    } else {
        Ok(())
    };
    pager.unfix(f);
    verdict.map_err(|reason| Error::CorruptPage {
        file: pager.fil.name(id.space).unwrap_or("?").to_string(),
        page_no: id.page_no,
        reason: format!("after redo: {reason}"),
    })
}
