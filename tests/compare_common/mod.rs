//! Helpers shared by the compare test binaries: run the real binary, read its output.

use std::path::Path;
use std::process::{Command, Output};

pub fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
