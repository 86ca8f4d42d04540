"""Values a write-up's results cannot hold, on the starter: NaN and infinity, keys that are not
text, types JSON cannot write. Each is an error naming where it sits (cited or not); nothing is
cached, locked or published, and no command crashes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_toy import run
from test_toy import toy as accepted  # noqa: F401  (the fixture: the starter, its lock accepted)

COMPUTED = 'return {"fruit": {k: {"score": v, "share": v / total} for k, v in raw.items()}}, {}'


def computing(root: Path, results: str) -> None:
    """The starter's compute() returning `results` (Python, over `raw` and `total`)."""
    path = root / "toy_source.py"
    text = path.read_text(encoding="utf-8")
    assert COMPUTED in text
    path.write_text(text.replace(COMPUTED, f"return {results}, {{}}"), encoding="utf-8")


@pytest.mark.parametrize("results, named", [
    ('{"fruit": {k: {"score": v, "share": v / total} for k, v in raw.items()}, "spread": float("nan")}',
     "spread (nan: JSON has no NaN or infinity"),
    ('{"fruit": {k: {"score": v, "share": v / total, "odds": float("inf")} for k, v in raw.items()}}',
     "fruit.apple.odds (inf: JSON has no NaN or infinity"),
    ('{"fruit": {k: {"score": v, "share": v / total} for k, v in raw.items()}, "by_rank": {1: "apple"}}',
     "by_rank.1 (a key of type int, 1: JSON's keys are text"),
    ('{"fruit": {k: {"score": v, "share": v / total} for k, v in raw.items()}, "pairs": {("apple", "pear"): 7}}',
     "pairs.('apple', 'pear') (a key of type tuple"),
    ('{"fruit": {k: {"score": v, "share": v / total} for k, v in raw.items()}, "seen": {"apple"}}',
     "seen (a set: JSON cannot write it"),
])
def test_results_json_cannot_carry_are_named_and_nothing_is_kept(accepted, results, named):
    lock = (accepted / "docs" / "numbers.lock.json").read_bytes()
    computing(accepted, results)
    for command in (("livenumbers", "accept"), ("livenumbers", "check"), ("mkdocs", "build", "--strict")):
        done = run(accepted, *command)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert f"the results of the fruit hold what JSON cannot carry at {named}" in done.stdout + done.stderr
    assert (accepted / "docs" / "numbers.lock.json").read_bytes() == lock
    assert not (accepted / "site").exists()
    entries = list((accepted / ".cache" / "results").iterdir())
    assert len(entries) == 1   # the accepted results' entry, and no other


def test_a_cited_nan_is_a_problem_of_its_page_not_a_crash(accepted):
    path = accepted / "toy_source.py"
    text = path.read_text(encoding="utf-8")
    old = 'out |= {f"fruit.{name}.score": v["score"], f"fruit.{name}.share": v["share"]}'
    assert old in text
    path.write_text(text.replace(old, old + '\n        out["fruit.apple.share"] = float("nan")'), encoding="utf-8")
    for command in (("livenumbers", "accept"), ("mkdocs", "build", "--strict")):
        done = run(accepted, *command)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert "index.md:4: 'fruit.apple.share' is nan: not a number a page can print" in done.stdout + done.stderr


def test_a_numbers_key_that_is_not_text_is_named(accepted):
    path = accepted / "toy_source.py"
    text = path.read_text(encoding="utf-8")
    old = '        return out\n'
    assert text.count(old) == 1
    path.write_text(text.replace(old, '        out[("fruit", "kiwi")] = 0\n' + old), encoding="utf-8")
    done = run(accepted, "livenumbers", "check")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "the keys of the fruit's numbers() are text" in done.stderr and "tuple ('fruit', 'kiwi')" in done.stderr


def test_the_published_results_are_json_a_browser_reads(accepted):
    build = run(accepted, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    text = (accepted / "site" / "downloads" / "results.json").read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in results.json"))
