//! Reads one arm's fixture knobs from a pilot file (`[arms.<name>.knobs]`), just enough for
//! `arena-perf serve --pilot FILE --arm NAME`.

use std::path::Path;

use anyhow::{anyhow, Context};

/// The `NAME=VALUE` knob pairs of `arm` in the pilot file at `path`, sorted by name.
pub fn arm_knobs(path: &Path, arm: &str) -> anyhow::Result<Vec<(String, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    arm_knobs_from_str(&text, arm).with_context(|| format!("{}", path.display()))
}

/// Like [`arm_knobs`] over the file's text.
pub fn arm_knobs_from_str(text: &str, arm: &str) -> anyhow::Result<Vec<(String, String)>> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| anyhow!("{}", e.to_string().trim_end()))?;
    let arms = doc
        .get("arms")
        .and_then(|a| a.as_table())
        .ok_or_else(|| anyhow!("no [arms] table"))?;
    let Some(entry) = arms.get(arm) else {
        let names: Vec<&str> = arms.keys().map(|k| k.as_str()).collect();
        return Err(anyhow!("no arm `{arm}` (arms: {})", names.join(", ")));
    };
    let entry = entry
        .as_table()
        .ok_or_else(|| anyhow!("arms.{arm} is not a table"))?;
    let Some(knobs) = entry.get("knobs") else {
        return Ok(Vec::new());
    };
    let knobs = knobs
        .as_table()
        .ok_or_else(|| anyhow!("arms.{arm}.knobs is not a table"))?;
    knobs
        .iter()
        .map(|(k, v)| {
            let value = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Float(f) => f.to_string(),
                _ => {
                    return Err(anyhow!(
                        "arms.{arm}.knobs.{k}: expected a string, number or boolean"
                    ))
                }
            };
            Ok((k.clone(), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Knobs;

    #[test]
    fn shipped_pilot_file_has_the_arms_and_they_validate() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pilots/fixture.toml");
        for arm in ["stock", "lazy-png", "png6", "tick8", "blink", "delay40"] {
            let pairs = arm_knobs(&path, arm).unwrap_or_else(|e| panic!("{arm}: {e:#}"));
            Knobs::from_pairs(&pairs).unwrap_or_else(|e| panic!("{arm}: {e}"));
        }
        let lazy = Knobs::from_pairs(&arm_knobs(&path, "lazy-png").unwrap()).unwrap();
        assert!(lazy.lazy_png);
        assert_eq!(
            Knobs::from_pairs(&arm_knobs(&path, "stock").unwrap()).unwrap(),
            Knobs::default()
        );
        assert_eq!(
            Knobs::from_pairs(&arm_knobs(&path, "delay40").unwrap())
                .unwrap()
                .delay_ms,
            40
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let e = arm_knobs_from_str("[arms.a.knobs]\nx = \"1\"\n", "b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`b`") && e.contains("a"), "{e}");
        let e = arm_knobs_from_str("[arms.a\n", "a")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        let e = arm_knobs(Path::new("/nonexistent/p.toml"), "a").unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/p.toml"));
        let ok = arm_knobs_from_str("[arms.a.knobs]\ntick_ms = 8\nlazy_png = true\n", "a").unwrap();
        assert_eq!(
            ok,
            vec![
                ("lazy_png".into(), "true".into()),
                ("tick_ms".into(), "8".into())
            ]
        );
    }
}
