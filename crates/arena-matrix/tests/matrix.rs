//! Real processes end to end: the C fixtures, the executor, the samplers, the matrix and
//! its tables.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arena_matrix::exec::{execute, CutLines, Launch, Tap, TapSource};
use arena_matrix::figure::{read_figure, steady_windows};
use arena_matrix::sampler::{GenericSource, GenericSpec, TreeSamplerConfig};
use arena_matrix::spec::{FigureSpec, PerWindow};
use arena_matrix::table::{cpu_table, matrix_table, phases_table};
use arena_matrix::{run_matrix, MatrixOptions, RunStatus};
use arena_report::{Exit, ExitKind, Format};
use regex::Regex;

fn launch(command: String, dir: &Path) -> Launch {
    Launch {
        command,
        env: Vec::new(),
        workdir: None,
        run_dir: dir.to_path_buf(),
        log_prefix: String::new(),
        timeout: Duration::from_secs(20),
        pin: None,
        taps: Vec::new(),
        tree: Some(TreeSamplerConfig::default()),
        generic: Vec::new(),
    }
}

fn write_matrix(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("matrix.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Two processes, two named busy threads at 90 % and 30 % of a core: the sampler names
/// each thread, puts it in the right process, and reads its CPU within 10 points.
#[test]
fn per_thread_sampler_names_threads_and_attributes_processes() {
    let _g = common::cpu_lock();
    let burn = common::burn().display().to_string();
    let dir = common::scratch("threads");
    let cmd = format!(
        "{burn} 2500 hot:90 --proc burn-a & {burn} 2500 cool:30 --idle 1 --proc burn-b & wait"
    );
    let fin = execute(&launch(cmd, &dir), &AtomicBool::new(false));
    assert!(
        fin.outcome.as_ref().is_some_and(|o| o.success()),
        "{:?}",
        fin.outcome
    );
    let out = std::fs::read_to_string(dir.join("stdout.log")).unwrap();
    let tid_of = |name: &str| -> i32 {
        let re = Regex::new(&format!(r"thread {name} tid (\d+)")).unwrap();
        re.captures(&out).unwrap()[1].parse().unwrap()
    };
    let self_pct = |name: &str| -> f64 {
        let re = Regex::new(&format!(r"self {name} cpu_pct ([0-9.]+)")).unwrap();
        re.captures(&out).unwrap()[1].parse().unwrap()
    };
    let cpu = fin.cpu.expect("sampler ran");
    assert!(
        cpu.samples >= 15,
        "10 Hz over 2.5 s: {} samples",
        cpu.samples
    );
    let a = cpu
        .processes
        .iter()
        .find(|p| p.label == "burn-a")
        .expect("burn-a sampled");
    let b = cpu
        .processes
        .iter()
        .find(|p| p.label == "burn-b")
        .expect("burn-b sampled");
    for (name, duty, owner) in [("hot", 90.0, a.pid), ("cool", 30.0, b.pid)] {
        let th = cpu
            .threads
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} missing: {:?}", cpu.threads));
        assert_eq!(th.tid, tid_of(name), "{name}: tid");
        assert_eq!(th.pid, owner, "{name}: attributed to the wrong process");
        assert_eq!(th.process, if owner == a.pid { "burn-a" } else { "burn-b" });
        // The thread's own clock is the ground truth whatever else runs on the machine.
        let truth = self_pct(name);
        assert!(
            (th.pct_of_core - truth).abs() <= 10.0,
            "{name}: sampler {:.1} % vs the thread's own {truth:.1} %",
            th.pct_of_core
        );
        eprintln!(
            "{name}: sampler {:.1} %, thread's own clock {truth:.1} %, duty {duty} %",
            th.pct_of_core
        );
        if (truth - duty).abs() <= 5.0 {
            assert!(
                (th.pct_of_core - duty).abs() <= 10.0,
                "{name}: sampler {:.1} % vs duty {duty} %",
                th.pct_of_core
            );
        } else {
            eprintln!("{name}: the machine did not give the fixture its {duty} % (busy host); checked against the thread's own clock");
        }
    }
    // The idle thread exists and is idle; the top thread is `hot` unless the host starved it.
    let idle = cpu
        .threads
        .iter()
        .find(|t| t.name == "idle-0")
        .expect("idle thread");
    assert!(
        idle.pct_of_core < 5.0,
        "idle thread at {:.1} %",
        idle.pct_of_core
    );
    assert_eq!(idle.pid, b.pid);
    let top = cpu.top_thread().unwrap();
    if self_pct("hot") > self_pct("cool") + 10.0 {
        assert_eq!(top.name, "hot");
    }
    assert!(cpu.sampler_cpu_s >= 0.0);
    assert!(
        common::pids_with_cmdline(&format!("{burn} 2500")).is_empty(),
        "fixture left running"
    );
}

/// The steady-window reader over a real periodic log, timestamped on arrival: warm-up at 10,
/// a first window at 50, then 100: start figure 50, windows [50, 100, 100], 10 lines/s.
#[test]
fn steady_window_reader_returns_known_figure_and_start() {
    let ticker = common::ticker().display().to_string();
    let dir = common::scratch("steady");
    let mut l = launch(format!("{ticker} 100 500:10 1000:50 2500:100"), &dir);
    l.tree = None;
    let pattern = Regex::new(r"^fps=(?P<value>[0-9.]+)$").unwrap();
    l.taps = vec![Tap {
        source: TapSource::Stdout,
        regex: pattern.clone(),
        value_group: Some("value".into()),
        text_group: None,
        time_group: None,
    }];
    let fin = execute(&l, &AtomicBool::new(false));
    assert!(fin.outcome.as_ref().is_some_and(|o| o.success()));
    let hits = &fin.hits[0];
    assert_eq!(hits.len(), 40);
    // Windows sit half a logging period off the value changes, so arrival jitter under
    // 50 ms cannot move a line across.
    let spec = FigureSpec::Steady {
        source: arena_matrix::spec::LineSource::Stdout,
        pattern,
        group: "value".into(),
        warmup: 0.45,
        window: 1.0,
        windows: 3,
        per_window: PerWindow::Mean,
    };
    let f = read_figure(&spec, hits, CutLines::default(), fin.wall_s).unwrap();
    assert_eq!(f.windows, vec![50.0, 100.0, 100.0]);
    assert_eq!(f.start, Some(50.0));
    assert!((f.value - 250.0 / 3.0).abs() < 1e-9);
    let rate = steady_windows(hits, 0.45, 1.0, 3, PerWindow::Rate).unwrap();
    for w in &rate.windows {
        assert!((9.0..=11.0).contains(w), "lines per second {w}");
    }
    // Fewer lines than the windows need: fewer windows, said so.
    let short = steady_windows(&hits[..25], 0.45, 1.0, 3, PerWindow::Mean).unwrap();
    assert_eq!(short.windows.len(), 2);
    assert!(short.note.is_some());
}

/// Each run logs 100 ms of warm-up at 10 fps, a 250 ms first window at START and 500 ms at
/// STEADY (a line every 50 ms, stamped with its own time); `--plus {repeat}` adds 1..3, so
/// the best run is the third. Each case sets START:STEADY per arm in its environment and
/// each arm picks its variable.
const MATRIX_2X3: &str = r#"
title = "trace replay"
unit = "fps"
case_label = "backend"
baseline = "dev"
repeats = 3

[figure]
kind = "steady"
pattern = 'fps=(?P<value>[0-9.]+) t=(?P<t>[0-9.]+)'
warmup_s = 0.075
window_s = 0.25
windows = 3

[sampler]
interval_ms = 50

[[arm]]
name = "dev"
label = "dev (pull)"
args = "$DEV"

[[arm]]
name = "monolith"
args = "$MONOLITH"

[[arm]]
name = "inproc"
args = "$INPROC"

[[case]]
name = "Espryt"
command = "TICKER 50 --stamp --plus {repeat} 100:10 {args}"
env = { DEV = "250:70 500:115", MONOLITH = "250:60 500:90", INPROC = "250:70 500:116" }

[[case]]
name = "Magma"
command = "TICKER 50 --stamp --plus {repeat} 100:10 {args}"
# inproc's first launch dies at start-up.
env = { DEV = "250:45 500:87", MONOLITH = "250:45 500:85", INPROC = "250:63 500:110 --die-once {run_dir}/../started" }
"#;

/// 2 cases x 3 arms x 3 repeats of a real program: the table has the matrix layout of
/// `docs/matrix.md` (best, start figure in parentheses, % against the baseline, `~` under the bar), and a launch
/// that dies at start-up in one repeat shows as such while the others give figures.
#[test]
fn matrix_2x3x3_renders_the_notes_layout_and_survives_a_dying_launch() {
    let ticker = common::ticker().display().to_string();
    let dir = common::scratch("matrix");
    let text = MATRIX_2X3.replace("TICKER", &ticker);
    let path = write_matrix(&dir, &text);
    let spec = arena_matrix::load(&path).unwrap();
    let out = dir.join("out");
    let mut seen = 0;
    let m = run_matrix(
        &spec,
        &MatrixOptions {
            out_dir: out.clone(),
        },
        &AtomicBool::new(false),
        |_, _, _| seen += 1,
    );
    assert_eq!(seen, 18);
    assert!(!m.interrupted);
    // Round-robin: arms alternate within every round.
    let first_round: Vec<(usize, usize)> = m.runs[..6].iter().map(|r| (r.case, r.arm)).collect();
    assert_eq!(
        first_round,
        vec![(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    );

    let md = matrix_table(&m).render(Format::Markdown);
    eprintln!("{md}");
    assert!(
        md.contains(
            "### trace replay: best of 3, fps (start figure in parentheses), % against dev (pull)"
        ),
        "{md}"
    );
    assert!(
        md.contains("| backend | dev (pull) | monolith | inproc |"),
        "{md}"
    );
    // Best run (repeat 3): figure = mean of windows (START+3, STEADY+3, STEADY+3).
    assert!(
        md.contains("| Espryt | 103.0 (73.0) | 83.0 (63.0) \u{2212}19 % | 103.7 (73.0) ~ |"),
        "{md}"
    );
    let died = m
        .runs
        .iter()
        .find(|r| r.case == 1 && r.arm == 2 && r.repeat == 0)
        .unwrap();
    let died_text = died.status.short();
    assert!(
        matches!(died.status, RunStatus::Died(_)),
        "{:?}",
        died.status
    );
    assert!(
        died_text == "died: exit 134" || died_text == "died: signal 6 (SIGABRT)",
        "{died_text}"
    );
    assert!(
        md.contains(&format!(
            "| Magma | 76.0 (48.0) | 74.7 (48.0) ~ | 97.3 (66.0) +28 %, 1 of 3 {died_text} |"
        )),
        "{md}"
    );
    let tail = std::fs::read_to_string(died.dir.join("stderr.tail")).unwrap();
    assert!(tail.contains("start-up failed"), "{tail}");
    assert!(md.contains("1 of 18 runs gave no figure"), "{md}");
    assert!(
        md.contains("3 runs per cell are too few for a Mann-Whitney U test"),
        "{md}"
    );

    let json = arena_matrix::matrix_json(&m);
    let first = &json["cells"][0];
    assert_eq!(first["arm_label"], "dev (pull)", "{first}");
    assert_eq!(first["value"], serde_json::json!(103.0), "{first}");
    assert_eq!(json["case_label"], "backend");
    assert_eq!(json["cases"][1], "Magma");
    let csv = matrix_table(&m).render(Format::Csv);
    assert!(
        csv.starts_with("backend,dev (pull),monolith,inproc\nEspryt,103,83,"),
        "{csv}"
    );

    // Files: one folder per run, the run list as it went, the whole matrix at the end.
    assert_eq!(
        std::fs::read_to_string(out.join("runs.jsonl"))
            .unwrap()
            .lines()
            .count(),
        18
    );
    let whole: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("matrix.json")).unwrap()).unwrap();
    assert_eq!(whole["runs"].as_array().unwrap().len(), 18);
    assert!(out.join("runs/Espryt/dev/r1/threads.csv").is_file());
    assert!(out.join("runs/Espryt/dev/r1/stdout.log").is_file());
    // The ticker barely uses CPU, so which thread tops the table is a tie; every cell has
    // its row over its 3 runs, and the ticker is among the sampled threads.
    let cpu = cpu_table(&m).render(Format::Markdown);
    assert_eq!(cpu.matches(" | 3 |\n").count(), 6, "{cpu}");
    let threads = std::fs::read_to_string(out.join("runs/Espryt/dev/r1/threads.csv")).unwrap();
    assert!(threads.lines().any(|l| l.contains(",ticker,")), "{threads}");
}

/// Wall time with a warm-up run, pinning recorded and applied, generic samplers reading a
/// file and a command.
#[test]
fn wall_time_pinning_and_generic_samplers() {
    let dir = common::scratch("wall");
    std::fs::write(dir.join("busy"), "gpu busy: 37 %\n").unwrap();
    // A FIFO no one writes: never opened (it would block the sampler), a miss each time.
    let fifo = dir.join("stuck");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let text = format!(
        r#"
repeats = 2
pin = [0]

[figure]
kind = "wall"
warmup_runs = 1

[sampler]
interval_ms = 20
[[sampler.generic]]
name = "gpu_busy"
file = "{}"
[[sampler.generic]]
name = "echo"
command = "echo 5"
interval_ms = 50
[[sampler.generic]]
name = "stuck"
file = "{}"

[[arm]]
name = "short"
args = "0.1"

[[arm]]
name = "long"
args = "0.3"

[[case]]
name = "sleep"
command = "grep Cpus_allowed_list /proc/self/status > {{run_dir}}/cpus; sleep"
"#,
        dir.join("busy").display(),
        fifo.display()
    );
    let m = common::run_text(&dir, &text);
    assert_eq!(m.runs.len(), 6, "2 warm-ups + 2 x 2 measured");
    assert!(m.runs[..2].iter().all(|r| r.warmup));
    assert!(dir.join("out/runs/sleep/short/w1").is_dir());
    for r in m.runs.iter().filter(|r| !r.warmup) {
        let f = r.figure.as_ref().expect("wall figure").value;
        let want = if r.arm == 0 { 100.0 } else { 300.0 };
        // At least the sleep; the upper bound only catches a figure in the wrong unit (a
        // loaded machine with the command pinned to one core adds hundreds of ms).
        assert!(f >= want && f < want + 3000.0, "arm {} wall {f} ms", r.arm);
        let cpus = std::fs::read_to_string(r.dir.join("cpus")).unwrap();
        assert!(
            cpus.trim().ends_with(":\t0") || cpus.trim().ends_with(" 0"),
            "{cpus}"
        );
        let busy = r.generic.iter().find(|g| g.name == "gpu_busy").unwrap();
        assert_eq!(busy.mean, Some(37.0));
        assert!(busy.points.len() >= 3, "{:?}", busy.points);
        assert!(r.dir.join("sampler-gpu_busy.csv").is_file());
        assert_eq!(
            r.generic.iter().find(|g| g.name == "echo").unwrap().max,
            Some(5.0)
        );
    }
    assert_eq!(m.machine.pinned, Some(vec![0]));
    let md = matrix_table(&m).render(Format::Markdown);
    assert!(md.contains("best of 2, ms, % against short"), "{md}");
    assert!(md.contains("pinned to cores 0"), "{md}");
    assert!(md.contains("lower is better"), "{md}");
    let stuck: u32 = m
        .runs
        .iter()
        .flat_map(|r| &r.generic)
        .filter(|g| g.name == "stuck")
        .map(|g| g.misses)
        .sum();
    assert!(stuck > 0, "{md}");
    assert!(
        md.contains(&format!(
            "sampler `stuck`: {stuck} of {stuck} readings gave no number"
        )),
        "{md}"
    );
}

/// Timeouts and failures are cells; every process of a killed or finished run is gone.
#[test]
fn timeouts_deaths_and_no_figure_are_cells_and_leave_no_process() {
    let dir = common::scratch("fail");
    let text = r#"
repeats = 1
timeout_s = 0.6

[figure]
kind = "regex"
pattern = 'result=(?P<value>\d+)'

[[arm]]
name = "hang"
args = "sleep 30.4242 & sleep 30.4242; echo result=1"

[[arm]]
name = "exit3"
args = "echo result=5; exit 3"

[[arm]]
name = "silent"
args = "echo nothing"

[[arm]]
name = "straggler"
args = "(sleep 30.4343 &); echo result=7"

[[case]]
name = "c"
command = "{args}"
"#;
    let t = Instant::now();
    let m = common::run_text(&dir, text);
    assert!(t.elapsed() < Duration::from_secs(8));
    let st: Vec<String> = m.runs.iter().map(|r| r.status.short()).collect();
    assert_eq!(st, vec!["timeout", "died: exit 3", "no figure", "ok"]);
    assert_eq!(m.runs[3].figure.as_ref().unwrap().value, 7.0);
    let md = matrix_table(&m).render(Format::Markdown);
    assert!(
        md.contains("| c | timeout | died: exit 3 | no figure | 7.0 |"),
        "{md}"
    );
    assert!(
        common::pids_with_cmdline("sleep 30.4242").is_empty(),
        "timed-out tree left running"
    );
    assert!(
        common::pids_with_cmdline("sleep 30.4343").is_empty(),
        "straggler left running"
    );
}

/// Ctrl-C mid-matrix: the run in flight is killed, the finished ones are kept and written.
#[test]
fn interrupt_keeps_what_finished() {
    let dir = common::scratch("interrupt");
    let text = r#"
repeats = 50
[figure]
kind = "wall"
[[arm]]
name = "a"
[[case]]
name = "c"
command = "sleep 0.15; echo 31.5151 >/dev/null"
"#;
    let spec = arena_matrix::load(&write_matrix(&dir, text)).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let f2 = flag.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        f2.store(true, Ordering::SeqCst);
    });
    let t = Instant::now();
    let m = run_matrix(
        &spec,
        &MatrixOptions {
            out_dir: dir.join("out"),
        },
        &flag,
        |_, _, _| {},
    );
    setter.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(6));
    assert!(m.interrupted);
    assert!(
        !m.runs.is_empty() && m.runs.len() < 50,
        "{} runs",
        m.runs.len()
    );
    let whole: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/matrix.json")).unwrap())
            .unwrap();
    assert_eq!(whole["interrupted"], serde_json::json!(true));
    assert_eq!(whole["runs"].as_array().unwrap().len(), m.runs.len());
    let md = matrix_table(&m).render(Format::Markdown);
    assert!(
        md.contains(&format!("best of {}, ms", m.runs.len())),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "interrupted: {} of 50 planned runs finished",
            m.runs.len()
        )),
        "{md}"
    );
}

