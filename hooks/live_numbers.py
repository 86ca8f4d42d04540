"""MkDocs hooks: live numbers, tables and charts, and the drift gate.

Thin by design: every handler guards, then delegates to `model.site` (plain library
code that `python -m model check` and `python -m model render` also run). Settings come
from `extra.live_numbers` in mkdocs.yml. Module state persists across `mkdocs serve`
rebuilds; the cache's in-process memo is what lets a prose edit rebuild without
re-reading the results.

Under `mkdocs serve` only (never in `make site`): every cited number carries a hover
detail, tables and charts say what they were drawn from, a page lists every key
(model/site/authoring.py), and with `--dirty` (`make serve`) a save rebuilds the saved
page alone, unless the results or the lock changed.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import jinja2
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, InclusionLevel
from mkdocs.utils import get_relative_url
from mkdocs.utils.meta import get_data

from model.errors import UserError
from model.site import authoring, background, files as site_files, gate, notebook, published, render
from model.site.pages import INSTRUMENT_PAGE

log = logging.getLogger("mkdocs.hooks.live_numbers")

_state: dict = {"serve": False, "dirty": False, "report": None, "settings": None, "inputs": None,
                "generated": None, "specs": {}, "builds": 0, "built": {}}


class _Bytecode(jinja2.BytecodeCache):
    """The theme's templates, compiled once per `mkdocs serve` (MkDocs makes a new Jinja
    environment for every build; a bucket is reused only while its source is the same)."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


_BYTECODE = _Bytecode()


def on_startup(command: str, dirty: bool) -> None:
    # Under `mkdocs serve` a drift becomes a banner instead of stopping the server.
    _state.update(serve=command == "serve", dirty=dirty, builds=0, built={}, inputs=None, generated=None)


def on_config(config):
    opts = config.extra.get("live_numbers", {})
    _state["settings"] = gate.Settings.at(
        Path(config.config_file_path).parent, docs_dir=config.docs_dir,
        study=opts.get("study", "study.yml"), lock_file=opts.get("lock", "numbers.lock.json"),
    )
    if _state["serve"]:
        config.extra_javascript.append(authoring.LISTING_SCRIPT)   # the key listing's script, serve only
    return config


def on_pre_build(config) -> None:
    # Before MkDocs cleans site/: a failing gate leaves the previous site untouched.
    settings = _state["settings"]
    published.start_vega(settings.cache_dir)  # cold: bundles while the gate measures
    try:
        report = gate.run(settings, mark_numbers=_state["serve"])
    except UserError as exc:
        raise PluginError(str(exc)) from exc
    _state["report"] = report
    if not report.ok:
        if not _state["serve"]:
            raise PluginError("numbers gate failed\n" + report.message(settings.lock))
        # INFO, not WARNING: under `strict: true` a warning would abort the serve rebuild.
        log.info("numbers gate failed (shown as banners while serving):\n%s", report.message(settings.lock))
    if _state["dirty"] and _state["inputs"] not in (None, report.inputs_key):
        _mark_pages_stale(config.site_dir)   # new results or lock: every page, not only the saved one
    _state["inputs"] = report.inputs_key


def _mark_pages_stale(site_dir: str) -> None:
    """`--dirty` rebuilds a page whose built file is older than its source: make every
    built page older than any source (the served copy in MkDocs' temporary folder)."""
    for folder, _, names in os.walk(site_dir):
        for name in names:
            if name.endswith(".html"):
                os.utime(os.path.join(folder, name), (0, 0))


class CachedFile(File):
    """A generated file whose bytes are a cache entry's: hard-linked into the site, not
    copied (`model.site.files.link_or_copy`)."""

    def copy_file(self, dirty: bool = False) -> None:
        if dirty and not self.is_modified():
            return
        site_files.link_or_copy(self.abs_src_path, self.abs_dest_path)


@event_priority(50)  # before mkdocs-jupyter's on_files, so it wraps the executed copy as a page
def on_files(files, config):
    report, settings = _state["report"], _state["settings"]
    generated = _state["generated"]
    if generated is None or generated[0] != report.results_key:   # the same files while the results stay
        generated = (report.results_key, render.generated_files(settings, report))
        _state["generated"] = generated if _state["serve"] else None
    for path, src in generated[1].items():
        if isinstance(src, Path):
            files.append(CachedFile.generated(config, path, abs_src_path=str(src)))
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
    if _state["dirty"]:
        _rebuild_changed(files, report)
    if _state["serve"]:
        folder = authoring.listing_folder(settings.cache_dir, report, config.use_directory_urls)
        for path in (authoring.LISTING_PAGE, authoring.LISTING_DATA, authoring.LISTING_SCRIPT):
            inclusion = InclusionLevel.NOT_IN_NAV if path == authoring.LISTING_PAGE else InclusionLevel.UNDEFINED
            files.append(File.generated(config, path, abs_src_path=str(folder / path), inclusion=inclusion))
    return files


