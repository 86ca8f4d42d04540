"""The measurements: one model over the corpus, the instrument's rows under three lenses.

`measure_model` reads the corpus (corpus.py: the reference once over it, every sentence
reduced to its `SentenceRows`), fits the head rule's positional heads on one half of the
corpus, opens a head for every word of every sentence, and summarizes the rows of the
other half (stats/), each headline figure with its bootstrap interval. The result is
a `Measured`: a `ModelResults` of plain dataclasses (JSON-ready) and the corpus it was
computed from, which the self-checks (checks.py) and the instrument's per-sentence data
(views.py) read in turn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import calibration, flip, instrument, picks, rollout, sensitivity, stats, truth
from .bootstrap import Resampler
from .corpus import Corpus, Displayed, displayed, on_heads, positional_heads, positional_margin, read_corpus
from .instrument import LENSES
from .study import Study
from .weights import Checkpoint


def predicted_sink(corpus: Corpus, rows: Displayed, norm: str, ratio: float | None = None) -> np.ndarray:
    """Each row's sink share under a norm lens as predicted from alpha and its head's own
    norm ratios alone, on the head the row is on: with rho = ||n_special|| / mean
    ||n_content|| for the row's sentence and head, and a_cls, a_sep alpha's shares,
        (a_cls rho_cls + a_sep rho_sep) / (a_cls rho_cls + a_sep rho_sep + (1 - a_cls - a_sep)).
    Exact if the content tokens' norms were all equal; how close it comes to the lens's
    own share is the test of the explanation the norm-lens article gives. With `ratio`,
    one discount for every head and both tokens instead (the control: if the heads' own
    ratios did not matter, this would predict as well)."""
    out = np.empty(len(rows.sentence))
    for r, (s, w, l, h) in enumerate(zip(rows.sentence, rows.word, rows.layer, rows.head)):
        n = getattr(corpus.acts[s], norm)[l, h]                      # [T]
        sink, sep = corpus.rows[s].sink["alpha"][l, h, w], corpus.rows[s].sep["alpha"][l, h, w]
        weighted = ((sink - sep) * n[0] + sep * n[-1]) / n[1:-1].mean() if ratio is None else sink * ratio
        out[r] = weighted / (weighted + 1.0 - sink)
    return out


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
    margin: float = picks.NO_MARGIN   # the head choice's (model/picks.py)


@dataclass
class Example:
    """One real row, whole, for a figure: chosen by a rule, not by hand."""

    name: str                      # "typical": the held-out alpha row nearest the median sink share;
                                   # "survivor": the held-out row with the most sink under ||alpha v||
    sentence: int
    word_index: int
    word: str
    layer: int
    head: int
    columns: list[str]             # [CLS], the sentence's words, [SEP]
    full: dict[str, list[float]]   # lens -> the full word row on this head
    sink_alpha: float              # its sink share under alpha, and under ||alpha v||, on this head
    sink_value_norm: float
    top_alpha: float               # the displayed row's largest weight under alpha, and under ||alpha v||
    top_value_norm: float
    rollout: list[float]           # the word's attention-rollout row (all heads, all layers)
    margin: float = picks.NO_MARGIN  # how near another row came to being chosen (model/picks.py)


def _top(full: np.ndarray, w: int) -> float:
    """A full word row [K] -> the largest weight of the row as displayed."""
    content = full[1:-1].copy()
    content[w] = 0.0
    return float(content.max() / content.sum())


def example_picks(rows: dict[str, Displayed], sentences: list[int], tie_tolerance: float) -> dict[str, tuple[int, float]]:
    """name -> (row, margin): "typical", the held-out alpha row whose sink share is nearest
    the median, "survivor", the held-out row with the most sink under ||alpha v||; rows
    within `tie_tolerance` of the best tie, and the first in corpus order is taken. The
    margin is the pick's, or the row's own head choice's if smaller."""
    out = {}
    for name, lens in (("typical", "alpha"), ("survivor", "value_norm")):
        d = rows[lens]
        idx = np.flatnonzero(d.where(sentences))
        sink = d.sink[idx]
        if name == "typical":   # distances to the median, measured against the size of the shares
            median = float(np.median(sink))
            pick = picks.least(np.abs(sink - median), tie_tolerance, scale=abs(median) or 1.0)
        else:
            pick = picks.best(sink, tie_tolerance)
        r = int(idx[pick.index])
        out[name] = (r, min(pick.margin, float(d.margin[r])))
    return out


