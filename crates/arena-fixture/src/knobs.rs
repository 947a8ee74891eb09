//! The fixture's knobs: every cost the fixture can put on the send path, as one serde struct
//! so a run can record exactly what it measured (`GET /knobs`).

use serde::{Deserialize, Serialize};

/// Which board phase a session starts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// A click moves a cursor highlight: nearly free.
    Deploy,
    /// A click runs the line-of-sight computation and repaints an arc overlay.
    Firing,
}

/// When the client acks a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckMode {
    /// As soon as the frame arrives, before it is decoded or drawn.
    Receive,
    /// After the frame is drawn and the next animation frame has run.
    Paint,
}

/// The effective knob set of a fixture server. Defaults are the stock behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Knobs {
    /// Seed of the board art and heightmap.
    pub seed: u64,
    /// Soft gradients baked into every tile (larger PNGs).
    pub shadows: bool,
    /// Phase a new session starts in.
    pub phase: Phase,
    /// Rays cast by the line-of-sight computation of one firing click.
    pub los_work: u32,
    /// Paint dispatcher tick, ms: changes are flushed into a frame on this tick.
    pub tick_ms: u32,
    /// Encode an image constant only on a client cache miss (false: on every use).
    pub lazy_png: bool,
    /// zlib level of the PNG encode, 0-9.
    pub png_level: u8,
    /// Client cache entries the server tracks (LRU); an evicted constant is sent again.
    pub const_cache: u32,
    /// When the client acks a frame.
    pub ack: AckMode,
    /// Frames the server may have unacked.
    pub in_flight: u32,
    /// Extra delay before a reply frame is sent, ms.
    pub delay_ms: u32,
    /// Every Nth input gets no reply (0: off).
    pub drop_every: u32,
    /// Every Kth reply to an input waits `tail_ms` more than `delay_ms` (0: off; needs
    /// `tail_ms`): a tail of known size and share.
    pub tail_every: u32,
    /// What a tail reply waits on top of `delay_ms`, ms (0: off; needs `tail_every`).
    pub tail_ms: u32,
    /// Every reply waits a further uniform 0 to this many ms on top of `delay_ms`, drawn
    /// from a generator seeded by `seed` and the connection (0: off): dither, so a reply
    /// lands at any phase of the browser's frame clock and a mean over many replies moves
    /// by exactly what `delay_ms` adds, not by whole frames.
    pub jitter_ms: u32,
    /// Background threads burning CPU.
    pub bots: u32,
    /// Duty cycle of each bot thread, percent of a 10 ms period.
    pub bot_duty: u32,
    /// Bots think only on their turns: for this many ms after each input (0: all the time).
    pub bot_turn_ms: u32,
    /// A cursor that repaints a small region every this many ms for nothing (0: off).
    pub blink_ms: u32,
    /// A press answered in two steps: its usual frame, then this many ms later a second
    /// frame over the pressed tile; releases get no reply (0: off). A release that closes a
    /// loop on this target closed it on the press's second step.
    pub two_step_ms: u32,
    /// The client opens and uses its WebSocket inside a dedicated Worker (the page's
    /// `window.WebSocket` is never constructed); decoding and drawing stay on the main thread.
    pub worker: bool,
    /// WebSocket sessions served at once; a connection past it is refused with HTTP 503
    /// before the upgrade (each session is a thread and its buffers).
    pub max_connections: u32,
    /// Cold start: the first frame (the board) is sent no sooner than this many ms after
    /// the WebSocket upgrade (0: as soon as it is built).
    pub startup_ms: u32,
    // permessage-deflate (RFC 7692) on the fixture's socket.
    /// Negotiate permessage-deflate with context takeover when the client offers it
    /// (Chromium always does); off, the upgrade answers no extension, as before.
    pub deflate: bool,
    /// LZ77 window of the server's compressor in bits, answered as
    /// `server_max_window_bits` (9-15; used only with `deflate`).
    pub deflate_bits: u8,
    /// The client's mousemove flush timer, ms: moves are coalesced and the newest one is sent
    /// on this tick (the field notes' patched client flushes every 20 ms, the stock one 100).
    pub move_flush_ms: u32,
}

/// Default `los_work`: about 10 ms of CPU per firing click on the reference machine, release
/// build (the `lazy_png` bench prints the calibration; see docs/fixture-protocol.md).
pub const DEFAULT_LOS_WORK: u32 = 3600;

/// Default `max_connections`: far more than a pilot or a browser opens (one each), few
/// enough that a flood of sessions, each a thread building a 672 KB first frame, stays in
/// tens of MB.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 64;

