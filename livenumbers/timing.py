"""Wall time of a build's stages, for `make bench`: explicit timers, nothing wrapped by name.

    with timing.stage("charts"):       # or, on a whole function: @timing.stage("charts")
        ...

Each stage adds its wall time and a call to a per-process dict, under its path: the names
of the stages open around it in the same thread, joined by "/" ("gate/measurement/model
l6/reference"), so a reader of the dict can tell nested time from the rest. Stages run in
a thread beside the main one (the Vega bundle, the notebook) are marked so: their time
overlaps the build's. If the environment variable BUILD_TIMINGS names a file, the dict is
written there as JSON when the process exits (only if a stage ran: a notebook kernel the
build starts inherits the variable and times nothing).

The same stages, and the loops counted through `counted`, are what a progress watch reports
while a long computation runs (livenumbers/progress.py).
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")

STAGES: dict[str, dict] = {}   # path -> {"seconds", "calls", "main_thread"}
_open = threading.local()      # this thread's stack of open stage names
_lock = threading.Lock()


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Time the block (or the decorated function) as stage `name`."""
    stack = _open.__dict__.setdefault("stack", [])
    stack.append(name)
    path = "/".join(stack)
    _tell("entered", path)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - t0
        stack.pop()
        with _lock:
            s = STAGES.setdefault(path, {"seconds": 0.0, "calls": 0,
                                         "main_thread": threading.current_thread() is threading.main_thread()})
            s["seconds"] += seconds
            s["calls"] += 1
        _tell("left", path, seconds)


def current() -> str:
    """The path of the stages open in this thread ("" outside any)."""
    return "/".join(_open.__dict__.get("stack", []))


@contextlib.contextmanager
def within(path: str) -> Iterator[None]:
    """Stages this thread opens inside the block nest under `path`: the stages another thread
    had open when it handed this one its work (`current()` there), not timed again here. A
    stage timed so is marked as run beside the main thread: thread-seconds, which several
    threads add up past the wall time."""
    stack = _open.__dict__.setdefault("stack", [])
    saved = stack[:]
    stack[:] = path.split("/") if path else []
    try:
        yield
    finally:
        stack[:] = saved


def counted(items: Iterable[T], total: int) -> Iterator[T]:
    """`items`, one by one, telling a progress watch (livenumbers/progress.py) how many of
    `total` the innermost open stage has done: `for batch in counted(batches, len(batches))`."""
    path = current()
    _tell("counted", path, 0, total)
    for done, item in enumerate(items, 1):
        yield item
        _tell("counted", path, done, total)


# What is told of stages and counts (livenumbers/progress.py's watches), in any thread.
_listeners: list = []


def _tell(event: str, *args) -> None:
    for listener in list(_listeners):
        getattr(listener, event)(*args)


@atexit.register
def _write() -> None:
    path = os.environ.get("BUILD_TIMINGS")
    if path and STAGES:
        with _lock:
            text = json.dumps({"pid": os.getpid(), "stages": STAGES}, indent=1, sort_keys=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
