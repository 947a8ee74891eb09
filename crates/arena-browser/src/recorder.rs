//! Configuration of the in-page recorder, the script injected from it, and the conversion
//! of what the page hands back into [`Drain`]s.

use crate::record::{
    ClassifierSpec, Drain, Record, RecordKind, SendClass, SocketSource, NO_TARGET,
};
use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The recorder JS: a function expression taking the configuration object.
pub const RECORDER_JS: &str = include_str!("../assets/recorder.js");

/// Which WebSocket observations a page's drains carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketChoice {
    /// The page hook while it has seen a socket; CDP network events when it has not (the
    /// socket lives in a Worker). CDP events stop being collected once the hook sees one.
    #[default]
    Auto,
    /// Only the page hook.
    PageHook,
    /// Only CDP network events (page-hook socket records are left out of drains).
    Cdp,
}

/// What to inject and how to read it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecorderConfig {
    /// Ring buffer capacity in records.
    #[serde(default = "default_capacity")]
    pub capacity: u32,
    /// Verdict on each send (input / ack / other).
    #[serde(default)]
    pub classifier: ClassifierSpec,
    #[serde(default)]
    pub sockets: SocketChoice,
    /// Read the application's own recorder instead of injecting this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppRecorder>,
    /// The answer oracle the page runs on each painted frame (none: loops end on replies,
    /// judged outside the page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<PageOracle>,
    /// A cold-start measurement's region, watched from the first animation frame (set by
    /// `arena-perf startup`, never by a pilot file).
    #[serde(skip)]
    pub startup: Option<StartupWatch>,
    /// The person's browser the page is shown in (an arm's `browser`): set on the tab
    /// before it navigates, never injected.
    #[serde(skip)]
    pub emulation: Option<crate::emulation::Emulation>,
}

/// A cold start's page. Drains carry, besides the page's own `open` record, a
/// [`RecordKind::WsOpen`] record (event `handshake`) per handshake Chromium's network
/// layer completed (CDP `Network.webSocketHandshakeResponseReceived`, on the page clock):
/// the page's `open` waits for its main thread, which a cold page keeps busy. CDP network
/// events stop once the handshake is seen (unless the sockets are CDP's). With a
/// `region` (`[x, y, width, height]` in CSS px of the canvas `canvas`, a selector; none:
/// the first canvas) one [`RecordKind::RegionPainted`] record marks the first animation
/// frame where its pixels are not all alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartupWatch {
    pub canvas: Option<String>,
    pub region: Option<[f64; 4]>,
}

/// What the in-page oracle watches for after each discrete input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageOracleKind {
    /// The pixels of a region around the input point differ from a snapshot taken when the
    /// input arrived.
    Pixels,
    /// A page predicate (`js`) holds.
    Js,
}

/// The in-page answer oracle: after each trusted input of `events`, every animation frame
/// until `window_ms` is checked; the first frame where the condition holds writes an
/// [`crate::RecordKind::Answer`] record for that input. A frame answers at most one input:
/// a later input whose condition the same frame met (for pixels: on an overlapping region)
/// gets a "claimed" verdict and keeps watching for a change of its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageOracle {
    pub kind: PageOracleKind,
    /// Pixels: half the side of the square watched around the input point, CSS px.
    #[serde(default = "default_radius")]
    pub radius_px: f64,
    /// Pixels: a fixed region `[x0, y0, x1, y1]` in fractions of the canvas instead
    /// (needed for key input, which has no point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rect: Option<[f64; 4]>,
    /// Js: an expression over `input` (`{type, t, x, y}`; x, y in canvas pixels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub js: Option<String>,
    /// CSS selector the watched canvas must match (the canvas under the point is used
    /// when it matches; else the first match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canvas: Option<String>,
    /// DOM event types watched (the pilot's loop events).
    pub events: Vec<String>,
    /// How long an input is watched, ms.
    pub window_ms: f64,
    /// Coalesced event types watched as pointer moves (a gesture's `mousemove`): each is
    /// judged on its own (it neither claims nor is claimed), around its point with
    /// `move_radius_px`, and a move the app's next input send did not carry stops being
    /// watched at that send (it was coalesced into a later move's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub move_events: Vec<String>,
    /// Half the side of the square watched around a move's point, CSS px.
    #[serde(default = "default_move_radius")]
    pub move_radius_px: f64,
}

