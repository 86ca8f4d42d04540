"""The build's disk cache (model/site/cache.py): one key recipe, entries as folders with
a manifest, one reader that trusts only whole entries, one in-process memo."""
from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from livenumbers import cache

KEY = "5abc" * 16


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch):
    monkeypatch.setattr(cache, "_MEMO", {})


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


# -- the key ------------------------------------------------------------------------------------

def test_the_key_is_sha256_of_the_parts_as_canonical_json():
    by_hand = hashlib.sha256(b'["a", 1, {"a": [1], "b": 2}]').hexdigest()
    assert cache.key("a", 1, {"b": 2, "a": [1]}) == by_hand
    assert cache.key("a", 1, {"a": [1], "b": 2}) == by_hand          # dict order does not matter
    assert cache.key("ab") != cache.key("a", "b") != cache.key(["a", "b"], None)
    assert cache.key(Path("x/y")) == cache.key("x/y")                  # anything else as its str()


# -- entries ------------------------------------------------------------------------------------

def test_an_entry_is_a_folder_of_files_and_a_manifest(tmp_path):
    folder = cache.write(tmp_path, "views", KEY, {"a/b.json": '{"x": 1}', "c.bin": b"\x00\x01"})
    assert folder == tmp_path / "views" / KEY[:32] == cache.read(tmp_path, "views", KEY)
    assert (folder / "a" / "b.json").read_text() == '{"x": 1}' and (folder / "c.bin").read_bytes() == b"\x00\x01"
    manifest = json.loads((folder / cache.MANIFEST).read_text())
    assert manifest == {"key": KEY, "files": {"a/b.json": [8, hashlib.sha256(b'{"x": 1}').hexdigest()],
                                              "c.bin": [2, hashlib.sha256(b"\x00\x01").hexdigest()]}}
    assert not leftovers(tmp_path)


def _append(folder: Path) -> None:
    with (folder / "c.bin").open("ab") as fh:
        fh.write(b"!")


def _same_size_edit(folder: Path) -> None:
    (folder / "a.json").write_text('{"x": 2}')


def _delete_a_file(folder: Path) -> None:
    (folder / "a.json").unlink()


def _no_manifest(folder: Path) -> None:
    (folder / cache.MANIFEST).unlink()


def _garbage_manifest(folder: Path) -> None:
    (folder / cache.MANIFEST).write_bytes(b"\xff\xfe garbage")


def _list_manifest(folder: Path) -> None:
    (folder / cache.MANIFEST).write_text("[]")


@pytest.mark.parametrize("damage", [_append, _same_size_edit, _delete_a_file, _no_manifest, _garbage_manifest,
                                    _list_manifest])
def test_a_damaged_entry_is_not_trusted_and_is_recomputed(tmp_path, damage):
    folder = cache.write(tmp_path, "results", KEY, {cache.PAYLOAD: '{"x": 1}', "a.json": '{"x": 1}', "c.bin": b"ok"})
    damage(folder)
    assert cache.read(tmp_path, "results", KEY) is None
    calls = []
    payload, hit = cache.get_json(tmp_path, "results", KEY, lambda: calls.append(1) or {"x": 3})
    assert (payload, hit, calls) == ({"x": 3}, False, [1])
    cache._MEMO.clear()
    assert cache.load_json(tmp_path, "results", KEY) == {"x": 3}      # rewritten whole, from disk
    assert not leftovers(tmp_path)


def test_an_entry_for_another_key_in_the_same_folder_is_ignored(tmp_path):
    # Folders keep 32 hex digits of the key: two keys may share a folder, never an entry.
    other = KEY[:32] + "f" * 32
    assert cache.entry_dir(tmp_path, "results", other) == cache.entry_dir(tmp_path, "results", KEY)
    cache.store_json(tmp_path, "results", other, {"from": "other"})
    assert cache.read(tmp_path, "results", KEY) is None
    assert cache.get_json(tmp_path, "results", KEY, lambda: {"from": "us"}) == ({"from": "us"}, False)


def test_a_write_that_fails_half_way_leaves_nothing(tmp_path, monkeypatch):
    real = Path.write_bytes

    def fail_on_second(self, data):
        if self.name == "second":
            raise KeyboardInterrupt("interrupted")
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", fail_on_second)
    with pytest.raises(KeyboardInterrupt):
        cache.write(tmp_path, "views", KEY, {"first": "1", "second": "2"})
    assert cache.read(tmp_path, "views", KEY) is None
    assert not (tmp_path / "views" / KEY[:32]).exists() and not leftovers(tmp_path)


