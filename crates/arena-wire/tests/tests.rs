//! The crate's integration tests but the libpcap backend's (which needs the `pcap`
//! feature, `pcap_backend.rs`), one module a file, in one test binary.

mod common;
mod fixture_session;
mod wire;
