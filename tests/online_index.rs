//! A read view older than an index built by fast index creation, and why
//! it must get 1412 (`row_merge_is_index_usable`): the build reads each
//! row's newest version, so the index has no entry for an older value a
//! view still sees, nor for a row a later change moved. The test keeps an
//! old REPEATABLE READ view open across committed changes and a CREATE
//! INDEX, then reads through the new index: the engine must refuse with
//! 1412, a view taken after the build must read it in full, and with the
//! check planted away (`old-views-read-new-index`) the old view's rows
//! through the index differ from what the same view reads from the
//! clustered index, the answer the test takes as truth.

use engine::{
    Canaries, Canary, ColumnDef, ColumnType, Config, Engine, Error, IndexDef, RangeBound, Request,
    Response, RowFormat, SessionId, Step, TableDef, Value,
};
use sim::clock::SimClock;
use sim::storage::SimStorage;

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
                ty: ColumnType::VarChar(20),
                nullable: false,
                collation: Default::default(),
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: Vec::new(),
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

fn run(e: &mut Engine, s: SessionId, r: Request) -> Result<Response, Error> {
    match e.execute(s, r)? {
        Step::Done(resp) => Ok(resp),
        Step::Waiting => panic!("nothing here waits"),
    }
}

fn scan(e: &mut Engine, s: SessionId, index: Option<&str>) -> Result<Vec<(u64, Vec<u8>)>, Error> {
    let r = run(
        e,
        s,
        Request::Scan {
            table: "t".into(),
            index: index.map(str::to_string),
            low: RangeBound::Unbounded,
            high: RangeBound::Unbounded,
            reverse: false,
            limit: None,
        },
    )?;
    let Response::Rows(rows) = r else {
        panic!("a scan returns rows: {r:?}")
    };
    Ok(rows
        .into_iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::UInt(id), Value::Bytes(v)) => (*id, v.clone()),
            other => panic!("row {other:?}"),
        })
        .collect())
}

/// The rows a view reads from the clustered index, in the new index's
/// order (by `v`, then the primary key).
fn by_value(mut rows: Vec<(u64, Vec<u8>)>) -> Vec<(u64, Vec<u8>)> {
    rows.sort_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
    rows
}

/// Opens the engine, loads 30 rows, opens an old view in one session,
/// commits changes of the indexed column, a delete and an insert in
/// another, and builds the index. Returns the engine and the old view's
/// session, with the rows that view read before the build.
fn old_view_and_new_index(canaries: Canaries) -> (Engine, SessionId, Vec<(u64, Vec<u8>)>) {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let config = Config {
        canaries,
        ..Config::default()
    };
    let (mut e, _) = Engine::open(Box::new(storage), Box::new(clock), config).unwrap();
    e.create_table(def()).unwrap();
    let w = e.session();
    run(&mut e, w, Request::Begin).unwrap();
    for id in 0..30u64 {
        let row = vec![Value::UInt(id), Value::Bytes(format!("v{}", id % 7).into())];
        run(
            &mut e,
            w,
            Request::Insert {
                table: "t".into(),
                row,
            },
        )
        .unwrap();
    }
    run(&mut e, w, Request::Commit).unwrap();

    let old = e.session();
    run(&mut e, old, Request::Begin).unwrap();
    let before = scan(&mut e, old, None).unwrap();
    assert_eq!(before.len(), 30);

    run(&mut e, w, Request::Begin).unwrap();
    for id in [3u64, 11, 20] {
        run(
            &mut e,
            w,
            Request::Update {
                table: "t".into(),
                key: vec![Value::UInt(id)],
                set: vec![("v".into(), Value::Bytes(b"moved".to_vec()))],
            },
        )
        .unwrap();
    }
    run(
        &mut e,
        w,
        Request::Delete {
            table: "t".into(),
            key: vec![Value::UInt(7)],
        },
    )
    .unwrap();
    let row = vec![Value::UInt(100), Value::Bytes(b"v1".to_vec())];
    run(
        &mut e,
        w,
        Request::Insert {
            table: "t".into(),
            row,
        },
    )
    .unwrap();
    run(&mut e, w, Request::Commit).unwrap();

    let index = IndexDef {
        name: "nv".into(),
        columns: vec![1],
        unique: false,
        prefixes: Vec::new(),
    };
    e.ddl_now("t", |e, s| e.create_indexes(s, "t", &[index], Vec::new()))
        .unwrap();
    (e, old, before)
}

#[test]
fn a_view_older_than_a_new_index_gets_1412_and_a_newer_one_reads_it_whole() {
    let (mut e, old, before) = old_view_and_new_index(Canaries::NONE);
    let r = scan(&mut e, old, Some("nv"));
    assert!(matches!(r, Err(Error::TableDefChanged)), "{r:?}");
    assert_eq!(Error::TableDefChanged.mysql_code(), Some(1412));
    // The old view still reads the clustered index as it was.
    assert_eq!(scan(&mut e, old, None).unwrap(), before);
    run(&mut e, old, Request::Commit).unwrap();

    // A view taken after the build: the index holds every row it sees.
    let new = e.session();
    run(&mut e, new, Request::Begin).unwrap();
    let truth = by_value(scan(&mut e, new, None).unwrap());
    assert_eq!(truth.len(), 30, "29 old rows and the insert");
    assert_eq!(scan(&mut e, new, Some("nv")).unwrap(), truth);
    run(&mut e, new, Request::Commit).unwrap();
    assert!(e.check_table("t").unwrap().is_ok());
}

#[test]
fn without_the_check_an_old_view_reads_wrong_rows_through_the_new_index() {
    let (mut e, old, before) =
        old_view_and_new_index(Canaries::NONE.with(Canary::OldViewsReadNewIndex));
    let truth = by_value(before);
    let through_index = scan(&mut e, old, Some("nv")).unwrap();
    assert_ne!(
        through_index, truth,
        "the planted bug must change what the old view reads"
    );
    // What it misses: the rows whose value moved after the view (the
    // index has only their new value).
    for id in [3u64, 11, 20] {
        let want = truth
            .iter()
            .find(|(i, _)| *i == id)
            .expect("the view sees it");
        assert!(
            !through_index.contains(want),
            "row {id} as the old view sees it should be missing from the new index's answer"
        );
    }
}
