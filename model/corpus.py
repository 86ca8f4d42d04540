"""The corpus as one model sees it, and the rows the instrument displays on it.

`read_corpus` tokenizes the corpus, runs the reference once over it and reduces every
sentence to its `SentenceRows` (instrument.py); `displayed` applies the head rule and
gives every displayed row of the corpus under one lens, as parallel arrays. These are
the types every measurement reads (measure.py, stats/, rollout.py, checks.py), so they
live below all of them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import activations, instrument
from .activations import Activations
from .instrument import SentenceRows, WordMap
from .study import Study
from .tokenize import Tokenized, tokenize
from .weights import Checkpoint


# -- one model's pass over the corpus ---------------------------------------------------------

@dataclass
class Corpus:
    """The corpus as one model sees it: tokens, activations, and every sentence's rows."""

    toks: list[Tokenized]
    acts: list[Activations]
    wms: list[WordMap]
    rows: list[SentenceRows]

    def word_rows(self, i: int, lens: str, norms: np.ndarray | None = None) -> np.ndarray:
        """Sentence i's full word rows under one lens, [L, nh, n_words, K] (recomputed:
        only the few rows a measurement reads in full are ever formed again)."""
        a = self.acts[i]
        n = instrument.lens_norms(a.value_norm, a.output_norm)[lens] if norms is None else norms
        return instrument.word_rows(instrument.lens_rows(a.alpha, n), self.wms[i])


def tokenize_all(ckpt: Checkpoint, sentences: list[str], where: str) -> list[Tokenized]:
    return [
        tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position, where=f"{where}:{i + 1}")
        for i, s in enumerate(sentences)
    ]


def corpus_rows(toks: list[Tokenized], acts: list[Activations], norms=None) -> Corpus:
    """Fold every sentence to word rows and reduce them (instrument.sentence_rows).
    `norms(a)` replaces a sentence's lens norms (the self-checks force some)."""
    wms = [instrument.word_map(t.word_ids) for t in toks]
    rows = [
        instrument.sentence_rows(
            a.alpha, norms(a) if norms else instrument.lens_norms(a.value_norm, a.output_norm), t.words, wm
        )
        for t, a, wm in zip(toks, acts, wms)
    ]
    return Corpus(toks, acts, wms, rows)


def read_corpus(ckpt: Checkpoint, study: Study, inputs=None) -> Corpus:
    """Tokenize the corpus, run the reference once over it, reduce every sentence;
    `inputs` (truth.LayerInputs) keeps each sentence's layer inputs for the ground truth."""
    toks = tokenize_all(ckpt, list(study.sentences), str(study.corpus_path))
    return corpus_rows(toks, activations.from_reference(ckpt, [t.ids for t in toks], inputs))


# -- the displayed rows -----------------------------------------------------------------------

@dataclass
class Displayed:
    """Every displayed row of the corpus under one lens, as parallel arrays [R]: one row
    per shown word, sentence by sentence, in the same order under every lens."""

    sentence: np.ndarray
    word: np.ndarray
    layer: np.ndarray
    head: np.ndarray
    sink: np.ndarray
    sep: np.ndarray
    punct: np.ndarray
    mass: np.ndarray
    top_word: np.ndarray
    top_weight: np.ndarray
    gap: np.ndarray          # the best head's score minus the runner-up's (near-ties: small)
    # How near each pick came to another (model/picks.py): the head rule's margin and the
    # head it would open instead; the top word's margin and the runner-up word.
    margin: np.ndarray
    alt_layer: np.ndarray
    alt_head: np.ndarray
    top_margin: np.ndarray
    second_word: np.ndarray

    def where(self, sentences: list[int]) -> np.ndarray:
        """Mask of the rows of these sentences."""
        return np.isin(self.sentence, sentences)

    def alternative(self, corpus: "Corpus", lens: str) -> "Displayed":
        """The same rows, each on the head the rule would open instead (`alt_layer`,
        `alt_head`; the pick itself where nothing could turn it): what a machine rounding the
        nearest near-tie the other way would display. Row-wise statistics computed on both
        tell which rows could turn them (model/picks.py)."""
        cols = {f: getattr(self, f) for f in Displayed.__dataclass_fields__}
        cols |= {"layer": self.alt_layer, "head": self.alt_head, "alt_layer": self.layer, "alt_head": self.head}
        at = lambda per_head: np.array([per_head(s)[l, h, w] for s, w, l, h in
                                        zip(self.sentence, self.word, self.alt_layer, self.alt_head)])
        for name, field in _PER_HEAD.items():
            cols[name] = at(lambda s: getattr(corpus.rows[s], field)[lens]) if len(self.sentence) else cols[name]
        return Displayed(**cols)


