"""What [CLS] and [SEP] really do to a word, and the fixes published after Kobayashi et al.
(2020): the PyTorch reference of part 8's measures (docs/study.yml, `ground_truth`,
`later_fixes`).

Everything starts from one layer's input x (the reference's own) and its attention alpha,
and recomputes the rest of the layer, all in float64: the measures are differences of two
passes through a LayerNorm and a feed-forward block, and float32 would round a small
difference away. `model/oracle_ground_truth.py` is the same in NumPy from the oracle's own
float64 forward pass, function for function, with the same names.

- `attention_parts`: f = v W_O^h per head, and r, the residual stream entering the
  attention block's LayerNorm (x + sum_h alpha^h f^h + b_O).
- `rest_of_layer`: LayerNorm, feed-forward, residual, LayerNorm: what the layer does to r.
- `ablation`: remove from one head's output, at one token, the part that comes from a set
  of tokens; the cosine distance the token's layer output moves.
- `value_zeroing`: zero token j's value vector in every head; the distance token i moves,
  for every j (Mohebbi et al. 2023).
- `contributions`: the token-to-token matrices of Kobayashi et al. 2021 (attention block,
  residual and LayerNorm taken apart linearly) and of ALTI (Ferrando et al. 2022).
- `sentence`: all of them for one sentence and the rows it is asked for.

The layer inputs are the reference's own, from its one pass over the corpus
(truth.LayerInputs keeps them on disk until the head rule has chosen the rows).

Shapes: T tokens, C = d_model, nh heads, hs head size, F = d_ff, L layers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .weights import Checkpoint

SINK, CONTENT, CONTENT_OTHER, HEAD = range(4)   # the ablated sets, in `ablation`'s output order


@dataclass
class LayerWeights:
    """One layer's parameters, float64."""
    W_V: torch.Tensor     # [C, C]
    b_V: torch.Tensor     # [C]
    W_O: torch.Tensor     # [C, nh, hs]: the output projection, by the head it reads
    b_O: torch.Tensor
    ln1_g: torch.Tensor
    ln1_b: torch.Tensor
    W_1: torch.Tensor     # [F, C]
    b_1: torch.Tensor
    W_2: torch.Tensor     # [C, F]
    b_2: torch.Tensor
    ln2_g: torch.Tensor
    ln2_b: torch.Tensor
    eps: float


def layer_weights(ckpt: Checkpoint, layer: int) -> LayerWeights:
    cfg = ckpt.config
    p = f"encoder.layer.{layer}."
    t = lambda name: torch.from_numpy(np.asarray(ckpt.tensors[p + name], dtype=np.float64))
    return LayerWeights(
        W_V=t("attention.self.value.weight"), b_V=t("attention.self.value.bias"),
        W_O=t("attention.output.dense.weight").view(cfg.d_model, cfg.n_head, cfg.d_head),
        b_O=t("attention.output.dense.bias"),
        ln1_g=t("attention.output.LayerNorm.weight"), ln1_b=t("attention.output.LayerNorm.bias"),
        W_1=t("intermediate.dense.weight"), b_1=t("intermediate.dense.bias"),
        W_2=t("output.dense.weight"), b_2=t("output.dense.bias"),
        ln2_g=t("output.LayerNorm.weight"), ln2_b=t("output.LayerNorm.bias"),
        eps=cfg.layer_norm_eps,
    )


def head_outputs(x: torch.Tensor, w: LayerWeights) -> torch.Tensor:
    """x [T, C] -> f [nh, T, C]: f_j^h = v_j^h W_O^h (no output bias)."""
    T, C = x.shape
    C_, nh, hs = w.W_O.shape
    v = (x @ w.W_V.T + w.b_V).view(T, nh, hs).transpose(0, 1)   # [nh, T, hs]
    return torch.bmm(v, w.W_O.permute(1, 2, 0))                   # [nh, T, C]: v^h W_O^h, head by head


def attention_parts(x: torch.Tensor, alpha: torch.Tensor, w: LayerWeights) -> tuple[torch.Tensor, torch.Tensor]:
    """x [T, C], alpha [nh, T, T] -> (f [nh, T, C], r [T, C]): f as `head_outputs`, and
    r = x + sum_h alpha^h f^h + b_O, what the attention block's LayerNorm reads."""
    f = head_outputs(x, w)
    r = x + torch.einsum("nij,njc->ic", alpha, f) + w.b_O
    return f, r


