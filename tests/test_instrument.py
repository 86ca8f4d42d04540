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


def test_adjacent_top_counts_rows_peaking_next_door():
    # top_word [L=1, nh=2, n_words=4]: where each word's displayed row peaks.
    top = np.array([[[1, 0, 3, 2],      # every word peaks on a neighbour
                     [2, 3, 0, 1]]])    # none does (2 and 3 away)
    assert instrument.adjacent_top(top, [0, 1, 2, 3]).tolist() == [[4, 0]]
    assert instrument.adjacent_top(top, [0, 3]).tolist() == [[2, 0]]   # only shown words count
    # Peaking on the word itself (an empty displayed row's argmax is column 0) is not next door.
    assert instrument.adjacent_top(np.array([[[0, 1, 2]]]), [0, 1, 2]).tolist() == [[0]]


def test_head_choice_strongest_weight_then_lowest_layer_then_head():
    # top_weight [L=2, nh=2, n_words=3]
    top = np.array([[[0.9, 0.5, 0.4], [0.5, 0.5, 0.4]],
                    [[0.8, 0.5, 0.7], [0.5, 0.5, 0.7]]])
    excluded = np.array([[True, False], [False, False]])   # head (0, 0) is positional
    heads = instrument.choose_heads(top, excluded, 0.0)
    assert heads.tolist() == [[1, 0],    # 0.9 is on an excluded head: 0.8 wins
                              [0, 1],    # all tie at 0.5: lowest layer, then head, (0, 0) excluded
                              [1, 0]]    # 0.7 on (1, 0) and (1, 1): lowest head


def test_near_ties_go_to_the_lowest_layer_whatever_the_noise():
    """Heads within the tolerance of the best tie; float noise below it cannot move the choice."""
    top = np.array([[[0.9000]], [[0.9004]]])             # [L=2, nh=1, n_words=1]: 4e-4 apart
    free = np.zeros((2, 1), bool)
    assert instrument.choose_heads(top, free, 0.0).tolist() == [[1, 0]]      # exact rule: the larger
    assert instrument.choose_heads(top, free, 1e-3).tolist() == [[0, 0]]     # near-tie: the lower layer
    rng = np.random.default_rng(0)
    for _ in range(20):                                   # noise of float32 rounding moves nothing
        noisy = top + rng.normal(0, 1e-7, top.shape)
        assert instrument.choose_heads(noisy, free, 1e-3).tolist() == [[0, 0]]
    assert instrument.choose_heads(np.array([[[0.9]], [[0.902]]]), free, 1e-3).tolist() == [[1, 0]]  # a real gap
    assert instrument.runner_up_gap(top, free) == pytest.approx([4e-4])
    assert instrument.runner_up_gap(top, np.array([[False], [True]])) == pytest.approx([0.9 + 1.0])  # excluded: -1


def test_head_choice_is_blind_to_the_sink():
    """The score is read after renormalization, as displayed: a sink-heavy head can win."""
    wm = instrument.word_map([None, 0, 1, 2, None])
    rows = np.zeros((1, 2, 3, 5))                        # [L, nh, n_words, K]
    rows[0, 0, :, 1:4] = [[0, 0.09, 0.01], [0.05, 0, 0.05], [0.05, 0.05, 0]]   # 90 % sink
    rows[0, 1, :, 1:4] = [[0, 0.6, 0.4], [0.6, 0, 0.4], [0.6, 0.4, 0]]         # no sink
    rows[..., 0] = 1 - rows.sum(-1)
    display, _ = instrument.displayed_rows(rows, wm)
    heads = instrument.choose_heads(display.max(-1), np.zeros((1, 2), bool), 0.0)
    assert heads[0].tolist() == [0, 0]                   # 0.9 once renormalized beats 0.6
    assert instrument.sink_share(rows, wm)[0, 0, 0] == pytest.approx(0.9)


def test_sentence_rows_on_paper():
    """One head, tokens [CLS] un ##real , cat [SEP]: words "unreal", ",", "cat"."""
    word_ids = [None, 0, 0, 1, 2, None]
    alpha = np.zeros((1, 1, 6, 6))
    alpha[0, 0, 1] = [0.2, 0.1, 0.1, 0.2, 0.3, 0.1]     # "un"
    alpha[0, 0, 2] = [0.4, 0.0, 0.1, 0.0, 0.1, 0.4]     # "##real"
    alpha[0, 0, 3] = [0.5, 0.1, 0.1, 0.0, 0.1, 0.2]     # ","
    alpha[0, 0, 4] = [0.1, 0.3, 0.3, 0.2, 0.0, 0.1]     # "cat"
    alpha[0, 0, [0, 5], [0, 5]] = 1.0
    norms = instrument.lens_norms(np.ones((1, 1, 6)), np.ones((1, 1, 6)))
    sr = instrument.sentence_rows(alpha, norms, ["unreal", ",", "cat"], instrument.word_map(word_ids))
    # unreal = mean of its rows, columns summed: [CLS] .3, unreal .15, "," .1, cat .2, [SEP] .25
    # ",": [CLS] .5, unreal .2, "," 0, cat .1, [SEP] .2;  cat: [CLS] .1, unreal .6, "," .2, cat 0, [SEP] .1
    assert sr.shown == [0, 2]                                    # punctuation gets no row
    assert sr.sink["alpha"][0, 0].tolist() == pytest.approx([0.55, 0.7, 0.2])
    assert sr.sep["alpha"][0, 0].tolist() == pytest.approx([0.25, 0.2, 0.1])
    assert sr.punct["alpha"][0, 0].tolist() == pytest.approx([0.1, 0.0, 0.2])  # never the word itself
    assert sr.content_mass["alpha"][0, 0].tolist() == pytest.approx([0.3, 0.3, 0.8])
    assert sr.top_word["alpha"][0, 0].tolist() == [2, 0, 0]
    assert sr.top_weight["alpha"][0, 0].tolist() == pytest.approx([0.2 / 0.3, 0.2 / 0.3, 0.6 / 0.8])
    # The corpus keeps every sentence's SentenceRows: none may be a view that keeps the
    # sentence's [L, nh, n_words, K] word rows alive (on all-mpnet-base-v2, 0.7 GB).
    for per_lens in (sr.sink, sr.sep, sr.punct, sr.content_mass, sr.top_word, sr.top_weight):
        assert all(a.base is None for a in per_lens.values())


def test_a_norm_lens_moves_the_sink_by_the_norms():
    """Value norm 3 on [CLS], 1 elsewhere: the sink's share of a row grows as it should."""
    word_ids = [None, 0, 1, None]
    alpha = np.full((1, 1, 4, 4), 0.25)
    value_norm = np.array([[[3.0, 1.0, 1.0, 1.0]]])
    sr = instrument.sentence_rows(alpha, instrument.lens_norms(value_norm, value_norm), ["a", "b"],
                                  instrument.word_map(word_ids))
    assert sr.sink["alpha"][0, 0].tolist() == pytest.approx([0.5, 0.5])
    assert sr.sink["value_norm"][0, 0].tolist() == pytest.approx([4 / 6, 4 / 6])   # (3 + 1) / (3 + 1 + 1 + 1)
    assert sr.content_mass["value_norm"][0, 0].tolist() == pytest.approx([1 / 6, 1 / 6])
