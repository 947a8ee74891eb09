//! The report's gestures section: the comparison's gestures table, drawn here rather than
//! by the page's script, which draws the loop tables from the embedded data (the same
//! figures are in that data as `gestures`).

use arena_report::{Align, Table};

use super::escape::{escape_html, notes_html};
use crate::gestures::GestureComparison;

/// The section, or nothing when no run made gestures.
pub(super) fn section(g: Option<&GestureComparison>) -> String {
    g.map(|g| {
        format!(
            "<section id=\"gestures\"><h2>Gestures</h2>{}</section>",
            table_html(&g.table)
        )
    })
    .unwrap_or_default()
}

fn table_html(t: &Table) -> String {
    let class = |a: Align| match a {
        Align::Left => "",
        Align::Right => " class=\"num\"",
    };
    let head: String = t
        .columns
        .iter()
        .map(|c| format!("<th>{}</th>", escape_html(&c.name)))
        .collect();
    let rows: String = t
        .rows
        .iter()
        .map(|r| {
            let cells: String = r
                .iter()
                .zip(&t.columns)
                .map(|(c, col)| format!("<td{}>{}</td>", class(col.align), escape_html(&c.text)))
                .collect();
            format!("<tr>{cells}</tr>")
        })
        .collect();
    let notes = notes_html(&t.notes);
    format!(
        "<p class=\"note\">{}</p><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table><ul class=\"note\">{notes}</ul>",
        escape_html(t.title.as_deref().unwrap_or_default())
    )
}
