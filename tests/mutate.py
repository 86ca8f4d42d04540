"""Does the suite still catch the bugs it is meant to catch? (tests/MUTATIONS.md)

Each mutation in MUTATIONS.md's table is a deliberate one-line bug: a file, a line as it
is written (exactly once in that file) and what it becomes, and the tests that must fail
because of it. For each, this script copies the project's tracked files (and this
checkout's uncommitted changes) to a temporary folder, applies the mutation there, runs
the named tests with `-x` and reports "caught" (a test failed) or "MISSED" (all passed).
Before the mutations, one control run of every named test on the unmutated copy must
pass, or nothing it says would mean anything. The working tree is never changed.

    python tests/mutate.py                # every mutation (a few minutes: see MUTATIONS.md)
    python tests/mutate.py M3 M7          # some of them
    python tests/mutate.py --list         # the table, as parsed
    make mutations                        # the same as the first line

The copy's `.cache` and `node_modules` are links to this checkout's, read only: the tests'
`session_cache` copies the valid results out of it (a mutation under model/ changes the
results' key, so the tests named for it are ones that do not read the measured study).
`--ref REV` runs the table against the project as committed at REV (the suite before a
change). Exit status 1 if a mutation is missed or the control run fails.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = Path(__file__).resolve().parent / "MUTATIONS.md"


@dataclass
class Mutation:
    name: str
    file: str
    old: str
    new: str
    tests: list[str]
    what: str


def code(cell: str) -> str:
    """The text of a table cell written as `code` (backticks), pipes escaped as \\|."""
    m = re.fullmatch(r"\s*`(.*)`\s*", cell)
    if not m:
        raise SystemExit(f"{TABLE.name}: expected `code` in the cell {cell!r}")
    return m.group(1).replace("\\|", "|")


def load() -> list[Mutation]:
    """The rows of MUTATIONS.md's table: | name | what | file | line | becomes | tests |."""
    out = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not re.match(r"\|\s*M\d+\s*\|", line):
            continue
        cells = [c for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 6:
            raise SystemExit(f"{TABLE.name}: a row needs 6 cells: {line}")
        name, what, file, old, new, tests = cells
        out.append(Mutation(name.strip(), code(file), code(old), code(new),
                            [code(t) for t in tests.split(",")], what.strip()))
    return out


def copy_tree(dst: Path, ref: str | None = None) -> None:
    """This checkout's files as they are now (tracked and untracked, not ignored), or as
    committed at `ref` (to run this table against an older suite)."""
    if ref is not None:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
    names = [] if ref is not None else subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, names):  # noqa: the list is empty for a ref
        src = ROOT / name
        if name.split("/", 1)[0] in (".venv", "node_modules", ".cache", "site") or not src.is_file():
            continue
        (dst / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / name)
    for name in ("node_modules", ".cache"):   # read only, by the tests (axe-core; the seed of session_cache)
        if (ROOT / name).exists():
            (dst / name).symlink_to((ROOT / name).resolve())


def pytest(tree: Path, tests: list[str], log: Path) -> tuple[int, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1", "NO_MKDOCS_2_WARNING": "1"}
    env.pop("LIVE_NUMBERS_CACHE", None)
    t0 = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:xdist", *tests],
                              cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc.returncode, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="mutations to run (M1 ...); all by default")
    ap.add_argument("--list", action="store_true", help="print the mutations and stop")
    ap.add_argument("--no-control", action="store_true", help="skip the unmutated control run")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its logs)")
    ap.add_argument("--ref", help="run the table against the project as committed at REF (say, before a change)")
    args = ap.parse_args()
    mutations = [m for m in load() if not args.names or m.name in args.names]
    if args.list:
        for m in mutations:
            print(f"{m.name}: {m.what}\n    {m.file}: {m.old!r} -> {m.new!r}\n    tests: {' '.join(m.tests)}")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="mutate-"))
    tree = tmp / "tree"
    tree.mkdir()
    copy_tree(tree, args.ref)
    print(f"copy of the project{' at ' + args.ref if args.ref else ''} in {tree}", flush=True)
    status = 0
    try:
        if not args.no_control:
            tests = list(dict.fromkeys(t for m in mutations for t in m.tests))
            rc, secs = pytest(tree, tests, tmp / "control.log")
            print(f"control (no mutation, {len(tests)} test ids): {'pass' if rc == 0 else 'FAIL'} ({secs:.0f} s)", flush=True)
            if rc != 0:
                print((tmp / "control.log").read_text()[-3000:])
                return 1
        for m in mutations:
            path = tree / m.file
            original = path.read_text(encoding="utf-8")
            if original.count(m.old) != 1:
                print(f"{m.name}: the line is not in {m.file} exactly once ({original.count(m.old)}): {m.old!r}")
                status = 1
                continue
            path.write_text(original.replace(m.old, m.new), encoding="utf-8")
            try:
                rc, secs = pytest(tree, m.tests, tmp / f"{m.name}.log")
            finally:
                path.write_text(original, encoding="utf-8")
            caught = rc == 1            # 1: tests failed; anything else is an error of the run itself
            if rc not in (0, 1):
                verdict = f"ERROR (pytest exit {rc})"
            else:
                verdict = "caught" if caught else "MISSED"
            failed = re.findall(r"^FAILED (\S+)", (tmp / f"{m.name}.log").read_text(), re.M)
            print(f"{m.name} {verdict:<8} {secs:6.0f} s  {m.what}" + (f"  [{failed[0]}]" if failed else ""), flush=True)
            status |= not caught
    finally:
        if args.keep or status:
            print(f"logs in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
