"""Serve only (`Renderer.render(mark_numbers=True)`): each cited number is wrapped in
private-use characters carrying its index in the page's citations, so the events can turn
it into a hover detail after Markdown has run (livenumbers/authoring.py). They are no word
characters: a heading holding a number keeps the same id. Never in a published build."""
from __future__ import annotations

import re

MARK_OPEN, MARK_MID, MARK_CLOSE = "\ue000", "\ue001", "\ue002"
MARK_DIGIT0 = 0xE010


def _mark_digits(index: int) -> str:
    return "".join(chr(MARK_DIGIT0 + int(d)) for d in str(index))


def mark(index: int, text: str) -> str:
    return f"{MARK_OPEN}{_mark_digits(index)}{MARK_MID}{text}{MARK_CLOSE}"


_MARK_INDEX = re.compile(f"{MARK_OPEN}([{chr(MARK_DIGIT0)}-{chr(MARK_DIGIT0 + 9)}]+){MARK_MID}")


def shift_marks(text: str, delta: int) -> str:
    """Marks numbered from another first citation: each index moved by `delta`."""
    def shift(m: re.Match) -> str:
        index = int("".join(str(ord(c) - MARK_DIGIT0) for c in m.group(1)))
        return f"{MARK_OPEN}{_mark_digits(index + delta)}{MARK_MID}"
    return _MARK_INDEX.sub(shift, text)
