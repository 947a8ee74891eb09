//! The latency pilot, one module per stage: the pilot file ([`scenario`]), driving the
//! browser ([`drive`]), pairing records into loops ([`pair`]) closed by their answers
//! ([`answer`]) and writing the run
//! ([`write`]).

pub mod ab;
pub mod answer;
pub mod click;
pub mod drive;
pub mod pair;
pub mod scenario;
pub mod write;
