"""Shared fixtures and helpers.

- No network: sockets are blocked by pytest-socket (pyproject.toml) except 127.0.0.1,
  and the Hugging Face hub is told it is offline.
- Nothing is written into the working tree: project copies, caches, built sites and
  screenshots live in temporary folders.
- The real study is measured once per run: `session_cache` is a temporary cache folder
  holding its results and views, copied from the project's own `.cache` when that holds a
  valid entry for today's key, measured cold otherwise (in a fresh clone, `make test`
  measures here: the numbers gate is test_gate.py's). Every project copy is seeded from it
  (`copy_project`), so no test runs the full corpus again.
- Under pytest-xdist (`make test` runs two workers) the expensive session folders (the
  cache, the small site, the real site) are made once per run, not once per worker:
  `once_per_run` makes each under a file lock, and the other workers wait and reuse it.
- `tiny_project`: a small site of the tests' own (tests/tiny) over the real results, so
  the hooks, the gate and the CLI are tested apart from the articles' prose; `project`
  is a fresh copy of it for each test, `real_project` one of the real project.
- `serve(folder)` serves a folder on 127.0.0.1 for the browser tests.
- Hand-made inputs (`hand_corpus`, `attending`) for definitions checked on paper, and a
  small study (`small_measured`: 12 sentences, 2 flip pairs and 2 null pairs) for the real pipeline in
  seconds; `use_small_corpus` puts a project on such a study when a test must measure.
"""
from __future__ import annotations

from model.site.source import study_settings

import contextlib
import dataclasses
import fcntl
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest
from _pytest.nodeid import NodeId
import yaml

ROOT = Path(__file__).resolve().parent.parent
TINY = Path(__file__).resolve().parent / "tiny"   # the small site's own pages

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["NO_MKDOCS_2_WARNING"] = "1"
# Each project uses its own `.cache` unless a test says otherwise (see `session_cache`).
os.environ.pop("LIVE_NUMBERS_CACHE", None)
# This tree's model/ for the tests and for every process they start (mkdocs, `python -m
# model`, a notebook's kernel), whatever the venv's .pth file points at.
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])

from livenumbers.files import link_or_copy  # noqa: E402  (this tree's model/, as above)

