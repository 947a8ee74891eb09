//! The collapsed-stack parser and the default bucket rules: any bytes, no panic.
#![no_main]

use std::sync::OnceLock;

use arena_logs::profile::{default_rules, Classifier, CollapsedParser, APPLICATION};
use arena_logs::scan::scan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static RULES: OnceLock<Classifier> = OnceLock::new();
    let c = RULES.get_or_init(|| Classifier::new(&default_rules(), APPLICATION).expect("default rules"));
    let rep = scan("fuzz", data, &mut CollapsedParser, |_, st| {
        assert!(c.classify(&st) < c.buckets().len());
        let _ = st.thread();
        let _ = st.leaf();
    })
    .expect("reading a slice cannot fail");
    assert_eq!(rep.records + rep.known + rep.unknown, rep.lines);
});
