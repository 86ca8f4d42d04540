"""Checks that the measurement measures what it says, run on the corpus on every build.

- the oracle: the NumPy float64 forward pass re-runs every measurement;
- forcing every value norm to 1.0 must give the alpha lens back;
- forcing the [CLS] value norm to 0 must move the numbers;
- a deliberately wrong variant (mutants.py) run over the same rows, to show which
  checks catch it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from livenumbers import timing

from . import activations, calibration, instrument, mutants, picks, truth
from .instrument import LENSES
from .corpus import corpus_rows, displayed, positional_heads
from .measure import Measured
from .weights import Checkpoint


@dataclass
class SelfChecks:
    unit_norms_max_diff: float        # lens function with every norm 1.0 vs alpha folded apart
    unit_norms_agree: bool            # ... within AGREE
    unit_norms_tolerance: float       # AGREE, published with the verdict it decides
    cls_zero_median_sink: float       # value_norm lens with ||v_CLS|| = 0, held-out half
    cls_zero_moves: bool
    cls_zero_rows_above: int          # ... the stop rule's count: every displayed row above its threshold
    oracle_sentences: int             # how many sentences the oracle re-ran
    oracle_max_abs_alpha: float       # reference vs oracle
    oracle_max_abs_hidden: float
    oracle_max_abs_sink: float        # on the displayed rows' sink shares, every lens
    oracle_same_heads: bool           # on every row whose head choice is not within the margin floor of a tie
    oracle_near_tie_rows: int         # ... those rows (their pick is the reference's rounding)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


# The lens renormalizes each token row by its sum, and alpha's rows (a float64 softmax) sum
# to 1 only to float64 rounding (about 1e-16 a weight): the two paths agree to that, and no
# better. The tolerance sits far above it and far below any real difference of two paths.
AGREE = 1e-12


def fold_by_groups(alpha: np.ndarray, word_ids: list[int | None]) -> np.ndarray:
    """alpha [L, nh, T, T] -> word rows [L, nh, n_words, K], written apart from the
    instrument's matrices: a word's tokens are one contiguous run, so its row is the
    mean of that run of rows and its column the sum of that run of columns (reduceat);
    [CLS] and [SEP] are runs of one."""
    runs = [0] + [t for t in range(1, len(word_ids)) if word_ids[t] != word_ids[t - 1]]
    assert len(runs) == len(set(word_ids[1:-1])) + 2, "a word's tokens are not contiguous"
    sizes = np.diff([*runs, len(word_ids)])
    rows = np.add.reduceat(alpha, runs, axis=2) / sizes[:, None]            # [L, nh, K, T]
    return np.add.reduceat(rows, runs, axis=3)[:, :, 1:-1]                  # the words' rows, [L, nh, n_words, K]


def self_checks(ckpt: Checkpoint, m: Measured, study, oracle_sentences: list[int],
                truth_oracle_every: int = 1) -> SelfChecks:
    corpus, rows, halves = m.corpus, m.rows, study.halves
    # 1. The lens with every norm forced to 1.0 must be alpha itself, folded to words by
    #    an independent path (runs of the raw probabilities, no renormalization).
    unit_diff = max(
        float(np.abs(corpus.word_rows(i, "value_norm", np.ones_like(a.value_norm))
                     - fold_by_groups(a.alpha, corpus.toks[i].word_ids)).max())
        for i, a in enumerate(corpus.acts)
    )

    # 2. [CLS]'s value norm forced to 0: the numbers must move.
    def zero_cls(a):
        n = a.value_norm.copy()
        n[:, :, 0] = 0.0
        return {"value_norm": n}

    zeroed = corpus_rows(corpus.toks, corpus.acts, zero_cls)
    excluded = positional_heads(zeroed, "value_norm", study.positional_threshold, halves["fit"])
    test = rows["alpha"].where(halves["test"])
    zero_rows = displayed(zeroed, "value_norm", excluded, study.tie_tolerance)
    zero_median = float(np.median(zero_rows.sink[test]))
    zero_above = int((zero_rows.sink > study.stop_rule.threshold).sum())
    zero_margin = picks.count_margin(zero_rows.sink, study.stop_rule.threshold,
                                     zero_rows.alternative(zeroed, "value_norm").sink, zero_rows.margin)
    medians = [float(np.median(rows[lens].sink[test])) for lens in ("alpha", "value_norm")]

    # 3. The oracle re-runs everything from its own forward pass.
    toks = [corpus.toks[i] for i in oracle_sentences]
    if m.truth is not None:   # the ground truth's oracle, in the same pass (it reads the layer inputs)
        each, agreement = truth.oracle_check(ckpt, m.truth, oracle_sentences, truth_oracle_every)
        o_acts = activations.from_oracle(ckpt, [t.ids for t in toks], each=each)
        with timing.stage("oracle"):   # its last batch: timed with the others
            m.results.ground_truth.agreement = agreement()
        if m.results.calibration:   # Part 9's rows at the numerical floor, by this agreement
            calibration.at_floor(m.results.calibration, m.results.ground_truth.agreement.max_abs_effect,
                                 study.calibration.floor_times)
    else:
        o_acts = activations.from_oracle(ckpt, [t.ids for t in toks])
    o_corpus = corpus_rows(toks, o_acts)
    picked = np.isin(rows["alpha"].sentence, oracle_sentences)
    floor = study.picks.margin_floor
    sink_diff, same, near, classified, inside = 0.0, True, 0, picks.NO_MARGIN, picks.NO_MARGIN
    for lens in LENSES:
        o = displayed(o_corpus, lens, m.excluded[lens], study.tie_tolerance)   # the same positional heads
        sink_diff = max(sink_diff, float(np.abs(o.sink - rows[lens].sink[picked]).max()))
        # A pick nearer a tie than the margin floor is the reference's rounding, which the
        # oracle may decide the other way: the verdict is that the oracle opens
        # another head only on such rows, and how far inside the floor they are is its margin.
        margin = rows[lens].margin[picked]
        near += int((margin < floor).sum())
        classified = min(classified, picks.threshold_margin(margin, floor, scale=1.0))   # absolute: margins are relative
        differs = (o.layer != rows[lens].layer[picked]) | (o.head != rows[lens].head[picked])
        same &= bool((margin[differs] < floor).all())
        inside = min(inside, float((floor - margin[differs]).min(initial=picks.NO_MARGIN)))
    return SelfChecks(
        unit_norms_max_diff=unit_diff,
        unit_norms_agree=unit_diff < AGREE,
        unit_norms_tolerance=AGREE,
        cls_zero_median_sink=zero_median,
        cls_zero_moves=zero_median not in medians,
        cls_zero_rows_above=zero_above,
        oracle_sentences=len(oracle_sentences),
        oracle_max_abs_alpha=max(float(np.abs(corpus.acts[i].alpha - o.alpha).max()) for i, o in zip(oracle_sentences, o_acts)),
        oracle_max_abs_hidden=max(float(np.abs(corpus.acts[i].hidden - o.hidden).max()) for i, o in zip(oracle_sentences, o_acts)),
        oracle_max_abs_sink=sink_diff,
        oracle_same_heads=same,
        oracle_near_tie_rows=near,
        margins={"cls_zero_rows_above": (zero_margin, 1.0),
                 "oracle_near_tie_rows": (classified, 1.0), "oracle_same_heads": (abs(inside), 1.0),
                 "unit_norms_agree": (picks.threshold_margin([unit_diff], AGREE), 1.0)},
    )


def wrong_aggregation(m: Measured) -> mutants.WrongAggregation:
    """The mutant on every displayed alpha row, on the head the instrument opens."""
    a = m.rows["alpha"]
    heads: dict[int, dict[int, tuple[int, int]]] = {}
    for s, w, l, h in zip(a.sentence, a.word, a.layer, a.head):
        heads.setdefault(int(s), {})[int(w)] = (int(l), int(h))
    out = mutants.wrong_aggregation([
        mutants.MutantInput(i, tok.word_ids, tok.words, act.alpha, heads.get(i, {}))
        for i, (tok, act) in enumerate(zip(m.corpus.toks, m.corpus.acts))
    ])
    # The unit-norm check as this module runs it on the instrument (against the loops of
    # `fold_by_groups`), run on the mutant instead: a check written apart catches it.
    out.independent_fold_max_diff = max(
        float(np.abs(instrument.word_rows(act.alpha, mutants.wrong_word_map(tok.word_ids))
                     - fold_by_groups(act.alpha, tok.word_ids)).max())
        for tok, act in zip(m.corpus.toks, m.corpus.acts)
    )
    return out


@timing.stage("checks")
def run(ckpt: Checkpoint, m: Measured, study) -> None:
    """Fill in the checks and the mutant's run on `m.results`. The oracle re-runs every
    n-th sentence, n = the model's `oracle_every` in study.yml (1 for all of them)."""
    n = next((spec.oracle_every for spec in study.models if spec.key == m.results.key), 1)
    m.results.checks = self_checks(ckpt, m, study, list(range(0, len(m.corpus.toks), n)),
                                   study.truth_oracle_every)
    m.results.mutant = {"wrong_agg": wrong_aggregation(m)}