def examples(corpus: Corpus, rows: dict[str, Displayed], sentences: list[int], tie_tolerance: float) -> list[Example]:
    from .rollout import rollout as rollout_of

    out = []
    for name, (r, margin) in example_picks(rows, sentences, tie_tolerance).items():
        d = rows["alpha" if name == "typical" else "value_norm"]
        s, w, l, h = (int(x) for x in (d.sentence[r], d.word[r], d.layer[r], d.head[r]))
        tok = corpus.toks[s]
        full = {k: corpus.word_rows(s, k)[l, h, w] for k in LENSES}
        out.append(Example(
            name=name, sentence=s, word_index=w, word=tok.words[w], layer=l, head=h,
            columns=["[CLS]", *tok.words, "[SEP]"],
            full={k: v.tolist() for k, v in full.items()},
            sink_alpha=float(full["alpha"][0] + full["alpha"][-1]),
            sink_value_norm=float(full["value_norm"][0] + full["value_norm"][-1]),
            top_alpha=_top(full["alpha"], w),
            top_value_norm=_top(full["value_norm"], w),
            rollout=instrument.word_rows(rollout_of(corpus.acts[s].alpha), corpus.wms[s])[w].tolist(),
            margin=margin,
        ))
    return out


@dataclass
class Verdict:
    lens: str
    threshold: float
    max_rows_above: int
    rows_above: int        # over every displayed row the instrument shows (both halves)
    n_rows: int
    adopted: bool
    margin: float = picks.NO_MARGIN   # the nearest row to turning the count (model/picks.py)


@dataclass
class ModelResults:
    model: str
    key: str
    checkpoint: str                                    # the published checkpoint's name
    package: str                                       # the package the weights came from ("" for a folder)
    d_model: int
    sha256: str
    source: str
    n_layers: int
    n_heads: int
    n_sentences: int
    tokens_per_word: float                             # the tokenizer's tokens per word, over the corpus
    halves: dict[str, list[int]]                       # "fit", "test" -> sentence indices
    positional_heads: dict[str, list[list[int]]]       # lens -> [layer, head] pairs never opened
    positional_heads_held_out: dict[str, list[list[int]]]  # the same, fitted on the held-out half instead
    summary: dict[str, stats.LensSummary]              # lens -> the held-out half's headline
    by_half: dict[str, dict[str, stats.SinkStats]]     # "fit"/"test"/"all" -> lens -> stats
    per_layer: list[stats.LayerStats]                  # rule-free, held-out half
    ratios: list[stats.RatioStats]                     # held-out half
    head_ratios: dict[str, list[list[float]]]          # "cls_v", ... -> [L][nh] median over held-out sentences
    near_ties: dict[str, stats.NearTies]               # lens -> rows whose head the tie rule decides
    sensitivity: list[sensitivity.Variant]             # the headline numbers under each alternative choice
    verdicts: list[Verdict]
    adopted: bool
    anchors: list[AnchorRow]
    rollout: rollout.RolloutStats
    flips: flip.FlipResults
    ground_truth: truth.GroundTruth | None = None       # part 8: the ablation ground truth and the later fixes
    calibration: dict | None = None                    # part 9: every reading's badge against the truths (calibration/)
    examples: list[Example] = field(default_factory=list)
    rows: dict[str, Any] = field(default_factory=dict)  # columnar: every displayed row (rows_table)
    # Filled in by checks.py, which reads a `Measured` (so this module never imports it):
    checks: Any = None                          # checks.SelfChecks
    mutant: dict = field(default_factory=dict)  # name -> a deliberately wrong variant's run
    # How near the picks that are not a field's own came to turning (model/picks.py): "*", a
    # margin every number of the model shares (the positional heads, fitted once); key -> (margin, step)
    margins: dict = field(default_factory=dict)
    # What the measurement costs per sentence, and 10^6 sentences on paper (scale_figures)
    scale: dict = field(default_factory=dict)


@dataclass
class Measured:
    """One model, measured: the results the pages read, and what they came from."""

    results: ModelResults
    corpus: Corpus
    rows: dict[str, Displayed]           # lens -> displayed rows
    excluded: dict[str, np.ndarray]      # lens -> positional heads
    truth: truth.TruthRun | None = None  # the ground truth's per-sentence measures (views, oracle check)


def verdicts(rows: dict[str, Displayed], alt: dict[str, Displayed], study: Study) -> list[Verdict]:
    """The stop rule from study.yml, applied as written to every row the instrument
    displays, under each norm lens it names (`alt`: the rows on their alternative heads)."""
    rule = study.stop_rule
    out = []
    for lens in rule.lenses:
        d = rows[lens]
        above = int((d.sink > rule.threshold).sum())
        out.append(Verdict(lens, rule.threshold, rule.max_rows_above, above, len(d.sink), above <= rule.max_rows_above,
                           picks.count_margin(d.sink, rule.threshold, alt[lens].sink, d.margin)))
    return out


