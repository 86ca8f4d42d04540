"""Tables of the norm lens (Part 2): the value-norm ratios, the rows that stay above half and the formula's prediction for them, depth, the verdicts, the sensitivity rows.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table

from ...instrument import LENS_LABELS
from ...stats import CLS_LONG
from .common import ABOVE_HALF, ci_cell, ci_label, model_name, row_link


def ratios(r, model: str) -> str:
    """Special tokens' value (and output) norms over the mean content token's."""
    rows = []
    for token, label in (("cls", "[CLS]"), ("sep", "[SEP]"), ("punct", "punctuation")):
        for vector, vlabel in (("v", "‖v‖"), ("f", "‖f(x)‖")):
            p = f"{model}.ratio.{token}_{vector}"
            rows.append([label, vlabel, r.cite(f"{p}.median", "ratio:2"), ci_cell(r, f"{p}.median", "ratio:2"),
                         r.cite(f"{p}.below_1_share", "pct:1"), ci_cell(r, f"{p}.below_1_share", "pct:1")])
    return md_table(["Token", "Norm", "Median ratio", ci_label(r), "Sentence × head pairs below 1.0", ci_label(r)], rows)


def ratios_by_layer(r, model: str) -> str:
    L = r.numbers[f"{model}.n_layers"]
    rows = []
    for layer in range(L):
        p = f"{model}.layer{layer}.ratio"
        rows.append([str(layer)] + [r.cite(f"{p}.{t}.median", "ratio:2") for t in ("cls_v", "sep_v", "cls_f", "sep_f")]
                    + [f"{r.cite(f'{model}.layer{layer}.heads_cls_long', 'int')} of {r.cite(f'{model}.n_heads', 'int')}"])
    return md_table(["Layer", "[CLS] ‖v‖", "[SEP] ‖v‖", "[CLS] ‖f‖", "[SEP] ‖f‖",
                     f"Heads whose median [CLS] ‖v‖ ratio is above {CLS_LONG:.2f}×"], rows)


def survivors(r, model: str, lens: str = "value_norm") -> str:
    """The held-out rows still above half under a norm lens, and the formula's prediction
    for each (measure.predicted_sink), with its head's own [CLS] discount."""
    rows_ = r.results["models"][model]["rows"]
    test = set(r.results["models"][model]["halves"]["test"])
    vec = "v" if lens == "value_norm" else "f"
    out = []
    for i, (s, w) in enumerate(zip(rows_["sentence"], rows_["word_index"])):
        if s not in test or rows_[lens]["sink_share"][i] <= 0.5:
            continue
        p = f"{model}.row.s{s}.w{w}"
        l, h = rows_[lens]["layer"][i], rows_[lens]["head"][i]
        out.append([
            row_link(r, model, s, w, lens), r.cite(f"{p}.alpha.word", "text"),
            f"L{r.cite(f'{p}.{lens}.layer', 'int')}H{r.cite(f'{p}.{lens}.head', 'int')}",
            r.cite(f"{model}.headratio.l{l}h{h}.cls_{vec}", "ratio:2"),
            r.cite(f"{p}.{lens}.predicted_sink", "pct:1"), r.cite(f"{p}.{lens}.sink_share", "pct:1"),
        ])
    return md_table(["Sentence", "Word", "Head", "Head's median [CLS] ratio", "Predicted sink share",
                     f"Sink share under {LENS_LABELS[lens]}"], out,
                    summary=f"The {len(out)} held-out rows above 50 % under {LENS_LABELS[lens]}")


def survivor_heads(r, model: str, lens: str = "value_norm") -> str:
    """The heads that hold the rows still above half, against the median head."""
    vec = "v" if lens == "value_norm" else "f"
    p = f"{model}.{lens}"
    rows = []
    for i in range(r.numbers[f"{p}.n_above_50_heads"]):
        l, h = r.numbers[f"{p}.above_50_head{i}.layer"], r.numbers[f"{p}.above_50_head{i}.head"]
        rows.append([f"L{r.cite(f'{p}.above_50_head{i}.layer', 'int')}H{r.cite(f'{p}.above_50_head{i}.head', 'int')}",
                     r.cite(f"{p}.above_50_head{i}.rows", "int"),
                     r.cite(f"{model}.headratio.l{l}h{h}.cls_{vec}", "ratio:2"),
                     r.cite(f"{model}.headratio.l{l}h{h}.sep_{vec}", "ratio:2")])
    rows.append(["every head, every held-out sentence (median)", "—", r.cite(f"{model}.ratio.cls_{vec}.median", "ratio:2"),
                 r.cite(f"{model}.ratio.sep_{vec}.median", "ratio:2")])
    return md_table(["Head", "Rows above 50 %", "[CLS] ratio (median)", "[SEP] ratio (median)"], rows)


