"""The verdicts' keys: Part 9's calibration (`l6.cal.*`) and Part 10's mean ablation (`l6.ma.*`),
read off a model's results (model/calibration/, model/mean_ablation/).

Not here: the other keys (numbers.py), the namespace's builders (keys.py).
"""
from __future__ import annotations

import numpy as np

from .. import picks
from .keys import EXACT, put


def _calibration(out: dict, k: str, cal: dict | None) -> None:
    """Part 9 (model/calibration/): `l6.cal.corpus.word.output_norm_on_alpha.precision` (a
    reading against a truth, on the held-out half, `confirmation` or `replication`), its
    `_lo`/`_hi`, `.n_badged`, `.precision_vs_alpha`; `l6.cal.verdict.output_norm_on_alpha`
    (fit, not fit or undetermined, on the primary truth), `l6.cal.model_verdict.verdict`,
    `l6.cal.fit.*` (the criterion met on both corpora), `l6.cal.fit_layer.*` (on the layer
    truth, the amended primary), `l6.cal.replicates.*` (replicates, fails or undetermined);
    `l6.cal.corpus.redistribution.word.median`. The rows themselves are in the results only."""
    if not cal:
        return
    put(out, f"{k}.cal", {"n_fit": cal["n_fit"], "primary": cal["primary"], "downstream_every": cal["downstream_every"],
                           "margins": {"primary": EXACT, "downstream_every": EXACT,
                                       "n_fit": (min((m for m, _ in cal["fit"]["margins"].values()), default=picks.NO_MARGIN), 1.0)}})
    for name in ("fit", "fit_layer", "fit_wilson", "verdict", "verdict_registered", "model_verdict", "replicates"):
        if name in cal:
            put(out, f"{k}.cal.{name}", cal[name])
    for reading, rule in cal["stop_rule"].items():   # `l6.cal.stop_rule.alpha.adopted`
        put(out, f"{k}.cal.stop_rule.{reading}", rule)
    for corpus, st in cal["sets"].items():
        p = f"{k}.cal.{corpus}"
        put(out, p, st)
        put(out, f"{p}.circular", _layer_truth_against_reading(st["rows"]))
        if corpus in ("corpus", "confirmation"):   # Part 9's restored sample: the half added at the restoration
            put(out, f"{p}.added_half", _added_half(st["rows"], cal["downstream_every"],
                                                    st["truths"]["word"]["output_norm_on_alpha"]["margins"]))
        for name, red in st["redistribution"].items():
            put(out, f"{p}.redistribution.{name}", red)
        if "squared" in st:   # `l6.cal.corpus.squared.slope`: Part 8's truth against the layer truth
            put(out, f"{p}.squared", st["squared"])
        for truth, per in st["truths"].items():
            for reading, score in per.items():
                put(out, f"{p}.{truth}.{reading}", score)
    if cal.get("mean_ablation"):
        _mean_ablation(out, k, cal["mean_ablation"])


def _mean_ablation(out: dict, k: str, ma: dict) -> None:
    """Part 10 (model/mean_ablation/): `l6.ma.mean.fresh.output_norm_on_alpha.precision_lo` (a
    reading against the mean-ablation truth on `corpus`, `confirmation` or `fresh`; beside the
    bound printed, `_boot_lo`, `_mc_margin`, `_exact_lo`, `_verdict`, the same at the adjusted
    level with `_adjusted`, and `.spearman_word`, `.spearman_layer`: its rank agreement with the
    other truths), `l6.ma.mean.verdict.output_norm_on_alpha` (fit, not fit or undetermined),
    `l6.ma.mean.model_verdict.verdict` (Bonferroni over the readings); `l6.ma.word.*`: Part 9's
    word truth read the same way (its amendment); `l6.ma.pilot.rate`."""
    for truth in ("mean", "word"):
        if truth not in ma:
            continue
        p = f"{k}.ma.{truth}"
        for name in ("verdict", "verdict_adjusted", "model_verdict"):
            put(out, f"{p}.{name}", ma[truth][name])
        for corpus, per in ma[truth]["sets"].items():
            for reading, score in per.items():
                put(out, f"{p}.{corpus}.{reading}", score)
    if "pilot" in ma:
        put(out, f"{k}.ma.pilot", ma["pilot"])


def _layer_truth_against_reading(rows: dict, reading: str = "output_norm_on_alpha") -> dict:
    """How near the layer truth's sink share is to the reading's own on the same head (‖α f(x)‖
    on alpha's head): the median and 90th percentile of their absolute difference over the
    rows, read off results.json's rows (added after a reader found them nearly equal)."""
    truth = (rows.get("truths", {}).get("layer") or {}).get(reading)
    if truth is None:
        return {}
    pairs = [(a, b) for a, b in zip(rows["readings"][reading], truth) if a is not None and b is not None]
    diff = np.abs(np.array([a - b for a, b in pairs]))
    return {"median_abs": float(np.median(diff)), "p90_abs": float(np.quantile(diff, 0.9)), "n_rows": len(pairs)} if pairs else {}


def _added_half(rows: dict, every: int, margins: dict, reading: str = "output_norm_on_alpha", level: float = 0.95) -> dict:
    """Part 9's registered sample (every `every`-th sentence) as its second amendment restored it:
    the half the first amendment had left out (every `every`-th, not every 2 `every`-th), on its own,
    read off results.json's rows: the reading's recall against the word truth there, with its exact
    (Clopper-Pearson) lower bound (added after a reader found it failing alone). Its counts' margins
    are those of the whole sample's (`margins`, the reading's score against the word truth): the
    added half's rows are among them, so none of its rows is nearer turning than that."""
    from ..mean_ablation.bounds import clopper_pearson_lo

    truth = (rows.get("truths", {}).get("word") or {}).get("alpha_head")
    if truth is None:
        return {}
    pairs = [(x, y) for s, x, y in zip(rows["sentence"], rows["readings"][reading], truth)
             if y is not None and x is not None and s % (2 * every) == every]
    above = [x > 0.5 for x, y in pairs if y > 0.5]
    n, k = len(above), sum(above)
    near = margins["n_both"][0]
    return {"n_truth_above": n, "n_both": k, "recall": k / n if n else None,
            "recall_exact_lo": clopper_pearson_lo(k, n, (1 - level) / 2),
            "n_sentences": len({s for s in rows["sentence"] if s % (2 * every) == every}),
            "margins": {"n_truth_above": (margins["n_truth_above"][0], 1.0), "n_both": (near, 1.0),
                        "recall": (near, 1.0 / max(1, n)), "recall_exact_lo": (near, 1.0 / max(1, n))}}
