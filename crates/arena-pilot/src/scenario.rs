//! The pilot file (TOML, `docs/pilot-file.md`): target, setup steps, click generator,
//! classifier, pacing and arms. Parsing rejects unknown keys, and every error names the
//! file, the line and the key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::Result;
use arena_browser::{AppRecorder, ClassifierSpec, Emulation, RecorderConfig, SocketChoice};
use arena_report::{toml_input, Exit};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use toml::Spanned;

/// The fixture's pilot file, built into the binary so `arena-perf pilot` and `demo` work
/// from any directory.
pub const BUILTIN_FIXTURE_PILOT: &str = include_str!("../../../pilots/fixture.toml");
pub const BUILTIN_NAME: &str = "pilots/fixture.toml (built in)";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPilot {
    #[serde(default)]
    target: Option<Spanned<Target>>,
    #[serde(default)]
    setup: Vec<Spanned<SetupStep>>,
    #[serde(default)]
    clicks: Option<Spanned<RawClicks>>,
    #[serde(default)]
    pacing: Option<Spanned<RawPacing>>,
    #[serde(default)]
    classifier: Option<Spanned<ClassifierSpec>>,
    #[serde(default)]
    recorder: Option<Spanned<RawRecorder>>,
    #[serde(default)]
    answer: Option<Spanned<RawAnswer>>,
    #[serde(default)]
    arms: BTreeMap<String, Spanned<Arm>>,
    #[serde(default)]
    typing: Option<Spanned<crate::type_spec::RawTyping>>,
    #[serde(default)]
    gestures: Vec<Spanned<crate::gesture::RawGesture>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnswer {
    #[serde(default)]
    oracle: Option<Spanned<String>>,
    #[serde(default)]
    radius_px: Option<Spanned<f64>>,
    #[serde(default)]
    rect: Option<Spanned<[f64; 4]>>,
    #[serde(default)]
    min_bytes: Option<Spanned<u32>>,
    #[serde(default)]
    js: Option<Spanned<String>>,
}

/// Which answer oracle the pilot file asks for (`[answer] oracle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// `pixels` where the target canvas can be read, else `reply`, and the run says why.
    Auto,
    Pixels,
    Reply,
    Js,
}

impl Requested {
    pub fn name(self) -> &'static str {
        match self {
            Requested::Auto => "auto",
            Requested::Pixels => "pixels",
            Requested::Reply => "reply",
            Requested::Js => "js",
        }
    }
}

/// `[answer]`: how a loop's end is decided.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerSpec {
    pub oracle: Requested,
    /// Pixels: half the side of the square watched around the input point, CSS px.
    pub radius_px: f64,
    /// Pixels: a fixed region in canvas fractions instead of one around the point.
    pub rect: Option<[f64; 4]>,
    /// Reply: the first reply of at least this many bytes answers.
    pub min_bytes: u32,
    /// Js: a page predicate over `input`, checked on each painted frame.
    pub js: Option<String>,
}

impl Default for AnswerSpec {
    fn default() -> Self {
        AnswerSpec {
            oracle: Requested::Auto,
            radius_px: arena_browser::DEFAULT_RADIUS_PX,
            rect: None,
            min_bytes: 0,
            js: None,
        }
    }
}

/// Where to drive.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The page to open; omitted means the built-in fixture, started in-process per run.
    #[serde(default)]
    pub url: Option<String>,
    /// CSS selector of the canvas clicks are aimed at and whose draws close a loop.
    #[serde(default = "default_canvas")]
    pub canvas: String,
    /// Phase or label written into every loop (e.g. `firing`).
    #[serde(default)]
    pub label: Option<String>,
    /// Answers of at least this many bytes mark an input that made the target work; a run
    /// where fewer than a tenth of answers reach it gets the idle warning.
    #[serde(default = "default_idle_reply_bytes")]
    pub idle_reply_bytes: u64,
    /// The built-in fixture's board: `idle` or `played` (knobs under every arm's own);
    /// none keeps the fixture's defaults. Only for the built-in fixture.
    #[serde(default)]
    pub scenario: Option<arena_fixture::Scenario>,
}

fn default_idle_reply_bytes() -> u64 {
    4096
}

fn default_canvas() -> String {
    "#board".into()
}

/// One setup step, run in order after the page loads and before the recorder is cleared.
/// Exactly one action key per step.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupStep {
    /// Wait until the page has received at least this many WebSocket payload bytes.
    #[serde(default)]
    pub wait_bytes: Option<u64>,
    /// Wait until no WebSocket message has arrived for this many ms.
    #[serde(default)]
    pub quiet_ms: Option<u64>,
    /// Click at these canvas fractions `[x, y]`.
    #[serde(default)]
    pub click: Option<[f64; 2]>,
    /// Press and release this key (DOM key value: `a`, `Enter`, `Escape`, ...).
    #[serde(default)]
    pub key: Option<String>,
    /// Evaluate this JavaScript expression (a promise is awaited).
    #[serde(default)]
    pub eval: Option<String>,
    /// Give up on a wait after this many ms (default 15000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClicks {
    #[serde(default)]
    region: Option<Spanned<[f64; 4]>>,
    #[serde(default)]
    count: Option<Spanned<u64>>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    button: Option<Spanned<String>>,
    #[serde(default)]
    pattern: Option<Spanned<String>>,
    #[serde(default)]
    warmup: Option<u64>,
    #[serde(default)]
    keys: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    hold_ms: Option<Spanned<u64>>,
    #[serde(default)]
    hold_range_ms: Option<Spanned<[u64; 2]>>,
    #[serde(default)]
    move_first: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPacing {
    #[serde(default)]
    interval_ms: Option<Spanned<u64>>,
    #[serde(default)]
    timeout_ms: Option<Spanned<u64>>,
    #[serde(default)]
    settle_ms: Option<Spanned<u64>>,
    #[serde(default)]
    loop_events: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    phase_jitter_ms: Option<Spanned<f64>>,
    #[serde(default)]
    stall_clicks: Option<Spanned<i64>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecorder {
    #[serde(default)]
    capacity: Option<Spanned<u32>>,
    #[serde(default)]
    sockets: Option<SocketChoice>,
    #[serde(default)]
    app: Option<AppRecorder>,
}

/// One arm: what differs between the things being compared.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    /// Fixture knobs (name -> value text), for the built-in fixture.
    #[serde(default, deserialize_with = "scalar_texts")]
    pub knobs: BTreeMap<String, String>,
    /// Query parameters appended to the target URL.
    #[serde(default, deserialize_with = "scalar_texts")]
    pub url_params: BTreeMap<String, String>,
    /// Environment for `setup_command`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Shell command run (`sh -c`) before each run of this arm, e.g. to restart an
    /// external target with a flag; a non-zero exit stops the run.
    #[serde(default)]
    pub setup_command: Option<String>,
    /// The link between the browser and the target for this arm, as `--link` takes it
    /// (`rtt=20ms,rate=25mbit`), so links can be arms ("lan" against "residential").
    #[serde(default)]
    pub link: Option<String>,
    /// The person's browser for this arm (`[arms.NAME.browser]`): its device pixel ratio,
    /// viewport and CPU slowdown, so a 2x laptop or a slow one can be an arm.
    #[serde(default)]
    pub browser: Option<ArmBrowser>,
}

