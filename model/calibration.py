"""Part 9: the instrument's badge held to what the sink does (docs/study.yml `calibration`).

Per displayed row (a word w, and the head (l, h) a reading opens for it), the interventions
of ground_truth.intervened at w's tokens (the sink's part of the head's output taken out, the
content's, the whole head's, and the sink redistributed over the content), measured on a
linear scale (the size of the change, not a squared distance):

- the layer truth: ||y - y'|| / ||y|| of w's layer-l output, every sentence;
- the word truth: ||z - z'|| / ||z|| of w's final-layer representation (its tokens' mean),
  the change run through every later layer; and the sentence truth: ||e - e'|| of the
  sentence embedding (the L2-normalized mean of the last hidden states); on alpha's head
  (the head the instrument opens), every n-th sentence (`downstream_every`).

A truth's sink share is the sink's effect over the sink's and the content's. The readings are
the sink shares the instrument could show (`readings`); each is scored against each truth by
the precision and recall of its above-half badge and by rank agreement, with bootstrap
intervals over sentences, on the held-out half and on the confirmation corpus; a reading is fit
to drive the badge on a model if both lower bounds clear the registered bar on both (`verdict`).

The truths run in float64, layer by layer, every row of a sentence and layer in one batch; the
downstream runs go through the reference's own layers (Encoder.continue_from), never the layers
before the head's: per sentence and layer, one baseline copy and one copy per row and
intervention (the row's tokens changed), all in one batch.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from livenumbers import timing

from . import ground_truth as gt
from . import picks
from .bootstrap import NONE, Estimate, Resampler
from .corpus import Corpus, Displayed, on_heads
from .instrument import LENSES

TRUTHS = ("layer", "word", "sentence")
DOWNSTREAM = ("word", "sentence")   # measured on alpha's head only
# The readings held to alpha's head's truth (the others open heads of their own)
ON_ALPHAS_HEAD = ("alpha", "value_norm_on_alpha", "output_norm_on_alpha", "kobayashi2021", "alti", "value_zeroing")
STATS = ("precision", "recall", "spearman")


def share(effects: np.ndarray) -> float:
    """[4] effects (ground_truth's intervention order) -> the sink's share of sink + content."""
    total = effects[gt.SINK_OUT] + effects[gt.CONTENT_OUT]
    return float(effects[gt.SINK_OUT] / total) if total > 0 else 0.0


@dataclass
class Truths:
    """(sentence, word, layer, head) -> the interventions' effects [4], per truth."""
    layer: dict[tuple, np.ndarray] = field(default_factory=dict)
    word: dict[tuple, np.ndarray] = field(default_factory=dict)
    sentence: dict[tuple, np.ndarray] = field(default_factory=dict)


@dataclass
class Sentence:
    """One sentence as a truths task carries it: what its layers are rerun from."""
    index: int                         # in its corpus
    ids: list[int]
    words: list[list[int]]             # each word's token positions
    inputs: np.ndarray                 # [L, T, C] each layer's input (the reference's own)
    alpha: np.ndarray                  # [L, nh, T, T]
    hidden: np.ndarray                 # [T, C]: the last hidden state
    wanted: set                        # (word, layer, head): the layer truth of these
    downstream: set                    # ... and the downstream truths of these


@dataclass
class Task:
    """A batch of sentences, fixed by the corpus (SENTENCES_PER_TASK in corpus order)."""
    model: str
    perturbation: object               # perturb.Perturbation: the run's, on whatever runs the task
    sentences: list[Sentence]


SENTENCES_PER_TASK = 16


@timing.stage("calibration truths")
def measure(ckpt, corpus: Corpus, inputs, wanted: list[set[tuple[int, int, int]]],
            downstream: list[set[tuple[int, int, int]]]) -> Truths:
    """The layer truth of every (word, layer, head) `wanted[i]` names for sentence i, and the
    downstream truths of those `downstream[i]` names: a map over batches of sentences (on the
    runner model/cluster.py hands out), merged in their order."""
    from . import cluster, encoder, perturb

    runner = cluster.current()
    asked = [i for i, (w, d) in enumerate(zip(wanted, downstream)) if w or d]
    tasks = (Task(ckpt.name, perturb.from_env(), [
        Sentence(i, corpus.toks[i].ids, _words(corpus.toks[i]), inputs.read(i), corpus.acts[i].alpha,
                 corpus.acts[i].hidden, wanted[i], downstream[i]) for i in asked[at:at + SENTENCES_PER_TASK]])
             for at in range(0, len(asked), SENTENCES_PER_TASK))
    fn = truths_of
    if isinstance(runner, cluster.InProcess):   # one model and one set of layers for the threads
        fn = functools.partial(truths_of, model=encoder.Encoder.from_checkpoint(ckpt),
                               weights=[gt.layer_weights(ckpt, l) for l in range(ckpt.config.n_layer)])
    done = runner.map(fn, tasks)
    out = Truths()
    for part in timing.counted(done, -(-len(asked) // SENTENCES_PER_TASK)):
        for name in TRUTHS:
            getattr(out, name).update(getattr(part, name))
    return out


def truths_of(task: Task, model=None, weights=None) -> Truths:
    """One task's truths (`model`, `weights`: the reference and its layers; on a worker, its
    own, built once)."""
    import torch

    from . import cluster

    model = model or cluster.encoder(task.model)
    weights = weights or cluster.layer_weights(task.model)
    model.perturbation = task.perturbation
    out = Truths()
    with cluster.one_thread(), torch.no_grad():
        for l, w in enumerate(weights):
            _layer(model, w, l, task.sentences, out)
    return out


def _layer(model, w, l: int, sentences: list[Sentence], out: Truths) -> None:
    """Layer l's rows of every sentence: their parts sentence by sentence, the rest of the
    layer for all of them in a few large batches (the layer truth), and the downstream truths
    of the rows `downstream` names, sentence by sentence."""
    import torch

    parts, owners = [], []          # per sentence: head_parts of its rows' tokens; (sentence, row) per token
    for s in sentences:
        x, alpha = torch.from_numpy(s.inputs[l]), torch.from_numpy(s.alpha[l])
        far = sorted(k for k in s.downstream if k[1] == l)
        if far:
            with timing.stage("downstream"):
                _downstream(model, w, l, s, far, x, alpha, out)
        rows = sorted(k for k in s.wanted if k[1] == l)
        if not rows:
            continue
        q = [(row, t) for row in rows for t in s.words[row[0]]]
        parts.append(gt.head_parts(x, alpha, w, torch.tensor([t for _, t in q]), torch.tensor([row[2] for row, _ in q])))
        owners += [(s.index, row) for row, _ in q]
    if not parts:
        return
    r, sink, content, share_ = (torch.cat(p) for p in zip(*parts))
    moved = []
    for at in range(0, len(r), BATCH):
        y, changed = gt.intervened(r[at:at + BATCH], sink[at:at + BATCH], content[at:at + BATCH], share_[at:at + BATCH],
                                   w, (gt.SINK_OUT, gt.CONTENT_OUT))           # [B, C], [B, 2, C]
        moved.append(((changed - y[:, None]).norm(dim=-1) / y.norm(dim=-1, keepdim=True)).numpy())
    moved = np.concatenate(moved)                                             # [Q, 2]: per token
    tokens: dict[tuple, list[int]] = {}
    for n, (i, (word, _, h)) in enumerate(owners):
        tokens.setdefault((i, word, l, h), []).append(n)
    for key, ns in tokens.items():                                            # a word's effect: its tokens' mean
        out.layer[key] = moved[ns].mean(axis=0)


BATCH = 4096   # rows through the rest of a layer at once


def _words(tok) -> list[list[int]]:
    """Each word's token positions."""
    return [[t for t, x in enumerate(tok.word_ids) if x == word] for word in range(len(tok.words))]


def _downstream(model, w, l: int, s: Sentence, rows: list[tuple[int, int, int]], x, alpha, out: Truths) -> None:
    """The word and sentence truths of `rows` (word, layer l, head): every intervention at
    layer l run through every later layer, every row and intervention of the sentence in one batch."""
    import torch

    q = [(k, t) for k, (word, _, h) in enumerate(rows) for t in s.words[word]]
    y, changed = gt.intervened(*gt.head_parts(x, alpha, w, torch.tensor([t for _, t in q]),
                                              torch.tensor([rows[k][2] for k, _ in q])), w)   # [Q, C], [Q, 4, C]
    # One baseline copy of the sentence entering layer l + 1, every row's tokens recomputed as
    # the interventions' are; then, per row and intervention, that copy with the row's tokens
    # changed: a row's copy differs from the baseline at its own tokens only.
    T, K = len(s.ids), changed.shape[1]
    after = torch.from_numpy(s.inputs[l + 1] if l + 1 < len(s.inputs) else s.hidden).clone()
    for (_, t), base in zip(q, y):
        after[t] = base
    copies = after[None].repeat(1 + len(rows) * K, 1, 1)                   # [1 + rows * 4, T, C]
    for (k, t), alt in zip(q, changed):
        copies[1 + k * K:1 + (k + 1) * K, t] = alt
    ids = torch.tensor(s.ids)[None].repeat(len(copies), 1)
    last = model.continue_from(copies, l + 1, ids) if l + 1 < len(model.encoder.layer) else copies
    pooled = last.mean(dim=1)
    pooled = pooled / pooled.norm(dim=-1, keepdim=True)                   # the sentence embedding of each copy
    for n, (word, _, h) in enumerate(rows):
        mine = slice(1 + n * K, 1 + (n + 1) * K)
        z0, z = last[0, s.words[word]].mean(dim=0), last[mine][:, s.words[word]].mean(dim=1)   # the word's final representation
        out.word[(s.index, word, l, h)] = ((z - z0).norm(dim=-1) / z0.norm()).numpy()
        out.sentence[(s.index, word, l, h)] = (pooled[mine] - pooled[0]).norm(dim=-1).numpy()


# -- the readings ----------------------------------------------------------------------------------

def readings(rows: dict[str, Displayed], same_head: dict[str, np.ndarray], fixes: dict[str, np.ndarray],
             weighted: dict[str, Displayed]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """name -> (sink share [R], layer [R], head [R]) of every displayed row, in alpha's row
    order: each lens on its own head, the norm lenses on alpha's head, the later fixes on
    alpha's layer (held to the truth of alpha's head), the effect-weighted rule's head."""
    a = rows["alpha"]
    out = {lens: (rows[lens].sink, rows[lens].layer, rows[lens].head) for lens in LENSES}
    out |= {f"{lens}_on_alpha": (same_head[lens], a.layer, a.head) for lens in LENSES[1:]}
    out |= {fix: (share_, a.layer, a.head) for fix, share_ in fixes.items()}
    out |= {f"weighted_{lens}": (d.sink, d.layer, d.head) for lens, d in weighted.items()}
    return out


def alternatives(corpus: Corpus, rows: dict[str, Displayed], weighted: dict[str, Displayed], t) -> dict:
    """name -> (sink share [R], layer [R], head [R], pick margin [R]) of every row on the head
    its reading's pick would open instead (picks.py; the pick itself where nothing could turn
    it): what a machine rounding the nearest near-tie the other way would read. A fix reads
    alpha's alternative layer (value zeroing: where its sample measured it, NaN elsewhere)."""
    from .instrument import sink_share
    from .truth import CHEAP

    a = rows["alpha"]
    alt_a = a.alternative(corpus, "alpha")
    pick = lambda d, lens: (lambda x: (x.sink, x.layer, x.head, d.margin))(d.alternative(corpus, lens))
    out = {lens: pick(rows[lens], lens) for lens in LENSES}
    out |= {f"{lens}_on_alpha": (on_heads(corpus, lens, alt_a), alt_a.layer, alt_a.head, a.margin) for lens in LENSES[1:]}
    for fix in t.table:
        if fix in LENSES:
            continue
        same = alt_a.layer == a.layer
        zeroed = lambda s, w, l: t.folded[s].zeroing.get((int(w), int(l)))
        at = (np.array([sink_share(t.folded[s].fix_rows[fix][l, w], corpus.wms[s])
                        for s, w, l in zip(a.sentence, a.word, alt_a.layer)]) if fix in CHEAP
              else np.where(same, t.table[fix]["sink_share"],
                            [np.nan if zeroed(s, w, l) is None else sink_share(zeroed(s, w, l), corpus.wms[s])
                             for s, w, l in zip(a.sentence, a.word, alt_a.layer)]))
        out[fix] = (at, alt_a.layer, alt_a.head, a.margin)
    out |= {f"weighted_{lens}": pick(d, lens) for lens, d in weighted.items()}
    return out


def wanted(rows: Displayed, readings_: dict, n_sentences: int, alt: dict | None = None) -> list[set[tuple[int, int, int]]]:
    """Per sentence, the (word, layer, head) whose truth some reading is held to, and those of
    the alternative picks near enough a tie to turn (picks.SEARCHED_BELOW)."""
    out: list[set] = [set() for _ in range(n_sentences)]
    for _, layer, head in readings_.values():
        for s, w, l, h in zip(rows.sentence, rows.word, layer, head):
            out[int(s)].add((int(w), int(l), int(h)))
    for _, layer, head, margin in (alt or {}).values():
        for s, w, l, h, m in zip(rows.sentence, rows.word, layer, head, margin):
            if m < picks.SEARCHED_BELOW:
                out[int(s)].add((int(w), int(l), int(h)))
    return out


def on_alpha(rows: Displayed, sentences: set[int], n_sentences: int, alt: Displayed | None = None
             ) -> list[set[tuple[int, int, int]]]:
    """Per sentence of `sentences`, the (word, layer, head) of alpha's displayed rows, and of
    their alternative picks (`alt`) near enough a tie to turn (picks.SEARCHED_BELOW)."""
    out: list[set] = [set() for _ in range(n_sentences)]
    for s, w, l, h, al, ah, m in zip(rows.sentence, rows.word, rows.layer, rows.head, *(
            (alt.layer, alt.head) if alt is not None else (rows.layer, rows.head)), rows.margin):
        if int(s) in sentences:
            out[int(s)].add((int(w), int(l), int(h)))
            if alt is not None and m < picks.SEARCHED_BELOW:
                out[int(s)].add((int(w), int(al), int(ah)))
    return out


# -- scoring ----------------------------------------------------------------------------------------

@dataclass
class Score:
    """One reading against one truth, on one set of rows."""
    reading: str
    n_rows: int
    n_sentences: int
    n_badged: int                 # rows whose reading is above the threshold
    n_truth_above: int            # rows whose truth is above it
    n_both: int
    precision: float | None
    precision_lo: float | None
    precision_hi: float | None
    recall: float | None
    recall_lo: float | None
    recall_hi: float | None
    spearman: float | None
    spearman_lo: float | None
    spearman_hi: float | None
    truth_median: float | None    # the truth's sink share on the median row of the reading's head
    truth_median_lo: float | None
    truth_median_hi: float | None
    # paired with alpha (the instrument's reading today): this reading's minus alpha's
    precision_vs_alpha: float | None = None
    precision_vs_alpha_lo: float | None = None
    precision_vs_alpha_hi: float | None = None
    recall_vs_alpha: float | None = None
    recall_vs_alpha_lo: float | None = None
    recall_vs_alpha_hi: float | None = None
    fit: bool = False             # both lower bounds at the registered bar (on this set)
    # Sensitivity (added after the results were read): Wilson's binomial lower bounds, rows
    # counted as independent; a bootstrap over sentences gives a ratio of two or three rows an
    # interval of nothing, and these bounds say how little such a count shows.
    precision_wilson_lo: float | None = None
    recall_wilson_lo: float | None = None
    fit_wilson: bool = False
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


def _ratio(num: np.ndarray, den: np.ndarray, unit: np.ndarray, rs: Resampler) -> tuple[float, np.ndarray]:
    """sum(num) / sum(den) over the rows, and its value in every resample (NaN where a
    resample draws no row of the denominator)."""
    value = float(num.sum() / den.sum()) if den.sum() else float("nan")
    n = np.bincount(unit, weights=num.astype(float), minlength=rs.n)
    d = np.bincount(unit, weights=den.astype(float), minlength=rs.n)
    c = rs.counts.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return value, (c @ n) / (c @ d)


def _estimate(value: float, draws: np.ndarray, rs: Resampler) -> Estimate:
    draws = draws[~np.isnan(draws)]
    if np.isnan(value) or not draws.size:
        return NONE
    return Estimate(value, *rs.interval(draws))


def score(name: str, reading: np.ndarray, truth: np.ndarray, sentence: np.ndarray, rs_like: Resampler,
          threshold: float, bar: dict, alpha: tuple[np.ndarray, np.ndarray] | None = None,
          alt: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> Score:
    """A reading's shares against a truth's [R] (NaN: not measured), the rows' sentences [R].
    `alpha`: alpha's (reading, truth) on the same rows, for the paired differences. `alt`: the
    reading, the truth and the pick margin of each row on its alternative pick, for the counts'
    margins (picks.count_margin)."""
    from scipy import stats as sps

    keep = ~np.isnan(truth) & ~np.isnan(reading)   # value zeroing: its sample's rows only
    if not keep.any():
        return Score(name, 0, 0, 0, 0, 0, *[None] * 12,   # no row: nothing any rounding could turn
                     margins={k: (picks.NO_MARGIN, 1.0) for k in ("fit", "fit_wilson", "n_badged", "n_truth_above", "n_both")})
    unit, rs = rs_like.over(sentence[keep])
    x, y = reading[keep], truth[keep]
    badge, above = x > threshold, y > threshold
    p, p_draws = _ratio(badge & above, badge, unit, rs)
    r, r_draws = _ratio(badge & above, above, unit, rs)
    rho = float(sps.spearmanr(x, y).statistic) if len(x) > 2 else float("nan")
    rho_e = Estimate(rho, *rs.spearman(x, y, unit)) if len(x) > 2 and not np.isnan(rho) else NONE
    precision, recall = _estimate(p, p_draws, rs), _estimate(r, r_draws, rs)
    s = Score(name, int(keep.sum()), int(rs.n), int(badge.sum()), int(above.sum()), int((badge & above).sum()),
              **_clean(precision.fields("precision")), **_clean(recall.fields("recall")), **_clean(rho_e.fields("spearman")),
              **_clean(rs.median_of(y, unit).fields("truth_median")))
    if alpha is not None:
        ax, ay = alpha[0][keep], alpha[1][keep]
        ab, aa = ax > threshold, ay > threshold
        ap, ap_draws = _ratio(ab & aa, ab, unit, rs)
        ar, ar_draws = _ratio(ab & aa, aa, unit, rs)
        s.precision_vs_alpha, s.precision_vs_alpha_lo, s.precision_vs_alpha_hi = _clean_t(rs.difference(p, p_draws, ap, ap_draws))
        s.recall_vs_alpha, s.recall_vs_alpha_lo, s.recall_vs_alpha_hi = _clean_t(rs.difference(r, r_draws, ar, ar_draws))
    s.fit = bool(s.precision_lo is not None and s.recall_lo is not None
                 and s.precision_lo >= bar["precision_lo"] and s.recall_lo >= bar["recall_lo"])
    s.precision_wilson_lo, s.recall_wilson_lo = wilson_lo(s.n_both, s.n_badged, rs.level), wilson_lo(s.n_both, s.n_truth_above, rs.level)
    s.fit_wilson = bool(s.precision_wilson_lo is not None and s.recall_wilson_lo is not None
                        and s.precision_wilson_lo >= bar["precision_lo"] and s.recall_wilson_lo >= bar["recall_lo"])
    # Which rows are counted turns on a share near the threshold, the reading's or the truth's,
    # or on a pick near a tie whose alternative falls on the other side.
    if alt is None:
        badged, truth_above = picks.threshold_margin(x, threshold), picks.threshold_margin(y, threshold)
    else:
        ax, ay, am = (v[keep] for v in alt)
        badged, truth_above = picks.count_margin(x, threshold, ax, am), picks.count_margin(y, threshold, ay, am)
    near = min(badged, truth_above)
    s.margins = {"n_badged": (badged, 1.0), "n_truth_above": (truth_above, 1.0), "n_both": (near, 1.0)}
    for name, n in (("precision", s.n_badged), ("recall", s.n_truth_above)):
        s.margins |= {name: (near, 1.0 / max(1, n)),
                      **{f"{name}{x}": (near, picks.BOUND_STEPS / max(1, n)) for x in ("_lo", "_hi")}}
    # The verdict turns on a row that turns only if one row more or less could turn it: carry
    # a bound that passes below its bar, or (for a verdict that fails) every bound that fails
    # above its bar (a row moves a ratio by at most 1 / its denominator).
    bounds = [(s.precision_lo, bar["precision_lo"], s.n_badged), (s.recall_lo, bar["recall_lo"], s.n_truth_above)]
    s.margins["fit"] = (min(near if _a_row_turns(s.fit, bounds) else picks.NO_MARGIN, _apart(s.fit, bounds)), 1.0)
    wilson = [(s.precision_wilson_lo, bar["precision_lo"], s.n_badged), (s.recall_wilson_lo, bar["recall_lo"], s.n_truth_above)]
    s.margins |= {k: (near, 1.0) for k in ("precision_wilson_lo", "recall_wilson_lo")}
    s.margins["fit_wilson"] = (near if _a_row_turns(s.fit_wilson, wilson) else picks.NO_MARGIN, 1.0)
    return s


def _a_row_turns(fit: bool, bounds: list[tuple]) -> bool:
    """Whether one row counted the other way could turn a verdict on lower bounds (value, bar,
    the ratio's denominator): a passing verdict if any bound is within a row of its bar, a
    failing one only if every failing bound is (a bound of no rows could become anything)."""
    within = lambda v, b, n: v is None or abs(v - b) <= 1.0 / max(1, n)
    if fit:
        return any(within(v, b, n) for v, b, n in bounds)
    return all(within(v, b, n) for v, b, n in bounds if v is None or v < b)


def _apart(fit: bool, bounds: list[tuple]) -> float:
    """How near rounding alone (no row turning) comes to turning the verdict: a passing one,
    the nearest bound's relative distance to its bar; a failing one, the farthest failing
    bound's (every failing bound would have to cross)."""
    relevant = bounds if fit else [(v, b, n) for v, b, n in bounds if v is not None and v < b]
    gaps = [abs(v - b) / b for v, b, _ in relevant if v is not None and v != b]
    if not gaps:
        return picks.NO_MARGIN
    return min(gaps) if fit else max(gaps)


def wilson_lo(k: int, n: int, level: float) -> float | None:
    """Wilson's lower bound for k successes in n trials, at `level`; None for n = 0."""
    from scipy import stats as sps

    if n == 0:
        return None
    z = float(sps.norm.ppf(1 - (1 - level) / 2))
    p = k / n
    centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float((centre - half) / (1 + z * z / n))


def _clean(d: dict) -> dict:
    """NaN (no row to form a ratio over) as None: results are JSON, which has no NaN."""
    return {k: (None if v is None or np.isnan(v) else float(v)) for k, v in d.items()}


def _clean_t(e: Estimate) -> tuple:
    return tuple(_clean({"v": v})["v"] for v in (e.value, e.lo, e.hi))


# -- the numerical floor ---------------------------------------------------------------------------

def at_floor(cal: dict, disagreement: float, floor_times: float) -> None:
    """Once the reference-oracle disagreement on effects is known (Part 8's agreement, after
    the oracle has run: checks.py calls this): count, per corpus, the rows of alpha's head
    whose sink and content layer effects are both below the floor (`floor_times` the
    disagreement)."""
    floor = floor_times * disagreement
    for st in cal["sets"].values():
        if "floor_effects" not in st:   # counted already (checks run again on the same results)
            continue
        effects = np.asarray(st.pop("floor_effects"))
        st |= {"floor": floor, "n_floor": int((effects < floor).sum()),
               "margins": {"n_floor": (picks.threshold_margin(effects, floor), 1.0)}}


# -- one model, both corpora ---------------------------------------------------------------------------

def _fix_shares(table: dict) -> dict[str, np.ndarray]:
    """The later fixes' sink shares on alpha's layer (truth.row_table), per displayed row
    (value zeroing: NaN off Part 8's sample)."""
    from .truth import FIXES

    return {fix: table[fix]["sink_share"] for fix in FIXES}


def _set(ckpt, corpus: Corpus, inputs, rows: dict[str, Displayed], same_head: dict, t, weighted: dict,
         where: np.ndarray, downstream: set[int], study, resampler: Resampler, cosine: dict | None = None,
         layer: bool = True) -> dict:
    """Every reading scored against every truth on the rows `where` selects (`t`: the corpus's
    Part 8 run, for the fixes' rows). `cosine`: Part 8's ablation effects on alpha's rows (NaN
    off its sample), held to the layer truth's. Without `layer` (the replication), the
    downstream truths only. The rows' readings and truths go into the results too (`rows`),
    so that every count, share and correlation can be recomputed from them."""
    found = readings(rows, same_head, _fix_shares(t.table), weighted)
    alt = alternatives(corpus, rows, weighted, t)
    n = len(corpus.toks)
    a = rows["alpha"]
    wanted_ = wanted(a, found, n, alt) if layer else [set() for _ in range(n)]
    truths = measure(ckpt, corpus, inputs, wanted_, on_alpha(a, downstream, n, a.alternative(corpus, "alpha")))
    keys = lambda lay, hd: zip(a.sentence.tolist(), a.word.tolist(), lay.tolist(), hd.tolist())
    of = lambda name, lay, hd: np.array([share(getattr(truths, name)[k]) if k in getattr(truths, name) else np.nan
                                         for k in keys(lay, hd)])
    truth_share = {name: {r: of(name, lay, hd) for r, (_, lay, hd) in found.items()} for name in TRUTHS}
    # On the alternative picks, each truth where a pick could turn (measured: the downstream
    # truths on alpha's head, in their sample), the pick's own truth where it cannot (the same row).
    alt_truth = {name: {r: np.where(m < picks.SEARCHED_BELOW, of(name, lay, hd), truth_share[name][r])
                        for r, (_, lay, hd, m) in alt.items()} for name in TRUTHS}
    names = TRUTHS if layer else DOWNSTREAM
    out: dict = {"n_sentences": int(len(set(a.sentence[where].tolist()))), "n_rows": int(where.sum()),
                 "n_downstream_sentences": len(downstream)}
    with timing.stage("scores"):
        out["truths"] = _scores(found, truth_share, where, a.sentence, study, resampler,
                                {name: {r: (x[where], alt_truth[name][r][where], m[where]) for r, (x, _, _, m) in alt.items()}
                                 for name in names}, names)
    out["rows"] = row_record(a, where, found, truth_share, names)
    # The display's own change, over removing the head: how much of the head's effect the
    # renormalized row leaves out (alpha's head).
    keys = [k for k in zip(a.sentence[where].tolist(), a.word[where].tolist(), a.layer[where].tolist(),
                           a.head[where].tolist()) if k in truths.word]
    out["redistribution"] = {name: _median_ratio([getattr(truths, name)[k] for k in keys], [k[0] for k in keys], resampler)
                             for name in ("word", "sentence")}
    # The larger of the sink's and the content's layer effect, per row of alpha's head: a row is
    # at the numerical floor where it is below the reference-oracle disagreement's bar (checks.py).
    if not layer:
        return out
    effects = [truths.layer[k] for k in zip(a.sentence[where].tolist(), a.word[where].tolist(), a.layer[where].tolist(),
                                             a.head[where].tolist())]
    out["floor_effects"] = [float(max(e[gt.SINK_OUT], e[gt.CONTENT_OUT])) for e in effects]
    if cosine is not None:
        out["squared"] = _squared(np.stack(effects), cosine["sink_effect"][where], cosine["content_effect"][where],
                                  a.sentence[where], resampler)
    return out


def row_record(a: Displayed, where: np.ndarray, found: dict, truth_share: dict, names) -> dict:
    """The rows `where` selects, columnar, as results.json keeps them: each row's sentence and
    word, every reading's sink share, and each truth's share on the head each reading opens
    (the downstream truths on alpha's head only: one column). None where not measured."""
    col = lambda x: [None if np.isnan(v) else float(v) for v in np.asarray(x, dtype=float)[where]]
    on_own_head = lambda name: {r: col(truth_share[name][r]) for r in found} if name not in DOWNSTREAM \
        else {"alpha_head": col(truth_share[name]["alpha"])}
    return {"sentence": a.sentence[where].tolist(), "word": a.word[where].tolist(),
            "readings": {r: col(x) for r, (x, _, _) in found.items()},
            "truths": {name: on_own_head(name) for name in names}}


def _scores(found: dict, truth_share: dict, where: np.ndarray, sentence: np.ndarray, study, resampler: Resampler,
            alt: dict, names=TRUTHS) -> dict:
    """truth -> reading -> Score, on the rows `where` selects; `alt`: truth -> reading -> (the
    reading, the truth, the pick margin) on the alternative picks, those rows selected."""
    threshold = study.stop_rule.threshold
    bar = {"precision_lo": study.calibration.precision_lo, "recall_lo": study.calibration.recall_lo}
    out = {}
    for name in names:
        base = (found["alpha"][0][where], truth_share[name]["alpha"][where])
        out[name] = {r: score(r, x[where], truth_share[name][r][where], sentence[where], resampler, threshold, bar,
                              None if r == "alpha" else base, alt[name][r])
                     for r, (x, _, _) in found.items() if name not in DOWNSTREAM or r in ON_ALPHAS_HEAD}
    return out


def _squared(linear: np.ndarray, sink_cos: np.ndarray, content_cos: np.ndarray, sentence: np.ndarray,
             rs_like: Resampler) -> dict:
    """Part 8's truth (cosine distances) against the layer truth (norms), on the rows both
    measure: the slope of log(sink / content) under the first on the same under the second.
    A cosine distance grows as the square of a small change, so the slope should be near 2."""
    with np.errstate(divide="ignore", invalid="ignore"):   # a zero effect: left out below
        x = np.log(linear[:, gt.SINK_OUT]) - np.log(linear[:, gt.CONTENT_OUT])
        y = np.log(sink_cos) - np.log(content_cos)
    keep = np.isfinite(x) & np.isfinite(y)
    unit, rs = rs_like.over(sentence[keep])
    x, y = x[keep], y[keep]
    slope = float(np.polyfit(x, y, 1)[0])
    return {**_clean(Estimate(slope, *rs.slope(x, y, unit)).fields("slope")), "r": float(np.corrcoef(x, y)[0, 1]),
            "n_rows": int(keep.sum()), "n_sentences": int(rs.n)}


def _median_ratio(effects: list[np.ndarray], sentence: list[int], rs_like: Resampler) -> dict:
    """The median of redistributed / head removed over rows, with its interval."""
    if not effects:
        return {"median": None, "median_lo": None, "median_hi": None, "n_rows": 0}
    e = np.stack(effects)
    removed, redistributed = e[:, gt.HEAD_OUT], e[:, gt.REDISTRIBUTED]
    ratio = np.where(removed > 0, redistributed / np.where(removed > 0, removed, 1), 0.0)
    unit, rs = rs_like.over(np.array(sentence))
    est = rs.median_of(ratio, unit)
    return {**_clean(est.fields("median")), "n_rows": int(len(ratio))}


@timing.stage("calibration")
def run(ckpt, study, key: str, corpus: Corpus, rows: dict[str, Displayed], same_head: dict, t, inputs,
        excluded: dict[str, np.ndarray], resampler: Resampler) -> dict:
    """Part 9 for one model: the held-out half of the corpus (its truth run `t`: the fixes'
    rows, the bound ratios), the confirmation corpus, and the replication where study.yml
    measures it on this model, each read with the same positional heads (corpus.tsv's fit
    half's) and its own truth run for the fixes."""
    from .corpus import displayed

    cal = study.calibration
    tie = study.tie_tolerance
    weighted = {lens: displayed(corpus, lens, excluded[lens], tie, weights=t.ratios) for lens in ("alpha", "output_norm")}
    test = rows["alpha"].where(study.halves["test"])
    n = len(corpus.toks)
    sets = {"corpus": _set(ckpt, corpus, inputs, rows, same_head, t, weighted, test,
                           set(cal.downstream(key, n)) & set(study.halves["test"]), study, resampler,
                           cosine=t.table["alpha"]),
            "confirmation": _elsewhere(ckpt, study, cal.confirmation, cal.confirmation_registers, cal.confirmation_path,
                                       excluded, cal.downstream_every.get(key, 1))}
    rep = cal.replication
    if rep is not None and key in rep.models:
        sets["replication"] = _elsewhere(ckpt, study, rep.sentences, rep.registers, rep.path, excluded,
                                         rep.downstream_every, layer=False)
    fits = {name: fit_on_both(sets, name) for name in ("word", "layer") if name in sets["corpus"]["truths"]}
    count = lambda d: sum(v for k, v in d.items() if k != "margins")
    out = {"primary": cal.primary, "sets": sets, "fit": fits[cal.primary], "n_fit": count(fits[cal.primary]),
           "fit_wilson": fit_on_both(sets, cal.primary, "fit_wilson"),
           "verdict": verdicts(sets, cal.primary, cal.min_truth_rows),
           "verdict_registered": verdicts(sets, cal.primary),   # the criterion alone, as registered in 3b87ee0
           "stop_rule": stop_rule(readings(rows, same_head, _fix_shares(t.table), weighted),
                                  alternatives(corpus, rows, weighted, t), study.stop_rule.threshold),
           "downstream_every": cal.downstream_every.get(key, 1)}
    # The amended primary's verdict, beside the registered one (labelled with the amendment)
    out |= {f"fit_{name}": fits[name] for name in fits if name != cal.primary}
    out["model_verdict"] = model_verdict(out["verdict"], out["verdict_registered"])
    if "replication" in sets:
        out["replicates"] = replication_verdicts(sets["replication"], cal.primary, cal.min_truth_rows)
    return out


def _elsewhere(ckpt, study, sentences, registers, path, excluded: dict[str, np.ndarray], downstream_every: int,
               layer: bool = True) -> dict:
    """A corpus measured as one held-out set (the confirmation corpus, the replication): its rows
    opened with corpus.tsv's positional heads, its own truth run for the fixes' rows."""
    from . import truth
    from .corpus import displayed, on_heads, read_corpus
    from .study import with_sentences_of

    tie = study.tie_tolerance
    other = with_sentences_of(study, sentences, registers, path)
    with truth.LayerInputs() as inputs:
        corpus = read_corpus(ckpt, other, inputs)
        rows = {lens: displayed(corpus, lens, excluded[lens], tie) for lens in LENSES}
        same = {lens: on_heads(corpus, lens, rows["alpha"]) for lens in LENSES[1:]}
        t = truth.run_reference(ckpt, corpus, rows, inputs, [], [])
        t.table = truth.row_table(corpus, rows, t)
        weighted = ({lens: displayed(corpus, lens, excluded[lens], tie, weights=t.ratios) for lens in ("alpha", "output_norm")}
                    if layer else {})
        everything = np.ones(len(rows["alpha"].sentence), bool)
        n = len(corpus.toks)
        return _set(ckpt, corpus, inputs, rows, same, t, weighted, everything, set(range(0, n, downstream_every)), other,
                    Resampler(n, study.bootstrap.resamples, study.bootstrap.seed, study.bootstrap.level), layer=layer)


def fit_on_both(sets: dict, truth: str, field: str = "fit") -> dict:
    """reading -> fit (the criterion's `field`: "fit", or Wilson's "fit_wilson") on corpus.tsv's
    held-out half and the confirmation corpus alike, with the margin of that verdict."""
    scores = [(r, a, sets["confirmation"]["truths"][truth][r]) for r, a in sets["corpus"]["truths"][truth].items()]
    margin = lambda s: s.margins.get(field, (picks.NO_MARGIN,))[0]
    return {**{r: bool(getattr(a, field) and getattr(b, field)) for r, a, b in scores},
            "margins": {r: (min(margin(a), margin(b)), 1.0) for r, a, b in scores}}


def _few(scores, min_rows: int) -> tuple[bool, float]:
    """(too few rows with the truth above half on any of these scores, the margin of that)."""
    few = any(s.n_truth_above < min_rows for s in scores)
    return few, min(picks.verdict_margin(s.n_truth_above, min_rows - 1, s.margins["n_truth_above"][0]) for s in scores)


def verdicts(sets: dict, truth: str, min_rows: int = 0) -> dict:
    """reading -> "fit" (the criterion met on both corpora), "not fit", or "not measured" (no row
    of a corpus has the reading: value zeroing off Part 8's sample); with `min_rows` (the second
    amendment) also "undetermined": on either corpus fewer than `min_rows` rows with the truth
    above half, so the test could not be passed. With each verdict's margin."""
    out, margins = {}, {}
    for r, a in sets["corpus"]["truths"][truth].items():
        b = sets["confirmation"]["truths"][truth][r]
        few, few_margin = _few((a, b), min_rows)
        out[r] = ("not measured" if not (a.n_rows and b.n_rows) else "undetermined" if few
                  else "fit" if a.fit and b.fit else "not fit")
        margins[r] = (min(few_margin, a.margins["fit"][0], b.margins["fit"][0]), picks.NO_MARGIN)
    return out | {"margins": margins}


def model_verdict(verdict: dict, registered: dict) -> dict:
    """A model's verdict: fit if a reading is (naming each), else undetermined if no measured
    reading's test could be passed, else not fit; beside it the same under the criterion as
    registered (`registered`: the verdicts without the undetermined rule). With their margins."""
    def of(v: dict) -> tuple[str, list[str], float]:
        each = {r: x for r, x in v.items() if r != "margins" and x != "not measured"}
        fit = [r for r, x in each.items() if x == "fit"]
        word = "fit" if fit else "undetermined" if each and all(x == "undetermined" for x in each.values()) else "not fit"
        return word, fit, min((v["margins"][r][0] for r in each), default=picks.NO_MARGIN)

    (word, fit, margin), (as_registered, _, registered_margin) = of(verdict), of(registered)
    return {"verdict": word, "n_fit": len(fit), "readings": ", ".join(fit), "registered": as_registered,
            "margins": {"verdict": (margin, picks.NO_MARGIN), "n_fit": (margin, 1.0), "readings": (margin, picks.NO_MARGIN),
                        "registered": (registered_margin, picks.NO_MARGIN)}}


def replication_verdicts(st: dict, truth: str, min_rows: int) -> dict:
    """reading -> "replicates" (the registered criterion met on the replication alone), "fails",
    "undetermined" (fewer than `min_rows` rows with the truth above half) or "not measured"."""
    out, margins = {}, {}
    for r, s in st["truths"][truth].items():
        few, few_margin = _few((s,), min_rows)
        out[r] = "not measured" if not s.n_rows else "undetermined" if few else "replicates" if s.fit else "fails"
        margins[r] = (min(few_margin, s.margins["fit"][0]), picks.NO_MARGIN)
    return out | {"margins": margins}


def stop_rule(found: dict, alt: dict, threshold: float) -> dict:
    """The registered stop rule on every reading, beside the criterion: its rows above the
    threshold over every displayed row of corpus.tsv (both halves); adopted if none. `alt`:
    the rows on their alternative picks (`alternatives`), for the count's margin."""
    out = {}
    for r, (x, _, _) in found.items():
        above = int((x > threshold).sum())
        margin = picks.count_margin(x, threshold, alt[r][0], alt[r][3])
        out[r] = {"rows_above": above, "adopted": above == 0, "n_rows": int((~np.isnan(x)).sum()),
                  "margins": {"rows_above": (margin, 1.0), "adopted": (picks.verdict_margin(above, 0, margin), 1.0)}}
    return out
