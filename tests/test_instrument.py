"""Each definition of the instrument pinned on hand-made tensors, checkable on paper."""
import numpy as np
import pytest

from model import instrument

# [CLS] un ##real cat [SEP]: word 0 = "unreal" (two subwords), word 1 = "cat"
WORD_IDS = [None, 0, 0, 1, None]


def test_word_map_mean_rows_sum_columns():
    wm = instrument.word_map(WORD_IDS)
    assert wm.n_words == 2
    assert wm.rows.tolist() == [[0, 0.5, 0.5, 0, 0], [0, 0, 0, 1, 0]]
    # columns: [CLS], unreal, cat, [SEP]
    assert wm.cols.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]


def test_word_rows_on_paper():
    wm = instrument.word_map(WORD_IDS)
    tokens = np.array([
        [1.0, 0.0, 0.0, 0.0, 0.0],
        [0.4, 0.1, 0.1, 0.2, 0.2],   # "un"
        [0.2, 0.3, 0.1, 0.2, 0.2],   # "##real"
        [0.5, 0.1, 0.1, 0.1, 0.2],   # "cat"
        [0.0, 0.0, 0.0, 0.0, 1.0],
    ])
    rows = instrument.word_rows(tokens, wm)
    # "unreal" = mean of its two rows, columns summed: [CLS] .3, unreal (.1+.1+.3+.1)/2 = .3, cat .2, [SEP] .2
    assert rows[0] == pytest.approx([0.3, 0.3, 0.2, 0.2])
    assert rows[1] == pytest.approx([0.5, 0.2, 0.1, 0.2])
    assert rows.sum(axis=-1) == pytest.approx([1.0, 1.0])
    assert instrument.sink_share(rows, wm) == pytest.approx([0.5, 0.7])
    shown, mass = instrument.displayed_rows(rows, wm)
    # the word's own column is dropped, the rest renormalized; mass is what was left
    assert mass == pytest.approx([0.2, 0.2])
    assert shown[0] == pytest.approx([0.0, 1.0])
    assert shown[1] == pytest.approx([1.0, 0.0])


def test_displayed_row_with_no_content_mass_is_empty_not_nan():
    wm = instrument.word_map([None, 0, 1, None])
    rows = np.array([[0.6, 0.0, 0.0, 0.4], [0.5, 0.0, 0.5, 0.0]])
    shown, mass = instrument.displayed_rows(rows, wm)
    assert mass.tolist() == [0.0, 0.0]
    assert not np.isnan(shown).any() and shown.sum() == 0.0


def test_lens_rows_weigh_by_norms_and_renormalize():
    alpha = np.array([[0.5, 0.25, 0.25]])
    norms = np.array([0.0, 1.0, 3.0])
    assert instrument.lens_rows(alpha, norms)[0] == pytest.approx([0.0, 0.25, 0.75])
    # unit norms give alpha back, bit for bit, through the same arithmetic
    assert (instrument.lens_rows(alpha, np.ones(3)) == alpha / alpha.sum()).all()


def test_punctuation_words():
    assert instrument.is_punctuation(",") and instrument.is_punctuation("...") and instrument.is_punctuation("—")
    assert not instrument.is_punctuation("it's") and not instrument.is_punctuation("a")


def _rows(L, nh, n_words, content, sink=0.0):
    """Word rows with given content weights [L, nh, n_words, n_words] and equal CLS/SEP sink."""
    rows = np.zeros((L, nh, n_words, n_words + 2))
    rows[..., 1:-1] = content
    rows[..., 0] = rows[..., -1] = sink / 2
    return rows


def test_head_choice_strongest_displayed_weight_excluding_positional():
    wm = instrument.word_map([None, 0, 1, 2, None])
    L, nh = 2, 2
    content = np.zeros((L, nh, 3, 3))
    content[0, 0] = [[0, 0.9, 0.1], [0.9, 0, 0.1], [0.1, 0.9, 0]]  # adjacent word always wins: positional
    content[0, 1] = [[0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]]
    content[1, 0] = [[0, 0.2, 0.8], [0.5, 0, 0.5], [0.7, 0.3, 0]]  # word 0 -> word 2 at 0.8; word 2 -> word 0
    content[1, 1] = [[0, 0.5, 0.5], [0.5, 0, 0.5], [0.5, 0.5, 0]]
    rows = _rows(L, nh, 3, content)
    adjacent = instrument.adjacent_top(rows, wm, [0, 1, 2])
    assert adjacent[0, 0] == 3
    excluded = adjacent / 3 > 0.8
    assert excluded.tolist() == [[True, False], [False, False]]
    heads = instrument.choose_heads(rows, wm, excluded)
    assert heads[0].tolist() == [1, 0]   # 0.8 beats 0.5
    assert heads[1].tolist() == [0, 1]   # all tie at 0.5 -> lowest layer, then head (0,0 is excluded)
    assert heads[2].tolist() == [1, 0]


def test_head_choice_is_blind_to_the_sink():
    """The score is read after renormalization, as displayed: a sink-heavy head can win."""
    wm = instrument.word_map([None, 0, 1, 2, None])
    content = np.zeros((1, 2, 3, 3))
    content[0, 0] = [[0, 0.05, 0.05], [0.05, 0, 0.05], [0.05, 0.05, 0]]
    content[0, 0, 0] = [0, 0.09, 0.01]             # 90 % sink, but 0.9 once renormalized
    content[0, 1] = [[0, 0.6, 0.4], [0.6, 0, 0.4], [0.6, 0.4, 0]]
    rows = np.zeros((1, 2, 3, 5))
    rows[..., 1:-1] = content
    rows[..., 0] = 1 - content.sum(-1)
    heads = instrument.choose_heads(rows, wm, np.zeros((1, 2), bool))
    assert heads[0].tolist() == [0, 0]
    assert instrument.sink_share(rows, wm)[0, 0, 0] == pytest.approx(0.9)
