// SPDX-License-Identifier: Apache-2.0
// dpm-collector's console: draws each page from the collector's JSON (console.h), with SVG
// charts and no library. Everything shown is an estimate or a counter; the console never asks
// for a single report. Field names are read defensively: a member the JSON does not carry is
// not drawn, and any "reason", "too_small", "small_sample", "defined": false or coverage flag
// the JSON carries is shown next to its number (never a bare number).
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const main = () => document.getElementById("main");

// ---- small DOM helpers -------------------------------------------------------------------------
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "on") for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
  return e;
}
function sv(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k) e.append(k);
  return e;
}
const fin = (x) => typeof x === "number" && Number.isFinite(x);
const fmt = (x, d = 4) => (fin(x) ? x.toFixed(d) : "–");
const fmtInt = (x) => (fin(x) ? Math.round(x).toLocaleString("en-US") : "–");
const ivl = (ci, d = 4) => (Array.isArray(ci) && fin(ci[0]) && fin(ci[1]) ? `[${fmt(ci[0], d)}, ${fmt(ci[1], d)}]` : null);
const when = (t) => (fin(t) ? new Date(t * 1000).toISOString().replace(".000Z", "Z") : "–");

// Flags of an estimate object, in words: too small, undefined, small sample, coverage, reason.
function flagsOf(o) {
  if (!o || typeof o !== "object") return [];
  const out = [];
  const reason = typeof o.reason === "string" ? o.reason : null;
  if (o.defined === false || o.valid === false) out.push({ cls: "undefined", text: "undefined" + (reason ? ": " + reason : "") });
  else if (o.too_small === true) out.push({ cls: "", text: "too small" + (reason ? ": " + reason : "") });
  else if (reason) out.push({ cls: "", text: reason });
  if (o.small_sample === true) out.push({ cls: "", text: "small sample" });
  for (const [k, v] of Object.entries(o)) {  // coverage flags, whatever their names
    if (/coverage|flag/i.test(k) && v !== null && v !== false && typeof v !== "object" && k !== "reason") {
      out.push({ cls: "", text: `${k.replace(/_/g, " ")}: ${v}` });
    }
  }
  return out;
}
function flagSpans(o) {
  return flagsOf(o).map((f) => el("span", { class: "flag " + f.cls, text: f.text }));
}
// A number with its interval, or the reason it has none. field: the data-field for tests.
function valueCell(o, key, ciKey, digits, field) {
  const v = o ? o[key] : undefined;
  const td = el("td", { class: "num" });
  if (fin(v)) {
    td.append(el("span", { "data-field": field, text: fmt(v, digits) }));
    const ci = ciKey ? ivl(o[ciKey], digits) : null;
    if (ci) td.append(" ", el("span", { class: "muted", "data-field": field + "-ci", text: ci }));
  } else {
    td.append(el("span", { class: "flag undefined", "data-field": field, text: "undefined" }));
  }
  const flags = flagSpans(o);
  if (flags.length) td.append(el("br"), ...flags);
  return td;
}
const groupName = (est, g) => (est && Array.isArray(est.group_names) && est.group_names[g]) || `group ${g}`;

