//! The crate's integration tests, one module a file, in one test binary (one link).

mod cross_checks;
mod folder;
