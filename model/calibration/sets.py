"""Part 9 on one model (`run`): the sets of rows it is read on (corpus.tsv's held-out half,
the confirmation corpus, and the replication where study.yml measures it on this model),
each read with the same positional heads (corpus.tsv's fit half's) and its own Part 8 run
for the fixes' rows. On each set: every reading scored against every truth, the rows as
results.json keeps them, Part 8's truth against the layer truth (the squared slope), and
how much of the head's effect the redistribution leaves out; then the fits and verdicts.
Once the oracle has run, the rows at the numerical floor (`at_floor`).

Not here: the truths (truths.py), one score (scores.py), the verdicts (verdicts.py).
"""
from __future__ import annotations

import numpy as np

from livenumbers import timing

from .. import ground_truth as gt
from .. import picks
from ..bootstrap import Estimate, Resampler
from ..corpus import Corpus, Displayed
from ..instrument import LENSES
from .readings import ON_ALPHAS_HEAD, alternatives, fix_shares, on_alpha, readings, wanted
from .scores import clean, score
from .truths import DOWNSTREAM, MEAN, TRUTHS, measure, share
from .verdicts import fit_on_both, model_verdict, replication_verdicts, stop_rule, verdicts


@timing.stage("calibration")
def run(ckpt, study, key: str, corpus: Corpus, rows: dict[str, Displayed], same_head: dict, t, inputs,
        excluded: dict[str, np.ndarray], resampler: Resampler) -> dict:
    """Part 9 for one model: the held-out half of the corpus (its truth run `t`: the fixes'
    rows, the bound ratios), the confirmation corpus, and the replication where study.yml
    measures it on this model, each read with the same positional heads (corpus.tsv's fit
    half's) and its own truth run for the fixes."""
    from ..corpus import displayed

    from .. import mean_ablation

    cal, ma = study.calibration, study.calibration.mean_ablation
    tie = study.tie_tolerance
    weighted = {lens: displayed(corpus, lens, excluded[lens], tie, weights=t.ratios) for lens in ("alpha", "output_norm")}
    test = rows["alpha"].where(study.halves["test"])
    n = len(corpus.toks)
    # Part 10's reference means, over the fit half (mean_ablation/means.py), measured with Part 9's runs
    means = (mean_ablation.value_means([gt.layer_weights(ckpt, l) for l in range(ckpt.config.n_layer)], inputs,
                                       study.halves["fit"]) if ma else None)
    sets = {"corpus": _set(ckpt, corpus, inputs, rows, same_head, t, weighted, test,
                           set(cal.downstream(key, n)) & set(study.halves["test"]), study, resampler,
                           cosine=t.table["alpha"], means=means),
            "confirmation": _elsewhere(ckpt, study, cal.confirmation, cal.confirmation_registers, cal.confirmation_path,
                                       excluded, cal.downstream_every.get(key, 1), means=means)}
    rep = cal.replication
    if rep is not None and key in rep.models:
        sets["replication"] = _elsewhere(ckpt, study, rep.sentences, rep.registers, rep.path, excluded,
                                         rep.downstream_every, layer=False)
    fresh = ma.fresh if ma and ma.fresh and key in ma.fresh.models else None
    pilot = mean_ablation.pilot(ckpt, corpus, inputs, rows, study.halves["fit"], means) if fresh else None
    if fresh and fresh.sentences:   # the decisive test, once its sentences are chosen (model/fresh.py)
        with timing.stage("fresh corpus"):   # timed apart: make bench's baseline, 467d3ed, had no Part 10
            sets["fresh"] = _elsewhere(ckpt, study, fresh.sentences, fresh.registers, fresh.path, excluded, 1,
                                       layer=False, means=means, zero=False)
    fits = {name: fit_on_both(sets, name) for name in ("word", "layer") if name in sets["corpus"]["truths"]}
    count = lambda d: sum(v for k, v in d.items() if k != "margins")
    out = {"primary": cal.primary, "sets": sets, "fit": fits[cal.primary], "n_fit": count(fits[cal.primary]),
           "fit_wilson": fit_on_both(sets, cal.primary, "fit_wilson"),
           "verdict": verdicts(sets, cal.primary, cal.min_truth_rows),
           "verdict_registered": verdicts(sets, cal.primary),   # the criterion alone, as registered in 3b87ee0
           "stop_rule": stop_rule(readings(rows, same_head, fix_shares(t.table), weighted),
                                  alternatives(corpus, rows, weighted, t), study.stop_rule.threshold),
           "downstream_every": cal.downstream_every.get(key, 1)}
    # The amended primary's verdict, beside the registered one (labelled with the amendment)
    out |= {f"fit_{name}": fits[name] for name in fits if name != cal.primary}
    out["model_verdict"] = model_verdict(out["verdict"], out["verdict_registered"])
    if "replication" in sets:
        out["replicates"] = replication_verdicts(sets["replication"], cal.primary, cal.min_truth_rows)
    if ma:   # Part 10, and Part 9's criterion on the corpora it was registered on, read with its bounds
        part10 = {c: st.pop("part10") for c, st in sets.items() if "part10" in st}
        out["mean_ablation"] = mean_ablation.summary(part10, pilot, ("corpus", "confirmation"))
    return out


