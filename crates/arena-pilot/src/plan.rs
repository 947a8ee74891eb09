//! The plan of one run, resolved once from the pilot file, the arm and the command line:
//! nothing after [`Plan::new`] reads a flag or a file field again.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Result};
use arena_browser::{Browser, LaunchOptions, RecorderConfig};
use arena_report::{Exit, ExitKind};

use crate::pair::PairConfig;
use crate::scenario::{hold_problem, AnswerSpec, Arm, Clicks, Hold, Pilot, Requested, SetupStep};

/// Command-line overrides of the pilot file for one run.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub url: Option<String>,
    pub clicks: Option<u64>,
    pub interval_ms: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub settle_ms: Option<u64>,
    /// Silent clicks in a row that end the run (`--stall-clicks`; 0: never).
    pub stall_clicks: Option<u32>,
    pub warmup: Option<u64>,
    pub seed: Option<u64>,
    /// Fixture knobs applied on top of the arm's (`NAME=VALUE`).
    pub knobs: Vec<(String, String)>,
    /// The fixture's board (`--scenario`), over the pilot file's `target.scenario`.
    pub scenario: Option<arena_fixture::Scenario>,
    /// Ring buffer capacity (records), overriding the pilot file's.
    pub capacity: Option<u32>,
    /// Capture the target's loopback port into the run folder's `wire.pcap`.
    pub capture: bool,
    /// Which capture backend takes it (`--capture-backend`).
    pub capture_backend: arena_wire::CaptureBackend,
    /// A shaped link for every arm, over the arms' own `link`.
    pub link: Option<arena_link::LinkSpec>,
    /// The person's browser for every arm (`--dpr`, `--viewport`, `--cpu-throttle`), each
    /// set field over the arm's own.
    pub browser: arena_browser::Emulation,
    /// Record Chromium's trace of the click loop into the run folder's `trace.json`, the
    /// loops merged in as a track.
    pub trace: bool,
    /// An idle window of this length after the clear, before the clicks (`--idle`).
    pub idle: Option<Duration>,
    /// Processes to sample beside each run (`--sample PID|NAME`), resolved by the plan.
    pub sample: Vec<String>,
}

impl Overrides {
    /// `--knob NAME=VALUE` flags as the plan takes them; a bad one is exit 2 naming the
    /// flag (`pilot`, `ab`, `demo` and `startup` take the same).
    pub fn parse_knobs(flags: &[String]) -> Result<Vec<(String, String)>> {
        flags
            .iter()
            .map(|k| {
                arena_fixture::Knobs::parse_pair(k)
                    .map_err(|e| anyhow!(Exit::bad_input(format!("--knob: {e}"))))
            })
            .collect()
    }
}

/// Browser options shared by every run of a command.
#[derive(Debug, Clone, Default)]
pub struct BrowserOptions {
    pub chrome: Option<PathBuf>,
    pub headful: bool,
    /// The browser on one half of the cores, this process on the other
    /// ([`crate::cpu_split`]).
    pub cpu_split: bool,
}

impl BrowserOptions {
    pub async fn launch(&self) -> Result<Browser> {
        let cores = match self.cpu_split {
            true => crate::cpu_split::apply()?.map_or_else(Vec::new, |s| s.browser.clone()),
            false => Vec::new(),
        };
        let opts = LaunchOptions {
            chrome: self.chrome.clone(),
            headful: self.headful,
            // Room for a large canvas: a click outside the viewport reaches no element.
            window: (1600, 1200),
            cores,
            ..LaunchOptions::default()
        };
        Browser::launch(opts).await.map_err(|e| {
            // A browser that cannot start is the environment's problem, reported as such.
            anyhow!(Exit::new(ExitKind::TargetFailed, format!("{e:#}")))
        })
    }
}

/// What a run talks to.
#[derive(Debug, Clone)]
pub enum TargetPlan {
    /// The built-in fixture, started in-process with these knobs (the arm's, then the
    /// command line's).
    Fixture(arena_fixture::Knobs),
    /// A page this process does not serve; the arm's setup command runs first.
    External { url: String },
}

