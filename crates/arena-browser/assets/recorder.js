// arena-perf in-page recorder. Injected with Page.addScriptToEvaluateOnNewDocument, so it
// runs before any page script. The Rust side appends `(config)` to call it.
//
// Hot-path rule: recording allocates nothing. Records live in preallocated typed arrays
// (a ring buffer); strings are stored as indexes into NAMES.
(function (cfg) {
  'use strict';
  if (Object.prototype.hasOwnProperty.call(window, '__arenaRecorder')) return;

  var perf = performance;
  var now = function () { return perf.now(); };
  var cap = Math.max(1, Math.floor(cfg.capacity) || 1);
  var NO_TARGET = 65535;

  // Columns. seq is implicit: the record at seq s lives in slot s % cap.
  var colT = new Float64Array(cap);
  var colSize = new Uint32Array(cap);
  var colKind = new Uint8Array(cap);
  var colCls = new Uint8Array(cap);
  var colEv = new Uint8Array(cap);
  var colTr = new Uint8Array(cap);
  var colTgt = new Uint16Array(cap);
  var colRef = new Float64Array(cap);   // answer records: the seq of the input judged
  var written = 0;   // next seq; never reset
  var drained = 0;   // first seq not yet handed out
  var clearedAt = 0;
  var sockets = 0;
  var canvases = 0;
  var sendPathProbe = null;
  // What `wait` watches: the last socket receipt, and the last receipt, draw or painted
  // frame (page times).
  var lastRecv = -1;
  var lastActivity = -1;
  var waitFloor = 0;   // activity at or before this time belongs to an earlier wait
  var waiter = null;

  var KIND_INPUT = 0, KIND_COALESCED = 1, KIND_SEND = 2, KIND_RECV = 3, KIND_DRAW = 4, KIND_PAINT = 5, KIND_ANSWER = 6;
  var KIND_OPEN = 7, KIND_REGION = 8;
  var CLS_OTHER = 0, CLS_INPUT = 1, CLS_ACK = 2;

  var DISCRETE = ['mousedown', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu',
    'keydown', 'keyup', 'pointerdown', 'pointerup', 'touchstart', 'touchend'];
  var COALESCED = ['mousemove', 'pointermove', 'pointerrawupdate', 'touchmove', 'wheel'];
  var DRAWS = ['drawImage', 'putImageData', 'fillRect', 'strokeRect', 'clearRect',
    'fillText', 'strokeText', 'fill', 'stroke'];
  // Answer verdict names: what the oracle saw, or why it could not judge.
  var VERDICTS = ['pixels', 'js', 'unreadable', 'js_error', 'no_canvas', 'no_region'];
  var NAMES = DISCRETE.concat(COALESCED, DRAWS, ['binary', 'text', 'raf'], VERDICTS);
  var NAME = Object.create(null);
  for (var n = 0; n < NAMES.length; n++) NAME[NAMES[n]] = n;
  var EV_BINARY = NAME.binary, EV_TEXT = NAME.text, EV_RAF = NAME.raf;

  function push(kind, t, size, cls, ev, trusted, target, ref) {
    var i = written % cap;
    colRef[i] = ref === undefined ? -1 : ref;
    colT[i] = t;
    colSize[i] = size;
    colKind[i] = kind;
    colCls[i] = cls;
    colEv[i] = ev;
    colTr[i] = trusted;
    colTgt[i] = target;
    written++;
  }

  // ---- canvases: an index per canvas, in order of first use ----
  var canvasIds = new WeakMap();
  function canvasIndex(c) {
    if (!c) return NO_TARGET;
    var i = canvasIds.get(c);
    if (i === undefined) {
      i = canvases < NO_TARGET ? canvases++ : NO_TARGET;
      canvasIds.set(c, i);
    }
    return i;
  }

  // ---- classifier (ClassifierSpec in record.rs; same semantics) ----
  function compile(list) {
    var out = [];
    for (var k = 0; k < (list || []).length; k++) {
      var m = list[k];
      var fb = null;
      if (m.first_byte) {
        fb = new Uint8Array(256);
        for (var j = 0; j < m.first_byte.length; j++) fb[m.first_byte[j] & 255] = 1;
      }
      var pre = null;
      if (typeof m.prefix === 'string') {
        var hex = m.prefix.replace(/\s+/g, '');
        pre = [];
        for (var h = 0; h + 1 < hex.length; h += 2) {
          var pair = hex.substr(h, 2);
          pre.push(pair === '??' ? -1 : parseInt(pair, 16));
        }
      }
      var at = null;
      if (m.bytes_at) {
        at = { off: m.bytes_at.offset, set: new Uint8Array(256) };
        for (var q = 0; q < m.bytes_at['in'].length; q++) at.set[m.bytes_at['in'][q] & 255] = 1;
      }
      var field = null;
      if (m.int_at) {
        field = { off: m.int_at.offset, n: m.int_at.bits / 8, little: m.int_at.endian === 'little', set: m.int_at['in'] };
      }
      if (pre || at || field) NEED_BYTES = true;
      out.push({
        pre: pre, at: at, field: field,
        fb: fb,
        key: m.json_key ? m.json_key.split('.') : null,
        hasVal: Object.prototype.hasOwnProperty.call(m, 'json_value'),
        val: m.json_value,
        min: typeof m.min_size === 'number' ? m.min_size : -1,
        max: typeof m.max_size === 'number' ? m.max_size : -1,
        re: typeof m.text_regex === 'string' ? new RegExp(m.text_regex) : null
      });
    }
    return out;
  }
  var NEED_BYTES = false;
  var spec = cfg.classifier || {};
  var INPUT = compile(spec.input), ACK = compile(spec.ack);
  var NEED_JSON = false;
  INPUT.concat(ACK).forEach(function (m) { if (m.key) NEED_JSON = true; });

  function utf8Len(s) {
    var n = s.length, b = n;
    for (var i = 0; i < n; i++) {
      var c = s.charCodeAt(i);
      if (c >= 0x80) {
        if (c < 0x800) b += 1;
        else {
          b += 2;
          if (c >= 0xd800 && c < 0xdc00) i++; // surrogate pair: 4 bytes for 2 units
        }
      }
    }
    return b;
  }
  function firstByte(data) {
    if (typeof data === 'string') {
      if (data.length === 0) return -1;
      var c = data.charCodeAt(0);
      if (c < 0x80) return c;
      if (c < 0x800) return 0xc0 | (c >> 6);
      if (c >= 0xd800 && c < 0xdc00) return 0xf0;
      return 0xe0 | (c >> 12);
    }
    if (data instanceof ArrayBuffer) {
      return data.byteLength ? new Uint8Array(data, 0, 1)[0] : -1;
    }
    if (ArrayBuffer.isView(data)) {
      if (!data.byteLength) return -1;
      return data instanceof Uint8Array ? data[0] : new Uint8Array(data.buffer, data.byteOffset, 1)[0];
    }
    return -1; // Blob: not readable synchronously
  }
  // Payload bytes for matchers that look past the first byte (text frames as UTF-8, as on
  // the wire); null for a Blob, which cannot be read synchronously.
  var encoder = typeof TextEncoder === 'function' ? new TextEncoder() : null;
  function bytesOf(data) {
    if (typeof data === 'string') return encoder ? encoder.encode(data) : null;
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    return null;
  }
  function bytesHit(m, b) {
    if (b === null) return false;
    if (m.at && (m.at.off >= b.length || !m.at.set[b[m.at.off]])) return false;
    if (m.pre) {
      if (b.length < m.pre.length) return false;
      for (var i = 0; i < m.pre.length; i++) if (m.pre[i] >= 0 && b[i] !== m.pre[i]) return false;
    }
    if (m.field) {
      var f = m.field;
      if (f.off + f.n > b.length) return false;
      var v = 0;
      for (var k = 0; k < f.n; k++) v = v * 256 + b[f.off + (f.little ? f.n - 1 - k : k)];
      if (f.set.indexOf(v) < 0) return false;
    }
    return true;
  }
  function looseEq(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a === b;
    return JSON.stringify(a) === JSON.stringify(b);
  }
  function hits(m, data, size, parsed, bytes) {
    if ((m.pre || m.at || m.field) && !bytesHit(m, bytes)) return false;
    if (m.fb) {
      var b = firstByte(data);
      if (b < 0 || !m.fb[b]) return false;
    }
    if (m.min >= 0 && size < m.min) return false;
    if (m.max >= 0 && size > m.max) return false;
    if (m.key) {
      if (parsed === undefined || parsed === null || typeof parsed !== 'object') return false;
      var cur = parsed;
      for (var k = 0; k < m.key.length; k++) {
        if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, m.key[k])) return false;
        cur = cur[m.key[k]];
      }
      if (m.hasVal && !looseEq(cur, m.val)) return false;
    }
    if (m.re) {
      if (typeof data !== 'string' || !m.re.test(data)) return false;
    }
    return true;
  }
  function classify(data, size) {
    if (INPUT.length === 0 && ACK.length === 0) return CLS_OTHER;
    var parsed;
    if (NEED_JSON && typeof data === 'string') {
      try { parsed = JSON.parse(data); } catch (e) { parsed = undefined; }
    }
    var bytes = NEED_BYTES ? bytesOf(data) : null;
    for (var i = 0; i < INPUT.length; i++) if (hits(INPUT[i], data, size, parsed, bytes)) return CLS_INPUT;
    for (var j = 0; j < ACK.length; j++) if (hits(ACK[j], data, size, parsed, bytes)) return CLS_ACK;
    return CLS_OTHER;
  }
  function sizeOf(data) {
    if (typeof data === 'string') return utf8Len(data);
    if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength;
    if (data && typeof data.size === 'number') return data.size; // Blob
    return 0;
  }

  // ---- WebSocket: the constructor stays genuine (a Proxy whose construct trap returns the
  // real instance), send is patched on the prototype, receipt is an instance listener added
  // at construction (so it runs before any listener the app adds). ----
  var OrigWS = window.WebSocket;
  if (typeof OrigWS === 'function') {
    var proto = OrigWS.prototype;
    var origSend = proto.send;
    var origAdd = EventTarget.prototype.addEventListener;
    var socketIds = new WeakMap();
    var socketIndex = function (ws) {
      var i = socketIds.get(ws);
      if (i === undefined) {
        i = sockets < NO_TARGET ? sockets++ : NO_TARGET;
        socketIds.set(ws, i);
      }
      return i;
    };
    var onMessage = function (e) {
      var t = now();
      var d = e.data;
      push(KIND_RECV, t, sizeOf(d), CLS_OTHER, typeof d === 'string' ? EV_TEXT : EV_BINARY, 1, socketIndex(this));
      lastRecv = lastActivity = t;
      if (IDLE !== null) idleRecv(d);
      // Checked after this task: the app's own message listeners, which draw, run after
      // this one. A burst of messages arms one check, not one each.
      if (waiter !== null && waiter.due > t) rearm(0);
    };
    var Shim = new Proxy(OrigWS, {
      construct: function (target, args, newTarget) {
        var ws = Reflect.construct(target, args, newTarget);
        socketIndex(ws);
        origAdd.call(ws, 'message', onMessage);
        origAdd.call(ws, 'open', onSocketOpen);
        return ws;
      }
    });
    var recordSend = function (ws, data, t) {
      var size = sizeOf(data);
      var cls = classify(data, size);
      push(KIND_SEND, t, size, cls, typeof data === 'string' ? EV_TEXT : EV_BINARY, 1, socketIndex(ws));
      if (cls === CLS_INPUT) coalescedAt();
    };
    proto.send = function send(data) {
      var t = now();
      var r = origSend.call(this, data);
      recordSend(this, data, t);
      return r;
    };
    // The benchmark's probe: the send hook's own work without the native send (whose IPC
    // cost scatters by microseconds). The probe key is pre-registered so it is not counted
    // as a socket.
    var probeKey = {};
    socketIds.set(probeKey, NO_TARGET);
    sendPathProbe = function (n, data) {
      var t0 = now();
      for (var i = 0; i < n; i++) recordSend(probeKey, data, now());
      var ms = now() - t0;
      clear();
      return ms;
    };
    // `ws.constructor === WebSocket` must keep holding for clients that check it.
    Object.defineProperty(proto, 'constructor', { value: Shim, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(window, 'WebSocket', { value: Shim, writable: true, configurable: true, enumerable: false });
  }

  // ---- canvas 2D draws, and the animation frame after them ----
  // A draw is shown by the rendering update of the frame it was made in: the next frame for
  // a draw made in a task, this frame for one made inside one of the app's own animation-
  // frame callbacks (those run before the frame's rendering update). So the app's callbacks
  // are wrapped, and a draw inside one is marked painted, and judged, right after it.
  var raf = window.requestAnimationFrame ? window.requestAnimationFrame.bind(window) : null;
  var paintPending = false;
  var lastCanvas = NO_TARGET;
  var inAppFrame = false, drewInAppFrame = false;
  function painted(t) {
    paintPending = false;
    push(KIND_PAINT, t, 0, CLS_OTHER, EV_RAF, 1, lastCanvas);
    lastActivity = t;
  }
  var onFrame = function () {
    // Already recorded after the app's own frame callback that drew.
    if (!paintPending) return;
    painted(now());
    if (waiter !== null) check();
  };
  function afterAppFrame() {
    var t = now();
    if (paintPending) painted(t);
    if (pending.length) oracleCheck(t);
    if (waiter !== null) check();
  }
  if (raf) {
    var origRafFn = window.requestAnimationFrame;
    var wrappedRaf = {
      requestAnimationFrame: function (cb) {
        if (typeof cb !== 'function') return origRafFn.apply(window, arguments);
        return origRafFn.call(window, function (ts) {
          inAppFrame = true;
          drewInAppFrame = false;
          try { return cb(ts); } finally {
            inAppFrame = false;
            if (drewInAppFrame) afterAppFrame();
          }
        });
      }
    }.requestAnimationFrame;
    Object.defineProperty(window, 'requestAnimationFrame', { value: wrappedRaf, writable: true, configurable: true, enumerable: true });
  }
  var C2D = window.CanvasRenderingContext2D;
  if (C2D) {
    DRAWS.forEach(function (name) {
      var orig = C2D.prototype[name];
      if (typeof orig !== 'function') return;
      var code = NAME[name];
      var wrapped = {
        [name]: function () {
          var t = now();
          var r = orig.apply(this, arguments);
          var c = canvasIndex(this.canvas);
          lastCanvas = c;
          push(KIND_DRAW, t, 0, CLS_OTHER, code, 1, c);
          lastActivity = t;
          if (inAppFrame) drewInAppFrame = true;
          if (!paintPending && raf) { paintPending = true; raf(onFrame); }
          // The oracle looks at a 2D canvas only in a frame after a draw: pixels nothing
          // drew on cannot have changed, and polling every frame would keep the page
          // animating, which moves when its frames come.
          if (pending.length && !oracleRafPending && raf) { oracleRafPending = true; raf(oracleFrame); }
          return r;
        }
      }[name];
      Object.defineProperty(C2D.prototype, name, { value: wrapped, writable: true, configurable: true, enumerable: true });
    });
  }

  // ---- input, capture phase on window: sees the event before any app handler ----
  var HTMLCanvas = window.HTMLCanvasElement;
  var inputTarget = function (e) {
    return HTMLCanvas && e.target instanceof HTMLCanvas ? canvasIndex(e.target) : NO_TARGET;
  };
  var onDiscrete = function (e) {
    push(KIND_INPUT, e.timeStamp, 0, CLS_OTHER, NAME[e.type], e.isTrusted ? 1 : 0, inputTarget(e));
    if (ORACLE !== null && e.isTrusted && ORACLE.events[e.type]) watch(e, written - 1);
  };
  // A pointermove's size is how many moves the browser folded into it (its coalesced
  // events, itself included): the pilot counts folded moves from this, not as a residual.
  var folded = function (e) {
    return e.type === 'pointermove' && e.getCoalescedEvents ? e.getCoalescedEvents().length : 0;
  };
  var onCoalesced = function (e) {
    push(KIND_COALESCED, e.timeStamp, folded(e), CLS_OTHER, NAME[e.type], e.isTrusted ? 1 : 0, inputTarget(e));
    if (ORACLE !== null && e.isTrusted && ORACLE.moves[e.type]) {
      // When the page had the move: its timeStamp is the OS's, and Chromium hands a
      // mousemove over at its next animation frame.
      if (delivered.length < 65536) delivered.push(written - 1, now());
      watch(e, written - 1, true);
    }
  };
  var delivered = [];   // watched moves: seq, page time, flat
  var opts = { capture: true, passive: true };
  DISCRETE.forEach(function (t) { window.addEventListener(t, onDiscrete, opts); });
  COALESCED.forEach(function (t) { window.addEventListener(t, onCoalesced, opts); });


  // ---- the answer oracle: which painted frame answered an input ----
  // Which context each canvas was given: a pixel read must not create a 2D context on a
  // canvas the app meant for WebGL, and some canvases cannot be read at all.
  var ctxType = new WeakMap();
  if (HTMLCanvas) {
    var origGetContext = HTMLCanvas.prototype.getContext;
    var origTransfer = HTMLCanvas.prototype.transferControlToOffscreen;
    Object.defineProperty(HTMLCanvas.prototype, 'getContext', {
      value: function getContext(type) {
        var c = origGetContext.apply(this, arguments);
        if (c && !ctxType.has(this)) ctxType.set(this, String(type));
        return c;
      }, writable: true, configurable: true, enumerable: true
    });
    if (typeof origTransfer === 'function') {
      Object.defineProperty(HTMLCanvas.prototype, 'transferControlToOffscreen', {
        value: function transferControlToOffscreen() {
          ctxType.set(this, 'offscreen');
          return origTransfer.apply(this, arguments);
        }, writable: true, configurable: true, enumerable: true
      });
    }
  }
  var ORACLE = null;
  var oracleError = null;   // why the oracle cannot work at all (js that does not compile)
  var lastVerdict = null;   // the most recent reason an input could not be judged
  if (cfg.answer) {
    var A = cfg.answer;
    ORACLE = { kind: A.kind, radius: +A.radius_px || 0, rect: A.rect || null, canvas: A.canvas || null,
      window: +A.window_ms || 2000, events: Object.create(null), fn: null,
      moves: Object.create(null), moveRadius: +A.move_radius_px || 0 };
    (A.events || []).forEach(function (t) { ORACLE.events[t] = true; });
    (A.move_events || []).forEach(function (t) { ORACLE.moves[t] = true; });
    if (A.kind === 'js') {
      try { ORACLE.fn = new Function('input', '"use strict"; return (' + A.js + ');'); } catch (err) {
        oracleError = 'js does not compile: ' + err;
      }
    }
  }
  var pending = [];          // inputs being watched, oldest first
  var oracleRafPending = false;
  var scratch = null;

  function matches(el, sel) {
    try { return !sel || el.matches(sel); } catch (err) { return false; }
  }
  // The canvas an input is judged on: the topmost canvas under its point that matches the
  // selector; without a point, the first canvas matching it.
  function canvasAt(x, y) {
    if (x !== null && document.elementsFromPoint) {
      var els = document.elementsFromPoint(x, y);
      for (var i = 0; i < els.length; i++) {
        if (HTMLCanvas && els[i] instanceof HTMLCanvas && matches(els[i], ORACLE.canvas)) return els[i];
      }
    }
    if (!ORACLE.canvas) return null;
    var c = null;
    try { c = document.querySelector(ORACLE.canvas); } catch (err) { c = null; }
    return HTMLCanvas && c instanceof HTMLCanvas ? c : null;
  }
  // The watched region in canvas pixels, or a reason it has none. The point and radius are
  // CSS px; a canvas whose backing store is k times its CSS size (a client sizing it by
  // devicePixelRatio) is read over k times as many pixels each way, at the same place.
  function regionOf(canvas, x, y, rect, radius) {
    var w = canvas.width, h = canvas.height;
    if (!(w > 0 && h > 0)) return 'the canvas has no pixels';
    if (rect || ORACLE.rect) {
      var r = rect || ORACLE.rect;
      var x0 = Math.floor(r[0] * w), y0 = Math.floor(r[1] * h);
      return { x: x0, y: y0, w: Math.max(1, Math.ceil(r[2] * w) - x0), h: Math.max(1, Math.ceil(r[3] * h) - y0) };
    }
    if (x === null) return 'input without a point (a key): set answer.rect';
    var b = canvas.getBoundingClientRect();
    var sx = b.width > 0 ? w / b.width : 1, sy = b.height > 0 ? h / b.height : 1;
    var cx = (x - b.left) * sx, cy = (y - b.top) * sy;
    if (radius === undefined) radius = ORACLE.radius;
    var rx = radius * sx, ry = radius * sy;
    var rx0 = Math.max(0, Math.floor(cx - rx)), ry0 = Math.max(0, Math.floor(cy - ry));
    var rx1 = Math.min(w, Math.floor(cx + rx) + 1), ry1 = Math.min(h, Math.floor(cy + ry) + 1);
    if (rx1 <= rx0 || ry1 <= ry0) return 'the input point is outside the canvas';
    return { x: rx0, y: ry0, w: rx1 - rx0, h: ry1 - ry0 };
  }
  // The region's RGBA bytes; throws a reason when the canvas cannot be read.
  function readRegion(canvas, g) {
    var type = ctxType.get(canvas);
    if (type === undefined) throw 'nothing has drawn on it (no rendering context)';
    if (type === 'offscreen') throw 'it was transferred to an OffscreenCanvas';
    try {
      if (type === '2d') return origGetContext.call(canvas, '2d').getImageData(g.x, g.y, g.w, g.h).data;
      if (type === 'webgl' || type === 'webgl2' || type === 'experimental-webgl') {
        var gl = origGetContext.call(canvas, type);
        var attrs = gl && gl.getContextAttributes();
        if (!attrs || !attrs.preserveDrawingBuffer) throw 'WebGL without preserveDrawingBuffer';
      }
      if (scratch === null) scratch = document.createElement('canvas');
      if (scratch.width < g.w) scratch.width = g.w;
      if (scratch.height < g.h) scratch.height = g.h;
      var sc = origGetContext.call(scratch, '2d');
      sc.clearRect(0, 0, g.w, g.h);
      sc.drawImage(canvas, g.x, g.y, g.w, g.h, 0, 0, g.w, g.h);
      return sc.getImageData(0, 0, g.w, g.h).data;
    } catch (err) {
      if (typeof err === 'string') throw err;
      if (err && err.name === 'SecurityError') throw 'tainted: a cross-origin image was drawn on it';
      throw 'reading it failed: ' + err;
    }
  }
  function changed(a, b) {
    var n = 0;
    for (var i = 0; i < a.length; i += 4) {
      if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2] || a[i + 3] !== b[i + 3]) n++;
    }
    return n;
  }
  function verdict(t, cls, name, size, target, seq, why) {
    if (why) lastVerdict = why;
    push(KIND_ANSWER, t, size, cls, NAME[name], 1, target, seq);
    lastActivity = t;
    // A claimed pixel input keeps watching; any other verdict ends the input's watch.
    if (latest !== null && latest.seq === seq && !(cls === CLS_ACK && ORACLE.kind === 'pixels')) {
      latest.done = { t_input: latest.t, t_answer: cls === CLS_INPUT ? t : null };
      answered();
    }
  }
  // The most recent watched input, and a pending `waitAnswer` for it.
  var latest = null;
  var answerWaiter = null;
  function answered() {
    var w = answerWaiter;
    if (w === null || latest === null || latest.done === null) return;
    answerWaiter = null;
    clearTimeout(w.timer);
    w.resolve(latest.done);
  }
  // Resolves once the most recent watched input has its verdict: {t_input, t_answer}
  // (t_answer null when it could not be judged), or null at `timeout` ms. The pilot
  // releases a press on this without draining: the records are judged later.
  function waitAnswer(timeout) {
    if (answerWaiter !== null) { clearTimeout(answerWaiter.timer); answerWaiter.resolve(null); }
    return new Promise(function (resolve) {
      answerWaiter = { resolve: resolve, timer: setTimeout(function () {
        if (answerWaiter !== null && answerWaiter.resolve === resolve) { answerWaiter = null; resolve(null); }
      }, Math.max(0, +timeout || 0)) };
      answered();
    });
  }
  // Starts watching one input: the snapshot is taken here, in the capture phase on window,
  // before any handler of the app's has run.
  // Typing: the glyph region each coming keydown watches, in order (canvas fractions).
  // The region follows the text, so it is set per key rather than once for the oracle.
  var keyRegions = [];
  function typeRegions(list) { keyRegions = (list || []).slice(); return keyRegions.length; }
  // A pointer move (`move`) is judged alone, around its point at the move radius, and is
  // not the input `waitAnswer` waits for.
  function watch(e, seq, move) {
    var x = typeof e.clientX === 'number' ? e.clientX : null;
    var y = typeof e.clientY === 'number' ? e.clientY : null;
    var own = e.type === 'keydown' && keyRegions.length ? keyRegions.shift() : null;
    var p = { seq: seq, until: e.timeStamp + ORACLE.window, target: NO_TARGET, canvas: null, g: null, snap: null,
      info: { type: e.type, t: e.timeStamp, x: x, y: y }, move: !!move };
    if (!move) latest = { seq: seq, t: e.timeStamp, done: null };
    var t = now();
    if (ORACLE.kind === 'pixels') {
      var c = canvasAt(x, y);
      if (c === null) return verdict(t, CLS_OTHER, 'no_canvas', 0, NO_TARGET, seq, 'no canvas' + (ORACLE.canvas ? ' matching ' + ORACLE.canvas : '') + ' under the input');
      p.canvas = c;
      p.target = canvasIndex(c);
      var g = regionOf(c, x, y, own, move ? ORACLE.moveRadius : ORACLE.radius);
      if (typeof g === 'string') return verdict(t, CLS_OTHER, 'no_region', 0, p.target, seq, g);
      p.g = g;
      try { p.snap = readRegion(c, g); } catch (why) {
        return verdict(t, CLS_OTHER, 'unreadable', 0, p.target, seq, 'the canvas cannot be read: ' + why);
      }
    } else if (ORACLE.fn === null) {
      return verdict(t, CLS_OTHER, 'js_error', 0, NO_TARGET, seq, oracleError);
    }
    // A js predicate reads page state, and a canvas not drawn through the 2D context
    // (WebGL) draws unseen: those are checked every frame.
    p.poll = ORACLE.kind !== 'pixels' || ctxType.get(p.canvas) !== '2d';
    pending.push(p);
    setTimeout(expireWatches, ORACLE.window + 1);
    if (p.poll && !oracleRafPending && raf) { oracleRafPending = true; raf(oracleFrame); }
  }
  // Ends the watches whose window has passed: the latest one's waiter learns it had no
  // answer.
  function expireWatches() {
    var t = now();
    for (var i = 0; i < pending.length; i++) {
      if (t <= pending[i].until) continue;
      var p = pending.splice(i--, 1)[0];
      if (p.sham) { p.sham(false); continue; }
      if (latest !== null && latest.seq === p.seq) { latest.done = { t_input: latest.t, t_answer: null }; answered(); }
    }
  }
  // A control: the region around page point (x, y) watched for `ms` with no input, judged
  // exactly as an input's. Resolves true when it changed (a clock, a caret, an animation
  // would have answered a loop there), false when it did not, null when it cannot be
  // watched. It writes no record and claims no frame.
  function sham(x, y, ms, rect) {
    return new Promise(function (resolve) {
      if (ORACLE === null || ORACLE.kind !== 'pixels') return resolve(null);
      var c = canvasAt(x, y);
      if (c === null) return resolve(null);
      var g = regionOf(c, x, y, rect);
      if (typeof g === 'string') return resolve(null);
      var snap;
      try { snap = readRegion(c, g); } catch (why) { return resolve(null); }
      var p = { seq: -1, sham: resolve, until: now() + ms, target: canvasIndex(c), canvas: c, g: g, snap: snap,
        info: null, poll: ctxType.get(c) !== '2d' };
      pending.push(p);
      setTimeout(expireWatches, ms + 1);
      if (p.poll && !oracleRafPending && raf) { oracleRafPending = true; raf(oracleFrame); }
    });
  }
  // An input send carries the newest move the page had before it: the older moves still
  // watched were coalesced into it and will never be drawn at their own points, so their
  // watches end (the pilot's accounting, crates/arena-pilot/src/moves.rs, applies the same
  // rule, by record order as here).
  function coalescedAt() {
    var newest = -1;
    for (var i = 0; i < pending.length; i++) {
      if (pending[i].move && !pending[i].carried) newest = i;
    }
    if (newest < 0) return;
    pending[newest].carried = true;
    for (var k = newest - 1; k >= 0; k--) {
      if (pending[k].move && !pending[k].carried) pending.splice(k, 1);
    }
  }
  function overlaps(a, b) {
    return a.canvas === b.canvas && a.g.x < b.g.x + b.g.w && b.g.x < a.g.x + a.g.w &&
      a.g.y < b.g.y + b.g.h && b.g.y < a.g.y + a.g.h;
  }
  // One check per animation frame after a draw (or every frame, for watches that poll).
  // A frame answers at most one input: a later input whose condition the same frame met
  // (pixels: on an overlapping region) is told "claimed" and, for pixels, keeps watching
  // from the new pixels.
  function oracleFrame() {
    oracleRafPending = false;
    oracleCheck(now());
    var poll = false;
    for (var i = 0; i < pending.length; i++) if (pending[i].poll) { poll = true; break; }
    if (poll && raf) { oracleRafPending = true; raf(oracleFrame); }
  }
  function oracleCheck(t) {
    expireWatches();
    var hits = [];
    for (var i = 0; i < pending.length; i++) {
      var p = pending[i];
      var cur = null, n = 0;
      if (ORACLE.kind === 'pixels') {
        try { cur = readRegion(p.canvas, p.g); } catch (why) {
          pending.splice(i--, 1);
          if (p.sham) { p.sham(null); continue; }
          verdict(t, CLS_OTHER, 'unreadable', 0, p.target, p.seq, 'the canvas cannot be read: ' + why);
          continue;
        }
        n = changed(cur, p.snap);
        if (p.sham) {
          if (n > 0) { pending.splice(i--, 1); p.sham(true); }
          continue;
        }
      } else {
        try { n = ORACLE.fn(p.info) ? 1 : 0; } catch (err) {
          verdict(t, CLS_OTHER, 'js_error', 0, NO_TARGET, p.seq, 'js threw: ' + err);
          pending.splice(i--, 1);
          continue;
        }
      }
      if (n === 0) continue;
      var ev = ORACLE.kind === 'pixels' ? 'pixels' : 'js';
      if (p.move) {
        verdict(t, CLS_INPUT, ev, n, p.target, p.seq, null);
        pending.splice(i--, 1);
        continue;
      }
      var claimed = false;
      for (var k = 0; k < hits.length; k++) {
        if (ORACLE.kind !== 'pixels' || overlaps(hits[k], p)) { claimed = true; break; }
      }
      if (claimed) {
        verdict(t, CLS_ACK, ev, n, p.target, p.seq, null);
        if (ORACLE.kind === 'pixels') { p.snap = cur; } else { pending.splice(i--, 1); }
        continue;
      }
      verdict(t, CLS_INPUT, ev, n, p.target, p.seq, null);
      hits.push(p);
      pending.splice(i--, 1);
    }
    if (waiter !== null && hits.length) check();
  }
  // Before measuring: can the oracle judge an input at page point (x, y)? (null x: a key.)
  function probeAnswer(x, y) {
    if (ORACLE === null) return { ok: false, reason: 'no answer oracle configured' };
    if (oracleError !== null) return { ok: false, reason: oracleError };
    if (ORACLE.kind === 'js') {
      try { ORACLE.fn({ type: 'probe', t: now(), x: x, y: y }); } catch (err) {
        return { ok: false, reason: 'js threw on a probe input: ' + err };
      }
      return { ok: true };
    }
    var c = canvasAt(x, y);
    if (c === null) return { ok: false, reason: 'no canvas' + (ORACLE.canvas ? ' matching ' + ORACLE.canvas : '') + ' under the input point' };
    var g = regionOf(c, x, y);
    if (typeof g === 'string') return { ok: false, reason: g };
    try { readRegion(c, g); } catch (why) { return { ok: false, reason: 'the canvas cannot be read: ' + why }; }
    return { ok: true, canvas: canvasIndex(c), region: g, width: c.width, height: c.height };
  }
  // Before typing: can the region `rect` (canvas fractions) of the oracle's canvas be
  // watched? The canvas's pixel size comes back so the caller can name an empty region.
  function probeRegion(rect) {
    if (ORACLE === null || ORACLE.kind !== 'pixels') return { ok: false, reason: 'no pixels oracle configured' };
    var c = canvasAt(null, null);
    if (c === null) return { ok: false, reason: 'no canvas matching ' + ORACLE.canvas };
    var g = regionOf(c, null, null, rect);
    if (typeof g === 'string') return { ok: false, reason: g };
    try { readRegion(c, g); } catch (why) { return { ok: false, reason: 'the canvas cannot be read: ' + why }; }
    return { ok: true, canvas: canvasIndex(c), region: g, width: c.width, height: c.height };
  }
  // Benchmark only: the pixel check's own cost, ms per call, on the region of point (x, y).
  function probeOracleCost(x, y, n) {
    var c = canvasAt(x, y);
    if (c === null) return null;
    var g = regionOf(c, x, y);
    if (typeof g === 'string') return null;
    var snap = readRegion(c, g);
    var t0 = now(), sink = 0;
    for (var i = 0; i < n; i++) sink += changed(readRegion(c, g), snap);
    return sink >= 0 ? (now() - t0) / n : null;
  }

  // ---- waiting for a click's answer without polling over CDP ----
  // Resolves with the page time once there has been activity since the previous wait ended,
  // no drawn frame is waiting for paint, and no message arrived for `settle` ms; with null at
  // `timeout` ms.
  // Quiet is judged on the socket alone so an app that animates every frame still settles.
  // One pending evaluation replaces a drain every few milliseconds; the caller drains once
  // and judges the loops itself.
  function rearm(ms) {
    if (waiter.timer !== null) clearTimeout(waiter.timer);
    waiter.timer = setTimeout(check, ms);
    waiter.due = now() + ms;
  }
  function check() {
    var w = waiter;
    if (w === null) return;
    var t = now();
    var busy = lastActivity > waitFloor;
    // Silent since the last wait at the deadline: false, nothing was in flight. Traffic
    // gets two settles at least (a window spent waiting for an answer leaves none) before
    // it ends as null: it never settled, a lapse.
    if (t >= w.deadline && !busy) return finish(false);
    if (t >= w.busyDeadline) return finish(null);
    var next = (busy ? w.busyDeadline : w.deadline) - t;
    if (busy && !paintPending) {
      var quietAt = lastRecv + w.settle;
      if (t >= quietAt) return finish(t);
      next = Math.min(next, quietAt - t);
    }
    rearm(next);
  }
  function finish(quietAt) {
    var w = waiter;
    waiter = null;
    if (w.timer !== null) clearTimeout(w.timer);
    waitFloor = now();
    w.resolve(quietAt);
  }
  function wait(settle, timeout) {
    if (waiter !== null) finish(null);
    return new Promise(function (resolve) {
      var st = Math.max(0, +settle || 0), to = Math.max(0, +timeout || 0), t0 = now();
      waiter = { settle: st, deadline: t0 + to, busyDeadline: t0 + Math.max(to, 2 * st), resolve: resolve, timer: null, due: 0 };
      check();
    });
  }

  // ---- the idle window: how alike consecutive frames are (idleStart .. idleStop) ----
  // Only while a window is open: outside it the receipt hook tests one variable and copies
  // nothing, so recording stays allocation-free. Two measures, both per received message:
  // bytes (the payload against the previous payload: the larger of equal bytes at equal
  // offsets and common prefix + suffix, over the longer length) and pixels (the watched
  // canvas after the first painted frame that followed the message, against the canvas
  // before it: share of pixels unchanged). A message that drew nothing changed no pixel.
  var IDLE = null;
  function likeness(a, b) {
    var n = Math.max(a.length, b.length), m = Math.min(a.length, b.length);
    if (n === 0) return 1;
    var same = 0, pre = 0, suf = 0;
    for (var i = 0; i < m; i++) if (a[i] === b[i]) same++;
    while (pre < m && a[pre] === b[pre]) pre++;
    while (suf < m - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
    return Math.max(same, pre + suf) / n;
  }
  function idleRecv(d) {
    var I = IDLE, b = bytesOf(d);
    I.seq.push(written - 1);
    I.pixels.push(null);
    if (b === null) { I.bytes.push(null); I.bytesWhy = 'Blob payloads cannot be read synchronously'; return; }
    I.bytes.push(I.prev === null ? null : likeness(b, I.prev));
    I.prev = b.slice();
  }
  function idleCanvas(sel) {
    if (sel) { try { return document.querySelector(sel); } catch (err) { return null; } }
    var all = document.getElementsByTagName('canvas'), best = null;
    for (var i = 0; i < all.length; i++) {
      if (best === null || all[i].width * all[i].height > best.width * best.height) best = all[i];
    }
    return best;
  }
  function idleSnap(I) {
    var c = I.canvas;
    if (c === null) return null;
    var t0 = now();
    try {
      var px = readRegion(c, { x: 0, y: 0, w: c.width, h: c.height });
      I.checkMs += now() - t0;
      I.checks++;
      return px;
    } catch (why) { I.pixelsWhy = 'the canvas cannot be read: ' + why; I.canvas = null; return null; }
  }
  // Each animation frame of the window: messages received since the last look wait for the
  // next painted frame; once one followed them, the canvas is read and compared.
  function idleTick() {
    var I = IDLE;
    if (I === null) return;
    var s = Math.max(I.scan, written - cap), upto = 0, idx = I.waiting;
    for (; s < written; s++) {
      var k = colKind[s % cap];
      if (k === KIND_RECV) idx.push(I.seq.lastIndexOf(s));
      else if (k === KIND_PAINT) upto = idx.length;
    }
    I.scan = written;
    if (upto > 0 && I.canvas !== null) {
      var cur = idleSnap(I);
      if (cur !== null) {
        var sim = I.snap !== null && I.snap.length === cur.length ? 1 - changed(cur, I.snap) / (cur.length / 4) : 0;
        for (var j = 0; j < upto; j++) if (idx[j] >= 0) I.pixels[idx[j]] = sim;
        I.snap = cur;
      }
      idx.splice(0, upto);
    }
    if (raf) raf(idleTick);
  }
  function idleStart(sel) {
    var c = idleCanvas(sel);
    IDLE = { t0: now(), seq: [], bytes: [], pixels: [], prev: null, scan: written, waiting: [],
      canvas: HTMLCanvas && c instanceof HTMLCanvas ? c : null, snap: null, checks: 0, checkMs: 0,
      pixelsWhy: null, bytesWhy: null };
    if (IDLE.canvas === null) IDLE.pixelsWhy = 'no canvas' + (sel ? ' matching ' + sel : '') + ' on the page';
    IDLE.snap = idleSnap(IDLE);
    if (raf) raf(idleTick);
    return IDLE.t0;
  }
  function idleStop() {
    var I = IDLE;
    if (I === null) return null;
    idleTick();
    IDLE = null;
    // Messages no painted frame followed drew nothing: no pixel changed.
    for (var i = 0; i < I.pixels.length; i++) if (I.pixels[i] === null && I.canvas !== null) I.pixels[i] = 1;
    return { t0: I.t0, t1: now(), seq: I.seq, bytes: I.bytes, pixels: I.canvas === null ? null : I.pixels,
      canvas: I.canvas === null ? null : canvasIndex(I.canvas), width: I.canvas === null ? 0 : I.canvas.width,
      height: I.canvas === null ? 0 : I.canvas.height, checks: I.checks, check_ms: I.checkMs,
      pixels_why: I.pixelsWhy, bytes_why: I.bytesWhy };
  }

  // ---- cold start: the socket's 'open', and a region of a canvas until it is no longer
  // blank (every pixel alike: nothing drawn, or one loading colour), checked on each
  // animation frame from the first; one record when it stops being blank, then no more
  // reads. The region is in CSS px of the canvas. ----
  var EV_OPEN = NAMES.length;
  NAMES.push('open');
  NAME.open = EV_OPEN;
  function onSocketOpen() {
    push(KIND_OPEN, now(), 0, CLS_OTHER, EV_OPEN, 1, socketIndex(this));
  }
  function regionInCanvas(c, r) {
    var b = c.getBoundingClientRect();
    var sx = b.width > 0 ? c.width / b.width : 1, sy = b.height > 0 ? c.height / b.height : 1;
    var x0 = Math.max(0, Math.floor(r[0] * sx)), y0 = Math.max(0, Math.floor(r[1] * sy));
    var x1 = Math.min(c.width, Math.ceil((r[0] + r[2]) * sx)), y1 = Math.min(c.height, Math.ceil((r[1] + r[3]) * sy));
    return x1 > x0 && y1 > y0 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : null;
  }
  function distinctPixels(px) {
    var n = 0;
    for (var i = 4; i < px.length; i += 4) {
      if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2] || px[i + 3] !== px[3]) n++;
    }
    return n;
  }
  if (cfg.startup && cfg.startup.region && raf && HTMLCanvas) {
    var SR = cfg.startup;
    var regionFrame = function () {
      var c = null;
      try { c = SR.canvas ? document.querySelector(SR.canvas) : document.querySelector('canvas'); } catch (err) { c = null; }
      var g = c instanceof HTMLCanvas ? regionInCanvas(c, SR.region) : null;
      var n = 0;
      if (g !== null) {
        try { n = distinctPixels(readRegion(c, g)); } catch (why) { n = 0; }
      }
      if (n > 0) push(KIND_REGION, now(), n, CLS_OTHER, EV_RAF, 1, canvasIndex(c));
      else raf(regionFrame);
    };
    raf(regionFrame);
  }

  // ---- the API the Rust side calls ----
  function drain() {
    var from = drained, lost = 0;
    if (written - from > cap) { lost = written - cap - from; from = written - cap; }
    var n = written - from;
    var kind = new Array(n), t = new Array(n), size = new Array(n), cls = new Array(n),
      ev = new Array(n), tr = new Array(n), tgt = new Array(n), ref = new Array(n);
    for (var k = 0; k < n; k++) {
      var i = (from + k) % cap;
      kind[k] = colKind[i]; t[k] = colT[i]; size[k] = colSize[i]; cls[k] = colCls[i];
      ev[k] = colEv[i]; tr[k] = colTr[i]; tgt[k] = colTgt[i]; ref[k] = colRef[i];
    }
    drained = written;
    return {
      seq0: from, dropped: lost, written: written, cleared_at: clearedAt, sockets: sockets,
      names: NAMES, kind: kind, t: t, size: size, cls: cls, ev: ev, trusted: tr, target: tgt, ref: ref
    };
  }
  function clear() {
    drained = written;
    clearedAt = written;
    waitFloor = now();
    return written;
  }
  function stats() {
    return { written: written, drained: drained, cleared_at: clearedAt, capacity: cap, sockets: sockets, canvases: canvases,
      watching: pending.length, last_verdict: lastVerdict };
  }
  Object.defineProperty(window, '__arenaRecorder', {
    value: Object.freeze({
      drain: drain,
      clear: clear,
      stats: stats,
      wait: wait,
      probeAnswer: probeAnswer,
      waitAnswer: waitAnswer,
      sham: sham,
      typeRegions: typeRegions,
      probeRegion: probeRegion,
      probeOracleCost: probeOracleCost,
      // Turns the oracle off (a named fallback to the reply oracle).
      answerOff: function () { ORACLE = null; pending.length = 0; },
      takeDelivered: function () { var d = delivered; delivered = []; return d; },
      canvasIndex: function (el) { return el ? canvasIndex(el) : NO_TARGET; },
      // The idle window's similarity of consecutive frames (see idleStart above).
      idleStart: idleStart,
      idleStop: idleStop,
      // Benchmark only: runs the send-recording path n times, returns ms, then clears.
      probeSendPath: function (n, data) { return sendPathProbe ? sendPathProbe(n, data) : null; }
    }),
    enumerable: false, configurable: false, writable: false
  });
})
