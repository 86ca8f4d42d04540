"""The study's inputs: `docs/study.yml` (fixed in advance), the corpus and the flip pairs it names.

Errors name the file and, where there is one, the line, and say what to fix.
"""
from __future__ import annotations

from .errors import UserError

import hashlib
import re
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
class AnchorSpec:
    sentence: str
    from_word: str
    to_word: str


@dataclass(frozen=True)
class Bootstrap:
    resamples: int     # resampled corpora (of sentences, or of flip pairs)
    seed: int          # fixed, so the intervals are numbers like any other
    level: float       # 0.95: the 2.5th to the 97.5th percentile


@dataclass(frozen=True)
class ModelSpec:
    name: str        # packaged short name or folder path
    key: str         # prefix of this model's numbers on the pages
    checkpoint: str  # the published checkpoint, for readers
    oracle_every: int = 1  # the float64 oracle re-runs every n-th sentence (1: all of them)


@dataclass(frozen=True)
class Study:
    path: Path
    corpus_path: Path
    sentences: tuple[str, ...]
    registers: tuple[str, ...]          # one per sentence (news, fiction, ...)
    models: tuple[ModelSpec, ...]
    stop_rule: StopRule
    positional_threshold: float
    bootstrap: Bootstrap
    flip_pairs: tuple[FlipPair, ...] = field(default=())
    anchors: tuple[AnchorSpec, ...] = field(default=())
    runtime_models: tuple[str, ...] = field(default=())   # model keys the browser runtime serves
    runtime_tolerance: float = 0.0                         # its agreement with the reference, enforced by the tests
    split: bool = True    # False: fit the head rule on every sentence and report on every one (the CLI)
    # Part 8's samples (study.yml): model key -> every n-th sentence (default 1: all of them)
    value_zeroing_every: dict[str, int] = field(default_factory=dict)
    ablation_every: dict[str, int] = field(default_factory=dict)
    truth_oracle_every: int = 1   # the oracle re-runs part 8's measures on every n-th sentence

    def zeroing_sample(self, key: str) -> list[int]:
        """The sentences value zeroing is measured on (study.yml `value_zeroing_every`)."""
        return list(range(0, len(self.sentences), self.value_zeroing_every.get(key, 1)))

    def ablation_sample(self, key: str) -> list[int]:
        """The sentences the ablation ground truth is measured on (study.yml `ablation_every`)."""
        return list(range(0, len(self.sentences), self.ablation_every.get(key, 1)))

    @property
    def halves(self) -> dict[str, list[int]]:
        """Sentence indices of the two halves: "fit", where the head rule's one fitted
        choice (the positional heads) is made, and "test", held out, where the articles'
        statistics are measured. A sentence's half is fixed by its own text, whatever
        else the corpus holds: "fit" if the first byte of the SHA-256 of its UTF-8 text is
        even. Without a split, both are the whole corpus."""
        every = list(range(len(self.sentences)))
        if not self.split:
            return {"fit": every, "test": every}
        fit = [hashlib.sha256(s.encode("utf-8")).digest()[0] % 2 == 0 for s in self.sentences]
        return {"fit": [i for i in every if fit[i]], "test": [i for i in every if not fit[i]]}


def read_lines(path: Path) -> list[str]:
    """A UTF-8 file's lines. Blank lines and undecodable bytes are errors, not skipped."""
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
    return lines


def read_sentences(path: Path) -> list[str]:
    """One sentence a line (the CLI's input)."""
    return [line.strip() for line in read_lines(path)]


def read_corpus(path: Path) -> tuple[list[str], list[str]]:
    """The corpus: one `register<TAB>sentence` a line -> (sentences, registers)."""
    sentences, registers = [], []
    for i, line in enumerate(read_lines(path), 1):
        register, tab, sentence = line.partition("\t")
        if not tab or not register.strip() or not sentence.strip() or "\t" in sentence:
            raise StudyError(f"{path}:{i}: expected 'register<TAB>sentence' (one tab), got {line[:60]!r}")
        if sentence.strip() in sentences:
            raise StudyError(f"{path}:{i}: the same sentence is already on line {sentences.index(sentence.strip()) + 1}")
        sentences.append(sentence.strip())
        registers.append(register.strip())
    return sentences, registers


