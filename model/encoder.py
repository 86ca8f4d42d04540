"""The reference encoder: a BERT-family forward pass in plain PyTorch.

It returns what the instrument needs and a stock BertModel does not: per layer and
head, the attention probabilities alpha, the value vectors v (value bias included) and
f = v W_O^h, the head's slice of the output projection applied to v (output bias
excluded, as in Kobayashi et al. 2020), so that ||alpha_ij f(x_j)|| can be formed.
f is [T, C] per head, 12x the size of v; it is formed only when asked for, and its
norm is read through R_h [hs, hs], a square root of the head's Gram matrix
(R_h^T R_h = W_O^h^T W_O^h, so ||f|| = ||v R_h^T||), worked out once per model: the
norms add two small products a layer, not a [T, C] array per head.

Module and parameter names follow `transformers`' BertModel, so a checkpoint's
tensors load with `load_state_dict(strict=True)` and no renaming (model/weights/ renames
MPNet's few differently named ones on loading).

Arithmetic: float64 throughout, by default (`from_checkpoint(ckpt)`). The checkpoints hold
float32 (or 16-bit) weights, which float64 holds exactly; computing with them in float64
puts another CPU's rounding (about 1e-16 relative per operation) ten orders of magnitude
below any printed digit, where float32's (1e-7, amplified a thousandfold by a small effect
or a log ratio) decided published numbers on three CPUs (issue 46). `dtype=torch.float32`
builds the model as it was trained, for the one comparison where float32 is the subject:
the browser runtime's (tests/test_browser_runtime.py).

MPNet (Song et al. 2020) is the same encoder with three differences, each a line or
two here, switched on by its config: positions counted from 2, no token-type embedding,
and a learned relative-position bias (one value per head and bucket of key - query
distance, `relative_position_bucket`) added to every layer's attention scores.

Shapes: B sentences, T tokens (padded), N real tokens, C = d_model, nh heads,
hs = C / nh head size, F = d_ff, L layers. Only the attention is laid out on the padded
batch; the layers carry the real tokens alone, [N, C], so a batch of mixed lengths spends
no matrix product on its padding (faster than `transformers`' BertModel on the same
padded batch: make bench).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .perturb import Perturbation
from .weights import Checkpoint, EncoderConfig


@dataclass
class EncoderOutput:
    hidden: torch.Tensor        # [B, T, C] last hidden state (zeros at padding, as v and inputs)
    alpha: list[torch.Tensor]   # L x [B, nh, T, T] attention probabilities (a padded query's row: no token's)
    value: list[torch.Tensor]   # L x [B, nh, T, hs] v = x W_V + b_V
    W_O: list[torch.Tensor]     # L x [C, nh, hs] each head's slice of the output projection
    R: list[torch.Tensor]       # L x [nh, hs, hs] R_h^T R_h = W_O^h^T W_O^h (`Attention.head_factors`)
    inputs: list[torch.Tensor] | None = None  # L x [B, T, C] each layer's input, if asked for

    @property
    def f(self) -> list[torch.Tensor]:
        """L x [B, nh, T, C]: f = v W_O^h (no output bias). Formed on demand: the
        measurements only need its norm, which `f_norms` gets without building it."""
        return [torch.einsum("bntd,cnd->bntc", v, W) for v, W in zip(self.value, self.W_O)]

    def f_norms(self) -> list[torch.Tensor]:
        """L x [B, nh, T]: ||f||^2 = ||v W_O^h||^2 = v G_h v^T = ||v R_h^T||^2, one [hs, hs]
        product per token and head, then one norm. Two operations a layer: on two threads
        each is a synchronisation, which a small batch notices (make bench)."""
        out = []
        for v, R in zip(self.value, self.R):
            B, nh, T, hs = v.shape
            # v views the value projection [B, T, nh, hs]; as [nh, B*T, hs] it is a view
            # still (strided), which bmm reads as it lies, without a copy.
            heads = v.transpose(1, 2).reshape(B * T, nh, hs).transpose(0, 1)  # [nh, B*T, hs]
            norms = torch.bmm(heads, R.mT).norm(dim=-1)                        # [nh, B*T]
            out.append(norms.view(nh, B, T).transpose(0, 1))                   # [B, nh, T]
        return out


class Embeddings(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.position_offset = cfg.position_offset  # MPNet: 2, past its padding index
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.position_embeddings = nn.Embedding(cfg.position_offset + cfg.max_position, cfg.d_model)
        # BERT's segment embedding; MPNet has none.
        types = cfg.type_vocab_size
        self.token_type_embeddings = nn.Embedding(types, cfg.d_model) if types else None
        self.LayerNorm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        B, T = ids.shape
        pos = torch.arange(T, device=ids.device) + self.position_offset
        x = self.word_embeddings(ids) + self.position_embeddings(pos)  # [B, T, C]
        if self.token_type_embeddings is not None:
            x = x + self.token_type_embeddings.weight[0]  # one segment: type id 0 everywhere
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    """Q, K, V projections and the scaled softmax; returns the per-head values too.
    The projections read the real tokens only, x [N, C]; the heads are laid out on the
    padded batch, `real` [B, T], zeros at the padding. `bias` [B, 1 or nh, 1 or T, T]
    is added to the scores: -inf on padded keys, plus MPNet's relative-position bias."""

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.n_head, self.d_head = cfg.n_head, cfg.d_head
        self.query = nn.Linear(cfg.d_model, cfg.d_model)
        self.key = nn.Linear(cfg.d_model, cfg.d_model)
        self.value = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, real: torch.Tensor, nudge=None, queries=None):
        B, T = real.shape
        split = lambda t, at=real: unpack(t, at).view(B, T, self.n_head, self.d_head).transpose(1, 2)  # [B, nh, T, hs]
        k, v = split(self.key(x)), split(self.value(x))
        # With `queries` (within `real`), only their q: the other rows' are zeros, their
        # attention rows unread
        q = split(self.query(x)) if queries is None else split(self.query(x[queries[real]]), queries)
        # bias + q k^T / sqrt(hs) in one pass over [B, nh, T, T] (the same floats as dividing,
        # then adding: 1 * x / y + b)
        scores = torch.addcdiv(bias, q @ k.transpose(-2, -1), torch.tensor(self.d_head**0.5, dtype=q.dtype))
        alpha = F.softmax(scores, dim=-1)                    # padded keys get exactly 0
        return (alpha if nudge is None else nudge(alpha)), v


