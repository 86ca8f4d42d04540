"""Where the measurement's map runs: in this process (the default, nothing to set up), or on
a Dask distributed cluster (issue 35).

    MEASURE_WORKERS=2 make site                 # a local cluster of 2 worker processes
    python -m model measure --workers 2         # the same, for one measurement
    python -m model measure --scheduler tls://host:8786    # a running cluster (Dask's TLS settings)

The map's items are fixed by the corpus (its batches), never by the cluster, and `map`
returns their results in the items' order: the reduce that follows reads them in that order,
so the results are the same, byte for byte, whatever runs the map. A local cluster listens
on 127.0.0.1 only, with no dashboard; each worker is one process of one thread, and loads a
model once (`checkpoint`), checked against its sha256 as in this process. A worker that dies
costs a retry of its items on another (Dask reschedules them); an error raised by an item
(a damaged model file: its path and digest) fails the run with that message.
"""
from __future__ import annotations

import contextlib
import itertools
import os
from collections import deque
from typing import Callable, Iterable, Iterator

from .errors import UserError

WORKERS_ENV, SCHEDULER_ENV = "MEASURE_WORKERS", "MEASURE_SCHEDULER"


class InProcess:
    """The map run here, item after item."""
    workers = 0

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        """fn of every item, in the items' order, each when it is asked for."""
        return (fn(item) for item in items)

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return "in this process"


class Cluster:
    """A Dask distributed client: a local cluster of `workers` processes, or a running
    scheduler at `address` (its security, TLS included, from Dask's configuration)."""

    def __init__(self, workers: int | None = None, address: str | None = None):
        from distributed import Client, LocalCluster

        if address:
            self.local = None
            self.client = Client(address)
        else:
            # Loopback only, one thread per worker: the forward passes use torch's threads,
            # and two workers on two cores is the machine. Without bokeh (not installed) there
            # is no dashboard; the scheduler's HTTP routes (health, metrics) still listen, on
            # loopback, on a free port so that two clusters never collide.
            self.local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address="127.0.0.1:0", worker_dashboard_address=None,
                                      silence_logs=40)
            self.client = Client(self.local)
        self.workers = len(self.client.scheduler_info()["workers"])
        self.address = address

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        """fn of every item, handed back in the items' order (an item's error is raised when
        its turn comes). Items are taken from `items` as they are needed, at most two per
        worker in flight, and each result is released from the cluster once read: the driver
        holds a few items and one result at a time, however long the corpus."""
        window = deque()
        items = iter(items)
        for item in itertools.islice(items, 2 * self.workers):
            window.append(self.client.submit(fn, item, pure=False))   # pure=False: each item its own task
        while window:
            future = window.popleft()
            result = future.result()
            future.release()
            for item in itertools.islice(items, 1):
                window.append(self.client.submit(fn, item, pure=False))
            yield result

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()

    def describe(self) -> str:
        return f"on the cluster at {self.address}" if self.address else f"on a local cluster of {self.workers} workers"


_CURRENT: list = []


@contextlib.contextmanager
def using(runner) -> Iterator:
    """Run the measurement's maps on `runner` inside the block (`current()` hands it out):
    the steps that map (activations.from_reference, ...) take it from here, so the layers in
    between need not pass it along."""
    _CURRENT.append(runner)
    try:
        yield runner
    finally:
        _CURRENT.pop()


def current():
    """The runner of the innermost `using` block; this process outside any."""
    return _CURRENT[-1] if _CURRENT else InProcess()


def from_settings(workers: int | None = None, address: str | None = None):
    """The runner the options (or, where they are not given, MEASURE_WORKERS and
    MEASURE_SCHEDULER) ask for; in this process by default."""
    if workers is None and not address:
        address = os.environ.get(SCHEDULER_ENV) or None
        raw = os.environ.get(WORKERS_ENV, "")
        if raw:
            try:
                workers = int(raw)
            except ValueError:
                raise UserError(f"{WORKERS_ENV}={raw!r}: not a number of workers") from None
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: at least one worker (or leave it out to measure in this process)")
    if not workers and not address:
        return InProcess()
    return Cluster(workers, address)


# -- on a worker ------------------------------------------------------------------------------------

_CHECKPOINTS: dict[str, object] = {}
_ENCODERS: dict[str, object] = {}


def checkpoint(name: str):
    """The model `name`, loaded once per worker process and checked against its sha256
    (weights.load): a worker keeps it for every item it is given."""
    if name not in _CHECKPOINTS:
        from . import weights

        _CHECKPOINTS[name] = weights.load(name)
    return _CHECKPOINTS[name]


def encoder(name: str):
    """The PyTorch reference of model `name`, built once per worker process."""
    if name not in _ENCODERS:
        from . import encoder as enc

        _ENCODERS[name] = enc.Encoder.from_checkpoint(checkpoint(name))
    return _ENCODERS[name]


_LAYER_WEIGHTS: dict[tuple, list] = {}


def layer_weights(name: str, dtype=None) -> list:
    """Model `name`'s layers as the ground truths rerun them (float32 by default), built once
    per worker."""
    import numpy as np

    dtype = np.dtype(dtype or np.float32)
    if (name, dtype) not in _LAYER_WEIGHTS:
        from . import ground_truth as gt

        ckpt = checkpoint(name)
        _LAYER_WEIGHTS[name, dtype] = [gt.layer_weights(ckpt, l, dtype) for l in range(ckpt.config.n_layer)]
    return _LAYER_WEIGHTS[name, dtype]
