"""Finding a number to cite: `python -m livenumbers numbers [PATTERN]`.

Lists the keys a page can cite that match PATTERN: every word of it a substring of the
key, or, when nothing contains it, the keys closest to it (a misspelt key finds itself).
Each with its value as the default format prints it, its interval keys, what the lock
holds, and the pages (and lines) that cite it. A displayed row's keys
that the namespace does not list (this site's displayed rows, `l6.row.s8.w3.alpha.sink_share`,
thousands per model) are listed for one sentence when PATTERN names it (`l6.row.s8`).
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from . import formats as nums
from . import gate, lock
from .problems import PageError


@dataclass
class Key:
    key: str
    value: Any
    interval: tuple[str, str] | None       # the _lo and _hi keys, if the key has them
    locked: lock.Locked | None
    state: str                             # lock.state (new, locked, moved within tolerance, drifted), or not cited
    cited: list[str] = field(default_factory=list)   # "page:line"

    def shown(self) -> str:
        return nums.format_value(self.key, self.value, nums.default_format(self.value))


def catalogue(report: gate.Report, keys: list[str] | None = None) -> list[Key]:
    """Every key (or `keys`) with its value, interval, lock entry and citing lines; an
    interval's own `_lo`/`_hi` keys are folded into their number's line."""
    n, locked = report.numbers, report.locked
    where: dict[str, list[str]] = {}
    for page, cites in report.citations.items():
        for c in cites:
            spot = f"{c.page}:{c.line}"
            if spot not in where.setdefault(c.key, []):
                where[c.key].append(spot)
    out = []
    names = list(dict.keys(n)) if keys is None else keys
    chosen = set(names)
    for key in names:
        base = re.sub(r"_(lo|hi)$", "", key)
        if base != key and base in chosen:
            continue
        interval = (f"{key}_lo", f"{key}_hi") if f"{key}_lo" in n and f"{key}_hi" in n else None
        state = lock.state(locked.get(key), n[key]) if key in where or key in locked else "not cited"
        out.append(Key(key, n[key], interval, locked.get(key), state, where.get(key, [])))
    return out


def matching(keys: list[str], pattern: str, limit: int) -> tuple[list[str], bool]:
    """(keys, fuzzy): those containing every word of `pattern` (case-insensitive), fewest
    parts and shortest first, or if none does, the closest ones."""
    words = pattern.lower().split()
    hits = [k for k in keys if all(w in k.lower() for w in words)]
    if hits or not words:
        # The shortest keys first: the statistic itself before its per-layer and per-half variants.
        return (sorted(hits, key=lambda k: (k.count("."), len(k))) if words else hits), False
    return difflib.get_close_matches(pattern.strip(), keys, n=limit or 20, cutoff=0.6), True


def _unlisted_keys(report: gate.Report, pattern: str) -> list[str]:
    """Keys the namespace does not list but finds for a pattern (`keys_for`: this site's
    displayed rows, `l6.row.s8`, thousands per model), or none."""
    return report.numbers.keys_for(pattern) if hasattr(report.numbers, "keys_for") else []


def _report(settings: gate.Settings) -> tuple[gate.Report, str]:
    """The gate's report; if a page does not render, the results alone (the author may be
    looking for the key that fixes it), and a note saying so."""
    try:
        return gate.run(settings), ""
    except PageError as exc:
        results, key = gate.load_results(settings)
        report = gate.Report(results=results, results_key=key, charts={})
        report.numbers, report.locked = settings.source.numbers(results), lock.read(settings.lock).numbers
        return report, (f"(citing pages unknown: {len(exc.problems)} page problem(s); "
                        "`python -m model check` lists them)")


def listing(settings: gate.Settings, pattern: str = "", limit: int = 40) -> str:
    report, note = _report(settings)
    rows = _unlisted_keys(report, pattern)
    if rows:
        keys, fuzzy = [k for k in rows if all(w in k for w in pattern.split())] or rows, False
    else:
        keys, fuzzy = matching(list(dict.keys(report.numbers)), pattern, limit)
    found = catalogue(report, keys)
    total = len(found)
    found = found[:limit] if limit else found
    lines = []
    if not found:
        return f"no key matches {pattern!r}; try fewer words, or `python -m model numbers` for all {len(dict.keys(report.numbers))}"
    width = min(max(len(k.key) for k in found), 48)
    lines.append(f"{'key':<{width}}  {'value':>10}  {'interval (_lo–_hi)':<19}  {'lock':<31}  cited by")
    for k in found:
        interval = ("–".join(nums.format_value(i, report.numbers[i], nums.default_format(report.numbers[i]))
                             for i in k.interval) if k.interval else "")
        held = k.state if k.locked is None else f"{k.state} ±{k.locked.tolerance:g}"
        held = held.replace("moved within tolerance", "moved, within")
        cited = ", ".join(k.cited[:3]) + (f" +{len(k.cited) - 3}" if len(k.cited) > 3 else "")
        lines.append(f"{k.key:<{width}}  {k.shown():>10}  {interval:<19}  {held:<31}  {cited or '-'}")
    head = (f"{total} key(s) close to {pattern!r} (none contains it)" if fuzzy else
            f"{total} key(s) matching {pattern!r}" if pattern else f"{total} keys")
    if limit and total > limit:
        head += f", first {limit} shown (--limit 0 for all)"
    example = found[0]
    fmt = "pct:1" if isinstance(example.value, float) and 0 <= example.value <= 1 else nums.default_format(example.value)
    tail = [f"write one: {{{{ num(\"{example.key}\", \"{fmt}\") }}}}"
            + (f"   with its interval: {{{{ ci(\"{example.key}\", \"{fmt}\") }}}}" if example.interval else ""),
            "formats: pct:N, pp:N, fixed:N, ratio:N, sci:N, int, ord, text, yesno, each optionally ~TOL; below:B; about:N"]
    return "\n".join([head + (f" {note}" if note else ""), *lines, *tail])