def rest_of_layer(r: torch.Tensor, w: LayerWeights) -> torch.Tensor:
    """r [..., C] -> the layer's output [..., C]: LayerNorm, feed-forward, residual, LayerNorm."""
    C = r.shape[-1]
    h = F.layer_norm(r, (C,), w.ln1_g, w.ln1_b, w.eps)
    ff = F.gelu(h @ w.W_1.T + w.b_1, approximate="none") @ w.W_2.T + w.b_2
    return F.layer_norm(h + ff, (C,), w.ln2_g, w.ln2_b, w.eps)


def cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """1 - cos(a, b) over the last axis, as half the squared distance of the unit vectors
    (no cancellation against 1 when a and b are close)."""
    d = a / a.norm(dim=-1, keepdim=True) - b / b.norm(dim=-1, keepdim=True)
    return 0.5 * (d * d).sum(dim=-1)


def ablation(f: torch.Tensor, r: torch.Tensor, alpha: torch.Tensor, w: LayerWeights, tokens: torch.Tensor,
             heads: torch.Tensor, sets: torch.Tensor) -> torch.Tensor:
    """How far token i's layer output moves when head h's output at i loses the part that
    comes from each of a few sets of tokens. tokens, heads [Q] (one (i, h) per ablated row
    token), sets [Q, S, T] (1 where a token is in the set) -> [Q, S]."""
    parts = alpha[heads, tokens][:, :, None] * f[heads]             # [Q, T, C]: alpha_ij f_j on head h
    removed = torch.einsum("qst,qtc->qsc", sets.to(parts.dtype), parts)
    out = rest_of_layer(r[tokens], w)                                # [Q, C]
    return cosine_distance(out[:, None], rest_of_layer(r[tokens][:, None] - removed, w))


# Part 9's interventions (docs/study.yml `calibration`), at a word's tokens on one head, in
# `intervened`'s order: the sink's part of the head's output taken out, the content's, the
# whole head's; and the change the display itself makes, the sink's weight redistributed over
# the content (the head's row renormalized over the other tokens).
SINK_OUT, CONTENT_OUT, HEAD_OUT, REDISTRIBUTED = range(4)


