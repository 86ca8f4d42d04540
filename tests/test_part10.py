"""Part 10 (docs/study.yml `mean_ablation`, `fresh_corpus`; model/mean_ablation/, model/fresh.py):

- registered first: the commit that registered the truth and the corpus rule precedes, in git,
  the commits that added the fresh sentences and the code that computes the truth;
- the fresh corpus's rule on hand-written reStructuredText, and on Debian's python3.11-doc the
  committed corpus is what the rule writes at the pilot's rate the study's results record;
- the bounds no seed decides: the exact bound, the Monte Carlo margin, the three verdicts;
- the intervention: replacing the sink's value vectors by their means, as far as the row sees
  them, is the head's output with those values replaced, run through the rest of the layer;
- the published verdicts do not turn under ten other bootstrap seeds.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from test_ground_truth import real  # noqa: F401 (a fixture)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def history():
    try:
        git("rev-parse", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    if git("rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("a shallow clone has no history to read")


def first_commit(*args: str) -> str:
    """The oldest commit `git log` lists with these arguments."""
    return git("log", "--format=%H", "--reverse", *args).split("\n")[0]


def test_the_registration_precedes_the_sentences_and_the_truth_s_code(history):
    registered = first_commit("-S", "mean_ablation:", "--", "docs/study.yml")
    assert registered and registered == first_commit("-S", "fresh_corpus:", "--", "docs/study.yml")
    for later in (first_commit("--diff-filter=A", "--", "docs/fresh.tsv"),
                  first_commit("--diff-filter=A", "--", "model/mean_ablation/run.py")):
        assert later and later != registered
        assert subprocess.run(["git", "merge-base", "--is-ancestor", registered, later], cwd=ROOT).returncode == 0


# -- the fresh corpus's rule --------------------------------------------------------------------

RST = """Getting started
===============

Besides the :keyword:`while` statement, Python has more flow control.

This is a plain paragraph with enough words to be kept here. Is this a question that we keep?
Short one. The tool, e.g. this one, is not kept.

* A list item that says something useful about lists here.
* Another item that is long enough to be a kept sentence,
  continued on a second line.

   >>> print("indented code is never prose at all here")

.. note::
   A note that is long enough to be a sentence but a directive.

