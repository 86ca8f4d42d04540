"""The readings Part 8 holds to its ground truth beside the instrument's lenses: the later
fixes read as lenses (Kobayashi 2021, ALTI, value zeroing), with their labels as the pages
name them, and two lazy scores that know only where the word is.

Not here: how a fix is computed (model/ground_truth.py) or folded to words (sentence.py).
"""
from __future__ import annotations

import numpy as np

from ..instrument import LENSES


FIXES = ("kobayashi2021", "alti", "value_zeroing")
FIX_LABELS = {"kobayashi2021": "ATB+RES+LN", "alti": "ALTI", "value_zeroing": "value zeroing"}
FIX_PAPERS = {"kobayashi2021": "Kobayashi 2021", "alti": "Ferrando 2022", "value_zeroing": "Mohebbi 2023"}
FIX_CITED = {fix: f"{label} ({FIX_PAPERS[fix]})" for fix, label in FIX_LABELS.items()}   # a table's row names
FIX_TITLES = {
    "kobayashi2021": "Kobayashi et al. 2021: the attention block with its residual and LayerNorm, all heads (the layer of α's head)",
    "alti": "ALTI, Ferrando et al. 2022: each token's part of the attention block's output, by L1 distance (the layer of α's head)",
    "value_zeroing": "value zeroing, Mohebbi et al. 2023: how far the word's layer output moves when a token's value vectors are zeroed (the layer of α's head)",
}
TRACKED = (*LENSES, *FIXES)   # the readings whose sink share is held to the ground truth
POSITION_BASELINES = ("position", "first_word")   # lazy scores scored as the readings are (added after review)
CHEAP = ("kobayashi2021", "alti")   # computed on every layer: the strongest-layer sensitivity


def position_scores(word: np.ndarray) -> dict[str, np.ndarray]:
    """The lazy scores of a row that know only where its word is (study.yml, added after the
    sceptical reading): the earlier the higher (minus the word index), and 1 for the
    sentence's first word, 0 for the others."""
    word = np.asarray(word)
    return {"position": -word.astype(float), "first_word": (word == 0).astype(float)}
