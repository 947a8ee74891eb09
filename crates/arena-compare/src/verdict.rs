//! The verdict under `ab`'s and `demo`'s tables: each candidate arm against the baseline
//! on the headline metric, in a table and in one sentence, in the manner of the field
//! notes ("lazy-png: 19 % off the median, 41 % off the p90, identical bytes; both runs
//! agree").
//!
//! It decides nothing of its own. The pooled changes are `compare`'s, decided by the
//! gate's rule (`crate::decide`: each run's quantile plus the spread between runs,
//! Bonferroni over a column's checks, four outcomes); each round's pair of runs is one
//! more `compare` of those two runs alone. [`judge`] only reads the verdicts it is given:
//! a change the rule does not call real is said as "the same" or "unknown", never as
//! faster or slower, whatever its sign.

use arena_report::{fmt_count, fmt_pct_change, Cell, Column, Format, Table};
use arena_run::{Metric, Run};
use arena_stats::{is_censored, pct_change, QuantileChange, Verdict};
use serde_json::Value;

use crate::cells::{change_cells, fmt_ms_signed, quantile_text, verdict_mark, QUANTILES};
use crate::change::CompareOptions;
use crate::compare::{compare, Comparison};
use crate::json_types::{
    ArmVerdictDoc, CountsDoc, RoundDoc, VerdictChange, VerdictQuantiles, VerdictsDoc,
};

/// A count each run of a side recorded (bytes), in run order.
#[derive(Debug, Clone, PartialEq)]
pub struct SideCounts {
    pub baseline: Vec<u64>,
    pub candidate: Vec<u64>,
}

/// One round: the candidate's run N against the baseline's run N alone.
#[derive(Debug, Clone)]
pub struct RoundChanges {
    /// 1-based, as the by-run table names its columns (`lazy-png, run 2`).
    pub round: usize,
    /// p50, p90, p99 of the headline metric, decided by the same rule.
    pub quantiles: Vec<QuantileChange>,
}

/// The numbers a verdict is built from, for one candidate arm.
#[derive(Debug, Clone)]
pub struct VerdictInput {
    pub baseline: String,
    pub candidate: String,
    /// The headline metric's name (`inputToPixels`).
    pub metric: &'static str,
    /// Loops behind the pooled figures, unanswered ones included.
    pub n_baseline: usize,
    pub n_candidate: usize,
    /// Runs a side.
    pub runs_baseline: usize,
    pub runs_candidate: usize,
    /// The answer window, ms, for a quantile that lands on an unanswered loop.
    pub window_ms: Option<u64>,
    /// p50, p90, p99 of the runs pooled per arm, with the rule's verdicts.
    pub pooled: Vec<QuantileChange>,
    pub rounds: Vec<RoundChanges>,
    /// Page-side WebSocket bytes received, per run.
    pub bytes: SideCounts,
    /// Server-to-client wire payload per run, when every run was captured.
    pub wire: Option<SideCounts>,
    /// The rule's threshold, percent of the baseline's quantile (`--threshold`).
    pub threshold_pct: f64,
    /// About how many more runs a side would decide the unknown pooled quantiles
    /// ([`crate::decide::more_runs`], the most of them); `None` when none is unknown or
    /// nothing bounds them.
    pub more_runs: Option<usize>,
}

/// Whether two sides' counts are the same.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountsVerdict {
    /// Every run of both sides recorded the same count.
    pub identical: bool,
    /// The candidate's mean per run against the baseline's, percent.
    pub change_pct: f64,
    pub baseline_per_run: f64,
    pub candidate_per_run: f64,
}

/// One candidate arm's verdict.
#[derive(Debug, Clone)]
pub struct ArmVerdict {
    pub input: VerdictInput,
    pub bytes: CountsVerdict,
    pub wire: Option<CountsVerdict>,
    /// Whether the round pairs agree; `None` with fewer than two.
    pub agree: Option<bool>,
    /// What each disagreeing round did, in words.
    pub disagreements: Vec<String>,
    pub sentence: String,
}

/// Every candidate's verdict against one baseline.
#[derive(Debug, Clone)]
pub struct Verdicts {
    pub baseline: String,
    pub metric: &'static str,
    /// How the intervals were built, in words (the comparison's).
    pub method: String,
    pub alpha: f64,
    pub noise_bar_pct: f64,
    pub arms: Vec<ArmVerdict>,
}

