// The runtime's arithmetic (docs/javascripts/instrument/encoder.js) against known values;
// the whole forward pass is held to the Python reference by tests/test_browser_runtime.py.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const E = require("../../docs/javascripts/instrument/encoder.js");

test("erf to float64 accuracy on both sides of the series/continued-fraction switch", () => {
  // scipy.special.erf, printed with repr
  const known = [[0, 0], [0.1, 0.1124629160182849], [0.5, 0.5204998778130465], [1, 0.8427007929497148],
    [2, 0.9953222650189527], [2.4999, 0.9995928300996666], [2.5, 0.999593047982555],
    [3, 0.9999779095030014], [4, 0.9999999845827421], [5.9, 0.9999999999999999], [-1.5, -0.9661051464753108]];
  for (const [x, want] of known) assert.ok(Math.abs(E.erf(x) - want) < 1e-14, `erf(${x}) = ${E.erf(x)}, want ${want}`);
});

test("gelu is the exact erf form", () => {
  assert.ok(Math.abs(E.gelu(1) - 0.8413447460685429) < 1e-14);
  assert.ok(Math.abs(E.gelu(-3) - -0.00404969409489031) < 1e-14);
});

test("the blocked linear equals the plain loop on ragged shapes", () => {
  for (const [T, O, I] of [[1, 1, 1], [5, 3, 7], [4, 2, 4], [9, 6, 11]]) {
    const x = Float64Array.from({ length: T * I }, (_, i) => Math.sin(i + 1));
    const W = Float32Array.from({ length: O * I }, (_, i) => Math.cos(3 * i));
    const b = Float32Array.from({ length: O }, (_, i) => i / 7);
    const y = E.linear(x, T, W, b, O, I);
    for (let t = 0; t < T; t++) for (let o = 0; o < O; o++) {
      let s = 0;
      for (let i = 0; i < I; i++) s += x[t * I + i] * W[o * I + i];
      assert.equal(y[t * O + o], b[o] + s, `T=${T} O=${O} I=${I} [${t},${o}]`);
    }
  }
});

test("layer norm with a biased variance, and a stable softmax", () => {
  const y = E.layerNorm(Float64Array.from([1, 2, 3, 4]), 1, 4, [1, 1, 1, 1], [0, 0, 0, 0], 0);
  const sd = Math.sqrt(1.25); // biased variance of 1..4
  [-1.5, -0.5, 0.5, 1.5].forEach((d, i) => assert.ok(Math.abs(y[i] - d / sd) < 1e-15));
  const p = E.softmax(Float64Array.from([1000, 1000, 1000 - Math.log(2)]), 1, 3);
  [0.4, 0.4, 0.2].forEach((v, i) => assert.ok(Math.abs(p[i] - v) < 1e-12, `${p[i]} != ${v}`));
});

test("per-head Gram matrices give ||v W_O^h||", () => {
  const C = 4, nh = 2, hs = 2;
  const W = Float32Array.from({ length: C * C }, (_, i) => (i % 5) - 2);
  const G = E.headGrams(W, C, nh);
  const v = [0.5, -1.5]; // one value vector of head 1
  let direct = 0;
  for (let c = 0; c < C; c++) { const f = v[0] * W[c * C + hs] + v[1] * W[c * C + hs + 1]; direct += f * f; }
  const g = G.subarray(hs * hs, 2 * hs * hs);
  const viaGram = v[0] * (g[0] * v[0] + g[1] * v[1]) + v[1] * (g[2] * v[0] + g[3] * v[1]);
  assert.ok(Math.abs(direct - viaGram) < 1e-12);
});
