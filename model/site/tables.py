"""Generated tables. Each takes the page's renderer (`r`) and returns a Markdown table
whose every number goes through `r.cite`, so it is recorded and locked like prose.

One unit per column; intervals (95% bootstrap, over sentences or pairs) in a column of
their own; tables longer than `COLLAPSE` rows are folded into a <details> block.
"""
from __future__ import annotations

import re

from ..instrument import LENS_LABELS, LENSES
from ..stats import CLS_LONG
from .numbers import flip_key, flip_set
from .numbers import md_text as escape  # Markdown-safe, not only HTML-safe: see md_text

# Reference vs oracle differences are float32 rounding noise: they differ from one CPU to
# the next, so they are locked to within the agreement the tests require (numbers.py).
NOISE = "sci:1~1e-5"
COLLAPSE = 30
HALVES = {"test": "held out", "fit": "fitted on", "all": "whole corpus"}


def md_table(header: list[str], rows: list[list[str]], summary: str | None = None) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    table = "\n".join(lines) + "\n"
    if len(rows) > COLLAPSE:
        label = summary or f"{len(rows)} rows"
        return f'\n<details markdown="1">\n<summary>{label}</summary>\n\n{table}\n</details>\n'
    return table


def ci_head(r) -> str:
    """"95% CI", from the study's bootstrap level."""
    return f"{round(r.results['bootstrap']['level'] * 100)}% CI"


def span(lo: str, hi: str) -> str:
    """Two formatted bounds as one range, the unit once: "23.3%", "29.2%" -> "23.3–29.2%";
    "to" when a bound is negative, where a dash would read as a minus: "-24.4 to -19.2 pp"."""
    unit = "%" if hi.endswith("%") else "×" if hi.endswith("×") else " pp" if hi.endswith(" pp") else ""
    return f"{lo.removesuffix(unit)}{' to ' if lo.startswith('-') or hi.startswith('-') else '–'}{hi}"


def _range(r, key: str, fmt: str) -> str:
    """The interval of `key` as one cell: "23.3–29.2%". A share of zero has no bootstrap
    interval worth printing (every resample of a corpus with no such row has none)."""
    if r.numbers[f"{key}_lo"] == r.numbers[f"{key}_hi"] == 0:
        return "none seen"
    return span(r.cite(f"{key}_lo", fmt), r.cite(f"{key}_hi", fmt))


def _model_name(r, model: str) -> str:
    return f"{r.cite(f'{model}.checkpoint', 'text')} ({r.cite(f'{model}.n_layers', 'int')} layers)"


def lens_summary(r, model: str) -> str:
    """The centrepiece: the held-out half's displayed rows under each lens, with intervals."""
    cells = []
    def stat(label, key, fmt, lenses=LENSES, interval=True):
        row = [label]
        for lens in LENSES:
            if lens not in lenses:
                row += ["—", "—"]
                continue
            row.append(r.cite(f"{model}.{lens}.{key}", fmt))
            row.append(_range(r, f"{model}.{lens}.{key}", fmt) if interval else "—")
        cells.append(row)

    stat("Median sink share", "median_sink", "pct:1")
    stat("Worst row", "worst_sink", "pct:1", interval=False)  # a maximum's interval says nothing
    stat("Share of rows above 50 %", "above_50_share", "pct:1")
    stat("Share of rows above 90 %", "above_90_share", "pct:1")
    stat("Share of rows worse than under α", "worse_share", "pct:1", LENSES[1:])
    stat("Share of rows on the same head as α", "same_head_share", "pct:1", LENSES[1:])
    stat("Median punctuation share", "median_punct", "pct:1")
    n = r.cite(f"{model}.alpha.n_rows", "int")
    s = r.cite(f"{model}.n_test_sentences", "int")
    head = [f"{n} rows, {s} held-out sentences"]
    for lens in LENSES:
        head += [LENS_LABELS[lens], ci_head(r)]
    return md_table(head, cells)


def halves(r, model: str) -> str:
    """The head rule is fitted on one half: the headline numbers on both halves."""
    rows = []
    for half, label in HALVES.items():
        p = f"{model}.{half}"
        row = [label, r.cite(f"{model}.n_{half}_sentences" if half != "all" else f"{model}.n_sentences", "int")]
        for lens in LENSES:
            row.append(r.cite(f"{p}.{lens}.median_sink", "pct:1"))
        for lens in LENSES:
            row.append(r.cite(f"{p}.{lens}.above_50_share", "pct:1"))
        rows.append(row)
    head = ["Sentences", "Count"] + [f"median sink {LENS_LABELS[l]}" for l in LENSES] + [f"rows > 50 % {LENS_LABELS[l]}" for l in LENSES]
    return md_table(head, rows)


def halves_intervals(r, model: str) -> str:
    """The two halves' median sink share under α, each with its interval."""
    rows = []
    for half in ("fit", "test"):
        p = f"{model}.{half}.alpha"
        rows.append([HALVES[half], r.cite(f"{p}.median_sink", "pct:1"), _range(r, f"{p}.median_sink", "pct:1"),
                     r.cite(f"{p}.above_50_share", "pct:1"), _range(r, f"{p}.above_50_share", "pct:1")])
    return md_table(["Sentences", "Median sink α", ci_head(r), "Rows > 50 % α", ci_head(r)], rows)


