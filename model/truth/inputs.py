"""The reference's layer inputs, kept on disk from the reference's one pass over the corpus
until the ground truths rerun its layers (Part 8's in run.py, Part 9's in
model/calibration/truths.py).

Not here: what the ground truths compute from them.
"""
from __future__ import annotations

import tempfile

import numpy as np


class LayerInputs:
    """Every sentence's layer inputs, [L, T, C] float64, in a temporary file (deleted on
    close): written during the reference's one pass (activations.from_reference), read
    back one sentence at a time. Kept in memory they would be a second copy of the
    corpus's activations (0.5 GB on all-mpnet-base-v2); recomputed, a second forward
    pass (more than a minute on it)."""

    def __init__(self):
        self.file = tempfile.TemporaryFile()
        self.where: dict[int, tuple[int, tuple[int, ...]]] = {}   # sentence -> (byte offset, shape)

    def write(self, sentence: int, layers: list[np.ndarray]) -> None:
        """layers: L x [T, C], written one after the other (no stacked copy)."""
        self.file.seek(0, 2)
        self.where[sentence] = (self.file.tell(), (len(layers), *layers[0].shape))
        for x in layers:
            self.file.write(np.ascontiguousarray(x, dtype=np.float64).tobytes())

    def read(self, sentence: int, layer: int | None = None) -> np.ndarray:
        """[L, T, C], or one layer's [T, C]."""
        offset, shape = self.where[sentence]
        if layer is not None:
            offset, shape = offset + 8 * layer * int(np.prod(shape[1:])), shape[1:]
        self.file.seek(offset)
        buf = bytearray(8 * int(np.prod(shape)))   # writable: torch.from_numpy warns on a read-only array
        self.file.readinto(buf)
        return np.frombuffer(buf, dtype=np.float64).reshape(shape)

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> "LayerInputs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