class SelfOutput(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.d_model, cfg.d_model)
        self.LayerNorm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)


class Attention(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.self = SelfAttention(cfg)
        self.output = SelfOutput(cfg)
        self._factors: tuple[torch.Tensor, torch.Tensor] | None = None  # (W_O, its R_h): head_factors

    def forward(self, x: torch.Tensor, bias: torch.Tensor, real: torch.Tensor, nudge=None, queries=None):
        alpha, v = self.self(x, bias, real, nudge, queries)            # [B,nh,T,T], [B,nh,T,hs]
        rows = real if queries is None else queries                     # the rows whose outputs are formed
        x = x if queries is None else x[queries[real]]                  # [N', C]
        ctx = (alpha @ v).transpose(1, 2)[rows].reshape(x.shape)        # [B,T,nh,hs] -> [N', C]
        out = self.output.LayerNorm(x + self.output.dense(ctx))
        return out, alpha, v

    def head_slices(self) -> torch.Tensor:
        """W_O^h: the columns of the output projection that read head h, [C, nh, hs]."""
        C = self.output.dense.weight.shape[0]
        return self.output.dense.weight.detach().view(C, self.self.n_head, self.self.d_head)

    def head_factors(self) -> torch.Tensor:
        """R_h [nh, hs, hs] with R_h^T R_h = G_h = W_O^h^T W_O^h, the head's Gram matrix:
        its Cholesky factor (factored in float64); for a head whose slice has rank < hs
        (G_h only semi-definite), the square root read off G_h's eigenvalues. Worked out
        once per output projection: a new weight (a replaced parameter; never one edited
        in place, see `Encoder.from_checkpoint`) gets its own."""
        W = self.output.dense.weight
        if self._factors is None or self._factors[0] is not W:
            W_O = self.head_slices()                                        # [C, nh, hs]
            G = torch.einsum("cnd,cne->nde", W_O.double(), W_O.double())   # [nh, hs, hs]
            L, info = torch.linalg.cholesky_ex(G)                          # G = L L^T
            R = L.mT
            if info.any():
                lam, U = torch.linalg.eigh(G)                               # G = U diag(lam) U^T
                R = lam.clamp_min(0).sqrt()[..., None] * U.mT               # R^T R = G
            self._factors = (W, R.to(W.dtype))
        return self._factors[1]


class Intermediate(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.d_model, cfg.d_ff)


class Output(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(cfg.d_ff, cfg.d_model)
        self.LayerNorm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)


class Layer(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.attention = Attention(cfg)
        self.intermediate = Intermediate(cfg)
        self.output = Output(cfg)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, real: torch.Tensor, nudge=None, queries=None):
        """x [N, C], the real tokens -> the layer's output at the real tokens [N, C], or at the
        `queries` alone ([B, T] within `real`) [N', C]: every token is a key, only those are
        queries (the last layer of a run that reads a few tokens)."""
        x, alpha, v = self.attention(x, bias, real, nudge, queries)  # x [N, C]; nudge: perturb.py's, on alpha
        h = F.gelu(self.intermediate.dense(x), approximate="none")  # exact erf GELU, [N, F]
        x = self.output.LayerNorm(x + self.output.dense(h))
        return x, alpha, v


class Stack(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.layer = nn.ModuleList(Layer(cfg) for _ in range(cfg.n_layer))
        # MPNet: one learned bias per (distance bucket, head), shared by every layer.
        self.relative_attention_bias = nn.Embedding(cfg.rel_buckets, cfg.n_head) if cfg.rel_buckets else None
        self.rel_max_distance = cfg.rel_max_distance

    def position_bias(self, T: int) -> torch.Tensor:
        """MPNet's relative-position bias on the attention scores, [1, nh, T, T]."""
        pos = torch.arange(T)
        rel = pos[None, :] - pos[:, None]  # [T, T]: key position - query position
        table = self.relative_attention_bias                      # [buckets, nh]
        buckets = relative_position_bucket(rel, table.num_embeddings, self.rel_max_distance)
        return table(buckets).permute(2, 0, 1)[None]              # [T, T, nh] -> [1, nh, T, T]


def relative_position_bucket(rel: torch.Tensor, n_buckets: int, max_distance: int) -> torch.Tensor:
    """Key - query distances -> bucket ids, as T5 and MPNet bucket them.

    Half the buckets for keys before the query, half for keys after it. In each half,
    distances under a quarter of the buckets (0..7 of 32) have a bucket each; longer
    ones share buckets spaced logarithmically up to max_distance; all longer still
    share the last. MPNet's own code takes this logarithm in float32 and truncates it; here
    it is exact arithmetic's bucket on every CPU: at distances that are exact powers of the
    spacing (16, 32, 64, 128 with 32 buckets) the exact value is a whole number, which a
    float32 logarithm may land a hair under on one CPU and on it on another, so a value
    within 1e-9 of a whole number is that number (every other distance is at least 3e-4
    from one: tests/test_encoder.py).
    """
    half = n_buckets // 2
    exact = half // 2
    after = (rel > 0).long() * half  # keys after the query: the upper half
    n = rel.abs()
    value = torch.log(n.clamp(min=1).double() / exact) / math.log(max_distance / exact) * (half - exact)
    whole = torch.where((value - value.round()).abs() < 1e-9, value.round(), value)
    log = exact + whole.long()  # truncated toward zero, as in MPNet (the value is positive here)
    return after + torch.where(n < exact, n, log.clamp(max=half - 1))


class Encoder(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.config = cfg
        self.embeddings = Embeddings(cfg)
        self.encoder = Stack(cfg)
        self.perturbation = Perturbation()   # off: another machine's rounding only when asked (perturb.py)

    @classmethod
    def from_checkpoint(cls, ckpt: Checkpoint, dtype: torch.dtype = torch.float64) -> "Encoder":
        # Built on the CPU and overwritten: building on torch's "meta" device would skip
        # the random initialisation (a second on MPNet) but imports torch._dynamo (two).
        model = cls(ckpt.config)
        with warnings.catch_warnings():
            # The arrays may be read-only views of the weights file's bytes; from_numpy
            # shares them without a copy (warning that they are not writable), and `to`
            # makes the model's own copy in `dtype` (in float32, none: the parameters are
            # the checkpoint's arrays, and a caller that wants other weights replaces a
            # parameter, never edits it in place). Assigned, not copied again.
            warnings.simplefilter("ignore", UserWarning)
            state = {k: torch.from_numpy(v).to(dtype) for k, v in ckpt.tensors.items()}
        model.load_state_dict(state, strict=True, assign=True)  # names match one to one
        return model.eval()

    @property
    def dtype(self) -> torch.dtype:
        return self.embeddings.word_embeddings.weight.dtype

    @torch.no_grad()
    def forward(self, ids: torch.Tensor, mask: torch.Tensor, keep_inputs: bool = False) -> EncoderOutput:
        """ids [B, T] token ids, mask [B, T] 1 for real tokens and 0 for padding. With
        `keep_inputs`, each layer's input too (the ground truth re-runs part of a layer)."""
        bias = self.attention_bias(mask)
        # Between the attentions, every operation is per token: the layers carry the real
        # tokens only, x [N, C] (N = mask.sum()), so no matrix product is spent on padding
        # (more than half of the bench's batch of mixed lengths).
        real = mask.bool()                                            # [B, T]
        x = self.nudged(self.embeddings(ids)[real], 0, ids, real)     # [N, C]
        alphas, values, inputs = [], [], []
        for i, layer in enumerate(self.encoder.layer):
            if keep_inputs:
                inputs.append(unpack(x, real))
            x, alpha, v = layer(x, bias, real, self.attention_nudge(i, ids, real))
            x = self.nudged(x, i + 1, ids, real)
            alphas.append(alpha)
            values.append(v)
        W_O = [layer.attention.head_slices() for layer in self.encoder.layer]
        R = [layer.attention.head_factors() for layer in self.encoder.layer]
        return EncoderOutput(hidden=unpack(x, real), alpha=alphas, value=values, W_O=W_O, R=R,
                             inputs=inputs if keep_inputs else None)

    def attention_bias(self, mask: torch.Tensor) -> torch.Tensor:
        """mask [B, T] -> what every layer adds to its attention scores, [B, 1 or nh, 1 or T, T].
        Padded keys get -inf before the softmax, so their weight is exactly 0 and no real
        token's numbers depend on how much padding its batch carries."""
        bias = torch.zeros(mask.shape, dtype=self.dtype)
        bias = bias.masked_fill(mask == 0, float("-inf"))[:, None, None, :]  # [B, 1, 1, T]
        if self.encoder.relative_attention_bias is not None:
            # MPNet: the same relative-position bias for every layer (padding is at the
            # end, so a real token's distances do not depend on it either).
            bias = bias + self.encoder.position_bias(mask.shape[1])  # [B, nh, T, T]
        return bias

    @torch.no_grad()
    def continue_from(self, x: torch.Tensor, start: int, ids: torch.Tensor, read: torch.Tensor | None = None) -> torch.Tensor:
        """x [B, T, C]: sentences of one length (no padding) as they enter layer `start`
        (each a copy of one sentence, changed somewhere: Part 9's interventions); ids [B, T]
        their token ids -> the last hidden state [B, T, C], layers start..L-1 run as in
        `forward`; with `read` ([B, T] bool: the positions each copy is read at), the last
        hidden state there alone [N', C], copy by copy, the last layer's other queries
        skipped (most of its arithmetic, when a copy is read at one word)."""
        B, T, C = x.shape
        real = torch.ones(B, T, dtype=torch.bool)
        bias = self.attention_bias(real.long())
        h, last = x.reshape(B * T, C), len(self.encoder.layer) - 1
        for i in range(start, last + 1):
            queries = read if i == last else None
            h, _, _ = self.encoder.layer[i](h, bias, real, self.attention_nudge(i, ids, real), queries)
            h = self.nudged(h, i + 1, ids, real, queries)
        return h.view(B, T, C) if read is None else h

    def nudged(self, x: torch.Tensor, step: int, ids: torch.Tensor, real: torch.Tensor, rows=None) -> torch.Tensor:
        """x [N, C] times perturb.py's factors for these sentences at `step` (0: the
        embeddings, i: layer i's output), or x [N', C] at the `rows` ([B, T] within `real`)
        alone; x itself when the perturbation is off."""
        if not self.perturbation.on:
            return x
        batch = [row[keep].tolist() for row, keep in zip(ids, real)]
        factors = torch.from_numpy(self.perturbation.factors(batch, step, x.shape[1]))   # [N, C]
        return x * (factors if rows is None else factors[rows[real]]).to(x.dtype)


    def attention_nudge(self, layer: int, ids: torch.Tensor, real: torch.Tensor):
        """A function nudging layer `layer`'s attention weights [B, nh, T, T] by perturb.py's
        factors for these sentences, each row normalized again; None when the perturbation is off."""
        if not self.perturbation.on:
            return None

        def nudge(alpha: torch.Tensor) -> torch.Tensor:
            out = alpha.clone()
            batch = [row[keep].tolist() for row, keep in zip(ids, real)]
            for b, f in enumerate(self.perturbation.attention_factors(batch, layer, alpha.shape[1])):
                t = len(batch[b])
                nudged = alpha[b, :, :t, :t] * torch.from_numpy(f).to(alpha.dtype)
                out[b, :, :t, :t] = nudged / nudged.sum(dim=-1, keepdim=True)   # rows sum to 1, as a softmax's do
            return out
        return nudge


def unpack(x: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """The real tokens x [N, ...] laid out on the padded batch, `real` [B, T]: [B, T, ...],
    zeros at the padding."""
    out = x.new_zeros(*real.shape, *x.shape[1:])
    out[real] = x
    return out


def pad(batch: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Token id lists of any lengths -> ids [B, T] (pad id 0) and mask [B, T]."""
    T = max(len(ids) for ids in batch)
    ids = torch.zeros(len(batch), T, dtype=torch.long)
    mask = torch.zeros(len(batch), T, dtype=torch.long)
    for b, seq in enumerate(batch):
        ids[b, : len(seq)] = torch.tensor(seq)
        mask[b, : len(seq)] = 1
    return ids, mask


def run(ckpt: Checkpoint, batch: list[list[int]]) -> EncoderOutput:
    """Token id lists of any lengths -> one padded forward pass."""
    return Encoder.from_checkpoint(ckpt)(*pad(batch))
