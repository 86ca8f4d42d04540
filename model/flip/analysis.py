"""The flip's analysis of a set of pairs: rates over (pair, head), intervals over pairs, each
head's tests (heads.py), and the model's own resolution. Heads of layer 0 are counted apart
and left out of every rate: there the pronoun's query and the candidates' keys (and values)
are the same in both sentences (every token before the changed word is), and a softmax keeps
the ratio of two weights whatever the other keys are, so their winner cannot change. That it
does not is checked (`layer0_changed`), not assumed.

The pairs come in two orders (the nouns named one way, then mirrored), analysed together
(the registered analysis) and within each order; the null pairs (a pronoun that refers to
neither noun, pseudo-referents from the pair whose frame they share) get the same analysis,
and the heads that pass on the flip pairs are counted on them (added after the sceptical
reading, study.yml).

Not here: the winners and shifts (measure.py), the per-head tests (heads.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import picks
from ..bootstrap import Resampler
from ..instrument import LENSES
from ..study import ORDERS, Bootstrap, FlipHeads, FlipPair
from .heads import head_tests
from .records import FlipLens, FlipSet, PairResult, PassingOnNull


@dataclass
class MeasuredPairs:
    """Per pair of a set, per lens: what the analysis reads, [P, L * nh] (layer 0 included)."""
    pairs: list[FlipPair]
    win_a: dict[str, np.ndarray]     # winner's index among the candidates, first sentence
    win_b: dict[str, np.ndarray]
    shift: dict[str, np.ndarray]     # toward the reader
    closer: np.ndarray               # [P, 2] the candidate the pronoun's final state is closer to
    agrees: np.ndarray               # [P, 2] ... is the reader's referent
    # How near each decision came to turning (picks.py), [P, L * nh]: the winners (either
    # sentence) and the sign of the shift; [P]: the closer candidate (either sentence).
    win_margin: dict[str, np.ndarray]
    shift_margin: dict[str, np.ndarray]
    closer_margin: np.ndarray

    def take(self, idx: np.ndarray) -> "MeasuredPairs":
        """The pairs `idx` alone (a set: an order, the null pairs)."""
        per_lens = lambda x: {lens: v[idx] for lens, v in x.items()}
        return MeasuredPairs([self.pairs[i] for i in idx], per_lens(self.win_a), per_lens(self.win_b),
                             per_lens(self.shift), self.closer[idx], self.agrees[idx], per_lens(self.win_margin),
                             per_lens(self.shift_margin), self.closer_margin[idx])


def with_orders(take, idx: np.ndarray, nh: int, boot: Bootstrap, heads: FlipHeads, keep_pairs: bool) -> FlipSet:
    """A set analysed as a whole, and within each order (whose pairs it does not repeat)."""
    every = take(idx)
    whole = _analyse(every, nh, boot, heads, keep_pairs)
    for order in ORDERS:
        sub = idx[[p.order == order for p in every.pairs]]
        if len(sub):
            whole.orders[order] = _analyse(take(sub), nh, boot, heads, keep_pairs=False)
    if len(whole.orders) == len(ORDERS):
        for lens, summary in whole.lenses.items():
            each = [set(s.lenses[lens].heads.significant) for s in whole.orders.values()]
            summary.heads.significant_in_every_order = [h for h in summary.heads.significant if all(h in e for e in each)]
            summary.heads.n_significant_in_every_order = len(summary.heads.significant_in_every_order)
            if summary.heads.margins:   # turned by any of the sets' significant heads turning
                turned = min(_inf(t.margins["significant"][0]) for t in
                             [summary.heads, *(s.lenses[lens].heads for s in whole.orders.values())])
                summary.heads.margins["n_significant_in_every_order"] = (turned, 1.0)
    return whole


def _analyse(m: MeasuredPairs, nh: int, boot: Bootstrap, heads: FlipHeads, keep_pairs: bool) -> FlipSet:
    """Rates over (pair, head), intervals over pairs; per-head tests; the model's probe."""
    n = len(m.pairs)
    ra = np.array([p.candidates.index(p.referents[0]) for p in m.pairs])[:, None]
    rb = 1 - ra                                           # two candidates
    later = np.arange(m.win_a["alpha"].shape[1]) >= nh    # layer 0 left out
    resampler = Resampler(n, boot.resamples, boot.seed, boot.level)
    lenses = {}
    for lens in LENSES:
        a, b, shift = m.win_a[lens], m.win_b[lens], m.shift[lens]
        changed, follows = a != b, (a == ra) & (b == rb)
        opposes, toward = (a == rb) & (b == ra), shift > 0
        reader_picks = ((a == ra).sum(axis=0) + (b == rb).sum(axis=0)) / (2 * n)
        results = [PairResult(
            sentences=list(p.sentences), candidates=list(p.candidates), referents=list(p.referents),
            order=p.order, source=p.source, changed=int(changed[k, later].sum()),
            follows_reader=int(follows[k, later].sum()), toward_reader=int(toward[k, later].sum()),
            mean_shift=float(shift[k, later].mean()), layer0_changed=int(changed[k, ~later].sum()),
            closer=[str(c) for c in m.closer[k]],
            winners=["".join(map(str, a[k])), "".join(map(str, b[k]))],
            margins=_pair_margins(m.win_margin[lens][k], m.shift_margin[lens][k], later, float(m.closer_margin[k])),
        ) for k, p in enumerate(m.pairs)] if keep_pairs else []
        summary = _summary(lens, n, changed[:, later], follows[:, later], opposes[:, later], toward[:, later],
                           int(changed[:, ~later].sum()), resampler)
        per_head = m.win_margin[lens][:, later].min(axis=0) if n else np.full(int(later.sum()), np.inf)
        summary.heads = head_tests(follows[:, later], opposes[:, later], reader_picks[later], nh, heads, per_head)
        f_counts, o_counts = follows[:, later].sum(axis=0), opposes[:, later].sum(axis=0)
        every_pair = (f_counts >= n - 1)
        summary.margins = {
            "most_pairs_followed": (_max_margin(f_counts, per_head), 1.0),
            "most_pairs_opposed": (_max_margin(o_counts, per_head), 1.0),
            "follows_every_pair": (float(per_head[every_pair].min()) if every_pair.any() else picks.NO_MARGIN, 1.0),
            "layer0_changed": (float(m.win_margin[lens][:, ~later].min()) if n else picks.NO_MARGIN, 1.0),
            "toward_share": (float(m.shift_margin[lens][:, later].min()) if n else picks.NO_MARGIN,
                             1.0 / max(1, changed[:, later].size))}
        summary.pairs = results
        lenses[lens] = summary
    lo, hi = resampler.share(m.agrees.ravel(), np.repeat(np.arange(n), 2))
    both = int(m.agrees.all(axis=1).sum())
    first = sum(p.named_first(0) == p.referents[0] for p in m.pairs)
    closer = float(m.closer_margin.min()) if n else picks.NO_MARGIN
    return FlipSet(n, lenses, float(m.agrees.mean()), lo, hi, both, both / n, first,
                   margins={"model_flips_with_reader": (closer, 1.0), "model_flips_share": (closer, 1.0 / max(1, n)),
                            **{f"model_follows{x}": (closer, 0.5 / max(1, n)) for x in ("", "_lo", "_hi")}})


