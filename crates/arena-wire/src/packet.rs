//! Link, IP and TCP header decoding. Every read is bounds-checked: a packet that does not
//! parse is reported as such, never a panic. Checksums are not validated (loopback leaves
//! them unfilled under offload).

use std::net::IpAddr;

use crate::pcap::{
    LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, LINKTYPE_NULL, LINKTYPE_RAW,
};

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;

/// One decoded TCP segment; `payload` borrows the record.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub flags: u8,
    pub payload: &'a [u8],
    /// Payload bytes the IP header announces but the record did not capture (snaplen).
    pub missing: u32,
}

/// Why a record carries no TCP segment we can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    NotIp,
    NotTcp,
    Fragment,
    Malformed,
}

fn be16(d: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*d.get(i)?, *d.get(i + 1)?]))
}

fn be32(d: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *d.get(i)?,
        *d.get(i + 1)?,
        *d.get(i + 2)?,
        *d.get(i + 3)?,
    ]))
}

/// Whether a link type is one [`decode`] understands.
pub fn linktype_supported(linktype: u32) -> bool {
    matches!(
        linktype,
        LINKTYPE_ETHERNET
            | LINKTYPE_RAW
            | 12
            | 14
            | LINKTYPE_LINUX_SLL
            | LINKTYPE_LINUX_SLL2
            | LINKTYPE_NULL
    )
}

