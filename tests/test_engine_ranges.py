"""The engine installed as another project installs it, from the package registry: beside the
newest mkdocs-material there is, and under a constraints file pinning older versions of the
libraries it shares with its neighbours. Its requirements are ranges (engine/pyproject.toml),
so neither refuses to install nor moves what is already there; each venv then builds the
starter. These download from the registry (marker `registry`: `make test` runs them,
`make test-fast` does not)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

# Older than the study's pins, and within the engine's ranges and MkDocs 1.6's.
OLDER = {"Jinja2": "3.1.2", "MarkupSafe": "2.1.5", "PyYAML": "6.0.1", "babel": "2.14.0", "watchdog": "4.0.2"}

ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"NO_MKDOCS_2_WARNING": "1"}


def venv_with(tmp_path: Path, *pip_args: str) -> Path:
    """A fresh venv with `pip install pip_args` done from the registry."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    engine = tmp_path / "engine"   # a copy: pip builds beside its pyproject
    shutil.copytree(ROOT / "engine", engine, symlinks=False, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                              *[a.replace("ENGINE", str(engine)) for a in pip_args]],
                             capture_output=True, text=True, env=ENV)
    assert install.returncode == 0, install.stdout + install.stderr
    check = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check"], capture_output=True, text=True, env=ENV)
    assert check.returncode == 0, check.stdout + check.stderr
    return venv


def version(venv: Path, dist: str) -> str:
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    return subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                          check=True, env=ENV).stdout.strip()


def builds_the_starter(venv: Path, folder: Path, theme: str | None = None) -> str:
    """The starter accepted and built --strict with the venv's own commands; its page."""
    shutil.copytree(ROOT / "livenumbers" / "starter", folder, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    if theme:
        raw = yaml.safe_load((folder / "mkdocs.yml").read_text(encoding="utf-8"))
        raw["theme"] = {"name": theme, "font": False}
        (folder / "mkdocs.yml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    for command in ([str(venv / "bin" / "python"), "-m", "livenumbers", "accept"],
                    [str(venv / "bin" / "mkdocs"), "build", "--strict"]):
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=ENV)
        assert done.returncode == 0, (command, done.stdout + done.stderr)
    return (folder / "site" / "index.html").read_text(encoding="utf-8")


@pytest.mark.registry
def test_the_engine_installs_beside_the_newest_mkdocs_material_and_builds_the_starter(tmp_path):
    venv = venv_with(tmp_path, "mkdocs-material", "ENGINE[charts]")
    newest = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "index", "versions", "mkdocs-material"],
                            capture_output=True, text=True, env=ENV).stdout
    assert f"mkdocs-material ({version(venv, 'mkdocs-material')})" in newest, newest   # the registry's newest
    page = builds_the_starter(venv, tmp_path / "hello", theme="material")
    assert "In all 20 points" in page and 'class="vega-chart"' in page


@pytest.mark.registry
def test_the_engine_installs_under_older_pinned_neighbours_and_builds_the_starter(tmp_path):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("".join(f"{name}=={v}\n" for name, v in OLDER.items()), encoding="utf-8")
    venv = venv_with(tmp_path, "-c", str(constraints), "ENGINE[charts]", "watchdog")
    assert {name: version(venv, name) for name in OLDER} == OLDER    # nothing moved to suit the engine
    page = builds_the_starter(venv, tmp_path / "hello")
    assert "In all 20 points" in page and "<td>pear</td>" in page
