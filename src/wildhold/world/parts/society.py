"""Society: reputation, trained attributes, artwork and messages.

Reputation is one ledger that trades, contracts (the market) and raids (conflict) write through
`change_reputation`; attributes raise gather yields and damage; artworks are kept in a registry
with their author; messages reach inboxes (said aloud, whispered) or the public board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from pydantic import Field

from wildhold.world.actions.registry import ActionArgs, CharacterName, Plan, character_field, carries, did_you_mean, other_character, reach_tiles, shortfall, structure_in_reach
from wildhold.world.errors import Rejected
from wildhold.world.events import Ev
from wildhold.world.markdown import table
from wildhold.world.parts.base import Part, Saved, Section, saved
from wildhold.world.readonly import ReadOnlyList, freeze
from wildhold.world.state import Character, Operation

if TYPE_CHECKING:
    from wildhold.content import Content
    from wildhold.world.world import World

# ---- state ---------------------------------------------------------------------------------


@dataclass
class SocietyState(Saved):
    """Saved with the market's and conflict's state in the snapshot's "economy" section."""

    next_id: dict[str, int] = saved("shared_counters", lambda: {"artwork": 0})
    reputation: dict[str, int] = saved("pairs", dict)
    attributes: dict[str, dict[str, int]] = saved("tables", dict)
    artworks: list[dict[str, Any]] = saved("list", list)
    inboxes: dict[str, list[dict[str, Any]]] = saved("pairs", dict)  # up to date once `_deliver` ran
    board: list[dict[str, Any]] = saved("list", list)
    # messages sent and not yet in `inboxes`: (message, the rows of `World.positions` it reaches), see `_send`
    undelivered: list[tuple[dict[str, Any], np.ndarray]] = field(default_factory=list)

    def load(self, data: dict[str, Any]) -> None:
        self.undelivered = []
        super().load(data)

    def new_id(self, kind: str) -> str:
        self.next_id[kind] += 1
        return f"{kind}{self.next_id[kind]}"


def state(w: World) -> SocietyState:
    return SOCIETY.state(w)


def reputation_of(w: World, agent: str) -> int:
    return state(w).reputation.get(agent, 0)


def level_of(w: World, agent: str, attribute: str) -> int:
    return state(w).attributes.get(agent, {}).get(attribute, 0)


def trained(w: World, agent: str) -> dict[str, int]:
    """The agent's trained attribute levels (those it never trained are absent: level 0); read-only."""
    return state(w).attributes.get(agent, {})


def attribute_levels(w: World, agent: str) -> int:
    """Sum of the agent's trained attribute levels (a term of the wealth formula)."""
    return sum(state(w).attributes.get(agent, {}).values())


def damage_bonus(w: World, c: Character) -> int:
    """Extra damage from trained attributes: damage_bonus x level, summed."""
    levels = state(w).attributes.get(c.id, {})
    return sum(w.content.attributes[a].damage_bonus * lvl for a, lvl in levels.items())


def artworks_by(w: World, agent: str) -> list[dict[str, Any]]:
    """The artworks one character created, oldest first (the registry's own records: read-only). Artworks
    are only ever appended, so an index by author is extended with the new ones rather than rebuilt."""
    artworks = state(w).artworks
    held = w.kept.artworks
    if held is None or held[0] is not artworks or held[1] > len(artworks):
        held = w.kept.artworks = [artworks, 0, {}]
    if held[1] < len(artworks):
        index = held[2]
        for a in artworks[held[1]:]:
            index.setdefault(a["author"], []).append(a)
        held[1] = len(artworks)
    return list(held[2].get(agent, ()))


def change_reputation(w: World, agent: str, delta: int, reason: str) -> None:
    """The only writer of reputation; every change is a `reputation_changed` event."""
    if not delta:
        return
    e = state(w)
    value = e.reputation.get(agent, 0) + delta
    e.reputation[agent] = value
    w.emit("reputation_changed", agent=agent, delta=delta, reason=reason, value=value)


# ---- events --------------------------------------------------------------------------------

class ReputationChanged(Ev):
    agent: str
    delta: int
    reason: str
    value: int


class AttributeTrained(Ev):
    agent: str
    attribute: str
    level: int
    coins: int


class ArtworkCreated(Ev):
    artwork: str
    agent: str
    title: str
    text: str


class MessageSaid(Ev):
    """Spoken aloud: heard by the characters within say_radius."""

    agent: str
    text: str
    x: int
    y: int
    heard_by: list[str]


