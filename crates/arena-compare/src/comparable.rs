//! Which runs may be compared at all. Runs that differ in how a loop was measured (what
//! closes it, whose clock stamps its socket times, where an unanswered one is censored, the
//! browser, the link) differ for that reason as well as for the change under test, and a
//! pooled or compared figure cannot say which. One rule for `compare`, `gate` and
//! `report`: such runs are refused, or with `--allow-mixed` compared with a warning beside
//! every figure. Arms legitimately differ in their knobs, which are not checked, and in
//! the person's browser (`run.json` `browser`: device pixel ratio, viewport, CPU slowdown),
//! an arm axis; but the runs pooled into one side (an arm, or a side of the gate), and the
//! runs of one arm on both sides of a gate, must share the browser. What a loop is
//! (`loop_settings`, every field set rather than measured), headful or not, and tracing
//! are compared between every run. The seed is not: it draws the click points, a sample
//! of the board as the loops are a sample of the page, so runs of two seeds measure one
//! population at other points.

use anyhow::Result;
use arena_report::{Exit, Table};
use arena_run::{LoopSettings, Run, RunMeta, SocketSource};

use crate::findings::Finding;

/// One setting the runs given do not agree on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mixed {
    /// The setting's key: `answer.oracle`, `socket_source`, `loop_settings.timeout_ms`,
    /// `pilot_hash`, `chromium major`, `link` or `browser`.
    pub setting: &'static str,
    /// Each value and the runs that have it:
    /// `reply [stock, run 1] vs pixels [lazy-png, run 1; lazy-png, run 2]`.
    pub detail: String,
}

impl Mixed {
    /// The line printed under every table of figures the mixed runs are in.
    pub fn warning(&self) -> String {
        format!("\u{26a0} mixed runs: {}", self.message())
    }

    /// The warning as data, for `--format json` and the HTML report.
    pub fn finding(&self) -> Finding {
        Finding {
            code: "mixed".into(),
            column: None,
            metric: None,
            stat: None,
            message: self.message(),
        }
    }

    fn message(&self) -> String {
        format!(
            "{} differs: {}; compared anyway (--allow-mixed): part of any difference may come from it",
            self.setting, self.detail
        )
    }
}

/// One setting every run must share. Runs that do not record it are left out of its check.
struct Rule {
    setting: &'static str,
    /// Why a difference in it moves the figures, for the refusal.
    why: &'static str,
    value: fn(&RunMeta) -> Option<String>,
    /// How a value is shown (the compared value may be longer than is useful to read).
    show: fn(&str) -> String,
    /// Whether two values count as one (exact equality but for a measured default).
    same: fn(&str, &str) -> bool,
}

const fn rule(
    setting: &'static str,
    why: &'static str,
    value: fn(&RunMeta) -> Option<String>,
) -> Rule {
    Rule {
        setting,
        why,
        value,
        show: as_is,
        same: equal,
    }
}

/// A loop setting read from `run.json`'s `loop_settings`, when the run records them.
fn ls<T: ToString>(m: &RunMeta, f: fn(&LoopSettings) -> T) -> Option<String> {
    m.loop_settings.as_ref().map(|l| f(l).to_string())
}

/// Why a loop setting moves the figures; each is named in `docs/compare.md`.
const PACING: &str = "how the inputs were paced: it changes what was in flight and how busy the page was when an input went";

