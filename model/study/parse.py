"""study.yml read into a `Study` (`load`): every setting parsed and checked, an error naming
the file, the setting and what to fix; the corpus, the flip pairs, the confirmation corpus
and the replication read from the files it names.

Not here: what the settings mean (schema.py), the files' own checks (files.py, pairs.py).
"""
from __future__ import annotations

from pathlib import Path

from ..instrument import LENSES
from .files import StudyError, read_corpus, read_yaml
from .pairs import read_flip_pairs
from .schema import (HEAD_RULES, AnchorSpec, Bootstrap, Calibration, FlipHeads, FreshCorpus, KernelPaths, MeanAblation,
                     ModelSpec, Picks, Replication, Sensitivity, SimulatedMachine, StopRule, Study)


def load(path: str | Path) -> Study:
    path = Path(path)
    raw = read_yaml(path, "study file")
    if not isinstance(raw, dict):
        raise StudyError(f"{path}: expected a mapping of settings")
    try:
        corpus_path = path.parent / raw["corpus"]
        sentences, registers = read_corpus(corpus_path)
        rule = raw["stop_rule"]
        stop_rule = StopRule(tuple(rule["lenses"]), float(rule["threshold"]), int(rule["max_rows_above"]))
        flip_path = path.parent / raw["flip_pairs"] if "flip_pairs" in raw else None
        pairs, nulls = read_flip_pairs(flip_path) if flip_path else ((), ())
        flip_heads = _flip_heads(path, raw["flip_heads"]) if pairs else None
        anchors = tuple(AnchorSpec(a["sentence"], a["from"], a["to"]) for a in raw.get("anchors", []))
        positional = float(raw["head_rule"]["positional_threshold"])
        tie_tolerance = float(raw["head_rule"]["tie_tolerance"])
        models = tuple(ModelSpec(str(m["name"]), str(m["key"]), str(m.get("checkpoint", m["name"])),
                                 int(m.get("oracle_every", 1))) for m in raw["models"])
        b = raw["bootstrap"]
        bootstrap = Bootstrap(int(b["resamples"]), int(b["seed"]), float(b["level"]))
        runtime = raw.get("runtime", {})
        runtime_models = tuple(str(k) for k in runtime.get("models", []))
        runtime_tolerance = float(runtime.get("tolerance", 0.0))
        alt = raw.get("sensitivity") or {}
        sensitivity = Sensitivity(tuple(float(t) for t in alt.get("positional_threshold", [])),
                                  tuple(float(t) for t in alt.get("tie_tolerance", [])),
                                  tuple(str(r) for r in alt.get("head_rule", [])),
                                  bool(alt.get("punctuation_as_sink", False)))
        zeroing_every = {str(k): int(v) for k, v in (raw.get("value_zeroing_every") or {}).items()}
        ablation_every = {str(k): int(v) for k, v in (raw.get("ablation_every") or {}).items()}
        truth_oracle_every = int(raw.get("truth_oracle_every", 1))
        p = raw.get("picks") or {}
        pick_rules = Picks(float(p.get("tie_tolerance", 0.0)), float(p.get("margin_floor", 0.0)))
        simulated = SimulatedMachine(float((raw.get("simulated_machine") or {}).get("nudge", 0.0)))
        k = raw.get("kernel_paths") or {}
        kernel_paths = KernelPaths(str(k.get("measured_on", "")), float(k.get("near", 0.0)),
                                   float(k.get("margin_move", 0.0)), float(k.get("layer_difference", 0.0)))
        calibration = _calibration(path, raw) if "calibration" in raw else None
    except StudyError:
        raise  # the corpus's own error, naming its file and line
    except KeyError as exc:
        raise StudyError(f"{path}: missing setting {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise StudyError(f"{path}: malformed setting ({exc})") from exc
    for lens in stop_rule.lenses:
        if lens not in LENSES[1:]:
            raise StudyError(f"{path}: stop_rule lens {lens!r} is not one of {LENSES[1:]}")
    for a in anchors:
        if a.sentence not in sentences:
            raise StudyError(f"{path}: anchors sentence {a.sentence!r} is not in {corpus_path.name}")
    if not models:
        raise StudyError(f"{path}: models is empty")
    keys = [m.key for m in models]
    if len(set(keys)) != len(keys) or not all(k.isidentifier() for k in keys):
        raise StudyError(f"{path}: model keys {keys} must be distinct identifiers")
    unknown = sorted(set(runtime_models) - set(keys))
    if unknown:
        raise StudyError(f"{path}: runtime models {unknown} are not among the model keys {keys}")
    unknown = sorted(set(calibration.replication.models if calibration and calibration.replication else ()) - set(keys))
    if unknown:   # after the models' own checks: an error names the first thing wrong
        raise StudyError(f"{path}: replication models {unknown} are not among the model keys {keys}")
    for name, every in (("value_zeroing_every", zeroing_every), ("ablation_every", ablation_every)):
        if set(every) - set(keys) or any(n < 1 for n in every.values()):
            raise StudyError(f"{path}: {name} needs model keys among {keys} and whole numbers >= 1")
    for key, n in zeroing_every.items():
        if n % ablation_every.get(key, 1):
            raise StudyError(f"{path}: value_zeroing_every[{key}] = {n} must be a multiple of ablation_every[{key}] "
                             "(value zeroing's sample sits inside the ablation's)")
    if not (0 <= pick_rules.tie_tolerance < 1 and 0 <= pick_rules.margin_floor < 1):
        raise StudyError(f"{path}: picks needs tie_tolerance and margin_floor in [0, 1)")
    if not 0 <= simulated.nudge < 1e-2:
        raise StudyError(f"{path}: simulated_machine nudge must be in [0, 0.01), a rounding-sized nudge")
    if truth_oracle_every < 1:
        raise StudyError(f"{path}: truth_oracle_every must be a whole number >= 1")
    if bootstrap.resamples < 1 or not 0 < bootstrap.level < 1:
        raise StudyError(f"{path}: bootstrap needs resamples >= 1 and 0 < level < 1")
    if not 0 <= tie_tolerance < 1:
        raise StudyError(f"{path}: head_rule tie_tolerance must be in [0, 1), got {tie_tolerance}")
    unknown = sorted(set(sensitivity.head_rule) - set(HEAD_RULES))
    if unknown:
        raise StudyError(f"{path}: sensitivity head_rule {unknown} not among {list(HEAD_RULES)}")
    return Study(path, corpus_path, tuple(sentences), tuple(registers), models, stop_rule, positional,
                 tie_tolerance, bootstrap, pairs, nulls, flip_heads, anchors, runtime_models, runtime_tolerance,
                 sensitivity=sensitivity, value_zeroing_every=zeroing_every,
                 ablation_every=ablation_every, truth_oracle_every=truth_oracle_every, picks=pick_rules,
                 simulated_machine=simulated, kernel_paths=kernel_paths, flip_pairs_path=flip_path, calibration=calibration)


def _calibration(path: Path, raw: dict) -> Calibration:
    c, conf = raw["calibration"], raw["confirmation"]
    corpus = path.parent / conf["corpus"]
    sentences, registers = read_corpus(corpus)
    cal = Calibration(str(c["primary"]), {str(k): int(v) for k, v in (c.get("downstream_every") or {}).items()},
                      float(c["adopt"]["precision_lo"]), float(c["adopt"]["recall_lo"]), corpus,
                      tuple(sentences), tuple(registers), int(conf["min_words"]), int(conf["every"]),
                      min_truth_rows=int(c.get("min_truth_rows", 0)),
                      replication=_replication(path, raw["replication"]) if raw.get("replication") else None,
                      mean_ablation=_mean_ablation(path, raw) if raw.get("mean_ablation") else None)
    if cal.primary not in ("layer", "word", "sentence"):
        raise StudyError(f"{path}: calibration primary {cal.primary!r} is not one of layer, word, sentence")
    return cal


def _replication(path: Path, r: dict) -> Replication:
    corpus = path.parent / r["corpus"]
    sentences, registers = read_corpus(corpus)
    models = tuple(str(m) for m in r.get("models") or ())
    return Replication(corpus, tuple(sentences), tuple(registers), int(r["min_words"]), int(r["every"]),
                       int(r.get("offset", 0)), models, int(r.get("downstream_every", 1)), dict(r.get("power") or {}))


def _mean_ablation(path: Path, raw: dict) -> MeanAblation:
    m = raw["mean_ablation"]
    out = MeanAblation(str(m["means_from"]), dict(m["prediction"]), int(m["resamples"]), float(m["mc_sigmas"]),
                       str(m["multiplicity"]), _fresh(path, raw["fresh_corpus"]) if raw.get("fresh_corpus") else None)
    if out.means_from != "fit" or out.multiplicity != "bonferroni" or out.resamples < 1 or out.mc_sigmas <= 0:
        raise StudyError(f"{path}: mean_ablation needs means_from: fit, multiplicity: bonferroni, resamples >= 1 "
                         "and mc_sigmas > 0 (the only ones implemented)")
    return out


def _fresh(path: Path, f: dict) -> FreshCorpus:
    """The fresh corpus's rule; its sentences once `python -m model.fresh` has written them."""
    corpus = path.parent / f["corpus"]
    sentences, registers = read_corpus(corpus) if corpus.is_file() else ([], [])
    return FreshCorpus(corpus, tuple(sentences), tuple(registers), Path(f["source"]),
                       {str(k): str(v) for k, v in f["parts"].items()}, int(f["min_words"]), int(f["max_words"]),
                       tuple(str(m) for m in f.get("models") or ()), int(f["target_rows"]), float(f["plan"]),
                       int(f["max_sentences"]))


def _flip_heads(path: Path, raw) -> FlipHeads:
    heads = FlipHeads(float(raw["alpha"]), str(raw["correction"]), int(raw["permutations"]),
                      float(raw["null_quantile"]), int(raw["seed"]))
    if heads.correction != "bonferroni":
        raise StudyError(f"{path}: flip_heads correction {heads.correction!r}: only 'bonferroni' is implemented")
    if not 0 < heads.alpha < 1 or not 0 < heads.null_quantile < 1 or heads.permutations < 1:
        raise StudyError(f"{path}: flip_heads needs 0 < alpha < 1, 0 < null_quantile < 1 and permutations >= 1")
    return heads
