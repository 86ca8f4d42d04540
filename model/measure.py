"""The measurements: the instrument's rows under three lenses, summarized.

`measure_model` runs one model over the corpus and returns a `ModelResults` (plain
dataclasses, JSON-serializable). Definitions live in `instrument.py`; this module only
applies them to every sentence and counts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import activations, instrument, mutants
from .flip import FlipResult, flip_result
from .rollout import RolloutStats, rollout_stats
from .activations import Activations
from .instrument import LENSES
from .study import Study
from .tokenize import Tokenized, tokenize
from .weights import Checkpoint


# -- per-sentence word-level rows -------------------------------------------------------------

@dataclass
class SentenceRows:
    """One sentence, every head, every lens, at word level."""

    index: int
    tok: Tokenized
    wm: instrument.WordMap
    rows: dict[str, np.ndarray]   # lens -> [L, nh, n_words, K]
    shown: list[int]              # word ids that get a displayed row (not punctuation)


def lens_norms(acts: Activations) -> dict[str, np.ndarray]:
    """The per-token norm each lens weighs alpha by, [L, nh, T]."""
    return {
        "alpha": np.ones_like(acts.value_norm),
        "value_norm": acts.value_norm,
        "output_norm": acts.output_norm,
    }


def sentence_rows(index: int, tok: Tokenized, acts: Activations, norms=None) -> SentenceRows:
    wm = instrument.word_map(tok.word_ids)
    norms = norms or lens_norms(acts)
    rows = {
        lens: instrument.word_rows(instrument.lens_rows(acts.alpha, n), wm) for lens, n in norms.items()
    }
    shown = [w for w, word in enumerate(tok.words) if not instrument.is_punctuation(word)]
    return SentenceRows(index, tok, wm, rows, shown)


# -- results ----------------------------------------------------------------------------------

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


@dataclass
class Verdict:
    lens: str
    threshold: float
    max_rows_above: int
    rows_above: int
    adopted: bool


@dataclass
class Anchor:
    sentence: int
    from_word: str
    to_word: str
    layer: int
    head: int
    weight: float          # displayed (renormalized) weight, alpha lens
    sink_share: float


@dataclass
class SelfChecks:
    unit_norms_max_diff: float        # value_norm lens with every norm 1.0 vs alpha: must be 0.0
    unit_norms_identical: bool
    cls_zero_median_sink: float       # value_norm lens with ||v_CLS|| = 0
    cls_zero_moves: bool
    oracle_max_abs_alpha: float       # reference vs oracle, whole corpus
    oracle_max_abs_hidden: float
    oracle_max_abs_sink: float        # on the displayed rows' sink shares, every lens
    oracle_same_heads: bool


@dataclass
class SentenceView:
    """The instrument page's data file for one sentence: token-level alpha and norms for
    every head, and the rule's head per shown word (model/site/instrument_data.py)."""

    sentence: int
    data: dict


@dataclass
class ModelResults:
    model: str
    key: str
    sha256: str
    source: str
    n_layers: int
    n_heads: int
    n_sentences: int
    summary: dict[str, LensSummary]
    per_layer: list[LayerStats]
    ratios: list[RatioStats]
    verdicts: list[Verdict]
    adopted: bool
    anchors: list[Anchor]
    checks: SelfChecks | None
    rollout: RolloutStats
    flips: list[FlipResult]
    rows: list[DisplayedRow] = field(default_factory=list)
    views: list[SentenceView] = field(default_factory=list)
    mutant: dict = field(default_factory=dict)   # name -> a deliberately wrong variant's numbers (mutants.py)


# -- statistics -------------------------------------------------------------------------------

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


def positional_heads(sentences: list[SentenceRows], lens: str, threshold: float) -> np.ndarray:
    """[L, nh] True for heads the rule never opens (see instrument.py, head choice)."""
    adjacent = sum(instrument.adjacent_top(sr.rows[lens], sr.wm, sr.shown) for sr in sentences)
    return adjacent / sum(len(sr.shown) for sr in sentences) > threshold


def displayed(sr: SentenceRows, lens: str, excluded: np.ndarray) -> list[DisplayedRow]:
    rows = sr.rows[lens]
    heads = instrument.choose_heads(rows, sr.wm, excluded)
    sinks = instrument.sink_share(rows, sr.wm)                   # [L, nh, n_words]
    shown, mass = instrument.displayed_rows(rows, sr.wm)         # [L, nh, n_words, n_words]
    out = []
    for w in sr.shown:
        l, h = (int(x) for x in heads[w])
        top = int(np.argmax(shown[l, h, w]))
        out.append(
            DisplayedRow(
                sentence=sr.index,
                word_index=w,
                word=sr.tok.words[w],
                lens=lens,
                layer=l,
                head=h,
                sink_share=float(sinks[l, h, w]),
                sep_share=float(rows[l, h, w, sr.wm.n_words + 1]),
                content_mass=float(mass[l, h, w]),
                top_word=sr.tok.words[top],
                top_weight=float(shown[l, h, w, top]),
            )
        )
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