def _read_yaml(path: Path, what: str):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise StudyError(f"{path}: {what} not found") from exc
    except yaml.YAMLError as exc:
        raise StudyError(f"{path}: not valid YAML ({exc})") from exc


def _flip_pairs(path: Path) -> tuple[FlipPair, ...]:
    """The minimal pairs: a YAML file with a `flip_pairs` list (see docs/flip_pairs.yml)."""
    raw = _read_yaml(path, "flip pairs file")
    pairs = []
    for i, p in enumerate((raw or {}).get("flip_pairs", []), 1):
        try:
            pair = FlipPair(tuple(p["sentences"]), p["pronoun"], tuple(p["candidates"]), tuple(p["referents"]))
        except (KeyError, TypeError) as exc:
            raise StudyError(f"{path}: flip pair {i}: missing or malformed {exc}") from exc
        for text in pair.sentences:
            words = [w.lower() for w in re.findall(r"\w+", text)]
            for w in (pair.pronoun, *pair.candidates):
                if words.count(w.lower()) != 1:
                    raise StudyError(f"{path}: flip pair {i}: {w!r} must occur exactly once in {text!r}")
        if len(pair.sentences) != 2 or set(pair.referents) != set(pair.candidates) or len(pair.candidates) != 2:
            raise StudyError(f"{path}: flip pair {i}: two sentences, two candidates, referents one of each")
        pairs.append(pair)
    return tuple(pairs)


def load(path: str | Path) -> Study:
    path = Path(path)
    raw = _read_yaml(path, "study file")
    if not isinstance(raw, dict):
        raise StudyError(f"{path}: expected a mapping of settings")
    try:
        corpus_path = path.parent / raw["corpus"]
        sentences, registers = read_corpus(corpus_path)
        rule = raw["stop_rule"]
        stop_rule = StopRule(tuple(rule["lenses"]), float(rule["threshold"]), int(rule["max_rows_above"]))
        pairs = _flip_pairs(path.parent / raw["flip_pairs"]) if "flip_pairs" in raw else ()
        anchors = tuple(AnchorSpec(a["sentence"], a["from"], a["to"]) for a in raw.get("anchors", []))
        positional = float(raw["head_rule"]["positional_threshold"])
        models = tuple(ModelSpec(str(m["name"]), str(m["key"]), str(m.get("checkpoint", m["name"])),
                                 int(m.get("oracle_every", 1))) for m in raw["models"])
        b = raw["bootstrap"]
        bootstrap = Bootstrap(int(b["resamples"]), int(b["seed"]), float(b["level"]))
        runtime = raw.get("runtime", {})
        runtime_models = tuple(str(k) for k in runtime.get("models", []))
        runtime_tolerance = float(runtime.get("tolerance", 0.0))
        zeroing_every = {str(k): int(v) for k, v in (raw.get("value_zeroing_every") or {}).items()}
        ablation_every = {str(k): int(v) for k, v in (raw.get("ablation_every") or {}).items()}
        truth_oracle_every = int(raw.get("truth_oracle_every", 1))
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
    for name, every in (("value_zeroing_every", zeroing_every), ("ablation_every", ablation_every)):
        if set(every) - set(keys) or any(n < 1 for n in every.values()):
            raise StudyError(f"{path}: {name} needs model keys among {keys} and whole numbers >= 1")
    for key, n in zeroing_every.items():
        if n % ablation_every.get(key, 1):
            raise StudyError(f"{path}: value_zeroing_every[{key}] = {n} must be a multiple of ablation_every[{key}] "
                             "(value zeroing's sample sits inside the ablation's)")
    if truth_oracle_every < 1:
        raise StudyError(f"{path}: truth_oracle_every must be a whole number >= 1")
    if bootstrap.resamples < 1 or not 0 < bootstrap.level < 1:
        raise StudyError(f"{path}: bootstrap needs resamples >= 1 and 0 < level < 1")
    return Study(path, corpus_path, tuple(sentences), tuple(registers), models, stop_rule, positional,
                 bootstrap, pairs, anchors, runtime_models, runtime_tolerance, value_zeroing_every=zeroing_every,
                 ablation_every=ablation_every, truth_oracle_every=truth_oracle_every)


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
        bootstrap=base.bootstrap,
        flip_pairs=(),
        anchors=tuple(a for a in base.anchors if a.sentence in sentences),
        split=False,
    )
