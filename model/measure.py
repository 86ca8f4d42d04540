"""The measurements: one model over the corpus, the instrument's rows under three lenses.

`measure_model` runs the reference once over the corpus, reduces every sentence to its
`SentenceRows` (instrument.py), applies the head rule, and summarizes (stats.py). The
result is a `Measured`: a `ModelResults` of plain dataclasses (JSON-ready) and the corpus
it was computed from, which the self-checks (checks.py) and the instrument's per-sentence
data (views.py) read in turn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import activations, instrument, stats
from .activations import Activations
from .flip import FlipResult, flip_result
from .instrument import LENSES, SentenceRows, WordMap
from .rollout import RolloutStats, rollout_stats
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


def tokenize_corpus(ckpt: Checkpoint, sentences: list[str], where: str) -> list[Tokenized]:
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


def read_corpus(ckpt: Checkpoint, study: Study) -> Corpus:
    """Tokenize the corpus, run the reference once over it, reduce every sentence."""
    toks = tokenize_corpus(ckpt, list(study.sentences), str(study.corpus_path))
    return corpus_rows(toks, activations.from_reference(ckpt, [t.ids for t in toks]))


# -- the displayed rows -----------------------------------------------------------------------

@dataclass
class DisplayedRow:
    """One row the instrument shows: one word, under one lens, on the head it opens."""

    sentence: int
    word_index: int
    word: str
    lens: str
    layer: int
    head: int
    sink_share: float
    sep_share: float       # the part of the sink that went to [SEP]
    content_mass: float
    top_word: str          # the displayed row's largest weight goes to this word
    top_weight: float


def positional_heads(corpus: Corpus, lens: str, threshold: float) -> np.ndarray:
    """[L, nh] True for heads the rule never opens (instrument.py, head choice)."""
    adjacent = sum(instrument.adjacent_top(sr.top_word[lens], sr.shown) for sr in corpus.rows)
    return adjacent / sum(len(sr.shown) for sr in corpus.rows) > threshold


def displayed(corpus: Corpus, lens: str, excluded: np.ndarray) -> list[DisplayedRow]:
    """Every displayed row of the corpus under one lens, on the heads the rule opens."""
    out = []
    for i, (tok, sr) in enumerate(zip(corpus.toks, corpus.rows)):
        heads = instrument.choose_heads(sr.top_weight[lens], excluded)
        for w in sr.shown:
            l, h = (int(x) for x in heads[w])
            out.append(DisplayedRow(
                sentence=i, word_index=w, word=tok.words[w], lens=lens, layer=l, head=h,
                sink_share=float(sr.sink[lens][l, h, w]),
                sep_share=float(sr.sep[lens][l, h, w]),
                content_mass=float(sr.content_mass[lens][l, h, w]),
                top_word=tok.words[int(sr.top_word[lens][l, h, w])],
                top_weight=float(sr.top_weight[lens][l, h, w]),
            ))
    return out


def displayed_all(corpus: Corpus, threshold: float, lenses=LENSES) -> tuple[dict[str, list[DisplayedRow]], dict[str, np.ndarray]]:
    """Per lens: every displayed row, and the positional heads the rule excluded."""
    excluded = {lens: positional_heads(corpus, lens, threshold) for lens in lenses}
    return {lens: displayed(corpus, lens, excluded[lens]) for lens in lenses}, excluded


# -- results ----------------------------------------------------------------------------------

@dataclass
class AnchorRow:
    """A recorded word -> word weight (study.yml `anchors`), re-measured."""

    sentence: int
    from_word: str
    to_word: str
    layer: int
    head: int
    weight: float          # displayed (renormalized) weight, alpha lens
    sink_share: float


@dataclass
class Verdict:
    lens: str
    threshold: float
    max_rows_above: int
    rows_above: int
    adopted: bool


@dataclass
class ModelResults:
    model: str
    key: str
    sha256: str
    source: str
    n_layers: int
    n_heads: int
    n_sentences: int
    summary: dict[str, stats.LensSummary]
    per_layer: list[stats.LayerStats]
    ratios: list[stats.RatioStats]
    verdicts: list[Verdict]
    adopted: bool
    anchors: list[AnchorRow]
    rollout: RolloutStats
    flips: list[FlipResult]
    rows: list[DisplayedRow] = field(default_factory=list)
    # Filled in by checks.py, which reads a `Measured` (so this module never imports it):
    checks: Any = None                          # checks.SelfChecks
    mutant: dict = field(default_factory=dict)  # name -> a deliberately wrong variant's run


@dataclass
class Measured:
    """One model, measured: the results the pages read, and the corpus they came from."""

    results: ModelResults
    corpus: Corpus
    rows: dict[str, list[DisplayedRow]]   # lens -> displayed rows (also flat in results.rows)
    excluded: dict[str, np.ndarray]       # lens -> positional heads


def verdicts(rows: dict[str, list[DisplayedRow]], study: Study) -> list[Verdict]:
    """The stop rule from study.yml, applied to each norm lens it names."""
    rule = study.stop_rule
    out = []
    for lens in rule.lenses:
        above = sum(r.sink_share > rule.threshold for r in rows[lens])
        out.append(Verdict(lens, rule.threshold, rule.max_rows_above, above, above <= rule.max_rows_above))
    return out


def anchors(corpus: Corpus, study: Study, rows: list[DisplayedRow]) -> list[AnchorRow]:
    """The recorded anchor rows, read off the alpha lens's displayed rows."""
    out = []
    for a in study.anchors:
        i = study.sentences.index(a.sentence)
        words = [w.lower() for w in corpus.toks[i].words]
        fw, tw = words.index(a.from_word.lower()), words.index(a.to_word.lower())
        row = next(r for r in rows if (r.sentence, r.word_index) == (i, fw))
        display, _ = instrument.displayed_rows(corpus.word_rows(i, "alpha")[row.layer, row.head], corpus.wms[i])
        out.append(AnchorRow(i, a.from_word, a.to_word, row.layer, row.head, float(display[fw, tw]), row.sink_share))
    return out


