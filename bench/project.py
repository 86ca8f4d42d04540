"""Copies of the project for the bench to build: a source snapshot, hooked copies, the plain copy.

The snapshot (`export`) is taken once per run, from the working tree or a git revision:
people edit model/ and docs/ while the bench runs, and an edit half-way through would
change the results' cache key between rounds. Every build imports `model` from the
snapshot (it is put first on PYTHONPATH), and so does the bench itself.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("mkdocs.yml", "docs", "hooks", "model", "livenumbers")   # what a build reads from the project
SITE_PARTS = ("mkdocs.yml", "docs", "hooks")      # what each build copy holds (model/ is imported)


def export(dst: Path, rev: str | None) -> Path:
    """The project's PARTS in `dst`: from the working tree, or from git revision `rev`."""
    dst.mkdir(parents=True)
    if rev:
        archive = subprocess.run(["git", "archive", "--format=tar", rev, *PARTS], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
    else:
        for part in PARTS:
            _copy(ROOT / part, dst / part)
    return dst


def site_copy(src: Path, dst: Path) -> Path:
    """A folder MkDocs can build: mkdocs.yml, docs/ and hooks/ from the snapshot `src`."""
    dst.mkdir(parents=True)
    for part in SITE_PARTS:
        _copy(src / part, dst / part)
    return dst


def _copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy2(src, dst)


def plain_copy(warm: Path, cache_dir: Path, dst: Path) -> Path:
    """MkDocs alone on the same content as a hooked build of `warm` (whose cache must be
    warm): `python -m model render`'s tree (model/site/render.py), the product a builder
    without hooks publishes. The floor a hooked build cannot go under."""
    from livenumbers import render

    render.write_tree(warm / "mkdocs.yml", dst, cache_dir=cache_dir)
    return dst


_PROSE = re.compile(r"^[A-Za-z][^|<>{}`]{40,}$")


def prose_edit(copy: Path, n: int) -> str:
    """Change one sentence of one page (the first plain prose line, no template in it);
    returns where."""
    for path in sorted((copy / "docs").rglob("*.md")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if _PROSE.match(line):
                lines[i] = re.sub(r"\.?\s*$", f"; edited for bench run {n}.", line, count=1)
                path.write_text("\n".join(lines), encoding="utf-8")
                return f"{path.relative_to(copy / 'docs').as_posix()}:{i + 1}"
    raise SystemExit("bench: found no plain prose line to edit in docs/")


def study_copy(docs: Path, dst: Path, key: str) -> Path:
    """study.yml from `docs` listing model `key` alone (every file it reads beside it: the
    corpus, the flip pairs, Part 9's confirmation corpus), for measuring one model by itself."""
    from model import study   # the snapshot's model/, imported by then (bench/__main__.py)

    raw = yaml.safe_load((docs / "study.yml").read_text(encoding="utf-8"))
    raw = study.with_models(raw, [m for m in raw["models"] if m["key"] == key])
    dst.mkdir(parents=True)
    for path in study.load(docs / "study.yml").files:
        target = dst / path.relative_to(docs)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    (dst / "study.yml").write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dst / "study.yml"


def models(docs: Path) -> list[str]:
    """The model keys of study.yml, in its order."""
    raw = yaml.safe_load((docs / "study.yml").read_text(encoding="utf-8"))
    return [str(m["key"]) for m in raw["models"]]
