"""The instrument's semantics: what one displayed row is, on one sentence.

Everything here is a plain function of NumPy arrays for a single sentence, so each
definition can be checked on a three-token example by hand (tests/test_instrument.py).

Columns of a word-level row: [CLS], the sentence's words in order, [SEP]
(K = n_words + 2). Rows exist for words only.

- lens: token row i is alpha_ij * n_j, renormalized to sum 1, with n_j = 1 (alpha),
  ||v_j|| (value_norm) or ||f_j|| (output_norm). The alpha lens goes through the same
  renormalization, so "every norm forced to 1.0" reproduces it bit for bit.
- words: from-word = mean of its subword rows; to-word = sum of its subword columns.
- sink share: the word row's weight on [CLS] + [SEP]. Beside it, not merged into it,
  the punctuation share: its weight on words that are only punctuation (not itself).
- displayed row: the word row without [CLS], [SEP] and the word itself, renormalized
  to sum 1; `content_mass` is what it summed to before that.
- head choice, applied identically under every lens:
  1. positional heads are never opened: a head is positional when, over the corpus,
     more than `positional_threshold` of its displayed rows put their largest weight
     on an adjacent word (they show word order, not content);
  2. among the others, the instrument opens the head whose displayed row carries the
     largest single weight: the strongest arrow a reader would see. Heads within
     `tie_tolerance` (study.yml) of the best score tie, and a tie goes to the lowest
     layer, then head: a smaller gap is float noise (the 16-bit weights, another CPU
     would decide it otherwise), not something a reader could see in the row.
  The score is taken after renormalization, exactly as displayed, so the rule neither
  seeks nor avoids sink-heavy heads; the sink share is disclosed on every row instead.

`sentence_rows` applies all of it to one sentence's activations and keeps, per lens,
layer, head and word, the few numbers the measurements read (`SentenceRows`): the
word rows themselves ([L, nh, n_words, K] per lens) are too big to keep for a corpus.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from . import picks

LENSES = ("alpha", "value_norm", "output_norm")
# How the pages, charts and the instrument's script name each lens (published to the
# instrument's data, so the script does not repeat them).
LENS_LABELS = {"alpha": "α", "value_norm": "‖α v‖", "output_norm": "‖α f(x)‖"}
LENS_TITLES = {
    "alpha": "attention weights α",
    "value_norm": "each weight times the norm of the value vector",
    "output_norm": "each weight times the norm of the value vector after the output projection",
}
# A displayed row built from less than this share of its full row gets a plain note.
TINY_MASS = 0.10


def lens_rows(alpha: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """alpha [..., T, T], norms [..., T] -> rows of alpha_ij * n_j summing to 1 [..., T, T]."""
    weighted = alpha * norms[..., None, :]
    return weighted / weighted.sum(axis=-1, keepdims=True)


def is_punctuation(word: str) -> bool:
    return all(unicodedata.category(ch).startswith("P") for ch in word)


@dataclass(frozen=True)
class WordMap:
    """How tokens fold into word-level rows and columns for one sentence."""

    rows: np.ndarray     # [n_words, T]: averaging weights, 1/len(word) on its subwords
    cols: np.ndarray     # [T, K]: 1 where token t falls in column k
    n_words: int

    @property
    def sink_cols(self) -> list[int]:
        return [0, self.n_words + 1]  # [CLS], [SEP]


def word_map(word_ids: list[int | None]) -> WordMap:
    """word_ids [T] from the tokenizer, None for [CLS] (first) and [SEP] (last)."""
    T = len(word_ids)
    n_words = 1 + max(w for w in word_ids if w is not None)
    rows = np.zeros((n_words, T))
    cols = np.zeros((T, n_words + 2))
    for t, w in enumerate(word_ids):
        if w is None:
            cols[t, 0 if t == 0 else n_words + 1] = 1.0
        else:
            rows[w, t] = 1.0
            cols[t, w + 1] = 1.0
    rows /= rows.sum(axis=1, keepdims=True)
    return WordMap(rows=rows, cols=cols, n_words=n_words)


def word_rows(token_rows: np.ndarray, wm: WordMap) -> np.ndarray:
    """token rows [..., T, T] -> word rows [..., n_words, K], each summing to 1."""
    return wm.rows @ token_rows @ wm.cols


def sink_share(rows: np.ndarray, wm: WordMap) -> np.ndarray:
    """word rows [..., n_words, K] -> weight on [CLS] + [SEP], [..., n_words]."""
    return rows[..., 0] + rows[..., wm.n_words + 1]


def content_weights(rows: np.ndarray, wm: WordMap) -> np.ndarray:
    """word rows [..., n_words, K] -> weights on the other words only [..., n_words, n_words].

    Column j is word j; the diagonal (the word itself) is zeroed.
    """
    content = rows[..., 1 : wm.n_words + 1].copy()
    idx = np.arange(wm.n_words)
    content[..., idx, idx] = 0.0
    return content


def displayed_rows(rows: np.ndarray, wm: WordMap) -> tuple[np.ndarray, np.ndarray]:
    """word rows [..., n_words, K] -> (displayed rows [..., n_words, n_words], content mass [..., n_words]).

    Displayed row w covers the n_words word columns, its own column 0, and sums to 1
    unless its content mass is 0 (then it is all zeros: nothing to show).
    """
    content = content_weights(rows, wm)
    mass = content.sum(axis=-1)
    safe = np.where(mass > 0, mass, 1.0)[..., None]
    return content / safe, mass


def adjacent_top(top_word: np.ndarray, shown: list[int]) -> np.ndarray:
    """top_word [L, nh, n_words] (where each displayed row peaks) -> per head, how many
    shown words' rows peak on the word just before or after, [L, nh]."""
    words = np.arange(top_word.shape[-1])
    return (np.abs(top_word - words) == 1)[:, :, shown].sum(axis=-1)


