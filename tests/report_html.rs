//! `arena-perf report` in real headless Chromium, on the real runs under `fixtures/runs/`:
//! the page loads offline with no errors, every figure in its DOM is the one
//! `compare --format json` prints, it draws something, file text stays text, and bad input
//! is refused. Browser tests take a lock (two Chromiums on two cores are slow) and prove
//! that no process of their browser outlives them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use arena_browser::{Browser, LaunchOptions, Page};
use serde_json::Value;

use crate::support::machine::exclusive;

fn arena(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args(args)
        .output()
        .unwrap()
}

fn fixture_runs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/runs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `compare --format json` and `report` on the same runs and flags: (JSON, page path).
fn compare_and_report(runs: &[&Path], flags: &[&str], out: &Path) -> Value {
    let mut args: Vec<&str> = vec!["compare", "--format", "json"];
    args.extend(runs.iter().map(|p| s(p)));
    args.extend(flags);
    let o = arena(&args);
    assert!(o.status.success(), "compare: {}", stderr(&o));
    let json: Value = serde_json::from_slice(&o.stdout).unwrap();

    let mut args: Vec<&str> = vec!["report", "--out", s(out)];
    args.extend(runs.iter().map(|p| s(p)));
    args.extend(flags);
    let o = arena(&args);
    assert!(o.status.success(), "report: {}", stderr(&o));
    json
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Opens each page in one headless Chromium, runs `check` on it, closes the browser and
/// asserts none of its processes is left.
fn in_browser(pages: &[PathBuf], check: impl AsyncCheck) {
    rt().block_on(async {
        let browser = Browser::launch(LaunchOptions::default())
            .await
            .expect("launch Chromium");
        let pids = browser.pids();
        assert!(!pids.is_empty());
        let result = async {
            for (i, html) in pages.iter().enumerate() {
                let url = format!("file://{}", std::fs::canonicalize(html)?.display());
                let page = browser.new_page(&url, None).await?;
                page.wait_until(
                    "document.documentElement.dataset.rendered === 'ok' || (window.__reportErrors || []).length > 0",
                    Duration::from_secs(15),
                )
                .await?;
                check.check(i, &page).await?;
                page.close().await?;
            }
            anyhow::Ok(())
        }
        .await;
        browser.close().await.expect("close Chromium");
        let left: Vec<i32> = pids
            .iter()
            .copied()
            .filter(|&p| arena_sys::procfs::alive(p))
            .collect();
        assert!(left.is_empty(), "Chromium processes left: {left:?}");
        result.unwrap();
    });
}

/// A check run on each opened page (`i`: its position in the list).
trait AsyncCheck {
    async fn check(&self, i: usize, page: &Page) -> anyhow::Result<()>;
}

/// No script error, and nothing fetched but the file itself.
async fn assert_clean(page: &Page) -> anyhow::Result<()> {
    let errors = page.eval_json("window.__reportErrors").await?;
    assert_eq!(errors, Value::Array(vec![]), "errors on the page");
    let rendered = page
        .eval_json("document.documentElement.dataset.rendered")
        .await?;
    assert_eq!(rendered, "ok");
    let fetched = page
        .eval_json("performance.getEntriesByType('resource').map(e => e.name)")
        .await?;
    assert_eq!(fetched, Value::Array(vec![]), "the page fetched something");
    Ok(())
}

/// Every figure of the page (`.fig` spans) with its position in `#data` and its text.
const FIGS_JS: &str = "[...document.querySelectorAll('.fig')].map(e => ({
    kind: e.dataset.kind, metric: e.dataset.metric, stat: e.dataset.stat,
    column: e.dataset.column, field: e.dataset.field ?? null, value: e.dataset.value,
    text: e.textContent }))";

/// The text the terminal table would show for a figure (the page must format alike).
fn expected_text(stat: &str, field: Option<&str>, v: &Value) -> String {
    if let Some(b) = v.as_bool() {
        return if b { "beyond the window" } else { "" }.into();
    }
    let Some(x) = v.as_f64() else {
        return v.as_str().map_or("-".into(), |s| match s {
            "higher" | "lower" => s.into(),
            "same" => "=".into(),
            _ => "~".into(),
        });
    };
    match (stat, field) {
        ("n", None) => arena_report::fmt_count(x as i64),
        ("mann_whitney_p", None) | (_, Some("p")) => arena_compare::fmt_p(x),
        (_, None) => arena_report::fmt_ms(x),
        (_, Some("delta_pct")) => arena_report::fmt_pct_change(x),
        (_, Some(_)) => arena_compare::fmt_ms_signed(x),
    }
}