// ---- data: fetch with retry; links to the JSON and CSV of every chart --------------------------
function status(text) {
  const s = document.getElementById("status");
  s.textContent = text || "";
  s.hidden = !text;
}
class HttpError extends Error {
  constructor(code, text) { super(text); this.code = code; }
}
// GET url as JSON. A collector that does not answer (restarting) or answers 503 is retried,
// with the page saying so; other errors are thrown (404, 400: the page shows the reason).
async function api(url) {
  for (let wait = 1; ; wait = Math.min(wait * 2, 8)) {
    let r = null;
    try {
      r = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    } catch (e) {
      r = null;
    }
    if (r && r.status !== 503) {
      status(null);
      if (!r.ok) throw new HttpError(r.status, (await r.text()).trim());
      return r.json();
    }
    status(`The collector is not answering (${r ? "503: " + (await r.text()).trim() : "it may be restarting"}): retrying in ${wait} s.`);
    document.body.dataset.retrying = "1";
    await new Promise((ok) => setTimeout(ok, wait * 1000));
  }
}
function csvText(rows) {
  const cell = (v) => (v === null || v === undefined ? "" : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  return rows.map((r) => r.map(cell).join(",")).join("\n") + "\n";
}
// "data: JSON (the API URL the chart was drawn from) · CSV (the same data as a table)".
function dataLinks(url, name, rowsFn) {
  const csv = el("button", {
    class: "link", type: "button", text: "CSV", "data-csv": name,
    on: { click: () => {
      const a = el("a", { href: URL.createObjectURL(new Blob([csvText(rowsFn())], { type: "text/csv" })), download: name + ".csv" });
      document.body.append(a); a.click(); a.remove();
    } },
  });
  return el("div", { class: "data" }, "data: ", el("a", { href: url, "data-json": name, text: "JSON" }), csv,
    el("span", { class: "muted", text: url }));
}

// ---- charts ----------------------------------------------------------------------------------------
function scale(d0, d1, r0, r1) { return (x) => r0 + ((x - d0) / (d1 - d0 || 1)) * (r1 - r0); }
function frame(w, h, m, xd, yd, xlabel, ylabel, xticks, yticks) {
  const x = scale(xd[0], xd[1], m.l, w - m.r), y = scale(yd[0], yd[1], h - m.b, m.t);
  const g = [];
  for (const t of yticks) {
    g.push(sv("line", { class: "grid", x1: m.l, x2: w - m.r, y1: y(t), y2: y(t) }));
    g.push(sv("text", { x: m.l - 5, y: y(t) + 4, "text-anchor": "end", text: Math.abs(t) >= 100 ? String(Math.round(t)) : String(+t.toFixed(3)) }));
  }
  for (const t of xticks) {
    g.push(sv("text", { x: x(t.v), y: h - m.b + 14, "text-anchor": "middle", text: t.label }));
  }
  g.push(sv("line", { class: "axis", x1: m.l, x2: w - m.r, y1: h - m.b, y2: h - m.b }));
  g.push(sv("line", { class: "axis", x1: m.l, x2: m.l, y1: m.t, y2: h - m.b }));
  g.push(sv("text", { x: (m.l + w - m.r) / 2, y: h - 4, "text-anchor": "middle", text: xlabel }));
  g.push(sv("text", { x: 12, y: (m.t + h - m.b) / 2, transform: `rotate(-90 12 ${(m.t + h - m.b) / 2})`, "text-anchor": "middle", text: ylabel }));
  return { x, y, g };
}
const ticks = (a, b, n) => Array.from({ length: n + 1 }, (_, i) => a + ((b - a) * i) / n);
const pathOf = (pts) => pts.map((p, i) => `${i ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}`).join("");

// The ROC curve with its band (lo/hi per threshold); PR-like curves use the same drawing.
function curveChart(opt) {
  const w = 380, h = 340, m = { l: 46, r: 12, t: 12, b: 38 };
  const f = frame(w, h, m, [0, 1], [0, 1], opt.xlabel, opt.ylabel,
    ticks(0, 1, 5).map((v) => ({ v, label: v.toFixed(1) })), ticks(0, 1, 5));
  const svg = sv("svg", { class: "chart", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": opt.title, "data-chart": opt.name }, f.g);
  if (opt.diagonal) svg.append(sv("line", { class: "diag", x1: f.x(0), y1: f.y(0), x2: f.x(1), y2: f.y(1) }));
  const xs = opt.x || [];
  if (opt.lo && opt.hi && xs.length === opt.lo.length) {
    const up = xs.map((xv, i) => [f.x(xv), f.y(opt.hi[i])]).filter((p) => fin(p[1]));
    const dn = xs.map((xv, i) => [f.x(xv), f.y(opt.lo[i])]).filter((p) => fin(p[1])).reverse();
    if (up.length && dn.length) svg.append(sv("path", { class: "band", "data-band": "1", d: pathOf(up.concat(dn)) + "Z" }));
  }
  const pts = xs.map((xv, i) => [f.x(xv), f.y(opt.y[i])]).filter((p) => fin(p[0]) && fin(p[1]));
  if (pts.length) svg.append(sv("path", { class: "curve", d: pathOf(pts) }));
  return el("figure", {}, svg, el("figcaption", { text: opt.caption }));
}

// Estimates with intervals, one row each (a forest plot): rows [{label, v, lo, hi, small, why}].
function forest(opt) {
  const rows = opt.rows, rowH = 26, w = 560, m = { l: 120, r: 16, t: 10, b: 34 };
  const h = m.t + m.b + rowH * Math.max(rows.length, 1);
  let vals = [];
  for (const r of rows) for (const v of [r.v, r.lo, r.hi]) if (fin(v)) vals.push(v);
  let d0 = opt.domain ? opt.domain[0] : Math.min(...vals, 0), d1 = opt.domain ? opt.domain[1] : Math.max(...vals, 0);
  if (!vals.length) { d0 = 0; d1 = 1; }
  if (opt.fit) { d0 = Math.min(d0, ...vals); d1 = Math.max(d1, ...vals); }
  const pad = (d1 - d0) * 0.05 || 0.05; d0 -= pad; d1 += pad;
  const x = scale(d0, d1, m.l, w - m.r);
  const svg = sv("svg", { class: "chart", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": opt.title, "data-chart": opt.name });
  for (const t of ticks(d0, d1, 5)) {
    svg.append(sv("line", { class: "grid", x1: x(t), x2: x(t), y1: m.t, y2: h - m.b }));
    svg.append(sv("text", { x: x(t), y: h - m.b + 14, "text-anchor": "middle", text: t.toFixed(2) }));
  }
  if (opt.zero !== undefined && opt.zero >= d0 && opt.zero <= d1) {
    svg.append(sv("line", { class: "zero", x1: x(opt.zero), x2: x(opt.zero), y1: m.t, y2: h - m.b }));
  }
  svg.append(sv("text", { x: (m.l + w - m.r) / 2, y: h - 4, "text-anchor": "middle", text: opt.xlabel }));
  rows.forEach((r, i) => {
    const y = m.t + rowH * i + rowH / 2;
    svg.append(sv("text", { x: m.l - 6, y: y + 4, "text-anchor": "end", text: r.label }));
    const cls = r.small ? " small" : "";
    if (fin(r.lo) && fin(r.hi)) svg.append(sv("line", { class: "ci" + cls, "data-ci": r.key, x1: x(r.lo), x2: x(r.hi), y1: y, y2: y }));
    if (fin(r.v)) svg.append(sv("circle", { class: "pt" + cls, cx: x(r.v), cy: y, r: 4 }));
    else svg.append(sv("text", { x: m.l + 6, y: y + 4, text: "undefined" + (r.why ? ": " + r.why : "") }));
  });
  return el("figure", {}, svg, el("figcaption", { text: opt.caption }));
}

// Values over periods with intervals: series [{name, pts: [{x, v, lo, hi, small}]}].
function timeChart(opt) {
  const w = 560, h = 260, m = { l: 52, r: 14, t: 12, b: 38 };
  const xs = opt.xs, all = [];
  for (const s of opt.series) for (const p of s.pts) for (const v of [p.v, p.lo, p.hi]) if (fin(v)) all.push(v);
  let y0 = opt.domain ? opt.domain[0] : Math.min(...all, 0), y1 = opt.domain ? opt.domain[1] : Math.max(...all, 1e-9);
  if (opt.fit && all.length) { y0 = Math.min(...all); y1 = Math.max(...all); const p = (y1 - y0) * 0.1 || 0.05; y0 -= p; y1 += p; }
  const x0 = Math.min(...xs), x1 = Math.max(...xs) + (xs.length === 1 ? 1 : 0);
  const nt = Math.min(xs.length, 8);
  const step = Math.max(1, Math.ceil((x1 - x0) / 7));  // periods: whole numbers only
  const xt = opt.xfmt ? ticks(x0, x1, Math.max(nt - 1, 1)).map((v) => ({ v, label: opt.xfmt(v) }))
    : Array.from({ length: Math.floor((x1 - x0) / step) + 1 }, (_, i) => ({ v: x0 + i * step, label: String(x0 + i * step) }));
  const f = frame(w, h, m, [x0 - 0.5, x1 + 0.5], [y0, y1], opt.xlabel, opt.ylabel, xt, ticks(y0, y1, 4));
  const svg = sv("svg", { class: "chart", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": opt.title, "data-chart": opt.name }, f.g);
  opt.series.forEach((s, k) => {
    const c = "s" + (k % 8), off = (k - (opt.series.length - 1) / 2) * 4;
    const line = s.pts.filter((p) => fin(p.v)).map((p) => [f.x(p.x) + off, f.y(p.v)]);
    if (line.length > 1 && !opt.bars) svg.append(sv("path", { class: "line " + c, d: pathOf(line) }));
    for (const p of s.pts) {
      if (opt.bars && fin(p.v)) {
        const bw = Math.max(2, ((w - m.l - m.r) / Math.max(xs.length, 1)) * 0.6);
        svg.append(sv("rect", { class: "bar " + c, x: f.x(p.x) - bw / 2, width: bw, y: f.y(p.v), height: Math.max(0, f.y(y0) - f.y(p.v)) }));
        continue;
      }
      if (fin(p.lo) && fin(p.hi)) svg.append(sv("line", { class: "ci " + c + (p.small ? " small" : ""), "data-ci": `${s.name}@${p.x}`, x1: f.x(p.x) + off, x2: f.x(p.x) + off, y1: f.y(p.lo), y2: f.y(p.hi) }));
      if (fin(p.v)) svg.append(sv("circle", { class: "pt " + c + (p.small ? " small" : ""), cx: f.x(p.x) + off, cy: f.y(p.v), r: 3 }));
    }
  });
  const legend = el("div", { class: "legend" }, opt.series.map((s, k) => el("span", {}, el("i", { class: "s" + (k % 8) }), s.name)));
  return el("figure", {}, svg, opt.series.length > 1 ? legend : null, el("figcaption", { text: opt.caption }));
}

// ---- pages ---------------------------------------------------------------------------------------
function section(title, ...kids) { return [el("h2", { text: title }), ...kids]; }
function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => (c instanceof Node ? c : el("td", { text: c === null || c === undefined ? "–" : String(c) })))))));
}
function period(secs) {
  if (!fin(secs)) return "–";
  for (const [n, u] of [[86400, "day"], [3600, "hour"], [60, "minute"]]) if (secs % n === 0) return `${secs / n} ${u}${secs / n === 1 ? "" : "s"}`;
  return `${secs} s`;
}
function title(t) { document.title = t + " · dpm-collector console"; return el("h1", { text: t }); }
const campaignTitle = (c) => (c.name ? `${c.name} (campaign ${c.id})` : `Campaign ${c.id}`);

async function pageCampaigns() {
  const q = new URLSearchParams(location.search);
  const page = q.get("page") || "0";
  const url = `/v1/campaigns?page=${encodeURIComponent(page)}`;
  const d = await api(url);
  const rows = d.campaigns.map((c) => [
    el("td", {}, el("a", { href: `/console/campaign/${c.id}`, text: String(c.id) })),
    c.name || "–", c.kind || "campaign", c.mechanism,
    el("td", { class: "num", text: `${fmt(c.eps, 3)} (implemented ${fmt(c.eps_implemented, 5)})` }),
    c.privacy_unit || "–", c.trust_model || "–", period(c.period_seconds),
    el("td", { class: "num", text: String(c.period_now) }),
    c.groups ? String(c.groups) + (Array.isArray(c.group_names) ? ": " + c.group_names.join(", ") : "") : "–",
    el("td", {}, el("a", { href: `/console/campaign/${c.id}`, text: "estimates" }), " · ", el("a", { href: `/console/campaign/${c.id}/time`, text: "over time" })),
  ]);
  const pager = el("div", { class: "pager" },
    d.page > 0 ? el("a", { href: `/console/?page=${d.page - 1}`, text: "← previous" }) : null,
    el("span", { text: `page ${d.page + 1} of ${d.pages} (${d.total} campaigns, at most ${d.page_size} a page)` }),
    d.page + 1 < d.pages ? el("a", { href: `/console/?page=${d.page + 1}`, text: "next →" }) : null);
  main().replaceChildren(title("Campaigns"),
    el("p", { class: "muted", text: "Every campaign this collector runs: what its reports protect (privacy unit), whom it trusts, and the ε a report really spends. Two-aggregator tasks appear here as kind \"task\" once the collector runs them." }),
    table(["id", "name", "kind", "mechanism", "ε per report", "privacy unit", "trust model", "period", "current period", "groups", ""], rows),
    pager, dataLinks(url, "campaigns", () => [["id", "name", "kind", "mechanism", "eps", "eps_implemented", "privacy_unit", "trust_model", "period_seconds", "period_now", "groups"],
      ...d.campaigns.map((c) => [c.id, c.name, c.kind, c.mechanism, c.eps, c.eps_implemented, c.privacy_unit, c.trust_model, c.period_seconds, c.period_now, c.groups])]));
}

function campaignMeta(c) {
  const dl = el("dl", { class: "meta" });
  const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", { text: v }));
  add("mechanism", c.mechanism);
  add("ε per report", `${fmt(c.eps, 4)} (implemented ${fmt(c.eps_implemented, 6)}); budget ${fmt(c.budget, 4)} per device and period`);
  add("privacy unit", c.privacy_unit || "–");
  add("trust model", c.trust_model || "–");
  add("periods", `${period(c.period_seconds)} each, from ${c.start === null ? "first report" : when(c.start)}; current period ${c.period_now}`);
  if (c.groups) add("groups", Array.isArray(c.group_names) ? c.group_names.map((n, g) => `${g}: ${n}`).join(", ") : String(c.groups));
  if (c.metrics && c.metrics.length) add("metrics", c.metrics.join(", "));
  add("fingerprint", c.fingerprint || "–");
  return dl;
}

// The query form of a campaign page (period, or from..to, and confidence): JavaScript navigates.
function rangeForm(base, q, over) {
  const inp = (name, label) => el("label", {}, label, el("input", { name, value: q.get(name) || "", inputmode: name === "confidence" ? "decimal" : "numeric" }));
  const form = el("form", { class: "range" }, over ? null : inp("period", "period"), inp("from", "from period"), inp("to", "to period"),
    inp("confidence", "confidence (0.95)"), el("button", { type: "submit", text: "Show" }));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const i of form.querySelectorAll("input")) if (i.value.trim()) p.set(i.name, i.value.trim());
    location.href = base + (p.toString() ? "?" + p : "");
  });
  return form;
}

