"""The instrument page in a real browser, against the data the build published.

Every expected value is computed here in Python from `assets/instrument/**.json` with
model/instrument.py itself (lens rows, word folding, sink share, displayed rows) on the
file's token-level arrays, so the page's script (docs/javascripts/instrument/core.js)
is checked against an independent reading of the same files. Then what a reader needs
besides the numbers: the sentence picker, links, the keyboard alone, a phone, both
palettes, instant navigation, and words that look like markup.
"""
from __future__ import annotations

import json
import re
from urllib.parse import urlparse

import numpy as np
import pytest

from model import instrument
from model.views import dequantize_alpha

pytestmark = pytest.mark.browser


# -- expected values, from the published JSON ------------------------------------------------

def load(built_site, path: str):
    return json.loads((built_site / "assets" / "instrument" / path).read_text(encoding="utf-8"))


def word_rows(view: dict, lens: str) -> np.ndarray:
    """[L, nh, n_words, K] word rows of the file, by model/instrument.py."""
    L, nh, T = view["n_layers"], view["n_heads"], len(view["tokens"])
    alpha = dequantize_alpha(view["alpha"], (L, nh, T, T))
    norms = np.ones((L, nh, T)) if lens == "alpha" else np.reshape(view[lens], (L, nh, T))
    return instrument.word_rows(instrument.lens_rows(alpha, norms), instrument.word_map(view["word_ids"]))


def expected_rows(view: dict, lens: str, heads: dict[int, tuple[int, int]] | None = None) -> list[dict]:
    heads = heads or {}
    rows = word_rows(view, lens)
    effect_rows = word_rows(view, "output_norm")   # the warning's reading, on the same head (Part 9)
    wm = instrument.word_map(view["word_ids"])
    out = []
    for i, w in enumerate(view["shown"]):
        layer, head = heads.get(w, view["chosen"][lens][i])
        row = rows[layer, head, w]
        shown, mass = instrument.displayed_rows(rows[layer, head], wm)
        punct = sum(row[k + 1] for k, p in enumerate(view["punct"]) if p and k != w)
        out.append({"word": w, "layer": layer, "head": head, "sink": float(instrument.sink_share(row, wm)),
                    "on_alpha_head": [layer, head] == list(view["chosen"]["alpha"][i]),   # where the warning was calibrated
                    "effect": float(instrument.sink_share(effect_rows[layer, head, w], wm)),
                    "mass": float(mass[w]), "punct": float(punct), "displayed": shown[w].tolist(), "raw": row.tolist()})
    return out


# -- what the page shows -----------------------------------------------------------------------

ROWS_JS = """rows => rows.map(r => ({
  word: +r.dataset.word, layer: +r.dataset.layer, head: +r.dataset.head,
  sink: +r.dataset.sink, effect: +r.dataset.effect, punct: +r.dataset.punct, mass: +r.dataset.mass,
  name: r.querySelector('th').textContent, sinkText: r.querySelector('.instr-sink-share').textContent,
  badge: r.querySelector('.instr-badge').textContent, warn: r.classList.contains('instr-warn'),
  open: r.getAttribute('aria-current') === 'true', punctText: r.querySelector('.instr-punct-share').textContent,
  sinks: [...r.querySelectorAll('.instr-sink')].map(c => c.textContent),
  shades: [...r.querySelectorAll('.instr-cell')].map(c => c.style.getPropertyValue('--w')),
  punctCells: [...r.querySelectorAll('.instr-cell')].map(c => c.classList.contains('instr-punct')),
}))"""

DETAIL_JS = """rows => rows.map(r => [...r.querySelectorAll('.instr-num')].map(c => c.textContent))"""


def shown_rows(page) -> list[dict]:
    return page.eval_on_selector_all(".instr-row", ROWS_JS)


def pct(text: str) -> float:
    m = re.search(r"(\d+(?:\.\d+)?)%", text)
    assert m, f"no percentage in {text!r}"
    return float(m.group(1)) / 100


