"""Tables and charts on a page: a source's table functions and chart registry, called by
`table(...)` and `chart(...)`, their words in the page's language, and what each was drawn
from (serve only). A mixin of the page renderer (livenumbers/markup.py).
"""
from __future__ import annotations

import html
import inspect
import json
from typing import Any, Callable

from markupsafe import Markup

from . import formats as nums
from . import i18n
from .formats import NumberError
from .marks import shift_marks
from .problems import template_line
from .rendered import Citation


def _call_text(kind: str, name: str, kwargs: dict) -> str:
    return f"{kind}({', '.join([repr(name), *(f'{k}={v!r}' for k, v in sorted(kwargs.items()))])})"


def _source_note(what: str, keys: list[str], entries: list[str]) -> str:
    """Serve only: what a table or chart was drawn from, as one line of raw HTML. Its
    cited keys are shown by their first two parts (`l6.alpha.*`); a chart also names the
    results entries its builder read."""
    groups = list(dict.fromkeys(".".join(k.split(".")[:2]) + ".*" for k in keys))
    shown = ", ".join(f"<code>{html.escape(g)}</code>" for g in groups[:8]) + (f" +{len(groups) - 8}" if len(groups) > 8 else "")
    drawn = ("; data from results.json " + ", ".join(f"<code>{html.escape(e)}</code>" for e in entries)) if entries else ""
    return (f'<span class="live-source">{html.escape(what)}: {len(keys)} cited numbers'
            f'{" (" + shown + ")" if keys else ""}{drawn}</span>')


class Figures:
    """`table()` and `chart()`, each produced once per renderer and replayed on later renders."""

    tables: dict[str, Callable[..., str]]
    chart_spec: Callable[[str], dict] | None
    chart_sources: dict[str, list[str]]   # chart id -> results entries it was drawn from (serve notes)
    _calls: dict[tuple, tuple]            # a table or chart call -> (text, citations, links, first mark)

    def _reuse(self, call: tuple, produce: Callable[[], str]) -> str:
        """`produce()` once per call (a table or chart, its arguments, the page, marked or
        not): another page render replays its text, citations (on the line of the call
        now) and instrument links. Tables and charts are most of a page's rendering."""
        rendered, first = self._rendered, len(self._rendered.citations)
        hit = self._calls.get(call)
        if hit is None:
            links = len(rendered.routes)
            text = produce()
            self._calls[call] = (text, [(c.key, c.fmt, c.asked) for c in rendered.citations[first:]],
                                 rendered.routes[links:], first)
            return text
        text, cites, routes, base = hit
        _, line = template_line()
        rendered.citations += [Citation(k, f, rendered.page, line, a) for k, f, a in cites]
        rendered.routes += routes
        return shift_marks(text, first - base) if self._mark and first != base else text

    def _table(self, name: str, **kwargs: Any) -> str:
        if name not in self.tables:
            raise NumberError(f"unknown table {name!r}" + nums.did_you_mean(name, list(self.tables))
                              + f" (tables: {', '.join(sorted(self.tables))})")
        fn = self.tables[name]
        params = list(inspect.signature(fn).parameters)[1:]
        for arg in kwargs:
            if arg not in params:
                raise NumberError(f"table {name!r} got an unexpected keyword argument {arg!r}"
                                  + nums.did_you_mean(arg, params) + f" (it takes {', '.join(params) or 'none'})")
        self.source.check_args(self, f"table {name!r}", kwargs)
        self._rendered.calls.append(_call_text("table", name, kwargs))

        def produce() -> str:
            first = len(self._rendered.citations)
            table = self._in_language(lambda: fn(self, **kwargs), self._table_in_language)
            if not self._mark:
                return table
            keys = [c.key for c in self._rendered.citations[first:]]
            call = ", ".join([repr(name), *(f"{k}={v!r}" for k, v in kwargs.items())])
            return f"\n{_source_note(f'table({call})', keys, [])}\n\n{table}"

        return self._reuse(("table", name, repr(sorted(kwargs.items())), self._rendered.page, self._mark), produce)

    def _chart(self, chart: str, /, **kwargs: Any) -> Markup:
        self._rendered.calls.append(_call_text("chart", chart, kwargs))
        call = ("chart", chart, repr(sorted(kwargs.items())), self._rendered.page, self._mark)
        return Markup(self._reuse(call, lambda: str(self._chart_figure(chart, **kwargs))))

    def _chart_figure(self, chart: str, /, **kwargs: Any) -> Markup:
        from .charts import ChartError, Num

        charts = self.source.charts
        if self.chart_spec is None or charts is None:
            raise NumberError("charts are not available in this renderer")
        chart_id = charts.chart_id(chart, kwargs)
        if chart not in charts.charts:
            raise NumberError(f"unknown chart {chart_id!r}" + nums.did_you_mean(chart, list(charts.charts))
                              + f" (charts: {', '.join(sorted(charts.charts))})")
        self.source.check_args(self, f"unknown chart {chart_id!r}", kwargs)
        spec = self.chart_spec(chart_id)
        # Words even when specs are not built (the gate's accept): they cite numbers.
        first = len(self._rendered.citations)
        try:
            num = Num(self.cite, self.data, self.phrase)
            words = self._in_language(lambda: charts.describe(self.results, chart_id, num), self._words_in_language)
        except ChartError as exc:
            raise NumberError(str(exc)) from exc
        if self.language != self.languages.default:
            spec = i18n.localized_spec(spec, self.language, self.catalogue, self._problem)
        note = ""
        if self._mark:
            keys = [c.key for c in self._rendered.citations[first:]]
            note = _source_note(f"chart {chart_id!r}", keys, self.chart_sources.get(chart_id, []))
        # The spec rides in a data- attribute (escaped), never in a <script>: Material's
        # instant navigation re-runs inline scripts, and a sentence may hold "</script>".
        # The frame is role="img" named by the text alternative, so the drawing inside
        # (whose container Vega names "Vega visualization") is read as that one image,
        # not mark by mark; the figcaption names the figure. One line: a blank line
        # would end Markdown's raw HTML block.
        return Markup(
            f'<figure class="chart"><div class="chart-frame" role="img" '
            f'aria-label="{html.escape(words.alt, quote=True)}">'
            f'<div class="vega-chart" id="chart-{html.escape(chart_id.replace("/", "-"))}" '
            f'data-spec="{html.escape(json.dumps(spec), quote=True)}"></div></div>'
            f'<figcaption>{html.escape(words.caption)}</figcaption>{note}</figure>'
        )
