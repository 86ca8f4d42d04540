"""Writing beside live numbers (issue 23): finding a key (`python -m model numbers`,
model/site/finder.py), what `mkdocs serve` shows the author and `make site` never
publishes (model/site/authoring.py: hover details, the key listing, where tables and
charts come from), and a saved page rebuilt alone under `--dirty`.

On copies of the small site over the real results: its pages cite a few known keys."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import output, run, serve
from livenumbers import finder, gate
from model.site.source import study_settings
from livenumbers.marks import MARK_CLOSE, MARK_OPEN

LOCK = Path("docs") / "numbers.lock.json"
KEY = "l6.alpha.median_sink"


def line_of(project: Path, page: str, text: str) -> int:
    lines = (project / "docs" / page).read_text(encoding="utf-8").split("\n")
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- finding a key -------------------------------------------------------------------------------

def test_numbers_lists_value_interval_lock_and_citing_lines(project):
    proc = run(project, "model", "numbers", "l6 alpha median_sink")
    assert proc.returncode == 0, output(proc)
    report = gate.run(study_settings(project), with_charts=False)
    n, locked = report.numbers, report.locked[KEY]
    row = next(line for line in proc.stdout.splitlines() if line.startswith(KEY + " "))
    cells = row.split()
    assert cells[1] == f"{n[KEY]:.3f}"                                  # the default format: fixed:3
    assert cells[2] == f"{n[KEY + '_lo']:.3f}–{n[KEY + '_hi']:.3f}"     # the interval, folded into its number's line
    assert f"±{locked.tolerance:g}" in row and ("locked" in row or "moved, within" in row)
    index_line = line_of(project, "index.md", f'num("{KEY}"')
    assert f"index.md:{index_line}" in row and "evidence.md:" in row
    keys = [line.split()[0] for line in proc.stdout.splitlines()[2:] if line.startswith("l6.")]
    assert KEY + "_lo" not in keys and "l6.fit.alpha.median_sink" in keys and "l3.alpha.median_sink" not in keys
    assert proc.stdout.splitlines()[0].startswith(f"{len(keys)} key(s) matching 'l6 alpha median_sink'")
    assert f'{{{{ ci("{KEY}", "pct:1") }}}}' in proc.stdout


def test_a_misspelt_key_finds_the_keys_closest_to_it(project):
    out = finder.listing(study_settings(project), "l6.alpha.medain_sink", limit=3)
    head, _, first = out.splitlines()[:3]
    assert re.match(r"[123] key\(s\) close to 'l6.alpha.medain_sink' \(none contains it\)$", head), head
    assert first.split()[0] == KEY


def test_uncited_keys_are_listed_as_such_and_rows_by_sentence(project):
    settings = study_settings(project)
    uncited = finder.listing(settings, "l6.rollout.n_rows", limit=5).splitlines()[2]
    assert uncited.split()[0] == "l6.rollout.n_rows" and "not cited" in uncited
    rows = finder.listing(settings, "l6.row.s0.w1.alpha", limit=0).splitlines()
    assert {line.split()[0] for line in rows[2:-2]} == {f"l6.row.s0.w1.alpha.{f}" for f in
                                                       ("word", "layer", "head", "sink_share", "sep_share",
                                                        "punct_share", "content_mass", "top_word", "top_weight",
                                                        # part 8's ablation: sentence 0 is in its sample
                                                        "head_effect", "sink_effect", "content_effect", "ablation_share",
                                                        "ablation_share_without_word", "bound_ratio")}
    assert finder.listing(settings, "zzz qqq").startswith("no key matches 'zzz qqq'")


def test_numbers_still_lists_keys_when_a_page_is_broken(project):
    page = project / "docs" / "evidence.md"
    page.write_text(page.read_text() + '\n{{ num("l6.alpha.no_such_key") }}\n')
    out = finder.listing(study_settings(project), "l6.alpha.median_sink_hi", limit=3)
    assert "citing pages unknown: 1 page problem(s)" in out.splitlines()[0]
    assert out.splitlines()[2].split()[0] == KEY + "_hi"


# -- accept ---------------------------------------------------------------------------------------

def test_accept_exits_non_zero_when_a_claim_fails(project):
    page = project / "docs" / "index.md"
    page.write_text(page.read_text() + '\n{{ claim("l6.alpha.median_sink > 0.99") }}\n')
    proc = run(project, "model", "accept")
    assert proc.returncode == 1, output(proc)
    assert "1 claim(s) do not hold" in proc.stdout and "(l6.alpha.median_sink = 0." in proc.stdout


# -- what `mkdocs serve` shows, and `make site` does not ------------------------------------------

def serve_build(project: Path, site: Path, saves: list | tuple = ()) -> None:
    """A build as `make serve` runs it (serve, --dirty), in this process; then each
    `save()` of `saves` followed by the rebuild a save triggers."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    def once():
        cfg = load_config(str(project / "mkdocs.yml"), site_dir=str(site), strict=False)
        build(cfg, serve_url="http://127.0.0.1:8000/", dirty=True)

    cfg = load_config(str(project / "mkdocs.yml"), site_dir=str(site), strict=False)
    cfg.plugins.on_startup(command="serve", dirty=True)
    try:
        once()
        for save in saves:
            save()
            once()
    finally:
        cfg.plugins.on_startup(command="build", dirty=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory, tiny_project, session_cache):
    """The small site as `make serve` builds it."""
    from conftest import copy_project

    project = copy_project(tiny_project, tmp_path_factory.mktemp("served") / "project", cache=session_cache)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)   # mkdocs-jupyter keeps its own cache under the working directory
        serve_build(project, project / "served")
    return project


