"""The Node tests of the instrument's JavaScript (tests/js/), run by `make test` too."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ROOT


def test_node_suite():
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed; the browser tests still run the same scripts")
    proc = subprocess.run([node, "--test", str(ROOT / "tests" / "js")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout and "# pass 0" not in proc.stdout
