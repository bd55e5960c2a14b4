//! A DELETE that cascades through two levels of FOREIGN KEY constraints
//! (a parent row, its 30 children, their 90 grandchildren, in tables larger than the buffer pool), crashed at
//! every one of its I/O operations and its commit's, under each
//! `innodb_flush_log_at_trx_commit` setting, after a process crash and
//! after a power loss (every unsynced operation lost, and a seeded mix of
//! kept, lost and torn ones). Recovery must leave no child row whose
//! parent is gone, and the delete whole or not at all: the parent with
//! all of its descendants, or none of them; under flush 1, none once the
//! commit returned. The tables pass CHECK TABLE.
//!
//! The negative control plants `cascade-skips-second-level`: the same
//! sweep must find the grandchildren left behind.

use engine::redo::LogConfig;
use engine::{
    Canaries, Canary, ColumnDef, ColumnType, Config, Engine, FlushAtCommit, IndexDef, Request,
    RowFormat, TableDef, Value,
};
use sim::clock::SimClock;
use sim::storage::{CrashMode, SimStorage};
use std::collections::BTreeSet;

const PARENTS: u64 = 10;
const CHILDREN: u64 = 300;
const GRANDCHILDREN: u64 = 900;
/// The parent row the DELETE removes.
const VICTIM: u64 = 3;

fn config(flush: FlushAtCommit, canaries: Canaries) -> Config {
    Config {
        canaries,
        buffer_pool_pages: 16,
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

fn column(name: &str, nullable: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: ColumnType::BIGINT_UNSIGNED,
        nullable,
        collation: Default::default(),
    }
}

/// Table `name` (`id`, `up`, `pad`), `up` naming `parent`'s `id` with ON
/// DELETE CASCADE when a parent is given.
fn def(name: &str, parent: Option<&str>) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            column("id", false),
            column("up", true),
            ColumnDef {
                name: "pad".into(),
                ty: ColumnType::VarChar(200),
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![IndexDef {
            name: "up".into(),
            columns: vec![1],
            unique: false,
            prefixes: Vec::new(),
        }],
        row_format: RowFormat::Compact,
        foreign: parent
            .map(|p| engine::dict::ForeignDef {
                id: format!("{name}_ibfk_1"),
                columns: vec![1],
                parent: p.into(),
                parent_columns: vec!["id".into()],
                on_delete: engine::dict::FkAction::Cascade,
                on_update: engine::dict::FkAction::Restrict,
            })
            .into_iter()
            .collect(),
        server: Vec::new(),
    }
}

/// The rows of `table`: (id, up).
fn rows(e: &mut Engine, table: &str) -> Vec<(u64, Option<u64>)> {
    let s = e.session();
    let r = e
        .execute(
            s,
            Request::Scan {
                table: table.into(),
                index: None,
                low: engine::RangeBound::Unbounded,
                high: engine::RangeBound::Unbounded,
                reverse: false,
                limit: None,
            },
        )
        .unwrap();
    e.close_session(s).unwrap();
    let uint = |v: &Value| match v {
        Value::UInt(u) => Some(*u),
        Value::Null => None,
        v => panic!("{v:?}"),
    };
    match r {
        engine::Step::Done(engine::Response::Rows(rows)) => rows
            .iter()
            .map(|r| (uint(&r[0]).expect("an id"), uint(&r[1])))
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// The disk after setup: the three tables filled, closed cleanly.
fn setup(flush: FlushAtCommit) -> Vec<(String, Vec<u8>)> {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock),
        config(flush, Canaries::NONE),
    )
    .unwrap();
    e.create_table_checked(def("p", None), true).unwrap();
    e.create_table_checked(def("c", Some("p")), true).unwrap();
    e.create_table_checked(def("g", Some("c")), true).unwrap();
    let s = e.session();
    e.execute(s, Request::Begin).unwrap();
    let mut put = |table: &str, id: u64, up: Option<u64>| {
        let row = vec![
            Value::UInt(id),
            up.map_or(Value::Null, Value::UInt),
            Value::Bytes(format!("{table}{id:0>120}").into_bytes()),
        ];
        let r = e.execute(
            s,
            Request::Insert {
                table: table.into(),
                row,
            },
        );
        assert!(matches!(r, Ok(engine::Step::Done(_))), "{r:?}");
    };
    for id in 0..PARENTS {
        put("p", id, None);
    }
    for id in 0..CHILDREN {
        put("c", id, Some(id % PARENTS));
    }
    for id in 0..GRANDCHILDREN {
        put("g", id, Some(id % CHILDREN));
    }
    e.execute(s, Request::Commit).unwrap();
    e.close_session(s).unwrap();
    e.close().unwrap();
    storage.files()
}

