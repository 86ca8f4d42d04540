"""The study's tables, one module per part of the series (each takes the page's renderer
and returns Markdown; livenumbers/tables.py has what every table needs). `TABLES` is the
registry the study's source hands the engine: a page asks for `table("lens_summary",
model="l6")`."""
from __future__ import annotations

from . import calibration, checks, corpus, flip, mean_ablation, norm_lens, rollout, sink, truth

TABLES = {**corpus.TABLES, **sink.TABLES, **norm_lens.TABLES, **rollout.TABLES, **flip.TABLES, **checks.TABLES,
          **truth.TABLES, **calibration.TABLES, **mean_ablation.TABLES}
