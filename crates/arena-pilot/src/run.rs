//! One run of one arm, as stages in order: start the target (and the capture), open a
//! fresh page with the recorder, prepare it (canvas, setup steps, clear, oracle), click,
//! collect what the page still holds, stop everything, pair, build and write the run.
//! The run folder is written whatever happens after the page opened.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{anyhow, Context, Result};
use arena_browser::{Browser, CanvasRect, Page};
use arena_report::{Exit, ExitKind};
use arena_run::outputs::{is_run_folder, refuse_overwrite, Output, Replacement};
use arena_run::{AnswerInfo, IdleWindow, LoopSettings, Run, RunStatus, SocketSource, Warning};
use arena_wire::RunCapture;

use crate::cancel::Cancel;
use crate::click::{Clicker, Timing};
use crate::collect::{drain_into, Collected, ToolCost};
use crate::cpu::CpuWatch;
use crate::idle::idle_stage;
use crate::oracle::resolve_answer;
use crate::pair::{pair, PairConfig, Paired};
use crate::plan::{BrowserOptions, Gesture, Plan, TargetPlan};
use crate::prepare::{check_viewport, read_browser, run_setup, wait_canvas, Kept};
use crate::progress::{OnProgress, Progress};
use crate::scenario::Hold;
use crate::stall::{heard, Stall, StallWatch};
use crate::target::{target_gone, Target};
use crate::trace;
use crate::typist::{resolve_typing_answer, type_all};
use crate::write::{build_run, events_of, RunContext};

/// One run of one arm.
pub struct RunRequest<'a> {
    pub plan: &'a Plan<'a>,
    pub out: OutDir,
    pub progress: OnProgress<'a>,
    pub cancel: &'a Cancel,
}

/// Where run folders go.
#[derive(Debug, Clone)]
pub enum OutDir {
    /// `<base>/<UTC start>-<arm>`.
    Under(PathBuf),
    /// Exactly this folder.
    Exactly(PathBuf),
}

impl OutDir {
    /// `pilot --out DIR [--force]`: where the run goes, `--out` checked first (before any
    /// browser or target starts) against the `pilot` file it reads, staged beside the old
    /// run when `--force` replaces one. Without `--out`, under `reports/`.
    pub fn for_flag(
        out: Option<&Path>,
        force: bool,
        pilot: Option<&Path>,
    ) -> Result<(OutDir, Option<Replacement>)> {
        let Some(dir) = out else {
            return Ok((OutDir::Under(PathBuf::from("reports")), None));
        };
        refuse_overwrite(pilot, &[Output::folder("--out", dir)])?;
        if !(dir.is_dir() && is_run_folder(dir)) {
            return Ok((OutDir::Exactly(dir.to_path_buf()), None));
        }
        if !force {
            return Err(Exit::bad_input(format!(
                "--out {}: the folder already holds a run; give --force to replace it whole, \
                 or another --out",
                dir.display()
            ))
            .into());
        }
        let r = Replacement::stage(dir)?;
        Ok((OutDir::Exactly(r.staging().to_path_buf()), Some(r)))
    }

    fn dir(&self, started: SystemTime, arm: &str) -> PathBuf {
        match self {
            OutDir::Under(base) => arena_run::default_run_dir(base, started, arm),
            OutDir::Exactly(d) => d.clone(),
        }
    }
}

/// A finished (possibly partial) run and where it was written.
pub struct Outcome {
    pub run: Run,
    pub dir: PathBuf,
    pub cost: ToolCost,
    /// The plan's drags and hovers, each accounted for (also in the run folder's
    /// `gestures.json`, `moves.csv`, `frames_behind.csv`).
    pub gestures: Vec<crate::moves::GestureLoops>,
}