class MessageWhispered(Ev):
    agent: str
    to: str
    text: str


class MessagePosted(Ev):
    """Pinned to the public board, which every character reads."""

    agent: str
    text: str



# ---- checks ---------------------------------------------------------------------------------


def _text_ok(text: str, limit: int, what: str) -> Rejected | None:
    if not text.strip():
        return Rejected("empty_message", f"The {what} is empty.")
    if len(text) > limit:
        return Rejected("too_long", f"The {what} has {len(text)} characters; at most {limit} are allowed.")
    return None



# ---- trained attributes --------------------------------------------------------------------


def _workshop_in_reach(w: World, c: Character) -> bool:
    structures, specs = w.structures, w.content.structures
    return structure_in_reach(w, c) and any((s := structures.get(p)) is not None and s.hp > 0 and specs[s.kind].part == "workshop"
               for p in reach_tiles(w, c))


class Train:
    """Train an attribute one level at a workshop within reach. It takes the attribute's train_ticks
    and energy (attributes table) and costs coins_per_level x the next level in coins. Levels raise
    gather yields (yield_bonus x level) or attack damage (damage_bonus x level)."""

    name, category, timing = "train", "production", "the attribute's training time"

    @staticmethod
    def cost_rule(d: int, e: int) -> dict[str, Any]:
        return {"duration_from": "attribute", "energy_from": "attribute",
                "rule": "Takes the attribute's train_ticks and costs its energy and coins (see Attributes)."}

    class Args(ActionArgs):
        attribute: str = Field(description="Attribute name, as listed in the rules.")

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if _workshop_in_reach(w, c) else "no_workshop"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> tuple[int, int] | Rejected:
        attribute = a["attribute"]
        spec = w.content.attributes.get(attribute)
        if spec is None:
            return Rejected("unknown_attribute", f"There is no attribute {attribute!r}.{did_you_mean(attribute, w.content.attributes)}")
        level = level_of(w, c.id, attribute)
        if level >= spec.max_level:
            return Rejected("max_level", f"{attribute} is already at its maximum level {spec.max_level}.")
        if not _workshop_in_reach(w, c):
            return Rejected("no_workshop", f"Training needs a workshop within {w.needs.reach} tile of you.")
        coins = spec.coins_per_level * (level + 1)
        coin = w.content.economy.coin
        if c.inventory.get(coin, 0) < coins:
            return Rejected("not_enough_coins", f"Level {level + 1} of {attribute} costs {coins} {coin}; you carry {c.inventory.get(coin, 0)}.")
        return level + 1, coins

    @staticmethod
    def spend(w: World, a: dict[str, Any], _: tuple[int, int]) -> Plan:
        spec = w.content.attributes[a["attribute"]]
        return Plan(spec.train_ticks, spec.energy)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, got: tuple[int, int]) -> dict:
        attribute = op.args["attribute"]
        level, coins = got
        w.take(c.id, w.content.economy.coin, coins, f"train:{attribute}")
        state(w).attributes.setdefault(c.id, {})[attribute] = level
        w.emit("attribute_trained", agent=c.id, attribute=attribute, level=level, coins=coins)
        return {"attribute": attribute, "level": level}


# ---- artwork -------------------------------------------------------------------------------


class CreateArtwork:
    """Create a named work of art: uses the artwork materials over the artwork duration (economy
    rules) and gives you one artwork item. The title and text are kept in a registry with you as
    author."""

    name, category = "create_artwork", "production"

    class Args(ActionArgs):
        title: str = Field(description="The work's title.")
        text: str = Field(description="The work itself, or a description of it.")

    @staticmethod
    def ready(w: World, c: Character) -> str | None:
        return None if carries(c, w.content.economy.artwork_materials) else "missing_materials"

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        e = w.content.economy
        return (
            _text_ok(a["title"], e.artwork_title_max, "title")
            or _text_ok(a["text"], e.artwork_text_max, "text")
            or shortfall(w, c, e.artwork_materials, "An artwork")
        )

    @staticmethod
    def spend(w: World, a: dict[str, Any], _: None) -> Plan:
        return Plan(w.content.economy.artwork_duration, w.content.actions["create_artwork"].energy)

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        title, text = op.args["title"], op.args["text"]
        e, spec = state(w), w.content.economy
        aid = e.new_id("artwork")
        for item, qty in sorted(spec.artwork_materials.items()):
            w.take(c.id, item, qty, f"artwork:{aid}")
        w.give(c.id, spec.artwork_item, 1, f"artwork:{aid}")
        e.artworks.append({"id": aid, "title": title, "text": text, "author": c.id, "tick": w.tick})
        w.emit("artwork_created", artwork=aid, agent=c.id, title=title, text=text)
        return {"artwork": aid, "title": title}


