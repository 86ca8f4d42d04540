"""The site as plain files: what the engine adds to a build, and a whole project without it.

One code path for three consumers, so their outputs cannot diverge:
- the MkDocs events (hooks or plugin) add `generated_files` (and the executed notebooks)
  to a build and replace each page's Markdown by the gate's rendering;
- `write_tree` (a source's `render OUT`) writes the same pages, files and notebooks into
  OUT as plain files, with an `mkdocs.yml` that runs no engine: any builder that reads
  `mkdocs.yml` (plain MkDocs, Zensical) publishes the same numbers;
- a benchmark's plain build is such a tree.

`leftover_markup` reads a built site (whatever built it) for live markup that reached a
reader unrendered: the failure a builder that ignores hooks and plugins produces silently.
"""
from __future__ import annotations

import html.parser
import logging
import re
import shutil
import tempfile
import urllib.parse
from pathlib import Path

from . import config, gate, notebook, published
from .errors import UserError
from .markup import FUNCTIONS

log = logging.getLogger("mkdocs.plugins.live_numbers.render")

MARKER = "RENDERED.md"   # in OUT: says what wrote the tree; a folder without it is never replaced


class RenderError(UserError, RuntimeError):
    """Nothing was written: the gate failed, or OUT is not a folder `render` may replace."""


# -- what the engine adds ---------------------------------------------------------------------------

def generated_files(settings: gate.Settings, report: gate.Report) -> dict[str, Path | str]:
    """Site path -> a file to copy (a Path into the cache) or its content."""
    return published.site_files(settings, report.results, report.results_key)


def executed_notebook(settings: gate.Settings, report: gate.Report, page: str) -> Path:
    """The executed copy of notebook `page` (executing it unless the cache has it)."""
    return notebook.execute(settings.docs_dir / page, page, report.notebook_cells[page], report.results_key,
                            settings.cache_dir, settings.docs_dir.parent) / page


NOTEBOOK_HOOK = "notebook_pages.py"   # in OUT, beside mkdocs.yml: livenumbers/notebook_pages.py
EDITIONS_HOOK = "editions.py"         # in OUT, beside mkdocs.yml: livenumbers/editions.py


def _plugin_names(raw: dict) -> set[str]:
    return {p if isinstance(p, str) else next(iter(p)) for p in raw.get("plugins") or []}


def _needs_notebook_hook(raw: dict) -> bool:
    return {"i18n", "mkdocs-jupyter"} <= _plugin_names(raw)


def plain_hooks(raw: dict) -> list[str]:
    """The engine's hooks that import only MkDocs, which a plain tree keeps (each copied
    beside its mkdocs.yml from livenumbers/): with the i18n and Jupyter plugins both, the
    notebook pages' (livenumbers/notebook_pages.py); with the i18n plugin, the editions'
    own search indexes, sitemaps and 404 pages (livenumbers/editions.py)."""
    return ([NOTEBOOK_HOOK] if _needs_notebook_hook(raw) else []) + \
        ([EDITIONS_HOOK] if "i18n" in _plugin_names(raw) else [])


def plain_config(raw: dict, charts: bool = False) -> str:
    """The project's mkdocs.yml (parsed by `config.read`) for a builder that runs no
    engine (`config.without_engine`), as YAML, with the hooks of `plain_hooks`; with
    `charts` (the source has some), the scripts that draw them, as the plugin adds them."""
    head = ("# Written by `render`: the project's mkdocs.yml without its live-numbers engine.\n"
            "# Every page's numbers, tables and charts are already in its Markdown.\n")
    plain = config.without_engine(raw)
    hooks = plain_hooks(raw)
    if hooks:
        plain = {**plain, "hooks": hooks}
    if charts:
        scripts = list(plain.get("extra_javascript") or [])
        published.chart_scripts(scripts)
        plain = {**plain, "extra_javascript": scripts}
    return head + config.write(plain)


# -- the whole tree ------------------------------------------------------------------------------

