"""MkDocs hooks: live numbers, tables and charts, and the drift gate.

Thin by design: every handler guards, then delegates to `model.site` (plain library
code that `python -m model check` also runs). Settings come from `extra.live_numbers`
in mkdocs.yml. Module state persists across `mkdocs serve` rebuilds; the cache's
in-process memo is what lets a prose edit rebuild without re-reading the results.
"""
from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.utils.meta import get_data

from model.errors import UserError
from model.site import background, cache, gate, notebook, published

log = logging.getLogger("mkdocs.hooks.live_numbers")

_state: dict = {"serve": False, "report": None, "settings": None}


def on_startup(command: str, dirty: bool) -> None:
    # Under `mkdocs serve` a drift becomes a banner instead of stopping the server.
    _state["serve"] = command == "serve"


def on_config(config):
    opts = config.extra.get("live_numbers", {})
    _state["settings"] = gate.Settings.at(
        Path(config.config_file_path).parent, docs_dir=config.docs_dir,
        study=opts.get("study", "study.yml"), lock_file=opts.get("lock", "numbers.lock.json"),
    )
    return config


def on_pre_build(config) -> None:
    # Before MkDocs cleans site/: a failing gate leaves the previous site untouched.
    settings = _state["settings"]
    published.start_vega(settings.cache_dir)  # cold: bundles while the gate measures
    try:
        report = gate.run(settings)
    except UserError as exc:
        raise PluginError(str(exc)) from exc
    _state["report"] = report
    if not report.ok:
        if not _state["serve"]:
            raise PluginError("numbers gate failed\n" + report.message(settings.lock))
        # INFO, not WARNING: under `strict: true` a warning would abort the serve rebuild.
        log.info("numbers gate failed (shown as banners while serving):\n%s", report.message(settings.lock))


@event_priority(50)  # before mkdocs-jupyter's on_files, so it wraps the executed copy as a page
def on_files(files, config):
    report, settings = _state["report"], _state["settings"]
    results_entry = cache.read(settings.cache_dir, "results", report.results_key)
    views = gate.views_dir(settings, report.results_key)
    for path, src in published.site_files(report.results, results_entry, views, settings.cache_dir,
                                           settings.lock).items():
        if isinstance(src, Path):
            files.append(File.generated(config, path, abs_src_path=str(src)))
        else:
            files.append(File.generated(config, path, content=src))
    for page, cells in report.notebook_cells.items():
        # Cold: the notebook executes beside the build while MkDocs reads the other pages;
        # on_pre_page waits for it. mkdocs-jupyter converts the executed copy, never runs it.
        path = settings.docs_dir / page
        background.start(f"notebook:{page}", notebook.execute, path, page, cells, report.results_key,
                         settings.cache_dir, settings.docs_dir.parent)
        folder = notebook.executed_dir(path, cells, report.results_key, settings.cache_dir)
        files.remove(files.get_file_from_path(page))
        files.append(File(page, src_dir=str(folder), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files


@event_priority(50)  # before mkdocs-jupyter's on_pre_page reads the executed copy
def on_pre_page(page, config, files):
    _wait(f"notebook:{page.file.src_uri}")
    return page


def on_post_build(config) -> None:
    _wait(None)  # a notebook no page read (excluded, say) still ends, and its error shows


def _wait(job: str | None) -> None:
    try:
        background.wait(job) if job else background.wait_all()
    except UserError as exc:
        raise PluginError(str(exc)) from exc


def on_page_markdown(markdown: str, page, config, files) -> str:
    rendered = _state["report"].rendered.get(page.file.src_uri)
    # The gate renders whole files (so errors carry true line numbers); MkDocs has
    # already read the front matter, so drop it here.
    return markdown if rendered is None else get_data(rendered)[0]


def on_page_content(html_text: str, page, config, files) -> str:
    return _state["report"].banner(page.file.src_uri) + html_text