/// Decodes one record of the given link type down to its TCP segment.
pub fn decode(linktype: u32, d: &[u8]) -> Result<Segment<'_>, Skip> {
    let ip = match linktype {
        LINKTYPE_ETHERNET => {
            let mut off = 12;
            let mut et = be16(d, off).ok_or(Skip::Malformed)?;
            // 802.1Q / QinQ tags.
            while et == 0x8100 || et == 0x88a8 {
                off += 4;
                et = be16(d, off).ok_or(Skip::Malformed)?;
            }
            match et {
                0x0800 | 0x86dd => d.get(off + 2..).ok_or(Skip::Malformed)?,
                _ => return Err(Skip::NotIp),
            }
        }
        LINKTYPE_RAW | 12 | 14 => d,
        LINKTYPE_LINUX_SLL => match be16(d, 14).ok_or(Skip::Malformed)? {
            0x0800 | 0x86dd => d.get(16..).ok_or(Skip::Malformed)?,
            _ => return Err(Skip::NotIp),
        },
        LINKTYPE_LINUX_SLL2 => match be16(d, 0).ok_or(Skip::Malformed)? {
            0x0800 | 0x86dd => d.get(20..).ok_or(Skip::Malformed)?,
            _ => return Err(Skip::NotIp),
        },
        LINKTYPE_NULL => d.get(4..).ok_or(Skip::Malformed)?,
        _ => return Err(Skip::NotIp),
    };
    let v = ip.first().ok_or(Skip::Malformed)? >> 4;
    let (src, dst, tcp, announced) = match v {
        4 => {
            let ihl = ((ip[0] & 0x0f) as usize) * 4;
            if ihl < 20 || ip.len() < ihl {
                return Err(Skip::Malformed);
            }
            if ip[9] != 6 {
                return Err(Skip::NotTcp);
            }
            let frag = be16(ip, 6).ok_or(Skip::Malformed)?;
            if frag & 0x3fff != 0 {
                return Err(Skip::Fragment);
            }
            let total = be16(ip, 2).ok_or(Skip::Malformed)? as usize;
            // Total length 0 marks a GSO super-segment larger than 64 KiB: trust the record.
            let announced = if total == 0 {
                None
            } else {
                Some(total.saturating_sub(ihl))
            };
            let s = IpAddr::from([ip[12], ip[13], ip[14], ip[15]]);
            let t = IpAddr::from([ip[16], ip[17], ip[18], ip[19]]);
            (s, t, &ip[ihl..], announced)
        }
        6 => {
            if ip.len() < 40 {
                return Err(Skip::Malformed);
            }
            let plen = be16(ip, 4).ok_or(Skip::Malformed)? as usize;
            let mut next = ip[6];
            let mut off = 40;
            let mut announced = if plen == 0 { None } else { Some(plen) };
            // Hop-by-hop options (BIG TCP jumbograms) and other skippable extension headers.
            while matches!(next, 0 | 43 | 60) {
                let n = *ip.get(off).ok_or(Skip::Malformed)?;
                let len = (*ip.get(off + 1).ok_or(Skip::Malformed)? as usize + 1) * 8;
                off += len;
                announced = announced.map(|a| a.saturating_sub(len));
                next = n;
            }
            if next == 44 {
                return Err(Skip::Fragment);
            }
            if next != 6 {
                return Err(Skip::NotTcp);
            }
            let mut s = [0u8; 16];
            let mut t = [0u8; 16];
            s.copy_from_slice(&ip[8..24]);
            t.copy_from_slice(&ip[24..40]);
            let tcp = ip.get(off..).ok_or(Skip::Malformed)?;
            (IpAddr::from(s), IpAddr::from(t), tcp, announced)
        }
        _ => return Err(Skip::NotIp),
    };
    let doff = ((*tcp.get(12).ok_or(Skip::Malformed)? >> 4) as usize) * 4;
    if doff < 20 || tcp.len() < doff {
        return Err(Skip::Malformed);
    }
    let sport = be16(tcp, 0).ok_or(Skip::Malformed)?;
    let dport = be16(tcp, 2).ok_or(Skip::Malformed)?;
    let seq = be32(tcp, 4).ok_or(Skip::Malformed)?;
    let flags = tcp[13];
    let captured = &tcp[doff..];
    let (payload, missing) = match announced {
        // The IP length bounds the payload (Ethernet pads short frames).
        Some(a) => {
            let want = a.saturating_sub(doff);
            if want <= captured.len() {
                (&captured[..want], 0)
            } else {
                (captured, (want - captured.len()) as u32)
            }
        }
        None => (captured, 0),
    };
    Ok(Segment {
        src,
        dst,
        sport,
        dport,
        seq,
        flags,
        payload,
        missing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(payload: &[u8]) -> Vec<u8> {
        let mut t = vec![
            0x9c, 0x40, 0x1f, 0x90, 0, 0, 0, 7, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
        ];
        t.extend_from_slice(payload);
        t
    }

    fn ipv4(total_len: u16, body: &[u8]) -> Vec<u8> {
        let mut p = vec![
            0x45,
            0,
            (total_len >> 8) as u8,
            total_len as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ];
        p.extend_from_slice(&[127, 0, 0, 1, 127, 0, 0, 2]);
        p.extend_from_slice(body);
        p
    }

    #[test]
    fn super_segment_past_64k_and_ethernet_padding() {
        // GSO/BIG TCP: total length 0, the record's length is the truth.
        let big = vec![0xab; 70_000];
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x81, 0x00, 0, 5, 0x08, 0x00]);
        eth.extend_from_slice(&ipv4(0, &tcp(&big)));
        let s = decode(LINKTYPE_ETHERNET, &eth).unwrap();
        assert_eq!(
            (s.payload.len(), s.sport, s.dport, s.seq),
            (70_000, 40_000, 8080, 7)
        );
        // A short frame padded to 60 bytes: the IP length bounds the payload.
        let mut small = vec![0u8; 12];
        small.extend_from_slice(&[0x08, 0x00]);
        small.extend_from_slice(&ipv4(43, &tcp(b"abc")));
        small.resize(60, 0);
        assert_eq!(decode(LINKTYPE_ETHERNET, &small).unwrap().payload, b"abc");
        // Snapped: what the IP header announces but the record lacks is reported.
        let cut = &small[..14 + 20 + 20 + 1];
        assert_eq!(decode(LINKTYPE_ETHERNET, cut).unwrap().missing, 2);
    }

    #[test]
    fn ipv6_cooked_and_garbage() {
        let body = tcp(b"hello");
        let mut v6 = vec![0x60, 0, 0, 0, 0, body.len() as u8, 6, 64];
        v6.extend_from_slice(&[0u8; 15]);
        v6.push(1);
        v6.extend_from_slice(&[0u8; 15]);
        v6.push(1);
        v6.extend_from_slice(&body);
        let mut sll2 = vec![0x86, 0xdd];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&v6);
        let s = decode(LINKTYPE_LINUX_SLL2, &sll2).unwrap();
        assert_eq!(s.payload, b"hello");
        assert!(s.src.is_ipv6());
        let udp = {
            let mut p = ipv4(28, &[0u8; 8]);
            p[9] = 17;
            p
        };
        assert_eq!(decode(LINKTYPE_RAW, &udp).unwrap_err(), Skip::NotTcp);
        for n in 0..60 {
            let _ = decode(LINKTYPE_ETHERNET, &vec![0x45; n]);
            let _ = decode(LINKTYPE_RAW, &vec![0x60; n]);
        }
    }
}
