"""Part 8 on the displayed rows: what [CLS] and [SEP] really do, and the later fixes.

Definitions are in docs/study.yml (`ground_truth`, `later_fixes`, and the amendments after
them); the arithmetic is `ground_truth.py` (the PyTorch reference) and
`oracle_ground_truth.py` (the oracle). This module asks them for the rows the instrument
displays and reduces what they return:

- the ablation ground truth, on the head each lens opens: the effect on the word of
  removing the sink's part of the head's output, the content's part, the whole head; the
  ablation sink share sink / (sink + content); a row is harmful when its sink effect is
  above the median head effect of the model's displayed rows (alpha; every sentence of the
  ablation's sample, both halves);
- the fixes (Kobayashi 2021, ALTI, value zeroing) as lenses: the word's row in the layer
  of the head the instrument opens under alpha, folded to words like alpha, its sink
  share with the word's own column in the denominator (registered) and among the other
  words (added), under the registered stop rule;
- which reading's sink share tracks the ablation sink share (Spearman) and ranks the
  harmful rows first (ROC AUC), on the held-out rows, beside two lazy scores that know only
  where the word is (its position, a first-word flag); and what the harmful rows are;
- the idle-head test: each head's bound on its effect on the word,
  sum_j alpha_wj ||f(x_j)||, over that word's median head's; the survivors of each norm
  lens against the other rows; and the effect-weighted head rule (chosen after seeing the
  reader's numbers, labelled so).

Every statistic of the articles is on the held-out half, with a bootstrap interval over
sentences; the verdicts read every displayed row (value zeroing: its sample's).
"""
from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from threadpoolctl import threadpool_limits

from livenumbers import timing

from . import instrument, picks
from .bootstrap import Estimate, Resampler, units
from .corpus import Corpus, Displayed, displayed
from .instrument import LENSES

FIXES = ("kobayashi2021", "alti", "value_zeroing")
FIX_LABELS = {"kobayashi2021": "ATB+RES+LN", "alti": "ALTI", "value_zeroing": "value zeroing"}
FIX_PAPERS = {"kobayashi2021": "Kobayashi 2021", "alti": "Ferrando 2022", "value_zeroing": "Mohebbi 2023"}
FIX_CITED = {fix: f"{label} ({FIX_PAPERS[fix]})" for fix, label in FIX_LABELS.items()}   # a table's row names
FIX_TITLES = {
    "kobayashi2021": "Kobayashi et al. 2021: the attention block with its residual and LayerNorm, all heads (the layer of α's head)",
    "alti": "ALTI, Ferrando et al. 2022: each token's part of the attention block's output, by L1 distance (the layer of α's head)",
    "value_zeroing": "value zeroing, Mohebbi et al. 2023: how far the word's layer output moves when a token's value vectors are zeroed (the layer of α's head)",
}
TRACKED = (*LENSES, *FIXES)   # the readings whose sink share is held to the ground truth
POSITION_BASELINES = ("position", "first_word")   # lazy scores scored as the readings are (added after review)
CHEAP = ("kobayashi2021", "alti")   # computed on every layer: the strongest-layer sensitivity


# -- the reference's layer inputs, kept on disk -------------------------------------------------

class LayerInputs:
    """Every sentence's layer inputs, [L, T, C] float64, in a temporary file (deleted on
    close): written during the reference's one pass (activations.from_reference), read
    back one sentence at a time. Kept in memory they would be a second copy of the
    corpus's activations (0.5 GB on all-mpnet-base-v2); recomputed, a second forward
    pass (more than a minute on it)."""

    def __init__(self):
        self.file = tempfile.TemporaryFile()
        self.where: dict[int, tuple[int, tuple[int, ...]]] = {}   # sentence -> (byte offset, shape)

    def write(self, sentence: int, layers: list[np.ndarray]) -> None:
        """layers: L x [T, C], written one after the other (no stacked copy)."""
        self.file.seek(0, 2)
        self.where[sentence] = (self.file.tell(), (len(layers), *layers[0].shape))
        for x in layers:
            self.file.write(np.ascontiguousarray(x, dtype=np.float64).tobytes())

    def read(self, sentence: int, layer: int | None = None) -> np.ndarray:
        """[L, T, C], or one layer's [T, C]."""
        offset, shape = self.where[sentence]
        if layer is not None:
            offset, shape = offset + 8 * layer * int(np.prod(shape[1:])), shape[1:]
        self.file.seek(offset)
        buf = bytearray(8 * int(np.prod(shape)))   # writable: torch.from_numpy warns on a read-only array
        self.file.readinto(buf)
        return np.frombuffer(buf, dtype=np.float64).reshape(shape)

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> "LayerInputs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- what each sentence is asked for ------------------------------------------------------------

def asks(corpus: Corpus, rows: dict[str, Displayed], ablation: set[int], zeroing: set[int],
         alt: dict[str, Displayed] | None = None) -> list:
    """Per sentence, a ground_truth.Ask: in the ablation sample, the (word, layer, head) of
    every lens's displayed row (each once), and of its alternative head (`alt`) where its
    margin is below picks.SEARCHED_BELOW (about 2 % of the rows on all-mpnet-base-v2's 144
    heads, fewer on the MiniLMs), so that a count over the ground truth knows whether a
    reader's rounding could turn it; in the value-zeroing sample, every word's alpha
    layer (and its alternative head's, likewise); every sentence, the fixes' matrices."""
    from .ground_truth import Ask

    out = []
    for i, tok in enumerate(corpus.toks):
        tokens = [[t for t, w in enumerate(tok.word_ids) if w == word] for word in range(len(tok.words))]
        heads: dict[tuple[int, int, int], None] = {}
        for lens in LENSES if i in ablation else ():
            d = rows[lens]
            m = d.sentence == i
            for w, l, h in zip(d.word[m], d.layer[m], d.head[m]):
                heads[(int(w), int(l), int(h))] = None
            if alt is not None:
                near = m & (d.margin < picks.SEARCHED_BELOW)
                for w, l, h in zip(alt[lens].word[near], alt[lens].layer[near], alt[lens].head[near]):
                    heads[(int(w), int(l), int(h))] = None
        a = rows["alpha"]
        m = a.sentence == i
        vz = {(int(w), int(l)): None for w, l in zip(a.word[m], a.layer[m])} if i in zeroing else {}
        if vz and alt is not None:   # and the layer of alpha's alternative head, where its pick is near a tie
            near = m & (a.margin < picks.SEARCHED_BELOW)
            vz |= {(int(w), int(l)): None for w, l in zip(alt["alpha"].word[near], alt["alpha"].layer[near])}
        out.append(Ask(tokens, list(heads), list(vz)))
    return out


