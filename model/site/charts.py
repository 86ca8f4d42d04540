"""Charts, as Vega-Lite specs built with Altair from the results, and their words.

`CHARTS` maps a chart's name to a builder `(results, **args) -> alt.Chart`, `WORDS` to
a describer `(results, **args, num) -> Words`; a page asks for
`chart("sink_scatter", model="l6")`, whose id is "sink_scatter/l6". Specs are built
once per results (and per version of this file) and cached, so a warm build never
imports Altair. Data rides inline in the spec; every field an encoding names must exist
in the data or be made by a transform, or the build stops naming the chart and field.

Words: each chart has a caption (shown under it) and a text alternative (read out in
its place to a reader who does not see it): what is plotted, over what range, and the
one thing it shows. Each describer sits under its builder and reads the same results;
every number it prints goes through the page's `num`, so it is cited, locked and gated
like any number in the prose: one that moves fails the build.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

LENS_NAMES = {"alpha": "α", "value_norm": "‖α v‖", "output_norm": "‖α f(x)‖"}
WIDTH = 560


class ChartError(ValueError):
    pass


@dataclass(frozen=True)
class Words:
    """A chart in words, as plain text (the page escapes it)."""
    caption: str  # shown under the chart: what is plotted and how to read it
    alt: str      # read in the chart's place: what, over what range, the one thing it shows


Num = Callable[[str, str], str]  # the page's num(key, format): prints and cites a number


def _name(results: dict, model: str) -> str:
    return results["models"][model]["model"]


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
         "lens": LENS_NAMES[r["lens"]], "word": r["word"], "sentence": r["sentence"]}
        for r in m["rows"] if r["lens"] != "alpha"
    ]
    base = alt.Chart(alt.Data(values=data))
    points = base.mark_point(filled=True, opacity=0.6).encode(
        x=alt.X("alpha:Q", title="sink share under α", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("norm:Q", title="sink share under the norm lens", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("lens:N", title="lens"),
        shape=alt.Shape("lens:N", title="lens"),  # not by colour alone
        tooltip=["word:N", "sentence:Q", alt.Tooltip("alpha:Q", format=".1%"), alt.Tooltip("norm:Q", format=".1%")],
    )
    diagonal = alt.Chart(alt.Data(values=[{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


def sink_scatter_words(results: dict, model: str, num: Num) -> Words:
    k = model
    return Words(
        f"Every displayed row of {_name(results, model)}: its sink share under α (across) and under "
        f"a norm lens (up), one point per row and lens. A point under the dashed diagonal lost "
        f"sink share under the norm lens.",
        f"Scatter plot of {num(f'{k}.alpha.n_rows', 'int')} rows under each of ‖α v‖ and ‖α f(x)‖, "
        f"both axes from 0% to 100%. Under α the median row gives "
        f"{num(f'{k}.alpha.median_sink', 'pct:1')} of its attention to [CLS] and [SEP], the worst "
        f"{num(f'{k}.alpha.worst_sink', 'pct:1')}. Under ‖α v‖ the median is "
        f"{num(f'{k}.value_norm.median_sink', 'pct:1')} and under ‖α f(x)‖ "
        f"{num(f'{k}.output_norm.median_sink', 'pct:1')}; "
        f"{num(f'{k}.output_norm.worse_rows', 'int')} rows rise above the diagonal under ‖α f(x)‖, and "
        f"{num(f'{k}.output_norm.above_50', 'int')} stay above 50%.",
    )


def sink_distribution(results: dict, model: str):
    """How much of each displayed row goes to the sink, under α."""
    alt = _alt()
    data = [{"sink": r["sink_share"], "lens": LENS_NAMES[r["lens"]]} for r in results["models"][model]["rows"]]
    return alt.Chart(alt.Data(values=data)).mark_bar(opacity=0.8).encode(
        x=alt.X("sink:Q", bin=alt.Bin(step=0.05, extent=[0, 1]), title="sink share of the displayed row", axis=alt.Axis(format="%")),
        y=alt.Y("count():Q", title="rows"),
        color=alt.Color("lens:N", title="lens"),
        row=alt.Row("lens:N", title=None),
        tooltip=["lens:N", "count():Q"],
    ).properties(width=WIDTH, height=110)


def sink_distribution_words(results: dict, model: str, num: Num) -> Words:
    k = model
    per_lens = "; ".join(
        f"under {LENS_NAMES[lens]} the median row gives {num(f'{k}.{lens}.median_sink', 'pct:1')}, "
        f"{num(f'{k}.{lens}.above_50', 'int')} rows give more than half and "
        f"{num(f'{k}.{lens}.above_90', 'int')} more than 90%"
        for lens in LENS_NAMES
    )
    return Words(
        f"How much of each displayed row of {_name(results, model)} goes to [CLS] and [SEP], one "
        f"panel per lens; each bar counts the rows in a 5-point band of sink share.",
        f"One histogram per lens, {num(f'{k}.alpha.n_rows', 'int')} rows each, sink share from 0% to "
        f"100%: {per_lens}.",
    )


def ratio_by_layer(results: dict, model: str):
    """Median ratio of [CLS]/[SEP] norms to the mean content token's, per layer."""
    alt = _alt()
    data = [
        {"layer": r["layer"], "median": r["median"], "series": f"[{r['token'].upper()}] ‖{r['vector']}‖"}
        for r in results["models"][model]["ratios"] if r["layer"] is not None
    ]
    return _ratio_lines(alt, data, "layer:O", "layer")


