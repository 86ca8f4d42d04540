"""The study's inputs: `docs/study.yml` (fixed in advance), the corpus and the flip pairs it names.

Errors name the file and, where there is one, the line, and say what to fix.
"""
from __future__ import annotations

from .errors import UserError

import dataclasses
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


ORDERS = ("original", "mirrored")


def words(text: str) -> list[str]:
    """A sentence's words as the flip pairs count them: runs of letters and digits, lowercased."""
    return [w.lower() for w in re.findall(r"\w+", text)]


@dataclass(frozen=True)
class FlipPair:
    sentences: tuple[str, str]
    pronoun: str
    candidates: tuple[str, ...]
    referents: tuple[str, str]      # the reader's, in the first and the second sentence (a null pair's: pseudo-referents)
    order: str = "original"         # "mirrored": the nouns named in the other order than in its original
    source: int | None = None       # the flip pair (1-based) this one mirrors, or a null pair's frame comes from

    def named_first(self, sentence: int = 0) -> str:
        """The candidate named first in one of the pair's sentences, read off the sentence."""
        ws = words(self.sentences[sentence])
        return min(self.candidates, key=lambda c: ws.index(c.lower()))

    def changed_words(self) -> list[tuple[int, str, str]]:
        """(position, word in the first sentence, in the second) wherever the two differ."""
        a, b = (words(s) for s in self.sentences)
        return [(k, x, y) for k, (x, y) in enumerate(zip(a, b)) if x != y]


@dataclass(frozen=True)
class FlipHeads:
    """The per-head sign tests of the adjective flip and the null of their maximum (study.yml)."""
    alpha: float           # significant below this after correction
    correction: str        # "bonferroni", over the model's heads outside layer 0
    permutations: int      # sign-flip permutations of the pairs
    null_quantile: float   # of the largest follow count under the null
    seed: int


@dataclass(frozen=True)
class AnchorSpec:
    sentence: str
    from_word: str
    to_word: str


@dataclass(frozen=True)
class Picks:
    """Picks over floats that rounding must not decide (model/picks.py, study.yml `picks`)."""
    tie_tolerance: float = 0.0   # candidates this close to the best tie; the first in order wins
    margin_floor: float = 0.0    # a cited number whose decision's margin is below this fails the gate


@dataclass(frozen=True)
class SimulatedMachine:
    """Another reader's machine, simulated (model/perturb.py; study.yml `simulated_machine`)."""
    nudge: float = 0.0   # the relative nudge of every layer's attention weights and output


@dataclass(frozen=True)
class KernelPaths:
    """Two real kernel paths of one CPU, measured (bench/kernels.py; study.yml `kernel_paths`): what
    the margin floor and the simulated machine's nudge are set from."""
    measured_on: str = ""
    near: float = 0.0               # the margins compared: those within this of turning
    margin_move: float = 0.0        # the largest move of a published margin among them
    layer_difference: float = 0.0   # the largest per-layer difference, relative to the layer's largest value


@dataclass(frozen=True)
class Calibration:
    """Part 9 (study.yml `calibration`, `confirmation`; model/calibration.py)."""
    primary: str                       # the truth the criterion is read on
    downstream_every: dict[str, int]   # model key -> the word and sentence truths on every n-th sentence
    precision_lo: float                # the criterion's bars on the lower bounds
    recall_lo: float
    confirmation_path: Path            # the confirmation corpus, chosen by the registered rule
    confirmation: tuple[str, ...]      # its sentences
    confirmation_registers: tuple[str, ...]
    min_words: int                     # the rule that chose it: examples of this many words or more,
    every: int                         # every n-th of them
    # A row is at the numerical floor where its sink and content effects are both below this many
    # times the reference-oracle disagreement on effects (the registration's words: "ten times").
    floor_times: int = 10
    # A verdict is undetermined on a corpus with fewer rows than this whose truth is above half
    # (the second amendment): with fewer, a reading right on every row could not pass.
    min_truth_rows: int = 0
    replication: "Replication | None" = None

    def settings(self) -> dict:
        """What the pages cite of it (results.json `calibration`)."""
        return {"primary": self.primary, "precision_lo": self.precision_lo, "recall_lo": self.recall_lo,
                "confirmation_sentences": len(self.confirmation), "min_words": self.min_words, "every": self.every,
                "floor_times": self.floor_times, "min_truth_rows": self.min_truth_rows}

    def downstream(self, key: str, n: int) -> list[int]:
        return list(range(0, n, self.downstream_every.get(key, 1)))