@dataclass
class Folded:
    """One sentence's measures, reduced to what the rows and the pages read."""
    effects: dict[tuple[int, int, int], np.ndarray]   # (word, layer, head) -> [4]: sink, content, content without the word, head
    fixes: dict[str, np.ndarray]                       # kobayashi2021, alti -> [L, T, T] rows normalized
    fix_rows: dict[str, np.ndarray]                    # kobayashi2021, alti -> [L, n_words, K] word rows
    zeroing: dict[tuple[int, int], np.ndarray]         # (word, layer) -> its value-zeroing word row [K]


def _normalized(m: np.ndarray) -> np.ndarray:
    total = m.sum(axis=-1, keepdims=True)
    return m / np.where(total > 0, total, 1.0)


def fold(truth, ask, wm: instrument.WordMap) -> Folded:
    """A ground_truth.SentenceTruth -> `Folded`: token rows normalized to 1, then folded to
    words as the instrument folds alpha (mean of the word's rows, sum of its columns)."""
    raw = {"kobayashi2021": truth.kobayashi, "alti": truth.alti}
    fixes = {name: _normalized(m) for name, m in raw.items() if m is not None}
    return Folded(
        effects={key: e for key, e in zip(ask.heads, truth.effects)},
        fixes=fixes,
        fix_rows={name: instrument.word_rows(m, wm) for name, m in fixes.items()},
        zeroing={(w, l): (_normalized(z).mean(axis=0) @ wm.cols) for (w, l), z in zip(ask.zeroing, truth.zeroing)},
    )


def ablation_share(e: np.ndarray, content: int = 1) -> float:
    """effect(sink) / (effect(sink) + effect(content)); 0 when both are 0 (study.yml)."""
    total = e[0] + e[content]
    return float(e[0] / total) if total > 0 else 0.0


# -- the idle-head bound --------------------------------------------------------------------------

def bound_ratios(alpha: np.ndarray, output_norm: np.ndarray, wm: instrument.WordMap) -> np.ndarray:
    """[L, nh, n_words]: sum_j alpha_ij ||f_j|| (the mean over the word's tokens i), over
    the median of that bound over every head, for the same word."""
    bound = np.einsum("wt,lnt->lnw", wm.rows, np.einsum("lnij,lnj->lni", alpha, output_norm))
    L, nh, n = bound.shape
    return bound / np.median(bound.reshape(L * nh, n), axis=0)


# -- results --------------------------------------------------------------------------------------

