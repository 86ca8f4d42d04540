"""The engine's options, read once, the same way, by every part of it (livenumbers/project.py):
a write-up that moves its data, lock, bibliography, registered settings and catalogue away from
the defaults, and puts its options in a file mkdocs.yml inherits, gets the same settings from
the build, `accept`, `check`, `numbers` and `render`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import run as in_project
from test_toy import TOY, run

OTHER_DATA = {"apple": 30, "pear": 6, "plum": 4}   # 40 points, the apple 75% of them


@pytest.fixture
def moved(tmp_path) -> Path:
    """The starter with every file option moved off its default, its options in base.yml,
    which mkdocs.yml INHERITs; and the default files gone, so a reader of the defaults fails."""
    root = tmp_path / "toy"
    shutil.copytree(TOY, root, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    docs = root / "docs"
    (docs / "data.json").unlink()
    (docs / "fruit.json").write_text(json.dumps(OTHER_DATA), encoding="utf-8")
    (docs / "references.bib").rename(docs / "works.bib")
    (docs / "settings.yml").rename(docs / "rules.yml")
    (docs / "drafts").mkdir()
    (docs / "drafts" / "idea.md").write_text('# Idea\n\nSomeday {{ num("fruit.kiwi.score") }}.\n', encoding="utf-8")
    raw = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    raw["plugins"] = [{"live-numbers": {"source": "toy_source:make", "options": {"data": "fruit.json"},
                                        "lock": "locks/fruit.lock.json", "bibliography": "works.bib",
                                        "registered": {"file": "rules.yml", "blocks": ["scoring"]},
                                        "exclude": ["drafts/*"]}}]
    raw["exclude_docs"] = "/locks/\n/fruit.json\n/rules.yml\n/works.bib\n"
    raw["not_in_nav"] = "/drafts/\n"
    base = {k: raw.pop(k) for k in ("plugins", "exclude_docs", "not_in_nav")}
    (root / "base.yml").write_text(yaml.safe_dump(base), encoding="utf-8")
    (root / "mkdocs.yml").write_text(yaml.safe_dump({"INHERIT": "base.yml", **raw}), encoding="utf-8")
    return root


def test_every_command_and_the_build_read_the_same_moved_options(moved, tmp_path):
    accept = run(moved, "livenumbers", "accept")
    assert accept.returncode == 0, accept.stdout + accept.stderr
    assert "+ total: 40 (tolerance 0)" in accept.stdout            # the data `options:` names, and only it
    lock = json.loads((moved / "docs" / "locks" / "fruit.lock.json").read_text(encoding="utf-8"))
    assert lock["numbers"]["fruit.apple.share"]["value"] == 0.75 and "scoring" in lock["registrations"]
    assert not (moved / "docs" / "numbers.lock.json").exists()
    check = run(moved, "livenumbers", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "on 2 pages" in check.stdout                               # index.md and updates.md: drafts/ excluded
    numbers = run(moved, "livenumbers", "numbers", "apple score")
    assert numbers.returncode == 0 and "30" in numbers.stdout and "index.md" in numbers.stdout, numbers.stdout
    build = run(moved, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (moved / "site" / "index.html").read_text(encoding="utf-8")
    assert "In all 40 points; the apple has 30,\n75% of them." in page
    assert 'href="#ref-efron1979bootstrap"' in page                   # from works.bib
    assert "Someday {{ num(\"fruit.kiwi.score\") }}." in (moved / "site" / "drafts" / "idea" / "index.html").read_text()
    render = run(moved, "livenumbers", "render", str(tmp_path / "out"))
    assert render.returncode == 0, render.stdout + render.stderr
    assert "In all 40 points" in (tmp_path / "out" / "docs" / "index.md").read_text(encoding="utf-8")
    # The data changed: the build and every command see it, from the same options.
    (moved / "docs" / "fruit.json").write_text(json.dumps({**OTHER_DATA, "apple": 31}), encoding="utf-8")
    for command in (("livenumbers", "check"), ("mkdocs", "build", "--strict")):
        failed = run(moved, *command)
        assert failed.returncode != 0
        assert "fruit.apple.score: recorded 30, now 31 (tolerance 0); cited by index.md" in failed.stdout + failed.stderr


def test_an_option_meant_for_the_source_is_named_when_written_beside_source(moved):
    """`seeds:` beside `source:` is not handed to the source: the build and the commands stop,
    naming it, instead of computing with the source's default."""
    base = yaml.safe_load((moved / "base.yml").read_text(encoding="utf-8"))
    base["plugins"][0]["live-numbers"]["seeds"] = 8
    (moved / "base.yml").write_text(yaml.safe_dump(base), encoding="utf-8")
    for command in (("livenumbers", "accept"), ("mkdocs", "build", "--strict")):
        done = run(moved, *command)
        assert done.returncode != 0 and "seeds" in done.stdout + done.stderr, done.stdout + done.stderr


