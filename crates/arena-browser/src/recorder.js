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

  var KIND_INPUT = 0, KIND_COALESCED = 1, KIND_SEND = 2, KIND_RECV = 3, KIND_DRAW = 4, KIND_PAINT = 5;
  var CLS_OTHER = 0, CLS_INPUT = 1, CLS_ACK = 2;

  var DISCRETE = ['mousedown', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu',
    'keydown', 'keyup', 'pointerdown', 'pointerup', 'touchstart', 'touchend'];
  var COALESCED = ['mousemove', 'pointermove', 'pointerrawupdate', 'touchmove', 'wheel'];
  var DRAWS = ['drawImage', 'putImageData', 'fillRect', 'strokeRect', 'clearRect',
    'fillText', 'strokeText', 'fill', 'stroke'];
  var NAMES = DISCRETE.concat(COALESCED, DRAWS, ['binary', 'text', 'raf']);
  var NAME = Object.create(null);
  for (var n = 0; n < NAMES.length; n++) NAME[NAMES[n]] = n;
  var EV_BINARY = NAME.binary, EV_TEXT = NAME.text, EV_RAF = NAME.raf;

  function push(kind, t, size, cls, ev, trusted, target) {
    var i = written % cap;
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
      out.push({
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
  function looseEq(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a === b;
    return JSON.stringify(a) === JSON.stringify(b);
  }
  function hits(m, data, size, parsed) {
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
    for (var i = 0; i < INPUT.length; i++) if (hits(INPUT[i], data, size, parsed)) return CLS_INPUT;
    for (var j = 0; j < ACK.length; j++) if (hits(ACK[j], data, size, parsed)) return CLS_ACK;
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
      // Checked after this task: the app's own message listeners, which draw, run after
      // this one. A burst of messages arms one check, not one each.
      if (waiter !== null && waiter.due > t) rearm(0);
    };
    var Shim = new Proxy(OrigWS, {
      construct: function (target, args, newTarget) {
        var ws = Reflect.construct(target, args, newTarget);
        socketIndex(ws);
        origAdd.call(ws, 'message', onMessage);
        return ws;
      }
    });
    var recordSend = function (ws, data, t) {
      var size = sizeOf(data);
      push(KIND_SEND, t, size, classify(data, size), typeof data === 'string' ? EV_TEXT : EV_BINARY, 1, socketIndex(ws));
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
  var raf = window.requestAnimationFrame ? window.requestAnimationFrame.bind(window) : null;
  var paintPending = false;
  var lastCanvas = NO_TARGET;
  var onFrame = function () {
    paintPending = false;
    var t = now();
    push(KIND_PAINT, t, 0, CLS_OTHER, EV_RAF, 1, lastCanvas);
    lastActivity = t;
    if (waiter !== null) check();
  };
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
          if (!paintPending && raf) { paintPending = true; raf(onFrame); }
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
  };
  var onCoalesced = function (e) {
    push(KIND_COALESCED, e.timeStamp, 0, CLS_OTHER, NAME[e.type], e.isTrusted ? 1 : 0, inputTarget(e));
  };
  var opts = { capture: true, passive: true };
  DISCRETE.forEach(function (t) { window.addEventListener(t, onDiscrete, opts); });
  COALESCED.forEach(function (t) { window.addEventListener(t, onCoalesced, opts); });

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
    if (t >= w.deadline) return finish(null);
    var next = w.deadline - t;
    if (lastActivity > waitFloor && !paintPending) {
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
      waiter = { settle: Math.max(0, +settle || 0), deadline: now() + Math.max(0, +timeout || 0), resolve: resolve, timer: null, due: 0 };
      check();
    });
  }

  // ---- the API the Rust side calls ----
  function drain() {
    var from = drained, lost = 0;
    if (written - from > cap) { lost = written - cap - from; from = written - cap; }
    var n = written - from;
    var kind = new Array(n), t = new Array(n), size = new Array(n), cls = new Array(n),
      ev = new Array(n), tr = new Array(n), tgt = new Array(n);
    for (var k = 0; k < n; k++) {
      var i = (from + k) % cap;
      kind[k] = colKind[i]; t[k] = colT[i]; size[k] = colSize[i]; cls[k] = colCls[i];
      ev[k] = colEv[i]; tr[k] = colTr[i]; tgt[k] = colTgt[i];
    }
    drained = written;
    return {
      seq0: from, dropped: lost, written: written, cleared_at: clearedAt, sockets: sockets,
      names: NAMES, kind: kind, t: t, size: size, cls: cls, ev: ev, trusted: tr, target: tgt
    };
  }
  function clear() {
    drained = written;
    clearedAt = written;
    waitFloor = now();
    return written;
  }
  function stats() {
    return { written: written, drained: drained, cleared_at: clearedAt, capacity: cap, sockets: sockets, canvases: canvases };
  }
  Object.defineProperty(window, '__arenaRecorder', {
    value: Object.freeze({
      drain: drain,
      clear: clear,
      stats: stats,
      wait: wait,
      canvasIndex: function (el) { return el ? canvasIndex(el) : NO_TARGET; },
      // Benchmark only: runs the send-recording path n times, returns ms, then clears.
      probeSendPath: function (n, data) { return sendPathProbe ? sendPathProbe(n, data) : null; }
    }),
    enumerable: false, configurable: false, writable: false
  });
})
