//! `compare --format json`: the comparison as data, not as its table. Metric names are
//! keys, counts are integers, a figure that does not exist is `null`, and every time is in
//! the unit the document names (`"unit": "ms"`). The shape is `docs/schema/compare.json`:
//!
//! ```text
//! .metrics.sendToRecv.p50["lazy-png"]           the candidate's p50, ms
//! .metrics.sendToRecv.n.stock                   loops behind the baseline's figures
//! .metrics.sendToRecv.changes["lazy-png"].p50   {delta, delta_pct, ci_low, ci_high, p, verdict}
//! ```

use serde_json::{json, Map, Value};

use crate::compare::{Comparison, QUANTILES};

/// The version of the JSON documents this crate writes; bumped on any change of shape.
pub const JSON_SCHEMA_VERSION: u32 = 1;

/// A finite number, or `null`.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// The comparison as one JSON document.
pub fn comparison_json(c: &Comparison) -> Value {
    let mut metrics = Map::new();
    for ch in &c.changes {
        let m = metrics
            .entry(ch.metric.to_string())
            .or_insert_with(empty_metric)
            .as_object_mut()
            .expect("a metric is an object");
        set(m, "n", &c.baseline, json!(ch.n_baseline));
        set(m, "n", &ch.column, json!(ch.n));
        let mut changes = Map::new();
        for (q, name) in QUANTILES {
            let Some(qc) = ch.quantiles.iter().find(|x| x.q == q) else {
                continue;
            };
            set(m, name, &c.baseline, num(qc.baseline));
            set(m, name, &ch.column, num(qc.candidate));
            let ci = qc.ci.as_ref();
            changes.insert(
                name.to_string(),
                json!({
                    "delta": num(qc.delta),
                    "delta_pct": num(qc.delta_pct),
                    "ci_low": ci.map_or(Value::Null, |c| num(c.lo)),
                    "ci_high": ci.map_or(Value::Null, |c| num(c.hi)),
                    "p": qc.p.map_or(Value::Null, num),
                    "verdict": qc.verdict,
                }),
            );
        }
        changes.insert(
            "mann_whitney_p".into(),
            ch.mann_whitney.as_ref().map_or(Value::Null, |u| num(u.p)),
        );
        set(m, "changes", &ch.column, Value::Object(changes));
    }
    json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "kind": "compare",
        "by": c.by,
        "baseline": c.baseline,
        "columns": c.columns,
        "unit": "ms",
        "metrics": metrics,
        "findings": c.findings,
    })
}

fn empty_metric() -> Value {
    let mut m = Map::new();
    for key in ["n", "p50", "p90", "p99", "changes"] {
        m.insert(key.into(), Value::Object(Map::new()));
    }
    Value::Object(m)
}

/// `m[key][column] = v`.
fn set(m: &mut Map<String, Value>, key: &str, column: &str, v: Value) {
    if let Some(Value::Object(inner)) = m.get_mut(key) {
        inner.insert(column.to_string(), v);
    }
}