/// Default `move_flush_ms`: the patched client's flush timer (docs/fixture-protocol.md).
pub const DEFAULT_MOVE_FLUSH_MS: u32 = 20;

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            seed: 1,
            shadows: false,
            phase: Phase::Firing,
            los_work: DEFAULT_LOS_WORK,
            tick_ms: 16,
            lazy_png: false,
            png_level: 2,
            const_cache: 16384,
            ack: AckMode::Receive,
            in_flight: 1,
            delay_ms: 0,
            drop_every: 0,
            tail_every: 0,
            tail_ms: 0,
            jitter_ms: 0,
            bots: 0,
            bot_duty: 50,
            bot_turn_ms: 0,
            blink_ms: 0,
            two_step_ms: 0,
            worker: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            startup_ms: 0,
            deflate: false,
            deflate_bits: 15,
            move_flush_ms: DEFAULT_MOVE_FLUSH_MS,
        }
    }
}

/// Knob names, in documentation order.
pub const KNOB_NAMES: &[&str] = &[
    "seed",
    "shadows",
    "phase",
    "los_work",
    "tick_ms",
    "lazy_png",
    "png_level",
    "const_cache",
    "ack",
    "in_flight",
    "delay_ms",
    "drop_every",
    "tail_every",
    "tail_ms",
    "jitter_ms",
    "bots",
    "bot_duty",
    "bot_turn_ms",
    "blink_ms",
    "two_step_ms",
    "worker",
    "max_connections",
    "startup_ms",
    "deflate",
    "deflate_bits",
    "move_flush_ms",
];

fn parse_bool(name: &str, value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err(format!(
            "knob `{name}`: expected true or false, got `{value}`"
        )),
    }
}

fn parse_int<T>(name: &str, value: &str, min: u64, max: u64) -> Result<T, String>
where
    T: TryFrom<u64>,
{
    let n: u64 = value
        .trim()
        .parse()
        .map_err(|_| format!("knob `{name}`: expected an integer {min}..={max}, got `{value}`"))?;
    if n < min || n > max {
        return Err(format!("knob `{name}`: {n} is out of range {min}..={max}"));
    }
    T::try_from(n).map_err(|_| format!("knob `{name}`: {n} is out of range {min}..={max}"))
}

