// arena-perf report: renders the page from its two inline data blocks. #data is exactly
// `arena-perf compare --format json`; #context holds the runs' meta and loops. Text from
// files only ever enters the DOM as text (textContent, attribute values), never as markup.
"use strict";
window.__reportErrors = [];
window.addEventListener("error", (e) => window.__reportErrors.push(String(e.message || e)));
window.addEventListener("unhandledrejection", (e) => window.__reportErrors.push(String(e.reason)));
(function () {
  const origError = console.error;
  console.error = function (...args) {
    window.__reportErrors.push(args.map(String).join(" "));
    origError.apply(console, args);
  };
})();

const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
  "#e377c2", "#005f73", "#bcbd22", "#17becf"];
const SVGNS = "http://www.w3.org/2000/svg";

// --- formatting: the same rules as arena_report::fmt and arena_compare's cells ---------
// Rust's `{:.d}`: the exact decimal value of the double rounded to d places, an exact tie
// to even (0.25 -> "0.2", 2.5 -> "2"), where toFixed rounds a tie up.
function fixed(x, d) {
  const neg = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  const full = a.toFixed(100);
  const dot = full.indexOf(".");
  let s = a.toFixed(d);
  if (/^50*$/.test(full.slice(dot + 1 + d))) {
    const kept = full.slice(0, d > 0 ? dot + 1 + d : dot);
    if (Number(kept[kept.length - 1]) % 2 === 0) s = kept;
  }
  return (neg ? "-" : "") + s;
}
// Rust's f64::round: half away from zero.
const roundAway = (x) => Math.sign(x) * Math.round(Math.abs(x));
function fmtCount(n) {
  const r = roundAway(n);
  const neg = r < 0;
  const d = String(Math.abs(r));
  let out = "";
  for (let i = 0; i < d.length; i++) {
    if (i > 0 && (d.length - i) % 3 === 0) out += ",";
    out += d[i];
  }
  return (neg ? "-" : "") + out;
}
function fmtMs(ms) {
  if (ms === null || !isFinite(ms)) return "-";
  if (Math.abs(ms) >= 1000) return fmtCount(ms) + "ms";
  return fixed(ms, 1) + "ms";
}
function fmtMsSigned(ms) {
  if (ms === null || !isFinite(ms)) return "-";
  const s = fmtMs(Math.abs(ms));
  return ms < 0 ? "\u2212" + s : "+" + s;
}
function fmtPct(p) {
  if (p === null || !isFinite(p)) return "-";
  const digits = Math.abs(p) < 10 ? 1 : 0;
  return p < 0 ? "\u2212" + fixed(-p, digits) + " %" : "+" + fixed(p, digits) + " %";
}
function fmtP(p) {
  if (p === null || !isFinite(p)) return "-";
  return p < 0.001 ? "<0.001" : fixed(p, 3);
}
const isReal = (v) => v === "higher" || v === "lower";
// What a change that is not real reads: "=" the same (its interval within the threshold),
// "~" unknown, as in the terminal's tables.
const quietMark = (v) => (v === "same" ? "=" : "~");

// --- DOM helpers ------------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined) continue;
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.append(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}
const dataValue = (v) => (v === null || v === undefined ? "null" : String(v));

// A figure of the comparison: a span naming where in #data its value comes from.
function fig(kind, metric, stat, column, field, value, text) {
  return el("span", {
    class: "fig", "data-kind": kind, "data-metric": metric, "data-stat": stat,
    "data-column": column, "data-field": field, "data-value": dataValue(value),
  }, text);
}

// --- the comparison ---------------------------------------------------------------------
function findingMarks(findings) {
  const marks = new Map(); // key -> [numbers]
  findings.forEach((f, i) => {
    const key = [f.column ?? "", f.metric ?? "", f.stat ?? ""].join("\u0000");
    if (!marks.has(key)) marks.set(key, []);
    marks.get(key).push(i + 1);
  });
  // A column's findings that name no metric (idle, unanswered, run warnings) go beside
  // its header: the counts they concern are in the frames and runs tables.
  const header = new Map();
  findings.forEach((f, i) => {
    if (f.column !== null && f.metric === null) header.set(f.column, (header.get(f.column) || []).concat([i + 1]));
  });
  return (column, metric, stat) => {
    const got = metric === null
      ? header.get(column) || []
      : marks.get([column ?? "", metric ?? "", stat ?? ""].join("\u0000")) || [];
    return got.map((n) => el("a", {
      class: "mark", href: "#finding-" + n, title: findings[n - 1].message,
      "data-finding": String(n),
    }, "\u26a0" + n));
  };
}

