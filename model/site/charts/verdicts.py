"""The verdicts at a glance (Parts 9 and 10): every reading's precision and recall on every model
and corpus, each with its interval, against the registered bar, and each bound's verdict (clears,
misses, undetermined: model/mean_ablation/bounds.py). Part 9's: the registered word truth, its
bootstrap intervals, the verdicts read with the bounds no seed decides (its amendment); Part
10's: the mean-ablation truth, from the lower bound printed to the estimate.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers them
with the arguments a page passes."""
from __future__ import annotations

from livenumbers.charts import Chart, Num, Words, altair, dataset

from .common import model_name

# The readings a verdict is read on (model/mean_ablation/run.py READINGS), as the pages name them
READINGS = {"alpha": "α", "value_norm_on_alpha": "‖α v‖", "output_norm_on_alpha": "‖α f(x)‖",
            "kobayashi2021": "ATB+RES+LN", "alti": "ALTI"}
CORPORA = {"corpus": "corpus.tsv, held out", "confirmation": "confirmation (WordNet)",
           "fresh": "fresh (Python docs)"}
STATS = {"precision": "precision", "recall": "recall"}
PARTS = ("part9", "part10")


def _points(results: dict, part: str) -> list[dict]:
    """One point per model, corpus, reading and statistic: its value, interval and verdict."""
    out = []
    for key, m in results["models"].items():
        cal = m.get("calibration") or {}
        ma = cal.get("mean_ablation") or {}
        truth = "word" if part == "part9" else "mean"
        per_corpus = (ma.get(truth) or {}).get("sets", {})
        for corpus, scores in per_corpus.items():
            for reading, s in scores.items():
                registered = cal["sets"][corpus]["truths"]["word"][reading] if part == "part9" else None
                for stat in STATS:
                    value = s[stat]
                    if value is None:
                        continue
                    lo, hi = ((registered[f"{stat}_lo"], registered[f"{stat}_hi"]) if registered
                              else (s[f"{stat}_lo"], value))
                    out.append({"model": model_name(results, key), "corpus": CORPORA[corpus], "reading": READINGS[reading],
                                "statistic": STATS[stat], "value": round(value, 4), "lo": round(lo, 4), "hi": round(hi, 4),
                                "verdict": s[f"{stat}_verdict"]})
    return out


def verdict_chart(results: dict, part: str):
    """Per model (rows) and corpus (columns): each reading's precision and recall, its interval,
    the bar, and the shape of each bound's verdict."""
    alt = altair()
    data = _points(results, part)
    bar = results["calibration"]["precision_lo"]
    base = alt.Chart().encode(
        y=alt.Y("reading:N", title=None, sort=list(READINGS.values())),
        yOffset=alt.YOffset("statistic:N", sort=list(STATS.values())),
        color=alt.Color("statistic:N", title=None, legend=alt.Legend(orient="bottom")),
    )
    span = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("lo:Q", title="share of the rows", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        x2="hi:Q")
    point = base.mark_point(filled=True, size=40).encode(
        x="value:Q",
        shape=alt.Shape("verdict:N", title="bound against the bar", legend=alt.Legend(orient="bottom")),
        tooltip=["reading:N", "statistic:N", alt.Tooltip("value:Q", format=".0%", title="estimate"),
                 alt.Tooltip("lo:Q", format=".0%", title="interval from"), alt.Tooltip("hi:Q", format=".0%", title="interval to"),
                 alt.Tooltip("verdict:N", title="bound against the bar")])
    rule = alt.Chart().mark_rule(color="firebrick", strokeDash=[3, 3]).encode(x=alt.datum(bar))
    return alt.layer(span, point, rule, data=dataset(data)).properties(width=170, height=130).facet(
        row=alt.Row("model:N", title=None), column=alt.Column("corpus:N", title=None, sort=list(CORPORA.values())))


def verdict_chart_words(results: dict, num: Num, part: str) -> Words:
    truth = ("the registered word truth (zero ablation), with its bootstrap intervals" if part == "part9"
             else "the mean-ablation truth, from the lower bound to the estimate")
    models = ", ".join(num.data(model_name(results, k)) for k in results["models"])
    return Words(
        f"Each reading's precision and recall against {truth}, per model (rows) and corpus (columns). The dashed line "
        f"is the registered bar, {num('calibration.precision_lo', 'pct:0')}; a mark's shape says whether its lower bound "
        "clears the bar, misses it or is undetermined (within the bound's Monte Carlo margin of the bar).",
        f"Dot-and-interval chart for {models}: for every reading, its precision and its recall, each a dot with a "
        f"line for its interval, against a dashed line at {num('calibration.precision_lo', 'pct:0')}. The verdicts "
        "they add up to are in the table beside it.",
    )


CHARTS = {
    "verdict_chart": Chart(verdict_chart, verdict_chart_words, ("part",)),
}
