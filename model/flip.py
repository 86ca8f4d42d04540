"""The adjective flip: Winograd-style minimal pairs, and whether any head follows the reader.

In each pair the two sentences differ in one word after the pronoun, and a reader's
referent for the pronoun flips from one candidate noun to the other. Per head, in the
pronoun's word row (before any renormalization; the candidates are content words, so
renormalizing would not change their order):

- the winner is the candidate with the larger weight; a head "changes" when its winner
  differs between the two sentences;
- its shift toward the reader is how much its preference for the second sentence's
  referent over the first's grew from the first sentence to the second (positive:
  it moved the way the reader did);
- heads of layer 0 are counted apart and left out of every rate: there the pronoun's
  query and the candidates' keys (and values) are the same in both sentences (every
  token before the changed word is), and a softmax keeps the ratio of two weights
  whatever the other keys are, so their winner cannot change. That it does not is
  checked (`layer0_changed`), not assumed.

As a reference for what the model itself resolves: which candidate the pronoun's
final hidden state is closer to (cosine), in each sentence.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from . import activations, instrument
from .bootstrap import Resampler
from .instrument import LENSES
from .study import Bootstrap, FlipPair
from .tokenize import Tokenized, tokenize
from .weights import Checkpoint


@dataclass
class PairResult:
    sentences: list[str]
    candidates: list[str]
    referents: list[str]          # the reader's, in the first and the second sentence
    changed: int                  # heads (layer 0 left out) whose winner differs
    follows_reader: int           # heads whose winner is the reader's referent in both
    toward_reader: int            # heads whose preference shifted toward the reader
    mean_shift: float             # mean shift toward the reader over those heads
    layer0_changed: int           # heads of layer 0 whose winner differs: must be 0
    winners: list[list[str]]      # per head (layer * nh + head): [winner in first, in second]


@dataclass
class FlipLens:
    lens: str
    n_pairs: int
    n_heads: int                  # per pair, layer 0 left out
    changed_share: float          # of (pair, head): the winner changes
    changed_share_lo: float
    changed_share_hi: float
    toward_share: float           # of (pair, head): shifted toward the reader (0.5 if blind)
    toward_share_lo: float
    toward_share_hi: float
    follows_share: float          # of (pair, head): the reader's referent wins in both
    follows_share_lo: float
    follows_share_hi: float
    follows_every_pair: int       # heads that follow the reader in every pair
    most_pairs_followed: int      # the most pairs any one head follows the reader in
    opposes_share: float          # of (pair, head): the winner changes the other way round
    most_pairs_opposed: int       # the most pairs any one head goes against the reader in (the max's baseline)
    layer0_changed: int           # over every pair: must be 0
    pairs: list[PairResult] = field(default_factory=list)


@dataclass
class FlipResults:
    n_pairs: int
    lenses: dict[str, FlipLens]
    model_follows: float          # of sentences: the pronoun's final state is closer to the reader's referent
    model_follows_lo: float
    model_follows_hi: float
    model_flips_with_reader: int  # pairs where that closer candidate flips the reader's way
    model_flips_share: float
    referent_a_named_first: int   # pairs whose first sentence's referent is the first-named candidate
    # The first pair, every head, for a figure: [weight on candidate 0, on candidate 1]
    # in the first sentence, then in the second (alpha lens).
    example: list[list[float]] = field(default_factory=list)


def _word_index(tok: Tokenized, word: str) -> int:
    return [w.lower() for w in tok.words].index(word.lower())


def _mean_state(hidden: np.ndarray, tok: Tokenized, w: int) -> np.ndarray:
    return hidden[[t for t, x in enumerate(tok.word_ids) if x == w]].mean(axis=0)


def _closer(hidden: np.ndarray, tok: Tokenized, pair: FlipPair) -> str:
    """The candidate the pronoun's final hidden state is closer to (cosine)."""
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    p = _mean_state(hidden, tok, _word_index(tok, pair.pronoun))
    sims = [cos(p, _mean_state(hidden, tok, _word_index(tok, c))) for c in pair.candidates]
    return pair.candidates[int(np.argmax(sims))]


