//! One table model for every command's output, and the conventions that go with it.
//!
//! Statistics never print and tables never compute: reducers build a [`Table`] of
//! already formatted cells (each may keep its raw number for machine formats), and
//! [`Table::render`] turns it into a terminal table, Markdown that pastes into a
//! PERFORMANCE.md, JSON or CSV. A new format is one new arm in `render`.

mod exit;
mod fmt;
pub mod json;
pub mod progress;
pub mod ranges;
mod table;
pub mod toml_input;

pub use exit::{exit_code, Exit, ExitKind};
pub use fmt::{
    fmt_bytes, fmt_count, fmt_ms, fmt_pct_change, fmt_size, parse_positive_size, parse_size,
};
pub use json::{num, JSON_SCHEMA_VERSION};
pub use table::{Align, Cell, Column, Format, Table};