def anchors(corpus: Corpus, study: Study, rows: Displayed) -> list[AnchorRow]:
    """The recorded anchor rows, read off the alpha lens's displayed rows."""
    out = []
    for a in study.anchors:
        i = study.sentences.index(a.sentence)
        words = [w.lower() for w in corpus.toks[i].words]
        fw, tw = words.index(a.from_word.lower()), words.index(a.to_word.lower())
        r = int(np.flatnonzero((rows.sentence == i) & (rows.word == fw))[0])
        l, h = int(rows.layer[r]), int(rows.head[r])
        display, _ = instrument.displayed_rows(corpus.word_rows(i, "alpha")[l, h], corpus.wms[i])
        out.append(AnchorRow(i, a.from_word, a.to_word, l, h, float(display[fw, tw]), float(rows.sink[r]),
                             float(rows.margin[r])))
    return out


def rows_table(corpus: Corpus, rows: dict[str, Displayed], same_head: dict, predicted: dict) -> dict:
    """Every displayed row, columnar (one list per field), for the results."""
    a = rows["alpha"]
    words = [corpus.toks[s].words for s in range(len(corpus.toks))]
    out: dict[str, Any] = {
        "sentence": a.sentence.tolist(),
        "word_index": a.word.tolist(),
        "word": [words[s][w] for s, w in zip(a.sentence, a.word)],
    }
    for lens, d in rows.items():
        out[lens] = {
            "layer": d.layer.tolist(), "head": d.head.tolist(),
            "sink_share": d.sink.tolist(), "sep_share": d.sep.tolist(), "punct_share": d.punct.tolist(),
            "content_mass": d.mass.tolist(), "top_weight": d.top_weight.tolist(),
            "top_word": [words[s][t] for s, t in zip(d.sentence, d.top_word)],
            # how near the head choice and the top word came to turning (model/picks.py)
            "head_margin": d.margin.tolist(), "top_margin": d.top_margin.tolist(),
        }
        if lens != "alpha":
            out[lens]["alpha_head_sink"] = same_head[lens].tolist()
            out[lens]["predicted_sink"] = predicted[lens].tolist()
    return out


def measure_model(ckpt: Checkpoint, study: Study, key: str) -> Measured:
    spec = next((m for m in study.models if m.key == key), None)
    with truth.LayerInputs() as inputs:   # on disk until the head rule has chosen the rows
        corpus = read_corpus(ckpt, study, inputs)
        return _measure(ckpt, study, key, spec, corpus, inputs)


