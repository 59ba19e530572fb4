// The interactive graph view of agentic-machines (drawing/interactive.py embeds this file
// and the graph's data in one HTML page; nothing is fetched from the network).
// Data: window.AM_DATA = {title, roots, nodes, edges, legend, path, note, keys}; see
// interactive.py's view_data for each field (texts are cut there, by the package's one rule). Drawn on a canvas so 10,000 states stay fluid.
(function () {
  "use strict";
  const t0 = performance.now();
  const D = window.AM_DATA;
  const N = D.nodes, E = D.edges;
  const COLW = 90, ROWH = 90, R = 14;
  const canvas = document.getElementById("graph");
  const ctx = canvas.getContext("2d");
  const $ = (id) => document.getElementById(id);
  const out = [], inc = [];
  N.forEach(() => { out.push([]); inc.push([]); });
  E.forEach((e, i) => { out[e.s].push(i); inc[e.t].push(i); });
  const state = {
    scale: 1, ox: 0, oy: 0, selected: -1, matches: new Set(), group: new Set(),
    collapsed: new Set(), hidden: new Set(), filter: "", path: D.path || [],
  };
  const pathEdges = new Set();

  function markPath(path) {
    pathEdges.clear();
    for (let i = 0; i + 1 < path.length; i++) {
      const e = out[path[i]].find((j) => E[j].t === path[i + 1]);
      if (e !== undefined) pathEdges.add(e);
    }
  }
  markPath(state.path);

  // -- the prompt: stored as what it keeps of its parent's and what it adds ------------
  const prompts = new Array(N.length);
  function promptOf(i) {
    if (prompts[i] !== undefined) return prompts[i];
    const chain = [];
    let j = i;
    while (j >= 0 && prompts[j] === undefined) { chain.push(j); j = N[j].parent; }
    for (let k = chain.length - 1; k >= 0; k--) {
      const n = N[chain[k]];
      const base = n.parent >= 0 ? prompts[n.parent] : "";
      prompts[chain[k]] = n.prompt === null ? null : (base || "").slice(0, n.kept) + n.added;
    }
    return prompts[i];
  }

  // -- geometry -------------------------------------------------------------------------
  const wx = (n) => n.x * COLW, wy = (n) => -n.y * ROWH;
  function toScreen(x, y) { return [x * state.scale + state.ox, y * state.scale + state.oy]; }
  function resize() {
    const r = canvas.parentElement.getBoundingClientRect();
    canvas.width = r.width * devicePixelRatio; canvas.height = r.height * devicePixelRatio;
    canvas.style.width = r.width + "px"; canvas.style.height = r.height + "px";
    draw();
  }
  function fit(indices) {
    const list = indices && indices.length ? indices : N.map((_, i) => i);
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (const i of list) {
      const x = wx(N[i]), y = wy(N[i]);
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
    const w = canvas.width / devicePixelRatio, h = canvas.height / devicePixelRatio;
    state.scale = Math.min(2, Math.max(0.02, Math.min((w - 80) / (x1 - x0 + 1), (h - 80) / (y1 - y0 + 1))));
    state.ox = w / 2 - ((x0 + x1) / 2) * state.scale;
    state.oy = h / 2 - ((y0 + y1) / 2) * state.scale;
  }

  function edgeShown(i) {
    const e = E[i];
    if (state.hidden.has(e.s) || state.hidden.has(e.t)) return false;
    if (!state.filter) return true;
    return e.c.some((c) => c.toLowerCase().includes(state.filter));
  }

  function shape(n, x, y, r) {
    ctx.beginPath();
    if (n.shape === "s") ctx.rect(x - r, y - r, 2 * r, 2 * r);
    else if (n.shape === "D") { ctx.moveTo(x, y - r * 1.2); ctx.lineTo(x + r * 1.2, y); ctx.lineTo(x, y + r * 1.2); ctx.lineTo(x - r * 1.2, y); ctx.closePath(); }
    else if (n.shape === "h") { for (let k = 0; k < 6; k++) { const a = Math.PI / 6 + k * Math.PI / 3; ctx.lineTo(x + r * 1.1 * Math.cos(a), y + r * 1.1 * Math.sin(a)); } ctx.closePath(); }
    else ctx.arc(x, y, r, 0, 2 * Math.PI);
  }

  function draw() {
    const dpr = devicePixelRatio, w = canvas.width / dpr, h = canvas.height / dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const s = state.scale, r = Math.max(2, R * s), detail = s > 0.35;
    const seen = (x, y) => x > -50 && x < w + 50 && y > -50 && y < h + 50;
    ctx.lineWidth = 1;
    for (let i = 0; i < E.length; i++) {
      if (!edgeShown(i) || pathEdges.has(i)) continue;
      drawEdge(i, D.colors.edge, 1, detail, seen);
    }
    for (const i of pathEdges) drawEdge(i, D.colors.highlight, 4, detail, seen);
    for (let i = 0; i < N.length; i++) {
      if (state.hidden.has(i)) continue;
      const n = N[i];
      const [x, y] = toScreen(wx(n), wy(n));
      if (!seen(x, y)) continue;
      shape(n, x, y, r);
      ctx.fillStyle = n.color; ctx.fill();
      let ring = "#555", width = 1;
      if (n.initial) { ring = D.colors.initial; width = 3; }
      if (state.path.includes(i)) { ring = D.colors.highlight; width = 4; }
      if (state.group.has(i)) { ring = "#7b2cbf"; width = 4; }
      if (state.matches.has(i)) { ring = "#0066ff"; width = 4; }
      if (i === state.selected) { ring = "#000"; width = 5; }
      if (!n.expanded) ctx.setLineDash([4, 3]);
      ctx.strokeStyle = ring; ctx.lineWidth = width; ctx.stroke(); ctx.setLineDash([]);
      if (state.collapsed.has(i)) {
        ctx.fillStyle = "#000"; ctx.font = "bold 12px sans-serif"; ctx.fillText("+", x + r + 2, y - r);
      }
      if (detail) {
        ctx.fillStyle = "#111"; ctx.font = Math.round(Math.min(16, 11 * Math.max(1, s))) + "px sans-serif";
        ctx.textAlign = "center"; ctx.fillText(fitText(n.label, COLW * s - 8), x, y + r + 13);
      }
    }
    ctx.textAlign = "start";
  }

  // A label wider than its column is cut, so neighbours' labels never run into each other.
  function fitText(text, room) {
    if (ctx.measureText(text).width <= room) return text;
    let lo = 0, hi = text.length;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (ctx.measureText(text.slice(0, mid) + "…").width <= room) lo = mid; else hi = mid - 1; }
    return text.slice(0, lo) + "…";
  }

  function drawEdge(i, color, width, detail, seen) {
    const e = E[i], a = N[e.s], b = N[e.t];
    const [x1, y1] = toScreen(wx(a), wy(a)), [x2, y2] = toScreen(wx(b), wy(b));
    if (!seen(x1, y1) && !seen(x2, y2) && !seen((x1 + x2) / 2, (y1 + y2) / 2)) return;
    ctx.strokeStyle = color; ctx.lineWidth = width; ctx.beginPath();
    if (e.s === e.t) {
      const rr = Math.max(4, R * state.scale);
      ctx.arc(x1, y1 - rr * 1.6, rr * 0.9, 0, 2 * Math.PI); ctx.stroke(); return;
    }
    ctx.moveTo(x1, y1); ctx.lineTo(x2, y2); ctx.stroke();
    if (!detail) return;
    const d = Math.hypot(x2 - x1, y2 - y1) || 1, ux = (x2 - x1) / d, uy = (y2 - y1) / d;
    const rr = R * state.scale + 2, hx = x2 - ux * rr, hy = y2 - uy * rr;
    ctx.fillStyle = color; ctx.beginPath(); ctx.moveTo(hx, hy);
    ctx.lineTo(hx - ux * 9 - uy * 4, hy - uy * 9 + ux * 4); ctx.lineTo(hx - ux * 9 + uy * 4, hy - uy * 9 - ux * 4);
    ctx.closePath(); ctx.fill();
    if (state.scale > 1.4) {
      ctx.fillStyle = "#333"; ctx.font = "11px sans-serif";
      ctx.fillText(fitText(e.label, 60 * state.scale), (x1 + x2) / 2 + 4, (y1 + y2) / 2 - 3);
    }
  }

  // -- pan, zoom, click -------------------------------------------------------------------
  let drag = null, moved = false;
  canvas.addEventListener("mousedown", (ev) => { drag = [ev.clientX, ev.clientY, state.ox, state.oy]; moved = false; });
  window.addEventListener("mousemove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag[0], dy = ev.clientY - drag[1];
    if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
    state.ox = drag[2] + dx; state.oy = drag[3] + dy; requestAnimationFrame(draw);
  });
  window.addEventListener("mouseup", () => { drag = null; });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const rect = canvas.getBoundingClientRect(), mx = ev.clientX - rect.left, my = ev.clientY - rect.top;
    const f = Math.exp(-ev.deltaY * 0.0015);
    const s = Math.min(8, Math.max(0.01, state.scale * f));
    state.ox = mx - (mx - state.ox) * (s / state.scale); state.oy = my - (my - state.oy) * (s / state.scale);
    state.scale = s; requestAnimationFrame(draw);
  }, { passive: false });
  canvas.addEventListener("click", (ev) => {
    if (moved) return;
    const rect = canvas.getBoundingClientRect();
    const i = nodeAt(ev.clientX - rect.left, ev.clientY - rect.top);
    if (i >= 0) select(i);
  });
  function nodeAt(mx, my) {
    let best = -1, bestD = Math.max(8, R * state.scale * 1.3) ** 2;
    for (let i = 0; i < N.length; i++) {
      if (state.hidden.has(i)) continue;
      const [x, y] = toScreen(wx(N[i]), wy(N[i]));
      const d = (x - mx) ** 2 + (y - my) ** 2;
      if (d < bestD) { bestD = d; best = i; }
    }
    return best;
  }

  // -- the panel ------------------------------------------------------------------------
  // A count and its noun, singular for 1 (the Python side's _text.counted), for the
  // counts only the page knows: what a search found, a group's size.
  const counted = (n, noun) => `${n.toLocaleString("en-US")} ${n === 1 ? noun : noun + "s"}`;
  const esc = (t) => String(t).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  const link = (i) => `<a href="#" class="node" data-i="${i}">${esc(N[i].id)}</a>`;
  function pathTo(i) {
    const p = [];
    for (let j = i; j >= 0; j = N[j].parent) p.unshift(j);
    return p;
  }

  function select(i) {
    state.selected = i;
    const n = N[i], p = promptOf(i);
    const parts = [`<h2>${esc(n.id)} <small>${esc(n.label)}</small></h2>`];
    parts.push(`<div class="kv">kind: ${esc(n.kind)}${n.role !== n.kind ? " · " + esc(n.role) : ""} · depth ${n.depth}${n.expanded ? "" : " · not expanded (bound)"}</div>`);
    if (n.state) parts.push(`<div class="kv">state: <code>${esc(n.state)}</code></div>`);
    if (n.ending) parts.push(`<div class="kv ending">${esc(n.ending)}</div>`);
    if (p !== null && p !== undefined) {
      const kept = n.parent >= 0 ? n.kept : 0;
      parts.push(`<h3>prompt <small>(${counted(p.length, "character")}; <mark>highlighted</mark>: added to its parent's)</small></h3>`);
      parts.push(`<pre id="prompt">${esc(p.slice(0, kept))}<mark>${esc(p.slice(kept))}</mark></pre>`);
    }
    const rows = out[i].map((j) => {
      const e = E[j], t = N[e.t];
      const kind = t.kind === "state" ? "→ " + link(e.t) : `<span class="outcome ${esc(t.kind)}">${esc(t.label)}</span>`;
      return `<li>${e.c.map((c) => `<code>${esc(c)}</code>`).join(", ")} ${kind}</li>`;
    });
    for (const u of n.undecided || []) rows.push(`<li><code>${esc(u.c)}</code> <span class="outcome ${u.kind}">${esc(u.kind)}</span> <small>${esc(u.reason)}</small></li>`);
    if (n.kind === "state" && n.expanded && !rows.length) rows.push(`<li><span class="outcome stuck">stuck: no completion leads anywhere</span></li>`);
    if (rows.length) parts.push(`<h3>completions (${rows.length})</h3><ul id="out">${rows.join("")}</ul>`);
    parts.push(`<h3>path from the start</h3><div id="pathto">${pathTo(i).map(link).join(" → ")}</div>`);
    if (n.kind === "state" && out[i].length) {
      parts.push(`<button id="collapse">${state.collapsed.has(i) ? "expand the subtree" : "collapse the subtree"}</button>`);
    }
    $("details").innerHTML = parts.join("\n");
    const btn = $("collapse");
    if (btn) btn.onclick = () => { toggleCollapse(i); select(i); };
    draw();
  }

  function toggleCollapse(i) {
    if (state.collapsed.has(i)) state.collapsed.delete(i); else state.collapsed.add(i);
    const reached = new Set(), stack = D.roots.slice();
    while (stack.length) {
      const j = stack.pop();
      if (reached.has(j)) continue;
      reached.add(j);
      if (state.collapsed.has(j)) continue;
      for (const k of out[j]) stack.push(E[k].t);
    }
    state.hidden = new Set(N.map((_, j) => j).filter((j) => !reached.has(j)));
    draw();
  }

  function search(text) {
    const q = text.trim().toLowerCase();
    state.matches = new Set();
    const found = [];
    if (q) {
      for (let i = 0; i < N.length; i++) {
        const p = promptOf(i);
        if ((p && p.toLowerCase().includes(q)) || N[i].label.toLowerCase().includes(q)) {
          state.matches.add(i); found.push(i);
        }
      }
    }
    $("results").innerHTML = q ? `${counted(found.length, "state")}: ` + found.slice(0, 50).map(link).join(" ") + (found.length > 50 ? " …" : "") : "";
    if (found.length) { fit(found.slice(0, 200)); }
    draw();
    return found.length;
  }

  function groupBy(key) {
    const groups = new Map();
    state.group = new Set();
    if (key) {
      for (let i = 0; i < N.length; i++) {
        const v = key === "prompt" ? promptOf(i) : N[i].keys ? N[i].keys[key] : undefined;
        if (v === undefined || v === null) continue;
        if (!groups.has(v)) groups.set(v, []);
        groups.get(v).push(i);
      }
    }
    const list = [...groups.entries()].sort((a, b) => b[1].length - a[1].length);
    // A value as Python cut it (view_data's short, keys_short: where it differs from its
    // parent's and siblings'), or whole when it needed no cut.
    const shown = (i, v) => (key === "prompt" ? N[i].short : (N[i].keys_short || {})[key]) ?? String(v);
    $("groups").innerHTML = list.slice(0, 40).map(([v, m], g) =>
      `<li><a href="#" class="group" data-g="${g}">${counted(m.length, "state")}</a>: <code>${esc(shown(m[0], v))}</code></li>`).join("");
    $("groups").onclick = (ev) => {
      const a = ev.target.closest(".group");
      if (!a) return;
      ev.preventDefault();
      state.group = new Set(list[+a.dataset.g][1]); fit([...state.group]); draw();
    };
    draw();
  }

  document.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest("a.node");
    if (!a) return;
    ev.preventDefault();
    const i = +a.dataset.i;
    select(i); fit([i].concat(out[i].map((k) => E[k].t))); draw();
  });
  $("search").addEventListener("input", (ev) => search(ev.target.value));
  $("filter").addEventListener("input", (ev) => { state.filter = ev.target.value.trim().toLowerCase(); draw(); });
  $("groupby").addEventListener("change", (ev) => groupBy(ev.target.value));
  $("fit").addEventListener("click", () => { fit(); draw(); });
  window.addEventListener("resize", resize);

  $("legend").innerHTML = D.legend.map(([text, color, sh]) => {
    const look = sh === "ring" ? `border:3px solid ${color};background:#fff` : sh === "dashed" ? `border:2px dashed ${color};background:#fff` : sh === "line" ? `background:${color};height:3px;border-radius:0` : `background:${color}`;
    return `<li><span class="swatch ${sh}" style="${look}"></span>${esc(text)}</li>`;
  }).join("");
  if (D.note) $("note").textContent = D.note;
  if (state.path.length) {
    $("counterexample").innerHTML = `<h3>${esc(D.path_title || "counterexample")}</h3>` +
      state.path.map(link).join(" → ");
  }
  const r = canvas.parentElement.getBoundingClientRect();
  canvas.width = r.width * devicePixelRatio; canvas.height = r.height * devicePixelRatio;
  canvas.style.width = r.width + "px"; canvas.style.height = r.height + "px";
  fit(state.path.length ? state.path : null);
  draw();
  if (state.path.length) select(state.path[state.path.length - 1]);
  // For tests and scripts: where a node is on the screen, and how long loading took.
  window.amView = {
    ready: true, loadMs: performance.now() - t0, nodes: N.length, edges: E.length,
    screenPos: (id) => {
      const i = N.findIndex((n) => n.id === id);
      const rect = canvas.getBoundingClientRect();
      const [x, y] = toScreen(wx(N[i]), wy(N[i]));
      return [x + rect.left, y + rect.top];
    },
    focus: (id) => { const i = N.findIndex((n) => n.id === id); fit([i]); state.scale = 1; const w = canvas.width / devicePixelRatio, h = canvas.height / devicePixelRatio; state.ox = w / 2 - wx(N[i]); state.oy = h / 2 - wy(N[i]); draw(); },
    selected: () => (state.selected >= 0 ? N[state.selected].id : null),
    pathIds: () => state.path.map((i) => N[i].id),
    hidden: () => state.hidden.size,
  };
})();