def assert_rows_match(got: list[dict], want: list[dict], view: dict, index: dict, model: str) -> None:
    """`view` of `model`, as index.json describes it: only where the model has a reading found fit
    (its warning lens; Part 10 found none), and only on the head α opens for the word, does a row
    above the threshold warn."""
    threshold, warns = index["threshold"], index["models"][model]["warning"]["lens"] is not None
    assert [g["word"] for g in got] == [w["word"] for w in want]
    assert [g["name"] for g in got] == [view["words"][w["word"]] for w in want]
    for g, w in zip(got, want):
        where = f"word {w['word']} ({view['words'][w['word']]!r})"
        assert (g["layer"], g["head"]) == (w["layer"], w["head"]), where
        # float32 of a uint16 step in the browser, float64 here: equal to well under a display unit
        assert g["sink"] == pytest.approx(w["sink"], abs=1e-6), where
        assert g["mass"] == pytest.approx(w["mass"], abs=1e-6), where
        assert g["punct"] == pytest.approx(w["punct"], abs=1e-6), where
        assert pct(g["sinkText"]) == pytest.approx(w["sink"], abs=0.0005 + 1e-6), where  # printed to 0.1 %
        assert pct(g["punctText"]) == pytest.approx(w["punct"], abs=0.0005 + 1e-6), where
        # The warning reads the sink's share under ||alpha f(x)|| on the row's head (Part 9), not alpha's.
        assert g["effect"] == pytest.approx(w["effect"], abs=1e-6), where
        assert pct(g["badge"]) == pytest.approx(w["effect"], abs=0.0005 + 1e-6), where
        warn = warns and w["on_alpha_head"] and w["effect"] > threshold
        assert g["warn"] == warn and ("⚠" in g["badge"]) == warn, where
        # The sink columns carry the raw [CLS] and [SEP] shares, in whole percent.
        assert [int(x) for x in g["sinks"]] == [round(w["raw"][0] * 100), round(w["raw"][-1] * 100)], where
        # The word cells are shaded by the displayed (renormalized) weight, the own column excepted;
        # punctuation columns are marked.
        cells = [float(s) for s in g["shades"] if s]
        others = [x for j, x in enumerate(w["displayed"]) if j != w["word"]]
        assert cells == pytest.approx([x ** 0.5 for x in others], abs=0.0006), where
        marks = [m for j, m in enumerate(g["punctCells"][1:-1]) if j != w["word"]]
        assert marks == [p for j, p in enumerate(view["punct"]) if j != w["word"]], where


def assert_detail_matches(page, want: dict) -> None:
    """The open row as a list: displayed and full-row shares for [CLS], words, [SEP]."""
    nums = page.eval_on_selector_all(".instr-bars tbody tr", DETAIL_JS)
    n = len(want["displayed"])
    assert len(nums) == n + 2
    for k, (shown, full) in enumerate(nums):
        assert pct(full) == pytest.approx(want["raw"][k], abs=0.0005 + 1e-6)
        if k in (0, n + 1) or k - 1 == want["word"]:
            assert shown == "—"
        else:
            assert pct(shown) == pytest.approx(want["displayed"][k - 1], abs=0.0005 + 1e-6)


def wait_state(page, **want) -> None:
    checks = " && ".join(f"r.dataset.{k} === {json.dumps(str(v))}" for k, v in want.items())
    page.wait_for_function(f"() => {{ const r = document.getElementById('instrument'); return r && {checks}; }}")


def assert_clean(page, site_url: str) -> None:
    assert page.console_errors == []
    host = urlparse(site_url).netloc
    off = [u for u in page.requests if not u.startswith(("data:", "blob:")) and urlparse(u).netloc != host]
    assert off == [], f"requests off the site: {off}"


def pick_sentence(page, i: int) -> None:
    page.locator(".instr-list").select_option(str(i))


# -- tests -------------------------------------------------------------------------------------

