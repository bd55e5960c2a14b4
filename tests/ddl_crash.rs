//! TRUNCATE TABLE, CREATE INDEX (fast index creation, with its sort
//! spilling runs to a merge file) and a copying ALTER TABLE (to COMPRESSED
//! with a new index) crashed at every one of their I/O operations, under
//! each
//! `innodb_flush_log_at_trx_commit` setting, after a process crash and
//! after a power loss (every unsynced operation lost, and a seeded mix of
//! kept, lost and torn ones). After a TRUNCATE, recovery must leave either
//! the old table, every row of it, or the new empty one; after a CREATE
//! INDEX or the copying ALTER, the table with every row and either the old
//! definition or the whole new one, never a half-built index. Never a leftover file (a merge file
//! included) or a table without its file; the table passes CHECK TABLE
//! (which holds every index to the table's rows) and takes new rows.
//!
//! The same sweeps run for a table in the system tablespace
//! (`innodb_file_per_table` off): TRUNCATE, a copying ALTER and DROP, each
//! of which frees the old trees' pages after its dictionary commit.
//!
//! Before the TRUNCATE, a committed transaction changes the old table, so
//! the log past the checkpoint holds redo for the old tablespace's pages:
//! were the new file to reuse the old space id, recovery would apply that
//! redo to it. The negative control plants that bug
//! (`truncate-reuses-space-id`) and the same sweep must catch it.

use engine::io::Storage;
use engine::redo::LogConfig;
use engine::{
    Canaries, Canary, ColumnDef, ColumnType, Config, Engine, FlushAtCommit, IndexDef, Request,
    RowFormat, TableDef, Value,
};
use sim::clock::SimClock;
use sim::storage::{CrashMode, SimStorage};

const ROWS: u64 = 120;

/// The statement each sweep crashes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ddl {
    Truncate,
    /// A UNIQUE index on `v`.
    CreateIndex,
    /// ALTER TABLE by copy: COMPRESSED at 4 KiB (DYNAMIC in the system
    /// tablespace), with the UNIQUE index.
    Rebuild,
    /// DROP TABLE.
    Drop,
    /// RENAME TABLE t TO r.
    Rename,
}

fn new_index() -> IndexDef {
    IndexDef {
        name: "uv".into(),
        columns: vec![1],
        unique: true,
        prefixes: Vec::new(),
    }
}

fn config(flush: FlushAtCommit, canaries: Canaries, system: bool) -> Config {
    Config {
        canaries,
        file_per_table: !system,
        // Small enough that the index build's sort writes runs.
        sort_buffer_bytes: 4096,
        buffer_pool_pages: 24,
        log: LogConfig {
            files: 2,
            file_size_bytes: 256 * 1024,
            buffer_size_bytes: 4 * 512,
        },
        flush_at_commit: flush,
        max_dirty_pages_pct: 5,
        ..Config::default()
    }
}

