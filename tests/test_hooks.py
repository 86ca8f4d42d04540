"""The MkDocs hooks (hooks/live_numbers.py), in real `mkdocs build --strict` runs of copies
of the small site: what a build publishes, what stops it (every error naming the thing:
the corpus file and line, the page and line, the lock file and key, the weights file),
and what a failed build leaves alone: the previous site, the lock and the cache.

Then a site whose corpus holds markup, built from an empty cache by two accepts and two
builds at once: text from the corpus reaches readers as text, never as markup."""
from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from conftest import copy_project, mkdocs_build, output, run, serve, use_small_corpus
from model import study as study_mod
from model.errors import UserError
from livenumbers import accepting, cache, gate, lock
from model.site.source import study_settings

LOCK = Path("docs") / "numbers.lock.json"


class Previous:
    """What a failed build or command must leave alone: a previous site, the lock, and a
    cache of whole entries (no temporary files)."""

    def __init__(self, project: Path):
        self.project = project
        (project / "site").mkdir(exist_ok=True)
        (project / "site" / "index.html").write_text("the previous site")
        self.lock = (project / LOCK).read_bytes()

    def assert_untouched(self) -> None:
        site = self.project / "site"
        assert [p.name for p in site.iterdir()] == ["index.html"], "the failed build wrote into site/"
        assert (site / "index.html").read_text() == "the previous site"
        assert (self.project / LOCK).read_bytes() == self.lock, "the lock changed"
        assert_cache_whole(self.project)


def assert_cache_whole(project: Path) -> None:
    """No temporary file anywhere, and every cache entry checks against its manifest."""
    assert not [p for p in project.rglob("*.tmp")], "temporary files left behind"
    for manifest in (project / ".cache").glob(f"*/*/{cache.MANIFEST}"):
        kind, key = manifest.parent.parent.name, json.loads(manifest.read_text())["key"]
        assert cache.read(project / ".cache", kind, key) == manifest.parent, f"{manifest.parent} does not check"


def append(project: Path, page: str, text: str) -> int:
    path = project / "docs" / page
    before = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n"
    path.write_text(before + text + "\n", encoding="utf-8")
    return before.count("\n") + 1


def edit_lock(project: Path, edit) -> None:
    data = json.loads((project / LOCK).read_text())
    edit(data)
    (project / LOCK).write_text(json.dumps(data, indent=1))


# -- what a build publishes ---------------------------------------------------------------------

def test_the_small_site_is_built_with_its_numbers_and_files(tiny_project):
    site = tiny_project / "site"
    locked = lock.read(tiny_project / LOCK).numbers
    assert f"{locked['l6.alpha.median_sink'].value * 100:.1f}%" in (site / "index.html").read_text()
    evidence = (site / "evidence" / "index.html").read_text()
    assert "<table>" in evidence and 'class="vega-chart" id="chart-sink_distribution-l6" data-spec="' in evidence
    nb = (site / "notebook" / "index.html").read_text()
    assert f"{locked['l3.alpha.median_sink'].value * 100:.1f}%" in nb and "42" in nb
    assert not list(site.rglob("*.ipynb")), "a notebook published as a file, not a page"
    results = json.loads((site / "downloads" / "results.json").read_text())
    # The lock is published as a download (the anchors' "recorded" values), not at the root.
    assert (site / "downloads" / "numbers.lock.json").read_bytes() == (tiny_project / LOCK).read_bytes()
    assert not (site / "numbers.lock.json").exists()
    index = json.loads((site / "assets" / "instrument" / "index.json").read_text())
    assert [s["text"] for s in index["sentences"]] == results["sentences"]
    assert [s["register"] for s in index["sentences"]] == results["registers"]
    for key in results["models"]:
        views = sorted(int(p.stem) for p in (site / "assets" / "instrument" / key).glob("*.json"))
        assert views == list(range(len(results["sentences"])))
    assert (site / "assets" / "javascripts" / "vega-bundle.js").stat().st_size > 100_000
    assert "{{" not in "".join(p.read_text() for p in site.rglob("*.html"))