def test_rows_lens_head_and_model(page, site_url, built_site):
    index = load(built_site, "index.json")
    model = index["default_model"]
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")

    # The default sentence: one row per shown word, on the instrument's heads, under the first lens.
    v0 = load(built_site, f"{model}/0.json")
    want0 = expected_rows(v0, "alpha")
    rows = shown_rows(page)
    assert_rows_match(rows, want0, v0, index, model)
    assert rows[0]["open"]
    assert_detail_matches(page, want0[0])
    assert page.locator(".instr-note").count() == sum(w["mass"] < index["tiny_mass"] for w in want0)
    # Labels come from the index.
    labels = page.eval_on_selector_all(".instr-lens-btn", "bs => bs.map(b => b.textContent)")
    assert labels == [l["label"] for l in index["lenses"] + index["fixes"]]   # part 8's fixes: corpus sentences
    assert page.locator(".instr-lens-btn[aria-pressed=true]").inner_text() == index["lenses"][0]["label"]
    # Punctuation: a column of its own in the table, and a sentence in the open row.
    assert page.locator(".instr-col-punct").count() == sum(v0["punct"])
    assert "went to punctuation" in page.inner_text(".instr-punct-note")

    # Another sentence: other words, and the fragment follows.
    s = 8
    pick_sentence(page, s)
    wait_state(page, sentence=s)
    v8 = load(built_site, f"{model}/{s}.json")
    rows = shown_rows(page)
    assert_rows_match(rows, expected_rows(v8, "alpha"), v8, index, model)
    assert page.evaluate("location.hash") == f"#{model}/{s}/{v8['shown'][0]}/alpha"
    for w in [w for w in expected_rows(v8, "alpha") if w["mass"] < index["tiny_mass"]]:
        note = page.locator(f".instr-row[data-word='{w['word']}'] + .instr-note-row").inner_text()
        assert note.startswith("Content mass ") and "went to [CLS]/[SEP]" in note
        assert pct(note) == pytest.approx(w["mass"], abs=0.0005 + 1e-6)

    # The lens toggle: the sink shares change, to those of the value-norm rows.
    alpha_sinks = [r["sinkText"] for r in rows]
    page.locator(".instr-lens-btn[data-lens=value_norm]").click()
    wait_state(page, lens="value_norm")
    rows = shown_rows(page)
    want = expected_rows(v8, "value_norm")
    assert_rows_match(rows, want, v8, index, model)
    assert [r["sinkText"] for r in rows] != alpha_sinks
    assert page.evaluate("location.hash") == f"#{model}/{s}/{v8['shown'][0]}/value_norm"

    # Another head for one word: that row changes, the others do not.
    w = v8["shown"][3]
    page.locator(f".instr-row[data-word='{w}']").click()
    wait_state(page, word=w)
    chosen = tuple(v8["chosen"]["value_norm"][3])
    assert page.locator(".instr-layer").input_value() == str(chosen[0])
    assert page.locator(".instr-headsel").input_value() == str(chosen[1])
    layer = (chosen[0] + 1) % index["models"][model]["n_layers"]
    page.locator(".instr-layer").select_option(str(layer))
    page.wait_for_selector(f".instr-row[data-word='{w}'][data-layer='{layer}']")
    picked = (layer, chosen[1])
    after = shown_rows(page)
    want_picked = expected_rows(v8, "value_norm", {w: picked})
    assert_rows_match(after, want_picked, v8, index, model)
    assert [a["word"] for a, b in zip(after, rows) if (a["layer"], a["head"]) != (b["layer"], b["head"])] == [w]
    assert_detail_matches(page, want_picked[3])
    assert page.locator(f".instr-row[data-word='{w}'] .instr-picked").count() == 1
    assert page.evaluate("location.hash") == f"#{model}/{s}/{w}/value_norm/{picked[0]}.{picked[1]}"

    # ... or for every word; then back to the instrument's choice.
    page.locator(".instr-all").check()
    page.wait_for_function("() => [...document.querySelectorAll('.instr-row')].every(r => r.querySelector('.instr-picked'))")
    assert_rows_match(shown_rows(page), expected_rows(v8, "value_norm", {x: picked for x in v8["shown"]}), v8, index, model)
    assert page.evaluate("location.hash").endswith(f"/all-{picked[0]}.{picked[1]}")
    page.locator(".instr-reset").click()
    page.wait_for_function("() => !document.querySelector('.instr-picked')")
    assert_rows_match(shown_rows(page), want, v8, index, model)
    assert page.evaluate("location.hash") == f"#{model}/{s}/{w}/value_norm"

    # The model picker.
    other = next(k for k in index["models"] if k != model)
    page.locator(".instr-model").select_option(other)
    wait_state(page, model=other, sentence=s)
    vo = load(built_site, f"{other}/{s}.json")
    assert_rows_match(shown_rows(page), expected_rows(vo, "value_norm"), vo, index, other)
    assert_clean(page, site_url)


