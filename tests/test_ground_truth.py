"""Part 8's measures (model/ground_truth.py, model/oracle_ground_truth.py, model/truth/).

- A one-layer model small enough to work out on paper (hidden size 4, two heads of size 2,
  identity value and output projections, no feed-forward): every measure's known answer,
  from the reference and from the oracle.
- The reference against the oracle on real sentences, and against a peer: `transformers`'
  own BertLayer running the rest of the layer, with the value vectors zeroed or the head's
  context edited by a hook (no installable package implements ALTI or Kobayashi 2021 for a
  BERT encoder; inseq's value zeroing serves generation models only).
- The rank statistics' intervals against scipy, and the reductions on the small study.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from model import ground_truth as gt
from model import oracle_ground_truth as ogt
from model.bootstrap import Resampler
from model.oracle import OracleOutput
from model.truth.inputs import LayerInputs
from model.truth.readings import FIXES, POSITION_BASELINES, position_scores
from model.truth.sentence import ablation_share, bound_ratios, fold, normalized
from model.truth.summary import harmful_profile, measured_survivors

# -- the hand-made model ------------------------------------------------------------------------
#
# Tokens [CLS], w, [SEP]; C = 4, two heads (head 0 reads dimensions 0-1, head 1 dimensions 2-3);
# W_V = W_O = I and no biases, so f^h_j is x_j's own dimensions of head h; no feed-forward and
# LayerNorms with gamma 1, beta 0 and a negligible eps, so the layer's output is the centred
# residual, scaled: a distance between outputs is a distance between centred residuals.

X = np.array([[1.0, 1.0, -1.0, -1.0],    # [CLS]
              [2.0, -2.0, 0.0, 0.0],     # w
              [0.0, 0.0, 1.0, -1.0]])    # [SEP]
ALPHA = np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]],        # head 0
                  [[1.0, 0.0, 0.0], [0.25, 0.25, 0.5], [0.0, 0.0, 1.0]]])      # head 1
# Worked out by hand for w (token 1): r = x_w + 0.5 f0_CLS + 0.5 f0_w + 0.25 f1_CLS + 0.5 f1_SEP.
R = np.array([3.5, -2.5, 0.25, -0.75])


def hand_checkpoint() -> SimpleNamespace:
    C, F = 4, 4
    eye, zero = np.eye(C, dtype=np.float32), np.zeros(C, dtype=np.float32)
    p = "encoder.layer.0."
    tensors = {
        p + "attention.self.value.weight": eye, p + "attention.self.value.bias": zero,
        p + "attention.output.dense.weight": eye, p + "attention.output.dense.bias": zero,
        p + "attention.output.LayerNorm.weight": np.ones(C, np.float32), p + "attention.output.LayerNorm.bias": zero,
        p + "intermediate.dense.weight": np.zeros((F, C), np.float32), p + "intermediate.dense.bias": np.zeros(F, np.float32),
        p + "output.dense.weight": np.zeros((C, F), np.float32), p + "output.dense.bias": zero,
        p + "output.LayerNorm.weight": np.ones(C, np.float32), p + "output.LayerNorm.bias": zero,
    }
    config = SimpleNamespace(n_layer=1, n_head=2, d_model=C, d_head=2, layer_norm_eps=1e-12)
    return SimpleNamespace(tensors=tensors, config=config)


def distance(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    a, b = a - a.mean(), b - b.mean()
    return 1.0 - a @ b / np.linalg.norm(a) / np.linalg.norm(b)


ASK = gt.Ask(tokens=[[1]], heads=[(0, 0, 0), (0, 0, 1)], zeroing=[(0, 0)])


def run_reference():
    ck = hand_checkpoint()
    return gt.sentence([gt.layer_weights(ck, 0)], X[None].astype(np.float32), ALPHA[None], ASK)


def run_oracle():
    ck = hand_checkpoint()
    v = X.reshape(3, 2, 2).transpose(1, 0, 2)                     # [nh, T, hs]: W_V = I
    o = OracleOutput(hidden=X, alpha=[ALPHA], value=[v], f_norm=[np.linalg.norm(v, axis=-1)], hidden_states=[X, X])
    return ogt.sentence([ogt.layer_weights(ck, 0)], o, ASK)


IMPLEMENTATIONS = {"reference": run_reference, "oracle": run_oracle}


@pytest.fixture(params=list(IMPLEMENTATIONS))
def hand(request):
    return IMPLEMENTATIONS[request.param]()


def test_ablation_on_head_0(hand):
    # Head 0 gives w 0.5 f_CLS = (.5, .5, 0, 0) from the sink and 0.5 f_w = (1, -1, 0, 0) from content.
    sink, content, other, head = hand.effects[0]
    assert sink == pytest.approx(distance(R, R - [0.5, 0.5, 0, 0]), abs=1e-9)
    assert content == pytest.approx(distance(R, R - [1.0, -1.0, 0, 0]), abs=1e-9)
    assert other == pytest.approx(0.0, abs=1e-12)          # content without w's own token: nothing left
    assert head == pytest.approx(distance(R, R - [1.5, -0.5, 0, 0]), abs=1e-9)
    assert ablation_share(hand.effects[0]) == pytest.approx(sink / (sink + content))


def test_ablation_on_head_1(hand):
    # Head 1 gives w 0.25 f_CLS + 0.5 f_SEP = (0, 0, .25, -.75) from the sink, and nothing from w (f1_w = 0).
    sink, content, _, head = hand.effects[1]
    assert sink == pytest.approx(distance(R, [3.5, -2.5, 0, 0]), abs=1e-9)
    assert content == pytest.approx(0.0, abs=1e-12)
    assert head == pytest.approx(sink, abs=1e-9)
    assert ablation_share(hand.effects[1]) == pytest.approx(1.0)


def test_kobayashi2021(hand):
    # ||centre(z_wj)||: z_CLS = (.5, .5, -.25, -.25), z_w = x_w + 0.5 f0_w = (3, -3, 0, 0), z_SEP = (0, 0, .5, -.5).
    expected = np.array([0.75, np.sqrt(18.0), np.sqrt(0.5)])
    assert hand.kobayashi[0, 1] == pytest.approx(expected, rel=1e-6)   # the reference forms them in float32


def test_alti(hand):
    # y = sum of the centred z = (3.375, -2.625, .125, -.875), ||y||_1 = 7; ||y - T_j||_1 = 7, 1.75, 6.75.
    assert hand.alti[0, 1] == pytest.approx([0.0, 5.25, 0.25], abs=1e-6)


def test_value_zeroing(hand):
    removed = [[0.5, 0.5, -0.25, -0.25], [1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.5, -0.5]]
    assert hand.zeroing[0][0] == pytest.approx([distance(R, R - np.array(d)) for d in removed], abs=1e-9)


def test_bound_ratio():
    # sum_j alpha_wj ||f_j||: head 0, 0.5 sqrt(2) + 0.5 sqrt(8); head 1, 0.25 sqrt(2) + 0.5 sqrt(2); median: their mean.
    from model import instrument

    v = X.reshape(3, 2, 2).transpose(1, 0, 2)
    ratios = bound_ratios(ALPHA[None], np.linalg.norm(v, axis=-1)[None], instrument.word_map([None, 0, None]))
    assert ratios[0, :, 0] == pytest.approx([4 / 3, 2 / 3])


def test_fold_normalizes_token_rows_then_folds():
    from model import instrument

    t = gt.SentenceTruth(np.zeros((0, 4)), [np.array([[1.0, 2.0, 1.0, 0.0], [0.0, 1.0, 1.0, 2.0]])],
                         np.ones((1, 4, 4)), np.ones((1, 4, 4)))
    ask = gt.Ask(tokens=[[1, 2]], heads=[], zeroing=[(0, 0)])
    f = fold(t, ask, instrument.word_map([None, 0, 0, None]))
    # each token row to 1 first (.25 .5 .25 0 and 0 .25 .25 .5), their mean, columns [CLS] | w (2 tokens) | [SEP]
    assert f.zeroing[(0, 0)] == pytest.approx([0.125, 0.625, 0.25])   # (word, layer)
    assert f.fix_rows["alti"][0, 0] == pytest.approx([0.25, 0.5, 0.25])


# -- added after the sceptical reading: the lazy baselines, the harmful rows, the survivors ---------

def test_position_scores_know_only_where_the_word_is():
    scores = position_scores(np.array([0, 1, 4, 0]))
    assert scores["position"].tolist() == [0.0, -1.0, -4.0, 0.0]      # the earlier the higher
    assert scores["first_word"].tolist() == [1.0, 0.0, 0.0, 1.0]


def test_harmful_profile_on_a_hand_made_case():
    # Five rows: (word, layer, head); the first, second, fourth and fifth are harmful.
    word, layer, head = np.array([0, 0, 3, 0, 2]), np.array([6, 6, 6, 0, 7]), np.array([4, 4, 4, 0, 4])
    harmful = np.array([True, True, False, True, True])
    # Every displayed row: L6H4 is opened for four words, three of them first words.
    opened = (np.array([0, 0, 3, 0, 5]), np.array([6, 6, 6, 6, 1]), np.array([4, 4, 4, 4, 2]))
    h = harmful_profile(word, layer, head, harmful, *opened)
    assert (h.n_rows, h.first_word) == (4, 3)                       # rows 0, 1, 3 are first words
    assert (h.top_head, h.top_head_rows) == ("L6H4", 2)             # L6H4 twice, L0H0 and L7H4 once
    assert (h.top_head_opened, h.top_head_opened_first_word) == (4, 3)
    # A tie goes to the lowest layer: L0H0 and L6H4 once each.
    tie = harmful_profile(word, layer, head, np.array([True, False, False, True, False]), *opened)
    assert (tie.top_head, tie.top_head_rows, tie.top_head_opened) == ("L0H0", 1, 0)
    none = harmful_profile(word, layer, head, np.zeros(5, bool), *opened)
    assert (none.n_rows, none.top_head, none.top_head_opened) == (0, None, 0)


def test_measured_survivors_on_a_hand_made_case():
    # Rows of the ablation's sample; three survive, from two sentences; threshold 1e-3.
    surv = np.array([True, True, False, True])
    head_effect = np.array([2e-3, 5e-4, 9.0, 4e-3])
    sink_effect = np.array([1.5e-3, 1e-4, 9.0, 5e-4])
    n, sentences, above, harmful, over = measured_survivors(surv, head_effect, sink_effect, np.array([7, 7, 8, 9]), 1e-3)
    assert (n, sentences, above, harmful) == (3, 2, 2, 1)          # the non-survivor's 9.0 counts nowhere
    assert over == pytest.approx(2.0)                              # median 2e-3 over 1e-3
    empty = measured_survivors(np.zeros(4, bool), head_effect, sink_effect, np.arange(4), 1e-3)
    assert empty[:4] == (0, 0, 0, 0) and np.isnan(empty[4])


# -- the reference against the oracle and a peer, on real sentences --------------------------------

SENTENCES = ["The turbine blades are manufactured from a nickel-based superalloy with ceramic coatings.",
             "Who's bringing the dessert, you or your brother?"]


@pytest.fixture(scope="module")
def real(l6):
    from model import activations, oracle
    from model.tokenize import tokenize

    toks = [tokenize(s, l6.tokenizer_dir, 512) for s in SENTENCES]
    with LayerInputs() as store:
        acts = activations.from_reference(l6, [t.ids for t in toks], store)
        xs = [store.read(i).copy() for i in range(len(toks))]
    return toks, acts, xs, list(oracle.forward(l6, [t.ids for t in toks]))


def real_ask(tok, L, nh):
    tokens = [[t for t, w in enumerate(tok.word_ids) if w == word] for word in range(len(tok.words))]
    return gt.Ask(tokens, heads=[(w, (3 * w) % L, (5 * w + 1) % nh) for w in range(len(tokens))],
                  zeroing=[(w, (2 * w) % L) for w in range(len(tokens))])


def test_layer_inputs_are_the_reference_s_and_the_oracle_s(l6, real):
    toks, acts, xs, outs = real
    for x, o in zip(xs, outs):
        assert x.shape == (l6.config.n_layer, len(o.hidden), l6.config.d_model)
        assert np.abs(x - np.stack(o.hidden_states[:-1])).max() < 1e-4


def test_reference_agrees_with_the_oracle(l6, real):
    toks, acts, xs, outs = real
    L, nh = l6.config.n_layer, l6.config.n_head
    W = [gt.layer_weights(l6, l) for l in range(L)]
    OW = [ogt.layer_weights(l6, l) for l in range(L)]
    for tok, a, x, o in zip(toks, acts, xs, outs):
        ask = real_ask(tok, L, nh)
        ref, orc = gt.sentence(W, x, a.alpha, ask), ogt.sentence(OW, o, ask)
        shares = lambda e: np.array([ablation_share(row) for row in e])
        assert np.abs(shares(ref.effects) - shares(orc.effects)).max() < 1e-5
        assert np.abs(ref.effects - orc.effects).max() < 1e-5 * np.abs(orc.effects).max()
        for r_, o_ in ((ref.kobayashi, orc.kobayashi), (ref.alti, orc.alti)):
            assert np.abs(normalized(r_) - normalized(o_)).max() < 1e-5
        for r_, o_ in zip(ref.zeroing, orc.zeroing):
            assert np.abs(normalized(r_) - normalized(o_)).max() < 1e-5


@pytest.fixture(scope="module")
def peer(l6):
    """transformers' BertModel on the same weights (the test suite's peer)."""
    import torch
    import transformers

    from model import weights

    folder = l6.weights_path.parent
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    return model, torch


def test_value_zeroing_against_transformers(l6, real, peer):
    """The peer zeroes token j's value vector with a hook on the value projection and runs its
    own layer; the reference's distances must match."""
    model, torch = peer
    toks, acts, xs, _ = real
    tok, x, a = toks[0], xs[0], acts[0]
    layer, T = 2, len(tok.ids)
    W = [gt.layer_weights(l6, l) for l in range(l6.config.n_layer)]
    word = 3
    ask = gt.Ask([[t for t, w in enumerate(tok.word_ids) if w == k] for k in range(len(tok.words))], [], [(word, layer)])
    ours = gt.sentence(W, x, a.alpha, ask).zeroing[0]
    block = model.encoder.layer[layer]
    hidden = torch.from_numpy(x[layer][None].astype(np.float32))
    with torch.no_grad():
        base = block(hidden)[0].double()          # BertLayer returns the hidden states [B, T, C]
        for j in range(T):
            handle = block.attention.self.value.register_forward_hook(
                lambda mod, inp, out: out.index_fill(1, torch.tensor([j]), 0.0))
            moved = block(hidden)[0].double()
            handle.remove()
            for q, i in enumerate(ask.tokens[word]):
                theirs = 1 - torch.nn.functional.cosine_similarity(base[i], moved[i], dim=0).item()
                assert ours[q, j] == pytest.approx(theirs, rel=2e-3, abs=2e-6)


