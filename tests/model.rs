//! Model-based property tests: random operation sequences run against the
//! engine and, in lockstep, against a model of one `BTreeMap` per table
//! ([`models::Db`]). Every statement's result is compared with what the
//! model says MySQL would answer; after every sequence, and after every
//! reopen and crash inside one, the engine's whole visible contents must
//! equal the model and CHECK TABLE must pass.
//!
//! What the model keeps:
//!
//! ```text
//!   committed   what a fresh session sees, and what must survive a crash
//!               (the engine runs with flush_at_commit Sync)
//!   current     committed plus the main session's open transaction
//!   savepoints  copies of `current`, by name, in the order they were set
//!   snapshot    `committed` as it was when the reader session's read view
//!               opened (REPEATABLE READ: at its transaction's first read)
//! ```
//!
//! The reader sees `snapshot` under REPEATABLE READ, `committed` under READ
//! COMMITTED (and outside a transaction), and `current` under READ
//! UNCOMMITTED.
//!
//! One session writes, so no statement may ever wait for a lock: a
//! `Step::Waiting` is a failure. A second session only reads, to check
//! consistent reads against the snapshot.
//!
//! Operations are small descriptions (keys from small ranges, long values
//! as a length and a seed) so that proptest shrinks a failure to a short
//! case whose `Debug` form pastes straight into a regression test: see the
//! `regressions` module at the end, which replays every bug this file has
//! found.
//!
//! Three properties share the harness with different operation mixes:
//! everything (`engine_matches_model`), a few hot rows deleted, moved and
//! reinserted (`hot_rows_match_model`), and long values churned under a
//! reader (`long_values_match_model`). Beside them: trees of three levels
//! (`tall_tree_matches_model`), counters that prove generated cases reach
//! the rare paths (`model_reaches_rare_paths`), and canaries that prove the
//! harness fails when the engine or the model is wrong. The machinery is
//! in `tests/model_support/`.

mod common;
mod model_support;

use engine::{FlushAtCommit, Isolation, RowFormat};
use model_support::harness::{run_case, run_case_with, Counters, Harness};
use model_support::ops::*;
use model_support::strategy::{case, case_of, hot_row_op, long_value_op};
use models::ModelValue;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// 64 cases unless PROPTEST_CASES says otherwise; failures are kept under
/// `corpus/` and replayed first on the next run.
fn proptest_config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "corpus/model.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Random operation sequences, with rollbacks, savepoints, reopens and
    /// crashes, keep the engine equal to the model.
    #[test]
    fn engine_matches_model(case in case()) {
        run_case(&case).map_err(TestCaseError::fail)?;
    }

    /// The same for a few hot rows (see [`hot_row_op`]).
    #[test]
    fn hot_rows_match_model(case in case_of(hot_row_op())) {
        run_case(&case).map_err(TestCaseError::fail)?;
    }

    /// The same for long values under churn (see [`long_value_op`]).
    #[test]
    fn long_values_match_model(case in case_of(long_value_op())) {
        run_case(&case).map_err(TestCaseError::fail)?;
    }
}

/// Regression tests: the bugs the properties (and the tall tree test)
/// found, each as its shrunk case, replayed as found. Each opens with a
/// comment naming its bug.
mod regressions {
    use super::*;
    use Isolation::*;
    use Op::*;
    use RowFormat::*;
    use Tbl::*;

    fn case(
        buffer_pool_pages: usize,
        sb_format: RowFormat,
        docs_format: RowFormat,
        ops: Vec<Op>,
    ) -> Case {
        Case {
            buffer_pool_pages,
            small_log: false,
            doublewrite: false,
            sb_format,
            docs_format,
            reader_isolation: RepeatableRead,
            ops,
        }
    }

    /// Bug: CHECK TABLE compared the first node pointer on the leftmost page
    /// of a level as a key, though it stands for minus infinity. Any key
    /// inserted below a multi-page tree's smallest (a split of the leftmost
    /// leaf at slot 0, or a middle split of it later) leaves that pointer at
    /// or above the next one, and CHECK TABLE reported "keys out of order".
    #[test]
    fn leftmost_node_pointer_is_minus_infinity() -> Result<(), String> {
        run_case(&case(
            8,
            Redundant,
            Redundant,
            vec![
                BulkInsertSb { start: 33, n: 74 },
                InsertSb { id: 0, k: 0, c: 0 },
            ],
        ))?;
        for format in [Redundant, Compact, Dynamic] {
            run_case(&case(
                8,
                format,
                format,
                vec![
                    BulkInsertSb {
                        start: 1000,
                        n: 150,
                    },
                    BulkInsertSb { start: 0, n: 199 },
                    Verify,
                ],
            ))?;
        }
        Ok(())
    }

