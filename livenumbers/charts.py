"""Charts: Vega-Lite specs built with Altair from the results, and their words.

A source's charts are a `Charts` registry of `Chart`s: each a builder `(results, **args)
-> alt.Chart` and, beside it, a describer `(results, num, **args) -> Words`, with the
arguments a page passes (`chart("scatter", model="m")`, whose id is "scatter/m"; the
source says which values each argument takes). Specs are built once per results (and per
version of the page-side code) and cached, so a warm build never imports Altair. Data
rides in the spec, in its top-level `datasets` (a builder passes its rows through `dataset`);
every field an encoding names must exist in the data or be made by a transform, or the
build stops naming the chart and field.

Words: each chart has a caption (shown under it) and a text alternative (read out in its
place to a reader who does not see it): what is plotted, over what range, and the one
thing it shows. Every number a describer prints goes through the page's `num`, so it is
cited, locked and gated like any number in the prose: one that moves fails the build; the
results' own text goes through `num.data`, so a translation outlives a corpus change.
"""
from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any, Callable

from . import timing
from .errors import UserError


class ChartError(UserError, ValueError):
    pass


@dataclass(frozen=True)
class Words:
    """A chart in words, as plain text (the page escapes it)."""
    caption: str  # shown under the chart: what is plotted and how to read it
    alt: str      # read in the chart's place: what, over what range, the one thing it shows


@dataclass(frozen=True)
class Num:
    """What a describer prints through. `num(key, format)` prints and cites a number;
    `num.data(text)` is text of the results (a sentence, a word, a model's name, a layer)
    and `num.phrase(text)` one of a fixed set of English phrases the results choose (a
    verdict, a guess's name): each is a value of the words around it, like a number, so a
    translation keys on those words and not on which sentence or verdict the results hold
    (livenumbers/i18n.py); a phrase is translated on its own."""
    cite: Callable[[str, str], str]
    data: Callable[[str], str] = str
    phrase: Callable[[str], str] = str

    def __call__(self, key: str, fmt: str) -> str:
        return self.cite(key, fmt)


@dataclass(frozen=True)
class Chart:
    build: Callable[..., Any]       # (results, **args) -> an Altair chart
    words: Callable[..., Words]     # (results, num, **args) -> its words
    args: tuple[str, ...] = ()      # the arguments a page passes


def altair():
    """Altair, imported when a chart is built (a warm build never imports it)."""
    import altair as alt

    return alt


# The rows of the chart being built, by dataset name (see `dataset`); None: inline them.
_DATASETS: contextvars.ContextVar[dict[str, list] | None] = contextvars.ContextVar("chart_datasets", default=None)


def dataset(values: list[dict]):
    """A chart's data. Altair validates and deep-copies inline rows value by value, which
    is most of a data-heavy chart's cost; while `build` runs without validation the rows
    go by name instead, and join the spec's top-level `datasets` (where Altair would put
    them) once it is built."""
    alt = altair()
    datasets = _DATASETS.get()
    if datasets is None:
        return alt.Data(values=values)
    name = f"rows-{len(datasets)}"
    datasets[name] = values
    return alt.Data(name=name)


def _fields(node, out: set[str]) -> None:
    if isinstance(node, dict):
        if "field" in node and isinstance(node["field"], str):
            out.add(node["field"])
        for v in node.values():
            _fields(v, out)
    elif isinstance(node, list):
        for v in node:
            _fields(v, out)


