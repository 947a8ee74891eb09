//! `arena-perf report`: one self-contained HTML page of a comparison, to attach to a pull
//! request. Nothing is fetched: the CSS, the script and the plots (SVG drawn by the
//! script) are inline.
//!
//! The page carries two data blocks and renders every figure from them:
//!
//! - `#data`: exactly [`comparison_json`] of the comparison, the document
//!   `compare --format json` prints, so the page's tables and the JSON cannot disagree;
//! - `#context`: what the tables do not hold: each run's `run.json` meta, its column, and
//!   its loops (times and bytes) for the latency CDF and the per-click timeline.
//!
//! Everything from files reaches the page as JSON (with `<`, `>` and `&` escaped so no
//! string can close the script element) and is put into the DOM as text, never as markup.

use arena_run::{Metric, Run};
use serde_json::{json, Value};

use crate::compare::Comparison;
use crate::group::{digest, groups};
use crate::json::{comparison_json, num};

mod escape;
mod gestures;

pub use escape::escape_html;
use escape::notes_html;

const TEMPLATE: &str = include_str!("../../assets/report.html");
const CSS: &str = include_str!("../../assets/report.css");
const JS: &str = include_str!("../../assets/report.js");

/// Most loops of one column the page carries; larger columns are thinned evenly (said on
/// the page), so a million-loop report stays a file a browser opens.
pub const MAX_LOOPS_PER_COLUMN: usize = 2000;

/// The loop fields of `#context.loops.rows`, in order.
pub const LOOP_FIELDS: [&str; 19] = [
    "column",
    "run",
    "index",
    "label",
    "event",
    "cold",
    "outcome",
    "t_input",
    "t_send",
    "t_recv",
    "t_draw",
    "t_paint",
    "inputToSocket",
    "sendToRecv",
    "recvToDraw",
    "inputToPaint",
    "inputToPixels",
    "reply_bytes",
    "reply_frames",
];

/// What the page needs beyond the comparison.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Confidence level of the intervals, in percent (`100 * (1 - alpha)`).
    pub level_pct: f64,
    /// Cold loops are in the figures (`--include-cold`), so the plots draw them too.
    pub include_cold: bool,
    /// Metrics in the order the tables show them; all of them when empty.
    pub metrics: Vec<Metric>,
    /// The metric the plots open on.
    pub plot_metric: Metric,
    /// With `report --history`: the trend of stored runs, drawn (SVG from
    /// [`crate::trend_plot::trend_svg`]), under a title, with lines of notes.
    pub trend: Option<TrendSection>,
}

/// A trend plot section of the page.
#[derive(Debug, Clone)]
pub struct TrendSection {
    pub title: String,
    pub svg: String,
    pub notes: Vec<String>,
}

impl TrendSection {
    fn html(&self) -> String {
        let notes = notes_html(&self.notes);
        format!(
            "<section id=\"history\"><h2>{}</h2><div class=\"plot\">{}</div><ul class=\"note\">{notes}</ul></section>",
            escape_html(&self.title),
            self.svg
        )
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            level_pct: 95.0,
            include_cold: false,
            metrics: Vec::new(),
            plot_metric: Metric::InputToPaint,
            trend: None,
        }
    }
}

/// The report page of `cmp` over `runs` (the same runs `cmp` was computed from).
pub fn report_html(runs: &[Run], cmp: &Comparison, opts: &ReportOptions) -> String {
    let data = comparison_json(cmp);
    let context = context_json(runs, cmp, opts);
    let title = format!(
        "arena-perf report: {} against {}",
        cmp.candidates(),
        cmp.baseline
    );
    fill(TEMPLATE, |key| match key {
        "TITLE" => Some(escape_html(&title)),
        "CSS" => Some(CSS.to_string()),
        "DATA" => Some(json_in_script(&data)),
        "CONTEXT" => Some(json_in_script(&context)),
        "JS" => Some(JS.to_string()),
        "GESTURES" => Some(gestures::section(cmp.gestures.as_ref())),
        "TREND" => Some(
            opts.trend
                .as_ref()
                .map(TrendSection::html)
                .unwrap_or_default(),
        ),
        _ => None,
    })
}

