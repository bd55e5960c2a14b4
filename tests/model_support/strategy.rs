//! Proptest strategies: configurations and operation mixes.

use super::ops::*;
use engine::{Isolation, RowFormat};
use proptest::prelude::*;

/// Every row format, compressed tables at every KEY_BLOCK_SIZE.
pub fn row_format() -> impl Strategy<Value = RowFormat> {
    prop_oneof![
        Just(RowFormat::Redundant),
        Just(RowFormat::Compact),
        Just(RowFormat::Dynamic),
        prop::sample::select(vec![1u32, 2, 4, 8, 16])
            .prop_map(|key_block_size| RowFormat::Compressed { key_block_size }),
    ]
}

pub fn sb_id() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0..SB_HOT_IDS, 1 => 0..SB_IDS]
}

pub fn doc_id() -> impl Strategy<Value = i64> {
    DOCS_IDS
}

pub fn table_id() -> impl Strategy<Value = (Tbl, i64)> {
    prop_oneof![
        sb_id().prop_map(|id| (Tbl::Sb, i64::from(id))),
        doc_id().prop_map(|id| (Tbl::Docs, id))
    ]
}

/// Long values from a few bytes to 100 KB: around COMPACT's 768-byte local
/// prefix, around the half-page limit of a record, and well off page.
pub fn doc() -> impl Strategy<Value = Option<Doc>> {
    let d =
        |r: std::ops::Range<u32>| (r, any::<u8>()).prop_map(|(len, seed)| Some(Doc { len, seed }));
    prop_oneof![
        1 => Just(None),
        4 => d(0..64),
        2 => d(700..900),
        2 => d(7000..9000),
        1 => d(15_000..17_000),
        1 => d(60_000..100_001),
    ]
}

pub fn v_choice() -> impl Strategy<Value = u8> {
    0..V_CHOICES.len() as u8
}

pub fn bound(values: BoxedStrategy<i64>) -> impl Strategy<Value = Bnd> {
    prop_oneof![2 => Just(Bnd::Unbounded), 3 => values.clone().prop_map(Bnd::Included), 2 => values.prop_map(Bnd::Excluded)]
}

