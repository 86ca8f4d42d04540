"""Tables of the sink problem (Part 1) and the rows the instrument opens: the lens summary, the halves, every layer, the layers the rule opens, the worst rows, the near-ties.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table

from ...instrument import LENS_LABELS, LENSES
from .common import ABOVE_HALF, HALVES, ci_cell, ci_label, decided_row, model_name, row_link


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
            row.append(ci_cell(r, f"{model}.{lens}.{key}", fmt) if interval else "—")
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
        head += [LENS_LABELS[lens], ci_label(r)]
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
        rows.append([HALVES[half], r.cite(f"{p}.median_sink", "pct:1"), ci_cell(r, f"{p}.median_sink", "pct:1"),
                     r.cite(f"{p}.above_50_share", "pct:1"), ci_cell(r, f"{p}.above_50_share", "pct:1")])
    return md_table(["Sentences", "Median sink α", ci_label(r), "Rows > 50 % α", ci_label(r)], rows)


def per_layer(r, model: str) -> str:
    """The rule-free view: every head's row for every shown word of the held-out half."""
    L = r.numbers[f"{model}.n_layers"]
    rows = []
    for layer in range(L):
        p = f"{model}.layer{layer}"
        rows.append([str(layer)] + [r.cite(f"{p}.{l}.median_sink", "pct:1") for l in LENSES]
                    + [r.cite(f"{p}.{l}.above_50_share", "pct:1") for l in LENSES]
                    + [r.cite(f"{p}.alpha.median_punct", "pct:1")])
    head = (["Layer"] + [f"median {LENS_LABELS[l]}" for l in LENSES] + [f"{ABOVE_HALF} {LENS_LABELS[l]}" for l in LENSES]
            + ["median punctuation α"])
    return md_table(head, rows)


def layer_picks(r, model: str) -> str:
    L = r.numbers[f"{model}.n_layers"]
    # Shares of the rows: a row whose head choice is a near-tie between two layers moves a
    # count by one on a machine that rounds the other way, not a share by a printed digit.
    rows = [[LENS_LABELS[l]] + [r.cite(f"{model}.{l}.picks.layer{i}_share", "pct:1") for i in range(L)] for l in LENSES]
    return md_table(["Lens"] + [f"layer {i}" for i in range(L)], rows)


def worst_rows(r, model: str, n: int = 20) -> str:
    """The held-out rows with the most sink under α, each under every lens; a row whose head a
    lens picks within the margin floor of a tie is left out (another machine may open another)."""
    rows_ = r.results["models"][model]["rows"]
    test = set(r.results["models"][model]["halves"]["test"])
    order = sorted((i for i, s in enumerate(rows_["sentence"]) if s in test and decided_row(r, model, i, LENSES)),
                   key=lambda i: -rows_["alpha"]["sink_share"][i])
    out = []
    for i in order[:n]:
        s, w = rows_["sentence"][i], rows_["word_index"][i]
        p = f"{model}.row.s{s}.w{w}"
        out.append([row_link(r, model, s, w, "alpha"), r.cite(f"{p}.alpha.word", "text"),
                    " / ".join(f"L{r.cite(f'{p}.{l}.layer', 'int')}H{r.cite(f'{p}.{l}.head', 'int')}" for l in LENSES),
                    *[r.cite(f"{p}.{l}.sink_share", "pct:1") for l in LENSES],
                    r.cite(f"{p}.alpha.content_mass", "pct:1")])
    return md_table(["Sentence", "Word", "Head (α / ‖αv‖ / ‖αf‖)", "Sink α", "Sink ‖αv‖", "Sink ‖αf‖", "Content mass α"], out)


def near_ties(r) -> str:
    """How many displayed rows the head rule's tie tolerance decides, per model and lens."""
    rows = []
    for key in r.results["models"]:
        for lens in LENSES:
            p = f"{key}.{lens}.near_ties"
            rows.append([model_name(r, key), LENS_LABELS[lens], r.cite(f"{p}.n_rows", "int"),
                         r.cite(f"{p}.below_tolerance_share", "pct:1"), r.cite(f"{p}.below_tenth_share", "pct:1")])
    tol = r.cite("tie_tolerance", "fixed:3")
    # Shares, not counts: a gap this near a cut-off is itself a near-tie, which another
    # machine's rounding can put on the other side by a row (model/picks.py).
    return md_table(["Model", "Lens", "Displayed rows", f"Runner-up within {tol}: head set by the tie rule",
                     "Runner-up within a tenth of that"], rows)


TABLES = {f.__name__: f for f in (lens_summary, halves, halves_intervals, per_layer, layer_picks, worst_rows, near_ties)}
