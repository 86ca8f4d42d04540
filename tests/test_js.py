"""The Node tests of the instrument's JavaScript (tests/js/), run by `make test` too; and its French
numbers against the engine's (livenumbers/formats.py)."""
from __future__ import annotations

import json
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


# The instrument's French numbers (docs/javascripts/i18n.js) and the pages' (the engine's
# livenumbers/formats.py) are one typography: a value that both print reads the same. (A
# value exactly halfway between two printed digits is rounded by each language's own rule,
# in English too: JavaScript takes the larger, Python the even; none is listed here.)
PARITY = [(x, f"{kind}:{d}") for kind, values in {
    "sci": [1.234e-5, 1e-5, -1.234e-5, -1e-5, 3.2, 12345.0, 9.96e-5, 9.6e-5, 0.0, 1e-10, 4.1e-6, 0.00321, 2.6e7, -7.26e12],
    "fixed": [-0.52, 0.51, -0.001, 12.3456, -1234567.5, 1234567.5, 0.0],
    "pct": [-0.012, 0.2649, -0.00001, 1.0, 0.5, 12.3456, -3.2],
}.items() for x in values for d in (0, 1, 2)]


def test_french_numbers_match_the_engine():
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    from livenumbers.formats import format_value

    script = """
      const fr = require(process.argv[1]).forLang("fr");
      const cases = JSON.parse(process.argv[2]);
      console.log(JSON.stringify(cases.map(([x, fmt]) => {
        const [kind, d] = fmt.split(":"), n = Number(d);
        return kind === "sci" ? fr.num(x, { exponent: n }) : kind === "pct" ? fr.pct(x, n) : fr.num(x, { digits: n });
      })));"""
    proc = subprocess.run([node, "-e", script, str(ROOT / "docs" / "javascripts" / "i18n.js"), json.dumps(PARITY)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    want = [format_value("k", x, fmt, "fr") for x, fmt in PARITY]
    assert [(case, g, w) for case, g, w in zip(PARITY, got, want) if g != w] == []