/// In order of the message. `answer.oracle` is checked twice: by the oracle alone, so a run
/// from before oracles (`reply`, nothing else recorded) still compares with a reply run;
/// then, between runs that record it, with its parameters. `loop_settings` is walked field
/// by field, but for the two it measures (the page's frame interval, the socket clock's
/// error), which a test holds to the struct's fields.
const RULES: [Rule; 19] = [
    rule(
        "answer.oracle",
        "what closes a loop: a reply and a painted pixel end it at different moments",
        |m| Some(m.answer.as_ref().map_or("reply", |a| &a.oracle).to_string()),
    ),
    rule(
        "answer.oracle",
        "what closes a loop: another region, reply size or predicate ends it elsewhere",
        |m| {
            m.answer
                .as_ref()
                .map(|a| oracle_with_detail(&a.oracle, &a.detail))
        },
    ),
    rule(
        "socket_source",
        "whose clock stamps a send and a receive: the page's hook, CDP or the app",
        |m| Some(socket_source(m.socket_source).to_string()),
    ),
    rule(
        "loop_settings.loop_events",
        "which inputs start a loop: presses, releases and keys are other populations",
        |m| ls(m, |l| l.loop_events.join(",")),
    ),
    Rule {
        show: |v| format!("{v} ms"),
        ..rule(
            "loop_settings.timeout_ms",
            "the answer window: an unanswered loop is censored at it, so the tail is cut elsewhere",
            |m| ls(m, |l| l.timeout_ms),
        )
    },
    Rule {
        show: |v| format!("{v} ms"),
        ..rule("loop_settings.settle_ms", PACING, |m| ls(m, |l| l.settle_ms))
    },
    Rule {
        show: |v| format!("{v} ms"),
        ..rule("loop_settings.interval_ms", PACING, |m| {
            ls(m, |l| l.interval_ms)
        })
    },
    rule(
        "loop_settings.warmup",
        "which clicks are cold: a loop counted warm on one side is cold on the other",
        |m| ls(m, |l| l.warmup),
    ),
    rule(
        "loop_settings.move_first",
        "whether the pointer was over the point before the press: a hover's work is in the loop or not",
        |m| ls(m, |l| l.move_first),
    ),
    rule("loop_settings.hold", PACING, |m| ls(m, |l| l.hold.clone())),
    Rule {
        show: |v| format!("{v} ms"),
        ..rule("loop_settings.hold_min_ms", PACING, |m| {
            ls(m, |l| l.hold_min_ms)
        })
    },
    Rule {
        show: |v| format!("{v} ms"),
        ..rule("loop_settings.hold_max_ms", PACING, |m| {
            ls(m, |l| l.hold_max_ms)
        })
    },
    Rule {
        show: |v| format!("{v} ms"),
        // One frame interval unless set, measured on each run's page, and a loaded page
        // measures 25-40 ms where an idle one measures 16.7: within a factor of 2.5 is one
        // setting, 0 against 17 or 5 against 17 are two.
        same: alike_jitter,
        ..rule(
            "loop_settings.phase_jitter_ms",
            "when in the page's frame an input lands: without the jitter every input meets the frame at one phase",
            |m| ls(m, |l| format!("{:.1}", l.phase_jitter_ms)),
        )
    },
    rule(
        "loop_settings.scenario",
        "the fixture's board: its bots and moves are load on every loop",
        |m| m.loop_settings.as_ref().and_then(|l| l.scenario.clone()),
    ),
    Rule {
        show: |v| v.get(..12).unwrap_or(v).to_string(),
        ..rule(
            "pilot_hash",
            "the pilot file: other clicks, pacing or target",
            |m| Some(m.pilot_hash.clone()),
        )
    },
    rule(
        "chromium major",
        "the browser: input dispatch, scheduling and paint change between major versions",
        |m| Some(chromium_major(&m.chromium_version)),
    ),
    rule(
        "headful",
        "a window: a headful Chromium composites and presents frames a headless one does not",
        |m| m.browser.and_then(|b| b.headful).map(|h| h.to_string()),
    ),
    rule(
        "trace",
        "Chromium's tracing (--trace) costs the renderer time in every loop",
        |m| Some(if m.trace.is_some() { "on" } else { "off" }.to_string()),
    ),
    rule(
        "link",
        "the network between browser and target: its round trip and rate are in every loop",
        |m| Some(m.link.clone().unwrap_or_else(|| "direct".into())),
    ),
];

fn equal(a: &str, b: &str) -> bool {
    a == b
}

/// Two phase jitters that are one setting: both none, or within a factor of 2.5 (a
/// measured frame interval from run to run, idle or loaded).
fn alike_jitter(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) if x <= 0.0 || y <= 0.0 => x <= 0.0 && y <= 0.0,
        (Ok(x), Ok(y)) => x.max(y) <= 2.5 * x.min(y),
        _ => a == b,
    }
}

/// The browser is checked within each side and each arm, not between arms: see
/// [`browser_within_sides`].
const BROWSER: &str = "browser";
const BROWSER_WHY: &str = "the person's browser within one side or arm: a device pixel ratio, viewport or CPU slowdown moves the page's side of every loop, so runs of one arm, or pooled into one side, must share it (arms may differ in it)";

