"""Part 9's truths. Per displayed row (a word w, and the head (l, h) a reading opens for it),
the interventions of ground_truth.intervened at w's tokens (the sink's part of the head's
output taken out, the content's, the whole head's, and the sink redistributed over the
content), measured on a linear scale (the size of the change, not a squared distance):

- the layer truth: ||y - y'|| / ||y|| of w's layer-l output, every sentence;
- the word truth: ||z - z'|| / ||z|| of w's final-layer representation (its tokens' mean),
  the change run through every later layer; and the sentence truth: ||e - e'|| of the
  sentence embedding (the L2-normalized mean of the last hidden states); on alpha's head
  (the head the instrument opens), every n-th sentence (`downstream_every`);
- Part 10's mean-ablation truth (docs/study.yml `mean_ablation`): the word's final
  representation moved as the word truth's is, but by the sink's (or the content's) value
  vectors replaced by their reference means (means.py; ground_truth.mean_ablated), on the rows
  whose downstream truths are measured, when the run is given the means.

A truth's sink share is the sink's effect over the sink's and the content's (`share`).

The truths run in float64, layer by layer, every row of a sentence and layer in one batch; the
downstream runs go through the reference's own layers (Encoder.continue_from), never the layers
before the head's: per sentence and layer, one baseline copy and one copy per row and
intervention (the row's tokens changed), all in one batch.

Not here: which rows' truths are wanted (readings.py), what is read off them (scores.py, sets.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from livenumbers import timing

from .. import ground_truth as gt
from ..corpus import Corpus


TRUTHS = ("layer", "word", "sentence")
DOWNSTREAM = ("word", "sentence")   # measured on alpha's head only
MEAN = "mean"                       # Part 10's truth: on alpha's head, where the downstream truths are


def share(effects: np.ndarray) -> float:
    """Effects, the sink's first and the content's second (ground_truth's intervention orders:
    SINK_OUT, CONTENT_OUT and SINK_MEAN, CONTENT_MEAN) -> the sink's share of sink + content."""
    total = effects[0] + effects[1]
    return float(effects[0] / total) if total > 0 else 0.0


@dataclass
class Truths:
    """(sentence, word, layer, head) -> the interventions' effects, per truth ([4] for Part 9's,
    in ground_truth.intervened's order; [2] for the mean-ablation truth, mean_ablated's)."""
    layer: dict[tuple, np.ndarray] = field(default_factory=dict)
    word: dict[tuple, np.ndarray] = field(default_factory=dict)
    sentence: dict[tuple, np.ndarray] = field(default_factory=dict)
    mean: dict[tuple, np.ndarray] = field(default_factory=dict)


@dataclass
class Sentence:
    """One sentence as a truths task carries it: what its layers are rerun from."""
    index: int                         # in its corpus
    ids: list[int]
    words: list[list[int]]             # each word's token positions
    inputs: np.ndarray                 # [L, T, C] each layer's input (the reference's own)
    alpha: np.ndarray                  # [L, nh, T, T]
    hidden: np.ndarray                 # [T, C]: the last hidden state
    wanted: set                        # (word, layer, head): the layer truth of these
    downstream: set                    # ... and the downstream truths of these


@dataclass
class Task:
    """A batch of sentences, fixed by the corpus (SENTENCES_PER_TASK in corpus order)."""
    model: str
    perturbation: object               # perturb.Perturbation: the run's, on whatever runs the task
    sentences: list[Sentence]
    means: list | None = None          # per layer, ground_truth.ValueMeans: the mean-ablation truth too
    zero: bool = True                  # Part 9's downstream truths (without: the mean-ablation truth alone)


SENTENCES_PER_TASK = 16