function renderCompare(data, ctx) {
  const cols = data.columns;
  const base = data.baseline;
  const others = cols.filter((c) => c !== base);
  const marks = findingMarks(data.findings);
  const level = Math.round(ctx.level_pct);
  document.getElementById("subtitle").textContent =
    `${others.join(", ")} against ${base} (${data.by === "arm" ? "runs of an arm pooled" : "one column per run"}); ` +
    `warm answered loops, ${data.unit}; ${ctx.runs.length} runs`;

  const head = el("tr", {}, el("th", {}, ""));
  const colHead = (text, column) => el("th", { "data-column": column }, text, ...marks(column, null, null));
  head.append(colHead(base, base));
  for (const c of others) {
    head.append(colHead(c, c), el("th", {}, "\u0394 " + c), el("th", {}, `${level}% CI ${c}`),
      el("th", {}, "p " + c));
  }
  const table = el("table", { id: "compare-table" }, el("thead", {}, head));
  const body = el("tbody");
  table.append(body);
  const order = ctx.metric_order.filter((m) => m in data.metrics)
    .concat(Object.keys(data.metrics).filter((m) => !ctx.metric_order.includes(m)));
  for (const m of order) {
    const md = data.metrics[m];
    ["p50", "p90", "p99", "n"].forEach((stat, si) => {
      const tr = el("tr", { class: si === 0 ? "metric-first" : undefined, "data-row": `${m} ${stat}` });
      tr.append(el("th", {}, `${m} ${stat}`));
      const valueCell = (c) => {
        const v = md[stat] ? md[stat][c] : undefined;
        // A quantile is null in #data when it lands on an unanswered loop (censored at
        // the window) or when there is no loop at all: n tells them apart.
        const beyond = v === null && md.n && md.n[c] > 0;
        const text = stat === "n" ? (v === null || v === undefined ? "-" : fmtCount(v))
          : beyond ? "> window" : fmtMs(v);
        return el("td", { class: "num" }, fig("value", m, stat, c, undefined, v ?? null, text),
          ...marks(c, m, stat));
      };
      tr.append(valueCell(base));
      for (const c of others) {
        tr.append(valueCell(c));
        const ch = md.changes && md.changes[c];
        if (stat === "n") {
          const mw = ch ? ch.mann_whitney_p : null;
          tr.append(el("td", {}), el("td", { class: "note" }, "U test"),
            el("td", { class: "num" }, fig("change", m, "mann_whitney_p", c, undefined, mw, fmtP(mw))));
          continue;
        }
        const q = ch && ch[stat];
        if (!q) {
          tr.append(el("td", {}, "-"), el("td", {}, "-"), el("td", {}, "-"));
          continue;
        }
        const f = (field, text) => fig("change", m, stat, c, field, q[field], text);
        const real = isReal(q.verdict);
        tr.append(el("td", { class: "num" + (real ? " real-" + q.verdict : " noise") },
          f("delta_pct", fmtPct(q.delta_pct)), " (", f("delta", fmtMsSigned(q.delta)), ") ",
          f("verdict", real ? q.verdict : quietMark(q.verdict)), " ",
          f("beyond_window", q.beyond_window ? "beyond the window" : "")));
        tr.append(el("td", { class: "num" }, f("ci_low", fmtMsSigned(q.ci_low)), " \u2026 ",
          f("ci_high", fmtMsSigned(q.ci_high))));
        tr.append(el("td", { class: "num" }, f("p", fmtP(q.p))));
      }
      body.append(tr);
    });
  }
  document.getElementById("compare-tables").append(table);

  const list = document.getElementById("findings");
  data.findings.forEach((f, i) => {
    const where = [f.column, [f.metric, f.stat].filter(Boolean).join(" ")].filter(Boolean).join(", ");
    list.append(el("li", { id: "finding-" + (i + 1), value: String(i + 1), "data-code": f.code },
      el("code", {}, f.code), where ? ` ${where}: ` : " ", f.message));
  });
  document.getElementById("legend").textContent =
    "\u0394: candidate \u2212 baseline of the same quantile (type 7), over every warm loop: " +
    "an unanswered one counts as slower than every answer (> window when a quantile lands on " +
    "one). CI: " + data.interval_method + ". p: two-sided bootstrap p of no change, " +
    "Holm-adjusted over the column's checks. ~: not real (needs p < \u03b1 and a change past " +
    "the noise bar). \u26a0: a finding about the measurement, listed above.";
}

