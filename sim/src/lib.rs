//! The simulated world.
