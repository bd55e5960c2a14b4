//! innosim's storage engine: a Rust re-implementation of the InnoDB Plugin
//! 1.0 core. B+trees on 16 KiB pages, a buffer pool, a redo log with
//! mini-transactions and checkpoints, a doublewrite buffer, undo logs and
//! MVCC, and crash recovery, all on top of the [`io`] traits so the same
//! engine runs on a real directory or inside the simulator.
//!
//! Modules are declared bottom-up: each names only modules declared above
//! it in this file (`tests/floors.rs` checks), so the import graph has no
//! circles and a floor can be read knowing only the floors below it.
//! Modules only the engine uses are private to it.
//!
//! `cargo doc --no-deps --open -p engine` renders these pages; the floors that only the engine
//! uses (written in plain backticks below) are rendered with `--document-private-items`.
//!
//! # The floors, bottom up
//!
//! Each entry names what the module owns and the InnoDB sources it mirrors.
//!
//! - [`io`]: the `Storage`, `File` and `Clock` traits; `OsStorage` (real fsync, directory sync)
//!   and `MemStorage` (os0file).
//! - [`error`]: the error type, every variant an operating error, with MySQL's codes and texts.
//! - [`mach`]: the ground floor: byte layouts and the page sizes (mach0data, univ.i).
//! - `spare`: per-thread bounded lists of buffers kept for reuse (a dropped pool's frames, an
//!   ended mini-transaction's vectors).
//! - [`canary`], [`later`]: settings every floor may read: planted bugs the simulator's
//!   checkers must catch, and the rules of later InnoDB versions `innosim diff` switches on.
//! - [`record`]: REDUNDANT, COMPACT and DYNAMIC records, off-page columns, collations (rem0rec,
//!   rem0cmp).
//! - [`page`]: 16 KiB pages: FIL header and trailer, crc32, validation on every read; the index
//!   page body; `page::zip`, the compressed page codec (fil0fil, page0page, page0zip).
//! - `buf`: the buffer pool (LRU, flush list, the buddy allocator of compressed pages)
//!   (buf0buf, buf0lru).
//! - [`redo`]: log files in 512-byte blocks, mtr frames, two checkpoint slots, the recovery
//!   scan (log0log, log0recv).
//! - [`fil`]: tablespace files, page-granular reads and writes, file growth (fil0fil).
//! - [`doublewrite`]: the doublewrite area and torn-page repair (buf0dblwr).
//! - `pager`: reads, flushing under the WAL rule, the page cleaner, checkpoints (buf0rea,
//!   buf0flu).
//! - `mtr`: mini-transactions and their physiological redo records (mtr0mtr, mtr0log).
//! - `fsp`: page allocation and free lists (fsp0fsp).
//! - `btree`, `blob`: B+trees (search, split, merge, root raise and lift, cursors) and overflow
//!   pages (btr0btr, btr0cur, btr0pcur).
//! - `trx`: transaction ids, undo logs, the history list, read views (trx0*, read0read).
//! - [`dict`]: table definitions, SYS_TABLES (dict0*).
//! - [`lock`]: table and record locks, waits, deadlock detection (lock0lock).
//! - `row`: row insert, update and delete, MVCC reads, rollback, purge (row0*).
//! - `check`: CHECK TABLE (`btr_validate_index`, `row_check_index_for_mysql`).
//! - [`handler`]: sessions and statements (step-driven), DDL, recovery (ha_innodb, srv0start).
//! - `sync`, [`shared`]: a thread-safe handle: one latch, one condition variable, sessions that
//!   block on lock waits, checked with loom (srv0srv, `srv_suspend_mysql_thread`).
//! - [`sql`]: the MySQL-flavoured server layer over the engine.
//! - [`wire`]: the MySQL client/server protocol as a pure codec.
//!
//! Sessions are steps: a statement returns its result or `Step::Waiting` when a row it needs is
//! held by another active transaction; `Engine::resume` retries it when the holder ends, or
//! fails it with MySQL error 1205 at the lock wait timeout on the engine's clock. Background
//! work (the once-a-second log flush that `innodb_flush_log_at_trx_commit` 0 and 2 rely on, the
//! page cleaner, purge) runs when the engine's clock passes its deadline, so a run is a pure
//! function of its configuration, its requests and its clock.
//!
//! # Compression
//!
//! ROW_FORMAT=COMPRESSED (`RowFormat::Compressed { key_block_size }` at 1, 2, 4, 8 or 16 KiB)
//! works through the engine and is still being built. What exists and is tested:
//!
//! - the page codec (`page::zip`): headers, the dense directory, DB_TRX_ID/DB_ROLL_PTR, child
//!   page numbers and off-page references kept uncompressed, the rest one zlib stream plus a
//!   modification log (`cargo test -p engine page::zip`);
//! - spaces whose pages are compressed images, in `fil`, the doublewrite buffer and the pager
//!   (`cargo test -p engine doublewrite`);
//! - mini-transactions that keep a compressed page in step with its frame, recompress when the
//!   log is full, refuse a change that no longer compresses, and log the images recovery
//!   replays (`cargo test -p engine mtr::zip`); a split, merge or root change of a compressed
//!   page builds the pages in their frames without redo and logs each as its compressed image,
//!   as InnoDB copies records under MTR_LOG_NONE and logs MLOG_ZIP_PAGE_COMPRESS
//!   (`Mtr::zip_detach`, `Mtr::zip_build`);
//! - B-trees that split where both halves compress (`cargo test -p engine btree::zip_tests`);
//! - the model property tests at every KEY_BLOCK_SIZE (`cargo test --test model`), and the
//!   exhaustive crash-point test at KEY_BLOCK_SIZE 1 and 8 (`cargo test --test crash
//!   compressed`);
//! - INNODB_CMP and INNODB_CMP_RESET (`Engine::innodb_cmp`, `Engine::innodb_cmp_reset`): a row
//!   per page size, every compression and decompression counted where it happens and timed in
//!   the engine's clock (`cargo test --test compression`); a change whose recompression does
//!   not fit reorganizes the page and tries again before the page is split;
//! - the buffer pool's side (`buf`, `buf::buddy`): compressed images live in a buddy allocator
//!   (1 to 16 KiB blocks split from 16 KiB frames, merged with their buddies, an in-use buddy
//!   of an unfixed page relocated so a merge can go on, a frame whose blocks are all free given
//!   back); a compressed page's uncompressed frame can be evicted alone (the unzip LRU, by
//!   `buf_LRU_evict_from_unzip_LRU`'s rule), the page then kept at its block size and
//!   decompressed again when next used; the pool's capacity bounds frames plus the allocator's
//!   frames. INNODB_CMPMEM and INNODB_CMPMEM_RESET (`Engine::innodb_cmpmem`,
//!   `Engine::innodb_cmpmem_reset`). `cargo test -p engine buf::buddy` (random allocations keep
//!   blocks disjoint and their bytes intact) and `cargo test --test compression` (a pool of 8
//!   frames holds more 1 KiB pages than frames, within its memory);
//! - long columns of compressed tables as one zlib stream over ZBLOB and ZBLOB2 pages (`cargo
//!   test -p engine blob`: 60000 bytes of text take fewer than a third of the pages they would
//!   uncompressed; a damaged stream, a cut chain or a wrong length is a typed corruption);
//! - the fuzzer's compressed tables: `innosim fuzz --seeds 0..2000 --profile compressed` ran
//!   with no violation, reaching 286535 compressions (107135 that did not fit), 2071681
//!   decompressions, 701815 changes in the modification log, 106296 recompressions, 38280
//!   reorganizations (422 of which then fit: compacting the heap seldom saves a page in this
//!   codec), 38254 refused changes and 16567 splits forced by the compressed size, 1843815
//!   uncompressed frames evicted alone, 1351404 compressed-only pages decompressed again,
//!   162021 blocks relocated, with 14734 torn pages repaired. At the end of each engine the
//!   runner holds INNODB_CMP to its rules (ok never above ops, nothing at a size no table has,
//!   the reset returns and zeroes, agreement with the engine's own counts of recompressions and
//!   refusals) and INNODB_CMPMEM to its own (blocks only at the tables' sizes, used and free
//!   blocks filling whole frames, the reset returns the table and zeroes its relocations). Five
//!   compression canaries (zip-skip-mod-log, zip-count-failed-compression, zip-skip-image-redo,
//!   zip-trx-id-frame-only, buddy-free-in-use) are each caught within the first two seeds of
//!   `--profile compressed`;
//! - the metamorphic oracle (`cargo test --test compression_oracle`): twelve default plans, run
//!   without the faults that strike at an I/O count, with every table COMPACT and then
//!   COMPRESSED at each KEY_BLOCK_SIZE, answer every statement alike (rows compared by a digest
//!   of their values, in order) and pass every checker;
//! - `innosim bench --compression [--rows N] [--quick] [--seeds N] [--json]`: file sizes,
//!   INNODB_CMP and update rates per row format, then sysbench OLTP in memory on COMPACT and
//!   COMPRESSED 8K by thread count beside seeds/003; the figures are `sim::zip_bench`'s.
//!
//! `innodb_compression_level` is `Config::compression_level` (0 to 9, default 6, checked at
//! open); it cannot be changed while the engine runs.

