//! What several subcommands share and none of them is: how standard output is written (a
//! failed write is an error, never a panic), and the flags by which runs reach the history
//! as they are written (those by which they come back from it are
//! `arena_history::from_history`'s). How progress looks, the outputs rule and the
//! flag ranges are the libraries' (`arena_report::progress`, `arena_run::outputs`,
//! `arena_report::ranges`, `arena_pilot::ranges`).

pub mod stdout;
pub mod to_history;
