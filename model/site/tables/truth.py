"""Tables of what the sink does (Part 6): the later fixes' verdicts, tracking, the ablation, the idle heads, the reference against the oracle, the harmful rows.

Each takes the page's renderer (`r`) and returns Markdown; every number goes through
`r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table

from ...instrument import LENS_LABELS, LENSES
from ...truth import FIX_CITED
from .common import FORWARD_BOUND, PASSES_BOUND, below, ci_cell, ci_label, decided_row, model_name, row_link


TRACK_LABELS = {**{lens: f"{LENS_LABELS[lens]} (α's head)" for lens in LENSES}, **FIX_CITED,
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
    return f"{r.cite(key, fmt)} ({ci_cell(r, key, fmt)})"


def truth_verdicts(r) -> str:
    """The registered stop rule on every lens, norm lenses and later fixes, every model: rows
    above the threshold; for the fixes, beside it (added, labelled) the sink share among the
    other words only."""
    rows = []
    for key in r.results["models"]:
        for lens in r.results["stop_rule"]["lenses"]:
            p = f"{key}.verdict.{lens}"
            rows.append([model_name(r, key), LENS_LABELS[lens], "the head's row",
                         f"{r.cite(f'{p}.rows_above', 'int')} of {r.cite(f'{p}.n_rows', 'int')}",
                         "adopted" if r.numbers[f"{p}.adopted"] else "not adopted", "—"])
        for fix, label in FIX_CITED.items():
            p = f"{key}.fix.{fix}"
            sample = "α's layer" if fix != "value_zeroing" else f"α's layer, one sentence in {r.cite(f'{key}.truth.value_zeroing_every', 'int')}"
            rows.append([model_name(r, key), label, sample,
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
            rows.append([model_name(r, key), label,
                         f"{r.cite(f'{p}.n_rows', 'int')} ({r.cite(f'{p}.n_sentences', 'int')})",
                         _ci(r, f"{p}.spearman", "fixed:2"),
                         r.cite(f"{p}.n_harmful", "int"), _ci(r, f"{p}.auc", "fixed:2") if f"{p}.auc" in r.numbers else "—"])
    return md_table(["Model", "Sink share under", "Held-out rows (sentences)", f"Spearman with the ablation sink share ({ci_label(r)})",
                     "Harmful rows among them", f"ROC AUC for the harmful rows ({ci_label(r)})"], rows)


def ablation(r) -> str:
    """The ground truth per model, on the head the instrument opens under α (held-out rows)."""
    rows = []
    for key in r.results["models"]:
        p, t = f"{key}.truth.alpha", f"{key}.truth"
        rows.append([model_name(r, key), f"{r.cite(f'{p}.n_rows', 'int')} ({r.cite(f'{p}.n_sentences', 'int')})",
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
    for fix, label in FIX_CITED.items():
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
            rows.append([model_name(r, key), LENS_LABELS[lens], r.cite(f"{p}.n_survivors", "int"),
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
            rows.append([model_name(r, key), LENS_LABELS[lens],
                         f"{r.cite(f'{p}.n_survivors_measured', 'int')} "
                         f"({r.cite(f'{p}.n_survivor_sentences_measured', 'int')})",
                         _ci(r, f"{p}.median_effect_survivors", "sci:1"),
                         _ci(r, f"{p}.median_effect_others", "sci:1"),
                         (f"{r.cite(f'{p}.survivors_above_threshold', 'int')}{r.punctuation('; ')}{r.cite(f'{p}.survivors_harmful', 'int')}"
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
        c = lambda k, fmt: r.cite(f"{key}.truth.agreement.{k}", fmt)
        noise = lambda k, bound: below(r, f"{key}.truth.agreement.{k}", bound)
        rows.append([model_name(r, key), c("sentences", "int"), c("ablation_sentences", "int"), c("zeroing_sentences", "int"),
                     noise("max_abs_ablation_share", PASSES_BOUND),
                     noise("max_abs_effect", FORWARD_BOUND), noise("max_abs_kobayashi2021", FORWARD_BOUND),
                     noise("max_abs_alti", FORWARD_BOUND), noise("max_abs_value_zeroing", PASSES_BOUND),
                     noise("max_abs_bound_ratio", FORWARD_BOUND)])
    return md_table(["Model", "Sentences", "... in the ablation's sample", "... with value zeroing",
                     "Ablation sink share (its sample's)", "Effects (1 − cos)",
                     "ATB+RES+LN rows", "ALTI rows", "Value-zeroing rows", "Bound ratio"], rows)


def harmful_rows(r, model: str, n: int = 15) -> str:
    """The held-out rows whose sink moves the word most (alpha's head), each under every reading;
    a row whose α head is picked within the margin floor of a tie is left out."""
    rows_ = r.results["models"][model]["rows"]
    test = set(r.results["models"][model]["halves"]["test"])
    order = sorted((i for i, s in enumerate(rows_["sentence"]) if s in test and rows_["alpha"]["sink_effect"][i] is not None
                    and decided_row(r, model, i, ["alpha"])),
                   key=lambda i: -rows_["alpha"]["sink_effect"][i])
    out = []
    for i in order[:n]:
        s, w = rows_["sentence"][i], rows_["word_index"][i]
        p = f"{model}.row.s{s}.w{w}"
        vz = rows_["value_zeroing"]["sink_share"][i]
        out.append([row_link(r, model, s, w, "alpha"), r.cite(f"{p}.alpha.word", "text"),
                    f"L{r.cite(f'{p}.alpha.layer', 'int')}H{r.cite(f'{p}.alpha.head', 'int')}",
                    r.cite(f"{p}.alpha.sink_effect", "sci:1"), r.cite(f"{p}.alpha.ablation_share", "pct:1"),
                    r.cite(f"{p}.alpha.sink_share", "pct:1"), r.cite(f"{p}.value_norm.alpha_head_sink", "pct:1"),
                    r.cite(f"{p}.kobayashi2021.sink_share", "pct:1"), r.cite(f"{p}.alti.sink_share", "pct:1"),
                    r.cite(f"{p}.value_zeroing.sink_share", "pct:1") if vz is not None else "not sampled"])
    return md_table(["Sentence", "Word", "Head (α)", "Sink effect", "Ablation sink share", "Sink α", "Sink ‖αv‖ (same head)",
                     "Sink ATB+RES+LN", "Sink ALTI", "Sink value zeroing"], out)


TABLES = {f.__name__: f for f in (truth_verdicts, tracking, ablation, ablation_lenses, fixes, idle_heads, idle_heads_measured, truth_agreement, harmful_rows)}
