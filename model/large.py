"""`make measure-large`: the instrument's displayed rows on every WordNet example (issue 35),
minilm-l6, on a local cluster. Not part of the site's build: a run of a corpus two orders of
magnitude larger than the study's, to show the measurement scales and whether the study's
corpus tells the same story as ~23k sentences no one here wrote.

    python -m model measure-large [--workers 2 | --scheduler ADDR] [--limit N] [--results FILE]

The corpus: every example of WordNet 3.0's glosses with the confirmation rule's minimum of
words (model/confirmation.py), less the study's corpus and its confirmation sentences,
ordered by the SHA-256 of their text (so that its first N sentences are a fair sample of all
of them, whatever N). The head rule is the study's, fitted where the study fits it (the
positional heads of corpus.tsv's fit half), and is not refitted on the large corpus.

Map and reduce: each task is TASK_SENTENCES sentences, fixed by the corpus; a worker
tokenizes them, runs the reference, applies the head rule and returns only a `Tally` (counts
and fixed-bin histograms of the displayed rows' sink shares, per lens). The driver adds the
tallies in the tasks' order: it never holds an attention array, and what it holds does not
grow with the corpus beyond one small record per task (for the intervals).

Intervals: the tasks are groups of sentences drawn in hash order, so a share's 95 % interval
is a batch-means one over tasks (the share of every task, weighted by its rows); medians are
read from the histogram, to BINS's resolution.
"""
from __future__ import annotations

import hashlib
import json
import resource
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from livenumbers.files import write_atomic

from . import activations, cluster, confirmation, perturb
from .corpus import corpus_rows, displayed, on_heads, positional_heads
from .instrument import LENSES
from .tokenize import tokenize

MODEL_KEY = "l6"
TASK_SENTENCES = 64
BINS = 1000          # sink shares binned to 0.001
EFFECT = "effect"    # the sink's share under ||alpha f(x)|| on alpha's head: the calibrated badge (Part 9)


def sentences(study, wordnet: Path = confirmation.WORDNET) -> list[str]:
    """Every WordNet example the confirmation rule would keep, less the study's corpus and
    confirmation sentences, in the order of their text's SHA-256."""
    own = set(study.sentences) | set(study.calibration.confirmation)
    kept = confirmation.examples(wordnet, study.calibration.min_words, own)
    return sorted((text for _, text in kept), key=lambda t: hashlib.sha256(t.encode("utf-8")).digest())


@dataclass(frozen=True)
class Task:
    """TASK_SENTENCES sentences of the large corpus, and what a worker needs to measure them."""
    model: str
    first: int                      # the first sentence's index in the corpus
    texts: tuple[str, ...]
    excluded: dict                  # lens -> [L, nh] positional heads (the study's)
    tie_tolerance: float
    threshold: float
    perturbation: perturb.Perturbation


@dataclass
class Tally:
    """What the reduce needs of a task's displayed rows: per lens (and for the effect share on
    alpha's head), how many rows, how many above the threshold, and their histogram."""
    sentences: int = 0
    tokens: int = 0
    rows: dict = field(default_factory=dict)     # name -> rows
    above: dict = field(default_factory=dict)    # name -> rows above the threshold
    hist: dict = field(default_factory=dict)     # name -> [BINS] counts
    badges_kept: int = 0                         # alpha's badge and the effect share both above

    def add(self, other: "Tally") -> None:
        self.sentences += other.sentences
        self.tokens += other.tokens
        self.badges_kept += other.badges_kept
        for name in other.rows:
            self.rows[name] = self.rows.get(name, 0) + other.rows[name]
            self.above[name] = self.above.get(name, 0) + other.above[name]
            self.hist[name] = self.hist.get(name, 0) + other.hist[name]


def tally(task: Task) -> Tally:
    """One task on a worker (or here): tokenize, forward, the head rule, the counts."""
    ckpt = cluster.checkpoint(task.model)
    toks = [tokenize(t, ckpt.tokenizer_dir, ckpt.config.max_position, where=f"WordNet example {task.first + k + 1}")
            for k, t in enumerate(task.texts)]
    acts: list = [None] * len(toks)
    for chunk in activations.batches([t.n_tokens for t in toks]):
        work = activations.Chunk(task.model, task.perturbation, [toks[i].ids for i in chunk], False)
        for i, (a, _) in zip(chunk, activations.forward(work)):
            acts[i] = a
    corpus = corpus_rows(toks, acts)
    rows = {lens: displayed(corpus, lens, np.asarray(task.excluded[lens]), task.tie_tolerance) for lens in LENSES}
    shares = {lens: rows[lens].sink for lens in LENSES} | {EFFECT: on_heads(corpus, "output_norm", rows["alpha"])}
    out = Tally(sentences=len(toks), tokens=sum(t.n_tokens for t in toks))
    for name, x in shares.items():
        out.rows[name] = len(x)
        out.above[name] = int((x > task.threshold).sum())
        out.hist[name] = np.histogram(np.clip(x, 0.0, 1.0), bins=BINS, range=(0.0, 1.0))[0]
    out.badges_kept = int(((shares["alpha"] > task.threshold) & (shares[EFFECT] > task.threshold)).sum())
    return out


