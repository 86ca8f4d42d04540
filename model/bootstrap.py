"""Bootstrap intervals over sentences (or flip pairs), never over rows.

A `Resampler` draws, once, `resamples` corpora of the same size from a set of S units
(sentences), with replacement: `counts[b, s]` is how often unit s is in resample b.
Every statistic on that set is then recomputed on the same resamples, each row weighted
by its unit's count, and its interval is the central `level` of the resampled values
(percentile bootstrap). Rows of one sentence move together, as they should: they are
not independent.

Medians are exact (weighted ranks) when the rows are few; over more rows the rows are
binned first, 8192 bins over their range, which places each resampled median within
one bin of the exact one (a ten-thousandth of the range: far below any printed digit).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

_EXACT_ROWS = 2048   # rows beyond which medians are binned
_COARSE, _FINE = 128, 64
# Rank statistics and slopes work on [B, R] arrays (a weight and a rank per resample and row):
# they run a block of resamples at a time, each array at most this many cells (32 MB in
# float64). Whole, 20,000 resamples of the fresh corpus's rows took 3.6 GB at once. Every
# operation is per resample, so a block's values are those of the whole, to the bit.
_BLOCK_CELLS = 1 << 22


@dataclass(frozen=True)
class Estimate:
    """A statistic and its interval (None where it has none; NaN where its rows are none)."""
    value: float
    lo: float | None = None
    hi: float | None = None

    def fields(self, name: str) -> dict[str, float | None]:
        """{name, name_lo, name_hi}: how a statistics dataclass keeps it (the results' keys)."""
        return {name: self.value, f"{name}_lo": self.lo, f"{name}_hi": self.hi}


NONE = Estimate(float("nan"), float("nan"), float("nan"))   # a statistic of no rows


def units(sentence: np.ndarray, sentences: list[int]) -> np.ndarray:
    """Each row's sentence [R] as its position in `sentences`: the resampler's units."""
    sentence = np.asarray(sentence, dtype=int)
    pos = np.full(max(max(sentences, default=0), int(sentence.max(initial=0))) + 1, -1)
    pos[sentences] = np.arange(len(sentences))
    return pos[sentence]


class Resampler:
    def __init__(self, n_units: int, resamples: int, seed: int, level: float):
        rng = np.random.default_rng(seed)
        self.seed = seed
        self.n = n_units
        self.level = level
        self.counts = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=resamples).astype(np.int32)

    def over(self, sentence: np.ndarray) -> tuple[np.ndarray, "Resampler"]:
        """(units, resampler) for rows of some sentences only (a sample of the corpus), with
        the same settings: those sentences resampled by themselves (a resample of the whole
        set could hold none of them)."""
        sentences = sorted({int(s) for s in sentence})
        return units(sentence, sentences), Resampler(len(sentences), self.counts.shape[0], self.seed, self.level)

    def drawing(self, unit: np.ndarray) -> "Resampler":
        """The resamples that draw at least one of these rows' units (a subset of rows, such
        as the survivors, can be absent from a resample of a small corpus)."""
        present = self.counts[:, np.unique(unit)].sum(axis=1) > 0
        if present.all():
            return self
        sub = copy.copy(self)
        sub.counts = self.counts[present]
        return sub

    def median_of(self, values, unit) -> Estimate:
        """The median of a subset of rows with its interval over the resamples that draw it;
        NONE without rows."""
        values = np.asarray(values, float)
        if values.size == 0:
            return NONE
        return Estimate(float(np.median(values)), *self.drawing(unit).median(values, unit))

    def share_of(self, flags, unit) -> Estimate:
        """The share of a subset of rows with its interval, as `median_of`."""
        flags = np.asarray(flags)
        if flags.size == 0:
            return NONE
        return Estimate(float(np.mean(flags)), *self.drawing(unit).share(flags, unit))

    def interval(self, values: np.ndarray) -> tuple[float, float]:
        """The central `level` of one statistic's resampled values [B]."""
        tail = (1.0 - self.level) / 2 * 100
        lo, hi = np.percentile(values, [tail, 100 - tail])
        return float(lo), float(hi)

    def median(self, values: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of the median of `values` [R], row r belonging to unit `unit[r]`."""
        values, unit = np.asarray(values, float), np.asarray(unit)
        if values.size > _EXACT_ROWS:
            return self.interval(self._binned_medians(values, unit))
        order = np.argsort(values, kind="stable")
        weights = self.counts[:, unit[order]]                    # [B, R]
        cum = np.cumsum(weights, axis=1, dtype=np.int32)
        n = cum[:, -1]
        below = lambda k: (cum <= k[:, None]).sum(axis=1)       # index of the row at rank k
        v = values[order]
        return self.interval((v[below((n - 1) // 2)] + v[below(n // 2)]) / 2)

    def _binned_medians(self, values: np.ndarray, unit: np.ndarray) -> np.ndarray:
        """[B] resampled medians, each within one fine bin (range / 8192) of the exact
        one. Two levels: a coarse histogram finds the bin holding the median's rank in
        every resample, then that bin's fine histogram finds it within (histograms of
        counts, and their products, are whole numbers: exact in float64)."""
        lo, hi = float(values.min()), float(values.max())
        width = (hi - lo) / (_COARSE * _FINE) or 1.0
        fine = np.minimum(((values - lo) / width).astype(np.int64), _COARSE * _FINE - 1)   # [R]
        coarse_bin, fine_bin = fine // _FINE, fine % _FINE
        hist = np.bincount(unit * _COARSE + coarse_bin, minlength=self.n * _COARSE)
        hist = hist.reshape(self.n, _COARSE).astype(np.float64)                  # [S, coarse]
        counts = self.counts.astype(np.float64)                                  # [B, S]
        coarse = np.cumsum(counts @ hist, axis=1)                                # [B, coarse]
        n = coarse[:, -1]

        def at_rank(k: np.ndarray) -> np.ndarray:
            c = (coarse <= k[:, None]).sum(axis=1)                              # coarse bin of rank k
            before = np.where(c > 0, coarse[np.arange(len(k)), np.maximum(c - 1, 0)], 0.0)
            within = np.empty((len(k), _FINE))   # the fine histogram of bin c, per resample
            for b in np.unique(c):      # the median's coarse bin takes few values over the resamples
                draws, rows = c == b, coarse_bin == b
                h = np.bincount(unit[rows] * _FINE + fine_bin[rows], minlength=self.n * _FINE)
                within[draws] = counts[draws] @ h.reshape(self.n, _FINE).astype(np.float64)   # [S, fine]
            within = np.cumsum(within, axis=1)
            f = (within <= (k - before)[:, None]).sum(axis=1)
            return lo + (c * _FINE + np.minimum(f, _FINE - 1) + 0.5) * width

        return (at_rank(np.floor((n - 1) / 2)) + at_rank(np.floor(n / 2))) / 2

    def max(self, values: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of the largest value (the worst row)."""
        per_unit = np.full(self.n, -np.inf)
        np.maximum.at(per_unit, np.asarray(unit), np.asarray(values, float))
        drawn = np.where(self.counts > 0, per_unit[None, :], -np.inf)
        return self.interval(drawn.max(axis=1))

    def share(self, flags: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of the share of rows for which `flags` holds."""
        hits = np.bincount(np.asarray(unit), weights=np.asarray(flags, float), minlength=self.n)
        rows = np.bincount(np.asarray(unit), minlength=self.n).astype(float)
        c = self.counts.astype(float)
        return self.interval((c @ hits) / (c @ rows))

    def mean(self, values: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of the mean of `values` over rows."""
        sums = np.bincount(np.asarray(unit), weights=np.asarray(values, float), minlength=self.n)
        rows = np.bincount(np.asarray(unit), minlength=self.n).astype(float)
        c = self.counts.astype(float)
        return self.interval((c @ sums) / (c @ rows))

    # -- rank statistics: each resample weighs a row by its unit's count ------------------------

    def _ranks(self, values: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ranks [B, R], weights [B, R]): each row's mid-rank in every resampled corpus, a
        row drawn k times counting as k tied copies (ties share their mean rank)."""
        values = np.asarray(values, float)
        weights = self.counts[:, np.asarray(unit)].astype(float)           # [B, R]
        order = np.argsort(values, kind="stable")
        v = values[order]
        starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])
        group = np.cumsum(np.r_[True, v[1:] != v[:-1]]) - 1                 # tie group of each sorted row
        gw = np.add.reduceat(weights[:, order], starts, axis=1)              # [B, G]
        mid = np.cumsum(gw, axis=1) - gw + (gw + 1) / 2
        ranks = np.empty_like(weights)
        ranks[:, order] = mid[:, group]
        return ranks, weights

    def spearman(self, x: np.ndarray, y: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of Spearman's rank correlation of x and y [R]."""
        return self.interval(self.spearman_draws(x, y, unit))

    def spearman_draws(self, x: np.ndarray, y: np.ndarray, unit: np.ndarray) -> np.ndarray:
        """Spearman's rank correlation of x and y [R] in every resample [B]."""
        return self._by_blocks(len(x), lambda rs: rs._spearman_block(x, y, unit))

    def _spearman_block(self, x: np.ndarray, y: np.ndarray, unit: np.ndarray) -> np.ndarray:
        rx, w = self._ranks(x, unit)
        ry, _ = self._ranks(y, unit)
        n = w.sum(axis=1, keepdims=True)
        dx, dy = rx - (w * rx).sum(1, keepdims=True) / n, ry - (w * ry).sum(1, keepdims=True) / n
        return (w * dx * dy).sum(1) / np.sqrt((w * dx * dx).sum(1) * (w * dy * dy).sum(1))

    def slope(self, x: np.ndarray, y: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of the least-squares slope of y on x [R]."""
        return self.interval(self._by_blocks(len(x), lambda rs: rs._slope_block(x, y, unit)))

    def _slope_block(self, x: np.ndarray, y: np.ndarray, unit: np.ndarray) -> np.ndarray:
        w = self.counts[:, np.asarray(unit)].astype(float)                 # [B, R]
        n = w.sum(axis=1, keepdims=True)
        dx = x[None] - (w * x).sum(1, keepdims=True) / n
        dy = y[None] - (w * y).sum(1, keepdims=True) / n
        return (w * dx * dy).sum(1) / (w * dx * dx).sum(1)

    def auc(self, score: np.ndarray, flags: np.ndarray, unit: np.ndarray) -> tuple[float, float]:
        """Interval of the ROC AUC of `score` for the rows where `flags` holds (Mann-Whitney:
        the chance a flagged row outscores an unflagged one, ties counting half)."""
        draws = self.auc_draws(score, flags, unit)
        return self.interval(draws[~np.isnan(draws)])

    def auc_draws(self, score: np.ndarray, flags: np.ndarray, unit: np.ndarray) -> np.ndarray:
        """The AUC in every resample [B]; NaN in a resample with no row of one kind."""
        return self._by_blocks(len(score), lambda rs: rs._auc_block(score, flags, unit))

    def _auc_block(self, score: np.ndarray, flags: np.ndarray, unit: np.ndarray) -> np.ndarray:
        ranks, w = self._ranks(score, unit)
        pos = np.asarray(flags, bool)
        n_pos, n_neg = w[:, pos].sum(1), w[:, ~pos].sum(1)
        u = (w[:, pos] * ranks[:, pos]).sum(1) - n_pos * (n_pos + 1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((n_pos > 0) & (n_neg > 0), u / (n_pos * n_neg), np.nan)

    def _by_blocks(self, rows: int, draws) -> np.ndarray:
        """`draws(resampler)` [b] over blocks of the resamples, joined [B]: no [b, rows]
        array over _BLOCK_CELLS cells."""
        step = max(1, _BLOCK_CELLS // max(1, rows))
        if step >= len(self.counts):
            return draws(self)
        parts = []
        for start in range(0, len(self.counts), step):
            block = copy.copy(self)
            block.counts = self.counts[start:start + step]
            parts.append(draws(block))
        return np.concatenate(parts)

    def difference(self, value: float, draws: np.ndarray, other_value: float, other_draws: np.ndarray) -> Estimate:
        """A paired difference of two statistics on the same rows and resamples (value minus
        other), its interval over the resamples where both are defined."""
        d = np.asarray(draws) - np.asarray(other_draws)
        d = d[~np.isnan(d)]
        if np.isnan(value - other_value) or not d.size:
            return NONE
        return Estimate(float(value - other_value), *self.interval(d))
