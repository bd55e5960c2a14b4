//! The machinery of `tests/model.rs`: operations, the model's answers,
//! the lockstep harness and the proptest strategies.

pub mod answers;
pub mod harness;
pub mod ops;
pub mod strategy;
