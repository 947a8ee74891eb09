//! The relay: a loopback listener whose every connection is forwarded to the target
//! through a shaped link, one pipe per direction.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};
use arena_report::{Exit, ExitKind};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::pipe::{shaped, Counters};
use crate::spec::LinkSpec;

/// How long the relay waits for the target to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What crossed the relay.
#[derive(Debug, Default)]
pub struct RelayStats {
    pub connections: AtomicU64,
    /// Connections the target refused or did not accept in time.
    pub refused: AtomicU64,
    /// Bytes delivered target -> browser.
    pub down_bytes: Arc<AtomicU64>,
    /// Bytes delivered browser -> target.
    pub up_bytes: Arc<AtomicU64>,
}

/// A running relay; [`Relay::stop`] ends every connection and releases the port.
pub struct Relay {
    addr: SocketAddr,
    pub spec: LinkSpec,
    pub stats: Arc<RelayStats>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Relay {
    /// Listens on 127.0.0.1 (a free port) and forwards to `target`. A target that does
    /// not accept a connection now is an error here, not a run of unanswered clicks.
    pub async fn start(target: SocketAddr, spec: LinkSpec) -> Result<Relay> {
        connect(target).await.map_err(|e| {
            anyhow!(Exit::new(
                ExitKind::TargetFailed,
                format!("--link: the relay cannot reach the target {target}: {e}")
            ))
        })?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let stats = Arc::new(RelayStats::default());
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, target, spec, stats.clone(), stopped));
        Ok(Relay {
            addr,
            spec,
            stats,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Where the browser connects instead of the target.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Ends every connection and closes the listener (its port is free when this returns).
    pub async fn stop(mut self) {
        self.shut().await;
    }

    async fn shut(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

pub(crate) async fn connect(target: SocketAddr) -> std::io::Result<TcpStream> {
    match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(target)).await {
        Ok(r) => r,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer in {} s", CONNECT_TIMEOUT.as_secs()),
        )),
    }
}

/// Accepts until stopped; every connection's tasks end with the loop (the set aborts
/// them when dropped), and so does the listener.
async fn accept_loop(
    listener: TcpListener,
    target: SocketAddr,
    spec: LinkSpec,
    stats: Arc<RelayStats>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else { continue };
                let n = stats.connections.fetch_add(1, Ordering::Relaxed);
                conns.spawn(forward(client, target, spec, stats.clone(), n));
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// One connection: the target's side opened, then the shaped link between them.
async fn forward(
    client: TcpStream,
    target: SocketAddr,
    spec: LinkSpec,
    stats: Arc<RelayStats>,
    n: u64,
) {
    let Ok(server) = connect(target).await else {
        stats.refused.fetch_add(1, Ordering::Relaxed);
        return;
    };
    let counters = Counters {
        up: stats.up_bytes.clone(),
        down: stats.down_bytes.clone(),
    };
    shaped(client, server, spec, n, counters).await;
}
