// Human play: a person joins as an agent and acts through the same HTTP tools every agent uses.
// The token lives in this tab's sessionStorage and goes out as a bearer header, as an agent's would;
// what is drawn is the character's own observation: its view square and the tiles it remembers.
// The form for any action is generated from the action's schema in the served OpenAPI document.
"use strict";

const { el, TERRAIN_COLOURS } = WildholdMap;
const KEYS = { ArrowUp: "n", w: "n", ArrowDown: "s", s: "s", ArrowLeft: "w", a: "w", ArrowRight: "e", d: "e",
               q: "nw", e: "ne", z: "sw", c: "se" };
const play = { token: sessionStorage.getItem("wildhold_play_token"), obs: null, known: new Map(), actions: {}, api: null };

async function call(method, path, body) {
  const r = await fetch(path, {
    method, headers: { "Authorization": "Bearer " + play.token, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await r.json().catch(() => ({}));
  return { ok: r.ok, status: r.status, data };
}

async function join(event) {
  event.preventDefault();
  const form = event.target;
  const r = await fetch("/api/agents", {
    method: "POST",
    headers: { "Authorization": "Bearer " + form.signup.value, "Content-Type": "application/json" },
    body: JSON.stringify({ name: form.name.value, harness: "human" }),
  });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    const box = document.getElementById("join-error");
    box.textContent = `${data.code || r.status}: ${data.message || "refused"}`;
    box.hidden = false;
    return;
  }
  play.token = data.token;
  sessionStorage.setItem("wildhold_play_token", data.token);
  await start();
}

async function observe() {
  const r = await call("GET", "/api/observe");
  if (!r.ok) { document.getElementById("status").textContent = `${r.data.code || r.status}: ${r.data.message || ""}`; return; }
  play.obs = r.data;
  for (const t of r.data.memory || []) play.known.set(t.x + "," + t.y, t.terrain);
  const v = r.data.view;
  v.rows.forEach((row, dy) => [...row].forEach((glyph, dx) => {
    const name = r.data.legend[glyph];
    if (name) play.known.set((v.x0 + dx) + "," + (v.y0 + dy), name);
  }));
  render();
}

function render() {
  const o = play.obs, me = o.self, t = o.time;
  document.getElementById("status").textContent =
    `${me.name} (${me.id}) at (${me.x}, ${me.y}) in ${me.region}; day ${t.day} ${String(t.hour).padStart(2, "0")}:${String(t.minute).padStart(2, "0")}, ${t.season}, ${t.weather}${t.night ? ", night" : ""}`;
  const card = document.getElementById("self");
  card.textContent = "";
  card.append(el("div", `health ${me.health}, energy ${me.energy}, satiety ${me.satiety}${me.asleep ? ", asleep" : ""}; knockdowns ${me.knockdowns}`));
  card.append(el("div", me.operation ? `doing ${me.operation.action} until tick ${me.operation.ends}` : "no operation", "sub"));
  card.append(el("div", "carrying: " + (Object.entries(me.inventory).map(([k, n]) => `${k} x${n}`).join(", ") || "nothing"), "sub"));
  const around = document.getElementById("around");
  around.textContent = "";
  for (const c of o.view.characters) around.append(el("li", `${c.name} (${c.id}) at (${c.x}, ${c.y})`));
  for (const c of o.view.creatures) around.append(el("li", `${c.kind} at (${c.x}, ${c.y})`));
  for (const v of o.villagers || []) around.append(el("li", `${v.npc}, ${v.role}, at (${v.x}, ${v.y})`));
  draw();
}

function draw() {
  const o = play.obs, v = o.view, me = o.self;
  const canvas = document.getElementById("view"), g = canvas.getContext("2d");
  const radius = 12, s = Math.floor(canvas.width / (2 * radius + 1));
  g.fillStyle = "#111"; g.fillRect(0, 0, canvas.width, canvas.height);
  const px = (x) => (x - me.x + radius) * s, py = (y) => (y - me.y + radius) * s;
  for (const [key, name] of play.known) {
    const [x, y] = key.split(",").map(Number);
    g.globalAlpha = 0.45;
    g.fillStyle = TERRAIN_COLOURS[name] || "#888";
    g.fillRect(px(x), py(y), s, s);
  }
  g.globalAlpha = 1;
  v.rows.forEach((row, dy) => [...row].forEach((glyph, dx) => {
    g.fillStyle = TERRAIN_COLOURS[o.legend[glyph]] || "#888";
    g.fillRect(px(v.x0 + dx), py(v.y0 + dy), s, s);
  }));
  g.fillStyle = "#2d2a26";
  for (const t of v.tiles) if (t.node) g.fillRect(px(t.x) + s / 3, py(t.y) + s / 3, s / 3, s / 3);
  g.fillStyle = "#8a6a45";
  for (const st of o.structures || []) g.fillRect(px(st.x) + 2, py(st.y) + 2, s - 4, s - 4);
  g.fillStyle = "#c0392b";
  for (const c of v.creatures) g.fillRect(px(c.x) + s / 4, py(c.y) + s / 4, s / 2, s / 2);
  for (const c of v.characters) { g.fillStyle = "#f58231"; g.beginPath(); g.arc(px(c.x) + s / 2, py(c.y) + s / 2, s * 0.4, 0, 7); g.fill(); }
  g.fillStyle = "#ffe119"; g.strokeStyle = "#000";
  g.beginPath(); g.arc(px(me.x) + s / 2, py(me.y) + s / 2, s * 0.45, 0, 7); g.fill(); g.stroke();
}

async function act(name, args) {
  const r = await call("POST", "/api/actions/" + encodeURIComponent(name), args);
  const out = document.getElementById("outcome");
  out.className = r.ok ? "sub accepted" : "sub refused";
  out.textContent = r.ok ? `${name}: ${r.data.status} (${r.data.op}, ends at tick ${r.data.ends})`
                         : `${name} refused: ${r.data.code || r.status}: ${r.data.message || ""}`;
  await observe();
  return r;
}

function nearbyNode() {
  const o = play.obs, me = o.self;
  const near = o.view.tiles.filter((t) => t.node && Math.abs(t.x - me.x) <= 1 && Math.abs(t.y - me.y) <= 1);
  return near.length ? near[0] : null;
}

function quickButtons() {
  const box = document.getElementById("quick");
  const add = (label, fn) => { const b = el("button", label); b.type = "button"; b.addEventListener("click", fn); box.append(b); };
  for (const dir of ["nw", "n", "ne", "w", "e", "sw", "s", "se"]) add(dir, () => act("move", { direction: dir }));
  add("gather", () => { const t = nearbyNode(); return t ? act("gather", { x: t.x, y: t.y }) : act("gather", { x: play.obs.self.x, y: play.obs.self.y }); });
  add("rest 10", () => act("rest", { ticks: 10 }));
  add("wait 1", () => act("wait", { ticks: 1 }));
}

function resolve(schema) {
  while (schema && schema.$ref) schema = play.api.components.schemas[schema.$ref.split("/").pop()];
  return schema || {};
}

function fieldFor(name, prop, required) {
  prop = resolve(prop.anyOf ? prop.anyOf.find((p) => p.type !== "null") || prop.anyOf[0] : prop);
  const label = el("label", name + " ");
  let input;
  if (prop.enum) {
    input = el("select");
    for (const v of prop.enum) input.append(el("option", v));
  } else {
    input = el("input");
    input.type = prop.type === "integer" || prop.type === "number" ? "number" : (prop.type === "boolean" ? "checkbox" : "text");
    if (prop.minimum !== undefined) input.min = prop.minimum;
    if (prop.maximum !== undefined) input.max = prop.maximum;
  }
  input.name = name;
  input.dataset.kind = prop.type || "string";
  input.required = required && input.type !== "checkbox";
  if (prop.description) label.title = prop.description;
  label.append(input);
  return label;
}

function showForm() {
  const name = document.getElementById("act-name").value;
  const box = document.getElementById("act-fields");
  box.textContent = "";
  const schema = resolve(play.actions[name]);
  const required = new Set(schema.required || []);
  for (const [field, prop] of Object.entries(schema.properties || {})) box.append(fieldFor(field, prop, required.has(field)));
}

async function submitForm(event) {
  event.preventDefault();
  const args = {};
  for (const input of document.querySelectorAll("#act-fields input, #act-fields select")) {
    if (input.type === "checkbox") { args[input.name] = input.checked; continue; }
    if (input.value === "") continue;
    const kind = input.dataset.kind;
    if (kind === "integer") args[input.name] = parseInt(input.value, 10);
    else if (kind === "number") args[input.name] = parseFloat(input.value);
    else if (kind === "object" || kind === "array") args[input.name] = JSON.parse(input.value);
    else args[input.name] = input.value;
  }
  await act(document.getElementById("act-name").value, args);
}

async function loadActions() {
  play.api = await (await fetch("/openapi.json")).json();
  const select = document.getElementById("act-name");
  for (const [path, item] of Object.entries(play.api.paths)) {
    const m = path.match(/^\/api\/actions\/([a-z_]+)$/);
    if (!m || !item.post) continue;
    const body = item.post.requestBody;
    play.actions[m[1]] = body ? body.content["application/json"].schema : { properties: {} };
    select.append(el("option", m[1]));
  }
  select.addEventListener("change", showForm);
  showForm();
}

function keys(event) {
  if (event.target.closest("form")) return;
  const dir = KEYS[event.key];
  if (dir) { event.preventDefault(); act("move", { direction: dir }); return; }
  if (event.key === "g") { const t = nearbyNode(); if (t) act("gather", { x: t.x, y: t.y }); }
  if (event.key === "r") act("rest", { ticks: 10 });
  if (event.key === ".") act("wait", { ticks: 1 });
}

async function start() {
  document.getElementById("join").hidden = true;
  document.getElementById("game").hidden = false;
  await loadActions();
  quickButtons();
  document.getElementById("act-form").addEventListener("submit", submitForm);
  document.addEventListener("keydown", keys);
  await observe();
  setInterval(observe, 1000);
}

document.getElementById("join-form").addEventListener("submit", join);
if (play.token) start();
