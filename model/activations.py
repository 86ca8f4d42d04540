"""What the measurements read from a forward pass, per sentence, in float64.

Two sources of the same arrays: the PyTorch reference (batched, padded) and the NumPy
oracle (one sentence at a time). Everything downstream takes `Activations` and never
knows which implementation produced them, so the oracle can re-run every measurement.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .weights import Checkpoint


@dataclass
class Activations:
    alpha: np.ndarray        # [L, nh, T, T] attention probabilities
    value_norm: np.ndarray   # [L, nh, T]    ||v_j||
    output_norm: np.ndarray  # [L, nh, T]    ||f_j|| = ||v_j W_O^h||
    hidden: np.ndarray       # [T, C]        last hidden state


# Sentences per forward pass. More sentences than this are sorted by length and run in
# batches of this size, so that little padding is computed (a quarter of the work on
# 260 sentences of 16-27 tokens in one batch); fewer run as one batch, in their order.
BATCH = 64


def reference(ckpt: Checkpoint, batch: list[list[int]]) -> list[Activations]:
    """The PyTorch reference in padded batches; padding is trimmed off each sentence."""
    from . import encoder  # torch is imported only when a forward pass is needed

    model = encoder.Encoder.from_checkpoint(ckpt)
    stack = lambda ts: np.stack([t.numpy() for t in ts])  # L x [B, ...] -> [L, B, ...]
    n = len(batch)
    order = sorted(range(n), key=lambda i: len(batch[i])) if n > BATCH else list(range(n))
    acts: list[Activations | None] = [None] * n
    for start in range(0, n, BATCH):
        chunk = order[start:start + BATCH]  # sentence indices
        out = model(*encoder.pad([batch[i] for i in chunk]))
        alpha, value = stack(out.alpha), stack(out.value)
        vnorm = np.linalg.norm(value, axis=-1)  # [L, B, nh, T]
        fnorm = stack(out.f_norms())            # [L, B, nh, T], without forming f
        hidden = out.hidden.numpy()
        for b, i in enumerate(chunk):
            T = len(batch[i])
            acts[i] = Activations(
                alpha=alpha[:, b, :, :T, :T].astype(np.float64),
                value_norm=vnorm[:, b, :, :T].astype(np.float64),
                output_norm=fnorm[:, b, :, :T].astype(np.float64),
                hidden=hidden[b, :T].astype(np.float64),
            )
    return acts


def oracle(ckpt: Checkpoint, batch: list[list[int]]) -> list[Activations]:
    """The independent NumPy float64 forward pass, sentence by sentence."""
    from . import oracle as np_oracle

    return [
        Activations(
            alpha=np.stack(o.alpha),
            value_norm=np.linalg.norm(np.stack(o.value), axis=-1),
            output_norm=np.linalg.norm(np.stack(o.f), axis=-1),
            hidden=o.hidden,
        )
        for o in np_oracle.forward(ckpt, batch)
    ]
