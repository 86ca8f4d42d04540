"""Lower bounds no seed decides (docs/study.yml `mean_ablation`, Part 10; applied to Part 9's
verdicts by amendment).

A share of rows (precision: of the badged rows, those whose truth is above half; recall: of
those, the badged ones) gets two lower bounds, and a verdict against a bar from both:

- the percentile bootstrap over sentences, its bound the resampled shares' quantile at the
  lower tail q, and its Monte Carlo margin: with B resamples, the bootstrap distribution's true
  quantile lies, with probability above 0.9999 at 4 sigmas, between the resampled values at the
  quantiles q -+ sigmas sqrt(q (1 - q) / B); the margin is the larger distance from the bound to
  either;
- the exact (Clopper-Pearson) binomial bound on the rows' counts at the same tail, which holds on
  few rows where the bootstrap's cannot (one row caught of one: the bootstrap's bound is 1.0).

A bound clears the bar if the bootstrap's, less its margin, and the exact one are both at or
above it; misses it if the bootstrap's, plus its margin, or the exact one is below it; and is
undetermined otherwise: a verdict is never left to the resamples' seed.

Not here: the rows and their truths (model/calibration), the readings' verdicts over corpora
(verdicts.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

CLEARS, MISSES, UNDETERMINED = "clears", "misses", "undetermined"


@dataclass
class Bound:
    """One share's lower bound at one tail, against one bar."""
    bootstrap: float | None    # the percentile bootstrap's bound (None: no resample draws a row of the denominator)
    mc_margin: float           # its Monte Carlo margin
    exact: float | None        # Clopper-Pearson's (None: no row in the denominator)
    verdict: str               # CLEARS, MISSES, UNDETERMINED

    @property
    def value(self) -> float | None:
        """The bound a page prints: the smaller of the two."""
        known = [b for b in (self.bootstrap, self.exact) if b is not None]
        return min(known) if known else None


def clopper_pearson_lo(k: int, n: int, tail: float) -> float | None:
    """The exact binomial lower bound of k successes in n at the one-sided `tail`."""
    from scipy.stats import beta

    if n == 0:
        return None
    return 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))


def resampled_shares(num: np.ndarray, den: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per unit (sentence) sums of a share's numerator and denominator [S], the resamples'
    counts [B, S] -> the share in every resample that draws a row of the denominator."""
    d = counts @ den
    n = counts @ num
    keep = d > 0
    return n[keep] / d[keep]


def lower_bound(k: int, n: int, draws: np.ndarray, tail: float, sigmas: float, bar: float) -> Bound:
    """A share of k rows in n, its resampled values `draws`: its bounds at `tail` and their
    verdict against `bar` (module docstring)."""
    exact = clopper_pearson_lo(k, n, tail)
    if n == 0 or draws.size == 0:
        return Bound(None, 0.0, exact, UNDETERMINED)
    spread = sigmas * math.sqrt(tail * (1 - tail) / draws.size)
    low, boot, high = np.quantile(draws, [max(0.0, tail - spread), tail, min(1.0, tail + spread)])
    margin = float(max(boot - low, high - boot))
    boot = float(boot)
    if boot - margin >= bar and exact >= bar:
        verdict = CLEARS
    elif boot + margin < bar or exact < bar:
        verdict = MISSES
    else:
        verdict = UNDETERMINED
    return Bound(boot, margin, exact, verdict)


def both(verdicts: list[str]) -> str:
    """The verdict of several bounds that must all clear: CLEARS if each does, MISSES if one
    misses, UNDETERMINED otherwise."""
    if MISSES in verdicts:
        return MISSES
    return CLEARS if all(v == CLEARS for v in verdicts) else UNDETERMINED
