//! What several subcommands share and none of them is: how progress looks on stderr, the
//! rule that outputs never overwrite inputs, and the ranges of the numeric flags.

pub mod outputs;
pub mod progress;
pub mod ranges;