impl Outcome {
    /// The error the command should end with: none for a complete run, exit 130 for an
    /// interrupted one, exit 3 when the target or browser died or the target went silent.
    pub fn exit_error(&self) -> Option<anyhow::Error> {
        let m = &self.run.meta;
        let kind = match m.status {
            RunStatus::Complete => return None,
            RunStatus::Interrupted => ExitKind::Interrupted,
            RunStatus::TargetFailed | RunStatus::TargetStalled => ExitKind::TargetFailed,
        };
        Some(anyhow!(Exit::new(
            kind,
            format!(
                "{}; partial run written to {}",
                m.status_message.as_deref().unwrap_or("run ended early"),
                self.dir.display()
            )
        )))
    }
}

/// What a run gathers from the page, stage by stage.
struct Gathered {
    col: Collected,
    cost: ToolCost,
    /// How the records are judged: the plan's rules, then the page's oracle and canvas.
    judge: PairConfig,
    answer: Option<AnswerInfo>,
    inputs_dispatched: u64,
    clicks_made: u64,
    /// Records are collected only after the clear on attach: setup is not measured.
    cleared: bool,
    /// Why the page's oracle last could not judge an input, in its own words.
    last_verdict: Option<String>,
    /// The trace of the click loop, while it runs (`--trace`).
    tracing: Option<trace::Tracing>,
    /// Why the trace could not be taken or written: a warning, the run itself stands.
    trace_problem: Option<String>,
    /// What the page recorded before the clear (load and setup), and what its ring
    /// overwrote of it: a population of its own, never paired.
    setup: Option<Kept>,
    /// The idle window (`--idle`).
    idle: Option<IdleWindow>,
    /// CPU by process, sampled from the page's opening to the end of the last phase.
    cpu: Option<CpuWatch>,
    /// The page's animation-frame interval, measured before the clicks.
    frame_interval_ms: Option<f64>,
    /// The phase pause the inputs went out with, ms.
    phase_jitter_ms: f64,
    /// The click loop ended because the target went silent.
    stalled: bool,
    /// The person's browser as the page saw it.
    browser: Option<arena_run::BrowserSettings>,
    /// The gestures made after the clicks, accounted for.
    gestures: Vec<crate::moves::GestureLoops>,
    /// The page clock on the host's clocks, measured before the clicks.
    clock: Option<arena_browser::ClockMap>,
}

impl Gathered {
    /// Nothing gathered yet, judged by `plan`'s rules, with the CPU sampler if one runs.
    fn new(plan: &Plan<'_>, cpu: Option<CpuWatch>) -> Gathered {
        Gathered {
            col: Collected::default(),
            cost: ToolCost::default(),
            judge: plan.pair_config(),
            answer: None,
            inputs_dispatched: 0,
            clicks_made: 0,
            cleared: false,
            last_verdict: None,
            tracing: None,
            trace_problem: None,
            setup: None,
            idle: None,
            cpu,
            frame_interval_ms: None,
            phase_jitter_ms: 0.0,
            stalled: false,
            browser: None,
            clock: None,
            gestures: Vec::new(),
        }
    }
}

impl Gathered {
    /// From now on the run is in phase `name` (for the CPU table).
    fn phase(&mut self, name: &str) {
        if let Some(c) = self.cpu.as_mut() {
            c.mark(name);
        }
    }
}

/// How a run ended, for its `run.json`.
struct Ending {
    status: RunStatus,
    message: Option<String>,
}

/// A browser of its own for one run: launched, told, run, closed.
pub async fn run_one(browser: &BrowserOptions, req: RunRequest<'_>) -> Result<Outcome> {
    let browser = browser.launch().await?;
    (req.progress)(Progress::Browser {
        version: browser.version(),
        pid: browser.pid(),
    });
    let res = run_arm(&browser, req).await;
    let _ = browser.close().await;
    res
}

