"""Charts of the adjective flip (Part 4): the shift toward the reader, the per-head sign
tests, the sets of pairs, one pair's weights.

Each builder is followed by its words (caption and text alternative); `CHARTS` registers
them with the arguments a page passes."""
from __future__ import annotations

import math

from livenumbers.charts import Chart, Num, Words, altair, dataset

from ..numbers import FLIP_SETS, flip_set
from .common import WIDTH, interval_tooltip, model_name


ORDER_LABELS = {"original": "as first written", "mirrored": "mirrored"}


PASSES = ("passes the corrected sign test", "does not")


def _head_points(h: dict) -> list[dict]:
    """Heads with the same (follows, opposes, verdict) share one point, sized by their number."""
    points: dict[tuple, list[str]] = {}
    for i, (fo, op) in enumerate(zip(h["follows"], h["opposes"])):
        passes = h["p_corrected"][i] < h["alpha"]
        points.setdefault((fo, op, passes), []).append(f"L{h['layer'][i]}H{h['head'][i]}")
    return [{"follows": fo, "opposes": op, "n_heads": len(names), "test": PASSES[0] if passes else PASSES[1],
             "heads": ", ".join(names[:6]) + (f", +{len(names) - 6}" if len(names) > 6 else "")}
            for (fo, op, passes), names in sorted(points.items())]


