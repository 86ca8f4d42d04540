"""The lock's history from git: an entry for each past change of what the pages printed.

A write-up whose lock was committed before accept recorded reasons gives its readers the
record from its first published version with `python -m livenumbers backfill REASONS`. It
reads every version of the lock on the published line (`git log --first-parent`: a branch's
changes count once, in the commit that merged them), compares each with the one before as
accept does (livenumbers/history.py), and writes an entry for each change readers saw,
dated by its commit, with the reason REASONS gives for that commit. The first version is
where the record starts: nothing was published before it.

A version that records no printed texts (lock version 1) is printed with the formats of the
nearest later version that records the key's, or, for a key no later version records, as
a plain number with the digits its tolerance implies; its entries say so (`reformatted`).
The pages of backfilled entries are unknown (the lock never recorded pages).

REASONS is a YAML file, `"commit": {en: ..., fr: ...}` (short hashes, quoted), each reason
written for readers (at most history.REASON_LIMIT characters). Nothing is written while a
commit that implies an entry has no reason (each is named with what it changed and its
message, to write one from), a reason names no such commit, or one is too long. Rerun it
after new commits: backfilled entries are written again, entries accept wrote are kept,
and a commit whose lock gained an entry accept wrote is already recorded.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from . import citation, formats, history, lock
from .buildinfo import git
from .errors import UserError

class BackfillError(UserError, RuntimeError):
    """Nothing was written: the message says what to fix."""


@dataclass(frozen=True)
class Version:
    commit: str     # full hash
    date: str       # the commit's date (ISO)
    locked: lock.Lock
    recorded: bool  # its numbers record their printed texts (lock version 2)
    # Its values printed by today's engine, in its own formats or, unrecorded, a later
    # version's: beside a version without printed texts, what both print is compared so.
    reprinted: dict[str, lock.Locked] | None = None


def run(settings, reasons_file: Path) -> str:
    """Write the lock's history from git and `reasons_file`; what was written, as text."""
    path = Path(settings.lock)
    top = git(path.parent, "rev-parse", "--show-toplevel")
    if top is None:
        raise BackfillError(f"{path}: backfill reads the lock's git history, and {path.parent} is not in a git checkout")
    rel = path.resolve().relative_to(Path(top).resolve()).as_posix()
    versions = read_versions(Path(top), rel)
    if not versions:
        raise BackfillError(f"{path}: no commit holds it; commit the lock first")
    current = lock.read(path)
    if current.numbers != versions[-1].locked.numbers:
        raise BackfillError(f"{path}: its numbers are not the last commit's; commit the lock as it is, then backfill")
    reasons = read_reasons(reasons_file)
    entries, missing = backfilled(versions, reasons, settings.languages.default, Path(top), rel)
    if missing:
        raise BackfillError(f"nothing written; {reasons_file} needs a reason for readers for each of these "
                            "commits (at most {} characters, in the site's language; others optional):\n".format(
                                history.REASON_LIMIT) + "\n".join(missing))
    kept = tuple(e for e in current.history if not e.commit)   # accept's own entries
    written = tuple(sorted(entries + kept, key=lambda e: e.date))
    lock.write(path, current.numbers, current.provenance, current.registrations, written)
    cff = citation.follow(settings.docs_dir.parent, written[-1].date if written else None)
    return (f"{path}: {len(entries)} entries backfilled from {len(versions)} versions in git "
            f"({len(versions) - 1 - len(entries)} changes printed nothing new), {len(kept)} kept that accept wrote"
            + (f"\n{cff}" if cff else ""))


def read_versions(top: Path, rel: str) -> list[Version]:
    """Every version of the lock on the published line, oldest first."""
    listed = git(top, "log", "--first-parent", "--reverse", "--format=%H %cs", "--", rel) or ""
    versions = []
    for line in listed.splitlines():
        commit, date = line.split()
        text = git(top, "show", f"{commit}:{rel}")
        if text is None:   # the commit deleted it
            continue
        locked = lock.parse(text, f"{rel} at {commit[:7]}")
        versions.append(Version(commit, date, locked, any(e.printed for e in locked.numbers.values())))
    return _printed_everywhere(versions)


