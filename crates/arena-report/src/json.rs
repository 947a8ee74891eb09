//! What every `--format json` document shares: its version and how a number is written.
//! A document is data, not its table: metric names are keys, counts are integers, a
//! figure that does not exist is `null`, units are in the key (`_ms`, `_bytes`) or a
//! `unit` field. The shapes are the JSON Schemas in `docs/schema/`.

use serde::Serialize;
use serde_json::{json, Value};

/// The version of every JSON document the tool writes (`schema_version`); bumped on any
/// change of shape of any of them.
pub const JSON_SCHEMA_VERSION: u32 = 6;

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

/// A typed document: `{schema_version, kind}` followed by the fields of `body`, a
/// `Serialize` struct whose fields are the document's keys (the type is the schema).
#[derive(Debug, Clone, Serialize)]
pub struct Document<'a, T> {
    pub schema_version: u32,
    pub kind: &'a str,
    #[serde(flatten)]
    pub body: T,
}

impl<'a, T: Serialize> Document<'a, T> {
    pub fn new(kind: &'a str, body: T) -> Self {
        Document {
            schema_version: JSON_SCHEMA_VERSION,
            kind,
            body,
        }
    }

    /// As a JSON value, for callers that add to it or index it.
    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

/// A `Serialize` document as a JSON value. The documents' types have string keys and
/// plain fields only, which serde_json always accepts; `null` stands for the
/// impossible failure rather than a panic.
pub fn to_value<T: Serialize>(doc: &T) -> Value {
    serde_json::to_value(doc).unwrap_or(Value::Null)
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

    #[test]
    fn a_typed_document_is_the_same_as_a_built_one() {
        #[derive(Serialize)]
        struct Body {
            a: u32,
            b: f64,
        }
        let typed = Document::new("x", Body { a: 1, b: f64::NAN }).to_value();
        assert_eq!(typed, document("x", json!({"a": 1, "b": null})));
    }
}