def displayed_all(sentences: list[SentenceRows], lens: str, threshold: float) -> tuple[list[DisplayedRow], np.ndarray]:
    """Every displayed row of the corpus under one lens, and the heads the rule excluded."""
    excluded = positional_heads(sentences, lens, threshold)
    return [r for sr in sentences for r in displayed(sr, lens, excluded)], excluded


def summarize(sentences: list[SentenceRows], n_layers: int, threshold: float) -> tuple[dict, list[LayerStats], list[DisplayedRow]]:
    shown = {lens: displayed_all(sentences, lens, threshold) for lens in LENSES}
    rows = {lens: shown[lens][0] for lens in LENSES}
    summary: dict[str, LensSummary] = {}
    alpha_sink = np.array([r.sink_share for r in rows["alpha"]])
    for lens in LENSES:
        sinks = np.array([r.sink_share for r in rows[lens]])
        where = [(r.sentence, r.word) for r in rows[lens]]
        all_heads = np.concatenate(
            [instrument.sink_share(sr.rows[lens], sr.wm)[:, :, sr.shown].ravel() for sr in sentences]
        )
        s = LensSummary(
            lens=lens,
            stats=sink_stats(sinks, where),
            layer_picks=[sum(r.layer == l for r in rows[lens]) for l in range(n_layers)],
            all_heads_median_sink=float(np.median(all_heads)),
            positional_heads=[[int(l), int(h)] for l, h in np.argwhere(shown[lens][1])],
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
        summary[lens] = s
    per_layer = []
    for l in range(n_layers):
        for lens in LENSES:
            sinks, where = [], []
            for sr in sentences:
                s = instrument.sink_share(sr.rows[lens][l], sr.wm)  # [nh, n_words]
                for w in sr.shown:
                    sinks.extend(s[:, w])
                    where.extend([(sr.index, sr.tok.words[w])] * s.shape[0])
            per_layer.append(LayerStats(l, lens, sink_stats(np.array(sinks), where)))
    flat = [r for lens in LENSES for r in rows[lens]]
    return summary, per_layer, flat


def verdicts(rows: list[DisplayedRow], study: Study) -> list[Verdict]:
    """The stop rule from study.yml, applied to each norm lens it names."""
    rule = study.stop_rule
    out = []
    for lens in rule.lenses:
        above = sum(r.sink_share > rule.threshold for r in rows if r.lens == lens)
        out.append(Verdict(lens, rule.threshold, rule.max_rows_above, above, above <= rule.max_rows_above))
    return out


def anchors(sentences: list[SentenceRows], study: Study, rows: list[DisplayedRow]) -> list[Anchor]:
    """The recorded anchor rows, read off the alpha lens's displayed rows."""
    out = []
    for a in study.anchors:
        sr = sentences[study.sentences.index(a.sentence)]
        words = [w.lower() for w in sr.tok.words]
        fw, tw = words.index(a.from_word.lower()), words.index(a.to_word.lower())
        row = next(r for r in rows if r.lens == "alpha" and (r.sentence, r.word_index) == (sr.index, fw))
        display, _ = instrument.displayed_rows(sr.rows["alpha"][row.layer, row.head], sr.wm)
        out.append(Anchor(sr.index, a.from_word, a.to_word, row.layer, row.head, float(display[fw, tw]), row.sink_share))
    return out


def all_head_rows(sentences: list[SentenceRows]) -> list[dict]:
    """The rule-free view: one record per (sentence, word, layer, head), sink under each lens."""
    out = []
    for sr in sentences:
        sinks = {lens: instrument.sink_share(sr.rows[lens], sr.wm) for lens in LENSES}  # [L, nh, n_words]
        L, nh, _ = sinks["alpha"].shape
        for w in sr.shown:
            for l in range(L):
                for h in range(nh):
                    out.append({
                        "sentence": sr.index,
                        "word_index": w,
                        "word": sr.tok.words[w],
                        "layer": l,
                        "head": h,
                        "sink_share": {lens: float(sinks[lens][l, h, w]) for lens in LENSES},
                    })
    return out


# -- one model, end to end --------------------------------------------------------------------

def tokenize_corpus(ckpt: Checkpoint, sentences: list[str], where: str) -> list[Tokenized]:
    return [
        tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position, where=f"{where}:{i + 1}")
        for i, s in enumerate(sentences)
    ]


