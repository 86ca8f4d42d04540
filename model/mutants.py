"""A deliberately wrong variant of the instrument, kept to show which checks catch it.

The instrument folds subwords into words as Clark et al. (2019) do: a from-word's row
is the MEAN of its subword query rows, a to-word's column the SUM of its subword key
columns, so every word row still sums to 1. The mutant does it the wrong way round:
SUM over the from-word's subword rows, MEAN over the to-word's subword columns. It is
an easy slip (both are "aggregate the subwords"), and it is invisible on any word
made of one token, which is most words.

`wrong_aggregation` runs the mutant over sentences given as `MutantInput`s, on the head
the instrument opens for each displayed row (alpha lens), and reports:

- what catches it: the word rows no longer sum to 1, and on words of several subwords
  the sink share disagrees with the instrument's;
- what does not: a second implementation written from the same wrong idea agrees with
  it to the last bits, and the "every norm forced to 1.0" mutation check still passes,
  because both sides of that check go through the same wrong folding.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from . import instrument, picks

# Two floats "agree" when they differ by less than this: far above rounding in float64
# (about 1e-16 here), far below anything a reader could see.
TOLERANCE = 1e-9


def wrong_word_map(word_ids: list[int | None]) -> instrument.WordMap:
    """The instrument's WordMap with the two folds swapped: rows SUM, columns MEAN."""
    right = instrument.word_map(word_ids)
    rows = (right.rows > 0).astype(float)                    # [n_words, T]: 1 on each subword
    cols = right.cols / right.cols.sum(axis=0, keepdims=True)  # [T, K]: 1/len(word) on each subword
    return instrument.WordMap(rows=rows, cols=cols, n_words=right.n_words)


def wrong_row_loop(token_rows: np.ndarray, word_ids: list[int | None], w: int) -> np.ndarray:
    """The same wrong idea, written again as plain loops, for word w's row only: token
    rows [T, T] -> [K]. This is what a test written by the mutant's author would
    compare against."""
    T = len(word_ids)
    n_words = 1 + max(x for x in word_ids if x is not None)
    column = [0 if x is None and t == 0 else n_words + 1 if x is None else x + 1 for t, x in enumerate(word_ids)]
    queries = [t for t in range(T) if word_ids[t] == w]
    out = np.zeros(n_words + 2)
    for k in range(n_words + 2):
        keys = [t for t in range(T) if column[t] == k]
        out[k] = sum(np.mean([token_rows[i, t] for t in keys]) for i in queries)
    return out


@dataclass
class MutantInput:
    """One sentence to run the mutant on."""

    index: int
    word_ids: list[int | None]
    words: list[str]
    alpha: np.ndarray                   # [L, nh, T, T]
    heads: dict[int, tuple[int, int]]   # shown word -> (layer, head) the instrument opens under α


@dataclass
class MutantRow:
    sentence: int
    word_index: int
    word: str
    n_subwords: int
    sink_share: float        # the instrument's
    wrong_sink_share: float  # the mutant's, same head
    wrong_row_sum: float     # what the mutant's word row sums to


@dataclass
class WrongAggregation:
    n_rows: int                    # displayed rows (alpha lens)
    n_multi_subword: int           # of which the from-word has several subwords
    rows_differ: int               # rows whose sink share the mutant changes
    rows_differ_single: int        # ... among one-subword from-words (the slip is invisible there)
    max_abs_sink_diff: float       # largest change of a displayed row's sink share
    max_wrong_sink: float          # the mutant's largest "share"
    max_row_sum_error: float       # largest |row sum - 1| of the mutant's word rows
    rows_bad_sum: int              # rows whose sum is off by more than TOLERANCE
    max_right_row_sum_error: float # the same invariant on the instrument's rows
    same_idea_max_diff: float      # mutant vs a loop rewrite of the same idea, on several-subword rows
    unit_norms_max_diff: float     # the "norms forced to 1.0" check, run through the mutant
    tolerance: float               # TOLERANCE, published with the verdicts it decides
    same_idea_agrees: bool         # the loop rewrite passes: it shares the mistake
    right_rows_sum_to_one: bool    # the invariant holds on the instrument's own rows
    sentences_one_token_words: int = 0      # sentences whose every word is one token: the slip is invisible there
    independent_fold_max_diff: float = 0.0  # the mutant's rows against a fold written apart (checks.py)
    rows: list[MutantRow] = field(default_factory=list)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


