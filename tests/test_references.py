"""Works cited (livenumbers/references.py) and what a build was made from
(livenumbers/buildinfo.py): the project's bibliography, citations rendered as links into
the page's reference list, unknown keys named with page and line, the commit and the
lock's digest. No model and no results: a source without numbers renders the pages
(tests/test_toy.py builds, renders and publishes them with MkDocs)."""
from __future__ import annotations

import hashlib
import html
import re
import subprocess
from pathlib import Path

import pytest

from livenumbers import render
from livenumbers.buildinfo import BuildInfo
from livenumbers.markup import PageError, Renderer
from livenumbers.references import Bibliography, BibliographyError
from livenumbers.source import Source

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BIB = DOCS / "references.bib"


class NoNumbers(Source):
    def numbers(self, results: dict) -> dict:
        return {}


def renderer(bib: Path | None = BIB) -> Renderer:
    return Renderer(NoNumbers(), {}, bibliography=Bibliography(bib))


@pytest.fixture(scope="module")
def works() -> Bibliography:
    return Bibliography(BIB)


# -- the project's bibliography ----------------------------------------------------------------

def test_every_entry_has_a_doi_or_a_url(works):
    assert len(works.entries) >= 20
    for key, entry in works.entries.items():
        doi, url = entry.fields.get("doi"), entry.fields.get("url")
        assert doi or url, f"{key}: neither a doi nor a url"
        assert doi is None or re.fullmatch(r"10\.\d{4,9}/\S+", doi), (key, doi)
        assert url is None or url.startswith("https://"), (key, url)


def test_each_entry_links_its_doi_url_and_arxiv_id(works):
    for key, entry in works.entries.items():
        item = works.entry_html(key)
        if "doi" in entry.fields:
            assert f'href="https://doi.org/{entry.fields["doi"]}"' in item, key
        if "url" in entry.fields:
            assert f'href="{html.escape(entry.fields["url"])}"' in item, key
        if "eprint" in entry.fields:
            assert f'href="https://arxiv.org/abs/{entry.fields["eprint"]}"' in item, key


def test_a_work_is_named_by_its_authors_and_year(works):
    names = {k: (works.label(k).names, works.label(k).year) for k in
             ("efron1979bootstrap", "abnar2020quantifying", "kobayashi2020attention", "wu2016google", "fellbaum1998wordnet")}
    assert names == {"efron1979bootstrap": ("Efron", "1979"), "abnar2020quantifying": ("Abnar and Zuidema", "2020"),
                     "kobayashi2020attention": ("Kobayashi et al.", "2020"), "wu2016google": ("Wu et al.", "2016"),
                     "fellbaum1998wordnet": ("Fellbaum", "1998")}   # an editor, where there is no author
    assert "Attention is Not Only a Weight" in works.entry_html("kobayashi2020attention")   # the title as written


def test_two_works_that_would_read_the_same_get_a_letter_and_accents_are_decoded(tmp_path):
    bib = tmp_path / "references.bib"
    bib.write_text("@misc{b, author={G{\\'a}llego, Gerard}, title={B}, year={2022}, url={https://b}}\n"
                   "@misc{a, author={G{\\'a}llego, Gerard}, title={A}, year={2022}, url={https://a}}\n")
    out = renderer(bib).render("p.md", '{{ cite("b", "a") }}')
    assert out.text.startswith("([Gállego, 2022b](#ref-b); [Gállego, 2022a](#ref-a))")


# -- citations on a page --------------------------------------------------------------------------

def test_a_citation_links_to_its_entry_in_the_pages_reference_list():
    out = renderer().render("articles/a.md", '# A\n\nThe lens {{ cite("kobayashi2020attention") }};\n'
                                             '{{ citet("clark2019what") }} fold words.\n')
    assert out.text.startswith("# A\n\nThe lens ([Kobayashi et al., 2020](#ref-kobayashi2020attention));\n"
                               "[Clark et al. (2019)](#ref-clark2019what) fold words.\n\n## References\n\n")
    listing = out.text.split("## References\n", 1)[1]
    items = re.findall(r'<li id="ref-(\w+)">(.*?)</li>', listing)
    assert [k for k, _ in items] == ["clark2019what", "kobayashi2020attention"]    # by author
    assert 'href="https://doi.org/10.18653/v1/2020.emnlp-main.574"' in items[1][1]
    assert out.works == ["kobayashi2020attention", "clark2019what"]


