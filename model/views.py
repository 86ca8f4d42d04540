"""The instrument page's data: for each sentence of the corpus, every head under every lens.

Stored apart from the results (the pages never read it) and published one file per
model and sentence, fetched by the instrument's script when a reader opens it.
"""
from __future__ import annotations

import numpy as np

from .instrument import LENSES
from .measure import Measured


def sentence_views(m: Measured) -> list[dict]:
    """One dict per sentence: its words, the word rows of every head under every lens
    (rounded: 5 decimals are finer than any display), and the heads the rule opens."""
    chosen: dict[int, dict[str, list[list[int]]]] = {}
    for lens in LENSES:
        d = m.rows[lens]
        for s, l, h in zip(d.sentence, d.layer, d.head):
            chosen.setdefault(int(s), {k: [] for k in LENSES})[lens].append([int(l), int(h)])
    out = []
    for i, tok in enumerate(m.corpus.toks):
        out.append({
            "sentence": i,
            "text": tok.text,
            "words": tok.words,
            "shown": m.corpus.rows[i].shown,
            "rows": {lens: np.round(m.corpus.word_rows(i, lens), 5).tolist() for lens in LENSES},
            "chosen": chosen.get(i, {l: [] for l in LENSES}),
        })
    return out
