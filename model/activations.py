"""What the measurements read from a forward pass, per sentence, in float64.

Two sources of the same arrays: the PyTorch reference (batched, padded) and the NumPy
oracle (one sentence at a time), both in float64. Everything downstream takes
`Activations` and never knows which implementation produced them, so the oracle can re-run
every measurement.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from livenumbers import timing

from . import perturb
from .weights import Checkpoint


@dataclass
class Activations:
    alpha: np.ndarray         # [L, nh, T, T] attention probabilities
    value_norm: np.ndarray    # [L, nh, T]    ||v_j||
    output_norm: np.ndarray   # [L, nh, T]    ||f_j|| = ||v_j W_O^h||
    hidden: np.ndarray        # [T, C]        last hidden state


# Sentences go through the reference in batches of similar length, so that padding
# (and the [B, nh, T, T] attention of the longest sentence) stays small.
BATCH_TOKENS = 1024  # all-mpnet-base-v2: 2048 peaked 0.13 GB higher, no faster


@timing.stage("reference")
def from_reference(ckpt: Checkpoint, batch: list[list[int]], inputs=None) -> list[Activations]:
    """The PyTorch reference over sentences sorted by length, in padded batches of about
    BATCH_TOKENS tokens; padding is trimmed off each sentence. `inputs` (a
    ground_truth.LayerInputs) receives each sentence's layer inputs. The batches run on the
    runner of model/cluster.py (`cluster.current()`: here by default); they are the corpus's,
    whatever runs them."""
    from . import cluster

    runner = cluster.current()
    chunks = batches([len(ids) for ids in batch])
    work = [Chunk(ckpt.name, perturb.from_env(), [batch[i] for i in chunk], inputs is not None) for chunk in chunks]
    fn = forward
    if isinstance(runner, cluster.InProcess):
        with timing.stage("import torch"):
            from . import encoder  # torch is imported only when a forward pass is needed
        fn = functools.partial(forward, model=encoder.Encoder.from_checkpoint(ckpt))   # one model for the threads
    done = runner.map(fn, work)
    out: list[Activations | None] = [None] * len(batch)
    for chunk, results in zip(chunks, timing.counted(done, len(chunks))):
        for i, (acts, layer_inputs) in zip(chunk, results):
            if inputs is not None:
                inputs.write(i, layer_inputs)
            out[i] = acts
    return out


def batches(lengths: list[int]) -> list[list[int]]:
    """The corpus's batches: sentence indices sorted by length, cut where a batch would pass
    BATCH_TOKENS (padded); fixed by the lengths alone."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out, start = [], 0
    while start < len(order):
        T = lengths[order[start]]
        stop = start + 1
        while stop < len(order) and (stop - start + 1) * lengths[order[stop]] <= max(BATCH_TOKENS, T):
            stop += 1
        out.append(order[start:stop])
        start = stop
    return out


@dataclass(frozen=True)
class Chunk:
    """One batch of the forward map: what a worker needs to run it."""
    model: str                        # the model's name (a worker loads it once: cluster.checkpoint)
    perturbation: perturb.Perturbation   # the reader's rounding, simulated (off by default)
    ids: list                         # the batch's sentences, as token ids
    keep_inputs: bool                 # return each layer's input too (the ground truths read them)


def forward(chunk: Chunk, model=None) -> list[tuple[Activations, list | None]]:
    """One batch through the reference (`model`; on a worker, its own, built once): each
    sentence's Activations and (if asked) its layer inputs, L x [T, C]."""
    from . import cluster, encoder

    model = model or cluster.encoder(chunk.model)
    model.perturbation = chunk.perturbation
    with cluster.one_thread():
        out = model(*encoder.pad(chunk.ids), keep_inputs=chunk.keep_inputs)
    stack = lambda ts: np.stack([t.numpy() for t in ts])  # L x [B, ...] -> [L, B, ...]
    alpha, value = stack(out.alpha), stack(out.value)
    vnorm = np.linalg.norm(value, axis=-1)  # [L, B, nh, T]
    fnorm = stack(out.f_norms())            # [L, B, nh, T], without forming f
    hidden = out.hidden.numpy()
    results = []
    for b, ids in enumerate(chunk.ids):
        T = len(ids)
        acts = Activations(
            alpha=alpha[:, b, :, :T, :T].copy(),
            value_norm=vnorm[:, b, :, :T].copy(),
            output_norm=fnorm[:, b, :, :T].copy(),
            hidden=hidden[b, :T].copy(),
        )
        results.append((acts, [t[b, :T].numpy().copy() for t in out.inputs] if chunk.keep_inputs else None))
    return results


@timing.stage("oracle")
def from_oracle(ckpt: Checkpoint, batch: list[list[int]], each=None) -> list[Activations]:
    """The independent NumPy float64 forward pass, sentence by sentence. `each(k, o)` is
    called with the k-th sentence's whole oracle output while it is still there (its
    layer inputs and values; the ground truth's oracle reads them)."""
    from . import oracle as np_oracle

    out = []
    for k, o in enumerate(np_oracle.forward(ckpt, batch)):
        if each is not None:
            each(k, o)
        out.append(Activations(
            alpha=np.stack(o.alpha),
            value_norm=np.linalg.norm(np.stack(o.value), axis=-1),
            output_norm=np.stack(o.f_norm),
            hidden=o.hidden,
        ))
    return out