def test_a_moved_number_fails_the_build_and_leaves_the_previous_site(project):
    edit_lock(project, lambda d: d["numbers"]["l6.alpha.median_sink"].update(value=0.5))
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "numbers gate failed" in output(proc)
    assert "l6.alpha.median_sink: recorded 0.5, now " in output(proc) and "cited by evidence.md, index.md" in output(proc)
    previous.assert_untouched()


def test_under_serve_a_drift_is_a_banner_not_a_crash(project, monkeypatch):
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    monkeypatch.chdir(project)  # mkdocs-jupyter keeps its own cache under the working directory
    edit_lock(project, lambda d: d["numbers"]["l3.alpha.median_sink"].update(value=0.5))
    cfg = load_config(str(project / "mkdocs.yml"))
    cfg.plugins.on_startup(command="serve", dirty=False)
    try:
        build(cfg, serve_url="http://127.0.0.1:8000/")
    finally:
        cfg.plugins.on_startup(command="build", dirty=False)
    notebook = (project / "site" / "notebook" / "index.html").read_text()
    assert "drift-banner" in notebook and "l3.alpha.median_sink" in notebook
    assert "drift-banner" not in (project / "site" / "index.html").read_text()   # it does not cite it


PROBE = """
import sys
from mkdocs.commands.build import build
from mkdocs.config import load_config
build(load_config('mkdocs.yml'))
print(sorted(m for m in ('torch', 'altair', 'vl_convert', 'transformers') if m in sys.modules))
"""


def test_a_prose_edit_rebuilds_without_torch_altair_or_a_kernel(project):
    executed = sorted((project / ".cache" / "notebook").rglob("*.ipynb"))
    stamps = [p.stat().st_mtime_ns for p in executed]
    assert executed, "the seeded cache has the executed notebook"
    path = project / "docs" / "index.md"
    path.write_text(path.read_text().replace("Its pages are the tests' own", "Its pages belong to the tests"))
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, output(proc)
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert "Its pages belong to the tests" in (project / "site" / "index.html").read_text()
    assert sorted((project / ".cache" / "notebook").rglob("*.ipynb")) == executed
    assert [p.stat().st_mtime_ns for p in executed] == stamps


# -- the corpus ------------------------------------------------------------------------------------

def corpus(project: Path) -> Path:
    return project / "docs" / "corpus.tsv"


def _insert(line: bytes):
    def edit(lines: list[bytes]) -> int:
        lines.insert(4, line)
        return 5
    return edit


def _separator_then_empty(lines: list[bytes]) -> int:
    # A LINE SEPARATOR (U+2028, what a paste from a word processor brings) inside a
    # sentence is not a line break of the file: the empty line after it is still line 3.
    lines[0] = lines[0].replace(b" ", " \u2028".encode(), 1)
    lines.insert(2, b"")
    return 3


CORPUS_CASES = {
    "empty line": (_insert(b""), "empty line"),
    "blank line": (_insert(b"   \t "), "empty line"),
    "no tab": (_insert(b"news The register and the sentence run together."), "expected 'register<TAB>sentence'"),
    "a sentence twice": (lambda lines: lines.append(lines[0]) or len(lines), "the same sentence is already on line 1"),
    "not UTF-8": (_insert("news\tCaf\u00e9 au lait, s'il vous pla\u00eet.".encode("latin-1")), "not valid UTF-8"),
    "line separator in a sentence": (_separator_then_empty, "empty line"),
    "over the length limit": (_insert(b"news\t" + b" ".join([b"word"] * 600)), "longer than the model's limit of 512"),
    "nothing the tokenizer keeps": (_insert("news\t\u200b\u200b".encode()), "no tokens"),
}