/// `[arms.NAME.browser]`, each key's place in the file kept for its error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmBrowser {
    /// `window.devicePixelRatio`, in (0, 8].
    #[serde(default)]
    pub dpr: Option<Spanned<f64>>,
    /// `[width, height]` in CSS px, each 100..=8192.
    #[serde(default)]
    pub viewport: Option<Spanned<[u32; 2]>>,
    /// CPU slowdown, 1..=20 (4: a slow laptop).
    #[serde(default)]
    pub cpu_throttle: Option<Spanned<f64>>,
}

impl ArmBrowser {
    /// What the tab is set to.
    pub fn emulation(&self) -> Emulation {
        Emulation {
            dpr: self.dpr.as_ref().map(|d| *d.get_ref()),
            viewport: self.viewport.as_ref().map(|v| {
                let [w, h] = *v.get_ref();
                (w, h)
            }),
            cpu_throttle: self.cpu_throttle.as_ref().map(|r| *r.get_ref()),
        }
    }

    /// Where `key` (`dpr`, `viewport`, `cpu_throttle`) was written, if it was.
    fn span_of(&self, key: &str) -> Option<Range<usize>> {
        match key {
            "dpr" => self.dpr.as_ref().map(|d| d.span()),
            "viewport" => self.viewport.as_ref().map(|v| v.span()),
            _ => self.cpu_throttle.as_ref().map(|r| r.span()),
        }
    }
}

/// A table of names to values written as TOML strings, numbers or booleans (`tick_ms = 8`
/// and `tick_ms = "8"` are one knob), kept as the text `--knob NAME=VALUE` takes.
fn scalar_texts<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Text(String),
        Int(i64),
        Float(f64),
        Bool(bool),
    }
    let m = BTreeMap::<String, Scalar>::deserialize(d)?;
    Ok(m.into_iter()
        .map(|(k, v)| {
            let text = match v {
                Scalar::Text(s) => s,
                Scalar::Int(i) => i.to_string(),
                Scalar::Float(f) => f.to_string(),
                Scalar::Bool(b) => b.to_string(),
            };
            (k, text)
        })
        .collect())
}

/// Click placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Uniform in the region, from the seed (same seed, same clicks).
    Random,
    /// Row-major over an 8 x 8 grid of cell centres in the region, repeating.
    Grid,
}

#[derive(Debug, Clone)]
pub struct Clicks {
    /// `[x0, y0, x1, y1]` in canvas fractions.
    pub region: [f64; 4],
    pub count: u64,
    pub seed: u64,
    pub pattern: Pattern,
    /// The first this many clicks of a page are cold (reported apart).
    pub warmup: u64,
    /// When set, each of the `count` inputs is a key press (cycling through these DOM key
    /// values) instead of a click.
    pub keys: Vec<String>,
    /// When the release follows the press, as the file names it (`None`: a person's hold,
    /// [`Hold::person_within`] the timeout).
    pub hold: Option<Hold>,
    /// Move the pointer to the point (and let the page go quiet) before pressing.
    pub move_first: bool,
}

#[derive(Debug, Clone)]
pub struct Pacing {
    /// Pause after a click's loops complete (or time out) before the next click.
    pub interval_ms: u64,
    /// Per-click bound: a loop with no reply within this is unanswered, and the run
    /// moves on, so a run takes at most clicks x (timeout + interval).
    pub timeout_ms: u64,
    /// After a click's loops have painted, wait until no WebSocket message has arrived
    /// for this long (within the timeout), so late replies to this click cannot pose as
    /// answers to the next one.
    pub settle_ms: u64,
    /// DOM event types that start a loop.
    pub loop_events: Vec<String>,
    /// Before each input, a pause drawn uniformly from [0, this) ms, so no input goes out
    /// at a fixed phase of the page's frame clock. `None`: one frame interval, measured on
    /// the page before the clicks; 0: off.
    pub phase_jitter_ms: Option<f64>,
    /// This many clicks in a row with no WebSocket message from the target's socket since
    /// their press end the run as stalled (exit 3); 0: never.
    pub stall_clicks: u32,
}

/// When a click's release follows its press (`clicks.hold_ms`, `clicks.hold_range_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Exactly this many ms after the press, answered or not: the release may share the
    /// press's window, and pairing then says so (`docs/pilot-file.md`).
    Fixed(u64),
    /// A person's hold: no sooner than a hold drawn uniformly from `[min_ms, max_ms]` after
    /// the press, and only once the press's loop has ended and the socket has been quiet
    /// for `settle_ms`, so nothing the press caused is in flight when the release goes.
    Person { min_ms: u64, max_ms: u64 },
}

