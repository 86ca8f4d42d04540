"""The numbers lock: every number the pages cite, with its value, its tolerance and the
text each of its citations prints.

`docs/numbers.lock.json` is the contract with readers. The gate compares fresh results
with it; only `accept` (`python -m livenumbers accept`, or the write-up's own command)
rewrites it, atomically, so an interrupted accept leaves the old lock whole. It also
records the registered settings blocks as accepted (`registrations`, livenumbers/registration.py),
and every accepted change of what the pages print, with its reason (`history`,
livenumbers/history.py).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import registration
from .errors import UserError
from .files import write_atomic
from .history import Entry as HistoryEntry
from .history import as_json as history_json
from .history import from_json as read_history

LOCK_VERSION = 2   # 2: each number's printed texts


class LockError(UserError, ValueError):
    """A lock file that cannot be trusted; the message names the file and the key."""


@dataclass(frozen=True)
class Locked:
    value: Any
    tolerance: float
    # How near the decision behind the value came to turning where the lock was written
    # (the source's margin(key); relative, 3 significant digits): None where no decision is behind it
    # or turning it would move the value less than its tolerance.
    margin: float | None = None
    # What its citations print: "en pct:1" -> "26.5%" (livenumbers/printed.py). A build that
    # prints another text fails, whatever the tolerance says.
    printed: dict[str, str] = field(default_factory=dict)
    # A page's format -> the coarser one printed instead, where the page's would print a text
    # another machine's rounding could change ("pct:1" -> "pct:0"; chosen by accept).
    shown: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Lock:
    numbers: dict[str, Locked]
    provenance: dict
    registrations: dict[str, registration.Registration] = field(default_factory=dict)   # an older lock: none
    history: tuple[HistoryEntry, ...] = ()   # oldest first; an older lock: none


def _no_duplicates(path: Path):
    def hook(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise LockError(f"{path}: duplicate key {key!r}")
            seen.add(key)
        return dict(pairs)

    return hook


def read(path: Path) -> Lock:
    if not path.is_file():
        return Lock({}, {})
    return parse(path.read_text(encoding="utf-8"), path)


def parse(text: str, path: Path | str) -> Lock:
    """A lock's text (`path` names it in errors: a file, or a commit's version of it)."""
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicates(path))
    except json.JSONDecodeError as exc:
        raise LockError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); restore it from git") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("numbers"), dict):
        raise LockError(f"{path}: expected an object with a 'numbers' object")
    numbers = {}
    for key, entry in raw["numbers"].items():
        if not isinstance(entry, dict) or "value" not in entry:
            raise LockError(f"{path}: number {key!r} has no 'value'")
        if "tolerance" not in entry:
            raise LockError(f"{path}: number {key!r} has no 'tolerance'")
        tol, value = entry["tolerance"], entry["value"]
        # NaN compares false with everything: a NaN tolerance or value could never drift.
        if not isinstance(tol, (int, float)) or isinstance(tol, bool) or not 0 <= tol < math.inf:
            raise LockError(f"{path}: number {key!r} has a bad tolerance {tol!r}")
        if not isinstance(value, (str, bool, int, float)) or (isinstance(value, float) and not math.isfinite(value)):
            raise LockError(f"{path}: number {key!r} has a bad value {value!r}")
        margin = entry.get("margin")
        if margin is not None and (not isinstance(margin, (int, float)) or isinstance(margin, bool) or not 0 <= margin < math.inf):
            raise LockError(f"{path}: number {key!r} has a bad margin {margin!r}")
        printed = entry.get("printed", {})
        if not isinstance(printed, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in printed.items()):
            raise LockError(f"{path}: number {key!r} has bad printed texts {printed!r} (expected \"language format\": text)")
        shown = entry.get("shown", {})
        if not isinstance(shown, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in shown.items()):
            raise LockError(f"{path}: number {key!r} has bad shown formats {shown!r} (expected format: format)")
        numbers[key] = Locked(value, float(tol), None if margin is None else float(margin), dict(printed), dict(shown))
    try:
        registrations = registration.from_lock(raw.get("registrations", {}))
    except ValueError as exc:
        raise LockError(f"{path}: {exc}") from exc
    return Lock(numbers, raw.get("provenance", {}), registrations, read_history(raw.get("history", []), str(path)))


def render(numbers: dict[str, Locked], provenance: dict, registrations: dict | None = None,
           history: tuple[HistoryEntry, ...] = ()) -> str:
    body = {
        "version": LOCK_VERSION,
        "provenance": provenance,
        "numbers": {k: {"value": v.value, "tolerance": v.tolerance} | ({} if v.margin is None else {"margin": v.margin})
                    | ({"printed": dict(sorted(v.printed.items()))} if v.printed else {})
                    | ({"shown": dict(sorted(v.shown.items()))} if v.shown else {})
                    for k, v in sorted(numbers.items())},
    } | ({"registrations": {b: r.as_json() for b, r in registrations.items()}} if registrations else {}) \
      | ({"history": history_json(history)} if history else {})
    return json.dumps(body, indent=1, sort_keys=True) + "\n"


def write(path: Path, numbers: dict[str, Locked], provenance: dict, registrations: dict | None = None,
          history: tuple[HistoryEntry, ...] = ()) -> None:
    """Atomic: a temporary file beside the lock, renamed over it."""
    write_atomic(path, render(numbers, provenance, registrations, history))


def moved(locked: Locked, now: Any) -> bool:
    """Has a number drifted beyond its tolerance (or changed kind, for text)?"""
    if isinstance(locked.value, (str, bool)) or isinstance(now, (str, bool)):
        return locked.value != now
    return not abs(float(now) - float(locked.value)) <= locked.tolerance  # a NaN has moved


def state(entry: Locked | None, now: Any) -> str:
    """What the lock says of a number's value now: "new" (not in the lock), "locked" (the
    value recorded), "moved within tolerance" or "drifted" (beyond it: the build fails)."""
    if entry is None:
        return "new"
    if moved(entry, now):
        return "drifted"
    return "locked" if entry.value == now else "moved within tolerance"


def provenance_changes(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Which provenance fields differ, as 'path: old -> new' lines."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out.extend(provenance_changes(a, b, f"{prefix}{key}."))
        elif a != b:
            out.append(f"{prefix}{key}: {a} -> {b}")
    return out
