"""What `mkdocs serve` keeps of the theme from one rebuild to the next.

MkDocs makes the theme's Jinja environment afresh for every build (and mkdocs-static-i18n
for every edition of it). Two things in it cost a save's rebuild time and cannot change
while the server runs, so they are kept, under `mkdocs serve` only:

- the compiled templates (`Bytecode`): a bucket is reused only while its source is the same;
- the listing of the theme's folders inside an installed package (`ListedOnce`). MkDocs lists
  every file of the theme on each build to find its static files: 14,509 for Material, its
  icons, a twentieth of a second per edition. A folder of the project's own (`custom_dir`),
  which an author may edit while serving, is listed on every build, as MkDocs does.
"""
from __future__ import annotations

import jinja2

from .loaded import installed


class Bytecode(jinja2.BytecodeCache):
    """The theme's templates, compiled once per `mkdocs serve`."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


class ListedOnce:
    """The installed theme folders' listings, kept across rebuilds (`keep_listings`)."""

    def __init__(self) -> None:
        self.listings: dict[tuple[str, bool], list[str]] = {}

    def keep_listings(self, theme) -> None:
        """Make `theme.get_env()` (this build's theme) list an installed folder once per server."""
        make_env = theme.get_env

        def get_env() -> jinja2.Environment:
            env = make_env()
            if isinstance(env.loader, jinja2.FileSystemLoader):
                loader = env.loader
                loader.list_templates = lambda: self.list_templates(loader)
            return env

        theme.get_env = get_env

    def list_templates(self, loader: jinja2.FileSystemLoader) -> list[str]:
        """What `loader.list_templates()` returns, an installed folder's part from the first listing."""
        found: set[str] = set()
        for folder in loader.searchpath:
            key = (folder, loader.followlinks)
            listing = self.listings.get(key)
            if listing is None:
                listing = jinja2.FileSystemLoader(folder, followlinks=loader.followlinks).list_templates()
                if installed(folder):
                    self.listings[key] = listing
            found.update(listing)
        return sorted(found)
