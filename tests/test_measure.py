"""The measurements on the real corpus: self-checks, invariants, and the CLI."""
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from model import measure, rollout
from model.instrument import LENSES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def measured(l6, study):
    return measure.measure_model(l6, study, "l6")


def test_self_checks_hold(measured):
    c = measured.checks
    assert c.unit_norms_identical and c.unit_norms_max_diff == 0.0
    assert c.cls_zero_moves
    assert c.oracle_same_heads
    assert c.oracle_max_abs_alpha < 1e-5 and c.oracle_max_abs_sink < 1e-5


def test_one_displayed_row_per_non_punctuation_word_and_lens(measured, study):
    per_lens = {lens: [r for r in measured.rows if r.lens == lens] for lens in LENSES}
    assert len({len(v) for v in per_lens.values()}) == 1
    for r in measured.rows:
        assert any(ch.isalnum() for ch in r.word)
        assert 0.0 <= r.sink_share <= 1.0 and 0.0 <= r.sep_share <= r.sink_share + 1e-12
        assert r.sink_share + r.content_mass <= 1.0 + 1e-9
    assert measured.summary["alpha"].stats.n_rows == len(per_lens["alpha"])


def test_summary_matches_rows(measured):
    for lens in LENSES:
        sinks = np.array([r.sink_share for r in measured.rows if r.lens == lens])
        s = measured.summary[lens].stats
        assert s.median_sink == pytest.approx(np.median(sinks))
        assert s.worst_sink == pytest.approx(sinks.max())
        assert s.above_50 == (sinks > 0.5).sum() and s.above_90 == (sinks > 0.9).sum()
        assert sum(measured.summary[lens].layer_picks) == len(sinks)


def test_verdict_follows_the_stop_rule(measured, study):
    for v in measured.verdicts:
        above = sum(r.sink_share > study.stop_rule.threshold for r in measured.rows if r.lens == v.lens)
        assert v.rows_above == above
        assert v.adopted == (above <= study.stop_rule.max_rows_above)


def test_value_ratio_definition(measured, l6, study):
    toks, acts, _ = measure.corpus_rows(l6, study)
    a = acts[0]
    by_hand = a.value_norm[:, :, 0] / a.value_norm[:, :, 1:-1].mean(axis=-1)
    overall = next(r for r in measured.ratios if (r.token, r.vector, r.layer) == ("cls", "v", None))
    all_sentences = np.concatenate([(x.value_norm[:, :, 0] / x.value_norm[:, :, 1:-1].mean(-1)).ravel() for x in acts])
    assert overall.median == pytest.approx(np.median(all_sentences))
    assert overall.n == by_hand.size * len(acts)


def test_rollout_of_identity_attention_is_identity_and_entropy_bounds():
    alpha = np.tile(np.eye(4), (2, 3, 1, 1))  # every head attends to itself
    assert rollout.rollout(alpha) == pytest.approx(np.eye(4))
    assert rollout.normalized_entropy(np.full((1, 4), 0.25))[0] == pytest.approx(1.0)
    assert rollout.normalized_entropy(np.array([[1.0, 0, 0, 0]]))[0] == pytest.approx(0.0)


def test_results_are_json_serializable(measured):
    json.dumps(asdict(measured))


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "model", *args], cwd=cwd, capture_output=True, text=True)


def test_cli_measure_summary_and_rows(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("She used the scissors to cut the ribbon.\nThe doctor thanked the nurse.\n")
    out = _cli("measure", "--sentences", str(f), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data["summary"]) == set(LENSES)
    assert {r["lens"] for r in data["rows"]} == set(LENSES)
    assert [m["name"] for m in data["provenance"]["models"].values()] == ["minilm-l6"]


def test_cli_all_heads_keys(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("Scissors cut paper.\n")
    out = _cli("measure", "--sentences", str(f), "--model", "minilm-l3", "--all-heads", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert len(rows) == 3 * 3 * 12  # 3 words x 3 layers x 12 heads
    assert set(rows[0]) == {"sentence", "word_index", "word", "layer", "head", "sink_share"}
    assert set(rows[0]["sink_share"]) == set(LENSES)


@pytest.mark.parametrize("content, expect", [
    (None, "not found"),
    (b"", "no sentences"),
    (b"ok\n\nbad\n", ":2: empty line"),
    (b"caf\xe9\n", "not valid UTF-8"),
    (("word " * 600).encode(), "longer than the model's limit"),
])
def test_cli_bad_sentences_file(tmp_path, content, expect):
    f = tmp_path / "s.txt"
    if content is not None:
        f.write_bytes(content)
    out = _cli("measure", "--sentences", str(f), "--json")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0] and str(f) in lines[0]