def _inf(margin: float | None) -> float:
    return picks.NO_MARGIN if margin is None else float(margin)


def _pair_margins(win_margin: np.ndarray, shift_margin: np.ndarray, later: np.ndarray, closer: float) -> dict:
    """One pair's counts over its heads (layer 0 apart), with their margins (picks.py)."""
    win, shift = float(win_margin[later].min()), float(shift_margin[later].min())
    return {"changed": (win, 1.0), "follows_reader": (win, 1.0), "toward_reader": (shift, 1.0),
            "layer0_changed": (float(win_margin[~later].min()), 1.0), "closer": (closer, picks.NO_MARGIN)}


def _summary(lens: str, n_pairs: int, changed: np.ndarray, follows: np.ndarray, opposes: np.ndarray,
             toward: np.ndarray, layer0_changed: int, resampler: Resampler) -> FlipLens:
    """[n_pairs, heads] flags -> rates over (pair, head), intervals over pairs."""
    unit = np.repeat(np.arange(n_pairs), changed.shape[1])
    ci = lambda flags: resampler.share(flags.ravel(), unit)
    (c_lo, c_hi), (t_lo, t_hi), (f_lo, f_hi) = ci(changed), ci(toward), ci(follows)
    return FlipLens(
        lens=lens, n_pairs=n_pairs, n_heads=changed.shape[1],
        changed_share=float(changed.mean()), changed_share_lo=c_lo, changed_share_hi=c_hi,
        toward_share=float(toward.mean()), toward_share_lo=t_lo, toward_share_hi=t_hi,
        follows_share=float(follows.mean()), follows_share_lo=f_lo, follows_share_hi=f_hi,
        follows_every_pair=int(follows.all(axis=0).sum()),
        most_pairs_followed=int(follows.sum(axis=0).max()),
        opposes_share=float(opposes.mean()),
        most_pairs_opposed=int(opposes.sum(axis=0).max()),
        layer0_changed=layer0_changed,
    )


