//! Continuous pointer input: `[[gestures]]` in the pilot file (docs/pilot-file.md), resolved
//! into the plan's [`GesturePlan`]s, and the stage that performs them after the clicks. A
//! drag is a press, a path of moves and a release; a hover is the path without a button.
//! The moves go at a person's speed (each gap drawn from `rate_hz`), never waiting for the
//! page: Chromium answers a `mouseMoved` only at its next animation frame, so a move
//! awaited before the next is sent would pace the gesture by the frame clock.

use std::ops::Range;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use arena_browser::{CanvasRect, DispatchMouseEventType, Page, Record};
use arena_report::{toml_input, Exit, ExitKind};
use futures::stream::{FuturesUnordered, StreamExt};
use serde::Deserialize;
use toml::Spanned;

use crate::Cancel;

/// What a gesture does with the button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GestureKind {
    /// Left button held from before the first move until after the last.
    Drag,
    /// No button.
    Hover,
}

impl GestureKind {
    /// The name the pilot file, the tables and `moves.csv` use.
    pub fn name(self) -> &'static str {
        match self {
            GestureKind::Drag => "drag",
            GestureKind::Hover => "hover",
        }
    }
}

/// One `[[gestures]]` entry as the pilot file gives it, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Gesture {
    pub kind: GestureKind,
    /// Waypoints, canvas fractions; the moves are spread evenly along them.
    pub path: Vec<[f64; 2]>,
    /// Moves along the path.
    pub moves: u32,
    /// A person's speed, moves per second: each gap is drawn uniformly from
    /// 1/max..1/min s.
    pub rate_hz: [f64; 2],
    /// Times the gesture is made.
    pub repeat: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGesture {
    kind: Spanned<String>,
    path: Spanned<Vec<[f64; 2]>>,
    #[serde(default)]
    moves: Option<Spanned<u32>>,
    #[serde(default)]
    rate_hz: Option<Spanned<[f64; 2]>>,
    #[serde(default)]
    repeat: Option<Spanned<u32>>,
}

/// Default moves per gesture and speed range (the field notes' person: 60-120 moves/s).
pub const DEFAULT_MOVES: u32 = 120;
pub const DEFAULT_RATE_HZ: [f64; 2] = [60.0, 120.0];

