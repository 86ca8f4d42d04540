"""The statistics of a set of displayed rows (`SinkStats`): how much of each row is on the
sink, on punctuation, where the worst row is, with intervals over sentences where a
resampler is given, and how near each count came to turning (model/picks.py), the rows'
alternative heads included; and how many rows the head rule's tie tolerance decides.

Not here: a lens's headline over the held-out half (lenses.py), the rule-free view (layers.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import picks
from ..bootstrap import Resampler, units
from ..corpus import Corpus, Displayed


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
    return row_stats(d.sink[m], d.punct[m], top_on_punct(corpus, d)[m], units(d.sentence[m], sentences), where,
                     len(sentences), resampler, tie_tolerance, alternatives(corpus, d, alt, m))


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
