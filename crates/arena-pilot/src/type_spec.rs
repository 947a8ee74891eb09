//! `[typing]` in the pilot file: text typed as loops, one per keydown, each closed by the
//! first frame whose pixels changed where its glyph appears (`docs/pilot-file.md`,
//! "Typing").

use std::ops::Range;

use anyhow::Result;
use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTyping {
    text: Spanned<String>,
    #[serde(default)]
    mode: Option<Spanned<String>>,
    #[serde(default)]
    interval_ms: Option<Spanned<u64>>,
    #[serde(default)]
    canvas: Option<String>,
    #[serde(default)]
    area: Option<Spanned<[f64; 4]>>,
    #[serde(default)]
    advance: Option<Spanned<f64>>,
    #[serde(default)]
    inset: Option<Spanned<f64>>,
    #[serde(default)]
    rect: Option<Spanned<[f64; 4]>>,
}

/// How the keys go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeMode {
    /// A person's pace: each keydown this many ms after the previous one (plus the phase
    /// pause every input takes).
    Pace { interval_ms: u64 },
    /// Typometer's asynchronous mode: every key back to back.
    Burst,
}

impl TypeMode {
    pub fn name(self) -> &'static str {
        match self {
            TypeMode::Pace { .. } => "pace",
            TypeMode::Burst => "burst",
        }
    }
}

/// Where each key's glyph is watched, canvas fractions.
#[derive(Debug, Clone, PartialEq)]
pub enum GlyphRegion {
    /// A text line: key k watches cell k (`advance` wide, from `area`'s left), less its
    /// left `inset` share, where a caret after the previous glyph sits; cells wrap to the
    /// line's start when the line is full.
    Line {
        area: [f64; 4],
        advance: f64,
        inset: f64,
    },
    /// One rect every key watches.
    Fixed([f64; 4]),
}

impl GlyphRegion {
    /// The region key `k` watches, `[x0, y0, x1, y1]` canvas fractions.
    pub fn of_key(&self, k: usize) -> [f64; 4] {
        match *self {
            GlyphRegion::Fixed(r) => r,
            GlyphRegion::Line {
                area,
                advance,
                inset,
            } => {
                let cells = self.cells().max(1);
                let x0 = area[0] + (k % cells) as f64 * advance;
                // The page rounds a region out to whole pixels (floor, ceil), so a cell
                // edge a float error past a pixel boundary would give two cells a shared
                // column, and the oracle would take one frame's glyphs as overlapping
                // answers. A nudge far below a pixel keeps neighbours apart.
                const NUDGE: f64 = 1e-9;
                [
                    x0 + inset * advance + NUDGE,
                    area[1],
                    x0 + advance - NUDGE,
                    area[3],
                ]
            }
        }
    }

    /// Glyph cells in one line (a fixed rect is one).
    pub fn cells(&self) -> usize {
        match *self {
            GlyphRegion::Fixed(_) => 1,
            // The small epsilon keeps a line of exactly n advances at n cells.
            GlyphRegion::Line { area, advance, .. } => {
                ((area[2] - area[0]) / advance + 1e-9).floor() as usize
            }
        }
    }
}

/// `[typing]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct TypingSpec {
    /// The keys, one character each, in order.
    pub text: String,
    pub mode: TypeMode,
    /// CSS selector of the canvas the glyphs appear on.
    pub canvas: String,
    pub region: GlyphRegion,
}

/// Characters a key press types here: printable US-keyboard ASCII that draws a glyph.
/// CDP's `Input.dispatchKeyEvent` sends the character as the key's text, but a control
/// character has no key value and a space or a non-ASCII character has no glyph a pixel
/// watch could see or no US key the fixture's protocol can carry (`keyCode`).
fn typeable(c: char) -> bool {
    c.is_ascii_graphic()
}

type Err<'a> = &'a dyn Fn(&Range<usize>, &str, String) -> anyhow::Error;