@dataclass
class AblationStats:
    """The ground truth on the held-out rows, on the head one lens opens."""
    lens: str
    n_rows: int
    n_sentences: int                       # held-out sentences the rows come from
    median_share: float
    median_share_lo: float
    median_share_hi: float
    above_50: int
    above_50_share: float
    above_50_share_lo: float
    above_50_share_hi: float
    median_sink_effect: float
    median_content_effect: float
    median_head_effect: float
    median_head_effect_lo: float
    median_head_effect_hi: float
    harmful: int
    harmful_share: float
    harmful_share_lo: float
    harmful_share_hi: float
    registered_median_sink: float          # the same rows' registered sink share, for comparison
    median_share_without_word: float | None = None   # sensitivity: content without the word's own tokens (alpha)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class FixStats:
    """A later fix read as a lens on the row the instrument opened under alpha."""
    fix: str
    n_sentences: int        # the sentences it is measured on (value zeroing: a sample)
    n_rows: int             # held-out rows among them
    n_test_sentences: int   # the held-out sentences those rows come from
    median_sink: float
    median_sink_lo: float
    median_sink_hi: float
    median_sink_other: float          # added: among the other words (own column dropped)
    median_sink_other_lo: float
    median_sink_other_hi: float
    median_self: float                # the word's own column
    median_self_lo: float
    median_self_hi: float
    above_50_share: float
    above_50_share_lo: float
    above_50_share_hi: float
    above_50_other_share: float
    # The stop rule, as registered, on every displayed row measured (both halves):
    rows_above: int
    n_rows_all: int
    adopted: bool
    rows_above_other: int             # added: the sink share among the other words
    adopted_other: bool
    max_sink: float                   # the largest sink share of those rows (added after review)
    max_sink_other: float             # ... among the other words
    # The norm lens (its own head) on the same rows: its rows above half there (added after
    # the third sceptical reading: a sample can pass the rule by having no such row)
    norm_lens_rows_above: int = 0
    # Sensitivity (Kobayashi 2021 and ALTI only): the layer of the strongest displayed arrow
    strongest_median_sink: float | None = None
    strongest_rows_above: int | None = None
    strongest_adopted: bool | None = None
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class Tracking:
    lens: str                         # a reading, or a position baseline (POSITION_BASELINES)
    n_rows: int
    n_sentences: int                  # held-out sentences the rows come from
    n_harmful: int
    spearman: float
    spearman_lo: float
    spearman_hi: float
    auc: float
    auc_lo: float
    auc_hi: float
    # Paired with alpha on the same rows and resamples (added after the third sceptical
    # reading): alpha's own statistic there, and this reading's minus alpha's.
    alpha_spearman: float | None = None
    spearman_vs_alpha: float | None = None
    spearman_vs_alpha_lo: float | None = None
    spearman_vs_alpha_hi: float | None = None
    alpha_auc: float | None = None
    auc_vs_alpha: float | None = None
    auc_vs_alpha_lo: float | None = None
    auc_vs_alpha_hi: float | None = None
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class Yardstick:
    """The harmful count at another yardstick than the registered one (added after the third
    sceptical reading): a row of alpha's head is harmful when its sink effect is above it."""
    threshold: float
    harmful: int                      # held-out rows of the sample, alpha's head
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class IdleHeads:
    """Under one norm lens: do its surviving rows sit on heads that do little to their word?"""
    lens: str
    n_survivors: int                  # held-out rows above half on the head this lens opens
    median_ratio_survivors: float
    median_ratio_survivors_lo: float
    median_ratio_survivors_hi: float
    median_ratio_others: float
    median_ratio_others_lo: float
    median_ratio_others_hi: float
    median_effect_survivors: float    # the measured head effect on those rows
    median_effect_survivors_lo: float
    median_effect_survivors_hi: float
    median_effect_others: float
    median_effect_others_lo: float
    median_effect_others_hi: float
    idle: bool                        # study.yml's decision
    # What the measured effects rest on (added after review): the survivors in the ablation's
    # sample, their sentences, those whose head moves the word more than the harmful threshold,
    # those harmful themselves, and their median head effect over the threshold.
    n_survivors_measured: int
    n_survivor_sentences_measured: int
    survivors_above_threshold: int
    survivors_harmful: int
    survivors_effect_over_threshold: float
    # The effect-weighted rule (chosen after seeing the reader's numbers):
    weighted_rows_above: int
    weighted_n_rows: int
    weighted_adopted: bool
    weighted_median_sink: float
    weighted_median_sink_lo: float
    weighted_median_sink_hi: float
    weighted_above_50_share: float
    weighted_above_50_share_lo: float
    weighted_above_50_share_hi: float
    weighted_same_head_share: float   # rows on the head the registered rule opens
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class Agreement:
    """Reference against oracle, on the oracle's sentences (largest absolute difference)."""
    sentences: int
    ablation_sentences: int           # those in the ablation's sample: where ablation shares are compared
    zeroing_sentences: int
    max_abs_ablation_share: float
    max_abs_effect: float             # the effects themselves (cosine distances)
    max_abs_kobayashi2021: float      # normalized token rows
    max_abs_alti: float
    max_abs_value_zeroing: float
    max_abs_bound_ratio: float


@dataclass
class HarmfulRows:
    """What the harmful rows (held-out, alpha's head) are (added after review)."""
    n_rows: int
    first_word: int                           # ... that are their sentence's first word
    top_head: str | None                      # the head holding most of them ("L6H4"; ties: lowest layer, head)
    top_head_rows: int
    top_head_opened: int                      # every displayed row (both halves) the rule opens that head for
    top_head_opened_first_word: int           # ... that are first words
    top_head_opened_share: float = 0.0        # ... as a share of every displayed row (a near-tie row moves a count by one)
    top_head_opened_first_word_share: float = 0.0   # ... the share of those that are first words
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class GroundTruth:
    harmful_threshold: float                  # the median head effect, alpha rows, every sentence of the sample
    n_threshold_rows: int                     # the rows it is the median of (both halves of the sample)
    ablation_every: int                       # the ablation's sample: every n-th sentence
    n_ablation_sentences: int
    value_zeroing_every: int
    n_zeroing_sentences: int
    ablation: dict[str, AblationStats]
    fixes: dict[str, FixStats]
    tracking: dict[str, Tracking]
    idle: dict[str, IdleHeads]
    bound_effect_spearman: float              # the bound ratio against the measured head effect (alpha's head)
    bound_effect_spearman_lo: float
    bound_effect_spearman_hi: float
    harmful_rows: HarmfulRows | None = None
    yardsticks: dict[str, Yardstick] = field(default_factory=dict)   # harmful at other yardsticks
    agreement: Agreement | None = None        # reference against oracle (checks.py fills it in)


@dataclass
class TruthRun:
    """The reference's measures of one model, kept for the oracle's check and the views."""
    asks: list
    folded: list[Folded]
    ratios: list[np.ndarray]                  # per sentence, bound_ratios [L, nh, n_words]
    ablation: list[int]                       # the ablation sample
    zeroing: list[int]                        # the value-zeroing sample
    table: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)   # row_table
    results: GroundTruth | None = None


# -- running the reference ---------------------------------------------------------------------

