//! A run folder's file names and `loops.csv`'s columns: what the writer, the reader
//! (`folder.rs`) and the validator (`validate.rs`) agree on, kept apart from all three.

pub const RUN_JSON: &str = "run.json";
pub const LOOPS_CSV: &str = "loops.csv";
pub const EVENTS_JSONL: &str = "events.jsonl";

/// Column order of `loops.csv` (matches the field order of [`crate::Loop`]).
pub const LOOP_COLUMNS: [&str; 21] = [
    "index",
    "arm",
    "label",
    "event",
    "cold",
    "answered",
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
    "t_answer",
    "inputToPixels",
    "reply_bytes",
    "reply_frames",
    "after_lapse",
];
