"""Generated tables. Each takes the page's renderer (`r`) and returns a Markdown table
whose every number goes through `r.cite`, so it is recorded and locked like prose."""
from __future__ import annotations

from ..instrument import LENS_LABELS, LENSES
from .numbers import md_text as escape  # Markdown-safe, not only HTML-safe: see md_text

# Reference vs oracle differences are float32 rounding noise: they differ from one CPU to
# the next, so they are locked to within the agreement the tests require (numbers.py).
NOISE = "sci:1~1e-5"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def lens_summary(r, model: str) -> str:
    """The centrepiece table: displayed rows under alpha and the two norm lenses."""
    c = lambda lens, key, fmt: r.cite(f"{model}.{lens}.{key}", fmt)
    rows = [
        ["Median sink share"] + [c(l, "median_sink", "pct:1") for l in LENSES],
        ["Worst row"] + [c(l, "worst_sink", "pct:1") for l in LENSES],
        ["Rows above 50 %"] + [c(l, "above_50", "int") for l in LENSES],
        ["Rows above 90 %"] + [c(l, "above_90", "int") for l in LENSES],
        ["Rows worse than under α", "—"] + [c(l, "worse_rows", "int") for l in LENSES[1:]],
        ["Largest relative worsening", "—"] + [c(l, "max_relative_worsening", "pct:0") for l in LENSES[1:]],
        ["Same head as α", "—"] + [c(l, "same_head_as_alpha", "int") for l in LENSES[1:]],
    ]
    n = r.cite(f"{model}.alpha.n_rows", "int")
    return md_table([f"{n} displayed rows"] + [LENS_LABELS[l] for l in LENSES], rows)


def ratios(r, model: str) -> str:
    """Special tokens' value (and output) norms over the mean content token's."""
    rows = []
    for token, label in (("cls", "[CLS]"), ("sep", "[SEP]")):
        for vector, vlabel in (("v", "‖v‖"), ("f", "‖f(x)‖")):
            p = f"{model}.ratio.{token}_{vector}"
            rows.append([label, vlabel, r.cite(f"{p}.median", "ratio:2"),
                         f"{r.cite(f'{p}.below_1', 'int')} of {r.cite(f'{p}.n', 'int')}"])
    return md_table(["Token", "Norm", "Median ratio", "Below 1.0"], rows)


def ratios_by_layer(r, model: str) -> str:
    L = r.numbers[f"{model}.n_layers"]
    rows = []
    for layer in range(L):
        p = f"{model}.layer{layer}.ratio"
        rows.append([str(layer)] + [r.cite(f"{p}.{t}.median", "ratio:2") for t in ("cls_v", "sep_v", "cls_f", "sep_f")])
    return md_table(["Layer", "[CLS] ‖v‖", "[SEP] ‖v‖", "[CLS] ‖f‖", "[SEP] ‖f‖"], rows)


def per_layer(r, model: str) -> str:
    """The rule-free view: every head's row for every shown word, by layer."""
    L = r.numbers[f"{model}.n_layers"]
    rows = []
    for layer in range(L):
        p = f"{model}.layer{layer}"
        rows.append([str(layer)] + [r.cite(f"{p}.{l}.median_sink", "pct:1") for l in LENSES]
                    + [r.cite(f"{p}.{l}.above_50", "int") for l in LENSES])
    head = ["Layer"] + [f"median {LENS_LABELS[l]}" for l in LENSES] + [f"> 50 % {LENS_LABELS[l]}" for l in LENSES]
    return md_table(head, rows)


def layer_picks(r, model: str) -> str:
    L = r.numbers[f"{model}.n_layers"]
    rows = [[LENS_LABELS[l]] + [r.cite(f"{model}.{l}.picks.layer{i}", "int") for i in range(L)] for l in LENSES]
    return md_table(["Lens"] + [f"layer {i}" for i in range(L)], rows)


