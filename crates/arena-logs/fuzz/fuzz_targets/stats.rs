//! The per-frame stats parser through the shared scanner: any bytes, no panic.
#![no_main]

use arena_logs::scan::scan;
use arena_logs::stats::StatsParser;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let rep = scan("fuzz", data, &mut StatsParser::webswing(), |_, r| {
        assert!(r.value.is_finite());
    })
    .expect("reading a slice cannot fail");
    assert_eq!(rep.records + rep.known + rep.unknown, rep.lines);
});
