//! What several subcommands share and none of them is: how progress looks on stderr.

pub mod progress;
