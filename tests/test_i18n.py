"""Editions in several languages (livenumbers/i18n.py): numbers formatted for the page's
language, tables' and charts' words from a catalogue, and the gate holding the editions
to the same numbers. On the toy write-up (livenumbers/starter/, built with mkdocs-static-i18n) and on
the real project's French edition."""
from __future__ import annotations

import re

import pytest
import yaml

from livenumbers import gate, i18n
from livenumbers.formats import format_value
from livenumbers.markup import PageError
from livenumbers.tables import span

from conftest import ROOT, toy_copy
from test_toy import TOY, run
from test_toy import toy  # noqa: F401  (the fixture: the starter, its lock accepted)

NNBSP, NBSP, MINUS = "\u202f", "\u00a0", "\u2212"


# -- numbers, as each language prints them -------------------------------------------------------

@pytest.mark.parametrize("value, fmt, english, french", [
    (0.2654, "pct:1", "26.5%", f"26,5{NNBSP}%"),
    (1.0, "pct:0", "100%", f"100{NNBSP}%"),
    (23341, "int", "23341", f"23{NNBSP}341"),
    (-0.031, "pp:1", "-3.1 pp", f"{MINUS}3,1{NBSP}points"),
    (-0.003, "pp:1", "-0.3 pp", f"{MINUS}0,3{NBSP}point"),   # singular below 2
    (-0.0001, "fixed:2", "-0.00", "0,00"),                    # no minus on a zero
    (2.345, "ratio:2", "2.35×", "2,35×"),
    (-0.5, "fixed:2", "-0.50", f"{MINUS}0,50"),
    (-0.012, "pct:1", "-1.2%", f"{MINUS}1,2{NNBSP}%"),
    (-23341, "int", "-23341", f"{MINUS}23{NNBSP}341"),
    (1.234e-5, "sci:1", "1.2e-05", f"1,2{NBSP}×{NBSP}10⁻⁵"),
    (-3.0e5, "sci:1", "-3.0e+05", f"{MINUS}3,0{NBSP}×{NBSP}10⁵"),
    (1e-4, "sci:0", "1e-04", "10⁻⁴"),          # a power of ten alone
    (1.0, "sci:1", "1.0e+00", "1,0"),           # no "× 10⁰"
    (4e-6, "below:1e-5", "1e-05", "10⁻⁵"),
    (True, "yesno", "yes", "oui"),
    (1, "ord", "1st", "1ᵉʳ"),
    (32, "ord", "32nd", "32ᵉ"),
    ("the", "text", "the", "the"),
])
def test_a_number_is_printed_in_the_pages_language(value, fmt, english, french):
    assert format_value("k", value, fmt) == english
    assert format_value("k", value, fmt, "fr") == french


def test_a_range_writes_its_unit_once_in_either_language():
    assert span(f"23,3{NNBSP}%", f"29,2{NNBSP}%") == f"23,3–29,2{NNBSP}%"
    assert span(f"-24.4 pp", f"-19.2 pp") == "-24.4 to -19.2 pp"
    assert span(f"{MINUS}24,4{NBSP}points", f"{MINUS}19,2{NBSP}points", to="à") == f"{MINUS}24,4 à {MINUS}19,2{NBSP}points"
    assert span(f"0,5{NBSP}point", f"3,0{NBSP}points") == f"0,5–3,0{NBSP}points"
    marked = f"{i18n.OPEN}23,3{NNBSP}%{i18n.CLOSE}"   # a table's bound, marked for translation
    assert i18n.unmark(span(marked, f"{i18n.OPEN}29,2{NNBSP}%{i18n.CLOSE}")) == f"23,3–29,2{NNBSP}%"


# -- pages and catalogues ----------------------------------------------------------------------

def test_a_pages_language_is_its_suffix():
    langs = i18n.Languages(("en", "fr"))
    assert langs.of("articles/sink.fr.md") == "fr" and langs.of("articles/sink.md") == "en"
    assert langs.of("notebooks/main-table.fr.ipynb") == "fr" and langs.of("v1.2.md") == "en"
    assert langs.base("articles/sink.fr.md") == "articles/sink.md"
    assert langs.page("index.md", "fr") == "index.fr.md" and langs.page("index.md", "en") == "index.md"
    assert i18n.Languages().of("index.fr.md") == "en"   # a site in one language has no suffixes


