"""Sensitivity: the headline numbers and the verdict under each alternative to a choice that
could decide them (study.yml `sensitivity`, fixed before its results were read).

The registered rule stays the verdict; this only shows how far each number rests on the
choices made. Each variant changes one choice and keeps the rest registered:
- the positional threshold (refitted on the fit half; 1.0: no head is ever positional);
- the near-tie tolerance;
- the head rule: the head whose row keeps most content (it would hide the sink), or one
  head for every word (the head the registered rule opens most often on the fit half);
- punctuation counted as sink (the same rows, their punctuation share added to the sink).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import picks, stats
from .corpus import Corpus, Displayed, displayed, positional_heads
from .instrument import LENSES
from .stats import CLS_LONG   # a [CLS] vector at least half as long as the mean content token's
from .study import Study


@dataclass
class Variant:
    choice: str                     # "registered", "positional_threshold", "tie_tolerance", ...
    value: str                      # the alternative, as written in study.yml
    median_sink: dict[str, float]   # lens -> median sink share, held-out rows
    above_50_share: dict[str, float]  # lens -> share of held-out rows above the threshold
    rows_above: dict[str, int]      # stop-rule lens -> rows above the threshold, every row (the rule's count)
    rows_above_share: dict[str, float]  # ... as a share of every row
    adopted: bool                   # the registered stop rule's verdict on these rows
    survivors: int                  # held-out rows above the threshold under the first stop-rule lens
    survivors_median_cls_ratio: float | None = None  # their own sentence-and-head [CLS] norm ratio
    survivors_cls_above_half: float | None = None    # share of them whose own [CLS] ratio is above 0.5
    heads: list[int] = field(default_factory=list)   # one_head_for_all: the head, [layer, head]
    id: str = ""                    # its name in the numbers' keys: "registered", "positional_0p7", ...
    margins: dict = field(default_factory=dict)      # key after the variant's id -> (margin, step) (picks.py)

    def __post_init__(self):
        short = {"positional_threshold": "positional", "tie_tolerance": "ties", "head_rule": "rule",
                 "punctuation_as_sink": "punct_as_sink"}
        value = "" if self.choice in ("registered", "punctuation_as_sink") else "_" + self.value.replace(".", "p")
        self.id = short.get(self.choice, self.choice) + value


def _variant(corpus: Corpus, rows: dict[str, Displayed], study: Study, choice: str, value: str,
             punct_as_sink: bool = False) -> Variant:
    rule, test = study.stop_rule, study.halves["test"]
    sink = {lens: d.sink + d.punct if punct_as_sink else d.sink for lens, d in rows.items()}
    held = {lens: rows[lens].where(test) for lens in rows}
    above = {lens: int((sink[lens] > rule.threshold).sum()) for lens in rule.lenses}
    first = rule.lenses[0]
    d, m = rows[first], held[first]
    survive = np.flatnonzero(m & (sink[first] > rule.threshold))
    ratios = [stats.ratio_of(corpus.acts[d.sentence[r]], first, "cls")[d.layer[r], d.head[r]] for r in survive]
    # Margins: each count's nearest row, on the heads this variant's rule opens or would
    # open instead (picks.py).
    alt = {lens: rows[lens].alternative(corpus, lens) for lens in rule.lenses}
    alt_sink = {lens: alt[lens].sink + alt[lens].punct if punct_as_sink else alt[lens].sink for lens in alt}
    counted = {lens: picks.count_margin(sink[lens], rule.threshold, alt_sink[lens], rows[lens].margin) for lens in alt}
    held_margin = {lens: picks.count_margin(sink[lens][held[lens]], rule.threshold, alt_sink[lens][held[lens]],
                                            rows[lens].margin[held[lens]]) for lens in alt}
    n_rows = {lens: max(1, len(sink[lens])) for lens in alt}
    margins = {f"{lens}.rows_above": (counted[lens], 1.0) for lens in alt}
    margins |= {f"{lens}.rows_above_share": (counted[lens], 1.0 / n_rows[lens]) for lens in alt}
    margins |= {f"{lens}.above_50_share": (held_margin[lens], 1.0 / max(1, int(held[lens].sum()))) for lens in alt}
    margins |= {"survivors": (held_margin[first], 1.0),
                "adopted": (min(picks.verdict_margin(above[lens], rule.max_rows_above, counted[lens]) for lens in alt), 1.0)}
    return Variant(
        choice=choice, value=value,
        median_sink={lens: float(np.median(sink[lens][held[lens]])) for lens in rows},
        above_50_share={lens: float((sink[lens][held[lens]] > rule.threshold).mean()) for lens in rows},
        rows_above=above,
        rows_above_share={lens: above[lens] / max(1, len(sink[lens])) for lens in above},
        adopted=any(n <= rule.max_rows_above for n in above.values()),
        survivors=int(survive.size),
        survivors_median_cls_ratio=float(np.median(ratios)) if ratios else None,
        # A share moves by the rows that change; the median can jump between the survivors
        # on heads that discount [CLS] and those that hardly do (study.yml, added later).
        survivors_cls_above_half=float(np.mean(np.array(ratios) > CLS_LONG)) if ratios else None,
        margins=margins,
    )


def one_head(rows: Displayed, sentences: list[int], n_heads: int) -> tuple[tuple[int, int], float]:
    """The head the rule opens most often on `sentences` (ties: the lowest layer, then head),
    and that pick's margin: the row decision that would turn it, among the rows on it and on
    the runner-up (picks.lead_margin)."""
    m = rows.where(sentences)
    flat = rows.layer[m] * n_heads + rows.head[m]
    counts = np.bincount(flat)
    best = int(counts.argmax())
    runner = int(np.argsort(-counts, kind="stable")[1]) if (counts > 0).sum() > 1 else best
    lead = int(counts[best] - counts[runner])
    margin = picks.lead_margin(lead, rows.margin[m][np.isin(flat, [best, runner])]) if runner != best else picks.NO_MARGIN
    return (best // n_heads, best % n_heads), margin


def variants(corpus: Corpus, rows: dict[str, Displayed], excluded: dict[str, np.ndarray], study: Study,
             n_heads: int) -> list[Variant]:
    """The registered rows first, then every alternative study.yml lists."""
    alt, tol, fit = study.sensitivity, study.tie_tolerance, study.halves["fit"]
    out = [_variant(corpus, rows, study, "registered", "")]
    for t in alt.positional_threshold:
        refit = {lens: positional_heads(corpus, lens, t, fit) for lens in LENSES}
        out.append(_variant(corpus, {lens: displayed(corpus, lens, refit[lens], tol) for lens in LENSES},
                            study, "positional_threshold", f"{t:g}"))
    for t in alt.tie_tolerance:
        out.append(_variant(corpus, {lens: displayed(corpus, lens, excluded[lens], t) for lens in LENSES},
                            study, "tie_tolerance", f"{t:g}"))
    for rule in alt.head_rule:
        if rule == "largest_content_mass":
            alt_rows = {lens: displayed(corpus, lens, excluded[lens], tol, score="content_mass") for lens in LENSES}
            out.append(_variant(corpus, alt_rows, study, "head_rule", rule))
        elif rule == "one_head_for_all":
            picked = {lens: one_head(rows[lens], fit, n_heads) for lens in LENSES}
            only = {lens: np.ones_like(excluded[lens]) for lens in LENSES}
            for lens, ((l, h), _) in picked.items():
                only[lens][l, h] = False
            v = _variant(corpus, {lens: displayed(corpus, lens, only[lens], tol) for lens in LENSES},
                         study, "head_rule", rule)
            (layer, head), margin = picked[study.stop_rule.lenses[0]]
            v.heads = [layer, head]
            turned = min(m for _, m in picked.values())   # any lens's head turning changes every row of it
            v.margins = {k: (min(m, turned), step) for k, (m, step) in v.margins.items()} | {
                "layer": (margin, picks.NO_MARGIN), "head": (margin, picks.NO_MARGIN)}
            out.append(v)
        else:
            raise ValueError(f"unknown head rule {rule!r} in study.yml sensitivity")
    if alt.punctuation_as_sink:
        out.append(_variant(corpus, rows, study, "punctuation_as_sink", "yes", punct_as_sink=True))
    return out