def head_parts(x: torch.Tensor, alpha: torch.Tensor, w: LayerWeights, tokens: torch.Tensor,
               heads: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """x [T, C], alpha [nh, T, T]; tokens, heads [Q] -> (r [Q, C], sink [Q, C], content [Q, C],
    s [Q]): what token i's attention LayerNorm reads (as `attention_parts`), the parts of head
    h's output at i that come from [CLS] and [SEP] and from every other token, and the row's
    sink mass. In head space: sum_j alpha_ij f_j = W_O^h (sum_j alpha_ij v_j), so no [T, C] per
    row is formed, only the two sink tokens' values and the head's context."""
    T, C = x.shape
    C_, nh, hs = w.W_O.shape
    v = (x @ w.W_V.T + w.b_V).view(T, nh, hs).transpose(0, 1)              # [nh, T, hs]
    ctx = alpha @ v                                                         # [nh, T, hs]
    r = x + torch.einsum("nth,cnh->tc", ctx, w.W_O) + w.b_O                # [T, C]
    row = alpha[heads, tokens]                                              # [Q, T]
    sink_ctx = row[:, :1] * v[heads, 0] + row[:, -1:] * v[heads, T - 1]     # [Q, hs]
    W = w.W_O.permute(1, 2, 0)[heads]                                       # [Q, hs, C]
    sink = torch.bmm(sink_ctx[:, None], W)[:, 0]
    head = torch.bmm(ctx[heads, tokens][:, None], W)[:, 0]
    return r[tokens], sink, head - sink, row[:, 0] + row[:, -1]


def intervened(r: torch.Tensor, sink: torch.Tensor, content: torch.Tensor, s: torch.Tensor, w: LayerWeights,
               kinds: tuple[int, ...] = (SINK_OUT, CONTENT_OUT, HEAD_OUT, REDISTRIBUTED)) -> tuple[torch.Tensor, torch.Tensor]:
    """`head_parts`' rows -> (y [Q, C], changed [Q, K, C]): each row's layer output, and what it
    becomes under each intervention of `kinds`. Every intervention takes a * sink + b * content
    out of the head's output; redistributing the sink's weight over the content adds the
    content scaled by s / (1 - s) (nothing where the row is all sink)."""
    spread = torch.where(s < 1, s / (1 - s), torch.zeros_like(s))[:, None]
    taken = {SINK_OUT: sink, CONTENT_OUT: content, HEAD_OUT: sink + content, REDISTRIBUTED: sink - spread * content}
    return rest_of_layer(r, w), rest_of_layer(r[:, None] - torch.stack([taken[k] for k in kinds], dim=1), w)


# Part 10's interventions (docs/study.yml `mean_ablation`), at a word's tokens on one head, in
# `mean_ablated`'s order: the sink's value vectors replaced by their means over a reference corpus,
# then the content's.
SINK_MEAN, CONTENT_MEAN = range(2)


@dataclass
class ValueMeans:
    """One layer's value vectors averaged over a reference corpus, per head (model/calibration/means.py)."""
    cls: torch.Tensor       # [nh, hs] [CLS]'s
    sep: torch.Tensor       # [nh, hs] [SEP]'s
    content: torch.Tensor   # [nh, hs] every other token's


def mean_ablated(r: torch.Tensor, sink: torch.Tensor, content: torch.Tensor, row: torch.Tensor, heads: torch.Tensor,
                 means: ValueMeans, w: LayerWeights) -> torch.Tensor:
    """`head_parts`' rows (r, sink, content [Q, C]) with each row's alpha [Q, T] and head [Q] ->
    changed [Q, 2, C]: the row's layer output with the sink's values replaced by their means, and
    with the content's. Head h's output at the row's token gains W_O^h sum_{j in S} alpha_ij
    (vbar_j - v_j), so what is taken out is the set's part less W_O^h sum_{j in S} alpha_ij vbar_j."""
    W = w.W_O.permute(1, 2, 0)[heads]                                            # [Q, hs, C]
    to_output = lambda v: torch.bmm(v[:, None], W)[:, 0]                       # [Q, hs] -> [Q, C]
    sink_means = row[:, :1] * means.cls[heads] + row[:, -1:] * means.sep[heads]  # [Q, hs]
    content_means = (1 - row[:, 0] - row[:, -1])[:, None] * means.content[heads]
    taken = torch.stack([sink - to_output(sink_means), content - to_output(content_means)], dim=1)
    return rest_of_layer(r[:, None] - taken, w)


def value_zeroing(f: torch.Tensor, r: torch.Tensor, alpha: torch.Tensor, w: LayerWeights, tokens: torch.Tensor) -> torch.Tensor:
    """Token i's layer output moved by zeroing v_j in every head, for every j. tokens [Q] -> [Q, T]."""
    removed = torch.einsum("nqj,njc->qjc", alpha[:, tokens], f)     # [Q, T, C]: sum_h alpha^h_ij f^h_j
    out = rest_of_layer(r[tokens], w)
    return cosine_distance(out[:, None], rest_of_layer(r[tokens][:, None] - removed, w))


def contributions(x: torch.Tensor, f: torch.Tensor, alpha: torch.Tensor, w: LayerWeights) -> tuple[torch.Tensor, torch.Tensor]:
    """[T, T] each, token i's row over the tokens j it draws from (unnormalized):
    Kobayashi 2021's ||g_i(z_ij)|| and ALTI's max(0, ||y_i||_1 - ||y_i - g_i(z_ij)||_1),
    with z_ij = sum_h alpha^h_ij f^h_j + [i = j] x_i, g_i the attention block's LayerNorm
    taken apart linearly (centre, scale by gamma; its 1 / s_i is common to row i and left
    out, as is beta) and y_i = sum_j g_i(z_ij)."""
    T = x.shape[0]
    # z_ij = sum_h alpha^h_ij f^h_j: for each j, [T_i, nh] @ [nh, C] (batched over j: faster than einsum)
    z = torch.bmm(alpha.permute(2, 1, 0), f.transpose(0, 1)).transpose(0, 1).contiguous()   # [T, T, C]
    z.diagonal(dim1=0, dim2=1).add_(x.T)
    g = z.sub_(z.mean(dim=-1, keepdim=True)).mul_(w.ln1_g)   # in place: [T, T, C] is the big one
    kobayashi = g.norm(dim=-1)
    y = g.sum(dim=1)                                               # [T, C]
    alti = (y.abs().sum(dim=-1)[:, None] - torch.sub(y[:, None, :], g).abs_().sum(dim=-1)).clamp(min=0)
    return kobayashi, alti


@dataclass
class Ask:
    """What one sentence is measured on: token lists per word, and the rows."""
    tokens: list[list[int]]               # word -> its token positions
    heads: list[tuple[int, int, int]]     # (word, layer, head): ablation rows
    zeroing: list[tuple[int, int]]        # (word, layer): value-zeroing rows
    fixes: bool = True                    # the contribution matrices, every layer


@dataclass
class SentenceTruth:
    effects: np.ndarray           # [len(heads), 4]: sink, content, content without the word, the head
    zeroing: list[np.ndarray]     # per zeroing row: [n_tokens of the word, T] distances
    kobayashi: np.ndarray | None  # [L, T, T] unnormalized
    alti: np.ndarray | None


def sets_for(T: int, own: list[int]) -> np.ndarray:
    """[4, T]: the sink ([CLS], [SEP]), the content (every other token), the content without
    the word's own tokens, and every token (the head zeroed)."""
    sets = np.zeros((4, T))
    sets[SINK, [0, T - 1]] = 1.0
    sets[CONTENT, 1:T - 1] = 1.0
    sets[CONTENT_OTHER] = sets[CONTENT]
    sets[CONTENT_OTHER, own] = 0.0
    sets[HEAD] = 1.0
    return sets


def empty(ask: Ask, L: int, T: int) -> SentenceTruth:
    """What `layer` fills in, layer by layer."""
    fixes = (np.zeros((L, T, T)), np.zeros((L, T, T))) if ask.fixes else (None, None)
    return SentenceTruth(np.zeros((len(ask.heads), 4)), [None] * len(ask.zeroing), *fixes)


@torch.no_grad()
def layer(w: LayerWeights, l: int, x: np.ndarray, alpha: np.ndarray, ask: Ask, out: SentenceTruth) -> None:
    """One layer's measures for one sentence: x [T, C] its input, alpha [nh, T, T]; the
    rows asked on this layer go through the rest of the layer in one batch."""
    T = x.shape[0]
    rows = [(q, i, h) for q, (word, ll, h) in enumerate(ask.heads) if ll == l for i in ask.tokens[word]]
    xl, al = torch.from_numpy(np.asarray(x, np.float64)), torch.from_numpy(np.asarray(alpha, np.float64))
    if not rows and all(ll != l for _, ll in ask.zeroing):
        if ask.fixes:
            k, a = contributions(xl, head_outputs(xl, w), al, w)
            out.kobayashi[l], out.alti[l] = k.numpy(), a.numpy()
        return
    f, r = attention_parts(xl, al, w)
    if ask.fixes:
        k, a = contributions(xl, f, al, w)
        out.kobayashi[l], out.alti[l] = k.numpy(), a.numpy()
    if rows:
        q, i, h = (torch.tensor(c) for c in zip(*rows))
        sets = torch.from_numpy(np.stack([sets_for(T, ask.tokens[ask.heads[k][0]]) for k in q.tolist()]))
        moved = ablation(f, r, al, w, i, h, sets).numpy()                    # [Q, 4]
        for k in set(q.tolist()):
            out.effects[k] = moved[(q == k).numpy()].mean(axis=0)           # the mean over the word's tokens
    for z, (word, ll) in enumerate(ask.zeroing):
        if ll == l:   # token by token: a [T, F] float64 block at a time, not [tokens, T, F]
            out.zeroing[z] = np.concatenate([value_zeroing(f, r, al, w, torch.tensor([i])).numpy()
                                             for i in ask.tokens[word]])


def layers_needed(ask: Ask, L: int) -> list[int]:
    return list(range(L)) if ask.fixes else sorted({l for _, l, _ in ask.heads} | {l for _, l in ask.zeroing})


def sentence(weights: list[LayerWeights], x: np.ndarray, alpha: np.ndarray, ask: Ask) -> SentenceTruth:
    """x [L, T, C] the layer inputs, alpha [L, nh, T, T] -> the asked measures (every layer's
    weights at once: for a sentence or two; the corpus goes layer by layer, truth/run.py)."""
    L, T = x.shape[0], x.shape[1]
    out = empty(ask, L, T)
    for l in layers_needed(ask, L):
        layer(weights[l], l, x[l], alpha[l], ask, out)
    return out
