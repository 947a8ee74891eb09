//! A run's gestures read back from its folder: `gestures.json` (each gesture's counts),
//! `moves.csv` (a row per move) and `frames_behind.csv` (a row per painted frame), kept
//! per gesture and never pooled with the clicks (docs/run-format.md, "Gestures").
//!
//! All three are optional together: a run without gestures has none of them. With
//! `gestures.json` present the two tables must be there too, and every row must name a
//! gesture the document has, of its kind, with outcomes adding up to its counts: a
//! figure read off a damaged file would be a wrong figure, so it is refused, naming the
//! file and line.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::bounded::{bad, bad_json, open_run_file, RowBound, MAX_RUN_JSON_BYTES};

pub const MOVES_CSV: &str = "moves.csv";
pub const FRAMES_BEHIND_CSV: &str = "frames_behind.csv";
pub const GESTURES_JSON: &str = "gestures.json";

/// One gesture's counts as `gestures.json` states them: its moves by how each ended, which
/// add up to `dispatched`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct GestureCounts {
    pub dispatched: u64,
    pub folded_by_browser: u64,
    /// Neither recorded nor reported folded; 0 in runs made before it was counted apart.
    #[serde(default)]
    pub unseen: u64,
    pub answered: u64,
    pub unanswered: u64,
    pub coalesced: u64,
    pub sends: u64,
}

/// One row of `moves.csv`, the figures a comparison reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GestureMove {
    #[serde(rename = "t_send_ms")]
    pub t_send: Option<f64>,
    #[serde(rename = "input_to_socket_ms")]
    pub input_to_socket: Option<f64>,
    /// Moves the send carried (on the row of the move it carried).
    pub carried: u32,
    #[serde(rename = "oldest_age_ms")]
    pub oldest_age: Option<f64>,
    #[serde(rename = "move_to_pixels_ms")]
    pub move_to_pixels: Option<f64>,
    /// answered, unanswered or coalesced.
    pub outcome: String,
}

impl GestureMove {
    /// The row stands for a send (its carried move): the send-level figures are read once
    /// a send, here.
    pub fn is_send(&self) -> bool {
        self.outcome != "coalesced" && self.t_send.is_some()
    }
}

/// One row of `frames_behind.csv`: how far a painted frame trailed the pointer.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct GestureBehind {
    #[serde(rename = "moves_behind")]
    pub moves: f64,
    #[serde(rename = "ms_behind")]
    pub ms: f64,
}

/// One gesture of a run: its number and kind, counts, and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunGesture {
    pub gesture: u64,
    pub kind: String,
    pub counts: GestureCounts,
    pub moves: Vec<GestureMove>,
    pub behind: Vec<GestureBehind>,
    /// The frames behind `gestures.json` counts (its `frames_behind_moves.n`), where stated.
    pub behind_n: Option<u64>,
}

#[derive(Deserialize)]
struct Doc {
    gestures: Vec<DocGesture>,
}

#[derive(Deserialize)]
struct DocGesture {
    gesture: u64,
    kind: String,
    counts: GestureCounts,
    /// Its n is the rows `frames_behind.csv` holds for the gesture.
    #[serde(default)]
    frames_behind_moves: Option<FigureN>,
}

#[derive(Deserialize)]
struct FigureN {
    n: u64,
}

/// The leading key columns every gesture table starts with.
#[derive(Deserialize)]
struct Key {
    gesture: u64,
    kind: String,
}

