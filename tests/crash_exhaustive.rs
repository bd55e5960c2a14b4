mod common;
#[path = "crash/harness.rs"]
mod harness;
#[path = "crash/workload.rs"]
mod workload;

use engine::{FlushAtCommit, Value};
use harness::{bounds, crash_config, reference_run, reopen_and_judge, Setup};
use sim::clock::SimClock;
use sim::storage::{CrashMode, PowerLossPolicy};
use std::time::Instant;
use workload::{a_row, b_row, delete, doc, insert, update, Txn};

fn three() -> Vec<Txn> {
    use Value::{Int, UInt};
    vec![
        Txn::Commit(vec![
            insert("a", a_row(1, 1)),
            insert("a", a_row(2, 2)),
            insert("b", b_row(1, "v1", 20_000, 1)),
            insert("b", b_row(2, "v2", 100, 2)),
        ]),
        Txn::Rollback(vec![
            update("a", UInt(1), "k", UInt(9)),
            update("b", Int(1), "doc", doc(18_000, 5)),
        ]),
        Txn::Commit(vec![
            update("a", UInt(2), "k", UInt(7)),
            delete("b", Int(2)),
            update("b", Int(1), "v", Value::Bytes(b"w1".to_vec())),
        ]),
    ]
}

#[test]
fn probe() -> engine::Result<()> {
    for flush in [
        FlushAtCommit::Lazy,
        FlushAtCommit::Sync,
        FlushAtCommit::Write,
    ] {
        let setup = Setup::build(&crash_config(flush, true), three())?;
        let (ops, trace) = reference_run(&setup)?;
        let mut t_crash = 0.0;
        let mut t_judge = 0.0;
        let mut hist = std::collections::BTreeMap::<usize, u32>::new();
        let mut sizes = std::collections::BTreeMap::<(String, u64), u32>::new();
        for offset in 0..ops {
            let clock = SimClock::new();
            let t0 = Instant::now();
            let (storage, _, p) = setup.crash(&clock, offset)?;
            t_crash += t0.elapsed().as_secs_f64();
            let pending = storage.pending_writes();
            *hist.entry(pending.len()).or_default() += 1;
            for w in &pending {
                *sizes.entry((w.file.clone(), w.len)).or_default() += 1;
            }
            storage.restart(CrashMode::PowerLoss(PowerLossPolicy::LoseAll));
            let (a, b) = bounds(flush, true, &p);
            let t1 = Instant::now();
            reopen_and_judge(&storage, &clock, &setup.config, &setup.history, a, b).unwrap();
            t_judge += t1.elapsed().as_secs_f64();
        }
        eprintln!("flush={} ops={ops} crash {:.3}ms judge {:.3}ms pending hist {hist:?}\n sizes {sizes:?}", flush.setting(), t_crash * 1000.0 / ops as f64, t_judge * 1000.0 / ops as f64);
        let _ = trace;
    }
    Ok(())
}
