"""Editions in several languages: a page's language, and the words of tables and charts.

A site in several languages keeps one page per language beside the default one, as
mkdocs-static-i18n's suffix structure does: `articles/sink.md` (English, the default) and
`articles/sink.fr.md`. The engine reads a page's language from its name, formats its
numbers for it (livenumbers/formats.py), and translates what tables and charts print from a
catalogue: one YAML file per language (`fr.yml`), English text -> translated text.

A catalogue's entries are skeletons: the text a table cell, a chart's caption or title
printed, with each number it cited written {0}, {1}, ... in order, so that one entry
serves every value ("{0} rows, {1} held-out sentences": "{0} lignes, {1} phrases
réservées"); a translation may reorder them. A skeleton with no word of two letters
("{0}–{1}", "L{0}H{1}") needs no entry. Text a page shows that the catalogue lacks is a
problem of the page, with the skeleton to add, so an edition never ships half in English.

The engine's own words (its reference-list heading, "none seen", the interval's label)
are in livenumbers/locales/; a site's catalogue adds to them and may override them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .errors import UserError

ENGINE_CATALOGUES = Path(__file__).parent / "locales"

# A cited value while a table or chart is translated: wrapped in these, it becomes a
# placeholder of the skeleton. Private-use characters: no page or value holds them.
OPEN, CLOSE = "\ue004", "\ue005"
_VALUE = re.compile(f"{OPEN}(.*?){CLOSE}", re.S)
_LINK = re.compile(r"\[[^\]\n]*\]\([^)\n]*\)")          # a Markdown link inside a cell: kept whole
_PLACEHOLDER = re.compile(r"\{(\d+)\}")
_WORD = re.compile(r"[A-Za-z]{2,}")
_ENTITY = re.compile(r"&#?\w+;")


class CatalogueError(UserError, ValueError):
    pass


# A language's typography, put into every translation as a catalogue is read, so a translator
# may type plain spaces: French sets :, ;, ?, ! and % off from the word before, and « »
# from what they enclose, by no-break spaces (U+00A0 before ":" and inside « », U+202F
# before ";", "?", "!" and "%"), as docs/javascripts/i18n.js does for the scripts' words.
_TYPESET = {"fr": ((re.compile(r" :(?=\s|$)"), "\u00a0:"), (re.compile(r" ([;?!%])"), "\u202f\\1"),
                   (re.compile(r"« "), "«\u00a0"), (re.compile(r" »"), "\u00a0»"))}


def typeset(text: str, lang: str) -> str:
    for pattern, replacement in _TYPESET.get(lang, ()):
        text = pattern.sub(replacement, text)
    return text


@dataclass(frozen=True)
class Languages:
    """The site's languages, the default first (mkdocs-static-i18n's `languages`), and whether
    every page must exist in every one of them (`every_page`: false where the plugin falls
    back to the default language's page, `fallback_to_default`, and the engine's
    `every_edition` option does not ask for all)."""
    codes: tuple[str, ...] = ("en",)
    every_page: bool = True

    @property
    def default(self) -> str:
        return self.codes[0]

    @property
    def others(self) -> tuple[str, ...]:
        return self.codes[1:]

    def of(self, page: str) -> str:
        """"articles/sink.fr.md" -> "fr"; a page without a language suffix is the default's."""
        return _language_of(page, self.codes)

    def base(self, page: str) -> str:
        """The default language's page of `page`: "articles/sink.fr.md" -> "articles/sink.md"."""
        lang = self.of(page)
        if lang == self.default:
            return page
        head, ext = page.rsplit(".", 1)
        return f"{head.removesuffix('.' + lang)}.{ext}"

    def page(self, base: str, lang: str) -> str:
        """`base` in language `lang`: ("articles/sink.md", "fr") -> "articles/sink.fr.md"."""
        if lang == self.default:
            return base
        head, ext = base.rsplit(".", 1)
        return f"{head}.{lang}.{ext}"


def languages_of(mkdocs_config, every_page: bool = False) -> Languages:
    """The languages a loaded mkdocs.yml builds with mkdocs-static-i18n (default first), or
    English alone. Every page is in every language if `every_page`, or if the plugin does
    not fall back to the default language's page where a translation is missing."""
    plugin = mkdocs_config.plugins.get("i18n")
    if plugin is None:
        return Languages()
    langs = [lang for lang in plugin.config.languages if lang.build]
    default = [lang.locale for lang in langs if lang.default]
    return Languages(tuple(default + [lang.locale for lang in langs if not lang.default]),
                     every_page or not plugin.config.fallback_to_default)


