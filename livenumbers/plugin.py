"""The engine as a MkDocs plugin, for write-ups that configure it in mkdocs.yml:

    plugins:
      - live-numbers:
          source: my_writeup.numbers:make_source   # callable(docs_dir, options) -> Source
          options: {data: results.csv}             # handed to the callable

and the other options of livenumbers/config.py (`config.Options`). The same handlers as a
site's build hooks (livenumbers/events.py); the entry point is in pyproject.toml. MkDocs
keeps one plugin object across `mkdocs serve` rebuilds, and with it the engine's state.
"""
from __future__ import annotations

from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority

from . import project
from .config import Options
from .editions import Editions
from .events import Events


class LiveNumbersPlugin(BasePlugin[Options]):
    def __init__(self):
        self.events = Events(project.settings)
        self.editions = Editions()

    def on_startup(self, *, command, dirty):
        self.events.on_startup(command, dirty)

    def _on_config(self, config):
        return self.events.on_config(config)

    @event_priority(-110)   # after mkdocs-static-i18n's: each edition its own site (livenumbers/editions.py)
    def _on_config_editions(self, config):
        return self.editions.on_config(config)

    on_config = CombinedEvent(_on_config, _on_config_editions)

    def on_pre_build(self, *, config):
        self.events.on_pre_build(config)

    @event_priority(50)   # first: the notebooks start executing while the other plugins read the files
    def _on_files_early(self, files, *, config):
        return self.events.on_files(files, config)

    @event_priority(-110)   # last: after mkdocs-static-i18n's on_files (-100), which remakes docs/'s files per edition
    def _on_files_late(self, files, *, config):
        return self.events.on_files_late(files, config)

    on_files = CombinedEvent(_on_files_early, _on_files_late)

    @event_priority(50)
    def on_pre_page(self, page, *, config, files):
        return self.events.on_pre_page(page, config, files)

    @event_priority(60)   # before other plugins that render Jinja (mkdocs-macros), wherever it is listed
    def on_page_markdown(self, markdown, *, page, config, files):
        return self.events.on_page_markdown(markdown, page, config, files)

    def on_page_content(self, html, *, page, config, files):
        return self.editions.on_page_content(self.events.on_page_content(html, page, config, files), page, config, files)

    def on_post_page(self, output, *, page, config):
        return self.editions.on_post_page(self.events.on_post_page(output, page, config), page, config)

    def on_post_template(self, output, *, template_name, config):
        return self.editions.on_post_template(output, template_name, config)

    def _on_post_build(self, *, config):
        self.events.on_post_build(config)

    @event_priority(-110)   # after mkdocs-static-i18n's, which builds the other editions
    def _on_post_build_editions(self, *, config):
        self.editions.on_post_build(config)

    on_post_build = CombinedEvent(_on_post_build, _on_post_build_editions)

    def on_serve(self, server, *, config, builder):
        return self.events.on_serve(server, config, builder)

    def on_env(self, env, *, config, files):
        return self.events.on_env(env, config, files)