def measure_pairs(ckpt: Checkpoint, pairs: list[FlipPair], boot: Bootstrap) -> FlipResults:
    if not pairs:  # a study without pairs (the CLI's): nothing to measure, nothing to resample
        nan = float("nan")
        return FlipResults(0, {}, nan, nan, nan, 0, nan, 0)
    texts = [s for p in pairs for s in p.sentences]
    toks = [tokenize(s, ckpt.tokenizer_dir, ckpt.config.max_position, where=f"flip pair {i // 2 + 1}")
            for i, s in enumerate(texts)]
    acts = activations.from_reference(ckpt, [t.ids for t in toks]) if toks else []
    n_heads = ckpt.config.n_layer * ckpt.config.n_head
    later = np.arange(n_heads) >= ckpt.config.n_head              # layer 0 left out
    resampler = Resampler(len(pairs), boot.resamples, boot.seed, boot.level)
    lenses = {}
    for lens in LENSES:
        results, changed, follows, opposes, toward = [], [], [], [], []
        for k, pair in enumerate(pairs):
            ra, rb = (pair.candidates.index(r) for r in pair.referents)
            wa, wb = (_candidate_weights(toks[2 * k + j], acts[2 * k + j], pair, lens) for j in (0, 1))
            win_a, win_b = wa.argmax(axis=1), wb.argmax(axis=1)           # [L * nh]
            shift = (wb[:, rb] - wb[:, ra]) - (wa[:, rb] - wa[:, ra])
            changed.append((win_a != win_b)[later])
            follows.append(((win_a == ra) & (win_b == rb))[later])
            opposes.append(((win_a == rb) & (win_b == ra))[later])
            toward.append((shift > 0)[later])
            results.append(PairResult(
                sentences=list(pair.sentences), candidates=list(pair.candidates), referents=list(pair.referents),
                changed=int(changed[-1].sum()), follows_reader=int(follows[-1].sum()),
                toward_reader=int(toward[-1].sum()), mean_shift=float(shift[later].mean()),
                layer0_changed=int((win_a != win_b)[~later].sum()),
                winners=[[pair.candidates[x], pair.candidates[y]] for x, y in zip(win_a, win_b)],
            ))
        lenses[lens] = _summary(lens, results, np.array(changed), np.array(follows), np.array(opposes),
                                np.array(toward), resampler)
    closer = [_closer(a.hidden, t, pairs[i // 2]) for i, (t, a) in enumerate(zip(toks, acts))]
    agrees = np.array([closer[i] == pairs[i // 2].referents[i % 2] for i in range(len(closer))])
    lo, hi = resampler.share(agrees, np.repeat(np.arange(len(pairs)), 2))
    both = int(agrees.reshape(-1, 2).all(axis=1).sum()) if len(pairs) else 0
    example = []
    if pairs:
        wa, wb = (_candidate_weights(toks[j], acts[j], pairs[0], "alpha") for j in (0, 1))
        example = np.concatenate([wa, wb], axis=1).tolist()
    first = sum(_first_named(p) == p.referents[0] for p in pairs)
    return FlipResults(len(pairs), lenses, float(agrees.mean()), lo, hi, both, both / max(1, len(pairs)), first, example)


def _first_named(pair: FlipPair) -> str:
    """The candidate that comes first in the pair's first sentence."""
    words = [w.lower() for w in re.findall(r"\w+", pair.sentences[0])]
    return min(pair.candidates, key=lambda c: words.index(c.lower()))


def _candidate_weights(tok: Tokenized, a, pair: FlipPair, lens: str) -> np.ndarray:
    """The pronoun's full word row on each candidate, every head: [L * nh, 2]."""
    norms = instrument.lens_norms(a.value_norm, a.output_norm)[lens]
    rows = instrument.word_rows(instrument.lens_rows(a.alpha, norms), instrument.word_map(tok.word_ids))
    cols = [_word_index(tok, c) + 1 for c in pair.candidates]               # +1: column 0 is [CLS]
    return rows[:, :, _word_index(tok, pair.pronoun)][:, :, cols].reshape(-1, len(cols))


def _summary(lens: str, pairs: list[PairResult], changed: np.ndarray, follows: np.ndarray, opposes: np.ndarray,
             toward: np.ndarray, resampler: Resampler) -> FlipLens:
    """[n_pairs, heads] flags -> rates over (pair, head), intervals over pairs."""
    unit = np.repeat(np.arange(len(pairs)), changed.shape[1])
    ci = lambda flags: resampler.share(flags.ravel(), unit)
    (c_lo, c_hi), (t_lo, t_hi), (f_lo, f_hi) = ci(changed), ci(toward), ci(follows)
    return FlipLens(
        lens=lens, n_pairs=len(pairs), n_heads=changed.shape[1],
        changed_share=float(changed.mean()), changed_share_lo=c_lo, changed_share_hi=c_hi,
        toward_share=float(toward.mean()), toward_share_lo=t_lo, toward_share_hi=t_hi,
        follows_share=float(follows.mean()), follows_share_lo=f_lo, follows_share_hi=f_hi,
        follows_every_pair=int(follows.all(axis=0).sum()),
        most_pairs_followed=int(follows.sum(axis=0).max()),
        opposes_share=float(opposes.mean()),
        most_pairs_opposed=int(opposes.sum(axis=0).max()),
        layer0_changed=sum(p.layer0_changed for p in pairs),
        pairs=pairs,
    )
