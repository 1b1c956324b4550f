// The live page of a served match: the map on a canvas, standings, agent cards and the event feed,
// redrawn from each view the server pushes (server-sent events, polling if the stream fails).
// Every string an agent wrote is set as text, never parsed as HTML.
"use strict";

const TERRAIN_COLOURS = {
  meadow: "#8fbf6a", forest: "#3f7a3a", hills: "#a29580", water: "#3f78b5", sand: "#d9c98f",
  settlement: "#c9b8a0", dungeon_entrance: "#5a3d5c",
};
const FALLBACK_COLOUR = "#888";
const CHARACTER_COLOURS = ["#e6194b", "#f58231", "#ffe119", "#911eb4", "#46f0f0", "#f032e6", "#ffffff", "#000075"];

const state = { map: null, view: null, base: null, scale: 1 };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function colourOf(index) {
  return CHARACTER_COLOURS[index % CHARACTER_COLOURS.length];
}

async function loadMap() {
  const r = await fetch("/api/live/map", { credentials: "same-origin" });
  if (!r.ok) throw new Error("map: " + r.status);
  state.map = await r.json();
  const m = state.map;
  const canvas = document.getElementById("map");
  state.scale = Math.max(1, Math.floor(768 / Math.max(m.width, m.height)));
  canvas.width = m.width * state.scale;
  canvas.height = m.height * state.scale;
  // The terrain never changes: draw it once into an offscreen canvas, copied under every frame.
  const base = document.createElement("canvas");
  base.width = canvas.width; base.height = canvas.height;
  const g = base.getContext("2d");
  for (let i = 0; i < m.terrain.length; i++) {
    const name = m.terrain_names[m.terrain[i]];
    g.fillStyle = TERRAIN_COLOURS[name] || FALLBACK_COLOUR;
    g.fillRect((i % m.width) * state.scale, Math.floor(i / m.width) * state.scale, state.scale, state.scale);
  }
  state.base = base;
  const legend = document.getElementById("legend");
  legend.textContent = "";
  for (const name of m.terrain_names) {
    const sw = el("span", "■ ");
    sw.style.color = TERRAIN_COLOURS[name] || FALLBACK_COLOUR;
    legend.append(sw, el("span", name + "  "));
  }
  legend.append(el("span", "· node  ▪ structure  ▲ creature  ● character"));
}

function draw() {
  const v = state.view, m = state.map;
  if (!v || !m || !state.base) return;
  const canvas = document.getElementById("map");
  const g = canvas.getContext("2d");
  const s = state.scale;
  g.drawImage(state.base, 0, 0);
  g.fillStyle = "#2d2a26";
  for (const [x, y] of v.nodes) g.fillRect(x * s + s / 3, y * s + s / 3, Math.max(1, s / 3), Math.max(1, s / 3));
  for (const [x, y, kind] of v.structures) {
    g.fillStyle = kind.includes("wall") ? "#5b4630" : "#8a6a45";
    g.fillRect(x * s, y * s, s, s);
  }
  g.fillStyle = "#c0392b";
  for (const c of v.creatures) {
    g.beginPath();
    g.moveTo(c.x * s + s / 2, c.y * s); g.lineTo(c.x * s + s, c.y * s + s); g.lineTo(c.x * s, c.y * s + s);
    g.fill();
  }
  v.characters.forEach((c, i) => {
    if (c.dungeon) return;
    g.fillStyle = colourOf(i);
    g.strokeStyle = "#111";
    g.beginPath();
    g.arc(c.x * s + s / 2, c.y * s + s / 2, Math.max(2, s * 0.45), 0, 2 * Math.PI);
    g.fill(); g.stroke();
  });
  if (v.time && v.time.night) { g.fillStyle = "rgba(10, 20, 60, 0.35)"; g.fillRect(0, 0, canvas.width, canvas.height); }
  if (v.time && v.time.weather && v.time.weather !== "clear") {
    g.fillStyle = v.time.weather === "storm" ? "rgba(60, 60, 80, 0.25)" : "rgba(120, 150, 200, 0.15)";
    g.fillRect(0, 0, canvas.width, canvas.height);
  }
}

function money(cents) { return (cents / 100).toFixed(2); }