pub fn scan_spec() -> impl Strategy<Value = ScanSpec> {
    (prop_oneof![Just(Tbl::Sb), Just(Tbl::Docs)], any::<bool>()).prop_flat_map(
        |(table, secondary)| {
            let values: BoxedStrategy<i64> = match (table, secondary) {
                (Tbl::Sb, false) => sb_id().prop_map(i64::from).boxed(),
                (Tbl::Sb, true) => (0..SB_K_VALUES).prop_map(i64::from).boxed(),
                (Tbl::Docs, false) => doc_id().boxed(),
                (Tbl::Docs, true) => v_choice().prop_map(i64::from).boxed(),
            };
            (
                bound(values.clone()),
                bound(values),
                any::<bool>(),
                proptest::option::weighted(0.3, 0u8..20),
            )
                .prop_map(move |(low, high, reverse, limit)| ScanSpec {
                    table,
                    secondary,
                    low,
                    high,
                    reverse,
                    limit,
                })
        },
    )
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => table_id().prop_map(|(table, id)| Op::Get { table, id }),
        6 => scan_spec().prop_map(Op::Scan),
        10 => (sb_id(), 0..SB_K_VALUES, any::<u16>()).prop_map(|(id, k, c)| Op::InsertSb { id, k, c }),
        10 => (doc_id(), v_choice(), doc()).prop_map(|(id, v, doc)| Op::InsertDoc { id, v, doc }),
        2 => (0..SB_IDS, 1u16..200).prop_map(|(start, n)| Op::BulkInsertSb { start, n }),
        1 => table_id().prop_map(|(table, id)| Op::InsertTooLong { table, id }),
        6 => (sb_id(), proptest::option::of(0..SB_K_VALUES), proptest::option::of(any::<u16>()))
            .prop_map(|(id, k, c)| Op::UpdateSb { id, k, c: if k.is_none() && c.is_none() { Some(0) } else { c } }),
        6 => (doc_id(), proptest::option::of(v_choice()), proptest::option::of(doc()))
            .prop_map(|(id, v, doc)| Op::UpdateDoc { id, v: if v.is_none() && doc.is_none() { Some(0) } else { v }, doc }),
        3 => prop_oneof![
            (sb_id(), sb_id(), proptest::option::of(0..SB_K_VALUES as u8)).prop_map(|(id, new_id, also)| Op::UpdateKey { table: Tbl::Sb, id: i64::from(id), new_id: i64::from(new_id), also }),
            (doc_id(), doc_id(), proptest::option::of(v_choice())).prop_map(|(id, new_id, also)| Op::UpdateKey { table: Tbl::Docs, id, new_id, also }),
        ],
        6 => table_id().prop_map(|(table, id)| Op::Delete { table, id }),
        4 => Just(Op::Begin),
        3 => Just(Op::Commit),
        3 => Just(Op::Rollback),
        3 => (0u8..2).prop_map(Op::Savepoint),
        3 => (0u8..3).prop_map(Op::RollbackToSavepoint),
        1 => (0u8..3).prop_map(Op::ReleaseSavepoint),
        1 => Just(Op::ToggleAutocommit),
        2 => Just(Op::PurgeAll),
        1 => Just(Op::Checkpoint),
        1 => Just(Op::Tick),
        1 => Just(Op::Verify),
        1 => Just(Op::Reopen),
        1 => Just(Op::Crash),
        2 => Just(Op::ReaderBegin),
        3 => table_id().prop_map(|(table, id)| Op::ReaderGet { table, id }),
        3 => scan_spec().prop_map(Op::ReaderScan),
        1 => Just(Op::ReaderCommit),
    ]
}

/// Long values under churn: a few docs rows updated between short and
/// off-page values, in and out of transactions, while the reader holds old
/// versions, purge runs and the engine crashes.
pub fn long_value_op() -> impl Strategy<Value = Op> {
    let id = || 0i64..12;
    let spec = || {
        (
            any::<bool>(),
            bound(v_choice().prop_map(i64::from).boxed()),
            bound(v_choice().prop_map(i64::from).boxed()),
            any::<bool>(),
        )
            .prop_map(|(secondary, low, high, reverse)| {
                let (low, high) = if secondary {
                    (low, high)
                } else {
                    (Bnd::Unbounded, Bnd::Unbounded)
                };
                ScanSpec {
                    table: Tbl::Docs,
                    secondary,
                    low,
                    high,
                    reverse,
                    limit: None,
                }
            })
    };
    prop_oneof![
        3 => id().prop_map(|id| Op::Get { table: Tbl::Docs, id }),
        2 => spec().prop_map(Op::Scan),
        6 => (id(), v_choice(), doc()).prop_map(|(id, v, doc)| Op::InsertDoc { id, v, doc }),
        10 => (id(), proptest::option::of(v_choice()), doc()).prop_map(|(id, v, doc)| Op::UpdateDoc { id, v, doc: Some(doc) }),
        2 => (id(), id(), proptest::option::of(v_choice())).prop_map(|(id, new_id, also)| Op::UpdateKey { table: Tbl::Docs, id, new_id, also }),
        4 => id().prop_map(|id| Op::Delete { table: Tbl::Docs, id }),
        3 => Just(Op::Begin),
        2 => Just(Op::Commit),
        2 => Just(Op::Rollback),
        2 => (0u8..2).prop_map(Op::Savepoint),
        2 => (0u8..2).prop_map(Op::RollbackToSavepoint),
        3 => Just(Op::PurgeAll),
        2 => Just(Op::Tick),
        1 => Just(Op::Crash),
        1 => Just(Op::Reopen),
        3 => Just(Op::ReaderBegin),
        4 => id().prop_map(|id| Op::ReaderGet { table: Tbl::Docs, id }),
        2 => spec().prop_map(Op::ReaderScan),
        2 => Just(Op::ReaderCommit),
        1 => Just(Op::Verify),
    ]
}

