"""Each edition its own site (livenumbers/editions.py, and the theme's overrides in
docs/templates/): its own search index, in its language, sitemap and 404 page, in its
folder; each page's canonical link and hreflang links name its own address and its version
in every edition, under the published root; Material's chrome in the edition's language.

On two sites: a small one of the tests' own (two pages in each edition, built in a second
by plain MkDocs from the project's mkdocs.yml, theme and editions hook, published at a
subpath as SITE_URL sets it), read as files and in Chromium; and the real site
(conftest.built_site), read as files (tests/test_browser_site.py searches it in Chromium).
"""
from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urljoin

import pytest

from conftest import ROOT, SCREENSHOTS, mkdocs_build, output, serve
from livenumbers import config, render
from test_browser_site import NAV, url_of

PUBLISHED = "https://example.org/attention/"   # SITE_URL: the site's root is not the server's
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML = "{http://www.w3.org/1999/xhtml}"

PAGES = {
    "index.md": "# Attention, measured\n\nThe lens and the sink.\n\n## Where to start\n\nHere.\n",
    "index.fr.md": "# L'attention, mesurée\n\nLa lentille et le puits.\n\n## Par où commencer\n\nIci.\n",
    "articles/sink.md": "# The sink problem\n\nWhat a row leaves out.\n\n## What a row is\n\nA row.\n",
    "articles/sink.fr.md": "# Le problème du puits\n\nCe qu'une ligne laisse de côté.\n\n## Ce qu'est une ligne\n\nUne ligne.\n",
}
# Site path -> (lang, the page's version in each edition, its sections in the search index)
SMALL = {
    "": ("en", {"en": "", "fr": "fr/"}, ["", "#where-to-start"]),
    "articles/sink/": ("en", {"en": "articles/sink/", "fr": "fr/articles/sink/"}, ["articles/sink/", "articles/sink/#what-a-row-is"]),
    "fr/": ("fr", {"en": "", "fr": "fr/"}, ["", "#par-ou-commencer"]),
    "fr/articles/sink/": ("fr", {"en": "articles/sink/", "fr": "fr/articles/sink/"},
                          ["articles/sink/", "articles/sink/#ce-quest-une-ligne"]),
}


class Page(html.parser.HTMLParser):
    """What a built page says about itself: <html lang>, its <link>s, Material's
    __config, its <h1>s and headings' permalink titles, and its text."""

    def __init__(self, path: Path):
        super().__init__()
        self.lang, self.links, self.titles, self.h1, self.text = None, [], [], [], []
        self.config, self._in = None, None
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.lang = a.get("lang")
        elif tag == "link":
            self.links.append(a)
        elif tag == "a" and "headerlink" in (a.get("class") or ""):
            self.titles.append(a.get("title"))
        elif tag == "script" and a.get("id") == "__config":
            self._in = "config"
        elif tag == "h1":
            self._in = tag

    def handle_endtag(self, tag):
        if tag in ("script", "h1"):
            self._in = None

    def handle_data(self, data):
        if self._in == "config":
            self.config = json.loads(data)
        elif self._in == "h1":
            self.h1.append(data)
        self.text.append(data)

    def canonical(self) -> str | None:
        return next((l["href"] for l in self.links if l.get("rel") == "canonical"), None)

    def alternates(self) -> dict[str, str]:
        """hreflang -> href of the language links (rel holds the token "alternate")."""
        return {l["hreflang"]: l["href"] for l in self.links
                if "alternate" in (l.get("rel") or "").split() and l.get("hreflang")}

    def heading(self) -> str:
        """The page's <h1> as text, without its permalink."""
        return " ".join("".join(self.h1).replace("\u00b6", "").split())

    def all_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def page_at(site: Path, path: str) -> Page:
    return Page(site / path / "index.html" if not path.endswith(".html") else site / path)


def search_index(site: Path, folder: str = "") -> dict:
    return json.loads((site / folder / "search" / "search_index.json").read_text(encoding="utf-8"))


