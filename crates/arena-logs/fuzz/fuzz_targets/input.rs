//! The input layer (gzip sniffing and inflating, the binary check) through the GC parser:
//! any bytes, no panic, and whatever is accepted is counted line for line.
#![no_main]

use std::io::Cursor;

use arena_logs::gc::GcParser;
use arena_logs::input::from_reader;
use arena_logs::scan::{scan, LineParser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = from_reader("fuzz", Box::new(Cursor::new(data.to_vec())), GcParser::KIND)
    else {
        return;
    };
    // A corrupt gzip stream is an error, not a panic.
    if let Ok(rep) = scan("fuzz", input.reader, &mut GcParser::default(), |_, _| {}) {
        assert_eq!(rep.records + rep.known + rep.unknown, rep.lines);
        assert!(input.gzip || rep.bytes == data.len() as u64);
    }
});
