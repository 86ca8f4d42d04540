"""The numbers lock (model/site/lock.py): read strictly (a lock that cannot be trusted
names its file and key), written sorted, and what counts as a move."""
from __future__ import annotations

import json
import re

import pytest

from livenumbers import lock, registration
from livenumbers.lock import LockError, Locked

KEY = "l6.alpha.median_sink"


def write(tmp_path, text: str):
    path = tmp_path / "numbers.lock.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_lock_round_trips(tmp_path):
    numbers = {"b": Locked(0.25, 0.0005, printed={"en pct:1": "25.0%", "fr pct:1": "25,0\u202f%"}),
               "a": Locked("MiniLM", 0.0), "c": Locked(True, 0.0),
               "d": Locked(3, 1.0, 2e-5, printed={"en int~1": "3"}, shown={"int": "int~1"})}
    path = tmp_path / "numbers.lock.json"
    lock.write(path, numbers, {"code_version": "abc"})
    back = lock.read(path)
    assert back.numbers == numbers and back.provenance == {"code_version": "abc"}
    assert list(json.loads(path.read_text())["numbers"]) == ["a", "b", "c", "d"]   # sorted: diffs stay small
    assert path.read_text().endswith("}\n")


def test_no_lock_is_an_empty_lock(tmp_path):
    assert lock.read(tmp_path / "nowhere.json") == lock.Lock({}, {})


@pytest.mark.parametrize("text, message", [
    ('{"numbers": ', r"not valid JSON .*; restore it from git"),
    ('{"numbers": {\n"a": {"value": 1, "tolerance": 0},\n"a": {"value": 2, "tolerance": 0}}}', r"duplicate key 'a'"),
    ('{"numbers": {"a": {"value": 1}}}', r"number 'a' has no 'tolerance'"),
    ('{"numbers": {"a": {"tolerance": 0}}}', r"number 'a' has no 'value'"),
    ('{"numbers": {"a": 0.5}}', r"number 'a' has no 'value'"),
    ('{"numbers": []}', r"expected an object with a 'numbers' object"),
    ('[1, 2]', r"expected an object with a 'numbers' object"),
], ids=["truncated", "duplicate key", "no tolerance", "no value", "bare number", "numbers a list", "a list"])
def test_a_lock_that_cannot_be_trusted_names_file_and_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(LockError, match=rf"^{re.escape(str(path))}(:\d+)?: {message}"):
        lock.read(path)


@pytest.mark.parametrize("entry, message", [
    ({"value": 0.5, "tolerance": float("nan")}, "bad tolerance nan"),
    ({"value": 0.5, "tolerance": float("inf")}, "bad tolerance inf"),
    ({"value": 0.5, "tolerance": -0.1}, "bad tolerance -0.1"),
    ({"value": 0.5, "tolerance": "0.1"}, "bad tolerance '0.1'"),
    ({"value": 0.5, "tolerance": True}, "bad tolerance True"),
    ({"value": None, "tolerance": 0.0}, "bad value None"),
    ({"value": [1, 2], "tolerance": 0.0}, "bad value [1, 2]"),
    ({"value": float("nan"), "tolerance": 0.0}, "bad value nan"),
], ids=["nan tolerance", "infinite tolerance", "negative tolerance", "text tolerance", "bool tolerance",
        "null value", "list value", "nan value"])
def test_an_entry_that_could_never_drift_is_an_error(tmp_path, entry, message):
    # A NaN compares false with everything: a NaN tolerance or value would never drift.
    path = write(tmp_path, json.dumps({"numbers": {KEY: entry}}))
    with pytest.raises(LockError, match=re.escape(f"number {KEY!r} has a {message}")):
        lock.read(path)


def test_what_counts_as_a_move():
    assert not lock.moved(Locked(0.2, 0.0005), 0.2004)            # within the tolerance: not moved
    assert lock.moved(Locked(0.2, 0.0005), 0.2006)
    assert lock.moved(Locked(0.2, 0.0005), 0.1994)
    assert lock.moved(Locked(0.2, 0.0005), float("nan"))          # a number that becomes NaN has moved
    assert not lock.moved(Locked(3, 0.0), 3.0)
    assert lock.moved(Locked("MiniLM-L6", 0.0), "MiniLM-L3")
    assert lock.moved(Locked(True, 0.0), False)
    assert lock.moved(Locked("1", 1.0), 1)                        # text that became a number


def test_provenance_changes_name_the_path_old_and_new():
    old = {"code_version": "a", "libraries": {"numpy": "2.4.6", "torch": "2.13"}, "gone": 1}
    new = {"code_version": "b", "libraries": {"numpy": "2.5.0", "torch": "2.13"}, "models": {"l6": {"sha256": "x"}}}
    assert lock.provenance_changes(old, new) == [
        "code_version: a -> b", "gone: 1 -> None", "libraries.numpy: 2.4.6 -> 2.5.0", "models: None -> {'l6': {'sha256': 'x'}}"]


def test_registrations_round_trip_and_an_older_lock_has_none(tmp_path):
    """The registered settings blocks (livenumbers/registration.py) beside the numbers."""
    entry = registration.Registration("study.yml", "ab" * 32, "c0ffee" * 6 + "beef", "2026-11-02",
                                      (registration.Amendment("2026-12-01", "the layer truth", "primary: word -> layer"),))
    path = tmp_path / "numbers.lock.json"
    lock.write(path, {"a": Locked(1, 0.0)}, {}, {"calibration": entry})
    assert lock.read(path).registrations == {"calibration": entry}
    lock.write(path, {"a": Locked(1, 0.0)}, {})
    assert "registrations" not in path.read_text() and lock.read(path).registrations == {}
    path.write_text(json.dumps({"numbers": {}, "registrations": {"calibration": {"sha256": "ab"}}}))
    with pytest.raises(LockError, match=r"registration 'calibration' is malformed"):
        lock.read(path)
