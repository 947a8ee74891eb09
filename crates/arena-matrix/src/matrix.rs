//! Runs a matrix: every case x arm x repeat in interleaved order, each run in its own folder,
//! failures recorded as data, an interrupt ending the matrix with what finished.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::exec::{execute, Finished, Launch, Outcome, Tap};
use crate::figure::{read_figure, read_pilot, Figure};
use crate::machine::Machine;
use crate::sampler::{
    cpu_by_phase, GenericSeries, PhaseCpu, PhaseMark, ProcessCpu, ThreadCpu, TreeCpu,
    TreeSamplerConfig,
};
use crate::schedule::{plan, Slot};
use crate::spec::{safe_name, Arm, Better, Case, FigureSpec, MatrixSpec, Stat};

/// What a run produced, as a table cell sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    /// Exited non-zero or killed by a signal (`died: exit 134`).
    Died(String),
    Timeout,
    /// Ran to the end but the figure could not be read; the detail says why.
    NoFigure(String),
    /// The arm's setup command failed, so the run was not started.
    SetupFailed(String),
    /// Could not be started at all.
    NotStarted(String),
}

impl RunStatus {
    /// The words a cell shows.
    pub fn short(&self) -> String {
        match self {
            RunStatus::Ok => "ok".into(),
            RunStatus::Died(d) => d.clone(),
            RunStatus::Timeout => "timeout".into(),
            RunStatus::NoFigure(_) => "no figure".into(),
            RunStatus::SetupFailed(d) => format!("setup failed: {d}"),
            RunStatus::NotStarted(d) => format!("not started: {d}"),
        }
    }
}

/// CPU of one run's process tree, as sampled.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RunCpu {
    pub interval_ms: f64,
    pub samples: u32,
    pub span_s: f64,
    pub tree_pct_of_core: f64,
    pub sampler_cpu_s: f64,
    pub threads: Vec<ThreadCpu>,
    pub processes: Vec<ProcessCpu>,
    pub phases: Vec<PhaseCpu>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub case: usize,
    pub arm: usize,
    pub repeat: u32,
    pub warmup: bool,
    pub dir: PathBuf,
    pub command: String,
    pub status: RunStatus,
    pub outcome: Option<Outcome>,
    pub figure: Option<Figure>,
    pub wall_s: f64,
    pub started_unix_s: f64,
    pub loadavg_at_start: Option<[f64; 3]>,
    pub cpu: Option<RunCpu>,
    pub phase_marks: Vec<PhaseMark>,
    /// Lines the sampler's phase pattern matched (`None` without one).
    pub phase_lines: Option<usize>,
    pub generic: Vec<GenericSeries>,
    pub stragglers_killed: usize,
    /// Time the matrix spent around this run that was not the run itself, ms.
    pub bookkeeping_ms: f64,
}

/// The whole matrix: its shape, the machine, every run in execution order.
#[derive(Debug, Clone, Serialize)]
pub struct MatrixResult {
    pub title: Option<String>,
    pub file: PathBuf,
    pub unit: String,
    pub better: Better,
    pub stat: Stat,
    pub noise_pct: f64,
    pub repeats: u32,
    pub shuffle_seed: Option<u64>,
    pub case_label: String,
    pub cases: Vec<String>,
    pub case_labels: Vec<String>,
    pub arms: Vec<String>,
    pub arm_labels: Vec<String>,
    /// (case, arm) pairs that were planned, so a cell with no finished run still shows.
    pub cells: Vec<(usize, usize)>,
    pub baseline: usize,
    pub figure_kind: String,
    pub machine: Machine,
    pub out_dir: PathBuf,
    pub planned_runs: usize,
    pub runs: Vec<RunResult>,
    pub interrupted: bool,
    /// Where the sampler's phase lines are read (`stdout`, `stderr`, `file PATH`).
    pub phase_source: Option<String>,
}

