//! Text put into the page: escaped for HTML content and attributes, and notes as list items.
//! Below both the page (`mod.rs`) and its sections (`gestures.rs`), which each write text.

/// Text for HTML content or a quoted attribute.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `notes` as the items of a list, escaped.
pub(super) fn notes_html(notes: &[String]) -> String {
    notes
        .iter()
        .map(|n| format!("<li>{}</li>", escape_html(n)))
        .collect()
}