/// Runs one arm in a fresh page of `browser` (and a fresh fixture server when the target
/// is the built-in fixture). Errors before the page opened (no target, bad capture) and
/// bad input found on the page return `Err`; anything else is a written, partial run.
pub async fn run_arm(browser: &Browser, req: RunRequest<'_>) -> Result<Outcome> {
    let wall = Instant::now();
    let started = SystemTime::now();
    let plan = req.plan;
    let mut target = Target::start(plan, req.cancel).await?;
    let staging = match arena_run::Staging::new(&req.out.dir(started, &plan.arm_name)) {
        Ok(s) => s,
        Err(e) => {
            target.stop().await;
            return Err(e);
        }
    };
    let dir = staging.dir().to_path_buf();
    let capture = match start_capture(plan, &target, &dir) {
        Ok(c) => c,
        Err(e) => {
            target.stop().await;
            return Err(e);
        }
    };
    // Everything from here on ends in a written run folder.
    let (cpu, cpu_problem) = start_cpu(plan, &target, browser);
    let page = target.open_page(browser, plan.recorder.clone()).await;
    let mut g = Gathered::new(plan, cpu);
    let body = match &page {
        Ok(p) => measure(p, &req, &target, &mut g).await,
        Err(e) => Err(anyhow!("opening {}: {e:#}", target.url)),
    };
    let cpu = g.cpu.take().map(CpuWatch::finish);
    let ending = ending(body, req.cancel, g.stalled);
    if let (Ok(p), Ok(_)) = (&page, &ending) {
        collect_last(p, plan, &mut g).await;
    }
    let traced = match (&page, g.tracing.take()) {
        (Ok(p), Some(t)) => collect_trace(p, t, &mut g).await,
        _ => None,
    };
    if let Ok(p) = page {
        let _ = tokio::time::timeout(Duration::from_secs(2), browser.close_page(p)).await;
    }
    target.stop().await;
    let ending = ending?;
    let wire = capture.map(RunCapture::finish);
    let mut run = assemble(plan, browser, &target, started, ending, &mut g);
    run.meta.cpu = cpu;
    if let Some(why) = cpu_problem {
        run.meta.warnings.push(Warning::new("cpu", why));
    }
    add_wire(&mut run, wire);
    add_trace(&mut run, &dir, plan, traced, &mut g);
    run.write(&dir)
        .with_context(|| format!("writing the run folder {}", dir.display()))?;
    crate::moves_out::write(&dir, &g.gestures)
        .with_context(|| format!("writing the gestures into {}", dir.display()))?;
    // The run carries its gestures as its folder will give them to a later `compare`, so
    // `ab` and `demo` compare what `compare` of the same folders would.
    run.gestures = arena_run::gestures::load_gestures(&dir)
        .with_context(|| format!("reading back the gestures of {}", dir.display()))?;
    let dir = staging.publish()?;
    g.cost.wall_ms = wall.elapsed().as_secs_f64() * 1e3;
    Ok(Outcome {
        run,
        dir,
        cost: g.cost,
        gestures: std::mem::take(&mut g.gestures),
    })
}

/// The capture's figures, or why there are none, into `run`.
fn add_wire(run: &mut Run, wire: Option<Result<arena_run::WireFigures>>) {
    match wire {
        Some(Ok(figures)) => run.meta.wire = Some(figures),
        Some(Err(e)) => run
            .meta
            .warnings
            .push(Warning::new("capture", format!("{e:#}"))),
        None => {}
    }
}

/// The trace written beside the run (`trace.json`) and named in it, or why there is none.
fn add_trace(
    run: &mut Run,
    dir: &Path,
    plan: &Plan<'_>,
    traced: Option<trace::Collected>,
    g: &mut Gathered,
) {
    if let Some(c) = traced {
        match trace::write(dir, c, &plan.arm_name, &run.loops) {
            Ok(info) => {
                run.meta.warnings.extend(trace::presented_warning(&info));
                run.meta.trace = Some(info);
            }
            Err(e) => g.trace_problem = Some(format!("{e:#}")),
        }
    }
    if let Some(why) = g.trace_problem.take() {
        run.meta
            .warnings
            .push(Warning::new("trace", format!("no trace.json: {why}")));
    }
}

