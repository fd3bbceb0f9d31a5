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
  const money = (v) => "$" + Number(v).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  function niceMax(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // usage: cost per day, stacked by model
  function usageChart() {
    const box = document.getElementById("usage-chart");
    if (!data.usage.length) return;
    const days = [...new Set(data.usage.map((r) => r[0]))].sort();
    const totals = new Map();
    for (const r of data.usage) totals.set(r[1], (totals.get(r[1]) || 0) + r[2]);
    const models = [...totals.keys()].sort((a, b) => totals.get(b) - totals.get(a));
    const colour = new Map(models.map((m, i) => [m, PALETTE[i % PALETTE.length]]));
    const byDay = new Map(days.map((d) => [d, new Map()]));
    for (const [d, m, c] of data.usage) byDay.get(d).set(m, (byDay.get(d).get(m) || 0) + c);
    const W = 960, H = 260, L = 64, B = 56, T = 10;
    const top = niceMax(Math.max(...days.map((d) => [...byDay.get(d).values()].reduce((a, b) => a + b, 0))));
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "cost per day by model" }, box);
    const bw = (W - L - 10) / days.length;
    for (let g = 0; g <= 4; g++) {
      const y = T + (H - T - B) * (1 - g / 4);
      el("line", { x1: L, x2: W - 10, y1: y, y2: y, stroke: "#e5e5ea" }, svg);
      text(svg, L - 6, y + 4, money(top * g / 4), "end");
    }
    days.forEach((d, i) => {
      let y = H - B;
      for (const m of models) {
        const c = byDay.get(d).get(m) || 0;
        if (!c) continue;
        const h = (H - T - B) * c / top;
        const r = el("rect", { x: L + i * bw + bw * 0.1, y: y - h, width: bw * 0.8, height: h, fill: colour.get(m) }, svg);
        el("title", {}, r).textContent = `${d} · ${m}: ${money(c)}`;
        y -= h;
      }
      if (days.length <= 40 || i % Math.ceil(days.length / 40) === 0) {
        const t = text(svg, L + i * bw + bw / 2, H - B + 14, d, "end");
        t.setAttribute("transform", `rotate(-40 ${L + i * bw + bw / 2} ${H - B + 14})`);
      }
    });
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
    box.appendChild(legend);
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

  function renderSession(section) {
    if (section.dataset.drawn) return;
    section.dataset.drawn = "1";
    const d = data.sessions[Number(section.dataset.i)];
    timeline(section.querySelector(".timeline"), d);
    tree(section.querySelector(".tree"), d);
  }

  function sortable(table) {
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
      });
    }
  }

  const t0 = performance.now();
  usageChart();
  for (const t of document.querySelectorAll("table.sortable")) sortable(t);
  const sections = document.querySelectorAll("section.session");
  if ("IntersectionObserver" in window) {
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) { renderSession(e.target); io.unobserve(e.target); }
    }, { rootMargin: "400px" });
    sections.forEach((s) => io.observe(s));
  } else {
    sections.forEach(renderSession);
  }
  function showTarget() {
    const s = document.getElementById(location.hash.slice(1));
    if (s && s.classList.contains("session")) renderSession(s);
  }
  window.addEventListener("hashchange", showTarget);
  showTarget();
  document.body.dataset.readyMs = String(performance.now() - t0);
})();