def _measure(ckpt: Checkpoint, study: Study, key: str, spec, corpus: Corpus, inputs) -> Measured:
    from .weights import package_label

    L = ckpt.config.n_layer
    halves = study.halves
    excluded = {lens: positional_heads(corpus, lens, study.positional_threshold, halves["fit"]) for lens in LENSES}
    rows = {lens: displayed(corpus, lens, excluded[lens], study.tie_tolerance) for lens in LENSES}
    median_cls = {lens: float(np.median([stats.ratio_of(corpus.acts[i], lens, "cls") for i in halves["test"]]))
                  for lens in LENSES[1:]}
    world = _world(corpus, rows, median_cls)
    # Every row on the head the rule would open if its nearest near-tie went the other way:
    # what is counted on both tells which counts a reader's rounding could turn (picks.py).
    alt = _world(corpus, {lens: d.alternative(corpus, lens) for lens, d in rows.items()}, median_cls)
    same_head, predicted = world.same_head, world.predicted
    tie = study.picks.tie_tolerance
    b = study.bootstrap
    test = halves["test"]
    sets = {**halves, "all": list(range(len(corpus.toks)))}
    resampler = {half: Resampler(len(idx), b.resamples, b.seed, b.level) for half, idx in halves.items()}
    v = verdicts(rows, alt.rows, study)
    # Part 8 reruns layers from the reference's own layer inputs; a corpus that did not come
    # from the reference's pass (a test's hand-made one) has none, and no ground truth.
    t = truth.measure(ckpt, corpus, rows, inputs, study, key, excluded, resampler["test"]) if inputs.where else None
    results = ModelResults(
        model=ckpt.name,
        key=key,
        checkpoint=spec.checkpoint if spec else ckpt.name,
        package=package_label(ckpt.name),
        d_model=ckpt.config.d_model,
        sha256=ckpt.sha256,
        source=ckpt.source,
        n_layers=L,
        n_heads=ckpt.config.n_head,
        n_sentences=len(corpus.toks),
        tokens_per_word=float(sum(t.n_tokens - 2 for t in corpus.toks) / sum(len(t.words) for t in corpus.toks)),
        halves=halves,
        positional_heads={lens: np.argwhere(excluded[lens]).tolist() for lens in LENSES},
        positional_heads_held_out={lens: np.argwhere(positional_heads(corpus, lens, study.positional_threshold, test)).tolist()
                                   for lens in LENSES},
        summary=stats.summaries(corpus, world, alt, test, resampler["test"], L, tie),
        by_half={half: {lens: stats.sink_stats(corpus, rows[lens], alt.rows[lens], idx, resampler.get(half), tie)
                        for lens in LENSES} for half, idx in sets.items()},
        per_layer=stats.per_layer(corpus, L, test, tie),
        ratios=stats.value_ratios(corpus.acts, L, test, resampler["test"]) + stats.punct_ratios(corpus, test, resampler["test"]),
        head_ratios=stats.head_ratios(corpus.acts, test),
        near_ties={lens: stats.near_ties(rows[lens], study.tie_tolerance) for lens in LENSES},
        sensitivity=sensitivity.variants(corpus, rows, excluded, study, ckpt.config.n_head),
        verdicts=v,
        adopted=any(x.adopted for x in v),
        anchors=anchors(corpus, study, rows["alpha"]),
        rollout=rollout.rollout_stats(corpus, rows["alpha"], test, resampler["test"]),
        flips=flip.measure_pairs(ckpt, list(study.flip_pairs), b, study.flip_heads, list(study.null_pairs)),
        examples=examples(corpus, rows, test, tie),
        rows=rows_table(corpus, rows, same_head, predicted),
        ground_truth=t.results if t else None,
        calibration=(calibration.run(ckpt, study, key, corpus, rows, world.same_head, t, inputs, excluded, resampler["test"])
                     if t and study.calibration else None),
        margins={"*": (min(positional_margin(corpus, lens, study.positional_threshold, halves["fit"]) for lens in LENSES),
                       picks.NO_MARGIN),
                 **{f"{lens}.{name}": (positional_margin(corpus, lens, study.positional_threshold, test), 1.0)
                    for lens in LENSES for name in ("n_positional_held_out", "positional_same_either_half")}},
    )
    for name, cols in truth.rows_json(t.table if t else {}).items():   # the ground truth beside each row
        results.rows.setdefault(name, {}).update(cols)
    results.scale = scale_figures(ckpt.config, corpus.toks, len(rows["alpha"].sentence), _columns(results.rows))
    return Measured(results, corpus, rows, excluded, t)


def scale_figures(config, toks: list, n_rows: int, n_columns: int) -> dict:
    """Per sentence of the corpus (its mean): tokens, the attention a pass produces (float64
    [L, nh, T, T]), the forward pass's operations, the displayed rows; and what 10^6 such
    sentences would come to: their attention, their operations, and the rows the statistics
    read (`n_columns` numbers of 8 bytes each, as results.json's rows table holds them)."""
    T = np.array([t.n_tokens for t in toks], dtype=np.int64)
    attention = 8.0 * config.n_layer * config.n_head * float((T ** 2).sum()) / len(T)     # bytes
    flops = sum(config.forward_flops(int(t)) for t in T) / len(T)
    rows = n_rows / len(T)
    return {"tokens": float(T.mean()), "attention_mb": attention / 1e6, "gflop": flops / 1e9, "rows": rows,
            "row_columns": n_columns,
            "million": {"attention_tb": attention * 1e6 / 1e12, "pflop": flops * 1e6 / 1e15,
                        "rows_gb": rows * 1e6 * n_columns * 8 / 1e9}}


def _columns(table: dict) -> int:
    """The rows table's columns (its arrays, at any depth)."""
    return sum(_columns(v) if isinstance(v, dict) else 1 for v in table.values())


def _world(corpus: Corpus, rows: dict[str, Displayed], median_cls: dict[str, float]) -> stats.World:
    """What the summaries read off a set of displayed rows (`stats.World`)."""
    return stats.World(rows, {lens: on_heads(corpus, lens, rows["alpha"]) for lens in LENSES[1:]},
                       {lens: predicted_sink(corpus, rows[lens], lens) for lens in LENSES[1:]},
                       {lens: predicted_sink(corpus, rows[lens], lens, median_cls[lens]) for lens in LENSES[1:]})


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
