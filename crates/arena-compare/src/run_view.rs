//! One run's own views, printed by `pilot` after its arm table: its frame table and, with
//! `--idle`, its idle table. Apart from `frames.rs` and `idle.rs` because it uses both,
//! and `idle.rs` builds on the frame reducers.

use arena_report::Table;
use arena_run::Run;

use crate::frames::{frames_table, FrameSource, BURST_GAP_MS};
use crate::idle::idle_table;

/// The tables the pilot prints after its own: the run's frame table and, with `--idle`,
/// its idle table.
pub fn run_tables(run: &Run) -> Vec<Table> {
    let name = format!("{}, this run", run.meta.arm);
    let mut out = vec![frames_table(
        &[FrameSource::of_run(name.clone(), run)],
        BURST_GAP_MS,
    )];
    if let Some(w) = &run.meta.idle {
        out.push(idle_table(&[(name, w)]));
    }
    out
}
