"""Medians with bootstrap confidence intervals (scipy.stats.bootstrap, percentile method:
robust for a median of a few skewed samples, where BCa's corrections are unstable) and the
rule that calls one setting better than another."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

LEVEL = 0.95
RESAMPLES = 2000


@dataclass(frozen=True)
class Estimate:
    median: float
    low: float   # bounds of the LEVEL interval; infinite with fewer than 2 samples
    high: float
    n: int


def _median(*samples: Any, axis: int = -1) -> Any:
    return np.median(samples[0], axis=axis)


def _median_difference(a: Any, b: Any, axis: int = -1) -> Any:
    return np.median(b, axis=axis) - np.median(a, axis=axis)


def estimate(samples: Sequence[float], seed: int) -> Estimate:
    """The median of finite samples and its interval."""
    x = np.asarray([s for s in samples if math.isfinite(s)], dtype=float)
    if len(x) == 0:
        return Estimate(math.inf, math.inf, math.inf, 0)
    med = float(np.median(x))
    if len(x) < 2:
        return Estimate(med, -math.inf, math.inf, 1)
    if np.all(x == x[0]):
        return Estimate(med, med, med, len(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Imported here: it takes a quarter of a second, which gasnet-tune's argument checks
        # and bad-input messages should not wait for.
        from scipy import stats
        res = stats.bootstrap((x,), _median, confidence_level=LEVEL, n_resamples=RESAMPLES,
                              method="percentile", vectorized=True,
                              random_state=np.random.default_rng(seed))
    return Estimate(med, float(res.confidence_interval.low),
                    float(res.confidence_interval.high), len(x))


def difference(a: Sequence[float], b: Sequence[float], seed: int) -> Estimate:
    """median(b) - median(a) with its interval, the two resampled independently."""
    xa = np.asarray([s for s in a if math.isfinite(s)], dtype=float)
    xb = np.asarray([s for s in b if math.isfinite(s)], dtype=float)
    if len(xa) == 0 or len(xb) == 0:
        return Estimate(math.nan, -math.inf, math.inf, 0)
    med = float(np.median(xb) - np.median(xa))
    if len(xa) < 2 or len(xb) < 2:
        return Estimate(med, -math.inf, math.inf, min(len(xa), len(xb)))
    if np.all(xa == xa[0]) and np.all(xb == xb[0]):
        return Estimate(med, med, med, min(len(xa), len(xb)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from scipy import stats
        res = stats.bootstrap((xa, xb), _median_difference, confidence_level=LEVEL,
                              n_resamples=RESAMPLES, method="percentile", vectorized=True,
                              random_state=np.random.default_rng(seed))
    return Estimate(med, float(res.confidence_interval.low),
                    float(res.confidence_interval.high), min(len(xa), len(xb)))


def clears(candidate: Estimate, incumbent: Estimate) -> bool:
    """Costs: the candidate is better only when its whole interval lies below the incumbent's."""
    return candidate.high < incumbent.low