/// The verdicts of `pooled` (the comparison of `runs` by arm, made with `opts`): each
/// candidate column's headline quantiles, and each round's run pair compared by the same
/// options. Candidates without the headline metric are left out.
pub fn verdicts(runs: &[Run], pooled: &Comparison, opts: &CompareOptions) -> Verdicts {
    let metric = crate::by_run::headline(runs);
    let arms = pooled
        .columns
        .iter()
        .filter(|c| **c != pooled.baseline)
        .filter_map(|c| gather(runs, pooled, c, metric, opts))
        .map(judge)
        .collect();
    Verdicts {
        baseline: pooled.baseline.clone(),
        metric: metric.name(),
        method: pooled.method.clone(),
        alpha: opts.verdict.alpha,
        noise_bar_pct: opts.verdict.noise_bar_pct,
        arms,
    }
}

fn arm_runs<'a>(runs: &'a [Run], arm: &str) -> Vec<&'a Run> {
    runs.iter().filter(|r| r.meta.arm == arm).collect()
}

/// One candidate's numbers: the pooled change from `pooled`, one `compare` per round.
fn gather(
    runs: &[Run],
    pooled: &Comparison,
    candidate: &str,
    metric: Metric,
    opts: &CompareOptions,
) -> Option<VerdictInput> {
    let change = pooled
        .changes
        .iter()
        .find(|c| c.column == candidate && c.metric == metric.name())?;
    let (b, c) = (arm_runs(runs, &pooled.baseline), arm_runs(runs, candidate));
    let round_opts = CompareOptions {
        by: crate::By::Arm,
        baseline: Some(pooled.baseline.clone()),
        metrics: Vec::new(),
        splits: Vec::new(),
        ..opts.clone()
    };
    let rounds = b
        .iter()
        .zip(&c)
        .enumerate()
        .filter_map(|(i, (rb, rc))| {
            let pair = [(*rb).clone(), (*rc).clone()];
            let cmp = compare(&pair, &round_opts).ok()?;
            let ch = cmp
                .changes
                .into_iter()
                .find(|x| x.column == candidate && x.metric == metric.name())?;
            Some(RoundChanges {
                round: i + 1,
                quantiles: ch.quantiles,
            })
        })
        .collect();
    let more_runs = change
        .quantiles
        .iter()
        .filter_map(|q| crate::decide::more_runs(q, &opts.verdict))
        .max();
    Some(VerdictInput {
        baseline: pooled.baseline.clone(),
        candidate: candidate.to_string(),
        metric: metric.name(),
        n_baseline: change.n_baseline,
        n_candidate: change.n,
        runs_baseline: b.len(),
        runs_candidate: c.len(),
        window_ms: b
            .first()
            .and_then(|r| crate::group::RunData::new(r, false).window_ms),
        pooled: change.quantiles.clone(),
        rounds,
        bytes: counts(&b, &c, |r| Some(r.meta.summary.bytes_received))?,
        wire: counts(&b, &c, |r| {
            let w = r.meta.wire.as_ref()?.server_to_client.as_ref()?;
            Some(w.frame_payload_bytes)
        }),
        threshold_pct: opts.verdict.noise_bar_pct,
        more_runs,
    })
}

/// Each side's count per run; `None` unless every run has it.
fn counts(b: &[&Run], c: &[&Run], f: impl Fn(&Run) -> Option<u64>) -> Option<SideCounts> {
    Some(SideCounts {
        baseline: b.iter().map(|r| f(r)).collect::<Option<_>>()?,
        candidate: c.iter().map(|r| f(r)).collect::<Option<_>>()?,
    })
}

/// The verdict of one candidate's numbers: pure, and the rule's verdicts are read, never
/// re-decided.
pub fn judge(input: VerdictInput) -> ArmVerdict {
    let bytes = counts_verdict(&input.bytes);
    let wire = input.wire.as_ref().map(counts_verdict);
    let disagreements = disagreements(&input);
    let agree = (input.rounds.len() >= 2).then_some(disagreements.is_empty());
    let sentence = sentence(&input, &bytes, wire.as_ref(), &disagreements);
    ArmVerdict {
        input,
        bytes,
        wire,
        agree,
        disagreements,
        sentence,
    }
}

fn mean(v: &[u64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().map(|x| *x as f64).sum::<f64>() / v.len() as f64
    }
}

pub fn counts_verdict(s: &SideCounts) -> CountsVerdict {
    let first = s.baseline.first().or(s.candidate.first());
    let identical = !s.baseline.is_empty()
        && !s.candidate.is_empty()
        && s.baseline
            .iter()
            .chain(&s.candidate)
            .all(|x| Some(x) == first);
    let (b, c) = (mean(&s.baseline), mean(&s.candidate));
    CountsVerdict {
        identical,
        change_pct: pct_change(b, c),
        baseline_per_run: b,
        candidate_per_run: c,
    }
}

