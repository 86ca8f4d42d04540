"""One sentence's part of Part 8: what the reference is asked on it (`asks`), its answers
reduced to what the rows and the pages read (`fold`), and the bound of every head on every
word:

- the ablation ground truth, on the head each lens opens: the effect on the word of
  removing the sink's part of the head's output, the content's part, the whole head; the
  ablation sink share sink / (sink + content);
- the fixes' token rows, normalized, folded to words as the instrument folds alpha;
- the idle-head bound: each head's bound on its effect on the word,
  sum_j alpha_wj ||f(x_j)||, over that word's median head's.

Not here: the arithmetic of the effects (model/ground_truth.py), the run over the corpus (run.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import instrument, picks
from ..corpus import Corpus, Displayed
from ..instrument import LENSES


def asks(corpus: Corpus, rows: dict[str, Displayed], ablation: set[int], zeroing: set[int],
         alt: dict[str, Displayed] | None = None) -> list:
    """Per sentence, a ground_truth.Ask: in the ablation sample, the (word, layer, head) of
    every lens's displayed row (each once), and of its alternative head (`alt`) where its
    margin is below picks.SEARCHED_BELOW (about 2 % of the rows on all-mpnet-base-v2's 144
    heads, fewer on the MiniLMs), so that a count over the ground truth knows whether a
    reader's rounding could turn it; in the value-zeroing sample, every word's alpha
    layer (and its alternative head's, likewise); every sentence, the fixes' matrices."""
    from ..ground_truth import Ask

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


def normalized(m: np.ndarray) -> np.ndarray:
    total = m.sum(axis=-1, keepdims=True)
    return m / np.where(total > 0, total, 1.0)


def fold(truth, ask, wm: instrument.WordMap) -> Folded:
    """A ground_truth.SentenceTruth -> `Folded`: token rows normalized to 1, then folded to
    words as the instrument folds alpha (mean of the word's rows, sum of its columns)."""
    raw = {"kobayashi2021": truth.kobayashi, "alti": truth.alti}
    fixes = {name: normalized(m) for name, m in raw.items() if m is not None}
    return Folded(
        effects={key: e for key, e in zip(ask.heads, truth.effects)},
        fixes=fixes,
        fix_rows={name: instrument.word_rows(m, wm) for name, m in fixes.items()},
        zeroing={(w, l): (normalized(z).mean(axis=0) @ wm.cols) for (w, l), z in zip(ask.zeroing, truth.zeroing)},
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
