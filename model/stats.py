"""Summary statistics of the displayed rows, the rule-free view and the value norms.

Every figure is computed over one set of sentences (a half of the corpus, or all of
it); headline figures carry a bootstrap interval over those sentences (`_lo`, `_hi`
beside the figure; bootstrap.py). Counts come with the share they are of the rows, so
that no claim rests on the corpus's size.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import picks
from .activations import Activations
from .bootstrap import Resampler
from .corpus import Corpus, Displayed
from .instrument import LENSES


def _units(sentence: np.ndarray, sentences: list[int]) -> np.ndarray:
    """Each row's sentence as its position in `sentences` (the resampler's units)."""
    pos = np.full(max(max(sentences, default=0), int(sentence.max(initial=0))) + 1, -1)
    pos[sentences] = np.arange(len(sentences))
    return pos[sentence]


@dataclass
class SinkStats:
    n_sentences: int
    n_rows: int
    median_sink: float
    worst_sink: float
    worst_sentence: int
    worst_word: str
    above_50: int
    above_50_share: float
    above_90: int
    above_90_share: float
    median_punct: float              # punctuation share, beside the sink, never merged into it
    punct_above_50: int
    punct_above_50_share: float
    top_punct_share: float           # rows whose displayed row peaks on a punctuation mark
    median_sink_plus_punct: float    # both together: what the rest of the sentence keeps is the remainder
    # The spread (added after the second review's sceptical reading; shape, not headline: no intervals)
    q25_sink: float
    q75_sink: float
    p90_sink: float
    median_sink_lo: float | None = None
    median_sink_hi: float | None = None
    worst_sink_lo: float | None = None
    worst_sink_hi: float | None = None
    above_50_share_lo: float | None = None
    above_50_share_hi: float | None = None
    above_90_share_lo: float | None = None
    above_90_share_hi: float | None = None
    median_punct_lo: float | None = None
    median_punct_hi: float | None = None
    punct_above_50_share_lo: float | None = None
    punct_above_50_share_hi: float | None = None
    top_punct_share_lo: float | None = None
    top_punct_share_hi: float | None = None
    # field -> (margin, step): how near each decision above came to turning (model/picks.py)
    margins: dict = field(default_factory=dict)


@dataclass
class Alternatives:
    """Where rounding could turn a set of displayed rows (model/picks.py), for the margins
    of what is counted over them: per row [R], the head rule's margin and the row's values
    on the head it would open instead; the top word's margin and whether the runner-up word
    is punctuation."""
    margin: np.ndarray
    sink: np.ndarray
    punct: np.ndarray
    top_punct: np.ndarray
    top_margin: np.ndarray
    second_punct: np.ndarray

    def top_punct_margin(self, top_punct: np.ndarray) -> float:
        """Of the share of rows peaking on punctuation: the nearest turn of a row's head or
        of its top word that would change whether it does."""
        return min(picks.flips_margin(top_punct, self.top_punct, self.margin),
                   picks.flips_margin(top_punct, self.second_punct, self.top_margin))


def alternatives(corpus: Corpus, d: Displayed, alt: Displayed, m: np.ndarray) -> Alternatives:
    """The `Alternatives` of the rows `m` selects: `d`, and the same rows on their
    alternative heads (`Displayed.alternative`)."""
    return Alternatives(margin=d.margin[m], sink=alt.sink[m], punct=alt.punct[m],
                        top_punct=top_on_punct(corpus, alt)[m], top_margin=d.top_margin[m],
                        second_punct=top_on_punct(corpus, d, d.second_word)[m])


def top_on_punct(corpus: Corpus, d: Displayed, top: np.ndarray | None = None) -> np.ndarray:
    """[R]: the row's top word (or the word `top` names) is punctuation (not a shown word)."""
    top = d.top_word if top is None else top
    return np.array([t not in corpus.rows[s].shown for s, t in zip(d.sentence, top)], dtype=bool)


def worst_pick(sink: np.ndarray, tie_tolerance: float) -> picks.Pick:
    """The row with the most sink: the first (corpus order) within `tie_tolerance` of it."""
    return picks.best(sink, tie_tolerance)