def test_several_works_in_one_citation_each_listed_once():
    out = renderer().render("a.md", '{{ cite("abnar2020quantifying", "efron1979bootstrap") }} '
                                    '{{ citet("efron1979bootstrap", "clark2019what", "abnar2020quantifying") }}')
    first, _, listing = out.text.partition("\n")
    assert first == ("([Abnar and Zuidema, 2020](#ref-abnar2020quantifying); [Efron, 1979](#ref-efron1979bootstrap)) "
                     "[Efron (1979)](#ref-efron1979bootstrap), [Clark et al. (2019)](#ref-clark2019what) and "
                     "[Abnar and Zuidema (2020)](#ref-abnar2020quantifying)")
    assert re.findall(r'<li id="ref-(\w+)"', listing) == ["abnar2020quantifying", "clark2019what", "efron1979bootstrap"]


def test_a_french_pages_reference_list_has_french_words_and_the_works_own_fields():
    """The style's words (and, editors, In, URL:, months, an online venue, "and others") in
    the page's language; titles and venues as the file writes them, places and notes as it
    writes them in French where it does (address_fr, note_fr). English is pybtex's plain style."""
    from livenumbers import i18n

    langs = i18n.Languages(("en", "fr"))
    fr = Renderer(NoNumbers(), {}, bibliography=Bibliography(BIB), languages=langs,
                  catalogue=i18n.Catalogue.read(None, langs))
    out = fr.render("articles/a.fr.md", '{{ cite("clark2019what", "abnar2020quantifying", "wu2016google", "xiao2024efficient") }}')
    listing = dict(re.findall(r'<li id="ref-(\w+)">(.*?)</li>', out.text))
    assert listing["clark2019what"].startswith("Kevin Clark, Urvashi Khandelwal, Omer Levy et Christopher&nbsp;D. Manning. "
                                               "What Does")
    assert ". Dans Tal Linzen, " in listing["clark2019what"] and "Dieuwke Hupkes, éd., <em>Proceedings" in listing["clark2019what"]
    assert "Florence, Italie, août 2019." in listing["clark2019what"] and "URL\u00a0: <a" in listing["clark2019what"]
    assert ". En ligne, juillet 2020." in listing["abnar2020quantifying"] and "## Références" in out.text
    assert "Klaus Macherey et al. " in listing["wu2016google"] and "Prépublication arXiv:1609.08144" in listing["wu2016google"]
    assert "Prépublié sur arXiv en 2023" in listing["xiao2024efficient"] and "arXiv in" not in listing["xiao2024efficient"]
    english = dict(re.findall(r'<li id="ref-(\w+)">(.*?)</li>', renderer().render("a.md", '{{ cite("clark2019what", "wu2016google") }}').text))
    assert ("Omer Levy, and Christopher&nbsp;D. Manning" in english["clark2019what"]
            and ". In Tal Linzen, " in english["clark2019what"] and "Hupkes, editors, " in english["clark2019what"]
            and "Florence, Italy, August 2019." in english["clark2019what"] and "URL: <a" in english["clark2019what"])
    assert "Klaus Macherey, and others. " in english["wu2016google"] and "arXiv preprint arXiv:1609.08144" in english["wu2016google"]


def test_the_list_goes_where_bibliography_is_called_and_nowhere_without_citations():
    out = renderer().render("a.md", 'x {{ cite("efron1979bootstrap") }}\n\n{{ bibliography("Works cited") }}\n## More\n')
    assert out.text.index("## Works cited") < out.text.index('id="ref-efron1979bootstrap"') < out.text.index("## More")
    assert "References" not in out.text
    assert renderer().render("a.md", "# Nothing cited\n").text == "# Nothing cited\n"
    assert renderer().render("a.md", "{{ bibliography() }}").text == ""