impl Hold {
    /// People hold a mouse button about 100 ms; the range keeps the release's moment off
    /// any clock of the app's or the browser's.
    pub const PERSON: Hold = Hold::Person {
        min_ms: 60,
        max_ms: 140,
    };

    /// The default hold under a per-click timeout of `timeout_ms`: [`Hold::PERSON`],
    /// shortened to fit inside a timeout shorter than it.
    pub fn person_within(timeout_ms: u64) -> Hold {
        Hold::Person {
            min_ms: 60.min(timeout_ms / 4),
            max_ms: 140.min(timeout_ms / 2),
        }
    }

    /// The longest hold it can ask for, ms.
    pub fn max_ms(self) -> u64 {
        match self {
            Hold::Fixed(ms) => ms,
            Hold::Person { max_ms, .. } => max_ms,
        }
    }

    /// The pilot-file key that sets it.
    pub fn key(self) -> &'static str {
        match self {
            Hold::Fixed(_) => "clicks.hold_ms",
            Hold::Person { .. } => "clicks.hold_range_ms",
        }
    }
}

/// A parsed, validated pilot file.
#[derive(Debug, Clone)]
pub struct Pilot {
    /// Path as given, or [`BUILTIN_NAME`].
    pub source: String,
    /// Hex SHA-256 of the file's bytes.
    pub hash: String,
    pub target: Target,
    pub setup: Vec<SetupStep>,
    pub clicks: Clicks,
    pub pacing: Pacing,
    pub recorder: RecorderConfig,
    pub answer: AnswerSpec,
    pub arms: BTreeMap<String, Arm>,
    /// `[typing]`: text typed as loops instead of clicks.
    pub typing: Option<crate::type_spec::TypingSpec>,
    /// `[[gestures]]`: drags and hovers made after the clicks.
    pub gestures: Vec<crate::gesture::Gesture>,
}

struct Ctx<'a> {
    source: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: &Range<usize>, key: &str, msg: impl std::fmt::Display) -> anyhow::Error {
        toml_input::key_error(self.source, self.text, span, key, msg).into()
    }
}

impl Pilot {
    /// Reads and validates a pilot file.
    pub fn load(path: &Path) -> Result<Pilot> {
        let text = arena_sys::fifo::read_to_string_announced(path, "pilot file").map_err(|e| {
            anyhow::Error::new(Exit::bad_input(format!(
                "{}: cannot read pilot file: {e}",
                path.display()
            )))
        })?;
        Pilot::parse(&path.display().to_string(), &text)
    }

    /// The built-in fixture pilot.
    pub fn builtin() -> Result<Pilot> {
        Pilot::parse(BUILTIN_NAME, BUILTIN_FIXTURE_PILOT)
    }

    /// `--pilot FILE` when given, else the built-in fixture pilot.
    pub fn load_or_builtin(path: Option<&PathBuf>) -> Result<Pilot> {
        match path {
            Some(p) => Pilot::load(p),
            None => Pilot::builtin(),
        }
    }

    pub fn parse(source: &str, text: &str) -> Result<Pilot> {
        let cx = Ctx { source, text };
        let raw: RawPilot = toml_input::parse(source, text)?;
        let target = raw
            .target
            .map(|t| t.into_inner())
            .unwrap_or_else(|| Target {
                canvas: default_canvas(),
                idle_reply_bytes: default_idle_reply_bytes(),
                ..Target::default()
            });
        let pacing = parse_pacing(&cx, raw.pacing)?;
        let clicks = parse_clicks(&cx, raw.clicks, pacing.timeout_ms)?;
        let answer = match raw.answer {
            Some(a) => parse_answer(&cx, a, !clicks.keys.is_empty())?,
            None => AnswerSpec::default(),
        };
        let typing = parse_typing_section(&cx, raw.typing, &target, &clicks)?;
        Ok(Pilot {
            typing,
            source: source.to_string(),
            hash: hex(&Sha256::digest(text.as_bytes())),
            setup: parse_setup(&cx, raw.setup)?,
            pacing,
            recorder: parse_recorder(&cx, raw.classifier, raw.recorder)?,
            arms: parse_arms(&cx, &target, raw.arms)?,
            gestures: crate::gesture::parse_gestures(source, text, raw.gestures)?,
            target,
            clicks,
            answer,
        })
    }

    /// The named arm, or an error listing the arms there are. With no name: the first
    /// arm (`stock` when present), or an empty arm named `default` when none exist.
    pub fn arm(&self, name: Option<&str>) -> Result<(String, Arm)> {
        match name {
            Some(n) => self
                .arms
                .get(n)
                .map(|a| (n.to_string(), a.clone()))
                .ok_or_else(|| {
                    anyhow::Error::new(Exit::bad_input(format!(
                        "{}: no arm `{n}` (arms: {})",
                        self.source,
                        self.arm_names().join(", ")
                    )))
                }),
            None => {
                if let Some(a) = self.arms.get("stock") {
                    return Ok(("stock".into(), a.clone()));
                }
                Ok(self
                    .arms
                    .iter()
                    .next()
                    .map(|(n, a)| (n.clone(), a.clone()))
                    .unwrap_or_else(|| ("default".into(), Arm::default())))
            }
        }
    }

    pub fn arm_names(&self) -> Vec<String> {
        self.arms.keys().cloned().collect()
    }
}

/// `[typing]`, which replaces the clicks (a run is one gesture, so its loops are never
/// pooled with another's).
fn parse_typing_section(
    cx: &Ctx,
    raw: Option<Spanned<crate::type_spec::RawTyping>>,
    target: &Target,
    clicks: &Clicks,
) -> Result<Option<crate::type_spec::TypingSpec>> {
    let Some(raw) = raw else { return Ok(None) };
    if !clicks.keys.is_empty() {
        return Err(cx.err(
            &raw.span(),
            "typing",
            "give `[typing]` or `clicks.keys`, not both",
        ));
    }
    let err = |span: &Range<usize>, key: &str, msg: String| cx.err(span, key, msg);
    crate::type_spec::parse_typing(raw, &target.canvas, &err).map(Some)
}