def test_sentence_picker_filters_by_text_and_register(page, site_url, built_site):
    """The corpus's sentences, filtered by a word and by their register."""
    index = load(built_site, "index.json")
    assert {s["register"] for s in index["sentences"]} >= {"news", "fiction"}
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    n = len(index["sentences"])
    options = lambda: page.eval_on_selector_all(".instr-list option", "os => os.map(o => +o.value)")
    assert options() == list(range(n))
    word = "the"  # in many sentences of every register
    want = [i for i, s in enumerate(index["sentences"]) if word in s["text"].lower()]
    assert 1 < len(want) < n
    page.fill(".instr-filter", word)
    page.wait_for_function("(k) => document.querySelectorAll('.instr-list option').length === k", arg=len(want))
    assert options() == want and f"{len(want)} of {n}" in page.inner_text(".instr-count")
    page.locator(".instr-register").select_option("fiction")
    both = [i for i in want if index["sentences"][i]["register"] == "fiction"]
    assert 0 < len(both) < len(want) and options() == both
    page.fill(".instr-filter", "zzzz no such word")
    assert options() == [] and "No sentence" in page.inner_text(".instr-count")
    page.fill(".instr-filter", "")
    page.locator(".instr-register").select_option("")
    assert options() == list(range(n))
    pick_sentence(page, want[-1])
    wait_state(page, sentence=want[-1])
    assert_clean(page, site_url)


# The French edition: the instrument's own words, its data's words (registers, lens titles)
# and its numbers in French; the corpus's sentences and words stay English, as written.
ENGLISH_JS = """() => {
  const box = document.getElementById('instrument');
  const parts = [];
  for (const el of box.querySelectorAll('.instr-controls, .instr-picker legend, .instr-picker label, .instr-count, '
      + '.instr-typed-label, .instr-help, .instr-summary, .instr-notices, .instr-legend, .instr-detail p, '
      + '.instr-bars caption, .instr-bars thead, .instr-matrix thead th.instr-h-meta, .instr-matrix thead th.instr-h-word, '
      + '.instr-note-row, .instr-register')) parts.push(el.innerText);
  for (const el of box.querySelectorAll('[title], [aria-label], [placeholder]')) {
    for (const a of ['title', 'aria-label', 'placeholder']) {
      if (!el.hasAttribute(a)) continue;
      const text = el.getAttribute(a), word = el.matches('.instr-row') ? el.querySelector('th').textContent : '';
      parts.push(text.startsWith(word) ? text.slice(word.length) : text);  // a row's label opens on its word
    }
  }
  return parts;
}"""
ENGLISH_WORDS = re.compile(r"\b(the|of|and|to|row|rows|layer|head|sink|share|word|words|register|registers|news|"
                           r"technical|lists|warning|effect|displayed|shown|measured|choice|every|sentence|Copy)\b")


def test_french_edition_speaks_french(page, site_url, built_site):
    index = load(built_site, "index.json")
    page.goto(site_url + "fr/instrument/#l6/8/3/alpha")
    page.wait_for_selector(".instr-row")
    wait_state(page, model="l6", sentence=8, word=3)
    # The registers: every one of the corpus named in French, the data's value kept.
    options = page.eval_on_selector_all(".instr-register option", "os => os.map(o => [o.value, o.textContent])")
    names = dict(options[1:])
    assert options[0] == ["", "tous les registres"]
    assert set(names) == {s["register"] for s in index["sentences"]}
    assert names["news"] == "actualités" and names["technical"] == "technique" and names["lists"] == "listes"
    assert [n for n in names.values() if n in ("news", "technical", "lists")] == []
    assert [n for n in names.values()] == sorted(names.values(), key=lambda n: n.replace("é", "e"))
    first = page.locator(".instr-list option").first.text_content()
    assert first == f"0. {index['sentences'][0]['text']} ({names[index['sentences'][0]['register']]})"
    page.locator(".instr-register").select_option("fiction")
    assert set(page.eval_on_selector_all(".instr-list option", "os => os.map(o => +o.value)")) == \
        {i for i, s in enumerate(index["sentences"]) if s["register"] == "fiction"}
    page.locator(".instr-register").select_option("")
    # Numbers: no e-notation, powers of ten as French writes them, the minus sign.
    truth = page.inner_text(".instr-truth-note")
    assert "\u00a0×\u00a010" in truth and not re.search(r"\de[-+]\d", truth), truth
    assert "(1 − cos)" in truth
    assert "," in page.inner_text(".instr-summary") and "\u202f%" in page.inner_text(".instr-summary")
    # Part 10 found no reading fit to warn on any model: the summary says so, in French.
    assert "la partie 10 n'a trouvé aucune lecture apte à avertir" in page.inner_text(".instr-summary")
    # No English word in what the instrument itself says (quoted corpus words aside).
    texts = [re.sub(r"«[^»]*»", "", t) for t in page.evaluate(ENGLISH_JS)]
    assert len(texts) > 20
    english = sorted({m.group(0) for t in texts for m in ENGLISH_WORDS.finditer(t)})
    assert english == [], [t for t in texts if ENGLISH_WORDS.search(t)][:5]
    assert_clean(page, site_url)