def test_a_catalogue_entry_keeps_its_values_and_may_reorder_them(tmp_path):
    (tmp_path / "fr.yml").write_text('"{0} of {1} rows": "{1} lignes, dont {0}"\n', encoding="utf-8")
    cat = i18n.Catalogue.read(tmp_path, i18n.Languages(("en", "fr")))
    text = f"{i18n.OPEN}3{i18n.CLOSE} of {i18n.OPEN}10{i18n.CLOSE} rows"
    assert cat.translate(text, "fr") == ("10 lignes, dont 3", None)
    assert cat.translate(f"{i18n.OPEN}3{i18n.CLOSE}–{i18n.OPEN}4{i18n.CLOSE}", "fr") == ("3–4", None)   # no words
    assert cat.translate("held out", "fr") == ("held out", "held out")   # missing: its skeleton named
    (tmp_path / "fr.yml").write_text('"{0} of {1} rows": "{0} lignes"\n', encoding="utf-8")
    with pytest.raises(i18n.CatalogueError, match=r"fr\.yml.*same values"):
        i18n.Catalogue.read(tmp_path, i18n.Languages(("en", "fr")))


# -- the toy, in two languages ---------------------------------------------------------------------

FRENCH = TOY.parent / "starter_fr"   # what `python -m livenumbers new --french` adds to the starter
FRENCH_TOY = (FRENCH / "docs" / "index.fr.md").read_text(encoding="utf-8")
CATALOGUE = yaml.safe_load((FRENCH / "docs" / "locales" / "fr.yml").read_text(encoding="utf-8"))


@pytest.fixture
def bilingual_toy(tmp_path, accepted_bilingual_toy):
    """A copy of the bilingual toy, its cache warm, no site built."""
    return toy_copy(accepted_bilingual_toy, tmp_path)


