"""The instrument page in a real browser, against the data the build published.

Every expected value is computed here in Python from `assets/instrument/**.json` with the
semantics of model/instrument.py (sink share = [CLS] + [SEP]; displayed row = the other
words, renormalized; content mass = their sum before that), so the page's script is
checked against an independent reading of the same files.
"""
from __future__ import annotations

import json
import re
from urllib.parse import urlparse

import pytest

from conftest import SCREENSHOTS

pytestmark = pytest.mark.browser

LENS_BUTTON = {"alpha": "α", "value_norm": "‖α v‖", "output_norm": "‖α f(x)‖"}
TINY = 0.10


# -- expected values, from the published JSON ------------------------------------------------

def load(built_site, path: str):
    return json.loads((built_site / "assets" / "instrument" / path).read_text(encoding="utf-8"))


def expected_row(view: dict, lens: str, w: int, layer: int, head: int) -> dict:
    row = view["rows"][lens][layer][head][w]
    K = len(row)
    content = [0.0 if j == w else x for j, x in enumerate(row[1 : K - 1])]
    mass = sum(content)
    return {
        "word": w, "layer": layer, "head": head, "sink": row[0] + row[K - 1], "mass": mass,
        "displayed": [x / mass if mass > 0 else 0.0 for x in content], "raw": row,
    }


def expected_rows(view: dict, lens: str, heads: dict[int, tuple[int, int]] | None = None) -> list[dict]:
    heads = heads or {}
    out = []
    for i, w in enumerate(view["shown"]):
        layer, head = heads.get(w, view["chosen"][lens][i])
        out.append(expected_row(view, lens, w, layer, head))
    return out


# -- what the page shows -----------------------------------------------------------------------

ROWS_JS = """rows => rows.map(r => ({
  word: +r.dataset.word, layer: +r.dataset.layer, head: +r.dataset.head,
  sink: +r.dataset.sink, mass: +r.dataset.mass, name: r.querySelector('th').textContent,
  badge: r.querySelector('.instr-badge').textContent, warn: r.classList.contains('instr-warn'),
  selected: r.getAttribute('aria-selected') === 'true',
  sinks: [...r.querySelectorAll('.instr-sink')].map(c => c.textContent),
  shades: [...r.querySelectorAll('.instr-cell')].map(c => c.style.getPropertyValue('--w')),
}))"""

DETAIL_JS = """rows => rows.map(r => [...r.querySelectorAll('.instr-num')].map(c => c.textContent))"""


def shown_rows(page) -> list[dict]:
    return page.eval_on_selector_all(".instr-row", ROWS_JS)


def pct(text: str) -> float:
    m = re.search(r"(\d+(?:\.\d+)?)%", text)
    assert m, f"no percentage in {text!r}"
    return float(m.group(1)) / 100


def assert_rows_match(got: list[dict], want: list[dict], view: dict, threshold: float) -> None:
    assert [g["word"] for g in got] == [w["word"] for w in want]
    assert [g["name"] for g in got] == [view["words"][w["word"]] for w in want]
    for g, w in zip(got, want):
        where = f"word {w['word']} ({view['words'][w['word']]!r})"
        assert (g["layer"], g["head"]) == (w["layer"], w["head"]), where
        assert g["sink"] == pytest.approx(w["sink"], abs=1e-9), where
        assert g["mass"] == pytest.approx(w["mass"], abs=1e-9), where
        assert pct(g["badge"]) == pytest.approx(w["sink"], abs=0.0005 + 1e-9), where  # printed to 0.1 %
        assert g["warn"] == (w["sink"] > threshold), where
        assert ("⚠" in g["badge"]) == (w["sink"] > threshold), where
        # The sink columns carry the raw [CLS] and [SEP] shares, in whole percent.
        assert [int(x) for x in g["sinks"]] == [round(w["raw"][0] * 100), round(w["raw"][-1] * 100)], where
        # The word cells are shaded by the displayed (renormalized) weight, the own column excepted.
        cells = [float(s) for s in g["shades"] if s]
        others = [x for j, x in enumerate(w["displayed"]) if j != w["word"]]
        assert cells == pytest.approx([x ** 0.5 for x in others], abs=0.0006), where


def assert_detail_matches(page, want: dict) -> None:
    """The selected row in detail: displayed and full-row shares for [CLS], words, [SEP]."""
    nums = page.eval_on_selector_all(".instr-bars tbody tr", DETAIL_JS)
    n = len(want["displayed"])
    assert len(nums) == n + 2
    for k, (shown, full) in enumerate(nums):
        assert pct(full) == pytest.approx(want["raw"][k], abs=0.0005 + 1e-9)
        if k in (0, n + 1) or k - 1 == want["word"]:
            assert shown == "—"
        else:
            assert pct(shown) == pytest.approx(want["displayed"][k - 1], abs=0.0005 + 1e-9)


def root_state(page) -> dict:
    return page.eval_on_selector("#instrument", "r => ({...r.dataset})")