def test_notebook_copy_buttons_in_the_page_language(page, site_url):
    """mkdocs-jupyter writes its code cells' copy buttons in English: notebook.js names them
    in the page's language (English as mkdocs-jupyter wrote it)."""
    for edition, label, notice in (("", "Copy to Clipboard", "Copied!"),
                                   ("fr/", "Copier dans le presse-papiers", "Copié\u202f!")):
        page.goto(site_url + edition + "notebooks/main-table/")
        page.wait_for_selector("clipboard-copy", state="attached")
        page.wait_for_function("(l) => [...document.querySelectorAll('clipboard-copy')]"
                               ".every(b => b.getAttribute('aria-label') === l)", arg=label)
        buttons = page.eval_on_selector_all("clipboard-copy", "bs => bs.map(b => [b.getAttribute('aria-label'), "
                                            "b.querySelector('.notice').textContent])")
        assert buttons and all(b == [label, notice] for b in buttons), buttons
    assert_clean(page, site_url)


def test_fragment_links_and_hash_changes(page, site_url, built_site):
    index = load(built_site, "index.json")
    page.goto(site_url + "instrument/#l6/8/3/value_norm")
    page.wait_for_selector(".instr-row")
    wait_state(page, model="l6", sentence=8, word=3, lens="value_norm")
    v8 = load(built_site, "l6/8.json")
    assert page.locator(".instr-list").input_value() == "8"
    assert page.locator(".instr-row[aria-current=true]").get_attribute("data-word") == "3"
    want = expected_rows(v8, "value_norm")
    assert_rows_match(shown_rows(page), want, v8, index, "l6")
    assert_detail_matches(page, want[v8["shown"].index(3)])
    assert page.locator(".instr-detail-title").inner_text().startswith(f"The row of “{v8['words'][3]}”")

    # A head in the fragment, then a hash change on the open page (a same-page link).
    page.evaluate("location.hash = '#l6/8/3/alpha/0.2'")
    wait_state(page, lens="alpha")
    page.wait_for_selector(".instr-row[data-word='3'][data-layer='0'][data-head='2']")
    assert_rows_match(shown_rows(page), expected_rows(v8, "alpha", {3: (0, 2)}), v8, index, "l6")
    page.evaluate("location.hash = '#l3/2/1/output_norm'")
    wait_state(page, model="l3", sentence=2, word=1, lens="output_norm")
    v = load(built_site, "l3/2.json")
    assert_rows_match(shown_rows(page), expected_rows(v, "output_norm"), v, index, "l3")
    assert index["models"]["l3"]["warning"] == {"verdict": "not fit", "lens": None, "truth": "mean"}
    assert "no reading fit to warn" in page.locator(".instr-summary").inner_text()
    assert page.locator(".instr-model").input_value() == "l3"

    # Fragments that name nothing known, or are malformed, fall back to the defaults.
    for bad in ("#nope/99/x/y", "#constructor/1/2/alpha", "#l6/%E0%A4%A/1/alpha", "#l6/999/1/alpha", "#l6/2/1/nolens"):
        page.evaluate("location.hash = '#l3/1/1/alpha'")  # away first, so each case is a change
        wait_state(page, model="l3", sentence=1)
        page.evaluate(f"location.hash = {json.dumps(bad)}")
        wait_state(page, model="l6", sentence=2 if "nolens" in bad else 0, lens=index["lenses"][0]["key"])
    assert_clean(page, site_url)


def focused(page) -> dict:
    return page.evaluate("""() => { const a = document.activeElement;
      return {cls: a.className, tag: a.tagName, word: a.dataset.word ?? null, focus: a.dataset.focus ?? null}; }""")


def tab_to(page, selector: str, back: bool = False, limit: int = 200) -> None:
    """Press Tab (Shift+Tab) until the focused element matches `selector`."""
    for _ in range(limit):
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"Tab never reached {selector}; stuck on {focused(page)}")


