"""What the study's charts share: the page width, the site's hues, a model's short name,
the held-out rows, histogram bins, one displayed row, grouped bars."""
from __future__ import annotations

from livenumbers.charts import dataset


WIDTH = 560


# Single-colour marks take the site's first hues (livenumbers/static/charts.js, CATEGORY): they
# keep 3:1 against both palettes' backgrounds.
PALETTE = ("#2a84c8", "#d55e00")


def model_name(results: dict, model: str) -> str:
    return results["models"][model]["checkpoint"].split("/")[-1]


def test_rows(m: dict) -> list[int]:
    """Indices into a model's columnar rows of the held-out half's rows."""
    test = set(m["halves"]["test"])
    return [i for i, s in enumerate(m["rows"]["sentence"]) if s in test]


def bin_counts(values: list[float], step: float, lo: float = 0.0, hi: float = 1.0) -> list[tuple[float, int]]:
    """Counts per bin [lo + k step, lo + (k+1) step): the chart carries counts, not rows."""
    n = round((hi - lo) / step)
    counts = [0] * n
    for v in values:
        counts[min(n - 1, max(0, int((v - lo) / step)))] += 1
    return [(round(lo + k * step, 6), c) for k, c in enumerate(counts)]


def displayed_row(full: list[float], word: int) -> list[float]:
    """A full word row [K] -> the row as displayed: the other words only, renormalized
    ([CLS], [SEP] and the word itself at 0)."""
    content = [x if 0 < k < len(full) - 1 and k - 1 != word else 0.0 for k, x in enumerate(full)]
    mass = sum(content) or 1.0
    return [x / mass for x in content]


def interval_tooltip(alt, fmt: str) -> list:
    """A bootstrap interval's bounds (fields `lo`, `hi`) as a tooltip shows them."""
    return [alt.Tooltip("lo:Q", format=fmt, title="interval from"), alt.Tooltip("hi:Q", format=fmt, title="interval to")]


def band_tooltip(alt, fmt: str) -> list:
    """A histogram bar's band (fields `from`, `to`) as a tooltip shows it."""
    return [alt.Tooltip("from:Q", format=fmt, title="band from"), alt.Tooltip("to:Q", format=fmt, title="band to")]


def grouped_bars(alt, data: list[dict], y_title: str):
    """Bars per column of a sentence, one per view, side by side."""
    return alt.Chart(dataset(data)).mark_bar().encode(
        x=alt.X("column:N", title=None, sort=None, axis=alt.Axis(labelAngle=-50, labelExpr="substring(datum.label, 3)")),
        y=alt.Y("weight:Q", title=y_title, axis=alt.Axis(format="%")),
        color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
        xOffset="view:N",
        tooltip=[alt.Tooltip("column:N", title="word"), "view:N", alt.Tooltip("weight:Q", format=".1%")],
    ).properties(width=WIDTH, height=220)