/// The CPU sampler beside the run, in phase `setup` from the page's opening; a sampler
/// that cannot start is a warning, the run itself stands.
fn start_cpu(
    plan: &Plan<'_>,
    target: &Target,
    browser: &Browser,
) -> (Option<CpuWatch>, Option<String>) {
    match CpuWatch::start(
        "setup",
        &plan.sample,
        target.in_process(),
        Some(browser.pid()),
    ) {
        Ok(c) => (Some(c), None),
        Err(e) => (
            None,
            Some(format!("no CPU figures: the sampler did not start: {e}")),
        ),
    }
}

fn start_capture(
    plan: &Plan<'_>,
    target: &Target,
    dir: &std::path::Path,
) -> Result<Option<RunCapture>> {
    if !plan.capture {
        return Ok(None);
    }
    RunCapture::start(target.addr("--capture")?, dir, plan.capture_backend).map(Some)
}

/// Prepares the page, then makes every click of the plan.
async fn measure(
    page: &Page,
    req: &RunRequest<'_>,
    target: &Target,
    g: &mut Gathered,
) -> Result<()> {
    let (plan, cancel) = (req.plan, req.cancel);
    wait_canvas(page, plan, cancel).await?;
    // The load and the setup (a board's first paint among them) are kept apart before the
    // clear: the frame tables read them, pairing never does.
    let mut kept = Kept::default();
    run_setup(page, plan, cancel, &mut kept).await?;
    kept.take(page.drain().await.context("draining the setup records")?);
    g.setup = Some(kept);
    // The page is loaded and its sockets are up: all of it must have gone through the link.
    target.check_link()?;
    page.clear().await.context("clearing the recorder")?;
    g.cleared = true;
    let rect = wait_canvas(page, plan, cancel).await?;
    check_viewport(page, plan, &rect).await?;
    g.browser = Some(read_browser(page, plan).await?);
    let (rule, info) = match &plan.gesture {
        Gesture::Typing(t) => resolve_typing_answer(page, &plan.source, t).await?,
        Gesture::Clicks => resolve_answer(page, plan, &rect).await?,
    };
    g.answer = Some(info);
    g.judge.answer = rule;
    g.judge.draw_target = rect.index;
    // After the oracle's probe, so the idle phase's CPU is the target's alone.
    if plan.idle.is_some() {
        g.phase("idle");
    }
    g.idle = idle_stage(page, plan, cancel).await?;
    if plan.trace {
        match trace::start(page).await {
            Ok(t) => g.tracing = Some(t),
            Err(e) => g.trace_problem = Some(format!("{e:#}")),
        }
    }
    g.frame_interval_ms = page.frame_interval_ms(12).await.unwrap_or(None);
    g.phase_jitter_ms = plan
        .phase_jitter_ms
        .unwrap_or(g.frame_interval_ms.unwrap_or(DEFAULT_FRAME_MS));
    g.clock = page.clock_map().await.ok();
    let clicker = Clicker {
        page,
        plan,
        cancel,
        judge: g.judge.clone(),
        page_clock: g.clock.map(|m| m.offset_ms),
        timing: Timing::new(plan.seed, g.phase_jitter_ms),
    };
    g.phase("clicks");
    match &plan.gesture {
        Gesture::Typing(t) => type_keys(&clicker, t, req, g).await?,
        Gesture::Clicks => click_all(&clicker, &rect, req, target, g).await?,
    }
    gestures(page, plan, &rect, cancel, g).await
}

/// The typing stage ([`crate::typist`]), booked as the click loop is.
async fn type_keys(
    clicker: &Clicker<'_>,
    t: &crate::type_spec::TypingPlan,
    req: &RunRequest<'_>,
    g: &mut Gathered,
) -> Result<()> {
    let start = Instant::now();
    let sent = type_all(clicker, t, &mut g.col, &mut g.cost).await?;
    g.inputs_dispatched += sent;
    g.clicks_made += sent;
    (req.progress)(Progress::ClicksDone {
        arm: &req.plan.arm_name,
    });
    g.cost.clicking_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(())
}

