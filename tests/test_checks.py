"""The self-checks published with the results (model/checks.py): each holds on the real
model, and each fails when what it guards is broken."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from model import activations, checks, instrument, mutants

WORD_IDS = [None, 0, 0, 1, 2, 2, 2, 3, None]    # words of 2, 1, 3 and 1 subwords


def test_fold_by_groups_on_paper():
    alpha = np.full((1, 1, 5, 5), 0.2)                 # [CLS] un ##real cat [SEP], uniform
    folded = checks.fold_by_groups(alpha, [None, 0, 0, 1, None])
    assert folded[0, 0].tolist() == pytest.approx(np.array([[0.2, 0.4, 0.2, 0.2], [0.2, 0.4, 0.2, 0.2]]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fold_by_groups_agrees_with_the_instruments_matrices(seed):
    """Two independent writings of mean-over-rows, sum-over-columns, on random attention."""
    rng = np.random.default_rng(seed)
    alpha = rng.random((2, 3, 9, 9))
    alpha /= alpha.sum(-1, keepdims=True)
    right = instrument.word_rows(alpha, instrument.word_map(WORD_IDS))
    np.testing.assert_allclose(checks.fold_by_groups(alpha, WORD_IDS), right, atol=1e-15)
    wrong = instrument.word_rows(alpha, mutants.wrong_word_map(WORD_IDS))
    assert np.abs(checks.fold_by_groups(alpha, WORD_IDS) - wrong).max() > 0.1


def test_the_self_checks_hold_on_the_real_model(small_measured, small_study):
    c = small_measured.results.checks
    assert c.unit_norms_agree and c.unit_norms_max_diff < checks.AGREE
    assert c.cls_zero_moves and c.cls_zero_median_sink < small_measured.results.summary["value_norm"].stats.median_sink
    registered = next(v for v in small_measured.results.verdicts if v.lens == "value_norm")
    assert 0 <= c.cls_zero_rows_above < registered.rows_above    # with no [CLS] left, fewer rows keep half
    every = next(spec.oracle_every for spec in small_study.models if spec.key == "l6")
    assert c.oracle_sentences == len(range(0, len(small_study.sentences), every))   # study.yml's sample
    assert max(c.oracle_max_abs_alpha, c.oracle_max_abs_hidden, c.oracle_max_abs_sink) < 1e-5
    assert c.oracle_same_heads


def apart(m, **changes):
    """The session's measurement with its part 8 results copied: self_checks writes the
    oracle's agreement into them, and the other tests read the session's own."""
    results = dataclasses.replace(m.results, ground_truth=copy.copy(m.results.ground_truth))
    return dataclasses.replace(m, results=results, **changes)


def test_the_unit_norm_check_catches_a_wrong_fold(l6, small_measured, small_study):
    """Unlike the mutant's own check (mutants.py), its other side is folded apart."""
    corpus = small_measured.corpus
    wrong = dataclasses.replace(corpus, wms=[mutants.wrong_word_map(t.word_ids) for t in corpus.toks])
    c = checks.self_checks(l6, apart(small_measured, corpus=wrong), small_study, [0])
    assert not c.unit_norms_agree and c.unit_norms_max_diff > 0.1


def test_the_oracle_check_catches_a_forward_pass_that_differs(l6, small_measured, small_study, monkeypatch):
    real = activations.from_oracle

    def off(ckpt, batch, **kw):
        out = real(ckpt, batch, **kw)
        for a in out:
            a.alpha = a.alpha[:, ::-1]   # heads in reverse order
        return out

    monkeypatch.setattr(activations, "from_oracle", off)
    c = checks.self_checks(l6, apart(small_measured), small_study, [0, 1])
    assert c.oracle_sentences == 2
    assert c.oracle_max_abs_alpha > 0.1 and c.oracle_max_abs_sink > 0.01 and not c.oracle_same_heads
