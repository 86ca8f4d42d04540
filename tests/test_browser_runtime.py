"""The browser runtime, a fourth implementation of the forward pass, held to the reference.

Every corpus sentence and a hostile set run through the published runtime (the site's own
worker.js, tokenizer.js, encoder.js and weight files) in headless Chromium; the Python
reference (`model.activations.from_reference`) runs on the same token ids. Compared: token
ids, word ids and words with `tokenizers`; attention weights, value and output norms;
per displayed row and lens, the sink share and the head the rule opens. The tolerance
is study.yml's `runtime.tolerance`. Then the page itself: a typed sentence's table, the
messages for bad input, links to typed sentences, and what gets downloaded.
"""
from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote, urlparse

import numpy as np
import pytest
import yaml

from conftest import ROOT
from model.site.runtime_export import ROWS_PER_CHUNK
from model import activations, instrument
from model.corpus import corpus_rows, displayed, positional_heads, tokenize_all
from model.instrument import LENSES
from model.tokenize import load_tokenizer

pytestmark = pytest.mark.browser

TOLERANCE = float(yaml.safe_load((ROOT / "docs" / "study.yml").read_text(encoding="utf-8"))["runtime"]["tolerance"])

HOSTILE = [
    "<script>alert('x')</script> and <b>bold</b> & &amp; text",
    "<img src=x onerror=\"window.__pwned=1\"> is an image tag",
    "Emoji 😀 and a family 👩‍👩‍👧 with flags 🇫🇷🇩🇪 in between.",
    "Pneumonoultramicroscopicsilicovolcanoconiosis and supercalifragilisticexpialidocious are long words.",
    "x" * 120 + " is longer than WordPiece reads.",
    "Привет, мир! Ελληνικά γράμματα. العربية جميلة. हिन्दी भाषा.",
    "中文字符和日本語のかな、한국어 문장입니다.",
    "Café, naïve, résumé, Zürich, Ångström, façade — déjà vu…",
    "e\u0301 combining, zero\u200bwidth, soft\u00adhyphen, nbsp\u00a0space, tab\tand\nnewline.",
    "Typed specials: [CLS] in the middle, [SEP]x, a[MASK]b, [UNK] and [PAD].",
    "ΟΔΟΣ ΣΑΣ, İstanbul, ß, ǅemal, ﬁne ligatures, Ｆｕｌｌｗｉｄｔｈ.",
    "$100 + 5% = ~ | ^ ` {braces} [brackets] (parens) \"quotes\" 'single' ...",
    "a",
]

RUN_JS = """async ([texts, base, positional, tieTolerance]) => {
  const worker = (window.__runtimeWorker ||= new Worker(base + 'javascripts/instrument/worker.js'));
  window.__runtimeIds ||= 0;
  const b64 = (arr) => {
    const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength);
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const run = (text, id) => new Promise((resolve, reject) => {
    worker.onmessage = (e) => {
      if (e.data.id !== id || e.data.type === 'progress') return;
      if (e.data.type === 'error') reject(new Error(e.data.code + ': ' + e.data.message)); else resolve(e.data);
    };
    worker.postMessage({type: 'run', id, manifest: base + 'assets/runtime/l6/manifest.json', text});
  });
  const out = [];
  for (const text of texts) {
    const {data, info} = await run(text, ++window.__runtimeIds);
    const s = new InstrumentCore.Sentence(data);
    const heads = {}, sinks = {}, puncts = {};
    for (const [lens, pos] of Object.entries(positional)) {
      const excluded = new Set(pos.map(([l, h]) => `${l}.${h}`));
      heads[lens] = s.chooseHeads(lens, data.shown, excluded, tieTolerance);
      const rows = data.shown.map((w, k) => s.row(lens, heads[lens][k][0], heads[lens][k][1], w));
      sinks[lens] = rows.map((r) => r.sink);
      puncts[lens] = rows.map((r) => r.punct);
    }
    out.push({ids: info.ids, word_ids: data.word_ids, words: data.words, shown: data.shown, info,
              alpha: b64(data.alpha), value_norm: Array.from(data.value_norm),
              output_norm: Array.from(data.output_norm), heads, sinks, puncts});
  }
  return out;
}"""


