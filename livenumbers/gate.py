"""The drift gate: fresh results, every page rendered, compared with the numbers lock.

One function, `run`, serves both the MkDocs hooks and `python -m model check`, so the
gate holds even when the site is built by a tool that ignores hooks. It fails (in the
report, never half-way) on: a cited number that moved beyond its tolerance, a cited
number absent from the lock, a locked number no page cites, and a claim that no longer
holds; and on a registered settings block changed with no amendment saying why, or a
page citing numbers read under an amended one without stating it (livenumbers/registration.py).
Page errors (unknown key, bad format, syntax, a link to a row the instrument does
not have) are collected over every page and raised together, as one `PageError`.
"""
from __future__ import annotations

import fnmatch
import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import cache, config, formats, here, i18n, loaded, lock, printed, progress, registration, timing, updates
from .buildinfo import BuildInfo
from .markup import Renderer
from .problems import PageError, Problem
from .rendered import Citation, Claim, Rendered
from .references import Bibliography
from .report import Drift, Fragile, Report, Reprinted
from .source import Source

log = logging.getLogger("mkdocs.plugins.live_numbers.gate")

ENGINE_CODE = Path(__file__).parent


@dataclass(frozen=True)
class Settings:
    """What the engine reads of a project: made from its mkdocs.yml by livenumbers/project.py
    (`project.settings`), for the plugin, a site's hooks and every command alike."""
    docs_dir: Path
    lock: Path
    cache_dir: Path
    source: Source = field(compare=False, repr=False)
    bibliography: Path | None = None   # the BibTeX file pages cite works from (it may not exist)
    languages: i18n.Languages = i18n.Languages()   # the editions, the default first (mkdocs-static-i18n)
    translations: Path | None = None  # the folder of the site's catalogues (fr.yml): its tables' and charts' words
    registered: registration.Declared | None = None   # the settings blocks fixed in advance (the `registered:` option)
    config_file: Path | None = None   # the project's mkdocs.yml
    exclude: tuple[str, ...] = ()     # pages the engine leaves alone (fnmatch patterns, from docs/)
    templated_after: bool = False     # another plugin (mkdocs-macros) renders the pages' templates after the engine

    @property
    def root(self) -> Path | None:
        """The project's folder (its mkdocs.yml's)."""
        return self.config_file.parent if self.config_file is not None else None

    def pages(self) -> list[str]:
        """Every page that may cite numbers, relative to docs/, sorted: but those excluded."""
        return [p for p in pages(self.docs_dir) if not any(fnmatch.fnmatchcase(p, pattern) for pattern in self.exclude)]


def site_code(source: Source, root: Path | None = None) -> str:
    """The version of the code that turns results into pages: the engine's and the
    source's page-side code (its tables and charts), and the code of the project in folder
    `root` as this process loaded it (livenumbers/loaded.py: never the disk's, which an
    edit under `mkdocs serve` may have moved on). Pages render again when it changes."""
    loaded_code = [loaded.of(root).digest()] if root is not None else []
    return cache.key(cache.code_digest(ENGINE_CODE), *(cache.code_digest(d) for d in source.code_dirs), *loaded_code)


def results_key(settings: Settings) -> str:
    """The results' cache key: a digest of what they depend on (`Source.inputs`)."""
    return cache.key(settings.source.inputs())


def load_results(settings: Settings, inputs=None) -> tuple[dict, str]:
    """(results, key): from memory, the disk cache, or the source's computation, which
    also writes the files published with them (`files_dir`) as an entry of its own.
    `inputs`: the source's, if the caller has read them (they are read once per build).
    If the project's code changed on disk since this process loaded it, the results are
    computed in a fresh process, which loads the code on disk: results are never cached
    under a key read off code other than the code that computed them."""
    key = cache.key(settings.source.inputs() if inputs is None else inputs)
    results = cache.load_json(settings.cache_dir, "results", key)
    if results is None or cache.read(settings.cache_dir, "files", key) is None:
        changed = loaded.of(settings.root).changed() if settings.root is not None else []
        if changed:
            log.info("the project's code changed on disk since it was loaded (%s): its results are computed "
                     "in a fresh process", ", ".join(p.name for p in changed))
            return _computed_afresh(settings)
        started = time.perf_counter()
        with progress.watching(f"computing the results of {settings.source.name}", settings.cache_dir) as watch:
            results, files = settings.source.compute()
        bad = cache.not_json(results)
        if bad:   # nothing is cached, nothing published
            raise config.ConfigError(f"the results of {settings.source.name} hold what JSON cannot carry at {bad}")
        cache.write(settings.cache_dir, "files", key, files)
        here.keep(settings.cache_dir, key, time.perf_counter() - started, dict(watch.spent))
        results = cache.store_json(settings.cache_dir, "results", key, results)
        log.info("results %s (computed)", key[:12])
    return results, key


