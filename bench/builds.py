"""One `mkdocs build --strict` in a subprocess: wall time, peak memory, stage timings."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

SAMPLE_S = 0.05   # memory sampling period


@dataclass
class Build:
    wall: float                 # seconds, measured around the subprocess
    tree_peak_mb: float         # peak of the process tree's summed RSS (sampled)
    largest_mb: float           # the largest single process's peak RSS (wait4, exact)
    stages: dict[str, dict] = field(default_factory=dict)   # model/timing.py's dict ({} if not timed)


def env(src: Path, **extra: str) -> dict[str, str]:
    """The environment of every subprocess: `model` from the snapshot `src`, no hub, and
    none of the caller's bench variables."""
    e = {k: v for k, v in os.environ.items() if k not in ("BUILD_TIMINGS", "LIVE_NUMBERS_CACHE")}
    e["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [e.get("PYTHONPATH")])])
    e.update(NO_MKDOCS_2_WARNING="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **extra)
    return e


def run(cmd: list[str], cwd: Path, environ: dict[str, str], log: Path) -> tuple[float, float, float, int]:
    """Run `cmd`, output to `log`: (wall s, process-tree peak MB, largest process MB, pid)."""
    peak = [0]
    done = threading.Event()
    with open(log, "w") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=environ, stdout=out, stderr=subprocess.STDOUT)

        def sample() -> None:
            try:
                root = psutil.Process(proc.pid)
                while not done.is_set():
                    total = 0
                    for p in [root, *root.children(recursive=True)]:
                        try:
                            total += p.memory_info().rss
                        except psutil.Error:   # ended between listing and reading
                            pass
                    peak[0] = max(peak[0], total)
                    done.wait(SAMPLE_S)
            except psutil.Error:              # the build itself ended
                pass

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise Failed(f"`{' '.join(Path(c).name for c in cmd[:3])} ...` in {cwd} failed (exit {proc.returncode})", log)
    return wall, peak[0] / 2**20, usage.ru_maxrss / 1024, proc.pid


class Failed(Exception):
    """A subprocess the bench ran failed; `log` holds its output."""

    def __init__(self, message: str, log: Path):
        super().__init__(message)
        self.log = log


def build(copy: Path, src: Path, cache_dir: Path | None, tag: str) -> Build:
    """`mkdocs build --strict` in `copy`. With a `cache_dir`, a hooked build: its cache
    there, and its stage timings read back (`stages.read`); without, a plain build."""
    from . import stages

    log, timings = copy.parent / f"{copy.name}-{tag}.log", copy.parent / f"{copy.name}-{tag}.timings.json"
    timings.unlink(missing_ok=True)
    extra = {"LIVE_NUMBERS_CACHE": str(cache_dir), "BUILD_TIMINGS": str(timings)} if cache_dir else {}
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    wall, tree, largest, pid = run(cmd, copy, env(src, **extra), log)
    return Build(wall, tree, largest, stages.read(timings, pid) if cache_dir else {})


def measure_model(study: Path, src: Path, log: Path) -> tuple[float, dict, float]:
    """`model.results.compute(study)` in a fresh process: (wall s, interpreter start and
    imports included; its stage timings; its peak RSS in MB)."""
    from . import stages

    timings = log.with_suffix(".timings.json")
    code = "import sys\nfrom model import results\nresults.compute(sys.argv[1])"
    wall, _, largest, pid = run([sys.executable, "-c", code, str(study)], study.parent,
                                env(src, BUILD_TIMINGS=str(timings)), log)
    return wall, stages.read(timings, pid), largest
