"""The built site as a reader gets it, in headless Chromium, served on 127.0.0.1 only:
every page of the nav loads without a console error, every chart is drawn (an SVG with
marks, not an empty div: asserted where tests/test_browser_a11y.py loads each page),
Material's instant navigation still draws the next page's
charts, and no request leaves the host. Screenshots go to conftest.SCREENSHOTS (a
temporary folder, never the working tree): look at them.

The site is a build of a copy of the real project (conftest.built_site). A corpus
sentence that holds HTML is tested in tests/test_hooks.py (it needs its own corpus,
hence its own build).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SCREENSHOTS

pytestmark = pytest.mark.browser

# Every drawn mark of our charts lands in one of these (points, bars, lines).
MARKS = "svg .mark-symbol path, svg .mark-rect path, svg .mark-line path"


class _NavLoader(yaml.SafeLoader):
    """mkdocs.yml may carry MkDocs' own tags (!ENV, !relative); the nav never needs them."""


_NavLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def nav_pages() -> list[str]:
    """The source paths of every page in mkdocs.yml's nav, in nav order."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_NavLoader)
    found: list[str] = []

    def walk(items):
        for item in items:
            target = item if isinstance(item, str) else next(iter(item.values()))
            if isinstance(target, list):
                walk(target)
            elif not re.match(r"^[a-z]+://", target):
                found.append(target)

    walk(config["nav"])
    return found


def url_of(src: str) -> str:
    """Site path of a page (use_directory_urls): articles/sink.md -> articles/sink/; in
    another edition, fr/articles/sink.md -> fr/articles/sink/."""
    lang, _, rest = src.partition("/")
    if lang in EDITIONS[1:]:
        return f"{lang}/{url_of(rest)}"
    stem = src.rsplit(".", 1)[0]
    if stem == "index":
        return ""
    return (stem[: -len("index")] if stem.endswith("/index") else stem + "/")


NAV = nav_pages()
EDITIONS = ("", "fr")   # the default edition at /, the French one at /fr/ (mkdocs.yml's i18n plugin)
NAV_EDITIONS = NAV + [f"fr/{src}" for src in NAV]   # every page of the nav, in each edition


def language_of(src: str) -> str:
    return "fr" if src.startswith("fr/") else "en"


def chart_pages(built_site: Path, nav: list[str] = NAV_EDITIONS) -> list[str]:
    """The site paths of the pages of `nav` (both editions' by default) that hold a chart."""
    return sorted(url_of(p) for p in nav
                  if 'class="vega-chart"' in (built_site / url_of(p) / "index.html").read_text(encoding="utf-8"))


def wait_for_charts(page, timeout: float = 20_000) -> list[dict]:
    """Every div.vega-chart of the page, once each has drawn marks (or said it failed, or
    the time is up: the caller's assertion then names the charts left empty)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            """(sel) => [...document.querySelectorAll('div.vega-chart')]
                          .every(el => el.querySelector(sel) || /failed/.test(el.textContent))""",
            arg=MARKS, timeout=timeout,
        )
    except PlaywrightTimeout:
        pass
    return page.evaluate(
        """(sel) => [...document.querySelectorAll('div.vega-chart')].map(el => ({
              id: el.id, marks: el.querySelectorAll(sel).length, text: el.textContent.slice(0, 300)}))""",
        MARKS,
    )


def assert_charts_drawn(charts: list[dict], where: str) -> None:
    empty = [c for c in charts if c["marks"] == 0]
    assert not empty, f"{where}: charts not drawn: {empty}"


def assert_local(page, site_url: str) -> None:
    away = [u for u in page.requests if not u.startswith(site_url) and u.split(":", 1)[0] not in ("data", "blob", "about")]
    assert not away, f"requests left 127.0.0.1: {away}"


def serve_sitemap(page, site_url: str, built_site: Path) -> None:
    """Material only swaps pages listed in sitemap.xml, whose URLs must match the host
    and port it is served on; MkDocs writes an empty sitemap when mkdocs.yml has no
    `site_url`, and a port picked at random cannot be in it anyway. Serve the sitemap a
    build with `site_url` = this server would have."""
    pages = sorted(p.parent.relative_to(built_site).as_posix() for p in built_site.rglob("index.html"))
    locs = "".join(f"<url><loc>{site_url}{'' if p == '.' else p + '/'}</loc></url>" for p in pages)
    body = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    page.route("**/sitemap.xml", lambda route: route.fulfill(status=200, content_type="application/xml", body=body))


def test_the_nav_is_what_was_built(built_site):
    """Every nav entry became an HTML page (a notebook too, not a raw .ipynb download)."""
    assert NAV, "no nav in mkdocs.yml"
    missing = [p for p in NAV_EDITIONS if not (built_site / url_of(p) / "index.html").is_file()]
    assert not missing, f"nav entries with no built page: {missing}"
    raw = [p.relative_to(built_site).as_posix() for p in built_site.rglob("*.ipynb")]
    assert not raw, f"notebooks published as files, not pages: {raw}"


# Every nav page loading clean (200, a title, every chart drawn, no console error, no
# request off 127.0.0.1) is asserted on the page loads of tests/test_browser_a11y.py's
# test_no_serious_axe_violations_in_either_palette (one load, then the dark palette by the
# header's toggle): the same checks, without a load of their own.


def test_the_language_switcher_keeps_the_page_and_each_edition_its_language(page, site_url, built_site):
    """Material's switcher, whose editions share one root, would send a reader to the other
    edition's home, and its instant navigation keeps the first page's <html lang>
    (docs/javascripts/editions.js mends both): the switch lands on the same page and
    section in the other language, by a full load, and lang follows the address through
    instant navigation. Each edition searches its own pages (livenumbers/editions.py): a
    French word finds nothing from an English page, and French pages from a French one."""
    serve_sitemap(page, site_url, built_site)

    def switch(lang: str, expect: str) -> None:
        page.hover(".md-header__option .md-select")
        page.click(f".md-select__link[hreflang={lang}]")
        page.wait_for_url(site_url + expect)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("document.documentElement.lang") == lang, f"{expect}: lang is not {lang!r}"

    page.goto(site_url + "articles/rollout/#the-test")
    switch("fr", "fr/articles/rollout/#the-test")
    assert page.locator("h1").first.inner_text().startswith("Le rollout")
    page.evaluate("window.__same_document = 'kept'")
    page.click(".md-sidebar--primary a.md-nav__link[href$='norm-lens/']")
    page.wait_for_url(site_url + "fr/articles/norm-lens/")
    assert page.evaluate("window.__same_document") == "kept" and page.evaluate("document.documentElement.lang") == "fr"
    switch("en", "articles/norm-lens/")
    assert search(page, "lentille") == []
    page.keyboard.press("Escape")   # the search closed, the header's switcher in reach
    switch("fr", "fr/articles/norm-lens/")
    page.evaluate("window.__same_document = 'kept'")
    found = search(page, "lentille")
    assert found and all(href.startswith(site_url + "fr/") for href in found), found
    page.click(".md-search-result__link >> nth=0")
    page.wait_for_url(site_url + "fr/**")
    assert page.evaluate("window.__same_document") == "kept" and page.evaluate("document.documentElement.lang") == "fr"


def search(page, query: str) -> list[str]:
    """Material's search results (their addresses) for `query`, typed in the open page."""
    page.click(".md-search__input")
    page.fill(".md-search__input", "")
    page.keyboard.type(query)
    # Material's count of the results ("1 document trouvé", "No matching documents"), once searched.
    page.wait_for_function("/\\d|No matching|Aucun/.test(document.querySelector('.md-search-result__meta').textContent)")
    page.wait_for_timeout(300)
    return page.eval_on_selector_all(".md-search-result__link", "els => els.map(e => e.href)")


@pytest.mark.parametrize("edition, query, other", [("", "lens", "lentille"), ("fr/", "lentille", "harmful")])
def test_each_edition_searches_its_own_pages(page, site_url, built_site, edition, query, other):
    """A search from a page finds that edition's pages only: its own words, never the other
    edition's (each loads its own index, /search/ or /fr/search/: livenumbers/editions.py).
    The French search, looked at: SCREENSHOTS/search-fr.png."""
    page.goto(site_url + edition + "articles/sink/")
    page.wait_for_load_state("networkidle")
    assert search(page, other) == [], f"{other!r} found from {edition or 'the English edition'}"
    found = search(page, query)
    assert found, f"{query!r}: nothing found"
    mine = [h for h in found if h.startswith(site_url + edition) and (edition or not h.startswith(site_url + "fr/"))]
    assert mine == found, f"{query!r} from {edition or '/'}: other edition's pages {sorted(set(found) - set(mine))[:5]}"
    if edition:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "search-fr.png"))
    assert page.console_errors == []