def test_a_whole_entry_stays_in_place_while_another_build_writes_it_again(tmp_path, monkeypatch):
    """Two builds that computed the same entry: the second must not pull the first's files
    from under a build that is reading them (the hooks hand MkDocs paths into entries)."""
    folder = cache.write(tmp_path, "views", KEY, {"v.json": "[1]"})
    real = os.rename

    def rename(src, dst):
        assert (folder / "v.json").read_text() == "[1]", "the whole entry vanished during the second write"
        return real(src, dst)

    monkeypatch.setattr(cache.os, "rename", rename)
    assert cache.write(tmp_path, "views", KEY, {"v.json": "[1]"}) == folder
    assert cache.read(tmp_path, "views", KEY) == folder and not leftovers(tmp_path)


def test_many_writers_and_readers_at_once(tmp_path):
    files = {f"assets/{i}.json": json.dumps(list(range(i * 100))) for i in range(20)}

    def reader() -> list[list[str]]:
        seen = []
        for _ in range(50):
            folder = cache.read(tmp_path, "views", KEY)
            if folder is not None:
                seen.append(sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.json")
                                   if p.name != cache.MANIFEST))
        return seen

    with ThreadPoolExecutor(9) as pool:
        writes = [pool.submit(cache.write, tmp_path, "views", KEY, files) for _ in range(6)]
        reads = [pool.submit(reader) for _ in range(3)]
        folders = {w.result() for w in writes}                # a writer's error is raised here
        seen = [s for r in reads for s in r.result()]
    assert folders == {cache.entry_dir(tmp_path, "views", KEY)}
    assert cache.read(tmp_path, "views", KEY) is not None and not leftovers(tmp_path)
    assert all(s == sorted(files) for s in seen)               # readers saw whole entries only


# -- the JSON payload and the memo -----------------------------------------------------------------

def test_a_stored_payload_is_returned_as_json_reads_it(tmp_path):
    payload = cache.store_json(tmp_path, "charts", KEY, {"b": (1, 2), "a": 0.1})
    assert payload == {"a": 0.1, "b": [1, 2]}                          # a tuple comes back a list, as from disk
    cache._MEMO.clear()
    assert cache.load_json(tmp_path, "charts", KEY) == payload


def test_the_memo_answers_without_the_disk(tmp_path):
    """Under `mkdocs serve` a prose edit reuses every entry without reading it again."""
    calls = []
    compute = lambda: calls.append(1) or {"n": len(calls)}
    assert cache.get_json(tmp_path, "charts", KEY, compute) == ({"n": 1}, False)
    (cache.entry_dir(tmp_path, "charts", KEY) / cache.PAYLOAD).write_text('{"n": 99}')   # behind its back
    assert cache.get_json(tmp_path, "charts", KEY, compute) == ({"n": 1}, True)
    assert calls == [1]
    cache._MEMO.clear()
    assert cache.get_json(tmp_path, "charts", KEY, compute) == ({"n": 2}, False)   # the disk's copy fails its digest
    assert cache.load_json(tmp_path, "charts", "0" * 64) is None


def test_results_with_numpy_values_are_written_and_anything_else_is_named(tmp_path):
    """A source's results may hold NumPy scalars and arrays (converted); a value JSON cannot
    write is an error naming where it sits, and nothing is cached."""
    import numpy as np

    from livenumbers import cache

    back = cache.store_json(tmp_path, "results", "k", {"n": np.int64(3), "share": np.float32(0.5), "rows": np.arange(2)})
    assert back == {"n": 3, "share": 0.5, "rows": [0, 1]}
    assert cache.not_json({"models": {"l6": {"rows": [1, {2, 3}]}}}).startswith("models.l6.rows[1] (a set: ")
    assert cache.not_json({"ok": [np.int64(1), "x", None]}) is None


@pytest.mark.parametrize("payload, found", [
    ({"a": {"b": [1.0, float("nan")]}}, "a.b[1] (nan: JSON has no NaN or infinity"),
    ({"a": float("-inf")}, "a (-inf: JSON has no NaN or infinity"),
    ({"a": np.array([1.0, np.inf])}, "a[1] (inf: JSON has no NaN or infinity"),
    ({"a": {3: "x"}}, "a.3 (a key of type int, 3: JSON's keys are text"),
    ({"a": {("x", 1): "y"}}, "a.('x', 1) (a key of type tuple, ('x', 1): JSON's keys are text"),
])
def test_what_json_cannot_carry_is_named_with_its_path(payload, found):
    assert cache.not_json(payload).startswith(found)
