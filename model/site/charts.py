"""Charts, as Vega-Lite specs built with Altair from the results, and their words.

`CHARTS` maps a chart's name to a builder `(results, **args) -> alt.Chart`, `WORDS` to
a describer `(results, num, **args) -> Words`; a page asks for
`chart("sink_scatter", model="l6")`, whose id is "sink_scatter/l6". Specs are built
once per results (and per version of the site code) and cached, so a warm build never
imports Altair. Data rides in the spec, in its top-level `datasets` (counts, not rows,
where a histogram would otherwise carry thousands); every field an encoding names must exist in the data
or be made by a transform, or the build stops naming the chart and field.

Words: each chart has a caption (shown under it) and a text alternative (read out in
its place to a reader who does not see it): what is plotted, over what range, and the
one thing it shows. Each describer sits beside its builder and reads the same results;
every number it prints goes through the page's `num`, so it is cited, locked and gated
like any number in the prose: one that moves fails the build.
"""
from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass
from typing import Callable

from .. import timing
from ..errors import UserError
from ..instrument import LENS_LABELS
from .numbers import FLIP_SETS, flip_set

WIDTH = 560
# Single-colour marks take the site's first hues (docs/javascripts/charts.js, CATEGORY): they
# keep 3:1 against both palettes' backgrounds.
PALETTE = ("#2a84c8", "#d55e00")


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


# The rows of the chart being built, by dataset name (see `_rows`); None: inline them.
_DATASETS: contextvars.ContextVar[dict[str, list] | None] = contextvars.ContextVar("chart_datasets", default=None)