def write_tree(settings: gate.Settings, out: Path) -> gate.Report:
    """Write the rendered project (`settings`, livenumbers/project.py) into `out` (replacing
    a tree an earlier render wrote). Runs the gate first; if a number drifted or a claim
    failed, raises `RenderError` with the build's message and writes nothing. The tree is
    written in a temporary folder beside `out` and renamed into place, so `out` is the old
    tree or the new one."""
    out = out.resolve()
    if out.exists() and not (out / MARKER).is_file() and any(out.iterdir()):
        raise RenderError(f"{out}: exists and was not written by `render`; "
                          "remove it or choose another folder")
    config_file = settings.config_file
    yml = plain_config(config.read(config_file), charts=settings.source.charts is not None)
    report = gate.run(settings)
    if not report.ok:
        raise RenderError("numbers gate failed; nothing written\n" + report.message(settings.lock))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=out.name + ".", suffix=".tmp"))
    try:
        _fill(tmp, settings, report, yml, config_file)
        _swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report


def _fill(tmp: Path, settings: gate.Settings, report: gate.Report, yml: str, config_file: Path) -> None:
    docs = tmp / settings.docs_dir.relative_to(config_file.parent.resolve())
    shutil.copytree(settings.docs_dir, docs, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (tmp / "mkdocs.yml").write_text(yml, encoding="utf-8")
    for hook in (NOTEBOOK_HOOK, EDITIONS_HOOK):
        if f"- {hook}" in yml:
            shutil.copyfile(Path(__file__).parent / hook, tmp / hook)
    for page, text in report.rendered.items():
        (docs / page).write_text(text, encoding="utf-8")
    for page in report.notebook_cells:
        shutil.copyfile(executed_notebook(settings, report, page), docs / page)
    for path, src in generated_files(settings, report).items():
        dst = docs / path
        dst.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, Path):   # copied, not linked: the rendered tree is a source tree, to edit
            shutil.copyfile(src, dst)
        else:
            dst.write_text(src, encoding="utf-8")
    (tmp / MARKER).write_text(
        "# A rendered copy of the site\n\n"
        "Written by `render` from the project's pages and results (results "
        f"`{report.results_key[:12]}`), after the numbers gate passed: every number, table, chart and "
        "instrument link is already in the Markdown, and every generated file is a plain file under "
        f"`{docs.name}/`. Build it with any builder that reads `mkdocs.yml` (`mkdocs build --strict`). "
        "Do not edit it: render again.\n", encoding="utf-8")


def _swap(tmp: Path, out: Path) -> None:
    """`tmp` becomes `out`; an earlier tree at `out` is removed once the new one is in place."""
    if not out.exists():
        tmp.rename(out)
        return
    old = out.with_name(out.name + ".old.tmp")
    shutil.rmtree(old, ignore_errors=True)
    out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)


# -- live markup left in a built site ---------------------------------------------------------------

def live_call(names: tuple[str, ...]) -> re.Pattern:
    """The opening of a call of one of `names` (or a Jinja statement) in a page's text."""
    return re.compile(r"\{\{-?\s*(" + "|".join(map(re.escape, names)) + r")\s*\(|\{%-?\s*(for|if|set|raw)\b")


_SKIP = {"code", "pre", "script", "style", "textarea"}   # where the syntax may be shown as an example


class _Scan(html.parser.HTMLParser):
    def __init__(self, live_call: re.Pattern):
        super().__init__(convert_charrefs=True)
        self.live_call = live_call
        self.found: list[tuple[int, str]] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in _SKIP:
            self._skip += 1
        for _, value in attrs:
            if value and self.live_call.search(urllib.parse.unquote(value)):
                self.found.append((self.getpos()[0], urllib.parse.unquote(value)))

    def handle_endtag(self, tag):
        if tag in _SKIP and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and self.live_call.search(data):
            line = self.getpos()[0] + data[:self.live_call.search(data).start()].count("\n")
            self.found.append((line, data))


def leftover_markup(site_dir: Path, source=None) -> list[str]:
    """`page:line: snippet` for every live call (the engine's functions and the source's)
    in a built site's HTML that was never rendered (outside code, where a page may show
    the syntax)."""
    pattern = live_call(FUNCTIONS + tuple(getattr(source, "function_names", ())))
    if not site_dir.is_dir():
        raise RenderError(f"{site_dir}: no such folder (build the site first)")
    found = []
    for path in sorted(site_dir.rglob("*.html")):
        scan = _Scan(pattern)
        scan.feed(path.read_text(encoding="utf-8", errors="replace"))
        scan.close()
        for line, text in scan.found:
            m = pattern.search(text)
            snippet = text[m.start():m.start() + 60].split("\n")[0]
            found.append(f"{path.relative_to(site_dir).as_posix()}:{line}: {snippet}")
    return found
