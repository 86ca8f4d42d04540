"""Per head (study.yml, `flip_heads`): a one-sided sign test of follows against opposes over
the pairs where its winner changes, Bonferroni over the model's heads outside layer 0, and,
for the largest follow count over heads, a null in which each pair's two sentences are
swapped at random (follows and opposes trade places for every head of that pair at once).
Added after the sceptical reading (study.yml): how many heads change often enough to pass
at all (the set's power), and the best head by uncorrected p. With the margin of each of
these (model/picks.py): a head whose one count more or less would change it.

Not here: the counts the tests read (analysis.py).
"""
from __future__ import annotations

import numpy as np

from .. import picks
from ..study import FlipHeads
from .records import HeadTests


def head_tests(follows: np.ndarray, opposes: np.ndarray, reader_picks: np.ndarray, nh: int, settings: FlipHeads,
               per_head_margin: np.ndarray | None = None) -> HeadTests:
    """follows, opposes [P, H] (heads outside layer 0, from layer 1 on) -> per-head sign
    tests, Bonferroni over the H heads, and the sign-flip null of the largest follow count.
    With each head's margin (its nearest winner to turning, picks.py), the margins of what
    is read off the tests: a head whose one count more or less would change it."""
    f, o = follows.sum(axis=0), opposes.sum(axis=0)
    H = len(f)
    p = np.array([_sign_test(k, j) for k, j in zip(f, o)])
    t = _read_tests(f, o, p, settings.alpha)
    name = lambda h: f"L{h // nh + 1}H{h % nh}"
    best = t["best"]
    out = HeadTests(
        layer=[h // nh + 1 for h in range(H)], head=[h % nh for h in range(H)],
        follows=f.tolist(), opposes=o.tolist(), picks_reader=reader_picks.tolist(),
        p_value=p.tolist(), p_corrected=np.minimum(1.0, p * H).tolist(), family=H, alpha=settings.alpha,
        n_significant=t["n_significant"],
        significant=[name(h) for h in t["significant"]],
        best=name(best), best_follows=int(f[best]), best_opposes=int(o[best]), best_p_value=float(p[best]),
        best_p_corrected=float(min(1.0, p[best] * H)), best_picks_reader=float(reader_picks[best]),
        null_max_follows=null_max_follows(follows, opposes, settings),
        permutations=settings.permutations,
        n_powered=t["n_powered"],
    )
    if per_head_margin is not None:
        turned = _one_change_margins(f, o, p, settings.alpha, per_head_margin)
        out.margins = {"per_head": per_head_margin.tolist(),
                       **{k: (turned["best"], 1.0) for k in ("best_follows", "best_opposes")},
                       "best": (turned["best"], picks.NO_MARGIN), "significant": (turned["significant"], picks.NO_MARGIN),
                       "n_significant": (turned["n_significant"], 1.0), "n_powered": (turned["n_powered"], 1.0)}
    return out


def _sign_test(k: int, j: int) -> float:
    """One-sided binomial sign test of k follows against j opposes (1 without a change)."""
    from scipy.stats import binomtest   # here: scipy.stats costs a warm build 0.6 s to import

    return binomtest(int(k), int(k + j), 0.5, alternative="greater").pvalue if k + j else 1.0


def _read_tests(f: np.ndarray, o: np.ndarray, p: np.ndarray, alpha: float) -> dict:
    """What the pages read off the per-head tests: the best head by uncorrected p (ties: most
    follows, then the lowest head; the corrected order wherever no p is capped at 1, and an
    order where all are), the heads below alpha after Bonferroni, and the heads that could
    pass at all (all their changes the reader's way: p = 2^-n)."""
    H = len(f)
    corrected = np.minimum(1.0, p * H)
    order = sorted(range(H), key=lambda h: (p[h], -f[h], h))
    changes = f + o
    return {"best": order[0], "significant": tuple(h for h in order if corrected[h] < alpha),
            "n_significant": int((corrected < alpha).sum()),
            "n_powered": int(((changes > 0) & (np.minimum(1.0, 0.5 ** changes * H) < alpha)).sum())}


def _one_change_margins(f: np.ndarray, o: np.ndarray, p: np.ndarray, alpha: float, per_head: np.ndarray) -> dict:
    """Per thing `_read_tests` reads, the smallest margin of a head whose follow or oppose
    count, one more or one less (one winner turning), would change it; heads whose margin is
    above picks.SEARCHED_BELOW are taken as unable to turn."""
    base = _read_tests(f, o, p, alpha)
    out = {k: picks.NO_MARGIN for k in base}
    for h in np.flatnonzero(per_head < picks.SEARCHED_BELOW):
        for df, do in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            f2, o2, p2 = f.copy(), o.copy(), p.copy()
            f2[h], o2[h] = f[h] + df, o[h] + do
            if f2[h] < 0 or o2[h] < 0:
                continue
            p2[h] = _sign_test(f2[h], o2[h])
            for k, v in _read_tests(f2, o2, p2, alpha).items():
                if v != base[k]:
                    out[k] = min(out[k], float(per_head[h]))
    return out


def null_max_follows(follows: np.ndarray, opposes: np.ndarray, settings: FlipHeads) -> float:
    """The `null_quantile` of the largest follow count over heads when each pair's two
    sentences are swapped with probability 1/2: a swapped pair's follows become opposes
    and its opposes follows, for every head at once (the heads of a pair stay together)."""
    rng = np.random.default_rng(settings.seed)
    swap = rng.integers(0, 2, size=(settings.permutations, follows.shape[0])).astype(float)   # [N, P]
    f, o = follows.astype(float), opposes.astype(float)
    counts = f.sum(axis=0) + swap @ (o - f)                                                    # [N, H]
    return float(np.quantile(counts.max(axis=1), settings.null_quantile))