# Outside the working tree; set SCREENSHOTS to put them elsewhere.
SCREENSHOTS = Path(os.environ.get("SCREENSHOTS", Path(tempfile.gettempdir()) / "attention-instrument-screenshots"))


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist's, which reads the groups into the test ids
def pytest_collection_modifyitems(config, items):
    """Tests that read the real study's results (through `session_cache`, directly or not)
    are marked `measured`, and tests that run a model over sentences (RUNS_MODELS, MPNet)
    `models`: `make test-fast` leaves both out, with the browser tests.

    Under pytest-xdist (`--dist loadgroup`), tests that use a module-scoped fixture stay on
    one worker, grouped by module (and checkpoint: `xdist_group`), so the fixture is made
    once; every other test goes to whichever worker is free (the session's folders are
    shared: `once_per_run`)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "session_cache" in fixtures:
            item.add_marker(pytest.mark.measured)
        group = xdist_group(item)
        if fixtures & RUNS_MODELS or group == MPNET_GROUP:
            item.add_marker(pytest.mark.models)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
            if getattr(config.option, "loadgroup", False) and "@" not in item.nodeid:
                # pytest-xdist 3.8 marks the group in `item._nodeid`, which pytest 9 no longer
                # reads (a node's id is `item._id`): without this, every group is ignored and
                # each worker makes the module's fixture again.
                item._id = NodeId.parse(f"{item.nodeid}@{group}")


class _LongestFirst:
    """Under xdist's loadgroup, the longest work units first, so that the other worker
    fills in around them with the short tests and both finish together (xdist's own
    order is by how many tests a group holds, not how long it takes)."""

    @pytest.hookimpl(trylast=True)   # after pytest's own reordering by fixture parameters
    def pytest_collection_modifyitems(self, config, items):
        if getattr(config.option, "loadgroup", False):
            rank = {name: i for i, name in enumerate(LONG_GROUPS)}
            items.sort(key=lambda item: rank.get(_group_of(item), len(rank)))


def pytest_configure(config):
    config.pluginmanager.register(_LongestFirst(), "longest-first")
    if getattr(config.option, "dist", "no") == "loadgroup":
        # The controller's queue in the workers' collection order (_LongestFirst), not
        # resorted by group size.
        config.option.loadscopereorder = False


# Every test that loads MPNet (the `mpnet` fixture, or `ckpt` as mpnet-base), whatever its module.
MPNET_GROUP = "mpnet-base"

# The fixtures that run a model over sentences (seconds to minutes each): the small study
# measured in process (here), on a Dask cluster (test_cluster.py: `small_project`, `chunks`)
# and under float64's watch (test_float64.py: `watched`), and transformers' own models, the
# reference's peers (test_encoder.py: `hf_model`; test_ground_truth.py: `peer`; 3 to 4 s to
# import in each worker; the edit loop keeps the reference against its float64 oracle). Their
# tests are marked `models`.
RUNS_MODELS = frozenset({"small_measured", "small_project", "chunks", "watched", "hf_model", "peer"})

# Work units (xdist groups, or single tests) that take longest, longest first (measured
# with --durations): started first, they run beside each other and the short tests fill in.
LONG_GROUPS = [
    MPNET_GROUP,                    # with test_mpnet_on_the_corpus_three_ways
    "test_browser_runtime",
    "test_hooks",
    "test_render",
    # make test-fast's longest (4 to 12 s each)
    "test_bad_values.py::test_results_json_cannot_carry_are_named_and_nothing_is_kept",
    "test_study_updates.py::test_the_history_is_what_backfill_writes_from_git_and_the_reasons",
    "test_options.py::test_every_command_and_the_build_read_the_same_moved_options",
]


def xdist_group(item) -> str | None:
    """The group a test must share a worker with, or None: the test's own xdist_group mark
    if it has one; else every test that loads MPNet, on one worker; else tests that use a
    module-scoped fixture stay together so the fixture is made once: grouped by module,
    and by the value of any session-scoped parameter (the checkpoint) they take, since a
    module fixture that depends on it is made once per value anyway."""
    mark = item.get_closest_marker("xdist_group")   # a test's own choice (or the one set below)
    if mark is not None:
        return mark.args[0] if mark.args else mark.kwargs["name"]
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "mpnet" in getattr(item, "fixturenames", ()) or params.get("ckpt") == "mpnet-base":
        return MPNET_GROUP   # MPNet (4 s to inflate and check) loaded by one worker only
    fixtures = getattr(item, "_fixtureinfo", None)
    if not fixtures or not any(defs[-1].scope == "module" for defs in fixtures.name2fixturedefs.values()):
        return None
    keyed = [f"{params[name]}" for name in sorted(params)
             if name in fixtures.name2fixturedefs and fixtures.name2fixturedefs[name][-1].scope in ("session", "package")]
    # No brackets: xdist reads a group only after the id's last "]" (a parameter's end).
    return item.module.__name__ + (f":{'-'.join(keyed)}" if keyed else "")


def _group_of(item) -> str:
    """The work unit's name as LONG_GROUPS spells it: the group, else file::test."""
    return xdist_group(item) or item.nodeid.split("/")[-1].split("[")[0]


# -- models and the study -------------------------------------------------------------------

@pytest.fixture(scope="session")
def l6():
    from model import weights

    return weights.load("minilm-l6")


@pytest.fixture(scope="session")
def l3():
    from model import weights

    return weights.load("minilm-l3")


@pytest.fixture(scope="session")
def mpnet():
    from model import weights

    return weights.load("mpnet-base")


@pytest.fixture(scope="session")
def mpnet_members() -> dict[str, bytes]:
    """config.json and model.safetensors of the mpnet-base zip, read on a path of their
    own (the parts concatenated in memory, the standard zipfile), not the loader's."""
    import io
    import zipfile

    from model import weights

    spec = weights.SPLIT_ZIPS["mpnet-base"]
    joined = b"".join(weights.package_file(dist, rel).read_bytes() for dist, rel in spec.parts)
    with zipfile.ZipFile(io.BytesIO(joined)) as zf:
        return {name: zf.read(f"{spec.folder}/{name}") for name in ("config.json", "model.safetensors")}