def ratios(r, model: str) -> str:
    """Special tokens' value (and output) norms over the mean content token's."""
    rows = []
    for token, label in (("cls", "[CLS]"), ("sep", "[SEP]"), ("punct", "punctuation")):
        for vector, vlabel in (("v", "‖v‖"), ("f", "‖f(x)‖")):
            p = f"{model}.ratio.{token}_{vector}"
            rows.append([label, vlabel, r.cite(f"{p}.median", "ratio:2"), _range(r, f"{p}.median", "ratio:2"),
                         r.cite(f"{p}.below_1_share", "pct:1"), _range(r, f"{p}.below_1_share", "pct:1")])
    return md_table(["Token", "Norm", "Median ratio", ci_head(r), "Sentence × head pairs below 1.0", ci_head(r)], rows)


def ratios_by_layer(r, model: str) -> str:
    L = r.numbers[f"{model}.n_layers"]
    rows = []
    for layer in range(L):
        p = f"{model}.layer{layer}.ratio"
        rows.append([str(layer)] + [r.cite(f"{p}.{t}.median", "ratio:2") for t in ("cls_v", "sep_v", "cls_f", "sep_f")]
                    + [f"{r.cite(f'{model}.layer{layer}.heads_cls_long', 'int')} of {r.cite(f'{model}.n_heads', 'int')}"])
    return md_table(["Layer", "[CLS] ‖v‖", "[SEP] ‖v‖", "[CLS] ‖f‖", "[SEP] ‖f‖",
                     f"Heads whose median [CLS] ‖v‖ ratio is above {CLS_LONG:.2f}×"], rows)


def per_layer(r, model: str) -> str:
    """The rule-free view: every head's row for every shown word of the held-out half."""
    L = r.numbers[f"{model}.n_layers"]
    rows = []
    for layer in range(L):
        p = f"{model}.layer{layer}"
        rows.append([str(layer)] + [r.cite(f"{p}.{l}.median_sink", "pct:1") for l in LENSES]
                    + [r.cite(f"{p}.{l}.above_50_share", "pct:1") for l in LENSES]
                    + [r.cite(f"{p}.alpha.median_punct", "pct:1")])
    head = (["Layer"] + [f"median {LENS_LABELS[l]}" for l in LENSES] + [f"> 50 % {LENS_LABELS[l]}" for l in LENSES]
            + ["median punctuation α"])
    return md_table(head, rows)


def layer_picks(r, model: str) -> str:
    L = r.numbers[f"{model}.n_layers"]
    # Shares of the rows: a row whose head choice is a near-tie between two layers moves a
    # count by one on a machine that rounds the other way, not a share by a printed digit.
    rows = [[LENS_LABELS[l]] + [r.cite(f"{model}.{l}.picks.layer{i}_share", "pct:1") for i in range(L)] for l in LENSES]
    return md_table(["Lens"] + [f"layer {i}" for i in range(L)], rows)


def _row_link(r, model: str, s: int, w: int, lens: str) -> str:
    sentence = r.results["sentences"][s]
    return f"[{s}]({r.instrument_url(model, s, w, lens)} \"{escape(sentence)}\")"


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
            _row_link(r, model, s, w, lens), r.cite(f"{p}.alpha.word", "text"),
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


def worst_rows(r, model: str, n: int = 20) -> str:
    """The held-out rows with the most sink under α, each under every lens."""
    rows_ = r.results["models"][model]["rows"]
    test = set(r.results["models"][model]["halves"]["test"])
    order = sorted((i for i, s in enumerate(rows_["sentence"]) if s in test), key=lambda i: -rows_["alpha"]["sink_share"][i])
    out = []
    for i in order[:n]:
        s, w = rows_["sentence"][i], rows_["word_index"][i]
        p = f"{model}.row.s{s}.w{w}"
        out.append([_row_link(r, model, s, w, "alpha"), r.cite(f"{p}.alpha.word", "text"),
                    " / ".join(f"L{r.cite(f'{p}.{l}.layer', 'int')}H{r.cite(f'{p}.{l}.head', 'int')}" for l in LENSES),
                    *[r.cite(f"{p}.{l}.sink_share", "pct:1") for l in LENSES],
                    r.cite(f"{p}.alpha.content_mass", "pct:1")])
    return md_table(["Sentence", "Word", "Head (α / ‖αv‖ / ‖αf‖)", "Sink α", "Sink ‖αv‖", "Sink ‖αf‖", "Content mass α"], out)