/// `the median`, `the p90`, `the p99`.
fn quantile_name(q: f64) -> String {
    match QUANTILES.iter().find(|(x, _)| *x == q) {
        Some((_, "p50")) => "the median".into(),
        Some((_, s)) => format!("the {s}"),
        None => format!("the p{}", (q * 100.0).round()),
    }
}

/// An unsigned percent as the notes write it: `19 %`, `4.5 %`.
fn pct_words(p: f64) -> String {
    let a = p.abs();
    if a >= 10.0 {
        format!("{a:.0} %")
    } else {
        format!("{a:.1} %")
    }
}

/// A change the rule calls real, in words; `None` for one it does not (`~`).
fn real_change_words(c: &QuantileChange) -> Option<String> {
    let name = quantile_name(c.q);
    match c.verdict {
        Verdict::Lower if c.delta_pct.is_finite() => {
            Some(format!("{} off {name}", pct_words(c.delta_pct)))
        }
        Verdict::Higher if is_censored(c.candidate) => Some(format!("{name} beyond the window")),
        Verdict::Higher if c.delta_pct.is_finite() => {
            Some(format!("{} slower at {name}", pct_words(c.delta_pct)))
        }
        Verdict::Lower => Some(format!("{name} faster by {}", fmt_ms_signed(c.delta))),
        Verdict::Higher => Some(format!("{name} slower by {}", fmt_ms_signed(c.delta))),
        Verdict::Same | Verdict::Unknown | Verdict::Noise | Verdict::NotSignificant => None,
    }
}

/// The most "more runs" a sentence names; past it, only that it is more.
const MORE_RUNS_SAID: usize = 100;

/// `a`, `a or b`, `a, b or c`.
fn or_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn bytes_words(bytes: &CountsVerdict, wire: Option<&CountsVerdict>) -> String {
    let words = |v: &CountsVerdict| {
        if v.identical {
            "identical".to_string()
        } else if v.change_pct.is_finite() && v.change_pct.abs() >= 0.05 {
            format!("{} per run", fmt_pct_change(v.change_pct))
        } else {
            "the same per run on average but not run for run".to_string()
        }
    };
    match wire {
        None if bytes.identical => "identical bytes".into(),
        Some(w) if bytes.identical && w.identical => "identical bytes".into(),
        None => format!("page bytes {}", words(bytes)),
        Some(w) => format!("page bytes {}, wire payload {}", words(bytes), words(w)),
    }
}

fn agreement_words(rounds: usize, disagreements: &[String]) -> String {
    match (rounds, disagreements.is_empty()) {
        (0, _) => "no run pair to compare".into(),
        (1, _) => "one run each, so nothing to agree".into(),
        (2, true) => "both runs agree".into(),
        (k, true) => format!("all {k} runs agree"),
        (_, false) => format!("the runs disagree: {}", disagreements.join("; ")),
    }
}

/// The sentence: real changes first, in quantile order, then the `~` ones together.
fn sentence(
    input: &VerdictInput,
    bytes: &CountsVerdict,
    wire: Option<&CountsVerdict>,
    disagreements: &[String],
) -> String {
    let mut parts: Vec<String> = input.pooled.iter().filter_map(real_change_words).collect();
    let named = |f: fn(Verdict) -> bool| -> Vec<String> {
        let v = input.pooled.iter().filter(|c| f(c.verdict));
        v.map(|c| quantile_name(c.q)).collect()
    };
    let same = named(|v| v == Verdict::Same);
    if !same.is_empty() {
        let thr = pct_words(input.threshold_pct);
        parts.push(format!(
            "the same at {} (within \u{b1}{thr})",
            or_list(&same)
        ));
    }
    let unknown = named(|v| v == Verdict::Unknown);
    if !unknown.is_empty() {
        let more = match input.more_runs {
            Some(1) => " (about 1 more run a side would decide it)".to_string(),
            // A change right at the threshold takes endless runs to place: say so.
            Some(k) if k > MORE_RUNS_SAID => {
                format!(" (over {MORE_RUNS_SAID} more runs a side would be needed)")
            }
            Some(k) => format!(" (about {k} more runs a side would decide it)"),
            None => String::new(),
        };
        parts.push(format!("unknown at {}{more}", or_list(&unknown)));
    }
    let quiet = named(|v| matches!(v, Verdict::Noise | Verdict::NotSignificant));
    if !quiet.is_empty() {
        parts.push(format!("no significant change at {}", or_list(&quiet)));
    }
    parts.push(bytes_words(bytes, wire));
    let n = if input.n_baseline == input.n_candidate {
        format!("n={} a side", input.n_baseline)
    } else {
        format!(
            "n={} {}, {} {}",
            input.n_baseline, input.baseline, input.n_candidate, input.candidate
        )
    };
    format!(
        "{}: {}; {} ({} of warm loops, {n})",
        input.candidate,
        parts.join(", "),
        agreement_words(input.rounds.len(), disagreements),
        input.metric
    )
}

