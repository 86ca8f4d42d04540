"""Part 8 on one model (`measure`): the PyTorch reference on every sentence, its layer inputs
read back from disk, in batches of sentences in corpus order on the runner model/cluster.py
hands out (each sentence's measures depend on that sentence alone); then the displayed
rows' ground truth and its statistics.

Not here: what a sentence is asked and how its answers are folded (sentence.py), the rows'
columns (rows.py), the statistics (summary.py).
"""
from __future__ import annotations

import functools

import numpy as np

from livenumbers import timing

from ..bootstrap import Resampler
from ..corpus import Corpus, Displayed
from .records import TruthRun, no_nan
from .rows import row_table
from .sentence import asks, bound_ratios, fold
from .summary import summarize


def measure(ckpt, corpus: Corpus, rows: dict[str, Displayed], inputs, study, key: str, excluded: dict[str, np.ndarray],
            resampler: Resampler) -> TruthRun:
    """The reference over the corpus, and its statistics (`TruthRun.results`)."""
    ablation, zeroing = study.ablation_sample(key), study.zeroing_sample(key)
    alt = {lens: d.alternative(corpus, lens) for lens, d in rows.items()}
    t = run_reference(ckpt, corpus, rows, inputs, ablation, zeroing, alt)
    table = t.table = row_table(corpus, rows, t)
    t.results = no_nan(summarize(corpus, rows, t, table, study.halves["test"], resampler, study.stop_rule.threshold,
                                 excluded, {"ablation": study.ablation_every.get(key, 1),
                                            "zeroing": study.value_zeroing_every.get(key, 1)}, study.tie_tolerance,
                                 alt, row_table(corpus, alt, t)))
    return t


# -- running the reference ---------------------------------------------------------------------


def run_reference(ckpt, corpus: Corpus, rows: dict[str, Displayed], inputs, ablation: list[int],
                  zeroing: list[int], alt: dict[str, Displayed] | None = None) -> TruthRun:
    """The PyTorch reference on every sentence, its layer inputs read back from `inputs`."""
    from .. import ground_truth as gt

    from .. import cluster

    with timing.stage("ground truth"):
        L = ckpt.config.n_layer
        todo = asks(corpus, rows, set(ablation), set(zeroing), alt)
        runner = cluster.current()
        fn = _sentences
        if isinstance(runner, cluster.InProcess):   # one set of layers for the threads
            fn = functools.partial(_sentences, weights=[gt.layer_weights(ckpt, l) for l in range(L)])
        # Each sentence's measures depend on that sentence alone: batches of them, in corpus order.
        batches = ([(ckpt.name, inputs.read(i), corpus.acts[i].alpha, todo[i])
                    for i in range(at, min(at + SENTENCES_PER_TASK, len(todo)))]
                   for at in range(0, len(todo), SENTENCES_PER_TASK))
        n_batches = -(-len(todo) // SENTENCES_PER_TASK)
        out = [truth for part in timing.counted(runner.map(fn, batches), n_batches) for truth in part]
        folded = [fold(truth, ask, wm) for truth, ask, wm in zip(out, todo, corpus.wms)]
        ratios = [bound_ratios(a.alpha, a.output_norm, wm) for a, wm in zip(corpus.acts, corpus.wms)]
    return TruthRun(todo, folded, ratios, ablation, zeroing)


SENTENCES_PER_TASK = 16


def _sentences(batch: list[tuple], weights: list | None = None) -> list:
    """One task: each sentence's measures, every layer it needs (`weights`: the model's
    layers; on a worker, its own, built once)."""
    from .. import cluster
    from .. import ground_truth as gt

    out = []
    with cluster.one_thread():
        for name, x, alpha, ask in batch:
            weights = weights or cluster.layer_weights(name)
            L = len(weights)
            truth = gt.empty(ask, L, x.shape[1])
            for l in gt.layers_needed(ask, L):
                gt.layer(weights[l], l, x[l], alpha[l], ask, truth)
            out.append(truth)
    return out
