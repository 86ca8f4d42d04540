"""Charts of the same wrong idea, twice (Part 5): a deliberately wrong aggregation against
the instrument's.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers
them with the arguments a page passes."""
from __future__ import annotations

from livenumbers.charts import Chart, Num, Words, altair, dataset

from .common import WIDTH, model_name


def mutant_sinks(results: dict, model: str):
    """The wrong-aggregation mutant against the instrument: each displayed row's sink share,
    over the whole corpus (as the mutant's table counts them: no choice is fitted here)."""
    alt = altair()
    m = results["models"][model]
    # Short field names and the label made in the browser: every row of the corpus rides inline.
    data = [
        {"right": round(r["sink_share"], 4), "wrong": round(r["wrong_sink_share"], 4), "row_sum": round(r["wrong_row_sum"], 4),
         "word": r["word"], "n": r["n_subwords"], "sentence": r["sentence"]}
        for r in m["mutant"]["wrong_agg"]["rows"]
    ]
    top = max(1.0, *(d["wrong"] for d in data))
    points = alt.Chart(dataset(data)).transform_calculate(
        subwords="datum.n == 1 ? 'one subword' : 'several subwords'"
    ).mark_point(filled=True, opacity=0.5, size=25).encode(
        x=alt.X("right:Q", title="sink share, instrument (mean rows, sum columns)", axis=alt.Axis(format="%")),
        y=alt.Y("wrong:Q", title="sink share, mutant (sum rows, mean columns)", axis=alt.Axis(format="%")),
        color=alt.Color("subwords:N", title="from-word"),
        shape=alt.Shape("subwords:N", title="from-word"),
        tooltip=["word:N", "sentence:Q", alt.Tooltip("right:Q", format=".1%", title="instrument"),
                 alt.Tooltip("wrong:Q", format=".1%", title="mutant"),
                 alt.Tooltip("row_sum:Q", format=".3f", title="mutant row sums to")],
    )
    diagonal = alt.Chart(dataset([{"a": 0.0}, {"a": top}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="a:Q", y="a:Q"
    )
    return (diagonal + points).properties(width=WIDTH, height=WIDTH * 0.75)


def mutant_sinks_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.mutant.wrong_agg"
    return Words(
        f"Each displayed row of {num.data(model_name(results, model))} over the whole corpus (α): its sink share as the instrument folds "
        "subwords (across) and as the wrong-aggregation mutant does (up). One-subword words sit on the "
        "diagonal; words of several subwords leave it.",
        f"Scatter plot of {num(f'{p}.n_rows', 'int')} rows. The mutant changes the sink share of {num(f'{p}.rows_differ', 'int')} of the "
        f"{num(f'{p}.n_multi_subword', 'int')} rows whose word has several subwords and of "
        f"{num(f'{p}.rows_differ_single', 'int')} one-subword rows; its largest share is "
        f"{num(f'{p}.max_wrong_sink', 'pct:1')}.",
    )


CHARTS = {
    "mutant_sinks": Chart(mutant_sinks, mutant_sinks_words, ("model",)),
}