def test_config_may_follow_the_command(moved, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config = str(moved / "mkdocs.yml")
    for args in (("accept", "--config", config), ("--config", config, "check"), ("check", "--config", config)):
        done = subprocess.run([sys.executable, "-m", "livenumbers", *args], cwd=elsewhere, capture_output=True, text=True,
                              env=os.environ | {"LIVE_NUMBERS_CACHE": str(moved / ".cache")})
        assert done.returncode == 0, (args, done.stdout + done.stderr)


def test_the_study_reads_its_moved_options_in_every_command(project, tmp_path):
    """The same on this study (the small site): its study file and lock renamed, named in
    mkdocs.yml's `extra.live_numbers` and nowhere else. The defaults are gone, so a reader of
    them would fail; `python -m model` and the hooks' build read the options."""
    from livenumbers import config

    docs = project / "docs"
    (docs / "study.yml").rename(docs / "plan.yml")
    (docs / "numbers.lock.json").rename(docs / "record.lock.json")
    raw = config.read(project / "mkdocs.yml")
    opts = raw["extra"]["live_numbers"]
    opts["options"] = {"study": "plan.yml"}
    opts["lock"] = "record.lock.json"
    opts["registered"]["file"] = "plan.yml"
    raw["exclude_docs"] += "/record.lock.json\n"
    (project / "mkdocs.yml").write_text(config.write(raw), encoding="utf-8")
    # accept records the registered blocks' file by its new name; no number moves
    accept = in_project(project, "model", "accept")
    assert accept.returncode == 0, accept.stdout + accept.stderr
    *moved, last = accept.stdout.strip().splitlines()
    assert moved and all(line.startswith("~ registration ") for line in moved)
    assert last == "no published text changed: no entry in the lock's history"
    for args in (("model", "check"), ("model", "numbers", "l6 median sink")):
        done = in_project(project, *args)
        assert done.returncode == 0, (args, done.stdout + done.stderr)
    assert "no change" in in_project(project, "model", "accept").stdout
    render = in_project(project, "model", "render", str(tmp_path / "out"))
    assert render.returncode == 0, render.stdout + render.stderr
    build = in_project(project, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    (docs / "record.lock.json").unlink()
    for args in (("model", "check"), ("mkdocs", "build", "--strict")):
        assert in_project(project, *args).returncode != 0   # the lock the options name, and no other


def test_render_reads_mkdocs_yml_as_written_with_its_python_tags_and_inherit(tmp_path):
    """`render` writes mkdocs.yml back for a builder without the engine: Material's emoji tags
    stay as written, and what the file inherits is merged in (the rendered tree has no base.yml)."""
    from livenumbers import config

    (tmp_path / "base.yml").write_text("theme: {name: material, features: [a]}\nextra: {x: 1, y: 2}\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        "INHERIT: base.yml\nsite_name: S\nextra: {y: 3}\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "      emoji_generator: !!python/name:material.extensions.emoji.to_svg\n", encoding="utf-8")
    raw = config.read(tmp_path / "mkdocs.yml")
    assert raw["theme"] == {"name": "material", "features": ["a"]} and raw["extra"] == {"x": 1, "y": 3}
    assert "INHERIT" not in raw
    text = config.write(raw)
    assert "emoji_index: !!python/name:material.extensions.emoji.twemoji" in text
    assert config.read_text(text)["markdown_extensions"] == raw["markdown_extensions"]
