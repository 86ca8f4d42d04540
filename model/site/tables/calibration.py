"""Tables of the instrument calibrated (Part 9): every reading's badge against the ground
truths, on the held-out half of the corpus, the confirmation corpus and the replication.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.formats import NumberError
from livenumbers.tables import md_table, span

from ...instrument import LENS_LABELS
from ...truth import FIX_LABELS

CORPORA = {"corpus": "held-out half", "confirmation": "confirmation corpus"}   # the criterion's two
ALL_CORPORA = CORPORA | {"replication": "replication"}


def reading_label(reading: str) -> str:
    """A reading's name as the pages write it: its lens or fix, and whose head."""
    if reading in LENS_LABELS:
        return f"{LENS_LABELS[reading]}, its own head"
    if reading.endswith("_on_alpha"):
        return f"{LENS_LABELS[reading.removesuffix('_on_alpha')]} on α's head"
    if reading.startswith("weighted_"):
        return f"{LENS_LABELS[reading.removeprefix('weighted_')]}, effect-weighted head"
    return f"{FIX_LABELS[reading]} (α's layer)"


# The count a share is formed over: precision over the rows badged, recall over the rows whose
# truth is above half (both out of `n_both`, the rows that are both).
_OVER = {"precision": "n_badged", "recall": "n_truth_above"}


def _cell(r, key: str) -> str:
    """A share and its interval, "12% (9–14%)"; a dash where there is no row to form it over.
    Where every bootstrap resample gives the same share (all rows one way, "100% (100–100%)"),
    there is no interval to print: the counts instead, "100% (6/6)". Where a row behind it sits
    within the floor of turning, the lock prints it with the digits every machine agrees on
    (livenumbers/printed.py)."""
    if r.numbers.get(key) is None:
        return "—"
    base, share = key.rsplit(".", 1)
    if r.numbers.get(f"{key}_lo") == r.numbers.get(f"{key}_hi") and share in _OVER:
        return f"{r.cite(key, 'pct:0')} ({_count(r, f'{base}.n_both')}/{_count(r, f'{base}.{_OVER[share]}')})"
    return f"{r.cite(key, 'pct:0')} ({span(r.cite(f'{key}_lo', 'pct:0'), r.cite(f'{key}_hi', 'pct:0'))})"


def _count(r, key: str) -> str:
    """A count of rows ("about 1350" where a row behind it sits within the floor of turning:
    the lock's choice, livenumbers/printed.py)."""
    return r.cite(key, "int")


def _verdict(r, key: str) -> str:
    """A verdict (fit, not fit, undetermined; replicates, fails) cited and locked, printed as a word
    of the table, which the catalogue translates (a value is data: its text would stay English)."""
    r.cite(key, "text")
    return r.numbers[key]


def _verdicts(r, model: str, reading: str) -> str:
    """A reading's verdict, and beside it, where the second amendment's rule changed it, the
    verdict under the criterion as registered."""
    now, registered = f"{model}.cal.verdict.{reading}", f"{model}.cal.verdict_registered.{reading}"
    if r.numbers[registered] == r.numbers[now]:
        return _verdict(r, now)
    return f"{_verdict(r, now)} ({_verdict(r, registered)} by the criterion as registered)"


def _readings(r, model: str, truth: str) -> list[str]:
    return list(r.results["models"][model]["calibration"]["sets"]["corpus"]["truths"][truth])


def calibration(r, model: str, truth: str = "word") -> str:
    """Per reading, against one truth: its badges, their precision and recall (with intervals)
    on both corpora, and its verdict: on the primary truth the registered one (fit, not fit,
    undetermined), on another whether it meets the criterion on both corpora; on the layer truth
    (every reading's own head) the registered stop rule's count over every row of corpus.tsv too."""
    cal = r.results["models"][model]["calibration"]
    rows = []
    for reading in _readings(r, model, truth):
        row = [reading_label(reading)]
        for corpus in CORPORA:
            p = f"{model}.cal.{corpus}.{truth}.{reading}"
            row += [_count(r, f"{p}.n_badged"), _cell(r, f"{p}.precision"), _cell(r, f"{p}.recall")]
        if truth == cal["primary"]:
            row.append(_verdicts(r, model, reading))
        elif f"fit_{truth}" in cal:
            row.append(r.cite(f"{model}.cal.fit_{truth}.{reading}", "yesno"))
        else:
            row += [r.cite(f"{model}.cal.{corpus}.{truth}.{reading}.fit", "yesno") for corpus in CORPORA]
        if truth == "layer":
            row.append(_count(r, f"{model}.cal.stop_rule.{reading}.rows_above"))
        rows.append(row)
    head = ["Reading"] + [f"{h} ({name})" for name in ("held-out", "confirmation") for h in ("Badges", "Precision", "Recall")]
    head += (["Verdict"] if truth == cal["primary"] else ["Fit on both"] if f"fit_{truth}" in cal
             else ["Fit (held-out)", "Fit (confirmation)"])
    head += ["Stop rule: rows above half, all of corpus.tsv"] if truth == "layer" else []
    return md_table(head, rows)