/// A change's sign: +1, -1, or 0 for none or unknown.
fn sign(c: &QuantileChange) -> i8 {
    if c.delta.is_nan() || c.delta == 0.0 {
        0
    } else if c.delta > 0.0 {
        1
    } else {
        -1
    }
}

/// A round's change in words: its percent, or its ms when there is no percent.
fn round_change(c: &QuantileChange) -> String {
    if c.delta_pct.is_finite() {
        fmt_pct_change(c.delta_pct)
    } else {
        fmt_ms_signed(c.delta)
    }
}

/// Where the round pairs contradict each other or the pooled verdict: a round that
/// moved a quantile against a real pooled change, or, where the pooled change is `~`, a
/// round the rule calls real and another that moved the other way.
fn disagreements(input: &VerdictInput) -> Vec<String> {
    let mut out = Vec::new();
    for p in &input.pooled {
        let name = quantile_name(p.q);
        let per: Vec<(usize, &QuantileChange)> = input
            .rounds
            .iter()
            .filter_map(|r| Some((r.round, r.quantiles.iter().find(|c| c.q == p.q)?)))
            .collect();
        if p.verdict.is_real() {
            for (i, c) in per.iter().filter(|(_, c)| sign(c) == -sign(p)) {
                out.push(format!(
                    "run {i} moved {name} {} against {} pooled",
                    round_change(c),
                    round_change(p)
                ));
            }
            continue;
        }
        let real = per.iter().filter(|(_, c)| c.verdict.is_real());
        let against = real.flat_map(|(i, c)| {
            per.iter()
                .filter(|(_, o)| sign(o) == -sign(c))
                .map(move |(j, o)| (*i, *c, *j, *o))
        });
        if let Some((i, c, j, o)) = against.min_by_key(|(i, _, j, _)| (*i).min(*j)) {
            let (first, second) = if i < j {
                ((i, c), (j, o))
            } else {
                ((j, o), (i, c))
            };
            let said = |(k, x): (usize, &QuantileChange)| {
                let real = if x.verdict.is_real() {
                    " (significant)"
                } else {
                    ""
                };
                format!("{} in run {k}{real}", round_change(x))
            };
            out.push(format!("{name} moved {} and {}", said(first), said(second)));
        }
    }
    out
}

impl Verdicts {
    /// The verdict table: per candidate, each quantile's figures and change with its
    /// interval and p, each round's change, the loops and the bytes.
    pub fn table(&self) -> Table {
        let m = self
            .arms
            .first()
            .map_or(QUANTILES.len(), |a| a.input.pooled.len());
        let ci = crate::decide::ci_header(self.alpha, m);
        let columns = vec![
            Column::left(""),
            Column::right(self.baseline.clone()),
            Column::right("candidate"),
            Column::right("\u{394}"),
            Column::right(ci),
            Column::right("p"),
            Column::right("each run, \u{394}"),
        ];
        let mut t = Table::new(columns).with_title(format!(
            "Verdict: {} of warm loops against {}, runs pooled; unanswered loops censored at the window, ms",
            self.metric, self.baseline
        ));
        for a in &self.arms {
            quantile_rows(&mut t, &a.input);
            count_rows(&mut t, a);
        }
        t.note(format!(
            "\u{394}, CI and p are compare's (the gate's rule): {}. Bold: faster or slower, the interval wholly one side of 0 and the change at least the {} % threshold; =: the same, the interval within \u{b1}{} %; ~: unknown, neither (\u{3b1}={}).",
            self.method, self.noise_bar_pct, self.noise_bar_pct, self.alpha
        ));
        for a in &self.arms {
            if let Some(line) = components_line(&a.input) {
                t.note(line);
            }
        }
        t.note(
            "each run: the candidate's run N against the baseline's run N alone, by the same rule.",
        );
        t
    }

    /// The table, then one sentence per candidate: a terminal block, or a Markdown section
    /// that pastes into PERFORMANCE.md (`### Verdict: ...`, the table, the sentences).
    pub fn render(&self, format: Format) -> String {
        let mut out = self.table().render(format);
        if matches!(format, Format::Csv | Format::Json) {
            return out;
        }
        for a in &self.arms {
            out.push('\n');
            out.push_str(&a.sentence);
            out.push('\n');
        }
        out
    }
}