def break_corpus(project: Path, case: str) -> tuple[int, str]:
    """Apply a CORPUS_CASES edit to the project's corpus: (the bad line, the message expected)."""
    edit, message = CORPUS_CASES[case]
    lines = corpus(project).read_bytes().split(b"\n")[:-1]
    line = edit(lines)
    corpus(project).write_bytes(b"\n".join(lines) + b"\n")
    return line, message


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_a_bad_corpus_stops_the_gate_naming_file_and_line(project, case):
    """What the hook raises the build's error from (`on_pre_build` hands the gate's
    UserError to MkDocs as it is); the two builds below show that wiring."""
    line, message = break_corpus(project, case)
    with pytest.raises(UserError) as err:
        gate.run(study_settings(project))
    # The error starts with the corpus's path and line (not wrapped in study.yml's name).
    assert str(err.value).startswith(f"{corpus(project)}:{line}: ") and message in str(err.value), str(err.value)
    assert_cache_whole(project)


@pytest.mark.parametrize("case", ["not UTF-8", "over the length limit"])   # read, and tokenized by a model
def test_a_bad_corpus_fails_the_build_naming_file_and_line(project, case):
    line, message = break_corpus(project, case)
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0, output(proc)
    assert re.search(rf"ERROR\s+-\s+{re.escape(str(corpus(project)))}:{line}: ", output(proc)), output(proc)
    assert message in output(proc) and "Traceback" not in output(proc), output(proc)
    previous.assert_untouched()


# -- pages -----------------------------------------------------------------------------------------

PAGE_CASES = {
    "unknown number": ('{{ num("l6.alpha.no_such_number", "pct:1") }}', "unknown number 'l6.alpha.no_such_number'"),
    "malformed format": ('{{ num("l6.alpha.median_sink", "pct:x") }}', "bad format 'pct:x'"),
    "format that hides a fraction": ('{{ num("l6.alpha.median_sink", "int") }}', "is not a whole number"),
    "claim with a syntax error": ('{{ claim("l6.alpha.median_sink >") }}', "is not a valid expression"),
    "table with a misspelt argument": ('{{ table("lens_summary", modle="l6") }}', "unexpected keyword argument 'modle'"),
    "chart of an unknown model": ('{{ chart("sink_scatter", model="l9") }}', "unknown chart 'sink_scatter/l9'"),
    "misspelt key": ('{{ num("l6.alpha.median_snk", "pct:1") }}', "did you mean 'l6.alpha.median_sink'"),
    "link to a row the instrument lacks": ('[a row]({{ instrument("l6", 0, 99, "alpha") }})',
                                           "instrument link #l6/0/99/alpha: sentence 0 has no displayed row for word '99'"),
    "link written by hand to a lens that does not exist": ("[a row](instrument.md#l6/0/1/alfa)",
                                                          "instrument link #l6/0/1/alfa: unknown lens 'alfa'"),
}


@pytest.mark.parametrize("case", PAGE_CASES)
def test_a_page_error_alone_stops_the_gate_naming_page_and_line(project, case):
    """Each error alone is one the gate stops on (a UserError: what `on_pre_build` hands
    MkDocs as the build's error, as the build below shows for all of them at once)."""
    snippet, message = PAGE_CASES[case]
    line = append(project, "evidence.md", snippet)
    with pytest.raises(UserError) as err:
        gate.run(study_settings(project))
    assert f"evidence.md:{line}: " in str(err.value) and message in str(err.value), str(err.value)


def test_each_page_error_fails_the_build_naming_page_and_line(project):
    """Every PAGE_CASES error on its own line of one page: one build fails, naming each
    with its page, line and message, with no traceback, and leaves the previous site (one
    build, not one per case: the case-by-case stop is the gate's, tested above)."""
    lines = {case: append(project, "evidence.md", snippet) for case, (snippet, _) in PAGE_CASES.items()}
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert f"{len(PAGE_CASES)} problems on 1 page(s)" in output(proc), output(proc)
    for case, (_, message) in PAGE_CASES.items():
        found = [l for l in output(proc).splitlines() if f"evidence.md:{lines[case]}: " in l]
        assert found and message in found[0], (case, output(proc))
    assert "Traceback" not in output(proc), output(proc)
    previous.assert_untouched()


