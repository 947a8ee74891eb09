//! What every `--format json` document shares: its version and how a number is written.
//! A document is data, not its table: metric names are keys, counts are integers, a
//! figure that does not exist is `null`, units are in the key (`_ms`, `_bytes`) or a
//! `unit` field. The shapes are the JSON Schemas in `docs/schema/`.

use serde_json::{json, Value};

/// The version of every JSON document the tool writes (`schema_version`); bumped on any
/// change of shape of any of them.
pub const JSON_SCHEMA_VERSION: u32 = 4;

/// A finite number, or `null`.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// `{schema_version, kind}` followed by the fields of `body` (an object).
pub fn document(kind: &str, body: Value) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("schema_version".into(), json!(JSON_SCHEMA_VERSION));
    m.insert("kind".into(), json!(kind));
    if let Value::Object(b) = body {
        m.extend(b);
    }
    Value::Object(m)
}

/// A document as printed: pretty, with a final newline.
pub fn to_text(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_puts_version_and_kind_first() {
        let d = document("x", json!({"a": 1}));
        assert_eq!(d["schema_version"], json!(JSON_SCHEMA_VERSION));
        assert_eq!(d["kind"], "x");
        assert_eq!(d["a"], 1);
        assert_eq!(num(f64::NAN), Value::Null);
        assert_eq!(num(1.5), json!(1.5));
    }
}
