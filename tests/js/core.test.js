// The instrument's semantics in JS (docs/javascripts/instrument/core.js) on hand-made
// inputs whose answers are worked out on paper, as tests/test_instrument.py does for
// model/instrument.py. Run: node --test tests/js/
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const core = require("../../docs/javascripts/instrument/core.js");

const close = (got, want, tol = 1e-12) => {
  assert.equal(got.length, want.length, `length ${got.length} != ${want.length}`);
  for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got[i] - want[i]) <= tol, `[${i}] ${got[i]} != ${want[i]}`);
};

// [CLS] un ##real cat [SEP]: word 0 = "unreal" (two subwords), word 1 = "cat" (one layer, one head)
const TOKENS = [
  [1.0, 0.0, 0.0, 0.0, 0.0],
  [0.4, 0.1, 0.1, 0.2, 0.2], // "un"
  [0.2, 0.3, 0.1, 0.2, 0.2], // "##real"
  [0.5, 0.1, 0.1, 0.1, 0.2], // "cat"
  [0.0, 0.0, 0.0, 0.0, 1.0],
];
const sentence = (alpha, extra = {}) => new core.Sentence({
  word_ids: [null, 0, 0, 1, null], words: ["unreal", "cat"], punct: [false, false],
  n_layers: 1, n_heads: 1, alpha: Float64Array.from(alpha.flat()),
  value_norm: [1, 1, 1, 1, 1], output_norm: [1, 1, 1, 1, 1], ...extra,
});

test("words: from-word is the mean of its subword rows, to-word the sum of its columns", () => {
  const s = sentence(TOKENS);
  // "unreal": [CLS] (.4+.2)/2 = .3, unreal (.1+.1+.3+.1)/2 = .3, cat .2, [SEP] .2
  close(s.wordRow("alpha", 0, 0, 0), [0.3, 0.3, 0.2, 0.2]);
  close(s.wordRow("alpha", 0, 0, 1), [0.5, 0.2, 0.1, 0.2]);
});

test("sink share, displayed row and content mass", () => {
  const s = sentence(TOKENS);
  const r = s.row("alpha", 0, 0, 0);
  assert.ok(Math.abs(r.sink - 0.5) < 1e-12);
  assert.ok(Math.abs(r.mass - 0.2) < 1e-12);  // what is left without [CLS], [SEP] and itself
  close(r.shown, [0.0, 1.0]);                  // its own column dropped, the rest renormalized
  const c = s.row("alpha", 0, 0, 1);
  assert.ok(Math.abs(c.sink - 0.7) < 1e-12);
  close(c.shown, [1.0, 0.0]);
});

test("a row with no content mass displays zeros, not NaN", () => {
  const s = new core.Sentence({
    word_ids: [null, 0, 1, null], words: ["a", "b"], punct: [false, false], n_layers: 1, n_heads: 1,
    alpha: Float64Array.from([1, 0, 0, 0, 0.6, 0, 0, 0.4, 0.5, 0, 0.5, 0, 0, 0, 0, 1]),
    value_norm: [1, 1, 1, 1], output_norm: [1, 1, 1, 1],
  });
  const r = s.row("alpha", 0, 0, 0);
  assert.equal(r.mass, 0);
  close(r.shown, [0, 0]);
});

test("lenses weigh alpha by the norms, then renormalize; unit norms give alpha back", () => {
  // one word "x" between [CLS] and [SEP]: alpha row [.5, .25, .25], norms [0, 1, 3]
  const data = { word_ids: [null, 0, null], words: ["x"], punct: [false], n_layers: 1, n_heads: 1,
    alpha: Float64Array.from([1, 0, 0, 0.5, 0.25, 0.25, 0, 0, 1]), value_norm: [0, 1, 3], output_norm: [1, 1, 1] };
  const s = new core.Sentence(data);
  close(s.wordRow("value_norm", 0, 0, 0), [0.0, 0.25, 0.75]);
  close(s.wordRow("output_norm", 0, 0, 0), s.wordRow("alpha", 0, 0, 0));
  close(s.wordRow("alpha", 0, 0, 0), [0.5, 0.25, 0.25]);
});

test("punctuation share: the full row's weight on punctuation words, the word itself excluded", () => {
  // [CLS] go , now . [SEP]: words go / , / now / . (1 and 3 are punctuation)
  const T = 6, row = [0.1, 0.2, 0.3, 0.1, 0.2, 0.1];
  const alpha = [];
  for (let i = 0; i < T; i++) alpha.push(...row);
  const s = new core.Sentence({ word_ids: [null, 0, 1, 2, 3, null], words: ["go", ",", "now", "."],
    punct: [false, true, false, true], n_layers: 1, n_heads: 1, alpha: Float64Array.from(alpha),
    value_norm: Array(T).fill(1), output_norm: Array(T).fill(1) });
  assert.ok(Math.abs(s.row("alpha", 0, 0, 0).punct - 0.5) < 1e-12);  // "," .3 + "." .2
  assert.ok(Math.abs(s.row("alpha", 0, 0, 1).punct - 0.2) < 1e-12);  // "," itself excluded: "." only
  assert.ok(Math.abs(s.row("alpha", 0, 0, 2).sink - 0.2) < 1e-12);   // [CLS] .1 + [SEP] .1
  assert.deepEqual(core.shownWords([false, true, false, true]), [0, 2]);
});

