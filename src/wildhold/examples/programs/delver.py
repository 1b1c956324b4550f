"""Delver: walks to the dungeon entrance, clears one tier by reading the enemies' telegraphs, and
walks out again, logging each room.

What it assumes. No scenario starts a character armed, so it must carry a weapon (WEAPON: a
wooden_club, crafted at a workbench from 3 wood, clears tier 1) and may carry armour (ARMOUR:
padded_armor, from 8 fiber and 1 wood); it equips both itself and goes without what it lacks.
Healing potions (POTION) and energy tonics (TONIC) are optional. Start it in the morning: it walks
outside by day, and inside the dungeon the night cannot reach it. ENTRANCE may hold the
entrance's (x, y) when known (your observation's memory shows that tile as terrain
dungeon_entrance); left None, the delver explores for it, outward from where it starts (the
entrance is the tile farthest from the settlement), and goes there once it shows in its view.

How it fights. Each tick it reads its room: every enemy shows its next move, the damage that move
deals and whether it leaves the enemy vulnerable. A hit landing next tick is dodged (or guarded,
with too little energy to dodge); otherwise it drinks a potion when low, or strikes, first an enemy
whose next move is vulnerable (double damage), then the weakest. In a cleared room it eats, heals
and rests before it advances. It walks out when the tier's boss falls (resting inside till
morning if it is night), or when its health falls below LEAVE_BELOW with no potion left; weaker
than that with no potion, it does not go in at all.

Every rejection is logged with its code: busy (its agent acting directly) waits a tick and goes
on; after STUCK_AFTER rejections in a row it gives up (walking out if inside) rather than spin.
"""

# The program API's functions (observe, log, move, ...) are the world's to provide, not imports.
# ruff: noqa: F821

TIER = 1
ENTRANCE = None  # (x, y) of the dungeon entrance when known; None: search for it
WEAPON = "wooden_club"
ARMOUR = "padded_armor"
POTION = "healing_potion"
TONIC = "energy_tonic"
FOODS = ["bread", "berry_stew", "cooked_fish", "pumpkin", "turnip", "berries"]
HEAL_BELOW = 50  # drink a potion below this health
LEAVE_BELOW = 30  # walk out below this health when no potion is left
EAT_BELOW = 50  # eat below this satiety (never with an enemy standing: eating takes two ticks)
REST_BELOW = 40  # rest in a cleared room (or before going in) below this energy
REST_TICKS = 40
TONIC_BELOW = 10  # drink an energy tonic below this energy (when no hit lands next)
DODGE_ENERGY = 2  # what a dodge and a strike cost (the rules' Actions table)
STRIKE_ENERGY = 1
STUCK_AFTER = 10  # rejections in a row before it gives up
SEARCH_HOPS = 400  # walks toward the unseen before it gives up looking for the entrance
VIEW_RADIUS = 4  # a character sees 4 tiles around it (the rules' Fog of war)
UNWALKABLE = ["water"]  # terrain no one walks on (the rules' Terrain table)

STEP = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)]  # the eight neighbours
trouble = {"in_a_row": 0}  # rejections since the last action that went through


def failed(r, what):
    """Log a rejection or failure; True when the action did not complete. `busy` waits a tick first."""
    if r["ok"]:
        trouble["in_a_row"] = 0
        return False
    trouble["in_a_row"] += 1
    log(what, "->", r["code"] + ":", r["message"])
    if r["code"] == "busy":
        sleep_until(now() + 1)
    return True


def food_carried(inv):
    for item in FOODS:
        if inv.get(item, 0) > 0:
            return item
    return None


def gear_up():
    me = observe()["self"]
    for item, slot in [(WEAPON, "hand"), (ARMOUR, "body")]:
        if item is None or me["equipment"].get(slot) == item:
            continue
        if me["inventory"].get(item, 0) > 0:
            if not failed(equip(item=item), "equip " + item):
                log("equipped", item)
        else:
            log("no", item, "carried: going without")


def eat_and_rest(me):
    """Eat when hungry, rest when tired; True when it did either (the caller looks again)."""
    food = food_carried(me["inventory"])
    if me["satiety"] < EAT_BELOW and food is not None:
        failed(eat(item=food), "eat " + food)
        return True
    if me["energy"] < REST_BELOW:
        failed(rest(ticks=REST_TICKS), "rest")
        return True
    return False


# ---- finding and reaching the entrance ---------------------------------------------------------
# The delver keeps its own map of what it has seen: one string per row, "?" where unseen (a few KB to
# keep between turns, where a dict of tiles would take near a megabyte). It walks with move_to (the
# world finds the path over the tiles its character has seen) to a seen, walkable tile beside the
# unseen: the one nearest ENTRANCE when that is given, else the one farthest out from where it set
# off (the entrance is the tile farthest from the settlement), less half the way there.

