//! The tables the field notes print, built from a finished (or interrupted) matrix. They
//! render what [`crate::reduce`] decided (figures and noise verdicts) and compute none.

use std::collections::BTreeMap;

use arena_report::{fmt_count, fmt_pct_change, Cell, Column, Format, Table};
use arena_stats::Verdict;

use crate::matrix::{MatrixResult, RunResult, RunStatus};
use crate::reduce::{reduce, CellSummary, CellVerdict, Reduced, ALPHA};
use crate::spec::{Better, MatrixSpec, Stat};

/// A figure as the notes write it: 115.2, 1,052, 0.734.
pub fn fmt_figure(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 1000.0 {
        fmt_count(v.round() as i64)
    } else if v.abs() >= 1.0 || v == 0.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn group_failures(failures: &[String]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for f in failures {
        match out.iter_mut().find(|(s, _)| s == f) {
            Some(e) => e.1 += 1,
            None => out.push((f.clone(), 1)),
        }
    }
    out
}

/// The text of one cell: `91.1 (69.8) −21 %`, `111.9 (71.1) ~`, failures after a comma
/// (`, 1 of 3 died: exit 134`), or only the failure when no run gave a figure.
pub fn cell_text(s: &CellSummary, v: CellVerdict) -> String {
    let failures = group_failures(&s.failures);
    let Some(value) = s.value else {
        if s.runs == 0 {
            return "not run".into();
        }
        return failures
            .iter()
            .map(|(f, n)| {
                if *n == s.runs {
                    f.clone()
                } else {
                    format!("{f} ({n} of {})", s.runs)
                }
            })
            .collect::<Vec<_>>()
            .join("; ");
    };
    let mut t = fmt_figure(value);
    if s.at_least {
        t = format!("\u{2265} {t}");
    }
    if let Some(st) = s.start {
        t.push_str(&format!(" ({})", fmt_figure(st)));
    }
    match v {
        CellVerdict::Compared(c) if c.verdict.is_real() && c.delta_pct.is_finite() => {
            t.push_str(&format!(" {}", fmt_pct_change(c.delta_pct)))
        }
        CellVerdict::Compared(c) if c.verdict.is_real() => t.push_str(" slower"),
        CellVerdict::Compared(c) if c.verdict == Verdict::Same => t.push_str(" ="),
        CellVerdict::Compared(_) => t.push_str(" ~"),
        CellVerdict::Baseline | CellVerdict::None => {}
    }
    for (f, n) in failures {
        t.push_str(&format!(", {n} of {} {f}", s.runs));
    }
    t
}

/// A row per case, a column per arm: [`matrix_table_of`] the matrix's [`reduce`].
pub fn matrix_table(m: &MatrixResult) -> Table {
    matrix_table_of(m, &reduce(m))
}

/// A row per case, a column per arm, rendering the cells and verdicts of `r`.
pub fn matrix_table_of(m: &MatrixResult, r: &Reduced) -> Table {
    let arms: Vec<usize> = {
        let mut a: Vec<usize> = m.cells.iter().map(|c| c.1).collect();
        a.sort_unstable();
        a.dedup();
        a
    };
    let cases: Vec<usize> = {
        let mut c: Vec<usize> = m.cells.iter().map(|c| c.0).collect();
        c.dedup();
        c
    };
    let mut cols = vec![Column::left(m.case_label.clone())];
    cols.extend(arms.iter().map(|&a| Column::right(m.arm_labels[a].clone())));
    let n_text = runs_per_cell(m);
    let mut t = Table::new(cols).with_title(title_of(m, &n_text));
    let mut fewer_windows = 0;
    let mut failed = 0;
    for &c in &cases {
        let mut row = vec![Cell::text(m.case_labels[c].clone())];
        for &a in &arms {
            let Some(cell) = r.cell(c, a) else {
                row.push(Cell::text("-"));
                continue;
            };
            let s = &cell.summary;
            failed += s.failures.len();
            let text = cell_text(s, cell.verdict);
            row.push(match s.value {
                Some(x) => Cell::num(text, x),
                None => Cell::text(text),
            });
        }
        fewer_windows += m
            .runs
            .iter()
            .filter(|r| r.case == c && !r.warmup)
            .filter(|r| r.figure.as_ref().is_some_and(|f| f.note.is_some()))
            .count();
        t.push_row(row);
    }
    rule_notes(&mut t, m, r, &n_text);
    run_notes(&mut t, m, fewer_windows, failed);
    t
}

/// Runs per cell as run, not as planned: an interrupted matrix has fewer (`3`, `2-3`).
fn runs_per_cell(m: &MatrixResult) -> String {
    let counts: Vec<usize> = m
        .cells
        .iter()
        .map(|&(c, a)| m.runs_of(c, a).count())
        .collect();
    let n_max = counts.iter().copied().max().unwrap_or(0);
    let n_min = counts.iter().copied().min().unwrap_or(0);
    if n_min == n_max {
        n_max.to_string()
    } else {
        format!("{n_min}-{n_max}")
    }
}

fn title_of(m: &MatrixResult, n_text: &str) -> String {
    let stat = match m.stat {
        Stat::Best => format!("best of {n_text}"),
        Stat::Median => format!("median of {n_text}"),
    };
    let unit = if m.unit.is_empty() {
        String::new()
    } else {
        format!(", {}", m.unit)
    };
    let start = if m.figure_kind == "steady" {
        " (start figure in parentheses)"
    } else {
        ""
    };
    format!(
        "{}{stat}{unit}{start}, % against {}",
        m.title
            .as_ref()
            .map(|t| format!("{t}: "))
            .unwrap_or_default(),
        m.arm_labels[m.baseline]
    )
}

/// What `~` means and which test applied.
fn rule_notes(t: &mut Table, m: &MatrixResult, r: &Reduced, n_text: &str) {
    let better = match m.better {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    };
    t.note(format!(
        "{}{better}; n = {n_text} runs per cell",
        if m.unit.is_empty() {
            String::new()
        } else {
            format!("unit {}; ", m.unit)
        },
    ));
    let family = format!(
        "{} verdicts held at {} together (Bonferroni: each at {:.4})",
        r.family, ALPHA, r.rule.alpha
    );
    if r.cells.iter().any(|c| c.by_loops) {
        t.note(format!(
            "pilot cells decided on their runs' loops by compare's rule (each run's quantile with its loops' spread, plus the spread between runs; unanswered loops beyond the window): a change is real when its interval excludes 0 and it passes the {} % threshold; `=` its interval lies within the threshold, `~` undecided; {family}",
            r.rule.noise_bar_pct
        ));
        t.note("`≥ X`: a run's quantile reached an unanswered loop, so the figure is its lower bound (the answered loops and the window under it)");
        return;
    }
    t.note(format!(
        "`~` = change under the {} % noise bar; {family}",
        r.rule.noise_bar_pct
    ));
    if r.u_test_applies {
        t.note(format!(
            "`~` also when a Mann-Whitney U test of the two cells' runs gives p >= {:.4}",
            r.rule.alpha
        ));
    } else {
        t.note(format!(
            "{n_text} runs per cell are too few for a Mann-Whitney U test at {:.4}; only the bar applies",
            r.rule.alpha
        ));
    }
}

/// A generic sampler whose readings gave no number: said, not left to a count in
/// run-meta.json (a FIFO or `/dev/zero` as its file is never read, every interval a miss).
fn sampler_notes(t: &mut Table, m: &MatrixResult) {
    let mut by_name: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for g in m.runs.iter().flat_map(|r| &r.generic) {
        let e = by_name.entry(&g.name).or_default();
        e.0 += u64::from(g.misses);
        e.1 += u64::from(g.misses) + g.points.len() as u64;
    }
    for (name, (missed, readings)) in by_name.into_iter().filter(|e| e.1 .0 > 0) {
        t.note(format!(
            "sampler `{name}`: {missed} of {readings} readings gave no number (a file that is not a regular file, or a command that failed or printed none); see sampler-{name}.csv"
        ));
    }
}

/// Runs that fell short, an interruption, and the machine the runs ran on.
fn run_notes(t: &mut Table, m: &MatrixResult, fewer_windows: usize, failed: usize) {
    if fewer_windows > 0 {
        t.note(format!(
            "{fewer_windows} runs ended before all their steady windows (see run-meta.json)"
        ));
    }
    let measured = m.runs.iter().filter(|r| !r.warmup).count();
    if failed > 0 {
        t.note(format!(
            "{failed} of {measured} runs gave no figure; each run folder keeps stderr.tail"
        ));
    }
    sampler_notes(t, m);
    if let Some(src) = &m.phase_source {
        let none = m
            .runs
            .iter()
            .filter(|r| !r.warmup && r.phase_lines == Some(0))
            .count();
        if none > 0 {
            t.note(format!(
                "phases: no line of {src} matched the phase pattern in {none} of {measured} runs, so they have no CPU by phase (a file that is missing or not a regular file, a FIFO or a device, is not read)"
            ));
        }
    }
    if m.interrupted {
        t.note(format!(
            "interrupted: {} of {} planned runs finished",
            m.runs.len(),
            m.planned_runs
        ));
    }
    let mach = &m.machine;
    t.note(format!(
        "{} cores{}{}{}; runs in {}",
        mach.cores,
        mach.governor
            .as_ref()
            .map(|g| format!(", governor {g}"))
            .unwrap_or_default(),
        mach.loadavg
            .map(|l| format!(", load {:.2} at start", l[0]))
            .unwrap_or_default(),
        mach.pinned
            .as_ref()
            .map(|p| format!(
                ", pinned to cores {}",
                p.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ))
            .unwrap_or_default(),
        m.out_dir.display()
    ));
}

/// A row per cell: its busiest thread (range over runs) and the whole tree's CPU.
pub fn cpu_table(m: &MatrixResult) -> Table {
    let mut t = Table::new(vec![
        Column::left(m.case_label.clone()),
        Column::left("arm"),
        Column::left("top thread (process)"),
        Column::right("top thread, % of one core"),
        Column::right("tree CPU, % of one core"),
        Column::right("threads"),
        Column::right("n"),
    ])
    .with_title("CPU per run, sampled from /proc (100 % = one core busy)");
    for &(c, a) in &m.cells {
        let runs: Vec<_> = m.runs_of(c, a).filter_map(|r| r.cpu.as_ref()).collect();
        if runs.is_empty() {
            continue;
        }
        let tops: Vec<_> = runs.iter().filter_map(|c| c.threads.first()).collect();
        let mut names: BTreeMap<String, usize> = BTreeMap::new();
        for top in &tops {
            *names
                .entry(format!("{} ({})", top.name, top.process))
                .or_default() += 1;
        }
        let name = names
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(s, _)| s.clone())
            .unwrap_or_default();
        let pcts: Vec<f64> = tops.iter().map(|t| t.pct_of_core).collect();
        let lo = pcts.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = pcts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = pcts.iter().sum::<f64>() / pcts.len().max(1) as f64;
        let range = if pcts.is_empty() {
            "-".to_string()
        } else if (hi - lo).abs() < 0.5 {
            format!("{lo:.0} %")
        } else {
            format!("{lo:.0}-{hi:.0} %")
        };
        let tree: Vec<f64> = runs.iter().map(|c| c.tree_pct_of_core).collect();
        let tree_mean = tree.iter().sum::<f64>() / tree.len() as f64;
        let threads = runs.iter().map(|c| c.threads.len()).max().unwrap_or(0);
        t.push_row(vec![
            Cell::text(m.case_labels[c].clone()),
            Cell::text(m.arm_labels[a].clone()),
            Cell::text(name),
            Cell::num(range, mean),
            Cell::num(format!("{tree_mean:.0} %"), tree_mean),
            Cell::num(threads.to_string(), threads as f64),
            Cell::num(runs.len().to_string(), runs.len() as f64),
        ]);
    }
    // Over all runs together: a run that died at start-up has a span of a few ms, which
    // the sampler's start-up cost alone would dominate.
    let (used, span) = m
        .runs
        .iter()
        .filter_map(|r| r.cpu.as_ref())
        .fold((0.0, 0.0), |(u, s), c| (u + c.sampler_cpu_s, s + c.span_s));
    let samplers = if span > 0.0 { 100.0 * used / span } else { 0.0 };
    t.note(format!(
        "top thread: busiest thread of each run, range over runs; the sampler itself used {samplers:.2} % of one core over all runs"
    ));
    t
}

