"""The flip pairs through the model (`measure_pairs`). Per pair and head, in the pronoun's
word row (before any renormalization; the candidates are content words, so renormalizing
would not change their order):

- the winner is the candidate with the larger weight; a head "changes" when its winner
  differs between the two sentences; it "follows" the reader when its winner is the
  reader's referent in both, "opposes" when it is the other candidate in both;
- its shift toward the reader is how much its preference for the second sentence's
  referent over the first's grew from the first sentence to the second (positive:
  it moved the way the reader did).

As a reference for what the model itself resolves: which candidate the pronoun's
final hidden state is closer to (cosine), in each sentence.

Not here: what is read off the winners (analysis.py, heads.py).
"""
from __future__ import annotations

import numpy as np

from .. import activations, instrument, picks
from ..instrument import LENSES
from ..study import Bootstrap, FlipHeads, FlipPair
from ..tokenize import Tokenized, tokenize
from ..weights import Checkpoint
from .analysis import MeasuredPairs, head_changes, passing_on_null, with_orders
from .records import FlipResults


def _word_index(tok: Tokenized, word: str) -> int:
    return [w.lower() for w in tok.words].index(word.lower())


def _mean_state(hidden: np.ndarray, tok: Tokenized, w: int) -> np.ndarray:
    return hidden[[t for t, x in enumerate(tok.word_ids) if x == w]].mean(axis=0)


def _closer(hidden: np.ndarray, tok: Tokenized, pair: FlipPair) -> tuple[str, float]:
    """The candidate the pronoun's final hidden state is closer to (cosine), and the pick's
    margin (picks.py)."""
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    p = _mean_state(hidden, tok, _word_index(tok, pair.pronoun))
    sims = [cos(p, _mean_state(hidden, tok, _word_index(tok, c))) for c in pair.candidates]
    pick = picks.best(sims)
    return pair.candidates[pick.index], pick.margin


def measure_pairs(ckpt: Checkpoint, pairs: list[FlipPair], boot: Bootstrap, heads: FlipHeads | None = None,
                  null_pairs: list[FlipPair] = ()) -> FlipResults:
    if not pairs:  # a study without pairs (the CLI's): nothing to measure, nothing to resample
        nan = float("nan")
        return FlipResults(0, {}, nan, nan, nan, 0, nan, 0)
    if heads is None:
        raise ValueError("flip pairs need the per-head test settings (study.yml: flip_heads)")
    every = list(pairs) + list(null_pairs)
    texts = [s for p in every for s in p.sentences]
    kind = lambda i: f"flip pair {i + 1}" if i < len(pairs) else f"null pair {i - len(pairs) + 1}"
    toks = [tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position, where=kind(i // 2)) for i, s in enumerate(texts)]
    acts = activations.from_reference(ckpt, [t.ids for t in toks])
    measured = _measure(every, toks, acts)
    nh = ckpt.config.n_head
    take = measured.take
    flip_idx, null_idx = np.arange(len(pairs)), np.arange(len(pairs), len(every))
    out = with_orders(take, flip_idx, nh, boot, heads, keep_pairs=True)
    null = with_orders(take, null_idx, nh, boot, heads, keep_pairs=True) if len(null_idx) else None
    on_null = {}
    if null is not None:
        for lens, summary in out.lenses.items():
            passing = np.array(summary.heads.p_corrected) < heads.alpha
            on_null[lens] = passing_on_null(head_changes(take(flip_idx), lens, nh), head_changes(take(null_idx), lens, nh),
                                            passing, boot)
            # which heads pass, and their winners on either set
            which = summary.heads.margins["significant"][0]
            on = lambda s: float(np.array(s.lenses[lens].heads.margins["per_head"])[passing].min(initial=np.inf))
            on_null[lens].margins = {"heads": (which, 1.0),
                                     **{f: (min(which, on(null)), 1.0) for f in ("null_follows", "null_opposes")},
                                     **{f: (min(which, on(out)), 1.0) for f in ("flip_follows", "flip_opposes")}}
    wa, wb = (_candidate_weights(toks[j], acts[j], pairs[0], "alpha") for j in (0, 1))
    return FlipResults(**vars(out), null=null, passing_on_null=on_null,
                       example=np.concatenate([wa, wb], axis=1).tolist())


def _measure(pairs: list[FlipPair], toks: list[Tokenized], acts: list) -> MeasuredPairs:
    win_a, win_b, shift, win_margin, shift_margin = {}, {}, {}, {}, {}
    for lens in LENSES:
        a_, b_, s_, wm_, sm_ = [], [], [], [], []
        for k, pair in enumerate(pairs):
            ra, rb = (pair.candidates.index(r) for r in pair.referents)
            wa, wb = (_candidate_weights(toks[2 * k + j], acts[2 * k + j], pair, lens) for j in (0, 1))
            a_.append(wa.argmax(axis=1))
            b_.append(wb.argmax(axis=1))
            s_.append((wb[:, rb] - wb[:, ra]) - (wa[:, rb] - wa[:, ra]))
            wm_.append(np.minimum(picks.top_margins(wa), picks.top_margins(wb)))
            size = np.maximum(np.abs(wa).max(axis=1), np.abs(wb).max(axis=1))     # the weights the shift is made of
            sm_.append(np.where(s_[-1] != 0, np.abs(s_[-1]) / np.where(size > 0, size, 1.0), np.inf))
        win_a[lens], win_b[lens], shift[lens] = np.array(a_), np.array(b_), np.array(s_)
        win_margin[lens], shift_margin[lens] = np.array(wm_), np.array(sm_)
    closer = [_closer(a.hidden, t, pairs[i // 2]) for i, (t, a) in enumerate(zip(toks, acts))]
    names = np.array([c for c, _ in closer]).reshape(-1, 2)
    agrees = names == np.array([p.referents for p in pairs])
    closer_margin = np.array([m for _, m in closer]).reshape(-1, 2).min(axis=1)
    return MeasuredPairs(list(pairs), win_a, win_b, shift, names, agrees, win_margin, shift_margin, closer_margin)


def _candidate_weights(tok: Tokenized, a, pair: FlipPair, lens: str) -> np.ndarray:
    """The pronoun's full word row on each candidate, every head: [L * nh, 2]."""
    norms = instrument.lens_norms(a.value_norm, a.output_norm)[lens]
    rows = instrument.word_rows(instrument.lens_rows(a.alpha, norms), instrument.word_map(tok.word_ids))
    cols = [_word_index(tok, c) + 1 for c in pair.candidates]               # +1: column 0 is [CLS]
    return rows[:, :, _word_index(tok, pair.pronoun)][:, :, cols].reshape(-1, len(cols))
