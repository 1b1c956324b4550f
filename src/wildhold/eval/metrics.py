"""Per-agent metrics of a match, folded in one pass from its archive's verified event log.

Everything here is a pure function of the archive (manifest and events) and the content's value
tables: no live state, no final snapshot. Wealth is the public formula of `wildhold.world.wealth`
rebuilt from the events (carried and escrowed items, owned structures by hp, storehouse deposits,
reputation, attribute levels), sampled over time; tests hold it equal to `wealth_cents` on the
final state. Map coverage replays each character's positions (spawn, moves, respawns) over the
seed's worldgen with the view radius.
"""

from __future__ import annotations

import gc
import zipfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from operator import itemgetter
from typing import Any, Iterable

import orjson

from wildhold.content import Content, default_content
from wildhold.store.archive import Archive, ArchiveError
from wildhold.world.events import GENESIS, link

CATEGORIES = ("production", "construction", "combat", "maintenance", "movement", "social")
PRODUCED = ("gather", "craft", "cook", "harvest", "collect", "produce", "artwork")
IDLE_FLOOR_TICKS = 30  # silences shorter than this are not recorded; every rubric's threshold is above
CURVE_POINTS = 120  # wealth samples per match (at most)
KING = "shadow_king"
PROGRAM_ISSUER = "program:"  # issuers of program actions: "program:<name>@<revision>"


# ---- reading an archive --------------------------------------------------------------------


@contextmanager
def quiet_gc():
    """Pause the cyclic collector while building many small containers that never form cycles
    (a large log otherwise triggers hundreds of full collections); restores the previous state."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass
class MatchRecord:
    """What a report reads: the manifest, the verified events, and each agent's epilogue (unscored)."""

    manifest: dict[str, Any]
    events: list[dict[str, Any]]
    epilogues: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = ""


_SUFFIX_LEN = len(b',"hash":"') + 32 + len(b'"}')  # lines are {"event":<payload>,"hash":"<32 hex>"}


def load_match(path: Path | str) -> MatchRecord:
    """Open an archive, verify every hash link while parsing each event once, and refuse a tampered log.

    Raises ArchiveError (the same messages as `Archive.verify`) when an event does not match its
    hash or the log does not end where the manifest says.
    """
    with Archive(path) as archive:
        manifest = archive.manifest
        try:
            raw = archive.zip.read("events.jsonl")
            extra = archive.zip.read("epilogues.json") if "epilogues.json" in archive.zip.namelist() else None
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            raise ArchiveError(f"{archive.path}: unreadable event log ({exc})") from None
        where = archive.path
    with quiet_gc():
        events, head = _verified_events(raw, where)
    if len(events) != manifest.get("event_count") or head != manifest.get("chain_head"):
        raise ArchiveError(f"{where}: the log ends at event {len(events)} ({head[:12]}) but the manifest says "
                           f"{manifest.get('event_count')} ({str(manifest.get('chain_head'))[:12]})")
    epilogues = dict(manifest.get("epilogues") or {})
    if extra is not None:
        epilogues.update(orjson.loads(extra))
    return MatchRecord(manifest, events, dict(sorted(epilogues.items())), where.name)