/// Per-process CPU by phase, split by a log regex: idle while the script waits, busy while
/// the burner runs.
#[test]
fn phases_split_process_cpu_by_log_marks() {
    let _g = common::cpu_lock();
    let burn = common::burn().display().to_string();
    let dir = common::scratch("phases");
    let text = format!(
        r#"
repeats = 1
[figure]
kind = "wall"
[sampler]
interval_ms = 50
phase_pattern = '^phase=(?P<phase>\w+)'
[sampler.processes]
burner = '^\S*/burn \d+ .*--proc burner'
[[arm]]
name = "a"
[[case]]
name = "c"
command = "echo phase=waiting; sleep 0.8; echo phase=firing; {burn} 1000 hot:80 --proc burner; echo phase=done"
"#
    );
    let m = common::run_text(&dir, &text);
    let r = &m.runs[0];
    let names: Vec<&str> = r.phase_marks.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["waiting", "firing", "done"]);
    assert_eq!(r.phase_lines, Some(3));
    let phases = &r.cpu.as_ref().unwrap().phases;
    let get = |phase: &str, proc_: &str| {
        phases
            .iter()
            .find(|p| p.phase == phase && p.process == proc_)
            .map(|p| p.pct_of_core)
    };
    let truth: f64 = Regex::new(r"self hot cpu_pct ([0-9.]+)")
        .unwrap()
        .captures(&std::fs::read_to_string(r.dir.join("stdout.log")).unwrap())
        .unwrap()[1]
        .parse()
        .unwrap();
    let firing = get("firing", "burner").expect("burner in firing");
    assert!(
        (firing - truth).abs() <= 15.0,
        "burner {firing:.1} % while firing, own clock {truth:.1} %"
    );
    assert_eq!(get("waiting", "burner").unwrap_or(0.0), 0.0);
    let sh_wait = get("waiting", "sh").expect("sh while waiting");
    assert!(sh_wait < 5.0, "sh {sh_wait:.1} % while waiting");
    assert!(r.dir.join("phases.csv").is_file());
    let t = phases_table(&m)
        .expect("phases table")
        .render(Format::Markdown);
    assert!(t.contains("| c | a | firing |"), "{t}");
    assert!(t.contains("burner"), "{t}");
}