# Displayed's fields read off a sentence's rows on the chosen head (SentenceRows fields)
_PER_HEAD = {"sink": "sink", "sep": "sep", "punct": "punct", "mass": "content_mass", "top_word": "top_word",
             "top_weight": "top_weight", "top_margin": "top_margin", "second_word": "second_word"}


def positional_heads(corpus: Corpus, lens: str, threshold: float, sentences: list[int]) -> np.ndarray:
    """[L, nh] True for heads the rule never opens (instrument.py, head choice), fitted
    on `sentences` (the fit half)."""
    rows = [corpus.rows[i] for i in sentences]
    adjacent = sum(instrument.adjacent_top(sr.top_word[lens], sr.shown) for sr in rows)
    return adjacent / max(1, sum(len(sr.shown) for sr in rows)) > threshold


def positional_margin(corpus: Corpus, lens: str, threshold: float, sentences: list[int]) -> float:
    """How near `positional_heads` came to deciding a head the other way: for each head one
    row's top word could move across the threshold (its share of adjacent peaks is within
    one row of it), the smallest margin of a top word whose runner-up would change whether
    it peaks next door (model/picks.py); inf if no head is that close."""
    rows = [corpus.rows[i] for i in sentences]
    n = max(1, sum(len(sr.shown) for sr in rows))
    adjacent = sum(instrument.adjacent_top(sr.top_word[lens], sr.shown) for sr in rows)          # [L, nh]
    close = (adjacent + 1) / n > threshold
    close &= (adjacent - 1) / n <= threshold
    if not close.any():
        return float("inf")
    margins = []
    for sr in rows:
        words = np.arange(sr.top_word[lens].shape[-1])
        turns = (np.abs(sr.top_word[lens] - words) == 1) != (np.abs(sr.second_word[lens] - words) == 1)   # [L, nh, n]
        turns &= close[:, :, None]
        turns[:, :, [w for w in words if w not in sr.shown]] = False
        if turns.any():
            margins.append(float(sr.top_margin[lens][turns].min()))
    return min(margins, default=float("inf"))


def displayed(corpus: Corpus, lens: str, excluded: np.ndarray, tie_tolerance: float,
              score: str = "top_weight", weights: list[np.ndarray] | None = None) -> Displayed:
    """Every displayed row under one lens, on the heads the rule opens. The rule's score is
    the displayed row's largest weight; `score="content_mass"` ranks heads by what their
    displayed row is built from instead (an alternative rule, for the sensitivity table);
    `weights`, one [L, nh, n_words] array per sentence, multiplies each head's score (part 8's
    effect-weighted rule)."""
    cols: dict[str, list] = {f: [] for f in Displayed.__dataclass_fields__}
    for i, sr in enumerate(corpus.rows):
        by = getattr(sr, score)[lens] if weights is None else getattr(sr, score)[lens] * weights[i]
        choice = instrument.head_choice(by, excluded, tie_tolerance)
        heads = choice.heads[sr.shown]                                           # [n_shown, 2]
        l, h, w = heads[:, 0], heads[:, 1], np.array(sr.shown, dtype=int)
        cols["gap"].append(instrument.runner_up_gap(by, excluded)[sr.shown])
        cols["margin"].append(choice.margin[sr.shown])
        cols["alt_layer"].append(choice.alternative[sr.shown, 0])
        cols["alt_head"].append(choice.alternative[sr.shown, 1])
        cols["sentence"].append(np.full(len(w), i))
        cols["word"].append(w)
        cols["layer"].append(l)
        cols["head"].append(h)
        for name, field in _PER_HEAD.items():
            cols[name].append(getattr(sr, field)[lens][l, h, w])
    return Displayed(**{f: np.concatenate(v) if v else np.zeros(0) for f, v in cols.items()})


def on_heads(corpus: Corpus, lens: str, rows: Displayed) -> np.ndarray:
    """The sink share under `lens` of each row, on the head `rows` opened (the same-head
    comparison: alpha's head, read under a norm lens)."""
    return np.array([corpus.rows[s].sink[lens][l, h, w]
                     for s, w, l, h in zip(rows.sentence, rows.word, rows.layer, rows.head)])
