"""Farmer: tills, plants, waters and harvests a small field around where it stands, keeps its
character fed and rested, and logs what it does.

What it assumes. The character stands beside free meadow (best on a settlement tile: safe ground,
so resting there at night is no risk) and carries a hoe, a watering can, seeds (SEEDS) and food
(FOODS). It works up to PLOTS plots on the meadow within reach and never walks away; a fertilizer
it carries goes into a growing crop (once per crop, faster growth).

Each round by day (every ROUND_TICKS ticks) it eats when hungry, rests when tired, tills free meadow
for the plots it lacks (hoe in hand), plants each empty plot with the first seed it carries that is
in season, harvests what is ripe, and waters what has had no water today (can in hand; rain waters
too). At night it sleeps on its bed if it stands on one, else rests, till morning. It eats its own
harvest once the food it brought is gone. It farms until stopped (or, with HARVESTS above 0, until
it has harvested that many crops).

Rejections are handled by their code: busy (its agent acting directly) waits a tick; out_of_season
or a seed it lacks tries the next seed; a tile that cannot be tilled is passed over; a plot that is
gone is dropped; already_watered (rain) is fine; not_enough_energy rests. Others are logged.
"""

# The program API's functions (observe, log, move, ...) are the world's to provide, not imports.
# ruff: noqa: F821

PLOTS = 3
SEEDS = ["turnip_seed", "wheat_seed", "pumpkin_seed"]
FOODS = ["bread", "berry_stew", "cooked_fish", "berries", "turnip", "wheat", "pumpkin"]
HOE, CAN, FERTILIZER = "hoe", "watering_can", "fertilizer"
SOIL = "meadow"  # the terrain a hoe tills (the rules' Farming table)
RAIN = ["rain", "storm"]  # weathers that water every crop for the day
EAT_BELOW = 50  # satiety
REST_BELOW = 30  # energy
REST_TICKS = 60
ROUND_TICKS = 120
MORNING = 6 * 60  # minute of the day the night ends (the rules' Time table)
NIGHT = 21 * 60  # minute of the day the night begins
DAY_TICKS = 1440
HARVESTS = 0  # finish after this many harvests; 0: farm until stopped

field = []  # (x, y) of the plots it works
passed_over = {}  # tiles it could not till: (x, y) -> True
told = {}  # what it has already logged once: text -> True
unseasonal = {}  # seed -> the day the world said it is out of season (not tried again that day)
harvested = {"crops": 0}


