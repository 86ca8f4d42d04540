"""The value norms: per sentence and head, [CLS]'s and [SEP]'s norm over the mean content
token's, for the value v and for v through W_O^h (f), over all layers and per layer; the same
for punctuation; each head's median; and, read off those, the heads that hardly discount
[CLS] and the layer where each ratio is largest. A lens discounts what it weighs by norm:
these ratios say by how much.

Not here: the rows' sink shares (rows.py, lenses.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import picks
from ..activations import Activations
from ..bootstrap import Resampler
from ..corpus import Corpus


@dataclass
class RatioStats:
    token: str            # "cls" or "sep"
    vector: str           # "v" (value) or "f" (value through W_O^h)
    layer: int | None     # None: over all layers
    n: int
    median: float
    below_1: int
    below_1_share: float
    keeps_above_half_from: float      # at the median ratio r, a row above half under alpha stays
                                      # above half under the lens iff its sink share s > 1 / (1 + r)
    median_lo: float | None = None
    median_hi: float | None = None
    below_1_share_lo: float | None = None
    below_1_share_hi: float | None = None


RATIOS = {"v": "value_norm", "f": "output_norm"}
SPECIAL = {"cls": 0, "sep": -1}


def _ratio(a: Activations, vector: str, token: str) -> np.ndarray:
    """[L, nh]: ||n_token|| over the mean norm of the sentence's content tokens."""
    n = getattr(a, RATIOS[vector])
    return n[:, :, SPECIAL[token]] / n[:, :, 1:-1].mean(axis=-1)


def ratio_of(a: Activations, lens: str, token: str) -> np.ndarray:
    """[L, nh]: the ratio for a lens's norm (value_norm: v, output_norm: f)."""
    return _ratio(a, next(v for v, attr in RATIOS.items() if attr == lens), token)


def value_ratios(acts: list[Activations], n_layers: int, sentences: list[int], resampler: Resampler) -> list[RatioStats]:
    """Per sentence x head of `sentences`: [CLS]'s (and [SEP]'s) norm over the mean
    content token's, for v and for f; over all layers (with intervals) and per layer."""
    out = []
    for vector in RATIOS:
        for token in SPECIAL:
            per = np.stack([_ratio(acts[i], vector, token) for i in sentences])   # [S, L, nh]
            for layer in [None, *range(n_layers)]:
                r = per if layer is None else per[:, layer]
                median = float(np.median(r))
                s = RatioStats(token, vector, layer, int(r.size), median, int((r < 1.0).sum()),
                               float((r < 1.0).mean()), 1.0 / (1.0 + median))
                if layer is None:
                    unit = np.repeat(np.arange(len(sentences)), r[0].size)
                    s.median_lo, s.median_hi = resampler.median(r.ravel(), unit)
                    s.below_1_share_lo, s.below_1_share_hi = resampler.share(r.ravel() < 1.0, unit)
                out.append(s)
    return out


def punct_ratios(corpus: Corpus, sentences: list[int], resampler: Resampler) -> list[RatioStats]:
    """Per sentence x head of `sentences` that hold punctuation: the mean norm of its
    punctuation tokens over the mean norm of its other content tokens, over all layers.
    A lens discounts what it weighs by norm, punctuation included."""
    out = []
    for vector, attr in RATIOS.items():
        per, unit = [], []
        for k, i in enumerate(sentences):
            tok, n = corpus.toks[i], getattr(corpus.acts[i], attr)            # n [L, nh, T]
            punct = np.array([w is not None and w not in corpus.rows[i].shown for w in tok.word_ids])
            content = np.array([w is not None for w in tok.word_ids]) & ~punct
            if punct.any() and content.any():
                per.append((n[:, :, punct].mean(-1) / n[:, :, content].mean(-1)).ravel())
                unit.append(np.full(per[-1].size, k))
        if not per:
            return []  # no sentence with punctuation: nothing to compare
        r, unit = np.concatenate(per), np.concatenate(unit)
        median = float(np.median(r))
        s = RatioStats("punct", vector, None, int(r.size), median, int((r < 1.0).sum()), float((r < 1.0).mean()),
                       1.0 / (1.0 + median))
        s.median_lo, s.median_hi = resampler.median(r, unit)
        s.below_1_share_lo, s.below_1_share_hi = resampler.share(r < 1.0, unit)
        out.append(s)
    return out


def head_ratios(acts: list[Activations], sentences: list[int]) -> dict[str, list[list[float]]]:
    """"cls_v", "sep_v", "cls_f", "sep_f" -> per head, the median over `sentences` of the
    ratio: each head's own discount of the special tokens, [L][nh]."""
    return {f"{token}_{vector}": np.median(np.stack([_ratio(acts[i], vector, token) for i in sentences]), axis=0).tolist()
            for vector in RATIOS for token in SPECIAL}


# -- Heads that hardly discount [CLS], and where each ratio is largest ----------------------------
# Added after the second review's sceptical reading (study.yml): read off the per-head and
# per-layer ratios the results already hold, so anyone can recompute them from the download.

CLS_LONG = 0.5   # a [CLS] vector at least half as long as the mean content token's is hardly discounted


def long_heads(per_head: list[list[float]], ratios: list[dict], token: str = "cls", vector: str = "v",
               threshold: float = CLS_LONG, top: int = 2) -> dict:
    """per_head [L][nh] (head_ratios' median per head), ratios (RatioStats as dicts) -> the
    heads whose median ratio is above `threshold`: their count, their count per layer, and
    the `top` layers holding most of them (ties: the lower layer) with that layer's median."""
    per_layer = (np.array(per_head) > threshold).sum(axis=1)                  # [L]
    median = {r["layer"]: r["median"] for r in ratios
              if r["token"] == token and r["vector"] == vector and r["layer"] is not None}
    order = sorted((l for l in range(per_layer.size) if per_layer[l] > 0), key=lambda l: (-per_layer[l], l))
    per_head = np.array(per_head)
    margins = [picks.threshold_margin(row, threshold) for row in per_head]   # per layer's count
    return {"heads": int(per_layer.sum()), "per_layer": per_layer.tolist(),
            "layers": [{"layer": l, "heads": int(per_layer[l]), "median": median[l]} for l in order[:top]],
            "margins": {"heads": min(margins), "per_layer": margins,
                        # the top layers: their order turns if any layer's count does
                        "layers": min(margins)}}


def longest_layers(ratios: list[dict], tie_tolerance: float) -> dict[str, dict]:
    """ratios (RatioStats as dicts) -> per "token_vector", the layer whose median ratio is the
    largest (within `tie_tolerance`: the lower layer) and that median, with the pick's margin:
    where the token is least discounted."""
    per: dict[str, list[tuple[int, float]]] = {}
    for r in sorted((r for r in ratios if r["layer"] is not None), key=lambda r: r["layer"]):
        per.setdefault(f"{r['token']}_{r['vector']}", []).append((r["layer"], r["median"]))
    out = {}
    for name, layers in per.items():
        pick = picks.best([m for _, m in layers], tie_tolerance)
        out[name] = {"layer": layers[pick.index][0], "median": layers[pick.index][1], "margin": pick.margin}
    return out