def depth(r) -> str:
    """Models side by side: the norm-lens article's numbers per model (held-out half)."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.{k}", fmt)
        rows.append([
            _model_name(r, key), c("alpha.all_heads_median_sink", "pct:1"), c("alpha.median_sink", "pct:1"),
            c("value_norm.median_sink", "pct:1"), c("alpha.above_50_share", "pct:1"), c("value_norm.above_50_share", "pct:1"),
            c("ratio.cls_v.median", "ratio:2"), c("ratio.sep_v.median", "ratio:2"), c("alpha.median_punct", "pct:1"),
            c("adopted", "yesno"),
        ])
    head = ["Model", "Median α, every head", "Median α, displayed", "Median ‖αv‖, displayed", "> 50 % α", "> 50 % ‖αv‖",
            "[CLS] ‖v‖ ratio", "[SEP] ‖v‖ ratio", "Median punctuation α", "Adopted"]
    return md_table(head, rows)


def verdicts(r) -> str:
    """The stop rule, as written, on every displayed row of every model."""
    rows = []
    for key in r.results["models"]:
        for lens in r.results["stop_rule"]["lenses"]:
            p = f"{key}.verdict.{lens}"
            rows.append([_model_name(r, key), LENS_LABELS[lens], r.cite(f"{p}.rows_above", "int"),
                         r.cite(f"{p}.n_rows", "int"), r.cite(f"{p}.share_above", "pct:1"),
                         "adopted" if r.numbers[f"{p}.adopted"] else "not adopted"])
    return md_table(["Model", "Lens", "Rows above the threshold", "Displayed rows", "Share", "Verdict"], rows)


def checks(r, model: str) -> str:
    p = f"{model}.check"
    rows = [
        ["Sentences the oracle re-ran", r.cite(f"{p}.oracle_sentences", "int")],
        ["Reference vs oracle, attention (max abs)", r.cite(f"{p}.oracle_max_abs_alpha", NOISE)],
        ["Reference vs oracle, last hidden state (max abs)", r.cite(f"{p}.oracle_max_abs_hidden", NOISE)],
        ["Reference vs oracle, displayed sink shares (max abs)", r.cite(f"{p}.oracle_max_abs_sink", NOISE)],
        ["Oracle opens the same head for every row not within the margin floor of a tie",
         r.cite(f"{p}.oracle_same_heads", "yesno")],
        ["... rows within it (their head is the float32 reference's rounding)", r.cite(f"{p}.oracle_near_tie_rows", "int")],
        ["Norms forced to 1.0 vs α folded by loops (max abs)", r.cite(f"{p}.unit_norms_max_diff", "sci:1~1e-6")],
        ["... within float32 rounding of α's row sums", r.cite(f"{p}.unit_norms_agree", "yesno")],
        ["[CLS] value norm forced to 0: median sink share under ‖α v‖", r.cite(f"{p}.cls_zero_median_sink", "pct:2")],
        ["... and displayed rows still above 50 % (every row, the stop rule's count)", r.cite(f"{p}.cls_zero_rows_above", "int")],
    ]
    return md_table(["Check", "Result"], rows)


def anchors(r, model: str) -> str:
    """Recorded anchor rows: the value the lock recorded beside the one measured now."""
    rows = []
    for i, a in enumerate(r.results["models"][model]["anchors"]):
        p = f"{model}.anchor{i}"
        recorded = lambda k, fmt: r.locked_text(f"{p}.{k}", fmt)
        rows.append([
            f"[{escape(a['from_word'])} → {escape(a['to_word'])}]({r.instrument_url(model, a['sentence'])})",
            f"L{r.cite(f'{p}.layer', 'int')}H{r.cite(f'{p}.head', 'int')}",
            recorded("weight", "fixed:3"), r.cite(f"{p}.weight", "fixed:3"),
            recorded("sink_share", "pct:1"), r.cite(f"{p}.sink_share", "pct:1"),
        ])
    return md_table(["Anchor row", "Head", "Displayed weight, recorded", "... measured now", "Row's sink share, recorded",
                     "... measured now"], rows)


def rollout(r) -> str:
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([_model_name(r, key), c("n_rows", "int"), c("median_entropy", "fixed:3"), c("max_entropy", "fixed:3"),
                     c("median_sink", "pct:1"), c("top_on_sink", "int"), c("top_on_self", "int")])
    return md_table(["Model", "Rows", "Median entropy, full row", "Max", "Median weight on [CLS] + [SEP]",
                     "Rows topped by [CLS]/[SEP]", "Rows topped by the word itself"], rows)


def rollout_displayed(r) -> str:
    """The rollout row as the instrument would display it, against a row of the same
    length with one clearly preferred word."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([_model_name(r, key), c("displayed_median_entropy", "fixed:3"),
                     _range(r, f"{key}.rollout.displayed_median_entropy", "fixed:3"),
                     c("displayed_min_entropy", "fixed:3"), c("one_clear_word_entropy", "fixed:3"),
                     c("displayed_median_top_margin", "pct:1")])
    return md_table(["Model", "Median entropy, displayed row", ci_head(r), "Lowest", "Half on one word, same length",
                     "Median gap, top two words"], rows)


