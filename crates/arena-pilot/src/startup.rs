//! Cold start: each round a fresh target (the fixture with the arm's knobs, or the arm's
//! setup command, behind the arm's link) and a fresh browser profile, from navigation to
//! the board on screen; arms interleaved as in [`crate::ab`]. The page's recorder marks
//! the socket's `open` and, in region mode, the first frame whose board region is no
//! longer blank; [`milestones`] reads every milestone off the records, on the page clock.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use arena_browser::{Browser, Record, RecordKind, SocketChoice, StartupWatch};
use arena_report::{Exit, ExitKind};
use arena_run::{RoundStatus, StartupRound};

use crate::ab::{check_arms_and_rounds, schedule};
use crate::cancel::Cancel;
use crate::cpu::CpuWatch;
use crate::plan::{BrowserOptions, Plan};
use crate::progress::{OnProgress, Progress};
use crate::target::Target;

/// What marks the board on screen.
#[derive(Debug, Clone, PartialEq)]
pub enum BoardRule {
    /// The messages received reach this many payload bytes; the board is on screen at the
    /// first painted frame drawn after that receipt.
    Bytes(u64),
    /// `[x, y, width, height]` in CSS px of the pilot's canvas: the board is on screen at
    /// the first animation frame where its pixels are not all alike.
    Region([f64; 4]),
}

impl BoardRule {
    /// `bytes=N` or `region=X,Y,W,H` (CSS px of the pilot's canvas).
    pub fn parse(text: &str) -> Result<BoardRule, String> {
        let bad = || format!("`{text}`: expected bytes=N or region=X,Y,W,H (CSS px)");
        match text.trim().split_once('=') {
            Some(("bytes", n)) => match n.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(BoardRule::Bytes(n)),
                _ => Err(format!("`{text}`: bytes must be a whole number above 0")),
            },
            Some(("region", r)) => {
                let v: Vec<f64> = r
                    .split(',')
                    .map(|x| x.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| bad())?;
                match v[..] {
                    [x, y, w, h]
                        if v.iter().all(|n| n.is_finite())
                            && x >= 0.0
                            && y >= 0.0
                            && w > 0.0
                            && h > 0.0 =>
                    {
                        Ok(BoardRule::Region([x, y, w, h]))
                    }
                    _ => Err(format!(
                        "`{text}`: a region is X,Y,W,H with W and H above 0"
                    )),
                }
            }
            _ => Err(bad()),
        }
    }

    /// The rule in words, for a table's note.
    pub fn describe(&self, canvas: &str) -> String {
        match self {
            BoardRule::Bytes(n) => format!(
                "the first painted frame after the received bytes reach {}",
                arena_report::fmt_bytes(*n)
            ),
            BoardRule::Region([x, y, w, h]) => format!(
                "the first frame where the region {x},{y} {w}x{h} CSS px of `{canvas}` is no longer blank (its pixels not all alike)"
            ),
        }
    }

    /// The rule as data, for the JSON document.
    pub fn to_json(&self, canvas: &str) -> serde_json::Value {
        match self {
            BoardRule::Bytes(n) => serde_json::json!({"mode": "bytes", "bytes": n}),
            BoardRule::Region(r) => {
                serde_json::json!({"mode": "region", "region_css_px": r, "canvas": canvas})
            }
        }
    }
}

/// The milestones' thresholds and the round's limit.
#[derive(Debug, Clone, PartialEq)]
pub struct StartupOptions {
    /// The first-bytes milestone: received payload bytes reach this.
    pub first_bytes: u64,
    pub board: BoardRule,
    /// A round waits this long from navigation for its milestones.
    pub timeout: Duration,
}

pub struct StartupRequest<'a> {
    /// One plan per arm, resolved before any browser starts; the first is the baseline.
    pub plans: Vec<Plan<'a>>,
    pub rounds: u32,
    pub options: StartupOptions,
    pub browser: BrowserOptions,
    pub progress: OnProgress<'a>,
    pub cancel: &'a Cancel,
}

/// Every round made, in order; `error` is set when the rounds ended early (interrupted,
/// or a target or browser that failed): the rounds measured are kept.
pub struct StartupOutcome {
    pub rounds: Vec<StartupRound>,
    pub error: Option<anyhow::Error>,
}

