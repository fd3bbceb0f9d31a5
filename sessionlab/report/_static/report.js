// sessionlab report: charts drawn from the page's JSON block. No network, no HTML from data:
// every piece of text is set with textContent; elements are made with createElementNS.
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const data = JSON.parse(document.getElementById("sessionlab-data").textContent);
  const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, anchor) {
    const t = el("text", { x: x, y: y, "text-anchor": anchor || "start" }, parent);
    t.textContent = s;
    return t;
  }
  const fmt = (v) => Number(v).toLocaleString("en-US");
  // dollars as the page's tables write them (a cost under half a cent is "<$0.01", not "$0.00")
  const money = (v) => (v > 0 && v < 0.005 ? "<$0.01"
    : "$" + Number(v).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
  function niceMax(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // a small tooltip that follows the pointer (text only)
  const tip = document.createElement("div");
  tip.id = "tip";
  tip.hidden = true;
  document.body.appendChild(tip);
  function showTip(lines, ev) {
    tip.replaceChildren();
    lines.forEach((s, i) => {
      const line = document.createElement(i ? "div" : "b");
      line.textContent = s;
      tip.appendChild(line);
    });
    tip.hidden = false;
    const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }
  const hideTip = () => { tip.hidden = true; };
  // the viewBox x of a pointer event over an svg of width W
  const svgX = (svg, ev, W) => { const r = svg.getBoundingClientRect(); return (ev.clientX - r.left) * W / r.width; };

  // days between two YYYY-MM-DD dates, every day kept (a day without usage keeps its place)
  const DAY = 86400000;
  const dayMs = (d) => Date.UTC(+d.slice(0, 4), +d.slice(5, 7) - 1, +d.slice(8, 10));
  const dayStr = (ms) => new Date(ms).toISOString().slice(0, 10);
  function dayRange(lo, hi) {
    const out = [];
    for (let t = dayMs(lo); t <= dayMs(hi); t += DAY) out.push(dayStr(t));
    return out;
  }
  // axis ticks over those days: every day (or every few) for a short span, month starts beyond
  function dayTicks(days) {
    if (days.length <= 45) {
      const step = Math.ceil(days.length / 15);
      return days.map((d, i) => [i, d.slice(5)]).filter((_, i) => i % step === 0);
    }
    // the first day's month is named only when its start is not crowded by the next month's
    const crowded = days.findIndex((d) => d.endsWith("-01")) < days.length / 24;
    const starts = days.map((d, i) => [i, d]).filter(([i, d]) => d.endsWith("-01") || (i === 0 && !crowded));
    const step = Math.ceil(starts.length / 18);
    return starts.filter((_, j) => j % step === 0).map(([i, d]) => [i, d.slice(0, 7)]);
  }

  // usage: cost per day on a time axis, stacked by model (spend outside calls named as such)
  function usageChart() {
    const box = document.getElementById("usage-chart");
    if (!data.usage.length) return;
    const seen = [...new Set(data.usage.map((r) => r[0]))].sort();
    const days = dayRange(seen[0], seen[seen.length - 1]);
    const totals = new Map();
    for (const r of data.usage) totals.set(r[1], (totals.get(r[1]) || 0) + r[2]);
    const models = [...totals.keys()].sort((a, b) => totals.get(b) - totals.get(a));
    const colour = new Map(models.map((m, i) => [m, PALETTE[i % PALETTE.length]]));
    const byDay = new Map(days.map((d) => [d, new Map()]));
    for (const [d, m, c] of data.usage) byDay.get(d).set(m, (byDay.get(d).get(m) || 0) + c);
    const dayTotal = (d) => [...byDay.get(d).values()].reduce((a, b) => a + b, 0);
    const W = 960, H = 260, L = 64, B = 40, T = 10, R = 10;
    const top = niceMax(Math.max(...days.map(dayTotal)));
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "cost per day by model" }, box);
    const bw = (W - L - R) / days.length;
    for (let g = 0; g <= 4; g++) {
      const y = T + (H - T - B) * (1 - g / 4);
      el("line", { x1: L, x2: W - R, y1: y, y2: y, stroke: "#e5e5ea" }, svg);
      text(svg, L - 6, y + 4, money(top * g / 4), "end");
    }
    days.forEach((d, i) => {
      let y = H - B;
      for (const m of models) {
        const c = byDay.get(d).get(m) || 0;
        if (!c) continue;
        const h = (H - T - B) * c / top;
        const r = el("rect", { x: L + i * bw + bw * 0.1, y: y - h, width: Math.max(bw * 0.8, 0.5), height: h,
          fill: colour.get(m), "data-day": d }, svg);
        el("title", {}, r).textContent = `${d} · ${m}: ${money(c)}`;
        y -= h;
      }
    });
    for (const [i, label] of dayTicks(days)) {
      const x = L + i * bw;
      el("line", { x1: x, x2: x, y1: H - B, y2: H - B + 5, stroke: "#888" }, svg);
      text(svg, x, H - B + 17, label, "middle").setAttribute("class", "tick");
    }
    el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#888" }, svg);
    usageHover(svg, { W, H, L, B, T, R, bw }, days, (d) => {
      const m = byDay.get(d), lines = [`${d}: ${money(dayTotal(d))}`];
      for (const k of models) if (m.get(k)) lines.push(`${k}: ${money(m.get(k))}`);
      if (lines.length === 1) lines.push("no usage");
      return lines;
    });
    box.appendChild(legendOf(models, colour, totals));
  }

  // hovering the plot marks the day under the pointer and shows its lines of values
  function usageHover(svg, g, days, linesOf) {
    const hover = el("rect", { x: g.L, y: g.T, width: g.W - g.L - g.R, height: g.H - g.T - g.B, fill: "none",
      class: "hover", "pointer-events": "all" }, svg);
    const mark = el("rect", { y: g.T, height: g.H - g.T - g.B, width: g.bw, fill: "#000", opacity: 0.06,
      visibility: "hidden", "pointer-events": "none" }, svg);
    hover.addEventListener("mousemove", (ev) => {
      const i = Math.min(days.length - 1, Math.max(0, Math.floor((svgX(svg, ev, g.W) - g.L) / g.bw)));
      mark.setAttribute("x", g.L + i * g.bw);
      mark.setAttribute("visibility", "visible");
      showTip(linesOf(days[i]), ev);
    });
    hover.addEventListener("mouseleave", () => { hideTip(); mark.setAttribute("visibility", "hidden"); });
  }

  function legendOf(models, colour, totals) {
    const legend = document.createElement("div");
    legend.className = "legend";
    for (const m of models) {
      const item = document.createElement("span");
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = colour.get(m);
      item.append(sw, document.createTextNode(`${m} (${money(totals.get(m))})`));
      legend.appendChild(item);
    }
    return legend;
  }

  function timeline(box, d) {
    if (!d.calls.length) {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = "No assistant call on the current branch.";
      box.appendChild(p);
      return;
    }
    const W = 480, H = 200, L = 56, B = 22, T = 8, R = 8;
    const k = d.calls.length;
    const top = niceMax(Math.max(...d.calls, ...d.compactions.map((c) => c[1])));
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "context per call" }, box);
    const X = (i) => L + (W - L - R) * (k === 1 ? 0.5 : i / (k - 1));
    const Y = (v) => T + (H - T - B) * (1 - v / top);
    for (let g = 0; g <= 4; g++) {
      el("line", { x1: L, x2: W - R, y1: Y(top * g / 4), y2: Y(top * g / 4), stroke: "#e5e5ea" }, svg);
      text(svg, L - 4, Y(top * g / 4) + 4, fmt(top * g / 4), "end");
    }
    let path = "";
    d.calls.forEach((v, i) => { path += (i ? "L" : "M") + X(i).toFixed(1) + " " + Y(v).toFixed(1); });
    el("path", { d: path, fill: "none", stroke: "#3182bd", "stroke-width": 1.5 }, svg);
    if (k === 1) el("circle", { cx: X(0), cy: Y(d.calls[0]), r: 4, fill: "#3182bd" }, svg);
    for (const [at, before] of d.compactions) {
      const x = X(Math.max(0, at - 0.5));
      const line = el("line", { x1: x, x2: x, y1: Y(before), y2: H - B, stroke: "#d62728", "stroke-width": 2 }, svg);
      el("title", {}, line).textContent = `compaction: ${fmt(before)} tokens before`;
    }
    text(svg, (L + W - R) / 2, H - 4, `${fmt(k)} call${k === 1 ? "" : "s"}`, "middle");
    const dot = el("circle", { r: 3.5, fill: "#3182bd", visibility: "hidden", "pointer-events": "none" }, svg);
    const hover = el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "none", class: "hover",
      "pointer-events": "all" }, svg);
    hover.addEventListener("mousemove", (ev) => {
      const i = k === 1 ? 0 : Math.min(k - 1, Math.max(0, Math.round((svgX(svg, ev, W) - L) / (W - L - R) * (k - 1))));
      dot.setAttribute("cx", X(i));
      dot.setAttribute("cy", Y(d.calls[i]));
      dot.setAttribute("visibility", "visible");
      const lines = [`call ${fmt(i + 1)} of ${fmt(k)}`, `${fmt(d.calls[i])} tokens of context`];
      for (const [at, before] of d.compactions) if (at === i) lines.push(`compacted before it: ${fmt(before)} tokens`);
      showTip(lines, ev);
    });
    hover.addEventListener("mouseleave", () => { hideTip(); dot.setAttribute("visibility", "hidden"); });
  }

  function tree(box, d) {
    const t = d.tree;
    if (!t || !t.x.length) return;
    const n = t.x.length;
    let maxX = 0, maxY = 0;
    for (let i = 0; i < n; i++) { if (t.x[i] > maxX) maxX = t.x[i]; if (t.y[i] > maxY) maxY = t.y[i]; }
    const W = 480, H = 200, P = 10;
    const sx = (W - 2 * P - 80) / Math.max(maxX, 1), sy = (H - 2 * P) / Math.max(maxY, 1);
    const X = (i) => P + (maxX ? t.x[i] * sx : (W - 80) / 2), Y = (i) => P + t.y[i] * sy;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "session tree" }, box);
    const onBranch = new Uint8Array(n);
    for (const i of t.b) onBranch[i] = 1;
    let edges = "", branch = "";
    for (let i = 0; i < n; i++) {
      const p = t.p[i];
      if (p < 0) continue;
      const seg = `M${X(p).toFixed(1)} ${Y(p).toFixed(1)}L${X(i).toFixed(1)} ${Y(i).toFixed(1)}`;
      if (onBranch[i] && onBranch[p]) branch += seg; else edges += seg;
    }
    el("path", { d: branch, stroke: "#f2b705", "stroke-width": 5, "stroke-linecap": "round", fill: "none", opacity: 0.7 }, svg);
    el("path", { d: edges, stroke: "#999", "stroke-width": 1, fill: "none" }, svg);
    const r = Math.max(1, Math.min(3, sy * 0.4));
    const paths = data.kinds.map(() => "");
    for (let i = 0; i < n; i++) {
      paths[t.k[i]] += `M${(X(i) - r).toFixed(1)} ${(Y(i) - r).toFixed(1)}h${2 * r}v${2 * r}h${-2 * r}z`;
    }
    data.kinds.forEach(([name, colour], k) => {
      if (!paths[k]) return;
      const p = el("path", { d: paths[k], fill: colour }, svg);
      el("title", {}, p).textContent = name;
    });
    for (const [i, label] of t.labels) {
      const s = label.length > 24 ? label.slice(0, 23) + "…" : label;
      text(svg, X(i) + 5, Y(i) + 4, s);
    }
  }

  // a section is an empty placeholder until it comes near the screen or is opened: then its card and charts
  function renderSession(section) {
    if (section.dataset.drawn) return;
    section.dataset.drawn = "1";
    const i = Number(section.dataset.i);
    fillSection(section, i);
    section.classList.remove("pending");
    const d = data.sessions[i];
    timeline(section.querySelector(".timeline"), d);
    tree(section.querySelector(".tree"), d);
  }

  function sortable(table, onSort) {
    const heads = table.tHead.rows[0].cells;
    for (let c = 0; c < heads.length; c++) {
      heads[c].addEventListener("click", () => {
        const asc = !heads[c].classList.contains("sorted-asc");
        for (const h of heads) h.classList.remove("sorted-asc", "sorted-desc");
        heads[c].classList.add(asc ? "sorted-asc" : "sorted-desc");
        const rows = [...table.tBodies[0].rows];
        const key = (r) => r.cells[c].dataset.v !== undefined ? Number(r.cells[c].dataset.v) : r.cells[c].textContent;
        rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
        table.tBodies[0].append(...rows);
        if (onSort) onSort();
      });
    }
  }

  // the sessions table's filters: search (id, name, title, project), project, agent, date range
  const table = document.getElementById("sessions-table");
  const rows = table ? [...table.tBodies[0].rows] : [];
  const hay = data.find.map((f) => (f[0] + "\n" + f[1] + "\n" + f[2] + "\n" + f[3]).toLowerCase());
  const $ = (id) => document.getElementById(id);
  const controls = ["f-search", "f-project", "f-agent", "f-from", "f-to"].map($);
  function applyFilters() {
    const [q, project, agent, from, to] = controls.map((c) => (c ? c.value : ""));
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const r of rows) {
      const i = Number(r.dataset.i), f = data.find[i];
      const ok = (!project || f[3] === project) && (!agent || f[4] === agent) && (!from || (f[5] && f[5] >= from)) &&
        (!to || (f[5] && f[5] <= to)) && words.every((w) => hay[i].includes(w));
      if (r.hidden === ok) r.hidden = !ok;
      if (ok) shown++;
    }
    $("f-count").textContent = `${fmt(shown)} of ${fmt(rows.length)} sessions`;
    resetDetails();
  }
  for (const c of controls) if (c) c.addEventListener("input", applyFilters);
  if ($("f-clear")) $("f-clear").addEventListener("click", () => { for (const c of controls) c.value = ""; applyFilters(); });

  // session details: the table's visible sessions in its order, a page at a time, drawn when in view
  const details = $("details"), list = $("details-list"), more = $("details-more");
  const PAGE = details ? Number(details.dataset.page) || 20 : 20;
  let order = [], done = 0;
  const io = "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) { renderSession(e.target); io.unobserve(e.target); }
  }, { rootMargin: "400px" }) : null;
  function h(tag, cls, parent, str) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (str !== undefined) e.textContent = str;
    if (parent) parent.appendChild(e);
    return e;
  }
  // a fact: plain text, or [label, value] with the value as code
  function facts(parent, cls, items) {
    const box = h("div", cls, parent);
    for (const f of items) {
      const span = h("span", "", box, typeof f === "string" ? f : f[0]);
      if (typeof f !== "string") h("code", "", span, f[1]);
    }
  }
  function link(parent, href, str) { const a = h("a", "", parent, str); a.setAttribute("href", href); return a; }
  // one session's section, built from its card (every string set as text)
  function fillSection(s, i) {
    const c = data.cards[i];
    h("h3", "", s, c.h);
    if (c.prompt) h("div", "sub", s, "first prompt: " + c.prompt);
    facts(s, "facts", c.facts);
    facts(s, "facts small", c.small);
    if (c.issues) {
      const box = h("div", "issues", s);
      box.id = "issues-" + i;
      h("b", "", box, c.issues[0]);
      box.append(" (");
      link(box, "#issues", "all issues");
      box.append(")");
      const ul = h("ul", "", box);
      for (const line of c.issues[1]) h("li", "", ul, line);
    }
    const charts = h("div", "charts", s);
    for (const [cls, caption] of [["timeline", "Context per call on the current branch (tokens)"],
      ["tree", "Tree (current branch highlighted)"]]) {
      const fig = h("figure", "", charts);
      h("figcaption", "", fig, caption);
      h("div", cls, fig);
    }
    link(h("p", "", s), "#sessions", "back to the sessions");
  }
  function addSection(i) {
    const section = h("section", "session pending", list);
    section.id = "s-" + i;
    section.dataset.i = String(i);
    if (io) io.observe(section); else renderSession(section);
    return section;
  }
  function showMore(upTo) {
    const end = Math.min(order.length, Math.max(done + PAGE, upTo || 0));
    for (; done < end; done++) addSection(order[done]);
    more.hidden = done >= order.length;
    more.textContent = `show ${fmt(Math.min(PAGE, order.length - done))} more (${fmt(order.length - done)} left)`;
  }
  function resetDetails() {
    if (!list) return;
    list.replaceChildren();
    order = [...table.tBodies[0].rows].filter((r) => !r.hidden).map((r) => Number(r.dataset.i));
    done = 0;
    showMore();
  }
  if (more) {
    more.addEventListener("click", () => showMore());
    if ("IntersectionObserver" in window) {
      new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) showMore(); }).observe(more);
    }
  }
  // a link to a session (or its issues) opens it: drawn in table order, the filters cleared if they hide it
  function openSession(i) {
    if (!(i >= 0 && i < data.cards.length)) return null;
    let at = order.indexOf(i);
    if (at < 0) { for (const c of controls) if (c) c.value = ""; applyFilters(); at = order.indexOf(i); }
    if (at >= done) showMore(at + 1);
    const s = $("s-" + i);
    if (s) renderSession(s);
    return s;
  }
  function showTarget() {
    const m = /^#(s|issues)-(\d+)$/.exec(location.hash);
    if (!m) return;
    if (openSession(Number(m[2]))) {
      const target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
  }

  const t0 = performance.now();
  usageChart();
  for (const t of document.querySelectorAll("table.sortable")) sortable(t, t === table ? resetDetails : null);
  resetDetails();
  window.addEventListener("hashchange", showTarget);
  // a click on a link to the hash already in the address bar fires no hashchange: open its section first
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest("a[href]");
    const m = a && /^#(s|issues)-(\d+)$/.exec(a.getAttribute("href"));
    if (m) openSession(Number(m[2]));
  });
  showTarget();
  document.body.dataset.readyMs = String(performance.now() - t0);
  // when the first frame with all of the above is painted (ms since the page was asked for)
  requestAnimationFrame(() => requestAnimationFrame(() => { document.body.dataset.paintedMs = String(performance.now()); }));
})();
