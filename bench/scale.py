"""Past one machine (issue 35): `python -m model measure-large` on the first N WordNet
examples, in one process and on a local cluster of 2 workers, each run a fresh process.

Sentences per second are the large corpus's map alone (the study's head rule, fitted first,
is not counted); peak memory is each process's ru_maxrss: the driver's, and each worker's.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from . import builds

SIZES = (1000, 4000, 16000)
SPEED_AT = 4000      # one process and 2 workers compared at this size


def run(src: Path, tmp: Path, limit: int, workers: int | None) -> dict:
    out = tmp / f"large-{limit}-{workers or 0}.json"
    cmd = [sys.executable, "-m", "model", "measure-large", "--limit", str(limit), "--results", str(out)]
    if workers:
        cmd += ["--workers", str(workers)]
    environ = builds.env(src)
    for name in ("MEASURE_WORKERS", "MEASURE_SCHEDULER"):
        environ.pop(name, None)
    done = subprocess.run(cmd, cwd=src, env=environ, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"bench: {' '.join(cmd[2:])} failed:\n{done.stderr[-3000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


def measure(src: Path, tmp: Path, say) -> dict:
    """{"one": figures at SPEED_AT in one process, "two": {N: figures on 2 workers}}."""
    two = {}
    for n in SIZES:
        say(f"measure-large: {n} sentences on 2 workers...")
        two[n] = run(src, tmp, n, 2)
    say(f"measure-large: {SPEED_AT} sentences in one process...")
    return {"one": run(src, tmp, SPEED_AT, None), "two": two}
