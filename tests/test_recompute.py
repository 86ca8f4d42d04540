"""Parts 9 and 10's published figures, recomputed from results.json alone, as a reader of the download
would: no import of this project's code (model/, livenumbers/), only the JSON, numpy, scipy
and the rules written on the method page. Each figure is compared with what the numbers lock
publishes, so a count, share, interval or verdict that the rows do not support fails here.

The rows (results.json, models.<key>.calibration.sets.<corpus>.rows): each displayed row's
sentence and word, every reading's sink share (`readings.<reading>`), and each truth's share
on the head the reading opens (`truths.layer.<reading>`; the word and sentence truths, on
alpha's head only: `truths.<truth>.alpha_head`; Part 10's mean-ablation truth, likewise:
`truths.mean.alpha_head`); null where not measured.

Part 10's verdicts are read with bounds no seed decides (the method page): each lower bound the
percentile bootstrap's, with its Monte Carlo margin, beside the exact Clopper-Pearson bound; they
are recomputed here the same way, and read again under ten other seeds, which must not turn any.
"""
from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from scipy import stats as sps

from conftest import ROOT

THRESHOLD = 0.5          # the badge fires above half, the truth is above half above it (method page)
DOWNSTREAM = ("word", "sentence")


@functools.lru_cache(maxsize=3)   # one corpus's matrix serves every reading and bound of a seed, Parts 9 and 10
def resampled_counts(seed: int, m: int, resamples: int) -> np.ndarray:
    """How often each of m sentences is drawn in each resample [resamples, m]: it depends on the
    seed and m alone (the fresh corpus's, 20000 x 1607, took most of this file's minutes when
    drawn again for each bound)."""
    return np.random.default_rng(seed).multinomial(m, np.full(m, 1.0 / m), size=resamples).astype(float)


