"""Charts, as Vega-Lite specs built with Altair from the results, and their words.

`CHARTS` maps a chart's name to a builder `(results, **args) -> alt.Chart`, `WORDS` to
a describer `(results, num, **args) -> Words`; a page asks for
`chart("sink_scatter", model="l6")`, whose id is "sink_scatter/l6". Specs are built
once per results (and per version of the site code) and cached, so a warm build never
imports Altair. Data rides inline in the spec (counts, not rows, where a histogram
would otherwise carry thousands); every field an encoding names must exist in the data
or be made by a transform, or the build stops naming the chart and field.

Words: each chart has a caption (shown under it) and a text alternative (read out in
its place to a reader who does not see it): what is plotted, over what range, and the
one thing it shows. Each describer sits beside its builder and reads the same results;
every number it prints goes through the page's `num`, so it is cited, locked and gated
like any number in the prose: one that moves fails the build.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import timing
from ..errors import UserError
from ..instrument import LENS_LABELS

WIDTH = 560


class ChartError(UserError, ValueError):
    pass


@dataclass(frozen=True)
class Words:
    """A chart in words, as plain text (the page escapes it)."""
    caption: str  # shown under the chart: what is plotted and how to read it
    alt: str      # read in the chart's place: what, over what range, the one thing it shows


Num = Callable[[str, str], str]  # the page's num(key, format): prints and cites a number


def _name(results: dict, model: str) -> str:
    return results["models"][model]["checkpoint"].split("/")[-1]


def _alt():
    import altair as alt

    return alt


def _test_rows(m: dict) -> list[int]:
    """Indices into a model's columnar rows of the held-out half's rows."""
    test = set(m["halves"]["test"])
    return [i for i, s in enumerate(m["rows"]["sentence"]) if s in test]


def sink_scatter(results: dict, model: str):
    """Each held-out displayed row: its sink share under α (x) and under a norm lens (y)."""
    alt = _alt()
    m = results["models"][model]
    rows = m["rows"]
    data = [
        {"alpha": round(rows["alpha"]["sink_share"][i], 4), "norm": round(rows[lens]["sink_share"][i], 4),
         "lens": LENS_LABELS[lens], "word": rows["word"][i], "sentence": rows["sentence"][i]}
        for lens in ("value_norm", "output_norm") for i in _test_rows(m)
    ]
    base = alt.Chart(alt.Data(values=data))
    points = base.mark_point(filled=True, opacity=0.4, size=14).encode(
        x=alt.X("alpha:Q", title="sink share under α", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("norm:Q", title="sink share under the norm lens", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("lens:N", title="lens"),
        shape=alt.Shape("lens:N", title="lens"),  # not by colour alone
        tooltip=["word:N", "sentence:Q", alt.Tooltip("alpha:Q", format=".1%"), alt.Tooltip("norm:Q", format=".1%")],
    )
    diagonal = alt.Chart(alt.Data(values=[{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    half = alt.Chart(alt.Data(values=[{"y": 0.5}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(y="y:Q")
    return (diagonal + half + points).properties(width=WIDTH, height=WIDTH * 0.75)


def _binned(values: list[float], step: float, lo: float = 0.0, hi: float = 1.0) -> list[tuple[float, int]]:
    """Counts per bin [lo + k step, lo + (k+1) step): the chart carries counts, not rows."""
    n = round((hi - lo) / step)
    counts = [0] * n
    for v in values:
        counts[min(n - 1, max(0, int((v - lo) / step)))] += 1
    return [(round(lo + k * step, 6), c) for k, c in enumerate(counts)]


def sink_distribution(results: dict, model: str):
    """How much of each held-out displayed row goes to the sink, under each lens."""
    alt = _alt()
    m = results["models"][model]
    idx = _test_rows(m)
    data = [{"from": b, "to": round(b + 0.05, 6), "rows": c, "lens": LENS_LABELS[lens]}
            for lens in LENS_LABELS for b, c in _binned([m["rows"][lens]["sink_share"][i] for i in idx], 0.05)]
    return alt.Chart(alt.Data(values=data)).mark_bar(opacity=0.85).encode(
        x=alt.X("from:Q", bin="binned", title="sink share of the displayed row", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        x2="to:Q",
        y=alt.Y("rows:Q", title="rows"),
        color=alt.Color("lens:N", title="lens"),
        row=alt.Row("lens:N", title=None),
        tooltip=["lens:N", alt.Tooltip("from:Q", format=".0%"), alt.Tooltip("to:Q", format=".0%"), "rows:Q"],
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
    """[CLS] and [SEP] value-norm ratios against relative depth, one line per model and token."""
    alt = _alt()
    data = []
    for m in results["models"].values():
        L = m["n_layers"]
        for r in m["ratios"]:
            if r["layer"] is not None and r["vector"] == "v":
                data.append({"depth": (r["layer"] + 1) / L, "median": r["median"],
                             "series": f"{m['checkpoint'].split('/')[-1]} [{r['token'].upper()}]"})
    return _ratio_lines(alt, data, "depth:Q", "relative depth (layer / number of layers)")


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
    """Median sink share over every head, per layer, under each lens, per model (held out)."""
    alt = _alt()
    data = [
        {"depth": (s["layer"] + 1) / m["n_layers"], "median": s["stats"]["median_sink"],
         "model": m["checkpoint"].split("/")[-1], "lens": LENS_LABELS[s["lens"]]}
        for m in results["models"].values() for s in m["per_layer"]
    ]
    return alt.Chart(alt.Data(values=data)).mark_line(point=True).encode(
        x=alt.X("depth:Q", title="relative depth (layer / number of layers)"),
        y=alt.Y("median:Q", title="median sink share, all heads", axis=alt.Axis(format="%")),
        color=alt.Color("model:N", legend=alt.Legend(symbolType="stroke")),
        strokeDash=alt.StrokeDash("lens:N", legend=alt.Legend(symbolType="stroke")),
        tooltip=["model:N", "lens:N", alt.Tooltip("median:Q", format=".1%")],
    ).properties(width=WIDTH, height=300)


def rollout_views(results: dict):
    """Rollout rows' normalized entropy, full row against the row as displayed, per model;
    the dashed rule is a row of typical length with half its weight on one word."""
    alt = _alt()
    panels = []
    for m in results["models"].values():
        name = m["checkpoint"].split("/")[-1]
        data = [{"from": b, "to": round(b + 0.02, 6), "rows": c, "view": view}
                for view, values in (("full row", m["rollout"]["entropies"]),
                                     ("displayed row (other words)", m["rollout"]["displayed_entropies"]))
                for b, c in _binned(values, 0.02, 0.4, 1.0)]
        bars = alt.Chart(alt.Data(values=data), title=name).mark_bar(opacity=0.7).encode(
            x=alt.X("from:Q", bin="binned", title="normalized entropy (1 = uniform)", scale=alt.Scale(domain=[0.4, 1])),
            x2="to:Q",
            y=alt.Y("rows:Q", title="rows", stack=None),
            color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["view:N", "rows:Q"],
        )
        rule = alt.Chart(alt.Data(values=[{"entropy": m["rollout"]["one_clear_word_entropy"]}])).mark_rule(
            color="gray", strokeDash=[4, 4]).encode(x="entropy:Q")
        panels.append(alt.layer(bars, rule).properties(width=WIDTH, height=110))
    return alt.vconcat(*panels)


def flip_shift(results: dict, model: str):
    """Per pair: the share of heads (layer 0 apart) whose preference moved the reader's way."""
    alt = _alt()
    f = results["models"][model]["flips"]["lenses"]["alpha"]
    data = [{"pair": i + 1, "share": p["toward_reader"] / f["n_heads"], "changed": p["changed"],
             "sentence": p["sentences"][1]} for i, p in enumerate(f["pairs"])]
    dots = alt.Chart(alt.Data(values=data)).mark_circle(size=50, opacity=0.8).encode(
        x=alt.X("pair:O", title="minimal pair", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("share:Q", title="share of heads moving toward the reader", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        tooltip=["pair:Q", "sentence:N", alt.Tooltip("share:Q", format=".0%"), "changed:Q"],
    )
    half = alt.Chart(alt.Data(values=[{"y": 0.5}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (half + dots).properties(width=WIDTH, height=220)


def flip_example(results: dict, model: str):
    """The first pair, every head: its preference for the second sentence's referent over
    the first's, in sentence A (x) and in sentence B (y). Above the diagonal: moved the
    reader's way. Layer 0 lies on a line through the origin: it cannot change sides."""
    alt = _alt()
    m = results["models"][model]
    pair = m["flips"]["lenses"]["alpha"]["pairs"][0]
    ra, rb = (pair["candidates"].index(x) for x in pair["referents"])
    nh = m["n_heads"]
    data = [{"a": w[rb] - w[ra], "b": w[2 + rb] - w[2 + ra], "layer": f"layer {h // nh}" if h // nh == 0 else "layers 1+",
             "head": f"L{h // nh}H{h % nh}"} for h, w in enumerate(m["flips"]["example"])]
    lim = max(1e-6, *(max(abs(d["a"]), abs(d["b"])) for d in data))
    points = alt.Chart(alt.Data(values=data)).mark_point(filled=True, size=45).encode(
        x=alt.X("a:Q", title="preference in sentence A", scale=alt.Scale(domain=[-lim, lim])),
        y=alt.Y("b:Q", title="preference in sentence B", scale=alt.Scale(domain=[-lim, lim])),
        color=alt.Color("layer:N", title=None), shape=alt.Shape("layer:N", title=None),
        tooltip=["head:N", alt.Tooltip("a:Q", format=".3f"), alt.Tooltip("b:Q", format=".3f")],
    )
    diagonal = alt.Chart(alt.Data(values=[{"v": -lim}, {"v": lim}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="v:Q", y="v:Q")
    return (diagonal + points).properties(width=WIDTH * 0.7, height=WIDTH * 0.7)


def _displayed(full: list[float], word: int) -> list[float]:
    """A full word row [K] -> the row as displayed: the other words only, renormalized
    ([CLS], [SEP] and the word itself at 0)."""
    content = [x if 0 < k < len(full) - 1 and k - 1 != word else 0.0 for k, x in enumerate(full)]
    mass = sum(content) or 1.0
    return [x / mass for x in content]


def _grouped_bars(alt, data: list[dict], y_title: str):
    """Bars per column of a sentence, one per view, side by side."""
    return alt.Chart(alt.Data(values=data)).mark_bar().encode(
        x=alt.X("column:N", title=None, sort=None, axis=alt.Axis(labelAngle=-50, labelExpr="substring(datum.label, 3)")),
        y=alt.Y("weight:Q", title=y_title, axis=alt.Axis(format="%")),
        color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
        xOffset="view:N",
        tooltip=["column:N", "view:N", alt.Tooltip("weight:Q", format=".1%")],
    ).properties(width=WIDTH, height=220)


def row_example(results: dict, model: str, name: str):
    """One real row, whole: its full row (with [CLS], [SEP] and itself) against the row
    as displayed, under α and, for the survivor, under ‖α v‖ on the same head."""
    alt = _alt()
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == name)
    data = []
    for lens in ["alpha"] if name == "typical" else ["alpha", "value_norm"]:
        full = ex["full"][lens]
        shown = _displayed(full, ex["word_index"])
        for k, col in enumerate(ex["columns"]):
            label = f"{k:02d} {col}"  # the index keeps repeated words apart; the axis hides it
            data.append({"column": label, "weight": full[k], "view": f"full row, {LENS_LABELS[lens]}"})
            data.append({"column": label, "weight": shown[k], "view": f"displayed, {LENS_LABELS[lens]}"})
    return _grouped_bars(alt, data, "weight")


def rollout_example(results: dict, model: str):
    """The typical row's word: its rollout row as displayed, against the instrument's row."""
    alt = _alt()
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == "typical")
    w, K = ex["word_index"], len(ex["columns"])
    data = []
    for view, full in (("rollout, all layers and heads", ex["rollout"]), ("the instrument's row (α)", ex["full"]["alpha"])):
        shown = _displayed(full, w)
        data += [{"column": f"{k:02d} {c}", "weight": shown[k], "view": view}
                 for k, c in enumerate(ex["columns"]) if 0 < k < K - 1 and k - 1 != w]
    return _grouped_bars(alt, data, "displayed weight")


def mutant_sinks(results: dict, model: str):
    """The wrong-aggregation mutant against the instrument: each held-out row's sink share."""
    alt = _alt()
    m = results["models"][model]
    test = set(m["halves"]["test"])
    data = [
        {"right": round(r["sink_share"], 4), "wrong": round(r["wrong_sink_share"], 4), "row_sum": round(r["wrong_row_sum"], 4),
         "word": r["word"], "subwords": "one subword" if r["n_subwords"] == 1 else "several subwords", "sentence": r["sentence"]}
        for r in m["mutant"]["wrong_agg"]["rows"] if r["sentence"] in test
    ]
    top = max(1.0, *(d["wrong"] for d in data))
    points = alt.Chart(alt.Data(values=data)).mark_point(filled=True, opacity=0.5, size=25).encode(
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


# -- part 8: the ground truth and the later fixes (model/truth.py) -------------------------------

FIX_NAMES = {"kobayashi2021": "ATB+RES+LN", "alti": "ALTI", "value_zeroing": "value zeroing"}


def ablation_scatter(results: dict, model: str):
    """Each held-out displayed row (α's head): its registered sink share (x) against its
    ablation sink share (y); filled where removing the sink moves the word more than a
    typical whole head does (harmful)."""
    alt = _alt()
    m = results["models"][model]
    rows, at = m["rows"], m["ground_truth"]["harmful_threshold"]
    data = [{"sink": round(rows["alpha"]["sink_share"][i], 4), "truth": round(rows["alpha"]["ablation_share"][i], 4),
             "harmful": "harmful" if rows["alpha"]["sink_effect"][i] > at else "not harmful",
             "word": rows["word"][i], "sentence": rows["sentence"][i]}
            for i in _test_rows(m) if rows["alpha"]["ablation_share"][i] is not None]   # the ablation's sample
    points = alt.Chart(alt.Data(values=data)).mark_point(opacity=0.45, size=16).encode(
        x=alt.X("sink:Q", title="sink share of the row (attention, registered)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        y=alt.Y("truth:Q", title="ablation sink share (what the sink does to the word)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        color=alt.Color("harmful:N", title=None), shape=alt.Shape("harmful:N", title=None),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("sink:Q", format=".1%"), alt.Tooltip("truth:Q", format=".1%")],
    )
    diagonal = alt.Chart(alt.Data(values=[{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q")
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


def fix_sinks(results: dict, model: str):
    """How much of each held-out row the later fixes give the sink, registered (the word's
    own column counted) and among the other words (added), against the stop rule's 50 %:
    one panel per fix, each with its own rows (value zeroing: its sample's)."""
    alt = _alt()
    m = results["models"][model]
    idx = _test_rows(m)
    panels = []
    for fix, name in FIX_NAMES.items():
        data = []
        for col, view in (("sink_share", "registered (own column counted)"), ("sink_share_other", "added: among the other words")):
            values = [v for v in (m["rows"][fix][col][i] for i in idx) if v is not None]
            data += [{"from": b, "to": round(b + 0.05, 6), "rows": c, "view": view} for b, c in _binned(values, 0.05)]
        bars = alt.Chart(alt.Data(values=data), title=name).mark_bar(opacity=0.6).encode(
            x=alt.X("from:Q", bin="binned", title="sink share of the row", axis=alt.Axis(format="%"),
                    scale=alt.Scale(domain=[0, 1])),
            x2="to:Q",
            y=alt.Y("rows:Q", title="rows", stack=None),
            color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["view:N", alt.Tooltip("from:Q", format=".0%"), "rows:Q"],
        )
        rule = alt.Chart(alt.Data(values=[{"x": 0.5}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(x="x:Q")
        panels.append(alt.layer(bars, rule).properties(width=WIDTH, height=100))
    return alt.vconcat(*panels)


def tracking_chart(results: dict):
    """Per model and reading: the rank correlation of its sink share with the ablation sink
    share, with its interval (held-out rows)."""
    alt = _alt()
    labels = {**LENS_LABELS, **FIX_NAMES}
    data = [{"model": _name(results, k), "reading": labels[lens], "rho": t["spearman"], "lo": t["spearman_lo"],
             "hi": t["spearman_hi"]}
            for k, m in results["models"].items() for lens, t in m["ground_truth"]["tracking"].items()
            if t["spearman"] is not None]
    base = alt.Chart(alt.Data(values=data))
    order = list(labels.values())
    y = alt.Y("reading:N", title=None, sort=order)
    bars = base.mark_rule().encode(x=alt.X("lo:Q", title="Spearman's ρ with the ablation sink share",
                                           scale=alt.Scale(domain=[-1, 1])), x2="hi:Q", y=y, yOffset="model:N",
                                   color=alt.Color("model:N", legend=None))
    dots = base.mark_point(filled=True, size=45).encode(   # colour and mark both tell the models apart: one legend
        x="rho:Q", y=y, yOffset="model:N", color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("model:N", title="model"),
        tooltip=["model:N", "reading:N", alt.Tooltip("rho:Q", format=".2f"), alt.Tooltip("lo:Q", format=".2f"),
                 alt.Tooltip("hi:Q", format=".2f")])
    zero = alt.Chart(alt.Data(values=[{"x": 0.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="x:Q")
    return (zero + bars + dots).properties(width=WIDTH, height=300)


def idle_ratio(results: dict, model: str, lens: str = "value_norm"):
    """Held-out rows (on the head a norm lens opens): the head's bound on its effect on the
    word, over that word's median head's, for the rows above half and the others (log scale)."""
    import math

    alt = _alt()
    m = results["models"][model]
    rows = m["rows"]
    data = []
    for i in _test_rows(m):
        ratio = rows[lens]["bound_ratio"][i]
        view = "above 50 % under " + LENS_LABELS[lens] if rows[lens]["sink_share"][i] > 0.5 else "other rows"
        data.append((view, math.log2(max(ratio, 1 / 64))))
    binned = []
    for view in sorted({v for v, _ in data}):
        values = [x for v, x in data if v == view]
        total = len(values)
        binned += [{"from": b, "to": round(b + 0.25, 6), "share": c / total, "view": view}
                   for b, c in _binned(values, 0.25, -6.0, 4.0)]
    bars = alt.Chart(alt.Data(values=binned)).mark_bar(opacity=0.6).encode(
        x=alt.X("from:Q", bin="binned", title="log₂ of the head's bound over the word's median head's"),
        x2="to:Q",
        y=alt.Y("share:Q", title="share of the rows", stack=None, axis=alt.Axis(format="%")),
        color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["view:N", alt.Tooltip("from:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
    )
    one = alt.Chart(alt.Data(values=[{"x": 0.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="x:Q")
    return (bars + one).properties(width=WIDTH, height=220)


# -- the charts in words ----------------------------------------------------------------------

def sink_scatter_words(results: dict, num: Num, model: str) -> Words:
    k = model
    return Words(
        f"Every held-out displayed row of {_name(results, model)}: its sink share under α (across) and "
        "under a norm lens (up), one point per row and lens. Points under the dashed diagonal lost sink "
        "share under the norm lens; the red line is the stop rule's 50 %.",
        f"Scatter plot of {num(f'{k}.alpha.n_rows', 'int')} rows under each of ‖α v‖ and ‖α f(x)‖, both axes "
        f"from 0 % to 100 %. Under α the median row gives {num(f'{k}.alpha.median_sink', 'pct:1')} of its "
        f"weight to [CLS] and [SEP]; under ‖α v‖ {num(f'{k}.value_norm.median_sink', 'pct:1')}. The cloud "
        f"falls toward the floor but does not reach it: {num(f'{k}.value_norm.above_50', 'int')} rows stay "
        f"above 50 % under ‖α v‖, and {num(f'{k}.value_norm.worse_rows', 'int')} rise above the diagonal.",
    )


def sink_distribution_words(results: dict, num: Num, model: str) -> Words:
    k = model
    per_lens = "; ".join(
        f"under {LENS_LABELS[lens]} the median row gives {num(f'{k}.{lens}.median_sink', 'pct:1')} and "
        f"{num(f'{k}.{lens}.above_50_share', 'pct:1')} of rows give more than half"
        for lens in LENS_LABELS
    )
    return Words(
        f"How much of each held-out displayed row of {_name(results, model)} goes to [CLS] and [SEP], one "
        "panel per lens; each bar counts the rows in a 5-point band of sink share.",
        f"One histogram per lens, {num(f'{k}.alpha.n_rows', 'int')} rows each, sink share from 0 % to 100 %: "
        f"{per_lens}.",
    )


def _ratio_range(m: dict, k: str, token: str, num: Num) -> str:
    """"[CLS] from 0.03 (layer 2) to 0.18 (layer 0)": the ‖v‖ line's lowest and highest layer."""
    medians = {r["layer"]: r["median"] for r in m["ratios"]
               if r["layer"] is not None and r["token"] == token and r["vector"] == "v"}
    lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
    return (f"[{token.upper()}] from {num(f'{k}.layer{lo}.ratio.{token}_v.median', 'ratio:2')} "
            f"(layer {lo}) to {num(f'{k}.layer{hi}.ratio.{token}_v.median', 'ratio:2')} (layer {hi})")


def ratio_by_layer_words(results: dict, num: Num, model: str) -> Words:
    m = results["models"][model]
    ranges = "; ".join(_ratio_range(m, model, token, num) for token in ("cls", "sep"))
    return Words(
        f"The norm of [CLS] and of [SEP], as a multiple of the mean content token's, layer by layer in "
        f"{_name(results, model)} (median over held-out sentences and heads); the dashed line at 1 is "
        "“as large as a content word”.",
        f"Line chart over {num(f'{model}.n_layers', 'int')} layers numbered from 0, one line for each of ‖v‖ "
        f"and ‖f(x)‖ of [CLS] and of [SEP]. Value norm ‖v‖: {ranges}.",
    )


def depth_ratio_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{_name(results, k)} ({num(f'{k}.n_layers', 'int')} layers): "
        + ", ".join(_ratio_range(m, k, token, num) for token in ("cls", "sep"))
        for k, m in results["models"].items()
    )
    return Words(
        "The value norm of [CLS] and of [SEP], as a multiple of the mean content token's, against "
        "relative depth, one line per model and token; the dashed line at 1 is “as large as a content word”.",
        f"Line chart, relative depth from the first layer to 1 (the last). {per_model}.",
    )


def depth_sink_words(results: dict, num: Num) -> Words:
    def span(k: str, m: dict, lens: str) -> str:
        medians = {s["layer"]: s["stats"]["median_sink"] for s in m["per_layer"] if s["lens"] == lens}
        lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
        return (f"under {LENS_LABELS[lens]} from {num(f'{k}.layer{lo}.{lens}.median_sink', 'pct:1')} "
                f"(layer {lo}) to {num(f'{k}.layer{hi}.{lens}.median_sink', 'pct:1')} (layer {hi})")

    per_model = "; ".join(f"{_name(results, k)}: " + ", ".join(span(k, m, lens) for lens in ("alpha", "value_norm"))
                          for k, m in results["models"].items())
    return Words(
        "The median sink share of every head's rows (held-out half), layer by layer, against relative "
        "depth: one colour per model, one dash pattern per lens.",
        f"Line chart, relative depth from the first layer to 1 (the last), sink share in %. {per_model}.",
    )


def rollout_views_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{_name(results, k)}: full rows median {num(f'{k}.rollout.median_entropy', 'fixed:3')}, displayed rows "
        f"median {num(f'{k}.rollout.displayed_median_entropy', 'fixed:3')}, against "
        f"{num(f'{k}.rollout.one_clear_word_entropy', 'fixed:3')} for a row with half its weight on one word"
        for k in results["models"]
    )
    return Words(
        "Normalized entropy of the rollout rows, one panel per model: the full row, and the row as the "
        "instrument displays it (the other words only, renormalized); 1 is spread evenly. The dashed "
        "line is a row of the same length with half its weight on one word.",
        f"Overlaid histograms of normalized entropy from 0.4 to 1. {per_model}.",
    )


def flip_shift_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.flip.alpha"
    return Words(
        f"One dot per minimal pair ({_name(results, model)}, α): the share of heads, layer 0 left out, whose "
        "preference between the two candidates moved the way the reader's did. The dashed line is 50 %: "
        "what heads that react to the changed word but not to the referent would give on average.",
        f"Dot plot of {num(f'{p}.n_pairs', 'int')} pairs, shares from 0 % to 100 %. Over all pairs and heads "
        f"{num(f'{p}.toward_share', 'pct:1')} moved toward the reader.",
    )


def flip_example_words(results: dict, num: Num, model: str) -> Words:
    pair = results["models"][model]["flips"]["lenses"]["alpha"]["pairs"][0]
    return Words(
        f"The first minimal pair, every head of {_name(results, model)}: how much more weight the pronoun puts "
        f"on “{pair['referents'][1]}” than on “{pair['referents'][0]}” in sentence A (across) and in sentence B "
        "(up). Above the dashed diagonal: moved the reader's way.",
        f"Scatter plot of {num(f'{model}.n_heads_total', 'int')} heads for the pair “{pair['sentences'][0]}” / "
        f"“{pair['sentences'][1]}”: {num(f'{model}.flip.alpha.pair0.toward_reader', 'int')} of "
        f"{num(f'{model}.flip.alpha.n_heads', 'int')} heads outside layer 0 moved toward the reader, and "
        f"{num(f'{model}.flip.alpha.pair0.changed', 'int')} changed which candidate wins.",
    )


def row_example_words(results: dict, num: Num, model: str, name: str) -> Words:
    p = f"{model}.example.{name}"
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == name)
    lens = "α" if name == "typical" else "α and ‖α v‖"
    return Words(
        f"One row, whole: “{ex['word']}” on layer {ex['layer']}, head {ex['head']} of {_name(results, model)}, "
        f"under {lens}. Each word gets two bars: its weight in the full row (with [CLS], [SEP] and the word "
        "itself) and in the row as displayed (those three removed, the rest stretched to 100 %).",
        f"Grouped bar chart over the {len(ex['columns'])} columns of “{results['sentences'][ex['sentence']]}”. "
        f"In the full row [CLS] and [SEP] hold {num(f'{p}.sink_alpha', 'pct:1')} under α"
        + (f" and {num(f'{p}.sink_value_norm', 'pct:1')} under ‖α v‖" if name != "typical" else "")
        + "; the displayed row cannot show it.",
    )


def rollout_example_words(results: dict, num: Num, model: str) -> Words:
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == "typical")
    return Words(
        f"The same word, “{ex['word']}”, two ways: its attention-rollout row (all layers and heads of "
        f"{_name(results, model)} multiplied out) and the instrument's row on one head, each as displayed "
        "(the other words only, renormalized).",
        f"Grouped bar chart over the other words of “{results['sentences'][ex['sentence']]}”, one bar for each view "
        f"per word. Over all held-out rows the rollout's displayed rows have a median normalized entropy of "
        f"{num(f'{model}.rollout.displayed_median_entropy', 'fixed:3')} (1 is level).",
    )


def mutant_sinks_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.mutant.wrong_agg"
    return Words(
        f"Each held-out displayed row of {_name(results, model)} (α): its sink share as the instrument folds "
        "subwords (across) and as the wrong-aggregation mutant does (up). One-subword words sit on the "
        "diagonal; words of several subwords leave it.",
        f"Scatter plot. The mutant changes the sink share of {num(f'{p}.rows_differ', 'int')} of the "
        f"{num(f'{p}.n_multi_subword', 'int')} rows whose word has several subwords and of "
        f"{num(f'{p}.rows_differ_single', 'int')} one-subword rows; its largest share is "
        f"{num(f'{p}.max_wrong_sink', 'pct:1')}.",
    )


def ablation_scatter_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.truth.alpha"
    return Words(
        f"Every held-out displayed row of {_name(results, model)} on the head α opens: how much of the row the "
        "attention gives [CLS] and [SEP] (across) against how much of what the head does to the word comes through "
        "them, measured by removing their part (up). Harmful rows, where removing the sink moves the word more than "
        "removing a typical whole head does, have a mark and colour of their own. The dashed line is where the two agree.",
        f"Scatter plot of {num(f'{p}.n_rows', 'int')} rows, both axes from 0 % to 100 %. The median row gives the sink "
        f"{num(f'{p}.registered_median_sink', 'pct:1')} of its attention, and the sink carries "
        f"{num(f'{p}.median_share', 'pct:1')} of the head's effect on the word; {num(f'{p}.harmful', 'int')} rows are harmful.",
    )


def fix_sinks_words(results: dict, num: Num, model: str) -> Words:
    parts = "; ".join(
        f"{name}: median {num(f'{model}.fix.{fix}.median_sink', 'pct:1')} registered, "
        f"{num(f'{model}.fix.{fix}.median_sink_other', 'pct:1')} among the other words"
        for fix, name in FIX_NAMES.items())
    return Words(
        f"The later fixes read as lenses on the rows of {_name(results, model)}: how much of each held-out row goes to "
        "[CLS] and [SEP], with the word's own column counted (registered) and among the other words only (added). One "
        "panel per fix; the red line is the stop rule's 50 %.",
        f"Three panels of two overlaid histograms each, sink share from 0 % to 100 %. {parts}.",
    )


def tracking_chart_words(results: dict, num: Num) -> Words:
    parts = "; ".join(
        f"{_name(results, k)}: ATB+RES+LN {num(f'{k}.track.kobayashi2021.spearman', 'fixed:2')}, "
        f"ALTI {num(f'{k}.track.alti.spearman', 'fixed:2')}, value zeroing "
        f"{num(f'{k}.track.value_zeroing.spearman', 'fixed:2')}, α {num(f'{k}.track.alpha.spearman', 'fixed:2')}"
        for k in results["models"])
    return Words(
        "How well each reading's sink share ranks the rows as the ablation does: Spearman's ρ with the ablation sink "
        "share, held-out rows, one mark per model with its 95 % interval. 0 is no relation, 1 the same order.",
        f"Dot plot with intervals, ρ from −1 to 1, one line per reading and model. {parts}.",
    )


def idle_ratio_words(results: dict, num: Num, model: str, lens: str = "value_norm") -> Words:
    p = f"{model}.idle.{lens}"
    return Words(
        f"For each held-out row of {_name(results, model)} on the head {LENS_LABELS[lens]} opens: the head's bound on "
        "how much it can move the word (the sum of α times ‖f(x)‖), over the same bound for that word's median head, "
        "on a log scale (0 is the median head); rows still above half under the lens against the others.",
        f"Two overlaid histograms of the share of rows. The {num(f'{p}.n_survivors', 'int')} rows above half sit on heads "
        f"with a median ratio of {num(f'{p}.median_ratio_survivors', 'ratio:2')}; the other rows "
        f"{num(f'{p}.median_ratio_others', 'ratio:2')}.",
    )


CHARTS = {
    "mutant_sinks": (mutant_sinks, ("model",)),
    "sink_scatter": (sink_scatter, ("model",)),
    "sink_distribution": (sink_distribution, ("model",)),
    "ratio_by_layer": (ratio_by_layer, ("model",)),
    "flip_shift": (flip_shift, ("model",)),
    "flip_example": (flip_example, ("model",)),
    "row_example": (row_example, ("model", "name")),
    "rollout_example": (rollout_example, ("model",)),
    "depth_ratio": (depth_ratio, ()),
    "depth_sink": (depth_sink, ()),
    "rollout_views": (rollout_views, ()),
    "ablation_scatter": (ablation_scatter, ("model",)),
    "fix_sinks": (fix_sinks, ("model",)),
    "tracking_chart": (tracking_chart, ()),
    "idle_ratio": (idle_ratio, ("model",)),
}  # name -> (builder, the arguments a page passes, in order)
EXAMPLES = ("typical", "survivor")

WORDS = {
    "mutant_sinks": mutant_sinks_words,
    "sink_scatter": sink_scatter_words,
    "sink_distribution": sink_distribution_words,
    "ratio_by_layer": ratio_by_layer_words,
    "flip_shift": flip_shift_words,
    "flip_example": flip_example_words,
    "row_example": row_example_words,
    "rollout_example": rollout_example_words,
    "depth_ratio": depth_ratio_words,
    "depth_sink": depth_sink_words,
    "rollout_views": rollout_views_words,
    "ablation_scatter": ablation_scatter_words,
    "fix_sinks": fix_sinks_words,
    "tracking_chart": tracking_chart_words,
    "idle_ratio": idle_ratio_words,
}  # name -> describer, with the page's `num` and the builder's arguments


def chart_ids(results: dict) -> list[str]:
    """Every chart the pages may ask for: "name/arg1/arg2" (arguments sorted by name,
    as `chart(...)` in a page joins them)."""
    ids = []
    for name, (_, args) in CHARTS.items():
        choices = {"model": list(results["models"]), "name": list(EXAMPLES)}
        combos = [[]]
        for arg in sorted(args):
            combos = [c + [v] for c in combos for v in choices[arg]]
        ids += ["/".join([name, *c]) for c in combos]
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


def _parse(results: dict, chart_id: str) -> tuple[str, dict[str, str]]:
    name, *values = chart_id.split("/")
    if name not in CHARTS:
        raise ChartError(f"unknown chart {name!r}; known: {', '.join(sorted(CHARTS))}")
    args = CHARTS[name][1]
    if chart_id not in chart_ids(results):
        raise ChartError(f"chart {name!r} takes {', '.join(args) or 'no arguments'}; "
                         f"models: {sorted(results['models'])}, examples: {list(EXAMPLES)}")
    return name, dict(zip(sorted(args), values))


def describe(results: dict, chart_id: str, num: Num) -> Words:
    """The chart's caption and text alternative; `num` prints (and cites) each number."""
    name, kwargs = _parse(results, chart_id)
    if name not in WORDS:
        raise ChartError(f"chart {name!r} has no words: add a describer to WORDS beside its builder")
    return WORDS[name](results, num, **kwargs)


def build(results: dict, chart_id: str, validate: bool = False) -> dict:
    """The chart's Vega-Lite spec, its fields checked against its data. Altair's schema
    validation triples the cost of the data-heavy charts, so the build skips it; the
    test suite builds every real chart with it (validate=True)."""
    name, kwargs = _parse(results, chart_id)
    spec = CHARTS[name][0](results, **kwargs).to_dict(validate=validate)
    check_fields(chart_id, spec)
    return spec


@timing.stage("charts")
def build_all(results: dict) -> dict[str, dict]:
    return {cid: build(results, cid) for cid in chart_ids(results)}