/// `[[setup]]`: exactly one action per step, click points on the canvas.
fn parse_setup(cx: &Ctx, raw: Vec<Spanned<SetupStep>>) -> Result<Vec<SetupStep>> {
    let mut setup = Vec::with_capacity(raw.len());
    for (i, step) in raw.into_iter().enumerate() {
        let span = step.span();
        let s = step.into_inner();
        let actions = [
            s.wait_bytes.is_some(),
            s.quiet_ms.is_some(),
            s.click.is_some(),
            s.key.is_some(),
            s.eval.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if actions != 1 {
            return Err(cx.err(
                &span,
                &format!("setup[{i}]"),
                format!(
                    "a step needs exactly one of wait_bytes, quiet_ms, click, key, eval (found {actions})"
                ),
            ));
        }
        if let Some([x, y]) = s.click {
            if !(0.0..=1.0).contains(&x) || !(0.0..=1.0).contains(&y) {
                return Err(cx.err(
                    &span,
                    &format!("setup[{i}].click"),
                    "canvas fractions must be within 0..=1",
                ));
            }
        }
        setup.push(s);
    }
    Ok(setup)
}

/// A `[x0, y0, x1, y1]` region of canvas fractions, non-empty.
fn region(cx: &Ctx, span: &Range<usize>, key: &str, r: [f64; 4]) -> Result<[f64; 4]> {
    let ok = r.iter().all(|v| (0.0..=1.0).contains(v)) && r[0] < r[2] && r[1] < r[3];
    if !ok {
        return Err(cx.err(
            span,
            key,
            "expected [x0, y0, x1, y1] canvas fractions with 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1",
        ));
    }
    Ok(r)
}

/// `[clicks]`: where, how many, which pattern, keys instead of clicks, the click's shape.
fn parse_clicks(cx: &Ctx, raw: Option<Spanned<RawClicks>>, timeout_ms: u64) -> Result<Clicks> {
    let mut clicks = Clicks {
        region: [0.1, 0.1, 0.9, 0.9],
        count: 156,
        seed: 1,
        pattern: Pattern::Random,
        warmup: 1,
        keys: Vec::new(),
        hold: None,
        move_first: false,
    };
    let Some(c) = raw.map(Spanned::into_inner) else {
        return Ok(clicks);
    };
    clicks.hold = parse_hold(cx, c.hold_ms, c.hold_range_ms, timeout_ms)?;
    if let Some(r) = c.region {
        clicks.region = region(cx, &r.span(), "clicks.region", r.into_inner())?;
    }
    if let Some(n) = c.count {
        if *n.get_ref() == 0 {
            return Err(cx.err(&n.span(), "clicks.count", "must be at least 1"));
        }
        clicks.count = n.into_inner();
    }
    if let Some(b) = c.button.filter(|b| b.get_ref() != "left") {
        return Err(cx.err(
            &b.span(),
            "clicks.button",
            format!(
                "`{}` is not supported: trusted clicks are dispatched with the left button",
                b.get_ref()
            ),
        ));
    }
    if let Some(p) = c.pattern {
        clicks.pattern = match p.get_ref().as_str() {
            "random" => Pattern::Random,
            "grid" => Pattern::Grid,
            other => {
                return Err(cx.err(
                    &p.span(),
                    "clicks.pattern",
                    format!("expected random or grid, got `{other}`"),
                ))
            }
        };
    }
    if let Some(k) = c.keys {
        if k.get_ref().is_empty() || k.get_ref().iter().any(|x| x.is_empty()) {
            return Err(cx.err(
                &k.span(),
                "clicks.keys",
                "name at least one DOM key value (e.g. \"ArrowRight\"), none empty",
            ));
        }
        clicks.keys = k.into_inner();
    }
    clicks.seed = c.seed.unwrap_or(clicks.seed);
    clicks.warmup = c.warmup.unwrap_or(clicks.warmup);
    clicks.move_first = c.move_first.unwrap_or(false);
    Ok(clicks)
}

/// `clicks.hold_ms` or `clicks.hold_range_ms` (not both), each no longer than the timeout:
/// a release held past it would end the press's loop before the release went.
fn parse_hold(
    cx: &Ctx,
    fixed: Option<Spanned<u64>>,
    range: Option<Spanned<[u64; 2]>>,
    timeout_ms: u64,
) -> Result<Option<Hold>> {
    let (hold, span) = match (fixed, range) {
        (Some(_), Some(r)) => {
            return Err(cx.err(
                &r.span(),
                "clicks.hold_range_ms",
                "give `hold_ms` (a fixed hold) or `hold_range_ms` (a person's), not both",
            ))
        }
        (Some(h), None) => (Hold::Fixed(*h.get_ref()), h.span()),
        (None, Some(r)) => {
            let [min_ms, max_ms] = *r.get_ref();
            if min_ms > max_ms {
                return Err(cx.err(
                    &r.span(),
                    "clicks.hold_range_ms",
                    format!("expected [min, max] with min <= max, got [{min_ms}, {max_ms}]"),
                ));
            }
            (Hold::Person { min_ms, max_ms }, r.span())
        }
        (None, None) => return Ok(None),
    };
    if let Some(why) = hold_problem(hold, timeout_ms) {
        return Err(cx.err(&span, hold.key(), why));
    }
    Ok(Some(hold))
}

/// Why `hold` cannot work with a per-click timeout of `timeout_ms`, if it cannot.
pub fn hold_problem(hold: Hold, timeout_ms: u64) -> Option<String> {
    (hold.max_ms() >= timeout_ms).then(|| {
        format!(
            "a hold of up to {} ms is not shorter than the per-click timeout ({timeout_ms} ms): the press's loop would time out before its release; shorten the hold or raise `pacing.timeout_ms`",
            hold.max_ms()
        )
    })
}

/// Silent clicks in a row that end a run, by default: one silent click is a slow
/// moment, three are a target that stopped.
pub const DEFAULT_STALL_CLICKS: u32 = 3;

/// The most `pacing.stall_clicks` takes (a bound past any run's clicks is a typo).
pub const MAX_STALL_CLICKS: u32 = 1_000_000;

/// The longest pause, quiet wait or per-click timeout a pilot file or flag may ask for: a
/// day, in ms (more is a typo, and past `u64` ms a deadline overflows).
pub const MAX_PACING_MS: u64 = arena_report::ranges::DAY_MS;

/// `[pacing]`: the pause, the per-click bound, the quiet wait, the loop events, the stall.
fn parse_pacing(cx: &Ctx, raw: Option<Spanned<RawPacing>>) -> Result<Pacing> {
    let mut pacing = Pacing {
        interval_ms: 20,
        timeout_ms: 2000,
        settle_ms: 100,
        loop_events: vec!["mousedown".into(), "mouseup".into(), "keydown".into()],
        phase_jitter_ms: None,
        stall_clicks: DEFAULT_STALL_CLICKS,
    };
    let Some(p) = raw.map(Spanned::into_inner) else {
        return Ok(pacing);
    };
    if let Some(j) = p.phase_jitter_ms {
        let v = *j.get_ref();
        if !(0.0..=1000.0).contains(&v) {
            return Err(cx.err(
                &j.span(),
                "pacing.phase_jitter_ms",
                format!("must be within 0..=1000 ms, got {v}"),
            ));
        }
        pacing.phase_jitter_ms = Some(v);
    }
    if let Some(n) = p.stall_clicks {
        let v = *n.get_ref();
        pacing.stall_clicks = u32::try_from(v)
            .ok()
            .filter(|&v| v <= MAX_STALL_CLICKS)
            .ok_or_else(|| {
                cx.err(
                    &n.span(),
                    "pacing.stall_clicks",
                    format!("must be within 0..={MAX_STALL_CLICKS} clicks (0: never), got {v}"),
                )
            })?;
    }
    let ms = |v: Option<Spanned<u64>>, key: &str, lo: u64, default: u64| match v {
        Some(v) if !(lo..=MAX_PACING_MS).contains(v.get_ref()) => Err(cx.err(
            &v.span(),
            key,
            format!(
                "must be within {lo}..={MAX_PACING_MS} ms (a day), got {}",
                v.get_ref()
            ),
        )),
        Some(v) => Ok(v.into_inner()),
        None => Ok(default),
    };
    pacing.interval_ms = ms(p.interval_ms, "pacing.interval_ms", 0, pacing.interval_ms)?;
    pacing.settle_ms = ms(p.settle_ms, "pacing.settle_ms", 0, pacing.settle_ms)?;
    pacing.timeout_ms = ms(p.timeout_ms, "pacing.timeout_ms", 1, pacing.timeout_ms)?;
    if let Some(ev) = p.loop_events {
        if ev.get_ref().is_empty() {
            return Err(cx.err(
                &ev.span(),
                "pacing.loop_events",
                "name at least one discrete event (mousedown, mouseup, keydown)",
            ));
        }
        pacing.loop_events = ev.into_inner();
    }
    Ok(pacing)
}

/// `[classifier]` and `[recorder]`: what the page's recorder is told.
fn parse_recorder(
    cx: &Ctx,
    classifier: Option<Spanned<ClassifierSpec>>,
    raw: Option<Spanned<RawRecorder>>,
) -> Result<RecorderConfig> {
    // The fixture's protocol is the default classifier: first byte 1-5 is input,
    // 0x10 is an ack (docs/fixture-protocol.md).
    let mut recorder =
        RecorderConfig::with_classifier(ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]));
    if let Some(c) = classifier {
        let span = c.span();
        let c = c.into_inner();
        c.validate()
            .map_err(|e| cx.err(&span, &format!("classifier.{}", key_prefix(&e)), e.as_str()))?;
        recorder.classifier = c;
    }
    let Some(r) = raw else {
        return Ok(recorder);
    };
    let span = r.span();
    let r = r.into_inner();
    if let Some(cap) = r.capacity {
        if *cap.get_ref() == 0 {
            return Err(cx.err(&cap.span(), "recorder.capacity", "must be at least 1"));
        }
        recorder.capacity = cap.into_inner();
    }
    if let Some(s) = r.sockets {
        recorder.sockets = s;
    }
    if let Some(app) = r.app {
        app.validate().map_err(|e| {
            cx.err(
                &span,
                &format!("recorder.app.{}", key_prefix(&e)),
                e.as_str(),
            )
        })?;
        recorder.app = Some(app);
    }
    Ok(recorder)
}

