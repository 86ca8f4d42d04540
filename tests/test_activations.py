"""The reference's activations (model/activations.py): sentences batched by length come
back in the order given, and a batch gives what each sentence alone gives."""
from __future__ import annotations

import numpy as np

from model import activations, tokenize

SENTENCES = [
    "Despite heavy rain, 3 hikers (all experienced) reached the summit at 5:30 a.m.; nobody was hurt.",
    "The cat sat.",
    "Unbelievably, the committee's reorganisation didn't stop the squabbles!",
    "A man is eating food.",
]


def test_batches_by_length_keep_the_order_and_the_values(l6, monkeypatch):
    ids = [tokenize.tokenize(s, l6.tokenizer_dir, 512).ids for s in SENTENCES]
    together = activations.from_reference(l6, ids)            # one padded batch
    monkeypatch.setattr(activations, "BATCH_TOKENS", 1)       # one sentence per batch
    alone = activations.from_reference(l6, ids)
    for sentence, a, b in zip(ids, together, alone):
        T = len(sentence)
        assert a.alpha.shape == (6, 12, T, T) and a.value_norm.shape == a.output_norm.shape == (6, 12, T)
        assert a.hidden.shape == (T, 384) and a.alpha.dtype == np.float64
        for name in ("alpha", "value_norm", "output_norm", "hidden"):
            assert np.abs(getattr(a, name) - getattr(b, name)).max() < 1e-5, name
        np.testing.assert_allclose(a.alpha.sum(-1), 1.0, atol=1e-5)   # padding trimmed: rows still sum to 1
