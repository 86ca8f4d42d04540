"""Summary statistics of the displayed rows, the rule-free view and the value norms."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .activations import Activations
from .instrument import LENSES

if TYPE_CHECKING:  # measure imports this module; the types are for the reader
    from .measure import Corpus, DisplayedRow


@dataclass
class SinkStats:
    n_rows: int
    median_sink: float
    worst_sink: float
    worst_sentence: int
    worst_word: str
    above_50: int
    above_90: int


@dataclass
class LensSummary:
    lens: str
    stats: SinkStats
    layer_picks: list[int]                      # how often the rule opens each layer
    all_heads_median_sink: float                # the same words over every head: what the rule skips
    positional_heads: list[list[int]]           # [layer, head] pairs the rule never opens
    sep_fraction_of_sink: float                 # of all displayed sink mass, the part on [SEP]
    worse_rows: int | None = None               # vs alpha, norm lenses only
    max_relative_worsening: float | None = None
    same_head_as_alpha: int | None = None
    above_50_min_alpha_sink: float | None = None  # of the rows still above half, the least sink they had under α


@dataclass
class LayerStats:
    layer: int
    lens: str
    stats: SinkStats


@dataclass
class RatioStats:
    token: str            # "cls" or "sep"
    vector: str           # "v" (value) or "f" (value through W_O^h)
    layer: int | None     # None: over all layers
    n: int
    median: float
    below_1: int


def sink_stats(sinks: np.ndarray, where: list[tuple[int, str]]) -> SinkStats:
    worst = int(np.argmax(sinks))
    return SinkStats(
        n_rows=int(sinks.size),
        median_sink=float(np.median(sinks)),
        worst_sink=float(sinks[worst]),
        worst_sentence=where[worst][0],
        worst_word=where[worst][1],
        above_50=int((sinks > 0.5).sum()),
        above_90=int((sinks > 0.9).sum()),
    )


def summaries(corpus: "Corpus", rows: dict[str, list["DisplayedRow"]], excluded: dict[str, np.ndarray],
              n_layers: int) -> dict[str, LensSummary]:
    """Per lens: the displayed rows' sink statistics, and how they compare with alpha's."""
    out: dict[str, LensSummary] = {}
    alpha_sink = np.array([r.sink_share for r in rows["alpha"]])
    for lens in LENSES:
        sinks = np.array([r.sink_share for r in rows[lens]])
        all_heads = np.concatenate([sr.sink[lens][:, :, sr.shown].ravel() for sr in corpus.rows])
        s = LensSummary(
            lens=lens,
            stats=sink_stats(sinks, [(r.sentence, r.word) for r in rows[lens]]),
            layer_picks=[sum(r.layer == l for r in rows[lens]) for l in range(n_layers)],
            all_heads_median_sink=float(np.median(all_heads)),
            positional_heads=[[int(l), int(h)] for l, h in np.argwhere(excluded[lens])],
            sep_fraction_of_sink=float(sum(r.sep_share for r in rows[lens]) / sinks.sum()),
        )
        if lens != "alpha":
            worse = sinks > alpha_sink
            rel = np.where(alpha_sink > 0, (sinks - alpha_sink) / alpha_sink, 0.0)
            s.worse_rows = int(worse.sum())
            s.max_relative_worsening = float(rel.max()) if worse.any() else 0.0
            still = alpha_sink[sinks > 0.5]
            s.above_50_min_alpha_sink = float(still.min()) if still.size else None
            s.same_head_as_alpha = sum(
                (a.layer, a.head) == (r.layer, r.head) for a, r in zip(rows["alpha"], rows[lens])
            )
        out[lens] = s
    return out


def per_layer(corpus: "Corpus", n_layers: int) -> list[LayerStats]:
    """The rule-free view: every head's row for every shown word, layer by layer."""
    out = []
    for l in range(n_layers):
        for lens in LENSES:
            sinks, where = [], []
            for i, (tok, sr) in enumerate(zip(corpus.toks, corpus.rows)):
                s = sr.sink[lens][l][:, sr.shown]                 # [nh, n_shown]
                sinks.append(s.T.ravel())                          # word by word, heads within
                where += [(i, tok.words[w]) for w in sr.shown for _ in range(s.shape[0])]
            out.append(LayerStats(l, lens, sink_stats(np.concatenate(sinks), where)))
    return out


def value_ratios(acts: list[Activations], n_layers: int) -> list[RatioStats]:
    """||n_[CLS]|| (and [SEP]) over the mean norm of the content tokens, per sentence x head."""
    out = []
    for vector, attr in (("v", "value_norm"), ("f", "output_norm")):
        for token, pos in (("cls", 0), ("sep", -1)):
            per = np.stack(
                [getattr(a, attr)[:, :, pos] / getattr(a, attr)[:, :, 1:-1].mean(axis=-1) for a in acts]
            )  # [S, L, nh]
            for layer in [None, *range(n_layers)]:
                r = per if layer is None else per[:, layer]
                out.append(RatioStats(token, vector, layer, int(r.size), float(np.median(r)), int((r < 1.0).sum())))
    return out