fn same_value(json: &Value, dom: &str) -> bool {
    match json {
        Value::Null => dom == "null",
        Value::Number(n) => dom.parse::<f64>().ok() == n.as_f64(),
        Value::String(s) => dom == s,
        Value::Bool(b) => dom == b.to_string(),
        _ => false,
    }
}

/// Every leaf of the compare document's metrics has exactly one figure in the DOM with the
/// same value and the table's formatting, and the DOM has no other figure.
fn assert_figures_match(json: &Value, figs: &[Value]) {
    let find = |kind: &str, metric: &str, stat: &str, column: &str, field: Option<&str>| {
        let hits: Vec<&Value> = figs
            .iter()
            .filter(|f| {
                f["kind"] == kind
                    && f["metric"] == metric
                    && f["stat"] == stat
                    && f["column"] == column
                    && f["field"].as_str() == field
            })
            .collect();
        assert_eq!(
            hits.len(),
            1,
            "{kind} {metric} {stat} {column} {field:?}: {} figures",
            hits.len()
        );
        hits[0].clone()
    };
    let check = |want: &Value, f: &Value, stat: &str, field: Option<&str>, what: &str| {
        let dom = f["value"].as_str().unwrap();
        assert!(same_value(want, dom), "{what}: JSON {want}, DOM {dom}");
        assert_eq!(
            f["text"].as_str().unwrap(),
            expected_text(stat, field, want),
            "{what}: text"
        );
    };
    let mut expected = 0;
    for (metric, md) in json["metrics"].as_object().unwrap() {
        for stat in ["n", "p50", "p90", "p99"] {
            for (column, want) in md[stat].as_object().unwrap() {
                let f = find("value", metric, stat, column, None);
                check(want, &f, stat, None, &format!("{metric} {stat} {column}"));
                expected += 1;
            }
        }
        for (column, ch) in md["changes"].as_object().unwrap() {
            for (stat, v) in ch.as_object().unwrap() {
                if stat == "mann_whitney_p" {
                    let f = find("change", metric, stat, column, None);
                    check(v, &f, stat, None, &format!("{metric} U p {column}"));
                    expected += 1;
                    continue;
                }
                for (field, want) in v.as_object().unwrap() {
                    let f = find("change", metric, stat, column, Some(field));
                    let what = format!("{metric} {stat} {column} {field}");
                    check(want, &f, stat, Some(field), &what);
                    expected += 1;
                }
            }
        }
    }
    assert!(expected > 100, "only {expected} figures in the document");
    assert_eq!(figs.len(), expected, "the DOM has figures the JSON has not");
}

/// `v` with every number as a float, so a value that crossed JavaScript compares.
fn floats(v: &Value) -> Value {
    match v {
        Value::Number(n) => serde_json::json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.iter().map(floats).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), floats(v))).collect()),
        other => other.clone(),
    }
}

struct FiguresCheck {
    json: Vec<Value>,
}

impl AsyncCheck for FiguresCheck {
    async fn check(&self, i: usize, page: &Page) -> anyhow::Result<()> {
        assert_clean(page).await?;
        let json = &self.json[i];
        let embedded = page
            .eval_json("JSON.parse(document.getElementById('data').textContent)")
            .await?;
        // The page's JSON comes back through JavaScript, where 1.0 and 1 are one number.
        assert_eq!(
            floats(&embedded),
            floats(json),
            "#data is not compare's document"
        );
        let figs = page.eval_json(FIGS_JS).await?;
        assert_figures_match(json, figs.as_array().unwrap());

        // One table per breakdown, a line per cell, its loop counts as the document's.
        let shown = page
            .eval_json("[...document.querySelectorAll('#breakdowns table')].map(t => [...t.querySelectorAll('tbody tr')].map(tr => tr.children[2].textContent))")
            .await?;
        let want: Vec<Vec<String>> = json["breakdowns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let c = b["cells"].as_array().unwrap();
                c.iter()
                    .map(|c| c["loops"].as_u64().unwrap().to_string())
                    .collect()
            })
            .collect();
        assert_eq!(serde_json::from_value::<Vec<Vec<String>>>(shown)?, want);

