//! Which runs may be compared at all. Runs that differ in how a loop was measured (what
//! closes it, whose clock stamps its socket times, where an unanswered one is censored, the
//! browser, the link) differ for that reason as well as for the change under test, and a
//! pooled or compared figure cannot say which. One rule for `compare`, `gate` and
//! `report`: such runs are refused, or with `--allow-mixed` compared with a warning beside
//! every figure. Arms legitimately differ in their knobs, which are not checked, and in
//! the person's browser (`run.json` `browser`: device pixel ratio, viewport, CPU slowdown),
//! an arm axis; but the runs pooled into one side (an arm, or a side of the gate) must
//! share the browser, or the side is two populations.

use anyhow::Result;
use arena_report::{Exit, Table};
use arena_run::{Run, RunMeta, SocketSource};

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
}

/// In order of the message. `answer.oracle` is checked twice: by the oracle alone, so a run
/// from before oracles (`reply`, nothing else recorded) still compares with a reply run;
/// then, between runs that record it, with its parameters.
const RULES: [Rule; 7] = [
    Rule {
        setting: "answer.oracle",
        why: "what closes a loop: a reply and a painted pixel end it at different moments",
        value: |m| Some(m.answer.as_ref().map_or("reply", |a| &a.oracle).to_string()),
        show: as_is,
    },
    Rule {
        setting: "answer.oracle",
        why: "what closes a loop: another region, reply size or predicate ends it elsewhere",
        value: |m| {
            m.answer
                .as_ref()
                .map(|a| oracle_with_detail(&a.oracle, &a.detail))
        },
        show: as_is,
    },
    Rule {
        setting: "socket_source",
        why: "whose clock stamps a send and a receive: the page's hook, CDP or the app",
        value: |m| Some(socket_source(m.socket_source).to_string()),
        show: as_is,
    },
    Rule {
        setting: "loop_settings.timeout_ms",
        why:
            "the answer window: an unanswered loop is censored at it, so the tail is cut elsewhere",
        value: |m| m.loop_settings.as_ref().map(|l| l.timeout_ms.to_string()),
        show: |v| format!("{v} ms"),
    },
    Rule {
        setting: "pilot_hash",
        why: "the pilot file: other clicks, pacing or target",
        value: |m| Some(m.pilot_hash.clone()),
        show: |v| v.get(..12).unwrap_or(v).to_string(),
    },
    Rule {
        setting: "chromium major",
        why: "the browser: input dispatch, scheduling and paint change between major versions",
        value: |m| Some(chromium_major(&m.chromium_version)),
        show: as_is,
    },
    Rule {
        setting: "link",
        why: "the network between browser and target: its round trip and rate are in every loop",
        value: |m| Some(m.link.clone().unwrap_or_else(|| "direct".into())),
        show: as_is,
    },
];

/// The browser is checked within each side, not across sides: see [`browser_within_sides`].
const BROWSER: &str = "browser";
const BROWSER_WHY: &str = "the person's browser within one side: a device pixel ratio, viewport or CPU slowdown moves the page's side of every loop, so runs pooled into one side must share it (arms may differ in it)";

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

/// `stock: dpr=1 ... [stock, run 1] vs dpr=2 ... [stock, run 2]`, for each side whose runs
/// that record a browser hold more than one; runs made before it was recorded are left out.
fn browser_within_sides<L: AsRef<str>>(runs: &[(L, &Run)]) -> Option<String> {
    let mut sides: Vec<(&str, Vec<(&str, &Run)>)> = Vec::new();
    for (label, run) in runs {
        let side = side_of(label.as_ref(), run);
        match sides.iter_mut().find(|(s, _)| *s == side) {
            Some((_, members)) => members.push((label.as_ref(), run)),
            None => sides.push((side, vec![(label.as_ref(), run)])),
        }
    }
    let rule = Rule {
        setting: BROWSER,
        why: BROWSER_WHY,
        value: |m| m.browser.as_ref().map(|b| b.label()),
        show: as_is,
    };
    let found: Vec<String> = sides
        .iter()
        .filter_map(|(side, members)| disagreement(&rule, members).map(|d| format!("{side}: {d}")))
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
        match values.iter_mut().find(|(x, _)| *x == v) {
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
    use arena_run::{AnswerInfo, LoopSettings};

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
    fn the_gate_refuses_a_side_pooled_over_two_browsers_not_two_sides() {
        let (mut a, mut b, mut c) = (run("stock"), run("stock"), run("stock"));
        a.meta.browser = browser(1.0, 1.0);
        b.meta.browser = browser(1.0, 1.0);
        c.meta.browser = browser(2.0, 1.0);
        let (base, cand) = (vec![a.clone()], vec![c.clone()]);
        assert_eq!(comparability(&sides(&base, &cand)), []);
        let (base, cand) = (vec![a, c], vec![b]);
        let m = comparability(&sides(&base, &cand));
        assert_eq!(settings(&m), ["browser"]);
        assert_eq!(
            m[0].detail,
            "baseline: dpr=1 viewport=1600x1113 cpu=1x [baseline run 1 (stock)] vs dpr=2 viewport=1600x1113 cpu=1x [baseline run 2 (stock)]"
        );
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
