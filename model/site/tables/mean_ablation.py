"""Tables of Part 10 (model/mean_ablation/): every reading on α's head against the mean-ablation
truth, on corpus.tsv's held-out half, the confirmation corpus and the fresh corpus, with the
bounds whose verdicts no seed decides; the readings' rank agreement with each truth side by side;
and Part 9's verdicts read with the same bounds (its amendment).

Each takes the page's renderer (`r`) and returns Markdown; every number goes through `r.cite`."""
from __future__ import annotations

from livenumbers.tables import md_table

from .calibration import _verdict, reading_label

CORPORA = {"corpus": "held-out half", "confirmation": "confirmation corpus", "fresh": "fresh corpus"}
TRUTHS = {"": "mean-ablation truth", "_word": "word truth", "_layer": "layer truth"}


def _bound(r, key: str) -> str:
    """An estimate and the lower bound its verdict reads, "62% (≥ 51%)"; a dash without rows."""
    if r.numbers.get(key) is None:
        return "—"
    return f"{r.cite(key, 'pct:0')} (≥ {r.cite(f'{key}_lo', 'pct:0')})"


def _corpora(r, model: str, truth: str = "mean") -> list[str]:
    return list(r.results["models"][model]["calibration"]["mean_ablation"][truth]["sets"])


def mean_ablation(r, model: str) -> str:
    """Per reading, on each corpus measured: its badges, the rows whose truth is above half, its
    precision and recall with the lower bounds their verdicts read, each bound's verdict; and the
    reading's verdict over the corpora."""
    corpora = _corpora(r, model)
    rows = []
    for reading in r.results["models"][model]["calibration"]["mean_ablation"]["mean"]["sets"][corpora[0]]:
        row = [reading_label(reading)]
        for corpus in corpora:
            p = f"{model}.ma.mean.{corpus}.{reading}"
            row += [r.cite(f"{p}.n_badged", "int"), r.cite(f"{p}.n_truth_above", "int"), _bound(r, f"{p}.precision"),
                    _bound(r, f"{p}.recall"),
                    f"{_verdict(r, f'{p}.precision_verdict')}, {_verdict(r, f'{p}.recall_verdict')}"]
        row.append(_verdict(r, f"{model}.ma.mean.verdict.{reading}"))
        rows.append(row)
    head = ["Reading"]
    for corpus in corpora:
        head += [f"{h} ({CORPORA[corpus]})" for h in ("Badges", "Truth above half", "Precision", "Recall",
                                                       "Bounds: precision, recall")]
    return md_table(head + ["Verdict"], rows)


def mean_ablation_verdicts(r) -> str:
    """Per reading and model: the verdict under the mean-ablation truth, over the corpora measured
    on that model; and each model's, fit if some reading clears at the level Bonferroni's
    adjustment over the readings gives."""
    models = [m for m in r.results["models"] if (r.results["models"][m].get("calibration") or {}).get("mean_ablation")]
    readings = [k for k in r.results["models"][models[0]]["calibration"]["mean_ablation"]["mean"]["verdict"] if k != "margins"]
    rows = [[reading_label(reading)] + [_verdict(r, f"{m}.ma.mean.verdict.{reading}") for m in models] for reading in readings]
    rows.append(["**The model** (Bonferroni over the readings)"] +
                [f"**{_verdict(r, f'{m}.ma.mean.model_verdict.verdict')}**" for m in models])
    return md_table(["Reading"] + [r.cite(f"{m}.model", "text") for m in models], rows)


def rank_agreement(r, model: str, corpus: str = "corpus") -> str:
    """Per reading, its rank agreement (Spearman, with its interval) with the mean-ablation truth,
    the word truth and the layer truth, on the same rows of one corpus."""
    p = f"{model}.ma.mean.{corpus}"
    rows = []
    for reading in r.results["models"][model]["calibration"]["mean_ablation"]["mean"]["sets"][corpus]:
        row = [reading_label(reading)]
        for suffix in TRUTHS:
            key = f"{p}.{reading}.spearman{suffix}"
            row.append("—" if r.numbers.get(key) is None else
                       f"{r.cite(key, 'fixed:2')} ({r.cite(f'{key}_lo', 'fixed:2')} to {r.cite(f'{key}_hi', 'fixed:2')})")
        rows.append(row)
    return md_table(["Reading"] + [f"Rank agreement with the {name}" for name in TRUTHS.values()], rows)


def part9_amended(r) -> str:
    """Part 9's verdicts under its registered word truth, as registered (the bootstrap's bounds,
    its seed) and read with the bounds no seed decides (the amendment Part 10 registered), with
    each model's verdict, Bonferroni-adjusted over the readings."""
    models = list(r.results["models"])
    readings = [k for k in r.results["models"][models[0]]["calibration"]["mean_ablation"]["word"]["verdict"]
                if k != "margins"]
    rows = [[reading_label(reading)] + [x for m in models for x in (_verdict(r, f"{m}.cal.verdict_registered.{reading}"),
                                                                     _verdict(r, f"{m}.ma.word.verdict.{reading}"))]
            for reading in readings]
    rows.append(["**The model**"] + [x for m in models for x in (
        f"**{_verdict(r, f'{m}.cal.model_verdict.registered')}**",
        f"**{_verdict(r, f'{m}.ma.word.model_verdict.verdict')}** (Bonferroni)")])
    head = ["Reading"] + [f"{r.cite(f'{m}.model', 'text')}: {h}" for m in models for h in ("as registered", "no seed decides")]
    return md_table(head, rows)


TABLES = {
    "mean_ablation": mean_ablation,
    "mean_ablation_verdicts": mean_ablation_verdicts,
    "rank_agreement": rank_agreement,
    "part9_amended": part9_amended,
}
