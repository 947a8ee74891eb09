//! A run folder is checked against itself when it is loaded: `run.json`'s summary against
//! the rows of `loops.csv` and the records of `events.jsonl`, and the times in the order
//! the recorder writes them. Damaged copies of a checked-in run, in a tempdir, are refused
//! naming the file, the field or line, and both values; every checked-in run still loads.

use std::fs;
use std::path::{Path, PathBuf};

use arena_report::{Exit, ExitKind};
use arena_run::{Run, EVENTS_JSONL, LOOPS_CSV, RUN_JSON};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every run folder checked into the repository (a folder holding `run.json` and
/// `loops.csv`; `docs/schema/run.json` is a schema), build output and hidden folders aside.
fn checked_in_runs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !e.file_type().is_ok_and(|t| t.is_dir()) || name.starts_with('.') || name == "target"
            {
                continue;
            }
            if p.join(RUN_JSON).is_file() && p.join(LOOPS_CSV).is_file() {
                out.push(p.clone());
            }
            walk(&p, out);
        }
    }
    let mut out = Vec::new();
    walk(&repo(), &mut out);
    out.sort();
    out
}

/// A copy of `fixtures/runs/stock-1` in a tempdir.
fn copy_of_stock() -> tempfile::TempDir {
    let from = repo().join("fixtures/runs/stock-1");
    let tmp = tempfile::tempdir().unwrap();
    for e in fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
    }
    tmp
}

fn edit_run_json(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(RUN_JSON);
    let mut v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut v);
    fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn event_lines(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join(EVENTS_JSONL))
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn write_event_lines(dir: &Path, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(dir.join(EVENTS_JSONL), text).unwrap();
}

/// Both loaders refuse `dir` as bad input (exit 2), with one message naming every part.
fn refused(dir: &Path, must: &[&str]) -> String {
    let err = Run::load(dir).expect_err("load must fail");
    let kind = err
        .chain()
        .find_map(|e| e.downcast_ref::<Exit>())
        .map(|e| e.kind);
    assert_eq!(kind, Some(ExitKind::BadInput), "{err:#}");
    let msg = format!("{err:#}");
    let light = Run::load_loops_only(dir).expect_err("load_loops_only must fail too");
    assert_eq!(format!("{light:#}"), msg);
    for m in must {
        assert!(msg.contains(m), "message `{msg}` must say `{m}`");
    }
    msg
}

#[test]
fn every_checked_in_run_folder_loads() {
    let runs = checked_in_runs();
    assert!(runs.len() >= 4, "found {runs:?}");
    for dir in runs {
        Run::load(&dir).unwrap_or_else(|e| panic!("{}: {e:#}", dir.display()));
        Run::load_loops_only(&dir).unwrap_or_else(|e| panic!("{}: {e:#}", dir.display()));
    }
    // The untouched copy the damaged ones below start from loads too.
    Run::load(copy_of_stock().path()).unwrap();
}

#[test]
fn events_cut_at_a_line_boundary_say_what_is_missing() {
    let tmp = copy_of_stock();
    let mut lines = event_lines(tmp.path());
    assert_eq!(lines.len(), 301);
    lines.truncate(296);
    write_event_lines(tmp.path(), &lines);
    refused(
        tmp.path(),
        &[
            "events.jsonl: ends after 296 line(s) holding 296 record(s)",
            "run.json's summary.records says 301",
            "5 record(s) are missing",
        ],
    );
}

#[test]
fn empty_events_are_refused() {
    let tmp = copy_of_stock();
    fs::write(tmp.path().join(EVENTS_JSONL), "").unwrap();
    refused(
        tmp.path(),
        &[
            "events.jsonl: is empty",
            "summary.records says 301",
            "301 record(s) are missing",
        ],
    );
}

#[test]
fn answered_off_by_some_names_the_field_and_both_values() {
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| v["summary"]["answered"] = 5.into());
    refused(
        tmp.path(),
        &["run.json: summary.answered says 5, loops.csv holds 12 answered loops"],
    );
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| v["summary"]["unanswered"] = 2.into());
    refused(
        tmp.path(),
        &["run.json: summary.unanswered says 2, loops.csv holds 0 unanswered loops"],
    );
}

#[test]
fn a_record_count_the_file_does_not_hold_is_refused() {
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| v["summary"]["records"] = 999.into());
    refused(
        tmp.path(),
        &[
            "events.jsonl: ends after 301 line(s) holding 301 record(s)",
            "summary.records says 999",
            "698 record(s) are missing",
        ],
    );
    // Fewer than the file holds: records were added.
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| v["summary"]["records"] = 300.into());
    refused(
        tmp.path(),
        &[
            "events.jsonl: holds 301 record(s)",
            "summary.records says 300",
        ],
    );
}

#[test]
fn traffic_figures_must_be_the_records() {
    let cases = [
        (
            "frames_received",
            3,
            "summary.frames_received says 3, events.jsonl holds 12 receipts",
        ),
        (
            "bytes_received",
            12_911,
            "summary.bytes_received says 12911, events.jsonl holds 46572 bytes received",
        ),
        (
            "sends_ack",
            0,
            "summary.sends_ack says 0, events.jsonl holds 12 ack-classified sends",
        ),
    ];
    for (field, value, must) in cases {
        let tmp = copy_of_stock();
        edit_run_json(tmp.path(), |v| v["summary"][field] = value.into());
        refused(tmp.path(), &["run.json: ", must]);
    }
}

