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


def from_reference(ckpt: Checkpoint, batch: list[list[int]]) -> list[Activations]:
    """The PyTorch reference, one padded batch; padding is trimmed off each sentence."""
    from . import encoder  # torch is imported only when a forward pass is needed

    out = encoder.run(ckpt, batch)
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
                alpha=alpha[:, b, :, :T, :T].astype(np.float64),
                value_norm=vnorm[:, b, :, :T].astype(np.float64),
                output_norm=fnorm[:, b, :, :T].astype(np.float64),
                hidden=hidden[b, :T].astype(np.float64),
            )
        )
    return acts


def from_oracle(ckpt: Checkpoint, batch: list[list[int]]) -> list[Activations]:
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
