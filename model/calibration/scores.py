"""One reading scored against one truth on one set of rows (`Score`): the precision and recall
of its above-half badge and its rank agreement (Spearman), with bootstrap intervals over
sentences and, beside alpha's, the paired differences; fit when both lower bounds clear the
registered bar. Beside them Wilson's binomial bounds (a sensitivity), and each figure's margin
(model/picks.py).

Not here: which rows and truths (sets.py), the verdicts over corpora (verdicts.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import picks
from ..bootstrap import NONE, Estimate, Resampler


@dataclass
class Score:
    """One reading against one truth, on one set of rows."""
    reading: str
    n_rows: int
    n_sentences: int
    n_badged: int                 # rows whose reading is above the threshold
    n_truth_above: int            # rows whose truth is above it
    n_both: int
    precision: float | None
    precision_lo: float | None
    precision_hi: float | None
    recall: float | None
    recall_lo: float | None
    recall_hi: float | None
    spearman: float | None
    spearman_lo: float | None
    spearman_hi: float | None
    truth_median: float | None    # the truth's sink share on the median row of the reading's head
    truth_median_lo: float | None
    truth_median_hi: float | None
    # paired with alpha (the instrument's reading today): this reading's minus alpha's
    precision_vs_alpha: float | None = None
    precision_vs_alpha_lo: float | None = None
    precision_vs_alpha_hi: float | None = None
    recall_vs_alpha: float | None = None
    recall_vs_alpha_lo: float | None = None
    recall_vs_alpha_hi: float | None = None
    fit: bool = False             # both lower bounds at the registered bar (on this set)
    # Sensitivity (added after the results were read): Wilson's binomial lower bounds, rows
    # counted as independent; a bootstrap over sentences gives a ratio of two or three rows an
    # interval of nothing, and these bounds say how little such a count shows.
    precision_wilson_lo: float | None = None
    recall_wilson_lo: float | None = None
    fit_wilson: bool = False
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


def _ratio(num: np.ndarray, den: np.ndarray, unit: np.ndarray, rs: Resampler) -> tuple[float, np.ndarray]:
    """sum(num) / sum(den) over the rows, and its value in every resample (NaN where a
    resample draws no row of the denominator)."""
    value = float(num.sum() / den.sum()) if den.sum() else float("nan")
    n = np.bincount(unit, weights=num.astype(float), minlength=rs.n)
    d = np.bincount(unit, weights=den.astype(float), minlength=rs.n)
    c = rs.counts.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return value, (c @ n) / (c @ d)


def _estimate(value: float, draws: np.ndarray, rs: Resampler) -> Estimate:
    draws = draws[~np.isnan(draws)]
    if np.isnan(value) or not draws.size:
        return NONE
    return Estimate(value, *rs.interval(draws))


def score(name: str, reading: np.ndarray, truth: np.ndarray, sentence: np.ndarray, rs_like: Resampler,
          threshold: float, bar: dict, alpha: tuple[np.ndarray, np.ndarray] | None = None,
          alt: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> Score:
    """A reading's shares against a truth's [R] (NaN: not measured), the rows' sentences [R].
    `alpha`: alpha's (reading, truth) on the same rows, for the paired differences. `alt`: the
    reading, the truth and the pick margin of each row on its alternative pick, for the counts'
    margins (picks.count_margin)."""
    from scipy import stats as sps

    keep = ~np.isnan(truth) & ~np.isnan(reading)   # value zeroing: its sample's rows only
    if not keep.any():
        return Score(name, 0, 0, 0, 0, 0, *[None] * 12,   # no row: nothing any rounding could turn
                     margins={k: (picks.NO_MARGIN, 1.0) for k in ("fit", "fit_wilson", "n_badged", "n_truth_above", "n_both")})
    unit, rs = rs_like.over(sentence[keep])
    x, y = reading[keep], truth[keep]
    badge, above = x > threshold, y > threshold
    p, p_draws = _ratio(badge & above, badge, unit, rs)
    r, r_draws = _ratio(badge & above, above, unit, rs)
    rho = float(sps.spearmanr(x, y).statistic) if len(x) > 2 else float("nan")
    rho_e = Estimate(rho, *rs.spearman(x, y, unit)) if len(x) > 2 and not np.isnan(rho) else NONE
    precision, recall = _estimate(p, p_draws, rs), _estimate(r, r_draws, rs)
    s = Score(name, int(keep.sum()), int(rs.n), int(badge.sum()), int(above.sum()), int((badge & above).sum()),
              **clean(precision.fields("precision")), **clean(recall.fields("recall")), **clean(rho_e.fields("spearman")),
              **clean(rs.median_of(y, unit).fields("truth_median")))
    if alpha is not None:
        ax, ay = alpha[0][keep], alpha[1][keep]
        ab, aa = ax > threshold, ay > threshold
        ap, ap_draws = _ratio(ab & aa, ab, unit, rs)
        ar, ar_draws = _ratio(ab & aa, aa, unit, rs)
        s.precision_vs_alpha, s.precision_vs_alpha_lo, s.precision_vs_alpha_hi = _clean_t(rs.difference(p, p_draws, ap, ap_draws))
        s.recall_vs_alpha, s.recall_vs_alpha_lo, s.recall_vs_alpha_hi = _clean_t(rs.difference(r, r_draws, ar, ar_draws))
    s.fit = bool(s.precision_lo is not None and s.recall_lo is not None
                 and s.precision_lo >= bar["precision_lo"] and s.recall_lo >= bar["recall_lo"])
    s.precision_wilson_lo, s.recall_wilson_lo = wilson_lo(s.n_both, s.n_badged, rs.level), wilson_lo(s.n_both, s.n_truth_above, rs.level)
    s.fit_wilson = bool(s.precision_wilson_lo is not None and s.recall_wilson_lo is not None
                        and s.precision_wilson_lo >= bar["precision_lo"] and s.recall_wilson_lo >= bar["recall_lo"])
    # Which rows are counted turns on a share near the threshold, the reading's or the truth's,
    # or on a pick near a tie whose alternative falls on the other side.
    if alt is None:
        badged, truth_above = picks.threshold_margin(x, threshold), picks.threshold_margin(y, threshold)
    else:
        ax, ay, am = (v[keep] for v in alt)
        badged, truth_above = picks.count_margin(x, threshold, ax, am), picks.count_margin(y, threshold, ay, am)
    near = min(badged, truth_above)
    s.margins = {"n_badged": (badged, 1.0), "n_truth_above": (truth_above, 1.0), "n_both": (near, 1.0)}
    for name, n in (("precision", s.n_badged), ("recall", s.n_truth_above)):
        s.margins |= {name: (near, 1.0 / max(1, n)),
                      **{f"{name}{x}": (near, picks.BOUND_STEPS / max(1, n)) for x in ("_lo", "_hi")}}
    # The verdict turns on a row that turns only if one row more or less could turn it: carry
    # a bound that passes below its bar, or (for a verdict that fails) every bound that fails
    # above its bar (a row moves a ratio by at most 1 / its denominator).
    bounds = [(s.precision_lo, bar["precision_lo"], s.n_badged), (s.recall_lo, bar["recall_lo"], s.n_truth_above)]
    s.margins["fit"] = (min(near if _a_row_turns(s.fit, bounds) else picks.NO_MARGIN, _apart(s.fit, bounds)), 1.0)
    wilson = [(s.precision_wilson_lo, bar["precision_lo"], s.n_badged), (s.recall_wilson_lo, bar["recall_lo"], s.n_truth_above)]
    s.margins |= {k: (near, 1.0) for k in ("precision_wilson_lo", "recall_wilson_lo")}
    s.margins["fit_wilson"] = (near if _a_row_turns(s.fit_wilson, wilson) else picks.NO_MARGIN, 1.0)
    return s


def _a_row_turns(fit: bool, bounds: list[tuple]) -> bool:
    """Whether one row counted the other way could turn a verdict on lower bounds (value, bar,
    the ratio's denominator): a passing verdict if any bound is within a row of its bar, a
    failing one only if every failing bound is (a bound of no rows could become anything)."""
    within = lambda v, b, n: v is None or abs(v - b) <= 1.0 / max(1, n)
    if fit:
        return any(within(v, b, n) for v, b, n in bounds)
    return all(within(v, b, n) for v, b, n in bounds if v is None or v < b)


def _apart(fit: bool, bounds: list[tuple]) -> float:
    """How near rounding alone (no row turning) comes to turning the verdict: a passing one,
    the nearest bound's relative distance to its bar; a failing one, the farthest failing
    bound's (every failing bound would have to cross)."""
    relevant = bounds if fit else [(v, b, n) for v, b, n in bounds if v is not None and v < b]
    gaps = [abs(v - b) / b for v, b, _ in relevant if v is not None and v != b]
    if not gaps:
        return picks.NO_MARGIN
    return min(gaps) if fit else max(gaps)


def wilson_lo(k: int, n: int, level: float) -> float | None:
    """Wilson's lower bound for k successes in n trials, at `level`; None for n = 0."""
    from scipy import stats as sps

    if n == 0:
        return None
    z = float(sps.norm.ppf(1 - (1 - level) / 2))
    p = k / n
    centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - half) / (1 + z * z / n))


def clean(d: dict) -> dict:
    """NaN (no row to form a ratio over) as None: results are JSON, which has no NaN."""
    return {k: (None if v is None or np.isnan(v) else float(v)) for k, v in d.items()}


def _clean_t(e: Estimate) -> tuple:
    return tuple(clean({"v": v})["v"] for v in (e.value, e.lo, e.hi))
