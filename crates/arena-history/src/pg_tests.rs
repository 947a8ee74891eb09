//! The store suite on a real PostgreSQL: a cluster of Debian's `postgresql` package made
//! by the test in a scratch folder, on a free loopback port, and removed after it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::store::Filter;
use crate::suite::{self, full_run, new_run};

/// A throwaway cluster; stopped (immediately) and its folder removed on drop.
struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

/// The newest installed server's programs: /usr/lib/postgresql/VERSION/bin.
fn server_bin() -> PathBuf {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (Debian's postgresql package; scripts/test installs it)")
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("initdb").is_file())
        .collect();
    found.sort();
    found.pop().expect("a /usr/lib/postgresql/*/bin/initdb").1
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs a server program; as root, as the `postgres` user the package made, since initdb
/// and the server refuse to run as root.
fn run_as_owner(program: &Path, args: &[&str]) -> Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let st = Command::new("chown")
                .arg("postgres:")
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(st.success(), "chown the cluster's folder to postgres");
        }
        let bin = server_bin();
        let data = dir.path().join("data");
        let data_s = data.to_str().unwrap();
        let o = run_as_owner(
            &bin.join("initdb"),
            &["-D", data_s, "-A", "trust", "-U", "arena", "--no-sync"],
        );
        assert!(
            o.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let cluster = Cluster {
            dir,
            bin,
            port: free_port(),
        };
        cluster.pg_ctl("start");
        cluster
    }

    /// `pg_ctl start` (waiting until it accepts connections) or `stop` (immediately).
    fn pg_ctl(&self, what: &str) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let mut args = vec!["-D", data.to_str().unwrap(), "-w", "-t", "60"];
        match what {
            "start" => args.extend(["-o", &opts, "-l", log.to_str().unwrap(), "start"]),
            _ => args.extend(["-m", "immediate", "stop"]),
        }
        let o = run_as_owner(&self.bin.join("pg_ctl"), &args);
        assert!(
            o.status.success(),
            "pg_ctl {what}: {}{}",
            String::from_utf8_lossy(&o.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    fn url(&self, db: &str) -> String {
        format!("postgres://arena@127.0.0.1:{}/{db}", self.port)
    }

    /// A fresh database for one part of the suite.
    fn database(&self, name: &str) -> String {
        let mut c = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        if data.join("postmaster.pid").exists() {
            let args = [
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ];
            run_as_owner(&self.bin.join("pg_ctl"), &args);
        }
    }
}

#[test]
fn the_store_suite_passes_on_postgresql() {
    let cluster = Cluster::start();
    let open = |url: &str| crate::open(url).unwrap();
    suite::a_stored_run_loads_back_as_the_same_run(open(&cluster.database("round_trip")).as_mut());
    suite::a_run_added_from_its_folder_streams_its_records(
        open(&cluster.database("streamed")).as_mut(),
    );
    suite::the_same_run_added_twice_is_kept_once(open(&cluster.database("dup")).as_mut());
    suite::list_filters_and_keeps_the_order_of_adding(open(&cluster.database("list")).as_mut());
    suite::load_many_reads_what_load_reads(open(&cluster.database("many")).as_mut());
    let conc = cluster.database("conc");
    suite::eight_writers_store_200_runs(&|| open(&conc));
    suite::killed_writer_leaves_nothing(&cluster.database("killed"));

    // A newer schema, and another application's database, are refused naming both.
    let newer = cluster.database("newer");
    open(&newer);
    let mut c = postgres::Client::connect(&newer, postgres::NoTls).unwrap();
    c.batch_execute("UPDATE schema_version SET version = version + 1")
        .unwrap();
    let e = format!("{:#}", crate::open(&newer).err().unwrap());
    let v = crate::SCHEMA_VERSION;
    assert!(
        e.contains(&format!("version {}", v + 1)) && e.contains(&format!("version {v}")),
        "{e}"
    );
    let other = cluster.database("other_app");
    let mut c = postgres::Client::connect(&other, postgres::NoTls).unwrap();
    c.batch_execute("CREATE TABLE accounts (id BIGINT)")
        .unwrap();
    let e = crate::open(&other).err().unwrap();
    assert_eq!(
        arena_report::ExitKind::of(&e),
        Some(arena_report::ExitKind::BadInput)
    );
    assert!(format!("{e:#}").contains("accounts"), "{e:#}");

    // A login the server refuses is exit 3 naming the server and why.
    let refused = format!(
        "postgres://nobody:secret@127.0.0.1:{}/postgres",
        cluster.port
    );
    let e = crate::open(&refused).err().unwrap();
    let text = format!("{e:#}");
    assert_eq!(
        arena_report::ExitKind::of(&e),
        Some(arena_report::ExitKind::TargetFailed),
        "{text}"
    );
    assert!(
        text.contains("nobody") && text.contains("does not exist") && !text.contains("secret"),
        "{text}"
    );

    // A run written to PostgreSQL reads back equal to the one SQLite stores.
    let d = tempfile::tempdir().unwrap();
    let mut lite = crate::open(d.path().join("h.sqlite").to_str().unwrap()).unwrap();
    let mut pg = open(&cluster.database("same"));
    let run = new_run(full_run(4), "main");
    let (a, b) = (lite.add(&run).unwrap().id(), pg.add(&run).unwrap().id());
    assert_eq!(lite.load(a, true).unwrap(), pg.load(b, true).unwrap());
    assert_eq!(
        lite.list(&Filter::default()).unwrap()[0].content_hash,
        pg.list(&Filter::default()).unwrap()[0].content_hash
    );

    a_server_gone_mid_add_is_exit_3_and_leaves_nothing(&cluster);
}

/// Stops the server under a connected store: the add fails with exit 3 naming it, and
/// once the server is back, only the run added before is there.
fn a_server_gone_mid_add_is_exit_3_and_leaves_nothing(cluster: &Cluster) {
    let open = |url: &str| crate::open(url).unwrap();
    let gone = cluster.database("gone");
    let mut store = open(&gone);
    store.add(&new_run(full_run(5), "main")).unwrap();
    cluster.pg_ctl("stop");
    let e = store.add(&new_run(full_run(6), "main")).err().unwrap();
    assert_eq!(
        arena_report::ExitKind::of(&e),
        Some(arena_report::ExitKind::TargetFailed),
        "{e:#}"
    );
    assert!(
        format!("{e:#}").contains(&format!("127.0.0.1:{}", cluster.port)),
        "{e:#}"
    );
    cluster.pg_ctl("start");
    let rows = open(&gone).list(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 1, "only the run added before the server went");
}

#[test]
fn a_server_that_accepts_and_never_answers_is_given_up_within_the_wait() {
    // The kernel completes the handshake; nothing ever answers the startup message.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "postgres://ci:hunter2@127.0.0.1:{}/h",
        silent.local_addr().unwrap().port()
    );
    let wait = std::time::Duration::from_millis(700);
    let t = std::time::Instant::now();
    let e = crate::pg::PgStore::open_with(&url, wait)
        .err()
        .expect("gave up");
    let took = t.elapsed();
    let text = format!("{e:#}");
    assert_eq!(
        arena_report::ExitKind::of(&e),
        Some(arena_report::ExitKind::TargetFailed),
        "{text}"
    );
    assert!(
        text.contains("did not answer the connection within 0.7 s")
            && text.contains("ARENA_PERF_DB_WAIT")
            && !text.contains("hunter2"),
        "{text}"
    );
    assert!(took >= wait && took < 10 * wait, "{took:?}");
}
