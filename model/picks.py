"""Decisions over floats that rounding must not flip, and the margin each is made by.

A published pick (a row, a head, a word; a count of rows past a threshold; a verdict) is
a discrete function of floats, and another machine rounds those floats differently (~1e-7
relative: another kernel path, another BLAS). So every such decision here comes with its
margin: how far, relative to the size of what is compared, the nearest candidate is from
turning it. The results record the margins beside what they decided (model/margins.py),
and the gate refuses a published pick whose margin is below study.yml's floor, on the
machine that computes it rather than on a reader's.

- `best(scores, tolerance)`: the first candidate (in the order given: corpus order, or
  layer then head) whose score is within `tolerance` of the largest. Its margin is the
  nearest any constraint of that choice comes to breaking: an earlier candidate entering
  the tie band, the chosen one leaving it, a later one rising so far above it that it
  falls out of the band.
- `threshold_margin(values, threshold)`: for a count of values past a threshold, the
  nearest value's distance to it.

Equal floats are left out of a margin: two independently computed values are exactly
equal only by construction (a displayed row with one other word weighs it 1.0 on every
head), and stay equal on every machine; the order then decides, as written.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NO_MARGIN = float("inf")   # a decision with nothing that could turn it
# Where finding a margin costs work (a ground-truth measurement on the alternative head, a
# sign test redone), only decisions nearer a tie than this are followed up: five times the
# margin floor (study.yml, 5e-5), far above what rounding moves a margin by (at most 2.3e-5
# seen), so what is not followed up cannot fall below the floor on another machine.
SEARCHED_BELOW = 2.5e-4


@dataclass(frozen=True)
class Pick:
    index: int      # the chosen candidate, in the order given
    margin: float   # relative: the nearest gap to another outcome, over the scale of the scores


def best_columns(scores, tolerance: float = 0.0, scale=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of `scores` [K, n] (K candidates in order), `best`'s choice, its margin and
    the alternative: the candidate chosen instead if the nearest constraint broke (the pick
    itself where nothing could turn it). (index [n], margin [n], alternative [n]); `scale`
    [n] divides the margins (default: each column's largest score's size)."""
    s = np.asarray(scores, dtype=float)
    cols = np.arange(s.shape[1])
    top = s.max(axis=0)                                   # [n]
    edge = top - tolerance
    pick = np.argmax(s >= edge, axis=0)                   # first in the band
    chosen = s[pick, cols]
    order = np.arange(s.shape[0])[:, None]
    gaps = np.where(order < pick, edge - s,                             # earlier ones stay out of the band
                    np.where(order > pick, chosen + tolerance - s,      # later ones do not rise past it
                             np.where(chosen != top, chosen - edge, 0.0)))   # the pick stays in it
    gaps = np.abs(gaps)
    gaps[gaps == 0] = np.inf   # equal floats: equal by construction (module docstring)
    nearest = gaps.argmin(axis=0)
    # If the nearest constraint broke: an earlier candidate entered the band (it is chosen);
    # the pick left it, or a later one rose past it (the first of what is then in the band).
    risen = s[nearest, cols] - tolerance
    leaves = np.where(nearest == pick, edge, risen)
    later = (s >= leaves) & (order != pick)
    alternative = np.where(nearest < pick, nearest, np.where(later.any(axis=0), np.argmax(later, axis=0), pick))
    margin = gaps[nearest, cols]
    alternative = np.where(np.isinf(margin), pick, alternative)
    size = np.where(top != 0, np.abs(top), 1.0) if scale is None else np.asarray(scale, dtype=float)
    return pick, margin / size, alternative


def best(scores, tolerance: float = 0.0, scale: float | None = None) -> Pick:
    """The first candidate whose score is within `tolerance` (absolute) of the largest.
    `scale` divides the margin (default: the largest score's size)."""
    s = np.asarray(scores, dtype=float)[:, None]
    pick, margin, _ = best_columns(s, tolerance, None if scale is None else [scale])
    return Pick(int(pick[0]), float(margin[0]))


def least(scores, tolerance: float = 0.0, scale: float | None = None) -> Pick:
    """`best` for the smallest score."""
    s = -np.asarray(scores, dtype=float)
    return best(s, tolerance, scale if scale is not None else (abs(float(s.max())) or 1.0))


def threshold_margin(values, threshold: float, scale: float | None = None) -> float:
    """For a count of `values` past `threshold`: the nearest value's distance to it, over
    `scale` (default: the threshold's size, or 1 for a threshold at 0). NaN values (not
    measured) are not counted, so they turn nothing."""
    v = np.asarray(values, dtype=float)
    gaps = np.abs(v[~np.isnan(v)] - threshold)
    gaps = gaps[gaps > 0]
    return float(gaps.min() / (scale if scale is not None else (abs(threshold) or 1.0))) if gaps.size else NO_MARGIN