def rollout_ranking(r) -> str:
    """How steady a rollout row's order is, against how alike two words' rows of one
    sentence are: a steady order that every word shares is one order per sentence."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([_model_name(r, key), c("drop_layer_spearman", "fixed:3"), _range(r, f"{key}.rollout.drop_layer_spearman", "fixed:3"),
                     c("rows_alike_spearman", "fixed:3"), _range(r, f"{key}.rollout.rows_alike_spearman", "fixed:3"),
                     c("drop_layer_same_top", "pct:1")])
    return md_table(["Model", "Rank correlation with itself, one layer dropped (median)", ci_head(r),
                     "Rank correlation with another word's row, same sentence (median)", ci_head(r),
                     "Same top word, one layer dropped"], rows)


ROLLOUT_BASELINES = {"last_punct": "the sentence's last punctuation mark", "other_word": "another word's rollout row",
                     "sentence_mean": "the sentence's mean rollout row", "next_word": "the next word",
                     "previous_word": "the previous word"}


def _difference(r, key: str) -> str:
    """A paired difference's interval: unlike a share, a zero-width interval at zero is a
    result (the two agree row for row), printed as such."""
    return span(r.cite(f"{key}_lo", "pp:1"), r.cite(f"{key}_hi", "pp:1"))


def rollout_baselines(r, intervals: bool = False) -> str:
    """One row per guess, one column per model (and its interval): how often the word's own
    rollout row and each lazy guess name the instrument's top word, the best guess, and what
    is left for the word against it and against the best sentence-wide guess."""
    models = list(r.results["models"])

    def row(label: str, key: str, fmt: str, interval=lambda k: _range(r, k, "pct:1")) -> list[str]:
        out = [label]
        for m in models:
            out.append(r.cite(f"{m}.rollout.{key}", fmt))
            if intervals:
                out.append(interval(f"{m}.rollout.{key}") if interval else "—")
        return out

    def best() -> list[str]:
        out = ["The best guess"]
        for m in models:
            r.cite(f"{m}.rollout.best_baseline", "text")      # recorded and locked like any citation
            out.append(ROLLOUT_BASELINES[r.numbers[f"{m}.rollout.best_baseline"]])
            if intervals:
                out.append("—")
        return out

    difference = lambda k: _difference(r, k)
    rows = [row("The word's own rollout row", "agrees_with_instrument", "pct:1")]
    rows += [row(f"Guess: {label}", f"baseline_{name}", "pct:1") for name, label in ROLLOUT_BASELINES.items()]
    rows += [row("A word drawn at random", "chance_agreement", "pct:1", None), best(),
             row("Own row minus the best guess", "word_specific", "pp:1", difference),
             row("Own row minus the best sentence-wide guess (the first three)", "beyond_sentence_guesses", "pp:1", difference),
             row("(Not a guess) the instrument's top word is next to the word, either side", "instrument_top_adjacent", "pct:1")]
    head = ["Held-out rows where this names the instrument's top word"]
    for m in models:
        head += [_model_name(r, m)] + ([ci_head(r)] if intervals else [])
    return md_table(head, rows)


# -- sensitivity ------------------------------------------------------------------------------

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


def near_ties(r) -> str:
    """How many displayed rows the head rule's tie tolerance decides, per model and lens."""
    rows = []
    for key in r.results["models"]:
        for lens in LENSES:
            p = f"{key}.{lens}.near_ties"
            rows.append([_model_name(r, key), LENS_LABELS[lens], r.cite(f"{p}.n_rows", "int"),
                         r.cite(f"{p}.below_tolerance_share", "pct:1"), r.cite(f"{p}.below_tenth_share", "pct:1")])
    tol = r.cite("tie_tolerance", "fixed:3")
    # Shares, not counts: a gap this near a cut-off is itself a near-tie, which another
    # machine's rounding can put on the other side by a row (model/picks.py).
    return md_table(["Model", "Lens", "Displayed rows", f"Runner-up within {tol}: head set by the tie rule",
                     "Runner-up within a tenth of that"], rows)


def flip_summary(r, lens: str = "alpha") -> str:
    """Every flip pair (both orders), per model, under one lens."""
    rows = []
    for key in r.results["models"]:
        p = f"{key}.flip.{lens}"
        rows.append([_model_name(r, key), r.cite(f"{p}.n_heads", "int"), r.cite(f"{p}.layer0_changed", "int"),
                     r.cite(f"{p}.changed_share", "pct:1"), _range(r, f"{p}.changed_share", "pct:1"),
                     r.cite(f"{p}.toward_share", "pct:1"), _range(r, f"{p}.toward_share", "pct:1"),
                     r.cite(f"{p}.follows_share", "pct:1"), r.cite(f"{p}.opposes_share", "pct:1"),
                     r.cite(f"{p}.heads.n_significant", "int")])
    return md_table(["Model", "Heads counted (layer 0 apart)", "Layer-0 heads whose winner changes",
                     "(pair, head) whose winner changes", ci_head(r), "... that moved toward the reader", ci_head(r),
                     "... whose winner changes with the reader", "... against the reader",
                     "Heads passing the corrected sign test"], rows)


SET_LABELS = {"": "both orders", "original": "as first written", "mirrored": "mirrored", "null": "null pairs"}


def flip_sets(r) -> str:
    """Per model and set of pairs (both orders; each order; the null pairs), under α: how
    often the heads moved the reader's way, the per-head sign tests and the null of their
    maximum, and the model's own probe. Narrow enough to print: the models by their short
    names, the best head's p left to `flip_top_heads`. The best head is the one with the
    smallest uncorrected p (study.yml): where none passes, the corrected p's are all 1."""
    rows = []
    for key in r.results["models"]:
        for name, label in SET_LABELS.items():
            p = flip_key(key, name)
            h = f"{p}.alpha.heads"
            model = f"{r.cite(f'{key}.model', 'text')} ({r.cite(f'{key}.n_layers', 'int')} layers)" if not name else ""
            rows.append([model, label, r.cite(f"{p}.n_pairs", "int"),
                         r.cite(f"{p}.alpha.toward_share", "pct:1"), _range(r, f"{p}.alpha.toward_share", "pct:1"),
                         r.cite(f"{h}.n_significant", "int"),
                         f"{r.cite(f'{h}.best', 'text')}: {r.cite(f'{h}.best_follows', 'int')} / "
                         f"{r.cite(f'{h}.best_opposes', 'int')}",
                         r.cite(f"{p}.alpha.most_pairs_followed", "int"), r.cite(f"{h}.null_max_follows", "fixed:0"),
                         r.cite(f"{p}.model_follows", "pct:1"), _range(r, f"{p}.model_follows", "pct:1")])
    return md_table(["Model", "Pairs", "Number", "Heads moved toward the reader", ci_head(r),
                     "Heads passing the corrected sign test", "Head with the smallest uncorrected p: pairs with / against",
                     "Most pairs one head follows",
                     "... if swapped at random (95th pct.)", "Final state nearer the reader's noun", ci_head(r)], rows)


