//! What the tests share: the binary, a watched child process and process groups
//! (`watched`), and the lock that keeps measuring tests alone on the machine (`machine`).
pub mod machine;
pub mod watched;

pub use watched::bin;
