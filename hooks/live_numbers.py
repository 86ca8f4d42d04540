"""MkDocs build hooks: this site's live numbers, tables and charts, and the drift gate.

The design the project was asked for (MkDocs build hooks run the measurements): each hook
hands its event to the engine (livenumbers/events.py), whose source is the study
(model/site/source.py, `extra.live_numbers` in mkdocs.yml). Module state persists across
`mkdocs serve` rebuilds, and so does `EVENTS`.
"""
from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority

from livenumbers import editions
from livenumbers.config import LOCK_FILE, TRANSLATIONS, options
from livenumbers.events import Events
from livenumbers.references import REFERENCES_FILE
from model.site.source import STUDY_FILE, study_settings


def _settings(config):
    opts = options({"extra": config.extra})
    return study_settings(Path(config.config_file_path).parent, docs_dir=config.docs_dir,
                          study=opts.get("study", STUDY_FILE), lock_file=opts.get("lock", LOCK_FILE),
                          bibliography=opts.get("bibliography", REFERENCES_FILE),
                          translations=opts.get("translations", TRANSLATIONS))


EVENTS = Events(_settings)

on_startup = EVENTS.on_startup
on_pre_build = EVENTS.on_pre_build
on_page_markdown = EVENTS.on_page_markdown
on_serve = EVENTS.on_serve
on_env = EVENTS.on_env


@event_priority(50)  # first: the notebooks start executing while the other plugins read the files
def _on_files_early(files, config):
    return EVENTS.on_files(files, config)


@event_priority(-110)  # last: after mkdocs-static-i18n's on_files (-100), which remakes docs/'s files per edition
def _on_files_late(files, config):
    return EVENTS.on_files_late(files, config)


on_files = CombinedEvent(_on_files_early, _on_files_late)


@event_priority(50)  # before mkdocs-jupyter's on_pre_page reads the executed copy
def on_pre_page(page, config, files):
    return EVENTS.on_pre_page(page, config, files)


# Each edition of the site (mkdocs-static-i18n) its own site to Material: its search index,
# sitemap and 404 page in its folder, its side bar's spaces (livenumbers/editions.py, with
# its own priorities).
on_config = CombinedEvent(EVENTS.on_config, editions.on_config)
on_post_page = CombinedEvent(EVENTS.on_post_page, editions.on_post_page)
on_page_content = CombinedEvent(EVENTS.on_page_content, editions.on_page_content)
on_post_template = editions.on_post_template
on_post_build = CombinedEvent(EVENTS.on_post_build, editions.on_post_build)