def editions_agree(languages: Languages, rendered: list, all_pages: list[str]) -> list[tuple[str, int, str]]:
    """The editions agree: every page exists in every language, and each language's page
    cites the same numbers, claims, tables, charts, works and instrument rows as the
    default's (in any order and number of times: a translation words a sentence its own way)."""
    if not languages.others:
        return []
    problems: list[tuple[str, int, str]] = []
    present = set(all_pages)
    for page in all_pages:
        lang, base = languages.of(page), languages.base(page)
        if lang == languages.default and languages.every_page:
            problems += [(page, 1, f"no {other} edition: {languages.page(page, other)} does not exist "
                                  f"(every page is in every language)") for other in languages.others
                         if languages.page(page, other) not in present]
        elif base not in present:
            problems.append((page, 1, f"a {lang} page with no {languages.default} page {base}"))
    what: dict[str, dict[str, set]] = {}
    for out in rendered:
        got = what.setdefault(out.page, {"numbers": set(), "claims": set(), "tables and charts": set(),
                                         "works": set(), "instrument rows": set()})
        got["numbers"].update(c.key for c in out.citations)
        got["claims"].update(c.expr for c in out.claims)
        got["tables and charts"].update(out.calls)
        got["works"].update(out.works)
        got["instrument rows"].update(out.routes)
    for page, got in sorted(what.items()):
        base = languages.base(page)
        if page == base or base not in what:
            continue
        for kind, items in got.items():
            only_here, only_there = sorted(items - what[base][kind]), sorted(what[base][kind] - items)
            if only_here or only_there:
                parts = ([f"{page} only: {', '.join(map(str, only_here[:5]))}" + (" ..." if len(only_here) > 5 else "")]
                         if only_here else []) + \
                        ([f"{base} only: {', '.join(map(str, only_there[:5]))}" + (" ..." if len(only_there) > 5 else "")]
                         if only_there else [])
                problems.append((page, 1, f"the editions differ: {page} and {base} cite different {kind} "
                                 f"({'; '.join(parts)})"))
    return problems




def unbuilt_editions(languages: Languages, all_pages: list[str]) -> list[tuple[str, int, str]]:
    """Pages named for a language no plugin builds (`index.fr.md` with no mkdocs-static-i18n,
    or with no `fr` among its languages): MkDocs would publish each as a page of its own in the
    default language, a French text under an English page's address."""
    problems = []
    for page in all_pages:
        stem = page.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        code = stem.rsplit(".", 1)[-1] if "." in stem else ""
        if code and code not in languages.codes and (name := _language_name(code)):
            problems.append((page, 1, f"a page in {name} ({code}), but no edition in {code} is built: list "
                                      f"mkdocs-static-i18n under `plugins:` with `{code}` among its languages "
                                      f"(pip install 'livenumbers[i18n]'; the guide's \"A French edition\")"))
    return problems


def _language_name(code: str) -> str | None:
    """"fr" -> "French"; None if `code` names no language Babel knows."""
    from babel import Locale, UnknownLocaleError

    if not (code.isalpha() and code.islower() and len(code) in (2, 3)):
        return None
    try:
        return Locale.parse(code).get_display_name("en")
    except (UnknownLocaleError, ValueError):
        return None


@functools.lru_cache(maxsize=4096)   # asked for every citation of every page, on every build
def _language_of(page: str, codes: tuple[str, ...]) -> str:
    stem = page.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    suffix = stem.rsplit(".", 1)[-1] if "." in stem else ""
    return suffix if suffix in codes[1:] else codes[0]


def skeleton(text: str) -> tuple[str, list[str]]:
    """Text with marked values (and Markdown links) -> ("... {0} ... {1}", [values])."""
    values: list[str] = []

    def hole(value: str) -> str:
        values.append(value)
        return "{" + str(len(values) - 1) + "}"

    text = _VALUE.sub(lambda m: hole(m.group(1)), text)
    return _LINK.sub(lambda m: hole(m.group(0)), text), values


def needs_words(skel: str) -> bool:
    """Has the skeleton a word to translate (not only values, symbols and escapes)?"""
    return bool(_WORD.search(_ENTITY.sub("", _PLACEHOLDER.sub("", skel))))


def unmark(text: str) -> str:
    return text.replace(OPEN, "").replace(CLOSE, "")


_READ: dict = {}   # the last catalogue read, and its files' stamps


