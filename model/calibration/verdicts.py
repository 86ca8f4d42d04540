"""Part 9's verdicts, each with its margin (model/picks.py): a reading fit on both corpora
(`fit_on_both`, `verdicts`), a model's verdict, the replication's, and the registered stop
rule on every reading beside the criterion.

Not here: the scores they read (scores.py).
"""
from __future__ import annotations

import numpy as np

from .. import picks


def fit_on_both(sets: dict, truth: str, field: str = "fit") -> dict:
    """reading -> fit (the criterion's `field`: "fit", or Wilson's "fit_wilson") on corpus.tsv's
    held-out half and the confirmation corpus alike, with the margin of that verdict."""
    scores = [(r, a, sets["confirmation"]["truths"][truth][r]) for r, a in sets["corpus"]["truths"][truth].items()]
    margin = lambda s: s.margins.get(field, (picks.NO_MARGIN,))[0]
    return {**{r: bool(getattr(a, field) and getattr(b, field)) for r, a, b in scores},
            "margins": {r: (min(margin(a), margin(b)), 1.0) for r, a, b in scores}}


def _few(scores, min_rows: int) -> tuple[bool, float]:
    """(too few rows with the truth above half on any of these scores, the margin of that)."""
    few = any(s.n_truth_above < min_rows for s in scores)
    return few, min(picks.verdict_margin(s.n_truth_above, min_rows - 1, s.margins["n_truth_above"][0]) for s in scores)


def verdicts(sets: dict, truth: str, min_rows: int = 0) -> dict:
    """reading -> "fit" (the criterion met on both corpora), "not fit", or "not measured" (no row
    of a corpus has the reading: value zeroing off Part 8's sample); with `min_rows` (the second
    amendment) also "undetermined": on either corpus fewer than `min_rows` rows with the truth
    above half, so the test could not be passed. With each verdict's margin."""
    out, margins = {}, {}
    for r, a in sets["corpus"]["truths"][truth].items():
        b = sets["confirmation"]["truths"][truth][r]
        few, few_margin = _few((a, b), min_rows)
        out[r] = ("not measured" if not (a.n_rows and b.n_rows) else "undetermined" if few
                  else "fit" if a.fit and b.fit else "not fit")
        margins[r] = (min(few_margin, a.margins["fit"][0], b.margins["fit"][0]), picks.NO_MARGIN)
    return out | {"margins": margins}


def model_verdict(verdict: dict, registered: dict) -> dict:
    """A model's verdict: fit if a reading is (naming each), else undetermined if no measured
    reading's test could be passed, else not fit; beside it the same under the criterion as
    registered (`registered`: the verdicts without the undetermined rule). With their margins."""
    def of(v: dict) -> tuple[str, list[str], float]:
        each = {r: x for r, x in v.items() if r != "margins" and x != "not measured"}
        fit = [r for r, x in each.items() if x == "fit"]
        word = "fit" if fit else "undetermined" if each and all(x == "undetermined" for x in each.values()) else "not fit"
        return word, fit, min((v["margins"][r][0] for r in each), default=picks.NO_MARGIN)

    (word, fit, margin), (as_registered, _, registered_margin) = of(verdict), of(registered)
    return {"verdict": word, "n_fit": len(fit), "readings": ", ".join(fit), "registered": as_registered,
            "margins": {"verdict": (margin, picks.NO_MARGIN), "n_fit": (margin, 1.0), "readings": (margin, picks.NO_MARGIN),
                        "registered": (registered_margin, picks.NO_MARGIN)}}


def replication_verdicts(st: dict, truth: str, min_rows: int) -> dict:
    """reading -> "replicates" (the registered criterion met on the replication alone), "fails",
    "undetermined" (fewer than `min_rows` rows with the truth above half) or "not measured"."""
    out, margins = {}, {}
    for r, s in st["truths"][truth].items():
        few, few_margin = _few((s,), min_rows)
        out[r] = "not measured" if not s.n_rows else "undetermined" if few else "replicates" if s.fit else "fails"
        margins[r] = (min(few_margin, s.margins["fit"][0]), picks.NO_MARGIN)
    return out | {"margins": margins}


def stop_rule(found: dict, alt: dict, threshold: float) -> dict:
    """The registered stop rule on every reading, beside the criterion: its rows above the
    threshold over every displayed row of corpus.tsv (both halves); adopted if none. `alt`:
    the rows on their alternative picks (`alternatives`), for the count's margin."""
    out = {}
    for r, (x, _, _) in found.items():
        above = int((x > threshold).sum())
        margin = picks.count_margin(x, threshold, alt[r][0], alt[r][3])
        out[r] = {"rows_above": above, "adopted": above == 0, "n_rows": int((~np.isnan(x)).sum()),
                  "margins": {"rows_above": (margin, 1.0), "adopted": (picks.verdict_margin(above, 0, margin), 1.0)}}
    return out
