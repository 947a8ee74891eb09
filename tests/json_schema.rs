//! Every `--format json` document, made by the real binary (or, for the pilot, by the
//! library function the binary prints) from the real inputs under `fixtures/`, validated
//! against its JSON Schema in `docs/schema/`; and the run folders' `run.json` against
//! `run.json`. A change of shape that is not in the schema fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

use arena_compare::{ab_json, arm_json, compare, By, CompareOptions};
use arena_run::Run;
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schema_dir() -> PathBuf {
    root().join("docs/schema")
}

fn schema_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(schema_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The errors of `doc` against `docs/schema/<name>`, every schema registered under its
/// `$id` so that `ab.json` can refer to `pilot.json` and `compare.json`; offline.
fn errors(name: &str, doc: &Value) -> Vec<String> {
    let mut registry = jsonschema::Registry::new();
    for f in schema_files() {
        let s = read_json(&f);
        let id = s["$id"]
            .as_str()
            .expect("every schema has an $id")
            .to_string();
        registry = registry.add(id, s).expect("schema registers");
    }
    let registry = registry.prepare().expect("registry");
    let schema = read_json(&schema_dir().join(name));
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[track_caller]
fn assert_valid(name: &str, doc: &Value) {
    let e = errors(name, doc);
    assert!(e.is_empty(), "{name}:\n{}\n{doc:#}", e.join("\n"));
}

#[track_caller]
fn assert_invalid(name: &str, doc: &Value, why: &str) {
    assert!(!errors(name, doc).is_empty(), "{name} accepted {why}");
}

/// Runs the binary in the repository root; it must exit 0 and print one JSON document.
fn json_of(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

fn fixture_runs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    v.sort();
    assert_eq!(v.len(), 4, "{v:?}");
    v
}

#[test]
fn every_schema_is_a_2020_12_schema_with_closed_objects() {
    let files = schema_files();
    let readme = std::fs::read_to_string(schema_dir().join("README.md")).unwrap();
    for f in &files {
        let s = read_json(f);
        let name = f.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            s["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert!(
            s["$id"].as_str().unwrap().ends_with(name),
            "{name}: $id ends with the file's name"
        );
        jsonschema::meta::validate(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(readme.contains(&format!("`{name}`")), "README lists {name}");
        closed(&s, name, "#");
    }
    // Every document carries the one version constant.
    for f in files.iter().filter(|f| !f.ends_with("run.json")) {
        let s = read_json(f);
        assert_eq!(
            s["properties"]["schema_version"]["const"],
            json!(arena_report::JSON_SCHEMA_VERSION),
            "{}",
            f.display()
        );
        assert!(s["required"].as_array().unwrap().contains(&json!("kind")));
    }
}

/// Every object schema that lists properties says whether others are allowed, so that a
/// key added to an output without its schema fails the tests.
fn closed(s: &Value, name: &str, at: &str) {
    match s {
        Value::Object(m) => {
            if m.contains_key("properties") {
                assert!(
                    m.contains_key("additionalProperties"),
                    "{name} {at}: an object without additionalProperties"
                );
                assert!(m.contains_key("required"), "{name} {at}: no required");
            }
            for (k, v) in m {
                closed(v, name, &format!("{at}/{k}"));
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                closed(v, name, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

#[test]
fn fixture_run_folders_match_run_json() {
    for dir in fixture_runs() {
        let meta = read_json(&dir.join("run.json"));
        assert_valid("run.json", &meta);
    }
    let mut meta = read_json(&fixture_runs()[0].join("run.json"));
    meta["summary"]["answered"] = json!("12");
    assert_invalid("run.json", &meta, "a count as a string");
    let mut meta = read_json(&fixture_runs()[0].join("run.json"));
    meta.as_object_mut().unwrap().remove("pilot_hash");
    assert_invalid("run.json", &meta, "no pilot_hash");
    // A run through a link and with a trace: the fields as the run model writes them.
    let mut meta = read_json(&fixture_runs()[0].join("run.json"));
    meta["link"] = json!("rtt=20ms,jitter=0ms,down=25mbit,up=25mbit");
    meta["link_connections"] = serde_json::to_value(vec![arena_run::LinkConnection {
        dest: "127.0.0.1:6080".into(),
        kind: "websocket".into(),
        bytes_up: 330,
        bytes_down: 90_000,
    }])
    .unwrap();
    meta["trace"] = serde_json::to_value(arena_run::TraceInfo {
        file: "trace.json".into(),
        input_error_ms: Some(0.005),
        presented: Some(arena_run::TracePresented {
            source: Some("Display::FrameDisplayed via Graphics.Pipeline".into()),
            matched: 2,
            unmatched: 1,
            answer_to_presented_ms: arena_stats::Summary::of(&[3.2, 8.1]),
        }),
        ..arena_run::TraceInfo::default()
    })
    .unwrap();
    assert_valid("run.json", &meta);
    meta["trace"]["presented"]["matched"] = json!(-1);
    assert_invalid("run.json", &meta, "a negative count of presented answers");
    meta["trace"]["presented"]["matched"] = json!(2);
    meta["trace"]["overhead"]["extra"] = json!(1);
    assert_invalid("run.json", &meta, "an unknown key in the trace's overhead");
    meta["trace"]["overhead"]
        .as_object_mut()
        .unwrap()
        .remove("extra");
    meta["link_connections"][0]["kind"] = json!("carrier pigeon");
    assert_invalid("run.json", &meta, "a link connection of no known kind");
}

/// `verify --format json` as the command builds it (`arena_pilot::verify::verify_report`,
/// the document the binary prints), from the fixture's run folders: stock as the direct
/// side, lazy-png as the delayed one.
#[test]
fn verify_json_of_the_fixture_runs() {
    use arena_pilot::verify::{verify_report, VerifyRule, ALPHA};
    let runs: Vec<(String, Run)> = fixture_runs()
        .iter()
        .map(|d| (d.display().to_string(), Run::load(d).unwrap()))
        .collect();
    let side = |arm: &str| -> Vec<&Run> {
        runs.iter()
            .filter(|(d, _)| d.contains(arm))
            .map(|(_, r)| r)
            .collect()
    };
    let rule = VerifyRule {
        injected_ms: 30.0,
        tolerance_ms: 3.0,
        alpha: ALPHA,
    };
    let report = verify_report(&side("stock"), &side("lazy-png"), rule);
    let doc = arena_report::json::document("verify", serde_json::to_value(&report).unwrap());
    assert_valid("verify.json", &doc);
    assert!(!doc["kinds"].as_array().unwrap().is_empty(), "{doc}");
    assert!(
        doc["kinds"][0]["headline"]["median"]["lo_ms"].is_number(),
        "{doc}"
    );
    let mut d = doc.clone();
    d["kinds"][0]["verdict"] = json!("probably");
    assert_invalid("verify.json", &d, "a verdict of no known kind");
    let mut d = doc;
    d["kinds"][0]["headline"]["median"]["p95"] = json!(1.0);
    assert_invalid("verify.json", &d, "an unknown key in a shift");
}

#[test]
fn pilot_json_of_every_fixture_run() {
    for dir in fixture_runs() {
        let run = Run::load(&dir).unwrap();
        let doc = arm_json(&run, Some(&dir));
        assert_valid("pilot.json", &doc);
        assert_eq!(doc["kind"], "pilot");
        // jq: .metrics.sendToRecv.p50
        let p50 = doc["metrics"]["sendToRecv"]["p50"].as_f64().unwrap();
        let want = run.meta.summary.send_to_recv.as_ref().unwrap().p50;
        assert_eq!(p50, want, "{}", dir.display());
        for k in ["answered", "unanswered", "claimed", "cold"] {
            assert!(doc["loops"][k].is_u64(), "{k} is an integer: {doc}");
        }
        assert_eq!(doc["loops"]["answered"], run.meta.summary.answered);
        assert!(doc["metrics"]["sendToRecv"]["n"].is_u64());
        assert_eq!(
            doc["bytes"]["received_bytes"],
            run.meta.summary.bytes_received
        );
        assert_eq!(doc["answer"]["oracle"], "pixels");
        assert_eq!(doc["run_folder"], dir.display().to_string());
        assert!(doc["warnings"].is_array());
    }
    // Drift: a key the schema does not know, a figure of the wrong type, a missing one.
    let dir = &fixture_runs()[0];
    let doc = arm_json(&Run::load(dir).unwrap(), None);
    assert_valid("pilot.json", &doc);
    let mut d = doc.clone();
    d["metrics"]["sendToRecv"]["p95"] = json!(1.0);
    assert_invalid("pilot.json", &d, "an unknown quantile");
    let mut d = doc.clone();
    d["loops"]["answered"] = json!(1.5);
    assert_invalid("pilot.json", &d, "a fractional count");
    let mut d = doc.clone();
    d["metrics"]["sendToRecv"] = json!("12 ms");
    assert_invalid("pilot.json", &d, "a formatted cell");
    let mut d = doc;
    d.as_object_mut().unwrap().remove("loops");
    assert_invalid("pilot.json", &d, "no loops");
}

#[test]
fn a_typing_runs_figures_match_run_json_and_pilot_json() {
    // A run's loops as keydowns, summarised as a typing run's are (arena_pilot::glyphs).
    let dir = &fixture_runs()[0];
    let mut run = Run::load(dir).unwrap();
    let keys: Vec<arena_run::Loop> = run
        .loops
        .iter()
        .cloned()
        .map(|mut l| {
            l.event = "keydown".into();
            l
        })
        .collect();
    run.meta.summary.typing = Some(arena_pilot::glyphs::typing_summary("burst", &keys));
    let meta = serde_json::to_value(&run.meta).unwrap();
    assert_valid("run.json", &meta);
    let doc = arm_json(&run, None);
    assert_valid("pilot.json", &doc);
    assert_eq!(doc["typing"]["keys"], keys.len() as u64);
    assert!(doc["typing"]["keydown_to_glyph"]["n"].is_u64());
    let mut d = doc.clone();
    d["typing"]["mode"] = json!("sprint");
    assert_invalid("pilot.json", &d, "a typing mode that does not exist");
    let mut m = meta;
    m["summary"]["typing"]["max_keys_behind"] = json!(-1);
    assert_invalid("run.json", &m, "a negative count of keys behind");
    // A run that did not type: null in the document, absent from run.json.
    let plain = Run::load(dir).unwrap();
    assert!(arm_json(&plain, None)["typing"].is_null());
    assert!(serde_json::to_value(&plain.meta).unwrap()["summary"]
        .get("typing")
        .is_none());
}

#[test]
fn ab_and_demo_json_from_the_fixture_runs() {
    let dirs = fixture_runs();
    let runs: Vec<Run> = dirs.iter().map(|d| Run::load(d).unwrap()).collect();
    let cmp = compare(
        &runs,
        &CompareOptions {
            by: By::Arm,
            baseline: Some("stock".into()),
            ..CompareOptions::default()
        },
    )
    .unwrap();
    let list: Vec<_> = runs
        .iter()
        .zip(&dirs)
        .map(|(r, d)| (r, Some(d.as_path())))
        .collect();
    for kind in ["ab", "demo"] {
        let doc = ab_json(kind, &list, Some(&cmp));
        assert_valid("ab.json", &doc);
        assert_eq!(doc["runs"].as_array().unwrap().len(), 4);
        assert_eq!(doc["comparison"]["kind"], "compare");
        assert!(doc["comparison"]["metrics"]["sendToRecv"]["p50"]["lazy-png"].is_f64());
        assert!(doc["runs"][0]["metrics"]["sendToRecv"]["p50"].is_f64());
    }
    // No run finished: no comparison, still a document.
    assert_valid("ab.json", &ab_json("ab", &[], None));
    let mut doc = ab_json("ab", &list, Some(&cmp));
    doc["comparison"]["metrics"]["sendToRecv"]["p50"]["stock"] = json!("58.0");
    assert_invalid("ab.json", &doc, "a figure as text inside the comparison");
}

#[test]
fn compare_json_of_the_binary() {
    let doc = json_of(&["compare", "fixtures/runs", "--format", "json"]);
    assert_valid("compare.json", &doc);
    // jq: .metrics.sendToRecv.p50["lazy-png"]
    assert!(doc["metrics"]["sendToRecv"]["p50"]["lazy-png"].is_f64());
    assert!(doc["metrics"]["sendToRecv"]["n"]["stock"].is_u64());
    assert_eq!(doc["metrics"]["sendToRecv"]["censored"]["stock"], 0);
    assert_eq!(
        doc["metrics"]["sendToRecv"]["changes"]["stock"]["p50"]["beyond_window"],
        false
    );
    assert!(doc["figures"]
        .as_str()
        .unwrap()
        .contains("censored at the window"));
    assert!(doc["interval_method"]
        .as_str()
        .unwrap()
        .contains("plus the spread between runs"));
    let doc = json_of(&[
        "compare",
        "fixtures/runs",
        "--by",
        "run",
        "--format",
        "json",
    ]);
    assert_valid("compare.json", &doc);
    // Runs from before CPU sampling: one entry each, `null`.
    let doc = json_of(&["compare", "fixtures/runs", "--cpu", "--format", "json"]);
    assert_valid("compare.json", &doc);
    assert_eq!(doc["cpu"].as_array().unwrap().len(), 4);
    assert!(doc["cpu"][0]["cpu"].is_null());
    let mut d = doc.clone();
    d["metrics"]["sendToRecv"]["extra"] = json!({});
    assert_invalid("compare.json", &d, "an unknown key in a metric");
}

#[test]
fn compare_json_with_breakdowns_of_the_binary() {
    let doc = json_of(&[
        "compare",
        "fixtures/runs",
        "--split",
        "event",
        "--split",
        "reply-size=1KB,10KB",
        "--split",
        "label",
        "--format",
        "json",
    ]);
    assert_valid("compare.json", &doc);
    let b = doc["breakdowns"].as_array().unwrap();
    let names: Vec<&str> = b.iter().map(|x| x["split"].as_str().unwrap()).collect();
    assert_eq!(names, ["event", "reply-size", "label"]);
    assert_eq!(b[1]["rows"], json!(["<1KB", "1KB-10KB", ">=10KB"]));
    assert_eq!(b[1]["bounds_bytes"], json!([1024, 10240]));
    for x in b {
        let (rows, cols) = (
            x["rows"].as_array().unwrap(),
            x["columns"].as_array().unwrap(),
        );
        assert_eq!(
            x["cells"].as_array().unwrap().len(),
            rows.len() * cols.len()
        );
        // Every loop lands in exactly one reply-size bucket (not so for coalesced input).
        if x["split"] == "reply-size" {
            let sum: u64 = x["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["loops"].as_u64().unwrap())
                .sum();
            let loops: u64 = fixture_loops();
            assert_eq!(sum, loops);
        }
    }
    let cell = &b[0]["cells"][1];
    assert!(cell["changes"]["p50"]["delta_pct"].is_f64(), "{cell:#}");
    let mut d = doc.clone();
    d["breakdowns"][0]["cells"][0]["extra"] = json!(1);
    assert_invalid("compare.json", &d, "an unknown key in a breakdown cell");
    let mut d = doc.clone();
    d["breakdowns"][1]["cells"][0]["loops"] = json!("3");
    assert_invalid("compare.json", &d, "a count as text");
}

/// Loops of the runs in `fixtures/runs`, summed.
fn fixture_loops() -> u64 {
    ["stock-1", "stock-2", "lazy-png-1", "lazy-png-2"]
        .iter()
        .map(|r| {
            Run::load(&root().join("fixtures/runs").join(r))
                .unwrap()
                .loops
                .len() as u64
        })
        .sum()
}

/// `plan` on two stored stock runs: the spread measured from them, a design per click
/// count whose runs a side never grow with the clicks, and a bad `--detect` named.
#[test]
fn plan_json_of_the_binary() {
    let doc = json_of(&[
        "plan",
        "fixtures/runs/stock-1",
        "fixtures/runs/stock-2",
        "--detect",
        "sendToRecv.p50=+10%",
        "--format",
        "json",
    ]);
    assert_valid("plan.json", &doc);
    assert_eq!(doc["between_source"], "runs");
    assert_eq!(doc["pilot_runs"], 2);
    let runs: Vec<u64> = doc["designs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["runs_a_side"].as_u64())
        .collect();
    assert!(!runs.is_empty(), "{doc}");
    assert!(runs.windows(2).all(|w| w[1] <= w[0]), "{runs:?}");
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .current_dir(root())
        .args(["plan", "fixtures/runs/stock-1", "--detect", "nope.p50=+10%"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--detect nope.p50=+10%: unknown metric"),
        "{err}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .current_dir(root())
        .args(["plan", "fixtures/runs/stock-1", "fixtures/runs/lazy-png-1"])
        .args(["--detect", "sendToRecv.p50=+10%"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("of one arm"), "{err}");
}

#[test]
fn gate_json_of_the_binary() {
    let doc = json_of(&[
        "gate",
        "--baseline",
        "fixtures/runs/stock-1",
        "fixtures/runs/stock-2",
        "--candidate",
        "fixtures/runs/lazy-png-1",
        "fixtures/runs/lazy-png-2",
        "--max",
        "sendToRecv.p50=+10%",
        "--max",
        "inputToPaint.p90=+5%",
        // 12 loops a run: no limit can be cleared at that size; the JSON says which
        // were unknown, and --on-unknown pass makes the exit 0.
        "--on-unknown",
        "pass",
        "--format",
        "json",
    ]);
    assert_valid("gate.json", &doc);
    assert_eq!(doc["failed"], false);
    let checks = doc["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[0]["limit"]["metric"], "sendToRecv");
    assert_eq!(checks[0]["limit"]["max_pct"], 10.0);
    assert_eq!(checks[0]["status"], "unknown");
    assert!(checks[0]["n_baseline"].is_u64() && checks[0]["delta_pct"].is_f64());
    assert_eq!(checks[0]["censored_baseline"], 0);
    assert_eq!(checks[0]["power"]["underpowered"], true);
    assert!(checks[0]["p_adjusted"].is_f64() && checks[0]["power"]["mde_pct"].is_f64());
    assert_eq!(doc["outcome"], "pass");
    assert_eq!(doc["on_unknown"], "pass");
    assert_eq!(doc["unknown"].as_array().unwrap().len(), 2);
    assert_eq!(doc["multiple_testing"], "bonferroni");
    assert!(doc["interval_method"]
        .as_str()
        .unwrap()
        .contains("spread between runs"));
    let u = &doc["unanswered"];
    assert_eq!(
        (u["default"].clone(), u["max_pt"].clone()),
        (json!(true), json!(1.0))
    );
    assert_eq!(u["candidate"]["count"], 0);
    let c = &doc["claimed"];
    assert_eq!(
        (c["default"].clone(), c["status"].clone()),
        (json!(true), json!("pass"))
    );
    assert!(c["candidate"]["loops"].as_u64().unwrap() >= u["candidate"]["loops"].as_u64().unwrap());
    let mut d = doc.clone();
    d["checks"][0]["status"] = json!("ok");
    assert_invalid(
        "gate.json",
        &d,
        "a status that is not pass, fail or unknown",
    );
}

#[test]
fn matrix_json_of_the_binary() {
    let out = tempfile::tempdir().unwrap();
    let doc = json_of(&[
        "matrix",
        "fixtures/matrix/gzip.toml",
        "--repeats",
        "2",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_valid("matrix.json", &doc);
    assert_eq!(doc["kind"], "matrix");
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "2 cases x 2 arms");
    let base = cells
        .iter()
        .find(|c| c["case"] == "numbers" && c["arm"] == "fast")
        .unwrap();
    assert_eq!(base["verdict"], "baseline");
    assert!(base["value"].is_f64() && base["runs"] == 2);
    let best = cells
        .iter()
        .find(|c| c["case"] == "numbers" && c["arm"] == "best")
        .unwrap();
    assert!(best["change"]["delta_pct"].is_f64(), "{best}");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 8);
    assert_eq!(doc["unit"], "ms");
}

#[test]
fn logs_json_of_the_binary() {
    let doc = json_of(&[
        "logs",
        "stats",
        "fixtures/logs/stats.log",
        "--format",
        "json",
    ]);
    assert_valid("logs-stats.json", &doc);
    assert!(doc["metrics"]["renderMs"]["p50"].is_f64());
    assert_eq!(doc["metrics"]["renderMs"]["unit"], "ms");
    let doc = json_of(&[
        "logs",
        "stats",
        "fixtures/logs/stats.log",
        "--by-instance",
        "--format",
        "json",
    ]);
    assert_valid("logs-stats.json", &doc);
    assert!(doc["metrics"].is_null() && doc["instances"].is_object());

    let doc = json_of(&[
        "logs",
        "gc",
        "fixtures/logs/gc-g1-1m.log",
        "fixtures/logs/gc-g1-8m.log",
        "--window",
        "1",
        "--format",
        "json",
    ]);
    assert_valid("logs-gc.json", &doc);
    assert!(doc["files"][0]["pauses"]["humongous"].as_u64().unwrap() > 0);
    assert_eq!(doc["files"][1]["pauses"]["humongous"], 0);
    assert_eq!(doc["changes"][0]["humongous_pct"], json!(-100.0));
    assert!(!doc["files"][0]["windows"].as_array().unwrap().is_empty());

    let doc = json_of(&[
        "logs",
        "classload",
        "fixtures/logs/classload.log",
        "--mark",
        "java.util.logging",
        "--format",
        "json",
    ]);
    assert_valid("logs-classload.json", &doc);
    assert_eq!(doc["files"][0]["classes"], 880);
    assert_eq!(doc["files"][0]["gaps"], 2);

    // No real profile ships in fixtures/ (no profiler here): a small collapsed file.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.collapsed");
    std::fs::write(
        &f,
        "java;Main.run;Work.step 6\nGC Thread#0;G1ParTask::work 3\nC2 CompilerThread0;Compile::Optimize 1\n",
    )
    .unwrap();
    let doc = json_of(&["logs", "profile", f.to_str().unwrap(), "--format", "json"]);
    assert_valid("logs-profile.json", &doc);
    assert_eq!(doc["files"][0]["samples"], 10);
    let mut d = doc.clone();
    d["files"][0]["samples"] = json!(-1);
    assert_invalid("logs-profile.json", &d, "a negative count");
}

#[test]
fn wire_summary_json_of_the_binary() {
    let pcap = "fixtures/wire/fixture-session.pcap";
    let doc = json_of(&["wire", "summary", pcap, "--format", "json"]);
    assert_valid("wire-summary.json", &doc);
    assert_eq!(doc["kind"], "wire.summary");
    assert!(doc["server_to_client"]["app_bytes"].as_u64().unwrap() > 600_000);
    let doc = json_of(&[
        "wire", "summary", pcap, "--window", "1", "--port", "18087", "--format", "json",
    ]);
    assert_valid("wire-summary.json", &doc);
    assert!(!doc["windows"].as_array().unwrap().is_empty());
    let mut d = doc.clone();
    d["client_to_server"]["bytes_per_click"] = json!(1);
    assert_invalid("wire-summary.json", &d, "an unknown direction figure");
}

#[test]
fn explain_json_of_the_binary() {
    let doc = json_of(&[
        "explain",
        "fixtures/explain/run",
        "--stats",
        "fixtures/explain/stats.log",
        "--slow-frame",
        "100",
        "--format",
        "json",
    ]);
    assert_valid("explain.json", &doc);
    assert_eq!(doc["kind"], "explain");
    // The run it explains carries the page clock on the wall.
    let meta = read_json(&root().join("fixtures/explain/run/run.json"));
    assert_valid("run.json", &meta);
    assert!(meta["clock"]["unix_offset_ms"].as_f64().unwrap() > 1.7e12);
    assert_eq!(doc["rows"][0]["named"], true);
    assert!(doc["clock"]["sent_to_received"]["n"].as_u64().unwrap() > 70);
    let mut d = doc.clone();
    d["rows"][0]["cause"] = json!("cosmic_ray");
    assert_invalid("explain.json", &d, "a cause the tool does not name");
    let mut d = doc.clone();
    d["loops"][0]["outcome"] = json!("claimed");
    assert_invalid("explain.json", &d, "a claimed loop is never joined");
}

#[test]
fn wire_capture_json_of_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pcap");
    let doc = json_of(&[
        "wire",
        "capture",
        "--port",
        "9",
        "--out",
        out.to_str().unwrap(),
        "--duration",
        "0.2",
        "--counters-only",
        "--format",
        "json",
    ]);
    assert_valid("wire-capture.json", &doc);
    assert_eq!(doc["source"]["kind"], "interface_counters");
    assert!(doc["interface"]["rx_bytes"].is_u64());
}

/// The pilot's own command line, once: two clicks on the built-in fixture in Chromium.
#[test]
fn pilot_cli_json_matches_its_schema() {
    let _g = crate::support::machine::shared();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let doc = json_of(&[
        "pilot",
        "--clicks",
        "2",
        "--warmup",
        "0",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_valid("pilot.json", &doc);
    assert!(doc["metrics"]["sendToRecv"]["p50"].is_f64(), "{doc:#}");
    assert_eq!(doc["run_folder"], out.display().to_string());
    assert!(doc["loops"]["total"].as_u64().unwrap() >= 2);
    assert_valid("run.json", &read_json(&out.join("run.json")));
    // The fixture's session thread and Chromium are sampled by default, by phase.
    let phases: Vec<&str> = doc["cpu"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["setup", "clicks"], "{doc:#}");
    let labels: Vec<&str> = doc["cpu"]["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["fixture session", "chromium"], "{doc:#}");
}

#[test]
fn frames_and_watch_json_match_their_schemas() {
    use arena_compare::frames::{frames_json, FrameSource, BURST_GAP_MS};
    // The binary on runs made before the cold window was kept: `cold` is null.
    let doc = json_of(&["compare", "fixtures/runs", "--frames", "--format", "json"]);
    assert_valid("frames.json", &doc);
    assert!(doc["runs"][0]["cold"].is_null() && doc["runs"][0]["warm"]["frames"].is_u64());
    // The library function the binary prints, on a run with a cold window and a capture.
    let src = FrameSource {
        name: "stock, run 1".into(),
        cold: Some(vec![(2200.0, 677_712)]),
        warm: vec![(5000.0, 2106)],
        wire: Some(arena_run::WireDirection {
            frames: 30,
            app_bytes: 760_000,
            ..Default::default()
        }),
    };
    let doc = frames_json(&[src], BURST_GAP_MS);
    assert_valid("frames.json", &doc);
    assert_eq!(doc["runs"][0]["cold"]["first_paint"]["bytes"], 677_712);
    let mut d = doc.clone();
    d["runs"][0]["cold"]["first_paint"]["extra"] = json!(1);
    assert_invalid("frames.json", &d, "an unknown key in the burst");

    let w = arena_run::IdleWindow {
        requested_s: 5.0,
        start_ms: 1000.0,
        end_ms: 6000.0,
        similarity: "pixels".into(),
        frames: vec![arena_run::IdleFrame {
            seq: 9,
            t_ms: 1500.0,
            size: 43,
            bytes_pct: None,
            pixels_pct: Some(99.99),
        }],
        ..Default::default()
    };
    let doc = arena_compare::idle::watch_json("http://127.0.0.1:1/", &[(900.0, 677_712)], true, &w);
    assert_valid("watch.json", &doc);
    let mut meta = read_json(&fixture_runs()[0].join("run.json"));
    meta["idle"] = serde_json::to_value(&w).unwrap();
    assert_valid("run.json", &meta);
    meta["idle"]["frames"][0]["pixels_pct"] = json!("99");
    assert_invalid("run.json", &meta, "a likeness as a string");
}

/// `startup`'s own command line, once: one cold round on the built-in fixture in Chromium,
/// one milestone never reached (a board-bytes threshold past what the fixture sends).
#[test]
fn startup_cli_json_matches_its_schema() {
    let me = std::process::id().to_string();
    let doc = json_of(&[
        "startup",
        "--sample",
        &me,
        "--arms",
        "stock",
        "--rounds",
        "1",
        "--board",
        "bytes=50000000",
        "--timeout",
        "8000",
        "--knob",
        "png_level=0",
        "--quiet",
        "--format",
        "json",
    ]);
    assert_valid("startup.json", &doc);
    let r = &doc["rounds"][0];
    assert_eq!(r["status"], "timed_out", "{doc:#}");
    assert!(r["milestones"]["socket_open"]["from_navigation_ms"].is_f64());
    assert_eq!(r["milestones"]["board_paint"], Value::Null);
    // The round's CPU: one phase, the in-process fixture by default and the sampled PID.
    let cpu = &r["cpu"];
    assert_eq!(cpu["phases"][0]["name"], "cold start", "{doc:#}");
    let labels: Vec<&str> = cpu["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["label"].as_str())
        .collect();
    assert!(labels.contains(&"fixture session"), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.ends_with(&format!("({me})"))),
        "{labels:?}"
    );
    assert_eq!(
        doc["arms"][0]["milestones"]["board_paint"]["not_reached"],
        1
    );
    let mut d = doc.clone();
    d["rounds"][0]["milestones"]["board_paint"] = json!("not reached");
    assert_invalid("startup.json", &d, "a milestone as words");
}

/// The binary in the repository root; it must exit 0. Its stdout.
fn text_of(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn history_documents_of_the_binary_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let origin = [
        "--db",
        db,
        "--branch",
        "main",
        "--commit",
        "c1",
        "--testbed",
        "fx",
    ];
    let add = [&["history", "add", "fixtures/runs"][..], &origin].concat();
    let trend = ["history", "trend", "inputToPaint.p50", "--db", db];
    let commands: [(&[&str], &str); 5] = [
        (&add, "history-add.json"),
        (&["history", "list", "--db", db], "history-list.json"),
        (&["history", "show", "1", "--db", db], "history-run.json"),
        (&trend, "history-trend.json"),
        (
            &[
                "compare",
                "--history-run",
                "1",
                "--history-run",
                "2",
                "--db",
                db,
            ],
            "compare.json",
        ),
    ];
    for (args, schema) in commands {
        for format in ["table", "markdown", "json"] {
            let out = text_of(&[args, &["--format", format]].concat());
            match format {
                "json" => assert_valid(schema, &serde_json::from_str(&out).unwrap()),
                "markdown" => assert!(out.contains("\n|---"), "{args:?}: {out}"),
                _ => assert!(out.contains('│') || out.contains('|'), "{args:?}: {out}"),
            }
        }
    }
}

#[test]
fn compare_json_with_gestures_of_the_binary() {
    let d = crate::compare_common::Scratch::new("gestures-json");
    let mut args = vec!["compare".to_string()];
    for (i, run) in fixture_runs().iter().step_by(2).enumerate() {
        let to = d.path(&format!("run-{i}"));
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(run).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
        crate::compare_common::write_hover(&to, &[30.0 + 40.0 * i as f64; 20]);
        args.push(to.to_str().unwrap().to_string());
    }
    args.extend(["--format".into(), "json".into()]);
    let doc = json_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_valid("compare.json", &doc);
    let g = &doc["gestures"][0];
    assert_eq!(
        (g["gesture"].as_u64(), g["kind"].as_str()),
        (Some(0), Some("hover"))
    );
    let p50 = |c: usize| g["columns"][c]["figures"][1]["p50"].as_f64();
    assert_eq!(g["columns"][0]["figures"][1]["figure"], "move_to_pixels_ms");
    assert_eq!((p50(0), p50(1)), (Some(30.0), Some(70.0)));
    assert_eq!(g["columns"][1]["counts"]["answered"], 20);
    let mut bad = doc.clone();
    bad["gestures"][0]["columns"][0]["figures"][0]["p50"] = json!("30");
    assert_invalid("compare.json", &bad, "a gesture figure as text");
    // Without gestures, no key.
    let plain = json_of(&["compare", "fixtures/runs", "--format", "json"]);
    assert!(plain.get("gestures").is_none());
}
