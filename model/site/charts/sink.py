"""Charts of the sink problem (Part 1) and the rows the instrument opens: how much of each
displayed row goes to [CLS] and [SEP], which layers the rule opens, punctuation beside the
sink, one row whole.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers
them with the arguments a page passes."""
from __future__ import annotations

from livenumbers.charts import Chart, Num, Words, altair, dataset

from ...instrument import LENS_LABELS
from .common import (PALETTE, WIDTH, band_tooltip, bin_counts, displayed_row, grouped_bars, interval_tooltip,
                     model_name, test_rows)


def sink_scatter(results: dict, model: str):
    """Each held-out displayed row: its sink share under α (x) and under a norm lens (y)."""
    alt = altair()
    m = results["models"][model]
    rows = m["rows"]
    data = [
        {"alpha": round(rows["alpha"]["sink_share"][i], 4), "norm": round(rows[lens]["sink_share"][i], 4),
         "lens": LENS_LABELS[lens], "word": rows["word"][i], "sentence": rows["sentence"][i]}
        for lens in ("value_norm", "output_norm") for i in test_rows(m)
    ]
    base = alt.Chart(dataset(data))
    points = base.mark_point(filled=True, opacity=0.4, size=14).encode(
        x=alt.X("alpha:Q", title="sink share under α", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("norm:Q", title="sink share under the norm lens", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("lens:N", title="lens"),
        shape=alt.Shape("lens:N", title="lens"),  # not by colour alone
        tooltip=["word:N", "sentence:Q", alt.Tooltip("alpha:Q", format=".1%", title="α"),
                 alt.Tooltip("norm:Q", format=".1%", title="norm lens")],
    )
    diagonal = alt.Chart(dataset([{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    half = alt.Chart(dataset([{"y": 0.5}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(y="y:Q")
    return (diagonal + half + points).properties(width=WIDTH, height=WIDTH * 0.75)


def sink_scatter_words(results: dict, num: Num, model: str) -> Words:
    k = model
    return Words(
        f"Every held-out displayed row of {num.data(model_name(results, model))}: its sink share under α (across) and "
        "under a norm lens (up), one point per row and lens. Points under the dashed diagonal lost sink "
        "share under the norm lens; the red line is the stop rule's 50 %.",
        f"Scatter plot of {num(f'{k}.alpha.n_rows', 'int')} rows under each of ‖α v‖ and ‖α f(x)‖, both axes "
        f"from 0 % to 100 %. Under α the median row gives {num(f'{k}.alpha.median_sink', 'pct:1')} of its "
        f"weight to [CLS] and [SEP]; under ‖α v‖ {num(f'{k}.value_norm.median_sink', 'pct:1')}. The cloud "
        f"falls toward the floor but does not reach it: {num(f'{k}.value_norm.above_50', 'int')} rows stay "
        f"above 50 % under ‖α v‖, and {num(f'{k}.value_norm.worse_rows', 'int')} rise above the diagonal.",
    )


def sink_distribution(results: dict, model: str):
    """How much of each held-out displayed row goes to the sink, under each lens."""
    alt = altair()
    m = results["models"][model]
    idx = test_rows(m)
    data = [{"from": b, "to": round(b + 0.05, 6), "rows": c, "lens": LENS_LABELS[lens]}
            for lens in LENS_LABELS for b, c in bin_counts([m["rows"][lens]["sink_share"][i] for i in idx], 0.05)]
    return alt.Chart(dataset(data)).mark_bar(opacity=0.85).encode(
        x=alt.X("from:Q", bin="binned", title="sink share of the displayed row", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        x2="to:Q",
        # A symmetric-log count axis: the stop rule is about the few rows in the tail, which a
        # linear axis draws as nothing beside the thousands near zero.
        y=alt.Y("rows:Q", title="rows (log scale)", scale=alt.Scale(type="symlog")),
        color=alt.Color("lens:N", title="lens"),
        row=alt.Row("lens:N", title=None),
        tooltip=["lens:N", *band_tooltip(alt, ".0%"), "rows:Q"],
    ).properties(width=WIDTH, height=110)


def sink_distribution_words(results: dict, num: Num, model: str) -> Words:
    k = model
    per_lens = "; ".join(
        f"under {LENS_LABELS[lens]} the median row gives {num(f'{k}.{lens}.median_sink', 'pct:1')} and "
        f"{num(f'{k}.{lens}.above_50_share', 'pct:1')} of rows give more than half"
        for lens in LENS_LABELS
    )
    return Words(
        f"How much of each held-out displayed row of {num.data(model_name(results, model))} goes to [CLS] and [SEP], one "
        "panel per lens; each bar counts the rows in a 5-point band of sink share, on a logarithmic count "
        "axis so that the few rows in the tail show.",
        f"One histogram per lens, {num(f'{k}.alpha.n_rows', 'int')} rows each, sink share from 0 % to 100 %: "
        f"{per_lens}.",
    )


def rule_layers(results: dict, model: str):
    """Per layer: the median sink share of every head's rows (α, held-out half), above the
    number of displayed rows the head rule opens in that layer."""
    alt = altair()
    m = results["models"][model]
    sink = [{"layer": s["layer"], "median": s["stats"]["median_sink"]} for s in m["per_layer"] if s["lens"] == "alpha"]
    picks = [{"layer": layer, "rows": n} for layer, n in enumerate(m["summary"]["alpha"]["layer_picks"])]
    x = alt.X("layer:O", title="layer (from 0)", axis=alt.Axis(labelAngle=0))
    top = alt.Chart(dataset(sink)).mark_bar(color=PALETTE[1]).encode(
        x=x, y=alt.Y("median:Q", title="median sink share, every head", axis=alt.Axis(format="%")),
        tooltip=["layer:O", alt.Tooltip("median:Q", format=".1%")]).properties(width=WIDTH * 0.7, height=140)
    bottom = alt.Chart(dataset(picks)).mark_bar(color=PALETTE[0]).encode(
        x=x, y=alt.Y("rows:Q", title="rows the rule opens"),
        tooltip=["layer:O", "rows:Q"]).properties(width=WIDTH * 0.7, height=140)
    return alt.vconcat(top, bottom)


def rule_layers_words(results: dict, num: Num, model: str) -> Words:
    m = results["models"][model]
    medians = {s["layer"]: s["stats"]["median_sink"] for s in m["per_layer"] if s["lens"] == "alpha"}
    lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
    picks = m["summary"]["alpha"]["layer_picks"]
    most = max(range(len(picks)), key=picks.__getitem__)
    return Words(
        f"Where the sink sits and where the head rule looks, layer by layer in {num.data(model_name(results, model))} (held-out "
        "half, α): above, the median sink share of every head's rows for the shown words; below, how many "
        "displayed rows the rule opens in that layer.",
        f"Two bar charts over {num(f'{model}.n_layers', 'int')} layers numbered from 0. The median sink share is "
        f"lowest in layer {num.data(str(lo))} ({num(f'{model}.layer{lo}.alpha.median_sink', 'pct:1')}) and highest in "
        f"layer {num.data(str(hi))} "
        f"({num(f'{model}.layer{hi}.alpha.median_sink', 'pct:1')}); the rule opens layer {num.data(str(most))} most often "
        f"({num(f'{model}.alpha.picks.layer{most}', 'int')} of {num(f'{model}.alpha.n_rows', 'int')} rows).",
    )


def punct_vs_sink(results: dict):
    """Per model: the share of held-out displayed rows (α) that give more than half to
    [CLS] + [SEP], beside the share that give more than half to punctuation, with intervals."""
    alt = altair()
    data = []
    for key, m in results["models"].items():
        s = m["summary"]["alpha"]["stats"]
        for order, (field, what) in enumerate((("above_50_share", "[CLS] + [SEP]"), ("punct_above_50_share", "punctuation"))):
            data.append({"model": model_name(results, key), "what": what, "order": order, "share": s[field],
                         "lo": s[f"{field}_lo"], "hi": s[f"{field}_hi"]})
    base = alt.Chart()  # the data sits at the top, where a facet needs it
    y = alt.Y("what:N", title=None, sort=alt.EncodingSortField("order"))
    bars = base.mark_bar(opacity=0.85).encode(
        x=alt.X("share:Q", title="held-out displayed rows giving it more than half (α)", axis=alt.Axis(format="%")),
        y=y, color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["model:N", alt.Tooltip("what:N", title="given to"), alt.Tooltip("share:Q", format=".1%"),
                 *interval_tooltip(alt, ".1%")])
    whiskers = base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q", y=y)
    return alt.layer(bars, whiskers, data=dataset(data)).properties(width=WIDTH * 0.7, height=50).facet(
        row=alt.Row("model:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left"),
                    sort=[model_name(results, key) for key in results["models"]]))


def punct_vs_sink_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{num.data(model_name(results, k))}: {num(f'{k}.alpha.above_50_share', 'pct:1')} on [CLS] + [SEP], "
        f"{num(f'{k}.alpha.punct_above_50_share', 'pct:1')} on punctuation"
        for k in results["models"]
    )
    return Words(
        "The tail of each sink, per model: the share of held-out displayed rows (α) that give more than half of "
        "their weight to [CLS] and [SEP], and the share that give more than half to punctuation, with "
        f"{num('bootstrap.level', 'pct:0')} intervals over sentences.",
        f"Horizontal bars, one panel per model. {per_model}.",
    )


def row_example(results: dict, model: str, name: str):
    """One real row, whole: its full row (with [CLS], [SEP] and itself) against the row
    as displayed, under α and, for the survivor, under ‖α v‖ on the same head."""
    alt = altair()
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == name)
    data = []
    for lens in ["alpha"] if name == "typical" else ["alpha", "value_norm"]:
        full = ex["full"][lens]
        shown = displayed_row(full, ex["word_index"])
        for k, col in enumerate(ex["columns"]):
            label = f"{k:02d} {col}"  # the index keeps repeated words apart; the axis hides it
            data.append({"column": label, "weight": full[k], "view": f"full row, {LENS_LABELS[lens]}"})
            data.append({"column": label, "weight": shown[k], "view": f"displayed, {LENS_LABELS[lens]}"})
    return grouped_bars(alt, data, "weight")


def row_example_words(results: dict, num: Num, model: str, name: str) -> Words:
    p = f"{model}.example.{name}"
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == name)
    lens = "α" if name == "typical" else "α and ‖α v‖"
    return Words(
        f"One row, whole: “{num.data(ex['word'])}” on layer {num.data(str(ex['layer']))}, head {num.data(str(ex['head']))} "
        f"of {num.data(model_name(results, model))}, "
        f"under {lens}. Each word gets two bars: its weight in the full row (with [CLS], [SEP] and the word "
        "itself) and in the row as displayed (those three removed, the rest stretched to 100 %).",
        f"Grouped bar chart over the {num.data(str(len(ex['columns'])))} columns of "
        f"“{num.data(results['sentences'][ex['sentence']])}”. "
        f"In the full row [CLS] and [SEP] hold {num(f'{p}.sink_alpha', 'pct:1')} under α"
        + (f" and {num(f'{p}.sink_value_norm', 'pct:1')} under ‖α v‖" if name != "typical" else "")
        + "; the displayed row cannot show it.",
    )


CHARTS = {
    "sink_scatter": Chart(sink_scatter, sink_scatter_words, ("model",)),
    "sink_distribution": Chart(sink_distribution, sink_distribution_words, ("model",)),
    "rule_layers": Chart(rule_layers, rule_layers_words, ("model",)),
    "punct_vs_sink": Chart(punct_vs_sink, punct_vs_sink_words),
    "row_example": Chart(row_example, row_example_words, ("model", "name")),
}
