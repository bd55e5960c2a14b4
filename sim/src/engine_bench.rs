//! `innosim bench --engine`: the engine's single-core rates beside
//! SQLite's (rusqlite, the bundled library) on the same sysbench table,
//! the same rows and the same operations, in one run, as ratios.
//!
//! Both run the micro-benchmark's four phases ([`crate::bench::run`]):
//! sequential inserts in transactions of `batch` rows, point selects by
//! primary key, autocommit updates of the indexed `k`, and random inserts
//! into a fresh table; the rows and keys come from the same seeded
//! generator, so both engines hold the same data at the end (the test
//! checks it). SQLite gets the same cache (`PRAGMA cache_size`) and the
//! durability the flush setting promises: write-ahead logging with
//! `synchronous=FULL` (a sync of the log at each commit) for flush 1,
//! `NORMAL` (the log written, synced at checkpoints) for flush 2, `OFF`
//! for flush 0; in memory when the engine runs in memory, on files in the
//! same directory when it runs on files. Statements are prepared once,
//! as the engine's requests need no parsing.
//!
//! # What it measured
//!
//! `innosim bench --engine` (session 35): the micro-benchmarks' four phases (sequential inserts
//! a thousand a transaction, point selects, autocommit updates of the indexed `k`, random
//! inserts into a fresh table) on the engine and on SQLite (rusqlite's bundled 3.54.1), with
//! the same rows and keys from one seeded generator, the same cache (64 MiB) and the same
//! durability (flush 1 against WAL with `synchronous=FULL`, 2 against `NORMAL`, 0 against
//! `OFF`), one core, in one run; prepared statements on SQLite's side, as the engine's requests
//! need no parsing; in memory, and on real files with `--dir`. The command fails if the two end
//! holding different rows (count and sum of `k` per table). Wall-time rates, measured on build
//! ef65c83 while a CI build used the other core, so only the ratios mean much:
//!
//! | phase (200,000 rows, flush 1) | in memory: innosim / SQLite | files: innosim / SQLite |
//! | --- | --- | --- |
//! | sequential insert | 196,169 / 444,027 a s = 0.44 | 120,253 / 108,363 = 1.11 |
//! | point select | 329,218 / 419,998 = 0.78 | 307,192 / 313,500 = 0.98 |
//! | update k (autocommit) | 27,326 / 97,588 = 0.28 | 4,071 / 4,062 = 1.00 |
//! | random insert | 111,558 / 95,989 = 1.16 | 43,880 / 19,891 = 2.21 |
//!
//! In memory SQLite is faster at everything but random inserts, by 1.3x to 3.6x (not profiled;
//! the engine writes redo and undo for every change into its in-memory files, where SQLite's
//! in-memory database cannot use WAL and keeps its rollback journal in memory); on files both
//! are bound by the sync at each autocommit (about 4,000 a second on this disk), and the
//! engine's random inserts are twice SQLite's. `tests/simulation.rs
//! the_engine_bench_runs_sqlite_beside_the_engine` and `sim engine_bench::tests` hold the
//! phases and the equal contents.

use crate::bench::{sb_row, BenchOptions, Phase, Wall};
use engine::{FlushAtCommit, Value};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The bundled SQLite's version.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

/// An error of the SQLite side, as text (the bench prints it).
fn sql(e: rusqlite::Error) -> String {
    format!("sqlite: {e}")
}

/// Opens the SQLite database of a phase group (`sub`): in memory, or a
/// fresh file in `opts.dir`, with the cache and durability of `opts`.
fn open(opts: &BenchOptions, sub: &str) -> Result<rusqlite::Connection, String> {
    let conn = match &opts.dir {
        None => rusqlite::Connection::open_in_memory().map_err(sql)?,
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            let path = d.join(format!("{sub}.sqlite"));
            for suffix in ["", "-wal", "-shm"] {
                let p = std::path::PathBuf::from(format!("{}{suffix}", path.display()));
                if p.exists() {
                    std::fs::remove_file(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                }
            }
            rusqlite::Connection::open(&path).map_err(sql)?
        }
    };
    let sync = match opts.flush {
        FlushAtCommit::Sync => "FULL",
        FlushAtCommit::Write => "NORMAL",
        FlushAtCommit::Lazy => "OFF",
    };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous={sync}; PRAGMA cache_size=-{};
         CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0,
           c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '');
         CREATE INDEX k_1 ON sbtest1(k);",
        opts.pool_mib * 1024
    ))
    .map_err(sql)?;
    Ok(conn)
}

/// The SQLite values of one of the engine's rows.
fn params(row: &[Value]) -> (i64, i64, Vec<u8>, Vec<u8>) {
    let int = |v: &Value| match v {
        Value::UInt(n) => *n as i64,
        _ => 0,
    };
    let bytes = |v: &Value| match v {
        Value::Bytes(b) => b.clone(),
        _ => Vec::new(),
    };
    (int(&row[0]), int(&row[1]), bytes(&row[2]), bytes(&row[3]))
}