def flip_top_heads(r, model: str, more: int = 5) -> str:
    """The heads of one model with the smallest uncorrected p under α (every flip pair), the
    order of the best head (model/flip.py): every head that passes and `more` after them,
    with their counts in each set of pairs."""
    heads = r.results["models"][model]["flips"]["lenses"]["alpha"]["heads"]
    order = sorted(range(len(heads["follows"])), key=lambda i: (heads["p_value"][i], -heads["follows"][i], i))
    rows = []
    for i in order[: heads["n_significant"] + more]:
        name = f"L{heads['layer'][i]}H{heads['head'][i]}"
        cell = lambda s: (f"{r.cite(f'{flip_key(model, s)}.alpha.head.{name}.follows', 'int')} / "
                          f"{r.cite(f'{flip_key(model, s)}.alpha.head.{name}.opposes', 'int')}")
        p = f"{model}.flip.alpha.head.{name}"
        rows.append([name, *(cell(s) for s in ("", "original", "mirrored", "null")), r.cite(f"{p}.p_value", "sci:1"),
                     r.cite(f"{p}.p_corrected", "sci:1"), r.cite(f"{p}.picks_reader", "pct:1")])
    return md_table(["Head", "Both orders: pairs with / against the reader", "As first written", "Mirrored",
                     "Null pairs", "p, both orders", "Corrected p", "Sentences whose winner is the reader's noun"], rows)


def flips(r, pairs: str = "flip") -> str:
    """Every flip pair, or every null pair, and per model the heads (α) that follow the
    reader's referent in it (a null pair's: the referent of the pair whose frame it shares).
    A null pair is shown by its frame's number and its two words, not its sentences again."""
    s = "" if pairs == "flip" else "null"
    models = list(r.results["models"])
    listed = flip_set(r.results["models"][models[0]]["flips"], s)["lenses"]["alpha"]["pairs"]
    out = []
    for i, pair in enumerate(listed):
        a, b = pair["sentences"]
        changed = [(x, y) for x, y in zip(re.findall(r"\w+", a), re.findall(r"\w+", b)) if x != y][0]
        where = [escape(a), escape(changed[1])] if pairs == "flip" else [str(pair["source"]), escape(" / ".join(changed))]
        out.append([str(i + 1), "mirrored" if pair["order"] == "mirrored" else "as written", *where,
                    escape(" → ".join(pair["referents"])),
                    *(r.cite(f"{flip_key(k, s)}.alpha.pair{i}.follows_reader", "int") for k in models)])
    where = ["Sentence A", "Sentence B changes it to"] if pairs == "flip" else ["Frame of pair", "“it was …”, A / B"]
    head = ["#", "Nouns named", *where, "Reader's referent, A → B" if pairs == "flip" else "Pseudo-referents, A → B"]
    head += [f"{r.cite(f'{k}.checkpoint', 'text')}: heads that follow (of {r.cite(f'{k}.flip.alpha.n_heads', 'int')})"
             for k in models]
    return md_table(head, out, summary=f"All {len(out)} {'pairs' if pairs == 'flip' else 'null pairs'}")


def mutant(r, model: str, name: str = "wrong_agg") -> str:
    """A deliberately wrong variant (model/mutants.py) and which checks catch it; the
    verdicts are computed from the numbers, like everything else in the table."""
    p = f"{model}.mutant.{name}"
    c = lambda k, fmt: r.cite(f"{p}.{k}", fmt)
    v = lambda k: r.numbers[f"{p}.{k}"]
    caught = lambda flag: "catches it" if flag else "misses it"
    n = c("n_rows", "int")
    tol = v("tolerance")
    within = f"within {c('tolerance', 'sci:0')}"
    rows = [
        [f"Same idea rewritten as loops: agrees with the mutant {within}", caught(not v("same_idea_agrees")),
         c("same_idea_agrees", "yesno")],
        ["Norms forced to 1.0, through the mutant: max difference from α", caught(v("unit_norms_max_diff") > tol),
         c("unit_norms_max_diff", "sci:1")],
        [f"Control: the instrument's word rows sum to 1 {within}",
         "holds" if v("right_rows_sum_to_one") else "fails", c("right_rows_sum_to_one", "yesno")],
        ["Word rows sum to 1: largest error of the mutant's rows", caught(v("max_row_sum_error") > tol),
         c("max_row_sum_error", "pct:0")],
        ["Mutant rows whose sum is off", caught(v("rows_bad_sum") > 0), f"{c('rows_bad_sum', 'int')} of {n}"],
        ["Sink share changed, from-words of several subwords", caught(v("rows_differ") > v("rows_differ_single")),
         f"{c('rows_differ', 'int')} of {c('n_multi_subword', 'int')}"],
        ["Sink share changed, one-subword from-words", caught(v("rows_differ_single") > 0),
         c("rows_differ_single", "int")],
        ["Largest change of a sink share", caught(v("max_abs_sink_diff") > tol), c("max_abs_sink_diff", "pp:1")],
        ["Largest sink share the mutant reports", caught(v("max_wrong_sink") > 1), c("max_wrong_sink", "pct:1")],
    ]
    return md_table(["Check", "On the mutant", "Result"], rows)