def flip_shift(results: dict, model: str):
    """Per pair: the share of heads (layer 0 apart) whose preference moved the reader's way,
    pairs in the order written and mirrored told apart."""
    alt = altair()
    f = results["models"][model]["flips"]["lenses"]["alpha"]
    data = [{"pair": i + 1, "share": p["toward_reader"] / f["n_heads"], "changed": p["changed"],
             "order": ORDER_LABELS[p["order"]], "sentence": p["sentences"][1]} for i, p in enumerate(f["pairs"])]
    dots = alt.Chart(dataset(data)).mark_point(filled=True, size=40, opacity=0.8).encode(
        x=alt.X("pair:O", title="minimal pair", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("share:Q", title="share of heads moving toward the reader", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%")),
        color=alt.Color("order:N", title="nouns named", legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("order:N", title="nouns named"),  # not by colour alone
        tooltip=["pair:Q", alt.Tooltip("order:N", title="nouns named"), "sentence:N", alt.Tooltip("share:Q", format=".0%"),
                 alt.Tooltip("changed:Q", title="heads whose winner changes")],
    )
    half = alt.Chart(dataset([{"y": 0.5}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="y:Q")
    return (half + dots).properties(width=WIDTH, height=220)


def flip_shift_words(results: dict, num: Num, model: str) -> Words:
    p = f"{model}.flip"
    return Words(
        f"One dot per minimal pair ({num.data(model_name(results, model))}, α), the pairs as first written and their mirrors "
        "(the nouns named in the other order) told apart: the share of heads, layer 0 left out, whose "
        "preference between the two candidates moved the way the reader's did. The dashed line is 50 %: "
        "what heads that react to the changed word but not to the referent would give on average.",
        f"Dot plot of {num(f'{p}.alpha.n_pairs', 'int')} pairs, shares from 0 % to 100 %. Over all pairs and heads "
        f"{num(f'{p}.alpha.toward_share', 'pct:1')} moved toward the reader: "
        f"{num(f'{p}.original.alpha.toward_share', 'pct:1')} in the pairs as first written, "
        f"{num(f'{p}.mirrored.alpha.toward_share', 'pct:1')} in their mirrors.",
    )


def flip_heads(results: dict, model: str):
    """Every head outside layer 0: the pairs in which it follows the reader (up) against
    those in which it goes against the reader (across), on the flip pairs (both orders) and
    on the null pairs; heads that pass the corrected sign test are marked. The dashed line is
    the 95th percentile of the largest follow count when each pair's sentences are swapped."""
    alt = altair()
    f = results["models"][model]["flips"]
    sets = [("flip pairs, both orders", f)] + ([("null pairs", f["null"])] if f.get("null") else [])
    heads = [s["lenses"]["alpha"]["heads"] for _, s in sets]
    top = 1 + max(max(*h["follows"], *h["opposes"], h["null_max_follows"]) for h in heads)
    panels = []
    for (title, _), h in zip(sets, heads):
        points = alt.Chart(dataset(_head_points(h))).mark_point(filled=True, opacity=0.75).encode(
            x=alt.X("opposes:Q", title="pairs: winner changes against the reader", scale=alt.Scale(domain=[0, top])),
            y=alt.Y("follows:Q", title="pairs: winner changes with the reader", scale=alt.Scale(domain=[0, top])),
            size=alt.Size("n_heads:Q", title="heads", scale=alt.Scale(range=[30, 400])),
            color=alt.Color("test:N", title=None, scale=alt.Scale(domain=list(PASSES)), legend=alt.Legend(orient="bottom")),
            shape=alt.Shape("test:N", title=None, scale=alt.Scale(domain=list(PASSES))),  # not by colour alone
            tooltip=["heads:N", alt.Tooltip("follows:Q", title="with the reader"),
                     alt.Tooltip("opposes:Q", title="against the reader"), alt.Tooltip("test:N", title="sign test")],
        )
        diagonal = alt.Chart(dataset([{"v": 0}, {"v": top}])).mark_line(color="gray", strokeDash=[2, 2]).encode(
            x="v:Q", y="v:Q")
        null = alt.Chart(dataset([{"y": h["null_max_follows"]}])).mark_rule(
            color="firebrick", strokeDash=[6, 3]).encode(y="y:Q")
        panels.append(alt.layer(diagonal, null, points, title=title).properties(width=WIDTH * 0.46, height=WIDTH * 0.46))
    return alt.hconcat(*panels)


def flip_heads_words(results: dict, num: Num, model: str) -> Words:
    p, n = f"{model}.flip.alpha.heads", f"{model}.flip.null.alpha.heads"
    return Words(
        f"Every head of {num.data(model_name(results, model))} outside layer 0, on the flip pairs (both orders, left) and on "
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


def flip_sets(results: dict):
    """Per model and set of pairs: the share of (pair, head) cases whose preference moved
    toward the reader, and the share of sentences whose pronoun's final state is nearer the
    reader's noun, each with its interval; one half is what a referent-blind model gives."""
    alt = altair()
    data = []
    for key, m in results["models"].items():
        for name, label in FLIP_SETS.items():
            s = flip_set(m["flips"], name)
            a = s["lenses"]["alpha"]
            for measure, (v, lo, hi) in (("heads: moved toward the reader", (a["toward_share"], a["toward_share_lo"], a["toward_share_hi"])),
                                         ("final state: nearer the reader's noun", (s["model_follows"], s["model_follows_lo"], s["model_follows_hi"]))):
                data.append({"model": model_name(results, key), "set": label, "measure": measure,
                             "share": round(v, 4), "lo": round(lo, 4), "hi": round(hi, 4)})
    base = alt.Chart(dataset(data))
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
        tooltip=["model:N", alt.Tooltip("set:N", title="pairs"), "measure:N", alt.Tooltip("share:Q", format=".1%"),
                 *interval_tooltip(alt, ".1%")],
    )
    half = alt.Chart(dataset([{"x": 0.5}])).mark_rule(color="gray", strokeDash=[4, 4]).encode(x=x("x:Q"))
    names = dict.fromkeys(d["model"] for d in data)
    return alt.vconcat(*[alt.layer(half, bars.transform_filter(alt.datum.model == name),
                                   dots.transform_filter(alt.datum.model == name), title=name).properties(width=WIDTH, height=200)
                         for name in names]).properties(usermeta={"phrases": ["set"]})   # the axis's sets, translated


def flip_sets_words(results: dict, num: Num) -> Words:
    def model_words(k: str) -> str:
        share = lambda s, key: num(f"{k}.flip{s}.{key}", "pct:1")
        return (f"{num.data(model_name(results, k))}: heads {share('', 'alpha.toward_share')} on the flip pairs "
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


def flip_example(results: dict, model: str):
    """The first pair, every head: its preference for the second sentence's referent over
    the first's, in sentence A (x) and in sentence B (y). Above the diagonal: moved the
    reader's way. Layer 0 lies on a line through the origin: it cannot change sides."""
    alt = altair()
    m = results["models"][model]
    pair = m["flips"]["lenses"]["alpha"]["pairs"][0]
    ra, rb = (pair["candidates"].index(x) for x in pair["referents"])
    nh = m["n_heads"]
    data = [{"a": w[rb] - w[ra], "b": w[2 + rb] - w[2 + ra], "layer": f"layer {h // nh}" if h // nh == 0 else "layers 1+",
             "head": f"L{h // nh}H{h % nh}"} for h, w in enumerate(m["flips"]["example"])]
    lim = max(1e-6, *(max(abs(d["a"]), abs(d["b"])) for d in data))
    points = alt.Chart(dataset(data)).mark_point(filled=True, size=45).encode(
        x=alt.X("a:Q", title="preference in sentence A", scale=alt.Scale(domain=[-lim, lim])),
        y=alt.Y("b:Q", title="preference in sentence B", scale=alt.Scale(domain=[-lim, lim])),
        color=alt.Color("layer:N", title=None), shape=alt.Shape("layer:N", title=None),
        tooltip=["head:N", alt.Tooltip("a:Q", format=".3f", title="sentence A"),
                 alt.Tooltip("b:Q", format=".3f", title="sentence B")],
    )
    diagonal = alt.Chart(dataset([{"v": -lim}, {"v": lim}])).mark_line(color="gray", strokeDash=[4, 4]).encode(
        x="v:Q", y="v:Q")
    return (diagonal + points).properties(width=WIDTH * 0.7, height=WIDTH * 0.7)


def flip_example_words(results: dict, num: Num, model: str) -> Words:
    pair = results["models"][model]["flips"]["lenses"]["alpha"]["pairs"][0]
    return Words(
        f"The first minimal pair, every head of {num.data(model_name(results, model))}: how much more weight the pronoun puts "
        f"on “{num.data(pair['referents'][1])}” than on “{num.data(pair['referents'][0])}” in sentence A (across) and in sentence B "
        "(up). Above the dashed diagonal: moved the reader's way.",
        f"Scatter plot of {num(f'{model}.n_heads_total', 'int')} heads for the pair “{num.data(pair['sentences'][0])}” / "
        f"“{num.data(pair['sentences'][1])}”: {num(f'{model}.flip.alpha.pair0.toward_reader', 'int')} of "
        f"{num(f'{model}.flip.alpha.n_heads', 'int')} heads outside layer 0 moved toward the reader, and "
        f"{num(f'{model}.flip.alpha.pair0.changed', 'int')} changed which candidate wins.",
    )


CHARTS = {
    "flip_shift": Chart(flip_shift, flip_shift_words, ("model",)),
    "flip_heads": Chart(flip_heads, flip_heads_words, ("model",)),
    "flip_sets": Chart(flip_sets, flip_sets_words),
    "flip_example": Chart(flip_example, flip_example_words, ("model",)),
}
