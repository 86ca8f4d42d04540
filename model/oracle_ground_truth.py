"""The oracle of part 8's measures: NumPy float64, from the oracle's own forward pass.

Written apart from `ground_truth.py` (no torch, nothing shared but the checkpoint's arrays
and the oracle's own helpers), function for function with the same names, and where a
definition allows two readings of the arithmetic it takes the other one: the ablated
output is formed from the attention's context (alpha @ v, projected) rather than from the
transported vectors f, and value zeroing sets the value vector to zero and re-runs the
head outputs, as the definition says, rather than subtracting its part.

Shapes: T tokens, C = d_model, nh heads, hs head size.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .oracle import Float64, OracleOutput, gelu, layer_norm, linear
from .weights import Checkpoint

SINK, CONTENT, CONTENT_OTHER, HEAD = range(4)


@dataclass
class LayerWeights:
    W_O: np.ndarray     # [C, C]
    b_O: np.ndarray
    ln1: tuple[np.ndarray, np.ndarray]
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    ln2: tuple[np.ndarray, np.ndarray]
    eps: float
    nh: int


def layer_weights(ckpt: Checkpoint, layer: int) -> LayerWeights:
    w, p = Float64(ckpt.tensors), f"encoder.layer.{layer}."
    return LayerWeights(
        W_O=w[p + "attention.output.dense.weight"], b_O=w[p + "attention.output.dense.bias"],
        ln1=(w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
        W_1=w[p + "intermediate.dense.weight"], b_1=w[p + "intermediate.dense.bias"],
        W_2=w[p + "output.dense.weight"], b_2=w[p + "output.dense.bias"],
        ln2=(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
        eps=ckpt.config.layer_norm_eps, nh=ckpt.config.n_head,
    )


def head_output(alpha_rows: np.ndarray, v: np.ndarray, w: LayerWeights) -> np.ndarray:
    """Some tokens' attention output before the residual: alpha_rows [nh, Q, T] over values
    v [nh, T, hs] -> the heads' outputs concatenated and projected, bias included [Q, C]."""
    ctx = np.concatenate([alpha_rows[h] @ v[h] for h in range(w.nh)], axis=-1)
    return linear(ctx, w.W_O, w.b_O)


def attention_parts(x: np.ndarray, alpha: np.ndarray, v: np.ndarray, w: LayerWeights) -> tuple[np.ndarray, np.ndarray]:
    """x [T, C], alpha [nh, T, T], v [nh, T, hs] -> (f [nh, T, C], r [T, C])."""
    hs = v.shape[-1]
    f = np.stack([v[h] @ w.W_O[:, h * hs:(h + 1) * hs].T for h in range(w.nh)])
    ctx = np.concatenate([alpha[h] @ v[h] for h in range(w.nh)], axis=-1)   # [T, C]
    return f, x + linear(ctx, w.W_O, w.b_O)


def rest_of_layer(r: np.ndarray, w: LayerWeights) -> np.ndarray:
    h = layer_norm(r, *w.ln1, w.eps)
    out = linear(gelu(linear(h, w.W_1, w.b_1)), w.W_2, w.b_2)
    return layer_norm(h + out, *w.ln2, w.eps)


