"""Every reader, in headless Chromium over the built site (served on 127.0.0.1 only):
axe-core's WCAG 2.0/2.1 A and AA rules on every page in both palettes, charts that carry
words, the palette toggle redrawing the charts, a phone's width, and print.

axe-core comes from the npm registry, pinned in package.json / package-lock.json and
installed by `make test` (`npm ci`). It is injected into the page under test only; the
published site never loads it. Screenshots go under pytest's tmp_path (the path is
printed: run with -s to see it, and look at them).
"""
from __future__ import annotations

import re

import pytest

from conftest import ROOT
from test_browser_site import (EDITIONS, NAV, NAV_EDITIONS, assert_charts_drawn, assert_local, chart_pages, language_of,
                               serve_sitemap, url_of, wait_for_charts)

pytestmark = pytest.mark.browser

AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("serious", "critical")

# Reader's system preference -> Material's scheme (mkdocs.yml's palette, by media query).
SCHEMES = {"light": "default", "dark": "slate"}

# The instrument's own widget (#instrument) is held to every axe rule like the rest of the
# page (no rule is exempted). Its phone layout and keyboard use have tests of their own
# (tests/test_browser_instrument.py), so the phone-width and print checks here, which
# measure prose and scroll boxes, skip inside it.
INSTRUMENT = "#instrument"
INSTRUMENT_KNOWN: set[str] = set()

PHONE = {"width": 390, "height": 844}
# About an A4 page's width at 96 dpi, less margins: narrower than the charts as drawn.
PAPER = {"width": 700, "height": 1000}


# -- fixtures and helpers --------------------------------------------------------------

@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE_JS.is_file():
        pytest.fail(f"axe-core is not installed ({AXE_JS.relative_to(ROOT)} is missing): "
                    "run `npm ci` in the project folder (`make test` does it)")
    return AXE_JS.read_text(encoding="utf-8")


@pytest.fixture
def open_page(browser):
    """open_page(url, scheme="light", viewport=...) -> a page in a fresh context whose
    system preference is that palette; console errors are collected on page.errors, the
    URL of every request on page.requests, the response to `url` is page.response."""
    contexts = []

    def open_(url: str, scheme: str = "light", viewport: dict | None = None):
        context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900}, color_scheme=scheme)
        contexts.append(context)
        page = context.new_page()
        page.errors, page.requests, page.response = [], [], None
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("request", lambda r: page.requests.append(r.url))
        if url:
            page.response = page.goto(url)
            page.wait_for_load_state("networkidle")
        return page

    yield open_
    for context in contexts:
        context.close()


def run_axe(page, axe_source: str) -> list[dict]:
    """axe-core's WCAG A/AA violations on the page as it is now, one dict per rule, each
    node marked with whether it lies inside the instrument's widget. Every rule still runs
    on every node; `resultTypes: ['violations']` only spares axe listing each node that
    passed (axe's documented option for large pages: our evidence pages hold ~17,000
    elements, and the listing took about half of each run)."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=axe_source)
    return page.evaluate(
        """([tags, instrument]) => axe.run(document, {runOnly: {type: 'tag', values: tags}, elementRef: true,
                                                   resultTypes: ['violations']})
             .then(r => r.violations.map(v => ({
                 id: v.id, impact: v.impact, help: v.help,
                 nodes: v.nodes.map(n => ({
                     target: n.target.join(' '), html: n.html.slice(0, 160),
                     summary: (n.failureSummary || '').split('\\n').slice(1).join(' ').slice(0, 240),
                     instrument: !!(n.element && n.element.closest(instrument)),
                 })),
             })))""",
        [WCAG_TAGS, INSTRUMENT],
    )


def blocking(violations: list[dict]) -> list[dict]:
    """The serious and critical violations, less the instrument's known ones (above)."""
    out = []
    for v in violations:
        if v["impact"] not in BLOCKING:
            continue
        nodes = [n for n in v["nodes"] if not (n["instrument"] and v["id"] in INSTRUMENT_KNOWN)]
        if nodes:
            out.append({**v, "nodes": nodes})
    return out


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['impact']} {v['id']} ({v['help']}), {len(v['nodes'])} element(s):")
        lines += [f"    {n['target']}: {n['summary'] or n['html']}" for n in v["nodes"][:6]]
    return "\n".join(lines)