/// Where each pooled interval's width comes from: the spread between runs against the
/// spread of each run's own loops, so a reader sees whether more runs or more loops
/// would narrow it. `None` when no quantile carries its components.
fn components_line(v: &VerdictInput) -> Option<String> {
    let parts: Vec<String> = v
        .pooled
        .iter()
        .filter_map(|c| {
            let d = c.diff?;
            let (_, stat) = QUANTILES.iter().find(|(q, _)| *q == c.q)?;
            let k = &d.components;
            let share = 100.0 * k.between_share();
            let share = if share.is_finite() { share } else { 0.0 };
            let assumed = match k.source {
                arena_stats::SpreadSource::Runs => "",
                arena_stats::SpreadSource::Assumed => ", assumed",
                arena_stats::SpreadSource::Unknown => ", unknown",
            };
            Some(format!(
                "{stat} runs \u{b1}{:.2} ms{assumed}, loops \u{b1}{:.2} ms ({share:.0} % between runs, df {})",
                k.run_sd,
                k.loop_sd,
                fmt_df(k.df)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("{} spread: {}.", v.candidate, parts.join("; ")))
}

fn fmt_df(df: f64) -> String {
    if df.is_finite() {
        format!("{df:.1}")
    } else {
        "\u{221e}".into()
    }
}

fn quantile_rows(t: &mut Table, v: &VerdictInput) {
    for c in &v.pooled {
        let stat = QUANTILES
            .iter()
            .find(|(q, _)| *q == c.q)
            .map_or("?", |(_, s)| *s);
        let mut row = vec![
            Cell::text(format!("{} {stat}", v.candidate)),
            ms_cell(c.baseline, v.window_ms),
            ms_cell(c.candidate, v.window_ms),
        ];
        row.extend(change_cells(c));
        let each: Vec<String> = v
            .rounds
            .iter()
            .filter_map(|r| r.quantiles.iter().find(|x| x.q == c.q))
            .map(|x| format!("{}{}", round_change(x), verdict_mark(x.verdict)))
            .collect();
        row.push(Cell::text(if each.is_empty() {
            "-".to_string()
        } else {
            each.join(", ")
        }));
        t.push_row(row);
    }
}

/// A quantile in ms; one beyond the window is text only, so no format prints `inf`.
fn ms_cell(v: f64, window_ms: Option<u64>) -> Cell {
    if v.is_finite() {
        Cell::num(quantile_text(v, None, window_ms), v)
    } else {
        Cell::text(quantile_text(v, None, window_ms))
    }
}

fn count_rows(t: &mut Table, a: &ArmVerdict) {
    let v = &a.input;
    let blank = || Cell::text("");
    t.push_row(vec![
        Cell::text(format!("{} n (loops)", v.candidate)),
        Cell::num(fmt_count(v.n_baseline as i64), v.n_baseline as f64),
        Cell::num(fmt_count(v.n_candidate as i64), v.n_candidate as f64),
        blank(),
        blank(),
        blank(),
        Cell::text(format!("{} and {} runs", v.runs_baseline, v.runs_candidate)),
    ]);
    let mut rows = vec![("bytes received / run, B", a.bytes)];
    if let Some(w) = a.wire {
        rows.push(("wire payload, server\u{2192}client / run, B", w));
    }
    for (label, c) in rows {
        t.push_row(vec![
            Cell::text(format!("{} {label}", v.candidate)),
            Cell::num(
                fmt_count(c.baseline_per_run.round() as i64),
                c.baseline_per_run,
            ),
            Cell::num(
                fmt_count(c.candidate_per_run.round() as i64),
                c.candidate_per_run,
            ),
            Cell::text(if c.identical {
                "identical".to_string()
            } else {
                fmt_pct_change(c.change_pct)
            }),
            blank(),
            blank(),
            blank(),
        ]);
    }
}

impl Verdicts {
    /// The verdict as data: the `verdict` object of `ab`'s and `demo`'s documents
    /// (`docs/schema/ab.json`), one entry per candidate arm in `arms`.
    pub fn to_json(&self) -> Value {
        arena_report::json::to_value(&self.to_doc())
    }

    /// The verdict as its typed document ([`Verdicts::to_json`] writes it).
    pub fn to_doc(&self) -> VerdictsDoc<'_> {
        VerdictsDoc {
            baseline: &self.baseline,
            metric: self.metric,
            unit: "ms",
            figures: "every warm loop; an unanswered one is censored at the window: a quantile that lands on one is null",
            interval_method: &self.method,
            alpha: self.alpha,
            noise_bar_pct: self.noise_bar_pct,
            arms: self.arms.iter().map(arm_doc).collect(),
        }
    }
}

/// `{p50: {...}, p90: {...}, p99: {...}}`, the quantiles present.
fn quantiles_doc(qs: &[QuantileChange]) -> VerdictQuantiles {
    qs.iter()
        .filter_map(|c| {
            let (_, name) = QUANTILES.iter().find(|(q, _)| *q == c.q)?;
            let change = VerdictChange {
                baseline: c.baseline,
                candidate: c.candidate,
                change: c.into(),
                significant: c.verdict.is_real(),
                spread: c.diff.as_ref().map(|d| (&d.components).into()),
            };
            Some((*name, change))
        })
        .collect()
}

fn counts_doc<'a>(s: &'a SideCounts, v: &CountsVerdict) -> CountsDoc<'a> {
    CountsDoc {
        baseline_per_run: &s.baseline,
        candidate_per_run: &s.candidate,
        identical: v.identical,
        change_pct: v.change_pct,
    }
}

