"""The drift gate: fresh results, every page rendered, compared with the numbers lock.

One function, `run`, serves both the MkDocs hooks and `python -m model check`, so the
gate holds even when the site is built by a tool that ignores hooks. It fails (in the
report, never half-way) on: a cited number that moved beyond its tolerance, a cited
number absent from the lock, a locked number no page cites, and a claim that no longer
holds. Page errors (unknown key, bad format, syntax) raise `PageError` at once.
"""
from __future__ import annotations

import gc
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import results as results_mod
from .. import study as study_mod
from .. import weights as weights_mod
from . import cache, lock, numbers
from .pages import Claim, PageError, Renderer
from .files import write_atomic

log = logging.getLogger("mkdocs.plugins.instrument.gate")


@dataclass(frozen=True)
class Settings:
    docs_dir: Path
    study: Path
    lock: Path
    cache_dir: Path

    @classmethod
    def at(cls, root: Path, docs_dir: str = "docs", study: str = "study.yml",
           lock_file: str = "numbers.lock.json", cache_dir: str = ".cache") -> "Settings":
        docs = (root / docs_dir).resolve()
        return cls(docs, docs / study, docs / lock_file, (root / cache_dir).resolve())


# In-process memo: under `mkdocs serve` the hook module lives across rebuilds, so a
# prose edit reuses results without even reading the disk cache.
_MEMO: dict[str, Any] = {}


_SHA_FILE = "weights-sha256.json"


def _weights_shas(cache_dir: Path, save: bool = False) -> None:
    """Keep `weights.sha256_of`'s in-process memo of weights digests on disk between builds.

    Hashing the weights files costs ~0.15 s a build (160 MB); a warm build should not
    pay it. An entry is reused only while the file's size, mtime, ctime and inode are
    all unchanged (ctime cannot be set back by hand), so a replaced file is re-hashed.
    """
    memo = weights_mod._SHA_MEMO
    path = cache_dir / _SHA_FILE

    def stamp(p: str):
        try:
            st = os.stat(p)
        except OSError:
            return None
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    try:
        if not save:
            for p, (size, mtime, ctime, ino, sha) in json.loads(path.read_text(encoding="utf-8")).items():
                if stamp(p) == [size, mtime, ctime, ino]:
                    memo.setdefault((p, size, mtime), sha)
            return
        known = {p: [*now, sha] for (p, size, mtime), sha in memo.items()
                 if (now := stamp(p)) is not None and now[:2] == [size, mtime]}
        if path.is_file() and json.loads(path.read_text(encoding="utf-8")) == known:
            return
        write_atomic(path, json.dumps(known, sort_keys=True))
    except (OSError, ValueError, TypeError, AttributeError):
        return  # a memo, never a source of truth: without it the files are hashed


def load_results(settings: Settings, views: bool = True) -> tuple[dict, str]:
    """(results, cache key): from memory, the disk cache, or a fresh measurement.

    views=False: the results without each model's `views` (the instrument's per-head
    data, ~2/3 of the entry, read only to publish the instrument's files), kept as an
    entry of their own so a warm build does not parse them. The pages and the gate use
    these; `Report.full_results()` gets the rest when it is needed.
    """
    study = study_mod.load(settings.study)
    _weights_shas(settings.cache_dir)
    key = results_mod.cache_key(results_mod.provenance(study))
    _weights_shas(settings.cache_dir, save=True)
    if not views and ("results", key) not in _MEMO:
        if ("slim", key) not in _MEMO:
            slim = cache.read(settings.cache_dir, "results-slim", key)
            # Never the slim entry alone: a gate run leaves the full entry in place, as before.
            if slim is None or not cache.entry_path(settings.cache_dir, "results", key).is_file():
                slim = results_mod.without_views(load_results(settings)[0])
                cache.write(settings.cache_dir, "results-slim", key, slim)
            _MEMO[("slim", key)] = slim
        return _MEMO[("slim", key)], key
    if ("results", key) not in _MEMO:
        payload, hit = cache.get(settings.cache_dir, "results", key, lambda: _measure(settings.study))
        log.info("results %s (%s)", key[:12], "from cache" if hit else "computed")
        _MEMO[("results", key)] = payload
    full = _MEMO[("results", key)]
    return (full if views else results_mod.without_views(full)), key


