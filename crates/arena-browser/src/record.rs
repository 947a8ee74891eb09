//! The records the in-page recorder writes, the drain that carries them out of the page,
//! and the send classifier that runs inside the page at `send()` time.

use serde::{Deserialize, Serialize};

/// What a record observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// A discrete input event (mousedown, mouseup, click, keydown, keyup, pointerdown, ...).
    Input,
    /// A coalesced input event (mousemove, pointermove, wheel, touchmove): the browser flushes
    /// these on its own schedule, so they are reported apart from clicks.
    InputCoalesced,
    /// A WebSocket message sent by the page.
    WsSend,
    /// A WebSocket message received by the page.
    WsRecv,
    /// A 2D-canvas draw call.
    Draw,
    /// The first animation frame after one or more draws.
    Paint,
    /// The answer oracle's verdict on one input (pixels or a page predicate), at the
    /// painted frame where it was reached; [`Record::answers`] names the input.
    Answer,
    /// The page's WebSocket fired `open` (the handshake is done).
    WsOpen,
    /// The cold-start region of a canvas stopped being blank, on this animation frame
    /// (`size`: its pixels unlike the first one); see [`crate::StartupWatch`].
    RegionPainted,
}

impl RecordKind {
    /// The code the recorder JS stores in its `kind` column.
    pub fn from_code(code: u64) -> Option<Self> {
        Some(match code {
            0 => Self::Input,
            1 => Self::InputCoalesced,
            2 => Self::WsSend,
            3 => Self::WsRecv,
            4 => Self::Draw,
            5 => Self::Paint,
            6 => Self::Answer,
            7 => Self::WsOpen,
            8 => Self::RegionPainted,
            _ => return None,
        })
    }
}

/// The classifier's verdict on a send. Non-sends carry `Other`.
///
/// On [`RecordKind::Answer`] records the same codes carry the oracle's verdict instead:
/// `Input` (code 1) the input's own answer, `Ack` (code 2) a change whose frame already
/// answered an earlier input (claimed), `Other` the oracle could not judge (the reason is
/// the record's `event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendClass {
    /// The message carries user input: the start of a loop.
    Input,
    /// The message acknowledges a frame: never the start of a loop.
    Ack,
    #[default]
    Other,
}

impl SendClass {
    pub fn from_code(code: u64) -> Self {
        match code {
            1 => Self::Input,
            2 => Self::Ack,
            _ => Self::Other,
        }
    }
}

/// Where the WebSocket records of a drain came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketSource {
    /// The recorder's hooks on the page's own `WebSocket` (page clock, exact).
    #[default]
    PageHook,
    /// CDP `Network.webSocketFrameSent/Received` (the socket lives where the page hook does
    /// not reach, e.g. a Web Worker); times mapped from CLOCK_MONOTONIC to the page clock.
    Cdp,
    /// The application's own recorder, named in the recorder configuration.
    AppRecorder,
}

/// Sentinel `target` for records not tied to a canvas or socket (e.g. input on the body).
pub const NO_TARGET: u16 = u16::MAX;

/// One observation on the page's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Monotonic since the recorder started; never reset by `clear()`.
    pub seq: u64,
    pub kind: RecordKind,
    /// Page clock in ms (`performance.now()`, or `event.timeStamp` for input).
    pub t_ms: f64,
    /// WebSocket payload bytes (0 for non-socket records).
    pub size: u32,
    /// Classifier verdict for sends; `Other` for everything else.
    pub class: SendClass,
    /// Event type for input ("mousedown", ...), method for draws ("drawImage", ...),
    /// "binary"/"text" for socket messages, "raf" for paints.
    pub event: String,
    /// `event.isTrusted` for input; true for records the page cannot forge.
    pub trusted: bool,
    /// Canvas index for draws, paints and input on a canvas; socket index for socket
    /// records; [`NO_TARGET`] otherwise.
    pub target: u16,
    /// On [`RecordKind::Answer`] records: the seq of the input this verdict is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<u64>,
}

/// Everything recorded since the previous drain (or clear).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drain {
    pub records: Vec<Record>,
    /// Records overwritten in the ring buffer before this drain could read them.
    pub dropped: u64,
    /// Records ever written by the recorder (the next seq).
    pub written_total: u64,
    /// The seq at the most recent `clear()` (0 if never cleared): records with a smaller seq
    /// predate the clear.
    pub cleared_at_seq: u64,
    pub socket_source: SocketSource,
    /// App-recorder records whose kind the configuration does not map (skipped).
    #[serde(default)]
    pub unmapped: u64,
    /// With the CDP socket source: worst-case error (ms) of the monotonic-to-page clock map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_error_ms: Option<f64>,
}

