"""Statistics on pooled runs, the one module every table takes its aggregates from (scipy.stats): n, mean, sample
std and a 95% interval of the mean, and B - A with an interval and a test that agree because they are one test.

At the sizes people run (3 seeds, 3 repeats) the interval is Student's t; a BCa bootstrap only from BOOTSTRAP_FROM
values on, and every result names the method it used. Resampling is seeded: the same runs print the same table."""

from __future__ import annotations

import math
import warnings
from typing import Any, Iterable, Mapping

import numpy as np
from scipy import stats

LEVEL = 0.95
BOOTSTRAP_FROM = 30  # below this many values a bootstrap's resamples repeat the few values there are: t instead
RESAMPLES = 9999
SEED = 20261202  # the resampling seed: a fixed number, so every table is reproducible
T, BCA, PAIRED, WELCH = "t", "BCa bootstrap", "paired t", "Welch t"

INTERVAL = (f"95% CI of the mean: Student-t (scipy.stats); from {BOOTSTRAP_FROM} values on a BCa bootstrap of "
            f"{RESAMPLES:,} seeded resamples, marked BCa")
DIFFERENCE = ("B - A: over the seeds both sides ran, the mean paired difference with its paired t-interval and the "
              "paired t-test (scipy.stats.ttest_rel: the interval excludes 0 exactly when p < 0.05); with under two "
              "shared seeds, the difference of means with Welch's interval and test. Differences that do not vary are "
              "their own interval, with p = 0 (p = 1 when they are 0)")


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), digits) + 0.0  # + 0.0: no -0.0


def _p(value: float) -> float:
    return float(f"{value:.4g}")


def _values(values: Iterable[float]) -> np.ndarray:
    # Rounded to 9 places so that values equal but for float noise have no spread (scipy refuses such data).
    return np.round(np.asarray([float(v) for v in values], dtype=float), 9)


