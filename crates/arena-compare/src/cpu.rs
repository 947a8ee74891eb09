//! The notes' CPU table: one row per phase of each run, one column per sampled process
//! (% of one core over the phase), and the whole machine's busy time as "total of N00 %",
//! N the cores. `pilot`, `ab` and `compare --cpu` print it.

use arena_report::{Cell, Column, Table};
use arena_run::{Run, RunCpu};

fn pct_cell(pct: f64) -> Cell {
    Cell::num(format!("{pct:.1} %"), pct)
}

/// The CPU table of whole runs, named as `compare --by run` names them.
pub fn runs_cpu_table(runs: &[Run]) -> Option<Table> {
    let named: Vec<_> = crate::group::run_names(runs)
        .into_iter()
        .map(|(n, r)| (n, r.meta.cpu.as_ref()))
        .collect();
    cpu_table(&named)
}

/// The CPU table of `runs` (named as `compare --by run` names them); `None` when no run
/// has CPU figures. A process that exited reads `exited` in the phases after it went, and
/// a note says when.
pub fn cpu_table(runs: &[(String, Option<&RunCpu>)]) -> Option<Table> {
    let with: Vec<(&str, &RunCpu)> = runs
        .iter()
        .filter_map(|(n, c)| c.map(|c| (n.as_str(), c)))
        .collect();
    let first = with.first()?.1;
    let mut labels: Vec<&str> = Vec::new();
    for (_, c) in &with {
        for p in &c.processes {
            if !labels.contains(&p.label.as_str()) {
                labels.push(&p.label);
            }
        }
    }
    let many = runs.len() > 1;
    let mut columns = Vec::new();
    if many {
        columns.push(Column::left("run"));
    }
    columns.push(Column::left("phase"));
    columns.push(Column::right("s"));
    columns.push(Column::right("n"));
    columns.extend(labels.iter().map(|l| Column::right(*l)));
    columns.push(Column::right(format!("total of {}00 %", first.cores)));
    let samples: Vec<String> = with.iter().map(|(_, c)| c.samples.to_string()).collect();
    let mut t = Table::new(columns).with_title(format!(
        "CPU by process and phase, % of one core (sampled every {} ms, n = {} samples; s: the \
         phase's seconds, n: its sampling intervals)",
        first.interval_ms,
        samples.join(", ")
    ));
    for (name, c) in &with {
        for (i, ph) in c.phases.iter().enumerate() {
            let mut row = Vec::new();
            if many {
                row.push(Cell::text(*name));
            }
            row.push(Cell::text(&ph.name));
            row.push(Cell::num(format!("{:.1}", ph.span_s), ph.span_s));
            row.push(Cell::num(ph.intervals.to_string(), ph.intervals as f64));
            for l in &labels {
                let cell = match c.processes.iter().find(|p| p.label == *l) {
                    None => Cell::text("-"),
                    Some(p) if p.exited_at_s.is_some_and(|at| at <= ph.start_s) => {
                        Cell::text("exited")
                    }
                    Some(p) => pct_cell(p.pct_of_core[i]),
                };
                row.push(cell);
            }
            row.push(pct_cell(ph.machine_pct));
            t.push_row(row);
        }
        notes(&mut t, name, c, many);
    }
    t.note(format!(
        "total: every process on the machine, out of {} cores x 100 %; fixture bots, fixture \
         session: this process's fixture-bot-*, fixture-edt-* threads; chromium: the browser \
         and its children",
        first.cores
    ));
    Some(t)
}

fn notes(t: &mut Table, run: &str, c: &RunCpu, many: bool) {
    let prefix = if many {
        format!("{run}: ")
    } else {
        String::new()
    };
    for p in &c.processes {
        let Some(at) = p.exited_at_s else { continue };
        let phase = c
            .phases
            .iter()
            .rev()
            .find(|ph| ph.start_s <= at)
            .map_or("before sampling", |ph| ph.name.as_str());
        t.note(format!(
            "{prefix}{} exited {at:.1} s into the run (within {} ms before), in {phase}: its \
             figures are until then",
            p.label, c.interval_ms
        ));
    }
    t.note(format!(
        "{prefix}the sampler used {:.3} s of CPU (in this process, inside the total only)",
        c.sampler_cpu_s
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_report::Format;
    use arena_run::{CpuPhase, CpuProcess, Run};

    fn run_with(cpu: RunCpu) -> Run {
        let mut r = crate::synthetic::run("stock", &[10.0, 12.0], 100);
        r.meta.cpu = Some(cpu);
        r
    }

    fn phase(name: &str, start_s: f64, span_s: f64) -> CpuPhase {
        CpuPhase {
            name: name.into(),
            start_s,
            span_s,
            intervals: (span_s * 10.0) as u64,
            machine_pct: 150.0,
        }
    }

    fn cpu() -> RunCpu {
        let proc_ = |label: &str, pct: [f64; 2], exited_at_s| CpuProcess {
            label: label.into(),
            source: "name".into(),
            pids: vec![7],
            exited_at_s,
            cpu_s: pct.iter().map(|p| p / 100.0).collect(),
            pct_of_core: pct.to_vec(),
        };
        RunCpu {
            interval_ms: 100.0,
            samples: 31,
            cores: 2,
            sampler_cpu_s: 0.01,
            phases: vec![phase("setup", 0.0, 1.0), phase("clicks", 1.0, 2.0)],
            processes: vec![
                proc_("fixture", [2.0, 95.5], None),
                proc_("sleep", [0.1, 0.0], Some(0.9)),
            ],
        }
    }

    #[test]
    fn the_markdown_table_has_a_row_per_phase_and_says_who_exited() {
        let run = run_with(cpu());
        let t = cpu_table(&[("stock, run 1".into(), run.meta.cpu.as_ref())]).unwrap();
        let md = t.render(Format::Markdown);
        let lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(
            lines[0], "| phase | s | n | fixture | sleep | total of 200 % |",
            "{md}"
        );
        assert!(lines[1].starts_with("|---"), "{md}");
        // Header, rule, one row per phase.
        assert_eq!(lines.len(), 2 + 2, "{md}");
        assert!(
            lines[3].contains("95.5 %") && lines[3].contains("exited"),
            "{md}"
        );
        assert!(lines[2].contains("0.1 %"), "{md}");
        assert!(md.contains("sleep exited 0.9 s into the run"), "{md}");
        assert!(
            md.contains("n = 31 samples") && md.contains("every 100 ms"),
            "{md}"
        );
    }

    #[test]
    fn several_runs_get_a_run_column_and_runs_without_figures_none() {
        let (a, mut b) = (run_with(cpu()), run_with(cpu()));
        b.meta.cpu = None;
        assert!(cpu_table(&[("b".into(), b.meta.cpu.as_ref())]).is_none());
        let t = cpu_table(&[
            ("a".into(), a.meta.cpu.as_ref()),
            ("b".into(), b.meta.cpu.as_ref()),
            ("c".into(), a.meta.cpu.as_ref()),
        ])
        .unwrap();
        assert_eq!(t.columns[0].name, "run");
        assert_eq!(t.rows.len(), 4);
    }
}