def _catalogue_files(folder: Path | None, lang: str) -> list[Path]:
    """`lang`'s catalogues that exist: the engine's, then the site's (which may override it)."""
    return [path for path in (ENGINE_CATALOGUES / f"{lang}.yml", folder / f"{lang}.yml" if folder else None)
            if path is not None and path.is_file()]


@dataclass
class Catalogue:
    """English skeleton -> translation, per language; `missing` collects what was asked
    for and not found (the renderer makes each a problem of its page)."""
    entries: dict[str, dict[str, str]] = field(default_factory=dict)
    sources: tuple[Path, ...] = ()
    _texts: dict[str, str] = field(default_factory=dict, repr=False, compare=False)   # `text`, per language

    @classmethod
    def read(cls, folder: Path | None, languages: Languages) -> "Catalogue":
        """The catalogues of the engine and the site, merged per language; read again only
        when a file changed (the gate asks on every build)."""
        files = [path for lang in languages.others for path in _catalogue_files(folder, lang)]
        stamp = (languages.others, tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))
        if _READ.get("stamp") != stamp:
            _READ.update(stamp=stamp, catalogue=cls._parse(folder, languages))
        return _READ["catalogue"]

    @classmethod
    def _parse(cls, folder: Path | None, languages: Languages) -> "Catalogue":
        entries: dict[str, dict[str, str]] = {}
        sources = []
        for lang in languages.others:
            merged: dict[str, str] = {}
            for path in _catalogue_files(folder, lang):
                sources.append(path)
                try:
                    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
                except yaml.YAMLError as exc:
                    raise CatalogueError(f"{path}: not valid YAML ({exc})") from exc
                if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
                    raise CatalogueError(f"{path}: a catalogue maps English text to its translation, string to string")
                for english, translated in data.items():
                    holes = sorted(set(_PLACEHOLDER.findall(english)), key=int)
                    if sorted(set(_PLACEHOLDER.findall(translated)), key=int) != holes:
                        raise CatalogueError(f"{path}: {english!r} -> {translated!r}: the translation must keep "
                                             f"the same values {{0}}, {{1}}, ... (it has {holes} in English)")
                merged.update({english: typeset(translated, lang) for english, translated in data.items()})
            entries[lang] = merged
        return cls(entries, tuple(sources))

    def text(self, lang: str) -> str:
        """The catalogue for `lang` as one string (for cache keys)."""
        if lang not in self._texts:   # the entries are never changed once read
            self._texts[lang] = yaml.safe_dump(self.entries.get(lang, {}), allow_unicode=True, sort_keys=True)
        return self._texts[lang]

    def words(self, english: str, lang: str) -> str | None:
        """The translation of a plain English string (no values), or None."""
        return self.entries.get(lang, {}).get(english)

    def translate(self, text: str, lang: str) -> tuple[str, str | None]:
        """(marked `text` in `lang`, None), or (its English, the skeleton missing from the
        catalogue). Values are put back as they were cited (formatted for `lang`)."""
        skel, values = skeleton(text)
        lead = skel[:len(skel) - len(skel.lstrip())]
        trail = skel[len(skel.rstrip()):]
        core = skel.strip()
        if not needs_words(core):
            return unmark(text), None
        translated = self.entries.get(lang, {}).get(core)
        if translated is None:
            return unmark(text), core
        return lead + _PLACEHOLDER.sub(lambda m: values[int(m.group(1))], translated) + trail, None


# Where a Vega-Lite spec holds words a reader sees: titles (of the chart, an axis, a
# legend, a facet, a tooltip's field: one without a title shows the field's name, which is
# then its title to translate), descriptions, and the categories a legend or a
# facet's header shows (the values of the fields those channels encode). The corpus's own
# words are data on an axis, and stay as they are.
_SPEC_WORDS = ("title", "description", "subtitle")
_LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "strokeDash", "opacity", "size", "row", "column", "facet")
_TITLED_CHANNELS = ("x", "y", "theta", "radius", *_LEGEND_CHANNELS)   # an axis's or legend's title, a field's name by default


def number_locale(lang: str) -> dict:
    """d3-format's locale for `lang` from Babel's symbols: what Vega formats axis numbers with."""
    from babel import Locale

    from .formats import format_value

    symbols = Locale.parse(lang).number_symbols["latn"]
    percent = format_value("", 0, "pct:0", lang).lstrip("0")   # "%", or French's "\u202f%"
    minus = format_value("", -1, "int", lang).rstrip("1")       # "-", or French's U+2212
    return {"decimal": symbols["decimal"], "thousands": symbols["group"], "grouping": [3],
            "currency": ["", ""], "percent": percent, "minus": minus}


