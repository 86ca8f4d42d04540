"""The measurement pipeline (model/measure.py): the head rule fitted on one half, the
displayed rows, the same-head comparison, the norm-lens prediction, the stop rule and
the anchors, on sentences made by hand; then the whole pipeline on a small real study."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import NEXT_DOOR, SINGLE, TWO_AWAY, attending, hand_corpus, hand_sentence
from model import measure
from model.corpus import Displayed, displayed, on_heads, positional_heads
from model.instrument import LENSES, is_punctuation
from model.study import AnchorSpec, Bootstrap, StopRule, Study
from model.weights import EncoderConfig

def test_positional_heads_are_fitted_on_the_given_sentences_only():
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, attending(NEXT_DOOR, TWO_AWAY)),
                         hand_sentence(list("abcd"), SINGLE, attending(TWO_AWAY, TWO_AWAY)))
    assert positional_heads(corpus, "alpha", 0.8, [0]).tolist() == [[True, False]]
    assert positional_heads(corpus, "alpha", 0.8, [1]).tolist() == [[False, False]]
    assert positional_heads(corpus, "alpha", 0.8, [0, 1]).tolist() == [[False, False]]   # 4 of 8
    assert positional_heads(corpus, "alpha", 0.4, [0, 1]).tolist() == [[True, False]]


def test_displayed_rows_one_per_shown_word_on_the_opened_head():
    """Both heads peak at 1.0 once displayed: ties go to head 0 unless it is excluded."""
    corpus = hand_corpus(hand_sentence(["a", "b", "c", "d"], SINGLE, attending(TWO_AWAY, TWO_AWAY)),
                         hand_sentence(["a", ",", "c", "d"], SINGLE, attending(NEXT_DOOR, TWO_AWAY)))
    free = displayed(corpus, "alpha", np.zeros((1, 2), bool), 0.0)
    assert free.head.tolist() == [0, 0, 0, 0, 0, 0, 0]      # ties go to the lowest head
    rows = displayed(corpus, "alpha", np.array([[True, False]]), 0.0)
    assert rows.sentence.tolist() == [0, 0, 0, 0, 1, 1, 1]  # the comma gets no row
    assert rows.word.tolist() == [0, 1, 2, 3, 0, 2, 3]
    assert rows.head.tolist() == [1] * 7 and rows.layer.tolist() == [0] * 7
    assert rows.sink.tolist() == pytest.approx([0.3] * 7)
    assert rows.top_word.tolist() == [TWO_AWAY[w] for w in rows.word]
    assert rows.where([1]).tolist() == [False] * 4 + [True] * 3


def test_the_same_head_comparison_reads_alphas_head_under_the_norm_lens():
    """[CLS]'s value norm is 3 on head 0 and 1 on head 1: a row with alpha sink 0.3 on
    head 0 becomes 0.9 / (0.9 + 0.7) under ||alpha v||, on head 1 it stays 0.3."""
    T = len(SINGLE)
    value_norm = np.ones((1, 2, T))
    value_norm[0, 0, 0] = 3.0
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, attending(TWO_AWAY, TWO_AWAY), value_norm=value_norm))
    alpha_rows = displayed(corpus, "alpha", np.zeros((1, 2), bool), 0.0)
    assert alpha_rows.head.tolist() == [0, 0, 0, 0]
    assert on_heads(corpus, "value_norm", alpha_rows) == pytest.approx([0.9 / 1.6] * 4)
    on_head_1 = dataclasses.replace(alpha_rows, head=np.ones(4, int))
    assert on_heads(corpus, "value_norm", on_head_1) == pytest.approx([0.3] * 4)


def test_the_prediction_is_exact_when_content_norms_are_equal():
    """alpha: [CLS] 0.2, [SEP] 0.1, content 0.7; norms [CLS] 3, [SEP] 0.5, content 1:
    weighted sink 0.6 + 0.05 = 0.65 of 0.65 + 0.7, i.e. 13/27, predicted and measured."""
    T = len(SINGLE)
    alpha = np.tile([0.2, 0.0, 0.35, 0.35, 0.0, 0.1], (1, 1, T, 1))
    norm = np.array([[[3.0, 1.0, 1.0, 1.0, 1.0, 0.5]]])
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, alpha, value_norm=norm))
    rows = displayed(corpus, "value_norm", np.zeros((1, 1), bool), 0.0)
    assert rows.sink == pytest.approx([13 / 27] * 4)
    assert measure.predicted_sink(corpus, rows, "value_norm") == pytest.approx([13 / 27] * 4)
    # Unequal content norms: the prediction is then only an approximation.
    uneven = norm.copy()
    uneven[0, 0, 2] = 4.0
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, alpha, value_norm=uneven))
    rows = displayed(corpus, "value_norm", np.zeros((1, 1), bool), 0.0)
    assert not np.allclose(measure.predicted_sink(corpus, rows, "value_norm"), rows.sink)


def small_study(rule: StopRule, anchors=()) -> Study:
    return Study(Path("s.yml"), Path("c.tsv"), ("a b c d",), ("r",), (), rule, 0.8, 0.0, None, anchors=anchors)


def test_the_stop_rule_as_written():
    d = Displayed(*(np.zeros(4) for _ in range(16)))
    rows = {lens: dataclasses.replace(d, sink=np.array(sink)) for lens, sink in
            {"alpha": [0.9, 0.9, 0.9, 0.9], "value_norm": [0.2, 0.5, 0.4, 0.1], "output_norm": [0.6, 0.51, 0.1, 0.2]}.items()}
    verdicts = measure.verdicts(rows, rows, small_study(StopRule(("value_norm", "output_norm"), 0.5, 0)))
    assert [(v.lens, v.rows_above, v.n_rows, v.adopted) for v in verdicts] == [
        ("value_norm", 0, 4, True),        # 0.5 is not above 0.5
        ("output_norm", 2, 4, False)]
    lenient = measure.verdicts(rows, rows, small_study(StopRule(("output_norm",), 0.5, 2)))
    assert lenient[0].adopted


def test_anchors_are_read_off_the_displayed_alpha_rows():
    corpus = hand_corpus(hand_sentence(["The", "cat", "sat", "down"], SINGLE, attending(TWO_AWAY, NEXT_DOOR)))
    rows = displayed(corpus, "alpha", np.array([[False, True]]), 0.0)
    study = small_study(None, anchors=(AnchorSpec("a b c d", "cat", "down"),))
    (a,) = measure.anchors(corpus, study, rows)
    assert (a.sentence, a.from_word, a.to_word, a.layer, a.head) == (0, "cat", "down", 0, 0)
    assert a.weight == pytest.approx(1.0) and a.sink_share == pytest.approx(0.3)


def test_the_head_rule_is_fitted_on_one_half_and_the_statistics_read_on_the_other(monkeypatch):
    """Sentence "a" is in the fit half, "e" in the held-out half (test_study.py). Head 0
    peaks next door on "a" only: fitted on "a" it is positional (4 of 4 words); fitted on
    both it would not be (4 of 8)."""
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, attending(NEXT_DOOR, TWO_AWAY)),
                         hand_sentence(list("efgh"), SINGLE, attending(TWO_AWAY, TWO_AWAY)))
    monkeypatch.setattr(measure, "read_corpus", lambda ckpt, study, inputs=None: corpus)   # no layer inputs: no part 8
    config = EncoderConfig(n_layer=1, n_head=2, d_model=4, d_ff=8, vocab_size=10, max_position=8, type_vocab_size=0,
                           layer_norm_eps=1e-12)
    ckpt = SimpleNamespace(name="hand", config=config, sha256="0" * 64, source="by hand")
    study = Study(Path("s.yml"), Path("c.tsv"), ("a", "e"), ("r", "r"), (), StopRule(("value_norm",), 0.5, 0), 0.8, 0.0,
                  Bootstrap(50, 0, 0.95))
    assert study.halves == {"fit": [0], "test": [1]}
    r = measure.measure_model(ckpt, study, "hand").results
    assert r.positional_heads == {lens: [[0, 0]] for lens in LENSES}
    assert r.positional_heads_held_out == {lens: [] for lens in LENSES}   # fitted on "e": nothing is positional
    assert r.summary["alpha"].stats.n_rows == 4 and r.summary["alpha"].stats.n_sentences == 1
    assert r.by_half["fit"]["alpha"].n_rows == r.by_half["test"]["alpha"].n_rows == 4
    assert r.verdicts[0].n_rows == 8                      # the stop rule reads every displayed row
    assert r.rows["value_norm"]["head"] == [1] * 8        # head 0 is never opened, on either half


# -- the whole pipeline, on 12 real sentences --------------------------------------------------

def test_every_shown_word_has_one_row_under_every_lens(small_measured):
    c = small_measured.corpus
    shown = [(i, w) for i, sr in enumerate(c.rows) for w in sr.shown]
    for lens in LENSES:
        d = small_measured.rows[lens]
        assert list(zip(d.sentence.tolist(), d.word.tolist())) == shown
        assert ((0 <= d.sink) & (d.sink <= 1) & (d.sep <= d.sink + 1e-12)).all()
        assert (d.sink + d.mass <= 1 + 1e-9).all()
    left_out = [w for i, t in enumerate(c.toks) for j, w in enumerate(t.words) if (i, j) not in set(shown)]
    assert left_out and all(is_punctuation(w) for w in left_out)                 # only punctuation, and some
    assert not any(is_punctuation(c.toks[i].words[w]) for i, w in shown)


def test_the_halves_split_the_statistics(small_measured, small_study):
    r = small_measured.results
    fit, test = small_study.halves["fit"], small_study.halves["test"]
    assert sorted(fit + test) == list(range(12)) and not set(fit) & set(test)
    by_half = {h: r.by_half[h]["alpha"] for h in ("fit", "test", "all")}
    assert by_half["fit"].n_rows + by_half["test"].n_rows == by_half["all"].n_rows == len(small_measured.rows["alpha"].sink)
    assert r.summary["alpha"].stats == by_half["test"]           # the articles' numbers are the held-out half's
    assert sum(r.summary["alpha"].layer_picks) == by_half["test"].n_rows
    assert {half: [int(i) for i in idx] for half, idx in r.halves.items()} == small_study.halves


def test_the_rows_table_matches_the_displayed_rows(small_measured):
    table, d = small_measured.results.rows, small_measured.rows
    assert table["sentence"] == d["alpha"].sentence.tolist()
    for lens in LENSES:
        assert table[lens]["sink_share"] == d[lens].sink.tolist()
        assert table[lens]["layer"] == d[lens].layer.tolist() and table[lens]["head"] == d[lens].head.tolist()
    assert "predicted_sink" in table["value_norm"] and "predicted_sink" not in table["alpha"]


def test_the_cost_of_a_sentence_on_paper():
    """scale_figures: float32 attention is 4 L nh T^2 bytes; the forward pass's operations are
    2 L (4 T C^2 + 2 T C F + 2 T^2 C); 10^6 sentences are 10^6 of the corpus's mean sentence."""
    config = EncoderConfig(n_layer=2, n_head=3, d_model=4, d_ff=8, vocab_size=10, max_position=8, type_vocab_size=0,
                           layer_norm_eps=1e-12)
    toks = [SimpleNamespace(n_tokens=2), SimpleNamespace(n_tokens=4)]
    f = measure.scale_figures(config, toks, n_rows=6, n_columns=5)
    assert f["tokens"] == 3 and f["rows"] == 3
    assert f["attention_mb"] * 1e6 == 8 * 2 * 3 * (4 + 16) / 2
    flops = lambda T: 2 * 2 * (4 * T * 16 + 2 * T * 4 * 8 + 2 * T * T * 4)
    assert f["gflop"] * 1e9 == pytest.approx((flops(2) + flops(4)) / 2)
    assert f["million"]["rows_gb"] == pytest.approx(3 * 1e6 * 5 * 8 / 1e9)
    assert f["million"]["attention_tb"] == pytest.approx(f["attention_mb"])   # 10^6 MB is a TB