def settle_charts(page, where: str) -> None:
    """Charts drawn (or the page has none), then a frame for a11y.js to mark scroll boxes."""
    assert_charts_drawn(wait_for_charts(page), where)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def wait_for_chart_scheme(page, scheme: str) -> None:
    """Every chart of the page drawn (an SVG) in Material's scheme `scheme`'s config
    (charts.js marks each with data-scheme); a page without charts passes at once."""
    page.wait_for_function(
        "(s) => [...document.querySelectorAll('div.vega-chart')].every(el => el.dataset.scheme === s && el.querySelector('svg'))",
        arg=scheme, timeout=20_000)


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb(color: str) -> tuple[int, int, int]:
    """'#e2e4e9', '#abc' or 'rgb(30, 33, 41)' -> (r, g, b)."""
    color = color.strip()
    if color.startswith("#"):
        h = color[1:]
        h = "".join(c * 2 for c in h) if len(h) == 3 else h[:6]
        return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))
    m = re.match(r"rgba?\((\d+),\s*(\d+),\s*(\d+)", color)
    assert m, f"not a colour: {color!r}"
    return tuple(int(x) for x in m.groups())


# What a drawn chart looks like: its SVG's background, the fill of every text in it, and
# the colours of its marks (points, bars, lines; the fill or stroke that is painted).
CHART_COLOURS = r"""() => [...document.querySelectorAll('div.vega-chart')].map(el => {
    const svg = el.querySelector('svg');
    const paint = p => { const s = getComputedStyle(p);
                         return s.fill !== 'none' && s.fill !== 'transparent' && !/rgba\(.*, 0\)/.test(s.fill) ? s.fill : s.stroke; };
    return {id: el.id, scheme: el.dataset.scheme || null,
            background: svg ? getComputedStyle(svg).backgroundColor : null,
            texts: svg ? [...new Set([...svg.querySelectorAll('text')].map(t => getComputedStyle(t).fill))] : [],
            marks: svg ? [...new Set([...svg.querySelectorAll('.mark-symbol path, .mark-rect path, .mark-line path')]
                                    .map(paint))].filter(c => c && c !== 'none') : []};
})"""


def assert_chart_contrast(page, where: str) -> list[dict]:
    """axe does not judge what is drawn in an SVG: every chart sits on the page's own
    background, its text keeps 4.5:1 on it and its marks 3:1 (WCAG 1.4.3 and 1.4.11)."""
    charts = page.evaluate(CHART_COLOURS)
    page_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    for c in charts:
        assert rgb(c["background"]) == rgb(page_bg), \
            f"{where} {c['id']}: chart background {c['background']} is not the page's {page_bg}"
        for fill in c["texts"]:
            ratio = contrast(rgb(fill), rgb(c["background"]))
            assert ratio >= 4.5, f"{where} {c['id']}: text {fill} on {c['background']} is {ratio:.2f}:1"
        assert c["marks"], f"{where} {c['id']}: no marks"
        for paint in c["marks"]:
            ratio = contrast(rgb(paint), rgb(c["background"]))
            assert ratio >= 3, f"{where} {c['id']}: mark colour {paint} on {c['background']} is {ratio:.2f}:1"
    return charts


# -- axe-core ----------------------------------------------------------------------------

def test_axe_catches_what_it_should(open_page, site_url, axe_source):
    """The check can fail: on a page with a link told apart by colour alone, light grey
    text on white and a scroll box a keyboard cannot reach, axe reports all three as blocking,
    and the instrument exemption does not hide a violation outside #instrument."""
    page = open_page(site_url)
    page.evaluate("""() => {
        const bad = document.createElement('div');
        bad.innerHTML = `
          <p style="color:#212121">Some words and <a href="#x" style="color:#333;text-decoration:none">a link</a> in them.</p>
          <p style="color:#bbb;background:#fff">Grey on white.</p>
          <div style="width:120px;overflow:auto"><div style="width:600px">wide, and nothing focusable inside</div></div>`;
        document.querySelector('article').prepend(bad);
    }""")
    found = {v["id"] for v in blocking(run_axe(page, axe_source))}
    assert {"link-in-text-block", "color-contrast", "scrollable-region-focusable"} <= found, found