#[test]
fn a_receipt_before_its_send_names_file_line_and_times() {
    // Loop 1 (line 3): its receipt moved before its send, the metrics kept the
    // differences of the times, and run.json admitting one invariant break: the page hook
    // stamps the send and the receipt itself, the receipt written after the send, so no
    // count makes this load.
    let tmp = copy_of_stock();
    let path = tmp.path().join(LOOPS_CSV);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let mut cells: Vec<String> = lines[2].split(',').map(String::from).collect();
    let num = |cells: &[String], name: &str| cells[col(name)].parse::<f64>().unwrap();
    let (t_send, t_draw) = (num(&cells, "t_send"), num(&cells, "t_draw"));
    let t_recv = 2150.0;
    assert!(t_recv < t_send);
    cells[col("t_recv")] = t_recv.to_string();
    cells[col("sendToRecv")] = (t_recv - t_send).to_string();
    cells[col("recvToDraw")] = (t_draw - t_recv).to_string();
    lines[2] = cells.join(",");
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    edit_run_json(tmp.path(), |v| {
        v["summary"]["invariant_violations"] = 1.into()
    });
    refused(
        tmp.path(),
        &[&format!(
            "loops.csv: line 3: t_recv (2150) is before t_send ({t_send})"
        )],
    );
}

#[test]
fn a_record_stamped_before_the_one_written_before_it_names_both_lines() {
    // A draw moved 50 ms back, before the send written two lines earlier.
    let tmp = copy_of_stock();
    let mut lines = event_lines(tmp.path());
    let at = lines
        .iter()
        .position(|l| l.contains("\"kind\":\"draw\""))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&lines[at]).unwrap();
    let earlier = v["t_ms"].as_f64().unwrap() - 50.0;
    v["t_ms"] = earlier.into();
    lines[at] = serde_json::to_string(&v).unwrap();
    write_event_lines(tmp.path(), &lines);
    let msg = refused(
        tmp.path(),
        &[
            &format!(
                "events.jsonl: line {}: draw at t_ms {earlier} is before",
                at + 1
            ),
            "(t_ms ",
        ],
    );
    assert!(msg.contains(" at line "), "{msg}");
    // Inputs carry the event's own timeStamp, taken before the listener ran: they are not
    // ordered against the records written before them (the fixture's inputs are not).
    Run::load(copy_of_stock().path()).unwrap();
}

#[test]
fn stale_and_repeated_records_are_counted_as_the_pilot_counts_them() {
    // Two records from before the clear and one drained twice: the file holds 304 lines,
    // the summary 301 records beside 2 stale; it loads only when it says so.
    let tmp = copy_of_stock();
    let mut lines = event_lines(tmp.path());
    let stale = |seq: u64| {
        format!("{{\"seq\":{seq},\"kind\":\"input\",\"t_ms\":1.5,\"size\":0,\"class\":\"other\",\"event\":\"mousemove\",\"trusted\":true,\"target\":0}}")
    };
    lines.insert(0, stale(3));
    lines.insert(0, stale(2));
    let again = lines[10].clone();
    lines.insert(10, again);
    write_event_lines(tmp.path(), &lines);
    refused(
        tmp.path(),
        &[
            "events.jsonl: holds 303 record(s)",
            "summary.records says 301",
        ],
    );
    edit_run_json(tmp.path(), |v| v["summary"]["stale_records"] = 2.into());
    Run::load(tmp.path()).unwrap();
    Run::load_loops_only(tmp.path()).unwrap();
}

#[test]
fn a_summary_field_older_runs_lack_is_not_checked() {
    // Runs made before `claimed` was counted have no such field; they load.
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| {
        v["summary"].as_object_mut().unwrap().remove("claimed");
    });
    Run::load(tmp.path()).unwrap();
    // Where it is stated, it is checked.
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| v["summary"]["claimed"] = 1.into());
    refused(
        tmp.path(),
        &["run.json: summary.claimed says 1, loops.csv holds 0 claimed loops"],
    );
}

#[test]
fn loop_figures_the_rows_do_not_bear_out_are_refused_naming_both_values() {
    for (key, value, want) in [
        (
            "cold",
            5,
            "summary.cold says 5, the rows of loops.csv give 2",
        ),
        (
            "replies_over_4kb",
            12,
            "summary.replies_over_4kb says 12, the rows of loops.csv give 6",
        ),
        (
            "replies_over_idle",
            0,
            "summary.replies_over_idle says 0, the rows of loops.csv give 6",
        ),
    ] {
        let tmp = copy_of_stock();
        edit_run_json(tmp.path(), |v| v["summary"][key] = value.into());
        refused(tmp.path(), &["run.json: ", want]);
    }
    // A warm loop taken for cold changes no count but the summaries' n.
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| {
        v["summary"]["send_to_recv"]["n"] = 11.into()
    });
    refused(
        tmp.path(),
        &["summary.send_to_recv.n says 11, the rows of loops.csv give 10"],
    );
    // Runs made before `replies_over_idle` was counted lack it (and its threshold): they load.
    let tmp = copy_of_stock();
    edit_run_json(tmp.path(), |v| {
        let s = v["summary"].as_object_mut().unwrap();
        s.remove("replies_over_idle");
        s.remove("idle_reply_bytes");
    });
    Run::load(tmp.path()).unwrap();
}
