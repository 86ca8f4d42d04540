"""The engine (livenumbers) on a second write-up of its own, the toy (livenumbers/starter/,
what `python -m livenumbers new` writes): a hand-made results
file and a bibliography, no torch, no models. Built with the plugin (`plugins: -
live-numbers` in its mkdocs.yml), drifted, gated and rendered: what another project using
the engine gets."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TOY, serve, toy_copy
from conftest import run_in_toy as run
from livenumbers import config, gate, lock, project, render
from livenumbers.markup import PageError


@pytest.fixture
def toy(tmp_path, accepted_toy) -> Path:
    """A copy of the toy write-up, its lock accepted, its cache warm."""
    return toy_copy(accepted_toy, tmp_path)


def settings(root: Path) -> gate.Settings:
    return project.settings_at(root / "mkdocs.yml")


def test_the_plugin_builds_the_toy_with_its_numbers_table_chart_and_claim(toy, tmp_path):
    # The plain console command, from another folder, with nothing on the import path: the
    # plugin finds the toy's source beside its mkdocs.yml, as an outside author runs it.
    mkdocs = Path(sys.executable).parent / "mkdocs"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"NO_MKDOCS_2_WARNING": "1",
                                                                       "LIVE_NUMBERS_CACHE": str(toy / ".cache")}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    build = subprocess.run([str(mkdocs), "build", "--strict", "-f", str(toy / "mkdocs.yml")], cwd=elsewhere, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    page = (toy / "site" / "index.html").read_text(encoding="utf-8")
    assert "In all 20 points; the apple has 12,\n60% of them." in page
    assert "<td>pear</td>\n<td>5</td>\n<td>25.0%</td>" in page            # the table
    assert 'class="vega-chart" id="chart-bars"' in page and "Scores; apple leads with 12." in page   # the chart and its words
    assert (toy / "site" / "downloads" / "results.json").is_file()
    assert (toy / "site" / "assets" / "javascripts" / "vega-bundle.js").is_file()
    # what draws the chart: the engine's own script, published and loaded by the page
    assert (toy / "site" / "assets" / "javascripts" / "live-charts.js").is_file()
    assert 'src="assets/javascripts/vega-bundle.js"' in page and 'src="assets/javascripts/live-charts.js"' in page
    locked = lock.read(toy / "docs" / "numbers.lock.json").numbers
    # the tightest of its citations (the table's pct:1), and what each prints
    assert locked["fruit.apple.share"] == lock.Locked(0.6, 0.0005, printed={"en pct:0": "60%", "en pct:1": "60.0%"})


def test_the_toys_citations_link_to_its_reference_list(toy):
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    page = (toy / "site" / "index.html").read_text(encoding="utf-8")
    assert ('No interval yet (<a href="#ref-efron1979bootstrap">Efron, 1979</a>), and nothing normalized as '
            '<a href="#ref-ba2016layer">Ba et al. (2016)</a> would.') in page
    listing = page.split('<h2 id="references">References</h2>', 1)[1]
    efron = listing.split('<li id="ref-efron1979bootstrap">', 1)[1].split("</li>")[0]
    assert "Bootstrap Methods: Another Look at the Jackknife" in efron
    assert '<a href="https://doi.org/10.1214/aos/1176344552">doi:10.1214/aos/1176344552</a>' in efron
    assert listing.index('id="ref-ba2016layer"') < listing.index('id="ref-efron1979bootstrap"')   # by author
    assert not (toy / "site" / "references.bib").exists()


def test_an_edited_bibliography_shows_on_the_next_build(toy):
    """The pages' cache is keyed by the bibliography too: an entry corrected, the page follows."""
    assert run(toy, "mkdocs", "build", "--strict").returncode == 0
    bib = toy / "docs" / "references.bib"
    bib.write_text(bib.read_text().replace("Another Look at the Jackknife", "Another Look at the Jackknife, corrected"))
    assert run(toy, "mkdocs", "build", "--strict").returncode == 0
    assert "Another Look at the Jackknife, corrected." in (toy / "site" / "index.html").read_text(encoding="utf-8")


def test_the_toy_says_what_it_was_built_from_and_the_lock_knows_nothing_of_it(toy):
    lock_file = toy / "docs" / "numbers.lock.json"
    digest = hashlib.sha256(lock_file.read_bytes()).hexdigest()
    assert run(toy, "mkdocs", "build", "--strict").returncode == 0
    page = lambda: (toy / "site" / "index.html").read_text(encoding="utf-8")
    assert f"Built from commit unknown (unknown); numbers lock\n{digest}." in page()   # no git checkout here
    git = lambda *a: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *a], cwd=toy,
                                    check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    git("add", "docs", "mkdocs.yml")
    git("commit", "-qm", "first")
    for message in ("second", "third"):   # the page's rendering is cached; what it was built from is not
        git("commit", "-q", "--allow-empty", "-m", message)
        assert run(toy, "mkdocs", "build", "--strict").returncode == 0
        assert f"Built from commit {git('log', '-1', '--format=%h (%cs)')}; numbers lock\n{digest}." in page()
    numbers = json.loads(lock_file.read_text(encoding="utf-8"))["numbers"]
    assert "commit" not in json.dumps(numbers)    # never cited, never locked (a registration's commit is accept's)
    assert run(toy, "livenumbers", "check").returncode == 0


