// The fixture match's client: one WebSocket, binary both ways (docs/fixture-protocol.md).
// Sends input messages, receives frames of draw ops, keeps the image-constant cache,
// decodes PNG constants, draws them on #board, and acks every frame. With the `worker`
// knob (the server renders it as <html data-worker="true">) the socket lives in a
// dedicated Worker (fixture-worker.js) that only moves bytes; everything else stays here.
(() => {
  'use strict';
  const params = new URLSearchParams(location.search);
  const board = document.getElementById('board');
  const ctx = board.getContext('2d');
  const hud = document.getElementById('hud');
  const hctx = hud.getContext('2d');
  // Each canvas's backing store is Math.ceil(devicePixelRatio) times its CSS size, as the
  // streamed toolkit's client sizes it (a 1.25 or 1.5 laptop gets 2x). Draws stay in CSS px
  // through the context's transform, so the protocol's coordinates and bytes are the same
  // at every ratio; only the page's raster work grows.
  const scale = Math.max(1, Math.ceil(window.devicePixelRatio || 1));
  function sizeBackingStore(c, g) {
    const css = { w: c.width, h: c.height }; // index.html declares the CSS size
    c.style.width = `${css.w}px`;
    c.style.height = `${css.h}px`;
    c.width = css.w * scale;
    c.height = css.h * scale;
    g.setTransform(scale, 0, 0, scale, 0, 0); // a resize reset it
    return css;
  }
  sizeBackingStore(board, ctx);
  const hudCss = sizeBackingStore(hud, hctx);

  // App-side perf recorder (?perf=1): a ring buffer of the same records the pilot's
  // injected recorder writes, read with arenaPerf.drain() and reset with arenaPerf.clear().
  function makeRecorder(capacity) {
    const ring = new Array(capacity);
    let seq = 0;          // next seq to write; never reset
    let readSeq = 0;      // first seq not yet drained
    let dropped = 0;      // overwritten before they were drained
    let clearedAtSeq = 0;
    return {
      capacity,
      rec(kind, t_ms, size, cls, event, trusted, target) {
        if (seq - readSeq >= capacity) { readSeq++; dropped++; }
        ring[seq % capacity] = { seq, kind, t_ms, size, class: cls, event, trusted, target };
        seq++;
      },
      clear() { readSeq = seq; dropped = 0; clearedAtSeq = seq; },
      drain() {
        const records = [];
        for (let s = readSeq; s < seq; s++) records.push(ring[s % capacity]);
        const out = { records, dropped, written_total: seq, cleared_at_seq: clearedAtSeq,
                      socket_source: 'AppRecorder' };
        readSeq = seq; dropped = 0;
        return out;
      },
    };
  }
  const perf = params.get('perf') === '1' ? makeRecorder(65536) : null;
  if (perf) window.arenaPerf = perf;

  // The knob must be known before the socket opens, so it comes with the page, not in hello.
  const useWorker = document.documentElement.dataset.worker === 'true';
  const state = window.fixture = {
    connected: false, closed: null, frames: 0, bytes: 0, lastFrameId: 0,
    constants: 0, draws: 0, inputsSent: 0, acksSent: 0, errors: 0, ackPaint: false, phase: null,
    socket: useWorker ? 'worker' : 'page', backingScale: scale,
  };
  const consts = new Map();
  const onOpen = () => { state.connected = true; };
  const onClose = (code, reason) => { state.connected = false; state.closed = { code, reason }; };
  // rawSend(buf): hands one message to the socket; false if it is not open.
  let rawSend;
  if (useWorker) {
    // Same origin, so it gets the page's isolation; the page never constructs a WebSocket.
    const worker = new Worker('/fixture-worker.js', { name: 'fixture-socket' });
    worker.onmessage = (e) => {
      const d = e.data;
      if (d instanceof ArrayBuffer || typeof d === 'string') onFrame(d);
      else if (d && d.type === 'open') onOpen();
      else if (d && d.type === 'close') onClose(d.code, d.reason);
    };
    worker.onerror = (e) => {
      state.errors++;
      onClose(0, `worker error: ${e.message || 'fixture-worker.js failed'}`);
    };
    rawSend = (buf) => {
      if (!state.connected) return false;
      worker.postMessage(buf, [buf]);
      return true;
    };
  } else {
    const ws = new WebSocket(`ws://${location.host}/ws`);
    ws.binaryType = 'arraybuffer';
    ws.onopen = onOpen;
    ws.onclose = (e) => onClose(e.code, e.reason);
    ws.onmessage = (ev) => onFrame(ev.data);
    rawSend = (buf) => {
      if (ws.readyState !== 1) return false;
      ws.send(buf);
      return true;
    };
  }

  function send(buf, cls, event) {
    const size = buf.byteLength; // read first: a transfer to the worker detaches buf
    if (!rawSend(buf)) return;
    if (perf) perf.rec('WsSend', performance.now(), size, cls, event, true, 0);
  }
  function sendAck(id) {
    const b = new DataView(new ArrayBuffer(5));
    b.setUint8(0, 0x10);
    b.setUint32(1, id, true);
    send(b.buffer, 'Ack', '');
    state.acksSent++;
  }
  const TYPES = { mousedown: 1, mouseup: 2, mousemove: 3, keydown: 4, keyup: 5 };
  let lastX = 0, lastY = 0;
  function sendInput(type, x, y, code, ts, event) {
    const b = new DataView(new ArrayBuffer(15));
    b.setUint8(0, type);
    b.setUint16(1, Math.max(0, Math.min(65535, Math.round(x))), true);
    b.setUint16(3, Math.max(0, Math.min(65535, Math.round(y))), true);
    b.setUint16(5, code & 0xffff, true);
    b.setFloat64(7, ts, true);
    send(b.buffer, 'Input', event);
    state.inputsSent++;
  }
  function canvasXY(e) {
    const r = board.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }
  if (perf) {
    for (const ev of ['mousedown', 'mouseup', 'keydown', 'keyup']) {
      window.addEventListener(ev, (e) => perf.rec('Input', e.timeStamp, 0, 'Other', ev, e.isTrusted, 0), true);
    }
    window.addEventListener('mousemove', (e) => perf.rec('InputCoalesced', e.timeStamp, 0, 'Other', 'mousemove', e.isTrusted, 0), true);
  }
  for (const ev of ['mousedown', 'mouseup']) {
    board.addEventListener(ev, (e) => {
      const [x, y] = canvasXY(e);
      lastX = x; lastY = y;
      sendInput(TYPES[ev], x, y, e.button, e.timeStamp, ev);
    });
  }
  // Mouse moves are coalesced and the newest is flushed on a timer, like the streamed
  // toolkit's client (the `move_flush_ms` knob, <html data-move-flush>). The buttons held
  // go in the code field: a move with the left button down is a drag.
  const moveFlushMs = Math.max(1, Number(document.documentElement.dataset.moveFlush) || 20);
  let pendingMove = null;
  board.addEventListener('mousemove', (e) => {
    const [x, y] = canvasXY(e);
    lastX = x; lastY = y;
    pendingMove = [x, y, e.buttons, e.timeStamp];
  });
  setInterval(() => {
    if (pendingMove) {
      const [x, y, buttons, ts] = pendingMove;
      pendingMove = null;
      sendInput(TYPES.mousemove, x, y, buttons, ts, 'mousemove');
    }
  }, moveFlushMs);
  for (const ev of ['keydown', 'keyup']) {
    window.addEventListener(ev, (e) => sendInput(TYPES[ev], lastX, lastY, e.keyCode, e.timeStamp, ev));
  }

  // Parses a frame synchronously; PNG constants are decoded before any op is drawn.
  function parseFrame(buf) {
    const v = new DataView(buf);
    if (v.byteLength < 7 || v.getUint8(0) !== 0x20) throw new Error('not a frame');
    const id = v.getUint32(1, true);
    const n = v.getUint16(5, true);
    let p = 7;
    const ops = [];
    for (let i = 0; i < n; i++) {
      const op = v.getUint8(p++);
      if (op === 1) {
        ops.push({ op, w: v.getUint16(p, true), h: v.getUint16(p + 2, true), tile: v.getUint16(p + 4, true),
                   ackPaint: v.getUint8(p + 6) === 1, firing: v.getUint8(p + 7) === 1 });
        p += 8;
      } else if (op === 2) {
        const cid = v.getUint32(p, true), len = v.getUint32(p + 4, true);
        ops.push({ op, id: cid, png: new Uint8Array(buf, p + 8, len) });
        p += 8 + len;
      } else if (op === 3) {
        ops.push({ op, id: v.getUint32(p, true), x: v.getUint16(p + 4, true), y: v.getUint16(p + 6, true) });
        p += 8;
      } else if (op === 4) {
        ops.push({ op, x: v.getUint16(p, true), y: v.getUint16(p + 2, true), w: v.getUint16(p + 4, true),
                   h: v.getUint16(p + 6, true), rgba: [v.getUint8(p + 8), v.getUint8(p + 9), v.getUint8(p + 10), v.getUint8(p + 11)] });
        p += 12;
      } else if (op === 5) {
        ops.push({ op, id: v.getUint32(p, true) });
        p += 4;
      } else if (op === 6) {
        const len = v.getUint8(p);
        ops.push({ op, text: new TextDecoder().decode(new Uint8Array(buf, p + 1, len)) });
        p += 1 + len;
      } else if (op === 7) {
        const len = v.getUint8(p);
        ops.push({ op, text: new TextDecoder().decode(new Uint8Array(buf, p + 1, len)), caret: v.getUint8(p + 1 + len) === 1 });
        p += 2 + len;
      } else {
        throw new Error('unknown op ' + op);
      }
    }
    return { id, ops };
  }

  async function applyFrame(frame) {
    const decoded = await Promise.all(frame.ops.filter((o) => o.op === 2).map(async (o) => {
      const bmp = await createImageBitmap(new Blob([o.png], { type: 'image/png' }));
      return [o.id, bmp];
    }));
    const fresh = new Map(decoded);
    let drewBoard = false, drewHud = false;
    for (const o of frame.ops) {
      if (o.op === 1) {
        state.ackPaint = o.ackPaint;
        state.phase = o.firing ? 'firing' : 'deploy';
      } else if (o.op === 2) {
        const old = consts.get(o.id);
        if (old) old.close();
        consts.set(o.id, fresh.get(o.id));
        state.constants = consts.size;
      } else if (o.op === 3) {
        const bmp = consts.get(o.id);
        if (bmp) { ctx.drawImage(bmp, o.x, o.y); state.draws++; drewBoard = true; }
      } else if (o.op === 4) {
        const [r, g, b, a] = o.rgba;
        ctx.fillStyle = `rgba(${r},${g},${b},${a / 255})`;
        ctx.fillRect(o.x, o.y, o.w, o.h);
        drewBoard = true;
      } else if (o.op === 5) {
        const bmp = consts.get(o.id);
        if (bmp) bmp.close();
        consts.delete(o.id);
        state.constants = consts.size;
      } else if (o.op === 6) {
        // The status text keeps to the left half: the right half is the text strip.
        hctx.save();
        hctx.beginPath();
        hctx.rect(0, 0, STRIP_X, hudCss.h);
        hctx.clip();
        hctx.fillStyle = '#101216';
        hctx.fillRect(0, 0, STRIP_X, hudCss.h);
        hctx.fillStyle = '#e8e8e8';
        hctx.font = '14px sans-serif';
        hctx.fillText(`#${frame.id}  ${o.text}`, 8, 19);
        hctx.restore();
        drewHud = true;
      } else if (o.op === 7) {
        drawStrip(o.text, o.caret);
        drewHud = true;
      }
    }
    if (perf) {
      const t = performance.now();
      if (drewBoard) perf.rec('Draw', t, 0, 'Other', '', true, 0);
      if (drewHud) perf.rec('Draw', t, 0, 'Other', '', true, 1);
    }
  }

  // The text strip (docs/fixture-protocol.md): glyph i in the 12 px cell at
  // STRIP_X + 12 i, the caret a 2 px bar at the left of the next cell.
  const STRIP_X = 480, CELL = 12;
  function drawStrip(text, caret) {
    hctx.fillStyle = '#181b21';
    hctx.fillRect(STRIP_X, 0, hudCss.w - STRIP_X, hudCss.h);
    hctx.fillStyle = '#f0f0f0';
    hctx.font = '16px monospace';
    for (let i = 0; i < text.length; i++) hctx.fillText(text[i], STRIP_X + CELL * i + 2, 20);
    if (caret && STRIP_X + CELL * text.length < hudCss.w) hctx.fillRect(STRIP_X + CELL * text.length, 5, 2, 18);
  }

  function nextPaint() {
    return new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
  }

  // Frames are applied strictly in order, each after the previous one's decode.
  let chain = Promise.resolve();
  // One server message: the socket's own (page) or as the worker posted it (worker).
  function onFrame(buf) {
    const t = performance.now();
    if (!(buf instanceof ArrayBuffer)) { state.errors++; return; }
    if (perf) perf.rec('WsRecv', t, buf.byteLength, 'Other', '', true, 0);
    let frame;
    try { frame = parseFrame(buf); } catch (e) { state.errors++; console.error(e); return; }
    state.frames++;
    state.bytes += buf.byteLength;
    state.lastFrameId = frame.id;
    const hello = frame.ops.find((o) => o.op === 1);
    if (hello) state.ackPaint = hello.ackPaint;
    const ackPaint = state.ackPaint;
    if (!ackPaint) sendAck(frame.id);
    chain = chain.then(() => applyFrame(frame)).then(() => nextPaint()).then((tp) => {
      if (perf) perf.rec('Paint', tp, 0, 'Other', '', true, 0);
      state.paintedFrameId = frame.id;
      if (ackPaint) sendAck(frame.id);
    }).catch((e) => { state.errors++; console.error(e); });
  }
})();
