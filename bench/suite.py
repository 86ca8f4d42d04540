"""The test suite's wall time, as a new user gets it: `make test` and `make test-fast` in a
fresh clone of the commit measured (no cache, no site), sharing this checkout's .venv and
node_modules, so the first run's installs are left out (issue 25's target is from a warm
.venv). `make test` measures the study cold (in the suite's session cache), as CI does.
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

from . import builds, project


def clone(commit: str, dst: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(project.ROOT), str(dst)], check=True)
    subprocess.run(["git", "checkout", "--quiet", commit], cwd=dst, check=True)
    for name in (".venv", "node_modules"):
        if (project.ROOT / name).exists():
            (dst / name).symlink_to(project.ROOT / name)
    return dst


def time_make(folder: Path, target: str, log: Path) -> tuple[float, bool]:
    """(wall seconds, passed) of `make TARGET` in `folder`, its output in `log`."""
    environ = builds.env(folder)
    environ.pop("PYTHONPATH", None)   # the Makefile sets the clone's own
    t0 = time.perf_counter()
    try:
        # -o: the shared .venv counts as installed (a fresh clone's requirements files are
        # newer than its stamp, and make would try to create the linked .venv again).
        wall, *_ = builds.run(["make", "-o", ".venv/.installed", target], folder, environ, log)
        return wall, True
    except builds.Failed:
        return time.perf_counter() - t0, False
