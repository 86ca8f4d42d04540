// The instrument: one displayed row per word of a corpus sentence, with its disclosure.
//
// Data: assets/instrument/index.json and assets/instrument/<model>/<sentence>.json, written
// by the build (model/site/published.py). The semantics mirror model/instrument.py:
//   sink share     = row[0] + row[K-1]                     ([CLS] + [SEP], full row)
//   displayed row  = word columns 1..n without the word's own column, renormalized to 1
//   content mass   = what that displayed row summed to before renormalization
// Fragment: #<model>/<sentence>[/<word>/<lens>[/<layer>.<head> | /all-<layer>.<head>]]
// No framework, no request off the site; text from the data goes in as text, never as HTML.
(function () {
  "use strict";

  const SCRIPT_SRC = document.currentScript ? document.currentScript.src : "";
  const LENSES = [
    { key: "alpha", label: "α", title: "attention weights α" },
    { key: "value_norm", label: "‖α v‖", title: "each weight times the norm of the value vector" },
    { key: "output_norm", label: "‖α f(x)‖", title: "each weight times the norm of the value vector after W_O" },
  ];
  const LENS_LABEL = Object.fromEntries(LENSES.map((l) => [l.key, l.label]));
  const TINY_MASS = 0.10;
  const cache = new Map(); // url -> Promise of parsed JSON

  // -- the site root and data ---------------------------------------------------------------

  function siteBase() {
    // The script's own URL, captured when it first ran: instant navigation keeps the
    // script but changes location, so a relative src would resolve against the wrong page.
    if (SCRIPT_SRC) return SCRIPT_SRC.replace(/javascripts\/instrument\.js([?#].*)?$/, "");
    const cfg = document.getElementById("__config");
    const rel = cfg ? JSON.parse(cfg.textContent).base : ".";
    return new URL(rel.replace(/\/?$/, "/"), location.href).href;
  }

  function load(path) {
    const url = siteBase() + path;
    if (!cache.has(url)) {
      cache.set(url, fetch(url).then((r) => {
        if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
        return r.json();
      }).catch((err) => { cache.delete(url); throw err; }));
    }
    return cache.get(url);
  }

  // -- semantics (model/instrument.py) ------------------------------------------------------

  function analyse(row, w) {
    const K = row.length;
    const content = row.slice(1, K - 1).map((x, j) => (j === w ? 0 : x));
    const mass = content.reduce((a, b) => a + b, 0);
    return {
      raw: row, cls: row[0], sep: row[K - 1], sink: row[0] + row[K - 1], self: row[w + 1],
      mass, shown: content.map((x) => (mass > 0 ? x / mass : 0)),
    };
  }

  // -- small DOM helpers --------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    node.append(...children.flat().filter((c) => c != null)); // strings become text nodes
    return node;
  }

  const pct = (x, digits = 1) => `${(x * 100).toFixed(digits)}%`;
  const quoted = (word) => `“${word}”`;
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };

  function select(label, options, onchange) {
    const sel = el("select", { onchange: () => onchange(sel.value) },
      options.map(([value, text]) => el("option", { value: String(value), text })));
    return { node: el("label", { class: "instr-field" }, el("span", { text: label }), sel), sel };
  }

  // -- the instrument -----------------------------------------------------------------------

  class Instrument {
    constructor(root, index) {
      this.root = root;
      this.index = index;
      this.view = null;   // the loaded SentenceView
      this.loading = 0;   // ignores answers to superseded requests
      this.state = { model: index.default_model, sentence: 0, word: null, lens: "alpha", pick: new Map(), pickAll: null };
      this.build();
    }

    // The selectors, built once; render() fills in the rest.
    build() {
      const models = Object.entries(this.index.models).map(([k, m]) =>
        [k, `${m.name} (${m.n_layers} layers × ${m.n_heads} heads)`]);
      this.modelSel = select("Model", models, (v) => this.go({ model: v }));
      this.sentenceSel = select("Sentence", this.index.sentences.map((s, i) => [i, `${i}. ${s}`]),
        (v) => this.go({ sentence: Number(v) }));
      this.lensButtons = LENSES.map((l) => el("button", {
        type: "button", class: "instr-lens-btn", "data-lens": l.key, title: l.title, text: l.label,
        onclick: () => this.go({ lens: l.key }),
      }));
      this.summary = el("p", { class: "instr-summary", "aria-live": "polite" });
      this.matrix = el("div", { class: "instr-scroll" });
      this.detail = el("div", { class: "instr-detail" });
      this.root.replaceChildren(
        el("div", { class: "instr-controls" }, this.modelSel.node, this.sentenceSel.node,
          el("div", { class: "instr-field" }, el("span", { text: "Lens" }),
            el("div", { class: "instr-lens", role: "group", "aria-label": "Lens" }, this.lensButtons))),
        this.summary, this.matrix, legend(), this.detail);
    }

    // Move to a new state; loads the sentence's data when model or sentence change.
    async go(changes, { writeHash = true } = {}) {
      const s = this.state;
      const reload = !this.view || ("model" in changes && changes.model !== s.model) ||
        ("sentence" in changes && changes.sentence !== s.sentence);
      Object.assign(s, changes);
      if (!(s.model in this.index.models)) s.model = this.index.default_model;
      if (!(s.sentence >= 0 && s.sentence < this.index.sentences.length)) s.sentence = 0;
      if (!LENS_LABEL[s.lens]) s.lens = "alpha";
      if (reload) {
        const ticket = ++this.loading;
        this.root.classList.add("instr-busy");
        let view;
        try {
          view = await load(`assets/instrument/${s.model}/${s.sentence}.json`);
        } catch (err) {
          this.summary.textContent = `Could not load the data: ${err.message}`;
          console.error(err);
          return;
        } finally {
          if (ticket === this.loading) this.root.classList.remove("instr-busy");
        }
        if (ticket !== this.loading) return;
        this.view = view;
        if (!("pick" in changes)) s.pick = new Map();
        if (!("pickAll" in changes)) s.pickAll = null;
      }
      if (!this.view.shown.includes(s.word)) s.word = this.view.shown[0];
      this.render();
      if (writeHash) history.replaceState(history.state, "", `#${this.fragment()}`);
    }

    fragment() {
      const s = this.state;
      const head = s.pickAll ? `/all-${s.pickAll.join(".")}` : s.pick.has(s.word) ? `/${s.pick.get(s.word).join(".")}` : "";
      return `${s.model}/${s.sentence}/${s.word}/${s.lens}${head}`;
    }

    fromHash() {
      const parts = decodeURIComponent(location.hash.replace(/^#/, "")).split("/");
      const known = parts[0] in this.index.models; // anything else: the defaults
      const changes = { model: known ? parts[0] : this.index.default_model,
        sentence: known && parts.length > 1 ? Number(parts[1]) : 0, word: null, lens: "alpha",
        pick: new Map(), pickAll: null };
      if (!known) return this.go(changes, { writeHash: false });
      if (parts.length > 2) changes.word = Number(parts[2]);
      if (parts.length > 3) changes.lens = parts[3];
      const m = /^(all-)?(\d+)\.(\d+)$/.exec(parts[4] || "");
      const meta = this.index.models[parts[0]];
      if (m && +m[2] < meta.n_layers && +m[3] < meta.n_heads) {
        const lh = [+m[2], +m[3]];
        if (m[1]) changes.pickAll = lh; else changes.pick.set(changes.word, lh);
      }
      return this.go(changes, { writeHash: false });
    }

    // The head word w is viewed on, and whether the reader picked it.
    headOf(w) {
      const s = this.state, v = this.view;
      if (s.pickAll) return { lh: s.pickAll, picked: true };
      if (s.pick.has(w)) return { lh: s.pick.get(w), picked: true };
      return { lh: v.chosen[s.lens][v.shown.indexOf(w)], picked: false };
    }

    rowOf(w) {
      const { lh, picked } = this.headOf(w);
      return { w, lh, picked, ...analyse(this.view.rows[this.state.lens][lh[0]][lh[1]][w], w) };
    }

    render() {
      const s = this.state, v = this.view, meta = this.index.models[s.model];
      this.modelSel.sel.value = s.model;
      this.sentenceSel.sel.value = String(s.sentence);
      for (const b of this.lensButtons) b.setAttribute("aria-pressed", String(b.dataset.lens === s.lens));
      this.root.dataset.model = s.model;
      this.root.dataset.sentence = String(s.sentence);
      this.root.dataset.word = String(s.word);
      this.root.dataset.lens = s.lens;
      const rows = v.shown.map((w) => this.rowOf(w));
      if (!rows.length) {
        this.summary.textContent = "This sentence has no word with a displayed row.";
        this.matrix.replaceChildren();
        this.detail.replaceChildren();
        return;
      }
      const over = rows.filter((r) => r.sink > meta.threshold).length;
      this.summary.textContent = `${meta.name}, lens ${LENS_LABEL[s.lens]}: ${over} of ${rows.length} rows ` +
        `lose more than ${pct(meta.threshold, 0)} of their weight to [CLS] and [SEP]; ` +
        `the median row loses ${pct(median(rows.map((r) => r.sink)))}.`;
      const focused = document.activeElement && document.activeElement.closest(".instr-row");
      this.matrix.replaceChildren(this.table(rows, meta));
      if (focused) this.matrix.querySelector(`.instr-row[data-word="${s.word}"]`).focus();
      const selected = rows.find((r) => r.w === s.word);
      this.detail.replaceChildren(...(selected ? this.panel(selected, meta) : []));
    }

    // The sentence: one row per shown word; columns [CLS], the words, [SEP].
    table(rows, meta) {
      const v = this.view, n = v.words.length;
      const cols = ["[CLS]", ...v.words, "[SEP]"];
      const head = el("tr", {},
        el("th", { class: "instr-h-word", scope: "col", text: "Word" }),
        el("th", { class: "instr-h-meta", scope: "col", text: "Head" }),
        el("th", { class: "instr-h-meta", scope: "col", text: "Sink" }),
        cols.map((c, k) => el("th", { scope: "col", class: k === 0 || k === n + 1 ? "instr-col instr-col-sink" : "instr-col" },
          el("span", { text: c }))),
        el("th", { class: "instr-h-meta", scope: "col", text: "Content" }));
      const body = el("tbody");
      for (const r of rows) {
        const word = v.words[r.w];
        const warn = r.sink > meta.threshold, tiny = r.mass < TINY_MASS;
        body.append(el("tr", {
          class: "instr-row" + (r.w === this.state.word ? " instr-selected" : "") + (warn ? " instr-warn" : ""),
          tabindex: "0", "aria-selected": String(r.w === this.state.word),
          "data-word": r.w, "data-layer": r.lh[0], "data-head": r.lh[1],
          "data-sink": r.sink, "data-mass": r.mass,
          onclick: () => this.go({ word: r.w }),
          onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); this.go({ word: r.w }); } },
        },
        el("th", { scope: "row", class: "instr-word", text: word }),
        el("td", { class: "instr-head" + (r.picked ? " instr-picked" : ""),
          title: r.picked ? "your pick" : "the instrument's choice", text: `L${r.lh[0]} H${r.lh[1]}` }),
        el("td", {}, badge(r.sink, warn)),
        cols.map((c, k) => this.cell(r, k, word, c)),
        el("td", { class: "instr-mass" + (tiny ? " instr-tiny" : ""), text: pct(r.mass) })));
        if (tiny) {
          body.append(el("tr", { class: "instr-note-row" },
            el("td", { colspan: String(cols.length + 4), class: "instr-note", text: massNote(r, word) })));
        }
      }
      return el("table", { class: "instr-matrix" }, el("thead", {}, head), body);
    }

    cell(r, k, word, to) {
      const n = r.raw.length - 2;
      if (k === 0 || k === n + 1) {
        return el("td", { class: "instr-cell instr-sink", text: Math.round(r.raw[k] * 100),
          title: `${to}: ${pct(r.raw[k])} of the full row of ${quoted(word)}, dropped from the display` });
      }
      if (k - 1 === r.w) {
        return el("td", { class: "instr-cell instr-self", text: "·",
          title: `${quoted(word)} itself: ${pct(r.raw[k])} of the full row, dropped from the display` });
      }
      const x = r.shown[k - 1];
      return el("td", {
        class: "instr-cell" + (x >= 0.3 ? " instr-dark" : ""),
        style: `--w:${Math.sqrt(x).toFixed(3)}`,
        title: `${quoted(word)} → ${quoted(to)}: ${pct(x)} of the displayed row (${pct(r.raw[k])} of the full row)`,
        text: x >= 0.095 ? Math.round(x * 100) : "",
      });
    }

    // The selected word: its head picker, its disclosure, its row in detail.
    panel(r, meta) {
      const s = this.state, v = this.view, word = v.words[r.w];
      const chosen = v.chosen[s.lens][v.shown.indexOf(r.w)];
      const layer = select("Layer", [...Array(meta.n_layers).keys()].map((i) => [i, String(i)]),
        (x) => this.pickHead([Number(x), r.lh[1]]));
      const headSel = select("Head", [...Array(meta.n_heads).keys()].map((i) => [i, String(i)]),
        (x) => this.pickHead([r.lh[0], Number(x)]));
      layer.sel.value = String(r.lh[0]);
      headSel.sel.value = String(r.lh[1]);
      layer.sel.classList.add("instr-layer");
      headSel.sel.classList.add("instr-headsel");
      const all = el("input", { type: "checkbox", class: "instr-all", checked: !!s.pickAll,
        onchange: () => this.pickHead(r.lh, all.checked) });
      const reset = el("button", { type: "button", class: "instr-reset", disabled: !r.picked,
        text: `Instrument's choice (L${chosen[0]} H${chosen[1]})`,
        onclick: () => this.go({ pick: new Map(), pickAll: null }) });

      const why = r.picked ? "your pick" : `the instrument's choice under ${LENS_LABEL[s.lens]}`;
      const notes = [el("p", {},
        badge(r.sink, r.sink > meta.threshold, "sink "),
        ` ${pct(r.sink)} of this row went to [CLS] (${pct(r.cls)}) and [SEP] (${pct(r.sep)}), `,
        `and ${pct(r.self)} to ${quoted(word)} itself. The displayed weights are the remaining `,
        `${pct(r.mass)}, renormalized to sum to 100%.`)];
      if (r.sink > meta.threshold) {
        notes.push(el("p", { class: "instr-warning", role: "note" },
          el("strong", { text: "Warning: " }),
          `more than ${pct(meta.threshold, 0)} of this row went to [CLS] and [SEP]. `,
          "Whatever ranking the row shows is drawn from less than half of what the head attended to."));
      }
      if (r.mass < TINY_MASS) {
        notes.push(el("p", { class: "instr-warning instr-tiny-note", role: "note", text: massNote(r, word) }));
      }
      return [
        el("div", { class: "instr-detail-title" },
          el("strong", { text: `The row of ${quoted(word)}` }), ` on layer ${r.lh[0]}, head ${r.lh[1]} (${why})`),
        el("div", { class: "instr-heads" }, el("span", { class: "instr-heads-label", text: "View on another head:" }),
          layer.node, headSel.node, el("label", { class: "instr-field instr-check" }, all, el("span", { text: "for every word" })),
          reset),
        ...notes,
        this.bars(r, word),
      ];
    }

    pickHead(lh, forAll = !!this.state.pickAll) {
      const s = this.state;
      if (forAll) return this.go({ pickAll: lh, pick: new Map() });
      const pick = new Map(s.pickAll ? [] : s.pick); // leaving "every word": only this one keeps it
      pick.set(s.word, lh);
      return this.go({ pickAll: null, pick });
    }

    bars(r, word) {
      const v = this.view, n = v.words.length;
      const body = el("tbody");
      const bar = (x, cls) => el("span", { class: `instr-bar ${cls}`, style: `width:${(x * 100).toFixed(2)}%` });
      for (let k = 0; k <= n + 1; k++) {
        const sink = k === 0 || k === n + 1, self = k - 1 === r.w;
        const label = k === 0 ? "[CLS]" : k === n + 1 ? "[SEP]" : v.words[k - 1];
        const x = sink || self ? null : r.shown[k - 1];
        body.append(el("tr", { class: sink ? "instr-bar-sink" : self ? "instr-bar-self" : "" },
          el("th", { scope: "row", text: self ? `${label} (itself)` : label }),
          el("td", { class: "instr-track" }, x == null ? el("span", { class: "instr-dropped", text: "not shown" }) : bar(x, "instr-bar-shown")),
          el("td", { class: "instr-num", text: x == null ? "—" : pct(x) }),
          el("td", { class: "instr-track" }, bar(r.raw[k], sink ? "instr-bar-sinkfill" : self ? "instr-bar-selffill" : "instr-bar-raw")),
          el("td", { class: "instr-num", text: pct(r.raw[k]) })));
      }
      return el("table", { class: "instr-bars" },
        el("thead", {}, el("tr", {},
          el("th", { scope: "col", text: `From ${quoted(word)} to` }),
          el("th", { scope: "col", colspan: "2", text: "As displayed" }),
          el("th", { scope: "col", colspan: "2", text: "In the full row" }))),
        body);
    }
  }

  function badge(sink, warn, prefix = "") {
    return el("span", {
      class: "instr-badge" + (warn ? " instr-badge-warn" : ""),
      title: `${pct(sink)} of the full row went to [CLS] and [SEP]`,
      text: `${warn ? "⚠ " : ""}${prefix}${pct(sink)}`,
    });
  }

  function massNote(r, word) {
    return `Content mass ${pct(r.mass)}: this row shows what is left after ${pct(r.sink)} went to ` +
      `[CLS]/[SEP] and ${pct(r.self)} to ${quoted(word)} itself.`;
  }

  function legend() {
    return el("div", { class: "instr-legend" },
      el("span", {}, el("span", { class: "instr-swatch instr-swatch-shade" }),
        "shade: share of the displayed row (square-root scale; numbers in %)"),
      el("span", {}, el("span", { class: "instr-swatch instr-sink" }),
        "[CLS], [SEP]: dropped from the display; number = % of the full row"),
      el("span", {}, el("span", { class: "instr-swatch instr-self", text: "·" }), "the word itself, dropped"),
      el("span", {}, el("span", { class: "instr-badge instr-badge-warn", text: "⚠" }), "sink share above the threshold"));
  }

  // -- wiring: Material's instant navigation swaps pages without reloading scripts ----------

  let current = null;

  async function boot() {
    const root = document.getElementById("instrument");
    if (!root || root.dataset.ready) return;
    root.dataset.ready = "1";
    try {
      current = new Instrument(root, await load("assets/instrument/index.json"));
      await current.fromHash();
    } catch (err) {
      root.textContent = `The instrument could not start: ${err.message}`;
      console.error(err);
    }
  }

  window.addEventListener("hashchange", () => {
    if (current && current.root.isConnected) current.fromHash();
  });
  if (window.document$) window.document$.subscribe(boot);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
