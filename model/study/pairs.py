"""The adjective flip's pairs (docs/flip_pairs.yml): each `FlipPair` read and checked (two
sentences that differ in one word, after the pronoun and both candidates), a mirrored pair
against the original it mirrors, a null pair against the flip pair whose frame it shares.

Not here: what is measured on them (model/flip/).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .files import StudyError, read_yaml


ORDERS = ("original", "mirrored")


def words(text: str) -> list[str]:
    """A sentence's words as the flip pairs count them: runs of letters and digits, lowercased."""
    return [w.lower() for w in re.findall(r"\w+", text)]


@dataclass(frozen=True)
class FlipPair:
    sentences: tuple[str, str]
    pronoun: str
    candidates: tuple[str, ...]
    referents: tuple[str, str]      # the reader's, in the first and the second sentence (a null pair's: pseudo-referents)
    order: str = "original"         # "mirrored": the nouns named in the other order than in its original
    source: int | None = None       # the flip pair (1-based) this one mirrors, or a null pair's frame comes from

    def named_first(self, sentence: int = 0) -> str:
        """The candidate named first in one of the pair's sentences, read off the sentence."""
        ws = words(self.sentences[sentence])
        return min(self.candidates, key=lambda c: ws.index(c.lower()))

    def changed_words(self) -> list[tuple[int, str, str]]:
        """(position, word in the first sentence, in the second) wherever the two differ."""
        a, b = (words(s) for s in self.sentences)
        return [(k, x, y) for k, (x, y) in enumerate(zip(a, b)) if x != y]


_PAIR_FIELDS = {"sentences", "pronoun", "candidates", "referents"}


def _pair(path: Path, name: str, p, extra: set[str]) -> FlipPair:
    """One pair's common fields, checked: two sentences that differ in one word after the
    pronoun and both candidates, each of those named exactly once, referents one of each."""
    try:
        unknown = sorted(set(p) - _PAIR_FIELDS - extra)
        pair = FlipPair(tuple(p["sentences"]), p["pronoun"], tuple(p["candidates"]), tuple(p["referents"]))
    except (KeyError, TypeError) as exc:
        raise StudyError(f"{path}: {name}: missing or malformed {exc}") from exc
    if unknown:
        raise StudyError(f"{path}: {name}: unknown field {unknown[0]!r} (known: {sorted(_PAIR_FIELDS | extra)})")
    for text in pair.sentences:
        ws = words(text)
        for w in (pair.pronoun, *pair.candidates):
            if ws.count(w.lower()) != 1:
                raise StudyError(f"{path}: {name}: {w!r} must occur exactly once in {text!r}")
    if len(pair.sentences) != 2 or set(pair.referents) != set(pair.candidates) or len(pair.candidates) != 2:
        raise StudyError(f"{path}: {name}: two sentences, two candidates, referents one of each")
    lengths = [len(words(s)) for s in pair.sentences]
    if lengths[0] != lengths[1]:
        raise StudyError(f"{path}: {name}: the two sentences must differ in exactly one word, not have "
                         f"{lengths[0]} and {lengths[1]} words")
    changed = pair.changed_words()
    if len(changed) != 1:
        raise StudyError(f"{path}: {name}: the two sentences must differ in exactly one word, not {len(changed)}")
    ws = words(pair.sentences[0])
    if changed[0][0] < max(ws.index(w.lower()) for w in (pair.pronoun, *pair.candidates)):
        raise StudyError(f"{path}: {name}: the changed word {changed[0][1]!r} must come after the pronoun and both candidates")
    return pair


def read_flip_pairs(path: Path) -> tuple[tuple[FlipPair, ...], tuple[FlipPair, ...]]:
    """The minimal pairs and the null pairs: a YAML file with a `flip_pairs` list and an
    optional `null_pairs` list (see docs/flip_pairs.yml)."""
    raw = read_yaml(path, "flip pairs file") or {}
    if not isinstance(raw, dict):
        raise StudyError(f"{path}: expected a mapping with a `flip_pairs` list")
    pairs: list[FlipPair] = []
    for i, p in enumerate(raw.get("flip_pairs") or [], 1):
        name = f"flip pair {i}"
        pair = _pair(path, name, p, {"order", "mirrors"})
        order, mirrors = p.get("order", "original"), p.get("mirrors")
        if order not in ORDERS:
            raise StudyError(f"{path}: {name}: order {order!r} is not one of {ORDERS}")
        if (order == "mirrored") != (mirrors is not None):
            raise StudyError(f"{path}: {name}: a mirrored pair names the pair it mirrors (`mirrors`), an original does not")
        if mirrors is not None:
            _check_mirror(path, name, pair, pairs, mirrors)
        pairs.append(FlipPair(pair.sentences, pair.pronoun, pair.candidates, pair.referents, order, mirrors))
    nulls = []
    for i, p in enumerate(raw.get("null_pairs") or [], 1):
        name = f"null pair {i}"
        pair = _pair(path, name, p, {"from"})
        k = p.get("from")
        if not isinstance(k, int) or not 1 <= k <= len(pairs):
            raise StudyError(f"{path}: {name}: `from` must be the number of a flip pair (1 to {len(pairs)}), not {k!r}")
        source = pairs[k - 1]
        if set(pair.candidates) != set(source.candidates) or pair.referents != source.referents:
            raise StudyError(f"{path}: {name}: candidates and (pseudo-)referents must be those of flip pair {k}, "
                             f"{list(source.candidates)} and {list(source.referents)}")
        nulls.append(FlipPair(pair.sentences, pair.pronoun, pair.candidates, pair.referents, source.order, k))
    return tuple(pairs), tuple(nulls)


def _check_mirror(path: Path, name: str, pair: FlipPair, earlier: list[FlipPair], k) -> None:
    """A mirrored pair: the same pronoun, candidates, referents and changed words as the
    (earlier, original) pair it mirrors, its nouns named in the other order."""
    if not isinstance(k, int) or not 1 <= k <= len(earlier) or earlier[k - 1].order != "original":
        raise StudyError(f"{path}: {name}: `mirrors` must be the number of an original flip pair above it, not {k!r}")
    source = earlier[k - 1]
    if (pair.pronoun, set(pair.candidates), pair.referents) != (source.pronoun, set(source.candidates), source.referents):
        raise StudyError(f"{path}: {name}: pronoun, candidates and referents must be those of flip pair {k}")
    if [c[1:] for c in pair.changed_words()] != [c[1:] for c in source.changed_words()]:
        raise StudyError(f"{path}: {name}: the changed words must be those of flip pair {k}")
    if pair.named_first() == source.named_first():
        raise StudyError(f"{path}: {name}: {pair.named_first()!r} is named first here as in flip pair {k}; "
                         "a mirror names the nouns in the other order")
