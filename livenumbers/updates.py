"""Updates and corrections, as readers see them: the lock's history (livenumbers/history.py) on the pages.

- A cited number whose printed text an entry changed, in the page's edition, carries a small
  mark (†) linking to that entry (the last such) in the page's "Updates": `Renderer.cite` puts
  a `marker` after the number, and `place_marks` makes it the link once the page is rendered
  (a mark inside an HTML tag, such as a chart's text alternative, is dropped; one inside a
  Markdown link's text goes after the link).
- At the end of each page, "Updates" lists, newest first, the entries that changed a number
  it cites in its edition: the date, the reason, and each such number's key, what it said
  and what it says (`section`).
- `{{ updates() }}` prints every entry, newest first (`listing`): the site-wide page of
  updates and corrections, which each page's section links to.
- Every page ends with the version a citation names: the lock's digest and the date of its
  last entry (`version`).

An edition whose language the reason was not given in shows it as written, marked as the
site's default language (`lang="en"`), inside the edition's own words; accept may be given
the reason in that language too (`--reason-in fr "..."`). A text value (a word, a verdict:
the results' own words) shows as the site's catalogue translates it, else marked so too.
"""
from __future__ import annotations

import functools
import html
import posixpath
import re
from dataclasses import dataclass
from typing import Callable

from . import formats
from .history import Change, Entry, language_of
from .i18n import CLOSE, OPEN, Languages, typeset, unmark

MARK_OPEN, MARK_CLOSE = "\ue006", "\ue007"   # private use: no page or value holds them
_DIGIT0 = 0xE020
_MARKER = re.compile(f"{MARK_OPEN}([{chr(_DIGIT0)}-{chr(_DIGIT0 + 9)}]+){MARK_CLOSE}")
# The rest of a Markdown link from a point in its text (which may run over lines, not paragraphs).
_LINK_REST = re.compile(r"(?:[^\[\]\n]|\n(?!\s*\n))*\]\([^()\n]*\)")


@dataclass(frozen=True)
class Edition:
    """How one edition writes the history: its language, the engine's words in it (from the
    catalogues; English where they lack one), its dates, its translation of a text value."""
    language: str
    default: str
    catalogue: object = None   # i18n.Catalogue

    @classmethod
    def of(cls, page: str, languages: Languages, catalogue) -> "Edition":
        return cls(languages.of(page), languages.default, catalogue)

    def words(self, text: str) -> str:
        """An English phrase (its values between i18n.OPEN and CLOSE) in this edition."""
        return unmark(text) if self.language == self.default else self.catalogue.translate(text, self.language)[0]

    def date(self, iso: str) -> str:
        """"2026-12-04"; in another language, as it writes a date in full ("4 décembre 2026")."""
        return iso if self.language == self.default else formats.long_date(iso, self.language)

    def value_text(self, slot: str, text: str) -> str:
        """A printed text as Markdown; a text value translated, or marked as the default's."""
        if self.language == self.default or formats.parse_format(slot.split(" ", 1)[1])[0] != "text":
            return formats.md_text(text)
        translated = self.catalogue.words(text, self.language)
        return formats.md_text(translated) if translated else f'<span lang="{self.default}">{formats.md_text(text)}</span>'


def marker(entry: int) -> str:
    """What follows a number changed by entry `entry` until `place_marks` makes it a link."""
    return MARK_OPEN + "".join(chr(_DIGIT0 + int(d)) for d in str(entry)) + MARK_CLOSE


def _entry_of(m: re.Match) -> int:
    return int("".join(str(ord(c) - _DIGIT0) for c in m.group(1)))


def anchor(entry: int) -> str:
    return f"update-{entry}"


def place_marks(text: str, entries: tuple[Entry, ...], edition: Edition) -> str:
    """A rendered page's Markdown with each marker made a link to its entry in the page's
    "Updates": dropped inside an HTML tag, moved after a Markdown link whose text holds it.
    (Found from each marker, not by reading every tag: a page's charts hold megabytes.)"""
    if MARK_OPEN not in text:
        return text

    @functools.cache   # one per entry: a page marks dozens of numbers with the same few
    def link(n: int) -> str:
        name = html.escape(edition.words(f"Changed on {_value(edition.date(entries[n - 1].date))}: see Updates"),
                           quote=True)
        return f'<sup class="number-update"><a href="#{anchor(n)}" title="{name}" aria-label="{name}">†</a></sup>'

    edits = []   # (start, end, replacement) in `text`: each marker, and each mark moved after a link
    for m in _MARKER.finditer(text):
        start = m.start()
        if _inside_tag(text, start):
            edits.append((start, m.end(), ""))   # an attribute (a chart's text alternative) holds no link
            continue
        paragraph = text.rfind("\n\n", 0, start) + 1
        in_brackets = text.rfind("[", paragraph, start) > text.rfind("]", paragraph, start)
        rest = _LINK_REST.match(text, m.end()) if in_brackets else None
        if rest:   # a link's text: the mark goes after the link, never inside it
            edits += [(start, m.end(), ""), (rest.end(), rest.end(), link(_entry_of(m)))]
        else:
            edits.append((start, m.end(), link(_entry_of(m))))
    out, at = [], 0
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [text[at:start], replacement]
        at = end
    return "".join(out) + text[at:]


