//! Which oracle closes a run's loops: asked of the pilot file, then of the page at the
//! first click point, before any click is measured.

use anyhow::{anyhow, Result};
use arena_browser::Page;
use arena_report::Exit;
use arena_run::AnswerInfo;

use crate::answer::AnswerRule;
use crate::scenario::{Pilot, Requested};

/// The in-page oracle the pilot file asks for (none for `reply`, and none for `auto` on key
/// input without a rect, which has no point to watch).
pub(crate) fn page_oracle(pilot: &Pilot, timeout_ms: u64) -> Option<arena_browser::PageOracle> {
    let a = &pilot.answer;
    if pilot.recorder.app.is_some() {
        return None;
    }
    let kind = match a.oracle {
        Requested::Reply => return None,
        Requested::Auto if !pilot.clicks.keys.is_empty() && a.rect.is_none() => return None,
        Requested::Auto | Requested::Pixels => arena_browser::PageOracleKind::Pixels,
        Requested::Js => arena_browser::PageOracleKind::Js,
    };
    Some(arena_browser::PageOracle {
        kind,
        radius_px: a.radius_px,
        rect: a.rect,
        js: a.js.clone(),
        canvas: Some(pilot.target.canvas.clone()),
        events: pilot.pacing.loop_events.clone(),
        window_ms: timeout_ms as f64,
        move_events: crate::gesture::watched_events(&pilot.gestures),
        move_radius_px: arena_browser::DEFAULT_MOVE_RADIUS_PX,
    })
}

/// Decides, before measuring, what closes this run's loops. An oracle the pilot file named
/// that cannot work on the target is an error here (exit 2); `auto` falls back to the reply
/// oracle and the run says why.
pub(crate) async fn resolve_answer(
    page: &Page,
    pilot: &Pilot,
    rect: &arena_browser::CanvasRect,
    positions: &[(f64, f64)],
) -> Result<(AnswerRule, AnswerInfo)> {
    let a = &pilot.answer;
    let reply = AnswerRule::Reply {
        min_bytes: a.min_bytes,
    };
    let reply_detail = if a.min_bytes > 0 {
        format!("first reply of {} B or more", a.min_bytes)
    } else {
        "first reply after the send".to_string()
    };
    let info = |oracle: &str, detail: String, fallback: Option<String>| AnswerInfo {
        oracle: oracle.into(),
        requested: a.oracle.name().into(),
        detail,
        fallback,
    };
    let keys = !pilot.clicks.keys.is_empty();
    if a.oracle == Requested::Reply {
        return Ok((reply, info("reply", reply_detail, None)));
    }
    let unusable = if pilot.recorder.app.is_some() {
        Some("the app's own recorder is read, and it has no answer oracle")
    } else if keys && a.rect.is_none() {
        Some("key input has no point to watch and `answer.rect` is not set")
    } else {
        None
    };
    match (unusable, a.oracle) {
        (Some(why), Requested::Auto) => {
            return Ok((reply, info("reply", reply_detail, Some(why.into()))));
        }
        (Some(why), _) => {
            return Err(anyhow!(Exit::bad_input(format!(
                "{}: `answer.oracle = \"{}\"` cannot work here: {why}",
                pilot.source,
                a.oracle.name()
            ))))
        }
        (None, _) => {}
    }
    let point = match (keys, positions.first()) {
        (false, Some(&(fx, fy))) => Some(rect.page_fraction(fx, fy)),
        _ => None,
    };
    let detail = match (a.oracle, a.rect) {
        (Requested::Js, _) => format!("js: {}", a.js.as_deref().unwrap_or("")),
        (_, Some(r)) => format!("rect [{}, {}, {}, {}]", r[0], r[1], r[2], r[3]),
        _ => format!("r={}px", a.radius_px),
    };
    let oracle = if a.oracle == Requested::Js {
        "js"
    } else {
        "pixels"
    };
    match page.probe_answer(point).await {
        Ok(_) => Ok((AnswerRule::Frame, info(oracle, detail, None))),
        Err(why) if a.oracle == Requested::Auto => {
            page.answer_off().await?;
            Ok((reply, info("reply", reply_detail, Some(format!("{why:#}")))))
        }
        Err(why) => Err(anyhow!(Exit::bad_input(format!(
            "{}: `answer.oracle = \"{}\"` cannot work on this target (canvas `{}`): {why:#}",
            pilot.source,
            a.oracle.name(),
            pilot.target.canvas
        )))),
    }
}