/// The plan's drags and hovers, after the clicks' records are all collected (so no move
/// is paired as a click), each accounted for on its own.
async fn gestures(
    page: &Page,
    plan: &Plan<'_>,
    rect: &CanvasRect,
    cancel: &Cancel,
    g: &mut Gathered,
) -> Result<()> {
    if plan.gestures.is_empty() {
        return Ok(());
    }
    drain_into(page, &mut g.col, &mut g.cost)
        .await
        .context("draining the clicks before the gestures")?;
    g.phase("gestures");
    let pacing = (plan.settle, plan.timeout());
    let made = crate::gesture::perform_all(page, rect, &plan.gestures, pacing, cancel).await?;
    g.gestures = made
        .iter()
        .enumerate()
        .map(|(i, m)| crate::moves::account(i, m, &m.records))
        .collect();
    Ok(())
}

/// Clicks between two drains when no wait drains (about 30 records a click: a few
/// thousand records, far inside the default ring of 65,536).
const DRAIN_EVERY: u64 = 32;

/// The phase pause where the page's frame interval could not be measured: 60 Hz.
const DEFAULT_FRAME_MS: f64 = 1000.0 / 60.0;

/// Every setting that defines this run's loops, for `run.json`.
fn loop_settings(plan: &Plan<'_>, g: &Gathered) -> LoopSettings {
    let (hold, hold_min_ms, hold_max_ms) = match plan.hold {
        Hold::Fixed(ms) => ("fixed", ms, ms),
        Hold::Person { min_ms, max_ms } => ("person", min_ms, max_ms),
    };
    LoopSettings {
        loop_events: plan.loop_events.clone(),
        timeout_ms: plan.timeout_ms,
        settle_ms: plan.settle.as_millis() as u64,
        interval_ms: plan.interval.as_millis() as u64,
        warmup: plan.warmup,
        move_first: plan.move_first,
        hold: hold.into(),
        hold_min_ms,
        hold_max_ms,
        phase_jitter_ms: g.phase_jitter_ms,
        frame_interval_ms: g.frame_interval_ms,
        socket_clock_error_ms: g.col.clock_error_ms,
        scenario: match plan.target {
            TargetPlan::Fixture(_) => Some(plan.scenario.map_or("none", |s| s.name()).into()),
            TargetPlan::External { .. } => None,
        },
    }
}

/// The click loop: one click at a time, each waited for, paced by the plan's interval.
async fn click_all(
    clicker: &Clicker<'_>,
    rect: &CanvasRect,
    req: &RunRequest<'_>,
    target: &Target,
    g: &mut Gathered,
) -> Result<()> {
    let (plan, cancel) = (req.plan, req.cancel);
    let (count, arm) = (plan.count, plan.arm_name.as_str());
    let probe = target.probe();
    let start = Instant::now();
    let mut stall = StallWatch::new(plan.stall_clicks);
    for (k, &(fx, fy)) in plan.positions.iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(anyhow!(Exit::new(
                ExitKind::Interrupted,
                format!("interrupted after {k} of {count} clicks")
            )));
        }
        let point = rect.page_fraction(fx, fy);
        let (from, made) = (g.col.records.len(), (Instant::now(), SystemTime::now()));
        let end = clicker.click(k, point, &mut g.col, &mut g.cost).await?;
        let complete = end.complete;
        g.inputs_dispatched += plan.loops_per_click;
        g.clicks_made += 1;
        if !complete && !cancel.is_cancelled() && target_gone(probe) {
            return Err(anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!(
                    "the target at {} stopped accepting connections (click {} of {count} unanswered)",
                    target.url,
                    k + 1
                )
            )));
        }
        if let Some(s) = silent_click(clicker, &mut stall, (k, made), from, complete, g).await? {
            g.stalled = true;
            return Err(stalled(&target.url, &s, k, count));
        }
        let done = k as u64 + 1;
        if done.is_multiple_of(DRAIN_EVERY) {
            // Off the clicks' critical path: the page's ring holds many clicks, and a
            // drain now and then keeps a long run from wrapping it.
            drain_into(clicker.page, &mut g.col, &mut g.cost)
                .await
                .context("draining the recorder between clicks")?;
        }
        (req.progress)(Progress::Click {
            arm,
            done,
            of: count,
        });
        clicker.between(end, &mut g.cost).await;
    }
    (req.progress)(Progress::ClicksDone { arm });
    g.cost.clicking_ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(())
}