def displayed_rows(r, model: str) -> str:
    """Every displayed row: the evidence behind the summary table."""
    sentences = r.results["sentences"]
    rows = []
    for rec in r.results["models"][model]["rows"]:
        if rec["lens"] != "alpha":
            continue
        s, w = rec["sentence"], rec["word_index"]
        p = f"{model}.row.s{s}.w{w}"
        link = r.instrument_url(model, s, w, "alpha")
        heads = " / ".join(f"L{r.cite(f'{p}.{l}.layer', 'int')}H{r.cite(f'{p}.{l}.head', 'int')}" for l in LENSES)
        rows.append([
            f"[{s}]({link} \"{escape(sentences[s])}\")",
            r.cite(f"{p}.alpha.word", "text"),
            heads,
            *[r.cite(f"{p}.{l}.sink_share", "pct:1") for l in LENSES],
            r.cite(f"{p}.alpha.content_mass", "pct:1"),
        ])
    return md_table(["Sentence", "Word", "Head (α / ‖αv‖ / ‖αf‖)", "Sink α", "Sink ‖αv‖", "Sink ‖αf‖", "Content mass α"], rows)


def depth(r) -> str:
    """Models side by side: the norm-lens article's numbers per model."""
    rows = []
    for key, m in r.results["models"].items():
        c = lambda k, fmt: r.cite(f"{key}.{k}", fmt)
        rows.append([
            f"{escape(m['model'])} ({c('n_layers', 'int')} layers)",
            c("alpha.median_sink", "pct:1"), c("value_norm.median_sink", "pct:1"),
            c("alpha.above_50", "int"), c("value_norm.above_50", "int"),
            c("ratio.cls_v.median", "ratio:2"), c("ratio.sep_v.median", "ratio:2"),
            c("adopted", "yesno"),
        ])
    head = ["Model", "Median α", "Median ‖αv‖", "> 50 % α", "> 50 % ‖αv‖", "[CLS] ‖v‖", "[SEP] ‖v‖", "Adopted"]
    return md_table(head, rows)


def checks(r, model: str) -> str:
    p = f"{model}.check"
    rows = [
        ["Reference vs oracle, attention (max abs)", r.cite(f"{p}.oracle_max_abs_alpha", NOISE)],
        ["Reference vs oracle, last hidden state (max abs)", r.cite(f"{p}.oracle_max_abs_hidden", NOISE)],
        ["Reference vs oracle, displayed sink shares (max abs)", r.cite(f"{p}.oracle_max_abs_sink", NOISE)],
        ["Oracle opens the same head for every row", r.cite(f"{p}.oracle_same_heads", "yesno")],
        ["Value norms forced to 1.0: max difference from α", r.cite(f"{p}.unit_norms_max_diff", "sci:1")],
        ["[CLS] value norm forced to 0: median sink share", r.cite(f"{p}.cls_zero_median_sink", "pct:2")],
    ]
    return md_table(["Check", "Result"], rows)


def anchors(r, model: str) -> str:
    rows = []
    for i, a in enumerate(r.results["models"][model]["anchors"]):
        p = f"{model}.anchor{i}"
        rows.append([
            f"[{escape(a['from_word'])} → {escape(a['to_word'])}]({r.instrument_url(model, a['sentence'])})",
            f"L{r.cite(f'{p}.layer', 'int')}H{r.cite(f'{p}.head', 'int')}",
            r.cite(f"{p}.weight", "fixed:3"),
            r.cite(f"{p}.sink_share", "pct:1"),
        ])
    return md_table(["Anchor row", "Head", "Displayed weight", "Row's sink share"], rows)


def rollout(r) -> str:
    rows = []
    for key, m in r.results["models"].items():
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([escape(m["model"]), c("n_rows", "int"), c("min_entropy", "fixed:3"), c("median_entropy", "fixed:3"),
                     c("max_entropy", "fixed:3"), c("above_90", "int"), c("median_top_margin", "fixed:3")])
    return md_table(["Model", "Rows", "Min entropy", "Median", "Max", "Above 0.9", "Median top-1 margin"], rows)


