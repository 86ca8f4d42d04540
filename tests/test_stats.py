"""Summary statistics (model/stats/) on rows and norms chosen by hand."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SINGLE, TWO_AWAY, attending, hand_corpus, hand_sentence
from model import measure, stats
from model.corpus import displayed, on_heads
from model.activations import Activations
from model.bootstrap import Resampler
from model.instrument import LENSES
from model.stats.rows import row_stats


def test_row_stats_on_paper():
    where = [(3, "a"), (3, "b"), (7, "c"), (7, "d")]
    s = row_stats(np.array([0.1, 0.6, 0.95, 0.3]), np.array([0.0, 0.6, 0.1, 0.2]), np.array([False, True, False, True]),
                        np.array([0, 0, 1, 1]), where.__getitem__, 2, None, 0.0)
    assert (s.n_sentences, s.n_rows) == (2, 4)
    assert s.median_sink == pytest.approx(0.45)
    assert (s.worst_sink, s.worst_sentence, s.worst_word) == (0.95, 7, "c")
    assert (s.above_50, s.above_50_share, s.above_90, s.above_90_share) == (2, 0.5, 1, 0.25)
    assert s.median_punct == pytest.approx(0.15)
    assert (s.punct_above_50, s.punct_above_50_share) == (1, 0.25)
    assert s.top_punct_share == 0.5 and s.median_sink_plus_punct == pytest.approx(0.775)  # sums .1 .5 | 1.05 1.2
    # The spread, interpolated between sorted rows .1 .3 .6 .95 (positions 0.75, 2.25, 2.7):
    assert (s.q25_sink, s.q75_sink, s.p90_sink) == pytest.approx((0.25, 0.6875, 0.845))
    assert s.median_sink_lo is None                       # no resampler, no interval
    # Margins (model/picks.py): the nearest row to each threshold, the worst row's lead
    assert s.margins["above_50"] == (pytest.approx(0.1 / 0.5), 1.0)
    assert s.margins["above_50_share"] == (pytest.approx(0.1 / 0.5), 0.25)
    assert s.margins["above_90"][0] == pytest.approx(0.05 / 0.9)
    assert s.margins["worst_word"][0] == pytest.approx((0.95 - 0.6) / 0.95)


def test_the_worst_row_is_the_first_among_near_ties():
    where = [(3, "a"), (3, "b"), (7, "c")]
    s = row_stats(np.array([0.9, 0.95, 0.94995]), np.zeros(3), np.zeros(3, bool), np.array([0, 0, 1]),
                        where.__getitem__, 2, None, 1e-4)
    assert s.worst_word == "b"                            # 0.94995 ties 0.95 but comes later
    s = row_stats(np.array([0.9, 0.94995, 0.95]), np.zeros(3), np.zeros(3, bool), np.array([0, 0, 1]),
                        where.__getitem__, 2, None, 1e-4)
    assert s.worst_word == "b"                            # ... and wins when it comes first
    # 5e-5 from leaving the band (0.94995 - (0.95 - 1e-4)), and 0.95 as far from rising past it
    assert s.margins["worst_word"][0] == pytest.approx(5e-5 / 0.95, rel=1e-6)


def test_row_stats_intervals_over_identical_sentences_have_no_width():
    sink, punct = np.tile([0.1, 0.6], 3), np.tile([0.2, 0.0], 3)
    s = row_stats(sink, punct, np.tile([False, True], 3), np.repeat([0, 1, 2], 2), lambda r: (0, "w"), 3,
                        Resampler(3, 200, 0, 0.95), 0.0)
    assert (s.median_sink_lo, s.median_sink_hi) == (0.35, 0.35)
    assert (s.worst_sink_lo, s.worst_sink_hi) == (0.6, 0.6)
    assert (s.above_50_share_lo, s.above_50_share_hi) == (0.5, 0.5)
    assert (s.median_punct_lo, s.median_punct_hi) == (0.1, 0.1)
    assert (s.top_punct_share_lo, s.top_punct_share_hi) == (0.5, 0.5)


def ratio_acts(value_norm: list[list[float]]) -> Activations:
    vn = np.array(value_norm, float)[:, None, :]          # [L, nh=1, T=4]
    return Activations(alpha=np.zeros((len(value_norm), 1, 4, 4)), value_norm=vn, output_norm=vn * 2, hidden=np.zeros((4, 2)))


# Per sentence and layer: [CLS], two content tokens, [SEP]. Ratios to the content mean:
#   sentence 0: layer 0 [CLS] 2/2 = 1.0, [SEP] 1/2 = 0.5;  layer 1 [CLS] 1/2 = 0.5, [SEP] 4/2 = 2.0
#   sentence 1: layer 0 [CLS] 4/2 = 2.0, [SEP] 1/2 = 0.5;  layer 1 [CLS] 1/2 = 0.5, [SEP] 2/2 = 1.0
ACTS = [ratio_acts([[2, 1, 3, 1], [1, 1, 3, 4]]), ratio_acts([[4, 2, 2, 1], [1, 2, 2, 2]])]


def test_value_ratios_on_paper():
    out = {(r.token, r.vector, r.layer): r for r in stats.value_ratios(ACTS, 2, [0, 1], Resampler(2, 100, 0, 0.95))}
    cls = out[("cls", "v", None)]
    assert (cls.n, cls.median, cls.below_1, cls.below_1_share) == (4, 0.75, 2, 0.5)   # [1, .5, 2, .5]
    assert cls.median_lo <= cls.median <= cls.median_hi
    assert (out[("cls", "v", 0)].median, out[("cls", "v", 0)].below_1) == (1.5, 0)
    assert (out[("cls", "v", 1)].median, out[("cls", "v", 1)].below_1) == (0.5, 2)
    assert out[("sep", "v", None)].median == 0.75 and out[("sep", "v", None)].below_1 == 2
    assert out[("cls", "f", None)].median == 0.75        # f = 2 v here: the same ratios
    assert out[("cls", "v", 0)].median_lo is None         # intervals on the all-layer figures only


def test_value_ratios_of_one_sentence():
    out = {(r.token, r.vector, r.layer): r for r in stats.value_ratios(ACTS, 2, [1], Resampler(1, 10, 0, 0.95))}
    assert out[("cls", "v", None)].median == 1.25 and out[("cls", "v", None)].n == 2   # [2, .5]


def test_head_ratios_are_medians_over_sentences():
    r = stats.head_ratios(ACTS, [0, 1])
    assert r["cls_v"] == [[1.5], [0.5]] and r["sep_v"] == [[0.5], [1.5]]


def test_per_layer_is_every_head_for_every_shown_word():
    corpus = hand_corpus(hand_sentence(["a", "b", ",", "d"], SINGLE, attending(TWO_AWAY, TWO_AWAY, layers=2)))
    out = stats.per_layer(corpus, 2, [0], 0.0)
    assert [(x.layer, x.lens) for x in out] == [(l, lens) for l in range(2) for lens in LENSES]
    assert all(x.stats.n_rows == 3 * 2 for x in out)     # 3 shown words x 2 heads
    assert out[0].stats.median_sink == pytest.approx(0.3)


def summaries(cls_norm: float):
    """One sentence, one head, alpha sink 0.3 on [CLS]; [CLS]'s value (and output) norm
    is `cls_norm`, every other norm 1."""
    norm = np.ones((1, 1, len(SINGLE)))
    norm[0, 0, 0] = cls_norm
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, attending(TWO_AWAY), value_norm=norm, output_norm=1 / norm))
    none = np.zeros((1, 1), bool)
    rows = {lens: displayed(corpus, lens, none, 0.0) for lens in LENSES}
    same = {lens: on_heads(corpus, lens, rows["alpha"]) for lens in LENSES[1:]}
    predicted = {lens: measure.predicted_sink(corpus, rows[lens], lens) for lens in LENSES[1:]}
    # one sentence and one head: the corpus-wide median [CLS] ratio is this head's own
    global_pred = {lens: measure.predicted_sink(corpus, rows[lens], lens, float(stats.ratio_of(corpus.acts[0], lens, "cls")[0, 0]))
                   for lens in LENSES[1:]}
    world = stats.World(rows, same, predicted, global_pred)
    return stats.summaries(corpus, world, world, [0], Resampler(1, 20, 0, 0.95), 1, 0.0)


def test_summaries_worse_rows_and_same_heads():
    """[CLS] norm 3: under ||alpha v|| every row's sink is 0.9 / 1.6 (worse than 0.3);
    under ||alpha f|| (norm 1/3) it is 0.1 / 0.8 (better)."""
    s = summaries(3.0)
    v, f = s["value_norm"], s["output_norm"]
    assert v.stats.median_sink == pytest.approx(0.9 / 1.6) and f.stats.median_sink == pytest.approx(0.1 / 0.8)
    assert (v.worse_rows, v.worse_share) == (4, 1.0) and (f.worse_rows, f.worse_share) == (0, 0.0)
    assert v.max_relative_worsening == pytest.approx((0.9 / 1.6 - 0.3) / 0.3) and f.max_relative_worsening == 0.0
    assert (v.same_head_as_alpha, v.same_head_share) == (4, 1.0)
    assert v.alpha_head_median_sink == pytest.approx(0.9 / 1.6)
    assert v.prediction_median_error == pytest.approx(0.0)         # equal content norms: exact
    assert s["alpha"].layer_picks == [4] and s["alpha"].sep_fraction_of_sink == 0.0
    assert s["alpha"].all_heads_median_sink == pytest.approx(0.3)


def test_summaries_explain_the_rows_that_stay_above_half():
    v = summaries(3.0)["value_norm"]
    assert v.stats.above_50 == 4
    assert v.above_50_min_alpha_sink == pytest.approx(0.3)
    assert v.above_50_predicted_above_50 == 4 and v.above_50_max_prediction_error == pytest.approx(0.0)
    assert v.above_50_predicted_global == 4
    assert v.above_50_heads == [[0, 0, 4]]
    assert summaries(1.0)["value_norm"].above_50_heads is None     # no row above half: nothing to explain
    # The heads holding the rows above half, for every lens (alpha's 0.3 rows: none).
    assert v.sink_heads == [[0, 0, 4]] and summaries(3.0)["alpha"].sink_heads == []


def test_near_ties_count_the_rows_whose_gap_is_under_the_tolerance():
    from model.corpus import Displayed

    d = Displayed(*(np.zeros(5) for _ in range(10)), gap=np.array([0.0, 5e-5, 5e-4, 2e-3, 0.5]),
                  **{f: np.ones(5) for f in ("margin", "alt_layer", "alt_head", "top_margin", "second_word")})
    nt = stats.near_ties(d, 1e-3)
    assert (nt.n_rows, nt.below_tolerance, nt.below_tenth) == (5, 3, 2)
    assert nt.below_tolerance_share == pytest.approx(0.6) and nt.below_tenth_share == pytest.approx(0.4)


def _ratio(token, vector, layer, median):
    return {"token": token, "vector": vector, "layer": layer, "median": median}


def test_long_heads_count_the_heads_above_the_cut_and_name_the_layers_holding_most():
    per_head = [[0.1, 0.6, 0.2],     # layer 0: one head above 0.5
                [0.7, 0.8, 0.5],     # layer 1: two (0.5 itself is not above)
                [0.9, 0.1, 0.95],    # layer 2: two, a tie with layer 1: the lower layer first
                [0.0, 0.1, 0.2]]
    ratios = [_ratio("cls", "v", None, 0.3)] + [_ratio("cls", "v", l, m) for l, m in enumerate([0.2, 0.7, 0.6, 0.1])] \
        + [_ratio("sep", "v", 1, 9.0)]
    long = stats.long_heads(per_head, ratios)
    assert long["heads"] == 5 and long["per_layer"] == [1, 2, 2, 0]
    assert long["layers"] == [{"layer": 1, "heads": 2, "median": 0.7}, {"layer": 2, "heads": 2, "median": 0.6}]
    assert stats.long_heads(per_head, ratios, top=3)["layers"][2] == {"layer": 0, "heads": 1, "median": 0.2}
    assert stats.long_heads([[0.1, 0.2]], ratios)["layers"] == []          # no such head: no layer named


def test_longest_layers_per_ratio():
    ratios = [_ratio("cls", "v", None, 5.0),                                # over all layers: not a layer
              _ratio("cls", "v", 0, 0.2), _ratio("cls", "v", 1, 0.4), _ratio("cls", "v", 2, 0.4),
              _ratio("sep", "f", 0, 1.1), _ratio("sep", "f", 1, 0.3)]
    longest = stats.longest_layers(ratios, 0.0)
    assert {k: (v["layer"], v["median"]) for k, v in longest.items()} == {"cls_v": (1, 0.4), "sep_f": (0, 1.1)}