/// Why a difference in `setting` moves the figures.
fn why(setting: &str) -> &'static str {
    if setting == BROWSER {
        return BROWSER_WHY;
    }
    RULES
        .iter()
        .find(|r| r.setting == setting)
        .map_or("", |r| r.why)
}

/// The side a run is pooled into: the gate's labels (made by [`sides`]) name it, and
/// `compare` and `report` pool the runs of an arm.
fn side_of<'a>(label: &'a str, run: &'a Run) -> &'a str {
    ["baseline", "candidate"]
        .into_iter()
        .find(|side| {
            label
                .strip_prefix(side)
                .is_some_and(|rest| rest.starts_with(" run "))
        })
        .unwrap_or(&run.meta.arm)
}

/// `stock: dpr=1 ... [stock, run 1] vs dpr=2 ... [stock, run 2]`, for each side, and each
/// arm across the sides, whose runs that record a browser hold more than one; runs made
/// before it was recorded are left out. An arm is its browser: the gate's baseline and
/// candidate of one arm must share it as much as two runs pooled into a side.
fn browser_within_sides<L: AsRef<str>>(runs: &[(L, &Run)]) -> Option<String> {
    let mut groups: Vec<(&str, Vec<(&str, &Run)>)> = Vec::new();
    for (label, run) in runs {
        let side = side_of(label.as_ref(), run);
        for key in [side, run.meta.arm.as_str()] {
            match groups.iter_mut().find(|(g, _)| *g == key) {
                Some((_, members)) if members.last().is_some_and(|l| l.0 == label.as_ref()) => {}
                Some((_, members)) => members.push((label.as_ref(), run)),
                None => groups.push((key, vec![(label.as_ref(), run)])),
            }
        }
    }
    let rule = rule(BROWSER, BROWSER_WHY, |m| {
        m.browser.as_ref().map(|b| b.label())
    });
    let found: Vec<String> = groups
        .iter()
        .filter_map(|(group, members)| {
            disagreement(&rule, members).map(|d| format!("{group}: {d}"))
        })
        .collect();
    (!found.is_empty()).then(|| found.join("; "))
}

fn as_is(v: &str) -> String {
    v.to_string()
}

fn oracle_with_detail(oracle: &str, detail: &str) -> String {
    if detail.is_empty() {
        oracle.to_string()
    } else {
        format!("{oracle} ({detail})")
    }
}

fn socket_source(s: SocketSource) -> &'static str {
    match s {
        SocketSource::PageHook => "page_hook",
        SocketSource::Cdp => "cdp",
        SocketSource::AppRecorder => "app_recorder",
    }
}

/// `Chrome/156.0.8078.114` -> `156`: minor versions and builds measure alike. A version
/// that is not `[NAME/]MAJOR.…` is compared whole.
fn chromium_major(version: &str) -> String {
    let number = version.rsplit('/').next().unwrap_or(version);
    match number.split('.').next() {
        Some(major) if !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit()) => {
            major.to_string()
        }
        _ => version.to_string(),
    }
}

/// The settings `runs` (each with the label the messages name it by) do not agree on, one
/// per setting, in the order of [`RULES`].
pub fn comparability<L: AsRef<str>>(runs: &[(L, &Run)]) -> Vec<Mixed> {
    let mut out: Vec<Mixed> = Vec::new();
    for rule in &RULES {
        if out.iter().any(|m| m.setting == rule.setting) {
            continue;
        }
        if let Some(detail) = disagreement(rule, runs) {
            out.push(Mixed {
                setting: rule.setting,
                detail,
            });
        }
    }
    if let Some(detail) = browser_within_sides(runs) {
        out.push(Mixed {
            setting: BROWSER,
            detail,
        });
    }
    out
}

/// `value [label; label] vs value [label]` when the runs recording the rule's setting hold
/// more than one value.
fn disagreement<L: AsRef<str>>(rule: &Rule, runs: &[(L, &Run)]) -> Option<String> {
    let mut values: Vec<(String, Vec<&str>)> = Vec::new();
    for (label, run) in runs {
        let Some(v) = (rule.value)(&run.meta) else {
            continue;
        };
        match values.iter_mut().find(|(x, _)| (rule.same)(x, &v)) {
            Some((_, labels)) => labels.push(label.as_ref()),
            None => values.push((v, vec![label.as_ref()])),
        }
    }
    (values.len() > 1).then(|| {
        values
            .iter()
            .map(|(v, labels)| format!("{} [{}]", (rule.show)(v), labels.join("; ")))
            .collect::<Vec<_>>()
            .join(" vs ")
    })
}