def test_every_page_error_is_listed_by_one_failed_build(project):
    a = append(project, "index.md", 'Oops {{ num("l6.alpha.median_snk", "pct:1") }}.')
    b = append(project, "evidence.md", '{{ table("lens_sumary", model="l6") }}')
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "2 problems on 2 page(s); fix them all, then build again:" in output(proc), output(proc)
    assert f"  evidence.md:{b}: unknown table 'lens_sumary'; did you mean 'lens_summary'" in output(proc)
    assert f"  index.md:{a}: unknown number 'l6.alpha.median_snk'; did you mean 'l6.alpha.median_sink'" in output(proc)


def test_row_links_are_the_gates_and_other_anchors_mkdocs(project):
    """The small site links a row of the instrument: a clean build says nothing of it. A
    link to a heading that does not exist still fails the build (MkDocs' own check)."""
    clean = mkdocs_build(project)
    assert clean.returncode == 0, output(clean)
    assert "anchor" not in output(clean), output(clean)
    append(project, "index.md", "See [a heading that is not there](evidence.md#no-such-heading).")
    broken = mkdocs_build(project)
    assert broken.returncode != 0
    assert "contains a link 'evidence.md#no-such-heading'" in output(broken), output(broken)


def test_an_error_in_a_notebook_cell_fails_the_build_naming_it(project):
    path = project / "docs" / "notebook.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"].append('\n\n{{ num("l3.nope") }}')
    path.write_text(json.dumps(nb))
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert re.search(r"notebook\.ipynb:5: unknown number 'l3\.nope'(; did you mean [^\n]*)? \(markdown cell 0\)",
                     output(proc)), output(proc)


def test_a_notebook_whose_code_fails_fails_the_build(project):
    path = project / "docs" / "notebook.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][1]["source"] = ["raise RuntimeError('the cell fails')"]
    path.write_text(json.dumps(nb))
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "notebook.ipynb: a cell failed while executing the notebook" in output(proc) and "the cell fails" in output(proc)


def test_a_dead_internal_link_fails_the_build(project):
    append(project, "evidence.md", "See [the missing page](no-such-page.md).")
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "no-such-page.md" in output(proc) and "evidence.md" in output(proc), output(proc)


def test_a_page_left_out_of_the_nav_fails_the_build(project):
    (project / "docs" / "orphan.md").write_text("# An orphan\n\nNot in the nav.\n", encoding="utf-8")
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert "orphan.md" in output(proc), output(proc)


# -- the lock --------------------------------------------------------------------------------------

