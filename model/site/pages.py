"""Rendering a page's live parts with Jinja2, recording what it cites.

The injection syntax, written in Markdown (or a notebook's markdown cells):

    {{ num("l6.alpha.median_sink", "pct:1") }}       a number, formatted
    {{ ci("l6.alpha.median_sink", "pct:1") }}        ... with its interval: "26.6% (95% CI 23.3–29.2%)"
    {{ text("l6.alpha.worst_word") }}                 a word or name from the results, escaped
    {{ table("lens_summary", model="l6") }}           a generated table
    {{ chart("sink_scatter", model="l6") }}           a chart (Vega-Lite, drawn in the browser)
    {{ claim("l6.value_norm.above_90 == 0") }}        a checked statement; prints nothing
    {{ instrument("l6", 3, 2, "alpha") }}             a link to that row in the instrument
    {{ row_link("l6.alpha.worst") }}                  ... to the row a results entry names

Every call records (key, format, page, line). An unknown key, a bad format, a syntax
error or an unknown table or chart is a `PageError` naming page and line.
"""
from __future__ import annotations

from .. import timing
from ..errors import UserError

import html
import json
import posixpath
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import jinja2
from markupsafe import Markup, escape

from . import numbers as nums
from .numbers import NumberError


class PageError(UserError, ValueError):
    """A page that cannot be rendered; the message starts with `page:line:`."""


@dataclass(frozen=True)
class Citation:
    key: str
    fmt: str
    page: str
    line: int


@dataclass(frozen=True)
class Claim:
    expr: str
    page: str
    line: int
    holds: bool


@dataclass
class Rendered:
    page: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)


INSTRUMENT_PAGE = "instrument.md"


def _template_line() -> tuple[str, int]:
    """The page and line of the template code now running (Jinja maps code lines back)."""
    frame = sys._getframe(1)
    while frame is not None:
        tmpl = frame.f_globals.get("__jinja_template__")
        if tmpl is not None:
            return tmpl.name or "?", tmpl.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return "?", 0


def _error_line(exc: BaseException, page: str) -> int:
    """The template line an exception was raised from, found in its traceback. Jinja
    rewrites tracebacks so that template frames carry the page's name and line."""
    line, tb = 0, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == page:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


