"""The engine's MkDocs events: live numbers, tables and charts in the pages, and the drift gate.

One `Events` object per site holds what persists across `mkdocs serve` rebuilds (MkDocs
keeps a hook module or a plugin alive between them), and every handler guards, then hands
the work to the engine's plain library code, which `render` and a source's command line
run too. Two ways in, the same handlers: this site's build hooks (hooks/live_numbers.py)
and the plugin (livenumbers/plugin.py, `plugins: - live-numbers` in mkdocs.yml).

Under `mkdocs serve` only (never in a published build): every cited number carries a hover
detail, tables and charts say what they were drawn from, a page lists every key
(livenumbers/authoring.py), and with `--dirty` a save rebuilds the saved page alone,
unless the results or the lock changed.
"""
from __future__ import annotations

import gc
import logging
import os
import re
from pathlib import Path
from typing import Callable

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, InclusionLevel
from mkdocs.utils import get_relative_url
from mkdocs.utils.meta import get_data

from . import authoring, background, editions, gate, loaded, notebook, notebook_pages, published, render, theme_cache
from . import files as site_files
from .buildinfo import BuildInfo
from .errors import UserError

log = logging.getLogger("mkdocs.plugins.live_numbers")


class CachedFile(File):
    """A generated file whose bytes are a cache entry's: hard-linked into the site, not
    copied (`livenumbers.files.link_or_copy`)."""

    def copy_file(self, dirty: bool = False) -> None:
        if dirty and not self.is_modified():
            return
        site_files.link_or_copy(self.abs_src_path, self.abs_dest_path)


# A chart's spec (tens of kB, escaped) rides in an attribute of a raw HTML block: Markdown
# and the search index would parse all of it. It is set aside for a token until the page's
# HTML is written; the published page is the same, byte for byte.
_SPEC = re.compile(r'data-spec="([^"]*)"')
_TOKEN = re.compile(r'data-spec="\ue003(\d+)\ue003"')