def _max_margin(counts: np.ndarray, per_head: np.ndarray) -> float:
    """For the largest of per-head counts: the smallest margin of a head whose count, one more
    or one less, could change it (at the maximum, or one below)."""
    near = counts >= counts.max() - 1 if counts.size else np.zeros(0, bool)
    return float(per_head[near].min()) if near.any() else picks.NO_MARGIN


def head_changes(m: "MeasuredPairs", lens: str, nh: int) -> tuple[np.ndarray, np.ndarray]:
    """(follows, opposes) [P, heads outside layer 0] of one set's pairs under one lens."""
    ra = np.array([p.candidates.index(p.referents[0]) for p in m.pairs])[:, None]
    later = np.arange(m.win_a[lens].shape[1]) >= nh
    a, b = m.win_a[lens][:, later], m.win_b[lens][:, later]
    return (a == ra) & (b == 1 - ra), (a == 1 - ra) & (b == ra)


def _carried(follows: np.ndarray, opposes: np.ndarray, boot: Bootstrap) -> tuple:
    """Changes summed over heads [P, H] -> (follows, opposes, share with the reader, its
    interval over pairs); resamples that draw no change are left out. Without any change
    (no head passes) the share and its interval are None: JSON has no NaN."""
    f, o = follows.sum(axis=1).astype(float), opposes.sum(axis=1).astype(float)   # per pair
    total = f.sum() + o.sum()
    if not total:
        return int(f.sum()), int(o.sum()), None, None, None
    c = Resampler(len(f), boot.resamples, boot.seed, boot.level)
    drawn_f, drawn_n = c.counts @ f, c.counts @ (f + o)
    return (int(f.sum()), int(o.sum()), float(f.sum() / total),
            *c.interval(drawn_f[drawn_n > 0] / drawn_n[drawn_n > 0]))


def passing_on_null(flip_changes: tuple[np.ndarray, np.ndarray], null_changes: tuple[np.ndarray, np.ndarray],
                    passing: np.ndarray, boot: Bootstrap) -> PassingOnNull:
    """The heads `passing` flags (those that pass on the flip pairs), on the null pairs and on
    the flip pairs: (follows, opposes) [P, H] of each set."""
    on = lambda changes: _carried(changes[0][:, passing], changes[1][:, passing], boot)
    return PassingOnNull(int(passing.sum()), *on(null_changes), *on(flip_changes))