def head_scores(top_weight: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    """top_weight [L, nh, n_words] (each displayed row's largest weight), excluded [L, nh]
    -> the rule's score of every head for every word, [L * nh, n_words] (layer-major)."""
    L, nh = top_weight.shape[:2]
    return np.where(excluded[:, :, None], -1.0, top_weight).reshape(L * nh, -1)


@dataclass(frozen=True)
class HeadChoice:
    """The rule's head for each word, how near it came to another, and which (picks.py)."""
    heads: np.ndarray         # [n_words, 2] layer, head
    margin: np.ndarray        # [n_words] relative: the nearest near-tie to turning the choice
    alternative: np.ndarray   # [n_words, 2] the head chosen if that near-tie went the other way


def head_choice(top_weight: np.ndarray, excluded: np.ndarray, tie_tolerance: float) -> HeadChoice:
    """top_weight [L, nh, n_words], excluded [L, nh] -> per word, the first head (lowest
    layer, then head) whose score is within `tie_tolerance` of the best, with its margin."""
    nh = top_weight.shape[1]
    best, margin, alternative = picks.best_columns(head_scores(top_weight, excluded), tie_tolerance)
    as_heads = lambda i: np.stack([i // nh, i % nh], axis=1)
    return HeadChoice(as_heads(best), margin, as_heads(alternative))


def choose_heads(top_weight: np.ndarray, excluded: np.ndarray, tie_tolerance: float) -> np.ndarray:
    """`head_choice`'s heads alone, [n_words, 2]."""
    return head_choice(top_weight, excluded, tie_tolerance).heads


def runner_up_gap(top_weight: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    """How far the best head's score is above the second best's, per word [n_words]: the
    rows whose gap is below the tie tolerance are the near-ties the tie rule decides."""
    score = np.sort(head_scores(top_weight, excluded), axis=0)
    return score[-1] - score[-2] if score.shape[0] > 1 else np.full(score.shape[1], np.inf)


# -- one sentence, every head, every lens --------------------------------------------------

@dataclass
class SentenceRows:
    """Per lens, layer, head and word of one sentence, what its word row comes to.

    Every array is [L, nh, n_words]; `shown` lists the words that get a displayed row
    (punctuation does not). Built by `sentence_rows`.
    """

    shown: list[int]
    sink: dict[str, np.ndarray]         # lens -> weight on [CLS] + [SEP]
    sep: dict[str, np.ndarray]          # lens -> the part of it on [SEP]
    punct: dict[str, np.ndarray]        # lens -> weight on punctuation words other than the word itself
    content_mass: dict[str, np.ndarray]  # lens -> what the displayed row was built from
    top_word: dict[str, np.ndarray]     # lens -> the displayed row's largest weight goes to this word
    top_weight: dict[str, np.ndarray]   # lens -> ... and is this large (the head rule's score)
    second_word: dict[str, np.ndarray]  # lens -> the runner-up word (picks.py: where rounding could turn the top)
    top_margin: dict[str, np.ndarray]   # lens -> (top - runner-up) / top: how near it came (inf: nothing could)


def lens_norms(value_norm: np.ndarray, output_norm: np.ndarray) -> dict[str, np.ndarray]:
    """The per-token norm each lens weighs alpha by, [L, nh, T]."""
    return {"alpha": np.ones_like(value_norm), "value_norm": value_norm, "output_norm": output_norm}


def sentence_rows(alpha: np.ndarray, norms: dict[str, np.ndarray], words: list[str], wm: WordMap) -> SentenceRows:
    """alpha [L, nh, T, T] and each lens's norms [L, nh, T] -> a `SentenceRows`."""
    punct = np.array([is_punctuation(w) for w in words], dtype=float)      # [n_words]
    out = SentenceRows([w for w, p in enumerate(punct) if not p], {}, {}, {}, {}, {}, {}, {}, {})
    for lens, n in norms.items():
        rows = word_rows(lens_rows(alpha, n), wm)          # [L, nh, n_words, K]
        display, mass = displayed_rows(rows, wm)            # [L, nh, n_words, n_words], [L, nh, n_words]
        out.sink[lens] = sink_share(rows, wm)
        out.sep[lens] = rows[..., wm.n_words + 1].copy()  # a view would keep all of `rows` alive
        out.punct[lens] = content_weights(rows, wm) @ punct
        out.content_mass[lens] = mass
        out.top_word[lens] = display.argmax(axis=-1)
        out.top_weight[lens] = display.max(axis=-1)
        out.second_word[lens], out.top_margin[lens] = _runner_up(display, out.top_word[lens])
    return out


def _runner_up(display: np.ndarray, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """display [..., n_words, n_words], its argmax [..., n_words] -> (the runner-up word,
    (top - runner-up) / top), inf where they are equal (a tie by construction: a row of
    zeros, or one word) or there is no runner-up."""
    if display.shape[-1] < 2:
        return top.copy(), np.full(top.shape, np.inf)
    others = display.copy()
    np.put_along_axis(others, top[..., None], -np.inf, axis=-1)
    second = others.argmax(axis=-1)
    first_w = np.take_along_axis(display, top[..., None], axis=-1)[..., 0]
    second_w = np.take_along_axis(display, second[..., None], axis=-1)[..., 0]
    gap = first_w - second_w
    margin = np.where(gap > 0, gap / np.where(first_w > 0, first_w, 1.0), np.inf)
    return second, margin