/// Every thread of every measured run (`--threads`).
pub fn threads_table(m: &MatrixResult) -> Table {
    let mut t = Table::new(vec![
        Column::left(m.case_label.clone()),
        Column::left("arm"),
        Column::right("run"),
        Column::left("process (pid)"),
        Column::left("thread (tid)"),
        Column::right("% of one core"),
        Column::right("CPU s"),
    ])
    .with_title("per-thread CPU (100 % = one core busy)");
    for r in m.runs.iter().filter(|r| !r.warmup) {
        let Some(cpu) = &r.cpu else { continue };
        for th in &cpu.threads {
            t.push_row(vec![
                Cell::text(m.case_labels[r.case].clone()),
                Cell::text(m.arm_labels[r.arm].clone()),
                Cell::num((r.repeat + 1).to_string(), f64::from(r.repeat + 1)),
                Cell::text(format!("{} ({})", th.process, th.pid)),
                Cell::text(format!("{} ({})", th.name, th.tid)),
                Cell::num(format!("{:.1} %", th.pct_of_core), th.pct_of_core),
                Cell::num(format!("{:.2}", th.cpu_s), th.cpu_s),
            ]);
        }
    }
    t
}

/// (case, arm, phase)
type PhaseKey = (usize, usize, String);

/// Per-process CPU by phase: a row per cell x phase, a column per process label, mean over
/// runs, and the total against the machine's cores.
pub fn phases_table(m: &MatrixResult) -> Option<Table> {
    let mut labels: Vec<String> = Vec::new();
    let mut rows: Vec<(PhaseKey, BTreeMap<String, Vec<f64>>)> = Vec::new();
    for r in m.runs.iter().filter(|r| !r.warmup) {
        let Some(cpu) = &r.cpu else { continue };
        // Sum processes sharing a label within the run first.
        let mut per: BTreeMap<(String, String), f64> = BTreeMap::new();
        for p in &cpu.phases {
            *per.entry((p.phase.clone(), p.process.clone())).or_default() += p.pct_of_core;
            if !labels.contains(&p.process) {
                labels.push(p.process.clone());
            }
        }
        for ((phase, proc_), pct) in per {
            let key = (r.case, r.arm, phase);
            let idx = match rows.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    rows.push((key, BTreeMap::new()));
                    rows.len() - 1
                }
            };
            rows[idx].1.entry(proc_).or_default().push(pct);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let budget = m.machine.cores * 100;
    let mut cols = vec![
        Column::left(m.case_label.clone()),
        Column::left("arm"),
        Column::left("phase"),
    ];
    cols.extend(labels.iter().map(|l| Column::right(l.clone())));
    cols.push(Column::right(format!("total of {budget}%")));
    let mut t =
        Table::new(cols).with_title("CPU per process by phase, % of one core, mean over runs");
    for ((c, a, phase), per) in rows {
        let mut row = vec![
            Cell::text(m.case_labels[c].clone()),
            Cell::text(m.arm_labels[a].clone()),
            Cell::text(phase),
        ];
        let mut total = 0.0;
        for l in &labels {
            match per.get(l) {
                Some(v) if !v.is_empty() => {
                    let mean = v.iter().sum::<f64>() / v.len() as f64;
                    total += mean;
                    row.push(Cell::num(format!("{mean:.0}%"), mean));
                }
                _ => row.push(Cell::text("-")),
            }
        }
        row.push(Cell::num(format!("{total:.0}%"), total));
        t.push_row(row);
    }
    Some(t)
}

