"""Each edition of a Material site built by mkdocs-static-i18n, a site of its own to Material.

mkdocs-static-i18n builds the editions one after the other into one folder (English at /,
French at /fr/). Material reads three files from its `base`, which MkDocs makes the site's
root on every page: the search index, the sitemap (the pages instant navigation swaps in
place) and, at a missing address, the 404 page. So a French page searched the one index the
plugin merges from both editions, and the French build wrote its 404 page and sitemap over
the English ones. Here, for every edition but the default one:

- its pages' Material `base` (the page's `__config`) is the edition's folder, /fr/;
- its search index is there (fr/search/search_index.json): the merged index is split after
  the last edition is built, each entry addressed from its edition's folder, and each index
  tokenized and stemmed for its edition's language (Material's own defaults for it);
- its theme templates (the 404 page, the sitemap) are written into that folder, not over
  the default edition's;
- the headings' permalink title (toc's `permalink_title`) is the edition's, from the theme's
  word for `toc.permalink` in its language (this site's theme: docs/templates/).

And in every edition, the table of contents keeps its headings' own spaces: Python-Markdown's
toc collapses every Unicode space to a plain one, so a French « ? » or « : » in the side bar
could break from its word.

It imports only MkDocs: the engine's build runs these handlers from its events, and `render`
copies this file beside a plain tree's mkdocs.yml as a hook, so a builder that runs no
engine publishes the same site. Without mkdocs-static-i18n or Material, it does nothing.
"""
from __future__ import annotations

import json
import logging
import os
import re

from mkdocs.plugins import event_priority
from mkdocs.utils import write_file

log = logging.getLogger("mkdocs.plugins.live_numbers.editions")

SEARCH_INDEX = os.path.join("search", "search_index.json")
_CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)

def _i18n(config):
    """mkdocs-static-i18n, when it builds this Material site's editions; else None."""
    plugin = config.plugins.get("i18n")
    if plugin is None or config.theme.name != "material" or not hasattr(plugin, "current_language"):
        return None
    return plugin


def inside_another_build(config) -> bool:
    """Whether this build is an edition mkdocs-static-i18n builds inside the default one's
    (its on_post_build): the same files, results and lock as the build around it."""
    return bool(getattr(config.plugins.get("i18n"), "building", False))


def _folders(plugin) -> dict[str, str]:
    """Each built edition's folder in the site: {"en": "", "fr": "fr/"}."""
    return {lang.locale: "" if lang.default else lang.link.strip("/") + "/"
            for lang in plugin.config.languages if lang.build}


def _folder(plugin) -> str:
    """The folder of the edition being built ("" for the default one)."""
    return _folders(plugin).get(plugin.current_language, "")


def _rebase(html: str, folder: str, where: str) -> str:
    """Material's `base` in a page's `__config`, moved to its edition's folder."""
    def move(m: re.Match) -> str:
        base = json.loads(m.group(2))["base"]
        old = '"base": ' + json.dumps(base)
        if old not in m.group(2):
            log.warning("%s: Material's __config holds no %s to move to the edition's folder", where, old)
            return m.group(0)
        new = '"base": ' + json.dumps(base.rstrip("/") + "/" + folder)
        return m.group(1) + m.group(2).replace(old, new, 1) + m.group(3)

    return _CONFIG.sub(move, html, count=1) if folder else html


_HEADING = re.compile(r'<h[1-6][^>]*\bid="([^"]+)"[^>]*>(.*?)</h[1-6]>', re.S)
_PERMALINK = re.compile(r'<a class="headerlink".*?</a>', re.S)


