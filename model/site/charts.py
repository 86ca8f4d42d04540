"""Charts, as Vega-Lite specs built with Altair from the results.

`CHARTS` maps a chart's name to a builder `(results, **args) -> alt.Chart`; a page asks
for `chart("sink_scatter", model="l6")`, whose id is "sink_scatter/l6". Specs are built
once per results (and per version of this file) and cached, so a warm build never
imports Altair. Data rides inline in the spec; every field an encoding names must exist
in the data or be made by a transform, or the build stops naming the chart and field.
"""
from __future__ import annotations

from ..errors import UserError
from ..instrument import LENS_LABELS

WIDTH = 560


class ChartError(UserError, ValueError):
    pass


def _alt():
    import altair as alt

    return alt


def sink_scatter(results: dict, model: str):
    """Each displayed row: its sink share under α (x) and under a norm lens (y)."""
    alt = _alt()
    m = results["models"][model]
    alpha = {(r["sentence"], r["word_index"]): r for r in m["rows"] if r["lens"] == "alpha"}
    data = [
        {"alpha": alpha[(r["sentence"], r["word_index"])]["sink_share"], "norm": r["sink_share"],
         "lens": LENS_LABELS[r["lens"]], "word": r["word"], "sentence": r["sentence"]}
        for r in m["rows"] if r["lens"] != "alpha"
    ]
    base = alt.Chart(alt.Data(values=data))
    points = base.mark_point(filled=True, opacity=0.6).encode(
        x=alt.X("alpha:Q", title="sink share under α", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("norm:Q", title="sink share under the norm lens", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("lens:N", title="lens"),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("alpha:Q", format=".1%"), alt.Tooltip("norm:Q", format=".1%")],
    )
    diagonal = alt.Chart(alt.Data(values=[{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


def sink_distribution(results: dict, model: str):
    """How much of each displayed row goes to the sink, under α."""
    alt = _alt()
    data = [{"sink": r["sink_share"], "lens": LENS_LABELS[r["lens"]]} for r in results["models"][model]["rows"]]
    return alt.Chart(alt.Data(values=data)).mark_bar(opacity=0.8).encode(
        x=alt.X("sink:Q", bin=alt.Bin(step=0.05, extent=[0, 1]), title="sink share of the displayed row", axis=alt.Axis(format="%")),
        y=alt.Y("count():Q", title="rows"),
        color=alt.Color("lens:N", title="lens"),
        row=alt.Row("lens:N", title=None),
        tooltip=["lens:N", "count():Q"],
    ).properties(width=WIDTH, height=110)


def ratio_by_layer(results: dict, model: str):
    """Median ratio of [CLS]/[SEP] norms to the mean content token's, per layer."""
    alt = _alt()
    data = [
        {"layer": r["layer"], "median": r["median"], "series": f"[{r['token'].upper()}] ‖{r['vector']}‖"}
        for r in results["models"][model]["ratios"] if r["layer"] is not None
    ]
    return _ratio_lines(alt, data, "layer:O", "layer")


def depth_ratio(results: dict):
    """[CLS] value-norm ratio against relative depth, one line per model."""
    alt = _alt()
    data = []
    for key, m in results["models"].items():
        L = m["n_layers"]
        for r in m["ratios"]:
            if r["layer"] is not None and r["vector"] == "v":
                data.append({"depth": (r["layer"] + 1) / L, "median": r["median"],
                             "series": f"{m['model']} [{r['token'].upper()}]"})
    return _ratio_lines(alt, data, "depth:Q", "relative depth (layer / number of layers)")


def _ratio_lines(alt, data, x, x_title):
    lines = alt.Chart(alt.Data(values=data)).mark_line(point=True).encode(
        x=alt.X(x, title=x_title),
        y=alt.Y("median:Q", title="median norm ratio to a content token"),
        color=alt.Color("series:N", title=None),
        tooltip=["series:N", alt.Tooltip("median:Q", format=".2f")],
    )
    one = alt.Chart(alt.Data(values=[{"y": 1.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (one + lines).properties(width=WIDTH, height=300)


def depth_sink(results: dict):
    """Median sink share over every head, per layer, under each lens, per model."""
    alt = _alt()
    data = [
        {"depth": (s["layer"] + 1) / m["n_layers"], "median": s["stats"]["median_sink"],
         "model": m["model"], "lens": LENS_LABELS[s["lens"]]}
        for m in results["models"].values() for s in m["per_layer"]
    ]
    return alt.Chart(alt.Data(values=data)).mark_line(point=True).encode(
        x=alt.X("depth:Q", title="relative depth (layer / number of layers)"),
        y=alt.Y("median:Q", title="median sink share, all heads", axis=alt.Axis(format="%")),
        color=alt.Color("model:N"),
        strokeDash=alt.StrokeDash("lens:N"),
        tooltip=["model:N", "lens:N", alt.Tooltip("median:Q", format=".1%")],
    ).properties(width=WIDTH, height=300)


def rollout_entropy(results: dict):
    """Normalized entropy of every rollout row, per model."""
    alt = _alt()
    data = [{"entropy": e, "model": m["model"]} for m in results["models"].values() for e in m["rollout"]["entropies"]]
    return alt.Chart(alt.Data(values=data)).mark_bar(opacity=0.8).encode(
        x=alt.X("entropy:Q", bin=alt.Bin(step=0.02, extent=[0.5, 1]), title="normalized entropy of the rollout row (1 = uniform)"),
        y=alt.Y("count():Q", title="rows"),
        color=alt.Color("model:N"),
        row=alt.Row("model:N", title=None),
    ).properties(width=WIDTH, height=120)


def rollout_views(results: dict):
    """Rollout rows' normalized entropy, full row against the row as displayed, per model."""
    alt = _alt()
    data = [
        {"entropy": e, "model": m["model"], "view": view}
        for m in results["models"].values()
        for view, values in (("full row", m["rollout"]["entropies"]),
                             ("displayed row (other words)", m["rollout"]["displayed_entropies"]))
        for e in values
    ]
    return alt.Chart(alt.Data(values=data)).mark_bar(opacity=0.7).encode(
        x=alt.X("entropy:Q", bin=alt.Bin(step=0.02, extent=[0.5, 1]), title="normalized entropy (1 = uniform)"),
        y=alt.Y("count():Q", title="rows", stack=None),
        color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
        row=alt.Row("model:N", title=None),
        tooltip=["model:N", "view:N", "count():Q"],
    ).properties(width=WIDTH, height=120)


def flip_heads(results: dict, model: str):
    """Per pair, how many heads change their winner for the pronoun, per lens."""
    alt = _alt()
    sentences = results["sentences"]
    data = [
        {"pair": f"{i + 1}: …{sentences[p['sentences'][0]].split()[-1]} / {sentences[p['sentences'][1]].split()[-1]}",
         "changed": p["changed"], "follows": p["follows_reader"], "lens": LENS_LABELS[f["lens"]]}
        for f in results["models"][model]["flips"] for i, p in enumerate(f["pairs"])
    ]
    return alt.Chart(alt.Data(values=data)).mark_bar().encode(
        x=alt.X("changed:Q", title="heads whose winner changes"),
        y=alt.Y("pair:N", title=None),
        color=alt.Color("lens:N"),
        yOffset="lens:N",
        tooltip=["pair:N", "lens:N", "changed:Q", "follows:Q"],
    ).properties(width=WIDTH, height=220)


def mutant_sinks(results: dict, model: str):
    """The wrong-aggregation mutant against the instrument: each displayed row's sink share."""
    alt = _alt()
    rows = results["models"][model]["mutant"]["wrong_agg"]["rows"]
    data = [
        {"right": r["sink_share"], "wrong": r["wrong_sink_share"], "row_sum": r["wrong_row_sum"], "word": r["word"],
         "subwords": "one subword" if r["n_subwords"] == 1 else "several subwords", "sentence": r["sentence"]}
        for r in rows
    ]
    top = max(1.0, *(d["wrong"] for d in data))
    points = alt.Chart(alt.Data(values=data)).mark_point(filled=True, opacity=0.7, size=60).encode(
        x=alt.X("right:Q", title="sink share, instrument (mean rows, sum columns)", axis=alt.Axis(format="%")),
        y=alt.Y("wrong:Q", title="sink share, mutant (sum rows, mean columns)", axis=alt.Axis(format="%")),
        color=alt.Color("subwords:N", title="from-word"),
        shape=alt.Shape("subwords:N", title="from-word"),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("right:Q", format=".1%"), alt.Tooltip("wrong:Q", format=".1%"),
                 alt.Tooltip("row_sum:Q", format=".3f", title="mutant row sums to")],
    )
    diagonal = alt.Chart(alt.Data(values=[{"a": 0.0}, {"a": top}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


CHARTS = {
    "mutant_sinks": (mutant_sinks, True),
    "sink_scatter": (sink_scatter, True),
    "sink_distribution": (sink_distribution, True),
    "ratio_by_layer": (ratio_by_layer, True),
    "flip_heads": (flip_heads, True),
    "depth_ratio": (depth_ratio, False),
    "depth_sink": (depth_sink, False),
    "rollout_entropy": (rollout_entropy, False),
    "rollout_views": (rollout_views, False),
}  # name -> (builder, takes a model)


def chart_ids(results: dict) -> list[str]:
    ids = []
    for name, (_, per_model) in CHARTS.items():
        ids += [f"{name}/{k}" for k in results["models"]] if per_model else [name]
    return ids


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


def build(results: dict, chart_id: str) -> dict:
    name, *args = chart_id.split("/")
    if name not in CHARTS:
        raise ChartError(f"unknown chart {name!r}; known: {', '.join(sorted(CHARTS))}")
    builder, per_model = CHARTS[name]
    if per_model and (len(args) != 1 or args[0] not in results["models"]):
        raise ChartError(f"chart {name!r} needs model= one of {sorted(results['models'])}")
    chart = builder(results, *args)
    spec = chart.to_dict()
    check_fields(chart_id, spec)
    return spec


def build_all(results: dict) -> dict[str, dict]:
    return {cid: build(results, cid) for cid in chart_ids(results)}