# ---- messages ------------------------------------------------------------------------------


def send_message(w: World, agents: list[str], sender: str, kind: str, text: str) -> None:
    """The message into each of these characters' inboxes (see `_send`)."""
    row = w.positions().row
    _send(w, np.array([row[agent] for agent in agents], dtype=np.intp), sender, kind, text)


def _send(w: World, rows: np.ndarray, sender: str, kind: str, text: str) -> None:
    """A message to the characters at these rows of `World.positions`. It waits with the others sent since the
    inboxes were last read and reaches them then, or at the end of the tick if sooner (`_deliver`): a say in a crowd
    reaches thousands, of whom each keeps only its latest `inbox_max_messages`, so handing each message to each hearer
    as it is said was most of a tick."""
    if len(rows):
        state(w).undelivered.append(({"tick": w.tick, "from": sender, "kind": kind, "text": text}, rows))


class Latest(NamedTuple):
    """The messages each inbox takes in one delivery (see `latest_to_each`): the rows reached, in order; where the
    messages of the k-th start in `messages` (`bounds[k]`, ending at `bounds[k + 1]`); and `messages`, the indexes
    in the messages sent, row after row, oldest first within a row."""

    rows: list[int]
    bounds: list[int]
    messages: np.ndarray


def latest_to_each(sent: list[tuple[Any, np.ndarray]], rows: int, most: int) -> Latest:
    """For each of `rows` that any message of `sent` (message, the rows it reaches, each once) reaches: the indexes
    in `sent` of the latest `most` messages that reach it, oldest first. Walked from the newest, a row that has its
    `most` is left out of the older messages; the (row, message) pairs kept are then put in order of row by one
    stable sort, so no pair is looked at one by one: in a crowd a tick's says make hundreds of thousands."""
    room = np.full(rows, most, dtype=np.int64)
    kept_rows: list[np.ndarray] = []
    kept_from: list[int] = []
    for i in range(len(sent) - 1, -1, -1):
        reached = sent[i][1]
        reached = reached[room[reached] > 0]
        if len(reached):
            room[reached] -= 1
            kept_rows.append(reached)
            kept_from.append(i)
    if not kept_rows:
        return Latest([], [0], np.zeros(0, dtype=np.intp))
    kept_rows.reverse()  # oldest first, so that the stable sort leaves each row's messages oldest first
    kept_from.reverse()
    reached = np.concatenate(kept_rows)
    messages = np.repeat(np.array(kept_from, dtype=np.intp), [len(r) for r in kept_rows])
    order = np.argsort(reached, kind="stable")
    reached, messages = reached[order], messages[order]
    bounds = [0, *(np.flatnonzero(reached[1:] != reached[:-1]) + 1).tolist(), len(reached)]
    return Latest(reached[bounds[:-1]].tolist(), bounds, messages)


def _deliver(w: World, e: SocietyState) -> None:
    """Put the messages sent since the inboxes were last read into them: each inbox takes the latest it was sent
    and drops its oldest beyond inbox_max_messages, as if they had come one by one. A message is never changed once
    sent, so every inbox holds the one record."""
    sent, e.undelivered = e.undelivered, []
    most, inboxes, ids = w.content.economy.inbox_max_messages, e.inboxes, w.positions().ids
    latest = latest_to_each(sent, len(ids), most)
    if not latest.rows:
        return
    agents = ids[latest.rows].tolist()
    new = _table([message for message, _ in sent])[latest.messages].tolist()  # each row's, one after the other
    bounds = latest.bounds
    for k, agent in enumerate(agents):
        box = inboxes.get(agent)
        box = inboxes[agent] = new[bounds[k]:bounds[k + 1]] if box is None else box + new[bounds[k]:bounds[k + 1]]
        if len(box) > most:  # more news than room, or an inbox loaded under a larger limit
            del box[:len(box) - most]
    _hand_copies(w, sent, latest, agents, most)


def _table(values: list[Any]) -> np.ndarray:
    """These values as a numpy array of objects, one per value (a record stays one element)."""
    table = np.empty(len(values), dtype=object)
    table[:] = values
    return table