/// Reads `[typing]`; `err` names file, line and key.
pub(crate) fn parse_typing(
    raw: Spanned<RawTyping>,
    default_canvas: &str,
    err: Err,
) -> Result<TypingSpec> {
    let span = raw.span();
    let t = raw.into_inner();
    let text = t.text.get_ref();
    if text.is_empty() {
        return Err(err(
            &t.text.span(),
            "typing.text",
            "type at least one character".into(),
        ));
    }
    if let Some((i, c)) = text.chars().enumerate().find(|(_, c)| !typeable(*c)) {
        return Err(err(
            &t.text.span(),
            "typing.text",
            format!(
                "character {} ({:?}, U+{:04X}) cannot be typed as a key press: only printable ASCII without space (! to ~) is typed",
                i + 1,
                c,
                c as u32
            ),
        ));
    }
    // A person types a key every few hundred ms at most: a minute between keys is the
    // bound (1e18 ms was taken, and the run waited without a word).
    if let Some(iv) = t.interval_ms.as_ref().filter(|v| *v.get_ref() > 60_000) {
        return Err(err(
            &iv.span(),
            "typing.interval_ms",
            format!(
                "{} is out of range 0..=60000 ms (a minute between keys)",
                iv.get_ref()
            ),
        ));
    }
    let mode = match t.mode.as_ref().map(|m| m.get_ref().as_str()) {
        None | Some("pace") => TypeMode::Pace {
            interval_ms: t.interval_ms.as_ref().map_or(150, |v| *v.get_ref()),
        },
        Some("burst") => {
            if let Some(iv) = &t.interval_ms {
                return Err(err(
                    &iv.span(),
                    "typing.interval_ms",
                    "a burst sends every key back to back: drop `interval_ms` or set mode = \"pace\"".into(),
                ));
            }
            TypeMode::Burst
        }
        Some(other) => {
            let s = t.mode.as_ref().map(Spanned::span).unwrap_or(span.clone());
            return Err(err(
                &s,
                "typing.mode",
                format!("expected pace or burst, got `{other}`"),
            ));
        }
    };
    Ok(TypingSpec {
        text: text.clone(),
        mode,
        canvas: t
            .canvas
            .clone()
            .unwrap_or_else(|| default_canvas.to_string()),
        region: glyph_region(&t, &span, err)?,
    })
}

/// `rect`, or `area` with `advance` (and `inset`): every watched cell on the canvas.
fn glyph_region(t: &RawTyping, span: &Range<usize>, err: Err) -> Result<GlyphRegion> {
    let on_canvas = |r: &Spanned<[f64; 4]>, key: &str| -> Result<[f64; 4]> {
        let v = *r.get_ref();
        if v.iter().all(|x| (0.0..=1.0).contains(x)) && v[0] < v[2] && v[1] < v[3] {
            return Ok(v);
        }
        Err(err(
            &r.span(),
            key,
            format!(
                "{v:?} is not on the target canvas: expected [x0, y0, x1, y1] canvas fractions with 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1"
            ),
        ))
    };
    match (&t.rect, &t.area) {
        (Some(r), None) => return Ok(GlyphRegion::Fixed(on_canvas(r, "typing.rect")?)),
        (Some(r), Some(_)) => {
            return Err(err(
                &r.span(),
                "typing.rect",
                "give `rect` or `area`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(err(
                span,
                "typing.area",
                "name where the glyphs appear: `area` (the text line, with `advance`) or `rect`"
                    .into(),
            ))
        }
        (None, Some(_)) => {}
    }
    let area = on_canvas(t.area.as_ref().expect("matched above"), "typing.area")?;
    let Some(adv) = &t.advance else {
        return Err(err(
            span,
            "typing.advance",
            "`area` needs `advance`: one glyph's width as a canvas-width fraction".into(),
        ));
    };
    let advance = *adv.get_ref();
    if !(advance > 0.0 && advance <= area[2] - area[0]) {
        return Err(err(
            &adv.span(),
            "typing.advance",
            format!("{advance} must be above 0 and fit `area` at least once"),
        ));
    }
    let inset = t.inset.as_ref().map_or(0.0, |v| *v.get_ref());
    if !(0.0..0.9).contains(&inset) {
        let s = t.inset.as_ref().map(Spanned::span).unwrap_or(span.clone());
        return Err(err(
            &s,
            "typing.inset",
            format!("{inset} must be in 0..0.9 (a share of `advance`)"),
        ));
    }
    Ok(GlyphRegion::Line {
        area,
        advance,
        inset,
    })
}

/// The typing of one run, resolved: the keys in order and the region each watches.
#[derive(Debug, Clone, PartialEq)]
pub struct TypingPlan {
    /// One DOM key value (a single character) per keydown.
    pub keys: Vec<String>,
    pub mode: TypeMode,
    pub canvas: String,
    /// Key k watches `regions[k]`, canvas fractions.
    pub regions: Vec<[f64; 4]>,
    /// How the regions were given, for `run.json`'s answer detail.
    pub region: GlyphRegion,
}

impl TypingPlan {
    /// The file's text, cycled or cut to `count` keys when the command line set a count.
    pub fn resolve(spec: &TypingSpec, count: Option<u64>) -> TypingPlan {
        let chars: Vec<char> = spec.text.chars().collect();
        let n = count.map_or(chars.len(), |c| c as usize);
        let keys: Vec<String> = (0..n).map(|k| chars[k % chars.len()].to_string()).collect();
        let regions = (0..n).map(|k| spec.region.of_key(k)).collect();
        TypingPlan {
            keys,
            mode: spec.mode,
            canvas: spec.canvas.clone(),
            regions,
            region: spec.region.clone(),
        }
    }

