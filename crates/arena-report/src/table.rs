use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement};
use serde_json::{Map, Value};

/// Output format every command accepts with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// A boxed table for the terminal.
    #[default]
    Table,
    /// A GitHub-flavoured Markdown table that pastes into a PERFORMANCE.md as is.
    Markdown,
    /// The command's data, not its table: one JSON document with `schema_version` and
    /// `kind`, metric names as keys, shaped by the command's document type (its JSON
    /// Schema is docs/schema/COMMAND.json).
    Json,
    /// CSV with a header row; notes are left out (they are not data).
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    #[default]
    Left,
    Right,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub align: Align,
}

impl Column {
    pub fn left(name: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            align: Align::Left,
        }
    }
    pub fn right(name: impl Into<String>) -> Self {
        Column {
            name: name.into(),
            align: Align::Right,
        }
    }
}

/// One cell: the text a person reads, and optionally the raw number behind it
/// (machine formats emit the number, so a JSON consumer never parses "55.0ms").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: Option<f64>,
    /// Bold in Markdown (for the figures a reader should look at).
    pub strong: bool,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }
    pub fn num(text: impl Into<String>, value: f64) -> Self {
        Cell {
            text: text.into(),
            value: Some(value),
            strong: false,
        }
    }
    pub fn strong(mut self) -> Self {
        self.strong = true;
        self
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::text(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Self {
        Cell::text(s)
    }
}

/// A titled table with notes (warnings, units, n) printed under it.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: Option<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            ..Table::default()
        }
    }

    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Appends a row; a short row is padded with empty cells so every format stays
    /// rectangular.
    pub fn push_row(&mut self, row: Vec<Cell>) {
        let mut row = row;
        row.resize(self.columns.len().max(row.len()), Cell::default());
        self.rows.push(row);
    }

    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.render_terminal(),
            Format::Markdown => self.render_markdown(),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
                s.push('\n');
                s
            }
            Format::Csv => self.render_csv(),
        }
    }

    fn render_terminal(&self) -> String {
        let mut t = comfy_table::Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.columns.iter().map(|c| c.name.clone()));
        for row in &self.rows {
            t.add_row(row.iter().map(|c| c.text.clone()));
        }
        for (i, col) in self.columns.iter().enumerate() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(match col.align {
                    Align::Left => CellAlignment::Left,
                    Align::Right => CellAlignment::Right,
                });
            }
        }
        let mut out = String::new();
        if let Some(title) = &self.title {
            out.push_str(title);
            out.push('\n');
        }
        out.push_str(&t.to_string());
        out.push('\n');
        for n in &self.notes {
            out.push_str("  ");
            out.push_str(n);
            out.push('\n');
        }
        out
    }

    fn render_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = String::new();
        if let Some(title) = &self.title {
            out.push_str(&format!("### {}\n\n", title));
        }
        out.push('|');
        for c in &self.columns {
            out.push_str(&format!(" {} |", esc(&c.name)));
        }
        out.push_str("\n|");
        for c in &self.columns {
            out.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for cell in row {
                if cell.strong && !cell.text.is_empty() {
                    out.push_str(&format!(" **{}** |", esc(&cell.text)));
                } else {
                    out.push_str(&format!(" {} |", esc(&cell.text)));
                }
            }
            out.push('\n');
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("- {}\n", n));
            }
        }
        out
    }

    fn render_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(self.columns.iter().map(|c| c.name.as_str()));
        for row in &self.rows {
            let _ = w.write_record(row.iter().map(|c| match c.value {
                Some(v) => v.to_string(),
                None => c.text.clone(),
            }));
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let mut m = Map::new();
                for (col, cell) in self.columns.iter().zip(row) {
                    let v = match cell.value {
                        Some(x) if x.is_finite() => serde_json::json!(x),
                        _ => Value::String(cell.text.clone()),
                    };
                    m.insert(col.name.clone(), v);
                }
                Value::Object(m)
            })
            .collect();
        serde_json::json!({
            "title": self.title,
            "columns": self.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
            "rows": rows,
            "notes": self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(vec![Column::left(""), Column::right("before, run 1")])
            .with_title("inputToPaint, n=156 clicks");
        t.push_row(vec!["p50".into(), Cell::num("67.0ms", 67.0).strong()]);
        t.push_row(vec!["bytes | received".into()]);
        t.note("p99 from fewer than 100 loops");
        t
    }

    #[test]
    fn markdown_escapes_pipes_bolds_and_pads() {
        let md = sample().render(Format::Markdown);
        assert!(md.contains("| p50 | **67.0ms** |"), "{md}");
        assert!(md.contains("| bytes \\| received |  |"), "{md}");
        assert!(md.contains("|---|---:|"), "{md}");
        assert!(md.contains("- p99 from fewer"), "{md}");
    }

    #[test]
    fn json_keeps_raw_numbers() {
        let v = sample().to_json();
        assert_eq!(v["rows"][0]["before, run 1"], serde_json::json!(67.0));
        assert_eq!(v["rows"][1]["before, run 1"], serde_json::json!(""));
    }

    #[test]
    fn csv_has_header_and_values() {
        let csv = sample().render(Format::Csv);
        assert_eq!(csv.lines().next(), Some(",\"before, run 1\""));
        assert!(csv.contains("p50,67\n"), "{csv}");
    }

    #[test]
    fn terminal_has_title_and_notes() {
        let s = sample().render(Format::Table);
        assert!(s.starts_with("inputToPaint, n=156 clicks\n"));
        assert!(s.contains("67.0ms"));
        assert!(s.trim_end().ends_with("p99 from fewer than 100 loops"));
    }
}