test("head rule: largest displayed weight; near-ties to the lowest layer, then head; positional heads skipped", () => {
  // 2 layers x 2 heads; words a, b, c. Word a's displayed top weight per head:
  const rowFor = (top) => [0.1, 0.0, 0.8 * top, 0.8 * (1 - top), 0.1]; // [CLS], a, b, c, [SEP]
  const T = 5, heads = [[0.6, 0.9], [0.9, 0.7]];  // (0,1) and (1,0) tie at 0.9
  const alpha = [];
  for (const layer of heads) for (const top of layer) {
    for (let i = 0; i < T; i++) alpha.push(...(i === 1 ? rowFor(top) : [0.2, 0.2, 0.2, 0.2, 0.2]));
  }
  const s = new core.Sentence({ word_ids: [null, 0, 1, 2, null], words: ["a", "b", "c"], punct: [false, false, false],
    n_layers: 2, n_heads: 2, alpha: Float64Array.from(alpha), value_norm: Array(20).fill(1), output_norm: Array(20).fill(1) });
  assert.deepEqual(s.chooseHeads("alpha", [0], new Set(), 0), [[0, 1]]);          // the tie goes to layer 0
  assert.deepEqual(s.chooseHeads("alpha", [0], new Set(["0.1"]), 0), [[1, 0]]);   // excluded: the other 0.9
  assert.deepEqual(s.chooseHeads("alpha", [0], new Set(["0.1", "1.0"]), 0), [[1, 1]]);
  assert.deepEqual(s.chooseHeads("alpha", [0], new Set(["0.0", "0.1", "1.0", "1.1"]), 0), [[0, 0]]); // all excluded: the first
  // (1,1) at 0.7 is 0.2 below the best 0.9: within a tolerance of 0.25 it ties, and (0,1) still wins
  // as the first; with (0,1) and (1,0) excluded, (1,1) at 0.7 is best and (0,0) at 0.6 is within 0.15.
  assert.deepEqual(s.chooseHeads("alpha", [0], new Set(["0.1", "1.0"]), 0.15), [[0, 0]]);
  assert.deepEqual(s.chooseHeads("alpha", [0], new Set(["0.1", "1.0"]), 0.05), [[1, 1]]);
});

test("alpha decodes from base64 uint16 little-endian, value / 65535", () => {
  const q = [0, 65535, 32768, 1];
  const bytes = Buffer.from(Uint8Array.from(q.flatMap((v) => [v & 255, v >> 8])));
  close(core.decodeAlpha(bytes.toString("base64"), 4), q.map((v) => v / 65535), 1e-7);
  assert.throws(() => core.decodeAlpha(bytes.toString("base64"), 5), /expected 5/);
});

test("shape errors name the array", () => {
  assert.throws(() => sentence(TOKENS, { value_norm: [1, 1] }), /value_norm has 2 values, expected 5/);
});

// Part 8 (model/truth/, model/views.py): a fix's token rows arrive normalized, 16 bits like
// alpha, and fold like alpha; value zeroing arrives as word rows for one layer; the ablation
// ground truth as a lookup by (word, layer, head).
const quantized = (rows) => {
  const q = new Uint8Array(rows.flat().length * 2);
  rows.flat().forEach((x, i) => { const v = Math.round(x * core.QUANT); q[2 * i] = v & 255; q[2 * i + 1] = v >> 8; });
  return Buffer.from(q).toString("base64");
};

test("a fix's row folds its normalized token rows as alpha's, and its sink share counts the word itself", () => {
  const fix = [[1, 0, 0, 0, 0], [0.5, 0.25, 0.25, 0, 0], [0.25, 0.25, 0.25, 0.25, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]];
  const s = sentence(TOKENS, { fixes: { alti: quantized(fix) } });
  const r = s.row("alti", 0, 0, 0);
  // "unreal": mean of its two token rows -> [CLS] .375, unreal (.5 + .5) / 2 = .5, cat .125, [SEP] 0
  close(r.raw, [0.375, 0.5, 0.125, 0.0], 1e-4);
  assert.ok(Math.abs(r.sink - 0.375) < 1e-4 && Math.abs(r.self - 0.5) < 1e-4);
  assert.equal(s.row("kobayashi2021", 0, 0, 0), null); // not in the file: not measured
});

test("value zeroing is a word row for one layer only; the ablation is looked up by its head", () => {
  const s = sentence(TOKENS, {
    value_zeroing: [[1, 0, [0.1, 0.2, 0.6, 0.1]]],
    ablation: [[1, 0, 0, 0.25, 0.001, 0.003, 0.004]],
  });
  close(s.row("value_zeroing", 0, 0, 1).raw, [0.1, 0.2, 0.6, 0.1]);
  assert.equal(s.row("value_zeroing", 0, 0, 0), null);
  assert.deepEqual(s.ablation(1, 0, 0), { share: 0.25, sink: 0.001, content: 0.003, head: 0.004 });
  assert.equal(s.ablation(1, 0, 1), null);
});