@pytest.mark.parametrize("edition", ["", "fr/"])
def test_keyboard_alone_drives_the_instrument(page, site_url, built_site, edition):
    index = load(built_site, "index.json")
    page.goto(site_url + edition + "instrument/")
    page.wait_for_selector(".instr-row")
    page.locator("body").focus()
    # The sentence list: arrows choose a sentence.
    tab_to(page, ".instr-list")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    wait_state(page, sentence=2)
    v2 = load(built_site, "l6/2.json")
    # A lens button: Enter presses it.
    tab_to(page, ".instr-lens-btn[data-lens=output_norm]", back=True)
    page.keyboard.press("Enter")
    wait_state(page, lens="output_norm")
    # Into the table: Tab lands on the open row, arrows move, Enter opens.
    tab_to(page, ".instr-row")
    assert focused(page)["word"] == str(v2["shown"][0])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert focused(page)["word"] == str(v2["shown"][2])
    page.keyboard.press("Enter")
    wait_state(page, word=v2["shown"][2])
    assert focused(page)["word"] == str(v2["shown"][2]), "focus left the row it opened"
    page.keyboard.press("End")
    assert focused(page)["word"] == str(v2["shown"][-1])
    page.keyboard.press("Home")
    page.keyboard.press("ArrowDown")
    page.keyboard.press(" ")
    wait_state(page, word=v2["shown"][1])
    # Tab leaves the table (one stop for all rows) and reaches the open row's layer and head.
    tab_to(page, ".instr-layer")
    chosen = v2["chosen"]["output_norm"][1]
    page.keyboard.press("ArrowDown" if chosen[0] + 1 < index["models"]["l6"]["n_layers"] else "ArrowUp")
    layer = chosen[0] + 1 if chosen[0] + 1 < index["models"]["l6"]["n_layers"] else chosen[0] - 1
    page.wait_for_selector(f".instr-row[data-word='{v2['shown'][1]}'][data-layer='{layer}']")
    assert focused(page)["focus"] == "layer", "focus lost when the panel was redrawn"
    page.keyboard.press("Tab")
    assert focused(page)["focus"] == "head"
    page.keyboard.press("ArrowDown" if chosen[1] + 1 < index["models"]["l6"]["n_heads"] else "ArrowUp")
    page.wait_for_function("(w) => document.querySelector(`.instr-row[data-word='${w}']`).dataset.head !== undefined",
                           arg=v2["shown"][1])
    tab_to(page, ".instr-reset")
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('.instr-picked')")
    # A sentence of one's own, by keyboard: the box, Enter.
    tab_to(page, ".instr-input", back=True)
    page.keyboard.type("The keyboard works as well as the mouse.")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('instrument').dataset.view === 'typed'", timeout=60_000)
    tab_to(page, ".instr-row")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('.instr-row[aria-current=true]') === document.activeElement")
    # What a screen reader is told: labelled controls, rows with a summary, a status line.
    assert page.locator(".instr-sr[role=status]").count() == 1
    page.wait_for_function("() => document.querySelector('.instr-sr[role=status]').textContent.length > 0")
    labels = page.evaluate("""() => [...document.querySelectorAll('#instrument select, #instrument input')]
        .filter(e => e.offsetParent !== null).map(e => e.labels && e.labels.length ? e.labels[0].textContent : null)""")
    assert None not in labels, labels
    assert ("puits" if edition else "sink") in page.get_attribute(".instr-row[aria-current=true]", "aria-label")
    assert_clean(page, site_url)


PHONE = {"width": 390, "height": 844}

