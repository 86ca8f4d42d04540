"""Works a page cites: one BibTeX file (read with pybtex), citations, and each page's list.

    {{ cite("kobayashi2020attention") }}                 (Kobayashi et al., 2020)
    {{ cite("clark2019what", "abnar2020quantifying") }}  (Clark et al., 2019; Abnar and Zuidema, 2020)
    {{ citet("kobayashi2020attention") }}                Kobayashi et al. (2020), in running text
    {{ bibliography() }}                                 where the page's reference list goes

Each name-and-year links to the work's entry in the page's reference list (anchor
`ref-KEY`). A page that cites a work ends with that list, or has it where it calls
`bibliography()`: every work it cited, once, by author and year, each with its DOI,
URL and arXiv links. A key the file lacks is a problem of the page (page, line and the
closest keys), as an unknown number is. The file is the engine's `bibliography` option:
docs/references.bib unless mkdocs.yml says otherwise.
"""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .formats import NumberError, did_you_mean

REFERENCES_FILE = "references.bib"   # in docs/, unless the engine's `bibliography` option names another
PLACE = "\ue005"                     # bibliography()'s place in a rendered page, until the list replaces it


class BibliographyError(UserError, ValueError):
    """The bibliography file cannot be read (its path and pybtex's message, with the line)."""


@dataclass(frozen=True)
class Label:
    """How a page names a work: "Kobayashi et al." and "2020" (a letter added to the year
    where two works would read the same)."""
    key: str
    names: str
    year: str
    order: tuple   # the reference list's order: first author, year, key

    @property
    def anchor(self) -> str:
        return f"ref-{self.key}"

    def link(self, text: str) -> str:
        return f"[{html.escape(text, quote=False)}](#{self.anchor})"


@functools.lru_cache(maxsize=None)
def _backend(name: str):
    """A pybtex output backend ("text", "html"), made once: pybtex's own `render_as` looks
    its backend up among every installed package's entry points on each call."""
    from pybtex.plugin import find_plugin

    return find_plugin("pybtex.backends", name)()


def _surname(person) -> str:
    return " ".join(part.render(_backend("text")) for part in person.rich_prelast_names + person.rich_last_names)


def _names(entry) -> str:
    people = [_surname(p) for p in (entry.persons.get("author") or entry.persons.get("editor") or [])]
    if not people:
        return str(entry.fields.get("title", "?"))
    if len(people) > 2 or people[-1] == "others":
        return f"{people[0]} et al."
    return " and ".join(people)


@functools.lru_cache(maxsize=1)
def _and(names: str, and_: str) -> str:
    return names.replace(" and ", f" {and_} ") if and_ != "and" else names


# The words pybtex's plain style writes between a work's fields, and the months: a page in
# another language prints them from the engine's catalogue (livenumbers/locales/). A work's
# own fields (titles, venues, places) stay as the file writes them, but for "Online", the
# place of a conference held on the web, and a field the file also gives in that language
# (`note_fr = {...}` beside `note`: the French list prints it).
GLUE = ("and", ", and", "editor", "editors", "In", "URL:", "Online", "others")   # ", and": the last of 3+ names
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


@functools.lru_cache(maxsize=8)
def _style(glue: tuple[tuple[str, str], ...] = ()):
    """pybtex's `plain` style, but titles as the file writes them (plain lower-cases them),
    and its words from `glue` ((English, translated) pairs; English where absent)."""
    from pybtex.style.formatting.plain import Style
    from pybtex.style.template import field, href, join, names, sentence, words

    said = dict(glue)
    word = lambda english: said.get(english, english)

    class AsWritten(Style):
        def format_title(self, e, which_field, as_sentence=True):
            return sentence[field(which_field)] if as_sentence else field(which_field)

        def format_names(self, role, as_sentence=True):
            listed = names(role, sep=", ", sep2=f" {word('and')} ", last_sep=f"{word(', and')} ")
            return sentence[listed] if as_sentence else listed

        def format_editor(self, e, as_sentence=True):
            editors = self.format_names("editor", as_sentence=False)
            if "editor" not in e.persons:
                return editors   # pybtex's own: the template reports the missing field
            listed = join(sep=", ")[editors, word("editors" if len(e.persons["editor"]) > 1 else "editor")]
            return sentence[listed] if as_sentence else listed

        def format_url(self, e):
            url = field("url", raw=True)
            return words[word("URL:"), href(url)[url]]

    return AsWritten()


def _in_language(entry_html: str, glue: dict[str, str]) -> str:
    """The words the plain style's templates hold as literals ("In" before a book's title),
    a month before its year and an online venue, in the page's language."""
    if not glue:
        return entry_html
    entry_html = re.sub(r"(^|\. )In ", lambda m: f"{m.group(1)}{glue.get('In', 'In')} ", entry_html)
    entry_html = re.sub(r"\. Online,", f". {glue.get('Online', 'Online')},", entry_html)
    entry_html = re.sub(r"\bothers(?=\.)", glue.get("others", "others"), entry_html)   # BibTeX's "and others"
    return re.sub(rf"\b({'|'.join(MONTHS)}) (?=\d{{4}})", lambda m: f"{glue.get(m.group(1), m.group(1))} ", entry_html)


def _fields_in(entry, lang: str | None):
    """`entry` with each field the file also writes in `lang` (`note_fr`) in that language,
    and no field of another language's."""
    suffixed = {name for name in entry.fields if re.fullmatch(r".+_[a-z]{2}", name)}
    if not suffixed:
        return entry
    fields = {name: value for name, value in entry.fields.items() if name not in suffixed}
    if lang:
        fields |= {name[:-3]: value for name, value in entry.fields.items() if name.endswith(f"_{lang}")}
    from pybtex.database import Entry

    return Entry(entry.type, fields=fields, persons=entry.persons)