# The header's toggle to the dark palette (Material's label for its second palette, in either
# language).
TO_DARK = "label[for='__palette_1']"


@pytest.mark.parametrize("src", NAV_EDITIONS)
def test_no_serious_axe_violations_in_either_palette(open_page, site_url, axe_source, src):
    """Also, in each edition (English, French), what tests/test_browser_site.py asked of every
    nav page on a load of its own: it loads (200) with a title in its language, every chart
    drawn, no console error and no request off 127.0.0.1. Then, on the same load, the header's
    toggle turns the page dark (every chart redrawn in the dark config) and the same checks
    run again: one load per page serves both palettes (a load is about a third of each check's
    time); that a reader who prefers dark gets the dark palette on loading is tested once per
    edition below."""
    page = open_page(site_url + url_of(src), scheme="light")
    assert page.response is not None and page.response.status == 200
    assert page.evaluate("document.documentElement.lang") == language_of(src), f"{src}: not lang={language_of(src)!r}"
    assert page.locator("article h1").count() >= 1, f"{src}: no title"
    for scheme in SCHEMES:
        if scheme == "dark":
            page.click(TO_DARK)
            wait_for_chart_scheme(page, SCHEMES[scheme])
        assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == SCHEMES[scheme], \
            f"{src}: not the {SCHEMES[scheme]} palette in {scheme}"
        settle_charts(page, f"{src} ({scheme})")
        found = blocking(run_axe(page, axe_source))
        assert not found, f"{src} ({scheme}):\n{describe(found)}"
        assert_chart_contrast(page, f"{src} ({scheme})")
        # Each chart is one image to assistive technology (its frame's role="img" and text
        # alternative): none of its marks or axes carries a label of its own (charts.js; a
        # sub-chart's title keeps Vega's).
        marked = page.evaluate("document.querySelectorAll('.vega-chart [aria-label]:not(.role-title-text)').length")
        assert marked == 0, f"{src} ({scheme}): {marked} chart marks carry ARIA of their own inside the chart's one image"
    assert_local(page, site_url)
    assert page.errors == [], page.errors


@pytest.mark.parametrize("edition", EDITIONS)
def test_a_reader_who_prefers_dark_gets_the_dark_palette_on_loading(open_page, site_url, built_site, edition):
    """System preference dark: the first chart page of each edition loads in the dark
    palette, its charts drawn in the dark config, with no console error."""
    src = chart_pages(built_site, [p for p in NAV_EDITIONS if language_of(p) == (edition or "en")])[0]
    page = open_page(site_url + src, scheme="dark")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate", \
        f"{src}: a reader who prefers dark did not get the slate palette"
    settle_charts(page, src)
    schemes = page.evaluate("[...document.querySelectorAll('div.vega-chart')].map(el => el.dataset.scheme)")
    assert schemes and set(schemes) == {"slate"}, f"{src}: charts drawn in {schemes}"
    assert page.errors == [], page.errors


# -- charts carry words ------------------------------------------------------------------

FIGURE = re.compile(
    r'<figure class="chart"><div class="chart-frame" role="img" aria-label="([^"]+)">'
    r'<div class="vega-chart" id="([^"]+)" data-spec="[^"]*"></div></div>'
    r"<figcaption>([^<]+)</figcaption></figure>"
)


def test_every_chart_is_a_figure_with_a_caption_and_a_text_alternative(built_site):
    """Each chart: a <figure> with a caption, and a frame that is one image named by a
    text alternative carrying numbers (written in Python from the same results)."""
    pages = chart_pages(built_site)
    assert pages
    for path in pages:
        html = (built_site / path / "index.html").read_text(encoding="utf-8")
        n_charts = html.count('class="vega-chart"')
        figures = FIGURE.findall(html)
        assert len(figures) == n_charts, f"{path}: {n_charts} charts, {len(figures)} complete figures"
        for alt, chart_id, caption in figures:
            assert len(caption.split()) >= 8, f"{path} {chart_id}: caption too thin: {caption!r}"
            assert re.search(r"\d", alt) and len(alt.split()) >= 15, f"{path} {chart_id}: alt too thin: {alt!r}"
            assert alt != caption


# -- palettes ------------------------------------------------------------------------------

