//! The machine's cores, held by the tests that run a browser or a target. Every test of
//! the binary runs in one process, so a test whose figures are measured holds the machine
//! alone, and a test that checks counts, exit codes and files shares it with at most two
//! other such tests. Two pilots measuring at once would each read the other's load as
//! latency; two that only count loops or signals lose nothing by it.
//!
//! The harness hands out tests in name order, so with one harness thread a core, a test
//! waiting here keeps its thread idle, and two sharing tests seldom run side by side.
//! `scripts/test` runs this binary with more harness threads than cores: the waiting is
//! done here, and a sharing test goes first whenever one waits (the tests are finite, so
//! the measuring ones still run, each alone).
//!
//! With `ARENA_TEST_HOLDS` naming a file, each hold appends a line to it (the test, how it
//! held the machine, seconds waited, seconds held): where the suite's time goes.

use std::io::Write;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// Sharing tests that may run at once. They mostly wait (on answers, timeouts, signals),
/// so three keep the 2 cores CI runs on busy where two left them half idle.
const SHARED_AT_ONCE: usize = 3;

struct State {
    exclusive: bool,
    shared: usize,
    shared_waiting: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    exclusive: false,
    shared: 0,
    shared_waiting: 0,
});
static FREED: Condvar = Condvar::new();

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

fn wait(s: MutexGuard<'static, State>) -> MutexGuard<'static, State> {
    FREED.wait(s).unwrap_or_else(|p| p.into_inner())
}

/// The machine, held until dropped (a panicking test drops it too).
#[must_use = "the machine is held only while the guard lives"]
pub struct Hold {
    exclusive: bool,
    asked: Instant,
    got: Instant,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut s = state();
        if self.exclusive {
            s.exclusive = false;
        } else {
            s.shared -= 1;
        }
        drop(s);
        FREED.notify_all();
        self.log();
    }
}

impl Hold {
    fn new(exclusive: bool, asked: Instant) -> Hold {
        Hold {
            exclusive,
            asked,
            got: Instant::now(),
        }
    }

    fn log(&self) {
        let Some(path) = std::env::var_os("ARENA_TEST_HOLDS") else {
            return;
        };
        let line = format!(
            "{}\t{}\t{:.1}\t{:.1}\n",
            std::thread::current().name().unwrap_or("?"),
            if self.exclusive {
                "exclusive"
            } else {
                "shared"
            },
            (self.got - self.asked).as_secs_f64(),
            self.got.elapsed().as_secs_f64(),
        );
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// For a test that measures (a shift by an injected delay, a bound in ms, CPU, a rate),
/// or compares runs recorded apart: nothing else that holds the machine runs beside it.
pub fn exclusive() -> Hold {
    let asked = Instant::now();
    let mut s = state();
    while s.exclusive || s.shared > 0 || s.shared_waiting > 0 {
        s = wait(s);
    }
    s.exclusive = true;
    Hold::new(true, asked)
}

/// For a test that drives a browser or a target but asserts no timing: it may share the
/// machine with another such test, never with a measuring one.
pub fn shared() -> Hold {
    let asked = Instant::now();
    let mut s = state();
    s.shared_waiting += 1;
    while s.exclusive || s.shared >= SHARED_AT_ONCE {
        s = wait(s);
    }
    s.shared_waiting -= 1;
    s.shared += 1;
    Hold::new(false, asked)
}

/// A measuring test's timing claim, measured once more when it fails. A shared machine's
/// slow spell can land on one side of an A/B alone: CI once read a link's 20 ms as
/// +25.7 ms, with the direct side's p50 at 13.6 ms where a quiet machine reads 10.7, and
/// two other measuring tests failed in the same minutes. Both attempts are printed, and
/// the claim must hold on the second: a path that does not move fails both.
pub fn remeasured(what: &str, mut attempt: impl FnMut() -> Result<(), String>) {
    let Err(first) = attempt() else {
        return;
    };
    eprintln!("{what}: the first measurement failed, measuring again: {first}");
    if let Err(second) = attempt() {
        panic!("{what}: failed on both measurements.\nfirst: {first}\nsecond: {second}");
    }
}
