//! The simulated world: a disk and a clock that the engine cannot tell from
//! real ones, but that crash, lose unsynced writes and tear pages on demand.

#![warn(missing_docs)]

pub mod bench;
pub mod campaign;
pub mod client;
pub mod clock;
pub mod corpus;
pub mod crashloop;
pub mod diff;
pub mod engine_bench;
pub mod index_bench;
pub mod judge;
pub mod kind;
pub mod plan;
pub mod profile;
pub mod report;
pub mod runner;
pub mod schedule;
pub mod schema;
pub mod script;
pub mod serve;
pub mod shrink;
pub mod storage;
pub mod tables;
pub mod zip_bench;
