"""Rendering a page's live parts with Jinja2, recording what it cites.

The injection syntax, written in Markdown (or a notebook's markdown cells):

    {{ num("model.stat", "pct:1") }}          a number, formatted
    {{ ci("model.stat", "pct:1") }}           ... with its interval: "26.6% (95% CI 23.3–29.2%)"
    {{ text("model.word") }}                  a word or name from the results, escaped
    {{ table("summary", model="m") }}         a generated table (the source's)
    {{ chart("scatter", model="m") }}         a chart (Vega-Lite, drawn in the browser)
    {{ claim("model.stat == 0") }}            a checked statement; prints nothing
    {{ cite("key") }}, {{ citet("key") }}     a work of the bibliography, linked to the page's
                                              reference list (livenumbers/references.py)
    {{ build_info("commit") }}                what the build was made from (livenumbers/buildinfo.py)
    {{ registration("calibration") }}         a registered settings block's commit, date and
                                              amendments (livenumbers/registration.py)
    {{ updates() }}                           every change of a published number, with its reason
                                              (the lock's history: livenumbers/updates.py)

and the source's own functions (livenumbers/source.py; this site's `instrument()` and
`row_link()` link into the instrument page). Every call records (key, format, page, line).
An unknown key (a number's or a work's), a bad format, a syntax error, an unknown table,
chart or function, or a route its page's data does not have, is a problem naming page and
line, with the closest existing names; a page's problems are all collected, and
`PageError` carries them together.
"""
from __future__ import annotations

import dataclasses
import html
import json
import posixpath
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import jinja2
from markupsafe import Markup

from . import buildinfo
from . import formats as nums
from . import i18n, lock, printed, registration, updates
from . import history as changes
from . import references as refs
from . import tables as table_text
from . import timing
from .errors import UserError
from .formats import NumberError
from .source import Source


@dataclass(frozen=True)
class Problem:
    """One thing wrong on a page, found while rendering it."""
    page: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.message}"