/// One run of one arm, fully resolved: every setting a stage reads is a field here, so a
/// flag that overrides a file key is seen by every stage (`docs/ARCHITECTURE.md`).
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    /// The pilot file as named in errors and `run.json`, or [`crate::scenario::BUILTIN_NAME`].
    pub source: String,
    /// Hex SHA-256 of the pilot file, for `run.json`.
    pub pilot_hash: String,
    /// The file's setup steps, borrowed: no flag overrides them.
    pub setup: &'a [SetupStep],
    /// CSS selector of the canvas clicks are aimed at (`target.canvas`).
    pub canvas: String,
    /// Answers of at least this many bytes mark an input that made the target work.
    pub idle_reply_bytes: u64,
    /// Key presses instead of clicks, cycled through (`clicks.keys`); empty: clicks.
    pub keys: Vec<String>,
    /// Move the pointer to the point before pressing (`clicks.move_first`).
    pub move_first: bool,
    /// DOM event types that start a loop (`pacing.loop_events`).
    pub loop_events: Vec<String>,
    /// How a loop's end is decided (`[answer]`).
    pub answer: AnswerSpec,
    pub arm_name: String,
    pub arm: Arm,
    pub target: TargetPlan,
    /// The fixture's board whose knobs went under the arm's, if one was named.
    pub scenario: Option<arena_fixture::Scenario>,
    pub count: u64,
    pub warmup: u64,
    pub seed: u64,
    pub interval: Duration,
    pub timeout_ms: u64,
    pub settle: Duration,
    /// This many clicks in a row with no message from the target's socket end the run (0:
    /// never).
    pub stall_clicks: u32,
    /// When each release follows its press.
    pub hold: Hold,
    /// The phase jitter before each input, ms (`None`: one frame interval, measured on
    /// the page).
    pub phase_jitter_ms: Option<f64>,
    /// Click points, canvas fractions, in order.
    pub positions: Vec<(f64, f64)>,
    /// The recorder as the page gets it (capacity and answer oracle resolved).
    pub recorder: RecorderConfig,
    /// Loops each click makes (press and release, or the key).
    pub loops_per_click: u64,
    /// The label of loops no classifier names.
    pub label: String,
    pub capture: bool,
    pub capture_backend: arena_wire::CaptureBackend,
    /// The shaped link between the browser and the target, if any.
    pub link: Option<arena_link::LinkSpec>,
    /// Trace the click loop (`trace.json`).
    pub trace: bool,
    /// The idle window before the clicks (`--idle`), if any.
    pub idle: Option<Duration>,
    /// What `--sample` named, beside the fixture's threads and Chromium.
    pub sample: Vec<crate::cpu::SampleTarget>,
    /// The person's browser the arm sets (also in `recorder.emulation`, which the tab
    /// gets); `None`: the browser's own.
    pub emulation: Option<arena_browser::Emulation>,
    /// What the inputs are: clicks (at `positions`), or another gesture's own loops.
    pub gesture: Gesture,
    /// The drags and hovers made after the clicks, their moves and gaps drawn.
    pub gestures: Vec<crate::gesture::GesturePlan>,
}

/// The run's kind of input; each gesture's loops are its own rows, never pooled.
#[derive(Debug, Clone, PartialEq)]
pub enum Gesture {
    /// Clicks at `Plan::positions`, or `clicks.keys` pressed.
    Clicks,
    /// `[typing]`: one loop per keydown, answered by its glyph.
    Typing(crate::type_spec::TypingPlan),
}