/// The run folder `dir`'s gestures, in `gestures.json`'s order; none when it has no
/// `gestures.json`.
pub fn load_gestures(dir: &Path) -> Result<Vec<RunGesture>> {
    let path = dir.join(GESTURES_JSON);
    if matches!(fs::metadata(&path), Err(e) if e.kind() == io::ErrorKind::NotFound) {
        return Ok(Vec::new());
    }
    let mut gestures = read_doc(&path)?;
    let index: BTreeMap<u64, usize> = gestures
        .iter()
        .enumerate()
        .map(|(i, g)| (g.gesture, i))
        .collect();
    let kinds: Vec<String> = gestures.iter().map(|g| g.kind.clone()).collect();
    let moves_path = dir.join(MOVES_CSV);
    read_rows(&moves_path, &kinds, &index, |i, m: GestureMove| {
        if !["answered", "unanswered", "coalesced"].contains(&m.outcome.as_str()) {
            return Err(format!(
                "outcome `{}` is not answered, unanswered or coalesced",
                m.outcome
            ));
        }
        let times = [m.t_send, m.input_to_socket, m.oldest_age, m.move_to_pixels];
        finite(times.into_iter().flatten())?;
        gestures[i].moves.push(m);
        Ok(())
    })?;
    read_rows(
        &dir.join(FRAMES_BEHIND_CSV),
        &kinds,
        &index,
        |i, b: GestureBehind| {
            finite([b.moves, b.ms])?;
            if b.moves < 0.0 || b.ms < 0.0 {
                return Err(format!(
                    "a frame cannot trail the pointer by {} moves and {} ms: both are 0 or more",
                    b.moves, b.ms
                ));
            }
            gestures[i].behind.push(b);
            Ok(())
        },
    )?;
    let behind_path = dir.join(FRAMES_BEHIND_CSV);
    for g in &gestures {
        check_counts(g).map_err(|e| bad(format!("{}: {e}", moves_path.display())))?;
        match g.behind_n {
            Some(n) if n != g.behind.len() as u64 => {
                return Err(bad(format!(
                    "{}: gesture {}: {} rows, but {GESTURES_JSON} counts {n} frames behind",
                    behind_path.display(),
                    g.gesture,
                    g.behind.len()
                )))
            }
            _ => {}
        }
    }
    Ok(gestures)
}

fn read_doc(path: &Path) -> Result<Vec<RunGesture>> {
    let cannot = |e: io::Error| bad(format!("{}: cannot read it: {e}", path.display()));
    let (file, _) = open_run_file(path, cannot)?;
    let mut text = String::new();
    file.take(MAX_RUN_JSON_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > MAX_RUN_JSON_BYTES {
        return Err(bad(format!(
            "{}: larger than {MAX_RUN_JSON_BYTES} bytes, the most a run's JSON may hold",
            path.display()
        )));
    }
    let doc: Doc = serde_json::from_str(&text).map_err(|e| bad_json(path, &e))?;
    let mut seen = std::collections::BTreeSet::new();
    doc.gestures
        .into_iter()
        .map(|g| {
            if !seen.insert(g.gesture) {
                return Err(bad(format!(
                    "{}: gesture {} is listed twice",
                    path.display(),
                    g.gesture
                )));
            }
            check_sum(g.gesture, &g.counts).map_err(|e| bad(format!("{}: {e}", path.display())))?;
            Ok(RunGesture {
                gesture: g.gesture,
                kind: g.kind,
                counts: g.counts,
                moves: Vec::new(),
                behind: Vec::new(),
                behind_n: g.frames_behind_moves.map(|f| f.n),
            })
        })
        .collect()
}

/// Reads the CSV at `path` row by row: each row's key must name a gesture (its position
/// by `index`) of its kind in `kinds`, and `take` gets the gesture's position and the row. Errors
/// name the file and line.
fn read_rows<T: for<'de> Deserialize<'de>>(
    path: &Path,
    kinds: &[String],
    index: &BTreeMap<u64, usize>,
    mut take: impl FnMut(usize, T) -> std::result::Result<(), String>,
) -> Result<()> {
    let cannot = |e: io::Error| {
        bad(format!(
            "{}: cannot read it ({GESTURES_JSON} lists gestures): {e}",
            path.display()
        ))
    };
    let (file, _) = open_run_file(path, cannot)?;
    let at = |line: u64, msg: &dyn std::fmt::Display| {
        bad(format!("{}: line {line}: {msg}", path.display()))
    };
    let mut rdr = csv::Reader::from_reader(RowBound::new(file));
    let headers = rdr.headers().map_err(|e| at(1, &e))?.clone();
    let mut rec = csv::StringRecord::new();
    loop {
        let more = rdr.read_record(&mut rec).map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            at(line, &e)
        })?;
        if !more {
            return Ok(());
        }
        let line = rec.position().map_or(0, |p| p.line());
        let key: Key = rec.deserialize(Some(&headers)).map_err(|e| at(line, &e))?;
        let Some(&i) = index.get(&key.gesture) else {
            return Err(at(
                line,
                &format!("gesture {} is not in {GESTURES_JSON}", key.gesture),
            ));
        };
        if kinds[i] != key.kind {
            return Err(at(
                line,
                &format!(
                    "gesture {} is a {} in {GESTURES_JSON}, not a {}",
                    key.gesture, kinds[i], key.kind
                ),
            ));
        }
        let row: T = rec.deserialize(Some(&headers)).map_err(|e| at(line, &e))?;
        take(i, row).map_err(|e| at(line, &e))?;
    }
}