def sitemap(site: Path, folder: str = "") -> dict[str, dict[str, str]]:
    """loc -> {hreflang: href} of a sitemap's <url>s."""
    root = ET.parse(site / folder / "sitemap.xml").getroot()
    return {u.findtext(f"{SITEMAP}loc"): {a.get("hreflang"): a.get("href") for a in u.iter(f"{XHTML}link")}
            for u in root.iter(f"{SITEMAP}url")}


# -- the small site ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    """The two-page site in both editions, as the project's mkdocs.yml builds it without the
    engine (a plain tree's config: `render.plain_config`, its editions hook copied beside
    it), published at PUBLISHED."""
    root = tmp_path_factory.mktemp("editions")
    docs = root / "docs"
    shutil.copytree(ROOT / "docs" / "templates", docs / "templates")
    (docs / "javascripts").mkdir()
    shutil.copy(ROOT / "docs" / "javascripts" / "editions.js", docs / "javascripts" / "editions.js")
    for path, text in PAGES.items():
        (docs / path).parent.mkdir(parents=True, exist_ok=True)
        (docs / path).write_text(text, encoding="utf-8")
    raw = config.read(ROOT / "mkdocs.yml")
    raw["plugins"] = [p for p in raw["plugins"] if not (isinstance(p, dict) and "mkdocs-jupyter" in p)]
    raw.update(nav=[{"Home": "index.md"}, {"Evidence": [{"The sink problem": "articles/sink.md"}]}],
               extra_javascript=["javascripts/editions.js"], extra_css=[])
    plain = config.read_text(render.plain_config(raw))
    assert plain["hooks"] == [render.EDITIONS_HOOK]
    (root / "mkdocs.yml").write_text(config.write(plain), encoding="utf-8")
    shutil.copy(ROOT / "livenumbers" / render.EDITIONS_HOOK, root / render.EDITIONS_HOOK)
    build = mkdocs_build(root, env={"SITE_URL": PUBLISHED})
    assert build.returncode == 0, output(build)
    return root / "site"


def test_the_editions_hook_imports_only_mkdocs():
    """A plain tree builds without the engine (tests/test_render.py): the hook `render`
    copies beside its mkdocs.yml must not import it."""
    code = (ROOT / "livenumbers" / render.EDITIONS_HOOK).read_text(encoding="utf-8").split('"""', 2)[2]
    imported = {m.group(1).split(".")[0] for m in re.finditer(r"^(?:from|import) ([\w.]+)", code, re.M)}
    assert imported <= {"__future__", "json", "logging", "os", "re", "mkdocs"}, imported


def test_each_edition_has_its_own_search_index_in_its_language(small_site):
    """English pages search /search/search_index.json, French ones /fr/search/search_index.json:
    each holds its own edition's pages only, addressed from its folder, and lunr reads it in
    its language (French also splits « l'attention » at the apostrophe)."""
    english, french = search_index(small_site), search_index(small_site, "fr")
    assert [d["location"] for d in english["docs"]] == SMALL[""][2] + SMALL["articles/sink/"][2]
    assert [d["location"] for d in french["docs"]] == SMALL["fr/"][2] + SMALL["fr/articles/sink/"][2]
    assert [d["title"] for d in french["docs"]] == ["L'attention, mesurée", "Par où commencer",
                                                    "Le problème du puits", "Ce qu'est une ligne"]
    assert english["config"]["lang"] == ["en"] and french["config"]["lang"] == ["fr"]
    assert re.split(french["config"]["separator"], "l'attention pondérée") == ["l", "attention", "pondérée"]
    assert re.split(french["config"]["separator"], "l’attention") == ["l", "attention"]
    assert re.split(english["config"]["separator"], "the model's rows") == ["the", "model's", "rows"]