/// Default move radius, CSS px: a 5 x 5 square, smaller than a move's step at a person's
/// speed, so a mark drawn at one move's point does not answer its neighbour.
pub const DEFAULT_MOVE_RADIUS_PX: f64 = 2.0;

fn default_move_radius() -> f64 {
    DEFAULT_MOVE_RADIUS_PX
}

/// Default pixels radius, CSS px: a 17 x 17 square, small enough to read every frame
/// (about 10 us in a CPU-backed canvas) and large enough to hold a cursor-sized change.
pub const DEFAULT_RADIUS_PX: f64 = 8.0;

fn default_radius() -> f64 {
    DEFAULT_RADIUS_PX
}

impl PageOracle {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.radius_px.is_finite() && self.radius_px >= 0.0 && self.radius_px <= 4096.0) {
            return Err(format!(
                "radius_px: {} is not within 0..=4096",
                self.radius_px
            ));
        }
        if let Some(r) = self.rect {
            let ok = r.iter().all(|v| (0.0..=1.0).contains(v)) && r[0] < r[2] && r[1] < r[3];
            if !ok {
                return Err("rect: expected [x0, y0, x1, y1] canvas fractions with 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1".into());
            }
        }
        if self.kind == PageOracleKind::Js && self.js.as_deref().is_none_or(|j| j.trim().is_empty())
        {
            return Err("js: the js oracle needs an expression".into());
        }
        if !(self.window_ms.is_finite() && self.window_ms > 0.0) {
            return Err("window_ms: must be positive".into());
        }
        Ok(())
    }
}

fn default_capacity() -> u32 {
    1 << 16
}

impl Default for RecorderConfig {
    fn default() -> Self {
        Self {
            capacity: default_capacity(),
            classifier: ClassifierSpec::default(),
            sockets: SocketChoice::Auto,
            app: None,
            answer: None,
            startup: None,
            emulation: None,
        }
    }
}

impl RecorderConfig {
    pub fn with_classifier(classifier: ClassifierSpec) -> Self {
        Self {
            classifier,
            ..Self::default()
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.capacity == 0 {
            return Err("capacity: must be at least 1".into());
        }
        self.classifier
            .validate()
            .map_err(|e| format!("classifier.{e}"))?;
        if let Some(app) = &self.app {
            app.validate().map_err(|e| format!("app.{e}"))?;
        }
        if let Some(a) = &self.answer {
            a.validate().map_err(|e| format!("answer.{e}"))?;
        }
        Ok(())
    }

    /// The document-start script for this configuration.
    pub fn script(&self) -> String {
        let mut cfg = serde_json::json!({
            "capacity": self.capacity,
            "classifier": self.classifier,
        });
        if let Some(a) = &self.answer {
            cfg["answer"] = serde_json::to_value(a).unwrap_or_default();
        }
        if let Some(w) = &self.startup {
            cfg["startup"] = serde_json::to_value(w).unwrap_or_default();
        }
        format!("{RECORDER_JS}({cfg});")
    }
}

/// An application's own recorder: JS expressions to clear and drain it, and how its records
/// map onto [`Record`]s.
///
/// `drain` evaluates (promises are awaited) to an array of objects, or to an object holding
/// that array at `records_key`. Each object's fields are read by the names in `fields`
/// (dotted paths allowed); its kind value (stringified) is looked up in `kinds`. Records of
/// an unmapped kind are skipped and counted in [`Drain::unmapped`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppRecorder {
    pub clear: String,
    pub drain: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_key: Option<String>,
    /// Key (in the drained object) of a dropped-records count, if the app keeps one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_key: Option<String>,
    pub fields: AppFields,
    /// App kind value -> record kind.
    pub kinds: BTreeMap<String, RecordKind>,
    /// App class value -> send class (sends without a mapped class are `Other`).
    #[serde(default)]
    pub classes: BTreeMap<String, SendClass>,
}

/// Field names in the app's records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppFields {
    pub kind: String,
    /// Page-clock milliseconds.
    pub t_ms: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The app's own sequence number; without it records are numbered in drain order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<String>,
}