/// Runs every arm's rounds, interleaved (A B A B ...).
pub async fn run_startup(req: StartupRequest<'_>) -> Result<StartupOutcome> {
    check_arms_and_rounds(req.plans.len(), req.rounds)?;
    let order = schedule(req.plans.len(), req.rounds);
    let mut rounds = Vec::new();
    for (i, &(round, arm)) in order.iter().enumerate() {
        let plan = &req.plans[arm];
        (req.progress)(Progress::Run {
            index: i + 1,
            runs: order.len(),
            arm: &plan.arm_name,
            round: round + 1,
        });
        let r = match cold_round(plan, &req, round + 1).await {
            Ok(r) => r,
            Err(e) => {
                let kind = match req.cancel.is_cancelled() {
                    true => ExitKind::Interrupted,
                    false => ExitKind::of(&e).unwrap_or(ExitKind::TargetFailed),
                };
                let e = ended(kind, plan, round, format!("{e:#}"));
                return Ok(StartupOutcome {
                    rounds,
                    error: Some(e),
                });
            }
        };
        let stop = match r.status {
            RoundStatus::Interrupted => Some(ExitKind::Interrupted),
            RoundStatus::Failed => Some(ExitKind::TargetFailed),
            RoundStatus::Complete | RoundStatus::TimedOut => None,
        };
        let why = r.message.clone().unwrap_or_default();
        rounds.push(r);
        if let Some(kind) = stop {
            let e = ended(
                kind,
                plan,
                round,
                format!("{why}; the rounds measured are shown"),
            );
            return Ok(StartupOutcome {
                rounds,
                error: Some(e),
            });
        }
    }
    Ok(StartupOutcome {
        rounds,
        error: None,
    })
}

/// The error that ends the rounds early, naming the round.
fn ended(kind: ExitKind, plan: &Plan<'_>, round: u32, why: String) -> anyhow::Error {
    anyhow!(Exit::new(
        kind,
        format!("{} round {}: {why}", plan.arm_name, round + 1)
    ))
}

/// One cold round: a fresh target, then a fresh browser; both gone when it returns.
async fn cold_round(plan: &Plan<'_>, req: &StartupRequest<'_>, round: u32) -> Result<StartupRound> {
    let mut target = Target::start(plan, req.cancel).await?;
    let res = match req.browser.launch().await {
        Ok(browser) => {
            (req.progress)(Progress::Browser {
                version: browser.version(),
                pid: browser.pid(),
            });
            // The whole round is one phase; a sampler that cannot start leaves no figures.
            let pid = Some(browser.pid());
            let cpu = CpuWatch::start("cold start", &plan.sample, target.in_process(), pid).ok();
            let mut r = watch(&browser, plan, &target, req, round).await;
            let figures = cpu.map(CpuWatch::finish);
            if let Ok(r) = r.as_mut() {
                r.cpu = figures;
            }
            let _ = browser.close().await;
            r
        }
        Err(e) => Err(e),
    };
    target.stop().await;
    res
}

/// Opens the target in a fresh page and collects its records until every milestone is
/// reached, the timeout passes, the page fails or Ctrl-C.
async fn watch(
    browser: &Browser,
    plan: &Plan<'_>,
    target: &Target,
    req: &StartupRequest<'_>,
    round: u32,
) -> Result<StartupRound> {
    let opts = &req.options;
    let mut recorder = plan.recorder.clone();
    // No inputs here: the answer oracle has nothing to watch.
    recorder.answer = None;
    // The network layer's handshake and receipts come through CDP: the tap must run.
    if recorder.sockets == SocketChoice::PageHook {
        recorder.sockets = SocketChoice::Auto;
    }
    recorder.startup = Some(StartupWatch {
        canvas: Some(plan.canvas.clone()),
        region: match opts.board {
            BoardRule::Region(r) => Some(r),
            BoardRule::Bytes(_) => None,
        },
    });
    let started = Instant::now();
    let page = target.open_page(browser, recorder).await?;
    let mut records: Vec<Record> = Vec::new();
    let (status, message) = loop {
        match page.drain().await {
            Ok(d) => records.extend(d.records),
            Err(e) => {
                break (
                    RoundStatus::Failed,
                    Some(format!("reading the page: {e:#}")),
                )
            }
        }
        if milestones(&records, opts).at_ms.iter().all(Option::is_some) {
            break (RoundStatus::Complete, None);
        }
        if req.cancel.is_cancelled() {
            break (RoundStatus::Interrupted, Some("interrupted".into()));
        }
        if started.elapsed() >= opts.timeout {
            break (RoundStatus::TimedOut, None);
        }
        req.cancel.sleep(Duration::from_millis(25)).await;
    };
    let server = server_times(&page, target).await;
    if let Some(open) = server.open {
        records.push(server_record(open));
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), browser.close_page(page)).await;
    let m = milestones(&records, opts);
    Ok(StartupRound {
        arm: plan.arm_name.clone(),
        round,
        at_ms: m.at_ms,
        board_bytes: m.board_bytes,
        frames: m.frames,
        bytes: m.bytes,
        timeout_ms: opts.timeout.as_millis() as u64,
        board_sent_ms: server.board_sent,
        status,
        message,
        cpu: None,
    })
}