def run_reference(ckpt, corpus: Corpus, rows: dict[str, Displayed], inputs, ablation: list[int],
                  zeroing: list[int], alt: dict[str, Displayed] | None = None) -> TruthRun:
    """The PyTorch reference on every sentence, its layer inputs read back from `inputs`."""
    from . import ground_truth as gt

    from . import cluster

    with timing.stage("ground truth"):
        L = ckpt.config.n_layer
        todo = asks(corpus, rows, set(ablation), set(zeroing), alt)
        runner = cluster.current()
        fn = _sentences
        if isinstance(runner, cluster.InProcess):   # one set of layers for the threads
            fn = functools.partial(_sentences, weights=[gt.layer_weights(ckpt, l) for l in range(L)])
        # Each sentence's measures depend on that sentence alone: batches of them, in corpus order.
        batches = ([(ckpt.name, inputs.read(i), corpus.acts[i].alpha, todo[i])
                    for i in range(at, min(at + SENTENCES_PER_TASK, len(todo)))]
                   for at in range(0, len(todo), SENTENCES_PER_TASK))
        n_batches = -(-len(todo) // SENTENCES_PER_TASK)
        out = [truth for part in timing.counted(runner.map(fn, batches), n_batches) for truth in part]
        folded = [fold(truth, ask, wm) for truth, ask, wm in zip(out, todo, corpus.wms)]
        ratios = [bound_ratios(a.alpha, a.output_norm, wm) for a, wm in zip(corpus.acts, corpus.wms)]
    return TruthRun(todo, folded, ratios, ablation, zeroing)


SENTENCES_PER_TASK = 16


def _sentences(batch: list[tuple], weights: list | None = None) -> list:
    """One task: each sentence's measures, every layer it needs (`weights`: the model's
    layers; on a worker, its own, built once)."""
    from . import cluster
    from . import ground_truth as gt

    out = []
    with cluster.one_thread():
        for name, x, alpha, ask in batch:
            weights = weights or cluster.layer_weights(name)
            L = len(weights)
            truth = gt.empty(ask, L, x.shape[1])
            for l in gt.layers_needed(ask, L):
                gt.layer(weights[l], l, x[l], alpha[l], ask, truth)
            out.append(truth)
    return out


# -- per displayed row ----------------------------------------------------------------------------

def row_table(corpus: Corpus, rows: dict[str, Displayed], t: TruthRun) -> dict[str, dict[str, np.ndarray]]:
    """Per lens (and per fix), the ground-truth columns of every displayed row, in the
    displayed rows' order (NaN where value zeroing was not measured)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for lens in LENSES:
        d = rows[lens]
        e = np.stack([t.folded[s].effects.get((int(w), int(l), int(h)), np.full(4, np.nan))
                      for s, w, l, h in zip(d.sentence, d.word, d.layer, d.head)])   # NaN: not in the sample
        out[lens] = {
            "sink_effect": e[:, 0], "content_effect": e[:, 1], "head_effect": e[:, 3],
            "ablation_share": np.array([ablation_share(x) if not np.isnan(x[0]) else np.nan for x in e]),
            "ablation_share_without_word": np.array([ablation_share(x, 2) if not np.isnan(x[0]) else np.nan for x in e]),
            "bound_ratio": np.array([t.ratios[s][l, h, w] for s, w, l, h in zip(d.sentence, d.word, d.layer, d.head)]),
        }
    a = rows["alpha"]
    for fix in FIXES:
        full = []
        for s, w, l in zip(a.sentence, a.word, a.layer):
            if fix in CHEAP:
                full.append(t.folded[s].fix_rows[fix][l, w])
            elif (int(w), int(l)) in t.folded[s].zeroing:   # measured on its sample only
                full.append(t.folded[s].zeroing[(int(w), int(l))])
            else:
                full.append(None)
        cols = {"layer": a.layer.astype(float), "sink_share": np.full(len(full), np.nan),
                "sink_share_other": np.full(len(full), np.nan), "self_share": np.full(len(full), np.nan)}
        for r, (row, w) in enumerate(zip(full, a.word)):
            if row is not None:
                sink, own = row[0] + row[-1], row[w + 1]
                cols["sink_share"][r], cols["self_share"][r] = sink, own
                cols["sink_share_other"][r] = sink / (1.0 - own) if own < 1 else 0.0
        if fix in CHEAP:   # sensitivity: the layer of the strongest displayed arrow
            strongest, sink, margin, alt_sink = [], [], [], []
            tops = {}
            share = lambda s, l, w: float(instrument.sink_share(t.folded[s].fix_rows[fix][l, w], corpus.wms[s]))
            for s, w in zip(a.sentence, a.word):
                if s not in tops:   # [L, n_words]: each layer's displayed row's largest weight
                    tops[s] = instrument.displayed_rows(t.folded[s].fix_rows[fix], corpus.wms[s])[0].max(axis=-1)
                l, m, other = (int(x[0]) if i != 1 else float(x[0])
                               for i, x in enumerate(picks.best_columns(tops[s][:, [w]])))   # first maximum: the lowest layer
                strongest.append(l)
                sink.append(share(s, l, w))
                margin.append(m)
                alt_sink.append(share(s, other, w))
            cols["strongest_layer"], cols["strongest_sink_share"] = np.array(strongest, float), np.array(sink)
            cols["strongest_margin"], cols["strongest_alt_sink_share"] = np.array(margin), np.array(alt_sink)
        out[fix] = cols
    return out


# -- statistics ------------------------------------------------------------------------------------

def position_scores(word: np.ndarray) -> dict[str, np.ndarray]:
    """The lazy scores of a row that know only where its word is (study.yml, added after the
    sceptical reading): the earlier the higher (minus the word index), and 1 for the
    sentence's first word, 0 for the others."""
    word = np.asarray(word)
    return {"position": -word.astype(float), "first_word": (word == 0).astype(float)}


def harmful_profile(word, layer, head, harmful, opened_word, opened_layer, opened_head) -> HarmfulRows:
    """What the harmful rows are: of the rows (word index, layer, head) that `harmful` flags,
    how many are first words, and the head that holds most of them (ties: the lowest layer,
    then head), with every row the rule opens that head for (opened_*: every displayed row)
    and how many of those are first words."""
    word, layer, head, harmful = (np.asarray(x) for x in (word, layer, head, harmful))
    if not harmful.any():
        return HarmfulRows(0, 0, None, 0, 0, 0)
    heads, counts = np.unique(np.stack([layer[harmful], head[harmful]], axis=1), axis=0, return_counts=True)
    l, h = heads[int(np.argmax(counts))]     # unique sorts by layer, then head: the first maximum is the lowest
    on = (np.asarray(opened_layer) == l) & (np.asarray(opened_head) == h)
    first = int((np.asarray(opened_word)[on] == 0).sum())
    return HarmfulRows(int(harmful.sum()), int((word[harmful] == 0).sum()), f"L{l}H{h}", int(counts.max()),
                       int(on.sum()), first, float(on.mean()), first / max(1, int(on.sum())))


def measured_survivors(survivors, head_effect, sink_effect, sentence, harmful_at: float) -> tuple[int, int, int, int, float]:
    """What the survivors' measured effects rest on. Over rows of the ablation's sample,
    `survivors` flagging the rows above the threshold under a norm lens (head and sink effect
    on that lens's head): how many, from how many sentences, how many with a head effect above
    `harmful_at`, how many harmful (sink effect above it), and their median head effect over
    `harmful_at` (NaN without any)."""
    survivors = np.asarray(survivors, bool)
    head_effect, sink_effect = np.asarray(head_effect)[survivors], np.asarray(sink_effect)[survivors]
    over = float(np.median(head_effect) / harmful_at) if survivors.any() else float("nan")
    return (int(survivors.sum()), len({int(x) for x in np.asarray(sentence)[survivors]}),
            int((head_effect > harmful_at).sum()), int((sink_effect > harmful_at).sum()), over)


def summarize(corpus: Corpus, rows: dict[str, Displayed], t: TruthRun, table: dict, test: list[int],
              resampler: Resampler, threshold: float, excluded: dict[str, np.ndarray], every: dict[str, int],
              tie_tolerance: float, alt_rows: dict[str, Displayed], alt_table: dict) -> GroundTruth:
    """The statistics of the held-out rows. What reads the ablation reads its sample's rows,
    resampled over the sample's own held-out sentences (value zeroing: its own sample's)."""
    from scipy import stats as sps   # here: importing it costs a warm build 0.6 s it never uses

    a = rows["alpha"]
    m = a.where(test)
    unit = units(a.sentence[m], test)
    sampled = ~np.isnan(table["alpha"]["head_effect"])                 # the ablation sample's rows
    ms = m & sampled
    u_s, rs_s = resampler.over(a.sentence[ms])
    harmful_at = float(np.median(table["alpha"]["head_effect"][sampled]))   # every sentence of the sample
    harmful = table["alpha"]["sink_effect"] > harmful_at
    # Other yardsticks for "harmful" (added after the third sceptical reading): the median head
    # effect of the heads the norm lens opens, and the lower quartile of alpha's heads'.
    yardsticks = {name: Yardstick(cut, int((table["alpha"]["sink_effect"][ms] > cut).sum()))
                  for name, cut in (("alpha_median", harmful_at),
                                    ("value_norm_median", float(np.median(table["value_norm"]["head_effect"][sampled]))),
                                    ("alpha_quartile", float(np.percentile(table["alpha"]["head_effect"][sampled], 25))))}
    n_sentences = lambda mask: len(set(a.sentence[mask].tolist()))

    ablation = {}
    for lens in LENSES:
        c = table[lens]
        share, headfx = c["ablation_share"][ms], c["head_effect"][ms]
        hurt = (c["sink_effect"] > harmful_at)[ms]
        ablation[lens] = AblationStats(
            lens=lens, n_rows=int(ms.sum()), n_sentences=n_sentences(ms),
            **rs_s.median_of(share, u_s).fields("median_share"),
            above_50=int((share > threshold).sum()), **rs_s.share_of(share > threshold, u_s).fields("above_50_share"),
            median_sink_effect=float(np.median(c["sink_effect"][ms])),
            median_content_effect=float(np.median(c["content_effect"][ms])),
            **rs_s.median_of(headfx, u_s).fields("median_head_effect"),
            harmful=int(hurt.sum()), **rs_s.share_of(hurt, u_s).fields("harmful_share"),
            registered_median_sink=float(np.median(rows[lens].sink[ms])),
            median_share_without_word=float(np.median(c["ablation_share_without_word"][ms])) if lens == "alpha" else None)

    fixes = {}
    for fix in FIXES:
        c = table[fix]
        have = ~np.isnan(c["sink_share"])
        mm = m & have
        # value zeroing: its own sample's held-out sentences, resampled by themselves
        u, rs = (units(a.sentence[mm], test), resampler) if fix in CHEAP else resampler.over(a.sentence[mm])
        sink, other = c["sink_share"][mm], c["sink_share_other"][mm]
        above, above_o = c["sink_share"][have] > threshold, c["sink_share_other"][have] > threshold
        fixes[fix] = FixStats(
            fix=fix, n_sentences=len({int(s) for s in a.sentence[have]}), n_rows=int(mm.sum()),
            n_test_sentences=n_sentences(mm), **rs.median_of(sink, u).fields("median_sink"),
            **rs.median_of(other, u).fields("median_sink_other"), **rs.median_of(c["self_share"][mm], u).fields("median_self"),
            **rs.share_of(sink > threshold, u).fields("above_50_share"),
            above_50_other_share=float(np.mean(other > threshold)),
            rows_above=int(above.sum()), n_rows_all=int(have.sum()), adopted=int(above.sum()) == 0,
            rows_above_other=int(above_o.sum()), adopted_other=int(above_o.sum()) == 0,
            max_sink=float(np.max(c["sink_share"][have])), max_sink_other=float(np.max(c["sink_share_other"][have])),
            norm_lens_rows_above=int((rows["value_norm"].sink[have] > threshold).sum()))
        if fix in CHEAP:
            f = fixes[fix]
            f.strongest_median_sink = float(np.median(c["strongest_sink_share"][m]))
            f.strongest_rows_above = int((c["strongest_sink_share"] > threshold).sum())
            f.strongest_adopted = f.strongest_rows_above == 0

    truth_share = table["alpha"]["ablation_share"]
    alpha_score = a.sink
    tracking = {}
    lazy = position_scores(a.word)
    for lens in (*TRACKED, *POSITION_BASELINES):
        if lens in LENSES:   # on alpha's head, read under the lens
            score = np.array([corpus.rows[s].sink[lens][l, h, w] for s, w, l, h in zip(a.sentence, a.word, a.layer, a.head)])
        elif lens in lazy:
            score = lazy[lens]
        else:
            score = table[lens]["sink_share"]
        mm = ms & ~np.isnan(score)
        u, rs = resampler.over(a.sentence[mm])
        x, y, flags = score[mm], truth_share[mm], harmful[mm]
        both = 0 < flags.sum() < flags.size
        auc = lambda v: float(sps.mannwhitneyu(v[flags], v[~flags]).statistic / (flags.sum() * (~flags).sum())) if both else np.nan
        rho, rho_draws = float(sps.spearmanr(x, y).statistic), rs.spearman_draws(x, y, u)
        auc_draws = rs.auc_draws(x, flags, u)
        tr = tracking[lens] = Tracking(
            lens=lens, n_rows=int(mm.sum()), n_sentences=n_sentences(mm), n_harmful=int(flags.sum()),
            **Estimate(rho, *rs.interval(rho_draws)).fields("spearman"),
            **Estimate(auc(x), *(rs.interval(auc_draws[~np.isnan(auc_draws)]) if both else (np.nan, np.nan))).fields("auc"))
        if lens != "alpha":   # alpha on the same rows, the same resamples
            ax = alpha_score[mm]
            tr.alpha_spearman, tr.alpha_auc = float(sps.spearmanr(ax, y).statistic), auc(ax)
            vs = rs.difference(rho, rho_draws, tr.alpha_spearman, rs.spearman_draws(ax, y, u))
            tr.spearman_vs_alpha, tr.spearman_vs_alpha_lo, tr.spearman_vs_alpha_hi = vs.value, vs.lo, vs.hi
            if both:
                vs = rs.difference(tr.auc, auc_draws, tr.alpha_auc, rs.auc_draws(ax, flags, u))
                tr.auc_vs_alpha, tr.auc_vs_alpha_lo, tr.auc_vs_alpha_hi = vs.value, vs.lo, vs.hi

    idle, weighted_rows = {}, {}
    for lens in LENSES[1:]:
        d, c = rows[lens], table[lens]
        surv, surv_s = d.sink[m] > threshold, d.sink[ms] > threshold
        ratio, effect = c["bound_ratio"][m], c["head_effect"][ms]
        ratio_surv, ratio_others = resampler.median_of(ratio[surv], unit[surv]), resampler.median_of(ratio[~surv], unit[~surv])
        # The effect-weighted rule (chosen after seeing the reader's numbers): the strongest
        # arrow, each head's score times its bound ratio for the word.
        weighted = weighted_rows[lens] = displayed(corpus, lens, excluded[lens], tie_tolerance, weights=t.ratios)
        wm_ = weighted.where(test)
        n_measured, n_measured_sentences, above_at, hurt, over = measured_survivors(
            surv_s, effect, c["sink_effect"][ms], a.sentence[ms], harmful_at)
        weighted_above = int((weighted.sink > threshold).sum())
        idle[lens] = IdleHeads(
            lens=lens, n_survivors=int(surv.sum()),
            **ratio_surv.fields("median_ratio_survivors"), **ratio_others.fields("median_ratio_others"),
            **rs_s.median_of(effect[surv_s], u_s[surv_s]).fields("median_effect_survivors"),
            **rs_s.median_of(effect[~surv_s], u_s[~surv_s]).fields("median_effect_others"),
            idle=bool(ratio_surv.value < 1 and ratio_surv.hi < ratio_others.lo),
            n_survivors_measured=n_measured, n_survivor_sentences_measured=n_measured_sentences,
            survivors_above_threshold=above_at, survivors_harmful=hurt, survivors_effect_over_threshold=over,
            weighted_rows_above=weighted_above, weighted_n_rows=len(weighted.sink), weighted_adopted=weighted_above == 0,
            **resampler.median_of(weighted.sink[wm_], unit).fields("weighted_median_sink"),
            **resampler.share_of(weighted.sink[wm_] > threshold, unit).fields("weighted_above_50_share"),
            weighted_same_head_share=float(np.mean((weighted.layer[wm_] == d.layer[m]) & (weighted.head[wm_] == d.head[m]))))

    bound, effect = table["alpha"]["bound_ratio"][ms], table["alpha"]["head_effect"][ms]
    lo, hi = rs_s.spearman(bound, effect, u_s)
    harmful_rows = harmful_profile(a.word[ms], a.layer[ms], a.head[ms], harmful[ms], a.word, a.layer, a.head)
    _margins(corpus, rows, alt_rows, table, alt_table, m, ms, threshold, harmful_at, ablation, fixes, tracking, idle,
             weighted_rows, harmful_rows, yardsticks)
    return GroundTruth(
        harmful_threshold=harmful_at, n_threshold_rows=int(sampled.sum()), ablation_every=every["ablation"],
        n_ablation_sentences=len(t.ablation),
        value_zeroing_every=every["zeroing"], n_zeroing_sentences=len(t.zeroing),
        ablation=ablation, fixes=fixes, tracking=tracking, idle=idle,
        bound_effect_spearman=float(sps.spearmanr(bound, effect).statistic),
        bound_effect_spearman_lo=lo, bound_effect_spearman_hi=hi,
        harmful_rows=harmful_rows, yardsticks=yardsticks,
    )


def _margins(corpus: Corpus, rows: dict[str, Displayed], alt_rows: dict[str, Displayed], table: dict, alt_table: dict,
             m: np.ndarray, ms: np.ndarray, threshold: float, harmful_at: float, ablation: dict, fixes: dict,
             tracking: dict, idle: dict, weighted_rows: dict, harmful_rows: "HarmfulRows", yardsticks: dict) -> None:
    """Every count above, with its margin (picks.py): the nearest row to its threshold, and
    the rows whose alternative head (`alt_rows`, measured where its margin is below
    picks.SEARCHED_BELOW; unmeasured alternatives count as turning) would count otherwise."""
    a = rows["alpha"]
    count = lambda values, alt, margin, cut: picks.count_margin(values, cut, alt, margin)
    # harmful: a row's sink effect above the median head effect, on the lens's head
    hurt_margin = lambda lens, sel: count(table[lens]["sink_effect"][sel], alt_table[lens]["sink_effect"][sel],
                                          rows[lens].margin[sel], harmful_at)
    for lens, st in ablation.items():
        n = st.n_rows
        st.margins = {**picks.family("above_50", count(table[lens]["ablation_share"][ms], alt_table[lens]["ablation_share"][ms],
                                                       rows[lens].margin[ms], threshold), n),
                      **picks.family("harmful", hurt_margin(lens, ms), n)}
    for fix, st in fixes.items():
        c, alt = table[fix], alt_table[fix]
        have = ~np.isnan(c["sink_share"])
        mm = m & have
        above = count(c["sink_share"][have], alt["sink_share"][have], a.margin[have], threshold)
        other = count(c["sink_share_other"][have], alt["sink_share_other"][have], a.margin[have], threshold)
        lens = rows["value_norm"]
        st.margins = {"rows_above": (above, 1.0), "adopted": (picks.verdict_margin(st.rows_above, 0, above), 1.0),
                      "norm_lens_rows_above": (count(lens.sink[have], alt_rows["value_norm"].sink[have], lens.margin[have],
                                                     threshold), 1.0),
                      "rows_above_other": (other, 1.0),
                      "adopted_other": (picks.verdict_margin(st.rows_above_other, 0, other), 1.0),
                      **{f"above_50_share{x}": (count(c["sink_share"][mm], alt["sink_share"][mm], a.margin[mm], threshold),
                                                1.0 / max(1, st.n_rows)) for x in ("", "_lo", "_hi")}}
        if "strongest_sink_share" in c:   # the strongest layer's own pick turns too
            strongest = count(c["strongest_sink_share"], c["strongest_alt_sink_share"], c["strongest_margin"], threshold)
            strongest = min(strongest, count(c["strongest_sink_share"], alt["strongest_sink_share"], a.margin, threshold))
            st.margins |= {"strongest_rows_above": (strongest, 1.0),
                           "strongest_adopted": (picks.verdict_margin(st.strongest_rows_above, 0, strongest), 1.0)}
    harmful_alpha = hurt_margin("alpha", ms)
    for st in yardsticks.values():
        st.margins = {"harmful": (count(table["alpha"]["sink_effect"][ms], alt_table["alpha"]["sink_effect"][ms],
                                        a.margin[ms], st.threshold), 1.0)}
    for lens, st in tracking.items():
        step = 1.0 / max(1, st.n_harmful)   # one harmful row more or less moves the AUC by up to this
        st.margins = {"n_harmful": (harmful_alpha, 1.0), "alpha_auc": (harmful_alpha, step),
                      **{f"auc{x}": (harmful_alpha, step) for x in ("", "_lo", "_hi", "_vs_alpha", "_vs_alpha_lo", "_vs_alpha_hi")}}
    for lens, st in idle.items():
        d, alt = rows[lens], alt_rows[lens]
        surv = count(d.sink[m], alt.sink[m], d.margin[m], threshold)
        surv_s = count(d.sink[ms], alt.sink[ms], d.margin[ms], threshold)
        on_survivors = min(surv_s, hurt_margin(lens, ms),
                           count(table[lens]["head_effect"][ms], alt_table[lens]["head_effect"][ms], d.margin[ms], harmful_at))
        w = weighted_rows[lens]
        weighted = count(w.sink, w.alternative(corpus, lens).sink, w.margin, threshold)
        # idle: the survivors' median bound ratio below 1, its interval below the others'. A
        # survivor turning moves that median and those bounds by about an order statistic of a
        # few hundred rows: it can turn the verdict only where one of them is within 5 % of its bar.
        slack = min(picks.threshold_margin([st.median_ratio_survivors], 1.0),
                    picks.comparison_margin([st.median_ratio_survivors_hi], [st.median_ratio_others_lo]))
        decided = min(surv if slack < 0.05 else picks.NO_MARGIN, slack)
        st.margins = {"n_survivors": (surv, 1.0), "idle": (decided, 1.0),
                      **{k: (surv_s, 1.0) for k in ("n_survivors_measured", "n_survivor_sentences_measured")},
                      **{k: (on_survivors, 1.0) for k in ("survivors_above_threshold", "survivors_harmful")},
                      "weighted_rows_above": (weighted, 1.0),
                      "weighted_adopted": (picks.verdict_margin(st.weighted_rows_above, 0, weighted), 1.0)}
    if harmful_rows.top_head is not None:
        flagged = a.margin[ms][(table["alpha"]["sink_effect"] > harmful_at)[ms]]
        on_harmful = min(harmful_alpha, float(flagged.min()) if flagged.size else picks.NO_MARGIN)
        l, h = (int(x) for x in harmful_rows.top_head[1:].split("H"))
        opened = picks.flips_margin((a.layer == l) & (a.head == h), (alt_rows["alpha"].layer == l) & (alt_rows["alpha"].head == h),
                                    a.margin)
        harmful_rows.margins = {**{k: (on_harmful, 1.0) for k in ("n_rows", "first_word", "top_head_rows")},
                                "top_head": (on_harmful, picks.NO_MARGIN),
                                **{k: (min(on_harmful, opened), 1.0) for k in ("top_head_opened", "top_head_opened_first_word")},
                                "top_head_opened_share": (min(on_harmful, opened), 1.0 / len(a.layer)),
                                "top_head_opened_first_word_share": (min(on_harmful, opened),
                                                                     1.0 / max(1, harmful_rows.top_head_opened))}


def no_nan(obj):
    """A dataclass's float fields with NaN (an empty subset's statistic) as None: results
    are published as JSON, which has no NaN."""
    for name, value in vars(obj).items():
        if isinstance(value, float) and np.isnan(value):
            setattr(obj, name, None)
        elif isinstance(value, dict):
            for v in value.values():
                if hasattr(v, "__dataclass_fields__"):
                    no_nan(v)
        elif hasattr(value, "__dataclass_fields__"):
            no_nan(value)
    return obj


def rows_json(table: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, list]]:
    """`row_table` as lists for the results (None where value zeroing was not measured)."""
    return {name: {k: [None if np.isnan(v) else float(v) for v in col] for k, col in cols.items()}
            for name, cols in table.items()}


