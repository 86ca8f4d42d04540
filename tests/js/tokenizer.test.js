// The JS WordPiece (docs/javascripts/instrument/tokenizer.js) on a hand-made record:
// each step of BertNormalizer + BertPreTokenizer + WordPiece with a known answer. The
// browser tests compare it with `tokenizers` itself on the real vocabulary.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { WordPiece, truncateWords } = require("../../docs/javascripts/instrument/tokenizer.js");

const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##real", "cat", "cafe", ",", "!", "中", "ᄀ", "##ᅡ", "a", "##b", "<", ">", "i"];
const REC = {
  vocab: VOCAB, unk: "[UNK]", prefix: "##", max_chars: 6, cls: 2, sep: 3,
  added: [{ id: 2, content: "[CLS]" }, { id: 3, content: "[SEP]" }, { id: 1, content: "[UNK]" }],
  chars: {
    delete: [[0, 0], [0x200b, 0x200b]], space: [[9, 10], [0xa0, 0xa0]], pad: [[0x4e00, 0x9fff]],
    map: { ...Object.fromEntries([..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"].map((c) => [c.charCodeAt(0), c.toLowerCase()])),
      233: "e" }, hangul: true,
    split: [[9, 13], [32, 32]], isolate: [[33, 33], [44, 44], [60, 60], [62, 62]],
  },
  punct: [[33, 33], [44, 44]],
};
const tok = new WordPiece(REC);
const enc = (s) => tok.encode(s);

test("normalize, split, WordPiece: ids, tokens, word ids and words as written", () => {
  const e = enc("Unreal CAT, café!");
  assert.deepEqual(e.tokens, ["[CLS]", "un", "##real", "cat", ",", "cafe", "!", "[SEP]"]);
  assert.deepEqual(e.word_ids, [null, 0, 0, 1, 2, 3, 4, null]);
  assert.deepEqual(e.words, ["Unreal", "CAT", ",", "café", "!"]);
  assert.deepEqual(e.punct, [false, false, true, false, true]);
});

test("dropped characters vanish but stay inside the word's span; odd spaces split", () => {
  const e = enc("c\u200bat\u00a0cat");
  assert.deepEqual(e.tokens.slice(1, -1), ["cat", "cat"]);
  assert.deepEqual(e.words, ["c\u200bat", "cat"]);
});

test("unknown rests and over-long words are [UNK], whole", () => {
  assert.deepEqual(enc("catz").tokens.slice(1, -1), ["[UNK]"]);
  assert.deepEqual(enc("abbbbbb").tokens.slice(1, -1), ["[UNK]"]);       // 7 characters > max_chars 6
  assert.deepEqual(enc("abbbbb").tokens.slice(1, -1), ["a", "##b", "##b", "##b", "##b", "##b"]);
});

test("CJK characters are words of their own; Hangul decomposes by rule", () => {
  const e = enc("中中");
  assert.deepEqual(e.tokens.slice(1, -1), ["中", "中"]);
  assert.deepEqual(e.word_ids.slice(1, -1), [0, 1]);
  assert.deepEqual(enc("가").tokens.slice(1, -1), ["ᄀ", "##ᅡ"]);
});

test("special tokens typed in the text match first, on the raw text, as words of their own", () => {
  const e = enc("cat[SEP]cat [CLS]");
  assert.deepEqual(e.ids, [2, 6, 3, 6, 2, 3]);
  assert.deepEqual(e.word_ids, [null, 0, 1, 2, 3, null]);
  assert.deepEqual(e.words, ["cat", "[SEP]", "cat", "[CLS]"]);
  assert.deepEqual(enc("[cls]").tokens.slice(1, -1), ["[UNK]"]); // only the exact spelling
});

test("markup is text: brackets are isolated, nothing else happens", () => {
  const e = enc("<i>");
  assert.deepEqual(e.words, ["<", "i", ">"]);
  assert.deepEqual(e.tokens.slice(1, -1), ["<", "i", ">"]);
});

test("astral characters count as one character, spans in code points", () => {
  const e = enc("😀 cat");
  assert.deepEqual(e.tokens.slice(1, -1), ["[UNK]", "cat"]);
  assert.deepEqual(e.words, ["😀", "cat"]);
});

test("nothing left: only [CLS] and [SEP]", () => {
  const e = enc("\u200b \u0000");
  assert.deepEqual(e.ids, [2, 3]);
  assert.deepEqual(e.words, []);
});

test("truncation keeps whole words within the limit, [SEP] last", () => {
  const e = enc("unreal cat cafe cat");           // tokens: CLS un ##real cat cafe cat SEP (7)
  const cut = truncateWords(e, 5);                // room for 3 word tokens: "unreal" (2) + "cat" (1)
  assert.equal(cut.nTokens, 7);
  assert.equal(cut.keptWords, 2);
  assert.equal(cut.droppedWords, 2);
  assert.deepEqual(cut.enc.tokens, ["[CLS]", "un", "##real", "cat", "[SEP]"]);
  assert.deepEqual(cut.enc.words, ["unreal", "cat"]);
  const cut2 = truncateWords(e, 4);               // "unreal" fits, "cat" would be the 4th token
  assert.deepEqual(cut2.enc.tokens, ["[CLS]", "un", "##real", "[SEP]"]);
  assert.equal(truncateWords(e, 7).droppedWords, 0);
});