/// What the in-process fixture saw, on the page clock: its upgrade of the page's socket
/// (exact, where the browser's handshake and `open` wait for a cold browser's busy
/// threads, tens of ms on a loaded machine) and its board leaving. None for a URL.
#[derive(Default)]
struct ServerTimes {
    open: Option<f64>,
    board_sent: Option<f64>,
}

async fn server_times(page: &arena_browser::Page, target: &Target) -> ServerTimes {
    let (opens, sent) = (target.fixture_upgrades(), target.fixture_boards_sent());
    if opens.is_empty() {
        return ServerTimes::default();
    }
    let map = match tokio::time::timeout(Duration::from_secs(5), page.clock_map()).await {
        Ok(Ok(m)) => m,
        _ => return ServerTimes::default(),
    };
    let now = arena_browser::monotonic_ms();
    let page_ms = |at: &Instant| now - at.elapsed().as_secs_f64() * 1e3 - map.offset_ms;
    ServerTimes {
        open: opens.first().map(page_ms),
        board_sent: sent.first().map(page_ms),
    }
}

fn server_record(t_ms: f64) -> Record {
    Record {
        seq: u64::MAX,
        kind: RecordKind::WsOpen,
        t_ms,
        size: 0,
        class: arena_browser::SendClass::Other,
        event: "server".into(),
        trusted: true,
        target: 0,
        answers: None,
    }
}

/// The milestones a page's records reach, page-clock ms from navigation.
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    /// In `arena_run::Milestone::ALL` order.
    pub at_ms: [Option<f64>; 5],
    pub board_bytes: Option<u64>,
    pub frames: u64,
    pub bytes: u64,
}

