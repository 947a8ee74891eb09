//! Tables over runs built in memory.

use arena_compare::{by_run_table, synthetic};
use arena_report::Format;
use arena_run::Run;

/// 101 loops whose type-7 p50, p90 and p99 are exactly the given figures (ranks 50, 90
/// and 99 of 0..=100), every reply over 4 KB (a busy board).
fn run_with(arm: &str, p50: f64, p90: f64, p99: f64, bytes: u64) -> Run {
    let mut v: Vec<f64> = (0..101)
        .map(|i| match i {
            0..50 => p50 * (0.5 + i as f64 / 100.0),
            50 => p50,
            51..90 => p50 + (p90 - p50) * (i - 50) as f64 / 40.0,
            90 => p90,
            91..99 => p90 + (p99 - p90) * (i - 90) as f64 / 9.0,
            99 => p99,
            _ => p99 + 10.0,
        })
        .collect();
    // Out of order on purpose: the table must not rely on loop order.
    v.reverse();
    let mut r = synthetic::run(arm, &v, 6000);
    r.meta.summary.bytes_received = bytes;
    r
}

#[test]
fn by_run_markdown_is_the_notes_table() {
    let runs = vec![
        run_with("before", 67.0, 127.7, 150.8, 2_046_929),
        run_with("after", 55.0, 84.8, 132.8, 1_129_511),
        run_with("before", 72.4, 118.9, 152.4, 2_091_815),
        run_with("after", 54.8, 107.2, 143.9, 1_095_660),
    ];
    let md = by_run_table(&runs).render(Format::Markdown);
    let want = "\
|  | before, run 1 | before, run 2 | after, run 1 | after, run 2 |
|---|---|---|---|---|
| p50 | 67.0ms | 72.4ms | 55.0ms | 54.8ms |
| p90 | 127.7ms | 118.9ms | 84.8ms | 107.2ms |
| p99 | 150.8ms | 152.4ms | 132.8ms | 143.9ms |
| bytes received | 2,046,929 | 2,091,815 | 1,129,511 | 1,095,660 |
";
    assert!(md.contains(want), "{md}");
    assert!(
        md.starts_with("### inputToPaint of warm loops, unanswered ones censored at the window, ms (n=101 per run)"),
        "{md}"
    );
    // No warnings on a clean measurement.
    assert!(!md.contains('\u{26a0}'), "{md}");
}

#[test]
fn by_run_marks_small_samples_and_idle_runs_next_to_the_figure() {
    let busy = synthetic::run("stock", &synthetic::lognormal(56, 50.0, 0.3, 0.0, 1), 6000);
    let idle = synthetic::run("deploy", &synthetic::lognormal(150, 50.0, 0.3, 0.0, 2), 300);
    let t = by_run_table(&[busy, idle]);
    let md = t.render(Format::Markdown);
    // p99 of the 56-loop run carries a marker; the 150-loop run's does not.
    let p99 = md.lines().find(|l| l.starts_with("| p99 |")).unwrap();
    let cells: Vec<&str> = p99.split('|').map(str::trim).collect();
    assert!(cells[2].contains('\u{26a0}'), "{p99}");
    assert!(!cells[3].contains('\u{26a0}'), "{p99}");
    assert!(md.contains("p99 from 56 loops (fewer than 100)"), "{md}");
    // The idle run's header is marked, and the note says why.
    assert!(
        t.columns[2].name.starts_with("deploy, run 1 \u{26a0}"),
        "{:?}",
        t.columns[2]
    );
    assert!(
        md.contains("looks idle: 0 of 150 replies over 4 KB"),
        "{md}"
    );
}

fn captured(mut run: Run, payload: u64, app: u64) -> Run {
    run.meta.wire = Some(arena_run::WireFigures {
        source: "pcap".into(),
        server_to_client: Some(arena_run::WireDirection {
            frames: 3,
            frame_payload_bytes: payload,
            app_bytes: app,
            ..Default::default()
        }),
        client_to_server: Some(arena_run::WireDirection::default()),
        ..Default::default()
    });
    run
}

