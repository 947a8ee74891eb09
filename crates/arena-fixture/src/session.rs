//! One client's session, without I/O: board state, the dirty region, the client constant
//! cache mirror, the in-flight window and frame building. The connection driver
//! (`crate::server`) feeds it inputs, acks and ticks on the session's own thread; the
//! benchmark drives it the same way.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::art::{content_hash, Board, Look, BOARD_H, BOARD_W, TILE_PX};
use crate::knobs::{AckMode, Knobs, Phase};
use crate::los;
use crate::pngenc::encode_rgba;
use crate::pointer::Pointer;
use crate::proto::{FrameWriter, Input, InputKind};

/// What caused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrameKind {
    /// The first frame of a session: the whole board.
    Board,
    /// Carries the changes of at least one input.
    Reply,
    /// Only the blinking cursor changed.
    Blink,
}

/// One built frame and what building it cost.
#[derive(Debug, Clone)]
pub struct BuiltFrame {
    pub id: u32,
    pub kind: FrameKind,
    pub bytes: Vec<u8>,
    /// When assembly started (the frame's `frameStart`).
    pub started: Instant,
    pub constants_sent: u32,
    pub cache_hits: u32,
    pub encodes: u32,
    pub render_ms: f64,
    pub encode_ms: f64,
    /// Inputs whose changes this frame carries.
    pub inputs: u32,
    /// Input kind of the last input folded in, if any.
    pub last_input: Option<InputKind>,
    /// It carries a tail reply (`tail_every`): it waits `tail_ms` more before it is sent.
    pub tail: bool,
}

/// LRU mirror of the client's constant cache, keyed by image content.
#[derive(Debug)]
struct ConstCache {
    cap: usize,
    map: HashMap<u64, (u32, u64)>,
    order: BTreeMap<u64, u64>,
    clock: u64,
    next_id: u32,
}

impl ConstCache {
    fn new(cap: usize) -> ConstCache {
        ConstCache {
            cap: cap.max(1),
            map: HashMap::new(),
            order: BTreeMap::new(),
            clock: 0,
            next_id: 1,
        }
    }
    fn lookup(&mut self, hash: u64) -> Option<u32> {
        let (id, stamp) = self.map.get_mut(&hash)?;
        self.order.remove(stamp);
        self.clock += 1;
        *stamp = self.clock;
        self.order.insert(self.clock, hash);
        Some(*id)
    }
    /// Inserts `hash` under a new id; returns it and the id evicted to make room, if any.
    fn insert(&mut self, hash: u64) -> (u32, Option<u32>) {
        let mut evicted = None;
        if self.map.len() >= self.cap {
            if let Some((_, old)) = self.order.pop_first() {
                evicted = self.map.remove(&old).map(|(id, _)| id);
            }
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        self.clock += 1;
        self.map.insert(hash, (id, self.clock));
        self.order.insert(self.clock, hash);
        (id, evicted)
    }
    fn len(&self) -> usize {
        self.map.len()
    }
}

/// How long a frame may stay unacked before the window is reset (as the streamed toolkit
/// resets its cache after 5 s without an ack): a client that stops acking cannot wedge it.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(5);

const TILES: usize = BOARD_W as usize * BOARD_H as usize;
const CHAT_TILES: u16 = 4;

#[derive(Debug)]
pub struct Session {
    knobs: Knobs,
    board: Arc<Board>,
    phase: Phase,
    looks: Vec<Look>,
    dirty: Vec<bool>,
    dirty_count: usize,
    hud: String,
    hud_dirty: bool,
    cursor: (u16, u16),
    hover: Option<(u16, u16)>,
    /// The pointer's last position, px, and the drag trail: see `crate::pointer`.
    pointer: Pointer,
    arc: Vec<(u16, u16)>,
    marker: Option<(u16, u16)>,
    caret: bool,
    strip: crate::strip::TextStrip,
    cache: ConstCache,
    next_frame_id: u32,
    board_sent: bool,
    inputs_seen: u64,
    /// Inputs that got a reply: what `tail_every` counts.
    replies: u64,
    /// An input folded into the next frame was a tail reply.
    pending_tail: bool,
    pending_inputs: u32,
    last_input: Option<InputKind>,
    outstanding: VecDeque<(u32, Instant)>,
    /// With `two_step_ms`: when the last press's second step is due, and its tile.
    second_step: Option<(Instant, (u16, u16))>,
    /// Result of the last line-of-sight sweep (kept so the work cannot be optimised away).
    pub last_sweep: u32,
}

/// What an input did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputOutcome {
    /// Changes are pending for the next frame.
    Queued,
    /// `drop_every` swallowed it: no reply will come.
    Dropped,
    /// The input kind has no reply (keyup).
    NoReply,
}

