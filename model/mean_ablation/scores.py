"""One reading against one truth on one set of rows, for a verdict no seed decides (Part 10;
docs/study.yml `mean_ablation`): the counts of the badge (the reading above half) and of the
truth above half, the precision's and the recall's lower bounds (bounds.py) at the study's level
and at the level the model-level verdict reads (Bonferroni over the readings), and the reading's
rank agreement with each truth measured on the same rows, side by side.

Not here: the rows and their truths (model/calibration), the verdicts over corpora (verdicts.py).
"""
from __future__ import annotations

import numpy as np

from .. import picks
from ..bootstrap import NONE, Estimate, Resampler
from .bounds import Bound, both, lower_bound

# A bound's printed value moves by up to this many rows' worth when a row turns (as Part 9's).
BOUND_STEPS = picks.BOUND_STEPS


def _bound_fields(name: str, b: Bound) -> dict:
    return {f"{name}_lo": b.value, f"{name}_boot_lo": b.bootstrap, f"{name}_mc_margin": b.mc_margin,
            f"{name}_exact_lo": b.exact, f"{name}_verdict": b.verdict}


def score(reading: np.ndarray, truth: np.ndarray, sentence: np.ndarray, counts_of, settings: dict,
          others: dict[str, np.ndarray], rank: Resampler) -> dict:
    """A reading's shares and a truth's [R] (NaN: not measured) on rows of sentences [R].
    `counts_of(n)`: the resamples' counts [B, n] over n sentences (the verdicts' resampler);
    `settings`: threshold, bar (precision, recall), tails ({"": q, "adjusted": q / m}), sigmas;
    `others`: other truths' shares on the same rows, for the reading's rank agreement with each;
    `rank`: the study's resampler, for the rank agreements' intervals."""
    from scipy import stats as sps

    keep = ~np.isnan(truth) & ~np.isnan(reading)
    sentences = sorted({int(s) for s in sentence[keep]})
    unit = np.searchsorted(sentences, sentence[keep])
    x, y = reading[keep], truth[keep]
    badge, above = x > settings["threshold"], y > settings["threshold"]
    out: dict = {"n_rows": int(keep.sum()), "n_sentences": len(sentences), "n_badged": int(badge.sum()),
                 "n_truth_above": int(above.sum()), "n_both": int((badge & above).sum())}
    out["precision"] = out["n_both"] / out["n_badged"] if out["n_badged"] else None
    out["recall"] = out["n_both"] / out["n_truth_above"] if out["n_truth_above"] else None
    counts = counts_of(len(sentences)) if sentences else np.zeros((0, 0))
    per_unit = lambda flags: np.bincount(unit, weights=flags.astype(float), minlength=len(sentences))
    hit = per_unit(badge & above)
    draws = {"precision": _draws(hit, per_unit(badge), counts), "recall": _draws(hit, per_unit(above), counts)}
    dens = {"precision": out["n_badged"], "recall": out["n_truth_above"]}
    for level, tail in settings["tails"].items():
        suffix = f"_{level}" if level else ""
        bounds = {name: lower_bound(out["n_both"], dens[name], draws[name], tail, settings["sigmas"],
                                    settings["bar"][name]) for name in dens}
        for name, b in bounds.items():
            out |= {k + suffix: v for k, v in _bound_fields(name, b).items()}
        out[f"verdict{suffix}"] = both([b.verdict for b in bounds.values()])
    # The reading's rank agreement with this truth and with every other one, on the same rows.
    for name, other in {"": truth, **others}.items():
        o = other[keep]
        measured = ~np.isnan(o)
        e = NONE
        if measured.sum() > 2:
            rho = float(sps.spearmanr(x[measured], o[measured]).statistic)
            u, rs = rank.over(sentence[keep][measured])
            e = Estimate(rho, *rs.spearman(x[measured], o[measured], u)) if not np.isnan(rho) else NONE
        out |= {f"spearman{'_' + name if name else ''}{k}": _clean(v) for k, v in
                (("", e.value), ("_lo", e.lo), ("_hi", e.hi))}
    out["margins"] = _margins(out, x, y, settings["threshold"])
    return out


def _draws(num: np.ndarray, den: np.ndarray, counts: np.ndarray) -> np.ndarray:
    if not counts.size:
        return np.zeros(0)
    d = counts @ den
    keep = d > 0
    return (counts @ num)[keep] / d[keep]


def _clean(v) -> float | None:
    return None if v is None or np.isnan(v) else float(v)


def _margins(out: dict, x: np.ndarray, y: np.ndarray, threshold: float) -> dict:
    """How near the counts, and what is read off them, came to turning (model/picks.py): a row
    whose reading or truth sits nearer the threshold than the floor could be counted otherwise."""
    near = min(picks.threshold_margin(x, threshold), picks.threshold_margin(y, threshold))
    margins = {k: (near, 1.0) for k in ("n_badged", "n_truth_above", "n_both")}
    for name, n in (("precision", out["n_badged"]), ("recall", out["n_truth_above"])):
        margins[name] = (near, 1.0 / max(1, n))
        for key in out:
            if key.startswith(f"{name}_") and "verdict" not in key:
                margins[key] = (near, BOUND_STEPS / max(1, n))
    for key in out:
        if "verdict" in key:
            margins[key] = (near, 1.0)
    return margins