def _inside_tag(text: str, at: int) -> bool:
    """Is `at` inside an HTML tag (after its "<name", before its ">")?"""
    opened = text.rfind("<", 0, at)
    return opened > text.rfind(">", 0, at) and (text[opened + 1:opened + 2].isalpha() or text[opened + 1:opened + 2] in "/!")


def _value(text: str) -> str:
    """`text` as a value of the words around it (the catalogue's {0})."""
    return f"{OPEN}{text}{CLOSE}"


def moved_in(entries: tuple[Entry, ...], language: str) -> list[tuple[int, Entry, dict[str, Change]]]:
    """(number, entry, the keys it changed in `language`'s edition) of every entry: what each
    page's `section` picks from (computed once per edition, not once per page)."""
    return [(n, e, e.moved(language)) for n, e in enumerate(entries, 1)]


def section(keys: set[str], moved: list[tuple[int, Entry, dict[str, Change]]], edition: Edition,
            listing_page: str | None) -> str:
    """The "Updates" a page citing `keys` ends with (Markdown; empty when no entry changed
    what one of them prints in its edition: `moved`, from `moved_in`). `listing_page`: the
    link to the page listing every entry, relative to this one (None: no page does)."""
    say = edition.words
    mine = [(n, e, {k: c for k, c in changed.items() if k in keys}) for n, e, changed in moved]
    mine = [(n, e, changed) for n, e, changed in mine if changed]
    if not mine:
        return ""
    every = f" [{say('Every update of the site')}]({listing_page})." if listing_page else ""
    lines = [f"## {say('Updates')}", "",
             say("Numbers on this page that changed after they were first published carry a mark (†) linking here.")
             + every, ""]
    for n, entry, changed in reversed(mine):
        whole = f" [{say('The whole update')}]({listing_page}#{anchor(n)})." if listing_page else ""
        lines += [f'<span id="{anchor(n)}"></span>**{_md(edition.date(entry.date))}.** {_reason(entry, edition)}{whole}',
                  ""]
        lines += _table(changed, edition, pages=None) + [""]
    return "\n".join(lines)


def listing(entries: tuple[Entry, ...], edition: Edition, languages: Languages, removed_shown: int = 30) -> str:
    """Every entry, newest first (what `{{ updates() }}` prints; Markdown)."""
    say, language = edition.words, edition.language
    if not entries:
        return say("No published number has changed yet.")
    count = lambda n: _value(formats.format_value("", n, "int", language))
    lines = []
    for n, entry in reversed(list(enumerate(entries, 1))):
        moved = entry.moved(language)
        lines += [f'### {_md(edition.date(entry.date))} <span id="{anchor(n)}"></span>', "", _reason(entry, edition), ""]
        facts = [say(f"Numbers printed otherwise: {count(len(moved))}.")] if moved else \
            [say(f"Numbers printed otherwise in {_value(_language_name(other, language))}: {count(len(entry.moved(other)))}.")
             for other in languages.codes if other != language and entry.moved(other)]
        facts += [say(f"Numbers no longer cited: {count(len(entry.removed))}.")] if entry.removed else []
        facts += [say(f"Numbers cited for the first time: {count(entry.added)}.")] if entry.added else []
        facts += [say(f"Commit {_value('`' + entry.commit + '`')}.")] if entry.commit else []
        facts += [say("That version of the lock recorded no printed texts: its values are shown as a later "
                      "version prints them.")] if entry.reformatted else []
        lines += [" ".join(facts), ""]
        if moved:
            lines += _table(moved, edition, pages=lambda p: languages.of(p) == language) + [""]
        if entry.removed:
            shown = sorted(entry.removed)[:removed_shown]
            keys = _value(", ".join(f"`{k}`" for k in shown))
            more = len(entry.removed) - len(shown)
            lines += [say(f"No longer cited: {keys}.") if not more else
                      say(f"No longer cited: {keys} and {count(more)} more (the lock's history lists them all)."), ""]
    return "\n".join(lines)


