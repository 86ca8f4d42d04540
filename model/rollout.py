"""Attention rollout (Abnar & Zuidema 2020), how uniform its rows are, and whether the
ranking read from them holds up.

Per layer, average the heads, add the residual (A_hat = 0.5 A + 0.5 I), keep rows
stochastic, and multiply across layers: R = A_hat_L ... A_hat_1. Rows are then folded to
words as the instrument folds them. The normalized entropy of a row (entropy / log of
its length) is 1.0 for a uniform row. Two yardsticks go with it:

- what the entropy would be for a row of the same length with half its weight on one
  word and the rest spread evenly (one clearly preferred word);
- a direct test of the ranking: drop one layer from the product and see whether the
  displayed ranking survives (Spearman correlation, same top word), and whether the
  rollout's top word is the instrument's (alpha, the head it opens).

That agreement has lazy baselines a word-specific reading must beat (study.yml, rollout's
baselines): three sentence-wide guesses, the sentence's last punctuation mark, the rollout
row of another shown word of the same sentence (the next, cyclically), and the sentence's
mean rollout row, each naming the top word among the other words (w's own column dropped);
and two positional guesses, added after the second review's sceptical reading, the word
just after w and the word just before it. What is specific to the word is the row's
agreement minus the best baseline's (all five); `beyond_sentence_guesses` keeps the
comparison with the best sentence-wide guess.
How alike a sentence's rows are: Spearman between two shown words' displayed rows, over
the words other than both.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import instrument, picks
from .bootstrap import Resampler
from .corpus import Corpus, Displayed


@dataclass
class RolloutStats:
    n_rows: int
    min_entropy: float        # full rows: normalized, 0 = one-hot, 1 = uniform
    median_entropy: float
    max_entropy: float
    above_90: int             # rows with normalized entropy above 0.9
    median_top_margin: float  # largest weight minus second largest, median over rows
    top_on_sink: int          # rows whose largest weight is [CLS] or [SEP]
    top_on_self: int          # ... or the word itself
    median_sink: float        # median weight of a row on [CLS] + [SEP]
    # The row as the instrument would display it: [CLS], [SEP], the word itself dropped.
    displayed_min_entropy: float
    displayed_median_entropy: float
    displayed_median_entropy_lo: float
    displayed_median_entropy_hi: float
    displayed_max_entropy: float
    displayed_above_90: int
    displayed_above_90_share: float   # ... of the displayed rows (a row this near 0.9 moves a count, not a share)
    displayed_median_top_margin: float
    displayed_median_top_margin_lo: float
    displayed_median_top_margin_hi: float
    one_clear_word_entropy: float     # median over displayed rows: the entropy half-on-one-word would give
    one_clear_word_entropy_full: float  # the same for the full rows (their own, longer length)
    median_other_words: int           # the displayed rows' median length (other words)
    below_one_clear_word: int         # displayed rows sharper than their own length's yardstick
    # The ranking, tested directly.
    drop_layer_spearman: float        # median over rows and dropped layers
    drop_layer_spearman_lo: float
    drop_layer_spearman_hi: float
    drop_layer_same_top: float        # share of (row, dropped layer) keeping the top word
    drop_layer_same_top_lo: float
    drop_layer_same_top_hi: float
    agrees_with_instrument: float     # share of rows whose top word is the instrument's (alpha)
    agrees_with_instrument_lo: float
    agrees_with_instrument_hi: float
    chance_agreement: float           # the same share for a top word drawn at random
    displayed_top_on_punct: float     # displayed rows whose top word is a punctuation mark
    displayed_top_on_punct_lo: float
    displayed_top_on_punct_hi: float
    agrees_on_punct: float            # rows where both tops are the same punctuation mark
    # Lazy baselines for that agreement (each: share of rows whose guess is the instrument's top).
    baseline_last_punct: float        # the sentence's last punctuation mark
    baseline_last_punct_lo: float
    baseline_last_punct_hi: float
    baseline_other_word: float        # another shown word's rollout row (the next one)
    baseline_other_word_lo: float
    baseline_other_word_hi: float
    baseline_sentence_mean: float     # the sentence's mean rollout row
    baseline_sentence_mean_lo: float
    baseline_sentence_mean_hi: float
    # Positional guesses (added after the second review's sceptical reading):
    baseline_next_word: float         # the word just after (none for the last word)
    baseline_next_word_lo: float
    baseline_next_word_hi: float
    baseline_previous_word: float     # the word just before (none for the first word)
    baseline_previous_word_lo: float
    baseline_previous_word_hi: float
    instrument_top_adjacent: float    # rows whose instrument top word is next to the word, either side
    instrument_top_adjacent_lo: float
    instrument_top_adjacent_hi: float
    best_baseline: str                # the baseline that agrees most often (of all five)
    word_specific: float              # agrees_with_instrument minus the best baseline's share
    word_specific_lo: float           # (paired: the same resampled sentences for both)
    word_specific_hi: float
    best_sentence_baseline: str       # the best of the three sentence-wide guesses
    beyond_sentence_guesses: float    # agrees_with_instrument minus its share (paired, as above)
    beyond_sentence_guesses_lo: float
    beyond_sentence_guesses_hi: float
    rows_alike_spearman: float        # median over (word, next word) pairs of one sentence
    rows_alike_spearman_lo: float
    rows_alike_spearman_hi: float
    entropies: list[float] = field(default_factory=list)            # every full row's
    displayed_entropies: list[float] = field(default_factory=list)  # every displayed row's
    margins: dict = field(default_factory=dict)                     # field -> (margin, step) (picks.py)


def _ci(name: str, interval: tuple[float, float]) -> dict[str, float]:
    return {f"{name}_lo": interval[0], f"{name}_hi": interval[1]}


def rollout(alpha: np.ndarray, skip: int | None = None) -> np.ndarray:
    """alpha [L, nh, T, T] -> rollout [T, T] (without layer `skip`, if given)."""
    L, _, T, _ = alpha.shape
    R = np.eye(T)
    for layer in range(L):
        if layer == skip:
            continue
        A = 0.5 * alpha[layer].mean(axis=0) + 0.5 * np.eye(T)  # [T, T]
        A /= A.sum(axis=-1, keepdims=True)
        R = A @ R
    return R


def normalized_entropy(rows: np.ndarray) -> np.ndarray:
    """rows [..., K] summing to 1 -> entropy / log K, in [0, 1]."""
    p = np.clip(rows, 1e-300, 1.0)
    return -(rows * np.log(p)).sum(axis=-1) / np.log(rows.shape[-1])


def half_on_one_entropy(k: int) -> float:
    """Normalized entropy of a row of length k with 0.5 on one word, the rest even."""
    row = np.full(k, 0.5 / (k - 1))
    row[0] = 0.5
    return float(normalized_entropy(row))


def spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rank correlation of rows [..., K] against rows [..., K] (no ties expected among
    real-valued weights)."""
    K = a.shape[-1]
    rank = lambda x: np.argsort(np.argsort(x, axis=-1), axis=-1) - (K - 1) / 2
    ra, rb = rank(a), rank(b)
    return (ra * rb).sum(-1) / np.sqrt((ra * ra).sum(-1) * (rb * rb).sum(-1))


