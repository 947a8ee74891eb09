//! The CDP socket source: WebSocket frames from `Network.webSocketFrameSent/Received`,
//! including sockets that live in dedicated Workers.
//!
//! A page session's Network domain does not report a Worker's sockets: each Worker is a
//! target of its own. This tap opens its own DevTools connection, attaches to the page,
//! auto-attaches (flattened) to the page's Workers, and enables Network in every session.
//! Its own connection keeps these sessions apart from chromiumoxide's target bookkeeping.

use crate::record::{ClassifierSpec, SendClass};
use anyhow::{anyhow, Context, Result};
use async_tungstenite::tungstenite::Message;
use base64::Engine as _;
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// A WebSocket frame seen through CDP.
#[derive(Debug, Clone)]
pub(crate) struct CdpFrame {
    pub seq: u64,
    /// CLOCK_MONOTONIC seconds.
    pub mono_s: f64,
    pub sent: bool,
    pub size: u32,
    pub class: SendClass,
    pub text: bool,
    pub socket: u16,
}

#[derive(Debug, Default)]
pub(crate) struct CdpLog {
    pub frames: Vec<CdpFrame>,
    /// Handshake responses as the network layer got them: (CLOCK_MONOTONIC s, socket).
    pub opens: Vec<(f64, u16)>,
    sockets: HashMap<String, u16>,
    pub next_seq: u64,
}

impl CdpLog {
    fn socket(&mut self, request_id: &str) -> u16 {
        let n = self.sockets.len().min(u16::MAX as usize - 1) as u16;
        *self.sockets.entry(request_id.to_string()).or_insert(n)
    }

    /// Sockets seen since the tap started.
    pub fn socket_count(&self) -> usize {
        self.sockets.len()
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A running tap; dropping it closes its connection (which detaches its sessions).
pub(crate) struct NetTap {
    pub log: Arc<Mutex<CdpLog>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for NetTap {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

struct Sender {
    tx: mpsc::UnboundedSender<String>,
    next_id: Arc<AtomicU64>,
    pending: Pending,
}

impl Sender {
    fn send(&self, method: &str, params: Value, session: Option<&str>) -> oneshot::Receiver<Value> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let _ = self.tx.send(msg.to_string());
        rx
    }

    /// Sends without waiting for (or keeping) the answer.
    fn fire(&self, method: &str, params: Value, session: &str) {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let msg = json!({"id": id, "method": method, "params": params, "sessionId": session});
        let _ = self.tx.send(msg.to_string());
    }

    fn clone_handle(&self) -> Sender {
        Sender {
            tx: self.tx.clone(),
            next_id: self.next_id.clone(),
            pending: self.pending.clone(),
        }
    }
}

async fn call(
    s: &Sender,
    limit: Duration,
    method: &str,
    params: Value,
    session: Option<&str>,
) -> Result<Value> {
    let rx = s.send(method, params, session);
    let v = tokio::time::timeout(limit, rx)
        .await
        .map_err(|_| anyhow!("CDP {method}: no answer within {} ms", limit.as_millis()))?
        .map_err(|_| anyhow!("CDP {method}: connection closed"))?;
    if let Some(e) = v.get("error") {
        return Err(anyhow!("CDP {method}: {e}"));
    }
    Ok(v.get("result").cloned().unwrap_or(Value::Null))
}

/// Commands every attached session gets: Network on, nested Workers auto-attached, and the
/// target released if it waits for us.
fn arm_session(s: &Sender, session: &str) {
    s.fire("Network.enable", json!({}), session);
    s.fire(
        "Target.setAutoAttach",
        json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
        session,
    );
    s.fire("Runtime.runIfWaitingForDebugger", json!({}), session);
}

impl NetTap {
    /// Attaches to `target_id` through the browser endpoint `ws_url`.
    pub async fn start(
        ws_url: &str,
        target_id: &str,
        classifier: ClassifierSpec,
        limit: Duration,
    ) -> Result<NetTap> {
        let (ws, _) = tokio::time::timeout(limit, async_tungstenite::tokio::connect_async(ws_url))
            .await
            .map_err(|_| {
                anyhow!(
                    "CDP tap: no connection to {ws_url} within {} ms",
                    limit.as_millis()
                )
            })?
            .with_context(|| format!("CDP tap: connecting to {ws_url}"))?;
        let (mut sink, mut stream) = ws.split();
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                if sink.send(Message::text(m)).await.is_err() {
                    break;
                }
            }
        });
        let sender = Sender {
            tx,
            next_id: Arc::new(AtomicU64::new(1)),
            pending: Arc::new(Mutex::new(HashMap::new())),
        };
        let log = Arc::new(Mutex::new(CdpLog::default()));
        let (reader_log, reader_sender) = (log.clone(), sender.clone_handle());
        let reader = tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Ok(text) = msg.to_text() else { continue };
                let Ok(v) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                on_message(&v, &reader_sender, &reader_log, &classifier);
            }
        });
        let tap = NetTap {
            log,
            tasks: vec![writer, reader],
        };
        let r = call(
            &sender,
            limit,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
            None,
        )
        .await?;
        let session = r
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("CDP Target.attachToTarget gave no sessionId: {r}"))?
            .to_string();
        call(&sender, limit, "Network.enable", json!({}), Some(&session)).await?;
        call(
            &sender,
            limit,
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
            Some(&session),
        )
        .await?;
        Ok(tap)
    }
}