function bar(value, max, colour) {
  const outer = el("span", null, "bar");
  const inner = el("span");
  inner.style.width = Math.max(0, Math.min(100, (100 * value) / max)) + "%";
  inner.style.background = colour;
  outer.append(inner);
  return outer;
}

function render() {
  const v = state.view;
  const t = v.time;
  const when = t ? `day ${t.day} ${String(t.hour).padStart(2, "0")}:${String(t.minute).padStart(2, "0")}, ${t.season}, ${t.weather}${t.night ? ", night" : ""}, tick ${t.tick}` : "";
  document.getElementById("clock").textContent = `${v.scenario}: ${v.status}, clock ${v.clock}; ${when}`;

  const body = document.querySelector("#standings tbody");
  body.textContent = "";
  for (const c of v.characters) {
    const row = el("tr");
    row.append(el("td", c.rank === null ? "–" : c.rank), el("td", c.name), el("td", money(c.wealth_cents)));
    body.append(row);
  }

  const cards = document.getElementById("cards");
  cards.textContent = "";
  v.characters.forEach((c, i) => {
    const card = el("div", null, "card");
    card.dataset.agent = c.agent;
    const dot = el("span", "● ");
    dot.style.color = colourOf(i);
    const title = el("div");
    title.append(dot, el("span", c.name, "name"), el("span", `  ${c.agent}${c.model ? ", " + c.model : ""}${c.harness ? " via " + c.harness : ""}`, "sub"));
    card.append(title);
    const where = c.dungeon ? "in the dungeon" : `at (${c.x}, ${c.y})`;
    card.append(el("div", `${where}${c.asleep ? ", asleep" : ""}${c.idle ? ", idle" : ""}; knockdowns ${c.knockdowns}`, "sub"));
    const needs = el("div");
    needs.append(el("span", "health "), bar(c.health, 100, "#c0392b"), el("span", "energy "), bar(c.energy, 100, "#f1c40f"),
                 el("span", "satiety "), bar(c.satiety, 100, "#27ae60"));
    card.append(needs);
    card.append(el("div", c.operation ? `doing ${c.operation.action} (ticks ${c.operation.started}–${c.operation.ends})` : "no operation", "sub"));
    for (const p of c.programs) card.append(el("div", `program ${p.name}@${p.revision}: ${p.state}${p.error ? " (" + p.error + ")" : ""}`, "sub"));
    const recent = el("ul", null, "sub");
    for (const r of c.recent.slice().reverse()) {
      recent.append(el("li", r.accepted ? `${r.tick} ${r.action} → ${r.op}` : `${r.tick} ${r.action} refused: ${r.code}`,
                       r.accepted ? "accepted" : "refused"));
    }
    card.append(recent);
    cards.append(card);
  });

  const feed = document.getElementById("feed");
  feed.textContent = "";
  for (const e of v.feed) {
    const who = e.data.agent || e.data.by || "";
    feed.append(el("li", `#${e.seq} tick ${e.tick} ${e.kind}${who ? " " + who : ""} ${summary(e.data)}`));
  }
  draw();
}

function summary(data) {
  const skip = new Set(["agent", "by"]);
  const parts = [];
  for (const [k, val] of Object.entries(data)) {
    if (skip.has(k)) continue;
    const text = typeof val === "object" ? JSON.stringify(val) : String(val);
    parts.push(`${k}=${text.length > 60 ? text.slice(0, 57) + "…" : text}`);
    if (parts.length >= 5) break;
  }
  return parts.join(" ");
}

function accept(view) {
  state.view = view;
  render();
}

async function poll() {
  try {
    const r = await fetch("/api/live", { credentials: "same-origin" });
    if (r.ok) accept(await r.json());
  } finally {
    setTimeout(poll, 1000);
  }
}

async function start() {
  await loadMap();
  if (!window.EventSource) { poll(); return; }
  const source = new EventSource("/api/live/stream");
  let failures = 0;
  source.addEventListener("view", (e) => { failures = 0; accept(JSON.parse(e.data)); });
  source.onerror = () => { if (++failures > 5) { source.close(); poll(); } };
}

start().catch((err) => { document.getElementById("clock").textContent = "cannot reach the live view: " + err.message; });
