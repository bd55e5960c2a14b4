//! INFORMATION_SCHEMA.INNODB_CMP and INNODB_CMP_RESET through the engine
//! API: a row per page size, counted where compression happens, timed in
//! the engine's clock, zeroed by reading the reset table. And the buffer
//! pool's side: compressed pages kept at their block size once their
//! frames are evicted alone, as INNODB_CMPMEM shows.

mod common;

use common::{done, read_db, sbtest};
use engine::io::{Clock, MemStorage};
use engine::{Config, Engine, InnodbCmp, Request, Result, RowFormat, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A clock that moves `TICK_US` forward every time it is read: any span
/// the engine times between two readings is exactly one tick.
#[derive(Default)]
struct TickingClock(AtomicU64);

const TICK_US: u64 = 250_000;

impl Clock for TickingClock {
    fn now_us(&self) -> u64 {
        self.0.fetch_add(TICK_US, Ordering::Relaxed)
    }
}

fn open(storage: &MemStorage, pool: usize) -> Result<Engine> {
    let (e, _) = Engine::open(
        Box::new(storage.clone()),
        Box::new(Arc::new(TickingClock::default())),
        Config {
            buffer_pool_pages: pool,
            ..Config::default()
        },
    )?;
    Ok(e)
}

/// sysbench 1.0's rows: c and pad are groups of random digits, which
/// compress poorly.
fn digits_row(id: u64) -> Vec<Value> {
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut digits = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|i| {
                if i % 12 == 11 {
                    b'-'
                } else {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b'0' + (x % 10) as u8
                }
            })
            .collect()
    };
    vec![
        Value::UInt(id),
        Value::UInt(id % 97),
        Value::Bytes(digits(119)),
        Value::Bytes(digits(59)),
    ]
}

fn row_of(rows: &[InnodbCmp], size: u32) -> InnodbCmp {
    *rows.iter().find(|r| r.page_size == size).expect("a row")
}

fn zero(size: u32) -> InnodbCmp {
    InnodbCmp {
        page_size: size,
        compress_ops: 0,
        compress_ops_ok: 0,
        compress_time: 0,
        uncompress_ops: 0,
        uncompress_time: 0,
    }
}

const SIZES: [u32; 5] = [1024, 2048, 4096, 8192, 16384];

#[test]
fn innodb_cmp_counts_each_page_size_and_reset_zeroes_it() -> Result<()> {
    let storage = MemStorage::new();
    let mut e = open(&storage, 64)?;
    assert_eq!(
        e.innodb_cmp(),
        SIZES.map(zero).to_vec(),
        "a new engine has compressed nothing"
    );
    e.create_table(sbtest("c1", RowFormat::Compressed { key_block_size: 1 }))?;
    e.create_table(sbtest("c8", RowFormat::Compressed { key_block_size: 8 }))?;
    let s = e.session();
    let mut last = e.innodb_cmp();
    for id in 0..400 {
        for table in ["c1", "c8"] {
            done(e.execute(
                s,
                Request::Insert {
                    table: table.into(),
                    row: digits_row(id),
                },
            )?);
        }
        if id % 50 == 49 {
            // Counters never go down between resets.
            let now = e.innodb_cmp();
            for (a, b) in last.iter().zip(&now) {
                assert!(
                    b.compress_ops >= a.compress_ops
                        && b.compress_ops_ok >= a.compress_ops_ok
                        && b.uncompress_ops >= a.uncompress_ops
                        && b.compress_time >= a.compress_time,
                    "{a:?} -> {b:?}"
                );
            }
            last = now;
        }
    }
    let rows = e.innodb_cmp();
    assert_eq!(rows.iter().map(|r| r.page_size).collect::<Vec<_>>(), SIZES);
    for size in [2048, 4096, 16384] {
        assert_eq!(row_of(&rows, size), zero(size), "no table has {size}");
    }
    let (k1, k8) = (row_of(&rows, 1024), row_of(&rows, 8192));
    for r in [k1, k8] {
        assert!(
            r.compress_ops_ok > 0 && r.compress_ops_ok <= r.compress_ops,
            "{r:?}"
        );
        // Every compression is timed between two readings of the clock,
        // one tick apart: the time is the engine clock's, not the host's.
        assert_eq!(
            r.compress_time,
            r.compress_ops * TICK_US / 1_000_000,
            "{r:?}"
        );
    }
    // Random digits do not fit in 1 KiB pages for long: compressions fail,
    // and each failure rebuilds the frame from its compressed page.
    assert!(k1.compress_ops_ok < k1.compress_ops, "{k1:?}");
    let totals = e.pager().stats;
    assert!(
        totals.zip_splits_after_failure > 0 && totals.zip_refused > 0,
        "{totals:?}"
    );
    assert!(
        k1.uncompress_ops + k8.uncompress_ops >= totals.zip_refused,
        "{k1:?} {k8:?} {totals:?}"
    );

    // The reset table returns what INNODB_CMP showed, then starts again.
    let before = e.innodb_cmp();
    assert_eq!(e.innodb_cmp_reset(), before);
    assert_eq!(e.innodb_cmp(), SIZES.map(zero).to_vec());
    assert_eq!(e.innodb_cmp_reset(), SIZES.map(zero).to_vec());
    done(e.execute(
        s,
        Request::Insert {
            table: "c8".into(),
            row: digits_row(10_000),
        },
    )?);
    let after = e.innodb_cmp();
    assert_eq!(row_of(&after, 1024), zero(1024), "{after:?}");
    e.close()?;

    // Reopened on a pool too small to hold the tables: every page read
    // from disk is decompressed, and the counters start from zero.
    let mut e = open(&storage, 8)?;
    let db = read_db(&mut e, &["c1", "c8"])?;
    assert_eq!(db.tables["c1"].len(), 400);
    assert_eq!(db.tables["c8"].len(), 401);
    let rows = e.innodb_cmp();
    let (k1, k8) = (row_of(&rows, 1024), row_of(&rows, 8192));
    let misses = e.pager().pool.stats.misses;
    assert!(
        k1.uncompress_ops > 50 && k8.uncompress_ops > 5,
        "{k1:?} {k8:?}"
    );
    // Each decompression is of a page read, or of a compressed-only page
    // whose frame the pool had evicted alone.
    let unzips = e.pager().pool.stats.unzips;
    assert!(
        k1.uncompress_ops + k8.uncompress_ops <= misses + unzips,
        "{rows:?} {misses} {unzips}"
    );
    assert_eq!(k1.compress_ops, 0, "reads compress nothing: {k1:?}");
    assert_eq!(k1.uncompress_time, k1.uncompress_ops * TICK_US / 1_000_000);
    Ok(())
}