def tips(html: str) -> list[tuple[str, str]]:
    """The hover details of a page, in order: (the number shown, its tooltip's text)."""
    found = re.findall(r'<span class="live-num[^"]*" tabindex="0" aria-describedby="(live-\d+)">(.*?)'
                       r'<span class="live-tip" role="tooltip" id="\1">(.*?)</span></span>', html)
    return [(shown, re.sub(r"<[^>]+>", " ", tip)) for _, shown, tip in found]


def test_under_serve_every_number_has_its_details(served):
    site = served / "served"
    report = gate.run(study_settings(served), with_charts=False)
    index = (site / "index.html").read_text(encoding="utf-8")
    details = tips(index)
    cited = report.citations["index.md"]
    assert len(details) == len(cited)
    shown, tip = details[0]
    value, locked = report.numbers[KEY], report.locked[KEY]
    assert shown == f"{value * 100:.1f}%"
    assert f"{KEY}  · format  pct:1" in tip and f"value now: {value!r}" in tip
    assert f"interval: {report.numbers[KEY + '_lo']!r} – {report.numbers[KEY + '_hi']!r}" in tip
    assert f"lock: {locked.value!r} ± {locked.tolerance:g}" in tip
    assert "state: locked" in tip or "state: moved within tolerance" in tip
    # A table and a chart say what they were drawn from.
    evidence = (site / "evidence" / "index.html").read_text(encoding="utf-8")
    assert "table(&#x27;lens_summary&#x27;, model=&#x27;l6&#x27;)" in evidence and "<code>l6.alpha.*</code>" in evidence
    assert re.search(r"chart &#x27;sink_distribution/l6&#x27;: \d+ cited numbers.*data from results.json "
                     r"<code>models.l6.[a-z_]+</code>", evidence)
    # No mark is left anywhere: not in a chart's text alternative, not in the search index.
    for path in site.rglob("*"):
        if path.suffix in (".html", ".json"):
            text = path.read_text(encoding="utf-8")
            assert MARK_OPEN not in text and MARK_CLOSE not in text, path


def test_under_serve_a_page_lists_every_key(served):
    site = served / "served"
    page = (site / "live-numbers" / "index.html").read_text(encoding="utf-8")
    assert 'data-src="../assets/live-numbers.json"' in page
    data = json.loads((site / "assets" / "live-numbers.json").read_text(encoding="utf-8"))
    report = gate.run(study_settings(served), with_charts=False)
    keys = {row[0]: row for row in data["keys"]}
    assert set(keys) == {k for k in dict.keys(report.numbers) if not re.search(r"_(lo|hi)$", k)
                         or re.sub(r"_(lo|hi)$", "", k) not in report.numbers}
    row = keys[KEY]
    assert row[1:5] == [f"{report.numbers[KEY]:.3f}",
                        f"{report.numbers[KEY + '_lo']:.3f}–{report.numbers[KEY + '_hi']:.3f}",
                        row[3], "evidence.md, index.md"]
    assert row[5:] == [f'{{{{ num("{KEY}", "pct:1") }}}}', f'{{{{ ci("{KEY}", "pct:1") }}}}']
    assert "live-numbers.js" in page and 'href="live-numbers/"' in (site / "index.html").read_text(encoding="utf-8")


