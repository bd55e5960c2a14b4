//! Reference models and checkers (oracles) for innosim.
//!
//! The models here are deliberately simple: ordered maps and lists that
//! say what a correct storage engine must have done. They depend on no
//! other crate of the workspace, so they cannot share a bug with the engine
//! by sharing its code.

#![warn(missing_docs)]

pub mod collation;
pub mod lock;
pub mod recovery;
pub mod value;

pub use collation::Collation;
pub use recovery::{CommitHistory, Durability, RecoveryVerdict, TxnEffects, Write};
pub use value::{Db, ModelValue, Row, TableState};