function rocSection(est, url) {
  const roc = est.roc;
  const out = section("ROC curve and AUC");
  const t = table(["", "AUC", "interval", "reports"], [[
    "pooled", valueCell(roc, "auc", "auc_ci_total", 4, "auc"),
    el("td", { class: "muted", text: "noise + sampling at " + fmt(est.confidence, 2) + (ivl(roc.auc_ci) ? "; noise only " + ivl(roc.auc_ci) : "") }),
    el("td", { class: "num", text: fmtInt(roc.n) })]]);
  out.push(t);
  if (Array.isArray(roc.fpr) && Array.isArray(roc.tpr)) {
    const sim = Array.isArray(roc.tpr_lo_simultaneous);
    out.push(el("div", { class: "charts" }, curveChart({
      name: "roc", title: "ROC curve", xlabel: "false positive rate", ylabel: "true positive rate", diagonal: true,
      x: roc.fpr, y: roc.tpr, lo: sim ? roc.tpr_lo_simultaneous : roc.tpr_lo, hi: sim ? roc.tpr_hi_simultaneous : roc.tpr_hi,
      caption: `Estimated ROC (${roc.bins} score bins) with its ${sim ? "simultaneous" : "pointwise"} ${fmt(est.confidence, 2)} band; AUC ${fmt(roc.auc, 4)}.`,
    })));
    out.push(dataLinks(url, "roc", () => [["threshold", "fpr", "tpr", "tpr_lo", "tpr_hi", "tpr_lo_simultaneous", "tpr_hi_simultaneous"],
      ...roc.fpr.map((f, i) => [i, f, roc.tpr[i], (roc.tpr_lo || [])[i], (roc.tpr_hi || [])[i], (roc.tpr_lo_simultaneous || [])[i], (roc.tpr_hi_simultaneous || [])[i]])]));
  } else {
    out.push(el("p", {}, ...flagSpans(roc)));
  }
  return out;
}

