use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use arena_report::{Exit, ExitKind};
use arena_run::*;

fn sample_run() -> Run {
    let mut knobs = BTreeMap::new();
    knobs.insert("delay_ms".to_string(), "40".to_string());
    let loops = vec![
        Loop {
            index: 0,
            arm: "slow".into(),
            label: "firing".into(),
            event: "mousedown".into(),
            cold: true,
            answered: true,
            outcome: arena_run::Outcome::Answered,
            t_input: 100.0,
            t_send: Some(100.5),
            t_recv: Some(150.0),
            t_draw: Some(151.0),
            t_paint: Some(160.0),
            input_to_socket: Some(0.5),
            send_to_recv: Some(49.5),
            recv_to_draw: Some(1.0),
            input_to_paint: Some(60.0),
            reply_bytes: 300_000,
            reply_frames: 2,
            t_answer: None,
            input_to_pixels: None,
            after_lapse: false,
        },
        Loop {
            index: 1,
            arm: "slow".into(),
            label: "firing".into(),
            event: "mouseup".into(),
            cold: false,
            answered: false,
            outcome: arena_run::Outcome::Unanswered,
            t_input: 300.0,
            t_send: Some(300.25),
            t_recv: None,
            t_draw: None,
            t_paint: None,
            input_to_socket: Some(0.25),
            send_to_recv: None,
            recv_to_draw: None,
            input_to_paint: None,
            reply_bytes: 0,
            reply_frames: 0,
            t_answer: None,
            input_to_pixels: None,
            // Round-trips through loops.csv like every other column.
            after_lapse: true,
        },
    ];
    Run {
        meta: RunMeta {
            schema_version: SCHEMA_VERSION,
            arm: "slow".into(),
            knobs,
            pilot_file: Some("pilots/fixture.toml".into()),
            pilot_hash: "ab".repeat(32),
            url: "http://127.0.0.1:1234/".into(),
            chromium_version: "Chrome/156.0".into(),
            arena_perf_version: "0.1.0".into(),
            host: Host::current(),
            started_at: rfc3339_utc(std::time::SystemTime::now()),
            ended_at: rfc3339_utc(std::time::SystemTime::now()),
            status: RunStatus::Complete,
            status_message: None,
            socket_source: SocketSource::PageHook,
            seed: 7,
            summary: {
                let mut s = RunSummary {
                    // What `events` holds: one input-classified send of 14 B.
                    records: 1,
                    bytes_sent: 14,
                    sends_input: 1,
                    ..RunSummary::default()
                };
                s.count_loops(&loops);
                s
            },
            warnings: vec![Warning::new("unanswered", "1 of 2 loops unanswered")],
            wire: None,
            answer: None,
            link: None,
            link_connections: Vec::new(),
            trace: None,
            idle: None,
            cpu: None,
            loop_settings: None,
            browser: None,
            clock: None,
        },
        loops,
        events: vec![Event {
            seq: 12,
            kind: "ws_send".into(),
            t_ms: 100.5,
            size: 14,
            class: "input".into(),
            event: String::new(),
            trusted: false,
            target: 0,
            answers: None,
        }],
        setup_events: None,
        gestures: Vec::new(),
    }
}

fn exit_kind(err: &anyhow::Error) -> Option<ExitKind> {
    err.chain()
        .find_map(|e| e.downcast_ref::<Exit>())
        .map(|e| e.kind)
}

fn assert_bad_input(dir: &Path, must_name: &str) -> String {
    let err = Run::load(dir).expect_err("load must fail");
    assert_eq!(exit_kind(&err), Some(ExitKind::BadInput), "{err:#}");
    let msg = format!("{err:#}");
    assert!(
        msg.contains(must_name),
        "message `{msg}` must name `{must_name}`"
    );
    msg
}