def _first_key(text: str) -> str:
    return next(iter(json.loads(text)["numbers"]))


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
    "malformed JSON": (lambda text: text[: len(text) // 2], lambda key: r"numbers\.lock\.json:\d+: not valid JSON"),
    "missing tolerance": (_drop_tolerance, lambda key: re.escape(f"numbers.lock.json: number {key!r} has no 'tolerance'")),
    "duplicate key": (_duplicate, lambda key: re.escape(f"numbers.lock.json: duplicate key {key!r}")),
}


def break_lock(project: Path, case: str) -> str:
    """Corrupt the project's lock as LOCK_CASES says: the pattern its error must match."""
    corrupt, expected = LOCK_CASES[case]
    text = (project / LOCK).read_text(encoding="utf-8")
    (project / LOCK).write_text(corrupt(text), encoding="utf-8")
    return expected(_first_key(text))


@pytest.mark.parametrize("case", LOCK_CASES)
def test_a_bad_lock_stops_the_gate_and_accept_naming_file_and_key(project, case):
    """What the hook and `model accept` raise their errors from; the build below shows the wiring."""
    expected = break_lock(project, case)
    before = (project / LOCK).read_bytes()
    for step in (gate.run, accepting.accept):
        with pytest.raises(UserError, match=expected):
            step(study_settings(project))
    assert (project / LOCK).read_bytes() == before, "accept wrote a lock it could not read"


def test_a_bad_lock_fails_build_and_accept_naming_file_and_key(project):
    expected = break_lock(project, "duplicate key")
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert re.search(expected, output(proc)) and "Traceback" not in output(proc), output(proc)
    # `make accept` does not paper over a lock it cannot read: it says so and writes nothing.
    acc = run(project, "model", "accept")
    assert acc.returncode == 2 and re.search(expected, acc.stderr), output(acc)
    previous.assert_untouched()


# -- the weights -----------------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["header", "truncated"])
def test_damaged_weights_fail_the_build_naming_the_file(project, l6_folder, damage):
    weights = l6_folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    if damage == "header":
        raw[8] = ord("x")  # the JSON header's opening brace
    else:
        raw = raw[: len(raw) - 4096]
    weights.write_bytes(bytes(raw))
    path = project / "docs" / "study.yml"
    study = yaml.safe_load(path.read_text())
    study["models"][0]["name"] = str(l6_folder)
    path.write_text(yaml.safe_dump(study, sort_keys=False))
    previous = Previous(project)
    proc = mkdocs_build(project)
    assert proc.returncode != 0
    assert f"{weights}: truncated or corrupt safetensors file" in output(proc), output(proc)
    previous.assert_untouched()


# -- a corpus that holds markup ----------------------------------------------------------------------

HTML_SENTENCE = "A <b>bold</b> claim </script><script>alert(1)</script> stands."
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

{{{{ table("worst_rows", model="l6", n=200) }}}}

{{{{ chart("sink_scatter", model="l6") }}}}
"""


class _Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, the text of <script> elements, and the rest of
    the text, as a browser would see them (entities decoded)."""

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
def hostile(tmp_path_factory, tiny_project):
    """A copy of the small site on 10 sentences plus HTML_SENTENCE and MD_SENTENCE, with a
    page that shows them, built from an EMPTY cache by two `accept`s at once and then two
    builds at once (so its one model run also proves concurrent writers leave a valid cache)."""
    project = copy_project(tiny_project, tmp_path_factory.mktemp("hostile"))
    # The two MiniLM models only (the small site cites both): the 12-layer model would add
    # its load and measurement to each of the two accepts, and nothing here is about it.
    models = [m for m in yaml.safe_load((project / "docs" / "study.yml").read_text(encoding="utf-8"))["models"]
              if m["key"] in ("l6", "l3")]
    use_small_corpus(project, extra=[HTML_SENTENCE, MD_SENTENCE], n=10, models=models)
    h, m = 10, 11
    st = study_mod.load(project / "docs" / "study.yml")
    assert {st.sentences[h], st.sentences[m]} == {HTML_SENTENCE, MD_SENTENCE}
    assert {h, m} <= set(st.halves["test"]), "the charts and tables show the held-out half: pick other sentences"
    (project / "docs" / "bad-input.md").write_text(BAD_PAGE.format(h=h, m=m), encoding="utf-8")
    yml = (project / "mkdocs.yml").read_text(encoding="utf-8")
    (project / "mkdocs.yml").write_text(yml.replace("\nnav:\n", "\nnav:\n  - Bad input: bad-input.md\n", 1), encoding="utf-8")

    with ThreadPoolExecutor(2) as pool:
        # --local: the small corpus's numbers are a test's lock, nothing to tell readers
        accepts = list(pool.map(lambda _: run(project, "model", "accept", "--local"), range(2)))
    after_accepts = SimpleNamespace(lock=(project / LOCK).read_bytes(), tmp=list(project.rglob("*.tmp")),
                                    results=list((project / ".cache" / "results").iterdir()))
    # Empty the cache again but for the results: the builds write every other entry.
    for p in (project / ".cache").iterdir():
        if p.name not in ("results", "files"):
            shutil.rmtree(p)
    sites = [project / "site-a", project / "site-b"]
    with ThreadPoolExecutor(2) as pool:
        builds = list(pool.map(lambda d: mkdocs_build(project, "-d", str(d)), sites))
    return SimpleNamespace(project=project, h=h, m=m, accepts=accepts, after_accepts=after_accepts, builds=builds,
                           site=sites[0], other=sites[1])


def test_two_accepts_at_once_from_an_empty_cache_both_succeed(hostile):
    for proc in hostile.accepts:
        assert proc.returncode == 0, output(proc)
    assert not hostile.after_accepts.tmp
    assert len(hostile.after_accepts.results) == 1
    numbers = json.loads(hostile.after_accepts.lock)["numbers"]
    assert numbers[f"sentence.{hostile.h}"]["value"] == HTML_SENTENCE


def test_two_builds_at_once_both_succeed_and_leave_a_valid_cache(hostile):
    for proc in hostile.builds:
        assert proc.returncode == 0, output(proc)
    assert_cache_whole(hostile.project)
    kinds = {p.name for p in (hostile.project / ".cache").iterdir()}
    assert {"results", "files", "charts", "page", "vega", "notebook"} <= kinds
    page = "bad-input/index.html"
    assert (hostile.site / page).read_bytes() == (hostile.other / page).read_bytes()
    bundles = [s / "assets/javascripts/vega-bundle.js" for s in (hostile.site, hostile.other)]
    assert bundles[0].read_bytes() == bundles[1].read_bytes() and bundles[0].stat().st_size > 100_000


def test_the_sites_instrument_data_is_the_cache_entrys_own_files(hostile):
    """Hard-linked from the cache entry, not copied (~330 MB a build on the real site)."""
    published = sorted((hostile.site / "assets" / "instrument").glob("*/0.json"))
    cached = list((hostile.project / ".cache" / "files").glob("*/assets/instrument/*/0.json"))
    assert published and cached
    for path in published:
        assert any(os.path.samefile(path, c) for c in cached), f"{path} is a copy, not the cache's file"


def test_markup_in_the_corpus_is_escaped_on_every_page(hostile):
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
        shown += HTML_SENTENCE in "".join(p.text)
    assert shown >= 1, "no page shows the HTML sentence as text"
    # The search index is HTML that Material's search renders: escaped there too.
    index = json.loads((hostile.site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert not [d["location"] for d in index["docs"] if "<script>alert(1)" in d["text"] or "<b>bold" in d["text"]]


def test_markdown_in_the_corpus_is_shown_as_written(hostile):
    p = parse(hostile.site / "bad-input" / "index.html")
    assert MD_SENTENCE in "".join(p.text), "the sentence was turned into Markdown (a link, emphasis or attributes)"
    assert not [a for t, a in p.tags if t == "a" and "javascript:" in (a.get("href") or "")]
    # The table links each row to the instrument with the sentence as the link's title:
    # escaped once, not twice (a reader hovering the link reads the sentence, not entities).
    titles = {a.get("title") for t, a in p.tags if t == "a"}
    assert HTML_SENTENCE in titles and MD_SENTENCE in titles, [t for t in titles if t and "stands" in t]
    raw = (hostile.site / "bad-input" / "index.html").read_text(encoding="utf-8")
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", raw, re.S) if "stays in its cell" in r)
    assert len(re.findall(r"<td", row)) == 2, f"a pipe in the sentence split the table row: {row}"


def data_rows(node) -> list[dict]:
    """Every inline data row of a Vega-Lite spec (layers' `values`, top-level `datasets`)."""
    if isinstance(node, list):
        return [row for v in node for row in data_rows(v)]
    if not isinstance(node, dict):
        return []
    rows = [r for r in node.get("values", []) if isinstance(r, dict)] if isinstance(node.get("values"), list) else []
    rows += [r for values in node.get("datasets", {}).values() for r in values if isinstance(r, dict)]
    return rows + [row for k, v in node.items() if k not in ("values", "datasets") for row in data_rows(v)]


def test_corpus_words_ride_in_chart_data_escaped(hostile):
    page = hostile.site / "bad-input" / "index.html"
    specs = [json.loads(a["data-spec"]) for t, a in parse(page).tags if t == "div" and "data-spec" in a]
    assert specs, "no chart on the page"
    words = {row["word"] for spec in specs for row in data_rows(spec) if row.get("sentence") == hostile.h}
    assert {"<", "script", "alert"} <= words, words
    # In the HTML the spec is an attribute value: no raw angle bracket from the data.
    for attr in re.findall(r'data-spec="([^"]*)"', page.read_text(encoding="utf-8")):
        assert "<" not in attr and ">" not in attr


MARKS = "svg .mark-symbol path, svg .mark-rect path, svg .mark-line path"

# Marks the first chart point whose datum is word `word` of sentence `sentence` (a chart's
# rows name it `sentence` or `s`) with data-test-point; false if there is none.
FIND_POINT = """([word, sentence]) => {
    const walk = (node, found) => {
        const d = node.datum;
        if (node._svg && d && d.word === word && (d.sentence === sentence || d.s === sentence)) found.push(node._svg);
        (node.items || []).forEach(item => walk(item, found));
        return found;
    };
    for (const el of document.querySelectorAll('div.vega-chart')) {
        const [point] = el.__view ? walk(el.__view.scenegraph().root, []) : [];
        if (point) { point.setAttribute('data-test-point', '1'); return true; }
    }
    return false;
}"""


@pytest.mark.browser
def test_markup_in_the_corpus_is_text_in_the_browser(page, hostile):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    with serve(hostile.site) as url:
        page.goto(url + "bad-input/")
        page.wait_for_function("(sel) => [...document.querySelectorAll('div.vega-chart')].every(el => el.querySelector(sel))",
                               arg=MARKS, timeout=20_000)
        article = page.locator("article")
        assert article.get_by_text(HTML_SENTENCE, exact=True).first.is_visible()
        assert article.get_by_text(MD_SENTENCE, exact=True).first.is_visible()
        assert page.evaluate("() => [...document.querySelectorAll('article b, article script')]"
                             ".filter(e => /bold|alert/.test(e.textContent)).length") == 0
        # The chart's tooltip shows the word "<" as a character, not as markup. The point is
        # found by its datum in the chart's Vega scene graph (charts.js keeps each view; the
        # SVG renderer keeps each item's element): the marks carry no labels of their own.
        assert page.evaluate(FIND_POINT, ["<", hostile.h]), f"no chart point for the word < of sentence {hostile.h}"
        point = page.locator("[data-test-point]").first
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
        page.goto(url + f"instrument/#l6/{hostile.h}")
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(500)
        assert dialogs == [], f"a corpus sentence ran as script: {dialogs}"
        assert page.console_errors == []
        assert all(u.startswith(url) or u.split(":", 1)[0] in ("data", "blob", "about") for u in page.requests)


def test_under_serve_mkdocs_own_watcher_and_every_watch_stay_and_the_code_is_added(tmp_path):
    """on_serve keeps MkDocs' watcher and every path it and other plugins watch (a folder
    another plugin registered, the theme's), and watches the project's own code besides."""
    from types import SimpleNamespace

    from mkdocs.livereload import LiveReloadServer

    from livenumbers import loaded
    from livenumbers.events import Events

    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    observer = server.observer
    docs, other = tmp_path / "docs", tmp_path / "another-plugins-folder"
    docs.mkdir()
    other.mkdir()
    code = tmp_path / "my_source.py"
    code.write_text("X = 1\n", encoding="utf-8")
    watched = [str(docs), str(tmp_path / "mkdocs.yml"), str(other)]
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    for path in watched:
        server.watch(path)
    sys.path.insert(0, str(tmp_path))
    try:
        __import__("my_source")
        loaded.of(tmp_path).note()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("my_source", None)
    events = Events(lambda c: None)
    events.settings = SimpleNamespace(docs_dir=docs, root=tmp_path)
    assert events.on_serve(server, SimpleNamespace(), builder=None) is server
    assert server.observer is observer
    assert set(watched) | {str(code.resolve())} == set(server._watch_refs)
    # A save to docs/ makes MkDocs' own watcher look at once, and it alone reports the change
    # (its event queue), once; reading a page reports nothing.
    observer.start()
    try:
        time.sleep(0.3)   # the emitters' first snapshots
        seen = []
        page = docs / "index.md"
        # Saved whole, as an editor saves (written beside, then renamed into place): a file
        # written in place can be seen half-written, then whole, and so reported twice when the
        # machine is loaded (CI saw it), by MkDocs' poll alone as by a look at once.
        staged = Path(tempfile.mkdtemp(dir=tmp_path.parent)) / "index.md"
        staged.write_text("x\n", encoding="utf-8")
        t0 = time.monotonic()
        os.replace(staged, page)
        while not server._want_rebuild and time.monotonic() - t0 < 5:
            time.sleep(0.005)
        seen.append(time.monotonic() - t0)
        assert server._want_rebuild and seen[0] < 0.3, seen   # MkDocs' poll alone: up to half a second
        server._want_rebuild = False
        time.sleep(0.8)
        assert not server._want_rebuild                       # once: its poll found nothing new
        page.read_text(encoding="utf-8")
        time.sleep(0.8)
        assert not server._want_rebuild
    finally:
        observer.stop()
        events.listener.stop()


def test_under_serve_an_installed_themes_folders_are_listed_once_and_a_projects_every_build(tmp_path):
    """livenumbers/theme_cache.py: the listing MkDocs makes of the theme on every build is the
    same, but an installed folder's part is read once per server; a file added to the
    project's own theme folder (custom_dir) is listed at the next build."""
    import jinja2

    from livenumbers import theme_cache

    installed = tmp_path / "venv" / "lib" / "site-packages" / "a_theme"
    own = tmp_path / "overrides"
    for folder, names in ((installed, ("main.html", ".icons/x.svg", "assets/a.css")), (own, ("main.html",))):
        for name in names:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("x", encoding="utf-8")

    class Theme:   # as mkdocs.theme.Theme makes its environment: a loader over its folders
        def get_env(self):
            return jinja2.Environment(loader=jinja2.FileSystemLoader([str(own), str(installed)]))

    kept = theme_cache.ListedOnce()

    def listing() -> list[str]:
        theme = Theme()   # each build makes its own theme
        kept.keep_listings(theme)
        env = theme.get_env()
        plain = jinja2.FileSystemLoader([str(own), str(installed)]).list_templates()
        return env.list_templates(), plain

    first, plain = listing()
    assert first == plain == [".icons/x.svg", "assets/a.css", "main.html"]
    (installed / "assets" / "b.css").write_text("x", encoding="utf-8")   # a package never changes under serve
    (own / "extra.css").write_text("x", encoding="utf-8")                # the project's folder may
    second, plain = listing()
    assert second == [".icons/x.svg", "assets/a.css", "extra.css", "main.html"]
    assert "assets/b.css" in plain


def test_under_serve_what_the_saves_keep_is_frozen_once_per_inputs_and_the_last_ones_garbage_collected(monkeypatch):
    """livenumbers/events.py `_freeze`: under `mkdocs serve` the objects the gate keeps (the
    results, the renderer) leave the cyclic collector's sight after the build that made them,
    so a save's full collection does not walk them again; a build on the same inputs freezes
    nothing, and on new inputs what the last freeze kept and is now garbage is collected.
    (Freezes are counted by call: the frozen generation's size also drops when another
    thread of the test process frees a frozen object by its reference count.)"""
    import gc
    import weakref

    from livenumbers import events as module
    from livenumbers.events import Events

    class Node:   # a cycle: only the cyclic collector frees it
        def __init__(self):
            self.me = self

    freezes = []
    monkeypatch.setattr(module, "_freeze", lambda real=module._freeze: (freezes.append(1), real()))
    events = Events(lambda c: None)
    events.serve = True
    try:
        old = Node()
        gone = weakref.ref(old)
        events.kept.inputs = ("results", 1)
        events.on_post_build(None)
        assert len(freezes) == 1 and gc.get_freeze_count() > 0 and events.frozen is events.kept.inputs
        del old
        gc.collect()
        assert gone() is not None                   # frozen: out of the collector's sight
        events.on_post_build(None)                  # a save on the same inputs
        assert len(freezes) == 1
        events.kept.inputs = ("results", 2)         # new results: a new renderer, frozen in turn
        events.on_post_build(None)
        assert len(freezes) == 2
        assert gone() is None                       # the last freeze's garbage collected first
        assert events.frozen is events.kept.inputs
    finally:
        gc.unfreeze()
