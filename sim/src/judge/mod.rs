//! The judges: what a run's checkers decide, each from what the runner saw
//! itself (the client's statements, results and instants, the simulated
//! disk's records), never from what the engine reports of itself.
//!
//! - [`durability`]: which commits a crash must keep, by flush setting,
//!   from the client's acknowledgement instants and the disk's sync record;
//! - [`reads`]: what each statement must return or change, by the model;
//! - [`foreign`]: what FOREIGN KEY constraints add to a change, or refuse;
//! - [`locks`]: the engine's lock events as the lock oracle states them,
//!   timed by the runner (the oracle itself is [`models::lock`]).

pub mod durability;
pub mod foreign;
pub mod locks;
pub mod reads;