        // Each finding is listed, and marked beside its figure when it names one.
        let findings = json["findings"].as_array().unwrap();
        let listed = page
            .eval_json("[...document.querySelectorAll('#findings li')].map(li => li.dataset.code)")
            .await?;
        let codes: Vec<&Value> = findings.iter().map(|f| &f["code"]).collect();
        assert_eq!(listed.as_array().unwrap().iter().collect::<Vec<_>>(), codes);
        let marks = page
            .eval_json("document.querySelectorAll('#compare-table .mark').length")
            .await?;
        let placed = findings.iter().filter(|f| f["column"].is_string()).count();
        assert_eq!(marks.as_u64(), Some(placed as u64), "finding markers");

        // Both plots have a point per loop with the metric, each with its loop's tooltip.
        let points = page
            .eval_json("['cdf','timeline'].map(p => [...document.querySelectorAll(`circle[data-plot=${p}]`)].filter(c => c.querySelector('title').textContent.includes('reply ')).length)")
            .await?;
        let points: Vec<u64> = serde_json::from_value(points)?;
        assert!(
            points[0] > 0 && points[1] >= points[0],
            "plot points {points:?}"
        );
        let hovered = page
            .eval_json("(() => { const c = document.querySelector('circle[data-plot=timeline]'); c.dispatchEvent(new MouseEvent('mouseenter', {clientX: 10, clientY: 10})); const t = document.getElementById('tip'); return t.hidden ? '' : t.textContent; })()")
            .await?;
        let hovered = hovered.as_str().unwrap_or("");
        assert!(
            hovered.contains("inputToPaint") && hovered.contains("B in"),
            "{hovered}"
        );

        // The fixture runs have frames, and every run's metadata is shown.
        let text = page.eval_json("document.body.innerText").await?;
        let text = text.as_str().unwrap();
        assert!(text.contains("Frames and bytes") && text.contains("frames received"));
        for needle in [
            "Chrome/156.0.8078.114",
            "2026-12-01T09:40:14.985Z",
            "complete",
            "pixels (r=8px)",
            "lazy_png (differs)",
        ] {
            assert!(text.contains(needle), "no {needle:?} on the page");
        }

        if i == 0 {
            assert_formatting_agrees(page).await?;
        }
        let png = page.screenshot_png(true).await?;
        assert_not_blank(&png);
        Ok(())
    }
}

/// The page's formatters against arena-report's on the values where JavaScript's
/// rounding differs from Rust's (exact ties, negative halves).
async fn assert_formatting_agrees(page: &Page) -> anyhow::Result<()> {
    let xs = [
        0.0, 0.04, -0.04, 0.25, 0.75, 1.25, -1.25, 2.5, 9.95, 12.5, -12.5, 999.95, 1000.0, 1500.5,
        -1500.5, 2046929.4, 0.0625, 0.0005, 0.5, 1e-7, 123.456,
    ];
    let js = format!(
        "(() => {{ const xs = {}; return xs.map(x => [fmtMs(x), fmtMsSigned(x), fmtPct(x), fmtP(Math.abs(x)), fmtCount(x)]); }})()",
        serde_json::to_string(&xs)?
    );
    let got: Vec<[String; 5]> = serde_json::from_value(page.eval_json(&js).await?)?;
    for (x, g) in xs.iter().zip(got) {
        let want = [
            arena_report::fmt_ms(*x),
            arena_compare::fmt_ms_signed(*x),
            arena_report::fmt_pct_change(*x),
            arena_compare::fmt_p(x.abs()),
            arena_report::fmt_count(x.round() as i64),
        ];
        assert_eq!(g, want, "formatting {x}");
    }
    Ok(())
}

/// Decodes the PNG and checks it is not one colour.
fn assert_not_blank(png_bytes: &[u8]) {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples() * info.bit_depth as usize / 8;
    let data = &buf[..info.buffer_size()];
    assert!(
        info.width > 600 && info.height > 600,
        "{}x{}",
        info.width,
        info.height
    );
    let first = &data[..px];
    let differ = data.chunks(px).filter(|p| *p != first).count();
    assert!(
        differ > data.len() / px / 100,
        "screenshot is almost one colour: {differ} pixels differ"
    );
}

