"""A tabular policy-gradient agent (REINFORCE with a baseline, numpy only) learning the easy task
`exploration/gather-wood-v1` through the Gymnasium env, against a random player of legal actions.

    python examples/rl/reinforce_gather.py --out runs/reinforce

The agent sees one feature of its observation: where the nearest tree in its view lies (one of eight directions,
beside it, or none in view); it picks one of nine moves: a step in a direction, or gathering the tree beside it
(the table entry of `gather` at that offset). The random player draws uniformly from the legal-action mask over
the whole table; the untrained agent (its nine moves, uniformly) shows what learning adds. Writes returns.json (each episode's return, both players) and curve.svg (the learning curve).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from wildhold.extras import require_script

gym = require_script("rl", "examples/rl/reinforce_gather.py")
import wildhold.env  # noqa: E402,F401  (registers the ids)
from wildhold.env.gym_env import action_table  # noqa: E402

ENV_ID = "Wildhold/exploration.gather-wood-v1"
DIRECTIONS = {(0, -1): "n", (1, -1): "ne", (1, 0): "e", (1, 1): "se", (0, 1): "s", (-1, 1): "sw", (-1, 0): "w", (-1, -1): "nw"}
ORDER = list(DIRECTIONS.values())
BESIDE, NONE = len(ORDER), len(ORDER) + 1  # states past the eight directions
GATHER = len(ORDER)  # the ninth move


class Moves:
    """The agent's nine moves as entries of the Discrete table, and its state read from an observation."""

    def __init__(self, tree_code: int):
        table = action_table()
        first, last = table.ranges["move"]
        self.step = {table.entries[i].fills[0][1][1]: i for i in range(first, last + 1)}
        first, last = table.ranges["gather"]
        self.gather = {table.entries[i].fills[0][1][1]: i for i in range(first, last + 1)}
        self.tree = tree_code

    def nearest(self, obs: dict) -> tuple[int, int] | None:
        ys, xs = np.nonzero(obs["view"][2] == self.tree)
        if not len(xs):
            return None
        r = obs["view"].shape[1] // 2
        d = np.maximum(abs(xs - r), abs(ys - r))
        i = int(np.argmin(d))
        return int(xs[i] - r), int(ys[i] - r)

    def state(self, obs: dict) -> int:
        tree = self.nearest(obs)
        if tree is None:
            return NONE
        if max(abs(tree[0]), abs(tree[1])) <= 1:
            return BESIDE
        return ORDER.index(DIRECTIONS[(int(np.sign(tree[0])), int(np.sign(tree[1])))])

    def entry(self, move: int, obs: dict) -> int:
        if move < GATHER:
            return self.step[ORDER[move]]
        tree = self.nearest(obs)
        offset = tree if tree is not None and max(abs(tree[0]), abs(tree[1])) <= 1 else (0, 0)
        return self.gather[offset]


def learn(episodes: int, seed: int, lr: float = 0.5) -> list[float]:
    env = gym.make(ENV_ID, observation=("symbolic",), action_mask=False)
    moves = Moves(env.unwrapped.encoder.code["nodes"]["tree"])
    logits = np.zeros((NONE + 1, GATHER + 1))
    rng = np.random.default_rng(seed)
    baseline, returns = 0.0, []
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        trail, total, done = [], 0.0, False
        while not done:
            s = moves.state(obs)
            p = np.exp(logits[s] - logits[s].max())
            p /= p.sum()
            a = int(rng.choice(len(p), p=p))
            obs, reward, term, trunc, _ = env.step(moves.entry(a, obs))
            trail.append((s, a, p))
            total += float(reward)
            done = term or trunc
        advantage = total - baseline
        baseline += 0.1 * (total - baseline)
        for s, a, p in trail:
            grad = -p
            grad[a] += 1.0
            logits[s] += lr * advantage * grad / max(1, len(trail)) * 10
        returns.append(total)
    env.close()
    return returns


def random_legal(episodes: int, seed: int) -> list[float]:
    env = gym.make(ENV_ID, observation=("symbolic",))
    rng = np.random.default_rng(seed)
    returns = []
    for episode in range(episodes):
        _, info = env.reset(seed=seed + episode)
        total, done = 0.0, False
        while not done:
            _, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            total += float(reward)
            done = term or trunc
        returns.append(total)
    env.close()
    return returns


def svg(curves: dict[str, list[float]], title: str, window: int = 10) -> str:
    """A line chart of each curve's moving average (plain SVG)."""
    w, h, pad = 640, 360, 48
    n = max(len(c) for c in curves.values())
    colours = ["#1f77b4", "#d62728", "#2ca02c"]

    def xy(i: int, v: float) -> tuple[float, float]:
        return pad + (w - 2 * pad) * i / max(1, n - 1), h - pad - (h - 2 * pad) * v

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
           f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">episode</text>',
           f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">return ({window}-episode mean)</text>']
    for v in (0.0, 0.5, 1.0):
        _, y = xy(0, v)
        out.append(f'<text x="{pad - 6}" y="{y + 4}" text-anchor="end">{v:g}</text>')
    for k, (label, values) in enumerate(curves.items()):
        smooth = [float(np.mean(values[max(0, i - window + 1):i + 1])) for i in range(len(values))]
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(i, v) for i, v in enumerate(smooth)))
        out.append(f'<polyline fill="none" stroke="{colours[k % 3]}" stroke-width="2" points="{points}"/>')
        out.append(f'<text x="{w - pad - 150}" y="{pad + 16 * k}" fill="{colours[k % 3]}">{label}</text>')
    return "\n".join(out + ["</svg>"]) + "\n"


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=150)
    parser.add_argument("--random-episodes", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/reinforce"))
    args = parser.parse_args(argv)
    curves = {"REINFORCE (tabular)": learn(args.episodes, args.seed),
              "its nine moves, untrained": learn(args.episodes, args.seed, lr=0.0),
              "random legal actions": random_legal(args.random_episodes, args.seed + 10_000)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "returns.json").write_text(json.dumps(curves, indent=1) + "\n")
    (args.out / "curve.svg").write_text(svg(curves, f"{ENV_ID}: return per episode"))
    for label, values in curves.items():
        tail = values[-20:]
        print(f"{label}: mean return of the last {len(tail)} episodes {np.mean(tail):.2f} (of {len(values)})")
    return curves


if __name__ == "__main__":
    main()
