//! The tail table: of the loops over a quantile, how many overlapped each cause and how
//! much of their time it covered, beside the same for the loops at or under the median
//! (a cause present everywhere is not the tail's), and beside what chance gives: the same
//! join with the evidence shifted round the run's time by a random offset (the sham).

use arena_run::Outcome;
use arena_sys::rng::SplitMix64;
use serde::Serialize;

use crate::evidence::{Cause, Stage};
use crate::join::{hits, Hit, Placed, Span};

/// One loop joined to the evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Joined {
    pub index: u64,
    pub event: String,
    pub outcome: Outcome,
    /// The headline (inputToPaint), ms; `None` when unanswered: past every quantile.
    pub value_ms: Option<f64>,
    pub spans: Vec<Span>,
    pub hits: Vec<Hit>,
}

impl Joined {
    /// Time its stages cover, ms.
    pub fn span_ms(&self) -> f64 {
        self.spans.iter().map(|s| s.end_ms - s.start_ms).sum()
    }
}

/// Which loops are the tail and which the body.
#[derive(Debug, Clone, Serialize)]
pub struct Split {
    pub quantile: f64,
    /// Indices into the joined loops, slowest last.
    pub tail: Vec<usize>,
    pub body: Vec<usize>,
    /// The pQ and the median, ms; `None` when that rank is an unanswered loop.
    pub threshold_ms: Option<f64>,
    pub median_ms: Option<f64>,
}

/// Orders the loops by their headline (an unanswered one past every answer) and splits
/// off the ones over the `q` quantile (nearest rank) and the ones at or under the median.
pub fn split(joined: &[Joined], q: f64) -> Split {
    let mut order: Vec<usize> = (0..joined.len()).collect();
    let key = |i: &usize| joined[*i].value_ms.unwrap_or(f64::INFINITY);
    order.sort_by(|a, b| key(a).total_cmp(&key(b)));
    let n = order.len();
    let at = |rank: usize| -> Option<f64> {
        let i = *order.get(rank.checked_sub(1)?)?;
        joined[i].value_ms
    };
    let k = ((q * n as f64).ceil() as usize).min(n);
    let half = n.div_ceil(2);
    Split {
        quantile: q,
        tail: order[k..].to_vec(),
        body: order[..half].to_vec(),
        threshold_ms: at(k),
        median_ms: at(half),
    }
}

/// One row of the tail table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub cause: Cause,
    pub stage: Stage,
    /// Pieces of this evidence in the run's time.
    pub evidence: usize,
    pub tail_hits: usize,
    pub tail_n: usize,
    /// Share of the tail loops' time this evidence covered, 0..1.
    pub tail_cover: f64,
    pub body_hits: usize,
    pub body_n: usize,
    /// Tail loops hit under the sham: mean and 95th percentile over the shifts.
    pub sham_mean: f64,
    pub sham_p95: f64,
    pub shams: usize,
    /// It beats chance (more tail loops than the sham's 95th percentile) and the body.
    pub named: bool,
}

fn hit_count(joined: &[Joined], of: &[usize], cause: Cause) -> usize {
    of.iter()
        .filter(|&&i| joined[i].hits.iter().any(|h| h.cause == cause))
        .count()
}

/// The share of the `of` loops' time that `cause` covered (each loop's covered time capped
/// at its own length).
fn cover(joined: &[Joined], of: &[usize], cause: Cause) -> f64 {
    let (mut covered, mut total) = (0.0, 0.0);
    for &i in of {
        let j = &joined[i];
        let c: f64 = j
            .hits
            .iter()
            .filter(|h| h.cause == cause)
            .map(|h| h.overlap_ms)
            .sum();
        covered += c.min(j.span_ms());
        total += j.span_ms();
    }
    if total > 0.0 {
        covered / total
    } else {
        0.0
    }
}

