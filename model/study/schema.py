"""What a study is: `Study`, and a frozen dataclass for each section of study.yml; the halves
and the samples that follow from the study's sentences.

Not here: reading study.yml (parse.py) and the files it names (files.py, pairs.py).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .pairs import FlipPair


@dataclass(frozen=True)
class StopRule:
    lenses: tuple[str, ...]
    threshold: float
    max_rows_above: int


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
    """Part 9 (study.yml `calibration`, `confirmation`; model/calibration/)."""
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
    mean_ablation: "MeanAblation | None" = None   # Part 10

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
class FreshCorpus:
    """Part 10's fresh corpus (study.yml `fresh_corpus`), registered before its sentences were
    chosen: the rule model/fresh.py applies, the size its pilot sets."""
    path: Path
    sentences: tuple[str, ...]         # () until `python -m model.fresh` has written the corpus
    registers: tuple[str, ...]
    source: Path                       # the Python 3.11 documentation's reStructuredText sources
    parts: dict[str, str]              # folder under `source` -> register
    min_words: int
    max_words: int
    models: tuple[str, ...]            # model keys it is measured on
    target_rows: int                   # rows with the truth above half it is sized for,
    plan: float                        # planned with this margin,
    max_sentences: int                 # at most this long

    def settings(self) -> dict:
        """What the pages cite of it (results.json `fresh_corpus`)."""
        return {"sentences": len(self.sentences), "min_words": self.min_words, "max_words": self.max_words,
                "models": list(self.models), "target_rows": self.target_rows, "plan": self.plan,
                "max_sentences": self.max_sentences, "parts": dict(self.parts)}


@dataclass(frozen=True)
class MeanAblation:
    """Part 10 (study.yml `mean_ablation`; model/mean_ablation/): the truth outside the lens's
    algebra, and intervals no seed decides."""
    means_from: str                    # the half of corpus.tsv the reference means are taken over
    prediction: dict                   # the registered prediction, as the pages cite it
    resamples: int                     # the bootstrap's resamples for the verdicts' bounds
    mc_sigmas: float                   # their Monte Carlo margin, in standard errors
    multiplicity: str                  # the model-level verdict's adjustment over the readings
    fresh: FreshCorpus | None = None

    def settings(self) -> dict:
        """What the pages cite of it (results.json `mean_ablation`)."""
        p = self.prediction
        return {"means_from": self.means_from, "resamples": self.resamples, "mc_sigmas": self.mc_sigmas,
                "multiplicity": self.multiplicity, "prediction_lo": float(p["spearman"][0]),
                "prediction_hi": float(p["spearman"][1])}


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
        confirmation and replication corpora, and Part 10's fresh corpus once written."""
        cal = self.calibration
        return (self.path, self.corpus_path, *((self.flip_pairs_path,) if self.flip_pairs_path else ()),
                *((cal.confirmation_path,) if cal else ()), *((cal.replication.path,) if cal and cal.replication else ()),
                *((fresh.path,) if cal and cal.mean_ablation and (fresh := cal.mean_ablation.fresh) and fresh.path.is_file()
                  else ()))

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
