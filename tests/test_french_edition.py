"""No English in the French edition: what a reader of /fr/ sees, read from the built site
(conftest.built_site) and, for what scripts draw (the instrument), from headless Chromium.

"What a reader sees" is every text node outside code, every title, alt text, aria label and
placeholder, and the words of each chart's spec (titles, descriptions, tooltips' titles,
legends' categories). The English a French page rightly shows is taken out first: the
corpus's sentences and words and the flip pairs (the data the study reads), the models' and
packages' names, the reference lists (the works' own titles), code, what the page marks as
English (`lang="en"`: a work's title, a citation of this site), a French quotation of the
corpus's words (« it »), a setting's name (`downstream_every`), the language
switcher's "English", and what a number printed before an update (`<del>`: quoted as it
was, in the page's "Updates"; an update's mark † does not split the text it follows).
What is left fails on an English word (ENGLISH below: words a French
sentence never uses), on E-notation ("1,3E-08", "1.2e-5"), on "pp" for percentage points and
on a hyphen-minus before a number ("-30" for « −30 »).
"""
from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

# Words that are English and never French. Deliberately not here: words French shares
# (table, pages, instrument, test, tokens, verdict, mutant, rollout, on, a, pair, est, sign).
ENGLISH = frozenset("""
the and of with which that is are was were from this these those their its than into
when where what how why only also would could should has have had been being above below
rows row heads share words sentence sentences layer layers median models reading readings
truth badge badges interval pairs held out displayed lens lenses every each none seen
under over between against within without after before while because since though
link made copy clipboard copied search back top skip contents previous next
loading download run find type your you our we they it he she
""".split())
E_NOTATION = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?[eE][-+−]?\d+\b")   # not a hash's "4094e2"
POINTS = re.compile(r"\bpp\b")
HYPHEN_MINUS = re.compile(r"(?<![\w\-−.,/])-\d")   # French writes a minus as U+2212 (not in "2026-12-03")
QUOTED = (re.compile(r"“([^“”]{1,60})”"), re.compile(r"«\s*([^«»]{1,60}?)\s*»"))   # “ ” within « », then « »
SKIPPED = {"script", "style", "code", "pre", "kbd", "svg", "math", "del"}