    /// Bug: a page split chose its split point at the byte midpoint, which
    /// with a large record (an 8 KB row) straddling it left more than a
    /// page on the left; the insert into the left page then failed as
    /// "record does not fit the page" and stopped the engine.
    #[test]
    fn split_never_overfills_the_left_page() -> Result<(), String> {
        let doc = |len, seed| Some(Doc { len, seed });
        run_case(&case(
            8,
            Redundant,
            Redundant,
            vec![
                InsertDoc {
                    id: 0,
                    v: 0,
                    doc: doc(700, 0),
                },
                InsertDoc {
                    id: 1,
                    v: 0,
                    doc: doc(7504, 0),
                },
                InsertDoc {
                    id: 27,
                    v: 0,
                    doc: doc(15017, 238),
                },
                InsertDoc {
                    id: 26,
                    v: 7,
                    doc: doc(7996, 98),
                },
            ],
        ))?;
        Ok(())
    }

    /// Bug: SAVEPOINT with autocommit off and no transaction open started a
    /// transaction marked as autocommit's, so the next row statement
    /// committed it: a later ROLLBACK could not undo the insert.
    #[test]
    fn savepoint_with_autocommit_off_starts_a_lasting_transaction() -> Result<(), String> {
        run_case(&case(
            8,
            Redundant,
            Redundant,
            vec![
                ToggleAutocommit,
                Savepoint(0),
                InsertSb { id: 0, k: 0, c: 0 },
            ],
        ))?;
        run_case(&case(
            8,
            Compact,
            Compact,
            vec![
                ToggleAutocommit,
                Savepoint(0),
                InsertSb { id: 0, k: 0, c: 0 },
                Rollback,
                Get { table: Sb, id: 0 },
                Crash,
            ],
        ))?;
        Ok(())
    }

    /// Bug: a new table's page 0 stayed only in the buffer pool while the
    /// checkpoint moved past its FILE_CREATE record; a crash then left a
    /// file recovery could not identify (page 0 all zeros, no FILE_CREATE
    /// in the scanned log), and open failed: "the tablespace of table
    /// 'sbtest1' is missing".
    #[test]
    fn tablespace_survives_a_checkpoint_past_its_file_create() -> Result<(), String> {
        run_case(&case(
            142,
            Redundant,
            Redundant,
            vec![
                InsertDoc {
                    id: 0,
                    v: 0,
                    doc: Some(Doc {
                        len: 82419,
                        seed: 0,
                    }),
                },
                InsertSb { id: 0, k: 0, c: 0 },
                PurgeAll,
                BulkInsertSb { start: 0, n: 149 },
                Tick,
                Crash,
            ],
        ))?;
        Ok(())
    }

    /// Bug: UPDATE of an off-page long column to the value it already has
    /// reported one row changed (MySQL reports 0) and rewrote the row and
    /// its 20 KB chain: any off-page field counted as different.
    #[test]
    fn setting_a_long_column_to_its_value_changes_no_row() -> Result<(), String> {
        for format in [Redundant, Compact, Dynamic] {
            let doc = Some(Doc {
                len: 20_000,
                seed: 1,
            });
            let ops = vec![
                InsertDoc { id: 1, v: 1, doc },
                UpdateDoc {
                    id: 1,
                    v: None,
                    doc: Some(doc),
                },
                UpdateDoc {
                    id: 1,
                    v: Some(1),
                    doc: Some(doc),
                },
            ];
            run_case(&case(8, format, format, ops)).map_err(|e| format!("{format:?}: {e}"))?;
        }
        Ok(())
    }

