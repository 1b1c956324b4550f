"""Statistics on pooled runs: n, mean, standard deviation and a 95% bootstrap interval over seeds, and paired
comparisons over shared seeds. Every resampling is seeded, so the same runs always print the same table."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np

RESAMPLES = 4000
SEED = 20261202  # the resampling seed: a fixed number, so every table is reproducible
EXACT_PAIRS = 16  # up to this many pairs the sign-flip test enumerates every flip; beyond it, it samples


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), digits)


def describe(values: Iterable[float], *, seed: int = SEED, resamples: int = RESAMPLES) -> dict[str, Any]:
    """n, mean, sample standard deviation and the 95% percentile bootstrap interval of the mean (None below two
    values: one value has no spread to resample)."""
    x = np.asarray([float(v) for v in values], dtype=float)
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "ci95": None}
    mean = float(x.mean())
    if n < 2:
        return {"n": 1, "mean": _round(mean), "std": None, "ci95": None}
    means = x[_rng(seed).integers(0, n, size=(resamples, n))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"n": n, "mean": _round(mean), "std": _round(float(x.std(ddof=1))), "ci95": [_round(lo), _round(hi)]}


def per_seed(rows: Iterable[tuple[int, float]]) -> dict[int, float]:
    """One value per seed: repeats of a seed are averaged first, so the bootstrap resamples seeds, not repeats."""
    grouped: dict[int, list[float]] = {}
    for seed, value in rows:
        grouped.setdefault(seed, []).append(float(value))
    return {s: sum(v) / len(v) for s, v in sorted(grouped.items())}


def difference(a: Mapping[int, float], b: Mapping[int, float], *, seed: int = SEED,
               resamples: int = RESAMPLES) -> dict[str, Any]:
    """B minus A: the difference of means with its 95% bootstrap interval (each side resampled over its own
    seeds), and, over the seeds both share, the paired mean difference with a sign-flip permutation test."""
    xa, xb = np.asarray(list(a.values()), dtype=float), np.asarray(list(b.values()), dtype=float)
    out: dict[str, Any] = {"n_a": int(xa.size), "n_b": int(xb.size), "diff": None, "ci95": None,
                           "paired": paired(a, b, seed=seed, resamples=resamples)}
    if xa.size == 0 or xb.size == 0:
        return out
    out["diff"] = _round(float(xb.mean() - xa.mean()))
    if xa.size >= 2 and xb.size >= 2:
        rng = _rng(seed)
        ma = xa[rng.integers(0, xa.size, size=(resamples, xa.size))].mean(axis=1)
        mb = xb[rng.integers(0, xb.size, size=(resamples, xb.size))].mean(axis=1)
        lo, hi = np.percentile(mb - ma, [2.5, 97.5])
        out["ci95"] = [_round(lo), _round(hi)]
    return out


def paired(a: Mapping[int, float], b: Mapping[int, float], *, seed: int = SEED,
           resamples: int = RESAMPLES) -> dict[str, Any]:
    """The sign-flip permutation test of the mean paired difference (B - A) over the seeds both have: two-sided
    p, exact over every flip up to EXACT_PAIRS pairs, else over `resamples` seeded random flips."""
    shared = sorted(set(a) & set(b))
    d = np.asarray([b[s] - a[s] for s in shared], dtype=float)
    n = int(d.size)
    result: dict[str, Any] = {"test": "sign-flip permutation, two-sided", "seeds": shared, "n": n,
                              "mean_diff": None, "p": None, "exact": None}
    if n == 0:
        return result
    observed = abs(float(d.mean()))
    if n <= EXACT_PAIRS:
        signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
        exact = True
    else:
        signs = _rng(seed).choice(np.array([-1, 1]), size=(resamples, n))
        exact = False
    flipped = np.abs((signs * d).mean(axis=1))
    p = float(np.mean(flipped >= observed - 1e-12))
    result.update(mean_diff=_round(float(d.mean())), p=_round(p, 6), exact=exact)
    return result


def show(summary: Mapping[str, Any], digits: int = 2) -> str:
    """`mean ± std [lo, hi] n=N` for a table cell; '-' when nothing was measured."""
    if not summary or summary.get("mean") is None:
        return "-"
    text = f"{summary['mean']:.{digits}f}"
    if summary.get("std") is not None:
        text += f" ± {summary['std']:.{digits}f}"
    if summary.get("ci95"):
        lo, hi = summary["ci95"]
        text += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    return f"{text} n={summary['n']}"