/// The sham's tail hits for each cause over `shams` shifts, drawn with `seed`: the
/// evidence of `window` (page ms) laid round it circularly and shifted by a uniform
/// offset, so its density and lengths stay and only its timing against the loops goes.
pub fn sham(
    joined: &[Joined],
    tail: &[usize],
    placed: &[Placed],
    window: (f64, f64),
    causes: &[Cause],
    shams: usize,
    seed: u64,
) -> Vec<Vec<usize>> {
    let width = window.1 - window.0;
    let mut counts = vec![Vec::with_capacity(shams); causes.len()];
    if width <= 0.0 || shams == 0 {
        return counts;
    }
    // Copies a lap before and after: a stage moved back by up to one lap still meets every
    // piece that would wrap round to it.
    let mut tiled: Vec<Placed> = Vec::with_capacity(placed.len() * 3);
    for lap in [-1.0, 0.0, 1.0] {
        tiled.extend(placed.iter().map(|p| Placed {
            start_ms: p.start_ms + lap * width,
            end_ms: p.end_ms + lap * width,
            ..p.clone()
        }));
    }
    tiled.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    let longest = crate::join::longest(&tiled);
    let mut rng = SplitMix64::new(seed);
    for _ in 0..shams {
        let shift = rng.unit() * width;
        let mut hit = vec![0usize; causes.len()];
        for &i in tail {
            let h = hits(&joined[i].spans, &tiled, longest, shift);
            for (c, n) in causes.iter().zip(hit.iter_mut()) {
                if h.iter().any(|x| x.cause == *c) {
                    *n += 1;
                }
            }
        }
        for (v, n) in counts.iter_mut().zip(hit) {
            v.push(n);
        }
    }
    counts
}

/// The rows, one per cause, from the real join and the sham's counts.
pub fn rows(
    joined: &[Joined],
    split: &Split,
    causes: &[(Cause, usize)],
    sham_counts: &[Vec<usize>],
) -> Vec<Row> {
    causes
        .iter()
        .zip(sham_counts)
        .map(|(&(cause, evidence), counts)| {
            let (tail_n, body_n) = (split.tail.len(), split.body.len());
            let tail_hits = hit_count(joined, &split.tail, cause);
            let body_hits = hit_count(joined, &split.body, cause);
            let (sham_mean, sham_p95) = summarize(counts);
            let rate = |h: usize, n: usize| if n == 0 { 0.0 } else { h as f64 / n as f64 };
            Row {
                cause,
                stage: cause.stage(),
                evidence,
                tail_hits,
                tail_n,
                tail_cover: cover(joined, &split.tail, cause),
                body_hits,
                body_n,
                sham_mean,
                sham_p95,
                shams: counts.len(),
                named: tail_hits as f64 > sham_p95
                    && rate(tail_hits, tail_n) > rate(body_hits, body_n),
            }
        })
        .collect()
}