    /// The answer detail `run.json` records.
    pub fn detail(&self) -> String {
        let r = match &self.region {
            GlyphRegion::Fixed(r) => format!("rect [{}, {}, {}, {}]", r[0], r[1], r[2], r[3]),
            GlyphRegion::Line {
                area,
                advance,
                inset,
            } => format!(
                "glyph cells of area [{}, {}, {}, {}], advance {advance}, inset {inset}",
                area[0], area[1], area[2], area[3]
            ),
        };
        format!("typing ({}): {r} on `{}`", self.mode.name(), self.canvas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_the_line_and_wrap() {
        let r = GlyphRegion::Line {
            area: [0.5, 0.0, 1.0, 1.0],
            advance: 0.125,
            inset: 0.25,
        };
        assert_eq!(r.cells(), 4);
        let near = |a: [f64; 4], b: [f64; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
        assert!(near(r.of_key(0), [0.5 + 0.03125, 0.0, 0.625, 1.0]));
        assert!(near(r.of_key(1), [0.625 + 0.03125, 0.0, 0.75, 1.0]));
        assert_eq!(r.of_key(4), r.of_key(0));
        // Neighbouring cells share no pixel column once rounded out, even where the
        // advance is no binary fraction (14 px of 640).
        let b = GlyphRegion::Line {
            area: [0.03125, 0.0, 0.90625, 1.0],
            advance: 0.021875,
            inset: 0.0,
        };
        for k in 0..39 {
            let (a, n) = (b.of_key(k), b.of_key(k + 1));
            assert!(
                (a[2] * 640.0).ceil() <= (n[0] * 640.0).floor(),
                "cells {k}, {}",
                k + 1
            );
        }
        assert_eq!(
            GlyphRegion::Fixed([0.1, 0.1, 0.2, 0.2]).of_key(9),
            [0.1, 0.1, 0.2, 0.2]
        );
    }

    fn msg(text: &str) -> String {
        let e = crate::scenario::Pilot::parse("p.toml", text).expect_err(text);
        // Bad input: no other exit kind (an unclassified error is exit 2).
        let kind = arena_report::ExitKind::of(&e);
        assert!(
            kind.is_none_or(|k| k == arena_report::ExitKind::BadInput),
            "{e:#}"
        );
        format!("{e:#}")
    }

    #[test]
    fn bad_typing_names_line_and_key() {
        let line = "area = [0.5, 0.0, 1.0, 1.0]\nadvance = 0.0125\n";
        for (text, want) in [
            (
                format!("[typing]\ntext = \"a b\"\n{line}"),
                "p.toml:2: `typing.text`: character 2 (' ', U+0020)",
            ),
            (
                format!("[typing]\ntext = \"\"\n{line}"),
                "p.toml:2: `typing.text`",
            ),
            (
                format!("[typing]\ntext = \"ab\"\nmode = \"burst\"\ninterval_ms = 5\n{line}"),
                "p.toml:4: `typing.interval_ms`",
            ),
            (
                format!("[typing]\ntext = \"ab\"\ninterval_ms = 1000000000000000000\n{line}"),
                "p.toml:3: `typing.interval_ms`: 1000000000000000000 is out of range 0..=60000",
            ),
            (
                format!("[typing]\ntext = \"ab\"\nmode = \"fast\"\n{line}"),
                "p.toml:3: `typing.mode`: expected pace or burst",
            ),
            (
                "[typing]\ntext = \"ab\"\n".into(),
                "`typing.area`: name where the glyphs appear",
            ),
            (
                "[typing]\ntext = \"ab\"\narea = [0.5, 0.0, 1.0, 1.0]\n".into(),
                "`typing.advance`",
            ),
            (
                "[typing]\ntext = \"ab\"\nrect = [0.5, -0.1, 1.0, 1.0]\n".into(),
                "p.toml:3: `typing.rect`: [0.5, -0.1, 1.0, 1.0] is not on the target canvas",
            ),
            (
                format!("[typing]\ntext = \"ab\"\ninset = 0.95\n{line}"),
                "p.toml:3: `typing.inset`",
            ),
            (
                format!("[typing]\ntext = \"ab\"\n{line}[clicks]\nkeys = [\"a\"]\n"),
                "`typing`: give `[typing]` or `clicks.keys`",
            ),
        ] {
            let m = msg(&text);
            assert!(m.contains(want), "{text:?}: want {want:?} in {m}");
        }
        let ok =
            crate::scenario::Pilot::parse("p.toml", &format!("[typing]\ntext = \"ab\"\n{line}"))
                .unwrap();
        let t = ok.typing.unwrap();
        assert_eq!(
            (t.mode, t.canvas.as_str()),
            (TypeMode::Pace { interval_ms: 150 }, "#board")
        );
    }

    #[test]
    fn only_printable_ascii_is_typed() {
        assert!("Az09!~".chars().all(typeable));
        assert!(!typeable(' ') && !typeable('é') && !typeable('\n') && !typeable('\u{7}'));
    }
}