def rollout_displayed(r) -> str:
    """Where the rollout row's mass sits, and what is left once it is displayed
    ([CLS], [SEP] and the word itself dropped, the rest renormalized)."""
    rows = []
    for key, m in r.results["models"].items():
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        n = c("n_rows", "int")
        rows.append([escape(m["model"]), f"{c('top_on_sink', 'int')} of {n}", f"{c('top_on_self', 'int')} of {n}",
                     c("median_sink", "pct:1"), c("displayed_min_entropy", "fixed:3"),
                     c("displayed_median_entropy", "fixed:3"), c("displayed_max_entropy", "fixed:3"),
                     c("displayed_above_90", "int"), c("displayed_median_top_margin", "fixed:3")])
    return md_table(["Model", "Top weight on [CLS]/[SEP]", "Top weight on the word itself", "Median sink share",
                     "Displayed: min entropy", "Median", "Max", "Above 0.9", "Median top-1 margin"], rows)


def flips(r, model: str, lens: str = "alpha") -> str:
    rows = []
    for i, pair in enumerate(r.results["models"][model]["flips"][LENSES.index(lens)]["pairs"]):
        a, b = (r.results["sentences"][s] for s in pair["sentences"])
        p = f"{model}.flip.{lens}.pair{i}"
        rows.append([escape(a), escape(b), f"{r.cite(f'{p}.changed', 'int')} of {r.cite(f'{p}.n_heads', 'int')}",
                     r.cite(f"{p}.follows_reader", "int")])
    return md_table(["Sentence A", "Sentence B", "Heads whose winner changes", "Heads that follow the reader"], rows)


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
         c("max_row_sum_error", "fixed:3")],
        ["Mutant rows whose sum is off", caught(v("rows_bad_sum") > 0), f"{c('rows_bad_sum', 'int')} of {n}"],
        ["Sink share changed, from-words of several subwords", caught(v("rows_differ") > v("rows_differ_single")),
         f"{c('rows_differ', 'int')} of {c('n_multi_subword', 'int')}"],
        ["Sink share changed, one-subword from-words", caught(v("rows_differ_single") > 0),
         c("rows_differ_single", "int")],
        ["Largest change of a sink share", caught(v("max_abs_sink_diff") > tol), c("max_abs_sink_diff", "pct:1")],
        ["Largest sink share the mutant reports", caught(v("max_wrong_sink") > 1), c("max_wrong_sink", "pct:1")],
    ]
    return md_table(["Check", "On the mutant", "Result"], rows)


def provenance(r) -> str:
    """Each measured model: what it is and which exact file the numbers come from."""
    rows = []
    for key, m in r.results["models"].items():
        c = lambda k, fmt="int": r.cite(f"{key}.{k}", fmt)
        rows.append([c("model", "text"), f"`{key}`", c("n_layers"), c("n_heads"), c("source", "text"),
                     f"`{c('sha256', 'text')}`"])
    libs = ", ".join(f"{name} {r.cite(f'library.{name}', 'text')}" for name in r.results["provenance"]["libraries"])
    return md_table(["Model", "Key", "Layers", "Heads", "Weights", "sha256 of the weights file"], rows) + f"\nLibraries: {libs}.\n"


def agreement(r) -> str:
    """Reference vs oracle on the corpus, per model."""
    rows = []
    for key, m in r.results["models"].items():
        c = lambda k, fmt: r.cite(f"{key}.check.{k}", fmt)
        rows.append([escape(m["model"]), c("oracle_max_abs_alpha", NOISE), c("oracle_max_abs_hidden", NOISE),
                     c("oracle_max_abs_sink", NOISE), c("oracle_same_heads", "yesno")])
    return md_table(["Model", "Attention (max abs)", "Last hidden state (max abs)", "Displayed sink shares (max abs)",
                     "Same head for every row"], rows)


TABLES = {
    f.__name__: f
    for f in (provenance, agreement, lens_summary, ratios, ratios_by_layer, per_layer, layer_picks, displayed_rows, depth, checks,
              anchors, rollout, flips, mutant, rollout_displayed)
}
