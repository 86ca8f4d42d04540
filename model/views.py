"""The instrument page's data: one index, and one small file per sentence and model.

Stored apart from the results (the pages never read it): the measurement writes the
sentence files as a cache entry of their own (`sentence_views`).

The page (docs/javascripts/instrument.js) computes everything it shows from token-level
arrays, with the semantics of `model/instrument.py`; the build publishes those arrays,
not the word-level rows (every head x lens x sentence at word level is too big for a
large corpus and a 12-layer model). Token-level data is also what the browser runtime
produces for a typed sentence, so one rendering path serves both.

`assets/instrument/index.json` (`index_record`): the lenses, the thresholds, the
sentences, and per model its size, positional heads and runtime manifest.

`assets/instrument/<model>/<sentence>.json` (`sentence_file`):
    tokens, word_ids, words     the tokenizer's, as in `model/tokenize.py`
    shown                       word ids that get a displayed row (not punctuation)
    punct                       per word: the word is only punctuation
    n_layers, n_heads
    alpha                       base64 of uint16 little-endian, [L, nh, T, T] row-major,
                                round(alpha * 65535): at most 2^-17 off per weight
    value_norm, output_norm     [L * nh * T] floats, 5 significant digits
    chosen                      lens -> [layer, head] per shown word: the build's head rule
    ablation                    [[word, layer, head, ablation sink share, sink effect,
                                content effect, head effect], ...] for every head a lens
                                opens (part 8's ground truth; model/truth/)
    fixes                       kobayashi2021, alti -> base64 uint16 [L, T, T], each token
                                row normalized to 1, quantized like alpha
    value_zeroing               [[word, layer, word row [K]], ...] on the sampled sentences

Lens labels and the tiny-mass threshold are defined once, in `model/instrument.py`, and
the warning threshold in study.yml; the page reads them from the index and never
repeats them.
"""
from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

import numpy as np

from livenumbers import timing

from .activations import Activations
from .instrument import LENS_LABELS, LENS_TITLES, LENSES, TINY_MASS, is_punctuation
from .truth import FIX_LABELS, FIX_TITLES, Folded, ablation_share
from .tokenize import Tokenized

if TYPE_CHECKING:
    from .measure import Measured

QUANT = 65535  # alpha is published as round(alpha * QUANT) in a uint16


def quantize_alpha(alpha: np.ndarray) -> str:
    """alpha [..., T, T] in [0, 1] -> base64 of little-endian uint16, row-major."""
    q = np.rint(np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0) * QUANT).astype("<u2")
    return base64.b64encode(q.tobytes(order="C")).decode("ascii")


def dequantize_alpha(text: str, shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of `quantize_alpha`, to within 0.5 / 65535 per weight."""
    q = np.frombuffer(base64.b64decode(text), dtype="<u2")
    if q.size != int(np.prod(shape)):
        raise ValueError(f"alpha holds {q.size} values, expected {int(np.prod(shape))} for shape {shape}")
    return q.reshape(shape).astype(np.float64) / QUANT


def _rounded(x: np.ndarray) -> list[float]:
    """5 significant digits: finer than any display, and a third of repr's length. The
    nearest double to each rounded decimal prints as that decimal (repr is shortest)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    scale = 10.0 ** (4 - np.floor(np.log10(np.where(x != 0, np.abs(x), 1.0))))
    return (np.round(x * scale) / scale).tolist()


def truth_record(folded: Folded) -> dict:
    """The ground truth's part of a sentence's file (see the module docstring)."""
    return {
        "ablation": [[w, l, h, ablation_share(e), *_rounded(e[[0, 1, 3]])] for (w, l, h), e in folded.effects.items()],
        "fixes": {name: quantize_alpha(m) for name, m in folded.fixes.items()},
        "value_zeroing": [[w, l, _rounded(row)] for (w, l), row in folded.zeroing.items()],
    }


def sentence_record(index: int, tok: Tokenized, acts: Activations, chosen: dict[str, list],
                    folded: Folded | None = None) -> dict:
    """One sentence's data file, as a dict (see the module docstring)."""
    L, nh, T, _ = acts.alpha.shape
    if len(tok.ids) != T:
        raise ValueError(f"sentence {index}: {len(tok.ids)} tokens but activations for {T}")
    punct = [is_punctuation(w) for w in tok.words]
    shown = [w for w, p in enumerate(punct) if not p]
    for lens in LENSES:
        if len(chosen[lens]) != len(shown):
            raise ValueError(f"sentence {index}: {len(chosen[lens])} chosen heads under {lens}, {len(shown)} shown words")
    return {
        "sentence": index,
        "tokens": list(tok.tokens),
        "word_ids": list(tok.word_ids),
        "words": list(tok.words),
        "shown": shown,
        "punct": punct,
        "n_layers": int(L),
        "n_heads": int(nh),
        "alpha": quantize_alpha(acts.alpha),
        "value_norm": _rounded(acts.value_norm),
        "output_norm": _rounded(acts.output_norm),
        "chosen": {lens: [[int(l), int(h)] for l, h in chosen[lens]] for lens in LENSES},
        **(truth_record(folded) if folded is not None else {}),
    }


def sentence_file(index: int, tok: Tokenized, acts: Activations, chosen: dict[str, list],
                  folded: Folded | None = None) -> str:
    """`assets/instrument/<model>/<index>.json`: compact JSON of `sentence_record`."""
    return json.dumps(sentence_record(index, tok, acts, chosen, folded), separators=(",", ":"), ensure_ascii=False)


def index_record(default_model: str, threshold: float, tie_tolerance: float, sentences: list[dict],
                 models: dict[str, dict]) -> dict:
    """`assets/instrument/index.json`: the warning threshold, the head rule's tie tolerance,
    sentences: [{"text", "register", "half"}];
    models: key -> {"name", "title", "n_layers", "n_heads", "positional": {lens: [[l, h]]},
    "runtime": site path of the runtime manifest or None}."""
    for key, m in models.items():
        missing = {"name", "title", "n_layers", "n_heads", "positional", "runtime"} - set(m)
        if missing:
            raise ValueError(f"model {key}: missing {sorted(missing)}")
    return {
        "default_model": default_model,
        "threshold": float(threshold),
        "tie_tolerance": float(tie_tolerance),
        "tiny_mass": TINY_MASS,
        "lenses": [{"key": k, "label": LENS_LABELS[k], "title": LENS_TITLES[k]} for k in LENSES],
        # Part 8's fixes: comparison lenses on corpus sentences only (the runtime has none)
        "fixes": [{"key": k, "label": FIX_LABELS[k], "title": FIX_TITLES[k]} for k in FIX_LABELS],
        "sentences": sentences,
        "models": models,
    }


@timing.stage("views")
def sentence_views(m: "Measured") -> list[str]:
    """One model's files, one text per sentence in corpus order: its activations and the
    heads the rule opens for each shown word under each lens."""
    chosen: dict[int, dict[str, list[list[int]]]] = {}
    for lens in LENSES:
        d = m.rows[lens]
        for s, l, h in zip(d.sentence, d.layer, d.head):
            chosen.setdefault(int(s), {k: [] for k in LENSES})[lens].append([int(l), int(h)])
    folded = m.truth.folded if m.truth is not None else [None] * len(m.corpus.toks)
    return [sentence_file(i, tok, a, chosen.get(i, {k: [] for k in LENSES}), f)
            for i, (tok, a, f) in enumerate(zip(m.corpus.toks, m.corpus.acts, folded))]