/// A figure is a finite number (`NaN` and `inf` parse as numbers, but no move took them).
fn finite(values: impl IntoIterator<Item = f64>) -> std::result::Result<(), String> {
    match values.into_iter().find(|v| !v.is_finite()) {
        Some(v) => Err(format!("{v} is not a finite figure")),
        None => Ok(()),
    }
}

/// The counts `gestures.json` states add up to the moves dispatched: a count that was
/// damaged or dropped cannot hide as another's residual.
fn check_sum(gesture: u64, c: &GestureCounts) -> std::result::Result<(), String> {
    let parts = [
        c.folded_by_browser,
        c.unseen,
        c.answered,
        c.unanswered,
        c.coalesced,
    ];
    let sum = parts.iter().try_fold(0u64, |a, &p| a.checked_add(p));
    if sum == Some(c.dispatched) {
        return Ok(());
    }
    Err(format!(
        "gesture {gesture}: {} dispatched, but {} folded_by_browser + {} unseen + {} answered + {} unanswered + {} coalesced do not add up to it",
        c.dispatched, parts[0], parts[1], parts[2], parts[3], parts[4]
    ))
}

/// The rows of `g` add up to the counts `gestures.json` states for it.
fn check_counts(g: &RunGesture) -> std::result::Result<(), String> {
    let c = g.counts;
    let of = |o: &str| g.moves.iter().filter(|m| m.outcome == o).count() as u64;
    let rows = (of("answered"), of("unanswered"), of("coalesced"));
    let stated = (c.answered, c.unanswered, c.coalesced);
    if rows == stated {
        return Ok(());
    }
    Err(format!(
        "gesture {}: its rows are {} answered, {} unanswered, {} coalesced, but {GESTURES_JSON} counts {}, {}, {}",
        g.gesture, rows.0, rows.1, rows.2, stated.0, stated.1, stated.2
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOVES_HEAD: &str = "gesture,kind,move,t_input_ms,t_delivered_ms,t_send_ms,input_to_socket_ms,carried,oldest_age_ms,t_answer_ms,move_to_pixels_ms,outcome\n";
    const BEHIND_HEAD: &str = "gesture,kind,t_frame_ms,moves_behind,ms_behind\n";

    fn doc(answered: u64, coalesced: u64) -> String {
        format!(
            r#"{{"schema_version": 1, "kind": "gestures", "gestures": [
  {{"gesture": 0, "kind": "drag", "counts": {{"dispatched": 3, "folded_by_browser": 0,
    "answered": {answered}, "unanswered": 0, "coalesced": {coalesced}, "sends": 2}},
    "frames_behind_moves": {{"n": 2, "p50": 0.5, "p90": 0.9, "max": 1}}}}]}}"#
        )
    }

    /// A drag of three moves: two sends, the first carrying two moves.
    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(GESTURES_JSON), doc(2, 1)).unwrap();
        let moves = format!(
            "{MOVES_HEAD}0,drag,0,10.000,11.000,15.000,4.000,2,5.000,,,coalesced\n\
             0,drag,1,12.000,13.000,15.000,2.000,2,5.000,40.000,28.000,answered\n\
             0,drag,2,30.000,31.000,33.000,2.000,1,3.000,60.000,30.000,answered\n"
        );
        std::fs::write(d.path().join(MOVES_CSV), moves).unwrap();
        let behind = format!("{BEHIND_HEAD}0,drag,40.000,1,28.000\n0,drag,60.000,0,30.000\n");
        std::fs::write(d.path().join(FRAMES_BEHIND_CSV), behind).unwrap();
        d
    }

    fn err(d: &Path) -> String {
        format!("{:#}", load_gestures(d).unwrap_err())
    }

    #[test]
    fn a_folder_without_gestures_has_none_and_one_with_them_reads_each_row() {
        let empty = tempfile::tempdir().unwrap();
        assert!(load_gestures(empty.path()).unwrap().is_empty());
        let d = folder();
        let g = load_gestures(d.path()).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].gesture, g[0].kind.as_str()), (0, "drag"));
        assert_eq!(g[0].counts.answered, 2);
        let sends: Vec<u32> = g[0]
            .moves
            .iter()
            .filter(|m| m.is_send())
            .map(|m| m.carried)
            .collect();
        assert_eq!(sends, [2, 1], "the coalesced move is no send of its own");
        let pix: Vec<Option<f64>> = g[0].moves.iter().map(|m| m.move_to_pixels).collect();
        assert_eq!(pix, [None, Some(28.0), Some(30.0)]);
        assert_eq!(g[0].behind.len(), 2);
        assert_eq!((g[0].behind[1].moves, g[0].behind[1].ms), (0.0, 30.0));
    }

    #[test]
    fn damage_is_refused_naming_the_file_and_line() {
        let cases: [(&str, &str, &str, &str); 5] = [
            (
                MOVES_CSV,
                ",answered\n0,drag,2",
                ",lost\n0,drag,2",
                "moves.csv: line 3: outcome `lost`",
            ),
            (
                MOVES_CSV,
                "0,drag,2,",
                "3,drag,2,",
                "moves.csv: line 4: gesture 3 is not in gestures.json",
            ),
            (
                MOVES_CSV,
                "0,drag,2,",
                "0,hover,2,",
                "moves.csv: line 4: gesture 0 is a drag",
            ),
            (
                MOVES_CSV,
                "60.000,30.000",
                "60.000,NaN",
                "moves.csv: line 4: NaN is not a finite figure",
            ),
            (
                FRAMES_BEHIND_CSV,
                "40.000,1,",
                "40.000,one,",
                "frames_behind.csv: line 2:",
            ),
        ];
        for (file, from, to, want) in cases {
            let d = folder();
            let p = d.path().join(file);
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(text.contains(from), "{file}: {from}");
            std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
            let e = err(d.path());
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn the_document_and_the_rows_must_agree() {
        let d = folder();
        std::fs::write(d.path().join(GESTURES_JSON), doc(3, 0)).unwrap();
        let e = err(d.path());
        assert!(
            e.contains("moves.csv: gesture 0: its rows are 2 answered")
                && e.contains("counts 3, 0, 0"),
            "{e}"
        );
        std::fs::write(
            d.path().join(GESTURES_JSON),
            "{\"gestures\": [\n{\"gesture\": 0}]}",
        )
        .unwrap();
        let e = err(d.path());
        assert!(e.contains("gestures.json: line 2"), "{e}");
        let d = folder();
        std::fs::remove_file(d.path().join(FRAMES_BEHIND_CSV)).unwrap();
        assert!(err(d.path()).contains("frames_behind.csv: cannot read it"));
    }

    #[test]
    fn each_count_damaged_breaks_the_sum_and_is_refused() {
        let counts = [
            "dispatched",
            "folded_by_browser",
            "answered",
            "unanswered",
            "coalesced",
        ];
        for name in counts {
            let d = folder();
            let p = d.path().join(GESTURES_JSON);
            let text = std::fs::read_to_string(&p).unwrap();
            let (from, to) = (format!("\"{name}\": "), format!("\"{name}\": 1"));
            assert!(text.contains(&from), "{name}");
            // A digit put in front: 3 reads 13, 0 reads 10.
            std::fs::write(&p, text.replacen(&from, &to, 1)).unwrap();
            let e = err(d.path());
            assert!(
                e.contains("gestures.json: gesture 0:") && e.contains("do not add up"),
                "{name}: {e}"
            );
        }
        // `unseen` was not written by older runs: when it is, it counts like the rest.
        let d = folder();
        let p = d.path().join(GESTURES_JSON);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(
            &p,
            text.replacen("\"sends\"", "\"unseen\": 2, \"sends\"", 1),
        )
        .unwrap();
        assert!(err(d.path()).contains("2 unseen"), "{}", err(d.path()));
    }

    #[test]
    fn frames_behind_cut_or_negative_is_refused() {
        // Cut: 44 of 144 frames printed figures as if they were all.
        let d = folder();
        let p = d.path().join(FRAMES_BEHIND_CSV);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replacen("0,drag,60.000,0,30.000\n", "", 1)).unwrap();
        let e = err(d.path());
        assert!(
            e.contains("frames_behind.csv: gesture 0: 1 rows, but gestures.json counts 2"),
            "{e}"
        );
        let d = folder();
        let p = d.path().join(FRAMES_BEHIND_CSV);
        std::fs::write(&p, text.replacen("40.000,1,", "40.000,-7,", 1)).unwrap();
        let e = err(d.path());
        assert!(
            e.contains("frames_behind.csv: line 2:") && e.contains("-7 moves"),
            "{e}"
        );
    }

    #[test]
    fn moves_csv_that_lost_rows_is_refused_naming_the_counts() {
        let d = folder();
        let p = d.path().join(MOVES_CSV);
        let text = std::fs::read_to_string(&p).unwrap();
        let kept: Vec<&str> = text.lines().take(2).collect();
        std::fs::write(&p, kept.join("\n") + "\n").unwrap();
        let e = err(d.path());
        assert!(
            e.contains("its rows are 0 answered, 0 unanswered, 1 coalesced")
                && e.contains("counts 2, 0, 1"),
            "{e}"
        );
    }
}