def calibration_verdicts(r) -> str:
    """Per reading on α's head and model: the registered verdict (the primary, word truth), the
    first amendment's (the layer truth: fit on both corpora), and on the replication's model,
    its verdict there; each model's verdict last."""
    models = list(r.results["models"])
    has_replication = [m for m in models if "replicates" in r.results["models"][m]["calibration"]]
    rows = []
    for reading in _readings(r, models[0], "word"):
        row = [reading_label(reading)]
        for model in models:
            row += [_verdicts(r, model, reading), r.cite(f"{model}.cal.fit_layer.{reading}", "yesno")]
            if model in has_replication:
                row.append(_verdict(r, f"{model}.cal.replicates.{reading}"))
        rows.append(row)
    last = ["**The model**"]
    for model in models:
        p = f"{model}.cal.model_verdict"
        word = f"**{_verdict(r, f'{p}.verdict')}**"
        if r.numbers[f"{p}.registered"] != r.numbers[f"{p}.verdict"]:
            word += f" ({_verdict(r, f'{p}.registered')} by the criterion as registered)"
        last += [word, ""] + ([""] if model in has_replication else [])
    head = ["Reading"]
    for model in models:
        name = r.cite(f"{model}.model", "text")
        head += [f"{name}: word truth", f"{name}: layer truth"] + ([f"{name}: replication"] if model in has_replication else [])
    return md_table(head, rows + [last])


def calibration_replication(r, model: str) -> str:
    """Per reading on α's head, on the replication corpus: its badges, precision and recall
    against the word truth (with intervals), the rows whose truth is above half, and its verdict."""
    sets = r.results["models"][model]["calibration"]["sets"]
    if "replication" not in sets:
        replicated = [m for m, v in r.results["models"].items() if "replication" in v["calibration"]["sets"]]
        raise NumberError(f"table 'calibration_replication': {model!r} was not measured on the replication corpus "
                          f"(study.yml's replication block measures {', '.join(replicated) or 'no model'})")
    rows = []
    for reading in sets["replication"]["truths"]["word"]:
        p = f"{model}.cal.replication.word.{reading}"
        rows.append([reading_label(reading), _count(r, f"{p}.n_badged"), _cell(r, f"{p}.precision"), _cell(r, f"{p}.recall"),
                     _count(r, f"{p}.n_truth_above"), _verdict(r, f"{model}.cal.replicates.{reading}")])
    return md_table(["Reading", "Badges", "Precision", "Recall", "Rows above half", "Verdict"], rows)


def calibration_wilson(r) -> str:
    """Per reading on α's head and model: the criterion on the primary truth with Wilson's binomial
    bounds in place of the bootstrap's (rows counted as independent; added after the results were
    read), and the registered stop rule (every row of corpus.tsv, each reading's own head)."""
    models = list(r.results["models"])
    rows = []
    for reading in _readings(r, models[0], "word"):
        row = [reading_label(reading)]
        for model in models:
            row += [r.cite(f"{model}.cal.fit_wilson.{reading}", "yesno"), r.cite(f"{model}.cal.stop_rule.{reading}.adopted", "yesno")]
        rows.append(row)
    head = ["Reading"] + [f"{r.cite(f'{m}.model', 'text')}: {h}" for m in models for h in ("Wilson", "stop rule")]
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
    """Per model and corpus (the replication where measured): the rows and their sentences, the
    word truth's sample (sentences, rows of α's head, those above half), the rows above half on
    the layer truth, and the rows at the numerical floor."""
    rows = []
    for model in r.results["models"]:
        for corpus in r.results["models"][model]["calibration"]["sets"]:
            if corpus not in ALL_CORPORA:   # Part 10's fresh corpus: its truth alone, in its own tables
                continue
            p = f"{model}.cal.{corpus}"
            layer = corpus != "replication"
            rows.append([r.cite(f"{model}.model", "text"), ALL_CORPORA[corpus], r.cite(f"{p}.n_rows", "int"),
                         r.cite(f"{p}.n_sentences", "int"), r.cite(f"{p}.n_downstream_sentences", "int"),
                         r.cite(f"{p}.word.alpha.n_rows", "int"), _count(r, f"{p}.word.alpha.n_truth_above"),
                         _count(r, f"{p}.layer.alpha.n_truth_above") if layer else "not measured",
                         r.cite(f"{p}.n_floor", "int") if layer else "—"])
    return md_table(["Model", "Corpus", "Rows", "Sentences", "Sentences (word truth)", "Rows (word truth)",
                     "Above half, word truth", "Above half, layer truth", "At the floor"], rows)


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


TABLES = {f.__name__: f for f in (calibration, calibration_verdicts, calibration_replication, calibration_wilson,
                                  calibration_rank, calibration_sets, calibration_display)}