#[test]
fn round_trip_keeps_every_field() {
    let tmp = tempfile::tempdir().unwrap();
    let run = sample_run();
    run.write(tmp.path()).unwrap();
    let back = Run::load(tmp.path()).unwrap();
    assert_eq!(back, run);
    let csv = fs::read_to_string(tmp.path().join(LOOPS_CSV)).unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(header, LOOP_COLUMNS.join(","));
    // Unanswered loops keep empty cells, not zeros that would read as 0 ms.
    assert!(csv
        .lines()
        .nth(2)
        .unwrap()
        .contains(",300.25,,,,0.25,,,,,,0,0"));
    assert_eq!(back.warm_values(Metric::InputToSocket), vec![0.25]);
    assert!(back.warm_values(Metric::SendToRecv).is_empty());
    assert_eq!(Metric::parse("send-to-recv"), Some(Metric::SendToRecv));
    assert_eq!(Metric::parse("inputtopaint"), Some(Metric::InputToPaint));
    assert_eq!(Metric::parse("latency"), None);
}

#[test]
fn a_folder_that_is_not_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let msg = assert_bad_input(tmp.path(), "not a run folder");
    assert!(msg.contains(&tmp.path().display().to_string()));
    assert_bad_input(&tmp.path().join("missing"), "not a directory");
    fs::write(tmp.path().join(RUN_JSON), "{\n  \"arm\": [1,\n").unwrap();
    assert_bad_input(tmp.path(), "run.json: line 3");
}

#[test]
fn another_schema_version() {
    let tmp = tempfile::tempdir().unwrap();
    sample_run().write(tmp.path()).unwrap();
    let path = tmp.path().join(RUN_JSON);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replace("\"schema_version\": 1", "\"schema_version\": 99"),
    )
    .unwrap();
    let msg = assert_bad_input(tmp.path(), "run.json");
    assert!(msg.contains("schema_version 99"), "{msg}");
}

#[test]
fn an_empty_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = sample_run();
    run.loops.clear();
    run.meta.status = RunStatus::Interrupted;
    run.write(tmp.path()).unwrap();
    let msg = assert_bad_input(tmp.path(), "loops.csv");
    assert!(msg.contains("empty run"), "{msg}");
}

#[test]
fn malformed_rows_name_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    sample_run().write(tmp.path()).unwrap();
    let path = tmp.path().join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replacen(",true,true,", ",maybe,true,", 1)).unwrap();
    assert_bad_input(tmp.path(), "loops.csv: line 2");

    sample_run().write(tmp.path()).unwrap();
    fs::write(tmp.path().join(EVENTS_JSONL), "{\"seq\":1}\nnot json\n").unwrap();
    assert_bad_input(tmp.path(), "events.jsonl: line 1");

    sample_run().write(tmp.path()).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replace(",slow,firing,mouseup", ",fast,firing,mouseup"),
    )
    .unwrap();
    assert_bad_input(tmp.path(), "loops.csv: line 3");
}

#[test]
fn find_all_expands_a_folder_of_runs() {
    let tmp = tempfile::tempdir().unwrap();
    sample_run().write(&tmp.path().join("b")).unwrap();
    sample_run().write(&tmp.path().join("a")).unwrap();
    fs::create_dir(tmp.path().join("not-a-run")).unwrap();
    let found = Run::find_all(tmp.path()).unwrap();
    assert_eq!(found, vec![tmp.path().join("a"), tmp.path().join("b")]);
    assert_eq!(Run::find_all(&found[0]).unwrap(), vec![found[0].clone()]);
    let loaded = Run::load_loops_only(&found[0]).unwrap();
    assert!(loaded.events.is_empty());
    assert_eq!(loaded.loops.len(), 2);
    let err = Run::find_all(&tmp.path().join("not-a-run")).unwrap_err();
    assert_eq!(exit_kind(&err), Some(ExitKind::BadInput));
}

/// Sets `column` of loops.csv's `line` (1-based, the header is line 1) to `value`. The
/// sample's cells hold no quotes or commas, so a split is exact.
fn set_cell(dir: &Path, line: usize, column: &str, value: &str) {
    let path = dir.join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let col = lines[0].split(',').position(|c| c == column).unwrap();
    let mut cells: Vec<&str> = lines[line - 1].split(',').collect();
    cells[col] = value;
    lines[line - 1] = cells.join(",");
    fs::write(&path, lines.join("\n") + "\n").unwrap();
}

fn written(run: &Run) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    run.write(tmp.path()).unwrap();
    tmp
}