def provenance(r) -> str:
    """Each measured model: what it is and which exact file the numbers come from."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt="int": r.cite(f"{key}.{k}", fmt)
        package = r.numbers[f"{key}.package"]
        rows.append([c("checkpoint", "text"), f"`{key}`", c("n_layers"), c("n_heads"), c("d_model"),
                     c('package', 'text') if package else "a local folder", c("source", "text"),
                     f"`{c('sha256', 'text')}`"])
    libs = ", ".join(f"{name} {r.cite(f'library.{name}', 'text')}" for name in r.results["provenance"]["libraries"])
    return (md_table(["Checkpoint", "Key", "Layers", "Heads", "Hidden size", "Package", "Weights", "sha256 of the weights"], rows)
            + f"\nLibraries: {libs}.\n")


def agreement(r) -> str:
    """Reference vs oracle on the corpus, per model."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.check.{k}", fmt)
        rows.append([_model_name(r, key), c("oracle_sentences", "int"), c("oracle_max_abs_alpha", NOISE),
                     c("oracle_max_abs_hidden", NOISE), c("oracle_max_abs_sink", NOISE), c("oracle_same_heads", "yesno"),
                     c("oracle_near_tie_rows", "int")])
    return md_table(["Model", "Sentences re-run", "Attention (max abs)", "Last hidden state (max abs)",
                     "Displayed sink shares (max abs)", "Same head, every row not at a near-tie",
                     "Rows at a near-tie (not compared)"], rows)


def corpus(r) -> str:
    """What the corpus is made of: registers, and sentences per length."""
    regs = [[escape(name), r.cite(f"corpus.register.{name}", "int")] for name in r.results["corpus"]["registers"]]
    lengths = []
    for i, _ in enumerate(r.results["corpus"]["length_histogram"]):
        p = f"corpus.length{i}"
        lengths.append([f"{r.cite(f'{p}.from', 'int')}–{r.cite(f'{p}.to', 'int')}", r.cite(f"{p}.sentences", "int")])
    return (md_table(["Register", "Sentences"], regs) + "\n"
            + md_table(["Words per sentence (whitespace-separated)", "Sentences"], lengths))


def tokens(r) -> str:
    rows = [[_model_name(r, key), r.cite(f"{key}.tokens_per_word", "fixed:2")] for key in r.results["models"]]
    return md_table(["Model", "Tokens per word"], rows)


# -- part 8: the ground truth and the later fixes (model/truth.py) -------------------------------

FIX_LABELS = {"kobayashi2021": "ATB+RES+LN (Kobayashi 2021)", "alti": "ALTI (Ferrando 2022)",
              "value_zeroing": "value zeroing (Mohebbi 2023)"}   # model/truth.py's, with the paper
TRACK_LABELS = {**{lens: f"{LENS_LABELS[lens]} (α's head)" for lens in LENSES}, **FIX_LABELS,
                # lazy scores that know only where the word is (added after the sceptical reading)
                "position": "baseline: the word's position (earlier first)", "first_word": "baseline: the sentence's first word"}


def _ci(r, key: str, fmt: str) -> str:
    """Value and interval in one cell: "26.6% (23.3–29.2%)"; a dash where the statistic has
    no rows (a subset outside the ablation's sample), no interval where no resample had both
    kinds of rows."""
    if key not in r.numbers:
        return "—"
    if f"{key}_lo" not in r.numbers:
        return f"{r.cite(key, fmt)} (no interval)"
    return f"{r.cite(key, fmt)} ({_range(r, key, fmt)})"


def truth_verdicts(r) -> str:
    """The registered stop rule on every lens, norm lenses and later fixes, every model: rows
    above the threshold; for the fixes, beside it (added, labelled) the sink share among the
    other words only."""
    rows = []
    for key in r.results["models"]:
        for lens in r.results["stop_rule"]["lenses"]:
            p = f"{key}.verdict.{lens}"
            rows.append([_model_name(r, key), LENS_LABELS[lens], "the head's row",
                         f"{r.cite(f'{p}.rows_above', 'int')} of {r.cite(f'{p}.n_rows', 'int')}",
                         "adopted" if r.numbers[f"{p}.adopted"] else "not adopted", "—"])
        for fix, label in FIX_LABELS.items():
            p = f"{key}.fix.{fix}"
            sample = "α's layer" if fix != "value_zeroing" else f"α's layer, one sentence in {r.cite(f'{key}.truth.value_zeroing_every', 'int')}"
            rows.append([_model_name(r, key), label, sample,
                         f"{r.cite(f'{p}.rows_above', 'int')} of {r.cite(f'{p}.n_rows_all', 'int')}",
                         "adopted" if r.numbers[f"{p}.adopted"] else "not adopted",
                         f"{r.cite(f'{p}.rows_above_other', 'int')} "
                         f"({'adopted' if r.numbers[f'{p}.adopted_other'] else 'not adopted'})"])
    return md_table(["Model", "Lens", "Row read", f"Rows above {r.cite('stop_rule.threshold', 'pct:0')}",
                     "Verdict (registered)", "Added: rows above, among the other words only"], rows)