def comparison_margin(a, b) -> float:
    """For a count of a > b over pairs of values: the nearest pair's gap over its size."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    size = np.maximum(np.abs(a), np.abs(b))
    keep = (a != b) & (size > 0)
    return float((np.abs(a - b)[keep] / size[keep]).min()) if keep.any() else NO_MARGIN


def flips_margin(flags, alt_flags, margins) -> float:
    """For a count of `flags` over rows: the smallest margin (a pick's, per row) among the
    rows whose flag would differ on the alternative pick."""
    flags, alt_flags = np.asarray(flags, bool), np.asarray(alt_flags, bool)
    m = np.asarray(margins, dtype=float)[flags != alt_flags]
    return float(m.min()) if m.size else NO_MARGIN


def count_margin(values, threshold: float, alt_values=None, alt_margins=None, scale: float | None = None) -> float:
    """For a count of `values` > `threshold` over rows: the nearest value's distance to the
    threshold, and (given each row's value on its alternative pick, and that pick's margin)
    the margin of any row whose alternative falls on the other side; an alternative that was
    not measured (NaN) counts as falling there; a row whose value was not measured, as nothing."""
    m = threshold_margin(values, threshold, scale)
    if alt_values is None:
        return m
    v, alt = np.asarray(values, dtype=float), np.asarray(alt_values, dtype=float)
    measured = ~np.isnan(v)   # a row not measured is not counted, whatever its pick
    flags = v[measured] > threshold
    alt, margins = alt[measured], np.asarray(alt_margins, dtype=float)[measured]
    return min(m, flips_margin(flags, np.where(np.isnan(alt), ~flags, alt > threshold), margins))


# A row that turns moves a share of n rows by 1/n, and a bootstrap bound of it by more: every
# resample holding its sentence moves, by 1 over that resample's rows (seen: 2/n, one of 188
# rows turning under the suite's simulated machine). Its bounds' step is taken as 3/n.
BOUND_STEPS = 3.0


def family(name: str, margin: float, n: int) -> dict[str, tuple[float, float]]:
    """The margins of a count and of its share of `n` rows (with its interval): each key's
    (margin, step), the step being how far its value moves when one row turns."""
    step = 1.0 / n if n else NO_MARGIN
    return {name: (margin, 1.0), f"{name}_share": (margin, step),
            **{f"{name}_share{x}": (margin, BOUND_STEPS * step) for x in ("_lo", "_hi")}}


def top_margins(rows) -> np.ndarray:
    """rows [..., K] -> per row, (largest - runner-up) / largest: how near its argmax came
    to another entry (inf where the two are equal: a tie by construction)."""
    top2 = np.sort(np.asarray(rows, dtype=float), axis=-1)[..., -2:]
    gap = top2[..., 1] - top2[..., 0]
    return np.where(gap > 0, gap / np.where(top2[..., 1] != 0, np.abs(top2[..., 1]), 1.0), np.inf)


def lead_margin(lead: int, margins) -> float:
    """For a pick between two counts of rows (the best's lead over the runner-up, in rows),
    made of row decisions with these margins: the margin of the decision that would turn it,
    the `lead`-th smallest (a tie, lead 0, turns with one)."""
    m = np.sort(np.asarray(margins, dtype=float).ravel())
    k = max(1, int(lead))
    return float(m[k - 1]) if m.size >= k else NO_MARGIN


def rank_margins(counts, row_margins, k: int = 3) -> list[float]:
    """For the first `k` places of candidates ranked by a count of rows (`counts`, descending,
    ties in the order given), each place's margin: the row decision that would turn it, the
    lead-th smallest of `row_margins` (the lead: how many rows must move for a neighbour to
    overtake it, or it them; a tie turns with one)."""
    c = list(counts)
    out = []
    for i in range(min(k, len(c))):
        gaps = [c[i - 1] - c[i]] if i > 0 else []
        gaps += [c[i] - c[i + 1]] if i + 1 < len(c) else []
        out.append(lead_margin(min(gaps), row_margins) if gaps else NO_MARGIN)
    return out


def row_margins(values, threshold: float, pick_margins) -> np.ndarray:
    """Per row, the nearer of its value's distance to a threshold (relative to it) and its
    pick's margin: how near the row came to being counted otherwise."""
    v = np.asarray(values, dtype=float)
    return np.minimum(np.abs(v - threshold) / (abs(threshold) or 1.0), np.asarray(pick_margins, dtype=float))


def verdict_margin(count: int, max_count: int, count_margin: float) -> float:
    """For a verdict "at most `max_count` rows": a count's margin matters only if one row
    more or less would carry it across (the count within one row of the bar)."""
    return count_margin if max_count - 1 <= count <= max_count + 1 else NO_MARGIN