def test_one_build_makes_both_editions_with_the_same_numbers_in_each_language(bilingual_toy):
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    english = (bilingual_toy / "site" / "index.html").read_text(encoding="utf-8")
    french = (bilingual_toy / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    assert "the apple has 12,\n60% of them." in english and "<th>Share</th>" in english
    assert f"la pomme en a 12,\nsoit 60{NNBSP}%." in french
    assert "<th>Part</th>" in french and f"<td>25,0{NNBSP}%</td>" in french          # the table, in French
    assert "<td>poire</td>" in french and "Scores\u202f; la pomme mène avec 12." in french   # the chart's words, typeset (a narrow space before ";")
    assert "Efron, 1979" in french and "Ba et al. (2016)" in french and 'id="references">Références<' in french
    assert '"locale": {"number": {"decimal": ","' in french.replace("&#34;", '"').replace("&quot;", '"')


def test_a_french_page_missing_a_number_fails_the_build_naming_both_pages(bilingual_toy):
    page = bilingual_toy / "docs" / "index.fr.md"
    page.write_text(page.read_text(encoding="utf-8").replace('En tout {{ num("total", "int") }} points',
                                                             "En tout vingt points"), encoding="utf-8")
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert "the editions differ: index.fr.md and index.md cite different numbers" in build.stderr
    assert "index.md only: total" in build.stderr
    assert not (bilingual_toy / "site").exists()


def test_a_page_in_one_language_only_fails_the_build(bilingual_toy):
    (bilingual_toy / "docs" / "index.fr.md").rename(bilingual_toy / "docs" / "other.fr.md")
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert "index.md:1: no fr edition: index.fr.md does not exist" in build.stderr
    assert "other.fr.md:1: a fr page with no en page other.md" in build.stderr


def test_a_missing_translation_falls_back_where_the_i18n_plugin_says_so(bilingual_toy):
    """mkdocs-static-i18n's `fallback_to_default: true` publishes the English page in the
    French edition: the engine honours it, unless its `every_edition` option asks for all."""
    raw = yaml.safe_load((bilingual_toy / "mkdocs.yml").read_text(encoding="utf-8"))
    raw["plugins"][0]["i18n"]["fallback_to_default"] = True
    (bilingual_toy / "mkdocs.yml").write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    (bilingual_toy / "docs" / "index.fr.md").unlink()
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    assert "the apple has 12,\n60% of them." in (bilingual_toy / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    raw["plugins"][1]["live-numbers"]["every_edition"] = True
    (bilingual_toy / "mkdocs.yml").write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0 and "index.md:1: no fr edition: index.fr.md does not exist" in build.stderr


def test_a_charts_axis_titled_by_its_field_is_translated_or_reported(bilingual_toy):
    """The toy's bar chart names no axis title: Vega-Lite would show its fields' names,
    "fruit" and "score", in English on the French page."""
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    french = (bilingual_toy / "site" / "fr" / "index.html").read_text(encoding="utf-8")
    assert "&#34;title&#34;: &#34;score&#34;" in french or "&quot;title&quot;: &quot;score&quot;" in french
    cat = bilingual_toy / "docs" / "locales" / "fr.yml"
    cat.write_text(yaml.safe_dump({k: v for k, v in CATALOGUE.items() if k != "score"}, allow_unicode=True),
                   encoding="utf-8")
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert "index.fr.md:8: no fr translation of the chart text 'score'" in build.stderr, build.stderr


def test_the_catalogue_is_never_published(bilingual_toy):
    assert "locales" not in (bilingual_toy / "mkdocs.yml").read_text(encoding="utf-8")   # no exclude_docs for it
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode == 0, build.stdout + build.stderr
    assert not list((bilingual_toy / "site").rglob("fr.yml"))


def test_a_french_page_with_no_edition_built_is_an_error_not_an_english_page(toy):
    (toy / "docs" / "index.fr.md").write_text(FRENCH_TOY, encoding="utf-8")
    build = run(toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert ("index.fr.md:1: a page in French (fr), but no edition in fr is built: list mkdocs-static-i18n under "
            "`plugins:`") in build.stderr, build.stderr
    assert not (toy / "site").exists()


def test_words_the_catalogue_lacks_fail_the_page_with_the_entry_to_add(bilingual_toy):
    cat = bilingual_toy / "docs" / "locales" / "fr.yml"
    cat.write_text(yaml.safe_dump({k: v for k, v in CATALOGUE.items() if k != "Share"}, allow_unicode=True),
                   encoding="utf-8")
    build = run(bilingual_toy, "mkdocs", "build", "--strict")
    assert build.returncode != 0
    assert "index.fr.md:6: no fr translation of 'Share'" in build.stderr


# -- the real project's French edition -------------------------------------------------------------

def test_the_real_french_edition_cites_what_the_english_one_does(real_project):
    """Every page has its French page, and removing one number from one of them fails the gate."""
    from model.site.source import study_settings

    settings = study_settings(real_project)
    report = gate.run(settings)
    assert report.ok
    pages = settings.pages()
    assert [p for p in pages if ".fr." not in p] == [settings.languages.base(p) for p in pages if ".fr." in p]
    page = settings.docs_dir / "articles" / "sink.fr.md"
    text = page.read_text(encoding="utf-8")
    call = '{{ num("l6.alpha.worst_sink", "pct:1") }}'
    assert call in text
    page.write_text(text.replace(call, "beaucoup"), encoding="utf-8")
    with pytest.raises(PageError, match="articles/sink.fr.md and articles/sink.md cite different numbers"):
        gate.run(settings)



def test_a_charts_words_and_number_symbols_are_the_languages(tmp_path):
    """Titles, a tooltip's field names (shown when it has no title) and a legend's categories
    come from the catalogue; Vega formats the axes' numbers with the language's symbols."""
    (tmp_path / "fr.yml").write_text('share: part\nrows: lignes\nlens: lentille\nthe value lens: la lentille de valeur\n',
                                     encoding="utf-8")
    cat = i18n.Catalogue.read(tmp_path, i18n.Languages(("en", "fr")))
    spec = {"title": "share", "datasets": {"d": [{"lens": "the value lens", "word": "cat", "share": 0.5}]},
            "encoding": {"color": {"field": "lens", "type": "nominal", "title": "lens"},
                         "tooltip": [{"field": "word", "type": "nominal"}, {"field": "share", "title": "rows"}]}}
    missing = []
    out = i18n.localized_spec(spec, "fr", cat, missing.append)
    assert out["title"] == "part" and out["encoding"]["color"]["title"] == "lentille"
    assert out["datasets"]["d"][0] == {"lens": "la lentille de valeur", "word": "cat", "share": 0.5}   # data words stay
    assert out["encoding"]["tooltip"][1]["title"] == "lignes"
    assert out["encoding"]["tooltip"][0]["title"] == "word" and missing == [
        "no fr translation of the chart text 'word' (add it to the catalogue, fr.yml)"]   # a bare field name is asked for
    assert out["config"]["locale"]["number"] == i18n.number_locale("fr")
    assert i18n.number_locale("fr")["minus"] == MINUS and i18n.number_locale("fr")["percent"] == f"{NNBSP}%"
    assert i18n.number_locale("en")["minus"] == "-" and i18n.number_locale("en")["decimal"] == "."


def test_an_axis_of_phrases_and_a_legends_domain_are_translated_as_their_rows():
    """A chart's categories on an axis (named in its usermeta) are the language's, and a field's
    listed values (its sort order, its scale's domain) follow its rows: a French legend listing
    English categories would show them, and colour none of the French rows."""
    cat = i18n.Catalogue.read(ROOT / "docs" / "locales", i18n.Languages(("en", "fr")))
    spec = {"usermeta": {"phrases": ["set"]},
            "datasets": {"d": [{"set": "null pairs", "test": "does not", "word": "cat"}]},
            "encoding": {"y": {"field": "set", "type": "nominal", "sort": ["null pairs"], "title": None},
                         "x": {"field": "word", "type": "nominal", "sort": ["cat"], "title": None},
                         "color": {"field": "test", "type": "nominal", "scale": {"domain": ["does not"]},
                                   "title": None}}}
    missing = []
    out = i18n.localized_spec(spec, "fr", cat, missing.append)
    assert missing == []
    assert out["datasets"]["d"][0] == {"set": "paires nulles", "test": "ne passe pas", "word": "cat"}
    assert out["encoding"]["y"]["sort"] == ["paires nulles"] and out["encoding"]["x"]["sort"] == ["cat"]
    assert out["encoding"]["color"]["scale"]["domain"] == ["ne passe pas"]


# -- a corpus change needs no translator -----------------------------------------------------------

def test_the_french_words_of_tables_and_charts_outlive_a_corpus_change(session_results):
    """Every table and chart the French pages show, rendered over results whose sentences,
    flip pairs and example rows (word, layer, head) are all changed: not one skeleton the
    catalogue lacks, since the results' own text is a value (num.data, r.data), like a number."""
    import copy

    from livenumbers.markup import Renderer
    from model.site.source import StudySource

    results, _ = session_results
    changed = copy.deepcopy(results)
    changed["sentences"] = [f"Edited {i}: {s}" for i, s in enumerate(changed["sentences"])]
    for m in changed["models"].values():
        for ex in m["examples"]:
            ex.update(word=f"zz{ex['word']}", layer=ex["layer"] + 100, head=ex["head"] + 100)
        for flips in (m["flips"], m["flips"]["null"], *m["flips"]["orders"].values()):
            for p in flips["lenses"]["alpha"]["pairs"]:
                p["sentences"] = [f"Zz {s}" for s in p["sentences"]]
                p["referents"] = [f"zz{w}" for w in p["referents"]]
    langs = i18n.Languages(("en", "fr"))
    catalogue = i18n.Catalogue.read(ROOT / "docs" / "locales", langs)
    source = StudySource.in_docs(ROOT / "docs")
    calls = sorted({m.group(0) for page in (ROOT / "docs").rglob("*.fr.md")
                    for m in re.finditer(r'\{\{ (?:chart|table)\("[^"]*"(?:, \w+="[^"]*")*\) \}\}', page.read_text(encoding="utf-8"))})
    assert len(calls) > 40
    for res in (results, changed):
        renderer = Renderer(source, res, lambda chart_id: {}, languages=langs, catalogue=catalogue)
        for call in calls:
            renderer.render("articles/x.fr.md", call)   # a missing translation raises, naming its skeleton
    out = Renderer(source, changed, lambda chart_id: {}, languages=langs, catalogue=catalogue).render(
        "articles/x.fr.md", '{{ chart("row_example", model="l6", name="typical") }}').text
    ex = next(e for e in changed["models"]["l6"]["examples"] if e["name"] == "typical")
    assert f"«{NBSP}Edited {ex['sentence']}: " in out and f"couche {ex['layer']}, tête {ex['head']}" in out   # in French words