/// `[arms.NAME]`: knobs and the browser are checked now, not when the arm runs, so a typo
/// fails before any browser starts; an external target takes no knobs.
fn parse_arms(
    cx: &Ctx,
    target: &Target,
    raw: BTreeMap<String, Spanned<Arm>>,
) -> Result<BTreeMap<String, Arm>> {
    let mut arms = BTreeMap::new();
    for (name, arm) in raw {
        let span = arm.span();
        let arm = arm.into_inner();
        if let Some(l) = &arm.link {
            arena_link::LinkSpec::parse(l)
                .map_err(|e| cx.err(&span, &format!("arms.{name}.link"), e))?;
        }
        if let Some(b) = &arm.browser {
            if let Some((key, why)) = b.emulation().problem() {
                let at = b.span_of(key).unwrap_or_else(|| span.clone());
                return Err(cx.err(&at, &format!("arms.{name}.browser.{key}"), why));
            }
        }
        if target.url.is_none() {
            let pairs: Vec<(String, String)> = arm.knobs.clone().into_iter().collect();
            arena_fixture::Knobs::from_pairs(&pairs)
                .map_err(|e| cx.err(&span, &format!("arms.{name}.knobs"), e))?;
        } else if !arm.knobs.is_empty() {
            return Err(cx.err(
                &span,
                &format!("arms.{name}.knobs"),
                "knobs apply to the built-in fixture only; an external target takes url_params, env or setup_command",
            ));
        }
        arms.insert(name, arm);
    }
    Ok(arms)
}