def wrong_aggregation(sentences: Sequence[MutantInput]) -> WrongAggregation:
    """Run the mutant on every displayed alpha row of `sentences`."""
    out: list[MutantRow] = []
    same_idea, unit_diff, right_sum_err = 0.0, 0.0, 0.0
    for s in sentences:
        ones = np.ones(s.alpha.shape[:-1])                       # [L, nh, T]
        token_rows = instrument.lens_rows(s.alpha, ones)         # the alpha lens, as measured
        right_wm = instrument.word_map(s.word_ids)
        right = instrument.word_rows(token_rows, right_wm)       # the instrument's rows
        wm = wrong_word_map(s.word_ids)
        wrong = instrument.word_rows(token_rows, wm)             # [L, nh, n_words, K]
        # The lens self-check through the mutant: unit "value norms" against alpha.
        unit = instrument.word_rows(instrument.lens_rows(s.alpha, np.ones_like(ones)), wm)
        unit_diff = max(unit_diff, float(np.abs(unit - wrong).max()))
        sizes = (wm.rows > 0).sum(axis=1)
        for w, (l, h) in s.heads.items():
            if sizes[w] > 1:  # where the slip shows; elsewhere both folds are one and the same
                loop = wrong_row_loop(token_rows[l, h], s.word_ids, w)
                same_idea = max(same_idea, float(np.abs(loop - wrong[l, h, w]).max()))
            right_sum_err = max(right_sum_err, abs(float(right[l, h, w].sum()) - 1.0))
            out.append(MutantRow(
                sentence=s.index,
                word_index=w,
                word=s.words[w],
                n_subwords=int(sizes[w]),
                sink_share=float(instrument.sink_share(right[l, h, w], right_wm)),
                wrong_sink_share=float(instrument.sink_share(wrong[l, h, w], wm)),
                wrong_row_sum=float(wrong[l, h, w].sum()),
            ))
    diff = np.array([abs(r.wrong_sink_share - r.sink_share) for r in out])
    differ = diff > TOLERANCE
    single = np.array([r.n_subwords == 1 for r in out])
    sum_err = np.array([abs(r.wrong_row_sum - 1.0) for r in out])
    return WrongAggregation(
        sentences_one_token_words=sum(len(set(x for x in s.word_ids if x is not None)) == len(s.word_ids) - 2
                                      for s in sentences),
        n_rows=len(out),
        n_multi_subword=int((~single).sum()),
        rows_differ=int(differ.sum()),
        rows_differ_single=int((differ & single).sum()),
        max_abs_sink_diff=float(diff.max()),
        max_wrong_sink=float(max(r.wrong_sink_share for r in out)),
        max_row_sum_error=float(sum_err.max()),
        rows_bad_sum=int((sum_err > TOLERANCE).sum()),
        max_right_row_sum_error=right_sum_err,
        same_idea_max_diff=same_idea,
        unit_norms_max_diff=unit_diff,
        tolerance=TOLERANCE,
        same_idea_agrees=same_idea < TOLERANCE,
        right_rows_sum_to_one=right_sum_err < TOLERANCE,
        rows=out,
        margins={"rows_differ": (picks.threshold_margin(diff, TOLERANCE), 1.0),
                 "rows_differ_single": (picks.threshold_margin(diff[single], TOLERANCE), 1.0),
                 "rows_bad_sum": (picks.threshold_margin(sum_err, TOLERANCE), 1.0),
                 "same_idea_agrees": (picks.threshold_margin([same_idea], TOLERANCE), 1.0),
                 "right_rows_sum_to_one": (picks.threshold_margin([right_sum_err], TOLERANCE), 1.0)},
    )
