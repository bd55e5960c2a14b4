//! The index benchmark (`innosim bench --index`): seeds/000's experiment
//! on sysbench's table. DROP INDEX k and CREATE INDEX k on (k), once in
//! place (fast index creation: a dictionary change; one scan, a sort and
//! a build) and once by copying the table (ALGORITHM=COPY), on the
//! simulated disk with a simple disk model, so each statement is measured
//! in simulated seconds of I/O and in bytes written, with the file size
//! after it. Each measurement ends with a sharp checkpoint, so the pages a
//! statement dirtied are written inside it. The simulated clock charges
//! I/O only (no CPU time): the figures compare what each way makes the
//! disk do.

use crate::clock::SimClock;
use crate::storage::{FaultConfig, Latency, SimStorage};
use engine::io::Clock;
use engine::{
    ColumnDef, ColumnType, Config, Engine, FlushAtCommit, IndexDef, Request, RowFormat, TableDef,
    Value,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The disk model: 100 µs per operation, 200 MB/s each way, 1 ms per
/// sync.
pub fn disk_model() -> Latency {
    Latency {
        read: 100,
        write: 100,
        sync: 1000,
        read_per_mib: 5_000,
        write_per_mib: 5_000,
        ..Latency::default()
    }
}

/// One statement measured.
#[derive(Debug, Clone)]
pub struct IndexRow {
    /// What ran.
    pub statement: &'static str,
    /// Simulated seconds (I/O only).
    pub simulated_s: f64,
    /// Bytes written to the disk.
    pub bytes_written: u64,
    /// Size of the table's file before it.
    pub file_before: u64,
    /// Size of the table's file after it.
    pub file_bytes: u64,
    /// Wall seconds on this machine.
    pub wall_s: f64,
}

fn sbtest(with_k: bool) -> TableDef {
    let col = |name: &str, ty| ColumnDef {
        name: name.into(),
        ty,
        nullable: false,
        collation: Default::default(),
    };
    TableDef {
        name: "sbtest".into(),
        columns: vec![
            col("id", ColumnType::INT_UNSIGNED),
            col("k", ColumnType::INT_UNSIGNED),
            col("c", ColumnType::Char(120)),
            col("pad", ColumnType::Char(60)),
        ],
        primary_key: vec![0],
        primary_prefixes: Vec::new(),
        indexes: if with_k { vec![k_index()] } else { vec![] },
        row_format: RowFormat::Compact,
        foreign: Vec::new(),
        server: Vec::new(),
    }
}

fn k_index() -> IndexDef {
    IndexDef {
        name: "k".into(),
        columns: vec![1],
        unique: false,
        prefixes: Vec::new(),
    }
}

/// Loads `rows` rows of sysbench 1.0's data into the empty `sbtest`
/// (ids 1 to `rows`, a random `k`, digits for `c` and `pad`: the same rows
/// every time), a thousand rows a transaction, and checkpoints.
fn load(e: &mut Engine, rows: u64) -> engine::Result<()> {
    let s = e.session();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut id = 1u64;
    while id <= rows {
        e.execute(s, Request::Begin)?;
        for _ in 0..1000 {
            if id > rows {
                break;
            }
            let digits = |rng: &mut ChaCha8Rng, n: usize| -> Vec<u8> {
                (0..n).map(|_| b'0' + rng.gen_range(0..10u8)).collect()
            };
            let row = vec![
                Value::UInt(id),
                Value::UInt(rng.gen_range(1..=rows)),
                Value::Bytes(digits(&mut rng, 119)),
                Value::Bytes(digits(&mut rng, 59)),
            ];
            e.execute(
                s,
                Request::Insert {
                    table: "sbtest".into(),
                    row,
                },
            )?;
            id += 1;
        }
        e.execute(s, Request::Commit)?;
    }
    e.close_session(s)?;
    e.checkpoint()
}

/// Loads `rows` rows of sysbench 1.0's data and measures the four index
/// statements, then emptying the table by DELETE and by TRUNCATE (the
/// table loaded again between them, unmeasured). `pool_pages` is the
/// buffer pool.
pub fn run(
    rows: u64,
    pool_pages: usize,
    wall: crate::bench::Wall<'_>,
) -> engine::Result<Vec<IndexRow>> {
    let storage = SimStorage::new();
    let clock = SimClock::new();
    storage.set_clock(clock.clone());
    let config = Config {
        buffer_pool_pages: pool_pages,
        flush_at_commit: FlushAtCommit::Write,
        ..Config::default()
    };
    let (mut e, _) = Engine::open(Box::new(storage.clone()), Box::new(clock.clone()), config)?;
    e.create_table(sbtest(true))?;
    load(&mut e, rows)?;
    // The disk model from here on: the load is not measured.
    let model = FaultConfig {
        latency_us: disk_model(),
        ..FaultConfig::default()
    };
    storage.set_faults(model.clone());
    let mut out = Vec::new();
    let mut measure = |e: &mut Engine,
                       statement: &'static str,
                       f: &mut dyn FnMut(&mut Engine) -> engine::Result<()>|
     -> engine::Result<()> {
        let size = |e: &mut Engine| -> engine::Result<u64> {
            Ok(e.file_sizes()?
                .into_iter()
                .find(|(n, _)| n == "sbtest.ibd")
                .map_or(0, |(_, b)| b))
        };
        let file_before = size(e)?;
        let t0 = clock.now_us();
        let b0 = storage.counters().bytes_written;
        let w0 = wall();
        f(e)?;
        e.checkpoint()?;
        let file_bytes = size(e)?;
        out.push(IndexRow {
            statement,
            file_before,
            simulated_s: (clock.now_us() - t0) as f64 / 1e6,
            bytes_written: storage.counters().bytes_written - b0,
            file_bytes,
            wall_s: wall() - w0,
        });
        Ok(())
    };
    measure(&mut e, "DROP INDEX k (in place)", &mut |e| {
        e.ddl_now("sbtest", |e, s| e.drop_index(s, "sbtest", "k", Vec::new()))
    })?;
    measure(&mut e, "CREATE INDEX k (fast)", &mut |e| {
        e.ddl_now("sbtest", |e, s| {
            e.create_indexes(s, "sbtest", &[k_index()], Vec::new())
        })
        .map(|_| ())
    })?;
    measure(&mut e, "DROP INDEX k (COPY)", &mut |e| {
        e.ddl_now("sbtest", |e, s| e.rebuild_table(s, "sbtest", sbtest(false)))
            .map(|_| ())
    })?;
    measure(&mut e, "CREATE INDEX k (COPY)", &mut |e| {
        e.ddl_now("sbtest", |e, s| e.rebuild_table(s, "sbtest", sbtest(true)))
            .map(|_| ())
    })?;
    // seeds/004's advice: empty a table with TRUNCATE (or DROP and
    // CREATE), not DELETE, which deletes row by row, each with its undo
    // record and redo, and leaves the purge of every row to follow.
    measure(&mut e, "DELETE FROM sbtest (every row)", &mut |e| {
        let s = e.session();
        e.execute(s, Request::Begin)?;
        for id in 1..=rows {
            e.execute(
                s,
                Request::Delete {
                    table: "sbtest".into(),
                    key: vec![Value::UInt(id)],
                },
            )?;
        }
        e.execute(s, Request::Commit)?;
        e.close_session(s)
    })?;
    // The table full again (not measured: no latency), for TRUNCATE.
    storage.set_faults(FaultConfig::default());
    e.ddl_now("sbtest", |e, s| e.truncate_table(s, "sbtest"))?;
    load(&mut e, rows)?;
    storage.set_faults(model);
    measure(&mut e, "TRUNCATE TABLE sbtest", &mut |e| {
        e.ddl_now("sbtest", |e, s| e.truncate_table(s, "sbtest"))
    })?;
    let check = e.check_table("sbtest")?;
    assert!(
        check.is_ok(),
        "the table after the benchmark: {:?}",
        check.problems
    );
    e.close()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_index_changes_write_less_than_copies() {
        let rows = run(3000, 64, &|| 0.0).unwrap();
        let by = |s: &str| {
            rows.iter()
                .find(|r| r.statement.starts_with(s))
                .unwrap()
                .clone()
        };
        let (drop_fast, create_fast) = (by("DROP INDEX k (in"), by("CREATE INDEX k (f"));
        let (drop_copy, create_copy) = (by("DROP INDEX k (C"), by("CREATE INDEX k (C"));
        assert!(
            drop_fast.bytes_written < drop_copy.bytes_written / 4,
            "{rows:?}"
        );
        assert!(
            create_fast.bytes_written < create_copy.bytes_written,
            "{rows:?}"
        );
        assert!(drop_fast.simulated_s < drop_copy.simulated_s, "{rows:?}");
        // DROP INDEX in place keeps the file's size: its pages go to the
        // tablespace's free list.
        assert_eq!(drop_fast.file_bytes, drop_fast.file_before, "{rows:?}");
        // Emptying the table: DELETE writes every row's undo and redo and
        // keeps the file; TRUNCATE writes a new, small file.
        let (delete, truncate) = (by("DELETE FROM"), by("TRUNCATE"));
        assert!(truncate.simulated_s < delete.simulated_s, "{rows:?}");
        assert!(truncate.bytes_written < delete.bytes_written, "{rows:?}");
        assert_eq!(delete.file_bytes, delete.file_before, "{rows:?}");
        assert!(truncate.file_bytes < truncate.file_before / 4, "{rows:?}");
    }
}
