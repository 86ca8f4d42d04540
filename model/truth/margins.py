"""How near each of Part 8's counts came to turning (model/picks.py): the nearest row to its
threshold, and the rows whose alternative head would count otherwise; written into the
records' `margins` once summary.py has computed their figures.

Not here: the figures themselves (summary.py).
"""
from __future__ import annotations

import numpy as np

from .. import picks
from ..corpus import Corpus, Displayed
from .records import HarmfulRows


def fill_margins(corpus: Corpus, rows: dict[str, Displayed], alt_rows: dict[str, Displayed], table: dict,
                 alt_table: dict, m: np.ndarray, ms: np.ndarray, threshold: float, harmful_at: float, ablation: dict,
                 fixes: dict, tracking: dict, idle: dict, weighted_rows: dict, harmful_rows: HarmfulRows,
                 yardsticks: dict) -> None:
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
