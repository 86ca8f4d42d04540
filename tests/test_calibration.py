"""Part 9 (model/calibration/, the interventions in model/ground_truth.py, the confirmation
corpus of model/confirmation.py).

- The interventions on the hand-made model of test_ground_truth.py, worked out on paper, and
  the display's own change (the sink's weight redistributed) against the layer run again
  with the renormalized row.
- The layer truth on a real sentence against `transformers`' own BertLayer, the head's
  context edited by a hook; `Encoder.continue_from` against the forward pass it continues.
- The scores (precision, recall, the criterion, Wilson's bounds, the paired differences) on
  rows whose answer can be counted by hand; the squared-scale slope on rows built to be 2;
  the numerical floor.
- The confirmation corpus: the registered rule, run again on Debian's WordNet, writes the
  committed file byte for byte.
"""
from __future__ import annotations

import copy

from pathlib import Path

import numpy as np
import pytest
import torch

from model.calibration import readings, scores, sets
from model import ground_truth as gt
from model.bootstrap import Resampler

from test_ground_truth import ALPHA, R, X, hand_checkpoint, peer, real  # noqa: F401 (fixtures)

ROOT = Path(__file__).resolve().parent.parent


def hand_parts(head: int):
    w = gt.layer_weights(hand_checkpoint(), 0)
    x, alpha = torch.from_numpy(X), torch.from_numpy(ALPHA)
    return w, gt.head_parts(x, alpha, w, torch.tensor([1]), torch.tensor([head]))


def layer_norm(v) -> np.ndarray:
    v = np.asarray(v, float)
    return (v - v.mean()) / np.sqrt(((v - v.mean()) ** 2).mean() + 1e-12)


@pytest.mark.parametrize("head, sink, content, mass", [
    (0, [0.5, 0.5, 0, 0], [1, -1, 0, 0], 0.5),            # row [0.5, 0.5, 0]: 0.5 f_CLS, 0.5 f_w
    (1, [0, 0, 0.25, -0.75], [0, 0, 0, 0], 0.75),         # row [0.25, 0.25, 0.5]; f1_w is zero
])
def test_head_parts_by_hand(head, sink, content, mass):
    _, (r, s, c, m) = hand_parts(head)
    assert r[0].numpy() == pytest.approx(R)
    assert s[0].numpy() == pytest.approx(sink) and c[0].numpy() == pytest.approx(content)
    assert m[0].item() == pytest.approx(mass)


def test_interventions_by_hand():
    """No feed-forward, LayerNorms of gain 1: the layer's output is LN(r), LN applied twice."""
    w, parts = hand_parts(0)
    y, changed = gt.intervened(*parts, w)
    sink, content = np.array([0.5, 0.5, 0, 0]), np.array([1.0, -1.0, 0, 0])
    assert y[0].numpy() == pytest.approx(layer_norm(R))
    expected = [R - sink, R - content, R - sink - content, R - sink + 1.0 * content]   # s / (1 - s) = 1
    for k, r in enumerate(expected):
        assert changed[0, k].numpy() == pytest.approx(layer_norm(r), abs=1e-9), k


def test_redistribution_is_the_layer_with_the_row_renormalized():
    """The display's change: head 0's row at w, [0.5, 0.5, 0], becomes its content weights
    renormalized, [0, 1, 0]; the layer run again on that attention."""
    w, parts = hand_parts(0)
    _, changed = gt.intervened(*parts, w, (gt.REDISTRIBUTED,))
    alpha = ALPHA.copy()
    alpha[0, 1] = [0.0, 1.0, 0.0]
    _, r = gt.attention_parts(torch.from_numpy(X), torch.from_numpy(alpha), w)
    assert changed[0, 0].numpy() == pytest.approx(gt.rest_of_layer(r[1], w).numpy(), abs=1e-9)