_AFRESH = ("import sys; from pathlib import Path; from livenumbers import gate, project; "
           "print(gate.load_results(project.settings_at(Path(sys.argv[1])))[1])")


def _computed_afresh(settings: Settings) -> tuple[dict, str]:
    """(results, key) as a new process computes them, into the same cache: its code is the
    code on disk, and so is the key its source's inputs read."""
    env = os.environ | {"LIVE_NUMBERS_CACHE": str(settings.cache_dir)}
    done = subprocess.run([sys.executable, "-c", _AFRESH, str(settings.config_file)], env=env, stdout=subprocess.PIPE,
                          text=True, cwd=settings.root)
    if done.returncode != 0:
        raise config.ConfigError(f"computing the results of {settings.source.name} in a fresh process failed "
                                 f"(its error is above)")
    key = done.stdout.strip().splitlines()[-1]
    return cache.load_json(settings.cache_dir, "results", key), key


def files_dir(settings: Settings, key: str) -> Path:
    """The folder of the files computed with the results (written by `load_results`)."""
    folder = cache.read(settings.cache_dir, "files", key)
    if folder is None:
        load_results(settings)  # computes again: the entry went missing
        folder = cache.read(settings.cache_dir, "files", key)
    return folder


def load_charts(settings: Settings, results: dict, results_key: str, part: str = "specs",
                code: str | None = None) -> dict:
    """Every chart's Vega-Lite spec (or with part="sources", the results entries each was
    drawn from), cached by results, page-side code (`code`, if the caller has read it) and
    Altair's version."""
    from importlib import metadata

    charts = settings.source.charts
    if charts is None:
        return {}
    code = site_code(settings.source, settings.root) if code is None else code
    key = cache.key("charts", results_key, code, metadata.version("altair"))
    return cache.get_json(settings.cache_dir, "charts", key, lambda: charts.build_all(results))[0][part]


def pages(docs_dir: Path) -> list[str]:
    """Every page that may cite numbers, relative to docs/, sorted."""
    found = [p for ext in ("*.md", "*.ipynb") for p in docs_dir.rglob(ext)]
    return sorted(p.relative_to(docs_dir).as_posix() for p in found)


