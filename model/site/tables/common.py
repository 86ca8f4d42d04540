"""What the study's tables share: the noise format, the halves' names, the interval's
label and cell, a model's name, a link to one row in the instrument."""
from __future__ import annotations

from livenumbers.formats import md_text as escape  # Markdown-safe, not only HTML-safe: see md_text
from livenumbers.tables import span

from ..links import instrument_url


# The bounds the reference's agreement with the oracle is published under (two float64
# implementations: their disagreement is rounding, and differs from one CPU to the next, so its
# own digits are not published). Each is 1000x the largest figure it bounds as measured on the
# machine that wrote the lock, to a power of ten up (study.yml `picks`, issue 46): the forward
# pass, the effects and the fixes (at most 4e-14), and the shares and value zeroing's rows,
# ratios of differences of two passes through a LayerNorm (at most 1.3e-11).
FORWARD_BOUND, PASSES_BOUND = "1e-10", "1e-7"


def below(r, key: str, bound: str) -> str:
    """A figure that is rounding (reference against oracle) as the bound it stays under on
    every machine, "< 1e-10" (livenumbers/printed.py)."""
    return f"< {r.cite(key, f'below:{bound}')}"


ABOVE_HALF = ">\u00a050\u00a0%"   # a header's "> 50 %", on one line
HALVES = {"test": "held out", "fit": "fitted on", "all": "whole corpus"}


# What a table prints instead of a pick another machine's rounding could turn.
NEAR_TIE = "a near tie"


def decided(r, key: str) -> bool:
    """Is the pick behind `key` clear of the margin floor (study.yml picks), so that every
    machine makes it alike? (A key with no decision behind it is.)"""
    found = r.numbers.margin(key)
    return found is None or found[0] >= r.results.get("picks", {}).get("margin_floor", 0.0)


def decided_row(r, model: str, i: int, lenses) -> bool:
    """Is every head the lenses open for displayed row `i` clear of the margin floor?"""
    rows = r.results["models"][model]["rows"]
    floor = r.results.get("picks", {}).get("margin_floor", 0.0)
    margin = lambda lens: (rows[lens].get("head_margin") or [None] * (i + 1))[i]   # none recorded: nothing to turn
    return all(margin(lens) is None or margin(lens) >= floor for lens in lenses)


def ci_label(r) -> str:
    """"95% CI", from the study's bootstrap level (the source's interval label)."""
    return r.interval_label()


def ci_cell(r, key: str, fmt: str) -> str:
    """The interval of `key` as one cell: "23.3–29.2%". A share of zero has no bootstrap
    interval worth printing (every resample of a corpus with no such row has none)."""
    if r.numbers[f"{key}_lo"] == r.numbers[f"{key}_hi"] == 0:
        return "none seen"
    return span(r.cite(f"{key}_lo", fmt), r.cite(f"{key}_hi", fmt))


def model_name(r, model: str) -> str:
    return f"{r.cite(f'{model}.checkpoint', 'text')} ({r.cite(f'{model}.n_layers', 'int')} layers)"


def row_link(r, model: str, s: int, w: int, lens: str) -> str:
    sentence = r.results["sentences"][s]
    return f"[{s}]({instrument_url(r, model, s, w, lens)} \"{escape(sentence)}\")"
