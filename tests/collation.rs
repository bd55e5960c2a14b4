//! Collations agree everywhere they are used: the engine's index order and
//! uniqueness, its lock names, the SQL layer's comparisons and the
//! fuzzer's models all give the same answers for random latin1 strings
//! (case, accents as latin1_swedish_ci folds them, trailing spaces and the
//! control bytes that sort below a space).
//!
//! The same for utf8 strings in utf8_general_ci and utf8_bin (case,
//! accents and ß folded by MySQL's weights in the engine and by the
//! models' own rules, fullwidth and Cyrillic letters; bytes that start no
//! character in the comparisons).
//!
//! The judge is the models' collation (`models::Collation`, which restates
//! latin1_swedish_ci from its rules rather than copying the engine's
//! weight table): first its weights and comparisons against the engine's
//! for every byte and for random strings, then the engine and the SQL
//! layer against it. An insert must succeed exactly when no accepted value
//! is equal to it in the column's collation, a scan of the unique index
//! must come back in the collation's order, and a point read must find
//! the one value equal to the key. Besides wrong weights, these catch
//! plumbing: a field compared as bytes, a fast path taken for a collated
//! field, a duplicate check or lock name that compares bytes.

use engine::record::Collation;
use engine::sql::{Outcome, Reply, Server};
use engine::{
    ColumnDef, ColumnType, Config, Engine, Error, IndexDef, RangeBound, Request, Response,
    RowFormat, SessionId, Step, TableDef, Value,
};
use proptest::prelude::*;
use sim::clock::SimClock;
use sim::storage::SimStorage;
use std::cmp::Ordering;

/// Bytes that fold together or sort around each other in
/// latin1_swedish_ci: a/A, e/é/É/E, Ä (after Z), z, space, tab.
const ALPHABET: &[u8] = b"aAeEbz \t\xe9\xc9\xc4";

fn value() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(ALPHABET), 0..5)
}

/// Characters that fold together or sort around each other in
/// utf8_general_ci (as UTF-8). No byte that starts no character: the
/// server refuses those (1366), and MySQL's comparison compares a string
/// holding one as bytes, unpadded, so a padded CHAR would order apart
/// from its value (the comparisons of such bytes are checked above).
const UTF8_ALPHABET: &[&[u8]] = &[
    b"a",
    b"A",
    b"e",
    b"E",
    "é".as_bytes(),
    "É".as_bytes(),
    "ß".as_bytes(),
    b"s",
    b"S",
    "Ä".as_bytes(),
    "ä".as_bytes(),
    b"z",
    "Ｄ".as_bytes(),
    "ｄ".as_bytes(),
    "ж".as_bytes(),
    "Ж".as_bytes(),
    b" ",
    b"\t",
];

fn utf8_value() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(proptest::sample::select(UTF8_ALPHABET), 0..5)
        .prop_map(|cs| cs.concat())
}

/// The models' collation of the engine's.
fn model(c: Collation) -> models::Collation {
    models::Collation::by_name(c.name()).expect("the models know every collation the engine has")
}

/// Every Latin-1 byte weighs the same in the engine's table and in the
/// models' restatement of latin1_swedish_ci, and every pair of bytes
/// compares the same.
#[test]
fn the_engine_and_the_models_weigh_every_byte_alike() {
    for coll in Collation::ALL {
        let m = model(coll);
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(
                    coll.compare(&[a], &[b]),
                    m.compare(&[a], &[b]),
                    "{coll:?}: {a:#04x} against {b:#04x}"
                );
            }
        }
    }
}

fn def(name: &str, collation: Collation, format: RowFormat) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::INT,
                nullable: false,
                collation: Collation::Binary,
            },
            ColumnDef {
                name: "s".into(),
                ty: ColumnType::VarChar(16),
                nullable: false,
                collation,
            },
            ColumnDef {
                name: "c".into(),
                ty: ColumnType::Char(16),
                nullable: false,
                collation,
            },
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: vec![
            IndexDef {
                name: "s".into(),
                columns: vec![1],
                unique: true,
                prefixes: Vec::new(),
            },
            IndexDef {
                name: "c".into(),
                columns: vec![2],
                unique: false,
                prefixes: Vec::new(),
            },
        ],
        row_format: format,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

