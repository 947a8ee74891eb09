//! The crate's integration tests, one module a file, in one test binary (one link).

mod breakdown;
mod gate;
mod one_rule;
mod plots;
mod tables;
mod verdict;