/// Inserts rows with these ids, `opts.batch` a transaction (the rows made
/// outside the timing, as the engine's load does). Returns the seconds.
fn load(
    conn: &mut rusqlite::Connection,
    ids: &[u64],
    opts: &BenchOptions,
    rng: &mut ChaCha8Rng,
    wall: Wall<'_>,
) -> Result<f64, String> {
    let mut seconds = 0.0;
    for chunk in ids.chunks(opts.batch.max(1) as usize) {
        let rows: Vec<_> = chunk
            .iter()
            .map(|&id| params(&sb_row(rng, id, opts.rows)))
            .collect();
        let t0 = wall();
        let tx = conn.transaction().map_err(sql)?;
        {
            let mut ins = tx
                .prepare_cached("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?1, ?2, ?3, ?4)")
                .map_err(sql)?;
            for (id, k, c, pad) in rows {
                ins.execute(rusqlite::params![id, k, c, pad]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        seconds += wall() - t0;
    }
    Ok(seconds)
}

/// What SQLite holds at the end of a run: each table's row count and sum
/// of `k` (the engine's must be the same).
pub type Contents = Vec<(u64, u64)>;

/// Runs [`crate::bench::run`]'s phases on SQLite, with the same rows and
/// keys, and returns them with what its two tables hold at the end.
pub fn run_sqlite(opts: &BenchOptions, wall: Wall<'_>) -> Result<(Vec<Phase>, Contents), String> {
    let mut phases = Vec::new();
    let mut contents = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let count = |conn: &rusqlite::Connection| -> Result<(u64, u64), String> {
        conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(k), 0) FROM sbtest1",
            [],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )
        .map_err(sql)
    };

    let mut conn = open(opts, "sequential")?;
    let ids: Vec<u64> = (1..=opts.rows).collect();
    let seconds = load(&mut conn, &ids, opts, &mut rng, wall)?;
    phases.push(Phase {
        name: "sequential insert",
        ops: opts.rows,
        seconds,
    });

    let n_sel = opts.rows.min(1_000_000);
    let t0 = wall();
    {
        let mut get = conn
            .prepare_cached("SELECT id, k, c, pad FROM sbtest1 WHERE id = ?1")
            .map_err(sql)?;
        for _ in 0..n_sel {
            let id = rng.gen_range(1..=opts.rows) as i64;
            let found = get.query_row([id], |r| r.get::<_, i64>(0)).map_err(sql)?;
            debug_assert_eq!(found, id);
        }
    }
    phases.push(Phase {
        name: "point select",
        ops: n_sel,
        seconds: wall() - t0,
    });

    let n_upd = (opts.rows / 4).max(1);
    let t0 = wall();
    {
        let mut upd = conn
            .prepare_cached("UPDATE sbtest1 SET k = ?1 WHERE id = ?2")
            .map_err(sql)?;
        for _ in 0..n_upd {
            let id = rng.gen_range(1..=opts.rows) as i64;
            let k = rng.gen_range(1..=opts.rows) as i64;
            upd.execute([k, id]).map_err(sql)?;
        }
    }
    phases.push(Phase {
        name: "update k (autocommit)",
        ops: n_upd,
        seconds: wall() - t0,
    });
    contents.push(count(&conn)?);
    drop(conn);

    let mut conn = open(opts, "random")?;
    let mut ids: Vec<u64> = (1..=opts.rows).collect();
    for i in (1..ids.len()).rev() {
        let j = rng.gen_range(0..=i);
        ids.swap(i, j);
    }
    let seconds = load(&mut conn, &ids, opts, &mut rng, wall)?;
    phases.push(Phase {
        name: "random insert",
        ops: opts.rows,
        seconds,
    });
    contents.push(count(&conn)?);
    Ok((phases, contents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_runs_the_same_phases_and_ends_with_the_engines_data() {
        let opts = BenchOptions {
            rows: 3_000,
            batch: 100,
            ..BenchOptions::default()
        };
        // A counting stopwatch: the rates are not what this test checks.
        let ticks = std::cell::Cell::new(0.0);
        let wall = || {
            ticks.set(ticks.get() + 1e-3);
            ticks.get()
        };
        let (ours, theirs) = crate::bench::run_with_contents(&opts, &wall).unwrap();
        let (phases, contents) = run_sqlite(&opts, &wall).unwrap();
        let names = |p: &[Phase]| p.iter().map(|p| (p.name, p.ops)).collect::<Vec<_>>();
        assert_eq!(names(&ours), names(&phases));
        // The same inserts and the same updates: the same rows and the same
        // sum of k in each table.
        assert_eq!(theirs, contents);
        assert_eq!(contents[0].0, 3_000);
        assert_eq!(contents[1].0, 3_000);
    }
}