def notebook_cells(path: Path) -> list[tuple[int, str]]:
    """(cell index, source) of a notebook's markdown cells."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [
        (i, "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
        for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"
    ]


@dataclass
class Kept:
    """What one gate run keeps for the next (the plugin's, across `mkdocs serve` rebuilds):
    the renderer, the inputs it was made for and the lock it read; a digest of each page's
    citations and claims, the pages as updates.finish ended them, and what the comparison with
    the lock found: it is made again only if a citation or a claim changed."""
    inputs: tuple | None = None
    renderer: Renderer | None = None
    locked: lock.Lock | None = None
    cites: dict[str, str] = field(default_factory=dict)    # a page's cache key -> its citations' and claims' digest
    finished: dict = field(default_factory=dict)           # the pages as updates.finish ended them
    compared: tuple = ()                                   # (the pages' citations and claims, what _compare set)


@timing.stage("gate")
def run(settings: Settings, with_charts: bool = True, mark_numbers: bool = False, kept: Kept | None = None) -> Report:
    """Every page rendered against fresh results and compared with the lock. Every page's
    problems are collected; if any page has one, `PageError` carries them all. With
    `mark_numbers` (`mkdocs serve` only) cited numbers carry marks for their hover details.
    `kept`: what the last run kept (its renderer, reused while its inputs stay)."""
    kept = Kept() if kept is None else kept
    inputs = settings.source.inputs()
    code = site_code(settings.source, settings.root)   # read once: every page's and chart's cache key holds it
    results, key = load_results(settings, inputs)
    charts = load_charts(settings, results, key, code=code) if with_charts else {}
    sources = load_charts(settings, results, key, "sources", code) if with_charts and mark_numbers else {}
    # As the lock will hold it (JSON: a tuple is a list), so that "what changed" is what changed.
    report = Report(results=results, results_key=key, charts=charts, provenance=json.loads(json.dumps(inputs, default=str)),
                    margin_floor=float(settings.source.margin_floor(results)))

    def chart_spec(chart_id: str) -> dict:
        if with_charts and chart_id not in charts:
            raise formats.NumberError(f"unknown chart {chart_id!r}" + formats.did_you_mean(chart_id, list(charts))
                                      + f" (charts: {', '.join(sorted(charts))})")
        return charts.get(chart_id, {})

    lock_digest = cache.key(_text(settings.lock))
    catalogue = i18n.Catalogue.read(settings.translations, settings.languages)
    words = [catalogue.text(lang) for lang in settings.languages.others]
    timings = here.read(settings.cache_dir, key)
    report.inputs_key = cache.key(key, lock_digest, cache.key(_text(settings.bibliography)), settings.languages.codes, words,
                                  settings.registered, settings.templated_after, timings)
    # One renderer while the results, the lock and the bibliography stay (`mkdocs serve`
    # renders a saved page again with the one before: its tables and charts are reused).
    # (The source's class, not the object: `mkdocs serve` makes a new one on each save.)
    same = (report.inputs_key, id(results), type(settings.source), code, with_charts, mark_numbers,
            settings.lock, settings.bibliography)
    if kept.inputs != same:
        locked = lock.read(settings.lock)
        blocks = settings.registered.blocks if settings.registered else ()
        kept.inputs, kept.locked, kept.cites, kept.finished, kept.compared = same, locked, {}, {}, ()
        kept.renderer = Renderer(settings.source, results, chart_spec, locked.numbers, chart_sources=sources,
                                 bibliography=Bibliography(settings.bibliography), languages=settings.languages,
                                 catalogue=catalogue, registrations={b: locked.registrations.get(b) for b in blocks},
                                 templated_after=settings.templated_after, timings=timings, history=locked.history)
    renderer, locked = kept.renderer, kept.locked
    renderer.chart_spec = chart_spec
    report.numbers, report.locked = renderer.numbers, locked.numbers
    cites: dict[str, str] = {}   # this run's pages, by cache key: kept for the next
    render = _render_memo(settings.cache_dir, report.inputs_key, with_charts, renderer, code, kept.cites, cites)
    build = BuildInfo(settings.docs_dir, settings.lock,   # after the cache: they change with every commit
                      locked.history[-1].date if locked.history else None)
    rendered_all, problems = [], []
    all_pages = settings.pages()
    for page in all_pages:
        path = settings.docs_dir / page
        try:
            if page.endswith(".ipynb"):
                cells = {}
                for index, source in notebook_cells(path):
                    try:
                        # Never marked: the executed copy is keyed by its cells' text.
                        out = render(page, source, f"cell{index}", False)
                    except PageError as exc:
                        problems += [Problem(p.page, p.line, f"{p.message} (markdown cell {index})") for p in exc.problems]
                        continue
                    cells[index] = out.text = build.fill(out.text)
                    rendered_all.append(out)
                report.notebook_cells[page] = cells
            else:
                report.sources[page] = text = path.read_text(encoding="utf-8")
                out = render(page, text, "", mark_numbers)
                report.rendered[page] = out.text = build.fill(out.text)
                report.citations[page] = out.citations
                rendered_all.append(out)
        except PageError as exc:
            problems += exc.problems
    problems += [Problem(*p) for p in i18n.editions_agree(settings.languages, rendered_all, all_pages)
                 + i18n.unbuilt_editions(settings.languages, all_pages)]
    registered_now = registration.read(settings.docs_dir, settings.registered)
    problems += [Problem(*p) for p in registration.unstated(rendered_all, settings.source.registered_keys(results),
                                                            registered_now)]
    if problems:
        raise PageError(problems)
    updates.finish(report, rendered_all, locked.history, settings.languages, catalogue, build,   # after the cache too
                   kept.finished)
    for out in rendered_all:
        report.routes.setdefault(out.page, set()).update(out.routes)
    compared = tuple(cites.values())
    if kept.compared and kept.compared[0] == compared:   # the same citations and claims, on the same inputs
        for name, value in kept.compared[1].items():
            setattr(report, name, value.copy())
    else:
        _compare(report, rendered_all, renderer.numbers, locked, settings.languages)
        kept.compared = (compared, {name: getattr(report, name).copy() for name in COMPARED})
    kept.cites = cites
    report.registrations = registration.check(registered_now, locked.registrations)
    return report


def _text(path: Path | None) -> str:
    return path.read_text(encoding="utf-8") if path is not None and path.is_file() else ""


def _render_memo(cache_dir: Path, inputs_key: str, with_charts: bool, renderer: Renderer, code: str,
                 kept: dict[str, str], cites: dict[str, str]):
    """`renderer.render`, with each page's output (text, citations, claims, links) cached:
    a prose edit re-renders the edited page only (Jinja compiles every page and every
    claim afresh otherwise). Keyed by the results, the lock and the bibliography
    (`inputs_key`), the site code, Jinja2, MarkupSafe, Altair, pybtex, the page's source and
    whether numbers are marked. Each page's citations and claims are digested into `cites`, in
    the pages' order (from `kept`, the last run's digests, where the page is unchanged)."""
    from dataclasses import astuple
    from importlib import metadata


    versions = [metadata.version(d) for d in ("jinja2", "markupsafe", "altair", "pybtex")]
    base = cache.key("page", inputs_key, with_charts, versions, code)

    def render(page: str, source: str, part: str, mark_numbers: bool) -> Rendered:
        def compute() -> dict:
            out = renderer.render(page, source, mark_numbers)
            return {"text": out.text, "citations": [astuple(c) for c in out.citations],
                    "claims": [astuple(c) for c in out.claims], "routes": out.routes, "works": out.works,
                    "calls": out.calls}

        key = cache.key(base, page, part, mark_numbers, source)
        hit, _ = cache.get_json(cache_dir, "page", key, compute)   # in memory after its first read
        cites[key] = kept.get(key) or cache.key(page, part, hit["citations"], hit["claims"])   # what _compare reads
        claims = [Claim(e, p, line, holds, tuple(tuple(r) for r in reads)) for e, p, line, holds, reads in hit["claims"]]
        return Rendered(page, hit["text"], [Citation(*c) for c in hit["citations"]], claims, list(hit["routes"]),
                        works=list(hit["works"]), calls=list(hit["calls"]))

    return render


def _discrete(value) -> bool:
    return isinstance(value, (bool, int, str))


# What _compare sets on the report (from the citations, the claims, the numbers and the lock).
COMPARED = ("all_citations", "fresh", "cited", "failed_claims", "fragile", "undecided", "unlocked", "drifts",
            "reprinted", "uncited", "provenance_changes")


def _compare(report: Report, rendered, fresh_numbers: dict, locked: lock.Lock, languages: i18n.Languages) -> None:
    report.all_citations = [(lang, c) for out in rendered for lang in (languages.of(out.page),) for c in out.citations]
    of_record = {k: e.value for k, e in locked.numbers.items() if k in report.numbers and not lock.moved(e, report.numbers[k])}
    report.fresh = fresh_entries(report.all_citations, fresh_numbers, report.margin_floor, recorded=of_record)
    for out in rendered:
        for c in out.citations:
            report.cited.setdefault(c.key, set()).add(c.page)
        report.failed_claims += [c for c in out.claims if not c.holds]
    floor = report.margin_floor
    # A pick of a word, a head, a row (a value turning would change beyond any rounding) is
    # fragile if its margin is below the floor here: no format prints both outcomes alike.
    # Counts and shares near a tie are printed so that either outcome prints the same (accept's
    # steady formats, printed.py), and a reader's build compares what is printed.
    report.fragile = fragile(report, fresh_numbers, floor)
    report.undecided = undecided(report, fresh_numbers)
    for key in sorted(report.cited):
        if key not in locked.numbers:
            report.unlocked.append(key)
            continue
        entry = locked.numbers[key]
        if lock.moved(entry, fresh_numbers[key]):
            report.drifts.append(Drift(key, entry.value, fresh_numbers[key], entry.tolerance, sorted(report.cited[key])))
        for where, text in sorted(report.fresh[key].printed.items()):
            if entry.printed.get(where) != text:
                report.reprinted.append(Reprinted(key, where, entry.printed.get(where), text, sorted(report.cited[key])))
    report.uncited = sorted(set(locked.numbers) - set(report.cited))
    report.provenance_changes = lock.provenance_changes(locked.provenance, report.provenance)


def fresh_entries(citations, fresh_numbers, floor: float, steady: bool = False,
                  recorded: dict | None = None) -> dict[str, lock.Locked]:
    """What the lock would hold for each cited key: its value, the tightest tolerance of the
    formats it is printed in, the margin of the decision behind it where turning could move it
    past that tolerance, and what each (language, format) prints. With `steady` (accept), a
    citation whose text another machine's rounding could change prints the value of record
    instead, to within its noise (printed.py), recorded in `shown`; a citation that cannot be
    so printed keeps its page's format (accept then refuses)."""
    margin_of = getattr(fresh_numbers, "margin", lambda key: None)
    recorded = recorded or {}   # key -> the value the lock will hold (a stated tolerance prints it)
    tightest: dict[str, float] = {}
    explicit: set[str] = set()   # cited with ~TOL somewhere: the author declared it noise
    texts: dict[str, dict[str, str]] = {}
    shown: dict[str, dict[str, str]] = {}
    for language, c in citations:
        value = fresh_numbers[c.key]
        fmt = c.fmt
        if steady:
            fmt = printed.steady_format(value, c.requested, margin_of(c.key), floor) or c.requested
            if fmt != c.requested:
                shown.setdefault(c.key, {})[c.requested] = fmt
        tol = formats.tolerance(fmt, value)
        tightest[c.key] = min(tol, tightest.get(c.key, tol))
        if formats.parse_format(fmt)[2] is not None:
            explicit.add(c.key)
        texts.setdefault(c.key, {})[printed.slot(language, fmt)] = formats.format_value(
            c.key, recorded.get(c.key, value) if printed.stated(fmt) else value, fmt, language)
    out = {}
    for key in sorted(tightest):
        found = margin_of(key) if key not in explicit else None
        margin = float(f"{found[0]:.3g}") if found is not None and found[1] > tightest[key] and found[0] < float("inf") else None
        out[key] = lock.Locked(fresh_numbers[key], tightest[key], margin, texts[key], shown.get(key, {}))
    return out


def fragile(report: Report, fresh_numbers, floor: float) -> list[Fragile]:
    """Cited picks whose value would change past any rounding if they turned (their step is
    unbounded: a word, a head) and whose margin is below the floor."""
    margin_of = getattr(fresh_numbers, "margin", lambda key: None)
    found = []
    for key in sorted(report.cited):
        m = margin_of(key)
        if m is not None and m[1] == float("inf") and m[0] < floor:
            found.append(Fragile(key, float(f"{m[0]:.3g}"), floor, sorted(report.cited[key])))
    return found


def undecided(report: Report, fresh_numbers) -> dict[str, list[str]]:
    """Cited discrete numbers (counts, picks, verdicts, words) whose source keeps margins but
    records none for them, nor declares them exact by construction."""
    declared = getattr(fresh_numbers, "declared", None)
    if declared is None:   # a source that keeps no margins: nothing to hold it to
        return {}
    return {key: sorted(pages) for key, pages in report.cited.items()
            if _discrete(fresh_numbers[key]) and not declared(key)}
