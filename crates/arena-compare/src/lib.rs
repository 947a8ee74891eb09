//! Comparison of runs: the comparison tables, the noise verdict, the CI gate, the verdict
//! under `ab`'s and `demo`'s tables, and plots.
//!
//! Statistics come from `arena-stats` (type-7 quantiles, Mann-Whitney U, seeded
//! bootstrap); this crate decides what to compare, builds `arena_report::Table`s and
//! never prints. Warnings about the measurement itself are data ([`Finding`]), rendered
//! as a numbered marker next to the figure they concern.

pub mod ab;
mod arm;
mod breakdown;
mod breakdown_data;
mod breakdown_table;
mod by_run;
mod cells;
mod change;
mod comparable;
mod compare;
mod cpu;
pub mod decide;
mod findings;
pub mod frames;
mod gate;
mod gate_check;
mod gate_out;
mod gate_share;
mod gate_table;
pub mod gestures;
mod group;
pub mod html;
pub mod idle;
mod input;
mod json;
pub mod json_types;
mod limit;
pub mod options;
pub mod plan;
pub mod plot;
pub mod run_view;
mod split;
mod startup;
pub mod synthetic;
pub mod trend_plot;
pub mod typing;
mod verdict;

pub use arena_run::Metric;
pub use arm::arm_table;
pub use breakdown::{
    breakdown, breakdowns, Breakdown, BreakdownCell, Split, COALESCED_ROW, SPLITS,
};
pub use by_run::by_run_table;
pub use cells::{delta_cell, fmt_ms_signed, fmt_p, quantile_text, QUANTILES};
pub use comparable::{comparability, refuse_mixed, sides, warn_mixed, Mixed};
pub use compare::{compare, CompareOptions, Comparison, MetricChange};
pub use cpu::{cpu_table, runs_cpu_table};
pub use decide::{interval_method, Power};
pub use findings::{annotate, check, CheckOptions, Finding};
pub use gate::{
    gate, CheckStatus, Counts, GateCheck, GateOptions, GateOutcome, GateResult, OnUnknown,
    ShareCheck,
};
pub use gate_out::{gate_ending, SummaryFiles};
pub use group::{digest, groups, numbered_runs, run_names, By, Group, RunData, Select};
pub use html::{report_html, ReportOptions};
pub use input::{load_runs, load_runs_with_events};
pub use json::{
    ab_json, ab_verdict_json, arm_json, breakdown_json, comparison_cpu_json, comparison_json,
    gate_json, num, run_json, JSON_SCHEMA_VERSION,
};
pub use limit::{GateLimit, Limit, Share, DEFAULT_UNANSWERED_PT};
pub use startup::{startup_json, startup_tables, StartupSetup};
pub use typing::typing_table;
pub use verdict::{
    counts_verdict, judge, verdicts, ArmVerdict, CountsVerdict, RoundChanges, SideCounts,
    VerdictInput, Verdicts,
};