class Bibliography:
    """The works of one BibTeX file, by key; each entry's text is formatted when first cited."""

    def __init__(self, path: Path | None):
        self.path = Path(path) if path is not None else None   # None: the write-up has none
        self.entries: dict = {}
        self.labels: dict[str, Label] = {}
        self._html: dict[tuple, str] = {}
        if self.path is not None and self.path.is_file():
            self._read()

    def _read(self) -> None:
        from pybtex.database import parse_file
        from pybtex.exceptions import PybtexError

        try:
            self.entries = dict(parse_file(str(self.path), "bibtex").entries)
        except PybtexError as exc:
            raise BibliographyError(f"{self.path}: {exc}") from exc
        named: dict[tuple[str, str], list[str]] = {}
        for key, entry in self.entries.items():
            named.setdefault((_names(entry), entry.fields.get("year", "n.d.")), []).append(key)
        for (names, year), keys in named.items():
            for i, key in enumerate(sorted(keys)):
                suffix = "abcdefghijklmnopqrstuvwxyz"[i] if len(keys) > 1 else ""
                self.labels[key] = Label(key, names, year + suffix, (names.lower(), year, key))

    def label(self, key: str) -> Label:
        """The work `key` names, or a NumberError the page reports with its line."""
        if key in self.labels:
            return self.labels[key]
        if self.path is None or not self.path.is_file():
            where = f"{self.path.parent.name}/{self.path.name} not found" if self.path else "none given"
            raise NumberError(f"unknown reference {key!r}: there is no bibliography ({where}; "
                              "the live-numbers option `bibliography` names a BibTeX file in docs/)")
        raise NumberError(f"unknown reference {key!r}" + did_you_mean(key, list(self.labels))
                          + f" (not in {self.path.name})")

    def entry_html(self, key: str, glue: tuple[tuple[str, str], ...] = (), lang: str | None = None) -> str:
        """A work's entry as HTML, its style's words from `glue` ((English, translated) pairs),
        its fields in `lang` where the file gives them so (`note_fr`)."""
        if (key, glue, lang) not in self._html:
            text = _style(glue).format_entry("", _fields_in(self.entries[key], lang)).text
            self._html[key, glue, lang] = _in_language(text.render(_backend("html")).replace("\n", " "), dict(glue))
        return self._html[key, glue, lang]

    # -- what the page functions print ---------------------------------------------------

    def cite(self, labels: list[Label], and_: str = "and", between: str = "; ") -> str:
        """"(Kobayashi et al., 2020; Clark et al., 2019)", each linked to its entry; `and_`
        and `between` are the page's language's ("Abnar et Zuidema", " ; ")."""
        return "(" + between.join(w.link(f"{_and(w.names, and_)}, {w.year}") for w in labels) + ")"

    def citet(self, labels: list[Label], and_: str = "and") -> str:
        """"Kobayashi et al. (2020)" (several: "A (2019), B (2020) and C (2021)")."""
        links = [w.link(f"{_and(w.names, and_)} ({w.year})") for w in labels]
        return f" {and_} ".join([", ".join(links[:-1]), links[-1]]) if len(links) > 1 else links[0]

    def listing(self, keys: list[str], title: str, words=None, lang: str | None = None) -> str:
        """The reference list of `keys` (each once), as a heading and one raw HTML block;
        `words` gives the page's language's word for an English one of GLUE and MONTHS, `lang`
        picks the fields written in it."""
        glue = tuple((w, words(w)) for w in GLUE + MONTHS if words(w) != w) if words else ()
        labels = sorted({k: self.labels[k] for k in keys}.values(), key=lambda w: w.order)
        items = "\n".join(f'<li id="{html.escape(w.anchor)}">{self.entry_html(w.key, glue, lang)}</li>' for w in labels)
        return f'## {title}\n\n<ul class="references">\n{items}\n</ul>\n'


class CitingWorks:
    """`cite()`, `citet()` and `bibliography()` on a page: a mixin of the page renderer
    (livenumbers/markup.py), which records the works each page cites."""

    bibliography: Bibliography
    _references_title: str | None   # bibliography(title=...) on the page being rendered

    def _labels(self, keys: tuple[str, ...]) -> list[Label]:
        if not keys:
            raise NumberError("a citation names no work: cite(\"key\"), or several keys")
        labels = [self.bibliography.label(k) for k in keys]
        self._rendered.works += [w.key for w in labels]
        return labels

    def _cite(self, *keys: str) -> str:
        return self.bibliography.cite(self._labels(keys), self.words("and"), self.punctuation("; "))

    def _citet(self, *keys: str) -> str:
        return self.bibliography.citet(self._labels(keys), self.words("and"))

    def _references_here(self, title: str | None = None) -> str:
        self._references_title = title
        return PLACE

    def _with_references(self, text: str) -> str:
        """The page's reference list where `bibliography()` was called, else at its end."""
        keys = list(dict.fromkeys(self._rendered.works))
        title = self._references_title or self.words("References")
        words = None if self.language == self.languages.default else lambda w: self.catalogue.words(w, self.language) or w
        lang = None if self.language == self.languages.default else self.language
        listing = self.bibliography.listing(keys, title, words, lang) if keys else ""
        if PLACE in text:
            return text.replace(PLACE, listing)
        return text.rstrip("\n") + "\n\n" + listing if listing else text
