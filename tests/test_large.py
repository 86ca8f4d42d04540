"""`make measure-large` (model/large.py, issue 35): the corpus it reads, and that its
map-and-reduce adds up to what one pass over the same sentences gives."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

WORDNET = Path("/usr/share/wordnet")
needs_wordnet = pytest.mark.skipif(not (WORDNET / "data.noun").is_file(), reason="Debian's wordnet-base is not installed")


@needs_wordnet
def test_the_large_corpus_is_every_example_but_the_study_s_in_hash_order(study):
    from model import large

    texts = large.sentences(study)
    assert len(texts) > 20_000
    assert len(set(texts)) == len(texts)
    assert not set(texts) & (set(study.sentences) | set(study.calibration.confirmation))
    assert all(len(t.split()) >= study.calibration.min_words for t in texts)
    assert texts == sorted(texts, key=lambda t: large.hashlib.sha256(t.encode()).digest())


def test_a_share_s_figures_median_and_interval():
    from model import large

    x = np.array([0.1] * 30 + [0.7] * 10)
    hist = np.histogram(x, bins=large.BINS, range=(0, 1))[0]
    f = large._figures(40, 10, hist, [(20, 0), (20, 10)])   # all of the above rows in one task
    assert f["above_share"] == 0.25 and abs(f["median"] - 0.1005) < 1e-9
    assert f["above_share_lo"] == 0.0 and f["above_share_hi"] > 0.7   # two tasks this unequal: a wide interval
    even = large._figures(40, 10, hist, [(20, 5), (20, 5)])
    assert even["above_share_lo"] == even["above_share_hi"] == 0.25


@needs_wordnet
def test_the_reduce_of_tasks_is_one_pass_over_the_same_sentences(study, l6):
    """Two tasks (one of TASK_SENTENCES, one of 6) tallied and added must give the counts
    and histograms of the same sentences' displayed rows read as one corpus (the forward
    passes batched as the tasks batch them, so that no row moves by a rounding)."""
    from model import activations, large, perturb
    from model.corpus import corpus_rows, displayed, on_heads, tokenize_all
    from model.instrument import LENSES

    texts = large.sentences(study)[:large.TASK_SENTENCES + 6]
    toks = tokenize_all(l6, texts, "wordnet")
    n = large.TASK_SENTENCES
    acts = activations.from_reference(l6, [t.ids for t in toks[:n]]) + activations.from_reference(l6, [t.ids for t in toks[n:]])
    corpus = corpus_rows(toks, acts)
    excluded = {lens: np.zeros((l6.config.n_layer, l6.config.n_head), bool) for lens in LENSES}
    excluded["alpha"][0, :3] = True                       # some heads the rule never opens
    task = lambda k, n: large.Task(l6.name, k, tuple(texts[k:k + n]), {l: e.tolist() for l, e in excluded.items()},
                                   study.tie_tolerance, 0.5, perturb.Perturbation())
    total = large.Tally()
    for t in (task(0, n), task(n, 6)):
        total.add(large.tally(t))
    rows = {lens: displayed(corpus, lens, excluded[lens], study.tie_tolerance) for lens in LENSES}
    assert not (rows["alpha"].layer == 0)[rows["alpha"].head < 3].any()
    shares = {lens: rows[lens].sink for lens in LENSES} | {large.EFFECT: on_heads(corpus, "output_norm", rows["alpha"])}
    assert total.sentences == len(texts)
    for name, x in shares.items():
        assert total.rows[name] == len(x)
        assert total.above[name] == int((x > 0.5).sum())
        assert (total.hist[name] == np.histogram(x, bins=large.BINS, range=(0, 1))[0]).all()
    assert total.badges_kept == int(((shares["alpha"] > 0.5) & (shares[large.EFFECT] > 0.5)).sum())
