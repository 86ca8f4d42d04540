"""Attention rollout (Abnar & Zuidema 2020) and how uniform its rows are.

Per layer, average the heads, add the residual (A_hat = 0.5 A + 0.5 I), keep rows
stochastic, and multiply across layers: R = A_hat_L ... A_hat_1. Rows are then folded to
words as the instrument folds them. The normalized entropy of a row (entropy / log of
its length) is 1.0 for a uniform row: a ranking read off such a row is noise.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import instrument


@dataclass
class RolloutStats:
    n_rows: int
    min_entropy: float        # normalized, 0 = one-hot, 1 = uniform
    median_entropy: float
    max_entropy: float
    above_90: int             # rows with normalized entropy above 0.9
    median_top_margin: float  # largest weight minus second largest, median over rows
    entropies: list[float]    # every row's, for the distribution chart
    # Where the full row's mass sits, and the row as the instrument would display it
    # ([CLS], [SEP] and the word itself dropped, renormalized): is any ranking left?
    top_on_sink: int = 0                    # rows whose largest weight is [CLS] or [SEP]
    top_on_self: int = 0                    # ... or the word itself
    median_sink: float = 0.0                # median weight of a row on [CLS] + [SEP]
    displayed_min_entropy: float = 0.0      # normalized over the other words
    displayed_median_entropy: float = 0.0
    displayed_max_entropy: float = 0.0
    displayed_above_90: int = 0
    displayed_median_top_margin: float = 0.0
    displayed_entropies: list[float] = field(default_factory=list)


def rollout(alpha: np.ndarray) -> np.ndarray:
    """alpha [L, nh, T, T] -> rollout [T, T]."""
    L, _, T, _ = alpha.shape
    R = np.eye(T)
    for layer in range(L):
        A = 0.5 * alpha[layer].mean(axis=0) + 0.5 * np.eye(T)  # [T, T]
        A /= A.sum(axis=-1, keepdims=True)
        R = A @ R
    return R


def normalized_entropy(rows: np.ndarray) -> np.ndarray:
    """rows [..., K] summing to 1 -> entropy / log K, in [0, 1]."""
    p = np.clip(rows, 1e-300, 1.0)
    return -(rows * np.log(p)).sum(axis=-1) / np.log(rows.shape[-1])


def rollout_stats(alphas: list[np.ndarray], word_maps: list[instrument.WordMap], shown: list[list[int]]) -> RolloutStats:
    ent, margin = [], []
    top_sink = top_self = 0
    sink, d_ent, d_margin = [], [], []
    for alpha, wm, words in zip(alphas, word_maps, shown):
        full = instrument.word_rows(rollout(alpha), wm)          # [n_words, K]
        rows = full[words]  # [n_shown, K]
        ent.extend(normalized_entropy(rows))
        top2 = np.sort(rows, axis=-1)[:, -2:]
        margin.extend(top2[:, 1] - top2[:, 0])
        top = rows.argmax(axis=-1)
        top_sink += int(np.isin(top, wm.sink_cols).sum())
        top_self += int((top == np.array(words) + 1).sum())
        sink.extend(instrument.sink_share(rows, wm))
        display, _ = instrument.displayed_rows(full, wm)         # [n_words, n_words], own column 0
        for w in words:
            others = np.delete(display[w], w)                    # [n_words - 1]
            if others.size > 1:
                d_ent.append(float(normalized_entropy(others)))
                s2 = np.sort(others)[-2:]
                d_margin.append(float(s2[1] - s2[0]))
    return RolloutStats(
        n_rows=len(ent),
        **_spread(ent, margin, ""),
        top_on_sink=top_sink,
        top_on_self=top_self,
        median_sink=float(np.median(sink)),
        **_spread(d_ent, d_margin, "displayed_"),
    )


def _spread(entropies: list[float], margins: list[float], prefix: str) -> dict:
    """The same summary of a set of rows, for the full rows and the displayed ones."""
    e = np.array(entropies)
    return {
        f"{prefix}min_entropy": float(e.min()),
        f"{prefix}median_entropy": float(np.median(e)),
        f"{prefix}max_entropy": float(e.max()),
        f"{prefix}above_90": int((e > 0.9).sum()),
        f"{prefix}median_top_margin": float(np.median(margins)),
        f"{prefix}entropies": [float(x) for x in e],
    }