impl MatrixResult {
    /// How the matrix ended: interrupted (by a signal or `interrupted`), or with no run
    /// giving a figure, is an error with its exit code, naming where the runs are.
    pub fn ending(&self, interrupted: bool, out_dir: &Path) -> anyhow::Result<()> {
        if self.interrupted || interrupted {
            return Err(arena_report::Exit::new(
                arena_report::ExitKind::Interrupted,
                format!(
                    "interrupted: {} of {} runs finished, written to {}",
                    self.runs.len(),
                    self.planned_runs,
                    out_dir.display()
                ),
            )
            .into());
        }
        let measured: Vec<_> = self.runs.iter().filter(|r| !r.warmup).collect();
        if !measured.is_empty() && measured.iter().all(|r| r.figure.is_none()) {
            return Err(arena_report::Exit::new(
                arena_report::ExitKind::TargetFailed,
                format!(
                    "no run gave a figure; see stderr.tail in the run folders under {}",
                    out_dir.display()
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Measured (non-warm-up) runs of one cell.
    pub fn runs_of(&self, case: usize, arm: usize) -> impl Iterator<Item = &RunResult> {
        self.runs
            .iter()
            .filter(move |r| r.case == case && r.arm == arm && !r.warmup)
    }
}

pub struct MatrixOptions {
    pub out_dir: PathBuf,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn write_json(path: &Path, v: &impl Serialize) {
    if let Ok(f) = File::create(path) {
        let mut w = std::io::BufWriter::new(f);
        let _ = serde_json::to_writer_pretty(&mut w, v);
        let _ = w.write_all(b"\n");
    }
}

fn write_run_files(r: &RunResult) {
    write_json(&r.dir.join("run-meta.json"), r);
    let Some(cpu) = &r.cpu else { return };
    if let Ok(mut f) = File::create(r.dir.join("threads.csv")) {
        let _ = writeln!(f, "pid,process,tid,thread,cpu_s,span_s,pct_of_core");
        for t in &cpu.threads {
            let _ = writeln!(
                f,
                "{},{},{},{},{:.3},{:.3},{:.2}",
                t.pid,
                csv_field(&t.process),
                t.tid,
                csv_field(&t.name),
                t.cpu_s,
                t.span_s,
                t.pct_of_core
            );
        }
    }
    if let Ok(mut f) = File::create(r.dir.join("processes.csv")) {
        let _ = writeln!(f, "pid,ppid,process,comm,cpu_s,span_s,pct_of_core");
        for p in &cpu.processes {
            let _ = writeln!(
                f,
                "{},{},{},{},{:.3},{:.3},{:.2}",
                p.pid,
                p.ppid,
                csv_field(&p.label),
                csv_field(&p.comm),
                p.cpu_s,
                p.span_s,
                p.pct_of_core
            );
        }
    }
    if !cpu.phases.is_empty() {
        if let Ok(mut f) = File::create(r.dir.join("phases.csv")) {
            let _ = writeln!(f, "phase,process,pid,cpu_s,span_s,pct_of_core");
            for p in &cpu.phases {
                let _ = writeln!(
                    f,
                    "{},{},{},{:.3},{:.3},{:.2}",
                    csv_field(&p.phase),
                    csv_field(&p.process),
                    p.pid,
                    p.cpu_s,
                    p.span_s,
                    p.pct_of_core
                );
            }
        }
    }
    for g in &r.generic {
        if let Ok(mut f) = File::create(r.dir.join(format!("sampler-{}.csv", safe_name(&g.name)))) {
            let _ = writeln!(f, "t_s,value");
            for (t, v) in &g.points {
                let _ = writeln!(f, "{t:.3},{v}");
            }
        }
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Runs the matrix. Returns after every planned run, or early when `interrupt` is set (the
/// run in flight is killed and not counted). Each finished run is appended to
/// `runs.jsonl` in the output folder as it ends, so even a killed matrix leaves its data.
pub fn run_matrix(
    spec: &MatrixSpec,
    opts: &MatrixOptions,
    interrupt: &AtomicBool,
    mut progress: impl FnMut(&RunResult, usize, usize),
) -> MatrixResult {
    let pairs: Vec<(usize, usize)> = spec
        .cases
        .iter()
        .enumerate()
        .flat_map(|(ci, c)| c.arms.iter().map(move |&a| (ci, a)))
        .collect();
    let warmups = match spec.figure {
        FigureSpec::Wall { warmup_runs } => warmup_runs,
        _ => 0,
    };
    let order: Vec<Slot> = plan(&pairs, warmups, spec.repeats, spec.shuffle_seed);
    let _ = std::fs::create_dir_all(&opts.out_dir);
    let machine = Machine::now(spec.pin.clone());
    let mut result = MatrixResult {
        title: spec.title.clone(),
        file: spec.path.clone(),
        unit: spec.unit.clone(),
        better: spec.better,
        stat: spec.stat,
        noise_pct: spec.noise_pct,
        repeats: spec.repeats,
        shuffle_seed: spec.shuffle_seed,
        case_label: spec.case_label.clone(),
        cases: spec.cases.iter().map(|c| c.name.clone()).collect(),
        case_labels: spec.cases.iter().map(|c| c.label.clone()).collect(),
        arms: spec.arms.iter().map(|a| a.name.clone()).collect(),
        arm_labels: spec.arms.iter().map(|a| a.label.clone()).collect(),
        cells: pairs.clone(),
        baseline: spec.baseline,
        figure_kind: format!("{:?}", spec.figure.kind()).to_lowercase(),
        machine,
        out_dir: opts.out_dir.clone(),
        planned_runs: order.len(),
        runs: Vec::with_capacity(order.len()),
        interrupted: false,
        phase_source: phase_source_of(spec),
    };
    let mut jsonl = OpenOptions::new()
        .create(true)
        .append(true)
        .open(opts.out_dir.join("runs.jsonl"))
        .ok();
    let total = order.len();
    let mut last_end = Instant::now();
    for (i, slot) in order.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            result.interrupted = true;
            break;
        }
        let mut r = run_one(spec, opts, slot, interrupt);
        if matches!(r.outcome, Some(Outcome::Interrupted)) || interrupt.load(Ordering::Relaxed) {
            result.interrupted = true;
            break;
        }
        write_run_files(&r);
        if let Some(f) = jsonl.as_mut() {
            let _ = serde_json::to_writer(&mut *f, &r);
            let _ = f.write_all(b"\n");
        }
        let now = Instant::now();
        r.bookkeeping_ms = ((now - last_end).as_secs_f64() - r.wall_s).max(0.0) * 1000.0;
        last_end = now;
        progress(&r, i + 1, total);
        result.runs.push(r);
    }
    write_json(&opts.out_dir.join("matrix.json"), &result);
    result
}

fn run_one(
    spec: &MatrixSpec,
    opts: &MatrixOptions,
    slot: &Slot,
    interrupt: &AtomicBool,
) -> RunResult {
    let case = &spec.cases[slot.case];
    let arm = &spec.arms[slot.arm];
    let dir = run_dir_of(opts, slot, case, arm);
    let command = spec.command_for(case, arm, slot.repeat + 1, &dir);
    let mut env = spec.env_for(case, arm, slot.repeat + 1, &dir);
    env.push(("ARENA_CASE".into(), case.name.clone()));
    env.push(("ARENA_ARM".into(), arm.name.clone()));
    let mut r = RunResult {
        case: slot.case,
        arm: slot.arm,
        repeat: slot.repeat,
        warmup: slot.warmup,
        dir: dir.clone(),
        command: command.clone(),
        status: RunStatus::Ok,
        outcome: None,
        figure: None,
        wall_s: 0.0,
        started_unix_s: unix_now(),
        loadavg_at_start: crate::machine::loadavg(),
        cpu: None,
        phase_marks: Vec::new(),
        phase_lines: None,
        generic: Vec::new(),
        stragglers_killed: 0,
        bookkeeping_ms: 0.0,
    };

    if let Err(outcome) = run_setup(spec, case, arm, &dir, &env, interrupt) {
        r.status = RunStatus::SetupFailed(outcome.describe());
        r.outcome = Some(outcome);
        return r;
    }

    let (taps, figure_tap, phase_tap) = taps_of(spec, &dir);
    let launch = launch_of(spec, case, command, env, &dir, taps);
    let mut fin = execute(&launch, interrupt);
    r.wall_s = fin.wall_s;
    r.stragglers_killed = fin.stragglers_killed;
    r.generic = std::mem::take(&mut fin.generic);
    let outcome = fin.outcome.take().unwrap_or(Outcome::Exited { code: -1 });
    let marks = phase_marks_of(spec, &fin, phase_tap);
    r.phase_lines = phase_tap.map(|i| fin.hits.get(i).map_or(0, Vec::len));
    r.cpu = fin.cpu.take().map(|tree| cpu_of(tree, &marks));
    r.phase_marks = marks;
    r.status = status_of(&outcome);
    r.outcome = Some(outcome);
    if r.status == RunStatus::Ok {
        let read = match &spec.figure {
            FigureSpec::Pilot { metric, event } => read_pilot(&dir, *metric, event.as_deref()),
            f => read_figure(
                f,
                figure_tap
                    .and_then(|i| fin.hits.get(i))
                    .map(Vec::as_slice)
                    .unwrap_or(&[]),
                figure_tap
                    .and_then(|i| fin.cut.get(i))
                    .copied()
                    .unwrap_or_default(),
                fin.wall_s,
            ),
        };
        match read {
            Ok(f) => r.figure = Some(f),
            Err(why) => r.status = RunStatus::NoFigure(why),
        }
    }
    r
}

/// The arm's setup command, if it has one; its outcome when it failed.
fn run_setup(
    spec: &MatrixSpec,
    case: &Case,
    arm: &Arm,
    dir: &Path,
    env: &[(String, String)],
    interrupt: &AtomicBool,
) -> Result<(), Outcome> {
    let Some(setup) = &arm.setup else {
        return Ok(());
    };
    let launch = Launch {
        command: setup.replace("{run_dir}", &dir.to_string_lossy()),
        env: env.to_vec(),
        workdir: spec.workdir.clone(),
        run_dir: dir.to_path_buf(),
        log_prefix: "setup-".into(),
        timeout: case.timeout,
        pin: None,
        taps: Vec::new(),
        tree: None,
        generic: Vec::new(),
    };
    let outcome = execute(&launch, interrupt)
        .outcome
        .unwrap_or(Outcome::Exited { code: -1 });
    if outcome.success() {
        Ok(())
    } else {
        Err(outcome)
    }
}

/// The measured command, sampled as the matrix file says.
fn launch_of(
    spec: &MatrixSpec,
    case: &Case,
    command: String,
    env: Vec<(String, String)>,
    dir: &Path,
    taps: Vec<Tap>,
) -> Launch {
    Launch {
        command,
        env,
        workdir: spec.workdir.clone(),
        run_dir: dir.to_path_buf(),
        log_prefix: String::new(),
        timeout: case.timeout,
        pin: spec.pin.clone(),
        taps,
        tree: spec.sampler.as_ref().map(|s| TreeSamplerConfig {
            interval: s.interval,
            labels: s.labels.clone(),
        }),
        generic: spec
            .sampler
            .as_ref()
            .map(|s| s.generic.clone())
            .unwrap_or_default(),
    }
}

/// `runs/<case>/<arm>/r<N>` (`w<N>` for warm-ups), created, canonical when it can be.
fn run_dir_of(opts: &MatrixOptions, slot: &Slot, case: &Case, arm: &Arm) -> PathBuf {
    let dir = opts
        .out_dir
        .join("runs")
        .join(safe_name(&case.name))
        .join(safe_name(&arm.name))
        .join(format!(
            "{}{}",
            if slot.warmup { "w" } else { "r" },
            slot.repeat + 1
        ));
    let _ = std::fs::create_dir_all(&dir);
    dir.canonicalize().unwrap_or(dir)
}

/// Taps: the figure's metric lines first, then the phase marks; with their indexes.
fn taps_of(spec: &MatrixSpec, dir: &Path) -> (Vec<Tap>, Option<usize>, Option<usize>) {
    let mut taps: Vec<Tap> = Vec::new();
    let figure_tap = match &spec.figure {
        FigureSpec::Regex {
            source,
            pattern,
            group,
            ..
        }
        | FigureSpec::Steady {
            source,
            pattern,
            group,
            ..
        } => {
            taps.push(Tap {
                source: source.tap_source(dir, spec.workdir.as_deref()),
                regex: pattern.clone(),
                value_group: Some(group.clone()),
                text_group: None,
                time_group: pattern
                    .capture_names()
                    .flatten()
                    .any(|n| n == "t")
                    .then(|| "t".to_string()),
            });
            Some(0)
        }
        _ => None,
    };
    let phase_tap = spec
        .sampler
        .as_ref()
        .and_then(|s| s.phase_pattern.as_ref())
        .map(|(src, re)| {
            taps.push(Tap {
                source: src.tap_source(dir, spec.workdir.as_deref()),
                regex: re.clone(),
                value_group: None,
                text_group: Some("phase".into()),
                time_group: None,
            });
            taps.len() - 1
        });
    (taps, figure_tap, phase_tap)
}

/// Where the sampler's phase lines are read (`stdout`, `stderr`, `phase_file PATH`).
fn phase_source_of(spec: &MatrixSpec) -> Option<String> {
    let (src, _) = spec.sampler.as_ref()?.phase_pattern.as_ref()?;
    Some(match src {
        crate::spec::LineSource::Stdout => "stdout".to_string(),
        crate::spec::LineSource::Stderr => "stderr".to_string(),
        crate::spec::LineSource::File(p) => format!("phase_file {p}"),
    })
}

/// The file's fixed phase marks, then the ones the command printed.
fn phase_marks_of(spec: &MatrixSpec, fin: &Finished, phase_tap: Option<usize>) -> Vec<PhaseMark> {
    let mut marks: Vec<PhaseMark> = spec
        .sampler
        .as_ref()
        .map(|s| s.phase_marks.clone())
        .unwrap_or_default();
    if let Some(i) = phase_tap {
        for h in fin.hits.get(i).into_iter().flatten() {
            if let Some(name) = &h.text {
                marks.push(PhaseMark {
                    at_s: h.t,
                    name: name.clone(),
                });
            }
        }
    }
    marks
}

fn cpu_of(tree: TreeCpu, marks: &[PhaseMark]) -> RunCpu {
    let phases = if marks.is_empty() {
        Vec::new()
    } else {
        cpu_by_phase(&tree, marks)
    };
    RunCpu {
        interval_ms: tree.interval_ms,
        samples: tree.samples,
        span_s: tree.span_s,
        tree_pct_of_core: tree.tree_pct_of_core,
        sampler_cpu_s: tree.sampler_cpu_s,
        threads: tree.threads,
        processes: tree.processes,
        phases,
    }
}

fn status_of(outcome: &Outcome) -> RunStatus {
    match outcome {
        Outcome::Exited { code: 0 } => RunStatus::Ok,
        Outcome::Exited { .. } | Outcome::Signaled { .. } => RunStatus::Died(outcome.describe()),
        Outcome::Timeout => RunStatus::Timeout,
        Outcome::Interrupted => RunStatus::Died("interrupted".into()),
        Outcome::SpawnFailed { error } => RunStatus::NotStarted(error.clone()),
    }
}