def test_a_row_all_sink_redistributes_nothing():
    s = torch.tensor([1.0])
    v = torch.ones(1, 4)
    w = gt.layer_weights(hand_checkpoint(), 0)
    y, changed = gt.intervened(torch.from_numpy(R[None]), v, torch.zeros(1, 4), s, w, (gt.REDISTRIBUTED, gt.SINK_OUT))
    assert torch.equal(changed[0, 0], changed[0, 1])


# -- against transformers' BertLayer, and the forward pass -----------------------------------------

def test_layer_truth_against_transformers(l6, real, peer):
    """Our linear layer truth of one row against the peer's layer, the head's context at the
    token edited by a hook (the sink's part, then the content's, taken out)."""
    model, _ = peer
    toks, acts, xs, _ = real
    x, a = xs[1], acts[1]
    layer, head, i = 1, 4, 2
    hs, T = l6.config.d_head, x.shape[1]
    w = gt.layer_weights(l6, layer)
    y, changed = gt.intervened(*gt.head_parts(torch.from_numpy(x[layer]), torch.from_numpy(a.alpha[layer]), w,
                                              torch.tensor([i]), torch.tensor([head])), w, (gt.SINK_OUT, gt.CONTENT_OUT))
    ours = ((changed[0] - y[0]).norm(dim=-1) / y[0].norm()).numpy()
    block = copy.deepcopy(model.encoder.layer[layer]).double()   # the peer's layer, in float64 as ours
    hidden = torch.from_numpy(x[layer][None])
    with torch.no_grad():
        v = block.attention.self.value(hidden)[0].view(T, -1, hs)[:, head]
        alpha = torch.from_numpy(a.alpha[layer, head, i])
        base = block(hidden)[0, i]
        for k, keep in ((gt.SINK_OUT, [0, T - 1]), (gt.CONTENT_OUT, list(range(1, T - 1)))):
            part = (alpha[keep, None] * v[keep]).sum(0)

            def edit(mod, inp, out, part=part):
                ctx = out[0].clone()
                ctx[0, i, head * hs:(head + 1) * hs] -= part
                return (ctx, *out[1:])

            handle = block.attention.self.register_forward_hook(edit)
            moved = block(hidden)[0, i]
            handle.remove()
            theirs = ((moved - base).norm() / base.norm()).item()
            assert ours[k] == pytest.approx(theirs, rel=1e-9, abs=1e-12), k
            assert theirs > 1e-4   # the row does something: the comparison is not of two zeros


def test_continue_from_an_unchanged_layer_is_the_forward_pass(l6, real):
    from model import encoder

    toks, acts, xs, _ = real
    model = encoder.Encoder.from_checkpoint(l6)
    tok, x = toks[0], xs[0]
    for start in (1, 4):
        last = model.continue_from(torch.from_numpy(x[start][None]), start, torch.tensor([tok.ids]))
        assert last[0].numpy() == pytest.approx(acts[0].hidden, abs=1e-4)
        assert not np.allclose(x[start], acts[0].hidden, atol=1e-2)   # layers did run


