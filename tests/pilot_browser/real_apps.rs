//! The pilot against real streamed desktops from Debian's packages: noVNC + websockify +
//! TigerVNC showing a Swing panel, and GTK Broadway showing a GTK window. Both panels flip
//! colour on a press and change nothing on a release (pilots/targets/README.md).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use super::*;
use arena_run::Outcome as LoopOutcome;

/// A target started with `pilots/targets/<script> run ...`: stopped, then reaped, on drop.
struct Desktop {
    child: Child,
    script: PathBuf,
    display: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Desktop {
    /// Starts the target and returns it with the page URL it printed.
    fn start(script: &str, args: &[String]) -> (Desktop, String) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("pilots/targets")
            .join(script);
        let mut child = Command::new("bash")
            .arg(&script)
            .arg("run")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the target");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if line.starts_with("http://") && tx.send(line).is_err() {
                    break;
                }
            }
        });
        let d = Desktop {
            child,
            script,
            display: args[0].clone(),
        };
        let url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the target printed its URL within 60 s");
        (d, url)
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .args(["stop", &self.display])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Presses and releases on the panel; releases are loops too, and must end unanswered.
fn drive(pilot_file: &str, url: String) -> Run {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(pilot_file);
    let mut pilot = Pilot::load(&path).expect("shipped pilot file");
    pilot.pacing.loop_events = vec!["mousedown".into(), "mouseup".into()];
    pilot.pacing.timeout_ms = 600;
    let ov = Overrides {
        url: Some(url),
        clicks: Some(30),
        ..Overrides::default()
    };
    let tmp = tempfile::tempdir().unwrap();
    run_arms(&pilot, vec![("stock", ov)], tmp.path())
        .remove(0)
        .run
}

fn check(r: &Run) {
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
    let down: Vec<_> = r.loops.iter().filter(|l| l.event == "mousedown").collect();
    let up: Vec<_> = r.loops.iter().filter(|l| l.event == "mouseup").collect();
    assert_eq!((down.len(), up.len()), (30, 30), "{:?}", r.meta.warnings);
    let answered = down.iter().filter(|l| l.answered).count();
    assert!(
        answered * 100 >= 95 * down.len(),
        "{answered} of 30 presses answered: {:?}",
        r.meta.warnings
    );
    assert!(
        up.iter().all(|l| l.outcome == LoopOutcome::Unanswered),
        "a release that changes no pixels must be unanswered: {:?}",
        up.iter().map(|l| l.outcome).collect::<Vec<_>>()
    );
    assert!(r.meta.summary.sends_input >= 60, "{:?}", r.meta.summary);
    assert_invariant(r);
    let v: Vec<f64> = down
        .iter()
        .filter(|l| !l.cold)
        .filter_map(|l| l.input_to_pixels)
        .collect();
    eprintln!(
        "{}: {answered} of 30 presses answered, inputToPixels p50 {:.1} ms (n = {}), 30 releases unanswered",
        r.meta.url,
        Summary::of(&v).map(|s| s.p50).unwrap_or(f64::NAN),
        v.len()
    );
}

#[test]
fn novnc_with_tigervnc_presses_answer_releases_do_not() {
    let _g = lock();
    let (_d, url) = Desktop::start(
        "novnc.sh",
        &[
            "47".into(),
            free_port().to_string(),
            free_port().to_string(),
        ],
    );
    let r = drive("pilots/novnc.toml", url);
    assert_eq!(r.meta.socket_source, SocketSource::PageHook);
    check(&r);
}

#[test]
fn gtk_broadway_presses_answer_releases_do_not() {
    let _g = lock();
    let pilot =
        Pilot::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("pilots/broadway.toml")).unwrap();
    // Broadway's message kind is a letter in byte 3 of a big-endian int32.
    assert!(pilot
        .recorder
        .classifier
        .input
        .iter()
        .all(|m| m.bytes_at.as_ref().is_some_and(|b| b.offset == 3)));
    let (_d, url) = Desktop::start("broadway.sh", &["48".into(), free_port().to_string()]);
    check(&drive("pilots/broadway.toml", url));
}