/// A phase file that is not a regular file (`/dev/zero`, read forever once) is not read,
/// and the table says no phase came from it rather than leaving the phases out unsaid.
#[test]
fn a_phase_file_that_gives_no_line_is_said() {
    let dir = common::scratch("phasezero");
    let text = r#"
repeats = 1
[figure]
kind = "wall"
[sampler]
phase_pattern = '^phase=(?P<phase>\w+)'
phase_file = "/dev/zero"
[[arm]]
name = "a"
[[case]]
name = "c"
command = "sleep 0.2"
"#;
    let m = common::run_text(&dir, text);
    assert_eq!(m.runs[0].phase_lines, Some(0));
    let md = matrix_table(&m).render(Format::Markdown);
    assert!(
        md.contains(
            "phases: no line of phase_file /dev/zero matched the phase pattern in 1 of 1 runs"
        ),
        "{md}"
    );
}

/// Bad matrix files are exit 2 and say which key on which line.
#[test]
fn bad_matrix_files_exit_2_with_key_and_line() {
    let dir = common::scratch("bad");
    let base = "[figure]\nkind = \"regex\"\npattern = 'v=(?P<value>\\d+)'\n\n[[arm]]\nname = \"a\"\n\n[[case]]\nname = \"c\"\ncommand = \"true\"\n";
    let cases = [
        (
            base.replace("name = \"a\"", "name = \"a\"\ncolour = \"red\""),
            7,
            "colour",
        ),
        (
            base.replace("(?P<value>\\d+)", "(\\d+)"),
            3,
            "figure.pattern",
        ),
        (format!("{base}arms = [\"a\", \"b\"]\n"), 11, "case.arms"),
        (
            base.replace("kind = \"regex\"", "kind = \"regex\"\nwindows = 3"),
            2,
            "figure.windows",
        ),
        (
            format!("{base}\n[sampler]\nphase_pattern = 'x'\n"),
            13,
            "sampler.phase_pattern",
        ),
    ];
    for (text, line, key) in cases {
        let p = write_matrix(&dir, &text);
        let err = arena_matrix::load(&p).unwrap_err();
        let exit = err
            .chain()
            .find_map(|e| e.downcast_ref::<Exit>())
            .expect("an Exit error");
        assert_eq!(exit.kind, ExitKind::BadInput);
        assert_eq!(exit.kind.code(), 2);
        let msg = format!("{err:#}");
        assert!(
            msg.contains(&format!("matrix.toml:{line}:")),
            "want line {line}: {msg}"
        );
        assert!(msg.contains(key), "want key {key}: {msg}");
    }
    let missing = arena_matrix::load(&dir.join("nope.toml")).unwrap_err();
    assert_eq!(
        missing
            .chain()
            .find_map(|e| e.downcast_ref::<Exit>())
            .unwrap()
            .kind,
        ExitKind::BadInput
    );
    let _ = GenericSpec {
        name: String::new(),
        source: GenericSource::Command(String::new()),
        interval: Duration::from_millis(1),
    };
}

