"""MkDocs build hooks: this site's live numbers, tables and charts, and the drift gate.

The design the project was asked for (MkDocs build hooks run the measurements): each hook
hands its event to the engine (livenumbers/events.py), whose settings come from mkdocs.yml's
`extra.live_numbers` (livenumbers/project.py, as the plugin's and the commands' do): the
source is the study (model/site/source.py). Module state persists across `mkdocs serve`
rebuilds, and so do `EVENTS` and `EDITIONS`.
"""
from __future__ import annotations

from mkdocs.plugins import CombinedEvent, event_priority

from livenumbers import project
from livenumbers.editions import Editions
from livenumbers.events import Events

EVENTS = Events(project.settings)
# Each edition of the site (mkdocs-static-i18n) its own site to Material: its search index,
# sitemap and 404 page in its folder, its side bar's spaces (livenumbers/editions.py, with
# its own priorities).
EDITIONS = Editions()

on_startup = EVENTS.on_startup
on_pre_build = EVENTS.on_pre_build
on_serve = EVENTS.on_serve
on_env = EVENTS.on_env


@event_priority(50)  # first: the notebooks start executing while the other plugins read the files
def _on_files_early(files, config):
    return EVENTS.on_files(files, config)


@event_priority(-110)  # last: after mkdocs-static-i18n's on_files (-100), which remakes docs/'s files per edition
def _on_files_late(files, config):
    return EVENTS.on_files_late(files, config)


on_files = CombinedEvent(_on_files_early, _on_files_late)


@event_priority(60)  # before other plugins that render Jinja (mkdocs-macros), as the plugin's
def on_page_markdown(markdown, page, config, files):
    return EVENTS.on_page_markdown(markdown, page, config, files)


@event_priority(50)  # before mkdocs-jupyter's on_pre_page reads the executed copy
def on_pre_page(page, config, files):
    return EVENTS.on_pre_page(page, config, files)


on_config = CombinedEvent(EVENTS.on_config, EDITIONS.on_config)
on_post_page = CombinedEvent(EVENTS.on_post_page, EDITIONS.on_post_page)
on_page_content = CombinedEvent(EVENTS.on_page_content, EDITIONS.on_page_content)
on_post_template = EDITIONS.on_post_template
on_post_build = CombinedEvent(EVENTS.on_post_build, EDITIONS.on_post_build)
