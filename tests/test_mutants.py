"""The wrong-aggregation mutant on a sentence small enough to work out by hand.

Tokens: [CLS] a b1 b2 [SEP] (word ids None 0 1 1 None): word "a" is one token, word
"b" two subwords. Every token attends uniformly, 0.2 to each of the five tokens.

The instrument (mean over query subwords, sum over key subwords), columns
[CLS], a, b, [SEP]:
    a: 0.2 0.2 0.4 0.2      b: 0.2 0.2 0.4 0.2      (each sums to 1; sink share 0.4)
The mutant (sum over query subwords, mean over key subwords):
    a: 0.2 0.2 0.2 0.2  (sums to 0.8; sink share 0.4, unchanged)
    b: 0.4 0.4 0.4 0.4  (sums to 1.6; sink share 0.8, doubled)
"""
from __future__ import annotations

import numpy as np
import pytest

from model import instrument, mutants

WORD_IDS = [None, 0, 1, 1, None]
UNIFORM = np.full((5, 5), 0.2)


def test_instrument_by_hand():
    rows = instrument.word_rows(UNIFORM, instrument.word_map(WORD_IDS))
    np.testing.assert_allclose(rows, [[0.2, 0.2, 0.4, 0.2], [0.2, 0.2, 0.4, 0.2]])


def test_mutant_by_hand():
    wm = mutants.wrong_word_map(WORD_IDS)
    rows = instrument.word_rows(UNIFORM, wm)
    np.testing.assert_allclose(rows, [[0.2, 0.2, 0.2, 0.2], [0.4, 0.4, 0.4, 0.4]])
    np.testing.assert_allclose(rows.sum(axis=-1), [0.8, 1.6])
    np.testing.assert_allclose(instrument.sink_share(rows, wm), [0.4, 0.8])


def test_same_wrong_idea_agrees_with_itself():
    """The loop rewrite is no check at all: it shares the mutant's mistake."""
    rng = np.random.default_rng(0)
    A = rng.random((5, 5))
    A /= A.sum(axis=-1, keepdims=True)
    loop = mutants.wrong_rows_loop(A, WORD_IDS)
    np.testing.assert_allclose(loop, instrument.word_rows(A, mutants.wrong_word_map(WORD_IDS)), atol=1e-15)
    assert not np.allclose(loop.sum(axis=-1), 1.0)  # the invariant the definition implies catches it


def test_invisible_without_subwords():
    """With one token per word the two folds coincide: a corpus of short words hides the slip."""
    ids = [None, 0, 1, 2, None]
    rng = np.random.default_rng(1)
    A = rng.random((5, 5))
    A /= A.sum(axis=-1, keepdims=True)
    right = instrument.word_rows(A, instrument.word_map(ids))
    wrong = instrument.word_rows(A, mutants.wrong_word_map(ids))
    np.testing.assert_array_equal(right, wrong)


class _Tok:
    def __init__(self, word_ids, words):
        self.word_ids, self.words = word_ids, words


class _Sentence:
    def __init__(self, alpha):
        self.index = 0
        self.tok = _Tok(WORD_IDS, ["a", "b"])
        self.wm = instrument.word_map(WORD_IDS)
        self.rows = {"alpha": instrument.word_rows(alpha, self.wm)}
        self.shown = [0, 1]


class _Row:
    def __init__(self, w):
        self.sentence, self.word_index, self.lens, self.layer, self.head = 0, w, "alpha", 0, 0


def test_wrong_aggregation_summary_by_hand():
    alpha = UNIFORM[None, None]  # [L=1, nh=1, T, T]
    s = mutants.wrong_aggregation([_Sentence(alpha)], [alpha], [_Row(0), _Row(1)])
    assert (s.n_rows, s.n_multi_subword, s.rows_differ, s.rows_differ_single) == (2, 1, 1, 0)
    assert s.max_abs_sink_diff == pytest.approx(0.4)
    assert s.max_wrong_sink == pytest.approx(0.8)
    assert s.max_row_sum_error == pytest.approx(0.6)
    assert s.rows_bad_sum == 2
    assert s.max_right_row_sum_error < 1e-15
    assert s.same_idea_max_diff < 1e-15
    assert s.unit_norms_max_diff == 0.0
    assert s.same_idea_agrees and s.right_rows_sum_to_one
    assert [r.wrong_row_sum for r in s.rows] == pytest.approx([0.8, 1.6])