@pytest.fixture(scope="module")
def index(built_site):
    return json.loads((built_site / "assets" / "instrument" / "index.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runs(browser, site_url, index, study):
    """Every corpus sentence and the hostile set through the published runtime, once."""
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    texts = list(study.sentences) + HOSTILE
    positional = index["models"]["l6"]["positional"]
    out = []
    for at in range(0, len(texts), 16):  # in batches: one worker, its files loaded once
        out += page.evaluate(RUN_JS, [texts[at:at + 16], site_url, positional, index["tie_tolerance"]])
    context.close()
    return dict(zip(texts, out)), requests


@pytest.fixture(scope="module")
def references(runs, l6):
    """The reference on the runtime's token ids, every sentence in one padded batch."""
    got, _ = runs
    texts = list(got)
    return dict(zip(texts, activations.from_reference(l6, [got[t]["ids"] for t in texts])))


def encode(l6, text: str):
    """tokenizers' encoding of `text`, and its words as written."""
    tok = load_tokenizer(l6.tokenizer_dir)
    tok.no_truncation()
    tok.no_padding()
    enc = tok.encode(text)
    n = 1 + max(w for w in enc.word_ids if w is not None)
    return enc, [text[slice(*enc.word_to_chars(w))] for w in range(n)]


def reference_rows(enc, words, acts, index):
    """The sentence's rows and, per lens, the displayed rows ((layer, head), sink share)
    the Python semantics give on the index's positional heads."""
    from model.tokenize import Tokenized

    tok = Tokenized(text="", ids=list(enc.ids), tokens=list(enc.tokens), word_ids=list(enc.word_ids), words=words)
    corpus = corpus_rows([tok], [acts])
    L, nh = acts.alpha.shape[:2]
    out = {}
    for lens in LENSES:
        excluded = np.zeros((L, nh), dtype=bool)
        for l, h in index["models"]["l6"]["positional"][lens]:
            excluded[l, h] = True
        d = displayed(corpus, lens, excluded, index["tie_tolerance"])
        out[lens] = [((int(l), int(h)), float(sink)) for l, h, sink in zip(d.layer, d.head, d.sink)]
    return corpus.rows[0], out


def compare(text, js, ref, l6, index) -> dict[str, float]:
    """Max abs difference per quantity; asserts ids, words and heads are equal."""
    enc, words = encode(l6, text)
    assert js["ids"] == list(enc.ids), f"{text!r}: token ids differ"
    assert js["word_ids"] == list(enc.word_ids), f"{text!r}: word ids differ"
    assert js["words"] == words, f"{text!r}: words differ"
    L, nh, T, _ = ref.alpha.shape
    alpha = np.frombuffer(base64.b64decode(js["alpha"]), dtype="<f4").reshape(L, nh, T, T)
    diffs = {
        "alpha": float(np.abs(alpha - ref.alpha).max()),
        "value_norm": float(np.abs(np.reshape(js["value_norm"], (L, nh, T)) - ref.value_norm).max()),
        "output_norm": float(np.abs(np.reshape(js["output_norm"], (L, nh, T)) - ref.output_norm).max()),
    }
    sr, rows = reference_rows(enc, words, ref, index)
    assert js["shown"] == sr.shown, f"{text!r}: shown words differ"
    for lens in LENSES:
        assert [tuple(h) for h in js["heads"][lens]] == [head for head, _ in rows[lens]], \
            f"{text!r}: the rule opens other heads under {lens}"
        diffs[f"sink.{lens}"] = max([abs(a - sink) for a, (_, sink) in zip(js["sinks"][lens], rows[lens])], default=0.0)
    return diffs


def test_runtime_agrees_with_the_reference_on_the_corpus(runs, references, l6, study, index):
    got, _ = runs
    worst: dict[str, float] = {}
    for text in study.sentences:
        for k, v in compare(text, got[text], references[text], l6, index).items():
            worst[k] = max(worst.get(k, 0.0), v)
    print("runtime vs reference, corpus, max abs:", json.dumps(worst))
    assert max(worst.values()) <= TOLERANCE, worst
    assert worst["alpha"] > 0, "identical to the bit: is the reference really a separate implementation?"


def test_runtime_agrees_on_hostile_sentences(runs, references, l6, index):
    got, _ = runs
    worst: dict[str, float] = {}
    for text in HOSTILE:
        for k, v in compare(text, got[text], references[text], l6, index).items():
            worst[k] = max(worst.get(k, 0.0), v)
    print("runtime vs reference, hostile, max abs:", json.dumps(worst))
    assert max(worst.values()) <= TOLERANCE, worst


def test_the_rule_in_the_browser_picks_the_builds_heads_on_the_corpus(runs, built_site, study):
    """The corpus files carry the build's choice; the runtime's own rule must agree."""
    got, _ = runs
    for i, text in enumerate(study.sentences):
        view = json.loads((built_site / "assets" / "instrument" / "l6" / f"{i}.json").read_text(encoding="utf-8"))
        for lens in LENSES:
            assert [list(h) for h in got[text]["heads"][lens]] == view["chosen"][lens], (i, lens)


def test_positional_heads_in_the_index_are_the_references(l6, study, index, runs, references):
    """The heads the browser's rule excludes are those the build fitted on the fit half
    (the reference's activations on the corpus: the module's, on the same token ids)."""
    toks = tokenize_all(l6, list(study.sentences), "corpus")
    got, _ = runs
    assert all(got[t.text]["ids"] == t.ids for t in toks)
    corpus = corpus_rows(toks, [references[t.text] for t in toks])
    for lens in LENSES:
        excluded = positional_heads(corpus, lens, study.positional_threshold, study.halves["fit"])
        assert [[int(l), int(h)] for l, h in np.argwhere(excluded)] == index["models"]["l6"]["positional"][lens]


TOKENIZE_JS = """async ([texts, base]) => {
  const rec = await (await fetch(base + 'assets/runtime/l6/tokenizer.json')).json();
  const tok = new InstrumentTokenizer.WordPiece(rec);
  return texts.map((t) => { const e = tok.encode(t); return [e.ids, e.word_ids, e.words]; });
}"""

EXTRA_TOKENIZER_CASES = [
    "", " ", "\u200b", "[CLS]", " [SEP] ", "[CLS][SEP]", "[[CLS]]", "[cls] [Sep]", "\x00ctrl\ufffd", "a\u0301\u0301b",
    "Ⅻ ² ½ ① ℃", "ｶﾀｶﾅ ひらがな カタカナ", "𝐁𝐨𝐥𝐝 𝔣𝔯𝔞𝔨𝔱𝔲𝔯", "\u202eright-to-left override\u202c", "y" * 100, "y" * 101,
    "don't won't y'all", "e-mail re-entry U.S.A. 3.14 1,000,000", "🥰🫠🪿 new emoji", "\ue000 private use",
]


def test_js_tokenizer_equals_tokenizers(page, site_url, l6, study):
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    page.evaluate("(src) => new Promise((ok, no) => { const s = document.createElement('script'); s.src = src;"
                  " s.onload = ok; s.onerror = no; document.head.append(s); })",
                  site_url + "javascripts/instrument/tokenizer.js")
    texts = list(study.sentences) + HOSTILE + EXTRA_TOKENIZER_CASES
    got = page.evaluate(TOKENIZE_JS, [texts, site_url])
    tok = load_tokenizer(l6.tokenizer_dir)
    tok.no_truncation()
    tok.no_padding()
    for text, (ids, word_ids, words) in zip(texts, got):
        enc = tok.encode(text)
        n = 1 + max([w for w in enc.word_ids if w is not None], default=-1)
        assert ids == list(enc.ids), text
        assert word_ids == list(enc.word_ids), text
        assert words == [text[slice(*enc.word_to_chars(w))] for w in range(n)], text
    assert_clean(page, site_url)


def test_the_first_sentence_fetches_only_what_it_needs(runs):
    """Layers once, the word-embedding table never in full, and only from the site."""
    _, requests = runs
    runtime = [urlparse(u).path for u in requests if "/assets/runtime/" in u]
    layers = [p for p in runtime if re.search(r"/layer-\d+\.bin$", p)]
    chunks = {p for p in runtime if "/emb/" in p}
    assert len(layers) == len(set(layers)) == 6, layers
    # Exactly the chunks of the token ids the sentences use, each once: never the whole table
    # for its own sake (with this many sentences most chunks are needed, so count, not size).
    got, _ = runs
    needed = {i // ROWS_PER_CHUNK for text in got for i in got[text]["ids"]}
    assert {int(re.search(r"/emb/(\d+)\.bin$", p).group(1)) for p in chunks} == needed
    assert sum("/emb/" in p for p in runtime) == len(chunks)
    assert all(urlparse(u).hostname == "127.0.0.1" for u in requests if not u.startswith("data:"))


# -- the page: a typed sentence, bad input, links ------------------------------------------

def wait_view(page, kind: str, timeout: float = 60_000) -> None:
    page.wait_for_function("(k) => document.getElementById('instrument').dataset.view === k", arg=kind, timeout=timeout)


def type_sentence(page, text: str) -> None:
    page.fill(".instr-input", text)
    page.press(".instr-input", "Enter")


def assert_clean(page, site_url: str) -> None:
    assert page.console_errors == []
    host = urlparse(site_url).netloc
    off = [u for u in page.requests if not u.startswith(("data:", "blob:")) and urlparse(u).netloc != host]
    assert off == [], f"requests off the site: {off}"


def shown_rows(page) -> list[dict]:
    return page.eval_on_selector_all(".instr-row", """rows => rows.map(r => ({
      word: +r.dataset.word, layer: +r.dataset.layer, head: +r.dataset.head, sink: +r.dataset.sink,
      punct: +r.dataset.punct, name: r.querySelector('th').textContent }))""")


def test_a_typed_sentence_gets_the_corpus_table(page, site_url, l6, index):
    text = "The quick brown fox jumps over the lazy dog while the cat sleeps, and nobody notices it at all."
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    assert not [u for u in page.requests if "/assets/runtime/" in u and not u.endswith("manifest.json")], \
        "the model was fetched before the reader asked"
    type_sentence(page, text)
    page.wait_for_selector(".instr-progress:not([hidden])")  # progress shows while it loads
    wait_view(page, "typed")
    assert page.locator(".instr-progress").is_hidden()
    assert page.evaluate("decodeURIComponent(location.hash.split('/')[1])") == "text=" + text
    enc, words = encode(l6, text)
    sr, rows = reference_rows(enc, words, activations.from_reference(l6, [list(enc.ids)])[0], index)
    for lens in LENSES:
        page.locator(f".instr-lens-btn[data-lens={lens}]").click()
        page.wait_for_function("(l) => document.getElementById('instrument').dataset.lens === l", arg=lens)
        got = shown_rows(page)
        assert [g["word"] for g in got] == sr.shown
        assert [g["name"] for g in got] == [words[w] for w in sr.shown]
        assert [(g["layer"], g["head"]) for g in got] == [head for head, _ in rows[lens]], lens
        assert max(abs(g["sink"] - sink) for g, (_, sink) in zip(got, rows[lens])) <= TOLERANCE
    # The comma is punctuation: a marked column, and no row of its own.
    assert "," not in [g["name"] for g in got]
    assert page.locator(".instr-col-punct").count() == sum(instrument.is_punctuation(w) for w in words)
    assert_clean(page, site_url)


def test_bad_input_gets_a_message_and_no_broken_table(page, site_url):
    page.goto(site_url + "instrument/")
    page.wait_for_selector(".instr-row")
    # Empty: a message, and no download.
    type_sentence(page, "   ")
    page.wait_for_function("() => document.querySelector('.instr-message').textContent.includes('empty')")
    assert not [u for u in page.requests if "/assets/runtime/" in u and not u.endswith("manifest.json")]
    assert page.locator(".instr-row").count() > 0, "the corpus table should stay"
    # Only characters the tokenizer drops.
    type_sentence(page, "\u200b\u200b \u0007")
    page.wait_for_function("() => document.querySelector('.instr-message').textContent.includes('Nothing to read')",
                           timeout=60_000)
    assert page.locator(".instr-row").count() == 0 and page.locator(".instr-matrix").count() == 0
    # All punctuation: no word gets a row, said so.
    type_sentence(page, "?! ... ;")
    wait_view(page, "typed")
    assert "all punctuation" in page.inner_text(".instr-summary")
    assert page.locator(".instr-row").count() == 0
    # Unknown characters: [UNK], said and marked.
    type_sentence(page, "Snow ☃ falls on Ⅻ roofs.")
    wait_view(page, "typed")
    page.wait_for_function("() => document.querySelector('.instr-row')")
    notices = page.inner_text(".instr-notices")
    assert "[UNK]" in notices and "“☃”" in notices and "“Ⅻ”" in notices
    names = [r["name"] for r in shown_rows(page)]
    assert "☃ [UNK]" in names and "Ⅻ [UNK]" in names
    # Markup: shown as text, never run.
    bad = "<img src=x onerror=\"window.__pwned=1\"><b>bold</b>"
    type_sentence(page, bad)
    page.wait_for_function("() => [...document.querySelectorAll('.instr-row th')].some(t => t.textContent === 'img')")
    assert page.locator("#instrument img, #instrument b").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert page.input_value(".instr-input") == bad
    # Longer than the model's limit: how many tokens, and what is shown.
    long = " ".join(f"word{i}" for i in range(300))
    type_sentence(page, long)
    page.wait_for_function("() => document.querySelector('.instr-notices').textContent.includes('at most')", timeout=120_000)
    notice = page.inner_text(".instr-notices")
    m = re.search(r"has (\d+) tokens; the model reads at most (\d+), .*first (\d+) words \((\d+) tokens\); the last (\d+) words", notice)
    assert m, notice
    n_tokens, limit, kept, shown_tokens, dropped = map(int, m.groups())
    assert limit == 512 and n_tokens > limit and shown_tokens <= limit and kept + dropped == 300
    assert page.locator(".instr-row").count() == kept
    assert_clean(page, site_url)


def test_a_link_to_a_typed_sentence_asks_then_runs(page, site_url):
    text = "A linked sentence / with a slash, #hash and ?query."
    page.goto(site_url + "instrument/#l6/text=" + quote(text, safe="") + "/1/value_norm")
    page.wait_for_selector(".instr-prompt")
    assert text in page.inner_text(".instr-prompt") and "MB" in page.inner_text(".instr-prompt")
    assert not [u for u in page.requests if re.search(r"/assets/runtime/.*\.bin", u)], "a link alone started the download"
    page.click(".instr-run-link")
    wait_view(page, "typed")
    assert page.evaluate("document.getElementById('instrument').dataset.word") == "1"
    assert page.evaluate("document.getElementById('instrument').dataset.lens") == "value_norm"
    assert page.input_value(".instr-input") == text
    # The files are loaded now: another typed link runs at once, and fetches no layer again.
    layers = len([u for u in page.requests if re.search(r"/layer-\d\.bin", u)])
    page.evaluate("(t) => { location.hash = 'l6/text=' + encodeURIComponent(t); }", "Another one, run at once.")
    page.wait_for_function("() => document.querySelector('.instr-input').value === 'Another one, run at once.'")
    # the view was "typed" already: wait for the new sentence's rows, not for the kind
    page.locator(".instr-row th", has_text="Another").wait_for(timeout=60_000)
    assert page.locator(".instr-row th", has_text="Another").count() == 1
    assert len([u for u in page.requests if re.search(r"/layer-\d\.bin", u)]) == layers
    # Back to the corpus from the picker.
    page.locator(".instr-list").select_option("2")
    wait_view(page, "corpus")
    assert page.evaluate("location.hash").startswith("#l6/2/")
    assert_clean(page, site_url)


def test_a_model_without_a_runtime_says_so(page, site_url, built_site):
    """A model the runtime cannot run (a 12-layer model over the download budget, say) has
    `runtime: null` in the index: the box says which models can, and a link asks for one."""
    index = json.loads((built_site / "assets" / "instrument" / "index.json").read_text(encoding="utf-8"))
    index["models"]["l3"]["runtime"] = None
    page.route("**/assets/instrument/index.json",
               lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(index)))
    page.goto(site_url + "instrument/#l3/text=" + quote("A sentence of my own.", safe=""))
    page.wait_for_selector(".instr-notice")
    assert "cannot run in the browser" in page.inner_text(".instr-notices")
    assert page.locator(".instr-input").is_disabled()
    page.wait_for_function("() => document.querySelector('.instr-help').textContent.includes('choose')")
    assert index["models"]["l6"]["name"] in page.inner_text(".instr-help")
    page.locator(".instr-model").select_option("l6")
    page.wait_for_selector(".instr-prompt")
    assert page.locator(".instr-input").is_enabled()
    assert not [u for u in page.requests if "/assets/runtime/" in u and not u.endswith("manifest.json")]
    assert_clean(page, site_url)
