"""Part 9's readings: the sink shares the instrument could show for every displayed row, each
on the head it opens (each lens on its own, the norm lenses also on alpha's, the later fixes
in the layer of alpha's head, the effect-weighted rule on its own), the same on each row's
alternative pick (what a machine rounding the nearest near-tie the other way would read),
and so the (word, layer, head) whose truths each sentence is asked for.

Not here: the truths (truths.py), the scores (scores.py).
"""
from __future__ import annotations

import numpy as np

from .. import picks
from ..corpus import Corpus, Displayed, on_heads
from ..instrument import LENSES


# The readings held to alpha's head's truth (the others open heads of their own)
ON_ALPHAS_HEAD = ("alpha", "value_norm_on_alpha", "output_norm_on_alpha", "kobayashi2021", "alti", "value_zeroing")


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
    from ..instrument import sink_share
    from ..truth import CHEAP

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


def fix_shares(table: dict) -> dict[str, np.ndarray]:
    """The later fixes' sink shares on alpha's layer (truth.row_table), per displayed row
    (value zeroing: NaN off Part 8's sample)."""
    from ..truth import FIXES

    return {fix: table[fix]["sink_share"] for fix in FIXES}
