//! Reference models and checkers.