def _measure(study_path: Path) -> dict:
    """`results.measure` with the cyclic garbage collector paused: the measurement makes
    millions of small objects and next to no cycles (about a hundred), and the
    collector's passes over them cost ~0.3 s of a cold build. The next pass collects those."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return results_mod.measure(study_path)
    finally:
        if enabled:
            gc.enable()


def load_charts(settings: Settings, results: dict, results_key: str) -> dict[str, dict]:
    """Every chart's Vega-Lite spec, cached by results and chart code."""
    import hashlib
    from importlib import metadata

    from . import charts

    key = hashlib.sha256(
        f"{results_key}:{charts.code_digest()}:{metadata.version('altair')}".encode()
    ).hexdigest()
    if ("charts", key) not in _MEMO:
        _MEMO[("charts", key)], _ = cache.get(settings.cache_dir, "charts", key, lambda: charts.build_all(results))
    return _MEMO[("charts", key)]


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
class Drift:
    key: str
    recorded: Any
    now: Any
    tolerance: float
    pages: list[str]


@dataclass
class Report:
    results: dict          # without the models' `views` (see load_results); full_results() has them
    results_key: str
    charts: dict[str, dict]
    rendered: dict[str, str] = field(default_factory=dict)                  # page -> text
    notebook_cells: dict[str, dict[int, str]] = field(default_factory=dict)  # page -> cell -> text
    cited: dict[str, set[str]] = field(default_factory=dict)                # key -> pages
    fresh: dict[str, lock.Locked] = field(default_factory=dict)             # what accept would write
    drifts: list[Drift] = field(default_factory=list)
    unlocked: list[str] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)
    failed_claims: list[Claim] = field(default_factory=list)
    provenance_changes: list[str] = field(default_factory=list)
    settings: Settings | None = None

    def full_results(self) -> dict:
        """The results with every model's per-head `views` (the instrument's data)."""
        if self.settings is None or all("views" in m for m in self.results["models"].values()):
            return self.results
        return load_results(self.settings)[0]

    @property
    def ok(self) -> bool:
        return not (self.drifts or self.unlocked or self.uncited or self.failed_claims)

    def pages_with_drift(self) -> dict[str, list[Drift]]:
        out: dict[str, list[Drift]] = {}
        for d in self.drifts:
            for page in d.pages:
                out.setdefault(page, []).append(d)
        return out

    def message(self, lock_path: Path) -> str:
        lines = []
        if self.drifts:
            lines.append(f"{len(self.drifts)} published number(s) moved beyond their tolerance:")
            for d in self.drifts:
                lines.append(
                    f"  {d.key}: recorded {d.recorded!r}, now {d.now!r} (tolerance {d.tolerance:g}); "
                    f"cited by {', '.join(d.pages)}"
                )
            if self.provenance_changes:
                lines.append("  what changed since the lock was written:")
                lines += [f"    {c}" for c in self.provenance_changes]
        if self.unlocked:
            lines.append(f"{len(self.unlocked)} cited number(s) are not in {lock_path.name}:")
            lines += [f"  {k} (cited by {', '.join(sorted(self.cited[k]))})" for k in self.unlocked[:20]]
            if len(self.unlocked) > 20:
                lines.append(f"  ... and {len(self.unlocked) - 20} more")
        if self.uncited:
            lines.append(f"{len(self.uncited)} locked number(s) are cited by no page:")
            lines += [f"  {k}" for k in self.uncited[:20]]
        if self.failed_claims:
            lines.append(f"{len(self.failed_claims)} claim(s) no longer hold:")
            lines += [f"  {c.page}:{c.line}: {c.expr}" for c in self.failed_claims]
        if self.drifts or self.unlocked or self.uncited:
            lines.append("If the new values are right, run `make accept` and commit the lock with the reason.")
        return "\n".join(lines)