def _quiet(run: Any) -> Any:
    """scipy's result for data that is not constant; its warning about nearly identical data is answered by the
    callers' own check for no spread, and a degenerate bootstrap by falling back to t."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        warnings.filterwarnings("ignore", category=stats.DegenerateDataWarning)
        return run()


def _spread(x: np.ndarray) -> bool:
    return bool(x.size) and float(np.ptp(x)) > 0


def _bca(x: np.ndarray, seed: int) -> tuple[float, float] | None:
    ci = _quiet(lambda: stats.bootstrap((x,), np.mean, confidence_level=LEVEL, n_resamples=RESAMPLES, method="BCa",
                                        rng=np.random.default_rng(seed)).confidence_interval)
    return None if math.isnan(ci.low) or math.isnan(ci.high) else (float(ci.low), float(ci.high))


def describe(values: Iterable[float], *, bounds: tuple[float, float] | None = None, seed: int = SEED) -> dict[str, Any]:
    """n, mean, sample std (n-1) and the 95% interval of the mean with its method (none below two values: one
    value has no spread). Values with no spread give the zero-width interval at their mean. `bounds` clips the
    interval to what the measure can take (a rate: 0 to 100)."""
    x = _values(values)
    n = int(x.size)
    if n == 0:
        return {"n": 0, "mean": None, "std": None, "ci95": None, "method": None}
    mean = float(x.mean())
    if n < 2:
        return {"n": 1, "mean": _round(mean), "std": None, "ci95": None, "method": None}
    method, ci = T, (mean, mean)
    if _spread(x):
        boot = _bca(x, seed) if n >= BOOTSTRAP_FROM else None
        if boot is not None:
            method, ci = BCA, boot
        else:
            interval = _quiet(lambda: stats.ttest_1samp(x, 0.0).confidence_interval(LEVEL))
            ci = (float(interval.low), float(interval.high))
    lo, hi = ci if bounds is None else (max(ci[0], bounds[0]), min(ci[1], bounds[1]))
    return {"n": n, "mean": _round(mean), "std": _round(float(x.std(ddof=1))), "ci95": [_round(lo), _round(hi)],
            "method": method}


def per_seed(rows: Iterable[tuple[int, float]]) -> dict[int, float]:
    """One value per seed: repeats of a seed are averaged first, so intervals are over seeds, not repeats."""
    grouped: dict[int, list[float]] = {}
    for seed, value in rows:
        grouped.setdefault(seed, []).append(float(value))
    return {s: sum(v) / len(v) for s, v in sorted(grouped.items())}


def _tested(diff: float, spread: bool, test: Any) -> dict[str, Any]:
    """The interval and p of one scipy test result, so the two agree. With no spread the interval is the
    difference itself and the test is certain either way (scipy would answer NaN)."""
    if not spread:
        return {"ci95": [_round(diff), _round(diff)], "p": 1.0 if diff == 0 else 0.0}
    result = _quiet(test)
    ci = result.confidence_interval(LEVEL)
    return {"ci95": [_round(ci.low), _round(ci.high)], "p": _p(result.pvalue)}


def paired(a: Mapping[int, float], b: Mapping[int, float]) -> dict[str, Any]:
    """B - A over the seeds both have: the mean of the differences, its paired t-interval and the paired t-test's
    two-sided p, from one scipy.stats.ttest_rel (none below two shared seeds)."""
    shared = sorted(set(a) & set(b))
    xa, xb = _values(a[s] for s in shared), _values(b[s] for s in shared)
    d = np.round(xb - xa, 9)
    out: dict[str, Any] = {"method": PAIRED, "seeds": shared, "n": len(shared), "diff": None, "ci95": None, "p": None}
    if d.size == 0:
        return out
    out["diff"] = _round(float(d.mean()))
    if d.size >= 2:
        out.update(_tested(float(d.mean()), _spread(d), lambda: stats.ttest_rel(xb, xa)))
    return out


def welch(a: Iterable[float], b: Iterable[float]) -> dict[str, Any]:
    """B - A for two sides not paired (under two seeds in common): the difference of means, Welch's interval and Welch's t-test
    (scipy.stats.ttest_ind, equal_var=False; none unless each side has two values)."""
    xa, xb = _values(a), _values(b)
    out: dict[str, Any] = {"method": WELCH, "n_a": int(xa.size), "n_b": int(xb.size), "diff": None, "ci95": None,
                           "p": None}
    if xa.size == 0 or xb.size == 0:
        return out
    out["diff"] = _round(float(xb.mean() - xa.mean()))
    if xa.size >= 2 and xb.size >= 2:
        out.update(_tested(float(xb.mean() - xa.mean()), _spread(xa) or _spread(xb),
                           lambda: stats.ttest_ind(xb, xa, equal_var=False)))
    return out


def difference(a: Mapping[int, float], b: Mapping[int, float]) -> dict[str, Any]:
    """B - A per seed: paired over the shared seeds when there are two or more (seeds only one side ran are left
    out, and counted), else Welch over every seed. The interval and the p beside it come from the same test."""
    shared = set(a) & set(b)
    if len(shared) >= 2:
        out = paired(a, b)
    else:
        out = {**welch(a.values(), b.values()), "seeds": sorted(shared), "n": len(shared)}
    return {**out, "n_a": len(a), "n_b": len(b), "unshared": len(set(a) ^ set(b)) if len(shared) >= 2 else 0}


def interval_text(summary: Mapping[str, Any], digits: int = 2, sign: str = "") -> str:
    """`[lo, hi]`, with ` BCa` when a bootstrap gave it; '-' when there is none."""
    if not summary or not summary.get("ci95"):
        return "-"
    lo, hi = summary["ci95"]
    mark = " BCa" if summary.get("method") == BCA else ""
    return f"[{lo:{sign},.{digits}f}, {hi:{sign},.{digits}f}]{mark}"


def show(summary: Mapping[str, Any], digits: int = 2) -> str:
    """`mean ± std [lo, hi] n=N` for a table cell; '-' when nothing was measured."""
    if not summary or summary.get("mean") is None:
        return "-"
    text = f"{summary['mean']:,.{digits}f}"
    if summary.get("std") is not None:
        text += f" ± {summary['std']:,.{digits}f}"
    if summary.get("ci95"):
        text += " " + interval_text(summary, digits)
    return f"{text} n={summary['n']}"
