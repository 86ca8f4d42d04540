// The runtime's Web Worker: fetches a model's files from the site (only what a sentence
// needs, once), tokenizes, runs the forward pass, and posts back the same token-level
// data as a corpus sentence's file (docs/javascripts/instrument/core.js reads both).
//
// Messages in:  {type: "run", id, manifest: URL, text, lang}   (lang: the page's, "en" if absent)
// Messages out: {type: "progress", id, stage: "download", loaded, total}
//               {type: "progress", id, stage: "compute", layer, n_layers}
//               {type: "result", id, data, info}   (typed arrays transferred)
//               {type: "error", id, code, message}   (message in the run's language: ../i18n.js)
// Every file comes from the site's own host; nothing else is ever requested.
/* global importScripts, InstrumentEncoder, InstrumentTokenizer, InstrumentCore, liveI18n */
"use strict";

importScripts("../i18n.js", "core.js", "tokenizer.js", "encoder.js");
const t = liveI18n.t;

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  throw new Error("the runtime's weights are little-endian; this machine is not");
}

const models = new Map(); // manifest URL -> {manifest, tokenizer, weights, chunks, files}

class RunError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

async function fetchBytes(url, expected, onBytes) {
  const res = await fetch(url);
  if (!res.ok) throw new RunError("network", t("{path}: HTTP {status}", { path: new URL(url).pathname, status: res.status }));
  const out = new Uint8Array(expected);
  let at = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > expected) {
      throw new RunError("network", t("{path}: larger than the manifest says", { path: new URL(url).pathname }));
    }
    out.set(value, at);
    at += value.length;
    onBytes(value.length);
  }
  if (at !== expected) {
    throw new RunError("network", t("{path}: {bytes} bytes, expected {expected}",
      { path: new URL(url).pathname, bytes: liveI18n.num(at), expected: liveI18n.num(expected) }));
  }
  return out.buffer;
}

async function model(manifestUrl) {
  if (!models.has(manifestUrl)) {
    const res = await fetch(manifestUrl);
    if (!res.ok) throw new RunError("network", t("{path}: HTTP {status}", { path: new URL(manifestUrl).pathname, status: res.status }));
    const manifest = await res.json();
    models.set(manifestUrl, { manifest, tokenizer: null, weights: null, chunks: new Map() });
  }
  return models.get(manifestUrl);
}

/** Runs `jobs` (functions returning promises) at most `n` at a time. */
async function pool(jobs, n) {
  const queue = [...jobs];
  await Promise.all(Array.from({ length: Math.min(n, queue.length) }, async () => {
    while (queue.length) await queue.shift()();
  }));
}

async function run(msg) {
  const { id, text } = msg;
  const m = await model(msg.manifest);
  const man = m.manifest, base = msg.manifest;
  const progress = { loaded: 0, total: 0 };
  const tick = (n) => {
    progress.loaded += n;
    postMessage({ type: "progress", id, stage: "download", ...progress });
  };

  if (!m.tokenizer) {
    progress.total = man.tokenizer.bytes; // the rest is known once the sentence is tokenized
    const buf = await fetchBytes(new URL(man.tokenizer.url, base).href, man.tokenizer.bytes, tick);
    m.tokenizer = new InstrumentTokenizer.WordPiece(JSON.parse(new TextDecoder().decode(buf)));
  }
  const full = m.tokenizer.encode(text);
  if (full.words.length === 0) throw new RunError("no-tokens", t("nothing to read"));
  const cut = InstrumentTokenizer.truncateWords(full, man.config.max_position);
  const enc = cut.enc;
  if (enc.words.length === 0) throw new RunError("too-long", t("the first word alone is longer than the model's limit"));

  // What is still missing: the layers (first sentence only) and the embedding chunks of these ids.
  const R = man.embeddings.rows_per_chunk;
  const need = [...new Set(enc.ids.map((i) => Math.floor(i / R)))].filter((k) => !m.chunks.has(k));
  const layerFiles = m.weights ? [] : man.files;
  progress.total += layerFiles.reduce((a, f) => a + f.bytes, 0) + need.length * man.embeddings.chunk_bytes;
  const buffers = new Array(layerFiles.length);
  const jobs = [
    ...layerFiles.map((f, i) => async () => { buffers[i] = await fetchBytes(new URL(f.url, base).href, f.bytes, tick); }),
    ...need.map((k) => async () => {
      const size = Math.min(R, man.config.vocab_size - k * R) * man.config.d_model * 4;
      const url = new URL(man.embeddings.url.replace("{chunk}", String(k)), base).href;
      m.chunks.set(k, new Float32Array(await fetchBytes(url, size, tick)));
    }),
  ];
  await pool(jobs, 4);
  if (!m.weights) {
    m.weights = {};
    layerFiles.forEach((f, i) => Object.assign(m.weights, InstrumentEncoder.tensorViews(f, buffers[i])));
  }

  const C = man.config.d_model;
  const row = (tokenId) => m.chunks.get(Math.floor(tokenId / R)).subarray((tokenId % R) * C, (tokenId % R + 1) * C);
  const t0 = performance.now();
  const out = InstrumentEncoder.forward(enc.ids, m.weights, row, man.config, (layer) =>
    postMessage({ type: "progress", id, stage: "compute", layer: layer + 1, n_layers: man.config.n_layer }));
  const data = {
    tokens: enc.tokens, word_ids: enc.word_ids, words: enc.words, punct: enc.punct,
    shown: InstrumentCore.shownWords(enc.punct),
    n_layers: man.config.n_layer, n_heads: man.config.n_head,
    alpha: out.alpha, value_norm: out.value_norm, output_norm: out.output_norm,
  };
  const info = {
    text, ids: enc.ids, spans: enc.spans, nTokens: cut.nTokens, keptWords: cut.keptWords,
    droppedWords: cut.droppedWords, maxTokens: man.config.max_position, ms: performance.now() - t0,
    fetched: progress.total, unk: m.tokenizer.tokens[m.tokenizer.unk],
  };
  postMessage({ type: "result", id, data, info }, [out.alpha.buffer, out.value_norm.buffer, out.output_norm.buffer]);
}

// One sentence at a time: a second one waits, and finds the files the first fetched. Each
// runs in the language of the page that sent it (core.js and tokenizer.js read it too).
let queue = Promise.resolve();
self.onmessage = (e) => {
  const msg = e.data;
  if (msg.type !== "run") return;
  queue = queue.then(() => { liveI18n.setLang(msg.lang || "en"); return run(msg); }).catch((err) => {
    postMessage({ type: "error", id: msg.id, code: err.code || "internal", message: String(err.message || err) });
  });
};