def _table(moved: dict[str, Change], edition: Edition, pages: Callable[[str], bool] | None) -> list[str]:
    """One row per key: what it said and says in the edition (and, with `pages`, the
    edition's pages that cited it then)."""
    say = edition.words
    head = [say("Number"), say("It said"), say("It says")] + ([say("Cited by")] if pages else [])
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for key, change in sorted(moved.items()):
        cells = [f"`{key}`", _texts(change.before, edition, withdrawn=True), _texts(change.after, edition)]
        if pages:
            cells.append(", ".join(f"`{p}`" for p in change.pages if pages(p)))
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _texts(printed: dict[str, str], edition: Edition, withdrawn: bool = False) -> str:
    """What a key printed in the edition, each text once, in slot order; `withdrawn` (what
    it said): each as text taken out of the page (<del>), quoted as it was printed."""
    shown: dict[str, str] = {}
    for slot, text in sorted(printed.items()):
        if language_of(slot) == edition.language and text not in shown:
            shown[text] = edition.value_text(slot, text)
    return ", ".join(f"<del>{t}</del>" if withdrawn else t for t in shown.values()) or "—"


def _language_name(code: str, language: str) -> str:
    """"fr" as `language` names it: "French", « anglais » (Babel)."""
    from babel import Locale

    return Locale.parse(code).get_display_name(language) or code


def _reason(entry: Entry, edition: Edition) -> str:
    """The entry's reason as a sentence, in its language's typography (a French reason may be
    typed with plain spaces before « : » and « ; », as a catalogue's entries are)."""
    text, written_in = entry.reason_in(edition.language, edition.default)
    text = _md(typeset(text if text.endswith((".", "!", "?", "…")) else text + ".", written_in))
    return text if written_in == edition.language else f'<span lang="{written_in}">{text}</span>'


def _md(text: str) -> str:
    return formats.md_text(text)


# -- every page of a build ---------------------------------------------------------------------------

def version(edition: Edition, values: dict[str, str], listing_page: str | None) -> str:
    """The line every page ends with: the version a citation names, the lock's digest and the
    date of its last entry (BuildInfo's values in the page's language), so "as of" is
    unambiguous; with a link to every update. In the page, not the theme's footer: a plain
    build of `render`'s tree prints the same."""
    every = f" [{edition.words('Updates and corrections')}]({listing_page})." if listing_page else ""
    digest, date = _value(f"`{values['lock_sha256']}`"), _value(values["updated"])
    cite = edition.words(f"Cite this version: numbers lock sha256 {digest}, as of {date}.")
    return f'<small class="lock-version">{cite}{every}</small>'


def finish(report, rendered: list, entries: tuple[Entry, ...], languages: Languages, catalogue, build,
           memo: dict | None = None) -> None:
    """Each page the gate rendered (`report.rendered`; a notebook's cells, its last one ending
    them) with its marks placed, then its "Updates" and the version line (`build`: the
    build's BuildInfo), linked to the page calling `updates()`. Nothing for a lock with no
    history: nothing published has changed, and no date says "as of". `memo`: the pages
    finished by the last call on the same entries, languages and catalogue (a serve
    rebuild's); left holding this call's."""
    if not entries:
        return
    memo = {} if memo is None else memo
    used: dict = {}
    listing_page = next((languages.base(out.page) for out in rendered if "updates()" in out.calls), None)
    cited: dict[str, set[str]] = {}
    for out in rendered:
        cited.setdefault(out.page, set()).update(c.key for c in out.citations)
    moved: dict[str, list] = {}   # language -> moved_in(entries, language)

    def finished(page: str, text: str, last: bool = True) -> str:
        key = (page, text, last, listing_page, frozenset(cited.get(page, ())), tuple(build.values.items()))
        if key not in used:
            used[key] = memo[key] if key in memo else finish_page(page, text, last)
        return used[key]

    def finish_page(page: str, text: str, last: bool) -> str:
        edition = Edition.of(page, languages, catalogue)
        text = place_marks(text, entries, edition)
        if not last:
            return text
        link = posixpath.relpath(listing_page, posixpath.dirname(page) or ".") if listing_page else None
        if edition.language not in moved:
            moved[edition.language] = moved_in(entries, edition.language)
        end = section(cited.get(page, set()), moved[edition.language], edition, link)
        values = build.in_language(None if edition.language == languages.default else edition.language)
        here = languages.base(page) == listing_page   # the listing itself: no link to itself
        parts = (text.rstrip("\n"), end, version(edition, values, None if here else link))
        return "\n\n".join(p for p in parts if p) + "\n"

    for page, text in report.rendered.items():
        report.rendered[page] = finished(page, text)
    for page, cells in report.notebook_cells.items():
        for index in cells:
            cells[index] = finished(page, cells[index], last=index == max(cells))
    memo.clear()
    memo.update(used)
