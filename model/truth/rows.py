"""The ground truth beside every displayed row: per lens, the ablation's effects and sink
share on the head the lens opens, and that head's idle-head bound; per fix, its sink share
on the row in the layer of alpha's head (the cheap fixes also in the layer of the strongest
displayed arrow); and the same as results.json keeps it (`rows_json`).

Not here: statistics over the rows (summary.py).
"""
from __future__ import annotations

import numpy as np

from .. import instrument, picks
from ..corpus import Corpus, Displayed
from ..instrument import LENSES
from .readings import CHEAP, FIXES
from .records import TruthRun
from .sentence import ablation_share


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


def rows_json(table: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, list]]:
    """`row_table` as lists for the results (None where value zeroing was not measured)."""
    return {name: {k: [None if np.isnan(v) else float(v) for v in col] for k, col in cols.items()}
            for name, cols in table.items()}
