"""Charts of attention rollout (Part 3): how flat its rows are, the lazy guesses it must
beat, one word's rollout row beside the instrument's.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers
them with the arguments a page passes."""
from __future__ import annotations

from livenumbers.charts import Chart, Num, Words, altair, dataset

from .common import WIDTH, bin_counts, displayed_row, grouped_bars, interval_tooltip, model_name


# key in a model's rollout results -> (label, kind): the word's own row, then the lazy guesses
# (sentence-wide, then positional, added after the second review's sceptical reading), then chance.
ROLLOUT_GUESSES = {"agrees_with_instrument": ("the word's own rollout row", "rollout, this word"),
                   "baseline_last_punct": ("last punctuation mark", "lazy guess, sentence-wide"),
                   "baseline_other_word": ("another word's rollout row", "lazy guess, sentence-wide"),
                   "baseline_sentence_mean": ("the sentence's mean row", "lazy guess, sentence-wide"),
                   "baseline_next_word": ("the next word", "lazy guess, positional"),
                   "baseline_previous_word": ("the previous word", "lazy guess, positional"),
                   "chance_agreement": ("a word drawn at random", "chance")}


def rollout_views(results: dict):
    """Rollout rows' normalized entropy, full row against the row as displayed, per model;
    the dashed rules are a row of each view's typical length with half its weight on one word."""
    alt = altair()
    panels = []
    for m in results["models"].values():
        name = m["checkpoint"].split("/")[-1]
        data = [{"from": b, "to": round(b + 0.02, 6), "rows": c, "view": view}
                for view, values in (("full row", m["rollout"]["entropies"]),
                                     ("displayed row (other words)", m["rollout"]["displayed_entropies"]))
                for b, c in bin_counts(values, 0.02, 0.4, 1.0)]
        bars = alt.Chart(dataset(data), title=name).mark_bar(opacity=0.7).encode(
            x=alt.X("from:Q", bin="binned", title="normalized entropy (1 = uniform)", scale=alt.Scale(domain=[0.4, 1])),
            x2="to:Q",
            y=alt.Y("rows:Q", title="rows", stack=None),
            color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")),
            tooltip=["view:N", "rows:Q"],
        )
        yardsticks = [{"entropy": m["rollout"]["one_clear_word_entropy_full"], "view": "full row"},
                      {"entropy": m["rollout"]["one_clear_word_entropy"], "view": "displayed row (other words)"}]
        rule = alt.Chart(dataset(yardsticks)).mark_rule(strokeDash=[4, 4]).encode(
            x="entropy:Q", color=alt.Color("view:N", title=None, legend=alt.Legend(orient="bottom")))
        panels.append(alt.layer(bars, rule).properties(width=WIDTH, height=110))
    return alt.vconcat(*panels)


def rollout_views_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{num.data(model_name(results, k))}: full rows median {num(f'{k}.rollout.median_entropy', 'fixed:3')} (against "
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


def rollout_baselines(results: dict):
    """Per model: how often each guess names the instrument's top word, with its interval
    (a random draw has none: it is an expectation)."""
    alt = altair()
    panels = []
    for key, m in results["models"].items():
        ro = m["rollout"]
        data = [{"guess": label, "order": i, "share": ro[k], "lo": ro.get(f"{k}_lo", ro[k]), "hi": ro.get(f"{k}_hi", ro[k]),
                 "kind": kind}
                for i, (k, (label, kind)) in enumerate(ROLLOUT_GUESSES.items())]
        base = alt.Chart(dataset(data), title=model_name(results, key))
        y = alt.Y("guess:N", title=None, sort=alt.EncodingSortField("order"))
        bars = base.mark_bar(opacity=0.8).encode(
            x=alt.X("share:Q", title="rows whose top word is the instrument's", scale=alt.Scale(domain=[0, 1]),
                    axis=alt.Axis(format="%")),
            y=y, color=alt.Color("kind:N", title=None, legend=alt.Legend(orient="bottom"),
                                 sort=list(dict.fromkeys(kind for _, kind in ROLLOUT_GUESSES.values()))),
            tooltip=["guess:N", alt.Tooltip("share:Q", format=".1%"), *interval_tooltip(alt, ".1%")])
        whiskers = base.mark_rule(color="black").encode(x="lo:Q", x2="hi:Q", y=y)
        panels.append(alt.layer(bars, whiskers).properties(width=WIDTH * 0.7, height=150))
    return alt.vconcat(*panels).properties(usermeta={"phrases": ["guess"]})   # the axis's guesses, translated


def rollout_baselines_words(results: dict, num: Num) -> Words:
    per_model = "; ".join(
        f"{num.data(model_name(results, k))}: the word's own row {num(f'{k}.rollout.agrees_with_instrument', 'pct:1')}, the best "
        f"lazy guess ({num.phrase(ROLLOUT_GUESSES['baseline_' + results['models'][k]['rollout']['best_baseline']][0])}) "
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


def rollout_example(results: dict, model: str):
    """The typical row's word: its rollout row as displayed, against the instrument's row."""
    alt = altair()
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == "typical")
    w, K = ex["word_index"], len(ex["columns"])
    data = []
    for view, full in (("rollout, all layers and heads", ex["rollout"]), ("the instrument's row (α)", ex["full"]["alpha"])):
        shown = displayed_row(full, w)
        data += [{"column": f"{k:02d} {c}", "weight": shown[k], "view": view}
                 for k, c in enumerate(ex["columns"]) if 0 < k < K - 1 and k - 1 != w]
    return grouped_bars(alt, data, "displayed weight")


def rollout_example_words(results: dict, num: Num, model: str) -> Words:
    ex = next(e for e in results["models"][model]["examples"] if e["name"] == "typical")
    return Words(
        f"The same word, “{num.data(ex['word'])}”, two ways: its attention-rollout row (all layers and heads of "
        f"{num.data(model_name(results, model))} multiplied out) and the instrument's row on one head, each as displayed "
        "(the other words only, renormalized).",
        f"Grouped bar chart over the other words of “{num.data(results['sentences'][ex['sentence']])}”, one bar for each view "
        f"per word. Over all held-out rows the rollout's displayed rows have a median normalized entropy of "
        f"{num(f'{model}.rollout.displayed_median_entropy', 'fixed:3')} (1 is level).",
    )


CHARTS = {
    "rollout_views": Chart(rollout_views, rollout_views_words),
    "rollout_baselines": Chart(rollout_baselines, rollout_baselines_words),
    "rollout_example": Chart(rollout_example, rollout_example_words, ("model",)),
}