def wait_state(page, **want) -> None:
    checks = " && ".join(f"r.dataset.{k} === {json.dumps(str(v))}" for k, v in want.items())
    page.wait_for_function(f"() => {{ const r = document.getElementById('instrument'); return r && {checks}; }}")


def assert_clean(page, site_url: str) -> None:
    assert page.console_errors == []
    host = urlparse(site_url).netloc
    off = [u for u in page.requests if not u.startswith("data:") and urlparse(u).netloc != host]
    assert off == [], f"requests off the site: {off}"


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"instrument-{name}.png"), full_page=True)


# -- tests -------------------------------------------------------------------------------------

def test_instrument_rows_lens_and_head(page, site_url, built_site):
    index = load(built_site, "index.json")
    model = index["default_model"]
    threshold = index["models"][model]["threshold"]
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")

    # The default sentence: one row per shown word, on the instrument's heads, under alpha.
    v0 = load(built_site, f"{model}/0.json")
    rows = shown_rows(page)
    assert len(rows) == len(v0["shown"])
    want0 = expected_rows(v0, "alpha")
    assert_rows_match(rows, want0, v0, threshold)
    assert rows[0]["selected"]
    assert_detail_matches(page, want0[0])
    tiny = sum(w["mass"] < TINY for w in want0)
    assert page.locator(".instr-note").count() == tiny
    assert page.locator(".instr-lens-btn[aria-pressed=true]").inner_text() == LENS_BUTTON["alpha"]
    shot(page, "default")

    # Another sentence: other words, and the fragment follows.
    s = 8
    page.locator(".instr-controls label:has-text('Sentence') select").select_option(str(s))
    wait_state(page, sentence=s)
    v8 = load(built_site, f"{model}/{s}.json")
    rows = shown_rows(page)
    assert [r["name"] for r in rows] != [r["name"] for r in shown_rows_from(v0)]
    assert [r["name"] for r in rows] == [v8["words"][w] for w in v8["shown"]]
    assert_rows_match(rows, expected_rows(v8, "alpha"), v8, threshold)
    assert page.evaluate("location.hash") == f"#{model}/{s}/{v8['shown'][0]}/alpha"
    tiny_rows = [w for w in expected_rows(v8, "alpha") if w["mass"] < TINY]
    for w in tiny_rows:  # the plain sentence under a row with a tiny content mass
        note = page.locator(f".instr-row[data-word='{w['word']}'] + .instr-note-row").inner_text()
        assert note.startswith("Content mass ")
        assert pct(note) == pytest.approx(w["mass"], abs=0.0005 + 1e-9)
        assert "went to [CLS]/[SEP]" in note

    # The lens toggle: the badges change, to the sink shares of the value-norm rows.
    alpha_badges = [r["badge"] for r in rows]
    page.get_by_role("button", name=LENS_BUTTON["value_norm"], exact=True).click()
    wait_state(page, lens="value_norm")
    rows = shown_rows(page)
    want = expected_rows(v8, "value_norm")
    assert_rows_match(rows, want, v8, threshold)
    assert [r["badge"] for r in rows] != alpha_badges
    assert page.evaluate("location.hash") == f"#{model}/{s}/{v8['shown'][0]}/value_norm"
    shot(page, "value-norm")

    # Another head for one word: that row changes, the others do not.
    w = v8["shown"][3]
    page.locator(f".instr-row[data-word='{w}']").click()
    wait_state(page, word=w)
    rows = shown_rows(page)
    chosen = tuple(v8["chosen"]["value_norm"][3])
    assert page.locator(".instr-layer").input_value() == str(chosen[0])
    assert page.locator(".instr-headsel").input_value() == str(chosen[1])
    layer = (chosen[0] + 1) % index["models"][model]["n_layers"]
    page.locator(".instr-layer").select_option(str(layer))
    page.wait_for_selector(f".instr-row[data-word='{w}'][data-layer='{layer}']")
    picked = (layer, chosen[1])
    after = shown_rows(page)
    want_picked = expected_rows(v8, "value_norm", {w: picked})
    assert_rows_match(after, want_picked, v8, threshold)
    changed = [a["word"] for a, b in zip(after, rows) if a != b]
    assert changed == [w]
    assert_detail_matches(page, want_picked[3])
    assert page.locator(f".instr-row[data-word='{w}'] .instr-picked").count() == 1
    assert page.evaluate("location.hash") == f"#{model}/{s}/{w}/value_norm/{picked[0]}.{picked[1]}"
    shot(page, "head")

    # ... or for every word; then back to the instrument's choice.
    page.locator(".instr-all").check()
    every = {x: picked for x in v8["shown"]}
    page.wait_for_function("() => [...document.querySelectorAll('.instr-row')].every(r => r.querySelector('.instr-picked'))")
    assert_rows_match(shown_rows(page), expected_rows(v8, "value_norm", every), v8, threshold)
    assert page.evaluate("location.hash").endswith(f"/all-{picked[0]}.{picked[1]}")
    page.locator(".instr-reset").click()
    page.wait_for_function("() => !document.querySelector('.instr-picked')")
    assert_rows_match(shown_rows(page), want, v8, threshold)
    assert page.evaluate("location.hash") == f"#{model}/{s}/{w}/value_norm"

    # The model picker.
    other = next(k for k in index["models"] if k != model)
    page.locator(".instr-controls label:has-text('Model') select").select_option(other)
    wait_state(page, model=other, sentence=s)
    vo = load(built_site, f"{other}/{s}.json")
    assert_rows_match(shown_rows(page), expected_rows(vo, "value_norm"), vo, index["models"][other]["threshold"])
    assert_clean(page, site_url)


