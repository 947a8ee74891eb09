//! What a verification found: each kind's shifts and verdict, and the whole report the
//! table and `verify --format json` print.

use serde::Serialize;

use super::rule::{self, Band, Move, QuantileShift, LOW_Q};

/// What a kind's rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Clicks' and keys' loops (mousedown, mouseup, keydown).
    Loops,
    /// A gesture kind's moves (drag, hover).
    Moves,
}

/// How one input kind fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every interval, lower decile and median, meets the delay and leaves 0 out.
    Caused,
    /// The lower deciles moved by the delay, a median's interval holds both 0 and the
    /// delay: caused at the fast end, the middle too spread (between runs, mostly) to say.
    CausedMedianUnknown,
    /// Caused, and some quantile moved wholly more than the delay: the path counts more
    /// than once (an answer gated on an ack that crosses the link, say).
    Amplified,
    /// The lower deciles moved by the delay, a median wholly less (over 0): the answers
    /// are caused, but the target was faster in the middle of its distribution when
    /// delayed, so its medians do not measure the path alone.
    MedianLess,
    /// A lower decile moved wholly less than the delay, or a median not at all: some of
    /// the answers were not caused by the inputs they were paired with (in flight before
    /// them, an earlier input's follow-up, a clock of the app's own), since an answer an
    /// input caused cannot arrive sooner than the path allows.
    NotCaused,
    /// A gesture's moves were drawn as the delay says, but its input-to-socket moved
    /// with the link: the app's sends wait on it (flow control), so input-to-socket is not
    /// the browser's and the app's time alone.
    SocketMoved,
    /// A lower decile's interval holds both 0 and the delay: too wide to tell.
    Unknown,
    /// Too few answered loops on a side to tell.
    TooFew,
    /// No answered loop on either side: nothing was claimed, nothing to prove.
    Unanswered,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Caused => "caused by its input",
            Verdict::CausedMedianUnknown => "caused by its input; its median unknown",
            Verdict::Amplified => "caused; moved more than the delay",
            Verdict::MedianLess => "its median moved less than the delay",
            Verdict::NotCaused => "not caused by its input",
            Verdict::SocketMoved => "input-to-socket moved with the link",
            Verdict::Unknown => "unknown",
            Verdict::TooFew => "too few answers to tell",
            Verdict::Unanswered => "unanswered on both sides",
        }
    }

    /// Whether this kind fails the verification (exit 1).
    pub fn fails(self) -> bool {
        matches!(
            self,
            Verdict::NotCaused | Verdict::MedianLess | Verdict::SocketMoved
        )
    }

    /// Whether this kind is left undecided (exit 4 when nothing fails).
    pub fn undecided(self) -> bool {
        matches!(self, Verdict::Unknown | Verdict::TooFew)
    }
}

/// One metric of one kind: its lower decile and its median, each shifted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MetricShifts {
    pub low: QuantileShift,
    pub median: QuantileShift,
}

impl MetricShifts {
    pub(super) fn both(&self) -> [&QuantileShift; 2] {
        [&self.low, &self.median]
    }
}

/// The shifts of one metric from `direct` runs to `delayed` ones (one ascending slice a
/// run, unanswered loops `+inf`), each interval at `level`.
pub fn metric_shifts(
    direct: &[&[f64]],
    delayed: &[&[f64]],
    band: Band,
    level: f64,
) -> Option<MetricShifts> {
    Some(MetricShifts {
        low: rule::quantile_shift(direct, delayed, LOW_Q, band, level)?,
        median: rule::quantile_shift(direct, delayed, 0.5, band, level)?,
    })
}

