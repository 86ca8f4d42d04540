// The instrument's semantics in JavaScript: model/instrument.py, definition for definition.
//
// One sentence's token-level data (a corpus file, assets/instrument/<model>/<i>.json, or
// what the browser runtime computes for a typed sentence) in; word-level rows out:
//   lens row       alpha_ij * n_j renormalized to 1; n = 1 (alpha), ||v|| or ||f||
//   word rows      from-word = MEAN of its subword rows; to-word = SUM of its subword
//                  columns; columns K = [CLS], the words in order, [SEP]
//   sink share     row[CLS] + row[SEP] of the full row
//   punct share    the full row's weight on punctuation words other than the word itself
//   displayed row  the word columns without the word's own, renormalized; content mass
//                  is what they summed to before that (all zeros when it is 0)
//   head rule      positional heads excluded; then the head whose displayed row has the
//                  largest single weight; heads within the tie tolerance of the best
//                  tie, and a tie goes to the lowest layer, then head
// Plain functions of typed arrays; no DOM. Loaded by the page, the runtime's worker and
// Node's test runner (tests/js/).
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.InstrumentCore = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // An error's text in the page's language where javascripts/i18n.js is loaded (the page,
  // the worker); as written elsewhere (Node's tests).
  function t(english, values) {
    const i18n = typeof globalThis !== "undefined" && globalThis.liveI18n;
    return i18n ? i18n.t(english, values) : english.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
  }

  const QUANT = 65535; // model/views.py: alpha published as round(alpha * 65535)
  const FIXES = new Set(["kobayashi2021", "alti", "value_zeroing"]); // model/truth/readings.py FIXES

  /** base64 of little-endian uint16 -> Float32Array of q / 65535. */
  function decodeAlpha(text, count) {
    const bin = atob(text);
    if (bin.length !== 2 * count) throw new Error(t("alpha holds {n} values, expected {count}", { n: bin.length / 2, count }));
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = (bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8)) / QUANT;
    return out;
  }

  /** Token t -> word column (0 [CLS], 1..n the words, n+1 [SEP]); model/instrument.word_map. */
  function wordMap(wordIds) {
    const T = wordIds.length;
    let nWords = 0;
    for (const w of wordIds) if (w != null) nWords = Math.max(nWords, w + 1);
    const col = new Int32Array(T), size = new Float64Array(nWords);
    for (let t = 0; t < T; t++) {
      const w = wordIds[t];
      if (w == null) col[t] = t === 0 ? 0 : nWords + 1;
      else { col[t] = w + 1; size[w] += 1; }
    }
    return { T, nWords, K: nWords + 2, col, size };
  }

  /**
   * One sentence, ready to be read row by row. `data`: {word_ids, words, punct,
   * n_layers, n_heads, alpha (base64 string or typed array [L*nh*T*T]),
   * value_norm, output_norm ([L*nh*T])}.
   */
  class Sentence {
    constructor(data) {
      this.data = data;
      this.wm = wordMap(data.word_ids);
      this.L = data.n_layers;
      this.nh = data.n_heads;
      const T = this.wm.T, n = this.L * this.nh * T;
      this.alpha = typeof data.alpha === "string" ? decodeAlpha(data.alpha, n * T) : data.alpha;
      if (this.alpha.length !== n * T) {
        throw new Error(t("alpha has {n} values, expected {count}", { n: this.alpha.length, count: n * T }));
      }
      this.norms = { value_norm: data.value_norm, output_norm: data.output_norm };
      for (const [k, v] of Object.entries(this.norms)) {
        if (v.length !== n) throw new Error(t("{name} has {n} values, expected {count}", { name: k, n: v.length, count: n }));
      }
      this.punct = data.punct;
    }

    /** Word w's full row on head (l, h) under a lens: Float64Array [K], summing to 1. */
    wordRow(lens, l, h, w) {
      const { T, K, col, size } = this.wm;
      const base = (l * this.nh + h) * T;
      const norms = lens === "alpha" ? null : this.norms[lens];
      if (lens !== "alpha" && !norms) throw new Error(t("unknown lens {lens}", { lens }));
      const out = new Float64Array(K), weighted = new Float64Array(T);
      const wids = this.data.word_ids;
      for (let i = 0; i < T; i++) {
        if (wids[i] !== w) continue; // the word's subword rows ([CLS] and [SEP] have none)
        const a = (base + i) * T;
        let sum = 0;
        for (let j = 0; j < T; j++) {
          weighted[j] = this.alpha[a + j] * (norms ? norms[base + j] : 1);
          sum += weighted[j];
        }
        const scale = 1 / (sum * size[w]); // the lens's renormalization, then the mean over subwords
        for (let j = 0; j < T; j++) out[col[j]] += weighted[j] * scale;
      }
      return out;
    }

    /**
     * Part 8's fixes (model/truth/readings.py), corpus sentences only: word w's full row in layer l
     * under a fix, or null where it was not measured. kobayashi2021 and alti arrive as
     * token rows normalized to 1 ([L*T*T], 16 bits, like alpha), folded here as alpha is;
     * value zeroing as word rows, for the layer of the head alpha opens, on a sample.
     */
    fixRow(fix, l, w) {
      const { T, K, col, size } = this.wm;
      if (fix === "value_zeroing") {
        const hit = (this.data.value_zeroing || []).find(([word, layer]) => word === w && layer === l);
        return hit ? Float64Array.from(hit[2]) : null;
      }
      const text = this.data.fixes && this.data.fixes[fix];
      if (!text) return null;
      this.fixCache = this.fixCache || {};
      const m = this.fixCache[fix] || (this.fixCache[fix] = decodeAlpha(text, this.L * T * T));
      const out = new Float64Array(K), wids = this.data.word_ids;
      for (let i = 0; i < T; i++) {
        if (wids[i] !== w) continue;
        const a = (l * T + i) * T;
        let sum = 0;
        for (let j = 0; j < T; j++) sum += m[a + j];
        for (let j = 0; j < T; j++) out[col[j]] += m[a + j] / (sum * size[w]);
      }
      return out;
    }

    /** The ablation ground truth of word w's row on head (l, h), if the build measured it:
     *  {share, sink, content, head} (the effects are cosine distances). */
    ablation(w, l, h) {
      const hit = (this.data.ablation || []).find(([word, layer, head]) => word === w && layer === l && head === h);
      return hit ? { share: hit[3], sink: hit[4], content: hit[5], head: hit[6] } : null;
    }

    /** Everything the page says about word w's row on head (l, h) under a lens (or a fix:
     *  its row in layer l; null where the fix was not measured). */
    row(lens, l, h, w) {
      const { nWords, K } = this.wm;
      const raw = FIXES.has(lens) ? this.fixRow(lens, l, w) : this.wordRow(lens, l, h, w);
      if (raw == null) return null;
      const { shown, mass } = displayed(raw, w);
      let punct = 0;
      for (let k = 0; k < nWords; k++) if (k !== w && this.punct[k]) punct += raw[k + 1];
      return {
        w, raw, shown, mass, punct,
        cls: raw[0], sep: raw[K - 1], sink: raw[0] + raw[K - 1], self: raw[w + 1],
      };
    }

    /** The head rule for every shown word: [[layer, head], ...]; `excluded` holds "l.h" keys;
     *  heads within `tieTolerance` of the best score tie, and the first of them (lowest
     *  layer, then head) wins. */
    chooseHeads(lens, shownWords, excluded, tieTolerance) {
      const { nWords } = this.wm;
      const scores = []; // [L * nh][shown], layer-major
      for (let l = 0; l < this.L; l++) {
        for (let h = 0; h < this.nh; h++) {
          const skip = excluded.has(`${l}.${h}`);
          scores.push(shownWords.map((w) => (skip ? -1 : strongest(this.wordRow(lens, l, h, w), w, nWords))));
        }
      }
      return shownWords.map((_, i) => {
        const best = Math.max(...scores.map((s) => s[i]));
        const first = scores.findIndex((s) => s[i] >= best - tieTolerance);
        return [Math.floor(first / this.nh), first % this.nh];
      });
    }
  }

  /** Displayed row of a full word row [K] for word w: {shown: Float64Array [nWords], mass}. */
  function displayed(raw, w) {
    const n = raw.length - 2;
    const shown = new Float64Array(n);
    let mass = 0;
    for (let k = 0; k < n; k++) if (k !== w) mass += raw[k + 1];
    if (mass > 0) for (let k = 0; k < n; k++) if (k !== w) shown[k] = raw[k + 1] / mass;
    return { shown, mass };
  }

  /** The displayed row's largest weight (0 when the row has nothing to show). */
  function strongest(raw, w, n) {
    let mass = 0, top = 0;
    for (let k = 0; k < n; k++) if (k !== w) { mass += raw[k + 1]; top = Math.max(top, raw[k + 1]); }
    return mass > 0 ? top / mass : 0;
  }

  /** Word ids with a displayed row: every word that is not only punctuation. */
  function shownWords(punct) {
    const out = [];
    punct.forEach((p, w) => { if (!p) out.push(w); });
    return out;
  }

  return { QUANT, FIXES, decodeAlpha, wordMap, Sentence, displayed, shownWords };
});
