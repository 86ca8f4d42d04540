"""A page in its language: the words of tables and charts, dates and separators as the
page's language writes them, translated from the site's catalogue (livenumbers/i18n.py).

A mixin of the page renderer (livenumbers/markup.py): a source's tables and charts call
`words`, `data`, `phrase`, `punctuation` and `interval_label` on the renderer they are given.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

from . import formats as nums
from . import i18n


class InLanguage:
    """The renderer's words in the page's language (`self.language`, one of `self.languages`)."""

    language: str
    languages: i18n.Languages
    catalogue: i18n.Catalogue
    _marking_values: bool   # inside a table or chart's words in another language: values marked

    def words(self, english: str) -> str:
        """A plain English phrase of the engine or the source in the page's language (its
        values, if any, marked between i18n.OPEN and CLOSE)."""
        return self._translated(english)

    def data(self, text: str) -> str:
        """Text of the results (a sentence, a word, a model's name) in a table's or chart's
        words: never translated, and a value of the words around it ({0} in the catalogue's
        skeleton), so what needs translating does not change with the corpus."""
        return f"{i18n.OPEN}{i18n.unmark(text)}{i18n.CLOSE}" if self._marking_values else text

    def phrase(self, english: str) -> str:
        """One of a fixed set of English phrases the results choose (a verdict, a guess's
        name) in a table's or chart's words: translated on its own, then a value of the
        words around it."""
        return f"{i18n.OPEN}{self._translated(english)}{i18n.CLOSE}" if self._marking_values else english

    def _date(self, iso: str) -> str:
        """An ISO date as the page's language writes it: English keeps "2026-12-03", French
        "3 décembre 2026" (Babel's long form)."""
        return str(iso) if self.language == self.languages.default else nums.long_date(iso, self.language)

    def punctuation(self, english: str) -> str:
        """A separator as the page's language writes it ("; " -> " ; " in French), where the
        catalogue says so."""
        if self.language == self.languages.default:
            return english
        return self.catalogue.words(english, self.language) or english

    def interval_label(self) -> str:
        """"95% CI" ("IC à 95 %"), from the source's interval level."""
        level = nums.format_value("interval level", self.source.interval_level(self.results), "pct:0", self.language)
        label = self._translated(f"{i18n.OPEN}{level}{i18n.CLOSE} CI")
        return f"{i18n.OPEN}{label}{i18n.CLOSE}" if self._marking_values else label   # in a table: translated once

    def _translated(self, text: str) -> str:
        """Marked text (values between i18n.OPEN and CLOSE) in the page's language: English
        as it is, another language from the catalogue; text the catalogue lacks is a
        problem of the page, naming the entry to add."""
        if self.language == self.languages.default:
            return i18n.unmark(text)
        out, missing = self.catalogue.translate(text, self.language)
        if missing is not None:
            self._problem(f"no {self.language} translation of {missing!r} (add it to the catalogue, "
                          f"{self.language}.yml, with its values {{0}}, {{1}}, ... kept)")
        return out

    def _in_language(self, produce: Callable[[], Any], unit: Callable[[Any], Any]) -> Any:
        """`produce()` (a table, a chart's words) in the page's language: its values marked
        while it runs, then each of its parts translated by `unit`."""
        if self.language == self.languages.default:
            return produce()
        self._marking_values = True
        try:
            text = produce()
        finally:
            self._marking_values = False
        return unit(text)

    def _words_in_language(self, words):
        """A chart's caption and text alternative, each translated whole."""
        return dataclasses.replace(words, caption=self._translated(words.caption), alt=self._translated(words.alt))

    def _table_in_language(self, text: str) -> str:
        """A Markdown table's cells, and the other lines around it (a fold's summary), one by one."""
        out = []
        for line in text.split("\n"):
            if line.startswith("|") and set(line) <= set("|-"):
                out.append(line)
            elif line.startswith("| ") and line.endswith(" |"):
                out.append("| " + " | ".join(self._translated(c) for c in line[2:-2].split(" | ")) + " |")
            elif m := re.fullmatch(r"(\s*<summary>)(.*)(</summary>\s*)", line):
                out.append(m.group(1) + self._translated(m.group(2)) + m.group(3))
            elif line.strip() and not line.lstrip().startswith("<"):
                out.append(self._translated(line))
            else:
                out.append(line)
        return "\n".join(out)