    /// Bug: the purge view hid only the transactions active at purge time,
    /// not those active when the oldest read view was taken. Once such a
    /// transaction committed, purge saw it, judged the secondary entry of
    /// the row version before it unneeded and removed it, and a REPEATABLE
    /// READ reader still on that version lost the row from index scans.
    #[test]
    fn purge_keeps_entries_an_open_view_still_reads() -> Result<(), String> {
        let spec = ScanSpec {
            table: Docs,
            secondary: true,
            low: Bnd::Unbounded,
            high: Bnd::Unbounded,
            reverse: false,
            limit: None,
        };
        run_case(&case(
            8,
            Redundant,
            Redundant,
            vec![
                InsertDoc {
                    id: 6,
                    v: 0,
                    doc: None,
                },
                UpdateDoc {
                    id: 6,
                    v: None,
                    doc: Some(Some(Doc { len: 0, seed: 0 })),
                },
                ReaderBegin,
                Begin,
                UpdateDoc {
                    id: 6,
                    v: Some(1),
                    doc: Some(None),
                },
                ReaderGet { table: Docs, id: 0 },
                Begin,
                PurgeAll,
                ReaderScan(spec),
            ],
        ))?;
        Ok(())
    }

    /// Bug: rolling back a transaction ran every undo record without
    /// checking the redo log had room (only each statement checked, before
    /// it ran), so undoing thousands of changes overran a small log: the
    /// append asserted "redo log overflow". Purge had the same gap.
    #[test]
    fn rollback_and_purge_make_room_in_the_log() -> Result<(), String> {
        let rows = 10_000;
        let mut ops = vec![Begin];
        ops.extend((0..rows / 200).map(|i| BulkInsertSb {
            start: i * 200,
            n: 200,
        }));
        ops.extend([Rollback, Begin]);
        ops.extend((0..rows / 200).map(|i| BulkInsertSb {
            start: i * 200,
            n: 200,
        }));
        ops.extend([Commit, Begin]);
        ops.extend((0..i64::from(rows)).map(|id| Delete { table: Sb, id }));
        ops.extend([Rollback, Begin]);
        ops.extend((0..i64::from(rows)).map(|id| Delete { table: Sb, id }));
        ops.extend([Commit, PurgeAll, Verify]);
        run_case(&Case {
            small_log: true,
            ..case(8, Compact, Compact, ops)
        })?;
        Ok(())
    }
}

/// Generated cases run from a fixed seed must reach every rare path the
/// model test exists for; a change to the strategies that stops reaching
/// one fails here instead of silently testing less.
#[test]
fn model_reaches_rare_paths() -> Result<(), String> {
    const CASES: usize = 96;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut total = Counters::default();
    let strategy = case();
    // 96 cases: the generator's draws fall on eight row formats now
    // (compressed tables at five sizes), and 48 left savepoint rollbacks out.
    for _ in 0..CASES {
        let c = strategy
            .new_tree(&mut runner)
            .map_err(|e| e.to_string())?
            .current();
        total.add(&run_case(&c)?);
    }
    println!("{total:#?}");
    let reached = [
        ("duplicate key errors", total.duplicate_errors),
        ("primary key moves", total.key_moves),
        (
            "savepoint rollbacks that undid changes",
            total.savepoint_undos,
        ),
        ("rollbacks that undid changes", total.rollback_undos),
        (
            "reads from a snapshot behind the committed state",
            total.stale_snapshot_reads,
        ),
        ("crashes recovery rolled back after", total.crash_rollbacks),
        ("off-page long values", total.off_page_docs),
        ("evictions", total.evictions),
        ("checkpoints", total.checkpoints),
        ("log wrap-arounds", total.log_wraps),
        ("purged rows", total.purged_rows),
    ];
    for (what, n) in reached {
        if n == 0 {
            return Err(format!("no {what} in {CASES} generated cases: {total:?}"));
        }
    }
    if total.max_tree_height < 2 {
        return Err(format!("no clustered index grew past its root: {total:?}"));
    }
    Ok(())
}

