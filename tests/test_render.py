"""The site without hooks (livenumbers/render.py): `python -m model render OUT` writes a
project any `mkdocs.yml` builder can publish, and `python -m model check --site DIR` finds
live markup a builder that ignores hooks published as it was.

The rendered tree, built by plain MkDocs, must be the hooked site byte for byte: on the
small site (its hooked build is the `tiny_project` fixture's) and once on the real one
(against the session's `built_site`), where the instrument is also driven in Chromium."""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, copy_project, mkdocs_build, output, run, serve
from livenumbers import config, render
from model.site.source import StudySource

LOCK = Path("docs") / "numbers.lock.json"


def render_tree(project: Path, out: Path, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {"LIVE_NUMBERS_CACHE": str(cache)} if cache else None
    return run(project, "model", "render", str(out), env=env)


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file's size and modification time (the generated files are hundreds of MB)."""
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_same_site(plain: Path, hooked: Path) -> None:
    """Every file of both sites, the same bytes: pages (numbers, tables, chart specs and
    their words, links), the search index, the generated files."""
    a, b = sorted(p.relative_to(plain).as_posix() for p in plain.rglob("*") if p.is_file()), \
        sorted(p.relative_to(hooked).as_posix() for p in hooked.rglob("*") if p.is_file())
    assert a == b, f"only in the plain build: {sorted(set(a) - set(b))[:5]}; only hooked: {sorted(set(b) - set(a))[:5]}"
    _, mismatch, errors = filecmp.cmpfiles(plain, hooked, a, shallow=False)
    assert (mismatch, errors) == ([], []), f"files that differ: {mismatch[:10]}"


# -- mkdocs.yml without hooks ---------------------------------------------------------------------

def test_the_plain_config_has_no_hooks_and_no_hook_settings():
    """None of the engine's but two that import only MkDocs: under the i18n plugin, one
    keeps notebooks pages (livenumbers/notebook_pages.py), one gives each edition its own
    search index, sitemap and 404 page (livenumbers/editions.py, tests/test_editions.py)."""
    raw = config.read(ROOT / "mkdocs.yml")
    plain = render.plain_config(raw)
    assert plain.startswith("# Written by `render`")
    back = config.read_text(plain)
    assert back["hooks"] == [render.NOTEBOOK_HOOK, render.EDITIONS_HOOK] and "live_numbers" not in back.get("extra", {})
    assert "livenumbers" not in (ROOT / "livenumbers" / render.NOTEBOOK_HOOK).read_text(encoding="utf-8").split('"""')[2]
    assert back["validation"] == {**raw["validation"], "anchors": "ignore"}
    # Everything else as it was, the !ENV tag included (a YAML round trip: the same data).
    same = lambda d: {k: v for k, v in d.items() if k not in ("hooks", "extra", "validation")}
    assert same(back) == same(raw)
    assert back.get("extra", {}) == {k: v for k, v in raw["extra"].items() if k != "live_numbers"}
    assert back["site_url"] == config.Tagged("!ENV", ["SITE_URL", "http://127.0.0.1:8000/"])
    assert "site_url: !ENV [SITE_URL, 'http://127.0.0.1:8000/']" in plain


def test_the_plain_config_drops_the_plugin_and_its_options():
    raw = {"site_name": "x", "plugins": ["search", {"live-numbers": {"source": "a:b"}}, {"other": {}}],
           "extra": {"live_numbers": {"source": "a:b"}}}
    assert config.without_engine(raw) == {"site_name": "x", "plugins": ["search", {"other": {}}],
                                          "validation": {"anchors": "ignore"}}


# -- the small site ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_rendered(tmp_path_factory, tiny_project, session_cache) -> Path:
    """`python -m model render` of the small site, then `mkdocs build --strict` of the tree."""
    out = tmp_path_factory.mktemp("tiny-render") / "out"
    proc = render_tree(tiny_project, out, session_cache)
    assert proc.returncode == 0, output(proc)
    build = mkdocs_build(out)
    assert build.returncode == 0, output(build)
    return out


def test_the_rendered_tree_stands_alone(tiny_rendered):
    assert not (tiny_rendered / "hooks").exists()
    yml = (tiny_rendered / "mkdocs.yml").read_text(encoding="utf-8")
    assert "hooks:" not in yml
    docs = tiny_rendered / "docs"
    live_call = render.live_call(render.FUNCTIONS + StudySource.function_names)
    for page in ("index.md", "evidence.md"):
        assert not live_call.search((docs / page).read_text(encoding="utf-8")), page
    nb = json.loads((docs / "notebook.ipynb").read_text(encoding="utf-8"))
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), "the notebook is not the executed copy"
    assert (docs / "assets" / "javascripts" / "vega-bundle.js").stat().st_size > 100_000
    assert (docs / "assets" / "instrument" / "index.json").is_file() and (docs / "downloads" / "results.json").is_file()
    assert (tiny_rendered / render.MARKER).is_file()