@pytest.mark.parametrize("path", list(SMALL))
def test_a_page_reads_its_editions_files_and_links_its_own_address_in_each(small_site, path):
    """Material reads the search index and the sitemap from the page's `base`: the edition's
    folder. The canonical link is the page's own published address; the language links
    name this page in each edition (x-default: the root edition's), none an edition's home
    page unless this is one, and none is Material's selector's (rel="alternate" exactly:
    Material would fetch a sitemap.xml beside each, a missing file)."""
    lang, versions, _ = SMALL[path]
    page = page_at(small_site, path)
    assert page.lang == lang
    assert urljoin(PUBLISHED + path, page.config["base"]) == PUBLISHED + {"en": "", "fr": "fr/"}[lang]
    assert page.canonical() == PUBLISHED + path
    assert page.alternates() == {"en": PUBLISHED + versions["en"], "fr": PUBLISHED + versions["fr"],
                                 "x-default": PUBLISHED + versions["en"]}
    assert [l for l in page.links if l.get("rel") == "alternate"] == []


@pytest.mark.parametrize("path", list(SMALL))
def test_the_chrome_is_in_the_editions_language(small_site, path):
    """The footer's « Conçu avec », the headings' « Lien permanent », the nav's « Annexes »
    in French; English as it was. Material's own French (search, skip link, table of
    contents) comes with theme.language: fr."""
    lang = SMALL[path][0]
    page = page_at(small_site, path)
    text = page.all_text()
    words = {"en": ("Made with", "Permanent link", "Evidence"), "fr": ("Conçu avec", "Lien permanent", "Annexes")}
    made_with, permalink, evidence = words[lang]
    other = words["fr" if lang == "en" else "en"]
    assert f"{made_with} Material for MkDocs" in text and other[0] not in text
    assert page.titles and set(page.titles) == {permalink}
    assert evidence in text and other[2] not in text
    if lang == "fr":
        assert "Aller au contenu" in text and "Table des matières" in text
        assert 'placeholder="Rechercher"' in (small_site / path / "index.html").read_text(encoding="utf-8")


def test_each_edition_has_its_own_404_page(small_site):
    """/404.html in English (not the French build's), /fr/404.html in French: its words,
    lang, nav, and its edition's search (base) at the published root."""
    english, french = Page(small_site / "404.html"), Page(small_site / "fr" / "404.html")
    assert (english.lang, "".join(english.h1).strip()) == ("en", "404 - Not found")
    assert (french.lang, "".join(french.h1).strip()) == ("fr", "404 – Page introuvable")
    assert "Made with Material for MkDocs" in english.all_text() and "Evidence" in english.all_text()
    assert "Conçu avec Material for MkDocs" in french.all_text() and "Annexes" in french.all_text()
    assert english.config["base"] == "/attention/" and french.config["base"] == "/attention/fr/"
    assert 'href="/attention/fr/articles/sink/"' in (small_site / "fr" / "404.html").read_text(encoding="utf-8")


def test_each_edition_has_its_own_sitemap(small_site):
    """/sitemap.xml lists the English pages, /fr/sitemap.xml the French ones (a sitemap
    lists addresses under its own folder; Material swaps in place the pages its edition's
    lists), each with its version in every edition."""
    for folder, paths in (("", ["", "articles/sink/"]), ("fr", ["fr/", "fr/articles/sink/"])):
        found = sitemap(small_site, folder)
        assert list(found) == [PUBLISHED + p for p in paths]
        for path in paths:
            versions = SMALL[path][1]
            assert found[PUBLISHED + path] == {"en": PUBLISHED + versions["en"], "fr": PUBLISHED + versions["fr"],
                                               "x-default": PUBLISHED + versions["en"]}


def test_the_switcher_links_are_the_editions_under_the_published_root(small_site):
    """Material's language switcher (extra.alternate) links each edition's home from the
    site's root, wherever SITE_URL puts it: not the server's root (/, /fr/)."""
    raw = (small_site / "fr" / "articles" / "sink" / "index.html").read_text(encoding="utf-8")
    links = dict((lang, href) for href, lang in re.findall(r'<a href="([^"]*)" hreflang="(\w+)" class="md-select__link"', raw))
    assert {lang: urljoin(PUBLISHED + "fr/articles/sink/", href) for lang, href in links.items()} == \
        {"en": PUBLISHED, "fr": PUBLISHED + "fr/"}