function rocGroupsSection(est, url) {
  const rg = est.roc_groups, out = section("AUC by group, and the gaps between groups");
  const by = Array.isArray(rg.by_group) ? rg.by_group : [];
  out.push(table(["group", "AUC", "positives", "negatives"], by.map((b) => [
    groupName(est, b.group), valueCell(b, "auc_clipped" in b ? "auc" : "auc", "ci", 4, `auc-group-${b.group}`),
    el("td", { class: "num", text: fmt(b.positives, 1) }), el("td", { class: "num", text: fmt(b.negatives, 1) })])));
  out.push(forest({ name: "auc_groups", title: "AUC by group", xlabel: "AUC", domain: [0, 1], fit: true, zero: 0.5,
    rows: by.map((b) => ({ key: `g${b.group}`, label: groupName(est, b.group), v: b.auc, lo: (b.ci || [])[0], hi: (b.ci || [])[1], small: b.small_sample || b.defined === false, why: b.reason })),
    caption: `Each group's AUC with its ${fmt(est.confidence, 2)} interval (dashed: small sample); the red line is chance (0.5).` }));
  out.push(dataLinks(url, "auc_groups", () => [["group", "name", "auc", "ci_lo", "ci_hi", "defined", "small_sample", "reason"],
    ...by.map((b) => [b.group, groupName(est, b.group), b.auc, (b.ci || [])[0], (b.ci || [])[1], b.defined, b.small_sample, b.reason])]));
  const gaps = Array.isArray(rg.gaps) ? rg.gaps : [];
  const gname = (x) => `${groupName(est, x.g)} − ${groupName(est, x.h)}`;
  out.push(el("h3", { text: "AUC gaps" }));
  out.push(table(["pair", "gap", "interval crosses 0?"], gaps.map((x) => [gname(x), valueCell(x, "gap", "ci", 4, `gap-${x.g}-${x.h}`),
    Array.isArray(x.ci) && fin(x.ci[0]) ? (x.ci[0] <= 0 && x.ci[1] >= 0 ? "yes: no clear gap" : "no") : "–"])));
  out.push(forest({ name: "auc_gaps", title: "AUC gaps", xlabel: "AUC difference", zero: 0, fit: true,
    rows: gaps.map((x) => ({ key: `g${x.g}h${x.h}`, label: gname(x), v: x.gap, lo: (x.ci || [])[0], hi: (x.ci || [])[1], small: x.small_sample || x.defined === false, why: x.reason })),
    caption: "Every pair's gap with its interval; an interval that crosses the red line at 0 does not show a gap." }));
  out.push(dataLinks(url, "auc_gaps", () => [["g", "h", "gap", "ci_lo", "ci_hi", "defined", "small_sample", "reason"],
    ...gaps.map((x) => [x.g, x.h, x.gap, (x.ci || [])[0], (x.ci || [])[1], x.defined, x.small_sample, x.reason])]));
  out.push(...extraSelected(rg, url, "roc_groups"));
  return out;
}