fn run(e: &mut Engine, s: SessionId, r: Request) -> engine::Result<Response> {
    match e.execute(s, r)? {
        Step::Done(resp) => Ok(resp),
        Step::Waiting => panic!("one session never waits"),
    }
}

fn scan(
    e: &mut Engine,
    s: SessionId,
    index: &str,
    low: RangeBound,
    high: RangeBound,
) -> Vec<Vec<Value>> {
    match run(
        e,
        s,
        Request::Scan {
            table: "t".into(),
            index: Some(index.into()),
            low,
            high,
            reverse: false,
            limit: None,
        },
    )
    .expect("the scan succeeds")
    {
        Response::Rows(r) => r,
        other => panic!("a scan gives rows, not {other:?}"),
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => panic!("a string column, not {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The canonical form lock names use is equal exactly when the
    /// models say equal, and the engine orders as the models do, for
    /// strings over the folding alphabet and over every byte; the models'
    /// key of a lock name (a canonical form) is the key of the value.
    #[test]
    fn the_engine_compares_and_names_as_the_models_do(
        a in value(),
        b in value(),
        x in proptest::collection::vec(any::<u8>(), 0..6),
        y in proptest::collection::vec(any::<u8>(), 0..6),
        u in utf8_value(),
        w in utf8_value(),
    ) {
        // In utf8_general_ci a random byte above 127 would start a
        // character of any script, whose weights the models restate only
        // for the letters of UTF8_ALPHABET's kinds: there those bytes
        // become ones that start no character (0xF8..=0xFF).
        let never_leading = |v: &Vec<u8>| -> Vec<u8> {
            v.iter().map(|&c| if c < 0x80 { c } else { 0xF8 | (c & 7) }).collect()
        };
        let (x8, y8) = (never_leading(&x), never_leading(&y));
        for coll in Collation::ALL {
            let m = model(coll);
            let (x, y) = if coll == Collation::Utf8GeneralCi { (&x8, &y8) } else { (&x, &y) };
            for (a, b) in [(&a, &b), (x, y), (&a, x), (&u, &w), (&u, x), (&u, &a)] {
                prop_assert_eq!(
                    coll.canonical(a) == coll.canonical(b),
                    m.compare(a, b) == Ordering::Equal,
                    "{:?} {:?} {:?}", coll, a, b
                );
                prop_assert_eq!(coll.compare(a, b), m.compare(a, b), "{:?} {:?} {:?}", coll, a, b);
                prop_assert_eq!(m.compare(&coll.canonical(a), a), Ordering::Equal, "{:?} {:?}", coll, a);
            }
        }
    }

    /// Uniqueness, index order and point reads in the engine follow the
    /// column's collation, with the inserted rows committed, updated to
    /// other case, and deleted and inserted again.
    #[test]
    fn engine_index_order_and_uniqueness_follow_the_collation(
        latin1 in proptest::collection::vec(value(), 1..24),
        utf8 in proptest::collection::vec(utf8_value(), 1..24),
        which in 0..4usize,
        compact in any::<bool>(),
    ) {
        let coll = [
            Collation::Latin1SwedishCi,
            Collation::Latin1Bin,
            Collation::Utf8GeneralCi,
            Collation::Utf8Bin,
        ][which];
        let values = if which < 2 { latin1 } else { utf8 };
        let m = model(coll);
        let format = if compact { RowFormat::Compact } else { RowFormat::Redundant };
        let storage = SimStorage::new();
        let clock = SimClock::new();
        let (mut e, _) = Engine::open(Box::new(storage), Box::new(clock), Config::default())
            .expect("the engine opens");
        e.create_table(def("t", coll, format)).expect("the table is created");
        let s = e.session();
        let mut accepted: Vec<(i64, Vec<u8>)> = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let id = i as i64;
            let clash = accepted.iter().any(|(_, a)| m.compare(a, v) == Ordering::Equal);
            let r = run(&mut e, s, Request::Insert {
                table: "t".into(),
                row: vec![Value::Int(id), Value::Bytes(v.clone()), Value::Bytes(v.clone())],
            });
            match r {
                Ok(_) => {
                    prop_assert!(!clash, "{:?} went in beside an equal value: {:?}", v, accepted);
                    accepted.push((id, v.clone()));
                }
                Err(Error::DuplicateKey { .. }) => {
                    prop_assert!(clash, "{:?} refused with no equal value in {:?}", v, accepted);
                }
                Err(other) => prop_assert!(false, "insert failed: {other}"),
            }
        }
        let swap = |v: &[u8]| -> Vec<u8> {
            v.iter().map(|b| match b {
                b'a'..=b'z' => b.to_ascii_uppercase(),
                b'A'..=b'Z' => b.to_ascii_lowercase(),
                b => *b,
            }).collect()
        };
        // Swap the case of every row's value in a transaction that rolls
        // back: the entries must get their old bytes back.
        run(&mut e, s, Request::Begin).expect("BEGIN");
        for (id, v) in &accepted {
            let r = run(&mut e, s, Request::Update {
                table: "t".into(),
                key: vec![Value::Int(*id)],
                set: vec![("s".into(), Value::Bytes(swap(v)))],
            });
            prop_assert!(matches!(r, Ok(_) | Err(Error::DuplicateKey { .. })), "{:?}", r);
        }
        run(&mut e, s, Request::Rollback).expect("ROLLBACK");
        let report = e.check_table("t").expect("CHECK TABLE runs");
        prop_assert!(report.is_ok(), "after the rollback: {:?}", report.problems);
        // Swap the case of every other row's value (a change of bytes, not
        // of the value in a case-insensitive collation): the index takes
        // the new bytes.
        for (k, (id, v)) in accepted.iter_mut().enumerate().filter(|(k, _)| k % 2 == 0) {
            let _ = k;
            let swapped = swap(v);
            let r = run(&mut e, s, Request::Update {
                table: "t".into(),
                key: vec![Value::Int(*id)],
                set: vec![("s".into(), Value::Bytes(swapped.clone()))],
            });
            match r {
                Ok(_) => *v = swapped,
                // In latin1_bin the swapped value may equal another row's.
                Err(Error::DuplicateKey { .. }) => {
                    prop_assert!(matches!(coll, Collation::Latin1Bin | Collation::Utf8Bin))
                }
                Err(other) => prop_assert!(false, "update failed: {other}"),
            }
        }
        let rows = scan(&mut e, s, "s", RangeBound::Unbounded, RangeBound::Unbounded);
        prop_assert_eq!(rows.len(), accepted.len());
        let got: Vec<Vec<u8>> = rows.iter().map(|r| bytes(&r[1])).collect();
        for w in got.windows(2) {
            prop_assert_eq!(m.compare(&w[0], &w[1]), Ordering::Less, "index order: {:?}", got);
        }
        // The fuzzer's models key rows by `ModelValue::Collated`: their
        // order is the index's.
        let mut keys: Vec<models::ModelValue> = accepted
            .iter()
            .map(|(_, v)| models::ModelValue::Bytes(v.as_slice().into()).keyed(m))
            .collect();
        keys.sort();
        let key_bytes: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| match k {
                models::ModelValue::Collated(b, _) => b.to_vec(),
                other => panic!("a collated key, not {other:?}"),
            })
            .collect();
        prop_assert_eq!(&key_bytes, &got, "the models' key order");
        for (id, v) in &accepted {
            // The stored bytes are the ones written last, whatever the
            // case of the key that finds them.
            let found = scan(
                &mut e, s, "s",
                RangeBound::Included(vec![Value::Bytes(v.to_ascii_uppercase())]),
                RangeBound::Included(vec![Value::Bytes(v.to_ascii_uppercase())]),
            );
            let want: Vec<i64> = accepted
                .iter()
                .filter(|(_, a)| m.compare(a, &v.to_ascii_uppercase()) == Ordering::Equal)
                .map(|(i, _)| *i)
                .collect();
            let ids: Vec<i64> = found.iter().map(|r| match r[0] { Value::Int(i) => i, _ => -1 }).collect();
            prop_assert_eq!(&ids, &want, "lookup of {:?}", v);
            if let Some(r) = found.iter().find(|r| r[0] == Value::Int(*id)) {
                prop_assert_eq!(&bytes(&r[1]), v);
            }
        }
        // The non-unique CHAR index: every row, in collation order (CHAR
        // pads, so 'a' and 'a ' are one value and keep their insert order
        // by primary key).
        let rows = scan(&mut e, s, "c", RangeBound::Unbounded, RangeBound::Unbounded);
        let got: Vec<Vec<u8>> = rows.iter().map(|r| bytes(&r[2])).collect();
        for w in got.windows(2) {
            prop_assert_ne!(m.compare(&w[0], &w[1]), Ordering::Greater, "CHAR index order: {:?}", got);
        }
        let report = e.check_table("t").expect("CHECK TABLE runs");
        prop_assert!(report.is_ok(), "{:?}", report.problems);
    }

    /// The SQL layer's WHERE, ORDER BY, DISTINCT and unique index agree
    /// with the engine's for ASCII values of mixed case and trailing
    /// spaces (latin1_swedish_ci, the default), and for utf8 values with
    /// accents, ß and Cyrillic letters in a utf8 column.
    #[test]
    fn sql_comparisons_agree_with_the_index(
        latin1 in proptest::collection::vec("[aAbB ]{0,4}", 1..16),
        utf8 in proptest::collection::vec("[aAsSéÉßжЖ ]{0,4}", 1..16),
        use_utf8 in any::<bool>(),
    ) {
        let (coll, values, charset) = if use_utf8 {
            (models::Collation::Utf8GeneralCi, utf8, " CHARACTER SET utf8")
        } else {
            (models::Collation::Latin1SwedishCi, latin1, "")
        };
        let st = SimStorage::new();
        let clock = SimClock::new();
        let (mut srv, _) = Server::open(Box::new(st), Box::new(clock), sim::script::script_config())
            .expect("the server opens");
        let c = srv.connect();
        let exec = |srv: &mut Server, sql: &str| match srv.execute(c, sql) {
            Outcome::Done(r) => r,
            Outcome::Blocked => panic!("one connection never blocks"),
        };
        exec(&mut srv, &format!("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10){charset}, UNIQUE KEY (s)) ENGINE=InnoDB"));
        let mut accepted: Vec<String> = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let clash = accepted.iter().any(|a| coll.compare(a.as_bytes(), v.as_bytes()) == Ordering::Equal);
            match exec(&mut srv, &format!("INSERT INTO t VALUES ({i}, '{v}')")) {
                Reply::Ok { .. } => {
                    prop_assert!(!clash);
                    accepted.push(v.clone());
                }
                Reply::Error(e) => prop_assert!(clash && e.code == 1062, "{e}"),
                other => prop_assert!(false, "{other:?}"),
            }
        }
        let Reply::Rows { rows, .. } = exec(&mut srv, "SELECT s FROM t ORDER BY s") else {
            panic!("a select gives rows")
        };
        prop_assert_eq!(rows.len(), accepted.len());
        let got: Vec<Vec<u8>> = rows.iter().map(|r| r[0].render().into_bytes()).collect();
        for w in got.windows(2) {
            prop_assert_eq!(coll.compare(&w[0], &w[1]), Ordering::Less);
        }
        for v in &values {
            let Reply::Rows { rows, .. } = exec(&mut srv, &format!("SELECT id FROM t WHERE s = '{v}'")) else {
                panic!("a select gives rows")
            };
            let want = accepted.iter().filter(|a| coll.compare(a.as_bytes(), v.as_bytes()) == Ordering::Equal).count();
            prop_assert_eq!(rows.len(), want, "WHERE s = '{}'", v);
            let Reply::Rows { rows, .. } = exec(&mut srv, &format!("SELECT COUNT(*) FROM t WHERE s > '{v}'")) else {
                panic!("a select gives rows")
            };
            let want = accepted.iter().filter(|a| coll.compare(a.as_bytes(), v.as_bytes()) == Ordering::Greater).count();
            prop_assert_eq!(rows[0][0].render(), want.to_string(), "WHERE s > '{}'", v);
        }
    }
}