class Events:
    """The event handlers; `settings(config)` gives the engine's settings (the project's
    docs, lock, cache and source) for a loaded MkDocs config."""

    def __init__(self, settings: Callable[..., gate.Settings]):
        self._settings_for = settings
        self.serve = self.dirty = False
        self.report: gate.Report | None = None
        self.settings: gate.Settings | None = None
        self.inputs: str | None = None
        self.generated = None
        self.listing: tuple | None = None   # (the report, its key listing's cache folder), serve only
        self.specs: dict[str, list[str]] = {}
        self.builds = 0
        self.built: dict[str, str] = {}
        self.bytecode = theme_cache.Bytecode()     # under serve: the theme compiled once
        self.theme_listing = theme_cache.ListedOnce()   # and its installed folders listed once
        self.kept = gate.Kept()   # the gate's renderer, reused while its inputs stay
        self.listener = None      # under serve: what asks MkDocs' watcher to look at once (_look_at_once)
        self.frozen = None        # under serve: the gate's inputs whose objects are out of the collector's sight

    def on_startup(self, command: str, dirty: bool) -> None:
        # Under `mkdocs serve` a drift becomes a banner instead of stopping the server.
        self.serve, self.dirty = command == "serve", dirty
        self.builds, self.built, self.inputs, self.generated = 0, {}, None, None

    def on_config(self, config):
        try:
            self.settings = self._settings_for(config)
        except UserError as exc:
            raise PluginError(str(exc)) from exc
        if self.settings.source.charts is not None:
            published.chart_scripts(config.extra_javascript)
        if self.serve:
            config.extra_javascript.append(authoring.LISTING_SCRIPT)   # the key listing's script, serve only
            self.theme_listing.keep_listings(config.theme)
        return config

    def on_pre_build(self, config) -> None:
        # Before MkDocs cleans site/: a failing gate leaves the previous site untouched.
        settings = self.settings
        if settings.source.charts is not None:
            published.start_vega(settings.cache_dir)  # cold: bundles while the gate measures
        if editions.inside_another_build(config) and self.report is not None:
            report = self.report   # the gate ran for the build around this edition's, on the same inputs
        else:
            try:
                report = gate.run(settings, mark_numbers=self.serve, kept=self.kept)
            except UserError as exc:
                raise PluginError(str(exc)) from exc
        self.report = report
        if not report.ok:
            if not self.serve:
                raise PluginError("numbers gate failed\n" + report.message(settings.lock))
            # INFO, not WARNING: under `strict: true` a warning would abort the serve rebuild.
            log.info("numbers gate failed (shown as banners while serving):\n%s", report.message(settings.lock))
        if self.dirty and self.inputs not in (None, report.inputs_key):
            _mark_pages_stale(config.site_dir)   # new results or lock: every page, not only the saved one
        self.inputs = report.inputs_key

    def on_files(self, files, config):
        """Before the other plugins' on_files: the notebooks start executing."""
        report, settings = self.report, self.settings
        for page, cells in report.notebook_cells.items():
            # Cold: the notebook executes beside the build while MkDocs reads the other pages;
            # on_pre_page waits for it. mkdocs-jupyter converts the executed copy, never runs it.
            background.start(f"notebook:{page}", notebook.execute, settings.docs_dir / page, page, cells,
                             report.results_key, settings.cache_dir, settings.docs_dir.parent)
        return files

    def on_files_late(self, files, config):
        """After the other plugins' on_files (mkdocs-static-i18n remakes every file of docs/
        for the edition being built, and would drop a file that is not in docs/): the
        generated files, and each notebook page replaced by its executed copy. The site's
        catalogues (`translations`, docs/locales/) are the engine's input, never published."""
        report, settings = self.report, self.settings
        for file in files:
            if file.abs_src_path and Path(file.abs_src_path).is_relative_to(settings.translations):
                file.inclusion = InclusionLevel.EXCLUDED
        generated = self.generated
        if generated is None or generated[0] != report.results_key:   # the same files while the results stay
            generated = (report.results_key, render.generated_files(settings, report))
            self.generated = generated if self.serve else None
        for path, src in generated[1].items():
            if isinstance(src, Path) and src.is_relative_to(settings.cache_dir):
                files.append(CachedFile.generated(config, path, abs_src_path=str(src)))
            elif isinstance(src, Path):   # a project file (the lock): copied, never linked into the site
                files.append(File.generated(config, path, abs_src_path=str(src)))
            else:
                files.append(File.generated(config, path, content=src))
        for page, cells in report.notebook_cells.items():
            built = [f for f in files if f.src_uri == page]
            if not built:
                continue   # another edition's notebook
            folder = notebook.executed_dir(settings.docs_dir / page, cells, report.results_key, settings.cache_dir)
            files.remove(built[0])
            files.append(_notebook_page(page, folder, settings.languages, config))
        if self.dirty:
            self._rebuild_changed(files, report)
        if self.serve:
            if self.listing is None or self.listing[0] is not report:   # each edition's build: one listing
                self.listing = (report, authoring.listing_folder(settings.cache_dir, report, config.use_directory_urls))
            folder = self.listing[1]
            for path in (authoring.LISTING_PAGE, authoring.LISTING_DATA, authoring.LISTING_SCRIPT):
                inclusion = InclusionLevel.NOT_IN_NAV if path == authoring.LISTING_PAGE else InclusionLevel.UNDEFINED
                files.append(File.generated(config, path, abs_src_path=str(folder / path), inclusion=inclusion))
        return files

    def _rebuild_changed(self, files, report) -> None:
        """`--dirty` rebuilds a page whose built file is older than its source. A save made
        while a build runs is older than what that build writes, and would never show: a page
        whose rendered text is not the one last built is rebuilt, whatever the clocks say."""
        for file in files.documentation_pages():
            text = report.rendered.get(file.src_uri)
            if text is not None and self.built.get(file.src_uri) != text and os.path.exists(file.abs_dest_path):
                os.utime(file.abs_dest_path, (0, 0))

    def on_pre_page(self, page, config, files):
        _wait(f"notebook:{page.file.src_uri}")
        return page

    def on_post_build(self, config) -> None:
        _wait(None)  # a notebook no page read (excluded, say) still ends, and its error shows
        self.builds += 1
        if self.serve and self.frozen is not self.kept.inputs:
            _freeze()
            self.frozen = self.kept.inputs

    def on_page_markdown(self, markdown: str, page, config, files) -> str:
        """The page's Markdown as MkDocs hands it (front matter read), the engine's calls
        rendered. The gate rendered each whole file (so errors carry true line numbers):
        that rendering serves while the Markdown is the file's; Markdown another plugin
        changed first is rendered as it is."""
        src = page.file.src_uri
        if src not in self.report.rendered:
            return markdown   # excluded, or not a page of docs/ the gate reads
        if get_data(self.report.sources[src])[0] == markdown:
            text = get_data(self.report.rendered[src])[0]
        else:
            try:
                out = self.kept.renderer.render(src, markdown, self.serve)
            except UserError as exc:
                raise PluginError(str(exc)) from exc
            text = BuildInfo(self.settings.docs_dir, self.settings.lock).fill(out.text)
        self.built[src] = self.report.rendered[src]   # what --dirty compares (_rebuild_changed)
        specs: list[str] = []
        self.specs[src] = specs

        def aside(m: re.Match) -> str:
            specs.append(m.group(1))
            return f'data-spec="\ue003{len(specs) - 1}\ue003"'

        return _SPEC.sub(aside, text)

    def on_page_content(self, html_text: str, page, config, files) -> str:
        report, src = self.report, page.file.src_uri
        _forget_route_anchors(page, self.settings.source.route_page, report.routes.get(src, set()), self.settings.languages)
        html_text = report.banner(src) + html_text
        if self.serve and self.dirty and self.builds:
            # The search index of the first build stays (Material's search keeps it under
            # --dirty): indexing the saved page again is most of a save's rebuild.
            page.meta["search"] = {**(page.meta.get("search") or {}), "exclude": True}
        if self.serve:
            html_text = authoring.mark_html(html_text, src, report)
            _strip_toc_marks(page)
            listing = files.get_file_from_path(authoring.LISTING_PAGE)
            html_text = authoring.bar(get_relative_url(listing.url, page.url)) + html_text
        return html_text

    def on_post_page(self, output: str, page, config) -> str:
        specs = self.specs.pop(page.file.src_uri, None)
        return _TOKEN.sub(lambda m: f'data-spec="{specs[int(m.group(1))]}"', output) if specs else output

    def on_serve(self, server, config, builder):
        """MkDocs' own watcher stays, with every path it and the other plugins watch; the
        project's code is added to it (`_watch_code`), and a save to docs/ is looked for at
        once (`_look_at_once`)."""
        self._watch_code(server)
        self._look_at_once(server, str(self.settings.docs_dir))
        return server

    def _look_at_once(self, server, docs: str) -> None:
        """MkDocs' watcher polls every half second: a save waits a quarter of a second on
        average before its rebuild starts. A watcher the system notifies (inotify, through
        watchdog's native observer: no polling, no work while idle) asks MkDocs' own watcher
        to look at the saved file's folder now (its emitter's `queue_events`), so MkDocs sees
        the change, through its own handler, as soon as it is made, and only once. MkDocs'
        watcher stays the only one that rebuilds: a save the system does not report is seen
        at its pace, as before. Without such a system watcher, nothing is added."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        observer = getattr(server, "observer", None)
        if observer is None or issubclass(Observer, PollingObserver):
            return

        def look(event) -> None:
            if event.is_directory or event.event_type not in _SAVES:
                return
            for emitter in list(observer.emitters):
                if hasattr(emitter, "queue_events") and _under(event.src_path, emitter.watch.path):
                    emitter.queue_events(0)   # a snapshot now: the polling thread's own step, under its lock

        handler = FileSystemEventHandler()
        handler.on_any_event = look
        self.listener = Observer()
        self.listener.daemon = True   # it ends with the server's process
        try:
            self.listener.schedule(handler, docs, recursive=True)
            self.listener.start()
        except OSError as exc:   # the system's limit of watches reached, say
            log.info("live numbers: saves are seen at MkDocs' own pace (%s)", exc)

    def _watch_code(self, server) -> None:
        """The project's own code (the source and what it imports from the project, outside
        docs/): a save to it rebuilds, and the build loads it again (livenumbers/loaded.py)."""
        docs = Path(self.settings.docs_dir)
        for path in sorted(loaded.of(self.settings.root).files):
            if not path.is_relative_to(docs):
                server.watch(str(path), recursive=False)

    def on_env(self, env, config, files):
        if self.serve:
            env.bytecode_cache = self.bytecode
        return env


# What a save does to a file (a read opens and closes it: that is no save).
_SAVES = {"created", "modified", "moved", "deleted", "closed"}


def _under(path: str, folder: str) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(folder).rstrip(os.sep) + os.sep) or path == folder


def _notebook_page(page: str, executed: Path, languages, config) -> File:
    """The page of notebook `page`, read from its executed copy (`executed`/`page`), at its
    edition's address (/fr/... for notebooks/x.fr.ipynb, as mkdocs-static-i18n addresses a page)."""
    file = File(page, src_dir=str(executed), dest_dir=config.site_dir, use_directory_urls=config.use_directory_urls)
    lang = languages.of(page)
    prefix = "" if lang == languages.default else f"{lang}/"
    return notebook_pages.as_page(file, prefix + languages.base(page).rsplit(".", 1)[0], config)