#[test]
fn wire_figures_get_rows_only_when_runs_were_captured() {
    let xs = synthetic::lognormal(120, 50.0, 0.2, 0.0, 7);
    let plain = [
        synthetic::run("stock", &xs, 6000),
        synthetic::run("lazy-png", &xs, 6000),
    ];
    let md = by_run_table(&plain).render(Format::Markdown);
    assert!(!md.contains("wire payload"), "{md}");
    let cmp = arena_compare::compare(&plain, &Default::default()).unwrap();
    assert!(!cmp.table.render(Format::Markdown).contains("wire"));

    let runs = [
        captured(synthetic::run("stock", &xs, 6000), 900_000, 1_450_000),
        captured(synthetic::run("lazy-png", &xs, 6000), 450_000, 725_000),
    ];
    let md = by_run_table(&runs).render(Format::Markdown);
    assert!(
        md.contains("| wire payload, server\u{2192}client | 900,000 | 450,000 |"),
        "{md}"
    );
    let cmp = arena_compare::compare(&runs, &Default::default()).unwrap();
    let md = cmp.table.render(Format::Markdown);
    let row = md
        .lines()
        .find(|l| l.starts_with("| wire app bytes"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        row.contains("1,450,000") && row.contains("725,000"),
        "{row}"
    );
    assert!(row.contains("\u{2212}50 %"), "{row}");
}

#[test]
fn the_arms_wire_note_says_the_app_to_wire_ratio_of_each_direction() {
    let xs = synthetic::lognormal(40, 50.0, 0.2, 0.0, 3);
    let mut run = captured(synthetic::run("deflate", &xs, 6000), 900_000, 1_449_000);
    let w = run.meta.wire.as_mut().unwrap();
    w.server_to_client.as_mut().unwrap().compression_ratio = Some(1_449_000.0 / 900_000.0);
    let md = arena_compare::arm_table(&run).render(Format::Markdown);
    let note = md
        .lines()
        .find(|l| l.contains("wire (wire.pcap"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        note.contains("1,449,000B app bytes (app/wire 1.61x: the wire carries 62 %)"),
        "{note}"
    );
    // A direction whose app bytes are unknown says no ratio.
    assert_eq!(note.matches("app/wire").count(), 1, "{note}");
}

#[test]
fn a_traced_run_says_under_its_table_where_the_trace_is_and_how_well_it_is_aligned() {
    let xs: Vec<f64> = (0..20).map(|i| 40.0 + i as f64).collect();
    let plain = synthetic::run("stock", &xs, 6000);
    let text = arena_compare::arm_table(&plain).render(Format::Table);
    assert!(!text.contains("trace ("), "{text}");
    let mut traced = plain.clone();
    traced.meta.trace = Some(arena_run::TraceInfo {
        file: arena_run::TRACE_JSON.into(),
        events: 50_871,
        loop_slices: 39,
        alignment_marks: 16,
        alignment_error_ms: 0.004,
        inputs_checked: 40,
        input_error_ms: Some(0.005),
        ..arena_run::TraceInfo::default()
    });
    let text = arena_compare::arm_table(&traced).render(Format::Table);
    assert!(
        text.contains("trace (trace.json")
            && text.contains("39 loop slices")
            && text.contains("within 0.004 ms (16 marks; inputs within 0.005 ms, n=40)"),
        "{text}"
    );
}

#[test]
fn the_arms_title_names_its_browser_when_the_run_recorded_one() {
    let xs: Vec<f64> = (0..20).map(|i| 40.0 + i as f64).collect();
    let mut run = synthetic::run("hidpi", &xs, 6000);
    let title = |r: &Run| arena_compare::arm_table(r).title.unwrap_or_default();
    assert!(!title(&run).contains("browser"), "{}", title(&run));
    run.meta.browser = Some(arena_run::BrowserSettings {
        dpr: 2.0,
        viewport_w: 1280,
        viewport_h: 800,
        cpu_throttle: 1.0,
        headful: None,
    });
    assert!(
        title(&run).ends_with("; browser dpr=2 viewport=1280x800 cpu=1x"),
        "{}",
        title(&run)
    );
}

/// 200 loops, 2 of them unanswered, a 2,000 ms window: the p99 lands between the largest
/// answered loop (50 ms) and the first unanswered one, so all that is known of it is that
/// it is at least 1 % of the way from 50 ms to the window: 50 + 0.01 × 1,950 = 69.5 ms.
/// The table says that, not "> 2,000ms (window)"; the max is past the window.
#[test]
fn a_censored_p99_in_the_band_reads_at_least_its_bound() {
    let v: Vec<f64> = (0..200).map(|i| 1.0 + 49.0 * i as f64 / 197.0).collect();
    let mut r = synthetic::run("stock", &v, 6000);
    synthetic::unanswer(&mut r, |i, _| i >= 198);
    r.meta.loop_settings = Some(arena_run::LoopSettings {
        loop_events: vec!["mousedown".into()],
        timeout_ms: 2000,
        settle_ms: 100,
        interval_ms: 20,
        warmup: 0,
        move_first: false,
        hold: "fixed".into(),
        hold_min_ms: 20,
        hold_max_ms: 20,
        phase_jitter_ms: 0.0,
        frame_interval_ms: None,
        socket_clock_error_ms: None,
        scenario: None,
    });
    let window = 2000.0;
    let h = 199.0 * 0.99;
    let by_hand = 50.0 + (h - 197.0) * (window - 50.0);
    let table = by_run_table(&[r]).render(Format::Csv);
    let p99 = table.lines().find(|l| l.starts_with("p99")).unwrap();
    assert!(
        p99.contains(&format!("\u{2265} {by_hand:.1}ms")),
        "{by_hand:.1}: {table}"
    );
    assert!(!p99.contains("window"), "{table}");
}
