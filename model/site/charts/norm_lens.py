"""Charts of the norm lens (Part 2) and its evidence: the value-norm ratios by layer and
model, the survival formula's prediction, and the verdict under each alternative choice.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers
them with the arguments a page passes."""
from __future__ import annotations

from livenumbers.charts import Chart, Num, Words, altair, dataset

from ...instrument import LENS_LABELS
from .common import WIDTH, model_name, test_rows


def _ratio_lines(alt, data, x, x_title):
    lines = alt.Chart(dataset(data)).mark_line(point=True).encode(
        x=alt.X(x, title=x_title),
        y=alt.Y("median:Q", title="median norm ratio to a content token"),
        # Colour and dash both tell the lines apart (not colour alone); the legend shows
        # a stroke, so the dash is seen in it too.
        color=alt.Color("series:N", title=None, legend=alt.Legend(symbolType="stroke")),
        strokeDash=alt.StrokeDash("series:N", title=None),
        tooltip=[alt.Tooltip("series:N", title="tokens"), alt.Tooltip("median:Q", format=".2f")],
    )
    one = alt.Chart(dataset([{"y": 1.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (one + lines).properties(width=WIDTH, height=300)


def _variant_label(v: dict) -> str:
    """A sensitivity variant, as an axis label (the same on every model's panel)."""
    if v["choice"] == "positional_threshold":
        return f"positional threshold {float(v['value']):.0%}" + (" (none)" if float(v["value"]) >= 1 else "")
    if v["choice"] == "tie_tolerance":
        return f"tie tolerance {float(v['value']):g}"
    return {"registered": "registered rule", "largest_content_mass": "the most content (least sink)",
            "one_head_for_all": "one head for every word", "punctuation_as_sink": "punctuation as sink"}.get(
        v["choice"] if v["choice"] != "head_rule" else v["value"], v["id"])


def _fewest(m: dict, lens: str) -> str:
    return min(m["sensitivity"][1:], key=lambda v: v["rows_above"][lens])["id"]


def _most(m: dict, lens: str) -> str:
    return max(m["sensitivity"][1:], key=lambda v: v["rows_above"][lens])["id"]


def _ratio_range(m: dict, k: str, token: str, num: Num) -> str:
    """"[CLS] from 0.03 (layer 2) to 0.18 (layer 0)": the ‖v‖ line's lowest and highest layer."""
    medians = {r["layer"]: r["median"] for r in m["ratios"]
               if r["layer"] is not None and r["token"] == token and r["vector"] == "v"}
    lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
    return (f"[{token.upper()}] from {num(f'{k}.layer{lo}.ratio.{token}_v.median', 'ratio:2')} "
            f"(layer {num.data(str(lo))}) to {num(f'{k}.layer{hi}.ratio.{token}_v.median', 'ratio:2')} "
            f"(layer {num.data(str(hi))})")


def ratio_by_layer(results: dict, model: str):
    """Median ratio of [CLS]/[SEP] norms to the mean content token's, per layer."""
    alt = altair()
    data = [
        {"layer": r["layer"], "median": r["median"], "series": f"[{r['token'].upper()}] ‖{r['vector']}‖"}
        for r in results["models"][model]["ratios"] if r["layer"] is not None
    ]
    return _ratio_lines(alt, data, "layer:O", "layer")


def ratio_by_layer_words(results: dict, num: Num, model: str) -> Words:
    m = results["models"][model]
    ranges = "; ".join(_ratio_range(m, model, token, num) for token in ("cls", "sep"))
    return Words(
        f"The norm of [CLS] and of [SEP], as a multiple of the mean content token's, layer by layer in "
        f"{num.data(model_name(results, model))} (median over held-out sentences and heads); the dashed line at 1 is "
        "“as large as a content word”.",
        f"Line chart over {num(f'{model}.n_layers', 'int')} layers numbered from 0, one line for each of ‖v‖ "
        f"and ‖f(x)‖ of [CLS] and of [SEP]. Value norm ‖v‖: {ranges}.",
    )


def depth_ratio(results: dict):
    """[CLS] and [SEP] value-norm ratios against relative depth, one line per model and token."""
    alt = altair()
    data = []
    for m in results["models"].values():
        L = m["n_layers"]
        for r in m["ratios"]:
            if r["layer"] is not None and r["vector"] == "v":
                data.append({"depth": (r["layer"] + 1) / L, "median": r["median"],
                             "series": f"{m['checkpoint'].split('/')[-1]} [{r['token'].upper()}]"})
    return _ratio_lines(alt, data, "depth:Q", "relative depth (layer / number of layers)")


def depth_ratio_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{num.data(model_name(results, k))} ({num(f'{k}.n_layers', 'int')} layers): "
        + ", ".join(_ratio_range(m, k, token, num) for token in ("cls", "sep"))
        for k, m in results["models"].items()
    )
    return Words(
        "The value norm of [CLS] and of [SEP], as a multiple of the mean content token's, against "
        "relative depth, one line per model and token; the dashed line at 1 is “as large as a content word”.",
        f"Line chart, relative depth from the first layer to 1 (the last). {per_model}.",
    )


def depth_sink(results: dict):
    """Median sink share over every head, per layer, under each lens, per model (held out)."""
    alt = altair()
    data = [
        {"depth": (s["layer"] + 1) / m["n_layers"], "median": s["stats"]["median_sink"],
         "model": m["checkpoint"].split("/")[-1], "lens": LENS_LABELS[s["lens"]]}
        for m in results["models"].values() for s in m["per_layer"]
    ]
    return alt.Chart(dataset(data)).mark_line(point=True).encode(
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
        return (f"under {LENS_LABELS[lens]} from {num(f'{k}.layer{lo}.{lens}.median_sink', 'pct:1')} "
                f"(layer {num.data(str(lo))}) to {num(f'{k}.layer{hi}.{lens}.median_sink', 'pct:1')} "
                f"(layer {num.data(str(hi))})")

    per_model = "; ".join(f"{num.data(model_name(results, k))}: " + ", ".join(span(k, m, lens) for lens in ("alpha", "value_norm"))
                          for k, m in results["models"].items())
    return Words(
        "The median sink share of every head's rows (held-out half), layer by layer, against relative "
        "depth: one colour per model, one dash pattern per lens.",
        f"Line chart, relative depth from the first layer to 1 (the last), sink share in %. {per_model}.",
    )


def survival_prediction(results: dict):
    """Each held-out displayed row under ‖α v‖, one panel per model: the sink share the
    formula predicts (the lens with every content token's norm set to their mean; x)
    against the share the lens gives (y). A row lies on the diagonal when the content it
    attends carries vectors of average length."""
    alt = altair()
    threshold = results["stop_rule"]["threshold"]
    panels = []
    for key, m in results["models"].items():
        rows, lens = m["rows"], m["rows"]["value_norm"]
        # Short field names, the label made in the browser: 3 x 2458 rows ride inline.
        data = [{"p": round(lens["predicted_sink"][i], 3), "o": round(lens["sink_share"][i], 3),
                 "word": rows["word"][i], "s": rows["sentence"][i]} for i in test_rows(m)]
        axis = dict(scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%", tickCount=5))
        points = alt.Chart(dataset(data), title=model_name(results, key)).transform_calculate(
            row=f"datum.o > {threshold} ? 'above half under ‖α v‖' : 'at or below half'"
        ).mark_point(filled=True, opacity=0.5, size=12).encode(
            x=alt.X("p:Q", title="predicted sink share", **axis),
            y=alt.Y("o:Q", title="sink share under ‖α v‖", **axis),
            color=alt.Color("row:N", title=None, legend=alt.Legend(orient="bottom")),
            shape=alt.Shape("row:N", title=None, legend=alt.Legend(orient="bottom")),  # not by colour alone
            tooltip=["word:N", alt.Tooltip("s:Q", title="sentence"), alt.Tooltip("p:Q", format=".1%", title="predicted"),
                     alt.Tooltip("o:Q", format=".1%", title="under ‖α v‖")],
        )
        diagonal = alt.Chart(dataset([{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
            x="a:Q", y="a:Q")
        half = alt.Chart(dataset([{"y": threshold}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(y="y:Q")
        panels.append(alt.layer(diagonal, half, points).properties(width=WIDTH / 3 - 20, height=WIDTH / 3 - 20))
    return alt.hconcat(*panels)


def survival_prediction_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{num.data(model_name(results, k))}: {num(f'{k}.value_norm.above_50_predicted_above_50', 'int')} of the "
        f"{num(f'{k}.value_norm.above_50', 'int')} rows above half are predicted above half, and what those rows "
        f"attend among content tokens has a median {num(f'{k}.value_norm.above_50_attended_norm_ratio', 'ratio:2')} "
        "of the mean content norm"
        for k in results["models"]
    )
    return Words(
        "Every held-out displayed row under ‖α v‖, one panel per model: the sink share predicted by the lens "
        "with every content token's norm set to their mean (across) against the share the lens gives (up). "
        "Rows on the dashed diagonal attend content of average length; the red line is the stop rule's 50 %.",
        f"Three scatter plots, both axes from 0 % to 100 %, {num('l6.value_norm.n_rows', 'int')} rows each. {per_model}.",
    )


def sensitivity(results: dict):
    """Per model and alternative choice: the stop rule's count, displayed rows of the whole
    corpus above the threshold under the first stop-rule lens. The rule adopts at zero."""
    alt = altair()
    lens = results["stop_rule"]["lenses"][0]
    data = [{"model": model_name(results, key), "choice": _variant_label(v), "order": i, "rows": v["rows_above"][lens],
             "verdict": "adopted" if v["adopted"] else "not adopted"}
            for key, m in results["models"].items() for i, v in enumerate(m["sensitivity"])]
    points = alt.Chart(dataset(data)).mark_point(size=70, filled=True, opacity=0.85).encode(
        x=alt.X("rows:Q", title=f"displayed rows above {results['stop_rule']['threshold']:.0%} under {LENS_LABELS[lens]} "
                "(every row; symmetric log scale)", scale=alt.Scale(type="symlog"),
                axis=alt.Axis(values=[0, 1, 3, 10, 30, 100, 300, 1000, 3000], format="d")),
        y=alt.Y("choice:N", title=None, sort=alt.EncodingSortField("order")),
        yOffset=alt.YOffset("model:N"),  # the models side by side in a row: at zero they would hide each other
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("verdict:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["model:N", "choice:N", "rows:Q", "verdict:N"],
    )
    bar = alt.Chart(dataset([{"x": results["stop_rule"]["max_rows_above"]}])).mark_rule(
        color="firebrick", strokeDash=[2, 2]).encode(x="x:Q")
    return (bar + points).properties(width=WIDTH * 0.7, height=260, usermeta={"phrases": ["choice"]})   # the axis's choices, translated


def sensitivity_words(results: dict, num: Num) -> Words:
    lens = results["stop_rule"]["lenses"][0]
    def model_words(k: str, m: dict) -> str:
        adopted = [_variant_label(v) for v in m["sensitivity"] if v["adopted"]]
        return (f"{num.data(model_name(results, k))}: {num(f'{k}.sens.registered.{lens}.rows_above', 'int')} rows under the registered "
                f"rule, from {num(f'{k}.sens.{_fewest(m, lens)}.{lens}.rows_above', 'int')} to "
                f"{num(f'{k}.sens.{_most(m, lens)}.{lens}.rows_above', 'int')} under the alternatives; "
                + (f"adopted only under: {num.data(', '.join(num.phrase(a) for a in adopted))}" if adopted
                   else "adopted under none"))

    passing = "; ".join(model_words(k, m) for k, m in results["models"].items())
    return Words(
        f"The stop rule's count under each alternative choice: displayed rows of the whole corpus above half under "
        f"{LENS_LABELS[lens]}, one row per choice, one colour per model, on a symmetric log scale. The rule adopts "
        "a lens only at zero (the red line); the registered choice stays the verdict.",
        f"Dot plot of {num.data(str(len(results['models'][next(iter(results['models']))]['sensitivity'])))} choices for each of "
        f"{num('n_models', 'int')} models. {passing}.",
    )


CHARTS = {
    "ratio_by_layer": Chart(ratio_by_layer, ratio_by_layer_words, ("model",)),
    "depth_ratio": Chart(depth_ratio, depth_ratio_words),
    "depth_sink": Chart(depth_sink, depth_sink_words),
    "survival_prediction": Chart(survival_prediction, survival_prediction_words),
    "sensitivity": Chart(sensitivity, sensitivity_words),
}
