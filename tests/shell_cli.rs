//! `arena-perf completions` and `arena-perf man`, used the way a shell and man use them.

use std::process::Command;

use crate::support::bin;

fn stdout(args: &[&str]) -> String {
    let out = Command::new(bin()).args(args).output().expect("arena-perf");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// What bash completes after `words`, with the generated script sourced.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        r#"source "{}"
COMP_WORDS=({line})
COMP_CWORD={}
COMP_LINE="{line}"
COMP_POINT=${{#COMP_LINE}}
_arena__perf arena-perf "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        script.display(),
        words.len() - 1
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &program])
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_subcommands_and_their_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("arena-perf.bash");
    std::fs::write(&script, stdout(&["completions", "bash"])).unwrap();
    let subs = bash_completes(&script, &["arena-perf", "pi"]);
    assert_eq!(subs, vec!["pilot"], "{subs:?}");
    let flags = bash_completes(&script, &["arena-perf", "pilot", "--cap"]);
    assert!(
        flags.contains(&"--capture".to_string()) && flags.contains(&"--capacity".to_string()),
        "{flags:?}"
    );
    for (shell, flag) in [("zsh", "--capture"), ("fish", "-l capture")] {
        let s = stdout(&["completions", shell]);
        assert!(s.contains("arena-perf") && s.contains(flag), "{shell}");
    }
    let bad = Command::new(bin())
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn the_man_page_has_a_section_per_subcommand() {
    let page = stdout(&["man"]);
    let titles: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".TH "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for sub in [
        "arena-perf",
        "arena-perf-pilot",
        "arena-perf-compare",
        "arena-perf-gate",
        "arena-perf-serve",
    ] {
        assert!(titles.contains(&sub), "{sub} missing from {titles:?}");
    }
    // The flags are the parser's own, with their help text.
    assert!(
        page.contains("\\-\\-capture") && page.contains("CAP_NET_RAW"),
        "pilot's --capture and its help"
    );
}