def bootstrap_ratio_lo_hi(num, den, sentence, boot):
    """The percentile interval of sum(num)/sum(den) over sentences resampled with replacement
    (the method page's bootstrap: the study's seed and number of resamples; a resample with no
    row in the denominator left out)."""
    sentences = sorted(set(sentence))
    unit = np.searchsorted(sentences, sentence)
    n = len(sentences)
    counts = resampled_counts(boot["seed"], n, boot["resamples"])
    per_num = np.bincount(unit, weights=num.astype(float), minlength=n)
    per_den = np.bincount(unit, weights=den.astype(float), minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (counts @ per_num) / (counts @ per_den)
    draws = draws[~np.isnan(draws)]
    tail = (1 - boot["level"]) / 2 * 100
    return tuple(np.percentile(draws, [tail, 100 - tail])) if draws.size else (None, None)


def recomputed(results: dict):
    """Every (key, value) of Part 9 this file can recompute from the rows."""
    boot = results["bootstrap"]
    settings = results["calibration"]
    for model, m in results["models"].items():
        cal = m["calibration"]
        for corpus, st in cal["sets"].items():
            rows = st["rows"]
            for truth, per in rows["truths"].items():
                for reading, x in rows["readings"].items():
                    y = per["alpha_head"] if truth in DOWNSTREAM else per.get(reading)
                    if y is None or truth not in st["truths"] or reading not in st["truths"][truth]:
                        continue   # Part 10's truth ("mean") is scored apart: part10_recomputed
                    keep = [i for i, (a, b) in enumerate(zip(x, y)) if a is not None and b is not None]
                    xs, ys = np.array([x[i] for i in keep]), np.array([y[i] for i in keep])
                    sentence = np.array([rows["sentence"][i] for i in keep])
                    badge, above = xs > THRESHOLD, ys > THRESHOLD
                    key = f"{model}.cal.{corpus}.{truth}.{reading}"
                    yield f"{key}.n_rows", len(keep)
                    yield f"{key}.n_badged", int(badge.sum())
                    yield f"{key}.n_truth_above", int(above.sum())
                    yield f"{key}.n_both", int((badge & above).sum())
                    for stat, den in (("precision", badge), ("recall", above)):
                        if den.any():
                            yield f"{key}.{stat}", float((badge & above).sum() / den.sum())
                            lo, hi = bootstrap_ratio_lo_hi(badge & above, den, sentence, boot)
                            yield f"{key}.{stat}_lo", lo
                            yield f"{key}.{stat}_hi", hi
                    if len(keep) > 2 and np.ptp(xs) > 0 and np.ptp(ys) > 0:
                        yield f"{key}.spearman", float(sps.spearmanr(xs, ys).statistic)
        # The verdicts (method page): fit if both lower bounds clear the bars on corpus.tsv's held-out
        # half and on the confirmation corpus; undetermined with too few rows above half on either;
        # not measured with no row on either (value zeroing's confirmation rows: its sample skips them).
        primary = settings["primary"]
        for reading, score in cal["sets"]["corpus"]["truths"][primary].items():
            other = cal["sets"]["confirmation"]["truths"][primary][reading]
            passes = lambda s: (s["precision_lo"] is not None and s["recall_lo"] is not None
                                and s["precision_lo"] >= settings["precision_lo"] and s["recall_lo"] >= settings["recall_lo"])
            few = min(score["n_truth_above"], other["n_truth_above"]) < settings["min_truth_rows"]
            yield f"{model}.cal.verdict.{reading}", ("not measured" if not (score["n_rows"] and other["n_rows"])
                                                     else "undetermined" if few
                                                     else "fit" if passes(score) and passes(other) else "not fit")


@pytest.fixture(scope="module")
def downloaded(session_results) -> tuple[dict, dict]:
    """(results.json as a reader downloads it, the numbers lock): plain JSON."""
    results, _ = session_results
    return json.loads(json.dumps(results)), json.loads((ROOT / "docs" / "numbers.lock.json").read_text())["numbers"]


def test_part9_figures_recompute_from_results_json_alone(downloaded):
    results, locked = downloaded
    checked, wrong = compare(recomputed(results), locked)
    assert not wrong, "\n".join(wrong)
    assert checked > 100   # the published Part 9 figures, not a handful


def test_the_rows_hold_every_scored_row(downloaded):
    """results.json's rows are the rows each score is formed over (its n_rows), every corpus."""
    results, _ = downloaded
    for model, m in results["models"].items():
        for corpus, st in m["calibration"]["sets"].items():
            assert len(st["rows"]["sentence"]) == st["n_rows"], (model, corpus)
            for truth, per in st["truths"].items():
                for reading, score in per.items():
                    x = st["rows"]["readings"][reading]
                    y = st["rows"]["truths"][truth]["alpha_head" if truth in DOWNSTREAM else reading]
                    assert sum(a is not None and b is not None for a, b in zip(x, y)) == score["n_rows"], (model, corpus, truth, reading)


# -- Part 10 ------------------------------------------------------------------------------------------

PART10_READINGS = ("alpha", "value_norm_on_alpha", "output_norm_on_alpha", "kobayashi2021", "alti")


def part10_bound(k: int, n: int, num, den, sentence, seed: int, resamples: int, tail: float, sigmas: float,
                 bar: float) -> tuple[float | None, float, float | None, str]:
    """(the bootstrap's bound, its Monte Carlo margin, the exact bound, the verdict against `bar`)
    of a share of k rows in n (the method page's rule)."""
    exact = None if n == 0 else 0.0 if k == 0 else float(sps.beta.ppf(tail, k, n - k + 1))
    sentences = sorted(set(sentence))
    unit = np.searchsorted(sentences, sentence)
    m = len(sentences)
    if n == 0 or m == 0:
        return None, 0.0, exact, "undetermined"
    counts = resampled_counts(seed, m, resamples)
    d = counts @ np.bincount(unit, weights=den.astype(float), minlength=m)
    draws = (counts @ np.bincount(unit, weights=num.astype(float), minlength=m))[d > 0] / d[d > 0]
    spread = sigmas * np.sqrt(tail * (1 - tail) / draws.size)
    low, boot, high = np.quantile(draws, [max(0.0, tail - spread), tail, min(1.0, tail + spread)])
    margin = float(max(boot - low, high - boot))
    if boot - margin >= bar and exact >= bar:
        return float(boot), margin, exact, "clears"
    if boot + margin < bar or exact < bar:
        return float(boot), margin, exact, "misses"
    return float(boot), margin, exact, "undetermined"


def combined(verdicts: list[str]) -> str:
    return "misses" if "misses" in verdicts else "clears" if all(v == "clears" for v in verdicts) else "undetermined"


def part10_recomputed(results: dict, seed_offset: int = 0):
    """Every (key, value) of Part 10 this file can recompute from the rows (and, for Part 9's
    amendment, the word truth read the same way); `seed_offset`: another seed."""
    ma_settings, boot, cal_settings = results["mean_ablation"], results["bootstrap"], results["calibration"]
    seed, tail = boot["seed"] + seed_offset, (1 - boot["level"]) / 2
    bars = {"precision": cal_settings["precision_lo"], "recall": cal_settings["recall_lo"]}
    for model, m in results["models"].items():
        cal = m["calibration"]
        for truth in ("mean", "word"):
            part = cal["mean_ablation"].get(truth)
            if not part:
                continue
            verdicts: dict[tuple, dict] = {}
            for corpus in part["sets"]:
                rows = cal["sets"][corpus]["rows"]
                y_all = rows["truths"][truth]["alpha_head"]
                for reading in PART10_READINGS:
                    x_all = rows["readings"][reading]
                    keep = [i for i, (a, b) in enumerate(zip(x_all, y_all)) if a is not None and b is not None]
                    xs, ys = np.array([x_all[i] for i in keep]), np.array([y_all[i] for i in keep])
                    sentence = np.array([rows["sentence"][i] for i in keep])
                    badge, above = xs > THRESHOLD, ys > THRESHOLD
                    k = int((badge & above).sum())
                    key = f"{model}.ma.{truth}.{corpus}.{reading}"
                    yield f"{key}.n_badged", int(badge.sum())
                    yield f"{key}.n_truth_above", int(above.sum())
                    yield f"{key}.n_both", k
                    for level, t in (("", tail), ("_adjusted", tail / len(PART10_READINGS))):
                        found = []
                        for stat, den in (("precision", badge), ("recall", above)):
                            b, margin, exact, verdict = part10_bound(k, int(den.sum()), badge & above, den, sentence, seed,
                                                                     ma_settings["resamples"], t, ma_settings["mc_sigmas"],
                                                                     bars[stat])
                            found.append(verdict)
                            yield f"{key}.{stat}_verdict{level}", verdict
                            if not seed_offset and not level:
                                yield f"{key}.{stat}_exact_lo", exact
                                yield f"{key}.{stat}_boot_lo", b
                        verdicts.setdefault((reading, level), {})[corpus] = combined(found)
            word = {"clears": "fit", "misses": "not fit"}
            for reading in PART10_READINGS:
                yield f"{model}.ma.{truth}.verdict.{reading}", word.get(combined(list(verdicts[(reading, '')].values())),
                                                                       "undetermined")
            adjusted = {r: word.get(combined(list(verdicts[(r, '_adjusted')].values())), "undetermined")
                        for r in PART10_READINGS}
            yield f"{model}.ma.{truth}.model_verdict.verdict", ("fit" if "fit" in adjusted.values() else
                                                                "not fit" if set(adjusted.values()) == {"not fit"}
                                                                else "undetermined")


def compare(recomputed_pairs, locked: dict) -> tuple[int, list[str]]:
    """(how many recomputed figures the lock holds, those it holds with another value)."""
    checked, wrong = 0, []
    for key, value in recomputed_pairs:
        entry = locked.get(key)
        if entry is None or value is None:
            continue
        checked += 1
        if isinstance(entry["value"], str) or isinstance(value, str):
            ok = entry["value"] == value
        else:
            ok = abs(float(entry["value"]) - float(value)) <= entry["tolerance"] + 1e-12
        if not ok:
            wrong.append(f"{key}: locked {entry['value']!r}, recomputed {value!r}")
    return checked, wrong


def test_part10_figures_recompute_from_results_json_alone(downloaded):
    results, locked = downloaded
    checked, wrong = compare(part10_recomputed(results), locked)
    assert not wrong, "\n".join(wrong)
    assert checked > 50


def test_no_part10_verdict_turns_under_ten_other_seeds(downloaded):
    """The bounds' Monte Carlo margin is what keeps a seed from deciding a verdict: under ten
    other seeds, every bound's verdict, every reading's and every model's is the published one."""
    results, locked = downloaded
    for offset in range(1, 11):
        verdicts = [(k, v) for k, v in part10_recomputed(results, offset) if "verdict" in k]
        checked, wrong = compare(verdicts, locked)
        assert not wrong, f"seed + {offset}:\n" + "\n".join(wrong)
        assert checked > 20