/// Reads the milestones off the records (pure; records in any order).
pub fn milestones(records: &[Record], opts: &StartupOptions) -> Reached {
    let mut recs: Vec<&Record> = records.iter().collect();
    recs.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms).then(a.seq.cmp(&b.seq)));
    let first = |k: RecordKind, after: f64| {
        recs.iter()
            .find(|r| r.kind == k && r.t_ms >= after)
            .map(|r| r.t_ms)
    };
    // The earliest open: the fixture's own upgrade, then the network layer's handshake
    // (CDP), then the page's `open` event, which waits for a busy main thread.
    let open = first(RecordKind::WsOpen, f64::NEG_INFINITY);
    let recv: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|r| r.kind == RecordKind::WsRecv)
        .collect();
    // Running total of received bytes at each receipt.
    let totals: Vec<(f64, u64)> = recv
        .iter()
        .scan(0u64, |sum, r| {
            *sum += u64::from(r.size);
            Some((r.t_ms, *sum))
        })
        .collect();
    let reach = |n: u64| totals.iter().find(|(_, s)| *s >= n.max(1)).copied();
    let (received, paint) = match opts.board {
        BoardRule::Bytes(b) => match reach(b) {
            Some((t, sum)) => {
                let drawn = first(RecordKind::Draw, t);
                (
                    Some((t, sum)),
                    drawn.and_then(|d| first(RecordKind::Paint, d)),
                )
            }
            None => (None, None),
        },
        BoardRule::Region(_) => match first(RecordKind::RegionPainted, f64::NEG_INFINITY) {
            Some(p) => (totals.iter().rev().find(|(t, _)| *t <= p).copied(), Some(p)),
            None => (None, None),
        },
    };
    // Bytes from socket open: receipts all follow it, so the running total is that count.
    Reached {
        at_ms: [
            open,
            recv.first().map(|r| r.t_ms),
            reach(opts.first_bytes).map(|(t, _)| t),
            received.map(|(t, _)| t),
            paint,
        ],
        board_bytes: received.map(|(_, s)| s),
        frames: recv.len() as u64,
        bytes: totals.last().map_or(0, |(_, s)| *s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_browser::SendClass;

    fn rec(seq: u64, kind: RecordKind, t: f64, size: u32) -> Record {
        Record {
            seq,
            kind,
            t_ms: t,
            size,
            class: SendClass::Other,
            event: String::new(),
            trusted: true,
            target: 0,
            answers: None,
        }
    }

    fn opts(board: BoardRule) -> StartupOptions {
        StartupOptions {
            first_bytes: 1000,
            board,
            timeout: Duration::from_secs(1),
        }
    }

    fn page() -> Vec<Record> {
        vec![
            rec(0, RecordKind::WsOpen, 100.0, 0),
            rec(1, RecordKind::WsRecv, 120.0, 600),
            rec(2, RecordKind::Draw, 121.0, 0),
            rec(3, RecordKind::Paint, 130.0, 0),
            rec(4, RecordKind::WsRecv, 900.0, 500_000),
            rec(5, RecordKind::Paint, 901.0, 0),
            rec(6, RecordKind::Draw, 940.0, 0),
            rec(7, RecordKind::Paint, 950.0, 0),
            rec(8, RecordKind::RegionPainted, 951.0, 77),
        ]
    }

    #[test]
    fn bytes_mode_paints_after_the_board_is_drawn() {
        let m = milestones(&page(), &opts(BoardRule::Bytes(400_000)));
        assert_eq!(
            m.at_ms,
            [
                Some(100.0),
                Some(120.0),
                Some(900.0),
                Some(900.0),
                Some(950.0)
            ]
        );
        assert_eq!(m.board_bytes, Some(500_600));
        assert_eq!((m.frames, m.bytes), (2, 500_600));
    }

    #[test]
    fn region_mode_takes_the_last_receipt_before_the_paint() {
        let mut recs = page();
        recs.reverse();
        let m = milestones(&recs, &opts(BoardRule::Region([0.0, 0.0, 64.0, 64.0])));
        assert_eq!(m.at_ms[3], Some(900.0));
        assert_eq!(m.at_ms[4], Some(951.0));
        assert_eq!(m.board_bytes, Some(500_600));
    }

    #[test]
    fn the_network_handshake_comes_before_the_page_open_event() {
        let mut recs = page();
        let mut hs = rec(9, RecordKind::WsOpen, 90.0, 0);
        hs.event = "handshake".into();
        recs.push(hs);
        let m = milestones(&recs, &opts(BoardRule::Bytes(400_000)));
        assert_eq!(m.at_ms[0], Some(90.0));
    }

    #[test]
    fn board_rules_parse_or_say_why_not() {
        assert_eq!(
            BoardRule::parse("bytes=400000"),
            Ok(BoardRule::Bytes(400_000))
        );
        assert_eq!(
            BoardRule::parse("region=0, 0,200,100.5"),
            Ok(BoardRule::Region([0.0, 0.0, 200.0, 100.5]))
        );
        for bad in [
            "bytes=0",
            "bytes=x",
            "region=1,2,3",
            "region=0,0,0,5",
            "pixels=3",
            "",
        ] {
            let e = BoardRule::parse(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn what_the_page_never_reached_stays_none() {
        let m = milestones(&page(), &opts(BoardRule::Bytes(10_000_000)));
        assert_eq!(m.at_ms[3], None);
        assert_eq!(m.at_ms[4], None);
        assert_eq!(m.board_bytes, None);
        let early: Vec<Record> = page().into_iter().take(2).collect();
        let m = milestones(&early, &opts(BoardRule::Region([0.0, 0.0, 8.0, 8.0])));
        assert_eq!(m.at_ms, [Some(100.0), Some(120.0), None, None, None]);
        let m = milestones(&[], &opts(BoardRule::Bytes(1)));
        assert_eq!(m.at_ms, [None; 5]);
    }
}
