"""Checks that the measurement measures what it says, run on the corpus on every build.

- the oracle: the NumPy float64 forward pass re-runs every measurement;
- forcing every value norm to 1.0 must give the alpha lens back;
- forcing the [CLS] value norm to 0 must move the numbers;
- a deliberately wrong variant (mutants.py) run over the same rows, to show which
  checks catch it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import activations, instrument, mutants
from .instrument import LENSES
from .measure import Measured, corpus_rows, displayed_all
from .weights import Checkpoint


@dataclass
class SelfChecks:
    unit_norms_max_diff: float        # value_norm lens with every norm 1.0 vs alpha: must be 0.0
    unit_norms_identical: bool
    cls_zero_median_sink: float       # value_norm lens with ||v_CLS|| = 0
    cls_zero_moves: bool
    oracle_max_abs_alpha: float       # reference vs oracle, whole corpus
    oracle_max_abs_hidden: float
    oracle_max_abs_sink: float        # on the displayed rows' sink shares, every lens
    oracle_same_heads: bool


def self_checks(ckpt: Checkpoint, m: Measured, threshold: float) -> SelfChecks:
    corpus, rows = m.corpus, m.rows
    # 1. Every value norm forced to 1.0: the value_norm lens must be alpha, bit for bit.
    unit_diff = 0.0
    for i, a in enumerate(corpus.acts):
        unit = corpus.word_rows(i, "value_norm", np.ones_like(a.value_norm))
        unit_diff = max(unit_diff, float(np.abs(unit - corpus.word_rows(i, "alpha")).max()))

    # 2. [CLS]'s value norm forced to 0: the numbers must move.
    def zero_cls(a):
        n = a.value_norm.copy()
        n[:, :, 0] = 0.0
        return {"value_norm": n}

    zeroed = corpus_rows(corpus.toks, corpus.acts, zero_cls)
    zero_median = float(np.median([r.sink_share for r in displayed_all(zeroed, threshold, ("value_norm",))[0]["value_norm"]]))
    alpha_median = float(np.median([r.sink_share for r in rows["alpha"]]))
    value_median = float(np.median([r.sink_share for r in rows["value_norm"]]))

    # 3. The oracle re-runs everything from its own forward pass.
    o_acts = activations.from_oracle(ckpt, [t.ids for t in corpus.toks])
    o_rows, _ = displayed_all(corpus_rows(corpus.toks, o_acts), threshold)
    pairs = [(a, b) for lens in LENSES for a, b in zip(rows[lens], o_rows[lens])]
    return SelfChecks(
        unit_norms_max_diff=unit_diff,
        unit_norms_identical=unit_diff == 0.0,
        cls_zero_median_sink=zero_median,
        cls_zero_moves=zero_median not in (alpha_median, value_median),
        oracle_max_abs_alpha=max(float(np.abs(a.alpha - o.alpha).max()) for a, o in zip(corpus.acts, o_acts)),
        oracle_max_abs_hidden=max(float(np.abs(a.hidden - o.hidden).max()) for a, o in zip(corpus.acts, o_acts)),
        oracle_max_abs_sink=max(abs(a.sink_share - b.sink_share) for a, b in pairs),
        oracle_same_heads=all((a.layer, a.head) == (b.layer, b.head) for a, b in pairs),
    )


def wrong_aggregation(m: Measured) -> mutants.WrongAggregation:
    """The mutant on every displayed alpha row, on the head the instrument opens."""
    heads: dict[int, dict[int, tuple[int, int]]] = {}
    for r in m.rows["alpha"]:
        heads.setdefault(r.sentence, {})[r.word_index] = (r.layer, r.head)
    return mutants.wrong_aggregation([
        mutants.MutantInput(i, tok.word_ids, tok.words, a.alpha, heads.get(i, {}))
        for i, (tok, a) in enumerate(zip(m.corpus.toks, m.corpus.acts))
    ])


def run(ckpt: Checkpoint, m: Measured, threshold: float) -> None:
    """Fill in the checks and the mutant's run on `m.results`."""
    m.results.checks = self_checks(ckpt, m, threshold)
    m.results.mutant = {"wrong_agg": wrong_aggregation(m)}