/// A few hot sbtest rows: deleted and inserted again, moved between keys
/// and between `k` values, inside transactions that roll back to
/// savepoints, while the reader holds old versions and purge runs. This
/// is where delete-marked records, inserts over them and the secondary
/// entries of every version meet.
pub fn hot_row_op() -> impl Strategy<Value = Op> {
    let id = || 0u32..12;
    let k = || 0u32..4;
    let spec = || {
        (
            any::<bool>(),
            0i64..12,
            0i64..4,
            any::<bool>(),
            proptest::option::weighted(0.3, 0u8..5),
        )
            .prop_map(|(secondary, a, b, reverse, limit)| {
                let (low, high) = if secondary {
                    (Bnd::Included(b), Bnd::Included(b))
                } else {
                    (Bnd::Included(a), Bnd::Unbounded)
                };
                ScanSpec {
                    table: Tbl::Sb,
                    secondary,
                    low,
                    high,
                    reverse,
                    limit,
                }
            })
    };
    prop_oneof![
        3 => id().prop_map(|id| Op::Get { table: Tbl::Sb, id: i64::from(id) }),
        3 => spec().prop_map(Op::Scan),
        8 => (id(), k(), any::<u16>()).prop_map(|(id, k, c)| Op::InsertSb { id, k, c }),
        6 => (id(), proptest::option::of(k()), proptest::option::of(any::<u16>())).prop_map(|(id, k, c)| Op::UpdateSb { id, k, c: if k.is_none() { c.or(Some(0)) } else { c } }),
        3 => (id(), id(), proptest::option::of(0u8..4)).prop_map(|(id, new_id, also)| Op::UpdateKey { table: Tbl::Sb, id: i64::from(id), new_id: i64::from(new_id), also }),
        6 => id().prop_map(|id| Op::Delete { table: Tbl::Sb, id: i64::from(id) }),
        4 => Just(Op::Begin),
        3 => Just(Op::Commit),
        2 => Just(Op::Rollback),
        3 => (0u8..2).prop_map(Op::Savepoint),
        3 => (0u8..2).prop_map(Op::RollbackToSavepoint),
        3 => Just(Op::PurgeAll),
        1 => Just(Op::Tick),
        1 => Just(Op::Crash),
        1 => Just(Op::Reopen),
        3 => Just(Op::ReaderBegin),
        3 => id().prop_map(|id| Op::ReaderGet { table: Tbl::Sb, id: i64::from(id) }),
        3 => spec().prop_map(Op::ReaderScan),
        2 => Just(Op::ReaderCommit),
        1 => Just(Op::Verify),
    ]
}

pub fn case() -> impl Strategy<Value = Case> {
    case_of(op())
}

pub fn case_of(op: impl Strategy<Value = Op>) -> impl Strategy<Value = Case> {
    let pool =
        prop_oneof![3 => Just(8usize), 3 => 9usize..=32, 2 => 33usize..=512, 1 => 513usize..=4096];
    (
        pool,
        any::<bool>(),
        any::<bool>(),
        row_format(),
        row_format(),
        prop_oneof![
            Just(Isolation::RepeatableRead),
            Just(Isolation::ReadCommitted),
            Just(Isolation::ReadUncommitted)
        ],
        proptest::collection::vec(op, 1..200),
    )
        .prop_map(
            |(
                buffer_pool_pages,
                small_log,
                doublewrite,
                sb_format,
                docs_format,
                reader_isolation,
                ops,
            )| Case {
                buffer_pool_pages,
                small_log,
                doublewrite,
                sb_format,
                docs_format,
                reader_isolation,
                ops,
            },
        )
}
