"""Per lens, the held-out rows' headline (`summaries`): their statistics with intervals, the
layers the head rule opens, the same words over every head (what the rule skips), the heads
that hold the counted rows; and for each norm lens, how it compares with alpha on the same
words (the same head re-weighed, or another head), which rows stay above half, and how far
the survival formula (model/measure.py `predicted_sink`) explains them.

Not here: the statistics of a set of rows (rows.py), the norm ratios (norms.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import picks
from ..bootstrap import Resampler, units
from ..corpus import Corpus, Displayed
from ..instrument import LENSES
from .norms import ratio_of
from .rows import SinkStats, sink_stats, worst_pick


@dataclass
class LensSummary:
    lens: str
    stats: SinkStats
    layer_picks: list[int]                      # how often the rule opens each layer
    all_heads_median_sink: float                # the same words over every head: what the rule skips
    all_heads_median_sink_lo: float
    all_heads_median_sink_hi: float
    all_heads_top_punct_share: float            # every head's rows that peak on punctuation
    all_heads_median_punct: float               # every head's rows: median punctuation share
    all_heads_punct_above_50_share: float       # ... and the share above half
    heavy_rows: int                             # rows with more than 90 % on the sink under alpha
    heavy_heads: list[list[int]]                # [layer, head, rows] of those rows' heads (this lens's)
    punct_heads: list[list[int]]                # [layer, head, rows] holding the rows more than half on punctuation
    sink_heads: list[list[int]]                 # [layer, head, rows] holding the rows more than half on the sink
    sep_fraction_of_sink: float                 # of all displayed sink mass, the part on [SEP]
    worst: dict                                 # the worst row: sentence, word_index, layer, head,
                                                # content_mass, top_word, top_weight
    # Norm lenses only, against alpha on the same words:
    worse_rows: int | None = None               # sink share higher than under alpha
    worse_share: float | None = None
    worse_share_lo: float | None = None
    worse_share_hi: float | None = None
    worse_same_head: int | None = None          # ... of which on the head alpha opened (re-weighing alone)
    max_relative_worsening: float | None = None
    same_head_as_alpha: int | None = None
    same_head_share: float | None = None
    same_head_share_lo: float | None = None
    same_head_share_hi: float | None = None
    # The same-head comparison: alpha's head kept, read under this lens.
    alpha_head_median_sink: float | None = None
    alpha_head_median_sink_lo: float | None = None
    alpha_head_median_sink_hi: float | None = None
    alpha_head_above_50: int | None = None
    alpha_head_above_50_share: float | None = None
    # The rows that stay above half on the head this lens opens, and the explanation:
    above_50_min_alpha_sink: float | None = None   # the least sink they had under alpha (same head)
    above_50_predicted_above_50: int | None = None  # of them, how many the formula (measure.predicted_sink) keeps above half
    predicted_above_50: int | None = None           # rows the formula puts above half ...
    predicted_above_50_right: int | None = None     # ... and of those, how many are
    above_50_predicted_global: int | None = None    # survivors the formula keeps with the median head's ratio instead
    heavy_still_above_50: int | None = None         # rows above 90 % under alpha still above half here
    heavy_still_above_50_share: float | None = None
    heavy_median_sink: float | None = None          # their median sink share here
    above_50_max_prediction_error: float | None = None
    prediction_median_error: float | None = None    # |predicted - observed| over every row
    above_50_heads: list[list[int]] | None = None   # [layer, head, rows] for the heads that hold them
    above_50_sep_fraction: float | None = None      # of their sink mass under the lens, the part on [SEP]
    above_50_median_cls_ratio: float | None = None  # median of their own sentence-and-head [CLS] norm ratio
    above_50_attended_norm_ratio: float | None = None  # median: the norm of what they attend among content
                                                       # tokens (alpha-weighted) over the plain mean
    margins: dict = field(default_factory=dict)     # field -> (margin, step) (model/picks.py)


@dataclass
class World:
    """The displayed rows under every lens and what is read off them on their heads: as the
    rule opened them, or each row on its alternative head (`Displayed.alternative`)."""
    rows: dict[str, Displayed]
    same_head: dict[str, np.ndarray]     # norm lens -> its sink share on alpha's head
    predicted: dict[str, np.ndarray]     # norm lens -> measure.predicted_sink
    global_pred: dict[str, np.ndarray]   # ... with one ratio for every head


def summaries(corpus: Corpus, world: World, alt: World, sentences: list[int], resampler: Resampler,
              n_layers: int, tie_tolerance: float) -> dict[str, LensSummary]:
    """Per lens, the rows of `sentences` (the held-out half): statistics with intervals,
    and how each norm lens compares with alpha on the same words. `alt`: the same rows on
    their alternative heads, for the margins of what is counted."""
    out: dict[str, LensSummary] = {}
    rows, same_head, predicted, global_pred = world.rows, world.same_head, world.predicted, world.global_pred
    m = rows["alpha"].where(sentences)
    unit = units(rows["alpha"].sentence[m], sentences)
    alpha = rows["alpha"]
    for lens in LENSES:
        d, d_alt = rows[lens], alt.rows[lens]
        sink = d.sink[m]
        all_heads, all_units, all_top_punct, all_punct = [], [], [], []
        for k, i in enumerate(sentences):
            sr = corpus.rows[i]
            per = sr.sink[lens][:, :, sr.shown]                     # [L, nh, n_shown]
            all_heads.append(per.ravel())
            all_units.append(np.full(per.size, k))
            all_top_punct.append(~np.isin(sr.top_word[lens][:, :, sr.shown], sr.shown).ravel())
            all_punct.append(sr.punct[lens][:, :, sr.shown].ravel())
        all_punct = np.concatenate(all_punct)
        heavy = alpha.sink[m] > 0.9
        heads_of = lambda sel: sorted(
            ([int(l), int(h), int(c)] for (l, h), c in zip(*np.unique(np.stack([d.layer[m][sel], d.head[m][sel]], 1),
                                                                       axis=0, return_counts=True))),
            key=lambda x: -x[2])
        all_heads, all_units = np.concatenate(all_heads), np.concatenate(all_units)
        lo, hi = resampler.median(all_heads, all_units)
        worst = worst_pick(sink, tie_tolerance)
        worst_row = int(np.flatnonzero(m)[worst.index])
        s = LensSummary(
            lens=lens,
            stats=sink_stats(corpus, d, d_alt, sentences, resampler, tie_tolerance),
            layer_picks=np.bincount(d.layer[m], minlength=n_layers).tolist(),
            all_heads_median_sink=float(np.median(all_heads)),
            all_heads_median_sink_lo=lo,
            all_heads_median_sink_hi=hi,
            all_heads_top_punct_share=float(np.concatenate(all_top_punct).mean()),
            all_heads_median_punct=float(np.median(all_punct)),
            all_heads_punct_above_50_share=float((all_punct > 0.5).mean()),
            heavy_rows=int(heavy.sum()),
            heavy_heads=heads_of(heavy),
            punct_heads=heads_of(d.punct[m] > 0.5),
            sink_heads=heads_of(sink > 0.5),
            sep_fraction_of_sink=float(d.sep[m].sum() / sink.sum()),
            worst=_row(corpus, d, worst_row),
        )
        s.margins = _summary_margins(d, d_alt, alpha, alt.rows["alpha"], m, worst, worst_row, heavy, n_layers)
        # Each of the three heads holding most of the counted rows is a pick among heads by a
        # count: it turns only when as many rows as its lead turn (picks.rank_margins).
        by_rows = {"heavy": (s.heavy_heads, picks.row_margins(alpha.sink[m], 0.9, np.minimum(alpha.margin[m], d.margin[m]))),
                   "punct": (s.punct_heads, picks.row_margins(d.punct[m], 0.5, d.margin[m])),
                   "sink": (s.sink_heads, picks.row_margins(sink, 0.5, d.margin[m]))}
        for name, (ranked, rows_m) in by_rows.items():
            for i, place in enumerate(picks.rank_margins([c for _, _, c in ranked], rows_m)):
                s.margins |= {f"{name}_head{i}.{f}": (place, picks.NO_MARGIN) for f in ("layer", "head")}
        if lens != "alpha":
            a = alpha.sink[m]
            worse = sink > a
            same = (d.layer[m] == alpha.layer[m]) & (d.head[m] == alpha.head[m])
            kept = same_head[lens][m]
            s.worse_rows, s.worse_share = int(worse.sum()), float(worse.mean())
            s.worse_same_head = int((worse & same).sum())
            s.worse_share_lo, s.worse_share_hi = resampler.share(worse, unit)
            s.max_relative_worsening = float(np.max(np.where(a > 0, (sink - a) / a, 0.0))) if worse.any() else 0.0
            s.same_head_as_alpha, s.same_head_share = int(same.sum()), float(same.mean())
            s.same_head_share_lo, s.same_head_share_hi = resampler.share(same, unit)
            s.alpha_head_median_sink = float(np.median(kept))
            s.alpha_head_median_sink_lo, s.alpha_head_median_sink_hi = resampler.median(kept, unit)
            s.alpha_head_above_50, s.alpha_head_above_50_share = int((kept > 0.5).sum()), float((kept > 0.5).mean())
            pred = predicted[lens][m]
            above = sink > 0.5
            s.predicted_above_50 = int((pred > 0.5).sum())
            s.predicted_above_50_right = int(((pred > 0.5) & above).sum())
            s.heavy_still_above_50 = int((sink[heavy] > 0.5).sum())
            s.heavy_still_above_50_share = float((sink[heavy] > 0.5).mean()) if heavy.any() else 0.0
            s.heavy_median_sink = float(np.median(sink[heavy])) if heavy.any() else 0.0
            s.prediction_median_error = float(np.median(np.abs(pred - sink)))
            s.margins |= _comparison_margins(lens, world, alt, m)
            if above.any():
                here = np.array([corpus.rows[i].sink["alpha"][l, h, w] for i, w, l, h in
                                 zip(d.sentence[m][above], d.word[m][above], d.layer[m][above], d.head[m][above])])
                s.above_50_min_alpha_sink = float(here.min())
                s.above_50_predicted_above_50 = int((pred[above] > 0.5).sum())
                s.above_50_predicted_global = int((global_pred[lens][m][above] > 0.5).sum())
                s.above_50_max_prediction_error = float(np.abs(pred[above] - sink[above]).max())
                heads, counts = np.unique(np.stack([d.layer[m][above], d.head[m][above]], 1), axis=0, return_counts=True)
                s.above_50_heads = [[int(l), int(h), int(c)] for (l, h), c in zip(heads, counts)]
                s.margins |= {f"above_50_head{i}.{f}": s.margins["sink_head0.rows"] for i in range(len(heads))
                              for f in ("layer", "head", "rows")}
                s.above_50_sep_fraction = float(d.sep[m][above].sum() / sink[above].sum())
                s.above_50_median_cls_ratio = float(np.median(
                    [ratio_of(corpus.acts[i], lens, "cls")[l, h] for i, l, h in
                     zip(d.sentence[m][above], d.layer[m][above], d.head[m][above])]))
                s.above_50_attended_norm_ratio = float(np.median(
                    [_attended_norm_ratio(corpus, lens, i, w, l, h) for i, w, l, h in
                     zip(d.sentence[m][above], d.word[m][above], d.layer[m][above], d.head[m][above])]))
        out[lens] = s
    return out


def _summary_margins(d: Displayed, d_alt: Displayed, alpha: Displayed, alpha_alt: Displayed, m: np.ndarray,
                     worst: picks.Pick, worst_row: int, heavy: np.ndarray, n_layers: int) -> dict:
    """LensSummary's margins that every lens has: the worst row, the layers picked, the rows
    above 90 % under alpha and the heads that hold the counted rows."""
    pick = picks.NO_MARGIN
    at_worst = min(worst.margin, float(d.margin[worst_row]))
    out = {f"worst.{f}": (at_worst, pick) for f in ("sentence", "word_index", "layer", "head")}
    out["worst.top_word"] = (min(at_worst, float(d.top_margin[worst_row])), pick)
    for l in range(n_layers):
        out[f"picks.layer{l}"] = (picks.flips_margin(d.layer[m] == l, d_alt.layer[m] == l, d.margin[m]), 1.0)
    heavy_margin = picks.count_margin(alpha.sink[m], 0.9, alpha_alt.sink[m], alpha.margin[m])
    out["heavy_rows"] = (heavy_margin, 1.0)
    # A head's count of the counted rows moves if a counted row turns, or its head does.
    holding = lambda flags, values, alt_values, threshold: min(
        picks.count_margin(values, threshold, alt_values, d.margin[m]),
        float(d.margin[m][flags].min()) if flags.any() else picks.NO_MARGIN)
    heads = {"heavy": min(heavy_margin, float(d.margin[m][heavy].min()) if heavy.any() else picks.NO_MARGIN),
             "punct": holding(d.punct[m] > 0.5, d.punct[m], d_alt.punct[m], 0.5),
             "sink": holding(d.sink[m] > 0.5, d.sink[m], d_alt.sink[m], 0.5)}
    for name, margin in heads.items():   # (which head is where: summaries, by the rows' leads)
        for i in range(3):
            out[f"{name}_head{i}.rows"] = (margin, 1.0)
    out["n_above_50_heads"] = (heads["sink"], 1.0)
    return out


def _comparison_margins(lens: str, world: World, alt: World, m: np.ndarray) -> dict:
    """A norm lens against alpha on the same words: each comparison's margin, with the rows
    of either lens on their alternative heads in turn (one lens turning at a time)."""
    d, a = world.rows[lens], world.rows["alpha"]
    d_alt, a_alt = alt.rows[lens], alt.rows["alpha"]
    n = int(m.sum())
    both = lambda flag: min(picks.flips_margin(flag(d, a, world), flag(d_alt, a, alt), d.margin[m]),
                            picks.flips_margin(flag(d, a, world), flag(d, a_alt, alt), a.margin[m]))
    worse = lambda x, y, w: x.sink[m] > y.sink[m]
    same_head = lambda x, y, w: (x.layer[m] == y.layer[m]) & (x.head[m] == y.head[m])
    worse_margin = min(picks.comparison_margin(d.sink[m], a.sink[m]), both(worse))
    same_margin = both(same_head)
    kept = picks.count_margin(world.same_head[lens][m], 0.5, alt.same_head[lens][m], a.margin[m])
    predicted = picks.count_margin(world.predicted[lens][m], 0.5, alt.predicted[lens][m], d.margin[m])
    above_margin = picks.count_margin(d.sink[m], 0.5, d_alt.sink[m], d.margin[m])
    on_above = min(predicted, above_margin)
    global_pred = min(picks.count_margin(world.global_pred[lens][m], 0.5, alt.global_pred[lens][m], d.margin[m]),
                      above_margin)
    heavy = picks.count_margin(a.sink[m], 0.9, a_alt.sink[m], a.margin[m])
    return {
        **picks.family("worse", worse_margin, n), "worse_rows": (worse_margin, 1.0),
        "worse_same_head": (min(worse_margin, same_margin), 1.0),
        "same_head_as_alpha": (same_margin, 1.0), **{f"same_head_share{x}": (same_margin, 1.0 / n) for x in ("", "_lo", "_hi")},
        **picks.family("alpha_head_above_50", kept, n),
        "predicted_above_50": (predicted, 1.0), "predicted_above_50_right": (on_above, 1.0),
        "above_50_predicted_above_50": (on_above, 1.0), "above_50_predicted_global": (global_pred, 1.0),
        "heavy_still_above_50": (min(heavy, above_margin), 1.0),
    }


def _row(corpus: Corpus, d: Displayed, r: int) -> dict:
    """One displayed row, as the pages cite it."""
    s, w = int(d.sentence[r]), int(d.word[r])
    return {"sentence": s, "word_index": w, "layer": int(d.layer[r]), "head": int(d.head[r]),
            "sink_share": float(d.sink[r]), "content_mass": float(d.mass[r]),
            "top_word": corpus.toks[s].words[int(d.top_word[r])], "top_weight": float(d.top_weight[r])}


def _attended_norm_ratio(corpus: Corpus, lens: str, i: int, w: int, l: int, h: int) -> float:
    """For word w's row (its tokens' mean) on head (l, h): the alpha-weighted mean norm of
    the other content tokens it attends, over their plain mean. The survival formula
    (measure.predicted_sink) assumes 1; below 1, the lens discounts the content too."""
    a, tok = corpus.acts[i], corpus.toks[i]
    mine = [t for t, x in enumerate(tok.word_ids) if x == w]
    others = [t for t, x in enumerate(tok.word_ids) if x is not None and x != w]
    n = getattr(a, lens)[l, h]                                   # [T]
    weights = a.alpha[l, h][mine].mean(axis=0)[others]
    return float((weights @ n[others]) / weights.sum() / n[others].mean())