/// Trees of three levels, which random cases do not grow: node pointer
/// pages split, and purge of a third of the rows merges them again. 2,000
/// docs rows of 7 KB (two to a leaf page, in every row format) in shuffled
/// order, through an 8-page buffer pool and a small log, with a
/// rolled-back transaction, a savepoint, a crash with a transaction open,
/// and a reopen.
#[test]
fn tall_tree_matches_model() -> Result<(), String> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut ids: Vec<i64> = (0..2000).collect();
    ids.shuffle(&mut rng);
    let doc = |id: i64| {
        Some(Doc {
            len: 7000,
            seed: id as u8,
        })
    };
    let mut ops: Vec<Op> = ids
        .iter()
        .map(|&id| Op::InsertDoc {
            id,
            v: (id % 9) as u8,
            doc: doc(id),
        })
        .collect();
    ops.push(Op::Verify);
    let doomed: Vec<i64> = ids.iter().copied().filter(|i| i % 3 == 0).collect();
    let delete = |ids: &[i64]| {
        ids.iter()
            .map(|&id| Op::Delete {
                table: Tbl::Docs,
                id,
            })
            .collect::<Vec<_>>()
    };
    // A transaction that deletes and is rolled back, then one that
    // deletes for good, with a savepoint rolled back to in the middle.
    ops.push(Op::Begin);
    ops.extend(delete(&doomed[..300]));
    ops.push(Op::Rollback);
    ops.push(Op::Begin);
    ops.extend(delete(&doomed[..400]));
    ops.push(Op::Savepoint(0));
    ops.extend(delete(&doomed[400..]));
    ops.push(Op::RollbackToSavepoint(0));
    ops.push(Op::Commit);
    ops.extend([Op::PurgeAll, Op::Verify, Op::Begin]);
    ops.extend(delete(&doomed[400..]));
    ops.extend([Op::Crash, Op::PurgeAll, Op::Verify, Op::Reopen]);
    for format in [
        RowFormat::Redundant,
        RowFormat::Compact,
        RowFormat::Dynamic,
        RowFormat::Compressed { key_block_size: 8 },
        RowFormat::Compressed { key_block_size: 1 },
    ] {
        let c = Case {
            buffer_pool_pages: 8,
            small_log: true,
            doublewrite: true,
            sb_format: format,
            docs_format: format,
            reader_isolation: Isolation::RepeatableRead,
            ops: ops.clone(),
        };
        let counters = run_case(&c).map_err(|e| format!("{format:?}: {e}"))?;
        // A compressed page of 8 KiB holds as many rows as a 16 KiB page
        // when they compress two to one, so its tree may stay lower.
        let min_height = match format {
            RowFormat::Compressed { key_block_size: 8 } => 2,
            _ => 3,
        };
        if counters.max_tree_height < min_height {
            return Err(format!(
                "{format:?}: the clustered index did not reach {min_height} levels: {counters:?}"
            ));
        }
    }
    Ok(())
}

/// Canary: with commits not synced (flush_at_commit Lazy), a crash loses a
/// committed insert, and the harness must say so.
#[test]
fn canary_lost_commit_is_caught() {
    let c = Case {
        buffer_pool_pages: 64,
        small_log: false,
        doublewrite: true,
        sb_format: RowFormat::Compact,
        docs_format: RowFormat::Dynamic,
        reader_isolation: Isolation::RepeatableRead,
        ops: vec![Op::InsertSb { id: 1, k: 1, c: 1 }, Op::Crash],
    };
    let r = run_case_with(&c, |config| config.flush_at_commit = FlushAtCommit::Lazy);
    assert!(
        r.is_err_and(|e| e.contains("the model has key (1), the fresh session does not")),
        "a lost commit went unnoticed"
    );
}

/// Canary: a model that disagrees with the engine by one row must fail
/// both the main session's comparison and a fresh session's.
#[test]
fn canary_wrong_model_is_caught() -> Result<(), String> {
    let c = Case {
        buffer_pool_pages: 8,
        small_log: true,
        doublewrite: false,
        sb_format: RowFormat::Redundant,
        docs_format: RowFormat::Compact,
        reader_isolation: Isolation::RepeatableRead,
        ops: vec![Op::BulkInsertSb { start: 0, n: 100 }],
    };
    let mut h = Harness::new(&c, |_| {})?;
    h.run(&c.ops[0])?;
    let key = vec![ModelValue::Int(50)];
    h.current.table_mut(SB).remove(&key);
    h.committed.table_mut(SB).remove(&key);
    assert!(
        h.verify_main().is_err(),
        "the main session's scan missed a row the model lacks"
    );
    assert!(
        h.verify_db().is_err(),
        "a fresh session's read missed a row the model lacks"
    );
    Ok(())
}
