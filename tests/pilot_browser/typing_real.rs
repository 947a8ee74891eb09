//! Typing on real streamed desktops from Debian's packages: pilots/targets/type_line.py
//! shown through noVNC + TigerVNC and through GTK Broadway. 40 keys at a person's pace are
//! each answered by their own glyph; the same 40 in one burst give the keys behind, and no
//! frame answers a key before its send.

use super::real_apps::{finish_clean, free_port, Desktop};
use super::*;
use arena_pilot::type_spec::TypeMode;

/// The shipped typing pilot `file` against `url`: 40 keys at pace, then 40 in one burst,
/// each on a fresh page.
fn type_both(file: &str, url: &str) -> (Run, Run) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let pace = Pilot::load(&path).expect("shipped typing pilot");
    let mut burst = pace.clone();
    burst.typing.as_mut().unwrap().mode = TypeMode::Burst;
    let ov = Overrides {
        url: Some(url.to_string()),
        clicks: Some(40),
        ..Overrides::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    let a = run_arms(&pace, vec![("pace", ov.clone())], &tmp.path().join("pace"));
    let b = run_arms(&burst, vec![("burst", ov)], &tmp.path().join("burst"));
    (
        a.into_iter().next().unwrap().run,
        b.into_iter().next().unwrap().run,
    )
}

fn check_typing(pace: &Run, burst: &Run) {
    for r in [pace, burst] {
        assert_eq!(
            r.meta.status,
            RunStatus::Complete,
            "{:?}",
            r.meta.status_message
        );
        assert_eq!(
            r.meta.answer.as_ref().map(|a| a.oracle.as_str()),
            Some("pixels")
        );
    }
    let p = pace.meta.summary.typing.clone().expect("typing summary");
    let b = burst.meta.summary.typing.clone().expect("typing summary");
    eprintln!("{} pace: {p:?}", pace.meta.url);
    eprintln!("{} burst: {b:?}", burst.meta.url);
    assert_eq!((p.keys, b.keys), (40, 40));
    // Each answered key is answered by its own glyph: its own cell's watch (the page's
    // oracle names the key), never claimed from another.
    assert!(p.answered * 100 >= 95 * p.keys, "{p:?}");
    assert_eq!(p.claimed, 0, "{p:?}");
    assert!(
        p.keydown_to_socket.as_ref().is_some_and(|s| s.n >= 38),
        "{p:?}"
    );
    assert_eq!(
        b.answered + b.unanswered + b.claimed,
        40,
        "every key counted"
    );
    assert!(b.max_keys_behind >= 1, "{b:?}");
    for l in burst.loops.iter().filter(|l| l.answered) {
        let answer = l.t_answer.expect("an answered key's frame");
        let send = l.t_send.expect("an answered key's send");
        assert!(
            l.t_input <= send && send <= answer,
            "key {} answered at {answer} before its send at {send}",
            l.index
        );
    }
}

#[test]
fn novnc_typing_each_key_answered_by_its_glyph_and_a_burst_counts_keys_behind() {
    let _g = exclusive();
    let args = [
        "45".into(),
        free_port().to_string(),
        free_port().to_string(),
    ];
    let (d, url) = Desktop::start_with("novnc.sh", &args, &[("NOVNC_APP", "type_line")]);
    let (pace, burst) = type_both("pilots/novnc-typing.toml", &url);
    check_typing(&pace, &burst);
    finish_clean(d);
}

#[test]
fn gtk_broadway_typing_each_key_answered_by_its_glyph_and_a_burst_counts_keys_behind() {
    let _g = exclusive();
    let args = ["46".into(), free_port().to_string()];
    let (d, url) = Desktop::start_with("broadway.sh", &args, &[("BROADWAY_APP", "type_line")]);
    let (pace, burst) = type_both("pilots/broadway-typing.toml", &url);
    check_typing(&pace, &burst);
    finish_clean(d);
}
