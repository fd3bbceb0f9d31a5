// SessionTree: a session's tree on a canvas (pan, zoom, hover, click to select).
// Shipped inside the sessionlab package; loads nothing from the network.
// Every piece of session text is drawn with fillText (canvas text is inert) or set as textContent.

const EDGE = "rgba(120,120,120,0.55)";
const BRANCH = "rgba(242,183,5,0.75)";
const SELECT = "#111";

function fmtTokens(n) {
  return n == null ? "" : Number(n).toLocaleString("en-US");
}

function fmtTime(ms) {
  if (ms == null) return "no timestamp";
  return new Date(ms).toISOString().replace("T", " ").replace(".000Z", " UTC").replace("Z", " UTC");
}

function buildIndex(d) {
  // world coordinates: x is the leaf rank, y the depth; a grid of 1 x 1 cells for hit tests
  const grid = new Map();
  for (let i = 0; i < d.n; i++) {
    const key = Math.round(d.x[i]) + ":" + Math.round(d.y[i]);
    let cell = grid.get(key);
    if (!cell) grid.set(key, (cell = []));
    cell.push(i);
  }
  const children = new Int32Array(d.n);
  for (let i = 0; i < d.n; i++) if (d.parent[i] >= 0) children[d.parent[i]]++;
  const labels = new Map(d.labels.map(([row, text]) => [row, text]));
  return { grid, children, labels };
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "sessionlab-session-tree";
  root.style.cssText = "position:relative;width:100%;box-sizing:border-box;border:1px solid var(--jp-border-color2,#ddd);" +
    "font:12px var(--jp-ui-font-family,sans-serif);user-select:none";
  const bar = document.createElement("div");
  bar.style.cssText = "display:flex;flex-wrap:wrap;gap:4px 12px;align-items:center;padding:4px 6px;" +
    "border-bottom:1px solid var(--jp-border-color2,#ddd)";
  const title = document.createElement("b");
  const legend = document.createElement("span");
  legend.style.cssText = "display:flex;flex-wrap:wrap;gap:2px 10px";
  const reset = document.createElement("button");
  reset.textContent = "fit";
  reset.title = "fit the whole tree (or double-click)";
  reset.className = "sessionlab-tree-fit";
  const hint = document.createElement("span");
  hint.style.cssText = "color:var(--jp-ui-font-color2,#666)";
  hint.className = "sessionlab-tree-hint";
  hint.textContent = "drag to pan · Ctrl+wheel or pinch to zoom (or click first) · click an entry to select it";
  // the live box: shown when the tree was drawn from a corpus it can follow (trait can_follow)
  const liveBox = document.createElement("label");
  liveBox.className = "sessionlab-tree-live";
  liveBox.title = "redraw when the session file changes";
  const live = document.createElement("input");
  live.type = "checkbox";
  liveBox.append(live, document.createTextNode(" live"));
  function syncLive() {
    liveBox.style.display = model.get("can_follow") ? "" : "none";
    live.checked = !!model.get("live");
  }
  live.addEventListener("change", () => { model.set("live", live.checked); model.save_changes(); });
  syncLive();
  bar.append(title, reset, liveBox, hint, legend);
  const canvas = document.createElement("canvas");
  canvas.style.cssText = "display:block;width:100%;cursor:grab";
  const tip = document.createElement("div");
  tip.className = "sessionlab-tree-tooltip";
  tip.style.cssText = "position:absolute;display:none;pointer-events:none;max-width:360px;white-space:pre-wrap;" +
    "background:var(--jp-layout-color0,#fff);color:var(--jp-ui-font-color0,#111);border:1px solid #999;" +
    "border-radius:3px;padding:4px 6px;box-shadow:0 1px 4px rgba(0,0,0,.2);z-index:10;overflow-wrap:anywhere";
  root.append(bar, canvas, tip);
  el.appendChild(root);

  let d = null, idx = null;
  let view = { k: 1, tx: 0, ty: 0 };  // screen = world * scale + translate (per axis scales below)
  let sx = 1, sy = 1;  // world units -> CSS px at k = 1
  let hover = -1;

  function load() {
    d = model.get("tree");
    title.textContent = model.get("title") || "";
    legend.textContent = "";
    if (!d || !d.n) {
      idx = null;
      root.dataset.nodes = "0";
      draw();
      return;
    }
    idx = buildIndex(d);
    d.kinds.forEach(([name, colour], k) => {
      if (!d.kindCounts[k]) return;  // only kinds the session has
      const item = document.createElement("span");
      const dot = document.createElement("span");
      dot.style.cssText = `display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:3px;background:${colour}`;
      item.append(dot, document.createTextNode(`${name} (${fmtTokens(d.kindCounts[k])})`));
      legend.appendChild(item);
    });
    root.dataset.nodes = String(d.n);
    fit();
  }

  function size() {
    const w = Math.max(200, root.clientWidth - 2);
    const h = model.get("height");
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
      canvas.style.height = h + "px";
    }
    return { w, h, dpr };
  }

  function fit() {
    const { w, h } = size();
    if (!d || !d.n) return draw();
    const pad = 24;
    const spanX = Math.max(1, d.maxX - d.minX), spanY = Math.max(1, d.maxY - d.minY);
    sx = (w - 2 * pad - 120) / spanX;  // room on the right for labels
    sy = (h - 2 * pad) / spanY;
    if (d.maxX === d.minX) sx = 1;
    view = { k: 1, tx: pad - d.minX * sx + (d.maxX === d.minX ? (w - 120) / 2 - pad : 0), ty: pad - d.minY * sy };
    draw();
  }

  const X = (i) => (d.x[i] * sx) * view.k + view.tx;
  const Y = (i) => (d.y[i] * sy) * view.k + view.ty;

  function draw() {
    const t0 = performance.now();
    const { w, h, dpr } = size();
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    if (!d || !d.n) {
      ctx.fillStyle = "#666";
      ctx.font = "14px sans-serif";
      ctx.fillText(model.get("empty_message") || "No entries to draw.", 16, 28);
      root.dataset.drawMs = String(performance.now() - t0);
      return;
    }
    const n = d.n, par = d.parent, br = d.branch;
    const inView = (px, py) => px > -20 && px < w + 20 && py > -20 && py < h + 20;
    // edges: one path for the others, one (wider, under the nodes) for the current branch
    for (const pass of [0, 1]) {
      ctx.beginPath();
      for (let i = 0; i < n; i++) {
        const p = par[i];
        if (p < 0 || (br[i] && br[p] ? 1 : 0) !== pass) continue;
        const x1 = X(i), y1 = Y(i), x0 = X(p), y0 = Y(p);
        if (!inView(x1, y1) && !inView(x0, y0) && (Math.max(y0, y1) < -20 || Math.min(y0, y1) > h + 20 ||
            Math.max(x0, x1) < -20 || Math.min(x0, x1) > w + 20)) continue;
        ctx.moveTo(x0, y0);
        ctx.lineTo(x1, y1);
      }
      ctx.strokeStyle = pass ? BRANCH : EDGE;
      ctx.lineWidth = pass ? 5 : 1;
      ctx.lineCap = "round";
      ctx.stroke();
    }
    // nodes: one fill per kind; radius grows with the zoom
    const r = Math.max(3, Math.min(7, 0.35 * Math.min(sx, sy) * view.k));  // never below 6 px across
    for (let k = 0; k < d.kinds.length; k++) {
      ctx.fillStyle = d.kinds[k][1];
      ctx.beginPath();
      for (let i = 0; i < n; i++) {
        if (d.kind[i] !== k) continue;
        const px = X(i), py = Y(i);
        if (!inView(px, py)) continue;
        if (r < 2.5) ctx.rect(px - r, py - r, 2 * r, 2 * r);
        else { ctx.moveTo(px + r, py); ctx.arc(px, py, r, 0, 2 * Math.PI); }
      }
      ctx.fill();
    }
    // marks: compactions (red triangle), fork points (ring), labels (text, inert on a canvas); a
    // text goes only where it overlaps no text drawn before (level of detail: zoom in for more)
    ctx.lineWidth = 1.5;
    const placed = [];
    let shownTexts = 0, hiddenTexts = 0;
    const room = (x0, y0, x1, y1) => {
      for (const [a, b, c, e] of placed) if (x0 < c && x1 > a && y0 < e && y1 > b) { hiddenTexts++; return false; }
      placed.push([x0, y0, x1, y1]);
      shownTexts++;
      return true;
    };
    for (let i = 0; i < n; i++) {
      const special = d.compaction[i] || idx.children[i] > 1 || idx.labels.has(i);
      if (!special) continue;
      const px = X(i), py = Y(i);
      if (!inView(px, py)) continue;
      if (d.compaction[i]) {
        ctx.fillStyle = "#d62728";
        ctx.beginPath();
        ctx.moveTo(px, py + 8); ctx.lineTo(px - 7, py - 5); ctx.lineTo(px + 7, py - 5); ctx.closePath();
        ctx.fill();
        ctx.font = "11px sans-serif";
        const text = `compaction ${fmtTokens(d.tokensBefore[i])} tokens before`;
        if (room(px + 10, py - 8, px + 12 + ctx.measureText(text).width, py + 7)) ctx.fillText(text, px + 10, py + 4);
      }
      if (idx.children[i] > 1) {
        ctx.strokeStyle = "#333";
        ctx.beginPath(); ctx.arc(px, py, r + 3, 0, 2 * Math.PI); ctx.stroke();
      }
      if (idx.labels.has(i)) {
        const text = idx.labels.get(i);
        ctx.font = "11px sans-serif";
        const tw = ctx.measureText(text).width;
        if (!room(px + 8, py - 8, px + 14 + tw, py + 7)) continue;
        ctx.fillStyle = "rgba(247,247,176,0.95)";
        ctx.fillRect(px + 8, py - 8, tw + 6, 15);
        ctx.fillStyle = "#333";
        ctx.fillText(text, px + 11, py + 3);
      }
    }
    const sel = d.ids.indexOf(model.get("selected_id"));
    for (const [i, colour] of [[hover, "#555"], [sel, SELECT]]) {
      if (i < 0) continue;
      ctx.strokeStyle = colour;
      ctx.lineWidth = 2.5;
      ctx.beginPath(); ctx.arc(X(i), Y(i), r + 5, 0, 2 * Math.PI); ctx.stroke();
    }
    root.dataset.textsShown = String(shownTexts);
    root.dataset.textsHidden = String(hiddenTexts);
    root.dataset.radius = String(r);
    const ms = performance.now() - t0;
    root.dataset.drawMs = String(ms);
    if (!root.dataset.firstDrawMs) {
      root.dataset.firstDrawMs = String(ms);
      model.set("draw_ms", ms);
      model.save_changes();
    }
  }

  function nearest(mx, my) {
    if (!idx) return -1;
    const wx = (mx - view.tx) / (sx * view.k), wy = (my - view.ty) / (sy * view.k);
    const rx = Math.ceil(12 / (sx * view.k)), ry = Math.ceil(12 / (sy * view.k));
    if (rx > 50 || ry > 50) {  // zoomed far out: scan everything (still a few ms)
      let best = -1, bd = 144;
      for (let i = 0; i < d.n; i++) {
        const dd = (X(i) - mx) ** 2 + (Y(i) - my) ** 2;
        if (dd < bd) { bd = dd; best = i; }
      }
      return best;
    }
    let best = -1, bd = 144;  // within 12 px
    for (let gx = Math.round(wx) - rx; gx <= Math.round(wx) + rx; gx++) {
      for (let gy = Math.round(wy) - ry; gy <= Math.round(wy) + ry; gy++) {
        const cell = idx.grid.get(gx + ":" + gy);
        if (!cell) continue;
        for (const i of cell) {
          const dd = (X(i) - mx) ** 2 + (Y(i) - my) ** 2;
          if (dd < bd) { bd = dd; best = i; }
        }
      }
    }
    return best;
  }

  function showTip(i, mx, my) {
    if (i < 0) { tip.style.display = "none"; return; }
    const lines = [
      d.kinds[d.kind[i]][0],
      `entry ${d.ids[i]}`,
      d.tokens[i] != null ? `${fmtTokens(d.tokens[i])} tokens${d.kind[i] === d.assistantKind ? " (context of the call)" : " (estimate)"}` : "",
      fmtTime(d.time[i]),
      idx.labels.has(i) ? `label: ${idx.labels.get(i)}` : "",
      d.model[i] ? `model: ${d.model[i]}` : "",
      d.text[i] ? d.text[i] : "",
    ].filter(Boolean);
    tip.textContent = lines.join("\n");  // text only: never parsed as HTML
    tip.style.display = "block";
    const left = Math.min(mx + 14, root.clientWidth - 370);
    tip.style.left = Math.max(0, left) + "px";
    tip.style.top = (my + bar.offsetHeight + 14) + "px";
  }

  let drag = null;
  let zoomArmed = false;
  canvas.addEventListener("mousedown", (e) => {
    drag = { x: e.offsetX, y: e.offsetY, tx: view.tx, ty: view.ty, moved: false };
    canvas.style.cursor = "grabbing";
  });
  window.addEventListener("mouseup", (e) => {
    if (!drag) return;
    const wasClick = !drag.moved;
    drag = null;
    canvas.style.cursor = "grab";
    if (wasClick && e.target === canvas) {
      const i = nearest(e.offsetX, e.offsetY);
      zoomArmed = true;  // a click on the tree lets the wheel zoom until the pointer leaves
      if (i >= 0) {
        // the explorer around the tree shows "loading" until the kernel reports this entry shown
        const explorer = root.closest(".sessionlab-branch-explorer");
        if (explorer && model.get("shown_id") !== d.ids[i]) explorer.classList.add("sessionlab-loading");
        model.set("selected_id", d.ids[i]);
        model.save_changes();
        draw();
      }
    }
  });
  canvas.addEventListener("mousemove", (e) => {
    if (drag) {
      const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      view.tx = drag.tx + dx;
      view.ty = drag.ty + dy;
      tip.style.display = "none";
      requestAnimationFrame(draw);
      return;
    }
    const i = nearest(e.offsetX, e.offsetY);
    if (i !== hover) { hover = i; requestAnimationFrame(draw); }
    showTip(i, e.offsetX, e.offsetY);
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; hover = -1; zoomArmed = false; draw(); });
  canvas.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !zoomArmed) return;  // the wheel scrolls the notebook; Ctrl (a pinch) or a click zooms
    e.preventDefault();
    const f = Math.exp(-e.deltaY * 0.0015);
    const k = Math.min(2000, Math.max(0.2, view.k * f));
    const g = k / view.k;
    view.tx = e.offsetX - (e.offsetX - view.tx) * g;
    view.ty = e.offsetY - (e.offsetY - view.ty) * g;
    view.k = k;
    requestAnimationFrame(draw);
  }, { passive: false });
  canvas.addEventListener("dblclick", fit);
  // for scripts and browser tests: where an entry is drawn now (CSS px from the canvas' corner)
  root.sessionlabPositionOf = (id) => {
    const i = d ? d.ids.indexOf(id) : -1;
    return i < 0 ? null : [X(i), Y(i)];
  };
  reset.addEventListener("click", fit);

  model.on("change:tree", load);
  model.on("change:title", () => { title.textContent = model.get("title") || ""; });
  model.on("change:selected_id", draw);
  model.on("change:shown_id", () => {
    const explorer = root.closest(".sessionlab-branch-explorer");
    if (explorer && model.get("shown_id") === model.get("selected_id")) explorer.classList.remove("sessionlab-loading");
  });
  model.on("change:height", fit);
  model.on("change:live", syncLive);
  model.on("change:can_follow", syncLive);
  const ro = new ResizeObserver(() => fit());
  ro.observe(root);
  load();
  return () => ro.disconnect();
}

export default { render };
