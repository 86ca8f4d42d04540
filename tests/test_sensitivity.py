"""The sensitivity table (model/sensitivity.py), on sentences made by hand: each alternative
changes one choice, and the verdict follows the rows it opens."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import NEXT_DOOR, SINGLE, TWO_AWAY, attending, hand_corpus, hand_sentence
from model import sensitivity
from model.corpus import displayed, positional_heads
from model.instrument import LENSES
from model.study import Bootstrap, Sensitivity, StopRule, Study


TO_COMMA = [1, 0, 1, 1]   # every word's row peaks on word 1 (the comma; the comma itself on word 0)


def two_heads(targets0, targets1):
    """alpha [1, 2, T, T]: head 0 puts 0.2 on [CLS], head 1 puts 0.6 (the sink-heavy head)."""
    return np.concatenate([attending(targets0, sink=0.2), attending(targets1, sink=0.6)], axis=1)


@pytest.fixture
def case():
    """Sentence "a b c d" is in the fit half, "e , g h" held out (test_study.py's halves).
    Head 0 peaks next door on the fit sentence: positional at the 0.8 threshold."""
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, two_heads(NEXT_DOOR, TWO_AWAY)),
                         hand_sentence(["e", ",", "g", "h"], SINGLE, two_heads(TWO_AWAY, TO_COMMA)))
    alt = Sensitivity(positional_threshold=(1.0,), tie_tolerance=(0.0,),
                      head_rule=("largest_content_mass", "one_head_for_all"), punctuation_as_sink=True)
    study = Study(Path("s.yml"), Path("c.tsv"), ("a", "e"), ("r", "r"), (), StopRule(("value_norm",), 0.5, 0),
                  0.8, 1e-3, Bootstrap(50, 0, 0.95), sensitivity=alt)
    excluded = {lens: positional_heads(corpus, lens, 0.8, [0]) for lens in LENSES}
    rows = {lens: displayed(corpus, lens, excluded[lens], 1e-3) for lens in LENSES}
    return {v.id: v for v in sensitivity.variants(corpus, rows, excluded, study, n_heads=2)}


def test_every_alternative_is_one_row_in_study_order(case):
    assert list(case) == ["registered", "positional_1", "ties_0", "rule_largest_content_mass",
                          "rule_one_head_for_all", "punct_as_sink"]


def test_the_registered_rule_opens_the_sink_heavy_head_and_fails(case):
    r = case["registered"]
    # Head 0 is positional, so every word is read on head 1: 0.6 on [CLS] each, 7 rows in all.
    assert r.rows_above == {"value_norm": 7} and not r.adopted
    assert r.median_sink["alpha"] == pytest.approx(0.6) and r.survivors == 3   # "e", "g", "h"


def test_the_survivors_share_of_long_cls_vectors(case):
    # Every norm is 1 here: each survivor's own [CLS] ratio is 1, above CLS_LONG (0.5).
    assert case["registered"].survivors_cls_above_half == 1.0
    assert case["positional_1"].survivors == 0 and case["positional_1"].survivors_cls_above_half is None


def test_the_survivors_share_reads_the_threshold(monkeypatch):
    monkeypatch.setattr(sensitivity, "CLS_LONG", 1.5)
    corpus = hand_corpus(hand_sentence(list("abcd"), SINGLE, two_heads(NEXT_DOOR, TWO_AWAY)),
                         hand_sentence(["e", ",", "g", "h"], SINGLE, two_heads(TWO_AWAY, TO_COMMA)))
    study = Study(Path("s.yml"), Path("c.tsv"), ("a", "e"), ("r", "r"), (), StopRule(("value_norm",), 0.5, 0),
                  0.8, 1e-3, Bootstrap(50, 0, 0.95))
    excluded = {lens: positional_heads(corpus, lens, 0.8, [0]) for lens in LENSES}
    rows = {lens: displayed(corpus, lens, excluded[lens], 1e-3) for lens in LENSES}
    (registered,) = sensitivity.variants(corpus, rows, excluded, study, n_heads=2)
    assert registered.survivors == 3 and registered.survivors_cls_above_half == 0.0


def test_no_positional_heads_opens_the_light_head_and_passes(case):
    v = case["positional_1"]
    assert v.rows_above == {"value_norm": 0} and v.adopted and v.median_sink["alpha"] == pytest.approx(0.2)


def test_a_rule_that_seeks_content_avoids_the_sink_only_among_the_heads_it_may_open(case):
    # content mass 0.4 on head 1 and 0.8 on head 0, but head 0 stays positional: the same rows.
    assert case["rule_largest_content_mass"].rows_above == case["registered"].rows_above


def test_one_head_for_all_is_the_registered_rules_most_frequent_head(case):
    assert case["rule_one_head_for_all"].heads == [0, 1]


def test_punctuation_as_sink_adds_the_punctuation_share(case):
    # The held-out words put 0.4 of their row on "," and 0.6 on [CLS]: as sink, 1.0.
    v = case["punct_as_sink"]
    assert v.rows_above == {"value_norm": 7} and v.median_sink["alpha"] == pytest.approx(1.0)