// --- loops and plots --------------------------------------------------------------------
function loopsOf(ctx) {
  const f = ctx.loops.fields;
  return ctx.loops.rows.map((r) => Object.fromEntries(f.map((k, i) => [k, r[i]])));
}

function loopText(ctx, columns, l) {
  const run = ctx.runs[l.run];
  const lines = [
    `${columns[l.column]}, run ${run.number}: loop ${l.index} (${l.event}${l.label ? ", " + l.label : ""})`,
    `outcome ${l.outcome}${l.cold ? ", cold" : ""}`,
  ];
  for (const k of ["inputToSocket", "sendToRecv", "recvToDraw", "inputToPaint", "inputToPixels"]) {
    if (l[k] !== null) lines.push(`${k} ${fmtMs(l[k])}`);
  }
  const t = ["t_input", "t_send", "t_recv", "t_draw", "t_paint"]
    .filter((k) => l[k] !== null).map((k) => `${k.slice(2)} ${l[k].toFixed(1)}`);
  lines.push("page clock, ms: " + t.join(", "));
  lines.push(`reply ${fmtCount(l.reply_bytes)}B in ${l.reply_frames} frame${l.reply_frames === 1 ? "" : "s"}`);
  return lines.join("\n");
}

const tip = () => document.getElementById("tip");
function hover(node, text) {
  node.append(svg("title", {}, text));
  node.addEventListener("mouseenter", (e) => {
    const t = tip();
    t.textContent = text;
    t.hidden = false;
    t.style.left = e.clientX + 12 + "px";
    t.style.top = e.clientY + 12 + "px";
  });
  node.addEventListener("mouseleave", () => { tip().hidden = true; });
}

function logScale(lo, hi, a, b) {
  const l0 = Math.log10(lo), l1 = Math.log10(hi);
  const span = l1 - l0 || 1;
  return (v) => a + ((Math.log10(v) - l0) / span) * (b - a);
}
function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * Math.pow(10, e);
      if (v >= lo && v <= hi) out.push(v);
    }
  }
  return out;
}
const tickText = (v) => (v >= 1 ? String(v) : v.toPrecision(1)) + "ms";

function frame(title, W, H, P) {
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  s.append(svg("title", {}, title));
  s.append(svg("text", { x: P.l, y: 16, style: "font-size:13px;fill:#1f2328" }, title));
  return s;
}

function legend(s, columns, x, y) {
  columns.forEach((c, i) => {
    s.append(svg("rect", { x, y: y + i * 16, width: 10, height: 10, fill: PALETTE[i % PALETTE.length] }));
    s.append(svg("text", { x: x + 14, y: y + i * 16 + 9 }, c));
  });
}

