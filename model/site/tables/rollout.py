"""Tables of attention rollout (Part 3): its entropies, its ranking and the lazy guesses it must beat.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table, span

from .common import NEAR_TIE, ci_cell, ci_label, decided, model_name


def rollout(r) -> str:
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([model_name(r, key), c("n_rows", "int"), c("median_entropy", "fixed:3"), c("max_entropy", "fixed:3"),
                     c("median_sink", "pct:1"), c("top_on_sink", "int"), c("top_on_self", "int")])
    return md_table(["Model", "Rows", "Median entropy, full row", "Max", "Median weight on [CLS] + [SEP]",
                     "Rows topped by [CLS]/[SEP]", "Rows topped by the word itself"], rows)


def rollout_displayed(r) -> str:
    """The rollout row as the instrument would display it, against a row of the same
    length with one clearly preferred word."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([model_name(r, key), c("displayed_median_entropy", "fixed:3"),
                     ci_cell(r, f"{key}.rollout.displayed_median_entropy", "fixed:3"),
                     c("displayed_min_entropy", "fixed:3"), c("one_clear_word_entropy", "fixed:3"),
                     c("displayed_median_top_margin", "pct:1")])
    return md_table(["Model", "Median entropy, displayed row", ci_label(r), "Lowest", "Half on one word, same length",
                     "Median gap, top two words"], rows)


def rollout_ranking(r) -> str:
    """How steady a rollout row's order is, against how alike two words' rows of one
    sentence are: a steady order that every word shares is one order per sentence."""
    rows = []
    for key in r.results["models"]:
        c = lambda k, fmt: r.cite(f"{key}.rollout.{k}", fmt)
        rows.append([model_name(r, key), c("drop_layer_spearman", "fixed:3"), ci_cell(r, f"{key}.rollout.drop_layer_spearman", "fixed:3"),
                     c("rows_alike_spearman", "fixed:3"), ci_cell(r, f"{key}.rollout.rows_alike_spearman", "fixed:3"),
                     c("drop_layer_same_top", "pct:1")])
    return md_table(["Model", "Rank correlation with itself, one layer dropped (median)", ci_label(r),
                     "Rank correlation with another word's row, same sentence (median)", ci_label(r),
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

    def row(label: str, key: str, fmt: str, interval=lambda k: ci_cell(r, k, "pct:1")) -> list[str]:
        out = [label]
        for m in models:
            out.append(r.cite(f"{m}.rollout.{key}", fmt))
            if intervals:
                out.append(interval(f"{m}.rollout.{key}") if interval else "—")
        return out

    def best() -> list[str]:
        out = ["The best guess"]
        for m in models:
            if decided(r, f"{m}.rollout.best_baseline"):
                r.cite(f"{m}.rollout.best_baseline", "text")      # recorded and locked like any citation
                out.append(ROLLOUT_BASELINES[r.numbers[f"{m}.rollout.best_baseline"]])
            else:   # two guesses within rounding of each other: either could be best elsewhere
                out.append(NEAR_TIE)
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
        head += [model_name(r, m)] + ([ci_label(r)] if intervals else [])
    return md_table(head, rows)


TABLES = {f.__name__: f for f in (rollout, rollout_displayed, rollout_ranking, rollout_baselines)}