/// Both loaders refuse it with the same message (tables read through the light one).
fn assert_both_refuse(dir: &Path, must_name: &[&str]) {
    let full = assert_bad_input(dir, must_name[0]);
    let err = Run::load_loops_only(dir).expect_err("load_loops_only must fail too");
    assert_eq!(format!("{err:#}"), full);
    for s in must_name {
        assert!(full.contains(s), "message `{full}` must say `{s}`");
    }
}

#[test]
fn non_finite_loop_values_name_file_and_line() {
    // inf, NaN and 1e400 (which parses to inf) used to load and then vanish from or
    // poison the figures; each is refused where it stands.
    for (value, why) in [
        ("inf", "is inf, not a finite number"),
        ("-inf", "is -inf, not a finite number"),
        ("NaN", "is NaN, not a finite number"),
        ("1e400", "is inf, not a finite number"),
    ] {
        for column in ["t_recv", "sendToRecv", "inputToPaint", "t_input"] {
            let tmp = written(&sample_run());
            set_cell(tmp.path(), 2, column, value);
            let said = format!("{column} {why}");
            assert_both_refuse(tmp.path(), &["loops.csv: line 2", &said]);
        }
    }
}

#[test]
fn out_of_range_values_are_refused() {
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 2, "t_paint", "1e308");
    assert_both_refuse(
        tmp.path(),
        &["loops.csv: line 2", "t_paint is 1e308: out of range"],
    );

    // A duration of 1e308 used to print as 9,223,372,036,854,775,807ms.
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 2, "inputToPaint", "1e308");
    assert_both_refuse(
        tmp.path(),
        &[
            "loops.csv: line 2",
            "inputToPaint is 1e308 ms: out of range",
        ],
    );

    // run.json's figures too (the matrix reads them directly).
    let mut run = sample_run();
    run.meta.summary.input_to_paint = arena_stats::Summary::of(&[60.0]);
    let tmp = written(&run);
    let path = tmp.path().join(RUN_JSON);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replacen("\"p90\": 60.0", "\"p90\": 1e308", 1)).unwrap();
    assert_both_refuse(
        tmp.path(),
        &["run.json", "summary.input_to_paint.p90 is 1e308"],
    );
}

#[test]
fn a_metric_must_agree_with_its_times() {
    // -5 where t_recv - t_send is 49.5: an edited figure, refused.
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 2, "sendToRecv", "-5");
    assert_both_refuse(
        tmp.path(),
        &[
            "loops.csv: line 2",
            "sendToRecv is -5 but t_recv - t_send is 49.5",
        ],
    );
    // A metric without its time, and a time pair without its metric.
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 3, "sendToRecv", "3");
    assert_both_refuse(
        tmp.path(),
        &["line 3", "sendToRecv is set but t_recv is empty"],
    );
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 2, "recvToDraw", "");
    assert_both_refuse(
        tmp.path(),
        &[
            "line 2",
            "recvToDraw is empty but t_recv and t_draw are set",
        ],
    );
    // Within the tolerance: a file rounded to the microsecond still loads.
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 2, "sendToRecv", "49.501");
    Run::load(tmp.path()).unwrap();
}

#[test]
fn invariant_breaks_load_only_where_the_pilot_recorded_them() {
    // Receipt stamped before the send (clock trouble, sockets seen through CDP on a clock
    // mapped onto the page's): the pilot writes such a loop, counts it in
    // summary.invariant_violations and warns `invariant`.
    let mut run = sample_run();
    run.meta.socket_source = SocketSource::Cdp;
    let l = &mut run.loops[0];
    l.t_recv = Some(95.0);
    l.send_to_recv = Some(95.0 - 100.5);
    l.recv_to_draw = Some(151.0 - 95.0);
    let tmp = written(&run);
    assert_both_refuse(
        tmp.path(),
        &[
            "loops.csv: line 2: t_recv (95) is before t_send (100.5)",
            "run.json records 0",
        ],
    );
    run.meta.summary.invariant_violations = 1;
    run.meta
        .warnings
        .push(Warning::new("invariant", "1 loops break ..."));
    let tmp = written(&run);
    assert_eq!(Run::load(tmp.path()).unwrap(), run);
    // More recorded than the rows hold is a disagreement too.
    run.meta.summary.invariant_violations = 2;
    assert_both_refuse(
        written(&run).path(),
        &[
            "run.json: summary.invariant_violations says 2",
            "loops.csv holds 1 loop(s) breaking",
        ],
    );
}