/// A kind's verdict from its metrics' shifts: an unmoved fast end or an unmoved median is
/// not caused; a median that moved less, less; then an unknown fast end leaves the kind
/// unknown; then any shift that moved more is amplified; an unknown median is said.
pub fn judge(metrics: &[&MetricShifts]) -> Verdict {
    let low = || metrics.iter().map(|m| m.low.moved);
    let median = || metrics.iter().map(|m| m.median.moved);
    let all = || metrics.iter().flat_map(|m| m.both()).map(|s| s.moved);
    if metrics.is_empty() {
        Verdict::TooFew
    } else if low().any(|m| matches!(m, Move::Less | Move::None))
        || median().any(|m| m == Move::None)
    {
        Verdict::NotCaused
    } else if median().any(|m| m == Move::Less) {
        Verdict::MedianLess
    } else if low().any(|m| m == Move::Unknown) {
        Verdict::Unknown
    } else if all().any(|m| m == Move::More) {
        Verdict::Amplified
    } else if median().any(|m| m == Move::Unknown) {
        Verdict::CausedMedianUnknown
    } else {
        Verdict::Caused
    }
}

/// One input kind's evidence and verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindResult {
    /// The loop's event (`mousedown`), or the gesture's kind (`drag`).
    pub event: String,
    pub unit: Unit,
    /// Loops (moves) of this kind, direct and delayed (every outcome).
    pub loops: [usize; 2],
    /// Warm answered loops (answered moves), direct and delayed.
    pub answered: [usize; 2],
    /// Warm unanswered loops (unanswered moves), direct and delayed: in the quantiles,
    /// at the top.
    pub unanswered: [usize; 2],
    /// A loop kind's sendToRecv.
    pub send_to_recv: Option<MetricShifts>,
    /// A loop kind's headline ([`VerifyReport::headline`]); a gesture's move-to-pixels.
    pub headline: Option<MetricShifts>,
    /// A gesture's input-to-socket, judged against no delay: it must not move.
    pub input_to_socket: Option<MetricShifts>,
    pub verdict: Verdict,
    /// For an unknown kind, the clicks (moves, for a gesture) a run that would decide
    /// it, if more would (`None` there: the runs disagree, and more rounds would).
    pub clicks_to_decide: Option<u64>,
}

/// The whole verification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    pub injected_ms: f64,
    pub tolerance_ms: f64,
    /// The family-wise error rate, and each interval's level (`1 - alpha / m`).
    pub alpha: f64,
    pub level: f64,
    /// How many intervals the family holds (`m`).
    pub intervals: usize,
    /// The low quantile judged beside the median.
    pub low_q: f64,
    /// The headline metric's name (`inputToPixels` or `inputToPaint`).
    pub headline: String,
    pub runs: [usize; 2],
    pub kinds: Vec<KindResult>,
}

impl VerifyReport {
    /// The kinds that failed, for the exit message.
    pub fn failures(&self) -> Vec<&KindResult> {
        self.kinds.iter().filter(|k| k.verdict.fails()).collect()
    }

    /// The kinds left undecided.
    pub fn undecided(&self) -> Vec<&KindResult> {
        self.kinds
            .iter()
            .filter(|k| k.verdict.undecided())
            .collect()
    }

    /// How the verification ends: failed (exit 1) when a kind is not caused, undecided
    /// (exit 4) when none is and some kind is unknown, passed otherwise; the message
    /// names the kinds.
    pub fn end(&self) -> VerifyEnd {
        let named = |kinds: Vec<&KindResult>| {
            let each: Vec<String> = kinds
                .iter()
                .map(|k| format!("{}: {}", k.event, k.verdict.text()))
                .collect();
            format!(
                "verify: {} (a +{} ms round trip)",
                each.join("; "),
                self.injected_ms
            )
        };
        let (failed, undecided) = (self.failures(), self.undecided());
        if !failed.is_empty() {
            VerifyEnd::Failed(named(failed))
        } else if !undecided.is_empty() {
            VerifyEnd::Undecided(named(undecided))
        } else {
            VerifyEnd::Passed
        }
    }
}

/// How a verification ends, by its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyEnd {
    /// Exit 0.
    Passed,
    /// Exit 1: a kind not caused.
    Failed(String),
    /// Exit 4: nothing failed, and a kind is unknown.
    Undecided(String),
}

/// Fewer answered loops a side than this prove nothing either way.
pub const MIN_ANSWERS: usize = 8;
