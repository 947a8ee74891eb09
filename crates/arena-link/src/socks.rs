//! The server side of a SOCKS5 handshake (RFC 1928, no authentication, CONNECT only), and
//! the one rule of where the link may connect: loopback, never anywhere else.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VERSION: u8 = 5;
const NO_AUTH: u8 = 0;
const NO_METHOD: u8 = 0xff;
const CONNECT: u8 = 1;

/// The reply codes this server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Succeeded = 0,
    NotAllowed = 2,
    Refused = 5,
    CommandNotSupported = 7,
    AddressNotSupported = 8,
}

/// Where the client asked to go, as it named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    Name(String),
}

/// A CONNECT request's destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dest {
    pub host: Host,
    pub port: u16,
}

impl std::fmt::Display for Dest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]:{}", self.port),
            Host::Ip(ip) => write!(f, "{ip}:{}", self.port),
            Host::Name(n) => write!(f, "{n}:{}", self.port),
        }
    }
}

/// True for the hosts the link may reach: 127.0.0.0/8, ::1 and `localhost`. A name is
/// never resolved (a lookup could itself leave the machine): only `localhost` is known.
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    match h.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(IpAddr::V6(v6)) => v6 == Ipv6Addr::LOCALHOST,
        Err(_) => h.trim_end_matches('.').eq_ignore_ascii_case("localhost"),
    }
}

impl Dest {
    /// The addresses to try for a loopback destination, or why it is refused.
    pub fn loopback_addrs(&self) -> Result<Vec<SocketAddr>, String> {
        let refuse = || {
            Err(format!(
                "{self} is not loopback (the link connects only to 127.0.0.0/8, ::1 and localhost)"
            ))
        };
        match &self.host {
            Host::Ip(ip) if is_loopback_host(&ip.to_string()) => {
                Ok(vec![SocketAddr::new(*ip, self.port)])
            }
            Host::Name(n) if is_loopback_host(n) => Ok(vec![
                SocketAddr::new(Ipv4Addr::LOCALHOST.into(), self.port),
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), self.port),
            ]),
            _ => refuse(),
        }
    }
}

/// Reads the greeting and the request. `Err` carries the reply to send (if the client got
/// far enough to read one) and what was wrong.
pub async fn accept(s: &mut TcpStream) -> Result<Dest, (Option<Reply>, String)> {
    let io = |e: std::io::Error| (None, format!("SOCKS handshake: {e}"));
    let mut head = [0u8; 2];
    s.read_exact(&mut head).await.map_err(io)?;
    if head[0] != VERSION {
        return Err((None, format!("not SOCKS5 (version byte {})", head[0])));
    }
    let mut methods = vec![0u8; head[1] as usize];
    s.read_exact(&mut methods).await.map_err(io)?;
    if !methods.contains(&NO_AUTH) {
        let _ = s.write_all(&[VERSION, NO_METHOD]).await;
        return Err((None, "the client offers no unauthenticated method".into()));
    }
    s.write_all(&[VERSION, NO_AUTH]).await.map_err(io)?;
    let mut req = [0u8; 4];
    s.read_exact(&mut req).await.map_err(io)?;
    let host = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).await.map_err(io)?;
            Host::Ip(IpAddr::from(a))
        }
        4 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).await.map_err(io)?;
            Host::Ip(IpAddr::from(a))
        }
        3 => {
            let mut n = [0u8; 1];
            s.read_exact(&mut n).await.map_err(io)?;
            let mut name = vec![0u8; n[0] as usize];
            s.read_exact(&mut name).await.map_err(io)?;
            Host::Name(String::from_utf8_lossy(&name).into_owned())
        }
        t => {
            return Err((
                Some(Reply::AddressNotSupported),
                format!("address type {t}"),
            ))
        }
    };
    let mut port = [0u8; 2];
    s.read_exact(&mut port).await.map_err(io)?;
    let dest = Dest {
        host,
        port: u16::from_be_bytes(port),
    };
    if req[1] != CONNECT {
        return Err((
            Some(Reply::CommandNotSupported),
            format!("{dest}: only CONNECT is served (command {})", req[1]),
        ));
    }
    Ok(dest)
}

/// Sends the reply to a request; the bound address is the proxy's own (clients ignore it).
pub async fn reply(s: &mut TcpStream, code: Reply) -> std::io::Result<()> {
    s.write_all(&[VERSION, code as u8, 0, 1, 127, 0, 0, 1, 0, 0])
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_is_reachable() {
        for ok in [
            "127.0.0.1",
            "127.9.8.7",
            "::1",
            "[::1]",
            "localhost",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for no in [
            "10.0.0.1",
            "0.0.0.0",
            "192.168.1.1",
            "::",
            "::ffff:8.8.8.8",
            "example.com",
            "localhost.example.com",
            "",
        ] {
            assert!(!is_loopback_host(no), "{no}");
        }
        let d = |host, port| Dest { host, port };
        let named = d(Host::Name("localhost".into()), 80);
        assert_eq!(named.loopback_addrs().unwrap().len(), 2);
        let far = d(Host::Ip("93.184.216.34".parse().unwrap()), 443);
        let e = far.loopback_addrs().unwrap_err();
        assert!(e.contains("93.184.216.34:443 is not loopback"), "{e}");
        let v6 = d(Host::Ip("::1".parse().unwrap()), 9);
        assert_eq!(v6.to_string(), "[::1]:9");
    }
}
