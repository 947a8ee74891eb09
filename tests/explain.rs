//! `arena-perf explain` on real evidence: JDK 17's G1 log with wall time joined to a run
//! whose loops are placed on it, the refusals of what cannot be placed, and the built-in
//! fixture serving with a stats log and a known tail, driven by the real binary.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

use crate::compare_common::{arena, s, Scratch};
use crate::support::machine::exclusive;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// The Unix ms a JVM `time` decoration names (`2026-12-07T20:10:13.932+0000`, UTC).
fn first_pause_start_unix_ms(log: &str) -> f64 {
    let line = log
        .lines()
        .find(|l| l.contains(") Pause ") && l.ends_with("ms"))
        .unwrap();
    let ms: f64 = line
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches("ms")
        .parse()
        .unwrap();
    let stamp = &line[1..24];
    let out = Command::new("date")
        .args(["-u", "-d", stamp, "+%s%3N"])
        .output()
        .unwrap();
    let end: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    end - ms
}

/// 20 loops a quarter second apart, 20 ms each but loops 4 and 15 at 300 ms, written to
/// `dir` with the page clock put `unix_offset_ms` from the wall.
fn placed_run(dir: &Path, unix_offset_ms: Option<f64>) {
    let mut v = vec![20.0; 20];
    (v[4], v[15]) = (300.0, 300.0);
    let mut run = arena_compare::synthetic::run("stock", &v, 1000);
    run.meta.clock = unix_offset_ms.map(|o| arena_run::PageClock {
        unix_offset_ms: o,
        error_ms: 0.05,
        n: 20,
        time_origin_ms: o + 0.3,
    });
    run.write(dir).unwrap();
}