def ratio_by_layer_words(results: dict, model: str, num: Num) -> Words:
    m = results["models"][model]
    ranges = "; ".join(_ratio_range(m, model, token, num) for token in ("cls", "sep"))
    return Words(
        f"The norm of [CLS] and of [SEP], as a multiple of the mean content token's, layer by "
        f"layer in {m['model']} (median over sentences and heads); the dashed line at 1 is "
        f"“as large as a content word”.",
        f"Line chart over {num(f'{model}.n_layers', 'int')} layers numbered from 0, one line for "
        f"each of ‖v‖ and ‖f(x)‖ of [CLS] and of [SEP]. Value norm ‖v‖: {ranges}. Over all layers, "
        f"[CLS]'s value norm is below a content token's in "
        f"{num(f'{model}.ratio.cls_v.below_1', 'int')} of {num(f'{model}.ratio.cls_v.n', 'int')} "
        f"sentence-and-head cases.",
    )


def _ratio_range(m: dict, k: str, token: str, num: Num) -> str:
    """'[CLS] from 0.03 (layer 2) to 0.18 (layer 0)': the ‖v‖ line's lowest and highest
    layer, each value cited by its key."""
    medians = {r["layer"]: r["median"] for r in m["ratios"]
               if r["layer"] is not None and r["token"] == token and r["vector"] == "v"}
    lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
    return (f"[{token.upper()}] from {num(f'{k}.layer{lo}.ratio.{token}_v.median', 'fixed:2')} "
            f"(layer {lo}) to {num(f'{k}.layer{hi}.ratio.{token}_v.median', 'fixed:2')} (layer {hi})")


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


def depth_ratio_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{m['model']} ({num(f'{k}.n_layers', 'int')} layers): "
        + ", ".join(_ratio_range(m, k, token, num) for token in ("cls", "sep"))
        for k, m in results["models"].items()
    )
    return Words(
        "The value norm of [CLS] and of [SEP], as a multiple of the mean content token's, "
        "against relative depth, one line per model and token; the dashed line at 1 is "
        "“as large as a content word”.",
        f"Line chart, relative depth from the first layer to 1 (the last). {per_model}.",
    )


