// The instrument page: one displayed row per word of a sentence, with its disclosure.
//
// A sentence is either one of the corpus (assets/instrument/<model>/<i>.json, written by
// the build: model/views.py) or one the reader types, computed in the
// browser by the runtime (a Web Worker: instrument/worker.js). Both arrive as the same
// token-level data, and instrument/core.js folds them into rows with the semantics of
// model/instrument.py; this file only draws them. Lens labels and thresholds come from
// assets/instrument/index.json, never from here.
//
// Fragment: #<model>/<sentence>[/<word>/<lens>[/<layer>.<head> | /all-<layer>.<head>]],
// where <sentence> is a corpus index or text=<the typed sentence, URI-encoded>.
// No framework, no request off the site; text from data or the reader goes in as text,
// never as HTML. Every word it shows goes through liveI18n (javascripts/i18n.js, loaded
// first): t("…") and the number helpers, English as before, French on the French edition.
(function () {
  "use strict";

  const I18N = window.liveI18n;
  const t = I18N.t;
  const SCRIPT_SRC = document.currentScript ? document.currentScript.src : "";

  // -- the site root and its files ----------------------------------------------------------

  function siteBase() {
    // The script's own URL, captured when it first ran: instant navigation keeps the
    // script but changes location, so a relative src would resolve against the wrong page.
    if (SCRIPT_SRC) return SCRIPT_SRC.replace(/javascripts\/instrument\.js([?#].*)?$/, "");
    const cfg = document.getElementById("__config");
    const rel = cfg ? JSON.parse(cfg.textContent).base : ".";
    return new URL(rel.replace(/\/?$/, "/"), location.href).href;
  }

  const fetched = new Map(); // url -> Promise

  function loadJSON(path) {
    const url = siteBase() + path;
    if (!fetched.has(url)) {
      fetched.set(url, fetch(url).then((r) => {
        if (!r.ok) throw new Error(t("{path}: HTTP {status}", { path, status: r.status }));
        return r.json();
      }).catch((err) => { fetched.delete(url); throw err; }));
    }
    return fetched.get(url);
  }

  function loadScript(path) {
    const url = siteBase() + path;
    if (!fetched.has(url)) {
      fetched.set(url, new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = url;
        s.onload = resolve;
        s.onerror = () => { fetched.delete(url); reject(new Error(t("{path}: could not load", { path }))); };
        document.head.append(s);
      }));
    }
    return fetched.get(url);
  }

  // -- small helpers ------------------------------------------------------------------------

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

  const pct = (x, digits = 1) => I18N.pct(x, digits);
  const quoted = (word) => t("“{word}”", { word });
  const mb = (bytes) => t("{n} MB", { n: I18N.num(bytes / 1e6, { digits: 1 }) });
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  let uid = 0;
  const nextId = (stem) => `${stem}-${++uid}`;

  function field(label, control, cls = "") {
    const id = control.id || (control.id = nextId("instr-f"));
    return el("div", { class: `instr-field ${cls}` }, el("label", { for: id, text: label }), control);
  }

  function select(options, onchange, attrs = {}) {
    const sel = el("select", { ...attrs, onchange: () => onchange(sel.value) },
      options.map(([value, text]) => el("option", { value: String(value), text })));
    return sel;
  }

  // -- the runtime: one worker for the page's life (it survives instant navigation) ---------

  class Runtime {
    constructor() {
      this.worker = null;
      this.next = 1;
      this.pending = new Map();   // id -> {resolve, reject, onProgress}
      this.ready = new Set();     // manifests whose layers are loaded
      this.results = new Map();   // "<manifest>\n<text>" -> {data, info}
    }

    start() {
      if (this.worker) return;
      this.worker = new Worker(siteBase() + "javascripts/instrument/worker.js");
      this.worker.onmessage = (e) => {
        const msg = e.data, job = this.pending.get(msg.id);
        if (!job) return;
        if (msg.type === "progress") job.onProgress(msg);
        else {
          this.pending.delete(msg.id);
          if (msg.type === "result") job.resolve(msg);
          else job.reject(Object.assign(new Error(msg.message), { code: msg.code }));
        }
      };
      this.worker.onerror = (e) => {
        for (const job of this.pending.values()) job.reject(new Error(e.message || t("the runtime stopped")));
        this.pending.clear();
        this.worker = null;
      };
    }

    cached(manifest, text) {
      return this.results.get(`${manifest}\n${text}`);
    }

    run(manifest, text, onProgress) {
      const hit = this.cached(manifest, text);
      if (hit) return Promise.resolve(hit);
      this.start();
      const id = this.next++;
      return new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject, onProgress });
        this.worker.postMessage({ type: "run", id, manifest, text, lang: I18N.lang });
      }).then((msg) => {
        const out = { data: msg.data, info: msg.info };
        this.ready.add(manifest);
        this.results.set(`${manifest}\n${text}`, out);
        if (this.results.size > 20) this.results.delete(this.results.keys().next().value);
        return out;
      });
    }
  }

  const runtime = new Runtime();

  // -- the instrument -----------------------------------------------------------------------

  class Instrument {
    constructor(root, index, core) {
      this.root = root;
      this.index = index;
      this.core = core;
      this.lenses = new Map(index.lenses.map((l) => [l.key, l]));
      // Part 8's later fixes: comparison lenses measured at build time, corpus sentences only.
      this.fixes = new Map((index.fixes || []).map((l) => [l.key, l]));
      this.view = null;      // {kind, sentence (core.Sentence), data, chosen, info}
      this.loading = 0;      // a later request supersedes an earlier one
      this.manifests = new Map(); // model -> manifest (for sizes), loaded when the page opens
      this.state = { model: index.default_model, sentence: 0, text: null, word: null, lens: index.lenses[0].key,
        pick: new Map(), pickAll: null };
      this.build();
    }

    meta(model = this.state.model) { return this.index.models[model]; }

    // -- the controls, built once; render() fills in the rest ------------------------------

    build() {
      const idx = this.index;
      this.modelSel = select(Object.entries(idx.models).map(([k, m]) => [k, I18N.data(m.title) || m.name]),
        (v) => this.go({ model: v }), { class: "instr-model" });

      // The corpus picker: filter by text and register; the list shows what matches.
      this.filter = el("input", { type: "search", class: "instr-filter", autocomplete: "off",
        placeholder: t("a word of the sentence"), oninput: () => this.fillList() });
      // A register's value is the data's (the fragment, the filter); its name, the page's language's.
      const registers = [...new Set(idx.sentences.map((s) => s.register).filter(Boolean))]
        .map((r) => [r, registerName(r)])
        .sort((a, b) => (I18N.lang === "en" ? (a[1] > b[1]) - (a[1] < b[1]) : a[1].localeCompare(b[1], I18N.lang)));
      this.registerSel = registers.length ? select([["", t("every register")], ...registers],
        () => this.fillList(), { class: "instr-register" }) : null;
      this.list = el("select", { class: "instr-list",
        onchange: () => this.go({ sentence: Number(this.list.value), text: null }) });
      // A list of six on a wide screen; on a phone, the system's own picker, which shows
      // long sentences in full where a narrow list would cut them off.
      const narrow = window.matchMedia("(max-width: 37.5em)");
      const fit = () => { this.list.size = narrow.matches ? 1 : 6; };
      fit();
      narrow.addEventListener("change", fit);
      this.listCount = el("p", { class: "instr-count", "aria-live": "polite" });
      const picker = el("fieldset", { class: "instr-picker" },
        el("legend", { text: t("A sentence of the corpus") }),
        el("div", { class: "instr-picker-filters" },
          field(t("Find"), this.filter), this.registerSel && field(t("Register"), this.registerSel)),
        field(t("Sentence"), this.list, "instr-list-field"), this.listCount);

      // The reader's own sentence.
      this.input = el("input", { type: "text", class: "instr-input", autocomplete: "off", spellcheck: "false",
        enterkeyhint: "go" });
      this.help = el("p", { class: "instr-help", id: nextId("instr-help") });
      this.input.setAttribute("aria-describedby", this.help.id);
      this.runBtn = el("button", { type: "submit", class: "instr-run", text: t("Run") });
      this.progress = el("progress", { class: "instr-progress-bar", max: "1", value: "0", "aria-label": t("Download") });
      this.progressText = el("span", { class: "instr-progress-text" });
      this.progressBox = el("div", { class: "instr-progress", hidden: true }, this.progress, this.progressText);
      this.message = el("p", { class: "instr-message", role: "alert" });
      const typed = el("form", { class: "instr-typed", onsubmit: (e) => { e.preventDefault(); this.submit(); } },
        el("label", { for: (this.input.id = nextId("instr-text")), class: "instr-typed-label", text: t("Your sentence") }),
        el("div", { class: "instr-typed-row" }, this.input, this.runBtn),
        this.help, this.progressBox, this.message);

      this.lensButtons = [...idx.lenses, ...(idx.fixes || [])].map((l) => el("button", {
        type: "button", class: "instr-lens-btn" + (this.fixes.has(l.key) ? " instr-fix-btn" : ""), "data-lens": l.key,
        title: I18N.data(l.title), "aria-label": t("{label}: {title}", { label: l.label, title: I18N.data(l.title) }),
        text: l.label, onclick: () => this.go({ lens: l.key }),
      }));
      this.summary = el("p", { class: "instr-summary" });
      this.notices = el("div", { class: "instr-notices" });
      this.matrix = el("div", { class: "instr-scroll" });
      this.detail = el("section", { class: "instr-detail" });
      this.status = el("div", { class: "instr-sr", role: "status" }); // what a screen reader hears on a change
      this.root.replaceChildren(
        el("div", { class: "instr-controls" },
          field(t("Model"), this.modelSel),
          el("div", { class: "instr-field" }, el("span", { class: "instr-label", id: nextId("instr-lens"), text: t("Lens (compare)") }),
            el("div", { class: "instr-lens", role: "group" }, this.lensButtons))),
        el("div", { class: "instr-sources" }, picker, typed),
        this.summary, this.notices, this.matrix, legend(), this.detail, this.status);
      this.root.querySelector(".instr-lens").setAttribute("aria-labelledby", this.root.querySelector(".instr-label").id);
      this.fillList();
    }

    fillList() {
      const words = this.filter.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
      const register = this.registerSel ? this.registerSel.value : "";
      const opts = [];
      this.index.sentences.forEach((s, i) => {
        const text = s.text.toLowerCase();
        if (register && s.register !== register) return;
        if (!words.every((w) => text.includes(w))) return;
        opts.push(el("option", { value: String(i), text: `${i}. ${s.text}${s.register ? ` (${registerName(s.register)})` : ""}` }));
      });
      this.list.replaceChildren(...opts);
      const n = this.index.sentences.length;
      this.listCount.textContent = opts.length === n ? t("{n} sentences", { n }) :
        opts.length ? t("{k} of {n} sentences match", { k: opts.length, n }) : t("No sentence of the {n} matches.", { n });
      if (this.state.text == null) this.list.value = String(this.state.sentence);
    }

    // The help under "Your sentence": what typing downloads, read off the model's manifest.
    async describeRuntime() {
      const meta = this.meta(), model = this.state.model;
      this.input.disabled = this.runBtn.disabled = !meta.runtime;
      if (!meta.runtime) {
        const others = Object.entries(this.index.models).filter(([, m]) => m.runtime).map(([, m]) => m.name);
        this.help.textContent = others.length
          ? t("{model} has no in-browser runtime on this site; choose {others} to type a sentence.",
            { model: meta.name, others: others.join(t(" or ")) })
          : t("{model} has no in-browser runtime on this site.", { model: meta.name });
        return;
      }
      if (runtime.ready.has(siteBase() + meta.runtime)) {
        this.help.textContent = t("Runs {model} in your browser; its files are already loaded.", { model: meta.name });
        return;
      }
      try {
        if (!this.manifests.has(model)) this.manifests.set(model, await loadJSON(meta.runtime));
      } catch (err) {
        this.help.textContent = t("Runs {model} in your browser (its description could not be read: {error}).",
          { model: meta.name, error: err.message });
        return;
      }
      if (model !== this.state.model) return;
      const man = this.manifests.get(model);
      const once = man.tokenizer.bytes + man.files.reduce((a, f) => a + f.bytes, 0);
      this.help.textContent = t("Press Enter to run {model} in your browser; nothing you type leaves it. " +
        "The first sentence downloads {once} once (the {layers} layers and the vocabulary), " +
        "plus {kb} kB of word embeddings for each new block of " +
        "{rows} vocabulary entries your words use (the whole table is " +
        "{table}, never fetched in full). Later sentences reuse what is loaded.", {
        model: meta.name, once: mb(once), layers: man.config.n_layer,
        kb: I18N.num(man.embeddings.chunk_bytes / 1e3, { digits: 0 }), rows: man.embeddings.rows_per_chunk,
        table: mb(man.embeddings.table_bytes),
      });
    }

    submit() {
      const text = this.input.value;
      if (!text.trim()) {
        this.say(t("The box is empty: type a sentence, then press Enter."));
        return;
      }
      this.go({ text, sentence: null, word: null }, { run: true });
    }

    say(text) { this.message.textContent = text; }

    // -- state ----------------------------------------------------------------------------

    // Move to a new state; fetches or computes the sentence's data when it changes.
    async go(changes, { writeHash = true, run = false } = {}) {
      const s = this.state;
      const before = { model: s.model, sentence: s.sentence, text: s.text };
      Object.assign(s, changes);
      if (!Object.hasOwn(this.index.models, s.model)) s.model = this.index.default_model;
      if (s.text == null && !(s.sentence >= 0 && s.sentence < this.index.sentences.length)) s.sentence = 0;
      if (s.text != null) s.sentence = null;
      if (!this.lenses.has(s.lens) && !this.fixes.has(s.lens)) s.lens = this.index.lenses[0].key;
      const reload = !this.view || before.model !== s.model || before.sentence !== s.sentence || before.text !== s.text
        || (s.text != null && run && this.view.kind !== "typed");
      if (before.model !== s.model || !this.described) { this.described = true; this.describeRuntime(); }
      if (reload) {
        const ticket = ++this.loading;
        if (!("pick" in changes)) s.pick = new Map();
        if (!("pickAll" in changes)) s.pickAll = null;
        this.say("");
        this.root.classList.add("instr-busy");
        let view;
        try {
          view = s.text == null ? await this.corpusView(s.model, s.sentence) : await this.typedView(s.model, s.text, run, ticket);
        } catch (err) {
          if (ticket === this.loading) this.failed(err);
          return;
        } finally {
          if (ticket === this.loading) this.root.classList.remove("instr-busy");
        }
        if (ticket !== this.loading) return;
        this.view = view;
      }
      if (this.view && this.view.data && !this.view.data.shown.includes(s.word)) s.word = this.view.data.shown[0] ?? null;
      this.render();
      if (writeHash) history.replaceState(history.state, "", `#${this.fragment()}`);
    }

    async corpusView(model, i) {
      const data = await loadJSON(`assets/instrument/${model}/${i}.json`);
      return { kind: "corpus", data, sentence: new this.core.Sentence(data), chosen: data.chosen, info: null };
    }

    // A typed sentence: from the runtime, if the reader asked or its files are loaded;
    // otherwise a prompt (a link must not start a download of tens of MB by itself).
    async typedView(model, text, run, ticket) {
      this.input.value = text;
      const meta = this.meta(model);
      if (!meta.runtime) return { kind: "unavailable", data: null };
      const manifest = siteBase() + meta.runtime;
      if (!run && !runtime.ready.has(manifest) && !runtime.cached(manifest, text)) {
        try { // the prompt says how much running it downloads
          if (!this.manifests.has(model)) this.manifests.set(model, await loadJSON(meta.runtime));
        } catch (err) { /* the prompt goes without the size */ }
        return { kind: "prompt", data: null };
      }
      this.showProgress({ stage: "start" });
      let out;
      try {
        out = await runtime.run(manifest, text, (p) => { if (ticket === this.loading) this.showProgress(p); });
      } finally {
        if (ticket === this.loading) this.progressBox.hidden = true;
      }
      const { data, info } = out;
      const sentence = new this.core.Sentence(data);
      const chosen = {};
      for (const lens of this.lenses.keys()) {
        const excluded = new Set((meta.positional[lens] || []).map(([l, h]) => `${l}.${h}`));
        chosen[lens] = sentence.chooseHeads(lens, data.shown, excluded, this.index.tie_tolerance);
      }
      this.announce(t("Computed in your browser: {words} words, {tokens} tokens.",
        { words: data.words.length, tokens: data.tokens.length }));
      this.describeRuntime(); // now: "already loaded"
      return { kind: "typed", data, sentence, chosen, info };
    }

    showProgress(p) {
      this.progressBox.hidden = false;
      if (p.stage === "download") {
        if (p.total > 1e6 && this.announcedTotal !== p.total) {
          this.announcedTotal = p.total;
          this.announce(t("Downloading the model: {total}.", { total: mb(p.total) }));
        }
        this.progress.max = p.total;
        this.progress.value = p.loaded;
        this.progress.setAttribute("aria-label", t("Downloading the model"));
        this.progressText.textContent = t("Downloading the model: {loaded} of {total}", { loaded: mb(p.loaded), total: mb(p.total) });
      } else if (p.stage === "compute") {
        this.progress.max = p.n_layers;
        this.progress.value = p.layer;
        this.progress.setAttribute("aria-label", t("Running the model"));
        this.progressText.textContent = t("Running the model: layer {layer} of {layers}", { layer: p.layer, layers: p.n_layers });
      } else {
        this.progress.removeAttribute("value"); // indeterminate until the sizes are known
        this.progressText.textContent = t("Starting the model…");
      }
    }

    failed(err) {
      const messages = {
        "no-tokens": t("Nothing to read: every character of this sentence is one the tokenizer drops " +
          "(control, formatting or unassigned characters). Type some words."),
        "too-long": t("The first word of this sentence is longer than the model can read at once."),
        network: t("The model's files could not be fetched ({error}). Check the connection and press Enter again.",
          { error: err.message }),
      };
      this.say(messages[err.code] || t("The sentence could not be run: {error}", { error: err.message }));
      if (!err.code) console.error(err);
      this.view = this.state.text != null ? { kind: "failed", data: null } : this.view;
      this.render();
    }

    fragment() {
      const s = this.state;
      const where = s.text != null ? `text=${encodeURIComponent(s.text)}` : String(s.sentence);
      const head = s.pickAll ? `/all-${s.pickAll.join(".")}` : s.pick.has(s.word) ? `/${s.pick.get(s.word).join(".")}` : "";
      return `${encodeURIComponent(s.model)}/${where}/${s.word ?? ""}/${s.lens}${head}`;
    }

    fromHash() {
      let parts;
      try {
        parts = location.hash.replace(/^#/, "").split("/").map(decodeURIComponent);
      } catch (err) {
        parts = []; // a malformed address: the defaults
      }
      const known = Object.hasOwn(this.index.models, parts[0]); // anything else: the defaults
      const changes = { model: known ? parts[0] : this.index.default_model, sentence: 0, text: null, word: null,
        lens: this.index.lenses[0].key, pick: new Map(), pickAll: null };
      if (!known) return this.go(changes, { writeHash: false });
      if (parts.length > 1 && parts[1].startsWith("text=")) changes.text = parts[1].slice(5);
      else if (parts.length > 1) changes.sentence = Number(parts[1]);
      if (parts.length > 2 && parts[2] !== "") changes.word = Number(parts[2]);
      if (parts.length > 3) changes.lens = parts[3];
      const m = /^(all-)?(\d+)\.(\d+)$/.exec(parts[4] || "");
      const meta = this.meta(parts[0]);
      if (m && +m[2] < meta.n_layers && +m[3] < meta.n_heads) {
        const lh = [+m[2], +m[3]];
        if (m[1]) changes.pickAll = lh; else changes.pick.set(changes.word, lh);
      }
      return this.go(changes, { writeHash: false });
    }

    // -- rows -----------------------------------------------------------------------------

    // The head word w is viewed on, and whether the reader picked it.
    headOf(w) {
      const s = this.state, v = this.view;
      if (s.pickAll) return { lh: s.pickAll, picked: true };
      if (s.pick.has(w)) return { lh: s.pick.get(w), picked: true };
      return { lh: v.chosen[this.headLens()][v.data.shown.indexOf(w)], picked: false };
    }

    // A fix is read on the layer of the head alpha opens; a typed sentence has no fixes.
    headLens() { return this.fixes.has(this.state.lens) ? "alpha" : this.state.lens; }
    rowLens() { return this.fixes.has(this.state.lens) && this.view.kind !== "corpus" ? "alpha" : this.state.lens; }

    rowOf(w) {
      const { lh, picked } = this.headOf(w);
      const row = this.view.sentence.row(this.rowLens(), lh[0], lh[1], w);
      return row ? { lh, picked, ...row } : { lh, picked, w, missing: true };
    }

    // The warning's reading for a row: the sink share under the norm lens Part 10 found fit on
    // this model (‖α f(x)‖ where none is: shown, never warned on), on the row's head (for a
    // fix, the head α opens, on which its layer is read).
    effectOf(r) {
      const row = this.view.sentence.row(this.meta().warning.lens || "output_norm", r.lh[0], r.lh[1], r.w);
      return row ? row.sink : NaN;
    }

    // Does the badge warn? Only on a model where Part 10 found a reading fit (its registered
    // verdict, index.json's `warning`), on the head α opens for the word (where that reading
    // was held to the truth: not another lens's head, not a reader's pick), above the threshold.
    warns(effect, r) {
      return !!this.meta().warning.lens && this.onAlphaHead(r) && effect > this.index.threshold;
    }

    onAlphaHead(r) {
      const a = this.view.chosen.alpha[this.view.data.shown.indexOf(r.w)];
      return !!a && a[0] === r.lh[0] && a[1] === r.lh[1];
    }

    // Part 8's ground truth for a row, where the build measured its head (corpus sentences).
    truthOf(r) {
      return this.view.kind === "corpus" ? this.view.sentence.ablation(r.w, r.lh[0], r.lh[1]) : null;
    }

    // -- drawing --------------------------------------------------------------------------

    render() {
      this.draw();
      // For scripts that wait on the page (the tests, the benchmark): the table is drawn.
      this.root.dispatchEvent(new CustomEvent("instrument:drawn", { detail: { view: this.view ? this.view.kind : null } }));
    }

    draw() {
      const s = this.state, v = this.view, meta = this.meta(), idx = this.index;
      const focusKey = document.activeElement && this.root.contains(document.activeElement)
        ? document.activeElement.dataset.focus : null;
      this.modelSel.value = s.model;
      if (s.text == null) this.list.value = String(s.sentence); else this.list.selectedIndex = -1;
      for (const b of this.lensButtons) {
        b.setAttribute("aria-pressed", String(b.dataset.lens === s.lens));
        b.disabled = this.fixes.has(b.dataset.lens) && !!v && v.kind !== "corpus";
      }
      Object.assign(this.root.dataset, { model: s.model, sentence: s.text == null ? String(s.sentence) : "typed",
        word: String(s.word), lens: s.lens, view: v ? v.kind : "none" });
      this.notices.replaceChildren(...this.noticesFor(v, meta));
      const all = v && v.data ? v.data.shown.map((w) => this.rowOf(w)) : [];
      const rows = all.filter((r) => !r.missing);
      if (!all.length) {
        this.summary.textContent = v && v.data ? t("No word of this sentence gets a row: it is all punctuation.") : "";
        this.matrix.replaceChildren();
        this.detail.replaceChildren();
        return;
      }
      const lens = this.lenses.get(this.rowLens()) || this.fixes.get(s.lens);
      const over = rows.filter((r) => this.warns(this.effectOf(r), r)).length;
      const unmeasured = all.length - rows.length;
      const medians = { sink: pct(median(rows.map((r) => r.sink))), punct: pct(median(rows.map((r) => r.punct))) };
      this.summary.textContent = !rows.length ? t("{model}, lens {lens}: not measured on this sentence " +
        "(a sample of the corpus: every {every}th sentence).", { model: meta.name, lens: lens.label, every: meta.value_zeroing_every }) :
        !meta.warning.lens ? t("{model}, lens {lens}: Part 10 found no reading fit to warn on this model " +
        "(its verdict on the mean-ablation truth: {verdict}), so no row is flagged; the median row loses {sink} of its " +
        "weight to [CLS] and [SEP], and {punct} to punctuation.", { model: meta.name, lens: lens.label,
          verdict: verdictWord(meta.warning.verdict), ...medians }) :
        t("{model}, lens {lens}: on {over} of {rows} rows [CLS] and [SEP] bring more than " +
        "{threshold} of what the head brings to the word (the warning); " +
        "the median row loses {sink} of its weight to them, " +
        "and {punct} to punctuation.", {
          model: meta.name, lens: lens.label, over, rows: rows.length, threshold: pct(idx.threshold, 0), ...medians,
        }) +
        (unmeasured ? t(" {n} rows are not measured under {lens} on this head's layer.", { n: unmeasured, lens: lens.label }) : "");
      this.matrix.replaceChildren(this.table(all));
      const selected = all.find((r) => r.w === s.word);
      this.detail.replaceChildren(...(selected ? this.panel(selected, meta) : []));
      if (focusKey) {
        const again = this.root.querySelector(`[data-focus="${focusKey}"]`);
        if (again && !again.disabled) again.focus();
        else if (again) this.root.querySelector('[data-focus="layer"]')?.focus();
      }
    }

    noticesFor(v, meta) {
      if (v && v.kind === "corpus" && s_fix(this)) return [this.fixNotice(meta)];
      if (!v || v.kind === "corpus" || v.kind === "failed") return [];
      if (v.kind === "unavailable") {
        return [el("p", { class: "instr-notice", text: t("{model} cannot run in the browser on this site; " +
          "choose another model to see a sentence of your own.", { model: meta.name }) })];
      }
      if (v.kind === "prompt") {
        const man = this.manifests.get(this.state.model);
        const values = { sentence: quoted(this.state.text), model: meta.name };
        const prompt = man
          ? t("This address shows a sentence of its own: {sentence}. " +
            "To see its rows, run {model} in your browser (it downloads about {size} once).",
            { ...values, size: mb(man.tokenizer.bytes + man.files.reduce((a, f) => a + f.bytes, 0)) })
          : t("This address shows a sentence of its own: {sentence}. To see its rows, run {model} in your browser.", values);
        return [el("div", { class: "instr-notice instr-prompt" },
          el("p", { text: prompt }),
          el("button", { type: "button", class: "instr-run-link", "data-focus": "run-link", text: t("Run the model on it"),
            onclick: () => this.go({ text: this.state.text }, { run: true }) }))];
      }
      const { data, info } = v, out = [];
      if (this.fixes.has(this.state.lens)) {
        out.push(el("p", { class: "instr-notice", text: t("{fix} is measured when the " +
          "site is built, on the corpus's sentences only: your sentence is shown under α.",
          { fix: this.fixes.get(this.state.lens).label }) }));
      }
      out.push(el("p", { class: "instr-notice", text: t("Your sentence, run by {model} in your browser " +
        "({words} words, {tokens} tokens). The heads are the rule's, applied here: " +
        "the same rule as for the corpus, with the positional heads found on the corpus.",
        { model: meta.name, words: data.words.length, tokens: data.tokens.length }) }));
      if (info.droppedWords) {
        out.push(el("p", { class: "instr-notice instr-notice-warn", text: t("Your sentence has {tokens} tokens; " +
          "the model reads at most {max}, [CLS] and [SEP] included. Shown: its first {kept} " +
          "words ({shown} tokens); the last {dropped} words are left out.", {
          tokens: info.nTokens, max: info.maxTokens, kept: info.keptWords, shown: data.tokens.length,
          dropped: info.droppedWords }) }));
      }
      const unknown = data.words.filter((_, w) => this.isUnknown(w));
      if (unknown.length) {
        out.push(el("p", { class: "instr-notice", text: t("Not in the model's vocabulary, so read as {unk}: " +
          "{words}. Their rows and columns are marked {unk}.", { unk: info.unk, words: unknown.map(quoted).join(", ") }) }));
      }
      return out;
    }

    fixNotice(meta) {
      const fix = this.fixes.get(this.state.lens);
      const every = meta.value_zeroing_every;
      return el("p", { class: "instr-notice", text: t("{fix}: {title}. A layer-level reading (every head, " +
        "the residual included), so the word's own column is large; the sink share counts it, as registered. " +
        "The head column names the head α opens: the fix is read on its layer.", { fix: fix.label, title: I18N.data(fix.title) }) +
        (this.state.lens === "value_zeroing" && every > 1 ? t(" Value zeroing is measured on every {every}th sentence " +
          "of the corpus, and only on that layer.", { every }) : "") });
    }

    isUnknown(w) {
      const v = this.view;
      if (!v || v.kind !== "typed") return false;
      return v.data.tokens.some((t, i) => t === v.info.unk && v.data.word_ids[i] === w);
    }

    wordLabel(w) {
      return this.isUnknown(w) ? `${this.view.data.words[w]} [${this.view.info.unk.replace(/^\[|\]$/g, "")}]`
        : this.view.data.words[w];
    }

    // The sentence: one row per shown word; columns [CLS], the words, [SEP].
    table(rows) {
      const v = this.view.data, n = v.words.length, idx = this.index, s = this.state;
      const cols = ["[CLS]", ...v.words.map((_, w) => this.wordLabel(w)), "[SEP]"];
      const colClass = (k) => k === 0 || k === n + 1 ? "instr-col instr-col-sink"
        : v.punct[k - 1] ? "instr-col instr-col-punct" : "instr-col";
      const head = el("tr", {},
        el("th", { class: "instr-h-word", scope: "col", text: t("Word") }),
        el("th", { class: "instr-h-meta", scope: "col", text: t("Head") }),
        el("th", { class: "instr-h-meta", scope: "col", text: t("Sink"),
          title: t("the share of the full row's weight on [CLS] and [SEP], dropped from the display") }),
        el("th", { class: "instr-h-meta", scope: "col", text: t("Effect"), title: effectTitle() }),
        el("th", { class: "instr-h-meta", scope: "col", text: t("Ablation"), title: t("the sink's share of what this head " +
          "does to the word, measured by removing its part (corpus sentences, the heads the rule opens)") }),
        el("th", { class: "instr-h-meta instr-h-punct", scope: "col", text: t("Punct.") }),
        cols.map((c, k) => el("th", { scope: "col", class: colClass(k) }, el("span", { text: c }))),
        el("th", { class: "instr-h-meta", scope: "col", text: t("Content") }));
      const body = el("tbody", { onkeydown: (e) => this.rowKey(e) });
      for (const r of rows) {
        const word = this.wordLabel(r.w);
        if (r.missing) {
          body.append(el("tr", { class: "instr-row instr-missing", "data-word": r.w, "data-focus": `row-${r.w}`, tabindex: "-1" },
            el("th", { scope: "row", class: "instr-word", text: word }),
            el("td", { class: "instr-head", text: `L${r.lh[0]} H${r.lh[1]}` }),
            el("td", { colspan: String(cols.length + 5), class: "instr-note",
              text: t("not measured on this layer for this sentence (value zeroing: the layer of α's head, on a sample)") })));
          continue;
        }
        const truth = this.truthOf(r), effect = this.effectOf(r);
        const warn = this.warns(effect, r), tiny = r.mass < idx.tiny_mass;
        const open = r.w === s.word;
        body.append(el("tr", {
          class: "instr-row" + (open ? " instr-selected" : "") + (warn ? " instr-warn" : ""),
          tabindex: open ? "0" : "-1", "aria-current": open ? "true" : null, "data-focus": `row-${r.w}`,
          "aria-label": this.rowLabel(r, word, effect, warn),
          "data-word": r.w, "data-layer": r.lh[0], "data-head": r.lh[1],
          "data-sink": r.sink, "data-effect": effect, "data-punct": r.punct, "data-mass": r.mass,
          onclick: () => this.go({ word: r.w }),
        },
        el("th", { scope: "row", class: "instr-word", text: word }),
        el("td", { class: "instr-head" + (r.picked ? " instr-picked" : ""),
          title: r.picked ? t("your pick") : t("the instrument's choice"), text: `L${r.lh[0]} H${r.lh[1]}` }),
        el("td", { class: "instr-sink-share", text: pct(r.sink),
          title: t("{share} of the full row went to [CLS] and [SEP]", { share: pct(r.sink) }) }),
        el("td", {}, badge(effect, warn)),
        el("td", { class: "instr-truth", text: truth ? pct(truth.share) : "—",
          title: truth ? t("the sink's share of this head's effect on the word (ablation)") : t("not measured for this head") }),
        el("td", { class: "instr-punct-share", text: pct(r.punct) }),
        cols.map((c, k) => this.cell(r, k, word, c)),
        el("td", { class: "instr-mass" + (tiny ? " instr-tiny" : ""), text: pct(r.mass) })));
        if (tiny) {
          body.append(el("tr", { class: "instr-note-row" },
            el("td", { colspan: String(cols.length + 7), class: "instr-note" },
              el("span", { text: massNote(r, word) }))));
        }
      }
      return el("table", { class: "instr-matrix", "aria-label": t("One row per word: where its attention goes") },
        el("thead", {}, head), body);
    }

    rowLabel(r, word, effect, warn) {
      return t("{word}: layer {layer}, head {head}", { word, layer: r.lh[0], head: r.lh[1] }) + (r.picked ? t(" (your pick)") : "") +
        t("; sink {sink}; effect {effect}", { sink: pct(r.sink), effect: pct(effect) }) + (warn ? t(", warning: above the threshold") : "") +
        t("; punctuation {punct}; content {mass}", { punct: pct(r.punct), mass: pct(r.mass) }) + (r.w === this.state.word ? t("; open") : "");
    }

    // Arrow keys move between rows; Enter or Space opens one; Home and End go to the ends.
    rowKey(e) {
      const row = e.target.closest(".instr-row");
      if (!row) return;
      const all = [...this.matrix.querySelectorAll(".instr-row")];
      const at = all.indexOf(row);
      const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[e.key];
      if (to !== undefined) {
        e.preventDefault();
        const next = all[Math.max(0, Math.min(all.length - 1, to))];
        for (const r of all) r.tabIndex = r === next ? 0 : -1;
        next.focus();
      } else if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.go({ word: Number(row.dataset.word) });
      }
    }

    cell(r, k, word, to) {
      const n = r.raw.length - 2;
      if (k === 0 || k === n + 1) {
        return el("td", { class: "instr-cell instr-sink", text: Math.round(r.raw[k] * 100),
          title: t("{to}: {share} of the full row of {word}, dropped from the display", { to, share: pct(r.raw[k]), word: quoted(word) }) });
      }
      if (k - 1 === r.w) {
        return el("td", { class: "instr-cell instr-self", text: "·",
          title: t("{word} itself: {share} of the full row, dropped from the display", { word: quoted(word), share: pct(r.raw[k]) }) });
      }
      const x = r.shown[k - 1], punct = this.view.data.punct[k - 1];
      const cellValues = { from: quoted(word), to: quoted(to), shown: pct(x), full: pct(r.raw[k]) };
      return el("td", {
        class: "instr-cell" + (punct ? " instr-punct" : ""),
        style: `--w:${Math.sqrt(x).toFixed(3)}`,
        title: (punct ? t("{from} → {to} (punctuation): {shown} of the displayed row ({full} of the full row)", cellValues)
          : t("{from} → {to}: {shown} of the displayed row ({full} of the full row)", cellValues)),
        text: x >= 0.095 ? Math.round(x * 100) : "",
      });
    }

    // The open word: its head picker, its disclosure, its row in detail.
    panel(r, meta) {
      const s = this.state, v = this.view, data = v.data, word = this.wordLabel(r.w), idx = this.index;
      const lens = this.lenses.get(this.headLens());
      const chosen = v.chosen[this.headLens()][data.shown.indexOf(r.w)];
      if (r.missing) {
        return [el("p", { class: "instr-detail-title" }, el("strong", { text: t("The row of {word}", { word: quoted(word) }) }),
          t(" on layer {layer}: not measured under {fix} (a sample of sentences, " +
          "on the layer of the head α opens).", { layer: r.lh[0], fix: this.fixes.get(s.lens).label }))];
      }
      const layer = select([...Array(meta.n_layers).keys()].map((i) => [i, String(i)]),
        (x) => this.pickHead([Number(x), r.lh[1]]), { class: "instr-layer", "data-focus": "layer" });
      const headSel = select([...Array(meta.n_heads).keys()].map((i) => [i, String(i)]),
        (x) => this.pickHead([r.lh[0], Number(x)]), { class: "instr-headsel", "data-focus": "head" });
      layer.value = String(r.lh[0]);
      headSel.value = String(r.lh[1]);
      const all = el("input", { type: "checkbox", class: "instr-all", checked: !!s.pickAll, "data-focus": "all",
        id: nextId("instr-all"), onchange: () => this.pickHead(r.lh, all.checked) });
      const reset = el("button", { type: "button", class: "instr-reset", disabled: !r.picked, "data-focus": "reset",
        text: t("Instrument's choice (L{layer} H{head})", { layer: chosen[0], head: chosen[1] }),
        onclick: () => this.go({ pick: new Map(), pickAll: null }) });

      const why = r.picked ? t("your pick") : t("the instrument's choice under {lens}", { lens: lens.label }) +
        (v.kind === "typed" ? t(", computed here by the same rule") : "");
      const effect = this.effectOf(r), warn = this.warns(effect, r);
      const notes = [el("p", {},
        t("{sink} of this row went to [CLS] ({cls}) and [SEP] ({sep}), " +
        "and {self} to {word} itself. The displayed weights are the remaining " +
        "{mass}, renormalized to sum to 100%.", {
          sink: pct(r.sink), cls: pct(r.cls), sep: pct(r.sep), self: pct(r.self), word: quoted(word), mass: pct(r.mass) })),
      el("p", { class: "instr-effect-note" }, badge(effect, warn, t("effect ")),
        meta.warning.lens ? t(" Weighed by the size of what each token carries (‖α f(x)‖ on this head), [CLS] and [SEP] bring " +
        "{effect} of what the head brings to {word}. The warning reads this share: held to what " +
        "the sink does, it is the reading that is right when it warns (", { effect: pct(effect), word: quoted(word) })
          : t(" Weighed by the size of what each token carries (‖α f(x)‖ on this head), [CLS] and [SEP] bring " +
        "{effect} of what the head brings to {word}. On this model no reading was found fit to warn " +
        "(its verdict on the mean-ablation truth: {verdict}), so no row is flagged (", { effect: pct(effect), word: quoted(word),
            verdict: verdictWord(meta.warning.verdict) }),
        el("a", { href: articleHref(), text: t("Part 10") }), ").")];
      if (meta.warning.lens && !this.onAlphaHead(r)) {
        notes.push(el("p", { class: "instr-effect-note", text: t("This row is not on the head α opens for " +
          "{word}, where the warning was held to what the sink does: here the share is shown, and no warning.",
          { word: quoted(word) }) }));
      }
      const puncts = data.words.map((x, w) => [x, w]).filter(([, w]) => data.punct[w] && w !== r.w);
      notes.push(el("p", { class: "instr-punct-note" }, puncts.length
        ? t("{punct} of the full row went to punctuation ({marks}): " +
          "counted apart from the sink, it stays in the displayed row.",
          { punct: pct(r.punct), marks: puncts.map(([x]) => quoted(x)).join(", ") })
        : t("No punctuation in this sentence besides the word itself.")));
      if (warn) {
        notes.push(el("p", { class: "instr-warning" },
          el("strong", { text: t("Warning: ") }),
          t("[CLS] and [SEP] bring more than {threshold} of what this head brings to {word}. " +
          "Whatever ranking the row shows describes the smaller part of what the head does here.",
          { threshold: pct(idx.threshold, 0), word: quoted(word) })));
      }
      if (r.mass < idx.tiny_mass) {
        notes.push(el("p", { class: "instr-warning instr-tiny-note", text: massNote(r, word) }));
      }
      notes.push(...this.truthNotes(r, word));
      const toks = data.tokens.filter((_, i) => data.word_ids[i] === r.w);
      notes.push(el("p", { class: "instr-tokens", text: t("{word} enters the model as {tokens}.",
        { word: quoted(data.words[r.w]), tokens: toks.map(quoted).join(" + ") }) }));
      const titleId = nextId("instr-detail-title");
      this.detail.setAttribute("aria-labelledby", titleId);
      return [
        el("p", { class: "instr-detail-title", id: titleId },
          el("strong", { text: t("The row of {word}", { word: quoted(word) }) }),
          t(" on layer {layer}, head {head} ({why})", { layer: r.lh[0], head: r.lh[1], why })),
        el("div", { class: "instr-heads", role: "group", "aria-label": t("View this row on another head") },
          el("span", { class: "instr-heads-label", text: t("View on another head:") }),
          field(t("Layer"), layer), field(t("Head"), headSel),
          el("div", { class: "instr-field instr-check" }, all, el("label", { for: all.id, text: t("for every word") })),
          reset),
        ...notes,
        this.bars(r, word),
      ];
    }

    // Part 8: the row's ground truth by ablation, and what a fix's row is.
    truthNotes(r, word) {
      const out = [], truth = this.truthOf(r), fix = this.fixes.get(this.state.lens);
      if (fix && this.view.kind === "corpus") {
        const other = r.self < 1 ? r.sink / (1 - r.self) : 0;
        out.push(el("p", { class: "instr-fix-note", text: t("Under {fix} this is the row of layer {layer}, every " +
          "head and the residual together: {self} stays with {word} itself, and the sink share " +
          "{sink} counts that column; among the other words only, the sink has {other}.", {
          fix: fix.label, layer: r.lh[0], self: pct(r.self), word: quoted(word), sink: pct(r.sink), other: pct(other) }) }));
      }
      if (truth) {
        const sci = (x) => I18N.num(x, { exponent: 1 });
        out.push(el("p", { class: "instr-truth-note", text: t("Ground truth (ablation, layer {layer}, head {head}): " +
          "taking [CLS] and [SEP]'s part out of this head's output moves {word}'s layer output by " +
          "{sink} (1 − cos), taking the other tokens' part out by {content}, " +
          "and the whole head by {whole}: the sink carries {share} of what the head " +
          "does to the word (the row shown gives it {row}). A cosine distance grows as the square of a small " +
          "change, so this share sits further from one half than the size of the change would.", {
          layer: r.lh[0], head: r.lh[1], word: quoted(word), sink: sci(truth.sink), content: sci(truth.content),
          whole: sci(truth.head), share: pct(truth.share), row: pct(r.sink) }) }));
      } else if (this.view.kind === "corpus") {
        out.push(el("p", { class: "instr-truth-note", text: t("Ground truth (ablation): measured on the heads the rule " +
          "opens under α, ‖α v‖ and ‖α f(x)‖, not on this one.") }));
      }
      return out;
    }

    pickHead(lh, forAll = !!this.state.pickAll) {
      const s = this.state;
      if (forAll) return this.go({ pickAll: lh, pick: new Map() });
      const pick = new Map(s.pickAll ? [] : s.pick); // leaving "every word": only this one keeps it
      pick.set(s.word, lh);
      return this.go({ pickAll: null, pick });
    }

    // The open row as a vertical list: every column, as displayed and in the full row.
    bars(r, word) {
      const v = this.view.data, n = v.words.length;
      const body = el("tbody");
      const bar = (x, cls) => el("span", { class: `instr-bar ${cls}`, style: `width:${(x * 100).toFixed(2)}%` });
      for (let k = 0; k <= n + 1; k++) {
        const sink = k === 0 || k === n + 1, self = k - 1 === r.w, punct = !sink && v.punct[k - 1];
        const label = k === 0 ? "[CLS]" : k === n + 1 ? "[SEP]" : this.wordLabel(k - 1);
        const x = sink || self ? null : r.shown[k - 1];
        body.append(el("tr", { class: sink ? "instr-bar-sink" : self ? "instr-bar-self" : punct ? "instr-bar-punct" : "" },
          el("th", { scope: "row",
            text: self ? t("{label} (itself)", { label }) : punct ? t("{label} (punctuation)", { label }) : label }),
          el("td", { class: "instr-track" },
            x == null ? el("span", { class: "instr-dropped", text: t("not shown") }) : bar(x, "instr-bar-shown")),
          el("td", { class: "instr-num", text: x == null ? "—" : pct(x) }),
          el("td", { class: "instr-track" }, bar(r.raw[k], sink ? "instr-bar-sinkfill" : self ? "instr-bar-selffill" : "instr-bar-raw")),
          el("td", { class: "instr-num", text: pct(r.raw[k]) })));
      }
      return el("table", { class: "instr-bars" },
        el("caption", { text: t("Where the attention of {word} goes, column by column", { word: quoted(word) }) }),
        el("thead", {}, el("tr", {},
          el("th", { scope: "col", text: t("To") }),
          el("th", { scope: "col", colspan: "2", text: t("As displayed") }),
          el("th", { scope: "col", colspan: "2", text: t("In the full row") }))),
        body);
    }

    announce(text) {
      // Emptied first, so the same sentence twice is still read out.
      this.status.textContent = "";
      setTimeout(() => { this.status.textContent = text; }, 50);
    }
  }

  // A corpus register ("news") by its name in the page's language (i18n.js's DATA_FR).
  const registerName = (register) => I18N.data(register);

  // Whether the page shows a fix (a comparison lens of part 8).
  function s_fix(instrument) { return instrument.fixes.has(instrument.state.lens); }

  // The warning's reading (Part 10, articles/decisive-test.md): the sink's share of the row under
  // ‖α f(x)‖ on the head shown, the reading held to what the sink does that was right when it warned.
  // Read when drawn, not when the script loads: the page's language is the one on screen.
  const effectTitle = () => t("[CLS] and [SEP]'s share of what this head brings to the word, each weight " +
    "times the size of what it carries (‖α f(x)‖ on this head): the warning reads this");

  // Part 10's verdict on a model, in the page's language.
  function verdictWord(verdict) {
    if (verdict === "not fit") return t("not fit");
    if (verdict === "undetermined") return t("undetermined");
    return t("not measured");
  }

  function badge(effect, warn, prefix = "") {
    return el("span", { class: "instr-badge" + (warn ? " instr-badge-warn" : ""), title: effectTitle() },
      el("span", { class: "instr-sr", text: warn ? t("warning, sink effect ") : t("sink effect ") }),
      el("span", { "aria-hidden": "true", text: `${warn ? "⚠ " : ""}${prefix}` }), pct(effect));
  }

  // Part 10 in the page's language: on a French page whose scripts are shared with the English
  // site (siteBase() is the English root), the French edition's article under fr/.
  function articleHref() {
    const base = siteBase(), fr = base + "fr/";
    return (I18N.lang === "fr" && location.href.startsWith(fr) ? fr : base) + "articles/decisive-test/";
  }

  function massNote(r, word) {
    return t("Content mass {mass}: this row shows what is left after {sink} went to " +
      "[CLS]/[SEP] and {self} to {word} itself.", { mass: pct(r.mass), sink: pct(r.sink), self: pct(r.self), word: quoted(word) });
  }

  function legend() {
    return el("div", { class: "instr-legend" },
      el("span", {}, el("span", { class: "instr-swatch instr-swatch-shade" }),
        t("shade: share of the displayed row (square-root scale; numbers in %)")),
      el("span", {}, el("span", { class: "instr-swatch instr-sink" }),
        t("[CLS], [SEP]: dropped from the display; number = % of the full row")),
      el("span", {}, el("span", { class: "instr-swatch instr-punct" }),
        t("punctuation: kept in the display, its full-row share in Punct.")),
      el("span", {}, el("span", { class: "instr-swatch instr-self", text: "·" }), t("the word itself, dropped")),
      el("span", {}, el("span", { class: "instr-badge instr-badge-warn", text: "⚠" }),
        t("warning: the sink brings more than half of what the head brings (Effect)")));
  }

  // -- wiring: Material's instant navigation swaps pages without reloading scripts ----------

  let current = null;

  async function boot() {
    const root = document.getElementById("instrument");
    if (!root || root.dataset.ready) return;
    root.dataset.ready = "1";
    try {
      const [index] = await Promise.all([loadJSON("assets/instrument/index.json"), loadScript("javascripts/instrument/core.js")]);
      current = new Instrument(root, index, window.InstrumentCore);
      await current.fromHash();
    } catch (err) {
      root.textContent = t("The instrument could not start: {error}", { error: err.message });
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
