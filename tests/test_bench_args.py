"""`make bench`'s arguments: a combination that would measure nothing it names is refused
before any build starts."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_baseline_without_a_second_cold_build_is_refused():
    # The baseline's builds pair with the cold builds after the first (which fills the warm
    # copy's cache): with --cold 1 there would be none, and no baseline row in the table. (A
    # revision that does not exist: without the check, the bench stops at once, not after a build.)
    run = subprocess.run([sys.executable, "-m", "bench", "--cold", "1", "--baseline", "HEAD", "--rev", "no-such-rev",
                          "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "--baseline" in run.stderr and "--cold 2 or more" in run.stderr