def _mark_pages_stale(site_dir: str) -> None:
    """`--dirty` rebuilds a page whose built file is older than its source: make every
    built page older than any source (the served copy in MkDocs' temporary folder)."""
    for folder, _, names in os.walk(site_dir):
        for name in names:
            if name.endswith(".html"):
                os.utime(os.path.join(folder, name), (0, 0))


def _freeze() -> None:
    """Under `mkdocs serve`: what every later save keeps (the results, the lock, the renderer
    and its caches: millions of objects) is set out of the cyclic collector's sight, so that a
    full collection, which a save's own work sets off, looks at that save's objects alone (over
    them all it took 0.16 s, in one save out of two, measured). Done once per inputs, when
    those objects are made: what the last freeze kept and is now garbage is collected first."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _wait(job: str | None) -> None:
    try:
        background.wait(job) if job else background.wait_all()
    except UserError as exc:
        raise PluginError(str(exc)) from exc


def _forget_route_anchors(page, route_page: str | None, routes: set[str], languages) -> None:
    """MkDocs' anchor check reads the links into the source's route page (#l6/3/2/alpha) as
    anchors that page lacks; they are routes its script reads, and the gate checked each
    against the source's data. Only those leave MkDocs' check (in every language's edition
    of the route page); every other anchor stays."""
    for target, anchors in (page.links_to_anchors or {}).items():
        if languages.base(target.src_uri) == route_page:
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
