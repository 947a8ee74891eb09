//! How `--split` cuts loops into rows: by input kind, by the size of their answer (buckets
//! at given bounds), or by click label.

use std::collections::BTreeSet;

use arena_report::{fmt_size, parse_size};
use arena_run::{Loop, Run};

/// How loops are cut into rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    /// One row per DOM event type (mousedown, mouseup, keydown, ...), and coalesced input
    /// (mousemove, ...) on a row of its own.
    Event,
    /// Rows by the bytes of a loop's answer (`Loop::reply_bytes`), cut at these ascending
    /// bounds: `<b1`, `b1-b2`, ..., `>=bk`.
    ReplySize(Vec<u64>),
    /// One row per click label of the pilot file.
    Label,
}

/// The accepted splits, as every error about one lists them.
pub const SPLITS: &str = "event, label, reply-size=SIZE[,SIZE...] (e.g. reply-size=1KB,10KB)";

/// The row coalesced input gets under `--split event`.
pub const COALESCED_ROW: &str = "coalesced";

impl Split {
    /// `event`, `label`, `reply-size=1KB,10KB`; an error names what is wrong and lists
    /// the accepted splits.
    pub fn parse(text: &str) -> Result<Split, String> {
        let t = text.trim();
        let (name, arg) = match t.split_once('=') {
            Some((n, a)) => (n.trim(), Some(a)),
            None => (t, None),
        };
        match (name, arg) {
            ("event", None) => Ok(Split::Event),
            ("label", None) => Ok(Split::Label),
            ("reply-size", Some(a)) => bounds(a).map(Split::ReplySize),
            ("reply-size", None) => Err(format!(
                "`{t}`: reply-size needs its bucket bounds, e.g. reply-size=1KB,10KB"
            )),
            ("event" | "label", Some(_)) => Err(format!("`{t}`: `{name}` takes no value")),
            _ => Err(format!("unknown split `{t}` (one of {SPLITS})")),
        }
    }

    /// The name `--split` takes.
    pub fn name(&self) -> &'static str {
        match self {
            Split::Event => "event",
            Split::ReplySize(_) => "reply-size",
            Split::Label => "label",
        }
    }

    /// The rows over `runs`, in order: every bucket of a reply-size split (an empty one
    /// included), the event types or labels that occur.
    pub(crate) fn rows(&self, runs: &[Run]) -> Vec<String> {
        let seen = |f: fn(&Loop) -> &str| -> Vec<String> {
            let set: BTreeSet<&str> = runs.iter().flat_map(|r| &r.loops).map(f).collect();
            set.into_iter().map(str::to_string).collect()
        };
        match self {
            Split::Event => {
                let mut v = seen(|l| l.event.as_str());
                v.push(COALESCED_ROW.into());
                v
            }
            Split::Label => seen(|l| l.label.as_str()),
            Split::ReplySize(b) => bucket_labels(b),
        }
    }

    /// Whether loop `l` is in row `row` of `rows` (as [`Split::rows`] made them).
    pub(crate) fn keeps(&self, rows: &[String], row: usize, l: &Loop) -> bool {
        match self {
            Split::Event => rows[row] != COALESCED_ROW && l.event == rows[row],
            Split::Label => l.label == rows[row],
            Split::ReplySize(b) => bucket_of(b, l.reply_bytes) == row,
        }
    }
}

/// Bucket bounds: sizes, strictly ascending, none zero (a `<0B` bucket is empty by
/// definition).
fn bounds(text: &str) -> Result<Vec<u64>, String> {
    let v = text
        .split(',')
        .map(|p| parse_size(p).map_err(|e| format!("reply-size: {e}")))
        .collect::<Result<Vec<u64>, String>>()?;
    if v.contains(&0) {
        return Err(format!(
            "reply-size={text}: a bound of 0 makes a bucket no loop can be in"
        ));
    }
    for w in v.windows(2) {
        if w[1] == w[0] {
            return Err(format!("reply-size={text}: {} given twice", fmt_size(w[0])));
        }
        if w[1] < w[0] {
            return Err(format!(
                "reply-size={text}: bounds must ascend ({} before {})",
                fmt_size(w[0]),
                fmt_size(w[1])
            ));
        }
    }
    Ok(v)
}

/// `<1KB`, `1KB-10KB`, `>=10KB` for bounds 1024, 10240.
fn bucket_labels(b: &[u64]) -> Vec<String> {
    let mut v = vec![format!("<{}", fmt_size(b[0]))];
    v.extend(
        b.windows(2)
            .map(|w| format!("{}-{}", fmt_size(w[0]), fmt_size(w[1]))),
    );
    v.push(format!(">={}", fmt_size(b[b.len() - 1])));
    v
}

/// Index of the bucket `bytes` falls in: a bound belongs to the bucket it opens.
fn bucket_of(b: &[u64], bytes: u64) -> usize {
    b.partition_point(|&x| x <= bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_parse_and_bad_ones_say_what_is_accepted() {
        assert_eq!(Split::parse("event"), Ok(Split::Event));
        assert_eq!(Split::parse(" label "), Ok(Split::Label));
        assert_eq!(
            Split::parse("reply-size=1KB,10KB"),
            Ok(Split::ReplySize(vec![1024, 10240]))
        );
        let e = Split::parse("colour").unwrap_err();
        assert!(
            e.contains("unknown split `colour`") && e.contains(SPLITS),
            "{e}"
        );
        for (bad, says) in [
            ("reply-size", "needs its bucket bounds"),
            ("reply-size=", "not a size"),
            ("reply-size=1KB,ten", "`ten`: not a size"),
            (
                "reply-size=10KB,1KB",
                "bounds must ascend (10KB before 1KB)",
            ),
            ("reply-size=1KB,1024", "1KB given twice"),
            ("reply-size=0,1KB", "a bound of 0"),
            ("event=1", "takes no value"),
        ] {
            let e = Split::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_bound_opens_its_bucket() {
        let b = [1024, 10240];
        assert_eq!(bucket_labels(&b), ["<1KB", "1KB-10KB", ">=10KB"]);
        let at = |bytes| bucket_of(&b, bytes);
        assert_eq!(
            [
                at(0),
                at(1023),
                at(1024),
                at(10239),
                at(10240),
                at(u64::MAX)
            ],
            [0, 0, 1, 1, 2, 2]
        );
    }
}
