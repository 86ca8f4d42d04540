"""The adjective flip (model/flip/) on one pair whose pronoun rows are set by hand.

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
from model.flip.analysis import MeasuredPairs, passing_on_null, with_orders
from model.flip.heads import head_tests, null_max_follows
from model.instrument import LENSES
from model.study import Bootstrap, FlipHeads, FlipPair
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
HEADS = FlipHeads(alpha=0.05, correction="bonferroni", permutations=2000, null_quantile=0.95, seed=0)


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
    return flip.measure_pairs(ckpt, [PAIR], BOOT, HEADS)


def test_winners_per_head(flips):
    pair = flips.lenses["alpha"].pairs[0]
    assert pair.winners == ["0110", "0000"]       # per head, the winner's index in (hammer, tile), A then B


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
    assert [w[2:] for w in v.pairs[0].winners] == ["11", "11"]
    assert v.changed_share == 0.0 and v.follows_share == 0.0
    assert flips.lenses["output_norm"].pairs[0].winners == flips.lenses["alpha"].pairs[0].winners


def test_the_models_own_resolution(flips):
    assert flips.model_follows == 1.0 and flips.model_flips_with_reader == 1 and flips.model_flips_share == 1.0
    assert flips.lenses["alpha"].pairs[0].closer == ["tile", "hammer"]     # per sentence, for a reader to recount


def test_the_example_is_the_first_pairs_candidate_weights(flips):
    assert flips.example == pytest.approx(np.array([[*a, *b] for a, b in WEIGHTS.values()]))


def test_no_pairs_measures_nothing(l6):
    """A study without flip pairs (the CLI's own sentences) has no flip results, not a crash."""
    out = flip.measure_pairs(l6, [], BOOT, None)
    assert out.n_pairs == 0 and out.lenses == {} and out.example == []


def test_the_per_head_test_of_the_hand_made_pair(flips):
    """One pair, head (1, 0) follows: 1 toward, 0 against, p = 1/2; two heads in the family."""
    h = flips.lenses["alpha"].heads
    assert (h.layer, h.head, h.follows, h.opposes) == ([1, 1], [0, 1], [1, 0], [0, 0])
    assert h.p_value == [0.5, 1.0] and h.p_corrected == [1.0, 1.0] and h.family == 2
    assert (h.best, h.best_follows, h.n_significant, h.significant) == ("L1H0", 1, 0, [])
    assert h.picks_reader == [1.0, 0.5]          # (1, 0): the reader's noun in both sentences; (1, 1): hammer twice


# -- per head: the sign test and the null of the maximum -----------------------------------------

def flags(*columns: str) -> np.ndarray:
    """One string per head, one character per pair -> [P, H] booleans ("1" set)."""
    return np.array([[c == "1" for c in col] for col in columns]).T


def test_sign_tests_with_bonferroni_on_paper():
    # head 0: 5 follows, 0 opposes: p = 1/32; head 1: 3 follows and 2 opposes: p = P(X >= 3) = 16/32;
    # head 2: no change: p = 1; family of 3.
    follows = flags("11111", "11100", "00000")
    opposes = flags("00000", "00011", "00000")
    h = head_tests(follows, opposes, np.zeros(3), 2, HEADS)
    assert h.p_value == pytest.approx([1 / 32, 1 / 2, 1.0])
    assert h.p_corrected == pytest.approx([3 / 32, 1.0, 1.0])       # times 3, capped at 1
    assert (h.layer, h.head) == ([1, 1, 2], [0, 1, 0])              # from layer 1, two heads a layer
    assert h.n_significant == 0 and h.best == "L1H0" and (h.best_follows, h.best_opposes) == (5, 0)
    loose = head_tests(follows, opposes, np.zeros(3), 2, FlipHeads(0.1, "bonferroni", 100, 0.95, 0))
    assert loose.significant == ["L1H0"] and loose.best_p_corrected == pytest.approx(3 / 32)


def test_a_sign_test_cares_for_opposes():
    """Nine follows against nine opposes is no evidence, however many follows."""
    h = head_tests(flags("1" * 9 + "0" * 9), flags("0" * 9 + "1" * 9), np.zeros(1), 1, HEADS)
    assert h.p_value[0] == pytest.approx(0.5927, abs=1e-4) and h.n_significant == 0


def test_the_null_swaps_a_pairs_heads_together():
    """Two heads that both follow in pair 1 and never change in pair 2: swapping pair 1 (half
    the time) leaves both at 0, so the largest count is 0 in half the permutations. Heads
    swapped one by one would leave both at 0 a quarter of the time only."""
    follows, opposes = flags("10", "10"), flags("00", "00")
    at = lambda q: null_max_follows(follows, opposes, FlipHeads(0.05, "bonferroni", 4000, q, 1))
    assert at(0.4) == 0 and at(0.6) == 1
    # A head that follows in both pairs, another that opposes in both: the maximum is 2 unless
    # exactly one pair is swapped (then 1 and 1).
    both = lambda q: null_max_follows(flags("11", "00"), flags("00", "11"), FlipHeads(0.05, "bonferroni", 4000, q, 1))
    assert both(0.4) == 1 and both(0.95) == 2


def test_the_best_head_has_the_smallest_uncorrected_p():
    """Where Bonferroni caps every p at 1, the best head is still the one with the smallest
    uncorrected p: 4 with the reader and none against (p = 1/16) beats 5 with and 4 against
    (p = 1/2), though it has fewer follows. 20 heads: 1/16 x 20 > 1."""
    follows = np.zeros((9, 20), bool)
    opposes = np.zeros((9, 20), bool)
    follows[:5, 0], opposes[5:, 0] = True, True          # head 0: 5 with, 4 against
    follows[:4, 1] = True                                # head 1: 4 with, 0 against
    h = head_tests(follows, opposes, np.zeros(20), 10, HEADS)
    assert h.p_corrected[:2] == [1.0, 1.0] and h.n_significant == 0
    assert (h.best, h.best_follows, h.best_opposes) == ("L1H1", 4, 0)
    assert h.best_p_value == pytest.approx(1 / 16)


def test_heads_that_change_too_rarely_cannot_pass():
    """Three heads, alpha 0.05: a head needs 6 changes (2^-6 x 3 < 0.05; 2^-5 x 3 > 0.05) to be
    able to pass even if all went the reader's way, whichever way they actually went."""
    follows, opposes = np.zeros((6, 3), bool), np.zeros((6, 3), bool)
    opposes[:, 0] = True          # 6 changes, all against: could have passed
    follows[:5, 1] = True         # 5 changes, all with: cannot
    h = head_tests(follows, opposes, np.zeros(3), 3, HEADS)
    assert h.n_powered == 1 and h.n_significant == 0


def test_passing_heads_counted_on_the_null_pairs():
    """The heads that pass on the flip pairs, on the null pairs: head 0 passes; on the null
    pairs it goes with the borrowed referent in 1 pair and against in 3; head 1 does not
    pass and is not counted."""
    flip_f, flip_o = flags("1111", "1100"), flags("0000", "0011")
    null_f, null_o = flags("1000", "1111"), flags("0111", "0000")
    got = passing_on_null((flip_f, flip_o), (null_f, null_o), np.array([True, False]), BOOT)
    assert (got.heads, got.null_follows, got.null_opposes, got.null_share) == (1, 1, 3, 0.25)
    assert (got.flip_follows, got.flip_opposes, got.flip_share) == (4, 0, 1.0)
    assert got.null_share_lo <= 0.25 <= got.null_share_hi and got.flip_share_lo == got.flip_share_hi == 1.0
    nothing = passing_on_null((flip_f, flip_o), (null_f, null_o), np.array([False, False]), BOOT)
    assert (nothing.heads, nothing.null_follows, nothing.null_share, nothing.null_share_lo) == (0, 0, None, None)


def _measured(pairs: list[FlipPair], follow: list[bool]) -> MeasuredPairs:
    """Two layers of one head; in pair k the layer-1 head follows the reader if follow[k],
    else opposes it; the layer-0 head always picks candidate 0."""
    ra = np.array([p.candidates.index(p.referents[0]) for p in pairs])
    win_a = np.stack([np.zeros(len(pairs), int), np.where(follow, ra, 1 - ra)], axis=1)
    win_b = np.stack([np.zeros(len(pairs), int), np.where(follow, 1 - ra, ra)], axis=1)
    shift = np.where(np.array(follow)[:, None], 1.0, -1.0) * np.ones((len(pairs), 2))
    lens = lambda x: {name: x for name in LENSES}
    closer = np.array([p.referents for p in pairs])
    far = np.ones(win_a.shape)   # every decision far from turning
    return MeasuredPairs(pairs, lens(win_a), lens(win_b), lens(shift), closer, np.ones((len(pairs), 2), bool),
                         lens(far), lens(far), np.ones(len(pairs)))



MIRROR = FlipPair(("The tile was broken by the hammer because it was brittle.",
                   "The tile was broken by the hammer because it was heavy."), "it", ("hammer", "tile"), ("tile", "hammer"),
                  "mirrored", 1)


def test_each_order_is_analysed_apart():
    """A head that follows in the pairs as written and opposes in their mirrors (it follows
    the order the nouns are named in, not the referent): half and half together."""
    pairs = [PAIR, PAIR, MIRROR, MIRROR]
    m = _measured(pairs, [True, True, False, False])
    take = m.take
    s = with_orders(take, np.arange(4), 1, BOOT, HEADS, keep_pairs=True)
    assert s.n_pairs == 4 and s.referent_a_named_first == 2 and len(s.lenses["alpha"].pairs) == 4
    assert s.lenses["alpha"].toward_share == 0.5 and s.lenses["alpha"].heads.follows == [2]
    assert s.lenses["alpha"].heads.opposes == [2]
    assert set(s.orders) == {"original", "mirrored"}
    original, mirrored = s.orders["original"].lenses["alpha"], s.orders["mirrored"].lenses["alpha"]
    assert (original.heads.follows, original.heads.opposes, original.toward_share) == ([2], [0], 1.0)
    assert (mirrored.heads.follows, mirrored.heads.opposes, mirrored.toward_share) == ([0], [2], 0.0)
    assert original.pairs == []
    assert s.lenses["alpha"].heads.n_significant_in_every_order == 0     # it passes in neither order
    # The reader's first referent, the tile, is named second as written and first in the mirror.
    assert (s.orders["original"].referent_a_named_first, s.orders["mirrored"].referent_a_named_first) == (0, 2)


def test_heads_passing_in_every_order_are_listed():
    """A head that follows in every pair passes as written, mirrored, and in both."""
    pairs = [PAIR] * 8 + [MIRROR] * 8
    m = _measured(pairs, [True] * 16)
    take = m.take
    h = with_orders(take, np.arange(16), 1, BOOT, HEADS, keep_pairs=False).lenses["alpha"].heads
    assert h.significant == h.significant_in_every_order == ["L1H0"] and h.n_significant_in_every_order == 1


def test_flip_on_the_real_model(small_measured):
    f = small_measured.results.flips
    assert f.n_pairs == 2 and f.null.n_pairs == 2
    assert f.referent_a_named_first == 1 and f.null.referent_a_named_first == 1     # one pair of each order
    assert set(f.orders) == set(f.null.orders) == {"original", "mirrored"}
    for s in (f, f.null, *f.orders.values()):
        for lens in s.lenses.values():
            assert lens.layer0_changed == 0          # a softmax keeps the ratio of two weights: see flip/analysis.py
            assert lens.n_heads == 5 * 12 and lens.heads.family == 5 * 12
            assert lens.changed_share_lo <= lens.changed_share <= lens.changed_share_hi
            assert all(len(w) == 6 * 12 for p in lens.pairs for w in p.winners)
    assert [p.sentences for p in f.null.lenses["alpha"].pairs][0][0].endswith("it was raining.")
