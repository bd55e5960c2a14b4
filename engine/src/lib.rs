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

#![warn(missing_docs)]

// The ground: the I/O traits, the error type, byte layouts.
pub mod io;
pub mod error;
pub mod mach;
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