// A selected quantity (the largest gap, ...) that an estimator adds: any member object with an
// interval beside the known ones is drawn as a row, with its flags ("simultaneous" describes the
// pairs' simultaneous intervals: no quantity of its own).
function extraSelected(obj, url, name) {
  const known = new Set(["by_group", "gaps", "groups", "disparities", "roc", "metrics", "simultaneous"]);
  const rows = [];
  for (const [k, v] of Object.entries(obj)) {
    if (known.has(k) || !v || typeof v !== "object" || Array.isArray(v)) continue;
    const val = ["gap", "diff", "value", "auc", "estimate", "abs_diff"].find((f) => fin(v[f]));
    if (!val && !("reason" in v)) continue;
    const ciKey = ["ci", "ci_simultaneous", "ci_selected"].find((f) => Array.isArray(v[f]));
    rows.push([k.replace(/_/g, " "), valueCell(v, val || "value", ciKey, 4, `${name}-${k}`)]);
  }
  return rows.length ? [el("h3", { text: "Selected quantities" }), table(["what", "estimate and interval"], rows)] : [];
}

// A metric's largest disparity: largest_disparity, or a collector's before it max_disparity.
const largestOf = (m) => (m ? ("largest_disparity" in m ? m.largest_disparity : m.max_disparity) : undefined);

