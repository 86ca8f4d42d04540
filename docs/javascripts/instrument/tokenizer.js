// WordPiece in JavaScript, matching `tokenizers` (BertNormalizer + BertPreTokenizer +
// WordPiece + [CLS] ... [SEP]) id for id, with the same word ids and word spans.
//
// The record it reads (tokenizer.json of the runtime, model/site/runtime_export.py)
// carries the vocabulary and the normalizer and pre-tokenizer as a per-character table
// read off `tokenizers` at build time, so nothing here depends on the Unicode tables of
// the reader's browser. The steps, as `tokenizers` runs them:
//   1. special tokens ([CLS], [UNK], ...) typed in the text are matched first, on the raw
//      text, leftmost-longest; each is a word of its own;
//   2. every other character is normalized alone (clean, pad CJK, NFD, drop Mn,
//      lowercase: the table's image of it), remembering the character it came from;
//   3. words split at the table's `split` characters (removed) and `isolate` characters
//      (punctuation, a word each);
//   4. each word goes through WordPiece: longest vocabulary prefix first, then "##"
//      pieces; a word with an unmatched rest, or over `max_chars` characters, is [UNK].
// Offsets are in code points of the original text, as `tokenizers` reports them.
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.InstrumentTokenizer = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // An error's text in the page's language where javascripts/i18n.js is loaded (the page,
  // the worker); as written elsewhere (Node's tests).
  function t(english, values) {
    const i18n = typeof globalThis !== "undefined" && globalThis.liveI18n;
    return i18n ? i18n.t(english, values) : english.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
  }

  /** Sorted [[first, last], ...] ranges -> a membership test by binary search. */
  function rangeSet(ranges) {
    const lo = Int32Array.from(ranges, (r) => r[0]), hi = Int32Array.from(ranges, (r) => r[1]);
    return (cp) => {
      let a = 0, b = lo.length - 1;
      while (a <= b) {
        const m = (a + b) >> 1;
        if (cp < lo[m]) b = m - 1;
        else if (cp > hi[m]) a = m + 1;
        else return true;
      }
      return false;
    };
  }

  function hangulNfd(cp) {
    const s = cp - 0xac00;
    const out = [0x1100 + Math.floor(s / 588), 0x1161 + Math.floor((s % 588) / 28)];
    if (s % 28) out.push(0x11a7 + (s % 28));
    return String.fromCodePoint(...out);
  }

  class WordPiece {
    constructor(rec) {
      this.vocab = new Map(rec.vocab.map((t, i) => [t, i]));
      this.tokens = rec.vocab;
      this.unk = this.vocab.get(rec.unk);
      if (this.unk === undefined) throw new Error(t("unknown token {token} is not in the vocabulary", { token: rec.unk }));
      this.prefix = rec.prefix;
      this.maxChars = rec.max_chars;
      this.cls = rec.cls;
      this.sep = rec.sep;
      // Longest first, so the first match at a position is the longest.
      this.added = rec.added.map((a) => ({ id: a.id, cps: Array.from(a.content, (ch) => ch.codePointAt(0)) }))
        .sort((a, b) => b.cps.length - a.cps.length);
      const c = rec.chars;
      this.isDeleted = rangeSet(c.delete);
      this.isSpace = rangeSet(c.space);
      this.isPadded = rangeSet(c.pad);
      this.isSplit = rangeSet(c.split);
      this.isIsolated = rangeSet(c.isolate);
      this.map = new Map(Object.entries(c.map).map(([k, v]) => [Number(k), v]));
      this.hangul = !!c.hangul;
      this.isPunctChar = rangeSet(rec.punct);
    }

    /** A code point's image under the normalizer (a string, maybe empty). */
    normalizeChar(cp) {
      if (this.isDeleted(cp)) return "";
      if (this.isSpace(cp)) return " ";
      const ch = String.fromCodePoint(cp);
      if (this.isPadded(cp)) return ` ${ch} `;
      const mapped = this.map.get(cp);
      if (mapped !== undefined) return mapped;
      if (this.hangul && cp >= 0xac00 && cp <= 0xd7a3) return hangulNfd(cp);
      return ch;
    }

    /** Python's is_punctuation (model/instrument.py): every character is Unicode P*. */
    isPunctuation(word) {
      for (const ch of word) if (!this.isPunctChar(ch.codePointAt(0))) return false;
      return word.length > 0;
    }

    /**
     * text -> {text, ids, tokens, word_ids, words, spans, punct}: [CLS] first and [SEP]
     * last (word id null); per word, its text as written (the slice `spans[w]` of the
     * text, in code points) and whether it is only punctuation.
     */
    encode(text) {
      const cps = Array.from(text, (ch) => ch.codePointAt(0));
      const pieces = []; // [{kind: "added", id, start, end} | {kind: "word", chars: [[cp, orig]]}]
      let word = null;
      const close = () => { if (word && word.chars.length) pieces.push(word); word = null; };
      for (let i = 0; i < cps.length;) {
        const hit = this.added.find((a) => a.cps.every((c, k) => cps[i + k] === c));
        if (hit) {
          close();
          pieces.push({ kind: "added", id: hit.id, start: i, end: i + hit.cps.length });
          i += hit.cps.length;
          continue;
        }
        for (const ch of this.normalizeChar(cps[i])) {
          const c = ch.codePointAt(0);
          if (this.isSplit(c)) close();
          else if (this.isIsolated(c)) { close(); pieces.push({ kind: "word", chars: [[c, i]] }); }
          else (word ||= { kind: "word", chars: [] }).chars.push([c, i]);
        }
        i += 1;
      }
      close();

      const out = { text, ids: [this.cls], tokens: [this.tokens[this.cls]], word_ids: [null], words: [], spans: [] };
      pieces.forEach((p, w) => {
        let start, end, ids;
        if (p.kind === "added") {
          [start, end, ids] = [p.start, p.end, [p.id]];
        } else {
          start = p.chars[0][1];
          end = p.chars[p.chars.length - 1][1] + 1;
          ids = this.wordPiece(p.chars.map(([c]) => String.fromCodePoint(c)));
        }
        for (const id of ids) {
          out.ids.push(id);
          out.tokens.push(this.tokens[id]);
          out.word_ids.push(w);
        }
        out.words.push(String.fromCodePoint(...cps.slice(start, end)));
        out.spans.push([start, end]);
      });
      out.ids.push(this.sep);
      out.tokens.push(this.tokens[this.sep]);
      out.word_ids.push(null);
      out.punct = out.words.map((w) => this.isPunctuation(w));
      return out;
    }

    /** One pre-tokenized word (an array of characters) -> token ids. */
    wordPiece(chars) {
      if (chars.length > this.maxChars) return [this.unk];
      const ids = [];
      for (let start = 0; start < chars.length;) {
        let end = chars.length, id;
        for (; end > start; end--) {
          const piece = (start > 0 ? this.prefix : "") + chars.slice(start, end).join("");
          id = this.vocab.get(piece);
          if (id !== undefined) break;
        }
        if (end === start) return [this.unk];
        ids.push(id);
        start = end;
      }
      return ids;
    }
  }

  /**
   * An encoding cut to at most `maxTokens` tokens ([CLS] and [SEP] included) at a word
   * boundary: {enc (the same shape), keptWords, droppedWords, nTokens (before the cut)}.
   */
  function truncateWords(enc, maxTokens) {
    const nTokens = enc.ids.length;
    if (nTokens <= maxTokens) return { enc, keptWords: enc.words.length, droppedWords: 0, nTokens };
    const last = new Array(enc.words.length).fill(0); // each word's last token
    enc.word_ids.forEach((w, t) => { if (w != null) last[w] = t; });
    let keep = 0;
    while (keep < last.length && last[keep] <= maxTokens - 2) keep++;
    const T = keep ? last[keep - 1] + 1 : 1; // [CLS] and the kept words' tokens
    const cut = (xs) => [...xs.slice(0, T), xs[xs.length - 1]];
    return {
      enc: {
        text: enc.text, ids: cut(enc.ids), tokens: cut(enc.tokens), word_ids: cut(enc.word_ids),
        words: enc.words.slice(0, keep), spans: enc.spans.slice(0, keep), punct: enc.punct.slice(0, keep),
      },
      keptWords: keep, droppedWords: enc.words.length - keep, nTokens,
    };
  }

  return { WordPiece, truncateWords, rangeSet };
});
