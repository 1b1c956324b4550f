// The replay viewer: a scrubber over the whole match, the map and the events at any tick, and with a run
// folder each agent's track on the same timeline (sessions, model turns, tool calls and results, workspace
// writes, program saves with their diffs, spend). An action's tool call is linked to the events of the
// operation it started: click one to see the other. Deep links: #tick=N&agent=ID.
"use strict";

const { el, dot } = WildholdMap;
const viewer = { meta: null, prepared: null, frame: null, track: null, agent: null, tick: 0, pending: null, playing: null };

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  return { tick: params.has("tick") ? Number(params.get("tick")) : null, agent: params.get("agent") };
}

function writeHash() {
  const params = new URLSearchParams();
  params.set("tick", viewer.tick);
  if (viewer.agent) params.set("agent", viewer.agent);
  history.replaceState(null, "", "#" + params.toString());
}

async function getJSON(path) {
  const r = await fetch(path);
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

async function goTo(tick) {
  const m = viewer.meta;
  tick = Math.max(m.start_tick, Math.min(m.final_tick, Math.round(tick)));
  viewer.tick = tick;
  document.getElementById("tick").value = tick;
  document.getElementById("tick-box").value = tick;
  writeHash();
  if (viewer.pending) return;  // one request at a time; the latest tick wins when it returns
  viewer.pending = tick;
  try {
    const frame = await getJSON("/api/view/frame?tick=" + tick);
    viewer.frame = frame;
    render();
  } finally {
    const asked = viewer.pending;
    viewer.pending = null;
    if (viewer.tick !== asked) goTo(viewer.tick);
  }
}

function render() {
  const f = viewer.frame;
  document.getElementById("clock").textContent = WildholdMap.clock(f.time) + `; ${f.events_so_far} events so far`;
  WildholdMap.draw(viewer.prepared, f, viewer.agent);
  const body = document.querySelector("#standings tbody");
  body.textContent = "";
  for (const c of f.characters) {
    const row = el("tr");
    const name = el("td");
    name.append(dot(c.colour), el("span", c.name));
    row.append(el("td", c.rank), name, el("td", c.dungeon ? "dungeon" : `${c.x}, ${c.y}`), el("td", c.health),
               el("td", c.operation ? c.operation.action : ""));
    row.addEventListener("click", () => selectAgent(c.agent));
    body.append(row);
  }
  const linked = new Set(viewer.linkedEvents || []);
  const feed = document.getElementById("feed");
  feed.textContent = "";
  for (const e of f.feed) {
    const who = e.data.agent || e.data.by || "";
    const li = el("li", `#${e.seq} tick ${e.tick} ${e.kind}${who ? " " + who : ""} ${WildholdMap.summary(e.data)}`);
    if (linked.has(e.seq)) li.className = "linked";
    if (e.data.op) li.addEventListener("click", () => showCause(e.data.op));
    feed.append(li);
  }
  markTrack();
}

function lanes() {
  const box = document.getElementById("lanes");
  box.textContent = "";
  if (!viewer.tracks) return;
  const m = viewer.meta, span = Math.max(1, m.final_tick - m.start_tick);
  for (const [agent, track] of Object.entries(viewer.tracks)) {
    const who = m.agents.find((a) => a.id === agent);
    const lane = el("div", null, "lane");
    const label = el("span", null, "label");
    label.append(dot(who ? who.colour : "#888"), el("span", who ? who.name : agent));
    lane.append(label);
    for (const s of track.sessions) {
      const bar = el("div", null, "span");
      if (who) bar.style.background = who.colour;
      bar.style.left = (100 * (s.start - m.start_tick) / span) + "%";
      bar.style.width = Math.max(0.3, 100 * (s.end - s.start) / span) + "%";
      bar.title = `session ${s.session}: ticks ${s.start}–${s.end}`;
      bar.addEventListener("click", () => { selectAgent(agent); goTo(s.start); });
      lane.append(bar);
    }
    box.append(lane);
  }
  const mark = el("div", null, "mark");
  mark.id = "lane-mark";
  box.append(mark);
}

async function loadTracks() {
  viewer.tracks = {};
  for (const agent of viewer.meta.tracks) viewer.tracks[agent] = await getJSON("/api/view/track/" + encodeURIComponent(agent));
  const select = document.getElementById("agent");
  for (const agent of viewer.meta.tracks) {
    const who = viewer.meta.agents.find((a) => a.id === agent);
    const opt = el("option", who ? `${who.name} (${agent})` : agent);
    opt.value = agent;
    select.append(opt);
  }
  select.addEventListener("change", () => selectAgent(select.value));
  lanes();
}

function selectAgent(agent) {
  viewer.agent = agent;
  writeHash();
  const track = viewer.tracks && viewer.tracks[agent];
  const list = document.getElementById("track");
  list.textContent = "";
  if (!track) { if (viewer.frame) render(); return; }
  document.getElementById("agent").value = agent;
  document.getElementById("track-summary").textContent =
    `${track.sessions.length} sessions, ${track.items.filter((i) => i.kind === "llm_call").length} model turns, $${track.dollars.toFixed(4)}, ${track.tokens.toLocaleString()} tokens`;
  track.items.forEach((item, i) => {
    const li = el("li", `tick ${item.tick} · ${describe(item)}`);
    li.dataset.index = i;
    li.addEventListener("click", () => showItem(item));
    list.append(li);
  });
  if (viewer.frame) render();
}

function describe(item) {
  switch (item.kind) {
    case "llm_call": return `model turn: ${item.text ? item.text.slice(0, 80) : "(no text)"}${item.calls.length ? " → " + item.calls.map((c) => c.name).join(", ") : ""}`;
    case "tool_call": return `${item.name} ${item.code !== "ok" ? "(" + item.code + ")" : ""}${item.op ? " → " + item.op : ""}`;
    case "workspace_write": return `wrote ${item.path} (${item.bytes} bytes)`;
    case "session_start": return `session ${item.session} starts`;
    case "session_end": return `session ${item.session} ends (${item.reason})`;
    default: return item.kind;
  }
}

function showItem(item) {
  const detail = document.getElementById("detail");
  const parts = [describe(item)];
  if (item.kind === "llm_call") {
    parts.push(item.text || "", ...item.calls.map((c) => `call ${c.name} ${JSON.stringify(c.arguments)}`),
               `spend so far: $${item.dollars.toFixed(4)}, ${item.tokens} tokens`);
  } else if (item.kind === "tool_call") {
    parts.push("arguments: " + JSON.stringify(item.arguments), "result: " + (typeof item.result === "string" ? item.result : JSON.stringify(item.result)));
    if (item.diff) parts.push(item.diff);
    if (item.events) parts.push(`caused events ${item.events.join(", ")}`);
  } else {
    parts.push(JSON.stringify(item));
  }
  detail.textContent = parts.join("\n\n");
  viewer.linkedEvents = item.events || [];
  goTo(item.tick);
}

function showCause(op) {
  if (!viewer.tracks) return;
  for (const [agent, track] of Object.entries(viewer.tracks)) {
    const i = track.items.findIndex((item) => item.op === op);
    if (i < 0) continue;
    selectAgent(agent);
    const li = document.querySelector(`#track li[data-index="${i}"]`);
    if (li) { li.scrollIntoView({ block: "center" }); }
    // the model turn that made this call is the last turn before it
    const turn = track.items.slice(0, i).reverse().find((item) => item.kind === "llm_call");
    showItem(turn ? { ...turn, events: track.items[i].events, tick: track.items[i].tick } : track.items[i]);
    return;
  }
}

function markTrack() {
  const m = viewer.meta, span = Math.max(1, m.final_tick - m.start_tick);
  const mark = document.getElementById("lane-mark");
  if (mark) mark.style.left = (100 * (viewer.tick - m.start_tick) / span) + "%";
  for (const li of document.querySelectorAll("#track li")) {
    const item = viewer.tracks[viewer.agent].items[Number(li.dataset.index)];
    li.classList.toggle("here", item.tick === viewer.tick);
  }
}

function togglePlay() {
  const button = document.getElementById("play");
  if (viewer.playing) { clearInterval(viewer.playing); viewer.playing = null; button.textContent = "▶"; return; }
  button.textContent = "⏸";
  viewer.playing = setInterval(() => {
    if (viewer.tick >= viewer.meta.final_tick) { togglePlay(); return; }
    goTo(viewer.tick + 1);
  }, 250);
}

async function start() {
  viewer.meta = await getJSON("/api/view/meta");
  viewer.prepared = WildholdMap.prepare(document.getElementById("map"), viewer.meta.map, 640);
  WildholdMap.legend(document.getElementById("legend"), viewer.meta.map);
  document.getElementById("tick").addEventListener("input", (e) => goTo(Number(e.target.value)));
  document.getElementById("tick-box").addEventListener("change", (e) => goTo(Number(e.target.value)));
  document.getElementById("play").addEventListener("click", togglePlay);
  if (viewer.meta.tracks.length) await loadTracks();
  const wanted = readHash();
  if (wanted.agent) selectAgent(wanted.agent);
  else if (viewer.meta.tracks.length) selectAgent(viewer.meta.tracks[0]);
  await goTo(wanted.tick === null ? viewer.meta.start_tick : wanted.tick);
}

start().catch((err) => { document.getElementById("clock").textContent = "cannot load the replay: " + err.message; });
