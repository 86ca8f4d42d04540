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
    import shutil

    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source") / "engine"    # a copy: the build writes beside its pyproject
    shutil.copytree(ROOT / "engine", source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    str(source), "-w", str(out)], check=True, capture_output=True)
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
    for line in declared.values():   # ranges, as a plugin beside others needs; exact pins are the study's
        operators = {spec.operator for spec in Requirement(line).specifier}
        assert operators == {">=", "<"}, f"not a compatible range (>=lower,<upper): {line}"


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
        for script in dist.entry_points.select(group="console_scripts"):   # `mkdocs`, as pip would write it
            module, _, attr = script.value.partition(":")
            launcher = folder / "bin" / script.name
            launcher.write_text(f"#!{folder / 'bin' / 'python'}\nimport sys\nfrom {module} import {attr}\n"
                                f"sys.exit({attr}())\n", encoding="utf-8")
            launcher.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the engine's wheel installed, holding only what it declares."""
    dists = closure([*requirements(wheel), "pip"])
    assert not {"torch", "numpy", "dask"} & dists
    venv = fresh_venv(tmp_path_factory.mktemp("fresh") / "venv", dists - {"pip"})
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                              str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    return venv


ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"NO_MKDOCS_2_WARNING": "1"}


@pytest.mark.fresh_venv
def test_a_fresh_venv_installs_the_engine_alone_and_builds_the_toy(venv, tmp_path):
    import shutil

    python = venv / "bin" / "python"
    check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout    # every requirement of every package there is met
    env = ENV
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True, env=env)
    assert probe.returncode != 0 and "No module named 'torch'" in probe.stderr
    toy = tmp_path / "toy"
    shutil.copytree(ROOT / "livenumbers" / "starter", toy, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    accept = subprocess.run([str(python), "-m", "livenumbers", "--config", str(toy / "mkdocs.yml"), "accept"],
                            cwd=elsewhere, env=env, capture_output=True, text=True)
    assert accept.returncode == 0, accept.stdout + accept.stderr
    build = subprocess.run([str(venv / "bin" / "mkdocs"), "build", "--strict", "-f", str(toy / "mkdocs.yml")], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    assert (toy / "site" / "assets" / "javascripts" / "live-charts.js").is_file()
    assert "60% of them" in (toy / "site" / "index.html").read_text(encoding="utf-8")


@pytest.mark.fresh_venv
def test_the_starter_in_a_fresh_venv_shows_an_update_after_a_data_change_and_accept(venv, tmp_path):
    """Issue 48's outside write-up: `new`, accept, a data change, accept refused without a
    reason then given one, a build: its page says what the number said, what it says and why."""
    env = ENV | {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    folder = tmp_path / "hello"

    def run(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run(command, cwd=folder if folder.exists() else tmp_path, env=env, capture_output=True, text=True)

    for command in (("python", "-m", "livenumbers", "new", "hello"), ("python", "-m", "livenumbers", "accept")):
        assert run(*command).returncode == 0
    (folder / "docs" / "data.json").write_text('{"apple": 13, "pear": 5, "plum": 3}', encoding="utf-8")
    refused = run("python", "-m", "livenumbers", "accept")
    assert refused.returncode == 1 and "no reason in the site's language (en)" in refused.stdout
    reason = "The apple's points were miscounted in the data."
    accepted = run("python", "-m", "livenumbers", "accept", "--reason", reason)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    build = run("mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (folder / "site" / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="updates">Updates</h2>' in page and "The apple&#39;s points were miscounted in the data&#46;" in page
    assert "<td><del>20</del></td>" in page and "<td>21</td>" in page and 'class="number-update"' in page
    assert "Numbers printed otherwise: 5." in (folder / "site" / "updates" / "index.html").read_text(encoding="utf-8")


def quickstart() -> list[str]:
    """The commands of the guide's quickstart (its first code block), comments cut."""
    page = (ROOT / "engine" / "guide" / "docs" / "index.md").read_text(encoding="utf-8")
    block = page.split("```\n", 2)[1]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


@pytest.mark.fresh_venv
def test_the_guides_quickstart_from_an_empty_folder(venv, tmp_path):
    """The guide's quickstart as a new author types it, in a fresh venv (its `pip install`
    done by the fixture, from the same wheel): at most five commands to a built page with
    locked numbers, a number measured here (marked as such), a table, a chart, a claim, a
    citation, and its French edition."""
    commands = quickstart()
    assert len(commands) <= 5 and commands[0].startswith("pip install") and "[charts,i18n]" in commands[0]
    env = ENV | {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    folder = tmp_path
    for command in commands[1:]:
        if command.startswith("cd "):
            folder = folder / command[3:]
            continue
        done = subprocess.run(command.split(), cwd=folder, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}:\n{done.stdout}{done.stderr}"
    page = (folder / "site" / "index.html").read_text(encoding="utf-8")
    assert "In all 20 points" in page and "<td>apple</td>" in page and 'class="vega-chart"' in page
    assert 'href="#ref-efron1979bootstrap"' in page and (folder / "docs" / "numbers.lock.json").is_file()
    measured = re.findall(r'<span class="measured-here" data-measured-here="[^"]+ cores, [^"]+">([^<]+)</span> s to compute', page)
    assert len(measured) == 1 and "results.seconds" not in (folder / "docs" / "numbers.lock.json").read_text()
    french = (folder / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    assert "En tout 20 points\u202f; la pomme en a 12" in french and "<td>pomme</td>" in french
    assert 'class="measured-here"' in french and "c\u0153urs" in french
    again = subprocess.run("python -m livenumbers new hello".split(), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 2 and "hello: exists and is not empty" in again.stderr


def test_the_guide_is_built_by_the_engine_with_its_numbers_locked(tmp_path):
    import shutil

    guide = tmp_path / "guide"
    shutil.copytree(ROOT / "engine" / "guide", guide, ignore=shutil.ignore_patterns(".cache", "site", "__pycache__"))
    env = ENV | {"LIVE_NUMBERS_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=guide, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    reference = (guide / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    assert "<td><code>pct:1</code></td>" in reference and "26,5\u202f%" in reference
    assert '<h2 id="formats">' in reference and "{ #formats }" not in reference   # the heading's id, not its text
    assert "{{ num(" in (guide / "site" / "index.html").read_text(encoding="utf-8")    # the examples stay examples
