"""Attention rollout and its yardsticks (model/rollout.py), on rows worked out by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from conftest import SINGLE, TWO_AWAY, attending, hand_corpus, hand_sentence
from model import rollout
from model.corpus import displayed
from model.bootstrap import Resampler


def test_rollout_of_attention_to_oneself_is_the_identity():
    alpha = np.tile(np.eye(4), (3, 2, 1, 1))   # [L=3, nh=2, T=4, T]
    assert rollout.rollout(alpha) == pytest.approx(np.eye(4))


def test_rollout_on_paper():
    to_first = np.array([[1.0, 0.0], [1.0, 0.0]])            # every token attends to token 0
    A = np.array([[1.0, 0.0], [0.5, 0.5]])                   # 0.5 A + 0.5 I
    alpha = np.stack([to_first[None], to_first[None]])       # [L=2, nh=1, 2, 2]
    assert rollout.rollout(alpha) == pytest.approx(A @ A)    # [[1, 0], [0.75, 0.25]]
    assert rollout.rollout(alpha, skip=0) == pytest.approx(A)
    # Heads are averaged before the residual is added.
    two_heads = np.stack([to_first, to_first[:, ::-1]])[None]   # one head to token 0, one to token 1
    assert rollout.rollout(two_heads) == pytest.approx(np.array([[0.75, 0.25], [0.25, 0.75]]))


def test_normalized_entropy_bounds():
    assert rollout.normalized_entropy(np.full(4, 0.25)) == pytest.approx(1.0)
    assert rollout.normalized_entropy(np.array([1.0, 0, 0, 0])) == pytest.approx(0.0)
    assert rollout.normalized_entropy(np.array([0.5, 0.5, 0, 0])) == pytest.approx(0.5)   # ln 2 / ln 4


def test_half_on_one_word():
    assert rollout.half_on_one_entropy(2) == pytest.approx(1.0)                          # [.5, .5]
    assert rollout.half_on_one_entropy(3) == pytest.approx(1.5 * math.log(2) / math.log(3))   # [.5, .25, .25]
    assert rollout.half_on_one_entropy(50) < rollout.half_on_one_entropy(10) < 1.0


def test_spearman_on_paper_and_against_scipy():
    # ranks [0, 3, 1, 2] and [1, 0, 3, 2]: sum d^2 = 14, rho = 1 - 6 * 14 / (4 * 15) = -0.4
    assert rollout.spearman(np.array([0.1, 0.4, 0.2, 0.3]), np.array([0.2, 0.1, 0.4, 0.3])) == pytest.approx(-0.4)
    a = np.random.default_rng(0).random(9)
    assert rollout.spearman(a, a ** 3) == pytest.approx(1.0)
    assert rollout.spearman(a, -a) == pytest.approx(-1.0)
    b = np.random.default_rng(1).random(9)
    assert rollout.spearman(a, b) == pytest.approx(scipy_stats.spearmanr(a, b).statistic)


def test_rollout_stats_on_uniform_attention():
    """Two layers attending uniformly over [CLS] a b c [SEP]: A = 0.5 U + 0.5 I, and
    R = A A = 0.75 U + 0.25 I, so each word's row is 0.15 everywhere and 0.4 on itself."""
    alpha = np.full((2, 1, 5, 5), 0.2)
    corpus = hand_corpus(hand_sentence(["a", "b", "c"], [None, 0, 1, 2, None], alpha))
    alpha_rows = displayed(corpus, "alpha", np.zeros((2, 1), bool), 0.0)
    s = rollout.rollout_stats(corpus, alpha_rows, [0], Resampler(1, 50, 0, 0.95))
    full = -(4 * 0.15 * math.log(0.15) + 0.4 * math.log(0.4)) / math.log(5)
    assert s.n_rows == 3 and s.top_on_self == 3 and s.top_on_sink == 0
    assert s.median_entropy == pytest.approx(full) and s.entropies == pytest.approx([full] * 3)
    assert s.median_sink == pytest.approx(0.3)
    assert s.median_top_margin == pytest.approx(0.25)
    assert s.displayed_median_entropy == pytest.approx(1.0)      # the two other words share evenly
    assert s.one_clear_word_entropy == pytest.approx(1.0)        # a row of two is "half on one" and uniform at once
    assert s.chance_agreement == pytest.approx(0.5)


def test_rollout_stats_on_the_real_corpus(small_measured, small_study):
    test = small_study.halves["test"]
    s = small_measured.results.rollout
    shown = sum(len(small_measured.corpus.rows[i].shown) for i in test)
    assert s.n_rows == shown == len(s.entropies)
    assert 0 <= s.min_entropy <= s.median_entropy <= s.max_entropy <= 1
    assert s.displayed_median_entropy_lo <= s.displayed_median_entropy <= s.displayed_median_entropy_hi
    assert s.agrees_with_instrument_lo <= s.agrees_with_instrument <= s.agrees_with_instrument_hi
    assert -1 <= s.drop_layer_spearman <= 1 and 0 < s.chance_agreement < 1


