//! Simulated storage (being written).