fn arm_doc(a: &ArmVerdict) -> ArmVerdictDoc<'_> {
    let v = &a.input;
    ArmVerdictDoc {
        arm: &v.candidate,
        n_baseline: v.n_baseline,
        n_candidate: v.n_candidate,
        runs_baseline: v.runs_baseline,
        runs_candidate: v.runs_candidate,
        quantiles: quantiles_doc(&v.pooled),
        rounds: v
            .rounds
            .iter()
            .map(|r| RoundDoc {
                round: r.round,
                quantiles: quantiles_doc(&r.quantiles),
            })
            .collect(),
        bytes: counts_doc(&v.bytes, &a.bytes),
        wire: match (&v.wire, &a.wire) {
            (Some(s), Some(w)) => Some(counts_doc(s, w)),
            _ => None,
        },
        runs_agree: a.agree,
        disagreements: &a.disagreements,
        sentence: &a.sentence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_stats::DiffCi;

    /// A decided quantile change: baseline and candidate in ms, the interval of the
    /// difference, and the verdict the rule gave it.
    fn qc(q: f64, b: f64, c: f64, ci: (f64, f64), verdict: Verdict) -> QuantileChange {
        QuantileChange {
            q,
            baseline: b,
            candidate: c,
            delta: c - b,
            delta_pct: pct_change(b, c),
            ci: Some(DiffCi {
                estimate: c - b,
                lo: ci.0,
                hi: ci.1,
            }),
            p: Some(if verdict.is_real() { 0.001 } else { 0.4 }),
            verdict,
            diff: None,
        }
    }

    /// The verdict table of one arm against stock, at alpha 0.05 and a 2 % threshold.
    fn table_of(v: ArmVerdict) -> Table {
        Verdicts {
            baseline: "stock".into(),
            metric: "inputToPixels",
            method: "m".into(),
            alpha: 0.05,
            noise_bar_pct: 2.0,
            arms: vec![v],
        }
        .table()
    }

    fn round(round: usize, quantiles: Vec<QuantileChange>) -> RoundChanges {
        RoundChanges { round, quantiles }
    }

    /// The field notes' finding: a fifth off the median, over 40 % off the p90, a p99 the
    /// rule cannot call, identical bytes, both run pairs the same way.
    fn lazy_png() -> VerdictInput {
        let pooled = vec![
            qc(0.5, 31.7, 25.7, (-7.0, -5.0), Verdict::Lower),
            qc(0.9, 38.0, 22.4, (-18.0, -13.0), Verdict::Lower),
            qc(0.99, 60.0, 55.0, (-12.0, 3.0), Verdict::NotSignificant),
        ];
        VerdictInput {
            baseline: "stock".into(),
            candidate: "lazy-png".into(),
            metric: "inputToPixels",
            n_baseline: 618,
            n_candidate: 618,
            runs_baseline: 2,
            runs_candidate: 2,
            window_ms: Some(2000),
            rounds: vec![round(1, pooled.clone()), round(2, pooled.clone())],
            pooled,
            bytes: SideCounts {
                baseline: vec![46572, 46572],
                candidate: vec![46572, 46572],
            },
            wire: None,
            threshold_pct: 2.0,
            more_runs: None,
        }
    }

    #[test]
    fn a_clear_improvement_reads_as_the_notes_do() {
        let v = judge(lazy_png());
        assert_eq!(
            v.sentence,
            "lazy-png: 19 % off the median, 41 % off the p90, no significant change at the p99, identical bytes; both runs agree (inputToPixels of warm loops, n=618 a side)"
        );
        assert_eq!(v.agree, Some(true));
        assert!(v.bytes.identical);
    }

    #[test]
    fn a_clear_regression_is_slower_never_off() {
        let mut i = lazy_png();
        i.pooled = vec![
            qc(0.5, 20.0, 25.0, (3.0, 7.0), Verdict::Higher),
            qc(0.9, 30.0, 36.0, (4.0, 8.0), Verdict::Higher),
            qc(
                0.99,
                50.0,
                f64::INFINITY,
                (5.0, f64::INFINITY),
                Verdict::Higher,
            ),
        ];
        i.rounds = vec![round(1, i.pooled.clone()), round(2, i.pooled.clone())];
        let v = judge(i);
        assert!(
            v.sentence.starts_with(
                "lazy-png: 25 % slower at the median, 20 % slower at the p90, the p99 beyond the window, identical bytes; both runs agree"
            ),
            "{}",
            v.sentence
        );
        assert!(!v.sentence.contains(" off "), "{}", v.sentence);
    }

    #[test]
    fn a_tilde_change_is_never_called_faster_whatever_its_sign() {
        let mut i = lazy_png();
        // 15 % lower at the p90 but the interval spans zero; 1.5 % lower at the p50,
        // significant but under the noise bar.
        i.pooled = vec![
            qc(0.5, 30.0, 29.55, (-0.8, -0.1), Verdict::Noise),
            qc(0.9, 40.0, 34.0, (-14.0, 2.0), Verdict::NotSignificant),
            qc(0.99, 60.0, 58.0, (-9.0, 5.0), Verdict::NotSignificant),
        ];
        i.rounds = vec![round(1, i.pooled.clone()), round(2, i.pooled.clone())];
        let v = judge(i);
        assert!(
            v.sentence.starts_with(
                "lazy-png: no significant change at the median, the p90 or the p99, identical bytes; both runs agree"
            ),
            "{}",
            v.sentence
        );
        for word in ["off", "faster", "slower", "15 %"] {
            assert!(!v.sentence.contains(word), "{word}: {}", v.sentence);
        }
        // The table marks it too: the p90's change carries `~` and is not bold.
        let t = table_of(v);
        let p90 = &t.rows[1];
        assert_eq!(p90[0].text, "lazy-png p90");
        assert!(
            p90[3].text.ends_with(" ~") && !p90[3].strong,
            "{:?}",
            p90[3]
        );
        assert!(p90[6].text.ends_with(" ~"), "{:?}", p90[6]);
    }

    #[test]
    fn the_same_and_unknown_are_said_with_the_threshold_and_what_would_decide() {
        let mut i = lazy_png();
        i.pooled = vec![
            qc(0.5, 30.0, 30.1, (-0.3, 0.4), Verdict::Same),
            qc(0.9, 40.0, 32.0, (-12.0, -4.0), Verdict::Lower),
            qc(0.99, 60.0, 55.0, (-12.0, 3.0), Verdict::Unknown),
        ];
        i.rounds = vec![round(1, i.pooled.clone()), round(2, i.pooled.clone())];
        i.more_runs = Some(3);
        let v = judge(i.clone());
        assert!(
            v.sentence.starts_with(
                "lazy-png: 20 % off the p90, the same at the median (within \u{b1}2.0 %), unknown at the p99 (about 3 more runs a side would decide it), identical bytes"
            ),
            "{}",
            v.sentence
        );
        i.more_runs = Some(2527);
        let v = judge(i);
        assert!(
            v.sentence
                .contains("unknown at the p99 (over 100 more runs a side would be needed)"),
            "{}",
            v.sentence
        );
        // The table marks them: `=` for the same, `~` for unknown, bold for the real.
        let t = table_of(v);
        assert!(t.rows[0][3].text.ends_with(" ="), "{:?}", t.rows[0][3]);
        assert!(t.rows[1][3].strong, "{:?}", t.rows[1][3]);
        assert!(t.rows[2][3].text.ends_with(" ~"), "{:?}", t.rows[2][3]);
        // The interval column says the level it was drawn at: 1 - 0.05/3.
        assert_eq!(t.columns[4].name, "98.3% CI");
    }

    #[test]
    fn unequal_bytes_are_said_with_their_change() {
        let mut i = lazy_png();
        i.bytes.candidate = vec![41915, 41915];
        let v = judge(i.clone());
        assert!(!v.bytes.identical);
        assert!(
            v.sentence
                .contains("at the p99, page bytes \u{2212}10.0 % per run; both runs agree"),
            "{}",
            v.sentence
        );
        // The same on average but not run for run is not identical either.
        i.bytes = SideCounts {
            baseline: vec![100, 200],
            candidate: vec![150, 150],
        };
        let v = judge(i.clone());
        assert!(!v.bytes.identical && v.bytes.change_pct == 0.0);
        assert!(v.sentence.contains("not run for run"), "{}", v.sentence);
        // Page bytes the same, wire payload not: both are said.
        i.bytes = lazy_png().bytes;
        i.wire = Some(SideCounts {
            baseline: vec![1000, 1000],
            candidate: vec![1100, 1100],
        });
        let v = judge(i);
        assert!(
            v.sentence
                .contains("page bytes identical, wire payload +10 % per run"),
            "{}",
            v.sentence
        );
    }

    #[test]
    fn runs_that_disagree_are_named() {
        let mut i = lazy_png();
        // Run 2 moved the median up while the pooled median is significantly down.
        let mut r2 = i.pooled.clone();
        r2[0] = qc(0.5, 31.0, 32.24, (-1.0, 3.0), Verdict::NotSignificant);
        i.rounds[1] = round(2, r2);
        let v = judge(i.clone());
        assert_eq!(v.agree, Some(false));
        assert!(
            v.sentence.contains(
                "; the runs disagree: run 2 moved the median +4.0 % against \u{2212}19 % pooled ("
            ),
            "{}",
            v.sentence
        );
        // A `~` pooled p99 with one run significantly down and the other significantly up.
        let mut i = lazy_png();
        i.rounds[0].quantiles[2] = qc(0.99, 60.0, 48.0, (-15.0, -9.0), Verdict::Lower);
        i.rounds[1].quantiles[2] = qc(0.99, 58.0, 64.0, (2.0, 9.0), Verdict::Higher);
        let v = judge(i);
        assert_eq!(v.agree, Some(false));
        assert_eq!(
            v.disagreements,
            vec!["the p99 moved \u{2212}20 % in run 1 (significant) and +10 % in run 2 (significant)"]
        );
        assert!(v.sentence.contains("no significant change at the p99"));
        // One run real, the other the other way but `~`: still a disagreement.
        let mut i = lazy_png();
        i.rounds[0].quantiles[2] = qc(0.99, 60.0, 48.0, (-15.0, -9.0), Verdict::Lower);
        i.rounds[1].quantiles[2] = qc(0.99, 58.0, 59.0, (-4.0, 6.0), Verdict::NotSignificant);
        assert_eq!(
            judge(i.clone()).disagreements,
            vec!["the p99 moved \u{2212}20 % in run 1 (significant) and +1.7 % in run 2"]
        );
        // Both `~` and opposite: noise, nothing to contradict.
        i.rounds[0].quantiles[2] = qc(0.99, 60.0, 57.0, (-9.0, 4.0), Verdict::NotSignificant);
        assert_eq!(judge(i).agree, Some(true));
    }

    #[test]
    fn one_run_each_has_nothing_to_agree() {
        let mut i = lazy_png();
        i.rounds.truncate(1);
        (i.runs_baseline, i.runs_candidate) = (1, 1);
        let v = judge(i);
        assert_eq!(v.agree, None);
        assert!(v.sentence.contains("; one run each, so nothing to agree ("));
    }

    #[test]
    fn the_document_keeps_numbers_as_numbers_and_the_window_as_null() {
        let mut i = lazy_png();
        i.pooled[2] = qc(
            0.99,
            60.0,
            f64::INFINITY,
            (5.0, f64::INFINITY),
            Verdict::Higher,
        );
        i.rounds = vec![round(1, i.pooled.clone()), round(2, i.pooled.clone())];
        let vs = Verdicts {
            baseline: "stock".into(),
            metric: "inputToPixels",
            method: "m".into(),
            alpha: 0.05,
            noise_bar_pct: 2.0,
            arms: vec![judge(i)],
        };
        let j = vs.to_json();
        let a = &j["arms"][0];
        assert_eq!(a["arm"], "lazy-png");
        assert_eq!(a["quantiles"]["p50"]["significant"], true);
        assert_eq!(a["quantiles"]["p50"]["verdict"], "lower");
        assert!(a["quantiles"]["p50"]["delta_pct"].is_f64());
        assert!(a["quantiles"]["p99"]["candidate"].is_null());
        assert_eq!(a["rounds"].as_array().unwrap().len(), 2);
        assert_eq!(a["bytes"]["identical"], true);
        assert_eq!(a["runs_agree"], true);
        assert!(a["sentence"]
            .as_str()
            .unwrap()
            .starts_with("lazy-png: 19 % off"));
        // A quantile beyond the window reads as such in every format, never `inf`.
        let csv = vs.render(Format::Csv);
        assert!(
            csv.contains("> 2,000ms (window)") && !csv.contains("inf"),
            "{csv}"
        );
        // Markdown pastes as a section: heading, table, then the sentence.
        let md = vs.render(Format::Markdown);
        assert!(md.starts_with("### Verdict: inputToPixels"), "{md}");
        assert!(md.contains("| lazy-png p50 |"), "{md}");
        assert!(md.trim_end().ends_with("n=618 a side)"), "{md}");
    }
}