/// Refuses (exit 2) runs that were not measured alike, naming each setting, its values and
/// runs, unless `allow_mixed`; then returns what differs, for [`warn_mixed`]. `cmd` is the
/// command the message starts with.
pub fn refuse_mixed<L: AsRef<str>>(
    cmd: &str,
    runs: &[(L, &Run)],
    allow_mixed: bool,
) -> Result<Vec<Mixed>> {
    let mixed = comparability(runs);
    if mixed.is_empty() || allow_mixed {
        return Ok(mixed);
    }
    let lines: Vec<String> = mixed
        .iter()
        .map(|m| format!("  {} ({}): {}", m.setting, why(m.setting), m.detail))
        .collect();
    Err(Exit::bad_input(format!(
        "{cmd}: the runs were not measured alike, so their figures do not compare:\n{}\n--allow-mixed compares them anyway, with a warning beside every figure",
        lines.join("\n")
    ))
    .into())
}

/// `gate`'s runs with the labels its messages use: `baseline run 2 (stock)`.
pub fn sides<'a>(baseline: &'a [Run], candidate: &'a [Run]) -> Vec<(String, &'a Run)> {
    let side = |name: &'static str, runs: &'a [Run]| {
        runs.iter()
            .enumerate()
            .map(move |(i, r)| (format!("{name} run {} ({})", i + 1, r.meta.arm), r))
    };
    side("baseline", baseline)
        .chain(side("candidate", candidate))
        .collect()
}

