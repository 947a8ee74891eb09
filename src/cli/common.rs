//! What several subcommands share and none of them is: how progress looks on stderr, the
//! rule that outputs never overwrite inputs, the ranges of the numeric flags, and how
//! standard output is written (a failed write is an error, never a panic), and how runs
//! reach the history as they are written and come back from it.

pub mod from_history;
pub mod stdout;
pub mod to_history;
