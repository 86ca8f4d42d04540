"""The engine as a package of its own (engine/pyproject.toml): what another write-up installs.
Its wheel carries the engine and its static files and declares every package the engine
imports; installed into a fresh venv that holds only what it declares (linked from this one:
no index is reachable), it builds the toy with the plain mkdocs command from another folder,
with no torch there to import."""
from __future__ import annotations

import ast
import email
import os
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "livenumbers"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    str(ROOT / "engine"), "-w", str(out)], check=True, capture_output=True,
                   env=os.environ | {"TMPDIR": str(build)})
    return next(out.glob("livenumbers-*.whl"))


def requirements(wheel: Path) -> dict[str, str]:
    """Distribution name (normalised) -> its requirement line, extras included."""
    with zipfile.ZipFile(wheel) as z:
        meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))))
    return {normal(re.split(r"[=<>;\[ ]", r)[0]): r for r in meta.get_all("Requires-Dist") or []}


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def engine_imports() -> dict[str, set[str]]:
    """Top-level modules outside the standard library that the engine imports -> its files,
    with those a child process is told to import (`-c "import vl_convert"`)."""
    found: dict[str, set[str]] = {}
    for path in ENGINE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
        names += [m for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  for m in re.findall(r"(?:^|; )import ((?:\w+, )*\w+)", n.value) for m in m.split(", ")]
        for name in names:
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top != "livenumbers":
                found.setdefault(top, set()).add(path.name)
    return found


def test_the_wheel_carries_the_engine_and_its_static_files(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {"livenumbers/static/charts.js", "livenumbers/locales/fr.yml", "livenumbers/plugin.py"} <= names
    assert not any(n.startswith(("model/", "hooks/", "tests/")) for n in names)
    with zipfile.ZipFile(wheel) as z:
        points = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "live-numbers = livenumbers.plugin:LiveNumbersPlugin" in points


def test_every_package_the_engine_imports_is_declared(wheel):
    declared = requirements(wheel)
    provides = metadata.packages_distributions()     # top-level module -> distributions
    imports = engine_imports()
    assert {"yaml", "jinja2", "mkdocs", "pybtex", "babel", "vl_convert"} <= set(imports)   # the scan sees them
    missing = {m: sorted(files) for m, files in imports.items()
               if not any(normal(d) in declared for d in provides.get(m, [m]))}
    assert not missing, f"imported by the engine but not declared in engine/pyproject.toml: {missing}"
    for requirement in declared.values():
        assert re.search(r"==[\w.]+", requirement), f"not pinned exactly: {requirement}"


def closure(declared: list[str]) -> set[str]:
    """The declared distributions and everything their install brings (normalised names)."""
    seen: set[str] = set()
    todo = [normal(d) for d in declared]
    while todo:
        dist = todo.pop()
        if dist in seen:
            continue
        seen.add(dist)
        needs = [Requirement(r) for r in metadata.requires(dist) or []]
        # what an install brings: a requirement under no extra, or under a marker true here
        todo += [normal(r.name) for r in needs if r.marker is None or r.marker.evaluate({"extra": ""})]
    return seen


def fresh_venv(folder: Path, dists: set[str]) -> Path:
    """A new venv whose site-packages holds exactly `dists`, linked from this one's files
    (offline: no index is reachable), with pip to install the engine's wheel into it."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    site = next(folder.glob("lib/python3.*/site-packages"))
    for name in dists:
        dist = metadata.distribution(name)
        for file in dist.files or []:
            if file.parts[0] == ".." or "__pycache__" in file.parts:
                continue                    # console scripts live in bin/: the engine needs mkdocs' only
            target = site / file
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(Path(dist.locate_file(file)).resolve())
    return folder


def test_a_fresh_venv_installs_the_engine_alone_and_builds_the_toy(wheel, tmp_path):
    import shutil

    dists = closure([*requirements(wheel), "pip"])
    assert not {"torch", "numpy", "dask"} & dists
    venv = fresh_venv(tmp_path / "venv", dists - {"pip"})
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout    # every requirement of every package there is met
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"NO_MKDOCS_2_WARNING": "1"}
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True, env=env)
    assert probe.returncode != 0 and "No module named 'torch'" in probe.stderr
    toy = tmp_path / "toy"
    shutil.copytree(ROOT / "tests" / "toy", toy, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    accept = subprocess.run([str(python), "-m", "livenumbers", "--config", str(toy / "mkdocs.yml"), "accept"],
                            cwd=elsewhere, env=env, capture_output=True, text=True)
    assert accept.returncode == 0, accept.stdout + accept.stderr
    mkdocs = [str(python), "-c", "import sys; from mkdocs.__main__ import cli; sys.exit(cli())"]
    build = subprocess.run([*mkdocs, "build", "--strict", "-f", str(toy / "mkdocs.yml")], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    assert (toy / "site" / "assets" / "javascripts" / "live-charts.js").is_file()
    assert "60% of them" in (toy / "site" / "index.html").read_text(encoding="utf-8")