def test_ablation_against_transformers(l6, real, peer):
    """The peer's layer with one head's context at one token edited (the sink's part taken
    out) by a hook on its self-attention output."""
    model, torch = peer
    toks, acts, xs, _ = real
    tok, x, a = toks[1], xs[1], acts[1]
    layer, head, i = 1, 4, 2
    hs = l6.config.d_head
    W = [gt.layer_weights(l6, l) for l in range(l6.config.n_layer)]
    word = tok.word_ids[i]
    ask = gt.Ask([[t for t, w in enumerate(tok.word_ids) if w == k] for k in range(len(tok.words))], [(word, layer, head)], [])
    assert ask.tokens[word] == [i]
    ours = gt.sentence(W, x, a.alpha, ask).effects[0]
    block = model.encoder.layer[layer]
    hidden = torch.from_numpy(x[layer][None].astype(np.float32))
    T = x.shape[1]
    with torch.no_grad():
        v = block.attention.self.value(hidden)[0].view(T, -1, hs)[:, head]          # [T, hs]
        alpha = torch.from_numpy(a.alpha[layer, head, i])
        base = block(hidden)[0, i].double()
        for s, keep in ((gt.SINK, [0, T - 1]), (gt.CONTENT, list(range(1, T - 1)))):
            part = (alpha[keep, None].float() * v[keep]).sum(0)

            def edit(mod, inp, out, part=part):
                ctx = out[0].clone()
                ctx[0, i, head * hs:(head + 1) * hs] -= part
                return (ctx, *out[1:])

            handle = block.attention.self.register_forward_hook(edit)
            moved = block(hidden)[0, i].double()
            handle.remove()
            theirs = 1 - torch.nn.functional.cosine_similarity(base, moved, dim=0).item()
            assert ours[s] == pytest.approx(theirs, rel=2e-3, abs=2e-6)