def cosine_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1.0 - (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def ablation(x: np.ndarray, alpha: np.ndarray, v: np.ndarray, w: LayerWeights, tokens: np.ndarray,
             heads: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Head h loses, at token i, what each set of tokens gave it: its context becomes alpha
    restricted to the rest, times v. tokens, heads [Q], sets [Q, S, T] -> distances [Q, S]."""
    nh, T, hs = v.shape
    base = x[tokens] + head_output(alpha[:, tokens], v, w)                 # [Q, C]
    a, vh = alpha[heads, tokens], v[heads]                                  # [Q, T], [Q, T, hs]
    full = np.einsum("qt,qtd->qd", a, vh)
    kept = np.einsum("qst,qt,qtd->qsd", 1.0 - sets, a, vh)                  # [Q, S, hs]
    W_h = w.W_O.reshape(-1, nh, hs)[:, heads].transpose(1, 0, 2)           # [Q, C, hs]
    moved = base[:, None] - np.einsum("qsd,qcd->qsc", full[:, None] - kept, W_h)
    return cosine_distance(rest_of_layer(base, w)[:, None], rest_of_layer(moved, w))


def value_zeroing(x: np.ndarray, alpha: np.ndarray, v: np.ndarray, w: LayerWeights, tokens: np.ndarray) -> np.ndarray:
    """Zero v_j in every head and re-run the tokens' head outputs, for every j: [Q, T]."""
    nh, T, hs = v.shape
    out = rest_of_layer(x[tokens] + head_output(alpha[:, tokens], v, w), w)   # [Q, C]
    zeroed = np.repeat(v[None], T, axis=0)                                    # [T (which j), nh, T, hs]
    zeroed[np.arange(T), :, np.arange(T)] = 0.0
    ctx = np.einsum("nqt,jntd->qjnd", alpha[:, tokens], zeroed).reshape(len(tokens), T, nh * hs)
    moved = rest_of_layer(x[tokens][:, None] + linear(ctx, w.W_O, w.b_O), w)
    return cosine_distance(out[:, None], moved)


def contributions(x: np.ndarray, f: np.ndarray, alpha: np.ndarray, w: LayerWeights) -> tuple[np.ndarray, np.ndarray]:
    """Kobayashi 2021's and ALTI's [T, T] (see ground_truth.contributions), row by row."""
    T, C = x.shape
    gamma = w.ln1[0]
    kob, alti = np.zeros((T, T)), np.zeros((T, T))
    for i in range(T):
        z = np.einsum("nj,njc->jc", alpha[:, i], f)                   # [T, C]
        z[i] += x[i]
        g = (z - z.mean(axis=-1, keepdims=True)) * gamma
        y = g.sum(axis=0)
        kob[i] = np.linalg.norm(g, axis=-1)
        alti[i] = np.maximum(0.0, np.abs(y).sum() - np.abs(y - g).sum(axis=-1))
    return kob, alti


def sets_for(T: int, own: list[int]) -> np.ndarray:
    """[4, T] in the order SINK, CONTENT, CONTENT_OTHER, HEAD (ground_truth.sets_for)."""
    sink = np.isin(np.arange(T), [0, T - 1]).astype(float)
    mine = np.isin(np.arange(T), own).astype(float)
    return np.stack([sink, 1.0 - sink, (1.0 - sink) * (1.0 - mine), np.ones(T)])


def layer(w: LayerWeights, l: int, o: OracleOutput, ask, out) -> None:
    """One layer's measures for one sentence, from its oracle output, into `out`
    (a ground_truth.SentenceTruth, from ground_truth.empty)."""
    x, alpha, v = o.hidden_states[l], o.alpha[l], o.value[l]
    T = x.shape[0]
    if ask.fixes:
        f, _ = attention_parts(x, alpha, v, w)
        out.kobayashi[l], out.alti[l] = contributions(x, f, alpha, w)
    rows = [(q, i, h) for q, (word, ll, h) in enumerate(ask.heads) if ll == l for i in ask.tokens[word]]
    if rows:
        q, i, h = (np.array(c) for c in zip(*rows))
        sets = np.stack([sets_for(T, ask.tokens[ask.heads[k][0]]) for k in q])
        moved = ablation(x, alpha, v, w, i, h, sets)
        for k in set(q.tolist()):
            out.effects[k] = moved[q == k].mean(axis=0)
    for z, (word, ll) in enumerate(ask.zeroing):
        if ll == l:   # token by token: a [T, F] block at a time
            out.zeroing[z] = np.concatenate([value_zeroing(x, alpha, v, w, np.array([i])) for i in ask.tokens[word]])


def sentence(weights: list[LayerWeights], o: OracleOutput, ask):
    """The asked measures (ground_truth.Ask) from one sentence's oracle output."""
    from .ground_truth import empty, layers_needed  # the container and the layers asked, only

    L, T = len(o.alpha), o.alpha[0].shape[-1]
    out = empty(ask, L, T)
    for l in layers_needed(ask, L):
        layer(weights[l], l, o, ask, out)
    return out
