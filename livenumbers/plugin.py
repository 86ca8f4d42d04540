"""The engine as a MkDocs plugin, for write-ups that configure it in mkdocs.yml:

    plugins:
      - live-numbers:
          source: my_writeup.numbers:make_source   # callable(docs_dir, options) -> Source
          lock: numbers.lock.json                  # in docs/ (the default)
          bibliography: references.bib             # in docs/ (the default): the works pages cite
          options: {data: results.csv}             # handed to the callable
          registered: {file: study.yml, blocks: [calibration]}   # settings fixed in advance (optional)

The same handlers as a site's build hooks (livenumbers/events.py); the entry point is in
pyproject.toml. MkDocs keeps one plugin object across `mkdocs serve` rebuilds.
"""
from __future__ import annotations

from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority

from . import config, editions, gate
from .events import Events
from .references import REFERENCES_FILE


class LiveNumbersConfig(base.Config):
    source = c.Type(str)                              # module:callable(docs_dir, options) -> Source
    lock = c.Type(str, default=config.LOCK_FILE)
    bibliography = c.Type(str, default=REFERENCES_FILE)   # BibTeX, in docs/; cite("key") names its entries
    translations = c.Type(str, default=config.TRANSLATIONS)   # in docs/: fr.yml etc., the tables' and charts' words
    options = c.Type(dict, default={})
    registered = c.Type(dict, default={})   # {file, blocks}: settings blocks fixed in advance (registration.py)


class LiveNumbersPlugin(BasePlugin[LiveNumbersConfig]):
    def __init__(self):
        self.events = Events(self._settings)

    def _settings(self, mkdocs_config) -> gate.Settings:
        docs = Path(mkdocs_config.docs_dir)
        source = config.load_source(self.config.source, docs, dict(self.config.options),
                                    Path(mkdocs_config.config_file_path).parent)
        return gate.Settings.at(Path(mkdocs_config.config_file_path).parent, source, docs_dir=str(docs),
                                lock_file=self.config.lock, bibliography=self.config.bibliography,
                                translations=self.config.translations, registered=self.config.registered)

    def on_startup(self, *, command, dirty):
        self.events.on_startup(command, dirty)

    def _on_config(self, config):
        return self.events.on_config(config)

    @event_priority(-110)   # after mkdocs-static-i18n's: each edition its own site (livenumbers/editions.py)
    def _on_config_editions(self, config):
        return editions.on_config(config)

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

    def on_page_markdown(self, markdown, *, page, config, files):
        return self.events.on_page_markdown(markdown, page, config, files)

    def on_page_content(self, html, *, page, config, files):
        return editions.on_page_content(self.events.on_page_content(html, page, config, files), page, config, files)

    def on_post_page(self, output, *, page, config):
        return editions.on_post_page(self.events.on_post_page(output, page, config), page, config)

    def on_post_template(self, output, *, template_name, config):
        return editions.on_post_template(output, template_name, config)

    def _on_post_build(self, *, config):
        self.events.on_post_build(config)

    @event_priority(-110)   # after mkdocs-static-i18n's, which builds the other editions
    def _on_post_build_editions(self, *, config):
        editions.on_post_build(config)

    on_post_build = CombinedEvent(_on_post_build, _on_post_build_editions)

    def on_serve(self, server, *, config, builder):
        return self.events.on_serve(server, config, builder)

    def on_env(self, env, *, config, files):
        return self.events.on_env(env, config, files)