def tracking(r) -> str:
    """Which reading's sink share tracks the ablation sink share (held-out rows)."""
    rows = []
    for key in r.results["models"]:
        for lens, label in TRACK_LABELS.items():
            p = f"{key}.track.{lens}"
            if f"{p}.spearman" not in r.numbers:
                continue
            rows.append([_model_name(r, key), label,
                         f"{r.cite(f'{p}.n_rows', 'int')} ({r.cite(f'{p}.n_sentences', 'int')})",
                         _ci(r, f"{p}.spearman", "fixed:2"),
                         r.cite(f"{p}.n_harmful", "int"), _ci(r, f"{p}.auc", "fixed:2") if f"{p}.auc" in r.numbers else "—"])
    return md_table(["Model", "Sink share under", "Held-out rows (sentences)", f"Spearman with the ablation sink share ({ci_head(r)})",
                     "Harmful rows among them", f"ROC AUC for the harmful rows ({ci_head(r)})"], rows)


def ablation(r) -> str:
    """The ground truth per model, on the head the instrument opens under α (held-out rows)."""
    rows = []
    for key in r.results["models"]:
        p, t = f"{key}.truth.alpha", f"{key}.truth"
        rows.append([_model_name(r, key), f"{r.cite(f'{p}.n_rows', 'int')} ({r.cite(f'{p}.n_sentences', 'int')})",
                     r.cite(f"{p}.registered_median_sink", "pct:1"),
                     _ci(r, f"{p}.median_share", "pct:1"), _ci(r, f"{p}.above_50_share", "pct:1"),
                     r.cite(f"{p}.median_share_without_word", "pct:1"),
                     r.cite(f"{p}.median_head_effect", "sci:1"),
                     f"{r.cite(f'{t}.harmful_threshold', 'sci:1')} ({r.cite(f'{t}.n_threshold_rows', 'int')} rows, "
                     f"{r.cite(f'{t}.n_ablation_sentences', 'int')} sentences)",
                     _ci(r, f"{p}.harmful_share", "pct:1")])
    return md_table(["Model", "Held-out rows sampled (sentences)", "Their median sink share (registered)",
                     "Median ablation sink share", "Rows above 50 % by ablation",
                     "... content without the word itself (sensitivity)", "Median head effect (1 − cos)",
                     "Harmful above: the median head effect of the sample's α rows, both halves", "Harmful rows"], rows)


def ablation_lenses(r, model: str) -> str:
    """The ground truth on the head each lens opens (held-out rows)."""
    rows = []
    for lens in LENSES:
        p = f"{model}.truth.{lens}"
        rows.append([LENS_LABELS[lens], f"{r.cite(f'{p}.n_rows', 'int')} ({r.cite(f'{p}.n_sentences', 'int')})",
                     r.cite(f"{p}.registered_median_sink", "pct:1"),
                     _ci(r, f"{p}.median_share", "pct:1"), r.cite(f"{p}.median_sink_effect", "sci:1"),
                     r.cite(f"{p}.median_content_effect", "sci:1"), _ci(r, f"{p}.median_head_effect", "sci:1"),
                     _ci(r, f"{p}.harmful_share", "pct:1")])
    return md_table(["Head opened under", "Held-out rows sampled (sentences)", "Median sink share (the lens's)",
                     "Median ablation sink share",
                     "Median sink effect", "Median content effect", "Median head effect", "Harmful rows"], rows)


def fixes(r, model: str) -> str:
    """Each later fix read as a lens on the row α opened (held-out rows)."""
    rows = []
    for fix, label in FIX_LABELS.items():
        p = f"{model}.fix.{fix}"
        strongest = (f"{r.cite(f'{p}.strongest_median_sink', 'pct:1')}; {r.cite(f'{p}.strongest_rows_above', 'int')} rows above"
                     if f"{p}.strongest_median_sink" in r.numbers else "—")
        rows.append([label, r.cite(f"{p}.n_test_sentences", "int"), r.cite(f"{p}.n_rows", "int"),
                     _ci(r, f"{p}.median_sink", "pct:1"), _ci(r, f"{p}.median_self", "pct:1"),
                     _ci(r, f"{p}.median_sink_other", "pct:1"), _ci(r, f"{p}.above_50_share", "pct:1"),
                     r.cite(f"{p}.above_50_other_share", "pct:1"), strongest])
    return md_table(["Fix", "Held-out sentences", "Held-out rows", "Median sink share (registered)", "Median own column",
                     "Added: median sink share among the other words", "Rows above 50 % (registered)",
                     "Added: rows above 50 % among the other words", "Sensitivity: strongest layer, median; rows above"], rows)