def test_lazy_guesses_on_paper():
    # Displayed rollout rows of five words; words 0, 1, 3 are shown, 2 and 4 are punctuation.
    display = np.array([[0.0, 0.5, 0.1, 0.3, 0.1],
                        [0.2, 0.0, 0.1, 0.6, 0.1],
                        [0.3, 0.3, 0.0, 0.2, 0.2],
                        [0.1, 0.1, 0.7, 0.0, 0.1],
                        [0.2, 0.2, 0.2, 0.4, 0.0]])
    g = rollout.lazy_guesses(display, [0, 1, 3], [2, 4])
    assert g["last_punct"].tolist() == [4, 4, 4]
    # word 0 reads word 1's row without its own column: 3; word 1 reads word 3's: 2;
    # word 3 reads word 0's: 1.
    assert g["other_word"].tolist() == [3, 2, 1]
    # the mean of rows 0, 1, 3: [0.1, 0.2, 0.3, 0.3, 0.1]: 2 and 3 tie (first: 2); word 3 sees 2.
    assert g["sentence_mean"].tolist() == [2, 2, 2]
    assert rollout.lazy_guesses(display, [0, 1, 3], [])["last_punct"].tolist() == [-1, -1, -1]
    # The positional guesses: the word just after and just before, punctuation included;
    # none (-1) past either end of the sentence.
    assert g["next_word"].tolist() == [1, 2, 4] and g["previous_word"].tolist() == [-1, 0, 2]
    assert rollout.lazy_guesses(display, [1, 4], [])["next_word"].tolist() == [2, -1]


def test_the_best_guess_may_be_positional_and_the_sentence_wide_comparison_is_kept():
    """One layer, one head: words 0, 1, 2 put 0.7 on the next word, word 3 on the one before
    (0.3 on [CLS]). Rollout's row (0.5 alpha + 0.5 I) peaks where alpha does, so it names the
    instrument's top word in every row. The next word names it in 3 of 4 rows, the previous
    word in 1; another word's row in none (word 0 reads word 1's row, which peaks on 2, ...);
    the mean displayed row [0, .25, .5, .25] in 2 (words 1 and 3, whose top is word 2)."""
    corpus = hand_corpus(hand_sentence(["a", "b", "c", "d"], SINGLE, attending([1, 2, 3, 2])))
    alpha_rows = displayed(corpus, "alpha", np.zeros((1, 1), bool), 0.0)
    s = rollout.rollout_stats(corpus, alpha_rows, [0], Resampler(1, 50, 0, 0.95))
    assert s.agrees_with_instrument == 1.0
    assert (s.baseline_last_punct, s.baseline_other_word, s.baseline_sentence_mean) == (0.0, 0.0, 0.5)
    assert (s.baseline_next_word, s.baseline_previous_word) == (0.75, 0.25)
    assert s.best_baseline == "next_word" and s.word_specific == pytest.approx(0.25)
    assert s.best_sentence_baseline == "sentence_mean" and s.beyond_sentence_guesses == pytest.approx(0.5)
    assert s.instrument_top_adjacent == 1.0


def test_the_instrument_top_is_adjacent_only_when_it_is_a_neighbour():
    near = hand_sentence(["a", "b", "c", "d"], SINGLE, attending([1, 2, 3, 2]))
    far = hand_sentence(["a", "b", "c", "d"], SINGLE, attending(TWO_AWAY))     # 2, 3, 0, 1: never next door
    corpus = hand_corpus(near, far)
    alpha_rows = displayed(corpus, "alpha", np.zeros((1, 1), bool), 0.0)
    s = rollout.rollout_stats(corpus, alpha_rows, [1], Resampler(1, 50, 0, 0.95))
    assert s.instrument_top_adjacent == 0.0 and s.baseline_next_word == s.baseline_previous_word == 0.0
    both = rollout.rollout_stats(corpus, alpha_rows, [0, 1], Resampler(2, 50, 0, 0.95))
    assert both.instrument_top_adjacent == 0.5 and both.baseline_next_word == 3 / 8


def test_rows_alike_compares_two_rows_over_the_words_other_than_both():
    display = np.array([[0.0, 0.1, 0.2, 0.3, 0.4],
                        [0.4, 0.0, 0.3, 0.2, 0.1],
                        [0.1, 0.2, 0.0, 0.3, 0.4],
                        [0.1, 0.2, 0.3, 0.0, 0.4],
                        [0.1, 0.2, 0.3, 0.4, 0.0]])
    # words 0 and 1 over columns 2, 3, 4: [.2, .3, .4] vs [.3, .2, .1]: -1; 1 and 2 over 0, 3, 4:
    # [.4, .2, .1] vs [.1, .3, .4]: -1; 2 and 0 over 1, 3, 4: [.2, .3, .4] vs [.1, .3, .4]: +1.
    assert rollout.rows_alike(display, [0, 1, 2]) == pytest.approx([-1.0, -1.0, 1.0])