def _elsewhere(ckpt, study, sentences, registers, path, excluded: dict[str, np.ndarray], downstream_every: int,
               layer: bool = True, means: list | None = None, zero: bool = True) -> dict:
    """A corpus measured as one held-out set (the confirmation corpus, the replication, Part 10's
    fresh corpus): its rows opened with corpus.tsv's positional heads, its own truth run for the
    fixes' rows."""
    from .. import truth
    from ..corpus import displayed, on_heads, read_corpus
    from ..study import with_sentences_of

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
                    Resampler(n, study.bootstrap.resamples, study.bootstrap.seed, study.bootstrap.level), layer=layer,
                    means=means, zero=zero)


def _set(ckpt, corpus: Corpus, inputs, rows: dict[str, Displayed], same_head: dict, t, weighted: dict,
         where: np.ndarray, downstream: set[int], study, resampler: Resampler, cosine: dict | None = None,
         layer: bool = True, means: list | None = None, zero: bool = True) -> dict:
    """Every reading scored against every truth on the rows `where` selects (`t`: the corpus's
    Part 8 run, for the fixes' rows). `cosine`: Part 8's ablation effects on alpha's rows (NaN
    off its sample), held to the layer truth's. Without `layer` (the replication), the
    downstream truths only; without `zero` (Part 10's fresh corpus), not even those. With the
    `means`, Part 10's mean-ablation truth too, scored apart ("part10", mean_ablation.on_set).
    The rows' readings and truths go into the results too (`rows`), so that every count, share
    and correlation can be recomputed from them."""
    found = readings(rows, same_head, fix_shares(t.table), weighted)
    alt = alternatives(corpus, rows, weighted, t)
    n = len(corpus.toks)
    a = rows["alpha"]
    wanted_ = wanted(a, found, n, alt) if layer else [set() for _ in range(n)]
    truths = measure(ckpt, corpus, inputs, wanted_, on_alpha(a, downstream, n, a.alternative(corpus, "alpha")), means, zero)
    keys = lambda lay, hd: zip(a.sentence.tolist(), a.word.tolist(), lay.tolist(), hd.tolist())
    of = lambda name, lay, hd: np.array([share(getattr(truths, name)[k]) if k in getattr(truths, name) else np.nan
                                         for k in keys(lay, hd)])
    truth_share = {name: {r: of(name, lay, hd) for r, (_, lay, hd) in found.items()} for name in TRUTHS}
    if means is not None:   # on alpha's head only
        truth_share[MEAN] = {"alpha": of(MEAN, a.layer, a.head)}
    # On the alternative picks, each truth where a pick could turn (measured: the downstream
    # truths on alpha's head, in their sample), the pick's own truth where it cannot (the same row).
    alt_truth = {name: {r: np.where(m < picks.SEARCHED_BELOW, of(name, lay, hd), truth_share[name][r])
                        for r, (_, lay, hd, m) in alt.items()} for name in TRUTHS}
    names = TRUTHS if layer else DOWNSTREAM if zero else ()
    out: dict = {"n_sentences": int(len(set(a.sentence[where].tolist()))), "n_rows": int(where.sum()),
                 "n_downstream_sentences": len(downstream)}
    with timing.stage("scores"):
        out["truths"] = _scores(found, truth_share, where, a.sentence, study, resampler,
                                {name: {r: (x[where], alt_truth[name][r][where], m[where]) for r, (x, _, _, m) in alt.items()}
                                 for name in names}, names)
    out["rows"] = row_record(a, where, found, truth_share, names + ((MEAN,) if means is not None else ()))
    if means is not None:
        from .. import mean_ablation
        with timing.stage("scores"):
            out["part10"] = mean_ablation.on_set(found, truth_share, where, a.sentence, study, resampler)
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
    on_own_head = lambda name: {r: col(truth_share[name][r]) for r in found} if name not in (*DOWNSTREAM, MEAN) \
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
    return {**clean(Estimate(slope, *rs.slope(x, y, unit)).fields("slope")), "r": float(np.corrcoef(x, y)[0, 1]),
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
    return {**clean(est.fields("median")), "n_rows": int(len(ratio))}


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