class Renderer:
    """Renders pages against one set of results. One per build."""

    def __init__(self, results: dict, charts: Callable[[str], dict] | None = None, locked: dict | None = None):
        from . import tables

        self.results = results
        self.locked = locked or {}   # key -> lock.Locked: what the lock recorded, for "recorded vs now"
        self.numbers = nums.flatten(results)
        self.namespace = nums.nested(self.numbers)
        self.chart_spec = charts
        self.tables = tables
        self.env = jinja2.Environment(
            loader=jinja2.FunctionLoader(lambda name: None),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # Markdown, not HTML: values are escaped where they are text
        )
        self._rendered: Rendered | None = None

    # -- the functions pages call ---------------------------------------------------------

    def cite(self, key: str, fmt: str | None = None) -> str:
        """Format a number and record the citation (tables call this too)."""
        page, line = _template_line()
        value = nums.lookup(self.numbers, key)
        fmt = fmt or nums.default_format(value)
        out = nums.format_value(key, value, fmt)
        self._rendered.citations.append(Citation(key, fmt, self._rendered.page, line))
        return nums.md_text(out) if isinstance(value, str) else out  # text, never markup

    def locked_text(self, key: str, fmt: str) -> str:
        """The value the numbers lock recorded for `key`, formatted (not a citation)."""
        entry = self.locked.get(key)
        return "new" if entry is None else nums.format_value(key, entry.value, fmt)

    def _num(self, key: str, fmt: str | None = None) -> str:
        return self.cite(key, fmt)

    def _ci(self, key: str, fmt: str | None = None) -> str:
        """A number and its bootstrap interval (`key_lo`, `key_hi`), each cited."""
        value, lo, hi = self.cite(key, fmt), self.cite(f"{key}_lo", fmt), self.cite(f"{key}_hi", fmt)
        return f"{value} ({self.tables.ci_head(self)} {self.tables.span(lo, hi)})"

    def _text(self, key: str) -> str:
        return self.cite(key, "text")

    def _claim(self, expr: str) -> str:
        _, line = _template_line()
        try:
            holds = bool(self.env.compile_expression(expr, undefined_to_none=False)(**self.namespace))
        except jinja2.TemplateSyntaxError as exc:
            raise NumberError(f"claim {expr!r} is not a valid expression ({exc.message})") from exc
        except jinja2.UndefinedError as exc:
            raise NumberError(f"claim {expr!r} names an unknown number ({exc.message})") from exc
        self._rendered.claims.append(Claim(expr, self._rendered.page, line, holds))
        return ""

    def _table(self, name: str, **kwargs: Any) -> str:
        if name not in self.tables.TABLES:
            raise NumberError(f"unknown table {name!r}; known: {', '.join(sorted(self.tables.TABLES))}")
        return self.tables.TABLES[name](self, **kwargs)

    def _chart(self, chart: str, /, **kwargs: Any) -> Markup:
        from . import charts

        if self.chart_spec is None:
            raise NumberError("charts are not available in this renderer")
        chart_id = "/".join([chart, *(str(v) for _, v in sorted(kwargs.items()))])
        spec = self.chart_spec(chart_id)
        # Words even when specs are not built (the gate's accept): they cite numbers.
        try:
            words = charts.describe(self.results, chart_id, self.cite)
        except charts.ChartError as exc:
            raise NumberError(str(exc)) from exc
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
            f'<figcaption>{html.escape(words.caption)}</figcaption></figure>'
        )

    def instrument_url(self, model: str, sentence: int, word: int | None = None, lens: str = "alpha") -> str:
        """Relative link from the page being rendered to one row of the instrument."""
        page = self._rendered.page
        rel = posixpath.relpath(INSTRUMENT_PAGE, posixpath.dirname(page) or ".")
        frag = f"{model}/{sentence}" + (f"/{word}/{lens}" if word is not None else "")
        return f"{rel}#{frag}"

    def _instrument(self, model: str, sentence: int, word: int | None = None, lens: str = "alpha") -> str:
        return self.instrument_url(model, sentence, word, lens)

    def _row_link(self, prefix: str, lens: str = "alpha") -> str:
        """The instrument's link to the row a results entry names: `row_link("l6.alpha.worst")`
        reads its `sentence` and `word_index` (so the link follows the data)."""
        model = prefix.split(".", 1)[0]
        sentence, word = (nums.lookup(self.numbers, f"{prefix}.{k}") for k in ("sentence", "word_index"))
        return self.instrument_url(model, sentence, word, lens)

    # -- rendering ------------------------------------------------------------------------

    @timing.stage("page rendering")
    def render(self, page: str, source: str) -> Rendered:
        """`page` is the path relative to docs/ ("articles/norm-lens.md")."""
        self._rendered = Rendered(page=page, text="")
        glob = {
            "num": self._num, "ci": self._ci, "text": self._text, "claim": self._claim, "table": self._table,
            "chart": self._chart, "instrument": self._instrument, "row_link": self._row_link,
            "models": list(self.results["models"]),  # model keys, in study.yml's order: {% for key in models %}
        }
        try:
            code = self.env.compile(source, name=page, filename=page)
            template = self.env.template_class.from_code(self.env, code, self.env.make_globals(glob))
            self._rendered.text = template.render()
        except jinja2.TemplateSyntaxError as exc:
            raise PageError(f"{page}:{exc.lineno}: template syntax error: {exc.message}") from None
        except (NumberError, jinja2.UndefinedError, TypeError, ValueError) as exc:
            msg = exc.message if isinstance(exc, jinja2.UndefinedError) else str(exc)
            raise PageError(f"{page}:{_error_line(exc, page)}: {msg}") from None
        return self._rendered