def shown_rows_from(view: dict) -> list[dict]:
    return [{"name": view["words"][w]} for w in view["shown"]]


def test_instrument_fragment(page, site_url, built_site):
    index = load(built_site, "index.json")
    page.goto(site_url + "instrument/#l6/8/3/value_norm")
    page.wait_for_selector(".instr-row")
    wait_state(page, model="l6", sentence=8, word=3, lens="value_norm")
    v8 = load(built_site, "l6/8.json")
    assert page.locator(".instr-controls label:has-text('Sentence') select").input_value() == "8"
    assert page.locator(".instr-row[aria-selected=true]").get_attribute("data-word") == "3"
    assert page.locator(".instr-lens-btn[aria-pressed=true]").inner_text() == LENS_BUTTON["value_norm"]
    want = expected_rows(v8, "value_norm")
    assert_rows_match(shown_rows(page), want, v8, index["models"]["l6"]["threshold"])
    assert_detail_matches(page, want[v8["shown"].index(3)])
    assert page.locator(".instr-detail-title").inner_text().startswith(f"The row of “{v8['words'][3]}”")
    shot(page, "fragment")

    # A head in the fragment, then a hash change on the open page (a same-page link).
    page.evaluate("location.hash = '#l6/8/3/alpha/0.2'")
    wait_state(page, lens="alpha")
    page.wait_for_selector(".instr-row[data-word='3'][data-layer='0'][data-head='2']")
    assert_rows_match(shown_rows(page), expected_rows(v8, "alpha", {3: (0, 2)}), v8, 0.5)
    page.evaluate("location.hash = '#l3/2/1/output_norm'")
    wait_state(page, model="l3", sentence=2, word=1, lens="output_norm")
    v = load(built_site, "l3/2.json")
    assert_rows_match(shown_rows(page), expected_rows(v, "output_norm"), v, index["models"]["l3"]["threshold"])
    assert page.locator(".instr-controls label:has-text('Model') select").input_value() == "l3"

    # Rows are reachable from the keyboard: focus one, press Enter.
    w = v["shown"][2]
    page.locator(f".instr-row[data-word='{w}']").focus()
    page.keyboard.press("Enter")
    wait_state(page, word=w)
    assert page.evaluate("location.hash") == f"#l3/2/{w}/output_norm"
    assert page.evaluate("document.activeElement.dataset.word") == str(w)

    # A fragment that names nothing known falls back to the defaults, without an error.
    page.evaluate("location.hash = '#nope/99/x/y'")
    wait_state(page, model=index["default_model"], sentence=0)
    assert_clean(page, site_url)


def test_instrument_after_instant_navigation(page, site_url, built_site):
    """Material swaps pages without reloading scripts: the instrument starts from document$,
    and finds its data from a page at another depth.

    Material only swaps pages listed in sitemap.xml, and MkDocs writes an empty sitemap
    when mkdocs.yml has no `site_url`; the sitemap served here lists every built page, as
    a build with a site_url would."""
    pages = sorted(p.parent.relative_to(built_site).as_posix() for p in built_site.rglob("index.html"))
    locs = "".join(f"<url><loc>{site_url}{'' if p == '.' else p + '/'}</loc></url>" for p in pages)
    sitemap = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    page.route("**/sitemap.xml", lambda route: route.fulfill(status=200, content_type="application/xml", body=sitemap))
    page.goto(site_url + "articles/sink/")
    page.wait_for_selector(".md-content")
    page.evaluate("window.__same_document = true")
    page.evaluate("""() => {
        const a = document.createElement('a');
        a.href = '../../instrument/#l6/8/3/value_norm'; a.id = 'to-instrument'; a.textContent = 'row';
        document.querySelector('.md-content article').append(a);
    }""")
    page.click("#to-instrument")
    page.wait_for_selector(".instr-row")
    wait_state(page, model="l6", sentence=8, word=3, lens="value_norm")
    assert page.evaluate("window.__same_document === true"), "the page was reloaded, not swapped"
    v8 = load(built_site, "l6/8.json")
    assert len(shown_rows(page)) == len(v8["shown"])
    assert_clean(page, site_url)


def test_instrument_escapes_words(page, site_url, built_site):
    """Words reach the page as text: a word that looks like HTML is shown, not run."""
    bad = "<img src=x onerror=\"window.__pwned=1\">"
    view = load(built_site, "l6/0.json")
    view["words"][1] = bad
    page.route("**/assets/instrument/l6/0.json",
               lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(view)))
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    assert page.locator(".instr-row[data-word='1'] th").inner_text() == bad
    assert page.locator("#instrument img").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert_clean(page, site_url)
