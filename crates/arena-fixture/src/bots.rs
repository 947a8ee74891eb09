//! The fixture's bots: background threads (`fixture-bot-N`) that burn CPU beside the
//! session, like a match host's bot factions thinking. With `bot_turn_ms = 0` they think
//! all the time; otherwise only on their turns: each input the server receives starts (or
//! extends) a turn of `bot_turn_ms`, the way bots move after a player's move, so a page
//! left alone costs nothing and the bots' CPU lands where the inputs are.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

/// One duty-cycle period of a thinking bot.
const PERIOD: Duration = Duration::from_millis(10);
/// How often a waiting bot looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// When the bots' current turn ends; inputs move it forward.
pub(crate) struct Turns {
    turn: Option<Duration>,
    until: Mutex<Option<Instant>>,
    cv: Condvar,
}

impl Turns {
    pub(crate) fn new(turn_ms: u32) -> Turns {
        Turns {
            turn: (turn_ms > 0).then(|| Duration::from_millis(u64::from(turn_ms))),
            until: Mutex::new(None),
            cv: Condvar::new(),
        }
    }

    /// An input arrived: the bots take a turn from now.
    pub(crate) fn input(&self) {
        let Some(turn) = self.turn else { return };
        if let Ok(mut u) = self.until.lock() {
            *u = Some(Instant::now() + turn);
        }
        self.cv.notify_all();
    }

    /// Waits until it is the bots' turn; false once `stop` is set.
    fn wait_turn(&self, stop: &AtomicBool) -> bool {
        if self.turn.is_none() {
            return !stop.load(Ordering::Relaxed);
        }
        let Ok(mut u) = self.until.lock() else {
            return false;
        };
        loop {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            if u.is_some_and(|end| Instant::now() < end) {
                return true;
            }
            match self.cv.wait_timeout(u, STOP_POLL) {
                Ok((g, _)) => u = g,
                Err(_) => return false,
            }
        }
    }
}

/// The running bot threads.
pub(crate) struct Bots {
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) handles: Vec<JoinHandle<()>>,
}

impl Bots {
    pub(crate) fn start(count: u32, duty: u32, turns: &Arc<Turns>) -> anyhow::Result<Bots> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        for i in 0..count {
            let (stop, turns) = (stop.clone(), turns.clone());
            let h = std::thread::Builder::new()
                .name(format!("fixture-bot-{i}"))
                .spawn(move || bot(&stop, &turns, duty))
                .context("starting a bot thread")?;
            handles.push(h);
        }
        Ok(Bots { stop, handles })
    }
}

fn bot(stop: &AtomicBool, turns: &Turns, duty: u32) {
    let busy = PERIOD * duty.min(100) / 100;
    let mut x = 0u64;
    while turns.wait_turn(stop) {
        let t = Instant::now();
        while t.elapsed() < busy {
            for i in 0..1000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        if let Some(rest) = PERIOD.checked_sub(busy) {
            std::thread::sleep(rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bots_on_turns_wait_for_an_input_and_think_for_the_turn() {
        let turns = Arc::new(Turns::new(200));
        let t2 = turns.clone();
        let waiter = std::thread::spawn(move || t2.wait_turn(&AtomicBool::new(false)));
        std::thread::sleep(Duration::from_millis(120));
        assert!(!waiter.is_finished(), "a bot thought before any input");
        turns.input();
        assert!(waiter.join().unwrap(), "the input started a turn");
        let stop = AtomicBool::new(false);
        assert!(turns.wait_turn(&stop), "inside the turn");
        // Past the turn a bot waits; the stop flag ends the wait.
        std::thread::sleep(Duration::from_millis(250));
        stop.store(true, Ordering::Relaxed);
        assert!(!turns.wait_turn(&stop));
        // Without turns the bots think all the time.
        assert!(Turns::new(0).wait_turn(&AtomicBool::new(false)));
    }
}