rows = []
bounds = {"east": None, "south": None}  # the map's last column and row, once a view reached them
frontier = {}  # seen walkable tiles with an unseen neighbour: (x, y) -> True
tried = {}  # frontier tiles move_to could not reach
legend = {}  # glyph -> terrain


def cheb(a, b):
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def glyph(x, y):
    """The terrain glyph of (x, y) as seen: "?" when unseen, "" off the map."""
    east, south = bounds["east"], bounds["south"]
    if x < 0 or y < 0 or (east is not None and x > east) or (south is not None and y > south):
        return ""
    if y >= len(rows) or x >= len(rows[y]):
        return "?"
    return rows[y][x]


def walkable(g):
    return g != "" and g != "?" and legend.get(g) not in UNWALKABLE


def remember(o):
    """Add the view to the map and redraw the frontier around it; the entrance's (x, y) when in view."""
    view, me = o["view"], o["self"]
    for g, terrain in o["legend"].items():
        legend[g] = terrain
    x0, y0 = view["x0"], view["y0"]
    width, height = len(view["rows"][0]), len(view["rows"])
    if x0 + width - 1 < me["x"] + VIEW_RADIUS:  # the view is cut off by the map's edge
        bounds["east"] = x0 + width - 1
    if y0 + height - 1 < me["y"] + VIEW_RADIUS:
        bounds["south"] = y0 + height - 1
    found = None
    for i, row in enumerate(view["rows"]):
        y = y0 + i
        while len(rows) <= y:
            rows.append("")
        old = rows[y] + "?" * max(0, x0 - len(rows[y]))
        rows[y] = old[:x0] + row + old[x0 + width:]
        for j in range(width):
            if legend.get(row[j]) == "dungeon_entrance":
                found = (x0 + j, y)
    for y in range(y0 - 1, y0 + height + 1):
        for x in range(x0 - 1, x0 + width + 1):
            if walkable(glyph(x, y)) and "?" in [glyph(x + dx, y + dy) for (dx, dy) in STEP]:
                frontier[(x, y)] = True
            elif (x, y) in frontier:
                frontier.pop((x, y))
    return found


def next_target(here, start, aim):
    """The frontier tile to walk to next (None when none is left to try)."""
    best, best_score = None, 0
    for t in frontier:
        if t in tried or t == here:
            continue
        if aim is None:
            score = abs(t[0] - start[0]) + abs(t[1] - start[1]) - cheb(here, t) // 2
        else:
            score = -cheb(aim, t) - cheb(here, t) // 2
        if best is None or score > best_score:
            best, best_score = t, score
    return best


def reach_entrance():
    """Walk until the entrance is within reach: True, or False when it found no way there."""
    start, seen_at = None, None
    for _ in range(SEARCH_HOPS):
        o = observe()
        me = o["self"]
        here = (me["x"], me["y"])
        if start is None:
            start = here
            log("looking for the entrance from", here, "toward", ENTRANCE if ENTRANCE is not None else "the far side")
        spot = remember(o)
        if spot is not None and seen_at is None:
            seen_at = spot
            log("entrance seen at", spot, "on tick", now())
        aim = seen_at if seen_at is not None else ENTRANCE
        if aim is not None and cheb(here, aim) <= 1:
            return True
        if eat_and_rest(me):
            continue
        if aim is not None:  # straight there when the world knows a way (a rejection costs no time)
            r = move_to(x=aim[0], y=aim[1])
            if r["ok"] or r["code"] in ["busy", "path_blocked"]:
                failed(r, "walk to the entrance")
                continue
        target = next_target(here, start, aim)
        if target is None:
            log("explored all it could reach from", start, "without finding the entrance")
            return False
        r = move_to(x=target[0], y=target[1])
        if not r["ok"] and r["code"] not in ["busy", "path_blocked"]:
            tried[target] = True
        elif r["code"] == "busy":
            sleep_until(now() + 1)
    log("gave up looking after", SEARCH_HOPS, "walks")
    return False


# ---- inside ------------------------------------------------------------------------------------


def target_of(enemies):
    """Strike first an enemy whose next move is vulnerable, then the weakest (fewest hp, then id)."""
    best, best_key = enemies[0], None
    for e in enemies:
        key = (0 if e["next"]["vulnerable"] else 1, e["hp"], e["id"])
        if best_key is None or key < best_key:
            best, best_key = e, key
    return best


