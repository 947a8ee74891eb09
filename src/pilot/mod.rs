//! The latency pilot, one module per stage: the pilot file ([`scenario`]), driving the
//! browser ([`drive`]), pairing records into loops ([`pair`]) and writing the run
//! ([`write`]).

pub mod ab;
pub mod drive;
pub mod pair;
pub mod scenario;
pub mod write;