impl AppRecorder {
    pub fn validate(&self) -> Result<(), String> {
        if self.clear.trim().is_empty() {
            return Err("clear: empty JS expression".into());
        }
        if self.drain.trim().is_empty() {
            return Err("drain: empty JS expression".into());
        }
        if self.kinds.is_empty() {
            return Err("kinds: map at least one app kind to a record kind".into());
        }
        if self.fields.kind.is_empty() || self.fields.t_ms.is_empty() {
            return Err("fields: kind and t_ms must name fields".into());
        }
        Ok(())
    }
}

fn path<'a>(v: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted.split('.').try_fold(v, |cur, k| cur.get(k))
}

fn key_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// State of an app-recorder page across drains.
#[derive(Debug, Default)]
pub(crate) struct AppState {
    pub next_seq: u64,
    pub cleared_at: u64,
}

/// Maps what the app's drain expression returned onto a [`Drain`].
pub(crate) fn app_drain(app: &AppRecorder, raw: &Value, st: &mut AppState) -> Result<Drain> {
    let list = match &app.records_key {
        Some(k) => path(raw, k).ok_or_else(|| anyhow!("app drain result has no key {k:?}"))?,
        None => raw,
    };
    let list = list
        .as_array()
        .ok_or_else(|| anyhow!("app drain result is not an array of records"))?;
    let dropped = match &app.dropped_key {
        Some(k) => path(raw, k).and_then(Value::as_u64).unwrap_or(0),
        None => 0,
    };
    let f = &app.fields;
    let mut records = Vec::with_capacity(list.len());
    let mut unmapped = 0u64;
    for (i, r) in list.iter().enumerate() {
        let kv = path(r, &f.kind)
            .ok_or_else(|| anyhow!("app record {i}: no field {:?} (kind)", f.kind))?;
        let Some(kind) = app.kinds.get(&key_of(kv)).copied() else {
            unmapped += 1;
            continue;
        };
        let t_ms = path(r, &f.t_ms)
            .and_then(Value::as_f64)
            .ok_or_else(|| anyhow!("app record {i}: field {:?} (t_ms) is not a number", f.t_ms))?;
        let num = |name: &Option<String>| {
            name.as_ref()
                .and_then(|n| path(r, n))
                .and_then(Value::as_f64)
        };
        let size = num(&f.size)
            .map(|s| s.clamp(0.0, u32::MAX as f64) as u32)
            .unwrap_or(0);
        let class = f
            .class
            .as_ref()
            .and_then(|n| path(r, n))
            .and_then(|v| app.classes.get(&key_of(v)).copied())
            .unwrap_or_default();
        let event = f
            .event
            .as_ref()
            .and_then(|n| path(r, n))
            .map(key_of)
            .unwrap_or_default();
        let trusted = f
            .trusted
            .as_ref()
            .and_then(|n| path(r, n))
            .map(|v| {
                v.as_bool()
                    .unwrap_or_else(|| v.as_f64().is_some_and(|x| x != 0.0))
            })
            .unwrap_or(true);
        let target = num(&f.target)
            .filter(|t| (0.0..65535.0).contains(t))
            .map(|t| t as u16)
            .unwrap_or(NO_TARGET);
        let seq = match num(&f.seq) {
            Some(s) if s >= 0.0 => s as u64,
            _ => st.next_seq,
        };
        st.next_seq = st.next_seq.max(seq + 1);
        records.push(Record {
            seq,
            kind,
            t_ms,
            size,
            class,
            event,
            trusted,
            target,
            answers: None,
        });
    }
    Ok(Drain {
        records,
        dropped,
        written_total: st.next_seq,
        cleared_at_seq: st.cleared_at,
        socket_source: SocketSource::AppRecorder,
        unmapped,
        clock_error_ms: None,
    })
}

/// The columnar object `__arenaRecorder.drain()` returns.
#[derive(Debug, Deserialize)]
pub(crate) struct RawDrain {
    pub seq0: u64,
    pub dropped: u64,
    pub written: u64,
    pub cleared_at: u64,
    pub sockets: u64,
    pub names: Vec<String>,
    pub kind: Vec<u64>,
    pub t: Vec<f64>,
    pub size: Vec<u32>,
    pub cls: Vec<u64>,
    pub ev: Vec<usize>,
    pub trusted: Vec<u8>,
    pub target: Vec<u16>,
    /// Answer records: the seq of the input judged (-1 on other records).
    #[serde(default, rename = "ref")]
    pub refs: Vec<f64>,
}