@pytest.fixture(params=["minilm-l6", "minilm-l3", "mpnet-base"], scope="session")
def ckpt(request):
    return request.getfixturevalue({"minilm-l6": "l6", "minilm-l3": "l3", "mpnet-base": "mpnet"}[request.param])


@pytest.fixture(scope="session")
def study():
    from model import study as study_mod

    return study_mod.load(ROOT / "docs" / "study.yml")


@pytest.fixture
def l6_folder(tmp_path, l6) -> Path:
    """A writable copy of the packaged L6 folder, to break on purpose."""
    dst = tmp_path / "l6"
    shutil.copytree(l6.weights_path.parent, dst, ignore=shutil.ignore_patterns("1_Pooling", "*.md"))
    return dst


@pytest.fixture(scope="session")
def small_study(study):
    """The real study on its first 12 sentences, no anchors, and 2 flip pairs: the first as
    written and its mirror, with their 2 null pairs; Part 9 on the first 12 of the
    confirmation corpus and of the replication."""
    n = 12
    first, mirror = 0, next(i for i, p in enumerate(study.flip_pairs) if p.source == 1)
    rep = study.calibration.replication
    ma = study.calibration.mean_ablation   # Part 10's fresh corpus, as small as the others
    if ma is not None and ma.fresh is not None:
        ma = dataclasses.replace(ma, fresh=dataclasses.replace(ma.fresh, sentences=ma.fresh.sentences[:n],
                                                               registers=ma.fresh.registers[:n]))
    cal = dataclasses.replace(study.calibration, confirmation=study.calibration.confirmation[:n],
                              confirmation_registers=study.calibration.confirmation_registers[:n],
                              replication=dataclasses.replace(rep, sentences=rep.sentences[:n], registers=rep.registers[:n]),
                              mean_ablation=ma)
    return dataclasses.replace(study, sentences=study.sentences[:n], registers=study.registers[:n], anchors=(),
                               calibration=cal,
                               flip_pairs=(study.flip_pairs[first], study.flip_pairs[mirror]),
                               null_pairs=tuple(p for p in study.null_pairs if p.source in (first + 1, mirror + 1)))


@pytest.fixture(scope="session")
def small_measured(l6, small_study):
    """L6 measured on `small_study`, self-checks and mutant run included (seconds)."""
    from model import checks, measure

    m = measure.measure_model(l6, small_study, "l6")
    checks.run(l6, m, small_study)
    return m


# -- hand-made sentences ----------------------------------------------------------------------

def hand_sentence(words: list[str], word_ids: list[int | None], alpha: np.ndarray,
                  value_norm: np.ndarray | None = None, output_norm: np.ndarray | None = None):
    """(Tokenized, Activations) for a sentence made by hand: alpha [L, nh, T, T], norms
    [L, nh, T] (ones by default). Token ids and hidden states are placeholders."""
    from model.activations import Activations
    from model.tokenize import Tokenized

    T = len(word_ids)
    ones = np.ones(alpha.shape[:-1])
    tok = Tokenized(text=" ".join(words), ids=list(range(T)), tokens=[f"t{t}" for t in range(T)],
                    word_ids=list(word_ids), words=list(words))
    act = Activations(alpha=np.asarray(alpha, float),
                      value_norm=ones if value_norm is None else np.asarray(value_norm, float),
                      output_norm=ones if output_norm is None else np.asarray(output_norm, float),
                      hidden=np.zeros((T, 4)))
    return tok, act


def hand_corpus(*sentences):
    """A `model.corpus.Corpus` from `hand_sentence` results."""
    from model.corpus import corpus_rows

    return corpus_rows([t for t, _ in sentences], [a for _, a in sentences])


SINGLE = [None, 0, 1, 2, 3, None]    # word ids: [CLS], four one-token words, [SEP]
NEXT_DOOR = [1, 0, 3, 2]             # targets for `attending`: every word peaks on a neighbour
TWO_AWAY = [2, 3, 0, 1]              # ... none does