def _legend_fields(node, out: set[str]) -> set[str]:
    """The fields a spec's legend and facet channels encode (in any layer or concatenation)."""
    if isinstance(node, dict):
        for channel in _LEGEND_CHANNELS:
            for part in (_encoding(node).get(channel), node.get(channel) if channel in ("row", "column", "facet") else None):
                if isinstance(part, dict) and isinstance(part.get("field"), str):
                    out.add(part["field"])
        for v in node.values():
            _legend_fields(v, out)
    elif isinstance(node, list):
        for v in node:
            _legend_fields(v, out)
    return out


def _encoding(node: dict) -> dict:
    return node["encoding"] if isinstance(node.get("encoding"), dict) else {}


def phrase_fields(spec: dict) -> set[str]:
    """The fields whose values are English phrases a reader sees (translated row by row):
    every legend's and facet's, and those a chart names in its `usermeta` (an axis's
    categories: `.properties(usermeta={"phrases": ["set"]})`; a word of the corpus on an
    axis stays as it is)."""
    named = (spec.get("usermeta") or {}).get("phrases") or []
    return _legend_fields(spec, set()) | set(named)


def _titled(field):
    """A tooltip's field with the title a reader sees: its own, or the field's name."""
    return {"title": field["field"], **field} if isinstance(field, dict) and isinstance(field.get("field"), str) else field


def _axes_titled(node, titled: frozenset = frozenset()):
    """The spec with each axis's and legend's title written out where Vega-Lite would take it
    from a field's name ("score"), so that it is translated as any title is: unless a layer
    beside it titles the same channel (Vega-Lite then shows that title alone)."""
    if isinstance(node, list):
        return [_axes_titled(v, titled) for v in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("layer"), list):
        titled = titled | {channel for layer in node["layer"] if isinstance(layer, dict)
                           for channel, enc in (layer.get("encoding") or {}).items()
                           if isinstance(enc, dict) and "title" in enc}
    out = {k: _axes_titled(v, titled) for k, v in node.items()}
    if isinstance(node.get("encoding"), dict):
        out["encoding"] = {channel: _titled(enc) if channel in _TITLED_CHANNELS and channel not in titled else enc
                           for channel, enc in out["encoding"].items()}
    return out


def localized_spec(spec: dict, lang: str, catalogue: Catalogue, problem) -> dict:
    """A chart's spec in `lang`: its titles and its legends' categories from the catalogue
    (a missing one is `problem`'s), its numbers in the language's format."""
    asked: set[str] = set()

    def words(text: str) -> str:
        out, missing = catalogue.translate(text, lang)
        if missing is not None and missing not in asked:   # once per chart, not once per row
            asked.add(missing)
            problem(f"no {lang} translation of the chart text {missing!r} (add it to the catalogue, {lang}.yml)")
        return out

    def walk(node, key=None):
        if key == "tooltip":   # a field without a title shows its name, which becomes its title to translate
            node = [_titled(f) for f in node] if isinstance(node, list) else _titled(node)
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, key) for v in node]
        if isinstance(node, str) and key in _SPEC_WORDS:
            return words(node)
        return node

    phrases = phrase_fields(spec)

    def values(node):
        """A channel of a translated field: the values it lists (its sort order, its scale's
        domain) as its rows will hold them."""
        if isinstance(node, dict) and node.get("field") in phrases:
            listed = lambda v: [words(x) if isinstance(x, str) else x for x in v] if isinstance(v, list) else v
            node = {**node, "sort": listed(node["sort"])} if "sort" in node else node
            if isinstance(node.get("scale"), dict) and "domain" in node["scale"]:
                node = {**node, "scale": {**node["scale"], "domain": listed(node["scale"]["domain"])}}
        if isinstance(node, dict):
            return {k: values(v) for k, v in node.items()}
        if isinstance(node, list):
            return [values(v) for v in node]
        return node

    out = values(walk(_axes_titled({k: v for k, v in spec.items() if k != "datasets"})))
    if "datasets" in spec:
        out["datasets"] = {name: [{f: words(v) if f in phrases and isinstance(v, str) else v for f, v in row.items()}
                                  if isinstance(row, dict) else row for row in rows]
                           for name, rows in spec["datasets"].items()}
    out.setdefault("config", {})["locale"] = {"number": number_locale(lang)}
    return out