# -- rank statistics -------------------------------------------------------------------------------

def test_spearman_and_auc_of_every_count_one_are_scipy_s():
    from scipy import stats

    rng = np.random.default_rng(3)
    x, unit = rng.normal(size=200), np.repeat(np.arange(40), 5)
    y = x + rng.normal(size=200)
    x[:30] = x[0]   # ties
    rs = Resampler(40, 5, 1, 0.95)
    rs.counts[:] = 1
    assert rs.spearman(x, y, unit)[0] == pytest.approx(stats.spearmanr(x, y).statistic)
    flags = y > 0.3
    auc = stats.mannwhitneyu(x[flags], x[~flags]).statistic / (flags.sum() * (~flags).sum())
    assert rs.auc(x, flags, unit)[0] == pytest.approx(auc)


def test_a_unit_drawn_twice_counts_as_two_tied_copies():
    from scipy import stats

    x, y, unit = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 1.0, 4.0, 3.0]), np.array([0, 1, 2, 3])
    rs = Resampler(4, 1, 1, 0.95)
    rs.counts[:] = [[2, 0, 1, 1]]
    xs, ys = np.array([1.0, 1.0, 3.0, 4.0]), np.array([2.0, 2.0, 4.0, 3.0])
    assert rs.spearman(x, y, unit)[0] == pytest.approx(stats.spearmanr(xs, ys).statistic)


