"""Tables of the instrument calibrated (Part 9): every reading's badge against the ground
truths, on the held-out half of the corpus and on the confirmation corpus.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table, span

from ...instrument import LENS_LABELS
from ...truth import FIX_LABELS

CORPORA = {"corpus": "held-out half", "confirmation": "confirmation corpus"}


def reading_label(reading: str) -> str:
    """A reading's name as the pages write it: its lens or fix, and whose head."""
    if reading in LENS_LABELS:
        return f"{LENS_LABELS[reading]}, its own head"
    if reading.endswith("_on_alpha"):
        return f"{LENS_LABELS[reading.removesuffix('_on_alpha')]} on α's head"
    if reading.startswith("weighted_"):
        return f"{LENS_LABELS[reading.removeprefix('weighted_')]}, effect-weighted head"
    return f"{FIX_LABELS[reading]} (α's layer)"


def _cell(r, key: str) -> str:
    """A share and its interval, "12% (9–14%)"; a dash where there is no row to form it over.
    Where a row behind it sits within the floor of turning, the lock prints it with the digits
    every machine agrees on (livenumbers/printed.py)."""
    if r.numbers.get(key) is None:
        return "—"
    return f"{r.cite(key, 'pct:0')} ({span(r.cite(f'{key}_lo', 'pct:0'), r.cite(f'{key}_hi', 'pct:0'))})"


def _count(r, key: str) -> str:
    """A count of rows ("about 1350" where a row behind it sits within the floor of turning:
    the lock's choice, livenumbers/printed.py)."""
    return r.cite(key, "int")


def _readings(r, model: str, truth: str) -> list[str]:
    return list(r.results["models"][model]["calibration"]["sets"]["corpus"]["truths"][truth])


def calibration(r, model: str, truth: str = "layer") -> str:
    """Per reading, against one truth: its badges, their precision and recall (with intervals)
    on both corpora, whether it meets the registered criterion on both (off the primary truth,
    on each corpus too), and (on the primary truth) the registered stop rule's count over every
    displayed row of corpus.tsv."""
    cal = r.results["models"][model]["calibration"]
    primary = truth == cal["primary"]
    both = "fit" if primary else "fit_word" if truth == "word" else None
    rows = []
    for reading in _readings(r, model, truth):
        row = [reading_label(reading)]
        for corpus in CORPORA:
            p = f"{model}.cal.{corpus}.{truth}.{reading}"
            row += [_count(r, f"{p}.n_badged"), _cell(r, f"{p}.precision"),
                    _cell(r, f"{p}.recall")]
        if not primary:
            row += [r.cite(f"{model}.cal.{corpus}.{truth}.{reading}.fit", "yesno") for corpus in CORPORA]
        if both:
            row.append(r.cite(f"{model}.cal.{both}.{reading}", "yesno"))
        if primary:
            row.append(_count(r, f"{model}.cal.stop_rule.{reading}.rows_above"))
        rows.append(row)
    head = ["Reading"] + [f"{h} ({name})" for name in ("held-out", "confirmation")
                          for h in ("Badges", "Precision", "Recall")]
    head += [] if primary else ["Fit (held-out)", "Fit (confirmation)"]
    head += ["Fit on both"] if both else []
    head += ["Stop rule: rows above half, all of corpus.tsv"] if primary else []
    return md_table(head, rows)


def calibration_verdicts(r) -> str:
    """Per reading and model: the criterion on the primary truth (both corpora), the same with
    Wilson's bounds in place of the bootstrap's, and the registered stop rule."""
    models = list(r.results["models"])
    rows = []
    for reading in _readings(r, models[0], "layer"):
        row = [reading_label(reading)]
        for model in models:
            row += [r.cite(f"{model}.cal.fit.{reading}", "yesno"), r.cite(f"{model}.cal.fit_wilson.{reading}", "yesno"),
                    r.cite(f"{model}.cal.stop_rule.{reading}.adopted", "yesno")]
        rows.append(row)
    head = ["Reading"] + [f"{r.cite(f'{m}.model', 'text')}: {h}" for m in models
                          for h in ("fit", "Wilson", "stop rule")]
    return md_table(head, rows)


def calibration_rank(r, model: str) -> str:
    """Per reading: Spearman's rank agreement of its share with each truth's, on both corpora."""
    rows = []
    for reading in _readings(r, model, "layer"):
        row = [reading_label(reading)]
        for corpus in CORPORA:
            for truth in ("layer", "word"):
                key = f"{model}.cal.{corpus}.{truth}.{reading}.spearman"
                row.append(r.cite(key, "fixed:2") if r.numbers.get(key) is not None else "—")
        rows.append(row)
    head = ["Reading"] + [f"{truth} ({name})" for name in ("held-out", "confirmation") for truth in ("Layer truth", "Word truth")]
    return md_table(head, rows)


def calibration_sets(r) -> str:
    """Per model and corpus: the rows scored and their sentences, the rows of α's head whose
    truth is above half (layer truth; word truth on its sample), and the rows at the
    numerical floor."""
    rows = []
    for model in r.results["models"]:
        for corpus, name in CORPORA.items():
            p = f"{model}.cal.{corpus}"
            rows.append([r.cite(f"{model}.model", "text"), name, r.cite(f"{p}.n_rows", "int"), r.cite(f"{p}.n_sentences", "int"),
                         _count(r, f"{p}.layer.alpha.n_truth_above"), r.cite(f"{p}.n_downstream_sentences", "int"),
                         r.cite(f"{p}.word.alpha.n_rows", "int"), _count(r, f"{p}.word.alpha.n_truth_above"),
                         r.cite(f"{p}.n_floor", "int")])
    return md_table(["Model", "Corpus", "Rows", "Sentences", "Above half, layer truth", "Sentences (word truth)",
                     "Rows (word truth)", "Above half, word truth", "At the floor"], rows)


def calibration_display(r) -> str:
    """Per model and corpus: what the display's renormalization does downstream, as a share of
    what removing the whole head does (median over α's rows of the word truth's sample)."""
    rows = []
    for model in r.results["models"]:
        for corpus, name in CORPORA.items():
            row = [r.cite(f"{model}.model", "text"), name]
            for truth in ("word", "sentence"):
                p = f"{model}.cal.{corpus}.redistribution.{truth}.median"
                row.append(_cell(r, p))
            rows.append(row + [r.cite(f"{model}.cal.{corpus}.redistribution.word.n_rows", "int")])
    return md_table(["Model", "Corpus", "Word's final representation", "Sentence embedding", "Rows"], rows)


TABLES = {f.__name__: f for f in (calibration, calibration_verdicts, calibration_rank, calibration_sets,
                                  calibration_display)}
