//! The README's "Try every command on fixtures/" examples, run as written: every command
//! the tool lists in `--help` has one, each exits as the README says (0, or the `# exit N`
//! after it) and prints what that command prints. The commands run in a scratch folder, so
//! what they write (`reports/`, `latency.svg`) lands there; their `fixtures/` and `pilots/`
//! paths are read from this checkout. The ones that drive Chromium (`pilot`, `ab`, `demo`,
//! `startup` and `verify` on the built-in match, `watch` on a page) are one test of their
//! own.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SECTION: &str = "## Try every command on `fixtures/`";

// The browser examples measure (`verify` holds its shifts to the delay): they hold the
// machine alone, and the other examples (a gzip matrix among them) share it only with
// tests that do not measure.
use crate::support::machine::{exclusive, remeasured, shared};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

use crate::support::bin;

/// One README example: its words after `arena-perf`, and the exit code it documents.
#[derive(Debug)]
struct Example {
    line: String,
    args: Vec<String>,
    exit: i32,
}

impl Example {
    /// `logs gc`, `wire summary`: the command, and its kind for the two that have kinds.
    fn command(&self) -> String {
        match self.args[0].as_str() {
            "logs" | "wire" => format!("{} {}", self.args[0], self.args[1]),
            c => c.to_string(),
        }
    }

    /// Its exit code hangs on a measured shift (`verify`'s causality against a
    /// tolerance), so nothing else may load the machine beside it.
    fn measures(&self) -> bool {
        self.args[0] == "verify"
    }

    fn needs_browser(&self) -> bool {
        self.exit == 0
            && matches!(
                self.args[0].as_str(),
                "pilot" | "ab" | "demo" | "watch" | "startup" | "verify"
            )
    }
}

/// The commands in the README's fenced block under SECTION: `arena-perf ARGS  # comment`.
fn examples() -> Vec<Example> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme
        .find(SECTION)
        .unwrap_or_else(|| panic!("README.md has no section {SECTION:?}"));
    let body = &readme[start + SECTION.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let block = body
        .split("```")
        .nth(1)
        .expect("a fenced block of commands");
    let mut out = Vec::new();
    for line in block.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("arena-perf ") else {
            assert!(line.is_empty(), "not a command in the examples: {line:?}");
            continue;
        };
        let (cmd, comment) = rest.split_once(" #").unwrap_or((rest, ""));
        let exit = comment
            .trim()
            .strip_prefix("exit ")
            .map(|e| e[..e.find(|c: char| !c.is_ascii_digit()).unwrap_or(e.len())].parse())
            .transpose()
            .unwrap_or_else(|e| panic!("bad `# exit N` in {line:?}: {e}"))
            .unwrap_or(0);
        // Plain words only: no quoting, so what a reader pastes is what runs here.
        assert!(
            !cmd.contains(['"', '\'', '$', '|', '>', '<', '*']),
            "keep the examples free of shell syntax: {line:?}"
        );
        let args = cmd
            .split_whitespace()
            .map(|a| {
                if a.starts_with("fixtures/") || a.starts_with("pilots/") {
                    root().join(a).display().to_string()
                } else {
                    a.to_string()
                }
            })
            .collect();
        out.push(Example {
            line: line.to_string(),
            args,
            exit,
        });
    }
    assert!(!out.is_empty(), "no commands under {SECTION:?}");
    out
}