def attending(*heads: list[int], sink: float = 0.3, layers: int = 1) -> np.ndarray:
    """alpha [L, nh, T, T] over SINGLE: in head h, word w's token puts 1 - sink on the
    token of word heads[h][w] and `sink` on [CLS]; [CLS] and [SEP] attend to themselves."""
    T = len(SINGLE)
    alpha = np.zeros((layers, len(heads), T, T))
    alpha[:, :, 0, 0] = alpha[:, :, T - 1, T - 1] = 1.0
    for h, targets in enumerate(heads):
        for w, target in enumerate(targets):
            alpha[:, h, w + 1, target + 1] = 1.0 - sink
            alpha[:, h, w + 1, 0] = sink
    return alpha


# -- running things ---------------------------------------------------------------------------

def run(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m <args>` in `project` (`mkdocs ...`, `model ...`), output captured."""
    return subprocess.run([sys.executable, "-m", *args], cwd=project, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def mkdocs_build(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run(project, "mkdocs", "build", "--strict", *args, env=env)


def output(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (a free port) from a thread; yields its URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# -- the toy write-up (the engine's starter) ----------------------------------------------------

TOY = ROOT / "livenumbers" / "starter"   # what `python -m livenumbers new` writes


def run_in_toy(root: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m ARGS` in the toy's folder, its source importable (as a project's own module is)."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
                        "NO_MKDOCS_2_WARNING": "1", "LIVE_NUMBERS_CACHE": str(root / ".cache")}
    return subprocess.run([sys.executable, "-m", *args], cwd=root, env=env, capture_output=True, text=True)


@pytest.fixture(scope="session")
def accepted_toy(tmp_path_factory) -> Path:
    """The toy write-up, its lock accepted and built once per run: its cache warm (the results,
    the chart, the pages). Never change it: `toy` gives a copy."""
    def make(root: Path) -> None:
        shutil.copytree(TOY, root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".cache", "site"))
        accept_and_build(root)

    return once_per_run(tmp_path_factory, "toy", make)


@pytest.fixture(scope="session")
def accepted_bilingual_toy(tmp_path_factory):
    """The toy with a French edition, as `new --french` writes it: the i18n plugin,
    index.fr.md, updates.fr.md, docs/locales/fr.yml; its lock accepted and built once per
    run (its cache warm). Never change it: `bilingual_toy` gives a copy."""
    from livenumbers.__main__ import new_writeup

    def make(root):
        new_writeup(root / "toy", french=True)
        accept_and_build(root / "toy")

    return once_per_run(tmp_path_factory, "bilingual-toy", make) / "toy"


def accept_and_build(root: Path) -> None:
    """A toy's lock accepted and its site built, which fills its cache."""
    for command in (("livenumbers", "accept"), ("mkdocs", "build", "--strict")):
        done = run_in_toy(root, *command)
        assert done.returncode == 0, done.stdout + done.stderr


def toy_copy(accepted: Path, tmp_path: Path) -> Path:
    """A copy of an accepted toy to change, its cache warm, no site built: a build recomputes
    only what the test changes (the cache is keyed by what each entry depends on)."""
    root = tmp_path / "toy"
    shutil.copytree(accepted, root, ignore=shutil.ignore_patterns("__pycache__", "site"))
    return root


# -- projects -------------------------------------------------------------------------------------

def seed_cache(src: Path, dst: Path) -> None:
    """Copy a cache folder. The instrument's views (hundreds of MB, only ever read or
    replaced whole, never written in place) are hard-linked; everything else is copied,
    so a test may damage its own entries without touching `src`."""

    def copy(s: str, d: str) -> None:
        (link_or_copy if Path(s).relative_to(src).parts[0] == "files" else shutil.copy2)(s, d)

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.tmp"), copy_function=copy)


def copy_project(src: Path, dst: Path, cache: Path | None = None) -> Path:
    """The project at `src` (mkdocs.yml, docs/, hooks/) copied to `dst`, its `.cache`
    seeded from `cache` if given. The one way tests get a project to change or build."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "mkdocs.yml", dst / "mkdocs.yml")
    for name in ("docs", "hooks"):
        shutil.copytree(src / name, dst / name, ignore=shutil.ignore_patterns("__pycache__"))
    if cache is not None:
        seed_cache(cache, dst / ".cache")
    return dst


def once_per_run(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """Folder `name`, filled by `make(folder)` once per test run. Under pytest-xdist the
    workers share the run's temporary folder: the first to ask makes it under a file lock
    and the others wait, then all read it (tests change copies, never it). If `make` fails,
    its error is kept and every later asker fails at once with it: trying again would fail
    again, and a failing build of the real site, tried once per test, outlasted CI's budget."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent                       # above every worker's own folder
    folder, done, failed = base / name, base / f"{name}.done", base / f"{name}.failed"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.exists():
            pytest.fail(f"{name}, made once for this run, failed (first error below):\n{failed.read_text()}", pytrace=False)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                make(folder)
            except BaseException as error:
                failed.write_text("".join(traceback.format_exception_only(type(error), error))[-20000:])
                raise
            done.touch()
    return folder