/// A run from the setup: open, then BEGIN, DELETE of the victim parent,
/// COMMIT (crashing at I/O `crash_at`, if given). Returns the disk, its
/// clock, the I/O range of the transaction and whether its commit
/// returned.
fn run(
    files: &[(String, Vec<u8>)],
    flush: FlushAtCommit,
    canaries: Canaries,
    crash_at: Option<u64>,
) -> (SimStorage, SimClock, u64, u64, bool) {
    let storage = SimStorage::with_files(files);
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock.clone()),
        config(flush, canaries),
    )
    .unwrap();
    let start = storage.counters().ops;
    if let Some(k) = crash_at {
        storage.set_crash_at(Some(k));
    }
    let s = e.session();
    let ok = (|| {
        e.execute(s, Request::Begin).ok()?;
        match e
            .execute(
                s,
                Request::Delete {
                    table: "p".into(),
                    key: vec![Value::UInt(VICTIM)],
                },
            )
            .ok()?
        {
            engine::Step::Done(engine::Response::Affected(1)) => {}
            other => panic!("the delete: {other:?}"),
        }
        e.execute(s, Request::Commit).ok()
    })()
    .is_some();
    let end = storage.counters().ops;
    if crash_at.is_none() {
        e.checkpoint().unwrap();
    }
    drop(e);
    (storage, clock, start, end, ok)
}

/// Recovery's verdict on one crash: `Err` says what is wrong.
fn judge(
    storage: &SimStorage,
    clock: SimClock,
    flush: FlushAtCommit,
    canaries: Canaries,
    committed: bool,
) -> Result<(), String> {
    let (mut e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(clock),
        config(flush, canaries),
    )
    .map_err(|err| format!("recovery failed: {err}"))?;
    let p = rows(&mut e, "p");
    let c = rows(&mut e, "c");
    let g = rows(&mut e, "g");
    let ids = |t: &[(u64, Option<u64>)]| t.iter().map(|r| r.0).collect::<BTreeSet<u64>>();
    let (pid, cid) = (ids(&p), ids(&c));
    if let Some(orphan) = c.iter().find(|r| r.1.is_some_and(|u| !pid.contains(&u))) {
        return Err(format!(
            "child {} names parent {:?}, which is gone",
            orphan.0, orphan.1
        ));
    }
    if let Some(orphan) = g.iter().find(|r| r.1.is_some_and(|u| !cid.contains(&u))) {
        return Err(format!(
            "grandchild {} names child {:?}, which is gone",
            orphan.0, orphan.1
        ));
    }
    // All or nothing: the victim and its 30 children and 90 grandchildren.
    let kept = pid.contains(&VICTIM);
    let want = |n: u64, cut: u64| if kept { n } else { n - cut };
    let counts = (p.len() as u64, c.len() as u64, g.len() as u64);
    let cut_c = CHILDREN / PARENTS;
    if counts
        != (
            want(PARENTS, 1),
            want(CHILDREN, cut_c),
            want(GRANDCHILDREN, cut_c * (GRANDCHILDREN / CHILDREN)),
        )
    {
        return Err(format!(
            "the delete is partial: {counts:?} rows with the parent {}",
            if kept { "kept" } else { "gone" }
        ));
    }
    if kept && committed && flush == FlushAtCommit::Sync {
        return Err("a commit that returned under flush 1 was lost".into());
    }
    for t in ["p", "c", "g"] {
        let report = e
            .check_table(t)
            .map_err(|err| format!("CHECK TABLE {t}: {err}"))?;
        if !report.is_ok() {
            return Err(format!("CHECK TABLE {t}: {}", report.problems.join("; ")));
        }
    }
    Ok(())
}

fn sweep(canaries: Canaries) -> (usize, Vec<String>) {
    let mut tried = 0;
    let mut failures = Vec::new();
    for flush in [
        FlushAtCommit::Sync,
        FlushAtCommit::Write,
        FlushAtCommit::Lazy,
    ] {
        let files = setup(flush);
        let (storage, clock, start, end, ok) = run(&files, flush, canaries, None);
        assert!(ok, "the delete without a crash commits");
        assert!(end > start, "the transaction does I/O");
        tried += 1;
        if let Err(why) = judge(&storage, clock, flush, canaries, true) {
            failures.push(format!("flush {} no crash: {why}", flush.setting()));
        }
        for k in start..=end {
            for (name, mode) in CrashMode::sweep(k) {
                let (storage, clock, _, _, ok) = run(&files, flush, canaries, Some(k));
                storage.set_crash_at(None);
                storage.restart(mode);
                tried += 1;
                if let Err(why) = judge(&storage, clock, flush, canaries, ok) {
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
fn a_cascading_delete_leaves_no_orphan_at_any_crash_point() {
    let (tried, failures) = sweep(Canaries::NONE);
    // About a hundred I/O operations a setting (the cascade's page
    // writes among them), each crashed three ways.
    assert!(tried > 600, "only {tried} crash points");
    assert!(
        failures.is_empty(),
        "{} of {tried}: {failures:#?}",
        failures.len()
    );
}

#[test]
fn a_cascade_that_skips_the_second_level_is_caught() {
    let (_, failures) = sweep(Canaries::NONE.with(Canary::CascadeSkipsSecondLevel));
    assert!(
        failures.iter().any(|f| f.contains("grandchild")),
        "the sweep missed the planted bug: {failures:?}"
    );
}
