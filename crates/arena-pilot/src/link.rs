//! A shaped link's account in the run: every connection it carried, and a warning for each
//! thing that did not go through it (a page socket it never saw, a destination it could
//! not reach), so a link is never recorded as applied to traffic it did not carry.

use arena_browser::{Record, RecordKind};
use arena_link::{Carried, ConnKind};
use arena_run::{LinkConnection, Run, Warning};

use crate::target::LinkLog;

/// WebSockets the page opened (its `open` events, page hook or CDP handshakes).
pub(crate) fn sockets_opened<'a>(records: impl Iterator<Item = &'a Record>) -> usize {
    records.filter(|r| r.kind == RecordKind::WsOpen).count()
}

/// Fills the run's `link_connections` and its link warnings from what the link logged.
pub(crate) fn account(run: &mut Run, log: &LinkLog, opened: usize) {
    run.meta.link_connections = log.carried.iter().map(connection).collect();
    if let Some(w) = bypassed(&log.carried, opened) {
        run.meta.warnings.push(w);
    }
    let unreachable: Vec<String> = log
        .refused
        .iter()
        .map(|r| format!("{} ({})", r.dest, r.why))
        .collect();
    if !unreachable.is_empty() {
        run.meta.warnings.push(Warning::new(
            "link_refused",
            format!(
                "the link could not carry {} connection(s): {}",
                unreachable.len(),
                unreachable.join("; ")
            ),
        ));
    }
}

fn connection(c: &Carried) -> LinkConnection {
    LinkConnection {
        dest: c.dest.clone(),
        kind: c.kind.as_str().to_string(),
        bytes_up: c.bytes_up,
        bytes_down: c.bytes_down,
    }
}

/// A warning when the page opened more WebSockets than the link carried WebSocket
/// upgrades (a TLS connection may hide one, so it counts as one).
fn bypassed(carried: &[Carried], opened: usize) -> Option<Warning> {
    let through: Vec<&str> = carried
        .iter()
        .filter(|c| matches!(c.kind, ConnKind::WebSocket | ConnKind::Tls))
        .map(|c| c.dest.as_str())
        .collect();
    let missing = opened.checked_sub(through.len()).filter(|&n| n > 0)?;
    let carried_text = if through.is_empty() {
        "none".to_string()
    } else {
        through.join(", ")
    };
    Some(Warning::new(
        "link_bypassed",
        format!(
            "{missing} socket{} bypassed the link: the page opened {opened} WebSocket{}, the link carried {} ({carried_text}); the bypassing socket{} were not shaped",
            plural(missing),
            plural(opened),
            through.len(),
            plural(missing),
        ),
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(dest: &str, kind: ConnKind) -> Carried {
        Carried {
            dest: dest.into(),
            kind,
            bytes_up: 1,
            bytes_down: 2,
        }
    }

    #[test]
    fn sockets_the_link_did_not_carry_are_named() {
        let carried = [
            c("127.0.0.1:80", ConnKind::Http),
            c("127.0.0.1:81", ConnKind::WebSocket),
        ];
        assert!(bypassed(&carried, 1).is_none());
        assert!(bypassed(&carried, 0).is_none());
        let w = bypassed(&carried, 3).unwrap();
        assert_eq!(w.code, "link_bypassed");
        assert!(
            w.message.starts_with("2 sockets bypassed the link: the page opened 3 WebSockets, the link carried 1 (127.0.0.1:81)"),
            "{}",
            w.message
        );
        let w = bypassed(&carried[..1], 1).unwrap();
        assert!(w.message.starts_with("1 socket bypassed"), "{}", w.message);
        assert!(w.message.contains("carried 0 (none)"), "{}", w.message);
    }
}