def _made(transforms: list) -> set[str]:
    """Fields a transform list creates: every `as` in it (calculate, aggregate, window,
    bin, fold, ...), and fold's and density's default output names."""
    out: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            names = node.get("as")
            out.update([names] if isinstance(names, str) else names if isinstance(names, list) else [])
            if "fold" in node and "as" not in node:
                out.update(["key", "value"])
            if "density" in node and "as" not in node:
                out.update(["value", "density"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(transforms)
    return out


def check_fields(chart_id: str, spec: dict) -> None:
    """Every field an encoding (or facet) names must be in the inline data it reads, or
    be made by a transform on the way. Layers, concatenations and facets are checked one
    by one, each against the data it inherits or brings."""
    datasets = spec.get("datasets", {})

    def walk(node: dict, rows: list | None, made: set[str]) -> None:
        data = node.get("data")
        if isinstance(data, dict) and ("values" in data or "name" in data):
            rows = data["values"] if "values" in data else datasets.get(data["name"])
            made = set()
        made = made | _made(node.get("transform", []))
        used: set[str] = set()
        _fields(node.get("encoding", {}), used)
        _fields(node.get("facet", {}), used)
        if used and rows:  # no inline rows: nothing to check against
            known = set().union(*(row.keys() for row in rows if isinstance(row, dict))) | made
            unknown = sorted(used - known)
            if unknown:
                raise ChartError(f"chart {chart_id!r}: unknown field {unknown[0]!r}; the data has {sorted(known)}")
        for key in ("layer", "hconcat", "vconcat", "concat"):
            for child in node.get(key, []):
                walk(child, rows, made)
        if isinstance(node.get("spec"), dict):
            walk(node["spec"], rows, made)

    walk(spec, None, set())


class _Reads(dict):
    """The results, recording the path of every entry a chart's builder reads (its data
    source, shown to the author under `mkdocs serve`): a dict read is a step, anything
    else read from one is recorded."""

    def __init__(self, data: dict, path: str, log: set[str]):
        super().__init__(data)
        self._path, self._log = path, log

    def _step(self, key, value):
        path = f"{self._path}.{key}" if self._path else str(key)
        if isinstance(value, dict):
            return _Reads(value, path, self._log)
        self._log.add(path)
        return value

    def __getitem__(self, key):
        return self._step(key, dict.__getitem__(self, key))

    def get(self, key, default=None):
        return self._step(key, dict.__getitem__(self, key)) if key in self else default

    def items(self):
        return [(k, self._step(k, v)) for k, v in dict.items(self)]

    def values(self):
        return [self._step(k, v) for k, v in dict.items(self)]


def sources(paths: set[str], group: Callable[[list[str]], list[str]]) -> list[str]:
    """Recorded paths, each cut to the entry it belongs to (`group` of its parts), sorted."""
    return sorted({".".join(group(path.split("."))) for path in paths})


class Charts:
    """A source's charts by name, and the values each argument takes (`choices(results)`:
    argument -> its values, every chart id a page may ask for made from them)."""

    def __init__(self, charts: dict[str, Chart], choices: Callable[[dict], dict[str, list]],
                 group: Callable[[list[str]], list[str]] = lambda parts: parts[:2]):
        # group: a results path's parts -> those naming the entry a chart was drawn from,
        # as the author is told under `mkdocs serve` (default: the first two)
        self.charts, self.choices, self.group = charts, choices, group

    @staticmethod
    def chart_id(name: str, kwargs: dict[str, Any]) -> str:
        """A page's call -> its chart's id: "name/arg1/arg2", arguments sorted by name."""
        return "/".join([name, *(str(v) for _, v in sorted(kwargs.items()))])

    def ids(self, results: dict) -> list[str]:
        """Every chart the pages may ask for."""
        choices, ids = self.choices(results), []
        for name, chart in self.charts.items():
            combos = [[]]
            for arg in sorted(chart.args):
                combos = [c + [v] for c in combos for v in choices[arg]]
            ids += ["/".join([name, *c]) for c in combos]
        return ids

    def _parse(self, results: dict, chart_id: str) -> tuple[Chart, dict[str, str]]:
        name, *values = chart_id.split("/")
        if name not in self.charts:
            raise ChartError(f"unknown chart {name!r}; known: {', '.join(sorted(self.charts))}")
        chart = self.charts[name]
        if chart_id not in self.ids(results):
            known = "; ".join(f"{arg}: {values}" for arg, values in sorted(self.choices(results).items()))
            raise ChartError(f"chart {name!r} takes {', '.join(chart.args) or 'no arguments'} ({known})")
        return chart, dict(zip(sorted(chart.args), values))

    def describe(self, results: dict, chart_id: str, num: Num | Callable[[str, str], str]) -> Words:
        """The chart's caption and text alternative; `num` prints (and cites) each number."""
        chart, kwargs = self._parse(results, chart_id)
        return chart.words(results, num if isinstance(num, Num) else Num(num), **kwargs)

    def build(self, results: dict, chart_id: str, validate: bool = False, reads: set[str] | None = None) -> dict:
        """The chart's Vega-Lite spec, its fields checked against its data. Altair's schema
        validation triples the cost of the data-heavy charts, so the build skips it; a
        source's tests build every chart with it (validate=True). With a `reads` set, the
        paths of the results entries the builder read are added to it."""
        chart, kwargs = self._parse(results, chart_id)
        source = results if reads is None else _Reads(results, "", reads)
        datasets: dict[str, list] = {}
        token = _DATASETS.set(None if validate else datasets)
        try:
            spec = chart.build(source, **kwargs).to_dict(validate=validate)
        finally:
            _DATASETS.reset(token)
        if datasets:
            spec["datasets"] = {**spec.get("datasets", {}), **datasets}
        check_fields(chart_id, spec)
        return spec

    @timing.stage("charts")
    def build_all(self, results: dict) -> dict[str, dict]:
        """{"specs": chart id -> spec, "sources": chart id -> the results entries it was drawn from}."""
        specs, drawn_from = {}, {}
        for cid in self.ids(results):
            read: set[str] = set()
            specs[cid] = self.build(results, cid, reads=read)
            drawn_from[cid] = sources(read, self.group)
        return {"specs": specs, "sources": drawn_from}