/// One finished run, as its progress line says it.
pub fn run_line(spec: &MatrixSpec, r: &RunResult) -> String {
    let what = match (&r.status, &r.figure) {
        (RunStatus::Ok, Some(f)) => format!("{} {}", fmt_figure(f.value), spec.unit),
        (s, _) => s.short(),
    };
    format!(
        "{} x {} {}{}: {what} ({:.1} s)",
        spec.cases[r.case].name,
        spec.arms[r.arm].name,
        if r.warmup { "warm-up " } else { "r" },
        r.repeat + 1,
        r.wall_s
    )
}

/// Every table of a matrix, named: the matrix, CPU, phases when sampled, threads when asked.
pub fn all_tables(result: &MatrixResult, threads: bool) -> Vec<(&'static str, Table)> {
    let mut tables = vec![("matrix", matrix_table(result)), ("cpu", cpu_table(result))];
    if let Some(p) = phases_table(result) {
        tables.push(("phases", p));
    }
    if threads {
        tables.push(("threads", threads_table(result)));
    }
    tables
}

/// The tables in `format`, one after another.
pub fn render_tables(tables: &[(&str, Table)], format: Format) -> String {
    match format {
        // CSV is one table: the matrix (the others are in tables.md and the run folders).
        Format::Csv => tables[0].1.render(Format::Csv),
        f => {
            let parts: Vec<String> = tables.iter().map(|(_, t)| t.render(f)).collect();
            parts.join("\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::tests::best;

    #[test]
    fn cells_read_like_the_notes() {
        let s = CellSummary {
            ok: vec![(91.1, Some(69.8))],
            failures: vec![],
            value: Some(91.1),
            start: Some(69.8),
            runs: 1,
            at_least: false,
        };
        assert_eq!(
            cell_text(&s, best(&[91.1], &[115.2], 2.0)),
            "91.1 (69.8) \u{2212}21 %"
        );
        assert_eq!(cell_text(&s, CellVerdict::Baseline), "91.1 (69.8)");
        assert_eq!(
            cell_text(&s, best(&[101.0], &[100.0], 2.0)),
            "91.1 (69.8) ~"
        );
        let died = CellSummary {
            ok: vec![(10.0, None), (12.0, None)],
            failures: vec!["died: exit 134".into()],
            value: Some(12.0),
            start: None,
            runs: 3,
            at_least: false,
        };
        assert_eq!(
            cell_text(&died, CellVerdict::Baseline),
            "12.0, 1 of 3 died: exit 134"
        );
        let all = CellSummary {
            ok: vec![],
            failures: vec!["timeout".into(), "timeout".into()],
            value: None,
            start: None,
            runs: 2,
            at_least: false,
        };
        assert_eq!(cell_text(&all, CellVerdict::None), "timeout");
    }
}