def _others(display: np.ndarray, words: list[int]) -> np.ndarray:
    """displayed rows [..., n_words, n_words] -> the rows of `words` without their own
    (zero) column, [..., len(words), n_words - 1]."""
    n = display.shape[-1]
    cols = np.array([[c for c in range(n) if c != w] for w in words])   # [len(words), n - 1]
    return np.take_along_axis(display[..., words, :], np.broadcast_to(cols, display.shape[:-2] + cols.shape), -1)


def _guess(rows: np.ndarray, words: list[int]) -> np.ndarray:
    """A row per shown word [n, n_words] -> its top word once the word's own column is dropped."""
    rows = rows.copy()
    rows[np.arange(len(words)), words] = -np.inf
    return rows.argmax(axis=-1)


# The guesses that are the same, or nearly, for every word of a sentence; the others are positional.
SENTENCE_WIDE = ("last_punct", "other_word", "sentence_mean")
GUESSES = SENTENCE_WIDE + ("next_word", "previous_word")


def lazy_guesses(display: np.ndarray, words: list[int], punct: list[int]) -> dict[str, np.ndarray]:
    """The baselines' top word for each shown word, from a sentence's displayed rollout rows
    [n_words, n_words]: the last punctuation mark (-1 when the sentence has none), the next
    shown word's row, the mean row of the shown words; the word just after and just before
    (-1 past either end of the sentence)."""
    n, n_words = len(words), display.shape[-1]
    last = max(punct) if punct else -1
    w = np.array(words)
    return {
        "last_punct": np.full(n, last),
        "other_word": _guess(display[[words[(k + 1) % n] for k in range(n)]], words),
        "sentence_mean": _guess(np.repeat(display[words].mean(axis=0, keepdims=True), n, axis=0), words),
        "next_word": np.where(w + 1 < n_words, w + 1, -1),
        "previous_word": w - 1,                     # -1 for the first word: no guess
    }


def rows_alike(display: np.ndarray, words: list[int]) -> np.ndarray:
    """Spearman between each shown word's displayed row and the next one's, over the words
    other than both [n] (needs at least 2 shown words and 2 other words)."""
    n_words = display.shape[-1]
    out = []
    for k, w in enumerate(words):
        v = words[(k + 1) % len(words)]
        keep = [c for c in range(n_words) if c not in (w, v)]
        out.append(float(spearman(display[w, keep], display[v, keep])))
    return np.array(out)