/// Replaces each `{{KEY}}` of `template` (the template's own markers only: a value is
/// never scanned again, so data holding `{{JS}}` stays text).
fn fill(template: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after
            .find("}}")
            .and_then(|end| Some((end, value(&after[..end])?)))
        {
            Some((end, v)) => {
                out.push_str(&v);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// JSON safe inside `<script type="application/json">`: `<`, `>` and `&` (which only
/// occur inside strings) become `\u` escapes, so `</script>` or `<!--` in an arm name
/// cannot end the element; `JSON.parse` gives back the same document.
pub fn json_in_script(v: &Value) -> String {
    let s = serde_json::to_string(v).expect("a JSON value serialises");
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// `#context`: runs (meta and column), loops, and how the page should read them.
pub fn context_json(runs: &[Run], cmp: &Comparison, opts: &ReportOptions) -> Value {
    let data = digest(runs, opts.include_cold);
    let gs = groups(&data, cmp.by);
    let placed = placed(runs, &gs);
    let mut run_docs = Vec::new();
    let mut rows = Vec::new();
    let mut thinned = serde_json::Map::new();
    let per_column_total: Vec<usize> = gs
        .iter()
        .map(|g| g.runs.iter().map(|r| r.run.loops.len()).sum())
        .collect();
    let mut seen = vec![0usize; gs.len()];
    for &(ri, ci, number) in &placed {
        let run = &runs[ri];
        run_docs.push(json!({
            "column": gs[ci].name,
            "number": number,
            "loops": run.loops.len(),
            "meta": run.meta,
        }));
        let total = per_column_total[ci];
        if total > MAX_LOOPS_PER_COLUMN {
            thinned.insert(gs[ci].name.clone(), json!(total));
        }
        for l in &run.loops {
            // Evenly over the column's loops, all its runs in order: exactly the cap kept.
            let g = seen[ci];
            seen[ci] += 1;
            let max = MAX_LOOPS_PER_COLUMN;
            if total > max && (g + 1) * max / total == g * max / total {
                continue;
            }
            rows.push(loop_row(ci, run_docs.len() - 1, l));
        }
    }
    let metrics: Vec<&str> = if opts.metrics.is_empty() {
        Metric::ALL.iter().map(|m| m.name()).collect()
    } else {
        opts.metrics.iter().map(|m| m.name()).collect()
    };
    json!({
        "level_pct": opts.level_pct,
        "include_cold": opts.include_cold,
        "metric_order": metrics,
        "plot_metric": opts.plot_metric.name(),
        "runs": run_docs,
        "loops": { "fields": LOOP_FIELDS, "rows": rows },
        "thinned": thinned,
    })
}

/// Each run's (index, column, number within its arm from 1), in run order.
fn placed(runs: &[Run], gs: &[crate::group::Group<'_>]) -> Vec<(usize, usize, usize)> {
    let mut placed = Vec::new();
    for (ci, g) in gs.iter().enumerate() {
        for rd in &g.runs {
            if let Some(ri) = runs.iter().position(|r| std::ptr::eq(r, rd.run)) {
                let number = runs[..ri]
                    .iter()
                    .filter(|r| r.meta.arm == runs[ri].meta.arm)
                    .count()
                    + 1;
                placed.push((ri, ci, number));
            }
        }
    }
    placed.sort_unstable();
    placed
}

/// One loop as a row of [`LOOP_FIELDS`]: column, run, then the loop's own fields.
fn loop_row(column: usize, run: usize, l: &arena_run::Loop) -> Value {
    let t = |x: Option<f64>| x.map_or(Value::Null, num);
    json!([
        column,
        run,
        l.index,
        l.label,
        l.event,
        l.cold,
        l.outcome.name(),
        num(l.t_input),
        t(l.t_send),
        t(l.t_recv),
        t(l.t_draw),
        t(l.t_paint),
        t(l.input_to_socket),
        t(l.send_to_recv),
        t(l.recv_to_draw),
        t(l.input_to_paint),
        t(l.input_to_pixels),
        l.reply_bytes,
        l.reply_frames,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_its_element() {
        let v = json!({"arm": "</script><script>alert(1)</script>", "x": "a & b <!--"});
        let s = json_in_script(&v);
        assert!(
            !s.contains('<') && !s.contains('>') && !s.contains('&'),
            "{s}"
        );
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn html_text_is_escaped() {
        assert_eq!(
            escape_html("<b a=\"1\">'&'</b>"),
            "&lt;b a=&quot;1&quot;&gt;&#39;&amp;&#39;&lt;/b&gt;"
        );
    }

    fn embedded(page: &str, id: &str) -> Value {
        let open = format!("<script type=\"application/json\" id=\"{id}\">");
        let start = page.find(&open).expect("the block") + open.len();
        let end = start + page[start..].find("</script>").expect("its end");
        serde_json::from_str(&page[start..end]).expect("JSON")
    }

    #[test]
    fn the_page_embeds_the_compare_document_and_thins_large_columns() {
        use crate::synthetic;
        let big = synthetic::lognormal(5000, 40.0, 0.3, 0.0, 1);
        let small = synthetic::lognormal(50, 45.0, 0.3, 0.0, 2);
        let runs = vec![
            synthetic::run("stock", &big, 20_000),
            synthetic::run("<b>lazy</b>", &small, 20_000),
        ];
        let cmp = crate::compare(&runs, &crate::CompareOptions::default()).unwrap();
        let page = report_html(&runs, &cmp, &ReportOptions::default());
        assert!(
            !page.contains("<b>lazy</b>"),
            "a name reached the page as markup"
        );
        assert_eq!(embedded(&page, "data"), comparison_json(&cmp));
        let ctx = embedded(&page, "context");
        let rows = ctx["loops"]["rows"].as_array().unwrap();
        let of = |col: u64| rows.iter().filter(|r| r[0] == col).count();
        assert_eq!((of(0), of(1)), (MAX_LOOPS_PER_COLUMN, 50));
        assert_eq!(ctx["thinned"], json!({"stock": 5000}));
        assert_eq!(ctx["runs"][1]["meta"]["arm"], "<b>lazy</b>");
        assert_eq!(rows[0].as_array().unwrap().len(), LOOP_FIELDS.len());
    }

    #[test]
    fn fill_replaces_only_the_templates_markers() {
        let out = fill("<{{A}}|{{B}}|{{C}}>", |k| match k {
            "A" => Some("{{B}}".into()),
            "B" => Some("b".into()),
            _ => None,
        });
        assert_eq!(out, "<{{B}}|b|{{C}}>");
    }
}