@pytest.mark.parametrize("snippet, message", [
    ('{{ cite("kobayashi2020atention") }}',
     "a.md:3: unknown reference 'kobayashi2020atention'; did you mean 'kobayashi2020attention',"),
    ('{{ citet("clark2019what", "nobody1900") }}', "a.md:3: unknown reference 'nobody1900'"),
    ("{{ cite() }}", "a.md:3: a citation names no work"),
])
def test_an_unknown_work_is_a_page_error_naming_page_and_line(snippet, message):
    with pytest.raises(PageError) as exc:
        renderer().render("a.md", f"# A\n\n{snippet}\n")
    assert str(exc.value).startswith(message)


def test_without_the_bibliography_file_a_citation_names_the_missing_file(tmp_path):
    with pytest.raises(PageError, match=r"a.md:2: unknown reference 'x': there is no bibliography "
                                        r"\(docs/references.bib not found"):
        renderer(tmp_path / "docs" / "references.bib").render("a.md", '\n{{ cite("x") }}')


def test_a_bibliography_that_does_not_parse_names_its_file_and_line(tmp_path):
    bib = tmp_path / "references.bib"
    bib.write_text("@misc{a, title={x}}\n@misc{b, title={y}\n@misc{c, title={z}}\n")
    with pytest.raises(BibliographyError, match=r"references.bib: syntax error in line 3"):
        Bibliography(bib)


# -- the project's pages ------------------------------------------------------------------------------

# Being rewritten on another branch (issue 36): their citations come with that rewrite.
_RAW = re.compile(r"\{%-?\s*raw\s*-?%\}.*?\{%-?\s*endraw\s*-?%\}", re.S)   # syntax shown, not run (the colophon)
_CALL = re.compile(r"\{\{-?\s*cite[t]?\(([^)]*)\)")


def _cited(text: str) -> list[str]:
    """The keys a page's cite() and citet() calls name."""
    return [k for call in _CALL.findall(_RAW.sub("", text)) for k in re.findall(r'"([^"]+)"', call)]


def _prose(text: str) -> str:
    """A page without its live calls and code: the words a reader reads."""
    text = re.sub(r"```.*?```", "", _RAW.sub("", text), flags=re.S)
    return re.sub(r"\{\{.*?\}\}|\{%.*?%\}|`[^`]*`", "", text, flags=re.S)


def _pages() -> dict[str, str]:
    return {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md"))}


def test_every_key_a_page_cites_is_in_the_bibliography(works):
    cited = {page: _cited(text) for page, text in _pages().items()}
    assert {page: [k for k in keys if k not in works.labels] for page, keys in cited.items()
            if any(k not in works.labels for k in keys)} == {}
    assert sum(map(len, cited.values())) > 20


def test_every_work_a_page_names_by_its_authors_is_cited_on_that_page(works):
    """"Kobayashi et al.", "Abnar and Zuidema", "Abnar & Zuidema" in a page's prose: that
    page cites a work whose first author it is."""
    surname = {k: w.names.split(" ")[0] for k, w in works.labels.items()}
    missing = {}
    for page, text in _pages().items():
        keys, prose = set(_cited(text)), _prose(text)
        for name in sorted(set(surname.values())):
            if re.search(rf"\b{re.escape(name)}(?:\s+et\s+al\b|,?\s+and\s+[A-Z]|\s+&\s+[A-Z])", prose) \
                    and not any(surname.get(k) == name for k in keys):
                missing.setdefault(page, []).append(name)
    assert missing == {}


# -- what the build was made from ----------------------------------------------------------------------

def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def test_build_info_is_the_commit_its_date_and_the_locks_digest(tmp_path):
    lock = tmp_path / "docs" / "numbers.lock.json"
    lock.parent.mkdir()
    lock.write_text('{"numbers": {}}\n')
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "docs")
    git(tmp_path, "commit", "-qm", "first")
    short, date = git(tmp_path, "log", "-1", "--format=%h %cs").split()
    assert BuildInfo(lock.parent, lock).values == {"commit": short, "date": date, "year": date[:4],
                                                   "lock_sha256": hashlib.sha256(lock.read_bytes()).hexdigest(),
                                                   "updated": "unknown"}   # a lock with no history
    lock.write_text('{"numbers": {"x": 1}}\n')
    assert BuildInfo(lock.parent, lock).values["commit"] == f"{short}-dirty"    # a tracked file changed
    (tmp_path / "docs" / "new.md").write_text("untracked\n")
    git(tmp_path, "commit", "-qam", "second")
    assert BuildInfo(lock.parent, lock).values["commit"] == git(tmp_path, "log", "-1", "--format=%h")


