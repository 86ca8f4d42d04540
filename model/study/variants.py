"""The same study on other inputs: a study.yml mapping with fewer models (`with_models`), the
study's rules on your own sentences (`with_sentences`, the command line's), and on another
corpus read as one held-out set (`with_sentences_of`, Part 9's confirmation and replication).

Not here: reading study.yml (parse.py).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from .files import read_sentences
from .schema import ModelSpec, Study


def with_models(raw: dict, models: list[dict]) -> dict:
    """A study.yml mapping that lists `models` instead of its own: the settings kept per
    model key (part 8's samples, the runtime's models) keep those keys only, as a study of
    fewer models must (`load` refuses a key it does not list)."""
    keys = {str(m["key"]) for m in models}
    out = dict(raw, models=models)
    for name in ("value_zeroing_every", "ablation_every"):
        if raw.get(name):
            out[name] = {k: v for k, v in raw[name].items() if str(k) in keys}
    if raw.get("runtime"):
        out["runtime"] = dict(raw["runtime"], models=[k for k in raw["runtime"].get("models", []) if str(k) in keys])
    if (raw.get("calibration") or {}).get("downstream_every"):
        out["calibration"] = dict(raw["calibration"], downstream_every={
            k: v for k, v in raw["calibration"]["downstream_every"].items() if str(k) in keys})
    if raw.get("replication"):
        out["replication"] = dict(raw["replication"], models=[k for k in raw["replication"].get("models", []) if str(k) in keys])
    return out


def with_sentences(base: Study, sentences_path: str | Path, model: str | None) -> Study:
    """The same study (rules, thresholds) on someone else's sentences, for the CLI.

    Anchors are kept only where their sentences are in the new file.
    """
    path = Path(sentences_path)
    sentences = tuple(read_sentences(path))
    models = base.models if model is None else (ModelSpec(model, "model", model),)
    return Study(
        path=base.path,
        corpus_path=path,
        sentences=sentences,
        registers=tuple("yours" for _ in sentences),
        models=models[:1],
        stop_rule=base.stop_rule,
        positional_threshold=base.positional_threshold,
        tie_tolerance=base.tie_tolerance,
        bootstrap=base.bootstrap,
        flip_pairs=(),
        anchors=tuple(a for a in base.anchors if a.sentence in sentences),
        split=False,
        picks=base.picks,
    )


def with_sentences_of(base: Study, sentences: tuple[str, ...], registers: tuple[str, ...], path: Path) -> Study:
    """The same study on another corpus (Part 9's confirmation corpus), every sentence one
    held-out set (nothing is fitted on it)."""
    return dataclasses.replace(base, corpus_path=path, sentences=sentences, registers=registers, split=False,
                               anchors=(), flip_pairs=(), null_pairs=())
