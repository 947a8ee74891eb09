//! TOML input files (pilot, matrix, profile rules): every error names the file, the line and
//! the key, in the `file:line:` form editors and terminals jump to.

use std::fmt::Display;
use std::ops::Range;

use serde::de::DeserializeOwned;

use crate::Exit;

/// Byte offset -> 1-based line.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A bad-input error at `span` of `text`: `source:line: `key`: msg`.
pub fn key_error(
    source: &str,
    text: &str,
    span: &Range<usize>,
    key: &str,
    msg: impl Display,
) -> Exit {
    Exit::bad_input(format!(
        "{source}:{}: `{key}`: {msg}",
        line_of(text, span.start)
    ))
}

/// Deserializes `text`. A syntax or type error names the line and, for type errors, the key
/// path (`target.url`), which the TOML error alone leaves out.
pub fn parse<T: DeserializeOwned>(source: &str, text: &str) -> Result<T, Exit> {
    let de = toml::Deserializer::parse(text).map_err(|e| toml_error(source, text, &e, ""))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = key_path(e.path());
        toml_error(source, text, e.inner(), &key)
    })
}

fn toml_error(source: &str, text: &str, e: &toml::de::Error, key: &str) -> Exit {
    let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
    let msg = e.message().trim().replace('\n', " ");
    if key.is_empty() {
        Exit::bad_input(format!("{source}:{line}: {msg}"))
    } else {
        Exit::bad_input(format!("{source}:{line}: `{key}`: {msg}"))
    }
}

/// The path as a user writes it: `arms.lazy.knobs`, `setup[0]`. Drops the private fields
/// `toml::Spanned` deserializes through.
fn key_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if key.starts_with("$__") {
                    continue;
                }
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Doc {
        target: Option<toml::Spanned<Target>>,
        #[serde(default)]
        steps: Vec<toml::Spanned<Step>>,
        #[serde(default)]
        arms: BTreeMap<String, Arm>,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Target {
        url: Option<String>,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Step {
        wait_ms: u64,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Arm {
        delay_ms: toml::Spanned<u32>,
    }

    fn err(text: &str) -> String {
        parse::<Doc>("p.toml", text).unwrap_err().message
    }

    #[test]
    fn a_type_error_names_line_and_key_through_spanned_wrappers() {
        assert_eq!(
            err("\n[target]\nurl = 5\n"),
            "p.toml:3: `target.url`: invalid type: integer `5`, expected a string"
        );
        let m = err("[[steps]]\nwait_ms = 1\n[[steps]]\nwait_ms = \"x\"\n");
        assert!(m.starts_with("p.toml:4: `steps[1].wait_ms`: "), "{m}");
        let m = err("[arms.lazy]\ndelay_ms = -1\n");
        assert!(m.starts_with("p.toml:2: `arms.lazy.delay_ms`: "), "{m}");
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let m = err("[target]\nurl = \"a\"\nbroken =\n");
        assert!(m.starts_with("p.toml:3: "), "{m}");
        assert!(!m.contains('\n'), "{m}");
    }

    #[test]
    fn key_error_counts_lines_from_one() {
        let e = key_error("m.toml", "a = 1\nb = 2\n", &(6..11), "b", "too big");
        assert_eq!(e.message, "m.toml:2: `b`: too big");
        assert_eq!(line_of("", 10), 1);
    }
}
