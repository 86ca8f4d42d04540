"""Another machine's rounding, simulated: a deterministic relative perturbation of the
reference's arithmetic, off unless asked for.

CPUs round differently (another kernel path, another BLAS: in float64, ~1e-15 of a layer's
largest value), so a number a reader's machine computes can differ from the one the lock
recorded. A published pick (a row, a head, a count past a threshold) must not be decided by
that. With the environment variable `MODEL_PERTURB=SCALE[:SEED]` set (`python -m model check
--perturb :SEED` sets it, at study.yml's `simulated_machine.nudge`), the reference multiplies the embeddings' output, every layer's attention weights (each
row then normalized again, as a softmax's rows are) and every layer's output by
(1 + SCALE * z), z standard normal, drawn per sentence from a
generator seeded by SEED, the place (the layer, and whether its weights or its output) and
the sentence's token ids: the same nudges whatever batch the sentence is in and whatever
machine runs them, in the reference and in the NumPy oracle alike (both run "on the other
machine", so their agreement is still what the checks publish). study.yml's nudge is 1000x the
largest per-layer difference between two real kernel paths (bench/kernels.py), and far above
two hosts' float64 rounding, so the simulation is the same on every host; its seeds search more
than one such machine. The setting is part of the results' provenance (so of their cache key),
so perturbed results never pass for the real ones.
"""
from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np

from .errors import UserError

ENV = "MODEL_PERTURB"
ATTENTION_STEPS = 1000   # the attention weights' draws: steps 1000 + layer, apart from the outputs' 0..L


@dataclass(frozen=True)
class Perturbation:
    scale: float = 0.0   # relative size of each nudge; 0: off
    seed: int = 0

    @property
    def on(self) -> bool:
        return self.scale > 0

    def factors(self, batch: list[list[int]], step: int, width: int) -> np.ndarray:
        """[N, width] float64: 1 + scale * z for the batch's tokens, sentence after sentence
        (the layout of the layers' [N, C] activations); step 0 is the embeddings, step i
        layer i's output."""
        return np.concatenate(self._per_sentence(batch, step, lambda T: (T, width)))

    def attention_factors(self, batch: list[list[int]], layer: int, n_head: int) -> list[np.ndarray]:
        """Per sentence of the batch, [nh, T, T] float64: 1 + scale * z for its attention
        weights at `layer` (0-based), drawn apart from the layers' outputs."""
        return self._per_sentence(batch, ATTENTION_STEPS + layer, lambda T: (n_head, T, T))

    def _per_sentence(self, batch: list[list[int]], step: int, shape) -> list[np.ndarray]:
        """Each sentence's draw at `step` (`shape`: its length -> the draw's shape), once per
        distinct sentence: Part 9's copies of one sentence share it."""
        drawn: dict[tuple, np.ndarray] = {}
        for ids in map(tuple, batch):
            if ids not in drawn:
                drawn[ids] = self._draw(list(ids), step, shape(len(ids)))
        return [drawn[ids] for ids in map(tuple, batch)]

    def _draw(self, ids: list[int], step: int, shape: tuple) -> np.ndarray:
        crc = zlib.crc32(np.asarray(ids, dtype="<i8").tobytes())
        rng = np.random.default_rng([self.seed, step, crc])
        return 1.0 + self.scale * rng.standard_normal(shape)

    def describe(self) -> dict:
        """For the provenance: what was perturbed, how much, with which seed."""
        return {"what": "embeddings, every layer's attention weights and output", "scale": self.scale, "seed": self.seed}


def from_env() -> Perturbation:
    """The perturbation `MODEL_PERTURB` asks for ("1e-6" or "1e-6:7"), or none."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return Perturbation()
    scale, _, seed = text.partition(":")
    try:
        p = Perturbation(float(scale), int(seed or 0))
    except ValueError as exc:
        raise UserError(f"{ENV}={text!r}: expected SCALE or SCALE:SEED, for example 1e-6 or 1e-6:7") from exc
    if not 0 <= p.scale < 1e-2:
        raise UserError(f"{ENV}={text!r}: the scale must be in [0, 0.01) (a rounding-sized nudge, not a new model)")
    return p


def describe_env() -> str:
    """One line for a person: what `MODEL_PERTURB` asks for."""
    p = from_env()
    return (f"every layer's attention weights and output times (1 + {p.scale:g} z), z standard normal, seed {p.seed}" if p.on
            else "no perturbation")