def seed_entries(src: Path, dst: Path, key: str, kinds: tuple[str, ...]) -> bool:
    """Copy the valid cache entries (kind, key) from cache folder `src` into `dst`; False,
    copying nothing, if any of them is missing or unusable there."""
    from livenumbers import cache

    found = [cache.read(src, kind, key) for kind in kinds]
    if any(f is None for f in found):
        return False
    for kind, folder in zip(kinds, found):   # views linked, as `seed_cache` links them
        shutil.copytree(folder, cache.entry_dir(dst, kind, key),
                        copy_function=link_or_copy if kind == "files" else shutil.copy2)
    return True


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """A temporary cache folder holding the real study's results and views (LIVE_NUMBERS_CACHE
    points `gate.Settings.at` at it): the project's own `.cache` entries for today's key if
    it has valid ones, else measured cold here (a fresh clone's `make test`). Either way
    once per run."""
    from livenumbers import cache, gate

    def make(folder: Path) -> None:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("LIVE_NUMBERS_CACHE", str(folder))
            settings = study_settings(ROOT)
            assert settings.cache_dir == folder.resolve()
            if not seed_entries(ROOT / ".cache", folder, gate.results_key(settings), ("results", "files")):
                gate.load_results(settings)

    folder = once_per_run(tmp_path_factory, "cache", make)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIVE_NUMBERS_CACHE", str(folder))
        key = gate.results_key(study_settings(ROOT))
    assert cache.read(folder, "results", key) is not None and cache.read(folder, "files", key) is not None
    return folder


@pytest.fixture(scope="session")
def session_results(session_cache) -> tuple[dict, str]:
    """(results, key) of the real study, from `session_cache`."""
    from livenumbers import cache, gate

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LIVE_NUMBERS_CACHE", str(session_cache))
        key = gate.results_key(study_settings(ROOT))
    return cache.load_json(session_cache, "results", key), key


def tiny_mkdocs_yml(french: bool = False) -> str:
    """The project's mkdocs.yml with the small site's nav in place of the articles'; in
    English only unless `french` (the small site's French pages are tests/tiny/fr/)."""
    from livenumbers import config

    raw = config.read_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    raw.pop("nav")
    if not french:
        raw["plugins"] = [p for p in raw["plugins"] if not (isinstance(p, dict) and "i18n" in p)]
        raw["extra"].pop("alternate")
    # The nav as mkdocs.yml writes it (indented), so a test can insert an entry after "nav:".
    return (config.write(raw) + "nav:\n  - Home: index.md\n  - Evidence: evidence.md\n"
            "  - Instrument: instrument.md\n  - Notebook: notebook.ipynb\n")


