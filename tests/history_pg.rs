//! `history` through the real binary against a real PostgreSQL: a cluster of Debian's
//! `postgresql` package made in a scratch folder on a free loopback port, removed after.
//! The store suite itself runs on both stores in `crates/arena-history/src/pg_tests.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use arena_compare::synthetic;
use serde_json::Value;

use crate::compare_common::{arena, s, Scratch};
use crate::support::machine::shared;

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A server program, as the `postgres` user when root (initdb and the server refuse root).
fn as_owner(program: &Path, args: &[&str]) -> Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args).stdin(Stdio::null()).output().unwrap()
}

/// A throwaway cluster, stopped on drop (its folder goes with the scratch folder).
struct Cluster {
    data: PathBuf,
    bin: PathBuf,
    port: u16,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let mut bins: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed (scripts/test installs Debian's postgresql)")
            .filter_map(|e| e.ok())
            .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
            .collect();
        bins.sort();
        let bin = bins.pop().expect("a /usr/lib/postgresql/*/bin").1;
        if is_root() {
            assert!(Command::new("chown")
                .arg("postgres:")
                .arg(dir)
                .status()
                .unwrap()
                .success());
        }
        let data = dir.join("data");
        let o = as_owner(
            &bin.join("initdb"),
            &["-D", s(&data), "-A", "trust", "-U", "arena", "--no-sync"],
        );
        assert!(
            o.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            dir.display()
        );
        let log = dir.join("log");
        let cluster = Cluster { data, bin, port };
        let o = as_owner(
            &cluster.bin.join("pg_ctl"),
            &[
                "-D",
                s(&cluster.data),
                "-o",
                &opts,
                "-l",
                s(&log),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        assert!(
            o.status.success(),
            "pg_ctl start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        cluster
    }

    fn url(&self) -> String {
        format!("postgres://arena@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        as_owner(
            &self.bin.join("pg_ctl"),
            &["-D", s(&self.data), "-m", "immediate", "-w", "stop"],
        );
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn eight_processes_add_200_runs_to_postgresql_and_a_refused_login_is_exit_3() {
    let _g = shared();
    let d = Scratch::new("hist-pg");
    let runs_dir = d.path("runs");
    let cluster_dir = d.path("cluster");
    std::fs::create_dir_all(&cluster_dir).unwrap();
    let cluster = Cluster::start(&cluster_dir);
    let url = cluster.url();
    let runs: Vec<PathBuf> = (0..200u64)
        .map(|i| {
            let out = runs_dir.join(format!("stock-{i}"));
            synthetic::run(
                "stock",
                &synthetic::lognormal(12, 50.0, 0.3, 0.0, 2000 + i),
                6000,
            )
            .write(&out)
            .unwrap();
            out
        })
        .collect();
    let children: Vec<_> = runs
        .chunks(25)
        .map(|chunk| {
            Command::new(env!("CARGO_BIN_EXE_arena-perf"))
                .args([
                    "history", "add", "--db", &url, "--branch", "main", "--commit", "c1",
                ])
                .args(["--testbed", "ci-1"])
                .args(chunk)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let o = arena(&["history", "list", "--db", &url, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut sources: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    sources.sort();
    let mut want: Vec<&str> = runs.iter().map(|p| s(p)).collect();
    want.sort();
    assert_eq!(sources, want, "200 runs, each once");

    // Adding one again stores nothing new.
    let o = arena(&[
        "history",
        "add",
        "--db",
        &url,
        "--branch",
        "main",
        "--testbed",
        "ci-1",
        s(&runs[7]),
    ]);
    assert!(text(&o).contains("already stored"), "{}", text(&o));

    let refused = format!(
        "postgres://nobody:secret@127.0.0.1:{}/postgres",
        cluster.port
    );
    let o = arena(&["history", "list", "--db", &refused]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("nobody") && !text(&o).contains("secret"),
        "{}",
        text(&o)
    );
}

impl Cluster {
    /// Stops the server at once, as a crashed or rebooted one goes.
    fn stop(&self) {
        as_owner(
            &self.bin.join("pg_ctl"),
            &["-D", s(&self.data), "-m", "immediate", "-w", "stop"],
        );
    }
}

fn started(tag: &str) -> (Scratch, Cluster) {
    let d = Scratch::new(tag);
    let dir = d.path("cluster");
    std::fs::create_dir_all(&dir).unwrap();
    let c = Cluster::start(&dir);
    (d, c)
}

fn hashes(url: &str) -> Vec<String> {
    let o = arena(&["history", "list", "--db", url, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["runs"].as_array().unwrap();
    rows.iter()
        .map(|r| r["content_hash"].as_str().unwrap().to_string())
        .collect()
}

fn pg_cache(url: &str, verb: &str, file: &Path) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ci/pg-cache.sh");
    Command::new(script)
        .args([verb, s(file)])
        .env("ARENA_PERF_DB", url)
        .output()
        .unwrap()
}

#[test]
fn the_postgres_workflows_dump_restores_the_history_into_an_empty_database() {
    let _g = shared();
    let (d, cluster) = started("hist-pg-cache");
    let url = cluster.url();
    let runs: Vec<PathBuf> = (0..3u64)
        .map(|i| {
            let out = d.path(&format!("stock-{i}"));
            let loops = synthetic::lognormal(12, 50.0, 0.3, 0.0, 40 + i);
            synthetic::run("stock", &loops, 6000).write(&out).unwrap();
            out
        })
        .collect();
    let mut args = vec!["history", "add", "--db", &url, "--branch", "main"];
    args.extend(runs.iter().map(|p| s(p)));
    assert_eq!(arena(&args).status.code(), Some(0));
    let dump = d.path("history.pgdump");
    let o = pg_cache(&url, "save", &dump);
    assert!(o.status.success(), "{}", text(&o));

    let create = Command::new("psql")
        .args([url.as_str(), "-c", "CREATE DATABASE restored"])
        .output()
        .unwrap();
    assert!(create.status.success(), "{}", text(&create));
    let restored = url.replace("/postgres", "/restored");
    let o = pg_cache(&restored, "restore", &d.path("no-such.pgdump"));
    assert!(text(&o).contains("starts empty"), "{}", text(&o));
    let o = pg_cache(&restored, "restore", &dump);
    assert!(o.status.success(), "{}", text(&o));
    let want = hashes(&url);
    assert_eq!(want.len(), 3);
    assert_eq!(hashes(&restored), want);
}

#[test]
fn pilot_history_to_a_server_that_goes_away_mid_run_is_exit_3_and_keeps_the_run_folder() {
    let _g = shared();
    use std::io::{BufRead, BufReader};
    let (d, cluster) = started("hist-pg-gone");
    let pilot = crate::compare_common::cheap_pilot(&d.0);
    let out = d.path("run");
    // A server refusing the login is exit 3 before any browser starts: no run is made.
    let refused = cluster.url().replace("arena@", "nobody:secret@");
    let o = arena(&[
        "pilot",
        "--pilot",
        s(&pilot),
        "--out",
        s(&out),
        "--history",
        "--db",
        &refused,
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("nobody") && !text(&o).contains("secret"),
        "{}",
        text(&o)
    );
    assert!(!out.exists(), "nothing was run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_arena-perf"))
        .args([
            "pilot",
            "--pilot",
            s(&pilot),
            "--clicks",
            "8",
            "--scenario",
            "idle",
        ])
        .args(["--out", s(&out), "--history", "--db", &cluster.url()])
        .args(["--branch", "main", "--testbed", "ci-1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    // The store was opened before the browser started; the server goes while it clicks.
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("browser:") {
            cluster.stop();
            break;
        }
    }
    seen.extend(lines.map_while(Result::ok));
    let status = child.wait().unwrap();
    let err = seen.join("\n");
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!("history: {} was not added to", s(&out)))
            && err.contains("127.0.0.1")
            && err.contains("history add"),
        "{err}"
    );
    // Nothing is lost: the run folder loads, and adds to a history later.
    let later = d.path("later.sqlite");
    let o = arena(&[
        "history",
        "add",
        "--db",
        s(&later),
        "--branch",
        "main",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}
