"""Writing a file whole or not at all (model/site/files.py): the lock, executed
notebooks and the like. An interruption leaves the old file and no temporary one."""
from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from livenumbers import files


class Killed(BaseException):
    """Stands for the Ctrl-C (or the kill) that interrupts a write."""


def _fail_before_rename(monkeypatch):
    def replace(src, dst):
        raise Killed("interrupted before the rename")
    monkeypatch.setattr(files, "os", SimpleNamespace(fdopen=os.fdopen, replace=replace, chmod=os.chmod, umask=os.umask))


def _fail_mid_write(monkeypatch):
    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            raise Killed("interrupted half-way through the write")

    monkeypatch.setattr(files, "os", SimpleNamespace(fdopen=lambda *a, **k: HalfWriter(os.fdopen(*a, **k)),
                                                    replace=os.replace, chmod=os.chmod, umask=os.umask))


def test_a_file_is_written_whole(tmp_path):
    path = tmp_path / "deep" / "er" / "x.json"
    files.write_atomic(path, "new ✓")
    assert path.read_text(encoding="utf-8") == "new ✓"
    files.write_atomic(path, "newer")
    assert path.read_text() == "newer" and [p.name for p in path.parent.iterdir()] == ["x.json"]


@pytest.mark.parametrize("interrupt", [_fail_mid_write, _fail_before_rename], ids=["mid-write", "before-rename"])
def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch, interrupt):
    path = tmp_path / "numbers.lock.json"
    path.write_text("the old lock")
    interrupt(monkeypatch)
    with pytest.raises(Killed):
        files.write_atomic(path, "the new lock " * 1000)
    assert path.read_text() == "the old lock"
    assert [p.name for p in tmp_path.iterdir()] == ["numbers.lock.json"], "a temporary file was left behind"


# -- publishing a cache file -------------------------------------------------------------------

def test_a_published_file_is_linked_and_replaced_never_written_through(tmp_path):
    cached, other, site = tmp_path / "cached.json", tmp_path / "other.json", tmp_path / "site" / "a" / "x.json"
    cached.write_text("the cache's bytes")
    other.write_text("another entry's bytes")
    files.link_or_copy(cached, site)
    assert os.path.samefile(cached, site)
    files.link_or_copy(cached, site)          # again over its own link (a rebuild)
    files.link_or_copy(other, site)           # a new entry published at the same path
    assert site.read_text() == "another entry's bytes" and os.path.samefile(other, site)
    assert cached.read_text() == "the cache's bytes", "publishing over a link wrote into the cache's file"


def test_a_published_file_is_copied_where_it_cannot_be_linked(tmp_path, monkeypatch):
    cached, site = tmp_path / "cached.bin", tmp_path / "site" / "x.bin"
    cached.write_bytes(b"\x00weights")

    def cross_device(src, dst):
        raise OSError(18, "Invalid cross-device link")
    monkeypatch.setattr(files.os, "link", cross_device)
    files.link_or_copy(cached, site)
    assert site.read_bytes() == b"\x00weights" and not os.path.samefile(cached, site)
