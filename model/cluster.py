"""Where the measurement's map runs: in this process (the default, nothing to set up: on as
many threads as the machine has cores), or on a Dask distributed cluster (issue 35).

    MEASURE_WORKERS=2 make site                 # a local cluster of 2 worker processes
    python -m model measure --workers 2         # the same, for one measurement
    python -m model measure --scheduler tls://host:8786    # a running cluster (Dask's TLS settings)

The map's items are fixed by the corpus (its batches), never by the runner, and `map`
returns their results in the items' order: the reduce that follows reads them in that order.
Every item runs on one thread (`one_thread`: torch's and the BLAS's), wherever it runs, so
its arithmetic is the same operations in the same order on this process's threads and on a
worker: the results are the same, byte for byte, whatever runs the map (a matrix product on
two threads may add in another order than on one). A local cluster listens on 127.0.0.1
only, with no dashboard; each worker is one process of one thread, and loads a model once
(`checkpoint`), checked against its sha256 as in this process. A worker that dies costs a
retry of its items on another (Dask reschedules them); an error raised by an item (a damaged
model file: its path and digest) fails the run with that message.
"""
from __future__ import annotations

import contextlib
import itertools
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator

from livenumbers import timing

from .errors import UserError

WORKERS_ENV, SCHEDULER_ENV, THREADS_ENV = "MEASURE_WORKERS", "MEASURE_SCHEDULER", "MEASURE_THREADS"


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """One item's arithmetic on one thread: torch's (MKL's with it) and NumPy's BLAS. Within
    a map of this process every thread is already at one (`InProcess.map`), so the threads
    never set it back under each other; on a worker or outside a map it is set, then restored."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class InProcess:
    """The map run here, on `threads` threads (the machine's cores by default), each item on
    one of them. torch releases the GIL inside its operations, so two threads keep two cores
    busy; every item at one thread of arithmetic gives the same bytes as one after the other."""
    workers = 0

    def __init__(self, threads: int | None = None):
        self.threads = threads or _threads_from_env() or cores()

    def map(self, fn: Callable, items: Iterable) -> Iterator:
        """fn of every item, in the items' order, each when it is asked for (at most two per
        thread in flight)."""
        with one_thread():   # every thread of this process at one, for the whole map
            if self.threads == 1:
                yield from (fn(item) for item in items)
                return
            parent = timing.current()

            def run(item):
                with timing.within(parent):   # a stage an item times nests where the map was asked for
                    return fn(item)

            with ThreadPoolExecutor(self.threads, thread_name_prefix="measure") as pool:
                window, items = deque(), iter(items)
                window.extend(pool.submit(run, item) for item in itertools.islice(items, 2 * self.threads))
                while window:
                    result = window.popleft().result()
                    window.extend(pool.submit(run, item) for item in itertools.islice(items, 1))
                    yield result

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return f"in this process, on {self.threads} thread{'s' if self.threads > 1 else ''}"


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


def _threads_from_env() -> int | None:
    """MEASURE_THREADS, if set: the threads of a measurement in this process."""
    raw = os.environ.get(THREADS_ENV, "")
    if not raw:
        return None
    try:
        threads = int(raw)
    except ValueError:
        raise UserError(f"{THREADS_ENV}={raw!r}: not a number of threads") from None
    if threads < 1:
        raise UserError(f"{THREADS_ENV}={raw!r}: at least one thread")
    return threads


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


_LAYER_WEIGHTS: dict[str, list] = {}


def layer_weights(name: str) -> list:
    """Model `name`'s layers as the ground truths rerun them, built once per worker."""
    if name not in _LAYER_WEIGHTS:
        from . import ground_truth as gt

        ckpt = checkpoint(name)
        _LAYER_WEIGHTS[name] = [gt.layer_weights(ckpt, l) for l in range(ckpt.config.n_layer)]
    return _LAYER_WEIGHTS[name]
