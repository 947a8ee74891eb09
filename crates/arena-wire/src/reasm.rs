//! One direction of a TCP stream put back in order. Sequence numbers are made relative
//! to the first one seen and unwrapped around the next expected byte, so a stream longer
//! than 4 GiB or one starting near the top of the sequence space reassembles the same.

use std::collections::BTreeMap;

/// Out-of-order bytes held while waiting for a hole to fill. Past this the hole is
/// declared lost (a capture drop), so memory stays bounded whatever the input.
pub const MAX_PENDING: usize = 32 << 20;

/// What happened to a segment, for the counters.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SegmentOutcome {
    /// Bytes seen before (retransmits, duplicate copies).
    pub retransmitted: u64,
    /// The segment arrived ahead of a hole.
    pub out_of_order: bool,
}

/// Receives in-order bytes and holes from a [`Reassembler`].
pub trait Sink {
    fn data(&mut self, bytes: &[u8]);
    /// `n` bytes of the stream were never captured.
    fn gap(&mut self, n: u64);
}

#[derive(Debug, Default)]
pub struct Reassembler {
    base: Option<u32>,
    /// Relative offset of the next byte to deliver.
    next: u64,
    pending: BTreeMap<u64, Vec<u8>>,
    pending_bytes: usize,
    /// The stream's start was seen (SYN), so offset 1 is its first byte.
    pub saw_syn: bool,
}

impl Reassembler {
    pub fn new() -> Self {
        Reassembler::default()
    }

    /// Whether no byte has been placed yet.
    pub fn is_fresh(&self) -> bool {
        self.base.is_none()
    }

    fn unwrap(&self, seq: u32) -> Option<u64> {
        let base = self.base?;
        let rel = seq.wrapping_sub(base);
        let diff = rel.wrapping_sub(self.next as u32) as i32 as i64;
        let off = self.next as i64 + diff;
        Some(off.max(0) as u64)
    }

    /// Feeds one segment. `syn` marks a SYN, whose sequence number is the stream's origin.
    pub fn segment<S: Sink>(
        &mut self,
        seq: u32,
        syn: bool,
        payload: &[u8],
        sink: &mut S,
    ) -> SegmentOutcome {
        let mut out = SegmentOutcome::default();
        if syn {
            if self.base.is_none() {
                self.base = Some(seq);
                self.next = 1;
                self.saw_syn = true;
            }
            if payload.is_empty() {
                return out;
            }
            return self.place(seq.wrapping_add(1), payload, sink);
        }
        if payload.is_empty() {
            return out;
        }
        if self.base.is_none() {
            // Mid-stream start: this segment's first byte becomes offset 1.
            self.base = Some(seq.wrapping_sub(1));
            self.next = 1;
        }
        out = self.place(seq, payload, sink);
        out
    }

    fn place<S: Sink>(&mut self, seq: u32, payload: &[u8], sink: &mut S) -> SegmentOutcome {
        let mut out = SegmentOutcome::default();
        let Some(off) = self.unwrap(seq) else {
            return out;
        };
        let end = off + payload.len() as u64;
        if end <= self.next {
            out.retransmitted = payload.len() as u64;
            return out;
        }
        if off <= self.next {
            let skip = (self.next - off) as usize;
            out.retransmitted = skip as u64;
            sink.data(&payload[skip..]);
            self.next = end;
            out.retransmitted += self.drain(sink);
            return out;
        }
        out.out_of_order = true;
        match self.pending.get(&off) {
            Some(have) if have.len() >= payload.len() => {
                out.retransmitted = payload.len() as u64;
            }
            Some(have) => {
                self.pending_bytes = self.pending_bytes - have.len() + payload.len();
                self.pending.insert(off, payload.to_vec());
            }
            None => {
                self.pending_bytes += payload.len();
                self.pending.insert(off, payload.to_vec());
            }
        }
        while self.pending_bytes > MAX_PENDING {
            if !self.skip_hole(sink) {
                break;
            }
            out.retransmitted += self.drain(sink);
        }
        out
    }

    /// Delivers pending segments that now touch the stream; returns overlapping bytes.
    fn drain<S: Sink>(&mut self, sink: &mut S) -> u64 {
        let mut dup = 0u64;
        while let Some((&off, _)) = self.pending.first_key_value() {
            if off > self.next {
                break;
            }
            let Some((off, seg)) = self.pending.pop_first() else {
                break;
            };
            self.pending_bytes -= seg.len();
            let end = off + seg.len() as u64;
            if end <= self.next {
                dup += seg.len() as u64;
                continue;
            }
            let skip = (self.next - off) as usize;
            dup += skip as u64;
            sink.data(&seg[skip..]);
            self.next = end;
        }
        dup
    }

    /// Declares the first hole lost and moves past it. False when nothing is pending.
    fn skip_hole<S: Sink>(&mut self, sink: &mut S) -> bool {
        let Some((&off, _)) = self.pending.first_key_value() else {
            return false;
        };
        if off > self.next {
            sink.gap(off - self.next);
            self.next = off;
        }
        true
    }

    /// End of capture: every remaining hole is lost; what follows is still delivered.
    pub fn finish<S: Sink>(&mut self, sink: &mut S) -> u64 {
        let mut dup = 0;
        while self.skip_hole(sink) {
            dup += self.drain(sink);
        }
        dup
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        bytes: Vec<u8>,
        gaps: Vec<u64>,
    }
    impl Sink for Collect {
        fn data(&mut self, b: &[u8]) {
            self.bytes.extend_from_slice(b);
        }
        fn gap(&mut self, n: u64) {
            self.gaps.push(n);
        }
    }

    #[test]
    fn reorders_trims_overlaps_and_drops_retransmits_across_wrap() {
        let isn = u32::MAX - 5;
        let data: Vec<u8> = (0..100u8).collect();
        let mut r = Reassembler::new();
        let mut c = Collect::default();
        r.segment(isn, true, &[], &mut c);
        let s = |o: usize| isn.wrapping_add(1).wrapping_add(o as u32);
        // Out of order, overlapping, duplicated, and crossing the 2^32 wrap.
        let o1 = r.segment(s(40), false, &data[40..70], &mut c);
        assert!(o1.out_of_order);
        r.segment(s(0), false, &data[0..20], &mut c);
        let o2 = r.segment(s(10), false, &data[10..45], &mut c);
        assert_eq!(o2.retransmitted, 10 + 5);
        let o3 = r.segment(s(0), false, &data[0..20], &mut c);
        assert_eq!(o3.retransmitted, 20);
        r.segment(s(70), false, &data[70..100], &mut c);
        r.finish(&mut c);
        assert_eq!(c.bytes, data);
        assert!(c.gaps.is_empty());
    }

    #[test]
    fn a_hole_that_never_fills_is_a_gap() {
        let mut r = Reassembler::new();
        let mut c = Collect::default();
        r.segment(1000, false, b"abc", &mut c);
        r.segment(1010, false, b"xyz", &mut c);
        r.finish(&mut c);
        assert_eq!(c.bytes, b"abcxyz");
        assert_eq!(c.gaps, vec![7]);
    }
}
