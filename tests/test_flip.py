"""The adjective flip (model/flip.py) on one pair whose pronoun rows are set by hand.

A model of 2 layers x 2 heads; in each sentence the pronoun's row puts these weights on
the two candidates (hammer, tile), the rest on [CLS]. The reader picks "tile" in the
first sentence and "hammer" in the second.

    head    first (hammer, tile)   second (hammer, tile)   winners          shift toward the reader
    (0, 0)  .3 .1                  .3 .1                   hammer, hammer   layer 0: left out
    (0, 1)  .1 .3                  .3 .1                   tile, hammer     layer 0: left out (but counted apart)
    (1, 0)  .1 .5                  .5 .1                   tile, hammer     (.5 - .1) - (.1 - .5) = +0.8, follows
    (1, 1)  .4 .2                  .3 .2                   hammer, hammer   (.3 - .2) - (.4 - .2) = -0.1
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from model import activations, flip
from model.activations import Activations
from model.study import Bootstrap, FlipPair
from model.tokenize import tokenize

PAIR = FlipPair(("The hammer broke the tile because it was brittle.", "The hammer broke the tile because it was heavy."),
                "it", ("hammer", "tile"), ("tile", "hammer"))
WEIGHTS = {  # (layer, head) -> [first sentence (hammer, tile), second sentence (hammer, tile)]
    (0, 0): [(0.3, 0.1), (0.3, 0.1)],
    (0, 1): [(0.1, 0.3), (0.3, 0.1)],
    (1, 0): [(0.1, 0.5), (0.5, 0.1)],
    (1, 1): [(0.4, 0.2), (0.3, 0.2)],
}
BOOT = Bootstrap(resamples=100, seed=0, level=0.95)


def token_of(tok, word: str) -> int:
    w = [x.lower() for x in tok.words].index(word)
    (t,) = [t for t, x in enumerate(tok.word_ids) if x == w]
    return t


def hand_made(tok, j: int, tile_norm: float = 1.0) -> Activations:
    """Activations of sentence j (0 or 1) of PAIR with the pronoun rows of WEIGHTS."""
    T = tok.n_tokens
    alpha = np.full((2, 2, T, T), 1.0 / T)
    p, hammer, tile = (token_of(tok, w) for w in ("it", "hammer", "tile"))
    for (l, h), both in WEIGHTS.items():
        alpha[l, h, p] = 0.0
        alpha[l, h, p, [hammer, tile]] = both[j]
        alpha[l, h, p, 0] = 1.0 - sum(both[j])
    value_norm = np.ones((2, 2, T))
    value_norm[:, :, tile] = tile_norm
    # The pronoun's final state lies on the reader's referent: e0 on "it" and on it, e1 on the other.
    hidden = np.ones((T, 4))
    referent, other = (tile, hammer) if j == 0 else (hammer, tile)
    hidden[[p, referent]] = [1, 0, 0, 0]
    hidden[other] = [0, 1, 0, 0]
    return Activations(alpha=alpha, value_norm=value_norm, output_norm=np.ones((2, 2, T)), hidden=hidden)


@pytest.fixture
def flips(l6, monkeypatch):
    """flip.measure on PAIR, with the forward pass replaced by `hand_made`."""
    toks = [tokenize(s, l6.tokenizer_dir, 512) for s in PAIR.sentences]

    def from_reference(ckpt, batch):
        assert batch == [t.ids for t in toks]
        return [hand_made(t, j, tile_norm=10.0) for j, t in enumerate(toks)]

    monkeypatch.setattr(activations, "from_reference", from_reference)
    ckpt = SimpleNamespace(tokenizer_dir=l6.tokenizer_dir, config=SimpleNamespace(n_layer=2, n_head=2, max_position=512))
    return flip.measure_pairs(ckpt, [PAIR], BOOT)


def test_winners_per_head(flips):
    pair = flips.lenses["alpha"].pairs[0]
    assert pair.winners == [["hammer", "hammer"], ["tile", "hammer"], ["tile", "hammer"], ["hammer", "hammer"]]


def test_layer_0_is_counted_apart(flips):
    a = flips.lenses["alpha"]
    assert a.n_heads == 2                               # (1, 0) and (1, 1)
    assert a.pairs[0].layer0_changed == a.layer0_changed == 1
    assert a.pairs[0].changed == 1                      # (0, 1) changes too, but is not in the rates
    assert a.changed_share == 0.5


def test_follows_toward_and_shift(flips):
    a = flips.lenses["alpha"]
    pair = a.pairs[0]
    assert (pair.follows_reader, pair.toward_reader) == (1, 1)
    assert pair.mean_shift == pytest.approx((0.8 - 0.1) / 2)
    assert (a.follows_share, a.toward_share) == (0.5, 0.5)
    assert (a.follows_every_pair, a.most_pairs_followed) == (1, 1)
    # One pair: every resample is that pair, the interval has no width.
    assert (a.changed_share_lo, a.changed_share_hi) == (0.5, 0.5)


def test_a_norm_lens_reweighs_the_candidates(flips):
    """Under ||alpha v|| the tile's value norm is 10: it wins every head of layer 1 in
    both sentences, so no winner changes; ||alpha f(x)|| (norms of 1) is alpha."""
    v = flips.lenses["value_norm"]
    assert [w for w in v.pairs[0].winners[2:]] == [["tile", "tile"], ["tile", "tile"]]
    assert v.changed_share == 0.0 and v.follows_share == 0.0
    assert flips.lenses["output_norm"].pairs[0].winners == flips.lenses["alpha"].pairs[0].winners


def test_the_models_own_resolution(flips):
    assert flips.model_follows == 1.0 and flips.model_flips_with_reader == 1 and flips.model_flips_share == 1.0


def test_the_example_is_the_first_pairs_candidate_weights(flips):
    assert flips.example == pytest.approx(np.array([[*a, *b] for a, b in WEIGHTS.values()]))


def test_no_pairs_measures_nothing(l6):
    """A study without flip pairs (the CLI's own sentences) has no flip results, not a crash."""
    out = flip.measure_pairs(l6, [], BOOT)
    assert out.n_pairs == 0 and out.lenses == {} and out.example == []


def test_flip_on_the_real_model(small_measured):
    f = small_measured.results.flips
    assert f.n_pairs == 2
    for lens in f.lenses.values():
        assert lens.layer0_changed == 0          # a softmax keeps the ratio of two weights: see flip.py
        assert lens.n_heads == 5 * 12
        assert lens.changed_share_lo <= lens.changed_share <= lens.changed_share_hi
        assert all(len(p.winners) == 6 * 12 for p in lens.pairs)
