//! Cold-start tables and document: a table per milestone with every round's figure and
//! the median per arm, in the layout of a PERFORMANCE.md ("| | board on screen |" /
//! "| 2 vCPU | 32.8s, 43.9s |"), from navigation and from socket open; a milestone a
//! round never reached is in its row as "not reached (timeout T)", never dropped.

use arena_report::{fmt_bytes, fmt_count, fmt_ms};
use arena_report::{Cell, Column, Table};
use arena_run::{Milestone, StartupRound};
use arena_stats::quantile;
use serde_json::{json, Value};

use crate::json::num;

/// What the rounds were measured against, for the tables' notes and the document.
#[derive(Debug, Clone)]
pub struct StartupSetup {
    pub first_bytes: u64,
    /// The board rule in words ("bytes received reach 400,000B", "region ... not blank").
    pub board: String,
    /// The board rule as data (`{"mode": "bytes", "bytes": N}` or the region's).
    pub board_json: Value,
    pub timeout_ms: u64,
    pub link: Option<String>,
}

fn rounds_of<'a>(
    rounds: &'a [StartupRound],
    arm: &'a str,
) -> impl Iterator<Item = &'a StartupRound> {
    rounds.iter().filter(move |r| r.arm == arm)
}

/// Every round's figure, comma-separated, a round that did not reach it said so.
fn figures(rs: &[&StartupRound], f: impl Fn(&StartupRound) -> Option<f64>) -> String {
    let words: Vec<String> = rs
        .iter()
        .map(|r| match f(r) {
            Some(ms) => fmt_ms(ms),
            None => format!("not reached (timeout {}ms)", fmt_count(r.timeout_ms as i64)),
        })
        .collect();
    words.join(", ")
}

fn median(rs: &[&StartupRound], f: impl Fn(&StartupRound) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = rs.iter().filter_map(|r| f(r)).collect();
    quantile(&v, 0.5)
}

fn median_cell(m: Option<f64>) -> Cell {
    match m {
        Some(ms) => Cell::num(fmt_ms(ms), ms).strong(),
        None => Cell::text("not reached"),
    }
}

fn title(m: Milestone, setup: &StartupSetup) -> String {
    match m {
        Milestone::FirstBytes => format!("first {} received", fmt_bytes(setup.first_bytes)),
        other => other.label().to_string(),
    }
}

/// One table per milestone, arms as rows in the order given.
pub fn startup_tables(
    rounds: &[StartupRound],
    arms: &[String],
    setup: &StartupSetup,
) -> Vec<Table> {
    let mut out: Vec<Table> = Milestone::ALL
        .iter()
        .map(|&m| milestone_table(rounds, arms, setup, m))
        .collect();
    out.push(board_table(rounds, arms));
    out
}

fn milestone_table(
    rounds: &[StartupRound],
    arms: &[String],
    setup: &StartupSetup,
    m: Milestone,
) -> Table {
    let name = title(m, setup);
    let mut t = Table::new(vec![
        Column::left(""),
        Column::left(format!("{name}, from navigation")),
        Column::right("median"),
        Column::left("from socket open"),
        Column::right("median"),
        Column::right("reached"),
    ])
    .with_title(name);
    for arm in arms {
        let rs: Vec<&StartupRound> = rounds_of(rounds, arm).collect();
        let reached = rs.iter().filter(|r| r.at(m).is_some()).count();
        t.push_row(vec![
            Cell::text(arm.as_str()),
            Cell::text(figures(&rs, |r| r.at(m))),
            median_cell(median(&rs, |r| r.at(m))),
            Cell::text(figures(&rs, |r| r.after_open(m))),
            median_cell(median(&rs, |r| r.after_open(m))),
            Cell::num(format!("{reached} of {}", rs.len()), reached as f64),
        ]);
    }
    t.note(format!(
        "ms on the page clock, each round a fresh browser profile and a fresh target; median of the rounds that reached it; timeout {}ms a round",
        fmt_count(setup.timeout_ms as i64)
    ));
    if matches!(m, Milestone::BoardReceived | Milestone::BoardPaint) {
        t.note(format!("board: {}", setup.board));
    }
    if let Some(l) = &setup.link {
        t.note(format!("link: {l}"));
    }
    t
}

/// The board per round: its bytes, and the page's own handling from its last receipt to
/// its paint (decode and draw).
fn board_table(rounds: &[StartupRound], arms: &[String]) -> Table {
    let mut t = Table::new(vec![
        Column::left(""),
        Column::left("board bytes, socket open to its last receipt"),
        Column::left("last receipt to on screen"),
        Column::right("median"),
    ])
    .with_title("the board");
    for arm in arms {
        let rs: Vec<&StartupRound> = rounds_of(rounds, arm).collect();
        let bytes: Vec<String> = rs
            .iter()
            .map(|r| r.board_bytes.map_or("not reached".into(), fmt_bytes))
            .collect();
        t.push_row(vec![
            Cell::text(arm.as_str()),
            Cell::text(bytes.join(", ")),
            Cell::text(figures(&rs, StartupRound::board_decode_ms)),
            median_cell(median(&rs, StartupRound::board_decode_ms)),
        ]);
    }
    t.note("payload bytes as the page received them; ms on the page clock");
    t
}