def _ratio_lines(alt, data, x, x_title):
    lines = alt.Chart(alt.Data(values=data)).mark_line(point=True).encode(
        x=alt.X(x, title=x_title),
        y=alt.Y("median:Q", title="median norm ratio to a content token"),
        # Colour and dash both tell the lines apart (not colour alone); the legend shows
        # a stroke, so the dash is seen in it too.
        color=alt.Color("series:N", title=None, legend=alt.Legend(symbolType="stroke")),
        strokeDash=alt.StrokeDash("series:N", title=None),
        tooltip=["series:N", alt.Tooltip("median:Q", format=".2f")],
    )
    one = alt.Chart(alt.Data(values=[{"y": 1.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (one + lines).properties(width=WIDTH, height=300)


def depth_sink(results: dict):
    """Median sink share over every head, per layer, under each lens, per model."""
    alt = _alt()
    data = [
        {"depth": (s["layer"] + 1) / m["n_layers"], "median": s["stats"]["median_sink"],
         "model": m["model"], "lens": LENS_NAMES[s["lens"]]}
        for m in results["models"].values() for s in m["per_layer"]
    ]
    return alt.Chart(alt.Data(values=data)).mark_line(point=True).encode(
        x=alt.X("depth:Q", title="relative depth (layer / number of layers)"),
        y=alt.Y("median:Q", title="median sink share, all heads", axis=alt.Axis(format="%")),
        color=alt.Color("model:N", legend=alt.Legend(symbolType="stroke")),
        strokeDash=alt.StrokeDash("lens:N", legend=alt.Legend(symbolType="stroke")),
        tooltip=["model:N", "lens:N", alt.Tooltip("median:Q", format=".1%")],
    ).properties(width=WIDTH, height=300)


def depth_sink_words(results: dict, num: Num) -> Words:
    def span(k: str, m: dict, lens: str) -> str:
        medians = {s["layer"]: s["stats"]["median_sink"] for s in m["per_layer"] if s["lens"] == lens}
        lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
        return (f"under {LENS_NAMES[lens]} from {num(f'{k}.layer{lo}.{lens}.median_sink', 'pct:1')} "
                f"(layer {lo}) to {num(f'{k}.layer{hi}.{lens}.median_sink', 'pct:1')} (layer {hi})")

    per_model = "; ".join(
        f"{m['model']}: " + ", ".join(span(k, m, lens) for lens in ("alpha", "output_norm"))
        for k, m in results["models"].items()
    )
    return Words(
        "The median sink share of every head's rows, layer by layer, against relative depth: "
        "one colour per model, one dash pattern per lens.",
        f"Line chart, relative depth from the first layer to 1 (the last), sink share in %. {per_model}.",
    )


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


def rollout_entropy_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{m['model']}: {num(f'{k}.rollout.n_rows', 'int')} rows from "
        f"{num(f'{k}.rollout.min_entropy', 'fixed:2')} to {num(f'{k}.rollout.max_entropy', 'fixed:2')}, "
        f"median {num(f'{k}.rollout.median_entropy', 'fixed:2')}, "
        f"{num(f'{k}.rollout.above_90', 'int')} above 0.9"
        for k, m in results["models"].items()
    )
    return Words(
        "Normalized entropy of every attention-rollout row, one panel per model; 1 is a row "
        "spread evenly over the sentence, which ranks nothing.",
        f"Histograms of normalized entropy from 0.5 to 1. {per_model}.",
    )


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


def rollout_views_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{m['model']}: full rows median {num(f'{k}.rollout.median_entropy', 'fixed:2')}, displayed rows "
        f"median {num(f'{k}.rollout.displayed_median_entropy', 'fixed:2')} (from "
        f"{num(f'{k}.rollout.displayed_min_entropy', 'fixed:2')} to "
        f"{num(f'{k}.rollout.displayed_max_entropy', 'fixed:2')}), "
        f"{num(f'{k}.rollout.displayed_above_90', 'int')} of {num(f'{k}.rollout.n_rows', 'int')} "
        f"displayed rows above 0.9"
        for k, m in results["models"].items()
    )
    return Words(
        "Normalized entropy of the rollout rows, per model: the full row, and the row as the "
        "instrument displays it (the other words only, renormalized); 1 is spread evenly.",
        f"Overlaid histograms of normalized entropy from 0.5 to 1. {per_model}.",
    )


def flip_heads(results: dict, model: str):
    """Per pair, how many heads change their winner for the pronoun, per lens."""
    alt = _alt()
    sentences = results["sentences"]
    data = [
        {"pair": f"{i + 1}: …{sentences[p['sentences'][0]].split()[-1]} / {sentences[p['sentences'][1]].split()[-1]}",
         "changed": p["changed"], "follows": p["follows_reader"], "lens": LENS_NAMES[f["lens"]]}
        for f in results["models"][model]["flips"] for i, p in enumerate(f["pairs"])
    ]
    return alt.Chart(alt.Data(values=data)).mark_bar().encode(
        x=alt.X("changed:Q", title="heads whose winner changes"),
        y=alt.Y("pair:N", title=None),
        color=alt.Color("lens:N"),
        yOffset="lens:N",
        tooltip=["pair:N", "lens:N", "changed:Q", "follows:Q"],
    ).properties(width=WIDTH, height=220)


def flip_heads_words(results: dict, model: str, num: Num) -> Words:
    k = model
    lenses = [f["lens"] for f in results["models"][model]["flips"]]
    per_lens = "; ".join(f"{LENS_NAMES[lens]}: {num(f'{k}.flip.{lens}.changed_total', 'int')}" for lens in lenses)
    return Words(
        f"For each adjective pair, how many of {_name(results, model)}'s heads change their "
        f"winner for the pronoun when the one adjective changes, one bar per lens.",
        f"Bar chart, {num(f'{k}.flip.alpha.n_pairs', 'int')} pairs, one bar per lens. Heads whose "
        f"winner changes, summed over the pairs, of {num(f'{k}.flip.alpha.n_heads_total', 'int')} "
        f"head-and-pair cases: {per_lens}.",
    )


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


def mutant_sinks_words(results: dict, model: str, num: Num) -> Words:
    p = f"{model}.mutant.wrong_agg"
    over = results["models"][model]["mutant"]["wrong_agg"]["max_wrong_sink"] > 1
    return Words(
        f"Sink share of each displayed row of {_name(results, model)}: the instrument's "
        f"aggregation (across) against a mutant that sums subword rows and averages columns "
        f"(up). A point off the dashed diagonal is a row the two disagree on.",
        f"Scatter plot of {num(f'{p}.n_rows', 'int')} rows. {num(f'{p}.rows_differ', 'int')} rows "
        f"leave the diagonal, {num(f'{p}.rows_differ_single', 'int')} of them from one-subword "
        f"words; the mutant's largest sink share is {num(f'{p}.max_wrong_sink', 'pct:0')}"
        + (", more than the whole row: its rows no longer sum to 1." if over else "."),
    )


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

WORDS = {
    "mutant_sinks": mutant_sinks_words,
    "sink_scatter": sink_scatter_words,
    "sink_distribution": sink_distribution_words,
    "ratio_by_layer": ratio_by_layer_words,
    "flip_heads": flip_heads_words,
    "depth_ratio": depth_ratio_words,
    "depth_sink": depth_sink_words,
    "rollout_entropy": rollout_entropy_words,
    "rollout_views": rollout_views_words,
}  # name -> describer, with the builder's arguments and the page's `num`


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


def _parse(results: dict, chart_id: str) -> tuple[str, list[str]]:
    name, *args = chart_id.split("/")
    if name not in CHARTS:
        raise ChartError(f"unknown chart {name!r}; known: {', '.join(sorted(CHARTS))}")
    _, per_model = CHARTS[name]
    if per_model and (len(args) != 1 or args[0] not in results["models"]):
        raise ChartError(f"chart {name!r} needs model= one of {sorted(results['models'])}")
    return name, args


def describe(results: dict, chart_id: str, num: Num) -> Words:
    """The chart's caption and text alternative; `num` prints (and cites) each number."""
    name, args = _parse(results, chart_id)
    if name not in WORDS:
        raise ChartError(f"chart {name!r} has no words: add a describer to WORDS beside its builder")
    return WORDS[name](results, *args, num)


def build(results: dict, chart_id: str) -> dict:
    name, args = _parse(results, chart_id)
    chart = CHARTS[name][0](results, *args)
    spec = chart.to_dict()
    check_fields(chart_id, spec)
    return spec


def build_all(results: dict) -> dict[str, dict]:
    return {cid: build(results, cid) for cid in chart_ids(results)}


def code_digest() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