class PageError(UserError, ValueError):
    """Pages that cannot be rendered. Carries every problem found (each `page:line:
    message`), so one failed build lists them all."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        pages = sorted({p.page for p in self.problems})
        if len(self.problems) == 1:
            text = str(self.problems[0])
        else:
            text = (f"{len(self.problems)} problems on {len(pages)} page(s); fix them all, then build again:\n"
                    + "\n".join(f"  {p}" for p in self.problems))
        super().__init__(text)


@dataclass(frozen=True)
class Citation:
    key: str
    fmt: str          # the format printed: the page's, or a coarser one the lock recorded (printed.py)
    page: str
    line: int
    asked: str = ""   # the page's format, where the lock prints a coarser one

    @property
    def requested(self) -> str:
        return self.asked or self.fmt


@dataclass(frozen=True)
class Claim:
    expr: str
    page: str
    line: int
    holds: bool
    reads: tuple[tuple[str, str], ...] = ()   # (key, value as repr) of every number the claim reads

    def reads_text(self) -> str:
        """" (key = value, ...)": what the claim read, for a message saying why it failed."""
        return " (" + ", ".join(f"{k} = {v}" for k, v in self.reads) + ")" if self.reads else ""


@dataclass
class Rendered:
    page: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)       # links into the source's route page, checked ("l6/3/2/alpha")
    works: list[str] = field(default_factory=list)        # bibliography keys cited, in order
    calls: list[str] = field(default_factory=list)        # its tables and charts, as called ("table('x', model='m')")
    problems: list[Problem] = field(default_factory=list)



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


# The engine's page functions; a source adds its own.
FUNCTIONS = ("num", "ci", "text", "table", "chart", "claim", "cite", "citet", "bibliography", "build_info",
             "registration", "updates")
PLACEHOLDER = "??"   # what a call that failed prints: the page fails anyway, the rest still renders

# Serve only (`Renderer(mark=True)`): each cited number is wrapped in private-use characters
# carrying its index in the page's citations, so the hooks can turn it into a hover detail
# after Markdown has run (model/site/authoring.py). They are no word characters: a heading
# holding a number keeps the same id. Never in a published build.
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


class _Unknown(jinja2.StrictUndefined):
    """A name the page uses that is not a page function: calling it is one problem of the
    page (with the closest names), and the page renders on, so the build lists them all."""

    __slots__ = ()
    renderer: "Renderer"   # set on a subclass per renderer

    def __getattr__(self, name: str) -> Any:
        if name == "jinja_pass_arg":  # Jinja asks before calling; any other attribute fails as usual
            raise AttributeError(name)
        return super().__getattr__(name)

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        name = self._undefined_name
        self.renderer._problem(f"unknown function {name!r}" + nums.did_you_mean(name, self.renderer.functions()))
        return PLACEHOLDER


def _claim_keys(node) -> list[str]:
    """Dotted names a claim expression reads (`l6.alpha.median_sink`), in order."""
    from jinja2 import nodes

    if isinstance(node, nodes.Getattr):
        parts, inner = [node.attr], node.node
        while isinstance(inner, nodes.Getattr):
            parts.append(inner.attr)
            inner = inner.node
        if isinstance(inner, nodes.Name):
            return [".".join([inner.name, *reversed(parts)])]
    if isinstance(node, nodes.Name):
        return [node.name]
    return [k for child in node.iter_child_nodes() for k in _claim_keys(child)]


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


class Renderer:
    """Renders pages against one set of results. One per build."""

    def __init__(self, source: Source, results: dict, charts: Callable[[str], dict] | None = None,
                 locked: dict | None = None, chart_sources: dict[str, list[str]] | None = None,
                 bibliography: refs.Bibliography | None = None, languages: i18n.Languages | None = None,
                 catalogue: i18n.Catalogue | None = None,
                 registrations: dict[str, registration.Registration | None] | None = None,
                 history: tuple = ()):
        self.source = source
        self.languages = languages or i18n.Languages()
        self.catalogue = catalogue or i18n.Catalogue()
        self.language = self.languages.default   # the page's being rendered
        self.bibliography = bibliography if bibliography is not None else refs.Bibliography(None)
        self.results = results
        self.locked = locked or {}   # key -> lock.Locked: what the lock recorded, for "recorded vs now"
        self.registrations = registrations or {}   # registered block -> the lock's record of it (None: not yet)
        self.history = history   # the lock's history (livenumbers/history.py): a changed number is marked
        self.updated = changes.latest(history)   # language -> key -> the last entry that changed what it prints
        self._marks_for: tuple[str, ...] | None = None   # ci(): the keys one mark stands for (None: the cited one)
        self.numbers = source.numbers(results)
        self.namespace = nums.nested(self.numbers)
        self.chart_spec = charts
        self.chart_sources = chart_sources or {}   # chart id -> results entries it was drawn from (serve notes)
        self.tables = source.tables
        self.env = jinja2.Environment(
            loader=jinja2.FunctionLoader(lambda name: None),
            undefined=type("_PageUnknown", (_Unknown,), {"__slots__": (), "renderer": self}),
            keep_trailing_newline=True,
            autoescape=False,  # Markdown, not HTML: values are escaped where they are text
        )
        self.claims_env = jinja2.Environment(undefined=jinja2.StrictUndefined)
        self._calls: dict[tuple, tuple] = {}   # a table or chart call -> (text, citations, links, first mark)
        self._claims: dict[str, tuple] = {}   # a claim -> (holds, what it read)
        self._rendered: Rendered | None = None
        self._mark = False
        self._marking_values = False   # inside a table or chart's words in another language: values marked
        self._references_title = None

    def functions(self) -> list[str]:
        return list(self._glob())

    def _glob(self) -> dict[str, Any]:
        guard = self._guarded
        own = {name: guard(f) if callable(f) else f for name, f in self.source.functions(self).items()}
        return {"num": guard(self._num), "ci": guard(self._ci), "text": guard(self._text), "claim": guard(self._claim),
                "table": guard(self._table), "chart": guard(self._chart), "cite": guard(self._cite),
                "citet": guard(self._citet), "bibliography": guard(self._references_here),
                "build_info": guard(self._build_info), "registration": guard(self._registration),
                "updates": guard(self._updates), **own}

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
        _, line = _template_line()
        rendered.citations += [Citation(k, f, rendered.page, line, a) for k, f, a in cites]
        rendered.routes += routes
        return shift_marks(text, first - base) if self._mark and first != base else text

    def _problem(self, message: str) -> None:
        _, line = _template_line()
        self._rendered.problems.append(Problem(self._rendered.page, line, message))

    def _guarded(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` as a page calls it: a problem it raises is recorded with the page's line, and
        the page renders on (printing PLACEHOLDER there), so one build reports them all."""
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except (NumberError, TypeError, ValueError) as exc:
                self._problem(str(exc))
                return PLACEHOLDER
        return call

    # -- the functions pages call ---------------------------------------------------------

    def cite(self, key: str, fmt: str | None = None) -> str:
        """Format a number and record the citation (tables call this too)."""
        page, line = _template_line()
        value = nums.lookup(self.numbers, key)
        asked = fmt or nums.default_format(value)
        nums.parse_format(asked)   # a bad format is the page's problem, whatever the lock holds
        entry = self.locked.get(key)
        fmt = entry.shown.get(asked, asked) if entry is not None else asked   # the lock's choice (printed.py)
        if entry is not None and printed.stated(fmt) and not lock.moved(entry, value):
            value = entry.value   # a stated tolerance prints the value of record, the same on every machine
        out = nums.format_value(key, value, fmt, self.language)
        self._rendered.citations.append(Citation(key, fmt, self._rendered.page, line, asked if fmt != asked else ""))
        out = nums.md_text(out) if isinstance(value, str) else out  # text, never markup
        out = mark(len(self._rendered.citations) - 1, out) if self._mark else out
        out += self._update_mark((key,) if self._marks_for is None else self._marks_for)
        return f"{i18n.OPEN}{out}{i18n.CLOSE}" if self._marking_values else out

    def _update_mark(self, keys: tuple[str, ...]) -> str:
        """The mark of the last history entry that changed what one of `keys` prints in the
        page's edition (livenumbers/updates.py), or nothing."""
        changed = self.updated.get(self.language, {})
        entry = max((changed.get(k, 0) for k in keys), default=0)
        return updates.marker(entry) if entry else ""

    def locked_text(self, key: str, fmt: str) -> str:
        """The value the numbers lock recorded for `key`, formatted (not a citation)."""
        entry = self.locked.get(key)
        return "new" if entry is None else nums.format_value(key, entry.value, fmt, self.language)

    # -- the page's language ----------------------------------------------------------------

    def words(self, english: str) -> str:
        """A plain English phrase of the engine or the source in the page's language (its
        values, if any, marked between i18n.OPEN and CLOSE)."""
        return self._translated(english)

    def data(self, text: str) -> str:
        """Text of the results (a sentence, a word, a model's name) in a table's or chart's
        words: never translated, and a value of the words around it ({0} in the catalogue's
        skeleton), so what needs translating does not change with the corpus."""
        return f"{i18n.OPEN}{i18n.unmark(text)}{i18n.CLOSE}" if self._marking_values else text

    def phrase(self, english: str) -> str:
        """One of a fixed set of English phrases the results choose (a verdict, a guess's
        name) in a table's or chart's words: translated on its own, then a value of the
        words around it."""
        return f"{i18n.OPEN}{self._translated(english)}{i18n.CLOSE}" if self._marking_values else english

    def _build_info(self, field: str) -> str:
        return buildinfo.placeholder(field, None if self.language == self.languages.default else self.language)

    def _date(self, iso: str) -> str:
        """An ISO date as the page's language writes it: English keeps "2026-12-03", French
        "3 décembre 2026" (Babel's long form)."""
        return str(iso) if self.language == self.languages.default else nums.long_date(iso, self.language)

    def punctuation(self, english: str) -> str:
        """A separator as the page's language writes it ("; " -> " ; " in French), where the
        catalogue says so."""
        if self.language == self.languages.default:
            return english
        return self.catalogue.words(english, self.language) or english

    def interval_label(self) -> str:
        """"95% CI" ("IC à 95 %"), from the source's interval level."""
        level = nums.format_value("interval level", self.source.interval_level(self.results), "pct:0", self.language)
        label = self._translated(f"{i18n.OPEN}{level}{i18n.CLOSE} CI")
        return f"{i18n.OPEN}{label}{i18n.CLOSE}" if self._marking_values else label   # in a table: translated once

    def _translated(self, text: str) -> str:
        """Marked text (values between i18n.OPEN and CLOSE) in the page's language: English
        as it is, another language from the catalogue; text the catalogue lacks is a
        problem of the page, naming the entry to add."""
        if self.language == self.languages.default:
            return i18n.unmark(text)
        out, missing = self.catalogue.translate(text, self.language)
        if missing is not None:
            self._problem(f"no {self.language} translation of {missing!r} (add it to the catalogue, "
                          f"{self.language}.yml, with its values {{0}}, {{1}}, ... kept)")
        return out

    def _in_language(self, produce: Callable[[], Any], unit: Callable[[Any], Any]) -> Any:
        """`produce()` (a table, a chart's words) in the page's language: its values marked
        while it runs, then each of its parts translated by `unit`."""
        if self.language == self.languages.default:
            return produce()
        self._marking_values = True
        try:
            text = produce()
        finally:
            self._marking_values = False
        return unit(text)

    def _words_in_language(self, words):
        """A chart's caption and text alternative, each translated whole."""
        return dataclasses.replace(words, caption=self._translated(words.caption), alt=self._translated(words.alt))

    def _table_in_language(self, text: str) -> str:
        """A Markdown table's cells, and the other lines around it (a fold's summary), one by one."""
        out = []
        for line in text.split("\n"):
            if line.startswith("|") and set(line) <= set("|-"):
                out.append(line)
            elif line.startswith("| ") and line.endswith(" |"):
                out.append("| " + " | ".join(self._translated(c) for c in line[2:-2].split(" | ")) + " |")
            elif m := re.fullmatch(r"(\s*<summary>)(.*)(</summary>\s*)", line):
                out.append(m.group(1) + self._translated(m.group(2)) + m.group(3))
            elif line.strip() and not line.lstrip().startswith("<"):
                out.append(self._translated(line))
            else:
                out.append(line)
        return "\n".join(out)

    def _num(self, key: str, fmt: str | None = None) -> str:
        return self.cite(key, fmt)

    def _ci(self, key: str, fmt: str | None = None) -> str:
        """A number and its bootstrap interval (`key_lo`, `key_hi`), each cited."""
        try:   # one mark, after the number, for it and its interval
            self._marks_for = (key, f"{key}_lo", f"{key}_hi")
            value = self.cite(key, fmt)
            if f"{key}_lo" not in self.numbers:
                raise NumberError(f"{key!r} has no interval (no {key}_lo / {key}_hi); cite it with num()")
            self._marks_for = ()
            lo, hi = self.cite(f"{key}_lo", fmt), self.cite(f"{key}_hi", fmt)
        finally:
            self._marks_for = None
        level = nums.format_value("interval level", self.source.interval_level(self.results), "pct:0", self.language)
        bounds = table_text.span(lo, hi, self.words("to"))   # the label and its range translated whole: "IC à 95 % : ..."
        return f"{value} ({self._translated(f'{i18n.OPEN}{level}{i18n.CLOSE} CI {i18n.OPEN}{bounds}{i18n.CLOSE}')})"

    def _text(self, key: str) -> str:
        return self.cite(key, "text")

    def _updates(self) -> str:
        self._rendered.calls.append("updates()")
        return updates.listing(self.history, updates.Edition.of(self._rendered.page, self.languages, self.catalogue),
                               self.languages)

    def _registration(self, block: str) -> str:
        text = registration.statement(self.registrations, block, self.words, self._date)
        self._rendered.calls.append(registration.call(block))
        return text

    def _claim(self, expr: str) -> str:
        _, line = _template_line()
        if expr not in self._claims:   # a claim's verdict depends on the results alone: once per renderer
            self._claims[expr] = self._check(expr)
        holds, reads = self._claims[expr]
        self._rendered.claims.append(Claim(expr, self._rendered.page, line, holds, reads))
        return ""

    def _check(self, expr: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
        """(does the claim hold, the value of each number it reads)."""
        try:
            holds = bool(self.claims_env.compile_expression(expr, undefined_to_none=False)(**self.namespace))
        except jinja2.TemplateSyntaxError as exc:
            raise NumberError(f"claim {expr!r} is not a valid expression ({exc.message})") from exc
        except jinja2.UndefinedError as exc:
            unknown = [k for k in _claim_keys(self.claims_env.parse("{{ " + expr + " }}"))
                       if k not in self.numbers and k not in self.namespace]
            hint = nums.did_you_mean_key(self.numbers, unknown[0]) if unknown else ""
            raise NumberError(f"claim {expr!r} names an unknown number ({exc.message}){hint}") from exc
        keys = _claim_keys(self.claims_env.parse("{{ " + expr + " }}"))
        return holds, tuple((k, repr(self.numbers[k])) for k in dict.fromkeys(keys) if k in self.numbers)

    def _table(self, name: str, **kwargs: Any) -> str:
        import inspect

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

    # -- works of the bibliography -----------------------------------------------------------

    def _labels(self, keys: tuple[str, ...]) -> list[refs.Label]:
        if not keys:
            raise NumberError("a citation names no work: cite(\"key\"), or several keys")
        labels = [self.bibliography.label(k) for k in keys]
        self._rendered.works += [w.key for w in labels]
        return labels

    def _cite(self, *keys: str) -> str:
        return self.bibliography.cite(self._labels(keys), self.words("and"), self.punctuation("; "))

    def _citet(self, *keys: str) -> str:
        return self.bibliography.citet(self._labels(keys), self.words("and"))

    def _references_here(self, title: str | None = None) -> str:
        self._references_title = title
        return refs.PLACE

    def _with_references(self, text: str) -> str:
        """The page's reference list where `bibliography()` was called, else at its end."""
        keys = list(dict.fromkeys(self._rendered.works))
        title = self._references_title or self.words("References")
        words = None if self.language == self.languages.default else lambda w: self.catalogue.words(w, self.language) or w
        lang = None if self.language == self.languages.default else self.language
        listing = self.bibliography.listing(keys, title, words, lang) if keys else ""
        if refs.PLACE in text:
            return text.replace(refs.PLACE, listing)
        return text.rstrip("\n") + "\n\n" + listing if listing else text

    # -- links into the source's route page ---------------------------------------------------

    def route_link(self, fragment: str) -> str:
        """A relative link from the page being rendered to `fragment` on the source's route
        page (checked by the source, and recorded: MkDocs' anchor check cannot read routes)."""
        page = self._rendered.page
        rel = posixpath.relpath(self.source.route_page, posixpath.dirname(page) or ".")
        self.source.check_route(self, fragment)
        self._rendered.routes.append(fragment)
        return f"{rel}#{fragment}"

    def _literal_routes(self, page: str, source: str) -> None:
        """Links into the route page written by hand (`[x](../instrument.md#l6/3/2/alpha)`)
        are checked too."""
        if not self.source.route_page:
            return
        pattern = re.compile(re.escape(posixpath.basename(self.source.route_page)) + r"#([^\s)\"'\]>]+)")
        for i, line in enumerate(source.split("\n"), 1):
            for m in pattern.finditer(re.sub(r"`[^`]*`", "", line)):
                try:
                    self.source.check_route(self, m.group(1))
                    self._rendered.routes.append(m.group(1))
                except NumberError as exc:
                    self._rendered.problems.append(Problem(page, i, str(exc)))

    # -- rendering ------------------------------------------------------------------------

    @timing.stage("page rendering")
    def render(self, page: str, source: str, mark_numbers: bool = False) -> Rendered:
        """`page` is the path relative to docs/ ("articles/norm-lens.md"). Every problem on
        the page is collected; if there is any, `PageError` carries them all. With
        `mark_numbers` (serve only), each cited number is wrapped for its hover detail."""
        self._rendered, self._mark = Rendered(page=page, text=""), mark_numbers
        self._references_title = None
        self.language = self.languages.of(page)
        try:
            code = self.env.compile(source, name=page, filename=page)
            template = self.env.template_class.from_code(self.env, code, self.env.make_globals(self._glob()))
            self._rendered.text = self._with_references(template.render())
        except jinja2.TemplateSyntaxError as exc:
            self._rendered.problems.append(Problem(page, exc.lineno, f"template syntax error: {exc.message}"))
        except (NumberError, jinja2.UndefinedError, TypeError, ValueError) as exc:
            msg = exc.message if isinstance(exc, jinja2.UndefinedError) else str(exc)
            if isinstance(exc, jinja2.UndefinedError) and (m := re.match(r"'(\w+)' is undefined", msg or "")):
                msg += nums.did_you_mean(m.group(1), self.functions())
            self._rendered.problems.append(Problem(page, _error_line(exc, page), msg))
        self._literal_routes(page, source)
        if self._rendered.problems:
            # A failing claim is reported with them: a missing translation or a bad key must
            # not hide that what the page says no longer holds.
            failed = [Problem(c.page, c.line, f"claim no longer holds: {c.expr}{c.reads_text()}")
                      for c in self._rendered.claims if not c.holds]
            raise PageError(sorted(self._rendered.problems + failed, key=lambda p: p.line))
        return self._rendered
