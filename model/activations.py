"""What the measurements read from a forward pass, per sentence, in float64.

`alpha` is kept at its source's precision (the reference's float32 attention, the
oracle's float64) and handed out as float64: the conversion is exact, so the numbers are
the same as with a float64 copy kept, at half the memory of the largest array.

Two sources of the same arrays: the PyTorch reference (batched, padded) and the NumPy
oracle (one sentence at a time). Everything downstream takes `Activations` and never
knows which implementation produced them, so the oracle can re-run every measurement.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from livenumbers import timing

from . import perturb
from .weights import Checkpoint


@dataclass(init=False)
class Activations:
    stored_alpha: np.ndarray  # [L, nh, T, T] attention probabilities, at the source's precision
    value_norm: np.ndarray    # [L, nh, T]    ||v_j||
    output_norm: np.ndarray   # [L, nh, T]    ||f_j|| = ||v_j W_O^h||
    hidden: np.ndarray        # [T, C]        last hidden state

    def __init__(self, alpha: np.ndarray, value_norm: np.ndarray, output_norm: np.ndarray, hidden: np.ndarray):
        self.stored_alpha, self.value_norm, self.output_norm, self.hidden = alpha, value_norm, output_norm, hidden

    @property
    def alpha(self) -> np.ndarray:
        """[L, nh, T, T] in float64 (a fresh copy if stored as float32)."""
        return self.stored_alpha.astype(np.float64, copy=False)


# Sentences go through the reference in batches of similar length, so that padding
# (and the [B, nh, T, T] attention of the longest sentence) stays small.
BATCH_TOKENS = 1024  # all-mpnet-base-v2: 2048 peaked 0.13 GB higher, no faster


@timing.stage("reference")
def from_reference(ckpt: Checkpoint, batch: list[list[int]], inputs=None) -> list[Activations]:
    """The PyTorch reference over sentences sorted by length, in padded batches of about
    BATCH_TOKENS tokens; padding is trimmed off each sentence. `inputs` (a
    ground_truth.LayerInputs) receives each sentence's layer inputs."""
    with timing.stage("import torch"):
        from . import encoder  # torch is imported only when a forward pass is needed

    model = encoder.Encoder.from_checkpoint(ckpt)
    model.perturbation = perturb.from_env()
    order = sorted(range(len(batch)), key=lambda i: len(batch[i]))
    out: list[Activations | None] = [None] * len(batch)
    start = 0
    while start < len(order):
        T = len(batch[order[start]])
        stop = start + 1
        while stop < len(order) and (stop - start + 1) * len(batch[order[stop]]) <= max(BATCH_TOKENS, T):
            stop += 1
        chunk = order[start:stop]
        for i, acts in zip(chunk, _run(model, [batch[i] for i in chunk], chunk, inputs)):
            out[i] = acts
        start = stop
    return out


def _run(model, batch: list[list[int]], indices: list[int], inputs=None) -> list[Activations]:
    from . import encoder

    out = model(*encoder.pad(batch), keep_inputs=inputs is not None)
    if inputs is not None:
        for b, (i, ids) in enumerate(zip(indices, batch)):
            inputs.write(i, [t[b, :len(ids)].numpy() for t in out.inputs])   # L x [T, C]
    stack = lambda ts: np.stack([t.numpy() for t in ts])  # L x [B, ...] -> [L, B, ...]
    alpha, value = stack(out.alpha), stack(out.value)
    vnorm = np.linalg.norm(value, axis=-1)  # [L, B, nh, T]
    fnorm = stack(out.f_norms())            # [L, B, nh, T], without forming f
    hidden = out.hidden.numpy()
    acts = []
    for b, ids in enumerate(batch):
        T = len(ids)
        acts.append(
            Activations(
                alpha=alpha[:, b, :, :T, :T].copy(),  # float32; `Activations.alpha` converts
                value_norm=vnorm[:, b, :, :T].astype(np.float64),
                output_norm=fnorm[:, b, :, :T].astype(np.float64),
                hidden=hidden[b, :T].astype(np.float64),
            )
        )
    return acts


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