def test_a_drifted_number_fails_the_toys_build_naming_key_values_and_page(toy):
    data = toy / "docs" / "data.json"
    data.write_text(json.dumps({"apple": 13, "pear": 5, "plum": 3}))
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert "fruit.apple.score: recorded 12, now 13 (tolerance 0); cited by index.md" in build.stdout + build.stderr
    assert not (toy / "site").exists()            # the gate runs before MkDocs writes anything
    accept = run(toy, "livenumbers", "accept", "--reason", "The apple's points were miscounted.")
    assert accept.returncode == 0 and "~ fruit.apple.score: 12 -> 13 (tolerance 0)" in accept.stdout
    assert run(toy, "livenumbers", "check").returncode == 0


def test_a_claim_that_no_longer_holds_fails_the_gate(toy):
    (toy / "docs" / "data.json").write_text(json.dumps({"apple": 6, "pear": 5, "plum": 3}))
    report = gate.run(settings(toy))
    assert [c.expr for c in report.failed_claims] == ["fruit.apple.score > fruit.pear.score + fruit.plum.score"]


def test_a_serve_rebuild_compares_again_what_a_save_changed(toy):
    """Under `mkdocs serve` the gate keeps its work from one save to the next (gate.Kept): a
    prose save reads its page again and keeps the comparison with the lock; a save that cites
    a number in a new format, or changes a claim, is compared again."""
    s, kept = settings(toy), gate.Kept()
    first = gate.run(s, mark_numbers=True, kept=kept)
    page = toy / "docs" / "index.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text + "\nA sentence of prose.\n", encoding="utf-8")
    prose = gate.run(s, mark_numbers=True, kept=kept)
    assert "A sentence of prose." in prose.rendered["index.md"]
    assert prose.ok and prose.all_citations == first.all_citations and prose.fresh == first.fresh
    claim = text.replace("fruit.apple.score > fruit", "fruit.apple.score < fruit")   # the same citations
    page.write_text(claim + "\nA sentence of prose.\n", encoding="utf-8")
    claimed = gate.run(s, mark_numbers=True, kept=kept)
    assert [c.expr for c in claimed.failed_claims] == ["fruit.apple.score < fruit.pear.score + fruit.plum.score"]
    page.write_text(claim + '\nThe plum has {{ num("fruit.plum.share", "pct:2") }}.\n', encoding="utf-8")   # the same claims
    cited = gate.run(s, mark_numbers=True, kept=kept)
    assert [(r.key, r.slot, r.recorded) for r in cited.reprinted] == [("fruit.plum.share", "en pct:2", None)]
    assert cited.failed_claims == claimed.failed_claims


def test_an_unknown_key_is_named_with_page_and_line(toy):
    page = toy / "docs" / "index.md"
    page.write_text(page.read_text() + '\nThe plum has {{ num("fruit.plumm.score", "int") }}.\n')
    with pytest.raises(PageError, match=r"index.md:17: unknown number 'fruit.plumm.score'; did you mean 'fruit.plum.score'"):
        gate.run(settings(toy))


def test_an_unknown_work_fails_the_build_naming_page_and_line(toy):
    page = toy / "docs" / "index.md"
    page.write_text(page.read_text() + '\nAs {{ citet("efron1979bootstrp") }} showed.\n')
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert ("index.md:17: unknown reference 'efron1979bootstrp'; did you mean 'efron1979bootstrap'?"
            in build.stdout + build.stderr)
    assert not (toy / "site").exists()


