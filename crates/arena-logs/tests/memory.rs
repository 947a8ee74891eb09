//! Constant memory on gzip: a log that inflates to far more than the memory the reducer may
//! use is streamed through the decoder, never held whole. Its own test binary with one test,
//! so the process's peak RSS (`VmHWM`) belongs to this reduction alone.

use std::io::Write;

use arena_logs::gc;

/// Decompressed size of the generated log.
const TEXT_MB: usize = 96;
/// What the reduction may add to the peak RSS: the scanner's 1 MB block, the 64 KB heads,
/// the decoder's window and buffers, the summaries' histograms. Holding the text would add
/// all of `TEXT_MB`.
const ALLOWED_GROWTH_MB: f64 = 32.0;

/// Peak resident set size of this process so far, in MB.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kb / 1024.0
}

#[test]
fn a_large_gzip_log_streams_in_bounded_memory() {
    // One 1 MB member of G1 pause lines, written TEXT_MB times: a concatenated multi-member
    // file whose text is TEXT_MB MB, made without compressing TEXT_MB MB.
    let mut member_text = String::new();
    let mut pauses_per_member = 0u64;
    while member_text.len() < 1 << 20 {
        let i = pauses_per_member;
        member_text.push_str(&format!(
            "[{}.{:03}s][info][gc] GC({i}) Pause Young (Normal) (G1 Evacuation Pause) {}M->{}M(66M) {}.{:03}ms\n",
            i / 1000,
            i % 1000,
            7 + i % 13,
            2 + i % 5,
            i % 9,
            (i * 37) % 1000
        ));
        pauses_per_member += 1;
    }
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(member_text.as_bytes()).unwrap();
    let member = e.finish().unwrap();
    drop(member_text);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big-gc.log.0");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for _ in 0..TEXT_MB {
        f.write_all(&member).unwrap();
    }
    f.flush().unwrap();
    drop(f);

    let before = peak_rss_mb();
    let s = gc::summarize(&path, None).expect("the gzip log reduces");
    let growth = peak_rss_mb() - before;
    eprintln!("peak RSS grew by {growth:.1} MB reading {TEXT_MB} MB of text (from {before:.1} MB)");
    assert_eq!(s.all.ms.count(), pauses_per_member * TEXT_MB as u64);
    assert!(s.scan.bytes >= (TEXT_MB as u64) << 20, "{}", s.scan.bytes);
    assert!(
        growth < ALLOWED_GROWTH_MB,
        "peak RSS grew by {growth:.1} MB reading {TEXT_MB} MB of text"
    );
}