fn tile_of(x: u16, y: u16) -> (u16, u16) {
    (
        (x / TILE_PX).min(BOARD_W - 1),
        (y / TILE_PX).min(BOARD_H - 1),
    )
}

impl Session {
    pub fn new(knobs: Knobs, board: Arc<Board>) -> Session {
        let cap = knobs.const_cache as usize;
        let phase = knobs.phase;
        let mut s = Session {
            knobs,
            board,
            phase,
            looks: vec![Look::Base; TILES],
            dirty: vec![false; TILES],
            dirty_count: 0,
            hud: String::new(),
            hud_dirty: true,
            cursor: (BOARD_W / 2, BOARD_H / 2),
            hover: None,
            pointer: Pointer::default(),
            arc: Vec::new(),
            marker: None,
            caret: false,
            strip: crate::strip::TextStrip::default(),
            cache: ConstCache::new(cap),
            next_frame_id: 1,
            board_sent: false,
            inputs_seen: 0,
            replies: 0,
            pending_tail: false,
            pending_inputs: 0,
            last_input: None,
            outstanding: VecDeque::new(),
            second_step: None,
            last_sweep: 0,
        };
        for i in 0..TILES {
            s.mark(i);
        }
        s.hud = s.phase_text();
        s
    }

    pub fn knobs(&self) -> &Knobs {
        &self.knobs
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    fn phase_text(&self) -> String {
        match self.phase {
            Phase::Firing => "phase: firing - click a tile to fire".to_string(),
            Phase::Deploy => "phase: deploy - click a tile to place".to_string(),
        }
    }

    fn mark(&mut self, i: usize) {
        if !self.dirty[i] {
            self.dirty[i] = true;
            self.dirty_count += 1;
        }
    }

    fn mark_tile(&mut self, t: (u16, u16)) {
        self.mark(Board::index(t.0, t.1));
    }

    /// Marks the rectangle around `tiles`, one tile of margin: the repaint clip of an
    /// overlay that spills over its neighbours, as a toolkit repaints a region.
    fn mark_region(&mut self, tiles: &[(u16, u16)]) {
        let Some(&(fx, fy)) = tiles.first() else {
            return;
        };
        let (mut x0, mut y0, mut x1, mut y1) = (fx, fy, fx, fy);
        for &(x, y) in tiles {
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        for y in y0.saturating_sub(1)..=(y1 + 1).min(BOARD_H - 1) {
            for x in x0.saturating_sub(1)..=(x1 + 1).min(BOARD_W - 1) {
                self.mark(Board::index(x, y));
            }
        }
    }

    fn set_look(&mut self, t: (u16, u16), look: Look) {
        let i = Board::index(t.0, t.1);
        if self.looks[i] != look {
            self.looks[i] = look;
            self.mark(i);
        }
    }

    /// Whether a frame has anything to carry.
    pub fn is_dirty(&self) -> bool {
        self.dirty_count > 0 || self.hud_dirty || self.strip.is_dirty()
    }

    /// Whether the in-flight window allows another frame.
    pub fn can_send(&self) -> bool {
        self.outstanding.len() < self.knobs.in_flight as usize
    }

    /// Frames sent and not yet acked.
    pub fn unacked(&self) -> usize {
        self.outstanding.len()
    }

    /// Acks `frame_id`; false when no such frame is outstanding.
    pub fn on_ack(&mut self, frame_id: u32) -> bool {
        if let Some(p) = self.outstanding.iter().position(|&(id, _)| id == frame_id) {
            // An ack covers every earlier frame too: frames are applied in order.
            self.outstanding.drain(..=p);
            true
        } else {
            false
        }
    }

    /// Deadline of the oldest unacked frame.
    pub fn ack_deadline(&self) -> Option<Instant> {
        self.outstanding.front().map(|&(_, t)| t + ACK_TIMEOUT)
    }

    /// Forgets every unacked frame (the ack timeout fired).
    pub fn reset_window(&mut self) {
        self.outstanding.clear();
    }

    /// Entries in the client cache mirror.
    pub fn cached_constants(&self) -> usize {
        self.cache.len()
    }

    /// Applies one input. Firing clicks run the line-of-sight sweep here, before the
    /// repaint, on the session's own thread.
    pub fn on_input(&mut self, i: Input) -> InputOutcome {
        if i.kind == InputKind::KeyUp
            || (i.kind == InputKind::MouseUp && self.knobs.two_step_ms > 0)
        {
            return InputOutcome::NoReply;
        }
        self.inputs_seen += 1;
        if self.knobs.drop_every > 0 && self.inputs_seen % self.knobs.drop_every as u64 == 0 {
            return InputOutcome::Dropped;
        }
        // Counted past the drop, so the Kth reply is a tail whatever `drop_every` swallowed.
        self.replies += 1;
        self.pending_tail |= self.knobs.is_tail_reply(self.replies);
        let t = tile_of(i.x, i.y);
        match i.kind {
            InputKind::MouseDown => {
                self.press(t);
                if self.knobs.two_step_ms > 0 {
                    let due = Instant::now() + Duration::from_millis(self.knobs.two_step_ms.into());
                    self.second_step = Some((due, t));
                }
            }
            InputKind::MouseUp => self.release(t),
            InputKind::MouseMove => {
                if self.hover != Some(t) {
                    if let Some(old) = self.hover {
                        self.mark_tile(old);
                    }
                    self.hover = Some(t);
                    self.mark_tile(t);
                }
                for tile in self.pointer.on_move(i.x, i.y, i.code) {
                    self.mark_tile(tile);
                }
                self.hud = format!("hover ({}, {})", t.0, t.1);
            }
            InputKind::KeyDown => match self.type_key(i.code) {
                37..=40 => {
                    let (dx, dy): (i32, i32) = match i.code {
                        37 => (-1, 0),
                        38 => (0, -1),
                        39 => (1, 0),
                        _ => (0, 1),
                    };
                    let nx = (self.cursor.0 as i32 + dx).clamp(0, BOARD_W as i32 - 1) as u16;
                    let ny = (self.cursor.1 as i32 + dy).clamp(0, BOARD_H as i32 - 1) as u16;
                    self.move_cursor((nx, ny));
                    self.hud = format!("cursor ({nx}, {ny})");
                }
                32 | 70 => self.press(self.cursor),
                80 => {
                    self.phase = match self.phase {
                        Phase::Firing => Phase::Deploy,
                        Phase::Deploy => Phase::Firing,
                    };
                    self.clear_arc();
                    self.move_cursor(self.cursor);
                    self.hud = self.phase_text();
                }
                code => self.hud = format!("key {code}"),
            },
            InputKind::KeyUp => {}
        }
        self.hud_dirty = true;
        self.pending_inputs += 1;
        self.last_input = Some(i.kind);
        InputOutcome::Queued
    }

    /// Types the key's glyph into the text strip (game keys also act on the board).
    fn type_key(&mut self, code: u16) -> u16 {
        self.strip.key(code);
        code
    }

    fn move_cursor(&mut self, t: (u16, u16)) {
        let old = self.cursor;
        self.cursor = t;
        self.mark_tile(old);
        self.mark_tile(t);
    }

    fn clear_arc(&mut self) {
        let old = std::mem::take(&mut self.arc);
        self.mark_region(&old);
        for t in old {
            self.set_look(t, Look::Base);
        }
    }

    fn press(&mut self, t: (u16, u16)) {
        match self.phase {
            Phase::Deploy => {
                self.move_cursor(t);
                self.hud = format!("selected ({}, {})", t.0, t.1);
            }
            Phase::Firing => {
                let clear = los::sweep(&self.board, t.0, t.1, self.knobs.los_work);
                self.last_sweep = std::hint::black_box(clear);
                self.clear_arc();
                let arc = arc_tiles(t);
                let stroke = stroke_of(t);
                for &a in &arc {
                    let v = los::tile_visibility(&self.board, a.0, a.1);
                    let tint = if v > 0.79 {
                        0
                    } else if v > 0.19 {
                        1
                    } else {
                        2
                    };
                    self.set_look(a, Look::Arc { tint, stroke });
                }
                self.mark_region(&arc);
                self.arc = arc;
                self.hud = format!(
                    "fire at ({}, {}): {clear} of {} rays clear",
                    t.0, t.1, self.knobs.los_work
                );
            }
        }
    }

    fn release(&mut self, t: (u16, u16)) {
        match self.phase {
            Phase::Deploy => {
                self.mark_tile(self.cursor);
                self.hud = format!("placed at ({}, {})", self.cursor.0, self.cursor.1);
            }
            Phase::Firing => {
                if let Some(old) = self.marker.take() {
                    if self.looks[Board::index(old.0, old.1)] == Look::Marker {
                        self.set_look(old, Look::Base);
                    }
                }
                self.set_look(t, Look::Marker);
                self.marker = Some(t);
                self.hud = format!("shot confirmed at ({}, {})", t.0, t.1);
            }
        }
    }

    /// When the last press's second step is due (`two_step_ms`), if one is.
    pub fn second_step_due(&self) -> Option<Instant> {
        self.second_step.map(|(at, _)| at)
    }

    /// The press's second step, once due: the pressed tile takes the fire marker, and the
    /// frame that carries it counts as the press's reply (delayed as replies are).
    pub fn on_second_step(&mut self, now: Instant) {
        let Some((at, t)) = self.second_step else {
            return;
        };
        if now < at {
            return;
        }
        self.second_step = None;
        self.release(t);
        self.hud = format!("second step at ({}, {})", t.0, t.1);
        self.hud_dirty = true;
        self.pending_inputs += 1;
    }

    /// Toggles the blinking caret in the chat strip (bottom-left tiles) for nothing.
    pub fn on_blink(&mut self) {
        self.caret = !self.caret;
        for x in 0..CHAT_TILES {
            let t = (x, BOARD_H - 1);
            let look = Look::Chat {
                caret: self.caret && x == 1,
            };
            self.set_look(t, look);
            self.mark_tile(t);
        }
        self.strip.set_caret(self.caret);
    }

    /// Builds the next frame from everything dirty, and counts it in flight. `None` when
    /// nothing is dirty.
    pub fn build_frame(&mut self) -> Option<BuiltFrame> {
        self.build_frame_unless(&|| false)
    }

    /// As [`Session::build_frame`], but gives up between two tiles once `abandon()` is
    /// true, and returns `None`: a first frame is 384 renders and encodes (hundreds of ms
    /// of CPU unoptimised, times the sessions sharing the cores) for a client that may have
    /// gone meanwhile. An abandoned build leaves the session half-updated (its cache mirror
    /// counts constants never sent): it is for a session that is ending.
    pub fn build_frame_unless(&mut self, abandon: &dyn Fn() -> bool) -> Option<BuiltFrame> {
        if !self.is_dirty() {
            return None;
        }
        let started = Instant::now();
        let id = self.next_frame_id;
        self.next_frame_id = self.next_frame_id.wrapping_add(1).max(1);
        let kind = if !self.board_sent {
            FrameKind::Board
        } else if self.pending_inputs > 0 {
            FrameKind::Reply
        } else {
            FrameKind::Blink
        };
        let mut w = FrameWriter::new(id);
        if !self.board_sent {
            w.hello(
                BOARD_W * TILE_PX,
                BOARD_H * TILE_PX,
                TILE_PX,
                self.knobs.ack == AckMode::Paint,
                self.phase == Phase::Firing,
            );
        }
        let mut tally = Tally::default();
        let mut draws: Vec<(u32, u16, u16)> = Vec::with_capacity(self.dirty_count);
        for i in 0..TILES {
            if !self.dirty[i] {
                continue;
            }
            if abandon() {
                return None;
            }
            self.dirty[i] = false;
            let (x, y) = ((i % BOARD_W as usize) as u16, (i / BOARD_W as usize) as u16);
            let cid = self.tile_constant(x, y, &mut w, &mut tally);
            draws.push((cid, x * TILE_PX, y * TILE_PX));
        }
        let mut redrawn = vec![false; TILES];
        for &(_, x, y) in &draws {
            redrawn[Board::index(x / TILE_PX, y / TILE_PX)] = true;
        }
        for (cid, x, y) in draws {
            w.draw(cid, x, y);
            let t = (x / TILE_PX, y / TILE_PX);
            if self.phase == Phase::Deploy && t == self.cursor {
                outline(&mut w, t, 3, [255, 230, 40, 255]);
            }
            if self.hover == Some(t) {
                outline(&mut w, t, 1, [255, 255, 255, 160]);
            }
        }
        self.pointer.draw(&mut w, &redrawn);
        self.dirty_count = 0;
        if self.hud_dirty {
            w.hud(&self.hud);
            self.hud_dirty = false;
        }
        self.strip.write(&mut w);
        Some(self.finish_frame(w, id, kind, started, tally))
    }

    /// Renders tile (x, y), finds its image in the cache mirror and, on a miss, defines it
    /// in `w` (forgetting what the mirror evicted); returns its constant id.
    fn tile_constant(&mut self, x: u16, y: u16, w: &mut FrameWriter, t: &mut Tally) -> u32 {
        let tp = TILE_PX as u32;
        let px = self.board.render(x, y, self.looks[Board::index(x, y)]);
        let hash = content_hash(&px);
        // Stock behaviour: the constant is encoded as it is created, whether or not
        // the client already holds it; the encode is thrown away on a hit.
        let mut png = None;
        if !self.knobs.lazy_png {
            let t0 = Instant::now();
            png = encode_rgba(&px, tp, tp, self.knobs.png_level).ok();
            t.encode += t0.elapsed();
            t.encodes += 1;
        }
        if let Some(cid) = self.cache.lookup(hash) {
            t.hits += 1;
            return cid;
        }
        let bytes = match png.take() {
            Some(b) => b,
            None => {
                let t0 = Instant::now();
                let b = encode_rgba(&px, tp, tp, self.knobs.png_level).unwrap_or_default();
                t.encode += t0.elapsed();
                t.encodes += 1;
                b
            }
        };
        let (cid, evicted) = self.cache.insert(hash);
        if let Some(old) = evicted {
            w.forget(old);
        }
        w.define(cid, &bytes);
        t.sent += 1;
        cid
    }

    fn finish_frame(
        &mut self,
        w: FrameWriter,
        id: u32,
        kind: FrameKind,
        started: Instant,
        t: Tally,
    ) -> BuiltFrame {
        let bytes = w.finish();
        let total = started.elapsed();
        let frame = BuiltFrame {
            id,
            kind,
            bytes,
            started,
            constants_sent: t.sent,
            cache_hits: t.hits,
            encodes: t.encodes,
            render_ms: (total.saturating_sub(t.encode)).as_secs_f64() * 1e3,
            encode_ms: t.encode.as_secs_f64() * 1e3,
            inputs: self.pending_inputs,
            last_input: self.last_input.take(),
            tail: std::mem::take(&mut self.pending_tail),
        };
        self.pending_inputs = 0;
        self.board_sent = true;
        self.outstanding.push_back((id, Instant::now()));
        frame
    }
}

/// What building one frame's constants cost and did.
#[derive(Debug, Default)]
struct Tally {
    encode: Duration,
    sent: u32,
    hits: u32,
    encodes: u32,
}

fn outline(w: &mut FrameWriter, t: (u16, u16), th: u16, rgba: [u8; 4]) {
    let (x, y, s) = (t.0 * TILE_PX, t.1 * TILE_PX, TILE_PX);
    w.fill(x, y, s, th, rgba);
    w.fill(x, y + s - th, s, th, rgba);
    w.fill(x, y, th, s, rgba);
    w.fill(x + s - th, y, th, s, rgba);
}

/// Tiles of the arc overlay for a shot at `t`: three tiles across the line of fire.
pub fn arc_tiles(t: (u16, u16)) -> Vec<(u16, u16)> {
    let (sx, sy) = (los::SHOOTER.0 as f32, los::SHOOTER.1 as f32);
    let (dx, dy) = (t.0 as f32 - sx, t.1 as f32 - sy);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 0.5 {
        return vec![t];
    }
    let (px, py) = (-dy / len, dx / len);
    let mut out: Vec<(u16, u16)> = Vec::with_capacity(5);
    for k in -1i32..=1 {
        let x = (t.0 as f32 + px * k as f32).round();
        let y = (t.1 as f32 + py * k as f32).round();
        if x < 0.0 || y < 0.0 || x >= BOARD_W as f32 || y >= BOARD_H as f32 {
            continue;
        }
        let p = (x as u16, y as u16);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn stroke_of(t: (u16, u16)) -> u8 {
    let dx = t.0 as f32 - los::SHOOTER.0 as f32;
    let dy = t.1 as f32 - los::SHOOTER.1 as f32;
    // The stroke runs across the line of fire.
    let a = dy.atan2(dx).to_degrees().rem_euclid(180.0);
    match a {
        a if !(22.5..157.5).contains(&a) => 1,
        a if a < 67.5 => 3,
        a if a < 112.5 => 0,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{decode_frame, Op};

    fn click(kind: InputKind, tx: u16, ty: u16) -> Input {
        Input {
            kind,
            x: tx * TILE_PX + 10,
            y: ty * TILE_PX + 10,
            code: 0,
            t_ms: 1.0,
        }
    }

    fn session(pairs: &[(&str, &str)]) -> Session {
        let mut k = Knobs {
            los_work: 50,
            ..Knobs::default()
        };
        for (n, v) in pairs {
            k.set(n, v).unwrap();
        }
        let board = Arc::new(Board::generate(k.seed, k.shadows));
        Session::new(k, board)
    }

    #[test]
    fn first_frame_is_the_whole_board() {
        let mut s = session(&[]);
        let f = s.build_frame().unwrap();
        assert_eq!(f.kind, FrameKind::Board);
        assert_eq!(f.constants_sent as usize, TILES);
        let d = decode_frame(&f.bytes).unwrap();
        assert!(matches!(d.ops[0], Op::Hello { w: 960, h: 640, .. }));
        let draws = d
            .ops
            .iter()
            .filter(|o| matches!(o, Op::Draw { .. }))
            .count();
        assert_eq!(draws, TILES);
        assert!(f.bytes.len() >= 500_000, "first paint {} B", f.bytes.len());
        assert!(!s.is_dirty());
        assert!(!s.can_send(), "in_flight=1 must block until the ack");
        assert!(s.on_ack(f.id));
        assert!(s.can_send());
        assert!(
            !s.on_ack(f.id),
            "an ack of a frame not outstanding is not counted"
        );
    }

    #[test]
    fn an_abandoned_build_stops_between_tiles() {
        let mut s = session(&[]);
        let calls = std::cell::Cell::new(0u32);
        let abandon = || {
            calls.set(calls.get() + 1);
            calls.get() > 10
        };
        assert!(s.build_frame_unless(&abandon).is_none());
        assert_eq!(calls.get(), 11, "asked once a tile, stopped at the 11th");
        assert!(s.cached_constants() <= 10, "{}", s.cached_constants());
        // Never abandoned, it is build_frame, to the byte. (The size itself depends on which
        // deflate backend the workspace's features select, so it is not pinned here.)
        let f = session(&[]).build_frame_unless(&|| false).unwrap();
        assert!(
            f.bytes.len() > 500_000,
            "the whole first board: {}",
            f.bytes.len()
        );
        assert_eq!(f.bytes, session(&[]).build_frame().unwrap().bytes);
    }

    #[test]
    fn eager_and_lazy_send_identical_bytes_with_fewer_encodes() {
        let mut enc = [0u32; 2];
        // The same clicks on both: every frame must match byte for byte.
        let mut a = session(&[]);
        let mut b = session(&[("lazy_png", "true")]);
        for step in 0..30u16 {
            let t = (5 + step % 15, 2 + (step * 7) % 12);
            for s in [&mut a, &mut b] {
                s.on_input(click(InputKind::MouseDown, t.0, t.1));
            }
            let (fa, fb) = (a.build_frame().unwrap(), b.build_frame().unwrap());
            assert_eq!(fa.bytes, fb.bytes, "frame {step}");
            assert!(
                fa.encodes > fb.encodes || fa.kind == FrameKind::Board,
                "frame {step}: {} vs {}",
                fa.encodes,
                fb.encodes
            );
            enc[0] += fa.encodes;
            enc[1] += fb.encodes;
            a.on_ack(fa.id);
            b.on_ack(fb.id);
        }
        assert!(enc[0] > enc[1] * 2, "eager {} lazy {}", enc[0], enc[1]);
    }

    /// The bytes of the same 30 clicks on a `played` board, with `arm` on top.
    fn played_bytes(arm: &[(&str, &str)]) -> Vec<Vec<u8>> {
        let mut pairs = crate::Scenario::Played.knobs();
        pairs.push(("los_work".into(), "50".into()));
        pairs.extend(arm.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let k = Knobs::from_pairs(&pairs).unwrap();
        let mut s = Session::new(k.clone(), Arc::new(Board::generate(k.seed, k.shadows)));
        let mut frames = Vec::new();
        for step in 0..30u16 {
            s.on_input(click(
                InputKind::MouseDown,
                3 + step % 17,
                1 + (step * 5) % 14,
            ));
            let f = s.build_frame().unwrap();
            s.on_ack(f.id);
            frames.push(f.bytes);
        }
        frames
    }

    #[test]
    fn on_a_played_board_lazy_png_sends_the_same_bytes_and_png6_fewer() {
        let stock = played_bytes(&[]);
        assert_eq!(played_bytes(&[("lazy_png", "true")]), stock);
        let total = |f: &[Vec<u8>]| f.iter().map(Vec::len).sum::<usize>();
        let png6 = played_bytes(&[("png_level", "6")]);
        assert!(
            total(&png6) < total(&stock),
            "png6 {} B, stock {} B",
            total(&png6),
            total(&stock)
        );
    }

    #[test]
    fn firing_click_repaints_an_arc_and_deploy_moves_a_cursor() {
        let mut s = session(&[]);
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        s.on_input(click(InputKind::MouseDown, 18, 4));
        let f = s.build_frame().unwrap();
        assert_eq!(f.kind, FrameKind::Reply);
        assert!(
            f.constants_sent >= 3,
            "arc composites: {}",
            f.constants_sent
        );
        assert!(
            f.cache_hits >= 10,
            "margin tiles are hits: {}",
            f.cache_hits
        );
        assert!(f.bytes.len() < 20_000, "{} B", f.bytes.len());
        s.on_ack(f.id);
        // The same shot again: every constant is already on the client.
        s.on_input(click(InputKind::MouseDown, 18, 4));
        let again = s.build_frame().unwrap();
        assert_eq!(again.constants_sent, 0);
        s.on_ack(again.id);

        let mut d = session(&[("phase", "deploy")]);
        let f = d.build_frame().unwrap();
        d.on_ack(f.id);
        d.on_input(click(InputKind::MouseDown, 3, 3));
        let f = d.build_frame().unwrap();
        let ops = decode_frame(&f.bytes).unwrap().ops;
        assert_eq!(f.constants_sent, 0, "a cursor move ships no new image");
        assert!(
            ops.iter()
                .any(|o| matches!(o, Op::Fill { x: 120, y: 120, .. })),
            "{ops:?}"
        );
    }

    #[test]
    fn two_steps_answer_a_press_twice_over_its_tile_and_never_a_release() {
        let mut s = session(&[("two_step_ms", "30")]);
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        assert_eq!(
            s.on_input(click(InputKind::MouseDown, 5, 4)),
            InputOutcome::Queued
        );
        let due = s.second_step_due().expect("a second step is due");
        let first = s.build_frame().unwrap();
        s.on_ack(first.id);
        assert_eq!(
            s.on_input(click(InputKind::MouseUp, 5, 4)),
            InputOutcome::NoReply
        );
        assert!(!s.is_dirty(), "the release changed nothing");
        s.on_second_step(due - Duration::from_millis(1));
        assert!(!s.is_dirty(), "not before it is due");
        s.on_second_step(due);
        assert_eq!(s.second_step_due(), None);
        let second = s.build_frame().unwrap();
        assert_eq!(second.kind, FrameKind::Reply);
        let ops = decode_frame(&second.bytes).unwrap().ops;
        assert!(
            ops.iter()
                .any(|o| matches!(o, Op::Draw { x: 200, y: 160, .. })),
            "the second step redraws the pressed tile: {ops:?}"
        );
    }

    #[test]
    fn drop_every_and_keyup() {
        let mut s = session(&[("drop_every", "3")]);
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        let kinds: Vec<_> = (0..6)
            .map(|_| s.on_input(click(InputKind::MouseUp, 1, 1)))
            .collect();
        assert_eq!(
            kinds
                .iter()
                .filter(|k| **k == InputOutcome::Dropped)
                .count(),
            2
        );
        assert_eq!(
            s.on_input(click(InputKind::KeyUp, 1, 1)),
            InputOutcome::NoReply
        );
    }

    #[test]
    fn every_kth_reply_is_a_tail_presses_and_releases_alike() {
        let mut s = session(&[("tail_every", "3"), ("tail_ms", "50"), ("drop_every", "4")]);
        let f = s.build_frame().unwrap();
        assert!(!f.tail, "the board is no reply");
        s.on_ack(f.id);
        let mut tails = Vec::new();
        for n in 0..12u16 {
            let kind = if n % 2 == 0 {
                InputKind::MouseDown
            } else {
                InputKind::MouseUp
            };
            if s.on_input(click(kind, 3 + n, 3)) == InputOutcome::Dropped {
                continue;
            }
            let f = s.build_frame().unwrap();
            s.on_ack(f.id);
            tails.push(f.tail);
        }
        // 12 inputs, the 4th, 8th and 12th dropped: 9 replies, every 3rd a tail.
        let expect: Vec<bool> = (1..=9).map(|n| n % 3 == 0).collect();
        assert_eq!(tails, expect);
        // Neither a keyup nor a blink is a reply, so neither moves the count.
        let mut s = session(&[("tail_every", "2"), ("tail_ms", "50")]);
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        s.on_input(click(InputKind::MouseDown, 1, 1));
        assert!(!s
            .build_frame()
            .map(|f| {
                s.on_ack(f.id);
                f.tail
            })
            .unwrap());
        s.on_input(click(InputKind::KeyUp, 1, 1));
        s.on_blink();
        let blink = s.build_frame().unwrap();
        assert!(!blink.tail && blink.kind == FrameKind::Blink);
        s.on_ack(blink.id);
        s.on_input(click(InputKind::MouseUp, 1, 1));
        assert!(s.build_frame().unwrap().tail, "the 2nd reply");
    }

    #[test]
    fn shadows_make_the_first_paint_larger() {
        let plain = session(&[]).build_frame().unwrap().bytes.len();
        let shaded = session(&[("shadows", "true")])
            .build_frame()
            .unwrap()
            .bytes
            .len();
        assert!(
            shaded as f64 > plain as f64 * 1.3,
            "shadows {shaded} B vs {plain} B"
        );
    }

    #[test]
    fn small_cache_evicts_and_resends() {
        let mut s = session(&[("const_cache", "8")]);
        let f = s.build_frame().unwrap();
        let ops = decode_frame(&f.bytes).unwrap().ops;
        let forgets = ops
            .iter()
            .filter(|o| matches!(o, Op::Forget { .. }))
            .count();
        assert_eq!(forgets, TILES - 8);
        assert_eq!(s.cached_constants(), 8);
        s.on_ack(f.id);
        s.on_input(click(InputKind::MouseMove, 0, 0));
        let f = s.build_frame().unwrap();
        assert_eq!(
            f.constants_sent, 1,
            "tile (0,0) was evicted and is sent again"
        );
    }

    #[test]
    fn blink_repaints_for_nothing() {
        let mut s = session(&[]);
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        s.on_blink();
        let a = s.build_frame().unwrap();
        assert_eq!(a.kind, FrameKind::Blink);
        s.on_ack(a.id);
        s.on_blink();
        s.on_blink();
        let b = s.build_frame().unwrap();
        assert_eq!(
            b.constants_sent, 0,
            "caret states are cached after the first blink"
        );
        assert_eq!(b.cache_hits, CHAT_TILES as u32);
    }

    #[test]
    fn arc_has_several_tiles_inside_the_board() {
        for t in [(23u16, 0u16), (0, 15), (12, 8), (2, 8)] {
            let a = arc_tiles(t);
            assert!(!a.is_empty());
            assert!(a.iter().all(|&(x, y)| x < BOARD_W && y < BOARD_H));
        }
        assert_eq!(arc_tiles((15, 3)).len(), 3);
    }

    fn moved(s: &mut Session, x: u16, y: u16, buttons: u16) -> Vec<(u16, u16, [u8; 4])> {
        s.on_input(Input {
            kind: InputKind::MouseMove,
            x,
            y,
            code: buttons,
            t_ms: 1.0,
        });
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        decode_frame(&f.bytes)
            .unwrap()
            .ops
            .into_iter()
            .filter_map(|o| match o {
                Op::Fill {
                    x,
                    y,
                    w: 4,
                    h: 4,
                    rgba,
                } => Some((x, y, rgba)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn hover_marks_the_point_and_a_drag_leaves_a_trail() {
        let mut s = session(&[]);
        let f = s.build_frame().unwrap();
        s.on_ack(f.id);
        // Hover: one marker at the point, the old one gone with its tile's repaint.
        assert_eq!(moved(&mut s, 100, 100, 0), [(98, 98, [255, 255, 255, 255])]);
        assert_eq!(
            moved(&mut s, 300, 100, 0),
            [(298, 98, [255, 255, 255, 255])]
        );
        assert_eq!(s.pointer.trail_len(), 0, "a hover paints no trail");
        // Drag: each move adds a dot; a repainted tile gets its dots back under the marker.
        let trail = [255, 96, 32, 255];
        assert_eq!(
            moved(&mut s, 500, 300, 1),
            [(498, 298, trail), (498, 298, [255, 255, 255, 255])]
        );
        let ops = moved(&mut s, 510, 300, 1);
        assert!(
            ops.contains(&(498, 298, trail)) && ops.contains(&(508, 298, trail)),
            "{ops:?}"
        );
        assert_eq!(s.pointer.trail_len(), 2);
    }
}
