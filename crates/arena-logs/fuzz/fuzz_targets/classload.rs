//! The class-load parser through the shared scanner: any bytes, no panic.
#![no_main]

use arena_logs::classload::{package_prefix, ClassLoadParser};
use arena_logs::scan::scan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let rep = scan("fuzz", data, &mut ClassLoadParser, |_, r| {
        for depth in 0..4 {
            let p = package_prefix(r.name, depth);
            assert!(p == "(default package)" || r.name.starts_with(p));
        }
    })
    .expect("reading a slice cannot fail");
    assert_eq!(rep.records + rep.known + rep.unknown, rep.lines);
});
