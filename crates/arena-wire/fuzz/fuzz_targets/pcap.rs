//! Any byte string as a pcap file: the summary must return Ok or Err, never panic, hang
//! or allocate without bound.
#![no_main]

use arena_wire::{summarize_reader, SummaryOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = SummaryOptions {
        port: None,
        window_s: Some(0.5),
        top: Some(3),
    };
    if let Ok(s) = summarize_reader(data, "fuzz.pcap", &opts) {
        let _ = s.tables();
    }
});
