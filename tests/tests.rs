//! Every integration test of the `arena-perf` binary, in one test binary: one link of the
//! whole crate graph instead of one per file, and the tests of every file share the
//! machine under one lock (`support::machine`) instead of running file after file.
//! `cargo test --test tests MODULE::` runs one file's tests.

mod compare_common;
mod support;

mod bounded_run_reading;
mod capture_cli;
mod cli_args;
mod compare_cli;
mod compare_fixture;
mod explain;
mod fifo_waits;
mod file_cycles;
mod fixtures_examples;
mod flag_ranges;
mod fn_size;
mod history_ci;
mod history_cli;
mod history_pg;
mod history_real;
mod json_schema;
mod layout;
mod logs_cli;
mod outputs_never_overwrite;
mod pilot_browser;
mod pilot_signals;
mod pilot_stall;
mod progress_cli;
mod report_html;
mod serve_cli;
mod shell_cli;
mod traps_matrix;
mod write_errors;