def _printed_everywhere(versions: list[Version]) -> list[Version]:
    """Each version with its values printed by today's engine (`reprinted`), in its own
    formats or, where it records none, in the nearest later version's for the key (else as
    a plain number its tolerance implies)."""
    later: dict[str, list[str]] = {}   # key -> the slots of the nearest later version recording it
    printed: dict[tuple, dict[str, str]] = {}   # most keys print the same from version to version
    out = []
    for v in reversed(versions):
        later.update({k: list(e.printed) for k, e in v.locked.numbers.items() if e.printed})
        reprinted = {}
        for k, e in v.locked.numbers.items():
            slots = later.get(k)
            same = (k, repr(e.value), e.tolerance, tuple(slots or ()))
            if same not in printed:
                printed[same] = _printed(k, e, slots)
            reprinted[k] = replace(e, printed=printed[same])
        out.append(replace(v, reprinted=reprinted))
    return out[::-1]


def _printed(key: str, entry: lock.Locked, slots: list[str] | None) -> dict[str, str]:
    slots = slots or [f"{lang} {plain_format(entry.value, entry.tolerance)}" for lang in ("en", "fr")]
    return {s: formats.format_value(key, entry.value, s.split(" ", 1)[1], history.language_of(s)) for s in slots}


def plain_format(value, tolerance: float) -> str:
    """A format printing `value` with the digits a tolerance of half its last unit implies."""
    if isinstance(value, (str, bool)) or isinstance(value, int):
        return formats.default_format(value)
    if tolerance <= 0:
        return "fixed:3"
    return f"fixed:{min(6, max(0, round(-math.log10(2 * tolerance))))}"


def read_reasons(path: Path) -> dict[str, dict[str, str]]:
    """commit (short hash) -> {language: reason}."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BackfillError(f"{path}: cannot read it ({exc})") from exc
    if not isinstance(raw, dict) or not all(isinstance(v, dict) and all(isinstance(t, str) for t in v.values())
                                            for v in raw.values()):
        raise BackfillError(f"{path}: expected \"commit\": {{en: reason, fr: raison}} for each commit")
    return {str(k): {str(lang): t for lang, t in v.items()} for k, v in raw.items()}


def backfilled(versions: list[Version], reasons: dict[str, dict[str, str]], default: str, top: Path,
               rel: str) -> tuple[tuple[history.Entry, ...], list[str]]:
    """(the entries the versions imply, what is missing: one line per commit without a usable
    reason, and per reason that names no such commit)."""
    entries, missing, used = [], [], set()
    for before, after in zip(versions, versions[1:]):
        if _recorded_by_accept(before.locked, after.locked):
            continue
        both = before.recorded and after.recorded   # else both as today's engine prints them
        changed, removed, added = history.differences(*((before.locked.numbers, after.locked.numbers) if both
                                                        else (before.reprinted, after.reprinted)), {})
        if not (changed or removed or added):
            continue
        short = next((k for k in reasons if after.commit.startswith(k) and len(k) >= 7), None)
        what = (f"{len(changed)} number(s) print another text, {len(removed)} no longer cited, "
                f"{added} cited for the first time")
        used.add(short)
        problems = history.reason_problems(reasons.get(short), default)
        if problems:
            missing.append(f"  {after.commit[:7]} ({after.date}): {what}; " + "; ".join(problems)
                           + "\n    " + "\n    ".join(_messages(top, rel, after.commit)))
            continue
        entries.append(history.Entry(after.date, {k: v.strip() for k, v in reasons[short].items()}, changed, removed,
                                     added, after.commit[:7], not both))
    for k in sorted(set(reasons) - used):
        known = any(v.commit.startswith(k) for v in versions)
        missing.append(f"  {k}: a reason for " + ("a commit whose change printed nothing new" if known else
                                                  "no commit of the published line that changed the lock"))
    return tuple(entries), missing


def _recorded_by_accept(before: lock.Lock, after: lock.Lock) -> bool:
    """Did accept record this change itself (the later lock holds an entry of its own more)?"""
    own = lambda locked: sum(1 for e in locked.history if not e.commit)
    return own(after) > own(before)


def _messages(top: Path, rel: str, commit: str) -> list[str]:
    """The commit's subject, and for a merge, those of the merged commits that changed the lock."""
    subject = [git(top, "log", "-1", "--format=%s", commit) or ""]
    parents = (git(top, "log", "-1", "--format=%P", commit) or "").split()
    if len(parents) > 1:
        subject += (git(top, "log", "--format=%h %s", f"{parents[0]}..{parents[1]}", "--", rel) or "").splitlines()
    return [s[:300] for s in subject if s]
