"""A cache that cannot lie (livenumbers/loaded.py): a result is cached under the key of the
code that computed it. `mkdocs serve` keeps one process, and Python imports a module once: an
edit of the source's code is loaded again before the next build, and results asked of code
edited since it was loaded are computed in a fresh process."""
from __future__ import annotations

import importlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from livenumbers import cache, gate, loaded, project

from test_toy import run, toy  # noqa: F401  (the fixture)

TIMES_TEN = ('{"fruit": {k: {"score": v, "share": v / total}', '{"fruit": {k: {"score": v * 10, "share": v / total}')


def edit_source(root: Path) -> None:
    """The starter's computation edited: every score ten times what it was."""
    path = root / "toy_source.py"
    text = path.read_text(encoding="utf-8")
    assert TIMES_TEN[0] in text
    path.write_text(text.replace(*TIMES_TEN), encoding="utf-8")


def test_results_asked_of_code_edited_since_it_was_loaded_are_computed_in_a_fresh_process(toy):
    settings = project.settings_at(toy / "mkdocs.yml")        # toy_source loaded
    old_key = gate.results_key(settings)
    edit_source(toy)                                           # on disk only: this process runs the old code
    results, key = gate.load_results(settings)
    assert key != old_key                                      # the source's inputs hash its own file
    assert results["fruit"]["apple"]["score"] == 120           # computed by the edited code
    assert cache.load_json(settings.cache_dir, "results", key)["fruit"]["apple"]["score"] == 120


def test_the_source_is_loaded_again_when_its_code_changed_and_pages_are_keyed_by_it(toy):
    first = project.settings_at(toy / "mkdocs.yml")
    code = gate.site_code(first.source, first.root)
    edit_source(toy)
    assert gate.site_code(first.source, first.root) == code     # the code loaded, not the disk's
    again = project.settings_at(toy / "mkdocs.yml")             # the next build: loaded again
    assert type(again.source) is not type(first.source)
    assert gate.site_code(again.source, again.root) != code
    results, _ = gate.load_results(again)
    assert results["fruit"]["apple"]["score"] == 120


def test_the_code_digest_does_not_depend_on_when_a_module_is_imported(tmp_path, monkeypatch):
    """A module of the project imported while a build renders (lazily) is in the digest
    before its import, as on disk: the next build, which finds it loaded, has the same digest
    (`mkdocs serve`'s first save rendered every page again when it had not)."""
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "eager.py").write_text("X = 1\n", encoding="utf-8")
    (package / "lazy.py").write_text("Y = 2\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    code = loaded.LoadedCode(tmp_path)
    try:
        importlib.import_module("lazypkg.eager")
        before = code.digest()
        (package / "lazy.py").write_text("Y = 3  # edited\n", encoding="utf-8")   # what its import would load now
        edited = code.digest()
        assert edited != before
        importlib.import_module("lazypkg.lazy")
        assert code.digest() == edited          # imported: the same code, the same digest
        (package / "lazy.py").write_text("Y = 4  # edited again\n", encoding="utf-8")
        assert code.digest() == edited          # this process runs the code it loaded
    finally:
        for name in [n for n in sys.modules if n == "lazypkg" or n.startswith("lazypkg.")]:
            del sys.modules[name]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """`mkdocs serve` of a project in a child process, its log read as it comes."""

    def __init__(self, root: Path):
        env = os.environ | {"PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
                            "NO_MKDOCS_2_WARNING": "1", "LIVE_NUMBERS_CACHE": str(root / ".cache")}
        self.proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{_free_port()}"],
                                     cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stderr.readline, "")), daemon=True).start()

    def wait_for(self, pattern: str, after: int = 0, timeout: float = 60) -> int:
        """The index of the first log line from `after` on that matches `pattern`."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for i, line in enumerate(self.lines[after:], after):
                if re.search(pattern, line):
                    return i
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} within {timeout} s:\n" + "".join(self.lines))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)


def test_a_source_edited_under_serve_then_a_fresh_build_shows_the_edited_codes_results(toy):
    served = Served(toy)
    try:
        start = served.wait_for(r"Serving on")
        edit_source(toy)   # its own file is watched: the save alone rebuilds
        rebuilt = served.wait_for(r"Detected file changes", start)
        served.wait_for(r"numbers gate failed|Documentation built", rebuilt)
        assert any("fruit.apple.score: recorded 12, now 120" in line for line in served.lines[rebuilt:]), served.lines
    finally:
        served.stop()
    for command in (("livenumbers", "check"), ("mkdocs", "build", "--strict")):
        fresh = run(toy, *command)
        assert fresh.returncode != 0
        assert "fruit.apple.score: recorded 12, now 120 (tolerance 0)" in fresh.stdout + fresh.stderr