def test_charts_survive_instant_navigation(page, site_url, built_site):
    """Click through the nav sidebar: Material swaps the page in place (the window and
    its marker survive) and the next page's charts are drawn, every time, back too."""
    targets = chart_pages(built_site, NAV)   # one edition's: its sidebar links to its own pages
    assert targets, "no page of the nav has a chart"
    serve_sitemap(page, site_url, built_site)
    start = next(url_of(p) for p in NAV if url_of(p) not in targets)
    page.goto(site_url + start)
    page.wait_for_load_state("networkidle")
    page.evaluate("window.__same_document = 'kept'")
    # Material emits document$ once the new page is swapped in: count the swaps.
    page.evaluate("window.__swaps = 0; document$.subscribe(() => { window.__swaps += 1; })")

    def click_nav(target: str) -> None:
        swaps = page.evaluate("window.__swaps")
        page.evaluate("document.querySelectorAll('[data-test-target]').forEach(a => a.removeAttribute('data-test-target'))")
        href = page.evaluate(
            """(url) => { const a = [...document.querySelectorAll('.md-sidebar--primary a.md-nav__link')]
                              .find(a => a.href === url);
                          if (!a) return null; a.setAttribute('data-test-target', '1');
                          return a.href; }""", site_url + target)
        assert href, f"no nav link to {target} on {page.url}"
        page.click("[data-test-target]")
        page.wait_for_url(site_url + target)
        page.wait_for_function("(n) => window.__swaps > n", arg=swaps)

    route = [*targets, start, targets[0]]
    for target in route:
        click_nav(target)
        assert page.evaluate("window.__same_document") == "kept", f"{target}: full reload, not instant navigation"
        if target in targets:
            assert_charts_drawn(wait_for_charts(page), target)
    for back_to in (start, targets[-1]):
        swaps = page.evaluate("window.__swaps")
        page.evaluate("history.back()")
        page.wait_for_url(site_url + back_to)
        page.wait_for_function("(n) => window.__swaps > n", arg=swaps)
    assert page.evaluate("window.__same_document") == "kept"
    assert_charts_drawn(wait_for_charts(page), f"back to {targets[-1]}")
    assert page.console_errors == []
    assert_local(page, site_url)


@pytest.mark.parametrize("name, path, width", [
    ("norm-lens", "articles/norm-lens/", 1280),
    ("norm-lens-phone", "articles/norm-lens/", 390),
    ("instrument", "instrument/", 1280),
])
def test_screenshots(browser, site_url, name, path, width):
    """Written for a human to look at (SCREENSHOTS); asserts only what a reader
    would notice at once: charts drawn, nothing wider than the window."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(site_url + path)
        page.wait_for_load_state("networkidle")
        assert_charts_drawn(wait_for_charts(page), path)
        page.wait_for_timeout(300)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} at {width}px is {overflow}px wider than the window"
        assert errors == []
    finally:
        context.close()