def test_without_a_checkout_or_without_git_build_info_says_unknown(tmp_path, monkeypatch):
    unknown = {"commit": "unknown", "date": "unknown", "year": "unknown", "lock_sha256": "none (no numbers lock)",
               "updated": "unknown"}
    assert BuildInfo(tmp_path, tmp_path / "numbers.lock.json").values == unknown
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))    # no git command at all
    assert BuildInfo(tmp_path, tmp_path / "numbers.lock.json").values == unknown


def test_build_info_prints_a_placeholder_the_build_fills_in(tmp_path):
    out = renderer().render("a.md", 'Built from {{ build_info("commit") }} of {{ build_info("date") }}.')
    assert "unknown" not in out.text and out.text != "Built from  of ."
    assert BuildInfo(tmp_path, tmp_path / "lock").fill(out.text) == "Built from unknown of unknown."
    with pytest.raises(PageError, match=r"a.md:1: unknown build_info field 'comit'; did you mean 'commit'\?"):
        renderer().render("a.md", '{{ build_info("comit") }}')


def test_a_french_page_prints_the_build_date_in_french(tmp_path, monkeypatch):
    from livenumbers import i18n

    langs = i18n.Languages(("en", "fr"))
    fr = Renderer(NoNumbers(), {}, languages=langs, catalogue=i18n.Catalogue.read(None, langs))
    text = fr.render("a.fr.md", 'du {{ build_info("date") }}, commit {{ build_info("commit") }}').text
    english = renderer().render("a.md", 'of {{ build_info("date") }}').text
    info = BuildInfo(tmp_path, tmp_path / "lock")
    monkeypatch.setattr(BuildInfo, "values", {"commit": "abc1234", "date": "2026-12-03", "year": "2026", "lock_sha256": "x"})
    assert info.fill(text) == "du 3 décembre 2026, commit abc1234" and info.fill(english) == "of 2026-12-03"


def test_a_built_site_showing_citations_or_build_info_unrendered_is_caught(tmp_path):
    (tmp_path / "index.html").write_text(
        '<p>As shown {{ cite("a") }}.</p>\n<p>{{ citet("b") }}</p>\n<p>{{ bibliography() }}</p>\n'
        '<p>v {{ build_info("commit") }}</p>\n<pre><code>{{ cite("an example") }}</code></pre>\n', encoding="utf-8")
    assert [f.split(":")[1] for f in render.leftover_markup(tmp_path)] == ["1", "2", "3", "4"]


# -- citing the write-up itself ------------------------------------------------------------------------

def _how_to_cite() -> str:
    text = (DOCS / "colophon.md").read_text(encoding="utf-8")
    return "## How to cite" + text.split("## How to cite", 1)[1].split("\n## ", 1)[0]


def test_the_colophon_says_how_to_cite_this_build():
    """The colophon's block, rendered and filled in as a build does: this checkout's commit
    and date, the lock's digest, the title and authors CITATION.cff gives."""
    import yaml

    section = renderer().render("colophon.md", _how_to_cite()).text
    lock = DOCS / "numbers.lock.json"
    shown = BuildInfo(DOCS, lock).fill(section)
    digest = hashlib.sha256(lock.read_bytes()).hexdigest()
    assert shown.count(digest) == 3 and "\ue004" not in shown
    info = BuildInfo(DOCS, lock).values
    assert f"commit `{info['commit']}`, of {info['date']}" in shown and f'year   = "{info["year"]}"' in shown
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and f'title  = "{cff["title"]}"' in shown
    assert [a["name"] for a in cff["authors"]] == ["The Attention, measured team"] and '"{The Attention, measured team}"' in shown
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", str(cff["date-released"]))
    assert cff["version"] == re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
