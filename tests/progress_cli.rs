//! Progress on stderr: a bar with an ETA on a terminal (a real pty, from util-linux
//! `script`), plain text under NO_COLOR, and not one control character in a pipe or a
//! CI log.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::bin;

/// Three quick runs of a real program (`sleep`), timed by wall clock.
fn matrix_file(dir: &Path) -> PathBuf {
    let f = dir.join("m.toml");
    std::fs::write(
        &f,
        "title = \"sleep\"\nrepeats = 3\n[figure]\nkind = \"wall\"\n[[arm]]\nname = \"a\"\n[[case]]\nname = \"s\"\ncommand = \"sleep 0.05\"\n",
    )
    .unwrap();
    f
}

/// stderr of `arena-perf ARGS` run inside a pty (`script` gives the child a terminal and
/// copies what it writes to `log`).
fn under_a_terminal(dir: &Path, args: &[&str], no_color: bool) -> String {
    let log = dir.join("tty.log");
    let cmd = format!("{} {} 2>&1 >/dev/null", bin().display(), args.join(" "));
    let mut c = Command::new("script");
    c.args(["-qec", &cmd, log.to_str().unwrap()])
        .env("COLUMNS", "120");
    if no_color {
        c.env("NO_COLOR", "1");
    } else {
        c.env_remove("NO_COLOR");
    }
    let out = c.output().expect("script (util-linux)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&log).unwrap()
}

fn control_chars(s: &str) -> Vec<char> {
    s.chars().filter(|c| c.is_control() && *c != '\n').collect()
}

#[test]
fn a_bar_on_a_terminal_plain_text_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let f = matrix_file(tmp.path());
    // Each matrix its own new folder: a matrix never writes into an earlier one's.
    let outs: Vec<String> = (0..3)
        .map(|i| tmp.path().join(format!("out{i}")).display().to_string())
        .collect();
    let args = |i: usize| ["matrix", f.to_str().unwrap(), "--out", outs[i].as_str()];

    let tty = under_a_terminal(tmp.path(), &args(0), false);
    assert!(
        tty.contains("ETA") && tty.contains("matrix run"),
        "a bar: {tty:?}"
    );
    assert!(
        tty.contains("[3/3] s x a r3"),
        "the run lines above it: {tty:?}"
    );
    assert!(tty.contains('\u{1b}'), "drawn live: {tty:?}");

    let plain = under_a_terminal(tmp.path(), &args(1), true);
    assert!(plain.contains("[3/3] s x a r3"), "{plain:?}");
    assert!(!plain.contains("ETA"), "no bar under NO_COLOR: {plain:?}");
    let cc: Vec<char> = control_chars(&plain)
        .into_iter()
        .filter(|c| *c != '\r')
        .collect();
    assert!(cc.is_empty(), "no escapes under NO_COLOR: {cc:?}");

    let piped = Command::new(bin()).args(args(2)).output().unwrap();
    assert!(piped.status.success());
    // Onto the first one's folder: refused, and what it holds is left as it was.
    let before = std::fs::read_to_string(Path::new(&outs[0]).join("runs.jsonl")).unwrap();
    let again = Command::new(bin()).args(args(0)).output().unwrap();
    let why = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{why}");
    assert!(why.contains("holds files already"), "{why}");
    let after = std::fs::read_to_string(Path::new(&outs[0]).join("runs.jsonl")).unwrap();
    assert_eq!(before, after);
    let err = String::from_utf8_lossy(&piped.stderr);
    assert_eq!(control_chars(&err), Vec::<char>::new(), "{err:?}");
    assert!(!err.contains("ETA"), "{err:?}");
}

#[test]
fn long_reads_say_nothing_in_a_pipe() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for args in [
        vec!["logs", "gc", "fixtures/logs/gc-g1-1m.log"],
        vec!["wire", "summary", "fixtures/wire/fixture-session.pcap"],
    ] {
        let o = Command::new(bin())
            .args(&args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "",
            "{args:?}: stderr stays empty"
        );
        assert!(!o.stdout.is_empty());
    }
}