/// A pilot run folder written under the run folder: its warm inputToPaint p50 (or p90) is
/// the figure, read through `arena_run::Run::load_loops_only`.
#[test]
fn pilot_figure_reads_the_nested_run_folder() {
    use arena_run::{
        Host, Loop, Run, RunMeta, RunStatus as PilotStatus, RunSummary, SocketSource,
        SCHEMA_VERSION,
    };
    let dir = common::scratch("pilot");
    // `paints` answered loops, then `unanswered` that never were.
    let make = |arm: &str, paints: &[f64], unanswered: usize| -> std::path::PathBuf {
        let mut loops: Vec<Loop> = paints
            .iter()
            .enumerate()
            .map(|(i, &p)| Loop {
                index: i as u64,
                arm: arm.into(),
                label: "firing".into(),
                event: "mousedown".into(),
                cold: false,
                answered: true,
                outcome: arena_run::Outcome::Answered,
                t_input: 1000.0 * i as f64,
                t_send: Some(1000.0 * i as f64 + 1.0),
                t_recv: Some(1000.0 * i as f64 + 2.0),
                t_draw: Some(1000.0 * i as f64 + 3.0),
                t_paint: Some(1000.0 * i as f64 + p),
                input_to_socket: Some(1.0),
                send_to_recv: Some(1.0),
                recv_to_draw: Some(1.0),
                input_to_paint: Some(p),
                reply_bytes: 5000,
                reply_frames: 1,
                t_answer: None,
                input_to_pixels: None,
                after_lapse: false,
            })
            .collect();
        for k in 0..unanswered {
            let mut l = loops[0].clone();
            let t = 1000.0 * (paints.len() + k) as f64;
            l.index = (paints.len() + k) as u64;
            (l.answered, l.outcome) = (false, arena_run::Outcome::Unanswered);
            (l.t_input, l.t_send) = (t, Some(t + 1.0));
            (l.t_recv, l.t_draw, l.t_paint) = (None, None, None);
            (l.send_to_recv, l.recv_to_draw, l.input_to_paint) = (None, None, None);
            (l.reply_bytes, l.reply_frames) = (0, 0);
            loops.push(l);
        }
        let now = arena_run::rfc3339_utc(std::time::SystemTime::now());
        let run = Run {
            meta: RunMeta {
                schema_version: SCHEMA_VERSION,
                arm: arm.into(),
                knobs: Default::default(),
                pilot_file: None,
                pilot_hash: "00".repeat(32),
                url: "http://127.0.0.1:1/".into(),
                chromium_version: "test".into(),
                arena_perf_version: "0.1.0".into(),
                host: Host::current(),
                started_at: now.clone(),
                ended_at: now,
                status: PilotStatus::Complete,
                status_message: None,
                socket_source: SocketSource::PageHook,
                seed: 1,
                summary: {
                    let mut s = RunSummary::default();
                    s.count_loops(&loops);
                    s
                },
                warnings: Vec::new(),
                wire: None,
                answer: None,
                link: None,
                link_connections: Vec::new(),
                trace: None,
                idle: None,
                cpu: None,
                loop_settings: None,
                browser: None,
                clock: None,
            },
            loops,
            events: Vec::new(),
            setup_events: None,
            gestures: Vec::new(),
        };
        let d = dir.join(format!("prebuilt-{arm}"));
        run.write(&d).unwrap();
        d
    };
    // 41 loops a run: stock's p50 70 ms, lazy's 35 ms; stuck's p50 lands on its unanswered
    // loops (21 of 41), its answered ones 90-99.5 ms. One run a side: the spread between
    // runs is compare's assumed one, so only a change past it is decided.
    let spread =
        |median: f64| -> Vec<f64> { (0..41).map(|i| median - 10.0 + 0.5 * i as f64).collect() };
    let stock = make("stock", &spread(70.0), 0);
    let lazy = make("lazy", &spread(35.0), 0);
    let stuck = make("stuck", &spread(100.0)[..20], 21);
    let text = format!(
        r#"
repeats = 1
baseline = "stock"
[figure]
kind = "pilot"
metric = "p50"
[[arm]]
name = "stock"
args = "{}"
[[arm]]
name = "lazy"
args = "{}"
[[arm]]
name = "stuck"
args = "{}"
[[arm]]
name = "broken"
args = "/nonexistent"
[[case]]
name = "firing"
command = "cp -r {{args}} {{run_dir}}/pilot"
"#,
        stock.display(),
        lazy.display(),
        stuck.display()
    );
    let m = common::run_text(&dir, &text);
    assert_eq!(m.runs[0].figure.as_ref().unwrap().value, 70.0);
    assert_eq!(m.runs[1].figure.as_ref().unwrap().value, 35.0);
    // The run records no window, so its p50's bound is its slowest answer (every answer
    // came within the window).
    let stuck = m.runs[2].figure.as_ref().unwrap();
    assert!(stuck.at_least && stuck.value == 99.5, "{stuck:?}");
    assert!(matches!(m.runs[3].status, RunStatus::Died(_)));
    let md = matrix_table(&m).render(Format::Markdown);
    assert!(
        md.contains("| firing | 70.0 | 35.0 \u{2212}50 % | \u{2265} 99.5 slower | died: exit 1 |"),
        "{md}"
    );
    assert!(md.contains("3 verdicts held at 0.05 together"), "{md}");

    // Of one kind of input: every loop here is a press, so a figure of releases is none.
    let only = |event: &str| {
        let t = text.replace(
            "metric = \"p50\"",
            &format!("metric = \"p50\"\nevent = \"{event}\""),
        );
        let d = dir.join(event);
        std::fs::create_dir_all(&d).unwrap();
        common::run_text(&d, &t)
    };
    let presses = only("mousedown");
    assert_eq!(presses.runs[0].figure.as_ref().unwrap().value, 70.0);
    let releases = only("mouseup");
    assert!(
        matches!(&releases.runs[0].status, RunStatus::NoFigure(d) if d.contains("no warm mouseup loops")),
        "{:?}",
        releases.runs[0].status
    );
    assert!(md.contains("best of 1, ms, % against stock"), "{md}");
    assert!(md.contains("lower is better"), "{md}");
}
