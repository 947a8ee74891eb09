//! The GC parser through the shared scanner: any bytes, no panic, consistent counts.
#![no_main]

use arena_logs::gc::{GcEvent, GcParser};
use arena_logs::scan::scan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parser = GcParser::default();
    let mut pauses = 0u64;
    let rep = scan("fuzz", data, &mut parser, |_, r| {
        if let GcEvent::Pause { ms, .. } = r.event {
            assert!(ms.is_finite() && ms >= 0.0);
            pauses += 1;
        }
    })
    .expect("reading a slice cannot fail");
    assert_eq!(rep.records + rep.known + rep.unknown, rep.lines);
    assert!(pauses <= rep.records);
    let _ = parser.span();
});