#[test]
fn a_real_g1_log_is_joined_to_the_loop_whose_reply_it_held() {
    let d = Scratch::new("explain-gc");
    let gc = fixture("fixtures/logs/gc-g1-wall.log");
    let log = std::fs::read_to_string(&gc).unwrap();
    let pauses = log
        .lines()
        .filter(|l| l.contains(") Pause ") && l.ends_with("ms"))
        .count();
    // Loop 4's input is at page 2000 ms and its reply stage runs 2003.5 .. 2183.5 ms: the
    // log's pauses (about 100 ms of them) start at page 2010.
    let run = d.path("run");
    placed_run(&run, Some(first_pause_start_unix_ms(&log) - 2010.0));
    let doc = json(&arena(&[
        "explain",
        s(&run),
        "--gc",
        s(&gc),
        "--format",
        "json",
    ]));
    let loops = doc["loops"].as_array().unwrap();
    let hit: Vec<i64> = loops
        .iter()
        .filter(|l| !l["hits"].as_array().unwrap().is_empty())
        .map(|l| l["index"].as_i64().unwrap())
        .collect();
    assert_eq!(hit, [4], "{doc}");
    let hits = loops[4]["hits"].as_array().unwrap();
    assert_eq!(
        hits.len(),
        pauses,
        "every pause of the log held loop 4's reply"
    );
    assert!(hits
        .iter()
        .all(|h| h["cause"] == "gc_pause" && h["stage"] == "server"));
    let row = &doc["rows"][0];
    assert_eq!(row["cause"], "gc_pause");
    assert_eq!(
        (row["tail_n"].as_u64(), row["tail_hits"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(row["body_hits"], 0);
    assert_eq!(doc["counts"]["joined"], 20);

    let o = arena(&["explain", s(&run), "--gc", s(&gc), "--format", "markdown"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let md = text(&o);
    assert!(md.contains("| GC pause | socket → reply |"), "{md}");
    let loop4 = md
        .lines()
        .find(|l| l.starts_with("| 4 |"))
        .unwrap_or_default();
    assert!(
        loop4.contains(&format!("{pauses} pieces of GC pause for "))
            && loop4.contains("of socket → reply, the longest Pause Full (System.gc()) 8.0 ms (")
            && loop4.contains("gc-g1-wall.log:36)"),
        "{md}"
    );
    assert!(md.contains("the 2 loops over the p90"), "{md}");
}

#[test]
fn what_cannot_be_placed_on_the_runs_clock_is_exit_2_saying_why() {
    let d = Scratch::new("explain-bad");
    let gc = fixture("fixtures/logs/gc-g1-wall.log");
    let start = first_pause_start_unix_ms(&std::fs::read_to_string(&gc).unwrap());
    let run = d.path("run");
    placed_run(&run, Some(start - 2010.0));
    let fail = |args: &[&str], want: &str| {
        let o = arena(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains(want),
            "{args:?}: no {want:?} in {}",
            text(&o)
        );
    };
    let uptime = fixture("fixtures/logs/gc-g1-1m.log");
    fail(
        &["explain", s(&run), "--gc", s(&uptime)],
        "no wall-clock decoration (an uptime is time since the JVM started",
    );
    fail(&["explain", s(&run), "--gc", s(&uptime)], "time,uptime");
    // The same run three hours later: the log ends before it.
    let late = d.path("late");
    placed_run(&late, Some(start - 2010.0 + 3.0 * 3_600e3));
    fail(
        &["explain", s(&late), "--gc", s(&gc)],
        "end before the run by 3.0 h",
    );
    let old = d.path("old");
    placed_run(&old, None);
    fail(&["explain", s(&old), "--gc", s(&gc)], "has no `clock`");
    fail(&["explain", s(&run)], "give --gc FILE or --stats FILE");
    fail(
        &["explain", s(&run), "--gc", s(&gc), "--tail", "p40"],
        "--tail",
    );
    fail(
        &["explain", s(&run), "--gc", s(&gc), "--tail", "NaN"],
        "--tail",
    );
    fail(
        &["explain", s(&run), "--gc", s(&gc), "--slow-frame", "-1"],
        "--slow-frame",
    );
    // A binary file and a missing one, named.
    let png = fixture("docs/report.png");
    fail(&["explain", s(&run), "--gc", s(&png)], "report.png");
    fail(
        &["explain", s(&run), "--stats", "/nonexistent/stats.log"],
        "/nonexistent/stats.log",
    );
    fail(
        &["explain", s(&run), "--stats", s(&gc)],
        "no timed latencyServerRendering lines",
    );
}

/// The built-in pilot with a person's hold drawn from 0 to 800 ms, written into `dir`.
/// Every 8th reply held is periodic with the clicks: at the default hold (60 to 140 ms) a
/// shift of the evidence by about one period (four clicks) lays each held frame on the
/// next held loop, and the chance control rightly found 6 of 7 tail loops in 5 % of its
/// shifts (the same count as the real join). Irregular holds break that alignment, as a
/// person's pace does.
fn irregular_pilot(dir: &Path) -> PathBuf {
    let toml = std::fs::read_to_string(fixture("pilots/fixture.toml")).unwrap();
    assert!(toml.contains("\nwarmup = 1\n"));
    let toml = toml.replace("\nwarmup = 1\n", "\nwarmup = 1\nhold_range_ms = [0, 800]\n");
    let p = dir.join("pilot.toml");
    std::fs::write(&p, toml).unwrap();
    p
}

/// `arena-perf serve` with `--stats-log`, killed and reaped however the test ends.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    fn start(stats: &Path, knobs: &[&str]) -> Served {
        let mut args = vec!["serve", "--stats-log", s(stats)];
        for k in knobs {
            args.extend(["--knob", k]);
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let url = BufReader::new(out)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("fixture match at ").map(str::to_string));
        let mut served = Served {
            child,
            url: String::new(),
        };
        served.url = url.expect("serve printed its URL");
        served
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fixture holds every 8th reply 200 ms more (`tail_every`, `tail_ms`): its stats log
/// says so in that frame's latencyServerRendering. Those loops are the tail, the slow
/// frames are named for them and for no loop at or under the median, and the stats log's
/// sends, seen again as the page's receipts, measure the clocks' agreement.
#[test]
fn the_fixtures_held_replies_are_named_for_its_tail_and_the_clocks_agree() {
    // The machine alone: which loops make the tail, and the receipts' fast end, are
    // measured (a neighbour's browser can make an unheld loop as slow as a held one).
    let _g = exclusive();
    let d = Scratch::new("explain-fixture");
    let stats = d.path("stats.log");
    let knobs = ["tail_every=8", "tail_ms=200", "los_work=0", "lazy_png=true"];
    let served = Served::start(&stats, &knobs);
    let run = d.path("run");
    let pilot = irregular_pilot(&d.0);
    let o = arena(&[
        "pilot",
        "--pilot",
        s(&pilot),
        "--url",
        &served.url,
        "--clicks",
        "40",
        "--out",
        s(&run),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    drop(served);
    let doc = json(&arena(&[
        "explain",
        s(&run),
        "--stats",
        s(&stats),
        "--slow-frame",
        "100",
        "--format",
        "json",
    ]));
    let row = &doc["rows"][0];
    let n = |k: &str| row[k].as_u64().unwrap();
    eprintln!(
        "explain: slow frames in {} of {} tail loops, {} of {} body loops, chance {:.2} (p95 {}); clock {}",
        n("tail_hits"),
        n("tail_n"),
        n("body_hits"),
        n("body_n"),
        row["sham_mean"].as_f64().unwrap(),
        row["sham_p95"],
        doc["clock"]
    );
    assert_eq!(row["cause"], "slow_frame");
    assert_eq!(row["named"], true, "{row}");
    assert_eq!(n("body_hits"), 0, "{row}");
    assert!(row["sham_p95"].as_f64().unwrap() < n("tail_hits") as f64);
    // Every held frame in the run's window is put on a loop, on the server's stage: the
    // one whose reply it was (10 of 80 replies). No loop under 100 ms met one. The tail's
    // other loops are unanswered ones (seed 1 has a press answered away from the pointer):
    // nothing in a stats log explains those, and the table lists them with nothing.
    let loops = doc["loops"].as_array().unwrap();
    let mut put: Vec<u64> = Vec::new();
    for l in loops {
        let hits = l["hits"].as_array().unwrap();
        if l["value_ms"].as_f64().is_some_and(|v| v < 100.0) {
            assert!(hits.is_empty(), "{l}");
        }
        for h in hits {
            assert_eq!(h["stage"], "server", "{l}");
            put.push(h["evidence"].as_u64().unwrap());
        }
    }
    put.sort_unstable();
    put.dedup();
    assert!(n("evidence") >= 8, "{row}");
    assert_eq!(
        put.len() as u64,
        n("evidence"),
        "held frames put on a loop: {doc}"
    );
    // A frame sent by the server's clock is received by the page's a little later: on one
    // machine the gap is the loopback's time plus the clocks' disagreement.
    let k = &doc["clock"];
    let gap = &k["sent_to_received"];
    assert!(gap["n"].as_u64().unwrap() >= 40, "{k}");
    // Its fast end is the alignment; a busy renderer only adds to the rest (the test shares
    // the machine), never makes a receipt come before its send.
    let p10 = gap["p10_ms"].as_f64().unwrap();
    assert!(
        (-1.0..=2.0).contains(&p10),
        "reply received minus sent, p10: {p10} ms: {k}"
    );
    // The bracket's half-width is the machine's (0.35 to 0.5 ms alone, 1.4 ms once beside
    // other browsers); this bound catches a unit slip, the receipts above check the rest.
    assert!(k["clock"]["error_ms"].as_f64().unwrap() < 5.0, "{k}");
    assert!(
        k["time_origin_diff_ms"].as_f64().unwrap().abs() < 50.0,
        "{k}"
    );
}
