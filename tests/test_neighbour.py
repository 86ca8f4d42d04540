"""The engine in someone else's project (tests/neighbour/): Material's documented emoji set-up
with its `!!python/name:` tags, an INHERITed base configuration, mkdocs-macros with its own
variables, macros and include folder, a GitHub Actions snippet in a code block, and a folder
mkdocs.yml's `watch:` names. The engine renders its own calls and leaves everything else to
mkdocs-macros, listed before it or after it; under `mkdocs serve` MkDocs' own watcher stays,
with every watch the other plugins added."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import yaml

from test_loaded_code import Served
from test_toy import run

NEIGHBOUR = Path(__file__).resolve().parent / "neighbour"


def neighbour(tmp_path: Path, engine_first: bool) -> Path:
    root = tmp_path / "neighbour"
    shutil.copytree(NEIGHBOUR, root, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    raw = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    if engine_first:   # the engine listed before mkdocs-macros
        raw["plugins"] = [raw["plugins"][0], raw["plugins"][2], raw["plugins"][1]]
    (root / "mkdocs.yml").write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    accept = run(root, "livenumbers", "accept")
    assert accept.returncode == 0, accept.stdout + accept.stderr
    return root


@pytest.mark.parametrize("engine_first", [True, False], ids=["engine-before-macros", "engine-after-macros"])
def test_a_neighbours_project_builds_strict_with_macros_and_the_engine(tmp_path, engine_first):
    root = neighbour(tmp_path, engine_first)
    build = run(root, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (root / "site" / "index.html").read_text(encoding="utf-8")
    assert "The current release is 2.7.1, the 4th we published\n(the latest is 2&#46;7&#46;1). HELLO!" in page
    assert "Included by mkdocs-macros from its include_dir." in page          # macros' include
    assert "Built for A neighbour&#39;s docs." in page or "Built for A neighbour's docs." in page
    assert "${{ github.sha }}" in page                                          # the workflow's braces
    assert "<code>{{ num(\"releases.count\") }}</code>" in page                 # an example stays one
    assert 'class="twemoji"' in page                                             # Material's emoji, from base.yml
    check = run(root, "livenumbers", "check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_under_serve_a_save_to_any_watched_folder_rebuilds_within_two_seconds(tmp_path):
    root = neighbour(tmp_path, engine_first=False)
    served = Served(root)
    try:
        after = served.wait_for(r"Serving on", timeout=120)
        page = root / "docs" / "index.md"   # a first save, untimed: the server's first rebuild warms up
        page.write_text(page.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        after = served.wait_for(r"Reloading browsers", served.wait_for(r"Detected file changes", after, timeout=10), timeout=10)
        for saved in ("docs/index.md", "snippets/note.md", "extra_watched/notes.txt", "neighbour_source.py", "mkdocs.yml"):
            path = root / saved
            path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
            t0 = time.monotonic()
            seen = served.wait_for(r"Detected file changes", after, timeout=10)
            after = served.wait_for(r"Reloading browsers", seen, timeout=10)
            assert time.monotonic() - t0 <= 2.0, (saved, time.monotonic() - t0, served.lines[seen:after + 1])
    finally:
        served.stop()
