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
            summary: RunSummary {
                loops: 2,
                answered: 1,
                unanswered: 1,
                ..RunSummary::default()
            },
            warnings: vec![Warning::new("unanswered", "1 of 2 loops unanswered")],
            wire: None,
            answer: None,
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
        .contains(",300.25,,,,0.25,,,,0,0"));
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