/// One condition set: every field that is set must hold. A spec matches a message if any of
/// its matchers does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// The first payload byte (binary frames; the first UTF-8 byte of text frames) is one of
    /// these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte: Option<Vec<u8>>,
    /// Text frame that parses as a JSON object with this key (dotted path for nesting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_key: Option<String>,
    /// With `json_key`: the value at the key equals this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_value: Option<serde_json::Value>,
    /// Payload bytes at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_size: Option<u32>,
    /// Payload bytes at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<u32>,
    /// Text frame matching this regular expression (the common subset of JavaScript and
    /// Rust `regex` syntax: it runs in the page, and in Rust for the CDP socket source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_regex: Option<String>,
    /// The payload byte at `offset` is one of `in` (e.g. GTK Broadway's message kind in
    /// byte 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_at: Option<BytesAt>,
    /// The payload starts with these bytes: hex pairs, `??` for any byte, spaces ignored
    /// (`"05 ?? 00"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// The unsigned integer at `offset` (`bits` 8/16/32, `endian` big or little) is one
    /// of `in`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub int_at: Option<IntAt>,
}

/// A byte at a fixed offset, matched against a set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BytesAt {
    pub offset: u32,
    #[serde(rename = "in")]
    pub one_of: Vec<u8>,
}

/// Byte order of an [`IntAt`] field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endian {
    #[default]
    Big,
    Little,
}

/// An unsigned integer field at a fixed offset, matched against a set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntAt {
    pub offset: u32,
    /// 8, 16 or 32.
    pub bits: u8,
    #[serde(default)]
    pub endian: Endian,
    #[serde(rename = "in")]
    pub one_of: Vec<u32>,
}

impl IntAt {
    /// The field's value in `payload`, if the payload is long enough.
    fn read(&self, payload: &[u8]) -> Option<u32> {
        let n = usize::from(self.bits / 8);
        let at = self.offset as usize;
        let b = payload.get(at..at.checked_add(n)?)?;
        let mut v: u32 = 0;
        for k in 0..n {
            let byte = match self.endian {
                Endian::Big => b[k],
                Endian::Little => b[n - 1 - k],
            };
            v = (v << 8) | u32::from(byte);
        }
        Some(v)
    }
}

/// `prefix` text as bytes, `None` standing for `??`.
pub fn parse_prefix(text: &str) -> Result<Vec<Option<u8>>, String> {
    let digits: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    if digits.is_empty() || !digits.len().is_multiple_of(2) {
        return Err(format!(
            "prefix {text:?}: expected hex byte pairs (or ?? for any byte), e.g. \"05 ?? 00\""
        ));
    }
    digits
        .chunks(2)
        .map(|p| match (p[0], p[1]) {
            ('?', '?') => Ok(None),
            (a, b) => {
                let pair: String = [a, b].iter().collect();
                u8::from_str_radix(&pair, 16)
                    .map(Some)
                    .map_err(|_| format!("prefix {text:?}: `{pair}` is not a hex byte or ??"))
            }
        })
        .collect()
}

impl Matcher {
    fn is_empty(&self) -> bool {
        self.first_byte.is_none()
            && self.json_key.is_none()
            && self.json_value.is_none()
            && self.min_size.is_none()
            && self.max_size.is_none()
            && self.text_regex.is_none()
            && self.bytes_at.is_none()
            && self.prefix.is_none()
            && self.int_at.is_none()
    }
}

/// Decides, for each WebSocket send, whether it carries input, acknowledges a frame, or is
/// something else. `input` is tried first, then `ack`; no match gives `Other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassifierSpec {
    #[serde(default)]
    pub input: Vec<Matcher>,
    #[serde(default)]
    pub ack: Vec<Matcher>,
}

impl ClassifierSpec {
    /// The classifier for a protocol whose first byte tells the message type.
    pub fn first_byte(input: &[u8], ack: &[u8]) -> Self {
        let one = |bytes: &[u8]| {
            if bytes.is_empty() {
                Vec::new()
            } else {
                vec![Matcher {
                    first_byte: Some(bytes.to_vec()),
                    ..Matcher::default()
                }]
            }
        };
        Self {
            input: one(input),
            ack: one(ack),
        }
    }

