"""Building the study's flat namespace of numbers (numbers.py): the dict being built with its
keys' margins beside it, and the helpers that put a results dict's scalars into it under a prefix.

Not here: which keys exist (numbers.py, verdict_keys.py).
"""
from __future__ import annotations

from .. import picks

EXACT = (picks.NO_MARGIN, picks.NO_MARGIN)   # the margin of a key no rounding can turn


def inf_margin(margin: float | None) -> float:
    """A margin as stored (None: nothing could turn it; JSON has no infinity) -> a float."""
    return float("inf") if margin is None else float(margin)


class Keys(dict):
    """The flat namespace being built, with the margins of its keys beside it."""

    def __init__(self, values: dict):
        super().__init__(values)
        self.margins: dict[str, tuple[float, float]] = {}

    def margin(self, key: str, margin_step) -> None:
        margin, step = margin_step
        self.margins[key] = (inf_margin(margin), inf_margin(step))


def put(out: Keys, prefix: str, values: dict) -> None:
    """Every scalar of `values` as `prefix.name`, and its margin where `values` has one."""
    for name, v in values.items():
        if isinstance(v, (bool, int, float, str)) and v is not None:
            out[f"{prefix}.{name}"] = v
    for name, margin_step in (values.get("margins") or {}).items():
        if name != "per_head":
            note(out, f"{prefix}.{name}", margin_step)


def with_step(margin_step, step: float):
    """The same margin, for a key that moves by `step` when the decision turns."""
    return None if margin_step is None else (margin_step[0], step)


def note(out: dict, key: str, margin_step) -> None:
    """Record a key's (margin, step) where the namespace keeps margins (flatten's own does;
    a hand-made dict, in a test, does not)."""
    if isinstance(out, Keys) and margin_step is not None:
        out.margin(key, margin_step)