def _verified_events(raw: bytes, where: Path) -> tuple[list[dict[str, Any]], str]:
    """Check the chain over each line's payload (the slice between the store's fixed prefix and
    suffix), then parse every payload once; a line in another layout is hashed in canonical form."""
    lines = raw.splitlines()
    payloads = [line[9:-_SUFFIX_LEN] for line in lines]
    head = GENESIS
    for n, (payload, line) in enumerate(zip(payloads, lines)):
        nxt = link(head, payload)
        if nxt.encode() != line[-34:-2]:
            try:
                record = orjson.loads(line)
                payload = orjson.dumps(record["event"], option=orjson.OPT_SORT_KEYS)
                nxt = link(head, payload)
                ok = nxt == record["hash"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                ok = False
            if not ok:
                raise ArchiveError(f"{where}: event {n + 1} does not match its hash: the log was altered")
            payloads[n] = payload
        head = nxt
    return list(map(orjson.loads, payloads)), head


# ---- metrics -------------------------------------------------------------------------------


@dataclass
class LevelStats:
    """One dungeon level (a tier, or the Shadow King) for one character: seed 000 Figure 4."""

    attempts: int = 0
    clears: int = 0
    damage: list[int] = field(default_factory=list)  # damage taken in each clear
    consumables: list[int] = field(default_factory=list)  # consumables used in each clear

    @property
    def clear_rate(self) -> float | None:
        return self.clears / self.attempts if self.attempts else None

    @property
    def mean_damage(self) -> float | None:
        return sum(self.damage) / len(self.damage) if self.damage else None


@dataclass
class AgentMetrics:
    agent: str
    name: str
    config: str  # the agent configuration: model string, else policy, else name
    join_index: int
    spawn_tick: int
    ticks_alive: int = 0
    # actions (executed = operations started), by category and issuer; rejections
    actions: int = 0
    by_category: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    by_issuer: dict[str, int] = field(default_factory=dict)
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    rejected: int = 0
    rejected_by_code: dict[str, int] = field(default_factory=dict)
    # programs (agent-written code acting for the character): actions they issued, revisions saved,
    # failures by reason
    program_actions: int = 0
    program_revisions: int = 0
    program_failures: dict[str, int] = field(default_factory=dict)
    # production
    crafts: int = 0
    goods: int = 0
    goods_kinds: list[str] = field(default_factory=list)
    gathered: int = 0
    structures_placed: int = 0
    # survival
    knockdowns: int = 0
    knockdown_ticks: list[int] = field(default_factory=list)
    health_final: int = 0
    energy_depleted: bool = False
    starved: bool = False
    # movement and map
    moves: int = 0
    tiles_seen: int = 0
    regions_seen: list[str] = field(default_factory=list)
    # society and economy
    exchanges: int = 0  # trades completed either way + orders filled either way + contracts fulfilled
    trades: int = 0
    trade_offers: int = 0
    orders_filled: int = 0
    contracts_fulfilled: int = 0
    contracts_defaulted: int = 0
    messages: int = 0
    partners: list[str] = field(default_factory=list)
    reputation: int = 0
    attribute_levels: int = 0
    quests_completed: int = 0
    quest_ticks: list[int] = field(default_factory=list)
    community: int = 0  # villager talks, gifts, purchases and sales (quests counted apart)
    raids: int = 0
    attacked_by_others: int = 0
    # wealth (cents)
    wealth_start_cents: int = 0
    wealth_cents: int = 0
    wealth_terms: dict[str, int] = field(default_factory=dict)
    wealth_curve: list[list[int]] = field(default_factory=list)  # [tick, cents]
    # idle: silences of IDLE_FLOOR_TICKS or more, [start, end) ticks; `agent_idle` events included
    idle_spans: list[list[int]] = field(default_factory=list)
    # dungeon (seed 000): level name -> stats; Table 3 columns and the trial come from eval.season/eval.trial
    dungeon: dict[str, LevelStats] = field(default_factory=dict)
    kills: int = 0
    bosses: int = 0
    coins: int = 0
    depth: int = 0
    hero: bool = False
    outfit: bool = False
    trial_native: int = 0
    trial_first_unmet: str | None = None
    trial_stages: dict[str, int] = field(default_factory=dict)  # stage -> tick attained (independent)
    trial_evidence: dict[str, list[int]] = field(default_factory=dict)  # stage -> event seqs
    trial_native_ticks: dict[str, int] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)  # task -> tick
    # [tick, health, needs met (energy and satiety above 0)] at every change: the survival integrals
    needs_steps: list[tuple[int, int, bool]] = field(default_factory=list, repr=False)

    @property
    def program_share(self) -> float:
        """Share of executed actions that a program issued (0 when the character did nothing)."""
        return self.program_actions / self.actions if self.actions else 0.0

    def rate(self, count: float) -> float:
        """Per 100 ticks alive."""
        return count * 100 / self.ticks_alive if self.ticks_alive > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the survival step function."""
        d = asdict(self)
        del d["needs_steps"]
        d["program_share"] = self.program_share
        d["dungeon"] = {k: {**asdict(v), "clear_rate": v.clear_rate, "mean_damage": v.mean_damage} for k, v in self.dungeon.items()}
        return d


@dataclass
class MatchMetrics:
    scenario: str
    seed: int
    start_tick: int
    final_tick: int
    width: int
    height: int
    map_tiles: int
    map_regions: list[str]
    levels: list[str]  # dungeon levels in order: tier names, then the Shadow King
    agents: dict[str, AgentMetrics]  # in joining order
    has_dungeon: bool
    has_trial: bool
    stages: list[str]
    stage_names: dict[str, str]
    event_count: int
    kinds: dict[str, int]  # events by kind
    max_health: int
    ticks_per_day: int


def config_of(entry: dict[str, Any]) -> str:
    """An agent configuration's label: its model string when an LLM drove it, else its policy, else its name."""
    for key in ("model", "policy", "config"):
        if entry.get(key):
            return str(entry[key])
    return str(entry.get("name", entry.get("id", "?")))