class _Visible(html.parser.HTMLParser):
    """A page's visible text nodes and reader-facing attributes, and its charts' specs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.specs: list[dict] = []
        self._skip: list[str] = []
        self._joined = False   # after an update's mark: the text goes on
        self.labels: list[str] = []   # the marks' titles and labels

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        if "number-update" in cls.split():   # a number's mark (livenumbers/updates.py): its † is no text
            self._skip.append("mark")
            return
        if self._skip and self._skip[-1] == "mark":   # the mark's link: its title and label are read
            self.labels += [a[k] for k in ("title", "aria-label") if a.get(k)]
        # Not a reader's: the reference lists, the language switcher, a notebook cell's hidden
        # copy of its code, and the copy buttons mkdocs-jupyter labels in English and
        # notebook.js in the page's language once loaded (test_browser_instrument.py's
        # test_notebook_copy_buttons_in_the_page_language looks at them as drawn).
        skip = (tag in SKIPPED or tag == "clipboard-copy" or {"references", "md-select", "clipboard-copy-txt"} & set(cls.split())
                or (a.get("lang") or "").startswith("en"))   # English marked as such: a work's title, a quotation
        if tag not in ("br", "img", "input", "link", "meta", "hr", "source", "wbr"):
            self._skip.append(tag if skip or self._skip and self._skip[-1] else "")
        if skip or any(self._skip):
            return
        self.texts += [a[k] for k in ("title", "alt", "aria-label", "placeholder") if a.get(k)]
        if "data-spec" in a:
            self.specs.append(json.loads(a["data-spec"]))

    def handle_endtag(self, tag):
        if self._skip:
            self._joined = self._skip.pop() == "mark"

    def handle_data(self, data):
        if self._joined and self.texts and not any(self._skip):
            self.texts[-1] += data
        elif not any(self._skip) and data.strip():
            self.texts.append(data)
        self._joined = False


def spec_words(spec) -> list[str]:
    """A chart spec's words a reader sees: titles, descriptions, tooltips' titles, and the
    string values of its datasets (legend categories; the corpus's words are taken out later)."""
    out: list[str] = []

    def walk(node, key=None):
        if isinstance(node, dict):
            for k, v in node.items():
                if k != "datasets":
                    walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in ("title", "description", "subtitle", "domain", "sort"):
            out.append(node)   # a legend lists its scale's domain; an axis, its sort order

    walk(spec)
    for rows in (spec.get("datasets") or {}).values():
        out += [v for row in rows if isinstance(row, dict) for v in row.values() if isinstance(v, str)]
    return out


def data_texts(results: dict) -> list[str]:
    """The English the study reads and a French page rightly quotes, longest first."""
    texts = set(results["sentences"])
    for m in results["models"].values():
        texts |= {m["checkpoint"], m["checkpoint"].split("/")[-1], m["model"]}
        for flips in (m["flips"], m["flips"]["null"], *m["flips"]["orders"].values()):
            for p in flips["lenses"]["alpha"]["pairs"]:
                texts |= set(p["sentences"]) | set(p["referents"])
                texts |= {w for s in p["sentences"] for w in re.findall(r"[A-Za-z]+", s)}
        for ex in m.get("examples", []):
            texts.add(ex["word"])
    for s in results["sentences"]:
        texts |= set(re.findall(r"[A-Za-z]+", s))   # a row's word, a tooltip's column
    return sorted(texts, key=len, reverse=True)


def english_in(texts: list[str], data: list[str]) -> list[str]:
    """Each text that still holds an English word, E-notation or "pp" once the data (its
    sentences, and a text made only of its words) is out."""
    words = set(w for w in data if " " not in w)
    phrases = [d for d in data if " " in d]
    found = []
    for text in texts:
        rest = text
        for phrase in phrases:
            if phrase in rest:
                rest = rest.replace(phrase, " ")
        # A French quotation of the corpus's words (« it », « the »): data, as a row's word is.
        for quoted in QUOTED:
            rest = quoted.sub(lambda m: " " if all(w in words for w in re.findall(r"[A-Za-z]+", m.group(1))) else m.group(0), rest)
        # A setting's name (`downstream_every`) is an identifier, not an English word.
        found_words = [w for w in re.findall(r"[A-Za-z][A-Za-z_-]*", rest) if "_" not in w]
        # The corpus's words, where a text is only those (a row's word, an axis's column): a
        # French text with an English word the corpus also has ("the", "of") still fails.
        only_data = all(w in words for w in found_words)
        hits = [w for w in found_words if w.lower() in ENGLISH and not only_data]
        if hits or E_NOTATION.search(rest) or POINTS.search(rest) or HYPHEN_MINUS.search(rest):
            found.append(f"{text.strip()[:160]!r}: {sorted(set(hits)) or 'E-notation, pp or a hyphen-minus'}")
    return found


@pytest.fixture(scope="module")
def data(session_results) -> list[str]:
    return data_texts(session_results[0])


def french_pages(site: Path) -> list[Path]:
    return sorted(p for p in (site / "fr").rglob("*.html") if "assets" not in p.parts)


def test_the_french_pages_show_no_english(built_site, data):
    """Every French page as built: text, attributes and chart specs."""
    pages = french_pages(built_site)
    assert len(pages) >= 20
    problems = []
    for page in pages:
        problems += [f"{page.relative_to(built_site)}: {p}" for p in english_in(_visible(page.read_text(encoding="utf-8")), data)]
    assert not problems, f"{len(problems)} English texts in the French edition:\n" + "\n".join(problems[:80])


def test_the_scanner_finds_english_e_notation_and_pp(data):
    """The gate itself: it must fail on each kind, and pass the data and French."""
    assert english_in(["La médiane des lignes est basse."], data) == []
    assert english_in(["« The hammer shattered the tile because it was so brittle. »"], data) == []
    assert english_in(["« the »", "le mot « it » renvoie", "sha256 6628c61bc5f4094e2274", "2026-12-03"], data) == []
    assert len(english_in(["the median row", "1,3E-08", "−30 pp", "à 1e-4 près", "-30 points"], data)) == 5
    # English made of words the corpus also has ("the", "word", "position") is still English.
    assert "the" in data and len(english_in(["the word's position", "la ligne of the mot"], data)) == 2


def test_an_english_sentence_in_a_french_table_fails(built_site, data):
    """The gate on a built French page with one English cell put into its first table."""
    page = built_site / "fr" / "articles" / "sink" / "index.html"
    html_text = page.read_text(encoding="utf-8")
    assert "<td" in html_text and english_in(_visible(html_text), data) == []
    damaged = html_text.replace("<td", "<td>Rows above half of the heads</td><td", 1)
    assert english_in(_visible(damaged), data) == ["'Rows above half of the heads': ['Rows', 'above', 'heads', 'of', 'the']"]


def _visible(html_text: str) -> list[str]:
    parser = _Visible()
    parser.feed(html_text)
    return parser.texts + parser.labels + [w for spec in parser.specs for w in spec_words(spec)]


def test_the_french_instrument_as_drawn_shows_no_english(page, site_url, data):
    """The instrument's interface, drawn by its script on /fr/instrument/."""
    page.goto(site_url + "fr/instrument/")
    page.wait_for_selector(".instr-register, .instr-root, [class^='instr']", timeout=30000)
    page.wait_for_timeout(1500)
    shown = page.evaluate("""() => {
        const root = document.querySelector('.md-content');
        // What the static test leaves out (code, English marked as such, a number as printed
        // before an update): hidden while read.
        const hidden = [...root.querySelectorAll('code, pre, kbd, del, [lang^="en"], .references')];
        hidden.forEach((e) => { e.dataset.display = e.style.display; e.style.display = 'none'; });
        const out = [root.innerText];
        hidden.forEach((e) => { e.style.display = e.dataset.display; });
        root.querySelectorAll('[title],[aria-label],[placeholder],option').forEach((e) =>
            out.push(e.getAttribute('title') || '', e.getAttribute('aria-label') || '',
                     e.getAttribute('placeholder') || '', e.tagName === 'OPTION' ? e.textContent : ''));
        return out.filter(Boolean);
    }""")
    lines = [line for text in shown for line in text.split("\n") if line.strip()]
    problems = english_in(lines, data)
    assert not problems, "\n".join(problems[:60])