def test_palette_toggle_redraws_charts_with_the_dark_config(open_page, site_url, built_site):
    """Light by system preference; the header's toggle turns the page and its charts
    dark (every chart redrawn, its text readable on its background); instant navigation
    draws the next page dark too; toggling back redraws them light."""
    targets = chart_pages(built_site, NAV)
    page = open_page("", scheme="light")
    serve_sitemap(page, site_url, built_site)
    page.goto(site_url + targets[0])
    page.wait_for_load_state("networkidle")
    settle_charts(page, targets[0])

    def charts_in(scheme: str, where: str) -> list[dict]:
        wait_for_chart_scheme(page, scheme)
        return assert_chart_contrast(page, where)

    light = charts_in("default", "light")
    page.click("label[title='Switch to the dark palette']")
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    dark = charts_in("slate", "after the toggle")
    assert rgb(dark[0]["background"]) != rgb(light[0]["background"])
    assert "rgb(226, 228, 233)" in dark[0]["texts"], f"not the dark config's text colour: {dark[0]['texts']}"

    # Instant navigation to the next chart page: drawn dark straight away.
    page.evaluate("window.__same_document = 'kept'")
    assert page.evaluate("""(url) => { const a = [...document.querySelectorAll('.md-sidebar--primary a.md-nav__link')]
                                         .find(a => a.href === url);
                                       if (a) a.setAttribute('data-test-target', '1'); return !!a; }""",
                         site_url + targets[1]), f"no nav link to {targets[1]}"
    page.click("[data-test-target]")
    page.wait_for_url(site_url + targets[1])
    assert page.evaluate("window.__same_document") == "kept", "a full reload, not instant navigation"
    charts_in("slate", targets[1])

    page.click("label[title='Switch to the light palette']")
    charts_in("default", "after toggling back")
    assert page.errors == [], page.errors


# -- phones and print ------------------------------------------------------------------------

# Whatever would run past the paper's edge: wider than the article when printed.
PRINT_OVERFLOW = """(skip) => {
    const edge = document.querySelector('article').getBoundingClientRect().right + 1;
    return [...document.querySelectorAll('article :is(table, pre, svg, img, figure, p, li)')]
        .filter(el => !el.closest(skip) && el.getClientRects().length && el.getBoundingClientRect().right > edge)
        .map(el => el.tagName + ': ' + el.textContent.trim().slice(0, 60));
}"""

# Prose that must fit the window; boxes that may scroll inside themselves instead.
PHONE_CHECK = """(skip) => {
    const W = window.innerWidth;
    const boxes = '.md-typeset__scrollwrap, pre, .highlight-ipynb, .jp-OutputArea-output, .chart-frame';
    const prose = [...document.querySelectorAll(
        'article :is(p, li, h1, h2, h3, h4, dt, dd, figcaption, blockquote, .admonition-title)')]
      .filter(el => !el.closest(boxes) && !el.closest(skip) && el.getClientRects().length)
      .filter(el => el.getBoundingClientRect().right > W + 0.5)
      .map(el => el.tagName + ': ' + el.textContent.trim().slice(0, 80));
    const unreachable = [...document.querySelectorAll('article *')]
      .filter(el => !el.closest(skip) && el.scrollWidth > el.clientWidth + 1
                    && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
      .filter(el => !(el.tabIndex >= 0 || el.querySelector('a, button, input, select, [tabindex]')))
      .map(el => el.tagName + '.' + el.className);
    return {page: document.documentElement.scrollWidth - W, prose, unreachable};
}"""