def corpus_rows(ckpt: Checkpoint, study: Study) -> tuple[list[Tokenized], list[Activations], list[SentenceRows]]:
    """Tokenize the corpus, run the reference once over it, fold every head to words."""
    toks = tokenize_corpus(ckpt, list(study.sentences), str(study.corpus_path))
    acts = activations.reference(ckpt, [t.ids for t in toks])
    return toks, acts, [sentence_rows(i, t, a) for i, (t, a) in enumerate(zip(toks, acts))]


def measure_model(ckpt: Checkpoint, study: Study, key: str, checks: bool = True) -> ModelResults:
    toks, acts, sentences = corpus_rows(ckpt, study)
    L = ckpt.config.n_layer
    summary, per_layer, rows = summarize(sentences, L, study.positional_threshold)
    v = verdicts(rows, study)
    index = {text: i for i, text in enumerate(study.sentences)}
    return ModelResults(
        model=ckpt.name,
        key=key,
        sha256=ckpt.sha256,
        source=ckpt.source,
        n_layers=L,
        n_heads=ckpt.config.n_head,
        n_sentences=len(toks),
        summary=summary,
        per_layer=per_layer,
        ratios=value_ratios(acts, L),
        verdicts=v,
        adopted=any(x.adopted for x in v),
        anchors=anchors(sentences, study, rows),
        checks=self_checks(ckpt, toks, acts, sentences, rows, study.positional_threshold) if checks else None,
        rollout=rollout_stats([a.alpha for a in acts], [sr.wm for sr in sentences], [sr.shown for sr in sentences]),
        flips=[flip_result(lens, list(study.flip_pairs), sentences, index) for lens in LENSES],
        rows=rows,
        views=[view(sr, a, rows) for sr, a in zip(sentences, acts)],
        mutant={"wrong_agg": mutants.wrong_aggregation(sentences, [a.alpha for a in acts], rows)},
    )


def view(sr: SentenceRows, acts: Activations, rows: list[DisplayedRow]) -> SentenceView:
    """One sentence for the instrument page: the page folds the token-level data itself."""
    from .site.instrument_data import sentence_record

    mine = [r for r in rows if r.sentence == sr.index]
    chosen = {lens: [[r.layer, r.head] for r in mine if r.lens == lens] for lens in LENSES}
    return SentenceView(sr.index, sentence_record(sr.index, sr.tok, acts, chosen))


def self_checks(ckpt, toks, acts, sentences, rows, threshold) -> SelfChecks:
    """Checks that the measurement measures what it says, computed on the corpus."""
    # 1. Every value norm forced to 1.0: the value_norm lens must be alpha, bit for bit.
    unit = [
        sentence_rows(sr.index, sr.tok, a, {"value_norm": np.ones_like(a.value_norm)})
        for sr, a in zip(sentences, acts)
    ]
    unit_diff = max(float(np.abs(u.rows["value_norm"] - sr.rows["alpha"]).max()) for u, sr in zip(unit, sentences))
    # 2. [CLS]'s value norm forced to 0: the numbers must move.
    def zero_cls(a):
        n = a.value_norm.copy()
        n[:, :, 0] = 0.0
        return {"value_norm": n}

    zeroed = [sentence_rows(sr.index, sr.tok, a, zero_cls(a)) for sr, a in zip(sentences, acts)]
    zero_sinks = np.array([r.sink_share for r in displayed_all(zeroed, "value_norm", threshold)[0]])
    alpha_median = float(np.median([r.sink_share for r in rows if r.lens == "alpha"]))
    value_median = float(np.median([r.sink_share for r in rows if r.lens == "value_norm"]))
    zero_median = float(np.median(zero_sinks))
    # 3. The oracle re-runs everything from its own forward pass.
    o_acts = activations.oracle(ckpt, [t.ids for t in toks])
    o_sentences = [sentence_rows(i, t, a) for i, (t, a) in enumerate(zip(toks, o_acts))]
    o_rows = [r for lens in LENSES for r in displayed_all(o_sentences, lens, threshold)[0]]
    o_rows.sort(key=lambda r: (LENSES.index(r.lens), r.sentence, r.word_index))
    ref_rows = sorted(rows, key=lambda r: (LENSES.index(r.lens), r.sentence, r.word_index))
    return SelfChecks(
        unit_norms_max_diff=unit_diff,
        unit_norms_identical=unit_diff == 0.0,
        cls_zero_median_sink=zero_median,
        cls_zero_moves=zero_median not in (alpha_median, value_median),
        oracle_max_abs_alpha=max(float(np.abs(a.alpha - o.alpha).max()) for a, o in zip(acts, o_acts)),
        oracle_max_abs_hidden=max(float(np.abs(a.hidden - o.hidden).max()) for a, o in zip(acts, o_acts)),
        oracle_max_abs_sink=max(abs(a.sink_share - b.sink_share) for a, b in zip(ref_rows, o_rows)),
        oracle_same_heads=all((a.layer, a.head) == (b.layer, b.head) for a, b in zip(ref_rows, o_rows)),
    )
