//! What several subcommands share and none of them is: how progress looks on stderr, and
//! the rule that outputs never overwrite inputs.

pub mod outputs;
pub mod progress;