def combat_turn(me, enemies):
    """One decision with enemies standing: 'leave' when it is time to go, else None."""
    inv = me["inventory"]
    incoming = 0
    for e in enemies:
        incoming += e["next"]["damage"]
    if incoming > 0:
        if me["energy"] >= DODGE_ENERGY:
            r = dodge()
            if r["ok"] or r["code"] != "not_enough_energy":
                failed(r, "dodge")
                return None
        failed(guard(), "guard")
        return None
    if me["health"] < HEAL_BELOW and inv.get(POTION, 0) > 0:
        failed(use_consumable(item=POTION), "potion")
        return None
    if me["health"] < LEAVE_BELOW:
        return "leave"
    if me["energy"] < TONIC_BELOW and inv.get(TONIC, 0) > 0:
        failed(use_consumable(item=TONIC), "tonic")
        return None
    if me["energy"] < STRIKE_ENERGY:
        return "leave"
    e = target_of(enemies)
    r = strike(enemy=e["id"])
    if r["code"] == "no_enemy":  # it fell meanwhile: look again
        return None
    hit = r["result"]
    if not failed(r, "strike " + e["id"]) and hit is not None and hit["defeated"]:
        log("  defeated", e["kind"], e["id"], "at tick", now())
    return None


def between_rooms(me, room):
    """In a room with no enemy left: eat, heal, rest, then go on. 'done' once the tier's boss is down."""
    inv = me["inventory"]
    if room["cleared"]:
        return "done"
    if eat_and_rest(me):
        return None
    if me["health"] < HEAL_BELOW and inv.get(POTION, 0) > 0:
        failed(use_consumable(item=POTION), "potion")
        return None
    failed(advance(), "advance")
    return None


def describe(room, me):
    names = [e["kind"] + " " + e["id"] for e in room["enemies"]]
    return ("room " + str(room["room"]) + "/" + str(room["rooms"]) + ": " + ", ".join(names)
            + " | health " + str(me["health"]) + ", energy " + str(me["energy"]))


def delve():
    """Fight room by room; True when the tier's boss fell, False when it had to leave or was carried out."""
    logged, cleared = 0, 0
    while True:
        o = observe()
        me, d = o["self"], o["dungeon"]
        if not d["in_dungeon"]:
            log("carried out of the dungeon (knocked down) at tick", now())
            return False
        if trouble["in_a_row"] >= STUCK_AFTER:
            log("stuck after", trouble["in_a_row"], "rejections in a row: walking out")
            failed(leave_dungeon(), "leave")
            return False
        room = d["room"]
        if room["room"] != logged:
            logged = room["room"]
            log(describe(room, me))
        if room["enemies"]:
            if combat_turn(me, room["enemies"]) == "leave":
                log("leaving: health", me["health"], "energy", me["energy"], "with nothing left to drink")
                failed(leave_dungeon(), "leave")
                return False
            continue
        if cleared != room["room"]:
            cleared = room["room"]
            log("room", cleared, "cleared at tick", now(), "| health", me["health"],
                "damage taken", room["damage_taken"])
        if between_rooms(me, room) == "done":
            log("tier", room["tier"], room["tier_name"], "cleared: damage taken", room["damage_taken"],
                "potions and tonics", room["consumables_used"])
            return True


def leave_by_day():
    while True:
        o = observe()
        if not o["dungeon"]["in_dungeon"]:
            return
        if o["time"]["night"]:
            failed(rest(ticks=REST_TICKS), "rest till morning")
            continue
        r = leave_dungeon()
        if not failed(r, "leave"):
            log("out of the dungeon at tick", now(), "carrying", observe()["self"]["inventory"])
            return


# ---- the expedition ----------------------------------------------------------------------------

gear_up()
inside = observe()["dungeon"]["in_dungeon"]
while not inside:
    if trouble["in_a_row"] >= STUCK_AFTER:
        log("stuck after", trouble["in_a_row"], "rejections in a row: giving up")
        break
    me = observe()["self"]
    if eat_and_rest(me):
        continue
    if me["health"] < LEAVE_BELOW and me["inventory"].get(POTION, 0) == 0:
        log("too weak to go in: health", me["health"], "and no", POTION)
        break
    if not reach_entrance():
        break
    r = enter_dungeon(tier=TIER)
    if not failed(r, "enter tier " + str(TIER)):
        log("entered tier", TIER, "at tick", now())
        inside = True
    elif r["code"] == "in_dungeon":
        inside = True
    elif r["code"] in ["tier_locked", "unknown_tier"]:
        break
if inside:
    if delve():
        leave_by_day()