/// Notes click `k` (made at `made`, its records from `from` on) with the stall watch: an
/// incomplete click's records are drained and judged; a complete one heard its answer.
async fn silent_click(
    clicker: &Clicker<'_>,
    stall: &mut StallWatch,
    (k, made): (usize, (Instant, SystemTime)),
    from: usize,
    complete: bool,
    g: &mut Gathered,
) -> Result<Option<Stall>> {
    if complete || !stall.watching() || clicker.cancel.is_cancelled() {
        return Ok(stall.note(k, made, true));
    }
    drain_into(clicker.page, &mut g.col, &mut g.cost)
        .await
        .context("draining the recorder after an unanswered click")?;
    Ok(stall.note(k, made, heard(&g.col.records, from)))
}

/// The error that ends a run whose target went silent at click `k`.
fn stalled(url: &str, s: &Stall, k: usize, count: u64) -> anyhow::Error {
    anyhow!(Exit::new(
        ExitKind::TargetFailed,
        format!(
            "the target at {url} stopped answering: {} clicks in a row ({} to {} of {count}) got no WebSocket message from the target's socket (no paint either, where the page's sockets cannot be seen): silent since click {} at {} ({:.1} s)",
            s.clicks,
            s.first + 1,
            k + 1,
            s.first + 1,
            arena_run::rfc3339_utc(s.since_wall),
            s.since.elapsed().as_secs_f64()
        )
    ))
}

/// Sorts the click loop's error: bad input found on the page is the command's error
/// (`Err`); an interruption, a dead or silent target or a dead browser ends the run early,
/// written.
fn ending(body: Result<()>, cancel: &Cancel, stalled: bool) -> Result<Ending> {
    let Err(e) = body else {
        return Ok(Ending {
            status: RunStatus::Complete,
            message: None,
        });
    };
    let kind = ExitKind::of(&e).unwrap_or(ExitKind::TargetFailed);
    if kind == ExitKind::BadInput {
        return Err(e);
    }
    let status = if kind == ExitKind::Interrupted || cancel.is_cancelled() {
        RunStatus::Interrupted
    } else if stalled {
        RunStatus::TargetStalled
    } else {
        RunStatus::TargetFailed
    };
    Ok(Ending {
        status,
        message: Some(format!("{e:#}")),
    })
}

/// Whatever the page still holds belongs to the run; a dead browser gets 2 s.
async fn collect_last(page: &Page, plan: &Plan<'_>, g: &mut Gathered) {
    if !g.cleared {
        return;
    }
    let last = Duration::from_secs(2);
    let _ = tokio::time::timeout(last, drain_into(page, &mut g.col, &mut g.cost)).await;
    // The records name what kind of input the oracle could not judge; the page keeps the
    // words of why, for the warning.
    if plan.recorder.answer.is_some() {
        let js = "window.__arenaRecorder.stats().last_verdict";
        if let Ok(Ok(v)) = tokio::time::timeout(last, page.eval_json(js)).await {
            g.last_verdict = v.as_str().map(str::to_string);
        }
    }
}

