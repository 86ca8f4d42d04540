"""The oracle: the same forward pass in NumPy float64, no padding.

Written independently of `encoder.py` (no torch, no shared helpers), function for
function with the same names, so the two can be read side by side. It shares only
the loaded arrays. The site publishes the live agreement of the two.

MPNet's differences from BERT are here too, written another way: positions counted
from `position_offset`, no token-type embedding, and the relative-position bias, whose
buckets `relative_bucket` finds in exact integer arithmetic where the reference takes a
float64 logarithm (and MPNet's own code a float32 one).

Sentences run together without padding: the per-token layers (projections, LayerNorm,
the feed-forward block) over all of a batch's tokens at once, [N, C], which keeps the
float64 matrix products large enough to be fast; attention, the one place tokens meet,
sentence by sentence.

Shapes: N tokens of a batch, T tokens of one sentence, C = d_model, nh heads, hs head
size, F = d_ff.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
from scipy.special import erf

from . import perturb
from .weights import Checkpoint


@dataclass
class OracleOutput:
    hidden: np.ndarray        # [T, C]
    alpha: list[np.ndarray]   # L x [nh, T, T]
    value: list[np.ndarray]   # L x [nh, T, hs]
    f_norm: list[np.ndarray]  # L x [nh, T]: ||f|| = ||v W_O^h||
    f: list[np.ndarray] = field(default_factory=list)              # L x [nh, T, C], if asked for (12x v)
    hidden_states: list[np.ndarray] = field(default_factory=list)  # L+1 x [T, C]: embeddings, then each layer


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased, as BERT's LayerNorm
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    return x @ W.T + b  # W is [out, in]


class Float64:
    """The checkpoint's float32 tensors, each read as float64 when it is used: a float64
    copy of every tensor at once would double the 12-layer model's memory."""

    def __init__(self, tensors: dict[str, np.ndarray]):
        self.tensors = tensors

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[name].astype(np.float64)

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def rows(self, name: str, ids: list[int]) -> np.ndarray:
        """Some rows of a table (the word or position embeddings), without converting the rest."""
        return self.tensors[name][ids].astype(np.float64)


def embeddings(ids: list[int], w: Float64, eps: float, offset: int = 0) -> np.ndarray:
    T = len(ids)
    x = (
        w.rows("embeddings.word_embeddings.weight", ids)
        + w.rows("embeddings.position_embeddings.weight", list(range(offset, offset + T)))  # MPNet's first position is 2
    )  # [T, C]
    if "embeddings.token_type_embeddings.weight" in w:  # BERT's segment 0; MPNet has none
        x = x + w["embeddings.token_type_embeddings.weight"][0]
    return layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)


def relative_bucket(d: int, n_buckets: int, max_distance: int) -> int:
    """MPNet's bucket of a key - query distance d, in integers.

    Keys after the query take the upper half of the buckets. With half = n_buckets / 2
    and e = half / 2: a distance n < e has bucket n; a longer one, bucket
    e + floor(log(n / e) / log(max_distance / e) * m) with m = half - e, capped at
    half - 1. That floor is the largest k with n^m * e^k >= e^m * max_distance^k,
    which integers decide exactly, with no logarithm to round.
    """
    half = n_buckets // 2
    e = half // 2
    m = half - e
    n = abs(d)
    base = half if d > 0 else 0
    if n < e:
        return base + n
    k = max(k for k in range(m) if n**m * e**k >= e**m * max_distance**k)
    return base + e + k


def position_bias(T: int, w: Float64, cfg) -> np.ndarray:
    """MPNet's relative-position bias on every layer's scores, [nh, T, T]."""
    table = w["encoder.relative_attention_bias.weight"]  # [buckets, nh]
    per_d = np.array([relative_bucket(d, cfg.rel_buckets, cfg.rel_max_distance) for d in range(1 - T, T)])
    d = np.arange(T)[None, :] - np.arange(T)[:, None]  # [T, T]: key - query
    return table[per_d[d + T - 1]].transpose(2, 0, 1)   # [T, T, nh] -> [nh, T, T]