# -- the reductions on the small study --------------------------------------------------------------

def test_small_study_rows_and_verdicts(small_measured, small_study):
    m = small_measured
    g = m.results.ground_truth
    rows = m.results.rows
    n = len(rows["sentence"])
    ablated = small_study.ablation_sample("l6")
    for lens in ("alpha", "value_norm", "output_norm"):
        share = rows[lens]["ablation_share"]
        assert len(share) == n
        assert {s for s, v in zip(rows["sentence"], share) if v is not None} == set(ablated) & set(rows["sentence"])
        assert all(0 <= v <= 1 for v in share if v is not None)
    for fix in FIXES:
        f = g.fixes[fix]
        sink = np.array([np.nan if v is None else v for v in rows[fix]["sink_share"]])
        measured = ~np.isnan(sink)
        assert f.n_rows_all == measured.sum() and f.rows_above == (sink[measured] > 0.5).sum()
        assert f.adopted == (f.rows_above == 0)
    sample = small_study.zeroing_sample("l6")
    assert {s for s, v in zip(rows["sentence"], rows["value_zeroing"]["sink_share"]) if v is not None} <= set(sample)
    assert g.harmful_threshold == pytest.approx(np.median([v for v in rows["alpha"]["head_effect"] if v is not None]))
    assert g.n_threshold_rows == sum(v is not None for v in rows["alpha"]["head_effect"])
    assert g.agreement is not None and g.agreement.max_abs_ablation_share < 1e-5
    # Ablation shares are compared on the oracle's sentences inside the ablation's sample only
    # (on these 12 sentences every oracle sentence is inside it; on the corpus, MPNet's are not).
    oracle = range(0, len(small_study.sentences), small_study.truth_oracle_every)
    assert g.agreement.ablation_sentences == len(set(oracle) & set(ablated)) <= g.agreement.sentences == len(oracle)
    # Sample sizes in held-out sentences (added after the sceptical reading).
    test = set(small_study.halves["test"])
    held = {s for s, v in zip(rows["sentence"], rows["alpha"]["ablation_share"]) if v is not None and s in test}
    assert g.ablation["alpha"].n_sentences == len(held) and g.tracking["alpha"].n_sentences == len(held)
    for fix in FIXES:
        have = {s for s, v in zip(rows["sentence"], rows[fix]["sink_share"]) if v is not None and s in test}
        assert g.fixes[fix].n_test_sentences == len(have)
        other = [v for v in rows[fix]["sink_share_other"] if v is not None]
        assert g.fixes[fix].max_sink_other == pytest.approx(max(other))
        assert g.fixes[fix].rows_above_other == sum(v > 0.5 for v in other)
    # The position baselines are scored on the same rows as alpha.
    for name in POSITION_BASELINES:
        assert g.tracking[name].n_rows == g.tracking["alpha"].n_rows
    assert g.agreement.max_abs_kobayashi2021 < 1e-5 and g.agreement.max_abs_alti < 1e-5   # float32 on fix-only layers