class _Wealth:
    """The public wealth formula folded over item, structure, reputation and attribute events."""

    def __init__(self, content: Content, agents: dict[str, AgentMetrics]):
        self.values = {k: v.value_cents for k, v in content.items.items()}
        self.structure_specs = {k: (s.value_cents, s.hp) for k, s in content.structures.items()}
        self.rep_cents = content.wealth.reputation_cents
        self.level_cents = content.wealth.attribute_level_cents
        self.carried = dict.fromkeys(agents, 0)
        self.escrow: dict[str, int] = {}  # holder -> value
        self.escrow_owner: dict[str, str] = {}
        self.deposits = dict.fromkeys(agents, 0)
        self.structures: dict[tuple[int, int], list] = {}  # (x, y) -> [kind, owner, hp]
        self.structure_value = dict.fromkeys(agents, 0)
        self.levels: dict[str, dict[str, int]] = {a: {} for a in agents}

    def _structure_cents(self, kind: str, hp: int) -> int:
        value, max_hp = self.structure_specs.get(kind, (0, 1))
        return value * hp // max_hp if hp > 0 else 0

    def item(self, holder: str, item: str, qty: int) -> None:
        v = self.values.get(item, 0) * qty
        if holder in self.carried:
            self.carried[holder] += v
        elif holder.startswith("escrow@"):
            left = self.escrow.get(holder, 0) + v
            if left:
                self.escrow[holder] = left
            else:
                del self.escrow[holder]  # closed (or worthless): keeps the sum over open escrows short
        elif holder.startswith("deposit@"):
            owner = holder.rsplit(":", 1)[1]
            if owner in self.deposits:
                self.deposits[owner] += v

    def structure(self, x: int, y: int, kind: str | None, owner: str | None, hp: int) -> None:
        """Set (kind given) or remove (kind None) the structure on a tile."""
        key = (x, y)
        old = self.structures.pop(key, None)
        if old is not None and old[1] in self.structure_value:
            self.structure_value[old[1]] -= self._structure_cents(old[0], old[2])
        if kind is not None:
            self.structures[key] = [kind, owner, hp]
            if owner in self.structure_value:
                self.structure_value[owner] += self._structure_cents(kind, hp)

    def hp(self, x: int, y: int, hp: int) -> None:
        old = self.structures.get((x, y))
        if old is not None:
            self.structure(x, y, old[0], old[1], hp)

    def terms(self, agent: str, reputation: int) -> dict[str, int]:
        escrowed = sum(v for h, v in self.escrow.items() if self.escrow_owner.get(h) == agent)
        return {
            "carried": self.carried[agent],
            "escrowed": escrowed,
            "structures": self.structure_value[agent],
            "deposits": self.deposits[agent],
            "reputation": reputation * self.rep_cents,
            "attributes": sum(self.levels[agent].values()) * self.level_cents,
        }