def attention(x: np.ndarray, w: Float64, p: str, nh: int, eps: float, lengths: list[int],
              biases: list, with_f: bool, nudges: list | None = None):
    """x [N, C], the tokens of sentences of `lengths`, one after the other; `nudges`: each
    sentence's factors on its attention weights [nh, T, T] (perturb.py), or None."""
    N, C = x.shape
    hs = C // nh
    q = linear(x, w[p + "attention.self.query.weight"], w[p + "attention.self.query.bias"])  # [N, C]
    k = linear(x, w[p + "attention.self.key.weight"], w[p + "attention.self.key.bias"])
    v = linear(x, w[p + "attention.self.value.weight"], w[p + "attention.self.value.bias"])
    W_O = w[p + "attention.output.dense.weight"]              # [C, C]
    # f = v W_O^h, head by head over all the batch's tokens at once (one product per head,
    # not per head and sentence): [nh, N, C]. The head outputs alpha @ v, concatenated, then
    # projected, are the same as summing f; the measurements only read its norm.
    f_all = np.stack([v[:, h * hs:(h + 1) * hs] @ W_O[:, h * hs:(h + 1) * hs].T for h in range(nh)])
    f_norm_all = np.linalg.norm(f_all, axis=-1)                  # [nh, N]
    heads = lambda t: t.reshape(-1, nh, hs).transpose(1, 0, 2)  # [T, C] -> [nh, T, hs]
    ctx = np.empty_like(x)
    alphas, values, f_norms, fs = [], [], [], []
    start = 0
    for s, (T, bias) in enumerate(zip(lengths, biases)):
        part = slice(start, start + T)
        qs, ks, vs = heads(q[part]), heads(k[part]), heads(v[part])
        scores = qs @ ks.transpose(0, 2, 1) / np.sqrt(hs)  # [nh, T, T]
        if bias is not None:  # MPNet's relative-position bias [nh, T, T]
            scores = scores + bias
        alpha = softmax(scores)
        if nudges is not None:   # perturb.py's nudge, each row normalized again as a softmax's is
            alpha = alpha * nudges[s]
            alpha = alpha / alpha.sum(axis=-1, keepdims=True)
        ctx[part] = (alpha @ vs).transpose(1, 0, 2).reshape(T, C)
        alphas.append(alpha)
        values.append(vs)
        f_norms.append(f_norm_all[:, part].copy())
        fs.append(f_all[:, part].copy() if with_f else None)
        start += T
    out = linear(ctx, W_O, w[p + "attention.output.dense.bias"])
    x = layer_norm(x + out, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
    return x, alphas, values, f_norms, fs


def layer(x: np.ndarray, w: Float64, i: int, nh: int, eps: float, lengths: list[int], biases: list,
          with_f: bool, nudges: list | None = None):
    p = f"encoder.layer.{i}."
    x, alpha, v, f_norm, f = attention(x, w, p, nh, eps, lengths, biases, with_f, nudges)
    h = gelu(linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))  # [N, F]
    out = linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
    x = layer_norm(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x, alpha, v, f_norm, f


# Tokens per batch: large float64 products, without holding every sentence's attention at once.
BATCH_TOKENS = 2048


def forward(ckpt: Checkpoint, batch: list[list[int]], with_f: bool = False) -> Iterator[OracleOutput]:
    """Each sentence's token ids, unpadded, everything in float64; f itself only if asked.
    Yielded batch by batch, so that a caller keeping only what it needs never holds every
    sentence's hidden states and values at once."""
    cfg = ckpt.config
    w = Float64(ckpt.tensors)
    group = []
    for i, ids in enumerate(batch):
        group.append(ids)
        if sum(map(len, group)) >= BATCH_TOKENS or i == len(batch) - 1:
            yield from _sentences(group, w, cfg, with_f)
            group = []


def _sentences(batch: list[list[int]], w: Float64, cfg, with_f: bool) -> list[OracleOutput]:
    lengths = [len(ids) for ids in batch]
    nudge = perturb.from_env()   # off unless a check simulates another machine (perturb.py)
    nudged = lambda x, step: x * nudge.factors(batch, step, x.shape[1]) if nudge.on else x
    x = nudged(np.concatenate([embeddings(ids, w, cfg.layer_norm_eps, cfg.position_offset) for ids in batch]), 0)  # [N, C]
    biases = [position_bias(T, w, cfg) if cfg.rel_buckets else None for T in lengths]  # shared by all layers
    per_layer, xs = [], [x]
    for i in range(cfg.n_layer):
        on_alpha = nudge.attention_factors(batch, i, cfg.n_head) if nudge.on else None
        x, *out = layer(x, w, i, cfg.n_head, cfg.layer_norm_eps, lengths, biases, with_f, on_alpha)
        x = nudged(x, i + 1)
        per_layer.append(out)
        xs.append(x)
    bounds = np.cumsum([0, *lengths])
    return [
        OracleOutput(
            hidden=x[a:b],
            alpha=[alpha[s] for alpha, _, _, _ in per_layer],
            value=[v[s] for _, v, _, _ in per_layer],
            f_norm=[fn[s] for _, _, fn, _ in per_layer],
            f=[f[s] for _, _, _, f in per_layer] if with_f else [],
            hidden_states=[h[a:b] for h in xs],
        )
        for s, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))
    ]