/// `[[gestures]]`: each entry checked, errors naming file, line and `gestures[i].KEY`.
pub(crate) fn parse_gestures(
    source: &str,
    text: &str,
    raw: Vec<Spanned<RawGesture>>,
) -> Result<Vec<Gesture>> {
    let err = |span: &Range<usize>, key: String, msg: String| -> anyhow::Error {
        toml_input::key_error(source, text, span, &key, msg).into()
    };
    let mut out = Vec::with_capacity(raw.len());
    let mut total = 0u64;
    for (i, g) in raw.into_iter().enumerate() {
        let g = g.into_inner();
        let kind = match g.kind.get_ref().as_str() {
            "drag" => GestureKind::Drag,
            "hover" => GestureKind::Hover,
            other => {
                return Err(err(
                    &g.kind.span(),
                    format!("gestures[{i}].kind"),
                    format!("expected drag or hover, got `{other}`"),
                ))
            }
        };
        let path = g.path.get_ref().clone();
        if path.len() < 2 {
            let msg = "a path needs at least two [x, y] points".to_string();
            return Err(err(&g.path.span(), format!("gestures[{i}].path"), msg));
        }
        if let Some((k, p)) = path.iter().enumerate().find(|(_, p)| !on_canvas(p)) {
            let msg = format!(
                "point {k} [{}, {}] is outside the canvas: points are canvas fractions within 0..=1",
                p[0], p[1]
            );
            return Err(err(&g.path.span(), format!("gestures[{i}].path"), msg));
        }
        let moves = g.moves.map(|m| (m.span(), m.into_inner()));
        if let Some((span, m)) = moves.as_ref().filter(|(_, m)| !(2..=100_000).contains(m)) {
            let msg = format!("{m} is out of range 2..=100000");
            return Err(err(span, format!("gestures[{i}].moves"), msg));
        }
        let rate = g.rate_hz.map(|r| (r.span(), r.into_inner()));
        if let Some((span, [lo, hi])) = rate.as_ref().filter(|(_, r)| !rate_ok(r)) {
            let msg = format!(
                "expected [min, max] moves/s with 1 <= min <= max <= 1000, got [{lo}, {hi}]"
            );
            return Err(err(span, format!("gestures[{i}].rate_hz"), msg));
        }
        let repeat = g.repeat.map(|r| (r.span(), r.into_inner()));
        if let Some((span, r)) = repeat
            .as_ref()
            .filter(|(_, r)| !(1..=MAX_REPEAT).contains(r))
        {
            let msg = format!("{r} is out of range 1..={MAX_REPEAT}");
            return Err(err(span, format!("gestures[{i}].repeat"), msg));
        }
        let gesture = Gesture {
            kind,
            path,
            moves: moves.map_or(DEFAULT_MOVES, |(_, m)| m),
            rate_hz: rate.map_or(DEFAULT_RATE_HZ, |(_, r)| r),
            repeat: repeat.as_ref().map_or(1, |(_, r)| *r),
        };
        total += u64::from(gesture.moves) * u64::from(gesture.repeat);
        if total > MAX_TOTAL_MOVES {
            let msg = format!(
                "the file's gestures reach {total} moves, past the {MAX_TOTAL_MOVES} a run may plan (hours at a person's pace; each move is planned before the browser starts)"
            );
            let span = repeat.map_or(g.path.span(), |(span, _)| span);
            return Err(err(&span, format!("gestures[{i}].repeat"), msg));
        }
        out.push(gesture);
    }
    Ok(out)
}

/// Times one gesture may be repeated.
pub const MAX_REPEAT: u32 = 1000;

/// Moves of every gesture of a file, repeats included: about 3 hours at 100 moves/s, and
/// 24 MB of planned points and gaps.
pub const MAX_TOTAL_MOVES: u64 = 1_000_000;

fn on_canvas(p: &[f64; 2]) -> bool {
    p.iter().all(|v| (0.0..=1.0).contains(v))
}

fn rate_ok(&[lo, hi]: &[f64; 2]) -> bool {
    lo.is_finite() && hi.is_finite() && 1.0 <= lo && lo <= hi && hi <= 1000.0
}

/// The event types the page's oracle watches as moves when the file has gestures.
pub fn watched_events(gestures: &[GesturePlan]) -> Vec<String> {
    if gestures.is_empty() {
        Vec::new()
    } else {
        vec!["mousemove".into()]
    }
}

/// One gesture of a run, resolved: where each move goes and when.
#[derive(Debug, Clone, PartialEq)]
pub struct GesturePlan {
    pub kind: GestureKind,
    /// Move points, canvas fractions, in order.
    pub points: Vec<(f64, f64)>,
    /// The gap before each move, ms (the first is from the gesture's start).
    pub gaps_ms: Vec<f64>,
}

/// Every gesture of the file, each `repeat` times, its gaps drawn from the run's seed.
pub fn plan_gestures(gestures: &[Gesture], seed: u64) -> Vec<GesturePlan> {
    let mut rng = arena_sys::rng::SplitMix64::new(seed ^ 0x6765_7374_7572_6573);
    let mut out = Vec::new();
    for g in gestures {
        let points = spread(&g.path, g.moves as usize);
        let [lo, hi] = g.rate_hz;
        for _ in 0..g.repeat {
            let gaps_ms = (0..points.len())
                .map(|_| 1e3 / hi + rng.unit() * (1e3 / lo - 1e3 / hi))
                .collect();
            out.push(GesturePlan {
                kind: g.kind,
                points: points.clone(),
                gaps_ms,
            });
        }
    }
    out
}

