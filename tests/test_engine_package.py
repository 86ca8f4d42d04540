"""The engine as a package of its own (engine/pyproject.toml): what another write-up installs.
Its wheel carries the engine and its static files, declares every package the engine imports,
and the toy write-up builds importing nothing else (no torch, nothing of the study)."""
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


# A child that builds the toy, then names every installed package it loaded outside the
# engine, the toy and the closure of what the engine's wheel declares.
GUARD = """
import atexit, json, sys
allowed = set(json.loads(sys.argv.pop(1)))
def undeclared():
    installed = {name for name, module in list(sys.modules.items())   # loaded from an installed package
                 if "." not in name and not name.startswith("__editable__") and "-packages" in str(getattr(module, "__file__", None) or "")}
    extra = sorted(m for m in installed if m not in allowed)
    if extra:
        sys.stderr.write(f"undeclared: {extra}\\n")
        sys.stderr.flush()
        import os
        os._exit(3)
atexit.register(undeclared)
from mkdocs.__main__ import cli
cli()
"""


# Loaded where installed, by a declared package that does without them.
OPTIONAL = {"pygments": "Python-Markdown's codehilite", "idna": "jsonschema's format checks (Altair)",
            "_distutils_hack": "setuptools' site hook"}


def closure(declared: list[str]) -> set[str]:
    """Every top-level module the declared distributions and their requirements provide."""
    by_dist: dict[str, set[str]] = {}
    for module, dists in metadata.packages_distributions().items():
        for d in dists:
            by_dist.setdefault(normal(d), set()).add(module)
    seen: set[str] = set()
    todo = [normal(d) for d in declared]
    while todo:
        dist = todo.pop()
        if dist in seen:
            continue
        seen.add(dist)
        try:
            needs = [Requirement(r) for r in metadata.requires(dist) or []]
        except metadata.PackageNotFoundError:
            continue
        # what an install brings: a requirement under no extra, or under no marker that fails here
        todo += [normal(r.name) for r in needs if r.marker is None or r.marker.evaluate({"extra": ""})]
    return {m for d in seen for m in by_dist.get(d, ())}


def test_the_toy_builds_with_only_what_the_wheel_declares(wheel, tmp_path):
    import json
    import shutil

    allowed = closure(list(requirements(wheel))) | {"livenumbers", "toy_source"} | set(OPTIONAL)
    assert not {"torch", "numpy", "dask"} & allowed
    toy = tmp_path / "toy"
    shutil.copytree(ROOT / "tests" / "toy", toy, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
        "NO_MKDOCS_2_WARNING": "1", "LIVE_NUMBERS_CACHE": str(toy / ".cache"), "PYTHONPATH": str(ROOT)}
    run = lambda *args: subprocess.run([sys.executable, "-c", GUARD, json.dumps(sorted(allowed)), *args],
                                       cwd=toy, env=env, capture_output=True, text=True)
    accept = subprocess.run([sys.executable, "-m", "livenumbers", "accept"], cwd=toy, env=env | {"PYTHONPATH": f"{ROOT}:{toy}"},
                            capture_output=True, text=True)
    assert accept.returncode == 0, accept.stdout + accept.stderr
    build = run("build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    assert (toy / "site" / "assets" / "javascripts" / "live-charts.js").is_file()
