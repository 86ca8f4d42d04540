"""The adjective flip: Winograd-style minimal pairs, and whether any head follows the reader.

In each pair the two sentences differ in one word after the pronoun, and a reader's
referent for the pronoun flips from one candidate noun to the other. Per head, in the
pronoun's word row (before any renormalization; the candidates are content words, so
renormalizing would not change their order):

- the winner is the candidate with the larger weight; a head "changes" when its winner
  differs between the two sentences; it "follows" the reader when its winner is the
  reader's referent in both, "opposes" when it is the other candidate in both;
- its shift toward the reader is how much its preference for the second sentence's
  referent over the first's grew from the first sentence to the second (positive:
  it moved the way the reader did);
- heads of layer 0 are counted apart and left out of every rate: there the pronoun's
  query and the candidates' keys (and values) are the same in both sentences (every
  token before the changed word is), and a softmax keeps the ratio of two weights
  whatever the other keys are, so their winner cannot change. That it does not is
  checked (`layer0_changed`), not assumed.

Per head (study.yml, `flip_heads`): a one-sided sign test of follows against opposes over
the pairs where its winner changes, Bonferroni over the model's heads outside layer 0, and,
for the largest follow count over heads, a null in which each pair's two sentences are
swapped at random (follows and opposes trade places for every head of that pair at once).
Added after the sceptical reading (study.yml): how many heads change often enough to pass
at all (the set's power), the best head by uncorrected p, and the heads that pass on the
flip pairs counted on the null pairs.

The pairs come in two orders (the nouns named one way, then mirrored), analysed together
(the registered analysis) and within each order; the null pairs (a pronoun that refers to
neither noun, pseudo-referents from the pair whose frame they share) get the same analysis.

As a reference for what the model itself resolves: which candidate the pronoun's
final hidden state is closer to (cosine), in each sentence.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import activations, instrument, picks
from .bootstrap import Resampler
from .instrument import LENSES
from .study import ORDERS, Bootstrap, FlipHeads, FlipPair
from .tokenize import Tokenized, tokenize
from .weights import Checkpoint


@dataclass
class PairResult:
    sentences: list[str]
    candidates: list[str]
    referents: list[str]          # the reader's, in the first and the second sentence (null pairs: pseudo-referents)
    order: str                    # "original" or "mirrored"
    source: int | None            # the pair it mirrors, or (a null pair) whose frame it shares; 1-based
    changed: int                  # heads (layer 0 left out) whose winner differs
    follows_reader: int           # heads whose winner is the reader's referent in both
    toward_reader: int            # heads whose preference shifted toward the reader
    mean_shift: float             # mean shift toward the reader over those heads
    layer0_changed: int           # heads of layer 0 whose winner differs: must be 0
    closer: list[str]             # the candidate the pronoun's final state is closer to, in each sentence
    # Per head, in the order layer * nh + head (layer 0 included), the winner's index in
    # `candidates`: one character per head, in the first sentence and in the second.
    winners: list[str]
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class HeadTests:
    """Per head outside layer 0 (lists in the order layer * nh + head): the sign test."""
    layer: list[int]
    head: list[int]
    follows: list[int]            # pairs whose winner changes the reader's way
    opposes: list[int]            # ... the other way round
    picks_reader: list[float]     # share of the sentences whose winner is the reader's referent (descriptive)
    p_value: list[float]          # one-sided binomial sign test, follows against opposes (1 without a change)
    p_corrected: list[float]      # Bonferroni: times `family`, capped at 1
    family: int                   # heads in the correction: the model's heads outside layer 0
    alpha: float
    n_significant: int
    significant: list[str]        # "L6H3", ...: corrected p below alpha, smallest first
    best: str                     # the smallest uncorrected p (ties: most follows, then the lowest head)
    best_follows: int
    best_opposes: int
    best_p_value: float
    best_p_corrected: float
    best_picks_reader: float
    null_max_follows: float       # the null_quantile of the largest follow count, each pair's sentences swapped at random
    permutations: int
    n_powered: int                # heads that change in enough pairs to pass, were every change the reader's way
    # Filled in for a set with both orders: the heads that pass within every order, each
    # order tested alone (a description of the within-order tests, not a test of its own).
    significant_in_every_order: list[str] = field(default_factory=list)
    n_significant_in_every_order: int = 0
    margins: dict = field(default_factory=dict)   # field -> (margin, step); "per_head": [margin] (picks.py)


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
    most_pairs_opposed: int       # the most pairs any one head goes against the reader in
    layer0_changed: int           # over every pair: must be 0
    heads: HeadTests | None = None
    pairs: list[PairResult] = field(default_factory=list)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class FlipSet:
    """One set of pairs, analysed: every lens, and the model's own resolution."""
    n_pairs: int
    lenses: dict[str, FlipLens]
    model_follows: float          # of sentences: the pronoun's final state is closer to the reader's referent
    model_follows_lo: float
    model_follows_hi: float
    model_flips_with_reader: int  # pairs where that closer candidate flips the reader's way
    model_flips_share: float
    referent_a_named_first: int   # pairs whose first sentence's referent is named first in it
    orders: dict[str, "FlipSet"] = field(default_factory=dict)  # the same, within each order (pairs not repeated)
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class PassingOnNull:
    """The heads that pass on the flip pairs (both orders), counted on the null pairs and on
    the flip pairs: their changes summed over those heads, and the share that goes the
    (borrowed) reader's way, with its interval over pairs."""
    heads: int
    null_follows: int
    null_opposes: int
    null_share: float | None      # None without a change (no head passes)
    null_share_lo: float | None
    null_share_hi: float | None
    flip_follows: int
    flip_opposes: int
    flip_share: float | None
    flip_share_lo: float | None
    flip_share_hi: float | None
    margins: dict = field(default_factory=dict)   # field -> (margin, step) (picks.py)