def measure_model(ckpt: Checkpoint, study: Study, key: str) -> Measured:
    corpus = read_corpus(ckpt, study)
    L = ckpt.config.n_layer
    rows, excluded = displayed_all(corpus, study.positional_threshold)
    flat = [r for lens in LENSES for r in rows[lens]]
    v = verdicts(rows, study)
    index = {text: i for i, text in enumerate(study.sentences)}
    results = ModelResults(
        model=ckpt.name,
        key=key,
        sha256=ckpt.sha256,
        source=ckpt.source,
        n_layers=L,
        n_heads=ckpt.config.n_head,
        n_sentences=len(corpus.toks),
        summary=stats.summaries(corpus, rows, excluded, L),
        per_layer=stats.per_layer(corpus, L),
        ratios=stats.value_ratios(corpus.acts, L),
        verdicts=v,
        adopted=any(x.adopted for x in v),
        anchors=anchors(corpus, study, rows["alpha"]),
        rollout=rollout_stats([a.alpha for a in corpus.acts], corpus.wms, [sr.shown for sr in corpus.rows]),
        flips=[flip_result(lens, list(study.flip_pairs), corpus, index) for lens in LENSES],
        rows=flat,
    )
    return Measured(results, corpus, rows, excluded)


def all_head_rows(corpus: Corpus) -> list[dict]:
    """The rule-free view for the CLI: one record per (sentence, word, layer, head)."""
    out = []
    for i, (tok, sr) in enumerate(zip(corpus.toks, corpus.rows)):
        L, nh, _ = sr.sink["alpha"].shape
        for w in sr.shown:
            for l in range(L):
                for h in range(nh):
                    out.append({
                        "sentence": i, "word_index": w, "word": tok.words[w], "layer": l, "head": h,
                        "sink_share": {lens: float(sr.sink[lens][l, h, w]) for lens in LENSES},
                    })
    return out