def test_make_site_publishes_none_of_it(tiny_project):
    site = tiny_project / "site"
    assert not (site / "live-numbers").exists() and not (site / "assets" / "live-numbers.json").exists()
    for path in site.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "live-num" not in text and "live-bar" not in text and "live-source" not in text, path
        assert MARK_OPEN not in text, path


def test_a_save_rebuilds_that_page_and_a_new_lock_every_page(tiny_project, session_cache, tmp_path, monkeypatch):
    from conftest import copy_project

    project = copy_project(tiny_project, tmp_path / "project", cache=session_cache)
    monkeypatch.chdir(project)
    site = project / "served"
    evidence = project / "docs" / "evidence.md"

    def edit_prose():
        evidence.write_text(evidence.read_text().replace("The smaller model has", "The small model has"))

    def move_a_number():
        data = json.loads((project / LOCK).read_text())
        data["numbers"]["l6.alpha.worst_sink"]["value"] = 0.5   # cited by index.md only
        (project / LOCK).write_text(json.dumps(data))

    stamps = {}
    serve_build(project, site, [lambda: stamps.update(before=(site / "index.html").stat().st_mtime_ns) or edit_prose(),
                                lambda: stamps.update(after=(site / "index.html").stat().st_mtime_ns) or move_a_number()])
    assert "The small model has" in (site / "evidence" / "index.html").read_text(encoding="utf-8")
    assert stamps["after"] == stamps["before"], "a prose edit of evidence.md rebuilt index.md"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "drift-banner" in index and "l6.alpha.worst_sink" in index and "state: drifted" in index


def test_a_save_older_than_the_page_built_is_not_lost(tiny_project, session_cache, tmp_path, monkeypatch):
    """A save made while a build runs is older than the page that build writes: MkDocs'
    --dirty alone would skip it. The hooks rebuild a page whose text changed."""
    import os

    from conftest import copy_project

    project = copy_project(tiny_project, tmp_path / "project", cache=session_cache)
    monkeypatch.chdir(project)
    evidence = project / "docs" / "evidence.md"

    def save_in_the_past():
        evidence.write_text(evidence.read_text().replace("The smaller model has", "Saved mid-build, the smaller model has"))
        os.utime(evidence, (1_000_000, 1_000_000))   # 1970: older than any page built

    serve_build(project, project / "served", [save_in_the_past])
    assert "Saved mid-build" in (project / "served" / "evidence" / "index.html").read_text(encoding="utf-8")


# -- in a browser --------------------------------------------------------------------------------

@pytest.mark.browser
def test_keyboard_focus_shows_a_numbers_details(page, served):
    with serve(served / "served") as url:
        page.goto(url)
        tip = page.locator(".live-tip").first
        assert not tip.is_visible()
        for _ in range(60):   # Tab through the header until the first live number has the focus
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.classList.contains('live-num')"):
                break
        assert page.evaluate("() => document.activeElement.getAttribute('aria-describedby')") == "live-0"
        assert tip.is_visible() and KEY in tip.inner_text()
        page.keyboard.press("Tab")
        assert not tip.is_visible()
        page.locator(".live-num").first.hover()
        assert tip.is_visible()
        assert page.console_errors == []


@pytest.mark.browser
def test_the_key_listing_finds_a_key_and_copies_its_snippet(browser, served):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        with serve(served / "served") as url:
            page.goto(url + "live-numbers/")
            page.locator(".live-numbers-find").fill("l6 alpha median_sink")
            page.locator(f'tr[data-key="{KEY}"]').wait_for()
            keys = page.eval_on_selector_all("tbody tr", "rows => rows.map(r => r.dataset.key)")
            assert KEY in keys and all("l6" in k and "median_sink" in k for k in keys)
            button = page.locator(f'tr[data-key="{KEY}"] button').first
            button.click()
            page.wait_for_function("() => document.querySelector('button[data-copied]')")
            assert page.evaluate("() => navigator.clipboard.readText()") == f'{{{{ num("{KEY}", "pct:1") }}}}'
    finally:
        context.close()