/// Puts each allowed difference beside the figures: a note under every table given, and a
/// finding (code `mixed`) in `findings`, which JSON documents and the HTML report carry.
pub fn warn_mixed<'a>(
    mixed: &[Mixed],
    tables: impl IntoIterator<Item = &'a mut Table>,
    findings: &mut Vec<Finding>,
) {
    for table in tables {
        for m in mixed {
            table.note(m.warning());
        }
    }
    findings.extend(mixed.iter().map(Mixed::finding));
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_run::AnswerInfo;

    fn run(arm: &str) -> Run {
        let mut r = crate::synthetic::run(arm, &[10.0, 12.0, 11.0], 6000);
        r.meta.chromium_version = "Chrome/156.0.8078.114".into();
        r
    }

    fn check(a: &Run, b: &Run) -> Vec<Mixed> {
        comparability(&[("stock, run 1", a), ("lazy-png, run 1", b)])
    }

    fn settings(mixed: &[Mixed]) -> Vec<&'static str> {
        mixed.iter().map(|m| m.setting).collect()
    }

    fn loop_settings(timeout_ms: u64) -> LoopSettings {
        LoopSettings {
            loop_events: vec!["mousedown".into(), "mouseup".into()],
            timeout_ms,
            settle_ms: 30,
            interval_ms: 0,
            warmup: 1,
            move_first: false,
            hold: "fixed".into(),
            hold_min_ms: 0,
            hold_max_ms: 0,
            phase_jitter_ms: 0.0,
            frame_interval_ms: None,
            socket_clock_error_ms: None,
            scenario: None,
        }
    }

    #[test]
    fn arms_of_one_pilot_compare_whatever_their_knobs() {
        let (a, mut b) = (run("stock"), run("lazy-png"));
        b.meta.knobs.insert("lazy_png".into(), "true".into());
        assert_eq!(check(&a, &b), []);
    }

    #[test]
    fn only_the_chromium_major_version_counts() {
        let (mut a, mut b) = (run("stock"), run("lazy-png"));
        a.meta.chromium_version = "156.0.1".into();
        b.meta.chromium_version = "156.2.3".into();
        assert_eq!(check(&a, &b), []);
        b.meta.chromium_version = "HeadlessChrome/156.0.7000.1".into();
        assert_eq!(check(&a, &b), []);
        a.meta.chromium_version = "155.0.1".into();
        let m = check(&a, &b);
        assert_eq!(settings(&m), ["chromium major"]);
        assert_eq!(m[0].detail, "155 [stock, run 1] vs 156 [lazy-png, run 1]");
        // A version of no known shape is compared whole.
        a.meta.chromium_version = "synthetic".into();
        assert_eq!(settings(&check(&a, &b)), ["chromium major"]);
        assert_eq!(chromium_major("Chrome/156.0.8078.114"), "156");
        assert_eq!(chromium_major("Chrome/"), "Chrome/");
    }

    #[test]
    fn a_link_differs_from_none_and_from_another_link() {
        let (a, mut b) = (run("stock"), run("lazy-png"));
        b.meta.link = Some("rtt=20ms,jitter=0ms,down=25mbit,up=25mbit".into());
        let m = check(&a, &b);
        assert_eq!(settings(&m), ["link"]);
        assert!(
            m[0].detail.starts_with("direct [stock, run 1] vs rtt=20ms"),
            "{m:?}"
        );
        let mut a = a;
        a.meta.link = Some("rtt=40ms,jitter=0ms,down=25mbit,up=25mbit".into());
        assert_eq!(settings(&check(&a, &b)), ["link"]);
        a.meta.link = b.meta.link.clone();
        assert_eq!(check(&a, &b), []);
    }

    #[test]
    fn the_answer_window_is_compared_only_where_both_record_it() {
        let (mut a, mut b) = (run("stock"), run("lazy-png"));
        b.meta.loop_settings = Some(loop_settings(3000));
        assert_eq!(check(&a, &b), [], "a run from before loop_settings");
        a.meta.loop_settings = Some(loop_settings(3000));
        assert_eq!(check(&a, &b), []);
        a.meta.loop_settings = Some(loop_settings(1500));
        let m = check(&a, &b);
        assert_eq!(settings(&m), ["loop_settings.timeout_ms"]);
        assert_eq!(
            m[0].detail,
            "1500 ms [stock, run 1] vs 3000 ms [lazy-png, run 1]"
        );
    }

    #[test]
    fn an_oracle_that_fell_back_is_refused_with_every_run_and_value() {
        let answer = |oracle: &str, detail: &str| AnswerInfo {
            oracle: oracle.into(),
            requested: "auto".into(),
            detail: detail.into(),
            fallback: None,
        };
        let (mut a, mut b, mut c) = (run("stock"), run("lazy-png"), run("lazy-png"));
        a.meta.answer = Some(answer("reply", "first reply after the send"));
        b.meta.answer = Some(answer("pixels", "r=8px"));
        c.meta.answer = Some(answer("pixels", "r=8px"));
        let runs = [
            ("stock, run 1", &a),
            ("lazy-png, run 1", &b),
            ("lazy-png, run 2", &c),
        ];
        let m = comparability(&runs);
        assert_eq!(settings(&m), ["answer.oracle"], "named once");
        assert_eq!(
            m[0].detail,
            "reply [stock, run 1] vs pixels [lazy-png, run 1; lazy-png, run 2]"
        );
        let e = refuse_mixed("compare", &runs, false).unwrap_err();
        assert_eq!(arena_report::ExitKind::of(&e).map(|k| k.code()), Some(2));
        let text = e.to_string();
        for word in ["compare:", "answer.oracle", "stock, run 1", "--allow-mixed"] {
            assert!(text.contains(word), "{word}: {text}");
        }
        let allowed = refuse_mixed("compare", &runs, true).unwrap();
        assert_eq!(allowed, m);
        // Its parameters count too; a run from before oracles is a reply run.
        c.meta.answer = Some(answer("pixels", "r=4px"));
        let m = comparability(&[("b", &b), ("c", &c)]);
        assert_eq!(m[0].detail, "pixels (r=8px) [b] vs pixels (r=4px) [c]");
        let old = run("stock");
        a.meta.answer = Some(answer("reply", "first reply of 64 B or more"));
        assert_eq!(comparability(&[("old", &old), ("a", &a)]), []);
        assert_eq!(
            settings(&comparability(&[("old", &old), ("b", &b)])),
            ["answer.oracle"]
        );
    }

    #[test]
    fn every_setting_is_named_and_warned_beside_the_figures() {
        let (a, mut b) = (run("stock"), run("lazy-png"));
        b.meta.socket_source = SocketSource::Cdp;
        b.meta.pilot_hash = "f".repeat(64);
        let m = check(&a, &b);
        assert_eq!(settings(&m), ["socket_source", "pilot_hash"]);
        assert_eq!(
            m[0].detail,
            "page_hook [stock, run 1] vs cdp [lazy-png, run 1]"
        );
        assert_eq!(
            m[1].detail,
            "000000000000 [stock, run 1] vs ffffffffffff [lazy-png, run 1]"
        );
        let mut tables = [Table::new(Vec::new()), Table::new(Vec::new())];
        let mut findings = Vec::new();
        warn_mixed(&m, tables.iter_mut(), &mut findings);
        for t in &tables {
            assert_eq!(t.notes.len(), 2);
            assert!(
                t.notes[0].contains("socket_source differs")
                    && t.notes[0].contains("--allow-mixed")
            );
        }
        assert_eq!(findings.len(), 2);
        assert!(findings
            .iter()
            .all(|f| f.code == "mixed" && f.column.is_none()));
    }

    fn browser(dpr: f64, cpu_throttle: f64) -> Option<arena_run::BrowserSettings> {
        Some(arena_run::BrowserSettings {
            dpr,
            viewport_w: 1600,
            viewport_h: 1113,
            cpu_throttle,
            headful: None,
        })
    }

    #[test]
    fn arms_may_differ_in_the_browser_but_runs_of_one_arm_may_not() {
        let (mut a, mut b) = (run("dpr1"), run("dpr2"));
        a.meta.browser = browser(1.0, 1.0);
        b.meta.browser = browser(2.0, 1.0);
        assert_eq!(check(&a, &b), [], "an arm axis, like a knob");
        let mut b2 = run("dpr2");
        b2.meta.browser = browser(2.0, 4.0);
        let runs = [
            ("dpr1, run 1", &a),
            ("dpr2, run 1", &b),
            ("dpr2, run 2", &b2),
        ];
        let m = comparability(&runs);
        assert_eq!(settings(&m), ["browser"]);
        assert_eq!(
            m[0].detail,
            "dpr2: dpr=2 viewport=1600x1113 cpu=1x [dpr2, run 1] vs dpr=2 viewport=1600x1113 cpu=4x [dpr2, run 2]"
        );
        let e = refuse_mixed("compare", &runs, false).unwrap_err();
        assert_eq!(arena_report::ExitKind::of(&e).map(|k| k.code()), Some(2));
        let text = e.to_string();
        for word in [
            "browser (the person's browser",
            "cpu=4x [dpr2, run 2]",
            "--allow-mixed",
        ] {
            assert!(text.contains(word), "{word}: {text}");
        }
        assert_eq!(refuse_mixed("compare", &runs, true).unwrap(), m);
        // A run made before the browser was recorded is left out, as with every setting.
        let old = run("dpr2");
        assert_eq!(
            comparability(&[("dpr2, run 1", &b), ("dpr2, run 2", &old)]),
            []
        );
    }

    #[test]
    fn the_gate_refuses_one_arm_on_two_browsers_across_sides_or_within_one() {
        let (mut a, mut b, mut c) = (run("stock"), run("stock"), run("stock"));
        a.meta.browser = browser(1.0, 1.0);
        b.meta.browser = browser(1.0, 1.0);
        c.meta.browser = browser(2.0, 1.0);
        // A DPR 1 baseline against a DPR 2 candidate of the same arm: not the change tested.
        let (base, cand) = (vec![a.clone()], vec![c.clone()]);
        let m = comparability(&sides(&base, &cand));
        assert_eq!(settings(&m), ["browser"]);
        assert_eq!(
            m[0].detail,
            "stock: dpr=1 viewport=1600x1113 cpu=1x [baseline run 1 (stock)] vs dpr=2 viewport=1600x1113 cpu=1x [candidate run 1 (stock)]"
        );
        let e = refuse_mixed("gate", &sides(&base, &cand), false).unwrap_err();
        assert_eq!(arena_report::ExitKind::of(&e).map(|k| k.code()), Some(2));
        // Two arms that are the DPR: an arm axis, as in `compare`.
        let mut hi = c.clone();
        hi.meta.arm = "hidpi".into();
        assert_eq!(comparability(&sides(&base, &[hi])), []);
        let (base, cand) = (vec![a, c], vec![b]);
        let m = comparability(&sides(&base, &cand));
        assert_eq!(settings(&m), ["browser"]);
        assert!(
            m[0].detail.starts_with(
                "baseline: dpr=1 viewport=1600x1113 cpu=1x [baseline run 1 (stock)] vs dpr=2 viewport=1600x1113 cpu=1x [baseline run 2 (stock)]; stock: "
            ),
            "{}",
            m[0].detail
        );
    }

    /// Each field of `loop_settings` a run sets, changed on one run alone, is refused by
    /// its name with both values; the fields it measures are the only ones left out, and a
    /// field added to the struct fails here until it is one or the other.
    #[test]
    fn every_loop_setting_is_compared_and_named_when_it_differs() {
        const MEASURED: [&str; 2] = ["frame_interval_ms", "socket_clock_error_ms"];
        let mut base = loop_settings(3000);
        base.scenario = Some("none".into());
        base.phase_jitter_ms = 16.7;
        let json = serde_json::to_value(&base).unwrap();
        let fields = json.as_object().unwrap();
        for key in fields.keys().filter(|k| !MEASURED.contains(&k.as_str())) {
            let setting = format!("loop_settings.{key}");
            assert!(
                RULES.iter().any(|r| r.setting == setting),
                "{key} is neither compared nor measured"
            );
            let mut changed = json.clone();
            let v = &mut changed[key.as_str()];
            *v = match v.clone() {
                serde_json::Value::Bool(b) => (!b).into(),
                serde_json::Value::Number(n) => match n.as_u64() {
                    Some(u) => (u * 2 + 7).into(),
                    None => (n.as_f64().unwrap() * 4.0 + 7.0).into(),
                },
                serde_json::Value::String(t) if t == "fixed" => "person".into(),
                serde_json::Value::String(_) => "played".into(),
                serde_json::Value::Array(_) => serde_json::json!(["keydown"]),
                other => panic!("{key}: {other}"),
            };
            let (mut a, mut b) = (run("stock"), run("stock"));
            a.meta.loop_settings = Some(base.clone());
            b.meta.loop_settings = Some(serde_json::from_value(changed).unwrap());
            let runs = [("stock, run 1", &a), ("stock, run 2", &b)];
            let m = comparability(&runs);
            assert_eq!(settings(&m), [setting.as_str()], "{key}");
            let e = refuse_mixed("compare", &runs, false).unwrap_err();
            assert_eq!(arena_report::ExitKind::of(&e).map(|k| k.code()), Some(2));
            let text = e.to_string();
            assert!(
                text.contains(&setting)
                    && text.contains("[stock, run 1]")
                    && text.contains("[stock, run 2]"),
                "{text}"
            );
        }
        // The measured ones move from run to run and are not settings.
        let (mut a, mut b) = (run("stock"), run("stock"));
        a.meta.loop_settings = Some(base.clone());
        let mut other = base.clone();
        other.frame_interval_ms = Some(16.9);
        other.socket_clock_error_ms = Some(0.4);
        other.phase_jitter_ms = 33.4;
        b.meta.loop_settings = Some(other.clone());
        assert_eq!(
            check(&a, &b),
            [],
            "an idle page's frame against a loaded one's"
        );
        other.phase_jitter_ms = 0.0;
        b.meta.loop_settings = Some(other);
        assert_eq!(
            settings(&check(&a, &b)),
            ["loop_settings.phase_jitter_ms"],
            "no jitter against a frame's"
        );
    }

    #[test]
    fn headful_and_tracing_are_compared_between_every_run() {
        let (mut a, mut b) = (run("stock"), run("lazy-png"));
        a.meta.browser = browser(1.0, 1.0);
        b.meta.browser = browser(1.0, 1.0);
        b.meta.browser.as_mut().unwrap().headful = Some(true);
        assert_eq!(
            check(&a, &b),
            [],
            "a run that did not record it is left out"
        );
        a.meta.browser.as_mut().unwrap().headful = Some(false);
        assert_eq!(settings(&check(&a, &b)), ["headful"]);
        a.meta.browser = b.meta.browser;
        b.meta.trace = Some(arena_run::TraceInfo::default());
        let m = check(&a, &b);
        assert_eq!(settings(&m), ["trace"]);
        assert_eq!(m[0].detail, "off [stock, run 1] vs on [lazy-png, run 1]");
    }

    #[test]
    fn gate_names_runs_by_side() {
        let (a, b, c) = (run("stock"), run("stock"), run("lazy-png"));
        let (base, cand) = (vec![a, b], vec![c]);
        let names: Vec<String> = sides(&base, &cand).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "baseline run 1 (stock)",
                "baseline run 2 (stock)",
                "candidate run 1 (lazy-png)"
            ]
        );
    }
}