#[test]
fn report_loads_offline_and_shows_exactly_compares_figures() {
    let _g = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let runs = fixture_runs();
    let by_arm = dir.path().join("by-arm.html");
    let by_run = dir.path().join("by-run.html");
    let j1 = compare_and_report(&[&runs], &[], &by_arm);
    let j2 = compare_and_report(
        &[&runs],
        &[
            "--by",
            "run",
            "--baseline",
            "stock, run 1",
            "--metric",
            "inputToPaint",
            "--metric",
            "sendToRecv",
            "--split",
            "event",
            "--split",
            "reply-size=1KB,10KB",
        ],
        &by_run,
    );
    assert_eq!(j2["breakdowns"].as_array().map(Vec::len), Some(2));
    assert_eq!(j2["baseline"], "stock, run 1");
    in_browser(&[by_arm, by_run], FiguresCheck { json: vec![j1, j2] });
}

struct ScriptArmCheck;

const EVIL: &str = "<script>alert(1)</script>";

impl AsyncCheck for ScriptArmCheck {
    async fn check(&self, _: usize, page: &Page) -> anyhow::Result<()> {
        assert_clean(page).await?;
        // Three script elements (two data blocks and the page's own): the name made none.
        let scripts = page
            .eval_json("document.querySelectorAll('script').length")
            .await?;
        assert_eq!(scripts, 3);
        let headers = page
            .eval_json("[...document.querySelectorAll('#compare-table thead th')].map(th => th.textContent)")
            .await?;
        assert!(
            headers
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h.as_str().unwrap().starts_with(EVIL)),
            "the arm's name is not shown as text: {headers}"
        );
        let cells = page
            .eval_json(&format!(
                "[...document.querySelectorAll('td, th')].filter(e => e.textContent === {}).length",
                serde_json::to_string(EVIL)?
            ))
            .await?;
        assert!(
            cells.as_u64().unwrap() >= 1,
            "the arm cell of the runs table"
        );
        let title = page.eval_json("document.title").await?;
        assert!(title.as_str().unwrap().contains(EVIL), "{title}");
        Ok(())
    }
}

/// Copies a fixture run and renames its arm (in run.json and every loops.csv row).
fn renamed_run(from: &Path, to: &Path, arm: &str) {
    std::fs::create_dir_all(to).unwrap();
    let meta = std::fs::read_to_string(from.join("run.json")).unwrap();
    let mut v: Value = serde_json::from_str(&meta).unwrap();
    let old = v["arm"].as_str().unwrap().to_string();
    v["arm"] = Value::String(arm.into());
    v["knobs"]["phase"] = Value::String(format!("{arm} & \"firing\""));
    std::fs::write(
        to.join("run.json"),
        serde_json::to_string_pretty(&v).unwrap(),
    )
    .unwrap();
    let loops = std::fs::read_to_string(from.join("loops.csv")).unwrap();
    let loops = loops.replace(&format!(",{old},"), &format!(",{arm},"));
    std::fs::write(to.join("loops.csv"), loops).unwrap();
    std::fs::copy(from.join("events.jsonl"), to.join("events.jsonl")).unwrap();
}

#[test]
fn an_arm_named_like_markup_is_rendered_as_text() {
    let _g = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let runs = fixture_runs();
    let evil = dir.path().join("evil");
    renamed_run(&runs.join("lazy-png-1"), &evil, EVIL);
    let page = dir.path().join("evil.html");
    let o = arena(&[
        "report",
        s(&runs.join("stock-1")),
        s(&evil),
        "--out",
        s(&page),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains(EVIL), "the name reached the file unescaped");
    in_browser(&[page], ScriptArmCheck);
}

#[test]
fn bad_input_is_refused_with_the_path_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = arena(&["report", s(&empty), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(s(&empty)), "{}", stderr(&o));

    let not_run = dir.path().join("not-a-run");
    std::fs::create_dir(&not_run).unwrap();
    std::fs::write(not_run.join("notes.txt"), "hello").unwrap();
    let o = arena(&["report", s(&not_run), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(s(&not_run)) && stderr(&o).contains("not a run folder"),
        "{}",
        stderr(&o)
    );

    let missing = dir.path().join("no-such-folder").join("r.html");
    let o = arena(&["report", s(&fixture_runs()), "--out", s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--out") && e.contains("does not exist") && e.contains("no-such-folder"),
        "{e}"
    );
    assert!(!out.exists() && !missing.exists());

    let o = arena(&["report", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "no runs: {}", stderr(&o));
    assert!(stderr(&o).contains("RUN_OR_DIR"), "{}", stderr(&o));
}