fn on_message(v: &Value, s: &Sender, log: &Arc<Mutex<CdpLog>>, classifier: &ClassifierSpec) {
    if let Some(id) = v.get("id").and_then(Value::as_u64) {
        if let Some(tx) = s.pending.lock().ok().and_then(|mut p| p.remove(&id)) {
            let _ = tx.send(v.clone());
        }
        return;
    }
    let method = v.get("method").and_then(Value::as_str).unwrap_or("");
    let p = v.get("params").unwrap_or(&Value::Null);
    match method {
        "Target.attachedToTarget" => {
            if let Some(session) = p.get("sessionId").and_then(Value::as_str) {
                arm_session(s, session);
            }
        }
        "Network.webSocketFrameSent" | "Network.webSocketFrameReceived" => {
            let sent = method == "Network.webSocketFrameSent";
            let Some(ts) = p.get("timestamp").and_then(Value::as_f64) else {
                return;
            };
            let rid = p.get("requestId").and_then(Value::as_str).unwrap_or("");
            let r = p.get("response").unwrap_or(&Value::Null);
            let opcode = r.get("opcode").and_then(Value::as_f64).unwrap_or(2.0);
            let data = r.get("payloadData").and_then(Value::as_str).unwrap_or("");
            let (size, class, text) = frame_facts(opcode, data, sent.then_some(classifier));
            if let Ok(mut l) = log.lock() {
                let socket = l.socket(rid);
                let seq = l.next_seq;
                l.next_seq += 1;
                l.frames.push(CdpFrame {
                    seq,
                    mono_s: ts,
                    sent,
                    size,
                    class,
                    text,
                    socket,
                });
            }
        }
        "Network.webSocketHandshakeResponseReceived" => {
            let rid = p.get("requestId").and_then(Value::as_str).unwrap_or("");
            if let (Some(ts), Ok(mut l)) = (p.get("timestamp").and_then(Value::as_f64), log.lock())
            {
                let socket = l.socket(rid);
                l.opens.push((ts, socket));
            }
        }
        "Network.webSocketCreated" => {
            if let (Some(rid), Ok(mut l)) = (p.get("requestId").and_then(Value::as_str), log.lock())
            {
                l.socket(rid);
            }
        }
        _ => {}
    }
}

/// Size, verdict and text-ness of a frame (binary payloads arrive base64).
pub(crate) fn frame_facts(
    opcode: f64,
    payload: &str,
    classifier: Option<&ClassifierSpec>,
) -> (u32, SendClass, bool) {
    let text = opcode == 1.0;
    let bytes: Vec<u8> = if text {
        payload.as_bytes().to_vec()
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(payload.as_bytes())
            .unwrap_or_default()
    };
    let size = bytes.len().min(u32::MAX as usize) as u32;
    let class = match classifier {
        Some(c) => c.classify(&bytes, text.then_some(payload)),
        None => SendClass::Other,
    };
    (size, class, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_frames_are_measured_after_base64_decoding() {
        let c = ClassifierSpec::first_byte(&[1], &[0x10]);
        // [1, 2, 3] in base64.
        assert_eq!(
            frame_facts(2.0, "AQID", Some(&c)),
            (3, SendClass::Input, false)
        );
        assert_eq!(
            frame_facts(2.0, "EAAAAAA=", Some(&c)),
            (5, SendClass::Ack, false)
        );
        assert_eq!(
            frame_facts(1.0, "héllo", Some(&c)),
            (6, SendClass::Other, true)
        );
        assert_eq!(frame_facts(2.0, "AQID", None).1, SendClass::Other);
    }
}