def _hand_copies(w: World, sent: list[tuple[Any, np.ndarray]], latest: Latest, agents: list[str], most: int) -> None:
    """One copy of each new message for observations, handed to the kept inbox copies of each of its hearers (see
    `_inbox_copies`); one unobserved for long keeps only as many as its inbox can still hold."""
    kept = w.kept.inboxes
    if not kept:
        return
    copies: list[Any] | None = None  # each row's copies, as `new` in `_deliver`: made once the first is needed
    bounds = latest.bounds
    for k, agent in enumerate(agents):
        held = kept.get(agent)
        if held is not None:
            if copies is None:
                copies = _table([freeze(message) for message, _ in sent])[latest.messages].tolist()
            unread = held.unread
            unread += copies[bounds[k]:bounds[k + 1]]
            if len(unread) > most:
                del unread[:len(unread) - most]


class TextArgs(ActionArgs):
    text: str = Field(description="The message.")


def _message_ok(w: World, text: str) -> Rejected | None:
    return _text_ok(text, w.content.social.message_max_chars, "message")


class Say:
    """Say something aloud: every character within say_radius of you hears it (in its inbox)."""

    name, category = "say", "social"
    Args = TextArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        return _message_ok(w, a["text"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        text = op.args["text"]
        heard, rows = w.characters_within(c.pos, w.content.social.say_radius, but=c.id)
        _send(w, rows, c.id, "say", text)
        x, y = w.xy(c.pos)
        w.emit("message_said", agent=c.id, text=text, x=x, y=y, heard_by=heard)
        return {"heard_by": heard}


class Whisper:
    """Send a private message to one character, wherever it is; only it receives it."""

    name, category = "whisper", "social"

    class Args(ActionArgs):
        to: CharacterName = character_field("The character.")
        text: str = Field(description="The message.")

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        other = other_character(w, c, a["to"])
        return other if isinstance(other, Rejected) else _message_ok(w, a["text"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        to, text = op.args["to"], op.args["text"]
        send_message(w, [to], c.id, "whisper", text)
        w.emit("message_whispered", agent=c.id, to=to, text=text)
        return {"to": to}


class Post:
    """Post a message on the public board, which every character reads; the oldest posts drop off
    beyond board_max_posts."""

    name, category = "post", "social"
    Args = TextArgs

    @staticmethod
    def plan(w: World, c: Character, a: dict[str, Any]) -> Rejected | None:
        return _message_ok(w, a["text"])

    @staticmethod
    def apply(w: World, c: Character, op: Operation, _: None) -> dict:
        text = op.args["text"]
        board = state(w).board
        board.append({"tick": w.tick, "from": c.id, "text": text})
        over = len(board) - w.content.social.board_max_posts
        if over > 0:
            del board[:over]
        w.emit("message_posted", agent=c.id, text=text)
        return {"posts": len(board)}


# ---- the part ------------------------------------------------------------------------------


def _rules(c: Content) -> dict[str, Any]:
    social = c.social
    return {
        "attributes": {k: v.model_dump(mode="json") for k, v in c.attributes.items()},
        "messages": {"max_chars": social.message_max_chars, "board_max_posts": social.board_max_posts, "say_radius": social.say_radius},
    }


def _rules_markdown(doc: dict[str, Any]) -> list[str]:
    return [
        "## Attributes",
        "",
        *table(
            ["attribute", "max level", "ticks per level", "energy", "coins x next level", "yield bonus per level", "damage bonus per level", "description"],
            [
                [f"`{k}`", v["max_level"], v["train_ticks"], v["energy"], v["coins_per_level"], v["yield_bonus"], v["damage_bonus"], v["description"]]
                for k, v in doc["attributes"].items()
            ],
        ),
    ]


class Society(Part[SocietyState]):
    name, section = "society", "economy"
    tables = ("attributes", "social", "economy")
    codes_place = 5
    codes = {
        "unknown_attribute": "No attribute has that name.",
        "max_level": "The attribute is already at its maximum level.",
        "no_workshop": "No workshop is within reach.",
        "empty_message": "The message, title or text is empty.",
        "too_long": "The message, title or text is longer than the rules allow.",
    }
    events = {
        "reputation_changed": ReputationChanged,
        "attribute_trained": AttributeTrained,
        "artwork_created": ArtworkCreated,
        "message_said": MessageSaid,
        "message_whispered": MessageWhispered,
        "message_posted": MessagePosted,
    }
    actions = (Train, CreateArtwork, Say, Whisper, Post)
    observation_fields = {
        "messages": {
            "description": "Messages it heard and the public board.",
            "fields": {
                "inbox": "The latest messages it heard: {tick, from, kind (say, whisper, or trade_offer and "
                         "contract_offer: an offer made to it), text}.",
                "board": "The public board, oldest first: {tick, from, text}.",
            },
        },
    }
    rules = (Section(40, _rules, _rules_markdown),)

    def new_state(self, w: World) -> SocietyState:
        return SocietyState()

    def dump(self, w: World) -> Any:
        e = self.state(w)
        if e.undelivered:  # what was sent is saved in the inboxes it reached
            _deliver(w, e)
        return super().dump(w)

    def tick(self, w: World) -> None:
        e = self.state(w)
        if e.undelivered:  # a message waits no longer than its tick: a world no one observes (a replay) holds few
            _deliver(w, e)

    def yield_bonus(self, w: World, c: Character, node: str) -> int:
        levels = state(w).attributes.get(c.id)
        if not levels:
            return 0
        return sum(w.content.attributes[a].yield_bonus.get(node, 0) * lvl for a, lvl in levels.items())

    def observe(self, w: World, c: Character, obs: dict[str, Any]) -> None:
        # A message's fields are strings and numbers, never changed once sent: copying each record (not
        # deeply) is enough for an observation never to alias what the world mutates; one copy of a message serves the
        # observations of all its hearers. The lists of copies are never changed once made either, so observations
        # share them (read-only).
        e = w.states[self.name]
        board, held = e.board, w.kept.board_copies
        if held is None or not board or board[-1] is not held[0] or len(board) != len(held[1]):
            held = _board_copies(w, board, held)  # something new (or nothing on it): looked at only then
        obs["messages"] = {"inbox": _inbox_copies(w, e, c.id), "board": held[1]}


class _KeptInbox:
    """A character's inbox as its observations show it (`copies`, shared by them: never changed once made), and the
    copies of the messages delivered to it since (`unread`, at most as many as an inbox holds)."""

    __slots__ = ("copies", "unread")

    def __init__(self, copies: list[dict[str, Any]]):
        self.copies, self.unread = copies, []


def _inbox_copies(w: World, e: SocietyState, agent: str) -> list[dict[str, Any]]:
    """Copies of a character's inbox for observations, kept beside the copies of the messages delivered since
    (`_deliver` hands them over, one copy of a message for all its hearers). An inbox is only appended to and trimmed
    from the front, so the copies catch up by keeping as many old ones as the inbox still holds and taking the new.
    Most observations at a crowd find a few new messages in a full inbox."""
    if e.undelivered:
        _deliver(w, e)
    kept = w.kept.inboxes
    if kept is None:
        kept = w.kept.inboxes = {}
    held = kept.get(agent)
    if held is None:
        held = kept[agent] = _KeptInbox(ReadOnlyList([freeze(m) for m in e.inboxes.get(agent, ())]))
    elif held.unread:
        unread, copies = held.unread, held.copies
        old = len(e.inboxes[agent]) - len(unread)  # messages the copies already hold
        if old > 0:
            copies = copies[len(copies) - old:]
            copies += unread
        else:  # more new ones than the inbox holds: their latest
            copies = unread[-old:]
        held.copies, held.unread = ReadOnlyList(copies), []
    return held.copies


def _board_copies(w: World, board: list[dict[str, Any]], held: tuple | None) -> tuple:
    """Copies of the board for observations, each message copied once, beside the last original: (last, copies),
    kept as `Kept.board_copies` (`held`, what was kept, or None). Messages are only appended and dropped from the
    front, so the copies kept are brought up to date by dropping and appending the same; the last original says, by
    identity, where the new ones start."""
    if held is not None and board:
        last, copies = held
        for end in range(len(board) - 2, -1, -1):
            if board[end] is last:
                dropped = len(copies) - (end + 1)
                if dropped >= 0 and copies[dropped] == board[0]:
                    held = w.kept.board_copies = (board[-1], ReadOnlyList(copies[dropped:] + [freeze(m) for m in board[end + 1:]]))
                    return held
                break
    held = w.kept.board_copies = (board[-1] if board else None, ReadOnlyList([freeze(m) for m in board]))
    return held


SOCIETY = Society()