function metricSection(est, m, url, k) {
  const out = section(`${(m.metric || "metric").toUpperCase()} by group, and disparities`);
  const gs = Array.isArray(m.groups) ? m.groups : [];
  out.push(table(["group", m.metric, "estimated size", "reports"], gs.map((g) => [groupName(est, g.group),
    valueCell(g, "mean", "ci", 4, `mean-${k}-${g.group}`), el("td", { class: "num", text: fmt(g.size, 0) }), el("td", { class: "num", text: fmtInt(g.reports) })])));
  out.push(forest({ name: `metric_${k}`, title: m.metric, xlabel: m.metric, domain: [0, 1], fit: true,
    rows: gs.map((g) => ({ key: `m${k}g${g.group}`, label: groupName(est, g.group), v: g.mean, lo: (g.ci || [])[0], hi: (g.ci || [])[1], small: g.too_small, why: g.reason })),
    caption: `Each group's ${m.metric} with its ${fmt(est.confidence, 2)} interval (dashed: too small to mean much).` }));
  out.push(dataLinks(url, `metric_${m.metric}`, () => [["group", "name", "mean", "ci_lo", "ci_hi", "size", "reports", "too_small", "reason"],
    ...gs.map((g) => [g.group, groupName(est, g.group), g.mean, (g.ci || [])[0], (g.ci || [])[1], g.size, g.reports, g.too_small, g.reason])]));
  const ds = Array.isArray(m.disparities) ? m.disparities : [];
  const dn = (x) => `${groupName(est, x.g)} − ${groupName(est, x.h)}`;
  out.push(el("h3", { text: "Disparities" }));
  out.push(table(["pair", "difference", "interval crosses 0?"], ds.map((x) => [dn(x), valueCell(x, "diff", "ci", 4, `diff-${k}-${x.g}-${x.h}`),
    Array.isArray(x.ci) && fin(x.ci[0]) ? (x.ci[0] <= 0 && x.ci[1] >= 0 ? "yes: no clear disparity" : "no") : "–"])));
  out.push(forest({ name: `disparities_${k}`, title: "disparities", xlabel: `${m.metric} difference`, zero: 0, fit: true,
    rows: ds.map((x) => ({ key: `m${k}g${x.g}h${x.h}`, label: dn(x), v: x.diff, lo: (x.ci || [])[0], hi: (x.ci || [])[1], small: x.too_small, why: x.reason })),
    caption: "Every pair's difference with its interval; an interval across the red line at 0 shows no clear disparity." }));
  out.push(dataLinks(url, `disparities_${m.metric}`, () => [["g", "h", "diff", "ci_lo", "ci_hi", "too_small", "reason"],
    ...ds.map((x) => [x.g, x.h, x.diff, (x.ci || [])[0], (x.ci || [])[1], x.too_small, x.reason])]));
  // the largest gap with the interval for the largest true gap (largest_disparity); a collector
  // before it wrote max_disparity, the largest estimate with its own pair's interval
  const sel = {};
  for (const [kk, v] of Object.entries(m)) if (!["groups", "disparities", "max_disparity"].includes(kk) && v && typeof v === "object" && !Array.isArray(v)) sel[kk] = v;
  if (!("largest_disparity" in m) && m.max_disparity) sel.largest_disparity = Object.assign({ reason: m.max_disparity_reason }, m.max_disparity);
  out.push(...extraSelected(sel, url, `metric-${k}`));
  const none = "largest_disparity" in m ? !m.largest_disparity && m.largest_disparity_reason : !m.max_disparity && m.max_disparity_reason;
  if (none) out.push(el("p", {}, el("span", { class: "flag", text: "largest disparity: " + none })));
  return out;
}

// Other AUC estimators (dpauc, ustat_*, fedauc_*, and what later issues add): their headline.
function otherAucSection(est) {
  const rows = [];
  for (const key of ["dpauc", "ustat_bins", "ustat_tree", "fedauc"]) {
    const o = est[key];
    if (!o || typeof o !== "object") continue;
    if (o.variants) for (const [vn, v] of Object.entries(o.variants)) rows.push([`${key} (${vn})`, valueCell(v, "auc", "ci", 4, `${key}-${vn}`)]);
    else rows.push([key, valueCell(o, fin(o.auc) ? "auc" : fin(o.tau) ? "tau" : "auc", "ci", 4, key)]);
  }
  return rows.length ? section("AUC", table(["estimator", "estimate and interval"], rows)) : [];
}

// Curves that other issues add (precision-recall, calibration): drawn when the JSON has them.
function extraCurves(est, url) {
  const out = [];
  const pr = est.pr || est.precision_recall;
  if (pr && Array.isArray(pr.recall) && Array.isArray(pr.precision)) {
    out.push(curveChart({ name: "pr", title: "precision-recall", xlabel: "recall", ylabel: "precision", x: pr.recall, y: pr.precision,
      lo: pr.precision_lo, hi: pr.precision_hi, caption: "Precision against recall, with its band." }));
  }
  const cal = est.calibration;
  if (cal && typeof cal === "object" && Array.isArray(cal.predicted) && Array.isArray(cal.observed)) {
    out.push(curveChart({ name: "calibration", title: "calibration", xlabel: "predicted", ylabel: "observed", diagonal: true, x: cal.predicted, y: cal.observed,
      lo: cal.observed_lo, hi: cal.observed_hi, caption: "Observed rate against predicted score, with its band." }));
  }
  return out.length ? section("Precision-recall and calibration", el("div", { class: "charts" }, out), dataLinks(url, "curves", () => [["see the JSON"]])) : [];
}

function rejectsTable(est) {
  const rj = est.rejects && typeof est.rejects === "object" ? Object.entries(est.rejects) : [];
  return rj.length ? table(["reject reason (all periods)", "reports"], rj.map(([r, n]) => [r, el("td", { class: "num", text: fmtInt(n) })]))
    : el("p", { class: "muted", text: "No report of this campaign was rejected." });
}