#[test]
fn the_header_must_be_the_known_columns() {
    // Renamed: the metric used to read as empty in every row and vanish (n=0).
    let tmp = written(&sample_run());
    let path = tmp.path().join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replacen("sendToRecv", "send_to_recv", 1)).unwrap();
    assert_both_refuse(
        tmp.path(),
        &[
            "loops.csv: line 1",
            "unknown column `send_to_recv`; missing column `sendToRecv`",
        ],
    );
    // An extra column, and a repeated one.
    fs::write(
        &path,
        text.replacen(",after_lapse\n", ",after_lapse,note\n", 1)
            .replace(",true\n", ",true,x\n")
            .replace(",false\n", ",false,y\n"),
    )
    .unwrap();
    assert_both_refuse(tmp.path(), &["loops.csv: line 1", "unknown column `note`"]);
    fs::write(&path, text.replacen("reply_frames", "reply_bytes", 1)).unwrap();
    assert_both_refuse(
        tmp.path(),
        &["line 1", "column `reply_bytes` appears twice"],
    );
    fs::write(&path, "").unwrap();
    assert_both_refuse(tmp.path(), &["loops.csv: line 1", "no header line"]);
}

#[test]
fn a_run_from_before_the_answer_columns_still_loads() {
    // Runs written before `outcome`, `t_answer` and `inputToPixels` lack them; their
    // loops were closed on the reply, so `outcome` follows `answered`.
    let run = sample_run();
    let tmp = written(&run);
    let path = tmp.path().join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    let old: String = text
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let keep: Vec<&str> = c
                .iter()
                .enumerate()
                .filter(|(i, _)| ![6, 16, 17].contains(i))
                .map(|(_, v)| *v)
                .collect();
            keep.join(",") + "\n"
        })
        .collect();
    assert!(
        old.starts_with("index,arm,label,event,cold,answered,t_input,"),
        "{old}"
    );
    fs::write(&path, old).unwrap();
    let back = Run::load(tmp.path()).unwrap();
    assert_eq!(back.loops, run.loops);
    assert_eq!(back.loops[0].outcome, Outcome::Answered);
}

#[test]
fn answered_must_agree_with_outcome() {
    let tmp = written(&sample_run());
    set_cell(tmp.path(), 3, "outcome", "claimed");
    set_cell(tmp.path(), 3, "answered", "true");
    assert_both_refuse(
        tmp.path(),
        &[
            "loops.csv: line 3",
            "answered is true but outcome is claimed",
        ],
    );
}

