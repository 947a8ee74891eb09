//! CPU by process and phase beside a run: the fixture's bots think only on their turns
//! after an input (`bot_turn_ms`), so their CPU must land in the clicks phase and not in
//! setup; a sampled process that exits mid-run is dated and keeps its figures; a PID or
//! NAME that does not run is bad input before any browser starts.

use super::*;
use arena_report::Format;
use arena_run::RunCpu;

/// Column `label`'s % of a core in `phase`.
fn pct(cpu: &RunCpu, label: &str, phase: &str) -> f64 {
    let i = cpu.phases.iter().position(|p| p.name == phase).unwrap();
    let p = cpu.processes.iter().find(|p| p.label == label);
    p.unwrap_or_else(|| panic!("no column {label}: {cpu:#?}"))
        .pct_of_core[i]
}

#[test]
fn bots_on_turns_show_in_the_clicks_phase_and_a_child_that_exits_is_dated() {
    let _g = exclusive();
    let pilot = Pilot::builtin().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // Exits a second after it is named: while the browser starts, in setup or early in
    // the clicks.
    let mut cmd = Command::new("sleep");
    cmd.arg("1");
    let mut child = arena_sys::spawn::own_group_with_death_signal(&mut cmd)
        .spawn()
        .unwrap();
    let ov = Overrides {
        clicks: Some(6),
        interval_ms: Some(300),
        knobs: knobs(&[("bots", "1"), ("bot_duty", "100"), ("bot_turn_ms", "600")]),
        sample: vec![child.id().to_string()],
        ..Overrides::default()
    };
    // The plan first, as the command line makes it: the child must run when it is named.
    let plan = Plan::for_arm(&pilot, Some("stock"), &ov).expect("plan");
    let o = rt().block_on(async {
        let browser = BrowserOptions::default().launch().await.expect("launch");
        let pids = browser.pids();
        let req = RunRequest {
            plan: &plan,
            out: OutDir::Exactly(tmp.path().join("run")),
            progress: &silent,
            cancel: &Cancel::new(),
        };
        let o = run_arm(&browser, req).await.expect("run");
        browser.close().await.expect("close");
        assert_eq!(alive(&pids), Vec::<i32>::new(), "Chromium processes left");
        o
    });
    let _ = child.wait();
    let o = &o;
    let cpu = o.run.meta.cpu.clone().expect("cpu figures");
    let names: Vec<&str> = cpu.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["setup", "clicks"]);
    let (setup, clicks) = (
        pct(&cpu, "fixture bots", "setup"),
        pct(&cpu, "fixture bots", "clicks"),
    );
    let n: u64 = cpu.phases.iter().map(|p| p.intervals).sum();
    eprintln!(
        "fixture bots: setup {setup:.1} %, clicks {clicks:.1} % of a core (every {} ms, {} \
         samples, {n} intervals)",
        cpu.interval_ms, cpu.samples
    );
    // Nobody clicked during setup, so the bot never had a turn; in the clicks it thinks
    // for 600 ms after each input, inputs under 600 ms apart: all the time, on the core
    // a loaded machine leaves it.
    assert!(setup < 3.0, "the bot thought in setup: {setup:.1} %");
    assert!(clicks > 15.0, "the bot's turns are missing: {clicks:.1} %");
    assert!(pct(&cpu, "chromium", "setup") > 1.0, "{cpu:#?}");
    // The child: seen running, then gone, its figures kept.
    let sleep = cpu.processes.iter().find(|p| p.source == "pid").unwrap();
    assert!(sleep.label.starts_with("sleep ("), "{}", sleep.label);
    let at = sleep.exited_at_s.expect("the exit is seen");
    let end: f64 = cpu.phases.iter().map(|p| p.span_s).sum();
    assert!(at > 0.0 && at < end, "exited at {at} s of {end} s");
    let t = arena_compare::cpu_table(&[("stock".into(), o.run.meta.cpu.as_ref())]).unwrap();
    let md = t.render(Format::Markdown);
    eprintln!("{md}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(rows.len(), 2 + 2, "{md}");
    assert!(
        rows[0].contains("| fixture bots |") && rows[0].contains("total of"),
        "{md}"
    );
    assert!(md.contains(&format!("{} exited", sleep.label)), "{md}");
    // What the run folder keeps is what the run measured.
    let back = Run::load(&o.dir).unwrap();
    assert_eq!(back.meta.cpu.as_ref(), Some(&cpu));
}

#[test]
fn a_pid_or_name_that_does_not_run_is_exit_2_before_the_browser() {
    // A Chromium that does not exist would fail with exit 3: the sample is checked first.
    for spec in ["no-such-process-xyz", "2147483600"] {
        let o = Command::new(bin())
            .args(["pilot", "--clicks", "1", "--quiet", "--sample", spec])
            .args(["--chrome", "/nonexistent/chromium"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{spec}: {err}");
        assert!(err.contains(&format!("--sample {spec}")), "{err}");
    }
}

/// The cores `/proc/<path>/status` allows (`Cpus_allowed_list: 0-1,3`); empty once the
/// process or thread has gone.
fn allowed(status: &Path) -> Vec<usize> {
    let text = std::fs::read_to_string(status).unwrap_or_default();
    let Some(list) = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
    else {
        return Vec::new();
    };
    list.trim()
        .split(',')
        .filter(|r| !r.is_empty())
        .flat_map(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()
        })
        .collect()
}

#[test]
fn cpu_split_runs_the_browser_on_the_upper_half_and_the_pilot_with_its_fixture_on_the_lower() {
    let _g = shared();
    let cores = arena_sys::procfs::allowed_cores();
    let split = arena_pilot::cpu_split::CpuSplit::of(&cores);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let mut cmd = Command::new(bin());
    cmd.args(["pilot", "--clicks", "32", "--cpu-split", "--out"])
        .arg(&out);
    let mut w = Watched::spawn(&mut cmd);
    let browser = w.browser_pid();
    if let Some(split) = &split {
        // Mid-run: every thread of the pilot (the fixture's included) on the lower half,
        // every process of the browser's tree on the upper.
        let pilot = w.child.id() as i32;
        w.wait_line("click 25/32", Duration::from_secs(60));
        let threads = std::fs::read_dir(format!("/proc/{pilot}/task")).unwrap();
        let mut seen = 0;
        for t in threads.flatten() {
            let got = allowed(&t.path().join("status"));
            assert!(
                got.is_empty() || got == split.target,
                "thread {:?}: {got:?}",
                t.path()
            );
            seen += usize::from(!got.is_empty());
        }
        assert!(seen > 1, "the pilot's threads");
        let mut tree = vec![browser];
        arena_sys::procfs::add_descendants(&mut tree, &arena_sys::procfs::processes());
        assert!(tree.len() > 1, "Chromium's helpers");
        for pid in &tree {
            let got = allowed(Path::new(&format!("/proc/{pid}/status")));
            assert!(
                got.is_empty() || got == split.browser,
                "chromium {pid}: {got:?}"
            );
        }
    }
    assert_eq!(w.wait_exit(Duration::from_secs(120)), 0, "{:?}", w.lines);
    let run = Run::load(&out).unwrap();
    assert_eq!(
        run.meta.host.cpu_split,
        split.as_ref().map(|s| s.describe())
    );
    // The machine's cores, not the half the pilot kept, here and as the CPU table's total.
    assert_eq!(run.meta.host.cores as usize, cores.len());
    let cpu = run.meta.cpu.as_ref().expect("the fixture's CPU");
    assert_eq!(cpu.cores as usize, cores.len());
}