#![warn(missing_docs)]

// The ground: the I/O traits, the error type, byte layouts.
pub mod io;
pub mod error;
pub mod mach;
pub(crate) mod spare;
// Settings every floor may read: planted bugs and later InnoDB rules.
pub mod canary;
pub mod later;
// Formats: records, then the pages that hold them.
pub mod record;
pub mod page;
// Memory and files: the buffer pool, the redo log, tablespace files, the
// doublewrite buffer, and the pager that joins them.
pub(crate) mod buf;
pub mod redo;
pub mod fil;
pub mod doublewrite;
pub(crate) mod pager;
// Changes: mini-transactions, space management, B+trees, long columns.
pub(crate) mod mtr;
pub(crate) mod fsp;
pub(crate) mod btree;
pub(crate) mod blob;
// Transactions: undo, the dictionary, locks, rows, CHECK TABLE.
pub(crate) mod trx;
pub mod dict;
pub mod lock;
pub(crate) mod row;
pub(crate) mod check;
// The engine's API, and what serves it: threads, SQL, the wire format.
pub mod handler;
mod sync;
pub mod shared;
pub mod sql;
pub mod wire;

pub use handler::{
    Config, DdlStep, Engine, EngineStats, FlushAtCommit, InnodbCmp, InnodbCmpMem, InnodbLock,
    InnodbLockWait, InnodbTrx, RangeBound, RecoveryPhase, RecoveryReport, Request, Response,
    SessionId, Step,
};

pub use canary::{Canaries, Canary};
pub use dict::{ColumnDef, IndexDef, TableDef};
pub use error::{Error, Result};
pub use later::{LaterRule, LaterRules};
pub use record::{ColumnType, RowFormat, Value};
pub use trx::Isolation;