#[test]
fn rows_must_be_the_runs_own() {
    // A row cut out: the index says so, or the count does when it was the last.
    let tmp = written(&sample_run());
    let path = tmp.path().join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    fs::write(&path, format!("{}\n{}\n", lines[0], lines[2])).unwrap();
    assert_both_refuse(
        tmp.path(),
        &["loops.csv: line 2", "index 1 where 0 was due"],
    );
    fs::write(&path, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    assert_both_refuse(
        tmp.path(),
        &["loops.csv", "1 rows, but run.json's summary counts 2 loops"],
    );
}

#[test]
fn events_are_checked_line_by_line_even_when_not_kept() {
    let good = fs::read_to_string(written(&sample_run()).path().join(EVENTS_JSONL)).unwrap();
    let ev = |seq: u64, kind: &str, t: &str| {
        format!("{{\"seq\":{seq},\"kind\":\"{kind}\",\"t_ms\":{t},\"size\":0,\"class\":\"\",\"event\":\"\",\"trusted\":true,\"target\":0}}\n")
    };
    let cases = [
        (format!("{good}garbage\n"), "events.jsonl: line 2"),
        (
            format!("{good}{{\"seq\":13,\"kind\":\"draw\"}}\n"),
            "missing field `t_ms`",
        ),
        (
            format!("{good}{}", ev(13, "paint", "1e400")),
            "events.jsonl: line 2",
        ),
        (
            format!("{good}{}", ev(13, "paint", "1e300")),
            "t_ms is 1e300: out of range",
        ),
        (
            format!("{good}{}", ev(13, "click", "5")),
            "kind `click` is not a record kind",
        ),
        (
            format!("{good}{}", ev(11, "paint", "5")),
            "seq 11 after seq 12",
        ),
        // Found by the fuzz target (seeds/run_folder/regress-event-type-name): a line
        // that is a JSON string named the checker's own struct, not `Event`.
        (
            format!("{good}\"sqe{{\":9,\"kind\":\"paint\"}}\n"),
            "line 2: invalid type: string \"sqe{\", expected struct Event at line 1 column 6",
        ),
        (
            format!(
                "{good}{}",
                ev(13, "paint", "5").replace("\"size\":0", "\"size\":\"big\"")
            ),
            "events.jsonl: line 2",
        ),
    ];
    for (text, must) in cases {
        let tmp = written(&sample_run());
        fs::write(tmp.path().join(EVENTS_JSONL), &text).unwrap();
        assert_both_refuse(tmp.path(), &["events.jsonl", must]);
    }
    // Blank lines are not records; escaped strings parse borrowed or not.
    let mut two = sample_run();
    two.meta.summary.records = 2;
    let tmp = written(&two);
    let escaped = ev(13, "paint", "200").replace("\"event\":\"\"", "\"event\":\"r\\u0061f\"");
    fs::write(tmp.path().join(EVENTS_JSONL), format!("{good}\n{escaped}")).unwrap();
    assert_eq!(Run::load(tmp.path()).unwrap().events[1].event, "raf");
    Run::load_loops_only(tmp.path()).unwrap();
}

#[test]
fn a_run_given_twice_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    sample_run().write(&a).unwrap();
    let load = |p: &Path| (p.to_path_buf(), Run::load_loops_only(p).unwrap());
    // The same folder, spelled two ways.
    let err = check_distinct(&[load(&a), load(&tmp.path().join(".").join("a"))]).unwrap_err();
    assert_eq!(exit_kind(&err), Some(ExitKind::BadInput));
    let msg = format!("{err:#}");
    assert!(msg.contains("the same run folder, given twice"), "{msg}");
    // A copy of it.
    let copy = tmp.path().join("copy");
    fs::create_dir(&copy).unwrap();
    for f in [RUN_JSON, LOOPS_CSV, EVENTS_JSONL] {
        fs::copy(a.join(f), copy.join(f)).unwrap();
    }
    let msg = format!(
        "{:#}",
        check_distinct(&[load(&a), load(&copy)]).unwrap_err()
    );
    assert!(
        msg.contains("copy/run.json: the same run as") && msg.contains("a copy of it"),
        "{msg}"
    );
    // Another session of the same arm is a different run.
    let mut other = sample_run();
    other.meta.started_at = "2026-11-29T19:00:00.000Z".into();
    let b = tmp.path().join("b");
    other.write(&b).unwrap();
    check_distinct(&[load(&a), load(&b)]).unwrap();
}

#[test]
fn a_runs_trace_figures_load_and_bad_ones_are_refused() {
    let mut run = sample_run();
    run.meta.trace = Some(arena_run::TraceInfo {
        file: arena_run::TRACE_JSON.into(),
        events: 1200,
        loop_slices: 1,
        input_flows: 1,
        frame_flows: 1,
        data_loss: false,
        offset_ms: 14_238_966.3,
        alignment_marks: 16,
        alignment_error_ms: 0.004,
        inputs_checked: 2,
        input_error_ms: Some(0.006),
        overhead: arena_run::TraceOverhead {
            start_ms: 20.0,
            collect_ms: 150.0,
            write_ms: 3.0,
            chromium_bytes: 286_838,
            file_bytes: 290_000,
        },
        presented: Some(arena_run::TracePresented {
            source: Some("Display::FrameDisplayed via Graphics.Pipeline".into()),
            matched: 2,
            unmatched: 0,
            answer_to_presented_ms: arena_stats::Summary::of(&[3.25, 8.5]),
        }),
    });
    let tmp = written(&run);
    assert_eq!(Run::load(tmp.path()).unwrap(), run);

    // A run from before `--trace` has no `trace` and loads as before (sample_run's).
    let plain = written(&sample_run());
    let text = fs::read_to_string(plain.path().join(RUN_JSON)).unwrap();
    assert!(!text.contains("\"trace\""), "{text}");
    assert_eq!(Run::load(plain.path()).unwrap().meta.trace, None);

    let path = tmp.path().join(RUN_JSON);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(
        &path,
        text.replacen(
            "\"alignment_error_ms\": 0.004",
            "\"alignment_error_ms\": -1.0",
            1,
        ),
    )
    .unwrap();
    assert_both_refuse(tmp.path(), &["run.json", "trace.alignment_error_ms is -1"]);
    fs::write(
        &path,
        text.replacen("\"file\": \"trace.json\"", "\"file\": \"../x.json\"", 1),
    )
    .unwrap();
    assert_both_refuse(tmp.path(), &["run.json", "trace.file"]);
    fs::write(&path, text.replacen("\"min\": 3.25", "\"min\": -3.25", 1)).unwrap();
    assert_both_refuse(
        tmp.path(),
        &[
            "run.json",
            "trace.presented.answer_to_presented_ms.min is -3.25",
        ],
    );
}