@timing.stage("calibration truths")
def measure(ckpt, corpus: Corpus, inputs, wanted: list[set[tuple[int, int, int]]],
            downstream: list[set[tuple[int, int, int]]], means: list | None = None, zero: bool = True) -> Truths:
    """The layer truth of every (word, layer, head) `wanted[i]` names for sentence i, and the
    downstream truths of those `downstream[i]` names (Part 9's if `zero`, the mean-ablation
    truth if given the `means`): a map over batches of sentences (on the runner
    model/cluster.py hands out), merged in their order."""
    from .. import cluster, encoder, perturb

    runner = cluster.current()
    asked = [i for i, (w, d) in enumerate(zip(wanted, downstream)) if w or d]
    tasks = (Task(ckpt.name, perturb.from_env(), [
        Sentence(i, corpus.toks[i].ids, _words(corpus.toks[i]), inputs.read(i), corpus.acts[i].alpha,
                 corpus.acts[i].hidden, wanted[i], downstream[i]) for i in asked[at:at + SENTENCES_PER_TASK]],
                  means, zero)
             for at in range(0, len(asked), SENTENCES_PER_TASK))
    fn = truths_of
    if isinstance(runner, cluster.InProcess):   # one model and one set of layers for the threads
        fn = functools.partial(truths_of, model=encoder.Encoder.from_checkpoint(ckpt),
                               weights=[gt.layer_weights(ckpt, l) for l in range(ckpt.config.n_layer)])
    done = runner.map(fn, tasks)
    out = Truths()
    for part in timing.counted(done, -(-len(asked) // SENTENCES_PER_TASK)):
        for name in (*TRUTHS, MEAN):
            getattr(out, name).update(getattr(part, name))
    return out


def truths_of(task: Task, model=None, weights=None) -> Truths:
    """One task's truths (`model`, `weights`: the reference and its layers; on a worker, its
    own, built once)."""
    import torch

    from .. import cluster

    model = model or cluster.encoder(task.model)
    weights = weights or cluster.layer_weights(task.model)
    model.perturbation = task.perturbation
    out = Truths()
    with cluster.one_thread(), torch.no_grad():
        for l, w in enumerate(weights):
            _layer(model, w, l, task, out)
    return out


def _layer(model, w, l: int, task: Task, out: Truths) -> None:
    """Layer l's rows of every sentence: their parts sentence by sentence, the rest of the
    layer for all of them in a few large batches (the layer truth), and the downstream truths
    of the rows `downstream` names, sentence by sentence."""
    import torch

    parts, owners = [], []          # per sentence: head_parts of its rows' tokens; (sentence, row) per token
    for s in task.sentences:
        x, alpha = torch.from_numpy(s.inputs[l]), torch.from_numpy(s.alpha[l])
        far = sorted(k for k in s.downstream if k[1] == l)
        if far:
            with timing.stage("downstream"):
                _downstream(model, w, l, s, far, x, alpha, out, task.means[l] if task.means else None, task.zero)
        rows = sorted(k for k in s.wanted if k[1] == l)
        if not rows:
            continue
        q = [(row, t) for row in rows for t in s.words[row[0]]]
        parts.append(gt.head_parts(x, alpha, w, torch.tensor([t for _, t in q]), torch.tensor([row[2] for row, _ in q])))
        owners += [(s.index, row) for row, _ in q]
    if not parts:
        return
    r, sink, content, share_ = (torch.cat(p) for p in zip(*parts))
    moved = []
    for at in range(0, len(r), BATCH):
        y, changed = gt.intervened(r[at:at + BATCH], sink[at:at + BATCH], content[at:at + BATCH], share_[at:at + BATCH],
                                   w, (gt.SINK_OUT, gt.CONTENT_OUT))           # [B, C], [B, 2, C]
        moved.append(((changed - y[:, None]).norm(dim=-1) / y.norm(dim=-1, keepdim=True)).numpy())
    moved = np.concatenate(moved)                                             # [Q, 2]: per token
    tokens: dict[tuple, list[int]] = {}
    for n, (i, (word, _, h)) in enumerate(owners):
        tokens.setdefault((i, word, l, h), []).append(n)
    for key, ns in tokens.items():                                            # a word's effect: its tokens' mean
        out.layer[key] = moved[ns].mean(axis=0)


# Rows through the rest of a layer at once. Each holds its feed-forward activations for its
# interventions (on MPNet, [2 * rows, 3072] float64, and GELU's temporaries): 4096 rows took
# 830 MB per thread, 1024 rows 270 MB, at the same speed (MPNet's layer 5, one thread).
BATCH = 1024


def _words(tok) -> list[list[int]]:
    """Each word's token positions."""
    return [[t for t, x in enumerate(tok.word_ids) if x == word] for word in range(len(tok.words))]


def _downstream(model, w, l: int, s: Sentence, rows: list[tuple[int, int, int]], x, alpha, out: Truths,
                means=None, zero: bool = True) -> None:
    """The word and sentence truths of `rows` (word, layer l, head) if `zero`, and the
    mean-ablation truth if given the layer's `means`: every intervention at layer l run through
    every later layer, every row and intervention of the sentence in one batch."""
    import torch

    q = [(k, t) for k, (word, _, h) in enumerate(rows) for t in s.words[word]]
    tokens, heads = torch.tensor([t for _, t in q]), torch.tensor([rows[k][2] for k, _ in q])
    r, sink, content, mass = gt.head_parts(x, alpha, w, tokens, heads)
    y = gt.rest_of_layer(r, w)                                                              # [Q, C]
    kinds = []                                                                              # [Q, K, C] each
    if zero:
        kinds.append(gt.intervened(r, sink, content, mass, w)[1])                          # Part 9's four
    if means is not None:
        kinds.append(gt.mean_ablated(r, sink, content, alpha[heads, tokens], heads, means, w))   # Part 10's two
    changed = torch.cat(kinds, dim=1)
    # One baseline copy of the sentence entering layer l + 1, every row's tokens recomputed as
    # the interventions' are; then, per row and intervention, that copy with the row's tokens
    # changed: a row's copy differs from the baseline at its own tokens only.
    T, K = len(s.ids), changed.shape[1]
    after = torch.from_numpy(s.inputs[l + 1] if l + 1 < len(s.inputs) else s.hidden).clone()
    for (_, t), base in zip(q, y):
        after[t] = base
    copies = after[None].repeat(1 + len(rows) * K, 1, 1)                   # [1 + rows * K, T, C]
    for (k, t), alt in zip(q, changed):
        copies[1 + k * K:1 + (k + 1) * K, t] = alt
    ids = torch.tensor(s.ids)[None].repeat(len(copies), 1)
    # Where each copy is read at the end: a row's copies at their own word, the baseline at
    # every row's; with the sentence truth, the baseline and Part 9's copies at every token.
    # The last layer forms no other query (most of its arithmetic, a copy read at one word).
    nine = kinds[0].shape[1] if zero else 0                                # a row's first copies: Part 9's
    read = torch.zeros(len(copies), T, dtype=torch.bool)
    if zero:
        read[0] = True
    for n, (word, _, _) in enumerate(rows):
        readers = torch.tensor([0, *range(1 + n * K, 1 + (n + 1) * K)])   # the baseline and the row's copies
        read[readers[:, None], s.words[word]] = True
        read[1 + n * K:1 + n * K + nine] = True
    last = copies.new_zeros(copies.shape)                                 # [copies, T, C]: zeros where unread
    last[read] = (model.continue_from(copies, l + 1, ids, read) if l + 1 < len(model.encoder.layer)
                  else copies[read])
    if zero:   # the sentence embedding of the copies read at every token
        pooled = last.mean(dim=1)
        pooled = pooled / pooled.norm(dim=-1, keepdim=True)
    for n, (word, _, h) in enumerate(rows):
        mine, at = slice(1 + n * K, 1 + (n + 1) * K), s.words[word]
        z0, z = last[0, at].mean(dim=0), last[mine][:, at].mean(dim=1)   # the word's final representation
        moved, key = ((z - z0).norm(dim=-1) / z0.norm()).numpy(), (s.index, word, l, h)
        if zero:
            out.word[key] = moved[:nine]
            out.sentence[key] = (pooled[mine][:nine] - pooled[0]).norm(dim=-1).numpy()
        if means is not None:
            out.mean[key] = moved[-2:]