def use_small_corpus(project: Path, extra: list[str] = (), n: int = 10, models: list[dict] | None = None,
                     others: int | None = None) -> None:
    """Point a project's study at the first `n` sentences of its corpus plus `extra`, Parts 9
    and 10's corpora at their first `others` (default `n`), a flip pair and its mirror (with
    their null pairs) and no anchors (and `models`, if given): a measurement of seconds, for
    the tests that must measure again."""
    docs = project / "docs"
    study = yaml.safe_load((docs / "study.yml").read_text(encoding="utf-8"))
    corpus = docs / study["corpus"]
    lines = corpus.read_text(encoding="utf-8").splitlines()[:n] + [f"test\t{s}" for s in extra]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for block in ("confirmation", "replication", "fresh_corpus"):   # Parts 9 and 10's corpora, as small
        other = docs / study[block]["corpus"]
        head = other.read_text(encoding="utf-8").splitlines()[:n if others is None else others]
        other.write_text("\n".join(head) + "\n", encoding="utf-8")
    # The first flip pair, its mirror and their null pairs (renumbered): every set the
    # pages show (each order, the null pairs) has a pair in it.
    pairs = docs / study["flip_pairs"]
    raw = yaml.safe_load(pairs.read_text(encoding="utf-8"))
    mirror = next(p for p in raw["flip_pairs"] if p.get("mirrors") == 1)
    nulls = [dict(p, **{"from": 1}) for p in raw["null_pairs"] if p["from"] == 1] + \
        [dict(p, **{"from": 2}) for p in raw["null_pairs"] if p["from"] == raw["flip_pairs"].index(mirror) + 1]
    pairs.write_text(yaml.safe_dump({"flip_pairs": [raw["flip_pairs"][0], mirror], "null_pairs": nulls}),
                     encoding="utf-8")
    study["anchors"] = []
    if models is not None:
        from model.study import with_models

        fewer = with_models(study, models)
        for block in ("calibration", "replication"):   # registered: a study that changes them says why
            if fewer.get(block) != study.get(block):
                fewer.setdefault("amendments", {}).setdefault(block, []).append(
                    {"date": "2026-12-04", "reason": "A test's study: fewer models.",
                     "changes": f"models other than {', '.join(str(m['key']) for m in models)} left out"})
        study = fewer
    (docs / "study.yml").write_text(yaml.safe_dump(study, sort_keys=False, allow_unicode=True), encoding="utf-8")


@pytest.fixture(scope="session")
def tiny_project(tmp_path_factory, session_cache) -> Path:
    """A small site over the real study: tests/tiny/docs (pages and a notebook that cite
    a few numbers, and the instrument), the real study, corpus and flip pairs, the real hooks and
    mkdocs.yml (nav aside), and a lock of its own, accepted once. Built once here into
    `site/`, which warms `session_cache` (charts, pages, the Vega bundle, the executed
    notebook). Never change it: `project` gives a copy. Made once per run."""
    return once_per_run(tmp_path_factory, "tiny", lambda root: _make_tiny(root, session_cache))


def _make_tiny(root: Path, session_cache: Path) -> None:
    (root / "mkdocs.yml").write_text(tiny_mkdocs_yml(), encoding="utf-8")
    shutil.copytree(ROOT / "hooks", root / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    docs = root / "docs"
    shutil.copytree(TINY / "docs", docs)
    from model import study

    for path in study.load(ROOT / "docs" / "study.yml").files:
        shutil.copy(path, docs / path.name)
    for name in ("javascripts", "stylesheets", "templates"):   # templates: the theme's overrides (custom_dir)
        shutil.copytree(ROOT / "docs" / name, docs / name)
    env = {"LIVE_NUMBERS_CACHE": str(session_cache)}
    accept = run(root, "model", "accept", env=env)
    assert accept.returncode == 0 and "do not hold" not in accept.stdout, output(accept)
    build = mkdocs_build(root, env=env)
    assert build.returncode == 0, output(build)


@pytest.fixture
def project(tmp_path, tiny_project, session_cache) -> Path:
    """A copy of the small site to change and build, its cache seeded (no model run)."""
    return copy_project(tiny_project, tmp_path / "project", cache=session_cache)


@pytest.fixture
def real_project(tmp_path, session_cache) -> Path:
    """A copy of the real project (the articles), its cache seeded (no model run)."""
    return copy_project(ROOT, tmp_path / "real", cache=session_cache)


# -- the built site and a headless Chromium ---------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, session_cache) -> Path:
    """`mkdocs build --strict` of a copy of the real project, through `session_cache`;
    once per run."""
    def make(folder: Path) -> None:
        project = copy_project(ROOT, folder / "project")
        proc = mkdocs_build(project, "-d", str(folder / "site"), env={"LIVE_NUMBERS_CACHE": str(session_cache)})
        assert proc.returncode == 0, output(proc)

    return once_per_run(tmp_path_factory, "real-site", make) / "site"


@pytest.fixture(scope="session")
def site_url(built_site) -> Iterator[str]:
    with serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: `make test` installs it (apt-get install -y chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page that records console errors and every request's URL."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.console_errors = []
    pg.requests = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    context.close()
