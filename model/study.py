"""The study's inputs: `docs/study.yml` (fixed in advance) and the corpus it names.

Errors name the file and, where there is one, the line, and say what to fix.
"""
from __future__ import annotations

from .errors import UserError

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .instrument import LENSES


class StudyError(UserError, ValueError):
    """A study file or corpus a reader must fix; the message names file and line."""


@dataclass(frozen=True)
class StopRule:
    lenses: tuple[str, ...]
    threshold: float
    max_rows_above: int


@dataclass(frozen=True)
class FlipPair:
    sentences: tuple[str, str]
    pronoun: str
    candidates: tuple[str, ...]
    referents: tuple[str, str]


@dataclass(frozen=True)
class Anchor:
    sentence: str
    from_word: str
    to_word: str


@dataclass(frozen=True)
class ModelSpec:
    name: str   # packaged short name or folder path
    key: str    # prefix of this model's numbers on the pages


@dataclass(frozen=True)
class Study:
    path: Path
    corpus_path: Path
    sentences: tuple[str, ...]
    models: tuple[ModelSpec, ...]
    stop_rule: StopRule
    positional_threshold: float
    flip_pairs: tuple[FlipPair, ...] = field(default=())
    anchors: tuple[Anchor, ...] = field(default=())


def read_sentences(path: Path) -> list[str]:
    """One sentence a line. Blank lines and undecodable bytes are errors, not skipped."""
    if not path.is_file():
        raise StudyError(f"{path}: sentences file not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StudyError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from exc
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028, form feeds and
    # the like, which would split a sentence in two and shift every line number after it.
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if not lines:
        raise StudyError(f"{path}: no sentences")
    for i, line in enumerate(lines, 1):
        if not line.strip():
            raise StudyError(f"{path}:{i}: empty line (one sentence a line, no blank lines)")
    return [line.strip() for line in lines]


def load(path: str | Path) -> Study:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise StudyError(f"{path}: study file not found") from exc
    except yaml.YAMLError as exc:
        raise StudyError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(raw, dict):
        raise StudyError(f"{path}: expected a mapping of settings")
    try:
        corpus_path = path.parent / raw["corpus"]
        sentences = read_sentences(corpus_path)
        rule = raw["stop_rule"]
        stop_rule = StopRule(tuple(rule["lenses"]), float(rule["threshold"]), int(rule["max_rows_above"]))
        pairs = tuple(
            FlipPair(tuple(p["sentences"]), p["pronoun"], tuple(p["candidates"]), tuple(p["referents"]))
            for p in raw.get("flip_pairs", [])
        )
        anchors = tuple(Anchor(a["sentence"], a["from"], a["to"]) for a in raw.get("anchors", []))
        positional = float(raw["head_rule"]["positional_threshold"])
        models = tuple(ModelSpec(str(m["name"]), str(m["key"])) for m in raw["models"])
    except StudyError:
        raise  # the corpus's own error, naming its file and line
    except KeyError as exc:
        raise StudyError(f"{path}: missing setting {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise StudyError(f"{path}: malformed setting ({exc})") from exc
    for lens in stop_rule.lenses:
        if lens not in LENSES[1:]:
            raise StudyError(f"{path}: stop_rule lens {lens!r} is not one of {LENSES[1:]}")
    for where, text in [("flip_pairs", s) for p in pairs for s in p.sentences] + [
        ("anchors", a.sentence) for a in anchors
    ]:
        if text not in sentences:
            raise StudyError(f"{path}: {where} sentence {text!r} is not in {corpus_path.name}")
    if not models:
        raise StudyError(f"{path}: models is empty")
    keys = [m.key for m in models]
    if len(set(keys)) != len(keys) or not all(k.isidentifier() for k in keys):
        raise StudyError(f"{path}: model keys {keys} must be distinct identifiers")
    return Study(path, corpus_path, tuple(sentences), models, stop_rule, positional, pairs, anchors)


def with_sentences(base: Study, sentences_path: str | Path, model: str | None) -> Study:
    """The same study (rules, thresholds) on someone else's sentences, for the CLI.

    Flip pairs and anchors are kept only where their sentences are in the new file.
    """
    path = Path(sentences_path)
    sentences = tuple(read_sentences(path))
    models = base.models if model is None else (ModelSpec(model, "model"),)
    return Study(
        path=base.path,
        corpus_path=path,
        sentences=sentences,
        models=models[:1],
        stop_rule=base.stop_rule,
        positional_threshold=base.positional_threshold,
        flip_pairs=tuple(p for p in base.flip_pairs if all(s in sentences for s in p.sentences)),
        anchors=tuple(a for a in base.anchors if a.sentence in sentences),
    )