// Bounded reading: a run file that is not a regular file is refused before it is opened,
// and no line, row or run.json is held past its bound.

/// Runs both loaders on `dir`, each on a thread given `LIMIT` to return, and returns the
/// refusal they share (exit 2) with the longer time taken. A loader that has not returned
/// by then is blocked on a FIFO or reading an endless file, and would go on reading (and
/// holding) it after the test failed: the test process is ended instead.
fn refused_within_limit(dir: &Path) -> (String, std::time::Duration) {
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    const LIMIT: Duration = Duration::from_secs(1);
    let mut msgs = Vec::new();
    let mut took = Duration::ZERO;
    for (name, load) in [
        ("Run::load", Run::load as fn(&Path) -> anyhow::Result<Run>),
        ("Run::load_loops_only", Run::load_loops_only),
    ] {
        let (tx, rx) = mpsc::channel();
        let d = dir.to_path_buf();
        let start = Instant::now();
        std::thread::spawn(move || tx.send(load(&d).map(drop)));
        let err = match rx.recv_timeout(LIMIT) {
            Ok(res) => res.expect_err("loading must fail"),
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{name} panicked"),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Past the harness's capture, which exiting would lose.
                let _ = writeln!(
                    std::io::stderr(),
                    "{name}({}) did not return within {LIMIT:?}: ending the test process",
                    dir.display()
                );
                std::process::exit(1);
            }
        };
        took = took.max(start.elapsed());
        assert_eq!(exit_kind(&err), Some(ExitKind::BadInput), "{err:#}");
        msgs.push(format!("{err:#}"));
    }
    assert_eq!(msgs[0], msgs[1], "both loaders refuse alike");
    assert!(took < LIMIT);
    (msgs.swap_remove(0), took)
}

fn replace_with_link(path: &Path, target: &Path) {
    fs::remove_file(path).unwrap();
    std::os::unix::fs::symlink(target, path).unwrap();
}

fn replace_with_fifo(path: &Path) {
    fs::remove_file(path).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

#[test]
fn events_linked_to_dev_zero_are_refused_unread() {
    let tmp = written(&sample_run());
    let events = tmp.path().join(EVENTS_JSONL);
    replace_with_link(&events, Path::new("/dev/zero"));
    let (msg, took) = refused_within_limit(tmp.path());
    assert!(
        msg.contains(&format!(
            "{}: a character device (linked to /dev/zero), not a regular file",
            events.display()
        )),
        "{msg}"
    );
    eprintln!("refused in {took:?}: {msg}");
}

#[test]
fn loops_linked_to_dev_zero_are_refused_unread() {
    let tmp = written(&sample_run());
    let loops = tmp.path().join(LOOPS_CSV);
    replace_with_link(&loops, Path::new("/dev/zero"));
    let (msg, _) = refused_within_limit(tmp.path());
    assert!(
        msg.contains(&format!("{}: a character device", loops.display())),
        "{msg}"
    );
}

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    // Opening a FIFO for reading blocks until something opens it for writing.
    for name in [EVENTS_JSONL, LOOPS_CSV, RUN_JSON] {
        let tmp = written(&sample_run());
        replace_with_fifo(&tmp.path().join(name));
        // A run.json that is not a regular file still marks a run folder.
        assert_eq!(Run::find_all(tmp.path()).unwrap(), vec![tmp.path()]);
        let (msg, _) = refused_within_limit(tmp.path());
        assert!(
            msg.contains(&format!("{name}: a FIFO (named pipe), not a regular file")),
            "{msg}"
        );
    }
    // The optional setup_events.jsonl as a FIFO is refused, not taken for absent.
    let tmp = written(&sample_run());
    let setup = tmp.path().join(SETUP_EVENTS_JSONL);
    fs::write(&setup, "").unwrap();
    replace_with_fifo(&setup);
    let msg = assert_bad_input(tmp.path(), "setup_events.jsonl: a FIFO (named pipe)");
    assert!(!msg.contains("line"), "{msg}");
}