def run(settings: Settings, with_charts: bool = True) -> Report:
    results, key = load_results(settings, views=False)
    charts = load_charts(settings, results, key) if with_charts else {}
    report = Report(results=results, results_key=key, charts=charts, settings=settings)

    def chart_spec(chart_id: str) -> dict:
        if with_charts and chart_id not in charts:
            raise numbers.NumberError(f"unknown chart {chart_id!r}; known: {', '.join(sorted(charts))}")
        return charts.get(chart_id, {})

    renderer = Renderer(results, chart_spec)
    render = _render_memo(settings.cache_dir, key, with_charts, renderer)
    rendered_all = []
    for page in pages(settings.docs_dir):
        path = settings.docs_dir / page
        if page.endswith(".ipynb"):
            cells = {}
            for index, source in notebook_cells(path):
                try:
                    out = render(page, source, f"cell{index}")
                except PageError as exc:
                    raise PageError(f"{exc} (markdown cell {index})") from None
                cells[index] = out.text
                rendered_all.append(out)
            report.notebook_cells[page] = cells
        else:
            out = render(page, path.read_text(encoding="utf-8"), "")
            report.rendered[page] = out.text
            rendered_all.append(out)
    _compare(report, rendered_all, renderer.numbers, settings.lock)
    return report


def _render_memo(cache_dir: Path, results_key: str, with_charts: bool, renderer: Renderer):
    """`renderer.render`, with each page's output (text, citations, claims) kept in the
    cache: a prose edit re-renders the edited page only (Jinja compiles every page and
    every claim afresh, ~0.5 s for the site). One entry per page, overwritten when the
    page changes; it is used only for the same source, the same results, the same site
    code (model/site/*.py) and the same Jinja2, MarkupSafe and Altair."""
    import hashlib
    from dataclasses import astuple
    from importlib import metadata

    from .pages import Citation, Rendered

    h = hashlib.sha256(f"{results_key}\0{with_charts}\0".encode())
    for dist in ("jinja2", "markupsafe", "altair"):
        h.update(f"{dist}={metadata.version(dist)}\0".encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    base = h.hexdigest()

    def render(page: str, source: str, part: str) -> Rendered:
        key = hashlib.sha256(f"{base}\0{page}\0{part}".encode()).hexdigest()
        digest = hashlib.sha256(source.encode()).hexdigest()
        hit = cache.read(cache_dir, "page", key)
        if isinstance(hit, dict) and hit.get("source") == digest:
            return Rendered(page, hit["text"], [Citation(*c) for c in hit["citations"]],
                            [Claim(*c) for c in hit["claims"]])
        out = renderer.render(page, source)
        cache.write(cache_dir, "page", key, {
            "source": digest, "text": out.text,
            "citations": [astuple(c) for c in out.citations], "claims": [astuple(c) for c in out.claims],
        })
        return out

    return render


def _compare(report: Report, rendered, fresh_numbers: dict, lock_path: Path) -> None:
    tightest: dict[str, float] = {}
    for out in rendered:
        for c in out.citations:
            report.cited.setdefault(c.key, set()).add(c.page)
            tol = numbers.tolerance(c.fmt, fresh_numbers[c.key])
            tightest[c.key] = min(tol, tightest.get(c.key, tol))
        report.failed_claims += [c for c in out.claims if not c.holds]
    report.fresh = {k: lock.Locked(fresh_numbers[k], tightest[k]) for k in sorted(tightest)}
    locked = lock.read(lock_path)
    for key in sorted(report.cited):
        if key not in locked.numbers:
            report.unlocked.append(key)
        elif lock.moved(locked.numbers[key], fresh_numbers[key]):
            entry = locked.numbers[key]
            report.drifts.append(Drift(key, entry.value, fresh_numbers[key], entry.tolerance, sorted(report.cited[key])))
    report.uncited = sorted(set(locked.numbers) - set(report.cited))
    report.provenance_changes = lock.provenance_changes(locked.provenance, report.results["provenance"])


def accept(settings: Settings) -> str:
    """Rewrite the lock from fresh results; returns the diff, one line per change."""
    report = run(settings, with_charts=False)
    old = lock.read(settings.lock).numbers
    new = report.fresh
    diff = []
    for key in sorted(set(old) | set(new)):
        if key not in new:
            diff.append(f"- {key}: {old[key].value!r} (no longer cited)")
        elif key not in old:
            diff.append(f"+ {key}: {new[key].value!r} (tolerance {new[key].tolerance:g})")
        elif old[key] != new[key]:
            diff.append(f"~ {key}: {old[key].value!r} -> {new[key].value!r} (tolerance {new[key].tolerance:g})")
    lock.write(settings.lock, new, report.results["provenance"])
    if report.failed_claims:
        diff.append("Claims that do not hold (the lock cannot fix these; fix the prose or the cause):")
        diff += [f"  {c.page}:{c.line}: {c.expr}" for c in report.failed_claims]
    return "\n".join(diff) if diff else "no change"
