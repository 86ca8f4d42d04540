"""The oracle's check of Part 8: the oracle's measures (model/oracle_ground_truth.py) run on
the oracle's own forward pass, on each of its batches as it ends, on every n-th sentence
(study.yml `truth_oracle_every`), and compared with the reference's (`Agreement`).

Not here: the reference's run (run.py), the oracle's forward pass (model/oracle.py).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from threadpoolctl import threadpool_limits

from livenumbers import timing

from .. import instrument
from .records import Agreement, TruthRun
from .sentence import ablation_share, bound_ratios, normalized


def oracle_check(ckpt, t: TruthRun, sentences: list[int], every: int = 1) -> tuple[Callable, Callable[[], Agreement]]:
    """(each, done): `each(k, o)` takes the k-th of `sentences`' oracle output (the hook of
    activations.from_oracle); the oracle's measures run on each of the oracle's batches as
    it ends, layer by layer (one layer's float64 weights at a time), on the arrays the batch
    holds anyway, on every `every`-th sentence of the corpus among them (study.yml
    `truth_oracle_every`); `done()` runs the last and compares everything with the reference."""
    from .. import oracle
    from .. import oracle_ground_truth as ogt
    from ..ground_truth import empty, layers_needed

    L = ckpt.config.n_layer
    diffs = {k: 0.0 for k in ("share", "effect", "kobayashi2021", "alti", "value_zeroing", "ratio")}
    zeroed: list[int] = []
    ablated: list[int] = []   # the sentences where ablation shares were compared (the ablation's sample)
    checked: list[int] = []
    batch: list[tuple[int, Any]] = []

    def compare(i: int, o, truth) -> None:
        ask, ref = t.asks[i], t.folded[i]
        for e_ref, e in zip(ref.effects.values(), truth.effects):
            diffs["share"] = max(diffs["share"], abs(ablation_share(e_ref) - ablation_share(e)))
            diffs["effect"] = max(diffs["effect"], float(np.max(np.abs(e_ref - e))))
        for name, m in (("kobayashi2021", truth.kobayashi), ("alti", truth.alti)):
            diffs[name] = max(diffs[name], float(np.abs(normalized(m) - ref.fixes[name]).max()))
        wm = instrument.word_map(_word_ids(ask))
        for (w, l), z in zip(ask.zeroing, truth.zeroing):
            diffs["value_zeroing"] = max(diffs["value_zeroing"],
                                         float(np.abs(normalized(z).mean(axis=0) @ wm.cols - ref.zeroing[(w, l)]).max()))
        if ask.zeroing:
            zeroed.append(i)
        if ask.heads:
            ablated.append(i)
        ratio = bound_ratios(np.stack(o.alpha), np.stack(o.f_norm), wm)
        diffs["ratio"] = max(diffs["ratio"], float(np.abs(ratio - t.ratios[i]).max()))

    def flush() -> None:
        # One BLAS thread: small products, on a shared machine a second thread mostly waits
        # (the oracle's measures of a short corpus ran 50x slower with two).
        with timing.stage("ground truth"), threadpool_limits(limits=1, user_api="blas"):
            mine = [(i, o) for i, o in batch if i % every == 0]
            out = {i: empty(t.asks[i], L, o.alpha[0].shape[-1]) for i, o in mine}
            for l in range(L) if mine else ():
                w = ogt.layer_weights(ckpt, l)
                for i, o in mine:
                    if l in layers_needed(t.asks[i], L):
                        ogt.layer(w, l, o, t.asks[i], out[i])
            for i, o in mine:
                compare(i, o, out[i])
            checked.extend(i for i, _ in mine)
        batch.clear()

    def each(k: int, o) -> None:
        batch.append((sentences[k], o))
        if sum(len(o.hidden) for _, o in batch) >= oracle.BATCH_TOKENS:   # the oracle's own batch ends here
            flush()

    def done() -> Agreement:
        flush()
        return Agreement(len(checked), len(ablated), len(zeroed), diffs["share"], diffs["effect"], diffs["kobayashi2021"],
                         diffs["alti"], diffs["value_zeroing"], diffs["ratio"])

    return each, done


def _word_ids(ask) -> list[int | None]:
    """The sentence's word ids, from the ask's token lists ([CLS] and [SEP] at the ends)."""
    T = 2 + sum(len(t) for t in ask.tokens)
    ids: list[int | None] = [None] * T
    for w, toks in enumerate(ask.tokens):
        for t in toks:
            ids[t] = w
    return ids
