"""What the study's tables share: the noise format, the halves' names, the interval's
label and cell, a model's name, a link to one row in the instrument."""
from __future__ import annotations

from livenumbers.formats import md_text as escape  # Markdown-safe, not only HTML-safe: see md_text
from livenumbers.tables import span

from ..links import instrument_url


# Reference vs oracle differences are float32 rounding noise: they differ from one CPU to
# the next, so they are locked to within the agreement the tests require (numbers.py).
NOISE = "sci:1~1e-5"


HALVES = {"test": "held out", "fit": "fitted on", "all": "whole corpus"}


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