def depth(r) -> str:
    """Models side by side: the norm-lens article's numbers per model (held-out half)."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.{k}", fmt)
        rows.append([
            model_name(r, key), c("alpha.all_heads_median_sink", "pct:1"), c("alpha.median_sink", "pct:1"),
            c("value_norm.median_sink", "pct:1"), c("alpha.above_50_share", "pct:1"), c("value_norm.above_50_share", "pct:1"),
            c("ratio.cls_v.median", "ratio:2"), c("ratio.sep_v.median", "ratio:2"), c("alpha.median_punct", "pct:1"),
            c("adopted", "yesno"),
        ])
    head = ["Model", "Median α, every head", "Median α, displayed", "Median ‖αv‖, displayed", f"{ABOVE_HALF} α",
            f"{ABOVE_HALF} ‖αv‖",
            "[CLS] ‖v‖ ratio", "[SEP] ‖v‖ ratio", "Median punctuation α", "Adopted"]
    return md_table(head, rows)


def verdicts(r) -> str:
    """The stop rule, as written, on every displayed row of every model."""
    rows = []
    for key in r.results["models"]:
        for lens in r.results["stop_rule"]["lenses"]:
            p = f"{key}.verdict.{lens}"
            rows.append([model_name(r, key), LENS_LABELS[lens], r.cite(f"{p}.rows_above", "int"),
                         r.cite(f"{p}.n_rows", "int"), r.cite(f"{p}.share_above", "pct:1"),
                         "adopted" if r.numbers[f"{p}.adopted"] else "not adopted"])
    return md_table(["Model", "Lens", "Rows above the threshold", "Displayed rows", "Share", "Verdict"], rows)


def _choice(r, model: str, v: dict) -> str:
    """A sensitivity variant in words, its values cited (model/sensitivity.py)."""
    p = f"{model}.sens.{v['id']}"
    if v["choice"] == "registered":
        return (f"**registered**: positional above {r.cite('positional_threshold', 'pct:0')}, ties within "
                f"{r.cite('tie_tolerance', 'fixed:3')}, strongest arrow")
    if v["choice"] == "positional_threshold":
        none = " (no head excluded)" if r.numbers[f"{p}.value"] >= 1 else ""
        return f"positional threshold {r.cite(f'{p}.value', 'pct:0')}{none}"
    if v["choice"] == "tie_tolerance":
        exact = " (exact ties only)" if r.numbers[f"{p}.value"] == 0 else ""
        return f"tie tolerance {r.cite(f'{p}.value', 'fixed:3')}{exact}"
    if v["value"] == "largest_content_mass":
        return "head rule: the most content (the least sink)"
    if v["value"] == "one_head_for_all":
        lens = LENS_LABELS[r.results["stop_rule"]["lenses"][0]]  # each lens has its own; the table shows this one's
        return f"head rule: one head for every word (under {lens}: L{r.cite(f'{p}.layer', 'int')}H{r.cite(f'{p}.head', 'int')})"
    if v["choice"] == "punctuation_as_sink":
        return "punctuation counted as sink"
    raise ValueError(f"sensitivity variant {v['id']!r} has no words in tables._choice")


def sensitivity(r, model: str) -> str:
    """The headline numbers and the stop rule's verdict under each alternative choice; the
    registered rule (first row) stays the verdict."""
    lenses = r.results["stop_rule"]["lenses"]
    first = lenses[0]
    rows = []
    for v in r.results["models"][model]["sensitivity"]:
        p = f"{model}.sens.{v['id']}"
        rows.append([_choice(r, model, v), r.cite(f"{p}.alpha.median_sink", "pct:1"), r.cite(f"{p}.{first}.median_sink", "pct:1"),
                     r.cite(f"{p}.{first}.above_50_share", "pct:1"),
                     *[r.cite(f"{p}.{lens}.rows_above_share", "pct:1") for lens in lenses], r.cite(f"{p}.adopted", "yesno")])
    # Shares of the rows: a count moves by one where a row's head choice is a near-tie that
    # another machine's rounding decides the other way (model/picks.py); the verdict reads
    # whether any row is above, which one row cannot turn unless the count is 0 or 1.
    head = (["Choice", "Median sink α", f"Median sink {LENS_LABELS[first]}", f"Held-out rows > 50 % {LENS_LABELS[first]}"]
            + [f"Rows > 50 %, every row, {LENS_LABELS[lens]}" for lens in lenses] + ["Adopted"])
    return md_table(head, rows)


def sensitivity_survivors(r, model: str) -> str:
    """The held-out rows that stay above half under the first stop-rule lens, under each
    alternative choice: how many, and how long their own [CLS] vector is."""
    lens = r.results["stop_rule"]["lenses"][0]
    rows = []
    for v in r.results["models"][model]["sensitivity"]:
        p = f"{model}.sens.{v['id']}"
        some = r.numbers[f"{p}.survivors"] > 0
        rows.append([_choice(r, model, v), r.cite(f"{p}.{lens}.above_50_share", "pct:1"),
                     r.cite(f"{p}.survivors_median_cls_ratio", "ratio:2") if some else "—",
                     r.cite(f"{p}.survivors_cls_above_half", "pct:0") if some else "—"])
    return md_table(["Choice", f"Held-out rows > 50 % under {LENS_LABELS[lens]}", "Their own [CLS] ratio (median)",
                     "... above 0.5"], rows)


TABLES = {f.__name__: f for f in (ratios, ratios_by_layer, survivors, survivor_heads, depth, verdicts, sensitivity, sensitivity_survivors)}