function drawPlots(ctx, columns, loops, metric) {
  const W = 1000, H = 340, P = { l: 60, r: 160, t: 28, b: 36 };
  const inFigures = (l) => l[metric] !== null && l[metric] > 0 && (ctx.include_cold || !l.cold);
  const all = loops.filter((l) => l[metric] !== null && l[metric] > 0);
  const cdfBox = document.getElementById("cdf");
  const tlBox = document.getElementById("timeline");
  cdfBox.replaceChildren();
  tlBox.replaceChildren();
  if (all.length === 0) {
    cdfBox.append(el("p", { class: "note" }, `No loop has ${metric}.`));
    return;
  }
  const vals = all.map((l) => l[metric]);
  const lo = Math.min(...vals) / 1.2, hi = Math.max(...vals) * 1.2;

  // CDF: per column, the loops in the figures, by value; log x.
  const s = frame(`${metric}: CDF per column (log x)`, W, H, P);
  const x = logScale(lo, hi, P.l, W - P.r);
  const y = (f) => H - P.b - f * (H - P.t - P.b);
  for (const v of logTicks(lo, hi)) {
    s.append(svg("line", { class: "grid", x1: x(v), x2: x(v), y1: P.t, y2: H - P.b }));
    s.append(svg("text", { x: x(v), y: H - P.b + 14, "text-anchor": "middle" }, tickText(v)));
  }
  for (const f of [0, 0.5, 0.9, 1]) {
    s.append(svg("line", { class: "grid", x1: P.l, x2: W - P.r, y1: y(f), y2: y(f) }));
    s.append(svg("text", { x: P.l - 6, y: y(f) + 4, "text-anchor": "end" }, f === 0.5 ? "p50" : f === 0.9 ? "p90" : String(f)));
  }
  s.append(svg("line", { class: "axis", x1: P.l, x2: W - P.r, y1: H - P.b, y2: H - P.b }));
  s.append(svg("line", { class: "axis", x1: P.l, x2: P.l, y1: P.t, y2: H - P.b }));
  columns.forEach((c, ci) => {
    const pts = loops.filter((l) => l.column === ci && inFigures(l)).sort((a, b) => a[metric] - b[metric]);
    const color = PALETTE[ci % PALETTE.length];
    const n = pts.length;
    let d = "";
    pts.forEach((l, i) => { d += `${i ? "L" : "M"}${x(l[metric]).toFixed(1)},${y(i / n).toFixed(1)}V${y((i + 1) / n).toFixed(1)}`; });
    if (d) s.append(svg("path", { d, fill: "none", stroke: color, "stroke-width": 1.5 }));
    pts.forEach((l, i) => {
      const c0 = svg("circle", { cx: x(l[metric]).toFixed(1), cy: y((i + 1) / n).toFixed(1), r: 3.5, fill: color,
        "data-plot": "cdf", "data-column": c, "data-loop": String(l.index) });
      hover(c0, loopText(ctx, columns, l) + `\nrank ${i + 1} of ${n}`);
      s.append(c0);
    });
  });
  legend(s, columns, W - P.r + 12, P.t);
  cdfBox.append(s);

  // Timeline: every loop with the metric by click index; log y; cold ones hollow.
  const t = frame(`${metric} per loop, by loop index (log y; hollow: cold)`, W, H, P);
  const maxIdx = Math.max(1, ...all.map((l) => l.index));
  const tx = (i) => P.l + (i / maxIdx) * (W - P.l - P.r);
  const ty = logScale(lo, hi, H - P.b, P.t);
  for (const v of logTicks(lo, hi)) {
    t.append(svg("line", { class: "grid", x1: P.l, x2: W - P.r, y1: ty(v), y2: ty(v) }));
    t.append(svg("text", { x: P.l - 6, y: ty(v) + 4, "text-anchor": "end" }, tickText(v)));
  }
  const step = Math.max(1, Math.ceil(maxIdx / 10));
  for (let i = 0; i <= maxIdx; i += step) {
    t.append(svg("text", { x: tx(i), y: H - P.b + 14, "text-anchor": "middle" }, String(i)));
  }
  t.append(svg("line", { class: "axis", x1: P.l, x2: W - P.r, y1: H - P.b, y2: H - P.b }));
  t.append(svg("line", { class: "axis", x1: P.l, x2: P.l, y1: P.t, y2: H - P.b }));
  for (const l of all) {
    const color = PALETTE[l.column % PALETTE.length];
    const c0 = svg("circle", { cx: tx(l.index).toFixed(1), cy: ty(l[metric]).toFixed(1), r: 3.5,
      fill: l.cold ? "none" : color, stroke: color, "stroke-width": 1.5,
      "data-plot": "timeline", "data-column": columns[l.column], "data-loop": String(l.index) });
    hover(c0, loopText(ctx, columns, l));
    t.append(c0);
  }
  legend(t, columns, W - P.r + 12, P.t);
  tlBox.append(t);
}

