"""Notebook pages in a site built with both mkdocs-static-i18n and mkdocs-jupyter.

mkdocs-jupyter wraps each notebook as a page in its on_files (priority 0); then
mkdocs-static-i18n remakes every file of docs/ for the edition being built, as a plain
File (priority -100), and a notebook would be published as its raw JSON. This wraps
them again, last, at the address the i18n plugin gave them (/fr/... for x.fr.ipynb).

It imports only MkDocs: the engine's build uses `as_page` for the executed copies, and
`render` copies this file beside a plain tree's mkdocs.yml as its one hook, so a builder
that runs no engine publishes the same notebook pages.
"""
from __future__ import annotations

import os
import re

from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files


def as_page(file, stem: str, config):
    """`file`, a notebook, as mkdocs-jupyter's page at `stem` ("fr/notebooks/main-table")."""
    jupyter = config.plugins.get("mkdocs-jupyter")
    page = next(iter(jupyter.on_files(Files([file]), config=config))) if jupyter is not None else file
    page.dest_path = f"{stem}/index.html" if config.use_directory_urls else f"{stem}.html"
    page.abs_dest_path = os.path.normpath(os.path.join(config.site_dir, page.dest_path))
    page.url = f"{stem}/" if config.use_directory_urls else f"{stem}.html"
    return page


@event_priority(-110)   # after mkdocs-static-i18n's on_files (-100)
def on_files(files, config):
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None:
        return files
    for file in [f for f in files if f.src_uri.endswith(".ipynb") and not f.is_documentation_page()
                 and jupyter.should_include(f)]:
        files.remove(file)
        # Its address as the i18n plugin gave it: mkdocs-jupyter's page address, or the raw file's.
        files.append(as_page(file, re.sub(r"(/index\.html|\.html|\.ipynb)$", "", file.dest_path), config))
    return files