def _rebuild_changed(files, report) -> None:
    """`--dirty` rebuilds a page whose built file is older than its source. A save made
    while a build runs is older than what that build writes, and would never show: a page
    whose rendered text is not the one last built is rebuilt, whatever the clocks say."""
    for file in files.documentation_pages():
        text = report.rendered.get(file.src_uri)
        if text is not None and _state["built"].get(file.src_uri) != text and os.path.exists(file.abs_dest_path):
            os.utime(file.abs_dest_path, (0, 0))


@event_priority(50)  # before mkdocs-jupyter's on_pre_page reads the executed copy
def on_pre_page(page, config, files):
    _wait(f"notebook:{page.file.src_uri}")
    return page


def on_post_build(config) -> None:
    _wait(None)  # a notebook no page read (excluded, say) still ends, and its error shows
    _state["builds"] += 1


def _wait(job: str | None) -> None:
    try:
        background.wait(job) if job else background.wait_all()
    except UserError as exc:
        raise PluginError(str(exc)) from exc


# A chart's spec (tens of kB, escaped) rides in an attribute of a raw HTML block: Markdown
# and the search index would parse all of it. It is set aside for a token until the page's
# HTML is written; the published page is the same, byte for byte.
_SPEC = re.compile(r'data-spec="([^"]*)"')
_TOKEN = re.compile(r'data-spec="\ue003(\d+)\ue003"')


def on_page_markdown(markdown: str, page, config, files) -> str:
    rendered = _state["report"].rendered.get(page.file.src_uri)
    if rendered is None:
        return markdown
    # The gate renders whole files (so errors carry true line numbers); MkDocs has
    # already read the front matter, so drop it here.
    _state["built"][page.file.src_uri] = rendered
    specs: list[str] = []
    _state["specs"][page.file.src_uri] = specs

    def aside(m: re.Match) -> str:
        specs.append(m.group(1))
        return f'data-spec="\ue003{len(specs) - 1}\ue003"'

    return _SPEC.sub(aside, get_data(rendered)[0])


def on_page_content(html_text: str, page, config, files) -> str:
    report, src = _state["report"], page.file.src_uri
    _forget_row_anchors(page, report.routes.get(src, set()))
    html_text = report.banner(src) + html_text
    if _state["serve"] and _state["dirty"] and _state["builds"]:
        # The search index of the first build stays (Material's search keeps it under
        # --dirty): indexing the saved page again is most of a save's rebuild.
        page.meta["search"] = {**(page.meta.get("search") or {}), "exclude": True}
    if _state["serve"]:
        html_text = authoring.mark_html(html_text, src, report)
        _strip_toc_marks(page)
        listing = files.get_file_from_path(authoring.LISTING_PAGE)
        html_text = authoring.bar(get_relative_url(listing.url, page.url)) + html_text
    return html_text


def on_post_page(output: str, page, config) -> str:
    specs = _state["specs"].pop(page.file.src_uri, None)
    return _TOKEN.sub(lambda m: f'data-spec="{specs[int(m.group(1))]}"', output) if specs else output


def on_serve(server, config, builder):
    """A save is seen within 0.1 s, not 0.5 s: MkDocs' watcher polls every half second.
    The paths `mkdocs serve` watched so far move to a watcher that polls faster."""
    from watchdog.observers.polling import PollingObserver

    watched = [p for p in (config.docs_dir, config.config_file_path) if p]
    for path in watched:
        server.unwatch(path)
    server.observer = PollingObserver(timeout=0.1)
    for path in watched:
        server.watch(path)
    return server


def on_env(env, config, files):
    if _state["serve"]:
        env.bytecode_cache = _BYTECODE
    return env


def _forget_row_anchors(page, routes: set[str]) -> None:
    """MkDocs' anchor check reads the instrument's row links (#l6/3/2/alpha) as anchors its
    page lacks; they are routes its script reads, and the gate checked each against the
    instrument's data. Only those leave MkDocs' check; every other anchor stays in it."""
    for target, anchors in (page.links_to_anchors or {}).items():
        if target.src_uri == INSTRUMENT_PAGE:
            for route in routes:
                anchors.pop(route, None)


def _strip_toc_marks(page) -> None:
    """A number in a heading: its hover marks must not reach the table of contents."""
    def walk(items) -> None:
        for item in items:
            item.title = authoring.strip_marks(item.title)
            walk(item.children)
    walk(page.toc)
    if page.title:
        page.title = authoring.strip_marks(page.title)
