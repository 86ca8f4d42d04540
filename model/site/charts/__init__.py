"""The study's charts, one module per part of the series, each chart's builder and words
together (livenumbers/charts.py says what a chart is). `CHARTS` is the registry the
study's source hands the engine: a page asks for `chart("sink_scatter", model="l6")`."""
from __future__ import annotations

from livenumbers.charts import Charts

from . import checks, flip, norm_lens, rollout, sink, truth, verdicts

EXAMPLES = ("typical", "survivor")   # the examples `row_example` draws (measure.examples)


def choices(results: dict) -> dict[str, list]:
    """The values each chart argument takes: a model key, an example's name, a part of the series
    with verdicts."""
    return {"model": list(results["models"]), "name": list(EXAMPLES), "part": list(verdicts.PARTS)}


def drawn_from(parts: list[str]) -> list[str]:
    """A results path -> the entry it belongs to, as the author is told under `mkdocs serve`
    (`models.l6.rows.alpha.sink_share` -> `models.l6.rows`)."""
    return parts[:3] if parts[0] == "models" else parts[:2]


CHARTS = Charts({**sink.CHARTS, **norm_lens.CHARTS, **rollout.CHARTS, **flip.CHARTS, **checks.CHARTS, **truth.CHARTS,
                 **verdicts.CHARTS},
                choices, drawn_from)