@pytest.mark.browser
def test_in_chromium_each_edition_searches_and_switches_under_a_subpath(browser, small_site, tmp_path):
    """Served at /attention/: a French page's search finds French pages only (« attention »
    in « L'attention »), an English page's English only; Material fetches each edition's
    own sitemap and index, nothing beside a page's address; after instant navigation in
    French, the switcher lands on the same page in English under /attention/; the English
    404 page served at a French address keeps lang="en"."""
    (tmp_path / "attention").symlink_to(small_site, target_is_directory=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    try:
        with serve(tmp_path) as url:
            base = url + "attention/"

            def local_sitemap(route):   # the published addresses, on this server (Material matches the port)
                path = tmp_path / route.request.url[len(url):]
                route.fulfill(status=200, content_type="application/xml",
                              body=path.read_text(encoding="utf-8").replace(PUBLISHED, base))

            page.route("**/sitemap.xml", local_sitemap)

            def search(path: str, query: str) -> list[str]:
                page.goto(base + path)
                page.wait_for_load_state("networkidle")
                page.click(".md-search__input")
                page.keyboard.type(query)
                # Material's count of results ("1 document trouvé", "No matching documents"), once searched
                page.wait_for_function("/\\d|No matching|Aucun/.test(document.querySelector('.md-search-result__meta').textContent)")
                page.wait_for_timeout(300)
                return page.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")

            for path, query, folder in (("fr/articles/sink/", "lentille", "fr/"), ("fr/", "attention", "fr/"),
                                        ("articles/sink/", "lens", "")):
                found = search(path, query)
                assert found, f"{query!r} from {path}: nothing found"
                assert all(h.startswith(base + folder) and (folder or not h.startswith(base + "fr/")) for h in found), found
            assert search("articles/sink/", "lentille") == []
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "editions-search-en.png"))

            page.goto(base + "fr/")
            page.wait_for_load_state("networkidle")
            page.evaluate("window.__same_document = 'kept'")
            page.click(".md-sidebar--primary a.md-nav__link[href$='articles/sink/']")
            page.wait_for_url(base + "fr/articles/sink/")
            assert page.evaluate("window.__same_document") == "kept", "not instant navigation"
            page.hover(".md-header__option .md-select")
            page.click(".md-select__link[hreflang=en]")
            page.wait_for_url(base + "articles/sink/")
            page.wait_for_load_state("networkidle")
            assert page.evaluate("document.documentElement.lang") == "en"
            fetched = {r[len(base):] for r in requests if r.endswith((".xml", ".json"))}
            assert fetched == {"sitemap.xml", "fr/sitemap.xml", "search/search_index.json", "fr/search/search_index.json"}, fetched

            # A host that serves /404.html, the English one, at a French address: its lang stays
            # its text's (javascripts/editions.js settles lang only once instant navigation swapped a page in).
            page.route("**/fr/missing/", lambda route: route.fulfill(
                status=200, content_type="text/html", body=(small_site / "404.html").read_text(encoding="utf-8")))
            page.goto(base + "fr/missing/")
            page.wait_for_load_state("networkidle")
            assert page.locator("h1").inner_text() == "404 - Not found"
            assert page.evaluate("document.documentElement.lang") == "en"
            assert errors == []
    finally:
        context.close()


# -- the real site ---------------------------------------------------------------------------------

LOCAL = os.environ.get("SITE_URL", "http://127.0.0.1:8000/")   # built_site's site_url: mkdocs.yml's default


@pytest.fixture(scope="module")
def real_indexes(built_site) -> dict[str, dict[str, str]]:
    """edition folder -> {location: title} of its search index's pages (no sections)."""
    return {folder: {d["location"]: d["title"] for d in search_index(built_site, folder)["docs"] if "#" not in d["location"]}
            for folder in ("", "fr")}