def measure(study, runner, limit: int | None = None, wordnet: Path = confirmation.WORDNET) -> dict:
    """The large corpus's figures, and what the run cost (time, the driver's and each
    worker's peak memory)."""
    from . import weights
    from .corpus import read_corpus

    spec = next(m for m in study.models if m.key == MODEL_KEY)
    texts = sentences(study, wordnet)[:limit]
    started = time.perf_counter()
    with cluster.using(runner):
        ckpt = weights.load(spec.name)
        study_corpus = read_corpus(ckpt, study)     # the study's head rule, fitted where the study fits it
        excluded = {lens: positional_heads(study_corpus, lens, study.positional_threshold, study.halves["fit"])
                    for lens in LENSES}
        study_rows = {lens: displayed(study_corpus, lens, excluded[lens], study.tie_tolerance) for lens in LENSES}
        held_out = study_rows["alpha"].where(study.halves["test"])
        study_shares = {lens: study_rows[lens].sink[study_rows[lens].where(study.halves["test"])] for lens in LENSES}
        study_shares[EFFECT] = on_heads(study_corpus, "output_norm", study_rows["alpha"])[held_out]
        fitted = time.perf_counter()
        tasks = (Task(ckpt.name, k, tuple(texts[k:k + TASK_SENTENCES]), {l: e.tolist() for l, e in excluded.items()},
                      study.tie_tolerance, study.stop_rule.threshold, perturb.from_env())
                 for k in range(0, len(texts), TASK_SENTENCES))
        total, per_task = Tally(), []
        for t in runner.map(tally, tasks):
            total.add(t)
            per_task.append({name: (t.rows[name], t.above[name]) for name in t.rows})
        measured = time.perf_counter()
    threshold = study.stop_rule.threshold
    return {
        "model": ckpt.name,
        "runner": runner.describe(),
        "sentences": total.sentences,
        "tokens": total.tokens,
        "threshold": threshold,
        "positional_heads": {lens: np.argwhere(e).tolist() for lens, e in excluded.items()},
        "large": {name: _figures(total.rows[name], total.above[name], total.hist[name],
                                 [t[name] for t in per_task]) for name in total.rows},
        "alpha_badges_kept": total.badges_kept,
        "study_held_out": {name: {"rows": int(len(x)), "above": int((x > threshold).sum()),
                                  "above_share": float((x > threshold).mean()) if len(x) else None,
                                  "median": float(np.median(x)) if len(x) else None}
                           for name, x in study_shares.items()},
        "seconds": {"study_fit": fitted - started, "large": measured - fitted},
        "sentences_per_second": total.sentences / max(measured - fitted, 1e-9),
        "peak_rss_mb": {"driver": _peak_rss_mb(), "workers": runner_peaks(runner)},
    }


def _figures(rows: int, above: int, hist: np.ndarray, per_task: list[tuple[int, int]]) -> dict:
    """A share above the threshold with its batch-means interval over tasks, and the median."""
    share = above / rows if rows else None
    lo = hi = None
    if rows and len(per_task) > 1:
        n = np.array([r for r, _ in per_task], dtype=float)
        k = np.array([a for _, a in per_task], dtype=float)
        resid = k - share * n                                  # the ratio estimator's residuals
        se = np.sqrt((resid ** 2).sum() / (len(n) * (len(n) - 1))) / n.mean()
        lo, hi = max(0.0, share - 1.96 * se), min(1.0, share + 1.96 * se)
    cum = np.cumsum(hist)
    median = (int(np.searchsorted(cum, rows / 2)) + 0.5) / BINS if rows else None
    return {"rows": int(rows), "above": int(above), "above_share": share, "above_share_lo": lo, "above_share_hi": hi,
            "median": median}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # kB on Linux


def runner_peaks(runner) -> list[float]:
    """Each worker's peak memory (MB); none in this process."""
    if isinstance(runner, cluster.InProcess):
        return []
    return [v for _, v in sorted(runner.client.run(_peak_rss_mb).items())]


def write(path: Path, figures: dict) -> None:
    write_atomic(path, json.dumps(figures, indent=1) + "\n")


def summary(f: dict) -> str:
    """A few lines for the terminal."""
    names = {"alpha": "alpha", "value_norm": "||v||", "output_norm": "||f||", EFFECT: "||f|| on alpha's head"}
    out = [f"{f['model']}, {f['sentences']} WordNet sentences ({f['tokens']} tokens) {f['runner']}: "
           f"{f['sentences_per_second']:.1f} sentences/s; peak memory: driver {f['peak_rss_mb']['driver']:.0f} MB"
           + "".join(f", worker {w:.0f} MB" for w in f["peak_rss_mb"]["workers"]),
           f"{'rows':>8} {'above ' + str(f['threshold']):>28} {'median':>8}   | study held-out: above, median"]
    for name, label in names.items():
        g, s = f["large"][name], f["study_held_out"][name]
        ci = (f" [{g['above_share_lo']:.3f}, {g['above_share_hi']:.3f}]" if g["above_share_lo"] is not None else "")
        out.append(f"{g['rows']:>8} {g['above_share']:>10.3f}{ci:<18} {g['median']:>8.3f}   | "
                   f"{s['above_share']:.3f} ({s['above']}/{s['rows']}), {s['median']:.3f}   {label}")
    a = f["large"]["alpha"]["above"]
    out.append(f"alpha's badges the calibrated reading keeps (effect share above too): {f['alpha_badges_kept']} of {a}"
               + (f" ({f['alpha_badges_kept'] / a:.3f})" if a else ""))
    return "\n".join(out)
