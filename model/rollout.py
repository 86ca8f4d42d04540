"""Attention rollout (Abnar & Zuidema 2020) and how uniform its rows are.

Per layer, average the heads, add the residual (A_hat = 0.5 A + 0.5 I), keep rows
stochastic, and multiply across layers: R = A_hat_L ... A_hat_1. Rows are then folded to
words as the instrument folds them. The normalized entropy of a row (entropy / log of
its length) is 1.0 for a uniform row: a ranking read off such a row is noise.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    for alpha, wm, words in zip(alphas, word_maps, shown):
        rows = instrument.word_rows(rollout(alpha), wm)[words]  # [n_shown, K]
        ent.extend(normalized_entropy(rows))
        top2 = np.sort(rows, axis=-1)[:, -2:]
        margin.extend(top2[:, 1] - top2[:, 0])
    e = np.array(ent)
    return RolloutStats(
        n_rows=int(e.size),
        min_entropy=float(e.min()),
        median_entropy=float(np.median(e)),
        max_entropy=float(e.max()),
        above_90=int((e > 0.9).sum()),
        median_top_margin=float(np.median(margin)),
        entropies=[float(x) for x in e],
    )
