"""Part 10's verdicts (docs/study.yml `mean_ablation`): a reading's over the corpora it is
measured on, and a model's, "fit if some reading is", read at the level Bonferroni's adjustment
over the readings gives. Each bound clears, misses or is undetermined (bounds.py), so each
verdict is fit, not fit or undetermined, and no seed decides it.

Not here: the bounds (bounds.py), the scores they come from (scores.py).
"""
from __future__ import annotations

from .. import picks
from .bounds import CLEARS, MISSES, both

FIT, NOT_FIT, UNDETERMINED = "fit", "not fit", "undetermined"
WORD = {CLEARS: FIT, MISSES: NOT_FIT}


def reading_verdicts(sets: dict[str, dict], suffix: str = "") -> dict:
    """set name -> reading -> score (scores.py) -> reading -> its verdict over every set, read at
    the study's level (suffix "") or the adjusted one ("_adjusted"); with margins (the nearest
    count's: a row turning could turn a bound)."""
    readings = list(next(iter(sets.values())))
    out: dict = {r: WORD.get(both([sets[c][r][f"verdict{suffix}"] for c in sets]), UNDETERMINED) for r in readings}
    out["margins"] = {r: (min(sets[c][r]["margins"][f"verdict{suffix}"][0] for c in sets), 1.0) for r in readings}
    return out


def model_verdict(sets: dict[str, dict]) -> dict:
    """The model's verdict: fit if some reading clears every bound on every set at the adjusted
    level (naming each), not fit if every reading misses one, undetermined otherwise."""
    adjusted = reading_verdicts(sets, "_adjusted")
    readings = [r for r in adjusted if r != "margins"]
    fit = [r for r in readings if adjusted[r] == FIT]
    verdict = FIT if fit else NOT_FIT if all(adjusted[r] == NOT_FIT for r in readings) else UNDETERMINED
    margin = min((adjusted["margins"][r][0] for r in readings), default=picks.NO_MARGIN)
    return {"verdict": verdict, "readings": ", ".join(fit), "n_readings": len(readings),
            "margins": {"verdict": (margin, 1.0), "readings": (margin, 1.0)}}
