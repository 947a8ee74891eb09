//! Any byte string as one direction of an upgraded WebSocket stream (permessage-deflate
//! negotiated), delivered in pieces whose sizes come from the input itself.
#![no_main]

use arena_wire::ws::{ConnCtx, Deflate, DirParser, Events, Role};
use libfuzzer_sys::fuzz_target;

struct Count(u64);

impl Events for Count {
    fn frame(&mut self, _: u64, _: u8, p: u64, h: u64) {
        self.0 = self.0.wrapping_add(p + h);
    }
    fn message(&mut self, _: u64, w: u64, a: Option<u64>, _: bool) {
        self.0 = self.0.wrapping_add(w + a.unwrap_or(0));
    }
    fn unframed(&mut self, n: u64) {
        self.0 = self.0.wrapping_add(n);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    let role = if ctl & 1 == 0 { Role::Client } else { Role::Server };
    let mut ctx = ConnCtx {
        deflate: Some(Deflate {
            client_no_context_takeover: ctl & 2 != 0,
            server_no_context_takeover: ctl & 4 != 0,
        }),
        rejected: false,
        upgraded: true,
    };
    let mut p = DirParser::new(role, true);
    p.framing = arena_wire::ws::Framing::Frames;
    let mut ev = Count(0);
    let piece = 1 + (ctl as usize >> 3);
    for (i, c) in rest.chunks(piece).enumerate() {
        p.feed(c, i as u64, &mut ctx, &mut ev);
    }
});