/// Ends the trace of the click loop and reads it back (bounded: a dead browser gets a
/// warning, not a hang).
async fn collect_trace(
    page: &Page,
    tracing: trace::Tracing,
    g: &mut Gathered,
) -> Option<trace::Collected> {
    let limit = Duration::from_secs(60);
    match tokio::time::timeout(limit, trace::collect(page, tracing)).await {
        Ok(Ok(c)) => Some(c),
        Ok(Err(e)) => {
            g.trace_problem = Some(format!("{e:#}"));
            None
        }
        Err(_) => {
            g.trace_problem = Some(format!(
                "the trace was not read back within {} s",
                limit.as_secs()
            ));
            None
        }
    }
}

/// Pairs the collected records and builds the run.
fn assemble(
    plan: &Plan<'_>,
    browser: &Browser,
    target: &Target,
    started: SystemTime,
    ending: Ending,
    g: &mut Gathered,
) -> Run {
    let col = &g.col;
    let mut cfg = g.judge.clone();
    cfg.cleared_at_seq = col.cleared_at_seq.unwrap_or(0);
    cfg.dropped = col.dropped;
    cfg.cdp_sockets = col.source == Some(arena_browser::SocketSource::Cdp);
    let mut paired = pair(&col.records, &cfg);
    add_page_reason(&mut paired, g.last_verdict.as_deref());
    let ctx = RunContext {
        arm: plan.arm_name.clone(),
        knobs: target.knobs.clone(),
        pilot_file: Some(plan.source.clone()),
        pilot_hash: plan.pilot_hash.clone(),
        url: target.url.clone(),
        chromium_version: browser.version().to_string(),
        started,
        ended: SystemTime::now(),
        status: ending.status,
        status_message: ending.message,
        socket_source: map_source(col.source),
        seed: plan.seed,
        clicks_planned: plan.count,
        clicks_made: g.clicks_made,
        inputs_dispatched: g.inputs_dispatched,
        answer: g.answer.take(),
        idle_reply_bytes: plan.idle_reply_bytes,
        link: target.link.clone(),
        loop_settings: Some(loop_settings(plan, g)),
        shams: g.col.shams.clone(),
        quiet_lapses: g.cost.quiet_lapses,
        lapse_at: g.cost.lapse_at.clone(),
        typing: match &plan.gesture {
            Gesture::Typing(t) => Some(t.mode.name().into()),
            Gesture::Clicks => None,
        },
    };
    let mut run = build_run(&ctx, paired, &g.col.records);
    run.meta.clock = g.clock.map(|m| arena_run::PageClock {
        unix_offset_ms: m.unix_offset_ms,
        error_ms: m.error_ms,
        n: m.n as u32,
        time_origin_ms: m.time_origin_ms,
    });
    if let Some(log) = target.link_log() {
        let setup = g.setup.iter().flat_map(|k| &k.records);
        let opened = crate::link::sockets_opened(setup.chain(&g.col.records));
        crate::link::account(&mut run, log, opened);
    }
    if let Some(Kept { records, dropped }) = g.setup.take() {
        run.setup_events = Some(events_of(&records));
        if dropped > 0 {
            run.meta.warnings.push(Warning::new(
                "setup_dropped",
                format!("{dropped} records of the load and setup were overwritten in the ring before they were drained: the setup frame table misses them (raise recorder.capacity)"),
            ));
        }
    }
    run.meta.idle = g.idle.take();
    run.meta.browser = g.browser.take().map(|b| arena_run::BrowserSettings {
        headful: Some(browser.headful()),
        ..b
    });
    run
}

/// The oracle's warning about inputs it could not judge ends with the page's reason.
fn add_page_reason(paired: &mut Paired, why: Option<&str>) {
    let Some(why) = why else { return };
    for w in paired
        .warnings
        .iter_mut()
        .filter(|w| w.code == "oracle_unjudged")
    {
        w.message
            .push_str(&format!("; the page's last reason: {why}"));
    }
}

fn map_source(s: Option<arena_browser::SocketSource>) -> SocketSource {
    match s {
        Some(arena_browser::SocketSource::Cdp) => SocketSource::Cdp,
        Some(arena_browser::SocketSource::AppRecorder) => SocketSource::AppRecorder,
        _ => SocketSource::PageHook,
    }
}