async function pageCampaign(id) {
  const q = new URLSearchParams(location.search);
  const base = `/console/campaign/${id}`;
  const url = `/v1/campaigns/${id}/estimate${location.search}`;
  const [c, est] = await Promise.all([api(`/v1/campaigns/${id}/info`), api(url)]);
  const which = est.period_from === null ? "all periods" : est.period_from === est.period_to ? `period ${est.period_from}` : `periods ${est.period_from} to ${est.period_to}`;
  const parts = [title(campaignTitle(c)), campaignMeta(c),
    el("p", {}, el("a", { href: `${base}/time`, text: "Estimates over time →" })),
    rangeForm(base, q, false),
    el("p", {}, el("span", { class: "big", text: `${fmtInt(est.reports)} reports` }), ` stored for ${which}; intervals at ${fmt(est.confidence, 2)}.`),
    dataLinks(url, "estimate", () => [["member", "value"], ...Object.entries(est).filter(([, v]) => typeof v !== "object" || v === null).map(([k, v]) => [k, v])])];
  if (est.reason) parts.push(el("p", {}, ...flagSpans({ reason: est.reason, too_small: true })));
  if (est.roc) parts.push(...rocSection(est, url));
  if (est.roc_groups) parts.push(...rocGroupsSection(est, url));
  (est.metrics || []).forEach((m, k) => parts.push(...metricSection(est, m, url, k)));
  parts.push(...otherAucSection(est), ...extraCurves(est, url));
  parts.push(...section("Rejected reports", rejectsTable(est)));
  main().replaceChildren(...parts);
}

// Per period: the series a campaign's estimate has, each point with its interval.
function seriesOf(d) {
  const ps = d.periods, out = [];
  const first = ps[0] || {};
  const pick = (name, f) => ({ name, pts: ps.map((e) => Object.assign({ x: e.period_from }, f(e) || {})) });
  const pt = (o, v, ci) => (o ? { v: o[v], lo: (o[ci] || [])[0], hi: (o[ci] || [])[1], small: o.too_small || o.small_sample || o.defined === false || o.valid === false } : {});
  if (first.roc) out.push({ title: "AUC", name: "auc", domain: [0, 1], series: [pick("AUC (pooled)", (e) => e.roc && pt(e.roc, "auc", "auc_ci_total"))] });
  if (first.roc_groups) {
    const G = (first.roc_groups.by_group || []).length;
    out.push({ title: "AUC by group", name: "auc_groups", domain: [0, 1], series: Array.from({ length: G }, (_, g) => pick(groupName(first, g), (e) => pt((e.roc_groups.by_group || [])[g], "auc", "ci"))) });
  }
  (first.metrics || []).forEach((m, k) => {
    const G = (m.groups || []).length;
    out.push({ title: `${m.metric} by group`, name: `metric_${m.metric}`, domain: [0, 1], series: Array.from({ length: G }, (_, g) => pick(groupName(first, g), (e) => pt(((e.metrics[k] || {}).groups || [])[g], "mean", "ci"))) });
    out.push({ title: `largest ${m.metric} disparity`, name: `largest_disparity_${m.metric}`, fit: true, series: [pick("largest |difference|", (e) => pt(largestOf(e.metrics[k]), "abs_diff", "ci"))] });
  });
  return out;
}

async function pageOverTime(id) {
  const q = new URLSearchParams(location.search);
  const base = `/console/campaign/${id}/time`;
  const url = `/v1/campaigns/${id}/periods${location.search}`;
  const [c, d] = await Promise.all([api(`/v1/campaigns/${id}/info`), api(url)]);
  const xs = d.periods.map((e) => e.period_from);
  const parts = [title(campaignTitle(c) + ": over time"), campaignMeta(c),
    el("p", {}, el("a", { href: `/console/campaign/${id}`, text: "← all periods together" })), rangeForm(base, q, true)];
  const span = d.to - d.from + 1;
  const conf = q.get("confidence") ? `&confidence=${encodeURIComponent(q.get("confidence"))}` : "";
  parts.push(el("div", { class: "pager" },
    d.from > 0 ? el("a", { href: `${base}?from=${Math.max(0, d.from - span)}&to=${d.from - 1}${conf}`, text: "← earlier periods" }) : null,
    el("span", { text: `periods ${d.from} to ${d.to} (at most ${d.max_periods} a page; current period ${d.period_now})` }),
    d.to < d.period_now ? el("a", { href: `${base}?from=${d.to + 1}&to=${Math.min(d.period_now, d.to + span)}${conf}`, text: "later periods →" }) : null));
  const reportsSeries = { name: "stored reports", pts: d.periods.map((e) => ({ x: e.period_from, v: e.reports })) };
  const charts = [el("div", {}, timeChart({ name: "reports", title: "stored reports", xs, xlabel: "period", ylabel: "reports", bars: true,
    domain: [0, Math.max(1, ...d.periods.map((e) => e.reports || 0)) * 1.05], series: [reportsSeries],
    caption: "Reports stored per period (accepted, durable)." }),
    dataLinks(url, "reports", () => [["period", "reports"], ...reportsSeries.pts.map((p) => [p.x, p.v])]))];
  const rowsOf = (s) => () => [["series", "period", "value", "ci_lo", "ci_hi", "flagged"], ...s.series.flatMap((se) => se.pts.map((p) => [se.name, p.x, p.v, p.lo, p.hi, !!p.small]))];
  for (const s of seriesOf(d)) {
    charts.push(el("div", {}, timeChart({ name: s.name, title: s.title, xs, xlabel: "period", ylabel: s.title, domain: s.fit ? null : s.domain, fit: true, series: s.series,
      caption: `${s.title} per period with ${d.periods[0] ? fmt(d.periods[0].confidence, 2) : ""} intervals (dashed: too small or undefined).` }), dataLinks(url, s.name, rowsOf(s))));
  }
  parts.push(...section("Estimates per period", el("div", { class: "charts" }, charts)));
  parts.push(table(["period", "reports", "flags"], d.periods.map((e) => [el("td", {}, el("a", { href: `/console/campaign/${id}?period=${e.period_from}`, text: String(e.period_from) })),
    el("td", { class: "num", text: fmtInt(e.reports) }), el("td", {}, ...flagSpans(e.roc || largestOf((e.metrics || [])[0]) || {}))])));
  main().replaceChildren(...parts);
}

