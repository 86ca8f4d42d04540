"""The instrument's per-sentence data (model/views.py): every head under every lens,
rounded, and the heads the rule opens for each shown word."""
from __future__ import annotations

import numpy as np

from model import views
from model.instrument import LENSES


def test_one_view_per_sentence_with_every_head(small_measured):
    out = views.sentence_views(small_measured)
    corpus = small_measured.corpus
    assert [v["sentence"] for v in out] == list(range(len(corpus.toks)))
    for i, v in enumerate(out):
        tok = corpus.toks[i]
        assert (v["text"], v["words"], v["shown"]) == (tok.text, tok.words, corpus.rows[i].shown)
        for lens in LENSES:
            rows = np.array(v["rows"][lens])                       # [L, nh, n_words, K]
            assert rows.shape == (6, 12, len(tok.words), len(tok.words) + 2)
            assert np.abs(rows - corpus.word_rows(i, lens)).max() <= 5e-6   # rounded to 5 decimals
            assert np.array_equal(rows, np.round(rows, 5))


def test_the_chosen_heads_are_the_displayed_rows_heads(small_measured):
    out = views.sentence_views(small_measured)
    for lens in LENSES:
        d = small_measured.rows[lens]
        for i, v in enumerate(out):
            here = d.sentence == i
            assert v["chosen"][lens] == np.stack([d.layer[here], d.head[here]], 1).tolist()
            assert len(v["chosen"][lens]) == len(v["shown"])
