"""The statistics of Part 8 on the held-out rows, each with a bootstrap interval over
sentences (the verdicts read every displayed row; value zeroing, its sample's):

- the ablation ground truth on the head each lens opens; a row is harmful when its sink
  effect is above the median head effect of the model's displayed rows (alpha; every
  sentence of the ablation's sample, both halves);
- the fixes as lenses: their sink share with the word's own column in the denominator
  (registered) and among the other words (added), under the registered stop rule;
- which reading's sink share tracks the ablation sink share (Spearman) and ranks the
  harmful rows first (ROC AUC), beside two lazy scores that know only where the word is
  (its position, a first-word flag); and what the harmful rows are;
- the idle-head test: the survivors of each norm lens against the other rows; and the
  effect-weighted head rule (chosen after seeing the reader's numbers, labelled so).

Not here: the rows' columns (rows.py), the margins of the counts (margins.py).
"""
from __future__ import annotations

import numpy as np

from ..bootstrap import Estimate, Resampler, units
from ..corpus import Corpus, Displayed, displayed
from ..instrument import LENSES
from .margins import fill_margins
from .readings import CHEAP, FIXES, POSITION_BASELINES, TRACKED, position_scores
from .records import AblationStats, FixStats, GroundTruth, HarmfulRows, IdleHeads, Tracking, TruthRun, Yardstick


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
    fill_margins(corpus, rows, alt_rows, table, alt_table, m, ms, threshold, harmful_at, ablation, fixes, tracking,
                 idle, weighted_rows, harmful_rows, yardsticks)
    return GroundTruth(
        harmful_threshold=harmful_at, n_threshold_rows=int(sampled.sum()), ablation_every=every["ablation"],
        n_ablation_sentences=len(t.ablation),
        value_zeroing_every=every["zeroing"], n_zeroing_sentences=len(t.zeroing),
        ablation=ablation, fixes=fixes, tracking=tracking, idle=idle,
        bound_effect_spearman=float(sps.spearmanr(bound, effect).statistic),
        bound_effect_spearman_lo=lo, bound_effect_spearman_hi=hi,
        harmful_rows=harmful_rows, yardsticks=yardsticks,
    )