/// A pool of 8 frames over a table of 1 KiB pages: uncompressed frames are
/// evicted alone (the unzip LRU) and their compressed pages stay, 16 to a
/// frame, so the pool holds more pages than it has frames while its memory
/// stays within them; a compressed-only page is decompressed again when
/// used, and every row reads back, before and after a restart.
#[test]
fn a_small_pool_keeps_compressed_pages_at_their_block_size() -> Result<()> {
    let storage = MemStorage::new();
    let mut e = open(&storage, 8)?;
    e.create_table(sbtest("c1", RowFormat::Compressed { key_block_size: 1 }))?;
    let s = e.session();
    let mut most_pages = 0;
    for id in 0..600 {
        done(e.execute(
            s,
            Request::Insert {
                table: "c1".into(),
                row: common::sb_row(id, id % 7),
            },
        )?);
        let pool = &e.pager().pool;
        most_pages = most_pages.max(pool.len());
        // Frames plus the allocator's frames stay within the pool: one
        // session's insert never has every page fixed, so nothing is
        // borrowed beyond it (a leaked chunk or frame would show here).
        assert!(
            pool.resident() <= pool.capacity(),
            "{} blocks resident in a pool of {}, {:?}",
            pool.resident(),
            pool.capacity(),
            pool.stats
        );
    }
    let db = read_db(&mut e, &["c1"])?;
    assert_eq!(db.tables["c1"].len(), 600);
    let pool = &e.pager().pool;
    assert!(
        most_pages > pool.capacity(),
        "compressed-only pages take a block, not a frame: at most {most_pages} pages cached"
    );
    assert!(
        pool.stats.unzip_evictions > 0 && pool.stats.unzips > 0,
        "{:?}",
        pool.stats
    );
    let mem = e.innodb_cmpmem();
    assert_eq!(
        mem.iter().map(|r| r.page_size).collect::<Vec<_>>(),
        SIZES,
        "{mem:?}"
    );
    // Blocks are used only at the table's size; larger ones may be free,
    // the halves left over from splitting a frame down to 1 KiB.
    for r in &mem[1..] {
        assert_eq!(r.pages_used, 0, "{r:?}");
    }
    let k1 = mem[0];
    assert!(k1.pages_used > 0, "{k1:?}");
    // Used and free blocks tile whole frames, within the 8 frames the
    // pool was opened with.
    let bytes: u64 = mem
        .iter()
        .map(|r| (r.pages_used + r.pages_free) * u64::from(r.page_size))
        .sum();
    assert_eq!(bytes % 16384, 0, "{mem:?}");
    assert!(bytes / 16384 <= 8, "{mem:?}");
    // The reset table returns the rows and zeroes only the relocations.
    assert_eq!(e.innodb_cmpmem_reset(), mem);
    let after = e.innodb_cmpmem();
    for (a, b) in mem.iter().zip(&after) {
        assert_eq!((b.relocation_ops, b.relocation_time), (0, 0), "{b:?}");
        assert_eq!((a.pages_used, a.pages_free), (b.pages_used, b.pages_free));
    }
    e.close()?;
    let mut e = open(&storage, 8)?;
    let again = read_db(&mut e, &["c1"])?;
    assert_eq!(again.tables, db.tables);
    Ok(())
}