/// `n` points evenly spaced by arc length along `path`, its ends included.
fn spread(path: &[[f64; 2]], n: usize) -> Vec<(f64, f64)> {
    let seg: Vec<f64> = path
        .windows(2)
        .map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]))
        .collect();
    let total: f64 = seg.iter().sum();
    (0..n)
        .map(|k| {
            let mut d = total * k as f64 / (n - 1).max(1) as f64;
            for (i, &len) in seg.iter().enumerate() {
                if d <= len || i == seg.len() - 1 {
                    let f = if len > 0.0 { (d / len).min(1.0) } else { 0.0 };
                    let (a, b) = (path[i], path[i + 1]);
                    return (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f);
                }
                d -= len;
            }
            (path[0][0], path[0][1])
        })
        .collect()
}

/// What one gesture left on the page: the records of its moves, from its first move until
/// the page went quiet after the last, and how many moves the tool dispatched.
#[derive(Debug, Clone)]
pub struct GestureRecords {
    pub kind: GestureKind,
    pub dispatched: u64,
    pub records: Vec<Record>,
    /// When the page had each watched move, `(seq, page ms)`.
    pub delivered: Vec<(u64, f64)>,
}

/// Makes every gesture of the plan, one after another. Before each, the pointer is put at
/// its start (pressed, for a drag) and the page left to go quiet; those records and the
/// release's are not the gesture's.
pub async fn perform_all(
    page: &Page,
    rect: &CanvasRect,
    plans: &[GesturePlan],
    (settle, timeout): (Duration, Duration),
    cancel: &Cancel,
) -> Result<Vec<GestureRecords>> {
    let mut out = Vec::with_capacity(plans.len());
    for (i, g) in plans.iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(anyhow!(Exit::new(
                ExitKind::Interrupted,
                format!("interrupted after {i} of {} gestures", plans.len())
            )));
        }
        let points: Vec<(f64, f64)> = g
            .points
            .iter()
            .map(|&(x, y)| rect.page_fraction(x, y))
            .collect();
        let buttons = i64::from(g.kind == GestureKind::Drag);
        let (x0, y0) = points[0];
        page.mouse(DispatchMouseEventType::MouseMoved, x0, y0, 0)
            .await?;
        if g.kind == GestureKind::Drag {
            page.press(x0, y0).await?;
        }
        page.wait_quiet(settle, timeout).await?;
        page.drain().await.context("draining before a gesture")?;
        page.take_delivered().await?;
        dispatch(page, &points, &g.gaps_ms, buttons).await?;
        page.wait_quiet(settle, timeout).await?;
        let drain = page.drain().await.context("draining a gesture")?;
        let delivered = page.take_delivered().await?;
        if g.kind == GestureKind::Drag {
            let &(xn, yn) = points.last().unwrap_or(&(x0, y0));
            page.release(xn, yn).await?;
            page.wait_quiet(settle, timeout).await?;
            page.drain().await.context("draining after a drag")?;
        }
        out.push(GestureRecords {
            kind: g.kind,
            dispatched: points.len() as u64,
            records: drain.records,
            delivered,
        });
    }
    Ok(out)
}