@pytest.mark.parametrize("src", NAV_EDITIONS)
def test_phone_width_and_print_fit(open_page, site_url, src):
    """At 390 x 844 nothing pushes the page sideways, no prose runs past the window, and
    whatever scrolls inside its own box (tables, code, charts) can be reached by keyboard.
    Then, on the same load, the window about an A4 page wide (layout follows the window
    and the media type, as print lays out at the paper's width) and printed: no navigation
    chrome, and no table, chart, code or prose past the paper's edge (on screen these
    scroll in their box). One load per page serves both."""
    page = open_page(site_url + url_of(src), viewport=PHONE)
    settle_charts(page, src)
    # The instrument's widget has its own phone and print tests (see INSTRUMENT above).
    found = page.evaluate(PHONE_CHECK, INSTRUMENT)
    assert found["page"] <= 0, f"{src}: the page is {found['page']} px wider than a 390 px phone"
    assert not found["prose"], f"{src}: prose past the right edge at 390 px: {found['prose']}"
    assert not found["unreachable"], f"{src}: scroll boxes a keyboard cannot reach: {found['unreachable']}"

    page.set_viewport_size(PAPER)
    page.emulate_media(media="print")
    chrome = page.evaluate("""() => ['.md-header', '.md-sidebar--primary', '.md-sidebar--secondary', '.md-footer']
                                    .filter(sel => document.querySelector(sel)?.getClientRects().length)""")
    assert chrome == [], f"{src}: navigation chrome printed: {chrome}"
    over = page.evaluate(PRINT_OVERFLOW, INSTRUMENT)
    assert over == [], f"{src}: past the paper's edge in print: {over}"


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_phone_screenshots(open_page, site_url, tmp_path, scheme):
    """The home page and an article with charts and tables at 390 px, in both palettes,
    for a person to look at (tmp_path is printed); the charts are drawn."""
    for name, path in (("home", ""), ("norm-lens", "articles/norm-lens/")):
        page = open_page(site_url + path, scheme=scheme, viewport=PHONE)
        settle_charts(page, path)
        shot = tmp_path / f"{name}-{scheme}-390.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        page.screenshot(path=str(tmp_path / f"{name}-{scheme}-390-top.png"))  # one screenful
        if path:  # the first chart, close up: drawn in the palette's colours
            page.locator("figure.chart").first.screenshot(path=str(tmp_path / f"{name}-{scheme}-chart.png"))
    print(f"\nscreenshots ({scheme}): {tmp_path}")


# -- print ------------------------------------------------------------------------------------

def test_print_gives_a_readable_page(open_page, site_url, tmp_path):
    """An article printed by a reader in the dark palette: no navigation chrome, dark ink
    on white, the charts redrawn light and fitted to the page, links underlined in the
    text's ink, wide tables not clipped; the reader's palette comes back after."""
    path = "articles/norm-lens/"
    page = open_page(site_url + path, scheme="dark", viewport=PAPER)
    settle_charts(page, path)
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    page.emulate_media(media="print")
    page.wait_for_function(
        "() => [...document.querySelectorAll('div.vega-chart')].every(el => el.dataset.scheme === 'default')",
        timeout=20_000)
    state = page.evaluate("""() => {
        const shown = sel => [...document.querySelectorAll(sel)].some(el => el.getClientRects().length > 0);
        const article = document.querySelector('article');
        const link = 'a[href]:not(.md-button):not(.headerlink)';
        const p = [...article.querySelectorAll('p')].find(p => p.querySelector(link));
        const a = p.querySelector(link);
        const css = el => getComputedStyle(el);
        return {
            chrome: ['.md-header', '.md-tabs', '.md-sidebar--primary', '.md-sidebar--secondary', '.md-footer']
                      .filter(shown),
            article: shown('article'),
            ink: css(p).color, paper: css(document.body).backgroundColor,
            link: css(a).color, underline: css(a).textDecorationLine,
            tables_clipped: [...document.querySelectorAll('.md-typeset__scrollwrap')]
                              .filter(el => css(el).overflowX !== 'visible').length,
            charts_wider: [...document.querySelectorAll('.vega-chart svg')]
                              .filter(svg => svg.getBoundingClientRect().right > article.getBoundingClientRect().right + 1).length,
            tables_wider: [...document.querySelectorAll('article table')]
                              .filter(t => t.getBoundingClientRect().right > article.getBoundingClientRect().right + 1).length,
        };
    }""")
    assert state["chrome"] == [], f"navigation chrome printed: {state['chrome']}"
    assert state["article"]
    assert contrast(rgb(state["ink"]), rgb(state["paper"])) >= 7, state
    assert rgb(state["paper"]) == (255, 255, 255), state
    assert state["link"] == state["ink"] and "underline" in state["underline"], state
    assert state["tables_clipped"] == 0 and state["charts_wider"] == 0 and state["tables_wider"] == 0, state
    pdf = tmp_path / "norm-lens.pdf"
    page.pdf(path=str(pdf), format="A4")
    assert pdf.stat().st_size > 20_000
    page.emulate_media(media="screen")
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    assert page.errors == [], page.errors