fn milestone_json(r: &StartupRound, m: Milestone) -> Value {
    match r.at(m) {
        Some(t) => json!({
            "from_navigation_ms": num(t),
            "from_socket_open_ms": r.after_open(m).map_or(Value::Null, num),
        }),
        None => Value::Null,
    }
}

fn round_json(r: &StartupRound) -> Value {
    let mut ms = serde_json::Map::new();
    for m in Milestone::ALL {
        ms.insert(m.key().into(), milestone_json(r, m));
    }
    json!({
        "arm": r.arm,
        "round": r.round,
        "status": r.status,
        "message": r.message,
        "milestones": ms,
        "board_bytes": r.board_bytes,
        "board_decode_ms": r.board_decode_ms().map_or(Value::Null, num),
        "frames": r.frames,
        "bytes": r.bytes,
        "timeout_ms": r.timeout_ms,
        "board_sent_from_socket_open_ms": r
            .board_sent_ms
            .zip(r.at(Milestone::SocketOpen))
            .map_or(Value::Null, |(s, o)| num(s - o)),
        "cpu": r.cpu,
    })
}

fn arm_json(rounds: &[StartupRound], arm: &str) -> Value {
    let rs: Vec<&StartupRound> = rounds_of(rounds, arm).collect();
    let mut ms = serde_json::Map::new();
    for m in Milestone::ALL {
        let reached = rs.iter().filter(|r| r.at(m).is_some()).count();
        ms.insert(
            m.key().into(),
            json!({
                "rounds": rs.len(),
                "reached": reached,
                "not_reached": rs.len() - reached,
                "median_from_navigation_ms": median(&rs, |r| r.at(m)).map_or(Value::Null, num),
                "median_from_socket_open_ms": median(&rs, |r| r.after_open(m)).map_or(Value::Null, num),
            }),
        );
    }
    json!({ "arm": arm, "milestones": ms })
}

/// The `startup --format json` document: the setup, every round in order, then per arm
/// the median of each milestone and how many rounds reached it.
pub fn startup_json(rounds: &[StartupRound], arms: &[String], setup: &StartupSetup) -> Value {
    arena_report::json::document(
        "startup",
        json!({
            "unit": "ms",
            "setup": {
                "first_bytes": setup.first_bytes,
                "board": setup.board_json,
                "timeout_ms": setup.timeout_ms,
                "link": setup.link,
            },
            "rounds": rounds.iter().map(round_json).collect::<Vec<_>>(),
            "arms": arms.iter().map(|a| arm_json(rounds, a)).collect::<Vec<_>>(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_report::Format;
    use arena_run::RoundStatus;

    fn round(arm: &str, n: u32, paint: Option<f64>) -> StartupRound {
        StartupRound {
            arm: arm.into(),
            round: n,
            at_ms: [Some(100.0), Some(900.0), Some(900.0), Some(905.0), paint],
            board_bytes: Some(672_000),
            frames: 1,
            bytes: 672_000,
            timeout_ms: 5000,
            board_sent_ms: None,
            status: match paint {
                Some(_) => RoundStatus::Complete,
                None => RoundStatus::TimedOut,
            },
            message: None,
            cpu: None,
        }
    }

    fn setup() -> StartupSetup {
        StartupSetup {
            first_bytes: 65_536,
            board: "bytes received reach 400,000B".into(),
            board_json: json!({"mode": "bytes", "bytes": 400_000}),
            timeout_ms: 5000,
            link: None,
        }
    }

    #[test]
    fn a_table_per_milestone_with_every_round_and_the_median() {
        let rounds = vec![
            round("a", 1, Some(1000.0)),
            round("b", 1, Some(2000.0)),
            round("a", 2, None),
            round("b", 2, Some(2200.0)),
        ];
        let arms = vec!["a".to_string(), "b".to_string()];
        let tables = startup_tables(&rounds, &arms, &setup());
        assert_eq!(tables.len(), Milestone::ALL.len() + 1);
        let md = tables[4].render(Format::Markdown);
        let lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(lines.len(), 4, "{md}");
        assert!(
            lines[0].contains("board on screen, from navigation"),
            "{md}"
        );
        assert!(
            lines[2].contains("1,000ms, not reached (timeout 5,000ms)")
                && lines[2].contains("1 of 2"),
            "{md}"
        );
        assert!(
            lines[3].contains("2,000ms, 2,200ms") && lines[3].contains("**2,100ms**"),
            "{md}"
        );
        assert!(
            lines[3].contains("1,900ms, 2,100ms"),
            "from socket open: {md}"
        );
        let doc = startup_json(&rounds, &arms, &setup());
        assert_eq!(doc["kind"], "startup");
        assert_eq!(doc["rounds"][2]["milestones"]["board_paint"], Value::Null);
        assert_eq!(doc["rounds"][0]["board_decode_ms"], json!(95.0));
        let a = &doc["arms"][0]["milestones"]["board_paint"];
        assert_eq!(
            (a["reached"].clone(), a["not_reached"].clone()),
            (json!(1), json!(1))
        );
    }
}