impl<'a> Plan<'a> {
    /// The plan of arm `name` of `pilot` (bad knobs are exit 2 here, before any browser).
    pub fn for_arm(pilot: &'a Pilot, name: Option<&str>, ov: &Overrides) -> Result<Plan<'a>> {
        let (arm_name, arm) = pilot.arm(name)?;
        Plan::new(pilot, arm_name, arm, ov)
    }

    /// The plans of the arms `names` of `pilot`, in order, all resolved before any runs.
    pub fn for_arms(pilot: &'a Pilot, names: &[String], ov: &Overrides) -> Result<Vec<Plan<'a>>> {
        names
            .iter()
            .map(|a| Plan::for_arm(pilot, Some(a), ov))
            .collect()
    }

    /// The plan of `arm`, named `arm_name`, which need not be one of the file's arms.
    pub fn new(pilot: &'a Pilot, arm_name: String, arm: Arm, ov: &Overrides) -> Result<Plan<'a>> {
        let count = ov.clicks.unwrap_or(pilot.clicks.count);
        let seed = ov.seed.unwrap_or(pilot.clicks.seed);
        let positions = Clicks {
            count,
            seed,
            ..pilot.clicks.clone()
        }
        .positions();
        let timeout_ms = ov.timeout_ms.unwrap_or(pilot.pacing.timeout_ms);
        let hold = resolve_hold(pilot, timeout_ms)?;
        let mut recorder = pilot.recorder.clone();
        if let Some(c) = ov.capacity {
            recorder.capacity = c;
        }
        let emulation = arm_emulation(&arm_name, &arm, &ov.browser)?;
        recorder.emulation = emulation;
        let target = target_plan(pilot, &arm_name, &arm, ov)?;
        let sample = crate::cpu::resolve_samples(&ov.sample)?;
        let link =
            match (ov.link, &arm.link) {
                (Some(l), _) => Some(l),
                (None, Some(text)) => Some(arena_link::LinkSpec::parse(text).map_err(|e| {
                    anyhow!(Exit::bad_input(format!("arm `{arm_name}`: `link`: {e}")))
                })?),
                (None, None) => None,
            };
        let gesture = resolve_gesture(pilot, ov)?;
        let label = pilot
            .target
            .label
            .clone()
            .or_else(|| matches!(gesture, Gesture::Typing(_)).then(|| "typing".into()))
            .or_else(|| arm.knobs.get("phase").cloned())
            .unwrap_or_else(|| match target {
                TargetPlan::Fixture(_) => "firing".into(),
                TargetPlan::External { .. } => "click".into(),
            });
        let (count, positions, warmup) = match &gesture {
            // Every key is measured: a typing run has no cold clicks unless asked.
            Gesture::Typing(t) => (t.keys.len() as u64, Vec::new(), ov.warmup.unwrap_or(0)),
            Gesture::Clicks => (count, positions, ov.warmup.unwrap_or(pilot.clicks.warmup)),
        };
        let mut plan = Plan {
            source: pilot.source.clone(),
            pilot_hash: pilot.hash.clone(),
            setup: &pilot.setup,
            canvas: pilot.target.canvas.clone(),
            idle_reply_bytes: pilot.target.idle_reply_bytes,
            keys: pilot.clicks.keys.clone(),
            move_first: pilot.clicks.move_first,
            loop_events: pilot.pacing.loop_events.clone(),
            answer: pilot.answer.clone(),
            loops_per_click: match gesture {
                Gesture::Typing(_) => 1,
                Gesture::Clicks => loops_per_click(pilot),
            },
            arm_name,
            arm,
            target,
            scenario: ov.scenario.or(pilot.target.scenario),
            count,
            warmup,
            seed,
            interval: Duration::from_millis(ov.interval_ms.unwrap_or(pilot.pacing.interval_ms)),
            timeout_ms,
            settle: Duration::from_millis(ov.settle_ms.unwrap_or(pilot.pacing.settle_ms)),
            stall_clicks: ov.stall_clicks.unwrap_or(pilot.pacing.stall_clicks),
            hold,
            phase_jitter_ms: pilot.pacing.phase_jitter_ms,
            positions,
            recorder,
            label,
            capture: ov.capture,
            capture_backend: ov.capture_backend,
            link,
            trace: ov.trace,
            idle: ov.idle,
            sample,
            emulation,
            gesture,
            gestures: crate::gesture::plan_gestures(&pilot.gestures, seed),
        };
        // The oracle reads the resolved plan, the effective timeout among it.
        plan.recorder.answer = match &plan.gesture {
            Gesture::Typing(t) => Some(typing_oracle(t, &plan)),
            Gesture::Clicks => page_oracle(&plan),
        };
        Ok(plan)
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// How this run's records are judged; the page's answers and the drains add the rest
    /// (oracle, draw target, clear point, drops, socket source).
    pub fn pair_config(&self) -> PairConfig {
        let mut cfg = PairConfig::new(&self.arm_name);
        cfg.loop_events = self.loop_events.clone();
        cfg.window_ms = self.timeout_ms as f64;
        cfg.cold_loops = (self.warmup * self.loops_per_click.max(1)) as usize;
        cfg.default_label = self.label.clone();
        cfg.shared_receipts = matches!(self.gesture, Gesture::Typing(_));
        cfg
    }
}

/// The in-page oracle the pilot file asks for (none for `reply`, and none for `auto` on key
/// input without a rect, which has no point to watch).
fn page_oracle(plan: &Plan<'_>) -> Option<arena_browser::PageOracle> {
    let a = &plan.answer;
    if plan.recorder.app.is_some() {
        return None;
    }
    let kind = match a.oracle {
        Requested::Reply => return None,
        Requested::Auto if !plan.keys.is_empty() && a.rect.is_none() => return None,
        Requested::Auto | Requested::Pixels => arena_browser::PageOracleKind::Pixels,
        Requested::Js => arena_browser::PageOracleKind::Js,
    };
    Some(arena_browser::PageOracle {
        kind,
        radius_px: a.radius_px,
        rect: a.rect,
        js: a.js.clone(),
        canvas: Some(plan.canvas.clone()),
        events: plan.loop_events.clone(),
        window_ms: plan.timeout_ms as f64,
        move_events: crate::gesture::watched_events(&plan.gestures),
        move_radius_px: arena_browser::DEFAULT_MOVE_RADIUS_PX,
    })
}

/// The in-page oracle for typing: pixels on the typing canvas, one region per key (set on
/// the page by [`resolve_typing_answer`]).
fn typing_oracle(t: &crate::type_spec::TypingPlan, plan: &Plan<'_>) -> arena_browser::PageOracle {
    arena_browser::PageOracle {
        kind: arena_browser::PageOracleKind::Pixels,
        radius_px: arena_browser::DEFAULT_RADIUS_PX,
        rect: None,
        js: None,
        canvas: Some(t.canvas.clone()),
        events: plan.loop_events.clone(),
        window_ms: plan.timeout_ms as f64,
        move_events: crate::gesture::watched_events(&plan.gestures),
        move_radius_px: arena_browser::DEFAULT_MOVE_RADIUS_PX,
    }
}

/// The pilot file's gesture; typing needs `keydown` among the loop events.
fn resolve_gesture(pilot: &Pilot, ov: &Overrides) -> Result<Gesture> {
    let Some(spec) = &pilot.typing else {
        return Ok(Gesture::Clicks);
    };
    if !pilot.pacing.loop_events.iter().any(|e| e == "keydown") {
        return Err(anyhow!(Exit::bad_input(format!(
            "{}: `pacing.loop_events`: `[typing]` needs \"keydown\" among them",
            pilot.source
        ))));
    }
    Ok(Gesture::Typing(crate::type_spec::TypingPlan::resolve(
        spec, ov.clicks,
    )))
}

/// The file's hold checked against the effective timeout (`--timeout` may shorten the
/// file's), or a person's hold fitted inside it.
fn resolve_hold(pilot: &Pilot, timeout_ms: u64) -> Result<Hold> {
    let Some(hold) = pilot.clicks.hold else {
        return Ok(Hold::person_within(timeout_ms));
    };
    match hold_problem(hold, timeout_ms) {
        Some(why) => Err(anyhow!(Exit::bad_input(format!(
            "{}: `{}`: {why}",
            pilot.source,
            hold.key()
        )))),
        None => Ok(hold),
    }
}

/// The arm's browser with the command line's over it, each checked again: an arm need not
/// come from a file, nor the overrides from the command line (`Plan::new`).
fn arm_emulation(
    arm_name: &str,
    arm: &Arm,
    flags: &arena_browser::Emulation,
) -> Result<Option<arena_browser::Emulation>> {
    if let Some((key, why)) = flags.problem() {
        let flag = key.replace('_', "-");
        return Err(anyhow!(Exit::bad_input(format!("--{flag}: {why}"))));
    }
    let file = arm
        .browser
        .as_ref()
        .map(|b| b.emulation())
        .unwrap_or_default();
    if let Some((key, why)) = file.problem() {
        return Err(anyhow!(Exit::bad_input(format!(
            "arm `{arm_name}`: `browser.{key}`: {why}"
        ))));
    }
    let e = arena_browser::Emulation {
        dpr: flags.dpr.or(file.dpr),
        viewport: flags.viewport.or(file.viewport),
        cpu_throttle: flags.cpu_throttle.or(file.cpu_throttle),
    };
    Ok((!e.is_empty()).then_some(e))
}

fn target_plan(pilot: &Pilot, arm_name: &str, arm: &Arm, ov: &Overrides) -> Result<TargetPlan> {
    let scenario = ov.scenario.or(pilot.target.scenario);
    if let Some(url) = ov.url.clone().or_else(|| pilot.target.url.clone()) {
        if let Some(s) = scenario {
            return Err(anyhow!(Exit::bad_input(format!(
                "scenario `{}` sets the built-in fixture's knobs; the target {url} is not the fixture",
                s.name()
            ))));
        }
        return Ok(TargetPlan::External { url });
    }
    // The scenario's knobs first: the arm's, then the command line's, go on top.
    let mut pairs = scenario.map(|s| s.knobs()).unwrap_or_default();
    pairs.extend(arm.knobs.clone());
    pairs.extend(ov.knobs.iter().cloned());
    let knobs = arena_fixture::Knobs::from_pairs(&pairs)
        .map_err(|e| anyhow!(Exit::bad_input(format!("arm `{arm_name}`: {e}"))))?;
    Ok(TargetPlan::Fixture(knobs))
}

/// Discrete inputs per click that close a loop: press and release for clicks, the key
/// for keys, each only when `pacing.loop_events` names it.
fn loops_per_click(pilot: &Pilot) -> u64 {
    ["mousedown", "mouseup", "keydown"]
        .iter()
        .filter(|e| {
            let click_event = **e != "keydown";
            click_event == pilot.clicks.keys.is_empty()
                && pilot.pacing.loop_events.iter().any(|x| x == *e)
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(plan: &Plan<'_>) -> arena_fixture::Knobs {
        match &plan.target {
            TargetPlan::Fixture(k) => k.clone(),
            TargetPlan::External { url } => {
                panic!("{} is the fixture's arm, not {url}", plan.arm_name)
            }
        }
    }

    #[test]
    fn the_shipped_pilot_file_has_the_arms_and_they_validate() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pilots/fixture.toml");
        let pilot = Pilot::load(&path).unwrap();
        let ov = Overrides::default();
        for arm in ["stock", "lazy-png", "png6", "tick8", "blink", "delay40"] {
            Plan::for_arm(&pilot, Some(arm), &ov).unwrap_or_else(|e| panic!("{arm}: {e:#}"));
        }
        let plan = |arm| knobs(&Plan::for_arm(&pilot, Some(arm), &ov).unwrap());
        assert!(plan("lazy-png").lazy_png);
        assert_eq!(plan("stock"), arena_fixture::Knobs::default());
        assert_eq!(plan("delay40").delay_ms, 40);
    }

    #[test]
    fn flags_win_over_the_file_and_the_arm() {
        let pilot = Pilot::builtin().unwrap();
        let ov = Overrides {
            clicks: Some(7),
            timeout_ms: Some(900),
            stall_clicks: Some(0),
            knobs: vec![("delay_ms".into(), "5".into())],
            ..Overrides::default()
        };
        let plan = Plan::for_arm(&pilot, Some("lazy-png"), &ov).unwrap();
        assert_eq!((plan.count, plan.positions.len()), (7, 7));
        assert_eq!(plan.hold, Hold::PERSON);
        assert_eq!(plan.pair_config().window_ms, 900.0);
        assert_eq!(plan.stall_clicks, 0);
        let file = Plan::for_arm(&pilot, None, &Overrides::default()).unwrap();
        assert_eq!(file.stall_clicks, pilot.pacing.stall_clicks);
        let k = knobs(&plan);
        assert!(k.lazy_png && k.delay_ms == 5, "{k:?}");
        assert_eq!(plan.loops_per_click, 2);
        let bad = Overrides {
            knobs: vec![("png_level".into(), "12".into())],
            ..Overrides::default()
        };
        let e = Plan::for_arm(&pilot, Some("stock"), &bad).unwrap_err();
        assert!(format!("{e:#}").contains("png_level"), "{e:#}");
    }

    #[test]
    fn an_override_on_the_command_line_is_what_every_stage_reads() {
        let pilot = Pilot::parse(
            "p.toml",
            "[target]\ncanvas = \"#game\"\n[pacing]\ntimeout_ms = 3000\nsettle_ms = 50\n",
        )
        .unwrap();
        let ov = Overrides {
            clicks: Some(9),
            interval_ms: Some(70),
            timeout_ms: Some(800),
            settle_ms: Some(25),
            stall_clicks: Some(3),
            warmup: Some(2),
            seed: Some(11),
            capacity: Some(4096),
            knobs: vec![("delay_ms".into(), "7".into())],
            link: Some(arena_link::LinkSpec::parse("rtt=20ms").unwrap()),
            trace: true,
            idle: Some(Duration::from_millis(300)),
            ..Overrides::default()
        };
        let plan = Plan::for_arm(&pilot, None, &ov).unwrap();
        // Target: the fixture's knobs and the link.
        assert_eq!(knobs(&plan).delay_ms, 7);
        assert!(plan.link.is_some());
        // Prepare and the oracle: the page's recorder and its answer window.
        assert_eq!(plan.recorder.capacity, 4096);
        let oracle = plan.recorder.answer.as_ref().expect("pixels by default");
        assert_eq!(oracle.window_ms, 800.0);
        assert_eq!(oracle.canvas.as_deref(), Some("#game"));
        assert_eq!(plan.canvas, "#game");
        // Idle, trace and the clicks: their count, points, pacing and hold.
        assert_eq!(
            (plan.idle, plan.trace),
            (Some(Duration::from_millis(300)), true)
        );
        assert_eq!((plan.count, plan.positions.len(), plan.seed), (9, 9, 11));
        assert_eq!(plan.interval, Duration::from_millis(70));
        assert_eq!(plan.settle, Duration::from_millis(25));
        assert_eq!(plan.stall_clicks, 3);
        assert!(plan.hold.max_ms() <= 800 / 2, "{:?}", plan.hold);
        // Pairing: the window and the cold loops.
        let cfg = plan.pair_config();
        assert_eq!(cfg.window_ms, 800.0);
        assert_eq!(cfg.cold_loops, 2 * plan.loops_per_click as usize);
        assert_eq!(cfg.loop_events, plan.loop_events);
    }

    #[test]
    fn no_stage_reads_the_pilot_file() {
        // Only the reader, the plan and the crate's re-export may name the file's type:
        // a stage given the file could read a key a flag overrode.
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        let mut dirs = vec![src.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        assert!(
            files.iter().any(|f| f.ends_with("verify/kinds.rs")),
            "{files:?}"
        );
        for path in files {
            let name = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if ["scenario.rs", "plan.rs", "lib.rs"].contains(&name.as_str()) {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let reads = line.contains("Pilot,")
                    || line.contains("Pilot}")
                    || line.contains("&Pilot")
                    || line.contains(".pilot.");
                assert!(!reads, "{name}:{}: {line}", i + 1);
            }
        }
    }

    #[test]
    fn a_scenario_goes_under_the_arm_the_flag_wins_over_the_file_and_a_url_refuses_it() {
        use arena_fixture::{Phase, Scenario};
        let pilot = Pilot::parse(
            "p.toml",
            "[target]\nscenario = \"idle\"\n[arms.busy.knobs]\nbots = \"1\"\n",
        )
        .unwrap();
        let idle = knobs(&Plan::for_arm(&pilot, Some("busy"), &Overrides::default()).unwrap());
        assert_eq!(
            (idle.phase, idle.bots),
            (Phase::Deploy, 1),
            "the arm's bots win"
        );
        let ov = Overrides {
            scenario: Some(Scenario::Played),
            ..Overrides::default()
        };
        let played = knobs(&Plan::for_arm(&pilot, Some("busy"), &ov).unwrap());
        assert_eq!((played.phase, played.bots), (Phase::Firing, 1));
        assert!(played.bot_turn_ms > 0);
        let url = Overrides {
            url: Some("http://127.0.0.1:9/".into()),
            ..ov
        };
        let e = format!("{:#}", Plan::for_arm(&pilot, None, &url).unwrap_err());
        assert!(
            e.contains("scenario `played`") && e.contains("not the fixture"),
            "{e}"
        );
        let e = Pilot::parse("p.toml", "[target]\nscenario = \"busy\"\n").unwrap_err();
        assert!(format!("{e:#}").contains("p.toml:2"), "{e:#}");
    }

    #[test]
    fn a_timeout_flag_shorter_than_the_hold_is_refused_and_the_default_hold_fits_it() {
        let pilot = Pilot::parse("p.toml", "[clicks]\nhold_ms = 500\n").unwrap();
        let ov = Overrides {
            timeout_ms: Some(400),
            ..Overrides::default()
        };
        let e = format!("{:#}", Plan::for_arm(&pilot, None, &ov).unwrap_err());
        assert!(
            e.contains("`clicks.hold_ms`") && e.contains("(400 ms)"),
            "{e}"
        );
        let builtin = Pilot::builtin().unwrap();
        let plan = Plan::for_arm(&builtin, None, &ov).unwrap();
        assert_eq!(
            plan.hold,
            Hold::Person {
                min_ms: 60,
                max_ms: 140
            }
        );
        let short = Overrides {
            timeout_ms: Some(100),
            ..Overrides::default()
        };
        let plan = Plan::for_arm(&builtin, None, &short).unwrap();
        assert!(plan.hold.max_ms() < 100, "{:?}", plan.hold);
    }

    #[test]
    fn an_arms_browser_reaches_the_tab_and_none_leaves_the_browsers_own() {
        let pilot = Pilot::parse(
            "p.toml",
            "[arms.hidpi.browser]\ndpr = 2\n[arms.slow.browser]\ncpu_throttle = 4\n[arms.plain]\n[arms.empty.browser]\n",
        )
        .unwrap();
        let plan = |arm| Plan::for_arm(&pilot, Some(arm), &Overrides::default()).unwrap();
        let hidpi = plan("hidpi");
        assert_eq!(hidpi.emulation.and_then(|e| e.dpr), Some(2.0));
        assert_eq!(hidpi.recorder.emulation, hidpi.emulation);
        let slow = plan("slow");
        assert_eq!(slow.emulation.and_then(|e| e.cpu_throttle), Some(4.0));
        assert_eq!(slow.emulation.and_then(|e| e.dpr), None);
        assert_eq!(plan("plain").emulation, None);
        assert_eq!(plan("empty").recorder.emulation, None);
        // A flag wins over the arm's own, field by field.
        let ov = Overrides {
            browser: arena_browser::Emulation {
                viewport: Some((1280, 800)),
                cpu_throttle: Some(2.0),
                ..Default::default()
            },
            ..Overrides::default()
        };
        let both = Plan::for_arm(&pilot, Some("slow"), &ov).unwrap().emulation;
        let want = arena_browser::Emulation {
            dpr: None,
            viewport: Some((1280, 800)),
            cpu_throttle: Some(2.0),
        };
        assert_eq!(both, Some(want));
        let bad = Overrides {
            browser: arena_browser::Emulation {
                cpu_throttle: Some(30.0),
                ..Default::default()
            },
            ..Overrides::default()
        };
        let e = format!("{:#}", Plan::for_arm(&pilot, None, &bad).unwrap_err());
        assert!(
            e.starts_with("--cpu-throttle: must be within 1..=20"),
            "{e}"
        );
        // An arm made in code, not read from a file, is checked all the same.
        let browser: crate::scenario::ArmBrowser = toml::from_str("cpu_throttle = 0.5").unwrap();
        let arm = Arm {
            browser: Some(browser),
            ..Arm::default()
        };
        let e = Plan::new(&pilot, "x".into(), arm, &Overrides::default()).unwrap_err();
        assert_eq!(arena_report::ExitKind::of(&e).map(|k| k.code()), Some(2));
        let e = format!("{e:#}");
        assert!(
            e.contains("arm `x`: `browser.cpu_throttle`: must be within 1..=20"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let pilot =
            Pilot::parse("p.toml", "[arms.a.knobs]\ntick_ms = 8\nlazy_png = true\n").unwrap();
        assert_eq!(
            knobs(&Plan::for_arm(&pilot, Some("a"), &Overrides::default()).unwrap()).tick_ms,
            8
        );
        let e = Plan::for_arm(&pilot, Some("b"), &Overrides::default()).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("p.toml") && e.contains("`b`") && e.contains("arms: a"),
            "{e}"
        );
        let e = Pilot::parse("p.toml", "[arms.a\n").unwrap_err();
        assert!(format!("{e:#}").contains("p.toml:1:"), "{e:#}");
        let e = Pilot::load(std::path::Path::new("/nonexistent/p.toml")).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/p.toml"));
    }
}
