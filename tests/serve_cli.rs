//! `arena-perf serve` as a process started from a script: signals during startup.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::bin;

/// The report's script, `arena-perf serve & pid=$!; kill -$SIG $pid; wait $pid`, run by a
/// non-interactive bash, which starts the background job with SIGINT ignored. Instead of a
/// fixed delay it sends the signal as soon as the process has a handler for it (read from
/// /proc, polled with builtins only), so it tests "the handler is there before the startup
/// work", not the machine's speed: it also says whether the URL line was already out when
/// the signal went. A watchdog kills serve after 15 s; its pid is in `dir/pid`.
const SCRIPT: &str = r#"
"$BIN" serve --port 0 > "$DIR/out" 2>&1 &
pid=$!
echo $pid > "$DIR/pid"
bit=$(( 1 << (SIGNO - 1) ))
caught=0
start=$SECONDS
while (( SECONDS - start < 10 )); do
  if [[ -r /proc/$pid/status ]]; then
    while read -r key value _; do
      [[ $key == SigCgt: ]] && caught=$(( 0x$value & bit ))
    done < /proc/$pid/status
  fi
  (( caught )) && break
done
ready=0
grep -q 'fixture match at' "$DIR/out" && ready=1
kill -$SIG $pid
wait $pid
echo "rc=$? caught=$caught ready_before_signal=$ready"
"#;

/// Runs SCRIPT for `sig` (name, number); returns its last line.
fn interrupt_during_startup(dir: &Path, sig: &str, signo: u32) -> String {
    let mut child = Command::new("bash")
        .args(["-c", SCRIPT])
        .env("BIN", bin())
        .env("DIR", dir)
        .env("SIG", sig)
        .env("SIGNO", signo.to_string())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("bash");
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(15) {
            // The signal was lost: serve runs on. End it (and so the script).
            if let Ok(pid) = std::fs::read_to_string(dir.join("pid")) {
                let _ = Command::new("kill").args(["-KILL", pid.trim()]).status();
            }
            let _ = child.wait();
            let out = std::fs::read_to_string(dir.join("out")).unwrap_or_default();
            panic!("SIG{sig} during startup was lost: serve still ran after 15 s\n{out}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines().last().unwrap_or_default().to_string()
}

#[test]
fn sigint_right_after_start_stops_serve() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let last = interrupt_during_startup(dir.path(), "INT", 2);
    eprintln!("serve, SIGINT during startup: {last} ({:?})", t0.elapsed());
    assert!(
        last.contains("caught=2"),
        "no SIGINT handler within 10 s: {last}"
    );
    assert!(
        last.contains("ready_before_signal=0"),
        "the SIGINT handler came only after startup (a signal before it is discarded): {last}"
    );
    assert!(last.starts_with("rc=0 "), "{last}");
}

#[test]
fn sigterm_right_after_start_stops_serve() {
    let dir = tempfile::tempdir().unwrap();
    let last = interrupt_during_startup(dir.path(), "TERM", 15);
    eprintln!("serve, SIGTERM during startup: {last}");
    assert!(last.contains("ready_before_signal=0"), "{last}");
    assert!(last.starts_with("rc=0 "), "{last}");
}

/// Runs `arena-perf ARGS` to its end (killed after 20 s: a serve that accepted its file
/// would run until Ctrl-C); returns (exit code, stderr).
fn run_to_end(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(bin())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("arena-perf");
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            return (None, format!("still running after 20 s: {args:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn serve_pilot_rejects_what_pilot_rejects_with_the_same_words() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = [
        ("unknown key", "[target]\ncanvass = \"#board\"\n[arms.x]\n"),
        (
            "region out of range",
            "[clicks]\nregion = [0.1, 0.1, 1.5, 0.9]\n[arms.x]\n",
        ),
        ("broken TOML", "[arms.x\n"),
        ("unknown knob", "[arms.x.knobs]\nnope = \"1\"\n"),
        ("knob out of range", "[arms.x.knobs]\npng_level = \"12\"\n"),
        ("no such arm", "[arms.y]\n"),
        (
            "knobs for an external target",
            "[target]\nurl = \"http://127.0.0.1:9/\"\n[arms.x.knobs]\ndelay_ms = \"4\"\n",
        ),
        ("a table as a knob value", "[arms.x.knobs]\ntick_ms = [8]\n"),
    ];
    for (i, (what, text)) in bad.iter().enumerate() {
        let file = tmp.path().join(format!("bad{i}.toml"));
        std::fs::write(&file, text).unwrap();
        let f = file.to_str().unwrap();
        // A file `pilot` accepted would reach the browser, which does not exist here: exit 3.
        let (pilot_rc, pilot_err) = run_to_end(&[
            "pilot",
            "--pilot",
            f,
            "--arm",
            "x",
            "--clicks",
            "1",
            "--chrome",
            "/nonexistent/chromium",
        ]);
        let (serve_rc, serve_err) = run_to_end(&["serve", "--pilot", f, "--arm", "x"]);
        assert_eq!(pilot_rc, Some(2), "{what}: pilot: {pilot_err}");
        assert_eq!(serve_rc, Some(2), "{what}: serve: {serve_err}");
        assert!(
            pilot_err.contains(f),
            "{what}: the error names the file: {pilot_err}"
        );
        assert_eq!(pilot_err, serve_err, "{what}: the same words from both");
    }
    // And a good file (numbers and booleans as knob values) is served, not refused.
    let good = tmp.path().join("good.toml");
    std::fs::write(&good, "[arms.x.knobs]\ntick_ms = 8\nlazy_png = true\n").unwrap();
    let mut child = Command::new(bin())
        .args(["serve", "--pilot", good.to_str().unwrap(), "--arm", "x"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let mut knobs = String::new();
    std::io::BufRead::read_line(&mut out, &mut knobs).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("fixture match at"), "{line}");
    assert!(
        knobs.contains("\"tick_ms\":8") && knobs.contains("\"lazy_png\":true"),
        "{knobs}"
    );
}

#[test]
fn a_drag_path_outside_the_canvas_is_exit_2_naming_file_line_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("drag.toml");
    std::fs::write(
        &file,
        "[arms.x]\n[[gestures]]\nkind = \"drag\"\npath = [[0.2, 0.5], [1.3, 0.5]]\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (rc, err) = run_to_end(&[
        "pilot",
        "--pilot",
        f,
        "--arm",
        "x",
        "--chrome",
        "/nonexistent/chromium",
    ]);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.contains(&format!("{f}:4")), "file and line: {err}");
    assert!(err.contains("`gestures[0].path`"), "the key: {err}");
    assert!(
        err.contains("point 1 [1.3, 0.5] is outside the canvas"),
        "{err}"
    );
}