/// `[answer] oracle`.
fn parse_oracle(cx: &Ctx, o: &Spanned<String>) -> Result<Requested> {
    Ok(match o.get_ref().as_str() {
        "auto" => Requested::Auto,
        "pixels" => Requested::Pixels,
        "reply" => Requested::Reply,
        "js" => Requested::Js,
        other => {
            return Err(cx.err(
                &o.span(),
                "answer.oracle",
                format!("expected auto, pixels, reply or js, got `{other}`"),
            ))
        }
    })
}

/// `[answer]`: one oracle and only the keys that belong to it.
fn parse_answer(cx: &Ctx, a: Spanned<RawAnswer>, keys: bool) -> Result<AnswerSpec> {
    let span = a.span();
    let a = a.into_inner();
    let mut spec = AnswerSpec::default();
    if let Some(o) = &a.oracle {
        spec.oracle = parse_oracle(cx, o)?;
    }
    let pixels = matches!(spec.oracle, Requested::Auto | Requested::Pixels);
    let only = |key: &str, span: &Range<usize>, ok: bool, whose: &str| -> Result<()> {
        if ok {
            Ok(())
        } else {
            Err(cx.err(
                span,
                &format!("answer.{key}"),
                format!(
                    "belongs to the {whose} oracle, but `answer.oracle` is `{}`",
                    spec.oracle.name()
                ),
            ))
        }
    };
    if let Some(r) = a.radius_px {
        only("radius_px", &r.span(), pixels, "pixels")?;
        let v = *r.get_ref();
        if !(v.is_finite() && (0.0..=4096.0).contains(&v)) {
            return Err(cx.err(
                &r.span(),
                "answer.radius_px",
                "must be within 0..=4096 CSS px",
            ));
        }
        spec.radius_px = v;
    }
    if let Some(r) = a.rect {
        only("rect", &r.span(), pixels, "pixels")?;
        spec.rect = Some(region(cx, &span, "answer.rect", r.into_inner())?);
    }
    if let Some(m) = a.min_bytes {
        only(
            "min_bytes",
            &m.span(),
            spec.oracle == Requested::Reply,
            "reply",
        )?;
        spec.min_bytes = m.into_inner();
    }
    if let Some(j) = a.js {
        only("js", &j.span(), spec.oracle == Requested::Js, "js")?;
        if j.get_ref().trim().is_empty() {
            return Err(cx.err(&j.span(), "answer.js", "is empty"));
        }
        spec.js = Some(j.into_inner());
    }
    if spec.oracle == Requested::Js && spec.js.is_none() {
        return Err(cx.err(
            &span,
            "answer.js",
            "the js oracle needs `js = \"expression over input\"`",
        ));
    }
    if spec.oracle == Requested::Pixels && keys && spec.rect.is_none() {
        return Err(cx.err(
            &span,
            "answer.rect",
            "key input has no point to watch: the pixels oracle needs `rect` with `clicks.keys`",
        ));
    }
    Ok(spec)
}