def test_render_writes_the_toy_for_a_builder_without_the_engine(toy):
    out = run(toy, "livenumbers", "render", "rendered")
    assert out.returncode == 0, out.stdout + out.stderr
    tree = toy / "rendered"
    text = (tree / "docs" / "index.md").read_text(encoding="utf-8")
    assert "In all 20 points" in text
    assert "No interval yet ([Efron, 1979](#ref-efron1979bootstrap))" in text and '<li id="ref-ba2016layer">' in text
    assert "Built from commit unknown (unknown)" in text    # rendered where there is no git checkout: it says so
    raw = config.read(tree / "mkdocs.yml")
    assert raw["plugins"] == [] and raw["validation"] == {"anchors": "ignore"} and raw["site_name"] == "Fruit, measured"
    assert (tree / "docs" / "downloads" / "results.json").is_file()
    # its chart still drawn: the scripts listed and in the tree
    assert raw["extra_javascript"] == ["assets/javascripts/vega-bundle.js", "assets/javascripts/live-charts.js"]
    assert (tree / "docs" / "assets" / "javascripts" / "live-charts.js").is_file()
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tree, capture_output=True, text=True,
                           env=os.environ | {"NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stdout + build.stderr
    assert render.leftover_markup(tree / "site") == []


def test_the_engine_imports_nothing_of_the_study():
    """livenumbers knows no attention, model or study: none of its modules imports model/
    or the site's hooks."""
    import ast

    engine = Path(__file__).parent.parent / "livenumbers"
    for path in engine.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            assert not any(n.split(".")[0] in ("model", "hooks") for n in names), (path, names)


@pytest.mark.browser
def test_the_toys_chart_is_drawn_in_a_browser(toy, page):
    # The engine draws its charts itself (livenumbers/static/charts.js): the toy, which has no
    # script of its own, shows an SVG with a mark per row of its data.
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    with serve(toy / "site") as url:
        page.goto(url)
        page.wait_for_selector("#chart-bars svg .mark-rect path", timeout=15_000)
        bars = page.locator("#chart-bars svg .mark-rect path").count()
    assert bars == 3, bars
    # (MkDocs' default theme, which the toy keeps, asks a CDN for highlight.js: its errors are not ours)
    ours = [e for e in page.console_errors if any(w in e.lower() for w in ("chart", "vega", "spec"))]
    assert ours == []


def test_the_gate_reads_the_sources_inputs_once(toy, monkeypatch):
    s = settings(toy)
    calls = []
    inputs = s.source.inputs
    monkeypatch.setattr(s.source, "inputs", lambda: calls.append(1) or inputs())
    report = gate.run(s)
    assert report.ok and len(calls) == 1


def test_the_lock_is_written_readable_and_published_as_a_copy(toy):
    """accept writes the lock as any file of the project (not a temporary file's 0o600), and
    the site carries a copy of it: a deploy that writes into the site cannot reach the lock."""
    lock_file = toy / "docs" / "numbers.lock.json"
    mask = os.umask(0)
    os.umask(mask)
    assert lock_file.stat().st_mode & 0o777 == 0o666 & ~mask
    assert run(toy, "mkdocs", "build", "--strict").returncode == 0
    published = toy / "site" / "downloads" / "numbers.lock.json"
    assert published.read_bytes() == lock_file.read_bytes() and published.stat().st_ino != lock_file.stat().st_ino


def test_accept_notes_digits_the_numbers_own_interval_says_nothing_of(toy):
    source = toy / "toy_source.py"
    old = 'out |= {f"fruit.{name}.score": v["score"], f"fruit.{name}.share": v["share"]}'
    text = source.read_text(encoding="utf-8")
    assert old in text
    source.write_text(text.replace(old, old + '\n            out |= {f"fruit.{name}.share_lo": v["share"] - 0.07, '
                                            'f"fruit.{name}.share_hi": v["share"] + 0.07}'), encoding="utf-8")
    page = toy / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + '\nExactly {{ ci("fruit.plum.share", "fixed:9") }}.\n',
                    encoding="utf-8")
    accept = run(toy, "livenumbers", "accept", "--local")   # a test's lock: nothing to tell readers
    assert accept.returncode == 0, accept.stdout + accept.stderr
    assert ("note: fruit.plum.share is printed to 1e-09 (fixed:9) but its interval is +-0.07: 7 of its digits say "
            "nothing (print fewer)") in accept.stdout
    assert "fruit.apple.share is printed" not in accept.stdout     # pct:0 and pct:1 print what the interval allows


def test_what_changed_compares_the_inputs_as_the_lock_holds_them(toy):
    """A source's inputs() may hold tuples; the lock holds them as JSON lists, and a drift's
    "what changed" lists only what changed."""
    source = toy / "toy_source.py"
    text = source.read_text(encoding="utf-8")
    old = '"code": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()}'
    assert old in text
    source.write_text(text.replace(old, old[:-1] + ', "weights": ("unit", 1)}'), encoding="utf-8")
    assert run(toy, "livenumbers", "accept").returncode == 0
    (toy / "docs" / "data.json").write_text(json.dumps({"apple": 13, "pear": 5, "plum": 3}))
    check = run(toy, "livenumbers", "check")
    assert check.returncode == 1
    changed = check.stderr.split("what changed since the lock was written:", 1)[1].split("\n")
    assert changed[1].strip().startswith("data: ") and not any("weights" in line for line in changed), check.stderr