def idle_heads(r) -> str:
    """The idle-head test, per model and norm lens: the bound ratio of the rows each norm
    lens keeps above half, against the other rows'."""
    rows = []
    for key in r.results["models"]:
        for lens in r.results["stop_rule"]["lenses"]:
            p = f"{key}.idle.{lens}"
            surv = r.numbers[f"{p}.n_survivors"]
            rows.append([_model_name(r, key), LENS_LABELS[lens], r.cite(f"{p}.n_survivors", "int"),
                         _ci(r, f"{p}.median_ratio_survivors", "ratio:2") if surv else "—",
                         _ci(r, f"{p}.median_ratio_others", "ratio:2"),
                         r.cite(f"{p}.idle", "yesno")])
    return md_table(["Model", "Lens", "Held-out rows above 50 %", "Their head's bound ratio (median)",
                     "Other rows' (median)", "Idle heads (study.yml's test)"], rows)


def idle_heads_measured(r) -> str:
    """The same rows' measured head effects (those in the ablation's sample), and the
    effect-weighted rule (chosen after seeing the reader's numbers)."""
    rows = []
    for key in r.results["models"]:
        for lens in r.results["stop_rule"]["lenses"]:
            p = f"{key}.idle.{lens}"
            measured = r.numbers[f"{p}.n_survivors_measured"]
            rows.append([_model_name(r, key), LENS_LABELS[lens],
                         f"{r.cite(f'{p}.n_survivors_measured', 'int')} "
                         f"({r.cite(f'{p}.n_survivor_sentences_measured', 'int')})",
                         _ci(r, f"{p}.median_effect_survivors", "sci:1"),
                         _ci(r, f"{p}.median_effect_others", "sci:1"),
                         (f"{r.cite(f'{p}.survivors_above_threshold', 'int')}; {r.cite(f'{p}.survivors_harmful', 'int')}"
                          if measured else "—"),
                         f"{r.cite(f'{p}.weighted_rows_above', 'int')} of {r.cite(f'{p}.weighted_n_rows', 'int')} "
                         f"({'adopted' if r.numbers[f'{p}.weighted_adopted'] else 'not adopted'})"])
    return md_table(["Model", "Lens", "Rows above 50 % in the ablation's sample (sentences)", "Their head effect (median)",
                     "Other rows'", "Of them: head effect above the harmful threshold; harmful",
                     "Effect-weighted rule (post hoc): rows above 50 %"], rows)


def truth_agreement(r) -> str:
    """Part 8's measures, reference against oracle (largest differences, oracle's sentences)."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt=NOISE: r.cite(f"{key}.truth.agreement.{k}", fmt)
        rows.append([_model_name(r, key), c("sentences", "int"), c("ablation_sentences", "int"), c("zeroing_sentences", "int"),
                     c("max_abs_ablation_share"),
                     c("max_abs_effect"), c("max_abs_kobayashi2021"), c("max_abs_alti"), c("max_abs_value_zeroing"),
                     c("max_abs_bound_ratio")])
    return md_table(["Model", "Sentences", "... in the ablation's sample", "... with value zeroing",
                     "Ablation sink share (its sample's)", "Effects (1 − cos)",
                     "ATB+RES+LN rows", "ALTI rows", "Value-zeroing rows", "Bound ratio"], rows)


def harmful_rows(r, model: str, n: int = 15) -> str:
    """The held-out rows whose sink moves the word most (alpha's head), each under every reading."""
    rows_ = r.results["models"][model]["rows"]
    test = set(r.results["models"][model]["halves"]["test"])
    order = sorted((i for i, s in enumerate(rows_["sentence"]) if s in test and rows_["alpha"]["sink_effect"][i] is not None),
                   key=lambda i: -rows_["alpha"]["sink_effect"][i])
    out = []
    for i in order[:n]:
        s, w = rows_["sentence"][i], rows_["word_index"][i]
        p = f"{model}.row.s{s}.w{w}"
        vz = rows_["value_zeroing"]["sink_share"][i]
        out.append([_row_link(r, model, s, w, "alpha"), r.cite(f"{p}.alpha.word", "text"),
                    f"L{r.cite(f'{p}.alpha.layer', 'int')}H{r.cite(f'{p}.alpha.head', 'int')}",
                    r.cite(f"{p}.alpha.sink_effect", "sci:1"), r.cite(f"{p}.alpha.ablation_share", "pct:1"),
                    r.cite(f"{p}.alpha.sink_share", "pct:1"), r.cite(f"{p}.value_norm.alpha_head_sink", "pct:1"),
                    r.cite(f"{p}.kobayashi2021.sink_share", "pct:1"), r.cite(f"{p}.alti.sink_share", "pct:1"),
                    r.cite(f"{p}.value_zeroing.sink_share", "pct:1") if vz is not None else "not sampled"])
    return md_table(["Sentence", "Word", "Head (α)", "Sink effect", "Ablation sink share", "Sink α", "Sink ‖αv‖ (same head)",
                     "Sink ATB+RES+LN", "Sink ALTI", "Sink value zeroing"], out)


TABLES = {
    f.__name__: f
    for f in (provenance, agreement, lens_summary, halves, halves_intervals, ratios, ratios_by_layer, per_layer,
              layer_picks, survivors, survivor_heads, worst_rows, depth, verdicts, checks, anchors, rollout,
              rollout_displayed, rollout_ranking, rollout_baselines, sensitivity, sensitivity_survivors, near_ties,
              flip_summary, flip_sets, flip_top_heads, flips, mutant, corpus, tokens,
              truth_verdicts, tracking, ablation, ablation_lenses, fixes, idle_heads, idle_heads_measured, truth_agreement,
              harmful_rows)
}