fn def() -> TableDef {
    TableDef {
        name: "t".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::BIGINT_UNSIGNED,
                nullable: false,
                collation: Default::default(),
            },
            ColumnDef {
                name: "v".into(),
                ty: ColumnType::VarChar(200),
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "v".into(),
            columns: vec![1],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

fn insert(e: &mut Engine, from: u64, to: u64) {
    let s = e.session();
    e.execute(s, Request::Begin).unwrap();
    for id in from..to {
        let row = vec![
            Value::UInt(id),
            Value::Bytes(format!("{id:0>150}").into_bytes()),
        ];
        e.execute(
            s,
            Request::Insert {
                table: "t".into(),
                row,
            },
        )
        .unwrap();
    }
    e.execute(s, Request::Commit).unwrap();
    e.close_session(s).unwrap();
}

fn rows(e: &mut Engine) -> Vec<u64> {
    let s = e.session();
    let r = e
        .execute(
            s,
            Request::Scan {
                table: "t".into(),
                index: None,
                low: engine::RangeBound::Unbounded,
                high: engine::RangeBound::Unbounded,
                reverse: false,
                limit: None,
            },
        )
        .unwrap();
    e.close_session(s).unwrap();
    match r {
        engine::Step::Done(engine::Response::Rows(rows)) => rows
            .iter()
            .map(|r| match r[0] {
                Value::UInt(u) => u,
                ref v => panic!("id {v:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// The disk after setup: the table with ROWS rows, closed cleanly.
fn setup(flush: FlushAtCommit, system: bool) -> Vec<(String, Vec<u8>)> {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock),
        config(flush, Canaries::NONE, system),
    )
    .unwrap();
    e.create_table(def()).unwrap();
    insert(&mut e, 0, ROWS);
    e.close().unwrap();
    storage.files()
}

/// A run from the setup: open, one more committed transaction on the old
/// table, then the DDL (crashing at I/O `crash_at`, if given). Returns
/// the disk, its clock, the I/O range of the DDL and its result.
fn run(
    ddl: Ddl,
    files: &[(String, Vec<u8>)],
    flush: FlushAtCommit,
    canaries: Canaries,
    crash_at: Option<u64>,
    system: bool,
) -> (SimStorage, SimClock, u64, u64, bool) {
    let storage = SimStorage::with_files(files);
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock.clone()),
        config(flush, canaries, system),
    )
    .unwrap();
    insert(&mut e, ROWS, ROWS + 5);
    let start = storage.counters().ops;
    if let Some(k) = crash_at {
        storage.set_crash_at(Some(k));
    }
    let ok = match ddl {
        Ddl::Truncate => e.ddl_now("t", |e, s| e.truncate_table(s, "t")).is_ok(),
        Ddl::CreateIndex => e
            .ddl_now("t", |e, s| {
                e.create_indexes(s, "t", &[new_index()], Vec::new())
            })
            .is_ok(),
        Ddl::Rebuild => {
            let mut d = def();
            d.indexes.push(new_index());
            d.row_format = if system {
                RowFormat::Dynamic
            } else {
                RowFormat::Compressed { key_block_size: 4 }
            };
            e.ddl_now("t", |e, s| e.rebuild_table(s, "t", d)).is_ok()
        }
        Ddl::Drop => e.ddl_now("t", |e, s| e.drop_table(s, "t")).is_ok(),
        Ddl::Rename => e.ddl_now("t", |e, s| e.rename_table(s, "t", "r")).is_ok(),
    };
    let end = storage.counters().ops;
    if crash_at.is_none() {
        // Without a crash, make everything the DDL did durable (the page
        // frees after its dictionary commit are still only in the log
        // buffer) and written, so that the judgment sees all of it.
        e.checkpoint().unwrap();
    }
    drop(e);
    (storage, clock, start, end, ok)
}

/// Recovery's verdict on one crash: `Err` says what is wrong.
fn judge(
    ddl: Ddl,
    storage: &SimStorage,
    clock: SimClock,
    flush: FlushAtCommit,
    canaries: Canaries,
    done: bool,
    system: bool,
) -> Result<(), String> {
    // Recovery runs with the planted bugs too: some live in startup.
    let opened = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock),
        config(flush, canaries, system),
    );
    let (mut e, report) = opened.map_err(|err| format!("recovery failed: {err}"))?;
    let mut files: Vec<String> = storage
        .clone()
        .list()
        .unwrap()
        .into_iter()
        .filter(|f| f.ends_with(".ibd") || f.starts_with("#sql"))
        .collect();
    files.sort();
    let want_files: &[&str] = if system { &[] } else { &["t.ibd"] };
    if ddl == Ddl::Drop && e.table("t").is_err() {
        // Dropped: nothing of it left, and the name free for a new table.
        if !files.is_empty() {
            return Err(format!("files after a recovered DROP: {files:?}"));
        }
        e.create_table(def())
            .map_err(|err| format!("CREATE after the DROP failed: {err}"))?;
        insert(&mut e, 1000, 1003);
        if rows(&mut e) != [1000, 1001, 1002] {
            return Err("the new table does not hold its rows".into());
        }
        return e.close().map_err(|err| format!("close failed: {err}"));
    }
    if ddl == Ddl::Drop && done {
        return Err("the DROP returned but the table came back".into());
    }
    if ddl == Ddl::Rename {
        // The old name or the new, never both, never neither; the file
        // under the table's name.
        let (old, new) = (e.table("t").is_ok(), e.table("r").is_ok());
        if old == new {
            return Err(format!("after recovery table t {old}, table r {new}"));
        }
        if done && old {
            return Err("the RENAME returned but the old name came back".into());
        }
        let want: &[&str] = match (system, new) {
            (true, _) => &[],
            (false, true) => &["r.ibd"],
            (false, false) => &["t.ibd"],
        };
        if files != want {
            return Err(format!("files after recovery: {files:?} ({report:?})"));
        }
        if new {
            // Back under the old name, for the judgment below (which
            // renames the file again).
            e.ddl_now("r", |e, s| e.rename_table(s, "r", "t"))
                .map_err(|err| format!("renaming back failed: {err}"))?;
            files = vec![];
            if !system {
                files = storage
                    .clone()
                    .list()
                    .unwrap()
                    .into_iter()
                    .filter(|f| f.ends_with(".ibd"))
                    .collect();
            }
        }
    }
    let space = e.table("t").unwrap().space;
    if (space == 0) != system {
        return Err(format!("the table is in space {space}"));
    }
    let got = rows(&mut e);
    let old: Vec<u64> = (0..ROWS + 5).collect();
    // flush 0 and 2 may lose the last transaction before the TRUNCATE.
    let old_short: Vec<u64> = (0..ROWS).collect();
    let emptied = ddl == Ddl::Truncate && got.is_empty();
    if !(emptied || got == old || (flush != FlushAtCommit::Sync && got == old_short)) {
        return Err(format!("{} rows after recovery ({report:?})", got.len()));
    }
    if ddl == Ddl::Truncate && done && !got.is_empty() {
        return Err("the TRUNCATE returned but its rows came back".into());
    }
    let indexes: Vec<String> = e
        .table("t")
        .unwrap()
        .def
        .indexes
        .iter()
        .map(|x| x.name.clone())
        .collect();
    let whole = indexes == ["v", "uv"];
    let builds = matches!(ddl, Ddl::CreateIndex | Ddl::Rebuild);
    if !(indexes == ["v"] || builds && whole) {
        return Err(format!("indexes after recovery: {indexes:?} ({report:?})"));
    }
    if builds && done && !whole {
        return Err(format!("{ddl:?} returned but its index is gone"));
    }
    if ddl == Ddl::Rebuild {
        let compressed = e.table("t").unwrap().def.row_format != RowFormat::Compact;
        if compressed != whole {
            return Err("the rebuild's row format and indexes disagree".into());
        }
    }
    let check = e
        .check_table("t")
        .map_err(|err| format!("CHECK TABLE failed: {err}"))?;
    if !check.is_ok() {
        return Err(format!("CHECK TABLE: {:?}", check.problems));
    }
    if files != want_files {
        return Err(format!("files after recovery: {files:?} ({report:?})"));
    }
    insert(&mut e, 1000, 1003);
    if !rows(&mut e).ends_with(&[1000, 1001, 1002]) {
        return Err("the recovered table does not take rows".into());
    }
    e.close().map_err(|err| format!("close failed: {err}"))
}

/// Every crash point of one DDL statement under every flush setting and
/// crash kind: how many were tried, and the failures found.
fn sweep(ddl: Ddl, canaries: Canaries, system: bool) -> (usize, Vec<String>) {
    let mut tried = 0;
    let mut failures = Vec::new();
    for flush in [
        FlushAtCommit::Sync,
        FlushAtCommit::Write,
        FlushAtCommit::Lazy,
    ] {
        let files = setup(flush, system);
        let (storage, clock, start, end, ok) = run(ddl, &files, flush, canaries, None, system);
        assert!(ok, "{ddl:?} without a crash succeeds");
        // In the system tablespace there is no file to create, and a
        // RENAME creates none: the dictionary commit's log write and sync
        // (and a rename) may be all the I/O.
        let least = if system || ddl == Ddl::Rename { 1 } else { 5 };
        assert!(
            end > start + least,
            "{ddl:?} does I/O ({} operations)",
            end - start
        );
        if ddl == Ddl::Truncate && system {
            // No crash: the system tablespace keeps its size.
            let before = files.iter().find(|(n, _)| n == "ibdata1").unwrap().1.len();
            let size = storage.read_file("ibdata1").unwrap().len();
            assert!(size >= before, "ibdata1 never shrinks: {size} < {before}");
        } else if ddl == Ddl::Truncate {
            // No crash: the new file is the initial size.
            let size = storage.read_file("t.ibd").unwrap().len() as u64;
            assert_eq!(
                size,
                4 * engine::page::PAGE_SIZE as u64,
                "TRUNCATE gives the file back"
            );
        }
        tried += 1;
        if let Err(why) = judge(ddl, &storage, clock, flush, canaries, true, system) {
            failures.push(format!("flush {} no crash: {why}", flush.setting()));
        }
        for k in start..=end {
            for (name, mode) in CrashMode::sweep(k) {
                let (storage, clock, _, _, ok) = run(ddl, &files, flush, canaries, Some(k), system);
                // At k == end the DDL finished first: the plug is
                // pulled after it, and the crash armed at k must not strike
                // recovery instead.
                assert_eq!(ok, k == end, "flush {} crash at I/O {k}", flush.setting());
                storage.set_crash_at(None);
                storage.restart(mode);
                tried += 1;
                if let Err(why) = judge(ddl, &storage, clock, flush, canaries, ok, system) {
                    failures.push(format!(
                        "flush {} crash at I/O {k} ({name}): {why}",
                        flush.setting()
                    ));
                }
            }
        }
    }
    (tried, failures)
}

#[test]
fn truncate_leaves_the_old_table_or_the_empty_one_at_every_crash_point() {
    let (tried, failures) = sweep(Ddl::Truncate, Canaries::NONE, false);
    eprintln!("{tried} crashes of a TRUNCATE judged");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_truncate_that_reuses_the_space_id_is_caught() {
    let (tried, failures) = sweep(
        Ddl::Truncate,
        Canaries::NONE.with(Canary::TruncateReusesSpaceId),
        false,
    );
    eprintln!(
        "truncate-reuses-space-id: {} of {tried} crashes caught",
        failures.len()
    );
    for f in failures.iter().take(3) {
        eprintln!("  for example: {f}");
    }
    assert!(!failures.is_empty(), "the planted bug went unnoticed");
}

#[test]
fn create_index_leaves_no_index_or_the_whole_one_at_every_crash_point() {
    let (tried, failures) = sweep(Ddl::CreateIndex, Canaries::NONE, false);
    eprintln!("{tried} crashes of a CREATE INDEX judged");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_startup_that_keeps_a_half_built_index_is_caught() {
    let (tried, failures) = sweep(
        Ddl::CreateIndex,
        Canaries::NONE.with(Canary::SkipIndexBuildRollback),
        false,
    );
    eprintln!(
        "skip-index-build-rollback: {} of {tried} crashes caught",
        failures.len()
    );
    for f in failures.iter().take(3) {
        eprintln!("  for example: {f}");
    }
    assert!(!failures.is_empty(), "the planted bug went unnoticed");
}

#[test]
fn the_index_build_sorts_through_a_merge_file_and_builds_the_index() {
    let files = setup(FlushAtCommit::Sync, false);
    let storage = SimStorage::new();
    for (n, b) in &files {
        storage.write_file(n, b.clone());
    }
    let clock = SimClock::new();
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock),
        config(FlushAtCommit::Sync, Canaries::NONE, false),
    )
    .unwrap();
    let build = e
        .ddl_now("t", |e, s| {
            e.create_indexes(s, "t", &[new_index()], Vec::new())
        })
        .unwrap();
    assert_eq!(build.rows_scanned, ROWS);
    assert_eq!(build.entries, ROWS);
    assert!(build.runs > 1, "{build:?}: a 4 KiB buffer spills");
    assert!(e.check_table("t").unwrap().is_ok());
    // A duplicate refuses the UNIQUE index and leaves none behind.
    insert(&mut e, 500, 501);
    let s = e.session();
    let dup = vec![
        Value::UInt(501),
        Value::Bytes(format!("{:0>150}", 500).into_bytes()),
    ];
    let r = e.execute(
        s,
        Request::Insert {
            table: "t".into(),
            row: dup,
        },
    );
    assert!(
        matches!(r, Err(engine::Error::DuplicateKey { .. })),
        "{r:?}: uv holds"
    );
    let ix = IndexDef {
        name: "v_again".into(),
        columns: vec![1],
        unique: true,
        prefixes: Vec::new(),
    };
    e.ddl_now("t", |e, s| e.drop_index(s, "t", "uv", Vec::new()))
        .unwrap();
    e.execute(
        s,
        Request::Insert {
            table: "t".into(),
            row: vec![
                Value::UInt(501),
                Value::Bytes(format!("{:0>150}", 500).into_bytes()),
            ],
        },
    )
    .unwrap();
    let r = e.ddl_now("t", |e, s| e.create_indexes(s, "t", &[ix], Vec::new()));
    assert!(
        matches!(r, Err(engine::Error::DuplicateKey { .. })),
        "{r:?}"
    );
    let names: Vec<String> = e
        .table("t")
        .unwrap()
        .def
        .indexes
        .iter()
        .map(|x| x.name.clone())
        .collect();
    assert_eq!(names, ["v"]);
    assert!(e.check_table("t").unwrap().is_ok());
    let mut listed = storage.clone().list().unwrap();
    listed.retain(|f| f.starts_with('#'));
    assert!(listed.is_empty(), "merge files left: {listed:?}");
}

/// RENAME TABLE crashed at every I/O: the table under its old name or its
/// new one (once the statement returned, the new one), never both or
/// neither, with every row, and its file under the name it has.
#[test]
fn rename_leaves_the_old_name_or_the_new_one_at_every_crash_point() {
    let mut all = Vec::new();
    for system in [false, true] {
        let (tried, failures) = sweep(Ddl::Rename, Canaries::NONE, system);
        eprintln!("{tried} crashes of a RENAME judged (system tablespace: {system})");
        all.extend(failures);
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn a_copying_alter_leaves_the_old_table_or_the_new_one_at_every_crash_point() {
    let (tried, failures) = sweep(Ddl::Rebuild, Canaries::NONE, false);
    eprintln!("{tried} crashes of a copying ALTER judged");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// With innodb_file_per_table off the table lives in the system
/// tablespace: TRUNCATE builds the new trees there and frees the old ones
/// after its dictionary commit, a rebuild copies into new trees there, and
/// DROP frees the trees (their off-page columns first). At every crash
/// point the old table or the new one is there, whole, and no file.
#[test]
fn ddl_in_the_system_tablespace_is_whole_at_every_crash_point() {
    let mut all = Vec::new();
    for ddl in [Ddl::Truncate, Ddl::Rebuild, Ddl::Drop] {
        let (tried, failures) = sweep(ddl, Canaries::NONE, true);
        eprintln!("{tried} crashes of {ddl:?} in the system tablespace judged");
        all.extend(failures.into_iter().map(|f| format!("{ddl:?}: {f}")));
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}

/// Crash-heavy seed 16988: a TRUNCATE crashed after its dictionary commit,
/// recovery finished it (the old file deleted, its FILE_DELETE logged, the
/// new file renamed to `t.ibd`), the machine crashed again, and bit rot
/// hit the new file's page 0. The next recovery could not identify the
/// file and, replaying the old file's FILE_DELETE, removed it by name: the
/// table was gone, for one flipped bit. A file whose first page fails its
/// checksum must be left where it is, its table reported corrupt (or
/// rebuilt from the log), never deleted.
#[test]
fn bit_rot_on_the_first_page_of_a_truncated_table_deletes_no_file() {
    let flush = FlushAtCommit::Sync;
    let files = setup(flush, false);
    let (_, _, start, end, _) = run(Ddl::Truncate, &files, flush, Canaries::NONE, None, false);
    let (mut reported, mut rebuilt) = (0, 0);
    for k in start..end {
        // The recovery after the TRUNCATE's crash ends by writing its pages
        // and a checkpoint; the second crash comes after it, or at one of
        // its last I/O operations, before that checkpoint is down, when the
        // log past the checkpoint still holds what the first recovery
        // replayed (the new file's FILE_CREATE among it).
        let recovery_ops = {
            let (storage, clock, ..) =
                run(Ddl::Truncate, &files, flush, Canaries::NONE, Some(k), false);
            storage.set_crash_at(None);
            storage.restart(CrashMode::ProcessCrash);
            let before = storage.counters().ops;
            let opened = Engine::open(
                Box::new(storage.clone()),
                Box::new(clock.clone()),
                config(flush, Canaries::NONE, false),
            );
            let (e, _) =
                opened.unwrap_or_else(|err| panic!("crash at I/O {k}: recovery failed: {err}"));
            drop(e);
            storage.counters().ops - before
        };
        for back in 0..=3u64.min(recovery_ops) {
            let (storage, clock, ..) =
                run(Ddl::Truncate, &files, flush, Canaries::NONE, Some(k), false);
            storage.set_crash_at(None);
            storage.restart(CrashMode::ProcessCrash);
            if back > 0 {
                storage.set_crash_at(Some(storage.counters().ops + recovery_ops - back));
            }
            let opened = Engine::open(
                Box::new(storage.clone()),
                Box::new(clock.clone()),
                config(flush, Canaries::NONE, false),
            );
            match (back, opened) {
                (0, Ok((e, _))) => {
                    storage.crash_now();
                    drop(e);
                }
                (0, Err(err)) => panic!("crash at I/O {k}: recovery failed: {err}"),
                (_, Ok(_)) => panic!("crash at I/O {k}: recovery outlived its crash"),
                (_, Err(_)) if storage.crashed() => {}
                (_, Err(err)) => panic!("crash at I/O {k}: recovery failed: {err}"),
            }
            storage.set_crash_at(None);
            storage.restart(CrashMode::ProcessCrash);
            // The doublewrite buffer's copy of that page, if any, long
            // since overwritten by other pages' (as in the seed's run).
            let mut system = storage.read_file("ibdata1").expect("ibdata1");
            let page = engine::page::PAGE_SIZE;
            let slots = engine::doublewrite::DBLWR_START as usize * page
                ..(engine::doublewrite::DBLWR_START + engine::doublewrite::DBLWR_PAGES) as usize
                    * page;
            system[slots].fill(0);
            storage.write_file("ibdata1", system);
            let Some(mut page0) = storage.read_file("t.ibd") else {
                // The crash came before the first recovery renamed the new
                // file: nothing of `t.ibd` to damage.
                continue;
            };
            page0[5363] ^= 1 << 3;
            storage.write_file("t.ibd", page0);
            let r = Engine::open(
                Box::new(storage.clone()),
                Box::new(clock),
                config(flush, Canaries::NONE, false),
            );
            match r {
                Err(engine::Error::CorruptPage { file, page_no, .. }) => {
                    assert_eq!((file.as_str(), page_no), ("t.ibd", 0), "crash at I/O {k}");
                    assert!(
                        storage.read_file("t.ibd").is_some(),
                        "crash at I/O {k}: recovery deleted the file it reported corrupt"
                    );
                    reported += 1;
                }
                Ok((mut e, report)) => {
                    // The new file's FILE_CREATE was in the log too: the
                    // table was rebuilt from it under the temporary name
                    // and renamed over the damaged file. The old file's
                    // FILE_DELETE must not have removed the new one on the
                    // way (before the fix it did, at every such crash
                    // point).
                    assert!(
                        !report.files_replayed.iter().any(|f| f == "deleted t.ibd"),
                        "crash at I/O {k}: the old file's FILE_DELETE removed the table's file: {:?}",
                        report.files_replayed
                    );
                    let check = e.check_table("t").unwrap();
                    assert!(check.is_ok(), "crash at I/O {k}: {:?}", check.problems);
                    rebuilt += 1;
                }
                Err(err) => panic!("crash at I/O {k}, {back} before the end of recovery: {err}"),
            }
        }
    }
    assert!(
        reported > 0,
        "no crash point left the corrupt page to report"
    );
    assert!(
        rebuilt > 0,
        "no crash point left the new file's FILE_CREATE in the log"
    );
}
