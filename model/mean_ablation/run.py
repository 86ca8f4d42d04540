"""Part 10 on one model (docs/study.yml `mean_ablation`, `fresh_corpus`): the pieces Part 9's run
(model/calibration/sets.py) calls, since the mean-ablation truth is measured in the same passes
as Part 9's downstream truths.

- `settings`:  the threshold, the bars, the tails (the study's level and Bonferroni's over the
  readings scored) and the Monte Carlo margin's sigmas;
- `on_set`:    every reading on alpha's head scored against the mean-ablation truth on one set of
  rows, beside its rank agreement with the word and layer truths; and Part 9's word truth scored
  the same way (its amendment: the verdicts no seed decides);
- `pilot`:     the mean-ablation truth on every row of corpus.tsv's fit half, its share above half
  (the fresh corpus's size, model/fresh.py);
- `summary`:   the verdicts over the sets, the pilot, the registered prediction beside the result.

Not here: the truth's arithmetic (model/ground_truth.py), its runs (model/calibration/truths.py),
the bounds (bounds.py), one score (scores.py), the verdicts (verdicts.py).
"""
from __future__ import annotations

import functools

import numpy as np

from ..bootstrap import Resampler
from .scores import score
from .verdicts import model_verdict, reading_verdicts

# The readings held to the mean-ablation truth: those on alpha's head Part 9 scores on every
# corpus (value zeroing is Part 8's, on a sample of corpus.tsv only).
READINGS = ("alpha", "value_norm_on_alpha", "output_norm_on_alpha", "kobayashi2021", "alti")


def settings(study) -> dict:
    """What a score reads (scores.score): the badge's threshold, the criterion's bars, the lower
    tails (the study's level, and Bonferroni's over READINGS for the model-level verdict) and
    the Monte Carlo margin's sigmas."""
    cal, ma = study.calibration, study.calibration.mean_ablation
    tail = (1 - study.bootstrap.level) / 2
    return {"threshold": study.stop_rule.threshold, "bar": {"precision": cal.precision_lo, "recall": cal.recall_lo},
            "tails": {"": tail, "adjusted": tail / len(READINGS)}, "sigmas": ma.mc_sigmas}


@functools.lru_cache(maxsize=4)
def _counts(n: int, resamples: int, seed: int, level: float) -> np.ndarray:
    return Resampler(n, resamples, seed, level).counts.astype(float)   # [B, n], read as floats by every score


def counts_for(study):
    """n -> the verdicts' resamples' counts over n sentences (the study's seed, mean_ablation's
    resamples), drawn once per size."""
    b = study.bootstrap
    return lambda n: _counts(n, study.calibration.mean_ablation.resamples, b.seed, b.level)


def on_set(found: dict, truth_share: dict, where: np.ndarray, sentence: np.ndarray, study, rank: Resampler) -> dict:
    """truth -> reading -> score (scores.py) on the rows `where` selects: against the mean-ablation
    truth ("mean"), each beside its rank agreement with the word and layer truths where measured;
    and against Part 9's word truth ("word"), where it is measured (its amendment)."""
    s, counts = settings(study), counts_for(study)
    on = lambda name: truth_share[name]["alpha"][where]
    out = {}
    for name in ("mean", "word"):
        if name not in truth_share or np.isnan(on(name)).all():
            continue
        others = {o: on(o) for o in ("mean", "word", "layer") if o != name and o in truth_share}
        out[name] = {r: score(found[r][0][where], on(name), sentence[where], counts, s, others, rank)
                     for r in READINGS}
    return out


def pilot(ckpt, corpus, inputs, rows, sentences: list[int], means: list) -> dict:
    """The mean-ablation truth on alpha's head, every row of `sentences` (corpus.tsv's fit half):
    how many rows, how many with the truth above half, and their share (the fresh corpus's rate)."""
    from ..calibration.readings import on_alpha
    from ..calibration.truths import measure, share

    a, n = rows["alpha"], len(corpus.toks)
    truths = measure(ckpt, corpus, inputs, [set() for _ in range(n)], on_alpha(a, set(sentences), n), means, zero=False)
    keys = [k for k in zip(a.sentence.tolist(), a.word.tolist(), a.layer.tolist(), a.head.tolist()) if k[0] in set(sentences)]
    shares = np.array([share(truths.mean[k]) for k in keys])
    above = int((shares > 0.5).sum())
    return {"n_sentences": len(sentences), "n_rows": len(keys), "n_above": above, "rate": above / len(keys),
            "margins": {"n_above": (float(np.abs(shares - 0.5).min(initial=np.inf) / 0.5), 1.0)}}


def summary(sets: dict, pilot_: dict | None, registered: tuple[str, ...]) -> dict:
    """The verdicts over the sets measured (set name -> the `on_set` result), under the
    mean-ablation truth and, for Part 9's amendment, under the word truth on the corpora Part 9's
    criterion was `registered` on; the pilot."""
    out: dict = {}
    for name in ("mean", "word"):
        measured = {c: st[name] for c, st in sets.items() if name in st and (name == "mean" or c in registered)}
        if measured:
            out[name] = {"verdict": reading_verdicts(measured), "verdict_adjusted": reading_verdicts(measured, "_adjusted"),
                         "model_verdict": model_verdict(measured), "corpora": list(measured), "sets": measured}
    if pilot_ is not None:
        out["pilot"] = pilot_
    return out
