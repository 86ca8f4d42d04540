"""MkDocs hooks: live numbers, tables and charts, and the drift gate.

Thin by design: every handler guards, then delegates to `model.site` (plain library
code that `python -m model check` also runs). Settings come from `extra.live_numbers`
in mkdocs.yml. Module state persists across `mkdocs serve` rebuilds, which is how a
prose edit rebuilds without re-reading, let alone recomputing, the results.
"""
from __future__ import annotations

import html
import logging
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.utils.meta import get_data

from model.site import gate, published
from model.site.charts import ChartError
from model.site.lock import LockError
from model.site.notebook import NotebookError
from model.site.pages import PageError
from model.study import StudyError
from model.tokenize import TokenizeError
from model.weights import WeightsError

log = logging.getLogger("mkdocs.hooks.live_numbers")
USER_ERRORS = (PageError, LockError, StudyError, TokenizeError, WeightsError, ChartError, NotebookError)

_state: dict = {"serve": False, "report": None, "settings": None}


def on_startup(command: str, dirty: bool) -> None:
    # Under `mkdocs serve` a drift becomes a banner instead of stopping the server.
    _state["serve"] = command == "serve"


def on_config(config):
    opts = config.extra.get("live_numbers", {})
    root = Path(config.config_file_path).parent
    _state["settings"] = gate.Settings.at(
        root, docs_dir=config.docs_dir, study=opts.get("study", "study.yml"),
        lock_file=opts.get("lock", "numbers.lock.json"), cache_dir=opts.get("cache_dir", ".cache"),
    )
    return config


def on_pre_build(config) -> None:
    # Before MkDocs cleans site/: a failing gate leaves the previous site untouched.
    settings = _state["settings"]
    published.start_vega_bundle(settings.cache_dir)  # cold: bundles while the gate measures
    try:
        report = gate.run(settings)
    except USER_ERRORS as exc:
        published.cancel_vega_bundle()
        raise PluginError(str(exc)) from exc
    _state["report"] = report
    if not report.ok:
        if not _state["serve"]:
            published.cancel_vega_bundle()
            raise PluginError("numbers gate failed\n" + report.message(settings.lock))
        # INFO, not WARNING: under `strict: true` a warning would abort the serve rebuild.
        log.info("numbers gate failed (shown as banners while serving):\n%s", report.message(settings.lock))


@event_priority(50)  # before mkdocs-jupyter's on_files, so it wraps the executed copy as a page
def on_files(files, config):
    report, settings = _state["report"], _state["settings"]
    # The runtime's weights (tens of MB) are published from the cache folder, not memory;
    # first, because the instrument's index says which models have them.
    for path, src in published.runtime_files(report.results, settings.cache_dir).items():
        files.append(File.generated(config, path, abs_src_path=str(src)))
    for path, content in published.generated_files(report, settings.cache_dir).items():
        files.append(File.generated(config, path, content=content))
    for page, cells in report.notebook_cells.items():
        try:
            # Cold: the notebook executes in a thread while MkDocs reads the other pages
            # (it was appended last); on_pre_page waits for it before it is read.
            src_dir = published.start_notebook(page, cells, report, settings)
        except USER_ERRORS as exc:
            raise PluginError(str(exc)) from exc
        # mkdocs-jupyter converts the executed copy; it never runs the notebook itself.
        files.remove(files.get_file_from_path(page))
        files.append(File(page, src_dir=str(src_dir), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files


@event_priority(50)  # before mkdocs-jupyter's on_pre_page reads the executed copy
def on_pre_page(page, config, files):
    _wait_notebook(page.file.src_uri)
    return page


def on_post_build(config) -> None:
    _wait_notebook(None)  # one no page read (excluded, say) still ends, and its error shows


def _wait_notebook(page) -> None:
    try:
        published.wait_notebook(page)
    except USER_ERRORS as exc:
        raise PluginError(str(exc)) from exc


def on_page_markdown(markdown: str, page, config, files) -> str:
    rendered = _state["report"].rendered.get(page.file.src_uri)
    # The gate renders whole files (so errors carry true line numbers); MkDocs has
    # already read the front matter, so drop it here.
    return markdown if rendered is None else get_data(rendered)[0]


def on_page_content(html_text: str, page, config, files) -> str:
    drifts = _state["report"].pages_with_drift().get(page.file.src_uri)
    failed = [c for c in _state["report"].failed_claims if c.page == page.file.src_uri]
    if not (drifts or failed):
        return html_text
    items = [f"<li><code>{html.escape(d.key)}</code>: recorded {html.escape(repr(d.recorded))}, "
             f"now {html.escape(repr(d.now))}</li>" for d in drifts or []]
    items += [f"<li>claim no longer holds (line {c.line}): <code>{html.escape(c.expr)}</code></li>" for c in failed]
    banner = ('<div class="admonition danger drift-banner"><p class="admonition-title">'
              "Numbers on this page moved since the lock was written</p><ul>" + "".join(items) + "</ul></div>")
    return banner + html_text
