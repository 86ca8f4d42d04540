"""Charts of what the sink does (Part 6): the ablation ground truth against the registered
sink share, the later fixes, which reading tracks the truth, the idle-head bound.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers
them with the arguments a page passes."""
from __future__ import annotations

from livenumbers.charts import Chart, Num, Words, altair, dataset

from ...instrument import LENS_LABELS
from ...truth import FIX_LABELS
from .common import WIDTH, band_tooltip, bin_counts, interval_tooltip, model_name, test_rows


# Lazy scores that know only where the word is (model/truth/readings.py, added after the sceptical reading)
BASELINE_NAMES = {"position": "baseline: position", "first_word": "baseline: first word"}


def ablation_scatter(results: dict, model: str):
    """Each held-out displayed row (α's head): its registered sink share (x) against its
    ablation sink share (y); filled where removing the sink moves the word more than a
    typical whole head does (harmful)."""
    alt = altair()
    m = results["models"][model]
    rows, at = m["rows"], m["ground_truth"]["harmful_threshold"]
    data = [{"sink": round(rows["alpha"]["sink_share"][i], 4), "truth": round(rows["alpha"]["ablation_share"][i], 4),
             "harmful": "harmful" if rows["alpha"]["sink_effect"][i] > at else "not harmful",
             "word": rows["word"][i], "sentence": rows["sentence"][i]}
            for i in test_rows(m) if rows["alpha"]["ablation_share"][i] is not None]   # the ablation's sample
    points = alt.Chart(dataset(data)).mark_point(opacity=0.45, size=16).encode(
        x=alt.X("sink:Q", title="sink share of the row (attention, registered)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        y=alt.Y("truth:Q", title="ablation sink share (what the sink does to the word)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        color=alt.Color("harmful:N", title=None), shape=alt.Shape("harmful:N", title=None),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("sink:Q", format=".1%", title="sink share"),
                 alt.Tooltip("truth:Q", format=".1%")],
    )
    diagonal = alt.Chart(dataset([{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q")
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


def ablation_scatter_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.truth.alpha"
    return Words(
        f"Every held-out displayed row of {num.data(model_name(results, model))} on the head α opens: how much of the row the "
        "attention gives [CLS] and [SEP] (across) against how much of what the head does to the word comes through "
        "them, measured by removing their part (up). Harmful rows, where removing the sink moves the word more than "
        "removing a typical whole head does, have a mark and colour of their own. The dashed line is where the two agree.",
        f"Scatter plot of {num(f'{p}.n_rows', 'int')} rows, both axes from 0 % to 100 %. The median sampled row gives the sink "
        f"{num(f'{p}.registered_median_sink', 'pct:1')} of its attention, and the sink carries "
        f"{num(f'{p}.median_share', 'pct:1')} of the head's effect on the word; {num(f'{p}.harmful', 'int')} rows are harmful.",
    )


def fix_sinks(results: dict, model: str):
    """How much of each held-out row the later fixes give the sink, registered (the word's
    own column counted) and among the other words (added), against the stop rule's 50 %:
    one panel per fix, each with its own rows (value zeroing: its sample's)."""
    alt = altair()
    m = results["models"][model]
    idx = test_rows(m)
    panels = []
    for fix, name in FIX_LABELS.items():
        data = []
        for col, view in (("sink_share", "registered (own column counted)"), ("sink_share_other", "added: among the other words")):
            values = [v for v in (m["rows"][fix][col][i] for i in idx) if v is not None]
            data += [{"from": b, "to": round(b + 0.05, 6), "rows": c, "view": view} for b, c in bin_counts(values, 0.05)]
        bars = alt.Chart(dataset(data), title=name).mark_bar(opacity=0.6).encode(
            x=alt.X("from:Q", bin="binned", title="sink share of the row", axis=alt.Axis(format="%"),
                    scale=alt.Scale(domain=[0, 1])),
            x2="to:Q",
            y=alt.Y("rows:Q", title="rows", stack=None),
            color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["view:N", *band_tooltip(alt, ".0%"), "rows:Q"],
        )
        rule = alt.Chart(dataset([{"x": 0.5}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(x="x:Q")
        panels.append(alt.layer(bars, rule).properties(width=WIDTH, height=100))
    return alt.vconcat(*panels)


def fix_sinks_words(results: dict, num: Num, model: str) -> Words:
    parts = "; ".join(
        f"{name}: median {num(f'{model}.fix.{fix}.median_sink', 'pct:1')} registered, "
        f"{num(f'{model}.fix.{fix}.median_sink_other', 'pct:1')} among the other words"
        for fix, name in FIX_LABELS.items())
    return Words(
        f"The later fixes read as lenses on the rows of {num.data(model_name(results, model))}: how much of each held-out row goes to "
        "[CLS] and [SEP], with the word's own column counted (registered) and among the other words only (added). One "
        "panel per fix; the red line is the stop rule's 50 %.",
        f"Three panels of two overlaid histograms each, sink share from 0 % to 100 %. {parts}.",
    )


def tracking_chart(results: dict):
    """Per model and reading: the rank correlation of its sink share with the ablation sink
    share, with its interval (held-out rows), and the same for the position baselines."""
    alt = altair()
    labels = {**LENS_LABELS, **FIX_LABELS, **BASELINE_NAMES}
    data = [{"model": model_name(results, k), "reading": labels[lens], "rho": t["spearman"], "lo": t["spearman_lo"],
             "hi": t["spearman_hi"]}
            for k, m in results["models"].items() for lens, t in m["ground_truth"]["tracking"].items()
            if t["spearman"] is not None]
    base = alt.Chart(dataset(data))
    order = list(labels.values())
    y = alt.Y("reading:N", title=None, sort=order)
    bars = base.mark_rule().encode(x=alt.X("lo:Q", title="Spearman's ρ with the ablation sink share",
                                           scale=alt.Scale(domain=[-1, 1])), x2="hi:Q", y=y, yOffset="model:N",
                                   color=alt.Color("model:N", legend=None))
    dots = base.mark_point(filled=True, size=45).encode(   # colour and mark both tell the models apart: one legend
        x="rho:Q", y=y, yOffset="model:N", color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("model:N", title="model"),
        tooltip=["model:N", "reading:N", alt.Tooltip("rho:Q", format=".2f", title="ρ"), *interval_tooltip(alt, ".2f")])
    zero = alt.Chart(dataset([{"x": 0.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="x:Q")
    return (zero + bars + dots).properties(width=WIDTH, height=300, usermeta={"phrases": ["reading"]})   # the axis's readings, translated


def tracking_chart_words(results: dict, num: Num) -> Words:
    parts = "; ".join(
        f"{num.data(model_name(results, k))}: ATB+RES+LN {num(f'{k}.track.kobayashi2021.spearman', 'fixed:2')}, "
        f"ALTI {num(f'{k}.track.alti.spearman', 'fixed:2')}, value zeroing "
        f"{num(f'{k}.track.value_zeroing.spearman', 'fixed:2')}, α {num(f'{k}.track.alpha.spearman', 'fixed:2')}, "
        f"the word's position {num(f'{k}.track.position.spearman', 'fixed:2')}"
        for k in results["models"])
    return Words(
        "How well each reading's sink share ranks the rows as the ablation does: Spearman's ρ with the ablation sink "
        "share, held-out rows, one mark per model with its 95 % interval. 0 is no relation, 1 the same order. The last "
        "two lines are lazy scores that know only where the word is (its position, earlier first; the sentence's "
        "first word), added after the sceptical reading.",
        f"Dot plot with intervals, ρ from −1 to 1, one line per reading and model. {parts}.",
    )


def idle_ratio(results: dict, model: str, lens: str = "value_norm"):
    """Held-out rows (on the head a norm lens opens): the head's bound on its effect on the
    word, over that word's median head's, for the rows above half and the others (log scale)."""
    import math

    alt = altair()
    m = results["models"][model]
    rows = m["rows"]
    data = []
    for i in test_rows(m):
        ratio = rows[lens]["bound_ratio"][i]
        view = "above 50 % under " + LENS_LABELS[lens] if rows[lens]["sink_share"][i] > 0.5 else "other rows"
        data.append((view, math.log2(max(ratio, 1 / 64))))
    binned = []
    for view in sorted({v for v, _ in data}):
        values = [x for v, x in data if v == view]
        total = len(values)
        binned += [{"from": b, "to": round(b + 0.25, 6), "share": c / total, "view": view}
                   for b, c in bin_counts(values, 0.25, -6.0, 4.0)]
    bars = alt.Chart(dataset(binned)).mark_bar(opacity=0.6).encode(
        x=alt.X("from:Q", bin="binned", title="log₂ of the head's bound over the word's median head's"),
        x2="to:Q",
        y=alt.Y("share:Q", title="share of the rows", stack=None, axis=alt.Axis(format="%")),
        color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["view:N", *band_tooltip(alt, ".2f"), alt.Tooltip("share:Q", format=".1%")],
    )
    one = alt.Chart(dataset([{"x": 0.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="x:Q")
    return (bars + one).properties(width=WIDTH, height=220)


def idle_ratio_words(results: dict, num: Num, model: str, lens: str = "value_norm") -> Words:
    p = f"{model}.idle.{lens}"
    return Words(
        f"For each held-out row of {num.data(model_name(results, model))} on the head {LENS_LABELS[lens]} opens: the head's bound on "
        "how much it can move the word (the sum of α times ‖f(x)‖), over the same bound for that word's median head, "
        "on a log scale (0 is the median head); rows still above half under the lens against the others.",
        f"Two overlaid histograms of the share of rows. The {num(f'{p}.n_survivors', 'int')} rows above half sit on heads "
        f"with a median ratio of {num(f'{p}.median_ratio_survivors', 'ratio:2')}; the other rows "
        f"{num(f'{p}.median_ratio_others', 'ratio:2')}.",
    )


CHARTS = {
    "ablation_scatter": Chart(ablation_scatter, ablation_scatter_words, ("model",)),
    "fix_sinks": Chart(fix_sinks, fix_sinks_words, ("model",)),
    "tracking_chart": Chart(tracking_chart, tracking_chart_words),
    "idle_ratio": Chart(idle_ratio, idle_ratio_words, ("model",)),
}