def measure(ckpt, corpus: Corpus, rows: dict[str, Displayed], inputs, study, key: str, excluded: dict[str, np.ndarray],
            resampler: Resampler) -> TruthRun:
    """The reference over the corpus, and its statistics (`TruthRun.results`)."""
    ablation, zeroing = study.ablation_sample(key), study.zeroing_sample(key)
    alt = {lens: d.alternative(corpus, lens) for lens, d in rows.items()}
    t = run_reference(ckpt, corpus, rows, inputs, ablation, zeroing, alt)
    table = t.table = row_table(corpus, rows, t)
    t.results = no_nan(summarize(corpus, rows, t, table, study.halves["test"], resampler, study.stop_rule.threshold,
                                 excluded, {"ablation": study.ablation_every.get(key, 1),
                                            "zeroing": study.value_zeroing_every.get(key, 1)}, study.tie_tolerance,
                                 alt, row_table(corpus, alt, t)))
    return t


# -- the oracle's check --------------------------------------------------------------------------------

def oracle_check(ckpt, t: TruthRun, sentences: list[int], every: int = 1) -> tuple[Callable, Callable[[], Agreement]]:
    """(each, done): `each(k, o)` takes the k-th of `sentences`' oracle output (the hook of
    activations.from_oracle); the oracle's measures run on each of the oracle's batches as
    it ends, layer by layer (one layer's float64 weights at a time), on the arrays the batch
    holds anyway, on every `every`-th sentence of the corpus among them (study.yml
    `truth_oracle_every`); `done()` runs the last and compares everything with the reference."""
    from . import oracle
    from . import oracle_ground_truth as ogt
    from .ground_truth import empty, layers_needed

    L = ckpt.config.n_layer
    diffs = {k: 0.0 for k in ("share", "effect", "kobayashi2021", "alti", "value_zeroing", "ratio")}
    zeroed: list[int] = []
    ablated: list[int] = []   # the sentences where ablation shares were compared (the ablation's sample)
    checked: list[int] = []
    batch: list[tuple[int, Any]] = []

    def compare(i: int, o, truth) -> None:
        ask, ref = t.asks[i], t.folded[i]
        for e_ref, e in zip(ref.effects.values(), truth.effects):
            diffs["share"] = max(diffs["share"], abs(ablation_share(e_ref) - ablation_share(e)))
            diffs["effect"] = max(diffs["effect"], float(np.max(np.abs(e_ref - e))))
        for name, m in (("kobayashi2021", truth.kobayashi), ("alti", truth.alti)):
            diffs[name] = max(diffs[name], float(np.abs(_normalized(m) - ref.fixes[name]).max()))
        wm = instrument.word_map(_word_ids(ask))
        for (w, l), z in zip(ask.zeroing, truth.zeroing):
            diffs["value_zeroing"] = max(diffs["value_zeroing"],
                                         float(np.abs(_normalized(z).mean(axis=0) @ wm.cols - ref.zeroing[(w, l)]).max()))
        if ask.zeroing:
            zeroed.append(i)
        if ask.heads:
            ablated.append(i)
        ratio = bound_ratios(np.stack(o.alpha), np.stack(o.f_norm), wm)
        diffs["ratio"] = max(diffs["ratio"], float(np.abs(ratio - t.ratios[i]).max()))

    def flush() -> None:
        # One BLAS thread: small products, on a shared machine a second thread mostly waits
        # (the oracle's measures of a short corpus ran 50x slower with two).
        with timing.stage("ground truth"), threadpool_limits(limits=1, user_api="blas"):
            mine = [(i, o) for i, o in batch if i % every == 0]
            out = {i: empty(t.asks[i], L, o.alpha[0].shape[-1]) for i, o in mine}
            for l in range(L) if mine else ():
                w = ogt.layer_weights(ckpt, l)
                for i, o in mine:
                    if l in layers_needed(t.asks[i], L):
                        ogt.layer(w, l, o, t.asks[i], out[i])
            for i, o in mine:
                compare(i, o, out[i])
            checked.extend(i for i, _ in mine)
        batch.clear()

    def each(k: int, o) -> None:
        batch.append((sentences[k], o))
        if sum(len(o.hidden) for _, o in batch) >= oracle.BATCH_TOKENS:   # the oracle's own batch ends here
            flush()

    def done() -> Agreement:
        flush()
        return Agreement(len(checked), len(ablated), len(zeroed), diffs["share"], diffs["effect"], diffs["kobayashi2021"],
                         diffs["alti"], diffs["value_zeroing"], diffs["ratio"])

    return each, done


def _word_ids(ask) -> list[int | None]:
    """The sentence's word ids, from the ask's token lists ([CLS] and [SEP] at the ends)."""
    T = 2 + sum(len(t) for t in ask.tokens)
    ids: list[int | None] = [None] * T
    for w, toks in enumerate(ask.tokens):
        for t in toks:
            ids[t] = w
    return ids