/// `input[0]: ...` -> `input[0]`, so the key path in the message is the full one.
fn key_prefix(msg: &str) -> &str {
    msg.split(':').next().unwrap_or(msg)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Clicks {
    /// The click positions, as canvas fractions.
    pub fn positions(&self) -> Vec<(f64, f64)> {
        let [x0, y0, x1, y1] = self.region;
        let (w, h) = (x1 - x0, y1 - y0);
        match self.pattern {
            Pattern::Random => {
                // SplitMix64, seeded by the seed itself and stable across versions, so a seed
                // names the same clicks forever (a library RNG may change its stream).
                let mut rng = arena_sys::rng::SplitMix64::new(self.seed);
                (0..self.count)
                    .map(|_| (x0 + rng.unit() * w, y0 + rng.unit() * h))
                    .collect()
            }
            Pattern::Grid => (0..self.count)
                .map(|i| {
                    let cell = i % 64;
                    let (cx, cy) = ((cell % 8) as f64, (cell / 8) as f64);
                    (x0 + (cx + 0.5) / 8.0 * w, y0 + (cy + 0.5) / 8.0 * h)
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> String {
        let e = Pilot::parse("p.toml", text).expect_err("must fail");
        assert!(
            e.chain().any(|c| c.downcast_ref::<Exit>().is_some()),
            "exit-coded"
        );
        format!("{e:#}")
    }

    #[test]
    fn the_builtin_fixture_pilot_parses() {
        let p = Pilot::builtin().unwrap();
        assert!(p.target.url.is_none());
        assert_eq!(p.target.canvas, "#board");
        assert!(p.arms.contains_key("stock") && p.arms.contains_key("lazy-png"));
        assert_eq!(p.arms["lazy-png"].knobs["lazy_png"], "true");
        assert_eq!(p.arm(None).unwrap().0, "stock");
        assert_eq!(p.hash.len(), 64);
        assert_eq!(p.pacing.stall_clicks, DEFAULT_STALL_CLICKS);
    }

    #[test]
    fn full_file_round() {
        let p = Pilot::parse(
            "p.toml",
            r##"
[target]
url = "http://127.0.0.1:9/app"
canvas = "canvas.main"
label = "firing"

[[setup]]
wait_bytes = 100000
[[setup]]
quiet_ms = 300
[[setup]]
click = [0.5, 0.5]
[[setup]]
key = "Escape"
[[setup]]
eval = "window.ready === true"
timeout_ms = 5000

[clicks]
region = [0.2, 0.2, 0.8, 0.6]
count = 10
seed = 42
button = "left"
pattern = "grid"
warmup = 2

[pacing]
interval_ms = 20
timeout_ms = 700
loop_events = ["mousedown"]
stall_clicks = 5

[classifier]
input = [{ json_key = "type", json_value = "mouse" }]
ack = [{ text_regex = "^ack" }]

[recorder]
capacity = 64
sockets = "cdp"

[arms.a.url_params]
mode = "fast"
[arms.b]
env = { LAZY = "1" }
setup_command = "true"
"##,
        )
        .unwrap();
        assert_eq!(p.setup.len(), 5);
        assert_eq!(p.clicks.count, 10);
        assert_eq!(p.clicks.pattern, Pattern::Grid);
        assert_eq!(p.pacing.timeout_ms, 700);
        assert_eq!(p.pacing.stall_clicks, 5);
        assert_eq!(p.recorder.capacity, 64);
        assert_eq!(p.recorder.sockets, SocketChoice::Cdp);
        assert_eq!(p.arms["a"].url_params["mode"], "fast");
        assert_eq!(p.arms["b"].setup_command.as_deref(), Some("true"));
        let pos = p.clicks.positions();
        assert_eq!(pos.len(), 10);
        assert!(pos
            .iter()
            .all(|&(x, y)| (0.2..=0.8).contains(&x) && (0.2..=0.6).contains(&y)));
        assert!(p.arm(Some("zzz")).is_err());
    }

    #[test]
    fn errors_name_line_and_key() {
        let m = msg("[clicks]\ncount = 3\nregion = [0.5, 0.1, 0.2, 0.9]\n");
        assert!(m.contains("p.toml:3: `clicks.region`"), "{m}");
        let m = msg("\n[clicks]\ncolor = 1\n");
        assert!(m.contains("p.toml:3: `clicks.color`: unknown field"), "{m}");
        let m = msg("[pacing]\ntimeout_ms = \"soon\"\n");
        assert!(m.contains("p.toml:2: `pacing.timeout_ms`"), "{m}");
        let m = msg("[target]\nurl = 5\n");
        assert!(m.contains("p.toml:2: `target.url`: invalid type"), "{m}");
        let m = msg("[[setup]]\nquiet_ms = 3\nkey = \"a\"\n");
        assert!(m.contains("p.toml:1: `setup[0]`"), "{m}");
        let m = msg("[arms.x.knobs]\npng_level = \"12\"\n");
        assert!(m.contains("arms.x.knobs") && m.contains("png_level"), "{m}");
        let m = msg("[classifier]\ninput = [{ min_size = 9, max_size = 2 }]\n");
        assert!(m.contains("`classifier.input[0]`"), "{m}");
        let m = msg("[clicks]\nkeys = []\n");
        assert!(m.contains("p.toml:2: `clicks.keys`"), "{m}");
        let m = msg("[clicks]\nbutton = \"right\"\n");
        assert!(m.contains("clicks.button"), "{m}");
        let m = msg("[target]\nurl = \"http://x\"\n[arms.a.knobs]\ndelay_ms = \"4\"\n");
        assert!(m.contains("external target"), "{m}");
    }

    #[test]
    fn answer_section_takes_one_oracle_and_only_its_keys() {
        let p = Pilot::builtin().unwrap();
        assert_eq!(p.answer, AnswerSpec::default());
        assert_eq!(p.answer.oracle, Requested::Auto);
        let p = Pilot::parse("p.toml", "[answer]\noracle = \"reply\"\nmin_bytes = 900\n").unwrap();
        assert_eq!(
            (p.answer.oracle, p.answer.min_bytes),
            (Requested::Reply, 900)
        );
        let p = Pilot::parse(
            "p.toml",
            "[answer]\nrect = [0.1, 0.1, 0.2, 0.3]\nradius_px = 3\n",
        )
        .unwrap();
        assert_eq!(
            (p.answer.rect, p.answer.radius_px),
            (Some([0.1, 0.1, 0.2, 0.3]), 3.0)
        );
        for (text, want) in [
            (
                "[answer]\noracle = \"vibes\"\n",
                "p.toml:2: `answer.oracle`: expected auto, pixels, reply or js",
            ),
            (
                "[answer]\noracle = \"pixels\"\nmin_bytes = 4\n",
                "p.toml:3: `answer.min_bytes`: belongs to the reply oracle",
            ),
            (
                "[answer]\noracle = \"reply\"\nradius_px = 4\n",
                "p.toml:3: `answer.radius_px`: belongs to the pixels oracle",
            ),
            (
                "[answer]\nradius_px = -1\n",
                "p.toml:2: `answer.radius_px`: must be within",
            ),
            (
                "[answer]\nrect = [0.5, 0.1, 0.2, 0.9]\n",
                "`answer.rect`: expected [x0, y0, x1, y1]",
            ),
            (
                "[answer]\noracle = \"js\"\n",
                "`answer.js`: the js oracle needs",
            ),
            (
                "[answer]\noracle = \"js\"\njs = \"  \"\n",
                "p.toml:3: `answer.js`: is empty",
            ),
            (
                "[answer]\njs = \"true\"\n",
                "`answer.js`: belongs to the js oracle",
            ),
            (
                "[answer]\ncolour = 1\n",
                "p.toml:2: `answer.colour`: unknown field",
            ),
            (
                "[clicks]\nkeys = [\"a\"]\n[answer]\noracle = \"pixels\"\n",
                "key input has no point",
            ),
        ] {
            let m = msg(text);
            assert!(m.contains(want), "{text:?}: {m}");
        }
        // Key input under auto needs no rect: the pilot falls back to replies and says so.
        assert!(Pilot::parse("p.toml", "[clicks]\nkeys = [\"a\"]\n").is_ok());
    }

    #[test]
    fn clicks_release_after_the_answer_unless_a_hold_is_named() {
        let p = Pilot::builtin().unwrap();
        assert_eq!((p.clicks.hold, p.clicks.move_first), (None, false));
        assert_eq!(p.target.idle_reply_bytes, 4096);
        let p = Pilot::parse(
            "p.toml",
            "[target]\nidle_reply_bytes = 40\n[clicks]\nhold_ms = 80\nmove_first = true\n",
        )
        .unwrap();
        assert_eq!(
            (p.clicks.hold, p.clicks.move_first),
            (Some(Hold::Fixed(80)), true)
        );
        assert_eq!(p.target.idle_reply_bytes, 40);
        let p = Pilot::parse("p.toml", "[clicks]\nhold_range_ms = [90, 200]\n").unwrap();
        assert_eq!(
            p.clicks.hold,
            Some(Hold::Person {
                min_ms: 90,
                max_ms: 200
            })
        );
    }

    #[test]
    fn impossible_holds_and_jitters_name_their_key() {
        for (text, want) in [
            (
                "[pacing]\ntimeout_ms = 300\n[clicks]\nhold_ms = 300\n",
                "p.toml:4: `clicks.hold_ms`: a hold of up to 300 ms is not shorter than the per-click timeout (300 ms)",
            ),
            (
                "[clicks]\nhold_range_ms = [100, 5000]\n",
                "p.toml:2: `clicks.hold_range_ms`: a hold of up to 5000 ms",
            ),
            (
                "[clicks]\nhold_range_ms = [100, 50]\n",
                "`clicks.hold_range_ms`: expected [min, max] with min <= max",
            ),
            (
                "[clicks]\nhold_ms = 10\nhold_range_ms = [10, 20]\n",
                "not both",
            ),
            (
                "[pacing]\nphase_jitter_ms = -1.0\n",
                "p.toml:2: `pacing.phase_jitter_ms`: must be within 0..=1000 ms",
            ),
            (
                "[pacing]\ninterval_ms = 5\nstall_clicks = -1\n",
                "p.toml:3: `pacing.stall_clicks`: must be within 0..=1000000 clicks (0: never), got -1",
            ),
            (
                "[pacing]\nstall_clicks = \"three\"\n",
                "p.toml:2: `pacing.stall_clicks`",
            ),
            (
                "[pacing]\ninterval_ms = 86400001\n",
                "p.toml:2: `pacing.interval_ms`: must be within 0..=86400000 ms (a day), got 86400001",
            ),
            (
                "[pacing]\n\nsettle_ms = 18446744073709551615\n",
                "p.toml:3: `pacing.settle_ms`: must be within 0..=86400000 ms",
            ),
            (
                "[pacing]\ntimeout_ms = 0\n",
                "p.toml:2: `pacing.timeout_ms`: must be within 1..=86400000 ms (a day), got 0",
            ),
        ] {
            let m = msg(text);
            assert!(m.contains(want), "{text:?}: {m}");
        }
    }

    #[test]
    fn an_arm_sets_the_browser_and_a_bad_value_names_its_key_and_line() {
        let p = Pilot::parse(
            "p.toml",
            "[arms.hidpi.browser]\ndpr = 2\nviewport = [1280, 800]\ncpu_throttle = 4\n[arms.lo]\n",
        )
        .unwrap();
        let e = p.arms["hidpi"].browser.as_ref().unwrap().emulation();
        assert_eq!(
            e,
            Emulation {
                dpr: Some(2.0),
                viewport: Some((1280, 800)),
                cpu_throttle: Some(4.0)
            }
        );
        assert!(p.arms["lo"].browser.is_none());
        let p = Pilot::parse("p.toml", "[arms.a.browser]\ndpr = 1.25\n").unwrap();
        let e = p.arms["a"].browser.as_ref().unwrap().emulation();
        assert_eq!(
            (e.dpr, e.viewport, e.cpu_throttle),
            (Some(1.25), None, None)
        );
        // The browser is not the fixture's: an external target's arm takes it too.
        let ext = "[target]\nurl = \"http://127.0.0.1:9/\"\n[arms.a.browser]\ncpu_throttle = 2\n";
        assert!(Pilot::parse("p.toml", ext).is_ok());
        for (text, want) in [
            (
                "[arms.a.browser]\ndpr = 2\ncpu_throttle = 0.5\n",
                "p.toml:3: `arms.a.browser.cpu_throttle`: must be within 1..=20",
            ),
            (
                "[arms.a.browser]\ncpu_throttle = 21\n",
                "p.toml:2: `arms.a.browser.cpu_throttle`: must be within 1..=20",
            ),
            (
                "[arms.a.browser]\n\ndpr = 0\n",
                "p.toml:3: `arms.a.browser.dpr`: must be within (0, 8], got 0",
            ),
            (
                "[arms.a.browser]\ndpr = 8.5\n",
                "p.toml:2: `arms.a.browser.dpr`: must be within (0, 8]",
            ),
            (
                "[arms.a.browser]\nviewport = [99, 600]\n",
                "p.toml:2: `arms.a.browser.viewport`: each side must be within 100..=8192 CSS px, got 99x600",
            ),
            (
                "[arms.a.browser]\nviewport = [800, 9000]\n",
                "p.toml:2: `arms.a.browser.viewport`",
            ),
            ("[arms.a.browser]\nviewport = [800]\n", "p.toml:2: `arms.a.browser.viewport`"),
            ("[arms.a.browser]\ndpr = \"2x\"\n", "p.toml:2: `arms.a.browser.dpr`"),
            ("[arms.a.browser]\nzoom = 2\n", "p.toml:2: `arms.a.browser.zoom`: unknown field"),
        ] {
            let m = msg(text);
            assert!(m.contains(want), "{text:?}: {m}");
        }
    }

    #[test]
    fn same_seed_same_clicks() {
        let mk = |seed| Clicks {
            region: [0.0, 0.0, 1.0, 1.0],
            count: 50,
            seed,
            pattern: Pattern::Random,
            warmup: 0,
            keys: Vec::new(),
            hold: None,
            move_first: false,
        };
        assert_eq!(mk(3).positions(), mk(3).positions());
        assert_ne!(mk(3).positions(), mk(4).positions());
    }
}