@dataclass(frozen=True)
class Replication:
    """Part 9's replication (study.yml `replication`), registered before its sentences were chosen."""
    path: Path                         # the corpus, chosen from WordNet by the registered rule
    sentences: tuple[str, ...]
    registers: tuple[str, ...]
    min_words: int                     # the rule: examples of this many words or more,
    every: int                         # every n-th of them,
    offset: int                        # from this one
    models: tuple[str, ...]            # model keys it is measured on
    downstream_every: int              # the word truth on every n-th sentence
    power: dict                        # the registered power figures, as the pages cite them

    def settings(self) -> dict:
        """What the pages cite of it (results.json `replication`)."""
        return {"sentences": len(self.sentences), "min_words": self.min_words, "every": self.every,
                "offset": self.offset, "downstream_every": self.downstream_every, "power": dict(self.power),
                "models": list(self.models)}


@dataclass(frozen=True)
class Bootstrap:
    resamples: int     # resampled corpora (of sentences, or of flip pairs)
    seed: int          # fixed, so the intervals are numbers like any other
    level: float       # 0.95: the 2.5th to the 97.5th percentile


@dataclass(frozen=True)
class Sensitivity:
    """Alternatives to the choices that could decide a verdict (model/sensitivity.py)."""
    positional_threshold: tuple[float, ...] = ()
    tie_tolerance: tuple[float, ...] = ()
    head_rule: tuple[str, ...] = ()          # "largest_content_mass", "one_head_for_all"
    punctuation_as_sink: bool = False


HEAD_RULES = ("largest_content_mass", "one_head_for_all")


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
    tie_tolerance: float                # head scores this close to the best tie (instrument.py)
    bootstrap: Bootstrap
    flip_pairs: tuple[FlipPair, ...] = field(default=())
    null_pairs: tuple[FlipPair, ...] = field(default=())   # the flip's control set (flip_pairs.yml)
    flip_heads: FlipHeads | None = None                    # required with flip pairs
    anchors: tuple[AnchorSpec, ...] = field(default=())
    runtime_models: tuple[str, ...] = field(default=())   # model keys the browser runtime serves
    runtime_tolerance: float = 0.0                         # its agreement with the reference, enforced by the tests
    split: bool = True    # False: fit the head rule on every sentence and report on every one (the CLI)
    sensitivity: Sensitivity = field(default=Sensitivity())
    # Part 8's samples (study.yml): model key -> every n-th sentence (default 1: all of them)
    value_zeroing_every: dict[str, int] = field(default_factory=dict)
    ablation_every: dict[str, int] = field(default_factory=dict)
    truth_oracle_every: int = 1   # the oracle re-runs part 8's measures on every n-th sentence
    picks: Picks = field(default=Picks())
    simulated_machine: SimulatedMachine = field(default=SimulatedMachine())
    kernel_paths: KernelPaths = field(default=KernelPaths())
    flip_pairs_path: Path | None = None   # the flip pairs' file, if the study names one
    calibration: Calibration | None = None

    @property
    def files(self) -> tuple[Path, ...]:
        """The files the study is read from: study.yml, the corpus, the flip pairs, the
        confirmation corpus."""
        cal = self.calibration
        return (self.path, self.corpus_path, *((self.flip_pairs_path,) if self.flip_pairs_path else ()),
                *((cal.confirmation_path,) if cal else ()), *((cal.replication.path,) if cal and cal.replication else ()))

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


_PAIR_FIELDS = {"sentences", "pronoun", "candidates", "referents"}


def _pair(path: Path, name: str, p, extra: set[str]) -> FlipPair:
    """One pair's common fields, checked: two sentences that differ in one word after the
    pronoun and both candidates, each of those named exactly once, referents one of each."""
    try:
        unknown = sorted(set(p) - _PAIR_FIELDS - extra)
        pair = FlipPair(tuple(p["sentences"]), p["pronoun"], tuple(p["candidates"]), tuple(p["referents"]))
    except (KeyError, TypeError) as exc:
        raise StudyError(f"{path}: {name}: missing or malformed {exc}") from exc
    if unknown:
        raise StudyError(f"{path}: {name}: unknown field {unknown[0]!r} (known: {sorted(_PAIR_FIELDS | extra)})")
    for text in pair.sentences:
        ws = words(text)
        for w in (pair.pronoun, *pair.candidates):
            if ws.count(w.lower()) != 1:
                raise StudyError(f"{path}: {name}: {w!r} must occur exactly once in {text!r}")
    if len(pair.sentences) != 2 or set(pair.referents) != set(pair.candidates) or len(pair.candidates) != 2:
        raise StudyError(f"{path}: {name}: two sentences, two candidates, referents one of each")
    lengths = [len(words(s)) for s in pair.sentences]
    if lengths[0] != lengths[1]:
        raise StudyError(f"{path}: {name}: the two sentences must differ in exactly one word, not have "
                         f"{lengths[0]} and {lengths[1]} words")
    changed = pair.changed_words()
    if len(changed) != 1:
        raise StudyError(f"{path}: {name}: the two sentences must differ in exactly one word, not {len(changed)}")
    ws = words(pair.sentences[0])
    if changed[0][0] < max(ws.index(w.lower()) for w in (pair.pronoun, *pair.candidates)):
        raise StudyError(f"{path}: {name}: the changed word {changed[0][1]!r} must come after the pronoun and both candidates")
    return pair


