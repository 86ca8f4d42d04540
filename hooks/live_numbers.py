"""MkDocs build hooks: this site's live numbers, tables and charts, and the drift gate.

The design the project was asked for (MkDocs build hooks run the measurements): each hook
hands its event to the engine (livenumbers/events.py), whose source is the study
(model/site/source.py, `extra.live_numbers` in mkdocs.yml). Module state persists across
`mkdocs serve` rebuilds, and so does `EVENTS`.
"""
from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority

from livenumbers.config import LOCK_FILE, options
from livenumbers.events import Events
from livenumbers.references import REFERENCES_FILE
from model.site.source import STUDY_FILE, study_settings


def _settings(config):
    opts = options({"extra": config.extra})
    return study_settings(Path(config.config_file_path).parent, docs_dir=config.docs_dir,
                          study=opts.get("study", STUDY_FILE), lock_file=opts.get("lock", LOCK_FILE),
                          bibliography=opts.get("bibliography", REFERENCES_FILE))


EVENTS = Events(_settings)

on_startup = EVENTS.on_startup
on_config = EVENTS.on_config
on_pre_build = EVENTS.on_pre_build
on_page_markdown = EVENTS.on_page_markdown
on_page_content = EVENTS.on_page_content
on_post_page = EVENTS.on_post_page
on_post_build = EVENTS.on_post_build
on_serve = EVENTS.on_serve
on_env = EVENTS.on_env


@event_priority(50)  # before mkdocs-jupyter's on_files, so it wraps the executed copy as a page
def on_files(files, config):
    return EVENTS.on_files(files, config)


@event_priority(50)  # before mkdocs-jupyter's on_pre_page reads the executed copy
def on_pre_page(page, config, files):
    return EVENTS.on_pre_page(page, config, files)