@pytest.mark.parametrize("src", NAV)
def test_every_page_of_the_real_site_in_both_editions(built_site, real_indexes, src):
    """Each nav page, in each edition: in its edition's search index only, under its own
    title; its canonical link its own address; its language links its version in each
    edition; Material's base its edition's folder; the chrome in its language."""
    english, french = url_of(src), url_of(f"fr/{src}")
    for path, folder, lang in ((english, "", "en"), (french, "fr", "fr")):
        page = page_at(built_site, path)
        assert page.lang == lang
        assert page.canonical() == LOCAL + path
        assert page.alternates() == {"en": LOCAL + english, "fr": LOCAL + french, "x-default": LOCAL + english}, path
        assert urljoin(LOCAL + path, page.config["base"]) == LOCAL + (folder and folder + "/")
        here = path[len(folder) + 1:] if folder else path
        assert " ".join(real_indexes[folder][here].split()) == page.heading(), f"{path}: not its edition's page in its index"
        assert set(page.titles) <= {"en": {"Permanent link"}, "fr": {"Lien permanent"}}[lang]
        text = page.all_text()
        assert {"en": "Made with Material for MkDocs", "fr": "Conçu avec Material for MkDocs"}[lang] in text


def test_the_real_editions_indexes_sitemaps_and_404_pages(built_site, real_indexes):
    """No French page in the English index and none English in the French one (each holds
    one entry per page of its edition); each edition's sitemap lists its own pages; each
    its own 404 page; « Annexes » in the French nav."""
    pages = [url_of(src) for src in NAV]
    assert sorted(real_indexes[""]) == sorted(pages) and sorted(real_indexes["fr"]) == sorted(pages)
    assert not any(loc.startswith("fr/") for loc in (d["location"] for d in search_index(built_site)["docs"]))
    assert sorted(sitemap(built_site)) == sorted(LOCAL + p for p in pages)
    assert sorted(sitemap(built_site, "fr")) == sorted(LOCAL + "fr/" + p for p in pages)
    assert "".join(Page(built_site / "404.html").h1).strip() == "404 - Not found"
    assert "".join(Page(built_site / "fr" / "404.html").h1).strip() == "404 – Page introuvable"
    home = page_at(built_site, "fr/").all_text()
    assert "Annexes" in home and "Evidence" not in home


def test_the_table_of_contents_keeps_its_headings_spaces():
    """Python-Markdown's toc makes « compte-t-elle ? » (a narrow no-break space) plain: the side
    bar takes the heading's own text back, and leaves a title that differs in more than spaces."""
    from types import SimpleNamespace as Item

    from livenumbers import editions

    html = ('<h2 id="depth">La profondeur compte-t-elle\u202f?<a class="headerlink" href="#depth" title="Lien">¶</a></h2>\n'
            '<h3 id="label">Heading <em>as written</em></h3>')
    child = Item(id="label", title="A toc label of its own", children=[])
    top = Item(id="depth", title="La profondeur compte-t-elle ?", children=[child])
    page = Item(toc=[top])
    assert editions.on_page_content(html, page, None, None) == html
    assert top.title == "La profondeur compte-t-elle\u202f?" and child.title == "A toc label of its own"


def test_the_search_index_kept_under_serve_holds_one_entry_per_location():
    """mkdocs-static-i18n stacks every edition's entries onto the index Material keeps under
    `serve --dirty`: without this, each save doubled it (the seventh took 14 s)."""
    from types import SimpleNamespace as Obj

    from livenumbers import editions

    old, new = {"location": "a/", "text": "old"}, {"location": "a/", "text": "new"}
    kept = Obj(entries=[old, {"location": "a/#x", "text": "x"}, new, {"location": "a/#x", "text": "x"}])
    config = Obj(plugins={"material/search": Obj(search_index_prev=kept)})
    editions._forget_duplicates(config)
    assert kept.entries == [new, {"location": "a/#x", "text": "x"}]
