"""The rule-free view: every head's row for every shown word, layer by layer and lens by lens,
with no head rule choosing among them.

Not here: the rows the head rule displays (rows.py, lenses.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..corpus import Corpus
from ..instrument import LENSES
from .rows import SinkStats, row_stats


@dataclass
class LayerStats:
    layer: int
    lens: str
    stats: SinkStats


def per_layer(corpus: Corpus, n_layers: int, sentences: list[int], tie_tolerance: float) -> list[LayerStats]:
    """The rule-free view: every head's row for every shown word of `sentences`, by layer."""
    out = []
    for l in range(n_layers):
        for lens in LENSES:
            sink, punct, top_punct, owner = [], [], [], []
            for i in sentences:
                sr = corpus.rows[i]
                sink.append(sr.sink[lens][l][:, sr.shown].T.ravel())    # word by word, heads within
                punct.append(sr.punct[lens][l][:, sr.shown].T.ravel())
                top_punct.append(~np.isin(sr.top_word[lens][l][:, sr.shown].T.ravel(), sr.shown))
                words = np.array(sr.shown, dtype=int)
                owner.append(np.repeat(np.stack([np.full(len(words), i), words], 1), sr.sink[lens].shape[1], axis=0))
            owner = np.concatenate(owner)                                # [R, 2]: sentence, word
            where = lambda r: (int(owner[r, 0]), corpus.toks[owner[r, 0]].words[owner[r, 1]])
            sink = np.concatenate(sink)
            s = row_stats(sink, np.concatenate(punct), np.concatenate(top_punct),
                          np.zeros(len(sink), int), where, len(sentences), None, tie_tolerance)
            out.append(LayerStats(l, lens, s))
    return out
