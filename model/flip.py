"""The adjective flip: Winograd-style pairs and the heads whose winner for "it" changes.

In each pair the two sentences differ in one adjective, and a reader's referent for the
pronoun flips. For every head, the winner is the candidate noun with the largest weight
in the pronoun's word row (before any renormalization; the candidates are content
words, so renormalizing would not change the order).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .study import FlipPair


@dataclass
class PairResult:
    sentences: list[int]      # corpus indices of the two sentences
    changed: int              # heads whose winner differs between the two sentences
    follows_reader: int       # heads whose winner is the reader's referent in both
    n_heads: int
    winners: list[list[str]]  # per head (layer * nh + head): [winner in a, winner in b]


@dataclass
class FlipResult:
    lens: str
    pairs: list[PairResult]
    changed_total: int
    follows_reader_total: int
    n_heads_total: int
    follows_every_pair: int = 0   # heads that follow the reader in every pair
    most_pairs_followed: int = 0  # the most pairs any single head follows the reader in
    n_pairs: int = 0


def winners(rows: np.ndarray, words: list[str], pair: FlipPair) -> list[str]:
    """word rows [L, nh, n_words, K] of one sentence -> the winning candidate per head."""
    lower = [w.lower() for w in words]
    it = lower.index(pair.pronoun.lower())
    cols = [lower.index(c.lower()) + 1 for c in pair.candidates]  # +1: column 0 is [CLS]
    weights = rows[:, :, it, cols].reshape(-1, len(cols))         # [L * nh, n_candidates]
    return [pair.candidates[i] for i in weights.argmax(axis=-1)]


def flip_result(lens: str, pairs: list[FlipPair], corpus, index: dict[str, int]) -> FlipResult:
    """`corpus`: the measurement's `Corpus`; `index`: sentence text -> corpus index."""
    out = []
    for pair in pairs:
        ia, ib = (index[s] for s in pair.sentences)
        wa = winners(corpus.word_rows(ia, lens), corpus.toks[ia].words, pair)
        wb = winners(corpus.word_rows(ib, lens), corpus.toks[ib].words, pair)
        out.append(
            PairResult(
                sentences=[ia, ib],
                changed=sum(a != b for a, b in zip(wa, wb)),
                follows_reader=sum((a, b) == tuple(pair.referents) for a, b in zip(wa, wb)),
                n_heads=len(wa),
                winners=[[a, b] for a, b in zip(wa, wb)],
            )
        )
    # The same head across pairs: a head that tracked the referent would follow the reader in all.
    followed = [
        sum(tuple(p.winners[h]) == tuple(pair.referents) for p, pair in zip(out, pairs))
        for h in range(out[0].n_heads if out else 0)
    ]
    return FlipResult(
        lens=lens,
        pairs=out,
        changed_total=sum(p.changed for p in out),
        follows_reader_total=sum(p.follows_reader for p in out),
        n_heads_total=sum(p.n_heads for p in out),
        follows_every_pair=sum(n == len(out) for n in followed) if out else 0,
        most_pairs_followed=max(followed, default=0),
        n_pairs=len(out),
    )
