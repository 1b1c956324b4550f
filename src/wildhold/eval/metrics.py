"""Per-agent metrics of a match, folded in one pass from its archive's verified event log.

Everything here is a pure function of the archive (manifest and events) and the content's value
tables: no live state, no final snapshot. Each metric is a registered fold (`wildhold.eval.folds`,
run by `wildhold.eval.fold`); `AgentMetrics` holds what they write. Wealth is the public formula of
`wildhold.world.wealth` over holdings rebuilt from the events, sampled over time; tests hold it equal
to `wealth_cents` on the final state.
"""

from __future__ import annotations

import gc
import zipfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import orjson

from wildhold.content import Content, default_content
from wildhold.eval.events import Spawned
from wildhold.eval.fold import FOLDS, Fold, MatchInfo, run_folds
from wildhold.store.archive import Archive, ArchiveError
from wildhold.world.events import GENESIS, link

CATEGORIES = ("production", "construction", "combat", "maintenance", "movement", "social")
KING = "shadow_king"  # the dungeon level after the tiers


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
    """What a report reads: the manifest (what its archive's format binds), the verified events, and each agent's
    epilogue (bound with the manifest, unscored)."""

    manifest: dict[str, Any]
    events: list[dict[str, Any]]
    epilogues: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = ""


_SUFFIX_LEN = len(b',"hash":"') + 32 + len(b'"}')  # lines are {"event":<payload>,"hash":"<32 hex>"}


def load_match(path: Path | str, *, unbound: bool = False) -> MatchRecord:
    """Open an archive, verify every hash link while parsing each event once, and refuse a tampered log.

    Raises ArchiveError (the same messages as `Archive.verify`) when an event does not match its
    hash or the log does not end where the manifest says. `unbound` reads an archive of an older format
    whole, as its reports were first computed (see `Archive`); no score takes it.
    """
    with Archive(path, unbound=unbound) as archive:
        manifest = archive.manifest
        try:
            raw = archive.zip.read("events.jsonl")
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            raise ArchiveError(f"{archive.path}: unreadable event log ({exc})") from None
        where = archive.path
    with quiet_gc():
        events, head = _verified_events(raw, where)
    if len(events) != manifest.get("event_count") or head != manifest.get("chain_head"):
        raise ArchiveError(f"{where}: the log ends at event {len(events)} ({head[:12]}) but the manifest says "
                           f"{manifest.get('event_count')} ({str(manifest.get('chain_head'))[:12]})")
    epilogues = dict(manifest.get("epilogues") or {})
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
    # tick -> cents once every event of that tick is in, at the ticks asked for (`compute_metrics(probes=...)`)
    wealth_at: dict[int, int] = field(default_factory=dict, repr=False)
    # idle: silences of 30 ticks or more (eval.folds.activity), [start, end) ticks; `agent_idle` events included
    idle_spans: list[list[int]] = field(default_factory=list)
    # dungeon (seed 000): level name -> stats; then Table 3's columns (eval.season shows them) and the trial
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
    # what folds beyond these fields write, by name: reported only by a rubric that gives them a place
    measures: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def program_share(self) -> float:
        """Share of executed actions that a program issued (0 when the character did nothing)."""
        return self.program_actions / self.actions if self.actions else 0.0

    def rate(self, count: float) -> float:
        """Per 100 ticks alive."""
        return count * 100 / self.ticks_alive if self.ticks_alive > 0 else 0.0

    def value(self, name: str) -> Any:
        """A metric by name: a fold's measure, else the field."""
        if name in self.measures:
            return self.measures[name]
        if name in _FIELDS:
            return getattr(self, name)
        raise LookupError(f"no metric or measure {name!r}: no fold wrote it for {self.agent}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, without the survival step function, the probed wealth or the measures."""
        d = asdict(self)
        del d["needs_steps"], d["measures"], d["wealth_at"]
        d["program_share"] = self.program_share
        d["dungeon"] = {k: {**asdict(v), "clear_rate": v.clear_rate, "mean_damage": v.mean_damage} for k, v in self.dungeon.items()}
        return d


_FIELDS = frozenset(AgentMetrics.__dataclass_fields__)


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
    logs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # match-wide records of the folds (incidents)


def config_of(entry: dict[str, Any]) -> str:
    """An agent configuration's label: its model string when an LLM drove it, else its policy, else its name."""
    for key in ("model", "policy", "config"):
        if entry.get(key):
            return str(entry[key])
    return str(entry.get("name", entry.get("id", "?")))


def compute_metrics(record: MatchRecord, content: Content | None = None, folds: Iterable[type[Fold]] | None = None,
                    *, probes: Iterable[int] = ()) -> MatchMetrics:
    """Run the folds (every registered one unless named) over a match's events (see the module docstring);
    `probes`: ticks at which each character's exact wealth is kept too (`AgentMetrics.wealth_at`), as the
    spend curve reads it at each model session's tick (`eval.spend.session_ticks`)."""
    if folds is None:
        import wildhold.eval.folds  # noqa: F401  (registers the metrics)

        folds = list(FOLDS.values())
    with quiet_gc():
        return _compute(record, content or default_content(), folds, tuple(sorted(set(probes))))


def _compute(record: MatchRecord, content: Content, folds: Iterable[type[Fold]], probes: tuple[int, ...]) -> MatchMetrics:
    from wildhold.world.parts.trial import STAGES

    m = record.manifest
    scenario, seed = m["scenario"], m["seed"]
    events = record.events
    final_tick = max(m.get("final_tick", 0), events[-1]["tick"] if events else 0)
    start_tick = m.get("start_tick", events[0]["tick"] if events else 0)
    spec = content.scenario(scenario)
    match = MatchInfo(content, scenario, seed, start_tick, final_tick, spec.width, spec.height, probes=probes)
    roster = {a["id"]: a for a in m.get("agents", [])}
    agents = match.agents
    max_health = content.needs.max_health

    def spawn(tick: int, ev: Spawned) -> None:
        entry = roster.get(ev.agent, {"id": ev.agent, "name": ev.name})
        agents[ev.agent] = AgentMetrics(ev.agent, ev.name, config_of(entry), len(agents), tick,
                                        ticks_alive=max(final_tick - tick, 0), health_final=max_health)

    kinds = run_folds(match, events, folds, spawn)
    stages = list(STAGES)
    width, height = spec.width, spec.height
    return MatchMetrics(
        scenario=scenario, seed=seed, start_tick=start_tick, final_tick=final_tick, width=width, height=height,
        map_tiles=width * height, map_regions=list(match.regions[1]), levels=[*content.dungeon.tiers, KING], agents=agents,
        has_dungeon=any(kinds.get(k) for k in ("dungeon_entered", "tier_cleared")), has_trial=True, stages=stages,
        stage_names={s: content.trial.stages[s].name for s in stages},
        event_count=len(events), kinds=dict(sorted(kinds.items())), max_health=max_health,
        ticks_per_day=content.calendar.ticks_per_day, logs=match.logs,
    )
