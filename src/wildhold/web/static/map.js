// The map of a match on a canvas, shared by the live page and the replay viewer: the terrain drawn once,
// then each frame's nodes, structures, creatures and characters over it, with night and weather.
"use strict";

const WildholdMap = (() => {
  const TERRAIN_COLOURS = {
    meadow: "#8fbf6a", forest: "#3f7a3a", hills: "#a29580", water: "#3f78b5", sand: "#d9c98f",
    settlement: "#c9b8a0", dungeon_entrance: "#5a3d5c",
  };
  const FALLBACK = "#888";

  function prepare(canvas, map, size) {
    const scale = Math.max(1, Math.floor(size / Math.max(map.width, map.height)));
    canvas.width = map.width * scale;
    canvas.height = map.height * scale;
    const base = document.createElement("canvas");
    base.width = canvas.width; base.height = canvas.height;
    const g = base.getContext("2d");
    for (let i = 0; i < map.terrain.length; i++) {
      g.fillStyle = TERRAIN_COLOURS[map.terrain_names[map.terrain[i]]] || FALLBACK;
      g.fillRect((i % map.width) * scale, Math.floor(i / map.width) * scale, scale, scale);
    }
    return { canvas, map, base, scale };
  }

  function legend(box, map) {
    box.textContent = "";
    for (const name of map.terrain_names) {
      const sw = document.createElement("span");
      sw.textContent = "■ ";
      sw.style.color = TERRAIN_COLOURS[name] || FALLBACK;
      const label = document.createElement("span");
      label.textContent = name + "  ";
      box.append(sw, label);
    }
    const rest = document.createElement("span");
    rest.textContent = "· node  ▪ structure  ▲ creature  ● character";
    box.append(rest);
  }

  function draw(prepared, view, selected) {
    const { canvas, base, scale: s } = prepared;
    const g = canvas.getContext("2d");
    g.drawImage(base, 0, 0);
    g.fillStyle = "#2d2a26";
    for (const [x, y] of view.nodes) g.fillRect(x * s + s / 3, y * s + s / 3, Math.max(1, s / 3), Math.max(1, s / 3));
    for (const [x, y, kind] of view.structures) {
      g.fillStyle = kind.includes("wall") ? "#5b4630" : "#8a6a45";
      g.fillRect(x * s, y * s, s, s);
    }
    g.fillStyle = "#c0392b";
    for (const c of view.creatures) {
      g.beginPath();
      g.moveTo(c.x * s + s / 2, c.y * s); g.lineTo(c.x * s + s, c.y * s + s); g.lineTo(c.x * s, c.y * s + s);
      g.fill();
    }
    for (const c of view.characters) {
      if (c.dungeon) continue;
      g.fillStyle = c.colour;  // the server's: one per character, whatever its rank (wildhold.looks.palette)
      g.strokeStyle = c.agent === selected ? "#fff" : "#111";
      g.lineWidth = c.agent === selected ? 3 : 1;
      g.beginPath();
      g.arc(c.x * s + s / 2, c.y * s + s / 2, Math.max(2, s * 0.45), 0, 2 * Math.PI);
      g.fill(); g.stroke();
    }
    g.lineWidth = 1;
    const t = view.time;
    if (t && t.night) { g.fillStyle = "rgba(10, 20, 60, 0.35)"; g.fillRect(0, 0, canvas.width, canvas.height); }
    if (t && t.weather && t.weather !== "clear") {
      g.fillStyle = t.weather === "storm" ? "rgba(60, 60, 80, 0.25)" : "rgba(120, 150, 200, 0.15)";
      g.fillRect(0, 0, canvas.width, canvas.height);
    }
  }

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function summary(data) {
    const parts = [];
    for (const [k, val] of Object.entries(data)) {
      if (k === "agent" || k === "by") continue;
      const text = typeof val === "object" ? JSON.stringify(val) : String(val);
      parts.push(`${k}=${text.length > 60 ? text.slice(0, 57) + "…" : text}`);
      if (parts.length >= 5) break;
    }
    return parts.join(" ");
  }

  function clock(t) {
    return t ? `day ${t.day} ${String(t.hour).padStart(2, "0")}:${String(t.minute).padStart(2, "0")}, ${t.season}, ${t.weather}${t.night ? ", night" : ""}, tick ${t.tick}` : "";
  }

  // A coloured dot before a character's name, in the colour the map draws it.
  function dot(colour) {
    const mark = el("span", "● ");
    mark.style.color = colour;
    return mark;
  }

  return { prepare, legend, draw, el, dot, summary, clock, TERRAIN_COLOURS };
})();
