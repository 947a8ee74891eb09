//! tshark as an oracle for the tests and the benchmark; the summary never calls it.

use std::path::Path;
use std::process::Command;

use anyhow::{anyhow, Result};

/// WebSocket figures of one direction as tshark reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TsharkWs {
    pub data_frames: u64,
    pub data_payload: u64,
    pub control_frames: u64,
    pub control_payload: u64,
}

/// `tshark -Y websocket` listing every frame's direction, opcode and length fields, with
/// the port decoded as HTTP so the upgrade is seen, and `data.len` so tshark inflates.
pub fn websocket_fields(pcap: &Path, port: u16) -> Command {
    let mut c = Command::new("tshark");
    c.args(["-n", "-r"])
        .arg(pcap)
        .args([
            "-d",
            &format!("tcp.port=={port},http"),
            "-Y",
            "websocket",
            "-T",
            "fields",
        ])
        .args(["-e", "tcp.srcport", "-e", "websocket.opcode"])
        .args([
            "-e",
            "websocket.payload_length",
            "-e",
            "websocket.payload_length_ext_16",
        ])
        .args(["-e", "websocket.payload_length_ext_64", "-e", "data.len"])
        .args(["-E", "occurrence=a", "-E", "aggregator=;"]);
    c
}

/// Totals per direction (client -> server, server -> client) from [`websocket_fields`]
/// output. `websocket.payload_length` is only the 7-bit field: 126 and 127 point at the
/// next 16- or 64-bit extension of the same packet, in frame order.
pub fn parse_websocket_fields(out: &str, port: u16) -> Result<[TsharkWs; 2]> {
    let mut r = [TsharkWs::default(); 2];
    let port = port.to_string();
    for (n, line) in out.lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let list = |i: usize| -> Result<Vec<u64>> {
            f.get(i)
                .map(|s| {
                    s.split(';')
                        .filter(|x| !x.is_empty())
                        .map(|x| x.parse::<u64>())
                        .collect()
                })
                .unwrap_or(Ok(Vec::new()))
                .map_err(|e| anyhow!("tshark output line {}: {e}", n + 1))
        };
        let d = usize::from(f.first() == Some(&port.as_str()));
        let (ops, lens, e16, e64) = (list(1)?, list(2)?, list(3)?, list(4)?);
        let (mut i16, mut i64) = (e16.iter(), e64.iter());
        for (op, len) in ops.iter().zip(lens) {
            let real = match len {
                126 => *i16
                    .next()
                    .ok_or_else(|| anyhow!("line {}: missing ext_16", n + 1))?,
                127 => *i64
                    .next()
                    .ok_or_else(|| anyhow!("line {}: missing ext_64", n + 1))?,
                n => n,
            };
            if *op >= 8 {
                r[d].control_frames += 1;
                r[d].control_payload += real;
            } else {
                r[d].data_frames += 1;
                r[d].data_payload += real;
            }
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_lengths_are_taken_in_order() {
        let out = "8080\t2;2;9;2\t126;5;0;127\t300\t70000\t\n40000\t2\t3\t\t\t\n";
        let r = parse_websocket_fields(out, 8080).unwrap();
        assert_eq!(
            r[1],
            TsharkWs {
                data_frames: 3,
                data_payload: 70_305,
                control_frames: 1,
                control_payload: 0
            }
        );
        assert_eq!(r[0].data_payload, 3);
        assert!(parse_websocket_fields("1\t2\t126\t\t\t\n", 1).is_err());
    }
}
