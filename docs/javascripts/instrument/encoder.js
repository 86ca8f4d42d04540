// The runtime: the encoder's forward pass in plain JavaScript, ported from the NumPy
// oracle (model/oracle.py) function for function, with the same names, so the two can
// be read side by side. Arithmetic is in float64 (JavaScript's own numbers) over the
// checkpoint's float32 weights, as the oracle does; only alpha is stored as float32.
//
// Shapes (row-major typed arrays): T tokens, C = d_model, nh heads, hs head size,
// F = d_ff, L layers. Linear weights are [out, in], as in the checkpoint.
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.InstrumentEncoder = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  function layerNorm(x, T, C, gamma, beta, eps) {
    const out = new Float64Array(T * C);
    for (let t = 0; t < T; t++) {
      const o = t * C;
      let mean = 0;
      for (let c = 0; c < C; c++) mean += x[o + c];
      mean /= C;
      let v = 0;
      for (let c = 0; c < C; c++) { const d = x[o + c] - mean; v += d * d; }
      const inv = 1 / Math.sqrt(v / C + eps); // biased variance, as BERT's LayerNorm
      for (let c = 0; c < C; c++) out[o + c] = (x[o + c] - mean) * inv * gamma[c] + beta[c];
    }
    return out;
  }

  // erf to float64 accuracy: its Taylor series below 2.5 (the largest term is about 16,
  // so the cancellation costs under 1e-14), the continued fraction of erfc above.
  const TWO_OVER_SQRT_PI = 1.1283791670955126;
  function erf(x) {
    const ax = Math.abs(x);
    if (ax < 2.5) {
      const x2 = x * x;
      let term = x, sum = x;
      for (let n = 1; n < 100; n++) {
        term *= -x2 / n;
        const add = term / (2 * n + 1);
        sum += add;
        if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
      }
      return TWO_OVER_SQRT_PI * sum;
    }
    if (ax >= 6) return Math.sign(x); // erfc(6) < 3e-17
    // erfc(z) = exp(-z^2)/sqrt(pi) / (z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + ...))))), backwards
    let f = ax;
    for (let k = 80; k >= 1; k--) f = ax + k / 2 / f;
    const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
    return Math.sign(x) * (1 - erfc);
  }

  function gelu(x) {
    return 0.5 * x * (1 + erf(x / Math.SQRT2));
  }

  /** Rows of [rows, n] in place. */
  function softmax(a, rows, n) {
    for (let r = 0; r < rows; r++) {
      const o = r * n;
      let max = -Infinity;
      for (let j = 0; j < n; j++) max = Math.max(max, a[o + j]);
      let sum = 0;
      for (let j = 0; j < n; j++) { a[o + j] = Math.exp(a[o + j] - max); sum += a[o + j]; }
      for (let j = 0; j < n; j++) a[o + j] /= sum;
    }
    return a;
  }

  /** x [T, I] @ W.T + b, W [O, I] -> [T, O]. Four tokens by two outputs at a time: each
   *  value loaded serves two or four products (2.3x the naive loop in V8); every sum still
   *  runs over i in order, so the result equals the naive loop's bit for bit. */
  function linear(x, T, W, b, O, I) {
    const y = new Float64Array(T * O);
    let o = 0;
    for (; o + 1 < O; o += 2) {
      const w0 = o * I, w1 = w0 + I, b0 = b[o], b1 = b[o + 1];
      let t = 0;
      for (; t + 3 < T; t += 4) {
        const a0 = t * I, a1 = a0 + I, a2 = a1 + I, a3 = a2 + I;
        let s00 = 0, s01 = 0, s10 = 0, s11 = 0, s20 = 0, s21 = 0, s30 = 0, s31 = 0;
        for (let i = 0; i < I; i++) {
          const wa = W[w0 + i], wb = W[w1 + i];
          let xv = x[a0 + i]; s00 += xv * wa; s01 += xv * wb;
          xv = x[a1 + i]; s10 += xv * wa; s11 += xv * wb;
          xv = x[a2 + i]; s20 += xv * wa; s21 += xv * wb;
          xv = x[a3 + i]; s30 += xv * wa; s31 += xv * wb;
        }
        const r = t * O + o;
        y[r] = b0 + s00; y[r + 1] = b1 + s01;
        y[r + O] = b0 + s10; y[r + O + 1] = b1 + s11;
        y[r + 2 * O] = b0 + s20; y[r + 2 * O + 1] = b1 + s21;
        y[r + 3 * O] = b0 + s30; y[r + 3 * O + 1] = b1 + s31;
      }
      for (; t < T; t++) {
        const a0 = t * I;
        let s0 = 0, s1 = 0;
        for (let i = 0; i < I; i++) { const xv = x[a0 + i]; s0 += xv * W[w0 + i]; s1 += xv * W[w1 + i]; }
        y[t * O + o] = b0 + s0;
        y[t * O + o + 1] = b1 + s1;
      }
    }
    for (; o < O; o++) { // an odd last output
      for (let t = 0; t < T; t++) {
        let s = 0;
        for (let i = 0; i < I; i++) s += x[t * I + i] * W[o * I + i];
        y[t * O + o] = b[o] + s;
      }
    }
    return y;
  }

  /** Per head, G_h = W_O^h^T W_O^h [hs, hs], so ||f_j||^2 = v_j G_h v_j^T without forming
   *  f_j = v_j W_O^h^T [C] (as the reference encoder reads it; 1/13 of a layer's work saved). */
  function headGrams(W_O, C, nh) {
    const hs = C / nh, G = new Float64Array(nh * hs * hs);
    for (let h = 0; h < nh; h++) {
      const g = h * hs * hs, d0 = h * hs;
      for (let c = 0; c < C; c++) {
        const r = c * C + d0;
        for (let d = 0; d < hs; d++) {
          const wd = W_O[r + d];
          for (let e = 0; e < hs; e++) G[g + d * hs + e] += wd * W_O[r + e];
        }
      }
    }
    return G;
  }

  /** ids [T] -> [T, C]: word + position + token type 0, then LayerNorm. `row(id)` gives a word-embedding row. */
  function embeddings(ids, w, row, cfg) {
    const T = ids.length, C = cfg.d_model;
    const pos = w["embeddings.position_embeddings.weight"], type0 = w["embeddings.token_type_embeddings.weight"];
    const x = new Float64Array(T * C);
    for (let t = 0; t < T; t++) {
      const word = row(ids[t]);
      for (let c = 0; c < C; c++) x[t * C + c] = word[c] + pos[t * C + c] + type0[c];
    }
    return layerNorm(x, T, C, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], cfg.layer_norm_eps);
  }

  /** One attention block: x [T, C] -> {x, alpha [nh, T, T], vnorm [nh, T], fnorm [nh, T]}. */
  function attention(x, T, w, p, cfg) {
    const C = cfg.d_model, nh = cfg.n_head, hs = C / nh, scale = 1 / Math.sqrt(hs);
    const q = linear(x, T, w[p + "attention.self.query.weight"], w[p + "attention.self.query.bias"], C, C);
    const k = linear(x, T, w[p + "attention.self.key.weight"], w[p + "attention.self.key.bias"], C, C);
    const v = linear(x, T, w[p + "attention.self.value.weight"], w[p + "attention.self.value.bias"], C, C);
    const W_O = w[p + "attention.output.dense.weight"]; // [C, C]
    const G = (w[p + "grams"] ||= headGrams(W_O, C, nh)); // computed once per loaded model
    const alpha = new Float64Array(nh * T * T), ctx = new Float64Array(T * C);
    const vnorm = new Float64Array(nh * T), fnorm = new Float64Array(nh * T);
    for (let h = 0; h < nh; h++) {
      const a = alpha.subarray(h * T * T, (h + 1) * T * T), d0 = h * hs;
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          let s = 0;
          for (let d = 0; d < hs; d++) s += q[i * C + d0 + d] * k[j * C + d0 + d];
          a[i * T + j] = s * scale;
        }
      }
      softmax(a, T, T);
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          const aij = a[i * T + j];
          for (let d = 0; d < hs; d++) ctx[i * C + d0 + d] += aij * v[j * C + d0 + d];
        }
      }
      // ||v_j||, and ||f_j|| with f_j = v_j W_O^h^T, the head's slice of the output projection (no bias)
      const g = G.subarray(h * hs * hs, (h + 1) * hs * hs);
      for (let j = 0; j < T; j++) {
        const vj = j * C + d0;
        let vv = 0, ff = 0;
        for (let d = 0; d < hs; d++) {
          const vd = v[vj + d];
          vv += vd * vd;
          let gv = 0;
          for (let e = 0; e < hs; e++) gv += g[d * hs + e] * v[vj + e];
          ff += vd * gv;
        }
        vnorm[h * T + j] = Math.sqrt(vv);
        fnorm[h * T + j] = Math.sqrt(Math.max(ff, 0));
      }
    }
    // The head outputs alpha @ v, concatenated, then projected: the same as summing f.
    const out = linear(ctx, T, W_O, w[p + "attention.output.dense.bias"], C, C);
    for (let i = 0; i < T * C; i++) out[i] += x[i];
    const y = layerNorm(out, T, C, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], cfg.layer_norm_eps);
    return { x: y, alpha, vnorm, fnorm };
  }

  function layer(x, T, w, i, cfg) {
    const p = `encoder.layer.${i}.`, C = cfg.d_model, F = cfg.d_ff;
    const att = attention(x, T, w, p, cfg);
    const h = linear(att.x, T, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"], F, C);
    for (let j = 0; j < h.length; j++) h[j] = gelu(h[j]);
    const out = linear(h, T, w[p + "output.dense.weight"], w[p + "output.dense.bias"], C, F);
    for (let j = 0; j < T * C; j++) out[j] += att.x[j];
    att.x = layerNorm(out, T, C, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], cfg.layer_norm_eps);
    return att;
  }

  /**
   * ids [T] -> {alpha: Float32Array [L, nh, T, T], value_norm, output_norm: Float64Array
   * [L, nh, T], hidden: Float64Array [T, C]}. `w`: tensor name -> Float32Array;
   * `row(id)`: that token's word-embedding row; `onLayer(i)` after each layer.
   */
  function forward(ids, w, row, cfg, onLayer) {
    const T = ids.length, L = cfg.n_layer, nh = cfg.n_head;
    const alpha = new Float32Array(L * nh * T * T);
    const value_norm = new Float64Array(L * nh * T), output_norm = new Float64Array(L * nh * T);
    let x = embeddings(ids, w, row, cfg);
    for (let i = 0; i < L; i++) {
      const out = layer(x, T, w, i, cfg);
      alpha.set(out.alpha, i * nh * T * T);
      value_norm.set(out.vnorm, i * nh * T);
      output_norm.set(out.fnorm, i * nh * T);
      x = out.x;
      if (onLayer) onLayer(i);
    }
    return { alpha, value_norm, output_norm, hidden: x };
  }

  /** Tensor views into the fetched files: manifest entry {tensors: {name: [offset, shape]}} + its ArrayBuffer. */
  function tensorViews(entry, buffer) {
    const out = {};
    for (const [name, [offset, shape]] of Object.entries(entry.tensors)) {
      out[name] = new Float32Array(buffer, offset * 4, shape.reduce((a, b) => a * b, 1));
    }
    return out;
  }

  return { layerNorm, erf, gelu, softmax, linear, headGrams, embeddings, attention, layer, forward, tensorViews };
});
