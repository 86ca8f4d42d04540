"""Bad input, on temporary copies of the project. Every error names the thing (the
corpus file and line, the page and line, the chart and field, the lock file and key),
nothing is half-written (the previous site, the lock and the cache stay whole), and
text from the corpus reaches readers as text, never as markup.

The gate's own contract (drift, unknown keys, claims, a corrupt cache entry, a prose
edit) is tests/test_gate.py; this file is what a careless or hostile input does.
"""
from __future__ import annotations

import functools
import html.parser
import http.server
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import ROOT, mkdocs_build
from model import results as results_mod
from model.site import cache, charts, files, gate, lock

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
LOCK = Path("docs") / "numbers.lock.json"


# -- helpers ------------------------------------------------------------------------------

def run(project: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m <args>` in the project copy (the copy has no model/: the real one is on
    the venv's path, exactly as for the hooks)."""
    return subprocess.run([sys.executable, "-m", *args], cwd=project, capture_output=True, text=True, env=ENV)


def out(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


def copy_project(dst: Path, with_cache: bool = True) -> Path:
    """Like conftest's `project`, for module-scoped fixtures (and with an empty cache on
    request: the concurrent-build test wants every entry written by the builds)."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "mkdocs.yml", dst / "mkdocs.yml")
    for name in ("docs", "hooks"):
        shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__"))
    if with_cache and (ROOT / ".cache").is_dir():
        shutil.copytree(ROOT / ".cache", dst / ".cache", ignore=shutil.ignore_patterns("*.tmp"))
    return dst


def referenced_sentences(project: Path) -> set[str]:
    raw = yaml.safe_load((project / "docs" / "study.yml").read_text(encoding="utf-8"))
    refs = {s for p in raw.get("flip_pairs", []) for s in p["sentences"]}
    return refs | {a["sentence"] for a in raw.get("anchors", [])}


def corpus_lines(project: Path) -> list[bytes]:
    return (project / "docs" / "corpus.txt").read_bytes().splitlines()


def write_corpus(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


class Previous:
    """The state a failed build or command must leave alone: a previous site, the lock,
    and the cache (whole entries only, no temporary files)."""

    def __init__(self, project: Path):
        self.project = project
        site = project / "site"
        site.mkdir(exist_ok=True)
        (site / "index.html").write_text("the previous site")
        self.lock = (project / LOCK).read_bytes()

    def assert_untouched(self) -> None:
        site = self.project / "site"
        assert [p.name for p in site.iterdir()] == ["index.html"], "the failed build wrote into site/"
        assert (site / "index.html").read_text() == "the previous site"
        assert (self.project / LOCK).read_bytes() == self.lock, "the lock changed"
        assert_cache_whole(self.project)


def assert_cache_whole(project: Path) -> None:
    """No temporary file anywhere; every cache file parses, and every entry (a file
    with a key and a digest) is whole: its digest checks."""
    leftovers = [p for p in project.rglob("*.tmp")]
    assert not leftovers, f"temporary files left behind: {leftovers}"
    for entry in (project / ".cache").glob("*.json"):
        raw = json.loads(entry.read_text(encoding="utf-8"))
        if not (isinstance(raw, dict) and "key" in raw and "sha256" in raw):
            continue  # a memo of another shape (weights digests): parsing is all it owes
        kind = entry.name.rsplit("-", 1)[0]  # "results-slim-<key>.json": kind "results-slim"
        assert cache.entry_path(project / ".cache", kind, raw["key"]) == entry
        assert cache.read(project / ".cache", kind, raw["key"]) is not None, f"{entry.name} does not check"


# -- the corpus ----------------------------------------------------------------------------

def _free_index(project: Path) -> int:
    """A corpus line no flip pair or anchor refers to (those must stay as they are)."""
    refs = referenced_sentences(project)
    return next(i for i, line in enumerate(corpus_lines(project)) if line.decode() not in refs)


def _insert(line: bytes):
    def edit(lines: list[bytes], free: int) -> int:
        lines.insert(4, line)
        return 5
    return edit


def _separator_then_empty(lines: list[bytes], free: int) -> int:
    # A LINE SEPARATOR (U+2028, what a paste from a word processor brings) inside a
    # sentence is not a line break of the file: the empty line after it is still line i+3.
    words = lines[free].split(b" ")
    lines[free] = b" ".join(words[:2] + ["\u2028".encode()] + words[2:])
    lines.insert(free + 2, b"")
    return free + 3


CORPUS_CASES = {
    "empty line": (_insert(b""), "empty line"),
    "blank line": (_insert(b"   \t "), "empty line"),
    "over the length limit": (_insert(b" ".join([b"word"] * 600)), "longer than the model's limit of 512"),
    "not UTF-8": (_insert("Caf\u00e9 au lait, s'il vous pla\u00eet.".encode("latin-1")), "not valid UTF-8"),
    "nothing the tokenizer keeps": (_insert("\u200b\u200b".encode()), "no tokens"),
    "line separator in a sentence": (_separator_then_empty, "empty line"),
}


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_a_bad_corpus_fails_the_build_naming_file_and_line(project, case):
    edit, message = CORPUS_CASES[case]
    lines = corpus_lines(project)
    line = edit(lines, _free_index(project))
    write_corpus(project / "docs" / "corpus.txt", lines)
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0, out(proc)
    # The error starts with the corpus's path and line (not wrapped in study.yml's name).
    assert re.search(rf"ERROR\s+-\s+\S*/docs/corpus\.txt:{line}: ", out(proc)), out(proc)
    assert message in out(proc)
    assert "Traceback" not in out(proc), out(proc)
    previous.assert_untouched()


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_measure_on_bad_sentences_exits_2_with_one_line(project, case):
    edit, message = CORPUS_CASES[case]
    lines = corpus_lines(project)
    line = edit(lines, _free_index(project))
    write_corpus(project / "mine.txt", lines)
    proc = run(project, "model", "measure", "--sentences", "mine.txt", "--json")
    assert proc.returncode == 2, out(proc)
    assert proc.stdout == "", "nothing is printed before the error"
    err = proc.stderr.strip()
    assert "\n" not in err, f"expected one line, got:\n{err}"
    assert err.startswith("error: ") and f"mine.txt:{line}:" in err and message in err, err


def test_the_length_limit_counts_special_tokens():
    from model.tokenize import TokenizeError, tokenize
    from model.weights import PACKAGED, package_file

    folder = package_file(*PACKAGED["minilm-l6"][:2]).parent
    assert tokenize(" ".join(["word"] * 510), folder, 512).n_tokens == 512  # [CLS] + 510 + [SEP]
    with pytest.raises(TokenizeError, match=r"^corpus\.txt:7: 513 tokens, longer than the model's limit of 512$"):
        tokenize(" ".join(["word"] * 511), folder, 512, where="corpus.txt:7")


def test_measure_names_a_missing_sentences_file(project):
    proc = run(project, "model", "measure", "--sentences", "nowhere.txt", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == "error: nowhere.txt: sentences file not found"


# -- a sentence that looks like markup: shown as text, everywhere ------------------------------

HTML_SENTENCE = "The <b>bold</b> claim </script><script>alert(1)</script> stands."
# Markdown is markup too: a link to javascript:, emphasis, an attribute list, a table pipe.
MD_SENTENCE = 'See [this](javascript:alert(2)) and *that*{ onclick="alert(3)" } | or _this_ now.'

BAD_PAGE = """# Bad input

A sentence that looks like HTML:

{{{{ text("sentence.{h}") }}}}

A sentence that looks like Markdown:

{{{{ text("sentence.{m}") }}}}

| Sentence | Note |
|---|---|
| {{{{ text("sentence.{m}") }}}} | stays in its cell |

{{{{ table("displayed_rows", model="l6") }}}}

{{{{ chart("sink_scatter", model="l6") }}}}
"""


class _Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, the text of <script> elements, and the text
    of the page's article, as a browser would see them (entities decoded)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        (self.scripts if self._in_script else self.text).append(data)


def parse(path: Path) -> _Tags:
    p = _Tags()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A project copy whose corpus holds HTML_SENTENCE and MD_SENTENCE, with a page that
    shows them, built from an EMPTY cache by two `accept`s and then two builds running at
    once (so this one model run also proves concurrent writers leave a valid cache)."""
    project = copy_project(tmp_path_factory.mktemp("hostile"), with_cache=False)
    lines = corpus_lines(project)
    h, m = len(lines), len(lines) + 1
    write_corpus(project / "docs" / "corpus.txt", lines + [HTML_SENTENCE.encode(), MD_SENTENCE.encode()])
    (project / "docs" / "bad-input.md").write_text(BAD_PAGE.format(h=h, m=m), encoding="utf-8")
    yml = (project / "mkdocs.yml").read_text(encoding="utf-8")
    assert "\nnav:\n" in yml
    (project / "mkdocs.yml").write_text(yml.replace("\nnav:\n", "\nnav:\n  - Bad input: bad-input.md\n", 1), encoding="utf-8")

    with ThreadPoolExecutor(2) as pool:
        accepts = list(pool.map(lambda _: run(project, "model", "accept"), range(2)))
    lock_after_accepts = (project / LOCK).read_bytes()
    cache_after_accepts = sorted(p.name for p in (project / ".cache").iterdir())
    tmp_after_accepts = list(project.rglob("*.tmp"))
    # The pages' claims are about the real corpus; two more sentences may move them (the
    # gate's claim checks are test_gate's). Drop those that no longer hold, in this copy.
    _, _, failed = accepts[0].stdout.partition("Claims that do not hold")
    for page, _, expr in re.findall(r"^  (\S+?):(\d+): (.+)$", failed, re.M):
        path = project / "docs" / page
        text = path.read_text(encoding="utf-8")
        for call in (f'claim("{expr}")', f"claim('{expr}')", json.dumps(f'claim("{expr}")')[1:-1]):
            text = text.replace(call, '""')
        path.write_text(text, encoding="utf-8")
    # Then empty the cache again but for the results: the builds write every other entry.
    for p in (project / ".cache").iterdir():
        if not p.name.startswith("results-"):
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    sites = [project / "site-a", project / "site-b"]
    with ThreadPoolExecutor(2) as pool:
        builds = list(pool.map(lambda d: mkdocs_build(project, "-d", str(d)), sites))
    return SimpleNamespace(project=project, h=h, m=m, accepts=accepts, builds=builds, site=sites[0],
                           other=sites[1], lock_after_accepts=lock_after_accepts,
                           cache_after_accepts=cache_after_accepts, tmp_after_accepts=tmp_after_accepts)


def test_two_accepts_at_once_from_an_empty_cache_both_succeed(hostile):
    for proc in hostile.accepts:
        assert proc.returncode == 0, out(proc)
    assert not hostile.tmp_after_accepts
    results = [n for n in hostile.cache_after_accepts if n.rsplit("-", 1)[0] == "results"]
    assert len(results) == 1, hostile.cache_after_accepts
    lock.read(hostile.project / LOCK)  # whole, parseable, every entry valid
    assert "sentence." + str(hostile.h) in json.loads(hostile.lock_after_accepts)["numbers"]


def test_two_builds_at_once_both_succeed_and_leave_a_valid_cache(hostile):
    for proc in hostile.builds:
        assert proc.returncode == 0, out(proc)
    assert_cache_whole(hostile.project)
    names = sorted(p.name for p in (hostile.project / ".cache").iterdir())
    assert [n for n in names if n.startswith("charts-")], names
    assert [n for n in names if n.startswith("vega-bundle-")], names
    page = "bad-input/index.html"
    assert (hostile.site / page).read_bytes() == (hostile.other / page).read_bytes()
    bundles = [hostile.site / "assets/javascripts/vega-bundle.js", hostile.other / "assets/javascripts/vega-bundle.js"]
    assert bundles[0].read_bytes() == bundles[1].read_bytes() and bundles[0].stat().st_size > 100_000


def test_markup_in_the_corpus_is_escaped_on_every_page(hostile):
    for proc in hostile.builds:
        assert proc.returncode == 0, out(proc)
    shown = 0
    for path in hostile.site.rglob("*.html"):
        raw = path.read_text(encoding="utf-8")
        where = path.relative_to(hostile.site)
        assert "<script>alert(1)" not in raw and "<b>bold</b>" not in raw, where
        p = parse(path)
        assert not [s for s in p.scripts if "alert(" in s], f"{where}: a corpus sentence became a script"
        for tag, attrs in p.tags:
            bad = {k: v for k, v in attrs.items() if k.startswith("on") or (v or "").strip().lower().startswith("javascript:")}
            assert not bad, f"{where}: <{tag}> got {bad} from a corpus sentence"
        text = "".join(p.text)
        shown += HTML_SENTENCE in text
    assert shown >= 1, "no page shows the HTML sentence as text"
    # The search index is HTML that Material's search renders: escaped there too.
    index = json.loads((hostile.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert not [d["location"] for d in index["docs"] if "<script>alert(1)" in d["text"] or "<b>bold" in d["text"]]


def test_markdown_in_the_corpus_is_shown_as_written(hostile):
    p = parse(hostile.site / "bad-input" / "index.html")
    text = "".join(p.text)
    assert MD_SENTENCE in text, "the sentence was turned into Markdown (a link, emphasis or attributes)"
    assert not [a for t, a in p.tags if t == "a" and "javascript:" in (a.get("href") or "")]
    # The tables link each row to the instrument with the sentence as the link's title:
    # escaped once, not twice (a reader hovering the link reads the sentence, not entities).
    titles = {a.get("title") for t, a in p.tags if t == "a"}
    assert HTML_SENTENCE in titles and MD_SENTENCE in titles, [t for t in titles if t and "stands" in t]
    raw = (hostile.site / "bad-input" / "index.html").read_text(encoding="utf-8")
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", raw, re.S) if "stays in its cell" in r)
    assert len(re.findall(r"<td", row)) == 2, f"a pipe in the sentence split the table row: {row}"


def test_corpus_words_ride_in_chart_data_escaped(hostile):
    raw = (hostile.site / "bad-input" / "index.html").read_text(encoding="utf-8")
    specs = [json.loads(a["data-spec"]) for t, a in parse(hostile.site / "bad-input" / "index.html").tags
             if t == "div" and "data-spec" in a]
    assert specs, "no chart on the page"
    rows = [row for spec in specs for row in data_rows(spec) if row.get("sentence") == hostile.h]
    words = {row["word"] for row in rows}
    assert {"<", "script", "alert"} <= words, words
    # In the HTML the spec is an attribute value: no raw angle bracket from the data.
    for attr in re.findall(r'data-spec="([^"]*)"', raw):
        assert "<" not in attr and ">" not in attr


def data_rows(node) -> list[dict]:
    """Every inline data row of a Vega-Lite spec (layers' `values`, top-level `datasets`)."""
    if isinstance(node, list):
        return [row for v in node for row in data_rows(v)]
    if not isinstance(node, dict):
        return []
    rows = [r for r in node.get("values", []) if isinstance(r, dict)] if isinstance(node.get("values"), list) else []
    rows += [r for values in node.get("datasets", {}).values() for r in values if isinstance(r, dict)]
    return rows + [row for k, v in node.items() if k not in ("values", "datasets") for row in data_rows(v)]


@pytest.fixture(scope="module")
def hostile_url(hostile):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(hostile.site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


MARKS = "svg .mark-symbol path, svg .mark-rect path, svg .mark-line path"


@pytest.mark.browser
def test_markup_in_the_corpus_is_text_in_the_browser(page, hostile, hostile_url):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(hostile_url + "bad-input/")
    page.wait_for_function("(sel) => [...document.querySelectorAll('div.vega-chart')].every(el => el.querySelector(sel))",
                           arg=MARKS, timeout=20_000)
    article = page.locator("article")
    assert article.get_by_text(HTML_SENTENCE, exact=True).first.is_visible()
    assert article.get_by_text(MD_SENTENCE, exact=True).first.is_visible()
    assert page.evaluate("() => [...document.querySelectorAll('article b, article script')]"
                         ".filter(e => /bold|alert/.test(e.textContent)).length") == 0
    # The chart's tooltip shows the word "<" as a character, not as markup.
    point = page.locator(f'div.vega-chart path[aria-label*="word: <; sentence: {hostile.h};"]').first
    point.dispatch_event("pointermove")
    point.dispatch_event("mousemove")
    tip = page.locator("#vg-tooltip-element")
    tip.locator("td.value", has_text="<").first.wait_for(timeout=5_000)
    assert "&lt;" in tip.inner_html()
    # Material's search renders its index as HTML: the sentence comes back as text.
    page.keyboard.press("s")  # Material's shortcut: focus the search box
    page.keyboard.type("bold", delay=20)
    page.locator('.md-search-result__item a[href$="bad-input/"]').first.wait_for(timeout=10_000)
    assert page.locator(".md-search-result script").count() == 0
    assert page.evaluate("() => [...document.querySelectorAll('.md-search-result b')].length") == 0
    # The instrument opens the sentence without running it.
    page.goto(hostile_url + f"instrument/#l6/{hostile.h}")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    assert dialogs == [], f"a corpus sentence ran as script: {dialogs}"
    assert page.console_errors == []
    assert all(u.startswith(hostile_url) or u.split(":", 1)[0] in ("data", "blob", "about") for u in page.requests)


# -- pages ---------------------------------------------------------------------------------

PAGE = "colophon.md"
PAGE_CASES = {
    "malformed format": ('{{ num("l6.alpha.median_sink", "pct:x") }}', "bad format 'pct:x'"),
    "format that hides a fraction": ('{{ num("l6.alpha.median_sink", "int") }}', "is not a whole number"),
    "claim with a syntax error": ('{{ claim("l6.alpha.median_sink >") }}', "is not a valid expression"),
    "table with a misspelt argument": ('{{ table("lens_summary", modle="l6") }}', "unexpected keyword argument 'modle'"),
    "chart of an unknown model": ('{{ chart("sink_scatter", model="l9") }}', "unknown chart 'sink_scatter/l9'"),
}


def _append(project: Path, page: str, snippet: str) -> int:
    path = project / "docs" / page
    text = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
    path.write_text(text + snippet + "\n", encoding="utf-8")
    return text.count("\n") + 1


@pytest.mark.parametrize("case", PAGE_CASES)
def test_a_page_error_fails_the_build_naming_page_and_line(project, case):
    snippet, message = PAGE_CASES[case]
    line = _append(project, PAGE, snippet)
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert f"{PAGE}:{line}: " in out(proc), out(proc)
    assert message in out(proc), out(proc)
    assert "Traceback" not in out(proc), out(proc)
    previous.assert_untouched()


def test_an_unknown_key_fails_check_with_page_and_line(project):
    line = _append(project, PAGE, 'Oops: {{ num("l6.alpha.no_such_number", "pct:1") }}.')
    proc = run(project, "model", "check")
    assert proc.returncode == 2, out(proc)
    assert proc.stderr.strip() == f"error: {PAGE}:{line}: unknown number 'l6.alpha.no_such_number'", proc.stderr


def test_an_error_in_a_notebook_cell_names_notebook_line_and_cell(project):
    path = project / "docs" / "notebooks" / "main-table.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    index = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown")
    cell = nb["cells"][index]
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    cell["source"] = source.rstrip("\n") + "\n\n" + '{{ num("l6.nope") }}'
    line = cell["source"].count("\n") + 1
    path.write_text(json.dumps(nb), encoding="utf-8")
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert f"notebooks/main-table.ipynb:{line}: unknown number 'l6.nope' (markdown cell {index})" in out(proc), out(proc)


# -- charts --------------------------------------------------------------------------------

def test_check_fields_names_chart_and_field():
    spec = {"data": {"values": [{"alpha": 0.1, "norm": 0.2}]}, "mark": "point",
            "encoding": {"x": {"field": "alpha", "type": "quantitative"}, "y": {"field": "nrom", "type": "quantitative"}}}
    with pytest.raises(charts.ChartError, match=r"chart 'sink_scatter/l6': unknown field 'nrom'"):
        charts.check_fields("sink_scatter/l6", spec)
    spec["encoding"]["y"]["field"] = "norm"
    charts.check_fields("sink_scatter/l6", spec)


def _base():
    alt = charts._alt()
    return alt, alt.Chart(alt.Data(values=[{"x": 0.1, "y": 0.2, "g": "a"}, {"x": 0.3, "y": 0.4, "g": "b"}]))


def _layered(results, model):
    alt, base = _base()
    return base.mark_point().encode(x="x:Q", y="y:Q") + base.mark_line().encode(x="x:Q", y="why:Q")


def _concatenated(results, model):
    alt, base = _base()
    return alt.hconcat(base.mark_point().encode(x="x:Q", y="y:Q"), base.mark_bar().encode(x="x:Q", y="why:Q"))


def _faceted(results, model):
    alt, base = _base()
    return base.mark_point().encode(x="x:Q", y="y:Q").facet(row="why:N")


@pytest.mark.parametrize("builder", [_layered, _concatenated, _faceted], ids=["layer", "hconcat", "facet"])
def test_a_chart_builder_naming_an_absent_field_is_rejected(monkeypatch, builder):
    monkeypatch.setitem(charts.CHARTS, "broken", (builder, True))
    with pytest.raises(charts.ChartError, match=r"chart 'broken/l6': unknown field 'why'"):
        charts.build({"models": {"l6": {}}}, "broken/l6")


def test_a_field_made_by_a_transform_is_not_an_unknown_field(monkeypatch):
    def made(results, model):
        alt, base = _base()
        return (base.transform_calculate(why="datum.y * 2").mark_point().encode(x="x:Q", y="why:Q")
                + base.transform_aggregate(total="sum(y)", groupby=["g"]).mark_bar().encode(x="g:N", y="total:Q"))

    monkeypatch.setitem(charts.CHARTS, "made", (made, True))
    charts.build({"models": {"l6": {}}}, "made/l6")


# -- the lock ------------------------------------------------------------------------------

def _first_key(text: str) -> str:
    return next(iter(json.loads(text)["numbers"]))


def _truncate(text: str) -> str:
    return text[: len(text) // 2]


def _drop_tolerance(text: str) -> str:
    data = json.loads(text)
    del data["numbers"][_first_key(text)]["tolerance"]
    return json.dumps(data, indent=1)


def _duplicate(text: str) -> str:
    data = json.loads(text)
    items = list(data["numbers"].items())
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in items + items[:1])
    return f'{{"version": 1, "provenance": {json.dumps(data["provenance"])}, "numbers": {{\n{body}\n}}}}\n'


LOCK_CASES = {
    "malformed JSON": (_truncate, lambda key: r"numbers\.lock\.json:\d+: not valid JSON"),
    "missing tolerance": (_drop_tolerance, lambda key: re.escape(f"numbers.lock.json: number {key!r} has no 'tolerance'")),
    "duplicate key": (_duplicate, lambda key: re.escape(f"numbers.lock.json: duplicate key {key!r}")),
}


@pytest.mark.parametrize("case", LOCK_CASES)
def test_a_bad_lock_fails_build_and_accept_naming_file_and_key(project, case):
    corrupt, expected = LOCK_CASES[case]
    path = project / LOCK
    key = _first_key(path.read_text(encoding="utf-8"))
    path.write_text(corrupt(path.read_text(encoding="utf-8")), encoding="utf-8")
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert re.search(expected(key), out(proc)), out(proc)
    assert "Traceback" not in out(proc), out(proc)
    # `make accept` does not paper over a lock it cannot read: it says so and writes nothing.
    acc = run(project, "model", "accept")
    assert acc.returncode == 2 and re.search(expected(key), acc.stderr), out(acc)
    previous.assert_untouched()


@pytest.mark.parametrize("entry, message", [
    ({"value": 0.5, "tolerance": float("nan")}, "bad tolerance nan"),
    ({"value": 0.5, "tolerance": float("inf")}, "bad tolerance inf"),
    ({"value": 0.5, "tolerance": "0.1"}, "bad tolerance '0.1'"),
    ({"value": None, "tolerance": 0.0}, "bad value None"),
    ({"value": [1, 2], "tolerance": 0.0}, "bad value [1, 2]"),
    ({"value": float("nan"), "tolerance": 0.0}, "bad value nan"),
], ids=["nan tolerance", "infinite tolerance", "text tolerance", "null value", "list value", "nan value"])
def test_a_lock_entry_that_could_never_drift_is_an_error(tmp_path, entry, message):
    # A NaN compares false with everything: a NaN tolerance or value would never drift.
    path = tmp_path / "numbers.lock.json"
    path.write_text(json.dumps({"numbers": {"l6.alpha.median_sink": entry}}))
    with pytest.raises(lock.LockError, match=re.escape(f"number 'l6.alpha.median_sink' has a {message}")):
        lock.read(path)


def test_a_number_that_becomes_nan_has_moved():
    assert lock.moved(lock.Locked(0.2, 0.0005), float("nan"))
    assert not lock.moved(lock.Locked(0.2, 0.0005), 0.2003)
    assert lock.moved(lock.Locked(0.2, 0.0005), 0.2006)


class Killed(BaseException):
    """Stands for the Ctrl-C (or the kill) that interrupts `make accept`."""


def _fail_rename(monkeypatch):
    def replace(src, dst):
        raise Killed("interrupted before the rename")
    monkeypatch.setattr(files, "os", SimpleNamespace(fdopen=os.fdopen, replace=replace))


def _fail_mid_write(monkeypatch):
    class HalfWriter:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            raise Killed("interrupted half-way through the write")

    monkeypatch.setattr(files, "os", SimpleNamespace(fdopen=lambda *a, **k: HalfWriter(os.fdopen(*a, **k)),
                                                    replace=os.replace))


@pytest.mark.parametrize("interrupt", [_fail_mid_write, _fail_rename], ids=["mid-write", "before-rename"])
def test_an_interrupted_accept_leaves_the_old_lock_intact(project, monkeypatch, interrupt):
    path = project / LOCK
    data = json.loads(path.read_text(encoding="utf-8"))
    key = next(k for k, v in data["numbers"].items() if isinstance(v["value"], float))
    data["numbers"][key]["value"] += 1.0  # so that accept has something to rewrite
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    before = path.read_bytes()
    settings = gate.Settings.at(project)
    interrupt(monkeypatch)
    with pytest.raises(Killed):
        gate.accept(settings)
    assert path.read_bytes() == before, "the old lock was damaged"
    assert not list(path.parent.glob("*.tmp")), "a temporary lock file was left behind"
    monkeypatch.undo()
    assert f"~ {key}:" in gate.accept(settings)
    assert lock.read(path).numbers[key].value != data["numbers"][key]["value"]


# -- the cache -----------------------------------------------------------------------------

KEY = "5abc" * 16


@pytest.mark.parametrize("content", [
    b"", b'{"key": "' + KEY.encode() + b'", "sha256": "', b"[]", b"null", b"{}", b"\xff\xfe\x00garbage",
    b'{"key": "' + KEY.encode() + b'", "sha256": "0", "payload": {"n": 2}}',
], ids=["empty", "truncated", "a list", "null", "no fields", "not text", "wrong digest"])
def test_an_unusable_cache_entry_is_recomputed_not_trusted(tmp_path, content):
    cache.entry_path(tmp_path, "results", KEY).write_bytes(content)
    calls = []
    payload, hit = cache.get(tmp_path, "results", KEY, lambda: calls.append(1) or {"n": 1})
    assert (payload, hit, calls) == ({"n": 1}, False, [1])
    assert cache.read(tmp_path, "results", KEY) == {"n": 1}  # rewritten whole
    assert not list(tmp_path.glob("*.tmp"))


def test_a_truncated_entry_is_recomputed(tmp_path):
    path = cache.write(tmp_path, "results", KEY, {"rows": list(range(1000))})
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    payload, hit = cache.get(tmp_path, "results", KEY, lambda: {"rows": [1]})
    assert (payload, hit) == ({"rows": [1]}, False)


def test_an_entry_for_another_key_in_the_same_file_is_ignored(tmp_path):
    # entry_path keeps 32 hex digits of the key: two keys may share a file name, never an entry.
    other = KEY[:32] + "f" * 32
    assert cache.entry_path(tmp_path, "results", other) == cache.entry_path(tmp_path, "results", KEY)
    cache.write(tmp_path, "results", other, {"from": "other"})
    assert cache.read(tmp_path, "results", KEY) is None
    assert cache.get(tmp_path, "results", KEY, lambda: {"from": "us"}) == ({"from": "us"}, False)


def test_an_entry_written_by_another_code_version_is_not_used(tmp_path, monkeypatch, study):
    prov = results_mod.provenance(study)
    key = results_mod.cache_key(prov)
    cache.write(tmp_path, "results", key, {"from": "this code"})
    monkeypatch.setattr(results_mod, "code_version", lambda: "0" * 64)
    other = results_mod.cache_key(results_mod.provenance(study))
    assert other != key
    assert cache.read(tmp_path, "results", other) is None
    # Even copied into the other version's place, the entry carries its own key: ignored.
    shutil.copy(cache.entry_path(tmp_path, "results", key), cache.entry_path(tmp_path, "results", other))
    assert cache.read(tmp_path, "results", other) is None


# -- the weights ---------------------------------------------------------------------------

def _tensor_data_offset(path: Path, name: str) -> int:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    return 8 + n + header[name]["data_offsets"][0]


def _use_folder(project: Path, folder: Path) -> None:
    path = project / "docs" / "study.yml"
    text = path.read_text(encoding="utf-8")
    assert "{name: minilm-l6, key: l6}" in text
    path.write_text(text.replace("{name: minilm-l6, key: l6}", f"{{name: '{folder}', key: l6}}"), encoding="utf-8")


def test_a_flipped_byte_in_the_weights_is_drift_not_a_silent_pass(project, l6_folder):
    weights = l6_folder / "model.safetensors"
    at = _tensor_data_offset(weights, "embeddings.LayerNorm.weight") + 3  # first element's sign/exponent byte
    raw = bytearray(weights.read_bytes())
    before = struct.unpack("<f", bytes(raw[at - 3:at + 1]))[0]
    raw[at] ^= 0x01
    after = struct.unpack("<f", bytes(raw[at - 3:at + 1]))[0]
    assert math.isfinite(after) and after != before
    weights.write_bytes(bytes(raw))
    _use_folder(project, l6_folder)

    proc = run(project, "model", "check")
    assert proc.returncode == 1, out(proc)
    moved = re.findall(r"^  (\S+): recorded .*, now ", proc.stderr, re.M)
    assert any(k.startswith("l6.") and k != "l6.model" for k in moved), proc.stderr
    assert not [k for k in moved if k.startswith("l3.")], "the other model's numbers did not move"
    assert re.search(r"models\.l6\.sha256: [0-9a-f]{64} -> [0-9a-f]{64}", proc.stderr), proc.stderr


@pytest.mark.parametrize("damage", ["header", "truncated"])
def test_damaged_weights_fail_loudly_naming_the_file(project, l6_folder, damage):
    weights = l6_folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    if damage == "header":
        raw[8] = ord("x")  # the JSON header's opening brace
    else:
        raw = raw[: len(raw) - 4096]
    weights.write_bytes(bytes(raw))
    _use_folder(project, l6_folder)
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert f"{weights}: truncated or corrupt safetensors file" in out(proc), out(proc)
    previous.assert_untouched()


# -- links and structure -------------------------------------------------------------------

def test_a_dead_internal_link_fails_the_build(project):
    _append(project, PAGE, "See [the missing page](no-such-page.md).")
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "no-such-page.md" in out(proc) and PAGE in out(proc), out(proc)


def test_a_page_left_out_of_the_nav_fails_the_build(project):
    (project / "docs" / "orphan.md").write_text("# An orphan\n\nNot in the nav.\n", encoding="utf-8")
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "orphan.md" in out(proc), out(proc)