async function pageIngestion() {
  const url = "/v1/ingestion";
  const d = await api(url);
  const pts = d.points || [], R = (d.reasons || []).length;
  const deltas = pts.slice(1).map((p, i) => ({ t: p.t, accepted: p.accepted - pts[i].accepted, duplicates: p.duplicates - pts[i].duplicates,
    rejected: Array.from({ length: R }, (_, r) => (p.rejected[r] || 0) - (pts[i].rejected[r] || 0)) }));
  const xs = deltas.map((x) => x.t);
  const tf = (t) => new Date(t * 1000).toISOString().substr(11, 8);
  const parts = [title("Ingestion"), el("p", { class: "muted", text: `This collector process since ${when(d.started)}: one point per ${d.interval_seconds} s with reports (the newest ${d.max_points} kept). Counters restart with the process; the stored reports of each period are on each campaign's "over time" page.` })];
  const last = pts[pts.length - 1] || { accepted: 0, duplicates: 0, rejected: [] };
  parts.push(table(["since start", "reports"], [["accepted", el("td", { class: "num", "data-field": "accepted", text: fmtInt(last.accepted) })],
    ["duplicates (retries, stored once)", el("td", { class: "num", text: fmtInt(last.duplicates) })],
    ...(d.reasons || []).map((r, i) => [`rejected: ${r}`, el("td", { class: "num", text: fmtInt(last.rejected[i]) })])]));
  const series = [{ name: "accepted", pts: deltas.map((x) => ({ x: x.t, v: x.accepted })) }, { name: "duplicates", pts: deltas.map((x) => ({ x: x.t, v: x.duplicates })) },
    ...(d.reasons || []).map((r, i) => ({ name: `rejected: ${r}`, pts: deltas.map((x) => ({ x: x.t, v: x.rejected[i] })) }))];
  const top = Math.max(1, ...series.flatMap((s) => s.pts.map((p) => p.v || 0)));
  parts.push(...section("Reports per interval", xs.length ? timeChart({ name: "ingestion", title: "reports per interval", xs, xlabel: "time (UTC)", ylabel: "reports", xfmt: tf, series, domain: [0, top * 1.05],
    caption: "Accepted, duplicate and rejected reports (by reason) since the point before (intervals without reports have no point); a jump in rejects after a release shows here." }) : el("p", { class: "muted", text: "No reports yet." }),
    dataLinks(url, "ingestion", () => [["t", "accepted", "duplicates", ...(d.reasons || []).map((r) => "rejected: " + r)], ...deltas.map((x) => [x.t, x.accepted, x.duplicates, ...x.rejected])])));
  main().replaceChildren(...parts);
}

// ---- routing --------------------------------------------------------------------------------------
// Pages redraw from fresh data every REFRESH_S seconds (a dashboard left open stays current; a
// collector restarting in between is announced by api() and the page comes back with it).
const REFRESH_S = 60;
let refreshTimer = null;
async function route() {
  const p = location.pathname;
  let m;
  clearTimeout(refreshTimer);
  document.body.dataset.ready = "0";
  try {
    if (p === "/console/" || p === "/console") await pageCampaigns();
    else if (p === "/console/ingestion") await pageIngestion();
    else if ((m = p.match(/^\/console\/campaign\/(\d+)\/time$/))) await pageOverTime(m[1]);
    else if ((m = p.match(/^\/console\/campaign\/(\d+)$/))) await pageCampaign(m[1]);
    else throw new HttpError(404, "no such page");
    document.body.dataset.ready = "1";
    refreshTimer = setTimeout(route, REFRESH_S * 1000);
  } catch (e) {
    const code = e instanceof HttpError ? e.code : 0;
    main().replaceChildren(el("div", { class: "error", id: "error", "data-status": String(code) },
      el("h1", { text: code ? `${code}: ${code === 404 ? "not found" : code === 400 ? "bad query" : "error"}` : "error" }),
      el("p", { text: e.message }), el("p", {}, el("a", { href: "/console/", text: "All campaigns" }))));
    document.body.dataset.ready = "error";
  }
}
window.dpmConsole = { refresh: route }; // what the browser test calls instead of waiting
if (document.getElementById("main")) route();