/// What each command prints when it worked (stdout), or says when it refused (stderr).
fn expected(e: &Example) -> &'static [&'static str] {
    match (e.command().as_str(), e.exit) {
        ("pilot", 0) => &["inputToPixels", "loops: "],
        ("ab" | "demo", 0) => &["inputToPixels", "stock, run 1", "lazy-png, run 1"],
        ("compare", 0) => &["Against stock", "inputToPaint p50", "lazy-png"],
        ("gate", 0) => &[
            "Gate: 2 baseline run(s) against 2 candidate run(s)",
            "0 of 3 checks failed",
            "passes when it lies wholly under it, and is unknown otherwise",
        ],
        ("history", 0) => &["history add", "stock-1", "added"],
        ("plan", 0) => &[
            "To see sendToRecv p50 move by +10 %",
            "runs a side",
            "measured over 2 runs",
        ],
        ("plot", 0) => &["wrote ", "latency.svg"],
        ("explain", 0) => &[
            "| slow server frame (≥ 100 ms) | socket → reply | 10 | 6 of 7 |",
            "yes: 6 of 7 over the p90",
            "| 18 | mousedown | unanswered | nothing in the evidence |",
        ],
        ("report", 0) => &["wrote ", "report.html", "against stock, 4 runs"],
        ("serve", 0) => &["fixture match at http://127.0.0.1:", "\"lazy_png\":true"],
        ("wire summary", 0) => &["wire summary:", "port 18087", "WebSocket data frames"],
        ("logs stats", 0) => &["Per-frame statistics", "encodeMs", "understood ("],
        ("logs gc", 0) => &[
            "GC pauses by kind and cause",
            "1M regions",
            "8M regions",
            "humongous",
        ],
        ("logs classload", 0) => &[
            "Class loading",
            "first `javax.xml.` class",
            "jrt:/java.desktop",
        ],
        ("matrix", 0) => &["gzip, wall time", "gzip -1", "gzip -9", "class-load log"],
        ("pilot", 2) => &["typo-key.toml:9:", "cuont"],
        ("serve", 2) => &["knob `png_level`", "out of range"],
        ("watch", 0) => &["first paint", "| frames | 0 |", "| rate | 0 B/s |"],
        ("startup", 0) => &["socket open", "board on screen", "| stock |"],
        ("verify", 0) => &[
            "| mousedown |",
            "| mouseup |",
            "caused by its input",
            "+30.0 ms RTT on the link",
            "p10 and p50 must move by 30.0 ± 3.0 ms",
        ],
        ("completions", 0) => &["_arena__perf()", "complete -F", "--capture"],
        ("man", 0) => &[".TH arena-perf 1", ".TH arena-perf-pilot 1"],
        (c, n) => panic!("no expectation for `{c}` exiting {n}: add one here"),
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs one example in `dir` and checks its exit code and output.
fn check(e: &Example, dir: &Path) {
    let o = run(e, dir);
    check_exit(e, &o).unwrap_or_else(|m| panic!("{m}"));
    check_output(e, dir, &o);
}

fn run(e: &Example, dir: &Path) -> Output {
    if e.args[0] == "serve" && e.exit == 0 {
        serve_until_ready(e, dir)
    } else {
        Command::new(bin())
            .args(&e.args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .expect("arena-perf")
    }
}

fn check_exit(e: &Example, o: &Output) -> Result<(), String> {
    if o.status.code() == Some(e.exit) {
        return Ok(());
    }
    let (out, err) = text(o);
    Err(format!(
        "{}: exit {:?}, not {}\n--- stdout\n{out}\n--- stderr\n{err}",
        e.line,
        o.status.code(),
        e.exit
    ))
}

/// The example's output says what the README says it does.
fn check_output(e: &Example, dir: &Path, o: &Output) {
    let (out, err) = text(o);
    let said = if e.exit == 0 { &out } else { &err };
    for want in expected(e) {
        assert!(
            said.contains(want),
            "{}: no {want:?} in\n{said}\n--- stderr\n{err}",
            e.line
        );
    }
    if e.args[0] == "plot" {
        let at = e
            .args
            .iter()
            .position(|a| a == "--out")
            .expect("plot --out");
        let svg = std::fs::read_to_string(dir.join(&e.args[at + 1])).expect("the plot");
        assert!(svg.contains("<svg"), "{}: not an SVG", e.line);
    }
    if e.args[0] == "report" {
        let html = std::fs::read_to_string(dir.join("report.html")).expect("the report");
        assert!(
            html.contains("<script type=\"application/json\" id=\"data\">"),
            "{}",
            e.line
        );
    }
    eprintln!("ok: {}", e.line);
}

/// `serve` runs until Ctrl-C: start it, wait for its URL, fetch `/knobs`, then SIGINT.
fn serve_until_ready(e: &Example, dir: &Path) -> Output {
    let mut child = Command::new(bin())
        .args(&e.args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arena-perf serve");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("knobs: ") {
                let _ = tx.send(());
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    let ready = rx.recv_timeout(Duration::from_secs(60)).is_ok();
    // SIGINT is Ctrl-C; serve ends with 0 on it (SIGKILL if it never got ready).
    let sig = if ready { "-INT" } else { "-KILL" };
    let _ = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status();
    let mut o = child.wait_with_output().expect("wait for serve");
    o.stdout = reader.join().unwrap().into_bytes();
    assert!(ready, "{}: serve printed no URL within 60 s", e.line);
    o
}

/// Every command of `arena-perf --help` but `help`.
fn subcommands() -> Vec<String> {
    let o = Command::new(bin()).arg("--help").output().expect("--help");
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    let list = help.split("Commands:\n").nth(1).expect("a Commands: list");
    list.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_command_has_a_readme_example_on_fixtures() {
    let all = examples();
    let subs = subcommands();
    assert!(
        subs.len() >= 10,
        "read too few commands from --help: {subs:?}"
    );
    for sub in &subs {
        assert!(
            all.iter().any(|e| e.args[0] == *sub && e.exit == 0),
            "the README's examples have no `arena-perf {sub}` that succeeds"
        );
    }
    for e in &all {
        assert!(subs.contains(&e.args[0]), "not a command: {}", e.line);
        expected(e);
    }
}

#[test]
fn readme_examples_on_fixtures_exit_as_documented() {
    let _g = shared();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for e in examples().iter().filter(|e| !e.needs_browser()) {
        check(e, dir.path());
        n += 1;
    }
    assert!(n >= 10, "only {n} examples without a browser");
}

/// The examples that drive Chromium and only exit 0 share the machine; `verify` measures
/// (a shift by the delay it injects, against a tolerance) and holds it alone.
#[test]
fn readme_examples_in_chromium_exit_0() {
    let _g = shared();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for e in examples()
        .iter()
        .filter(|e| e.needs_browser() && !e.measures())
    {
        check(e, dir.path());
        n += 1;
    }
    assert!(n >= 5, "only {n} browser examples that only count");
}

#[test]
fn readme_verify_example_exits_0_on_a_machine_to_itself() {
    let _g = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let verify: Vec<Example> = examples()
        .into_iter()
        .filter(|e| e.needs_browser() && e.measures())
        .collect();
    assert_eq!(verify.len(), 1, "the README's verify example");
    // Its verdict is a measurement: exit 4 (unknown) or 1 on a slow spell is measured again.
    remeasured("the README's verify example", || {
        let o = run(&verify[0], dir.path());
        check_exit(&verify[0], &o)?;
        check_output(&verify[0], dir.path(), &o);
        Ok(())
    });
}
