"""The oracle: the same forward pass in NumPy float64, one sentence at a time.

Written independently of `encoder.py` (no torch, no shared helpers), function for
function with the same names, so the two can be read side by side. It shares only
the loaded arrays. The site publishes the live agreement of the two.

Shapes: T tokens, C = d_model, nh heads, hs head size, F = d_ff.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import erf
from threadpoolctl import threadpool_limits

from .weights import Checkpoint


@dataclass
class OracleOutput:
    hidden: np.ndarray        # [T, C]
    alpha: list[np.ndarray]   # L x [nh, T, T]
    value: list[np.ndarray]   # L x [nh, T, hs]
    f: list[np.ndarray]       # L x [nh, T, C]


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


def embeddings(ids: list[int], w: dict[str, np.ndarray], eps: float) -> np.ndarray:
    T = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:T]
        + w["embeddings.token_type_embeddings.weight"][0]
    )  # [T, C]
    return layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)


def attention(x: np.ndarray, w: dict[str, np.ndarray], p: str, nh: int, eps: float):
    T, C = x.shape
    hs = C // nh
    heads = lambda t: t.reshape(T, nh, hs).transpose(1, 0, 2)  # [nh, T, hs]
    q = heads(linear(x, w[p + "attention.self.query.weight"], w[p + "attention.self.query.bias"]))
    k = heads(linear(x, w[p + "attention.self.key.weight"], w[p + "attention.self.key.bias"]))
    v = heads(linear(x, w[p + "attention.self.value.weight"], w[p + "attention.self.value.bias"]))
    alpha = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(hs))  # [nh, T, T]
    W_O = w[p + "attention.output.dense.weight"]              # [C, C]
    f = np.stack([v[h] @ W_O[:, h * hs:(h + 1) * hs].T for h in range(nh)])  # [nh, T, C]
    # The head outputs alpha @ v, concatenated, then projected: the same as summing f.
    ctx = (alpha @ v).transpose(1, 0, 2).reshape(T, C)
    out = linear(ctx, W_O, w[p + "attention.output.dense.bias"])
    x = layer_norm(x + out, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
    return x, alpha, v, f


def layer(x: np.ndarray, w: dict[str, np.ndarray], i: int, nh: int, eps: float):
    p = f"encoder.layer.{i}."
    x, alpha, v, f = attention(x, w, p, nh, eps)
    h = gelu(linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))  # [T, F]
    out = linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
    x = layer_norm(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x, alpha, v, f


def forward(ckpt: Checkpoint, batch: list[list[int]]) -> list[OracleOutput]:
    """Each sentence's token ids run alone (no padding), everything in float64."""
    cfg = ckpt.config
    w = {k: v.astype(np.float64) for k, v in ckpt.tensors.items()}
    outputs = []
    # One sentence's matrices are tiny ([T, 384]); BLAS threads only fight over them,
    # badly so on a busy 2-core machine.
    with threadpool_limits(limits=1):
        for ids in batch:
            outputs.append(_sentence(ids, w, cfg))
    return outputs


def _sentence(ids: list[int], w: dict[str, np.ndarray], cfg) -> OracleOutput:
    x = embeddings(ids, w, cfg.layer_norm_eps)
    alphas, values, fs = [], [], []
    for i in range(cfg.n_layer):
        x, alpha, v, f = layer(x, w, i, cfg.n_head, cfg.layer_norm_eps)
        alphas.append(alpha)
        values.append(v)
        fs.append(f)
    return OracleOutput(hidden=x, alpha=alphas, value=values, f=fs)
