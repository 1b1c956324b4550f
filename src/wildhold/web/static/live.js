// The live page of a served match: the map on a canvas, standings, agent cards and the event feed,
// redrawn from each view the server pushes (server-sent events, polling if the stream fails).
// Every string an agent wrote is set as text, never parsed as HTML.
"use strict";

const { el, dot } = WildholdMap;
const state = { map: null, view: null, prepared: null };

async function loadMap() {
  const r = await fetch("/api/live/map", { credentials: "same-origin" });
  if (!r.ok) throw new Error("map: " + r.status);
  state.map = await r.json();
  state.prepared = WildholdMap.prepare(document.getElementById("map"), state.map, 768);
  WildholdMap.legend(document.getElementById("legend"), state.map);
}

function draw() {
  if (state.view && state.prepared) WildholdMap.draw(state.prepared, state.view, null);
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
  const when = WildholdMap.clock(t);
  document.getElementById("clock").textContent = `${v.scenario}: ${v.status}, clock ${v.clock}; ${when}` +
    (v.degraded ? ` | DEGRADED: ${v.degraded}` : "");

  const body = document.querySelector("#standings tbody");
  body.textContent = "";
  for (const c of v.characters) {
    const row = el("tr");
    const name = el("td");
    name.append(dot(c.colour), el("span", c.name));
    row.append(el("td", c.rank === null ? "–" : c.rank), name, el("td", money(c.wealth_cents)));
    body.append(row);
  }

  const cards = document.getElementById("cards");
  cards.textContent = "";
  for (const c of v.characters) {
    const card = el("div", null, "card");
    card.dataset.agent = c.agent;
    const title = el("div");
    title.append(dot(c.colour), el("span", c.name, "name"), el("span", `  ${c.agent}${c.model ? ", " + c.model : ""}${c.harness ? " via " + c.harness : ""}`, "sub"));
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
  }

  const feed = document.getElementById("feed");
  feed.textContent = "";
  for (const e of v.feed) {
    const who = e.data.agent || e.data.by || "";
    feed.append(el("li", `#${e.seq} tick ${e.tick} ${e.kind}${who ? " " + who : ""} ${WildholdMap.summary(e.data)}`));
  }
  draw();
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