function renderPlots(ctx, columns) {
  const loops = loopsOf(ctx);
  const sel = document.getElementById("plot-metric");
  for (const m of ctx.metric_order) sel.append(el("option", { value: m }, m));
  sel.value = ctx.metric_order.includes(ctx.plot_metric) ? ctx.plot_metric : ctx.metric_order[0];
  sel.addEventListener("change", () => drawPlots(ctx, columns, loops, sel.value));
  drawPlots(ctx, columns, loops, sel.value);
  const thinned = Object.entries(ctx.thinned);
  document.getElementById("thinned").textContent = thinned.length
    ? "The plots draw an even sample of 2,000 loops of " + thinned.map(([c, n]) => `${c} (of ${fmtCount(n)})`).join(", ") + "; the tables are of every loop."
    : "";
}

// --- frames and runs ----------------------------------------------------------------------
function table(headers, rows, id) {
  const t = el("table", { id }, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", {}, h)))));
  const b = el("tbody");
  for (const r of rows) b.append(el("tr", {}, ...r.map((c) => (c instanceof Node ? el("td", {}, c) : el("td", { class: typeof c === "number" ? "num" : undefined }, typeof c === "number" ? fmtCount(c) : String(c))))));
  t.append(b);
  return t;
}

function renderFrames(ctx) {
  const runs = ctx.runs;
  const dirs = ["server_to_client", "client_to_server"];
  const hasWire = runs.some((r) => r.meta.wire && dirs.some((d) => r.meta.wire[d]));
  if (!hasWire && runs.every((r) => !r.meta.summary.frames_received)) {
    document.getElementById("frames").hidden = true;
    return;
  }
  const headers = ["column", "run", "frames received", "bytes received", "bytes sent"];
  if (hasWire) for (const d of dirs) headers.push(`wire ${d} frames`, `${d} payload B`, `${d} app B`);
  const rows = runs.map((r) => {
    const s = r.meta.summary;
    const row = [r.column, String(r.number), s.frames_received, s.bytes_received, s.bytes_sent];
    if (hasWire) {
      for (const d of dirs) {
        const w = r.meta.wire && r.meta.wire[d];
        row.push(...(w ? [w.frames, w.frame_payload_bytes, w.app_bytes] : ["-", "-", "-"]));
      }
    }
    return row;
  });
  document.getElementById("frames-table").append(table(headers, rows, "frames-of-runs"));
}

// One table per `--split`, in the shape of `compare`'s: a line per row and column, the
// change against the baseline's same row, and the share of answers over the size.
function renderBreakdowns(data) {
  const list = data.breakdowns || [];
  if (!list.length) return;
  document.getElementById("breakdowns").hidden = false;
  const host = document.getElementById("breakdown-tables");
  const many = (b) => b.columns.length > 1;
  const kb = (n) => (n % 1024 === 0 ? `${n / 1024}KB` : `${fmtCount(n)}B`);
  const delta = (q) => (q ? `${fmtPct(q.delta_pct)} (${fmtMsSigned(q.delta)})${isReal(q.verdict) ? "" : " " + quietMark(q.verdict)}` : "-");
  list.forEach((b, i) => {
    const headers = [b.split, ...(many(b) ? [data.by] : []), "loops", "n", "p50", "p90", "p99",
      ...(many(b) ? ["\u0394 p50", "\u0394 p90", "\u0394 p99"] : []), "unanswered", "claimed", "cold", "\u2265" + kb(b.reply_over_bytes)];
    const rows = b.cells.map((c) => {
      const base = c.column === b.baseline;
      const d = many(b) ? ["p50", "p90", "p99"].map((s) => (base ? "" : delta(c.changes && c.changes[s]))) : [];
      return [c.row, ...(many(b) ? [c.column] : []), c.loops, c.n, fmtMs(c.p50), fmtMs(c.p90), fmtMs(c.p99), ...d,
        c.unanswered, c.claimed, c.cold, c.answered ? `${fmtCount(c.replies_over)} of ${fmtCount(c.answered)}` : "-"];
    });
    host.append(el("h3", {}, `${b.metric} by ${b.split}, ${b.unit}`), table(headers, rows, "breakdown-" + i));
  });
}

function answerLabel(a) {
  if (!a) return "-";
  let s = a.oracle;
  if (a.detail) s += ` (${a.detail})`;
  if (a.fallback) s += `, fell back from ${a.requested}: ${a.fallback}`;
  return s;
}

// One column per run, one row per fact; knobs that differ between runs are marked.
function renderRuns(ctx) {
  const runs = ctx.runs;
  const name = (r) => `${r.column}${runs.filter((x) => x.column === r.column).length > 1 ? ", run " + r.number : ""}`;
  const facts = [
    ["arm", (m) => m.arm],
    ["status", (m) => m.status + (m.status_message ? `: ${m.status_message}` : "")],
    ["started_at", (m) => m.started_at],
    ["ended_at", (m) => m.ended_at],
    ["Chromium", (m) => m.chromium_version],
    ["host", (m) => `${m.host.cores} cores, ${m.host.kernel}`],
    ["answer oracle", (m) => answerLabel(m.answer)],
    ["socket source", (m) => m.socket_source],
    ["browser", (m) => m.browser ? `dpr ${m.browser.dpr}, viewport ${m.browser.viewport_w}x${m.browser.viewport_h}, CPU slowdown ${m.browser.cpu_throttle}x` : "-"],
    ["loops (answered / unanswered / claimed / cold)", (m) => {
      const s = m.summary;
      return `${fmtCount(s.loops)} (${fmtCount(s.answered)} / ${fmtCount(s.unanswered)} / ${fmtCount(s.claimed || 0)} / ${fmtCount(s.cold)})`;
    }],
    ["pilot", (m) => `${m.pilot_file || "built-in"} (${m.pilot_hash.slice(0, 12)})`],
    ["url", (m) => m.url],
    ["seed", (m) => String(m.seed)],
    ["arena-perf", (m) => m.arena_perf_version],
    ["warnings", (m) => m.warnings.length ? m.warnings.map((w) => `${w.code}: ${w.message}`).join("\n") : "-"],
  ];
  const knobs = [...new Set(runs.flatMap((r) => Object.keys(r.meta.knobs)))].sort();
  const t = el("table", { id: "runs-of-report" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), ...runs.map((r) => el("th", { "data-column": r.column }, name(r))))));
  const b = el("tbody");
  for (const [label, f] of facts) {
    b.append(el("tr", { "data-fact": label }, el("th", {}, label), ...runs.map((r) => el("td", { class: "pre" }, f(r.meta)))));
  }
  for (const k of knobs) {
    const vals = runs.map((r) => r.meta.knobs[k] ?? "-");
    const differs = new Set(vals).size > 1;
    b.append(el("tr", { "data-knob": k, class: differs ? "differs" : undefined },
      el("th", {}, el("code", {}, k), differs ? " (differs)" : ""), ...vals.map((v) => el("td", {}, v))));
  }
  t.append(b);
  document.getElementById("runs-table").append(t);
  document.getElementById("runs-note").textContent = "Knobs are the target's settings for the run; rows marked (differs) are what the arms change.";
}

function main() {
  const data = JSON.parse(document.getElementById("data").textContent);
  const ctx = JSON.parse(document.getElementById("context").textContent);
  renderCompare(data, ctx);
  renderBreakdowns(data);
  renderPlots(ctx, data.columns);
  renderFrames(ctx);
  renderRuns(ctx);
  document.documentElement.dataset.rendered = "ok";
}

try {
  main();
} catch (e) {
  window.__reportErrors.push(String(e && e.stack || e));
  document.querySelector("main").prepend(el("p", { class: "err" }, "The report could not be drawn: " + e));
}