/// Mean and 95th percentile (nearest rank) of the sham's counts.
fn summarize(counts: &[usize]) -> (f64, f64) {
    if counts.is_empty() {
        return (0.0, 0.0);
    }
    let mut v = counts.to_vec();
    v.sort_unstable();
    let mean = v.iter().sum::<usize>() as f64 / v.len() as f64;
    let k = ((0.95 * v.len() as f64).ceil() as usize).clamp(1, v.len());
    (mean, v[k - 1] as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loop_at(index: u64, t: f64, value: Option<f64>) -> Joined {
        Joined {
            index,
            event: "mousedown".into(),
            outcome: if value.is_some() {
                Outcome::Answered
            } else {
                Outcome::Unanswered
            },
            value_ms: value,
            spans: vec![Span {
                stage: Stage::Server,
                start_ms: t,
                end_ms: t + value.unwrap_or(400.0),
            }],
            hits: Vec::new(),
        }
    }

    #[test]
    fn the_tail_is_over_the_quantile_and_an_unanswered_loop_is_its_slowest() {
        let mut j: Vec<Joined> = (0..9)
            .map(|i| loop_at(i, i as f64 * 1000.0, Some(10.0 + i as f64)))
            .collect();
        j.push(loop_at(9, 9000.0, None));
        let s = split(&j, 0.9);
        assert_eq!(s.tail, vec![9]);
        assert_eq!(s.threshold_ms, Some(18.0));
        assert_eq!(s.body, vec![0, 1, 2, 3, 4]);
        assert_eq!(s.median_ms, Some(14.0));
        let s = split(&j, 0.8);
        assert_eq!(s.tail, vec![8, 9]);
    }

    /// Known truth: 100 loops one a second, 10 of them slow; pauses placed on exactly the
    /// slow ones are named, and the sham finds about what chance gives (each pause 50 ms
    /// in a 1 s period, a 100 to 450 ms loop: a few of 10).
    #[test]
    fn pauses_on_the_slow_loops_beat_the_sham_and_pauses_at_random_do_not() {
        let slow = |i: u64| i % 10 == 3;
        let mut j: Vec<Joined> = (0..100)
            .map(|i| {
                let v = if slow(i) { 400.0 } else { 100.0 };
                loop_at(i, i as f64 * 1000.0, Some(v))
            })
            .collect();
        let on_slow: Vec<Placed> = (0..100)
            .filter(|&i| slow(i))
            .map(|i| Placed {
                cause: Cause::GcPause,
                start_ms: i as f64 * 1000.0 + 200.0,
                end_ms: i as f64 * 1000.0 + 250.0,
                index: i as usize,
            })
            .collect();
        let window = (0.0, 100_000.0);
        for l in j.iter_mut() {
            l.hits = hits(&l.spans, &on_slow, 50.0, 0.0);
        }
        let s = split(&j, 0.9);
        let counts = sham(&j, &s.tail, &on_slow, window, &[Cause::GcPause], 500, 7);
        let r = &rows(&j, &s, &[(Cause::GcPause, on_slow.len())], &counts)[0];
        assert_eq!((r.tail_hits, r.tail_n, r.body_hits), (10, 10, 0));
        // Chance: 10 pauses of 50 ms on a 100 s lap meet a 400 ms loop with p ~ 0.045
        // each, 0.45 of 10 on average.
        assert!(r.sham_mean > 0.2 && r.sham_mean < 0.8, "{}", r.sham_mean);
        assert!(r.named, "{r:?}");
        // The same pauses half a period later fall between loops: nothing to name.
        let off: Vec<Placed> = on_slow
            .iter()
            .map(|p| Placed {
                start_ms: p.start_ms + 500.0,
                end_ms: p.end_ms + 500.0,
                ..p.clone()
            })
            .collect();
        for l in j.iter_mut() {
            l.hits = hits(&l.spans, &off, 50.0, 0.0);
        }
        let counts = sham(&j, &s.tail, &off, window, &[Cause::GcPause], 500, 7);
        let r = &rows(&j, &s, &[(Cause::GcPause, off.len())], &counts)[0];
        assert_eq!(r.tail_hits, 0);
        assert!(!r.named);
    }

    #[test]
    fn a_cause_the_body_shares_as_much_as_the_tail_is_not_named() {
        let mut j: Vec<Joined> = (0..20)
            .map(|i| loop_at(i, i as f64 * 100.0, Some(if i >= 18 { 90.0 } else { 50.0 })))
            .collect();
        // One long piece over every loop: present everywhere.
        let all = vec![Placed {
            cause: Cause::SlowFrame,
            start_ms: -10.0,
            end_ms: 3000.0,
            index: 0,
        }];
        for l in j.iter_mut() {
            l.hits = hits(&l.spans, &all, 3010.0, 0.0);
        }
        let s = split(&j, 0.9);
        let counts = sham(
            &j,
            &s.tail,
            &all,
            (0.0, 2000.0),
            &[Cause::SlowFrame],
            100,
            1,
        );
        let r = &rows(&j, &s, &[(Cause::SlowFrame, 1)], &counts)[0];
        assert_eq!((r.tail_hits, r.body_hits), (2, 10));
        assert!(!r.named, "{r:?}");
    }
}