impl Knobs {
    /// Sets one knob from its string form, validating the value. The error names the knob.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "seed" => self.seed = parse_int(name, value, 0, u64::MAX)?,
            "shadows" => self.shadows = parse_bool(name, value)?,
            "phase" => {
                self.phase = match value.trim() {
                    "firing" => Phase::Firing,
                    "deploy" => Phase::Deploy,
                    _ => {
                        return Err(format!(
                            "knob `phase`: expected firing or deploy, got `{value}`"
                        ))
                    }
                }
            }
            "los_work" => self.los_work = parse_int(name, value, 0, 10_000_000)?,
            "tick_ms" => self.tick_ms = parse_int(name, value, 1, 1000)?,
            "lazy_png" => self.lazy_png = parse_bool(name, value)?,
            "png_level" => self.png_level = parse_int(name, value, 0, 9)?,
            "const_cache" => self.const_cache = parse_int(name, value, 1, 1 << 20)?,
            "ack" => {
                self.ack = match value.trim() {
                    "receive" => AckMode::Receive,
                    "paint" => AckMode::Paint,
                    _ => {
                        return Err(format!(
                            "knob `ack`: expected receive or paint, got `{value}`"
                        ))
                    }
                }
            }
            "in_flight" => self.in_flight = parse_int(name, value, 1, 64)?,
            "delay_ms" => self.delay_ms = parse_int(name, value, 0, 10_000)?,
            "drop_every" => self.drop_every = parse_int(name, value, 0, 1_000_000)?,
            "tail_every" => self.tail_every = parse_int(name, value, 0, 1_000_000)?,
            "tail_ms" => self.tail_ms = parse_int(name, value, 0, 10_000)?,
            "jitter_ms" => self.jitter_ms = parse_int(name, value, 0, 10_000)?,
            "bots" => self.bots = parse_int(name, value, 0, 64)?,
            "bot_duty" => self.bot_duty = parse_int(name, value, 0, 100)?,
            "bot_turn_ms" => self.bot_turn_ms = parse_int(name, value, 0, 600_000)?,
            "blink_ms" => self.blink_ms = parse_int(name, value, 0, 60_000)?,
            "two_step_ms" => self.two_step_ms = parse_int(name, value, 0, 10_000)?,
            "worker" => self.worker = parse_bool(name, value)?,
            "max_connections" => self.max_connections = parse_int(name, value, 1, 4096)?,
            "startup_ms" => self.startup_ms = parse_int(name, value, 0, 600_000)?,
            "deflate" => self.deflate = parse_bool(name, value)?,
            "deflate_bits" => self.deflate_bits = parse_int(name, value, 9, 15)?,
            "move_flush_ms" => self.move_flush_ms = parse_int(name, value, 1, 1000)?,
            _ => {
                return Err(format!(
                    "unknown knob `{name}` (known: {})",
                    KNOB_NAMES.join(", ")
                ))
            }
        }
        Ok(())
    }

    /// Defaults with `pairs` applied in order (a later pair wins), then [`Knobs::check`]ed.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<Knobs, String> {
        let mut k = Knobs::default();
        for (name, value) in pairs {
            k.set(name, value)?;
        }
        k.check()?;
        Ok(k)
    }

    /// The rules between knobs, which [`Knobs::set`] cannot see one knob at a time. A tail
    /// knob alone would do nothing, so a run asked for a tail would measure none and say
    /// nothing: refused, naming the knob that is missing.
    pub fn check(&self) -> Result<(), String> {
        match (self.tail_every, self.tail_ms) {
            (0, 0) => Ok(()),
            (k, 0) => Err(format!(
                "knob `tail_ms`: `tail_every = {k}` needs `tail_ms` (the extra wait, ms) too"
            )),
            (0, t) => Err(format!(
                "knob `tail_every`: `tail_ms = {t}` needs `tail_every` (which replies wait) too"
            )),
            _ => Ok(()),
        }
    }

    /// Whether the `n`th reply to an input (from 1) is a tail reply.
    pub fn is_tail_reply(&self, n: u64) -> bool {
        self.tail_every > 0 && self.tail_ms > 0 && n % u64::from(self.tail_every) == 0
    }

    /// Parses `NAME=VALUE` (the `--knob` flag's form).
    pub fn parse_pair(s: &str) -> Result<(String, String), String> {
        match s.split_once('=') {
            Some((n, v)) if !n.trim().is_empty() => {
                Ok((n.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(format!("expected NAME=VALUE, got `{s}`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_validates_and_names_the_knob() {
        let mut k = Knobs::default();
        k.set("lazy_png", "true").unwrap();
        assert!(k.lazy_png);
        k.set("phase", "deploy").unwrap();
        assert_eq!(k.phase, Phase::Deploy);
        let e = k.set("png_level", "12").unwrap_err();
        assert!(e.contains("png_level") && e.contains("0..=9"), "{e}");
        let e = k.set("tick_ms", "fast").unwrap_err();
        assert!(e.contains("tick_ms"), "{e}");
        let e = k.set("no_such", "1").unwrap_err();
        assert!(e.contains("no_such") && e.contains("lazy_png"), "{e}");
        let e = k.set("ack", "never").unwrap_err();
        assert!(e.contains("ack"), "{e}");
    }

    #[test]
    fn worker_is_a_bool_knob_off_by_default() {
        assert!(!Knobs::default().worker);
        for v in ["true", "1", "on", "yes", " TRUE "] {
            let k = Knobs::from_pairs(&[("worker".into(), v.into())]).unwrap();
            assert!(k.worker, "{v}");
        }
        for v in ["false", "0", "off", "no"] {
            let k = Knobs::from_pairs(&[("worker".into(), v.into())]).unwrap();
            assert!(!k.worker, "{v}");
        }
        let e = Knobs::from_pairs(&[("worker".into(), "maybe".into())]).unwrap_err();
        assert!(e.contains("`worker`") && e.contains("true or false"), "{e}");
        // The `--knob` form, a later pair winning.
        let pairs = ["worker=true", "worker = off", "worker=yes"]
            .iter()
            .map(|s| Knobs::parse_pair(s).unwrap())
            .collect::<Vec<_>>();
        assert!(Knobs::from_pairs(&pairs).unwrap().worker);
        assert!(!Knobs::from_pairs(&pairs[..2]).unwrap().worker);
        // Served by `GET /knobs` as a JSON bool, and read back.
        let mut k = Knobs::default();
        k.set("worker", "true").unwrap();
        let json = serde_json::to_value(&k).unwrap();
        assert_eq!(json["worker"], serde_json::Value::Bool(true));
        assert_eq!(serde_json::from_value::<Knobs>(json).unwrap(), k);
        // Every other knob is untouched by it.
        k.worker = false;
        assert_eq!(k, Knobs::default());
    }

    #[test]
    fn deflate_is_off_by_default_and_its_window_is_checked() {
        let k = Knobs::default();
        assert!(!k.deflate);
        assert_eq!(k.deflate_bits, 15);
        let k = Knobs::from_pairs(&[
            ("deflate".into(), "true".into()),
            ("deflate_bits".into(), "9".into()),
        ])
        .unwrap();
        assert!(k.deflate);
        assert_eq!(k.deflate_bits, 9);
        for bad in ["8", "16", "0", "wide"] {
            let e = Knobs::from_pairs(&[("deflate_bits".into(), bad.into())]).unwrap_err();
            assert!(e.contains("`deflate_bits`"), "{bad}: {e}");
        }
        let e = Knobs::from_pairs(&[("deflate".into(), "15".into())]).unwrap_err();
        assert!(
            e.contains("`deflate`") && e.contains("true or false"),
            "{e}"
        );
    }

    #[test]
    fn every_name_is_settable_and_serialized() {
        let json = serde_json::to_value(Knobs::default()).unwrap();
        let obj = json.as_object().unwrap();
        assert_eq!(obj.len(), KNOB_NAMES.len());
        for name in KNOB_NAMES {
            assert!(obj.contains_key(*name), "{name} missing from JSON");
            let v = match &obj[*name] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut k = Knobs::default();
            k.set(name, &v).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(k, Knobs::default(), "{name} round trip");
        }
    }

    #[test]
    fn tail_knobs_parse_and_act_only_together() {
        let k = Knobs::default();
        assert_eq!((k.tail_every, k.tail_ms), (0, 0));
        assert!(!(1..=100).any(|n| k.is_tail_reply(n)), "off by default");
        let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        };
        let k = Knobs::from_pairs(&pairs(&[("tail_every", "20"), ("tail_ms", "150")])).unwrap();
        assert_eq!((k.tail_every, k.tail_ms), (20, 150));
        let tails: Vec<u64> = (1..=100).filter(|&n| k.is_tail_reply(n)).collect();
        assert_eq!(tails, [20, 40, 60, 80, 100], "5 % of replies");
        // One without the other names the missing knob.
        let e = Knobs::from_pairs(&pairs(&[("tail_every", "20")])).unwrap_err();
        assert!(
            e.starts_with("knob `tail_ms`") && e.contains("tail_every = 20"),
            "{e}"
        );
        let e = Knobs::from_pairs(&pairs(&[("tail_ms", "150")])).unwrap_err();
        assert!(
            e.starts_with("knob `tail_every`") && e.contains("tail_ms = 150"),
            "{e}"
        );
        // The rule holds once every pair is applied: a later pair can leave one half set,
        // or undo the half it set.
        let half = pairs(&[
            ("tail_every", "20"),
            ("tail_ms", "150"),
            ("tail_every", "0"),
        ]);
        assert!(Knobs::from_pairs(&half).is_err(), "tail_ms is left alone");
        let off = pairs(&[("tail_every", "20"), ("tail_every", "0")]);
        assert_eq!(Knobs::from_pairs(&off).unwrap(), Knobs::default());
        // Ranges are those of `drop_every` and `delay_ms`.
        for (name, bad) in [
            ("tail_every", "1000001"),
            ("tail_ms", "10001"),
            ("tail_ms", "-1"),
        ] {
            let e = Knobs::default().set(name, bad).unwrap_err();
            assert!(e.contains(&format!("`{name}`")), "{name}={bad}: {e}");
        }
    }

    #[test]
    fn jitter_is_off_by_default_and_ranged_like_delay() {
        assert_eq!(Knobs::default().jitter_ms, 0);
        let k = Knobs::from_pairs(&[
            ("jitter_ms".into(), "17".into()),
            ("delay_ms".into(), "40".into()),
        ])
        .unwrap();
        assert_eq!((k.jitter_ms, k.delay_ms), (17, 40));
        for bad in ["10001", "-1", "some"] {
            let e = Knobs::default().set("jitter_ms", bad).unwrap_err();
            assert!(e.contains("`jitter_ms`"), "{bad}: {e}");
        }
    }

    #[test]
    fn from_pairs_later_wins() {
        let k = Knobs::from_pairs(&[
            ("tick_ms".into(), "8".into()),
            ("tick_ms".into(), "33".into()),
        ])
        .unwrap();
        assert_eq!(k.tick_ms, 33);
        assert!(Knobs::parse_pair("delay_ms=40").is_ok());
        assert!(Knobs::parse_pair("delay_ms").is_err());
        assert!(Knobs::parse_pair("=4").is_err());
    }
}
