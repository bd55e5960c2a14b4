//! innosim's storage engine: a Rust re-implementation of the InnoDB Plugin
//! 1.0 core. B+trees on 16 KiB pages, a buffer pool, a redo log with
//! mini-transactions and checkpoints, a doublewrite buffer, undo logs and
//! MVCC, and crash recovery, all on top of the [`io`] traits so the same
//! engine runs on a real directory or inside the simulator.
//!
//! Modules are declared bottom-up, in the order data flows through them.

#![warn(missing_docs)]

pub mod blob;
pub mod btree;
pub mod buf;
pub mod canary;
pub mod check;
pub mod dict;
pub mod doublewrite;
pub mod error;
pub mod fil;
pub mod fsp;
pub mod handler;
pub mod io;
pub mod later;
pub mod lock;
pub mod mtr;
pub mod page;
pub mod pager;
pub mod record;
pub mod redo;
pub mod row;
pub mod shared;
pub mod sql;
mod sync;
pub mod trx;
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
