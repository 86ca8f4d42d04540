"""Work a cold build runs beside the measurement, in one place.

Two jobs earn it (make bench): bundling Vega (vl-convert, ~1.5 s holding the GIL, so in
a child process) and executing the notebook (a kernel of its own). Each runs in a
thread of one pool, started by the hooks when its cache entry is missing, and joined
(`wait`) where its output is needed; its error is raised there. A build that fails
first lets them finish: they write complete cache entries or nothing.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from . import timing

_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="build-background")
_JOBS: dict[str, Future] = {}


def start(name: str, fn: Callable[..., Any], *args: Any) -> None:
    """Run `fn(*args)` beside the build, once per name until it is waited for."""
    if name not in _JOBS:
        _JOBS[name] = _POOL.submit(fn, *args)


def wait(name: str) -> Any:
    """The job's result (None if it was never started); re-raises its error."""
    job = _JOBS.pop(name, None)
    if job is None:
        return None
    with timing.stage(f"waiting for {name.split(':')[0]}"):  # "notebook:<page>" -> "notebook"
        return job.result()


def wait_all() -> None:
    for name in list(_JOBS):
        wait(name)
