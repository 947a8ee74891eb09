//! The matrix file: cases (rows), arms (columns), repeats, timeout, baseline, how a run's
//! figure is read, and the samplers. Every error names the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use arena_report::{toml_input, Exit};
use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use crate::exec::TapSource;
use crate::sampler::{GenericSource, GenericSpec, PhaseMark, ProcessLabel};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    title: Option<String>,
    unit: Option<String>,
    better: Option<Better>,
    repeats: Option<Spanned<u32>>,
    timeout_s: Option<Spanned<f64>>,
    baseline: Option<Spanned<String>>,
    noise_pct: Option<Spanned<f64>>,
    stat: Option<Stat>,
    shuffle_seed: Option<u64>,
    pin: Option<Spanned<Vec<usize>>>,
    workdir: Option<String>,
    case_label: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    figure: RawFigure,
    sampler: Option<RawSampler>,
    #[serde(default)]
    arm: Vec<RawArm>,
    #[serde(default)]
    case: Vec<RawCase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFigure {
    kind: Spanned<FigureKind>,
    source: Option<Spanned<Source>>,
    file: Option<Spanned<String>>,
    pattern: Option<Spanned<String>>,
    group: Option<String>,
    pick: Option<Pick>,
    warmup_s: Option<Spanned<f64>>,
    window_s: Option<Spanned<f64>>,
    windows: Option<Spanned<u32>>,
    per_window: Option<PerWindow>,
    warmup_runs: Option<u32>,
    metric: Option<PilotMetric>,
    event: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSampler {
    enabled: Option<bool>,
    interval_ms: Option<Spanned<f64>>,
    #[serde(default)]
    processes: BTreeMap<String, Spanned<String>>,
    phase_pattern: Option<Spanned<String>>,
    phase_source: Option<Source>,
    phase_file: Option<String>,
    #[serde(default)]
    phase_marks: Vec<RawMark>,
    #[serde(default)]
    generic: Vec<RawGeneric>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMark {
    name: String,
    at_s: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGeneric {
    name: Spanned<String>,
    file: Option<String>,
    command: Option<String>,
    interval_ms: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArm {
    name: Spanned<String>,
    label: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    args: Option<String>,
    setup: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: Spanned<String>,
    label: Option<String>,
    command: Spanned<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    arms: Option<Vec<Spanned<String>>>,
    timeout_s: Option<f64>,
}

/// Which direction is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// What a cell shows of its repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stat {
    Best,
    Median,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FigureKind {
    Regex,
    Steady,
    Wall,
    Pilot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Source {
    Stdout,
    Stderr,
    File,
}

/// Which match of a metric regex is the run's figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pick {
    #[default]
    Last,
    First,
    Max,
    Min,
    Mean,
}

/// How one steady window turns into a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PerWindow {
    /// Mean of the values logged in the window (an fps log that prints fps).
    #[default]
    Mean,
    /// Matching lines per second (a log that prints a line per frame).
    Rate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PilotMetric {
    P50,
    P90,
}

/// Where a figure's lines come from; a file path may hold `{run_dir}`.
#[derive(Debug, Clone, PartialEq)]
pub enum LineSource {
    Stdout,
    Stderr,
    File(String),
}

impl LineSource {
    pub fn tap_source(&self, run_dir: &Path, workdir: Option<&Path>) -> TapSource {
        match self {
            LineSource::Stdout => TapSource::Stdout,
            LineSource::Stderr => TapSource::Stderr,
            LineSource::File(p) => {
                let p = PathBuf::from(p.replace("{run_dir}", &run_dir.to_string_lossy()));
                match workdir {
                    Some(w) if p.is_relative() => TapSource::File(w.join(p)),
                    _ => TapSource::File(p),
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
pub enum FigureSpec {
    /// A metric line: the named group of the matching line(s).
    Regex {
        source: LineSource,
        pattern: Regex,
        group: String,
        pick: Pick,
    },
    /// Steady windows of a periodic log: skip `warmup`, then `windows` windows of `window`;
    /// the run's figure is the mean of the windows, its start figure the first window.
    Steady {
        source: LineSource,
        pattern: Regex,
        group: String,
        warmup: f64,
        window: f64,
        windows: u32,
        per_window: PerWindow,
    },
    /// Wall time of the command in ms, after `warmup_runs` unmeasured runs per case x arm.
    Wall { warmup_runs: u32 },
    /// A nested `arena-perf pilot` run: the case command writes a run folder under
    /// `{run_dir}`, and its warm inputToPaint p50 or p90 (ms) is the figure, of the loops
    /// of one kind of input (`event`, `mousedown`) or of all.
    Pilot {
        metric: PilotMetric,
        event: Option<String>,
    },
}

impl FigureSpec {
    pub fn kind(&self) -> FigureKind {
        match self {
            FigureSpec::Regex { .. } => FigureKind::Regex,
            FigureSpec::Steady { .. } => FigureKind::Steady,
            FigureSpec::Wall { .. } => FigureKind::Wall,
            FigureSpec::Pilot { .. } => FigureKind::Pilot,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Arm {
    pub name: String,
    pub label: String,
    pub env: Vec<(String, String)>,
    pub args: Option<String>,
    pub setup: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub label: String,
    pub command: String,
    pub env: Vec<(String, String)>,
    /// Indices into `MatrixSpec::arms`.
    pub arms: Vec<usize>,
    pub timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct SamplerSpec {
    pub interval: Duration,
    pub labels: Vec<ProcessLabel>,
    pub phase_pattern: Option<(LineSource, Regex)>,
    pub phase_marks: Vec<PhaseMark>,
    pub generic: Vec<GenericSpec>,
}

/// A validated matrix.
#[derive(Debug, Clone)]
pub struct MatrixSpec {
    pub path: PathBuf,
    pub title: Option<String>,
    pub unit: String,
    pub better: Better,
    pub repeats: u32,
    pub baseline: usize,
    pub noise_pct: f64,
    pub stat: Stat,
    pub shuffle_seed: Option<u64>,
    pub pin: Option<Vec<usize>>,
    pub workdir: Option<PathBuf>,
    pub case_label: String,
    pub env: Vec<(String, String)>,
    pub figure: FigureSpec,
    pub sampler: Option<SamplerSpec>,
    pub arms: Vec<Arm>,
    pub cases: Vec<Case>,
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        key: &str,
        msg: impl std::fmt::Display,
    ) -> anyhow::Result<T> {
        let file = self.file.display().to_string();
        Err(toml_input::key_error(&file, self.text, &span, key, msg).into())
    }

    /// A trimmed, non-empty name not among `taken` (`what` is `arm` or `case`).
    fn new_name<'a>(
        &self,
        name: &Spanned<String>,
        what: &str,
        mut taken: impl Iterator<Item = &'a str>,
    ) -> anyhow::Result<String> {
        let n = name.get_ref().trim().to_string();
        let key = format!("{what}.name");
        if n.is_empty() {
            return self.err(name.span(), &key, format!("a {what} name cannot be empty"));
        }
        // Names become folder names; two that map to one folder would overwrite each other.
        let folder = safe_name(&n);
        if let Some(x) = taken.find(|x| *x == n || safe_name(x) == folder) {
            let why = if x == n {
                format!("{what} `{n}` is defined twice")
            } else {
                format!("{what} `{n}` and `{x}` share the run folder name `{folder}`")
            };
            return self.err(name.span(), &key, why);
        }
        Ok(n)
    }

    /// Compiles a regex and checks it has the named group the reader needs.
    fn regex(&self, s: &Spanned<String>, key: &str, group: &str) -> anyhow::Result<Regex> {
        let re = match Regex::new(s.get_ref()) {
            Ok(r) => r,
            Err(e) => return self.err(s.span(), key, format!("invalid regex: {e}")),
        };
        if !re.capture_names().flatten().any(|n| n == group) {
            return self.err(
                s.span(),
                key,
                format!("regex has no named group `{group}` (write `(?P<{group}>...)`)"),
            );
        }
        Ok(re)
    }
}

fn source_of(
    ctx: &Ctx,
    source: Option<Spanned<Source>>,
    file: Option<Spanned<String>>,
    key: &str,
) -> anyhow::Result<LineSource> {
    match (source.as_ref().map(|s| *s.get_ref()), file) {
        (None | Some(Source::Stdout), None) => Ok(LineSource::Stdout),
        (Some(Source::Stderr), None) => Ok(LineSource::Stderr),
        (None | Some(Source::File), Some(f)) => Ok(LineSource::File(f.into_inner())),
        (Some(Source::File), None) => ctx.err(
            source.map(|s| s.span()).unwrap_or(0..0),
            key,
            "source = \"file\" needs `file = \"PATH\"`",
        ),
        (Some(_), Some(f)) => ctx.err(
            f.span(),
            &format!("{key}.file"),
            "`file` needs source = \"file\"",
        ),
    }
}

fn env_vec(m: BTreeMap<String, String>) -> Vec<(String, String)> {
    m.into_iter().collect()
}

/// Reads and validates a matrix file. Errors are [`Exit`] bad input (exit 2).
pub fn load(path: &Path) -> anyhow::Result<MatrixSpec> {
    let text = arena_sys::fifo::read_to_string_announced(path, "matrix file").map_err(|e| {
        Exit::bad_input(format!("{}: cannot read matrix file: {e}", path.display()))
    })?;
    parse(path, &text)
}

/// Parses matrix text; `path` is only used in messages and to resolve `workdir`.
pub fn parse(path: &Path, text: &str) -> anyhow::Result<MatrixSpec> {
    let ctx = Ctx { file: path, text };
    let raw: RawMatrix = toml_input::parse(&path.display().to_string(), text)?;
    if raw.arm.is_empty() {
        return ctx.err(0..0, "arm", "the matrix needs at least one [[arm]]");
    }
    let arms = arms_of(&ctx, raw.arm)?;
    let baseline = baseline_of(&ctx, raw.baseline.as_ref(), &arms)?;
    let default_timeout = default_timeout_of(&ctx, raw.timeout_s.as_ref())?;
    if raw.case.is_empty() {
        return ctx.err(0..0, "case", "the matrix needs at least one [[case]]");
    }
    let cases = cases_of(&ctx, raw.case, &arms, default_timeout)?;
    let kind = *raw.figure.kind.get_ref();
    let figure = figure_of(&ctx, raw.figure)?;
    let sampler = sampler_of(&ctx, raw.sampler)?;

    let repeats = repeats_of(&ctx, raw.repeats.as_ref(), &cases)?;
    let noise_pct = match &raw.noise_pct {
        None => 2.0,
        Some(n) if *n.get_ref() >= 0.0 && n.get_ref().is_finite() => *n.get_ref(),
        Some(n) => return ctx.err(n.span(), "noise_pct", "must be a percentage >= 0"),
    };
    if let Some(p) = &raw.pin {
        if p.get_ref().is_empty() {
            return ctx.err(p.span(), "pin", "list at least one core");
        }
        let cores = crate::machine::online_cores();
        if let Some(bad) = p.get_ref().iter().find(|c| **c >= cores.max(1)) {
            return ctx.err(
                p.span(),
                "pin",
                format!("core {bad} does not exist (this machine has {cores})"),
            );
        }
    }
    let better = raw.better.unwrap_or(match kind {
        FigureKind::Wall | FigureKind::Pilot => Better::Lower,
        _ => Better::Higher,
    });
    let workdir = raw.workdir.map(|w| {
        let w = PathBuf::from(w);
        if w.is_relative() {
            path.parent().unwrap_or(Path::new(".")).join(w)
        } else {
            w
        }
    });
    Ok(MatrixSpec {
        path: path.to_path_buf(),
        title: raw.title,
        unit: raw.unit.unwrap_or_else(|| match kind {
            FigureKind::Wall | FigureKind::Pilot => "ms".into(),
            _ => String::new(),
        }),
        better,
        repeats,
        baseline,
        noise_pct,
        stat: raw.stat.unwrap_or(Stat::Best),
        shuffle_seed: raw.shuffle_seed,
        pin: raw.pin.map(|p| p.into_inner()),
        workdir,
        case_label: raw.case_label.unwrap_or_else(|| "case".into()),
        env: env_vec(raw.env),
        figure,
        sampler,
        arms,
        cases,
    })
}

fn arms_of(ctx: &Ctx<'_>, raw: Vec<RawArm>) -> anyhow::Result<Vec<Arm>> {
    let mut arms: Vec<Arm> = Vec::new();
    for a in raw {
        let name = ctx.new_name(&a.name, "arm", arms.iter().map(|x| x.name.as_str()))?;
        arms.push(Arm {
            label: a.label.unwrap_or_else(|| name.clone()),
            name,
            env: env_vec(a.env),
            args: a.args,
            setup: a.setup,
        });
    }
    Ok(arms)
}

fn baseline_of(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<String>>,
    arms: &[Arm],
) -> anyhow::Result<usize> {
    Ok(match raw {
        None => 0,
        Some(b) => match arms.iter().position(|a| &a.name == b.get_ref()) {
            Some(i) => i,
            None => {
                return ctx.err(
                    b.span(),
                    "baseline",
                    format!("no arm named `{}` (arms: {})", b.get_ref(), names(arms)),
                )
            }
        },
    })
}

/// `repeats` (3 by default), within its range and the runs a file may plan.
fn repeats_of(ctx: &Ctx<'_>, raw: Option<&Spanned<u32>>, cases: &[Case]) -> anyhow::Result<u32> {
    let repeats = match raw {
        None => 3,
        Some(r) if (1..=MAX_REPEATS).contains(r.get_ref()) => *r.get_ref(),
        Some(r) => {
            let msg = format!("{} is out of range 1..={MAX_REPEATS}", r.get_ref());
            return ctx.err(r.span(), "repeats", msg);
        }
    };
    let runs = cells(cases) * u64::from(repeats);
    if runs > MAX_RUNS {
        let span = raw.map_or(0..0, |r| r.span());
        let msg = format!(
            "the matrix makes {runs} runs (cells x repeats), past the {MAX_RUNS} one file may plan"
        );
        return ctx.err(span, "repeats", msg);
    }
    Ok(repeats)
}

/// The cells of a matrix: each case's arms.
fn cells(cases: &[Case]) -> u64 {
    cases.iter().map(|c| c.arms.len() as u64).sum()
}

impl MatrixSpec {
    /// The runs the matrix makes: every cell, `repeats` times.
    pub fn planned_runs(&self) -> u64 {
        cells(&self.cases) * u64::from(self.repeats)
    }
}

/// Repeats of each cell a matrix file may ask for.
pub const MAX_REPEATS: u32 = 1000;

/// Runs (cells x repeats) one matrix file may plan.
pub const MAX_RUNS: u64 = 100_000;

/// The longest a run may be given, s: a day (`Duration` of 1e300 s panicked).
pub const MAX_TIMEOUT_S: f64 = 86_400.0;

fn timeout_ok(t: f64) -> bool {
    t > 0.0 && t <= MAX_TIMEOUT_S
}

const TIMEOUT_RANGE: &str = "must be a number of seconds above 0 and at most 86400 (a day)";

fn default_timeout_of(ctx: &Ctx<'_>, raw: Option<&Spanned<f64>>) -> anyhow::Result<f64> {
    Ok(match raw {
        None => 60.0,
        Some(t) if timeout_ok(*t.get_ref()) => *t.get_ref(),
        Some(t) => return ctx.err(t.span(), "timeout_s", TIMEOUT_RANGE),
    })
}

fn cases_of(
    ctx: &Ctx<'_>,
    raw: Vec<RawCase>,
    arms: &[Arm],
    default_timeout: f64,
) -> anyhow::Result<Vec<Case>> {
    let mut cases: Vec<Case> = Vec::new();
    for c in raw {
        let name = ctx.new_name(&c.name, "case", cases.iter().map(|x| x.name.as_str()))?;
        if c.command.get_ref().trim().is_empty() {
            return ctx.err(c.command.span(), "case.command", "the command is empty");
        }
        let arm_idx = match &c.arms {
            None => (0..arms.len()).collect(),
            Some(list) => {
                let mut v = Vec::new();
                for a in list {
                    match arms.iter().position(|x| &x.name == a.get_ref()) {
                        Some(i) => v.push(i),
                        None => {
                            return ctx.err(
                                a.span(),
                                "case.arms",
                                format!(
                                    "case `{name}` names arm `{}`, which is not defined (arms: {})",
                                    a.get_ref(),
                                    names(arms)
                                ),
                            )
                        }
                    }
                }
                v
            }
        };
        let timeout = match c.timeout_s {
            Some(t) if timeout_ok(t) => t,
            Some(_) => return ctx.err(c.name.span(), "case.timeout_s", TIMEOUT_RANGE),
            None => default_timeout,
        };
        cases.push(Case {
            label: c.label.unwrap_or_else(|| name.clone()),
            name,
            command: c.command.into_inner(),
            env: env_vec(c.env),
            arms: arm_idx,
            timeout: Duration::from_secs_f64(timeout),
        });
    }

    Ok(cases)
}

fn figure_of(ctx: &Ctx<'_>, f: RawFigure) -> anyhow::Result<FigureSpec> {
    let kind = *f.kind.get_ref();
    if kind != FigureKind::Pilot && kind != FigureKind::Wall && f.metric.is_some() {
        return ctx.err(
            f.kind.span(),
            "figure.metric",
            "only used by figure kind `pilot`",
        );
    }
    if let Some(e) = f.event.as_ref().filter(|_| kind != FigureKind::Pilot) {
        return ctx.err(e.span(), "figure.event", "only used by figure kind `pilot`");
    }
    let unused = |present: bool, key: &str| unused_key(ctx, &f, present, key);
    match kind {
        FigureKind::Regex | FigureKind::Steady => pattern_figure(ctx, f),
        FigureKind::Wall => {
            unused(f.pattern.is_some(), "pattern")?;
            unused(f.source.is_some() || f.file.is_some(), "source")?;
            unused(f.pick.is_some(), "pick")?;
            unused(f.windows.is_some() || f.window_s.is_some(), "windows")?;
            unused(f.metric.is_some(), "metric")?;
            Ok(FigureSpec::Wall {
                warmup_runs: f.warmup_runs.unwrap_or(0),
            })
        }
        FigureKind::Pilot => {
            unused(f.pattern.is_some(), "pattern")?;
            unused(f.source.is_some() || f.file.is_some(), "source")?;
            unused(f.pick.is_some(), "pick")?;
            unused(f.windows.is_some() || f.window_s.is_some(), "windows")?;
            unused(f.warmup_runs.is_some(), "warmup_runs")?;
            let event = match &f.event {
                Some(e) if e.get_ref().trim().is_empty() => {
                    return ctx.err(
                        e.span(),
                        "figure.event",
                        "names no kind of input (`mousedown`, `keydown`)",
                    )
                }
                e => e.as_ref().map(|e| e.get_ref().clone()),
            };
            Ok(FigureSpec::Pilot {
                metric: f.metric.unwrap_or(PilotMetric::P50),
                event,
            })
        }
    }
}

/// A key given that the figure's kind does not use: an error at the figure's `kind`.
fn unused_key(ctx: &Ctx<'_>, f: &RawFigure, present: bool, key: &str) -> anyhow::Result<()> {
    if !present {
        return Ok(());
    }
    let kind = *f.kind.get_ref();
    ctx.err(
        f.kind.span(),
        &format!("figure.{key}"),
        format!("not used by figure kind `{kind:?}`").to_lowercase(),
    )
}

/// A figure read from lines that match a `pattern`: `regex` or `steady`.
fn pattern_figure(ctx: &Ctx<'_>, f: RawFigure) -> anyhow::Result<FigureSpec> {
    let kind = *f.kind.get_ref();
    let group = f.group.clone().unwrap_or_else(|| "value".to_string());
    let Some(pattern) = &f.pattern else {
        return ctx.err(
            f.kind.span(),
            "figure.pattern",
            "this figure kind needs a regex `pattern`",
        );
    };
    let re = ctx.regex(pattern, "figure.pattern", &group)?;
    let unused = |present: bool, key: &str| unused_key(ctx, &f, present, key);
    if kind == FigureKind::Regex {
        unused(f.warmup_s.is_some(), "warmup_s")?;
        unused(f.window_s.is_some(), "window_s")?;
        unused(f.windows.is_some(), "windows")?;
        unused(f.per_window.is_some(), "per_window")?;
        unused(f.warmup_runs.is_some(), "warmup_runs")?;
        let source = source_of(ctx, f.source.clone(), f.file.clone(), "figure.source")?;
        return Ok(FigureSpec::Regex {
            source,
            pattern: re,
            group,
            pick: f.pick.unwrap_or_default(),
        });
    }
    unused(f.pick.is_some(), "pick")?;
    unused(f.warmup_runs.is_some(), "warmup_runs")?;
    let windows = match &f.windows {
        None => 3,
        Some(w) if *w.get_ref() >= 1 => *w.get_ref(),
        Some(w) => return ctx.err(w.span(), "figure.windows", "must be at least 1"),
    };
    Ok(FigureSpec::Steady {
        source: source_of(ctx, f.source.clone(), f.file.clone(), "figure.source")?,
        pattern: re,
        group,
        warmup: seconds_of(ctx, &f.warmup_s, "figure.warmup_s", 0.0, true)?,
        window: seconds_of(ctx, &f.window_s, "figure.window_s", 2.0, false)?,
        windows,
        per_window: f.per_window.unwrap_or_default(),
    })
}

/// Generic samplers; each runs at the sampler's interval (ms) unless it names its own.
fn generic_of(
    ctx: &Ctx<'_>,
    raw: Vec<RawGeneric>,
    interval: f64,
) -> anyhow::Result<Vec<GenericSpec>> {
    let mut generic = Vec::new();
    for g in raw {
        let source = match (g.file, g.command) {
            (Some(f), None) => GenericSource::File(PathBuf::from(f)),
            (None, Some(c)) => GenericSource::Command(c),
            _ => {
                return ctx.err(
                    g.name.span(),
                    "sampler.generic",
                    "give exactly one of `file` or `command`",
                )
            }
        };
        generic.push(GenericSpec {
            name: g.name.into_inner(),
            source,
            interval: Duration::from_secs_f64(g.interval_ms.unwrap_or(interval).max(1.0) / 1000.0),
        });
    }
    Ok(generic)
}

/// A number of seconds: `def` when absent; positive (or zero when `zero_ok`) when given.
fn seconds_of(
    ctx: &Ctx<'_>,
    v: &Option<Spanned<f64>>,
    key: &str,
    def: f64,
    zero_ok: bool,
) -> anyhow::Result<f64> {
    match v {
        None => Ok(def),
        Some(s) => {
            let x = *s.get_ref();
            if x <= MAX_TIMEOUT_S && (x > 0.0 || (zero_ok && x == 0.0)) {
                Ok(x)
            } else {
                let msg = "must be a positive number of seconds, at most 86400 (a day)";
                ctx.err(s.span(), key, msg)
            }
        }
    }
}

/// The sampler: on by default, at 10 Hz.
fn sampler_of(ctx: &Ctx<'_>, raw: Option<RawSampler>) -> anyhow::Result<Option<SamplerSpec>> {
    Ok(match raw {
        Some(RawSampler {
            enabled: Some(false),
            ..
        }) => None,
        None => Some(SamplerSpec {
            interval: Duration::from_millis(100),
            labels: Vec::new(),
            phase_pattern: None,
            phase_marks: Vec::new(),
            generic: Vec::new(),
        }),
        Some(s) => {
            let interval = match &s.interval_ms {
                None => 100.0,
                Some(i) if *i.get_ref() >= 1.0 && i.get_ref().is_finite() => *i.get_ref(),
                Some(i) => {
                    return ctx.err(i.span(), "sampler.interval_ms", "must be at least 1 ms")
                }
            };
            let mut labels = Vec::new();
            for (label, re) in s.processes {
                let key = format!("sampler.processes.{label}");
                match Regex::new(re.get_ref()) {
                    Ok(r) => labels.push(ProcessLabel { label, cmdline: r }),
                    Err(e) => return ctx.err(re.span(), &key, format!("invalid regex: {e}")),
                }
            }
            let phase_pattern = match &s.phase_pattern {
                None => None,
                Some(p) => {
                    let re = ctx.regex(p, "sampler.phase_pattern", "phase")?;
                    let src = match (s.phase_source, s.phase_file) {
                        (Some(Source::Stderr), _) => LineSource::Stderr,
                        (_, Some(f)) => LineSource::File(f),
                        (Some(Source::File), None) => {
                            return ctx.err(
                                p.span(),
                                "sampler.phase_source",
                                "source = \"file\" needs `phase_file`",
                            )
                        }
                        _ => LineSource::Stdout,
                    };
                    Some((src, re))
                }
            };
            let generic = generic_of(ctx, s.generic, interval)?;
            Some(SamplerSpec {
                interval: Duration::from_secs_f64(interval / 1000.0),
                labels,
                phase_pattern,
                phase_marks: s
                    .phase_marks
                    .into_iter()
                    .map(|m| PhaseMark {
                        at_s: m.at_s,
                        name: m.name,
                    })
                    .collect(),
                generic,
            })
        }
    })
}

fn names(arms: &[Arm]) -> String {
    arms.iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl MatrixSpec {
    /// Keeps only the named cases and/or arms (`--only`); the baseline arm stays so
    /// percentages still have a reference. Unknown names are bad input.
    pub fn restrict(&mut self, only: &[String]) -> anyhow::Result<()> {
        if only.is_empty() {
            return Ok(());
        }
        let mut keep_cases: Vec<bool> = vec![false; self.cases.len()];
        let mut keep_arms: Vec<bool> = vec![false; self.arms.len()];
        let (mut any_case, mut any_arm) = (false, false);
        for o in only {
            let c = self.cases.iter().position(|c| &c.name == o);
            let a = self.arms.iter().position(|a| &a.name == o);
            if let Some(i) = c {
                keep_cases[i] = true;
                any_case = true;
            }
            if let Some(i) = a {
                keep_arms[i] = true;
                any_arm = true;
            }
            if c.is_none() && a.is_none() {
                return Err(Exit::bad_input(format!(
                    "--only {o}: no case or arm of that name in {} (cases: {}; arms: {})",
                    self.path.display(),
                    self.cases
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    names(&self.arms)
                ))
                .into());
            }
        }
        if !any_case {
            keep_cases.iter_mut().for_each(|k| *k = true);
        }
        if !any_arm {
            keep_arms.iter_mut().for_each(|k| *k = true);
        }
        keep_arms[self.baseline] = true;
        let mut it = keep_cases.iter();
        self.cases.retain(|_| *it.next().unwrap_or(&false));
        for c in &mut self.cases {
            c.arms.retain(|a| keep_arms[*a]);
        }
        Ok(())
    }

    /// The shell command of one case x arm: `{args}` is replaced by the arm's args, or the
    /// args are appended; `{case}`, `{arm}`, `{repeat}` (1-based) and `{run_dir}` are
    /// replaced too.
    pub fn command_for(&self, case: &Case, arm: &Arm, repeat: u32, run_dir: &Path) -> String {
        let args = arm.args.clone().unwrap_or_default();
        let cmd = if case.command.contains("{args}") {
            case.command.replace("{args}", &args)
        } else if args.is_empty() {
            case.command.clone()
        } else {
            format!("{} {}", case.command, args)
        };
        expand(&cmd, case, arm, repeat, run_dir)
    }

    /// The environment of one run: the file's, then the arm's, then the case's (later wins),
    /// values expanded like the command.
    pub fn env_for(
        &self,
        case: &Case,
        arm: &Arm,
        repeat: u32,
        run_dir: &Path,
    ) -> Vec<(String, String)> {
        self.env
            .iter()
            .chain(&arm.env)
            .chain(&case.env)
            .map(|(k, v)| (k.clone(), expand(v, case, arm, repeat, run_dir)))
            .collect()
    }
}

/// Replaces `{case}`, `{arm}`, `{repeat}` and `{run_dir}`.
fn expand(text: &str, case: &Case, arm: &Arm, repeat: u32, run_dir: &Path) -> String {
    text.replace("{case}", &case.name)
        .replace("{arm}", &arm.name)
        .replace("{repeat}", &repeat.to_string())
        .replace("{run_dir}", &run_dir.to_string_lossy())
}

/// Keeps file names portable: `[A-Za-z0-9._-]`, everything else `_`.
pub fn safe_name(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with('.') {
        format!("_{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
title = "replay"
unit = "fps"
baseline = "dev"
repeats = 3

[figure]
kind = "steady"
pattern = 'fps=(?P<value>[0-9.]+)'
warmup_s = 1.0
window_s = 2.0
windows = 3

[[arm]]
name = "dev"
label = "dev (pull)"

[[arm]]
name = "inproc"
args = "--transport inproc"

[[case]]
name = "Espryt"
command = "replay --backend espryt"
"#;

    fn err_of(text: &str) -> String {
        format!("{:#}", parse(Path::new("m.toml"), text).unwrap_err())
    }

    #[test]
    fn good_file_parses() {
        let m = parse(Path::new("m.toml"), GOOD).unwrap();
        assert_eq!(m.arms.len(), 2);
        assert_eq!(m.arms[0].label, "dev (pull)");
        assert_eq!(m.better, Better::Higher);
        assert_eq!(m.cases[0].arms, vec![0, 1]);
        let c = m.command_for(&m.cases[0], &m.arms[1], 1, Path::new("/r"));
        assert_eq!(c, "replay --backend espryt --transport inproc");
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let text = GOOD.replace("repeats = 3", "repeats = 3\nrepeets = 4");
        let e = err_of(&text);
        assert!(e.contains("m.toml:6:"), "{e}");
        assert!(e.contains("repeets"), "{e}");
    }

    #[test]
    fn counts_and_times_are_bounded_naming_key_and_line() {
        // A billion repeats aborted on a 24 GB allocation; 1e300 s panicked in Duration.
        let cases = [
            (
                "repeats = 3",
                "repeats = 1000000000",
                "m.toml:5:",
                "out of range 1..=1000",
            ),
            (
                "repeats = 3",
                "repeats = 0",
                "m.toml:5:",
                "out of range 1..=1000",
            ),
            (
                "repeats = 3",
                "repeats = 1000\ntimeout_s = 1e300",
                "m.toml:6:",
                "at most 86400",
            ),
            (
                "repeats = 3",
                "repeats = 3\ntimeout_s = -1",
                "m.toml:6:",
                "above 0",
            ),
        ];
        for (from, to, at, want) in cases {
            let e = err_of(&GOOD.replace(from, to));
            assert!(e.contains(at) && e.contains(want), "{to}: {e}");
        }
        let many: String = (0..60)
            .map(|i| format!("[[case]]\nname = \"c{i}\"\ncommand = \"x\"\n"))
            .collect();
        let e = err_of(&format!(
            "{}{many}",
            GOOD.replace("repeats = 3", "repeats = 1000")
        ));
        assert!(
            e.contains("m.toml:5:") && e.contains("runs (cells x repeats), past the 100000"),
            "{e}"
        );
    }

    #[test]
    fn missing_group_names_key_and_line() {
        let text = GOOD.replace("(?P<value>[0-9.]+)", "([0-9.]+)");
        let e = err_of(&text);
        assert!(e.contains("m.toml:9:"), "{e}");
        assert!(e.contains("figure.pattern") && e.contains("`value`"), "{e}");
    }

    #[test]
    fn case_naming_missing_arm() {
        let text = format!("{GOOD}arms = [\"dev\", \"shm\"]\n");
        let e = err_of(&text);
        assert!(e.contains("m.toml:25:"), "{e}");
        assert!(e.contains("case.arms") && e.contains("`shm`"), "{e}");
    }

    #[test]
    fn names_that_share_a_folder_are_refused() {
        let text = GOOD.replace(
            "name = \"inproc\"",
            "name = \"in proc\"\n[[arm]]\nname = \"in_proc\"",
        );
        let e = err_of(&text);
        assert!(e.contains("m.toml:21:"), "{e}");
        assert!(
            e.contains("arm.name") && e.contains("share the run folder name `in_proc`"),
            "{e}"
        );
    }

    #[test]
    fn only_keeps_baseline() {
        let mut m = parse(Path::new("m.toml"), GOOD).unwrap();
        m.restrict(&["inproc".to_string()]).unwrap();
        assert_eq!(m.cases[0].arms, vec![0, 1]);
        assert!(m.restrict(&["nope".to_string()]).is_err());
    }
}
