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
    wrong = instrument.word_rows(A, mutants.wrong_word_map(WORD_IDS))
    for w in (0, 1):
        np.testing.assert_allclose(mutants.wrong_row_loop(A, WORD_IDS, w), wrong[w], atol=1e-15)
    assert wrong[1].sum() > 1.1  # the invariant the definition implies (rows sum to 1) catches it


def test_invisible_without_subwords():
    """With one token per word the two folds coincide: a corpus of short words hides the slip."""
    ids = [None, 0, 1, 2, None]
    rng = np.random.default_rng(1)
    A = rng.random((5, 5))
    A /= A.sum(axis=-1, keepdims=True)
    right = instrument.word_rows(A, instrument.word_map(ids))
    wrong = instrument.word_rows(A, mutants.wrong_word_map(ids))
    np.testing.assert_array_equal(right, wrong)


def test_wrong_aggregation_summary_by_hand():
    sentence = mutants.MutantInput(index=3, word_ids=WORD_IDS, words=["a", "b"], alpha=UNIFORM[None, None],
                                   heads={0: (0, 0), 1: (0, 0)})
    s = mutants.wrong_aggregation([sentence])
    assert (s.n_rows, s.n_multi_subword, s.rows_differ, s.rows_differ_single) == (2, 1, 1, 0)
    assert s.max_abs_sink_diff == pytest.approx(0.4)
    assert s.max_wrong_sink == pytest.approx(0.8)
    assert s.max_row_sum_error == pytest.approx(0.6)
    assert s.rows_bad_sum == 2
    assert s.max_right_row_sum_error < 1e-15 and s.right_rows_sum_to_one
    assert s.same_idea_max_diff < 1e-15 and s.same_idea_agrees
    assert s.unit_norms_max_diff == 0.0
    assert [(r.sentence, r.word, r.n_subwords) for r in s.rows] == [(3, "a", 1), (3, "b", 2)]
    assert [r.sink_share for r in s.rows] == pytest.approx([0.4, 0.4])
    assert [r.wrong_sink_share for r in s.rows] == pytest.approx([0.4, 0.8])
    assert [r.wrong_row_sum for r in s.rows] == pytest.approx([0.8, 1.6])


def test_the_mutant_is_read_on_the_head_the_instrument_opens():
    """Two heads: the second attends only to [SEP]; the summary must follow `heads`."""
    alpha = np.stack([UNIFORM, np.tile([0, 0, 0, 0, 1.0], (5, 1))])[None]   # [L=1, nh=2, T, T]
    on_second = mutants.MutantInput(0, WORD_IDS, ["a", "b"], alpha, {0: (0, 1), 1: (0, 1)})
    s = mutants.wrong_aggregation([on_second])
    assert [r.sink_share for r in s.rows] == pytest.approx([1.0, 1.0])
    assert [r.wrong_sink_share for r in s.rows] == pytest.approx([1.0, 2.0])   # "b" sums its two rows


def test_the_mutant_on_the_real_corpus(small_measured):
    """On real rows it is caught by the row sums and the several-subword rows only."""
    s = small_measured.results.mutant["wrong_agg"]
    assert s.n_rows == len(small_measured.rows["alpha"].sentence)
    assert s.n_multi_subword > 0 and s.rows_differ == s.n_multi_subword and s.rows_differ_single == 0
    assert s.same_idea_agrees and s.right_rows_sum_to_one and s.unit_norms_max_diff == 0.0
    assert s.rows_bad_sum > 0 and s.max_row_sum_error > 0.1