=====  =====
a      b
=====  =====
"""


def test_the_rule_keeps_prose_and_drops_markup_code_directives_and_tables():
    from model import fresh

    kept = [(item, s) for item, block in fresh.blocks(RST) for s in fresh.sentences(block, 6, 40)]
    assert kept == [(False, "This is a plain paragraph with enough words to be kept here."),
                    (False, "Is this a question that we keep?"),
                    (True, "A list item that says something useful about lists here."),
                    (True, "Another item that is long enough to be a kept sentence, continued on a second line.")]


def test_the_size_is_the_fewest_sentences_for_the_planned_rows_capped():
    from model import fresh

    assert fresh.size([10] * 100, rate=0.1, target_rows=2, plan=1.25, max_sentences=50) == 3   # 25 rows: 3 sentences
    assert fresh.size([10] * 100, rate=0.001, target_rows=2, plan=1.25, max_sentences=50) == 50
    assert fresh.size([10] * 20, rate=0.0, target_rows=2, plan=1.25, max_sentences=50) == 20   # every sentence kept


@pytest.mark.skipif(not Path("/usr/share/doc/python3.11/html/_sources").is_dir(),
                    reason="Debian's python3.11-doc is not installed")
def test_the_rule_writes_the_committed_fresh_corpus(tmp_path, session_results):
    """make test installs Debian's python3.11-doc, so this runs in CI: the fresh corpus is what its
    registered rule picks at the pilot's rate the study's measurement records, nothing by hand."""
    from model import fresh

    docs = tmp_path / "docs"
    docs.mkdir()
    for file in ("study.yml", "corpus.tsv", "confirmation.tsv", "replication.tsv"):
        (docs / file).write_bytes((ROOT / "docs" / file).read_bytes())
    results, _ = session_results
    path, n, of = fresh.write(docs / "study.yml", fresh.pilot_rate(results, "l6"))
    assert path.read_bytes() == (ROOT / "docs" / "fresh.tsv").read_bytes()
    assert (docs / "fresh.NOTICE").read_bytes() == (ROOT / "docs" / "fresh.NOTICE").read_bytes()
    assert 0 < n <= of


def test_the_fresh_corpus_shares_no_sentence_with_the_other_corpora():
    from model.study import read_corpus

    read = lambda name: set(read_corpus(ROOT / "docs" / name)[0])
    fresh = read("fresh.tsv")
    assert len(fresh) > 1000 and not fresh & (read("corpus.tsv") | read("confirmation.tsv") | read("replication.tsv"))


# -- the bounds no seed decides -----------------------------------------------------------------

def test_the_exact_bound_is_clopper_pearson():
    from model.mean_ablation import bounds

    assert bounds.clopper_pearson_lo(1, 1, 0.025) == pytest.approx(0.025)          # 1 of 1: not 1.0
    assert bounds.clopper_pearson_lo(0, 10, 0.025) == 0.0
    assert bounds.clopper_pearson_lo(5, 10, 0.025) == pytest.approx(0.187086, abs=1e-6)
    assert bounds.clopper_pearson_lo(3, 0, 0.025) is None


def test_a_bound_within_its_monte_carlo_margin_of_the_bar_is_undetermined():
    from model.mean_ablation import bounds

    rng = np.random.default_rng(0)
    draws = rng.normal(0.62, 0.05, 20000)
    b = bounds.lower_bound(600, 1000, draws, 0.025, 4.0, 0.5)
    assert b.mc_margin > 0 and b.verdict == bounds.CLEARS and b.bootstrap == pytest.approx(0.522, abs=0.005)
    bar_at_bound = bounds.lower_bound(600, 1000, draws, 0.025, 4.0, b.bootstrap)
    assert bar_at_bound.verdict == bounds.UNDETERMINED
    assert bounds.lower_bound(600, 1000, draws, 0.025, 4.0, 0.8).verdict == bounds.MISSES
    one = bounds.lower_bound(1, 1, np.ones(20000), 0.025, 4.0, 0.5)   # the bootstrap says 1.0, the exact bound no
    assert one.bootstrap == 1.0 and one.verdict == bounds.MISSES and one.value == pytest.approx(0.025)
    assert bounds.both([bounds.CLEARS, bounds.UNDETERMINED]) == bounds.UNDETERMINED
    assert bounds.both([bounds.UNDETERMINED, bounds.MISSES]) == bounds.MISSES


# -- the intervention ------------------------------------------------------------------------------

def test_mean_ablation_is_the_head_output_with_the_set_s_values_replaced(l6, real):
    """ground_truth.mean_ablated against the head's output recomputed with [CLS]'s and [SEP]'s
    value vectors replaced by the means in that row, the rest of the layer run as the model does."""
    import torch

    from model import ground_truth as gt

    toks, acts, xs, _ = real
    x, alpha = torch.from_numpy(xs[1][2]), torch.from_numpy(acts[1].alpha[2])
    w = gt.layer_weights(l6, 2)
    T, (C, nh, hs) = x.shape[0], w.W_O.shape
    rng = np.random.default_rng(1)
    means = gt.ValueMeans(*(torch.from_numpy(rng.normal(0, 0.5, (nh, hs))) for _ in range(3)))
    tokens, heads = torch.tensor([3, 4]), torch.tensor([7, 0])
    r, sink, content, _ = gt.head_parts(x, alpha, w, tokens, heads)
    ours = gt.mean_ablated(r, sink, content, alpha[heads, tokens], heads, means, w)           # [2, 2, C]
    v = (x @ w.W_V.T + w.b_V).view(T, nh, hs).transpose(0, 1)                                 # [nh, T, hs]
    for q, (i, h) in enumerate(zip(tokens.tolist(), heads.tolist())):
        for k, replaced in ((gt.SINK_MEAN, {0: means.cls[h], T - 1: means.sep[h]}),
                            (gt.CONTENT_MEAN, {j: means.content[h] for j in range(1, T - 1)})):
            vh = v[h].clone()
            for j, m in replaced.items():
                vh[j] = m
            change = w.W_O[:, h, :] @ (alpha[h, i] @ vh - alpha[h, i] @ v[h])               # [C]
            theirs = gt.rest_of_layer(r[q] + change, w)
            assert torch.allclose(ours[q, k], theirs, rtol=0, atol=1e-12)