#[test]
fn setup_events_cut_or_endless_are_refused_by_both_loaders() {
    // compare, gate, report and plot read through the light loader, which passed over the
    // file: cut mid-line, or a link to /dev/zero, it loaded.
    let mut run = sample_run();
    run.setup_events = Some(run.events.clone());
    let tmp = written(&run);
    let setup = tmp.path().join(SETUP_EVENTS_JSONL);
    let text = fs::read_to_string(&setup).unwrap();
    fs::write(&setup, &text[..text.len() / 2]).unwrap();
    assert_both_refuse(tmp.path(), &["setup_events.jsonl: line 1"]);
    fs::remove_file(&setup).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &setup).unwrap();
    assert_both_refuse(tmp.path(), &["setup_events.jsonl: a character device"]);
}

#[test]
fn a_line_past_the_bound_is_refused_at_the_bound() {
    assert_eq!(MAX_LINE_BYTES, 1 << 20);
    // 3 MiB of NULs and no newline: refused once the first 1 MiB is read.
    let tmp = written(&sample_run());
    fs::write(tmp.path().join(EVENTS_JSONL), vec![0u8; 3 << 20]).unwrap();
    let (msg, _) = refused_within_limit(tmp.path());
    assert!(
        msg.contains("events.jsonl: line 1: a line longer than 1 MiB (1048576 bytes)"),
        "{msg}"
    );
    // The same after good lines names the line it is on.
    let tmp = written(&sample_run());
    let path = tmp.path().join(EVENTS_JSONL);
    let mut text = fs::read(&path).unwrap();
    text.extend(vec![b' '; 3 << 20]);
    fs::write(&path, text).unwrap();
    let (msg, _) = refused_within_limit(tmp.path());
    assert!(
        msg.contains("events.jsonl: line 2: a line longer than 1 MiB"),
        "{msg}"
    );
    // A loops.csv row likewise, named by the line it starts on.
    let tmp = written(&sample_run());
    let path = tmp.path().join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    let (header, rows) = text.split_once('\n').unwrap();
    let long = "x".repeat(3 << 20);
    fs::write(&path, format!("{header}\n{long},{rows}")).unwrap();
    let (msg, _) = refused_within_limit(tmp.path());
    assert!(
        msg.contains("loops.csv: line 2: a row longer than 1 MiB (1048576 bytes)"),
        "{msg}"
    );
}

#[test]
fn a_run_json_past_its_cap_is_refused_unread() {
    assert_eq!(MAX_RUN_JSON_BYTES, 64 << 20);
    let tmp = written(&sample_run());
    let path = tmp.path().join(RUN_JSON);
    // Sparse: the length is what is checked, before a byte is read.
    fs::File::create(&path)
        .unwrap()
        .set_len(MAX_RUN_JSON_BYTES + 1)
        .unwrap();
    let (msg, _) = refused_within_limit(tmp.path());
    assert!(
        msg.contains(&format!(
            "{}: larger than 64 MiB (67108864 bytes)",
            path.display()
        )),
        "{msg}"
    );
}

#[test]
fn a_run_of_linked_files_and_lines_at_the_bound_loads() {
    // Links to regular files are read through; a line of exactly the bound is read.
    let mut run = sample_run();
    let line = serde_json::to_string(&run.events[0]).unwrap();
    run.events[0].event = "x".repeat(MAX_LINE_BYTES - line.len());
    let elsewhere = written(&run);
    let tmp = tempfile::tempdir().unwrap();
    for name in [RUN_JSON, LOOPS_CSV, EVENTS_JSONL] {
        std::os::unix::fs::symlink(elsewhere.path().join(name), tmp.path().join(name)).unwrap();
    }
    let events = fs::read(tmp.path().join(EVENTS_JSONL)).unwrap();
    assert_eq!(
        events.len(),
        MAX_LINE_BYTES + 1,
        "one line of the bound and its newline"
    );
    assert_eq!(Run::load(tmp.path()).unwrap(), run);
    assert_eq!(Run::load_loops_only(tmp.path()).unwrap().loops, run.loops);
}