@pytest.mark.parametrize("nudge", [0.0, 1e-3])
@pytest.mark.parametrize("name", ["l6", pytest.param("mpnet", marks=pytest.mark.models)])   # mpnet: 4 s to load
def test_continue_from_a_few_tokens_is_those_tokens_of_every_token(request, name, nudge):
    """The last layer run for a few queries, each copy its own (Part 10's truth reads a row's
    copies at its word alone), gives those tokens' states as the whole layer does, MPNet's
    position bias and the simulated machine's nudges included (the nudges drawn for the whole
    sentence, then read at those tokens)."""
    from model import encoder, perturb

    model = encoder.Encoder.from_checkpoint(request.getfixturevalue(name))
    model.perturbation = perturb.Perturbation(nudge, 3)
    B, T, C = 3, 9, model.config.d_model
    x = torch.randn(B, T, C, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ids = torch.tensor([list(range(1000, 1000 + T))] * B)
    start = len(model.encoder.layer) - 2
    read = torch.zeros(B, T, dtype=torch.bool)
    read[0, [1, 2, 6]] = read[1, 4] = read[2] = True                       # a few, one, every token
    every = model.continue_from(x, start, ids)
    few = model.continue_from(x, start, ids, read)
    assert few.shape == (3 + 1 + T, C)
    assert torch.allclose(few, every[read], rtol=1e-12, atol=1e-12)
    assert not torch.allclose(every[:, 1], every[:, 2], atol=1e-3)   # the positions are read apart


# -- the scores ----------------------------------------------------------------------------------

BAR = {"precision_lo": 0.5, "recall_lo": 0.5}


def scored(reading, truth, sentence, alpha=None):
    rs = Resampler(int(max(sentence)) + 1, 400, 0, 0.95)
    return scores.score("r", np.array(reading), np.array(truth), np.array(sentence), rs, 0.5, BAR, alpha)


def test_precision_and_recall_counted_by_hand():
    # badge (reading > 0.5) on rows 0, 1, 3; truth above half on rows 0, 3, 4
    s = scored([0.6, 0.7, 0.2, 0.8, 0.4, 0.1], [0.9, 0.1, 0.3, 0.6, 0.7, 0.2], [0, 1, 2, 3, 4, 5])
    assert (s.n_badged, s.n_truth_above, s.n_both) == (3, 3, 2)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    assert s.precision_lo <= s.precision <= s.precision_hi and s.precision_lo < s.precision_hi


def test_unmeasured_rows_are_left_out():
    s = scored([0.6, 0.7, 0.9], [0.9, np.nan, 0.2], [0, 1, 2])
    assert (s.n_rows, s.n_badged, s.n_both) == (2, 2, 1)


def test_a_badge_that_never_fires_has_no_precision_and_zero_recall():
    s = scored([0.1, 0.2, 0.3, 0.4], [0.9, 0.1, 0.8, 0.2], [0, 1, 2, 3])
    assert s.precision is None and s.recall == 0.0 and not s.fit


def test_the_criterion_reads_both_lower_bounds():
    # A reading that matches the truth on 40 sentences: fit. The same truth, a reading that
    # also fires on 40 rows whose truth is low: precision 1/2 at best, its lower bound below.
    truth = np.r_[np.full(40, 0.9), np.full(40, 0.1)]
    sentence = np.arange(80)
    assert scored(truth, truth, sentence).fit
    noisy = scored(np.full(80, 0.9), truth, sentence)
    assert noisy.recall == 1.0 and noisy.precision == pytest.approx(0.5) and not noisy.fit


def test_paired_difference_with_alpha():
    truth = np.r_[np.full(30, 0.9), np.full(30, 0.1)]
    sentence = np.arange(60)
    alpha = np.full(60, 0.9)                                # fires everywhere: precision 1/2
    same = scored(alpha, truth, sentence, alpha=(alpha, truth))
    assert same.precision_vs_alpha == 0.0 and same.precision_vs_alpha_lo == same.precision_vs_alpha_hi == 0.0
    better = scored(truth, truth, sentence, alpha=(alpha, truth))
    assert better.precision_vs_alpha == pytest.approx(0.5) and better.precision_vs_alpha_lo > 0
    assert better.recall_vs_alpha == 0.0


def test_wilson_bounds():
    assert scores.wilson_lo(10, 10, 0.95) == pytest.approx(0.7225, abs=1e-4)
    assert scores.wilson_lo(2, 2, 0.95) == pytest.approx(0.3424, abs=1e-4)
    assert scores.wilson_lo(0, 5, 0.95) == pytest.approx(0.0, abs=1e-12)
    assert scores.wilson_lo(0, 0, 0.95) is None
    # two rows of two: the bootstrap's bounds are 1, Wilson's say how little that shows
    s = scored([0.9, 0.9, 0.1, 0.1], [0.9, 0.9, 0.1, 0.1], [0, 1, 2, 3])
    assert s.fit and not s.fit_wilson


def test_the_squared_slope_finds_a_square():
    rng = np.random.default_rng(0)
    linear = np.exp(rng.normal(-3, 1, size=(200, 2)))
    out = sets._squared(linear, 0.5 * linear[:, 0] ** 2, 0.5 * linear[:, 1] ** 2, np.arange(200) // 4,
                               Resampler(50, 200, 0, 0.95))
    assert out["slope"] == pytest.approx(2.0) and out["slope_lo"] == pytest.approx(2.0) and out["r"] == pytest.approx(1.0)
    out = sets._squared(linear, linear[:, 0], linear[:, 1], np.arange(200) // 4, Resampler(50, 200, 0, 0.95))
    assert out["slope"] == pytest.approx(1.0)


def test_rows_at_the_numerical_floor():
    cal = {"sets": {"corpus": {"floor_effects": [1e-9, 5e-7, 3e-6]}, "confirmation": {"floor_effects": [2e-6]}}}
    sets.at_floor(cal, 5e-7, 2.0)
    assert cal["sets"]["corpus"]["n_floor"] == 2 and cal["sets"]["confirmation"]["n_floor"] == 0
    assert cal["sets"]["corpus"]["floor"] == pytest.approx(1e-6)
    assert "floor_effects" not in cal["sets"]["corpus"]


# -- the confirmation corpus -----------------------------------------------------------------------

@pytest.mark.skipif(not (Path("/usr/share/wordnet") / "data.noun").is_file(), reason="Debian's wordnet-base is not installed")
@pytest.mark.parametrize("block, name", [("confirmation", "confirmation"), ("replication", "replication")])
def test_the_rule_writes_the_committed_corpus(tmp_path, block, name):
    """make test installs Debian's wordnet-base, so this runs in CI: each WordNet corpus is what
    its registered rule picks, nothing edited by hand."""
    from model import confirmation

    docs = tmp_path / "docs"
    docs.mkdir()
    for file in ("study.yml", "corpus.tsv"):
        (docs / file).write_bytes((ROOT / "docs" / file).read_bytes())
    path, n, of = confirmation.write(docs / "study.yml", block=block)
    assert path.read_bytes() == (ROOT / "docs" / f"{name}.tsv").read_bytes()
    assert (docs / f"{name}.NOTICE").read_bytes() == (ROOT / "docs" / f"{name}.NOTICE").read_bytes()
    assert n == len(path.read_text(encoding="utf-8").splitlines()) and of > 15 * n


def test_the_replication_shares_no_sentence_with_the_other_corpora():
    read = lambda name: {line.split("\t", 1)[1] for line in (ROOT / "docs" / name).read_text(encoding="utf-8").splitlines()}
    replication = read("replication.tsv")
    assert len(replication) > 1400 and not replication & read("confirmation.tsv") and not replication & read("corpus.tsv")


# -- on the small study ----------------------------------------------------------------------------

def test_small_study_calibration(small_measured, small_study):
    """The layer truth on every held-out row of both corpora, every reading scored; the
    downstream truths on alpha's head and on the registered sample only; the replication with
    the downstream truths alone, its sample its own; every row's readings and truths kept."""
    cal = small_measured.results.calibration
    a = small_measured.rows["alpha"]
    held_out = cal["sets"]["corpus"]
    assert held_out["n_rows"] == int(a.where(small_study.halves["test"]).sum())
    assert cal["sets"]["confirmation"]["n_sentences"] == len(small_study.calibration.confirmation)
    rep = cal["sets"]["replication"]
    assert set(rep["truths"]) == {"word", "sentence"} and "floor_effects" not in rep and "n_floor" not in rep
    every = small_study.calibration.replication.downstream_every
    assert rep["n_downstream_sentences"] == len(range(0, len(small_study.calibration.replication.sentences), every))
    assert set(cal["replicates"]) - {"margins"} == set(readings.ON_ALPHAS_HEAD)
    assert cal["verdict"]["alpha"] in {"fit", "not fit", "undetermined"}
    for name, st in cal["sets"].items():
        rows = st["rows"]
        assert len(rows["sentence"]) == len(rows["word"]) == st["n_rows"] == len(rows["readings"]["alpha"])
        if name != "fresh":   # Part 10's fresh corpus: its truth alone (tests/test_part10.py)
            assert len(rows["truths"]["word"]["alpha_head"]) == st["n_rows"]
    for st in (held_out, cal["sets"]["confirmation"]):
        layer = st["truths"]["layer"]
        assert set(layer) >= {"alpha", "value_norm", "output_norm", "value_norm_on_alpha", "kobayashi2021", "alti", "value_zeroing",
                              "weighted_alpha"}
        # measured on every row; value zeroing's reading exists on Part 8's sample of corpus.tsv only
        assert all(s.n_rows == st["n_rows"] for r, s in layer.items() if r != "value_zeroing")
        assert 0 <= layer["value_zeroing"].n_rows < st["n_rows"]
        assert set(st["truths"]["word"]) == set(readings.ON_ALPHAS_HEAD)
        assert 0 < st["truths"]["word"]["alpha"].n_rows < st["n_rows"]
        assert st["n_floor"] >= 0 and "floor_effects" not in st
    every = small_study.calibration.downstream_every["l6"]
    expected = {s for s in range(0, len(small_study.sentences), every)} & set(small_study.halves["test"])
    assert held_out["n_downstream_sentences"] == len(expected)
    assert held_out["truths"]["layer"]["value_zeroing"].n_rows > 0
    assert cal["sets"]["confirmation"]["truths"]["layer"]["value_zeroing"].n_rows == 0 and not cal["fit"]["value_zeroing"]
    assert cal["verdict"]["value_zeroing"] == "not measured"   # no row of the confirmation corpus: nothing to judge
    assert cal["stop_rule"]["alpha"]["n_rows"] == len(a.sentence)
    assert set(cal["fit"]) - {"margins"} == set(held_out["truths"]["word"]) == set(readings.ON_ALPHAS_HEAD)
    assert set(cal["fit_layer"]) - {"margins"} == set(held_out["truths"]["layer"])


def test_a_verdict_s_margin_counts_only_what_could_turn_it():
    """A failing verdict turns only if every failing bound can cross its bar; a passing one
    if any bound can (mpnet's confirmation corpus: recall_lo 1.0 on 1 row, precision_lo 0.0
    on 188: one row could move the recall anywhere, but not the precision to its bar)."""
    one_row_recall = [(0.0, 0.5, 188), (1.0, 0.5, 1)]
    assert not scores._a_row_turns(False, one_row_recall)
    assert scores._apart(False, one_row_recall) == 1.0               # the failing precision, all the way
    assert scores._a_row_turns(False, [(0.497, 0.5, 188), (1.0, 0.5, 1)])
    assert scores._a_row_turns(True, [(0.9, 0.5, 188), (0.51, 0.5, 60)])
    assert not scores._a_row_turns(True, [(0.9, 0.5, 188), (0.6, 0.5, 60)])
    assert abs(scores._apart(True, [(0.9, 0.5, 188), (0.6, 0.5, 60)]) - 0.2) < 1e-12
    assert scores._a_row_turns(False, [(None, 0.5, 0), (0.9, 0.5, 40)])   # no badge yet: one row could be anything
    assert scores._apart(False, [(0.2, 0.5, 100), (0.45, 0.5, 100)]) == 0.6   # both must cross: the farther


def test_a_missing_wordnet_names_the_package_and_the_command(tmp_path):
    from model import confirmation
    from model.errors import UserError

    with pytest.raises(UserError, match=r"WordNet 3.0 is not at .*no data.noun.*sudo apt-get install -y wordnet-base"):
        confirmation.examples(tmp_path, 6, set())