    /// Checks the spec; the error names the offending matcher (`input[0]`, `ack[2]`, ...).
    pub fn validate(&self) -> Result<(), String> {
        for (list, name) in [(&self.input, "input"), (&self.ack, "ack")] {
            for (i, m) in list.iter().enumerate() {
                let at = format!("{name}[{i}]");
                if m.is_empty() {
                    return Err(format!("{at}: a matcher needs at least one condition"));
                }
                if m.json_value.is_some() && m.json_key.is_none() {
                    return Err(format!("{at}: json_value needs json_key"));
                }
                if let (Some(lo), Some(hi)) = (m.min_size, m.max_size) {
                    if lo > hi {
                        return Err(format!("{at}: min_size {lo} > max_size {hi}"));
                    }
                }
                if let Some(re) = &m.text_regex {
                    regex::Regex::new(re).map_err(|e| format!("{at}: text_regex: {e}"))?;
                }
                if m.first_byte.as_ref().is_some_and(|b| b.is_empty()) {
                    return Err(format!("{at}: first_byte is an empty set"));
                }
                if m.bytes_at.as_ref().is_some_and(|b| b.one_of.is_empty()) {
                    return Err(format!("{at}: bytes_at.in is an empty set"));
                }
                if let Some(p) = &m.prefix {
                    parse_prefix(p).map_err(|e| format!("{at}: {e}"))?;
                }
                if let Some(f) = &m.int_at {
                    if ![8, 16, 32].contains(&f.bits) {
                        return Err(format!(
                            "{at}: int_at.bits must be 8, 16 or 32, not {}",
                            f.bits
                        ));
                    }
                    if f.one_of.is_empty() {
                        return Err(format!("{at}: int_at.in is an empty set"));
                    }
                    let max = if f.bits == 32 {
                        u32::MAX
                    } else {
                        (1u32 << f.bits) - 1
                    };
                    if let Some(v) = f.one_of.iter().find(|v| **v > max) {
                        return Err(format!(
                            "{at}: int_at.in: {v} does not fit in {} bits",
                            f.bits
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The same verdict the in-page classifier gives, for messages seen through CDP.
    /// `text` is the payload when it is a text frame.
    pub fn classify(&self, payload: &[u8], text: Option<&str>) -> SendClass {
        let hit = |list: &[Matcher]| list.iter().any(|m| matcher_hits(m, payload, text));
        if hit(&self.input) {
            SendClass::Input
        } else if hit(&self.ack) {
            SendClass::Ack
        } else {
            SendClass::Other
        }
    }
}

fn matcher_hits(m: &Matcher, payload: &[u8], text: Option<&str>) -> bool {
    let size = payload.len() as u64;
    if let Some(set) = &m.first_byte {
        match payload.first() {
            Some(b) if set.contains(b) => {}
            _ => return false,
        }
    }
    if let Some(b) = &m.bytes_at {
        match payload.get(b.offset as usize) {
            Some(v) if b.one_of.contains(v) => {}
            _ => return false,
        }
    }
    if let Some(p) = &m.prefix {
        let Ok(want) = parse_prefix(p) else {
            return false;
        };
        if payload.len() < want.len()
            || want
                .iter()
                .zip(payload)
                .any(|(w, b)| w.is_some_and(|w| w != *b))
        {
            return false;
        }
    }
    if let Some(f) = &m.int_at {
        match f.read(payload) {
            Some(v) if f.one_of.contains(&v) => {}
            _ => return false,
        }
    }
    if m.min_size.is_some_and(|lo| size < u64::from(lo)) {
        return false;
    }
    if m.max_size.is_some_and(|hi| size > u64::from(hi)) {
        return false;
    }
    if let Some(key) = &m.json_key {
        let Some(t) = text else { return false };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(t) else {
            return false;
        };
        let mut cur = &v;
        for part in key.split('.') {
            match cur.get(part) {
                Some(next) => cur = next,
                None => return false,
            }
        }
        if let Some(want) = &m.json_value {
            if !json_loose_eq(cur, want) {
                return false;
            }
        }
    }
    if let Some(re) = &m.text_regex {
        let Some(t) = text else { return false };
        match regex::Regex::new(re) {
            Ok(r) if r.is_match(t) => {}
            _ => return false,
        }
    }
    true
}

/// Numbers compare by value (1 == 1.0), as they do in the page.
fn json_loose_eq(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_byte_classifier_separates_input_from_ack() {
        let c = ClassifierSpec::first_byte(&[1, 2, 3, 4, 5], &[0x10]);
        c.validate().unwrap();
        assert_eq!(c.classify(&[1, 0, 0], None), SendClass::Input);
        assert_eq!(c.classify(&[0x10, 9, 9, 9, 9], None), SendClass::Ack);
        assert_eq!(c.classify(&[0x20], None), SendClass::Other);
        assert_eq!(c.classify(&[], None), SendClass::Other);
    }

    #[test]
    fn json_size_and_regex_conditions_all_must_hold() {
        let spec: ClassifierSpec = serde_json::from_value(serde_json::json!({
            "input": [{"json_key": "ev.type", "json_value": "click", "max_size": 100}],
            "ack": [{"text_regex": "^ack:[0-9]+$"}]
        }))
        .unwrap();
        spec.validate().unwrap();
        let click = r#"{"ev":{"type":"click"}}"#;
        assert_eq!(
            spec.classify(click.as_bytes(), Some(click)),
            SendClass::Input
        );
        let big = format!(r#"{{"ev":{{"type":"click"}},"pad":"{}"}}"#, "x".repeat(200));
        assert_eq!(spec.classify(big.as_bytes(), Some(&big)), SendClass::Other);
        assert_eq!(spec.classify(b"ack:12", Some("ack:12")), SendClass::Ack);
        assert_eq!(spec.classify(b"ack:12", None), SendClass::Other);
    }

    #[test]
    fn bytes_at_prefix_and_int_fields_match_at_any_offset() {
        // GTK Broadway: big-endian int32s, the message kind a letter in byte 3.
        let spec: ClassifierSpec = serde_json::from_value(serde_json::json!({
            "input": [{"bytes_at": {"offset": 3, "in": [0x62, 0x42]}, "min_size": 8}],
            "ack": [{"prefix": "f8 ?? 00"}, {"int_at": {"offset": 1, "bits": 16, "endian": "little", "in": [0x0201]}}]
        }))
        .unwrap();
        spec.validate().unwrap();
        let press = [0, 0, 0, 0x62, 0, 0, 0, 9];
        assert_eq!(spec.classify(&press, None), SendClass::Input);
        assert_eq!(
            spec.classify(&press[..4], None),
            SendClass::Other,
            "min_size still holds"
        );
        assert_eq!(
            spec.classify(&[0, 0, 0, 0x6d, 0, 0, 0, 0], None),
            SendClass::Other
        );
        assert_eq!(spec.classify(&[0xf8, 0x33, 0x00, 7], None), SendClass::Ack);
        assert_eq!(
            spec.classify(&[0xf8, 0x33], None),
            SendClass::Other,
            "shorter than the prefix"
        );
        assert_eq!(spec.classify(&[9, 0x01, 0x02], None), SendClass::Ack);
        assert_eq!(spec.classify(&[9, 0x02, 0x01], None), SendClass::Other);
        let big = IntAt {
            offset: 0,
            bits: 32,
            endian: Endian::Big,
            one_of: vec![0x62],
        };
        assert_eq!(big.read(&[0, 0, 0, 0x62]), Some(0x62));
        assert_eq!(big.read(&[0, 0, 0x62]), None);
        for (bad, what) in [
            (serde_json::json!({"prefix": "0"}), "prefix"),
            (serde_json::json!({"prefix": "zz"}), "not a hex byte"),
            (
                serde_json::json!({"int_at": {"offset": 0, "bits": 12, "in": [1]}}),
                "8, 16 or 32",
            ),
            (
                serde_json::json!({"int_at": {"offset": 0, "bits": 8, "in": [300]}}),
                "does not fit",
            ),
            (
                serde_json::json!({"bytes_at": {"offset": 0, "in": []}}),
                "empty set",
            ),
        ] {
            let spec: ClassifierSpec =
                serde_json::from_value(serde_json::json!({ "input": [bad] })).unwrap();
            let e = spec.validate().unwrap_err();
            assert!(e.starts_with("input[0]") && e.contains(what), "{e}");
        }
    }

    #[test]
    fn validate_names_the_bad_matcher() {
        let spec = ClassifierSpec {
            input: vec![Matcher::default()],
            ack: vec![],
        };
        assert!(spec.validate().unwrap_err().starts_with("input[0]"));
        let spec = ClassifierSpec {
            input: vec![],
            ack: vec![Matcher {
                text_regex: Some("(".into()),
                ..Matcher::default()
            }],
        };
        assert!(spec
            .validate()
            .unwrap_err()
            .starts_with("ack[0]: text_regex"));
        let bad: Result<ClassifierSpec, _> =
            serde_json::from_value(serde_json::json!({"input": [{"first_bite": [1]}]}));
        assert!(bad.is_err());
    }

    #[test]
    fn record_round_trips_through_json() {
        let r = Record {
            seq: 7,
            kind: RecordKind::WsSend,
            t_ms: 12.5,
            size: 14,
            class: SendClass::Input,
            event: "binary".into(),
            trusted: true,
            target: 0,
            answers: None,
        };
        let s = serde_json::to_string(&r).unwrap();
        assert!(s.contains(r#""kind":"ws_send""#), "{s}");
        assert_eq!(serde_json::from_str::<Record>(&s).unwrap(), r);
    }
}