#[test]
fn a_runs_browser_loads_an_old_run_has_none_and_bad_values_are_refused() {
    let mut run = sample_run();
    let hidpi = arena_run::BrowserSettings {
        dpr: 2.0,
        viewport_w: 1280,
        viewport_h: 800,
        cpu_throttle: 4.0,
        headful: Some(false),
    };
    assert_eq!(hidpi.label(), "dpr=2 viewport=1280x800 cpu=4x");
    run.meta.browser = Some(hidpi);
    let tmp = written(&run);
    assert_eq!(Run::load(tmp.path()).unwrap(), run);

    // A run from before the browser was recorded has no `browser` and loads as before.
    let plain = written(&sample_run());
    let text = fs::read_to_string(plain.path().join(RUN_JSON)).unwrap();
    assert!(!text.contains("\"browser\""), "{text}");
    assert_eq!(Run::load(plain.path()).unwrap().meta.browser, None);

    let path = tmp.path().join(RUN_JSON);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replacen("\"dpr\": 2.0", "\"dpr\": 0.0", 1)).unwrap();
    assert_both_refuse(tmp.path(), &["run.json", "browser.dpr is 0"]);
    fs::write(
        &path,
        text.replacen("\"cpu_throttle\": 4.0", "\"cpu_throttle\": 0.5", 1),
    )
    .unwrap();
    assert_both_refuse(tmp.path(), &["run.json", "browser.cpu_throttle is 0.5"]);
    fs::write(
        &path,
        text.replacen("\"viewport_w\": 1280", "\"viewport_w\": 0", 1),
    )
    .unwrap();
    assert_both_refuse(tmp.path(), &["run.json", "browser.viewport is 0x800"]);
}

/// An edit of a JSON document in place.
type Edit = dyn Fn(&mut serde_json::Value);

/// The sample run as two typed keys: one answered, one not.
fn typing_run() -> Run {
    let mut run = sample_run();
    for l in &mut run.loops {
        l.event = "keydown".into();
    }
    run.meta.summary.typing = Some(TypingSummary {
        mode: "pace".into(),
        keys: 2,
        answered: 1,
        unanswered: 1,
        claimed: 0,
        keydown_to_socket: arena_stats::Summary::of(&[0.5, 0.25]),
        keydown_to_glyph: None,
        glyph_frames: 0,
        frames_with_several: 0,
        max_keys_behind: 0,
    });
    run
}

#[test]
fn a_typing_summary_must_be_its_rows_and_its_figures_durations() {
    let run = typing_run();
    let tmp = written(&run);
    assert_eq!(Run::load(tmp.path()).unwrap(), run);
    let path = tmp.path().join(RUN_JSON);
    let text = fs::read_to_string(&path).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let damaged = |edit: &Edit| {
        let mut d = doc.clone();
        edit(&mut d["summary"]["typing"]);
        fs::write(&path, serde_json::to_string(&d).unwrap()).unwrap();
    };
    let cases: [(&Edit, &str); 4] = [
        (
            &|t| t["mode"] = "hammer".into(),
            "summary.typing.mode is `hammer`",
        ),
        (
            &|t| t["keys"] = 3.into(),
            "summary.typing.keys says 3, the keydown rows hold 2",
        ),
        (
            &|t| t["keydown_to_socket"]["p50"] = 1e308.into(),
            "summary.typing.keydown_to_socket.p50",
        ),
        (
            &|t| t["keydown_to_socket"]["mean"] = (-5.0).into(),
            "summary.typing.keydown_to_socket is not a summary of any values",
        ),
    ];
    for (edit, want) in cases {
        damaged(edit);
        assert_both_refuse(tmp.path(), &["run.json", want]);
    }
    fs::write(&path, &text).unwrap();
    assert!(Run::load(tmp.path()).is_ok(), "restored, it loads again");
}