class Editions:
    """The handlers, and what they keep across one site's builds (its editions, `mkdocs
    serve`'s rebuilds): each edition's search settings and the theme's words."""

    def __init__(self) -> None:
        # Per edition, what its own search index says (lunr's language, the separator, the
        # pipeline): read while the edition is built, written when the index is split.
        self.search: dict[str, dict] = {}
        self.words: dict[tuple, str | None] = {}

    def _word(self, config, key: str) -> str | None:
        """The theme's word for `key` in the edition's language (as Material's search plugin
        reads its defaults), or None if the theme has none."""
        asked = (config.theme.name, config.theme.get("language"), tuple(config.theme.dirs), key)
        if asked not in self.words:   # a theme's templates are read and compiled: once, not on every save
            template = config.theme.get_env().get_template("partials/language.html", None, {"config": config})
            word = str(template.module.t(key))
            self.words[asked] = None if word == key else word
        return self.words[asked]

    @event_priority(-110)   # after mkdocs-static-i18n's (-100), which sets the edition's theme language
    def on_config(self, config):
        plugin = _i18n(config)
        if plugin is None:
            return config
        self.search[_folder(plugin)] = {
            "lang": [self._word(config, "search.config.lang") or "en"],
            "separator": self._word(config, "search.config.separator"),
            "pipeline": [p for p in re.split(r"\s*,\s*", self._word(config, "search.config.pipeline") or "") if p],
        }
        toc = config.mdx_configs.get("toc")
        title = self._word(config, "toc.permalink")
        if toc is not None and title:
            toc["permalink_title"] = title
        return config

    def on_page_content(self, html: str, page, config, files) -> str:
        """Each table-of-contents title as its heading writes it, where they differ only in
        their spaces (no-break or narrow no-break ones the toc made plain)."""
        own = {m.group(1): re.sub(r"<[^>]+>", "", _PERMALINK.sub("", m.group(2))).strip() for m in _HEADING.finditer(html)}

        def respace(items) -> None:
            for item in items:
                heading = own.get(item.id)
                if heading and heading != item.title and heading.split() == item.title.split():
                    item.title = heading
                respace(item.children)

        respace(page.toc)
        return html

    def on_post_page(self, output: str, page, config) -> str:
        plugin = _i18n(config)
        return _rebase(output, _folder(plugin), page.file.src_uri) if plugin else output

    def on_post_template(self, output: str, template_name: str, config) -> str:
        """A theme template (404.html, sitemap.xml) of an edition but the default one: written
        into the edition's folder, and nothing over the default edition's (MkDocs writes no
        template that renders empty)."""
        plugin = _i18n(config)
        folder = _folder(plugin) if plugin else ""
        if not folder or template_name not in config.theme.static_templates:
            return output
        write_file(_rebase(output, folder, template_name).encode("utf-8"),
                   os.path.join(config.site_dir, folder, template_name))
        return ""

    @event_priority(-110)   # after mkdocs-static-i18n's (-100), which builds the other editions and merges their indexes
    def on_post_build(self, config) -> None:
        plugin = _i18n(config)
        path = os.path.join(config.site_dir, SEARCH_INDEX)
        if plugin is None or plugin.building or not os.path.isfile(path):
            return   # an edition built inside the default one's build: the split waits for the last
        _forget_duplicates(config)
        with open(path, encoding="utf-8") as f:
            merged = json.load(f)
        folders = sorted(set(_folders(plugin).values()), key=len, reverse=True)   # "fr/" before ""
        docs: dict[str, list] = {folder: [] for folder in folders}
        for doc in _newest(merged["docs"]):
            folder = next(f for f in folders if doc["location"].startswith(f))
            docs[folder].append({**doc, "location": doc["location"][len(folder):]})
        for folder in folders:
            own = {k: v for k, v in self.search.get(folder, {}).items() if v}
            index = {"config": {**merged["config"], **own}, "docs": docs[folder]}
            write_file(json.dumps(index, separators=(",", ":"), default=str).encode("utf-8"),
                       os.path.join(config.site_dir, folder, SEARCH_INDEX))


def _newest(entries: list[dict]) -> list[dict]:
    """One search entry per location (a page or a section of it), the last one given."""
    return list({entry["location"]: entry for entry in entries}.values())


def _forget_duplicates(config) -> None:
    """Under `mkdocs serve --dirty`, Material's search keeps the last build's index and
    merges each rebuild into it, and mkdocs-static-i18n stacks every edition's entries,
    that index's included, onto it again: each save doubled the index (and the time to
    write it; the seventh save of a page took 14 s). The kept index holds one entry per
    location."""
    search = config.plugins.get("material/search") or config.plugins.get("search")
    kept = getattr(search, "search_index_prev", None)
    if kept is not None and hasattr(kept, "entries"):
        kept.entries[:] = _newest(kept.entries)


# As a build hook of its own (render copies this file beside a plain tree's mkdocs.yml): the
# hook module's one Editions, alive across `mkdocs serve` rebuilds as a hook module is.
_HOOK = Editions()
on_config = _HOOK.on_config
on_page_content = _HOOK.on_page_content
on_post_page = _HOOK.on_post_page
on_post_template = _HOOK.on_post_template
on_post_build = _HOOK.on_post_build