@dataclass
class FlipResults(FlipSet):
    """Every flip pair (both orders): the registered analysis; `null`, the control set."""
    null: FlipSet | None = None
    passing_on_null: dict[str, PassingOnNull] = field(default_factory=dict)   # per lens
    # The first pair, every head, for a figure: [weight on candidate 0, on candidate 1]
    # in the first sentence, then in the second (alpha lens).
    example: list[list[float]] = field(default_factory=list)


@dataclass
class _Measured:
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

    def take(self, idx: np.ndarray) -> "_Measured":
        """The pairs `idx` alone (a set: an order, the null pairs)."""
        per_lens = lambda x: {lens: v[idx] for lens, v in x.items()}
        return _Measured([self.pairs[i] for i in idx], per_lens(self.win_a), per_lens(self.win_b),
                         per_lens(self.shift), self.closer[idx], self.agrees[idx], per_lens(self.win_margin),
                         per_lens(self.shift_margin), self.closer_margin[idx])


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
    out = _with_orders(take, flip_idx, nh, boot, heads, keep_pairs=True)
    null = _with_orders(take, null_idx, nh, boot, heads, keep_pairs=True) if len(null_idx) else None
    on_null = {}
    if null is not None:
        for lens, summary in out.lenses.items():
            passing = np.array(summary.heads.p_corrected) < heads.alpha
            on_null[lens] = passing_on_null(_changes(take(flip_idx), lens, nh), _changes(take(null_idx), lens, nh),
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


def _changes(m: "_Measured", lens: str, nh: int) -> tuple[np.ndarray, np.ndarray]:
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


def _measure(pairs: list[FlipPair], toks: list[Tokenized], acts: list) -> _Measured:
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
    return _Measured(list(pairs), win_a, win_b, shift, names, agrees, win_margin, shift_margin, closer_margin)


def _with_orders(take, idx: np.ndarray, nh: int, boot: Bootstrap, heads: FlipHeads, keep_pairs: bool) -> FlipSet:
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


def _analyse(m: _Measured, nh: int, boot: Bootstrap, heads: FlipHeads, keep_pairs: bool) -> FlipSet:
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


def _max_margin(counts: np.ndarray, per_head: np.ndarray) -> float:
    """For the largest of per-head counts: the smallest margin of a head whose count, one more
    or one less, could change it (at the maximum, or one below)."""
    near = counts >= counts.max() - 1 if counts.size else np.zeros(0, bool)
    return float(per_head[near].min()) if near.any() else picks.NO_MARGIN


def null_max_follows(follows: np.ndarray, opposes: np.ndarray, settings: FlipHeads) -> float:
    """The `null_quantile` of the largest follow count over heads when each pair's two
    sentences are swapped with probability 1/2: a swapped pair's follows become opposes
    and its opposes follows, for every head at once (the heads of a pair stay together)."""
    rng = np.random.default_rng(settings.seed)
    swap = rng.integers(0, 2, size=(settings.permutations, follows.shape[0])).astype(float)   # [N, P]
    f, o = follows.astype(float), opposes.astype(float)
    counts = f.sum(axis=0) + swap @ (o - f)                                                    # [N, H]
    return float(np.quantile(counts.max(axis=1), settings.null_quantile))


def _candidate_weights(tok: Tokenized, a, pair: FlipPair, lens: str) -> np.ndarray:
    """The pronoun's full word row on each candidate, every head: [L * nh, 2]."""
    norms = instrument.lens_norms(a.value_norm, a.output_norm)[lens]
    rows = instrument.word_rows(instrument.lens_rows(a.alpha, norms), instrument.word_map(tok.word_ids))
    cols = [_word_index(tok, c) + 1 for c in pair.candidates]               # +1: column 0 is [CLS]
    return rows[:, :, _word_index(tok, pair.pronoun)][:, :, cols].reshape(-1, len(cols))


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