def row_stats(sink: np.ndarray, punct: np.ndarray, top_punct: np.ndarray, unit: np.ndarray,
              where: Callable[[int], tuple[int, str]], n_sentences: int, resampler: Resampler | None,
              tie_tolerance: float, alt: Alternatives | None = None) -> SinkStats:
    """Statistics of a set of rows: sink [R], punctuation share [R], whether the row peaks
    on punctuation [R], each row's unit (sentence position) [R], and `where(r)`: row r's
    (sentence, word); intervals if a resampler is given. With `alt` (rows chosen by the head
    rule), the margins of the counts include the rows' alternative heads."""
    pick = worst_pick(sink, tie_tolerance)
    worst = pick.index
    s = SinkStats(
        n_sentences=n_sentences,
        n_rows=int(sink.size),
        median_sink=float(np.median(sink)),
        worst_sink=float(sink[worst]),
        worst_sentence=int(where(worst)[0]),
        worst_word=where(worst)[1],
        above_50=int((sink > 0.5).sum()),
        above_50_share=float((sink > 0.5).mean()),
        above_90=int((sink > 0.9).sum()),
        above_90_share=float((sink > 0.9).mean()),
        median_punct=float(np.median(punct)),
        punct_above_50=int((punct > 0.5).sum()),
        punct_above_50_share=float((punct > 0.5).mean()),
        top_punct_share=float(np.mean(top_punct)),
        median_sink_plus_punct=float(np.median(sink + punct)),
        **dict(zip(("q25_sink", "q75_sink", "p90_sink"), map(float, np.percentile(sink, [25, 75, 90])))),
    )
    if resampler is not None:
        s.median_sink_lo, s.median_sink_hi = resampler.median(sink, unit)
        s.worst_sink_lo, s.worst_sink_hi = resampler.max(sink, unit)
        s.above_50_share_lo, s.above_50_share_hi = resampler.share(sink > 0.5, unit)
        s.above_90_share_lo, s.above_90_share_hi = resampler.share(sink > 0.9, unit)
        s.median_punct_lo, s.median_punct_hi = resampler.median(punct, unit)
        s.punct_above_50_share_lo, s.punct_above_50_share_hi = resampler.share(punct > 0.5, unit)
        s.top_punct_share_lo, s.top_punct_share_hi = resampler.share(top_punct, unit)
    n = int(sink.size)
    worst_margin = min(pick.margin, float(alt.margin[worst])) if alt is not None else pick.margin
    s.margins = {
        "worst_sentence": (worst_margin, picks.NO_MARGIN), "worst_word": (worst_margin, picks.NO_MARGIN),
        **picks.family("above_50", picks.count_margin(sink, 0.5, *_alt(alt, "sink")), n),
        **picks.family("above_90", picks.count_margin(sink, 0.9, *_alt(alt, "sink")), n),
        **picks.family("punct_above_50", picks.count_margin(punct, 0.5, *_alt(alt, "punct")), n),
    }
    if alt is not None:
        top = alt.top_punct_margin(top_punct)
        s.margins |= {f"top_punct_share{x}": (top, 1.0 / n) for x in ("", "_lo", "_hi")}
    return s


def _alt(alt: Alternatives | None, name: str) -> tuple:
    """(values on the alternative heads, the heads' margins) for count_margin, or nothing."""
    return (getattr(alt, name), alt.margin) if alt is not None else ()


def sink_stats(corpus: Corpus, d: Displayed, alt: Displayed, sentences: list[int], resampler: Resampler | None,
               tie_tolerance: float) -> SinkStats:
    """The displayed rows of `sentences`, under one lens (`alt`: the same rows on their
    alternative heads, for the margins)."""
    m = d.where(sentences)
    sentence, word = d.sentence[m], d.word[m]
    where = lambda r: (int(sentence[r]), corpus.toks[sentence[r]].words[word[r]])
    return row_stats(d.sink[m], d.punct[m], top_on_punct(corpus, d)[m], _units(d.sentence[m], sentences), where,
                     len(sentences), resampler, tie_tolerance, alternatives(corpus, d, alt, m))


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
    unit = _units(rows["alpha"].sentence[m], sentences)
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


@dataclass
class NearTies:
    """How many displayed rows the head rule's tie tolerance decides: the best head's score
    is less than the tolerance above the runner-up's (both halves: the rule's own reach)."""
    tolerance: float
    n_rows: int
    below_tolerance: int
    below_tolerance_share: float
    below_tenth: int                # gap below a tenth of the tolerance
    below_tenth_share: float
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (model/picks.py)


def near_ties(d: Displayed, tolerance: float) -> NearTies:
    close, closer = d.gap < tolerance, d.gap < tolerance / 10
    n = max(1, d.gap.size)
    # A gap is a difference of two head scores: its nearness to a cut-off is measured
    # against the size of the scores (the best one), as every other margin is.
    size = np.where(d.top_weight > 0, d.top_weight, 1.0)
    nearest = lambda cut: float(np.min(np.abs(d.gap - cut) / size)) if d.gap.size else picks.NO_MARGIN
    return NearTies(tolerance, int(d.gap.size), int(close.sum()), float(close.sum() / n),
                    int(closer.sum()), float(closer.sum() / n),
                    margins={"below_tolerance": (nearest(tolerance), 1.0), "below_tolerance_share": (nearest(tolerance), 1.0 / n),
                             "below_tenth": (nearest(tolerance / 10), 1.0), "below_tenth_share": (nearest(tolerance / 10), 1.0 / n)})


@dataclass
class LayerStats:
    layer: int
    lens: str
    stats: SinkStats


def per_layer(corpus: Corpus, n_layers: int, sentences: list[int], tie_tolerance: float) -> list[LayerStats]:
    """The rule-free view: every head's row for every shown word of `sentences`, by layer."""
    out = []
    for l in range(n_layers):
        for lens in LENSES:
            sink, punct, top_punct, owner = [], [], [], []
            for i in sentences:
                sr = corpus.rows[i]
                sink.append(sr.sink[lens][l][:, sr.shown].T.ravel())    # word by word, heads within
                punct.append(sr.punct[lens][l][:, sr.shown].T.ravel())
                top_punct.append(~np.isin(sr.top_word[lens][l][:, sr.shown].T.ravel(), sr.shown))
                words = np.array(sr.shown, dtype=int)
                owner.append(np.repeat(np.stack([np.full(len(words), i), words], 1), sr.sink[lens].shape[1], axis=0))
            owner = np.concatenate(owner)                                # [R, 2]: sentence, word
            where = lambda r: (int(owner[r, 0]), corpus.toks[owner[r, 0]].words[owner[r, 1]])
            sink = np.concatenate(sink)
            s = row_stats(sink, np.concatenate(punct), np.concatenate(top_punct),
                          np.zeros(len(sink), int), where, len(sentences), None, tie_tolerance)
            out.append(LayerStats(l, lens, s))
    return out


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