/// Sends each move at its due time, without awaiting the ones before it (CDP keeps a
/// session's commands in order), and then awaits them all.
async fn dispatch(page: &Page, points: &[(f64, f64)], gaps_ms: &[f64], buttons: i64) -> Result<()> {
    let start = tokio::time::Instant::now();
    let mut due = 0.0;
    let mut sent = FuturesUnordered::new();
    for (&(x, y), gap) in points.iter().zip(gaps_ms) {
        due += gap;
        let at = start + Duration::from_secs_f64(due / 1e3);
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(at) => break,
                Some(r) = sent.next() => r?,
            }
        }
        sent.push(page.mouse(DispatchMouseEventType::MouseMoved, x, y, buttons));
    }
    while let Some(r) = sent.next().await {
        r?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_are_spread_along_the_path_and_gaps_within_the_rate() {
        let p = spread(&[[0.0, 0.0], [0.5, 0.0], [0.5, 0.5]], 5);
        let want = [(0.0, 0.0), (0.25, 0.0), (0.5, 0.0), (0.5, 0.25), (0.5, 0.5)];
        for (a, b) in p.iter().zip(want) {
            assert!(
                (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9,
                "{p:?}"
            );
        }
        let g = Gesture {
            kind: GestureKind::Hover,
            path: vec![[0.1, 0.5], [0.9, 0.5]],
            moves: 200,
            rate_hz: [60.0, 120.0],
            repeat: 2,
        };
        let plans = plan_gestures(&[g], 7);
        assert_eq!(plans.len(), 2);
        let gaps = &plans[0].gaps_ms;
        assert!(gaps
            .iter()
            .all(|&d| (1e3 / 120.0..=1e3 / 60.0).contains(&d)));
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((11.0..14.0).contains(&mean), "mean gap {mean} ms");
        assert_ne!(
            plans[0].gaps_ms, plans[1].gaps_ms,
            "each repeat draws its own"
        );
        assert_eq!(
            plan_gestures(&[plans_src()], 7),
            plan_gestures(&[plans_src()], 7)
        );
    }

    #[test]
    fn bad_gestures_are_exit_2_naming_the_key() {
        let bad = [
            (
                "kind = \"swipe\"\npath = [[0.1, 0.1], [0.2, 0.2]]",
                "gestures[0].kind",
            ),
            ("kind = \"drag\"\npath = [[0.1, 0.1]]", "gestures[0].path"),
            (
                "kind = \"drag\"\npath = [[0.1, 0.1], [0.2, -0.1]]",
                "gestures[0].path",
            ),
            (
                "kind = \"hover\"\npath = [[0.1, 0.1], [0.2, 0.2]]\nmoves = 1",
                "gestures[0].moves",
            ),
            (
                "kind = \"hover\"\npath = [[0.1, 0.1], [0.2, 0.2]]\nrate_hz = [120, 60]",
                "gestures[0].rate_hz",
            ),
            (
                "kind = \"hover\"\npath = [[0.1, 0.1], [0.2, 0.2]]\nrepeat = 0",
                "gestures[0].repeat",
            ),
            // A billion repeats planned 22 GB before any browser started.
            (
                "kind = \"hover\"\npath = [[0.1, 0.1], [0.2, 0.2]]\nrepeat = 1000000000",
                "1000000000 is out of range 1..=1000",
            ),
            (
                "kind = \"hover\"\npath = [[0.1, 0.1], [0.2, 0.2]]\nmoves = 100000\nrepeat = 11",
                "reach 1100000 moves, past the 1000000",
            ),
            (
                "kind = \"hover\"\npath = [[0.1, 0.1], [0.2, 0.2]]\nspeed = 3",
                "speed",
            ),
        ];
        for (body, key) in bad {
            let text = format!("[[gestures]]\n{body}\n");
            let e = crate::Pilot::parse("g.toml", &text).unwrap_err();
            assert_eq!(
                ExitKind::of(&e).map(ExitKind::code),
                Some(2),
                "{body}: {e:#}"
            );
            let msg = format!("{e:#}");
            assert!(
                msg.contains("g.toml:") && msg.contains(key),
                "{body}: {msg}"
            );
        }
        let ok = crate::Pilot::parse(
            "g.toml",
            "[[gestures]]\nkind = \"drag\"\npath = [[0, 0], [1, 1]]\n",
        )
        .unwrap();
        assert_eq!(ok.gestures[0].moves, DEFAULT_MOVES);
        assert_eq!(ok.gestures[0].rate_hz, DEFAULT_RATE_HZ);
    }

    fn plans_src() -> Gesture {
        Gesture {
            kind: GestureKind::Drag,
            path: vec![[0.2, 0.2], [0.8, 0.8]],
            moves: 10,
            rate_hz: DEFAULT_RATE_HZ,
            repeat: 1,
        }
    }
}