def _flip_pairs(path: Path) -> tuple[tuple[FlipPair, ...], tuple[FlipPair, ...]]:
    """The minimal pairs and the null pairs: a YAML file with a `flip_pairs` list and an
    optional `null_pairs` list (see docs/flip_pairs.yml)."""
    raw = _read_yaml(path, "flip pairs file") or {}
    if not isinstance(raw, dict):
        raise StudyError(f"{path}: expected a mapping with a `flip_pairs` list")
    pairs: list[FlipPair] = []
    for i, p in enumerate(raw.get("flip_pairs") or [], 1):
        name = f"flip pair {i}"
        pair = _pair(path, name, p, {"order", "mirrors"})
        order, mirrors = p.get("order", "original"), p.get("mirrors")
        if order not in ORDERS:
            raise StudyError(f"{path}: {name}: order {order!r} is not one of {ORDERS}")
        if (order == "mirrored") != (mirrors is not None):
            raise StudyError(f"{path}: {name}: a mirrored pair names the pair it mirrors (`mirrors`), an original does not")
        if mirrors is not None:
            _check_mirror(path, name, pair, pairs, mirrors)
        pairs.append(FlipPair(pair.sentences, pair.pronoun, pair.candidates, pair.referents, order, mirrors))
    nulls = []
    for i, p in enumerate(raw.get("null_pairs") or [], 1):
        name = f"null pair {i}"
        pair = _pair(path, name, p, {"from"})
        k = p.get("from")
        if not isinstance(k, int) or not 1 <= k <= len(pairs):
            raise StudyError(f"{path}: {name}: `from` must be the number of a flip pair (1 to {len(pairs)}), not {k!r}")
        source = pairs[k - 1]
        if set(pair.candidates) != set(source.candidates) or pair.referents != source.referents:
            raise StudyError(f"{path}: {name}: candidates and (pseudo-)referents must be those of flip pair {k}, "
                             f"{list(source.candidates)} and {list(source.referents)}")
        nulls.append(FlipPair(pair.sentences, pair.pronoun, pair.candidates, pair.referents, source.order, k))
    return tuple(pairs), tuple(nulls)


def _check_mirror(path: Path, name: str, pair: FlipPair, earlier: list[FlipPair], k) -> None:
    """A mirrored pair: the same pronoun, candidates, referents and changed words as the
    (earlier, original) pair it mirrors, its nouns named in the other order."""
    if not isinstance(k, int) or not 1 <= k <= len(earlier) or earlier[k - 1].order != "original":
        raise StudyError(f"{path}: {name}: `mirrors` must be the number of an original flip pair above it, not {k!r}")
    source = earlier[k - 1]
    if (pair.pronoun, set(pair.candidates), pair.referents) != (source.pronoun, set(source.candidates), source.referents):
        raise StudyError(f"{path}: {name}: pronoun, candidates and referents must be those of flip pair {k}")
    if [c[1:] for c in pair.changed_words()] != [c[1:] for c in source.changed_words()]:
        raise StudyError(f"{path}: {name}: the changed words must be those of flip pair {k}")
    if pair.named_first() == source.named_first():
        raise StudyError(f"{path}: {name}: {pair.named_first()!r} is named first here as in flip pair {k}; "
                         "a mirror names the nouns in the other order")


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
        flip_path = path.parent / raw["flip_pairs"] if "flip_pairs" in raw else None
        pairs, nulls = _flip_pairs(flip_path) if flip_path else ((), ())
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
                      replication=_replication(path, raw["replication"]) if raw.get("replication") else None)
    if cal.primary not in ("layer", "word", "sentence"):
        raise StudyError(f"{path}: calibration primary {cal.primary!r} is not one of layer, word, sentence")
    return cal


def _replication(path: Path, r: dict) -> Replication:
    corpus = path.parent / r["corpus"]
    sentences, registers = read_corpus(corpus)
    models = tuple(str(m) for m in r.get("models") or ())
    return Replication(corpus, tuple(sentences), tuple(registers), int(r["min_words"]), int(r["every"]),
                       int(r.get("offset", 0)), models, int(r.get("downstream_every", 1)), dict(r.get("power") or {}))


def _flip_heads(path: Path, raw) -> FlipHeads:
    heads = FlipHeads(float(raw["alpha"]), str(raw["correction"]), int(raw["permutations"]),
                      float(raw["null_quantile"]), int(raw["seed"]))
    if heads.correction != "bonferroni":
        raise StudyError(f"{path}: flip_heads correction {heads.correction!r}: only 'bonferroni' is implemented")
    if not 0 < heads.alpha < 1 or not 0 < heads.null_quantile < 1 or heads.permutations < 1:
        raise StudyError(f"{path}: flip_heads needs 0 < alpha < 1, 0 < null_quantile < 1 and permutations >= 1")
    return heads


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