def compute_metrics(record: MatchRecord, content: Content | None = None) -> MatchMetrics:
    """Fold a match's events into per-agent metrics (see the module docstring)."""
    with quiet_gc():
        return _compute(record, content or default_content())


def _compute(record: MatchRecord, content: Content) -> MatchMetrics:
    from wildhold.eval.trial import assess
    from wildhold.world.actions.registry import REGISTRY
    from wildhold.world.parts.trial import STAGES

    m = record.manifest
    scenario, seed = m["scenario"], m["seed"]
    events = record.events
    final_tick = max(m.get("final_tick", 0), events[-1]["tick"] if events else 0)
    start_tick = m.get("start_tick", events[0]["tick"] if events else 0)
    spec = content.scenario(scenario)
    width, height = spec.width, spec.height
    roster = {a["id"]: a for a in m.get("agents", [])}
    category = {name: a.category for name, a in REGISTRY.items()}
    tiers = list(content.dungeon.tiers)
    levels = [*tiers, KING]
    coin = content.dungeon.coin
    max_health = content.needs.max_health

    agents: dict[str, AgentMetrics] = {}
    wealth = _Wealth(content, agents)
    reputation: dict[str, int] = {}
    running: dict[str, set[str]] = {}
    free_since: dict[str, int] = {}
    idle: dict[str, list[list[int]]] = {}
    positions: dict[str, set[int]] = {}
    partners: dict[str, set[str]] = {}
    goods_kinds: dict[str, set[str]] = {}
    instances: dict[tuple[str, str], set[str]] = {}  # (agent, level) -> instance ids attempted
    last_needs: dict[str, tuple[int, bool]] = {}
    kinds = Counter(map(itemgetter("kind"), events))

    span = max(final_tick - start_tick, 1)
    step = max(1, -(-span // CURVE_POINTS))
    next_sample = start_tick + step

    def sample(tick: int) -> None:
        for a, am in agents.items():
            am.wealth_curve.append([tick, sum(wealth.terms(a, reputation.get(a, 0)).values())])

    def engage(a: str, b: str) -> None:
        if a in agents and b in agents and a != b:
            partners[a].add(b)
            partners[b].add(a)

    def issued(a: str, tick: int) -> None:
        since = free_since.pop(a, None)
        if since is not None and not running[a] and tick - since >= IDLE_FLOOR_TICKS:
            idle[a].append([since, tick])

    for e in events:
        kind, tick, d = e["kind"], e["tick"], e["data"]
        if tick >= next_sample:
            while tick >= next_sample and next_sample < final_tick:
                sample(next_sample)
                next_sample += step
        if kind == "moved":
            a = d["agent"]
            if a in agents:
                agents[a].moves += 1
                x, y = d["to"]
                positions[a].add(y * width + x)
        elif kind == "needs":
            a = d["agent"]
            if a in agents:
                ok = d["energy"] > 0 and d["satiety"] > 0
                state = (d["health"], ok)
                if last_needs[a] != state:
                    last_needs[a] = state
                    agents[a].needs_steps.append((tick, d["health"], ok))
                if d["energy"] <= 0:
                    agents[a].energy_depleted = True
                if d["satiety"] <= 0:
                    agents[a].starved = True
        elif kind == "operation_started":
            a = d["agent"]
            am = agents.get(a)
            if am is not None:
                issued(a, tick)
                running[a].add(d["op"])
                am.actions += 1
                cat = category.get(d["action"], "other")
                am.by_category[cat] = am.by_category.get(cat, 0) + 1
                am.by_issuer[d["issuer"]] = am.by_issuer.get(d["issuer"], 0) + 1
                if d["issuer"].startswith(PROGRAM_ISSUER):
                    am.program_actions += 1
        elif kind in ("operation_completed", "operation_failed", "operation_cancelled"):
            a = d["agent"]
            am = agents.get(a)
            if am is not None:
                running[a].discard(d["op"])
                if not running[a]:
                    free_since[a] = tick
                if kind == "operation_completed":
                    am.completed += 1
                    if d["action"] in ("craft", "cook"):
                        am.crafts += 1
                elif kind == "operation_failed":
                    am.failed += 1
                else:
                    am.cancelled += 1
        elif kind == "item_gained" or kind == "item_lost":
            holder, qty = d["holder"], d["qty"]
            if kind == "item_gained":
                wealth.item(holder, d["item"], qty)
                am = agents.get(holder)
                if am is not None:
                    source = d["source"]
                    head = source.split(":", 1)[0]
                    if head in PRODUCED:
                        am.goods += qty
                        goods_kinds[holder].add(d["item"])
                        if head == "gather":
                            am.gathered += qty
                    elif head == "start":
                        am.wealth_start_cents += wealth.values.get(d["item"], 0) * qty
                    elif d["item"] == coin and head == "dungeon":
                        am.coins += qty
            else:
                wealth.item(holder, d["item"], -qty)
        elif kind == "action_rejected":
            a = d["agent"]
            am = agents.get(a)
            if am is not None:
                issued(a, tick)
                if not running[a]:
                    free_since[a] = tick
                am.rejected += 1
                am.rejected_by_code[d["code"]] = am.rejected_by_code.get(d["code"], 0) + 1
        elif kind == "agent_spawned":
            a = d["agent"]
            entry = roster.get(a, {"id": a, "name": d["name"]})
            am = AgentMetrics(a, d["name"], config_of(entry), len(agents), tick, health_final=max_health)
            agents[a] = am
            for store in (wealth.carried, wealth.deposits, wealth.structure_value):
                store[a] = 0
            wealth.levels[a] = {}
            running[a], idle[a], partners[a], goods_kinds[a] = set(), [], set(), set()
            free_since[a] = tick
            positions[a] = {d["y"] * width + d["x"]}
            last_needs[a] = (max_health, True)
            am.needs_steps.append((tick, max_health, True))
        elif kind == "knockdown":
            a = d["agent"]
            if a in agents:
                agents[a].knockdowns += 1
                agents[a].knockdown_ticks.append(tick)
                x, y = d["respawn"]
                positions[a].add(y * width + x)
        elif kind == "structure_placed":
            wealth.structure(d["x"], d["y"], d["structure"], d["owner"], d["hp"])
            if d["owner"] in agents:
                agents[d["owner"]].structures_placed += 1
        elif kind in ("structure_damaged", "structure_repaired"):
            wealth.hp(d["x"], d["y"], d["hp"])
            if kind == "structure_damaged" and d["by"] in agents and d["owner"] not in (None, d["by"]):
                agents[d["by"]].raids += 1
                if d["owner"] in agents:
                    agents[d["owner"]].attacked_by_others += 1
        elif kind in ("structure_destroyed", "structure_demolished"):
            wealth.structure(d["x"], d["y"], None, None, 0)
        elif kind == "animal_left":
            if d.get("structure_removed"):
                wealth.structure(d["x"], d["y"], None, None, 0)
        elif kind == "trade_offered":
            wealth.escrow_owner[f"escrow@{d['offer']}"] = d["agent"]
            if d["agent"] in agents:
                agents[d["agent"]].trade_offers += 1
            engage(d["agent"], d["to"])
        elif kind == "trade_completed":
            for a in (d["agent"], d["to"]):
                if a in agents:
                    agents[a].trades += 1
                    agents[a].exchanges += 1
            engage(d["agent"], d["to"])
        elif kind == "contract_offered":
            wealth.escrow_owner[f"escrow@{d['contract']}"] = d["payer"]
            engage(d["payer"], d["deliverer"])
        elif kind == "contract_fulfilled":
            for a in (d["payer"], d["deliverer"]):
                if a in agents:
                    agents[a].exchanges += 1
            if d["deliverer"] in agents:
                agents[d["deliverer"]].contracts_fulfilled += 1
        elif kind == "contract_defaulted":
            if d["defaulter"] in agents:
                agents[d["defaulter"]].contracts_defaulted += 1
        elif kind == "order_posted":
            wealth.escrow_owner[f"escrow@{d['order']}"] = d["agent"]
        elif kind == "order_filled":
            for a in (d["agent"], d["by"]):
                if a in agents:
                    agents[a].orders_filled += 1
                    agents[a].exchanges += 1
            engage(d["agent"], d["by"])
        elif kind == "reputation_changed":
            reputation[d["agent"]] = d["value"]
        elif kind == "attribute_trained":
            if d["agent"] in wealth.levels:
                wealth.levels[d["agent"]][d["attribute"]] = d["level"]
        elif kind in ("message_said", "message_whispered", "message_posted"):
            a = d["agent"]
            if a in agents:
                agents[a].messages += 1
                for other in d.get("heard_by", ()):
                    engage(a, other)
                if "to" in d:
                    engage(a, d["to"])
        elif kind == "character_attacked":
            if d["agent"] in agents:
                agents[d["agent"]].raids += 1
            if d["target"] in agents:
                agents[d["target"]].attacked_by_others += 1
        elif kind == "quest_completed":
            if d["agent"] in agents:
                agents[d["agent"]].quests_completed += 1
                agents[d["agent"]].quest_ticks.append(tick)
        elif kind in ("talked", "gift_given", "bought", "sold"):
            if d["agent"] in agents:
                agents[d["agent"]].community += 1
        elif kind == "program_saved":
            if d["agent"] in agents:
                agents[d["agent"]].program_revisions += 1
        elif kind == "program_failed":
            am = agents.get(d["agent"])
            if am is not None:
                am.program_failures[d["reason"]] = am.program_failures.get(d["reason"], 0) + 1
        elif kind == "agent_idle":
            a = d["agent"]
            if a in agents:
                idle[a].append([d["since_tick"], tick])
        elif kind == "dungeon_entered":
            key = (d["agent"], tiers[d["tier"] - 1] if 0 < d["tier"] <= len(tiers) else str(d["tier"]))
            instances.setdefault(key, set()).add(d["instance"])
        elif kind == "altar_activated":
            instances.setdefault((d["agent"], KING), set()).add(d["instance"])
        elif kind == "enemy_defeated":
            if d["agent"] in agents:
                agents[d["agent"]].kills += 1
                agents[d["agent"]].bosses += bool(d["boss"])
        elif kind == "tier_cleared" or kind == "shadow_king_defeated":
            a = d["agent"]
            if a in agents:
                if kind == "tier_cleared":
                    agents[a].depth = max(agents[a].depth, d["tier"])
                level = KING if kind == "shadow_king_defeated" else (tiers[d["tier"] - 1] if 0 < d["tier"] <= len(tiers) else str(d["tier"]))
                stats = agents[a].dungeon.setdefault(level, LevelStats())
                stats.clears += 1
                stats.damage.append(d["damage_taken"])
                stats.consumables.append(d["consumables_used"])
    while next_sample < final_tick:
        sample(next_sample)
        next_sample += step

    regions_of = _regions(content, scenario, seed)
    region_names = regions_of[1]
    for a, am in agents.items():
        am.ticks_alive = max(final_tick - am.spawn_tick, 0)
        am.reputation = reputation.get(a, 0)
        am.attribute_levels = sum(wealth.levels[a].values())
        am.wealth_terms = wealth.terms(a, am.reputation)
        am.wealth_cents = sum(am.wealth_terms.values())
        am.wealth_curve = _corners([*am.wealth_curve, [final_tick, am.wealth_cents]])
        am.health_final = am.needs_steps[-1][1]
        am.partners = sorted(partners[a], key=_agent_order)
        am.goods_kinds = sorted(goods_kinds[a])
        am.rejected_by_code = dict(sorted(am.rejected_by_code.items(), key=lambda kv: (-kv[1], kv[0])))
        am.by_issuer = dict(sorted(am.by_issuer.items()))
        am.program_failures = dict(sorted(am.program_failures.items()))
        since = free_since.get(a)
        if since is not None and not running[a] and final_tick - since >= IDLE_FLOOR_TICKS:
            idle[a].append([since, final_tick])
        am.idle_spans = _merge(idle[a])
        am.tiles_seen, seen_regions = _coverage(positions[a], width, height, content.needs.view_radius, regions_of[0])
        am.regions_seen = [region_names[r] for r in sorted(seen_regions)]
        for (owner, level), ids in instances.items():
            if owner == a:
                am.dungeon.setdefault(level, LevelStats()).attempts = len(ids)
        am.dungeon = {lv: am.dungeon[lv] for lv in sorted(am.dungeon, key=lambda lv: levels.index(lv) if lv in levels else len(levels))}

    # The trial and the tasks: the same engine the live world runs. Table 3's other columns are
    # folded above under eval.season's definitions (a test holds them equal to `season_rows`).
    stages = list(STAGES)
    trial = assess(events, content, scenario)
    for a, am in agents.items():
        t = trial.get(a)
        if t is not None:
            am.trial_native = t["native"]
            am.outfit, am.hero = "outfit" in t["tasks"], "shadow_king" in t["tasks"]
            am.trial_stages = {s: r["tick"] for s, r in t["independent"].items()}
            am.trial_evidence = {s: list(r.get("evidence", [])) for s, r in t["independent"].items()}
            am.trial_native_ticks = dict(t.get("native_ticks", {}))
            am.trial_first_unmet = t["first_unmet"]
            am.tasks = {task: r["tick"] for task, r in t["tasks"].items()}
    has_dungeon = any(kinds.get(k) for k in ("dungeon_entered", "tier_cleared"))
    return MatchMetrics(
        scenario=scenario, seed=seed, start_tick=start_tick, final_tick=final_tick, width=width, height=height,
        map_tiles=width * height, map_regions=list(region_names), levels=levels, agents=agents,
        has_dungeon=has_dungeon, has_trial=True, stages=stages,
        stage_names={s: content.trial.stages[s].name for s in stages},
        event_count=len(events), kinds=dict(sorted(kinds.items())), max_health=max_health,
        ticks_per_day=content.calendar.ticks_per_day,
    )


def _agent_order(agent: str) -> tuple[int, str]:
    digits = agent[1:]
    return (int(digits), agent) if digits.isdigit() else (1 << 30, agent)


def _corners(points: list[list[int]]) -> list[list[int]]:
    """Drop samples inside a run of equal values: the first and last of each run keep the shape."""
    return [p for i, p in enumerate(points)
            if i == 0 or i == len(points) - 1 or p[1] != points[i - 1][1] or p[1] != points[i + 1][1]]


def _merge(spans: list[list[int]]) -> list[list[int]]:
    """Union of [start, end) spans, sorted."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def _regions(content: Content, scenario: str, seed: int) -> tuple[bytes, list[str]]:
    from wildhold.world.worldgen import generate

    g = generate(content, scenario, seed)
    return bytes(g.region), list(g.region_names)


def _coverage(positions: Iterable[int], width: int, height: int, radius: int, region: bytes) -> tuple[int, set[int]]:
    """Tiles and regions within `radius` (a square) of any position: what the character has seen.

    Each map row is an int bitmask: positions are dilated along the row by shifts, then across rows.
    """
    rows = [0] * height
    for p in positions:
        rows[p // width] |= 1 << (p % width)
    full = (1 << width) - 1
    wide = []
    for bits in rows:
        grown = bits
        for k in range(1, radius + 1):
            grown |= (bits << k) | (bits >> k)
        wide.append(grown & full)
    seen_rows = [0] * height
    for y, bits in enumerate(wide):
        if bits:
            for yy in range(max(0, y - radius), min(height - 1, y + radius) + 1):
                seen_rows[yy] |= bits
    tiles = sum(bits.bit_count() for bits in seen_rows)
    regions: set[int] = set()
    for y, bits in enumerate(seen_rows):
        row = y * width
        while bits:
            low = bits & -bits
            x0 = low.bit_length() - 1
            run = (bits >> x0) & ~((bits >> x0) + 1)  # the run of set bits starting at x0
            length = run.bit_length()
            regions.update(region[row + x0:row + x0 + length])
            bits &= ~(run << x0)
    return tiles, regions
