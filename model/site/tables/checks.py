"""Tables of the self-checks and the deliberately wrong variant (Part 5): reference against oracle, the anchors, the mutant.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table

from ..links import instrument_url
from .common import FORWARD_BOUND, below, escape, model_name


def checks(r, model: str) -> str:
    p = f"{model}.check"
    rows = [
        ["Sentences the oracle re-ran", r.cite(f"{p}.oracle_sentences", "int")],
        ["Reference vs oracle, attention (max abs)", below(r, f"{p}.oracle_max_abs_alpha", FORWARD_BOUND)],
        ["Reference vs oracle, last hidden state (max abs)", below(r, f"{p}.oracle_max_abs_hidden", FORWARD_BOUND)],
        ["Reference vs oracle, displayed sink shares (max abs)", below(r, f"{p}.oracle_max_abs_sink", FORWARD_BOUND)],
        ["Oracle opens the same head for every row not within the margin floor of a tie",
         r.cite(f"{p}.oracle_same_heads", "yesno")],
        ["... rows within it (their head is the reference's rounding)", r.cite(f"{p}.oracle_near_tie_rows", "int")],
        ["Norms forced to 1.0 vs α folded by loops (max abs)", below(r, f"{p}.unit_norms_max_diff", FORWARD_BOUND)],
        ["... within float64 rounding of α's row sums", r.cite(f"{p}.unit_norms_agree", "yesno")],
        ["[CLS] value norm forced to 0: median sink share under ‖α v‖", r.cite(f"{p}.cls_zero_median_sink", "pct:2")],
        ["... and displayed rows still above 50 % (every row, the stop rule's count)", r.cite(f"{p}.cls_zero_rows_above", "int")],
    ]
    return md_table(["Check", "Result"], rows)


def agreement(r) -> str:
    """Reference vs oracle on the corpus, per model."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.check.{k}", fmt)
        noise = lambda k: below(r, f"{key}.check.{k}", FORWARD_BOUND)
        rows.append([model_name(r, key), c("oracle_sentences", "int"), noise("oracle_max_abs_alpha"),
                     noise("oracle_max_abs_hidden"), noise("oracle_max_abs_sink"), c("oracle_same_heads", "yesno"),
                     c("oracle_near_tie_rows", "int")])
    return md_table(["Model", "Sentences re-run", "Attention (max abs)", "Last hidden state (max abs)",
                     "Displayed sink shares (max abs)", "Same head, every row not at a near-tie",
                     "Rows at a near-tie (not compared)"], rows)


def anchors(r, model: str) -> str:
    """Recorded anchor rows: the value the lock recorded beside the one measured now."""
    rows = []
    for i, a in enumerate(r.results["models"][model]["anchors"]):
        p = f"{model}.anchor{i}"
        recorded = lambda k, fmt: r.locked_text(f"{p}.{k}", fmt)
        rows.append([
            f"[{escape(a['from_word'])} → {escape(a['to_word'])}]({instrument_url(r, model, a['sentence'])})",
            f"L{r.cite(f'{p}.layer', 'int')}H{r.cite(f'{p}.head', 'int')}",
            recorded("weight", "fixed:3"), r.cite(f"{p}.weight", "fixed:3"),
            recorded("sink_share", "pct:1"), r.cite(f"{p}.sink_share", "pct:1"),
        ])
    return md_table(["Anchor row", "Head", "Displayed weight, recorded", "... measured now", "Row's sink share, recorded",
                     "... measured now"], rows)


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


TABLES = {f.__name__: f for f in (checks, agreement, anchors, mutant)}