FIT_JS = """() => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  for (const el of document.querySelectorAll('#instrument *')) {
    if (!el.offsetParent && getComputedStyle(el).position !== 'fixed') continue; // not drawn
    if (el.closest('.instr-sr')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    if (r.right > vw + 0.5) out.push(`${el.tagName}.${el.className} ends at ${Math.round(r.right)}px`);
    if ((el.matches('p, .instr-note span, .instr-bars th') && el.scrollWidth > el.clientWidth + 1))
      out.push(`${el.tagName}.${el.className} is clipped`);
  }
  return out;
}"""


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_phone_shows_the_open_row_in_full(browser, site_url, built_site, tmp_path, scheme):
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        # Sentence 8 has rows with a tiny content mass: their notes must read in full.
        page.goto(site_url + "instrument/#l6/8/3/alpha")
        page.wait_for_selector(".instr-row")
        page.evaluate("(s) => document.body.setAttribute('data-md-color-scheme', s)", scheme)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "the page scrolls sideways"
        assert page.evaluate(FIT_JS) == []
        # The word columns fold away; the open row is the vertical list, every column in it.
        assert page.locator(".instr-cell").first.is_hidden()
        v8 = load(built_site, "l6/8.json")
        assert page.locator(".instr-bars tbody tr").count() == len(v8["words"]) + 2
        assert page.locator(".instr-bars").bounding_box()["width"] <= PHONE["width"]
        # Still usable: tap another row, change the lens.
        page.locator(f".instr-row[data-word='{v8['shown'][1]}']").tap()
        wait_state(page, word=v8["shown"][1])
        page.locator(".instr-lens-btn[data-lens=value_norm]").tap()
        wait_state(page, lens="value_norm")
        assert page.evaluate(FIT_JS) == []
        path = tmp_path / f"instrument-phone-{scheme}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000
        print(f"screenshot: {path}")
        assert errors == []
    finally:
        context.close()


CONTRAST_JS = """() => {
  const parse = (c) => {
    let m = /rgba?\\(([\\d.]+),\\s*([\\d.]+),\\s*([\\d.]+)(?:,\\s*([\\d.]+))?\\)/.exec(c);
    if (m) return [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
    m = /color\\(srgb ([\\d.e-]+) ([\\d.e-]+) ([\\d.e-]+)(?: \\/ ([\\d.e-]+))?\\)/.exec(c);
    if (m) return [m[1] * 255, m[2] * 255, m[3] * 255, m[4] === undefined ? 1 : +m[4]];
    return null;
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.backgroundImage !== 'none') return null;  // hatched: judged by hand
      const c = parse(cs.backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (const c of layers.reverse()) bg = over(c, bg);
    return bg;
  };
  const fails = [];
  let checked = 0;
  for (const el of document.querySelectorAll('#instrument *')) {
    const text = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!text || !el.offsetParent || el.closest('.instr-sr, [disabled]')) continue;
    const bg = background(el);
    if (!bg) continue;
    const fg = over(parse(getComputedStyle(el).color), bg);
    const [a, b] = [lum(fg), lum(bg)];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    checked++;
    if (ratio < 4.5) fails.push(`${el.tagName}.${el.className} "${text.slice(0, 20)}": ${ratio.toFixed(2)}`);
  }
  return {checked, fails};
}"""


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_text_contrast_in_both_palettes(page, site_url, scheme, tmp_path):
    """WCAG AA (4.5:1) for every piece of text the instrument draws, cells at every shade
    included, in Material's light and dark (slate) palettes."""
    page.goto(site_url + "instrument/#l6/8/3/alpha")
    page.wait_for_selector(".instr-row")
    page.evaluate("(s) => document.body.setAttribute('data-md-color-scheme', s)", scheme)
    for lens in ("alpha", "value_norm"):
        page.locator(f".instr-lens-btn[data-lens={lens}]").click()
        wait_state(page, lens=lens)
        result = page.evaluate(CONTRAST_JS)
        assert result["checked"] > 100 and result["fails"] == [], result
    page.screenshot(path=str(tmp_path / f"instrument-{scheme}.png"), full_page=True)


def test_after_instant_navigation(page, site_url, built_site):
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
    assert len(shown_rows(page)) == len(load(built_site, "l6/8.json")["shown"])
    assert_clean(page, site_url)


def test_words_are_text_never_markup(page, site_url, built_site):
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


def test_page_weight_before_a_sentence_is_opened(page, site_url):
    """What the instrument adds to the page (its script, style, index, one sentence's data),
    not the theme's or the site's chart bundle: under 1 MB, and no runtime file."""
    sizes: dict[str, int] = {}
    page.on("response", lambda r: sizes.__setitem__(r.url, int(r.headers.get("content-length", 0)))
            if r.ok and r.request.method == "GET" else None)
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    page.wait_for_load_state("networkidle")
    mine = {u: n for u, n in sizes.items() if re.search(r"/(assets/instrument|javascripts/instrument|stylesheets/instrument|assets/runtime)", u)}
    assert sum(mine.values()) < 1e6, mine
    assert not [u for u in mine if u.endswith(".bin") or "tokenizer" in u]
    assert_clean(page, site_url)