def _rows(values: list[dict]):
    """A chart's data. Altair validates and deep-copies inline rows value by value, which
    is most of a data-heavy chart's cost; while `build` runs without validation the rows
    go by name instead, and join the spec's top-level `datasets` (where Altair would put
    them) once it is built."""
    alt = _alt()
    datasets = _DATASETS.get()
    if datasets is None:
        return alt.Data(values=values)
    name = f"rows-{len(datasets)}"
    datasets[name] = values
    return alt.Data(name=name)


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
    base = alt.Chart(_rows(data))
    points = base.mark_point(filled=True, opacity=0.4, size=14).encode(
        x=alt.X("alpha:Q", title="sink share under α", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("norm:Q", title="sink share under the norm lens", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("lens:N", title="lens"),
        shape=alt.Shape("lens:N", title="lens"),  # not by colour alone
        tooltip=["word:N", "sentence:Q", alt.Tooltip("alpha:Q", format=".1%"), alt.Tooltip("norm:Q", format=".1%")],
    )
    diagonal = alt.Chart(_rows([{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    half = alt.Chart(_rows([{"y": 0.5}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(y="y:Q")
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
    return alt.Chart(_rows(data)).mark_bar(opacity=0.85).encode(
        x=alt.X("from:Q", bin="binned", title="sink share of the displayed row", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        x2="to:Q",
        # A symmetric-log count axis: the stop rule is about the few rows in the tail, which a
        # linear axis draws as nothing beside the thousands near zero.
        y=alt.Y("rows:Q", title="rows (log scale)", scale=alt.Scale(type="symlog")),
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
    lines = alt.Chart(_rows(data)).mark_line(point=True).encode(
        x=alt.X(x, title=x_title),
        y=alt.Y("median:Q", title="median norm ratio to a content token"),
        # Colour and dash both tell the lines apart (not colour alone); the legend shows
        # a stroke, so the dash is seen in it too.
        color=alt.Color("series:N", title=None, legend=alt.Legend(symbolType="stroke")),
        strokeDash=alt.StrokeDash("series:N", title=None),
        tooltip=["series:N", alt.Tooltip("median:Q", format=".2f")],
    )
    one = alt.Chart(_rows([{"y": 1.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (one + lines).properties(width=WIDTH, height=300)


def depth_sink(results: dict):
    """Median sink share over every head, per layer, under each lens, per model (held out)."""
    alt = _alt()
    data = [
        {"depth": (s["layer"] + 1) / m["n_layers"], "median": s["stats"]["median_sink"],
         "model": m["checkpoint"].split("/")[-1], "lens": LENS_LABELS[s["lens"]]}
        for m in results["models"].values() for s in m["per_layer"]
    ]
    return alt.Chart(_rows(data)).mark_line(point=True).encode(
        x=alt.X("depth:Q", title="relative depth (layer / number of layers)"),
        y=alt.Y("median:Q", title="median sink share, all heads", axis=alt.Axis(format="%")),
        color=alt.Color("model:N", legend=alt.Legend(symbolType="stroke")),
        strokeDash=alt.StrokeDash("lens:N", legend=alt.Legend(symbolType="stroke")),
        tooltip=["model:N", "lens:N", alt.Tooltip("median:Q", format=".1%")],
    ).properties(width=WIDTH, height=300)


def rollout_views(results: dict):
    """Rollout rows' normalized entropy, full row against the row as displayed, per model;
    the dashed rules are a row of each view's typical length with half its weight on one word."""
    alt = _alt()
    panels = []
    for m in results["models"].values():
        name = m["checkpoint"].split("/")[-1]
        data = [{"from": b, "to": round(b + 0.02, 6), "rows": c, "view": view}
                for view, values in (("full row", m["rollout"]["entropies"]),
                                     ("displayed row (other words)", m["rollout"]["displayed_entropies"]))
                for b, c in _binned(values, 0.02, 0.4, 1.0)]
        bars = alt.Chart(_rows(data), title=name).mark_bar(opacity=0.7).encode(
            x=alt.X("from:Q", bin="binned", title="normalized entropy (1 = uniform)", scale=alt.Scale(domain=[0.4, 1])),
            x2="to:Q",
            y=alt.Y("rows:Q", title="rows", stack=None),
            color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["view:N", "rows:Q"],
        )
        yardsticks = [{"entropy": m["rollout"]["one_clear_word_entropy_full"], "view": "full row"},
                      {"entropy": m["rollout"]["one_clear_word_entropy"], "view": "displayed row (other words)"}]
        rule = alt.Chart(_rows(yardsticks)).mark_rule(strokeDash=[4, 4]).encode(
            x="entropy:Q", color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")))
        panels.append(alt.layer(bars, rule).properties(width=WIDTH, height=110))
    return alt.vconcat(*panels)


def punct_vs_sink(results: dict):
    """Per model: the share of held-out displayed rows (α) that give more than half to
    [CLS] + [SEP], beside the share that give more than half to punctuation, with intervals."""
    alt = _alt()
    data = []
    for key, m in results["models"].items():
        s = m["summary"]["alpha"]["stats"]
        for order, (field, what) in enumerate((("above_50_share", "[CLS] + [SEP]"), ("punct_above_50_share", "punctuation"))):
            data.append({"model": _name(results, key), "what": what, "order": order, "share": s[field],
                         "lo": s[f"{field}_lo"], "hi": s[f"{field}_hi"]})
    base = alt.Chart()  # the data sits at the top, where a facet needs it
    y = alt.Y("what:N", title=None, sort=alt.EncodingSortField("order"))
    bars = base.mark_bar(opacity=0.85).encode(
        x=alt.X("share:Q", title="held-out displayed rows giving it more than half (α)", axis=alt.Axis(format="%")),
        y=y, color=alt.Color("what:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["model:N", "what:N", alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("lo:Q", format=".1%"),
                 alt.Tooltip("hi:Q", format=".1%")])
    whiskers = base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q", y=y)
    return alt.layer(bars, whiskers, data=_rows(data)).properties(width=WIDTH * 0.7, height=50).facet(
        row=alt.Row("model:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left"),
                    sort=[_name(results, key) for key in results["models"]]))


def rule_layers(results: dict, model: str):
    """Per layer: the median sink share of every head's rows (α, held-out half), above the
    number of displayed rows the head rule opens in that layer."""
    alt = _alt()
    m = results["models"][model]
    sink = [{"layer": s["layer"], "median": s["stats"]["median_sink"]} for s in m["per_layer"] if s["lens"] == "alpha"]
    picks = [{"layer": layer, "rows": n} for layer, n in enumerate(m["summary"]["alpha"]["layer_picks"])]
    x = alt.X("layer:O", title="layer (from 0)", axis=alt.Axis(labelAngle=0))
    top = alt.Chart(_rows(sink)).mark_bar(color=PALETTE[1]).encode(
        x=x, y=alt.Y("median:Q", title="median sink share, every head", axis=alt.Axis(format="%")),
        tooltip=["layer:O", alt.Tooltip("median:Q", format=".1%")]).properties(width=WIDTH * 0.7, height=140)
    bottom = alt.Chart(_rows(picks)).mark_bar(color=PALETTE[0]).encode(
        x=x, y=alt.Y("rows:Q", title="rows the rule opens"),
        tooltip=["layer:O", "rows:Q"]).properties(width=WIDTH * 0.7, height=140)
    return alt.vconcat(top, bottom)


def survival_prediction(results: dict):
    """Each held-out displayed row under ‖α v‖, one panel per model: the sink share the
    formula predicts (the lens with every content token's norm set to their mean; x)
    against the share the lens gives (y). A row lies on the diagonal when the content it
    attends carries vectors of average length."""
    alt = _alt()
    threshold = results["stop_rule"]["threshold"]
    panels = []
    for key, m in results["models"].items():
        rows, lens = m["rows"], m["rows"]["value_norm"]
        # Short field names, the label made in the browser: 3 x 2458 rows ride inline.
        data = [{"p": round(lens["predicted_sink"][i], 3), "o": round(lens["sink_share"][i], 3),
                 "word": rows["word"][i], "s": rows["sentence"][i]} for i in _test_rows(m)]
        axis = dict(scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%", tickCount=5))
        points = alt.Chart(_rows(data), title=_name(results, key)).transform_calculate(
            row=f"datum.o > {threshold} ? 'above half under ‖α v‖' : 'at or below half'"
        ).mark_point(filled=True, opacity=0.5, size=12).encode(
            x=alt.X("p:Q", title="predicted sink share", **axis),
            y=alt.Y("o:Q", title="sink share under ‖α v‖", **axis),
            color=alt.Color("row:N", title=None, legend=alt.Legend(orient="bottom")),
            shape=alt.Shape("row:N", title=None, legend=alt.Legend(orient="bottom")),  # not by colour alone
            tooltip=["word:N", alt.Tooltip("s:Q", title="sentence"), alt.Tooltip("p:Q", format=".1%", title="predicted"),
                     alt.Tooltip("o:Q", format=".1%", title="under ‖α v‖")],
        )
        diagonal = alt.Chart(_rows([{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
            x="a:Q", y="a:Q")
        half = alt.Chart(_rows([{"y": threshold}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(y="y:Q")
        panels.append(alt.layer(diagonal, half, points).properties(width=WIDTH / 3 - 20, height=WIDTH / 3 - 20))
    return alt.hconcat(*panels)


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


def sensitivity(results: dict):
    """Per model and alternative choice: the stop rule's count, displayed rows of the whole
    corpus above the threshold under the first stop-rule lens. The rule adopts at zero."""
    alt = _alt()
    lens = results["stop_rule"]["lenses"][0]
    data = [{"model": _name(results, key), "choice": _variant_label(v), "order": i, "rows": v["rows_above"][lens],
             "verdict": "adopted" if v["adopted"] else "not adopted"}
            for key, m in results["models"].items() for i, v in enumerate(m["sensitivity"])]
    points = alt.Chart(_rows(data)).mark_point(size=70, filled=True, opacity=0.85).encode(
        x=alt.X("rows:Q", title=f"displayed rows above {results['stop_rule']['threshold']:.0%} under {LENS_LABELS[lens]} "
                "(every row; symmetric log scale)", scale=alt.Scale(type="symlog"),
                axis=alt.Axis(values=[0, 1, 3, 10, 30, 100, 300, 1000, 3000], format="d")),
        y=alt.Y("choice:N", title=None, sort=alt.EncodingSortField("order")),
        yOffset=alt.YOffset("model:N"),  # the models side by side in a row: at zero they would hide each other
        color=alt.Color("model:N", title=None, legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("verdict:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["model:N", "choice:N", "rows:Q", "verdict:N"],
    )
    bar = alt.Chart(_rows([{"x": results["stop_rule"]["max_rows_above"]}])).mark_rule(
        color="firebrick", strokeDash=[2, 2]).encode(x="x:Q")
    return (bar + points).properties(width=WIDTH * 0.7, height=260)


# key in a model's rollout results -> (label, kind): the word's own row, then the lazy guesses
# (sentence-wide, then positional, added after the second review's sceptical reading), then chance.
ROLLOUT_GUESSES = {"agrees_with_instrument": ("the word's own rollout row", "rollout, this word"),
                   "baseline_last_punct": ("last punctuation mark", "lazy guess, sentence-wide"),
                   "baseline_other_word": ("another word's rollout row", "lazy guess, sentence-wide"),
                   "baseline_sentence_mean": ("the sentence's mean row", "lazy guess, sentence-wide"),
                   "baseline_next_word": ("the next word", "lazy guess, positional"),
                   "baseline_previous_word": ("the previous word", "lazy guess, positional"),
                   "chance_agreement": ("a word drawn at random", "chance")}


def rollout_baselines(results: dict):
    """Per model: how often each guess names the instrument's top word, with its interval
    (a random draw has none: it is an expectation)."""
    alt = _alt()
    panels = []
    for key, m in results["models"].items():
        ro = m["rollout"]
        data = [{"guess": label, "order": i, "share": ro[k], "lo": ro.get(f"{k}_lo", ro[k]), "hi": ro.get(f"{k}_hi", ro[k]),
                 "kind": kind}
                for i, (k, (label, kind)) in enumerate(ROLLOUT_GUESSES.items())]
        base = alt.Chart(_rows(data), title=_name(results, key))
        y = alt.Y("guess:N", title=None, sort=alt.EncodingSortField("order"))
        bars = base.mark_bar(opacity=0.8).encode(
            x=alt.X("share:Q", title="rows whose top word is the instrument's", scale=alt.Scale(domain=[0, 1]),
                    axis=alt.Axis(format="%")),
            y=y, color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom"),
                                 sort=list(dict.fromkeys(kind for _, kind in ROLLOUT_GUESSES.values()))),
            tooltip=["guess:N", alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("lo:Q", format=".1%"),
                     alt.Tooltip("hi:Q", format=".1%")])
        whiskers = base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q", y=y)
        panels.append(alt.layer(bars, whiskers).properties(width=WIDTH * 0.7, height=150))
    return alt.vconcat(*panels)


def flip_shift(results: dict, model: str):
    """Per pair: the share of heads (layer 0 apart) whose preference moved the reader's way,
    pairs in the order written and mirrored told apart."""
    alt = _alt()
    f = results["models"][model]["flips"]["lenses"]["alpha"]
    data = [{"pair": i + 1, "share": p["toward_reader"] / f["n_heads"], "changed": p["changed"],
             "order": ORDER_LABELS[p["order"]], "sentence": p["sentences"][1]} for i, p in enumerate(f["pairs"])]
    dots = alt.Chart(_rows(data)).mark_point(filled=True, size=40, opacity=0.8).encode(
        x=alt.X("pair:O", title="minimal pair", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("share:Q", title="share of heads moving toward the reader", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        color=alt.Color("order:N", title="nouns named", legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("order:N", title="nouns named"),  # not by colour alone
        tooltip=["pair:Q", "order:N", "sentence:N", alt.Tooltip("share:Q", format=".0%"), "changed:Q"],
    )
    half = alt.Chart(_rows([{"y": 0.5}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (half + dots).properties(width=WIDTH, height=220)


ORDER_LABELS = {"original": "as first written", "mirrored": "mirrored"}
PASSES = ("passes the corrected sign test", "does not")


def _head_points(h: dict) -> list[dict]:
    """Heads with the same (follows, opposes, verdict) share one point, sized by their number."""
    points: dict[tuple, list[str]] = {}
    for i, (fo, op) in enumerate(zip(h["follows"], h["opposes"])):
        passes = h["p_corrected"][i] < h["alpha"]
        points.setdefault((fo, op, passes), []).append(f"L{h['layer'][i]}H{h['head'][i]}")
    return [{"follows": fo, "opposes": op, "n_heads": len(names), "test": PASSES[0] if passes else PASSES[1],
             "heads": ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")}
            for (fo, op, passes), names in sorted(points.items())]


def flip_heads(results: dict, model: str):
    """Every head outside layer 0: the pairs in which it follows the reader (up) against
    those in which it goes against the reader (across), on the flip pairs (both orders) and
    on the null pairs; heads that pass the corrected sign test are marked. The dashed line is
    the 95th percentile of the largest follow count when each pair's sentences are swapped."""
    alt = _alt()
    f = results["models"][model]["flips"]
    sets = [("flip pairs, both orders", f)] + ([("null pairs", f["null"])] if f.get("null") else [])
    heads = [s["lenses"]["alpha"]["heads"] for _, s in sets]
    top = 1 + max(max(*h["follows"], *h["opposes"], h["null_max_follows"]) for h in heads)
    panels = []
    for (title, _), h in zip(sets, heads):
        points = alt.Chart(_rows(_head_points(h))).mark_point(filled=True, opacity=0.75).encode(
            x=alt.X("opposes:Q", title="pairs: winner changes against the reader", scale=alt.Scale(domain=[0, top])),
            y=alt.Y("follows:Q", title="pairs: winner changes with the reader", scale=alt.Scale(domain=[0, top])),
            size=alt.Size("n_heads:Q", title="heads", scale=alt.Scale(range=[30, 400])),
            color=alt.Color("test:N", title=None, scale=alt.Scale(domain=list(PASSES)), legend=alt.Legend(orient="bottom")),
            shape=alt.Shape("test:N", title=None, scale=alt.Scale(domain=list(PASSES))),  # not by colour alone
            tooltip=["heads:N", "follows:Q", "opposes:Q", "test:N"],
        )
        diagonal = alt.Chart(_rows([{"v": 0}, {"v": top}])).mark_line(color="gray", strokeDash=[2, 2]).encode(
            x="v:Q", y="v:Q")
        null = alt.Chart(_rows([{"y": h["null_max_follows"]}])).mark_rule(
            color="firebrick", strokeDash=[6, 3]).encode(y="y:Q")
        panels.append(alt.layer(diagonal, null, points, title=title).properties(width=WIDTH * 0.46, height=WIDTH * 0.46))
    return alt.hconcat(*panels)


def flip_sets(results: dict):
    """Per model and set of pairs: the share of (pair, head) cases whose preference moved
    toward the reader, and the share of sentences whose pronoun's final state is nearer the
    reader's noun, each with its interval; one half is what a referent-blind model gives."""
    alt = _alt()
    data = []
    for key, m in results["models"].items():
        for name, label in FLIP_SETS.items():
            s = flip_set(m["flips"], name)
            a = s["lenses"]["alpha"]
            for measure, (v, lo, hi) in (("heads: moved toward the reader", (a["toward_share"], a["toward_share_lo"], a["toward_share_hi"])),
                                         ("final state: nearer the reader's noun", (s["model_follows"], s["model_follows_lo"], s["model_follows_hi"]))):
                data.append({"model": _name(results, key), "set": label, "measure": measure,
                             "share": round(v, 4), "lo": round(lo, 4), "hi": round(hi, 4)})
    base = alt.Chart(_rows(data))
    y = alt.Y("set:N", title=None, sort=list(FLIP_SETS.values()))
    lo, hi = min(d["lo"] for d in data), max(d["hi"] for d in data)
    domain = [min(0.4, math.floor(lo * 10) / 10), max(0.6, math.ceil(hi * 10) / 10)]   # tenths, one half inside
    x = lambda field: alt.X(field, title="share", scale=alt.Scale(domain=domain, zero=False), axis=alt.Axis(format="%"))
    bars = base.mark_rule(strokeWidth=2).encode(x=x("lo:Q"), x2="hi:Q", y=y, yOffset="measure:N",
                                                color=alt.Color("measure:N", legend=None))
    dots = base.mark_point(filled=True, size=60).encode(
        x=x("share:Q"), y=y, yOffset="measure:N",
        color=alt.Color("measure:N", title=None, legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("measure:N", title=None),
        tooltip=["model:N", "set:N", "measure:N", alt.Tooltip("share:Q", format=".1%"),
                 alt.Tooltip("lo:Q", format=".1%"), alt.Tooltip("hi:Q", format=".1%")],
    )
    half = alt.Chart(_rows([{"x": 0.5}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x=x("x:Q"))
    names = dict.fromkeys(d["model"] for d in data)
    return alt.vconcat(*[alt.layer(half, bars.transform_filter(alt.datum.model == name),
                                   dots.transform_filter(alt.datum.model == name), title=name).properties(width=WIDTH, height=200)
                         for name in names])


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
    points = alt.Chart(_rows(data)).mark_point(filled=True, size=45).encode(
        x=alt.X("a:Q", title="preference in sentence A", scale=alt.Scale(domain=[-lim, lim])),
        y=alt.Y("b:Q", title="preference in sentence B", scale=alt.Scale(domain=[-lim, lim])),
        color=alt.Color("layer:N", title=None), shape=alt.Shape("layer:N", title=None),
        tooltip=["head:N", alt.Tooltip("a:Q", format=".3f"), alt.Tooltip("b:Q", format=".3f")],
    )
    diagonal = alt.Chart(_rows([{"v": -lim}, {"v": lim}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
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
    return alt.Chart(_rows(data)).mark_bar().encode(
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
    """The wrong-aggregation mutant against the instrument: each displayed row's sink share,
    over the whole corpus (as the mutant's table counts them: no choice is fitted here)."""
    alt = _alt()
    m = results["models"][model]
    # Short field names and the label made in the browser: every row of the corpus rides inline.
    data = [
        {"right": round(r["sink_share"], 4), "wrong": round(r["wrong_sink_share"], 4), "row_sum": round(r["wrong_row_sum"], 4),
         "word": r["word"], "n": r["n_subwords"], "sentence": r["sentence"]}
        for r in m["mutant"]["wrong_agg"]["rows"]
    ]
    top = max(1.0, *(d["wrong"] for d in data))
    points = alt.Chart(_rows(data)).transform_calculate(
        subwords="datum.n == 1 ? 'one subword' : 'several subwords'"
    ).mark_point(filled=True, opacity=0.5, size=25).encode(
        x=alt.X("right:Q", title="sink share, instrument (mean rows, sum columns)", axis=alt.Axis(format="%")),
        y=alt.Y("wrong:Q", title="sink share, mutant (sum rows, mean columns)", axis=alt.Axis(format="%")),
        color=alt.Color("subwords:N", title="from-word"),
        shape=alt.Shape("subwords:N", title="from-word"),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("right:Q", format=".1%"), alt.Tooltip("wrong:Q", format=".1%"),
                 alt.Tooltip("row_sum:Q", format=".3f", title="mutant row sums to")],
    )
    diagonal = alt.Chart(_rows([{"a": 0.0}, {"a": top}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


# -- part 8: the ground truth and the later fixes (model/truth.py) -------------------------------

FIX_NAMES = {"kobayashi2021": "ATB+RES+LN", "alti": "ALTI", "value_zeroing": "value zeroing"}
# Lazy scores that know only where the word is (model/truth.py, added after the sceptical reading)
BASELINE_NAMES = {"position": "baseline: position", "first_word": "baseline: first word"}


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
    points = alt.Chart(_rows(data)).mark_point(opacity=0.45, size=16).encode(
        x=alt.X("sink:Q", title="sink share of the row (attention, registered)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        y=alt.Y("truth:Q", title="ablation sink share (what the sink does to the word)", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        color=alt.Color("harmful:N", title=None), shape=alt.Shape("harmful:N", title=None),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("sink:Q", format=".1%"), alt.Tooltip("truth:Q", format=".1%")],
    )
    diagonal = alt.Chart(_rows([{"a": 0.0}, {"a": 1.0}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
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
        bars = alt.Chart(_rows(data), title=name).mark_bar(opacity=0.6).encode(
            x=alt.X("from:Q", bin="binned", title="sink share of the row", axis=alt.Axis(format="%"),
                    scale=alt.Scale(domain=[0, 1])),
            x2="to:Q",
            y=alt.Y("rows:Q", title="rows", stack=None),
            color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["view:N", alt.Tooltip("from:Q", format=".0%"), "rows:Q"],
        )
        rule = alt.Chart(_rows([{"x": 0.5}])).mark_rule(color="firebrick", strokeDash=[2, 2]).encode(x="x:Q")
        panels.append(alt.layer(bars, rule).properties(width=WIDTH, height=100))
    return alt.vconcat(*panels)


def tracking_chart(results: dict):
    """Per model and reading: the rank correlation of its sink share with the ablation sink
    share, with its interval (held-out rows), and the same for the position baselines."""
    alt = _alt()
    labels = {**LENS_LABELS, **FIX_NAMES, **BASELINE_NAMES}
    data = [{"model": _name(results, k), "reading": labels[lens], "rho": t["spearman"], "lo": t["spearman_lo"],
             "hi": t["spearman_hi"]}
            for k, m in results["models"].items() for lens, t in m["ground_truth"]["tracking"].items()
            if t["spearman"] is not None]
    base = alt.Chart(_rows(data))
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
    zero = alt.Chart(_rows([{"x": 0.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="x:Q")
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
    bars = alt.Chart(_rows(binned)).mark_bar(opacity=0.6).encode(
        x=alt.X("from:Q", bin="binned", title="log₂ of the head's bound over the word's median head's"),
        x2="to:Q",
        y=alt.Y("share:Q", title="share of the rows", stack=None, axis=alt.Axis(format="%")),
        color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["view:N", alt.Tooltip("from:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
    )
    one = alt.Chart(_rows([{"x": 0.0}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="x:Q")
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
        "panel per lens; each bar counts the rows in a 5-point band of sink share, on a logarithmic count "
        "axis so that the few rows in the tail show.",
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
        f"{_name(results, k)}: full rows median {num(f'{k}.rollout.median_entropy', 'fixed:3')} (against "
        f"{num(f'{k}.rollout.one_clear_word_entropy_full', 'fixed:3')} for a row of their length with half its "
        f"weight on one word), displayed rows median {num(f'{k}.rollout.displayed_median_entropy', 'fixed:3')} "
        f"(against {num(f'{k}.rollout.one_clear_word_entropy', 'fixed:3')})"
        for k in results["models"]
    )
    return Words(
        "Normalized entropy of the rollout rows, one panel per model: the full row, and the row as the "
        "instrument displays it (the other words only, renormalized); 1 is spread evenly. Each dashed "
        "line, in its view's colour, is a row of that view's typical length with half its weight on one word.",
        f"Overlaid histograms of normalized entropy from 0.4 to 1. {per_model}.",
    )


def punct_vs_sink_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{_name(results, k)}: {num(f'{k}.alpha.above_50_share', 'pct:1')} on [CLS] + [SEP], "
        f"{num(f'{k}.alpha.punct_above_50_share', 'pct:1')} on punctuation"
        for k in results["models"]
    )
    return Words(
        "The tail of each sink, per model: the share of held-out displayed rows (α) that give more than half of "
        "their weight to [CLS] and [SEP], and the share that give more than half to punctuation, with "
        f"{num('bootstrap.level', 'pct:0')} intervals over sentences.",
        f"Horizontal bars, one panel per model. {per_model}.",
    )


def rule_layers_words(results: dict, num: Num, model: str) -> Words:
    m = results["models"][model]
    medians = {s["layer"]: s["stats"]["median_sink"] for s in m["per_layer"] if s["lens"] == "alpha"}
    lo, hi = min(medians, key=medians.get), max(medians, key=medians.get)
    picks = m["summary"]["alpha"]["layer_picks"]
    most = max(range(len(picks)), key=picks.__getitem__)
    return Words(
        f"Where the sink sits and where the head rule looks, layer by layer in {_name(results, model)} (held-out "
        "half, α): above, the median sink share of every head's rows for the shown words; below, how many "
        "displayed rows the rule opens in that layer.",
        f"Two bar charts over {num(f'{model}.n_layers', 'int')} layers numbered from 0. The median sink share is "
        f"lowest in layer {lo} ({num(f'{model}.layer{lo}.alpha.median_sink', 'pct:1')}) and highest in layer {hi} "
        f"({num(f'{model}.layer{hi}.alpha.median_sink', 'pct:1')}); the rule opens layer {most} most often "
        f"({num(f'{model}.alpha.picks.layer{most}', 'int')} of {num(f'{model}.alpha.n_rows', 'int')} rows).",
    )


def survival_prediction_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{_name(results, k)}: {num(f'{k}.value_norm.above_50_predicted_above_50', 'int')} of the "
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


def sensitivity_words(results: dict, num: Num) -> Words:
    lens = results["stop_rule"]["lenses"][0]
    def model_words(k: str, m: dict) -> str:
        adopted = [_variant_label(v) for v in m["sensitivity"] if v["adopted"]]
        return (f"{_name(results, k)}: {num(f'{k}.sens.registered.{lens}.rows_above', 'int')} rows under the registered "
                f"rule, from {num(f'{k}.sens.{_fewest(m, lens)}.{lens}.rows_above', 'int')} to "
                f"{num(f'{k}.sens.{_most(m, lens)}.{lens}.rows_above', 'int')} under the alternatives; "
                + (f"adopted only under: {', '.join(adopted)}" if adopted else "adopted under none"))

    passing = "; ".join(model_words(k, m) for k, m in results["models"].items())
    return Words(
        f"The stop rule's count under each alternative choice: displayed rows of the whole corpus above half under "
        f"{LENS_LABELS[lens]}, one row per choice, one colour per model, on a symmetric log scale. The rule adopts "
        "a lens only at zero (the red line); the registered choice stays the verdict.",
        f"Dot plot of {len(results['models'][next(iter(results['models']))]['sensitivity'])} choices for each of "
        f"{num('n_models', 'int')} models. {passing}.",
    )


def rollout_baselines_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{_name(results, k)}: the word's own row {num(f'{k}.rollout.agrees_with_instrument', 'pct:1')}, the best "
        f"lazy guess ({ROLLOUT_GUESSES['baseline_' + results['models'][k]['rollout']['best_baseline']][0]}) "
        f"{num(f'{k}.rollout.baseline_' + results['models'][k]['rollout']['best_baseline'], 'pct:1')}, a random word "
        f"{num(f'{k}.rollout.chance_agreement', 'pct:1')}"
        for k in results["models"]
    )
    return Words(
        "How often each guess names the top word of the row the instrument shows (α, on the head it opens): the "
        "word's own rollout row, three lazy guesses that are the same or nearly for every word of a sentence (its last punctuation "
        "mark, another word's rollout row, the sentence's mean rollout row), two positional ones (the next word, the "
        "previous word) and a word drawn at random; one panel "
        f"per model, held-out rows, black lines the {num('bootstrap.level', 'pct:0')} intervals over sentences.",
        f"Horizontal bar charts, shares from 0 % to 100 %. {per_model}.",
    )


def flip_shift_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.flip"
    return Words(
        f"One dot per minimal pair ({_name(results, model)}, α), the pairs as first written and their mirrors "
        "(the nouns named in the other order) told apart: the share of heads, layer 0 left out, whose "
        "preference between the two candidates moved the way the reader's did. The dashed line is 50 %: "
        "what heads that react to the changed word but not to the referent would give on average.",
        f"Dot plot of {num(f'{p}.alpha.n_pairs', 'int')} pairs, shares from 0 % to 100 %. Over all pairs and heads "
        f"{num(f'{p}.alpha.toward_share', 'pct:1')} moved toward the reader: "
        f"{num(f'{p}.original.alpha.toward_share', 'pct:1')} in the pairs as first written, "
        f"{num(f'{p}.mirrored.alpha.toward_share', 'pct:1')} in their mirrors.",
    )


def flip_heads_words(results: dict, num: Num, model: str) -> Words:
    p, n = f"{model}.flip.alpha.heads", f"{model}.flip.null.alpha.heads"
    return Words(
        f"Every head of {_name(results, model)} outside layer 0, on the flip pairs (both orders, left) and on "
        "the null pairs, where “it” refers to neither noun (right): across, the pairs in which its winner "
        "changes against the reader; up, those in which it changes with the reader. Heads with the same counts "
        "share one point, sized by their number. Marked: the heads that pass the one-sided sign test after "
        "the Bonferroni correction. The grey diagonal is as often with the reader as against; the red dashed "
        "line is the 95th percentile of the largest count with the reader when each pair's two sentences are "
        "swapped at random.",
        f"Two scatter plots of {num(f'{p}.family', 'int')} heads each. On the flip pairs "
        f"{num(f'{p}.n_significant', 'int')} heads pass the corrected test; the head with the smallest uncorrected p, "
        f"{num(f'{p}.best', 'text')}, "
        f"changes with the reader in {num(f'{p}.best_follows', 'int')} pairs and against it in "
        f"{num(f'{p}.best_opposes', 'int')} (corrected p = {num(f'{p}.best_p_corrected', 'sci:1')}); the largest "
        f"count with the reader is {num(f'{model}.flip.alpha.most_pairs_followed', 'int')}, against "
        f"{num(f'{p}.null_max_follows', 'fixed:0')} under the swap. On the null pairs "
        f"{num(f'{n}.n_significant', 'int')} heads pass, and the largest count is "
        f"{num(f'{model}.flip.null.alpha.most_pairs_followed', 'int')}, against {num(f'{n}.null_max_follows', 'fixed:0')}.",
    )


def flip_sets_words(results: dict, num: Num) -> Words:
    def model_words(k: str) -> str:
        share = lambda s, key: num(f"{k}.flip{s}.{key}", "pct:1")
        return (f"{_name(results, k)}: heads {share('', 'alpha.toward_share')} on the flip pairs "
                f"({share('.original', 'alpha.toward_share')} as first written, {share('.mirrored', 'alpha.toward_share')} "
                f"mirrored) and {share('.null', 'alpha.toward_share')} on the null pairs; final state "
                f"{share('', 'model_follows')} and {share('.null', 'model_follows')}")

    return Words(
        "For each model and set of pairs: the share of (pair, head) cases, layer 0 left out, whose preference "
        "moved toward the reader's noun (heads), and the share of sentences whose pronoun's final state is "
        f"nearer the reader's noun by cosine (final state), each with its {num('bootstrap.level', 'pct:0')} "
        "interval over pairs. On the null pairs the “reader's noun” is the one of the pair whose frame they "
        "share. The dashed line is one half.",
        "Dot plot with interval bars, one panel per model. "
        + "; ".join(model_words(k) for k in results["models"]) + ".",
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
        f"Each displayed row of {_name(results, model)} over the whole corpus (α): its sink share as the instrument folds "
        "subwords (across) and as the wrong-aggregation mutant does (up). One-subword words sit on the "
        "diagonal; words of several subwords leave it.",
        f"Scatter plot of {num(f'{p}.n_rows', 'int')} rows. The mutant changes the sink share of {num(f'{p}.rows_differ', 'int')} of the "
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
        f"Scatter plot of {num(f'{p}.n_rows', 'int')} rows, both axes from 0 % to 100 %. The median sampled row gives the sink "
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
    "flip_heads": (flip_heads, ("model",)),
    "flip_sets": (flip_sets, ()),
    "row_example": (row_example, ("model", "name")),
    "rollout_example": (rollout_example, ("model",)),
    "depth_ratio": (depth_ratio, ()),
    "depth_sink": (depth_sink, ()),
    "rollout_views": (rollout_views, ()),
    "survival_prediction": (survival_prediction, ()),
    "sensitivity": (sensitivity, ()),
    "punct_vs_sink": (punct_vs_sink, ()),
    "rule_layers": (rule_layers, ("model",)),
    "rollout_baselines": (rollout_baselines, ()),
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
    "flip_heads": flip_heads_words,
    "flip_sets": flip_sets_words,
    "row_example": row_example_words,
    "rollout_example": rollout_example_words,
    "depth_ratio": depth_ratio_words,
    "depth_sink": depth_sink_words,
    "rollout_views": rollout_views_words,
    "survival_prediction": survival_prediction_words,
    "sensitivity": sensitivity_words,
    "punct_vs_sink": punct_vs_sink_words,
    "rule_layers": rule_layers_words,
    "rollout_baselines": rollout_baselines_words,
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


def sources(paths: set[str]) -> list[str]:
    """Recorded paths, each under its model and section (`models.l6.rows.alpha.sink_share`
    -> `models.l6.rows`), sorted."""
    out = set()
    for path in paths:
        parts = path.split(".")
        out.add(".".join(parts[:3]) if parts[0] == "models" else ".".join(parts[:2]))
    return sorted(out)


def build(results: dict, chart_id: str, validate: bool = False, reads: set[str] | None = None) -> dict:
    """The chart's Vega-Lite spec, its fields checked against its data. Altair's schema
    validation triples the cost of the data-heavy charts, so the build skips it; the
    test suite builds every real chart with it (validate=True). With a `reads` set, the
    paths of the results entries the builder read are added to it."""
    name, kwargs = _parse(results, chart_id)
    source = results if reads is None else _Reads(results, "", reads)
    datasets: dict[str, list] = {}
    token = _DATASETS.set(None if validate else datasets)
    try:
        spec = CHARTS[name][0](source, **kwargs).to_dict(validate=validate)
    finally:
        _DATASETS.reset(token)
    if datasets:
        spec["datasets"] = {**spec.get("datasets", {}), **datasets}
    check_fields(chart_id, spec)
    return spec


@timing.stage("charts")
def build_all(results: dict) -> dict[str, dict]:
    """{"specs": chart id -> spec, "sources": chart id -> the results entries it was drawn from}."""
    specs, drawn_from = {}, {}
    for cid in chart_ids(results):
        reads: set[str] = set()
        specs[cid] = build(results, cid, reads=reads)
        drawn_from[cid] = sources(reads)
    return {"specs": specs, "sources": drawn_from}
