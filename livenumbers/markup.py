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
    {{ measured("results.seconds", "fixed:1") }}, {{ measured_on() }}
                                              a number measured here and the machine: never
                                              locked (livenumbers/here.py)

and the source's own functions (livenumbers/source.py; this site's `instrument()` and
`row_link()` link into the instrument page). Every call records (key, format, page, line).
Only the engine's own constructs are rendered; every other `{{ }}` and `{% %}` on a page (another
plugin's, a code example's) is left as written (livenumbers/ownership.py). An unknown key (a
number's or a work's), a bad format, a syntax error, an unknown table, chart or function, or a
route its page's data does not have, is a problem naming page and line, with the closest
existing names; a page's problems are all collected, and `PageError` carries them together.
"""
from __future__ import annotations

import math
import posixpath
import re
from typing import Any, Callable

import jinja2

from . import buildinfo, here
from . import formats as nums
from . import i18n, lock, ownership, printed, registration, updates
from . import history as changes
from . import references as refs
from . import tables as table_text
from . import timing
from .figures import Figures
from .formats import NumberError
from .here import MeasuredHere
from .marks import mark
from .page_language import InLanguage
from .problems import PageError, Problem, error_line, template_line
from .references import CitingWorks
from .rendered import Citation, Claim, Rendered
from .source import Source

# Names other modules read here: the page's problems and what a rendering records.
__all__ = ["Citation", "Claim", "FUNCTIONS", "PageError", "Problem", "Rendered", "Renderer"]

# The engine's page functions; a source adds its own.
FUNCTIONS = ("num", "ci", "text", "table", "chart", "claim", "cite", "citet", "bibliography", "build_info",
             "registration", "updates", *here.FUNCTIONS)
PLACEHOLDER = "??"   # what a call that failed prints: the page fails anyway, the rest still renders


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


class Renderer(InLanguage, Figures, CitingWorks, MeasuredHere):
    """Renders pages against one set of results. One per build."""

    def __init__(self, source: Source, results: dict, charts: Callable[[str], dict] | None = None,
                 locked: dict | None = None, chart_sources: dict[str, list[str]] | None = None,
                 bibliography: refs.Bibliography | None = None, languages: i18n.Languages | None = None,
                 catalogue: i18n.Catalogue | None = None,
                 registrations: dict[str, registration.Registration | None] | None = None,
                 templated_after: bool = False, timings: dict | None = None, history: tuple = ()):
        self.source = source
        self.templated_after = templated_after   # another plugin renders the page's templates after the engine
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
        listed = dict.keys(self.numbers) if isinstance(self.numbers, dict) else self.numbers.keys()
        wrong = [k for k in listed if not isinstance(k, str)][:3]
        if wrong:
            raise NumberError(f"the keys of {source.name}'s numbers() are text (\"fruit.apple.share\"); "
                              f"it gave {', '.join(f'{type(k).__name__} {k!r}' for k in wrong)}")
        self.namespace = nums.nested(self.numbers)
        self.timings = timings   # how the results' computation went here (livenumbers/here.py), or None
        self.here = source.measured_here(timings) if timings is not None else {}
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
                "updates": guard(self._updates),
                "measured": guard(self._measured), "measured_on": guard(self._measured_on),
                "measured_here": self.timings is not None, **own}

    def _problem(self, message: str) -> None:
        _, line = template_line()
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
        page, line = template_line()
        value = nums.lookup(self.numbers, key)
        if isinstance(value, float) and not math.isfinite(value):
            raise NumberError(f"{key!r} is {value!r}: not a number a page can print or the lock can hold "
                              "(where there is no value, let the source's numbers() leave the key out)")
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

    def _build_info(self, field: str) -> str:
        return buildinfo.placeholder(field, None if self.language == self.languages.default else self.language)

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
        _, line = template_line()
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
        functions = self._glob()
        own = ownership.protect(source, set(functions), self.templated_after)   # the engine's constructs only
        try:
            code = self.env.compile(own.text, name=page, filename=page)
            template = self.env.template_class.from_code(self.env, code, self.env.make_globals(functions))
            self._rendered.text = ownership.restore(self._with_references(template.render()), own.aside)
        except jinja2.TemplateSyntaxError as exc:
            self._rendered.problems.append(Problem(page, exc.lineno, f"template syntax error: {exc.message}"))
        except (NumberError, jinja2.UndefinedError, TypeError, ValueError) as exc:
            msg = exc.message if isinstance(exc, jinja2.UndefinedError) else str(exc)
            if isinstance(exc, jinja2.UndefinedError) and (m := re.match(r"'(\w+)' is undefined", msg or "")):
                msg += nums.did_you_mean(m.group(1), self.functions())
            self._rendered.problems.append(Problem(page, error_line(exc, page), msg))
        self._rendered.problems += [Problem(page, line, message) for line, message in own.misspelt]
        self._literal_routes(page, source)
        if self._rendered.problems:
            # A failing claim is reported with them: a missing translation or a bad key must
            # not hide that what the page says no longer holds.
            failed = [Problem(c.page, c.line, f"claim no longer holds: {c.expr}{c.reads_text()}")
                      for c in self._rendered.claims if not c.holds]
            raise PageError(sorted(self._rendered.problems + failed, key=lambda p: p.line))
        return self._rendered