def rollout_stats(corpus: Corpus, alpha_rows: Displayed, sentences: list[int], resampler: Resampler) -> RolloutStats:
    """The rollout rows of the shown words of `sentences` (the held-out half)."""
    guesses: dict[str, list] = {name: [] for name in GUESSES}
    alike, alike_unit = [], []
    ent, margin, sink, d_ent, d_margin, baseline, lengths, full_base = [], [], [], [], [], [], [], []
    top_sink = top_self = 0
    rho, rho_unit, same_top, agree, agree_unit, chance, top_punct, agree_punct = [], [], [], [], [], [], [], []
    adjacent = []
    instrument_top = {(s, w): t for s, w, t in zip(alpha_rows.sentence, alpha_rows.word, alpha_rows.top_word)}
    # How near each row's decisions came to turning (picks.py): the instrument's head and top
    # word, the rollout row's top word, each sentence-wide guess's top word.
    instrument_margin = {(s, w): min(a, b) for s, w, a, b in
                         zip(alpha_rows.sentence, alpha_rows.word, alpha_rows.margin, alpha_rows.top_margin)}
    full_top_margin, row_margin = [], []
    for k, i in enumerate(sentences):
        alpha, wm, words = corpus.acts[i].alpha, corpus.wms[i], corpus.rows[i].shown
        full = instrument.word_rows(rollout(alpha), wm)          # [n_words, K]
        rows = full[words]                                       # [n_shown, K]
        ent.extend(normalized_entropy(rows))
        full_base.extend(half_on_one_entropy(rows.shape[-1]) for _ in words)
        top2 = np.sort(rows, axis=-1)[:, -2:]
        margin.extend(top2[:, 1] - top2[:, 0])
        top = rows.argmax(axis=-1)
        top_sink += int(np.isin(top, wm.sink_cols).sum())
        top_self += int((top == np.array(words) + 1).sum())
        full_top_margin.extend(picks.top_margins(rows))
        sink.extend(instrument.sink_share(rows, wm))
        display, _ = instrument.displayed_rows(full, wm)         # [n_words, n_words], own column 0
        if wm.n_words < 3:
            continue  # a displayed row of one other word has no ranking
        dropped = np.stack([instrument.displayed_rows(instrument.word_rows(rollout(alpha, skip=l), wm), wm)[0]
                            for l in range(alpha.shape[0])])    # [L, n_words, n_words]
        others, others_dropped = _others(display, words), _others(dropped, words)   # [n, K-1], [L, n, K-1]
        d_ent.extend(normalized_entropy(others))
        s2 = np.sort(others, axis=-1)[:, -2:]
        d_margin.extend(s2[:, 1] - s2[:, 0])
        baseline.extend(half_on_one_entropy(others.shape[-1]) for _ in words)
        lengths.extend(others.shape[-1] for _ in words)
        top_w = display[words].argmax(axis=-1)                               # [n]
        theirs = np.array([instrument_top[(i, w)] for w in words])
        mean_row = display[words].mean(axis=0)
        row_margin.extend(np.minimum.reduce([
            picks.top_margins(others), [instrument_margin[(i, w)] for w in words],
            [picks.top_margins(np.delete(display[words[(j + 1) % len(words)]], w)) for j, w in enumerate(words)],
            [picks.top_margins(np.delete(mean_row, w)) for w in words]]))
        agree.extend(top_w == theirs)
        is_punct = ~np.isin(top_w, words)                                    # not a shown word: punctuation
        top_punct.extend(is_punct)
        agree_punct.extend((top_w == theirs) & is_punct)
        agree_unit.extend(k for _ in words)
        adjacent.extend(np.abs(theirs - np.array(words)) == 1)
        punct = [x for x in range(wm.n_words) if x not in words]
        for name, guess in lazy_guesses(display, words, punct).items():
            guesses[name].extend(guess == theirs)
        if len(words) >= 2 and wm.n_words >= 4:
            alike.extend(rows_alike(display, words))
            alike_unit.extend(k for _ in words)
        chance.extend(1.0 / others.shape[-1] for _ in words)
        rho.extend(spearman(others[None], others_dropped).ravel())
        rho_unit.extend(k for _ in range(others_dropped.shape[0] * len(words)))
        same_top.extend((dropped[:, words].argmax(axis=-1) == top_w[None]).ravel())
    e, de, base = np.array(ent), np.array(d_ent), np.array(baseline)
    unit = np.array(agree_unit)
    shares = {name: float(np.mean(g)) for name, g in guesses.items()}
    counts = {name: int(np.sum(g)) for name, g in guesses.items()}
    best = max(shares, key=shares.get)
    best_wide = max(SENTENCE_WIDE, key=shares.get)
    lead = lambda among: counts[max(among, key=shares.get)] - sorted(counts[n] for n in among)[-2]
    n = len(de)
    agreement = float(np.min(row_margin)) if row_margin else picks.NO_MARGIN
    margins = {
        "n_rows": (picks.NO_MARGIN, 1.0),
        "above_90": (picks.threshold_margin(e, 0.9), 1.0),
        "top_on_sink": (float(np.min(full_top_margin)), 1.0), "top_on_self": (float(np.min(full_top_margin)), 1.0),
        "displayed_above_90": (picks.threshold_margin(de, 0.9), 1.0),
        "displayed_above_90_share": (picks.threshold_margin(de, 0.9), 1.0 / max(1, n)),
        "below_one_clear_word": (picks.comparison_margin(de, base), 1.0),
        "best_baseline": (picks.lead_margin(lead(GUESSES), row_margin), picks.NO_MARGIN),
        "best_sentence_baseline": (picks.lead_margin(lead(SENTENCE_WIDE), row_margin), picks.NO_MARGIN),
        **{f"{name}{x}": (agreement, 1.0 / max(1, n)) for name in
           ("agrees_with_instrument", "word_specific", "beyond_sentence_guesses", "displayed_top_on_punct",
            "agrees_on_punct", "instrument_top_adjacent", *(f"baseline_{g}" for g in GUESSES)) for x in ("", "_lo", "_hi")},
    }
    specific = np.array(agree, float) - np.array(guesses[best], float)
    beyond = np.array(agree, float) - np.array(guesses[best_wide], float)
    d_lo, d_hi = resampler.median(de, np.array(agree_unit))
    r_lo, r_hi = resampler.median(np.array(rho), np.array(rho_unit))
    a_lo, a_hi = resampler.share(np.array(agree), np.array(agree_unit))
    return RolloutStats(
        n_rows=len(e),
        min_entropy=float(e.min()),
        median_entropy=float(np.median(e)),
        max_entropy=float(e.max()),
        above_90=int((e > 0.9).sum()),
        median_top_margin=float(np.median(margin)),
        top_on_sink=top_sink,
        top_on_self=top_self,
        median_sink=float(np.median(sink)),
        displayed_min_entropy=float(de.min()),
        displayed_median_entropy=float(np.median(de)),
        displayed_median_entropy_lo=d_lo,
        displayed_median_entropy_hi=d_hi,
        displayed_max_entropy=float(de.max()),
        displayed_above_90=int((de > 0.9).sum()),
        displayed_above_90_share=float((de > 0.9).mean()),
        displayed_median_top_margin=float(np.median(d_margin)),
        **_ci("displayed_median_top_margin", resampler.median(np.array(d_margin), np.array(agree_unit))),
        one_clear_word_entropy=float(np.median(base)),
        one_clear_word_entropy_full=float(np.median(full_base)),
        median_other_words=int(np.median(lengths)),
        below_one_clear_word=int((de < base).sum()),
        drop_layer_spearman=float(np.median(rho)),
        drop_layer_spearman_lo=r_lo,
        drop_layer_spearman_hi=r_hi,
        drop_layer_same_top=float(np.mean(same_top)),
        **_ci("drop_layer_same_top", resampler.share(np.array(same_top), np.array(rho_unit))),
        agrees_with_instrument=float(np.mean(agree)),
        agrees_with_instrument_lo=a_lo,
        agrees_with_instrument_hi=a_hi,
        chance_agreement=float(np.mean(chance)),
        displayed_top_on_punct=float(np.mean(top_punct)),
        **_ci("displayed_top_on_punct", resampler.share(np.array(top_punct), np.array(agree_unit))),
        agrees_on_punct=float(np.mean(agree_punct)),
        **{f"baseline_{name}": shares[name] for name in guesses},
        **{k: v for name, g in guesses.items() for k, v in _ci(f"baseline_{name}", resampler.share(np.array(g), unit)).items()},
        instrument_top_adjacent=float(np.mean(adjacent)),
        **_ci("instrument_top_adjacent", resampler.share(np.array(adjacent), unit)),
        best_baseline=best,
        word_specific=float(specific.mean()),
        **_ci("word_specific", resampler.mean(specific, unit)),
        best_sentence_baseline=best_wide,
        beyond_sentence_guesses=float(beyond.mean()),
        **_ci("beyond_sentence_guesses", resampler.mean(beyond, unit)),
        rows_alike_spearman=float(np.median(alike)) if alike else float("nan"),
        **_ci("rows_alike_spearman", resampler.median(np.array(alike), np.array(alike_unit)) if alike
              else (float("nan"), float("nan"))),
        entropies=[float(x) for x in e],
        displayed_entropies=[float(x) for x in de],
        margins=margins,
    )