impl RawDrain {
    pub fn into_records(self) -> Result<Vec<Record>> {
        let n = self.kind.len();
        for (name, len) in [
            ("t", self.t.len()),
            ("size", self.size.len()),
            ("cls", self.cls.len()),
            ("ev", self.ev.len()),
            ("trusted", self.trusted.len()),
            ("target", self.target.len()),
        ] {
            if len != n {
                bail!("recorder drain: column {name} has {len} entries, kind has {n}");
            }
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let kind = RecordKind::from_code(self.kind[i])
                .ok_or_else(|| anyhow!("recorder drain: unknown kind code {}", self.kind[i]))?;
            out.push(Record {
                seq: self.seq0 + i as u64,
                kind,
                t_ms: self.t[i],
                size: self.size[i],
                class: SendClass::from_code(self.cls[i]),
                event: self.names.get(self.ev[i]).cloned().unwrap_or_default(),
                trusted: self.trusted[i] != 0,
                target: self.target[i],
                answers: self
                    .refs
                    .get(i)
                    .filter(|r| **r >= 0.0 && kind == RecordKind::Answer)
                    .map(|r| *r as u64),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app() -> AppRecorder {
        serde_json::from_value(serde_json::json!({
            "clear": "window.app.clear()",
            "drain": "window.app.drain()",
            "records_key": "records",
            "dropped_key": "lost",
            "fields": {"kind": "type", "t_ms": "at", "size": "bytes", "event": "ev"},
            "kinds": {"in": "input", "tx": "ws_send", "rx": "ws_recv", "draw": "draw", "paint": "paint"},
            "classes": {}
        }))
        .unwrap()
    }

    #[test]
    fn app_records_map_and_unknown_kinds_are_counted() {
        let raw = serde_json::json!({
            "lost": 3,
            "records": [
                {"type": "in", "at": 1.5, "ev": "mousedown"},
                {"type": "tx", "at": 2.0, "bytes": 14},
                {"type": "gc", "at": 2.5},
                {"type": "rx", "at": 9.0, "bytes": 4000}
            ]
        });
        let mut st = AppState::default();
        let d = app_drain(&app(), &raw, &mut st).unwrap();
        assert_eq!(d.records.len(), 3);
        assert_eq!(d.unmapped, 1);
        assert_eq!(d.dropped, 3);
        assert_eq!(d.records[0].kind, RecordKind::Input);
        assert_eq!(d.records[0].event, "mousedown");
        assert_eq!(d.records[2].size, 4000);
        assert_eq!(d.records[2].seq, 2);
        assert_eq!(d.socket_source, SocketSource::AppRecorder);
        // Numbering continues across drains.
        let d2 = app_drain(
            &app(),
            &serde_json::json!({"records": [{"type": "paint", "at": 20.0}]}),
            &mut st,
        )
        .unwrap();
        assert_eq!(d2.records[0].seq, 3);
    }

    #[test]
    fn app_record_without_time_names_index_and_field() {
        let raw = serde_json::json!({"records": [{"type": "in", "at": 1.0}, {"type": "in"}]});
        let e = app_drain(&app(), &raw, &mut AppState::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("app record 1") && e.contains("\"at\""), "{e}");
    }

    #[test]
    fn script_embeds_capacity_and_classifier() {
        let mut c = RecorderConfig::with_classifier(ClassifierSpec::first_byte(&[1], &[0x10]));
        c.capacity = 8;
        let s = c.script();
        assert!(s.starts_with("// arena-perf in-page recorder"));
        assert!(s.trim_end().ends_with(r#"({"capacity":8,"classifier":{"ack":[{"first_byte":[16]}],"input":[{"first_byte":[1]}]}});"#), "{}", &s[s.len() - 120..]);
        assert!(c.validate().is_ok());
        c.capacity = 0;
        assert!(c.validate().unwrap_err().starts_with("capacity"));
    }
}