def test_plain_mkdocs_builds_the_rendered_tree_into_the_hooked_site(tiny_rendered, tiny_project):
    assert_same_site(tiny_rendered / "site", tiny_project / "site")


def test_a_rendered_tree_builds_without_this_repository(tiny_rendered, tmp_path):
    """Nothing in OUT imports the project's `model`: MkDocs builds a copy of it with that
    import made to fail."""
    copy = tmp_path / "elsewhere"
    shutil.copytree(tiny_rendered, copy, ignore=shutil.ignore_patterns("site"))
    code = ("import builtins, sys\n"
            "real = builtins.__import__\n"
            "def guard(name, *a, **k):\n"
            "    if name == 'model' or name.startswith('model.'): raise ImportError('the project was imported')\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = guard\n"
            "from mkdocs.__main__ import cli\n"
            "sys.argv = ['mkdocs', 'build', '--strict']\n"
            "cli()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=copy, capture_output=True, text=True)
    assert proc.returncode == 0, output(proc)
    assert (copy / "site" / "index.html").read_bytes() == (tiny_rendered / "site" / "index.html").read_bytes()


def test_render_again_replaces_its_own_tree_only(tiny_project, session_cache, tmp_path):
    out = tmp_path / "out"
    assert render_tree(tiny_project, out, session_cache).returncode == 0
    (out / "docs" / "stray.md").write_text("left over")
    assert render_tree(tiny_project, out, session_cache).returncode == 0
    assert not (out / "docs" / "stray.md").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("not a render")
    proc = render_tree(tiny_project, mine, session_cache)
    assert proc.returncode == 2 and "was not written by `render`" in proc.stderr, output(proc)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


# -- what stops it: nothing is written ----------------------------------------------------------------

def _drift(project: Path) -> str:
    data = json.loads((project / LOCK).read_text())
    data["numbers"]["l6.alpha.median_sink"]["value"] += 0.01
    (project / LOCK).write_text(json.dumps(data))
    return "l6.alpha.median_sink: recorded"


def _failed_claim(project: Path) -> str:
    page = project / "docs" / "evidence.md"
    page.write_text(page.read_text() + '\n{{ claim("l6.alpha.median_sink > 0.99") }}\n')
    return "claim(s) no longer hold"


@pytest.mark.parametrize("damage", [_drift, _failed_claim], ids=["drift", "failed claim"])
def test_a_failing_gate_writes_nothing(project, tmp_path, damage):
    earlier = tmp_path / "earlier"
    assert render_tree(project, earlier).returncode == 0
    before = tree(earlier)
    message = damage(project)
    fresh, again = tmp_path / "fresh", render_tree(project, earlier)
    proc = render_tree(project, fresh)
    for p in (proc, again):
        assert p.returncode == 2, output(p)
        assert "numbers gate failed; nothing written" in p.stderr and message in p.stderr, output(p)
    assert not fresh.exists()
    assert tree(earlier) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# -- live markup left in a built site ----------------------------------------------------------------

def test_check_site_fails_on_a_site_built_without_the_hooks(project, tiny_rendered):
    yml = project / "mkdocs.yml"
    engine_yml = yml.read_text(encoding="utf-8")
    yml.write_text(render.plain_config(config.read(yml)), encoding="utf-8")
    # Not --strict: plain MkDocs would warn of the one live call it reads as a link; a builder
    # that ignores hooks says nothing at all (the Zensical test below).
    build = run(project, "mkdocs", "build", "--no-strict")
    assert build.returncode == 0, output(build)
    yml.write_text(engine_yml, encoding="utf-8")   # the project as it is; its site as a plain builder made it
    proc = run(project, "model", "check", "--site", "site")
    assert proc.returncode == 1, output(proc)
    assert "live call(s) were published unrendered" in proc.stderr
    assert 'index.html:' in proc.stderr and '{{ num("l6.alpha.median_sink", "pct:1") }}' in proc.stderr
    assert 'evidence/index.html:' in proc.stderr and '{{ table("lens_summary"' in proc.stderr
    ok = run(project, "model", "check", "--site", str(tiny_rendered / "site"))
    assert ok.returncode == 0 and "no live markup left" in ok.stdout, output(ok)


def test_leftover_markup_skips_code_and_reads_attributes(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<p>Shown as syntax: <code>{{ num("k", "pct:1") }}</code></p>\n<pre><code>{% for key in models %}</code></pre>\n'
        '<p>fine</p>\n<p>The sink is {{ ci("l6.x", "pct:1") }}.</p>\n'
        '<a href="%7B%7B%20instrument(%22l6%22,%200)%20%7D%7D">row</a>\n', encoding="utf-8")
    found = render.leftover_markup(tmp_path, StudySource("study.yml"))    # the source's own functions too
    assert found == ['a/index.html:4: {{ ci("l6.x", "pct:1") }}.', 'a/index.html:5: {{ instrument("l6", 0) }}']
    assert render.leftover_markup(tmp_path) == ['a/index.html:4: {{ ci("l6.x", "pct:1") }}.']


# -- the real site, once ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_rendered(tmp_path_factory, session_cache) -> Path:
    """The real project rendered, and built by plain MkDocs: this module's one real build."""
    project = copy_project(ROOT, tmp_path_factory.mktemp("real-render") / "project")
    out = project.parent / "out"
    proc = render_tree(project, out, session_cache)
    assert proc.returncode == 0, output(proc)
    build = mkdocs_build(out)
    assert build.returncode == 0, output(build)
    return out / "site"


def test_the_real_site_built_without_hooks_is_the_hooked_site(real_rendered, built_site):
    assert_same_site(real_rendered, built_site)


@pytest.mark.browser
def test_the_instrument_works_from_the_plain_build(page, real_rendered):
    from test_browser_instrument import assert_clean, assert_rows_match, expected_rows, load, shown_rows, wait_state

    index = load(real_rendered, "index.json")
    model, s = index["default_model"], 8
    view = load(real_rendered, f"{model}/{s}.json")
    word = view["shown"][1]
    with serve(real_rendered) as url:
        page.goto(url + f"instrument/#{model}/{s}/{word}/value_norm")
        wait_state(page, sentence=s, lens="value_norm")
        page.wait_for_selector(".instr-row")
        assert_rows_match(shown_rows(page), expected_rows(view, "value_norm"), view, index, model)
        assert page.locator(f".instr-row[data-word='{word}']").get_attribute("aria-current") == "true"
        assert_clean(page, url)


# -- Zensical, where it is installed (never in CI: not a dependency) ---------------------------------------

def zensical() -> Path | None:
    """Zensical's command: $ZENSICAL, or the separate venv the colophon's trial used."""
    for candidate in (os.environ.get("ZENSICAL"), "/work/zensical-venv/bin/zensical"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@pytest.mark.skipif(zensical() is None, reason="Zensical is not installed (set ZENSICAL=path/to/zensical; "
                                               "it lives in a venv of its own, never in requirements*.txt)")
def test_zensical_publishes_the_rendered_numbers_and_check_catches_the_raw_ones(tiny_rendered, tiny_project, tmp_path,
                                                                                 session_cache):
    def build(src: Path, name: str) -> Path:
        copy = tmp_path / name
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("site", ".cache"))
        proc = subprocess.run([str(zensical()), "build"], cwd=copy, capture_output=True, text=True)
        assert proc.returncode == 0, output(proc)
        return copy / "site"

    rendered = build(tiny_rendered, "rendered")
    raw = build(tiny_project, "raw")
    cache = {"LIVE_NUMBERS_CACHE": str(session_cache)}   # the small site's results, measured once
    ok = run(tiny_project, "model", "check", "--site", str(rendered), env=cache)
    assert ok.returncode == 0, output(ok)
    locked = json.loads((tiny_project / LOCK).read_text())["numbers"]["l6.alpha.median_sink"]["value"]
    assert f"{locked * 100:.1f}%" in (rendered / "index.html").read_text(encoding="utf-8")
    bad = run(tiny_project, "model", "check", "--site", str(raw), env=cache)
    assert bad.returncode == 1 and '{{ num("l6.alpha.median_sink", "pct:1") }}' in bad.stderr, output(bad)
