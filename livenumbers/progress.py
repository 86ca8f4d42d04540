"""Progress of a long computation, on stderr: the stage it is in, done of total, the time
spent and the time left, so that a cold build (minutes of measuring) never looks hung.

The source times its stages with `livenumbers.timing` (`with timing.stage("reference")`)
and says how far a loop has come by iterating through `timing.counted(items, n)`. While
`watching(...)` is open:

- each stage entered, down to DEPTH stages below the watch, is announced;
- while nothing new is announced, the line is repeated every EVERY seconds;
- the time left is the last completed run's seconds for the stages not yet done (kept in
  the cache, `progress/stages.json`), scaled by this run's pace; without a last run, the
  outermost loop under way gives its stage's time left at its own rate (said so), or
  nothing is guessed.

    measuring the results: measurement / model mpnet / ground truth (5 of 12) · 1:05 spent · about 2:40 left
"""
from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, TextIO

from . import timing
from .files import write_atomic

DEPTH = 3        # stages announced: the watch's own, its children, their children
EVERY = 10.0   # seconds between repeats of an unchanged line: a reader sees it move
STAGES_FILE = Path("progress") / "stages.json"   # in the cache: the last run's seconds per stage


def _clock(seconds: float) -> str:
    minutes, s = divmod(int(round(seconds)), 60)
    return f"{minutes}:{s:02d}"


class Watch:
    """What `watching` reports: timing's listener (entered, left, counted), in any thread."""

    def __init__(self, what: str, base: str, expected: dict[str, float], stream: TextIO):
        self.what, self.base, self.expected, self.stream = what, base, expected, stream
        self.t0 = self.said = time.monotonic()
        self.open: list[tuple[str, float]] = []      # stages open below the watch, with their start
        self.spent: dict[str, float] = {}            # stage -> seconds, this run
        self.counts: dict[str, tuple[int, int]] = {}   # open stage -> (done, total) of its loop
        self._lock = threading.Lock()

    def _relative(self, path: str) -> str | None:
        """`path` below the watch's own stage ("" for a loop counted at the watch's level, no
        stage of its own around it), or None if it is not under the watch."""
        if path == self.base:
            return ""
        if not self.base:
            return path
        return path[len(self.base) + 1:] if path.startswith(self.base + "/") else None

    def entered(self, path: str) -> None:
        rel = self._relative(path)
        if rel is None:
            return
        with self._lock:
            self.open.append((rel, time.monotonic()))
        if rel.count("/") < DEPTH:
            self.say()

    def left(self, path: str, seconds: float) -> None:
        rel = self._relative(path)
        if rel is None:
            return
        with self._lock:
            self.spent[rel] = self.spent.get(rel, 0.0) + seconds
            self.open = [(p, t) for p, t in self.open if p != rel]
            self.counts.pop(rel, None)

    def counted(self, path: str, done: int, total: int) -> None:
        rel = self._relative(path)
        if rel is not None:
            with self._lock:
                self.counts[rel] = (done, total)

    # -- what is said ------------------------------------------------------------------------

    def _units(self) -> list[str]:
        """The last run's stages that time the work without overlap: those down to DEPTH
        with no such stage below them."""
        shallow = [p for p in self.expected if p and p.count("/") < DEPTH]
        return [p for p in shallow if not any(q.startswith(p + "/") for q in shallow)]

    def time_left(self, now: float) -> str:
        open_since = dict(self.open)
        if self.expected:
            units = self._units()
            total = sum(self.expected[u] for u in units)
            done = sum(self.expected[u] if u in self.spent and u not in open_since
                       else min(now - open_since[u], self.expected[u]) if u in open_since else 0.0 for u in units)
            if total > 0:
                pace = (now - self.t0) / done if done > 0.05 * total else 1.0   # this machine against the last run's
                return f"about {_clock(max(total - done, 0.0) * pace)} left"
        open_since.setdefault("", self.t0)   # a loop at the watch's own level began with it
        counted = [(p, d, t) for p, (d, t) in self.counts.items() if d > 0 and p in open_since]
        if counted:   # the outermost loop under way (the most of the work it can see): its own rate
            stage, done, total = min(counted, key=lambda c: (c[0] != "", c[0].count("/")))
            rate = (now - open_since[stage]) / done
            return f"{stage.rsplit('/', 1)[-1] + ' ' if stage else ''}about {_clock((total - done) * rate)} left"
        return ""

    def line(self) -> str:
        """"what (done of total): stage (done of total) / stage ... · time spent · time left"."""
        now = time.monotonic()
        with self._lock:
            here = self.open[-1][0].split("/") if self.open else []
            names = []
            for depth, name in enumerate(here, 1):
                count = self.counts.get("/".join(here[:depth]))
                names.append(name + (f" ({count[0]} of {count[1]})" if count else ""))
            left = self.time_left(now)
        own = self.counts.get("")   # a loop counted with no stage of its own: the watch's
        what = self.what + (f" ({own[0]} of {own[1]})" if own else "")
        head = f"{what}: {' / '.join(names)}" if names else what
        return " · ".join([head, f"{_clock(now - self.t0)} spent"] + ([left] if left else []))

    def say(self) -> None:
        print(self.line(), file=self.stream, flush=True)
        self.said = time.monotonic()


@contextlib.contextmanager
def watching(what: str, cache_dir: Path | None = None, stream: TextIO | None = None,
             every: float = EVERY) -> Iterator[Watch]:
    """Report the stages run inside the block (module docstring); on success, keep their
    seconds in `cache_dir` for the next run's estimate."""
    stages = Path(cache_dir) / STAGES_FILE if cache_dir is not None else None
    expected: dict[str, float] = {}
    if stages is not None and stages.is_file():
        try:
            expected = {str(k): float(v) for k, v in json.loads(stages.read_text(encoding="utf-8")).items()}
        except (ValueError, AttributeError):
            expected = {}   # an unreadable estimate is no estimate: nothing depends on it
    watch = Watch(what, timing.current(), expected, stream or sys.stderr)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(min(every, 1.0)):
            if time.monotonic() - watch.said >= every:
                watch.say()

    timing._listeners.append(watch)
    beating = threading.Thread(target=beat, name="progress", daemon=True)
    beating.start()
    try:
        watch.say()
        yield watch
    finally:
        stop.set()
        beating.join()
        timing._listeners.remove(watch)
    print(f"{what}: done in {_clock(time.monotonic() - watch.t0)}", file=watch.stream, flush=True)
    if stages is not None:
        write_atomic(stages, json.dumps(watch.spent, indent=1, sort_keys=True))