def clock():
    t = now()
    minute = t % DAY_TICKS
    return "day " + str(t // DAY_TICKS + 1) + " " + str(minute // 60) + ":" + str(minute % 60 // 10) + str(minute % 10)


def note(*values):
    log(clock(), *values)


def once(text, per=""):
    """Log a line the first time only (per day, say): a missing tool would otherwise be logged every round."""
    key = text + "|" + per
    if key not in told:
        told[key] = True
        note(text)


def today():
    return str(now() // DAY_TICKS + 1)


def failed(r, what):
    """True when the action did not go through; logs why. busy waits a tick, not_enough_energy rests."""
    if r["ok"]:
        return False
    code = r["code"]
    if code == "busy":
        sleep_until(now() + 1)
    elif code == "not_enough_energy":
        note(what, "needs more energy: resting")
        rest(ticks=REST_TICKS)
    else:
        note(what, "->", code + ":", r["message"])
    return True


def hold(tool, me):
    """The tool in hand (equipping it if it is carried); True when it is."""
    if me["equipment"].get("hand") == tool:
        return True
    if me["inventory"].get(tool, 0) == 0:
        once("no " + tool + " carried")
        return False
    if failed(equip(item=tool), "equip " + tool):
        return False
    me["equipment"]["hand"] = tool
    return True


def next_food(inv):
    for food in FOODS:
        if inv.get(food, 0) > 0:
            return food
    return None


def upkeep(o):
    """Eat when hungry; rest when tired; at night rest (or sleep on its bed) till morning. True when it did."""
    me = o["self"]
    minute = now() % DAY_TICKS
    if me["satiety"] < EAT_BELOW:
        food = next_food(me["inventory"])
        if food is None:
            once("nothing left to eat")
        elif not failed(eat(item=food), "eat " + food):
            return True
    if minute >= NIGHT or minute < MORNING:
        ticks = (MORNING - minute) % DAY_TICKS
        if me["bed"] is not None and me["bed"] == [me["x"], me["y"]]:
            r = sleep(ticks=min(600, ticks))
        else:
            r = rest(ticks=min(600, ticks))
        return not failed(r, "night's rest")
    if me["energy"] < REST_BELOW:
        return not failed(rest(ticks=REST_TICKS), "rest")
    return False


def free_soil(o, plots):
    """Meadow within reach with no plot, node or structure on it: where a new plot may go."""
    me, view = o["self"], o["view"]
    taken = {}
    for t in view["tiles"]:
        if "node" in t or "structure" in t:
            taken[(t["x"], t["y"])] = True
    out = []
    for dy in [-1, 0, 1]:
        for dx in [-1, 0, 1]:
            x, y = me["x"] + dx, me["y"] + dy
            i, j = y - view["y0"], x - view["x0"]
            if (dx, dy) == (0, 0) or i < 0 or j < 0 or i >= len(view["rows"]) or j >= len(view["rows"][i]):
                continue
            if o["legend"].get(view["rows"][i][j]) != SOIL:
                continue
            if (x, y) not in taken and (x, y) not in plots and (x, y) not in passed_over:
                out.append((x, y))
    return out


def plots_here(o):
    out = {}
    for p in o["farming"]["plots"]:
        out[(p["x"], p["y"])] = p
    return out


def till_more(o):
    """Till free meadow until it works PLOTS plots (or runs out of soil within reach)."""
    me = o["self"]
    for spot in free_soil(o, plots_here(o)):
        if len(field) >= PLOTS or not hold(HOE, me):
            return
        r = till(x=spot[0], y=spot[1])
        if not failed(r, "till " + str(spot)):
            field.append(spot)
            note("tilled a plot at", spot)
        elif r["code"] != "busy":
            passed_over[spot] = True


def plant_one(spot, me):
    """Plant the first seed it carries that is in season; True when it planted."""
    carried = [seed for seed in SEEDS if me["inventory"].get(seed, 0) > 0]
    if not carried:
        once("no seeds left to plant")
        return False
    for seed in carried:
        if unseasonal.get(seed) == today():
            continue
        r = plant(x=spot[0], y=spot[1], seed=seed)
        if r["ok"]:
            me["inventory"][seed] -= 1
            note("planted", seed, "at", spot)
            return True
        if r["code"] != "out_of_season":
            failed(r, "plant " + seed)
            return False
        unseasonal[seed] = today()
    once("none of the seeds it carries is in season", today())
    return False


def tend(o):
    """One round over the field: plant, fertilise, harvest, then water with the can in hand. True when it
    planted (the new crops want water today: the caller looks again)."""
    me = o["self"]
    plots = plots_here(o)
    weather = o["time"]["weather"]
    if weather in RAIN and field:
        once("the " + weather + " waters the field today", today())
    dry, planted = [], False
    for spot in list(field):
        p = plots.get(spot)
        if p is None or p["owner"] != me["id"]:
            note("the plot at", spot, "is gone")
            field.remove(spot)
        elif p["crop"] is None:
            planted = plant_one(spot, me) or planted
        elif p["mature"]:
            r = harvest(x=spot[0], y=spot[1])
            got = r["result"]
            if not failed(r, "harvest " + str(spot)) and got is not None:
                harvested["crops"] += 1
                note("harvested", got, "at", spot, "| harvests so far:", harvested["crops"])
                planted = plant_one(spot, me) or planted
        else:
            if not p["fertilised"] and me["inventory"].get(FERTILIZER, 0) > 0:
                if not failed(fertilise(x=spot[0], y=spot[1]), "fertilise " + str(spot)):
                    me["inventory"][FERTILIZER] -= 1
                    note("fertilised the", p["crop"], "at", spot)
            if not p["watered_today"]:
                dry.append(spot)
    for spot in dry:
        if not hold(CAN, me):
            break
        r = water(x=spot[0], y=spot[1])
        if r["ok"]:
            crop = plots[spot]
            note("watered the", crop["crop"], "at", spot, "(" + str(crop["days_to_ripe"]), "days to ripe)")
        elif r["code"] != "already_watered":
            failed(r, "water " + str(spot))
    return planted


note("farming from", (observe()["self"]["x"], observe()["self"]["y"]))
while HARVESTS == 0 or harvested["crops"] < HARVESTS:
    o = observe()
    if upkeep(o):
        continue
    if len(field) < PLOTS:
        till_more(o)
        o = observe()
    if not field:
        once("no plot to work: no free meadow within reach")
    if tend(o):
        tend(observe())
    sleep_until(now() + ROUND_TICKS)
note("done:", harvested["crops"], "harvests")
